#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# diff.sh -- differential test: the transcript of tests/diff/diff_transcript.c
# under our librpma against the same program built with Debian's librpma0 1.2.0
#
# Lines starting with "DIFF-OK:<reason> " mark deliberate differences
# (HACKING.md); they are printed side by side but not compared.  Lines starting
# with '#' are information.  Exit 77 (skip) only when a library is absent.
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
CC=${CC:-cc}
ours_prog=$builddir/tests/diff/diff_transcript

if [ ! -e "$builddir/.libs/librpma.so.0" ]; then
	echo "diff: SKIP: our library $builddir/.libs/librpma.so.0 is not built"
	exit 77
fi
sys_lib=
if command -v dpkg >/dev/null; then
	sys_lib=$(dpkg -L librpma0 2>/dev/null | grep '/librpma\.so\.0$' | head -1)
fi
if [ -z "$sys_lib" ] || [ ! -e "$sys_lib" ] || [ ! -e /usr/include/librpma.h ]; then
	echo "diff: SKIP: Debian's librpma0 and librpma-dev 1.2.0 are not installed"
	exit 77
fi
if [ ! -x "$ours_prog" ]; then
	echo "diff: FAIL: $ours_prog was not built"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the upstream build: Debian's header (no -I of ours) and Debian's library
if ! "$CC" -std=gnu11 -Wall -o "$tmp/upstream" "$srcdir/tests/diff/diff_transcript.c" \
	"$sys_lib" 2>"$tmp/cc.err"; then
	cat "$tmp/cc.err"
	echo "diff: FAIL: cannot build the transcript against $sys_lib"
	exit 1
fi

env -u LD_LIBRARY_PATH -u RPMA_LOG_LEVEL "$tmp/upstream" >"$tmp/upstream.out" 2>"$tmp/upstream.err"
rc_up=$?
env -u RPMA_LOG_LEVEL "$ours_prog" >"$tmp/ours.out" 2>"$tmp/ours.err"
rc_ours=$?
fail=0
if [ $rc_up -ne 0 ] || [ $rc_ours -ne 0 ]; then
	echo "diff: FAIL: transcript programs exited $rc_up (upstream) and $rc_ours (ours)"
	fail=1
fi

lib_up=$(sed -n 's/^# library: //p' "$tmp/upstream.out")
lib_ours=$(sed -n 's/^# library: //p' "$tmp/ours.out")
echo "diff: upstream transcript from $lib_up"
echo "diff: our transcript from $lib_ours"
case $lib_up in
*/.libs/*)
	echo "diff: FAIL: the upstream build did not load the system library"
	fail=1
	;;
esac
case $lib_ours in
*/.libs/librpma.so*) ;;
*)
	echo "diff: FAIL: our build did not load the library of this build"
	fail=1
	;;
esac
for f in upstream ours; do
	grep -q '^# end$' "$tmp/$f.out" || {
		echo "diff: FAIL: the $f transcript is incomplete"
		fail=1
	}
done

grep -v -e '^#' -e '^DIFF-OK:' "$tmp/upstream.out" >"$tmp/upstream.cmp"
grep -v -e '^#' -e '^DIFF-OK:' "$tmp/ours.out" >"$tmp/ours.cmp"
lines=$(wc -l <"$tmp/ours.cmp")
if ! diff -u "$tmp/upstream.cmp" "$tmp/ours.cmp" >"$tmp/diff"; then
	echo "diff: FAIL: the transcripts differ (- upstream, + ours):"
	cat "$tmp/diff"
	fail=1
fi

echo "diff: deliberate differences (not compared):"
grep '^DIFF-OK:' "$tmp/upstream.out" | sed 's/^/  upstream: /'
grep '^DIFF-OK:' "$tmp/ours.out" | sed 's/^/  ours:     /'

if [ $fail -eq 0 ]; then
	echo "diff: OK: $lines lines identical"
	exit 0
fi
exit 1
