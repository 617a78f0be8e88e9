/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_faults.c -- error paths release everything: every provider op and
 * every allocation of a scenario is made to fail in turn, and afterwards the
 * fake provider holds no more objects than before, no allocation of the
 * core is left behind and the outputs were not written
 *
 * Allocations are intercepted with -Wl,--wrap=rpma_malloc,--wrap=rpma_calloc
 * (and rpma_free, to count what is still allocated).
 */

#include <stdlib.h>

#include "unit.h"

/* ----- the allocator wrappers */

void *__real_rpma_malloc(size_t size);
void *__real_rpma_calloc(size_t nmemb, size_t size);
void __real_rpma_free(void *ptr);
void *__wrap_rpma_malloc(size_t size);
void *__wrap_rpma_calloc(size_t nmemb, size_t size);
void __wrap_rpma_free(void *ptr);

#define TRACK_MAX 4096

static void *tracked[TRACK_MAX];
static int alloc_calls;
static int alloc_fail_at; /* 1-based; 0: never */
static int alloc_failed;

/* track -- remember a live allocation */
static void track(void *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < TRACK_MAX; i++) {
		if (tracked[i] == NULL) {
			tracked[i] = p;
			return;
		}
	}
	abort();
}

/* outstanding -- allocations of the core not freed yet */
static int outstanding(void)
{
	int n = 0;
	for (int i = 0; i < TRACK_MAX; i++)
		n += tracked[i] != NULL;
	return n;
}

/* should_fail -- is this allocation the one to fail? */
static bool should_fail(void)
{
	alloc_calls++;
	if (alloc_fail_at > 0 && alloc_calls == alloc_fail_at) {
		alloc_failed++;
		return true;
	}
	return false;
}

/* __wrap_rpma_malloc -- malloc that can be made to fail */
void *__wrap_rpma_malloc(size_t size)
{
	if (should_fail())
		return NULL;
	void *p = __real_rpma_malloc(size);
	track(p);
	return p;
}

/* __wrap_rpma_calloc -- calloc that can be made to fail */
void *__wrap_rpma_calloc(size_t nmemb, size_t size)
{
	if (should_fail())
		return NULL;
	void *p = __real_rpma_calloc(nmemb, size);
	track(p);
	return p;
}

/* __wrap_rpma_free -- free, forgetting the allocation */
void __wrap_rpma_free(void *ptr)
{
	for (int i = 0; ptr && i < TRACK_MAX; i++) {
		if (tracked[i] == ptr) {
			tracked[i] = NULL;
			break;
		}
	}
	__real_rpma_free(ptr);
}

/* arm_alloc -- fail the n-th allocation from now (0: none) */
static void arm_alloc(int n)
{
	alloc_calls = 0;
	alloc_fail_at = n;
	alloc_failed = 0;
}

/* ----- scenarios */

/* what a scenario may use and produce */
struct sctx {
	enum fake_prov prov;
	struct ibv_context *ctx;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_srq *srq;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_mr_remote *rmr;
	/* outputs of the call under test (poisoned before) */
	struct rpma_peer *out_peer;
	struct rpma_mr_local *out_mr;
	struct rpma_ep *out_ep;
	struct rpma_conn_req *out_req;
	struct rpma_conn *out_conn;
	struct rpma_srq *out_srq;
	struct ibv_context *out_ctx;
};

struct scenario {
	const char *name;
	/* prepare -- objects the call needs, built without faults */
	void (*prepare)(struct sctx *s);
	/* act -- the call under test */
	int (*act)(struct sctx *s);
	/* offsetof the output act writes only on success (0: none) */
	size_t out;
	/* undo -- release what act produced on success */
	void (*undo)(struct sctx *s);
	/* release -- release what prepare built (and act did not consume) */
	void (*release)(struct sctx *s);
	/* act consumes s->req whatever happens */
	bool consumes_req;
	/* prepare_req -- the request act consumes (after prepare) */
	void (*prepare_req)(struct sctx *s);
};

static uint8_t mr_buf[4096];

