/* SPDX-License-Identifier: BSD-3-Clause */
/* baseline-verbs.c -- the benchmark over raw verbs (rdma_cm + ibv_post_send), the verbs provider's yardstick */

/*
 * The same engine as rpma-bench (bench.c) over libibverbs calls made
 * directly on an RC queue pair connected with librdmacm: RDMA write / read
 * / send / write-with-immediate work requests with sq_sig_all = 0, a flush
 * as an 8-byte RDMA read behind the writes (the appliance persistency
 * method), an atomic write as an 8-byte inline, fenced RDMA write (what
 * librpma does without native atomic write), blocking completions through
 * a completion channel.  Needs an RDMA device (e.g. Soft-RoCE).
 */

#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define SRV_PDATA     24 /* u64 addr | u64 len | u32 rkey | u32 reserved */
#define CM_TIMEOUT_MS 5000
#define IDLE_CHECKS   4096
#define MAX_INLINE    8

static char vb_desc[160] = "verbs (raw)";

struct vb_conn {
	struct bench_conn base; /* first: the engine's view */
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	bool qp_created;
	char *buf; /* data | 2 send slots | receive slots | 8-byte flush target */
	size_t buf_len;
	char *data, *flush_dst;
	uint64_t raddr, rlen;
	uint32_t rkey;
	bool server;
	unsigned idle;
	char atomic_src[8] __attribute__((aligned(8)));
};

struct vb_listener {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
};

/* vb_describe -- the header description */
static const char *vb_describe(void)
{
	return vb_desc;
}

/* ------------------------------------------------------------- data path */

/* vb_post -- one work request on the send queue */
static int vb_post(struct vb_conn *vc, enum ibv_wr_opcode opcode, void *local, size_t len,
		   unsigned flags, uint32_t imm, uint64_t ctx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = vc->mr->lkey};
	struct ibv_send_wr wr =
				   {
					   .wr_id = ctx,
					   .sg_list = &sge,
					   .num_sge = 1,
					   .opcode = opcode,
					   .send_flags = flags,
				   },
			   *bad;
	int ret;

	if (opcode != IBV_WR_SEND) {
		if (len > vc->rlen) {
			bench_log("%zu B does not fit the remote region (%" PRIu64 " B)", len,
				  vc->rlen);
			return BENCH_E_FAIL;
		}
		wr.wr.rdma.remote_addr = vc->raddr;
		wr.wr.rdma.rkey = vc->rkey;
	}
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm);
	ret = ibv_post_send(vc->id->qp, &wr, &bad);
	if (ret) {
		bench_log("ibv_post_send: %s", strerror(ret));
		return BENCH_E_FAIL;
	}
	return 0;
}

/* vb_sig -- IBV_SEND_SIGNALED when signaled */
static inline unsigned vb_sig(bool signaled)
{
	return signaled ? IBV_SEND_SIGNALED : 0;
}

/* vb_write -- RDMA write of len bytes to remote offset 0 */
static int vb_write(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	return vb_post(vc, IBV_WR_RDMA_WRITE, vc->data, len, vb_sig(signaled), 0, ctx);
}

/* vb_read -- RDMA read of len bytes from remote offset 0 */
static int vb_read(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	return vb_post(vc, IBV_WR_RDMA_READ, vc->data, len, vb_sig(signaled), 0, ctx);
}

/* vb_flush -- an 8-byte RDMA read behind the writes */
static int vb_flush(struct bench_conn *c, size_t len, bool persistent, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	(void)len;
	(void)persistent;
	return vb_post(vc, IBV_WR_RDMA_READ, vc->flush_dst, 8, IBV_SEND_SIGNALED, 0, ctx);
}

/* vb_atomic_write -- an 8-byte inline RDMA write fenced behind earlier reads */
static int vb_atomic_write(struct bench_conn *c, bool signaled, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	return vb_post(vc, IBV_WR_RDMA_WRITE, vc->atomic_src, 8,
		       IBV_SEND_INLINE | IBV_SEND_FENCE | vb_sig(signaled), 0, ctx);
}

/* vb_write_imm -- RDMA write with immediate */
static int vb_write_imm(struct bench_conn *c, size_t len, uint32_t imm, bool signaled, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	return vb_post(vc, IBV_WR_RDMA_WRITE_WITH_IMM, vc->data, len, vb_sig(signaled), imm, ctx);
}

