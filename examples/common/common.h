/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- helpers shared by the example programs
 *
 * Everything here is written against the public API (<librpma.h>) only, so
 * the examples build against any librpma 1.2 installation.  The helpers
 * return 0, a negative RPMA_E_* code from the library, or EX_E_FAIL when the
 * example itself found something wrong (the message is printed already).
 */

#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* an error found by the example itself (never an RPMA_E_* value) */
#define EX_E_FAIL (-1)

/*
 * How long a client waits for its connection (rpma_conn_cfg_set_timeout).
 * Over the fabric provider the timeout covers the whole handshake, the
 * server's accept included, and a busy server that accepts its clients one
 * after the other can take longer than the default second.
 */
#define EX_CONNECT_TIMEOUT_MS 5000

/* the largest private data every transport carries (rdma_cm over TCP: 56) */
#define EX_PDATA_MAX 56

/* ex_fail -- print "<prog>: <what>: <reason>" for an error code */
void ex_fail(const char *what, int ret);

/* ex_msg -- print "<prog>: <message>" to stderr (printf-like) */
void ex_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ex_set_prog -- the name printed in front of every message */
void ex_set_prog(const char *prog);

/*
 * EX_TRY -- run an API call; on failure print it and jump to "out" with the
 * code in "ret" (every example has an int ret and one cleanup label "out")
 */
#define EX_TRY(call)                         \
	do {                                 \
		ret = (call);                \
		if (ret) {                   \
			ex_fail(#call, ret); \
			goto out;            \
		}                            \
	} while (0)

/* EX_CHECK -- run a helper that prints its own message; jump to "out" on failure */
#define EX_CHECK(call)            \
	do {                      \
		ret = (call);     \
		if (ret)          \
			goto out; \
	} while (0)

/* ex_usage -- check argc against [min, max] and print the usage line when it is wrong */
int ex_usage(int argc, int min, int max, const char *usage);

/* ex_parse_count -- a positive decimal number from a command line argument */
int ex_parse_count(const char *arg, const char *name, unsigned *count);

/* ------------------------------------------------------------ connections */

/* ex_peer_open -- find the device serving addr (local for a server) and open a peer on it */
int ex_peer_open(const char *addr, bool server, struct rpma_peer **peer_ptr);

/* ex_listen -- listen on addr:port and announce it on stdout ("listening on ...") */
int ex_listen(struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr);

/*
 * ex_accept -- take the next connection request, optionally post one receive
 * (recv_mr != NULL) before accepting, accept with pdata (may be NULL) and
 * wait until the connection is established
 */
int ex_accept(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_mr_local *recv_mr,
	      size_t recv_offset, size_t recv_len, const struct rpma_conn_private_data *pdata,
	      struct rpma_conn **conn_ptr);

/* ex_connect -- the client's counterpart of ex_accept() */
int ex_connect(struct rpma_peer *peer, const char *addr, const char *port,
	       const struct rpma_conn_cfg *cfg, struct rpma_mr_local *recv_mr, size_t recv_offset,
	       size_t recv_len, const struct rpma_conn_private_data *pdata,
	       struct rpma_conn **conn_ptr);

/* ex_wait_event -- take the next connection event and insist that it is the expected one */
int ex_wait_event(struct rpma_conn *conn, enum rpma_conn_event expected);

/* ex_await_close -- wait for the peer to disconnect, then disconnect and delete */
int ex_await_close(struct rpma_conn **conn_ptr);

/* ex_close -- disconnect, wait until the connection is closed and delete it */
int ex_close(struct rpma_conn **conn_ptr);

/* ------------------------------------------------------------ completions */

/* ex_wait_wc -- block until one completion is available on cq and take it */
int ex_wait_wc(struct rpma_cq *cq, struct ibv_wc *wc);

/*
 * ex_expect_wc -- take one completion and check that it succeeded, has the
 * expected opcode and, when op_context is not NULL, the expected context
 */
int ex_expect_wc(struct rpma_cq *cq, int opcode, const void *op_context, struct ibv_wc *wc);

/* ex_check_wc -- the checks of ex_expect_wc() on a completion taken already */
int ex_check_wc(const struct ibv_wc *wc, int opcode, const void *op_context);

/*
 * for ex_expect_wc(): accept any opcode.  Used for rpma_flush(), whose
 * completion is the opcode of whatever implements it (a read, or a native flush).
 */
#define EX_ANY_OPCODE (-1)

/*
 * ex_flush -- rpma_flush() of the type in *type; when a persistent flush is
 * refused with RPMA_E_NOSUPP (the transport cannot make remote writes
 * persistent, e.g. libfabric providers without FI_COMMIT_COMPLETE), say so
 * once, switch *type to RPMA_FLUSH_TYPE_VISIBILITY and flush again
 */
int ex_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t offset, size_t len,
	     enum rpma_flush_type *type, int flags, const void *op_context);

