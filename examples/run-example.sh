#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# run-example.sh -- run one example pair: its server, then its client(s), and
# pass only if every process exits 0 and reports what it verified
#
# Usage: run-example.sh <name> [options]
#        run-example.sh <file>.example     (the test suite's form: the file
#                                            holds the arguments on one line)
# Options:
#   --pmem             give the server a fresh file as its persistent region
#   --clients N        start N clients at once (their count also goes to the
#                      server as its third argument)
#   --server-arg A     one more argument for the server (repeatable)
#   --client-arg A     one more argument for every client (repeatable)
#   --env VAR=VALUE    set VAR for the server and the clients (repeatable)
# Environment:
#   top_builddir       where the examples were built (default: .)
#   RPMA_EXAMPLE_ADDR  the address to use (default: $RPMA_TESTING_IP, else 127.0.0.1)
#   RPMA_EXAMPLE_TIMEOUT  seconds each process may take (default 60)
#   RPMA_PROVIDER      passed through: the provider the library uses
#   RPMA_EXAMPLE_KEEP=1   keep the working directory (logs, the pmem file)
#
# The port is derived from our pid; when the server cannot listen on it (in
# use) another one is tried.  The server is known to listen when it prints
# "listening on ..." (examples/common/common.c: ex_listen()).

set -u

if [ $# -lt 1 ]; then
	sed -n '4,24p' "$0" >&2
	exit 2
fi
if [[ "$1" == *.example ]]; then
	[ -r "$1" ] || { echo "run-example.sh: cannot read $1" >&2; exit 2; }
	# shellcheck disable=SC2046
	set -- $(grep -v '^#' "$1")
fi

name=$1
shift
pmem=0
clients=1
server_args=()
client_args=()
envs=()
while [ $# -gt 0 ]; do
	case $1 in
	--pmem) pmem=1 ;;
	--clients) clients=$2; shift ;;
	--server-arg) server_args+=("$2"); shift ;;
	--client-arg) client_args+=("$2"); shift ;;
	--env) envs+=("$2"); shift ;;
	*) echo "run-example.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

bindir=${top_builddir:-.}/examples/$name
server=$bindir/server
client=$bindir/client
for b in "$server" "$client"; do
	[ -x "$b" ] || { echo "run-example.sh: $b is not built" >&2; exit 2; }
done
addr=${RPMA_EXAMPLE_ADDR:-${RPMA_TESTING_IP:-127.0.0.1}}
limit=${RPMA_EXAMPLE_TIMEOUT:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-example-$name.XXXXXX") || exit 2

pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	if [ "${RPMA_EXAMPLE_KEEP:-0}" = 1 ]; then
		echo "run-example.sh: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

if [ "$pmem" = 1 ]; then
	server_args=("$work/pmem" "${server_args[@]}")
fi
if [ "$clients" -gt 1 ]; then
	server_args+=("$clients")
fi

show() { # show <title> <file>: a log, indented
	echo "----- $1"
	sed 's/^/  /' "$2"
}

echo "example $name: ${RPMA_PROVIDER:-automatic} provider, $addr, $clients client(s)${envs[*]:+, ${envs[*]}}"

# start the server, on another port if the first one is taken
started=0
for attempt in 1 2 3 4 5 6 7 8; do
	port=$((20000 + ($$ * 7 + attempt * 7919) % 40000))
	: >"$work/server.out"
	: >"$work/server.err"
	env "${envs[@]}" timeout -k 5 "$limit" "$server" "$addr" "$port" "${server_args[@]}" \
		>"$work/server.out" 2>"$work/server.err" &
	spid=$!
	pids=("$spid")
	for _ in $(seq 1 200); do
		if grep -q '^listening on' "$work/server.out"; then
			started=1
			break
		fi
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	[ "$started" = 1 ] && break
	if kill -0 "$spid" 2>/dev/null; then
		echo "run-example.sh: the server did not start listening within 10 s"
		break
	fi
	wait "$spid"
	rc=$?
	if grep -q 'rpma_ep_listen' "$work/server.err"; then
		echo "run-example.sh: port $port: the server could not listen (exit $rc), trying another"
		continue
	fi
	echo "run-example.sh: the server died before listening (exit $rc)"
	break
done
if [ "$started" != 1 ]; then
	show "server stdout" "$work/server.out"
	show "server stderr" "$work/server.err"
	echo "FAIL: $name: the server did not start"
	exit 1
fi
echo "server listening on $addr:$port"

# the clients, all at once
cpids=()
for i in $(seq 1 "$clients"); do
	env "${envs[@]}" timeout -k 5 "$limit" "$client" "$addr" "$port" "${client_args[@]}" \
		>"$work/client$i.out" 2>"$work/client$i.err" &
	cpids+=($!)
	pids+=($!)
done

fail=0
for i in $(seq 1 "$clients"); do
	wait "${cpids[$((i - 1))]}"
	rc=$?
	show "client $i stdout" "$work/client$i.out"
	show "client $i stderr" "$work/client$i.err"
	if [ "$rc" -ne 0 ]; then
		[ "$rc" -eq 124 ] && echo "client $i: timed out after $limit s"
		echo "client $i: exit $rc"
		fail=1
	elif ! grep -q '^verified' "$work/client$i.out"; then
		echo "client $i: exited 0 but reported nothing verified"
		fail=1
	fi
done

# the server ends by itself once its clients are done; after a failed client
# it may wait for good (its limit): stop it
if [ "$fail" -ne 0 ] && kill -0 "$spid" 2>/dev/null; then
	sleep 1
	kill -0 "$spid" 2>/dev/null && echo "server: stopped, a client failed" && kill "$spid" 2>/dev/null
fi
wait "$spid"
rc=$?
show "server stdout" "$work/server.out"
show "server stderr" "$work/server.err"
if [ "$rc" -ne 0 ]; then
	[ "$rc" -eq 124 ] && echo "server: timed out after $limit s"
	echo "server: exit $rc"
	fail=1
fi
pids=()

if [ "$fail" -ne 0 ]; then
	echo "FAIL: $name"
	exit 1
fi
echo "PASS: $name"
exit 0
