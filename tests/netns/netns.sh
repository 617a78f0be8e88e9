#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# netns.sh -- the main scenarios with the server and the client on two hosts:
# two network namespaces made by the test, joined by a veth pair
#
# Layout (names carry our pid, so parallel runs do not collide):
#   namespace rpma-srv-<pid>: lo, veth nsS<pid> 192.0.2.101/24   (servers)
#   namespace rpma-cli-<pid>: lo, veth nsC<pid> 192.0.2.102/24   (clients)
# Each namespace sees only its lo and its veth end, so a client in the
# client namespace can reach the server's address through the veth only.
# IPv6 is switched off in both namespaces so that no neighbour discovery or
# router solicitation moves the veth counters behind our back.
#
# Scenarios, each a server process in one namespace and its client(s) in the
# other, over the fabric provider (RPMA_PROVIDER=fabric):
#   - every client/server example pair of examples/tests/*.example (same
#     arguments as examples/run-example.sh gives them); each client must exit
#     0 and print a "verified" line, the server must exit 0;
#   - the replication demo (examples/replicate/rpma-replicate server|client),
#     with visibility and with persistent flushes; both exit 0, the client
#     reads back identical data and the server's checksum of its file matches;
#   - our interop server and client (tests/interop, ours-ours only), with and
#     without direct write to PMem; both exit 0 and print their PASS line.
# Every scenario also reads the server veth's rx/tx byte counters
# (/sys/class/net/<veth>/statistics inside the namespace) before and after and
# needs both to grow (the replication demo: rx by at least the bytes streamed).
# Round "tcp" (FI_PROVIDER=tcp) runs them all, round "rxm"
# (FI_PROVIDER='tcp;ofi_rxm': reliable-datagram endpoints over tcp, rpma_fabric(7)
# "RELIABLE-DATAGRAM ENDPOINTS", chosen by themselves) runs them all too, round "sockets"
# (FI_PROVIDER=sockets) a few (NETNS_SOCKETS_SCENARIOS): only pairs whose
# server answers the client before the client disconnects.  libfabric's
# sockets provider (1.17) loses a disconnect that arrives while the server is
# still inside fi_accept(): sock_ep_cm_accept() has the CM thread watch the
# socket before it marks the endpoint connected, and a SHUTDOWN read in that
# window is dropped, so the server never gets FI_SHUTDOWN (the "connection"
# pair, whose client disconnects at once, hangs its server in about 1 run of 3,
# on 127.0.0.1 as well).  A server that has answered is past that window.
#
# libfabric: neither tcp nor sockets needs FI_TCP_IFACE / FI_SOCKETS_IFACE
# here.  The fabric provider asks fi_getinfo() for the address itself (node =
# the server's address, FI_SOURCE on the passive side), and inside a namespace
# the only interfaces libfabric can enumerate are lo and the veth, so the
# domain is the veth (or lo for the client's "any" side) without help.
#
# Output: one "PASS|FAIL|SKIP: <round> <scenario> ..." line per scenario, the
# logs of a failed scenario, then "N passed, N failed".  Exit 0 only if every
# scenario that ran passed; 77 (with "SKIPPED: reason") when namespaces cannot
# be made (not root, no ip(8), no netns support) or the fabric provider is not
# built; 99 when the build is missing.
#
# Environment: top_builddir (default .), top_srcdir (default: this file's
# ../..), NETNS_TIMEOUT (seconds per process, 60), NETNS_ROUNDS ("tcp rxm sockets"),
# NETNS_SOCKETS_SCENARIOS (names of the scenarios the sockets round runs),
# NETNS_KEEP=1 (keep the working directory with every log).

set -u

src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${top_builddir:-.}
limit=${NETNS_TIMEOUT:-60}
rounds=${NETNS_ROUNDS:-tcp rxm sockets}
sockets_scenarios=${NETNS_SOCKETS_SCENARIOS:-ping-pong gpspm-dram replicate-visibility \
interop-visibility}

ns_srv=rpma-srv-$$
ns_cli=rpma-cli-$$
veth_srv=nsS$$
veth_cli=nsC$$
addr_srv=192.0.2.101
addr_cli=192.0.2.102

# skip -- say loudly why the test cannot run, and exit 77 (automake's SKIP)
skip() {
	echo "SKIPPED: netns: $*"
	echo "SKIPPED: netns: $*" >&2
	exit 77
}

# hard_error -- the test itself cannot run as built: exit 99 (automake's ERROR)
hard_error() {
	echo "ERROR: netns: $*" >&2
	exit 99
}

