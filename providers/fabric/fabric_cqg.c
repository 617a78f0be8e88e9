/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_cqg.c -- libfabric CQs shared by groups of connections (fabric.h, CQ groups) */

#include <stdlib.h>
#include <string.h>

#include "fabric.h"

/* how long an operation may wait for a free record of its connection */
#define FAB_OP_WAIT_NS (2ULL * 1000000000ULL)

/*
 * fab_own_cqs -- the connections of a peer that get a libfabric CQ of their
 * own (RPMA_FABRIC_OWN_CQS, else FAB_OWN_CQS); *bad: the variable is set
 * but is not a number (the default is kept), NULL: not asked
 */
uint32_t fab_own_cqs(const char **bad)
{
	const char *v = getenv("RPMA_FABRIC_OWN_CQS");
	if (bad)
		*bad = NULL;
	if (v == NULL || *v == '\0')
		return FAB_OWN_CQS;
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*end == '\0' && n <= UINT32_MAX)
		return (uint32_t)n;
	if (bad)
		*bad = v;
	return FAB_OWN_CQS;
}

/* fab_cqg_peer_init -- no groups yet; the limit of connections with a CQ of their own */
void fab_cqg_peer_init(struct fab_peer *p)
{
	pthread_mutex_init(&p->cqg_lock, NULL);
	p->cqgs = NULL;
	atomic_init(&p->own_cq_conns, 0);
	const char *bad;
	p->own_cq_limit = fab_own_cqs(&bad);
	if (bad)
		FAB_LOG_WARNING("RPMA_FABRIC_OWN_CQS=%s is not a number: %u kept", bad,
				p->own_cq_limit);
	const char *v = getenv("RPMA_FABRIC_OWN_CQS");
	p->own_cq_asked = v != NULL && *v != '\0';
	if (p->own_cq_asked)
		FAB_LOG_INFO("RPMA_FABRIC_OWN_CQS=%u: later connections share CQs",
			     p->own_cq_limit);
}

/* fab_cqg_peer_fini -- the groups are gone with the connections */
void fab_cqg_peer_fini(struct fab_peer *p)
{
	if (p->cqgs)
		FAB_LOG_WARNING("a peer is closed while connections still share CQs");
	pthread_mutex_destroy(&p->cqg_lock);
}

/*
 * fab_cqg_wanted -- should a new connection that could share a CQ do so?
 * Over reliable datagrams only when RPMA_FABRIC_OWN_CQS is set: there two
 * connection scenarios still fail now and then with shared CQs (HACKING.md)
 */
bool fab_cqg_wanted(struct fab_peer *p)
{
	if (p->rdm && !p->own_cq_asked)
		return false;
	return atomic_load(&p->own_cq_conns) >= p->own_cq_limit;
}

/* fab_op_push -- give a record back to its connection's free list */
void fab_op_push(struct fab_conn *c, struct fab_op *op)
{
	atomic_store_explicit(&op->busy, false, memory_order_relaxed);
	struct fab_op *h = atomic_load_explicit(&c->op_free, memory_order_relaxed);
	do {
		op->next = h;
	} while (!atomic_compare_exchange_weak_explicit(&c->op_free, &h, op, memory_order_release,
							memory_order_relaxed));
}

/*
 * fab_op_pop -- a free record of the connection, or NULL.  Only the posting
 * side pops (one thread at a time, librpma(7)), so a record seen at the
 * head cannot leave and come back meanwhile (no ABA); drainers only push.
 */
static struct fab_op *fab_op_pop(struct fab_conn *c)
{
	struct fab_op *h = atomic_load_explicit(&c->op_free, memory_order_acquire);
	while (h && !atomic_compare_exchange_weak_explicit(
			    &c->op_free, &h, h->next, memory_order_acquire, memory_order_acquire))
		;
	return h;
}

/*
 * fab_op_begin -- the record a grouped connection's operation is posted with:
 * *ctx becomes the record (which keeps the old one), *ff asks for a
 * completion (the record keeps whether the user did); an entry of to is
 * reserved for it.  Waits (driving the group) while every record is out.
 */
