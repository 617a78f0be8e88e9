/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma.h -- the public interface of librpma
 *
 * librpma moves data to and from memory of a remote peer with one-sided
 * RDMA-style operations and makes it durable there.  This implementation is
 * source- and binary-compatible with the librpma 1.2 API and runs over more
 * than one transport ("provider"): verbs (rdma-core) and fabric (libfabric).
 * The provider is chosen with the RPMA_PROVIDER environment variable (see
 * librpma(7)).
 *
 * Conventions shared by every function below:
 * - 0 means success; a failure is one of the negative RPMA_E_* codes;
 * - an output argument is left untouched when the call fails;
 * - *_delete(&obj) and friends accept a pointer to NULL, and set the
 *   caller's pointer to NULL when they return (also on failure);
 * - every function has a manual page: man <function name>.
 */

#ifndef LIBRPMA_H
#define LIBRPMA_H 1

/*
 * Defined by this implementation's header only (upstream librpma's does not
 * define it): a program can tell at compile time which librpma.h it sees.
 */
#define LIBRPMA_PROVIDER_PLUGGABLE 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(RPMA_NO_DEPRECATION_WARNINGS)
#define RPMA_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define RPMA_DEPRECATED(msg)
#endif

/* historic flag, accepted by no function; kept for source compatibility */
#define RPMA_W_WAIT_FOR_COMPLETION (1)

/* error codes: every function returns 0 or one of these */
#define RPMA_E_UNKNOWN	       (-100000) /* an error the library could not classify */
#define RPMA_E_NOSUPP	       (-100001) /* the operation is not supported here */
#define RPMA_E_PROVIDER	       (-100002) /* the transport failed; see the log */
#define RPMA_E_NOMEM	       (-100003) /* memory could not be allocated */
#define RPMA_E_INVAL	       (-100004) /* an argument is not valid */
#define RPMA_E_NO_COMPLETION   (-100005) /* no completion is waiting */
#define RPMA_E_NO_EVENT	       (-100006) /* no connection event is waiting */
#define RPMA_E_AGAIN	       (-100007) /* a transient failure: retry */
#define RPMA_E_SHARED_CHANNEL  (-100008) /* the CQ uses a shared channel */
#define RPMA_E_NOT_SHARED_CHNL (-100009) /* the connection has no shared channel */

/* default timeout of address/route resolution and connection setup */
#define RPMA_DEFAULT_TIMEOUT_MS 1000

/* ---------------------------------------------------------------- devices */

/* what the address given to rpma_utils_get_ibv_context() means */
enum rpma_util_ibv_context_type {
	RPMA_UTIL_IBV_CONTEXT_LOCAL,  /* an address of this host */
	RPMA_UTIL_IBV_CONTEXT_REMOTE, /* an address of the remote peer */
};

/*
 * rpma_utils_get_ibv_context -- find the device that serves addr (a local
 * address to listen on, or a remote one to reach).  Under the verbs provider
 * this is the RDMA device's real context; under other providers it is an
 * opaque handle issued by the library, valid until the process exits, that
 * must only be passed on to rpma_peer_new() and
 * rpma_utils_ibv_context_is_odp_capable().
 */
int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
			       struct ibv_context **ibv_ctx_ptr);

/* rpma_utils_ibv_context_is_odp_capable -- does the device offer on-demand paging? */
int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);

/* ----------------------------------------------------- peer configuration */

struct rpma_peer_cfg;

/* rpma_peer_cfg_new -- a peer configuration; direct write to PMem is off */
int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);

/* rpma_peer_cfg_delete -- release a peer configuration */
int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);

/*
 * rpma_peer_cfg_set_direct_write_to_pmem -- declare whether data written
 * into this peer's memory by the network reaches the persistence domain
 * without passing through a volatile CPU cache
 */
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported);

/* rpma_peer_cfg_get_direct_write_to_pmem -- read the declaration back */
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported);

/* rpma_peer_cfg_get_descriptor -- serialise the configuration for the other side */
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);

/* rpma_peer_cfg_get_descriptor_size -- how many bytes the descriptor takes */
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size);

/* rpma_peer_cfg_from_descriptor -- rebuild a remote peer's configuration */
int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
				  struct rpma_peer_cfg **pcfg_ptr);

/* ------------------------------------------------------------------- peer */

struct rpma_peer;

/* rpma_peer_new -- open the transport on a device found with rpma_utils_get_ibv_context() */
int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);

