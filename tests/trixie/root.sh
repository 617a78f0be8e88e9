#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# root.sh -- print the path of a Debian trixie root with the build and test packages, making it first when needed
#
# Usage: tests/trixie/root.sh [PACKAGE...]
# Prints the root's path on stdout (nothing else goes there), after making
# sure that it exists, is complete and has every package of
# tests/trixie/packages.txt and of the arguments installed.  Other scripts
# (the trixie lane, a trixie guest) call it to share one cached root:
#   root=$(bash tests/trixie/root.sh) || exit 1
# How the root is made and kept: tests/debian/debian-root.sh.
# Environment:
#   RPMA_TRIXIE_ROOT    the root (default /var/cache/rpma-trixie): on the
#                       machine, outside any source tree, kept between runs
#   RPMA_TRIXIE_MIRROR  the Debian mirror to use (default: the one this
#                       machine's apt uses, else debootstrap's)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -n "${RPMA_TRIXIE_MIRROR:-}" ]; then
	export RPMA_ROOT_MIRROR=$RPMA_TRIXIE_MIRROR
fi
# shellcheck disable=SC2046
exec bash "$here/../debian/debian-root.sh" trixie "${RPMA_TRIXIE_ROOT:-/var/cache/rpma-trixie}" \
	$(sed -e 's/#.*//' "$here/packages.txt") "$@"