int fab_op_begin(struct fab_conn *c, struct fab_cq *to, void **ctx, uint64_t *ff)
{
	struct fab_op *op;
	struct fab_conn_wait w = FAB_WAIT_INIT;
	while ((op = fab_op_pop(c)) == NULL) {
		if (!fab_conn_wait_round(c, &w, FAB_OP_WAIT_NS)) {
			RPMA_LOG_ERROR("fabric: qp %u: all %u operations stayed in flight",
				       c->qp_num, c->ops->n);
			return RPMA_E_PROVIDER;
		}
	}
	if (fab_cq_reserve(to, 1) == 0) {
		fab_op_push(c, op);
		RPMA_LOG_ERROR("fabric: qp %u: no room for the completion (out of memory)",
			       c->qp_num);
		return RPMA_E_NOMEM;
	}
	op->conn = c;
	op->ctx = *ctx;
	op->to = to;
	op->report = (*ff & FI_COMPLETION) != 0;
	atomic_store_explicit(&op->busy, true, memory_order_relaxed);
	*ff |= FI_COMPLETION;
	*ctx = op;
	return 0;
}

/* fab_op_cancel -- an operation fab_op_begin prepared was not posted */
void fab_op_cancel(struct fab_conn *c, void *ctx)
{
	struct fab_op *op = ctx;
	fab_cq_unreserve(op->to, 1);
	fab_op_push(c, op);
}

