#!/bin/sh
# Benchmark 6c of issue 19 (doc/performance.md, "Issue 19: split-tree non-blocking collectives"): the model's
# switch points on the paper's 64 cores, then Ibcast / Ireduce with computation for every S on real processes,
# with the progress thread (NMAD_PROGRESS=thread) under each NMAD_BIND policy.
# usage (from the build directory): bench/nm_bench_split.sh [NPROCS...]     (default: 2 4)
# env: SIZE (default 1M), ITERS (10), REPEATS (3), DRIVERS (shm), BINDS (bind numa odd-even)
b=${top_builddir:-.}
"$b/nm_bench_split" --model || exit 1
echo "# host: $(nproc) processors online; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for np in ${*:-2 4}; do
  for drv in ${DRIVERS:-shm}; do
    for bind in ${BINDS:-bind numa odd-even}; do
      for op in ibcast ireduce; do
        "$b/nmad-run" -n "$np" --timeout 600 -x NMAD_DRIVER="$drv" -x NMAD_PROGRESS=thread -x NMAD_BIND="$bind" \
          "$b/nm_bench_split" --op "$op" --size "${SIZE:-1M}" --iters "${ITERS:-10}" --repeats "${REPEATS:-3}" || exit 1
        echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
      done
    done
  done
done
