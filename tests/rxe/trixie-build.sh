#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# trixie-build.sh -- build the tree in the Debian trixie root for the trixie Soft-RoCE guest
#
# Usage: tests/rxe/trixie-build.sh DIR
# Copies the source files into DIR/src (git's list in a git work tree, else
# everything but build*/; with fresh times, so that a DIR/build kept from an
# earlier run rebuilds what changed) and builds out of tree in DIR/build inside the
# trixie root (tests/trixie/enter.sh mounts DIR at /work/rpma): autoreconf,
# configure, make, and every test program (make check TESTS=).  The binaries
# link trixie's rdma-core 56, so they run in the trixie guest:
#   cd DIR && RXE_STACK=trixie RXE_GUEST_CWD=/work/rpma tests/rxe/run-in-guest.sh ...
# (the build tree is /work/rpma/build there).  Prints the build's log tail on
# failure.  Exit status: 0 built, 1 failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
dir=${1:?usage: trixie-build.sh DIR}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || exit 1

rm -rf "$dir/src" && mkdir -p "$dir/src" || exit 1
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c '
		for f do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar --null -T - -cf -) | tar -xmf - -C "$dir/src"
else
	(cd "$src" && tar --exclude='./build*' --exclude=autom4te.cache -cf - .) | tar -xmf - -C "$dir/src"
fi
[ -f "$dir/src/configure.ac" ] || {
	echo "trixie-build: copying the source into $dir/src failed"
	exit 1
}
# the root with the guest's packages (librpma-dev: the upstream interop programs)
# shellcheck disable=SC2046
bash "$src/tests/trixie/root.sh" $(sed -e 's/#.*//' "$here/trixie-guest-packages.txt") >/dev/null || {
	echo "trixie-build: no trixie root (tests/trixie/root.sh)"
	exit 1
}
# shellcheck disable=SC2016
TRIXIE_JOBS=${TRIXIE_JOBS:-2} TRIXIE_ENV=TRIXIE_JOBS bash "$src/tests/trixie/enter.sh" "$dir" sh -c '
	cd /work/rpma/src && autoreconf -fi >/work/rpma/autoreconf.log 2>&1 || { tail -20 /work/rpma/autoreconf.log; exit 1; }
	mkdir -p /work/rpma/build && cd /work/rpma/build || exit 1
	../src/configure -q >configure.log 2>&1 || { tail -20 configure.log; exit 1; }
	{ make -j"$TRIXIE_JOBS" && make -j"$TRIXIE_JOBS" check TESTS=; } >make.log 2>&1 || { tail -40 make.log; exit 1; }
	echo "trixie-build: built in $(pwd) with rdma-core $(pkg-config --modversion libibverbs)"'
