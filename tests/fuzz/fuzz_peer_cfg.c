/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_peer_cfg.c -- libFuzzer target: peer-configuration descriptors from the
 * peer, applied to a connection, and the flush gating that follows from them
 *
 * Input: a configuration byte (peer kind, remote region usage and size), then
 * records until the input runs out: a length byte and that many descriptor
 * bytes, a flush type, flags, an offset and a length.  Each descriptor is
 * decoded (RPMA_E_INVAL below one byte, else direct write to PMem is "first
 * byte non-zero"), re-encoded, applied to the connection (a later one
 * overrides an earlier one) and followed by an rpma_flush() whose result
 * must match the gating rules of HACKING.md.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAX_RECORDS 32
#define POISON	    ((struct rpma_peer_cfg *)(uintptr_t)0x5a5a5a5a)

/* remote_region -- a remote region decoded from a descriptor the target builds */
static struct rpma_mr_remote *remote_region(uint64_t size, uint8_t usage)
{
	uint8_t desc[21];
	uint64_t addr = 0x7f0000000000ULL;
	for (int i = 0; i < 8; i++) {
		desc[i] = (uint8_t)(addr >> (8 * i));
		desc[8 + i] = (uint8_t)(size >> (8 * i));
	}
	memset(desc + 16, 0x11, 4);
	desc[20] = usage;
	struct rpma_mr_remote *rmr = NULL;
	int ret = rpma_mr_remote_from_descriptor(desc, sizeof(desc), &rmr);
	FUZZ_CHECK(ret == 0, "rpma_mr_remote_from_descriptor: %d", ret);
	return rmr;
}

/* LLVMFuzzerInitialize -- peers for all inputs */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

/* LLVMFuzzerTestOneInput -- a sequence of peer configurations applied to one connection */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	fuzz_begin();

	uint8_t cfg = fuzz_u8(&in);
	enum fuzz_peer_kind kind = (enum fuzz_peer_kind)(cfg % FUZZ_PEER_MAX);
	/* the remote region: at least one of the flush usages most of the time */
	uint8_t usage = fuzz_u8(&in) | 0x01;
	uint64_t rsize = fuzz_u16(&in);
	struct rpma_mr_remote *rmr = remote_region(rsize, usage);
	struct rpma_conn *conn = fuzz_conn(kind, NULL);
	bool dw2pmem = false;	/* what the connection believes now */
	bool announces = false; /* the applied byte had bit 7 (rpma_verbs(7)) */

	for (int i = 0; i < MAX_RECORDS && !fuzz_empty(&in); i++) {
		size_t dsize;
		uint8_t *desc = fuzz_bytes(&in, fuzz_u8(&in) % 4, &dsize);
		bool null_desc = (cfg & 0x80) && dsize == 0;

		/* decode */
		struct rpma_peer_cfg *pcfg = POISON;
		int errors = fuzz_log_errors();
		int ret = rpma_peer_cfg_from_descriptor(null_desc ? NULL : desc, dsize, &pcfg);
		bool valid = !null_desc && dsize >= 1;
		bool dw = valid && desc[0] != 0;
		bool ann = valid && (desc[0] & 0x80) != 0;
		free(desc);
		if (!valid) {
			FUZZ_CHECK(ret == RPMA_E_INVAL, "a %zu-byte descriptor gave %d", dsize,
				   ret);
			FUZZ_CHECK(pcfg == POISON, "the output pointer was written on failure");
			FUZZ_CHECK(fuzz_log_errors() - errors == 1, "%d error messages",
				   fuzz_log_errors() - errors);
		} else {
			FUZZ_CHECK(ret == 0 && pcfg != NULL && pcfg != POISON,
				   "a %zu-byte descriptor gave %d", dsize, ret);
			bool got = !dw;
			ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &got);
			FUZZ_CHECK(ret == 0 && got == dw, "direct_write_to_pmem %d, %d expected",
				   got, dw);
			/* re-encoding gives the canonical byte */
			size_t esize = 0;
			uint8_t enc[2] = {0xee, 0xee};
			ret = rpma_peer_cfg_get_descriptor_size(pcfg, &esize);
			FUZZ_CHECK(ret == 0 && esize == 1, "descriptor size %zu", esize);
			ret = rpma_peer_cfg_get_descriptor(pcfg, enc);
			FUZZ_CHECK(ret == 0 && enc[0] == (dw ? 0x81 : 0) && enc[1] == 0xee,
				   "re-encoded descriptor %02x %02x", enc[0], enc[1]);
			ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg);
			FUZZ_CHECK(ret == 0, "rpma_conn_apply_remote_peer_cfg: %d", ret);
			dw2pmem = dw;
			announces = ann;
			ret = rpma_peer_cfg_delete(&pcfg);
			FUZZ_CHECK(ret == 0 && pcfg == NULL, "rpma_peer_cfg_delete: %d", ret);
		}

		/* flush under what the connection believes */
		uint8_t t = fuzz_u8(&in);
		int type = t < 0xf0 ? (t & 1) : (int)(int8_t)t;
		int flags = (t & 0x02) ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
		size_t off = fuzz_size(&in, rsize);
		size_t len = fuzz_size(&in, rsize - off);

		int expect;
		if (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY)
			expect = RPMA_E_INVAL;
		else if (type == RPMA_FLUSH_TYPE_PERSISTENT && !dw2pmem)
			expect = RPMA_E_NOSUPP;
		else if (!(usage & (type == RPMA_FLUSH_TYPE_PERSISTENT
					    ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT
					    : RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)))
			expect = RPMA_E_NOSUPP;
		else if (off > rsize || len > rsize - off)
			expect = RPMA_E_INVAL;
		else
			expect = 0;

		int calls = fuzz_calls();
		errors = fuzz_log_errors();
		ret = rpma_flush(conn, rmr, off, len, (enum rpma_flush_type)type, flags, NULL);
		FUZZ_CHECK(ret == expect,
			   "rpma_flush(type %d, dw2pmem %d, usage 0x%x, [%zu, +%zu) of %llu) "
			   "gave %d, %d expected",
			   type, dw2pmem, usage, off, len, (unsigned long long)rsize, ret, expect);
		if (expect == 0) {
			/* native only toward a region announced by an announcing peer */
			bool native = kind == FUZZ_PEER_VERBS_NATIVE && announces &&
				      (usage & 0xc0) == 0xc0;
			enum fake_op op = native ? FAKE_OP_FLUSH : FAKE_OP_READ;
			FUZZ_CHECK(fuzz_calls() - calls == 1 && fake_call_count(op) >= 1,
				   "flush: %d provider calls", fuzz_calls() - calls);
		} else {
			FUZZ_CHECK(fuzz_calls() == calls, "a refused flush reached the provider");
			FUZZ_CHECK(fuzz_log_errors() - errors == 1, "refused flush: %d messages",
				   fuzz_log_errors() - errors);
		}
	}

	fuzz_conn_delete(&conn);
	int ret = rpma_mr_remote_delete(&rmr);
	FUZZ_CHECK(ret == 0, "rpma_mr_remote_delete: %d", ret);
	fuzz_end();
	return 0;
}
