/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq_nomem.c -- the fabric provider loses no completion when memory runs out
 *
 * usage: cq_nomem [ADDR]   (default 127.0.0.1; FI_PROVIDER as libfabric reads it)
 *
 * The program is linked with core/libcore.la and the fabric provider's
 * convenience library, with the provider's malloc wrapped at link time
 * (nothing else: libfabric and the core allocate as usual).  One peer
 * connects to itself with a main CQ of one entry, so that a second
 * completion needs a larger ring.  While every malloc of the provider fails
 * (on any thread, the progress thread included):
 *  1. the client posts NREADS signalled reads at once and waits; then memory
 *     returns and every read's completion must arrive, each once;
 *  2. the client posts zero-length writes with completions (which the
 *     provider completes itself, without the transport) until one is refused:
 *     each must either succeed or return RPMA_E_NOMEM (at least one must),
 *     and after memory returns there must be exactly one completion per
 *     write that succeeded;
 *  3. over a second connection whose server side takes receives from an SRQ
 *     with a receive CQ of one entry: with SRQ buffers posted, the client
 *     sends NSENDS messages; after memory returns each receive completes once;
 *  4. then the client sends NSENDS4 more before any buffer is posted (they
 *     wait in the provider's bounce buffers), and the server posts buffers
 *     while memory is out: each post succeeds or returns RPMA_E_NOMEM (at
 *     least one must), and every message is received once in the end.
 * Each part must have made at least one allocation fail.  Exit status: 0
 * passed, 1 failed, 77 no fabric device serves ADDR.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>

#include "provider.h"

/* the provider this program tests, linked in */
extern const struct rpma_provider rpma_provider_fabric;

/* the providers of this program: the fabric one only */
const struct rpma_provider *const rpma_providers[] = {
	&rpma_provider_fabric,
	NULL,
};

/* no module is loaded: the program links the provider it tests */
const char *const rpma_provider_modules = NULL;

/* ------------------------------------------------ allocation failure injection */

static atomic_bool nm_fail;	/* every malloc of the provider fails */
static atomic_long nm_injected; /* how many did */

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

/* __wrap_malloc -- the provider's malloc: NULL while nm_fail is set */
void *__wrap_malloc(size_t size)
{
	if (atomic_load(&nm_fail)) {
		atomic_fetch_add(&nm_injected, 1);
		return NULL;
	}
	return __real_malloc(size);
}

/* ------------------------------------------------------------------ helpers */

#define NREADS	 8
#define NWRITES	 64
#define NSENDS	 4
#define NSENDS4	 (2 * NSENDS)
#define WAIT_MS	 5000
#define CHECK(c) check((c), #c, __LINE__)

static int nm_failed;

/* check -- report a failed condition; true when it holds */
static bool check(bool cond, const char *what, int line)
{
	if (!cond) {
		fprintf(stderr, "cq_nomem:%d: FAILED: %s\n", line, what);
		nm_failed = 1;
	}
	return cond;
}

/* now_ms -- a monotonic clock in milliseconds */
static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* next_event -- wait for the next connection event */
static int next_event(struct rpma_conn *conn, enum rpma_conn_event *ev)
{
	return rpma_conn_next_event(conn, ev);
}

/*
 * collect -- take completions of cq until want arrived or quiet_ms passed
 * without any; seen[wr_id] counts each (wr_id < n); returns how many came
 */
static int collect(struct rpma_cq *cq, int *seen, int n, int want, long long quiet_ms)
{
	int got = 0;
	long long last = now_ms();
	while (got < want && now_ms() - last < quiet_ms) {
		struct ibv_wc wc;
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			usleep(1000);
			continue;
		}
		if (!CHECK(ret == 0))
			return got;
		CHECK(wc.status == IBV_WC_SUCCESS);
		if (CHECK(wc.wr_id < (uint64_t)n))
			seen[wc.wr_id]++;
		got++;
		last = now_ms();
	}
	return got;
}

/* once -- did each of the first n completions come exactly once? (the others are listed) */
static bool once(const int *seen, int n)
{
	bool all = true;
	for (int i = 0; i < n; i++) {
		if (seen[i] != 1) {
			fprintf(stderr, "cq_nomem: wr_id %d: %d completions\n", i, seen[i]);
			all = false;
		}
	}
	return all;
}

/* pair -- connect a client and a server connection of peer through ep; false on failure */
static bool pair(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr, const char *port,
		 struct rpma_conn_cfg *ccfg, struct rpma_conn_cfg *scfg, struct rpma_conn **cconn,
		 struct rpma_conn **sconn)
{
	struct rpma_conn_req *creq = NULL, *sreq = NULL;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	return CHECK(rpma_conn_req_new(peer, addr, port, ccfg, &creq) == 0) &&
	       CHECK(rpma_conn_req_connect(&creq, NULL, cconn) == 0) &&
	       CHECK(rpma_ep_next_conn_req(ep, scfg, &sreq) == 0) &&
	       CHECK(rpma_conn_req_connect(&sreq, NULL, sconn) == 0) &&
	       CHECK(next_event(*sconn, &ev) == 0 && ev == RPMA_CONN_ESTABLISHED) &&
	       CHECK(next_event(*cconn, &ev) == 0 && ev == RPMA_CONN_ESTABLISHED);
}

