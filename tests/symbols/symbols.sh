#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# symbols.sh -- the dynamic symbols of .libs/librpma.so.0 are exactly the functions
# declared in include/librpma.h, under the expected version nodes:
# the librpma 1.2 API under LIBRPMA_1.0 (84), the deprecated 0.10-era calls under
# LIBRPMA_1.1 (5), and nothing else (no non-rpma_ symbol leaks).
set -uo pipefail

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-.}
lib=$builddir/.libs/librpma.so.0
header=$srcdir/include/librpma.h
CC=${CC:-cc}

fail=0
err() {
	echo "symbols: FAIL: $*"
	fail=1
}

if [ ! -e "$lib" ]; then
	echo "symbols: FAIL: $lib not built"
	exit 1
fi
for tool in readelf nm "$CC"; do
	command -v "$tool" >/dev/null || {
		echo "symbols: FAIL: $tool not found"
		exit 1
	}
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# declared functions: preprocess the header (comments gone), split it into
# declarations and keep the rpma_ function names; "deprecated" ones apart
printf '#include "librpma.h"\n' | "$CC" -E -P -I"$srcdir/include" - >"$tmp/pp" 2>"$tmp/cc.err" || {
	cat "$tmp/cc.err"
	echo "symbols: FAIL: cannot preprocess $header"
	exit 1
}
tr '\n' ' ' <"$tmp/pp" | tr ';' '\n' | grep -v '^[[:space:]]*typedef' |
	awk 'match($0, /[^A-Za-z0-9_]rpma_[a-z0-9_]+[[:space:]]*\(/) {
		name = substr($0, RSTART + 1, RLENGTH - 1); sub(/[[:space:]]*\($/, "", name)
		print name, (index($0, "deprecated") ? "LIBRPMA_1.1" : "LIBRPMA_1.0")
	}' | sort -u >"$tmp/declared"

# exported: defined dynamic symbols with their version (readelf prints name@@NODE)
readelf --dyn-syms -W "$lib" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $5 != "LOCAL" { print $8 }' |
	sed 's/@@*/ /' | sort -u >"$tmp/exported"
# the version nodes themselves (ABS symbols named like the node)
readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ && $7 == "ABS" { print $8 }' |
	sed 's/@.*//' | sort -u >"$tmp/nodes"

# nm -D --defined-only must agree on the names
nm -D --defined-only "$lib" | awk '{ print $3 }' | sed 's/@.*//' | sort -u |
	grep -vxF -f "$tmp/nodes" >"$tmp/nm.names" || true
cut -d' ' -f1 "$tmp/exported" >"$tmp/exported.names"
if ! diff -u "$tmp/exported.names" "$tmp/nm.names" >"$tmp/d0"; then
	err "readelf and nm disagree:"
	cat "$tmp/d0"
fi

n10=$(grep -c ' LIBRPMA_1\.0$' "$tmp/declared")
n11=$(grep -c ' LIBRPMA_1\.1$' "$tmp/declared")
[ "$n10" -eq 84 ] || err "include/librpma.h declares $n10 current functions, want 84"
[ "$n11" -eq 5 ] || err "include/librpma.h declares $n11 deprecated functions, want 5"

leaks=$(grep -v '^rpma_' "$tmp/exported.names" || true)
[ -z "$leaks" ] || err "symbols outside the rpma_ namespace are exported:" $leaks

unversioned=$(awk 'NF < 2' "$tmp/exported")
[ -z "$unversioned" ] || err "exported without a version:" $unversioned

if ! diff -u "$tmp/declared" "$tmp/exported" >"$tmp/d1"; then
	err "declared (-) and exported (+) name/version differ:"
	cat "$tmp/d1"
fi

grep -qx 'LIBRPMA_1\.0' "$tmp/nodes" || err "no LIBRPMA_1.0 version node"
grep -qx 'LIBRPMA_1\.1' "$tmp/nodes" || err "no LIBRPMA_1.1 version node"

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = librpma.so.0 ] || err "SONAME is '$soname', want librpma.so.0"

if [ $fail -eq 0 ]; then
	echo "symbols: OK: $(grep -c ' LIBRPMA_1\.0$' "$tmp/exported") under LIBRPMA_1.0," \
		"$(grep -c ' LIBRPMA_1\.1$' "$tmp/exported") under LIBRPMA_1.1, nothing else exported"
	exit 0
fi
exit 1
