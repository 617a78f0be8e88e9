/* SPDX-License-Identifier: BSD-3-Clause */
/* test_conn.c -- integration: devices, peers, endpoints, connection management */

#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

/* the device of a local and of a remote address, and a peer on each */
PROVIDER_TEST(conn, device_and_peer)
{
	struct ibv_context *local = NULL, *remote = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &local),
		     0);
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_REMOTE, &remote),
		     0);
	cr_assert_not_null(local);
	cr_assert_not_null(remote);
	int odp = -1;
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(local, &odp), 0);
	cr_assert(odp == 0 || odp == 1);
	struct rpma_peer *p1 = NULL, *p2 = NULL;
	cr_assert_eq(rpma_peer_new(local, &p1), 0);
	cr_assert_eq(rpma_peer_new(remote, &p2), 0);
	cr_assert_eq(rpma_peer_delete(&p1), 0);
	cr_assert_eq(rpma_peer_delete(&p2), 0);
	cr_assert_null(p1);
}

/* connect, private data both ways, qp numbers, orderly close from each side */
PROVIDER_TEST(conn, establish_pdata_close)
{
	struct itest_pair p = {0};
	char cmsg[] = "hello from the client";
	char smsg[] = "and hello from the server";
	struct rpma_conn_private_data cpd = {.ptr = cmsg, .len = sizeof(cmsg)};
	struct rpma_conn_private_data spd = {.ptr = smsg, .len = sizeof(smsg)};

	p.speer = itest_peer();
	p.cpeer = itest_peer();
	p.ep = itest_listen(p.speer, p.port);
	struct rpma_conn_req *creq = NULL;
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, itest_ccfg(), &creq), 0);
	cr_assert_eq(rpma_conn_req_connect(&creq, &cpd, &p.cconn), 0);
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_req_get_private_data(sreq, &got), 0);
	itest_check_pdata(&got, cmsg, sizeof(cmsg));
	cr_assert_eq(rpma_conn_req_connect(&sreq, &spd, &p.sconn), 0);
	cr_assert_eq(itest_next_event(p.cconn), RPMA_CONN_ESTABLISHED);
	cr_assert_eq(itest_next_event(p.sconn), RPMA_CONN_ESTABLISHED);

	memset(&got, 0, sizeof(got));
	cr_assert_eq(rpma_conn_get_private_data(p.cconn, &got), 0);
	itest_check_pdata(&got, smsg, sizeof(smsg));
	memset(&got, 0, sizeof(got));
	cr_assert_eq(rpma_conn_get_private_data(p.sconn, &got), 0);
	itest_check_pdata(&got, cmsg, sizeof(cmsg));

	uint32_t q1 = 0, q1b = 0, q2 = 0;
	cr_assert_eq(rpma_conn_get_qp_num(p.cconn, &q1), 0);
	cr_assert_eq(rpma_conn_get_qp_num(p.cconn, &q1b), 0);
	cr_assert_eq(rpma_conn_get_qp_num(p.sconn, &q2), 0);
	cr_assert_eq(q1, q1b, "qp_num must be stable");
	cr_assert_neq(q1, q2, "two connections share qp_num %u", q1);

	/* this time the server closes first */
	itest_close_pair(&p.sconn, &p.cconn);
	itest_pair_close(&p);
}

