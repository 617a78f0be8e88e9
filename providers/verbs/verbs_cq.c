/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_cq.c -- completion queues and completion channels of the verbs provider */

#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "verbs.h"

/*
 * vrb_cq_init -- create a CQ of size entries signalling through its own
 * completion channel, or through shared_channel when not NULL, and arm it
 */
int vrb_cq_init(struct vrb_cq *cq, struct ibv_context *ctx, uint32_t size,
		struct ibv_comp_channel *shared_channel)
{
	int e;

	if (size > INT_MAX) {
		VRB_LOG_ERROR("a CQ of %u entries is too large", size);
		return RPMA_E_INVAL;
	}

	if (shared_channel) {
		cq->channel = shared_channel;
		cq->shared = true;
	} else {
		errno = 0;
		cq->channel = ibv_create_comp_channel(ctx);
		if (cq->channel == NULL) {
			e = vrb_errno();
			VRB_LOG_ERRNO(e, "ibv_create_comp_channel failed");
			return vrb_err(e);
		}
		cq->shared = false;
	}
	cq->nstash = 0;
	cq->stash = NULL;
	cq->outstanding = 0;

	errno = 0;
	cq->cq = ibv_create_cq(ctx, (int)size, NULL, cq->channel, 0);
	if (cq->cq == NULL) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "ibv_create_cq(%u entries) failed", size);
		goto err_channel;
	}

	/* armed from the start: the first completion already signals the channel */
	e = ibv_req_notify_cq(cq->cq, 0);
	if (e) {
		VRB_LOG_ERRNO(e, "ibv_req_notify_cq failed");
		goto err_cq;
	}
	return 0;

err_cq:
	(void)ibv_destroy_cq(cq->cq);
	cq->cq = NULL;
err_channel:
	if (!cq->shared)
		(void)ibv_destroy_comp_channel(cq->channel);
	cq->channel = NULL;
	return vrb_err(e);
}

/* vrb_cq_fini -- destroy the CQ and its own channel; the first error is returned */
int vrb_cq_fini(struct vrb_cq *cq)
{
	int ret = 0;
	int e;

	if (cq->cq) {
		e = ibv_destroy_cq(cq->cq);
		if (e) {
			VRB_LOG_ERRNO(e, "ibv_destroy_cq failed");
			ret = vrb_err(e);
		}
		cq->cq = NULL;
	}
	if (cq->channel && !cq->shared) {
		if (ibv_destroy_comp_channel(cq->channel)) {
			e = vrb_errno();
			VRB_LOG_ERRNO(e, "ibv_destroy_comp_channel failed");
			if (!ret)
				ret = vrb_err(e);
		}
	}
	cq->channel = NULL;
	free(cq->stash);
	cq->stash = NULL;
	cq->nstash = 0;
	return ret;
}

/* vrb_cq_get_fd -- the descriptor of the CQ's completion channel */
int vrb_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	*fd = vrb_cq(cq)->channel->fd;
	return 0;
}

/*
 * vrb_channel_get -- take one event from a completion channel, acknowledge
 * it and arm its CQ again; *fired is the CQ that signalled
 */
static int vrb_channel_get(struct ibv_comp_channel *channel, struct ibv_cq **fired)
{
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;

	errno = 0;
	if (ibv_get_cq_event(channel, &ev_cq, &ev_ctx)) {
		int e = vrb_errno();
		if (e == EAGAIN || e == EWOULDBLOCK)
			return RPMA_E_NO_COMPLETION; /* a non-blocking channel with nothing */
		VRB_LOG_ERRNO(e, "ibv_get_cq_event failed");
		return RPMA_E_NO_COMPLETION;
	}
	ibv_ack_cq_events(ev_cq, 1);

	int e = ibv_req_notify_cq(ev_cq, 0);
	if (e) {
		VRB_LOG_ERRNO(e, "ibv_req_notify_cq failed");
		return RPMA_E_PROVIDER;
	}
	*fired = ev_cq;
	return 0;
}

