#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# api-coverage.sh -- which integration scenarios call each public function of librpma
#
# Usage: api-coverage.sh [--loose] [-o FILE]
#
# The public functions are the prototypes of include/librpma.h (typedefs left
# out), checked against the exported names of core/librpma.map: the two lists
# must be the same, else the script stops with 99.  Names of the map's
# LIBRPMA_1.1 node are the deprecated 0.10-era calls.
#
# The scenarios are the PROVIDER_TEST (every provider) and VERBS_TEST (verbs
# alone) bodies of the tests/integration/test_*.c that its Makefile.inc builds.  The sources are read with
# comments, string and character literals removed; a scenario calls a public
# function when its body holds the name followed by '(', or when a helper it
# reaches does: a helper is a function or macro defined in the same file or in
# itest.c / itest.h, reached when its name appears in the body (called, or
# passed as a callback), transitively.  The scenario macros of itest.h count
# as helpers of every scenario of their kind (PROVIDER_TEST calls
# itest_begin()).  Calls made under a run-time condition (one provider only,
# say) cannot be told apart by reading the source: the table says that a
# scenario's code calls the function, not that every run does; likewise
# preprocessor conditionals are not evaluated (code under #if 0 counts).
#
# Output (markdown, on stdout, and in FILE with -o): the table function ->
# scenarios that call it directly, helpers through which scenarios reach it,
# and a status:
#   direct        a PROVIDER_TEST scenario calls it in its own body
#   helpers only  PROVIDER_TEST scenarios reach it only through helpers
#   verbs only    only VERBS_TEST scenarios reach it
#   NONE          no scenario reaches it
# then the scenarios that reach each helper, and the counts.
#
# Exit status: 1 when a function outside the allowlist below is not
# "direct" (with --loose: when it is "verbs only" or "NONE"), 99 when the
# inputs cannot be read as expected, 0 otherwise.  make check runs it
# without options.
set -eu

# functions excused from the check, one per line: "name reason..." (none today)
ALLOWLIST='
'

usage() {
	sed -n '3,4p' "$0" | sed 's/^# //'
	exit "${1:-0}"
}

strict=1
out=
while [ $# -gt 0 ]; do
	case $1 in
	--loose) strict=0 ;;
	-o)
		[ $# -ge 2 ] || usage 99
		out=$2
		shift
		;;
	-h | --help) usage 0 ;;
	*) usage 99 ;;
	esac
	shift
done

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
hdr=$srcdir/include/librpma.h
map=$srcdir/core/librpma.map
idir=$srcdir/tests/integration
for f in "$hdr" "$map" "$idir/itest.h" "$idir/itest.c" "$idir/Makefile.inc"; do
	if [ ! -r "$f" ]; then
		echo "api-coverage.sh: cannot read $f" >&2
		exit 99
	fi
done
# the scenario files: the test_*.c that tests/integration/Makefile.inc builds
# (sorted by the shell's glob); another one is left out, with a note
set --
for f in "$idir"/test_*.c; do
	[ -r "$f" ] || continue
	if grep -q "tests/integration/${f##*/}" "$idir/Makefile.inc"; then
		set -- "$@" "$f"
	else
		echo "api-coverage.sh: ${f##*/} is not built by tests/integration/Makefile.inc: left out" >&2
	fi
