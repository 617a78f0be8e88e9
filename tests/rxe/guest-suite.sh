#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# guest-suite.sh -- every guest-side test of 'make check' in ONE boot of the
# Soft-RoCE guest (tests/rxe/run-in-guest.sh)
#
# Usage: tests/rxe/guest-suite.sh [PART...]
# Parts, run in this order (default: all of them):
#   verbs         the integration suite, RPMA_PROVIDER=verbs, on the guest's
#                 rxe address
#   fabric-verbs  the integration suite, RPMA_PROVIDER=fabric over
#                 libfabric's own verbs provider on rxe (FI_PROVIDER=verbs)
#   threads       the multi-threaded scenarios (tests/threads), RPMA_PROVIDER=verbs
#   examples      every examples/tests/*.example pair, RPMA_PROVIDER=verbs
#   interop       the four pairings with upstream librpma (Debian librpma0),
#                 tests/interop/interop-pairs.sh
#   faultwalk     fault injection, RPMA_PROVIDER=verbs: every allocation and
#                 every provider call of a full scenario fails in turn
#                 (tests/faultwalk/faultwalk verbs $RPMA_TESTING_IP); the
#                 walk counts as one test
#   native        (the trixie guest only) tests/rxe/native-matrix.sh: which
#                 path each flush and atomic write takes (native or APM,
#                 DRAM and device-DAX regions, RPMA_VERBS_NATIVE_FLUSH=0),
#                 and ours with upstream librpma 1.3 (the trixie root's) and
#                 1.2 (the host's .so) in both directions; each check counts
#                 as one test, failures of upstream's own making as skipped
#   memcheck      integration scenarios once more under valgrind memcheck,
#                 RPMA_PROVIDER=verbs: by default the subset MEMCHECK_SUBSET
#                 below (valgrind inside TCG costs minutes per scenario), the
#                 whole suite with GUEST_SUITE_MEMCHECK=full
#
# Each part prints a header line ("==== PART: ..."), its own output (the
# Criterion parts their "Synthesis" line) and a result line ("---- PART:
# PASS|FAIL|NOT RUN ...").  The last lines sum everything up; the very last
# one is "<N> passed, <N> failed, <N> skipped" (each Criterion scenario, each
# example, each interop run and the memcheck verdict count as one test).
# The line before it repeats the sums in the form of a Criterion synthesis
# line, for tools that read the last one.
#
# Known failures: tests/rxe/known-failures.txt lists scenarios of a part that
# fail because of a library defect someone is fixing (part, scenario,
# reason).  They still run; when they fail they are reported one by one as
# "KNOWN FAILURE" and counted as skipped, never as passed; any other failure
# fails the suite.  A listed scenario that passes is reported (remove it).
#
# Environment:
#   RPMA_GUEST=0          skip everything (exit 77, loudly)
#   GUEST_SUITE_STACK     host (default): the host's kernel and root; trixie:
#                         the trixie guest (run-in-guest.sh RXE_STACK=trixie,
#                         kernel 6.12 with native FLUSH and ATOMIC WRITE, an
#                         NVDIMM as /dev/dax0.0) running a build made in the
#                         trixie root by tests/rxe/trixie-build.sh in
#                         GUEST_SUITE_TRIXIE_DIR (default $top_builddir/trixie,
#                         where the trixie lane builds); default parts there:
#                         verbs threads examples native faultwalk memcheck
#   top_builddir          the build tree (make check sets it; default: .)
#   top_srcdir            the source tree (default: this script's ../..)
#   GUEST_SUITE_JOBS      Criterion's parallel jobs in the guest (default 2)
#   GUEST_SUITE_MEMCHECK  subset (default), full, or a Criterion filter
#                         (e.g. 'api/*'): the scenarios under memcheck
#   GUEST_SUITE_PANIC_RETRY  1 (default): after a kernel panic of the guest,
#                         the parts that did not finish run once more in a
#                         new boot (the summary says so); 0: no second boot
#   RXE_*                 passed to run-in-guest.sh (timeouts, memory, ...)
# Logs, TAP files and valgrind logs stay in $top_builddir/tests/rxe/guest-suite.d.
#
# Exit status: 0 every counted test passed, 1 something failed, 77 skipped
# (RPMA_GUEST=0, or the guest cannot start here), 99 a broken set-up.

# make check may start us with sh: the rest needs bash
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi

