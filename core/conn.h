/* SPDX-License-Identifier: BSD-3-Clause */
/* conn.h -- connections (internal) */

#ifndef RPMA_CONN_H
#define RPMA_CONN_H

#include <stdbool.h>

#include "provider.h"

struct rpma_flush;

/*
 * rpma_conn_new -- the connection object a request turns into: it takes
 * over the request's provider state (priv) and CQs, holds a reference to the
 * peer and owns the read-after-write flush region (unless the peer flushes
 * natively).  Called before the provider connects/accepts.
 */
int rpma_conn_new(struct rpma_peer *peer, void *priv, struct rpma_cq *cq, struct rpma_cq *rcq,
		  struct rpma_srq *srq, bool shared_channel, struct rpma_conn **conn_ptr);

/*
 * rpma_conn_abandon -- the provider failed to connect: free what
 * rpma_conn_new() made, but not the provider state and the CQs (they are
 * still the request's)
 */
void rpma_conn_abandon(struct rpma_conn *conn);

/* rpma_conn_adopt_private_data -- the connection takes over the request's private data */
void rpma_conn_adopt_private_data(struct rpma_conn *conn, struct rpma_conn_private_data *pdata);

/* rpma_conn_direct_write_to_pmem -- what rpma_conn_apply_remote_peer_cfg() stored */
bool rpma_conn_direct_write_to_pmem(const struct rpma_conn *conn);

/* rpma_conn_flush_obj -- the read-after-write flush region, or NULL */
struct rpma_flush *rpma_conn_flush_obj(const struct rpma_conn *conn);

/* rpma_data_flags_invalid -- log why data-path flags are refused */
void rpma_data_flags_invalid(int flags);

/*
 * rpma_data_flags -- check the flags of a data-path operation (non-zero, no
 * bits beyond RPMA_F_COMPLETION_ALWAYS) and map them to the two values a
 * provider accepts (inline: every operation passes here)
 */
static inline int rpma_data_flags(int flags, int *pflags)
{
	if (flags == 0 || (flags & ~RPMA_F_COMPLETION_ALWAYS)) {
		rpma_data_flags_invalid(flags);
		return RPMA_E_INVAL;
	}
	*pflags = (flags & RPMA_F_COMPLETION_ON_SUCCESS) ? RPMA_F_COMPLETION_ALWAYS
							 : RPMA_F_COMPLETION_ON_ERROR;
	return 0;
}

#endif /* RPMA_CONN_H */
