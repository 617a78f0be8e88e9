/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_completions.c -- libFuzzer target: completions with arbitrary fields
 * (status, opcode, lengths, flags, immediate data) reaching the caller
 * through rpma_cq_get_wc() and the 0.10 rpma_cq_get_completion() mapping
 *
 * Input: a configuration byte (peer kind, a separate receive CQ), then
 * commands until the input runs out: queue a struct ibv_wc made of input
 * bytes on the main or the receive CQ, take completions with
 * rpma_cq_get_wc() (any num_entries, with or without num_entries_got), take
 * one with rpma_cq_get_completion() / rpma_conn_completion_get(), or make the
 * provider's poll answer a bogus count.  The core must hand out the queued
 * completions unchanged and in order, never write beyond the caller's array,
 * and map them to struct rpma_completion as documented (unknown opcode of a
 * successful completion: RPMA_E_NOSUPP; immediate data in host order).
 */

#define RPMA_NO_DEPRECATION_WARNINGS 1 /* the 0.10 calls are fuzzed too */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define QMAX	    32 /* the fake CQ's capacity */
#define MAX_CMDS    64
#define MAX_ENTRIES 40

/* the model of one CQ: what was queued and not yet taken */
struct qmodel {
	struct rpma_cq *cq;
	struct ibv_wc wc[QMAX];
	int head, count;
};

/* wc_equal -- every field of two completions */
static bool wc_equal(const struct ibv_wc *a, const struct ibv_wc *b)
{
	return a->wr_id == b->wr_id && a->status == b->status && a->opcode == b->opcode &&
	       a->vendor_err == b->vendor_err && a->byte_len == b->byte_len &&
	       a->imm_data == b->imm_data && a->qp_num == b->qp_num && a->src_qp == b->src_qp &&
	       a->wc_flags == b->wc_flags && a->pkey_index == b->pkey_index && a->slid == b->slid &&
	       a->sl == b->sl && a->dlid_path_bits == b->dlid_path_bits;
}

/* make_wc -- a completion made of input bytes, its opcode and status often meaningful */
static void make_wc(struct fuzz_in *in, struct ibv_wc *wc)
{
	static const int opcodes[] = {IBV_WC_SEND,	IBV_WC_RDMA_WRITE,	   IBV_WC_RDMA_READ,
				      IBV_WC_RECV,	IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_COMP_SWAP,
				      IBV_WC_FETCH_ADD, IBV_WC_ATOMIC_WRITE};
	memset(wc, 0, sizeof(*wc));
	uint8_t sel = fuzz_u8(in);
	wc->wr_id = fuzz_u64(in);
	wc->status = (sel & 0x01) ? (enum ibv_wc_status)fuzz_u32(in)
				  : (enum ibv_wc_status)((sel & 0x02) ? IBV_WC_REM_ACCESS_ERR
								      : IBV_WC_SUCCESS);
	wc->opcode = (sel & 0x04) ? (enum ibv_wc_opcode)fuzz_u32(in)
				  : (enum ibv_wc_opcode)opcodes[(sel >> 3) & 7];
	wc->byte_len = fuzz_u32(in);
	wc->imm_data = fuzz_u32(in);
	wc->wc_flags = (sel & 0x40) ? fuzz_u32(in) : ((sel & 0x80) ? IBV_WC_WITH_IMM : 0);
	wc->vendor_err = fuzz_u8(in);
	wc->qp_num = fuzz_u32(in);
	wc->src_qp = fuzz_u8(in);
	wc->pkey_index = fuzz_u8(in);
	wc->slid = fuzz_u8(in);
	wc->sl = fuzz_u8(in);
	wc->dlid_path_bits = fuzz_u8(in);
}

/* take -- the oldest completion of the model */
static struct ibv_wc take(struct qmodel *q)
{
	struct ibv_wc wc = q->wc[q->head];
	q->head = (q->head + 1) % QMAX;
	q->count--;
	return wc;
}