set -uo pipefail

readonly ALL_PARTS=(verbs fabric-verbs threads examples interop native faultwalk memcheck)
readonly TRIXIE_PARTS=(verbs threads examples native faultwalk memcheck)

# the scenarios the memcheck part runs by default: between them they go
# through every verbs-provider file (connection set-up and both orders of
# teardown, private data, a refused accept, reads, writes, flushes, sends,
# receives, immediate data, the zero-length forms, a receive CQ with a shared
# channel, an SRQ over two connections, error completions).  Under TCG each
# process valgrind starts costs about a minute (Criterion runs every scenario
# in a process of its own), so the whole suite (~27 min) does not fit.
readonly MEMCHECK_SUBSET=(conn/establish_pdata_close data/write_flush_read data/send_recv
	cq/rcq_and_shared_channel cq/srq_two_connections errors/bad_remote_key verbs/pdata_limits)

# ------------------------------------------------------------ common helpers

# now_ms -- milliseconds of the monotonic-enough wall clock
now_ms() {
	local t=${EPOCHREALTIME//[!0-9]/}
	echo $((t / 1000))
}

# secs MS -- milliseconds as seconds with one decimal
secs() {
	printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100))
}

# valid_part NAME -- is NAME one of the parts?
valid_part() {
	local p
	for p in "${ALL_PARTS[@]}"; do
		[[ $p == "$1" ]] && return 0
	done
	return 1
}

# -------------------------------------------------------------- in the guest

# record PART STATUS PASSED FAILED SKIPPED MS NOTE -- one line of the results file
record() {
	printf '%s|%s|%d|%d|%d|%d|%s\n' "$@" >>"$RESULTS"
	local what="$2 ($3 passed, $4 failed, $5 skipped)"
	[[ $2 == "NOT RUN" ]] && what="NOT RUN: $7"
	[[ $2 != "NOT RUN" && -n $7 ]] && what+="; $7"
	printf -- '---- %s: %s in %s s\n\n' "$1" "$what" "$(secs "$6")"
}

# known_failures PART -- the scenarios of PART listed as known failures (lines
# of "PART" on every stack, of "PART@STACK" on that stack only)
known_failures() {
	[[ -r $KNOWN ]] || return 0
	awk -v part="$1" -v tagged="$1@${GUEST_SUITE_STACK:-host}" \
		'!/^[[:space:]]*(#|$)/ && ($1 == part || $1 == tagged) { print $2 }' "$KNOWN"
}

# is_known LIST NAME -- NAME is in the newline-separated LIST
is_known() {
	[[ -n $1 ]] && grep -qxF -- "$2" <<<"$1"
}

