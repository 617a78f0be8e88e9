/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * provider.h -- the boundary between the core and a transport (private, never installed)
 *
 * The core (core/) owns every public object, validates every argument,
 * allocates and frees the objects and their provider state, and implements
 * everything that does not depend on the transport: configuration objects,
 * descriptors, flush gating, the APM flush (an 8-byte read issued through
 * ops->read), bounds checks of remote offsets, logging, error strings and
 * provider selection.  A provider supplies transport primitives only.
 *
 * Rules of the boundary:
 * - An op returns 0 or a negative RPMA_E_* code, never errno or -FI_E*.  A
 *   provider that translates a native error logs the native detail first
 *   (RPMA_LOG_ERROR_WITH_ERRNO(), fi_strerror()).
 * - The core calls only ops with valid, already checked arguments (objects
 *   non-NULL, offsets + lengths within local regions, flags known).
 * - The core allocates the provider's private state of every object
 *   (zero-filled, of the size given in struct rpma_provider) before the
 *   op that initialises it and frees it after the op that tears it down;
 *   rpma_<object>_priv() returns it.  A provider never frees core objects.
 *   Every core object keeps that state as its first member (each object's
 *   file asserts it), so the accessors are inline loads, not calls.
 * - An op that fails leaves nothing behind: whatever it created before the
 *   failure it has released again.
 * - Mandatory ops are called without NULL checks (checked once, when the
 *   provider is looked up); a NULL optional op makes the core answer
 *   RPMA_E_NOSUPP.
 * - Nothing in core/ includes a transport header or compares provider names:
 *   differences are expressed as RPMA_PROV_CAP_* bits.
 */

#ifndef RPMA_PROVIDER_H
#define RPMA_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpma.h"
#include "log.h"

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/*
 * Capability bits.  struct rpma_provider.caps holds the static ones;
 * ops->peer_init() returns the ones that depend on the device (the core ORs
 * them with the static ones and keeps the result in the peer).
 */
/* devices are real struct ibv_context (the verbs provider); otherwise the core hands out opaque handles */
#define RPMA_PROV_CAP_IBV_CONTEXT (1ULL << 0)
/* ops->flush performs rpma_flush() itself (both types; it may answer RPMA_E_NOSUPP for one) */
#define RPMA_PROV_CAP_NATIVE_FLUSH (1ULL << 1)
/* ops->atomic_write is single-copy atomic at the target (not just an ordered 8-byte write) */
#define RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE (1ULL << 2)
/* the device supports on-demand paging */
#define RPMA_PROV_CAP_ODP (1ULL << 3)
/* write-with-immediate consumes a receive posted on the target (as on verbs) */
#define RPMA_PROV_CAP_IMM_CONSUMES_RECV (1ULL << 4)
/*
 * with RPMA_PROV_CAP_NATIVE_FLUSH: flush natively toward every remote region,
 * also the ones whose descriptor does not announce native flush access
 * (upstream librpma 1.3's rule; without this bit such regions get the APM flush)
 */
#define RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED (1ULL << 5)

/* internal flag: "produce a completion on success too" (ALWAYS minus ON_ERROR) */
#define RPMA_F_COMPLETION_ON_SUCCESS (RPMA_F_COMPLETION_ALWAYS & ~RPMA_F_COMPLETION_ON_ERROR)

/* everything a provider needs to build the transport of one connection */
struct rpma_conn_setup {
	int timeout_ms;		 /* resolution/connection timeout */
	uint32_t cq_size;	 /* main CQ entries (>= 1) */
	uint32_t sq_size;	 /* outstanding send-side operations */
	uint32_t rq_size;	 /* outstanding receives (ignored with an SRQ) */
	uint32_t rcq_size;	 /* receive CQ entries; meaningful only when rcq != NULL */
	bool shared_channel;	 /* cq and rcq signal through one channel (rpma_conn_wait()) */
	struct rpma_cq *cq;	 /* the main CQ: state allocated, to be initialised by the op */
	struct rpma_cq *rcq;	 /* a separate receive CQ to initialise, or NULL */
	struct rpma_srq *srq;	 /* a shared receive queue to attach, or NULL */
	struct rpma_cq *srq_rcq; /* the SRQ's own receive CQ (already initialised), or NULL */
				 /*
	 * Where receive completions go: srq_rcq if not NULL, else rcq if not
	 * NULL, else cq.  The core guarantees that shared_channel is false
	 * when srq_rcq is not NULL.
	 */
};

struct rpma_provider_ops {
	/* ----- device (rpma_utils_*) */
	/*
	 * device_get -- find the device serving addr.  With
	 * RPMA_PROV_CAP_IBV_CONTEXT *dev is a struct ibv_context *; otherwise it
	 * is provider data that the core wraps in an opaque handle and keeps
	 * until the library is unloaded (then device_put, if set, releases it).
	 * An address this provider cannot serve: RPMA_E_PROVIDER (or NOSUPP).
	 */
	int (*device_get)(const char *addr, enum rpma_util_ibv_context_type type, void **dev);
	void (*device_put)(void *dev); /* optional */
	/* optional: NULL means "not ODP capable" */
	int (*device_is_odp_capable)(void *dev, int *is_odp_capable);

