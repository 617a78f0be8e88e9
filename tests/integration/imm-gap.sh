#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# imm-gap.sh -- a write with immediate data whose connection ends between its two posts
#
# Over libfabric's sockets the fabric provider emulates a write with
# immediate data as a write, then a send.  A write its target refuses ends
# the connection; when that happens before the send is posted (a preempted
# thread on a loaded machine: seen once in four stress runs of the trixie
# lane), the call must still return 0 and the operation complete once, with
# an error.  RPMA_FABRIC_TEST_IMM_GAP_US holds the thread 100 ms between the
# two posts, so access/no_remote_write takes that path every time; the log
# line the provider writes then must be there.  The scenario runs through
# sockets.sh (its settings, and its skips: exit 77, passed on).
here=$(dirname "$0")
out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT
RPMA_FABRIC_TEST_IMM_GAP_US=100000 RPMA_LOG_LEVEL=info \
	sh "$here/sockets.sh" --filter 'access/no_remote_write' >"$out" 2>&1
rc=$?
grep -E '^\[(access|----|FAIL|PASS|====)\]|was not posted|^sockets\.sh:' "$out"
[ "$rc" -eq 77 ] && exit 77
if [ "$rc" -ne 0 ]; then
	echo "imm-gap.sh: the scenario failed (status $rc)"
	exit 1
fi
if ! grep -q 'write with immediate data was not posted' "$out"; then
	echo "imm-gap.sh: the provider never met a connection that ended between the two posts"
	exit 1
fi
# the call returned 0: the send's refusal is an INFO line (above), no ERROR
if grep -q '\*ERROR\*.*sendmsg(imm)' "$out"; then
	grep '\*ERROR\*.*sendmsg(imm)' "$out"
	echo "imm-gap.sh: a call that returned 0 logged an error for its send"
	exit 1
fi
echo "imm-gap.sh: the write went, its send could not, the operation completed with an error"