# run_criterion PART TIMEOUT CMD... -- run an integration binary with a TAP
# report; sets C_PASSED C_FAILED C_SKIPPED C_KNOWN C_NOTE
run_criterion() {
	local part=$1 limit=$2
	shift 2
	local tap=$LOGDIR/$part.tap known rc=0
	rm -f "$tap"
	known=$(known_failures "$part")
	timeout -k 10 "$limit" "$@" --tap="$tap" 2>&1 | grep -v '^\[RUN \]'
	rc=${PIPESTATUS[0]}
	C_PASSED=0 C_FAILED=0 C_SKIPPED=0 C_KNOWN=0 C_NOTE=""
	if [[ ! -s $tap ]]; then
		C_FAILED=1
		C_NOTE="no TAP report (exit status $rc)"
		[[ $rc == 124 ]] && C_NOTE="timed out after ${limit}s"
		return
	fi
	local line name fixed=() failed_names=()
	while IFS= read -r line; do
		case $line in
		"ok - "*"# SKIP test was skipped"*) ;; # left out by --filter
		"ok - "*"# SKIP"*) C_SKIPPED=$((C_SKIPPED + 1)) ;;
		"ok - "*)
			name=${line#ok - }
			name=${name%% *}
			if is_known "$known" "$name"; then
				fixed+=("$name")
			fi
			C_PASSED=$((C_PASSED + 1))
			;;
		"not ok - "*)
			name=${line#not ok - }
			name=${name%% *}
			if is_known "$known" "$name"; then
				echo "KNOWN FAILURE: $part: $name ($(known_reason "$part" "$name"))"
				C_KNOWN=$((C_KNOWN + 1))
				C_SKIPPED=$((C_SKIPPED + 1))
			else
				echo "FAILED: $part: $name"
				failed_names+=("$name")
				C_FAILED=$((C_FAILED + 1))
			fi
			;;
		esac
	done <"$tap"
	for name in "${fixed[@]}"; do
		echo "NOTE: $part: $name is listed in $(basename "$KNOWN") but passed: remove it from the list"
	done
	if [[ $rc != 0 && $C_FAILED == 0 && $C_KNOWN == 0 ]]; then
		# the binary failed outside its scenarios (crash at exit, time limit)
		C_FAILED=1
		C_NOTE="exit status $rc without a failed scenario"
		[[ $rc == 124 ]] && C_NOTE="timed out after ${limit}s"
	fi
	# the summary (the tail a CI log keeps) names what failed
	if [[ ${#failed_names[@]} -gt 0 ]]; then
		C_NOTE+="${C_NOTE:+; }failed: ${failed_names[*]}"
	fi
	if [[ $C_KNOWN -gt 0 ]]; then
		C_NOTE+="${C_NOTE:+; }$C_KNOWN known failure(s) counted as skipped"
	fi
}

# known_reason PART NAME -- the reason given in the list
known_reason() {
	awk -v part="$1" -v tagged="$1@${GUEST_SUITE_STACK:-host}" -v name="$2" \
		'($1 == part || $1 == tagged) && $2 == name {
		$1 = ""; $2 = ""; sub(/^[[:space:]]+/, ""); print; exit }' "$KNOWN"
}

# part_criterion PART -- one of the integration-suite parts
part_criterion() {
	local part=$1 t0 bin=tests/integration/test_integration
	[[ $part == threads ]] && bin=tests/threads/test_threads
	t0=$(now_ms)
	if [[ ! -x $BUILDDIR/$bin ]]; then
		record "$part" "NOT RUN" 0 0 0 $(($(now_ms) - t0)) \
			"$bin was not built (Criterion missing?)"
		return
	fi
	bin=$BUILDDIR/$bin
	local env=() limit=900 pre=() filter=()
	case $part in
	verbs)
		echo "==== verbs: the integration suite, RPMA_PROVIDER=verbs on $RPMA_TESTING_IP ($RXE_DEVICE)"
		env=(RPMA_PROVIDER=verbs)
		;;
	fabric-verbs)
		echo "==== fabric-verbs: the integration suite, RPMA_PROVIDER=fabric FI_PROVIDER=verbs on $RPMA_TESTING_IP ($RXE_DEVICE)"
		if ! command -v fi_info >/dev/null; then
			record "$part" "NOT RUN" 0 0 0 $(($(now_ms) - t0)) "fi_info not found (libfabric-bin)"
			return
		fi
		if ! fi_info -p verbs -t FI_EP_MSG >"$LOGDIR/fi_info.txt" 2>&1; then
			cat "$LOGDIR/fi_info.txt"
			record "$part" "NOT RUN" 0 0 0 $(($(now_ms) - t0)) \
				"libfabric lists no verbs FI_EP_MSG provider on $RXE_DEVICE"
			return
		fi
		grep -E 'provider:|domain:|fabric:' "$LOGDIR/fi_info.txt" | sort -u | sed 's/^/    fi_info: /'
		env=(RPMA_PROVIDER=fabric FI_PROVIDER=verbs)
		;;
	threads)
		echo "==== threads: the multi-threaded scenarios (tests/threads), RPMA_PROVIDER=verbs on $RPMA_TESTING_IP ($RXE_DEVICE)"
		env=(RPMA_PROVIDER=verbs)
		;;
	memcheck)
		local mc=${GUEST_SUITE_MEMCHECK:-subset}
		if [[ $mc == full ]]; then
			echo "==== memcheck: the whole integration suite under valgrind memcheck, RPMA_PROVIDER=verbs"
		elif [[ $mc != subset ]]; then
			filter=(--filter "$mc")
			echo "==== memcheck: the integration scenarios matching '$mc' under valgrind memcheck, RPMA_PROVIDER=verbs"
		else
			filter=(--filter "@($(
				IFS='|'
				echo "${MEMCHECK_SUBSET[*]}"
			))")
			echo "==== memcheck: ${#MEMCHECK_SUBSET[@]} integration scenarios under valgrind memcheck, RPMA_PROVIDER=verbs (GUEST_SUITE_MEMCHECK=full for all):"
			echo "    ${MEMCHECK_SUBSET[*]}"
		fi
		if ! command -v valgrind >/dev/null; then
			record "$part" "NOT RUN" 0 0 0 $(($(now_ms) - t0)) "valgrind not found"
			return
		fi
		rm -rf "$LOGDIR/valgrind"
		mkdir -p "$LOGDIR/valgrind"
		# valgrind slows the survivor of a peer-kill scenario, not the transport
		env=(RPMA_PROVIDER=verbs PEERKILL_SLACK_MS=10000)
		# the whole suite under valgrind takes ~45 min of TCG on a busy host
		limit=2400
		[[ ${GUEST_SUITE_MEMCHECK:-subset} == full ]] && limit=5400
		# shellcheck disable=SC2054 # the commas belong to valgrind's options
		pre=("$BUILDDIR/libtool" --mode=execute valgrind --tool=memcheck --trace-children=yes
			--vgdb=no --read-inline-info=no --leak-check=full --show-leak-kinds=definite,indirect
			--errors-for-leak-kinds=definite,indirect --num-callers=30
			--log-file="$LOGDIR/valgrind/vg.%p.log")
		;;
	esac
	# memcheck: one at a time (two valgrind workers at once in the guest
	# slowed scenarios past their time limit, and Criterion advises against it)
	local jobs=${GUEST_SUITE_JOBS:-2}
	[[ $part == memcheck ]] && jobs=1
	# one scenario: 60 s at most, 300 s (the scenarios' own limit) under valgrind
	# and a line per scenario (with what it measured: inline limit, caps, ...)
	[[ $part != memcheck ]] && filter+=(--timeout 60 --verbose=0)
	run_criterion "$part" "$limit" env "${env[@]}" "${pre[@]}" "$bin" -j"$jobs" "${filter[@]}"
	local passed=$C_PASSED failed=$C_FAILED skipped=$C_SKIPPED note=$C_NOTE
	if [[ $part == memcheck ]]; then
		# the verdict of memcheck itself counts as one more test
		local logs bad=() killed=0 f
		logs=$(find "$LOGDIR/valgrind" -name 'vg.*.log' | wc -l)
		for f in "$LOGDIR"/valgrind/vg.*.log; do
			[[ -e $f ]] || continue
			grep -q 'ERROR SUMMARY: 0 errors' "$f" && continue
			# a process SIGKILLed by its scenario (errors/peer_killed,
			# peerkill/*) ends without a summary: fine when valgrind
			# reported nothing but its banner until then
			if ! grep -q 'ERROR SUMMARY' "$f" &&
				! grep -Ev '^==[0-9]+== (Memcheck|Copyright|Using Valgrind|Command:|Parent PID:|$)' "$f" |
				grep -q .; then
				killed=$((killed + 1))
				continue
			fi
			bad+=("$f")
		done
		[[ $killed -gt 0 ]] &&
			echo "memcheck: $killed processes were killed before valgrind's summary, with no report until then (SIGKILLed peers)"
		if [[ $logs -eq 0 ]]; then
			echo "memcheck: no valgrind log was written"
			failed=$((failed + 1))
		elif [[ ${#bad[@]} -gt 0 ]]; then
			echo "memcheck: ${#bad[@]} of $logs processes had errors:"
			for f in "${bad[@]}"; do
				echo "----- $f"
				sed -n '/^==[0-9]*== [A-Z].*/,$p' "$f" | head -80
			done
			failed=$((failed + 1))
			note+="${note:+; }memcheck errors in ${#bad[@]} of $logs processes"
		else
			echo "memcheck: $logs processes, no errors, no definite or indirect leaks"
			passed=$((passed + 1))
		fi
	fi
	local status=PASS
	[[ $failed -gt 0 ]] && status=FAIL
	record "$part" "$status" "$passed" "$failed" "$skipped" $(($(now_ms) - t0)) "$note"
}

# ours_ok BIN -- BIN, run with LD_LIBRARY_PATH=$OUR_LIBS, loads our librpma
# (not the system's upstream one, which has the same soname)
ours_ok() {
	local lib
	lib=$(LD_LIBRARY_PATH=$OUR_LIBS ldd "$1" 2>/dev/null | awk '$1 == "librpma.so.0" { print $3 }')
	[[ -z $lib || $lib == "$OUR_LIBS"/* ]]
}

# shadow_examples DIR -- a copy of the build tree's examples/ in DIR whose
# programs are the real binaries (libtool's .libs/), not libtool's wrapper
# scripts: each wrapper costs several process starts, slow in the guest.
# They need LD_LIBRARY_PATH=$OUR_LIBS.  Prints DIR when that works.
shadow_examples() {
	local dir=$1 d b real n=0
	[[ -d $OUR_LIBS ]] || return 1
	for d in "$BUILDDIR"/examples/*/; do
		for b in server client; do
			real=$d.libs/$b
			[[ -x $real ]] || continue
			mkdir -p "$dir/examples/$(basename "$d")" || return 1
			ln -s "$real" "$dir/examples/$(basename "$d")/$b" || return 1
			n=$((n + 1))
		done
	done
	[[ $n -gt 0 ]] && ours_ok "$dir/examples/connection/server" && echo "$dir"
}

# part_examples -- every example pair over verbs
part_examples() {
	local t0 passed=0 failed=0 f name rc out
	t0=$(now_ms)
	echo "==== examples: every examples/tests/*.example, RPMA_PROVIDER=verbs on $RPMA_TESTING_IP"
	local runner=$SRCDIR/examples/run-example.sh
	local list=("$SRCDIR"/examples/tests/*.example)
	if [[ ! -f $runner || ! -e ${list[0]} ]]; then
		record examples "NOT RUN" 0 0 0 $(($(now_ms) - t0)) "no examples/run-example.sh or examples/tests"
		return
	fi
	local tree=$BUILDDIR shadow
	if shadow=$(shadow_examples "${TMPDIR:-/tmp}/guest-suite-examples"); then
		tree=$shadow
		echo "    (the programs of $BUILDDIR/examples/*/.libs, LD_LIBRARY_PATH=$OUR_LIBS)"
	fi
	for f in "${list[@]}"; do
		name=$(basename "$f" .example)
		out=$LOGDIR/example-$name.log
		local e0
		e0=$(now_ms)
		LD_LIBRARY_PATH=$OUR_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} RPMA_PROVIDER=verbs \
			top_builddir=$tree RPMA_EXAMPLE_ADDR=$RPMA_TESTING_IP \
			bash "$runner" "$f" >"$out" 2>&1
		rc=$?
		if [[ $rc == 0 ]]; then
			printf 'PASS: example %-24s %6s s\n' "$name" "$(secs $(($(now_ms) - e0)))"
			passed=$((passed + 1))
		else
			printf 'FAIL: example %-24s %6s s (exit %d):\n' "$name" "$(secs $(($(now_ms) - e0)))" "$rc"
			sed 's/^/    /' "$out"
			failed=$((failed + 1))
		fi
	done
	local status=PASS
	[[ $failed -gt 0 ]] && status=FAIL
	record examples "$status" "$passed" "$failed" 0 $(($(now_ms) - t0)) ""
}

# part_interop -- the four pairings with upstream librpma, both flush modes
part_interop() {
	local t0 ours=$BUILDDIR/tests/interop upstream=$BUILDDIR/tests/interop/upstream p
	t0=$(now_ms)
	echo "==== interop: our librpma and upstream's (Debian librpma0), four pairings x two flush modes"
	for p in "$ours/interop-server" "$ours/interop-client"; do
		if [[ ! -x $p ]]; then
			record interop "NOT RUN" 0 0 0 $(($(now_ms) - t0)) "$p was not built"
			return
		fi
	done
	for p in "$upstream/interop-server" "$upstream/interop-client"; do
		if [[ ! -x $p ]]; then
			record interop "NOT RUN" 0 0 0 $(($(now_ms) - t0)) \
				"$p was not built: upstream librpma (librpma-dev) is not installed"
			return
		fi
	done
	# our programs without libtool's wrapper scripts (see shadow_examples),
	# through a one-line wrapper: the upstream ones must not see our library
	local fast=${TMPDIR:-/tmp}/guest-suite-interop
	mkdir -p "$fast"
	for p in interop-server interop-client; do
		if [[ -x $ours/.libs/$p ]] && ours_ok "$ours/.libs/$p"; then
			printf '#!/bin/sh\nLD_LIBRARY_PATH=%q exec %q "$@"\n' "$OUR_LIBS" "$ours/.libs/$p" >"$fast/$p"
			chmod +x "$fast/$p"
		else
			ln -sf "$ours/$p" "$fast/$p"
		fi
	done
	ours=$fast
	local logdir=$LOGDIR/interop rc
	rm -rf "$logdir"
	INTEROP_LOGDIR=$logdir timeout -k 10 900 bash "$SRCDIR/tests/interop/interop-pairs.sh" \
		"$ours" "$upstream" 2>&1
	rc=$?
	local passed=0 failed=0
	if [[ -f $logdir/summary.txt ]]; then
		passed=$(grep -c '^PASS' "$logdir/summary.txt")
		failed=$(grep -c '^FAIL' "$logdir/summary.txt")
	fi
	local note=""
	if [[ $rc != 0 && $failed == 0 ]]; then
		failed=1
		note="interop-pairs.sh exited with status $rc"
	fi
	if [[ $passed -eq 0 && $failed -eq 0 ]]; then
		failed=1
		note="no pairing ran"
	fi
	local status=PASS
	[[ $failed -gt 0 ]] && status=FAIL
	record interop "$status" "$passed" "$failed" 0 $(($(now_ms) - t0)) "$note"
}

# part_faultwalk -- every failure point of tests/faultwalk over verbs (one test)
part_faultwalk() {
	local t0 bin=$BUILDDIR/tests/faultwalk/faultwalk log=$LOGDIR/faultwalk.log rc
	t0=$(now_ms)
	echo "==== faultwalk: every allocation and provider call of a full scenario fails in turn, RPMA_PROVIDER=verbs on $RPMA_TESTING_IP"
	if [[ ! -x $bin ]]; then
		record faultwalk "NOT RUN" 0 0 0 $(($(now_ms) - t0)) \
			"tests/faultwalk/faultwalk was not built (make check builds it)"
		return
	fi
	# a line per failure point goes to the log; violations and the summary show here
	# two children at once: the guest has two vCPUs
	timeout -k 10 600 env RPMA_PROVIDER=verbs FAULTWALK_TIMEOUT=60 FAULTWALK_JOBS=2 \
		"$bin" verbs "$RPMA_TESTING_IP" \
		>"$log" 2>&1
	rc=$?
	grep -E 'VIOLATION|never failed|^faultwalk:' "$log"
	local summary note=""
	summary=$(grep -E '^faultwalk: provider verbs: ' "$log" | tail -1)
	[[ -n $summary ]] && note=${summary#faultwalk: provider verbs: }
	case $rc in
	0) record faultwalk PASS 1 0 0 $(($(now_ms) - t0)) "$note" ;;
	77) record faultwalk FAIL 0 1 0 $(($(now_ms) - t0)) "$(grep -m1 SKIP "$log") (the guest has $RXE_DEVICE)" ;;
	*)
		[[ $rc == 124 ]] && note+="${note:+; }timed out after 600 s"
		[[ -z $note ]] && note="exit status $rc"
		record faultwalk FAIL 0 1 0 $(($(now_ms) - t0)) "$note (log: $log)"
		;;
	esac
}

# part_native -- tests/rxe/native-matrix.sh: the native paths and the interop matrix
part_native() {
	local t0 log=$LOGDIR/native.log rc passed failed known
	t0=$(now_ms)
	echo "==== native: the path of each flush and atomic write, interop with librpma 1.3 and 1.2"
	if [[ ! -x $BUILDDIR/tests/interop/upstream/interop-client ]]; then
		record native FAIL 0 1 0 $(($(now_ms) - t0)) \
			"tests/interop/upstream was not built (librpma-dev missing in the root?)"
		return
	fi
	local lib12=
	[[ -e $BUILDDIR/../lib12/librpma.so.0 ]] && lib12=$(cd "$BUILDDIR/../lib12" && pwd)
	timeout -k 10 900 bash "$SRCDIR/tests/rxe/native-matrix.sh" "$BUILDDIR" $lib12 >"$log" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|KNOWN|native-matrix):|^device caps|^native' "$log"
	grep -A16 '^FAIL' "$log" | grep '^    ' | head -60
	passed=$(grep -c '^PASS:' "$log")
	failed=$(grep -c '^FAIL:' "$log")
	known=$(grep -c '^KNOWN:' "$log")
	local note="$known upstream limits counted as skipped"
	[[ -z $lib12 ]] && note+="; librpma 1.2 not tested (no host librpma.so.0)"
	if [[ $rc != 0 && $failed == 0 ]]; then
		failed=1
		note+="; exit status $rc"
	fi
	local status=PASS
	[[ $failed -gt 0 ]] && status=FAIL
	record native "$status" "$passed" "$failed" "$known" $(($(now_ms) - t0)) "$note"
}

