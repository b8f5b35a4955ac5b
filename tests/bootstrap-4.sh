#!/bin/sh
# nmad-run bootstrap: allgather and barrier over 4 ranks
exec "$top_builddir/nmad-run" -n 4 --timeout 60 "$top_builddir/tests/it_bootstrap"
