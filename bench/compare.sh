#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compare.sh -- ours against the baselines, interleaved and repeated, with ratios and a plot
#
# Usage: bench/compare.sh [options]
#   -b DIR      build directory holding bench/rpma-bench and the baselines
#               (default: $top_builddir, else .)
#   -O DIR      results directory (default: ./bench-results-YYYYmmdd-HHMMSS)
#   -r N        runs of each program (default 3)
#   -s SIZES    sizes (default 8,64,4K,64K on the host, 8,4K,64K in the guest)
#   -o OPS      operations (default all)
#   -n N -N N   latency samples / bandwidth operations on the host (default 500 / 500)
#   -g N -G N   the same in the guest (default 50 / 100; TCG is slow)
#   -w W        bandwidth window (default 16)
#   -c MODE     client completion: poll or wait (default poll)
#   -C MODE     server completion (default: poll on the host, wait in the guest,
#               where busy-polling on both sides starves Soft-RoCE's kernel work);
#               wait: rpma_cq_wait(), fi_cq_sread(), ibv_get_cq_event(); fd:
#               rpma-bench's server sleeps in poll() on its CQ's descriptor
#               (the others: as wait)
#   -L LEVELS   raw libfabric variants: comma list of none, delivery, commit
#               (BENCH_FI_WRITE_LEVEL: extra completion level of its writes;
#               default none,commit -- rpma-bench's server region allows
#               persistent flushes, so over tcp the fabric provider posts its
#               writes with FI_COMMIT_COMPLETE; see README.md)
#   --host-only / --guest-only
#   -h          this help
#
# Host part: the fabric provider (RPMA_PROVIDER=fabric, FI_PROVIDER=tcp unless
# set) against raw libfabric on the same provider, over 127.0.0.1; for a
# provider with reliable datagrams only (shm, tcp;ofi_rxm) the raw side is
# baseline-fabric-rdm.
# Guest part (tests/rxe/run-in-guest.sh, Soft-RoCE on 192.0.2.1): the verbs
# provider against raw verbs and against upstream librpma (rpma-bench built
# from the same source against Debian's librpma0; built here with gcc when
# missing).  In every run the programs take turns (the order rotates), so
# drift of a busy machine hits all of them alike.  Output: the raw CSV rows,
# summary.txt (medians over the runs, the spread, and ours/baseline ratios),
# and latency-<env>.png (p50 latency against size, one panel per operation).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${top_builddir:-.}
out=
runs=3
sizes_host=8,64,4K,64K
sizes_guest=8,4K,64K
ops=all
n_host=500 N_host=500
n_guest=50 N_guest=100
window=16
compl=poll
scompl_host=poll scompl_guest=wait
do_host=1 do_guest=1
sizes_set=
levels=none,commit

usage() { sed -n '4,37p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
	case $1 in
	-b) build=$2; shift 2 ;;
	-O) out=$2; shift 2 ;;
	-r) runs=$2; shift 2 ;;
	-s) sizes_set=$2; shift 2 ;;
	-o) ops=$2; shift 2 ;;
	-n) n_host=$2; shift 2 ;;
	-N) N_host=$2; shift 2 ;;
	-g) n_guest=$2; shift 2 ;;
	-G) N_guest=$2; shift 2 ;;
	-w) window=$2; shift 2 ;;
	-c) compl=$2; shift 2 ;;
	-C) scompl_host=$2; scompl_guest=$2; shift 2 ;;
	-L) levels=$2; shift 2 ;;
	--host-only) do_guest=0; shift ;;
	--guest-only) do_host=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "compare.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -r wants a positive number" >&2; exit 2; }
if [[ -n $sizes_set ]]; then
	sizes_host=$sizes_set
	sizes_guest=$sizes_set
fi

build=$(cd "$build" && pwd)
bench=$build/bench
[[ -x $bench/rpma-bench ]] || { echo "compare.sh: $bench/rpma-bench not built (make in $build)" >&2; exit 2; }
out=${out:-$PWD/bench-results-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { printf 'compare: %s\n' "$*" >&2; }

# the machine, for the record
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "git: $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "runs: $runs  window: $window  completion: client=$compl"
} >"$out/machine.txt"

