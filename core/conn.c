/* SPDX-License-Identifier: BSD-3-Clause */
/* conn.c -- connections: events, private data, CQs and the data path */

#include "alloc.h"
#include "conn.h"
#include "cq.h"
#include "flush.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "peer_cfg.h"
#include "private_data.h"

/* rpma_conn_peer -- the peer a connection was made from */
struct rpma_peer *rpma_conn_peer(const struct rpma_conn *conn)
{
	return conn->peer;
}

/* rpma_data_flags_invalid -- the refusal of rpma_data_flags(), logged */
void rpma_data_flags_invalid(int flags)
{
	if (flags == 0)
		RPMA_LOG_ERROR("invalid argument: flags == 0");
	else
		RPMA_LOG_ERROR("invalid argument: unknown flags 0x%x", (unsigned)flags);
}

/* rpma_conn_new -- the connection object a request turns into */
int rpma_conn_new(struct rpma_peer *peer, void *priv, struct rpma_cq *cq, struct rpma_cq *rcq,
		  struct rpma_srq *srq, bool shared_channel, struct rpma_conn **conn_ptr)
{
	struct rpma_conn *conn = rpma_calloc(1, sizeof(*conn));
	if (conn == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}

	int ret = rpma_flush_new(peer, &conn->flush);
	if (ret) {
		rpma_free(conn);
		return ret;
	}

	conn->peer = peer;
	conn->ops = rpma_peer_provider(peer)->ops;
	conn->caps = rpma_peer_caps(peer);
	conn->max_msg_size = rpma_peer_max_msg_size(peer);
	conn->priv = priv;
	conn->cq = cq;
	conn->rcq = rcq;
	conn->srq = srq;
	conn->shared_channel = shared_channel;
	atomic_init(&conn->direct_write_to_pmem, false);
	atomic_init(&conn->remote_announces, false);
	rpma_peer_ref(peer);

	*conn_ptr = conn;
	return 0;
}

/* rpma_conn_abandon -- free what rpma_conn_new() made (not priv and the CQs) */
void rpma_conn_abandon(struct rpma_conn *conn)
{
	(void)rpma_flush_delete(&conn->flush);
	rpma_private_data_discard(&conn->pdata);
	(void)rpma_peer_unref(conn->peer);
	rpma_free(conn);
}

/* rpma_conn_adopt_private_data -- the connection takes over the request's private data */
void rpma_conn_adopt_private_data(struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	rpma_private_data_discard(&conn->pdata);
	rpma_private_data_move(&conn->pdata, pdata);
}

/* rpma_conn_get_event_fd -- the descriptor that becomes readable when an event waits */
int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "fd");
		return RPMA_E_INVAL;
	}

	int f = -1;
	int ret = conn->ops->conn_get_event_fd(conn, &f);
	if (ret)
		return ret;

	*fd = f;
	return 0;
}

/* rpma_conn_next_event -- take the next connection event */
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	if (conn == NULL || event == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "event");
		return RPMA_E_INVAL;
	}

	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct rpma_conn_private_data pdata = {NULL, 0};
	int ret = conn->ops->conn_next_event(conn, &ev, &pdata);
	if (ret) /* a failed op leaves nothing behind: pdata is not the core's */
		return ret;

	struct rpma_conn_private_data got;
	rpma_private_data_adopt(&got, &pdata);

	switch (ev) {
	case RPMA_CONN_ESTABLISHED:
		/* keep the peer's private data unless the connection has some already */
		if (got.ptr != NULL && conn->pdata.ptr == NULL)
			rpma_private_data_move(&conn->pdata, &got);
		break;
	case RPMA_CONN_CLOSED:
	case RPMA_CONN_LOST:
	case RPMA_CONN_REJECTED:
	case RPMA_CONN_UNREACHABLE:
		atomic_store_explicit(&conn->recv_closed, true, memory_order_release);
		break;
	default:
		rpma_private_data_discard(&got);
		RPMA_LOG_WARNING("unexpected connection event %d", (int)ev);
		return RPMA_E_UNKNOWN;
	}
	rpma_private_data_discard(&got);

	RPMA_LOG_NOTICE("%s", rpma_utils_conn_event_2str(ev));
	*event = ev;
	return 0;
}

/* rpma_conn_get_private_data -- the peer's private data kept by the connection */
int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	if (conn == NULL || pdata == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "pdata");
		return RPMA_E_INVAL;
	}

	pdata->ptr = conn->pdata.ptr;
	pdata->len = conn->pdata.len;
	return 0;
}

/* rpma_conn_apply_remote_peer_cfg -- adopt the peer's direct-write-to-PMem declaration */
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg)
{
	if (conn == NULL || pcfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "pcfg");
		return RPMA_E_INVAL;
	}

	bool supported = false;
	int ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported);
	if (ret)
		return ret;

	atomic_store(&conn->direct_write_to_pmem, supported);
	atomic_store(&conn->remote_announces, rpma_peer_cfg_announces(pcfg));
	return 0;
}

