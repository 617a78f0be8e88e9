/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_io.c -- the data path of the verbs provider: work requests on the queue pair */

#include <arpa/inet.h>
#include <inttypes.h>

#include "verbs.h"

/* vrb_send_flags -- signalled only when a completion on success is asked for */
static inline unsigned vrb_send_flags(int flags)
{
	return (flags & RPMA_F_COMPLETION_ON_SUCCESS) ? IBV_SEND_SIGNALED : 0;
}

/* vrb_wr_id -- the completion's wr_id is the caller's op_context */
static inline uint64_t vrb_wr_id(const void *op_context)
{
	return (uint64_t)(uintptr_t)op_context;
}

/*
 * vrb_sge -- one scatter/gather entry over [offset, offset + len) of mr;
 * returns the number of entries: 0 for the zero-length form (mr NULL)
 */
static inline int vrb_sge(struct ibv_sge *sge, const struct rpma_mr_local *mr, size_t offset,
			  size_t len)
{
	if (mr == NULL)
		return 0;
	struct ibv_mr *m = vrb_mr(mr)->mr;
	sge->addr = (uint64_t)(uintptr_t)m->addr + offset;
	sge->length = (uint32_t)len;
	sge->lkey = m->lkey;
	return 1;
}

/*
 * vrb_send_wr -- the fields of a send-queue work request that every driver
 * reads for an RC queue pair and these opcodes; the rest of the structure
 * (the XRC, memory-window and TSO members) stays unset, to keep a memset off
 * the data path: drivers read those only for other queue pair types or
 * opcodes
 */
static inline void vrb_send_wr(struct ibv_send_wr *wr, struct ibv_sge *sge, enum ibv_wr_opcode op,
			       const struct rpma_mr_local *mr, size_t offset, size_t len, int flags,
			       const void *op_context)
{
	wr->wr_id = vrb_wr_id(op_context);
	wr->next = NULL;
	wr->num_sge = vrb_sge(sge, mr, offset, len);
	wr->sg_list = wr->num_sge ? sge : NULL;
	wr->opcode = op;
	wr->send_flags = vrb_send_flags(flags);
	wr->imm_data = 0;
}

/* vrb_wr_name -- a work request's opcode for log messages */
static const char *vrb_wr_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_READ:
		return "RDMA_READ";
	case IBV_WR_RDMA_WRITE:
		return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_SEND:
		return "SEND";
	case IBV_WR_SEND_WITH_IMM:
		return "SEND_WITH_IMM";
	default:
		return "?";
	}
}

/* vrb_post_refused -- log a work request ibv_post_send() refused (out of the data path) */
static __attribute__((noinline, cold)) int vrb_post_refused(const struct ibv_send_wr *wr, int e)
{
	if (e < 0)
		e = vrb_errno();
	uint64_t raddr = wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM
				 ? 0
				 : wr->wr.rdma.remote_addr;
	VRB_LOG_ERRNO(e, "ibv_post_send(%s, %u bytes, raddr 0x%" PRIx64 ", flags 0x%x) failed",
		      vrb_wr_name(wr->opcode), wr->num_sge ? wr->sg_list[0].length : 0, raddr,
		      wr->send_flags);
	/* ENOMEM here is a full send queue: not an allocation failure */
	return RPMA_E_PROVIDER;
}

/* vrb_post_send -- post one work request, logging a refusal */
static inline int vrb_post_send(struct vrb_conn *vc, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	bool sig = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
	/* counted before the post: its completion may be taken at once */
	vrb_track_post(vc, sig, 1);
	int e = ibv_post_send(vc->qp, wr, &bad);
	if (e) {
		vrb_track_post(vc, sig, -1);
		return vrb_post_refused(wr, e);
	}
	return 0;
}

/* vrb_post_recv -- post one receive on a queue pair (dst NULL: zero-length) */
int vrb_post_recv(struct ibv_qp *qp, const struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad = NULL;
	wr.wr_id = vrb_wr_id(op_context);
	wr.next = NULL;
	wr.num_sge = vrb_sge(&sge, dst, offset, len);
	wr.sg_list = wr.num_sge ? &sge : NULL;

	int e = ibv_post_recv(qp, &wr, &bad);
	if (e) {
		if (e < 0)
			e = vrb_errno();
		VRB_LOG_ERRNO(e, "ibv_post_recv(%zu bytes) failed", len);
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/* vrb_read -- RDMA read of len bytes from raddr into dst at dst_offset */
int vrb_read(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
	     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	vrb_send_wr(&wr, &sge, IBV_WR_RDMA_READ, dst, dst_offset, len, flags, op_context);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = (uint32_t)rkey;
	return vrb_post_send(vrb_conn(conn), &wr);
}

/*
 * vrb_write_wr -- an RDMA write (opcode op) of len bytes from src; a write
 * that fits the queue pair's inline data is copied at posting time
 */
static inline void vrb_write_wr(struct ibv_send_wr *wr, struct ibv_sge *sge,
				const struct vrb_conn *vc, enum ibv_wr_opcode op,
				const struct rpma_mr_local *src, size_t src_offset, uint64_t raddr,
				uint64_t rkey, size_t len, int flags, const void *op_context)
{
	vrb_send_wr(wr, sge, op, src, src_offset, len, flags, op_context);
	if (wr->num_sge && len <= vc->write_inline)
		wr->send_flags |= IBV_SEND_INLINE;
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = (uint32_t)rkey;
}

/* vrb_write -- RDMA write of len bytes from src */
int vrb_write(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
	      uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	struct vrb_conn *vc = vrb_conn(conn);
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	vrb_write_wr(&wr, &sge, vc, IBV_WR_RDMA_WRITE, src, src_offset, raddr, rkey, len, flags,
		     op_context);
	return vrb_post_send(vc, &wr);
}

/* vrb_write_imm -- RDMA write with immediate data (network order on the wire) */
int vrb_write_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		  uint64_t raddr, uint64_t rkey, size_t len, int flags, uint32_t imm,
		  const void *op_context)
{
	struct vrb_conn *vc = vrb_conn(conn);
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	vrb_write_wr(&wr, &sge, vc, IBV_WR_RDMA_WRITE_WITH_IMM, src, src_offset, raddr, rkey, len,
		     flags, op_context);
	wr.imm_data = htonl(imm);
	return vrb_post_send(vc, &wr);
}

#ifdef VERBS_NATIVE_ATOMIC_WRITE
/* vrb_atomic_write_native -- IBV_WR_ATOMIC_WRITE through the extended post API */
static int vrb_atomic_write_native(struct vrb_conn *vc, uint64_t raddr, uint64_t rkey,
				   const char src[8], int flags, const void *op_context)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(vc->qp);
	ibv_wr_start(qpx);
	qpx->wr_id = vrb_wr_id(op_context);
	/* fenced: it must not overtake the reads (flushes) posted before it */
	qpx->wr_flags = vrb_send_flags(flags) | IBV_SEND_FENCE;
	ibv_wr_atomic_write(qpx, (uint32_t)rkey, raddr, src);
	bool sig = (flags & RPMA_F_COMPLETION_ON_SUCCESS) != 0;
	vrb_track_post(vc, sig, 1);
	int e = ibv_wr_complete(qpx);
	if (e) {
		vrb_track_post(vc, sig, -1);
		VRB_LOG_ERRNO(e, "ibv_wr_complete(ATOMIC_WRITE, raddr 0x%" PRIx64 ") failed",
			      raddr);
		return RPMA_E_PROVIDER;
	}
	return 0;
}
#endif

