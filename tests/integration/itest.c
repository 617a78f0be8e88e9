/* SPDX-License-Identifier: BSD-3-Clause */
/* itest.c -- helpers of the integration tests */

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ITEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ITEST_LSAN 1
#endif
#endif
#ifndef ITEST_LSAN
#define ITEST_LSAN 0
#endif
#if ITEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "itest.h"

static const char *const itest_names[] = {"fabric", "verbs"};

/*
 * itest_providers -- the providers a scenario runs over: the one
 * RPMA_PROVIDER selects (default fabric) when it is one of ours, else every
 * one (each then skips itself, see itest_begin()).  Leaving the others out
 * instead of skipping them saves a worker process per scenario, which costs
 * most of a second in the QEMU guest.
 */
struct criterion_test_params itest_providers(void)
{
	static int all[] = {0, 1};
	static int one[1];
	const char *want = getenv("RPMA_PROVIDER");
	if (want == NULL || *want == '\0')
		want = "fabric";
	for (int i = 0; i < (int)(sizeof(itest_names) / sizeof(itest_names[0])); i++) {
		if (strcmp(want, itest_names[i]) == 0) {
			one[0] = i;
			return cr_make_param_array(int, one, 1);
		}
	}
	return cr_make_param_array(int, all, sizeof(all) / sizeof(all[0]));
}

/* itest_provider_name -- the name of a parameter */
const char *itest_provider_name(int index)
{
	return itest_names[index];
}

/* the provider itest_begin() selected for the running scenario */
static const char *itest_current;

/*
 * itest_begin -- run only the provider the environment asks for:
 * RPMA_PROVIDER if set, else "fabric" (verbs needs an RDMA device, which the
 * Soft-RoCE guest provides and sets RPMA_PROVIDER=verbs for)
 */
void itest_begin(const char *prov)
{
	const char *want = getenv("RPMA_PROVIDER");
	if (want == NULL || *want == '\0')
		want = "fabric";
	if (strcmp(want, prov) != 0)
		cr_skip_test("provider %s not selected (RPMA_PROVIDER=%s)", prov, want);
	cr_assert_eq(setenv("RPMA_PROVIDER", prov, 1), 0);
	itest_current = prov;
	/* keep stderr for real problems; errors the scenarios provoke are expected */
	if (getenv("RPMA_LOG_LEVEL") == NULL)
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

/* itest_end -- the leak check of an AddressSanitizer build */
void itest_end(void)
{
#if ITEST_LSAN
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0,
		     "LeakSanitizer found leaks in this scenario (its report is above)");
#endif
}

/* itest_current_provider -- the provider of the running scenario */
const char *itest_current_provider(void)
{
	return itest_current ? itest_current : "fabric";
}

/* itest_ip -- the testing address */
const char *itest_ip(void)
{
	const char *ip = getenv("RPMA_TESTING_IP");
	return (ip && *ip) ? ip : "127.0.0.1";
}

/* itest_libfabric_prov -- FI_PROVIDER or "" */
const char *itest_libfabric_prov(void)
{
	const char *p = getenv("FI_PROVIDER");
	return p ? p : "";
}

/*
 * itest_persistent_flush_expected -- libfabric's tcp (and net) provider
 * offers FI_RMA_PMEM + FI_COMMIT_COMPLETE; sockets' MSG endpoints and verbs
 * do not (verbs: librpma's APM flush, which the core gates on the peer's
 * declaration only)
 */
bool itest_persistent_flush_expected(const char *prov)
{
	if (strcmp(prov, "fabric") != 0)
		return true;
	const char *fp = itest_libfabric_prov();
	return *fp == '\0' || strcmp(fp, "tcp") == 0 || strcmp(fp, "net") == 0;
}

/* itest_over_rdma_cm -- the verbs provider, or libfabric's verbs provider under fabric */
bool itest_over_rdma_cm(const char *prov)
{
	return strcmp(prov, "verbs") == 0 || strcmp(itest_libfabric_prov(), "verbs") == 0;
}

