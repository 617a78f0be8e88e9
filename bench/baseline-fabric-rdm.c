/* SPDX-License-Identifier: BSD-3-Clause */
/* baseline-fabric-rdm.c -- the benchmark over raw libfabric FI_EP_RDM (shm, tcp;ofi_rxm) */

/*
 * The same engine as rpma-bench (bench.c) and the same transport as
 * baseline-fabric.c, over a reliable-datagram endpoint instead of a
 * connected one: fi_writemsg / fi_readmsg / fi_sendmsg / fi_recvmsg to the
 * peer's fi_addr_t (one AV per endpoint), selective completion on the
 * transmit side, a flush as an 8-byte read behind the writes, an "atomic"
 * write as an 8-byte write, a write with immediate as FI_REMOTE_CQ_DATA.
 * The provider is FI_PROVIDER (default "tcp;ofi_rxm"; "shm" works too).
 *
 * Connection setup without connections: the server opens its endpoint on
 * fi_getinfo(addr, port, FI_SOURCE) (rxm: an FI_SOCKADDR_IN it listens on;
 * shm: the FI_ADDR_STR name "fi_ns://ADDR:PORT") and posts a receive for a
 * hello.  The client inserts fi_getinfo(addr, port)'s dest_addr into its
 * AV and sends the hello: a magic, the engine's hello bytes and its own
 * endpoint name (fi_getname).  The server inserts that name and answers
 * with its region (address, key, length) like the MSG baseline's private
 * data.  Only one client at a time; the server's endpoint lives from the
 * hello to the goodbye (with --loop it is opened again for the next one).
 *
 * Mode bits and mr_mode are handled generally: FI_CONTEXT / FI_CONTEXT2 get
 * a struct fi_context2 per operation, FI_MR_LOCAL descriptors,
 * FI_MR_VIRT_ADDR / FI_MR_PROV_KEY the region's address and key as
 * registered, FI_MR_ENDPOINT bind + enable, FI_RX_CQ_DATA a receive per
 * write with immediate (the server keeps them posted anyway).
 */

#include "bench-fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define RDM_PROV      "tcp;ofi_rxm"
#define HELLO_MAGIC   0x52444d31u		  /* "RDM1": the transport's hello */
#define NAME_MAX_LEN  256			  /* an endpoint name (fi_getname) */
#define CTL_LEN	      512			  /* a control message (hello, reply) */
#define CTL_HDR	      (8 + BENCH_HELLO_SIZE)	  /* magic, name length, the engine's hello */
#define TX_CTX	      (4 * BENCH_MAX_WINDOW + 16) /* transmit contexts in the ring */
#define SETUP_MS      30000			  /* a hello or its answer */
#define EAGAIN_MS     10000			  /* one post that keeps getting EAGAIN */
#define BYE_MS	      2000			  /* the transport's own goodbye */
#define CTL_CTX(slot) BENCH_CTX(0x7f, (slot))	  /* the transport's own messages */

/* BENCH_RDM_CONTEXT=1: a struct fi_context2 with every operation, asked for or not */
static bool rdm_force_ctx;

/* how long a post may keep getting EAGAIN */
static int rdm_eagain_ms = EAGAIN_MS;

/* an operation context where the provider asks for one (FI_CONTEXT, FI_CONTEXT2) */
struct rdm_ctx {
	struct fi_context2 fctx; /* first: the provider's scratch space */
	uint64_t ctx;		 /* the engine's context */
};

/* an endpoint with its AV, CQ and the control buffer (hello / reply) */
struct rdm_ep {
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *ctl_mr;
	void *ctl_desc;
	char *ctl; /* CTL_LEN to receive | CTL_LEN to send */
	struct rdm_ctx ctl_ctx[2];
	bool ctl_recv_posted;
};

