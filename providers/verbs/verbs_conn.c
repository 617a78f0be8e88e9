/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_conn.c -- connection requests and connections: rdma_cm ids, queue pairs, events */

#include <stdlib.h>
#include <string.h>

#include "verbs.h"

/* vrb_pdata_copy -- a malloc()ed copy of private data (NULL/0 when there is none) */
int vrb_pdata_copy(const void *src, size_t len, struct rpma_conn_private_data *pdata)
{
	pdata->ptr = NULL;
	pdata->len = 0;
	if (src == NULL || len == 0)
		return 0;
	if (len > UINT8_MAX)
		len = UINT8_MAX; /* rdma_cm never delivers more; the API cannot carry more */
	pdata->ptr = malloc(len);
	if (pdata->ptr == NULL) {
		VRB_LOG_ERRNO(ENOMEM, "cannot copy %zu bytes of private data", len);
		return RPMA_E_NOMEM;
	}
	memcpy(pdata->ptr, src, len);
	pdata->len = (uint8_t)len;
	return 0;
}

/* vrb_qp_max_inline -- how much inline data the queue pair really takes */
static uint32_t vrb_qp_max_inline(struct ibv_qp *qp, uint32_t granted)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	memset(&attr, 0, sizeof(attr));
	memset(&init, 0, sizeof(init));
	int e = ibv_query_qp(qp, &attr, IBV_QP_CAP, &init);
	if (e) {
		VRB_LOG_DEBUG("ibv_query_qp(IBV_QP_CAP) failed (%d): inline limit %u as granted", e,
			      granted);
		return granted;
	}
	return attr.cap.max_inline_data;
}

/*
 * vrb_ack_timeout -- the largest local ACK timeout exponent x (4.096 us *
 * 2^x per try) with which all VRB_RETRY_COUNT + 1 tries of an operation
 * toward a peer that stopped answering end within timeout_ms, clamped to
 * [VRB_ACK_TIMEOUT_MIN, VRB_ACK_TIMEOUT_MAX]
 */
static uint8_t vrb_ack_timeout(int timeout_ms)
{
	/* the budget of one try in ns, against 4096 ns * 2^x */
	uint64_t per_try_ns =
		(uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u / (VRB_RETRY_COUNT + 1);
	uint8_t x = VRB_ACK_TIMEOUT_MIN;
	while (x < VRB_ACK_TIMEOUT_MAX && (4096ull << (x + 1)) <= per_try_ns)
		x++;
	return x;
}

/*
 * vrb_set_ack_timeout -- make an operation toward a dead peer fail within the
 * connection's timeout instead of the path's default (seconds per try on
 * Soft-RoCE); rdma_cm applies it when the queue pair moves to RTS. Where the
 * kernel does not take the option the default stays: a warning, no failure.
 */
static void vrb_set_ack_timeout(struct rdma_cm_id *id, int timeout_ms)
{
	uint8_t x = vrb_ack_timeout(timeout_ms);
	errno = 0;
	if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &x, sizeof(x))) {
		int e = vrb_errno();
		VRB_LOG_WARNING("rdma_set_option(ACK_TIMEOUT %u) failed (errno %d): the "
				"device's default ACK timeout stays",
				(unsigned)x, e);
		return;
	}
	VRB_LOG_DEBUG("ACK timeout 2^%u * 4.096 us (%d ms timeout, %d retries)", (unsigned)x,
		      timeout_ms, VRB_RETRY_COUNT);
}

/*
 * vrb_transport_new -- the CQs and the RC queue pair of a connection on id
 * (resolved or incoming); on failure everything made here is released and
 * id is left as it was
 */
