/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_srq.c -- shared receive queues, emulated over per-connection bounce buffers */

/*
 * libfabric's shared receive contexts cannot tell which endpoint a message
 * arrived on, but a librpma user needs wc.qp_num for that.  So the SRQ is
 * emulated: each attached connection keeps a few bounce buffers posted; a
 * message landing in one is copied into the oldest buffer posted with
 * rpma_srq_recv() and completed on the receive CQ with that buffer's
 * op_context; while no buffer is posted, the message waits in its bounce
 * buffer (and the connection's stream stalls once all of them are taken,
 * which plays the part of verbs' receiver-not-ready flow control).
 *
 * Bounce buffers are as long as the longest buffer posted to the SRQ so far
 * (at least FAB_BOUNCE_MIN).  A buffer longer than that, posted after a
 * connection attached, makes the connection's bounce buffers grow: those
 * posted are cancelled (fi_cancel), those holding a message are delivered
 * as usual, and once none is left on the endpoint the slab is replaced and
 * the bounce buffers are posted again at the new length (fewer of them when
 * they are long: FAB_BOUNCE_BUDGET).  A message that
 * reaches a bounce buffer before that (already in flight, or a transport
 * that cannot cancel receives: then the old buffers are used up one by one
 * first) can still be truncated.
 *
 * Over libfabric's verbs provider the emulation cannot keep that promise:
 * its endpoints and shared receive contexts have no fi_cancel (fi_no_cancel
 * in prov/verbs/src/verbs_ep.c), and a verbs receive queue hands the next
 * message to the oldest posted receive, so a message longer than the bounce
 * buffers posted before a longer buffer was posted lands in a short one and
 * the queue pair fails (IBV_WC_LOC_LEN_ERR).  There the SRQ is libfabric's
 * own shared receive context instead (fi_srx_context, an ibv_srq): buffers
 * posted with rpma_srq_recv() go to it as they are, each connection's
 * endpoint is bound to it, and a message completes on the receive CQ of the
 * endpoint it arrived on (the queue pair's receive CQ), which is the
 * connection's own: so the completion still names the connection.  No bounce
 * buffer, no copy, no memory beyond what was posted, and every buffer takes a
 * message of its own length, as on verbs.
 */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

/*
 * the smallest bounce buffer, the most bounce buffers per connection, and
 * the memory a connection's bounce buffers may take together: beyond it a
 * connection gets fewer of them, down to one as long as the longest buffer
 * posted (so a connection costs at most max(FAB_BOUNCE_BUDGET, the longest
 * buffer posted), not FAB_BOUNCE_MAX_N times that)
 */
#define FAB_BOUNCE_MIN	  4096
#define FAB_BOUNCE_MAX_N  16
#define FAB_BOUNCE_BUDGET (1024 * 1024)

/* fab_bounce_count -- how many bounce buffers of size bytes a connection keeps (of at most n) */
static size_t fab_bounce_count(size_t n, size_t size)
{
	size_t fit = FAB_BOUNCE_BUDGET / size;
	if (fit < 1)
		fit = 1;
	return fit < n ? fit : n;
}

/*
 * fab_srx_open -- over libfabric's verbs, open the shared receive context the
 * SRQ uses instead of the emulation (see the top of this file); elsewhere, or
 * when libfabric refuses, s->srx stays NULL and the SRQ is emulated
 */
static void fab_srx_open(struct fab_srq *s)
{
	struct fab_peer *p = s->peer;
	if (!p->verbs)
		return;
	struct fi_rx_attr attr = *p->info->rx_attr;
	attr.caps = FI_MSG | FI_RECV;
	attr.op_flags = 0;
	attr.size = s->rq_size;
	attr.iov_limit = 1;
	int ret = fi_srx_context(p->domain, &attr, &s->srx, NULL);
	if (ret) {
		s->srx = NULL;
		FAB_LOG_WARNING("libfabric provider %s refused a shared receive context (%s): the "
				"SRQ is emulated, and a connection's internal buffers cannot grow "
				"to a longer buffer posted after it attached",
				p->info->fabric_attr->prov_name, fi_strerror(-ret));
		return;
	}
	FAB_LOG_INFO("SRQ of %u buffers: libfabric's shared receive context", s->rq_size);
}