	/* ----- peer */
	/* peer_init -- open the transport on dev; *caps gets device-dependent RPMA_PROV_CAP_* bits */
	int (*peer_init)(struct rpma_peer *peer, void *dev, uint64_t *caps);
	int (*peer_fini)(struct rpma_peer *peer);

	/* ----- memory registration */
	/*
	 * mr_reg -- register [ptr, ptr + size) for usage (RPMA_MR_USAGE_* bits,
	 * validated).  *raddr is the address the peer must use for offset 0 of
	 * the region (its virtual address, or 0 when the transport addresses
	 * remote memory by offset); *rkey the remote key.  A key that fits in 32
	 * bits keeps the descriptor at upstream's 21 bytes.
	 */
	int (*mr_reg)(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size,
		      int usage, uint64_t *raddr, uint64_t *rkey);
	int (*mr_dereg)(struct rpma_mr_local *mr);
	/* optional */
	int (*mr_advise)(struct rpma_mr_local *mr, size_t offset, size_t len, int advice,
			 uint32_t flags);

	/* ----- endpoint (passive side) */
	int (*ep_listen)(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr,
			 const char *port);
	int (*ep_shutdown)(struct rpma_ep *ep);
	int (*ep_get_fd)(const struct rpma_ep *ep, int *fd);
	/*
	 * ep_next_conn_req -- take the next connection request and build its
	 * transport as described by setup (CQs, queue pair).  The client's
	 * private data is returned in *pdata: ptr allocated with malloc() (the
	 * core owns it from then on) or NULL with len 0 when there is none.
	 * No request waiting on a non-blocking fd: RPMA_E_NO_EVENT.  An event
	 * that is not a connection request: RPMA_E_INVAL (after releasing it).
	 */
	int (*ep_next_conn_req)(struct rpma_ep *ep, struct rpma_conn_req *req,
				const struct rpma_conn_setup *setup,
				struct rpma_conn_private_data *pdata);

	/* ----- connection request; the state (rpma_conn_req_priv()) becomes the connection's */
	/* conn_req_new -- resolve addr:port within setup->timeout_ms and build the transport */
	int (*conn_req_new)(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
			    const char *port, const struct rpma_conn_setup *setup);
	/* conn_req_delete -- tear the transport down; an incoming request is rejected */
	int (*conn_req_delete)(struct rpma_conn_req *req);
	/*
	 * conn_req_connect -- connect (outgoing) or accept (incoming) with
	 * pdata (NULL or ptr/len of 1..255 bytes; a length beyond the
	 * transport's limit: RPMA_E_INVAL, logged with the limit).  On success
	 * the request's state belongs to conn (rpma_conn_priv(conn) is the same
	 * block as rpma_conn_req_priv(req)).  On failure the provider has torn
	 * everything down as conn_req_delete would.
	 */
	int (*conn_req_connect)(struct rpma_conn_req *req, struct rpma_conn *conn,
				const struct rpma_conn_private_data *pdata);
	int (*conn_req_recv)(struct rpma_conn_req *req, const struct rpma_mr_local *dst,
			     size_t offset, size_t len, const void *op_context);

	/* ----- connection */
	int (*conn_get_event_fd)(const struct rpma_conn *conn, int *fd);
	/*
	 * conn_next_event -- the next connection event (blocking unless the fd
	 * was made non-blocking: then RPMA_E_NO_EVENT).  With
	 * RPMA_CONN_ESTABLISHED the peer's private data may come back in *pdata
	 * (malloc()ed, owned by the core afterwards), else pdata is left alone.
	 */
	int (*conn_next_event)(struct rpma_conn *conn, enum rpma_conn_event *event,
			       struct rpma_conn_private_data *pdata);
	int (*conn_disconnect)(struct rpma_conn *conn);
	/* conn_delete -- release the queue pair, its CQs' transport state, channels, ids */
	int (*conn_delete)(struct rpma_conn *conn);
	int (*conn_get_qp_num)(const struct rpma_conn *conn, uint32_t *qp_num);
	/* only called for connections built with setup->shared_channel */
	int (*conn_get_compl_fd)(const struct rpma_conn *conn, int *fd);
	/* conn_wait -- wait on the shared channel, re-arm; *is_rcq tells which CQ fired */
	int (*conn_wait)(struct rpma_conn *conn, bool *is_rcq);

