/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_conn.c -- connection requests and connections over libfabric MSG endpoints */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric.h"

/*
 * the InfiniBand CM reason of a rejection by the server's application
 * (rdma_reject(), or its id destroyed); libfabric's verbs passes it as the
 * provider error, and a rejection without our marker (the endpoint was
 * closed instead) has no private data
 */
#define FAB_IB_REJ_CONSUMER 28

/* a per-process counter that numbers connections (rpma_conn_get_qp_num) */
static _Atomic uint32_t fab_qp_counter = 0x100;

/*
 * fab_conn_end -- report the final event of a connection, once (its event
 * was made with the connection: reporting it needs no memory)
 */
void fab_conn_end(struct fab_conn *c, enum rpma_conn_event event)
{
	pthread_mutex_lock(&c->state_lock);
	if (atomic_load(&c->state) == FAB_CONN_DONE) {
		pthread_mutex_unlock(&c->state_lock);
		return;
	}
	atomic_store(&c->state, FAB_CONN_DONE);
	struct fab_event *ev = c->ev_end;
	c->ev_end = NULL;
	ev->kind = event;
	fab_evq_push_event(&c->events, ev);
	pthread_mutex_unlock(&c->state_lock);
	FAB_LOG_INFO("qp %u: %s", c->qp_num, rpma_utils_conn_event_2str(event));
	fab_recvs_cancel(c);
	if (c->rdm)
		fab_rdm_ended(c);
}

/*
 * fab_conn_established -- FI_CONNECTED: the connection is up unless its final
 * event was reported already (a disconnect, a timeout), in one step with the
 * queuing of ESTABLISHED (once, with len bytes of the peer's private data)
 */
void fab_conn_established(struct fab_conn *c, const void *pdata, size_t len)
{
	pthread_mutex_lock(&c->state_lock);
	if (atomic_load(&c->state) == FAB_CONN_DONE) {
		pthread_mutex_unlock(&c->state_lock);
		FAB_LOG_INFO("qp %u: connected after its end was reported: ignored", c->qp_num);
		return;
	}
	atomic_store(&c->state, FAB_CONN_CONNECTED);
	struct fab_event *ev = c->ev_established;
	c->ev_established = NULL;
	if (ev) {
		ev->kind = RPMA_CONN_ESTABLISHED;
		memcpy(ev->data, pdata, len);
		ev->len = len;
		fab_evq_push_event(&c->events, ev);
	}
	pthread_mutex_unlock(&c->state_lock);
	if (ev)
		FAB_LOG_INFO("qp %u: connected (%zu bytes of private data)", c->qp_num, len);
}

/*
 * fab_conn_fi_shutdown -- fi_shutdown() of the connection's endpoint, once:
 * the application (rpma_conn_disconnect) and the progress thread (the
 * answer to the peer's FI_SHUTDOWN, a broken connection) may both want it,
 * at the same time.  libfabric's sockets (1.17) closes the endpoint's
 * connection socket in fi_shutdown() without a lock
 * (prov/sockets/src/sock_ep_msg.c, sock_ep_cm_shutdown: close, then
 * cm.sock = -1), so two calls at once both close its number, and the
 * later close takes whatever descriptor got the number in between.  The
 * same socket is the connection manager's handle->sock_fd, which its
 * thread closes when it reports the peer's shutdown or an error
 * (sock_ep_cm_shutdown_handler, sock_ep_cm_handle_rx,
 * sock_ep_cm_connect_handler) without clearing cm.sock: on such a peer
 * (end_closes) an end read from the EQ marks the endpoint shut, and
 * fi_shutdown() is not called after it.  strace -k of
 * conn/disconnect_while_connecting over sockets showed a connection's
 * socket number closed two or three times as the connection ended: by the
 * connection manager's thread, by our progress thread (fi_shutdown
 * answering FI_SHUTDOWN) and by the application's (rpma_conn_disconnect);
 * every close after the first failed with EBADF, and would have closed
 * any descriptor made in between by any thread: 2.5 failed closes per
 * connection before (1254 in 507, 986 in 386), 0.7 of them in the
 * progress thread's fi_shutdown; 1.5 after (733 in 466, 756 in 512).
 * What remains is libfabric's own: fi_close() of an endpoint shut by
 * fi_shutdown() has the connection manager close the number once more
 * (sock_ep_cm_process_finalizing), and a shutdown may still meet the
 * manager's close of a peer's shutdown arriving at that moment.
 */
static int fab_conn_fi_shutdown(struct fab_conn *c)
{
	if (atomic_exchange(&c->shut, true))
		return 0;
	if (c->rdm)
		return fab_rdm_disconnect(c); /* the protocol's DISC */
	return fi_shutdown(c->ep, 0);
}

/*
 * fab_conn_mark_broken -- an operation failed with err: a later shutdown is a
 * lost connection.  A failure other than a flushed (cancelled) operation
 * breaks the connection at once, as a verbs QP enters the error state: the
 * connection is lost and the endpoint shut down, whatever the provider would
 * otherwise do (sockets keeps going after a refused access, tcp drops the
 * connection).
 */
void fab_conn_mark_broken(struct fab_conn *c, int err)
{
	atomic_store(&c->broken, true);
	if (err != FI_ECANCELED) {
		/*
		 * count failed operations per peer (a refused key or range at
		 * the remote side among them: tcp and sockets tell the target
		 * nothing, only the initiator sees them); the log gets the 1st,
		 * 2nd, 4th, 8th... so that a flood stays visible but short
		 */
		uint64_t n = atomic_fetch_add(&c->peer->access_errors, 1) + 1;
		if ((n & (n - 1)) == 0)
			FAB_LOG_NOTICE("qp %u: an operation failed: %s (%llu failed operations on "
				       "this peer so far)",
				       c->qp_num, fi_strerror(err), (unsigned long long)n);
	}
	/*
	 * a cancelled operation follows a shutdown on the socket providers;
	 * on libfabric's verbs it is a flushed work request: the queue pair is
	 * in the error state already (and libfabric drops the error of an
	 * unsignaled request, so this may be the first sign of it)
	 */
	/*
	 * ... but over reliable datagrams nothing of ours cancels an operation
	 * before the connection's end: libfabric 2.1's tcp;ofi_rxm reports a
	 * write its target refused as cancelled (its own connection to the
	 * peer dropped and made again underneath), so there it breaks too
	 */
	bool unasked = c->rdm != NULL && !atomic_load(&c->shut);
	if ((err == FI_ECANCELED && !c->peer->verbs && !unasked) ||
	    atomic_load(&c->state) != FAB_CONN_CONNECTED)
		return;
	fab_conn_end(c, RPMA_CONN_LOST);
	(void)fab_conn_fi_shutdown(c);
}

