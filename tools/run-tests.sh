#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-tests.sh -- build the tree out of source and run the whole test suite
#
# Usage: tools/run-tests.sh [build-dir]   (default: ./build)
# Environment: RPMA_DISTCHECK=0 skips 'make distcheck'; RPMA_GUEST=0 skips the
# Soft-RoCE guest runs (reported as skipped, never as passed); RPMA_TSAN=0 skips
# the ThreadSanitizer run of tests/threads and the integration suite (in
# build-dir/tsan; its results count in the summary); RPMA_ASAN=0 skips the
# AddressSanitizer + UBSan run of the host test programs (build-dir/asan);
# RPMA_TRIXIE=0 skips the trixie lane (tests/trixie/lane.sh in
# build-dir/trixie: the tree built and its host test programs run in a Debian
# trixie root, cached in RPMA_TRIXIE_ROOT, default /var/cache/rpma-trixie;
# reported as skipped, never as passed).  RPMA_TRIXIE_GUEST=0 (or RPMA_GUEST=0)
# skips the trixie Soft-RoCE guest (tests/rxe/guest-suite.sh with
# GUEST_SUITE_STACK=trixie on the lane's build-dir/trixie: native RDMA FLUSH
# and ATOMIC WRITE, the interop matrix with librpma 1.2 and 1.3; its results
# count in the summary as build-dir/trixie-guest.trs).  RPMA_DEBS=0 skips the
# Debian packages (tests/debian/replace.sh in build-dir/debs: dpkg-buildpackage,
# lintian, our librpma0 replacing Debian's in a clean bookworm root and back;
# build-dir/debian-packages.trs).
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$src/build}
jobs=$(nproc 2>/dev/null || echo 2)

# each step's header says how long the run has taken so far
step() { printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"; }
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
# failed_logs DIR -- what the failed tests under DIR printed: the lines that
# name a failure (a long log such as rdm.sh's has them far from its end), then
# the log's last lines
failed_logs() {
	local f
	for f in $(find "$1" -name '*.trs' -exec grep -lE '^:test-result: (FAIL|ERROR|XPASS)' {} + 2>/dev/null); do
		echo "----- ${f%.trs}.log: the lines naming a failure"
		grep -nE '\[(FAIL|----)\]|FAIL|CRASH|VIOLATION|[Tt]imed out|^== ' "${f%.trs}.log" | tail -60
		echo "----- ${f%.trs}.log: its end"
		tail -40 "${f%.trs}.log"
	done
}
[ "$check_rc" -eq 0 ] || failed_logs .
# sanitizer_run NAME SCRIPT TITLE -- a sanitizer build in $build/NAME (skipped
# when RPMA_<NAME>=0); sets NAME_rc, and NAME_extra=1 when it failed before
# any test ran (configure, build), which then counts as one failure
sanitizer_run() {
	local name=$1 script=$2 title=$3 var rc=0 extra=0
	var=RPMA_$(echo "$name" | tr '[:lower:]' '[:upper:]')
	step "$title"
	if [ "${!var:-1}" != 0 ]; then
		bash "$src/$script" "$build/$name"
		rc=$?
		if [ "$rc" -ne 0 ] &&
			[ -z "$(find "$name" -name '*.trs' -exec grep -lE '^:test-result: (FAIL|ERROR)' {} + 2>/dev/null)" ]; then
			extra=1
		fi
	else
		echo "skipped ($var=0)"
	fi
	printf -v "${name}_rc" '%s' "$rc"
	printf -v "${name}_extra" '%s' "$extra"
}
sanitizer_run tsan tests/threads/tsan.sh "ThreadSanitizer: tests/threads and the integration suite (fabric)"
sanitizer_run asan tests/asan/asan.sh \
	"AddressSanitizer + UBSan: unit, integration (tcp, sockets), threads, faultwalk, churn, examples, demo"
# the second lane: its .trs files (build-dir/trixie/build) count in the
# summary, a lane that could not run included (trixie-build.trs says FAIL)
step "trixie lane: build, unit, integration (tcp, sockets), threads, faultwalk, churn, examples, demo on Debian trixie"
bash "$src/tests/trixie/lane.sh" "$build/trixie"
trixie_rc=$?
[ "$trixie_rc" -eq 0 ] || failed_logs trixie
# a lane that failed with no failed test to show for it counts one failure
trixie_extra=0
if [ "$trixie_rc" -ne 0 ] &&
	[ -z "$(find trixie -name '*.trs' -exec grep -lE '^:test-result: (FAIL|ERROR)' {} + 2>/dev/null)" ]; then
	trixie_extra=1
fi
# the trixie Soft-RoCE guest: its guest-suite totals count in the summary
step "trixie guest: verbs integration, threads, examples, native paths and interop with librpma 1.2/1.3, faultwalk, memcheck subset (kernel 6.12, NVDIMM)"
tg_rc=0
tg_result() { printf ':test-result: %s\n:global-test-result: %s\n:recheck: no\n:copy-in-global-log: no\n' "$1" "$1" >trixie-guest.trs; }
if [ "${RPMA_TRIXIE_GUEST:-1}" = 0 ] || [ "${RPMA_GUEST:-1}" = 0 ]; then
	echo "trixie guest: skipped (RPMA_TRIXIE_GUEST=0 or RPMA_GUEST=0)" | tee trixie-guest.log
	tg_result SKIP
else
	tg_t0=$SECONDS
	GUEST_SUITE_STACK=trixie GUEST_SUITE_TRIXIE_DIR="$build/trixie" RXE_QUIET=1 \
		bash "$src/tests/rxe/guest-suite.sh" >trixie-guest.log 2>&1
	tg_rc=$?
	sed -n '/^==== guest-suite summary/,$p' trixie-guest.log
	echo "trixie guest: $((SECONDS - tg_t0)) s"
	case $tg_rc in
	0) tg_result PASS ;;
	77) tg_result SKIP && tg_rc=0 ;;
	*) tg_result FAIL ;;
	esac
