/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bad_accept.c -- a server that is not librpma answers a librpma client
 *
 * A plain libfabric server (passive endpoint of the libfabric provider
 * FI_PROVIDER names, default tcp) takes the client's connection requests and
 * checks that their private data is in the fabric provider's envelope (magic
 * "rpm\xfa", version 1.x, the length, the client's bytes).  It accepts them
 * with, in turn:
 *
 * 1. private data without the envelope ("HELLO-NOT-RPMA");
 * 2. no private data at all;
 * 3. the envelope of major version 2 (a later, incompatible librpma);
 * 4. an envelope whose length byte names more bytes than came;
 * 5. a valid envelope with 9 bytes ("SERVER-OK") and 5 bytes of trailing
 *    zeros (what rdma_cm's padding looks like).
 *
 * The client (the public API) must see RPMA_CONN_REJECTED and never
 * RPMA_CONN_ESTABLISHED for 1..4, and RPMA_CONN_ESTABLISHED with exactly the
 * 9 bytes for 5; a refusal counts only when the server did answer.  Exit 77
 * when libfabric offers no such server here.  run.sh runs it over tcp only:
 * libfabric sockets' passive endpoint refused this program's requests
 * (not investigated).
 */

#include <pthread.h>
#include <stdatomic.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "sec.h"

#define NCASES 5

struct answer {
	const char *what;
	unsigned char data[64];
	size_t len;
	bool valid;
};

static struct answer answers[NCASES];
static char port[8];
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_eq *eq;
static struct fid_pep *pep;
static _Atomic int request_errors;    /* requests without our envelope */
static _Atomic int answered;	      /* the requests the server is done with */
static _Atomic bool accepted[NCASES]; /* the server took request i and answered it */

/* fi_ok -- a libfabric call must succeed */
static void fi_ok(int ret, const char *call)
{
	SEC_CHECK(ret == 0, "server: %s: %s", call, fi_strerror(-ret));
}

/* server_setup -- listen on a free port; false when libfabric has no such server */
static bool server_setup(void)
{
	struct fi_info *hints = fi_allocinfo();
	SEC_CHECK(hints != NULL, "fi_allocinfo");
	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode =
		FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	const char *fp = getenv("FI_PROVIDER");
	hints->fabric_attr->prov_name = strdup(fp && *fp ? fp : "tcp");
	unsigned base = 20000 + ((unsigned)getpid() * 19u) % 30000u;
	for (unsigned i = 0; i < 64; i++) {
		struct fi_info *info = NULL;
		snprintf(port, sizeof(port), "%u", base + i * 13u);
		if (fi_getinfo(FI_VERSION(1, 17), sec_ip(), port, FI_SOURCE, hints, &info)) {
			fi_freeinfo(hints);
			return false;
		}
		if (fabric == NULL) {
			fi_ok(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
			struct fi_eq_attr attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
			fi_ok(fi_eq_open(fabric, &attr, &eq, NULL), "fi_eq_open");
		}
		fi_ok(fi_passive_ep(fabric, info, &pep, NULL), "fi_passive_ep");
		fi_ok(fi_pep_bind(pep, &eq->fid, 0), "fi_pep_bind");
		if (fi_listen(pep) == 0) {
			fi_freeinfo(info);
			fi_freeinfo(hints);
			return true;
		}
		fi_close(&pep->fid);
		pep = NULL;
		fi_freeinfo(info);
	}
	sec_fail("server: no free port near %u", base);
}

/* eq_wait -- the next EQ event within ms (0: none); entry gets the CM entry */
static uint32_t eq_wait(struct fid_eq *q, struct fi_eq_cm_entry *entry, size_t size, int ms,
			size_t *len)
{
	long long until = sec_now_ms() + ms;
	while (sec_now_ms() < until) {
		uint32_t ev = 0;
		ssize_t n = fi_eq_read(q, &ev, entry, size, 0);
		if (n > 0) {
			*len = (size_t)n;
			return ev;
		}
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err = {0};
			(void)fi_eq_readerr(q, &err, 0);
			continue;
		}
		usleep(1000);
	}
	return 0;
}

/* server_thread -- answer each request with the next answer */
static void *server_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < NCASES; i++) {
		union {
			struct fi_eq_cm_entry cm;
			char raw[sizeof(struct fi_eq_cm_entry) + 512];
		} e;
		size_t n = 0;
		uint32_t ev = eq_wait(eq, &e.cm, sizeof(e), 10000, &n);
		SEC_CHECK(ev == FI_CONNREQ, "server: no connection request (%u)", ev);
		size_t len = n - sizeof(e.cm);
		/* the client's private data: our envelope around "REAL-CLIENT" */
		if (len < 17 || memcmp(e.cm.data, "rpm\xfa", 4) != 0 ||
		    (unsigned char)e.cm.data[4] != 0x10 || e.cm.data[5] != 11 ||
		    memcmp(e.cm.data + 6, "REAL-CLIENT", 11) != 0)
			atomic_fetch_add(&request_errors, 1);
		struct fi_info *info = e.cm.info;
		if (domain == NULL)
			fi_ok(fi_domain(fabric, info, &domain, NULL), "fi_domain");
		struct fid_ep *ep = NULL;
		struct fid_eq *ceq = NULL;
		struct fid_cq *cq = NULL;
		fi_ok(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint");
		struct fi_eq_attr attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
		fi_ok(fi_eq_open(fabric, &attr, &ceq, NULL), "fi_eq_open");
		struct fi_cq_attr cattr = {.size = 16, .format = FI_CQ_FORMAT_DATA};
		fi_ok(fi_cq_open(domain, &cattr, &cq, NULL), "fi_cq_open");
		fi_ok(fi_ep_bind(ep, &ceq->fid, 0), "fi_ep_bind(eq)");
		fi_ok(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
		fi_ok(fi_enable(ep), "fi_enable");
		fi_ok(fi_accept(ep, answers[i].len ? answers[i].data : NULL, answers[i].len),
		      "fi_accept");
		atomic_store(&accepted[i], true);
		fi_freeinfo(info);
		/* connected, then the client closes it */
		ev = eq_wait(ceq, &e.cm, sizeof(e), 3000, &n);
		if (ev == FI_CONNECTED)
			(void)eq_wait(ceq, &e.cm, sizeof(e), 3000, &n);
		atomic_store(&answered, i + 1);
		fi_close(&ep->fid);
		fi_close(&cq->fid);
		fi_close(&ceq->fid);
	}
	return NULL;
}

/* set -- one answer */
static void set(int i, const char *what, const void *data, size_t len, bool valid)
{
	answers[i].what = what;
	memcpy(answers[i].data, data, len);
	answers[i].len = len;
	answers[i].valid = valid;
}

/* main -- the server in a thread, the librpma client here */
int main(void)
{
	sec_quiet();
	if (getenv("RPMA_PROVIDER") && strcmp(getenv("RPMA_PROVIDER"), "fabric") != 0) {
		printf("bad_accept: the fabric provider's test: skipped\n");
		return SEC_SKIP;
	}
	set(0, "no envelope", "HELLO-NOT-RPMA", 14, false);
	set(1, "no private data", "", 0, false);
	set(2, "major version 2", "rpm\xfa\x20\x02OK", 8, false);
	set(3, "length beyond the bytes", "rpm\xfa\x10\x40SERVER-OK", 15, false);
	set(4, "valid, padded", "rpm\xfa\x10\x09SERVER-OK\0\0\0\0\0", 20, true);
	if (!server_setup()) {
		printf("bad_accept: libfabric has no MSG server for %s here: skipped\n", sec_ip());
		return SEC_SKIP;
	}
	pthread_t th;
	SEC_CHECK(pthread_create(&th, NULL, server_thread, NULL) == 0, "pthread_create");
	struct rpma_peer *peer = sec_peer();
	struct rpma_conn_cfg *cfg = NULL;
	SEC_CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_timeout(cfg, 10000) == 0,
		  "rpma_conn_cfg");
	int failures = 0;
	for (int i = 0; i < NCASES; i++) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		/* one request at a time: the server is done with the previous one */
		long long until = sec_now_ms() + 10000;
		while (atomic_load(&answered) < i && sec_now_ms() < until)
			usleep(1000);
		int ret = rpma_conn_req_new(peer, sec_ip(), port, cfg, &req);
		SEC_CHECK(ret == 0, "rpma_conn_req_new: %s", rpma_err_2str(ret));
		struct rpma_conn_private_data pd = {"REAL-CLIENT", 11};
		ret = rpma_conn_req_connect(&req, &pd, &conn);
		SEC_CHECK(ret == 0, "rpma_conn_req_connect: %s", rpma_err_2str(ret));
		enum rpma_conn_event ev = sec_next_event(conn, 10000);
		struct rpma_conn_private_data got = {0};
		bool ok;
		if (answers[i].valid) {
			ok = ev == RPMA_CONN_ESTABLISHED &&
			     rpma_conn_get_private_data(conn, &got) == 0 && got.len == 9 &&
			     memcmp(got.ptr, "SERVER-OK", 9) == 0;
		} else {
			ok = ev == RPMA_CONN_REJECTED;
		}
		/* a refusal counts only when it followed the server's answer */
		until = sec_now_ms() + 5000;
		while (!atomic_load(&accepted[i]) && sec_now_ms() < until)
			usleep(1000);
		ok = ok && atomic_load(&accepted[i]);
		printf("bad_accept: server's answer %d (%s): the client got %s%s: %s\n", i + 1,
		       answers[i].what, rpma_utils_conn_event_2str(ev),
		       ev == RPMA_CONN_ESTABLISHED ? " with private data" : "",
		       ok ? "ok" : "WRONG");
		failures += !ok;
		(void)rpma_conn_disconnect(conn);
		(void)sec_next_event(conn, 1000);
		(void)rpma_conn_delete(&conn);
	}
	pthread_join(th, NULL);
	(void)rpma_conn_cfg_delete(&cfg);
	(void)rpma_peer_delete(&peer);
	fi_close(&pep->fid);
	if (domain)
		fi_close(&domain->fid);
	fi_close(&eq->fid);
	fi_close(&fabric->fid);
	int rerr = atomic_load(&request_errors);
	printf("bad_accept: %d of %d requests came without the envelope around the client's "
	       "private data\n",
	       rerr, NCASES);
	SEC_CHECK(rerr == 0, "the client's requests lack the envelope");
	SEC_CHECK(failures == 0, "%d answers handled wrongly", failures);
	printf("PASS: bad_accept\n");
	return 0;
}
