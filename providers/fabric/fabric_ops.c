/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_ops.c -- the data path: reads, writes, atomic writes, flushes, messages */

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>

#include "fabric.h"

/* how long an operation may wait for room in a full queue */
#define FAB_POST_WAIT_NS (2ULL * 1000000000ULL)

/*
 * fab_inject_size -- how many bytes the provider injects: what libfabric
 * offers, or 0 with RPMA_FABRIC_INJECT=0 (atomic writes are then staged as
 * on a transport that cannot inject 8 bytes)
 */
size_t fab_inject_size(size_t offered)
{
	const char *v = getenv("RPMA_FABRIC_INJECT");
	if (v != NULL && strcmp(v, "0") == 0) {
		FAB_LOG_INFO("RPMA_FABRIC_INJECT=0: nothing is injected");
		return 0;
	}
	return offered;
}

/*
 * fab_conn_progress -- drive the connection while its queue is full, and
 * yield the processor
 */
void fab_conn_progress(struct fab_conn *c)
{
	fab_conn_progress_spin(c);
	sched_yield();
}

/* fab_conn_progress_spin -- drive the connection while its queue is full */
void fab_conn_progress_spin(struct fab_conn *c)
{
	/* not the sources of a connection whose set-up failed before it made them */
	struct fab_source *txs = fab_conn_txs(c);
	if (txs->fid)
		fab_source_drain(txs);
	if (c->rxcq && c->rx_src.fid)
		fab_source_drain(&c->rx_src);
	/*
	 * control messages refused for a full queue go first: the poster's
	 * retries would otherwise take every slot that frees up, and the
	 * peer, hearing nothing, would end the connection (threads over shm)
	 */
	if (c->rdm)
		fab_rdm_flush_port(c);
}

/* the libfabric completion flag for RPMA_F_COMPLETION_* flags */
static inline uint64_t fab_comp(int flags)
{
	return (flags & RPMA_F_COMPLETION_ON_SUCCESS) ? FI_COMPLETION : 0;
}

/* fab_write_level -- the completion level of a write to rkey (fabric.h, FAB_KEY_PMEM) */
static inline uint64_t fab_write_level(const struct fab_peer *p, uint64_t rkey)
{
	if (p->has_commit && (p->prov_keys || (rkey & FAB_KEY_PMEM)))
		return FI_COMMIT_COMPLETE;
	return p->has_delivery ? FI_DELIVERY_COMPLETE : 0;
}

/*
 * fab_imm_write_level -- the level of the write of an emulated write with
 * immediate data: the delivered send behind it confirms it (a refused write
 * breaks the connection, so the send fails)
 */
static inline uint64_t fab_imm_write_level(const struct fab_peer *p, uint64_t rkey)
{
	uint64_t level = fab_write_level(p, rkey);
	return level == FI_COMMIT_COMPLETE ? level : 0;
}

/*
 * FAB_POST -- run a posting call, driving progress while libfabric says the
 * queue is full (-FI_EAGAIN), for at most FAB_POST_WAIT_NS, and not after
 * the connection ended: a dead peer's queue never empties
 * (peerkill/stream_server_dies over shm waited the whole 2 s)
 */
#define FAB_POST(c, call)                                                   \
	({                                                                  \
		ssize_t _r;                                                 \
		struct fab_conn_wait _w = FAB_WAIT_INIT;                    \
		while ((_r = (call)) == -FI_EAGAIN && !fab_conn_ended(c) && \
		       fab_conn_wait_round(c, &_w, FAB_POST_WAIT_NS))       \
			;                                                   \
		_r;                                                         \
	})

/* fab_post_result -- translate the result of a posting call */
static int fab_post_result(struct fab_conn *c, ssize_t ret, const char *what)
{
	if (ret == 0)
		return 0;
	if (ret == -FI_EAGAIN && fab_conn_ended(c)) {
		RPMA_LOG_ERROR("fabric: qp %u: %s: the connection ended while its queue was full",
			       c->qp_num, what);
		return RPMA_E_PROVIDER;
	}
	RPMA_LOG_ERROR("fabric: qp %u: %s failed: %s", c->qp_num, what, fi_strerror((int)-ret));
	if (ret == -FI_EAGAIN)
		return RPMA_E_PROVIDER; /* the queue stayed full */
	return fab_err((int)ret) == RPMA_E_NOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
}