/* a connection: the shared part (fabric and domain owned only by a client) and the RDM part */
struct rdm_conn {
	struct bfab_conn f;   /* first: its first is the engine's view */
	struct fi_info *info; /* owned only by a client */
	struct rdm_ep *e;     /* the client's own or the server's (borrowed) */
	struct rdm_ep own;    /* a client's endpoint */
	fi_addr_t peer;
	bool peer_inserted;
	bool need_ctx; /* FI_CONTEXT or FI_CONTEXT2 */
	bool bye_sent; /* the engine's goodbye went out */
	struct rdm_ctx *tx_ctx;
	unsigned tx_next;
	struct rdm_ctx *rx_ctx; /* one per receive slot */
};

struct rdm_listener {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct rdm_ep e;
	bool open;
	const struct bench_cfg *cfg;
};

/* now_ms -- a monotonic clock in milliseconds */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* rdm_hints -- the hints every fi_getinfo() of ours uses */
static struct fi_info *rdm_hints(void)
{
	/* the modes this program copes with; FI_BUFFERED_RECV (rxm) is not one */
	return bfab_hints(FI_EP_RDM, FI_CONTEXT | FI_CONTEXT2 | FI_RX_CQ_DATA,
			  FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				  FI_MR_ENDPOINT,
			  RDM_PROV);
}

/* rdm_need_ctx -- operations carry a struct fi_context2 (FI_CONTEXT, FI_CONTEXT2) */
static bool rdm_need_ctx(const struct fi_info *info)
{
	return rdm_force_ctx || (info->mode & (FI_CONTEXT | FI_CONTEXT2)) != 0;
}

/* rdm_op_ctx -- the context to pass with an operation */
static void *rdm_op_ctx(struct rdm_conn *fc, uint64_t ctx)
{
	struct rdm_ctx *x;

	if (!fc->need_ctx)
		return (void *)(uintptr_t)ctx;
	x = &fc->tx_ctx[fc->tx_next];
	fc->tx_next = (fc->tx_next + 1) % TX_CTX;
	x->ctx = ctx;
	return x;
}

/* rdm_ctx_of -- the engine's context of a completion */
static uint64_t rdm_ctx_of(struct rdm_conn *fc, void *op_context)
{
	if (!fc->need_ctx)
		return (uint64_t)(uintptr_t)op_context;
	return op_context ? ((struct rdm_ctx *)op_context)->ctx : 0;
}

/*
 * rdm_again -- a post said EAGAIN: drive progress; false (and a log line)
 * when it has said so for EAGAIN_MS (nobody at the address, or the peer
 * stopped taking messages)
 */
static bool rdm_again(struct fid_cq *cq, const char *call, unsigned *tries, uint64_t *t0)
{
	fi_cq_read(cq, NULL, 0); /* make room: progress */
	if ((++*tries & 1023) != 0)
		return true;
	if (*t0 == 0) {
		*t0 = now_ms();
		return true;
	}
	if (now_ms() - *t0 < (uint64_t)rdm_eagain_ms)
		return true;
	bench_log("%s: still EAGAIN after %d ms: is the peer there?", call, rdm_eagain_ms);
	return false;
}

/* rdm_post_ret -- map a post's failure: unsupported flags or ops are BENCH_E_NOSUPP */
static int rdm_post_ret(const char *call, ssize_t ret)
{
	bfab_err(call, ret);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_EBADFLAGS)
		return BENCH_E_NOSUPP;
	return BENCH_E_FAIL;
}

/* ------------------------------------------------------------- data path */

