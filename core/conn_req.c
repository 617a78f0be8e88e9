/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_req.c -- connection requests: outgoing (rpma_conn_req_new) and incoming (from an ep) */

#include "alloc.h"
#include "conn.h"
#include "conn_cfg.h"
#include "conn_req.h"
#include "cq.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "private_data.h"
#include "srq.h"

struct rpma_conn_req {
	void *priv; /* the provider's state (later the connection's) */
	struct rpma_peer *peer;
	struct rpma_cq *cq;  /* the main CQ */
	struct rpma_cq *rcq; /* the request's own receive CQ, or NULL */
	struct rpma_srq *srq;
	bool shared_channel;
	bool peer_ref;			     /* the request holds a reference to the peer */
	struct rpma_conn_private_data pdata; /* incoming: the client's private data */
};
RPMA_OBJ_PRIV_FIRST(rpma_conn_req);

/* rpma_conn_req_peer -- the peer a request was made from */
struct rpma_peer *rpma_conn_req_peer(const struct rpma_conn_req *req)
{
	return req->peer;
}

/*
 * rpma_conn_req_check_cfg -- read the settings and refuse the ones no
 * connection can be built with (before anything is allocated)
 */
static int rpma_conn_req_check_cfg(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg,
				   struct rpma_conn_cfg_values *v)
{
	rpma_conn_cfg_read(cfg, v);

	if (v->cq_size == 0) {
		RPMA_LOG_ERROR("invalid configuration: cq_size == 0");
		return RPMA_E_INVAL;
	}
	if (v->sq_size == 0) {
		RPMA_LOG_ERROR("invalid configuration: sq_size == 0");
		return RPMA_E_INVAL;
	}
	if (v->srq != NULL) {
		if (rpma_srq_peer(v->srq) != peer) {
			RPMA_LOG_ERROR("invalid configuration: the shared receive queue belongs to "
				       "another peer");
			return RPMA_E_INVAL;
		}
		if (v->shared_channel && rpma_srq_rcq(v->srq) != NULL) {
			RPMA_LOG_ERROR("invalid configuration: a shared completion channel cannot "
				       "be used with a shared receive queue that has its own "
				       "receive CQ");
			return RPMA_E_INVAL;
		}
	}
	return 0;
}

/*
 * rpma_conn_req_free -- free the core's part of a request whose transport is
 * gone; returns what closing a deleted peer returned (0 otherwise)
 */
static int rpma_conn_req_free(struct rpma_conn_req *req)
{
	int ret = 0;
	rpma_cq_free(req->rcq);
	rpma_cq_free(req->cq);
	rpma_private_data_discard(&req->pdata);
	rpma_free(req->priv);
	if (req->peer_ref)
		ret = rpma_peer_unref(req->peer);
	rpma_free(req);
	return ret;
}

/*
 * rpma_conn_req_alloc -- a request with its provider state and CQ objects
 * and the setup the provider builds the transport from
 */
static int rpma_conn_req_alloc(struct rpma_peer *peer, const struct rpma_conn_cfg_values *v,
			       struct rpma_conn_req **req_ptr, struct rpma_conn_setup *setup)
{
	const struct rpma_provider *prov = rpma_peer_provider(peer);
	struct rpma_cq *srq_rcq = v->srq ? rpma_srq_rcq(v->srq) : NULL;

	struct rpma_conn_req *req = rpma_calloc(1, sizeof(*req));
	if (req == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	req->peer = peer;
	req->srq = v->srq;
	req->shared_channel = v->shared_channel;

	int ret = rpma_priv_alloc(prov->conn_size, &req->priv);
	if (ret)
		goto err;
	ret = rpma_cq_new(prov, v->shared_channel, &req->cq);
	if (ret)
		goto err;
	/* a receive CQ of its own only when asked for and the SRQ brings none */
	if (v->rcq_size > 0 && srq_rcq == NULL) {
		ret = rpma_cq_new(prov, v->shared_channel, &req->rcq);
		if (ret)
			goto err;
	}

	*setup = (struct rpma_conn_setup){
		.timeout_ms = v->timeout_ms,
		.cq_size = v->cq_size,
		.sq_size = v->sq_size,
		.rq_size = v->rq_size,
		.rcq_size = req->rcq ? v->rcq_size : 0,
		.shared_channel = v->shared_channel,
		.cq = req->cq,
		.rcq = req->rcq,
		.srq = v->srq,
		.srq_rcq = srq_rcq,
	};
	*req_ptr = req;
	return 0;

err:
	rpma_conn_req_free(req);
	return ret;
}

/* rpma_conn_req_new -- prepare an outgoing connection to addr:port */
int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		      const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || req_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       peer == NULL ? "peer"
					    : (addr == NULL ? "addr"
							    : (port == NULL ? "port" : "req_ptr")));
		return RPMA_E_INVAL;
	}

	struct rpma_conn_cfg_values v;
	int ret = rpma_conn_req_check_cfg(peer, cfg, &v);
	if (ret)
		return ret;

	struct rpma_conn_req *req;
	struct rpma_conn_setup setup;
	ret = rpma_conn_req_alloc(peer, &v, &req, &setup);
	if (ret)
		return ret;

	ret = rpma_peer_provider(peer)->ops->conn_req_new(peer, req, addr, port, &setup);
	if (ret) {
		rpma_conn_req_free(req);
		return ret;
	}
	rpma_peer_ref(peer);
	req->peer_ref = true;

	RPMA_LOG_NOTICE("requesting a connection to %s:%s", addr, port);
	*req_ptr = req;
	return 0;
}

