#!/bin/sh
# The layers above the core keep to the core interface (issue 15, part 6; DESIGN.md, "The flow of a message"):
# a file of sendrecv, rpc, the launcher, the MPI shim or the collectives includes no core header but
# nmad/core/nm_core_interface.h, and nothing it includes pulls in nmad/core/nm_core_private.h (the core's
# structures). Fails (status 1) naming each offending file and line; tests/check-layers-selftest.sh shows it does.
#
# Environment: top_srcdir (set by make check; default: this script's parent directory); NM_LAYER_DIRS, the
# directories to check (default below; relative to top_srcdir, or absolute); CC, CXX (preprocessors, default cc, c++).
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
dirs=${NM_LAYER_DIRS:-"nmad/sendrecv nmad/rpc nmad/launcher nmad/mpi collectives nmad/newmad"}
core="$top/nmad/core"
allowed=nm_core_interface.h
incs="-I$top/nmad/include -I$core -I$top -I$top/nmad/mpi -I${top_builddir:-$top}"
fail=0
n=0

for d in $dirs; do
  case $d in /*) ;; *) d="$top/$d" ;; esac
  [ -d "$d" ] || { echo "FAIL: no directory $d"; fail=1; continue; }
  for f in $(find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) | sort); do
    n=$((n + 1))
    # 1. Direct includes: any header of the core's folder other than the interface, by whatever path.
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f" | while IFS= read -r line; do
      name=$(printf '%s\n' "$line" | sed 's/.*include[[:space:]]*["<]\([^">]*\)[">].*/\1/')
      base=${name##*/}
      if [ "$base" != "$allowed" ] && [ -f "$core/$base" ] && { [ "$name" = "$base" ] || [ "${name%/*}" = "nmad/core" ] || [ -f "$top/$name" ]; }; then
        echo "FAIL: $f:${line%%:*}: includes core header $name (layers include only nmad/core/$allowed)"
      fi
    done | grep . && fail=1
    # 2. Through other headers: the preprocessor's dependency list must not name the core's private header.
    #    -MG: a header not installed here (pmix.h, simgrid) is listed instead of stopping the check.
    case $f in *.c) cpp="${CC:-cc} -x c" ;; *.cpp) cpp="${CXX:-c++} -x c++" ;; *) cpp="${CC:-cc} -x c" ;; esac
    deps=$($cpp -MM -MG $incs -D_GNU_SOURCE "$f" 2>/dev/null) || {
      echo "FAIL: $f: the preprocessor could not list its headers"; fail=1; continue; }
    if printf '%s\n' "$deps" | tr ' \\' '\n\n' | grep -q 'nm_core_private\.h$'; then
      echo "FAIL: $f: pulls in nm_core_private.h through the headers it includes"
      fail=1
    fi
  done
done
[ "$n" -gt 0 ] || { echo "FAIL: no file found in $dirs"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: $n files above the core include only nmad/core/$allowed"
exit $fail
