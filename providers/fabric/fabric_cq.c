/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_cq.c -- software completion queues and channels fed from libfabric CQs */

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric.h"

/* how many libfabric entries one fi_cq_read takes */
#define FAB_CQ_BATCH 16

/*
 * fab_chan_new -- a completion channel, its eventfd made now (eager_fd) or
 * when needed: NOMEM or PROVIDER on failure
 */
int fab_chan_new(struct fab_chan **chan_ptr, bool eager_fd)
{
	struct fab_chan *ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	atomic_init(&ch->efd, -1);
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);
	ch->refs = 1;
	int fd;
	if (eager_fd && fab_chan_get_fd(ch, &fd)) {
		fab_chan_put(ch);
		return RPMA_E_PROVIDER;
	}
	*chan_ptr = ch;
	return 0;
}

/*
 * fab_chan_get_fd -- the channel's eventfd, made now if need be with one
 * count per pending notification; RPMA_E_PROVIDER when it cannot be made
 */
int fab_chan_get_fd(struct fab_chan *ch, int *fd)
{
	/* made once, kept until the channel goes: no lock once it exists */
	int efd = atomic_load(&ch->efd);
	if (efd >= 0) {
		*fd = efd;
		return 0;
	}
	int ret = 0;
	pthread_mutex_lock(&ch->lock);
	efd = atomic_load(&ch->efd);
	if (efd < 0) {
		efd = fab_eventfd(EFD_SEMAPHORE | EFD_CLOEXEC);
		uint64_t n = (uint64_t)ch->nfired;
		if (efd < 0) {
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd()");
			ret = RPMA_E_PROVIDER;
		} else if (n > 0 && write(efd, &n, sizeof(n)) != sizeof(n)) {
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
			close(efd);
			ret = RPMA_E_PROVIDER;
		} else {
			atomic_store(&ch->efd, efd);
			/* a waiter on the condition variable goes over to the fd */
			pthread_cond_broadcast(&ch->cond);
		}
	}
	pthread_mutex_unlock(&ch->lock);
	if (ret == 0)
		*fd = efd;
	return ret;
}

