/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conn.c -- endpoints, connection requests, connections, private data,
 * connection events, completion queues, the shared completion channel and
 * shared receive queues
 */

#include "unit.h"

static struct rpma_peer *peer;

/* conn_init -- a verbs peer for every test */
static void conn_init(void)
{
	unit_init();
	peer = unit_peer(FAKE_PROV_VERBS);
	fake_reset();
}

/* conn_fini -- drop the peer, then the usual checks */
static void conn_fini(void)
{
	cr_expect_eq(rpma_peer_delete(&peer), 0);
	unit_fini();
}

#define CONN_SUITE(name) TestSuite(name, .init = conn_init, .fini = conn_fini)

/* new_cfg -- connection settings; fields < 0 keep their defaults */
static struct rpma_conn_cfg *new_cfg(long cq, long rcq, long sq, long rq, int shared)
{
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	if (cq >= 0)
		cr_assert_eq(rpma_conn_cfg_set_cq_size(cfg, (uint32_t)cq), 0);
	if (rcq >= 0)
		cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, (uint32_t)rcq), 0);
	if (sq >= 0)
		cr_assert_eq(rpma_conn_cfg_set_sq_size(cfg, (uint32_t)sq), 0);
	if (rq >= 0)
		cr_assert_eq(rpma_conn_cfg_set_rq_size(cfg, (uint32_t)rq), 0);
	if (shared >= 0)
		cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, shared != 0), 0);
	return cfg;
}

/* new_ep -- a listening endpoint */
static struct rpma_ep *new_ep(void)
{
	struct rpma_ep *ep = NULL;
	cr_assert_eq(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, &ep), 0);
	return ep;
}

/* ============================================================= ep_listen */

CONN_SUITE(ep_listen);

