#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdm.sh -- the integration scenarios and the thread tests over reliable-datagram
# endpoints (FI_EP_RDM, rpma_fabric(7) "RELIABLE-DATAGRAM ENDPOINTS"): libfabric's
# shm and tcp;ofi_rxm, which offer no message endpoint, so the fabric provider
# chooses reliable datagrams by itself.
#
# Issue 18 is not finished: the scenarios below that do not pass yet are left
# out, each with what was seen.  Everything else must pass.
#
# Skipped (exit 77) when RPMA_PROVIDER selects another provider or FI_PROVIDER is
# set by the caller; a libfabric provider that is not there is left out.
set -u
if [ -n "${RPMA_PROVIDER:-}" ] && [ "$RPMA_PROVIDER" != fabric ]; then
	echo "rdm.sh: RPMA_PROVIDER=$RPMA_PROVIDER, nothing to do"
	exit 77
fi
if [ -n "${FI_PROVIDER:-}" ]; then
	echo "rdm.sh: FI_PROVIDER=$FI_PROVIDER is set by the caller"
	exit 77
fi
b=${top_builddir:-.}

# not yet over shm (libfabric 1.17):
# - access/*, errors/bad_remote_key: an access the target refuses (a bad key,
#   a region without the right) is never reported to the initiator; its later
#   sends wait behind it, and the connection ends LOST by the keep-alives
# - conn/disconnect_while_connecting: a crash in shm when both sides of the
#   same process close at once, not fully avoided yet (fabric_rdm.c, gone list)
# - data/atomic_write_full_queue: a completion reported with another opcode
# - peerkill/stream_server_dies: an operation toward the dead server is never
#   completed (shm reports the failure without its context)
shm_out='access/*|errors/bad_remote_key|conn/disconnect_while_connecting'
shm_out="$shm_out|data/atomic_write_full_queue|peerkill/stream_server_dies"
# not yet over tcp;ofi_rxm (libfabric 1.17):
# - access/no_remote_write: the emulated write with immediate data to a region
#   without the right completes successfully (its send is not held back)
# - cq/sizes_legacy_calls_and_log: the CQ's descriptor did not become readable
# - cq/srq_memory_bounded: an SRQ connection's bounce buffers take 200 MiB
#   (they are sized from rxm's maximum message size)
# - data/atomic_write, data/atomic_write_full_queue: no completion within 5 s
# - errors/beyond_declared_size: no error completion within 5 s
rxm_out='access/no_remote_write|cq/sizes_legacy_calls_and_log|cq/srq_memory_bounded'
rxm_out="$rxm_out|data/atomic_write|data/atomic_write_full_queue|errors/beyond_declared_size"

# the endpoints of a process that dies or fails a test leave shm's files behind:
# remove the ones this run made
shm_before=$(mktemp "${TMPDIR:-/tmp}/rdm-shm.XXXXXX")
trap 'rm -f "$shm_before"' EXIT
ls /dev/shm >"$shm_before" 2>/dev/null || true
shm_cleanup() {
	ls /dev/shm 2>/dev/null | grep -Ex '[0-9]+:[0-9]+:[0-9]+|[0-9.]+:[0-9]+' |
		grep -vxF -f "$shm_before" | while read -r f; do rm -f "/dev/shm/$f"; done
}

fail=0 ran=0
for prov in shm 'tcp;ofi_rxm'; do
	if command -v fi_info >/dev/null && ! fi_info -p "$prov" -t FI_EP_RDM >/dev/null 2>&1; then
		echo "rdm.sh: libfabric has no $prov reliable-datagram provider here: left out"
		continue
	fi
	case $prov in
	shm) out=$shm_out ;;
	*) out=$rxm_out ;;
	esac
	ran=1
	echo "== integration over FI_PROVIDER=$prov (left out: $out)"
	if ! RPMA_PROVIDER=fabric FI_PROVIDER=$prov "$b/tests/integration/test_integration" -j2 \
		--timeout 60 --filter "!($out)"; then
		echo "FAIL: integration over $prov"
		fail=1
	fi
	echo "== threads over FI_PROVIDER=$prov"
	if ! RPMA_PROVIDER=fabric FI_PROVIDER=$prov "$b/tests/threads/test_threads" --timeout 120; then
		echo "FAIL: threads over $prov"
		fail=1
	fi
	shm_cleanup
done
[ $ran = 1 ] || exit 77
exit $fail
