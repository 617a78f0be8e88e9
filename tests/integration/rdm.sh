#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdm.sh -- the integration scenarios, the thread tests, the fault walk and the
# examples over reliable-datagram endpoints (FI_EP_RDM, rpma_fabric(7)
# "RELIABLE-DATAGRAM ENDPOINTS"): libfabric's shm and tcp;ofi_rxm, which offer
# no message endpoint, so the fabric provider chooses reliable datagrams by
# itself; over udp;ofi_rxd the integration scenarios only; the integration
# scenarios, the thread tests and the fault walk once more with
# RPMA_FABRIC_OWN_CQS=0 (connections share libfabric CQs); over shm also the connection and data
# scenarios with RPMA_FABRIC_MR_LOCAL=1.
#
# Issue 18 is not finished: the scenarios below that do not pass yet are left
# out, each with what was seen.  Everything else must pass.
#
# Skipped (exit 77) when RPMA_PROVIDER selects another provider or FI_PROVIDER is
# set by the caller, or when RPMA_RDM=0 (make distcheck: the runs of make check
# and of the sanitizers have these rounds already); a libfabric provider that
# is not there is left out; RDM_PROVIDERS="shm ..." runs only the rounds of the
# providers it names.  When a round fails, the end of the output names
# every failed part and the scenarios Criterion reported failed; the last line
# adds up every round's counts (tests/tally.sh), which make check's summary
# takes.
set -uo pipefail
if [ "${RPMA_RDM:-1}" = 0 ]; then
	echo "rdm.sh: RPMA_RDM=0, nothing to do"
	exit 77
fi
if [ -n "${RPMA_PROVIDER:-}" ] && [ "$RPMA_PROVIDER" != fabric ]; then
	echo "rdm.sh: RPMA_PROVIDER=$RPMA_PROVIDER, nothing to do"
	exit 77
fi
if [ -n "${FI_PROVIDER:-}" ]; then
	echo "rdm.sh: FI_PROVIDER=$FI_PROVIDER is set by the caller"
	exit 77
fi
b=${top_builddir:-.}
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../tally.sh
. "$src/tests/tally.sh"

# Nothing is left out over shm; the access scenarios skip themselves there
# (shm does not hold remote accesses to keys and rights: traits
# access_checked).
shm_out=''
shm_threads=''
# Left out over tcp;ofi_rxm: cq/srq_memory_bounded: each connection's
# endpoint takes ~100 MB of heap (rxm's pools), far over the scenario's bound
rxm_out='cq/srq_memory_bounded'
rxm_threads=''
# udp;ofi_rxd: the integration scenarios only (rpma_fabric(7): not for use
# yet), a guard of what works.  Left out: its target drops a refused remote
# access without an answer, so the operation never completes
# (access/lying_descriptor, no_remote_read, no_remote_write,
# errors/bad_remote_key); 1 MiB written, flushed and read back took over 5 s
# (data/passive_target_progress); cq/srq_memory_bounded did not end in 30 s
rxd_out='access/lying_descriptor|access/no_remote_read|access/no_remote_write'
rxd_out+='|errors/bad_remote_key|data/passive_target_progress|cq/srq_memory_bounded'

# the endpoints of a process that dies or fails a test leave shm's files behind:
# remove the ones this run made
shm_before=$(mktemp "${TMPDIR:-/tmp}/rdm-shm.XXXXXX")
exlog=$(mktemp "${TMPDIR:-/tmp}/rdm-example.XXXXXX")
crlog=$(mktemp "${TMPDIR:-/tmp}/rdm-criterion.XXXXXX")
trap 'rm -f "$shm_before" "$exlog" "$crlog" "$crlog.fails"' EXIT
ls /dev/shm >"$shm_before" 2>/dev/null || true
shm_cleanup() {
	ls /dev/shm 2>/dev/null | grep -Ex '[0-9]+:[0-9]+:[0-9]+|[0-9.]+:[0-9]+' |
		grep -vxF -f "$shm_before" | while read -r f; do rm -f "/dev/shm/$f"; done
}

# shm and tcp;ofi_rxm have no message endpoints: the provider chooses
# reliable datagrams by itself.  libfabric 2.x: tcp has reliable datagrams of
# its own (not a utility over its message endpoints, as rxm is), next to its
# message endpoints: a third round, with RPMA_FABRIC_EP_TYPE=rdm.  The same
# scenarios are left out as on 1.17.
provs=(shm 'tcp;ofi_rxm' 'udp;ofi_rxd')
major=$(fi_info --version 2>/dev/null | sed -n 's/^libfabric: *\([0-9]*\)\..*/\1/p')
if [ "${major:-1}" -ge 2 ]; then
	provs+=(tcp)
	echo "rdm.sh: libfabric $major.x: tcp's own reliable datagrams too (RPMA_FABRIC_EP_TYPE=rdm)"