/* fab_conn_eq_error -- map an EQ error entry to a connection event */
static void fab_conn_eq_error(struct fab_conn *c, const struct fi_eq_err_entry *err)
{
	int st = atomic_load(&c->state);
	FAB_LOG_INFO("qp %u: connection error: %s (provider error %d)", c->qp_num,
		     fi_strerror(err->err), err->prov_errno);
	if (st == FAB_CONN_CONNECTED) {
		fab_conn_end(c, RPMA_CONN_LOST);
		return;
	}
	switch (err->err) {
	case FI_ECONNREFUSED:
		/*
		 * Our rejections carry a marker; a refused TCP connection carries
		 * nothing; over rdma_cm the reason tells.  Where nobody listening
		 * makes fi_connect() fail at once (sockets), a later refusal is
		 * always the server's.
		 */
		fab_conn_end(c, (err->err_data_size > 0 || c->peer->refused_sync ||
				 (c->peer->verbs && (err->prov_errno == FAB_IB_REJ_CONSUMER ||
						     err->prov_errno == -FAB_IB_REJ_CONSUMER)))
					? RPMA_CONN_REJECTED
					: RPMA_CONN_UNREACHABLE);
		break;
	case FI_EIO:
	case FI_ECONNRESET:
	case FI_ECONNABORTED:
		/*
		 * The transport connection was up and the server closed it without
		 * accepting: a request deleted after its endpoint was built (tcp
		 * cannot send its refusal then) is still a rejection.
		 */
		fab_conn_end(c, RPMA_CONN_REJECTED);
		break;
	case FI_ETIMEDOUT:
	case FI_EHOSTUNREACH:
	case FI_ENETUNREACH:
	case FI_EADDRNOTAVAIL:
		fab_conn_end(c, RPMA_CONN_UNREACHABLE);
		break;
	default:
		/*
		 * On the socket providers a request that fails after the TCP
		 * connection was made means the server closed it unanswered, a
		 * refusal as FI_EIO above, which libfabric's tcp (1.17) may
		 * report with a stale errno instead: FI_ENOENT, from the second
		 * refused request of a peer on (api/refusals_on_live_connection)
		 */
		fab_conn_end(c, (!c->incoming && !c->peer->verbs) ? RPMA_CONN_REJECTED
								  : RPMA_CONN_LOST);
	}
}

/* fab_conn_shutdown -- the peer shut the connection down (FI_SHUTDOWN without error) */
static void fab_conn_shutdown(struct fab_conn *c)
{
	/*
	 * the operations the shutdown cancelled may still sit in the CQs: take
	 * them first, they tell whether it broke
	 */
	fab_source_drain(fab_conn_txs(c));
	if (c->rxcq)
		fab_source_drain(&c->rx_src);
	fab_conn_end(c, atomic_load(&c->broken) ? RPMA_CONN_LOST : RPMA_CONN_CLOSED);
	/*
	 * answer the peer's disconnect at once: on libfabric's verbs this moves
	 * the queue pair to the error state, so work posted from now on fails
	 * instead of being sent to a peer that may be gone
	 */
	(void)fab_conn_fi_shutdown(c);
}

/*
 * fab_conn_early -- whether an FI_SHUTDOWN or an EQ error of an incoming
 * connection read before its FI_CONNECTED has to wait for it.  libfabric
 * 2.x's tcp (xnet_ep_accept) sends the accept to the client and hands the
 * socket to the progress engine before it queues FI_CONNECTED, without a
 * lock between the two: a progress run in that window (our progress thread)
 * can read the client's whole short connection and its close, and queue
 * FI_SHUTDOWN first.  While fi_accept() runs, or when FI_CONNECTED follows
 * in the EQ, the end waits for it (ESTABLISHED, then the end); once
 * fi_accept() has returned and the EQ holds nothing more, the end stands.
 */
static bool fab_conn_early(struct fab_conn *c, const struct fi_eq_err_entry *err)
{
	if (!c->incoming || atomic_load(&c->state) != FAB_CONN_CONNECTING)
		return false;
	if (c->early) {
		/* the end already held stands: a second one must not overtake it */
		FAB_LOG_INFO("qp %u: %s after an end held back: dropped", c->qp_num,
			     err ? "an EQ error" : "FI_SHUTDOWN");
		return true;
	}
	c->early = err ? 2 : 1;
	atomic_store(&c->peer->ceq.nearly, true);
	if (err) {
		c->early_err = *err;
		c->early_err.err_data = NULL; /* only its size is used */
	}
	FAB_LOG_INFO("qp %u: %s before FI_CONNECTED: held back until it", c->qp_num,
		     err ? "an EQ error" : "FI_SHUTDOWN");
	return true;
}

/* fab_conn_early_end -- report the end held back by fab_conn_early */
static void fab_conn_early_end(struct fab_conn *c)
{
	int early = c->early;
	c->early = 0;
	if (early == 1)
		fab_conn_shutdown(c);
	else if (early == 2)
		fab_conn_eq_error(c, &c->early_err);
}

/*
 * fab_ceq_find -- the connection whose endpoint is fid, among those bound to
 * the peer's EQ; NULL: none (closed since: the entry is dropped).  The
 * caller drains the EQ: a connection found stays until the drain ends
 * (fab_ceq_leave).
 */
static struct fab_conn *fab_ceq_find(struct fab_ceq *q, const struct fid *fid)
{
	struct fab_conn *c;
	pthread_mutex_lock(&q->lock);
	for (c = q->conns; c; c = c->ceq_next)
		if (c->ep && &c->ep->fid == fid)
			break;
	pthread_mutex_unlock(&q->lock);
	return c;
}

/*
 * fab_ceq_settle -- at the end of a drain (the EQ is empty): report the ends
 * held back before FI_CONNECTED of the connections whose fi_accept() had
 * returned when the drain began (seen: fab_ceq.accepts then;
 * fab_conn_early), and fire the connect timeouts that passed.
 * The connections found are handled out of the lock (they stay while the
 * drain runs: fab_ceq_leave); more than FAB_CEQ_BATCH at once are left for
 * the next drain, which comes at once.
 */
