#!/bin/sh
# Generate ./configure from configure.ac (needs autoconf, automake, libtool, pkg-config).
set -e
cd "$(dirname "$0")"
autoreconf -fi
