#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# man/check-synopsis.sh -- the SYNOPSIS of every page matches include/librpma.h
#
# A section-3 page's SYNOPSIS is one ```c block that includes <librpma.h> and
# declares the page's function and the functions of its alias pages, each
# exactly as the header does (whitespace aside), and nothing else.

# shellcheck source=man/common.sh
. "$(dirname "$0")/common.sh"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

prototypes "$top_srcdir/include/librpma.h" | sort >"$tmp/header"
if [ ! -s "$tmp/header" ]; then
	fail "no prototype found in include/librpma.h"
	exit 1
fi

# alias -> primary page
: >"$tmp/aliases"
for stub in $MAN_ALIASES; do
	[ -f "$top_srcdir/$stub" ] || continue
	a=${stub#man/}
	t=$(alias_target "$top_srcdir/$stub")
	echo "${a%.3} ${t%.3}" >>"$tmp/aliases"
done

checked=0
for src in $MAN_SOURCES; do
	case $src in *.3.md) ;; *) continue ;; esac
	file=$top_srcdir/$src
	[ -f "$file" ] || continue
	name=${src#man/}
	name=${name%.3.md}

	# the code block of the SYNOPSIS section
	awk '
		/^# / { sec = substr($0, 3); next }
		sec == "SYNOPSIS" && /^```/ { n++; on = !on; next }
		sec == "SYNOPSIS" && on { print }
		END { if (n != 2) print "@@BLOCKS " n }' "$file" >"$tmp/block"
	if grep -q '^@@BLOCKS' "$tmp/block"; then
		fail "$src: the SYNOPSIS must hold exactly one code block"
		continue
	fi
	grep -qx '#include <librpma.h>' "$tmp/block" || fail "$src: the SYNOPSIS does not include <librpma.h>"
	grep -v '^#include' "$tmp/block" >"$tmp/block.c"
	prototypes "$tmp/block.c" | sort >"$tmp/page"

	{
		echo "$name"
		awk -v n="$name" '$2 == n { print $1 }' "$tmp/aliases"
	} | sort -u >"$tmp/expected"
	cut -f1 "$tmp/page" | sort >"$tmp/got"
	for f in $(comm -23 "$tmp/expected" "$tmp/got"); do
		fail "$src: the SYNOPSIS does not declare $f"
	done
	for f in $(comm -13 "$tmp/expected" "$tmp/got"); do
		fail "$src: the SYNOPSIS declares $f, which belongs to another page"
	done
	while IFS="$(printf '\t')" read -r f proto; do
		want=$(awk -F '\t' -v f="$f" '$1 == f { print $2 }' "$tmp/header")
		if [ -z "$want" ]; then
			fail "$src: $f is not declared in include/librpma.h"
		elif [ "$want" != "$proto" ]; then
			fail "$src: the prototype of $f differs from include/librpma.h"
			echo "   page:   $proto" >&2
			echo "   header: $want" >&2
		fi
	done <"$tmp/page"
	# statements that are not prototypes (a typo in a declaration hides it otherwise)
	nstmt=$(tr -d '\n' <"$tmp/block.c" | tr ';' '\n' | grep -c '[a-z]')
	nproto=$(wc -l <"$tmp/page")
	[ "$nstmt" -eq "$nproto" ] || fail "$src: the SYNOPSIS holds $nstmt declarations, $nproto of them recognised as prototypes"
	checked=$((checked + 1))
done

if [ "$failures" -ne 0 ]; then
	echo "check-synopsis: $failures problem(s)"
	exit 1
fi
echo "check-synopsis: $checked pages, $(wc -l <"$tmp/header") prototypes of include/librpma.h: OK"