Test(ep_listen, NULL_arguments)
{
	struct rpma_ep *ep = UNIT_POISON_PTR;
	cr_assert_eq(rpma_ep_listen(NULL, UNIT_ADDR, UNIT_PORT, &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(peer, NULL, UNIT_PORT, &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(peer, UNIT_ADDR, NULL, &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, NULL), RPMA_E_INVAL);
	cr_assert_eq(ep, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(ep_listen, success_and_fd)
{
	struct rpma_ep *ep = new_ep();
	const struct fake_call *c = fake_last_call(FAKE_OP_EP_LISTEN);
	cr_assert_str_eq(c->addr, UNIT_ADDR);
	cr_assert_str_eq(c->port, UNIT_PORT);
	cr_assert_eq(c->obj2, peer);
	int fd = -1;
	cr_assert_eq(rpma_ep_get_fd(ep, &fd), 0);
	cr_assert(unit_fd_open(fd));
	cr_assert_eq(rpma_ep_get_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_get_fd(ep, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_null(ep);
	cr_assert_eq(fake_call_count(FAKE_OP_EP_SHUTDOWN), 1);
}

Test(ep_listen, provider_fails)
{
	struct rpma_ep *ep = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_EP_LISTEN, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_ep_listen(peer, UNIT_ADDR, UNIT_PORT, &ep), RPMA_E_PROVIDER);
	cr_assert_eq(ep, UNIT_POISON_PTR);
}

Test(ep_listen, shutdown_NULL)
{
	struct rpma_ep *ep = NULL;
	cr_assert_eq(rpma_ep_shutdown(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_listen, shutdown_fails)
{
	struct rpma_ep *ep = new_ep();
	fake_fail_next(FAKE_OP_EP_SHUTDOWN, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_ep_shutdown(&ep), RPMA_E_PROVIDER);
	cr_assert_null(ep);
}

/* ===================================================== ep_next_conn_req */

CONN_SUITE(ep_next_conn_req);

Test(ep_next_conn_req, NULL_arguments)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	fake_push_conn_req(NULL, 0);
	cr_assert_eq(rpma_ep_next_conn_req(NULL, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_EP_NEXT_CONN_REQ), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, no_event)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_NO_EVENT);
	cr_assert_eq(req, UNIT_POISON_PTR);
	fake_fail_next(FAKE_OP_EP_NEXT_CONN_REQ, RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, default_cfg)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	fake_push_conn_req(NULL, 0);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	cr_assert_not_null(req);
	const struct fake_call *c = fake_last_call(FAKE_OP_EP_NEXT_CONN_REQ);
	cr_assert(c->has_setup);
	cr_assert_eq(c->setup.cq_size, 10);
	cr_assert_eq(c->setup.sq_size, 10);
	cr_assert_eq(c->setup.rq_size, 10);
	cr_assert_eq(c->setup.timeout_ms, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_not_null(c->setup.cq);
	cr_assert_null(c->setup.rcq);
	cr_assert_null(c->setup.srq);
	cr_assert_null(c->setup.srq_rcq);
	cr_assert_eq(c->setup.shared_channel, false);

	struct rpma_conn_private_data pdata = {UNIT_POISON_PTR, 9};
	cr_assert_eq(rpma_conn_req_get_private_data(req, &pdata), 0);
	cr_assert_null(pdata.ptr);
	cr_assert_eq(pdata.len, 0);

	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_null(req);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, cfg_sizes_reach_provider)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_cfg *cfg = new_cfg(33, 44, 55, 66, -1);
	fake_push_conn_req(NULL, 0);
	cr_assert_eq(rpma_ep_next_conn_req(ep, cfg, &req), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_EP_NEXT_CONN_REQ);
	cr_assert_eq(c->setup.cq_size, 33);
	cr_assert_eq(c->setup.rcq_size, 44);
	cr_assert_not_null(c->setup.rcq);
	cr_assert_neq(c->setup.rcq, c->setup.cq);
	cr_assert_eq(c->setup.sq_size, 55);
	cr_assert_eq(c->setup.rq_size, 66);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, cq_size_or_sq_size_0)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	struct rpma_conn_cfg *cfg = new_cfg(0, -1, -1, -1, -1);
	fake_push_conn_req(NULL, 0);
	cr_assert_eq(rpma_ep_next_conn_req(ep, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cfg = new_cfg(-1, -1, 0, -1, -1);
	cr_assert_eq(rpma_ep_next_conn_req(ep, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_EP_NEXT_CONN_REQ), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, private_data_passive_side)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	fake_push_conn_req("hello", 5);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	struct rpma_conn_private_data pdata = {NULL, 0};
	cr_assert_eq(rpma_conn_req_get_private_data(req, &pdata), 0);
	cr_assert_eq(pdata.len, 5);
	cr_assert_arr_eq(pdata.ptr, "hello", 5);

	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	struct rpma_conn_private_data cpd = {NULL, 0};
	cr_assert_eq(rpma_conn_get_private_data(conn, &cpd), 0);
	cr_assert_eq(cpd.len, 5);
	cr_assert_arr_eq(cpd.ptr, "hello", 5);

	/* an ESTABLISHED event carrying no data keeps what the request had */
	fake_push_conn_event(RPMA_CONN_ESTABLISHED, NULL, 0);
	enum rpma_conn_event ev;
	cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
	cr_assert_eq(rpma_conn_get_private_data(conn, &cpd), 0);
	cr_assert_eq(cpd.len, 5);
	cr_assert_arr_eq(cpd.ptr, "hello", 5);

	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, incoming_request_accepted_with_pdata)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	fake_push_conn_req("x", 1);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	char reply[40];
	memset(reply, 'r', sizeof(reply));
	struct rpma_conn_private_data pd = {reply, sizeof(reply)};
	cr_assert_eq(rpma_conn_req_connect(&req, &pd, &conn), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_CONNECT);
	cr_assert_eq(c->pdata_len, 40);
	cr_assert_arr_eq(c->pdata, reply, 40);
	cr_assert_eq(c->obj2, conn);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(ep_next_conn_req, incoming_request_rejected)
{
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	fake_push_conn_req("abc", 3);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_DELETE), 1);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

/* ========================================================== conn_req_new */

CONN_SUITE(conn_req_new);

Test(conn_req_new, NULL_arguments)
{
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_new(NULL, UNIT_ADDR, UNIT_PORT, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(peer, NULL, UNIT_PORT, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, NULL, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(conn_req_new, defaults_reach_provider)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert_str_eq(c->addr, UNIT_ADDR);
	cr_assert_str_eq(c->port, UNIT_PORT);
	cr_assert_eq(c->obj2, peer);
	cr_assert_eq(c->setup.timeout_ms, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_eq(c->setup.cq_size, 10);
	cr_assert_eq(c->setup.sq_size, 10);
	cr_assert_eq(c->setup.rq_size, 10);
	cr_assert_null(c->setup.rcq);
	cr_assert_eq(c->setup.shared_channel, false);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
}

Test(conn_req_new, timeout_and_sizes)
{
	struct rpma_conn_cfg *cfg = new_cfg(3, 4, 5, 6, 1);
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, 4321), 0);
	struct rpma_conn_req *req = unit_req(peer, cfg);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert_eq(c->setup.timeout_ms, 4321);
	cr_assert_eq(c->setup.cq_size, 3);
	cr_assert_eq(c->setup.rcq_size, 4);
	cr_assert_not_null(c->setup.rcq);
	cr_assert_eq(c->setup.sq_size, 5);
	cr_assert_eq(c->setup.rq_size, 6);
	cr_assert_eq(c->setup.shared_channel, true);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_req_new, cq_size_0)
{
	struct rpma_conn_cfg *cfg = new_cfg(0, -1, -1, -1, -1);
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_req_new, sq_size_0)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, -1, 0, -1, -1);
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(conn_req_new, provider_fails)
{
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_CONN_REQ_NEW, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, NULL, &req), RPMA_E_PROVIDER);
	cr_assert_eq(req, UNIT_POISON_PTR);
}

Test(conn_req_new, delete_NULL)
{
	struct rpma_conn_req *req = NULL;
	cr_assert_eq(rpma_conn_req_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(conn_req_new, delete_fails)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	fake_fail_next(FAKE_OP_CONN_REQ_DELETE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_req_delete(&req), RPMA_E_PROVIDER);
	cr_assert_null(req);
}

Test(conn_req_new, get_private_data_NULL)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn_private_data pdata = {UNIT_POISON_PTR, 9};
	cr_assert_eq(rpma_conn_req_get_private_data(NULL, &pdata), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_get_private_data(req, NULL), RPMA_E_INVAL);
	cr_assert_eq(pdata.ptr, UNIT_POISON_PTR);
	cr_assert_eq(pdata.len, 9);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
}

/* ====================================================== conn_req_connect */

CONN_SUITE(conn_req_connect);

Test(conn_req_connect, req_ptr_eq_NULL)
{
	struct rpma_conn *conn = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_connect(NULL, NULL, &conn), RPMA_E_INVAL);
	cr_assert_eq(conn, UNIT_POISON_PTR);
}

Test(conn_req_connect, req_eq_NULL)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_INVAL);
	cr_assert_eq(conn, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(conn_req_connect, conn_ptr_eq_NULL)
{
	/* like upstream: the request is consumed on every failure, invalid arguments too */
	struct rpma_conn_req *req = unit_req(peer, NULL);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, NULL), RPMA_E_INVAL);
	cr_assert_null(req);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_CONNECT), 0);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_DELETE), 1);
}

