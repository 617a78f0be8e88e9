/* SPDX-License-Identifier: BSD-3-Clause */
/* cq.c -- completion queues */

#include "alloc.h"
#include "cq.h"
#include "log.h"
#include "peer.h"

struct rpma_cq {
	void *priv; /* the provider's state */
	const struct rpma_provider_ops *ops;
	bool shared_channel; /* signalled through the connection's shared channel */
};
RPMA_OBJ_PRIV_FIRST(rpma_cq);

/* rpma_cq_new -- a CQ object with its zero-filled provider state */
int rpma_cq_new(const struct rpma_provider *prov, bool shared_channel, struct rpma_cq **cq_ptr)
{
	struct rpma_cq *cq = rpma_calloc(1, sizeof(*cq));
	if (cq == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = rpma_priv_alloc(prov->cq_size, &cq->priv);
	if (ret) {
		rpma_free(cq);
		return ret;
	}
	cq->ops = prov->ops;
	cq->shared_channel = shared_channel;

	*cq_ptr = cq;
	return 0;
}

/* rpma_cq_free -- free a CQ object whose transport state is gone */
void rpma_cq_free(struct rpma_cq *cq)
{
	if (cq == NULL)
		return;
	rpma_free(cq->priv);
	rpma_free(cq);
}

/* rpma_cq_get_fd -- the descriptor that becomes readable when the CQ is signalled */
int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	if (cq == NULL || fd == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cq == NULL ? "cq" : "fd");
		return RPMA_E_INVAL;
	}

	int f = -1;
	int ret = cq->ops->cq_get_fd(cq, &f);
	if (ret)
		return ret;

	*fd = f;
	return 0;
}

/* rpma_cq_wait -- block until the CQ is signalled, then re-arm it */
int rpma_cq_wait(struct rpma_cq *cq)
{
	if (cq == NULL) {
		RPMA_LOG_ERROR("invalid argument: cq == NULL");
		return RPMA_E_INVAL;
	}
	if (cq->shared_channel) {
		RPMA_LOG_ERROR("the CQ uses the connection's shared completion channel: use "
			       "rpma_conn_wait()");
		return RPMA_E_SHARED_CHANNEL;
	}

	return cq->ops->cq_wait(cq);
}

/* rpma_cq_get_wc -- take up to num_entries completions */
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got)
{
	if (cq == NULL || wc == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cq == NULL ? "cq" : "wc");
		return RPMA_E_INVAL;
	}
	if (num_entries < 1) {
		RPMA_LOG_ERROR("invalid argument: num_entries %d < 1", num_entries);
		return RPMA_E_INVAL;
	}
	if (num_entries > 1 && num_entries_got == NULL) {
		RPMA_LOG_ERROR("invalid argument: num_entries_got == NULL with num_entries %d",
			       num_entries);
		return RPMA_E_INVAL;
	}

	int n = cq->ops->cq_poll(cq, num_entries, wc);
	if (n < 0)
		return n;
	if (n == 0)
		return RPMA_E_NO_COMPLETION;
	if (n > num_entries) {
		RPMA_LOG_ERROR("the provider returned %d completions for %d entries", n,
			       num_entries);
		return RPMA_E_UNKNOWN;
	}

	if (num_entries_got != NULL)
		*num_entries_got = n;
	return 0;
}
