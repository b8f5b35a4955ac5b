#!/bin/sh
# nmad-run --bind-to core (and mpirun's, and NMAD_RUN_BIND): rank r runs on exactly the PUs of core r mod ncores
# (as hwloc-calc computes them), a bound job communicates, and a bad policy is refused (exit 2).
b=$top_builddir
fail=0
command -v hwloc-calc >/dev/null || { echo "SKIP: hwloc-calc (package hwloc) not found"; exit 77; }
ncores=$(hwloc-calc --number-of core machine:0)
n=$((ncores + 1)) # one more rank than cores: the last one wraps around to core 0
# Each rank prints "rank list", list being its affinity as taskset prints it (e.g. "1" or "0-1").
out=$("$b/nmad-run" -n "$n" --timeout 60 --bind-to core sh -c 'echo "$NMAD_RUN_RANK $(taskset -cp $$ | sed "s/.*: //")"')
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: nmad-run --bind-to core: status $rc"; fail=1; }
r=0
while [ "$r" -lt "$n" ]; do
  want=$(hwloc-calc --po --intersect PU "core:$((r % ncores))" | tr ',' '\n' | sort -n | tr '\n' ',' | sed 's/,$//')
  got=$(printf '%s\n' "$out" | awk -v r="$r" '$1 == r {print $2}')
  # taskset prints ranges (0-1): expand them the same way
  got=$(printf '%s\n' "$got" | tr ',' '\n' | awk -F- 'NF==2 {for (i=$1; i<=$2; i++) print i; next} {print}' | sort -n |
        tr '\n' ',' | sed 's/,$//')
  if [ "$got" = "$want" ]; then
    echo "ok: rank $r bound to PUs $got (core $((r % ncores)))"
  else
    echo "FAIL: rank $r bound to PUs '$got', expected '$want'"; fail=1
  fi
  r=$((r + 1))
done
# A bound job communicates (mpirun forwards --bind-to; the environment variable works too).
if ! NMAD_RUN_BIND=core "$b/nmad-run" -n 2 --timeout 60 -x NMAD_DRIVER=shm "$b/tests/it_sendrecv" --quick >/dev/null; then
  echo "FAIL: it_sendrecv with NMAD_RUN_BIND=core"; fail=1
else
  echo "ok: it_sendrecv with NMAD_RUN_BIND=core"
fi
out=$("$b/nmad/mpi/mpirun" -n 2 --bind-to core --timeout 60 sh -c 'taskset -cp $$ | sed "s/.*: //"' | sort -u | wc -l)
if [ "$ncores" -ge 2 ] && [ "$out" -ne 2 ]; then
  echo "FAIL: mpirun --bind-to core: the two ranks share their CPU set"; fail=1
else
  echo "ok: mpirun --bind-to core forwards to nmad-run"
fi
# Bad policies: refused with exit 2 and a message naming them.
for bad in "--bind-to socket" "NMAD_RUN_BIND=l3"; do
  case $bad in
    --*) msg=$("$b/nmad-run" -n 1 $bad true 2>&1) ;;
    *) msg=$(env "$bad" "$b/nmad-run" -n 1 true 2>&1) ;;
  esac
  rc=$?
  if [ "$rc" -eq 2 ] && printf '%s' "$msg" | grep -q "expected none or core"; then
    echo "ok: $bad refused: $msg"
  else
    echo "FAIL: $bad: status $rc, output: $msg"; fail=1
  fi
done
exit $fail
