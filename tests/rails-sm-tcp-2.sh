#!/bin/sh
# Two rails on one host as a user gets them (issue 15): it_sendrecv with NMAD_DRIVER=sm+tcp and the default
# NMAD_SPLIT_LOCAL=0, so that every message goes whole on sm, and those of at most one rendezvous chunk (64 KiB
# here) by sm's get rendezvous although tcp is there too (nm_rdv.c, nm_rdv_pull_rail()); larger ones in chunks
# asked by RTR. nmad-run's --timeout stops every process on a hang.
b=${top_builddir:-.}
exec "$b/nmad-run" -n 2 --timeout "${NMAD_TEST_TIMEOUT:-300}" -x NMAD_DRIVER=sm+tcp -x NMAD_RDV_CHUNK=64K \
  "$b/tests/it_sendrecv"
