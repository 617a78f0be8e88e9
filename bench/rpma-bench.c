/* SPDX-License-Identifier: BSD-3-Clause */
/* rpma-bench.c -- latency and bandwidth of the librpma API (ours or upstream's) */

/*
 * Written against the public librpma 1.2 API only, so the same source
 * builds against this project's library and against Debian's librpma0:
 *   gcc -O2 -I/usr/include bench/rpma-bench.c bench/bench.c -lrpma -libverbs -lm
 * The server sends its memory region descriptor and its peer-config
 * descriptor as connection private data (well under the 56 bytes rdma_cm
 * allows); the client sends the benchmark hello (bench.h) the same way.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif

#include "bench.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

#define PD_TAG	    0x42 /* first byte of the server's private data */
#define PD_MAX	    56	 /* what rdma_cm carries on RDMA_PS_TCP */
#define IDLE_CHECKS 4096 /* empty polls between two looks at the connection's events */

struct rb_conn {
	struct bench_conn base; /* first: the engine's view */
	struct rpma_peer *peer; /* owned by a client */
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr; /* the whole local buffer */
	struct rpma_mr_remote *rmr;
	char *buf; /* data | 2 send slots | receive slots */
	size_t buf_len;
	size_t sbuf_off, rbuf_off;
	size_t rlen; /* the remote region's size */
	bool server;
	int cq_fd, ev_fd;
	unsigned idle;
	bool gone; /* the connection ended; its CQ is drained before that is reported */
	char atomic_src[8] __attribute__((aligned(8)));
};

struct rb_listener {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
};

static char rb_desc[256] = "librpma";

/* rb_err -- log a failed librpma call */
static void rb_err(const char *call, int ret)
{
	bench_log("%s: %s (%d)", call, rpma_err_2str(ret), ret);
}

/* rb_ret -- a librpma result as a BENCH_E_* code */
static int rb_ret(const char *call, int ret)
{
	if (ret == 0)
		return 0;
	if (ret == RPMA_E_NOSUPP)
		return BENCH_E_NOSUPP;
	rb_err(call, ret);
	return BENCH_E_FAIL;
}

/* rb_flags -- completion flags of a post */
static inline int rb_flags(bool signaled)
{
	return signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
}

/* rb_describe -- which librpma runs, and with which provider */
static const char *rb_describe(void)
{
	return rb_desc;
}

/* rb_describe_init -- find the librpma library actually loaded */
static void rb_describe_init(void)
{
	Dl_info info;
	const char *prov = getenv("RPMA_PROVIDER");
	const char *lib = "librpma";

	if (dladdr((void *)rpma_peer_new, &info) && info.dli_fname)
		lib = info.dli_fname;
	snprintf(rb_desc, sizeof(rb_desc), "librpma %s RPMA_PROVIDER=%s", lib,
		 prov && *prov ? prov : "(auto)");
}

/* ------------------------------------------------------------- data path */

/* rb_write -- write len bytes to remote offset 0 */
static int rb_write(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_write", rpma_write(rc->conn, rc->rmr, 0, rc->mr, 0, len,
					       rb_flags(signaled), (void *)(uintptr_t)ctx));
}

/* rb_read -- read len bytes from remote offset 0 */
static int rb_read(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_read", rpma_read(rc->conn, rc->mr, 0, rc->rmr, 0, len,
					     rb_flags(signaled), (void *)(uintptr_t)ctx));
}

/* rb_flush -- rpma_flush of remote [0, len) */
static int rb_flush(struct bench_conn *c, size_t len, bool persistent, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_flush", rpma_flush(rc->conn, rc->rmr, 0, len,
					       persistent ? RPMA_FLUSH_TYPE_PERSISTENT
							  : RPMA_FLUSH_TYPE_VISIBILITY,
					       RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)ctx));
}

/* rb_atomic_write -- rpma_atomic_write of 8 bytes at remote offset 0 */
static int rb_atomic_write(struct bench_conn *c, bool signaled, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_atomic_write",
		      rpma_atomic_write(rc->conn, rc->rmr, 0, rc->atomic_src, rb_flags(signaled),
					(void *)(uintptr_t)ctx));
}