fi
# the Debian packages: built, lintian, installed over Debian's librpma0 in a clean root, removed
step "Debian packages: dpkg-buildpackage, lintian, librpma0 replacing Debian's in a clean bookworm root and back"
deb_rc=0
deb_result() { printf ':test-result: %s\n:global-test-result: %s\n:recheck: no\n:copy-in-global-log: no\n' "$1" "$1" >debian-packages.trs; }
if [ "${RPMA_DEBS:-1}" = 0 ]; then
	echo "Debian packages: skipped (RPMA_DEBS=0)" | tee debian-packages.log
	deb_result SKIP
else
	bash "$src/tests/debian/replace.sh" "$build/debs" >debian-packages.log 2>&1
	deb_rc=$?
	grep -E '^(ok|FAIL|SKIPPED|lintian|replace)' debian-packages.log
	case $deb_rc in
	0) deb_result PASS ;;
	77) deb_result SKIP && deb_rc=0 ;;
	*) deb_result FAIL ;;
	esac
fi
dist_rc=0
if [ "${RPMA_DISTCHECK:-1}" != 0 ] && [ "$check_rc" -eq 0 ]; then
	step "make distcheck"
	# the reliable-datagram rounds ran in make check and under ASan already
	RPMA_RDM=0 RPMA_GUEST=0 FUZZ_SECONDS=5 RPMA_CHURN_CYCLES=2000 make -j"$jobs" distcheck >distcheck.log 2>&1
	dist_rc=$?
	if [ "$dist_rc" -ne 0 ]; then
		tail -40 distcheck.log
		# the tree distcheck built in stays when it fails
		failed_logs "$(ls -d librpma-*/_build 2>/dev/null | head -1)"
		echo "run-tests.sh: make distcheck failed" >&2
	else
		grep -E 'archives ready for distribution' -A2 distcheck.log | head -3
	fi
fi
step "summary"
bash "$src"/tests/summary.sh . | sed '$d' || true
if [ "$check_rc" -ne 0 ] || [ "$dist_rc" -ne 0 ] || [ "$tsan_rc" -ne 0 ] || [ "$asan_rc" -ne 0 ] ||
	[ "$trixie_rc" -ne 0 ] || [ "$tg_rc" -ne 0 ] || [ "$deb_rc" -ne 0 ]; then
	echo "distcheck: $([ "$dist_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "tsan: $([ "$tsan_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "asan: $([ "$asan_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "trixie: $([ "$trixie_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "trixie guest: $([ "$tg_rc" -eq 0 ] && echo ok || echo FAILED)"
	echo "Debian packages: $([ "$deb_rc" -eq 0 ] && echo ok || echo FAILED)"
fi
# the closing line (tests/summary.sh prints the counts of the test run itself)
bash "$src"/tests/summary.sh --line . $(((dist_rc != 0) + tsan_extra + asan_extra + trixie_extra))
[ "$check_rc" -eq 0 ] && [ "$dist_rc" -eq 0 ] && [ "$tsan_rc" -eq 0 ] && [ "$asan_rc" -eq 0 ] &&
	[ "$trixie_rc" -eq 0 ] && [ "$tg_rc" -eq 0 ] && [ "$deb_rc" -eq 0 ]
