#!/bin/sh
# the same over shm without CMA (FI_SHM_DISABLE_CMA=1: shm's segmented copy path, where the provider's queue
# fills and a chunk completes while the next is posted) (it_rdv_many.c)
NMAD_RDV_THRESHOLD=4K NMAD_RDV_CHUNK=1M FI_SHM_DISABLE_CMA=1
export NMAD_RDV_THRESHOLD NMAD_RDV_CHUNK FI_SHM_DISABLE_CMA
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-180}
export NMAD_TEST_TIMEOUT
exec "$top_srcdir/tests/it_run.sh" shm 2 tests/it_rdv_many 4096 16384 16777216