/* fab_chan_put -- drop one reference; the last one closes the channel */
void fab_chan_put(struct fab_chan *ch)
{
	if (ch == NULL)
		return;
	pthread_mutex_lock(&ch->lock);
	int refs = --ch->refs;
	pthread_mutex_unlock(&ch->lock);
	if (refs > 0)
		return;
	int efd = atomic_load(&ch->efd);
	if (efd >= 0)
		close(efd);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

/* fab_cq_init -- a software CQ of size entries notifying through chan (NULL: its own) */
int fab_cq_init(struct fab_cq *cq, uint32_t size, struct fab_chan *chan, bool is_rcq, bool eager_fd)
{
	memset(cq, 0, sizeof(*cq));
	cq->cap = size ? size : 1;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	if (chan) {
		pthread_mutex_lock(&chan->lock);
		chan->refs++;
		pthread_mutex_unlock(&chan->lock);
		cq->chan = chan;
	} else {
		int ret = fab_chan_new(&cq->chan, eager_fd);
		if (ret) {
			free(cq->ring);
			cq->ring = NULL;
			return ret;
		}
	}
	pthread_mutex_init(&cq->lock, NULL);
	pthread_mutex_init(&cq->feed_lock, NULL);
	atomic_init(&cq->avail, (int64_t)cq->cap);
	cq->armed = true; /* armed from birth, as librpma does */
	cq->is_rcq = is_rcq;
	cq->initialized = true;
	return 0;
}

/* fab_cq_fini -- release a software CQ */
void fab_cq_fini(struct fab_cq *cq)
{
	if (!cq->initialized)
		return;
	if (cq->nfeeders)
		FAB_LOG_WARNING("a CQ is released while %d sources still feed it", cq->nfeeders);
	free(cq->feeders);
	free(cq->ring);
	fab_chan_put(cq->chan);
	pthread_mutex_destroy(&cq->feed_lock);
	pthread_mutex_destroy(&cq->lock);
	cq->initialized = false;
}

/*
 * fab_cq_set_direct_src -- (under feed_lock) the feeder fab_cq_read_direct may
 * read: the one feeder of a CQ fed by its own connection only, when it is
 * the connection's send-side libfabric CQ (fab_drain_tx, or fab_drain_tx_rdm
 * over reliable datagrams); NULL otherwise
 */
static void fab_cq_set_direct_src(struct fab_cq *cq)
{
	cq->direct_src = NULL;
	fab_drain_fn *d = cq->nfeeders == 1 ? cq->feeders[0]->drain : NULL;
	if (cq->own_feeders && (d == fab_drain_tx || d == fab_drain_tx_rdm))
		cq->direct_src = cq->feeders[0];
}

/* fab_cq_add_feeder -- let a polling user drain src when cq is empty */
int fab_cq_add_feeder(struct fab_cq *cq, struct fab_source *src)
{
	pthread_mutex_lock(&cq->feed_lock);
	if (cq->nfeeders == cq->feeders_cap) {
		int ncap = cq->feeders_cap ? cq->feeders_cap * 2 : 4;
		struct fab_source **nf = realloc(cq->feeders, (size_t)ncap * sizeof(*nf));
		if (nf == NULL) {
			pthread_mutex_unlock(&cq->feed_lock);
			FAB_LOG_ERROR("out of memory");
			return RPMA_E_NOMEM;
		}
		cq->feeders = nf;
		cq->feeders_cap = ncap;
	}
	cq->feeders[cq->nfeeders++] = src;
	if (!src->shared)
		src->feeds = cq;
	fab_cq_set_direct_src(cq);
	pthread_mutex_unlock(&cq->feed_lock);
	return 0;
}

/* fab_cq_del_feeder -- forget a feeding source */
void fab_cq_del_feeder(struct fab_cq *cq, struct fab_source *src)
{
	pthread_mutex_lock(&cq->feed_lock);
	for (int i = 0; i < cq->nfeeders; i++) {
		if (cq->feeders[i] == src) {
			cq->feeders[i] = cq->feeders[--cq->nfeeders];
			break;
		}
	}
	fab_cq_set_direct_src(cq);
	pthread_mutex_unlock(&cq->feed_lock);
}

/*
 * fab_cq_take_avail -- take up to want of the free entries (none when there
 * are none), without the lock
 */
static uint32_t fab_cq_take_avail(struct fab_cq *cq, uint32_t want)
{
	int64_t a = atomic_load(&cq->avail);
	while (a > 0) {
		uint32_t k = a < (int64_t)want ? (uint32_t)a : want;
		if (atomic_compare_exchange_weak(&cq->avail, &a, a - k))
			return k;
	}
	return 0;
}

/*
 * fab_cq_reserve -- room for up to want completions, growing a full ring:
 * the number of entries reserved, 0 when the ring is full and no memory is
 * left.  Every completion enters a CQ through a reservation, taken before
 * it leaves libfabric (or, for one made by the provider, before the user's
 * call succeeds), so none is ever lost for want of memory: a drainer that
 * gets no room leaves the entries in libfabric's CQ until the user takes
 * completions or memory returns.  Only a full ring that cannot grow gives no
 * room; from the second such attempt in a row on, each waits 1 ms first.
 * While free entries are left (and the CQ is not starved) it takes no lock.
 */
uint32_t fab_cq_reserve(struct fab_cq *cq, uint32_t want)
{
	if (want == 0)
		return 0;
	if (!atomic_load_explicit(&cq->starved, memory_order_relaxed)) {
		uint32_t k = fab_cq_take_avail(cq, want);
		if (k > 0)
			return k;
	}
	pthread_mutex_lock(&cq->lock);
	if (atomic_load(&cq->avail) <= 0) {
		/* a full CQ grows where verbs would overflow (and break the connection) */
		uint32_t ncap = cq->cap <= UINT32_MAX / 2 ? cq->cap * 2 : UINT32_MAX;
		struct ibv_wc *nr = ncap > cq->cap ? malloc(ncap * sizeof(*nr)) : NULL;
		if (nr) {
			for (uint32_t i = 0; i < cq->count; i++)
				nr[i] = cq->ring[(cq->head + i) % cq->cap];
			free(cq->ring);
			cq->ring = nr;
			cq->head = 0;
			if (cq->cap >= 64 && !(cq->cap & (cq->cap - 1)))
				FAB_LOG_DEBUG("CQ grew to %u entries", ncap);
			atomic_fetch_add(&cq->avail, (int64_t)(ncap - cq->cap));
			cq->cap = ncap;
		}
	}
	uint32_t room = fab_cq_take_avail(cq, want);
	bool starved = room == 0;
	bool was = atomic_load(&cq->starved);
	bool report = starved && !was;
	if (room > 0 && was)
		FAB_LOG_NOTICE("a CQ of %u entries has room again", cq->cap);
	atomic_store(&cq->starved, starved);
	uint32_t cap = cq->cap;
	pthread_mutex_unlock(&cq->lock);
	if (report)
		FAB_LOG_ERROR("a CQ of %u entries is full and out of memory: further "
			      "completions wait in libfabric until completions are taken or memory "
			      "returns",
			      cap);
	else if (starved)
		usleep(1000); /* still starved: whoever retries (the progress thread) must not spin */
	return room;
}

/* fab_cq_unreserve -- give back n reserved entries a pusher did not use */
void fab_cq_unreserve(struct fab_cq *cq, uint32_t n)
{
	if (n == 0)
		return;
	atomic_fetch_add(&cq->avail, (int64_t)n);
}

static void fab_cq_notify(struct fab_cq *cq);

/*
 * fab_cq_push -- append a completion into an entry fab_cq_reserve() made
 * room for (the reservation is used up); notify the channel if the CQ is armed
 */
void fab_cq_push(struct fab_cq *cq, const struct ibv_wc *wc)
{
	fab_cq_commit(cq, wc, 1, 1);
}

/*
 * fab_cq_commit -- append n completions (n <= reserved) into entries
 * fab_cq_reserve() made room for, give back the other reserved ones, and
 * notify as fab_cq_push does: one lock for a drained batch
 */
void fab_cq_commit(struct fab_cq *cq, const struct ibv_wc *wc, uint32_t n, uint32_t reserved)
{
	pthread_mutex_lock(&cq->lock);
	if (cq->count + n > cq->cap) {
		/* every caller reserves first: this is a defect of the provider */
		pthread_mutex_unlock(&cq->lock);
		FAB_LOG_ERROR("qp %u: %u completions (the first: wr_id 0x%llx) without a reserved "
			      "CQ entry are lost",
			      wc->qp_num, n, (unsigned long long)wc->wr_id);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		cq->ring[(cq->head + cq->count + i) % cq->cap] = wc[i];
	cq->count += n;
	atomic_store(&cq->filled, cq->count);
	if (reserved > n)
		atomic_fetch_add(&cq->avail, (int64_t)(reserved - n));
	if (n > 0)
		atomic_fetch_add(&cq->pushes, n); /* after filled (fab_cq_push) */
	bool fire = n > 0 && cq->armed && !cq->direct;
	if (fire)
		cq->armed = false;
	pthread_mutex_unlock(&cq->lock);
	if (fire)
		fab_cq_notify(cq);
}

_Thread_local bool fab_cq_woke;

/* fab_cq_notify -- tell the channel that cq fired (its armed flag was cleared under its lock) */
static void fab_cq_notify(struct fab_cq *cq)
{
	struct fab_chan *ch = cq->chan;
	fab_cq_woke = true;
	pthread_mutex_lock(&ch->lock);
	if (ch->nfired < (int)(sizeof(ch->fired) / sizeof(ch->fired[0])))
		ch->fired[ch->nfired++] = cq;
	/* under the lock: the fd, once made, counts every pending notification once */
	int efd = atomic_load(&ch->efd);
	uint64_t one = 1;
	if (efd < 0)
		pthread_cond_broadcast(&ch->cond);
	else if (write(efd, &one, sizeof(one)) != sizeof(one))
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
	pthread_mutex_unlock(&ch->lock);
}

/* fab_wc_status -- the ibv_wc_status closest to a libfabric error */
enum ibv_wc_status fab_wc_status(int err)
{
	switch (err) {
	case FI_ECANCELED:
		return IBV_WC_WR_FLUSH_ERR;
	case FI_ETRUNC:
	case FI_EMSGSIZE:
	case FI_ETOOSMALL:
		return IBV_WC_LOC_LEN_ERR;
	case FI_EACCES:
	case FI_EPERM:
	case FI_EKEYREJECTED:
	case FI_EINVAL:
	case FI_EFAULT:
		return IBV_WC_REM_ACCESS_ERR;
	case FI_EREMOTEIO:
		return IBV_WC_REM_OP_ERR;
	case FI_ETIMEDOUT:
	case FI_ECONNRESET:
	case FI_ECONNABORTED:
	case FI_ENOTCONN:
	case EPIPE:
	case FI_EHOSTUNREACH:
	case FI_ECONNREFUSED:
	case FI_EIO:
	case FI_ESHUTDOWN:
		return IBV_WC_RETRY_EXC_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

/*
 * fab_wc_rx_kind -- opcode, length and immediate data of a successful
 * receive-side completion; true when it reports a write with immediate data
 * (whose bytes went to the written region, not to the receive buffer)
 */
bool fab_wc_rx_kind(const struct fab_peer *p, struct ibv_wc *wc, uint64_t flags, uint64_t data,
		    size_t len)
{
	wc->opcode = IBV_WC_RECV;
	wc->byte_len = (uint32_t)len;
	if ((flags & FI_REMOTE_CQ_DATA) &&
	    ((flags & FI_REMOTE_WRITE) || ((flags & FI_RMA) && !(flags & FI_MSG)))) {
		/* a native write with remote CQ data (under FI_RX_CQ_DATA it took a receive) */
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htonl((uint32_t)data);
		return true;
	}
	if (!p->imm_emulated) {
		if (flags & FI_REMOTE_CQ_DATA) {
			wc->wc_flags |= IBV_WC_WITH_IMM;
			wc->imm_data = htonl((uint32_t)data);
		}
		return false;
	}
	/* every message of our peer carries tagged CQ data (fabric.h) */
	uint32_t high = (uint32_t)(data >> 32);
	if (high & FAB_IMM_TAG) {
		/* the notification of an emulated write with immediate data */
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->byte_len = high & FAB_IMM_LEN_MAX;
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htonl((uint32_t)data);
		return true;
	}
	if (high & FAB_IMM_SEND_TAG) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = htonl((uint32_t)data);
	}
	return false;
}

/* fab_wc_status_of -- the status of an error entry: libfabric's verbs passes the verbs one on */
enum ibv_wc_status fab_wc_status_of(const struct fab_peer *p, int err, int prov_errno)
{
	if (p->verbs && prov_errno > IBV_WC_SUCCESS && prov_errno <= IBV_WC_TM_RNDV_INCOMPLETE)
		return (enum ibv_wc_status)prov_errno;
	return fab_wc_status(err);
}

/* fab_wc_fill -- a successful completion as verbs reports it (p: the receiving peer, or NULL) */
static void fab_wc_fill(struct ibv_wc *wc, const struct fi_cq_data_entry *e, uint32_t qp_num,
			const struct fab_peer *p)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = (uint64_t)(uintptr_t)e->op_context;
	wc->status = IBV_WC_SUCCESS;
	wc->qp_num = qp_num;
	wc->byte_len = (uint32_t)e->len;
	if (p) {
		(void)fab_wc_rx_kind(p, wc, e->flags, e->data, e->len);
	} else if (e->flags & FI_READ) {
		wc->opcode = IBV_WC_RDMA_READ;
	} else if (e->flags & FI_SEND) {
		wc->opcode = IBV_WC_SEND;
	} else {
		wc->opcode = IBV_WC_RDMA_WRITE;
	}
}

/* fab_wc_error -- an error completion from a libfabric error entry */
static void fab_wc_error(struct ibv_wc *wc, const struct fi_cq_err_entry *e, struct fab_conn *c,
			 bool rx)
{
	uint32_t qp_num = c->qp_num;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = (uint64_t)(uintptr_t)e->op_context;
	wc->status = fab_wc_status_of(c->peer, e->err, e->prov_errno);
	wc->vendor_err = (uint32_t)e->prov_errno;
	wc->qp_num = qp_num;
	if (rx)
		wc->opcode = IBV_WC_RECV;
	else if (e->flags & FI_READ)
		wc->opcode = IBV_WC_RDMA_READ;
	else if (e->flags & FI_SEND)
		wc->opcode = IBV_WC_SEND;
	else
		wc->opcode = IBV_WC_RDMA_WRITE;
}

/* fab_readerr -- take one error entry of a libfabric CQ; false if there is none */
static bool fab_readerr(struct fid_cq *cq, struct fi_cq_err_entry *err)
{
	memset(err, 0, sizeof(*err));
	ssize_t r = fi_cq_readerr(cq, err, 0);
	if (r != 1) {
		if (r != -FI_EAGAIN)
			FAB_LOG_FI(r, "fi_cq_readerr()");
		return false;
	}
	return true;
}

/* fab_is_bounce -- does ctx point at one of the connection's SRQ bounce buffers? */
static struct fab_bounce *fab_is_bounce(struct fab_conn *c, void *ctx)
{
	if (c->bounces == NULL)
		return NULL;
	uintptr_t p = (uintptr_t)ctx, lo = (uintptr_t)c->bounces;
	uintptr_t hi = lo + c->nbounces * sizeof(struct fab_bounce);
	if (p < lo || p >= hi)
		return NULL;
	return (struct fab_bounce *)ctx;
}

/* fab_imm_context -- the application's context of ctx (an emulated write's record, or itself) */
void *fab_imm_context(struct fab_conn *c, void *ctx);

/* fab_imm_slot_of -- the emulated write with immediate data ctx stands for, or NULL */
static struct fab_imm_slot *fab_imm_slot_of(struct fab_conn *c, void *ctx)
{
	if (c->imm_slots == NULL)
		return NULL;
	uintptr_t p = (uintptr_t)ctx, lo = (uintptr_t)c->imm_slots;
	uintptr_t hi = lo + c->nimm_slots * sizeof(struct fab_imm_slot);
	if (p < lo || p >= hi)
		return NULL;
	return (struct fab_imm_slot *)ctx;
}

void *fab_imm_context(struct fab_conn *c, void *ctx)
{
	struct fab_imm_slot *s = fab_imm_slot_of(c, ctx);
	return s ? (void *)s->op_context : ctx;
}

/*
 * fab_rx_entry -- a successful receive-side entry: into an SRQ bounce buffer,
 * or as a completion into to (which has an entry reserved) with the
 * application's context (struct fab_recvs); how many reserved entries it
 * used
 */
static uint32_t fab_rx_entry(struct fab_conn *c, struct fab_cq *to, struct fi_cq_data_entry *e)
{
	struct fab_bounce *b = fab_is_bounce(c, e->op_context);
	if (b) {
		b->len = e->len;
		b->flags = e->flags;
		b->data = e->data;
		b->err = 0;
		b->prov_errno = 0;
		if (c->rdm)
			fab_rdm_heard_data(c); /* the peer's message */
		return fab_srq_arrived(c, b) ? 1 : 0;
	}
	(void)fab_recvs_done(c, &e->op_context);
	struct ibv_wc wc;
	fab_wc_fill(&wc, e, c->qp_num, c->peer);
	fab_cq_push(to, &wc);
	return 1;
}

/*
 * fab_rx_error -- a receive-side error entry (as fab_rx_entry); a cancelled
 * bounce buffer goes back to the SRQ
 */
static uint32_t fab_rx_error(struct fab_conn *c, struct fab_cq *to, struct fi_cq_err_entry *err)
{
	if (err->err != FI_ECANCELED) {
		RPMA_LOG_INFO("fabric: qp %u: a receive failed: %s (provider error %d)", c->qp_num,
			      fi_strerror(err->err), err->prov_errno);
		fab_conn_mark_broken(c, err->err);
	}
	struct fab_bounce *b = fab_is_bounce(c, err->op_context);
	if (b) {
		/* cancelled bounce buffers are internal: the SRQ may repost them */
		if (err->err == FI_ECANCELED) {
			fab_srq_cancelled(c, b);
			return 0;
		}
		b->len = 0;
		b->flags = err->flags;
		b->err = err->err;
		b->prov_errno = err->prov_errno;
		return fab_srq_arrived(c, b) ? 1 : 0;
	}
	(void)fab_recvs_done(c, &err->op_context);
	struct ibv_wc wc;
	fab_wc_error(&wc, err, c, true);
	fab_cq_push(to, &wc);
	return 1;
}

/* fab_imm_last -- over reliable datagrams: one half of the pair completed; was it the last? */
static inline bool fab_imm_last(struct fab_imm_slot *s)
{
	return atomic_fetch_sub_explicit(&s->left, 1, memory_order_acq_rel) == 1;
}

/*
 * fab_imm_flushed -- an operation with context ctx is flushed at the end of
 * a reliable-datagram connection (fabric_rdm.c): whether its error is
 * reported (one per write with immediate data)
 */
bool fab_imm_flushed(struct fab_conn *c, void *ctx)
{
	struct fab_imm_slot *s = fab_imm_slot_of(c, ctx);
	if (s == NULL)
		return true;
	(void)fab_imm_last(s);
	return !atomic_exchange(&s->err_seen, true);
}

/*
 * fab_push_flushed -- report an operation the connection's end (or a post
 * that could not follow) will never complete: an IBV_WC_WR_FLUSH_ERR
 * completion with wr_id and opcode in the connection's CQ; false when the
 * CQ has no room for it (logged)
 */
bool fab_push_flushed(struct fab_conn *c, uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	if (fab_cq_reserve(c->cq, 1) == 0) {
		FAB_LOG_ERROR("qp %u: no room for a flushed operation's completion", c->qp_num);
		return false;
	}
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.opcode = opcode;
	wc.qp_num = c->qp_num;
	fab_cq_push(c->cq, &wc);
	return true;
}

/*
 * fab_imm_unsent -- the write of a pair was posted but its send could not be
 * (the connection ended meanwhile, which the refused write itself may have
 * caused: access/no_remote_write over tcp;ofi_rxm, and over sockets).  The
 * pair counts as posted, as on a verbs queue pair in the error state, and
 * completes once, with an error: the write's own, or IBV_WC_WR_FLUSH_ERR.
 * Over reliable datagrams the write completes either way: the flush comes
 * once it is done (here when it already is, else at its completion:
 * fab_tx_entry).  A write on a message endpoint reports only an error
 * (fab_tx_error, once per pair): the flush comes now, unless that error was
 * reported already, and an error of the write that comes later is dropped.
 */
void fab_imm_unsent(struct fab_conn *c, struct fab_imm_slot *s)
{
	/* before the count: the write's completion that comes last sees it */
	atomic_store_explicit(&s->unsent, true, memory_order_release);
	if ((c->rdm && !fab_imm_last(s)) || atomic_exchange(&s->err_seen, true))
		return;
	(void)fab_push_flushed(c, (uint64_t)(uintptr_t)s->op_context, IBV_WC_RDMA_WRITE);
}

/*
 * fab_tx_entry -- the completion of a successful send-side entry in *wc;
 * false when it is not reported (a staged atomic write nobody asked for)
 */
static bool fab_tx_entry(struct fab_conn *c, const struct fi_cq_data_entry *e, struct ibv_wc *wc)
{
	struct fab_imm_slot *s = fab_imm_slot_of(c, e->op_context);
	struct fab_stage_slot *st = fab_stage_of(c, e->op_context);
	fab_wc_fill(wc, e, c->qp_num, NULL);
	if (s) {
		/* the notification send completes the write */
		wc->wr_id = (uint64_t)(uintptr_t)s->op_context;
		wc->opcode = IBV_WC_RDMA_WRITE;
		wc->byte_len = 0;
		/* reliable datagrams: the last half, if nothing failed and it is wanted */
		if (c->rdm) {
			if (!fab_imm_last(s) || atomic_load(&s->err_seen))
				return false;
			if (atomic_load_explicit(&s->unsent, memory_order_acquire)) {
				/* the write is done, its send never went (fab_imm_unsent) */
				atomic_store(&s->err_seen, true);
				wc->status = IBV_WC_WR_FLUSH_ERR;
				return true;
			}
			if (!s->want)
				return false;
		}
	}
	if (st) {
		/* a staged atomic write: the user may not want it */
		wc->wr_id = (uint64_t)(uintptr_t)st->op_context;
		bool report = st->report;
		atomic_store_explicit(&st->taken, false, memory_order_release);
		if (!report)
			return false;
	}
	return true;
}

/*
 * fab_tx_success -- a successful entry of a connection's send-side CQ (which
 * also takes the connection's receives when it has no receive CQ of its own,
 * one_cq: no SRQ then, so a receive is never a bounce buffer's) as the
 * completion in *wc; false when nothing is reported: a control message of
 * the connection protocol (fabric_rdm.c), an operation nobody asked a
 * completion of, one already flushed at the connection's end, a staged
 * atomic write.  Drains are serialised (the source's draining flag).
 */
static inline __attribute__((always_inline)) bool
fab_tx_success(struct fab_conn *c, struct fab_source *src, struct fi_cq_data_entry *e,
	       struct ibv_wc *wc, bool one_cq, bool rdm)
{
	enum ibv_wc_opcode opc = IBV_WC_SEND;
	int u = FAB_RDM_OP_NONE;
	if (rdm && (e->flags & FI_RECV)) {
		/* a control receive is not counted as one of the application's */
		if (fab_rdm_ctl_entry(c, e))
			return false;
		fab_source_count_rx(src);
		if (fab_recvs_done(c, &e->op_context)) {
			/* a receive's record is never an operation's: no unwrap */
			fab_wc_fill(wc, e, c->qp_num, c->peer);
			return true;
		}
	} else if (rdm) {
		/* the operations' records first, the most frequent entries */
		u = fab_rdm_op_unwrap(c, &e->op_context, &opc, true);
		if (u == FAB_RDM_OP_NONE && fab_rdm_ctl_entry(c, e))
			return false;
	}
	if (u == FAB_RDM_OP_DROP)
		return false;
	if (u == FAB_RDM_OP_REPORT) {
		/* the record knows what the operation was */
		if (!fab_tx_entry(c, e, wc))
			return false;
		wc->opcode = opc;
		return true;
	}
	if (one_cq && (e->flags & (FI_RECV | FI_REMOTE_WRITE))) {
		(void)fab_recvs_done(c, &e->op_context);
		fab_wc_fill(wc, e, c->qp_num, c->peer);
		return true;
	}
	return fab_tx_entry(c, e, wc);
}

/* fab_tx_error -- a send-side error entry (as fab_tx_entry); it breaks the connection */
static uint32_t fab_tx_error(struct fab_conn *c, const struct fi_cq_err_entry *err)
{
	struct ibv_wc wc;
	RPMA_LOG_INFO("fabric: qp %u: an operation failed: %s (provider error %d)", c->qp_num,
		      fi_strerror(err->err), err->prov_errno);
	fab_wc_error(&wc, err, c, false);
	struct fab_imm_slot *s = fab_imm_slot_of(c, err->op_context);
	struct fab_stage_slot *st = fab_stage_of(c, err->op_context);
	bool report = true;
	if (st) {
		/* a failed staged atomic write: always reported */
		wc.wr_id = (uint64_t)(uintptr_t)st->op_context;
		atomic_store_explicit(&st->taken, false, memory_order_release);
	}
	if (s) {
		/* one error per write with immediate data, as on verbs */
		wc.wr_id = (uint64_t)(uintptr_t)s->op_context;
		wc.opcode = IBV_WC_RDMA_WRITE;
		report = !atomic_exchange(&s->err_seen, true);
		if (c->rdm)
			(void)fab_imm_last(s);
	}
	if (report)
		fab_cq_push(c->cq, &wc);
	fab_conn_mark_broken(c, err->err);
	return report ? 1 : 0;
}

/*
 * fab_drain_tx -- move every completion of a connection's TX CQ to its main
 * CQ.  A connection without a receive CQ of its own (c->rxcq NULL: its
 * receives complete into the main CQ, fab_conn_build) has one libfabric CQ
 * for both directions: its receive entries (FI_RECV) are taken here too, in
 * libfabric's order, which is causal.
 */
static inline __attribute__((always_inline)) void fab_drain_tx_impl(struct fab_source *src,
								    bool rdm)
{
	struct fab_conn *c = src->arg;
	struct fi_cq_data_entry e[FAB_CQ_BATCH];
	struct ibv_wc wc[FAB_CQ_BATCH];
	bool one_cq = c->rxcq == NULL;
	/*
	 * over reliable datagrams a drain takes a few batches at most: a
	 * connection that keeps its CQ busy must not hold the progress thread,
	 * whose timers (keep-alives) would stop (threads over shm: the server
	 * heard nothing for 1 s and reported LOST); the thread comes back
	 */
	unsigned batches = 0;
	for (;;) {
		if (rdm && ++batches > 8)
			break;
		/* no more entries leave libfabric than the CQ has room for */
		uint32_t room = fab_cq_reserve(c->cq, FAB_CQ_BATCH), used = 0;
		if (room == 0)
			break;
		ssize_t n = fi_cq_read(c->txcq, e, room);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				used += fab_tx_success(c, src, &e[i], &wc[used], one_cq, rdm);
			fab_cq_commit(c->cq, wc, used, room);
			if ((uint32_t)n < room)
				break; /* fewer than asked for: libfabric had no more (no empty read) */
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;
			if (!fab_readerr(c->txcq, &err)) {
				fab_cq_unreserve(c->cq, room);
				break;
			}
			enum ibv_wc_opcode opc;
			int u = FAB_RDM_OP_NONE;
			/* a receive's record (fab_rx_error takes it) tells even without FI_RECV */
			bool rx = (err.flags & (FI_RECV | FI_REMOTE_WRITE)) != 0 ||
				  fab_recvs_owns(c, err.op_context);
			if (rdm && fab_rdm_ctl_error(c, &err)) {
				u = FAB_RDM_OP_DROP;
			} else if (rdm) {
				u = fab_rdm_op_unwrap(c, &err.op_context, &opc, false);
				/* every other operation has a record: a receive, or nothing */
				if (u == FAB_RDM_OP_NONE && !rx) {
					/*
					 * an error without a context of ours (shm, toward
					 * a dead peer): the connection is broken, what is
					 * still out is flushed at its end
					 */
					RPMA_LOG_INFO("fabric: qp %u: an error without "
						      "context: %s",
						      c->qp_num, fi_strerror(err.err));
					fab_conn_mark_broken(c, err.err);
					u = FAB_RDM_OP_DROP;
				}
			}
			if (u == FAB_RDM_OP_DROP)
				used = 0;
			else if (one_cq && rx)
				used = fab_rx_error(c, c->cq, &err);
			else
				used = fab_tx_error(c, &err);
			fab_cq_unreserve(c->cq, room - used);
			continue;
		}
		fab_cq_unreserve(c->cq, room);
		if (n != -FI_EAGAIN)
			FAB_LOG_FI(n, "fi_cq_read(tx)");
		break;
	}
}

void fab_drain_tx(struct fab_source *src)
{
	fab_drain_tx_impl(src, false);
}

/* fab_drain_tx_rdm -- fab_drain_tx of a connection over a reliable-datagram endpoint */
void fab_drain_tx_rdm(struct fab_source *src)
{
	fab_drain_tx_impl(src, true);
}

/*
 * fab_drain_rx -- move every completion of a connection's RX CQ where receives
 * go.  Causal order: a message that arrived may answer one of our sends, whose
 * completion must be reported first.  By the time libfabric has a receive
 * entry, the completion of every send the peer had seen is in the TX CQ
 * (reading the RX CQ may itself have made progress that put it there), so
 * the TX CQ is drained after each read of receive entries and before they
 * are reported.  Lock order: RX, then TX (nothing takes them the other way).
 * No more entries leave libfabric than the receive target has room for
 * (fab_cq_reserve).
 */
static inline __attribute__((always_inline)) void fab_drain_rx_impl(struct fab_source *src,
								    bool rdm)
{
	struct fab_conn *c = src->arg;
	struct fi_cq_data_entry e[FAB_CQ_BATCH];
	struct fab_cq *to = c->recv_target;
	for (;;) {
		uint32_t room = fab_cq_reserve(to, FAB_CQ_BATCH), used = 0;
		if (room == 0)
			break;
		ssize_t n = fi_cq_read(c->rxcq, e, room);
		if (n > 0 || n == -FI_EAVAIL)
			fab_source_drain(&c->tx_src);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++) {
				if (rdm && fab_rdm_ctl_entry(c, &e[i]))
					continue;
				if (rdm)
					fab_source_count_rx(src);
				used += fab_rx_entry(c, to, &e[i]);
			}
			fab_cq_unreserve(to, room - used);
			if ((uint32_t)n < room)
				break; /* fewer than asked for: libfabric had no more */
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;
			if (!fab_readerr(c->rxcq, &err)) {
				fab_cq_unreserve(to, room);
				break;
			}
			bool ctl = rdm && fab_rdm_ctl_error(c, &err);
			used = ctl ? 0 : fab_rx_error(c, to, &err);
			fab_cq_unreserve(to, room - used);
			continue;
		}
		fab_cq_unreserve(to, room);
		if (n != -FI_EAGAIN)
			FAB_LOG_FI(n, "fi_cq_read(rx)");
		break;
	}
}