port=$((30000 + $$ % 20000))

# one_run CSV LABEL ENV... -- BIN ARGS...: one both-mode run appending to CSV
one_run() {
	local csv=$1 label=$2
	shift 2
	local envs=()
	while [[ $1 != -- ]]; do
		envs+=("$1")
		shift
	done
	shift
	port=$((port + 1))
	log "$label"
	if ! env "${envs[@]}" timeout -k 5 900 "$1" both -p "$port" -l "$label" --csv "$csv" -q \
		"${@:2}" >>"$csv.log" 2>&1; then
		log "FAILED: $label (see $csv.log)"
		return 1
	fi
}

# ---------------------------------------------------------------- host: fabric

host_failed=0
if [[ $do_host == 1 ]]; then
	if [[ ! -x $bench/baseline-fabric ]]; then
		log "no $bench/baseline-fabric (libfabric not built): skipping the host part"
	else
		fip=${FI_PROVIDER:-tcp}
		# a provider without message endpoints (shm, tcp;ofi_rxm): the
		# fabric provider uses reliable datagrams, so does the raw baseline
		raw=$bench/baseline-fabric
		if command -v fi_info >/dev/null && ! fi_info -p "$fip" -t FI_EP_MSG >/dev/null 2>&1; then
			raw=$bench/baseline-fabric-rdm
		fi
		common=(-s "$sizes_host" -o "$ops" -n "$n_host" -N "$N_host" -w "$window"
			-c "$compl" -C "$scompl_host")
		echo "host part: FI_PROVIDER=$fip ${common[*]}" >>"$out/machine.txt"
		IFS=, read -r -a lv <<<"$levels"
		variants=(ours)
		for l in "${lv[@]}"; do
			case $l in
			none | delivery | commit) variants+=("$l") ;;
			*) echo "compare.sh: -L: unknown level $l" >&2; exit 2 ;;
			esac
		done
		for ((r = 1; r <= runs; r++)); do
			# rotate the order from run to run
			order=()
			for ((i = 0; i < ${#variants[@]}; i++)); do
				order+=("${variants[(i + r - 1) % ${#variants[@]}]}")
			done
			for v in "${order[@]}"; do
				if [[ $v == ours ]]; then
					one_run "$out/fabric.csv" "ours/$r" RPMA_PROVIDER=fabric \
						FI_PROVIDER="$fip" -- "$bench/rpma-bench" "${common[@]}" ||
						host_failed=1
				else
					name=raw-fabric
					[[ $v != none ]] && name=raw-fabric-$v
					one_run "$out/fabric.csv" "$name/$r" FI_PROVIDER="$fip" \
						BENCH_FI_WRITE_LEVEL="$v" -- "$raw" \
						"${common[@]}" || host_failed=1
				fi
			done
		done
	fi
fi

# ---------------------------------------------------------------- guest: verbs

guest_failed=0
if [[ $do_guest == 1 ]]; then
	up=$bench/rpma-bench-upstream
	if [[ ! -x $up && -f /usr/include/librpma.h ]]; then
		up=$out/rpma-bench-upstream
		log "building $up against Debian's librpma"
		gcc -O2 -I/usr/include -o "$up" "$here/rpma-bench.c" "$here/bench.c" -lrpma -libverbs -lm ||
			up=
	fi
	[[ -x ${up:-} ]] || { log "no upstream build (install librpma-dev)"; up=; }
	cat >"$out/guest-run.sh" <<EOF
#!/bin/bash
# guest-run.sh -- generated by compare.sh, runs inside the Soft-RoCE guest
port=$port
fail=0
one() { # CSV LABEL ENV -- BIN ARGS
	local csv=\$1 label=\$2; shift 2
	local envs=(); while [[ \$1 != -- ]]; do envs+=("\$1"); shift; done; shift
	port=\$((port + 1))
	echo "guest: \$label"
	env "\${envs[@]}" timeout -k 5 900 "\$1" both -a 192.0.2.1 -p \$port -l "\$label" --csv "\$csv" -q \\
		"\${@:2}" >>"\$csv.log" 2>&1 || { echo "guest: FAILED \$label"; fail=1; }
}
common=(-s "$sizes_guest" -o "$ops" -n "$n_guest" -N "$N_guest" -w "$window" -c "$compl" -C "$scompl_guest")
for ((r = 1; r <= $runs; r++)); do
	variants=(ours raw up)
	case \$((r % 3)) in 2) variants=(raw up ours) ;; 0) variants=(up ours raw) ;; esac
	for v in "\${variants[@]}"; do
		case \$v in
		ours) one "$out/verbs.csv" "ours/\$r" RPMA_PROVIDER=verbs -- "$bench/rpma-bench" "\${common[@]}" ;;
		raw) [[ -x "$bench/baseline-verbs" ]] && one "$out/verbs.csv" "raw-verbs/\$r" X=1 -- "$bench/baseline-verbs" "\${common[@]}" ;;
		up) [[ -n "$up" ]] && one "$out/verbs.csv" "upstream/\$r" X=1 -- "$up" "\${common[@]}" ;;
		esac
	done
