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

# 1b. librpma.pc asks for no library to link beyond what librpma.so.0 links (only libibverbs,
# for the <infiniband/verbs.h> that include/librpma.h includes)
pcreq=$(sed -n 's/^Requires\.private: *//p' "$build/librpma.pc")
echo "librpma.pc Requires.private: $pcreq"
for lib in $pcreq; do
	case $lib in
	libibverbs) ;;
	*) bad "librpma.pc Requires.private lists $lib, which librpma.so.0 does not link" ;;
	esac
done

# 1c. a module's message reaches the log function whole: the core formats it once (no
# intermediate buffer in the module cuts it short); the fabric provider's refusal of a
# 600-character address names the address and goes on after it
long=$(printf 'h%.0s' $(seq 600))
msg=$(RPMA_PROVIDER=fabric "$sel" "$long" 2>&1 | grep -F "fabric: " | grep -F "$long")
echo "fabric refusal of a 600-character address: ${#msg} characters logged"
case $msg in
*"$long ("*) ;;
*) bad "the fabric provider's message about a 600-character address was cut: ${msg:0:120}..." ;;
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
run "another ABI version" "Not supported" 'ABI version 4, this librpma has 3' \
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

# 3b. the reverse: the fabric module links no rdma-core library of its own (Debian's
# libfabric1 itself depends on libibverbs1 and librdmacm1, so a machine with libfabric
# and without rdma-core's libraries cannot be made here), and with the verbs module
# absent (hidden) automatic selection still serves 127.0.0.1 through fabric
fneeded=$(readelf -d "$build/.libs/librpma/librpma-fabric.so" | awk '/NEEDED/ { print $NF }' | tr -d '[]' | tr '\n' ' ')
echo "librpma-fabric.so NEEDED: $fneeded"
case " $fneeded " in
*libibverbs* | *librdmacm*) bad "librpma-fabric.so links an rdma-core library" ;;
esac
vmod=$build/.libs/librpma/librpma-verbs.so
if [ -f "$vmod" ] && unshare -m true 2>/dev/null; then
	# shellcheck disable=SC2016
	hidden='mount --bind /dev/null "$1" && shift && exec "$@"'
	out=$(unshare -m sh -c "$hidden" sh "$(realpath "$vmod")" env -u RPMA_PROVIDER \
		RPMA_LOG_LEVEL=info "$sel" 127.0.0.1 2>&1)
	echo "verbs module hidden, automatic selection: $(echo "$out" | grep -E 'serves|^ok|^Not' | sed 's/^.*\*INFO\* //' | tr '\n' '|')"
	[ "$(echo "$out" | tail -1)" = ok ] || bad "verbs module hidden: automatic selection failed: $out"
else
	echo "(verbs module not hidden: not built or no unshare -m here)"
fi

# 4. an out-of-tree provider loaded from RPMA_PROVIDER_PATH: relay (tests/extprov), over fabric
relay_path="$(cd "$build/tests/extprov/.libs" && pwd):$(cd "$build/.libs/librpma" && pwd)"
out=$(RPMA_PROVIDER=relay RPMA_PROVIDER_PATH=$relay_path RPMA_LOG_LEVEL=info "$sel" 127.0.0.1 2>&1)
echo "relay: $(echo "$out" | grep -E 'loaded|serves|^ok' | sed 's/^.*\*INFO\* //' | tr '\n' '|')"
echo "$out" | grep -q 'provider relay loaded' || bad "relay: not loaded from RPMA_PROVIDER_PATH"
[ "$(echo "$out" | tail -1)" = ok ] || bad "relay: the look-up failed"
for op in device_get conn_next_event cq_poll srq_recv; do
	out=$(RPMA_PROVIDER=relay RPMA_RELAY_DROP=$op RPMA_PROVIDER_PATH=$relay_path "$sel" 127.0.0.1 2>&1)
	echo "$out" | grep -q "lacks the mandatory op $op" && [ "$(echo "$out" | tail -1)" = "Not supported" ] ||
		bad "relay without $op: not refused: $out"
done
echo "relay without a mandatory op: refused (device_get, conn_next_event, cq_poll, srq_recv)"
out=$(RPMA_PROVIDER=relay RPMA_PROVIDER_PATH=/nonexistent "$sel" 127.0.0.1 2>&1)
echo "$out" | grep -q 'librpma-relay.so not found' || bad "relay without its directory: '$out'"
demo=$build/examples/replicate/rpma-replicate
if [ -x "$demo" ]; then
	ok=0
	for attempt in 1 2 3; do
		port=$((20000 + ($$ * 17 + attempt * 2011) % 20000))
		if RPMA_PROVIDER=relay RPMA_PROVIDER_PATH=$relay_path timeout -k 5 120 "$demo" demo \
			--records 200 --size 64 --port "$port" >"${TMPDIR:-/tmp}/modules-demo.$$" 2>&1; then
			ok=1
			break
		fi
	done
	tail -1 "${TMPDIR:-/tmp}/modules-demo.$$"
	rm -f "${TMPDIR:-/tmp}/modules-demo.$$"
	[ "$ok" -eq 1 ] || bad "the replication demo over relay failed"
fi

[ "$fail" -eq 0 ] && echo "modules: ok"
exit "$fail"