/* rpma_conn_req_from_ep -- a request built from the endpoint's next incoming connection */
int rpma_conn_req_from_ep(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr)
{
	struct rpma_peer *peer = rpma_ep_peer(ep);
	struct rpma_conn_cfg_values v;
	int ret = rpma_conn_req_check_cfg(peer, cfg, &v);
	if (ret)
		return ret;

	struct rpma_conn_req *req;
	struct rpma_conn_setup setup;
	ret = rpma_conn_req_alloc(peer, &v, &req, &setup);
	if (ret)
		return ret;

	struct rpma_conn_private_data pdata = {NULL, 0};
	ret = rpma_peer_provider(peer)->ops->ep_next_conn_req(ep, req, &setup, &pdata);
	if (ret) {
		rpma_conn_req_free(req);
		return ret;
	}
	rpma_private_data_adopt(&req->pdata, &pdata);
	rpma_peer_ref(peer);
	req->peer_ref = true;

	*req_ptr = req;
	return 0;
}

/* rpma_conn_req_delete -- drop a request (an incoming one is rejected) */
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr)
{
	if (req_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: req_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_conn_req *req = *req_ptr;
	if (req == NULL)
		return 0;

	int ret = rpma_peer_provider(req->peer)->ops->conn_req_delete(req);
	int ret2 = rpma_conn_req_free(req);
	if (ret == 0)
		ret = ret2;

	*req_ptr = NULL;
	return ret;
}

/* rpma_conn_req_connect -- connect or accept; the request is consumed whatever happens */
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
			  const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	if (req_ptr == NULL || *req_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       req_ptr == NULL ? "req_ptr" : "*req_ptr");
		return RPMA_E_INVAL;
	}
	if (conn_ptr == NULL || (pdata != NULL && (pdata->ptr == NULL || pdata->len == 0))) {
		if (conn_ptr == NULL)
			RPMA_LOG_ERROR("invalid argument: conn_ptr == NULL");
		else
			RPMA_LOG_ERROR("invalid argument: private data needs ptr != NULL and "
				       "len != 0");
		(void)rpma_conn_req_delete(req_ptr);
		return RPMA_E_INVAL;
	}

	struct rpma_conn_req *req = *req_ptr;
	*req_ptr = NULL;
	const struct rpma_provider_ops *ops = rpma_peer_provider(req->peer)->ops;

	struct rpma_conn *conn;
	int ret = rpma_conn_new(req->peer, req->priv, req->cq, req->rcq, req->srq,
				req->shared_channel, &conn);
	if (ret) {
		(void)ops->conn_req_delete(req);
		rpma_conn_req_free(req);
		return ret;
	}

	ret = ops->conn_req_connect(req, conn, pdata);
	if (ret) {
		/* the provider has torn the transport down already */
		rpma_conn_abandon(conn);
		rpma_conn_req_free(req);
		return ret;
	}

	/* the connection owns the provider state, the CQs and the private data now */
	rpma_conn_adopt_private_data(conn, &req->pdata);
	req->priv = NULL;
	req->cq = NULL;
	req->rcq = NULL;
	rpma_conn_req_free(req);

	*conn_ptr = conn;
	return 0;
}

/* rpma_conn_req_recv -- post a receive before the connection exists */
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
		       size_t len, const void *op_context)
{
	if (req == NULL || dst == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", req == NULL ? "req" : "dst");
		return RPMA_E_INVAL;
	}
	int ret = rpma_mr_local_check(dst, offset, len, "receive");
	if (ret)
		return ret;
	ret = rpma_msg_len(len, rpma_peer_max_msg_size(req->peer), "receive");
	if (ret)
		return ret;
	if (req->srq != NULL) {
		RPMA_LOG_ERROR("the request takes receives from a shared receive queue: use "
			       "rpma_srq_recv()");
		return RPMA_E_PROVIDER;
	}

	return rpma_peer_provider(req->peer)->ops->conn_req_recv(req, dst, offset, len, op_context);
}

/* rpma_conn_req_get_private_data -- what the connecting peer sent (incoming requests) */
int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
				   struct rpma_conn_private_data *pdata)
{
	if (req == NULL || pdata == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", req == NULL ? "req" : "pdata");
		return RPMA_E_INVAL;
	}

	pdata->ptr = req->pdata.ptr;
	pdata->len = req->pdata.len;
	return 0;
}