void fab_drain_rx(struct fab_source *src)
{
	fab_drain_rx_impl(src, false);
}

/* fab_drain_rx_rdm -- fab_drain_rx of a connection over a reliable-datagram endpoint */
void fab_drain_rx_rdm(struct fab_source *src)
{
	fab_drain_rx_impl(src, true);
}

/*
 * fab_op_end -- take an entry's record: its connection (NULL: gone, drop
 * the entry) and, in *e_ctx, the context the entry stands for
 */
static struct fab_conn *fab_op_end(struct fab_op *op, void **e_ctx, struct fab_cq **to,
				   bool *report)
{
	struct fab_conn *c = op->conn;
	*e_ctx = op->ctx;
	*to = op->to;
	*report = op->report;
	if (c)
		fab_op_push(c, op);
	else
		atomic_store_explicit(&op->busy, false, memory_order_relaxed);
	return c;
}

/* fab_cqg_entry -- route a successful entry of the group's CQ */
static void fab_cqg_entry(struct fab_cqg *g, struct fi_cq_data_entry *e)
{
	if (e->op_context == NULL) {
		FAB_LOG_DEBUG("an entry without a context in a shared CQ is dropped (flags 0x%llx)",
			      (unsigned long long)e->flags);
		return;
	}
	if (g->rdm && ((struct fab_ctx *)e->op_context)->kind == FAB_CTX_CTL) {
		fab_rdm_ctl_grouped(e->op_context, e, NULL);
		return;
	}
	struct fab_cq *to;
	bool report;
	struct fab_conn *c = fab_op_end(e->op_context, &e->op_context, &to, &report);
	if (c == NULL)
		return;
	struct ibv_wc wc;
	/* over reliable datagrams a receive's record tells even without FI_RECV */
	if ((e->flags & FI_RECV) || (c->rdm && fab_recvs_owns(c, e->op_context))) {
		if (g->rdm)
			fab_source_count_rx(&g->src);
		(void)fab_recvs_done(c, &e->op_context);
		fab_wc_fill(&wc, e, c->qp_num, g->peer);
	} else if (c->rdm) {
		/* the connection's record inside the group's knows what the operation was */
		enum ibv_wc_opcode opc;
		if (fab_rdm_op_unwrap(c, &e->op_context, &opc, true) != FAB_RDM_OP_REPORT ||
		    !fab_tx_entry(c, e, &wc)) {
			fab_cq_unreserve(to, 1);
			return;
		}
		wc.opcode = opc;
	} else if (!report || !fab_tx_entry(c, e, &wc)) {
		fab_cq_unreserve(to, 1);
		return;
	}
	fab_cq_push(to, &wc);
}