done
if [ $# -eq 0 ]; then
	echo "api-coverage.sh: no scenario file in $idir" >&2
	exit 99
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the exported names and their version node: "name node"
awk '
	/^[ \t]*[A-Za-z_0-9.]+[ \t]*\{/ { node = $1; sub(/\{.*/, "", node); next }
	/^[ \t]*global:/ { glob = 1; next }
	/^[ \t]*local:/ { glob = 0; next }
	/^[ \t]*\}/ { glob = 0; next }
	glob && /^[ \t]*rpma_[a-z0-9_]+[ \t]*;/ {
		name = $1; sub(/;.*/, "", name); print name, node
	}
' "$map" >"$tmp/map"

allow=$(printf '%s\n' "$ALLOWLIST" | awk 'NF { print $1 }' | tr '\n' ' ')

# ---------------------------------------------------------------- the analysis
# Input: the header first (prototypes), then itest.h, itest.c and the
# scenario files.  The map is read from the file given with -v.
status=0
awk -v mapfile="$tmp/map" -v hdrfile="$hdr" -v strict="$strict" -v allow="$allow" '
# clean -- a line without comments and literals (comment state kept in incom)
function clean(s,    out, i, c, n, q) {
	out = ""; n = length(s); i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (incom) {
			if (c == "*" && substr(s, i + 1, 1) == "/") {
				incom = 0; i += 2; out = out " "
			} else
				i++
			continue
		}
		if (c == "/" && substr(s, i + 1, 1) == "*") { incom = 1; i += 2; continue }
		if (c == "/" && substr(s, i + 1, 1) == "/") break
		if (c == "\"" || c == "\047") {
			q = c; i++
			while (i <= n) {
				c = substr(s, i, 1)
				if (c == "\\") i += 2
				else if (c == q) break
				else i++
			}
			i++; out = out " 0 "
			continue
		}
		out = out c; i++
	}
	return out
}

# isid -- is t an identifier?
function isid(t) { return t ~ /^[A-Za-z_][A-Za-z0-9_]*$/ }

# base -- the file name without its directory
function base(f) { sub(/.*\//, "", f); return f }

# addref -- node mentions ident (called when call is 1)
function addref(node, ident, call) {
	if (node == "" || !isid(ident)) return
	if (!((node, ident) in seenref)) {
		seenref[node, ident] = 1
		refs[node] = refs[node] " " ident
	}
	if (call && !((node, ident) in seencall)) {
		seencall[node, ident] = 1
		calls[node] = calls[node] " " ident
	}
}

# define -- a function or macro named name is defined in the current file
function define(name,    key) {
	key = fbase ":" name
	def[key] = 1
	if (fbase == "itest.c" || fbase == "itest.h") gdef[name] = key
	return key
}

# defname -- the node a top-level brace opens, from the tokens before it
function defname(    i, j, lvl, k) {
	for (i = 1; i + 4 <= hn; i++) {
		if ((hdrt[i] == "PROVIDER_TEST" || hdrt[i] == "VERBS_TEST") && hdrt[i + 1] == "(" &&
		    isid(hdrt[i + 2]) && hdrt[i + 3] == "," && isid(hdrt[i + 4])) {
			k = "S:" hdrt[i + 2] "/" hdrt[i + 4]
			if (k in kind) {
				printf("api-coverage.sh: scenario %s defined twice\n", substr(k, 3)) > "/dev/stderr"
				bad = 1
			}
			kind[k] = (hdrt[i] == "PROVIDER_TEST") ? "P" : "V"
			sfile[k] = fbase
			scen[++ns] = k
			# the macro calls helpers on behalf of the scenario
			addref(k, hdrt[i], 0)
			return k
		}
		if (hdrt[i] == "Test" || hdrt[i] == "ParameterizedTest") {
			printf("api-coverage.sh: %s: a plain Criterion %s, not counted\n", fbase, hdrt[i]) > "/dev/stderr"
			return ""
		}
	}
	if (hn < 3 || hdrt[hn] != ")") return ""
	lvl = 0
	for (j = hn; j >= 1; j--) {
		if (hdrt[j] == ")") lvl++
		else if (hdrt[j] == "(" && --lvl == 0) break
	}
	if (j < 2 || !isid(hdrt[j - 1])) return ""
	return define(hdrt[j - 1])
}

# feed -- one token of a source file
function feed(t) {
	if (depth == 0) {
		if (t == "{") { cur = defname(); depth = 1; pend = ""; return }
		if (t == ";" || t == "}") { hn = 0; return }
		hdrt[++hn] = t
		return
	}
	if (pend != "") { addref(cur, pend, t == "("); pend = "" }
	if (t == "{") depth++
	else if (t == "}") {
		if (--depth == 0) { cur = ""; hn = 0 }
	} else if (isid(t)) pend = t
}

# tokens -- split a cleaned line into identifiers, numbers and single characters
function tokens(s, arr,    n) {
	n = 0
	while (match(s, /[A-Za-z_][A-Za-z0-9_]*|[0-9][A-Za-z0-9_.]*|[^ \t\r]/)) {
		arr[++n] = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
	}
	return n
}

# hfeed -- one token of the public header: prototypes are statements, not
# typedefs, holding rpma_name(
function hfeed(t) {
	if (t == ";" || t == "{" || t == "}") { hstmt = ""; hprev = ""; hn0 = 0; return }
	hn0++
	if (hn0 == 1 && t == "typedef") hstmt = "typedef"
	if (t == "(" && hprev ~ /^rpma_/ && hstmt == "") {
		hstmt = hprev
		if (!(hprev in pub)) { pub[hprev] = ++np; pubname[np] = hprev }
	}
	hprev = t
}

BEGIN {
	while ((getline line < mapfile) > 0) {
		split(line, f, " ")
		node[f[1]] = f[2]
		nmap++
	}
	na = split(allow, al, " ")
	for (i = 1; i <= na; i++) allowed[al[i]] = 1
}

FNR == 1 {
	# a new file: every state starts over
	if (NR > 1 && depth != 0) {
		printf("api-coverage.sh: %s: unbalanced braces\n", fbase) > "/dev/stderr"
		bad = 1
	}
	fbase = base(FILENAME); isheader = (FILENAME == hdrfile)
	incom = 0; depth = 0; hn = 0; pend = ""; cur = ""; inmacro = 0
	files[++nf] = fbase
}

{
	s = clean($0)
	if (inmacro) {
		cont = (s ~ /\\[ \t]*$/)
		sub(/\\[ \t]*$/, "", s)
		n = tokens(s, tk)
		for (i = 1; i <= n; i++) { if (mpend != "") { addref(mnode, mpend, tk[i] == "("); mpend = "" } if (isid(tk[i])) mpend = tk[i] }
		if (!cont) { addref(mnode, mpend, 0); inmacro = 0 }
		next
	}
	if (s ~ /^[ \t]*#/) {
		if (!isheader && match(s, /^[ \t]*#[ \t]*define[ \t]+[A-Za-z_][A-Za-z0-9_]*/)) {
			d = substr(s, RSTART, RLENGTH); sub(/.*[ \t]/, "", d)
			mnode = define(d); mpend = ""
			rest = substr(s, RSTART + RLENGTH)
			cont = (rest ~ /\\[ \t]*$/)
			sub(/\\[ \t]*$/, "", rest)
			# a function-like macro: leave its parameter list out
			if (rest ~ /^\(/) sub(/^\([^)]*\)/, "", rest)
			n = tokens(rest, tk)
			for (i = 1; i <= n; i++) { if (mpend != "") { addref(mnode, mpend, tk[i] == "("); mpend = "" } if (isid(tk[i])) mpend = tk[i] }
			if (cont) inmacro = 1
			else addref(mnode, mpend, 0)
		}
		next
	}
	n = tokens(s, tk)
	for (i = 1; i <= n; i++) {
		if (isheader) hfeed(tk[i])
		else feed(tk[i])
	}
}

# label -- how a helper node is shown
function label(k,    f, n) {
	f = k; sub(/:.*/, "", f); n = k; sub(/^[^:]*:/, "", n)
	if (f == "itest.c" || f == "itest.h") return n "()"
	return n "() [" f "]"
}

# resolve -- the node an identifier mentioned in node k names, or ""
function resolve(k, ident,    f) {
	f = (k ~ /^S:/) ? sfile[k] : k
	sub(/:.*/, "", f)
	if ((f ":" ident) in def) return f ":" ident
	if (ident in gdef) return gdef[ident]
	return ""
}

END {
	if (depth != 0) { printf("api-coverage.sh: %s: unbalanced braces\n", fbase) > "/dev/stderr"; bad = 1 }
	# the header and the map must name the same functions
	for (fn in pub) if (!(fn in node)) { printf("api-coverage.sh: %s is declared in librpma.h but not exported by librpma.map\n", fn) > "/dev/stderr"; bad = 1 }
	for (fn in node) if (!(fn in pub)) { printf("api-coverage.sh: %s is exported by librpma.map but not declared in librpma.h\n", fn) > "/dev/stderr"; bad = 1 }
	if (np == 0 || ns == 0) { print "api-coverage.sh: no public function or no scenario found" > "/dev/stderr"; bad = 1 }
	if (bad) exit 99

	# every scenario: the nodes it reaches (depth-first) and the calls they make
	for (si = 1; si <= ns; si++) {
		s = scen[si]
		sp = 1; stack[1] = s; vis[s, s] = 1
		while (sp > 0) {
			k = stack[sp--]
			m = split(calls[k], cl, " ")
			for (i = 1; i <= m; i++) {
				fn = cl[i]
				if (!(fn in pub)) continue
				if (k == s) direct[fn, s] = 1
				else {
					if (!((fn, k) in viahelper)) { viahelper[fn, k] = 1; helpers[fn] = helpers[fn] " " k }
				}
				reach[fn, s] = 1
			}
			m = split(refs[k], rl, " ")
			for (i = 1; i <= m; i++) {
				c = resolve(k, rl[i])
				if (c == "" || ((s, c) in vis)) continue
				vis[s, c] = 1
				stack[++sp] = c
				if (!((c, s) in hreach)) { hreach[c, s] = 1; hscen[c] = hscen[c] " " s }
			}
		}
	}

	nP = 0; nV = 0
	for (si = 1; si <= ns; si++) if (kind[scen[si]] == "P") nP++; else nV++

	print "# librpma public functions and the integration scenarios that call them"
	print ""
	printf("Generated by tests/coverage/api-coverage.sh from include/librpma.h, core/librpma.map and tests/integration/ (%d scenarios: %d PROVIDER_TEST, run on every provider; %d VERBS_TEST, verbs only, marked [verbs]).\n", ns, nP, nV)
	print ""
	print "| # | function | scenarios calling it in their body | reached through helpers (scenarios: see below) | status |"
	print "|---|---|---|---|---|"
	nd = 0; nh = 0; nv = 0; nn = 0; nfail = 0; ndep = 0
	for (i = 1; i <= np; i++) {
		fn = pubname[i]
		dl = ""; dP = 0; anyP = 0; anyV = 0
		for (si = 1; si <= ns; si++) {
			s = scen[si]
			if ((fn, s) in reach) { if (kind[s] == "P") anyP = 1; else anyV = 1 }
			if (!((fn, s) in direct)) continue
			if (kind[s] == "P") dP = 1
			dl = dl (dl == "" ? "" : ", ") substr(s, 3) (kind[s] == "V" ? " [verbs]" : "")
		}
		hl = ""
		m = split(helpers[fn], hk, " ")
		for (j = 1; j <= m; j++) {
			cnt = 0; cp = 0
			q = split(hscen[hk[j]], hs, " ")
			for (l = 1; l <= q; l++) { cnt++; if (kind[hs[l]] == "P") cp++ }
			hl = hl (hl == "" ? "" : "; ") label(hk[j]) " (" cnt (cnt == ns ? ", every scenario" : "") ")"
		}
		if (dP) { st = "direct"; nd++ }
		else if (anyP) { st = "helpers only"; nh++ }
		else if (anyV) { st = "verbs only"; nv++ }
		else { st = "NONE"; nn++ }
		fail = (st == "verbs only" || st == "NONE" || (strict && st == "helpers only"))
		if (fail && (fn in allowed)) { st = st ", allowed"; fail = 0 }
		if (fail) { nfail++; failed = failed " " fn }
		dep = (node[fn] == "LIBRPMA_1.1") ? " (deprecated)" : ""
		if (dep != "") ndep++
		printf("| %d | `%s`%s | %s | %s | %s |\n", i, fn, dep, dl == "" ? "-" : dl, hl == "" ? "-" : hl, st)
	}

	print ""
	print "## Helpers and the scenarios that reach them"
	print ""
	print "| helper | scenarios |"
	print "|---|---|"
	# helpers that call a public function, in order of first appearance
	for (i = 1; i <= np; i++) {
		m = split(helpers[pubname[i]], hk, " ")
		for (j = 1; j <= m; j++) if (!(hk[j] in shown)) { shown[hk[j]] = 1; horder[++nho] = hk[j] }
	}
	for (j = 1; j <= nho; j++) {
		h = horder[j]; sl = ""; cnt = 0
		for (si = 1; si <= ns; si++) {
			s = scen[si]
			if ((h, s) in hreach) { cnt++; sl = sl (sl == "" ? "" : ", ") substr(s, 3) (kind[s] == "V" ? " [verbs]" : "") }
		}
		if (cnt == ns) sl = "every scenario (" ns ")"
		printf("| %s | %s |\n", label(h), sl)
	}

	print ""
	printf("Public functions: %d (%d of the 1.2 API, %d deprecated 0.10-era calls; librpma.map exports %d).\n", np, np - ndep, ndep, nmap)
	printf("Called in the body of a PROVIDER_TEST scenario: %d; through helpers only: %d; by verbs-only scenarios only: %d; by no scenario: %d.\n", nd, nh, nv, nn)
	if (nfail) {
		printf("FAIL: %d function(s) without a scenario on every provider%s:%s\n", nfail, strict ? " (strict: calling it in its body)" : "", failed)
		exit 1
	}
	printf("OK: every public function is called by a scenario that runs on every provider%s.\n", strict ? ", in the scenario'"'"'s own body" : "")
}
' "$hdr" "$idir/itest.h" "$idir/itest.c" "$@" >"$tmp/out" || status=$?

cat "$tmp/out"
if [ -n "$out" ]; then
	cp "$tmp/out" "$out"
fi
exit "$status"