/* itest_check_pdata -- the private data that arrived is what was sent */
void itest_check_pdata(const char *prov, const struct rpma_conn_private_data *got, const void *sent,
		       size_t len)
{
	if (!itest_over_rdma_cm(prov)) {
		cr_assert_eq(got->len, len, "%u bytes of private data arrived, %zu were sent",
			     (unsigned)got->len, len);
		if (len == 0)
			cr_assert_null(got->ptr);
		else
			cr_assert_eq(memcmp(got->ptr, sent, len), 0, "the private data differs");
		return;
	}
	/* rdma_cm hands over the whole private-data field of the CM message */
	cr_assert_geq(got->len, len, "%u bytes of private data arrived, %zu were sent",
		      (unsigned)got->len, len);
	if (got->len == 0)
		return;
	cr_assert_not_null(got->ptr);
	if (len)
		cr_assert_eq(memcmp(got->ptr, sent, len), 0, "the private data differs");
	const unsigned char *pad = got->ptr;
	for (size_t i = len; i < got->len; i++)
		cr_assert_eq(pad[i], 0, "byte %zu of the padding is 0x%02x, not 0", i, pad[i]);
}

/* itest_peer -- a peer on the testing address */
struct rpma_peer *itest_peer(void)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret = rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	cr_assert_eq(ret, 0, "rpma_utils_get_ibv_context(%s): %s", itest_ip(), rpma_err_2str(ret));
	cr_assert_not_null(dev);
	ret = rpma_peer_new(dev, &peer);
	cr_assert_eq(ret, 0, "rpma_peer_new: %s", rpma_err_2str(ret));
	return peer;
}

/* itest_listen -- listen on a port derived from the pid, trying the next ones when taken */
struct rpma_ep *itest_listen(struct rpma_peer *peer, char port[8])
{
	struct rpma_ep *ep = NULL;
	unsigned base = 20000 + ((unsigned)getpid() * 13u) % 30000u;
	for (unsigned i = 0; i < 64; i++) {
		snprintf(port, 8, "%u", base + i * 7u);
		if (rpma_ep_listen(peer, itest_ip(), port, &ep) == 0)
			return ep;
	}
	cr_assert_fail("no free port to listen on near %u", base);
	return NULL;
}

/* itest_fd_ready -- wait up to ms for fd to become readable */
bool itest_fd_ready(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r == 1 && (p.revents & POLLIN);
}

/* itest_next_event -- the next connection event (bounded wait) */
enum rpma_conn_event itest_next_event(struct rpma_conn *conn)
{
	int fd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(conn, &fd), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS), "no connection event within %d ms",
		  ITEST_WAIT_MS);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);
	cr_assert_eq(ret, 0, "rpma_conn_next_event: %s", rpma_err_2str(ret));
	return ev;
}

/* itest_next_req -- the next connection request (bounded wait) */
struct rpma_conn_req *itest_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg)
{
	int fd = -1;
	cr_assert_eq(rpma_ep_get_fd(ep, &fd), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS), "no connection request within %d ms",
		  ITEST_WAIT_MS);
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	cr_assert_eq(ret, 0, "rpma_ep_next_conn_req: %s", rpma_err_2str(ret));
	cr_assert_not_null(req);
	return req;
}

/* itest_now_ms -- a monotonic clock in ms */
static long long itest_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* itest_wc -- one completion within ms (polling with short sleeps) */
int itest_wc(struct rpma_cq *cq, struct ibv_wc *wc, int ms)
{
	long long until = itest_now_ms() + ms;
	for (;;) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 1, wc, &got);
		if (ret == 0) {
			cr_assert_eq(got, 1);
			return 0;
		}
		cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (itest_now_ms() >= until)
			return RPMA_E_NO_COMPLETION;
		usleep(200);
	}
}

/* itest_expect_wc -- one successful completion of the given kind */
void itest_expect_wc(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const void *op_context,
		     struct ibv_wc *wc_out)
{
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0, "no completion within %d ms",
		     ITEST_WAIT_MS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "completion status %d (%s)", wc.status,
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, opcode, "opcode %d, expected %d", wc.opcode, opcode);
	cr_assert_eq(wc.wr_id, (uint64_t)(uintptr_t)op_context);
	if (wc_out)
		*wc_out = wc;
}