# --- what we need before touching the network
[ -r "$build/config.h" ] || hard_error "$build/config.h not found (set top_builddir)"
if ! grep -q '^#define RPMA_HAVE_FABRIC 1' "$build/config.h"; then
	skip "librpma is built without the fabric provider"
fi
[ -d "$src/examples/tests" ] || hard_error "$src/examples/tests not found (set top_srcdir)"
[ -x "$build/examples/replicate/rpma-replicate" ] ||
	hard_error "$build/examples/replicate/rpma-replicate is not built (run make first)"
command -v ip >/dev/null 2>&1 || skip "ip(8) (iproute2) is not installed"
command -v timeout >/dev/null 2>&1 || hard_error "timeout(1) is not installed"
[ -e /proc/self/ns/net ] || skip "the kernel has no network namespaces (/proc/self/ns/net)"

work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-netns.XXXXXX") || hard_error "mktemp failed"
made_srv=0
made_cli=0
pids=()

# cleanup -- stop what we started, delete both namespaces (and so the veth pair)
# shellcheck disable=SC2317 # (called by the EXIT trap)
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	[ "$made_srv" = 1 ] && ip netns del "$ns_srv" 2>/dev/null
	[ "$made_cli" = 1 ] && ip netns del "$ns_cli" 2>/dev/null
	if [ "${NETNS_KEEP:-0}" = 1 ]; then
		echo "netns: kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the two hosts
if ! err=$(ip netns add "$ns_srv" 2>&1); then
	skip "cannot create a network namespace as uid $(id -u) ('ip netns add': $err)"
fi
made_srv=1
ip netns add "$ns_cli" || hard_error "the second namespace failed after the first worked"
made_cli=1
if ! err=$(ip link add "$veth_srv" netns "$ns_srv" type veth peer name "$veth_cli" \
	netns "$ns_cli" 2>&1); then
	skip "cannot create a veth pair ($err)"
fi
for ns in "$ns_srv" "$ns_cli"; do
	# shellcheck disable=SC2016 # (expanded by the inner shell)
	ip netns exec "$ns" sh -c 'for f in /proc/sys/net/ipv6/conf/*/disable_ipv6; do
		[ -w "$f" ] && echo 1 >"$f"; done; true'
done
if ! { ip -n "$ns_srv" addr add "$addr_srv/24" dev "$veth_srv" &&
	ip -n "$ns_cli" addr add "$addr_cli/24" dev "$veth_cli" &&
	ip -n "$ns_srv" link set lo up &&
	ip -n "$ns_cli" link set lo up &&
	ip -n "$ns_srv" link set "$veth_srv" up &&
	ip -n "$ns_cli" link set "$veth_cli" up; }; then
	hard_error "cannot configure the namespaces"
fi
# the link is up when both ends report it so
up=0
for _ in $(seq 1 50); do
	if [ "$(ip netns exec "$ns_srv" cat "/sys/class/net/$veth_srv/operstate")" = up ] &&
		[ "$(ip netns exec "$ns_cli" cat "/sys/class/net/$veth_cli/operstate")" = up ]; then
		up=1
		break
	fi
	sleep 0.1
done
[ "$up" = 1 ] || hard_error "the veth pair did not come up within 5 s"
echo "netns: $ns_srv ($veth_srv $addr_srv) <-> $ns_cli ($veth_cli $addr_cli), RPMA_PROVIDER=fabric"

export RPMA_PROVIDER=fabric
passed=0
failed=0
skipped=0
port=7600

# veth_bytes -- "rx tx" byte counters of the server's veth
veth_bytes() {
	ip netns exec "$ns_srv" cat "/sys/class/net/$veth_srv/statistics/rx_bytes" \
		"/sys/class/net/$veth_srv/statistics/tx_bytes" | tr '\n' ' '
}

# show -- a log file, indented, under a title
show() {
	echo "    ----- $1"
	sed 's/^/      /' "$2"
}

# Per scenario, set before run_scenario:
#   sc_server      the server's argv
#   sc_ready       "out:REGEX" (the server printed it), "file:PATH" (exists) or
#                  "listen" (a TCP socket listens on $port in the server namespace)
#   sc_client      one client's argv
#   sc_clients     how many clients at once
#   sc_env         VAR=VALUE words for every process
#   sc_client_ok   REGEX every client's stdout must match
#   sc_server_ok   REGEX the server's stdout must match (empty: none)
#   sc_min_rx      bytes the server's veth must at least receive
sc_reset() {
	sc_server=()
	sc_ready=""
	sc_client=()
	sc_clients=1
	sc_env=()
	sc_client_ok=""
	sc_server_ok=""
	sc_min_rx=1
}

