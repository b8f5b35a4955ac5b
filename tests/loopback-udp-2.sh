#!/bin/sh
# 2 ranks over udp on one host: they listen on 127.0.0.1 only
exec "$top_srcdir/tests/doors-run.sh" udp 2 loopback