/*
 * fab_op_wrap -- an operation (not a receive) of a connection that posts
 * with a record of its own as the context: a grouped one (fabric.h, CQ
 * groups; to: where the completion goes), or one over reliable datagrams
 * (fab_rdm_op_wrap), whose opcode the record keeps; a grouped one over
 * reliable datagrams has both, the group's around the connection's.  One
 * test per post for the others.
 */
static inline int fab_op_wrap(struct fab_conn *c, struct fab_cq *to, enum ibv_wc_opcode opcode,
			      void **ctx, uint64_t *ff)
{
	if (__builtin_expect(!c->wrap, 1))
		return 0;
	if (c->rdm == NULL)
		return fab_op_begin(c, to, ctx, ff);
	int ret = fab_rdm_op_wrap(c, opcode, ctx, ff);
	if (ret == 0 && c->grp) {
		ret = fab_op_begin(c, to, ctx, ff);
		if (ret)
			(void)fab_rdm_op_cancel(c, *ctx);
	}
	return ret;
}

/* fab_op_inner -- the connection's record of a wrapped operation (fab_op_wrap) */
static inline void *fab_op_inner(const struct fab_conn *c, void *ctx)
{
	return c->grp ? ((struct fab_op *)ctx)->ctx : ctx;
}

/*
 * fab_posted -- the result of a post; the record of one that failed goes
 * back (over RDM one the connection's end already reported as flushed
 * counts as posted: fab_rdm_op_cancel)
 */
static inline int fab_posted(struct fab_conn *c, int ret, void *ctx)
{
	if (__builtin_expect(ret != 0, 0)) {
		void *inner = fab_op_inner(c, ctx);
		if (c->grp != NULL)
			fab_op_cancel(c, ctx);
		if (c->rdm != NULL && fab_rdm_op_cancel(c, inner))
			return 0;
	}
	return ret;
}

/*
 * fab_local_completion -- complete a zero-length operation nobody needs to
 * carry: RPMA_E_NOMEM (nothing posted) when the CQ is full and no memory is
 * left for the completion
 */
static int fab_local_completion(struct fab_conn *c, enum ibv_wc_opcode opcode, int flags,
				const void *op_context)
{
	if (!(flags & RPMA_F_COMPLETION_ON_SUCCESS))
		return 0;
	if (fab_cq_reserve(c->cq, 1) == 0)
		return RPMA_E_NOMEM;
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = (uint64_t)(uintptr_t)op_context;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = opcode;
	wc.qp_num = c->qp_num;
	fab_cq_push(c->cq, &wc);
	return 0;
}

/*
 * fab_rma_post -- post an RMA read or write (len 0: no data, ordering only);
 * grouped is a constant where it is inlined, so that a connection with a
 * CQ of its own pays one test per post for the groups (fab_do_read/write)
 */
static inline __attribute__((always_inline)) int
fab_rma_post(struct fab_conn *c, bool write, bool grouped, void *buf, void *desc, uint64_t raddr,
	     uint64_t rkey, size_t len, uint64_t fflags, uint64_t data, const void *op_context)
{
	void *ctx = (void *)op_context;
	if (grouped) {
		int w = fab_op_wrap(c, c->cq, write ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ, &ctx,
				    &fflags);
		if (w)
			return w;
	}
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct fi_rma_iov rma = {.addr = raddr, .len = len, .key = rkey};
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = len ? &desc : NULL, /* libfabric verbs reads desc[0] when not NULL */
		.iov_count = len ? 1 : 0,
		.rma_iov = &rma,
		.rma_iov_count = len ? 1 : 0,
		.addr = c->dest,
		.context = ctx,
		.data = data,
	};
	int ret = write ? fab_post_result(c, FAB_POST(c, fi_writemsg(c->ep, &msg, fflags)),
					  "fi_writemsg()")
			: fab_post_result(c, FAB_POST(c, fi_readmsg(c->ep, &msg, fflags)),
					  "fi_readmsg()");
	return grouped ? fab_posted(c, ret, ctx) : ret;
}

/* fab_rma_grouped -- fab_rma_post for a grouped connection, out of line */
static __attribute__((noinline)) int fab_rma_grouped(struct fab_conn *c, bool write, void *buf,
						     void *desc, uint64_t raddr, uint64_t rkey,
						     size_t len, uint64_t fflags, uint64_t data,
						     const void *op_context)
{
	return fab_rma_post(c, write, true, buf, desc, raddr, rkey, len, fflags, data, op_context);
}

