#!/bin/sh
# topology-ID multicast (Song 2009): tree kind and standalone, 2 ranks over shm, NMAD_MCAST_TOPO=''; stopped after 40 s
NMAD_MCAST_TOPO='' NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40} exec "$top_srcdir/tests/it_run.sh" shm 2 tests/it_mcast_topo
