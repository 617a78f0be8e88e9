/* SPDX-License-Identifier: BSD-3-Clause */
/* conn.h -- connections (internal) */

#ifndef RPMA_CONN_H
#define RPMA_CONN_H

#include <stdatomic.h>
#include <stdbool.h>

#include "provider.h"

struct rpma_flush;

/* a connection (defined here for the core's data path; providers see rpma_conn_priv()) */
struct rpma_conn {
	void *priv; /* the provider's state (the request's before) */
	struct rpma_peer *peer;
	const struct rpma_provider_ops *ops; /* the peer's provider's, looked up once */
	uint64_t caps;			     /* the peer's RPMA_PROV_CAP_* bits, read once */
	size_t max_msg_size;		     /* the peer's largest operation, read once */
	struct rpma_cq *cq;		     /* the main CQ */
	struct rpma_cq *rcq;		     /* the connection's own receive CQ, or NULL */
	struct rpma_srq *srq;
	bool shared_channel;
	_Atomic bool direct_write_to_pmem;
	/* the applied peer configuration said its regions announce native flush */
	_Atomic bool remote_announces;
	struct rpma_conn_private_data pdata; /* the peer's private data, or { NULL, 0 } */
	struct rpma_flush *flush;	     /* the read-after-write flush region, or NULL */
	/*
	 * the application disconnected the connection, or
	 * rpma_conn_next_event() reported its end: a receive posted from then
	 * on is refused (rpma_recv), as no transport is sure to complete it
	 * (rdma_rxe of Linux 6.1 takes a receive posted to a queue pair in the
	 * error state and never flushes it; libfabric's tcp takes one on a
	 * disconnected endpoint)
	 */
	_Atomic bool recv_closed;
};
RPMA_OBJ_PRIV_FIRST(rpma_conn);

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
static inline bool rpma_conn_direct_write_to_pmem(const struct rpma_conn *conn)
{
	return atomic_load_explicit(&((struct rpma_conn *)conn)->direct_write_to_pmem,
				    memory_order_relaxed);
}

/* rpma_data_flags_invalid -- log why data-path flags are refused */
void rpma_data_flags_invalid(int flags);

/*
 * rpma_data_flags -- check the flags of a data-path operation (non-zero, no
 * bits beyond RPMA_F_COMPLETION_ALWAYS); they go to the provider as they are
 * (inline: every operation passes here)
 */
static inline int rpma_data_flags(int flags)
{
	if (flags == 0 || (flags & ~RPMA_F_COMPLETION_ALWAYS)) {
		rpma_data_flags_invalid(flags);
		return RPMA_E_INVAL;
	}
	return 0;
}

#endif /* RPMA_CONN_H */
