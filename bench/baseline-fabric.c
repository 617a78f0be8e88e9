/* SPDX-License-Identifier: BSD-3-Clause */
/* baseline-fabric.c -- the benchmark over raw libfabric (FI_EP_MSG), the fabric provider's yardstick */

/*
 * The same engine as rpma-bench (bench.c) over libfabric calls made
 * directly: fi_writemsg / fi_readmsg / fi_sendmsg / fi_recvmsg on a
 * connected FI_EP_MSG endpoint, selective completion on the transmit side,
 * a flush as an 8-byte read behind the writes (reads do not pass writes:
 * FI_ORDER_RAW), an "atomic" write as an 8-byte write (tcp has no
 * FI_ATOMIC).  The provider is FI_PROVIDER (default tcp).  Like a librpma
 * target, the server runs a progress thread: the tcp provider only moves
 * RMA data when somebody reads the CQ.
 */

#include "bench-fabric.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define PDATA_MAX 256

/* a connection: the shared part (its fabric is owned only by a client) and the MSG part */
struct fab_conn {
	struct bfab_conn f; /* first: its first is the engine's view */
	struct fi_info *info;
	struct fid_eq *eq;   /* owned only by a client */
	struct fid_pep *pep; /* the server's listener */
	struct fid_cq *cq;
	struct fid_ep *ep;
	unsigned idle_polls; /* a server watches the EQ for the client leaving */
};

struct fab_listener {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_pep *pep;
	const struct bench_cfg *cfg;
};

/* fab_hints -- the hints every fi_getinfo() of ours uses */
static struct fi_info *fab_hints(void)
{
	return bfab_hints(FI_EP_MSG, FI_RX_CQ_DATA,
			  FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY, "tcp");
}

/* ------------------------------------------------------------- data path */

/* fab_post_rma -- one fi_writemsg / fi_readmsg */
static int fab_post_rma(struct bfab_conn *c, bool write, char *local, size_t len, uint64_t flags,
			uint64_t data, uint64_t ctx)
{
	struct fab_conn *fc = (struct fab_conn *)c;
	struct iovec iov = {.iov_base = local, .iov_len = len};
	struct fi_rma_iov rma = {.addr = fc->f.raddr, .len = len, .key = fc->f.rkey};
	struct fi_msg_rma msg = {
		.msg_iov = &iov,
		.desc = &fc->f.mr_desc,
		.iov_count = 1,
		.rma_iov = &rma,
		.rma_iov_count = 1,
		.context = (void *)(uintptr_t)ctx,
		.data = data,
	};
	ssize_t ret;

	if (len > fc->f.rlen) {
		bench_log("%zu B does not fit the remote region (%" PRIu64 " B)", len, fc->f.rlen);
		return BENCH_E_FAIL;
	}
	do {
		ret = write ? fi_writemsg(fc->ep, &msg, flags) : fi_readmsg(fc->ep, &msg, flags);
		if (ret == -FI_EAGAIN)
			fi_cq_read(fc->cq, NULL, 0); /* make room: progress */
	} while (ret == -FI_EAGAIN);
	if (ret) {
		bfab_err(write ? "fi_writemsg" : "fi_readmsg", ret);
		return BENCH_E_FAIL;
	}
	return 0;
}

/* fab_write -- write len bytes to remote offset 0 */
static int fab_write(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	return bfab_write(c, fab_post_rma, len, signaled, ctx);
}

/* fab_read -- read len bytes from remote offset 0 */
static int fab_read(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	return bfab_read(c, fab_post_rma, len, signaled, ctx);
}

/* fab_flush -- an 8-byte read behind the writes */
static int fab_flush(struct bench_conn *c, size_t len, bool persistent, uint64_t ctx)
{
	return bfab_flush(c, fab_post_rma, ctx);
}

/* fab_atomic_write -- an 8-byte write */
static int fab_atomic_write(struct bench_conn *c, bool signaled, uint64_t ctx)
{
	return bfab_atomic_write(c, fab_post_rma, signaled, ctx);
}

/* fab_write_imm -- a write carrying remote CQ data */
static int fab_write_imm(struct bench_conn *c, size_t len, uint32_t imm, bool signaled,
			 uint64_t ctx)
{
	return bfab_write_imm(c, fab_post_rma, len, imm, signaled, ctx);
}

/* fab_send -- send len bytes from a send slot */
static int fab_send(struct bench_conn *c, unsigned slot, size_t len, bool signaled, uint64_t ctx)
{
	struct fab_conn *fc = (struct fab_conn *)c;
	struct iovec iov = {.iov_base = c->sbuf + (size_t)slot * c->slot_size, .iov_len = len};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = &fc->f.mr_desc,
		.iov_count = 1,
		.context = (void *)(uintptr_t)ctx,
	};
	ssize_t ret;

	do {
		ret = fi_sendmsg(fc->ep, &msg, signaled ? FI_COMPLETION : 0);
		if (ret == -FI_EAGAIN)
			fi_cq_read(fc->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret) {
		bfab_err("fi_sendmsg", ret);
		return BENCH_E_FAIL;
	}
	return 0;
}

