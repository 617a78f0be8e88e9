/* SPDX-License-Identifier: BSD-3-Clause */
/* test_threads.c -- multi-threaded scenarios over real connections (what librpma(7) allows) */

/*
 * Every scenario follows the THREAD SAFETY rules of librpma(7): peers are
 * shared, a connection's posting calls, its completion queue and its
 * connection events may each be used by a thread of their own, endpoints
 * and connection requests stay with one thread.  Worker threads never call
 * Criterion's assertions: they record their first failure (tt_fail) and the
 * main thread asserts once they are joined.  Every scenario checks the data
 * it moved, not only that nothing crashed.  Run under ThreadSanitizer by
 * tools/run-tests.sh (tests/threads/tsan.sh).
 */

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../integration/itest.h"

/* the longest a worker waits for one thing before it gives up */
#define TT_WAIT_MS 20000

/* ----- failures of worker threads */

static pthread_mutex_t tt_lock = PTHREAD_MUTEX_INITIALIZER;
static char tt_msg[512];
static atomic_int tt_nfail;
static atomic_bool tt_stop; /* set on the first failure: the other workers give up */

/* tt_fail -- record a failure of a worker (the first message is kept) */
__attribute__((format(printf, 1, 2))) static void tt_fail(const char *fmt, ...)
{
	pthread_mutex_lock(&tt_lock);
	if (atomic_fetch_add(&tt_nfail, 1) == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(tt_msg, sizeof(tt_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&tt_lock);
	atomic_store(&tt_stop, true);
}

/* TT_CHECK -- in a worker: record a failure and leave the function with rv */
#define TT_CHECK(cond, rv, ...)               \
	do {                                  \
		if (!(cond)) {                \
			tt_fail(__VA_ARGS__); \
			return rv;            \
		}                             \
	} while (0)

/* tt_assert_no_failure -- in the main thread: fail the test if a worker failed */
static void tt_assert_no_failure(void)
{
	pthread_mutex_lock(&tt_lock);
	int n = atomic_load(&tt_nfail);
	char msg[sizeof(tt_msg)];
	memcpy(msg, tt_msg, sizeof(msg));
	pthread_mutex_unlock(&tt_lock);
	cr_assert_eq(n, 0, "%d failure(s) in worker threads, the first: %s", n, msg);
}

/* tt_now_ms -- a monotonic clock in ms */
static long long tt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* tt_spawn -- start a thread or fail the test */
static void tt_spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int ret = pthread_create(t, NULL, fn, arg);
	cr_assert_eq(ret, 0, "pthread_create: %s", strerror(ret));
}

/* tt_join -- join a thread or fail the test */
static void tt_join(pthread_t t)
{
	int ret = pthread_join(t, NULL);
	cr_assert_eq(ret, 0, "pthread_join: %s", strerror(ret));
}

/* tt_event -- in a worker: the next event of conn within TT_WAIT_MS (0 or an error) */
static int tt_event(struct rpma_conn *conn, enum rpma_conn_event *ev)
{
	int fd = -1;
	int ret = rpma_conn_get_event_fd(conn, &fd);
	if (ret)
		return ret;
	if (!itest_fd_ready(fd, TT_WAIT_MS))
		return RPMA_E_NO_EVENT;
	return rpma_conn_next_event(conn, ev);
}

/*
 * tt_wc -- in a worker: the next completion of cq within TT_WAIT_MS, either
 * busy-polling rpma_cq_get_wc() or sleeping on the CQ's fd (then
 * rpma_cq_wait() consumes the notification); 0 or an error
 */
static int tt_wc(struct rpma_cq *cq, struct ibv_wc *wc, bool sleep)
{
	long long until = tt_now_ms() + TT_WAIT_MS;
	for (;;) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 1, wc, &got);
		if (ret == 0)
			return got == 1 ? 0 : RPMA_E_UNKNOWN;
		if (ret != RPMA_E_NO_COMPLETION)
			return ret;
		if (tt_now_ms() > until || atomic_load(&tt_stop))
			return RPMA_E_NO_COMPLETION;
		if (!sleep)
			continue;
		int fd = -1;
		ret = rpma_cq_get_fd(cq, &fd);
		if (ret)
			return ret;
		if (itest_fd_ready(fd, 100)) {
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION)
				return ret;
		}
	}
}

/* tt_expect_wc -- in a worker: one successful completion of op_context (0 or -1 after tt_fail) */
static int tt_expect_wc(struct rpma_cq *cq, const void *op_context, bool sleep, const char *what)
{
	struct ibv_wc wc;
	int ret = tt_wc(cq, &wc, sleep);
	TT_CHECK(ret == 0, -1, "%s: no completion (%s)", what, rpma_err_2str(ret));
	TT_CHECK(wc.status == IBV_WC_SUCCESS, -1, "%s: completion status %d", what, wc.status);
	TT_CHECK(wc.wr_id == (uint64_t)(uintptr_t)op_context, -1, "%s: wr_id %llx, expected %p",
		 what, (unsigned long long)wc.wr_id, op_context);
	return 0;
}

/* tt_word -- the pattern word k that thread t writes in round r */
static inline uint64_t tt_word(unsigned t, unsigned r, size_t k)
{
	return ((uint64_t)(t + 1) << 48) ^ ((uint64_t)(r + 1) << 24) ^ (uint64_t)k;
}

/* ======================================================================
 * parallel_conns: N client threads share one peer; each connects on its
 * own, registers its own memory and runs write + flush + read-back rounds
 * on its own slice of one server region (half of them busy-polling the
 * CQ, half sleeping on its fd, so the progress thread and the polling
 * users meet); meanwhile a churn thread creates and deletes connections
 * on the same client peer to an endpoint it opens on the server's peer.
 */

#define PC_THREADS 4
#define PC_ROUNDS  150
#define PC_SLICE   4096
#define PC_CHURN   12

/*
 * every connection of the scenario, both sides: a timeout as long as the
 * threads' waits.  The server accepts one client after another, and
 * tcp;ofi_rxm builds an endpoint per connection (~0.5 s idle, ~1.4 s under
 * load): with the harness's 5 s the last clients got UNREACHABLE.  Over
 * reliable datagrams the timeout also bounds the silence before LOST (the
 * keep-alives): with the default second, a busy client process left its
 * server's side LOST instead of CLOSED at the close.
 */
static struct rpma_conn_cfg *pc_cfg;

struct pc_client {
	unsigned idx;
	struct rpma_peer *peer;
	const char *port;
	struct rpma_conn *conn; /* handed to the main thread for the close */
};

