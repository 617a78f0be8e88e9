# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# tally.sh -- sourced by the test scripts that run several Criterion programs
# or rounds in one test (tests/integration/rdm.sh, grouped.sh): their counts
# added up, printed at the end as a Synthesis line of their own, which
# tests/summary.sh takes (it reads the last Synthesis line of a log).
#
#   tally_criterion LOG RC  a Criterion run: LOG its output, RC its exit status
#   tally_one pass|fail|skip  a part that counts as one test
#   tally_line NAME         the closing line: "NAME totals -- Synthesis: ..."
tally_pass=0 tally_fail=0 tally_skip=0

# synthesis_counts LOG -- "PASSING FAILING CRASHING SKIPPED TESTED" of the last
# Criterion synthesis line of LOG (0 for each it lacks); tests/summary.sh
# reads the logs of make check with it too
synthesis_counts() {
	grep -a 'Synthesis: Tested:' "$1" 2>/dev/null | tail -1 | sed 's/\x1b\[[0-9;]*m//g' |
		awk '{ for (i = 1; i < NF; i++) if ($i ~ /^(Passing|Failing|Crashing|Skipped|Tested):$/) n[$i] = $(i + 1) }
			END { print n["Passing:"] + 0, n["Failing:"] + 0, n["Crashing:"] + 0, n["Skipped:"] + 0, n["Tested:"] + 0 }'
}

# tally_criterion LOG RC -- the counts of the last Synthesis line of LOG; a
# run without one that failed (it crashed before it could count), or one
# that failed with no failed test to show for it (a crash at exit, a
# sanitizer's report), counts one failure more
tally_criterion() {
	local p f c s _
	read -r p f c s _ < <(synthesis_counts "$1")
	if [ "$2" != 0 ] && [ $((f + c)) = 0 ]; then f=1; fi
	tally_pass=$((tally_pass + p)) tally_fail=$((tally_fail + f + c)) tally_skip=$((tally_skip + s))
}

tally_one() {
	case $1 in
	pass) tally_pass=$((tally_pass + 1)) ;;
	skip) tally_skip=$((tally_skip + 1)) ;;
	*) tally_fail=$((tally_fail + 1)) ;;
	esac
}

tally_line() {
	echo "$1 totals -- Synthesis: Tested: $((tally_pass + tally_fail)) | Passing: $tally_pass |" \
		"Failing: $tally_fail | Crashing: 0 | Skipped: $tally_skip"
}
