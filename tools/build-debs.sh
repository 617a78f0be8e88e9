#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# build-debs.sh -- build the Debian packages of the tree (librpma0, librpma-dev, rpma-tools) and check them with lintian
#
# Usage: tools/build-debs.sh [OUTDIR]   (default: ./debs)
# Copies the tree (the files git knows, else the whole directory without
# build/) to a temporary directory, runs 'dpkg-buildpackage -us -uc -b' there
# (debian/: debhelper, autoreconf, configure, make, make install), then
# lintian on the result: any error (E:) fails the script; warnings are shown.
# The .deb files, the .changes and lintian.txt land in OUTDIR.
# Needs the packages of tools/deps-debian.txt and the build dependencies of
# debian/control (tools/deps.txt).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-debs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for tool in dpkg-buildpackage dh lintian; do
	command -v "$tool" >/dev/null || {
		echo "build-debs.sh: $tool not found: install tools/deps-debian.txt" >&2
		exit 1
	}
done
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/librpma-$version
mkdir "$tree"
if [ -e "$src/.git" ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build' |
		xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf -) | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude=./build --exclude=./debs -cf - . | tar -C "$tree" -xf -
fi
echo "build-debs.sh: building librpma $version in $tree"
start=$SECONDS
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log"
	echo "build-debs.sh: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
echo "build-debs.sh: built in $((SECONDS - start)) s"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
changes=$(ls "$out"/*.changes)
lintian --tag-display-limit 0 "$changes" >"$out/lintian.txt" 2>&1 || true
errors=$(grep -c '^E: ' "$out/lintian.txt" || true)
warnings=$(grep -c '^W: ' "$out/lintian.txt" || true)
cat "$out/lintian.txt"
echo "lintian: $errors error(s), $warnings warning(s)"
for deb in "$out"/*.deb; do
	echo "$(basename "$deb"): $(dpkg-deb -f "$deb" Version), $(dpkg-deb -c "$deb" | wc -l) entries"
done
[ "$errors" -eq 0 ]
