#!/bin/sh
# dynamic broadcasts among 8 ranks on 2 cores (oversubscribed), priority strategy so forwarded priorities are used
NMAD_STRATEGY=prio
export NMAD_STRATEGY
exec "$top_srcdir/tests/it_run.sh" shm 8 tests/it_mcast
