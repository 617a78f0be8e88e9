/* SPDX-License-Identifier: BSD-3-Clause */
/* srq.c -- shared receive queues */

#include "alloc.h"
#include "cq.h"
#include "log.h"
#include "mr.h"
#include "peer.h"
#include "srq.h"
#include "srq_cfg.h"

struct rpma_srq {
	void *priv; /* the provider's state */
	struct rpma_peer *peer;
	struct rpma_cq *rcq; /* the SRQ's own receive CQ, or NULL */
	size_t max_msg_size; /* the peer's largest operation, read once */
};
RPMA_OBJ_PRIV_FIRST(rpma_srq);

/* rpma_srq_peer -- the peer the SRQ was made from */
struct rpma_peer *rpma_srq_peer(const struct rpma_srq *srq)
{
	return srq->peer;
}

/* rpma_srq_rcq -- the SRQ's own receive CQ, or NULL */
struct rpma_cq *rpma_srq_rcq(const struct rpma_srq *srq)
{
	return srq->rcq;
}

/* rpma_srq_new -- a receive queue several connections can share */
int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr)
{
	if (peer == NULL || srq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", peer == NULL ? "peer" : "srq_ptr");
		return RPMA_E_INVAL;
	}

	uint32_t rq_size, rcq_size;
	rpma_srq_cfg_read(cfg, &rq_size, &rcq_size);

	const struct rpma_provider *prov = rpma_peer_provider(peer);
	struct rpma_srq *srq = rpma_calloc(1, sizeof(*srq));
	if (srq == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = rpma_priv_alloc(prov->srq_size, &srq->priv);
	if (ret)
		goto err_free_srq;
	if (rcq_size > 0) {
		ret = rpma_cq_new(prov, false, &srq->rcq);
		if (ret)
			goto err_free_priv;
	}
	srq->peer = peer;
	srq->max_msg_size = rpma_peer_max_msg_size(peer);

	ret = prov->ops->srq_new(peer, srq, rq_size, srq->rcq, rcq_size);
	if (ret)
		goto err_free_rcq;

	rpma_peer_ref(peer);
	*srq_ptr = srq;
	return 0;

err_free_rcq:
	rpma_cq_free(srq->rcq);
err_free_priv:
	rpma_free(srq->priv);
err_free_srq:
	rpma_free(srq);
	return ret;
}

/* rpma_srq_delete -- release a shared receive queue and its receive CQ */
int rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	if (srq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: srq_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_srq *srq = *srq_ptr;
	if (srq == NULL)
		return 0;

	struct rpma_peer *peer = srq->peer;
	int ret = rpma_peer_provider(peer)->ops->srq_delete(srq);
	rpma_cq_free(srq->rcq);
	rpma_free(srq->priv);
	rpma_free(srq);
	int ret2 = rpma_peer_unref(peer);
	if (ret == 0)
		ret = ret2;

	*srq_ptr = NULL;
	return ret;
}

/* rpma_srq_recv -- post a receive buffer to the shared queue */
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context)
{
	if (srq == NULL) {
		RPMA_LOG_ERROR("invalid argument: srq == NULL");
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
		ret = rpma_msg_len(len, srq->max_msg_size, "receive");
		if (ret)
			return ret;
	}

	return rpma_peer_provider(srq->peer)->ops->srq_recv(srq, dst, offset, len, op_context);
}

/* rpma_srq_get_rcq -- the shared queue's receive CQ, or NULL */
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	if (srq == NULL || rcq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", srq == NULL ? "srq" : "rcq_ptr");
		return RPMA_E_INVAL;
	}

	*rcq_ptr = srq->rcq;
	return 0;
}