/* rpma_peer_delete -- close a peer; every object made from it must be gone first */
int rpma_peer_delete(struct rpma_peer **peer_ptr);

/* --------------------------------------------------------- memory regions */

struct rpma_mr_local;
struct rpma_mr_remote;

/* how a registered region will be used (a bitmask for rpma_mr_reg()) */
#define RPMA_MR_USAGE_READ_SRC		    (1 << 0) /* the peer reads from it */
#define RPMA_MR_USAGE_READ_DST		    (1 << 1) /* local reads land in it */
#define RPMA_MR_USAGE_WRITE_SRC		    (1 << 2) /* local writes take data from it */
#define RPMA_MR_USAGE_WRITE_DST		    (1 << 3) /* the peer writes into it */
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY (1 << 4) /* the peer may flush it to visibility */
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT (1 << 5) /* the peer may flush it to persistence */
#define RPMA_MR_USAGE_SEND		    (1 << 6) /* messages are sent from it */
#define RPMA_MR_USAGE_RECV		    (1 << 7) /* messages are received into it */

/* rpma_mr_reg -- register size bytes at ptr for the given usage */
int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr);

/* rpma_mr_dereg -- undo a registration */
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);

/* rpma_mr_get_descriptor -- serialise a local region for the peer */
int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);

/* rpma_mr_remote_from_descriptor -- build a remote region from the peer's descriptor */
int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
				   struct rpma_mr_remote **mr_ptr);

/* rpma_mr_get_descriptor_size -- how many bytes the region's descriptor takes */
int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);

/* rpma_mr_get_ptr -- the start of the registered memory */
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);

/* rpma_mr_get_size -- the length of the registered memory */
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);

/* rpma_mr_remote_get_size -- the length the peer registered */
int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);

/*
 * rpma_mr_remote_get_flush_type -- which flush types the remote region
 * accepts, as RPMA_MR_USAGE_FLUSH_TYPE_* bits
 */
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type);

/* rpma_mr_remote_delete -- release a remote region object */
int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);

/*
 * rpma_mr_advise -- pass a prefetch/paging hint for part of a local region
 * to the device (ibv_advise_mr() advice and flags)
 */
int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);

/* --------------------------------------------------- connection settings */

struct rpma_conn_cfg;

/* rpma_conn_cfg_new -- connection settings with the defaults (see the man page) */
int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);

/* rpma_conn_cfg_delete -- release connection settings */
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);

/* rpma_conn_cfg_set_timeout -- time allowed for establishing a connection */
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);

/* rpma_conn_cfg_get_timeout -- read the timeout back */
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);

/* rpma_conn_cfg_set_cq_size -- entries of the main completion queue */
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);

/* rpma_conn_cfg_get_compl_channel -- do the CQ and receive CQ share one channel? */
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);

/* rpma_conn_cfg_set_compl_channel -- make the CQ and receive CQ share one channel */
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);

/* rpma_conn_cfg_get_cq_size -- read the main CQ size back */
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);

/* rpma_conn_cfg_set_rcq_size -- entries of a separate receive CQ (0: none) */
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);

/* rpma_conn_cfg_get_rcq_size -- read the receive CQ size back */
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);

/* rpma_conn_cfg_set_sq_size -- how many operations may be outstanding */
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);

/* rpma_conn_cfg_get_sq_size -- read the send queue size back */
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);

/* rpma_conn_cfg_set_rq_size -- how many receives may be posted at once */
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);

/* rpma_conn_cfg_get_rq_size -- read the receive queue size back */
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);

struct rpma_srq;

/* rpma_conn_cfg_set_srq -- take receives from a shared receive queue */
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);

/* rpma_conn_cfg_get_srq -- read the shared receive queue back */
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);

/* ------------------------------------------------------------ connections */

struct rpma_conn;

/* rpma_conn_get_event_fd -- a descriptor that becomes readable when an event waits */
int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);

/* what happened to a connection */
enum rpma_conn_event {
	RPMA_CONN_UNDEFINED = -1, /* no event (yet) */
	RPMA_CONN_ESTABLISHED,	  /* both sides are connected */
	RPMA_CONN_CLOSED,	  /* one side disconnected in an orderly way */
	RPMA_CONN_LOST,		  /* the connection broke */
	RPMA_CONN_REJECTED,	  /* the peer refused the connection */
	RPMA_CONN_UNREACHABLE	  /* the peer could not be reached */
};

/* rpma_conn_next_event -- take the next connection event (blocks unless the fd is non-blocking) */
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);

/* rpma_utils_conn_event_2str -- a readable name for an event */
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

