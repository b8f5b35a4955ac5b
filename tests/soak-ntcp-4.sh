#!/bin/sh
# Soak, short: 20,000 random messages (0 B..1 MiB; sendrecv, rpc, dynamic broadcasts) among 4 ranks over ntcp
# (drivers/tcp, loopback), with the prio strategy: the random priorities send urgent packets past the bulk queued
# for the socket (send_urgent), and the order per (source, tag) must still hold. A new seed each run (printed:
# --seed S replays it). A wait without progress for 100 s fails the run; if it still runs after 90 s, the stacks
# of the ranks are printed first (tests/stacks-on-hang.sh).
NMAD_STRATEGY=prio exec "$top_srcdir/tests/stacks-on-hang.sh" 90 it_soak \
  "$top_srcdir/tests/it_run.sh" ntcp 4 tests/it_soak --messages 20000 --stall 100 ${SOAK_ARGS}