/* fab_cqg_error -- route an error entry of the group's CQ */
static void fab_cqg_error(struct fab_cqg *g, struct fi_cq_err_entry *err)
{
	if (err->op_context == NULL) {
		/*
		 * over reliable datagrams (shm, toward a dead peer): the
		 * connection's timer hears nothing and reports LOST; what is
		 * still out is flushed at its end
		 */
		FAB_LOG_INFO("an error without a context in a shared CQ is dropped: %s "
			     "(provider error %d)",
			     fi_strerror(err->err), err->prov_errno);
		return;
	}
	if (g->rdm && ((struct fab_ctx *)err->op_context)->kind == FAB_CTX_CTL) {
		fab_rdm_ctl_grouped(err->op_context, NULL, err);
		return;
	}
	struct fab_cq *to;
	bool report;
	struct fab_conn *c = fab_op_end(err->op_context, &err->op_context, &to, &report);
	if (c == NULL)
		return;
	/* a receive's record tells even without FI_RECV */
	bool rx = (err->flags & FI_RECV) || fab_recvs_owns(c, err->op_context);
	if (!rx && c->rdm) {
		enum ibv_wc_opcode opc;
		/* flushed at the connection's end already: reported then */
		if (fab_rdm_op_unwrap(c, &err->op_context, &opc, false) == FAB_RDM_OP_DROP) {
			fab_cq_unreserve(to, 1);
			return;
		}
	}
	uint32_t used = rx ? fab_rx_error(c, to, err) : fab_tx_error(c, err);
	fab_cq_unreserve(to, 1 - used);
}

