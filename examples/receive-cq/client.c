/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- receive-cq example, active side: ping-pong with the answers
 * collected from the connection's receive CQ
 *
 * usage: client <addr> <port> [<rounds>]
 *
 * Every round: post a receive, send a number, take the send's completion
 * from the main CQ and the answer (the number doubled) from the receive CQ.
 * A completion of the wrong kind on either CQ fails the example.
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

/* main -- connect with an RCQ and play the rounds */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct ex_mem buf = {0};
	unsigned rounds = 10;
	uint32_t rcq_size = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<rounds>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "rounds", &rounds));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	EX_TRY(rpma_conn_cfg_new(&cfg));
	EX_TRY(rpma_conn_cfg_set_rcq_size(cfg, 4));
	EX_TRY(rpma_conn_cfg_set_timeout(cfg, EX_CONNECT_TIMEOUT_MS));
	EX_TRY(rpma_conn_cfg_get_rcq_size(cfg, &rcq_size));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], cfg, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_conn_get_rcq(conn, &rcq));
	if (rcq == NULL || rcq == cq) {
		ex_msg("rcq_size is %u but the connection has no separate receive CQ", rcq_size);
		ret = EX_E_FAIL;
		goto out;
	}

	uint64_t value = 3;
	for (unsigned i = 0; i < rounds; i++) {
		struct msg out = {.value = value, .last = i + 1 == rounds}, in;
		EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(in), NULL));
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		EX_CHECK(ex_expect_wc(cq, IBV_WC_SEND, NULL, NULL));
		EX_CHECK(ex_expect_wc(rcq, IBV_WC_RECV, NULL, NULL));
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (in.value != value * 2) {
			ex_msg("sent %" PRIu64 ", got back %" PRIu64 " instead of its double",
			       value, in.value);
			ret = EX_E_FAIL;
			goto out;
		}
		value = in.value + 1;
	}
	printf("verified: %u answers from the receive CQ, %u sends on the main CQ\n", rounds,
	       rounds);
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (cfg)
		(void)rpma_conn_cfg_delete(&cfg);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&buf);
	return ret ? 1 : 0;
}
