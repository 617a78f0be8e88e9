#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tsan.sh -- build a ThreadSanitizer tree and run the threaded scenarios and the integration suite in it
#
# Usage: tests/threads/tsan.sh BUILD-DIR
# Configures BUILD-DIR from this source tree with --enable-sanitizers=thread
# (clang when there is one, else the default compiler), builds only
# librpma, tests/threads/test_threads and tests/integration/test_integration,
# and runs those two through the automake test harness, so that their .trs
# files count in tests/summary.sh.  The fabric provider only (libfabric tcp
# on 127.0.0.1): nothing needs an RDMA device.  Then both again over shm's
# reliable datagrams, directly (their results do not count twice).
#
# A ThreadSanitizer report fails the scenario it happens in
# (halt_on_error=1).  errors/peer_killed is left out: it forks a process that
# already runs the progress thread of a peer and starts another one in the
# child, which ThreadSanitizer does not support (the child dies at the
# thread's creation); peerkill/* does the same.  No report is suppressed: none was needed.
# Prints "tsan: ok" or "tsan: FAILED (...)"; the exit status says the same.
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:?usage: tsan.sh BUILD-DIR}
jobs=${TSAN_JOBS:-2}

failed() {
	echo "tsan: FAILED ($*)"
	exit 1
}

if ! mkdir -p "$dir" || ! cd "$dir"; then
	failed "cannot enter $dir"
fi
# results of an earlier run must not count again
find . -name '*.trs' -delete 2>/dev/null
cc=${TSAN_CC:-$(command -v clang || echo "${CC:-cc}")}
if [ ! -f Makefile ] || [ "$src/configure" -nt Makefile ]; then
	CC=$cc "$src"/configure -q --enable-sanitizers=thread >configure.log 2>&1 ||
		{ tail -20 configure.log; failed "configure"; }
fi
grep -q -- '-fsanitize=thread' Makefile || failed "$dir is not a ThreadSanitizer build"
progs="tests/threads/test_threads tests/integration/test_integration"
# shellcheck disable=SC2086
make -j"$jobs" $progs >make.log 2>&1 || { tail -30 make.log; failed "build"; }

# second_deadlock_stack: both stacks of a lock-order report
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export RPMA_PROVIDER=fabric
export CRITERION_TEST_PATTERN='!(errors/peer_killed|peerkill/*)'
make -j"$jobs" check-TESTS TESTS="$progs" >check.log 2>&1
rc=$?
grep -E '^(PASS|FAIL|XPASS|XFAIL|SKIP|ERROR):' check.log
if [ "$rc" -ne 0 ]; then
	for p in $progs; do
		grep -q '^:test-result: PASS' "$p.trs" 2>/dev/null && continue
		echo "----- $dir/$p.log"
		grep -E 'WARNING: ThreadSanitizer|^SUMMARY|#[0-9] |\[FAIL\]|Synthesis' "$p.log" | head -60
	done
	failed "see $dir/tests/*/*.log"
fi
# the threaded scenarios and the integration suite once more over reliable
# datagrams (shm): the listener's and the connection protocol's state shared
# between the application and the progress thread (races found so: a
# connection's record was bound outside the lock the listener's purge reads
# it under; the listener's closing flag).  shm's files a failing scenario
# leaves behind are removed afterwards, only those this run made.  Each run
# leaves PROG-shm.log and a PROG-shm.trs beside it, so that the summary of
# the test run (tests/summary.sh) counts its scenarios.
if command -v fi_info >/dev/null && fi_info -p shm -t FI_EP_RDM >/dev/null 2>&1; then
	shm_before=$(ls /dev/shm 2>/dev/null)
	for p in $progs; do
		log=$p-shm.log
		FI_PROVIDER=shm "$p" -j1 --timeout 120 >"$log" 2>&1
		prc=$?
		printf ':test-result: %s\n' "$([ "$prc" = 0 ] && echo PASS || echo FAIL)" >"$p-shm.trs"
		ls /dev/shm 2>/dev/null | grep -Ex '[0-9]+:[0-9]+:[0-9]+|[0-9.]+:[0-9]+' |
			grep -vxF -e "$shm_before" -e '' | while read -r f; do rm -f "/dev/shm/$f"; done
		if [ "$prc" -ne 0 ]; then
			grep -E 'WARNING: ThreadSanitizer|^SUMMARY|#[0-9] |\[FAIL\]|Synthesis' "$log" |
				head -60
			failed "$p over shm, see $dir/$log"
		fi
		grep -E 'Synthesis' "$log" | sed "s|^|$(basename "$p") over shm: |"
	done
fi
echo "tsan: ok"
