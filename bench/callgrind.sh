#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# callgrind.sh -- user-space instructions per operation: ours against upstream librpma and raw verbs
#
# Usage: bench/callgrind.sh [options]
#   -b DIR     build directory (default: $top_builddir, else .)
#   -o OPS     operations (default write,read,write-flush-v,atomic-flush)
#   -s SIZE    transfer size (default 8)
#   -n N       operations of the short run; the long run does 3 N (default 1000)
#   -c MODE    client completion: wait (default: no empty polls) or poll
#   -i LIST    implementations (default ours,upstream,raw)
#   -f N       functions of ours to list per operation (default 12)
#   -O DIR     where the callgrind outputs and the table go (default: a new
#              ./callgrind-YYYYmmdd-HHMMSS)
#   -h         this help
#
# Timing under QEMU/TCG (the Soft-RoCE guest) swings by 2-3x from run to
# run, so the verbs comparison counts instructions instead: the client runs
# under valgrind --tool=callgrind (the server outside it), once with N and
# once with 3 N latency samples after the same warm-up; the difference of the
# two totals over 2 N is what one operation costs in the client's user space
# (benchmark driver, library, libibverbs and its rxe driver; not the kernel),
# each total without the client's connection setup and teardown (run_ir);
# the last two columns count the code of librpma.so alone (ours, upstream).
# The same is done for rpma-bench built against Debian's librpma0 (upstream)
# and for bench/baseline-verbs (raw verbs).  For ours the per-function
# self cost difference of the library (librpma.so) is listed as well.
#
# Run on the host it boots the guest (tests/rxe/run-in-guest.sh) and runs
# itself there; inside the guest (RXE_GUEST=1) it measures.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${top_builddir:-.}
ops=write,read,write-flush-v,atomic-flush
size=8
n=1000
compl="wait"
nfun=12
impls=ours,upstream,raw
out=

usage() { sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//'; }

while getopts "b:o:s:n:c:i:f:O:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	o) ops=$OPTARG ;;
	s) size=$OPTARG ;;
	n) n=$OPTARG ;;
	c) compl=$OPTARG ;;
	i) impls=$OPTARG ;;
	f) nfun=$OPTARG ;;
	O) out=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

build=$(cd "$build" && pwd)
[[ -n $out ]] || out=$PWD/callgrind-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

log() { echo "callgrind.sh: $*" >&2; }

# ------------------------------------------------------------------ host side

if [[ ${RXE_GUEST:-} != 1 ]]; then
	command -v valgrind >/dev/null || { log "SKIPPED: valgrind not installed"; exit 77; }
	[[ -x $build/bench/.libs/rpma-bench || -x $build/bench/rpma-bench ]] ||
		{ log "no $build/bench/rpma-bench: build first"; exit 1; }
	up=$out/rpma-bench-upstream
	if [[ -f /usr/include/librpma.h ]]; then
		# the same benchmark source, compiled against Debian's librpma0
		gcc -O2 -I/usr/include -o "$up" "$here/rpma-bench.c" "$here/bench.c" -lrpma -libverbs -lm
	else
		log "no /usr/include/librpma.h (librpma-dev): upstream left out"
	fi
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')" \
			"$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo '(with local changes)')"
		echo "host: $(nproc) CPUs, $(uname -r), $(valgrind --version)"
		echo "ops: $ops, size $size, runs of $n and $((3 * n)) samples, client completion $compl"
	} >"$out/machine.txt"
	log "booting the Soft-RoCE guest"
	st=0
	(cd "$out" && RXE_QUIET=1 RXE_SHARE_DIRS="$build:$src" \
		"$src/tests/rxe/run-in-guest.sh" bash "$here/callgrind.sh" -b "$build" -o "$ops" \
		-s "$size" -n "$n" -c "$compl" -i "$impls" -f "$nfun" -O "$out") || st=$?
	[[ $st == 0 ]] || { log "guest run failed (status $st)"; exit "$st"; }
	cat "$out/machine.txt" "$out/table.md"
	exit 0
fi

# ----------------------------------------------------------------- guest side