/* rpma_conn_get_qp_num -- the number identifying the connection's queue pair */
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	if (conn == NULL || qp_num == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "qp_num");
		return RPMA_E_INVAL;
	}

	uint32_t num = 0;
	int ret = conn->ops->conn_get_qp_num(conn, &num);
	if (ret)
		return ret;

	*qp_num = num;
	return 0;
}

/* rpma_conn_get_cq -- the main completion queue */
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr)
{
	if (conn == NULL || cq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "cq_ptr");
		return RPMA_E_INVAL;
	}

	*cq_ptr = conn->cq;
	return 0;
}

/* rpma_conn_get_rcq -- the connection's own receive CQ, or NULL */
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr)
{
	if (conn == NULL || rcq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "rcq_ptr");
		return RPMA_E_INVAL;
	}

	*rcq_ptr = conn->rcq;
	return 0;
}

/* rpma_conn_get_compl_fd -- the descriptor of the shared completion channel */
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "fd");
		return RPMA_E_INVAL;
	}
	if (!conn->shared_channel) {
		RPMA_LOG_ERROR("the connection has no shared completion channel");
		return RPMA_E_NOT_SHARED_CHNL;
	}

	int f = -1;
	int ret = conn->ops->conn_get_compl_fd(conn, &f);
	if (ret)
		return ret;

	*fd = f;
	return 0;
}

/* rpma_conn_wait -- wait on the shared completion channel; tell which CQ fired */
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq)
{
	if (conn == NULL || cq == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "cq");
		return RPMA_E_INVAL;
	}
	if (flags != 0) {
		RPMA_LOG_ERROR("invalid argument: flags 0x%x (reserved, must be 0)",
			       (unsigned)flags);
		return RPMA_E_INVAL;
	}
	if (!conn->shared_channel) {
		RPMA_LOG_ERROR("the connection has no shared completion channel");
		return RPMA_E_NOT_SHARED_CHNL;
	}

	bool rcq_fired = false;
	int ret = conn->ops->conn_wait(conn, &rcq_fired);
	if (ret)
		return ret;

	if (rcq_fired && conn->rcq == NULL) {
		RPMA_LOG_ERROR("the provider reported a receive CQ the connection does not have");
		return RPMA_E_UNKNOWN;
	}

	*cq = rcq_fired ? conn->rcq : conn->cq;
	if (is_rcq != NULL)
		*is_rcq = rcq_fired;
	return 0;
}

/* rpma_conn_disconnect -- start an orderly shutdown */
int rpma_conn_disconnect(struct rpma_conn *conn)
{
	if (conn == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn == NULL");
		return RPMA_E_INVAL;
	}

	/* before the transport's disconnect: no receive is posted after it (conn.h) */
	bool was = atomic_exchange(&conn->recv_closed, true);
	int ret = conn->ops->conn_disconnect(conn);
	if (ret == 0)
		RPMA_LOG_NOTICE("requesting for disconnection");
	else if (!was)
		atomic_store(&conn->recv_closed, false);
	return ret;
}

/* rpma_conn_delete -- release the connection and everything it owns */
int rpma_conn_delete(struct rpma_conn **conn_ptr)
{
	if (conn_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_conn *conn = *conn_ptr;
	if (conn == NULL)
		return 0;

	/* the queue pair goes first: nothing may land in the flush region afterwards */
	int ret = conn->ops->conn_delete(conn);
	int ret2 = rpma_flush_delete(&conn->flush);
	if (ret == 0)
		ret = ret2;

	rpma_cq_free(conn->rcq);
	rpma_cq_free(conn->cq);
	rpma_private_data_discard(&conn->pdata);
	rpma_free(conn->priv);
	ret2 = rpma_peer_unref(conn->peer);
	if (ret == 0)
		ret = ret2;
	rpma_free(conn);

	*conn_ptr = NULL;
	return ret;
}

/* ----- data path */

/*
 * rpma_conn_rma_args -- the argument checks rpma_read() and the writes share:
 * conn and flags, then either the zero-byte form (both regions NULL, offsets
 * and len 0: the remote address and key stay 0, so every argument the
 * provider gets is the zero-length form already) or a local range and a
 * remote range, whose remote address and key are returned; RPMA_E_INVAL
 * (logged) when anything is off
 */
static inline int rpma_conn_rma_args(const struct rpma_conn *conn, int flags, const char *op,
				     const struct rpma_mr_local *local, size_t local_offset,
				     const struct rpma_mr_remote *remote, size_t remote_offset,
				     size_t len, bool local_is_src, uint64_t *raddr, uint64_t *rkey)
{
	const char *lname = local_is_src ? "src" : "dst";
	const char *rname = local_is_src ? "dst" : "src";

	if (conn == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn == NULL");
		return RPMA_E_INVAL;
	}
	int ret = rpma_data_flags(flags);
	if (ret)
		return ret;

	if (local == NULL || remote == NULL) {
		if (local != NULL || remote != NULL || local_offset != 0 || remote_offset != 0 ||
		    len != 0) {
			RPMA_LOG_ERROR("invalid argument: %s == NULL (a zero-byte %s needs both "
				       "regions NULL and offsets and len 0)",
				       local == NULL ? lname : rname, op);
			return RPMA_E_INVAL;
		}
		return 0;
	}

	ret = rpma_mr_local_check(local, local_offset, len,
				  local_is_src ? "source" : "destination");
	if (ret)
		return ret;
	ret = rpma_mr_remote_target(remote, remote_offset, len,
				    local_is_src ? "destination" : "source", raddr, rkey);
	if (ret)
		return ret;
	return rpma_msg_len(len, conn->max_msg_size, op);
}

/* rpma_read -- copy len bytes from the remote region into a local one */
int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context)
{
	uint64_t raddr = 0, rkey = 0;

	int ret = rpma_conn_rma_args(conn, flags, "read", dst, dst_offset, src, src_offset, len,
				     false, &raddr, &rkey);
	if (ret)
		return ret;
	return conn->ops->read(conn, dst, dst_offset, raddr, rkey, len, flags, op_context);
}

