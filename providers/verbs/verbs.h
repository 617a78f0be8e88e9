/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs.h -- private state and helpers of the verbs provider (rdma-core) */

#ifndef RPMA_VERBS_H
#define RPMA_VERBS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "provider.h"

/*
 * The largest private data rdma_cm carries on RDMA_PS_TCP: a connect
 * request (the IB CM REQ minus rdma_cm's own header) and an accept (the
 * whole IB CM REP).
 */
#define VRB_PDATA_MAX_CONNECT 56
#define VRB_PDATA_MAX_ACCEPT  196

/* the inline data every queue pair asks for: the emulated 8-byte atomic write */
#define VRB_MIN_INLINE 8

/* the timeout of the address resolution of rpma_utils_get_ibv_context() */
#define VRB_RESOLVE_TIMEOUT_MS 1000

/*
 * Transport retries of an operation toward a peer that does not answer:
 * 6, not 7, because Soft-RoCE (rdma_rxe) takes 7 as "retry for ever", so an
 * operation toward a dead peer would never complete; 6 ends in
 * IBV_WC_RETRY_EXC_ERR on every device.
 */
#define VRB_RETRY_COUNT 6

/*
 * Bounds of the queue pair's local ACK timeout exponent (4.096 us * 2^x per
 * try), derived from the connection's timeout: 15 (134 ms per try, 0.94 s
 * for all 7) keeps a busy or emulated device from giving up on a live peer;
 * 24 (69 s per try) is far beyond any timeout anyone configures.
 */
#define VRB_ACK_TIMEOUT_MIN 15
#define VRB_ACK_TIMEOUT_MAX 24

/* a peer: the protection domain on one device and what the device can do */
struct vrb_peer {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool odp;		  /* the device offers on-demand paging */
	bool native_atomic_write; /* IBV_WR_ATOMIC_WRITE usable */
	bool native_flush;	  /* IBV_WR_FLUSH usable (both types) */
	bool iwarp;		  /* reads are performed as writes by the target */
	bool inline_writes;	  /* small ordinary writes go inline (RPMA_VERBS_INLINE) */
	size_t max_msg_size;	  /* the smallest max_msg_sz of the device's ports */
	bool flush_unannounced;	  /* native flushes to every region (RPMA_VERBS_NATIVE_FLUSH=1) */
};

/* a local memory region */
struct vrb_mr {
	struct ibv_mr *mr;
};

/* a listening endpoint */
struct vrb_ep {
	struct rdma_event_channel *evch;
	struct rdma_cm_id *id;
};

/*
 * Completions vrb_conn_wait() took from a connection's main CQ ahead of the
 * receive CQ's turn (verbs_cq.c, causal order on a shared channel); at most
 * this many wait in a CQ's stash.
 */
#define VRB_STASH_MAX 16

/*
 * How long vrb_conn_wait() waits for a main-CQ completion still missing
 * when the receive CQ of a shared channel signals (verbs_cq.c)
 */
#define VRB_CAUSAL_WAIT_MS 20

/* a completion queue */
struct vrb_cq {
	struct ibv_comp_channel *channel; /* own, or the connection's shared one */
	bool shared;			  /* channel belongs to the connection */
	int nstash;			  /* completions in stash, reported before the CQ's */
	struct ibv_cq *cq;
	/*
	 * signalled work requests posted on the connection whose main CQ this
	 * is and not yet taken from it (kept only while stash is not NULL);
	 * __atomic: the posting and the completion side may be two threads
	 */
	unsigned long outstanding;
	/*
	 * VRB_STASH_MAX entries, only for the main CQ of a connection whose CQ
	 * and receive CQ share a channel (else NULL); such a CQ also counts
	 * outstanding
	 */
	struct ibv_wc *stash;
};

/* a shared receive queue (its receive CQ is a separate core object) */
struct vrb_srq {
	struct ibv_srq *srq;
	struct vrb_cq *rcq; /* the SRQ's own receive CQ state, or NULL */
};

