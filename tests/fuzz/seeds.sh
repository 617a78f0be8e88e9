#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/fuzz/seeds.sh -- (re)write the seed corpus of the fuzz targets
#
# Usage: tests/fuzz/seeds.sh [corpus-dir]   (default: tests/fuzz/corpus next to this script)
#
# Each seed is a small valid or malformed input in the layout its target reads
# (see the comment at the top of tests/fuzz/fuzz_<target>.c).  The files are
# kept in the tree; this script documents how they were made.
set -euo pipefail

dir=${1:-$(cd "$(dirname "$0")" && pwd)/corpus}

# b HEX... -- raw bytes
b() {
	local x
	for x in "$@"; do printf '%b' "\\x$x"; done
}

# le N VALUE -- VALUE as N little-endian bytes (VALUE may be hex, 0x...)
le() {
	local n=$1 v=$2 i
	for ((i = 0; i < n; i++)); do
		printf '%b' "\\x$(printf %02x $(((v >> (8 * i)) & 0xff)))"
	done
}

# mr_desc DESC -- a 21-byte descriptor: addr size key usage
mrd() {
	le 8 "$1"
	le 8 "$2"
	le 4 "$3"
	b "$(printf %02x "$4")"
}

# size0 V -- a fuzz_size() of a small value; sizefull V -- a full 64-bit one
size0() { b 00 "$(printf %02x "$1")"; }
size16() { b 01; le 2 "$1"; }
sizefull() { b 02; le 8 "$1"; }
sizenear() { b 03 "$(printf %02x "$1")"; } # ref - V

seed() { # seed TARGET NAME -- write stdin to the corpus
	mkdir -p "$dir/$1"
	cat > "$dir/$1/$2"
}

# ----- fuzz_mr_desc: cfg, desc length, desc, then ops
# op write(0): doff len soff flags imm inject
{ b 00 15; mrd 0x7f0000001000 4096 0xabcd1234 0xff
  b 00; size0 0; size0 64; size0 0; b 03; le 4 0; b 00
  b 07; size0 0; size0 64; b 01; b 03; b 00       # flush visibility
  b 03; size0 8; size0 16; size0 0; b 01; b 00    # read
  b 05; size0 8; size0 0; b 03; b 00; le 8 0x1122334455667788 # atomic write
} | seed mr_desc valid-21-write-flush-read-atomic
{ b 01 1a; mrd 0x7f0000002000 65536 0x89abcdef 0x3f; b e5; le 4 0x01020304
  b 01; size0 0; size16 4096; size0 0; b 02; le 4 0xdeadbeef; b 00 # write_with_imm
  b 07; size0 0; size16 4096; b 00; b 01; b 00 # flush persistent (no dw2pmem)
} | seed mr_desc valid-26-long-key-native
{ b 11 1a; mrd 0x1000 128 0x55 0x30; b 00; le 4 0x01020304
  b 07; size0 120; size0 8; b 00; b 03; b 00 # persistent flush with dw2pmem
  b 07; sizenear 4; size0 8; b 01; b 03; b 00 # flush near the end (APM moves back)
} | seed mr_desc valid-26-no-tag-dw2pmem
{ b 02 15; mrd 0 4096 0x1234 0x08
  b 00; size16 4090; size0 16; size0 0; b 01; le 4 0; b 00 # write beyond the end
  b 00; sizefull 0xffffffffffffffff; size0 1; size0 0; b 01; le 4 0; b 00
  b 02; size0 0; size0 0; size0 0; b 01; le 4 0; b 40 # zero-length form
  b 04; size0 0; size0 0; size0 0; b 03; b 40
} | seed mr_desc fabric-offset-addressing-bounds
{ b 00 15; mrd 0xffffffffffffff00 4096 0x77 0xff # refused when decoded (the end wraps)
  b 00; size16 512; size0 8; size0 0; b 03; le 4 0; b 00 # start address would overflow
  b 00; size0 16; size0 8; size0 0; b 03; le 4 0; b 80 # provider failure injected
} | seed mr_desc address-overflow
{ b 00 15; mrd 0xfffffffffffff800 4096 0x77 0xff
  b 00; size0 0; size16 4096; size0 0; b 03; le 4 0; b 00 # the end wraps past 2^64: refused when decoded
} | seed mr_desc address-end-wraps
{ b 00 15; mrd 0xffffffffffffff00 0xff 0x77 0xff
  b 00; size0 0xf0; size0 8; size0 0; b 03; le 4 0; b 00 # ends at 2^64 - 1: accepted, last bytes written
  b 00; size0 0xf8; size0 8; size0 0; b 03; le 4 0; b 00 # one byte beyond the end
} | seed mr_desc address-end-at-top
{ b 00 15; mrd 0x4000 0 0x99 0x10
  b 07; size0 0; size0 0; b 01; b 01; b 00 # empty region: zero-byte APM read
} | seed mr_desc empty-region-flush
{ b 00 15; mrd 0x4000 0xffffffffffffffff 0x99 0xff
  b 06; size0 8; size16 4090; b 03; b 00; le 8 1 # 0.10 write_atomic beyond the local region
  b 00; size0 0; size0 0; size0 0; b 00; le 4 0; b 00 # flags 0
  b 00; size0 0; size0 0; size0 0; b 84; le 4 0; b 00 # unknown flags
} | seed mr_desc huge-region-bad-flags
{ b 00 14; le 8 0x1000; le 8 4096; le 4 1; } | seed mr_desc short-20
{ b 00 15; mrd 0x1000 4096 0x1 0x00; } | seed mr_desc usage-0
{ b 00 00; } | seed mr_desc empty

