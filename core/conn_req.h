/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_req.h -- connection requests (internal) */

#ifndef RPMA_CONN_REQ_H
#define RPMA_CONN_REQ_H

#include "provider.h"

/*
 * rpma_conn_req_from_ep -- a request built from the endpoint's next incoming
 * connection (ep and req_ptr already checked); cfg NULL means the defaults
 */
int rpma_conn_req_from_ep(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr);

#endif /* RPMA_CONN_REQ_H */
