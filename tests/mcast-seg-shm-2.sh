#!/bin/sh
# pipelined dynamic broadcasts (nm_mcast_isend_seg) among 2 ranks over shm; stopped after 60 s
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-60} exec "$top_srcdir/tests/it_run.sh" shm 2 tests/it_mcast_seg