/* fab_recv -- post a receive into a receive slot */
static int fab_recv(struct bench_conn *c, unsigned slot, uint64_t ctx)
{
	struct fab_conn *fc = (struct fab_conn *)c;
	struct iovec iov = {.iov_base = c->rbuf + (size_t)slot * c->slot_size,
			    .iov_len = c->slot_size};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = &fc->f.mr_desc,
		.iov_count = 1,
		.context = (void *)(uintptr_t)ctx,
	};
	ssize_t ret;

	do {
		ret = fi_recvmsg(fc->ep, &msg, 0);
		if (ret == -FI_EAGAIN)
			fi_cq_read(fc->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret) {
		bfab_err("fi_recvmsg", ret);
		return BENCH_E_FAIL;
	}
	return 0;
}

/* fab_peer_gone -- the connection's EQ reports a shutdown (or an error) */
static bool fab_peer_gone(struct fab_conn *fc)
{
	union {
		struct fi_eq_cm_entry e;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + PDATA_MAX];
	} ev;
	uint32_t event;
	ssize_t ret = fi_eq_read(fc->eq, &event, &ev, sizeof(ev), 0);

	if (ret == -FI_EAGAIN)
		return false;
	if (ret >= 0 && event == FI_CONNREQ) {
		/* another client while this one is served: one at a time */
		fi_reject(fc->pep, ev.e.info->handle, NULL, 0);
		fi_freeinfo(ev.e.info);
		return false;
	}
	if (ret == -FI_EAVAIL) {
		struct fi_eq_err_entry err = {0};

		fi_eq_readerr(fc->eq, &err, 0);
		return true;
	}
	return ret < 0 || event == FI_SHUTDOWN;
}

/* fab_poll -- read completions; an error entry is returned as a failed bench_wc */
static int fab_poll(struct bench_conn *c, struct bench_wc *wc, int max, int *got, bool block)
{
	struct fab_conn *fc = (struct fab_conn *)c;
	struct fi_cq_data_entry e[32];
	ssize_t n;

	*got = 0;
	n = bfab_cq_take(&fc->f, fc->cq, e, max, block, fc->f.server ? 1000 : -1);
	if (n == -FI_EAGAIN) {
		/* the server watches for the client leaving without a goodbye */
		if (fc->f.server && (block || ++fc->idle_polls >= 4096)) {
			fc->idle_polls = 0;
			if (fab_peer_gone(fc))
				return BENCH_E_CLOSED;
		}
		return 0;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};

		if (bfab_cq_readerr(fc->cq, &err))
			return BENCH_E_FAIL;
		wc[0] = (struct bench_wc){
			.ctx = (uint64_t)(uintptr_t)err.op_context, .ok = false, .status = err.err};
		*got = 1;
		return 0;
	}
	if (n < 0) {
		bfab_err(block ? "fi_cq_sread" : "fi_cq_read", n);
		return BENCH_E_FAIL;
	}
	fc->idle_polls = 0;
	for (ssize_t i = 0; i < n; i++)
		bfab_wc_set(&wc[i], &e[i], (uint64_t)(uintptr_t)e[i].op_context);
	*got = (int)n;
	return 0;
}

static const struct bench_xops fab_xops = {
	.write = fab_write,
	.read = fab_read,
	.flush = fab_flush,
	.atomic_write = fab_atomic_write,
	.write_imm = fab_write_imm,
	.send = fab_send,
	.recv = fab_recv,
	.poll = fab_poll,
};

/* ------------------------------------------------------ connection setup */

/* fab_conn_setup -- domain, CQ, endpoint and memory of one connection */
static int fab_conn_setup(struct fab_conn *fc, struct fi_info *info, struct fid_eq *eq,
			  size_t slot_size, unsigned nrecv, unsigned window, bool block)
{
	int ret;

	fc->f.base.x = &fab_xops;
	fc->f.block = block;
	fc->f.wait_fd = -1;
	ret = fi_domain(fc->f.fabric, info, &fc->f.domain, NULL);
	if (ret) {
		bfab_err("fi_domain", ret);
		return -1;
	}
	if (bfab_cq_open(fc->f.domain, window, nrecv, &fc->cq) ||
	    bfab_ep_open(fc->f.domain, info, &eq->fid, fc->cq, window, nrecv, &fc->ep))
		return -1;
	return bfab_buf_setup(&fc->f, info, fc->ep, slot_size, nrecv);
}