int vrb_transport_new(struct vrb_peer *vp, struct vrb_conn *vc, struct rdma_cm_id *id,
		      const struct rpma_conn_setup *setup)
{
	int ret, e;

	if (id->verbs != vp->ctx) {
		VRB_LOG_ERROR("the connection goes through device %s, the peer was made on %s",
			      id->verbs ? ibv_get_device_name(id->verbs->device) : "(none)",
			      ibv_get_device_name(vp->ctx->device));
		return RPMA_E_PROVIDER;
	}

	vc->shared_channel = NULL;
	vc->cq = NULL;
	vc->track_cq = NULL;
	vc->rcq = NULL;
	vc->rcq_due = false;
	if (setup->shared_channel) {
		errno = 0;
		vc->shared_channel = ibv_create_comp_channel(vp->ctx);
		if (vc->shared_channel == NULL) {
			e = vrb_errno();
			VRB_LOG_ERRNO(e, "ibv_create_comp_channel failed");
			return vrb_err(e);
		}
	}

	vc->cq = vrb_cq(setup->cq);
	ret = vrb_cq_init(vc->cq, vp->ctx, setup->cq_size, vc->shared_channel);
	if (ret) {
		vc->cq = NULL;
		vc->track_cq = NULL;
		goto err_channel;
	}
	if (setup->rcq) {
		vc->rcq = vrb_cq(setup->rcq);
		ret = vrb_cq_init(vc->rcq, vp->ctx, setup->rcq_size, vc->shared_channel);
		if (ret) {
			vc->rcq = NULL;
			goto err_cq;
		}
		/*
		 * one channel for both CQs: what rpma_conn_wait() takes from the
		 * main CQ ahead of the receive CQ, and the count it waits on
		 */
		if (vc->shared_channel) {
			vc->cq->stash = calloc(VRB_STASH_MAX, sizeof(*vc->cq->stash));
			if (vc->cq->stash == NULL) {
				VRB_LOG_ERROR("out of memory for the completion stash");
				ret = RPMA_E_NOMEM;
				goto err_rcq;
			}
			vc->track_cq = vc->cq;
		}
	}

	struct ibv_cq *recv_cq = vc->cq->cq;
	if (setup->srq_rcq)
		recv_cq = vrb_cq(setup->srq_rcq)->cq;
	else if (vc->rcq)
		recv_cq = vc->rcq->cq;

	struct ibv_qp_init_attr_ex attr;
	memset(&attr, 0, sizeof(attr));
	attr.send_cq = vc->cq->cq;
	attr.recv_cq = recv_cq;
	attr.srq = setup->srq ? vrb_srq(setup->srq)->srq : NULL;
	attr.cap.max_send_wr = setup->sq_size;
	attr.cap.max_recv_wr = setup->srq ? 0 : setup->rq_size;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = VRB_MIN_INLINE;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr.pd = vp->pd;
#ifdef VERBS_NATIVE_ATOMIC_WRITE
	if (vp->native_atomic_write) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	}
#endif
#ifdef VERBS_NATIVE_FLUSH
	if (vp->native_flush) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags |= IBV_QP_EX_WITH_FLUSH;
	}
#endif

	vrb_set_ack_timeout(id, setup->timeout_ms);

	errno = 0;
	if (rdma_create_qp_ex(id, &attr)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_create_qp_ex(sq %u, rq %u, srq %s) failed", setup->sq_size,
			      setup->rq_size, setup->srq ? "yes" : "no");
		ret = vrb_err(e);
		goto err_rcq;
	}

	vc->id = id;
	vc->max_inline = vrb_qp_max_inline(id->qp, attr.cap.max_inline_data);
	vc->write_inline = vp->inline_writes ? vc->max_inline : 0;
	vc->qp = id->qp;
	vc->native_atomic_write = vp->native_atomic_write;
	vc->native_flush = vp->native_flush;
	VRB_LOG_DEBUG("queue pair %u: sq %u, rq %u, inline %u", id->qp->qp_num,
		      attr.cap.max_send_wr, attr.cap.max_recv_wr, vc->max_inline);
	return 0;

err_rcq:
	if (vc->rcq)
		(void)vrb_cq_fini(vc->rcq);
	vc->rcq = NULL;
err_cq:
	(void)vrb_cq_fini(vc->cq);
	vc->cq = NULL;
	vc->track_cq = NULL;
err_channel:
	if (vc->shared_channel)
		(void)ibv_destroy_comp_channel(vc->shared_channel);
	vc->shared_channel = NULL;
	return ret;
}

/* vrb_transport_delete -- destroy the queue pair, the CQs and the shared channel (not the id) */
int vrb_transport_delete(struct vrb_conn *vc)
{
	int ret = 0, r;

	if (vc->id && vc->id->qp)
		rdma_destroy_qp(vc->id);
	vc->qp = NULL;
	if (vc->rcq) {
		r = vrb_cq_fini(vc->rcq);
		if (r && !ret)
			ret = r;
		vc->rcq = NULL;
	}
	if (vc->cq) {
		r = vrb_cq_fini(vc->cq);
		if (r && !ret)
			ret = r;
		vc->cq = NULL;
		vc->track_cq = NULL;
	}
	if (vc->shared_channel) {
		if (ibv_destroy_comp_channel(vc->shared_channel)) {
			int e = vrb_errno();
			VRB_LOG_ERRNO(e, "ibv_destroy_comp_channel failed");
			if (!ret)
				ret = vrb_err(e);
		}
		vc->shared_channel = NULL;
	}
	return ret;
}

