#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# callgrind-fabric.sh -- user-space instructions and system calls per operation of the fabric
# provider against raw libfabric, on the host over libfabric (tcp by default) on 127.0.0.1
#
# Usage: bench/callgrind-fabric.sh [options]
#   -b DIR     build directory (default: $top_builddir, else .)
#   -o OPS     operations (default write,read,write-flush-v)
#   -s SIZES   transfer sizes, comma-separated (default 64,4096)
#   -n N       operations of the short run; the long run does 3 N (default 1000)
#   -m MODE    lat (default): one operation at a time; bw: the benchmarks'
#              bandwidth loop (windows of 16, one completion asked per window)
#   -r ORDERS  blocks (the client blocks before its completion exists) and/or
#              ready (the completion is there at the first poll); default blocks,ready
#   -i LIST    implementations (default ours,raw,raw-commit)
#   -f N       functions of the library to list per row (default 10)
#   -O DIR     where the callgrind outputs and the table go (default: a new
#              ./callgrind-fabric-YYYYmmdd-HHMMSS)
#   -p PROV    the libfabric provider (FI_PROVIDER; default tcp); 'tcp;ofi_rxm' and
#              shm are reliable datagrams: the raw side is then
#              bench/baseline-fabric-rdm and raw-commit runs at
#              FI_DELIVERY_COMPLETE, the level of ours there
#   -h         this help
#
# The method is bench/callgrind.sh's: the client runs under valgrind
# --tool=callgrind (the server outside it), once with N and once with 3 N
# operations (-m MODE -c wait) after the same warm-up; the difference of
# the two totals over 2 N is one operation in the client's user space (every
# thread of the process: the benchmark, the library, libfabric, libc), each
# total taken without the client's connection setup and teardown (run_ir in
# callgrind-common.sh: over shm that setup varied by 1.7 million instructions
# between runs, 840 per operation at N = 1000).
#   ours        bench/rpma-bench, RPMA_PROVIDER=fabric, FI_PROVIDER=tcp
#   raw         bench/baseline-fabric (writes at libfabric's default completion level)
#   raw-commit  the same with BENCH_FI_WRITE_LEVEL=commit (FI_COMMIT_COMPLETE,
#               the level of ours toward a region of persistent flush)
# Each server is of the same implementation as its client.  Both processes run
# on CPU 1 (taskset), in one of two orders:
#   blocks  the server at SCHED_IDLE (chrt -i 0): it runs only when the
#           client sleeps, so the client always waits for its completion
#           (the natural order: a post takes ~1 us, a loopback round trip ~20)
#   ready   the client at SCHED_IDLE: the server and the transport run first,
#           so the completion is there when the client looks
# Without pinning, counts swing 2x between identical runs.
#
# Columns: instructions per operation of ours, raw and raw-commit; ours /
# raw-commit; the library's own share (the self cost of librpma.so and
# librpma-fabric.so, and of code inlined into their functions); system calls
# per operation of ours and raw-commit, counted by callgrind
# (--collect-systime=yes, event sysCount, all threads).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build=${top_builddir:-.}
ops=write,read,write-flush-v
sizes=64,4096
n=1000
orders=blocks,ready
impls=ours,raw,raw-commit
nfun=10
out=
prov=tcp
mode=lat

usage() { sed -n '6,23p' "$0" | sed 's/^# \{0,1\}//'; }

while getopts "b:o:s:n:m:r:i:f:O:p:h" opt; do
	case $opt in
	b) build=$OPTARG ;;
	o) ops=$OPTARG ;;
	s) sizes=$OPTARG ;;
	n) n=$OPTARG ;;
	m) mode=$OPTARG ;;
	r) orders=$OPTARG ;;
	i) impls=$OPTARG ;;
	f) nfun=$OPTARG ;;
	O) out=$OPTARG ;;
	p) prov=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

log() { echo "callgrind-fabric.sh: $*" >&2; }

# run_ir, lib_self, diff_per_op, sum_per_op, top_per_op
# shellcheck source=bench/callgrind-common.sh
. "$here/callgrind-common.sh"

command -v valgrind >/dev/null || { log "SKIPPED: valgrind not installed"; exit 77; }
if ! command -v chrt >/dev/null || ! command -v taskset >/dev/null; then
	log "SKIPPED: chrt and taskset (util-linux) needed"
	exit 77
fi
build=$(cd "$build" && pwd)
ours=$build/bench/.libs/rpma-bench
[[ -x $ours ]] || ours=$build/bench/rpma-bench
raw=$build/bench/baseline-fabric
level=commit
if [[ $prov == *ofi_rxm* || $prov == shm ]]; then
	raw=$build/bench/baseline-fabric-rdm
	level=delivery
fi
case $mode in
lat) count=-n ;;
bw) count=-N ;;
*) usage >&2; exit 2 ;;
esac
[[ -x $ours && -x $raw ]] || { log "no $build/bench/rpma-bench or baseline-fabric: build first"; exit 1; }
[[ -n $out ]] || out=$PWD/callgrind-fabric-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)

ip=127.0.0.1
port=$((7900 + RANDOM % 500))
ours_env=(RPMA_PROVIDER=fabric "FI_PROVIDER=$prov"
	"LD_LIBRARY_PATH=$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

# impl_env IMPL -- the binary and the environment of an implementation (BIN ENV...)
impl_env() {
	case $1 in
	ours) echo "$ours" "${ours_env[@]}" ;;
	raw) echo "$raw" "FI_PROVIDER=$prov" BENCH_FI_WRITE_LEVEL=none ;;
	raw-commit) echo "$raw" "FI_PROVIDER=$prov" BENCH_FI_WRITE_LEVEL=$level ;;
	*) return 1 ;;
	esac
}