/* fab_do_read -- post an RMA read (len 0: no data, ordering only); inlined: no call per post */
static inline __attribute__((always_inline)) int
fab_do_read(struct fab_conn *c, void *buf, void *desc, uint64_t raddr, uint64_t rkey, size_t len,
	    uint64_t fflags, const void *op_context)
{
	if (__builtin_expect(c->wrap, 0))
		return fab_rma_grouped(c, false, buf, desc, raddr, rkey, len, fflags, 0,
				       op_context);
	return fab_rma_post(c, false, false, buf, desc, raddr, rkey, len, fflags, 0, op_context);
}

/*
 * fab_rdm_read_nothing -- a read of no data over reliable datagrams (a
 * zero-length read or flush) does not go to the wire: what it orders is
 * the completion of the connection's earlier operations, which their
 * records tell (fab_rdm_flush_wait), so it completes once they did (their
 * completions first).  udp;ofi_rxd completes no read of zero bytes at all.
 */
static __attribute__((noinline)) int fab_rdm_read_nothing(struct fab_conn *c, int flags,
							  const void *op_context)
{
	int ret = fab_rdm_flush_wait(c, FAB_FLUSH_WAIT_ALL);
	if (ret)
		return ret;
	return fab_local_completion(c, IBV_WC_RDMA_READ, flags, op_context);
}

/* fab_read -- rpma_read() */
int fab_read(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
	     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	if (__builtin_expect(len == 0, 0) && c->rdm)
		return fab_rdm_read_nothing(c, flags, op_context);
	return fab_do_read(c, fab_mr_addr(dst, dst_offset), fab_mr_desc(dst), raddr, rkey, len,
			   fab_comp(flags), op_context);
}

/* fab_do_write -- post an RMA write with the given flags; inlined: no call per post */
static inline __attribute__((always_inline)) int
fab_do_write(struct fab_conn *c, void *buf, void *desc, uint64_t raddr, uint64_t rkey, size_t len,
	     uint64_t fflags, uint64_t data, const void *op_context)
{
	if (__builtin_expect(c->wrap, 0))
		return fab_rma_grouped(c, true, buf, desc, raddr, rkey, len, fflags, data,
				       op_context);
	return fab_rma_post(c, true, false, buf, desc, raddr, rkey, len, fflags, data, op_context);
}

/*
 * fab_write_imm_emulated -- a write with immediate data as a write followed
 * by a zero-length send that carries the value and takes a receive at the
 * target (fabric.h); both carry a record naming the user's op_context, and
 * the send's completion (delivered: a receive took it) completes the pair
 */