/* the largest private data the API carries, or a clean refusal beyond the transport's limit */
PROVIDER_TEST(conn, pdata_max_and_too_long)
{
	struct itest_pair p = {0};
	char big[255];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 1);
	struct rpma_conn_private_data pd = {.ptr = big, .len = sizeof(big)};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	p.ep = itest_listen(p.speer, p.port);

	struct rpma_conn_req *creq = NULL;
	/*
	 * the provider's limit (its traits): 56 on rdma_cm (verbs), the
	 * transport's less the fabric provider's envelope of 6 bytes
	 * (rpma_fabric(7)): 250 on tcp and sockets, 49 on libfabric's verbs;
	 * 255 and one byte over the limit are refused, the limit works.
	 * Over reliable datagrams the provider's own protocol carries all
	 * 255 bytes the API has: only the limit itself is tried.
	 */
	size_t len = itest_traits()->pdata_connect_max;
	cr_assert(len > 0 && len <= sizeof(big), "%s declares a connect limit of %zu bytes", prov,
		  len);
	int ret;
	if (len < sizeof(big)) {
		cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, NULL, &creq), 0);
		ret = rpma_conn_req_connect(&creq, &pd, &p.cconn);
		cr_assert_null(creq, "the request is consumed even on failure");
		cr_assert_eq(ret, RPMA_E_INVAL, "%s", rpma_err_2str(ret));
		cr_assert_null(p.cconn);
		pd.len = (uint8_t)(len + 1);
		cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, NULL, &creq), 0);
		ret = rpma_conn_req_connect(&creq, &pd, &p.cconn);
		cr_assert_eq(ret, RPMA_E_INVAL, "%zu bytes: %s", len + 1, rpma_err_2str(ret));
		cr_assert_null(p.cconn);
	}
	pd.len = (uint8_t)len;
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, itest_ccfg(), &creq), 0);
	ret = rpma_conn_req_connect(&creq, &pd, &p.cconn);
	cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_req_get_private_data(sreq, &got), 0);
	itest_check_pdata(&got, big, len);
	/* the server answers with the same bytes */
	pd.len = (uint8_t)len;
	cr_assert_eq(rpma_conn_req_connect(&sreq, &pd, &p.sconn), 0);
	cr_assert_eq(itest_next_event(p.cconn), RPMA_CONN_ESTABLISHED);
	cr_assert_eq(itest_next_event(p.sconn), RPMA_CONN_ESTABLISHED);
	memset(&got, 0, sizeof(got));
	cr_assert_eq(rpma_conn_get_private_data(p.cconn, &got), 0);
	itest_check_pdata(&got, big, len);
	itest_pair_close(&p);
}

/* a request the server deletes is a rejection for the client */
PROVIDER_TEST(conn, reject)
{
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	p.ep = itest_listen(p.speer, p.port);
	struct rpma_conn_req *creq = NULL;
	/*
	 * the patient timeout: over tcp;ofi_rxm under make check's load the
	 * rejection came after the default second (UNREACHABLE)
	 */
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, itest_ccfg(), &creq), 0);
	cr_assert_eq(rpma_conn_req_connect(&creq, NULL, &p.cconn), 0);
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	cr_assert_eq(rpma_conn_req_delete(&sreq), 0);
	cr_assert_null(sreq);
	cr_assert_eq(itest_next_event(p.cconn), RPMA_CONN_REJECTED);
	cr_assert_eq(rpma_conn_delete(&p.cconn), 0);
	itest_pair_close(&p);
}

/*
 * request_burst: more clients than a reliable-datagram listener keeps
 * control receives posted (16) send their requests before the server takes
 * any.  Every request reaches the server once, each is accepted, and each
 * client gets ESTABLISHED with the private data meant for it.  (Over
 * tcp;ofi_rxm on libfabric 2.1 it crashed 2 runs of 6 before the provider
 * asked for FI_DIRECTED_RECV: a client inserted the server's address while
 * a repeated ACCEPT waited in rxm's queue of unexpected messages.)
 */
#define BURST_CONNS 24