/*
 * fab_cqg_drain -- move the entries of a shared CQ (max_batches batches at
 * most) to the connections' software CQs.  Each entry has its entry
 * reserved there since it was posted, so none stays behind for want of room.
 */
static void fab_cqg_drain(struct fab_cqg *g, unsigned max_batches)
{
	struct fi_cq_data_entry e[FAB_CQ_BATCH];
	unsigned batches = 0;
	for (;;) {
		if (++batches > max_batches)
			break;
		ssize_t n = fi_cq_read(g->cq, e, FAB_CQ_BATCH);
		if (n > 0) {
			for (ssize_t i = 0; i < n; i++)
				fab_cqg_entry(g, &e[i]);
			if (n < FAB_CQ_BATCH)
				break; /* libfabric had no more */
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;
			if (!fab_readerr(g->cq, &err))
				break;
			fab_cqg_error(g, &err);
			continue;
		}
		if (n != -FI_EAGAIN)
			FAB_LOG_FI(n, "fi_cq_read(shared)");
		break;
	}
}

/* fab_drain_group -- the drain of a CQ group's source */
void fab_drain_group(struct fab_source *src)
{
	struct fab_cqg *g = src->arg;
	/* a few batches at most over reliable datagrams (fab_drain_tx_impl) */
	fab_cqg_drain(g, g->rdm ? 8 : UINT_MAX);
}