done
exit \$fail
EOF
	chmod +x "$out/guest-run.sh"
	echo "guest part: ${sizes_guest} -n $n_guest -N $N_guest -C $scompl_guest" >>"$out/machine.txt"
	log "booting the Soft-RoCE guest (tests/rxe/run-in-guest.sh)"
	set +e
	(cd "$out" && RXE_QUIET=1 RXE_SHARE_DIRS="$build" \
		"$src/tests/rxe/run-in-guest.sh" bash "$out/guest-run.sh") >"$out/guest.log" 2>&1
	st=$?
	set -e
	if [[ $st == 77 ]]; then
		log "guest part skipped: $(grep -m1 SKIPPED "$out/guest.log" || true)"
	elif [[ $st != 0 ]]; then
		log "guest part failed (status $st, see $out/guest.log)"
		guest_failed=1
	fi
fi

# ------------------------------------------------------------------- summary

# medians over the runs: env variant op mode bytes -> median p50, median MiB/s, spreads
summarize() { # CSV ENV
	awk -F, -v env="$2" '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		if (n % 2) return a[(n + 1) / 2]
		return (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function spread(list,   n, a, i, lo, hi, m) {
		n = split(list, a, " "); lo = hi = a[1]
		for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
		m = median(list)
		return m > 0 ? 100 * (hi - lo) / m : 0
	}
	$1 == "tool" || $16 != "ok" { next }
	{
		split($2, lb, "/"); v = lb[1]
		k = v SUBSEP $4 SUBSEP $5 SUBSEP $8
		val = ($5 == "lat") ? $10 : $15
		vals[k] = vals[k] " " val; keys[k] = 1
	}
	END {
		for (k in keys) {
			split(k, f, SUBSEP)
			printf "%s %s %s %s %s %.3f %.1f %d\n", env, f[1], f[2], f[3], f[4], median(vals[k]), spread(vals[k]), split(vals[k], x, " ")
		}
	}' "$1"
}

: >"$out/medians.txt"
[[ -s $out/fabric.csv ]] && summarize "$out/fabric.csv" fabric >>"$out/medians.txt"
[[ -s $out/verbs.csv ]] && summarize "$out/verbs.csv" verbs >>"$out/medians.txt"
sort -k1,1 -k3,3 -k4,4 -k5,5n -k2,2 "$out/medians.txt" -o "$out/medians.txt"

# ratio table: ours against each baseline of the same environment
ratios() { # ENV BASELINE
	awk -v env="$1" -v base="$2" '
	$1 == env { k = $3 " " $4 " " $5; m[$2, k] = $6; s[$2, k] = $7; ks[k] = 1 }
	END {
		printf "\n== %s: ours / %s (median of runs; spread = (max-min)/median)\n", env, base
		printf "%-14s %-4s %8s %12s %12s %8s %14s\n", "op", "mode", "bytes", "ours", base, "ratio", "spread o/b"
		for (k in ks) {
			if (!(("ours", k) in m) || !((base, k) in m)) continue
			split(k, f, " ")
			unit = f[2] == "lat" ? "us" : "MiB/s"
			r = m[base, k] > 0 ? m["ours", k] / m[base, k] : 0
			line[k] = sprintf("%-14s %-4s %8s %9.2f %-2s %9.2f %-2s %8.3f %6.0f%%/%.0f%%", f[1], f[2], f[3], m["ours", k], unit == "us" ? "us" : "M", m[base, k], unit == "us" ? "us" : "M", r, s["ours", k], s[base, k])
		}
		n = 0; for (k in line) idx[++n] = k
		for (i = 2; i <= n; i++) { t = idx[i]; for (j = i - 1; j >= 1 && idx[j] > t; j--) idx[j + 1] = idx[j]; idx[j + 1] = t }
		for (i = 1; i <= n; i++) print line[idx[i]]
		print "(lat: p50 latency, ratio < 1 means ours is faster; bw: MiB/s, ratio > 1 means ours moves more)"
	}' "$out/medians.txt"
}

{
	cat "$out/machine.txt"
	for b in raw-fabric raw-fabric-delivery raw-fabric-commit; do
		if grep -q "^fabric $b " "$out/medians.txt"; then ratios fabric "$b"; fi
	done
	if grep -q '^verbs ' "$out/medians.txt"; then
		ratios verbs raw-verbs
		ratios verbs upstream
	fi
} | tee "$out/summary.txt"

# ---------------------------------------------------------------------- plots

if command -v gnuplot >/dev/null; then
	for env in fabric verbs; do
		grep -q "^$env " "$out/medians.txt" || continue
		pvariants=$(awk -v e="$env" '$1 == e { print $2 }' "$out/medians.txt" | sort -u)
		opsl=$(awk -v e="$env" '$1 == e && $4 == "lat" { print $3 }' "$out/medians.txt" | sort -u)
		gp=$out/latency-$env.gp
		{
			echo "set terminal pngcairo size 1600,900 noenhanced"
			echo "set output 'latency-$env.png'"
			echo "set multiplot layout 2,4 title 'p50 latency vs size, $env environment (median of $runs runs)'"
			echo "set logscale xy; set format x '%.0s%c'; set xlabel 'bytes'; set ylabel 'us'; set grid; set key top left"
			for op in $opsl; do
				plots=()
				for v in $pvariants; do
					f=$out/lat-$env-$op-$v.dat
					awk -v e="$env" -v o="$op" -v v="$v" '$1 == e && $3 == o && $4 == "lat" && $2 == v { print $5, $6 }' \
						"$out/medians.txt" | sort -n >"$f"
					[[ -s $f ]] && plots+=("'${f##*/}' using 1:2 with linespoints title '$v'")
				done
				[[ ${#plots[@]} -gt 0 ]] || continue
				echo "set title '$op'"
				(IFS=,; echo "plot ${plots[*]}")
			done
			echo "unset multiplot"
		} >"$gp"
		# names relative to the results directory (it may be moved or committed)
		if (cd "$out" && gnuplot "${gp##*/}") 2>>"$out/gnuplot.log"; then
			log "plot: $out/latency-$env.png"
		else
			log "gnuplot failed (see $out/gnuplot.log)"
		fi
	done
else
	log "gnuplot not found (install gnuplot-nox): no plot"
fi

# the tables name the library the tools loaded; without this tree's place on
# the machine where it ran (bench/results is committed)
root=$(cd "$here/.." && pwd -P)
for f in "$out"/*.csv "$out"/*.txt; do
	[[ -f $f ]] && sed -i "s#$root/##g" "$f"
done

log "results in $out"
[[ $host_failed == 0 && $guest_failed == 0 ]]
