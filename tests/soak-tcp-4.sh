#!/bin/sh
# Soak, short: 20,000 random messages (0 B..1 MiB; sendrecv, rpc, dynamic broadcasts) among 4 ranks over tcp
# (loopback), with the default strategy (aggreg). The long run is in doc/reliability.md.
exec "$top_srcdir/tests/it_run.sh" tcp 4 tests/it_soak --messages 20000 ${SOAK_ARGS}
