#!/bin/sh
# topology-ID multicast (Song 2009): tree kind and standalone, 4 ranks over shm, NMAD_MCAST_TOPO='2'; stopped after 40 s
NMAD_MCAST_TOPO='2' NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40} exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_mcast_topo
