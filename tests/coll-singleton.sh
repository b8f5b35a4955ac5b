#!/bin/sh
# started alone: singleton bootstrap, a group of one
exec timeout 120 "$top_builddir/tests/it_coll" --quick
