#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/fuzz/run.sh -- a time-boxed libFuzzer run of every fuzz target
#
# Usage: tests/fuzz/run.sh [seconds-per-target]
#
# Seconds per target: the argument, else $FUZZ_SECONDS, else 60 when $CI is set
# (CI mode), else 10.  FUZZ_TARGETS="mr_desc completions" limits the run.
# Each target first replays its seed corpus (tests/fuzz/corpus/<target>) and
# the reproducers of fixed crashes (tests/fuzz/crashes/<target>), then fuzzes
# from them into a scratch corpus.  A crash, a leak, a sanitizer report or a
# broken expectation of a target fails the run; its input is saved as
# tests/fuzz/artifacts/<target>-crash-* in the build tree (commit it under
# tests/fuzz/crashes/<target>/ once understood).  The summary gives
# executions, corpus size and crashes per target.  Exit 77 (skipped) when the
# targets were not built because clang cannot link libFuzzer.
set -u

# 'make check' runs tests with $(SHELL): arrays need bash
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
fuzzdir=$builddir/tests/fuzz

if [ $# -gt 0 ]; then
	seconds=$1
elif [ -n "${FUZZ_SECONDS:-}" ]; then
	seconds=$FUZZ_SECONDS
elif [ -n "${CI:-}" ]; then
	seconds=60
else
	seconds=10
fi
case $seconds in
'' | *[!0-9]*)
	echo "run.sh: seconds per target must be a number, not '$seconds'" >&2
	exit 2
	;;
esac

if [ -f "$fuzzdir/fuzzers.stamp" ] && [ "$(cat "$fuzzdir/fuzzers.stamp")" != yes ]; then
	echo "run.sh: the fuzz targets were not built (no clang with libFuzzer): skipped"
	exit 77
fi

targets=${FUZZ_TARGETS:-mr_desc peer_cfg private_data completions envelope rdm_proto}
for t in $targets; do
	if [ ! -x "$fuzzdir/fuzz_$t" ]; then
		echo "run.sh: $fuzzdir/fuzz_$t not built (make fuzz)" >&2
		exit 99
	fi
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

mkdir -p "$fuzzdir/artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=0
summary=""
for t in $targets; do
	bin=$fuzzdir/fuzz_$t
	log=$fuzzdir/run-$t.log
	seeds=$srcdir/tests/fuzz/corpus/$t
	crashes=$srcdir/tests/fuzz/crashes/$t
	dirs=("$seeds")
	[ -d "$crashes" ] && dirs+=("$crashes")
	: > "$log"

	# 1. replay the seeds and the reproducers of fixed crashes
	if ! "$bin" -runs=0 "${dirs[@]}" >> "$log" 2>&1; then
		echo "FAIL: fuzz_$t: a seed or a crash reproducer fails (see $log)"
		grep -E "FUZZ_CHECK|ERROR:|SUMMARY:|runtime error" "$log" | head -5
		failed=1
		summary+=$(printf "\n  %-14s replay of the seeds FAILED" "$t")
		continue
	fi

	# 2. fuzz from them into a scratch corpus
	mkdir -p "$work/$t"
	start=$(find "$seeds" -type f | wc -l)
	"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$fuzzdir/artifacts/$t-" \
		"$work/$t" "${dirs[@]}" >> "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
	corpus=$(find "$work/$t" -type f | wc -l)
	artifacts=$(find "$fuzzdir/artifacts" -name "$t-*" | wc -l)
	if [ $rc -ne 0 ]; then
		failed=1
		echo "FAIL: fuzz_$t exited with $rc after ${execs:-?} executions (see $log):"
		grep -E "FUZZ_CHECK|ERROR:|SUMMARY:|runtime error|Test unit written" "$log" | head -8
	fi
	summary+=$(printf "\n  %-14s %10s executions in %ss (%s/s), %s, corpus %s seeds -> %s new, crashes %s" \
		"$t" "${execs:-?}" "$seconds" "${rate:-?}" "${cov:-cov: ?}" "$start" "$corpus" \
		"$([ $rc -eq 0 ] && echo 0 || echo "1 (exit $rc, $artifacts artifact(s))")")
done

echo "fuzz summary ($seconds s per target):$summary"
exit $failed