/* do_get_wc -- rpma_cq_get_wc() into an exact-size array */
static void do_get_wc(struct qmodel *q, struct fuzz_in *in)
{
	int num = (int8_t)fuzz_u8(in);
	if (num > MAX_ENTRIES)
		num = MAX_ENTRIES;
	bool with_got = (fuzz_u8(in) & 3) != 0;
	size_t n_alloc = num > 0 ? (size_t)num : 1;
	struct ibv_wc *wc = calloc(n_alloc, sizeof(*wc));
	FUZZ_CHECK(wc != NULL, "out of memory");
	int got = -77;

	int expect;
	if (num < 1 || (num > 1 && !with_got))
		expect = RPMA_E_INVAL;
	else if (q->count == 0)
		expect = RPMA_E_NO_COMPLETION;
	else
		expect = 0;

	int errors = fuzz_log_errors();
	int ret = rpma_cq_get_wc(q->cq, num, wc, with_got ? &got : NULL);
	FUZZ_CHECK(ret == expect, "rpma_cq_get_wc(%d, got %s) with %d queued: %d, %d expected", num,
		   with_got ? "yes" : "NULL", q->count, ret, expect);
	if (expect == RPMA_E_INVAL)
		FUZZ_CHECK(fuzz_log_errors() - errors == 1, "refusal with %d messages",
			   fuzz_log_errors() - errors);
	if (ret == 0) {
		int n = q->count < num ? q->count : num;
		if (with_got)
			FUZZ_CHECK(got == n, "got %d, %d expected", got, n);
		for (int i = 0; i < n; i++) {
			struct ibv_wc exp = take(q);
			FUZZ_CHECK(wc_equal(&wc[i], &exp), "completion %d of %d differs", i, n);
		}
	} else if (with_got) {
		FUZZ_CHECK(got == -77, "num_entries_got written on failure");
	}
	free(wc);
}

/* do_get_completion -- the 0.10 form of one completion, checked against the documented mapping */
static void do_get_completion(struct rpma_conn *conn, struct qmodel *q, bool via_conn)
{
	struct rpma_completion cmpl;
	memset(&cmpl, 0xa5, sizeof(cmpl));
	int ret = via_conn ? rpma_conn_completion_get(conn, &cmpl)
			   : rpma_cq_get_completion(q->cq, &cmpl);
	if (q->count == 0) {
		FUZZ_CHECK(ret == RPMA_E_NO_COMPLETION, "empty CQ: %d", ret);
		return;
	}
	struct ibv_wc wc = take(q);
	if (wc.status != IBV_WC_SUCCESS) {
		FUZZ_CHECK(ret == 0 && cmpl.op_context == (void *)(uintptr_t)wc.wr_id &&
				   cmpl.op_status == wc.status,
			   "failed completion: %d, context/status not passed on", ret);
		return;
	}
	int op;
	switch (wc.opcode) {
	case IBV_WC_RDMA_READ:
		op = RPMA_OP_READ;
		break;
	case IBV_WC_RDMA_WRITE:
		op = RPMA_OP_WRITE;
		break;
	case IBV_WC_SEND:
		op = RPMA_OP_SEND;
		break;
	case IBV_WC_RECV:
		op = RPMA_OP_RECV;
		break;
	case IBV_WC_RECV_RDMA_WITH_IMM:
		op = RPMA_OP_RECV_RDMA_WITH_IMM;
		break;
	default:
		FUZZ_CHECK(ret == RPMA_E_NOSUPP, "opcode %d: %d, RPMA_E_NOSUPP expected",
			   (int)wc.opcode, ret);
		return;
	}
	FUZZ_CHECK(ret == 0, "opcode %d: %d", (int)wc.opcode, ret);
	FUZZ_CHECK(cmpl.op == (enum rpma_op)op && cmpl.op_context == (void *)(uintptr_t)wc.wr_id &&
			   cmpl.byte_len == wc.byte_len && cmpl.op_status == IBV_WC_SUCCESS &&
			   cmpl.flags == wc.wc_flags,
		   "opcode %d mapped to op %d (len %u flags 0x%x)", (int)wc.opcode, (int)cmpl.op,
		   cmpl.byte_len, cmpl.flags);
	if ((op == RPMA_OP_RECV || op == RPMA_OP_RECV_RDMA_WITH_IMM) &&
	    (wc.wc_flags & IBV_WC_WITH_IMM))
		FUZZ_CHECK(cmpl.imm == ntohl(wc.imm_data), "imm 0x%x, 0x%x expected", cmpl.imm,
			   ntohl(wc.imm_data));
}

