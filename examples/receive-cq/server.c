/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- receive-cq example, passive side: a ping-pong server whose
 * receive completions go to a separate receive CQ
 *
 * usage: server <addr> <port>
 *
 * With rpma_conn_cfg_set_rcq_size() > 0 a connection gets a second CQ for
 * its receives (rpma_conn_get_rcq()); the main CQ then only reports the
 * send-side operations.  Each CQ has its own descriptor and can be waited
 * on by itself, e.g. by different threads.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"

struct msg {
	uint64_t value;
	uint32_t last;
	uint32_t reserved;
};

#define SEND_OFFSET 0
#define RECV_OFFSET 64
#define BUF_SIZE    128

/* main -- accept with an RCQ, answer every message from it */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct ex_mem buf = {0};
	struct ibv_wc wc;
	struct msg in, out;
	unsigned rounds = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	/* the settings apply to the connection this side accepts */
	EX_TRY(rpma_conn_cfg_new(&cfg));
	EX_TRY(rpma_conn_cfg_set_rcq_size(cfg, 4));
	EX_TRY(rpma_conn_cfg_set_cq_size(cfg, 4));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, cfg, mr, RECV_OFFSET, sizeof(struct msg), NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_conn_get_rcq(conn, &rcq));
	if (rcq == NULL) {
		ex_msg("the connection has no receive CQ");
		ret = EX_E_FAIL;
		goto out;
	}

	do {
		/* receives: only ever on the receive CQ */
		EX_CHECK(ex_expect_wc(rcq, IBV_WC_RECV, NULL, &wc));
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (!in.last)
			EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(struct msg), NULL));
		memset(&out, 0, sizeof(out));
		out.value = in.value * 2;
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		/* sends: only ever on the main CQ */
		EX_CHECK(ex_expect_wc(cq, IBV_WC_SEND, NULL, NULL));
		rounds++;
	} while (!in.last);

	printf("verified: %u receives on the receive CQ, %u sends on the main CQ\n", rounds,
	       rounds);
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
