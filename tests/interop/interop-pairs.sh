#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# interop-pairs.sh -- run the interoperability client/server pairs over a
# real RDMA device (inside the Soft-RoCE guest: RPMA_TESTING_IP is its address)
#
# Usage: interop-pairs.sh OURS_DIR UPSTREAM_DIR [PAIR...]
#   OURS_DIR      holds interop-server and interop-client linked with our librpma
#   UPSTREAM_DIR  holds the same programs linked with upstream librpma (Debian librpma0)
#   PAIR          server-client pairings to run, of ours-ours ours-upstream
#                 upstream-ours upstream-upstream (default: all four)
# Every pairing runs twice: the server declares Direct Write to PMem (the
# client flushes PERSISTENT) or not (VISIBILITY).  All runs must pass, and
# all pairings must print the same transcript for the same mode.
#
# Environment: RPMA_TESTING_IP (required), INTEROP_PORT (first port, 7470),
# INTEROP_LOGDIR (where the transcripts go; default a temporary directory).

set -u

if [ $# -lt 2 ]; then
	echo "usage: $0 OURS_DIR UPSTREAM_DIR [PAIR...]" >&2
	exit 2
fi
ours=$1
upstream=$2
shift 2
pairs=("$@")
[ ${#pairs[@]} -gt 0 ] || pairs=(ours-ours ours-upstream upstream-ours upstream-upstream)

ip=${RPMA_TESTING_IP:-}
if [ -z "$ip" ]; then
	echo "SKIPPED: RPMA_TESTING_IP is not set (no RDMA interface)" >&2
	exit 77
fi
port=${INTEROP_PORT:-7470}
logdir=${INTEROP_LOGDIR:-$(mktemp -d /tmp/interop.XXXXXX)}
# our library: the verbs provider, whatever else is built (upstream ignores it)
export RPMA_PROVIDER=verbs
mkdir -p "$logdir"

for d in "$ours" "$upstream"; do
	for p in interop-server interop-client; do
		if [ ! -x "$d/$p" ]; then
			echo "interop: $d/$p is missing" >&2
			exit 99
		fi
	done
done

# dir_of -- the program directory of an implementation name
dir_of() {
	case $1 in
	ours) echo "$ours" ;;
	upstream) echo "$upstream" ;;
	*) echo "interop: unknown implementation '$1'" >&2; exit 2 ;;
	esac
}

# now_ms -- a monotonic-enough clock in milliseconds
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

failed=0
summary=""
for mode in visibility dw2pm; do
	ref=""
	for pair in "${pairs[@]}"; do
		srv=${pair%-*}
		cli=${pair#*-}
		sdir=$(dir_of "$srv") || exit 2
		cdir=$(dir_of "$cli") || exit 2
		tag="$pair.$mode"
		ready="$logdir/$tag.ready"
		rm -f "$ready"
		t0=$(now_ms)

		extra=()
		[ "$mode" = dw2pm ] && extra=(dw2pm)
		"$sdir/interop-server" "$ip" "$port" "$ready" "${extra[@]}" \
			>"$logdir/$tag.server.out" 2>"$logdir/$tag.server.err" &
		spid=$!
		# wait until the server listens (or dies)
		for _ in $(seq 1 300); do
			[ -e "$ready" ] && break
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
		done
		cstatus=1
		if [ -e "$ready" ]; then
			timeout -k 5 90 "$cdir/interop-client" "$ip" "$port" \
				>"$logdir/$tag.client.out" 2>"$logdir/$tag.client.err"
			cstatus=$?
		else
			echo "interop: $tag: the server did not start listening" >>"$logdir/$tag.client.err"
		fi
		# the server ends by itself after the client (its own alarm bounds it)
		wait "$spid"
		sstatus=$?
		t1=$(now_ms)
		port=$((port + 1))

		result=PASS
		if [ $sstatus -ne 0 ] || [ $cstatus -ne 0 ]; then
			result="FAIL (server $sstatus, client $cstatus)"
		fi
		cat "$logdir/$tag.server.out" "$logdir/$tag.client.out" >"$logdir/$tag.transcript"
		if [ "$result" = PASS ]; then
			if [ -z "$ref" ]; then
				ref="$logdir/$tag.transcript"
			elif ! cmp -s "$ref" "$logdir/$tag.transcript"; then
				result="FAIL (transcript differs from $(basename "$ref" .transcript))"
				diff -u "$ref" "$logdir/$tag.transcript" | sed 's/^/    /'
			fi
		fi
		line=$(printf '%-8s server=%-8s client=%-8s %-10s %5d ms' "$result" "$srv" "$cli" \
			"$mode" $((t1 - t0)))
		echo "interop: $line"
		summary+="$line"$'\n'
		if [ "$result" != PASS ]; then
			failed=1
			for f in server.out server.err client.out client.err; do
				echo "---- $tag.$f"
				sed 's/^/    /' "$logdir/$tag.$f"
			done
		fi
	done
done

echo "interop: transcripts in $logdir"
echo "---- transcript (ours-ours or first pairing, dw2pm mode):"
ls "$logdir"/*.dw2pm.transcript >/dev/null 2>&1 && sed 's/^/    /' "$(ls "$logdir"/*.dw2pm.transcript | head -1)"
printf '%s' "$summary" >"$logdir/summary.txt"
if [ $failed -ne 0 ]; then
	echo "interop: FAILED"
	exit 1
fi
echo "interop: all pairings passed"
exit 0
