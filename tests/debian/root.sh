#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# root.sh -- print the path of a clean Debian bookworm root with Debian's librpma-dev, making it first when needed
#
# Usage: tests/debian/root.sh
# The root is what a user of Debian's librpma has: 'debootstrap
# --variant=minbase bookworm', then gcc, libc6-dev and Debian's librpma-dev
# (which brings Debian's librpma0); tests/debian/debian-root.sh makes and
# keeps it.  It is cached in RPMA_DEBIAN_ROOT (default
# /var/cache/rpma-bookworm, outside any source tree) and reused;
# RPMA_DEBIAN_MIRROR names another mirror than the one this machine's apt
# uses.  Tests never change it: tests/debian/replace.sh works in a copy.
# Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -n "${RPMA_DEBIAN_MIRROR:-}" ]; then
	export RPMA_ROOT_MIRROR=$RPMA_DEBIAN_MIRROR
fi
exec bash "$here/debian-root.sh" bookworm "${RPMA_DEBIAN_ROOT:-/var/cache/rpma-bookworm}" \
	gcc libc6-dev librpma-dev libibverbs-dev