/* rb_write_imm -- rpma_write_with_imm of len bytes to remote offset 0 */
static int rb_write_imm(struct bench_conn *c, size_t len, uint32_t imm, bool signaled, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_write_with_imm",
		      rpma_write_with_imm(rc->conn, rc->rmr, 0, rc->mr, 0, len, rb_flags(signaled),
					  imm, (void *)(uintptr_t)ctx));
}

/* rb_send -- rpma_send from a send slot */
static int rb_send(struct bench_conn *c, unsigned slot, size_t len, bool signaled, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_send",
		      rpma_send(rc->conn, rc->mr, rc->sbuf_off + (size_t)slot * c->slot_size, len,
				rb_flags(signaled), (void *)(uintptr_t)ctx));
}

/* rb_recv -- rpma_recv into a receive slot */
static int rb_recv(struct bench_conn *c, unsigned slot, uint64_t ctx)
{
	struct rb_conn *rc = (struct rb_conn *)c;

	return rb_ret("rpma_recv",
		      rpma_recv(rc->conn, rc->mr, rc->rbuf_off + (size_t)slot * c->slot_size,
				c->slot_size, (void *)(uintptr_t)ctx));
}

/* rb_peer_gone -- look at the connection's events without blocking */
static bool rb_peer_gone(struct rb_conn *rc)
{
	struct pollfd p = {.fd = rc->ev_fd, .events = POLLIN};
	enum rpma_conn_event ev;

	if (rc->ev_fd < 0 || poll(&p, 1, 0) != 1)
		return false;
	if (rpma_conn_next_event(rc->conn, &ev))
		return true;
	return ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST;
}

/* rb_server_wait -- server: sleep until the CQ or the connection has news */
static int rb_server_wait(struct rb_conn *rc)
{
	struct pollfd p[2] = {{.fd = rc->cq_fd, .events = POLLIN},
			      {.fd = rc->ev_fd, .events = POLLIN}};
	int ret;

	if (rc->cq_fd < 0) /* no descriptor: plain rpma_cq_wait */
		return rpma_cq_wait(rc->cq);
	/* the caller found the CQ empty after the end: nothing more will come */
	if (rc->gone)
		return BENCH_E_CLOSED;
	ret = poll(p, rc->ev_fd < 0 ? 1 : 2, 1000);
	if (ret < 0 && errno != EINTR) {
		bench_log("poll: %s", strerror(errno));
		return BENCH_E_FAIL;
	}
	if (ret > 0 && (p[0].revents & POLLIN))
		return rpma_cq_wait(rc->cq);
	/*
	 * the end may be reported before the client's last message (its
	 * goodbye) was taken from the CQ: the caller polls the CQ once more
	 */
	if (ret > 0 && (p[1].revents & POLLIN) && rb_peer_gone(rc))
		rc->gone = true;
	return RPMA_E_NO_COMPLETION;
}

/* rb_poll -- rpma_cq_get_wc, and rpma_cq_wait when blocking */
static int rb_poll(struct bench_conn *c, struct bench_wc *wc, int max, int *got, bool block)
{
	struct rb_conn *rc = (struct rb_conn *)c;
	struct ibv_wc w[32];
	int n = 0, ret;

	if (max > 32)
		max = 32;
	*got = 0;
	ret = rpma_cq_get_wc(rc->cq, max, w, &n);
	if (ret == RPMA_E_NO_COMPLETION) {
		if (block) {
			ret = rc->server ? rb_server_wait(rc) : rpma_cq_wait(rc->cq);
			if (ret == BENCH_E_CLOSED || ret == BENCH_E_FAIL)
				return ret;
			if (ret == RPMA_E_NO_COMPLETION)
				return 0;
			if (ret) {
				rb_err("rpma_cq_wait", ret);
				return BENCH_E_FAIL;
			}
			ret = rpma_cq_get_wc(rc->cq, max, w, &n);
			if (ret == RPMA_E_NO_COMPLETION)
				return 0;
		} else {
			if (rc->server && ++rc->idle >= IDLE_CHECKS) {
				rc->idle = 0;
				if (rb_peer_gone(rc))
					return BENCH_E_CLOSED;
			}
			return 0;
		}
	}
	if (ret) {
		rb_err("rpma_cq_get_wc", ret);
		return BENCH_E_FAIL;
	}
	rc->idle = 0;
	for (int i = 0; i < n; i++) {
		wc[i] = (struct bench_wc){
			.ctx = w[i].wr_id,
			.len = w[i].byte_len,
			.ok = w[i].status == IBV_WC_SUCCESS,
			.status = (int)w[i].status,
		};
		if (w[i].status == IBV_WC_SUCCESS && (w[i].wc_flags & IBV_WC_WITH_IMM)) {
			wc[i].has_imm = true;
			wc[i].imm = w[i].imm_data; /* flags read the same in either byte order */
		}
	}
	*got = n;
	return 0;
}