ip=${RPMA_TESTING_IP:-192.0.2.1}
port=7600
ours=$build/bench/.libs/rpma-bench
[[ -x $ours ]] || ours=$build/bench/rpma-bench
# ours only: the upstream build would load our librpma.so.0 too (it is a drop-in)
ours_env=(RPMA_PROVIDER=verbs "LD_LIBRARY_PATH=$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

# run_ir, lib_self
# shellcheck source=bench/callgrind-common.sh
. "$here/callgrind-common.sh"

# one_count IMPL OP N BIN [ENV...] -- run a server and a callgrind client; echo the output file
one_count() {
	local impl=$1 op=$2 iters=$3 bin=$4
	shift 4
	port=$((port + 1))
	local f=$out/cg.$impl.$op.$iters
	env "$@" "$bin" server -a "$ip" -p "$port" -q -t 600 -C wait >"$f.server.log" 2>&1 &
	local spid=$!
	sleep 1
	local _
	for _ in 1 2 3; do
		if env "$@" valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" client \
			-a "$ip" -p "$port" -m lat -o "$op" -s "$size" -n "$iters" -W 10 -c "$compl" -q \
			>"$f.client.log" 2>&1; then
			break
		fi
		sleep 1
	done
	wait "$spid" || true
	[[ -s $f ]] || { echo "no output for $impl $op $iters (see $f.client.log)" >&2; return 1; }
	echo "$f"
}

# per_op IMPL OP BIN [ENV...] -- instructions per operation
per_op() {
	local impl=$1 op=$2 bin=$3
	shift 3
	local a b
	a=$(one_count "$impl" "$op" "$n" "$bin" "$@") || return 1
	b=$(one_count "$impl" "$op" $((3 * n)) "$bin" "$@") || return 1
	awk -v a="$(run_ir "$a")" -v b="$(run_ir "$b")" -v n="$n" \
		'BEGIN { printf "%.0f\n", (b - a) / (2 * n) }'
}

# functions OP -- the library's per-function self instructions per operation (ours)
functions() {
	local op=$1
	awk -v n="$n" 'FNR == NR { A[$1] = $2; next } { B[$1] = $2 }
	END {
		for (f in B) { d = (B[f] - A[f]) / (2 * n); if (d >= 0.5) printf "%.0f %s\n", d, f }
	}' <(lib_self "$out/cg.ours.$op.$n") <(lib_self "$out/cg.ours.$op.$((3 * n))") | sort -rn |
		head -n "$nfun" | awk '{ t += $1; printf "%s %s; ", $2, $1 } END { printf "(listed: %d)\n", t }'
}

# lib_per_op IMPL OP -- the library's own instructions per operation (all its functions)
lib_per_op() {
	local a=$out/cg.$1.$2.$n b=$out/cg.$1.$2.$((3 * n))
	[[ -s $a && -s $b ]] || return 1
	awk -v n="$n" 'FNR == NR { A += $2; next } { B += $2 } END { printf "%.0f\n", (B - A) / (2 * n) }' \
		<(lib_self "$a") <(lib_self "$b")
}

IFS=, read -r -a oplist <<<"$ops"
# which librpma each build loads (the upstream one must not pick up ours)
{
	echo "ours loads: $(env "${ours_env[@]}" ldd "$ours" | awk '/librpma/ { print $3 }')"
	[[ -x $out/rpma-bench-upstream ]] &&
		echo "upstream loads: $(ldd "$out/rpma-bench-upstream" | awk '/librpma/ { print $3 }')"
} >>"$out/machine.txt"
{
	echo "| $size B, instructions per operation | ours | upstream librpma | raw verbs | ours - upstream | ours - raw | library only: ours | upstream |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$out/table.md"
: >"$out/functions.txt"
for op in "${oplist[@]}"; do
	echo "guest: $op" >&2
	o="" u="" r=""
	[[ ,$impls, == *,ours,* ]] && { o=$(per_op ours "$op" "$ours" "${ours_env[@]}") || o=; }
	[[ ,$impls, == *,upstream,* && -x $out/rpma-bench-upstream ]] &&
		{ u=$(per_op upstream "$op" "$out/rpma-bench-upstream" X=1) || u=; }
	[[ ,$impls, == *,raw,* && -x $build/bench/baseline-verbs ]] &&
		{ r=$(per_op raw "$op" "$build/bench/baseline-verbs" X=1) || r=; }
	du=""; dr=""
	[[ -n $o && -n $u ]] && du=$(printf '%+d' $((o - u)))
	[[ -n $o && -n $r ]] && dr=$(printf '%+d' $((o - r)))
	lo=$(lib_per_op ours "$op") || lo=
	lu=$(lib_per_op upstream "$op") || lu=
	echo "| $op | ${o:-?} | ${u:-?} | ${r:-?} | ${du:-?} | ${dr:-?} | ${lo:-?} | ${lu:-?} |" >>"$out/table.md"
	[[ -n $o ]] && echo "$op: $(functions "$op")" >>"$out/functions.txt"
done
cat "$out/table.md"
echo
echo "librpma.so, self instructions per operation (ours):"
cat "$out/functions.txt"