/*
 * vrb_atomic_write -- the 8 bytes of src to raddr: the native atomic write
 * when the device has it, else an inline RDMA write fenced behind every
 * earlier read of the queue pair
 */
int vrb_atomic_write(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, const char src[8],
		     int flags, const void *op_context)
{
	struct vrb_conn *vc = vrb_conn(conn);
#ifdef VERBS_NATIVE_ATOMIC_WRITE
	if (vc->native_atomic_write) {
		/* asked first: a varargs call per operation costs more than the post */
		if (rpma_log_enabled(RPMA_LOG_LEVEL_DEBUG))
			VRB_LOG_DEBUG("atomic write at 0x%" PRIx64 ": native ATOMIC_WRITE", raddr);
		return vrb_atomic_write_native(vc, raddr, rkey, src, flags, op_context);
	}
#endif
	if (rpma_log_enabled(RPMA_LOG_LEVEL_DEBUG))
		VRB_LOG_DEBUG("atomic write at 0x%" PRIx64 ": fenced inline RDMA WRITE (no native "
			      "atomic write on this connection)",
			      raddr);
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)src,
		.length = 8,
		.lkey = 0, /* inline: the data is copied, never read through a key */
	};
	struct ibv_send_wr wr;
	wr.wr_id = vrb_wr_id(op_context);
	wr.next = NULL;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = vrb_send_flags(flags) | IBV_SEND_INLINE | IBV_SEND_FENCE;
	wr.imm_data = 0;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = (uint32_t)rkey;
	return vrb_post_send(vc, &wr);
}

#ifdef VERBS_NATIVE_FLUSH
/*
 * vrb_flush -- the native flush (IBV_WR_FLUSH) of [raddr, raddr + len); built
 * and in the provider's operations only where rdma-core has IBV_WR_FLUSH
 * (otherwise the core issues its own flush)
 */
int vrb_flush(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
	      enum rpma_flush_type type, int flags, const void *op_context)
{
	struct vrb_conn *vc = vrb_conn(conn);
	if (!vc->native_flush) {
		VRB_LOG_ERROR("the device has no native flush");
		return RPMA_E_NOSUPP;
	}
	if (len > UINT32_MAX) {
		VRB_LOG_ERROR("a native flush of %zu bytes does not fit in 32 bits", len);
		return RPMA_E_INVAL;
	}
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(vc->qp);
	ibv_wr_start(qpx);
	qpx->wr_id = vrb_wr_id(op_context);
	qpx->wr_flags = vrb_send_flags(flags);
	ibv_wr_flush(qpx, (uint32_t)rkey, raddr, (uint32_t)len,
		     type == RPMA_FLUSH_TYPE_PERSISTENT ? IBV_FLUSH_PERSISTENT : IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	bool sig = (flags & RPMA_F_COMPLETION_ON_SUCCESS) != 0;
	vrb_track_post(vc, sig, 1);
	int e = ibv_wr_complete(qpx);
	if (e) {
		vrb_track_post(vc, sig, -1);
		VRB_LOG_ERRNO(e, "ibv_wr_complete(FLUSH, raddr 0x%" PRIx64 ", %zu bytes) failed",
			      raddr, len);
		return RPMA_E_PROVIDER;
	}
	return 0;
}
#endif /* VERBS_NATIVE_FLUSH */

/* vrb_send -- a message (with immediate data) from src (NULL: zero-length) */
int vrb_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	     int flags, bool with_imm, uint32_t imm, const void *op_context)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	vrb_send_wr(&wr, &sge, with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, src, offset, len,
		    flags, op_context);
	if (with_imm)
		wr.imm_data = htonl(imm);
	return vrb_post_send(vrb_conn(conn), &wr);
}

/* vrb_recv -- post a receive on the connection's queue pair */
int vrb_recv(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset, size_t len,
	     const void *op_context)
{
	return vrb_post_recv(vrb_conn(conn)->qp, dst, offset, len, op_context);
}
