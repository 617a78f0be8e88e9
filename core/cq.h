/* SPDX-License-Identifier: BSD-3-Clause */
/* cq.h -- completion queues (internal) */

#ifndef RPMA_CQ_H
#define RPMA_CQ_H

#include <stdbool.h>

#include "provider.h"

/*
 * rpma_cq_new -- a CQ object with its (zero-filled) provider state; the
 * provider op that builds the transport (conn_req_new, ep_next_conn_req,
 * srq_new) initialises it
 */
int rpma_cq_new(const struct rpma_provider *prov, bool shared_channel, struct rpma_cq **cq_ptr);

/* rpma_cq_free -- free a CQ object whose transport state is gone (NULL is fine) */
void rpma_cq_free(struct rpma_cq *cq);

#endif /* RPMA_CQ_H */