/* pc_client_thread -- connect, then write/flush/read-back rounds with checks */
static void *pc_client_thread(void *arg)
{
	struct pc_client *c = arg;
	uint8_t idx = (uint8_t)c->idx;
	struct rpma_conn_private_data pd = {.ptr = &idx, .len = 1};
	struct rpma_conn_req *req = NULL;
	int ret = rpma_conn_req_new(c->peer, itest_ip(), c->port, pc_cfg, &req);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_conn_req_new: %s", c->idx, rpma_err_2str(ret));
	ret = rpma_conn_req_connect(&req, &pd, &c->conn);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_conn_req_connect: %s", c->idx,
		 rpma_err_2str(ret));
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	ret = tt_event(c->conn, &ev);
	TT_CHECK(ret == 0 && ev == RPMA_CONN_ESTABLISHED, NULL, "client %u: event %s (%s)", c->idx,
		 rpma_utils_conn_event_2str(ev), rpma_err_2str(ret));

	struct rpma_conn_private_data spd = {0};
	ret = rpma_conn_get_private_data(c->conn, &spd);
	TT_CHECK(ret == 0 && spd.ptr != NULL, NULL, "client %u: no server private data", c->idx);
	struct rpma_mr_remote *rmr = NULL;
	ret = rpma_mr_remote_from_descriptor(spd.ptr, spd.len, &rmr);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_mr_remote_from_descriptor: %s", c->idx,
		 rpma_err_2str(ret));

	/* src: the first slice, dst: the second one */
	uint64_t *buf = NULL;
	TT_CHECK(posix_memalign((void **)&buf, 4096, 2 * PC_SLICE) == 0, NULL, "out of memory");
	memset(buf, 0, 2 * PC_SLICE);
	uint64_t *src = buf, *dst = buf + PC_SLICE / 8;
	struct rpma_mr_local *mr = NULL;
	ret = rpma_mr_reg(c->peer, buf, 2 * PC_SLICE,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_mr_reg: %s", c->idx, rpma_err_2str(ret));
	struct rpma_cq *cq = NULL;
	ret = rpma_conn_get_cq(c->conn, &cq);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_conn_get_cq: %s", c->idx, rpma_err_2str(ret));
	bool sleep = c->idx % 2;
	size_t roff = (size_t)c->idx * PC_SLICE;
	static const char flush_ctx, read_ctx;

	for (unsigned r = 0; r < PC_ROUNDS && !atomic_load(&tt_stop); r++) {
		for (size_t k = 0; k < PC_SLICE / 8; k++)
			src[k] = tt_word(c->idx, r, k);
		ret = rpma_write(c->conn, rmr, roff, mr, 0, PC_SLICE, RPMA_F_COMPLETION_ON_ERROR,
				 NULL);
		TT_CHECK(ret == 0, NULL, "client %u: rpma_write: %s", c->idx, rpma_err_2str(ret));
		ret = rpma_flush(c->conn, rmr, roff, PC_SLICE, RPMA_FLUSH_TYPE_VISIBILITY,
				 RPMA_F_COMPLETION_ALWAYS, &flush_ctx);
		TT_CHECK(ret == 0, NULL, "client %u: rpma_flush: %s", c->idx, rpma_err_2str(ret));
		if (tt_expect_wc(cq, &flush_ctx, sleep, "flush"))
			return NULL;
		ret = rpma_read(c->conn, mr, PC_SLICE, rmr, roff, PC_SLICE,
				RPMA_F_COMPLETION_ALWAYS, &read_ctx);
		TT_CHECK(ret == 0, NULL, "client %u: rpma_read: %s", c->idx, rpma_err_2str(ret));
		if (tt_expect_wc(cq, &read_ctx, sleep, "read"))
			return NULL;
		TT_CHECK(memcmp(src, dst, PC_SLICE) == 0, NULL,
			 "client %u round %u: the data read back differs from the data written",
			 c->idx, r);
	}
	ret = rpma_mr_dereg(&mr);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_mr_dereg: %s", c->idx, rpma_err_2str(ret));
	free(buf);
	ret = rpma_mr_remote_delete(&rmr);
	TT_CHECK(ret == 0, NULL, "client %u: rpma_mr_remote_delete: %s", c->idx,
		 rpma_err_2str(ret));
	return NULL;
}

struct pc_churn {
	struct rpma_peer *cpeer; /* shared with the client threads */
	struct rpma_peer *speer; /* shared with the main thread's server */
	unsigned cycles;	 /* connections fully opened, checked and closed */
};

/* pc_close_both -- disconnect c, wait until both sides report CLOSED, delete both */
static int pc_close_both(struct rpma_conn **c, struct rpma_conn **s)
{
	int ret = rpma_conn_disconnect(*c);
	TT_CHECK(ret == 0, -1, "churn: rpma_conn_disconnect: %s", rpma_err_2str(ret));
	bool cdone = false, sdone = false;
	long long until = tt_now_ms() + TT_WAIT_MS;
	while (!(cdone && sdone)) {
		TT_CHECK(tt_now_ms() < until, -1, "churn: no CLOSED (client %d, server %d)", cdone,
			 sdone);
		struct rpma_conn *conns[2] = {*c, *s};
		bool *done[2] = {&cdone, &sdone};
		for (int i = 0; i < 2; i++) {
			if (*done[i])
				continue;
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			int fd = -1;
			ret = rpma_conn_get_event_fd(conns[i], &fd);
			TT_CHECK(ret == 0, -1, "churn: rpma_conn_get_event_fd: %s",
				 rpma_err_2str(ret));
			if (!itest_fd_ready(fd, 0))
				continue;
			ret = rpma_conn_next_event(conns[i], &ev);
			if (ret == RPMA_E_NO_EVENT)
				continue;
			TT_CHECK(ret == 0 && ev == RPMA_CONN_CLOSED, -1,
				 "churn: side %d got %s (%s)", i, rpma_utils_conn_event_2str(ev),
				 rpma_err_2str(ret));
			*done[i] = true;
			if (i == 1) {
				ret = rpma_conn_disconnect(*s);
				TT_CHECK(ret == 0, -1, "churn: server disconnect: %s",
					 rpma_err_2str(ret));
			}
		}
		usleep(500);
	}
	ret = rpma_conn_delete(c);
	TT_CHECK(ret == 0, -1, "churn: rpma_conn_delete: %s", rpma_err_2str(ret));
	ret = rpma_conn_delete(s);
	TT_CHECK(ret == 0, -1, "churn: rpma_conn_delete: %s", rpma_err_2str(ret));
	return 0;
}