static const struct bench_xops rb_xops = {
	.write = rb_write,
	.read = rb_read,
	.flush = rb_flush,
	.atomic_write = rb_atomic_write,
	.write_imm = rb_write_imm,
	.send = rb_send,
	.recv = rb_recv,
	.poll = rb_poll,
};

/* ------------------------------------------------------ connection setup */

/* rb_conn_alloc -- the local buffer: data, 2 send slots, nrecv receive slots */
static struct rb_conn *rb_conn_alloc(size_t slot_size, unsigned nrecv)
{
	struct rb_conn *rc = calloc(1, sizeof(*rc));
	size_t data_len = slot_size < 4096 ? 4096 : slot_size;

	if (rc == NULL) {
		bench_log("out of memory");
		return NULL;
	}
	rc->base.x = &rb_xops;
	rc->cq_fd = rc->ev_fd = -1;
	rc->buf_len = data_len + (2 + (size_t)nrecv) * slot_size;
	rc->buf = bench_alloc(rc->buf_len);
	if (rc->buf == NULL) {
		bench_log("cannot allocate %zu bytes", rc->buf_len);
		free(rc);
		return NULL;
	}
	rc->sbuf_off = data_len;
	rc->rbuf_off = data_len + 2 * slot_size;
	rc->base.sbuf = rc->buf + rc->sbuf_off;
	rc->base.rbuf = rc->buf + rc->rbuf_off;
	rc->base.slot_size = slot_size;
	rc->base.nrecv = nrecv;
	memcpy(rc->atomic_src, "ATOMIC!", 8);
	return rc;
}

/* rb_wait_closed -- wait (a bounded time) for the connection's CLOSED event */
static void rb_wait_closed(struct rb_conn *rc)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int fd;

	if (rpma_conn_get_event_fd(rc->conn, &fd) == 0) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		for (int i = 0; i < 10 && ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST; i++) {
			if (poll(&p, 1, 500) != 1)
				continue;
			if (rpma_conn_next_event(rc->conn, &ev))
				break;
		}
	}
}

/* rb_conn_free -- disconnect and release everything */
static void rb_conn_free(struct rb_conn *rc, bool disconnect)
{
	int ret;

	if (rc->conn) {
		if (disconnect) {
			ret = rpma_conn_disconnect(rc->conn);
			if (ret)
				rb_err("rpma_conn_disconnect", ret);
			else
				rb_wait_closed(rc);
		}
		ret = rpma_conn_delete(&rc->conn);
		if (ret)
			rb_err("rpma_conn_delete", ret);
	}
	if (rc->rmr)
		rpma_mr_remote_delete(&rc->rmr);
	if (rc->mr) {
		ret = rpma_mr_dereg(&rc->mr);
		if (ret)
			rb_err("rpma_mr_dereg", ret);
	}
	if (rc->peer)
		rpma_peer_delete(&rc->peer);
	free(rc->buf);
	free(rc);
}

/* rb_new_peer -- the peer serving addr */
static int rb_new_peer(const char *addr, enum rpma_util_ibv_context_type type,
		       struct rpma_peer **peer)
{
	struct ibv_context *dev;
	int ret;

