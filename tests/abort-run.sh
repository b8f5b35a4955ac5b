#!/bin/sh
# abort-run.sh LAUNCH DRIVER NPROCS PROG CODE: rank 1 of NPROCS (rank 0 when alone) calls abort with CODE while
# the others block in a receive or a barrier. PROG is tests/mpi/t_abort (MPI_Abort) or tests/it_abort
# (nm_launcher_abort). LAUNCH is nmad-run, pmix (Open MPI's mpirun: skipped, 77, without it or without PMIx in
# this build) or singleton (NPROCS 1, no launcher; DRIVER is ignored).
# Checks: the job's exit status is CODE modulo 256 (what Open MPI's mpirun returns), nmad-run names the rank and
# the code, no rank's wait returned, and no process of the job is left afterwards (by the pids they printed).
# Prints the time from the abort call to the launcher's exit. No timing is asserted: the only bound is a hang
# guard (every process is killed after GUARD seconds), shorter than nmad-run's grace period, so a job that ends
# only because of the grace period fails.
launch=$1 driver=$2 n=$3 prog=$4 code=$5
b=${top_builddir:-.}
GUARD=30 GRACE=60
case $launch in
  nmad-run) set -- "$b/nmad-run" -n "$n" --timeout "$GUARD" --grace "$GRACE" -x NMAD_DRIVER="$driver" ;;
  pmix)
    command -v mpirun.openmpi >/dev/null 2>&1 || { echo "SKIP: mpirun.openmpi not installed"; exit 77; }
    grep -q '^#define HAVE_PMIX 1' "$b/config.h" || { echo "SKIP: built without PMIx"; exit 77; }
    set -- timeout -k 5 "$GUARD" mpirun.openmpi --allow-run-as-root --oversubscribe -np "$n" \
      --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo -x NMAD_DRIVER="$driver" ;;
  singleton) set -- timeout -k 5 "$GUARD" ;;
  *) echo "usage: $0 nmad-run|pmix|singleton DRIVER NPROCS PROG CODE" >&2; exit 2 ;;
esac
out=$(mktemp)
pids=
# On any exit, whatever is left of the job is killed (a test never leaves processes behind).
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -f "$out"' EXIT
"$@" "$b/$prog" "$code" >"$out" 2>&1
rc=$?
end=$(date +%s%N) # the clock of the "abort at" stamp (CLOCK_REALTIME)
cat "$out"
pids=$(sed -n 's/^rank [0-9]* pid \([0-9]*\)$/\1/p' "$out")
fail=0
want=$(( (code % 256 + 256) % 256 ))
[ "$rc" -eq "$want" ] || { echo "FAIL: exit status $rc, expected $want (abort code $code modulo 256)"; fail=1; }
[ "$(echo "$pids" | grep -c .)" -eq "$n" ] || { echo "FAIL: expected $n 'rank R pid P' lines"; fail=1; }
if [ "$launch" = nmad-run ]; then
  grep -q "^nmad-run: rank 1 called abort with code $code," "$out" || { echo "FAIL: nmad-run did not report the abort"; fail=1; }
fi
grep -q '^FAIL' "$out" && { echo "FAIL: a rank went on after the abort"; fail=1; }
# A process of the job still there (not even a zombie waiting for its parent) after the launcher exited?
left=
for p in $pids; do
  if [ -e "/proc/$p" ] && [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
    left="$left $p"
  fi
done
[ -z "$left" ] || { echo "FAIL: processes still running after the launcher exited:$left"; ps -o pid,stat,args -p "${left# }"; fail=1; }
start=$(sed -n 's/^abort at \([0-9]*\)$/\1/p' "$out")
case $end in *N) end= ;; esac # a date(1) without %N: no figure
[ -n "$start" ] && [ -n "$end" ] && awk -v s="$start" -v e="$end" -v n="$n" -v l="$launch" -v d="$driver" \
  'BEGIN { printf "abort to end of the job: %.3f s (%d ranks, %s, %s)\n", (e - s) / 1e9, n, l, d }'
[ $fail -eq 0 ] && echo "PASS abort $launch $driver $n ranks: status $rc"
exit $fail
