#!/bin/sh
# topology-ID multicast (Song 2009): tree kind and standalone, 3 ranks over tcp, NMAD_MCAST_TOPO='hwloc'; stopped after 40 s
NMAD_MCAST_TOPO='hwloc' NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-40} exec "$top_srcdir/tests/it_run.sh" tcp 3 tests/it_mcast_topo
