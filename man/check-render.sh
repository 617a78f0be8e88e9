#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# man/check-render.sh -- every page renders without a warning and fits 80 columns
#
# Runs each generated page (and each .so alias, resolved as man(1) would)
# through "groff -man -ww -z" and "man --warnings -l" at MANWIDTH=80; any
# message on stderr, a failure or a rendered line wider than 80 columns is an
# error.  The roff is taken from the build tree, else from the source tree
# (a distribution tarball ships it).

# shellcheck source=man/common.sh
. "$(dirname "$0")/common.sh"

if ! command -v groff >/dev/null 2>&1; then
	echo "check-render: groff not found, skipped"
	exit 77
fi
have_man=no
command -v man >/dev/null 2>&1 && have_man=yes

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/man1" "$tmp/man3" "$tmp/man7"

# render FILE LABEL -- run FILE through groff and man, report problems under LABEL
render() {
	if ! groff -man -ww -z "$1" >"$tmp/out" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
		fail "$2: groff -man -ww -z:"
		sed 's/^/   /' "$tmp/err" >&2
	fi
	if [ "$have_man" = yes ]; then
		if ! MANWIDTH=80 MAN_KEEP_FORMATTING='' man --warnings -l "$1" >"$tmp/out" 2>"$tmp/err" ||
			[ -s "$tmp/err" ]; then
			fail "$2: man --warnings -l:"
			sed 's/^/   /' "$tmp/err" >&2
		fi
		wide=$(sed 's/.\x08//g' "$tmp/out" | tr -d '\200-\277' | awk 'length($0) > 80 { n++ } END { print n + 0 }')
		[ "$wide" -eq 0 ] || fail "$2: $wide rendered line(s) wider than 80 columns"
		[ -s "$tmp/out" ] || fail "$2: renders to nothing"
	fi
}

n=0
for src in $MAN_SOURCES; do
	page=${src#man/}
	page=${page%.md}
	roff=$(roff_of "$page")
	if [ -z "$roff" ]; then
		fail "man/$page was not generated (run 'make' first; generating it needs pandoc)"
		continue
	fi
	cp "$roff" "$tmp/man${page##*.}/$page"
	render "$roff" "man/$page"
	n=$((n + 1))
done

# aliases: resolved from a man3/ directory, the way they are installed
for stub in $MAN_ALIASES; do
	page=${stub#man/}
	if [ ! -f "$top_srcdir/$stub" ]; then
		fail "$stub does not exist"
		continue
	fi
	cp "$top_srcdir/$stub" "$tmp/man3/$page"
	here=$(pwd)
	cd "$tmp" || exit 99
	render "man3/$page" "$stub"
	cd "$here" || exit 99
	n=$((n + 1))
done

if [ "$failures" -ne 0 ]; then
	echo "check-render: $failures problem(s)"
	exit 1
fi
echo "check-render: $n pages render without warnings (groff -ww$([ "$have_man" = yes ] && echo ', man --warnings, MANWIDTH=80')): OK"