/*
 * fab_cqg_drain_all -- (source held) drain the group's CQ until libfabric
 * has no more: a leaving connection's entries must all be out before its
 * record goes (fab_cqg_leave); a drain of a few batches left a control
 * slot's entry behind, which a later drain read from the freed record
 * (AddressSanitizer, threads/parallel_conns over shm with shared CQs)
 */
void fab_cqg_drain_all(struct fab_cqg *g)
{
	fab_cqg_drain(g, UINT_MAX);
}

/*
 * fab_source_may_park -- may the progress thread leave src's wait fd alone
 * while the user busy-polls the CQ it feeds (fabric.h, parking)?  Only a
 * user sleeping on the CQ's fd itself (poll/epoll; rpma_cq_wait unparks)
 * can need the thread meanwhile, and only when the fd can fire: the fd was
 * handed out and the CQ is armed.  An unarmed CQ's last notification is
 * still unconsumed, so its fd is readable anyway, until a wait consumes it
 * and re-arms the CQ.  When the user has never waited on the CQ, it is a
 * busy poller that merely took the fd: park, but look again every
 * FAB_PARK_MS (*briefly), which bounds the delay of a first sleep on the
 * fd that follows busy polling without any rpma_cq_wait.
 */
bool fab_source_may_park(const struct fab_source *src, bool *briefly)
{
	const struct fab_cq *cq = src->feeds;
	*briefly = false;
	if (cq == NULL)
		return false;
	if (!atomic_load(&cq->fd_exported) || !atomic_load(&cq->armed))
		return true;
	if (atomic_load(&cq->waited))
		return false;
	*briefly = true;
	return true;
}

/* fab_cq_unpark_feeders -- make the progress thread wait on the fds of the CQ's feeders again */
static void fab_cq_unpark_feeders(struct fab_cq *cq)
{
	struct fab_peer *kick = NULL;
	pthread_mutex_lock(&cq->feed_lock);
	for (int i = 0; i < cq->nfeeders; i++) {
		struct fab_source *src = cq->feeders[i];
		atomic_store(&src->unpark, true);
		if (atomic_load(&src->parked) && src->peer)
			kick = src->peer;
	}
	pthread_mutex_unlock(&cq->feed_lock);
	if (kick)
		fab_progress_kick(kick);
}

/*
 * fab_cq_unpark -- a user is about to sleep until the CQ fires: the progress
 * thread must wait on the fds of its feeders again (fabric.h, parking), and
 * counts the sleeper until fab_cq_awake (fab_progress_activity)
 */
void fab_cq_unpark(struct fab_cq *cq)
{
	atomic_store(&cq->waited, true);
	atomic_fetch_add(&cq->sleepers, 1);
	fab_cq_unpark_feeders(cq);
}

/* fab_cq_awake -- the sleep fab_cq_unpark announced is over */
void fab_cq_awake(struct fab_cq *cq)
{
	atomic_fetch_sub(&cq->sleepers, 1);
}

/* fab_cq_export_fd -- the user may sleep on the CQ's fd from now on (fab_source_may_park) */
void fab_cq_export_fd(struct fab_cq *cq)
{
	if (atomic_exchange(&cq->fd_exported, true))
		return;
	fab_cq_unpark_feeders(cq);
}

/* fab_cq_get_fd -- the descriptor of the CQ's channel */
int fab_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	struct fab_cq *fcq = fab_cq(cq);
	int ret = fab_chan_get_fd(fcq->chan, fd);
	if (ret)
		return ret;
	fab_cq_export_fd(fcq);
	return 0;
}

/* fab_cq_rearm -- arm a CQ for the next notification */
static void fab_cq_rearm(struct fab_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq->armed = true;
	pthread_mutex_unlock(&cq->lock);
}

/*
 * fab_chan_wait -- wait for a notification on a channel (RPMA_E_NO_COMPLETION
 * when the fd is non-blocking and nothing fired), re-arm the CQ that fired
 */
