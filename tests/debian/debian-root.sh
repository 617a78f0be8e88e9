#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# debian-root.sh -- print the path of a cached Debian root of one suite with some packages, making it first when needed
#
# Usage: tests/debian/debian-root.sh SUITE ROOT [PACKAGE...]
# The one place where the test roots are made (tests/trixie/root.sh: the
# trixie lane's and guest's root; tests/debian/root.sh: a clean bookworm root
# for the package test).  Prints ROOT on stdout (nothing else goes there),
# after making sure that it exists, is complete and has every PACKAGE
# installed.
#
# ROOT is made with 'debootstrap --variant=minbase SUITE' from the Debian
# mirror this machine's apt uses (the URI of its sources entry for its own
# release), else debootstrap's default mirror; RPMA_ROOT_MIRROR overrides it.
# It is built in ROOT.new and renamed to ROOT when its packages are in;
# ROOT/.rpma-stamp lists the installed packages, one a line.  A ROOT without
# the stamp (interrupted before the rename's end) or a leftover ROOT.new is
# removed and made again; a stamp that lacks packages asked for gets them
# installed (apt-get in the root) and is updated.  Needs root (debootstrap,
# chroot) and the debootstrap package.  Nothing is mounted on the host:
# package installs run in a private mount namespace.  ROOT.lock serialises
# callers; the root is never removed while anything is mounted under it in
# this namespace.
set -euo pipefail

say() { echo "debian-root.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

[ $# -ge 2 ] || die "usage: debian-root.sh SUITE ROOT [PACKAGE...]"
suite=$1
root=${2%/}
shift 2
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap not found: install it (tools/deps.txt)"
command -v unshare >/dev/null || die "unshare not found (util-linux)"
case $root in
/*) ;;
*) die "the root must be an absolute path, not '$root'" ;;
esac
[ -n "$root" ] || die "the root must not be /"

# the packages asked for, one a line, sorted
wanted=$(printf '%s\n' "$@" | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)

# host_mirror -- the URI of the host's apt source for its own release (empty when none)
host_mirror() {
	local codename
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || return 0
	{
		# one-line format: deb [options] URI SUITE COMPONENT...
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -e 's/#.*//' -e 's/\[[^]]*\]//' |
			awk -v s="$codename" '$1 == "deb" && $3 == s { print $2 }'
		# deb822 format: stanzas with Types, URIs, Suites
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

# mounted_under DIR -- true when something is mounted at or below DIR in this namespace
mounted_under() {
	awk -v d="$1" '{ m = $5; gsub(/\\040/, " ", m); if (m == d || index(m, d "/") == 1) { f = 1 } } END { exit !f }' \
		/proc/self/mountinfo
}

# remove_root DIR -- remove a root that is incomplete, refusing when anything is mounted in it
remove_root() {
	[ -e "$1" ] || return 0
	if mounted_under "$1"; then
		die "$1 is incomplete but has mounts in it: unmount them, then run again"
	fi
	say "removing the incomplete root $1"
	rm -rf --one-file-system "$1"
}

# in_root DIR COMMAND... -- run COMMAND in the root DIR with /proc, /dev and /sys, in a private mount namespace
in_root() {
	local dir=$1
	shift
	unshare --mount --propagation private -- sh -ec '
		dir=$1; shift
		mount -t proc proc "$dir/proc"
		mount --rbind /dev "$dir/dev"
		mount --rbind /sys "$dir/sys"
		exec chroot "$dir" "$@"' sh "$dir" "$@"
}

# install_packages DIR PACKAGE... -- apt-get install in the root DIR
install_packages() {
	local dir=$1
	shift
	in_root "$dir" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		sh -ec 'apt-get update -qq
			apt-get install -y -qq --no-install-recommends "$@" >/dev/null
			apt-get clean' sh "$@"
}

mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9

if [ -d "$root" ] && [ ! -f "$root/.rpma-stamp" ]; then
	remove_root "$root"
fi
if [ ! -d "$root" ]; then
	remove_root "$root.new"
	mirror=${RPMA_ROOT_MIRROR:-$(host_mirror)}
	say "making a Debian $suite root in $root (debootstrap --variant=minbase, mirror: ${mirror:-the default of debootstrap})"
	start=$SECONDS
	# shellcheck disable=SC2086
	if ! debootstrap --variant=minbase "$suite" "$root.new" $mirror >"$root.debootstrap.log" 2>&1; then
		tail -20 "$root.debootstrap.log" >&2
		die "debootstrap failed (log: $root.debootstrap.log)"
	fi
	# shellcheck disable=SC2086
	install_packages "$root.new" $wanted || die "installing the packages in $root.new failed"
	echo "$wanted" >"$root.new/.rpma-stamp"
	mv "$root.new" "$root"
	say "made $root in $((SECONDS - start)) s"
else
	missing=$(comm -23 <(echo "$wanted") <(sort -u "$root/.rpma-stamp"))
	if [ -n "$missing" ]; then
		say "installing in $root:" $missing
		# shellcheck disable=SC2086
		install_packages "$root" $missing || die "installing packages in $root failed"
		sort -u "$root/.rpma-stamp" - <<<"$missing" >"$root/.rpma-stamp.new"
		mv "$root/.rpma-stamp.new" "$root/.rpma-stamp"
	fi
fi
echo "$root"