/* pc_churn_thread -- connections opened, checked and closed while the clients run traffic */
static void *pc_churn_thread(void *arg)
{
	struct pc_churn *ch = arg;
	/* an endpoint of its own on the server's peer, while the main thread serves */
	struct rpma_ep *ep = NULL;
	char port[8];
	unsigned base = 20000 + ((unsigned)getpid() * 13u + 5000u) % 30000u;
	int ret = RPMA_E_UNKNOWN;
	for (unsigned i = 0; i < 64 && ret != 0; i++) {
		snprintf(port, sizeof(port), "%u", base + i * 11u);
		ret = rpma_ep_listen(ch->speer, itest_ip(), port, &ep);
	}
	TT_CHECK(ret == 0, NULL, "churn: no free port near %u: %s", base, rpma_err_2str(ret));
	int epfd = -1;
	ret = rpma_ep_get_fd(ep, &epfd);
	TT_CHECK(ret == 0, NULL, "churn: rpma_ep_get_fd: %s", rpma_err_2str(ret));
	for (unsigned i = 0; i < PC_CHURN && !atomic_load(&tt_stop); i++) {
		uint32_t cval = 0xc0000000u | i, sval = 0x50000000u | i;
		struct rpma_conn_private_data cpd = {.ptr = &cval, .len = sizeof(cval)};
		struct rpma_conn_private_data spd = {.ptr = &sval, .len = sizeof(sval)};
		struct rpma_conn_req *creq = NULL, *sreq = NULL;
		struct rpma_conn *cc = NULL, *sc = NULL;
		ret = rpma_conn_req_new(ch->cpeer, itest_ip(), port, pc_cfg, &creq);
		TT_CHECK(ret == 0, NULL, "churn %u: rpma_conn_req_new: %s", i, rpma_err_2str(ret));
		ret = rpma_conn_req_connect(&creq, &cpd, &cc);
		TT_CHECK(ret == 0, NULL, "churn %u: connect: %s", i, rpma_err_2str(ret));
		TT_CHECK(itest_fd_ready(epfd, TT_WAIT_MS), NULL, "churn %u: no request", i);
		ret = rpma_ep_next_conn_req(ep, pc_cfg, &sreq);
		TT_CHECK(ret == 0, NULL, "churn %u: rpma_ep_next_conn_req: %s", i,
			 rpma_err_2str(ret));
		struct rpma_conn_private_data got = {0};
		ret = rpma_conn_req_get_private_data(sreq, &got);
		TT_CHECK(ret == 0 && got.len >= sizeof(cval) && got.ptr &&
				 memcmp(got.ptr, &cval, sizeof(cval)) == 0,
			 NULL, "churn %u: the client's private data differs", i);
		ret = rpma_conn_req_connect(&sreq, &spd, &sc);
		TT_CHECK(ret == 0, NULL, "churn %u: accept: %s", i, rpma_err_2str(ret));
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		ret = tt_event(cc, &ev);
		TT_CHECK(ret == 0 && ev == RPMA_CONN_ESTABLISHED, NULL, "churn %u: client %s (%s)",
			 i, rpma_utils_conn_event_2str(ev), rpma_err_2str(ret));
		ret = tt_event(sc, &ev);
		TT_CHECK(ret == 0 && ev == RPMA_CONN_ESTABLISHED, NULL, "churn %u: server %s (%s)",
			 i, rpma_utils_conn_event_2str(ev), rpma_err_2str(ret));
		ret = rpma_conn_get_private_data(cc, &got);
		TT_CHECK(ret == 0 && got.len >= sizeof(sval) && got.ptr &&
				 memcmp(got.ptr, &sval, sizeof(sval)) == 0,
			 NULL, "churn %u: the server's private data differs", i);
		if (pc_close_both(&cc, &sc))
			return NULL;
		ch->cycles++;
	}
	ret = rpma_ep_shutdown(&ep);
	TT_CHECK(ret == 0 && ep == NULL, NULL, "churn: rpma_ep_shutdown: %s", rpma_err_2str(ret));
	return NULL;
}

PROVIDER_TEST(threads, parallel_conns)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	char port[8];
	struct rpma_ep *ep = itest_listen(speer, port);
	struct itest_region sreg;
	itest_region_new(&sreg, speer, PC_THREADS * PC_SLICE, ITEST_ALL_USAGE);
	cr_assert_eq(rpma_conn_cfg_new(&pc_cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_timeout(pc_cfg, TT_WAIT_MS), 0);

	struct pc_client cl[PC_THREADS];
	pthread_t th[PC_THREADS], churn_th;
	struct pc_churn ch = {.cpeer = cpeer, .speer = speer};
	tt_spawn(&churn_th, pc_churn_thread, &ch);
	for (unsigned i = 0; i < PC_THREADS; i++) {
		cl[i] = (struct pc_client){.idx = i, .peer = cpeer, .port = port};
		tt_spawn(&th[i], pc_client_thread, &cl[i]);
	}

	/* the server: accept every client, whatever order they come in */
	struct rpma_conn *sconn[PC_THREADS] = {0};
	struct rpma_conn_private_data spd = {.ptr = sreg.desc, .len = (uint8_t)sreg.desc_size};
	for (unsigned n = 0; n < PC_THREADS; n++) {
		struct rpma_conn_req *req = itest_next_req(ep, pc_cfg);
		struct rpma_conn_private_data pd = {0};
		cr_assert_eq(rpma_conn_req_get_private_data(req, &pd), 0);
		cr_assert(pd.len >= 1 && pd.ptr != NULL);
		unsigned idx = *(const uint8_t *)pd.ptr;
		cr_assert(idx < PC_THREADS && sconn[idx] == NULL, "unexpected client index %u",
			  idx);
		cr_assert_eq(rpma_conn_req_connect(&req, &spd, &sconn[idx]), 0);
		cr_assert_eq(itest_next_event(sconn[idx]), RPMA_CONN_ESTABLISHED);
	}
	for (unsigned i = 0; i < PC_THREADS; i++)
		tt_join(th[i]);
	tt_join(churn_th);
	tt_assert_no_failure();
	cr_assert_eq(ch.cycles, PC_CHURN);

	/* the server's region holds each client's last round */
	const uint64_t *w = sreg.ptr;
	for (unsigned i = 0; i < PC_THREADS; i++)
		for (size_t k = 0; k < PC_SLICE / 8; k++)
			cr_assert_eq(w[i * PC_SLICE / 8 + k], tt_word(i, PC_ROUNDS - 1, k),
				     "slice %u word %zu", i, k);

	for (unsigned i = 0; i < PC_THREADS; i++)
		itest_close_pair(&cl[i].conn, &sconn[i]);
	itest_region_delete(&sreg);
	cr_assert_eq(rpma_conn_cfg_delete(&pc_cfg), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/* ======================================================================
 * mr_shared_peer: threads register and deregister memory on the peers of
 * a live connection (checking each region's descriptor) while the main
 * thread runs write/read-back rounds on that connection.
 */

#define MR_THREADS 4
#define MR_ROUNDS  150

struct mr_arg {
	unsigned idx;
	struct rpma_peer *peer;
	unsigned done;
};

/* mr_thread -- register, describe, decode and deregister regions of changing size and usage */
static void *mr_thread(void *arg)
{
	struct mr_arg *a = arg;
	static const int usages[] = {
		RPMA_MR_USAGE_READ_SRC,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
		RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST,
	};
	for (unsigned r = 0; r < MR_ROUNDS && !atomic_load(&tt_stop); r++) {
		size_t size = 4096 * (1 + (a->idx + r) % 8);
		int usage = usages[(a->idx + r) % (sizeof(usages) / sizeof(usages[0]))];
		void *ptr = NULL;
		TT_CHECK(posix_memalign(&ptr, 4096, size) == 0, NULL, "out of memory");
		memset(ptr, (int)r, size);
		struct rpma_mr_local *mr = NULL;
		int ret = rpma_mr_reg(a->peer, ptr, size, usage, &mr);
		TT_CHECK(ret == 0, NULL, "mr %u/%u: rpma_mr_reg: %s", a->idx, r,
			 rpma_err_2str(ret));
		void *gptr = NULL;
		size_t gsize = 0, dsize = 0;
		TT_CHECK(rpma_mr_get_ptr(mr, &gptr) == 0 && gptr == ptr, NULL, "mr: wrong ptr");
		TT_CHECK(rpma_mr_get_size(mr, &gsize) == 0 && gsize == size, NULL,
			 "mr: wrong size");
		TT_CHECK(rpma_mr_get_descriptor_size(mr, &dsize) == 0 && dsize >= 21 && dsize <= 32,
			 NULL, "mr: descriptor size %zu", dsize);
		char desc[32];
		TT_CHECK(rpma_mr_get_descriptor(mr, desc) == 0, NULL, "mr: no descriptor");
		struct rpma_mr_remote *rmr = NULL;
		ret = rpma_mr_remote_from_descriptor(desc, dsize, &rmr);
		TT_CHECK(ret == 0, NULL, "mr: rpma_mr_remote_from_descriptor: %s",
			 rpma_err_2str(ret));
		size_t rsize = 0;
		int ftype = 0;
		TT_CHECK(rpma_mr_remote_get_size(rmr, &rsize) == 0 && rsize == size, NULL,
			 "mr: remote size %zu, registered %zu", rsize, size);
		TT_CHECK(rpma_mr_remote_get_flush_type(rmr, &ftype) == 0, NULL, "mr: flush type");
		int want = usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
		TT_CHECK(ftype == want, NULL, "mr: flush type 0x%x, expected 0x%x", ftype, want);
		TT_CHECK(rpma_mr_remote_delete(&rmr) == 0, NULL, "mr: rpma_mr_remote_delete");
		ret = rpma_mr_dereg(&mr);
		TT_CHECK(ret == 0 && mr == NULL, NULL, "mr: rpma_mr_dereg: %s", rpma_err_2str(ret));
		free(ptr);
		a->done++;
	}
	return NULL;
}

PROVIDER_TEST(threads, mr_shared_peer)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct mr_arg a[MR_THREADS];
	pthread_t th[MR_THREADS];
	for (unsigned i = 0; i < MR_THREADS; i++) {
		a[i] = (struct mr_arg){.idx = i, .peer = i % 2 ? d.p.speer : d.p.cpeer};
		tt_spawn(&th[i], mr_thread, &a[i]);
	}
	/* traffic on the connection of those peers meanwhile */
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	uint64_t *src = d.creg.ptr, *dst = (uint64_t *)d.creg.ptr + 4096 / 8;
	for (unsigned r = 0; r < MR_ROUNDS && !atomic_load(&tt_stop); r++) {
		for (size_t k = 0; k < 4096 / 8; k++)
			src[k] = tt_word(99, r, k);
		size_t off = (r % 64) * 4096;
		cr_assert_eq(rpma_write(d.p.cconn, d.rmr, off, d.creg.mr, 0, 4096,
					RPMA_F_COMPLETION_ALWAYS, src),
			     0);
		itest_expect_wc(cq, IBV_WC_RDMA_WRITE, src, NULL);
		cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 4096, d.rmr, off, 4096,
				       RPMA_F_COMPLETION_ALWAYS, dst),
			     0);
		itest_expect_wc(cq, IBV_WC_RDMA_READ, dst, NULL);
		cr_assert_eq(memcmp(src, dst, 4096), 0, "round %u: read back differs", r);
		cr_assert_eq(memcmp((char *)d.sreg.ptr + off, src, 4096), 0,
			     "round %u: the server region differs", r);
	}
	for (unsigned i = 0; i < MR_THREADS; i++)
		tt_join(th[i]);
	tt_assert_no_failure();
	for (unsigned i = 0; i < MR_THREADS; i++)
		cr_assert_eq(a[i].done, MR_ROUNDS);
	itest_dpair_close(&d);
}