int fab_chan_wait(struct fab_chan *ch, struct fab_cq **cqp)
{
	/*
	 * without an fd (nobody asked for it): sleep on the condition variable;
	 * an fd, once made, stays until the channel goes (no lock to read it)
	 */
	int efd = atomic_load(&ch->efd);
	bool locked = false;
	if (efd < 0) {
		pthread_mutex_lock(&ch->lock);
		while ((efd = atomic_load(&ch->efd)) < 0 && ch->nfired == 0)
			pthread_cond_wait(&ch->cond, &ch->lock);
		locked = true;
	}
	if (efd >= 0) {
		if (locked)
			pthread_mutex_unlock(&ch->lock);
		int ret = fab_eventfd_take(efd, RPMA_E_NO_COMPLETION, "completion channel");
		if (ret)
			return ret;
		pthread_mutex_lock(&ch->lock);
	}
	struct fab_cq *cq = NULL;
	if (ch->nfired > 0) {
		cq = ch->fired[0];
		for (int i = 1; i < ch->nfired; i++)
			ch->fired[i - 1] = ch->fired[i];
		ch->nfired--;
	}
	pthread_mutex_unlock(&ch->lock);
	if (cq == NULL) {
		FAB_LOG_ERROR("completion channel signalled but nothing fired");
		return RPMA_E_UNKNOWN;
	}
	fab_cq_rearm(cq);
	*cqp = cq;
	return 0;
}

/* the most feeders a waiter drives itself (a connection's CQ has one or two) */
#define FAB_DIRECT_MAX 4

/*
 * fab_cq_undirect -- a thread in rpma_cq_wait() stops driving the feeders
 * itself (it is about to sleep or to return): pushes of other threads
 * notify again.  The completions pushed so far, and *pending: the CQ has
 * fired (a notification waits in the channel).  Under the lock, so that a
 * push either notifies or is counted here.
 */
static uint64_t fab_cq_undirect(struct fab_cq *cq, bool *pending)
{
	pthread_mutex_lock(&cq->lock);
	atomic_store(&cq->direct, false);
	*pending = !cq->armed;
	uint64_t pushes = atomic_load_explicit(&cq->pushes, memory_order_relaxed);
	pthread_mutex_unlock(&cq->lock);
	return pushes;
}

/*
 * fab_cq_drive -- drain the CQ's feeders as a polling user does (so the
 * progress thread keeps them parked: fabric.h); with fids/fds, gather their
 * wait objects too: how many, or -1 when one has none or there are too many
 */
static int fab_cq_drive(struct fab_cq *cq, bool drain, struct fid **fids, struct pollfd *pfd,
			struct fab_peer **peer)
{
	int nf = 0;
	/* a connection's own feeders stay the same while its CQ is used (own_feeders) */
	for (int i = 0; i < cq->nfeeders; i++) {
		struct fab_source *src = cq->feeders[i];
		atomic_fetch_add_explicit(&src->user_drains, 1, memory_order_release);
		if (drain)
			fab_source_drain(src);
		if (fids == NULL)
			continue;
		if (nf >= 0 && nf < FAB_DIRECT_MAX && src->fd >= 0) {
			fids[nf] = src->fid;
			pfd[nf].fd = src->fd;
			pfd[nf].events = POLLIN;
			pfd[nf++].revents = 0;
			*peer = src->peer;
		} else {
			nf = -1;
		}
	}
	return nf;
}

/*
 * fab_cq_read_direct -- take completions of an empty CQ whose one feeder is
 * its connection's send-side libfabric CQ (fab_drain_tx or fab_drain_tx_rdm,
 * see fab_cq_set_direct_src) from fi_cq_read() straight into wc (the
 * caller's array, or the stash), without the ring's reserve, commit and
 * take.  Over reliable datagrams each entry goes through fab_tx_success, as
 * in the drain: control messages are handled (a connection's end may push
 * its flushed operations into the ring meanwhile: they follow).
 * Order: the feeder's drainers are serialised (src->draining), and
 * whatever another drainer (the progress thread) put into the ring before
 * this one took the flag is seen here (filled) and taken first (-1).  How
 * many completions it gave, or -1: go the usual way (the ring is not empty,
 * an error entry, or only entries that are not reported).  Inlined into
 * its two callers: no call and no frame of its own per poll.
 */
static inline __attribute__((always_inline)) int
fab_cq_read_direct(struct fab_cq *cq, struct fab_source *src, int num, struct ibv_wc *wc)
{
	struct fab_conn *c = src->arg;
	struct fi_cq_data_entry e[FAB_CQ_BATCH];
	bool one_cq = c->rxcq == NULL, rdm = c->rdm != NULL;
	if (num > FAB_CQ_BATCH)
		num = FAB_CQ_BATCH;
	/* a user's drain, as fab_cq_drive counts it (parking) */
	atomic_fetch_add_explicit(&src->user_drains, 1, memory_order_release);
	fab_source_hold(src);
	if (atomic_load(&cq->filled) > 0) {
		fab_source_release(src);
		return -1;
	}
	ssize_t n = fi_cq_read(c->txcq, e, (size_t)num);
	int used = 0;
	/* no staged atomic writes: an entry is plain unless it is an emulated write with imm */
	bool nostage = c->stages == NULL;
	for (ssize_t i = 0; i < n; i++) {
		if (rdm) {
			/* control messages, records: as the progress thread's drain does */
			used += fab_tx_success(c, src, &e[i], &wc[used], one_cq, true);
			continue;
		}
		/* one CQ: no SRQ, so a receive is never a bounce buffer's */
		if (one_cq && (e[i].flags & (FI_RECV | FI_REMOTE_WRITE))) {
			(void)fab_recvs_done(c, &e[i].op_context);
			fab_wc_fill(&wc[used++], &e[i], c->qp_num, c->peer);
		} else if (nostage && !fab_imm_slot_of(c, e[i].op_context))
			fab_wc_fill(&wc[used++], &e[i], c->qp_num, NULL);
		else if (fab_tx_entry(c, &e[i], &wc[used]))
			used++;
	}
	fab_source_release(src);
	if (n == -FI_EAGAIN)
		return 0;
	if (n < 0 && n != -FI_EAVAIL)
		FAB_LOG_FI(n, "fi_cq_read(tx)");
	return used > 0 ? used : -1;
}

/*
 * fab_cq_wait_direct -- rpma_cq_wait() on a CQ whose feeders the waiting
 * thread may drive itself (fab_cq_wait): sleep on their wait fds (and the
 * channel's, which the progress thread notifies when it takes a completion
 * first) once fi_trywait() allows it, drain them on waking.  The first
 * round does not drain: it follows the caller's own empty poll, and
 * fi_trywait() tells whether libfabric holds anything.  A completion the
 * waiter pushes itself is not notified through the channel (cq->direct).
 * A direct feeder without a wait fd (shm) is read with a yield between
 * two reads instead, for spin_ns at most.  1: this CQ cannot be driven
 * directly (a feeder without a wait fd, fi_trywait failing) or the spin
 * found nothing: wait for the progress thread instead
 */