/* prep_peer -- a peer */
static void prep_peer(struct sctx *s)
{
	unit_provider(s->prov == FAKE_PROV_VERBS ? "verbs" : "fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &s->ctx),
		     0);
	unit_provider(NULL);
	cr_assert_eq(rpma_peer_new(s->ctx, &s->peer), 0);
}

/* prep_ctx -- only the device */
static void prep_ctx(struct sctx *s)
{
	unit_provider(s->prov == FAKE_PROV_VERBS ? "verbs" : "fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &s->ctx),
		     0);
	unit_provider(NULL);
}

/* prep_cfg -- a peer and connection settings with a receive CQ */
static void prep_cfg(struct sctx *s)
{
	prep_peer(s);
	cr_assert_eq(rpma_conn_cfg_new(&s->cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(s->cfg, 4), 0);
}

/* prep_cfg_shared -- the same with a shared completion channel */
static void prep_cfg_shared(struct sctx *s)
{
	prep_cfg(s);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(s->cfg, true), 0);
}

/* prep_cfg_srq -- the same with an SRQ that has its own receive CQ */
static void prep_cfg_srq(struct sctx *s)
{
	prep_cfg(s);
	cr_assert_eq(rpma_srq_new(s->peer, NULL, &s->srq), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(s->cfg, s->srq), 0);
}

/* prep_ep -- a peer, settings and a listening endpoint with one request waiting */
static void prep_ep(struct sctx *s)
{
	prep_cfg(s);
	cr_assert_eq(rpma_ep_listen(s->peer, UNIT_ADDR, UNIT_PORT, &s->ep), 0);
	fake_push_conn_req("pdata", 5);
}

/* mk_req_out -- an outgoing request */
static void mk_req_out(struct sctx *s)
{
	cr_assert_eq(rpma_conn_req_new(s->peer, UNIT_ADDR, UNIT_PORT, s->cfg, &s->req), 0);
}

/* mk_req_in -- an incoming request carrying private data */
static void mk_req_in(struct sctx *s)
{
	cr_assert_eq(rpma_ep_next_conn_req(s->ep, s->cfg, &s->req), 0);
}

/* prep_conn -- a connection and a remote region accepting both flush types */
static void prep_conn(struct sctx *s)
{
	prep_cfg(s);
	mk_req_out(s);
	cr_assert_eq(rpma_conn_req_connect(&s->req, NULL, &s->conn), 0);
	uint8_t desc[21];
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, UNIT_USAGE_ALL);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &s->rmr), 0);
}

/* rel_all -- release whatever prepare built */
static void rel_all(struct sctx *s)
{
	if (s->rmr)
		cr_assert_eq(rpma_mr_remote_delete(&s->rmr), 0);
	if (s->conn)
		cr_assert_eq(rpma_conn_delete(&s->conn), 0);
	if (s->req)
		cr_assert_eq(rpma_conn_req_delete(&s->req), 0);
	if (s->ep)
		cr_assert_eq(rpma_ep_shutdown(&s->ep), 0);
	if (s->cfg)
		cr_assert_eq(rpma_conn_cfg_delete(&s->cfg), 0);
	if (s->srq)
		cr_assert_eq(rpma_srq_delete(&s->srq), 0);
	if (s->peer)
		cr_assert_eq(rpma_peer_delete(&s->peer), 0);
}

/* act_get_ctx -- rpma_utils_get_ibv_context */
static int act_get_ctx(struct sctx *s)
{
	unit_provider(s->prov == FAKE_PROV_VERBS ? "verbs" : "fabric");
	/* a new address each time would not make a new handle: the fake serves one device */
	int ret = rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE, &s->out_ctx);
	unit_provider(NULL);
	return ret;
}

/* act_peer_new -- rpma_peer_new */
static int act_peer_new(struct sctx *s)
{
	return rpma_peer_new(s->ctx, &s->out_peer);
}

/* undo_peer -- delete the new peer */
static void undo_peer(struct sctx *s)
{
	cr_assert_eq(rpma_peer_delete(&s->out_peer), 0);
}

/* act_mr_reg -- rpma_mr_reg */
static int act_mr_reg(struct sctx *s)
{
	return rpma_mr_reg(s->peer, mr_buf, sizeof(mr_buf),
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			   &s->out_mr);
}

