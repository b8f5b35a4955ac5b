#!/bin/sh
# topology-ID multicast (Song 2009): tree kind and standalone, 8 ranks over shm, NMAD_MCAST_TOPO='2x2:b=1:nearest'; stopped after 40 s
NMAD_MCAST_TOPO='2x2:b=1:nearest' NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40} exec "$top_srcdir/tests/it_run.sh" shm 8 tests/it_mcast_topo
