#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dropin.sh -- binary drop-in: a program compiled and linked against Debian's
# librpma 1.2 (header and librpma.so.0) runs unchanged on this library
#
# The replication demo is built against /usr/include/librpma.h and the system
# librpma.so.0, then started with this build's librpma.so.0 first in the
# library path.  The test checks that our library is the one loaded (its
# LIBRPMA_1.1 node is visible to the dynamic linker) and that the demo passes
# end to end over the default provider on 127.0.0.1.
set -euo pipefail
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-.}
ours=$build/.libs/librpma.so.0
sys_lib=$(ls /usr/lib/*/librpma.so.0 /usr/lib/librpma.so.0 2>/dev/null | head -1 || true)
if [ ! -e "$ours" ]; then
	echo "SKIPPED: $ours is not built"
	exit 77
fi
if [ -z "$sys_lib" ] || [ ! -e /usr/include/librpma.h ]; then
	echo "SKIPPED: Debian's librpma0/librpma-dev are not installed"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-cc}
# Debian's header first: this is a program written for upstream librpma 1.2
"$cc" -std=gnu11 -O1 -I/usr/include -o "$work/replicate-upstream" \
	"$src"/examples/replicate/rpma-replicate.c -L"$(dirname "$sys_lib")" -l:librpma.so.0
echo "built against: $sys_lib ($(readelf -d "$work/replicate-upstream" | grep -c 'librpma.so.0') NEEDED entry)"
# (no 'grep -q' in a pipeline: with pipefail, objdump dying of SIGPIPE would fail it)
bound=$(objdump -T "$work/replicate-upstream" | grep -c 'LIBRPMA_1.0' || true)
if [ "$bound" -eq 0 ]; then
	echo "FAIL: the program does not bind to LIBRPMA_1.0 symbols"
	exit 1
fi
echo "symbols bound to LIBRPMA_1.0: $bound"
libdir=$(cd "$(dirname "$ours")" && pwd)
loaded=$(LD_LIBRARY_PATH=$libdir LD_TRACE_LOADED_OBJECTS=1 "$work/replicate-upstream" | grep librpma)
echo "loaded: $loaded"
case $loaded in
*"$libdir"*) ;;
*) echo "FAIL: our library was not the one loaded"; exit 1 ;;
esac
# a port taken by somebody else makes the server fail: try a few
for attempt in 1 2 3; do
	port=$((21000 + ($$ * 7 + attempt * 1009) % 20000))
	if LD_LIBRARY_PATH=$libdir timeout -k 5 120 "$work/replicate-upstream" demo --records 300 \
		--size 64 --port "$port" --file "$work/replica.dat"; then
		exit 0
	fi
	echo "attempt $attempt on port $port failed"
done
exit 1
