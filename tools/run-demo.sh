#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-demo.sh -- build the library and run the main job over the default provider
#
# Usage: tools/run-demo.sh [build-dir]   (default: ./build)
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$src/build}
(cd "$src" && autoreconf -fi >/dev/null 2>&1)
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$src"/configure -q
make -j"$(nproc 2>/dev/null || echo 2)" >make.log 2>&1 || { tail -40 make.log; exit 1; }
echo "=== providers built into librpma"
./tools/rpma-info 127.0.0.1
echo
echo "=== persistent replication over the default provider on 127.0.0.1"
./examples/replicate/rpma-replicate demo --records 4000 --size 64 --file "$build/replica.dat"