Test(conn_req_connect, pdata_ptr_eq_NULL)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn *conn = UNIT_POISON_PTR;
	struct rpma_conn_private_data no_ptr = {NULL, 4};
	cr_assert_eq(rpma_conn_req_connect(&req, &no_ptr, &conn), RPMA_E_INVAL);
	cr_assert_null(req);
	cr_assert_eq(conn, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_CONNECT), 0);
}

Test(conn_req_connect, pdata_len_eq_0)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn *conn = UNIT_POISON_PTR;
	char byte = 'x';
	struct rpma_conn_private_data no_len = {&byte, 0};
	cr_assert_eq(rpma_conn_req_connect(&req, &no_len, &conn), RPMA_E_INVAL);
	cr_assert_null(req);
	cr_assert_eq(conn, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_CONNECT), 0);
}

Test(conn_req_connect, pdata_too_long_for_transport)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn *conn = UNIT_POISON_PTR;
	char big[FAKE_PDATA_MAX + 1];
	memset(big, 'b', sizeof(big));
	struct rpma_conn_private_data pd = {big, sizeof(big)};
	cr_assert_eq(rpma_conn_req_connect(&req, &pd, &conn), RPMA_E_INVAL);
	cr_assert_null(req, "the request is consumed whatever the result");
	cr_assert_eq(conn, UNIT_POISON_PTR);
}

Test(conn_req_connect, provider_fails)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn *conn = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_CONN_REQ_CONNECT, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	cr_assert_null(req);
	cr_assert_eq(conn, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_DELETE), 0,
		     "the provider tore the request down itself");
}

Test(conn_req_connect, active_side_pdata)
{
	struct rpma_conn_req *req = unit_req(peer, NULL);
	struct rpma_conn *conn = NULL;
	char hi[] = "client-hello";
	struct rpma_conn_private_data pd = {hi, (uint8_t)strlen(hi)};
	cr_assert_eq(rpma_conn_req_connect(&req, &pd, &conn), 0);
	cr_assert_null(req);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_CONNECT);
	cr_assert_eq(c->pdata_len, (int)strlen(hi));
	cr_assert_arr_eq(c->pdata, hi, strlen(hi));

	/* nothing from the server before ESTABLISHED */
	struct rpma_conn_private_data got = {UNIT_POISON_PTR, 9};
	cr_assert_eq(rpma_conn_get_private_data(conn, &got), 0);
	cr_assert_null(got.ptr);
	cr_assert_eq(got.len, 0);

	fake_push_conn_event(RPMA_CONN_ESTABLISHED, "server-reply", 12);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED);
	cr_assert_eq(rpma_conn_get_private_data(conn, &got), 0);
	cr_assert_eq(got.len, 12);
	cr_assert_arr_eq(got.ptr, "server-reply", 12);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