/* bytes exchanged while a connection is set up */
struct rpma_conn_private_data {
	void *ptr;
	uint8_t len;
};

/* rpma_conn_get_private_data -- what the peer sent while connecting */
int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);

/* rpma_conn_apply_remote_peer_cfg -- adopt the peer's declared persistence abilities */
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg);

/* rpma_conn_get_qp_num -- a number identifying the connection's queue pair */
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);

struct rpma_cq;

/* rpma_conn_get_cq -- the connection's main completion queue */
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);

/* rpma_conn_get_rcq -- the separate receive CQ, or NULL when there is none */
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);

/* rpma_conn_disconnect -- start an orderly shutdown of the connection */
int rpma_conn_disconnect(struct rpma_conn *conn);

/* rpma_conn_delete -- release the connection and everything it owns */
int rpma_conn_delete(struct rpma_conn **conn_ptr);

/* ---------------------------------------------------- connection requests */

struct rpma_conn_req;

/* rpma_conn_req_new -- prepare an outgoing connection to addr:port */
int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		      const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);

/* rpma_conn_req_delete -- drop a request; an incoming one is rejected */
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);

/*
 * rpma_conn_req_connect -- connect (outgoing) or accept (incoming); the
 * request is consumed whatever the result
 */
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
			  const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/* rpma_conn_get_compl_fd -- the descriptor of the shared completion channel */
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);

/*
 * rpma_conn_wait -- wait on the shared completion channel and tell which
 * CQ has completions; flags is reserved and must be 0
 */
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);

/* rpma_conn_req_recv -- post a receive before the connection exists */
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
		       size_t len, const void *op_context);

/* -------------------------------------------------------------- endpoints */

struct rpma_ep;

/* rpma_ep_listen -- listen for incoming connections on addr:port */
int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		   struct rpma_ep **ep_ptr);

/* rpma_ep_shutdown -- stop listening and release the endpoint */
int rpma_ep_shutdown(struct rpma_ep **ep_ptr);

/* rpma_ep_get_fd -- a descriptor that becomes readable when a request waits */
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);

/* rpma_ep_next_conn_req -- take the next incoming connection request */
int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr);

/* rpma_conn_req_get_private_data -- what the connecting peer sent */
int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
				   struct rpma_conn_private_data *pdata);

/* -------------------------------------------------- shared receive queues */

struct rpma_srq_cfg;

/* rpma_srq_cfg_new -- shared receive queue settings with the defaults */
int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);

/* rpma_srq_cfg_delete -- release the settings */
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);

/* rpma_srq_cfg_set_rq_size -- how many receives the queue holds */
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);

/* rpma_srq_cfg_get_rq_size -- read the size back */
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);

/* rpma_srq_cfg_set_rcq_size -- entries of the queue's own receive CQ (0: none) */
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);

/* rpma_srq_cfg_get_rcq_size -- read the receive CQ size back */
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);

/* rpma_srq_new -- a receive queue that several connections can share */
int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);

/* rpma_srq_delete -- release a shared receive queue */
int rpma_srq_delete(struct rpma_srq **srq_ptr);

/* rpma_srq_recv -- post a receive buffer to the shared queue */
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context);

/* rpma_srq_get_rcq -- the shared queue's receive CQ, or NULL */
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);

/* ------------------------------------------------------------- data path */

/* when an operation produces a completion */
#define RPMA_F_COMPLETION_ON_ERROR (1 << 0)				 /* only if it fails */
#define RPMA_F_COMPLETION_ALWAYS   (1 << 1 | RPMA_F_COMPLETION_ON_ERROR) /* always */

/* rpma_read -- copy len bytes from the remote region into a local one */
int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context);

/* rpma_write -- copy len bytes from a local region into the remote one */
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context);

/* rpma_write_with_imm -- a write that also hands imm to the peer's receive */
int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context);

/* the remote offset of an atomic write must be a multiple of this */
#define RPMA_ATOMIC_WRITE_ALIGNMENT 8

/*
 * rpma_atomic_write -- write 8 bytes to the remote region in one piece,
 * after every earlier flush on the connection
 */
int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context);

/* how far rpma_flush() pushes the data */
enum rpma_flush_type {
	RPMA_FLUSH_TYPE_PERSISTENT, /* into the persistence domain */
	RPMA_FLUSH_TYPE_VISIBILITY, /* to where the peer's CPUs can see it */
};

/* rpma_flush -- make earlier writes to a remote range visible or persistent */
int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context);