/* itest_alloc -- page-aligned, zeroed memory */
void *itest_alloc(size_t size)
{
	void *p = NULL;
	cr_assert_eq(posix_memalign(&p, 4096, size), 0);
	memset(p, 0, size);
	return p;
}

/* itest_pair_open -- connect a client to a server */
void itest_pair_open(struct itest_pair *p, const struct rpma_conn_cfg *scfg,
		     const struct rpma_conn_cfg *ccfg, const struct rpma_conn_private_data *cpd,
		     const struct rpma_conn_private_data *spd, itest_req_fn *before_accept,
		     void *arg)
{
	if (p->speer == NULL)
		p->speer = itest_peer();
	if (p->cpeer == NULL)
		p->cpeer = itest_peer();
	if (p->ep == NULL)
		p->ep = itest_listen(p->speer, p->port);

	struct rpma_conn_req *creq = NULL;
	int ret = rpma_conn_req_new(p->cpeer, itest_ip(), p->port, ccfg, &creq);
	cr_assert_eq(ret, 0, "rpma_conn_req_new: %s", rpma_err_2str(ret));
	ret = rpma_conn_req_connect(&creq, cpd, &p->cconn);
	cr_assert_eq(ret, 0, "rpma_conn_req_connect (client): %s", rpma_err_2str(ret));
	cr_assert_null(creq);

	struct rpma_conn_req *sreq = itest_next_req(p->ep, scfg);
	if (before_accept)
		before_accept(sreq, arg);
	ret = rpma_conn_req_connect(&sreq, spd, &p->sconn);
	cr_assert_eq(ret, 0, "rpma_conn_req_connect (server): %s", rpma_err_2str(ret));

	cr_assert_eq(itest_next_event(p->cconn), RPMA_CONN_ESTABLISHED);
	cr_assert_eq(itest_next_event(p->sconn), RPMA_CONN_ESTABLISHED);
}

/* itest_close_pair -- orderly shutdown started by first, then delete both */
void itest_close_pair(struct rpma_conn **first, struct rpma_conn **second)
{
	enum rpma_conn_event ev;
	cr_assert_eq(rpma_conn_disconnect(*first), 0);
	if (!itest_over_rdma_cm(itest_current_provider())) {
		/* tcp, sockets: the local CLOSED does not wait for the other side */
		ev = itest_next_event(*first);
		cr_assert_eq(ev, RPMA_CONN_CLOSED, "the side that disconnected got %s",
			     rpma_utils_conn_event_2str(ev));
		ev = itest_next_event(*second);
		cr_assert_eq(ev, RPMA_CONN_CLOSED, "the other side got %s",
			     rpma_utils_conn_event_2str(ev));
		cr_assert_eq(rpma_conn_disconnect(*second), 0);
		goto delete;
	}
	ev = itest_next_event(*second);
	cr_assert_eq(ev, RPMA_CONN_CLOSED, "the other side got %s", rpma_utils_conn_event_2str(ev));
	cr_assert_eq(rpma_conn_disconnect(*second), 0);
	ev = itest_next_event(*first);
	cr_assert_eq(ev, RPMA_CONN_CLOSED, "the side that disconnected got %s",
		     rpma_utils_conn_event_2str(ev));
	delete : cr_assert_eq(rpma_conn_delete(first), 0);
	cr_assert_eq(rpma_conn_delete(second), 0);
	cr_assert_null(*first);
	cr_assert_null(*second);
}

/* itest_conn_close -- orderly shutdown from the client side, then delete both */
void itest_conn_close(struct rpma_conn **cconn, struct rpma_conn **sconn)
{
	itest_close_pair(cconn, sconn);
}