/* vb_send -- send from a send slot */
static int vb_send(struct bench_conn *c, unsigned slot, size_t len, bool signaled, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;

	return vb_post(vc, IBV_WR_SEND, c->sbuf + (size_t)slot * c->slot_size, len,
		       vb_sig(signaled), 0, ctx);
}

/* vb_recv -- post a receive into a receive slot */
static int vb_recv(struct bench_conn *c, unsigned slot, uint64_t ctx)
{
	struct vb_conn *vc = (struct vb_conn *)c;
	struct ibv_sge sge = {.addr = (uintptr_t)(c->rbuf + (size_t)slot * c->slot_size),
			      .length = (uint32_t)c->slot_size,
			      .lkey = vc->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = ctx, .sg_list = &sge, .num_sge = 1}, *bad;
	int ret = ibv_post_recv(vc->id->qp, &wr, &bad);

	if (ret) {
		bench_log("ibv_post_recv: %s", strerror(ret));
		return BENCH_E_FAIL;
	}
	return 0;
}

/* vb_peer_gone -- a DISCONNECTED (or any other) CM event waits on the channel */
static bool vb_peer_gone(struct vb_conn *vc)
{
	struct pollfd p = {.fd = vc->ec->fd, .events = POLLIN};
	struct rdma_cm_event *ev;
	bool gone;

	if (poll(&p, 1, 0) != 1 || rdma_get_cm_event(vc->ec, &ev))
		return false;
	gone = ev->event == RDMA_CM_EVENT_DISCONNECTED || ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT;
	rdma_ack_cm_event(ev);
	return gone;
}

/* vb_wait -- block on the completion channel, then re-arm the CQ */
static int vb_wait(struct vb_conn *vc)
{
	struct ibv_cq *cq;
	void *ctx;

	if (vc->server) {
		struct pollfd p[2] = {{.fd = vc->ch->fd, .events = POLLIN},
				      {.fd = vc->ec->fd, .events = POLLIN}};
		int ret = poll(p, 2, 1000);

		if (ret > 0 && (p[1].revents & POLLIN) && vb_peer_gone(vc))
			return BENCH_E_CLOSED;
		if (ret <= 0 || !(p[0].revents & POLLIN))
			return 0;
	}
	if (ibv_get_cq_event(vc->ch, &cq, &ctx)) {
		bench_log("ibv_get_cq_event: %s", strerror(errno));
		return BENCH_E_FAIL;
	}
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0)) {
		bench_log("ibv_req_notify_cq failed");
		return BENCH_E_FAIL;
	}
	return 0;
}

/* vb_poll -- ibv_poll_cq, and the completion channel when blocking */
static int vb_poll(struct bench_conn *c, struct bench_wc *wc, int max, int *got, bool block)
{
	struct vb_conn *vc = (struct vb_conn *)c;
	struct ibv_wc w[32];
	int n;

	if (max > 32)
		max = 32;
	*got = 0;
	n = ibv_poll_cq(vc->cq, max, w);
	if (n == 0) {
		if (block) {
			int ret = vb_wait(vc);

			if (ret)
				return ret;
			n = ibv_poll_cq(vc->cq, max, w);
		} else if (vc->server && ++vc->idle >= IDLE_CHECKS) {
			vc->idle = 0;
			if (vb_peer_gone(vc))
				return BENCH_E_CLOSED;
		}
	}
	if (n < 0) {
		bench_log("ibv_poll_cq failed (%d)", n);
		return BENCH_E_FAIL;
	}
	vc->idle = 0;
	for (int i = 0; i < n; i++) {
		wc[i] = (struct bench_wc){
			.ctx = w[i].wr_id,
			.len = w[i].byte_len,
			.ok = w[i].status == IBV_WC_SUCCESS,
			.status = (int)w[i].status,
		};
		if (w[i].status == IBV_WC_SUCCESS && (w[i].wc_flags & IBV_WC_WITH_IMM)) {
			wc[i].has_imm = true;
			wc[i].imm = ntohl(w[i].imm_data);
		}
		if (!wc[i].ok)
			bench_log("completion: %s", ibv_wc_status_str(w[i].status));
	}
	*got = n;
	return 0;
}