/* rdm_post_rma -- one fi_writemsg / fi_readmsg to the peer */
static int rdm_post_rma(struct bfab_conn *c, bool write, char *local, size_t len, uint64_t flags,
			uint64_t data, uint64_t ctx)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;
	struct iovec iov = {.iov_base = local, .iov_len = len};
	struct fi_rma_iov rma = {.addr = fc->f.raddr, .len = len, .key = fc->f.rkey};
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &fc->f.mr_desc,
		.iov_count = 1,
		.addr = fc->peer,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = rdm_op_ctx(fc, ctx),
		.data = data,
	};
	unsigned tries = 0;
	uint64_t t0 = 0;
	ssize_t ret;

	if (len > fc->f.rlen) {
		bench_log("%zu B does not fit the remote region (%" PRIu64 " B)", len, fc->f.rlen);
		return BENCH_E_FAIL;
	}
	do {
		ret = write ? fi_writemsg(fc->e->ep, &msg, flags)
			    : fi_readmsg(fc->e->ep, &msg, flags);
	} while (ret == -FI_EAGAIN &&
		 rdm_again(fc->e->cq, write ? "fi_writemsg" : "fi_readmsg", &tries, &t0));
	if (ret)
		return rdm_post_ret(write ? "fi_writemsg" : "fi_readmsg", ret);
	return 0;
}

/* rdm_write -- write len bytes to remote offset 0 */
static int rdm_write(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	return bfab_write(c, rdm_post_rma, len, signaled, ctx);
}

/* rdm_read -- read len bytes from remote offset 0 */
static int rdm_read(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	return bfab_read(c, rdm_post_rma, len, signaled, ctx);
}

/* rdm_flush -- an 8-byte read behind the writes */
static int rdm_flush(struct bench_conn *c, size_t len, bool persistent, uint64_t ctx)
{
	return bfab_flush(c, rdm_post_rma, ctx);
}

/* rdm_atomic_write -- an 8-byte write */
static int rdm_atomic_write(struct bench_conn *c, bool signaled, uint64_t ctx)
{
	return bfab_atomic_write(c, rdm_post_rma, signaled, ctx);
}

/* rdm_write_imm -- a write carrying remote CQ data */
static int rdm_write_imm(struct bench_conn *c, size_t len, uint32_t imm, bool signaled,
			 uint64_t ctx)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;

	if (fc->info && fc->info->domain_attr->cq_data_size < sizeof(imm))
		return BENCH_E_NOSUPP;
	return bfab_write_imm(c, rdm_post_rma, len, imm, signaled, ctx);
}

/* rdm_post_msg -- one fi_sendmsg (send) to addr, or fi_recvmsg from addr, of len bytes at buf */
static int rdm_post_msg(struct rdm_ep *e, bool send, fi_addr_t addr, void *buf, void *desc,
			size_t len, uint64_t flags, void *context)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = addr,
		.context = context,
	};
	const char *call = send ? "fi_sendmsg" : "fi_recvmsg";
	unsigned tries = 0;
	uint64_t t0 = 0;
	ssize_t ret;

	do {
		ret = send ? fi_sendmsg(e->ep, &msg, flags) : fi_recvmsg(e->ep, &msg, flags);
	} while (ret == -FI_EAGAIN && rdm_again(e->cq, call, &tries, &t0));
	if (ret)
		return rdm_post_ret(call, ret);
	return 0;
}

/* rdm_send -- send len bytes from a send slot */
static int rdm_send(struct bench_conn *c, unsigned slot, size_t len, bool signaled, uint64_t ctx)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;
	char *buf = c->sbuf + (size_t)slot * c->slot_size;
	uint32_t flag;

	if (!fc->f.server) {
		memcpy(&flag, buf, sizeof(flag));
		if (flag == BENCH_FLAG_BYE)
			fc->bye_sent = true;
	}
	return rdm_post_msg(fc->e, true, fc->peer, buf, fc->f.mr_desc, len,
			    signaled ? FI_COMPLETION : 0, rdm_op_ctx(fc, ctx));
}

/* rdm_recv -- post a receive into a receive slot */
static int rdm_recv(struct bench_conn *c, unsigned slot, uint64_t ctx)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;
	void *context = (void *)(uintptr_t)ctx;

	if (fc->need_ctx) {
		fc->rx_ctx[slot].ctx = ctx;
		context = &fc->rx_ctx[slot];
	}
	return rdm_post_msg(fc->e, false, FI_ADDR_UNSPEC, c->rbuf + (size_t)slot * c->slot_size,
			    fc->f.mr_desc, c->slot_size, 0, context);
}

