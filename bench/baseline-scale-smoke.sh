#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# baseline-scale-smoke.sh -- a short run of bench/baseline-scale, so the per-connection anchor cannot rot
#
# Two tiny series (1 and 4 connections over libfabric tcp on 127.0.0.1):
# every object per connection, then EQ and CQs shared (-s).  Each must print
# a server and a client row per count, and with -s a connection must cost
# the server fewer descriptors than without (one socket against ten on
# libfabric 1.17).  Then bench/rdm-ep-cost over shm and tcp;ofi_rxm.  Not a
# measurement.  Skipped (77) without the program or without libfabric's tcp
# provider.
set -uo pipefail

b=${top_builddir:-.}/bench/baseline-scale
[[ -x $b ]] || {
	echo "baseline-scale not built: SKIP"
	exit 77
}
if command -v fi_info >/dev/null && ! fi_info -p tcp -t FI_EP_MSG >/dev/null 2>&1; then
	echo "libfabric offers no tcp FI_EP_MSG endpoint: SKIP"
	exit 77
fi
port=$((30000 + $$ % 20000))
fail=0
declare -A fdc
for mode in own shared; do
	counts=1,4
	args=(-c "$counts" -p "$port")
	[[ $mode == shared ]] && args+=(-s)
	port=$((port + 1))
	if ! out=$(FI_PROVIDER=tcp timeout 60 "$b" "${args[@]}" 2>&1); then
		echo "FAIL: baseline-scale ${args[*]} exited with an error:"
		echo "$out"
		fail=1
		continue
	fi
	echo "$out"
	for side in server client; do
		for n in 1 4; do
			if ! awk -v s="$side" -v n="$n" '$1 == s && $2 == n { f = 1 } END { exit !f }' <<<"$out"; then
				echo "FAIL: $mode: no $side row for $n connections"
				fail=1
			fi
		done
	done
	fdc[$mode]=$(awk '$1 == "server" && $2 == 4 { print $10 }' <<<"$out")
done
if [[ -n ${fdc[own]:-} && -n ${fdc[shared]:-} ]] &&
	! awk -v a="${fdc[shared]}" -v b="${fdc[own]}" 'BEGIN { exit !(a < b) }'; then
	echo "FAIL: sharing EQ and CQs did not lower the server's descriptors per connection (${fdc[shared]} vs ${fdc[own]})"
	fail=1
fi
# rdm-ep-cost: two reliable-datagram endpoints open together, then closed; the
# figures must say that an endpoint took heap (shm: 1.5 MB, rxm: 82 MB on 1.17)
e=${top_builddir:-.}/bench/rdm-ep-cost
for prov in shm 'tcp;ofi_rxm'; do
	[[ -x $e ]] || break
	if command -v fi_info >/dev/null && ! fi_info -p "$prov" -t FI_EP_RDM >/dev/null 2>&1; then
		echo "libfabric offers no $prov FI_EP_RDM endpoint: rdm-ep-cost not run over it"
		continue
	fi
	if ! out=$(timeout 60 "$e" -p "$prov" -n 2 -t 2>&1); then
		echo "FAIL: rdm-ep-cost -p $prov exited with an error:"
		echo "$out"
		fail=1
		continue
	fi
	echo "$out"
	if ! awk '/^per endpoint at the peak:/ { f = ($6 + 0 > 0) } END { exit !f }' <<<"$out"; then
		echo "FAIL: rdm-ep-cost -p $prov: no endpoint's heap measured"
		fail=1
	fi
done
exit $fail