/* unpair -- disconnect and delete a pair */
static void unpair(struct rpma_conn **cconn, struct rpma_conn **sconn)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	CHECK(rpma_conn_disconnect(*cconn) == 0);
	CHECK(next_event(*cconn, &ev) == 0 && ev == RPMA_CONN_CLOSED);
	CHECK(next_event(*sconn, &ev) == 0 && ev == RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(cconn) == 0);
	CHECK(rpma_conn_delete(sconn) == 0);
}

int main(int argc, char *argv[])
{
	const char *addr = argc > 1 ? argv[1] : "127.0.0.1";
	char port[16];
	setenv("RPMA_PROVIDER", "fabric", 1);

	struct ibv_context *dev = NULL;
	if (rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev)) {
		fprintf(stderr, "cq_nomem: no fabric device serves %s: skipped\n", addr);
		return 77;
	}
	struct rpma_peer *peer = NULL;
	if (!CHECK(rpma_peer_new(dev, &peer) == 0))
		return 1;

	size_t size = 4096;
	char *sbuf = aligned_alloc(4096, size), *cbuf = aligned_alloc(4096, size);
	memset(sbuf, 0x5a, size);
	struct rpma_mr_local *smr = NULL, *cmr = NULL;
	int usage = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
		    RPMA_MR_USAGE_WRITE_DST;
	CHECK(rpma_mr_reg(peer, sbuf, size, usage, &smr) == 0);
	CHECK(rpma_mr_reg(peer, cbuf, size, usage, &cmr) == 0);

	struct rpma_ep *ep = NULL;
	for (int i = 0; i < 50 && ep == NULL; i++) {
		snprintf(port, sizeof(port), "%d", 20000 + (getpid() * 7 + i * 131) % 30000);
		(void)rpma_ep_listen(peer, addr, port, &ep);
	}
	if (!CHECK(ep != NULL))
		return 1;

	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg) == 0);
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 1) == 0);
	CHECK(rpma_conn_cfg_set_sq_size(cfg, NWRITES + NREADS) == 0);

	struct rpma_conn *cconn = NULL, *sconn = NULL;
	pair(peer, ep, addr, port, cfg, cfg, &cconn, &sconn);
	if (nm_failed)
		return 1;

	/* the client learns the server's region */
	const void *desc = NULL;
	size_t desc_size = 0;
	char dbuf[64];
	struct rpma_mr_remote *rmr = NULL;
	CHECK(rpma_mr_get_descriptor_size(smr, &desc_size) == 0 && desc_size <= sizeof(dbuf));
	CHECK(rpma_mr_get_descriptor(smr, dbuf) == 0);
	desc = dbuf;
	CHECK(rpma_mr_remote_from_descriptor(desc, desc_size, &rmr) == 0);
	struct rpma_cq *cq = NULL;
	CHECK(rpma_conn_get_cq(cconn, &cq) == 0);
	if (nm_failed)
		return 1;

	/* 1. completions the progress thread takes from libfabric while memory is out */
	int seen[NWRITES + NREADS];
	memset(seen, 0, sizeof(seen));
	atomic_store(&nm_injected, 0);
	atomic_store(&nm_fail, true);
	for (int i = 0; i < NREADS; i++)
		CHECK(rpma_read(cconn, cmr, (size_t)i * 8, rmr, (size_t)i * 8, 8,
				RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)i) == 0);
	usleep(500 * 1000); /* the reads complete; the progress thread drains */
	atomic_store(&nm_fail, false);
	long injected = atomic_load(&nm_injected);
	int got = collect(cq, seen, NREADS, NREADS, WAIT_MS);
	printf("cq_nomem: reads: %d posted, %d completions, %ld allocations failed\n", NREADS, got,
	       injected);
	CHECK(injected > 0);
	CHECK(got == NREADS);
	CHECK(once(seen, NREADS));

	/* 2. completions the provider makes itself (zero-length writes) */
	memset(seen, 0, sizeof(seen));
	atomic_store(&nm_injected, 0);
	atomic_store(&nm_fail, true);
	int ok = 0, nomem = 0;
	for (int i = 0; i < NWRITES && nomem == 0; i++) {
		int ret = rpma_write(cconn, rmr, 0, cmr, 0, 0, RPMA_F_COMPLETION_ALWAYS,
				     (void *)(uintptr_t)i);
		if (ret == 0)
			ok++;
		else if (ret == RPMA_E_NOMEM)
			nomem++;
		else
			CHECK(ret == 0 || ret == RPMA_E_NOMEM);
	}
	atomic_store(&nm_fail, false);
	injected = atomic_load(&nm_injected);
	got = collect(cq, seen, NWRITES, NWRITES + 1, 500);
	printf("cq_nomem: zero-length writes: %d accepted, %d refused (RPMA_E_NOMEM), %d "
	       "completions, %ld allocations failed\n",
	       ok, nomem, got, injected);
	CHECK(injected > 0);
	CHECK(nomem > 0);
	CHECK(got == ok);
	CHECK(once(seen, ok));

	unpair(&cconn, &sconn);

	/* 3. and 4. receives taken from an SRQ */
	struct rpma_srq_cfg *qcfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_cq *srcq = NULL;
	struct rpma_conn_cfg *scfg = NULL;
	CHECK(rpma_srq_cfg_new(&qcfg) == 0);
	CHECK(rpma_srq_cfg_set_rq_size(qcfg, NSENDS4) == 0);
	CHECK(rpma_srq_cfg_set_rcq_size(qcfg, 1) == 0);
	CHECK(rpma_srq_new(peer, qcfg, &srq) == 0);
	CHECK(rpma_srq_get_rcq(srq, &srcq) == 0 && srcq != NULL);
	if (!CHECK(rpma_conn_cfg_new(&scfg) == 0) ||
	    !CHECK(rpma_conn_cfg_set_srq(scfg, srq) == 0) ||
	    !pair(peer, ep, addr, port, cfg, scfg, &cconn, &sconn))
		return 1;
	CHECK(rpma_conn_get_cq(cconn, &cq) == 0);

	/* 3. the progress thread delivers into the SRQ's full receive CQ */
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < NSENDS; i++)
		CHECK(rpma_srq_recv(srq, smr, 64 + (size_t)i * 8, 8, (void *)(uintptr_t)i) == 0);
	atomic_store(&nm_injected, 0);
	atomic_store(&nm_fail, true);
	for (int i = 0; i < NSENDS; i++)
		CHECK(rpma_send(cconn, cmr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(NWRITES + i)) == 0);
	usleep(500 * 1000);
	atomic_store(&nm_fail, false);
	injected = atomic_load(&nm_injected);
	got = collect(srcq, seen, NWRITES, NSENDS, WAIT_MS);
	printf("cq_nomem: SRQ, buffers first: %d sent, %d received, %ld allocations failed\n",
	       NSENDS, got, injected);
	CHECK(injected > 0);
	CHECK(got == NSENDS);
	CHECK(once(seen, NSENDS));
	int sent = collect(cq, seen, NWRITES + NSENDS, NSENDS, WAIT_MS);
	CHECK(sent == NSENDS);

	/*
	 * 4. messages wait in bounce buffers; buffers are posted while memory
	 * is out, more than the receive CQ (grown to NSENDS in 3.) holds
	 */
	memset(seen, 0, sizeof(seen));
	for (int i = 0; i < NSENDS4; i++)
		CHECK(rpma_send(cconn, cmr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(NWRITES + i)) == 0);
	sent = collect(cq, seen, NWRITES + NSENDS4, NSENDS4, WAIT_MS);
	CHECK(sent == NSENDS4);
	usleep(200 * 1000); /* the messages reach the server's bounce buffers */
	atomic_store(&nm_injected, 0);
	atomic_store(&nm_fail, true);
	ok = 0;
	nomem = 0;
	while (ok < NSENDS4 && nomem == 0) {
		int ret = rpma_srq_recv(srq, smr, 64 + (size_t)ok * 8, 8, (void *)(uintptr_t)ok);
		if (ret == 0)
			ok++;
		else if (ret == RPMA_E_NOMEM)
			nomem++;
		else
			CHECK(ret == 0 || ret == RPMA_E_NOMEM);
	}
	atomic_store(&nm_fail, false);
	injected = atomic_load(&nm_injected);
	int posted_oom = ok;
	while (ok < NSENDS4 &&
	       CHECK(rpma_srq_recv(srq, smr, 64 + (size_t)ok * 8, 8, (void *)(uintptr_t)ok) == 0))
		ok++;
	got = collect(srcq, seen, NWRITES, NSENDS4 + 1, 500);
	printf("cq_nomem: SRQ, messages first: %d sent, %d buffers accepted and %d refused "
	       "(RPMA_E_NOMEM) while memory was out, %d received, %ld allocations failed\n",
	       NSENDS4, posted_oom, nomem, got, injected);
	CHECK(injected > 0);
	CHECK(nomem > 0);
	CHECK(got == NSENDS4);
	CHECK(once(seen, NSENDS4));

	/* teardown */
	unpair(&cconn, &sconn);
	CHECK(rpma_conn_cfg_delete(&scfg) == 0);
	CHECK(rpma_srq_delete(&srq) == 0);
	CHECK(rpma_srq_cfg_delete(&qcfg) == 0);
	CHECK(rpma_mr_remote_delete(&rmr) == 0);
	CHECK(rpma_conn_cfg_delete(&cfg) == 0);
	CHECK(rpma_ep_shutdown(&ep) == 0);
	CHECK(rpma_mr_dereg(&smr) == 0);
	CHECK(rpma_mr_dereg(&cmr) == 0);
	CHECK(rpma_peer_delete(&peer) == 0);
	free(sbuf);
	free(cbuf);
	printf("cq_nomem: %s\n", nm_failed ? "FAILED" : "passed");
	return nm_failed;
}
