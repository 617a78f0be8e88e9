#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# selftest.sh -- check the Soft-RoCE rig (run-in-guest.sh) end to end
#
# Usage: tests/rxe/selftest.sh [--exit-codes]
#
# One guest boot runs: ibv_devices (lists rxe0), ibv_devinfo (port ACTIVE),
# an rping client/server exchange over rxe0 on $RPMA_TESTING_IP, and
# devcheck.c compiled on the host (as the project's tests are) to prove that
# host-built programs see rxe0 in the guest.  The programs are built and run
# from a fresh directory under ${TMPDIR:-/tmp}, which also checks that such a
# directory is visible in the guest.  --exit-codes boots twice more to check
# that the guest command's exit status comes back (false -> 1, exit 3 -> 3).
#
# Exit status: 0 pass, 77 skipped (the rig cannot run here), other: failure.

set -euo pipefail

readonly PINGS=10

# ----------------------------------------------------------- in the guest

in_guest() {
	step() { printf '\n== %s\n' "$*"; }
	fail() {
		printf '\nSELFTEST FAILED: %s\n' "$*"
		exit 1
	}

	[[ ${RXE_GUEST:-} == 1 ]] || fail "not in the guest"
	local dev=${RXE_DEVICE:?} ip=${RPMA_TESTING_IP:?}

	step "ibv_devices"
	ibv_devices | tee devices.txt
	grep -qw "$dev" devices.txt || fail "ibv_devices does not list $dev"

	step "ibv_devinfo -d $dev"
	ibv_devinfo -d "$dev" | tee devinfo.txt
	grep -q PORT_ACTIVE devinfo.txt || fail "$dev port is not ACTIVE"

	step "rping over $dev ($ip), $PINGS iterations"
	timeout 120 rping -s -a "$ip" -C "$PINGS" -v >rping-server.log 2>&1 &
	local server=$!
	# the client may start only once the server listens
	for _ in $(seq 150); do
		rdma res show cm_id | grep LISTEN >/dev/null && break
		kill -0 "$server" 2>/dev/null || break
		sleep 0.2
	done
	rdma res show cm_id
	rdma res show cm_id | grep LISTEN >/dev/null || {
		cat rping-server.log
		fail "rping server is not listening"
	}
	local crc=0 src=0
	timeout 120 rping -c -a "$ip" -C "$PINGS" -v >rping-client.log 2>&1 || crc=$?
	wait "$server" || src=$?
	echo "-- client (exit status $crc):"
	tail -n 3 rping-client.log
	echo "-- server (exit status $src):"
	tail -n 3 rping-server.log
	[[ $crc == 0 && $src == 0 ]] || fail "rping failed (client $crc, server $src)"
	local nc ns
	nc=$(grep -c 'ping data' rping-client.log || true)
	ns=$(grep -c 'ping data' rping-server.log || true)
	[[ $nc == "$PINGS" && $ns == "$PINGS" ]] ||
		fail "rping exchanged $nc (client) / $ns (server) of $PINGS pings"

	step "devcheck (built on the host)"
	if [[ -x ./devcheck ]]; then
		./devcheck "$dev" || fail "devcheck does not see an ACTIVE $dev"
	else
		echo "devcheck was not built on the host: check skipped"
	fi

	printf '\nSELFTEST PASSED (in the guest)\n'
}

if [[ ${1:-} == --in-guest ]]; then
	in_guest
	exit
fi

# ------------------------------------------------------------- on the host

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
run=$here/run-in-guest.sh
t0=$SECONDS

exit_codes=0
case ${1:-} in
"") ;;
--exit-codes) exit_codes=1 ;;
*)
	echo "usage: $0 [--exit-codes]" >&2
	exit 2
	;;
esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/rxe-selftest.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp "$here/selftest.sh" "$dir/"

# Like the project's programs: no -march=native (SIGILL under TCG).
read -r -a cc <<<"${CC:-cc}"
if "${cc[@]}" -O2 -Wall -Werror -o "$dir/devcheck" "$here/devcheck.c" -libverbs; then
	host_built="checked"
else
	echo "selftest: WARNING: cannot build devcheck.c (install gcc and libibverbs-dev):" \
		"the host-built program check is skipped" >&2
	host_built="SKIPPED (no compiler or libibverbs-dev)"
fi

rc=0
(cd "$dir" && "$run" bash ./selftest.sh --in-guest) || rc=$?
if [[ $rc == 77 ]]; then
	echo "selftest: SKIPPED (the rig cannot run here)" >&2
	exit 77
fi
if [[ $rc != 0 ]]; then
	echo "selftest: FAILED (guest checks exited with status $rc)" >&2
	exit 1
fi

if [[ $exit_codes == 1 ]]; then
	rc=0
	# (work directories inside ours: the expected failures keep their logs)
	RXE_WORKDIR=$dir/false "$run" false || rc=$?
	[[ $rc == 1 ]] || {
		echo "selftest: FAILED: 'false' in the guest gave status $rc, not 1" >&2
		exit 1
	}
	rc=0
	RXE_WORKDIR=$dir/exit3 "$run" sh -c 'exit 3' || rc=$?
	[[ $rc == 3 ]] || {
		echo "selftest: FAILED: 'exit 3' in the guest gave status $rc, not 3" >&2
		exit 1
	}
	echo "selftest: exit statuses come back from the guest (1, 3)"
fi

echo "selftest: PASSED in $((SECONDS - t0)) s (host-built program: $host_built)"