/* ============================================================ conn_event */

CONN_SUITE(conn_event);

Test(conn_event, NULL_arguments)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	enum rpma_conn_event ev = (enum rpma_conn_event)42;
	fake_push_conn_event(RPMA_CONN_CLOSED, NULL, 0);
	cr_assert_eq(rpma_conn_next_event(NULL, &ev), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_next_event(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq((int)ev, 42);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_NEXT_EVENT), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

/* once the end was reported, a receive is refused before the provider sees it */
Test(conn_event, recv_refused_after_the_end)
{
	const enum rpma_conn_event ends[] = {RPMA_CONN_CLOSED, RPMA_CONN_LOST, RPMA_CONN_REJECTED,
					     RPMA_CONN_UNREACHABLE};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		struct rpma_conn *conn = unit_conn(peer, NULL);
		int before = fake_call_count(FAKE_OP_RECV);
		cr_assert_eq(rpma_recv(conn, NULL, 0, 0, (void *)0x1), 0);
		fake_push_conn_event(RPMA_CONN_ESTABLISHED, NULL, 0);
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
		cr_assert_eq(rpma_recv(conn, NULL, 0, 0, (void *)0x2), 0);
		cr_assert_eq(fake_call_count(FAKE_OP_RECV), before + 2);
		fake_push_conn_event(ends[i], NULL, 0);
		cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
		cr_assert_eq(ev, ends[i]);
		cr_assert_eq(rpma_recv(conn, NULL, 0, 0, (void *)0x3), RPMA_E_PROVIDER);
		cr_assert_eq(fake_call_count(FAKE_OP_RECV), before + 2, "the provider saw it");
		cr_assert_eq(rpma_conn_delete(&conn), 0);
	}
}

