# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# callgrind-common.sh -- helpers of the callgrind scripts (sourced, not run)
#
# bench/callgrind.sh and bench/callgrind-fabric.sh source this file; n (the
# short run's samples) must be set by the sourcing script before per-op
# figures are asked for.
# shellcheck disable=SC2154 # n: the sourcing script's

# total_ir FILE [EVENT] -- the total of an event (default Ir) in the "summary:" line of a callgrind output
total_ir() {
	awk -v ev="${2:-Ir}" '
		/^events:/ { for (i = 2; i <= NF; i++) if ($i == ev) col = i }
		/^summary:/ { print (col ? $col : $2) + 0 }' "$1"
}

# incl_ir FILE FUNC_RE [EVENT] -- the inclusive cost of an event (default Ir) of the functions
# whose name matches FUNC_RE
incl_ir() {
	callgrind_annotate --inclusive=yes --show="${3:-Ir}" --sort="${3:-Ir}" --threshold=100 \
		--auto=no "$1" 2>/dev/null |
		awk -v re="$2" '$1 ~ /^[0-9,]+$/ && / \[[^]]*\]$/ {
			# lines with an object only: run where the sources resolve,
			# callgrind_annotate lists each function once more without one
			f = $0; sub(/ \[[^]]*\]$/, "", f); sub(/^.*:/, "", f)
			if (f ~ re) { v = $1; gsub(/,/, "", v); s += v }
		}
		END { printf "%.0f\n", s }'
}

# run_ir FILE [EVENT] -- total_ir without what the client spent opening and closing its
# connection (the inclusive cost of the transport's client_open and client_close: device
# lookup, fi_getinfo and the connection's setup take a few hundred thousand instructions more
# or less from one run to the next, seen over shm: +-1.7 million in rpma_utils_get_ibv_context,
# which the difference of two runs would spread over the operations)
run_ir() {
	awk -v t="$(total_ir "$1" "${2:-Ir}")" -v s="$(incl_ir "$1" '^[a-z]+_client_(open|close)$' "${2:-Ir}")" \
		'BEGIN { printf "%.0f\n", t - s }'
}

# calls_to FILE NAME -- how many calls of the function NAME the callgrind output counts
calls_to() {
	awk -v want="$2" '
		# name compression: "(id) name" the first time, "(id)" after
		/^c?fn=/ {
			s = $0; sub(/^c?fn=/, "", s)
			if (match(s, /^\([0-9]+\) /)) { id = substr(s, 1, RLENGTH - 1); name[id] = substr(s, RLENGTH + 1) }
			else if (s ~ /^\([0-9]+\)$/) id = s
			else { id = s; name[id] = s }
			if ($0 ~ /^cfn=/) cur = name[id]
			next
		}
		/^calls=/ { split($0, a, /[= ]/); if (cur == want) c += a[2] }
		END { print c + 0 }' "$1"
}

# lib_self FILE [OBJ_RE [FUNC_RE]] -- "function Ir" of the library's code: the
# functions of the objects matching OBJ_RE (default: librpma.so), and the lines
# inlined into the library's functions from other files (callgrind_annotate
# lists those without an object; FUNC_RE, default ^(rpma|vrb|fab)_, names them)
lib_self() {
	callgrind_annotate --threshold=100 --auto=no "$1" 2>/dev/null |
		awk -v objre="${2:-librpma\\.so}" -v funre="${3:-^(rpma|vrb|fab)_}" '$1 ~ /^[0-9,]+$/ {
			n = $1; gsub(/,/, "", n); f = $0
			obj = (f ~ / \[[^]]*\]$/)
			sub(/ \[[^]]*\]$/, "", f); sub(/^.*:/, "", f)
			if ($0 ~ objre || (!obj && f ~ funre))
				s[f] += n
		}
		END { for (f in s) print f, s[f] }'
}

# diff_per_op A B [DIGITS] -- (B - A) / 2 n, rounded to DIGITS decimals (default 0)
diff_per_op() {
	awk -v a="$1" -v b="$2" -v n="$n" -v d="${3:-0}" 'BEGIN { printf "%.*f\n", d, (b - a) / (2 * n) }'
}

# sum_per_op A.lib B.lib -- (total of B - total of A) / 2 n over two lib_self lists
sum_per_op() {
	awk -v n="$n" 'FNR == NR { A += $2; next } { B += $2 } END { printf "%.0f\n", (B - A) / (2 * n) }' "$1" "$2"
}

# top_per_op A.lib B.lib K -- the K functions whose self cost grew most per operation
top_per_op() {
	awk -v n="$n" 'FNR == NR { A[$1] = $2; next } { B[$1] = $2 }
	END {
		for (f in B) { d = (B[f] - A[f]) / (2 * n); if (d >= 0.5) printf "%.0f %s\n", d, f }
	}' "$1" "$2" | sort -rn | head -n "$3" | awk '{ printf "%s %s; ", $2, $1 }'
}
