#!/bin/sh
# nm_launcher_abort(l, 5) alone (singleton bootstrap) exits with 5
exec "$top_srcdir/tests/abort-run.sh" singleton none 1 tests/it_abort 5