/* rdm_poll -- read completions; an error entry is returned as a failed bench_wc */
static int rdm_poll(struct bench_conn *c, struct bench_wc *wc, int max, int *got, bool block)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;
	struct fi_cq_data_entry e[32];
	ssize_t n;

	*got = 0;
	n = bfab_cq_take(&fc->f, fc->e->cq, e, max, block, fc->f.server ? 1000 : -1);
	/*
	 * No connection, no event when the client goes away: the server
	 * learns the end from the goodbye (the client's transport sends one
	 * even when the engine failed before its own).
	 */
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};

		if (bfab_cq_readerr(fc->e->cq, &err))
			return BENCH_E_FAIL;
		wc[0] = (struct bench_wc){
			.ctx = rdm_ctx_of(fc, err.op_context), .ok = false, .status = err.err};
		*got = 1;
		return 0;
	}
	if (n < 0) {
		bfab_err(block ? "fi_cq_sread" : "fi_cq_read", n);
		return BENCH_E_FAIL;
	}
	for (ssize_t i = 0; i < n; i++)
		bfab_wc_set(&wc[i], &e[i], rdm_ctx_of(fc, e[i].op_context));
	*got = (int)n;
	return 0;
}

static const struct bench_xops rdm_xops = {
	.write = rdm_write,
	.read = rdm_read,
	.flush = rdm_flush,
	.atomic_write = rdm_atomic_write,
	.write_imm = rdm_write_imm,
	.send = rdm_send,
	.recv = rdm_recv,
	.poll = rdm_poll,
};

/* ------------------------------------------------------ connection setup */

/* rdm_ep_close -- close an endpoint and what it holds (everything may be half open) */
static void rdm_ep_close(struct rdm_ep *e)
{
	if (e->ep)
		fi_close(&e->ep->fid);
	if (e->ctl_mr)
		fi_close(&e->ctl_mr->fid);
	if (e->cq)
		fi_close(&e->cq->fid);
	if (e->av)
		fi_close(&e->av->fid);
	free(e->ctl);
	memset(e, 0, sizeof(*e));
}

/*
 * rdm_ep_open -- AV, CQ, endpoint (on info's src_addr, if any) and the
 * control buffer with its receive posted; a window bounds the queues
 */
static int rdm_ep_open(struct rdm_ep *e, struct fid_domain *domain, struct fi_info *info,
		       unsigned window)
{
	struct fi_av_attr av_attr = {.type = FI_AV_UNSPEC, .count = 4};
	unsigned nrecv = BENCH_SERVER_RECVS(window);
	int ret;

	memset(e, 0, sizeof(*e));
	ret = fi_av_open(domain, &av_attr, &e->av, NULL);
	if (ret) {
		bfab_err("fi_av_open", ret);
		goto err;
	}
	if (bfab_cq_open(domain, window, nrecv, &e->cq) ||
	    bfab_ep_open(domain, info, &e->av->fid, e->cq, window, nrecv, &e->ep))
		goto err;
	e->ctl = bench_alloc(2 * CTL_LEN);
	if (e->ctl == NULL) {
		bench_log("out of memory");
		goto err;
	}
	if (bfab_mr_reg(domain, info, e->ep, e->ctl, 2 * CTL_LEN, 0xc71, &e->ctl_mr, &e->ctl_desc))
		goto err;
	e->ctl_ctx[0].ctx = CTL_CTX(0);
	e->ctl_ctx[1].ctx = CTL_CTX(1);
	if (rdm_post_msg(e, false, FI_ADDR_UNSPEC, e->ctl, e->ctl_desc, CTL_LEN, 0,
			 rdm_need_ctx(info) ? (void *)&e->ctl_ctx[0]
					    : (void *)(uintptr_t)CTL_CTX(0)))
		goto err;
	e->ctl_recv_posted = true;
	return 0;
err:
	rdm_ep_close(e);
	return -1;
}

