#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# enter.sh -- run a command in the trixie root with a host directory mounted at /work/rpma
#
# Usage: tests/trixie/enter.sh DIR [COMMAND [ARG...]]
# Runs COMMAND (default: an interactive bash) as root in the Debian trixie
# root of tests/trixie/root.sh (made first when needed), in DIR's view:
# DIR is bind-mounted at /work/rpma and the command starts there; /proc,
# /dev, /sys and a fresh tmpfs /tmp are mounted too.  Everything is mounted
# in a private mount namespace of the command (nothing shows on the host)
# and unmounted when it ends.  The environment is reset to PATH, HOME,
# LANG, TERM and the variables named in TRIXIE_ENV (space-separated names,
# e.g. TRIXIE_ENV="RPMA_CHURN_CYCLES FI_LOG_LEVEL").
# E.g. after tests/trixie/lane.sh build/trixie:
#   tests/trixie/enter.sh build/trixie sh -c 'cd build && tests/churn/churn 2000'
# Exit status: the command's; 1 when the root or the mounts cannot be had.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: enter.sh DIR [COMMAND [ARG...]]}
shift
dir=$(cd "$dir" && pwd) || exit 1
root=$(bash "$here/root.sh") || exit 1
[ $# -gt 0 ] || set -- bash
envs=(PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8 "TERM=${TERM:-dumb}")
for v in ${TRIXIE_ENV:-}; do
	[ -n "${!v+x}" ] && envs+=("$v=${!v}")
done
# a shared lock: root.sh (exclusive) does not change the root meanwhile
exec 9<"$root.lock" && flock -s 9 || exit 1
mkdir -p "$root/work/rpma" || exit 1
# shellcheck disable=SC2016
unshare --mount --propagation private -- bash -c '
	root=$1 dir=$2 n=$3
	shift 3
	envs=("${@:1:n}")
	shift "$n"
	unmount() { umount -R "$root/work/rpma" "$root/tmp" "$root/sys" "$root/dev" "$root/proc" 2>/dev/null; }
	trap unmount EXIT
	mount -t proc proc "$root/proc" &&
		mount --rbind /dev "$root/dev" &&
		mount --rbind /sys "$root/sys" &&
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" &&
		mount --bind "$dir" "$root/work/rpma" || exit 1
	chroot "$root" env -i "${envs[@]}" sh -c "cd /work/rpma && exec \"\$@\"" sh "$@"' \
	enter "$root" "$dir" "${#envs[@]}" "${envs[@]}" "$@"
