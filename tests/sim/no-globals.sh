#!/bin/sh
# DESIGN.md rule 1, checked on the binaries: libnmad.so, the simulation driver and the programs nmad-sim runs have
# no writable global or thread-local data of their own (.data, .bss, .tdata, .tbss hold only what the C and C++
# runtimes put there), since every simulated rank shares them.
set -u
status=0
# The runtime's own objects: crtstuff's completed.0, __dso_handle, __TMC_END__, and libstdc++'s guard of the
# driver's nothrow new (none expected).
allowed='^(completed\.0|__dso_handle|__TMC_END__|__bss_start|_edata|_end)$'
check() { # file, symbols of the file's writable sections
  bad=$(objdump -t "$1" | awk '$4 ~ /^\.(data|bss|tdata|tbss)$/ {print $NF}' | grep -Ev "$allowed" | grep -v '^\.' || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $1 has writable global data:"; echo "$bad"; status=1
  else
    echo "ok: $1"
  fi
}
check .libs/libnmad.so
for o in drivers/sim/nmad_sim-nm_sim.o; do check "$o"; done
for so in .libs/nm_bench_pingpong.so .libs/nm_bench_mcast.so tests/sim/.libs/st_sendrecv.so \
          tests/sim/.libs/st_rpc.so tests/sim/.libs/st_bcast.so tests/sim/.libs/st_model.so; do
  check "$so"
done
# issue 17, deliverable 3 and benchmark 7b: the hierarchical broadcast's simulator test and benchmark
for so in tests/sim/.libs/st_bcast_hier.so .libs/nm_bench_bcast_sim.so; do check "$so"; done
# issue 19, deliverable 2 and benchmark 6b: the rootless broadcast's simulator test and benchmark
for so in tests/sim/.libs/st_anycast.so .libs/nm_bench_anycast.so; do check "$so"; done
exit $status