static int fab_write_imm_emulated(struct fab_conn *c, uint64_t raddr, uint64_t rkey,
				  const struct rpma_mr_local *src, size_t src_offset, size_t len,
				  int flags, uint32_t imm, const void *op_context)
{
	struct fab_peer *p = c->peer;
	struct fab_imm_slot *s = &c->imm_slots[c->imm_next];
	c->imm_next = (c->imm_next + 1) % c->nimm_slots;
	s->op_context = op_context;
	atomic_store_explicit(&s->err_seen, false, memory_order_relaxed);
	atomic_store_explicit(&s->unsent, false, memory_order_relaxed);
	/*
	 * reliable datagrams: both halves complete, the last reports the pair
	 * (fabric.h); the write is delivered, as a plain write is (rxm completes
	 * a write its target refused at once otherwise)
	 */
	uint64_t both = 0, level = fab_imm_write_level(p, rkey);
	if (c->rdm) {
		level = fab_write_level(p, rkey);
		atomic_store_explicit(&s->left, len ? 2 : 1, memory_order_relaxed);
		s->want = (flags & RPMA_F_COMPLETION_ON_SUCCESS) != 0;
		both = FI_COMPLETION;
	}
	if (len) {
		int ret = fab_do_write(c, fab_mr_addr(src, src_offset), fab_mr_desc(src), raddr,
				       rkey, len, level | both, 0, s);
		if (ret)
			return ret;
		/* testing: the window in which a refused write ends the connection */
		if (__builtin_expect(p->imm_gap_us != 0, 0))
			usleep(p->imm_gap_us);
	}
	uint64_t high = FAB_IMM_TAG | (len < FAB_IMM_LEN_MAX ? (uint32_t)len : FAB_IMM_LEN_MAX);
	uint64_t ff = fab_comp(flags) | both | FI_REMOTE_CQ_DATA;
	/*
	 * not over reliable datagrams: shm (libfabric 1.17) did not deliver
	 * this zero-length send with remote CQ data when it was asked for
	 * FI_DELIVERY_COMPLETE, and the endpoint's later sends waited behind it
	 * (data/write_with_imm)
	 */
	if (p->has_delivery && !p->rdm)
		ff |= FI_DELIVERY_COMPLETE;
	void *ctx = s;
	/* no return on failure: the write may have gone already */
	int ret = fab_op_wrap(c, c->cq, IBV_WC_RDMA_WRITE, &ctx, &ff);
	ssize_t sent = 0; /* libfabric's answer to the send */
	if (ret == 0) {
		/*
		 * no data, but an iovec: udp;ofi_rxd (1.17) reads msg_iov[0]
		 * of a send whatever its iov_count (a NULL one crashed the
		 * process in fi_tsendmsg, data/write_with_imm)
		 */
		struct iovec none = {.iov_base = NULL, .iov_len = 0};
		struct fi_msg msg = {
			.msg_iov = &none,
			.desc = NULL,
			.iov_count = 0,
			.addr = c->dest,
			.context = ctx,
			.data = (high << 32) | imm,
		};
		sent = FAB_POST(c, fab_sendmsg(c, &msg, ff));
		/* after a write that went, a refused send is no error of the call (below) */
		ret = fab_posted(c,
				 (sent != 0 && len)
					 ? RPMA_E_PROVIDER
					 : fab_post_result(c, sent, "fi_(t)sendmsg(imm)"),
				 ctx);
	}
	/*
	 * the write went: the pair is posted, and completes with an error (on
	 * message endpoints too: a write its target refused can end the
	 * connection before the send is posted, access/no_remote_write over
	 * sockets on a loaded machine)
	 */
	if (ret && len) {
		char why[64];
		if (sent)
			snprintf(why, sizeof(why), "%s", fi_strerror((int)-sent));
		else
			snprintf(why, sizeof(why), "error %d", ret);
		RPMA_LOG_INFO("fabric: qp %u: the notification of a write with immediate data "
			      "was not posted (%s): the write completes with an error",
			      c->qp_num, why);
		fab_imm_unsent(c, s);
		return 0;
	}
	return ret;
}

/* fab_write -- rpma_write() (completion levels: fabric.h) */
int fab_write(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
	      uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	if (len == 0) {
		/* nothing to carry; keep the completion semantics */
		return fab_local_completion(c, IBV_WC_RDMA_WRITE, flags, op_context);
	}
	uint64_t ff = fab_comp(flags) | fab_write_level(c->peer, rkey);
	return fab_do_write(c, fab_mr_addr(src, src_offset), fab_mr_desc(src), raddr, rkey, len, ff,
			    0, op_context);
}

/* fab_write_imm -- rpma_write_with_imm(): native remote CQ data, or emulated */
int fab_write_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		  uint64_t raddr, uint64_t rkey, size_t len, int flags, uint32_t imm,
		  const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	if (c->peer->imm_emulated)
		return fab_write_imm_emulated(c, raddr, rkey, src, src_offset, len, flags, imm,
					      op_context);
	uint64_t ff = fab_comp(flags) | fab_write_level(c->peer, rkey) | FI_REMOTE_CQ_DATA;
	return fab_do_write(c, fab_mr_addr(src, src_offset), fab_mr_desc(src), raddr, rkey, len, ff,
			    imm, op_context);
}

/*
 * fab_stage_take -- a free staging slot holding a copy of src (fabric.h,
 * struct fab_stage_slot), driving progress while every slot is taken, for
 * at most FAB_POST_WAIT_NS; NULL when none freed up
 */
static struct fab_stage_slot *fab_stage_take(struct fab_conn *c, const char src[8])
{
	size_t n = c->scratch_slots - 1;
	struct fab_stage_slot *st = &c->stages[c->stage_next];
	struct fab_conn_wait w = FAB_WAIT_INIT;
	while (atomic_load_explicit(&st->taken, memory_order_acquire)) {
		if (!fab_conn_wait_round(c, &w, FAB_POST_WAIT_NS)) {
			RPMA_LOG_ERROR("fabric: qp %u: no staging slot of an atomic write freed up",
				       c->qp_num);
			return NULL;
		}
	}
	c->stage_next = (c->stage_next + 1) % n;
	atomic_store_explicit(&st->taken, true, memory_order_relaxed);
	memcpy(&c->scratch[1 + (size_t)(st - c->stages)], src, 8);
	return st;
}