/* rpma_send -- send a message to the peer's posted receive */
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context);

/* rpma_send_with_imm -- send a message carrying a 32-bit immediate value */
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context);

/* rpma_recv -- post a buffer for one incoming message */
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context);

/* ------------------------------------------------------ completion queues */

/* rpma_cq_get_fd -- a descriptor that becomes readable when the CQ is signalled */
int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);

/* rpma_cq_wait -- block until the CQ is signalled, then re-arm it */
int rpma_cq_wait(struct rpma_cq *cq);

/* rpma_cq_get_wc -- take up to num_entries completions, as struct ibv_wc */
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);

/* ----------------------------------------------------------------- errors */

/* rpma_err_2str -- a readable text for an RPMA_E_* code */
const char *rpma_err_2str(int ret);

/* ---------------------------------------------------------------- logging */

/* how important a message is */
enum rpma_log_level {
	RPMA_LOG_DISABLED = -1, /* as a threshold: nothing passes */
	RPMA_LOG_LEVEL_FATAL,	/* the library cannot go on */
	RPMA_LOG_LEVEL_ERROR,	/* an operation failed */
	RPMA_LOG_LEVEL_WARNING, /* something the caller may want to handle */
	RPMA_LOG_LEVEL_NOTICE,	/* milestones: a connection set up or closed */
	RPMA_LOG_LEVEL_INFO,	/* per-operation messages */
	RPMA_LOG_LEVEL_DEBUG,	/* details for developers */
};

/* which threshold rpma_log_set_threshold() changes */
enum rpma_log_threshold {
	RPMA_LOG_THRESHOLD,	/* messages above it are not logged at all */
	RPMA_LOG_THRESHOLD_AUX, /* the default function copies messages up to it to stderr */
	RPMA_LOG_THRESHOLD_MAX
};

/* rpma_log_set_threshold -- change one of the thresholds */
int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);

/* rpma_log_get_threshold -- read one of the thresholds */
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);

/* a logging function that replaces the default one (syslog + stderr) */
typedef void rpma_log_function(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

/* rpma_log_set_function -- install a logging function (NULL: the default) */
int rpma_log_set_function(rpma_log_function *log_function);

/* ------------------------------------------- 0.10-era calls (deprecated) */

/* what a completion reports in the 0.10 API */
enum rpma_op {
	RPMA_OP_READ,
	RPMA_OP_WRITE,
	RPMA_OP_FLUSH,
	RPMA_OP_SEND,
	RPMA_OP_RECV,
	RPMA_OP_RECV_RDMA_WITH_IMM,
};

/* a completion independent of any transport's completion format */
struct rpma_completion {
	void *op_context;	      /* the op_context the operation was posted with */
	enum rpma_op op;	      /* which operation completed */
	uint32_t byte_len;	      /* bytes received (receives only) */
	enum ibv_wc_status op_status; /* IBV_WC_SUCCESS or why it failed */
	unsigned flags;		      /* IBV_WC_WITH_IMM when imm is valid */
	uint32_t imm;		      /* immediate data, host byte order */
};

/* rpma_cq_get_completion -- take one completion in the neutral form; use rpma_cq_get_wc() */
int rpma_cq_get_completion(struct rpma_cq *cq, struct rpma_completion *cmpl)
	RPMA_DEPRECATED("use rpma_cq_get_wc()");

/* rpma_write_atomic -- 8-byte atomic write from a local region; use rpma_atomic_write() */
int rpma_write_atomic(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const struct rpma_mr_local *src, size_t src_offset, int flags,
		      const void *op_context) RPMA_DEPRECATED("use rpma_atomic_write()");

/* rpma_conn_completion_wait -- wait on the main CQ; use rpma_cq_wait() */
int rpma_conn_completion_wait(struct rpma_conn *conn)
	RPMA_DEPRECATED("use rpma_conn_get_cq() and rpma_cq_wait()");

/* rpma_conn_completion_get -- take one completion of the main CQ; use rpma_cq_get_wc() */
int rpma_conn_completion_get(struct rpma_conn *conn, struct rpma_completion *cmpl)
	RPMA_DEPRECATED("use rpma_conn_get_cq() and rpma_cq_get_wc()");

/* rpma_conn_get_completion_fd -- the main CQ's descriptor; use rpma_cq_get_fd() */
int rpma_conn_get_completion_fd(const struct rpma_conn *conn, int *fd)
	RPMA_DEPRECATED("use rpma_conn_get_cq() and rpma_cq_get_fd()");

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
