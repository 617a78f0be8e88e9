#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# replace.sh -- our librpma0 package replaces Debian's in a clean bookworm root, a program built for Debian's runs on it unchanged, and Debian's comes back
#
# Usage: tests/debian/replace.sh [WORKDIR]
# 1. runs README.md's "package" block (tools/build-debs.sh: dpkg-buildpackage
#    and lintian) on this host, in a copy of the tree;
# 2. in an overlay of the clean root of tests/debian/root.sh (Debian's
#    librpma0 and librpma-dev installed; the cached root is never changed):
#    builds examples/minimal against Debian's header and library, shows it
#    cannot run over tcp on Debian's librpma (no RDMA device), runs README's
#    "package-install" block (apt-get install ./librpma0_*.deb ...), runs the
#    same binaries (checksums compared) with RPMA_PROVIDER=fabric on 127.0.0.1,
#    then README's "package-restore" block, and checks that Debian's
#    librpma0 is back and our module directory gone.
# Needs root (chroot, mount); SKIPPED (77) without root or debootstrap.
set -uo pipefail
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ "$(id -u)" -ne 0 ] || ! command -v debootstrap >/dev/null || ! command -v dpkg-buildpackage >/dev/null; then
	echo "SKIPPED: needs root, debootstrap and dpkg-buildpackage (tools/deps-debian.txt)"
	exit 77
fi
if [ -n "${1:-}" ]; then
	work=$1
	rm -rf "$work" && mkdir -p "$work"
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)
root=$(bash "$src/tests/debian/root.sh") || {
	echo "FAIL: no clean bookworm root"
	exit 1
}

# block NAME -- README.md's shell block marked "readme-test: NAME"
block() {
	awk -v want="<!-- readme-test: $1 -->" '
		$0 == want { m = 1; next }
		m == 1 && /^```/ { m = 2; next }
		m == 2 && /^```/ { exit }
		m == 2 { print }
		m == 1 && NF { m = 0 }' "$src/README.md"
}
for b in package package-install package-restore; do
	[ -n "$(block $b)" ] || {
		echo "FAIL: README.md has no block 'readme-test: $b'"
		exit 1
	}
done

# 1. the packages, by README's commands, in a copy of the tree
mkdir "$work/tree"
if [ -e "$src/.git" ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build' |
		xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf -) | tar -C "$work/tree" -xf -
else
	tar -C "$src" --exclude=./build -cf - . | tar -C "$work/tree" -xf -
	chmod -R u+w "$work/tree"
fi
echo "=== README block 'package' (host)"
block package | sed 's/^/  $ /'
if ! (cd "$work/tree" && bash -euo pipefail -c "$(block package)"); then
	echo "FAIL: building the packages"
	exit 1
fi

# 2. in an overlay of the clean root
mkdir -p "$work/upper" "$work/ovl" "$work/merged"
mkdir -p "$work/merged-src"
cp -r "$work/tree/debs" "$work/merged-src/debs"
cp "$src/examples/minimal/client.c" "$src/examples/minimal/server.c" "$work/merged-src/"
block package-install >"$work/merged-src/install.sh"
block package-restore >"$work/merged-src/restore.sh"
cat >"$work/merged-src/scenario.sh" <<'SCEN'
set -u
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin
cd /work
fails=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); return 1; fi; }
pair() { # pair PORT TEXT -- the minimal server and client on 127.0.0.1, 0 when the text arrived
	rm -f server.log
	RPMA_PROVIDER=fabric timeout 30 ./server 127.0.0.1 "$1" >server.log 2>&1 &
	spid=$!
	for _ in $(seq 100); do grep -q listening server.log 2>/dev/null && break; kill -0 $spid 2>/dev/null || break; sleep 0.1; done
	RPMA_PROVIDER=fabric timeout 30 ./client 127.0.0.1 "$1" "$2"
	crc=$?
	wait $spid
	src=$?
	sed 's/^/  server: /' server.log
	[ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q "the client wrote: $2" server.log
}
debian=$(dpkg-query -W -f='${Version}' librpma0)
echo "Debian's librpma0: $debian"
cc -o client client.c -lrpma && cc -o server server.c -lrpma
check '[ -x client ] && [ -x server ]' "the minimal pair built against Debian's librpma.h and -lrpma" || exit 1
sums=$(sha256sum client server)
port=$((21000 + $$ % 20000))
echo "--- on Debian's librpma0 (no RDMA device in this root):"
check '! pair $port "on Debian" </dev/null' "Debian's librpma0 cannot run it over tcp"
echo "--- README block 'package-install':"
sed 's/^/  $ /' install.sh
bash -e install.sh 2>&1 | grep -v '^\(Selecting\|Preparing\|Unpacking\|Setting up\|(Reading\)' | tail -25
ours=$(dpkg-query -W -f='${Version}' librpma0)
echo "librpma0 now: $ours"
check '[ "$ours" != "$debian" ] && dpkg --compare-versions "$ours" gt "$debian"' "our librpma0 ($ours) replaced Debian's ($debian)"
check '[ -e /usr/lib/x86_64-linux-gnu/librpma/librpma-fabric.so ] || ls /usr/lib/*/librpma/librpma-fabric.so >/dev/null 2>&1' "the fabric module is installed"
check '[ -n "$sums" ] && [ "$(sha256sum client server)" = "$sums" ]' "the program is unchanged (same sha256)"
echo "--- the same binaries on our librpma0, RPMA_PROVIDER=fabric, 127.0.0.1:"
check 'pair $((port + 1)) "unchanged binary over tcp"' "the program built for Debian's librpma runs on ours over tcp"
echo "--- README block 'package-restore':"
sed 's/^/  $ /' restore.sh
bash -e restore.sh 2>&1 | grep -v '^\(Selecting\|Preparing\|Unpacking\|Setting up\|(Reading\)' | tail -15
back=$(dpkg-query -W -f='${Version}' librpma0)
echo "librpma0 now: $back"
check '[ "$back" = "$debian" ]' "Debian's librpma0 ($debian) is back"
check '! ls /usr/lib/*/librpma/librpma-*.so >/dev/null 2>&1' "our provider modules are gone"
check '! dpkg-query -W rpma-tools >/dev/null 2>&1 || [ "$(dpkg-query -W -f="\${db:Status-Abbrev}" rpma-tools)" != "ii " ]' "rpma-tools is removed"
check '! pair $((port + 2)) "on Debian again" </dev/null' "the program is back on Debian's librpma0 (no tcp)"
echo "replace: $fails failure(s)"
[ $fails -eq 0 ]
SCEN
unshare --mount --propagation private -- bash -c '
	root=$1 work=$2
	mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/ovl" "$work/merged" || exit 1
	m=$work/merged
	mkdir -p "$m/work" && mount --bind "$work/merged-src" "$m/work" &&
		mount -t proc proc "$m/proc" && mount --rbind /dev "$m/dev" && mount --rbind /sys "$m/sys" &&
		mount -t tmpfs tmpfs "$m/tmp" || exit 1
	cp /etc/resolv.conf "$m/etc/resolv.conf" 2>/dev/null
	chroot "$m" env -i bash /work/scenario.sh' sh "$root" "$work"
rc=$?
echo "replace.sh: exit $rc"
exit $rc