/* undo_mr -- deregister */
static void undo_mr(struct sctx *s)
{
	cr_assert_eq(rpma_mr_dereg(&s->out_mr), 0);
}

/* act_ep_listen -- rpma_ep_listen */
static int act_ep_listen(struct sctx *s)
{
	return rpma_ep_listen(s->peer, UNIT_ADDR, UNIT_PORT, &s->out_ep);
}

/* undo_ep -- shut the endpoint down */
static void undo_ep(struct sctx *s)
{
	cr_assert_eq(rpma_ep_shutdown(&s->out_ep), 0);
}

/* act_conn_req_new -- rpma_conn_req_new */
static int act_conn_req_new(struct sctx *s)
{
	return rpma_conn_req_new(s->peer, UNIT_ADDR, UNIT_PORT, s->cfg, &s->out_req);
}

/* undo_req -- drop the request */
static void undo_req(struct sctx *s)
{
	cr_assert_eq(rpma_conn_req_delete(&s->out_req), 0);
}

/* act_next_conn_req -- rpma_ep_next_conn_req */
static int act_next_conn_req(struct sctx *s)
{
	return rpma_ep_next_conn_req(s->ep, s->cfg, &s->out_req);
}

/* act_connect -- rpma_conn_req_connect with private data */
static int act_connect(struct sctx *s)
{
	char reply[] = "reply";
	struct rpma_conn_private_data pd = {reply, sizeof(reply)};
	return rpma_conn_req_connect(&s->req, &pd, &s->out_conn);
}

/* undo_conn -- delete the connection */
static void undo_conn(struct sctx *s)
{
	cr_assert_eq(rpma_conn_delete(&s->out_conn), 0);
}

/* act_srq_new -- rpma_srq_new with the default settings (with a receive CQ) */
static int act_srq_new(struct sctx *s)
{
	return rpma_srq_new(s->peer, NULL, &s->out_srq);
}

/* undo_srq -- delete the SRQ */
static void undo_srq(struct sctx *s)
{
	cr_assert_eq(rpma_srq_delete(&s->out_srq), 0);
}

/* act_flush -- the first rpma_flush of a connection (its APM region was made with it) */
static int act_flush(struct sctx *s)
{
	return rpma_flush(s->conn, s->rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
			  RPMA_F_COMPLETION_ALWAYS, NULL);
}

/* act_peer_cfg -- build and serialise a peer cfg (allocations only) */
static int act_peer_cfg(struct sctx *s)
{
	(void)s;
	struct rpma_peer_cfg *pcfg = NULL;
	int ret = rpma_peer_cfg_new(&pcfg);
	if (ret)
		return ret;
	uint8_t desc = 1;
	struct rpma_peer_cfg *remote = NULL;
	ret = rpma_peer_cfg_from_descriptor(&desc, 1, &remote);
	rpma_peer_cfg_delete(&pcfg);
	if (ret)
		return ret;
	return rpma_peer_cfg_delete(&remote);
}

/* act_remote -- decode a remote region descriptor */
static int act_remote(struct sctx *s)
{
	(void)s;
	uint8_t desc[21];
	struct rpma_mr_remote *mr = NULL;
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, RPMA_MR_USAGE_READ_SRC);
	int ret = rpma_mr_remote_from_descriptor(desc, 21, &mr);
	if (ret)
		return ret;
	return rpma_mr_remote_delete(&mr);
}

/* act_cfgs -- connection and SRQ settings */
static int act_cfgs(struct sctx *s)
{
	(void)s;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq_cfg *scfg = NULL;
	int ret = rpma_conn_cfg_new(&cfg);
	if (ret)
		return ret;
	ret = rpma_srq_cfg_new(&scfg);
	rpma_conn_cfg_delete(&cfg);
	if (ret)
		return ret;
	return rpma_srq_cfg_delete(&scfg);
}

/* snapshot of what is held */
struct held {
	int live[FAKE_OBJ_MAX];
	int allocs;
	int fds;
};

