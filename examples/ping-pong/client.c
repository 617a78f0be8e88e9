/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- ping-pong example, active side: send a number, expect it back
 * plus one, send that plus one, and so on
 *
 * usage: client <addr> <port> [<rounds>]
 *
 * The receive for the answer is posted before the message is sent.  The
 * send's and the receive's completions arrive on the same CQ in either
 * order, so the client takes two completions and tells them apart by opcode.
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

/* main -- connect, play the rounds, disconnect */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem buf = {0};
	unsigned rounds = 10;
	uint64_t value = 1000;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<rounds>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "rounds", &rounds));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	for (unsigned i = 0; i < rounds; i++) {
		struct msg out = {.value = value, .last = i + 1 == rounds}, in;
		EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(in), NULL));
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));

		bool sent = false, received = false;
		while (!sent || !received) {
			struct ibv_wc wc;
			EX_CHECK(ex_wait_wc(cq, &wc));
			bool is_recv = wc.opcode == IBV_WC_RECV;
			EX_CHECK(ex_check_wc(&wc, is_recv ? IBV_WC_RECV : IBV_WC_SEND, NULL));
			if ((is_recv && received) || (!is_recv && sent)) {
				ex_msg("a second %s completion in one round",
				       ex_opcode_str(wc.opcode));
				ret = EX_E_FAIL;
				goto out;
			}
			if (is_recv)
				received = true;
			else
				sent = true;
		}
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (in.value != value + 1) {
			ex_msg("sent %" PRIu64 ", got back %" PRIu64, value, in.value);
			ret = EX_E_FAIL;
			goto out;
		}
		value = in.value + 1;
	}
	printf("verified: %u round trips, every answer was the number sent plus one\n", rounds);
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&buf);
	return ret ? 1 : 0;
}