PROVIDER_TEST(conn, request_burst)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	char port[8];
	struct rpma_ep *ep = itest_listen(speer, port);
	struct rpma_conn *cconn[BURST_CONNS] = {0}, *sconn[BURST_CONNS] = {0};
	for (unsigned i = 0; i < BURST_CONNS; i++) {
		uint8_t idx = (uint8_t)i;
		struct rpma_conn_private_data pd = {.ptr = &idx, .len = 1};
		struct rpma_conn_req *req = NULL;
		int ret = rpma_conn_req_new(cpeer, itest_ip(), port, itest_ccfg(), &req);
		cr_assert_eq(ret, 0, "client %u: rpma_conn_req_new: %s", i, rpma_err_2str(ret));
		ret = rpma_conn_req_connect(&req, &pd, &cconn[i]);
		cr_assert_eq(ret, 0, "client %u: rpma_conn_req_connect: %s", i, rpma_err_2str(ret));
	}
	/*
	 * the server takes the requests in the order they come, with the
	 * harness's patience: over tcp;ofi_rxm every accept makes an endpoint
	 * (~82 MB on libfabric 1.17), so the first accepted wait for their
	 * READY while the rest are made (the server's side of client 10 gave
	 * up after 3 s once, in a loaded CI run); this scenario is about the
	 * burst, not the clock
	 */
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	itest_cfg_patient(scfg);
	for (unsigned n = 0; n < BURST_CONNS; n++) {
		struct rpma_conn_req *req = itest_next_req(ep, scfg);
		struct rpma_conn_private_data pd = {0};
		cr_assert_eq(rpma_conn_req_get_private_data(req, &pd), 0);
		cr_assert(pd.len >= 1 && pd.ptr != NULL, "request %u: no private data", n);
		unsigned idx = *(const uint8_t *)pd.ptr;
		/* the length as the transport hands it over (rdma_cm pads it); the byte is the index */
		uint8_t sent = (uint8_t)idx;
		itest_check_pdata(&pd, &sent, 1);
		cr_assert(idx < BURST_CONNS && sconn[idx] == NULL,
			  "request %u names client %u, which is unknown or already served", n, idx);
		uint8_t back = (uint8_t)(idx + 100);
		struct rpma_conn_private_data spd = {.ptr = &back, .len = 1};
		int ret = rpma_conn_req_connect(&req, &spd, &sconn[idx]);
		cr_assert_eq(ret, 0, "accepting client %u: %s", idx, rpma_err_2str(ret));
	}
	for (unsigned i = 0; i < BURST_CONNS; i++) {
		enum rpma_conn_event ev = itest_next_event(cconn[i]);
		cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "client %u got %s", i,
			     rpma_utils_conn_event_2str(ev));
		ev = itest_next_event(sconn[i]);
		cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "the server's side of client %u got %s", i,
			     rpma_utils_conn_event_2str(ev));
		struct rpma_conn_private_data got = {0};
		cr_assert_eq(rpma_conn_get_private_data(cconn[i], &got), 0);
		uint8_t want = (uint8_t)(i + 100);
		itest_check_pdata(&got, &want, 1);
	}
	for (unsigned i = 0; i < BURST_CONNS; i++)
		itest_conn_close(&cconn[i], &sconn[i]);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/*
 * connecting to a port nobody listens on: the fabric provider reports
 * UNREACHABLE; on verbs rdma_cm's answer is a rejection (as with upstream
 * librpma, see rpma_conn_next_event(3))
 */
PROVIDER_TEST(conn, unreachable)
{
	struct rpma_peer *peer = itest_peer();
	char port[8];
	/* find a port that is free right now: listen, then stop listening */
	struct rpma_ep *ep = itest_listen(peer, port);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	cr_assert_eq(rpma_conn_req_new(peer, itest_ip(), port, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	enum rpma_conn_event ev = itest_next_event(conn);
	enum rpma_conn_event want = itest_traits()->refused_event;
	cr_assert_eq(ev, want, "event %s, expected %s", rpma_utils_conn_event_2str(ev),
		     rpma_utils_conn_event_2str(want));
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

/*
 * a server whose application takes longer than the client's timeout to
 * accept: where the provider promises it, the client waits for the decision
 * (over reliable datagrams the server answers each try with PENDING)
 */
PROVIDER_TEST(conn, slow_accept)
{
	if (!itest_traits()->accept_waits_for_app)
		cr_skip_test("the provider does not promise that a connect outlasts its timeout "
			     "while the server's application decides");
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	p.ep = itest_listen(p.speer, p.port);
	/* the default timeout (1 s) on the client's side */
	struct rpma_conn_req *creq = NULL;
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, NULL, &creq), 0);
	long long t0 = itest_now_ms();
	cr_assert_eq(rpma_conn_req_connect(&creq, NULL, &p.cconn), 0);
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	/* the application decides after 2.5 timeouts */
	while (itest_now_ms() - t0 < 2500)
		usleep(10000);
	cr_assert_eq(rpma_conn_req_connect(&sreq, NULL, &p.sconn), 0);
	enum rpma_conn_event ev = itest_next_event(p.cconn);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "the client got %s %lld ms after connecting",
		     rpma_utils_conn_event_2str(ev), itest_now_ms() - t0);
	ev = itest_next_event(p.sconn);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "the server got %s",
		     rpma_utils_conn_event_2str(ev));
	itest_close_pair(&p.cconn, &p.sconn);
	itest_pair_close(&p);
}

