/* SPDX-License-Identifier: BSD-3-Clause */
/* peer.c -- the peer: an opened transport on a device */

#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>

#include "alloc.h"
#include "log.h"
#include "peer.h"
#include "utils.h"

struct rpma_peer {
	void *priv; /* the provider's state */
	const struct rpma_provider *prov;
	uint64_t caps;	     /* static | device-dependent RPMA_PROV_CAP_* */
	size_t max_msg_size; /* the longest data-path operation (SIZE_MAX: no limit) */
	/* 1 for the application's reference + 1 per object made from the peer */
	_Atomic unsigned long refs;
};
RPMA_OBJ_PRIV_FIRST(rpma_peer);

/* rpma_priv_alloc -- the zero-filled provider state of an object */
int rpma_priv_alloc(size_t size, void **priv_ptr)
{
	if (size == 0) {
		*priv_ptr = NULL;
		return 0;
	}

	void *priv = rpma_calloc(1, size);
	if (priv == NULL) {
		RPMA_LOG_ERROR("out of memory for %zu bytes of provider state", size);
		return RPMA_E_NOMEM;
	}

	*priv_ptr = priv;
	return 0;
}

/* rpma_peer_caps -- the capability bits of the peer */
uint64_t rpma_peer_caps(const struct rpma_peer *peer)
{
	return peer->caps;
}

/* rpma_peer_max_msg_size -- the largest length of one data-path operation */
size_t rpma_peer_max_msg_size(const struct rpma_peer *peer)
{
	return peer->max_msg_size;
}

/* rpma_peer_provider -- the provider the peer runs on */
const struct rpma_provider *rpma_peer_provider(const struct rpma_peer *peer)
{
	return peer->prov;
}

/* rpma_peer_fini -- close the transport and free the peer; returns the provider's answer */
static int rpma_peer_fini(struct rpma_peer *peer)
{
	int ret = peer->prov->ops->peer_fini(peer);
	rpma_free(peer->priv);
	rpma_free(peer);
	return ret;
}

/* rpma_peer_ref -- one more object depends on the peer */
void rpma_peer_ref(struct rpma_peer *peer)
{
	atomic_fetch_add(&peer->refs, 1);
}

/* rpma_peer_unref -- an object made from the peer is gone; the answer of a deferred close */
int rpma_peer_unref(struct rpma_peer *peer)
{
	if (atomic_fetch_sub(&peer->refs, 1) != 1)
		return 0;

	/* the peer was deleted while objects still used it: close it now */
	int ret = rpma_peer_fini(peer);
	if (ret)
		RPMA_LOG_ERROR("closing a deleted peer failed: %s", rpma_err_2str(ret));
	return ret;
}

/* rpma_peer_new -- open the transport on a device */
int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr)
{
	if (ibv_ctx == NULL || peer_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       ibv_ctx == NULL ? "ibv_ctx" : "peer_ptr");
		return RPMA_E_INVAL;
	}

	const struct rpma_provider *prov;
	void *dev;
	int ret = rpma_utils_device_resolve(ibv_ctx, &prov, &dev);
	if (ret)
		return ret;

	struct rpma_peer *peer = rpma_calloc(1, sizeof(*peer));
	if (peer == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	ret = rpma_priv_alloc(prov->peer_size, &peer->priv);
	if (ret) {
		rpma_free(peer);
		return ret;
	}
	peer->prov = prov;
	atomic_init(&peer->refs, 1);

	uint64_t caps = 0;
	ret = prov->ops->peer_init(peer, dev, &caps);
	if (ret) {
		rpma_free(peer->priv);
		rpma_free(peer);
		return ret;
	}
	peer->caps = prov->caps | caps;
	peer->max_msg_size = SIZE_MAX;
	if (prov->ops->peer_max_msg_size != NULL) {
		size_t max = prov->ops->peer_max_msg_size(peer);
		if (max != 0)
			peer->max_msg_size = max;
	}

	if ((peer->caps & RPMA_PROV_CAP_NATIVE_FLUSH) && prov->ops->flush == NULL) {
		RPMA_LOG_WARNING("provider %s reports native flush but has no flush op: "
				 "the read-after-write flush is used",
				 prov->name);
		peer->caps &= ~RPMA_PROV_CAP_NATIVE_FLUSH;
	}
	if (!(peer->caps & RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE))
		RPMA_LOG_INFO("native atomic write is not supported: an ordered 8-byte write is "
			      "used instead");
	if (!(peer->caps & RPMA_PROV_CAP_NATIVE_FLUSH))
		RPMA_LOG_INFO("native flush is not supported: an 8-byte read is used instead");
	RPMA_LOG_INFO("peer opened on provider %s (caps 0x%" PRIx64 ", largest message %zu bytes)",
		      prov->name, peer->caps, peer->max_msg_size);

	*peer_ptr = peer;
	return 0;
}

/* rpma_peer_delete -- close a peer (later, when objects made from it still exist) */
int rpma_peer_delete(struct rpma_peer **peer_ptr)
{
	if (peer_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: peer_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_peer *peer = *peer_ptr;
	if (peer == NULL)
		return 0;
	*peer_ptr = NULL;

	unsigned long refs = atomic_fetch_sub(&peer->refs, 1);
	if (refs == 1)
		return rpma_peer_fini(peer);

	/*
	 * Upstream's ibv_dealloc_pd() fails with EBUSY here and the call
	 * returns RPMA_E_PROVIDER; the peer is closed when its last object goes.
	 */
	RPMA_LOG_ERROR("the peer is still used by %lu object(s): it will be closed when the last "
		       "of them is deleted",
		       refs - 1);
	return RPMA_E_PROVIDER;
}
