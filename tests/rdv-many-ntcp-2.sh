#!/bin/sh
# 4,096 pre-posted rendezvous receives and a 16 MiB message in 1 MiB chunks over drivers/tcp (DATA frames, it_rdv_many.c)
NMAD_RDV_THRESHOLD=4K NMAD_RDV_CHUNK=1M
export NMAD_RDV_THRESHOLD NMAD_RDV_CHUNK
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-180}
export NMAD_TEST_TIMEOUT
exec "$top_srcdir/tests/it_run.sh" ntcp 2 tests/it_rdv_many 4096 16384 16777216