/* a listener that accepts TCP connections but never answers: the configured timeout fires */
PROVIDER_TEST(conn, timeout)
{
	if (!itest_traits()->plain_tcp_connect)
		cr_skip_test("a mute TCP listener stands for a silent peer only on libfabric's "
			     "socket providers (tcp, sockets), not over rdma_cm");
	int s = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_geq(s, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	cr_assert_eq(inet_pton(AF_INET, itest_ip(), &sa.sin_addr), 1);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(s, 4), 0);
	socklen_t sl = sizeof(sa);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	char port[8];
	snprintf(port, sizeof(port), "%u", ntohs(sa.sin_port));

	struct rpma_peer *peer = itest_peer();
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, 300), 0);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	cr_assert_eq(rpma_conn_req_new(peer, itest_ip(), port, cfg, &req), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	enum rpma_conn_event ev = itest_next_event(conn);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cr_assert_eq(ev, RPMA_CONN_UNREACHABLE, "event %s", rpma_utils_conn_event_2str(ev));
	cr_assert(ms >= 250 && ms < 2000, "the 300 ms timeout fired after %ld ms", ms);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
	close(s);
}

/* endpoint fd: non-blocking, poll, then a request */
PROVIDER_TEST(conn, ep_fd_nonblocking)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	char port[8];
	struct rpma_ep *ep = itest_listen(speer, port);
	int fd = -1;
	cr_assert_eq(rpma_ep_get_fd(ep, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	struct rpma_conn_req *sreq = NULL;
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &sreq), RPMA_E_NO_EVENT);
	cr_assert_null(sreq);
	cr_assert_not(itest_fd_ready(fd, 50));

	struct rpma_conn_req *creq = NULL;
	struct rpma_conn *cconn = NULL, *sconn = NULL;
	cr_assert_eq(rpma_conn_req_new(cpeer, itest_ip(), port, itest_ccfg(), &creq), 0);
	cr_assert_eq(rpma_conn_req_connect(&creq, NULL, &cconn), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &sreq), 0);
	cr_assert_eq(rpma_conn_req_connect(&sreq, NULL, &sconn), 0);

	/* the connection's event fd, non-blocking too */
	int cfd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(cconn, &cfd), 0);
	cr_assert_eq(fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK), 0);
	cr_assert(itest_fd_ready(cfd, ITEST_WAIT_MS));
	enum rpma_conn_event ev;
	cr_assert_eq(rpma_conn_next_event(cconn, &ev), 0);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED);
	cr_assert_eq(rpma_conn_next_event(cconn, &ev), RPMA_E_NO_EVENT);
	cr_assert_eq(itest_next_event(sconn), RPMA_CONN_ESTABLISHED);
	/* no private data: nothing, or over rdma_cm the transport's field of zeros */
	struct rpma_conn_private_data none = {0};
	cr_assert_eq(rpma_conn_get_private_data(cconn, &none), 0);
	itest_check_pdata(&none, NULL, 0);

	itest_conn_close(&cconn, &sconn);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_null(ep);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/*
 * the receives still posted when the peer ends the connection complete once
 * each, flushed, with their own contexts (as on a verbs queue pair in the
 * error state), on every transport
 */
