#!/bin/sh
# Soak, short, over libfabric's sockets provider (2 ranks, 2,000 messages). It guards the sockets entry of the
# driver's quirks table: with fi_inject, a message whose send had completed stayed in the provider while its
# sender sat in nm_launcher_barrier, and the receiver waited for it forever (doc/reliability.md, "Soak").
exec "$top_srcdir/tests/stacks-on-hang.sh" 50 it_soak \
  "$top_srcdir/tests/it_run.sh" sockets 2 tests/it_soak --messages 2000 --stall 60 ${SOAK_ARGS}
