#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# build-upstream.sh -- compile one interop program against upstream librpma
# (Debian's librpma-dev/librpma0), never against ours
#
# Usage: build-upstream.sh CC OUTPUT SOURCE [CFLAGS...]
# Environment: INTEROP_UPSTREAM_INCLUDEDIR (directory holding upstream's
# librpma.h; default /usr/include), INTEROP_UPSTREAM_LIB (upstream's shared
# library; default /usr/lib/<multiarch>/librpma.so.0).
# Without upstream's header or library nothing is built (exit 0, one line
# of explanation): the interop test then reports itself as skipped.

set -e
cc=$1
out=$2
src=$3
shift 3

inc=${INTEROP_UPSTREAM_INCLUDEDIR:-/usr/include}
lib=${INTEROP_UPSTREAM_LIB:-}
if [ -z "$lib" ]; then
	multiarch=$($cc -print-multiarch 2>/dev/null || true)
	for d in ${multiarch:+/usr/lib/$multiarch} /usr/lib64 /usr/lib; do
		if [ -e "$d/librpma.so.0" ]; then
			lib=$d/librpma.so.0
			break
		fi
	done
fi
if [ ! -e "$inc/librpma.h" ] || [ -z "$lib" ] || [ ! -e "$lib" ]; then
	echo "interop: upstream librpma not found (header in '$inc', library '${lib:-none}'): $out not built" >&2
	rm -f "$out"
	exit 0
fi

mkdir -p "$(dirname "$out")"
# only upstream's header directory: the source's own directory gives interop.h
exec $cc -std=gnu11 "$@" -I"$inc" -o "$out" "$src" "$lib" -libverbs
