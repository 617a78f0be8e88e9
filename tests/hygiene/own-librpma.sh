#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# own-librpma.sh -- every program built here saw this tree's librpma.h and loads this tree's librpma.so.0
#
# An installed librpma (Debian's librpma-dev for the interop tests) puts
# /usr/include/librpma.h and a librpma.so.0 of the same SONAME on the
# default paths: a target that loses AM_CPPFLAGS, or links -lrpma instead
# of librpma.la, still builds and runs, against upstream's library.
#   headers: automake's dependency files (.deps/*.Po, *.Plo) list every
#            header each compilation read; any librpma.h there but
#            $top_srcdir/include/librpma.h fails;
#   library: every program of the build tree that needs librpma.so.0,
#            started as 'make check' starts it (libtool --mode=execute),
#            must load the build tree's .libs/librpma.so.0.
# The programs that tests/interop/build-upstream.sh builds against upstream
# on purpose (tests/interop/upstream/) are left out.  Skipped (77) without
# dependency files (--disable-dependency-tracking).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
cd "$top_builddir" || exit 99
ours=$(realpath "$top_srcdir/include/librpma.h") || exit 99
lib=$(realpath .libs/librpma.so.0 2>/dev/null) || {
	echo "own-librpma.sh: .libs/librpma.so.0 is not built"
	exit 99
}
bad=0

# this build tree only: other build trees inside it (tools/run-tests.sh's
# asan/, tsan/, trixie/, distcheck's) are left out, as is what is upstream's
prune="-path ./tests/interop/upstream"
for c in $(find . -mindepth 2 -name config.status); do
	prune="$prune -o -path ${c%/config.status}"
done
# shellcheck disable=SC2086
deps=$(find . \( $prune \) -prune -o \( -name '*.Po' -o -name '*.Plo' \) -path '*/.deps/*' -print | sort)
[ -n "$deps" ] || {
	echo "SKIPPED: no dependency files (--disable-dependency-tracking?)"
	exit 77
}
checked=0
for d in $deps; do
	# a .Po lists paths relative to the build directory, where make compiles
	for h in $(tr -s ' \\:' '\n\n\n' <"$d" | grep -E '(^|/)librpma\.h$' | sort -u); do
		checked=$((checked + 1))
		if [ "$(realpath "$h" 2>/dev/null)" != "$ours" ]; then
			echo "own-librpma.sh: $d: the compilation read $h, not $ours"
			bad=1
		fi
	done
done
[ "$checked" -gt 0 ] || {
	echo "own-librpma.sh: no dependency file names librpma.h"
	bad=1
}
echo "own-librpma.sh: $checked compilations that read librpma.h checked"

progs=0
# shellcheck disable=SC2086
for real in $(find . \( $prune \) -prune -o -path '*/.libs/*' -type f -perm -u+x -print | sort); do
	case $real in *.so | *.so.*) continue ;; esac
	readelf -d "$real" 2>/dev/null | grep -q 'NEEDED.*\[librpma\.so\.0\]' || continue
	name=${real##*/}
	name=${name#lt-}
	wrapper=${real%/.libs/*}/$name
	[ -x "$wrapper" ] || continue
	progs=$((progs + 1))
	got=$(./libtool --mode=execute env LD_TRACE_LOADED_OBJECTS=1 "$wrapper" 2>&1 |
		sed -n 's/^[[:space:]]*librpma\.so\.0 => \([^ ]*\).*/\1/p')
	if [ -z "$got" ] || [ "$(realpath "$got" 2>/dev/null)" != "$lib" ]; then
		echo "own-librpma.sh: $wrapper loads librpma.so.0 from '${got:-nowhere}', not $lib"
		bad=1
	fi
done
[ "$progs" -gt 0 ] || {
	echo "own-librpma.sh: no program of the build tree needs librpma.so.0"
	bad=1
}
echo "own-librpma.sh: $progs programs that need librpma.so.0 checked"
echo "own-librpma.sh: $([ "$bad" = 0 ] && echo "ok: $ours and $lib only" || echo FAILED)"
exit $bad
