#!/bin/sh
# eager messages around the packet size over drivers/sm (its inject size is its packet size: nothing is cut)
exec "$top_srcdir/tests/it_run.sh" sm 2 tests/it_frag