	ret = rpma_utils_get_ibv_context(addr, type, &dev);
	if (ret) {
		rb_err("rpma_utils_get_ibv_context", ret);
		return -1;
	}
	ret = rpma_peer_new(dev, peer);
	if (ret) {
		rb_err("rpma_peer_new", ret);
		return -1;
	}
	return 0;
}

/* rb_conn_cfg -- connection settings with the given queue sizes */
static struct rpma_conn_cfg *rb_conn_cfg(uint32_t sq, uint32_t rq, uint32_t cq)
{
	struct rpma_conn_cfg *cfg;
	int ret = rpma_conn_cfg_new(&cfg);

	if (ret) {
		rb_err("rpma_conn_cfg_new", ret);
		return NULL;
	}
	ret = rpma_conn_cfg_set_sq_size(cfg, sq);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, rq);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, cq);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(cfg, 5000);
	if (ret) {
		rb_err("rpma_conn_cfg_set_*", ret);
		rpma_conn_cfg_delete(&cfg);
		return NULL;
	}
	return cfg;
}

/* rb_expect_established -- the first event must be ESTABLISHED */
static int rb_expect_established(struct rpma_conn *conn)
{
	enum rpma_conn_event ev;
	int ret = rpma_conn_next_event(conn, &ev);

	if (ret) {
		rb_err("rpma_conn_next_event", ret);
		return -1;
	}
	if (ev != RPMA_CONN_ESTABLISHED) {
		bench_log("connection not established: %s", rpma_utils_conn_event_2str(ev));
		return -1;
	}
	return 0;
}

/* rb_client_open -- connect and learn the server's region and persistence */
static int rb_client_open(const struct bench_cfg *cfg, const uint8_t *hello, size_t hello_len,
			  struct bench_conn **conn)
{
	uint32_t w = cfg->window;
	struct rpma_conn_private_data pd = {.ptr = (void *)hello, .len = (uint8_t)hello_len};
	struct rpma_conn_cfg *ccfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rb_conn *rc;
	const uint8_t *p;
	int ret;

	rb_describe_init();
	rc = rb_conn_alloc(cfg->max_size, 1);
	if (rc == NULL)
		return -1;
	if (rb_new_peer(cfg->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &rc->peer))
		goto err;
	ret = rpma_mr_reg(rc->peer, rc->buf, rc->buf_len,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
				  RPMA_MR_USAGE_RECV,
			  &rc->mr);
	if (ret) {
		rb_err("rpma_mr_reg", ret);
		goto err;
	}
	/* a unit is at most 2 work requests, plus the messages' receive */
	ccfg = rb_conn_cfg(2 * w + 4, 4, 2 * w + 8);
	if (ccfg == NULL)
		goto err;
	ret = rpma_conn_req_new(rc->peer, cfg->addr, cfg->port, ccfg, &req);
	if (ret) {
		rb_err("rpma_conn_req_new", ret);
		goto err;
	}
	ret = rpma_conn_req_connect(&req, &pd, &rc->conn);
	if (ret) {
		rb_err("rpma_conn_req_connect", ret);
		goto err;
	}
	if (rb_expect_established(rc->conn))
		goto err;

