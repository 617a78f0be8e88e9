#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-tests.sh -- build the tree out of source and run the whole test suite
#
# Usage: tools/run-tests.sh [build-dir]   (default: ./build)
# Environment: RPMA_DISTCHECK=0 skips 'make distcheck'; RPMA_GUEST=0 skips the
# Soft-RoCE guest runs (reported as skipped, never as passed); RPMA_TSAN=0 skips
# the ThreadSanitizer run of tests/threads and the integration suite (in
# build-dir/tsan; its results count in the summary); RPMA_ASAN=0 skips the
# AddressSanitizer + UBSan run of the host test programs (build-dir/asan).
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$src/build}
jobs=$(nproc 2>/dev/null || echo 2)

step() { printf '\n=== %s\n' "$*"; }
fail() { echo "run-tests.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

step "autoreconf"
(cd "$src" && autoreconf -fi >/dev/null 2>&1) || fail "autoreconf failed"
mkdir -p "$build" || fail "cannot create $build"
cd "$build" || fail "cannot enter $build"
step "configure"
"$src"/configure -q || fail "configure failed"
step "make"
make -j"$jobs" >make.log 2>&1 || { tail -50 make.log; fail "build failed"; }
step "format-check"
make -s format-check || fail "sources are not formatted (run 'make format')"
# the last sanitizer runs' results
find tsan asan -name '*.trs' -delete 2>/dev/null
step "make check"
make -j"$jobs" check >check.log 2>&1
check_rc=$?
grep -E '^(PASS|FAIL|XPASS|XFAIL|SKIP|ERROR):' check.log || true
if [ "$check_rc" -ne 0 ]; then
	for f in $(grep -lE '^:test-result: (FAIL|ERROR|XPASS)' $(find . -name '*.trs') 2>/dev/null); do
		echo "----- ${f%.trs}.log"
		tail -40 "${f%.trs}.log"
	done
fi
tsan_rc=0 tsan_extra=0
step "ThreadSanitizer: tests/threads and the integration suite (fabric)"
if [ "${RPMA_TSAN:-1}" != 0 ]; then
	bash "$src"/tests/threads/tsan.sh "$build/tsan"
	tsan_rc=$?
	# a failure before any scenario ran (configure, build) counts once
	if [ "$tsan_rc" -ne 0 ] &&
		[ -z "$(find tsan -name '*.trs' -exec grep -lE '^:test-result: (FAIL|ERROR)' {} + 2>/dev/null)" ]; then
		tsan_extra=1
	fi
else
	echo "skipped (RPMA_TSAN=0)"
fi
asan_rc=0 asan_extra=0
step "AddressSanitizer + UBSan: unit, integration (tcp, sockets), threads, faultwalk, churn"
if [ "${RPMA_ASAN:-1}" != 0 ]; then
	bash "$src"/tests/asan/asan.sh "$build/asan"
	asan_rc=$?
	# a failure before any test ran (configure, build) counts once
	if [ "$asan_rc" -ne 0 ] &&
		[ -z "$(find asan -name '*.trs' -exec grep -lE '^:test-result: (FAIL|ERROR)' {} + 2>/dev/null)" ]; then
		asan_extra=1
	fi
else
	echo "skipped (RPMA_ASAN=0)"
fi
dist_rc=0
if [ "${RPMA_DISTCHECK:-1}" != 0 ] && [ "$check_rc" -eq 0 ]; then
	step "make distcheck"
	RPMA_GUEST=0 FUZZ_SECONDS=5 RPMA_CHURN_CYCLES=2000 make -j"$jobs" distcheck >distcheck.log 2>&1
	dist_rc=$?
	if [ "$dist_rc" -ne 0 ]; then
		tail -40 distcheck.log
		echo "run-tests.sh: make distcheck failed" >&2
	else
		grep -E 'archives ready for distribution' -A2 distcheck.log | head -3
	fi
fi
step "summary"
bash "$src"/tests/summary.sh . | sed '$d' || true
if [ "$check_rc" -ne 0 ] || [ "$dist_rc" -ne 0 ] || [ "$tsan_rc" -ne 0 ] || [ "$asan_rc" -ne 0 ]; then
	echo "distcheck: $([ "$dist_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "tsan: $([ "$tsan_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "asan: $([ "$asan_rc" -eq 0 ] && echo ok || echo FAILED)"
fi
# the closing line (tests/summary.sh prints the counts of the test run itself)
bash "$src"/tests/summary.sh --line . $(((dist_rc != 0) + tsan_extra + asan_extra))
[ "$check_rc" -eq 0 ] && [ "$dist_rc" -eq 0 ] && [ "$tsan_rc" -eq 0 ] && [ "$asan_rc" -eq 0 ]
