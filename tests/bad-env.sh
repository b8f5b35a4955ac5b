#!/bin/sh
# Bad configuration gives a clear error naming the variable, and a provider that is absent here fails cleanly.
b=$top_builddir
fail=0
check() { # check VAR=VALUE EXPECTED-TEXT
  out=$("$b/nmad-run" -n 2 --timeout 60 -x "$1" "$b/tests/it_sendrecv" --quick 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] || ! printf '%s' "$out" | grep -q "$2"; then
    echo "FAIL: $1 -> status $rc, output:"; printf '%s\n' "$out"; fail=1
  else
    echo "ok: $1 -> $(printf '%s' "$out" | grep -m1 "$2")"
  fi
}
check NMAD_DRIVER=bogus "NMAD_DRIVER word 'bogus' is not a driver; accepted values"
check NMAD_STRATEGY=fastest "NMAD_STRATEGY='fastest' is not a strategy; accepted values"
check NMAD_RDV_THRESHOLD=12parsecs "NMAD_RDV_THRESHOLD='12parsecs' is invalid"
check NMAD_PROGRESS=async "NMAD_PROGRESS='async' is invalid; accepted values: poll, thread"
check NMAD_BIND=scatter "NMAD_BIND='scatter' is invalid; accepted values: bind, numa, odd-even"
check NMAD_EAGER_FRAG_MAX=lots "NMAD_EAGER_FRAG_MAX='lots' is invalid"
check NMAD_SPREAD=yes "NMAD_SPREAD='yes' is invalid; accepted: 0, 1"
check NMAD_DRIVER=verbs "NMAD_DRIVER=verbs: libfabric provider 'verbs;ofi_rxm' is not usable on this machine"
check NMAD_DRIVER=psm2 "NMAD_DRIVER=psm2: libfabric provider 'psm2' is not usable on this machine"
check NMAD_DRIVER=opx "NMAD_DRIVER=opx: libfabric provider 'opx' is not usable on this machine"
exit $fail
