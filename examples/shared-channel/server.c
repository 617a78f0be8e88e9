/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- shared-channel example, passive side: a ping-pong server that
 * waits for both of its CQs with one rpma_conn_wait()
 *
 * usage: server <addr> <port>
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "collect.h"

struct msg {
	uint64_t value;
	uint32_t last;
	uint32_t reserved;
};

#define SEND_OFFSET 0
#define RECV_OFFSET 64
#define BUF_SIZE    128

/* main -- accept with a shared channel and answer every message */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct ex_mem buf = {0};
	struct msg in, out;
	struct tally t = {0};
	unsigned rounds = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	EX_TRY(rpma_conn_cfg_new(&cfg));
	EX_TRY(rpma_conn_cfg_set_compl_channel(cfg, true));
	EX_TRY(rpma_conn_cfg_set_rcq_size(cfg, 4));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, cfg, mr, RECV_OFFSET, sizeof(struct msg), NULL, &conn));

	do {
		/* message number rounds + 1 (the client's next may already be in) */
		EX_CHECK(collect(conn, rounds, rounds + 1, &t));
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (!in.last)
			EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(struct msg), NULL));
		memset(&out, 0, sizeof(out));
		out.value = in.value + 7;
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		rounds++;
		EX_CHECK(collect(conn, rounds, 0, &t));
	} while (!in.last);

	printf("verified: %u rounds served through one channel (%u wake-ups, %u for the receive "
	       "CQ)\n",
	       rounds, t.wakeups, t.on_rcq);
	EX_CHECK(ex_await_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (cfg)
		(void)rpma_conn_cfg_delete(&cfg);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&buf);
	return ret ? 1 : 0;
}