/* fab_cqg_close -- release a group nobody belongs to (out of the peer's list) */
static void fab_cqg_close(struct fab_cqg *g)
{
	if (g->src.fid) {
		fab_source_remove(g->peer, &g->src);
		fab_source_fini(&g->src);
	}
	if (g->cq) {
		int r = fi_close(&g->cq->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(shared CQ)");
	}
	while (g->graves) {
		struct fab_opset *s = g->graves;
		g->graves = s->next;
		free(s);
	}
	free(g);
}

/* fab_cqg_activity -- the RMA operations the group's members were the target of */
static uint64_t fab_cqg_activity(struct fab_source *src)
{
	struct fab_cqg *g = src->arg;
	uint64_t sum = 0;
	pthread_mutex_lock(&g->peer->cqg_lock);
	for (int i = 0; i < FAB_CQG_MAX; i++)
		if (g->cntrs[i])
			sum += fi_cntr_read(g->cntrs[i]);
	pthread_mutex_unlock(&g->peer->cqg_lock);
	return sum;
}

/*
 * fab_cqg_watch -- c, a member, has an RMA counter (fab_rdm_conn_watch):
 * the group's source sums it with the others' (fab_source.activity_sum)
 */
void fab_cqg_watch(struct fab_conn *c)
{
	struct fab_cqg *g = c->grp;
	if (g == NULL || c->rma_cntr == NULL)
		return;
	pthread_mutex_lock(&g->peer->cqg_lock);
	for (int i = 0; i < FAB_CQG_MAX; i++) {
		if (g->cntrs[i] == NULL) {
			g->cntrs[i] = c->rma_cntr;
			break;
		}
	}
	pthread_mutex_unlock(&g->peer->cqg_lock);
}

/* fab_cqg_open -- a new group with its libfabric CQ, drained by the progress thread */
static int fab_cqg_open(struct fab_peer *p, struct fab_cqg **gp)
{
	struct fab_cqg *g = calloc(1, sizeof(*g));
	if (g == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	g->peer = p;
	g->rdm = p->rdm;
	int ret = fab_cq_open(p, FAB_CQG_SIZE, &g->cq);
	if (ret) {
		g->cq = NULL;
		fab_cqg_close(g);
		return ret;
	}
	FAB_LOG_INFO("a CQ shared by up to %d connections opened", FAB_CQG_MAX);
	fab_source_init(&g->src, p, &g->cq->fid, fab_drain_group, g);
	g->src.shared = true;
	/*
	 * over reliable datagrams the group's CQ never goes to fi_trywait():
	 * rxm (libfabric 1.17 and 2.1, rxm_ep_wait_fd_add) adds each
	 * endpoint's inner CQ to the wait set of the CQs the endpoint is bound
	 * to and never takes it out when the endpoint closes, so fi_trywait()
	 * on a CQ that outlived one of its endpoints followed a freed pointer
	 * (SIGSEGV).  Its fd still wakes the thread (the closed inner CQs'
	 * fds leave its epoll set with their close).
	 */
	g->src.no_trywait = g->rdm;
	/*
	 * reliable datagrams without a wait fd (shm): the thread keeps polling
	 * while the members' receives or RMA operations against them come
	 * (fab_source.watch); the counters stay the members' own, whose
	 * liveness reads them (fab_rdm_data_heard)
	 */
	g->src.watch = g->rdm && p->prog.spin_ns != 0 && g->src.fd < 0;
	if (g->src.watch)
		g->src.activity_sum = fab_cqg_activity;
	fab_source_add(p, &g->src);
	*gp = g;
	return 0;
}

/*
 * fab_cqg_join -- make c (whose endpoint is not bound yet) a member of a
 * group with room, opening one if none has; nops records for its
 * operations (as many as its queues hold at once)
 */
int fab_cqg_join(struct fab_conn *c, uint32_t nops)
{
	struct fab_peer *p = c->peer;
	struct fab_opset *s = calloc(1, sizeof(*s) + (size_t)nops * sizeof(struct fab_op));
	if (s == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	s->n = nops;
	atomic_init(&c->op_free, NULL);
	for (uint32_t i = nops; i-- > 0;) {
		atomic_init(&s->op[i].busy, false);
		s->op[i].next = i + 1 < nops ? &s->op[i + 1] : NULL;
	}
	atomic_store(&c->op_free, nops ? &s->op[0] : NULL);

	pthread_mutex_lock(&p->cqg_lock);
	struct fab_cqg *g = p->cqgs;
	while (g && g->members >= FAB_CQG_MAX)
		g = g->next;
	if (g == NULL) {
		int ret = fab_cqg_open(p, &g);
		if (ret) {
			pthread_mutex_unlock(&p->cqg_lock);
			atomic_store(&c->op_free, NULL);
			free(s);
			return ret;
		}
		g->next = p->cqgs;
		p->cqgs = g;
	}
	g->members++;
	pthread_mutex_unlock(&p->cqg_lock);
	c->grp = g;
	c->ops = s;
	return 0;
}

/* fab_cqg_dead -- (held) mark c's records in flight dead; whether there are any */
static bool fab_cqg_dead(struct fab_opset *s)
{
	bool out = false;
	for (uint32_t i = 0; i < s->n; i++) {
		if (atomic_load_explicit(&s->op[i].busy, memory_order_relaxed)) {
			s->op[i].conn = NULL;
			out = true;
		}
	}
	return out;
}

/*
 * fab_cqg_quiesce -- before c's endpoint closes: from now on whatever
 * drains the group drops c's entries instead of handing them to c (whose
 * endpoint, CQs and events are going away; nobody polls them any more)
 */
void fab_cqg_quiesce(struct fab_conn *c)
{
	struct fab_cqg *g = c->grp;
	if (g == NULL)
		return;
	fab_source_hold(&g->src);
	(void)fab_cqg_dead(c->ops);
	fab_source_release(&g->src);
}

/*
 * fab_cqg_leave -- c's endpoint is closed (what it cancelled is in the
 * group's CQ on the providers we know): take it out of the CQ (dropped,
 * fab_cqg_quiesce), keep the records still out with the group (a provider
 * that would complete them later finds them dead), leave; the last member
 * closes the group
 */
void fab_cqg_leave(struct fab_conn *c)
{
	struct fab_cqg *g = c->grp;
	if (g == NULL)
		return;
	struct fab_peer *p = c->peer;
	struct fab_opset *s = c->ops;

	fab_source_hold(&g->src);
	fab_cqg_drain_all(g);
	bool out = fab_cqg_dead(s);
	fab_source_release(&g->src);
	if (out)
		FAB_LOG_DEBUG("qp %u: operations still out when it left its CQ group", c->qp_num);

	pthread_mutex_lock(&p->cqg_lock);
	for (int i = 0; i < FAB_CQG_MAX; i++)
		if (c->rma_cntr && g->cntrs[i] == c->rma_cntr)
			g->cntrs[i] = NULL; /* it closes after this */
	if (out) {
		s->next = g->graves;
		g->graves = s;
	}
	bool last = --g->members == 0;
	if (last) {
		struct fab_cqg **pp = &p->cqgs;
		while (*pp != g)
			pp = &(*pp)->next;
		*pp = g->next;
	}
	pthread_mutex_unlock(&p->cqg_lock);
	if (!out)
		free(s);
	if (last)
		fab_cqg_close(g);
	c->grp = NULL;
	c->ops = NULL;
	atomic_store(&c->op_free, NULL);
}
