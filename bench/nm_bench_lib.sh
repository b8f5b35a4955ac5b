# nm_bench_lib.sh - helpers shared by the comparison scripts (sourced, not run).

# Merge the CSVs of repeated runs of one benchmark (size,lat_min_us,lat_median_us,...): per size, the row of the
# lowest median. Every contender of a comparison runs the same number of times and gets the same treatment, so
# one burst of load on this shared machine does not decide a ratio. Missing or empty inputs are skipped.
best_rows() { # out-csv in-csv...
  local out=$1 f ins=()
  shift
  for f in "$@"; do [[ -s "$f" ]] && ins+=("$f"); done
  [[ ${#ins[@]} -gt 0 ]] || return 0
  awk -F, 'FNR == 1 { hdr = $0; next }
           !($1 in best) || $3 + 0 < best[$1] + 0 { best[$1] = $3; row[$1] = $0 }
           END { print hdr; for (s in row) print row[s] | "sort -t, -k1,1n" }' "${ins[@]}" >"$out"
}
