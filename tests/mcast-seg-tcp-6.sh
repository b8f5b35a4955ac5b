#!/bin/sh
# pipelined dynamic broadcasts (nm_mcast_isend_seg) among 6 ranks over tcp; stopped after 60 s
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-60} exec "$top_srcdir/tests/it_run.sh" tcp 6 tests/it_mcast_seg
