#!/bin/sh
# Two unequal rails over real processes (issue 15, part 3): it_sendrecv with NMAD_DRIVER=shm+tcp and 64 KiB
# rendezvous chunks (split_balance gives each rail a share by its bandwidth; NMAD_SPLIT_LOCAL=1 because both ranks
# are on this host). See rails-tcp-2.sh.
b=${top_builddir:-.}
exec "$b/nmad-run" -n 2 --timeout "${NMAD_TEST_TIMEOUT:-300}" -x NMAD_DRIVER=shm+tcp -x NMAD_RDV_CHUNK=64K -x NMAD_SPLIT_LOCAL=1 \
  "$b/tests/it_sendrecv"
