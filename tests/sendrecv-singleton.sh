#!/bin/sh
# started alone: singleton bootstrap, self-sends only
exec timeout 120 "$top_builddir/tests/it_sendrecv" --quick
