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
 *
 * Concurrency (what the core lets run at the same time; librpma(7) THREAD
 * SAFETY is the public side of it, tests/threads exercises it):
 * - Ops on different objects may run concurrently, also on objects of one
 *   peer (mr_reg, ep_listen, conn_req_new... from many threads): state
 *   shared per peer or device is the provider's to protect.
 * - One connection has three sides that may each run in a thread of its own
 *   at the same time: posting (read, write, write_imm, atomic_write, flush,
 *   send, recv), each of its CQs (cq_poll, cq_wait, conn_wait; the main CQ
 *   and the receive CQ may be polled by two threads) and its events
 *   (conn_next_event).  Every other op on a connection (conn_disconnect,
 *   conn_delete, conn_get_*) and every op on an endpoint, a connection
 *   request or an SRQ's set-up and teardown runs with the object to itself
 *   (srq_recv is a posting op and may run alongside the SRQ's CQ).
 * - A provider's own threads (progress engines) may touch an object only
 *   under the provider's locks, and are gone when the op tearing the object
 *   down returns.
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
/*
 * The two bits below are not read by the core: they describe the transport to
 * rpma-info and to the tests (ODP answers come from ops->device_is_odp_capable)
 */
/* the device supports on-demand paging */
#define RPMA_PROV_CAP_ODP (1ULL << 3)
/* write-with-immediate consumes a receive posted on the target (as on verbs) */
#define RPMA_PROV_CAP_IMM_CONSUMES_RECV (1ULL << 4)
/*
 * with RPMA_PROV_CAP_NATIVE_FLUSH: flush natively toward every remote region,
 * also the ones whose descriptor does not announce native flush access.  Set
 * it when the provider's flush needs no access right on the target region,
 * or to follow upstream librpma 1.3's rule on purpose; without this bit such
 * regions get the APM flush (a native flush the target's rights refuse would
 * break the connection)
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
	/* device_put -- optional: give back a device of device_get (never with IBV_CONTEXT) */
	void (*device_put)(void *dev);
	/* device_is_odp_capable -- optional (NULL: "not ODP capable"): on-demand paging on dev */
	int (*device_is_odp_capable)(void *dev, int *is_odp_capable);

	/* ----- peer */
	/* peer_init -- open the transport on dev; *caps gets device-dependent RPMA_PROV_CAP_* bits */
	int (*peer_init)(struct rpma_peer *peer, void *dev, uint64_t *caps);
	/* peer_fini -- close what peer_init opened (every object of the peer is gone by then) */
	int (*peer_fini)(struct rpma_peer *peer);
	/*
	 * peer_max_msg_size -- optional, asked once after peer_init: the largest
	 * length one operation of the peer's connections and SRQs can carry
	 * (read, write, write with immediate data, send, receive); the core
	 * refuses longer ones with RPMA_E_INVAL before they reach the provider,
	 * so no provider ever truncates a length into a narrower transport
	 * field.  NULL (or an answer of 0): no limit below SIZE_MAX.
	 */
	size_t (*peer_max_msg_size)(const struct rpma_peer *peer);
	/*
	 * peer_describe -- optional: one line for people (rpma-info) naming what
	 * the peer runs on: the device, the transport under it, limits a user
	 * meets (private data, ...); at most size bytes with the NUL
	 */
	void (*peer_describe)(const struct rpma_peer *peer, char *buf, size_t size);

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
	/* mr_dereg -- release the registration (no operation of the region is outstanding) */
	int (*mr_dereg)(struct rpma_mr_local *mr);
	/* mr_advise -- optional (NULL: RPMA_E_NOSUPP): prefetch advice on a range of the region */
	int (*mr_advise)(struct rpma_mr_local *mr, size_t offset, size_t len, int advice,
			 uint32_t flags);

	/* ----- endpoint (passive side) */
	/* ep_listen -- listen on addr:port (both validated strings) for connection requests */
	int (*ep_listen)(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr,
			 const char *port);
	/* ep_shutdown -- stop listening and release the endpoint's transport */
	int (*ep_shutdown)(struct rpma_ep *ep);
	/* ep_get_fd -- a descriptor that polls readable when a connection request waits */
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
	/* conn_req_recv -- post a receive before the connection exists (as recv) */
	int (*conn_req_recv)(struct rpma_conn_req *req, const struct rpma_mr_local *dst,
			     size_t offset, size_t len, const void *op_context);

	/* ----- connection */
	/* conn_get_event_fd -- a descriptor that polls readable when a connection event waits */
	int (*conn_get_event_fd)(const struct rpma_conn *conn, int *fd);
	/*
	 * conn_next_event -- the next connection event (blocking unless the fd
	 * was made non-blocking: then RPMA_E_NO_EVENT).  With
	 * RPMA_CONN_ESTABLISHED the peer's private data may come back in *pdata
	 * (malloc()ed, owned by the core afterwards), else pdata is left alone.
	 */
	int (*conn_next_event)(struct rpma_conn *conn, enum rpma_conn_event *event,
			       struct rpma_conn_private_data *pdata);
	/* conn_disconnect -- start the disconnection; RPMA_CONN_CLOSED follows as an event */
	int (*conn_disconnect)(struct rpma_conn *conn);
	/* conn_delete -- release the queue pair, its CQs' transport state, channels, ids */
	int (*conn_delete)(struct rpma_conn *conn);
	/* conn_get_qp_num -- a number identifying the connection (the QP number on verbs) */
	int (*conn_get_qp_num)(const struct rpma_conn *conn, uint32_t *qp_num);
	/* conn_get_compl_fd -- the shared channel's descriptor (setup->shared_channel only) */
	int (*conn_get_compl_fd)(const struct rpma_conn *conn, int *fd);
	/* conn_wait -- wait on the shared channel, re-arm; *is_rcq tells which CQ fired */
	int (*conn_wait)(struct rpma_conn *conn, bool *is_rcq);

	/* ----- data path: raddr already includes the remote offset */
	/* zero-length forms: dst/src NULL, offsets, len, raddr and rkey 0 */
	/* read -- read len bytes at raddr into dst at dst_offset */
	int (*read)(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
		    uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
	/* write -- write len bytes of src at src_offset to raddr */
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
	/*
	 * flush -- optional (mandatory with RPMA_PROV_CAP_NATIVE_FLUSH), used
	 * instead of the APM read when the peer has RPMA_PROV_CAP_NATIVE_FLUSH:
	 * make [raddr, raddr + len) visible or persistent at the target
	 */
	int (*flush)(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
		     enum rpma_flush_type type, int flags, const void *op_context);
	/* send -- send len bytes of src at offset (with imm when with_imm) to the peer's receive */
	int (*send)(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		    size_t len, int flags, bool with_imm, uint32_t imm, const void *op_context);
	/* recv -- post a receive of up to len bytes into dst at offset */
	int (*recv)(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset,
		    size_t len, const void *op_context);
	/*
	 * flags above: non-zero, within RPMA_F_COMPLETION_ALWAYS; a success
	 * completion is asked for when RPMA_F_COMPLETION_ON_SUCCESS is set
	 */

	/* ----- completion queues */
	/* cq_get_fd -- a descriptor that polls readable when the CQ is signalled */
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
	/* srq_delete -- release the SRQ and its own receive CQ's transport state */
	int (*srq_delete)(struct rpma_srq *srq);
	/* srq_recv -- post a receive to the SRQ (as recv) */
	int (*srq_recv)(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset,
			size_t len, const void *op_context);
};

/*
 * RPMA_PROVIDER_MANDATORY_OPS -- every op a provider must set (all but
 * device_put, device_is_odp_capable, peer_max_msg_size, peer_describe,
 * mr_advise and flush):
 * the one list the core checks a table against when it looks the provider up
 * (core/provider.c); a name that is not a member of struct rpma_provider_ops
 * does not compile.  X(op) is applied to each.
 */
/* clang-format off */
#define RPMA_PROVIDER_MANDATORY_OPS(X) \
	X(device_get) \
	X(peer_init) \
	X(peer_fini) \
	X(mr_reg) \
	X(mr_dereg) \
	X(ep_listen) \
	X(ep_shutdown) \
	X(ep_get_fd) \
	X(ep_next_conn_req) \
	X(conn_req_new) \
	X(conn_req_delete) \
	X(conn_req_connect) \
	X(conn_req_recv) \
	X(conn_get_event_fd) \
	X(conn_next_event) \
	X(conn_disconnect) \
	X(conn_delete) \
	X(conn_get_qp_num) \
	X(conn_get_compl_fd) \
	X(conn_wait) \
	X(read) \
	X(write) \
	X(write_imm) \
	X(atomic_write) \
	X(send) \
	X(recv) \
	X(cq_get_fd) \
	X(cq_wait) \
	X(cq_poll) \
	X(srq_new) \
	X(srq_delete) \
	X(srq_recv)
/* clang-format on */

struct rpma_provider {
	const char *name;	 /* the value of RPMA_PROVIDER; a module is librpma-<name>.so */
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

/*
 * The registry (core/registry.c for librpma.so.0; programs that link
 * providers in, such as rpma-info and the tests, bring their own):
 * rpma_providers[] lists the tables linked into the program, in the order of
 * automatic selection (NULL-terminated); rpma_provider_modules names the
 * provider modules automatic selection tries after them, in order,
 * separated by ':' (NULL or "": none).  RPMA_PROVIDER=name also finds a
 * module that the list does not name.
 */
extern const struct rpma_provider *const rpma_providers[];
extern const char *const rpma_provider_modules;

/*
 * A provider's table is rpma_provider_<name> (providers/<name>/<name>_provider.c);
 * only the registries that link providers in (core/registry_static.c, the
 * fault-injection tests) name them: the names of the providers librpma.so.0
 * tries are the module list configure makes (RPMA_PROVIDER_AUTO).
 */

/*
 * ----- provider modules
 *
 * A provider built as a module is the file librpma-<name>.so, looked up in
 * the directories of RPMA_PROVIDER_PATH (':'-separated; ignored in setuid
 * programs), then in the directory "librpma" next to librpma.so.0 itself,
 * then in the directory configured at build time ($(pkglibdir)).  It is
 * loaded the first time selection reaches it and never unloaded.  It
 * exports one symbol, RPMA_PROVIDER_MODULE_ENTRY, a function of type
 * rpma_provider_module_fn: given the core's services it stores them, writes
 * the ABI version it was built for into *abi_version and returns its table.
 * The core refuses (and logs) a module of another ABI version, a table that
 * lacks a mandatory op or whose name is not the one the file is named after.
 * The module reaches the core only through the services (a module linked
 * with providers/module.c gets the functions declared below and log.h's
 * rpma_log_emit() as forwarders to them).
 */
#define RPMA_PROVIDER_ABI_VERSION  3U
#define RPMA_PROVIDER_MODULE_ENTRY "rpma_provider_module"
#define RPMA_PROVIDER_PATH_ENV	   "RPMA_PROVIDER_PATH"

/* what the core offers a module: the functions of the section below, and logging */
struct rpma_core_services {
	unsigned abi_version; /* RPMA_PROVIDER_ABI_VERSION of the core */
	int (*log_enabled)(enum rpma_log_level level);
	/* format the message once (the arguments in ap) and hand it to the log function */
	void (*log_emitv)(enum rpma_log_level level, const char *file, int line, const char *func,
			  const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
	struct rpma_peer *(*ep_peer)(const struct rpma_ep *ep);
	struct rpma_peer *(*conn_req_peer)(const struct rpma_conn_req *req);
	struct rpma_peer *(*conn_peer)(const struct rpma_conn *conn);
	struct rpma_peer *(*srq_peer)(const struct rpma_srq *srq);
	uint64_t (*peer_caps)(const struct rpma_peer *peer);
	size_t (*peer_max_msg_size)(const struct rpma_peer *peer);
	void *(*mr_local_ptr)(const struct rpma_mr_local *mr);
	size_t (*mr_local_size)(const struct rpma_mr_local *mr);
	int (*mr_local_usage)(const struct rpma_mr_local *mr);
	const char *(*conn_event_2str)(enum rpma_conn_event conn_event);
	/* the module is being unloaded (process exit): give back the devices of prov */
	void (*module_fini)(const struct rpma_provider *prov);
};

/* the type of a module's RPMA_PROVIDER_MODULE_ENTRY */
typedef const struct rpma_provider *rpma_provider_module_fn(const struct rpma_core_services *core,
							    unsigned *abi_version);

/*
 * ----- what a transport does where the API leaves the outcome to it
 *
 * A module may also export RPMA_PROVIDER_TRAITS_ENTRY, a function of type
 * rpma_provider_traits_fn that fills struct rpma_provider_traits.  The core
 * never reads it: it is how the tests (tests/integration, tests/threads) learn
 * what to expect of the provider they run over, instead of comparing provider
 * names, so a new provider runs them by declaring its traits.  A module that
 * exports none is tested as its traits' zero values describe.  The function
 * may look at the environment the transport reads (e.g. FI_PROVIDER).
 */
#define RPMA_PROVIDER_TRAITS_ENTRY "rpma_provider_traits"

struct rpma_provider_traits {
	/* private data a connect / an accept carries at most (the API's own limit is 255) */
	unsigned pdata_connect_max;
	unsigned pdata_accept_max;
	/* private data arrives padded with zeros to the size of the transport's field */
	bool pdata_padded;
	/*
	 * the side that disconnects first gets RPMA_CONN_CLOSED only once the
	 * other side disconnected too (rdma_cm); else at once
	 */
	bool close_waits_for_peer;
	/* connections are made over a plain TCP connection to addr:port (a mute TCP listener holds one) */
	bool plain_tcp_connect;
	/* the event of a connect toward a port nobody listens on */
	enum rpma_conn_event refused_event;
	/*
	 * an operation with a key the target does not know ends the connection
	 * (RPMA_CONN_LOST); else the queue pair goes to the error state
	 * without a connection event (the failed operation's completion first,
	 * later ones flushed in order with IBV_WC_WR_FLUSH_ERR)
	 */
	bool bad_key_breaks_conn;
	/*
	 * the target holds every remote access to a region's key, rights and
	 * bounds (else the peer reaches whatever the transport lets it: shm
	 * copies with process_vm_readv/writev, which no key limits)
	 */
	bool access_checked;
	/* rpma_flush(PERSISTENT) can make writes durable (else it is RPMA_E_NOSUPP) */
	bool persistent_flush;
	/* a device may report on-demand paging (else rpma_utils_ibv_context_is_odp_capable says 0) */
	bool odp_possible;
	/* rpma_mr_advise() reaches the transport (else it is RPMA_E_NOSUPP) */
	bool mr_advise;
	/*
	 * when the provider draws remote keys itself (offset-addressed regions):
	 * the smallest it draws, bit 31 left out (0: the transport chooses keys)
	 */
	uint32_t drawn_key_min;
	/* threads named "rpma-progress" the provider runs per peer */
	int progress_threads_per_peer;
	/* what the provider's log messages start with */
	const char *log_prefix;
	/*
	 * once the server has a connection request, the client's connect waits
	 * for the server's application to accept or reject it beyond the
	 * connection's timeout (else the timeout may bound the whole handshake)
	 */
	bool accept_waits_for_app;
	/*
	 * a peer killed inside the transport may wedge it: a later send to
	 * it, or the progress of an endpoint it was sending to, spins forever
	 * inside the transport, in the progress thread or the application's
	 * (shm: spin locks in the shared memory, held long on libfabric 1.17;
	 * HACKING.md); peerkill then takes a spinning progress thread in place
	 * of the end of the connection
	 */
	bool killed_peer_may_wedge;
	/*
	 * while the program busy-polls a connection's CQ, the progress thread
	 * is not woken by that CQ's completions (it looks every few ms at
	 * most); else it may drain the CQ on every completion (a libfabric CQ
	 * shared by several connections)
	 */
	bool polled_cq_quiets_progress;
};

/* the type of a module's RPMA_PROVIDER_TRAITS_ENTRY */
typedef void rpma_provider_traits_fn(struct rpma_provider_traits *traits);

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

/* the largest length of one data-path operation on the peer (ops->peer_max_msg_size) */
size_t rpma_peer_max_msg_size(const struct rpma_peer *peer);

/* a local region's registered range and usage */
void *rpma_mr_local_ptr(const struct rpma_mr_local *mr);
size_t rpma_mr_local_size(const struct rpma_mr_local *mr);
int rpma_mr_local_usage(const struct rpma_mr_local *mr);

#endif /* RPMA_PROVIDER_H */
