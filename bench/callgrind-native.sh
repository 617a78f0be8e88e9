#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# callgrind-native.sh -- instructions per 8-byte write + flush (and atomic write + flush) on the
# native RDMA FLUSH / ATOMIC WRITE path against the APM path, ours against upstream librpma 1.3
# (and 1.2), in the trixie Soft-RoCE guest
#
# Usage: bench/callgrind-native.sh [options]
#   -T DIR     the trixie build directory (tests/rxe/trixie-build.sh builds the
#              tree there; default: $top_builddir/trixie, else build/trixie)
#   -R         reuse the build in DIR as it is (default: build it again)
#   -o OPS     operations (default write-flush-v,atomic-flush)
#   -n N       operations of the short run; the long run does 3 N (default 1000)
#   -i LIST    client implementations (default ours-apm,ours-native,1.3,1.2):
#                ours-apm     our library, RPMA_VERBS_NATIVE_FLUSH=0 (8-byte
#                             RDMA READ after the write, fenced inline write)
#                ours-native  our library, RPMA_VERBS_NATIVE_FLUSH=1 (IBV_WR_FLUSH,
#                             IBV_WR_ATOMIC_WRITE; forced, see below)
#                1.3          rpma-bench built against the trixie root's librpma
#                             1.3.0 (native whenever the queue pair can)
#                1.2          the same binary over bookworm's librpma 1.2.0 .so
#                             (APM only)
#   -f N       functions of the library to list per row (default 8)
#   -h         this help
#
# The method is bench/callgrind.sh's: the server (our library, outside
# valgrind, blocking) and a client under valgrind --tool=callgrind, once with
# N and once with 3 N latency samples after the same warm-up; (long - short)
# / 2 N is one operation in the client's user space.  Client completion is
# "wait" (rpma_cq_get_wc, and rpma_cq_wait when that found nothing), so how
# often the completion was not there yet at the first poll changes the count:
# the column "waits/op" (calls of ibv_get_cq_event per operation) shows it.
# The server runs on CPU 0 and the client on CPU 1 (taskset), the same way
# for every row.
#
# The server's region is DRAM, registered for both flush types (as
# rpma-bench's server does), so rxe grants it FLUSH_GLOBAL only and our
# client does not see native flush announced: ours-native forces the native
# path with RPMA_VERBS_NATIVE_FLUSH=1 (the instructions are those of an
# announced region: the same test in rpma_flush() decides).  Visibility
# flushes only (a native persistent flush needs a device-DAX region).
#
# Output: DIR/callgrind-native-DATE/ (table.md, functions.txt, machine.txt and
# the callgrind files).  Run on the host; it boots the trixie guest
# (tests/rxe/run-in-guest.sh, RXE_STACK=trixie) and runs itself there.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
tdir=
reuse=0
ops=write-flush-v,atomic-flush
n=1000
impls="ours-apm,ours-native,1.3,1.2"
nfun=8
out=

usage() { sed -n '7,22p' "$0" | sed 's/^# \{0,1\}//'; }

while getopts "T:Ro:n:i:f:O:h" opt; do
	case $opt in
	T) tdir=$OPTARG ;;
	R) reuse=1 ;;
	o) ops=$OPTARG ;;
	n) n=$OPTARG ;;
	i) impls=$OPTARG ;;
	f) nfun=$OPTARG ;;
	O) out=$OPTARG ;; # in the guest: the output directory
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

log() { echo "callgrind-native.sh: $*" >&2; }

# ------------------------------------------------------------------ host side

