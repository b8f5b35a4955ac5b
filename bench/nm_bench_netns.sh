#!/usr/bin/env bash
# nm_bench_netns.sh - nmad's ping-pong between two network namespaces joined by a veth pair, one rank in each:
# the nearest this one machine comes to two hosts (the packets cross a virtual NIC pair instead of loopback, each
# rank sees only its own interface). Runs the drivers given (default: ntcp and libfabric's tcp) alternated, ROUNDS
# times, and prints the median one-way latency of each size per driver, with the range over the rounds.
#
# Usage (root; from the build directory or with NMAD_BUILD_DIR): bench/nm_bench_netns.sh [--rounds N]
#        [--drivers "ntcp tcp"] [--sizes 8,4K,64K,1M,4M,16M] [--iters 2000]
# It creates the namespaces nmbench0 and nmbench1 (10.77.0.1/24 and 10.77.0.2/24 on veth nmbveth0/1) and deletes
# them on exit, also on failure or interrupt; no traffic leaves them. Open MPI is not compared here: its runtime
# reaches its ranks over loopback TCP, which a rank in another namespace does not see.
set -u
ROUNDS=3 DRIVERS="ntcp tcp" SIZES=8,4K,64K,1M,4M,16M ITERS=2000 TIMEOUT=120
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --drivers) DRIVERS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
BUILD=${NMAD_BUILD_DIR:-$(dirname "$SCRIPT_DIR")}
RUN=$BUILD/nmad-run PP=$BUILD/.libs/nm_bench_pingpong
[[ -x $RUN && -x $PP ]] || { echo "nmad-run or .libs/nm_bench_pingpong not found in $BUILD (build first)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "needs root (ip netns)" >&2; exit 1; }
NS0=nmbench0 NS1=nmbench1
WORK=$(mktemp -d)
cleanup() {
  ip netns del "$NS0" 2>/dev/null
  ip netns del "$NS1" 2>/dev/null # deleting a namespace deletes its end of the veth pair, and so the pair
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$WORK"
ip netns add "$NS0" && ip netns add "$NS1" &&
  ip link add nmbveth0 type veth peer name nmbveth1 &&
  ip link set nmbveth0 netns "$NS0" && ip link set nmbveth1 netns "$NS1" &&
  ip -n "$NS0" addr add 10.77.0.1/24 dev nmbveth0 && ip -n "$NS1" addr add 10.77.0.2/24 dev nmbveth1 &&
  ip -n "$NS0" link set nmbveth0 up && ip -n "$NS1" link set nmbveth1 up &&
  ip -n "$NS0" link set lo up && ip -n "$NS1" link set lo up ||
  { echo "could not set up the namespaces" >&2; exit 1; }
# Each rank enters its namespace (nmad-run's bootstrap is a socket pair it inherits, which no namespace hides) and
# names its interface to the drivers.
cat >"$WORK/rank.sh" <<EOF
#!/bin/sh
r=\$NMAD_RUN_RANK
exec ip netns exec nmbench\$r env NMAD_TCP_IFACE=nmbveth\$r NMAD_OFI_IFACE=nmbveth\$r FI_TCP_IFACE=nmbveth\$r "\$@"
EOF
chmod +x "$WORK/rank.sh"
export LD_LIBRARY_PATH=$BUILD/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fail=0
for r in $(seq 1 "$ROUNDS"); do
  for d in $DRIVERS; do
    if ! NMAD_DRIVER=$d timeout -k 5 "$TIMEOUT" "$RUN" -n 2 --timeout "$TIMEOUT" "$WORK/rank.sh" "$PP" --csv \
        --sizes "$SIZES" --iters "$ITERS" >"$WORK/$d.$r.csv" 2>"$WORK/$d.$r.log"; then
      echo "round $r, $d: failed (see below)" >&2
      cat "$WORK/$d.$r.log" >&2
      fail=1
    fi
  done
done
echo "# nmad ping-pong between two network namespaces over veth, $ROUNDS alternated rounds of $ITERS iterations"
echo "# median one-way latency (us) over the rounds of each round's median, [min-max over the rounds]; $(date -u +%Y-%m-%dT%H:%MZ)"
for d in $DRIVERS; do cat "$WORK/$d".*.csv 2>/dev/null | awk -F, -v d="$d" '$1 ~ /^[0-9]+$/ { print d, $1, $3 }'; done |
  sort -k2,2n -k1,1 | awk '
    { key = $2 " " $1; v[key] = v[key] " " $3; if (!(key in seen)) { seen[key] = 1; order[n++] = key } }
    END {
      printf "%10s %-6s %10s %22s\n", "size", "driver", "median_us", "range_us"
      for (i = 0; i < n; i++) {
        k = order[i]; m = split(substr(v[k], 2), a, " ")
        for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
        med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        split(k, kk, " ")
        printf "%10s %-6s %10.2f %10.2f-%-10.2f\n", kk[1], kk[2], med, a[1], a[m]
      }
    }'
exit $fail