# listening PORT -- wait up to 20 s for a TCP listener on PORT, or (shm) the
# file of an endpoint named ADDR:PORT (a server at SCHED_IDLE may start late)
listening() {
	local _
	for _ in $(seq 200); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		if [[ -e /dev/shm/$ip:$1 ]]; then
			sleep 0.5 # shm marks the region ready last
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# stop PID -- end a server that is still there
stop() {
	kill "$1" 2>/dev/null || true
	sleep 0.5
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# one_count IMPL ORDER OP SIZE N -- a pinned server and a pinned callgrind client; echo the output
one_count() {
	local impl=$1 order=$2 op=$3 sz=$4 iters=$5 _ re
	read -r -a re <<<"$(impl_env "$impl")"
	local f=$out/cg.$impl.$order.$op.$sz.$iters
	local sprio=() cprio=()
	if [[ $order == blocks ]]; then sprio=(chrt -i 0); else cprio=(chrt -i 0); fi
	for _ in 1 2 3; do
		port=$((port + 1))
		rm -f "/dev/shm/$ip:$port" 2>/dev/null # left by a server that was killed
		env "${re[@]:1}" "${sprio[@]}" taskset -c 1 "${re[0]}" server -a "$ip" -p "$port" -q \
			-t 300 -C wait >"$f.server.log" 2>&1 &
		local spid=$!
		listening "$port" || { stop "$spid"; continue; }
		if env "${re[@]:1}" "${cprio[@]}" taskset -c 1 timeout 600 valgrind --tool=callgrind \
			--collect-systime=yes --callgrind-out-file="$f" "${re[0]}" client -a "$ip" \
			-p "$port" -m "$mode" -o "$op" -s "$sz" "$count" "$iters" -W 10 -c wait -q \
			>"$f.client.log" 2>&1 && grep -q '^summary:' "$f"; then
			wait "$spid" || true
			echo "$f"
			return 0
		fi
		stop "$spid"
		sleep 1
	done
	echo "no output for $impl $order $op $sz $iters (see $f.client.log)" >&2
	return 1
}

# measure IMPL ORDER OP SIZE -- "instructions syscalls library" per operation (library: ours only)
measure() {
	local a b lib=-
	a=$(one_count "$1" "$2" "$3" "$4" "$n") || return 1
	b=$(one_count "$1" "$2" "$3" "$4" $((3 * n))) || return 1
	if [[ $1 == ours ]]; then
		lib_self "$a" 'librpma(-fabric)?\.so' >"$a.lib"
		lib_self "$b" 'librpma(-fabric)?\.so' >"$b.lib"
		lib=$(sum_per_op "$a.lib" "$b.lib")
		echo "$2 $3 $4: $(top_per_op "$a.lib" "$b.lib" "$nfun")" >>"$out/functions.txt"
	fi
	echo "$(diff_per_op "$(run_ir "$a")" "$(run_ir "$b")")" \
		"$(diff_per_op "$(run_ir "$a" sysCount)" "$(run_ir "$b" sysCount)" 1)" "$lib"
}

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')" \
		"$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo '(with local changes)')"
	echo "host: $(nproc) CPUs, $(uname -r), $(valgrind --version)," \
		"libfabric $(pkg-config --modversion libfabric 2>/dev/null || echo '?')"
	echo "ops: $ops, sizes $sizes, mode $mode, runs of $n and $((3 * n)) operations, client completion wait," \
		"FI_PROVIDER=$prov on $ip, both processes on CPU 1"
	echo "ours loads: $(env "${ours_env[@]}" ldd "$ours" | awk '/librpma/ { print $3 }')"
} >"$out/machine.txt"
{
	echo "| order | op | size | ours | raw | raw-$level | ours / raw-$level | library only (ours) | syscalls/op: ours / raw-$level |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$out/table.md"
: >"$out/functions.txt"
IFS=, read -r -a oplist <<<"$ops"
IFS=, read -r -a sizelist <<<"$sizes"
IFS=, read -r -a orderlist <<<"$orders"
for order in "${orderlist[@]}"; do
	for op in "${oplist[@]}"; do
		for sz in "${sizelist[@]}"; do
			log "$order $op $sz"
			o=('?' '?' '?') r=('?' '?' '?') rc=('?' '?' '?')
			[[ ,$impls, == *,ours,* ]] && read -r -a o <<<"$(measure ours "$order" "$op" "$sz" || echo '? ? ?')"
			[[ ,$impls, == *,raw,* ]] && read -r -a r <<<"$(measure raw "$order" "$op" "$sz" || echo '? ? ?')"
			[[ ,$impls, == *,raw-commit,* ]] &&
				read -r -a rc <<<"$(measure raw-commit "$order" "$op" "$sz" || echo '? ? ?')"
			ratio='?'
			[[ ${o[0]} != '?' && ${rc[0]} != '?' && ${rc[0]} -gt 0 ]] &&
				ratio=$(awk -v a="${o[0]}" -v b="${rc[0]}" 'BEGIN { printf "%.2f", a / b }')
			echo "| $order | $op | $sz | ${o[0]} | ${r[0]} | ${rc[0]} | $ratio | ${o[2]} | ${o[1]} / ${rc[1]} |" \
				>>"$out/table.md"
		done
	done
done
cat "$out/machine.txt"
echo
cat "$out/table.md"
echo
echo "librpma.so + librpma-fabric.so, self instructions per operation (ours):"
cat "$out/functions.txt"