/* fab_conn_free -- release everything a connection holds */
static void fab_conn_free(struct fab_conn *fc, bool own_fabric)
{
	bfab_progress_stop(&fc->f);
	if (fc->ep)
		fi_close(&fc->ep->fid);
	if (fc->f.mr)
		fi_close(&fc->f.mr->fid);
	if (fc->cq)
		fi_close(&fc->cq->fid);
	if (fc->f.domain)
		fi_close(&fc->f.domain->fid);
	if (own_fabric) {
		if (fc->eq)
			fi_close(&fc->eq->fid);
		if (fc->f.fabric)
			fi_close(&fc->f.fabric->fid);
	}
	if (fc->info)
		fi_freeinfo(fc->info);
	free(fc->f.buf);
	free(fc);
}

/* fab_expect -- wait for a CM event; the private data goes to pdata/plen */
static int fab_expect(struct fid_eq *eq, uint32_t want, struct fi_eq_cm_entry *entry,
		      size_t entry_size, size_t *plen)
{
	uint32_t event;
	ssize_t ret = fi_eq_sread(eq, &event, entry, entry_size, 30000, 0);

	if (ret == -FI_EAVAIL) {
		struct fi_eq_err_entry err = {0};

		fi_eq_readerr(eq, &err, 0);
		bench_log("connection failed: %s", fi_strerror(err.err));
		return -1;
	}
	if (ret < 0) {
		bfab_err("fi_eq_sread", ret);
		return -1;
	}
	if (event != want) {
		bench_log("unexpected CM event %" PRIu32 " (wanted %" PRIu32 ")", event, want);
		if (event == FI_CONNREQ && entry->info)
			fi_freeinfo(entry->info);
		return -1;
	}
	if (plen)
		*plen = (size_t)ret > sizeof(struct fi_eq_cm_entry)
				? (size_t)ret - sizeof(struct fi_eq_cm_entry)
				: 0;
	return 0;
}

/* fab_open_fabric -- fabric and EQ for an fi_info */
static int fab_open_fabric(struct fi_info *info, struct fid_fabric **fabric, struct fid_eq **eq)
{
	struct fi_eq_attr eq_attr = {.size = 64, .wait_obj = FI_WAIT_UNSPEC};
	int ret;

	ret = fi_fabric(info->fabric_attr, fabric, NULL);
	if (ret) {
		bfab_err("fi_fabric", ret);
		return -1;
	}
	ret = fi_eq_open(*fabric, &eq_attr, eq, NULL);
	if (ret) {
		bfab_err("fi_eq_open", ret);
		return -1;
	}
	bfab_describe_fabric(info);
	return 0;
}

/* fab_client_open -- connect to the server */
static int fab_client_open(const struct bench_cfg *cfg, const uint8_t *hello, size_t hello_len,
			   struct bench_conn **conn)
{
	union {
		struct fi_eq_cm_entry e;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + PDATA_MAX];
	} ev;
	struct fab_conn *fc = calloc(1, sizeof(*fc));
	size_t plen;
	int ret;

	if (fc == NULL) {
		bench_log("out of memory");
		return -1;
	}
	fc->info = bfab_getinfo(cfg, fab_hints(), 0);
	if (fc->info == NULL)
		goto err;
	if (fab_open_fabric(fc->info, &fc->f.fabric, &fc->eq))
		goto err;
	if (fab_conn_setup(fc, fc->info, fc->eq, cfg->max_size, 1, cfg->window, cfg->block))
		goto err;
	ret = fi_connect(fc->ep, fc->info->dest_addr, hello, hello_len);
	if (ret) {
		bfab_err("fi_connect", ret);
		goto err;
	}
	if (fab_expect(fc->eq, FI_CONNECTED, &ev.e, sizeof(ev), &plen))
		goto err;
	if (plen < BFAB_REGION_SIZE) {
		bench_log("the server sent %zu bytes of private data, not %d", plen,
			  BFAB_REGION_SIZE);
		goto err;
	}
	bfab_region_get(&fc->f, ev.e.data);
	/* the client's EQ is not watched on the data path */
	*conn = &fc->f.base;
	return 0;
err:
	if (fc)
		fab_conn_free(fc, true);
	return -1;
}

/* fab_client_close -- disconnect and release */
static void fab_client_close(struct bench_conn *c)
{
	struct fab_conn *fc = (struct fab_conn *)c;

	fi_shutdown(fc->ep, 0);
	fab_conn_free(fc, true);
}

/* fab_server_shutdown -- stop listening (also a listener half open) */
static void fab_server_shutdown(void *listener)
{
	struct fab_listener *l = listener;

	if (l->pep)
		fi_close(&l->pep->fid);
	if (l->eq)
		fi_close(&l->eq->fid);
	if (l->fabric)
		fi_close(&l->fabric->fid);
	if (l->info)
		fi_freeinfo(l->info);
	free(l);
}

