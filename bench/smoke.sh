#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# smoke.sh -- a few iterations of every benchmark operation, so the benchmark cannot rot
#
# Runs rpma-bench in "both" mode (a forked server on 127.0.0.1) over the
# default provider, busy-polling and then blocking, and checks that every
# operation, size and mode produced a row.  The raw libfabric baseline gets
# the same check when it was built, its FI_EP_RDM sibling too over shm and
# over tcp;ofi_rxm (a provider libfabric does not offer here is skipped), and
# rpma-scale runs a short series of 1, 2 and 4 connections.  Not a
# measurement: the counts are tiny.
set -euo pipefail

b=${top_builddir:-.}/bench
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT
base_port=$((20000 + $$ % 20000))
fail=0

ops=(write write-flush-v write-flush-p read send-recv atomic-flush write-imm)

# check CSV TOOL [OP...] -- every op x size x mode present; "ok" (or "nosupp"
# where allowed: a persistent flush always, the OPs named besides)
check() {
	local csv=$1 tool=$2 op size mode st refused
	local allowed=" write-flush-p ${*:3} "
	for op in "${ops[@]}"; do
		refused=
		for size in 8 4096; do
			[[ $op == atomic-flush && $size != 8 ]] && continue
			for mode in lat bw; do
				st=$(awk -F, -v op="$op" -v s="$size" -v m="$mode" \
					'$4 == op && $8 == s && $5 == m { print $16 " " $14 }' "$csv")
				# the engine writes no bw row after a refused lat row
				[[ -z $st && $mode == bw && $refused == "$size" ]] && continue
				case $st in
				"ok "*)
					# ops/s must be a positive number
					if ! awk -v v="${st#ok }" 'BEGIN { exit !(v > 0) }'; then
						echo "FAIL: $tool $op $size $mode: ops/s = ${st#ok }"
						fail=1
					fi
					;;
				nosupp*)
					# only a persistent flush may be refused (the provider decides),
					# and what the caller allows
					if [[ $allowed != *" $op "* ]]; then
						echo "FAIL: $tool $op $size $mode: not supported"
						fail=1
					else
						[[ -z $refused ]] &&
							echo "note: $tool $op: not supported by this provider"
						refused=$size
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
# (ALLOW_NOSUPP: more operations that may say "nosupp")
run() {
	local name=$1 bin=$2
	shift 2
	echo "== $name: $bin both $*"
	if ! timeout -k 5 120 "$bin" both --csv "$out/$name.csv" -q -s 8,4K -n 5 -N 20 -w 4 "$@" \
		2>"$out/$name.err"; then
		cat "$out/$name.err"
		# a libfabric provider that is not there is skipped, not a failure
		if grep -q 'no FI_EP_RDM provider' "$out/$name.err"; then
			echo "skip: $name: provider '${FI_PROVIDER:-}' not available here"
			return
		fi
		echo "FAIL: $name exited with an error"
		fail=1
		return
	fi
	cat "$out/$name.err"
	# shellcheck disable=SC2086 # word splitting wanted
	check "$out/$name.csv" "$name" ${ALLOW_NOSUPP:-}
}

run rpma-poll "$b/rpma-bench" -p $((base_port)) -c poll
run rpma-wait "$b/rpma-bench" -p $((base_port + 1)) -c wait
# the server asleep in poll() on its CQ's descriptor
run rpma-fd "$b/rpma-bench" -p $((base_port + 7)) -c wait -C fd

if [[ -x $b/baseline-fabric ]]; then
	run fabric-poll "$b/baseline-fabric" -p $((base_port + 2)) -c poll
fi

# the FI_EP_RDM baseline over shm and tcp;ofi_rxm (a write with immediate
# needs FI_REMOTE_CQ_DATA, which an RDM provider may lack: allowed, noted)
if [[ -x $b/baseline-fabric-rdm ]]; then
	FI_PROVIDER=shm ALLOW_NOSUPP=write-imm \
		run rdm-shm "$b/baseline-fabric-rdm" -p $((base_port + 5)) -c poll
	FI_PROVIDER='tcp;ofi_rxm' ALLOW_NOSUPP=write-imm \
		run rdm-rxm "$b/baseline-fabric-rdm" -p $((base_port + 6)) -c poll
	# no file of an shm endpoint may stay behind
	if compgen -G "/dev/shm/127.0.0.1:$((base_port + 5))*" >/dev/null; then
		echo "FAIL: rdm-shm left /dev/shm/127.0.0.1:$((base_port + 5))"
		fail=1
	fi
fi

# scale: a short series of concurrent connections; every count must run, its
# probe connection answer, and the server give everything back afterwards
# (columns looked up by name in the CSV header)
if [[ -x $b/rpma-scale ]]; then
	echo "== rpma-scale both -c 1,2,4 -d 0.5"
	if ! timeout -k 5 120 "$b/rpma-scale" both -p $((base_port + 3)) -c 1,2,4 -d 0.5 -W 0.1 -k 1 \
		--csv "$out/scale.csv"; then
		echo "FAIL: rpma-scale exited with an error"
		fail=1
	fi
	for n in 1 2 4; do
		st=$(awk -F, -v n="$n" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$c["conns"] == n { print $c["release"], $c["probes"], $c["ops_per_s"] }' \
			"$out/scale.csv" 2>/dev/null || true)
		if [[ -z $st ]]; then
			echo "FAIL: rpma-scale N=$n: no result row"
			fail=1
		elif ! awk -v s="$st" 'BEGIN { split(s, f, " "); exit !(f[1] == "PASS" && f[2] == 1 && f[3] > 0) }'; then
			echo "FAIL: rpma-scale N=$n: release, probes, ops/s = $st"
			fail=1
		fi
	done
	# the series plots (bench/plot-scale.sh), where gnuplot is installed
	if command -v gnuplot >/dev/null; then
		if bash "$(dirname "$0")/plot-scale.sh" -o "$out/scale.svg" "$out/scale.csv" >/dev/null &&
			grep -q '<svg' "$out/scale.svg"; then
			echo "plot-scale: ok"
		else
			echo "FAIL: bench/plot-scale.sh made no plot of the series"
			fail=1
		fi
	fi
	# the release check must be able to fail: one connection left open
	echo "== rpma-scale both -c 2 --keep-one (must report FAIL)"
	if timeout -k 5 60 "$b/rpma-scale" both -p $((base_port + 4)) -c 2 -d 0.1 -k 0 -S 1 --keep-one \
		--csv "$out/scale-kept.csv" >"$out/scale-kept.out" 2>&1; then
		echo "FAIL: rpma-scale --keep-one passed its release check"
		fail=1
	elif ! grep -q ',FAIL$' "$out/scale-kept.csv"; then
		echo "FAIL: rpma-scale --keep-one did not report FAIL:"
		cat "$out/scale-kept.out"
		fail=1
	fi
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

for args in "bogus" "both -c 0" "both -w 0" "both -o read" "both -d -1"; do
	# shellcheck disable=SC2086 # word splitting wanted
	if [[ -x $b/rpma-scale ]] && timeout 10 "$b/rpma-scale" $args >/dev/null 2>&1; then
		echo "FAIL: 'rpma-scale $args' was accepted"
		fail=1
	fi
done

[[ $fail == 0 ]] && echo "smoke: all benchmark operations ran"
exit $fail