/*
 * rdm_ctl_wait -- wait (busy, with a yield) for the control completions in
 * *want (bit 0: the control receive, bit 1: the control send); the length
 * of a received message goes to *len; -1 after timeout_ms (0: forever);
 * skip_others: other completions and errors are dropped, not a failure
 */
static int rdm_ctl_wait(struct rdm_conn *fc, unsigned *want, size_t *len, int timeout_ms,
			bool skip_others)
{
	uint64_t t0 = now_ms();

	while (*want) {
		struct fi_cq_data_entry e;
		ssize_t n = fi_cq_read(fc->e->cq, &e, 1);

		if (n == -FI_EAGAIN) {
			if (timeout_ms && now_ms() - t0 > (uint64_t)timeout_ms) {
				bench_log("no %s after %d ms",
					  (*want & 1) ? "answer from the peer"
						      : "completion of our message",
					  timeout_ms);
				return -1;
			}
			usleep(20);
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = {0};

			fi_cq_readerr(fc->e->cq, &err, 0);
			if (skip_others)
				continue;
			bench_log("setup: CQ error: %s (prov_errno %d: %s)", fi_strerror(err.err),
				  err.prov_errno,
				  fi_cq_strerror(fc->e->cq, err.prov_errno, err.err_data, NULL, 0));
			return -1;
		}
		if (n < 0) {
			bfab_err("fi_cq_read", n);
			return -1;
		}
		uint64_t ctx = rdm_ctx_of(fc, e.op_context);

		if (ctx == CTL_CTX(0)) {
			fc->e->ctl_recv_posted = false;
			*len = e.len;
			*want &= ~1u;
		} else if (ctx == CTL_CTX(1)) {
			*want &= ~2u;
		} else if (!skip_others) {
			bench_log("setup: unexpected completion (context %#" PRIx64 ")", ctx);
			return -1;
		}
	}
	return 0;
}

/* rdm_ctl_send -- send len bytes of the control buffer's send half to the peer */
static int rdm_ctl_send(struct rdm_conn *fc, size_t len)
{
	void *context = fc->need_ctx ? (void *)&fc->e->ctl_ctx[1] : (void *)(uintptr_t)CTL_CTX(1);

	return rdm_post_msg(fc->e, true, fc->peer, fc->e->ctl + CTL_LEN, fc->e->ctl_desc, len,
			    FI_COMPLETION, context);
}

/*
 * rdm_buf_setup -- the connection's buffer, its registration and the
 * contexts; the endpoint (fc->e) is open
 */
static int rdm_buf_setup(struct rdm_conn *fc, struct fi_info *info, size_t slot_size,
			 unsigned nrecv, bool block)
{
	fc->f.base.x = &rdm_xops;
	fc->f.block = block;
	fc->need_ctx = rdm_need_ctx(info);
	if (fc->need_ctx) {
		fc->tx_ctx = calloc(TX_CTX, sizeof(*fc->tx_ctx));
		fc->rx_ctx = calloc(nrecv, sizeof(*fc->rx_ctx));
		if (fc->tx_ctx == NULL || fc->rx_ctx == NULL) {
			bench_log("out of memory");
			return -1;
		}
	}
	return bfab_buf_setup(&fc->f, info, fc->e->ep, slot_size, nrecv);
}

/* rdm_conn_free -- release what a connection holds; the endpoint only if it is its own */
static void rdm_conn_free(struct rdm_conn *fc)
{
	bfab_progress_stop(&fc->f);
	if (!fc->f.server) {
		rdm_ep_close(&fc->own);
		if (fc->f.mr)
			fi_close(&fc->f.mr->fid);
		if (fc->f.domain)
			fi_close(&fc->f.domain->fid);
		if (fc->f.fabric)
			fi_close(&fc->f.fabric->fid);
		if (fc->info)
			fi_freeinfo(fc->info);
	} else if (fc->f.mr) {
		fi_close(&fc->f.mr->fid);
	}
	free(fc->tx_ctx);
	free(fc->rx_ctx);
	free(fc->f.buf);
	free(fc);
}