/* a connection request and, after rpma_conn_req_connect(), the connection */
struct vrb_conn {
	struct ibv_qp *qp;	 /* id->qp, once connected (the data path's) */
	struct vrb_cq *track_cq; /* the main CQ when it counts signalled requests, else NULL */
	struct rdma_cm_id *id;
	struct rdma_event_channel *evch;	 /* own channel, created when connecting */
	struct ibv_comp_channel *shared_channel; /* one channel for cq and rcq, or NULL */
	struct vrb_cq *cq;			 /* the main CQ's state */
	struct vrb_cq *rcq;			 /* the connection's own receive CQ, or NULL */
	uint32_t max_inline;			 /* the queue pair's real max_inline_data */
	uint32_t write_inline; /* ordinary writes up to this size go inline (0: none) */
	bool incoming;	       /* made from a CONNECT_REQUEST */
	bool native_atomic_write;
	bool native_flush;
	/* the receive CQ's signal was taken, its naming deferred (vrb_conn_wait) */
	bool rcq_due;
};

/*
 * vrb_track_post -- a signalled work request goes to (delta 1) or was refused
 * by (delta -1) the send queue of a connection whose main CQ counts them
 * (vrb_conn_wait keeps causal order with the count)
 */
static inline void vrb_track_post(struct vrb_conn *vc, bool signaled, long delta)
{
	if (__builtin_expect(vc->track_cq != NULL, 0) && signaled)
		__atomic_add_fetch(&vc->track_cq->outstanding, (unsigned long)delta,
				   __ATOMIC_RELAXED);
}

/* typed accessors of the provider state the core allocates */

static inline struct vrb_peer *vrb_peer(const struct rpma_peer *p)
{
	return rpma_peer_priv(p);
}

static inline struct vrb_mr *vrb_mr(const struct rpma_mr_local *m)
{
	return rpma_mr_priv(m);
}

static inline struct vrb_ep *vrb_ep(const struct rpma_ep *e)
{
	return rpma_ep_priv(e);
}

static inline struct vrb_conn *vrb_conn_req(const struct rpma_conn_req *r)
{
	return rpma_conn_req_priv(r);
}

static inline struct vrb_conn *vrb_conn(const struct rpma_conn *c)
{
	return rpma_conn_priv(c);
}

static inline struct vrb_cq *vrb_cq(const struct rpma_cq *c)
{
	return rpma_cq_priv(c);
}

static inline struct vrb_srq *vrb_srq(const struct rpma_srq *s)
{
	return rpma_srq_priv(s);
}

/* logging: every message of this provider starts with "verbs: " */
#define VRB_LOG_ERRNO(e, fmt, ...) RPMA_LOG_ERROR_WITH_ERRNO(e, "verbs: " fmt, ##__VA_ARGS__)
#define VRB_LOG_ERROR(fmt, ...)	   RPMA_LOG_ERROR("verbs: " fmt, ##__VA_ARGS__)
#define VRB_LOG_WARNING(fmt, ...)  RPMA_LOG_WARNING("verbs: " fmt, ##__VA_ARGS__)
#define VRB_LOG_NOTICE(fmt, ...)   RPMA_LOG_NOTICE("verbs: " fmt, ##__VA_ARGS__)
#define VRB_LOG_INFO(fmt, ...)	   RPMA_LOG_INFO("verbs: " fmt, ##__VA_ARGS__)
#define VRB_LOG_DEBUG(fmt, ...)	   RPMA_LOG_DEBUG("verbs: " fmt, ##__VA_ARGS__)

/* vrb_err -- the RPMA_E_* code of an errno value from rdma-core */
static inline int vrb_err(int e)
{
	return e == ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
}

/* vrb_errno -- errno after a failed rdma-core call, never 0 */
static inline int vrb_errno(void)
{
	return errno ? errno : EIO;
}