	/* the server's private data: tag, sizes, MR descriptor, peer-config descriptor */
	ret = rpma_conn_get_private_data(rc->conn, &pd);
	if (ret) {
		rb_err("rpma_conn_get_private_data", ret);
		goto err;
	}
	p = pd.ptr;
	if (p == NULL || pd.len < 3 || p[0] != PD_TAG || 3u + p[1] + p[2] > pd.len) {
		bench_log("the server's private data is not a benchmark descriptor (%u bytes)",
			  pd.len);
		goto err;
	}
	ret = rpma_mr_remote_from_descriptor(p + 3, p[1], &rc->rmr);
	if (ret) {
		rb_err("rpma_mr_remote_from_descriptor", ret);
		goto err;
	}
	ret = rpma_mr_remote_get_size(rc->rmr, &rc->rlen);
	if (ret) {
		rb_err("rpma_mr_remote_get_size", ret);
		goto err;
	}
	if (rc->rlen < cfg->max_size) {
		bench_log("the server's region (%zu B) is smaller than %zu B", rc->rlen,
			  cfg->max_size);
		goto err;
	}
	ret = rpma_peer_cfg_from_descriptor(p + 3 + p[1], p[2], &pcfg);
	if (!ret)
		ret = rpma_conn_apply_remote_peer_cfg(rc->conn, pcfg);
	if (ret) {
		rb_err("rpma_peer_cfg_from_descriptor/rpma_conn_apply_remote_peer_cfg", ret);
		goto err;
	}
	rpma_peer_cfg_delete(&pcfg);
	ret = rpma_conn_get_cq(rc->conn, &rc->cq);
	if (ret) {
		rb_err("rpma_conn_get_cq", ret);
		goto err;
	}
	rpma_conn_cfg_delete(&ccfg);
	*conn = &rc->base;
	return 0;
err:
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (req)
		rpma_conn_req_delete(&req);
	if (ccfg)
		rpma_conn_cfg_delete(&ccfg);
	rb_conn_free(rc, false);
	return -1;
}

/* rb_client_close -- disconnect and release */
static void rb_client_close(struct bench_conn *c)
{
	rb_conn_free((struct rb_conn *)c, true);
}

/* rb_server_listen -- a peer and an endpoint listening on cfg->addr:cfg->port */
static int rb_server_listen(const struct bench_cfg *cfg, void **listener)
{
	struct rb_listener *l = calloc(1, sizeof(*l));
	int ret;

	rb_describe_init();
	if (l == NULL) {
		bench_log("out of memory");
		return -1;
	}
	if (rb_new_peer(cfg->addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &l->peer))
		goto err;
	ret = rpma_ep_listen(l->peer, cfg->addr, cfg->port, &l->ep);
	if (ret) {
		rb_err("rpma_ep_listen", ret);
		goto err;
	}
	*listener = l;
	return 0;
err:
	if (l->peer)
		rpma_peer_delete(&l->peer);
	free(l);
	return -1;
}

/* rb_server_pdata -- tag, descriptor sizes, MR descriptor, peer-config descriptor */
static int rb_server_pdata(struct rb_conn *rc, bool pmem, uint8_t *pd, uint8_t *pd_len)
{
	struct rpma_peer_cfg *pcfg;
	size_t mr_size, pcfg_size;
	int ret;

	ret = rpma_mr_get_descriptor_size(rc->mr, &mr_size);
	if (ret) {
		rb_err("rpma_mr_get_descriptor_size", ret);
		return -1;
	}
	ret = rpma_peer_cfg_new(&pcfg);
	if (ret) {
		rb_err("rpma_peer_cfg_new", ret);
		return -1;
	}
	ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, pmem);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size);
	if (!ret && 3 + mr_size + pcfg_size > PD_MAX) {
		bench_log("descriptors of %zu + %zu bytes do not fit the private data", mr_size,
			  pcfg_size);
		rpma_peer_cfg_delete(&pcfg);
		return -1;
	}
	if (!ret)
		ret = rpma_mr_get_descriptor(rc->mr, pd + 3);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor(pcfg, pd + 3 + mr_size);
	rpma_peer_cfg_delete(&pcfg);
	if (ret) {
		rb_err("descriptors", ret);
		return -1;
	}
	pd[0] = PD_TAG;
	pd[1] = (uint8_t)mr_size;
	pd[2] = (uint8_t)pcfg_size;
	*pd_len = (uint8_t)(3 + mr_size + pcfg_size);
	return 0;
}