/* held_now -- what the fake and the allocator hold now */
static void held_now(struct held *h)
{
	for (int i = 0; i < FAKE_OBJ_MAX; i++)
		h->live[i] = fake_live((enum fake_obj)i);
	h->allocs = outstanding();
	h->fds = fake_fds_open();
}

/* held_eq -- nothing more (and nothing less) is held than in the snapshot */
static void held_eq(const struct held *want, const char *name, const char *kind, int n)
{
	struct held now;
	held_now(&now);
	for (int i = 0; i < FAKE_OBJ_MAX; i++)
		cr_assert_eq(now.live[i], want->live[i],
			     "%s: %s #%d: object kind %d: %d live, want %d", name, kind, n, i,
			     now.live[i], want->live[i]);
	cr_assert_eq(now.allocs, want->allocs, "%s: %s #%d: %d allocations held, want %d", name,
		     kind, n, now.allocs, want->allocs);
	cr_assert_eq(now.fds, want->fds, "%s: %s #%d: fds", name, kind, n);
}

#define POISON ((void *)0xBADBADBAD)

/*
 * run -- fail the n-th provider call (alloc == false) or the n-th allocation
 * (alloc == true) of the scenario's act, for n = 1, 2, ... until act runs
 * through without reaching the n-th; returns how many faults were injected
 */
static int run(const struct scenario *sc, enum fake_prov prov, bool alloc)
{
	const char *kind = alloc ? "allocation" : "provider call";
	int injected = 0;
	for (int n = 1; n < 200; n++) {
		struct sctx s;
		memset(&s, 0, sizeof(s));
		s.prov = prov;
		s.out_peer = POISON;
		s.out_mr = POISON;
		s.out_ep = POISON;
		s.out_req = POISON;
		s.out_conn = POISON;
		s.out_srq = POISON;
		s.out_ctx = POISON;
		fake_reset();
		struct held before_prepare, before_act, before_req;
		held_now(&before_prepare);
		sc->prepare(&s);
		/* a request consumed by act leaves what was held before it was made */
		held_now(&before_req);
		if (sc->prepare_req)
			sc->prepare_req(&s);
		held_now(&before_act);

		if (alloc)
			arm_alloc(n);
		else
			fake_fail_call(n, RPMA_E_PROVIDER);
		int ret = sc->act(&s);
		bool fired = alloc ? alloc_failed > 0 : fake_injected() > 0;
		arm_alloc(0);
		fake_fail_call(0, 0);

		if (!fired) {
			cr_assert_eq(ret, 0, "%s: no fault at %s #%d but ret %d", sc->name, kind, n,
				     ret);
			if (sc->undo)
				sc->undo(&s);
			if (sc->consumes_req)
				s.req = NULL;
			sc->release(&s);
			return injected;
		}
		injected++;
		cr_assert_eq(ret, alloc ? RPMA_E_NOMEM : RPMA_E_PROVIDER,
			     "%s: %s #%d failed: ret %d (%s)", sc->name, kind, n, ret,
			     rpma_err_2str(ret));
		if (sc->out)
			cr_assert_eq(*(void **)((char *)&s + sc->out), POISON,
				     "%s: %s #%d: output written on failure", sc->name, kind, n);
		if (sc->consumes_req) {
			cr_assert_null(s.req, "%s: %s #%d: request not consumed", sc->name, kind,
				       n);
			held_eq(&before_req, sc->name, kind, n);
		} else {
			held_eq(&before_act, sc->name, kind, n);
		}
		cr_assert_eq(fake_violations(), 0, "%s: %s #%d: %s", sc->name, kind, n,
			     fake_last_violation());
		sc->release(&s);
		held_eq(&before_prepare, sc->name, "after release", n);
	}
	cr_assert_fail("%s: still failing after 200 %ss", sc->name, kind);
	return injected;
}

#define OUT(field) offsetof(struct sctx, field)

static const struct scenario sc_get_ctx = {
	"rpma_utils_get_ibv_context", NULL, act_get_ctx, OUT(out_ctx), NULL, rel_all, false, NULL};
