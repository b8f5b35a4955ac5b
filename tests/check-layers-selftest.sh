#!/bin/sh
# tests/check-layers.sh can fail: planted layer files that include the core's private header, directly, by its
# path, or through a header of their own, each make it fail; a file that includes only the interface passes.
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
run() { # run EXPECTED(0|1) DIR: check-layers.sh on DIR alone must exit with EXPECTED
  out=$(NM_LAYER_DIRS="$2" top_srcdir="$top" sh "$top/tests/check-layers.sh" 2>&1)
  rc=$?
  if [ "$rc" -ne "$1" ]; then
    echo "FAIL: check-layers.sh on $(basename "$2") exited $rc, expected $1:"; printf '%s\n' "$out"; fail=1
  else
    echo "ok: $(basename "$2") -> $rc: $(printf '%s\n' "$out" | head -1)"
  fi
}
plant() { # plant NAME CONTENT: a one-file layer directory
  mkdir -p "$tmp/$1" && printf '%s\n' "$2" > "$tmp/$1/layer.c"
}
plant clean '#include "nmad/core/nm_core_interface.h"
int f(void) { return 0; }'
run 0 "$tmp/clean"
plant direct '#include "nm_core_private.h"'
run 1 "$tmp/direct"
plant by_path '#  include "nmad/core/nm_core_private.h"'
run 1 "$tmp/by_path"
plant other_core_header '#include "nm_wire.h"'
run 1 "$tmp/other_core_header"
mkdir -p "$tmp/indirect" && printf '#include "nmad/core/nm_core_private.h"\n' > "$tmp/indirect/layer_private.h" &&
  printf '#include "layer_private.h"\n' > "$tmp/indirect/layer.c"
run 1 "$tmp/indirect"
exit $fail