/* vrb_cq_wait -- wait for the CQ's channel, acknowledge the event, re-arm */
int vrb_cq_wait(struct rpma_cq *cq)
{
	struct vrb_cq *vc = vrb_cq(cq);
	struct ibv_cq *fired = NULL;
	int ret = vrb_channel_get(vc->channel, &fired);
	if (ret)
		return ret;
	if (fired != vc->cq) {
		VRB_LOG_ERROR("the completion channel signalled an unknown CQ");
		return RPMA_E_UNKNOWN;
	}
	return 0;
}

/*
 * vrb_wc_api_opcodes -- the opcodes of the librpma 1.2 API: a native atomic
 * write completes as IBV_WC_RDMA_WRITE and a native flush as
 * IBV_WC_RDMA_READ, as their emulations do (rpma_atomic_write(3), rpma_verbs(7))
 */
static inline void vrb_wc_api_opcodes(struct ibv_wc *wc, int n)
{
#if defined(VERBS_NATIVE_ATOMIC_WRITE) || defined(VERBS_NATIVE_FLUSH)
	for (int i = 0; i < n; i++) {
#ifdef VERBS_NATIVE_ATOMIC_WRITE
		if (wc[i].opcode == IBV_WC_ATOMIC_WRITE)
			wc[i].opcode = IBV_WC_RDMA_WRITE;
#endif
#ifdef VERBS_NATIVE_FLUSH
		if (wc[i].opcode == IBV_WC_FLUSH)
			wc[i].opcode = IBV_WC_RDMA_READ;
#endif
	}
#else
	(void)wc;
	(void)n;
#endif
}

/*
 * vrb_cq_take -- ibv_poll_cq, and the completions taken off the count of
 * outstanding signalled requests of a main CQ that keeps one (an error
 * completion of an unsignalled request is taken off too: the count stays a
 * lower bound, never below 0)
 */