static const struct scenario sc_peer_new = {"rpma_peer_new", prep_ctx, act_peer_new, OUT(out_peer),
					    undo_peer,	     rel_all,  false,	     NULL};
static const struct scenario sc_mr_reg = {"rpma_mr_reg", prep_peer, act_mr_reg, OUT(out_mr),
					  undo_mr,	 rel_all,   false,	NULL};
static const struct scenario sc_ep_listen = {
	"rpma_ep_listen", prep_peer, act_ep_listen, OUT(out_ep), undo_ep, rel_all, false, NULL};
static const struct scenario sc_req_new = {"rpma_conn_req_new",
					   prep_cfg,
					   act_conn_req_new,
					   OUT(out_req),
					   undo_req,
					   rel_all,
					   false,
					   NULL};
static const struct scenario sc_req_new_shared = {"rpma_conn_req_new(shared channel)",
						  prep_cfg_shared,
						  act_conn_req_new,
						  OUT(out_req),
						  undo_req,
						  rel_all,
						  false,
						  NULL};
static const struct scenario sc_req_new_srq = {"rpma_conn_req_new(srq)",
					       prep_cfg_srq,
					       act_conn_req_new,
					       OUT(out_req),
					       undo_req,
					       rel_all,
					       false,
					       NULL};
static const struct scenario sc_next_req = {"rpma_ep_next_conn_req",
					    prep_ep,
					    act_next_conn_req,
					    OUT(out_req),
					    undo_req,
					    rel_all,
					    false,
					    NULL};
static const struct scenario sc_connect_out = {"rpma_conn_req_connect(outgoing)",
					       prep_cfg,
					       act_connect,
					       OUT(out_conn),
					       undo_conn,
					       rel_all,
					       true,
					       mk_req_out};
static const struct scenario sc_connect_in = {"rpma_conn_req_connect(incoming)",
					      prep_ep,
					      act_connect,
					      OUT(out_conn),
					      undo_conn,
					      rel_all,
					      true,
					      mk_req_in};
static const struct scenario sc_srq_new = {"rpma_srq_new", prep_peer, act_srq_new, OUT(out_srq),
					   undo_srq,	   rel_all,   false,	   NULL};
static const struct scenario sc_flush = {"rpma_flush", prep_conn, act_flush, 0,
					 NULL,	       rel_all,	  false,     NULL};
static const struct scenario sc_peer_cfg = {"rpma_peer_cfg_*", NULL,  act_peer_cfg, 0, NULL,
					    rel_all,	       false, NULL};
static const struct scenario sc_remote = {
	"rpma_mr_remote_from_descriptor", NULL, act_remote, 0, NULL, rel_all, false, NULL};
static const struct scenario sc_cfgs = {
	"rpma_{conn,srq}_cfg_new", NULL, act_cfgs, 0, NULL, rel_all, false, NULL};

/* prep_none -- nothing to prepare */
static void prep_none(struct sctx *s)
{
	(void)s;
}

/* fix -- a scenario with prepare defaulted */
static struct scenario fix(struct scenario sc)
{
	if (sc.prepare == NULL)
		sc.prepare = prep_none;
	return sc;
}

/*
 * RUN -- run a scenario, failing provider calls or allocations; a scenario
 * in which nothing could be made to fail proves nothing, so it must inject
 * at least one fault
 */
#define RUN(sc, prov, alloc)                                                              \
	do {                                                                              \
		struct scenario _s = fix(sc);                                             \
		int _n = run(&_s, prov, alloc);                                           \
		cr_assert_geq(_n, 1, "%s (provider %d): no %s was made to fail", _s.name, \
			      (int)(prov), (alloc) ? "allocation" : "provider call");     \
	} while (0)

/* faults_init_cold -- the usual fixture, with the allocator wrappers reset */
static void faults_init_cold(void)
{
	unit_init();
	arm_alloc(0);
}

/*
 * faults_init -- the same, with both devices looked up once: the core keeps
 * a fabric device's handle until it is unloaded, so it must not count as
 * held by a scenario
 */