/* vrb_destroy_id -- destroy an rdma_cm id, logging a failure */
static int vrb_destroy_id(struct rdma_cm_id *id)
{
	if (rdma_destroy_id(id)) {
		int e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_destroy_id failed");
		return vrb_err(e);
	}
	return 0;
}

/*
 * vrb_conn_teardown -- release everything of a request or connection:
 * reject it first when it is an incoming request not accepted yet
 */
static int vrb_conn_teardown(struct vrb_conn *vc, bool reject)
{
	int ret = 0, r;

	if (reject && vc->incoming) {
		if (rdma_reject(vc->id, NULL, 0)) {
			int e = vrb_errno();
			VRB_LOG_ERRNO(e, "rdma_reject failed");
			ret = vrb_err(e);
		}
	}
	r = vrb_transport_delete(vc);
	if (r && !ret)
		ret = r;
	if (vc->id) {
		r = vrb_destroy_id(vc->id);
		if (r && !ret)
			ret = r;
		vc->id = NULL;
	}
	/* after the id: an id cannot outlive its channel */
	if (vc->evch) {
		rdma_destroy_event_channel(vc->evch);
		vc->evch = NULL;
	}
	return ret;
}

/*
 * vrb_conn_req_new -- an outgoing request: a synchronous rdma_cm id with
 * the address and the route resolved, and the queue pair on it
 */
int vrb_conn_req_new(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
		     const char *port, const struct rpma_conn_setup *setup)
{
	struct vrb_conn *vc = vrb_conn_req(req);
	struct rdma_addrinfo *ai = NULL;
	struct rdma_cm_id *id = NULL;
	int ret, e;

	ret = vrb_getaddrinfo(addr, port, false, &ai, RPMA_LOG_LEVEL_ERROR);
	if (ret)
		return ret;

	/* no channel: resolution is synchronous, within the timeout */
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_create_id failed");
		ret = vrb_err(e);
		goto err_ai;
	}
	if (rdma_resolve_addr(id, ai->ai_src_addr, ai->ai_dst_addr, setup->timeout_ms)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_resolve_addr(%s, %d ms) failed", addr, setup->timeout_ms);
		ret = vrb_err(e);
		goto err_id;
	}
	if (rdma_resolve_route(id, setup->timeout_ms)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_resolve_route(%s, %d ms) failed", addr, setup->timeout_ms);
		ret = vrb_err(e);
		goto err_id;
	}

	vc->incoming = false;
	vc->evch = NULL;
	ret = vrb_transport_new(vrb_peer(peer), vc, id, setup);
	if (ret)
		goto err_id;

	rdma_freeaddrinfo(ai);
	return 0;

err_id:
	(void)rdma_destroy_id(id);
	vc->id = NULL;
err_ai:
	rdma_freeaddrinfo(ai);
	return ret;
}

/* vrb_conn_req_delete -- drop a request (an incoming one is rejected) */
int vrb_conn_req_delete(struct rpma_conn_req *req)
{
	return vrb_conn_teardown(vrb_conn_req(req), true);
}

/*
 * vrb_conn_req_connect -- move the id to a channel of its own (so that
 * every later event of this connection lands there), then connect or
 * accept with librpma's connection parameters
 */
int vrb_conn_req_connect(struct rpma_conn_req *req, struct rpma_conn *conn,
			 const struct rpma_conn_private_data *pdata)
{
	struct vrb_conn *vc = vrb_conn_req(req);
	size_t limit = vc->incoming ? VRB_PDATA_MAX_ACCEPT : VRB_PDATA_MAX_CONNECT;
	int ret, e;

	if (pdata && pdata->len > limit) {
		VRB_LOG_ERROR("%u bytes of private data: rdma_cm %s carries at most %zu",
			      (unsigned)pdata->len, vc->incoming ? "rdma_accept" : "rdma_connect",
			      limit);
		ret = RPMA_E_INVAL;
		goto err;
	}

	errno = 0;
	vc->evch = rdma_create_event_channel();
	if (vc->evch == NULL) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_create_event_channel failed");
		ret = vrb_err(e);
		goto err;
	}
	if (rdma_migrate_id(vc->id, vc->evch)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_migrate_id failed");
		ret = vrb_err(e);
		goto err;
	}

	struct rdma_conn_param param;
	memset(&param, 0, sizeof(param));
	param.private_data = pdata ? pdata->ptr : NULL;
	param.private_data_len = pdata ? pdata->len : 0;
	param.responder_resources = RDMA_MAX_RESP_RES;
	param.initiator_depth = RDMA_MAX_INIT_DEPTH;
	param.flow_control = 1;
	param.retry_count = VRB_RETRY_COUNT;
	param.rnr_retry_count = 7; /* 7: retry for ever */

	if (vc->incoming) {
		if (rdma_accept(vc->id, &param)) {
			e = vrb_errno();
			VRB_LOG_ERRNO(e, "rdma_accept failed");
			ret = vrb_err(e);
			goto err;
		}
	} else {
		if (rdma_connect(vc->id, &param)) {
			e = vrb_errno();
			VRB_LOG_ERRNO(e, "rdma_connect failed");
			ret = vrb_err(e);
			goto err;
		}
	}
	return 0;

