/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- shared-channel example, active side: ping-pong where the send
 * completions (main CQ) and the answers (receive CQ) are waited for through
 * the connection's one shared completion channel
 *
 * usage: client <addr> <port> [<rounds>]
 *
 * The channel's descriptor (rpma_conn_get_compl_fd()) could go into
 * poll()/epoll; here the client polls it once to show that it becomes
 * readable, and otherwise sleeps in rpma_conn_wait().  rpma_cq_wait() on a
 * CQ of a shared channel is refused with RPMA_E_SHARED_CHANNEL.
 */

#include <inttypes.h>
#include <poll.h>
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

/* main -- connect with a shared channel and play the rounds */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem buf = {0};
	unsigned rounds = 10;
	struct tally t = {0};
	bool shared = false;
	int fd = -1;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<rounds>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "rounds", &rounds));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));

	EX_TRY(rpma_conn_cfg_new(&cfg));
	EX_TRY(rpma_conn_cfg_set_compl_channel(cfg, true));
	EX_TRY(rpma_conn_cfg_get_compl_channel(cfg, &shared));
	EX_TRY(rpma_conn_cfg_set_rcq_size(cfg, 4));
	EX_TRY(rpma_conn_cfg_set_timeout(cfg, EX_CONNECT_TIMEOUT_MS));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], cfg, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_compl_fd(conn, &fd));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	/* a deliberate misuse: the library refuses it (and logs why) */
	printf("calling rpma_cq_wait() on a CQ of the shared channel: it must be refused\n");
	fflush(stdout);
	ret = rpma_cq_wait(cq);
	if (ret != RPMA_E_SHARED_CHANNEL) {
		ex_msg("rpma_cq_wait() on a shared-channel CQ returned %d", ret);
		ret = EX_E_FAIL;
		goto out;
	}

	uint64_t value = 11;
	for (unsigned i = 0; i < rounds; i++) {
		struct msg out = {.value = value, .last = i + 1 == rounds}, in;
		EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(in), NULL));
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		if (i == 0) {
			/* the channel's descriptor signals like any other */
			struct pollfd pfd = {.fd = fd, .events = POLLIN};
			if (poll(&pfd, 1, 10000) != 1) {
				ex_msg("the completion channel did not become readable");
				ret = EX_E_FAIL;
				goto out;
			}
		}
		EX_CHECK(collect(conn, i + 1, i + 1, &t));
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (in.value != value + 7) {
			ex_msg("sent %" PRIu64 ", got back %" PRIu64, value, in.value);
			ret = EX_E_FAIL;
			goto out;
		}
		value = in.value;
	}
	/* answers are only ever taken after rpma_conn_wait() reported the receive CQ */
	if (t.on_rcq == 0 || t.recvs != rounds || t.sends != rounds) {
		ex_msg("%u sends and %u answers, %u receive CQ wake-ups", t.sends, t.recvs,
		       t.on_rcq);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: %u rounds through one %s channel: %u wake-ups, %u of them for the "
	       "receive CQ\n",
	       rounds, shared ? "shared" : "?", t.wakeups, t.on_rcq);
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