static void faults_init(void)
{
	faults_init_cold();
	struct ibv_context *ctx;
	unit_provider("verbs");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	unit_provider("fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	unit_provider(NULL);
}

TestSuite(faults, .init = faults_init, .fini = unit_fini);
TestSuite(faults_cold, .init = faults_init_cold, .fini = unit_fini);

Test(faults, get_ibv_context)
{
	RUN(sc_get_ctx, FAKE_PROV_VERBS, false);
	RUN(sc_get_ctx, FAKE_PROV_FABRIC, false);
	/* the fabric handle is an allocation of the core */
	cr_assert_eq(fake_live_total(), 0);
}

Test(faults_cold, get_ibv_context_handle_alloc)
{
	struct scenario s = fix(sc_get_ctx);
	int n = run(&s, FAKE_PROV_FABRIC, true);
	cr_assert_geq(n, 1, "the first fabric handle is allocated");
}

Test(faults, peer_new)
{
	for (int p = 0; p <= 1; p++) {
		RUN(sc_peer_new, (enum fake_prov)p, false);
		RUN(sc_peer_new, (enum fake_prov)p, true);
	}
}

Test(faults, mr_reg)
{
	RUN(sc_mr_reg, FAKE_PROV_VERBS, false);
	RUN(sc_mr_reg, FAKE_PROV_VERBS, true);
}

Test(faults, ep_listen)
{
	RUN(sc_ep_listen, FAKE_PROV_VERBS, false);
	RUN(sc_ep_listen, FAKE_PROV_VERBS, true);
}

Test(faults, conn_req_new)
{
	RUN(sc_req_new, FAKE_PROV_VERBS, false);
	RUN(sc_req_new, FAKE_PROV_VERBS, true);
	RUN(sc_req_new_shared, FAKE_PROV_VERBS, false);
	RUN(sc_req_new_shared, FAKE_PROV_VERBS, true);
	RUN(sc_req_new_srq, FAKE_PROV_VERBS, false);
	RUN(sc_req_new_srq, FAKE_PROV_VERBS, true);
}

Test(faults, ep_next_conn_req)
{
	RUN(sc_next_req, FAKE_PROV_VERBS, false);
	RUN(sc_next_req, FAKE_PROV_VERBS, true);
}

Test(faults, conn_req_connect)
{
	RUN(sc_connect_out, FAKE_PROV_VERBS, false);
	RUN(sc_connect_out, FAKE_PROV_VERBS, true);
	RUN(sc_connect_in, FAKE_PROV_VERBS, false);
	RUN(sc_connect_in, FAKE_PROV_VERBS, true);
	RUN(sc_connect_out, FAKE_PROV_FABRIC, false);
	RUN(sc_connect_out, FAKE_PROV_FABRIC, true);
}

Test(faults, srq_new)
{
	RUN(sc_srq_new, FAKE_PROV_VERBS, false);
	RUN(sc_srq_new, FAKE_PROV_VERBS, true);
}

Test(faults, flush)
{
	RUN(sc_flush, FAKE_PROV_VERBS, false);
	/* the data path allocates nothing: the flush region is made with the connection */
	struct scenario s = fix(sc_flush);
	cr_assert_eq(run(&s, FAKE_PROV_VERBS, true), 0, "rpma_flush allocated memory");
}

Test(faults, allocation_only_objects)
{
	RUN(sc_peer_cfg, FAKE_PROV_VERBS, true);
	RUN(sc_remote, FAKE_PROV_VERBS, true);
	RUN(sc_cfgs, FAKE_PROV_VERBS, true);
}

Test(faults, every_scenario_can_fail)
{
	/* the loops above are not vacuous: each act reaches the provider or the allocator */
	struct scenario s = fix(sc_connect_out);
	cr_assert_geq(run(&s, FAKE_PROV_VERBS, false), 1);
	cr_assert_geq(run(&s, FAKE_PROV_VERBS, true), 1);
	s = fix(sc_peer_new);
	cr_assert_geq(run(&s, FAKE_PROV_VERBS, false), 1);
	cr_assert_geq(run(&s, FAKE_PROV_VERBS, true), 1);
	s = fix(sc_mr_reg);
	cr_assert_geq(run(&s, FAKE_PROV_VERBS, true), 1);
}