	/* ----- data path: raddr already includes the remote offset */
	/* zero-length forms: dst/src NULL, offsets, len, raddr and rkey 0 */
	int (*read)(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
		    uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
	int (*write)(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
	/* write_imm -- a write that also delivers imm (host order) to the peer's receive */
	int (*write_imm)(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
			 uint64_t raddr, uint64_t rkey, size_t len, int flags, uint32_t imm,
			 const void *op_context);
	/*
	 * atomic_write -- write the 8 bytes of src (copied before the op
	 * returns) to raddr; it must not be executed before every read posted
	 * earlier on this connection has completed (the APM flush ordering).
	 * Single-copy atomic only with RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE.
	 */
	int (*atomic_write)(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey,
			    const char src[8], int flags, const void *op_context);
	/* optional; used instead of the APM read when the peer has RPMA_PROV_CAP_NATIVE_FLUSH */
	int (*flush)(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
		     enum rpma_flush_type type, int flags, const void *op_context);
	int (*send)(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		    size_t len, int flags, bool with_imm, uint32_t imm, const void *op_context);
	int (*recv)(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset,
		    size_t len, const void *op_context);
	/*
	 * flags above: non-zero, within RPMA_F_COMPLETION_ALWAYS; a success
	 * completion is asked for when RPMA_F_COMPLETION_ON_SUCCESS is set
	 */

	/* ----- completion queues */
	int (*cq_get_fd)(const struct rpma_cq *cq, int *fd);
	/* cq_wait -- block until the CQ is signalled, acknowledge, re-arm (not shared-channel CQs) */
	int (*cq_wait)(struct rpma_cq *cq);
	/*
	 * cq_poll -- fill up to num_entries (>= 1) completions as struct ibv_wc;
	 * returns how many (0 when none) or a negative RPMA_E_* code
	 */
	int (*cq_poll)(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc);

	/* ----- shared receive queue */
	/* srq_new -- rcq (NULL when rcq_size is 0) is the SRQ's own receive CQ to initialise */
	int (*srq_new)(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size,
		       struct rpma_cq *rcq, uint32_t rcq_size);
	int (*srq_delete)(struct rpma_srq *srq);
	int (*srq_recv)(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset,
			size_t len, const void *op_context);
};

struct rpma_provider {
	const char *name;	 /* "verbs", "fabric": the value of RPMA_PROVIDER */
	const char *description; /* one line for logs and rpma-info */
	uint64_t caps;		 /* static RPMA_PROV_CAP_* bits */
	/* sizes of the private state the core allocates per object */
	size_t peer_size;
	size_t mr_size;
	size_t ep_size;
	size_t conn_size; /* a connection request's state, which later is the connection's */
	size_t cq_size;
	size_t srq_size;
	const struct rpma_provider_ops *ops;
};

/* the built-in providers, in the order of automatic selection (NULL-terminated) */
extern const struct rpma_provider *const rpma_providers[];

/* the providers' own tables (providers/<name>/<name>_provider.c) */
extern const struct rpma_provider rpma_provider_verbs;
extern const struct rpma_provider rpma_provider_fabric;

/* ----- services of the core for providers (implemented in core/) */

/*
 * The provider state of each object: the object's first member (a pointer
 * to a structure, converted, points to its first member: C11 6.7.2.1)
 */
#define RPMA_OBJ_PRIV(obj) (*(void *const *)(const void *)(obj))

static inline void *rpma_peer_priv(const struct rpma_peer *peer)
{
	return RPMA_OBJ_PRIV(peer);
}

static inline void *rpma_mr_priv(const struct rpma_mr_local *mr)
{
	return RPMA_OBJ_PRIV(mr);
}

static inline void *rpma_ep_priv(const struct rpma_ep *ep)
{
	return RPMA_OBJ_PRIV(ep);
}

static inline void *rpma_conn_req_priv(const struct rpma_conn_req *req)
{
	return RPMA_OBJ_PRIV(req);
}

static inline void *rpma_conn_priv(const struct rpma_conn *conn)
{
	return RPMA_OBJ_PRIV(conn);
}

static inline void *rpma_cq_priv(const struct rpma_cq *cq)
{
	return RPMA_OBJ_PRIV(cq);
}

static inline void *rpma_srq_priv(const struct rpma_srq *srq)
{
	return RPMA_OBJ_PRIV(srq);
}

/* RPMA_OBJ_PRIV_FIRST -- where an object is defined: its provider state comes first */
#define RPMA_OBJ_PRIV_FIRST(type)                                                       \
	_Static_assert(offsetof(struct type, priv) == 0,                                \
		       "struct " #type ": the provider state must be the first member " \
		       "(provider.h)")

/* the peer an object was made from */
struct rpma_peer *rpma_ep_peer(const struct rpma_ep *ep);
struct rpma_peer *rpma_conn_req_peer(const struct rpma_conn_req *req);
struct rpma_peer *rpma_conn_peer(const struct rpma_conn *conn);
struct rpma_peer *rpma_srq_peer(const struct rpma_srq *srq);

/* the capability bits of a peer (static | device-dependent) */
uint64_t rpma_peer_caps(const struct rpma_peer *peer);

/* a local region's registered range and usage */
void *rpma_mr_local_ptr(const struct rpma_mr_local *mr);
size_t rpma_mr_local_size(const struct rpma_mr_local *mr);
int rpma_mr_local_usage(const struct rpma_mr_local *mr);

#endif /* RPMA_PROVIDER_H */
