#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# interop.sh -- the interoperability test on its own: the four client/server
# pairings of our librpma and upstream's (Debian librpma0) over Soft-RoCE.
#
# 'make check' does not run this script: tests/rxe/guest-suite.sh runs the
# pairings in its single guest boot (part "interop").  By hand:
#   on a host:      tests/interop/interop.sh   -> tests/rxe/guest-suite.sh interop
#                   (one guest boot for the pairings alone)
#   in the guest:   the pairings directly (tests/interop/interop-pairs.sh)
# Run it from the build tree (or set top_builddir).
#
# Exit status: 0 all pairings passed, 1 a pairing failed, 77 skipped (no
# upstream librpma, no guest).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$(pwd)}
srcdir=$(cd "$srcdir" && pwd)
builddir=$(cd "$builddir" && pwd)

if [ "${RXE_GUEST:-}" != 1 ]; then
	top_srcdir=$srcdir top_builddir=$builddir
	export top_srcdir top_builddir
	exec bash "$srcdir/tests/rxe/guest-suite.sh" interop
fi

ours=$builddir/tests/interop
upstream=$builddir/tests/interop/upstream
for p in "$ours/interop-server" "$ours/interop-client"; do
	if [ ! -x "$p" ]; then
		echo "interop: $p is missing (run 'make check' first)" >&2
		exit 99
	fi
done
for p in "$upstream/interop-server" "$upstream/interop-client"; do
	if [ ! -x "$p" ]; then
		echo "*** SKIPPED: $p was not built: upstream librpma (librpma-dev) is not installed ***" >&2
		exit 77
	fi
done
# transcripts and logs stay in the build tree (shared with the guest)
INTEROP_LOGDIR=${INTEROP_LOGDIR:-$builddir/tests/interop/logs}
rm -rf "$INTEROP_LOGDIR"
export INTEROP_LOGDIR
exec bash "$srcdir/tests/interop/interop-pairs.sh" "$ours" "$upstream"
