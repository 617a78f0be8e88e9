#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# install-deps.sh -- install every Debian package the build, the tests and the demos need
# (fresh Debian bookworm, run as root, non-interactive)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps.sh: run as root (apt-get install)" >&2
	exit 1
fi
pkgs=$(cat "$here"/deps*.txt | sed -e 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
export DEBIAN_FRONTEND=noninteractive
# skip the network when everything is already there
missing=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $pkgs 2>/dev/null |
	awk '$2 != "ii" { print $1 }' || true)
for p in $pkgs; do
	dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing="$missing $p"
done
missing=$(echo $missing | tr ' ' '\n' | sort -u | tr '\n' ' ')
if [ -z "${missing// /}" ]; then
	echo "install-deps.sh: all $(echo $pkgs | wc -w) packages already installed"
	exit 0
fi
echo "install-deps.sh: installing:$missing"
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps.sh: done"