/* fab_srq_new -- an empty SRQ of rq_size buffers with an optional receive CQ */
int fab_srq_new(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size, struct rpma_cq *rcq,
		uint32_t rcq_size)
{
	struct fab_srq *s = fab_srq(srq);
	s->peer = fab_peer(peer);
	s->rq_size = rq_size ? rq_size : 1;
	s->cap = s->rq_size;
	s->bufs = calloc(s->cap, sizeof(*s->bufs));
	if (s->bufs == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	if (rcq) {
		int ret = fab_cq_init(fab_cq(rcq), rcq_size, NULL, true, s->peer->eager_fds);
		if (ret) {
			free(s->bufs);
			s->bufs = NULL;
			return ret;
		}
		s->rcq = fab_cq(rcq);
	}
	pthread_mutex_init(&s->lock, NULL);
	fab_srx_open(s);
	return 0;
}

/* fab_srq_delete -- release the SRQ (the connections using it are gone) */
int fab_srq_delete(struct rpma_srq *srq)
{
	struct fab_srq *s = fab_srq(srq);
	if (s->pend_head)
		FAB_LOG_WARNING("SRQ deleted while connections still use it");
	int ret = 0;
	if (s->srx) {
		int r = fi_close(&s->srx->fid);
		if (r) {
			FAB_LOG_FI(r, "fi_close(srx)");
			ret = fab_err(r);
		}
		s->srx = NULL;
	}
	if (s->rcq)
		fab_cq_fini(s->rcq);
	free(s->bufs);
	s->bufs = NULL;
	pthread_mutex_destroy(&s->lock);
	return ret;
}

static void fab_bounce_regrow_try(struct fab_srq *s, struct fab_conn *c);

/*
 * fab_bounce_post -- (re)post a bounce buffer on its connection (the SRQ's
 * lock held, or the connection not yet on the SRQ's list); while the
 * connection's bounce buffers grow, the buffer stays aside instead
 */
static void fab_bounce_post(struct fab_bounce *b)
{
	struct fab_conn *c = b->conn;
	b->pending = false;
	if (atomic_load(&c->state) == FAB_CONN_DONE)
		return; /* the connection is over: nothing will arrive */
	if (c->bounce_regrow) {
		c->bounce_idle++;
		fab_bounce_regrow_try(c->srq, c);
		return;
	}
	struct iovec iov = {.iov_base = b->buf, .iov_len = c->bounce_size};
	void *desc = c->bounce_desc;
	struct fi_msg msg = {.msg_iov = &iov,
			     .desc = &desc,
			     .iov_count = 1,
			     .addr = FI_ADDR_UNSPEC,
			     .context = b};
	b->posted = true;
	ssize_t ret = fab_recvmsg(c, &msg, FI_COMPLETION);
	if (ret) {
		b->posted = false;
		RPMA_LOG_ERROR("fabric: qp %u: reposting an SRQ bounce buffer failed: %s",
			       c->qp_num, fi_strerror((int)-ret));
	}
}

/* fab_bounce_slab -- a registered slab of n bounce buffers of size bytes */
static int fab_bounce_slab(struct fab_conn *c, size_t n, size_t size, char **mem,
			   struct fid_mr **mr, void **desc)
{
	*mem = malloc(n * size);
	if (*mem == NULL) {
		FAB_LOG_ERROR("out of memory for %zu SRQ bounce buffers of %zu bytes", n, size);
		return RPMA_E_NOMEM;
	}
	uint64_t key;
	int ret = fab_peer_reg(c->peer, *mem, n * size, FI_RECV, false, mr, desc, &key);
	if (ret) {
		free(*mem);
		*mem = NULL;
	}
	return ret;
}

/*
 * fab_bounce_regrow_try -- once none of c's bounce buffers is posted or holds
 * a message, replace the slab by one of the SRQ's current length and post
 * them all again (lock held); when that fails, the old ones are posted again
 */
static void fab_bounce_regrow_try(struct fab_srq *s, struct fab_conn *c)
{
	if (c->bounce_idle < c->bounce_active || atomic_load(&c->state) == FAB_CONN_DONE)
		return;
	size_t size = s->max_len > FAB_BOUNCE_MIN ? s->max_len : FAB_BOUNCE_MIN;
	size_t n = fab_bounce_count(c->nbounces, size);
	char *mem;
	struct fid_mr *mr;
	void *desc;
	if (size > c->bounce_size && fab_bounce_slab(c, n, size, &mem, &mr, &desc) == 0) {
		int r = fi_close(&c->bounce_mr->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(bounce mr)");
		free(c->bounce_mem);
		c->bounce_mem = mem;
		c->bounce_mr = mr;
		c->bounce_desc = desc;
		c->bounce_size = size;
		c->bounce_active = n;
		for (size_t i = 0; i < n; i++)
			c->bounces[i].buf = mem + i * size;
		FAB_LOG_INFO("qp %u: SRQ bounce buffers grown to %zu x %zu bytes", c->qp_num, n,
			     size);
	}
	c->bounce_regrow = false;
	c->bounce_idle = 0;
	for (size_t i = 0; i < c->bounce_active; i++)
		fab_bounce_post(&c->bounces[i]);
}

/*
 * fab_bounce_regrow -- c's bounce buffers are shorter than a buffer just
 * posted to the SRQ: take those posted back (lock held)
 */
static void fab_bounce_regrow(struct fab_srq *s, struct fab_conn *c)
{
	if (c->bounce_regrow || atomic_load(&c->state) == FAB_CONN_DONE)
		return;
	c->bounce_regrow = true;
	c->bounce_idle = 0;
	for (size_t i = 0; i < c->bounce_active; i++) {
		struct fab_bounce *b = &c->bounces[i];
		if (!b->posted && !b->pending)
			c->bounce_idle++; /* its repost failed before */
	}
	for (size_t i = 0; i < c->bounce_active; i++) {
		struct fab_bounce *b = &c->bounces[i];
		if (!b->posted)
			continue;
		/* a buffer a message already fills completes as usual instead */
		int r = fi_cancel(&c->ep->fid, b);
		if (r == 0)
			continue;
		if (!s->no_cancel_logged) {
			s->no_cancel_logged = true;
			FAB_LOG_WARNING("libfabric provider %s cannot cancel receives (%s): a "
					"connection's SRQ bounce buffers grow to a longer buffer "
					"posted later only after its current ones took a message "
					"each; a longer message arriving meanwhile is truncated",
					c->peer->info->fabric_attr->prov_name, fi_strerror(-r));
		}
		break;
	}
	fab_bounce_regrow_try(s, c);
}

/* fab_srq_cancelled -- a bounce buffer came back cancelled (from draining c's RX CQ) */
void fab_srq_cancelled(struct fab_conn *c, struct fab_bounce *b)
{
	struct fab_srq *s = c->srq;
	pthread_mutex_lock(&s->lock);
	b->posted = false;
	if (c->bounce_regrow) {
		c->bounce_idle++;
		fab_bounce_regrow_try(s, c);
	}
	pthread_mutex_unlock(&s->lock);
}

/* fab_srq_deliver -- complete a message into a posted SRQ buffer (lock held) */
static void fab_srq_deliver(struct fab_bounce *b, const struct fab_srq_buf *u)
{
	struct fab_conn *c = b->conn;
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = (uint64_t)(uintptr_t)u->op_context;
	wc.qp_num = c->qp_num;
	wc.opcode = IBV_WC_RECV;
	if (b->err) {
		wc.status = fab_wc_status_of(c->peer, b->err, b->prov_errno);
		wc.vendor_err = (uint32_t)b->prov_errno;
	} else {
		wc.status = IBV_WC_SUCCESS;
		if (!fab_wc_rx_kind(c->peer, &wc, b->flags, b->data, b->len)) {
			/* a message: its bytes move from the bounce buffer to the user's */
			if (b->len > u->len) {
				wc.status = IBV_WC_LOC_LEN_ERR;
				wc.byte_len = 0;
				wc.wc_flags = 0;
				wc.imm_data = 0;
			} else if (b->len) {
				memcpy(u->ptr, b->buf, b->len);
			}
		}
	}
	fab_cq_push(c->recv_target, &wc);
}

/*
 * fab_srq_arrived -- a bounce buffer of c got a message (called while
 * draining c's RX CQ, with an entry of c's receive target reserved): true
 * when a posted buffer took it (the reservation is used), false when it waits
 */
bool fab_srq_arrived(struct fab_conn *c, struct fab_bounce *b)
{
	struct fab_srq *s = c->srq;
	pthread_mutex_lock(&s->lock);
	b->posted = false;
	if (s->count > 0) {
		struct fab_srq_buf u = s->bufs[s->head];
		s->head = (s->head + 1) % s->cap;
		s->count--;
		fab_srq_deliver(b, &u);
		fab_bounce_post(b);
		pthread_mutex_unlock(&s->lock);
		return true;
	} else {
		b->pending = true;
		b->next_pending = NULL;
		if (s->pend_tail)
			s->pend_tail->next_pending = b;
		else
			s->pend_head = b;
		s->pend_tail = b;
	}
	pthread_mutex_unlock(&s->lock);
	return false;
}

/* fab_srx_recv -- post a buffer to libfabric's shared receive context */
static int fab_srx_recv(struct fab_srq *s, const struct fab_srq_buf *u, void *desc)
{
	struct iovec iov = {.iov_base = u->ptr, .iov_len = u->len};
	struct fi_msg msg = {
		.msg_iov = &iov,
		.desc = u->len ? &desc : NULL, /* libfabric verbs reads desc[0] when not NULL */
		.iov_count = u->len ? 1 : 0,
		.context = (void *)u->op_context,
	};
	ssize_t ret = fi_recvmsg(s->srx, &msg, FI_COMPLETION);
	if (ret == -FI_EAGAIN) {
		FAB_LOG_ERROR("rpma_srq_recv: the shared RQ is full (%u buffers)", s->rq_size);
		return RPMA_E_PROVIDER;
	}
	if (ret) {
		FAB_LOG_FI((int)ret, "fi_recvmsg(srx)");
		return fab_err((int)ret);
	}
	return 0;
}

/* fab_srq_recv -- post a buffer; a message already waiting takes it at once */
int fab_srq_recv(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset, size_t len,
		 const void *op_context)
{
	struct fab_srq *s = fab_srq(srq);
	struct fab_srq_buf u = {
		.ptr = fab_mr_addr(dst, offset),
		.len = len,
		.op_context = op_context,
	};
	if (s->srx)
		return fab_srx_recv(s, &u, fab_mr_desc(dst));
	pthread_mutex_lock(&s->lock);
	if (len > s->max_len) {
		s->max_len = len;
		/* connections whose bounce buffers are shorter grow them */
		for (struct fab_conn *c = s->conns; c != NULL; c = c->srq_next) {
			if (c->bounce_size < len)
				fab_bounce_regrow(s, c);
		}
	}
	struct fab_bounce *b = s->pend_head;
	if (b && fab_cq_reserve(b->conn->recv_target, 1) == 0) {
		/* the message stays with its bounce buffer until a completion can be had */
		pthread_mutex_unlock(&s->lock);
		FAB_LOG_ERROR(
			"rpma_srq_recv: out of memory for the completion of a waiting message");
		return RPMA_E_NOMEM;
	}
	if (b) {
		s->pend_head = b->next_pending;
		if (s->pend_head == NULL)
			s->pend_tail = NULL;
		fab_srq_deliver(b, &u);
		fab_bounce_post(b);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	if (s->count == s->cap) {
		pthread_mutex_unlock(&s->lock);
		FAB_LOG_ERROR("rpma_srq_recv: the shared RQ is full (%u buffers)", s->cap);
		return RPMA_E_PROVIDER;
	}
	s->bufs[(s->head + s->count) % s->cap] = u;
	s->count++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/*
 * fab_srq_bind -- bind a new connection's endpoint to the SRQ's shared receive
 * context, if it has one (before fi_enable): a libfabric error code
 */
int fab_srq_bind(struct fab_srq *s, struct fid_ep *ep)
{
	return s->srx ? fi_ep_bind(ep, &s->srx->fid, 0) : 0;
}

/*
 * fab_srq_attach -- give a new connection its bounce buffers and post them
 * (with a shared receive context: only list the connection)
 */
int fab_srq_attach(struct fab_srq *s, struct fab_conn *c)
{
	if (s->srx) {
		pthread_mutex_lock(&s->lock);
		c->srq_next = s->conns;
		s->conns = c;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	size_t size = s->max_len > FAB_BOUNCE_MIN ? s->max_len : FAB_BOUNCE_MIN;
	pthread_mutex_unlock(&s->lock);
	size_t nmax = s->rq_size < FAB_BOUNCE_MAX_N ? s->rq_size : FAB_BOUNCE_MAX_N;
	size_t n = fab_bounce_count(nmax, size);
	c->bounces = calloc(nmax, sizeof(*c->bounces));
	if (c->bounces == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = fab_bounce_slab(c, n, size, &c->bounce_mem, &c->bounce_mr, &c->bounce_desc);
	if (ret) {
		free(c->bounces);
		c->bounces = NULL;
		return ret;
	}
	c->nbounces = nmax;
	c->bounce_active = n;
	c->bounce_size = size;
	c->bounce_regrow = false;
	c->bounce_idle = 0;
	for (size_t i = 0; i < nmax; i++)
		c->bounces[i].conn = c;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < n; i++) {
		c->bounces[i].buf = c->bounce_mem + i * size;
		fab_bounce_post(&c->bounces[i]);
	}
	/* a longer buffer posted meanwhile: grow at once */
	if (s->max_len > c->bounce_size)
		fab_bounce_regrow(s, c);
	c->srq_next = s->conns;
	s->conns = c;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* fab_srq_detach -- forget the connection and its waiting messages */
void fab_srq_detach(struct fab_srq *s, struct fab_conn *c)
{
	pthread_mutex_lock(&s->lock);
	for (struct fab_conn **cp = &s->conns; *cp != NULL; cp = &(*cp)->srq_next) {
		if (*cp == c) {
			*cp = c->srq_next;
			break;
		}
	}
	c->srq_next = NULL;
	struct fab_bounce **pp = &s->pend_head;
	s->pend_tail = NULL;
	while (*pp) {
		if ((*pp)->conn == c) {
			*pp = (*pp)->next_pending;
			continue;
		}
		s->pend_tail = *pp;
		pp = &(*pp)->next_pending;
	}
	pthread_mutex_unlock(&s->lock);
}