/* itest_pair_close -- close everything itest_pair_open made */
void itest_pair_close(struct itest_pair *p)
{
	if (p->cconn && p->sconn)
		itest_conn_close(&p->cconn, &p->sconn);
	cr_assert_eq(rpma_conn_delete(&p->cconn), 0);
	cr_assert_eq(rpma_conn_delete(&p->sconn), 0);
	cr_assert_eq(rpma_ep_shutdown(&p->ep), 0);
	cr_assert_eq(rpma_peer_delete(&p->cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&p->speer), 0);
}

/* itest_region_new -- register a region and serialise its descriptor */
void itest_region_new(struct itest_region *r, struct rpma_peer *peer, size_t size, int usage)
{
	r->size = size;
	r->ptr = itest_alloc(size);
	int ret = rpma_mr_reg(peer, r->ptr, size, usage, &r->mr);
	cr_assert_eq(ret, 0, "rpma_mr_reg: %s", rpma_err_2str(ret));
	cr_assert_eq(rpma_mr_get_descriptor_size(r->mr, &r->desc_size), 0);
	cr_assert_leq(r->desc_size, sizeof(r->desc));
	cr_assert_eq(rpma_mr_get_descriptor(r->mr, r->desc), 0);
}

/* itest_region_delete -- deregister and free */
void itest_region_delete(struct itest_region *r)
{
	cr_assert_eq(rpma_mr_dereg(&r->mr), 0);
	free(r->ptr);
	r->ptr = NULL;
}

/* itest_remote -- the server region, from the private data the client received */
struct rpma_mr_remote *itest_remote(struct rpma_conn *cconn)
{
	struct rpma_conn_private_data pd = {0};
	cr_assert_eq(rpma_conn_get_private_data(cconn, &pd), 0);
	cr_assert_not_null(pd.ptr);
	struct rpma_mr_remote *rmr = NULL;
	int ret = rpma_mr_remote_from_descriptor(pd.ptr, pd.len, &rmr);
	cr_assert_eq(ret, 0, "rpma_mr_remote_from_descriptor: %s", rpma_err_2str(ret));
	return rmr;
}

/* itest_dpair_open -- a pair with a server region the client knows */
void itest_dpair_open(struct itest_dpair *d, const struct rpma_conn_cfg *scfg,
		      const struct rpma_conn_cfg *ccfg, itest_req_fn *before_accept, void *arg)
{
	d->p.speer = itest_peer();
	d->p.cpeer = itest_peer();
	itest_region_new(&d->sreg, d->p.speer, ITEST_REGION_SIZE, ITEST_ALL_USAGE);
	itest_region_new(&d->creg, d->p.cpeer, ITEST_REGION_SIZE,
			 RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
				 RPMA_MR_USAGE_RECV);
	cr_assert_eq(d->sreg.desc_size, 21, "a 32-bit key keeps the descriptor at 21 bytes");

	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	char pd[64];
	size_t pcfg_size = 0;
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size), 0);
	memcpy(pd, d->sreg.desc, d->sreg.desc_size);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, pd + d->sreg.desc_size), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	struct rpma_conn_private_data spd = {.ptr = pd,
					     .len = (uint8_t)(d->sreg.desc_size + pcfg_size)};

	itest_pair_open(&d->p, scfg, ccfg, NULL, &spd, before_accept, arg);

	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_get_private_data(d->p.cconn, &got), 0);
	cr_assert_geq(got.len, d->sreg.desc_size + pcfg_size);
	cr_assert_eq(rpma_mr_remote_from_descriptor(got.ptr, d->sreg.desc_size, &d->rmr), 0);
	struct rpma_peer_cfg *rcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_from_descriptor((char *)got.ptr + d->sreg.desc_size, pcfg_size,
						   &rcfg),
		     0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(d->p.cconn, rcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&rcfg), 0);
}

/* itest_dpair_close -- close the connection, then release the regions and peers */
void itest_dpair_close(struct itest_dpair *d)
{
	if (d->p.cconn && d->p.sconn)
		itest_conn_close(&d->p.cconn, &d->p.sconn);
	cr_assert_eq(rpma_mr_remote_delete(&d->rmr), 0);
	itest_region_delete(&d->sreg);
	itest_region_delete(&d->creg);
	itest_pair_close(&d->p);
}
