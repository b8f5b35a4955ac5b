#!/bin/sh
# Untrusted anycast headers (DESIGN.md rule 5; doc/protocol.md, "Anycast header"): rank 1 sends rank 0 a header with
# a wrong length, a sender that is not one of rank 0's inbound channels, rank 0 as origin, or an unknown version;
# rank 0 fails the gate (-NM_EPROTO) and delivers nothing (tests/it_anycast.c --forge); 30 s limit per run
NMAD_TEST_TIMEOUT=${NMAD_TEST_TIMEOUT:-30}
export NMAD_TEST_TIMEOUT
for k in 0 1 2 3; do
  "$top_srcdir/tests/it_run.sh" shm 2 tests/it_anycast --forge $k || exit 1
done