static void fab_ceq_settle(struct fab_ceq *q, uint64_t seen)
{
	uint64_t now = fab_now_ns(), next = 0;
	struct fab_conn *early[FAB_CEQ_BATCH], *expired[FAB_CEQ_BATCH], *timers[FAB_CEQ_BATCH];
	int nearly = 0, nexp = 0, ntimers = 0;
	bool more = false;
	pthread_mutex_lock(&q->lock);
	uint64_t dl = atomic_load(&q->src.deadline_ns);
	bool timeouts = dl != 0 && dl <= now;
	if (atomic_exchange(&q->nearly, false) || timeouts) {
		for (struct fab_conn *c = q->conns; c; c = c->ceq_next) {
			/*
			 * only a drain that began after fi_accept() returned has
			 * read the EQ past that connection's FI_CONNECTED: one
			 * that began before may have found the EQ empty just
			 * before fi_accept() queued it
			 */
			uint64_t acc = atomic_load(&c->accepted);
			if (c->early && acc != 0 && acc <= seen) {
				if (nearly < FAB_CEQ_BATCH)
					early[nearly++] = c;
				else
					more = true;
			} else if (c->early) {
				atomic_store(&q->nearly, true); /* look again after fi_accept() */
			}
			if (c->deadline_ns == 0)
				continue;
			if (c->rdm) {
				/* the protocol's timer (fabric_rdm.c) */
				if (c->deadline_ns <= now && ntimers < FAB_CEQ_BATCH) {
					c->deadline_ns = 0;
					timers[ntimers++] = c;
				} else if (next == 0 || c->deadline_ns < next) {
					next = c->deadline_ns;
				}
			} else if (atomic_load(&c->state) != FAB_CONN_CONNECTING) {
				c->deadline_ns = 0;
			} else if (c->deadline_ns <= now && nexp < FAB_CEQ_BATCH) {
				c->deadline_ns = 0;
				expired[nexp++] = c;
			} else if (next == 0 || c->deadline_ns < next) {
				next = c->deadline_ns;
			}
		}
		if (more || nexp == FAB_CEQ_BATCH || ntimers == FAB_CEQ_BATCH) {
			atomic_store(&q->nearly, true);
			next = now; /* the thread drains again at once */
		}
		if (timeouts || more || nexp == FAB_CEQ_BATCH || ntimers == FAB_CEQ_BATCH)
			atomic_store(&q->src.deadline_ns, next);
	}
	pthread_mutex_unlock(&q->lock);
	for (int i = 0; i < nearly; i++)
		fab_conn_early_end(early[i]);
	for (int i = 0; i < ntimers; i++)
		fab_rdm_conn_timer(timers[i]);
	for (int i = 0; i < nexp; i++) {
		struct fab_conn *c = expired[i];
		if (atomic_load(&c->state) != FAB_CONN_CONNECTING)
			continue;
		FAB_LOG_ERROR("qp %u: no connection within %d ms", c->qp_num, c->timeout_ms);
		fab_conn_end(c, RPMA_CONN_UNREACHABLE);
	}
}

/* fab_ceq_dispatch -- one EQ entry of connection c */
static void fab_ceq_dispatch(struct fab_conn *c, uint32_t event, const void *pdata, size_t len)
{
	if (event == FI_CONNECTED) {
		if (len > FAB_PDATA_WIRE_MAX)
			len = FAB_PDATA_WIRE_MAX;
		fab_conn_established(c, pdata, len);
		fab_conn_early_end(c);
	} else if (event == FI_SHUTDOWN && atomic_load(&c->state) == FAB_CONN_CONNECTING &&
		   !c->incoming) {
		/* closed by the server before it accepted */
		fab_conn_end(c, RPMA_CONN_REJECTED);
	} else if (event == FI_SHUTDOWN) {
		if (!fab_conn_early(c, NULL))
			fab_conn_shutdown(c);
	} else {
		FAB_LOG_WARNING("qp %u: unexpected event %u", c->qp_num, event);
	}
}

/*
 * fab_drain_ceq -- turn the entries of the peer's connections' EQ into
 * events of the connections their endpoints belong to
 */
static void fab_drain_ceq(struct fab_source *src)
{
	struct fab_ceq *q = src->arg;
	union {
		struct fi_eq_cm_entry cm;
		char raw[FAB_EQ_ENTRY_SIZE];
	} buf;
	uint64_t seen = atomic_load(&q->accepts);
	uint32_t found = 0;
	for (;;) {
		uint32_t event = 0;
		ssize_t n = fi_eq_read(q->eq, &event, &buf, sizeof(buf), 0);
		if (n == -FI_EAGAIN)
			break;
		found++;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;
			memset(&err, 0, sizeof(err));
			ssize_t r = fi_eq_readerr(q->eq, &err, 0);
			if (r < 0) {
				FAB_LOG_FI(r, "fi_eq_readerr()");
				break;
			}
			if (q->delay_us)
				usleep(q->delay_us);
			struct fab_conn *c = fab_ceq_find(q, err.fid);
			if (c && c->peer->end_closes)
				atomic_store(&c->shut, true); /* fab_conn_fi_shutdown */
			if (c == NULL)
				FAB_LOG_INFO("an EQ error of a closed endpoint: %s (dropped)",
					     fi_strerror(err.err));
			else if (!fab_conn_early(c, &err))
				fab_conn_eq_error(c, &err);
			continue;
		}
		if (n < 0) {
			FAB_LOG_FI(n, "fi_eq_read()");
			break;
		}
		if (q->delay_us)
			usleep(q->delay_us);
		struct fab_conn *c =
			(size_t)n >= sizeof(buf.cm) ? fab_ceq_find(q, buf.cm.fid) : NULL;
		if (c == NULL) {
			FAB_LOG_INFO("EQ event %u of a closed endpoint (dropped)", event);
			if (event == FI_CONNREQ && (size_t)n >= sizeof(buf.cm) && buf.cm.info)
				fi_freeinfo(buf.cm.info);
			continue;
		}
		if (event == FI_SHUTDOWN && c->peer->end_closes)
			atomic_store(&c->shut, true); /* fab_conn_fi_shutdown */
		size_t len = (size_t)n > sizeof(buf.cm) ? (size_t)n - sizeof(buf.cm) : 0;
		fab_ceq_dispatch(c, event, buf.cm.data, len);
	}
	/* what it took, for the progress thread (fabric.h, noisy wait fds) */
	atomic_fetch_add_explicit(&src->found, found, memory_order_relaxed);
	fab_ceq_settle(q, seen);
}