/* ... and so it is once the application disconnected, unless the disconnect failed */
Test(conn_event, recv_refused_after_disconnect)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	int before = fake_call_count(FAKE_OP_RECV);
	fake_fail_next(FAKE_OP_CONN_DISCONNECT, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_disconnect(conn), RPMA_E_PROVIDER);
	cr_assert_eq(rpma_recv(conn, NULL, 0, 0, (void *)0x1), 0);
	cr_assert_eq(rpma_conn_disconnect(conn), 0);
	cr_assert_eq(rpma_recv(conn, NULL, 0, 0, (void *)0x2), RPMA_E_PROVIDER);
	cr_assert_eq(fake_call_count(FAKE_OP_RECV), before + 1, "the provider saw it");
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn_event, every_event_passes_through)
{
	const enum rpma_conn_event events[] = {RPMA_CONN_ESTABLISHED, RPMA_CONN_CLOSED,
					       RPMA_CONN_LOST, RPMA_CONN_REJECTED,
					       RPMA_CONN_UNREACHABLE};
	struct rpma_conn *conn = unit_conn(peer, NULL);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		fake_push_conn_event(events[i], NULL, 0);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
		cr_assert_eq(ev, events[i]);
	}
	enum rpma_conn_event ev = (enum rpma_conn_event)42;
	cr_assert_eq(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	cr_assert_eq((int)ev, 42);
	fake_fail_next(FAKE_OP_CONN_NEXT_EVENT, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_next_event(conn, &ev), RPMA_E_PROVIDER);
	cr_assert_eq((int)ev, 42);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn_event, event_fd)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	int fd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(conn, &fd), 0);
	cr_assert(unit_fd_open(fd));
	int bad = -5;
	cr_assert_eq(rpma_conn_get_event_fd(NULL, &bad), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_event_fd(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(bad, -5);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(fake_fds_open(), 0);
}

/* ================================================================== conn */

CONN_SUITE(conn);

Test(conn, qp_num)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	uint32_t qp = 0;
	fake_set_qp_num(0x12345);
	cr_assert_eq(rpma_conn_get_qp_num(conn, &qp), 0);
	cr_assert_eq(qp, 0x12345);
	qp = 7;
	cr_assert_eq(rpma_conn_get_qp_num(NULL, &qp), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_qp_num(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(qp, 7);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn, disconnect)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	cr_assert_eq(rpma_conn_disconnect(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_disconnect(conn), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_CONN_DISCONNECT)->obj, conn);
	fake_fail_next(FAKE_OP_CONN_DISCONNECT, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_disconnect(conn), RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn, delete_NULL)
{
	struct rpma_conn *conn = NULL;
	cr_assert_eq(rpma_conn_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(conn, delete_fails)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	fake_fail_next(FAKE_OP_CONN_DELETE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_delete(&conn), RPMA_E_PROVIDER);
	cr_assert_null(conn);
}

Test(conn, get_private_data_NULL)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_conn_private_data pd = {UNIT_POISON_PTR, 9};
	cr_assert_eq(rpma_conn_get_private_data(NULL, &pd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_private_data(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(pd.ptr, UNIT_POISON_PTR);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn, apply_remote_peer_cfg_NULL)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(NULL, pcfg), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(conn, get_cq_and_rcq)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL, *rcq = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	cr_assert_eq(cq, fake_last_call(FAKE_OP_CONN_REQ_NEW)->setup.cq);
	cr_assert_eq(rpma_conn_get_rcq(conn, &rcq), 0);
	cr_assert_null(rcq);
	struct rpma_cq *x = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_get_cq(NULL, &x), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_cq(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_rcq(NULL, &x), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_rcq(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(x, UNIT_POISON_PTR);
	cr_assert_eq(rpma_conn_delete(&conn), 0);

	struct rpma_conn_cfg *cfg = new_cfg(-1, 8, -1, -1, -1);
	conn = unit_conn(peer, cfg);
	cr_assert_eq(rpma_conn_get_rcq(conn, &rcq), 0);
	cr_assert_not_null(rcq);
	cr_assert_eq(rcq, fake_last_call(FAKE_OP_CONN_REQ_NEW)->setup.rcq);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

/* ==================================================================== cq */

CONN_SUITE(cq);

Test(cq, get_wc_invalid)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc[2];
	int got = 77;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	cr_assert_eq(rpma_cq_get_wc(NULL, 1, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 1, NULL, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 0, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, -1, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 2, wc, NULL), RPMA_E_INVAL);
	cr_assert_eq(got, 77);
	cr_assert_eq(fake_call_count(FAKE_OP_CQ_POLL), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(cq, get_wc_none)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int got = 77;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	cr_assert_eq(rpma_cq_get_wc(cq, 1, &wc, &got), RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
	cr_assert_eq(got, 77);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(cq, get_wc_some)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc in[3];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 3; i++) {
		in[i].wr_id = 100 + (uint64_t)i;
		in[i].opcode = IBV_WC_RDMA_WRITE;
		in[i].status = IBV_WC_SUCCESS;
		in[i].qp_num = 42;
		fake_cq_push_wc(cq, &in[i]);
	}
	struct ibv_wc out[5];
	int got = 0;
	cr_assert_eq(rpma_cq_get_wc(cq, 5, out, &got), 0);
	cr_assert_eq(got, 3);
	cr_assert_eq(fake_last_call(FAKE_OP_CQ_POLL)->num_entries, 5);
	cr_assert_arr_eq(out, in, sizeof(in));
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(cq, get_wc_one_without_counter)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc in, out;
	memset(&in, 0, sizeof(in));
	in.wr_id = 7;
	in.status = IBV_WC_REM_ACCESS_ERR;
	fake_cq_push_wc(cq, &in);
	cr_assert_eq(rpma_cq_get_wc(cq, 1, &out, NULL), 0);
	cr_assert_eq(out.wr_id, 7);
	cr_assert_eq(out.status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(cq, get_wc_provider_answers)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc[2];
	int got = 77;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	fake_fail_next(FAKE_OP_CQ_POLL, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_cq_get_wc(cq, 2, wc, &got), RPMA_E_PROVIDER);
	cr_assert_eq(got, 77);
	/* more completions than asked for: the core cannot trust the answer */
	fake_fail_next(FAKE_OP_CQ_POLL, 3);
	cr_assert_eq(rpma_cq_get_wc(cq, 2, wc, &got), RPMA_E_UNKNOWN);
	cr_assert_eq(got, 77);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

Test(cq, get_fd_and_wait)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	int fd = -1;
	cr_assert_eq(rpma_cq_get_fd(cq, &fd), 0);
	cr_assert(unit_fd_open(fd));
	int bad = -5;
	cr_assert_eq(rpma_cq_get_fd(NULL, &bad), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_fd(cq, NULL), RPMA_E_INVAL);
	cr_assert_eq(bad, -5);

	cr_assert_eq(rpma_cq_wait(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_wait(cq), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_CQ_WAIT)->obj, cq);
	fake_fail_next(FAKE_OP_CQ_WAIT, RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
}

/* ======================================================== shared_channel */

CONN_SUITE(shared_channel);

Test(shared_channel, not_shared)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, 5, -1, -1, 0);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	int fd = -5;
	struct rpma_cq *cq = UNIT_POISON_PTR;
	bool is_rcq = true;
	cr_assert_eq(rpma_conn_get_compl_fd(conn, &fd), RPMA_E_NOT_SHARED_CHNL);
	cr_assert_eq(fd, -5);
	cr_assert_eq(rpma_conn_wait(conn, 0, &cq, &is_rcq), RPMA_E_NOT_SHARED_CHNL);
	cr_assert_eq(cq, UNIT_POISON_PTR);
	cr_assert_eq(is_rcq, true);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_GET_COMPL_FD), 0);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_WAIT), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(shared_channel, compl_fd)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, 5, -1, -1, 1);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	cr_assert(fake_last_call(FAKE_OP_CONN_REQ_NEW)->setup.shared_channel);
	int fd = -5;
	cr_assert_eq(rpma_conn_get_compl_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_compl_fd(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_compl_fd(conn, &fd), 0);
	cr_assert(unit_fd_open(fd));
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(shared_channel, cq_wait_refused)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, 5, -1, -1, 1);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(conn, &rcq), 0);
	cr_assert_eq(rpma_cq_wait(cq), RPMA_E_SHARED_CHANNEL);
	cr_assert_eq(rpma_cq_wait(rcq), RPMA_E_SHARED_CHANNEL);
	cr_assert_eq(fake_call_count(FAKE_OP_CQ_WAIT), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(shared_channel, conn_wait_reports_cq_or_rcq)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, 5, -1, -1, 1);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	struct rpma_cq *main_cq = NULL, *main_rcq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &main_cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(conn, &main_rcq), 0);

	struct rpma_cq *cq = NULL;
	bool is_rcq = true;
	fake_push_conn_wait(false);
	fake_push_conn_wait(true);
	cr_assert_eq(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	cr_assert_eq(cq, main_cq);
	cr_assert_eq(is_rcq, false);
	cr_assert_eq(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	cr_assert_eq(cq, main_rcq);
	cr_assert_eq(is_rcq, true);
	/* is_rcq may be NULL */
	fake_push_conn_wait(true);
	cr_assert_eq(rpma_conn_wait(conn, 0, &cq, NULL), 0);
	cr_assert_eq(cq, main_rcq);

	cq = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_CONN_WAIT, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_conn_wait(conn, 0, &cq, &is_rcq), RPMA_E_PROVIDER);
	cr_assert_eq(cq, UNIT_POISON_PTR);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

Test(shared_channel, conn_wait_invalid)
{
	struct rpma_conn_cfg *cfg = new_cfg(-1, 5, -1, -1, 1);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	struct rpma_cq *cq = UNIT_POISON_PTR;
	bool is_rcq = true;
	fake_push_conn_wait(false);
	cr_assert_eq(rpma_conn_wait(NULL, 0, &cq, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_wait(conn, 0, NULL, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_wait(conn, 1, &cq, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_wait(conn, -1, &cq, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(cq, UNIT_POISON_PTR);
	cr_assert_eq(is_rcq, true);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_WAIT), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

/* =================================================================== srq */

CONN_SUITE(srq);

/* new_srq -- an SRQ with the given receive CQ size (< 0: default cfg) */
static struct rpma_srq *new_srq(long rcq_size)
{
	struct rpma_srq *srq = NULL;
	struct rpma_srq_cfg *cfg = NULL;
	if (rcq_size >= 0) {
		cr_assert_eq(rpma_srq_cfg_new(&cfg), 0);
		cr_assert_eq(rpma_srq_cfg_set_rcq_size(cfg, (uint32_t)rcq_size), 0);
	}
	cr_assert_eq(rpma_srq_new(peer, cfg, &srq), 0);
	if (cfg)
		cr_assert_eq(rpma_srq_cfg_delete(&cfg), 0);
	return srq;
}

Test(srq, new_NULL_arguments)
{
	struct rpma_srq *srq = UNIT_POISON_PTR;
	cr_assert_eq(rpma_srq_new(NULL, NULL, &srq), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_new(peer, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(srq, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(srq, new_default_cfg)
{
	struct rpma_srq *srq = new_srq(-1);
	const struct fake_call *c = fake_last_call(FAKE_OP_SRQ_NEW);
	cr_assert_eq(c->rq_size, 20);
	cr_assert_eq(c->rcq_size, 20);
	cr_assert_not_null(c->rcq);
	struct rpma_cq *rcq = NULL;
	cr_assert_eq(rpma_srq_get_rcq(srq, &rcq), 0);
	cr_assert_eq(rcq, c->rcq);
	struct rpma_cq *x = UNIT_POISON_PTR;
	cr_assert_eq(rpma_srq_get_rcq(NULL, &x), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_get_rcq(srq, NULL), RPMA_E_INVAL);
	cr_assert_eq(x, UNIT_POISON_PTR);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_null(srq);
}

Test(srq, new_without_rcq)
{
	struct rpma_srq *srq = new_srq(0);
	const struct fake_call *c = fake_last_call(FAKE_OP_SRQ_NEW);
	cr_assert_eq(c->rcq_size, 0);
	cr_assert_null(c->rcq);
	struct rpma_cq *rcq = UNIT_POISON_PTR;
	cr_assert_eq(rpma_srq_get_rcq(srq, &rcq), 0);
	cr_assert_null(rcq);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, new_provider_fails)
{
	struct rpma_srq *srq = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_SRQ_NEW, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_srq_new(peer, NULL, &srq), RPMA_E_PROVIDER);
	cr_assert_eq(srq, UNIT_POISON_PTR);
}

Test(srq, delete_NULL)
{
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, delete_fails)
{
	struct rpma_srq *srq = new_srq(-1);
	fake_fail_next(FAKE_OP_SRQ_DELETE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
	cr_assert_null(srq);
}

Test(srq, recv)
{
	static uint8_t buf[256];
	struct rpma_srq *srq = new_srq(-1);
	struct rpma_mr_local *mr = unit_mr(peer, buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	cr_assert_eq(rpma_srq_recv(srq, mr, 16, 32, UNIT_OP_CTX), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_SRQ_RECV);
	cr_assert_eq(c->obj, srq);
	cr_assert_eq(c->mr, mr);
	cr_assert_eq(c->offset, 16);
	cr_assert_eq(c->len, 32);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	/* zero-length form */
	cr_assert_eq(rpma_srq_recv(srq, NULL, 0, 0, UNIT_OP_CTX), 0);
	cr_assert_null(fake_last_call(FAKE_OP_SRQ_RECV)->mr);
	int n = fake_call_count(FAKE_OP_SRQ_RECV);
	cr_assert_eq(rpma_srq_recv(NULL, mr, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_recv(srq, NULL, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_recv(srq, NULL, 8, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_recv(srq, mr, 200, 57, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_recv(srq, mr, SIZE_MAX, 2, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_call_count(FAKE_OP_SRQ_RECV), n);
	fake_fail_next(FAKE_OP_SRQ_RECV, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_srq_recv(srq, mr, 0, 8, NULL), RPMA_E_PROVIDER);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, conn_cfg_with_srq_rcq)
{
	struct rpma_srq *srq = new_srq(-1);
	struct rpma_cq *srq_rcq = NULL;
	cr_assert_eq(rpma_srq_get_rcq(srq, &srq_rcq), 0);
	struct rpma_conn_cfg *cfg = new_cfg(-1, 7, -1, -1, 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_srq *got = NULL;
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, &got), 0);
	cr_assert_eq(got, srq);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert_eq(c->setup.srq, srq);
	cr_assert_eq(c->setup.srq_rcq, srq_rcq);
	cr_assert_null(c->setup.rcq, "no own receive CQ when the SRQ has one");
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, conn_cfg_with_srq_without_rcq)
{
	struct rpma_srq *srq = new_srq(0);
	struct rpma_conn_cfg *cfg = new_cfg(-1, 7, -1, -1, 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert_eq(c->setup.srq, srq);
	cr_assert_null(c->setup.srq_rcq);
	cr_assert_not_null(c->setup.rcq, "the connection's own receive CQ");
	cr_assert_eq(c->setup.rcq_size, 7);
	cr_assert_eq(rpma_conn_delete(&conn), 0);

	/* without rcq_size the receives go to the main CQ */
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, 0), 0);
	conn = unit_conn(peer, cfg);
	c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert_null(c->setup.srq_rcq);
	cr_assert_null(c->setup.rcq);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, shared_channel_with_srq_rcq_refused)
{
	struct rpma_srq *srq = new_srq(-1);
	struct rpma_conn_cfg *cfg = new_cfg(-1, -1, -1, -1, 1);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_conn_req *req = UNIT_POISON_PTR;
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_NEW), 0);

	struct rpma_ep *ep = new_ep();
	fake_push_conn_req(NULL, 0);
	cr_assert_eq(rpma_ep_next_conn_req(ep, cfg, &req), RPMA_E_INVAL);
	cr_assert_eq(req, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_EP_NEXT_CONN_REQ), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

Test(srq, shared_channel_with_srq_without_rcq)
{
	struct rpma_srq *srq = new_srq(0);
	struct rpma_conn_cfg *cfg = new_cfg(-1, 4, -1, -1, 1);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_conn *conn = unit_conn(peer, cfg);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_NEW);
	cr_assert(c->setup.shared_channel);
	cr_assert_eq(c->setup.srq, srq);
	cr_assert_not_null(c->setup.rcq);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
}

/* ============================================================== contract */

/*
 * every refused call logs exactly one error line (HACKING.md: "log one
 * line, naming the function and the argument")
 */
#define ONE_ERROR(call, code)                                                                     \
	do {                                                                                      \
		unit_log_reset();                                                                 \
		cr_assert_eq((call), (code), "%s", #call);                                        \
		cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1, "%s logged %d errors",      \
			     #call, unit_log_count(RPMA_LOG_LEVEL_ERROR));                        \
		cr_assert_eq(unit_log_total(), 1, "%s logged %d lines", #call, unit_log_total()); \
	} while (0)

CONN_SUITE(contract);

Test(contract, one_error_line_per_refusal)
{
	static uint8_t buf[64];
	struct rpma_mr_local *mr = unit_mr(peer, buf, sizeof(buf), UNIT_USAGE_ALL);
	struct rpma_mr_remote *rmr = unit_remote(UNIT_RADDR, 64, UNIT_RKEY, UNIT_USAGE_ALL);
	struct rpma_conn_cfg *shared = new_cfg(-1, 4, -1, -1, 1);
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_conn *sconn = unit_conn(peer, shared);
	struct rpma_cq *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(sconn, &scq), 0);
	struct rpma_peer *p = NULL;
	struct rpma_mr_local *m = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_cq *cq = NULL;
	int fd;
	const char src8[8] = {0};

	ONE_ERROR(rpma_peer_new(NULL, &p), RPMA_E_INVAL);
	ONE_ERROR(rpma_mr_reg(peer, buf, 0, RPMA_MR_USAGE_READ_SRC, &m), RPMA_E_INVAL);
	ONE_ERROR(rpma_mr_reg(peer, buf, 8, 1 << 9, &m), RPMA_E_INVAL);
	ONE_ERROR(rpma_conn_req_new(peer, NULL, UNIT_PORT, NULL, &req), RPMA_E_INVAL);
	ONE_ERROR(rpma_read(conn, mr, 0, rmr, 60, 8, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_write(conn, rmr, 0, mr, 60, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		  RPMA_E_INVAL);
	ONE_ERROR(rpma_write(conn, rmr, 0, mr, 0, 8, 0, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_atomic_write(conn, rmr, 4, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
		  RPMA_E_INVAL);
	ONE_ERROR(rpma_flush(conn, rmr, 0, 8, (enum rpma_flush_type)7, RPMA_F_COMPLETION_ALWAYS,
			     NULL),
		  RPMA_E_INVAL);
	ONE_ERROR(rpma_send(conn, mr, 0, 65, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_recv(conn, NULL, 1, 0, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_conn_get_compl_fd(conn, &fd), RPMA_E_NOT_SHARED_CHNL);
	ONE_ERROR(rpma_conn_wait(sconn, 1, &cq, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_cq_wait(scq), RPMA_E_SHARED_CHANNEL);
	ONE_ERROR(rpma_cq_get_wc(scq, 0, NULL, NULL), RPMA_E_INVAL);
	ONE_ERROR(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_ERROR),
		  RPMA_E_INVAL);

	cr_assert_eq(rpma_conn_delete(&sconn), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&shared), 0);
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(contract, passive_pdata_kept_on_established)
{
	/* the request's private data stays; data coming with ESTABLISHED is released */
	struct rpma_ep *ep = new_ep();
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	fake_push_conn_req("hello", 5);
	cr_assert_eq(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	fake_push_conn_event(RPMA_CONN_ESTABLISHED, "other!", 6);
	enum rpma_conn_event ev;
	cr_assert_eq(rpma_conn_next_event(conn, &ev), 0);
	struct rpma_conn_private_data pd = {NULL, 0};
	cr_assert_eq(rpma_conn_get_private_data(conn, &pd), 0);
	cr_assert_eq(pd.len, 5);
	cr_assert_arr_eq(pd.ptr, "hello", 5);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_ep_shutdown(&ep), 0);
}

Test(contract, apm_region_registered_once_per_connection)
{
	struct rpma_conn *conn = unit_conn(peer, NULL);
	struct rpma_mr_remote *rmr = unit_remote(UNIT_RADDR, 64, UNIT_RKEY, UNIT_USAGE_ALL);
	int regs = fake_call_count(FAKE_OP_MR_REG);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
					RPMA_F_COMPLETION_ALWAYS, NULL),
			     0);
	cr_assert_leq(fake_call_count(FAKE_OP_MR_REG) - regs, 1);
	const void *raw = fake_nth_call(FAKE_OP_READ, 0)->mr;
	for (int i = 1; i < 5; i++)
		cr_assert_eq(fake_nth_call(FAKE_OP_READ, i)->mr, raw);
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(fake_live(FAKE_OBJ_MR), 0, "the APM region goes with the connection");
}