/* fab_stage_of -- the staged atomic write ctx stands for, or NULL */
struct fab_stage_slot *fab_stage_of(struct fab_conn *c, void *ctx)
{
	if (c->stages == NULL)
		return NULL;
	uintptr_t p = (uintptr_t)ctx, lo = (uintptr_t)c->stages;
	uintptr_t hi = lo + (c->scratch_slots - 1) * sizeof(struct fab_stage_slot);
	if (p < lo || p >= hi)
		return NULL;
	return (struct fab_stage_slot *)ctx;
}

/*
 * fab_atomic_write -- rpma_atomic_write(): FI_ATOMIC_WRITE of one uint64 when
 * the provider has atomics (single-copy atomic at the target); otherwise an
 * 8-byte write.  Either is ordered after earlier flush reads: the provider's
 * single in-order stream (tcp, sockets) or FI_FENCE guarantees it.  The
 * emulated write is not single-copy atomic against the target's CPUs.
 */
int fab_atomic_write(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, const char src[8],
		     int flags, const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	struct fab_peer *p = c->peer;
	uint64_t *slot = &c->scratch[1];
	uint64_t ff = fab_comp(flags) | fab_write_level(p, rkey);
	struct fab_stage_slot *st = NULL;
	void *ctx = (void *)op_context;
	if (__builtin_expect(c->wrap, 0) && c->rdm && p->atomic_waits) {
		/* after the flush before it: nothing orders them here (fabric.h) */
		int ret = fab_rdm_flush_wait(c, FAB_FLUSH_WAIT_ALL);
		if (ret)
			return ret;
	}
	if (p->inject_atomic) {
		/* libfabric copies the value before the call returns */
		memcpy(slot, src, 8);
		ff |= FI_INJECT;
	} else {
		st = fab_stage_take(c, src);
		if (st == NULL)
			return RPMA_E_PROVIDER;
		slot = &c->scratch[1 + (size_t)(st - c->stages)];
		st->op_context = op_context;
		st->report = (flags & RPMA_F_COMPLETION_ON_SUCCESS) != 0;
		ff |= FI_COMPLETION; /* the completion frees the slot */
		ctx = st;
	}
	if (p->has_fence && !p->in_order)
		ff |= FI_FENCE;
	int ret;
	if (!p->has_atomic) {
		ret = fab_do_write(c, slot, c->scratch_desc, raddr, rkey, 8, ff, 0, ctx);
		goto out;
	}

	if (c->wrap) {
		ret = fab_op_wrap(c, c->cq, IBV_WC_RDMA_WRITE, &ctx, &ff);
		if (ret)
			goto out;
		if (c->rdm)
			fab_rdm_op_atomic(c, fab_op_inner(c, ctx));
	}
	void *desc = c->scratch_desc;
	struct fi_ioc ioc = {.addr = slot, .count = 1};
	struct fi_rma_ioc rioc = {.addr = raddr, .count = 1, .key = rkey};
	struct fi_msg_atomic msg = {
		.msg_iov = &ioc,
		.desc = &desc,
		.iov_count = 1,
		.rma_iov = &rioc,
		.rma_iov_count = 1,
		.addr = c->dest,
		.datatype = FI_UINT64,
		.op = FI_ATOMIC_WRITE,
		.context = ctx,
	};
	ret = fab_posted(
		c, fab_post_result(c, FAB_POST(c, fi_atomicmsg(c->ep, &msg, ff)), "fi_atomicmsg()"),
		ctx);
out:
	if (ret && st)
		atomic_store(&st->taken, false); /* not posted: nothing reads the slot */
	return ret;
}

/*
 * fab_flush -- rpma_flush(): a read of up to 8 bytes of the range after the
 * writes (libfabric orders reads after writes on an endpoint).  VISIBILITY:
 * its completion means the earlier writes were placed at the target.
 * PERSISTENT: only where writes travel with FI_COMMIT_COMPLETE, which makes
 * the target write them back to persistence (clwb/clflushopt + sfence) before
 * it processes anything that follows, the flush read included.
 */
