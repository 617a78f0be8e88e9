#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# smoke.sh -- a few iterations of every benchmark operation, so the benchmark cannot rot
#
# Runs rpma-bench in "both" mode (a forked server on 127.0.0.1) over the
# default provider, busy-polling and then blocking, and checks that every
# operation, size and mode produced a row.  The raw libfabric baseline gets
# the same check when it was built.  Not a measurement: the counts are tiny.
set -euo pipefail

b=${top_builddir:-.}/bench
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT
base_port=$((20000 + $$ % 20000))
fail=0

ops=(write write-flush-v write-flush-p read send-recv atomic-flush write-imm)

# check CSV TOOL -- every op x size x mode present; "ok" (or "nosupp" where allowed)
check() {
	local csv=$1 tool=$2 op size mode st
	for op in "${ops[@]}"; do
		for size in 8 4096; do
			[[ $op == atomic-flush && $size != 8 ]] && continue
			for mode in lat bw; do
				st=$(awk -F, -v op="$op" -v s="$size" -v m="$mode" \
					'$4 == op && $8 == s && $5 == m { print $16 " " $14 }' "$csv")
				case $st in
				"ok "*)
					# ops/s must be a positive number
					if ! awk -v v="${st#ok }" 'BEGIN { exit !(v > 0) }'; then
						echo "FAIL: $tool $op $size $mode: ops/s = ${st#ok }"
						fail=1
					fi
					;;
				nosupp*)
					# only a persistent flush may be refused (the provider decides)
					if [[ $op != write-flush-p ]]; then
						echo "FAIL: $tool $op $size $mode: not supported"
						fail=1
					else
						echo "note: $tool $op: not supported by this provider"
					fi
					;;
				*)
					echo "FAIL: $tool $op $size $mode: no result row"
					fail=1
					;;
				esac
			done
		done
	done
}

# run NAME BINARY ARGS... -- one both-mode run writing $out/NAME.csv
run() {
	local name=$1 bin=$2
	shift 2
	echo "== $name: $bin both $*"
	if ! timeout 120 "$bin" both --csv "$out/$name.csv" -q -s 8,4K -n 5 -N 20 -w 4 "$@"; then
		echo "FAIL: $name exited with an error"
		fail=1
		return
	fi
	check "$out/$name.csv" "$name"
}

run rpma-poll "$b/rpma-bench" -p $((base_port)) -c poll
run rpma-wait "$b/rpma-bench" -p $((base_port + 1)) -c wait

if [[ -x $b/baseline-fabric ]]; then
	run fabric-poll "$b/baseline-fabric" -p $((base_port + 2)) -c poll
fi

# bad command lines must be refused with status 2, not run
for args in "bogus" "client -s 3" "client -o nosuchop" "client -w 0" "client -c spin"; do
	# shellcheck disable=SC2086 # word splitting wanted
	if "$b/rpma-bench" $args >/dev/null 2>&1; then
		echo "FAIL: 'rpma-bench $args' was accepted"
		fail=1
	else
		st=$?
		if [[ $st != 2 ]]; then
			echo "FAIL: 'rpma-bench $args' exited with $st, not 2"
			fail=1
		fi
	fi
done

[[ $fail == 0 ]] && echo "smoke: all benchmark operations ran"
exit $fail
