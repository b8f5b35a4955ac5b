#!/bin/sh
# The doors of a running job (doc/reliability.md, "Authenticated sources and closed doors"):
#   doors-run.sh DRIVER NPROCS loopback   all ranks on this host: every socket the ranks listen on (ss -ltnup)
#                                         is on 127.0.0.1; skipped (77) without ss
#   doors-run.sh DRIVER NPROCS intruder   a process outside the job (tests/it_doors_intruder.c) sends rank 0 packets
#                                         with another key, with the job's key (read from rank 0's environment,
#                                         as anyone who can read it could) and a forged source, and garbage: the
#                                         job completes and rank 0 counts each refused packet
# The ranks run tests/it_doors, which holds them until this script writes DIR/go.
driver=$1 n=$2 mode=$3
b=${top_builddir:-.}
evil=5
case $mode in
  loopback) command -v ss >/dev/null 2>&1 || { echo "SKIP: ss not installed"; exit 77; }
            args="" ;;
  intruder) args="$((evil + 1)) $evil" ;;
  *) echo "usage: doors-run.sh DRIVER NPROCS loopback|intruder"; exit 2 ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$b/nmad-run" -n "$n" --timeout "${NMAD_TEST_TIMEOUT:-120}" -x NMAD_DRIVER="$driver" "$b/tests/it_doors" "$dir" $args \
  >"$dir/out" 2>&1 &
job=$!
fail() {
  echo "FAIL: $*"
  touch "$dir/go"
  wait "$job"
  cat "$dir/out"
  exit 1
}
i=0
while [ ! -e "$dir/ready" ]; do
  kill -0 "$job" 2>/dev/null || fail "the job ended before it was ready"
  i=$((i + 1))
  [ "$i" -le 600 ] || fail "the job is not ready after 60 s"
  sleep 0.1
done

check_loopback() {
  for f in "$dir"/pid.*; do
    pid=$(cat "$f")
    socks=$(ss -ltnupH | grep "pid=$pid,")
    echo "rank ${f##*.} (pid $pid) listens on:"
    echo "$socks" | awk '{print "  " $1 " " $5}'
    [ -n "$socks" ] || fail "rank ${f##*.} listens on no socket: nothing checked"
    bad=$(echo "$socks" | awk '$5 !~ /^127\.0\.0\.1:/ {print $1 " " $5}')
    [ -z "$bad" ] || fail "rank ${f##*.} listens beyond loopback: $bad"
  done
}

run_intruder() {
  case $driver in
    tcp) prov="tcp;ofi_rxm" ;;
    *) prov=$driver ;;
  esac
  key=$(tr '\0' '\n' <"/proc/$(cat "$dir/pid.0")/environ" | sed -n 's/^NMAD_RUN_KEY=//p')
  [ -n "$key" ] || fail "no NMAD_RUN_KEY in rank 0's environment"
  "$b/tests/it_doors_intruder" "$prov" "$(cat "$dir/addr")" "$key" "$(cat "$dir/session")" 7 "$evil" ||
    fail "the intruder could not send"
}

if [ "$mode" = loopback ]; then check_loopback; else run_intruder; fi
touch "$dir/go"
wait "$job"
rc=$?
cat "$dir/out"
[ "$rc" -eq 0 ] || { echo "FAIL: nmad-run exit status $rc"; exit 1; }
[ "$(grep -c '^PASS rank' "$dir/out")" -eq "$n" ] || { echo "FAIL: not every rank passed"; exit 1; }
if [ "$mode" = intruder ]; then
  grep -q "rank 0: refused $((evil + 1)) foreign packets and $evil from unknown sources" "$dir/out" ||
    { echo "FAIL: rank 0 did not count the refused packets"; exit 1; }
fi
echo "PASS: doors-run.sh $driver $n $mode"