/* ======================================================================
 * post_wait_events: on one connection, a thread posts writes, another
 * blocks in rpma_cq_wait() and collects their completions, a third
 * blocks in rpma_conn_next_event() all along; the main thread reads the data back
 * (posting while the event thread waits) and ends the connection from
 * the server, which the event thread must see as CLOSED.
 */

#define PW_OPS	  3000
#define PW_WINDOW 8 /* at most this many writes in flight (the CQ never overflows) */

struct pw_state {
	struct itest_dpair *d;
	struct rpma_cq *cq;
	atomic_uint completed;
	uint8_t seen[PW_OPS + 1];
	atomic_int event; /* the event the event thread took, -1: none yet */
	atomic_int nevents;
};

/* pw_poster -- post PW_OPS signalled 8-byte writes, never more than PW_WINDOW in flight */
static void *pw_poster(void *arg)
{
	struct pw_state *s = arg;
	for (unsigned i = 0; i < PW_OPS && !atomic_load(&tt_stop); i++) {
		long long until = tt_now_ms() + TT_WAIT_MS;
		while (i - atomic_load(&s->completed) >= PW_WINDOW) {
			TT_CHECK(tt_now_ms() < until && !atomic_load(&tt_stop), NULL,
				 "poster: no completion for op %u", i - PW_WINDOW);
			sched_yield();
		}
		int ret = rpma_write(s->d->p.cconn, s->d->rmr, (size_t)i * 8, s->d->creg.mr,
				     (size_t)i * 8, 8, RPMA_F_COMPLETION_ALWAYS,
				     (void *)(uintptr_t)(i + 1));
		TT_CHECK(ret == 0, NULL, "poster: rpma_write %u: %s", i, rpma_err_2str(ret));
	}
	return NULL;
}

/* pw_waiter -- block in rpma_cq_wait() and take every completion, each exactly once */
static void *pw_waiter(void *arg)
{
	struct pw_state *s = arg;
	unsigned n = 0;
	while (n < PW_OPS) {
		struct ibv_wc wc[8];
		int got = 0;
		int ret = rpma_cq_get_wc(s->cq, 8, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			if (atomic_load(&tt_stop))
				return NULL;
			ret = rpma_cq_wait(s->cq);
			TT_CHECK(ret == 0 || ret == RPMA_E_NO_COMPLETION, NULL,
				 "waiter: rpma_cq_wait: %s", rpma_err_2str(ret));
			continue;
		}
		TT_CHECK(ret == 0 && got >= 1 && got <= 8, NULL, "waiter: rpma_cq_get_wc: %s (%d)",
			 rpma_err_2str(ret), got);
		for (int k = 0; k < got; k++) {
			TT_CHECK(wc[k].status == IBV_WC_SUCCESS, NULL, "waiter: status %d",
				 wc[k].status);
			TT_CHECK(wc[k].opcode == IBV_WC_RDMA_WRITE, NULL, "waiter: opcode %d",
				 wc[k].opcode);
			uint64_t id = wc[k].wr_id;
			TT_CHECK(id >= 1 && id <= PW_OPS && !s->seen[id], NULL,
				 "waiter: unexpected or repeated wr_id %llu",
				 (unsigned long long)id);
			s->seen[id] = 1;
		}
		n += (unsigned)got;
		atomic_store(&s->completed, n);
	}
	return NULL;
}

/*
 * pw_events -- block in rpma_conn_next_event() from the start, through all
 * the traffic, until the server ends the connection; record what came
 */
static void *pw_events(void *arg)
{
	struct pw_state *s = arg;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(s->d->p.cconn, &ev);
	TT_CHECK(ret == 0, NULL, "events: rpma_conn_next_event: %s", rpma_err_2str(ret));
	atomic_fetch_add(&s->nevents, 1);
	atomic_store(&s->event, (int)ev);
	if (ev == RPMA_CONN_CLOSED) {
		/* answer the server's disconnect (rdma_cm waits for it) */
		ret = rpma_conn_disconnect(s->d->p.cconn);
		TT_CHECK(ret == 0, NULL, "events: rpma_conn_disconnect: %s", rpma_err_2str(ret));
	}
	return NULL;
}