# in_guest PART... -- run the parts, one after the other
in_guest() {
	[[ ${RXE_GUEST:-} == 1 ]] || {
		echo "guest-suite.sh: --in-guest outside the guest" >&2
		exit 99
	}
	: >"$RESULTS"
	ulimit -l unlimited 2>/dev/null || true
	# each part sets the providers it runs over
	unset FI_PROVIDER RPMA_PROVIDER
	local kernel
	kernel=$(uname -r)
	echo "guest-suite: kernel $kernel, device $RXE_DEVICE on $RXE_NETDEV ($RPMA_TESTING_IP), parts: $*"
	local part
	for part in "$@"; do
		case $part in
		verbs | fabric-verbs | threads | memcheck) part_criterion "$part" ;;
		examples) part_examples ;;
		interop) part_interop ;;
		native) part_native ;;
		faultwalk) part_faultwalk ;;
		esac
	done
	echo "guest-suite: all parts done"
}

# ------------------------------------------------------------- on the host

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SRCDIR=${top_srcdir:-$here/../..}
SRCDIR=$(cd "$SRCDIR" && pwd -P) || exit 99
BUILDDIR=${top_builddir:-.}
BUILDDIR=$(cd "$BUILDDIR" && pwd -P) || exit 99
LOGDIR=$BUILDDIR/tests/rxe/guest-suite.d
OUR_LIBS=$BUILDDIR/.libs
RESULTS=$LOGDIR/results.txt
KNOWN=$SRCDIR/tests/rxe/known-failures.txt

