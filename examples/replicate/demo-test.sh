#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# demo-test.sh -- the replication demo must pass end to end on 127.0.0.1
set -euo pipefail
bin=${top_builddir:-.}/examples/replicate/rpma-replicate
port=$((20000 + $$ % 20000))
exec timeout 120 "$bin" demo --records 500 --size 64 --port "$port"
