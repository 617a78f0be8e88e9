#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check-rpma-info.sh -- rpma-info loads the provider modules as librpma.so.0 does and answers for every provider
#
# Checks, on the build tree's tools/rpma-info:
# - it links no transport library (readelf -d: no libfabric, libibverbs, librdmacm);
# - with the modules (found next to it, tools/librpma) every built provider is
#   listed and has exactly one line for 127.0.0.1 ("serves it" or "cannot serve
#   it: <reason>"), one "selected:" line and the exit status says whether the
#   selected provider serves the address;
# - a copy of it with no module to be found says "not loadable" for each
#   provider and exits 1;
# - RPMA_PROVIDER naming no built provider exits 1 with "names no built provider".
set -uo pipefail
build=${top_builddir:-.}
info=$build/tools/rpma-info
[ -x "$info" ] || { echo "SKIPPED: $info is not built"; exit 77; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT

needed=$(readelf -d "$info" | grep NEEDED)
echo "$needed" | grep -E 'libfabric|libibverbs|librdmacm' && fail "rpma-info links a transport library"

unset RPMA_PROVIDER RPMA_PROVIDER_PATH
"$info" 127.0.0.1 >"$work/out" 2>"$work/err"
rc=$?
cat "$work/out"
[ -s "$work/err" ] && fail "rpma-info wrote to stderr: $(head -3 "$work/err")"
names=$(sed -n '/^providers/,/^RPMA_PROVIDER/p' "$work/out" | awk '/^  [a-z]/ { print $1 }')
[ -n "$names" ] || fail "no provider listed"
for n in $names; do
	grep -q "^  $n  *not loadable" "$work/out" && fail "the module of $n was not found next to rpma-info"
	lines=$(grep -cE "^  $n +(serves it: |cannot serve it: .)" "$work/out")
	[ "$lines" -eq 1 ] || fail "$lines line(s) for $n on 127.0.0.1, expected 1"
	# a provider that serves the address says what it runs on, on the next line
	if grep -qE "^  $n +serves it: " "$work/out"; then
		grep -A1 -E "^  $n +serves it: " "$work/out" | sed -n 2p | grep -qE '^ +on: .+' ||
			fail "no 'on:' line after $n serves it"
	fi
done
sel=$(grep -c '^selected: ' "$work/out")
[ "$sel" -eq 1 ] || fail "$sel 'selected:' lines"
if grep -q '^selected: none' "$work/out"; then
	[ "$rc" -eq 1 ] || fail "no provider selected but exit status $rc"
else
	[ "$rc" -eq 0 ] || fail "a provider selected but exit status $rc"
	grep -q '^device caps: 0x' "$work/out" || fail "no 'device caps:' line for the selected provider"
fi

cp "$info" "$work/rpma-info"
"$work/rpma-info" 127.0.0.1 >"$work/out2" 2>&1
rc=$?
for n in $names; do
	grep -q "^  $n  *not loadable" "$work/out2" || fail "a copy without modules does not say $n is not loadable"
done
[ "$rc" -eq 1 ] || fail "a copy without modules exits $rc, expected 1"

RPMA_PROVIDER=no-such-provider "$info" >"$work/out3" 2>&1
rc=$?
grep -q 'names no built provider' "$work/out3" && [ "$rc" -eq 1 ] ||
	fail "RPMA_PROVIDER=no-such-provider: exit $rc, $(tail -1 "$work/out3")"

[ "$failures" -eq 0 ] || { echo "check-rpma-info: $failures failure(s)"; exit 1; }
echo "check-rpma-info: OK"