static int fab_cq_wait_direct(struct fab_cq *cq)
{
	struct fid *fids[FAB_DIRECT_MAX];
	struct pollfd pfd[FAB_DIRECT_MAX + 1];
	struct fab_peer *p = NULL;
	struct fab_cq *fired;
	bool pending;
	/*
	 * no lock at the start: a push after these loads either notifies (the
	 * channel's fd wakes the poll below) or changes pushes
	 */
	uint64_t p0 = atomic_load(&cq->pushes);
	if (!atomic_load(&cq->armed))
		return fab_chan_wait(cq->chan, &fired);
	int nf = fab_cq_drive(cq, false, fids, pfd, &p);
	struct fab_source *dsrc = cq->direct_src;
	/*
	 * a feeder without a wait fd (shm): poll it, yielding the CPU between
	 * two looks, as libfabric's own blocking read does there, for the
	 * progress thread's spin time at most (RPMA_FABRIC_SPIN_US), then
	 * sleep until the progress thread finds the completion
	 */
	uint64_t spin_end = 0;
	if (nf < 0 && dsrc != NULL && dsrc->fd < 0 && dsrc->peer->prog.spin_ns != 0)
		spin_end = fab_now_ns() + dsrc->peer->prog.spin_ns;
	else if (nf <= 0 || p == NULL)
		return 1;
	/*
	 * the channel's fd, made by the first such wait: the progress thread,
	 * which may take a completion first, wakes the poll through it
	 */
	int efd = atomic_load(&cq->chan->efd);
	if (spin_end == 0 && efd < 0 && fab_chan_get_fd(cq->chan, &efd))
		return 1;
	for (;;) {
		int ret = 0;
		if (spin_end != 0) {
			if (fab_now_ns() >= spin_end)
				return 1;
			sched_yield();
		} else {
			ret = fi_trywait(p->fabric, fids, nf);
			if (ret != 0 && ret != -FI_EAGAIN)
				return 1;
		}
		if (ret == 0 && spin_end == 0) {
			pfd[nf].fd = efd;
			pfd[nf].events = POLLIN;
			pfd[nf].revents = 0;
			/* a timeout is one more spurious wakeup: look, then sleep again */
			if (poll(pfd, (nfds_t)nf + 1, FAB_SAFETY_NET_MS) < 0 && errno != EINTR) {
				RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: poll(CQ wait fds)");
				return 1;
			}
		}
		/*
		 * into the stash, when it is empty: the waiter's own completions
		 * notify nobody, a push of another thread notifies as usual
		 */
		if (dsrc && cq->stash_n == 0 && atomic_load(&cq->armed)) {
			int n = fab_cq_read_direct(cq, dsrc, FAB_CQ_STASH, cq->stash);
			if (n > 0) {
				cq->stash_head = 0;
				cq->stash_n = (uint32_t)n;
				return 0;
			}
			if (n == 0) {
				/* nothing in libfabric: did another thread push? */
				if (!atomic_load(&cq->armed))
					return fab_chan_wait(cq->chan, &fired);
				if (atomic_load(&cq->pushes) != p0)
					return 0;
				continue;
			}
		}
		/* a push that still saw direct off notified: seen as pending below */
		atomic_store(&cq->direct, true);
		if (atomic_load(&cq->armed))
			(void)fab_cq_drive(cq, true, NULL, NULL, NULL);
		uint64_t now = fab_cq_undirect(cq, &pending);
		if (pending)
			return fab_chan_wait(cq->chan, &fired);
		if (now != p0)
			return 0; /* pushed while armed: fired, consumed and re-armed at once */
	}
}

/*
 * fab_cq_wait -- block until the CQ is notified, then re-arm it.  A CQ fed
 * by its own connection only, whose fd the user never took (so nobody else
 * sleeps on it and it keeps its blocking mode), is driven by the waiting
 * thread itself (fab_cq_wait_direct): no hand-off through the progress thread.
 */
int fab_cq_wait(struct rpma_cq *rcq)
{
	struct fab_cq *cq = fab_cq(rcq), *fired;
	if (cq->own_feeders && !atomic_load(&cq->fd_exported)) {
		int ret = fab_cq_wait_direct(cq);
		if (ret != 1)
			return ret;
	}
	fab_cq_unpark(cq);
	int ret = fab_chan_wait(cq->chan, &fired);
	fab_cq_awake(cq);
	return ret;
}

/* fab_cq_take -- copy up to num completions out of the ring; *pushes: the CQ's count of pushes */
static int fab_cq_take(struct fab_cq *cq, int num, struct ibv_wc *wc, uint64_t *pushes)
{
	pthread_mutex_lock(&cq->lock);
	int n = 0;
	while (n < num && cq->count > 0) {
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	if (n > 0) {
		atomic_store(&cq->filled, cq->count);
		atomic_fetch_add(&cq->avail, (int64_t)n);
	}
	*pushes = atomic_load_explicit(&cq->pushes, memory_order_relaxed);
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/*
 * fab_cq_poll_drive -- the poll of an empty CQ that drains its feeders into
 * the ring (p0: the CQ's pushes before); out of line, so that the direct
 * path of fab_cq_poll does not pay for its frame
 */
static __attribute__((noinline)) int fab_cq_poll_drive(struct fab_cq *cq, int num_entries,
						       struct ibv_wc *wc, uint64_t p0)
{
	/* release (user_drains): whoever sees this drain also sees the user's earlier re-arm */
	if (cq->own_feeders) {
		(void)fab_cq_drive(cq, true, NULL, NULL, NULL);
	} else {
		pthread_mutex_lock(&cq->feed_lock);
		(void)fab_cq_drive(cq, true, NULL, NULL, NULL);
		pthread_mutex_unlock(&cq->feed_lock);
	}
	/* nothing pushed meanwhile (by us or anyone): still empty */
	if (atomic_load_explicit(&cq->pushes, memory_order_relaxed) == p0)
		return 0;
	return fab_cq_take(cq, num_entries, wc, &p0);
}

/* fab_cq_poll -- take completions; an empty CQ drains its libfabric CQs first */
int fab_cq_poll(struct rpma_cq *rcq, int num_entries, struct ibv_wc *wc)
{
	struct fab_cq *cq = fab_cq(rcq);
	/* what the last wait took from libfabric comes first (fab_cq_wait_direct) */
	if (cq->stash_n > 0) {
		int n = 0;
		while (n < num_entries && cq->stash_n > 0) {
			wc[n++] = cq->stash[cq->stash_head++];
			cq->stash_n--;
		}
		return n;
	}
	/*
	 * an empty ring is seen without the lock: pushes first, then filled
	 * (stored the other way round), so a push missed here changes pushes
	 */
	uint64_t p0 = atomic_load(&cq->pushes);
	if (atomic_load(&cq->filled) > 0) {
		int n = fab_cq_take(cq, num_entries, wc, &p0);
		if (n > 0)
			return n;
	}
	/*
	 * not a feeder without a wait fd (shm) of a CQ whose fd the program
	 * sleeps on: the progress thread keeps polling such a feeder for a
	 * while after receives of its own drains (fabric.h, watch), which
	 * reads of the program would take from it (send-recv of 8 B over shm,
	 * the server asleep on the fd: 13.9 us instead of 5.5)
	 */
	struct fab_source *dsrc = cq->direct_src;
	if (dsrc &&
	    !(dsrc->watch && atomic_load_explicit(&cq->fd_exported, memory_order_relaxed))) {
		int n = fab_cq_read_direct(cq, dsrc, num_entries, wc);
		if (n >= 0)
			return n;
		p0 = atomic_load(&cq->pushes);
		if (atomic_load(&cq->filled) > 0) {
			n = fab_cq_take(cq, num_entries, wc, &p0);
			if (n > 0)
				return n;
		}
	}
	return fab_cq_poll_drive(cq, num_entries, wc, p0);
}