/* do_bogus_poll -- the provider's poll answers a count of its own */
static void do_bogus_poll(struct qmodel *q, struct fuzz_in *in)
{
	int num = 1 + fuzz_u8(in) % 8;
	int v = (int)fuzz_u32(in);
	if (v > 0 && v <= num)
		v = num + v; /* a count the array cannot hold */
	struct ibv_wc *wc = calloc((size_t)num, sizeof(*wc));
	FUZZ_CHECK(wc != NULL, "out of memory");
	int got = -77;
	fake_fail_next(FAKE_OP_CQ_POLL, v);
	int ret = rpma_cq_get_wc(q->cq, num, wc, &got);
	int expect = v < 0 ? v : (v == 0 ? RPMA_E_NO_COMPLETION : RPMA_E_UNKNOWN);
	FUZZ_CHECK(ret == expect, "poll answering %d for %d: %d, %d expected", v, num, ret, expect);
	FUZZ_CHECK(got == -77, "num_entries_got written on failure");
	free(wc);
}

/* LLVMFuzzerInitialize -- peers for all inputs */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

/* LLVMFuzzerTestOneInput -- a stream of completions on one connection's CQs */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	fuzz_begin();

	uint8_t cfgb = fuzz_u8(&in);
	enum fuzz_peer_kind kind = (enum fuzz_peer_kind)(cfgb % FUZZ_PEER_MAX);
	bool with_rcq = (cfgb & 0x10) != 0;

	struct rpma_conn_cfg *cfg = NULL;
	FUZZ_CHECK(rpma_conn_cfg_new(&cfg) == 0, "rpma_conn_cfg_new");
	if (with_rcq)
		FUZZ_CHECK(rpma_conn_cfg_set_rcq_size(cfg, 8) == 0, "set_rcq_size");
	struct rpma_conn *conn = fuzz_conn(kind, cfg);
	FUZZ_CHECK(rpma_conn_cfg_delete(&cfg) == 0, "rpma_conn_cfg_delete");

	struct qmodel q[2];
	memset(q, 0, sizeof(q));
	FUZZ_CHECK(rpma_conn_get_cq(conn, &q[0].cq) == 0 && q[0].cq, "rpma_conn_get_cq");
	struct rpma_cq *rcq = NULL;
	FUZZ_CHECK(rpma_conn_get_rcq(conn, &rcq) == 0, "rpma_conn_get_rcq");
	FUZZ_CHECK((rcq != NULL) == with_rcq, "receive CQ %p with rcq_size %d", (void *)rcq,
		   with_rcq ? 8 : 0);
	q[1].cq = rcq;

	for (int i = 0; i < MAX_CMDS && !fuzz_empty(&in); i++) {
		uint8_t cmd = fuzz_u8(&in);
		struct qmodel *m = &q[(cmd & 0x80) && with_rcq ? 1 : 0];
		switch (cmd % 8) {
		case 0:
		case 1:
		case 2: {
			struct ibv_wc wc;
			make_wc(&in, &wc);
			if (m->count == QMAX)
				break;
			fake_cq_push_wc(m->cq, &wc);
			m->wc[(m->head + m->count) % QMAX] = wc;
			m->count++;
			break;
		}
		case 3:
		case 4:
			do_get_wc(m, &in);
			break;
		case 5:
			do_get_completion(conn, m, false);
			break;
		case 6:
			do_get_completion(conn, &q[0], true);
			break;
		default:
			do_bogus_poll(m, &in);
			break;
		}
	}

	/* completions left queued are the transport's: deleting the connection drops them */
	fuzz_conn_delete(&conn);
	fuzz_end();
	return 0;
}
