#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# plot-scale.sh -- rpma-scale's series as one plot: throughput, latency, probe, cost per connection
#
# Usage: bench/plot-scale.sh -o OUT.svg [-t TITLE] CSV...
#   -o FILE   the plot to write (required): SVG, or PNG when FILE ends in .png
#   -t TITLE  the title above the four panels (default: "rpma-scale")
#   CSV       files written by rpma-scale --csv (several runs may share one
#             file: every (file, label, op, bytes) is one line in each panel)
#   -h        this help
#
# Panels, each against the connection count (log scale):
#   1  aggregate operations per second
#   2  p50 and p99 latency of one operation (us, log scale)
#   3  p50 of the probe connection: connect + write + flush (ms, log scale)
#   4  the server's heap per connection (KiB, log scale) and its descriptors
#      per connection ((fds during the count - fds idle) / connections, right axis)
# Columns are looked up by name in each file's header, so files of older and
# newer rpma-scale builds mix.  Needs gnuplot (Debian: gnuplot-nox).
# Exit status: 0 written, 1 bad usage or no rows, 2 gnuplot missing or failed.
set -euo pipefail

out= title=rpma-scale
usage() { sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//'; }
while getopts "o:t:h" opt; do
	case $opt in
	o) out=$OPTARG ;;
	t) title=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
if [[ -z $out || $# -eq 0 ]]; then
	usage >&2
	exit 1
fi
command -v gnuplot >/dev/null || {
	echo "plot-scale: gnuplot not found (install gnuplot-nox)" >&2
	exit 2
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one data file per series: conns ops/s p50 p99 probe_ms heap_kb_per_conn fds_per_conn
series=()
for csv in "$@"; do
	[[ -r $csv ]] || { echo "plot-scale: cannot read $csv" >&2; exit 1; }
	base=$(basename "$csv" .csv)
	while IFS= read -r key; do
		[[ -n $key ]] || continue
		f=$tmp/s${#series[@]}.dat
		awk -F, -v key="$key" '
			NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$c["label"] "|" $c["op"] "|" $c["bytes"] == key {
				n = $c["conns"]
				fds = (n > 0) ? ($c["srv_fds_at"] - $c["srv_fds_idle"]) / n : 0
				print n, $c["ops_per_s"], $c["p50_us"], $c["p99_us"], $c["probe_ms"],
					$c["srv_heap_kb_per_conn"], fds
			}' "$csv" | sort -n >"$f"
		[[ -s $f ]] || continue
		IFS='|' read -r label op bytes <<<"$key"
		name="${label:-$base} ($op, $bytes B)"
		series+=("$f"$'\t'"${name//\"/}")
	done < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["label"] "|" $c["op"] "|" $c["bytes"] }' "$csv" | awk '!seen[$0]++')
done
if [[ ${#series[@]} -eq 0 ]]; then
	echo "plot-scale: no rows in $*" >&2
	exit 1
fi

# one "plot" command per panel, a line per series
plot_cmd() { # $1 = using clause, $2 = title suffix, $3 = axes (optional), $4 = dash type
	local sep="" s f name i=0
	for s in "${series[@]}"; do
		f=${s%%$'\t'*}
		name=${s#*$'\t'}
		printf '%s"%s" using %s %s with linespoints lc %d dt %s pt 7 ps 0.5 title "%s%s"' \
			"$sep" "$f" "$1" "${3:+axes $3}" $((i + 1)) "${4:-1}" "$name" "$2"
		sep=", \\"$'\n'"     "
		i=$((i + 1))
	done
}

# the right axis a little above the most descriptors per connection
fdmax=$(for s in "${series[@]}"; do awk '{ print $7 }' "${s%%$'\t'*}"; done | sort -g | tail -1)
y2max=$(awk -v m="${fdmax:-0}" 'BEGIN { printf "%d", m * 1.25 + 1 }')
term='svg size 1200,900 dynamic font "sans,11"'
[[ $out != *.png ]] || term='pngcairo size 1200,900 font "sans,10"'
gp=$tmp/plot.gp
{
	cat <<EOF
set terminal $term
set output "$out"
set multiplot layout 2,2 title "${title//\"/}"
set logscale x 2
set xlabel "connections"
set grid
set key top left font ",9"
set title "aggregate operations per second"
set ylabel "ops/s"
set yrange [0:*]
plot $(plot_cmd 1:2 "")
set title "latency of one operation (p50 solid, p99 dashed)"
set ylabel "us"
set logscale y
set autoscale y
plot $(plot_cmd 1:3 " p50"), \\
     $(plot_cmd 1:4 " p99" "" 2)
set title "probe connection: connect + write + flush, p50"
set ylabel "ms"
plot $(plot_cmd 1:5 "")
set title "server cost per connection (heap solid, descriptors dashed)"
set ylabel "heap, KiB per connection"
set y2label "descriptors per connection"
set y2tics
set y2range [0:$y2max]
set key bottom left
plot $(plot_cmd 1:6 " heap"), \\
     $(plot_cmd 1:7 " fds" x1y2 2)
unset multiplot
EOF
} >"$gp"
if ! gnuplot "$gp" 2>"$tmp/gnuplot.log"; then
	echo "plot-scale: gnuplot failed:" >&2
	cat "$tmp/gnuplot.log" >&2
	exit 2
fi
[[ -s $out ]] || { echo "plot-scale: $out is empty" >&2; exit 2; }
echo "plot-scale: $out (${#series[@]} series)"
