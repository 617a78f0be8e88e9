#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# interop.sh -- 'make check' entry of the interoperability test: the four
# client/server pairings of our librpma and upstream's (Debian librpma0)
# over Soft-RoCE.  On a host it boots the guest (tests/rxe/run-in-guest.sh);
# inside a guest (RXE_GUEST=1) it runs the pairings directly.
#
# Exit status: 0 all pairings passed, 1 a pairing failed, 77 skipped (no
# upstream librpma, no guest), as the guest runner reports it.

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$(pwd)}
srcdir=$(cd "$srcdir" && pwd)
builddir=$(cd "$builddir" && pwd)
ours=$builddir/tests/interop
upstream=$builddir/tests/interop/upstream

for p in "$ours/interop-server" "$ours/interop-client"; do
	if [ ! -x "$p" ]; then
		echo "interop: $p is missing (run 'make check')" >&2
		exit 99
	fi
done
for p in "$upstream/interop-server" "$upstream/interop-client"; do
	if [ ! -x "$p" ]; then
		echo "*** SKIPPED: $p was not built: upstream librpma (librpma-dev) is not installed ***" >&2
		exit 77
	fi
done

pairs=$srcdir/tests/interop/interop-pairs.sh
# transcripts and logs stay in the build tree (shared with the guest)
INTEROP_LOGDIR=${INTEROP_LOGDIR:-$builddir/tests/interop/logs}
rm -rf "$INTEROP_LOGDIR"
export INTEROP_LOGDIR
if [ "${RXE_GUEST:-}" = 1 ]; then
	exec bash "$pairs" "$ours" "$upstream"
fi

rig=$srcdir/tests/rxe/run-in-guest.sh
if [ ! -f "$rig" ]; then
	echo "*** SKIPPED: $rig not found ***" >&2
	exit 77
fi
# the guest sees the host's / read-only, minus /tmp /var/tmp /run: share the
# source tree when it lives there (the build tree is the current directory)
case $srcdir in
/tmp/* | /var/tmp/* | /run/*)
	RXE_SHARE_DIRS=${RXE_SHARE_DIRS:+$RXE_SHARE_DIRS:}$srcdir
	export RXE_SHARE_DIRS
	;;
esac
cd "$builddir" || exit 99
exec bash "$rig" bash "$pairs" "$ours" "$upstream"
