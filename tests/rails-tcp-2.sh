#!/bin/sh
# Two rails over real processes (issue 15, part 3): it_sendrecv (random sizes up to 16 MiB, order, truncation
# of a rendezvous, cancel) with NMAD_DRIVER=tcp+tcp and 64 KiB rendezvous chunks, so that large messages are
# split across both rails (NMAD_SPLIT_LOCAL=1: although both ranks are on this host, where nmad would otherwise
# send each message on one rail) and cut into many chunks. nmad-run's --timeout stops every process on a hang.
b=${top_builddir:-.}
exec "$b/nmad-run" -n 2 --timeout "${NMAD_TEST_TIMEOUT:-300}" -x NMAD_DRIVER=tcp+tcp -x NMAD_RDV_CHUNK=64K -x NMAD_SPLIT_LOCAL=1 \
  "$b/tests/it_sendrecv"