/* rdm_open_domain -- fabric and domain for an fi_info */
static int rdm_open_domain(struct fi_info *info, struct fid_fabric **fabric,
			   struct fid_domain **domain)
{
	int ret;

	ret = fi_fabric(info->fabric_attr, fabric, NULL);
	if (ret) {
		bfab_err("fi_fabric", ret);
		return -1;
	}
	ret = fi_domain(*fabric, info, domain, NULL);
	if (ret) {
		bfab_err("fi_domain", ret);
		return -1;
	}
	bfab_describe_fabric(info);
	return 0;
}

/* rdm_straddr -- a printable form of an address (for messages) */
static const char *rdm_straddr(struct fid_av *av, const void *addr, char *buf, size_t len)
{
	size_t l = len;

	if (fi_av_straddr(av, addr, buf, &l) == NULL)
		snprintf(buf, len, "?");
	return buf;
}

/* rdm_verbose -- BENCH_RDM_VERBOSE set: log the addresses */
static bool rdm_verbose(void)
{
	const char *v = getenv("BENCH_RDM_VERBOSE");

	return v && *v && strcmp(v, "0") != 0;
}

/*
 * rdm_client_open -- insert the server's address, send the hello with our
 * name, take the server's region from its answer
 */
static int rdm_client_open(const struct bench_cfg *cfg, const uint8_t *hello, size_t hello_len,
			   struct bench_conn **conn)
{
	struct rdm_conn *fc = calloc(1, sizeof(*fc));
	char name[NAME_MAX_LEN], s1[128], s2[128];
	size_t name_len = sizeof(name), len = 0;
	unsigned want = 3;
	uint8_t *m;
	int ret;

	if (fc == NULL) {
		bench_log("out of memory");
		return -1;
	}
	fc->e = &fc->own;
	fc->info = bfab_getinfo(cfg, rdm_hints(), 0);
	if (fc->info == NULL)
		goto err;
	if (fc->info->dest_addr == NULL) {
		bench_log("fi_getinfo(%s, %s) gave no destination address", cfg->addr, cfg->port);
		goto err;
	}
	if (rdm_open_domain(fc->info, &fc->f.fabric, &fc->f.domain))
		goto err;
	if (rdm_ep_open(&fc->own, fc->f.domain, fc->info, cfg->window))
		goto err;
	if (rdm_buf_setup(fc, fc->info, cfg->max_size, 1, cfg->block))
		goto err;
	ret = fi_av_insert(fc->own.av, fc->info->dest_addr, 1, &fc->peer, 0, NULL);
	if (ret != 1) {
		bfab_err("fi_av_insert(server)", ret < 0 ? ret : -FI_EINVAL);
		goto err;
	}
	fc->peer_inserted = true;
	ret = fi_getname(&fc->own.ep->fid, name, &name_len);
	if (ret) {
		bfab_err("fi_getname", ret);
		goto err;
	}
	if (rdm_verbose())
		bench_log("client: %s -> server %s", rdm_straddr(fc->own.av, name, s1, sizeof(s1)),
			  rdm_straddr(fc->own.av, fc->info->dest_addr, s2, sizeof(s2)));
	if (CTL_HDR + name_len > CTL_LEN || hello_len != BENCH_HELLO_SIZE) {
		bench_log("endpoint name of %zu bytes too long", name_len);
		goto err;
	}
	m = (uint8_t *)fc->own.ctl + CTL_LEN;
	bfab_put_u32(m, HELLO_MAGIC);
	bfab_put_u32(m + 4, (uint32_t)name_len);
	memcpy(m + 8, hello, BENCH_HELLO_SIZE);
	memcpy(m + CTL_HDR, name, name_len);
	if (rdm_ctl_send(fc, CTL_HDR + name_len))
		goto err;
	if (rdm_ctl_wait(fc, &want, &len, SETUP_MS, false))
		goto err;
	m = (uint8_t *)fc->own.ctl;
	if (len < BFAB_REGION_SIZE) {
		bench_log("the server answered with %zu bytes, not %d", len, BFAB_REGION_SIZE);
		goto err;
	}
	bfab_region_get(&fc->f, m);
	*conn = &fc->f.base;
	return 0;
err:
	if (fc)
		rdm_conn_free(fc);
	return -1;
}