static int vrb_cq_take(struct vrb_cq *vc, int num_entries, struct ibv_wc *wc)
{
	int n = ibv_poll_cq(vc->cq, num_entries, wc);
	if (n > 0 && vc->stash) {
		unsigned long o = __atomic_load_n(&vc->outstanding, __ATOMIC_RELAXED);
		unsigned long want;
		do {
			want = o > (unsigned long)n ? o - (unsigned long)n : 0;
		} while (!__atomic_compare_exchange_n(&vc->outstanding, &o, want, true,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	}
	return n;
}

/*
 * vrb_cq_poll_stash -- the completions vrb_conn_wait() took into the stash
 * first, then ibv_poll_cq (out of line: the common path stays as short as
 * ibv_poll_cq alone)
 */
static __attribute__((noinline)) int vrb_cq_poll_stash(struct vrb_cq *vc, int num_entries,
						       struct ibv_wc *wc)
{
	int got = vc->nstash < num_entries ? vc->nstash : num_entries;
	memcpy(wc, vc->stash, (size_t)got * sizeof(*wc));
	vc->nstash -= got;
	memmove(vc->stash, vc->stash + got, (size_t)vc->nstash * sizeof(*wc));
	if (got < num_entries) {
		int n = vrb_cq_take(vc, num_entries - got, wc + got);
		if (n < 0)
			VRB_LOG_ERROR("ibv_poll_cq failed (%d)", n);
		else
			got += n;
	}
	vrb_wc_api_opcodes(wc, got);
	return got;
}

/*
 * vrb_cq_poll -- ibv_poll_cq with the 1.2 API's opcodes, after the
 * completions vrb_conn_wait() took into the stash (only ever on the main CQ
 * of a shared channel)
 */
int vrb_cq_poll(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct vrb_cq *vc = vrb_cq(cq);
	if (vc->stash)
		return vrb_cq_poll_stash(vc, num_entries, wc);
	int n = ibv_poll_cq(vc->cq, num_entries, wc);
	if (n < 0) {
		VRB_LOG_ERROR("ibv_poll_cq failed (%d)", n);
		return RPMA_E_PROVIDER;
	}
	vrb_wc_api_opcodes(wc, n);
	return n;
}

/*
 * vrb_main_cq_first -- the shared channel named the receive CQ: must the
 * main CQ be named first?  The transport may complete a receive before the
 * send that caused it: the peer's answer can overtake the ACK of our send,
 * and the kernel then queues the receive CQ's signal first.  So the main
 * CQ is polled (into its stash, which vrb_cq_poll() returns first) and, when
 * it had completions, named first.  That is done only while the channel's
 * descriptor is readable (a signal is pending, usually the main CQ's own),
 * so that it stays readable until the deferred receive CQ is named: a
 * program that polls the descriptor before each rpma_conn_wait() never
 * sleeps on it while a naming is due.  With the descriptor not readable, the
 * main CQ's completions were already announced (each CQE added while the
 * CQ is armed signals the channel, and the CQ is re-armed before a wait
 * returns), so the receive CQ is named as it is.
 */
static bool vrb_main_cq_first(struct vrb_conn *vc)
{
	struct vrb_cq *m = vc->cq;
	if (m->nstash < VRB_STASH_MAX) {
		int n = vrb_cq_take(m, VRB_STASH_MAX - m->nstash, m->stash + m->nstash);
		if (n > 0)
			m->nstash += n;
		else if (n < 0)
			VRB_LOG_DEBUG("ibv_poll_cq(main CQ) failed (%d)", n);
	}
	if (m->nstash == 0)
		return false;
	struct pollfd pfd = {.fd = vc->shared_channel->fd, .events = POLLIN, .revents = 0};
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN);
}

/*
 * vrb_main_cq_first_wait -- the main CQ was empty while signalled requests
 * of the connection have no completion yet: wait a little for the first of
 * them before the receive CQ is named.  The transport may deliver the
 * peer's answer before the acknowledgement of the send it answers (rxe's
 * responder and completer are separate tasks: the acknowledgement has
 * arrived, its completion is a moment away), so the send's completion can
 * still be missing when the receive CQ signals.  The wait ends at the first
 * main-CQ completion with the channel readable (named first, as
 * vrb_main_cq_first), when nothing is outstanding any more, or after
 * VRB_CAUSAL_WAIT_MS: a request that takes longer (a long read still in
 * flight) was not what the peer answered, and the receive CQ is named.
 */
static bool vrb_main_cq_first_wait(struct vrb_conn *vc)
{
	struct vrb_cq *m = vc->cq;
	if (m->nstash > 0 || __atomic_load_n(&m->outstanding, __ATOMIC_RELAXED) == 0)
		return false;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const struct timespec nap = {.tv_sec = 0, .tv_nsec = 20000};
	for (;;) {
		nanosleep(&nap, NULL);
		if (vrb_main_cq_first(vc))
			return true;
		if (m->nstash == 0 && __atomic_load_n(&m->outstanding, __ATOMIC_RELAXED) == 0)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &t);
		long long us = (t.tv_sec - t0.tv_sec) * 1000000LL + (t.tv_nsec - t0.tv_nsec) / 1000;
		if (us >= VRB_CAUSAL_WAIT_MS * 1000LL) {
			VRB_LOG_DEBUG("no main-CQ completion within %d ms of the receive CQ's "
				      "signal: the receive CQ is named",
				      VRB_CAUSAL_WAIT_MS);
			return false;
		}
	}
}

/*
 * vrb_conn_wait -- wait on the connection's shared channel; tell the CQ from
 * the receive CQ, the main CQ first while it holds completions that may have
 * caused the receive CQ's (vrb_main_cq_first)
 */
int vrb_conn_wait(struct rpma_conn *conn, bool *is_rcq)
{
	struct vrb_conn *vc = vrb_conn(conn);
	struct ibv_cq *fired = NULL;

	if (vc->shared_channel == NULL) {
		VRB_LOG_ERROR("the connection has no shared completion channel");
		return RPMA_E_NOT_SHARED_CHNL;
	}
	if (!vc->rcq_due) {
		int ret = vrb_channel_get(vc->shared_channel, &fired);
		if (ret)
			return ret;
		if (fired == vc->cq->cq) {
			*is_rcq = false;
			return 0;
		}
		if (vc->rcq == NULL || fired != vc->rcq->cq) {
			VRB_LOG_ERROR("the shared completion channel signalled an unknown CQ");
			return RPMA_E_UNKNOWN;
		}
	}
	/* the receive CQ fired now or earlier */
	vc->rcq_due = vrb_main_cq_first(vc) || vrb_main_cq_first_wait(vc);
	*is_rcq = !vc->rcq_due;
	return 0;
}
