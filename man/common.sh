# SPDX-License-Identifier: BSD-3-Clause
# man/common.sh -- shared helpers of the man/check-*.sh tests (sourced, not run)
#
# Sets: top_srcdir, top_builddir, mandir (the sources), MAN_SOURCES (the
# markdown sources listed in man/Makefile.inc), MAN_ALIASES (the .so stubs
# listed there) and the functions below.

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
mandir=$top_srcdir/man
failures=0

# fail -- report one problem and remember that the test failed
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# makefile_list VAR -- the words of the variable VAR in man/Makefile.inc
makefile_list() {
	awk -v var="$1" '
		$1 == var && ($2 == "=" || $2 == "+=") { on = 1; $1 = ""; $2 = "" }
		on {
			cont = sub(/\\[ \t]*$/, "")
			for (i = 1; i <= NF; i++) print $i
			if (!cont) on = 0
		}' "$mandir/Makefile.inc"
}

MAN_SOURCES=$(makefile_list MAN_SOURCES)
MAN_ALIASES=$(makefile_list MAN_ALIASES)

# exported_functions -- the global symbols of core/librpma.map, one a line
exported_functions() {
	awk '
		/global:/ { on = 1; next }
		/local:/ { on = 0 }
		/^}/ { on = 0 }
		on && /^[ \t]*rpma_[a-z0-9_]+;/ { gsub(/[ \t;]/, ""); print }' \
		"$top_srcdir/core/librpma.map" | sort -u
}

# alias_target FILE -- "name.3" when FILE is a one-line ".so man3/name.3" stub
alias_target() {
	awk 'NR == 1 && $1 == ".so" && NF == 2 { t = $2 } END { if (NR == 1 && t != "") print t }' "$1" |
		sed -n 's|^man[37]/||p'
}

# roff_of PAGE -- the generated roff of man/PAGE (build tree first, then source tree)
roff_of() {
	if [ -f "$top_builddir/man/$1" ]; then
		echo "$top_builddir/man/$1"
	elif [ -f "$top_srcdir/man/$1" ]; then
		echo "$top_srcdir/man/$1"
	fi
}

# prototypes FILE -- every "rpma_name<TAB>normalised prototype" declared in FILE (C text)
prototypes() {
	awk '
		/^[ \t]*#/ { next }
		{ text = text " " $0 }
		END {
			# comments away
			while ((s = index(text, "/*")) > 0) {
				rest = substr(text, s + 2)
				e = index(rest, "*/")
				if (e == 0) { text = substr(text, 1, s - 1); break }
				text = substr(text, 1, s - 1) " " substr(rest, e + 2)
			}
			n = split(text, stmt, ";")
			for (i = 1; i <= n; i++) {
				s = stmt[i]
				# keep what follows the last brace (enum bodies, extern "C" {)
				while (match(s, /[{}]/)) s = substr(s, RSTART + 1)
				gsub(/[ \t\r\n]+/, " ", s)
				sub(/^ /, "", s); sub(/ $/, "", s)
				gsub(/\( /, "(", s); gsub(/ \)/, ")", s); gsub(/ ,/, ",", s)
				if (s ~ /^typedef /) continue
				if (match(s, /^(const )?[a-z_]+ \**rpma_[a-z0-9_]+\(/)) {
					name = substr(s, 1, RLENGTH - 1)
					sub(/^.*[ *]/, "", name)
					print name "\t" s ";"
				}
			}
		}' "$1"
}
