#!/bin/sh
# No `rep stos` or `rep movs` in nmad's libraries (doc/architecture.md, "No string instructions on the message
# path"): they start slowly (~10 ns each on the hosts measured), and GCC's generic tuning writes every constant-size
# memset or struct copy of ~100-256 bytes with them unless configure's NM_STRINGOP_CFLAGS are in effect (a request's
# init at every isend and irecv was one). Fails if any is found, naming the functions; skipped (77) without objdump.
b=$top_builddir
command -v objdump >/dev/null 2>&1 || { echo "SKIP: no objdump (binutils)"; exit 77; }
fail=0
for lib in "$b/.libs/libnmad.so" "$b/.libs/libnmad_mpi.so"; do
  [ -f "$lib" ] || { echo "FAIL: $lib not built"; fail=1; continue; }
  found=$(objdump -d --no-show-raw-insn "$lib" |
    awk '/^[0-9a-f]+ <.*>:$/ { fn = $2 } /\trep[a-z]* +(stos|movs)/ { print fn }' | sort | uniq -c)
  if [ -n "$found" ]; then
    echo "FAIL: string instructions in $(basename "$lib"), per function:"
    printf '%s\n' "$found"
    fail=1
  else
    echo "ok: $(basename "$lib"): no rep stos / rep movs"
  fi
done
exit $fail
