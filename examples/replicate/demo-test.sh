#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# demo-test.sh -- the replication demo must pass end to end on 127.0.0.1
set -euo pipefail
bin=${top_builddir:-.}/examples/replicate/rpma-replicate
# a port taken by somebody else makes the server fail: try a few
for attempt in 1 2 3; do
	port=$((20000 + ($$ * 13 + attempt * 2003) % 20000))
	if timeout -k 5 120 "$bin" demo --records 500 --size 64 --port "$port"; then
		exit 0
	fi
	echo "attempt $attempt on port $port failed"
done
exit 1
