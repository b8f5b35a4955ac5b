#!/bin/sh
# libfabric on demand (drivers/ofi/nm_ofi_lib.h, doc/architecture.md "libfabric on demand"): a job over nmad's own
# drivers (sm, ntcp, the default on one host) never maps libfabric, whose load costs every process ~0.2 s here; a
# job over a libfabric provider (shm, tcp) maps it and communicates. Every run has a timeout.
b=$top_builddir
fail=0
check() { # NMAD_DRIVER (empty: unset), expected state of every rank
  drv=$1 want=$2
  if [ -n "$drv" ]; then set -- -x "NMAD_DRIVER=$drv"; else set --; fi
  out=$(env -u NMAD_DRIVER "$b/nmad-run" -n 2 --timeout 60 "$@" "$b/tests/it_libfabric_lazy")
  rc=$?
  n=$(printf '%s\n' "$out" | grep -c "^rank [01] libfabric $want\$")
  if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ]; then
    echo "ok: NMAD_DRIVER=${drv:-(unset)}: libfabric $want in both ranks"
  else
    echo "FAIL: NMAD_DRIVER=${drv:-(unset)}: status $rc, expected 'libfabric $want' from both ranks, got:"
    printf '%s\n' "$out"
    fail=1
  fi
}
check sm absent
check ntcp absent
check "" absent
check shm mapped
check tcp mapped
exit $fail