PROVIDER_TEST(threads, post_wait_events)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	static struct pw_state s; /* the seen[] map is large for a stack */
	memset(&s, 0, sizeof(s));
	s.d = &d;
	atomic_init(&s.completed, 0);
	atomic_init(&s.event, -1);
	atomic_init(&s.nevents, 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &s.cq), 0);
	uint64_t *src = d.creg.ptr;
	for (unsigned i = 0; i < PW_OPS; i++)
		src[i] = 0x5a5a000000000000ULL | ((uint64_t)i * 2654435761u);

	pthread_t poster, waiter, events;
	tt_spawn(&events, pw_events, &s);
	tt_spawn(&waiter, pw_waiter, &s);
	tt_spawn(&poster, pw_poster, &s);
	tt_join(poster);
	tt_join(waiter);
	tt_assert_no_failure();
	for (unsigned i = 1; i <= PW_OPS; i++)
		cr_assert(s.seen[i], "no completion for write %u", i);
	cr_assert_eq(atomic_load(&s.nevents), 0, "an event arrived during the traffic: %s",
		     rpma_utils_conn_event_2str((enum rpma_conn_event)atomic_load(&s.event)));

	/* read everything back while the event thread still waits */
	size_t len = (size_t)PW_OPS * 8, back = ITEST_REGION_SIZE / 2;
	cr_assert_eq(
		rpma_read(d.p.cconn, d.creg.mr, back, d.rmr, 0, len, RPMA_F_COMPLETION_ALWAYS, &s),
		0);
	itest_expect_wc(s.cq, IBV_WC_RDMA_READ, &s, NULL);
	cr_assert_eq(memcmp((char *)d.creg.ptr + back, src, len), 0, "the data read back differs");
	cr_assert_eq(memcmp(d.sreg.ptr, src, len), 0, "the server region differs");

	/* the server ends the connection: the event thread sees CLOSED */
	cr_assert_eq(rpma_conn_disconnect(d.p.sconn), 0);
	tt_join(events);
	tt_assert_no_failure();
	cr_assert_eq(atomic_load(&s.nevents), 1);
	cr_assert_eq(atomic_load(&s.event), RPMA_CONN_CLOSED, "the event thread got %s",
		     rpma_utils_conn_event_2str((enum rpma_conn_event)atomic_load(&s.event)));
	cr_assert_eq(itest_next_event(d.p.sconn), RPMA_CONN_CLOSED);
	cr_assert_eq(rpma_conn_delete(&d.p.cconn), 0);
	cr_assert_eq(rpma_conn_delete(&d.p.sconn), 0);
	itest_dpair_close(&d);
}

/* ======================================================================
 * log_threads: threads provoke errors (each logs exactly one line) while
 * another swaps the log function between two counting ones and moves the
 * auxiliary threshold; every line must reach one of the functions, whole.
 */

#define LG_THREADS 4
#define LG_CALLS   5000

static atomic_uint lg_count_a, lg_count_b, lg_bad;

/* lg_check -- is this one of the lines the provoking threads cause? */
__attribute__((format(printf, 2, 0))) static void lg_check(enum rpma_log_level level,
							   const char *fmt, va_list ap)
{
	char msg[256];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (level != RPMA_LOG_LEVEL_ERROR || strstr(msg, "size == 0") == NULL)
		atomic_fetch_add(&lg_bad, 1);
}

/* lg_fn_a -- a counting log function */
__attribute__((format(printf, 5, 6))) static void lg_fn_a(enum rpma_log_level level,
							  const char *file_name, const int line_no,
							  const char *function_name,
							  const char *message_format, ...)
{
	va_list ap;
	va_start(ap, message_format);
	lg_check(level, message_format, ap);
	va_end(ap);
	atomic_fetch_add(&lg_count_a, 1);
}

/* lg_fn_b -- another counting log function */
__attribute__((format(printf, 5, 6))) static void lg_fn_b(enum rpma_log_level level,
							  const char *file_name, const int line_no,
							  const char *function_name,
							  const char *message_format, ...)
{
	va_list ap;
	va_start(ap, message_format);
	lg_check(level, message_format, ap);
	va_end(ap);
	atomic_fetch_add(&lg_count_b, 1);
}

struct lg_arg {
	struct rpma_peer *peer;
	atomic_bool *done;
	atomic_uint swaps; /* how often the swapper has replaced the function */
};

/* lg_provoke -- rpma_mr_reg() with size 0: RPMA_E_INVAL and one ERROR line each */
static void *lg_provoke(void *arg)
{
	struct lg_arg *a = arg;
	char buf[64];
	/* start once the swapper runs, so that both functions get lines */
	while (atomic_load(&a->swaps) < 2 && !atomic_load(&tt_stop))
		sched_yield();
	for (unsigned i = 0; i < LG_CALLS; i++) {
		struct rpma_mr_local *mr = NULL;
		int ret = rpma_mr_reg(a->peer, buf, 0, RPMA_MR_USAGE_READ_SRC, &mr);
		TT_CHECK(ret == RPMA_E_INVAL && mr == NULL, NULL, "log: rpma_mr_reg returned %d",
			 ret);
	}
	return NULL;
}

/* lg_swapper -- swap the log function and move the auxiliary threshold until told to stop */
static void *lg_swapper(void *arg)
{
	struct lg_arg *a = arg;
	unsigned i = 0;
	while (!atomic_load(a->done)) {
		int ret = rpma_log_set_function(i % 2 ? lg_fn_a : lg_fn_b);
		TT_CHECK(ret == 0, NULL, "log: rpma_log_set_function: %s", rpma_err_2str(ret));
		ret = rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX,
					     i % 3 ? RPMA_LOG_DISABLED : RPMA_LOG_LEVEL_DEBUG);
		TT_CHECK(ret == 0, NULL, "log: rpma_log_set_threshold: %s", rpma_err_2str(ret));
		enum rpma_log_level lvl;
		ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &lvl);
		TT_CHECK(ret == 0 && lvl == RPMA_LOG_LEVEL_ERROR, NULL, "log: main threshold %d",
			 (int)lvl);
		i++;
		atomic_store(&a->swaps, i);
	}
	return NULL;
}

PROVIDER_TEST(threads, log_threads)
{
	struct rpma_peer *peer = itest_peer();
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR), 0);
	cr_assert_eq(rpma_log_set_function(lg_fn_a), 0);
	atomic_bool done;
	atomic_init(&done, false);
	struct lg_arg a = {.peer = peer, .done = &done};
	atomic_init(&a.swaps, 0);
	pthread_t th[LG_THREADS], swapper;
	tt_spawn(&swapper, lg_swapper, &a);
	for (unsigned i = 0; i < LG_THREADS; i++)
		tt_spawn(&th[i], lg_provoke, &a);
	for (unsigned i = 0; i < LG_THREADS; i++)
		tt_join(th[i]);
	atomic_store(&done, true);
	tt_join(swapper);
	tt_assert_no_failure();
	unsigned total = atomic_load(&lg_count_a) + atomic_load(&lg_count_b);
	cr_assert_eq(total, LG_THREADS * LG_CALLS, "%u lines logged, %u expected", total,
		     LG_THREADS * LG_CALLS);
	cr_assert_eq(atomic_load(&lg_bad), 0, "%u unexpected lines", atomic_load(&lg_bad));
	/* which function got how many lines depends on the scheduler: only the sum is certain */
	cr_assert_geq(atomic_load(&a.swaps), 2);
	cr_assert_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

/* ======================================================================
 * cfg_shared: threads change one connection, one peer and one SRQ
 * configuration while others read them back and one makes connection
 * requests from that configuration; every value read must be one some
 * thread wrote (or the default), never anything else.
 */

#define CF_ROUNDS 3000
#define CF_REQS	  20

/*
 * 10: the default of every queue size of a connection (20 of an SRQ's, which
 * get twice these values), 1000 ms: the default timeout
 */
static const uint32_t cf_sizes[] = {10, 16, 32, 64};
static const int cf_timeouts[] = {1000, 1500, 2000, 2500};