fi
# RDM_PROVIDERS (space-separated) narrows the rounds to those providers
if [ -n "${RDM_PROVIDERS:-}" ]; then
	want=()
	for prov in "${provs[@]}"; do
		case " $RDM_PROVIDERS " in *" $prov "*) want+=("$prov") ;; esac
	done
	provs=("${want[@]}")
	echo "rdm.sh: RDM_PROVIDERS=$RDM_PROVIDERS: over ${provs[*]:-nothing} only"
fi

fail=0 ran=0
failed=()
# failed WHAT -- a part that failed, named again at the end of the output
failed() {
	echo "FAIL: $1"
	failed+=("$1")
	fail=1
}
# criterion_round WHAT PROV RC -- a Criterion run (its output in $crlog) that
# exited with RC: counted, and when it failed, named with its failed scenarios
criterion_round() {
	tally_criterion "$crlog" "$3"
	if [ "$3" != 0 ]; then
		failed "$1"
		criterion_fails "$2"
	fi
}
# criterion_fails PROV -- the scenarios the last Criterion run reported failed
criterion_fails() {
	grep -E -A2 '^\[FAIL\]|Assertion Failed|CRASH|crashed|[Tt]imed out' "$crlog" | sed "s/^/    over $1: /" |
		head -20 >>"$crlog.fails"
}
# stale_names -- over shm: a connection's endpoint is named after the process
# id (PID:UID:N), and a process killed with SIGKILL leaves those files behind.
# A later process that gets the same pid must still connect (libfabric's shm
# refuses the first enable of such a name: fabric_conn.c, fab_conn_build).
# Made certain with two pid namespaces: rpma-bench is pid 2 in both (/proc
# stays the host's, where pid 2 is alive too; the trixie root cannot mount its
# own).  Skipped without rpma-bench or where no pid namespace can be made.
stale_names() {
	local bin="$b/bench/rpma-bench" uid p log st
	uid=$(id -u)
	p=$((30000 + $$ % 20000))
	if [ ! -x "$bin" ] || ! unshare -p -f true 2>/dev/null; then
		echo "stale shm names: skipped (no $bin, or no pid namespace here)"
		return 2
	fi
	# 1. pid 2 connects, then everything in its namespace is killed, once
	# shm wrote the pid into the name's file (the int after the first 4
	# bytes, written last): a file killed before that has pid 0, which shm
	# overwrites without a word (what made session 32's CI fail here
	# once, under load)
	unshare -p -f sh -c "RPMA_PROVIDER=fabric FI_PROVIDER=shm '$bin' both \
		-o write -s 64 -m bw -N 100000000 -q -p $p >/dev/null 2>&1 &
		for i in \$(seq 100); do
			[ \"\$(od -A n -t d4 -j 4 -N 4 /dev/shm/2:$uid:0 2>/dev/null)\" -gt 0 ] \
				2>/dev/null && break
			sleep 0.1
		done
		kill -9 -1; sleep 0.2"
	if [ ! -e "/dev/shm/2:$uid:0" ]; then
		failed "stale shm names: the killed process left no /dev/shm/2:$uid:0"
		return
	fi
	if ! [ "$(od -A n -t d4 -j 4 -N 4 "/dev/shm/2:$uid:0")" -gt 0 ] 2>/dev/null; then
		failed "stale shm names: /dev/shm/2:$uid:0 was never made whole within 10 s"
		return
	fi
	# 2. a new pid 2 must connect and finish, and must have met the name
	log=$(mktemp "${TMPDIR:-/tmp}/rdm-stale.XXXXXX")
	unshare -p -f sh -c "RPMA_PROVIDER=fabric FI_PROVIDER=shm RPMA_LOG_LEVEL=notice \
		'$bin' both -o write -s 64 -m lat -n 1000 -q -p $((p + 1)) >'$log' 2>&1 &
		wait \$!"
	st=$?
	if [ $st != 0 ]; then
		failed "stale shm names: pid 2 could not connect again (exit $st)"
		sed 's/^/    /' "$log" | grep -v '^    #' | tail -5
	elif ! grep -q 'fi_enable(): .*once more' "$log"; then
		failed "stale shm names: pid 2 did not meet the name its predecessor left"
	else
		echo "stale shm names: a process with the pid of a killed one connects (enabled again once)"
	fi
	rm -f "$log"
}

for prov in "${provs[@]}"; do
	if command -v fi_info >/dev/null && ! fi_info -p "$prov" -t FI_EP_RDM >/dev/null 2>&1; then
		echo "rdm.sh: libfabric has no $prov reliable-datagram provider here: left out"
		continue
	fi
	unset RPMA_FABRIC_EP_TYPE
	scenarios_only=0
	case $prov in
	shm) out=$shm_out tout=$shm_threads ;;
	tcp) out='' tout='' && export RPMA_FABRIC_EP_TYPE=rdm ;;
	'udp;ofi_rxd') out=$rxd_out tout='' scenarios_only=1 ;;
	*) out=$rxm_out tout=$rxm_threads ;;
	esac
	ran=1
	filter=()
	[ -n "$out" ] && filter=(--filter "!($out)")
	echo "== integration over FI_PROVIDER=$prov (left out: ${out:-nothing})"
	# one scenario at a time: their keep-alives and timeouts run on the clock
	RPMA_PROVIDER=fabric FI_PROVIDER=$prov "$b/tests/integration/test_integration" -j1 \
		--timeout 60 "${filter[@]}" 2>&1 | tee "$crlog"
	criterion_round "integration over $prov" "$prov" $?
	[ $scenarios_only = 1 ] && continue
	tfilter=()
	[ -n "$tout" ] && tfilter=(--filter "!($tout)")
	echo "== threads over FI_PROVIDER=$prov (left out: ${tout:-nothing})"
	RPMA_PROVIDER=fabric FI_PROVIDER=$prov "$b/tests/threads/test_threads" --timeout 120 \
		"${tfilter[@]}" 2>&1 | tee "$crlog"
	criterion_round "threads over $prov" "$prov" $?
	# connections that share libfabric CQs (rpma_fabric(7), CQ groups): every
	# one that can, as grouped.sh does over tcp's message endpoints.  Left out
	# there (HACKING.md): conn/disconnect_while_connecting (over shm a server's
	# accept failed with a provider error at round 44 of a CI run) and
	# conn/request_burst (over tcp;ofi_rxm the server's side of one client got
	# UNREACHABLE in a CI run and once in a run at -j2)
	gout='conn/disconnect_while_connecting|conn/request_burst'
	[ -n "$out" ] && gout+="|$out"
	echo "== integration and threads over FI_PROVIDER=$prov, RPMA_FABRIC_OWN_CQS=0 (left out: $gout)"
	RPMA_FABRIC_OWN_CQS=0 RPMA_PROVIDER=fabric FI_PROVIDER=$prov \
		"$b/tests/integration/test_integration" -j1 --timeout 60 --filter "!($gout)" 2>&1 |
		tee "$crlog"
	criterion_round "integration over $prov, RPMA_FABRIC_OWN_CQS=0" "$prov, shared CQs" $?
	RPMA_FABRIC_OWN_CQS=0 RPMA_PROVIDER=fabric FI_PROVIDER=$prov \
		"$b/tests/threads/test_threads" --timeout 120 "${tfilter[@]}" 2>&1 | tee "$crlog"
	criterion_round "threads over $prov, RPMA_FABRIC_OWN_CQS=0" "$prov, shared CQs" $?
	# the fault walk (tests/faultwalk/faultwalk.c).  Over tcp;ofi_rxm and
	# tcp without its data-path points: where the client's
	# rpma_conn_get_event_fd() fails right after the server accepted, both
	# connections are deleted at once, and libfabric 1.17 accepts an rxm
	# connection (accept() in its progress, the endpoint's listening socket)
	# while that endpoint closes: the accepted socket stays open after the
	# domain and the fabric closed (strace: accept(23) = 55 in one thread,
	# close(23) in the other).  libfabric 2.1's tcp reliable datagrams leave
	# a socket open at the same point too: once in a CI run, and in 1 of
	# 300 runs of that point alone under load (FAULTWALK_ONLY)
	fw_env=()
	case $prov in
	shm) ;;
	*) fw_env=(FAULTWALK_DATAPATH=0) ;;
	esac
	# twice: with CQs of their own, and shared (RPMA_FABRIC_OWN_CQS=0)
	for own in '' 0; do
		[ -x "$b/tests/faultwalk/faultwalk" ] || break
		echo "== faultwalk over FI_PROVIDER=$prov ${fw_env[*]} RPMA_FABRIC_OWN_CQS=${own:-(default)}"
		if ! env RPMA_FABRIC_OWN_CQS="$own" RPMA_PROVIDER=fabric FI_PROVIDER="$prov" \
			FAULTWALK_QUIET=1 FAULTWALK_JOBS=2 "${fw_env[@]}" \
			"$b/tests/faultwalk/faultwalk" fabric 127.0.0.1; then
			failed "faultwalk over $prov${own:+, RPMA_FABRIC_OWN_CQS=$own}"
			tally_one fail
		else
			tally_one pass
		fi
	done
	if [ "$prov" = shm ]; then
		n_failed=${#failed[@]}
		stale_names
		if [ $? = 2 ]; then
			tally_one skip
		elif [ ${#failed[@]} != "$n_failed" ]; then
			tally_one fail
		else
			tally_one pass
		fi
		# the branch of providers that ask for FI_MR_LOCAL (efa): the
		# control port registered and its descriptors passed; shm
		# ignores descriptors, so this proves the registrations and
		# their release, not their use
		echo "== connections and data over FI_PROVIDER=shm, RPMA_FABRIC_MR_LOCAL=1"
		RPMA_FABRIC_MR_LOCAL=1 RPMA_PROVIDER=fabric FI_PROVIDER=shm \
			"$b/tests/integration/test_integration" -j1 --timeout 60 \
			--filter '@(conn|data)/*' 2>&1 | tee "$crlog"
		criterion_round "RPMA_FABRIC_MR_LOCAL=1 over shm" "shm, RPMA_FABRIC_MR_LOCAL=1" $?
		# the way of a provider without FI_DIRECTED_RECV (every one here
		# grants it): the peers made without it, as their log lines at
		# level info say, and connections and messages as usual
		echo "== connections and data over FI_PROVIDER=shm, RPMA_FABRIC_TEST_NO_DIRECTED_RECV=1"
		RPMA_LOG_LEVEL=info RPMA_FABRIC_TEST_NO_DIRECTED_RECV=1 RPMA_PROVIDER=fabric \
			FI_PROVIDER=shm "$b/tests/integration/test_integration" -j1 --timeout 60 \
			--filter '@(conn|data)/*' >"$exlog" 2>&1
		nd_rc=$?
		grep -v '\*INFO\*' "$exlog" | grep -v '\*NOTICE\*' | tee "$crlog"
		without=$(grep -c 'reliable datagrams, no directed receives' "$exlog")
		with=$(grep -c 'reliable datagrams, directed receives' "$exlog")
		echo "peers made without directed receives: $without, with: $with"
		# the peers' lines count as one more test
		lines=pass
		[ "$without" != 0 ] && [ "$with" = 0 ] || lines=fail
		tally_criterion "$crlog" "$nd_rc"
		tally_one $lines
		if [ "$nd_rc" != 0 ] || [ $lines = fail ]; then
			failed "RPMA_FABRIC_TEST_NO_DIRECTED_RECV=1 over shm"
			criterion_fails "shm, RPMA_FABRIC_TEST_NO_DIRECTED_RECV=1"
		fi
	fi
	# every example pair (as make check runs them) and the replication demo
	echo "== examples over FI_PROVIDER=$prov"
	ex_pass=0 ex_fail=0
	for f in "$src"/examples/tests/*.example; do
		n=$(basename "$f" .example)
		if RPMA_PROVIDER=fabric FI_PROVIDER=$prov top_builddir=$b \
			bash "$src/examples/run-example.sh" "$f" >"$exlog" 2>&1; then
			ex_pass=$((ex_pass + 1))
		else
			echo "FAIL: example $n over $prov:"
			sed 's/^/    /' "$exlog"
			ex_fail=$((ex_fail + 1))
		fi
	done
	if RPMA_PROVIDER=fabric FI_PROVIDER=$prov top_builddir=$b \
		bash "$src/examples/replicate/demo-test.sh" >"$exlog" 2>&1; then
		ex_pass=$((ex_pass + 1))
	else
		echo "FAIL: the replication demo over $prov:"
		sed 's/^/    /' "$exlog"
		ex_fail=$((ex_fail + 1))
	fi
	echo "examples over $prov: $ex_pass passed, $ex_fail failed"
	tally_pass=$((tally_pass + ex_pass)) tally_fail=$((tally_fail + ex_fail))
	[ $ex_fail = 0 ] || failed "$ex_fail example(s) over $prov"
	shm_cleanup
done
[ $ran = 1 ] || exit 77
if [ $fail != 0 ]; then
	msg=$(printf '%s; ' "${failed[@]}")
	echo "rdm.sh: failed: ${msg%; }"
	cat "$crlog.fails" 2>/dev/null
fi
tally_line rdm.sh
exit $fail
