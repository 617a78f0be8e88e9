/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- srq example, one of the clients: an ordinary ping-pong client
 * (the shared receive queue is the server's business)
 *
 * usage: client <addr> <port> [<rounds>]
 *
 * The client introduces itself with its process id as private data and
 * checks that every answer carries that id and the number sent plus one.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/common.h"
#include "proto.h"

#define SEND_OFFSET 0
#define RECV_OFFSET MSG_SLOT
#define BUF_SIZE    (2 * MSG_SLOT)

/* main -- connect with a hello, play the rounds */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem buf = {0};
	struct hello hello = {HELLO_MAGIC, (uint32_t)getpid()};
	struct rpma_conn_private_data pdata = {&hello, sizeof(hello)};
	unsigned rounds = 5;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<rounds>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "rounds", &rounds));
	EX_CHECK(ex_mem_open(NULL, BUF_SIZE, &buf));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, buf.ptr, BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, &pdata, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	uint64_t value = (uint64_t)hello.id * 1000;
	for (unsigned i = 0; i < rounds; i++) {
		struct msg out = {.id = hello.id, .last = i + 1 == rounds, .value = value}, in;
		EX_TRY(rpma_recv(conn, mr, RECV_OFFSET, sizeof(in), NULL));
		memcpy(buf.ptr + SEND_OFFSET, &out, sizeof(out));
		EX_TRY(rpma_send(conn, mr, SEND_OFFSET, sizeof(out), RPMA_F_COMPLETION_ALWAYS,
				 NULL));
		bool sent = false, received = false;
		while (!sent || !received) {
			struct ibv_wc wc;
			EX_CHECK(ex_wait_wc(cq, &wc));
			if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && !sent) {
				sent = true;
			} else {
				EX_CHECK(ex_check_wc(&wc, IBV_WC_RECV, NULL));
				if (received) {
					ex_msg("two answers in one round");
					ret = EX_E_FAIL;
					goto out;
				}
				received = true;
			}
		}
		memcpy(&in, buf.ptr + RECV_OFFSET, sizeof(in));
		if (in.id != hello.id || in.value != value + 1) {
			ex_msg("sent %" PRIu64 " as id %u, got back %" PRIu64 " for id %u", value,
			       hello.id, in.value, in.id);
			ret = EX_E_FAIL;
			goto out;
		}
		value = in.value + 1;
	}
	printf("verified: client id %u got %u correct answers\n", hello.id, rounds);
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