if [[ ${RXE_GUEST:-} != 1 ]]; then
	if [[ -z $tdir ]]; then
		tdir=${top_builddir:-$src/build}/trixie
	fi
	mkdir -p "$tdir" && tdir=$(cd "$tdir" && pwd -P)
	if [[ $reuse == 0 || ! -x $tdir/build/bench/.libs/rpma-bench ]]; then
		log "building the tree in the trixie root ($tdir)"
		bash "$src/tests/rxe/trixie-build.sh" "$tdir" || exit 1
	fi
	[[ -x $tdir/build/bench/.libs/rpma-bench ]] || { log "no $tdir/build/bench/.libs/rpma-bench"; exit 1; }
	rel=callgrind-native-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$tdir/$rel"
	# rpma-bench against the root's librpma 1.3 (librpma-dev of trixie-guest-packages.txt)
	# shellcheck disable=SC2016
	bash "$src/tests/trixie/enter.sh" "$tdir" sh -c '
		gcc -O2 -o /work/rpma/'"$rel"'/rpma-bench-upstream /work/rpma/src/bench/rpma-bench.c \
			/work/rpma/src/bench/bench.c -lrpma -libverbs -lm &&
		echo "upstream: librpma $(dpkg-query -W -f "\${Version}" librpma0), rdma-core $(pkg-config --modversion libibverbs)"
	' >"$tdir/$rel/upstream-build.txt" 2>&1 || {
		cat "$tdir/$rel/upstream-build.txt"
		log "rpma-bench against librpma 1.3 did not build in the trixie root"
		exit 1
	}
	# upstream 1.2: bookworm's library (the host's librpma0), as in the interop matrix
	if [[ -e /usr/lib/x86_64-linux-gnu/librpma.so.0 ]]; then
		mkdir -p "$tdir/$rel/lib12" && cp -L /usr/lib/x86_64-linux-gnu/librpma.so.0 "$tdir/$rel/lib12/"
	fi
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')" \
			"$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo '(with local changes)')"
		echo "host: $(nproc) CPUs, $(uname -r)"
		cat "$tdir/$rel/upstream-build.txt"
		echo "ops: $ops, 8 B, runs of $n and $((3 * n)) samples, client completion wait"
	} >"$tdir/$rel/machine.txt"
	# this very script runs in the guest (DIR/src may be an older copy with -R)
	cp "$0" "$tdir/$rel/callgrind-native.sh"
	log "booting the trixie Soft-RoCE guest"
	st=0
	(cd "$tdir" && RXE_QUIET=1 RXE_STACK=trixie RXE_GUEST_CWD=/work/rpma \
		bash "$src/tests/rxe/run-in-guest.sh" bash "/work/rpma/$rel/callgrind-native.sh" \
		-T /work/rpma -o "$ops" -n "$n" -i "$impls" -f "$nfun" -O "/work/rpma/$rel") || st=$?
	[[ $st == 0 ]] || { log "guest run failed (status $st)"; exit "$st"; }
	echo "output: $tdir/$rel"
	cat "$tdir/$rel/machine.txt" "$tdir/$rel/table.md" "$tdir/$rel/functions.txt"
	exit 0
fi

# ----------------------------------------------------------------- guest side

b=$tdir/build
ip=${RPMA_TESTING_IP:-192.0.2.1}
port=7700
ours=$b/bench/.libs/rpma-bench
up=$out/rpma-bench-upstream
ours_lib=(RPMA_PROVIDER=verbs "LD_LIBRARY_PATH=$b/.libs")

# total_ir FILE -- the "summary:" (total Ir) of a callgrind output
total_ir() { awk '/^summary:/ { print $2 }' "$1"; }

# calls_to FILE NAME -- how many calls of the function NAME the callgrind output counts
calls_to() {
	awk -v want="$2" '
		# name compression: "(id) name" the first time, "(id)" after
		/^c?fn=/ {
			s = $0; sub(/^c?fn=/, "", s)
			if (match(s, /^\([0-9]+\) /)) { id = substr(s, 1, RLENGTH - 1); name[id] = substr(s, RLENGTH + 1) }
			else if (s ~ /^\([0-9]+\)$/) id = s
			else { id = s; name[id] = s }
			if ($0 ~ /^cfn=/) cur = name[id]
			next
		}
		/^calls=/ { split($0, a, /[= ]/); if (cur == want) c += a[2] }
		END { print c + 0 }' "$1"
}

# one_count ROW OP N BIN [ENV...] -- a pinned server and a pinned callgrind client; echo the output
one_count() {
	local row=$1 op=$2 iters=$3 bin=$4
	shift 4
	port=$((port + 1))
	local f=$out/cg.$row.$op.$iters
	env "${ours_lib[@]}" taskset -c 0 "$ours" server -a "$ip" -p "$port" -q -t 600 -C wait \
		>"$f.server.log" 2>&1 &
	local spid=$! _
	sleep 1
	for _ in 1 2 3; do
		if env "$@" taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" client \
			-a "$ip" -p "$port" -m lat -o "$op" -s 8 -n "$iters" -W 10 -c wait -q \
			>"$f.client.log" 2>&1; then
			break
		fi
		sleep 1
	done
	wait "$spid" || true
	if [[ ! -s $f ]] || ! grep -q '^summary:' "$f"; then
		echo "no output for $row $op $iters (see $f.client.log)" >&2
		return 1
	fi
	echo "$f"
}

