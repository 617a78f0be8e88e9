#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# modules.sh -- the providers are modules: librpma.so.0 links no transport library, a program
# that makes no transport call loads none, a module is loaded when selected, and a module
# that cannot be used (missing, another ABI version, its transport library absent) gives
# RPMA_E_NOSUPP with a log line naming the reason while the library keeps working
set -uo pipefail
build=${top_builddir:-.}
sel=$build/tests/modules/select
fail=0

bad() {
	echo "FAIL: $*"
	fail=1
}

# 1. no transport library among librpma.so.0's dependencies
needed=$(readelf -d "$build/.libs/librpma.so.0" | awk '/NEEDED/ { print $NF }' | tr -d '[]' | tr '\n' ' ')
echo "librpma.so.0 NEEDED: $needed"
case " $needed " in
*libfabric* | *libibverbs* | *librdmacm*) bad "librpma.so.0 links a transport library" ;;
esac

# 2. a program that makes no transport call loads no transport library
loaded=$(LD_DEBUG=files "$sel" 2>&1 >/dev/null | grep -oE 'file=[^ ]*(libfabric|libibverbs|librdmacm|librpma-)[^ ]*' | sort -u | tr '\n' ' ')
echo "loaded without a transport call: ${loaded:-nothing}"
[ -z "$loaded" ] || bad "a transport library was loaded before any transport call"

# run NAME EXPECTED-OUTPUT EXPECTED-LOG-PATTERN ENV... -- select 127.0.0.1 under ENV
run() {
	local name=$1 want=$2 logpat=$3 out err
	shift 3
	err=$(mktemp)
	out=$(env "$@" "$sel" 127.0.0.1 2>"$err")
	local lines
	lines=$(grep -c . "$err")
	echo "$name: $out; log: $(head -3 "$err" | sed 's/^.*\*ERROR\* //')"
	[ "$out" = "$want" ] || bad "$name: got '$out', expected '$want'"
	if [ -n "$logpat" ]; then
		grep -q -- "$logpat" "$err" || bad "$name: no log line matching '$logpat'"
		[ "$lines" -eq 1 ] || bad "$name: $lines log lines, expected one"
	fi
	rm -f "$err"
}

run "fabric" "ok" "" RPMA_PROVIDER=fabric
run "unknown provider" "Not supported" 'RPMA_PROVIDER="nosuch"' RPMA_PROVIDER=nosuch
run "bad name" "Not supported" 'no such provider' RPMA_PROVIDER=../fabric
run "another ABI version" "Not supported" 'ABI version 2, this librpma has 1' \
	RPMA_PROVIDER=badabi RPMA_PROVIDER_PATH="$build/tests/modules/.libs"

# 3. libfabric not installed (hidden in a private mount namespace): the fabric provider is
# refused with one line, a program without transport calls still runs
lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libfabric.so.1" { print $NF; exit }')
if [ -n "$lib" ] && unshare -m true 2>/dev/null; then
	# shellcheck disable=SC2016
	hidden='mount --bind /dev/null "$1" && shift && exec "$@"'
	out=$(unshare -m sh -c "$hidden" sh "$(realpath "$lib")" env RPMA_PROVIDER=fabric \
		"$sel" 127.0.0.1 2>&1)
	echo "libfabric hidden, RPMA_PROVIDER=fabric: $(echo "$out" | sed 's/^.*\*ERROR\* //' | tr '\n' '|')"
	echo "$out" | grep -q '^Not supported$' || bad "libfabric hidden: fabric not refused"
	[ "$(echo "$out" | grep -c 'the provider is not usable: cannot load')" -eq 1 ] ||
		bad "libfabric hidden: no single log line saying why"
	out=$(unshare -m sh -c "$hidden" sh "$(realpath "$lib")" "$sel" 2>&1)
	[ "$out" = "ok" ] || bad "libfabric hidden: a program without transport calls: '$out'"
else
	echo "(libfabric not hidden: no libfabric.so.1 or no unshare -m here)"
fi

[ "$fail" -eq 0 ] && echo "modules: ok"
exit "$fail"
