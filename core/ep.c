/* SPDX-License-Identifier: BSD-3-Clause */
/* ep.c -- listening endpoints */

#include "alloc.h"
#include "conn_req.h"
#include "ep.h"
#include "log.h"
#include "peer.h"

struct rpma_ep {
	void *priv; /* the provider's state */
	struct rpma_peer *peer;
};
RPMA_OBJ_PRIV_FIRST(rpma_ep);

/* rpma_ep_peer -- the peer an endpoint was made from */
struct rpma_peer *rpma_ep_peer(const struct rpma_ep *ep)
{
	return ep->peer;
}

/* rpma_ep_listen -- listen for incoming connections on addr:port */
int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		   struct rpma_ep **ep_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || ep_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       peer == NULL ? "peer"
					    : (addr == NULL ? "addr"
							    : (port == NULL ? "port" : "ep_ptr")));
		return RPMA_E_INVAL;
	}

	const struct rpma_provider *prov = rpma_peer_provider(peer);
	struct rpma_ep *ep = rpma_calloc(1, sizeof(*ep));
	if (ep == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = rpma_priv_alloc(prov->ep_size, &ep->priv);
	if (ret) {
		rpma_free(ep);
		return ret;
	}
	ep->peer = peer;

	ret = prov->ops->ep_listen(peer, ep, addr, port);
	if (ret) {
		rpma_free(ep->priv);
		rpma_free(ep);
		return ret;
	}
	rpma_peer_ref(peer);

	RPMA_LOG_NOTICE("waiting for incoming connections on %s:%s", addr, port);
	*ep_ptr = ep;
	return 0;
}

/* rpma_ep_shutdown -- stop listening and release the endpoint */
int rpma_ep_shutdown(struct rpma_ep **ep_ptr)
{
	if (ep_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: ep_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_ep *ep = *ep_ptr;
	if (ep == NULL)
		return 0;

	struct rpma_peer *peer = ep->peer;
	int ret = rpma_peer_provider(peer)->ops->ep_shutdown(ep);
	rpma_free(ep->priv);
	rpma_free(ep);
	int ret2 = rpma_peer_unref(peer);
	if (ret == 0)
		ret = ret2;

	*ep_ptr = NULL;
	return ret;
}

/* rpma_ep_get_fd -- the descriptor that becomes readable when a request waits */
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	if (ep == NULL || fd == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", ep == NULL ? "ep" : "fd");
		return RPMA_E_INVAL;
	}

	int f = -1;
	int ret = rpma_peer_provider(ep->peer)->ops->ep_get_fd(ep, &f);
	if (ret)
		return ret;

	*fd = f;
	return 0;
}

/* rpma_ep_next_conn_req -- take the next incoming connection request */
int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr)
{
	if (ep == NULL || req_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", ep == NULL ? "ep" : "req_ptr");
		return RPMA_E_INVAL;
	}

	return rpma_conn_req_from_ep(ep, cfg, req_ptr);
}
