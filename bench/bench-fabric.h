/* SPDX-License-Identifier: BSD-3-Clause */
/* bench-fabric.h -- what the two raw libfabric baselines (FI_EP_MSG, FI_EP_RDM) share */

/*
 * baseline-fabric.c (connected endpoints) and baseline-fabric-rdm.c
 * (reliable-datagram endpoints) differ in how they find their peer; the
 * rest is the same: the connection's buffer and its registration, the
 * endpoint's queues, the region a server hands out, the server's progress
 * thread, the completion entries the engine gets and BENCH_FI_WRITE_LEVEL.
 * What runs once per operation is static inline here, so that the
 * baselines make no more calls per operation than they did on their own.
 */

#ifndef BENCH_FABRIC_H
#define BENCH_FABRIC_H

#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#define BFAB_VERSION	 FI_VERSION(1, 10)
#define BFAB_REGION_SIZE 28 /* u64 addr | u64 key | u64 len | u32 flags */
#define BFAB_REGION_VIRT 1u /* remote addresses are virtual addresses, not offsets */

/* extra flags of every write: BENCH_FI_WRITE_LEVEL=none|delivery|commit */
extern uint64_t bfab_write_level;

/* what both kinds of connection hold (the first member of theirs) */
struct bfab_conn {
	struct bench_conn base; /* first: the engine's view */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_mr *mr; /* the whole local buffer */
	void *mr_desc;
	char *buf; /* data | 2 send slots | receive slots | 8-byte flush target */
	size_t buf_len;
	char *data;
	char *flush_dst;
	/* the remote region */
	uint64_t raddr, rkey, rlen;
	bool block;
	bool server;
	/* the server's progress thread */
	struct fid_cq *progress_cq;
	pthread_t progress;
	bool progress_running;
	atomic_bool stop;
	int wait_fd;
	/*
	 * the main thread's non-blocking reads of its CQ (written by it
	 * alone): while they go on, they progress the provider and the
	 * progress thread stands aside (bfab_progress_thread)
	 */
	atomic_uint polls;
};

/* bfab_err -- log a failed libfabric call */
void bfab_err(const char *call, ssize_t ret);

/*
 * bfab_getinfo -- fi_getinfo(cfg->addr, cfg->port, flags) with hints, which
 * it frees (NULL: out of memory); NULL (said in the log) when it fails
 */
struct fi_info *bfab_getinfo(const struct bench_cfg *cfg, struct fi_info *hints, uint64_t flags);

/* bfab_hints -- fi_allocinfo() with what every fi_getinfo() of a baseline asks */
struct fi_info *bfab_hints(enum fi_ep_type type, uint64_t mode, uint64_t mr_mode,
			   const char *default_prov);

/*
 * bfab_env -- take BENCH_FI_WRITE_LEVEL (and start the description with
 * ep_tag); -1 (said on stderr) when its value is none of ours
 */
int bfab_env(const char *tool, const char *ep_tag);

/* bfab_describe_fabric -- the description once the provider is known */
void bfab_describe_fabric(const struct fi_info *info);

/* bfab_describe -- the header description (bench_transport.describe) */
const char *bfab_describe(void);

/* bfab_cq_open -- a CQ for window operations and nrecv receives, on an fd where there is one */
int bfab_cq_open(struct fid_domain *domain, unsigned window, unsigned nrecv, struct fid_cq **cq);

/*
 * bfab_ep_open -- an endpoint bound to bind_first (its EQ or AV) and to cq
 * (selective completion on the transmit side), enabled
 */
int bfab_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid *bind_first,
		 struct fid_cq *cq, unsigned window, unsigned nrecv, struct fid_ep **ep);

/* bfab_mr_reg -- register buf for everything; bind it where FI_MR_ENDPOINT asks */
int bfab_mr_reg(struct fid_domain *domain, const struct fi_info *info, struct fid_ep *ep, void *buf,
		size_t len, uint64_t key, struct fid_mr **mr, void **desc);

/* bfab_buf_setup -- the connection's buffer, laid out for the engine and registered on ep */
int bfab_buf_setup(struct bfab_conn *c, const struct fi_info *info, struct fid_ep *ep,
		   size_t slot_size, unsigned nrecv);

/* bfab_region_put -- the server's region (the data area) as BFAB_REGION_SIZE bytes */
void bfab_region_put(const struct bfab_conn *c, const struct fi_info *info, uint8_t *p);

/* bfab_region_get -- take the server's region from what bfab_region_put wrote */
void bfab_region_get(struct bfab_conn *c, const uint8_t *p);

/*
 * bfab_progress_start -- the server's progress thread on cq; without an fd
 * to wait on it fails when need_fd, else it looks every 10 ms
 */
