/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- ping-pong example, passive side: answer every message with the
 * number it carried plus one
 *
 * usage: server <addr> <port>
 *
 * A receive is posted before the connection is accepted, so the client's
 * first message always finds a buffer; each further receive is posted
 * before the answer goes out, so the next message finds one too.  That next
 * message may even be reported before the completion of the answer's send:
 * the CQ reports what happened in the order it happened, across directions.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"

/* one message in either direction */
struct msg {
	uint64_t value;
	uint32_t last; /* the client's final message */
	uint32_t reserved;
};

#define SEND_OFFSET 0
#define RECV_OFFSET 64
#define BUF_SIZE    128

/* main -- accept, then receive and answer until the client's last message */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem buf = {0};
	struct ibv_wc wc;
	struct msg in, out;
	uint64_t expected = 0;
	unsigned rounds = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	/* one region for both directions: messages leave from it and arrive in it */
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, mr, RECV_OFFSET, sizeof(struct msg), NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	bool have_next = false; /* the next message's completion came in already */
	do {
		if (!have_next)
			EX_CHECK(ex_expect_wc(cq, IBV_WC_RECV, NULL, &wc));
		have_next = false;
		if (wc.byte_len != sizeof(in)) {
			ex_msg("a message of %u bytes, expected %zu", wc.byte_len, sizeof(in));
			ret = EX_E_FAIL;
			goto out;
		}
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (rounds > 0 && in.value != expected) {
			ex_msg("got %" PRIu64 ", expected %" PRIu64, in.value, expected);
			ret = EX_E_FAIL;
			goto out;
		}
		/* the buffer is free again: post it for the next message before answering */
		if (!in.last)
			EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(struct msg), NULL));

		memset(&out, 0, sizeof(out));
		out.value = in.value + 1;
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		/* the client may send its next number before our send completes here */
		EX_CHECK(ex_wait_send(cq, &wc, &have_next));
		printf("ping %" PRIu64 " -> pong %" PRIu64 "\n", in.value, out.value);
		/* the client's next number is our answer plus one */
		expected = out.value + 1;
		rounds++;
	} while (!in.last);

	printf("verified: %u messages in sequence\n", rounds);
	EX_CHECK(ex_await_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&buf);
	return ret ? 1 : 0;
}
