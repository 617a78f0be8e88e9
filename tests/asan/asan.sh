#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# asan.sh -- build an AddressSanitizer + UndefinedBehaviorSanitizer tree and run the host test programs in it
#
# Usage: tests/asan/asan.sh BUILD-DIR
# Configures BUILD-DIR from this source tree with --enable-sanitizers
# (-fsanitize=address,undefined, UBSan errors fatal; LeakSanitizer on),
# builds librpma and the host test programs and runs them through the
# automake test harness, so that their .trs files count in
# tests/summary.sh: every unit test (core over the fake provider, fault
# injection included), the integration suite over libfabric tcp and over
# sockets (without leak check there, see below), the multi-threaded scenarios, the fault walk over the real fabric
# provider, a short connection churn, and every example pair and the
# replication demo over libfabric tcp (each process with the leak check at
# exit).  bench/smoke.sh stays out: its release check compares heap and RSS
# with the idle figures, which ASan's quarantine keeps high on purpose.
# Nothing needs an RDMA device (the
# verbs provider runs under valgrind memcheck in the Soft-RoCE guest,
# tests/rxe/guest-suite.sh); the fuzz targets are ASan+UBSan builds of their
# own (tests/fuzz).
# Prints "asan: ok" or "asan: FAILED (...)"; the exit status says the same.
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:?usage: asan.sh BUILD-DIR}
jobs=${ASAN_JOBS:-2}

failed() {
	echo "asan: FAILED ($*)"
	exit 1
}

if ! mkdir -p "$dir" || ! cd "$dir"; then
	failed "cannot enter $dir"
fi
# results of an earlier run must not count again
find . -name '*.trs' -delete 2>/dev/null
if [ ! -f Makefile ] || [ "$src/configure" -nt Makefile ]; then
	"$src"/configure -q --enable-sanitizers=address >configure.log 2>&1 ||
		{ tail -20 configure.log; failed "configure"; }
fi
grep -q -- '-fsanitize=address' Makefile || failed "$dir is not an AddressSanitizer build"
progs=""
for f in "$src"/tests/unit/test_*.c; do
	f=${f##*/}
	progs="$progs tests/unit/${f%.c}"
done
progs="$progs tests/integration/test_integration tests/threads/test_threads"
progs="$progs tests/faultwalk/faultwalk tests/churn/churn"
# the example pairs (examples/run-example.sh) and the demo are scripts over
# programs that 'make check' builds
examples=$(sed -n 's/^[[:space:]]*\(examples\/tests\/[a-z0-9-]*\.example\).*/\1/p' \
	"$src"/examples/Makefile.inc | tr '\n' ' ')
[ -n "$examples" ] || failed "no example pairs found in examples/Makefile.inc"
examples="$examples examples/replicate/demo-test.sh"
# shellcheck disable=SC2086
make -j"$jobs" $progs >make.log 2>&1 || { tail -30 make.log; failed "build"; }
# shellcheck disable=SC2086
make -j"$jobs" check TESTS= >>make.log 2>&1 || { tail -30 make.log; failed "build (check programs)"; }

# a sanitizer report ends the process with an error: the scenario fails
export ASAN_OPTIONS="detect_leaks=1 abort_on_error=0 ${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
export RPMA_CHURN_CYCLES=${RPMA_CHURN_CYCLES:-1000}
# shellcheck disable=SC2086
make -j"$jobs" check-TESTS TESTS="$progs $examples" >check.log 2>&1
rc=$?
# LeakSanitizer's own tracer (the thread that stops the others for the leak
# check at exit) now and then dies of a SIGSEGV: "Tracer caught signal 11
# ... LeakSanitizer has encountered a fatal error" (google/sanitizers#1353,
# open; seen once in CI here: access::lying_descriptor, whose checks had
# all passed, failed by its exit status).  That is no finding.  A program
# whose failed tests are no more than such crashes, with no sanitizer
# report in its log, runs once more (the first log kept as
# .lsan-tracer.log), and the second run decides.
if [ "$rc" -ne 0 ]; then
	for p in $progs; do
		grep -qE '^:test-result: (FAIL|ERROR)' "$p.trs" 2>/dev/null || continue
		grep -qE 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error' "$p.log" && continue
		crashes=$(grep -c 'LeakSanitizer has encountered a fatal error' "$p.log")
		fails=$(grep -c '^\[FAIL\]' "$p.log")
		if [ "$crashes" -eq 0 ] || [ "$fails" -gt "$crashes" ]; then
			continue
		fi
		cp "$p.log" "$p.lsan-tracer.log"
		echo "asan: $p: LeakSanitizer's tracer crashed ($crashes time(s)," \
			"$fails test(s) failed by it, no sanitizer report): run once more" |
			tee -a check.log
		make check-TESTS TESTS="$p" >>check.log 2>&1
	done
	rc=0
	for p in $progs $examples; do
		b=${p%.example}
		if [ ! -f "$b.trs" ] || grep -qE '^:test-result: (FAIL|ERROR)' "$b.trs"; then
			rc=1
		fi
	done
fi
# The integration suite over libfabric's sockets provider runs without the
# leak check: libfabric 1.17's sockets provider leaks 800 bytes allocated in
# a thread of its own (stack: start_thread -> libfabric.so only) when a
# pending connection request is refused (conn/delete_unused and others, not
# every run).  The same scenarios over tcp keep the leak check above, and
# valgrind memcheck runs them too; memory errors are still caught here.
ASAN_OPTIONS="$ASAN_OPTIONS detect_leaks=0" \
	make check-TESTS TESTS=tests/integration/sockets.sh >check-sockets.log 2>&1 || rc=1
# the shared CQs of the fabric provider (without rpma-scale's heap figures)
GROUPED_SCALE=0 make check-TESTS TESTS=tests/integration/grouped.sh >check-grouped.log 2>&1 || rc=1
cat check-grouped.log >>check.log
# reliable-datagram endpoints over shm only (RDM_PROVIDERS): the rounds over
# tcp;ofi_rxm, ~4 min here, run in make check without ASan and through the
# same code of ours, so CI's run stays within its time.  Without the leak
# check, as when rxm ran here (conn/disconnect_while_connecting left 61 blocks
# from fi_dupinfo, libfabric 1.17, stack in libfabric only); over shm alone
# the leak check was not tried yet.  Memory errors are caught.
RDM_PROVIDERS=shm ASAN_OPTIONS="$ASAN_OPTIONS detect_leaks=0" \
	make check-TESTS TESTS=tests/integration/rdm.sh >check-rdm.log 2>&1 || rc=1
cat check-rdm.log >>check.log
tests="$progs $examples tests/integration/sockets.sh tests/integration/grouped.sh"
tests="$tests tests/integration/rdm.sh"
cat check-sockets.log >>check.log
grep -E '^(PASS|FAIL|XPASS|XFAIL|SKIP|ERROR):' check.log
if [ "$rc" -ne 0 ]; then
	for p in $tests; do
		b=${p%.sh}
		b=${b%.example}
		grep -q '^:test-result: PASS' "$b.trs" 2>/dev/null && continue
		echo "----- $dir/$b.log"
		# with Criterion's assertion lines (where and what), or a failed
		# scenario says only its name
		grep -E 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|^SUMMARY|#[0-9] |\[FAIL\]|Synthesis|Assertion Failed|\[----\]   [^ ]' \
			"$b.log" | head -60
	done
	failed "see $dir/tests/*/*.log"
fi
echo "asan: ok"