int bfab_progress_start(struct bfab_conn *c, struct fid_cq *cq, bool need_fd);

/* bfab_progress_stop -- stop the progress thread, if it runs */
void bfab_progress_stop(struct bfab_conn *c);

/* bfab_cq_readerr -- take the error entry of a CQ and log it; -1 when there is none */
int bfab_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *err);

/* little-endian fields of the messages the baselines exchange */
void bfab_put_u32(uint8_t *p, uint32_t v);
void bfab_put_u64(uint8_t *p, uint64_t v);
uint32_t bfab_get_u32(const uint8_t *p);
uint64_t bfab_get_u64(const uint8_t *p);

/* ---------------------------------------------- per operation: inline */

/* bfab_wflags -- the flags of a write (BENCH_FI_WRITE_LEVEL, a completion if signaled) */
static inline uint64_t bfab_wflags(bool signaled)
{
	return bfab_write_level | (signaled ? FI_COMPLETION : 0);
}

/*
 * bfab_cq_take -- read up to max (at most 32) entries of c's cq; block: wait
 * up to timeout ms; a non-blocking read is counted (c->polls)
 */
static inline ssize_t bfab_cq_take(struct bfab_conn *c, struct fid_cq *cq,
				   struct fi_cq_data_entry *e, int max, bool block, int timeout)
{
	if (max > 32)
		max = 32;
	if (block)
		return fi_cq_sread(cq, e, (size_t)max, NULL, timeout);
	atomic_store_explicit(&c->polls, atomic_load_explicit(&c->polls, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return fi_cq_read(cq, e, (size_t)max);
}

/* bfab_wc_set -- the engine's view of a successful completion entry */
static inline void bfab_wc_set(struct bench_wc *wc, const struct fi_cq_data_entry *e, uint64_t ctx)
{
	*wc = (struct bench_wc){
		.ctx = ctx,
		.len = (uint32_t)e->len,
		.ok = true,
	};
	if (e->flags & FI_REMOTE_CQ_DATA) {
		wc->has_imm = true;
		wc->imm = (uint32_t)e->data;
		if (!(e->flags & FI_RECV))
			wc->ctx = 0; /* no receive was consumed */
	}
}

/*
 * bfab_post_rma_fn -- a transport's one fi_writemsg (write) / fi_readmsg of
 * len bytes at local to or from the start of the remote region
 */
typedef int bfab_post_rma_fn(struct bfab_conn *c, bool write, char *local, size_t len,
			     uint64_t flags, uint64_t data, uint64_t ctx);

/*
 * The engine's RMA operations as both baselines make them; a transport's
 * bench_xops functions call these with its own post_rma (a constant, so
 * the call is direct once inlined).
 */

/* bfab_write -- write len bytes to remote offset 0 */
static inline int bfab_write(struct bench_conn *c, bfab_post_rma_fn *post_rma, size_t len,
			     bool signaled, uint64_t ctx)
{
	struct bfab_conn *f = (struct bfab_conn *)c;

	return post_rma(f, true, f->data, len, bfab_wflags(signaled), 0, ctx);
}

/* bfab_read -- read len bytes from remote offset 0 */
static inline int bfab_read(struct bench_conn *c, bfab_post_rma_fn *post_rma, size_t len,
			    bool signaled, uint64_t ctx)
{
	struct bfab_conn *f = (struct bfab_conn *)c;

	return post_rma(f, false, f->data, len, signaled ? FI_COMPLETION : 0, 0, ctx);
}

/* bfab_flush -- an 8-byte read behind the writes makes them visible at the target */
static inline int bfab_flush(struct bench_conn *c, bfab_post_rma_fn *post_rma, uint64_t ctx)
{
	struct bfab_conn *f = (struct bfab_conn *)c;

	return post_rma(f, false, f->flush_dst, 8, FI_COMPLETION, 0, ctx);
}

/* bfab_atomic_write -- an 8-byte write (the providers here have no FI_ATOMIC) */
static inline int bfab_atomic_write(struct bench_conn *c, bfab_post_rma_fn *post_rma, bool signaled,
				    uint64_t ctx)
{
	struct bfab_conn *f = (struct bfab_conn *)c;

	return post_rma(f, true, f->data, 8, bfab_wflags(signaled), 0, ctx);
}

/* bfab_write_imm -- a write carrying remote CQ data */
static inline int bfab_write_imm(struct bench_conn *c, bfab_post_rma_fn *post_rma, size_t len,
				 uint32_t imm, bool signaled, uint64_t ctx)
{
	struct bfab_conn *f = (struct bfab_conn *)c;

	return post_rma(f, true, f->data, len, bfab_wflags(signaled) | FI_REMOTE_CQ_DATA, imm, ctx);
}

#endif /* BENCH_FABRIC_H */