PROVIDER_TEST(conn, recvs_flushed_at_end)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	enum { NRECV = 4 };
	for (uintptr_t i = 0; i < NRECV; i++)
		cr_assert_eq(rpma_recv(d.p.cconn, d.creg.mr, i * 64, 64, (void *)(0x100 + i)), 0);
	/* one of them takes a message first */
	cr_assert_eq(rpma_send(d.p.sconn, d.sreg.mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, (void *)0x5),
		     0);
	struct rpma_cq *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	itest_expect_wc(scq, IBV_WC_SEND, (void *)0x5, NULL);
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 0x100, "the first receive posted takes the message");

	cr_assert_eq(rpma_conn_disconnect(d.p.sconn), 0);
	cr_assert_eq(itest_next_event(d.p.cconn), RPMA_CONN_CLOSED);
	cr_assert_eq(rpma_conn_disconnect(d.p.cconn), 0);
	cr_assert_eq(itest_next_event(d.p.sconn), RPMA_CONN_CLOSED);
	bool seen[NRECV] = {true};
	for (int n = 1; n < NRECV; n++) {
		cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0,
			     "%d of %d receives still posted completed", n - 1, NRECV - 1);
		cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
		uint64_t i = wc.wr_id - 0x100;
		cr_assert(i < NRECV && !seen[i], "unexpected or repeated wr_id 0x%llx",
			  (unsigned long long)wc.wr_id);
		seen[i] = true;
	}
	/*
	 * a receive posted after the end is refused, or completes as flushed
	 * (a verbs queue pair in the error state): it is never lost
	 */
	int posted = rpma_recv(d.p.cconn, d.creg.mr, 0, 64, (void *)0x200);
	if (posted == 0) {
		cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0, "a receive posted after the end");
		cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "%s", ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, 0x200);
	} else {
		cr_assert_eq(posted, RPMA_E_PROVIDER, "%s", rpma_err_2str(posted));
	}
	/* nothing more: each receive completed once at most */
	int got = 0;
	struct ibv_wc more[4];
	usleep(200 * 1000);
	int ret = rpma_cq_get_wc(cq, 4, more, &got);
	cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "%d completion(s) more (%s)", got,
		     rpma_err_2str(ret));
	cr_assert_eq(rpma_conn_delete(&d.p.cconn), 0);
	cr_assert_eq(rpma_conn_delete(&d.p.sconn), 0);
	itest_dpair_close(&d);
}

