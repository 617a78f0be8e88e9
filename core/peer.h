/* SPDX-License-Identifier: BSD-3-Clause */
/* peer.h -- the peer: an opened transport on a device (internal) */

#ifndef RPMA_PEER_H
#define RPMA_PEER_H

#include <stddef.h>

#include "provider.h"

/* rpma_peer_provider -- the provider the peer runs on */
const struct rpma_provider *rpma_peer_provider(const struct rpma_peer *peer);

/*
 * rpma_peer_ref / rpma_peer_unref -- every object made from a peer (region,
 * endpoint, request, connection, SRQ) holds a reference; the peer's
 * transport is closed when rpma_peer_delete() has been called and the last
 * reference is gone; rpma_peer_unref() then returns what closing it returned
 * (0 otherwise), for the delete call of the last object to report
 */
void rpma_peer_ref(struct rpma_peer *peer);
int rpma_peer_unref(struct rpma_peer *peer);

/*
 * rpma_priv_alloc -- the zero-filled provider state of an object (NULL and
 * success when the provider needs none)
 */
int rpma_priv_alloc(size_t size, void **priv_ptr);

#endif /* RPMA_PEER_H */
