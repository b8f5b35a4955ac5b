#!/bin/sh
# Soak, short: 20,000 random messages (0 B..1 MiB; sendrecv, rpc, dynamic broadcasts) among 4 ranks over shm, with
# the prio strategy so that priorities reorder what they may. The long run is in doc/reliability.md.
NMAD_STRATEGY=prio exec "$top_srcdir/tests/it_run.sh" shm 4 tests/it_soak --messages 20000 ${SOAK_ARGS}