/* ----- verbs_cq.c */
int vrb_cq_init(struct vrb_cq *cq, struct ibv_context *ctx, uint32_t size,
		struct ibv_comp_channel *shared_channel);
int vrb_cq_fini(struct vrb_cq *cq);
int vrb_cq_get_fd(const struct rpma_cq *cq, int *fd);
int vrb_cq_wait(struct rpma_cq *cq);
int vrb_cq_poll(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc);
int vrb_conn_wait(struct rpma_conn *conn, bool *is_rcq);

/* ----- verbs_peer.c */
int vrb_device_is_odp_capable(void *dev, int *is_odp_capable);
int vrb_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps);
int vrb_peer_fini(struct rpma_peer *peer);
size_t vrb_peer_max_msg_size(const struct rpma_peer *peer);
void vrb_peer_describe(const struct rpma_peer *peer, char *buf, size_t size);

/* ----- verbs_mr.c */
int vrb_mr_reg(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size, int usage,
	       uint64_t *raddr, uint64_t *rkey);
int vrb_mr_dereg(struct rpma_mr_local *mr);
int vrb_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);

/* ----- verbs_ep.c */
int vrb_getaddrinfo(const char *addr, const char *port, bool passive, struct rdma_addrinfo **ai,
		    enum rpma_log_level level);
int vrb_ep_listen(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr, const char *port);
int vrb_ep_shutdown(struct rpma_ep *ep);
int vrb_ep_get_fd(const struct rpma_ep *ep, int *fd);
int vrb_ep_next_conn_req(struct rpma_ep *ep, struct rpma_conn_req *req,
			 const struct rpma_conn_setup *setup, struct rpma_conn_private_data *pdata);

/* ----- verbs_conn.c */
int vrb_transport_new(struct vrb_peer *peer, struct vrb_conn *vc, struct rdma_cm_id *id,
		      const struct rpma_conn_setup *setup);
int vrb_transport_delete(struct vrb_conn *vc);
int vrb_conn_req_new(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
		     const char *port, const struct rpma_conn_setup *setup);
int vrb_conn_req_delete(struct rpma_conn_req *req);
int vrb_conn_req_connect(struct rpma_conn_req *req, struct rpma_conn *conn,
			 const struct rpma_conn_private_data *pdata);
int vrb_conn_req_recv(struct rpma_conn_req *req, const struct rpma_mr_local *dst, size_t offset,
		      size_t len, const void *op_context);
int vrb_conn_get_event_fd(const struct rpma_conn *conn, int *fd);
int vrb_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
			struct rpma_conn_private_data *pdata);
int vrb_conn_disconnect(struct rpma_conn *conn);
int vrb_conn_delete(struct rpma_conn *conn);
int vrb_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);
int vrb_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);
int vrb_pdata_copy(const void *src, size_t len, struct rpma_conn_private_data *pdata);

/* ----- verbs_io.c: the data path */
int vrb_post_recv(struct ibv_qp *qp, const struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context);
int vrb_read(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
	     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
int vrb_write(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
	      uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
int vrb_write_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		  uint64_t raddr, uint64_t rkey, size_t len, int flags, uint32_t imm,
		  const void *op_context);
int vrb_atomic_write(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, const char src[8],
		     int flags, const void *op_context);
#ifdef VERBS_NATIVE_FLUSH
int vrb_flush(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
	      enum rpma_flush_type type, int flags, const void *op_context);
#endif
int vrb_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	     int flags, bool with_imm, uint32_t imm, const void *op_context);
int vrb_recv(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset, size_t len,
	     const void *op_context);

/* ----- verbs_srq.c */
int vrb_srq_new(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size, struct rpma_cq *rcq,
		uint32_t rcq_size);
int vrb_srq_delete(struct rpma_srq *srq);
int vrb_srq_recv(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset, size_t len,
		 const void *op_context);

#endif /* RPMA_VERBS_H */
