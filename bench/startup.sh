#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# startup.sh -- process start with librpma: Debian's librpma0 against this build
#
# Usage: bench/startup.sh [RUNS [LABEL=LIBDIR ...]]
# Builds bench/startup.c against Debian's /usr/include/librpma.h and
# librpma.so.0 and runs the same binary RUNS times (default 20) with each
# library: Debian's, this build's (.libs) and any LABEL=LIBDIR given (e.g. an
# older build's .libs), once without any transport call and once with a
# device look-up of 127.0.0.1 under RPMA_PROVIDER=verbs, fabric and unset.
# Prints the mean and the fastest wall time per run in milliseconds.  STARTUP_ADDR
# replaces 127.0.0.1 (the Soft-RoCE guest: 192.0.2.1).
set -euo pipefail
src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
build=${top_builddir:-.}
runs=${1:-20}
shift || true
sys_lib=$(ls /usr/lib/*/librpma.so.0 /usr/lib/librpma.so.0 2>/dev/null | head -1 || true)
if [ -z "$sys_lib" ] || [ ! -e /usr/include/librpma.h ]; then
	echo "SKIPPED: Debian's librpma0/librpma-dev are not installed"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${CC:-cc}" -std=gnu11 -O1 -I/usr/include -o "$work/startup" "$src/bench/startup.c" \
	-L"$(dirname "$sys_lib")" -l:librpma.so.0

libs=("debian=" "this=$(cd "$build/.libs" && pwd)" "$@")

# measure LIBDIR PROVIDER ARGS... -- "mean min" in ms of $runs runs (LIBDIR empty: the system's)
measure() {
	local libdir=$1 prov=$2 t0 t1 sum=0 min= i d
	shift 2
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		if [ -n "$libdir" ]; then
			LD_LIBRARY_PATH=$libdir RPMA_PROVIDER=$prov "$work/startup" "$@" >/dev/null 2>&1 ||
				{ echo "failed -"; return; }
		else
			env -u LD_LIBRARY_PATH RPMA_PROVIDER="$prov" "$work/startup" "$@" >/dev/null 2>&1 ||
				{ echo "failed -"; return; }
		fi
		t1=$(date +%s%N)
		d=$(((t1 - t0) / 1000))
		sum=$((sum + d))
		if [ -z "$min" ] || [ "$d" -lt "$min" ]; then min=$d; fi
	done
	awk -v s="$sum" -v n="$runs" -v m="$min" 'BEGIN { printf "%.1f %.1f\n", s / n / 1000, m / 1000 }'
}

printf '%-10s %-22s %10s %10s\n' library call mean[ms] min[ms]
for entry in "${libs[@]}"; do
	label=${entry%%=*}
	dir=${entry#*=}
	read -r mean min < <(measure "$dir" "" )
	printf '%-10s %-22s %10s %10s\n' "$label" "none" "$mean" "$min"
	for prov in verbs fabric ""; do
		read -r mean min < <(measure "$dir" "$prov" ctx "${STARTUP_ADDR:-127.0.0.1}")
		printf '%-10s %-22s %10s %10s\n' "$label" "ctx ${prov:-auto}" "$mean" "$min"
	done
done