struct cf_arg {
	struct rpma_conn_cfg *cfg;
	struct rpma_peer_cfg *pcfg;
	struct rpma_srq_cfg *qcfg;
	struct rpma_peer *peer;
	const char *port;
	unsigned idx;
	unsigned reqs;
};

/* cf_known_size -- is v one of cf_sizes[]? */
static bool cf_known_size(uint32_t v)
{
	for (size_t i = 0; i < sizeof(cf_sizes) / sizeof(cf_sizes[0]); i++)
		if (cf_sizes[i] == v)
			return true;
	return false;
}

/* cf_known_timeout -- is v one of cf_timeouts[]? */
static bool cf_known_timeout(int v)
{
	for (size_t i = 0; i < sizeof(cf_timeouts) / sizeof(cf_timeouts[0]); i++)
		if (cf_timeouts[i] == v)
			return true;
	return false;
}

/* cf_setter -- write values from the known sets */
static void *cf_setter(void *arg)
{
	struct cf_arg *a = arg;
	for (unsigned r = 0; r < CF_ROUNDS && !atomic_load(&tt_stop); r++) {
		uint32_t v = cf_sizes[(r + a->idx) % 4];
		TT_CHECK(rpma_conn_cfg_set_cq_size(a->cfg, v) == 0, NULL, "cfg: set_cq_size");
		TT_CHECK(rpma_conn_cfg_set_sq_size(a->cfg, v) == 0, NULL, "cfg: set_sq_size");
		TT_CHECK(rpma_conn_cfg_set_rq_size(a->cfg, v) == 0, NULL, "cfg: set_rq_size");
		TT_CHECK(rpma_conn_cfg_set_timeout(a->cfg, cf_timeouts[(r + a->idx) % 4]) == 0,
			 NULL, "cfg: set_timeout");
		TT_CHECK(rpma_peer_cfg_set_direct_write_to_pmem(a->pcfg, (r + a->idx) % 2) == 0,
			 NULL, "cfg: set_direct_write_to_pmem");
		TT_CHECK(rpma_srq_cfg_set_rq_size(a->qcfg, 2 * v) == 0, NULL, "cfg: srq rq_size");
		TT_CHECK(rpma_srq_cfg_set_rcq_size(a->qcfg, 2 * v) == 0, NULL, "cfg: srq rcq_size");
	}
	return NULL;
}

/* cf_getter -- read the values back and check each is a known one */
static void *cf_getter(void *arg)
{
	struct cf_arg *a = arg;
	for (unsigned r = 0; r < CF_ROUNDS && !atomic_load(&tt_stop); r++) {
		uint32_t cq = 0, sq = 0, rq = 0;
		int timeout = 0;
		bool dw = false;
		TT_CHECK(rpma_conn_cfg_get_cq_size(a->cfg, &cq) == 0 && cf_known_size(cq), NULL,
			 "cfg: cq_size %u", cq);
		TT_CHECK(rpma_conn_cfg_get_sq_size(a->cfg, &sq) == 0 && cf_known_size(sq), NULL,
			 "cfg: sq_size %u", sq);
		TT_CHECK(rpma_conn_cfg_get_rq_size(a->cfg, &rq) == 0 && cf_known_size(rq), NULL,
			 "cfg: rq_size %u", rq);
		TT_CHECK(rpma_conn_cfg_get_timeout(a->cfg, &timeout) == 0 &&
				 cf_known_timeout(timeout),
			 NULL, "cfg: timeout %d", timeout);
		TT_CHECK(rpma_peer_cfg_get_direct_write_to_pmem(a->pcfg, &dw) == 0, NULL,
			 "cfg: get_direct_write_to_pmem");
		uint32_t qrq = 0, qrcq = 0;
		TT_CHECK(rpma_srq_cfg_get_rq_size(a->qcfg, &qrq) == 0 &&
				 (qrq == 20 || (qrq % 2 == 0 && cf_known_size(qrq / 2))),
			 NULL, "cfg: srq rq_size %u", qrq);
		TT_CHECK(rpma_srq_cfg_get_rcq_size(a->qcfg, &qrcq) == 0 &&
				 (qrcq == 20 || (qrcq % 2 == 0 && cf_known_size(qrcq / 2))),
			 NULL, "cfg: srq rcq_size %u", qrcq);
		uint8_t desc = 0xff;
		/* 0, or direct write to PMem with the announcement bit (rpma_verbs(7)) */
		TT_CHECK(rpma_peer_cfg_get_descriptor(a->pcfg, &desc) == 0 &&
				 (desc == 0 || desc == 0x81),
			 NULL, "cfg: peer-config descriptor byte %u", desc);
	}
	return NULL;
}

/* cf_requester -- connection requests made from the changing configuration */
static void *cf_requester(void *arg)
{
	struct cf_arg *a = arg;
	for (unsigned r = 0; r < CF_REQS && !atomic_load(&tt_stop); r++) {
		struct rpma_conn_req *req = NULL;
		int ret = rpma_conn_req_new(a->peer, itest_ip(), a->port, a->cfg, &req);
		TT_CHECK(ret == 0 && req != NULL, NULL, "cfg: rpma_conn_req_new: %s",
			 rpma_err_2str(ret));
		ret = rpma_conn_req_delete(&req);
		TT_CHECK(ret == 0 && req == NULL, NULL, "cfg: rpma_conn_req_delete: %s",
			 rpma_err_2str(ret));
		a->reqs++;
	}
	return NULL;
}

PROVIDER_TEST(threads, cfg_shared)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	char port[8];
	struct rpma_ep *ep = itest_listen(speer, port);
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_srq_cfg *qcfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	struct cf_arg a[5];
	pthread_t th[5];
	void *(*fn[5])(void *) = {cf_setter, cf_setter, cf_getter, cf_getter, cf_requester};
	for (unsigned i = 0; i < 5; i++) {
		a[i] = (struct cf_arg){.cfg = cfg,
				       .pcfg = pcfg,
				       .qcfg = qcfg,
				       .peer = cpeer,
				       .port = port,
				       .idx = i};
		tt_spawn(&th[i], fn[i], &a[i]);
	}
	for (unsigned i = 0; i < 5; i++)
		tt_join(th[i]);
	tt_assert_no_failure();
	cr_assert_eq(a[4].reqs, CF_REQS);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/* ======================================================================
 * signals_and_names: a progress thread of the library (rpma_fabric(7):
 * one per peer) is named rpma-progress and blocks every signal, so the
 * program's handlers never run on it.  The main thread blocks SIGUSR1 while
 * traffic flows and the process signals itself many times: a thread that
 * does not block it would take it at once; then the main thread unblocks it
 * and takes the one left pending.
 */

#define SG_SIGNALS  500
#define SG_MAX_TIDS 64

static _Atomic pid_t sg_tids[SG_MAX_TIDS]; /* threads the handler ran on */
static atomic_uint sg_counts[SG_MAX_TIDS];

/* sg_handler -- count the run on the calling thread (async-signal-safe) */
static void sg_handler(int sig)
{
	(void)sig;
	pid_t me = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < SG_MAX_TIDS; i++) {
		pid_t t = atomic_load(&sg_tids[i]);
		if (t == 0 && atomic_compare_exchange_strong(&sg_tids[i], &t, me))
			t = me;
		if (t == me) {
			atomic_fetch_add(&sg_counts[i], 1);
			return;
		}
	}
}

