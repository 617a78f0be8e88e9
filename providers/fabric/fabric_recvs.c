// SPDX-License-Identifier: BSD-3-Clause
/*
 * fabric_recvs.c -- the records of a connection's posted receives
 * (fabric.h, struct fab_recvs): taken at a post, given back at the
 * completion, cancelled when the connection ends.
 *
 * The end and a post may race: the end sets cancelled (under the lock,
 * so no record is taken after it) and then cancels every record taken.
 * A record taken before the flag but posted after the end's fi_cancel()
 * of it was not found by that cancel: the post reads the flag after it
 * posted (fab_recvs_posted) and cancels its own receive then (a second
 * cancel finds nothing).  Seen unset, the end's walk comes after the
 * post: libfabric's endpoint lock orders the post before the walk's
 * fi_cancel() (FI_THREAD_SAFE).
 */

#include <stdlib.h>

#include "fabric.h"

/* fab_recvs_init -- n records, all free (c->recvs zeroed) */
int fab_recvs_init(struct fab_conn *c, size_t n)
{
	struct fab_recvs *r = &c->recvs;
	if (n == 0 || n > UINT32_MAX)
		n = n == 0 ? 1 : UINT32_MAX;
	r->rec = calloc(n, sizeof(*r->rec));
	if (r->rec == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	if (pthread_spin_init(&r->lock, PTHREAD_PROCESS_PRIVATE) != 0) {
		free(r->rec);
		r->rec = NULL;
		FAB_LOG_ERROR("pthread_spin_init() failed");
		return RPMA_E_NOMEM;
	}
	r->n = (uint32_t)n;
	for (uint32_t i = r->n; i-- > 0;) {
		r->rec[i].next_free = r->free;
		r->free = &r->rec[i];
	}
	atomic_init(&r->cancelled, false);
	return 0;
}

/* fab_recvs_fini -- release the records (no completion can name them any more) */
void fab_recvs_fini(struct fab_conn *c)
{
	struct fab_recvs *r = &c->recvs;
	if (r->rec == NULL)
		return;
	pthread_spin_destroy(&r->lock);
	free(r->rec);
	r->rec = NULL;
	r->free = NULL;
	r->n = 0;
}

/*
 * fab_recvs_take -- the record a receive whose context is ctx is posted
 * with; NULL (logged) when the connection ended or every record is taken
 */
struct fab_recv_rec *fab_recvs_take(struct fab_conn *c, void *ctx)
{
	struct fab_recvs *r = &c->recvs;
	if (r->rec == NULL) {
		FAB_LOG_ERROR("qp %u: the connection takes no receive", c->qp_num);
		return NULL;
	}
	pthread_spin_lock(&r->lock);
	if (atomic_load_explicit(&r->cancelled, memory_order_relaxed) || fab_conn_ended(c)) {
		pthread_spin_unlock(&r->lock);
		FAB_LOG_ERROR("qp %u: the connection has ended", c->qp_num);
		return NULL;
	}
	struct fab_recv_rec *x = r->free;
	if (x == NULL) {
		pthread_spin_unlock(&r->lock);
		FAB_LOG_ERROR("qp %u: the receive queue is full (%u receives posted)", c->qp_num,
			      r->n);
		return NULL;
	}
	/* before the post: its completion may come at once */
	r->free = x->next_free;
	x->ctx = ctx;
	atomic_store_explicit(&x->posted_as, (void *)x, memory_order_relaxed);
	x->posted = true;
	pthread_spin_unlock(&r->lock);
	return x;
}

/*
 * fab_recvs_cancel_one -- cancel the receive libfabric knows as ctx (one that
 * completed meanwhile is not found: -FI_ENOENT, or 0 where the provider does
 * not say); -FI_ENOSYS where the provider cancels nothing
 */
static int fab_recvs_cancel_one(struct fab_conn *c, void *ctx)
{
	int ret = (int)fi_cancel(&c->ep->fid, ctx);
	if (ret && ret != -FI_ENOENT && ret != -FI_ENOSYS)
		FAB_LOG_INFO("qp %u: fi_cancel(receive): %s", c->qp_num, fi_strerror(-ret));
	return ret;
}

/* fab_recvs_put -- a record whose receive was not posted goes back */
void fab_recvs_put(struct fab_conn *c, struct fab_recv_rec *x)
{
	void *back = x;
	(void)fab_recvs_done_slow(c, &back);
}

/*
 * fab_recvs_posted -- x's receive was posted: when the connection's end
 * came meanwhile, cancel it (see the top of this file)
 */
void fab_recvs_posted(struct fab_conn *c, struct fab_recv_rec *x)
{
	if (!atomic_load_explicit(&c->recvs.cancelled, memory_order_acquire))
		return;
	(void)fab_recvs_cancel_one(c, atomic_load_explicit(&x->posted_as, memory_order_relaxed));
}

/* fab_recvs_done_slow -- fab_recvs_done of a record of the connection */
bool fab_recvs_done_slow(struct fab_conn *c, void **ctx)
{
	struct fab_recvs *r = &c->recvs;
	struct fab_recv_rec *x = *ctx;
	pthread_spin_lock(&r->lock);
	bool found = x->posted;
	if (found) {
		*ctx = x->ctx;
		x->posted = false;
		x->next_free = r->free;
		r->free = x;
	}
	pthread_spin_unlock(&r->lock);
	if (found && c->rdm)
		fab_rdm_heard_data(c); /* the peer's message */
	return found;
}

/*
 * fab_recvs_cancel -- the connection's final event was reported: cancel
 * the receives still posted (libfabric completes them with FI_ECANCELED),
 * take no new one (fab_recvs_cancel_one says what a cancel may find).
 * Where the provider cannot cancel (-FI_ENOSYS: libfabric's verbs, whose
 * queue pair in the error state flushes its receives itself) the walk stops.
 */
void fab_recvs_cancel(struct fab_conn *c)
{
	struct fab_recvs *r = &c->recvs;
	if (r->rec == NULL)
		return;
	pthread_spin_lock(&r->lock);
	atomic_store(&r->cancelled, true);
	pthread_spin_unlock(&r->lock);
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->n; i++) {
		pthread_spin_lock(&r->lock);
		bool posted = r->rec[i].posted;
		void *as = atomic_load_explicit(&r->rec[i].posted_as, memory_order_relaxed);
		pthread_spin_unlock(&r->lock);
		if (!posted)
			continue;
		n++;
		if (fab_recvs_cancel_one(c, as) == -FI_ENOSYS) {
			FAB_LOG_DEBUG("qp %u: the provider cancels no receive", c->qp_num);
			return;
		}
	}
	if (n)
		FAB_LOG_INFO("qp %u: %u receives cancelled at the end", c->qp_num, n);
}