if [[ ${1:-} == --in-guest ]]; then
	shift
	in_guest "$@"
	exit 0
fi

STACK=${GUEST_SUITE_STACK:-host}
# the guest side reads it too (known failures of one stack)
export GUEST_SUITE_STACK=$STACK
parts=("$@")
if [[ ${#parts[@]} -eq 0 ]]; then
	parts=("${ALL_PARTS[@]/native/}")
	[[ $STACK == trixie ]] && parts=("${TRIXIE_PARTS[@]}")
	mapfile -t parts < <(printf '%s\n' "${parts[@]}" | sed '/^$/d')
fi
for p in "${parts[@]}"; do
	valid_part "$p" || {
		echo "usage: $0 [PART...]   (parts: ${ALL_PARTS[*]})" >&2
		exit 99
	}
done

if [[ ${RPMA_GUEST:-1} == 0 ]]; then
	printf '\n*** SKIPPED: the Soft-RoCE guest tests (%s): RPMA_GUEST=0 ***\n\n' "${parts[*]}"
	exit 77
fi

guest_script=$here/guest-suite.sh
if [[ $STACK == trixie ]]; then
	# the tree built in the trixie root; the guest sees it at /work/rpma
	tdir=${GUEST_SUITE_TRIXIE_DIR:-$BUILDDIR/trixie}
	echo "guest-suite: building the tree in the trixie root ($tdir)"
	if ! bash "$here/trixie-build.sh" "$tdir"; then
		echo "guest-suite: FAILED: the build in the trixie root (tests/rxe/trixie-build.sh)"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	tdir=$(cd "$tdir" && pwd -P)
	# upstream 1.2 for the interop matrix: the host's (bookworm's) library
	rm -rf "$tdir/lib12"
	if [[ -e /usr/lib/x86_64-linux-gnu/librpma.so.0 ]]; then
		mkdir -p "$tdir/lib12" && cp -L /usr/lib/x86_64-linux-gnu/librpma.so.0 "$tdir/lib12/"
	fi
	BUILDDIR=$tdir/build SRCDIR=$tdir/src
	LOGDIR=$BUILDDIR/tests/rxe/guest-suite.d RESULTS=$LOGDIR/results.txt
	export RXE_STACK=trixie RXE_GUEST_CWD=/work/rpma
	guest_script=/work/rpma/src/tests/rxe/guest-suite.sh
fi
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR" || exit 99
# the guest sees the host's / read-only minus /tmp, /var/tmp and /run; the
# build tree (our current directory) is shared read-write; share the source
# tree too when it lives under one of those
[[ $STACK == trixie ]] || case $SRCDIR in
/tmp/* | /var/tmp/* | /run/*)
	RXE_SHARE_DIRS=${RXE_SHARE_DIRS:+$RXE_SHARE_DIRS:}$SRCDIR
	export RXE_SHARE_DIRS
	;;
esac
export top_srcdir=$SRCDIR top_builddir=$BUILDDIR
[[ $STACK == trixie ]] && export top_srcdir=/work/rpma/src top_builddir=/work/rpma/build
# the rig's own limit: boot plus every part (memcheck under TCG is the longest)
export RXE_TIMEOUT=${RXE_TIMEOUT:-4200}

t0=$(now_ms)
cd "$BUILDDIR" || exit 99
[[ $STACK == trixie ]] && { cd .. || exit 99; }
# run_guest PART... -- one boot running the parts; its output also in guest-run.log
run_guest() {
	bash "$here/run-in-guest.sh" bash "$guest_script" --in-guest "$@" 2>&1 |
		tee "$LOGDIR/guest-run.log"
	return "${PIPESTATUS[0]}"
}
rc=0
run_guest "${parts[@]}" || rc=$?
# A kernel panic of the guest (bookworm's rdma_rxe, Linux 6.1, has a NULL
# dereference in rxe_responder that user space can reach) is the kernel's
# defect, not a test result: the parts that did not finish run once more in
# a new boot, and the summary says so.  A second panic fails them.
panic_note=
if [[ $rc == 125 && ${GUEST_SUITE_PANIC_RETRY:-1} == 1 ]] &&
	grep -q 'the guest kernel panicked' "$LOGDIR/guest-run.log"; then
	declare -A first_done=()
	if [[ -f $RESULTS ]]; then
		while IFS='|' read -r part _; do first_done[$part]=1; done <"$RESULTS"
		cp "$RESULTS" "$LOGDIR/results.first"
	fi
	left=()
	for p in "${parts[@]}"; do [[ -n ${first_done[$p]:-} ]] || left+=("$p"); done
	cp "$LOGDIR/guest-run.log" "$LOGDIR/guest-run.panic.log"
	panic_note="the guest kernel panicked (rdma_rxe); the parts that had not finished (${left[*]}) ran again in a new boot"
	echo
	echo "guest-suite: *** $panic_note ***"
	echo
	rc=0
	run_guest "${left[@]}" || rc=$?
	if [[ -f $LOGDIR/results.first ]]; then
		cat "$LOGDIR/results.first" "$RESULTS" >"$LOGDIR/results.both" 2>/dev/null
		mv "$LOGDIR/results.both" "$RESULTS"
	fi
fi
total=$(($(now_ms) - t0))

if [[ $rc == 77 ]]; then
	printf '\n*** SKIPPED: the Soft-RoCE guest could not start here (see the rig message above); NOT RUN: %s ***\n\n' \
		"${parts[*]}"
	exit 77
fi

# the sums, from what the guest recorded
echo
echo "==== guest-suite summary"
passed=0 failed=0 skipped=0
declare -A done_parts=()
if [[ -f $RESULTS ]]; then
	while IFS='|' read -r part status p f s ms note; do
		done_parts[$part]=1
		if [[ $status == "NOT RUN" ]]; then
			printf '  %-13s NOT RUN: %s\n' "$part" "$note"
			continue
		fi
		printf '  %-13s %-4s %4d passed %4d failed %4d skipped %8s s%s\n' "$part" "$status" \
			"$p" "$f" "$s" "$(secs "$ms")" "${note:+  ($note)}"
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	done <"$RESULTS"
fi
for p in "${parts[@]}"; do
	if [[ -z ${done_parts[$p]:-} ]]; then
		printf '  %-13s FAIL: did not finish (guest exit status %d)\n' "$p" "$rc"
		failed=$((failed + 1))
	fi
done
[[ -n $panic_note ]] && echo "  NOTE: $panic_note"
if [[ $rc != 0 ]]; then
	echo "  the guest command exited with status $rc"
	[[ $failed == 0 ]] && failed=1
fi
echo "guest-suite: total ${total} ms ($(secs "$total") s) including the boot (see 'guest booted' above)"
echo "guest-suite totals -- Synthesis: Tested: $((passed + failed)) | Passing: $passed | Failing: $failed | Crashing: 0 | Skipped: $skipped"
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed == 0 ]]