/*
 * rdm_client_close -- release everything; when the engine did not say
 * goodbye (it failed), say it here so that the server does not wait for a
 * client that cannot leave a connection
 */
static void rdm_client_close(struct bench_conn *c)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;

	if (!fc->bye_sent && fc->peer_inserted) {
		uint32_t flag = BENCH_FLAG_BYE;
		unsigned want = 2;
		size_t len;

		memcpy(fc->own.ctl + CTL_LEN, &flag, sizeof(flag));
		memset(fc->own.ctl + CTL_LEN + 4, 0, 4);
		rdm_eagain_ms = BYE_MS; /* the server may be gone */
		if (rdm_ctl_send(fc, BENCH_MIN_SIZE) == 0)
			(void)rdm_ctl_wait(fc, &want, &len, BYE_MS, true);
	}
	rdm_conn_free(fc);
}

/* rdm_listener_open -- (re)open the server's endpoint on its address */
static int rdm_listener_open(struct rdm_listener *l)
{
	char name[NAME_MAX_LEN], s[128];
	size_t name_len = sizeof(name);

	if (rdm_ep_open(&l->e, l->domain, l->info, BENCH_MAX_WINDOW))
		return -1;
	l->open = true;
	if (rdm_verbose() && fi_getname(&l->e.ep->fid, name, &name_len) == 0)
		bench_log("server: endpoint %s", rdm_straddr(l->e.av, name, s, sizeof(s)));
	return 0;
}

/* rdm_server_shutdown -- stop listening (also a listener half open) */
static void rdm_server_shutdown(void *listener)
{
	struct rdm_listener *l = listener;

	if (l->open)
		rdm_ep_close(&l->e);
	if (l->domain)
		fi_close(&l->domain->fid);
	if (l->fabric)
		fi_close(&l->fabric->fid);
	if (l->info)
		fi_freeinfo(l->info);
	free(l);
}

/* rdm_server_listen -- an endpoint on cfg->addr:cfg->port, waiting for a hello */
static int rdm_server_listen(const struct bench_cfg *cfg, void **listener)
{
	struct rdm_listener *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		bench_log("out of memory");
		return -1;
	}
	l->cfg = cfg;
	l->info = bfab_getinfo(cfg, rdm_hints(), FI_SOURCE);
	if (l->info == NULL)
		goto err;
	if (rdm_open_domain(l->info, &l->fabric, &l->domain))
		goto err;
	if (rdm_listener_open(l))
		goto err;
	*listener = l;
	return 0;
err:
	rdm_server_shutdown(l);
	return -1;
}

