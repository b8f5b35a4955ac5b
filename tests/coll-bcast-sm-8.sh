#!/bin/sh
# Hasanov 2015's eight broadcasts (tests/it_coll_bcast.c), 8 ranks over drivers/sm, oversubscribed, 16 MiB included:
# the roots and forwarders announce one buffer to several peers at once, so the staged sends (drivers/sm/nm_sm.c)
# carry most of the large broadcasts, data checked
exec "$top_srcdir/tests/it_run.sh" sm 8 tests/it_coll_bcast
