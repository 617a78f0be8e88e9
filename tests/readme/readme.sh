#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# readme.sh -- run every command of README.md, so that the README cannot rot
#
# README.md's fenced shell blocks each follow a marker line:
#   <!-- readme-test -->            run here, in order, each in a fresh bash
#                                   (-euo pipefail) started at the top of a
#                                   copy of the source tree, with HOME set to
#                                   an empty directory of the test;
#   <!-- readme-test: NAME -->      run by another test (tests/debian/replace.sh
#                                   runs "package", "package-install" and
#                                   "package-restore" in a
#                                   clean Debian root), checked here only for
#                                   being one of the known names.
# Also checked: no shell block without a marker (an untested command), and
# the C block of the minimal program is examples/minimal/client.c verbatim.
# The ports 72NN of the README become RPMA_README_PORT + 1NN (default: a
# port derived from the pid) so that parallel runs do not collide.
# Environment: top_srcdir (default: this script's tree), RPMA_README_TIMEOUT
# (seconds per block, default 900), RPMA_README_KEEP=1 keeps the directory.
set -uo pipefail
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
readme=$src/README.md
limit=${RPMA_README_TIMEOUT:-900}
port=${RPMA_README_PORT:-$((20000 + ($$ * 13) % 30000))}

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
failures=0

work=$(mktemp -d) || exit 99
[ "${RPMA_README_KEEP:-0}" = 1 ] || trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mkdir "$work/home" "$work/tree" "$work/blocks"

# the blocks: marker, then a fenced block; blocks/N.sh and blocks/N.name
awk -v dir="$work/blocks" '
	/^<!-- readme-test(: [a-z-]+)? -->$/ {
		name = $0; sub(/^<!-- readme-test:? */, "", name); sub(/ *-->$/, "", name)
		if (name == "") name = "run"
		marked = 1; next
	}
	/^```/ && !inblock {
		lang = substr($0, 4)
		inblock = 1
		if (lang == "sh" || lang == "bash" || lang == "shell") {
			n++
			if (!marked) { print "unmarked shell block at line " NR > (dir "/unmarked") }
			f = dir "/" n ".sh"; printf "" > f
			print (marked ? name : "unmarked") > (dir "/" n ".name")
			shell = 1
		} else if (lang == "c") {
			c++; f = dir "/c" c ".c"; printf "" > f; shell = 1
		} else shell = 0
		marked = 0; next
	}
	/^```/ && inblock { inblock = 0; shell = 0; next }
	inblock && shell { print > f; next }
	NF { marked = 0 }
' "$readme"

[ -f "$work/blocks/unmarked" ] && while IFS= read -r l; do fail "README.md: $l (every command must be tested)"; done <"$work/blocks/unmarked"
if [ -f "$work/blocks/c1.c" ]; then
	if cmp -s "$work/blocks/c1.c" "$src/examples/minimal/client.c"; then
		echo "ok: the C block of README.md is examples/minimal/client.c"
	else
		fail "the C block of README.md differs from examples/minimal/client.c:"
		diff "$src/examples/minimal/client.c" "$work/blocks/c1.c" | head -20
	fi
else
	fail "README.md has no C block (the minimal program)"
fi

# a copy of the source tree: the files git knows (tracked and new) in a clone, everything in a tarball's tree
if [ -e "$src/.git" ] && git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard | grep -zv '^build' |
		xargs -0 -I{} sh -c '[ -e "{}" ] && printf "%s\0" "{}"' | tar --null -T - -cf -) | tar -C "$work/tree" -xf -
else
	tar -C "$src" --exclude=./build -cf - . | tar -C "$work/tree" -xf -
	chmod -R u+w "$work/tree"
fi

set -m
ran=0
n=$(ls "$work/blocks"/*.name 2>/dev/null | wc -l)
for i in $(seq 1 "$n"); do
	name=$(cat "$work/blocks/$i.name")
	case $name in
	run) ;;
	package | package-install | package-restore)
		echo "block $i: run by tests/debian/replace.sh ($name)"
		continue
		;;
	unmarked) continue ;;
	*)
		fail "block $i: unknown marker 'readme-test: $name'"
		continue
		;;
	esac
	sed -E "s/127\.0\.0\.1 72([0-9][0-9])/127.0.0.1 \$(($port + 1\1))/g" "$work/blocks/$i.sh" >"$work/blocks/$i.run"
	echo "=== block $i: $(grep -c . "$work/blocks/$i.sh") command line(s)"
	sed 's/^/  $ /' "$work/blocks/$i.sh"
	start=$SECONDS
	(cd "$work/tree" && exec env HOME="$work/home" timeout -k 5 "$limit" bash -euo pipefail "$work/blocks/$i.run") \
		>"$work/blocks/$i.log" 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	kill -- -"$pid" 2>/dev/null
	tail -15 "$work/blocks/$i.log" | sed 's/^/  | /'
	if [ "$rc" -ne 0 ]; then
		fail "block $i exited with $rc after $((SECONDS - start)) s"
	else
		echo "ok: block $i ($((SECONDS - start)) s)"
	fi
	ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || fail "no block of README.md was run"
if [ "$failures" -ne 0 ]; then
	echo "readme: $failures failure(s)"
	exit 1
fi
echo "readme: $ran blocks of README.md run, all passed"
