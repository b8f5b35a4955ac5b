#!/bin/sh
# Soak over sm with 2 ranks (one per core here, so large copies are shared by receiver and sender: drivers/sm,
# "cooperative copy"): 5,000 random messages of 0 B..4 MiB, every byte checked; a new seed each run (printed:
# --seed S replays it). A wait without progress for 100 s fails the run; after 90 s the ranks' stacks are printed.
NMAD_STRATEGY=prio exec "$top_srcdir/tests/stacks-on-hang.sh" 90 it_soak \
  "$top_srcdir/tests/it_run.sh" sm 2 tests/it_soak --messages 5000 --max 4194304 --stall 100 ${SOAK_ARGS}
