#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# root.sh -- print the path of a clean Debian bookworm root with Debian's librpma-dev, making it first when needed
#
# Usage: tests/debian/root.sh
# The root is what a user of Debian's librpma has: 'debootstrap
# --variant=minbase bookworm' from the mirror this machine's apt uses (as
# tests/trixie/root.sh finds it; RPMA_DEBIAN_MIRROR overrides it), then gcc,
# libc6-dev and Debian's librpma-dev (which brings Debian's librpma0).  It is
# cached in RPMA_DEBIAN_ROOT (default /var/cache/rpma-bookworm, outside any
# source tree) and reused; ROOT/.rpma-stamp marks a complete root.  Tests
# never change it: tests/debian/replace.sh works in a copy.  Needs root.
set -euo pipefail
root=${RPMA_DEBIAN_ROOT:-/var/cache/rpma-bookworm}
root=${root%/}
suite=bookworm
packages="gcc libc6-dev librpma-dev libibverbs-dev"

say() { echo "root.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap not found: install it (tools/deps-debian.txt)"
case $root in
/*) [ "$root" != / ] || die "RPMA_DEBIAN_ROOT must not be /" ;;
*) die "RPMA_DEBIAN_ROOT must be an absolute path, not '$root'" ;;
esac

# host_mirror -- the URI of the host's apt source for its own release (empty when none)
host_mirror() {
	local codename
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || return 0
	{
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -e 's/#.*//' -e 's/\[[^]]*\]//' |
			awk -v s="$codename" '$1 == "deb" && $3 == s { print $2 }'
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk -v s="$codename" '
				function flush() {
					if (deb && has) print uri
					deb = 0; has = 0; uri = ""
				}
				/^[[:space:]]*#/ { next }
				/^[[:space:]]*$/ { flush(); next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "uris:" { uri = $2 }
				tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) has = 1 }
				END { flush() }'
	} | grep -E '^(https?|file)://' | head -1
}

# in_root DIR COMMAND... -- run COMMAND in the root DIR with /proc and /dev, in a private mount namespace
in_root() {
	unshare --mount --propagation private -- sh -ec '
		mount -t proc proc "$0/proc"
		mount --rbind /dev "$0/dev"
		exec chroot "$0" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"' "$@"
}

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9
if [ ! -f "$root/.rpma-stamp" ]; then
	for d in "$root" "$root.new"; do
		if [ -e "$d" ]; then
			grep -q " ${d}[/ ]" /proc/self/mounts && die "$d is incomplete but has mounts in it"
			rm -rf --one-file-system "$d"
		fi
	done
	mirror=${RPMA_DEBIAN_MIRROR:-$(host_mirror)}
	say "making a Debian $suite root in $root (mirror: ${mirror:-the default of debootstrap})"
	start=$SECONDS
	# shellcheck disable=SC2086
	if ! debootstrap --variant=minbase "$suite" "$root.new" $mirror >"$root.debootstrap.log" 2>&1; then
		tail -20 "$root.debootstrap.log" >&2
		die "debootstrap failed (log: $root.debootstrap.log)"
	fi
	# shellcheck disable=SC2086
	in_root "$root.new" sh -ec 'apt-get update -qq; apt-get install -y -qq --no-install-recommends "$@" >/dev/null; apt-get clean' \
		sh $packages || die "installing $packages in $root.new failed"
	echo "$packages" >"$root.new/.rpma-stamp"
	mv "$root.new" "$root"
	say "made $root in $((SECONDS - start)) s"
elif [ "$(cat "$root/.rpma-stamp")" != "$packages" ]; then
	say "installing in $root: $packages"
	# shellcheck disable=SC2086
	in_root "$root" sh -ec 'apt-get update -qq; apt-get install -y -qq --no-install-recommends "$@" >/dev/null; apt-get clean' \
		sh $packages || die "installing $packages in $root failed"
	echo "$packages" >"$root/.rpma-stamp"
fi
echo "$root"
