#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# summary.sh -- add up the results of 'make check' in a build directory
#
# Criterion binaries count their own tests (their "Synthesis" line); every
# other test program counts as one test.  Prints one line per test program
# and "N passed, N failed, N skipped".
# Usage: summary.sh [--line] [build-dir] [extra-failures]
set -uo pipefail
only_line=0
if [ "${1:-}" = --line ]; then
	only_line=1
	shift
fi
dir=${1:-.}
extra_failed=${2:-0}
passed=0 failed=0 skipped=0
# shellcheck source=tally.sh
. "$(dirname "$0")/tally.sh"
while IFS= read -r trs; do
	log=${trs%.trs}.log
	result=$(sed -n 's/^:test-result: //p' "$trs" | head -1)
	if grep -aq 'Synthesis: Tested:' "$log" 2>/dev/null; then
		read -r p f c s t < <(synthesis_counts "$log")
		# a binary that failed outside its tests (crash at exit, leak checker) counts one more failure
		extra=0
		if [ "$result" != PASS ] && [ "$result" != SKIP ] && [ $((f + c)) -eq 0 ]; then extra=1; fi
		passed=$((passed + p)) failed=$((failed + f + c + extra)) skipped=$((skipped + s))
		[ "$only_line" = 1 ] || printf '%-6s %-50s %s\n' "$result" "${trs%.trs}" "tested $t, passing $p, failing $((f + c))"
	else
		case $result in
		PASS | XFAIL) passed=$((passed + 1)) ;;
		SKIP) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
		[ "$only_line" = 1 ] || printf '%-6s %s\n' "$result" "${trs%.trs}"
	fi
done < <(find "$dir" -name '*.trs' -not -path '*/_build/*' -not -path '*/librpma-*/*' | sort)
failed=$((failed + extra_failed))
echo "$passed passed, $failed failed, $skipped skipped"