/* fab_ceq_expire -- a connect timeout passed: the drain fires it (fab_ceq_settle) */
static void fab_ceq_expire(struct fab_source *src)
{
	struct fab_ceq *q = src->arg;
	/* the thread cleared the deadline: make the drain look at the connections */
	atomic_store(&q->src.deadline_ns, 1);
	fab_source_drain(src);
}

/*
 * fab_ceq_get -- the peer's connections' EQ, made (and handed to the
 * progress thread) with its first connection
 */
static int fab_ceq_get(struct fab_peer *p)
{
	struct fab_ceq *q = &p->ceq;
	int ret = 0;
	pthread_mutex_lock(&q->lock);
	if (q->eq == NULL) {
		ret = fab_eq_open(p, FAB_CEQ_SIZE, &q->eq);
		if (ret == 0) {
			/* between reading an entry and handing it on (churn-eq-delay.sh) */
			q->delay_us = fab_test_us("RPMA_FABRIC_TEST_EQ_DELAY_US",
						  "connection events wait");
			fab_source_init(&q->src, p, &q->eq->fid, fab_drain_ceq, q);
			q->src.expire = fab_ceq_expire;
			q->src.counts = true;
			fab_source_add(p, &q->src);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

/* fab_ceq_fini -- close the peer's connections' EQ (no connection is left) */
void fab_ceq_fini(struct fab_peer *p)
{
	struct fab_ceq *q = &p->ceq;
	if (q->eq) {
		fab_source_remove(p, &q->src);
		fab_source_fini(&q->src);
		int r = fi_close(&q->eq->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(connections' eq)");
		q->eq = NULL;
	}
}

/* fab_ceq_join -- link a built connection into the list of the peer's EQ */
static void fab_ceq_join(struct fab_conn *c)
{
	struct fab_ceq *q = &c->peer->ceq;
	pthread_mutex_lock(&q->lock);
	c->ceq_prev = NULL;
	c->ceq_next = q->conns;
	if (q->conns)
		q->conns->ceq_prev = c;
	q->conns = c;
	c->in_ceq = true;
	pthread_mutex_unlock(&q->lock);
}

/*
 * fab_ceq_leave -- unlink a connection from the list of the peer's EQ and
 * wait until a drain that may have found it ends: from then on no drain
 * touches it (its endpoint may be closed)
 */
static void fab_ceq_leave(struct fab_conn *c)
{
	struct fab_ceq *q = &c->peer->ceq;
	if (!c->in_ceq)
		return;
	pthread_mutex_lock(&q->lock);
	if (c->ceq_prev)
		c->ceq_prev->ceq_next = c->ceq_next;
	else
		q->conns = c->ceq_next;
	if (c->ceq_next)
		c->ceq_next->ceq_prev = c->ceq_prev;
	c->ceq_prev = c->ceq_next = NULL;
	c->in_ceq = false;
	pthread_mutex_unlock(&q->lock);
	fab_source_hold(&q->src);
	fab_source_release(&q->src);
}

/*
 * fab_ceq_set_deadline -- the connect timeout of c: the EQ's drain reports
 * UNREACHABLE when it passes while connecting
 */
void fab_ceq_set_deadline(struct fab_conn *c, uint64_t when)
{
	struct fab_ceq *q = &c->peer->ceq;
	pthread_mutex_lock(&q->lock);
	c->deadline_ns = when;
	uint64_t dl = atomic_load(&q->src.deadline_ns);
	if (dl == 0 || when < dl)
		atomic_store(&q->src.deadline_ns, when);
	pthread_mutex_unlock(&q->lock);
}

/* fab_min -- the smaller of two sizes, a limit of 0 meaning "none" */
static size_t fab_min(size_t want, size_t limit)
{
	return (limit && want > limit) ? limit : want;
}

/* fab_cq_open -- a libfabric CQ whose entries the provider drains itself */
int fab_cq_open(struct fab_peer *p, size_t size, struct fid_cq **cq)
{
	struct fi_cq_attr attr = {
		.size = size,
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_FD,
	};
	int ret = fi_cq_open(p->domain, &attr, cq, NULL);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_EINVAL) {
		attr.wait_obj = FI_WAIT_NONE; /* the progress thread polls it */
		ret = fi_cq_open(p->domain, &attr, cq, NULL);
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_cq_open()");
		return fab_err(ret);
	}
	return 0;
}

/* fab_conn_teardown -- release everything fab_conn_build made (reject: refuse a request) */
static int fab_conn_teardown(struct fab_conn *c, bool reject)
{
	struct fab_peer *p = c->peer;
	int ret = 0, r;

	fab_ceq_leave(c);
	if (c->tx_src.fid) {
		fab_source_remove(p, &c->tx_src);
		fab_source_remove(p, &c->rx_src);
		fab_cq_del_feeder(c->cq, &c->tx_src);
		fab_cq_del_feeder(c->recv_target, &c->rx_src);
	}
	if (c->grp) {
		fab_cq_del_feeder(c->cq, &c->grp->src);
		fab_cqg_quiesce(c);
	}
	if (c->srq)
		fab_srq_detach(c->srq, c);
	/* the protocol's last words: a refusal, a DISC (fabric_rdm.c) */
	ret = fab_rdm_teardown(c);
	/*
	 * Refusing a request.  tcp and sockets mishandle fi_reject() of a request
	 * an endpoint was made from while that endpoint exists (tcp frees the
	 * handle the endpoint still uses; sockets' listener hangs when closed
	 * later): there the endpoint is closed first, which the client sees as a
	 * refusal (REJECTED), and fi_reject() then only releases the handle (tcp;
	 * sockets keeps it with the listener).
	 */
	bool refuse = reject && c->incoming && c->pep && c->info && !c->rdm;
	if (refuse && c->ep && p->reject_ep_ok) {
		r = fab_reject(p, c->pep, c->info->handle);
		if (r == -FI_EBUSY && p->verbs) {
			/*
			 * rdma_cm refuses to reject an id that has a queue pair;
			 * libfabric has released the request, and closing the
			 * endpoint below destroys the id, which makes the kernel
			 * send the rejection
			 */
			FAB_LOG_INFO("qp %u: refusing the request by closing its endpoint",
				     c->qp_num);
		} else if (r) {
			FAB_LOG_FI(r, "fi_reject()");
			ret = RPMA_E_PROVIDER;
		}
		refuse = false;
	}
	if (c->ep) {
		/*
		 * No drain of the connections' EQ runs while the endpoint
		 * closes (fab_ceq_find):
		 * - a drain that read one of its entries (the FI_SHUTDOWN of our
		 *   own fi_shutdown(), typically) before the close took the rest
		 *   out ends first: it finds no connection and drops it; had it
		 *   been preempted past the close, the next connection's
		 *   endpoint could have had the freed one's address, and the
		 *   entry would have ended that connection (churn: REJECTED
		 *   instead of ESTABLISHED, once in 15 000 cycles beside busy
		 *   loops; within the first cycles with the drain slowed by
		 *   300 us: tests/churn/churn-eq-delay.sh);
		 * - libfabric's sockets (sock_ep.c, sock_eq.c) takes the
		 *   endpoint's events out of the EQ on close, under the EQ's
		 *   lock, while its fi_eq_read() checks for an entry without the
		 *   lock and takes the first one with it: a read between the two
		 *   takes the list's head for an entry and frees it ("free():
		 *   invalid pointer" in the progress thread: HACKING.md).
		 */
		bool hold = p->ceq.eq != NULL;
		if (hold)
			fab_source_hold(&p->ceq.src);
		/*
		 * nor of the CQ group's CQ: rxm (1.17) closes the endpoint's
		 * inner CQ before it takes the endpoint off the CQs bound to it,
		 * and a read of such a CQ meanwhile progressed the half-closed
		 * endpoint (SIGSEGV in fi_cq_read, conn/disconnect_while_connecting)
		 */
		if (c->grp)
			fab_source_hold(&c->grp->src);
		r = fi_close(&c->ep->fid);
		if (c->grp)
			fab_source_release(&c->grp->src);
		if (hold)
			fab_source_release(&p->ceq.src);
		if (r && !ret) {
			FAB_LOG_FI(r, "fi_close(ep)");
			ret = RPMA_E_PROVIDER;
		}
		c->ep = NULL;
	}
	if (refuse && !(c->ep_was_made && p->refused_sync)) {
		r = fab_reject(p, c->pep, c->info->handle);
		if (r && !ret) {
			FAB_LOG_FI(r, "fi_reject()");
			ret = RPMA_E_PROVIDER;
		}
	}
	/*
	 * after the endpoint's close: what it cancelled is in the group's CQ
	 * now; before the record of a reliable-datagram connection goes, whose
	 * control slots the group's entries may still name (dropped: ctl_dead)
	 */
	fab_cqg_leave(c);
	fab_rdm_release(c);
	if (c->own_counted)
		atomic_fetch_sub(&p->own_cq_conns, 1);
	c->own_counted = false;
	fab_source_fini(&c->tx_src);
	fab_source_fini(&c->rx_src);
	struct fid *fids[] = {
		c->txcq ? &c->txcq->fid : NULL,
		c->rxcq ? &c->rxcq->fid : NULL,
		c->scratch_mr ? &c->scratch_mr->fid : NULL,
		c->bounce_mr ? &c->bounce_mr->fid : NULL,
		c->rma_cntr ? &c->rma_cntr->fid : NULL,
	};
	for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++) {
		if (fids[i] == NULL)
			continue;
		r = fi_close(fids[i]);
		if (r && !ret) {
			FAB_LOG_FI(r, "fi_close()");
			ret = RPMA_E_PROVIDER;
		}
	}
	c->txcq = c->rxcq = NULL;
	c->scratch_mr = c->bounce_mr = NULL;
	c->rma_cntr = NULL;
	free(c->scratch);
	c->scratch = NULL;
	free(c->stages);
	c->stages = NULL;
	free(c->bounce_mem);
	c->bounce_mem = NULL;
	free(c->bounces);
	c->bounces = NULL;
	free(c->imm_slots);
	c->imm_slots = NULL;
	c->nimm_slots = 0;
	fab_recvs_fini(c);
	if (c->rcq)
		fab_cq_fini(c->rcq);
	if (c->cq)
		fab_cq_fini(c->cq);
	fab_chan_put(c->shared_chan);
	c->shared_chan = NULL;
	c->cq = c->rcq = c->recv_target = NULL;
	fab_evq_fini(&c->events);
	fab_event_free(c->ev_established);
	fab_event_free(c->ev_end);
	c->ev_established = c->ev_end = NULL;
	if (c->info)
		fi_freeinfo(c->info);
	c->info = NULL;
	if (c->state_lock_made)
		pthread_mutex_destroy(&c->state_lock);
	c->state_lock_made = false;
	return ret;
}

/* fab_conn_bind_enable -- bind c's endpoint to its CQs (and EQ, SRQ), then enable it */
static int fab_conn_bind_enable(struct fab_peer *p, struct fab_conn *c, bool one_cq)
{
	struct fid *txf = c->grp ? &c->grp->cq->fid : &c->txcq->fid;
	int ret = fi_ep_bind(c->ep, txf, FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!ret)
		ret = fi_ep_bind(c->ep, one_cq ? txf : &c->rxcq->fid, FI_RECV);
	if (!ret && !p->rdm)
		ret = fi_ep_bind(c->ep, &p->ceq.eq->fid, 0);
	if (!ret && c->srq)
		ret = fab_srq_bind(c->srq, c->ep);
	if (ret) {
		FAB_LOG_FI(ret, "fi_ep_bind()");
		return fab_err(ret);
	}
	if (p->rdm)
		fab_rdm_conn_watch(c, txf);
	ret = fi_enable(c->ep);
	if (ret == -FI_EBUSY && p->rdm) {
		/*
		 * a reliable-datagram connection's endpoint is named by the
		 * provider after the process id (shm: PID:UID:N).  A file of
		 * that name that a killed process left behind, whose pid this
		 * process now has, makes shm (libfabric 1.17 and 2.1) take the
		 * file's owner for alive and refuse the enable with
		 * -FI_EBUSY, after it removed the file: the second enable
		 * makes the name anew (tests/integration/rdm.sh, "stale")
		 */
		FAB_LOG_NOTICE("fi_enable(): %s; once more (a name left by a dead process?)",
			       fi_strerror(-ret));
		ret = fi_enable(c->ep);
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_enable()");
		return fab_err(ret);
	}
	return 0;
}

/*
 * fab_conn_enable -- fab_conn_bind_enable.  Other threads drain a group's
 * CQ meanwhile, and libfabric's shm progresses every endpoint bound to a CQ
 * it reads, one not enabled yet too (SIGSEGV in fi_cq_read, 1.17): a
 * grouped connection holds the group's source until its endpoint is
 * enabled, or closed when it cannot be.
 */
static int fab_conn_enable(struct fab_peer *p, struct fab_conn *c, bool one_cq)
{
	struct fab_source *gs = c->grp ? &c->grp->src : NULL;
	if (gs)
		fab_source_hold(gs);
	int ret = fab_conn_bind_enable(p, c, one_cq);
	if (ret && gs) {
		int r = fi_close(&c->ep->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(ep)");
		c->ep = NULL;
	}
	if (gs)
		fab_source_release(gs);
	return ret;
}

/*
 * fab_conn_build -- the transport of one connection: software CQs, a MSG
 * endpoint with its TX/RX CQs and EQ, scratch memory, SRQ bounce buffers, and
 * the progress sources.  On success the connection owns info; on failure
 * everything is released except info.
 */
int fab_conn_build(struct fab_peer *p, struct fab_conn *c, struct fi_info *info, bool incoming,
		   const struct rpma_conn_setup *setup)
{
	int ret;
	c->peer = p;
	c->incoming = incoming;
	c->timeout_ms = setup->timeout_ms;
	c->qp_num = atomic_fetch_add(&fab_qp_counter, 1) & 0xffffff;
	atomic_init(&c->state, FAB_CONN_NEW);
	pthread_mutex_init(&c->state_lock, NULL);
	c->state_lock_made = true;
	atomic_init(&c->broken, false);
	atomic_init(&c->shut, false);
	c->events.made = false;

	/* its eventfd is made when the user asks for it (fab_conn_get_event_fd) */
	ret = fab_evq_init(&c->events, !p->eager_fds);
	if (ret) {
		fab_rdm_release(c); /* an incoming one's record: the teardown's part */
		return ret;
	}
	c->ev_established = calloc(1, sizeof(*c->ev_established));
	c->ev_end = calloc(1, sizeof(*c->ev_end));
	if (c->ev_established)
		c->ev_established->data = malloc(FAB_PDATA_WIRE_MAX);
	if (c->ev_end == NULL || c->ev_established == NULL || c->ev_established->data == NULL) {
		FAB_LOG_ERROR("out of memory for the connection's events");
		ret = RPMA_E_NOMEM;
		goto err;
	}
	if (setup->shared_channel) {
		ret = fab_chan_new(&c->shared_chan, p->eager_fds);
		if (ret)
			goto err;
	}
	ret = fab_cq_init(fab_cq(setup->cq), setup->cq_size, c->shared_chan, false, p->eager_fds);
	if (ret)
		goto err;
	c->cq = fab_cq(setup->cq);
	if (setup->rcq) {
		ret = fab_cq_init(fab_cq(setup->rcq), setup->rcq_size, c->shared_chan, true,
				  p->eager_fds);
		if (ret)
			goto err;
		c->rcq = fab_cq(setup->rcq);
	}
	/* their waiters drive this connection's libfabric CQs themselves (fab_cq_wait) */
	c->cq->own_feeders = !setup->shared_channel;
	if (c->rcq)
		c->rcq->own_feeders = !setup->shared_channel;
	c->srq = setup->srq ? fab_srq(setup->srq) : NULL;
	c->recv_target = setup->srq_rcq ? fab_cq(setup->srq_rcq) : c->rcq ? c->rcq : c->cq;

	/* the endpoint */
	size_t max_tx = info->tx_attr->size, max_rx = info->rx_attr->size;
	info->tx_attr->op_flags = 0;
	info->rx_attr->op_flags = 0;
	/* an emulated write with immediate data takes two entries (a write and a send) */
	size_t tx_want = (size_t)setup->sq_size * (p->imm_emulated ? 2 : 1) + 2;
	info->tx_attr->size = fab_min(tx_want, max_tx);
	info->rx_attr->size = fab_min(c->srq ? 16 : (size_t)setup->rq_size + 1, max_rx);
	if (p->rdm) {
		ret = fab_rdm_conn_prepare(c);
		if (ret)
			goto err;
	}
	ret = fi_endpoint(p->domain, info, &c->ep, NULL);
	c->ep_was_made = ret == 0;
	if (ret) {
		FAB_LOG_FI(ret, "fi_endpoint()");
		ret = fab_err(ret);
		goto err;
	}
	if (p->rdm) {
		ret = fab_rdm_conn_bind(c);
		if (ret)
			goto err;
	}
	/*
	 * Receives that complete into the main CQ share the libfabric CQ of the
	 * sends (one CQ to read and to wait on, in causal order by itself);
	 * a separate receive CQ or an SRQ gets a libfabric CQ of its own, and so
	 * does libfabric's verbs (whose error entries need not tell the
	 * direction: fab_drain_tx sorts entries by FI_RECV).  Such a connection
	 * shares that CQ with others once the peer has enough connections
	 * with CQs of their own (fabric.h, CQ groups).
	 */
	bool one_cq = c->recv_target == c->cq && !c->srq && !p->verbs;
	if (one_cq && !setup->shared_channel && fab_cqg_wanted(p)) {
		ret = fab_cqg_join(c, (uint32_t)(info->tx_attr->size + info->rx_attr->size + 2));
		if (ret)
			goto err;
		/*
		 * its waiters sleep until a drain of the group notifies them
		 * (fab_chan_wait), not on the group's wait fd, which every
		 * member's completions fire
		 */
		c->cq->own_feeders = false;
	} else {
		ret = fab_cq_open(p,
				  (size_t)setup->cq_size + setup->sq_size + 16 +
					  (one_cq ? setup->rq_size : 0),
				  &c->txcq);
		if (ret)
			goto err;
		atomic_fetch_add(&p->own_cq_conns, 1);
		c->own_counted = true;
	}
	if (!one_cq) {
		/* with a shared receive context, every buffer of the SRQ may complete here */
		size_t rx_want = setup->rq_size;
		if (c->srq && c->srq->srx && c->srq->rq_size > rx_want)
			rx_want = c->srq->rq_size;
		ret = fab_cq_open(p, rx_want + 16, &c->rxcq);
		if (ret)
			goto err;
	}
	ret = fab_ceq_get(p);
	if (ret)
		goto err;
	ret = fab_conn_enable(p, c, one_cq);
	if (ret)
		goto err;
	fab_cqg_watch(c);
	/* as many receive records as the endpoint takes receives */
	if (c->srq == NULL) {
		ret = fab_recvs_init(c, info->rx_attr->size);
		if (ret)
			goto err;
	}
	if (p->rdm) {
		ret = fab_rdm_conn_ready(c, info);
		if (ret)
			goto err;
	} else {
		size_t cm = 0, optlen = sizeof(cm);
		if (fi_getopt(&c->ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm, &optlen) != 0)
			cm = 55; /* the smallest limit of the transports we know (verbs) */
		c->cm_data_max = cm > FAB_PDATA_WIRE_MAX ? FAB_PDATA_WIRE_MAX : cm;
	}

	/*
	 * scratch: slot 0 receives flush reads; slot 1 is where an injected
	 * atomic write copies its value from; without injection every slot of
	 * 1 .. sq_size stages one atomic write until it completes (fabric.h)
	 */
	c->scratch_slots = p->inject_atomic ? 2 : (size_t)setup->sq_size + 1;
	c->scratch = calloc(c->scratch_slots, sizeof(uint64_t));
	if (!p->inject_atomic && c->scratch)
		c->stages = calloc(c->scratch_slots - 1, sizeof(*c->stages));
	if (c->scratch == NULL || (!p->inject_atomic && c->stages == NULL)) {
		FAB_LOG_ERROR("out of memory");
		ret = RPMA_E_NOMEM;
		goto err;
	}
	uint64_t key;
	ret = fab_peer_reg(p, c->scratch, c->scratch_slots * sizeof(uint64_t), FI_READ | FI_WRITE,
			   false, &c->scratch_mr, &c->scratch_desc, &key);
	if (ret)
		goto err;

	if (p->imm_emulated) {
		/* more records than the TX queue holds operations: a record is reused
		 * only after its operations left the queue */
		c->nimm_slots = (uint32_t)(2 * info->tx_attr->size + 2);
		c->imm_slots = calloc(c->nimm_slots, sizeof(*c->imm_slots));
		if (c->imm_slots == NULL) {
			FAB_LOG_ERROR("out of memory");
			ret = RPMA_E_NOMEM;
			goto err;
		}
	}

	if (c->txcq) {
		fab_source_init(&c->tx_src, p, &c->txcq->fid,
				p->rdm ? fab_drain_tx_rdm : fab_drain_tx, c);
		c->tx_src.activity = c->rma_cntr;
		c->tx_src.watch = p->rdm && p->prog.spin_ns != 0 && c->tx_src.fd < 0;
	}
	if (c->rxcq) {
		fab_source_init(&c->rx_src, p, &c->rxcq->fid,
				p->rdm ? fab_drain_rx_rdm : fab_drain_rx, c);
		c->rx_src.watch = p->rdm && p->prog.spin_ns != 0 && c->rx_src.fd < 0;
	}
	if (c->srq) {
		ret = fab_srq_attach(c->srq, c);
		if (ret)
			goto err_sources;
	}
	ret = fab_cq_add_feeder(c->cq, fab_conn_txs(c));
	if (ret)
		goto err_sources;
	ret = c->rxcq ? fab_cq_add_feeder(c->recv_target, &c->rx_src) : 0;
	if (ret) {
		fab_cq_del_feeder(c->cq, fab_conn_txs(c));
		goto err_sources;
	}
	/* the thread drains TX before RX in a round (causal order) */
	if (c->rxcq) {
		c->rx_src.before = &c->tx_src;
		fab_source_add(p, &c->rx_src);
	}
	if (c->txcq)
		fab_source_add(p, &c->tx_src);
	fab_ceq_join(c);
	c->wrap = c->grp != NULL || c->rdm != NULL;
	c->info = info;
	return 0;

err_sources:
	fab_source_fini(&c->tx_src);
	fab_source_fini(&c->rx_src);
err:
	c->info = NULL; /* the caller keeps info */
	fab_conn_teardown(c, false);
	return ret;
}

/* fab_conn_req_new -- resolve addr:port and build an outgoing connection's transport */
int fab_conn_req_new(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
		     const char *port, const struct rpma_conn_setup *setup)
{
	struct fab_peer *p = fab_peer(peer);
	struct fi_info *info = NULL;
	int ret = fab_conn_getinfo(p, addr, port, &info);
	if (ret)
		return ret;
	ret = fab_conn_build(p, fab_req(req), info, false, setup);
	if (ret) {
		fi_freeinfo(info);
		return ret;
	}
	FAB_LOG_NOTICE("requesting a connection to %s:%s", addr, port);
	return 0;
}

/* fab_conn_req_delete -- drop a request; an incoming one is rejected */
int fab_conn_req_delete(struct rpma_conn_req *req)
{
	return fab_conn_teardown(fab_req(req), true);
}

/*
 * fab_conn_req_connect -- connect (outgoing) or accept (incoming) with
 * private data, sent in our envelope (fabric_envelope.h): the user has the
 * transport's limit less FAB_ENV_SIZE bytes
 */
int fab_conn_req_connect(struct rpma_conn_req *req, struct rpma_conn *conn,
			 const struct rpma_conn_private_data *pdata)
{
	struct fab_conn *c = fab_req(req);
	const void *ptr = pdata ? pdata->ptr : NULL;
	size_t len = pdata ? pdata->len : 0;
	if (c->rdm) {
		int r = fab_rdm_connect(c, ptr, len);
		if (r)
			fab_conn_teardown(c, true);
		return r;
	}
	size_t user_max = c->cm_data_max > FAB_ENV_SIZE ? c->cm_data_max - FAB_ENV_SIZE : 0;
	unsigned char wire[FAB_PDATA_WIRE_MAX];
	int ret;
	if (len > user_max) {
		FAB_LOG_ERROR("private data of %zu bytes exceeds the transport's limit of %zu "
			      "(%zu less the provider's envelope of %d)",
			      len, user_max, c->cm_data_max, FAB_ENV_SIZE);
		fab_conn_teardown(c, true);
		return RPMA_E_INVAL;
	}
	size_t wire_len = fab_env_encode(wire, sizeof(wire), ptr, len);
	atomic_store(&c->state, FAB_CONN_CONNECTING);
	if (c->incoming) {
		ret = fi_accept(c->ep, wire, wire_len);
		if (ret) {
			FAB_LOG_FI(ret, "fi_accept()");
			fab_conn_teardown(c, true);
			return RPMA_E_PROVIDER;
		}
		/*
		 * an end held back while fi_accept() ran is settled by the
		 * drain below, or by any other that begins from now on
		 * (fab_conn_early, fab_ceq_settle)
		 */
		atomic_store(&c->accepted, atomic_fetch_add(&c->peer->ceq.accepts, 1) + 1);
		fab_source_drain(&c->peer->ceq.src);
		return 0;
	}
	if (c->timeout_ms > 0)
		fab_ceq_set_deadline(c, fab_now_ns() + (uint64_t)c->timeout_ms * 1000000ULL);
	ret = fi_connect(c->ep, c->info->dest_addr, wire, wire_len);
	if (ret == -FI_ECONNREFUSED || ret == -FI_ETIMEDOUT || ret == -FI_EHOSTUNREACH ||
	    ret == -FI_ENETUNREACH) {
		/* some providers fail at once: report it as the event it is */
		FAB_LOG_INFO("fi_connect(): %s", fi_strerror(-ret));
		fab_conn_end(c, RPMA_CONN_UNREACHABLE);
		return 0;
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_connect()");
		fab_conn_teardown(c, false);
		return RPMA_E_PROVIDER;
	}
	fab_progress_kick(c->peer); /* take the deadline into account */
	return 0;
}

/* fab_conn_req_recv -- post a receive before the connection exists */
int fab_conn_req_recv(struct rpma_conn_req *req, const struct rpma_mr_local *dst, size_t offset,
		      size_t len, const void *op_context)
{
	struct fab_conn *c = fab_req(req);
	if (c->srq) {
		FAB_LOG_ERROR("rpma_conn_req_recv: the connection receives through a shared RQ");
		return RPMA_E_INVAL;
	}
	return fab_post_recv(c, fab_mr_addr(dst, offset), len, fab_mr_desc(dst),
			     (void *)op_context);
}

/*
 * fab_conn_get_event_fd -- readable while a connection event waits (made
 * now when asked for the first time, readable at once when events wait)
 */
int fab_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	return fab_evq_get_fd(&fab_conn(conn)->events, fd);
}

/*
 * fab_conn_refuse_answer -- the server's accept carries no envelope of ours:
 * close the connection; the final event (REJECTED, or the one that came
 * first) is queued
 */
static void fab_conn_refuse_answer(struct fab_conn *c, enum fab_env_status st, unsigned version,
				   size_t len)
{
	if (st == FAB_ENV_OTHER_MAJOR)
		FAB_LOG_ERROR("qp %u: the server speaks version %u.%u of the fabric provider's "
			      "connection protocol, this library %u.%u: connection refused",
			      c->qp_num, version >> 4, version & 0xf, FAB_ENV_MAJOR, FAB_ENV_MINOR);
	else
		FAB_LOG_ERROR("qp %u: the server's answer (%zu bytes of private data) carries %s: "
			      "connection refused",
			      c->qp_num, len, fab_env_status_str(st));
	fab_conn_end(c, RPMA_CONN_REJECTED);
	(void)fab_conn_fi_shutdown(c);
}

/*
 * fab_conn_next_event -- the next connection event, with the peer's private
 * data: on an outgoing connection ESTABLISHED brings the server's, which must
 * be in our envelope
 */
int fab_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
			struct rpma_conn_private_data *pdata)
{
	struct fab_conn *c = fab_conn(conn);
	struct fab_event *ev = NULL;
	int ret = fab_evq_pop(&c->events, &ev);
	if (ret)
		return ret;
	if (ev->kind == RPMA_CONN_ESTABLISHED && !c->incoming && !c->rdm) {
		const void *user;
		size_t user_len;
		unsigned version;
		enum fab_env_status st =
			fab_env_decode(ev->data, ev->len, &user, &user_len, &version);
		if (st != FAB_ENV_OK) {
			fab_conn_refuse_answer(c, st, version, ev->len);
			fab_event_free(ev);
			/* the final event is queued: report it instead */
			ev = NULL;
			ret = fab_evq_pop(&c->events, &ev);
			if (ret)
				return ret;
		} else {
			if (user_len)
				memmove(ev->data, user, user_len);
			ev->len = user_len;
		}
	}
	*event = (enum rpma_conn_event)ev->kind;
	if (ev->kind == RPMA_CONN_ESTABLISHED && ev->len > 0) {
		pdata->ptr = ev->data;
		pdata->len = (uint8_t)(ev->len > FAB_PDATA_API_MAX ? FAB_PDATA_API_MAX : ev->len);
		ev->data = NULL;
	}
	fab_event_free(ev);
	return 0;
}

/*
 * fab_conn_disconnect -- shut the endpoint down; the local side sees CLOSED
 * (reported before the shutdown, so that operations it cancels do not turn
 * the orderly close into a lost connection)
 */
int fab_conn_disconnect(struct rpma_conn *conn)
{
	struct fab_conn *c = fab_conn(conn);
	bool was_done = atomic_load(&c->state) == FAB_CONN_DONE;
	fab_conn_end(c, RPMA_CONN_CLOSED);
	int ret = fab_conn_fi_shutdown(c);
	if (ret && !was_done) {
		FAB_LOG_FI(ret, "fi_shutdown()");
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/* fab_conn_delete -- release the connection's transport */
int fab_conn_delete(struct rpma_conn *conn)
{
	return fab_conn_teardown(fab_conn(conn), false);
}

/* fab_conn_get_qp_num -- the connection's number (stable for its lifetime) */
int fab_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	*qp_num = fab_conn(conn)->qp_num;
	return 0;
}

/* fab_conn_get_compl_fd -- the shared completion channel's descriptor */
int fab_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	struct fab_conn *c = fab_conn(conn);
	int ret = fab_chan_get_fd(c->shared_chan, fd);
	if (ret)
		return ret;
	fab_cq_export_fd(c->cq);
	if (c->rcq)
		fab_cq_export_fd(c->rcq);
	return 0;
}

/* fab_conn_wait -- wait on the shared channel; tell which CQ fired */
int fab_conn_wait(struct rpma_conn *conn, bool *is_rcq)
{
	struct fab_conn *c = fab_conn(conn);
	struct fab_cq *fired = NULL;
	fab_cq_unpark(c->cq);
	if (c->rcq)
		fab_cq_unpark(c->rcq);
	int ret = fab_chan_wait(c->shared_chan, &fired);
	fab_cq_awake(c->cq);
	if (c->rcq)
		fab_cq_awake(c->rcq);
	if (ret)
		return ret;
	*is_rcq = fired == c->rcq;
	return 0;
}