/* fab_server_listen -- a passive endpoint on cfg->addr:cfg->port */
static int fab_server_listen(const struct bench_cfg *cfg, void **listener)
{
	struct fab_listener *l = calloc(1, sizeof(*l));
	int ret;

	if (l == NULL) {
		bench_log("out of memory");
		return -1;
	}
	l->cfg = cfg;
	l->info = bfab_getinfo(cfg, fab_hints(), FI_SOURCE);
	if (l->info == NULL)
		goto err;
	if (fab_open_fabric(l->info, &l->fabric, &l->eq))
		goto err;
	ret = fi_passive_ep(l->fabric, l->info, &l->pep, NULL);
	if (!ret)
		ret = fi_pep_bind(l->pep, &l->eq->fid, 0);
	if (!ret)
		ret = fi_listen(l->pep);
	if (ret) {
		bfab_err("fi_passive_ep/fi_pep_bind/fi_listen", ret);
		goto err;
	}
	*listener = l;
	return 0;
err:
	fab_server_shutdown(l);
	return -1;
}

/* fab_server_accept -- take a connection request, prepare it and accept it */
static int fab_server_accept(void *listener, const struct bench_cfg *cfg, struct bench_conn **conn)
{
	struct fab_listener *l = listener;
	union {
		struct fi_eq_cm_entry e;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + PDATA_MAX];
	} ev;
	uint8_t pdata[BFAB_REGION_SIZE];
	struct fab_conn *fc;
	uint32_t max_size, window;
	unsigned nrecv;
	size_t plen;
	int ret;

	for (;;) {
		ev.e.info = NULL;
		ret = fab_expect(l->eq, FI_CONNREQ, &ev.e, sizeof(ev), &plen);
		if (ret == 0)
			break;
		if (!cfg->loop)
			return -1;
	}
	fc = calloc(1, sizeof(*fc));
	if (fc == NULL) {
		bench_log("out of memory");
		fi_reject(l->pep, ev.e.info->handle, NULL, 0);
		fi_freeinfo(ev.e.info);
		return -1;
	}
	fc->info = ev.e.info;
	fc->f.fabric = l->fabric;
	fc->eq = l->eq;
	fc->pep = l->pep;
	fc->f.server = true;
	if (bench_hello_decode(ev.e.data, plen, &max_size, &window)) {
		fi_reject(l->pep, fc->info->handle, NULL, 0);
		goto err;
	}
	nrecv = BENCH_SERVER_RECVS(window);
	if (fab_conn_setup(fc, fc->info, l->eq, max_size, nrecv, window, cfg->block)) {
		fi_reject(l->pep, fc->info->handle, NULL, 0);
		goto err;
	}
	for (unsigned i = 0; i < nrecv; i++)
		if (fab_recv(&fc->f.base, i, BENCH_CTX(BENCH_CTX_RECV, i)))
			goto err;

	/* the remote region is the data area */
	bfab_region_put(&fc->f, fc->info, pdata);
	if (!cfg->no_progress_thread && bfab_progress_start(&fc->f, fc->cq, true))
		goto err;
	ret = fi_accept(fc->ep, pdata, sizeof(pdata));
	if (ret) {
		bfab_err("fi_accept", ret);
		goto err;
	}
	if (fab_expect(l->eq, FI_CONNECTED, &ev.e, sizeof(ev), NULL))
		goto err;
	*conn = &fc->f.base;
	return 0;
err:
	fab_conn_free(fc, false);
	return -1;
}

/* fab_server_close -- disconnect and release one connection */
static void fab_server_close(struct bench_conn *c)
{
	struct fab_conn *fc = (struct fab_conn *)c;

	fi_shutdown(fc->ep, 0);
	fab_conn_free(fc, false);
}

static const struct bench_transport fab_transport = {
	.tool = "baseline-fabric",
	.extra_usage =
		"      --no-progress-thread  server: no progress thread (tcp targets stall)\n"
		"  environment: FI_PROVIDER=tcp|net|sockets (default tcp)\n"
		"               BENCH_FI_WRITE_LEVEL=none|delivery|commit: add\n"
		"               FI_DELIVERY_COMPLETE or FI_COMMIT_COMPLETE to every write\n",
	.describe = bfab_describe,
	.client_open = fab_client_open,
	.client_close = fab_client_close,
	.server_listen = fab_server_listen,
	.server_accept = fab_server_accept,
	.server_close = fab_server_close,
	.server_shutdown = fab_server_shutdown,
};

/* main -- the raw libfabric baseline */
int main(int argc, char *argv[])
{
	if (bfab_env("baseline-fabric", ""))
		return 2;
	return bench_main(argc, argv, &fab_transport);
}