# ready -- has the server reached the state sc_ready describes
ready() {
	case $sc_ready in
	out:*) grep -q -- "${sc_ready#out:}" "$1" ;;
	file:*) [ -e "${sc_ready#file:}" ] ;;
	listen) ip netns exec "$ns_srv" ss -ltnH "sport = :$port" 2>/dev/null | grep -q . ;;
	*) return 1 ;;
	esac
}

# run_scenario ROUND NAME -- run one scenario, print its line, count it
run_scenario() {
	local round=$1 name=$2
	local dir=$work/$round.$name
	local why="" spid rc i t0 t1
	local cpids=()
	mkdir -p "$dir"
	local before after
	before=$(veth_bytes)
	t0=$(date +%s%N)
	: >"$dir/server.out"

	ip netns exec "$ns_srv" env "${sc_env[@]}" timeout -k 5 "$limit" "${sc_server[@]}" \
		>"$dir/server.out" 2>"$dir/server.err" &
	spid=$!
	pids+=("$spid")
	local started=0
	for _ in $(seq 1 200); do
		if ready "$dir/server.out"; then
			started=1
			break
		fi
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	if [ "$started" = 1 ]; then
		for i in $(seq 1 "$sc_clients"); do
			ip netns exec "$ns_cli" env "${sc_env[@]}" timeout -k 5 "$limit" "${sc_client[@]}" \
				>"$dir/client$i.out" 2>"$dir/client$i.err" &
			cpids+=($!)
			pids+=($!)
		done
		for i in $(seq 1 "$sc_clients"); do
			wait "${cpids[$((i - 1))]}"
			rc=$?
			if [ "$rc" -eq 124 ]; then
				why+=" client$i timed out after ${limit}s;"
			elif [ "$rc" -ne 0 ]; then
				why+=" client$i exit $rc;"
			elif ! grep -q -- "$sc_client_ok" "$dir/client$i.out"; then
				why+=" client$i exited 0 without '$sc_client_ok';"
			fi
		done
		# the server ends by itself once its clients are done: give it 10 s
		for _ in $(seq 1 100); do
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$spid" 2>/dev/null; then
			why+=" the server did not end 10 s after its clients;"
			kill "$spid" 2>/dev/null
		fi
	else
		why+=" the server did not get ready;"
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	rc=$?
	if [ "$started" = 1 ] && [ "$rc" -ne 0 ]; then
		why+=" server exit $rc;"
	elif [ "$rc" -eq 0 ] && [ -n "$sc_server_ok" ] &&
		! grep -q -- "$sc_server_ok" "$dir/server.out"; then
		why+=" the server exited 0 without '$sc_server_ok';"
	fi
	pids=()

	t1=$(date +%s%N)
	after=$(veth_bytes)
	local rx0 tx0 rx1 tx1
	read -r rx0 tx0 <<<"$before"
	read -r rx1 tx1 <<<"$after"
	local drx=$((rx1 - rx0)) dtx=$((tx1 - tx0))
	if [ "$drx" -lt "$sc_min_rx" ] || [ "$dtx" -le 0 ]; then
		why+=" the veth moved rx +$drx / tx +$dtx bytes (need rx >= $sc_min_rx, tx > 0);"
	fi

	local line
	line=$(printf '%-7s %-26s %5d ms, veth %s rx +%d B tx +%d B' "$round" "$name" \
		$(((t1 - t0) / 1000000)) "$veth_srv" "$drx" "$dtx")
	if [ -z "$why" ]; then
		echo "PASS: $line"
		passed=$((passed + 1))
	else
		echo "FAIL: $line:$why"
		failed=$((failed + 1))
		local f
		for f in "$dir"/*.out "$dir"/*.err; do
			[ -e "$f" ] && show "$(basename "$f")" "$f"
		done
	fi
	port=$((port + 1))
}

# example_scenario ROUND FILE -- an example pair as run-example.sh runs it
example_scenario() {
	local round=$1 file=$2
	local name args
	name=$(basename "$file" .example)
	# shellcheck disable=SC2046
	set -- $(grep -v '^#' "$file")
	local prog=$1
	shift
	local pmem=0 server_args=() client_args=()
	sc_reset
	while [ $# -gt 0 ]; do
		case $1 in
		--pmem) pmem=1 ;;
		--clients) sc_clients=$2; shift ;;
		--server-arg) server_args+=("$2"); shift ;;
		--client-arg) client_args+=("$2"); shift ;;
		--env) sc_env+=("$2"); shift ;;
		*)
			echo "FAIL: $round $name: unknown option $1 in $file"
			failed=$((failed + 1))
			return
			;;
		esac
		shift
	done
	local bin=$build/examples/$prog
	if [ ! -x "$bin/server" ] || [ ! -x "$bin/client" ]; then
		echo "FAIL: $round $name: $bin/server or $bin/client is not built"
		failed=$((failed + 1))
		return
	fi
	args=()
	if [ "$pmem" = 1 ]; then
		rm -f "$work/$round.$name.pmem"
		args+=("$work/$round.$name.pmem")
	fi
	args+=("${server_args[@]}")
	[ "$sc_clients" -gt 1 ] && args+=("$sc_clients")
	sc_server=("$bin/server" "$addr_srv" "$port" "${args[@]}")
	sc_ready="out:^listening on"
	sc_client=("$bin/client" "$addr_srv" "$port" "${client_args[@]}")
	sc_client_ok="^verified"
	run_scenario "$round" "$name"
}

# replicate_scenario ROUND MODE -- the replication demo, visibility or persistent
replicate_scenario() {
	local round=$1 mode=$2
	local records=1000 size=64
	local bin=$build/examples/replicate/rpma-replicate
	local file=$work/$round.replicate-$mode.dat
	local extra=()
	[ "$mode" = persistent ] && extra=(--pmem)
	rm -f "$file"
	sc_reset
	sc_server=("$bin" server "$addr_srv" "$port" "$file" --records "$records" --size "$size"
		"${extra[@]}")
	# (its stdout is a file, so fully buffered: "listening" shows only at exit)
	sc_ready=listen
	sc_client=("$bin" client "$addr_srv" "$port" --records "$records" --size "$size")
	sc_client_ok="read back [0-9]* B: identical; server: checksum matches, file synced"
	sc_server_ok="^\[server\] client reports $records records"
	sc_min_rx=$((records * size))
	run_scenario "$round" "replicate-$mode"
}

# interop_scenario ROUND MODE -- our interop server and client, visibility or dw2pm
interop_scenario() {
	local round=$1 mode=$2
	local dir=$build/tests/interop
	local name=interop-$mode
	if [ ! -x "$dir/interop-server" ] || [ ! -x "$dir/interop-client" ]; then
		echo "SKIP: $round $name: $dir/interop-{server,client} not built" \
			"(configured without verbs, or not built by 'make check' yet)"
		skipped=$((skipped + 1))
		return
	fi
	if [ "$round" = rxm ] && [ "$mode" = dw2pm ]; then
		# the interop client flushes to persistence, as upstream's would
		echo "SKIP: $round $name: tcp;ofi_rxm has no FI_COMMIT_COMPLETE, a persistent" \
			"flush is refused with RPMA_E_NOSUPP (rpma_fabric(7))"
		skipped=$((skipped + 1))
		return
	fi
	local ready=$work/$round.$name.ready
	rm -f "$ready"
	local extra=()
	[ "$mode" = dw2pm ] && extra=(dw2pm)
	sc_reset
	sc_server=("$dir/interop-server" "$addr_srv" "$port" "$ready" "${extra[@]}")
	sc_ready="file:$ready"
	sc_client=("$dir/interop-client" "$addr_srv" "$port")
	sc_client_ok="^client: PASS"
	sc_server_ok="^server: PASS"
	run_scenario "$round" "$name"
}

# wanted ROUND NAME -- does this round run this scenario
wanted() {
	[ "$1" = tcp ] || [ "$1" = rxm ] && return 0
	local s
	for s in $sockets_scenarios; do
		[ "$s" = "$2" ] && return 0
	done
	return 1
}

for round in $rounds; do
	unset RPMA_FABRIC_EP_TYPE
	case $round in
	tcp | sockets) export FI_PROVIDER=$round ;;
	rxm) export FI_PROVIDER='tcp;ofi_rxm' ;;
	*) hard_error "unknown round '$round' (tcp, rxm or sockets)" ;;
	esac
	for f in "$src"/examples/tests/*.example; do
		wanted "$round" "$(basename "$f" .example)" && example_scenario "$round" "$f"
	done
	for mode in visibility persistent; do
		wanted "$round" "replicate-$mode" && replicate_scenario "$round" "$mode"
	done
	for mode in visibility dw2pm; do
		wanted "$round" "interop-$mode" && interop_scenario "$round" "$mode"
	done
done

[ "$skipped" -gt 0 ] && echo "($skipped scenario(s) skipped, see the SKIP lines)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && exit 0
exit 1