/* sg_runs_on -- how often the handler ran on tid */
static unsigned sg_runs_on(pid_t tid)
{
	for (int i = 0; i < SG_MAX_TIDS; i++)
		if (atomic_load(&sg_tids[i]) == tid)
			return atomic_load(&sg_counts[i]);
	return 0;
}

/* sg_progress_threads -- the threads named rpma-progress, with their blocked signals */
static int sg_progress_threads(pid_t *tids, unsigned long long *blocked, int max)
{
	DIR *dir = opendir("/proc/self/task");
	cr_assert_not_null(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL && n < max) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], line[256], comm[64] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue; /* the thread ended meanwhile */
		if (fgets(comm, sizeof(comm), f) == NULL)
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (strcmp(comm, "rpma-progress") != 0)
			continue;
		tids[n] = (pid_t)atoi(e->d_name);
		blocked[n] = 0;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		cr_assert_not_null(f);
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "SigBlk:", 7) == 0)
				blocked[n] = strtoull(line + 7, NULL, 16);
		fclose(f);
		n++;
	}
	closedir(dir);
	return n;
}

PROVIDER_TEST(threads, signals_and_names)
{
	struct sigaction sa, old_sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sg_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	cr_assert_eq(sigaction(SIGUSR1, &sa, &old_sa), 0);

	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);

	pid_t tids[16];
	unsigned long long blocked[16];
	int n = sg_progress_threads(tids, blocked, 16);
	int per_peer = itest_traits()->progress_threads_per_peer;
	cr_assert_eq(n, 2 * per_peer,
		     "%d threads named rpma-progress; provider %s runs %d per peer (here 2 peers)",
		     n, prov, per_peer);
	for (int i = 0; i < n; i++) {
		/* every signal but the two nobody can block (and glibc's own 32 and 33) */
		for (int sig = 1; sig <= 64; sig++) {
			if (sig == SIGKILL || sig == SIGSTOP || sig == 32 || sig == 33)
				continue;
			cr_assert(
				blocked[i] & (1ULL << (sig - 1)),
				"the progress thread %d does not block signal %d (SigBlk %016llx)",
				(int)tids[i], sig, blocked[i]);
		}
	}

	sigset_t usr1, old_mask;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &usr1, &old_mask), 0);
	for (int i = 0; i < SG_SIGNALS; i++) {
		cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 64,
					RPMA_F_COMPLETION_ON_ERROR, NULL),
			     0);
		cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
					RPMA_F_COMPLETION_ALWAYS, (void *)0x5),
			     0);
		cr_assert_eq(kill(getpid(), SIGUSR1), 0);
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x5, NULL);
	}
	/*
	 * a signal left pending runs the handler here, before the call returns
	 * (threads of the transport, e.g. libfabric's sockets, may have taken
	 * them all: they are not the library's)
	 */
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &old_mask, NULL), 0);
	unsigned total = 0;
	for (int i = 0; i < SG_MAX_TIDS; i++)
		total += atomic_load(&sg_counts[i]);
	cr_assert_geq(total, 1, "the handler never ran");
	for (int i = 0; i < n; i++)
		cr_assert_eq(sg_runs_on(tids[i]), 0,
			     "the handler ran %u times on the progress thread %d (of %d signals)",
			     sg_runs_on(tids[i]), (int)tids[i], SG_SIGNALS);
	itest_dpair_close(&d);
	cr_assert_eq(sigaction(SIGUSR1, &old_sa, NULL), 0);
}

/* ======================================================================
 * quiet_while_polled: while the program busy-polls the CQs of both ends (the
 * client's for its reads' completions, the server's, always empty, beside
 * it), its polls drive the transport and the progress threads have nothing
 * to do: they may look every millisecond or so (a transport without wait
 * fds must be polled by them), never once per message.  libfabric 2.1's tcp
 * woke them on every message through the connections' EQ, whose wait set
 * holds the domain's progress fd (rpma_fabric(7), "Progress"): 2 per read.
 */

#define QP_READS 20000
#define QP_MS	 2000 /* or as many as fit in this time */

/*
 * qp_switches -- the voluntary context switches of the thread tid so far (it
 * sleeps once per wakeup; a preemption by a busy machine is not its doing),
 * *preempted: the others
 */
static unsigned long long qp_switches(pid_t tid, unsigned long long *preempted)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	unsigned long long n = 0;
	*preempted = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "voluntary_ctxt_switches:", 24) == 0)
			n = strtoull(line + 24, NULL, 10);
		else if (strncmp(line, "nonvoluntary_ctxt_switches:", 27) == 0)
			*preempted = strtoull(line + 27, NULL, 10);
	}
	fclose(f);
	return n;
}

PROVIDER_TEST(threads, quiet_while_polled)
{
	int per_peer = itest_traits()->progress_threads_per_peer;
	if (per_peer == 0)
		cr_skip_test("provider %s runs no progress thread", prov);
	if (!itest_traits()->polled_cq_quiets_progress)
		cr_skip_test("provider %s drains its CQs here on every completion (shared CQs)",
			     prov);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *ccq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &ccq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	pid_t tids[16];
	unsigned long long blocked[16], before[16], pre0[16], pre;
	int n = sg_progress_threads(tids, blocked, 16);
	cr_assert_eq(n, 2 * per_peer, "%d threads named rpma-progress", n);
	struct ibv_wc wc;
	int got;
	long long t0 = 0;
	/* the first 100 reads let the threads see the program poll; then the count starts */
	int reads = 0;
	for (int r = -100; r < QP_READS; r++) {
		if (r > 0 && tt_now_ms() - t0 >= QP_MS)
			break; /* a slow transport (sockets: ~6 ms a read) */
		if (r == 0) {
			for (int i = 0; i < n; i++)
				before[i] = qp_switches(tids[i], &pre0[i]);
			t0 = tt_now_ms();
		}
		cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, (size_t)((r + 100) % 64) * 8,
				       8, RPMA_F_COMPLETION_ALWAYS, (void *)0x7),
			     0);
		long long start = tt_now_ms();
		for (;;) {
			int ret = rpma_cq_get_wc(ccq, 1, &wc, &got);
			if (ret == 0)
				break;
			cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %d", ret);
			ret = rpma_cq_get_wc(scq, 1, &wc, &got);
			cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "the server's CQ: %d", ret);
			cr_assert_lt(tt_now_ms() - start, ITEST_WAIT_MS, "read %d never completed",
				     r);
		}
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "read %d: %s", r,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.opcode, IBV_WC_RDMA_READ);
		reads = r + 1;
	}
	long long ms = tt_now_ms() - t0;
	unsigned long long sw = 0, preempted = 0;
	for (int i = 0; i < n; i++) {
		sw += qp_switches(tids[i], &pre) - before[i];
		preempted += pre - pre0[i];
	}
	/*
	 * two a millisecond each and some to spare, or a quarter of the reads
	 * (shm, whose threads have no wait fd and poll every millisecond, made
	 * ~2 a millisecond each with a busy loop beside it): woken per message
	 * they slept 1.6 times a read (libfabric 2.1's tcp, the EQ), 0.4 (its
	 * reliable datagrams, the listener's CQ)
	 */
	unsigned long long bound = (unsigned long long)n * (2ULL * (unsigned long long)ms + 100);
	if (bound < (unsigned long long)reads / 4)
		bound = (unsigned long long)reads / 4;
	cr_log_info("%d reads in %lld ms: the %d progress threads slept %llu times (bound %llu), "
		    "were preempted %llu times",
		    reads, ms, n, sw, bound, preempted);
	cr_assert_leq(sw, bound,
		      "%d reads polled in %lld ms woke the %d progress threads %llu times (at most "
		      "%llu)",
		      reads, ms, n, sw, bound);
	itest_dpair_close(&d);
}