static const struct bench_xops vb_xops = {
	.write = vb_write,
	.read = vb_read,
	.flush = vb_flush,
	.atomic_write = vb_atomic_write,
	.write_imm = vb_write_imm,
	.send = vb_send,
	.recv = vb_recv,
	.poll = vb_poll,
};

/* ------------------------------------------------------ connection setup */

/* vb_get_event -- the next CM event on ec, which must be 'want' */
static int vb_get_event(struct rdma_event_channel *ec, enum rdma_cm_event_type want,
			struct rdma_cm_event **out)
{
	struct pollfd p = {.fd = ec->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, CM_TIMEOUT_MS * 6) != 1) {
		bench_log("no %s within %d ms", rdma_event_str(want), CM_TIMEOUT_MS * 6);
		return -1;
	}
	if (rdma_get_cm_event(ec, &ev)) {
		bench_log("rdma_get_cm_event: %s", strerror(errno));
		return -1;
	}
	if (ev->event != want) {
		bench_log("got %s (status %d), wanted %s", rdma_event_str(ev->event), ev->status,
			  rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

/* vb_setup -- PD, CQ with its channel, QP and memory on a resolved id */
static int vb_setup(struct vb_conn *vc, size_t slot_size, unsigned nrecv, unsigned window)
{
	struct ibv_qp_init_attr attr = {0};
	size_t data_len = slot_size < 4096 ? 4096 : slot_size;
	int cqe = 4 * (int)window + 2 * (int)nrecv + 16;

	vc->base.x = &vb_xops;
	vc->pd = ibv_alloc_pd(vc->id->verbs);
	if (vc->pd == NULL) {
		bench_log("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	vc->ch = ibv_create_comp_channel(vc->id->verbs);
	if (vc->ch == NULL) {
		bench_log("ibv_create_comp_channel: %s", strerror(errno));
		return -1;
	}
	vc->cq = ibv_create_cq(vc->id->verbs, cqe, NULL, vc->ch, 0);
	if (vc->cq == NULL || ibv_req_notify_cq(vc->cq, 0)) {
		bench_log("ibv_create_cq/ibv_req_notify_cq: %s", strerror(errno));
		return -1;
	}
	attr.send_cq = vc->cq;
	attr.recv_cq = vc->cq;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	attr.cap.max_send_wr = 2 * window + 8;
	attr.cap.max_recv_wr = nrecv + 2;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = MAX_INLINE;
	if (rdma_create_qp(vc->id, vc->pd, &attr)) {
		bench_log("rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	vc->qp_created = true;
	vc->buf_len = data_len + (2 + (size_t)nrecv) * slot_size + 64;
	vc->buf = bench_alloc(vc->buf_len);
	if (vc->buf == NULL) {
		bench_log("cannot allocate %zu bytes", vc->buf_len);
		return -1;
	}
	vc->data = vc->buf;
	vc->base.sbuf = vc->buf + data_len;
	vc->base.rbuf = vc->base.sbuf + 2 * slot_size;
	vc->base.slot_size = slot_size;
	vc->base.nrecv = nrecv;
	vc->flush_dst = vc->base.rbuf + (size_t)nrecv * slot_size;
	memcpy(vc->atomic_src, "ATOMIC!", 8);
	vc->mr = ibv_reg_mr(vc->pd, vc->buf, vc->buf_len,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
	if (vc->mr == NULL) {
		bench_log("ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	snprintf(vb_desc, sizeof(vb_desc), "verbs (raw) dev=%s",
		 ibv_get_device_name(vc->id->verbs->device));
	return 0;
}

/* vb_conn_free -- release everything (the id last) */
static void vb_conn_free(struct vb_conn *vc, bool disconnect)
{
	if (disconnect && vc->id) {
		if (rdma_disconnect(vc->id) == 0) {
			/* wait a bounded time for our DISCONNECTED */
			for (int i = 0; i < 4; i++) {
				struct pollfd p = {.fd = vc->ec->fd, .events = POLLIN};
				struct rdma_cm_event *ev;
				bool done;

				if (poll(&p, 1, 1000) != 1 || rdma_get_cm_event(vc->ec, &ev))
					break;
				done = ev->event == RDMA_CM_EVENT_DISCONNECTED;
				rdma_ack_cm_event(ev);
				if (done)
					break;
			}
		}
	}
	if (vc->qp_created)
		rdma_destroy_qp(vc->id);
	if (vc->mr)
		ibv_dereg_mr(vc->mr);
	if (vc->cq)
		ibv_destroy_cq(vc->cq);
	if (vc->ch)
		ibv_destroy_comp_channel(vc->ch);
	if (vc->pd)
		ibv_dealloc_pd(vc->pd);
	if (vc->id)
		rdma_destroy_id(vc->id);
	if (vc->ec)
		rdma_destroy_event_channel(vc->ec);
	free(vc->buf);
	free(vc);
}

/* vb_resolve -- the socket address of addr:port */
static int vb_resolve(const char *addr, const char *port, bool passive, struct sockaddr_storage *sa)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	int ret;

	if (passive)
		hints.ai_flags = AI_PASSIVE;
	ret = getaddrinfo(addr, port, &hints, &ai);
	if (ret) {
		bench_log("getaddrinfo(%s, %s): %s", addr, port, gai_strerror(ret));
		return -1;
	}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

/* vb_conn_param -- connection parameters as librpma sets them */
static void vb_conn_param(struct rdma_conn_param *p, const void *pdata, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = pdata;
	p->private_data_len = (uint8_t)len;
	p->responder_resources = RDMA_MAX_RESP_RES;
	p->initiator_depth = RDMA_MAX_INIT_DEPTH;
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* put_u64 -- store v little-endian */
static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* get_u64 -- load a little-endian u64 */
static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* vb_client_open -- resolve, build the QP, connect, read the server's region */
static int vb_client_open(const struct bench_cfg *cfg, const uint8_t *hello, size_t hello_len,
			  struct bench_conn **conn)
{
	struct vb_conn *vc = calloc(1, sizeof(*vc));
	struct sockaddr_storage sa;
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;
	const uint8_t *p;

	if (vc == NULL) {
		bench_log("out of memory");
		return -1;
	}
	if (vb_resolve(cfg->addr, cfg->port, false, &sa))
		goto err;
	vc->ec = rdma_create_event_channel();
	if (vc->ec == NULL || rdma_create_id(vc->ec, &vc->id, NULL, RDMA_PS_TCP)) {
		bench_log("rdma_create_event_channel/rdma_create_id: %s", strerror(errno));
		goto err;
	}
	if (rdma_resolve_addr(vc->id, NULL, (struct sockaddr *)&sa, CM_TIMEOUT_MS)) {
		bench_log("rdma_resolve_addr: %s", strerror(errno));
		goto err;
	}
	if (vb_get_event(vc->ec, RDMA_CM_EVENT_ADDR_RESOLVED, NULL))
		goto err;
	if (rdma_resolve_route(vc->id, CM_TIMEOUT_MS)) {
		bench_log("rdma_resolve_route: %s", strerror(errno));
		goto err;
	}
	if (vb_get_event(vc->ec, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		goto err;
	if (vb_setup(vc, cfg->max_size, 1, cfg->window))
		goto err;
	vb_conn_param(&param, hello, hello_len);
	if (rdma_connect(vc->id, &param)) {
		bench_log("rdma_connect: %s", strerror(errno));
		goto err;
	}
	if (vb_get_event(vc->ec, RDMA_CM_EVENT_ESTABLISHED, &ev))
		goto err;
	p = ev->param.conn.private_data;
	if (p == NULL || ev->param.conn.private_data_len < SRV_PDATA) {
		bench_log("the server's private data is too short");
		rdma_ack_cm_event(ev);
		goto err;
	}
	vc->raddr = get_u64(p);
	vc->rlen = get_u64(p + 8);
	vc->rkey = (uint32_t)get_u64(p + 16);
	rdma_ack_cm_event(ev);
	*conn = &vc->base;
	return 0;
err:
	vb_conn_free(vc, false);
	return -1;
}

/* vb_client_close -- disconnect and release */
static void vb_client_close(struct bench_conn *c)
{
	vb_conn_free((struct vb_conn *)c, true);
}

/* vb_server_listen -- a listening rdma_cm id on cfg->addr:cfg->port */
static int vb_server_listen(const struct bench_cfg *cfg, void **listener)
{
	struct vb_listener *l = calloc(1, sizeof(*l));
	struct sockaddr_storage sa;

	if (l == NULL) {
		bench_log("out of memory");
		return -1;
	}
	if (vb_resolve(cfg->addr, cfg->port, true, &sa))
		goto err;
	l->ec = rdma_create_event_channel();
	if (l->ec == NULL || rdma_create_id(l->ec, &l->id, NULL, RDMA_PS_TCP)) {
		bench_log("rdma_create_event_channel/rdma_create_id: %s", strerror(errno));
		goto err;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&sa) || rdma_listen(l->id, 8)) {
		bench_log("rdma_bind_addr/rdma_listen(%s:%s): %s", cfg->addr, cfg->port,
			  strerror(errno));
		goto err;
	}
	*listener = l;
	return 0;
err:
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ec)
		rdma_destroy_event_channel(l->ec);
	free(l);
	return -1;
}

/* vb_server_accept -- take a request, move it to its own channel, accept */
static int vb_server_accept(void *listener, const struct bench_cfg *cfg, struct bench_conn **conn)
{
	struct vb_listener *l = listener;
	struct rdma_cm_event *ev;
	struct rdma_conn_param param;
	uint8_t hello[BENCH_HELLO_SIZE], pdata[SRV_PDATA] = {0};
	uint32_t max_size, window;
	size_t hlen;
	struct vb_conn *vc;
	struct pollfd p = {.fd = l->ec->fd, .events = POLLIN};

	if (poll(&p, 1, -1) != 1 || rdma_get_cm_event(l->ec, &ev)) {
		bench_log("rdma_get_cm_event: %s", strerror(errno));
		return -1;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		bench_log("unexpected %s on the listener", rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return -1;
	}
	vc = calloc(1, sizeof(*vc));
	hlen = ev->param.conn.private_data_len;
	if (hlen > sizeof(hello))
		hlen = sizeof(hello);
	if (ev->param.conn.private_data)
		memcpy(hello, ev->param.conn.private_data, hlen);
	else
		hlen = 0;
	if (vc == NULL || bench_hello_decode(hello, hlen, &max_size, &window)) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
		free(vc);
		return -1;
	}
	vc->id = ev->id;
	vc->server = true;
	rdma_ack_cm_event(ev);
	/* its own event channel, so the listener's stays for new requests */
	vc->ec = rdma_create_event_channel();
	if (vc->ec == NULL || rdma_migrate_id(vc->id, vc->ec)) {
		bench_log("rdma_create_event_channel/rdma_migrate_id: %s", strerror(errno));
		rdma_reject(vc->id, NULL, 0);
		goto err;
	}
	if (vb_setup(vc, max_size, BENCH_SERVER_RECVS(window), window)) {
		rdma_reject(vc->id, NULL, 0);
		goto err;
	}
	for (unsigned i = 0; i < vc->base.nrecv; i++)
		if (vb_recv(&vc->base, i, BENCH_CTX(BENCH_CTX_RECV, i)))
			goto err;
	put_u64(pdata, (uintptr_t)vc->data);
	put_u64(pdata + 8, (uint64_t)(vc->base.sbuf - vc->data));
	put_u64(pdata + 16, vc->mr->rkey);
	vb_conn_param(&param, pdata, sizeof(pdata));
	if (rdma_accept(vc->id, &param)) {
		bench_log("rdma_accept: %s", strerror(errno));
		goto err;
	}
	if (vb_get_event(vc->ec, RDMA_CM_EVENT_ESTABLISHED, NULL))
		goto err;
	(void)cfg;
	*conn = &vc->base;
	return 0;
err:
	vb_conn_free(vc, false);
	return -1;
}

/* vb_server_close -- disconnect and release one connection */
static void vb_server_close(struct bench_conn *c)
{
	vb_conn_free((struct vb_conn *)c, true);
}

/* vb_server_shutdown -- stop listening */
static void vb_server_shutdown(void *listener)
{
	struct vb_listener *l = listener;

	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->ec);
	free(l);
}

static const struct bench_transport vb_transport = {
	.tool = "baseline-verbs",
	.extra_usage = NULL,
	.describe = vb_describe,
	.client_open = vb_client_open,
	.client_close = vb_client_close,
	.server_listen = vb_server_listen,
	.server_accept = vb_server_accept,
	.server_close = vb_server_close,
	.server_shutdown = vb_server_shutdown,
};

/* main -- the raw verbs baseline */
int main(int argc, char *argv[])
{
	return bench_main(argc, argv, &vb_transport);
}
