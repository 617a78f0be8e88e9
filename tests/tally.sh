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

# tally_criterion LOG RC -- the counts of the last Synthesis line of LOG; a
# run without one that failed (it crashed before it could count), or one
# that failed with no failed test to show for it (a crash at exit, a
# sanitizer's report), counts one failure more
tally_criterion() {
	local syn p f c s
	syn=$(grep -a 'Synthesis: Tested:' "$1" 2>/dev/null | tail -1 | sed 's/\x1b\[[0-9;]*m//g')
	p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$syn")
	f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$syn")
	c=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$syn")
	s=$(sed -n 's/.*Skipped: \([0-9]*\).*/\1/p' <<<"$syn")
	p=${p:-0} f=${f:-0} c=${c:-0} s=${s:-0}
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
