#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# man/check-pages.sh -- every exported function has a page, every page names a real function
#
# Checks, against core/librpma.map (the exported functions) and man/Makefile.inc
# (the pages that are built and installed):
# - each exported function has its own markdown page or a .so alias page;
# - each section-3 page is named after an exported function;
# - every page in man/ is listed in man/Makefile.inc and every listed page exists;
# - an alias is a single ".so man3/<page>.3" line pointing at a markdown page;
# - a markdown page has the pandoc front matter and the sections in order, and
#   its NAME line names the page and all of its aliases;
# - every rpma_*() call and every name(3)/name(7) reference in a page exists.

# shellcheck source=man/common.sh
. "$(dirname "$0")/common.sh"

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

exported_functions >"$tmp/functions"
if [ ! -s "$tmp/functions" ]; then
	fail "no function found in core/librpma.map"
	exit 1
fi

# the list of pages, from man/Makefile.inc
: >"$tmp/pages3"
: >"$tmp/pages7"
: >"$tmp/pages1"
for src in $MAN_SOURCES; do
	page=${src#man/}
	page=${page%.md}
	[ -f "$top_srcdir/$src" ] || fail "$src is listed in man/Makefile.inc but does not exist"
	case $page in
	*.3) echo "${page%.3}" >>"$tmp/pages3" ;;
	*.7) echo "${page%.7}" >>"$tmp/pages7" ;;
	*.1) echo "${page%.1}" >>"$tmp/pages1" ;;
	*) fail "$src: only sections 1, 3 and 7 are expected" ;;
	esac
done
: >"$tmp/aliases"
for stub in $MAN_ALIASES; do
	page=${stub#man/}
	if [ ! -f "$top_srcdir/$stub" ]; then
		fail "$stub is listed in man/Makefile.inc but does not exist"
		continue
	fi
	target=$(alias_target "$top_srcdir/$stub")
	if [ -z "$target" ]; then
		fail "$stub: an alias page must be exactly one line '.so man3/<page>.3'"
		continue
	fi
	if ! grep -qx "${target%.3}" "$tmp/pages3"; then
		fail "$stub points at $target, which is not a markdown page of man/Makefile.inc"
	fi
	echo "${page%.3} ${target%.3}" >>"$tmp/aliases"
	echo "${page%.3}" >>"$tmp/pages3"
done

# files in man/ that nobody installs
for f in "$mandir"/*.md "$mandir"/*.[137]; do
	[ -f "$f" ] || continue
	rel=man/${f##*/}
	case $f in
	*.md) echo "$MAN_SOURCES" | grep -qx "$rel" || fail "$rel is not listed in MAN_SOURCES of man/Makefile.inc" ;;
	*)
		# a .so stub must be listed; generated roff (in-tree builds) has a source
		if [ -n "$(alias_target "$f")" ]; then
			echo "$MAN_ALIASES" | grep -qx "$rel" || fail "$rel is not listed in MAN_ALIASES of man/Makefile.inc"
		elif [ ! -f "$f.md" ]; then
			fail "$rel is neither an alias page nor generated from a markdown page"
		fi
		;;
	esac
done

sort -u "$tmp/pages3" >"$tmp/pages3.sorted"
# duplicates: a function with both a markdown page and an alias
sort "$tmp/pages3" | uniq -d | while read -r dup; do
	echo "FAIL: $dup has more than one page" >&2
	echo x
done >"$tmp/dups"
[ -s "$tmp/dups" ] && failures=$((failures + $(wc -l <"$tmp/dups")))

for f in $(comm -23 "$tmp/functions" "$tmp/pages3.sorted"); do
	fail "exported function $f has no man page"
done
for p in $(comm -13 "$tmp/functions" "$tmp/pages3.sorted"); do
	fail "man page $p.3 names no exported function"
done