# ----- fuzz_peer_cfg: cfg, usage, region size (u16), then records:
# desc length (% 4), desc, type byte, offset, length
{ b 00 30; le 2 4096
  b 01 01; b 00; size0 0; size0 64  # dw2pmem, persistent flush
  b 01 00; b 00; size0 0; size0 64  # no dw2pmem: NOSUPP
  b 01 00; b 01; size0 0; size0 64  # visibility
} | seed peer_cfg apply-and-flush
{ b 01 10; le 2 64
  b 02 ff 00; b 00; size0 0; size0 8 # dw2pmem, region without the persistent usage
  b 00; b 01; size0 60; size0 8      # empty descriptor, then a flush beyond the end
  b 01 80; b f3; size0 0; size0 1    # unknown flush type
} | seed peer_cfg gating-and-malformed
{ b 82 31; le 2 0
  b 00; b 00; size0 0; size0 0       # NULL descriptor
  b 03 01 02 03; b 00; size0 0; size0 0
} | seed peer_cfg null-and-empty-region

# ----- fuzz_private_data: cfg, peer pdata, [our pdata], events
{ b 10; b 08; printf 'hello!!\0'; b 00 04; printf 'ack!'
  b 00 00                 # ESTABLISHED without data
  b 01 00                 # CLOSED
} | seed private_data incoming-accept
{ b 11; b 38; head -c 56 /dev/zero | tr '\0' 'x'; b 00 39; head -c 57 /dev/zero | tr '\0' 'y'; } |
	seed private_data incoming-our-pdata-too-long
{ b 72; b ff; head -c 255 /dev/zero | tr '\0' 'z'; } | seed private_data incoming-255-reject
{ b 00; b 00; b 01 00
  b 00 05; printf 'first'    # ESTABLISHED with data: kept
  b 00 06; printf 'second'   # a second ESTABLISHED: the first stays
  b e0; le 4 0x7fffffff; b 00 # unknown event
  b c0; b 00                 # RPMA_CONN_UNDEFINED
  b 0f; b 00                 # nothing waiting
} | seed private_data outgoing-events
{ b 01; b 00; b 02 03; printf 'abc'; } | seed private_data outgoing-null-ptr-pdata
{ b 12; b 00; b 00 00; } | seed private_data incoming-empty-pair

# ----- fuzz_completions: cfg, commands (cmd % 8: 0-2 queue, 3-4 get_wc, 5 get_completion,
# 6 conn_completion_get, 7 bogus poll; bit 7: the receive CQ)
# make_wc: sel, wr_id, [status], [opcode], byte_len, imm, [flags], vendor_err, qp_num,
# src_qp, pkey_index, slid, sl, dlid_path_bits
wc() { # wc SEL OPC-SELECTED
	b "$1"; le 8 0x1122334455667788; le 4 64; le 4 0x01020304; b 00; le 4 0x2a; b 00 00 00 00 00
}
{ b 10
  b 00; wc 80            # SEND ok, WITH_IMM flag
  b 80; wc 98            # RECV on the rcq, WITH_IMM
  b 80; wc a0            # RECV_RDMA_WITH_IMM on the rcq
  b 05                   # 0.10 completion of the main CQ
  b 85; b 85             # two from the rcq, the second finds none
  b 00; wc 02            # a failed one
  b 03; b 04 01          # get_wc(4)
} | seed completions rcq-mapping
{ b 00
  b 00; wc 28            # COMP_SWAP: unsupported in the 0.10 form
  b 06
  b 07; b 03; le 4 2     # bogus poll count
  b 07; b 00; le 4 0xfffe7960 # a negative answer
  b 03; b 00 01          # num_entries 0
  b 03; b 02 00          # num_entries 2 without num_entries_got
} | seed completions unsupported-and-bogus
{ b 01
  b 00; b 05; le 8 7; le 4 0x7fffffff; le 4 0x7fffffff; le 4 0; le 4 0; b 00; le 4 0; b 00 00 00 00 00
  b 03; b 7f 01
} | seed completions arbitrary-status-opcode