/*
 * rpma_conn_write -- the common part of rpma_write() and rpma_write_with_imm()
 * (inlined into each: with_imm is a constant there)
 */
static inline __attribute__((always_inline)) int
rpma_conn_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
		bool with_imm, uint32_t imm, const void *op_context)
{
	uint64_t raddr = 0, rkey = 0;

	int ret = rpma_conn_rma_args(conn, flags, "write", src, src_offset, dst, dst_offset, len,
				     true, &raddr, &rkey);
	if (ret)
		return ret;
	if (with_imm)
		return conn->ops->write_imm(conn, src, src_offset, raddr, rkey, len, flags, imm,
					    op_context);
	return conn->ops->write(conn, src, src_offset, raddr, rkey, len, flags, op_context);
}

/* rpma_write -- copy len bytes from a local region into the remote one */
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context)
{
	return rpma_conn_write(conn, dst, dst_offset, src, src_offset, len, flags, false, 0,
			       op_context);
}

/* rpma_write_with_imm -- a write that also delivers imm to the peer */
int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context)
{
	return rpma_conn_write(conn, dst, dst_offset, src, src_offset, len, flags, true, imm,
			       op_context);
}

/* rpma_conn_send -- the common part of rpma_send() and rpma_send_with_imm() (inlined) */
static inline __attribute__((always_inline)) int
rpma_conn_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	       int flags, bool with_imm, uint32_t imm, const void *op_context)
{
	if (conn == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn == NULL");
		return RPMA_E_INVAL;
	}
	int ret = rpma_data_flags(flags);
	if (ret)
		return ret;

	if (src == NULL) {
		if (offset != 0 || len != 0) {
			RPMA_LOG_ERROR("invalid argument: src == NULL with offset %zu, len %zu",
				       offset, len);
			return RPMA_E_INVAL;
		}
	} else {
		ret = rpma_mr_local_check(src, offset, len, "source");
		if (ret)
			return ret;
		ret = rpma_msg_len(len, conn->max_msg_size, "send");
		if (ret)
			return ret;
	}

	return conn->ops->send(conn, src, offset, len, flags, with_imm, imm, op_context);
}

/* rpma_send -- send a message to the peer's posted receive */
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context)
{
	return rpma_conn_send(conn, src, offset, len, flags, false, 0, op_context);
}

/* rpma_send_with_imm -- send a message carrying a 32-bit immediate value */
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context)
{
	return rpma_conn_send(conn, src, offset, len, flags, true, imm, op_context);
}

/* rpma_recv -- post a buffer for one incoming message */
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context)
{
	if (conn == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn == NULL");
		return RPMA_E_INVAL;
	}
	if (dst == NULL && (offset != 0 || len != 0)) {
		RPMA_LOG_ERROR("invalid argument: dst == NULL with offset %zu, len %zu", offset,
			       len);
		return RPMA_E_INVAL;
	}
	if (dst != NULL) {
		int ret = rpma_mr_local_check(dst, offset, len, "receive");
		if (ret)
			return ret;
		ret = rpma_msg_len(len, conn->max_msg_size, "receive");
		if (ret)
			return ret;
	}
	if (conn->srq != NULL) {
		/* the queue pair has no receive queue of its own (upstream: ibv_post_recv fails) */
		RPMA_LOG_ERROR("the connection takes receives from a shared receive queue: use "
			       "rpma_srq_recv()");
		return RPMA_E_PROVIDER;
	}
	if (atomic_load_explicit(&conn->recv_closed, memory_order_acquire)) {
		/* nothing is sure to complete it (conn.h) */
		RPMA_LOG_ERROR("the connection was disconnected or its end reported: no receive is "
			       "posted any more");
		return RPMA_E_PROVIDER;
	}

	return conn->ops->recv(conn, dst, offset, len, op_context);
}