/* ======================================================================
 * recv_repost_end: a client thread takes its receives' completions and
 * posts each receive again at once while the server keeps sending; the
 * server ends the connection in the middle of it.  Every receive the
 * client posted must complete exactly once, with success or as flushed:
 * none may stay posted on a connection that ended (its post racing with
 * the end's cancel of the receives still out).
 */

#define RE_ROUNDS 6
#define RE_RQ	  32   /* the client's receive queue */
#define RE_MSGS	  400  /* completions before the server ends the connection */
#define RE_IDS	  4096 /* wr_id space of one round (each receive posted once) */

struct re_state {
	struct itest_dpair *d;
	struct rpma_cq *ccq, *scq;
	atomic_uint posted;  /* receives the client posted (rpma_recv returned 0) */
	atomic_uint got;     /* their completions */
	atomic_uint flushed; /* of which not successful */
	atomic_bool ended;   /* the client's side of the end is done: post no more */
	uint8_t seen[RE_IDS];
};

/* re_post -- post receive number i; false when the connection refused it */
static bool re_post(struct re_state *s, unsigned i)
{
	if (i >= RE_IDS || atomic_load(&s->ended))
		return false;
	int ret = rpma_recv(s->d->p.cconn, s->d->creg.mr, (size_t)(i % RE_RQ) * 8, 8,
			    (void *)(uintptr_t)(i + 1));
	if (ret)
		return false;
	atomic_fetch_add(&s->posted, 1);
	return true;
}

/* re_receiver -- post RE_RQ receives, then post one again for every success */
static void *re_receiver(void *arg)
{
	struct re_state *s = arg;
	unsigned next = 0;
	for (; next < RE_RQ; next++)
		TT_CHECK(re_post(s, next), NULL, "receiver: rpma_recv %u refused", next);
	long long until = tt_now_ms() + TT_WAIT_MS;
	/* until every receive posted completed, once the end is done */
	while (!atomic_load(&s->ended) || atomic_load(&s->got) < atomic_load(&s->posted)) {
		TT_CHECK(tt_now_ms() < until && !atomic_load(&tt_stop), NULL,
			 "receiver: %u of %u receives completed (ended %d)", atomic_load(&s->got),
			 atomic_load(&s->posted), (int)atomic_load(&s->ended));
		struct ibv_wc wc[8];
		int n = 0;
		int ret = rpma_cq_get_wc(s->ccq, 8, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			sched_yield();
			continue;
		}
		TT_CHECK(ret == 0, NULL, "receiver: rpma_cq_get_wc: %s", rpma_err_2str(ret));
		for (int k = 0; k < n; k++) {
			uint64_t id = wc[k].wr_id;
			TT_CHECK(id >= 1 && id <= RE_IDS && !s->seen[id - 1], NULL,
				 "receiver: unexpected or repeated wr_id %llu (status %s)",
				 (unsigned long long)id, ibv_wc_status_str(wc[k].status));
			s->seen[id - 1] = 1;
			atomic_fetch_add(&s->got, 1);
			if (wc[k].status != IBV_WC_SUCCESS) {
				atomic_fetch_add(&s->flushed, 1);
				continue;
			}
			TT_CHECK(wc[k].opcode == IBV_WC_RECV, NULL, "receiver: opcode %d",
				 wc[k].opcode);
			if (re_post(s, next))
				next++;
		}
	}
	return NULL;
}

/*
 * re_sender -- send 8-byte messages, leaving at least RE_RQ / 2 of the
 * client's posted receives without one (so that every end finds receives to
 * flush: a send completes before its message is taken, and a sender that
 * ran ahead of a slow receiver left none once, in a distcheck run), until a
 * send fails or, the connection ended, every send completed
 */
static void *re_sender(void *arg)
{
	struct re_state *s = arg;
	unsigned sent = 0, done = 0;
	bool failed = false;
	long long until = tt_now_ms() + TT_WAIT_MS;
	while (!failed && !atomic_load(&tt_stop) && !(atomic_load(&s->ended) && sent == done)) {
		TT_CHECK(tt_now_ms() < until, NULL, "sender: %u of %u sends completed", done, sent);
		if (sent + RE_RQ / 2 < atomic_load(&s->posted) && sent - done < RE_RQ / 2) {
			if (rpma_send(s->d->p.sconn, s->d->sreg.mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
				      NULL) != 0)
				break;
			sent++;
		}
		struct ibv_wc wc[8];
		int n = 0;
		if (rpma_cq_get_wc(s->scq, 8, wc, &n) != 0)
			continue;
		for (int k = 0; k < n; k++)
			failed |= wc[k].status != IBV_WC_SUCCESS;
		done += (unsigned)n;
	}
	return NULL;
}

PROVIDER_TEST(threads, recv_repost_end)
{
	struct rpma_conn_cfg *ccfg = NULL, *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&ccfg), 0);
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	itest_cfg_patient(ccfg);
	itest_cfg_patient(scfg);
	cr_assert_eq(rpma_conn_cfg_set_rq_size(ccfg, RE_RQ), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(ccfg, 2 * RE_RQ), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(scfg, RE_RQ), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(scfg, 2 * RE_RQ), 0);
	static struct re_state s; /* seen[] is large for a stack */
	unsigned total = 0, flushed = 0;
	for (int round = 0; round < RE_ROUNDS; round++) {
		struct itest_dpair d = {0};
		itest_dpair_open(&d, scfg, ccfg, NULL, NULL);
		memset(&s, 0, sizeof(s));
		s.d = &d;
		cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &s.ccq), 0);
		cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &s.scq), 0);
		pthread_t receiver, sender;
		tt_spawn(&receiver, re_receiver, &s);
		tt_spawn(&sender, re_sender, &s);
		/* some traffic first, the more the later the round */
		long long until = tt_now_ms() + TT_WAIT_MS;
		while (atomic_load(&s.got) < (unsigned)(RE_MSGS * (round + 1)) / RE_ROUNDS &&
		       !atomic_load(&tt_stop) && tt_now_ms() < until)
			sched_yield();
		/* the server ends the connection while the traffic goes on */
		cr_assert_eq(rpma_conn_disconnect(d.p.sconn), 0);
		cr_assert_eq(itest_next_event(d.p.cconn), RPMA_CONN_CLOSED);
		cr_assert_eq(rpma_conn_disconnect(d.p.cconn), 0);
		atomic_store(&s.ended, true);
		tt_join(receiver);
		tt_join(sender);
		tt_assert_no_failure();
		cr_assert_eq(itest_next_event(d.p.sconn), RPMA_CONN_CLOSED);
		cr_assert_eq(atomic_load(&s.got), atomic_load(&s.posted));
		total += atomic_load(&s.posted);
		flushed += atomic_load(&s.flushed);
		cr_assert_eq(rpma_conn_delete(&d.p.cconn), 0);
		cr_assert_eq(rpma_conn_delete(&d.p.sconn), 0);
		itest_dpair_close(&d);
	}
	cr_log_info("recv_repost_end: %u receives posted in %d rounds, %u flushed at the ends",
		    total, RE_ROUNDS, flushed);
	cr_assert_geq(flushed, (unsigned)RE_ROUNDS, "no receive was ever flushed");
	cr_assert_eq(rpma_conn_cfg_delete(&ccfg), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
}