/* a request deleted before it connects, and an endpoint shut down with a request pending */
PROVIDER_TEST(conn, delete_unused)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	char port[8];
	struct rpma_ep *ep = itest_listen(speer, port);
	struct rpma_conn_req *req = NULL;
	cr_assert_eq(rpma_conn_req_new(cpeer, itest_ip(), port, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_null(req);

	struct rpma_conn *cconn = NULL;
	cr_assert_eq(rpma_conn_req_new(cpeer, itest_ip(), port, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &cconn), 0);
	int fd;
	cr_assert_eq(rpma_ep_get_fd(ep, &fd), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	/* nobody takes the request: shutting down refuses it */
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	enum rpma_conn_event ev = itest_next_event(cconn);
	cr_assert(ev == RPMA_CONN_REJECTED || ev == RPMA_CONN_LOST || ev == RPMA_CONN_UNREACHABLE,
		  "event %s", rpma_utils_conn_event_2str(ev));
	cr_assert_eq(rpma_conn_delete(&cconn), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/*
 * ----- connect and disconnect at once
 *
 * Each side disconnects as soon as its connect (or accept) returned, after a
 * varying delay that sweeps the moment the transport reports the connection
 * as made, on both sides, many times.  Whatever the interleaving, each side
 * reports at most one ESTABLISHED, before exactly one final event, and
 * nothing after it; deleting the connections afterwards works.  The server
 * side runs in a thread of its own and records its first failure.
 */

/*
 * how many connections are made and closed at once, at most, and for how
 * long (the Soft-RoCE guest under TCG makes a few hundred in that time)
 */
#define CD_ROUNDS    3000
#define CD_BUDGET_MS 20000

struct cd_server {
	struct rpma_ep *ep;
	_Atomic int accepted; /* the round whose accept returned */
	_Atomic int done;     /* the round the server finished */
	_Atomic bool stop;
	_Atomic bool failed;	  /* the server gave up: err and fail_round tell why */
	_Atomic int refused;	  /* accepts the transport refused (RPMA_E_PROVIDER) */
	_Atomic int unseen;	  /* the client's round ended, the server saw no request for it */
	_Atomic int client_ended; /* the last round the client ended without the server */
	_Atomic int client_final; /* that round's final event on the client's side */
	unsigned seed;
	char err[256];
	int fail_round; /* -1: none */
};

/* cd_fail -- record the first failure of a side */
__attribute__((format(printf, 4, 5))) static void cd_fail(char *err, int *fail_round, int round,
							  const char *fmt, ...)
{
	if (*fail_round >= 0)
		return;
	*fail_round = round;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, 256, fmt, ap);
	va_end(ap);
}

/* cd_rand -- a small pseudo-random number (a linear congruential generator) */
static unsigned cd_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

/* cd_spin -- busy-wait for about us microseconds */
static void cd_spin(unsigned us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < (long)us * 1000);
}

/*
 * cd_finish -- after the disconnect: the events of one side must be at most
 * one ESTABLISHED, then one final event, then nothing; then delete
 */
static enum rpma_conn_event cd_finish(struct rpma_conn **conn, int round, const char *side,
				      char *err, int *fail_round)
{
	int fd = -1;
	(void)rpma_conn_get_event_fd(*conn, &fd);
	int established = 0;
	enum rpma_conn_event final = RPMA_CONN_UNDEFINED;
	while (final == RPMA_CONN_UNDEFINED) {
		if (!itest_fd_ready(fd, ITEST_WAIT_MS)) {
			cd_fail(err, fail_round, round, "%s: no final event within %d ms", side,
				ITEST_WAIT_MS);
			break;
		}
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		int ret = rpma_conn_next_event(*conn, &ev);
		if (ret) {
			cd_fail(err, fail_round, round, "%s: rpma_conn_next_event: %s", side,
				rpma_err_2str(ret));
			break;
		}
		if (ev == RPMA_CONN_ESTABLISHED && ++established > 1)
			cd_fail(err, fail_round, round, "%s: ESTABLISHED twice", side);
		else if (ev != RPMA_CONN_ESTABLISHED)
			final = ev;
	}
	/* whatever the transport still reports must not become an event */
	usleep(1000);
	if (final != RPMA_CONN_UNDEFINED && itest_fd_ready(fd, 0)) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		(void)rpma_conn_next_event(*conn, &ev);
		cd_fail(err, fail_round, round, "%s: %s after %s", side,
			rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(final));
	}
	int ret = rpma_conn_delete(conn);
	if (ret)
		cd_fail(err, fail_round, round, "%s: rpma_conn_delete: %s", side,
			rpma_err_2str(ret));
	return final;
}

/* cd_server_thread -- accept each request and disconnect at once */
static void *cd_server_thread(void *arg)
{
	struct cd_server *s = arg;
	int fd = -1;
	(void)rpma_ep_get_fd(s->ep, &fd);
	for (int r = 0; r < CD_ROUNDS && !atomic_load(&s->stop); r++) {
		/*
		 * short waits: the client may stop at any round, or end this
		 * one without the server: its request lost on the way (seen
		 * once in a CI run over tcp; libfabric's tcp, for one, closes
		 * an accepted socket whose first message it cannot read
		 * whole).  Counted: more than a few fail the scenario.  The
		 * client gives up on an accept after ITEST_WAIT_MS, so the
		 * server waits twice as long
		 */
		bool ready = false, unseen = false;
		for (int w = 0;
		     w < 2 * ITEST_WAIT_MS / 50 && !ready && !unseen && !atomic_load(&s->stop);
		     w++) {
			ready = itest_fd_ready(fd, 50);
			unseen = !ready && atomic_load(&s->client_ended) >= r;
		}
		if (atomic_load(&s->stop))
			break;
		if (unseen) {
			/*
			 * info, not a warning: Criterion (2.4) ends a run that
			 * logged a warning with exit status 1 even when every
			 * test passed (CI: grouped.sh, 60 of 60 passed, failed on
			 * one such line); the bound below is the verdict
			 */
			cr_log_info("round %d: the client's request never reached the server; "
				    "the client's connection ended with %s (tolerated: counted)",
				    r,
				    rpma_utils_conn_event_2str(
					    (enum rpma_conn_event)atomic_load(&s->client_final)));
			atomic_fetch_add(&s->unseen, 1);
			atomic_store(&s->done, r);
			continue;
		}
		if (!ready) {
			cd_fail(s->err, &s->fail_round, r, "server: no request within %d ms",
				ITEST_WAIT_MS);
			break;
		}
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		int ret = rpma_ep_next_conn_req(s->ep, NULL, &req);
		bool got = ret == 0;
		if (got)
			ret = rpma_conn_req_connect(&req, NULL, &conn);
		if (got && ret == RPMA_E_PROVIDER) {
			/*
			 * the transport refused this one accept (libfabric 2.1's
			 * sockets, once in thousands): an error the library
			 * reports cleanly, the request released; the client's
			 * side must still end with one final event.  Counted:
			 * more than a few fail the scenario
			 */
			atomic_fetch_add(&s->refused, 1);
			atomic_store(&s->accepted, r);
			atomic_store(&s->done, r);
			continue;
		}
		if (ret) {
			cd_fail(s->err, &s->fail_round, r, "server: accepting: %s",
				rpma_err_2str(ret));
			break;
		}
		atomic_store(&s->accepted, r);
		cd_spin(cd_rand(&s->seed) % 64);
		ret = rpma_conn_disconnect(conn);
		if (ret)
			cd_fail(s->err, &s->fail_round, r, "server: rpma_conn_disconnect: %s",
				rpma_err_2str(ret));
		cd_finish(&conn, r, "server", s->err, &s->fail_round);
		atomic_store(&s->done, r);
		if (s->fail_round >= 0)
			break;
	}
	if (s->fail_round >= 0)
		atomic_store(&s->failed, true);
	return NULL;
}

/* connect and disconnect at once, on both sides, many times */
PROVIDER_TEST(conn, disconnect_while_connecting)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	struct cd_server srv = {.fail_round = -1, .seed = 7};
	char port[8];
	srv.ep = itest_listen(speer, port);
	atomic_init(&srv.accepted, -1);
	atomic_init(&srv.done, -1);
	atomic_init(&srv.client_ended, -1);
	pthread_t server;
	cr_assert_eq(pthread_create(&server, NULL, cd_server_thread, &srv), 0);
	char err[256] = "";
	int fail_round = -1;
	unsigned seed = 11;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rounds = 0;
	for (int r = 0; r < CD_ROUNDS && fail_round < 0 && !atomic_load(&srv.failed); r++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000LL + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    CD_BUDGET_MS)
			break;
		rounds = r + 1;
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		int ret = rpma_conn_req_new(cpeer, itest_ip(), port, NULL, &req);
		if (ret == 0)
			ret = rpma_conn_req_connect(&req, NULL, &conn);
		if (ret) {
			cd_fail(err, &fail_round, r, "client: connecting: %s", rpma_err_2str(ret));
			break;
		}
		/* the client's transport reports the connection about when the accept returns */
		long long until = 0;
		for (int i = 0; atomic_load(&srv.accepted) < r && !atomic_load(&srv.failed); i++) {
			if (i % 1024 == 0) {
				struct timespec ts;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				long long now = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
				if (until == 0)
					until = now + ITEST_WAIT_MS;
				else if (now > until)
					break;
			}
		}
		cd_spin(cd_rand(&seed) % 64);
		ret = rpma_conn_disconnect(conn);
		if (ret)
			cd_fail(err, &fail_round, r, "client: rpma_conn_disconnect: %s",
				rpma_err_2str(ret));
		enum rpma_conn_event final = cd_finish(&conn, r, "client", err, &fail_round);
		if (atomic_load(&srv.accepted) < r) {
			/* ended without the server: let it know (cd_server_thread) */
			atomic_store(&srv.client_final, (int) final);
			atomic_store(&srv.client_ended, r);
		}
		/* one connection at a time: the server finishes its side first */
		while (atomic_load(&srv.done) < r && !atomic_load(&srv.failed))
			usleep(50);
	}
	atomic_store(&srv.stop, true);
	cr_assert_eq(pthread_join(server, NULL), 0);
	cr_log_info("%s: %d connections made and closed at once", prov, rounds);
	int refused = atomic_load(&srv.refused);
	if (refused > 0)
		cr_log_info("%s: the transport refused %d of %d accepts (RPMA_E_PROVIDER)", prov,
			    refused, rounds);
	cr_assert_leq(refused, 1 + rounds / 100,
		      "the transport refused %d of %d accepts: more than an accident", refused,
		      rounds);
	int unseen = atomic_load(&srv.unseen);
	cr_assert_leq(unseen, 1 + rounds / 100,
		      "%d of %d requests never reached the server: more than an accident", unseen,
		      rounds);
	cr_assert(fail_round < 0 && srv.fail_round < 0,
		  "client: round %d (of %d at most): %s; server: round %d: %s", fail_round,
		  CD_ROUNDS, fail_round < 0 ? "ok" : err, srv.fail_round,
		  srv.fail_round < 0 ? "ok" : srv.err);
	cr_assert_eq(rpma_ep_shutdown(&srv.ep), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}