# structure of each markdown page
for src in $MAN_SOURCES; do
	file=$top_srcdir/$src
	[ -f "$file" ] || continue
	page=${src#man/}
	page=${page%.md}
	name=${page%.[137]}
	section=${page##*.}
	out=$(awk -v name="$name" -v section="$section" '
		BEGIN { fm = 0 }
		NR == 1 { if ($0 != "---") print "no front matter"; else fm = 1; next }
		fm == 1 && $0 == "---" { fm = 2; next }
		fm == 1 {
			key = $1; sub(/:$/, "", key); v = $0; sub(/^[^:]*: */, "", v)
			gsub(/^"|"$/, "", v); meta[key] = v; next
		}
		/^```/ { code = !code; next }
		!code && /^# / { h = substr($0, 3); heads[++nh] = h; cur = h; next }
		cur == "NAME" && NF { nameline = nameline " " $0 }
		END {
			if (toupper(meta["title"]) != toupper(name)) print "title is not " toupper(name)
			if (meta["section"] != section) print "section is not " section
			hdr = section == 1 ? "librpma User Commands" : "librpma Programmer'"'"'s Manual"
			if (meta["header"] != hdr) print "header is not \"" hdr "\""
			if (meta["footer"] !~ /^librpma [0-9]+\.[0-9]+\.[0-9]+$/) print "footer is not \"librpma <version>\""
			if (meta["date"] !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]$/) print "date is not YYYY-MM-DD"
			if (section == 3) {
				want = "NAME SYNOPSIS DESCRIPTION RETURN VALUE ERRORS SEE ALSO"
				got = ""
				for (i = 1; i <= nh; i++) if (heads[i] != "NOTES" && heads[i] != "EXAMPLE") got = got (got ? " " : "") heads[i]
				if (got != want) print "sections are \"" got "\", expected \"" want "\" (NOTES may come before SEE ALSO)"
			} else if (section == 1) {
				got = ""
				for (i = 1; i <= nh; i++) got = got " " heads[i] " "
				if (heads[1] != "NAME" || heads[2] != "SYNOPSIS" || heads[3] != "DESCRIPTION" || got !~ / OPTIONS .* SEE ALSO $/)
					print "sections are not NAME SYNOPSIS DESCRIPTION ... OPTIONS ... SEE ALSO"
			} else if (heads[1] != "NAME") print "the first section is not NAME"
			print "NAMELINE" nameline
		}' "$file")
	echo "$out" | grep -v '^NAMELINE' | while IFS= read -r msg; do
		[ -n "$msg" ] && echo "$src: $msg"
	done >"$tmp/msgs"
	while IFS= read -r msg; do fail "$msg"; done <"$tmp/msgs"
	nameline=$(echo "$out" | sed -n 's/^NAMELINE//p' | sed 's/\\//g')
	expect="$name $(awk -v n="$name" '$2 == n { print $1 }' "$tmp/aliases")"
	for n in $expect; do
		echo "$nameline" | grep -q "\(^\|[ ,*]\)$n\([ ,*]\|$\)" || fail "$src: the NAME section does not name $n"
	done
	echo "$nameline" | grep -q ' - ' || fail "$src: the NAME line has no ' - ' before the description"
done

# references: rpma_*() calls and name(section) cross-references
# (a function type of the header, such as rpma_log_function, may be shown too)
cp "$tmp/functions" "$tmp/callable"
grep -o 'typedef [a-z_ ]*rpma_[a-z0-9_]*(' "$top_srcdir/include/librpma.h" |
	grep -o 'rpma_[a-z0-9_]*' >>"$tmp/callable"
for src in $MAN_SOURCES; do
	file=$top_srcdir/$src
	[ -f "$file" ] || continue
	sed 's/\\_/_/g; s/\*\*//g; s/`//g' "$file" |
		grep -o 'rpma_[a-z0-9_]*(\([^0-9]\|$\)' | sed 's/(.*$//' | sort -u | while read -r fn; do
		grep -qx "$fn" "$tmp/callable" || echo "$src: calls $fn(), which is not an exported function"
	done >"$tmp/msgs"
	sed 's/\\_/_/g; s/\*\*//g; s/`//g' "$file" |
		grep -o '\(librpma\|rpma_[a-z0-9_]*\)([37])' | sort -u | while read -r ref; do
		n=${ref%(*}
		s=${ref#*(}
		s=${s%)}
		grep -qx "$n" "$tmp/pages$s" || echo "$src: refers to $ref, which is not a page of man/"
	done >>"$tmp/msgs"
	while IFS= read -r msg; do fail "$msg"; done <"$tmp/msgs"
done

# section 1: one page per installed program (bin_PROGRAMS of the Makefile.inc files and
# tools/Makefile.inc's RPMA_INSTALLED_BENCH), no other
cat "$top_srcdir"/*/Makefile.inc "$top_srcdir"/*/*/Makefile.inc 2>/dev/null |
	awk '($1 == "bin_PROGRAMS" || $1 == "RPMA_INSTALLED_BENCH") && ($2 == "+=" || $2 == "=") { on = 1; $1 = ""; $2 = "" }
		on { cont = sub(/\\[ \t]*$/, ""); for (i = 1; i <= NF; i++) print $i; if (!cont) on = 0 }' |
	sed 's|.*/||' | sed '/^$/d' | sort -u >"$tmp/programs"
sort -u "$tmp/pages1" >"$tmp/pages1.sorted"
for p in $(comm -23 "$tmp/programs" "$tmp/pages1.sorted"); do
	fail "installed program $p has no section-1 man page"
done
for p in $(comm -13 "$tmp/programs" "$tmp/pages1.sorted"); do
	fail "man page $p.1 names no installed program (bin_PROGRAMS)"
done
n1=$(wc -l <"$tmp/pages1.sorted")
n3=$(wc -l <"$tmp/pages3.sorted")
n7=$(wc -l <"$tmp/pages7")
nf=$(wc -l <"$tmp/functions")
if [ "$failures" -ne 0 ]; then
	echo "check-pages: $failures problem(s)"
	exit 1
fi
echo "check-pages: $n1 section-1 pages for $(wc -l <"$tmp/programs") installed programs, $nf exported functions, $n3 section-3 pages ($(echo "$MAN_ALIASES" | wc -w) aliases), $n7 section-7 pages: OK"