/* rdm_server_accept -- take a hello, insert the client, prepare and answer */
static int rdm_server_accept(void *listener, const struct bench_cfg *cfg, struct bench_conn **conn)
{
	struct rdm_listener *l = listener;
	struct rdm_conn *fc;
	uint32_t max_size, window, name_len;
	unsigned nrecv, want;
	size_t len = 0;
	uint8_t *m;
	char s[128];
	int ret;

	if (!l->open && rdm_listener_open(l))
		return -1;
	fc = calloc(1, sizeof(*fc));
	if (fc == NULL) {
		bench_log("out of memory");
		return -1;
	}
	fc->f.fabric = l->fabric;
	fc->f.domain = l->domain;
	fc->e = &l->e;
	fc->f.server = true;
	fc->need_ctx = rdm_need_ctx(l->info);
	fc->info = NULL;
	for (;;) {
		want = 1;
		if (rdm_ctl_wait(fc, &want, &len, SETUP_MS, false) == 0)
			break;
		if (!cfg->loop)
			goto err;
		/* a fresh endpoint: the hello's receive may be gone */
		rdm_ep_close(&l->e);
		l->open = false;
		if (rdm_listener_open(l))
			goto err;
	}
	m = (uint8_t *)l->e.ctl;
	if (len < CTL_LEN)
		m[len] = 0; /* a string address (FI_ADDR_STR) ends here at the latest */
	name_len = len >= CTL_HDR ? bfab_get_u32(m + 4) : 0;
	if (len < CTL_HDR || bfab_get_u32(m) != HELLO_MAGIC || name_len == 0 ||
	    CTL_HDR + name_len > len ||
	    bench_hello_decode(m + 8, BENCH_HELLO_SIZE, &max_size, &window)) {
		bench_log("server: a bad hello (%zu bytes)", len);
		goto err;
	}
	ret = fi_av_insert(l->e.av, m + CTL_HDR, 1, &fc->peer, 0, NULL);
	if (ret != 1) {
		bfab_err("fi_av_insert(client)", ret < 0 ? ret : -FI_EINVAL);
		goto err;
	}
	fc->peer_inserted = true;
	if (rdm_verbose())
		bench_log("server: hello from %s", rdm_straddr(l->e.av, m + CTL_HDR, s, sizeof(s)));
	nrecv = BENCH_SERVER_RECVS(window);
	if (rdm_buf_setup(fc, l->info, max_size, nrecv, cfg->block))
		goto err;
	for (unsigned i = 0; i < nrecv; i++)
		if (rdm_recv(&fc->f.base, i, BENCH_CTX(BENCH_CTX_RECV, i)))
			goto err;

	/* the remote region is the data area */
	bfab_region_put(&fc->f, l->info, (uint8_t *)l->e.ctl + CTL_LEN);
	if (!cfg->no_progress_thread && bfab_progress_start(&fc->f, l->e.cq, false))
		goto err;
	want = 2;
	if (rdm_ctl_send(fc, BFAB_REGION_SIZE) || rdm_ctl_wait(fc, &want, &len, SETUP_MS, false))
		goto err;
	*conn = &fc->f.base;
	return 0;
err:
	bfab_progress_stop(&fc->f);
	/* posted receives point into the buffer: the endpoint goes first */
	rdm_ep_close(&l->e);
	l->open = false;
	rdm_conn_free(fc);
	return -1;
}

/* rdm_server_close -- release one client: the endpoint too (its receives point into the buffer) */
static void rdm_server_close(struct bench_conn *c)
{
	struct rdm_conn *fc = (struct rdm_conn *)c;
	struct rdm_listener *l =
		(struct rdm_listener *)((char *)fc->e - offsetof(struct rdm_listener, e));

	bfab_progress_stop(&fc->f);
	rdm_ep_close(&l->e);
	l->open = false;
	rdm_conn_free(fc);
}

static const struct bench_transport rdm_transport = {
	.tool = "baseline-fabric-rdm",
	.extra_usage = "      --no-progress-thread  server: no progress thread\n"
		       "  environment: FI_PROVIDER=tcp;ofi_rxm|shm (default tcp;ofi_rxm)\n"
		       "               BENCH_FI_WRITE_LEVEL=none|delivery|commit: add\n"
		       "               FI_DELIVERY_COMPLETE or FI_COMMIT_COMPLETE to every write\n"
		       "               BENCH_RDM_VERBOSE=1: log the endpoint addresses\n",
	.describe = bfab_describe,
	.client_open = rdm_client_open,
	.client_close = rdm_client_close,
	.server_listen = rdm_server_listen,
	.server_accept = rdm_server_accept,
	.server_close = rdm_server_close,
	.server_shutdown = rdm_server_shutdown,
};

/* main -- the raw libfabric RDM baseline */
int main(int argc, char *argv[])
{
	const char *ctx = getenv("BENCH_RDM_CONTEXT");

	rdm_force_ctx = ctx && *ctx && strcmp(ctx, "0") != 0;
	if (bfab_env("baseline-fabric-rdm", " ep=rdm"))
		return 2;
	return bench_main(argc, argv, &rdm_transport);
}