/*
 * ex_wait_send -- wait for the completion of a send on cq.  The peer may
 * answer so fast that its next message's receive completion arrives first:
 * that one is kept in *early (and *have_early set) for the caller to process
 * next; a second one, or any other completion, is an error.
 */
int ex_wait_send(struct rpma_cq *cq, struct ibv_wc *early, bool *have_early);

/* ex_opcode_str -- a readable name of a completion opcode */
const char *ex_opcode_str(enum ibv_wc_opcode opcode);

/* ------------------------------------------------ descriptors in pdata */

/*
 * what a side sends as private data: a region descriptor and optionally a
 * peer configuration descriptor, back to back, each with its size in front
 */
struct ex_pdata {
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[EX_PDATA_MAX - 2];
};

/* ex_pdata_pack -- serialise mr and pcfg (may be NULL) into pd; out describes the used bytes */
int ex_pdata_pack(const struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
		  struct ex_pdata *pd, struct rpma_conn_private_data *out);

/*
 * ex_pdata_unpack -- rebuild the remote region (and the peer configuration
 * when pcfg_ptr is not NULL; it is NULL when none was sent) from private data
 */
int ex_pdata_unpack(const struct rpma_conn_private_data *in, struct rpma_mr_remote **mr_ptr,
		    struct rpma_peer_cfg **pcfg_ptr);

/* ------------------------------------------------------------ test data */

/* ex_fill -- a deterministic byte pattern derived from seed */
void ex_fill(void *buf, size_t len, uint64_t seed);

/* ex_verify -- does buf hold ex_fill(len, seed)?  Prints the first difference if not */
int ex_verify(const void *buf, size_t len, uint64_t seed, const char *what);

/* ------------------------------------------------------------ memory */

/* where an example's region lives */
enum ex_mem_kind {
	EX_MEM_DRAM,  /* anonymous memory: nothing to persist */
	EX_MEM_FILE,  /* a file mapped with mmap(MAP_SHARED): persisted with msync() */
	EX_MEM_PMEM2, /* a file mapped with libpmem2: persisted with its persist function */
};

struct ex_mem {
	char *ptr;
	size_t size;
	enum ex_mem_kind kind;
	bool is_pmem;  /* stores become persistent without msync() (real PMem, or forced) */
	void *handle;  /* the libpmem2 mapping */
	void *persist; /* the libpmem2 persist function */
};

/*
 * ex_mem_open -- size bytes of DRAM (path == NULL) or of the file at path
 * (created and extended as needed; existing contents are kept), page aligned
 */
int ex_mem_open(const char *path, size_t size, struct ex_mem *mem);

/* ex_mem_persist -- make [offset, offset + len) of the region persistent */
int ex_mem_persist(struct ex_mem *mem, size_t offset, size_t len);

/* ex_mem_close -- unmap or free the region (safe on a zeroed or closed ex_mem) */
void ex_mem_close(struct ex_mem *mem);

/* ex_mem_kind_str -- a readable name of where the region lives */
const char *ex_mem_kind_str(const struct ex_mem *mem);

/*
 * ex_direct_write_to_pmem -- may a server backed by mem promise direct
 * write to PMem?  Yes for real PMem; RPMA_EXAMPLE_DW2PMEM=1 (or 0) in the
 * environment overrides it, which is how the tests exercise both flush types
 * on machines without PMem (the promise is then the operator's, as it always
 * is: the library cannot know whether the target caches inbound writes).
 */
bool ex_direct_write_to_pmem(const struct ex_mem *mem);

#endif /* EXAMPLES_COMMON_H */