/* rb_server_accept -- take a request, register memory, post receives, accept */
static int rb_server_accept(void *listener, const struct bench_cfg *cfg, struct bench_conn **conn)
{
	struct rb_listener *l = listener;
	unsigned maxrecv = BENCH_SERVER_RECVS(BENCH_MAX_WINDOW);
	struct rpma_conn_cfg *ccfg;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data pd;
	uint8_t out[PD_MAX];
	uint32_t max_size, window;
	struct rb_conn *rc = NULL;
	int ret;

	ccfg = rb_conn_cfg(16, maxrecv, maxrecv + 16);
	if (ccfg == NULL)
		return -1;
	ret = rpma_ep_next_conn_req(l->ep, ccfg, &req);
	if (ret) {
		rb_err("rpma_ep_next_conn_req", ret);
		goto err;
	}
	ret = rpma_conn_req_get_private_data(req, &pd);
	if (ret) {
		rb_err("rpma_conn_req_get_private_data", ret);
		goto err;
	}
	if (bench_hello_decode(pd.ptr, pd.len, &max_size, &window))
		goto err;
	rc = rb_conn_alloc(max_size, BENCH_SERVER_RECVS(window));
	if (rc == NULL)
		goto err;
	rc->server = true;
	ret = rpma_mr_reg(l->peer, rc->buf, rc->buf_len,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				  RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND |
				  RPMA_MR_USAGE_RECV,
			  &rc->mr);
	if (ret) {
		rb_err("rpma_mr_reg", ret);
		goto err;
	}
	for (unsigned i = 0; i < rc->base.nrecv; i++) {
		ret = rpma_conn_req_recv(req, rc->mr, rc->rbuf_off + (size_t)i * rc->base.slot_size,
					 rc->base.slot_size,
					 (void *)(uintptr_t)BENCH_CTX(BENCH_CTX_RECV, i));
		if (ret) {
			rb_err("rpma_conn_req_recv", ret);
			goto err;
		}
	}
	if (rb_server_pdata(rc, !cfg->no_pmem, out, &pd.len))
		goto err;
	pd.ptr = out;
	ret = rpma_conn_req_connect(&req, &pd, &rc->conn);
	if (ret) {
		rb_err("rpma_conn_req_connect", ret);
		goto err;
	}
	if (rb_expect_established(rc->conn))
		goto err;
	ret = rpma_conn_get_cq(rc->conn, &rc->cq);
	if (ret) {
		rb_err("rpma_conn_get_cq", ret);
		goto err;
	}
	/*
	 * -C fd: the server sleeps in poll() on the CQ's descriptor (and the
	 * connection's); -C wait: in rpma_cq_wait(), the call that matches the
	 * raw baselines' fi_cq_sread() (a CQ whose descriptor was taken is
	 * never read directly by the fabric provider)
	 */
	rc->cq_fd = -1;
	if (cfg->server_fd && rpma_cq_get_fd(rc->cq, &rc->cq_fd))
		rc->cq_fd = -1;
	if (rpma_conn_get_event_fd(rc->conn, &rc->ev_fd))
		rc->ev_fd = -1;
	rpma_conn_cfg_delete(&ccfg);
	*conn = &rc->base;
	return 0;
err:
	if (req)
		rpma_conn_req_delete(&req);
	rpma_conn_cfg_delete(&ccfg);
	if (rc)
		rb_conn_free(rc, false);
	return -1;
}

/* rb_server_close -- disconnect and release one connection */
static void rb_server_close(struct bench_conn *c)
{
	rb_conn_free((struct rb_conn *)c, true);
}

/* rb_server_shutdown -- stop listening */
static void rb_server_shutdown(void *listener)
{
	struct rb_listener *l = listener;
	int ret = rpma_ep_shutdown(&l->ep);

	if (ret)
		rb_err("rpma_ep_shutdown", ret);
	rpma_peer_delete(&l->peer);
	free(l);
}

static const struct bench_transport rb_transport = {
	.tool = "rpma-bench",
	.extra_usage = "  environment: RPMA_PROVIDER=verbs|fabric (this project's library),\n"
		       "               FI_PROVIDER=tcp|net|sockets (under the fabric provider)\n",
	.describe = rb_describe,
	.client_open = rb_client_open,
	.client_close = rb_client_close,
	.server_listen = rb_server_listen,
	.server_accept = rb_server_accept,
	.server_close = rb_server_close,
	.server_shutdown = rb_server_shutdown,
};

/* main -- the librpma benchmark */
int main(int argc, char *argv[])
{
	return bench_main(argc, argv, &rb_transport);
}