# lib_self FILE -- "function Ir" of the library's code (as bench/callgrind.sh)
lib_self() {
	callgrind_annotate --threshold=100 --auto=no "$1" 2>/dev/null |
		awk '$1 ~ /^[0-9,]+$/ {
			n = $1; gsub(/,/, "", n); f = $0
			obj = (f ~ / \[[^]]*\]$/)
			sub(/ \[[^]]*\]$/, "", f); sub(/^.*:/, "", f)
			if ($0 ~ /librpma[.-]/ || (!obj && f ~ /^(rpma|vrb)_/))
				s[f] += n
		}
		END { for (f in s) print f, s[f] }'
}

# diff_per_op A B -- (B - A) / 2 N
diff_per_op() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%.0f\n", (b - a) / (2 * n) }'; }
diff_per_op2() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%.2f\n", (b - a) / (2 * n) }'; }

# row_env ROW -- the client's binary and environment of a row (BIN ENV...)
row_env() {
	case $1 in
	ours-apm) echo "$ours" "${ours_lib[@]}" RPMA_VERBS_NATIVE_FLUSH=0 ;;
	ours-native) echo "$ours" "${ours_lib[@]}" RPMA_VERBS_NATIVE_FLUSH=1 ;;
	1.3) echo "$up" LD_LIBRARY_PATH= ;;
	1.2) echo "$up" "LD_LIBRARY_PATH=$out/lib12" ;;
	*) return 1 ;;
	esac
}

IFS=, read -r -a oplist <<<"$ops"
IFS=, read -r -a rows <<<"$impls"
{
	echo "guest: kernel $(uname -r), $(valgrind --version), $(nproc) vCPUs"
	for r in "${rows[@]}"; do
		read -r -a re <<<"$(row_env "$r")" || continue
		echo "$r loads: $(env "${re[@]:1}" ldd "${re[0]}" | awk '/librpma/ { print $3 }')"
	done
} >>"$out/machine.txt"
{
	echo "| 8 B, per operation | client | instructions | library only | waits/op |"
	echo "|---|---|---|---|---|"
} >"$out/table.md"
: >"$out/functions.txt"
for op in "${oplist[@]}"; do
	for r in "${rows[@]}"; do
		read -r -a re <<<"$(row_env "$r")" || continue
		[[ $r == 1.2 && ! -e $out/lib12/librpma.so.0 ]] && continue
		echo "guest: $op $r" >&2
		a=$(one_count "$r" "$op" "$n" "${re[0]}" "${re[@]:1}") || continue
		c=$(one_count "$r" "$op" $((3 * n)) "${re[0]}" "${re[@]:1}") || continue
		tot=$(diff_per_op "$(total_ir "$a")" "$(total_ir "$c")")
		waits=$(diff_per_op2 "$(calls_to "$a" ibv_get_cq_event)" "$(calls_to "$c" ibv_get_cq_event)")
		lib_self "$a" >"$a.lib"
		lib_self "$c" >"$c.lib"
		lib=$(awk -v n="$n" 'FNR == NR { A += $2; next } { B += $2 } END { printf "%.0f\n", (B - A) / (2 * n) }' \
			"$a.lib" "$c.lib")
		echo "| $op | $r | $tot | $lib | $waits |" >>"$out/table.md"
		echo "$op $r: $(awk -v n="$n" 'FNR == NR { A[$1] = $2; next } { B[$1] = $2 }
			END { for (f in B) { d = (B[f] - A[f]) / (2 * n); if (d >= 0.5) printf "%.0f %s\n", d, f } }' \
			"$a.lib" "$c.lib" | sort -rn | head -n "$nfun" | awk '{ printf "%s %s; ", $2, $1 }')" \
			>>"$out/functions.txt"
	done
done
cat "$out/table.md"
echo
cat "$out/functions.txt"