err:
	(void)vrb_conn_teardown(vc, true);
	return ret;
}

/* vrb_conn_req_recv -- post a receive on the request's queue pair */
int vrb_conn_req_recv(struct rpma_conn_req *req, const struct rpma_mr_local *dst, size_t offset,
		      size_t len, const void *op_context)
{
	return vrb_post_recv(vrb_conn_req(req)->id->qp, dst, offset, len, op_context);
}

/* vrb_conn_get_event_fd -- the descriptor of the connection's own event channel */
int vrb_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	*fd = vrb_conn(conn)->evch->fd;
	return 0;
}

/* vrb_conn_next_event -- take, map and acknowledge the next rdma_cm event */
int vrb_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
			struct rpma_conn_private_data *pdata)
{
	struct vrb_conn *vc = vrb_conn(conn);
	struct rdma_cm_event *ev = NULL;
	int ret = 0;

	errno = 0;
	if (rdma_get_cm_event(vc->evch, &ev)) {
		int e = vrb_errno();
		if (e == ENODATA || e == EAGAIN || e == EWOULDBLOCK)
			return RPMA_E_NO_EVENT;
		VRB_LOG_ERRNO(e, "rdma_get_cm_event failed");
		return vrb_err(e);
	}

	enum rdma_cm_event_type type = ev->event;
	enum rpma_conn_event mapped = RPMA_CONN_UNDEFINED;
	struct rpma_conn_private_data pd = {NULL, 0};
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		/* the accepting side's private data arrives with this event */
		ret = vrb_pdata_copy(ev->param.conn.private_data, ev->param.conn.private_data_len,
				     &pd);
		mapped = RPMA_CONN_ESTABLISHED;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		mapped = RPMA_CONN_LOST;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		mapped = RPMA_CONN_CLOSED;
		break;
	case RDMA_CM_EVENT_REJECTED:
		mapped = RPMA_CONN_REJECTED;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		mapped = RPMA_CONN_UNREACHABLE;
		break;
	default:
		VRB_LOG_WARNING("unexpected connection event: %s", rdma_event_str(type));
		ret = RPMA_E_UNKNOWN;
		break;
	}

	if (rdma_ack_cm_event(ev)) {
		int e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_ack_cm_event(%s) failed", rdma_event_str(type));
		if (ret == 0)
			ret = vrb_err(e);
	}
	if (ret) {
		free(pd.ptr);
		return ret;
	}

	/*
	 * The peer has gone (or asked to go): answer its disconnect request
	 * right away and move the queue pair to the error state, as the local
	 * rpma_conn_disconnect() would.  The peer's own CLOSED then does not
	 * wait for this side's application, and work posted from now on ends
	 * with flush errors instead of reaching a peer that is gone.  A
	 * second rdma_disconnect() (from the application) is harmless.
	 */
	if (type == RDMA_CM_EVENT_DISCONNECTED && rdma_disconnect(vc->id))
		VRB_LOG_DEBUG("rdma_disconnect after DISCONNECTED: %s", strerror(vrb_errno()));

	VRB_LOG_DEBUG("connection event: %s", rdma_event_str(type));
	*event = mapped;
	if (pd.ptr)
		*pdata = pd;
	return 0;
}

/* vrb_conn_disconnect -- start the disconnection */
int vrb_conn_disconnect(struct rpma_conn *conn)
{
	if (rdma_disconnect(vrb_conn(conn)->id)) {
		int e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_disconnect failed");
		return vrb_err(e);
	}
	return 0;
}

/* vrb_conn_delete -- release the queue pair, CQs, channels and the id */
int vrb_conn_delete(struct rpma_conn *conn)
{
	return vrb_conn_teardown(vrb_conn(conn), false);
}

/* vrb_conn_get_qp_num -- the queue pair's number */
int vrb_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	*qp_num = vrb_conn(conn)->id->qp->qp_num;
	return 0;
}

/* vrb_conn_get_compl_fd -- the descriptor of the shared completion channel */
int vrb_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	struct vrb_conn *vc = vrb_conn(conn);
	if (vc->shared_channel == NULL)
		return RPMA_E_NOT_SHARED_CHNL;
	*fd = vc->shared_channel->fd;
	return 0;
}
