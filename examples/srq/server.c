/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- srq example, passive side: several clients' messages land in
 * one shared receive queue and are answered from one receive CQ
 *
 * usage: server <addr> <port> [<clients>]
 *
 * The server creates a shared receive queue with its own receive CQ, posts
 * a pool of buffers to it and accepts <clients> (default 3) connections
 * configured with rpma_conn_cfg_set_srq().  A buffer is not tied to any
 * connection: whichever client sends next consumes one.  The completion's
 * qp_num tells which connection the message came on (compare with
 * rpma_conn_get_qp_num()), and its op_context which buffer holds it; the
 * buffer is re-posted as soon as the message is copied out.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "proto.h"

#define MAX_CLIENTS 8
#define POOL	    (2 * MAX_CLIENTS)
/* buffer: POOL receive slots, then one send slot per client */
#define SEND_SLOT(i) (POOL + (i))
#define BUF_SIZE     ((POOL + MAX_CLIENTS) * MSG_SLOT)

struct client {
	struct rpma_conn *conn;
	struct rpma_cq *cq; /* sends only: receives go to the SRQ's CQ */
	uint32_t qp_num;
	uint32_t id;
	unsigned messages;
	bool done;
};

/* post_slot -- give receive slot i (back) to the shared queue */
static int post_slot(struct rpma_srq *srq, struct rpma_mr_local *mr, unsigned i)
{
	/* op_context = slot number + 1 (never NULL) */
	int ret = rpma_srq_recv(srq, mr, (size_t)i * MSG_SLOT, sizeof(struct msg),
				(const void *)(uintptr_t)(i + 1));
	if (ret)
		ex_fail("rpma_srq_recv", ret);
	return ret;
}

/* main -- accept every client onto the shared queue, then serve messages */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *rcq = NULL;
	struct client clients[MAX_CLIENTS];
	struct ex_mem buf = {0};
	unsigned wanted = 3, accepted = 0, remaining, total = 0;
	int ret;

	memset(clients, 0, sizeof(clients));
	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<clients>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "clients", &wanted));
	if (wanted > MAX_CLIENTS) {
		ex_msg("at most %d clients", MAX_CLIENTS);
		ret = EX_E_FAIL;
		goto out;
	}
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	/* the shared queue and its receive CQ */
	EX_TRY(rpma_srq_cfg_new(&srq_cfg));
	EX_TRY(rpma_srq_cfg_set_rq_size(srq_cfg, POOL));
	EX_TRY(rpma_srq_cfg_set_rcq_size(srq_cfg, POOL));
	EX_TRY(rpma_srq_new(peer, srq_cfg, &srq));
	EX_TRY(rpma_srq_get_rcq(srq, &rcq));
	if (rcq == NULL) {
		ex_msg("the shared receive queue has no receive CQ");
		ret = EX_E_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < POOL; i++)
		EX_CHECK(post_slot(srq, mr, i));

	/* every connection takes its receives from the shared queue */
	EX_TRY(rpma_conn_cfg_new(&cfg));
	EX_TRY(rpma_conn_cfg_set_srq(cfg, srq));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	for (; accepted < wanted; accepted++) {
		struct client *c = &clients[accepted];
		struct rpma_conn_private_data pdata;
		struct hello hello;
		EX_CHECK(ex_accept(ep, cfg, NULL, 0, 0, NULL, &c->conn));
		EX_TRY(rpma_conn_get_cq(c->conn, &c->cq));
		EX_TRY(rpma_conn_get_qp_num(c->conn, &c->qp_num));
		EX_TRY(rpma_conn_get_private_data(c->conn, &pdata));
		if (pdata.ptr == NULL || pdata.len < sizeof(hello)) {
			ex_msg("a client without its hello");
			ret = EX_E_FAIL;
			goto out;
		}
		memcpy(&hello, pdata.ptr, sizeof(hello));
		if (hello.magic != HELLO_MAGIC) {
			ex_msg("a client with a wrong hello");
			ret = EX_E_FAIL;
			goto out;
		}
		c->id = hello.id;
		printf("client %u (id %u) accepted on queue pair %u\n", accepted, c->id, c->qp_num);
	}

	for (remaining = wanted; remaining > 0;) {
		struct ibv_wc wc;
		struct msg in, out;
		EX_CHECK(ex_expect_wc(rcq, IBV_WC_RECV, NULL, &wc));
		unsigned slot = (unsigned)wc.wr_id - 1;
		if (slot >= POOL || wc.byte_len != sizeof(in)) {
			ex_msg("a receive completion for an unknown buffer or of a wrong size");
			ret = EX_E_FAIL;
			goto out;
		}
		memcpy(&in, buf.ptr + (size_t)slot * MSG_SLOT, sizeof(in));
		EX_CHECK(post_slot(srq, mr, slot));

		/* which connection? */
		struct client *c = NULL;
		for (unsigned i = 0; i < accepted && c == NULL; i++)
			if (clients[i].qp_num == wc.qp_num)
				c = &clients[i];
		if (c == NULL || c->done || in.id != c->id) {
			ex_msg("a message (id %u) on queue pair %u that belongs to no active "
			       "client",
			       in.id, wc.qp_num);
			ret = EX_E_FAIL;
			goto out;
		}
		c->messages++;
		total++;
		memset(&out, 0, sizeof(out));
		out.id = c->id;
		out.value = in.value + 1;
		size_t off = (size_t)SEND_SLOT(c - clients) * MSG_SLOT;
		memcpy(buf.ptr + off, &out, sizeof(out));
		EX_TRY(rpma_send(c->conn, mr, off, sizeof(out), RPMA_F_COMPLETION_ALWAYS, NULL));
		EX_CHECK(ex_expect_wc(c->cq, IBV_WC_SEND, NULL, NULL));
		if (in.last) {
			c->done = true;
			remaining--;
			printf("client id %u: %u messages\n", c->id, c->messages);
		}
	}
	printf("verified: %u messages from %u clients through one shared receive queue\n", total,
	       wanted);
	for (unsigned i = 0; i < accepted; i++)
		EX_CHECK(ex_await_close(&clients[i].conn));

out:
	for (unsigned i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].conn)
			(void)rpma_conn_delete(&clients[i].conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (cfg)
		(void)rpma_conn_cfg_delete(&cfg);
	if (srq)
		(void)rpma_srq_delete(&srq);
	if (srq_cfg)
		(void)rpma_srq_cfg_delete(&srq_cfg);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&buf);
	return ret ? 1 : 0;
}