int fab_flush(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
	      enum rpma_flush_type type, int flags, const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	if (type == RPMA_FLUSH_TYPE_PERSISTENT && !c->peer->has_commit) {
		FAB_LOG_ERROR("persistent flush needs FI_RMA_PMEM and FI_COMMIT_COMPLETE, which "
			      "libfabric provider %s does not offer",
			      c->peer->info->fabric_attr->prov_name);
		return RPMA_E_NOSUPP;
	}
	/* a zero-length one waits for every earlier operation: the wait below would come first */
	if (__builtin_expect(len == 0, 0) && c->rdm)
		return fab_rdm_read_nothing(c, flags, op_context);
	if (__builtin_expect(c->wrap, 0) && c->rdm && c->peer->flush_wait != FAB_FLUSH_WAIT_NONE) {
		int ret = fab_rdm_flush_wait(c, c->peer->flush_wait);
		if (ret)
			return ret;
	}
	size_t rlen = len < 8 ? len : 8;
	return fab_do_read(c, c->scratch, c->scratch_desc, rlen ? raddr : 0, rlen ? rkey : 0, rlen,
			   fab_comp(flags), op_context);
}

/* fab_send -- rpma_send() and rpma_send_with_imm() */
int fab_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	     int flags, bool with_imm, uint32_t imm, const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	void *desc = fab_mr_desc(src);
	uint64_t ff = fab_comp(flags) | (with_imm ? FI_REMOTE_CQ_DATA : 0);
	void *ctx = (void *)op_context;
	int w = fab_op_wrap(c, c->cq, IBV_WC_SEND, &ctx, &ff);
	if (w)
		return w;
	struct iovec iov = {.iov_base = fab_mr_addr(src, offset), .iov_len = len};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = len ? &desc : NULL, /* libfabric verbs reads desc[0] when not NULL */
		.iov_count = len ? 1 : 0,
		.addr = c->dest,
		.context = ctx,
		.data = imm,
	};
	if (c->peer->imm_emulated) {
		/* tagged CQ data on every message (fabric.h) */
		msg.data = with_imm ? ((uint64_t)FAB_IMM_SEND_TAG << 32) | imm : 0;
		ff |= FI_REMOTE_CQ_DATA;
	}
	return fab_posted(
		c, fab_post_result(c, FAB_POST(c, fab_sendmsg(c, &msg, ff)), "fi_(t)sendmsg()"),
		ctx);
}

/*
 * fab_post_recv_raw -- post one receive buffer on the connection's endpoint
 * with ctx as it is (fab_post_recv made the records)
 */
static int fab_post_recv_raw(struct fab_conn *c, void *buf, size_t len, void *desc, void *ctx,
			     uint64_t ff)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = len ? &desc : NULL, /* libfabric verbs reads desc[0] when not NULL */
		.iov_count = len ? 1 : 0,
		.addr = FI_ADDR_UNSPEC, /* a connection's endpoint hears only its peer */
		.context = ctx,
	};
	return fab_posted(
		c, fab_post_result(c, FAB_POST(c, fab_recvmsg(c, &msg, ff)), "fi_(t)recvmsg()"),
		ctx);
}

/*
 * fab_post_recv -- post one receive buffer with a record of the
 * connection's as the context (fabric.h, struct fab_recvs); a grouped
 * connection wraps the record in an operation record of its group
 */
int fab_post_recv(struct fab_conn *c, void *buf, size_t len, void *desc, void *ctx)
{
	struct fab_recv_rec *x = fab_recvs_take(c, ctx);
	if (x == NULL)
		return RPMA_E_PROVIDER;
	void *pctx = x;
	uint64_t ff = FI_COMPLETION;
	if (__builtin_expect(c->grp != NULL, 0)) {
		int ret = fab_op_begin(c, c->recv_target, &pctx, &ff);
		if (ret) {
			fab_recvs_put(c, x);
			return ret;
		}
		atomic_store_explicit(&x->posted_as, pctx, memory_order_relaxed);
	}
	int ret = fab_post_recv_raw(c, buf, len, desc, pctx, ff);
	if (ret) {
		fab_recvs_put(c, x);
		return ret;
	}
	fab_recvs_posted(c, x);
	return 0;
}

/* fab_recv -- rpma_recv() */
int fab_recv(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset, size_t len,
	     const void *op_context)
{
	struct fab_conn *c = fab_conn(conn);
	if (c->srq) {
		FAB_LOG_ERROR("rpma_recv: the connection receives through a shared RQ; use "
			      "rpma_srq_recv()");
		return RPMA_E_INVAL;
	}
	return fab_post_recv(c, fab_mr_addr(dst, offset), len, fab_mr_desc(dst),
			     (void *)op_context);
}
