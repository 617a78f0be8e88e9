#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# native-matrix.sh -- in the trixie Soft-RoCE guest: which path each operation takes, and the
# interop matrix with upstream librpma 1.3 (the root's librpma0) and 1.2 (a copy of its .so)
#
# Usage (in the guest, from the build tree): native-matrix.sh BUILD-DIR [LIB12-DIR]
# Checks, each counted as one test ("PASS:"/"FAIL:"/"KNOWN:" lines, a sum at the end):
#   - rpma-info reports native flush and native atomic write on the device;
#   - ours-ours over the interop programs with RPMA_LOG_LEVEL=debug: the debug
#     lines say native FLUSH for a device-DAX region of a server declaring
#     direct write to PMem, the APM read for a DRAM region (no native
#     persistent flush access: not announced) or without the declaration, native
#     ATOMIC_WRITE; with RPMA_VERBS_NATIVE_FLUSH=0 the APM read and the fenced
#     write.  A run that silently takes another path fails;
#   - ours with upstream 1.3 and 1.2, both directions, both flush types, DRAM and
#     device DAX, native on and off.  Combinations that fail because of the
#     upstream side are reported as KNOWN with the reason (not counted as passed).
# Environment: RPMA_TESTING_IP, RXE_DAX (set by run-in-guest.sh with RXE_PMEM=1).
set -u
b=${1:?usage: native-matrix.sh BUILD-DIR [LIB12-DIR]}
lib12=${2:-}
ip=${RPMA_TESTING_IP:?not in the guest}
dax=${RXE_DAX:-}
ours=$b/tests/interop/.libs
up=$b/tests/interop/upstream
export LD_LIBRARY_PATH=$b/.libs RPMA_PROVIDER=verbs
out=${TMPDIR:-/tmp}/native-matrix
rm -rf "$out" && mkdir -p "$out"
pass=0 fail=0 known=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
kn() { echo "KNOWN: $*"; known=$((known + 1)); }

echo "== rpma-info"
"$b/tools/rpma-info" "$ip" 2>&1 | tee "$out/info" || true
grep -q '^device caps: .*native_flush' "$out/info" && grep -q '^device caps: .*native_atomic_write' "$out/info" &&
	ok "rpma-info: the device reports native flush and atomic write" ||
	bad "rpma-info: no native flush / atomic write reported on rxe (kernel $(uname -r))"

port=7600
# run SIMPL CIMPL REGION MODE KNOB -- one server/client pair; sets RC and TAG
run() {
	local simpl=$1 cimpl=$2 region=$3 mode=$4 knob=$5 sdir cdir senv=() cenv=()
	TAG="$simpl-$cimpl.$region.$mode.native-$knob"
	sdir=$ours cdir=$ours
	case $simpl in ours) ;; 1.3) sdir=$up senv=(LD_LIBRARY_PATH=) ;; 1.2) sdir=$up senv=(LD_LIBRARY_PATH=$lib12) ;; esac
	case $cimpl in ours) ;; 1.3) cdir=$up cenv=(LD_LIBRARY_PATH=) ;; 1.2) cdir=$up cenv=(LD_LIBRARY_PATH=$lib12) ;; esac
	[ "$region" = dax ] && senv+=(INTEROP_DAX="$dax")
	[ "$knob" = off ] && senv+=(RPMA_VERBS_NATIVE_FLUSH=0) cenv+=(RPMA_VERBS_NATIVE_FLUSH=0)
	local extra=() ready=$out/$TAG.ready
	[ "$mode" = persistent ] && extra=(dw2pm)
	env "${senv[@]}" RPMA_LOG_LEVEL=debug "$sdir/interop-server" "$ip" $port "$ready" "${extra[@]}" \
		>"$out/$TAG.server" 2>&1 &
	local spid=$! i
	for i in $(seq 100); do [ -e "$ready" ] || ! kill -0 $spid 2>/dev/null && break; sleep 0.1; done
	RC=1
	if [ -e "$ready" ]; then
		env "${cenv[@]}" RPMA_LOG_LEVEL=debug timeout 60 "$cdir/interop-client" "$ip" $port \
			>"$out/$TAG.client" 2>&1
		RC=$?
	fi
	# a failed client leaves the server waiting for its alarm: end it
	[ $RC -ne 0 ] && { sleep 2; kill $spid 2>/dev/null; }
	wait $spid || RC=$((RC ? RC : 1))
	port=$((port + 1))
}

echo "== ours-ours: the path each operation took (RPMA_LOG_LEVEL=debug)"
for region in dram dax; do
	[ "$region" = dax ] && [ -z "$dax" ] && { bad "no RXE_DAX: no device DAX in the guest"; continue; }
	for mode in visibility persistent; do
		for knob in auto off; do
			run ours ours $region $mode $knob
			c=$out/$TAG.client
			fl=$(grep -o 'native FLUSH\|APM read' "$c" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
			aw=$(grep -o 'native ATOMIC_WRITE\|fenced inline RDMA WRITE' "$c" | sort -u | tr '\n' ';')
			want_fl="APM read" want_aw="fenced inline RDMA WRITE"
			if [ $knob = auto ]; then
				want_aw="native ATOMIC_WRITE"
				# announced: a region on pmem, from a target that declared
				# direct write to PMem (its peer configuration byte 0x81)
				[ $region = dax ] && [ $mode = persistent ] && want_fl="native FLUSH"
			fi
			if [ $RC -eq 0 ] && grep -q "$want_fl" "$c" && ! grep -v "$want_fl" <<<"$(grep -o 'native FLUSH\|APM read' "$c")" | grep -q . &&
				grep -q "$want_aw" "$c"; then
				ok "$TAG: flushes [$fl] atomic write [$aw]"
			else
				bad "$TAG (exit $RC): flushes [$fl] atomic write [$aw], expected $want_fl / $want_aw"
				tail -15 "$c" "$out/$TAG.server" | sed 's/^/    /'
			fi
		done
	done
done

echo "== interop with upstream librpma"
impls=(1.3)
[ -n "$lib12" ] && [ -e "$lib12/librpma.so.0" ] && impls+=(1.2)
for u in "${impls[@]}"; do
	for pair in "ours $u" "$u ours"; do
		set -- $pair
		for region in dram dax; do
			for mode in visibility persistent; do
				for knob in auto off; do
					run "$1" "$2" $region $mode $knob
					why=
					# the upstream side's own limits
					[ "$1" = 1.3 ] && [ $region = dram ] && why="1.3 refuses to register DRAM for persistent flush (EINVAL)"
					[ "$2" = 1.3 ] && [ $region = dram ] && [ $mode = persistent ] &&
						why="1.3 flushes natively whatever the region says: our DRAM region has no persistent flush access"
					if [ $RC -eq 0 ]; then
						[ -n "$why" ] && bad "$TAG passed though expected to fail ($why)" || ok "$TAG"
					elif [ -n "$why" ]; then
						kn "$TAG: $why"
					else
						bad "$TAG (exit $RC)"
						tail -8 "$out/$TAG.client" "$out/$TAG.server" | sed 's/^/    /'
					fi
				done
			done
		done
	done
done
echo "native-matrix: $pass passed, $fail failed, $known known (upstream limits)"
[ $fail -eq 0 ]
