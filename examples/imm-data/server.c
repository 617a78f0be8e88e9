/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- imm-data example, passive side: receive a message and a write
 * that each carry a 32-bit immediate value
 *
 * usage: server <addr> <port>
 *
 * A send with immediate data arrives as an ordinary receive completion with
 * IBV_WC_WITH_IMM set; a write with immediate data puts its bytes into the
 * server's region without involving the server's CPU, and then produces a
 * receive completion (IBV_WC_RECV_RDMA_WITH_IMM) carrying the value, which
 * tells the server that the data is there.  Like on RDMA hardware, the
 * server keeps a receive posted for that notification.  The immediate value
 * arrives in network byte order in struct ibv_wc.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "proto.h"

/* slots of the message buffer */
#define SLOT_RECV_HELLO 0
#define SLOT_RECV_WRITE 1
#define SLOT_SEND	2
#define MSG_BUF_SIZE	(3 * MSG_SLOT)

/* the op_context of the receive posted for the write's notification */
static const int Write_recv_tag;
#define WRITE_RECV_CTX ((const void *)&Write_recv_tag)

/* send_msg -- send m from the send slot (the caller collects the completion) */
static int send_msg(struct rpma_conn *conn, struct rpma_mr_local *mr, char *buf,
		    const struct msg *m)
{
	memcpy(buf + SLOT_SEND * MSG_SLOT, m, sizeof(*m));
	int ret = rpma_send(conn, mr, SLOT_SEND * MSG_SLOT, sizeof(*m), RPMA_F_COMPLETION_ALWAYS,
			    NULL);
	if (ret)
		ex_fail("rpma_send", ret);
	return ret;
}

/* main -- accept, take the send and the write with their values, report back */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *data_mr = NULL, *msg_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem data = {0}, msgs = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	struct ibv_wc wc, write_wc = {0};
	struct msg hello, reply;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, DATA_SIZE, &data));
	EX_CHECK(ex_mem_open(NULL, MSG_BUF_SIZE, &msgs));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, data.ptr, DATA_SIZE, RPMA_MR_USAGE_WRITE_DST, &data_mr));
	EX_TRY(rpma_mr_reg(peer, msgs.ptr, MSG_BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			   &msg_mr));
	EX_CHECK(ex_pdata_pack(data_mr, NULL, &pd, &pdata));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, msg_mr, SLOT_RECV_HELLO * MSG_SLOT, sizeof(struct msg), &pdata,
			   &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	/* 1. the message sent with an immediate value */
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RECV, NULL, &wc));
	memcpy(&hello, msgs.ptr + SLOT_RECV_HELLO * MSG_SLOT, sizeof(hello));
	if (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.byte_len != sizeof(hello) ||
	    hello.kind != MSG_HELLO) {
		ex_msg("the first message is not a hello with an immediate value");
		ret = EX_E_FAIL;
		goto out;
	}
	uint32_t send_imm = ntohl(wc.imm_data);
	printf("received a message with the immediate value 0x%08x\n", send_imm);

	/* 2. a receive for the write's notification, then tell the client to go on */
	EX_TRY(rpma_recv(conn, msg_mr, SLOT_RECV_WRITE * MSG_SLOT, sizeof(struct msg),
			 WRITE_RECV_CTX));
	memset(&reply, 0, sizeof(reply));
	reply.kind = MSG_READY;
	EX_CHECK(send_msg(conn, msg_mr, msgs.ptr, &reply));

	/* the send's completion and the write's notification may come in either order */
	bool sent = false, written = false;
	while (!sent || !written) {
		EX_CHECK(ex_wait_wc(cq, &wc));
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && !sent) {
			sent = true;
		} else if (!written) {
			EX_CHECK(ex_check_wc(&wc, IBV_WC_RECV_RDMA_WITH_IMM, NULL));
			write_wc = wc;
			written = true;
		} else {
			EX_CHECK(ex_check_wc(&wc, IBV_WC_SEND, NULL));
		}
	}
	if (!(write_wc.wc_flags & IBV_WC_WITH_IMM)) {
		ex_msg("the write's notification carries no immediate value");
		ret = EX_E_FAIL;
		goto out;
	}
	uint32_t write_imm = ntohl(write_wc.imm_data);
	bool data_ok = ex_verify(data.ptr, DATA_SIZE, DATA_SEED, "the written data") == 0;
	printf("a write of %d bytes arrived with the immediate value 0x%08x; data %s\n", DATA_SIZE,
	       write_imm, data_ok ? "intact" : "DAMAGED");

	/* 3. report what arrived; the client judges it */
	memset(&reply, 0, sizeof(reply));
	reply.kind = MSG_DONE;
	reply.send_imm = send_imm;
	reply.write_imm = write_imm;
	reply.data_ok = data_ok;
	EX_CHECK(send_msg(conn, msg_mr, msgs.ptr, &reply));
	for (;;) {
		/*
		 * Where a write with immediate data does not consume a receive,
		 * the receive posted for it is still there, and it is flushed
		 * when the client hangs up, which may be reported before this
		 * send's completion.  That one is expected; anything else is not.
		 */
		EX_CHECK(ex_wait_wc(cq, &wc));
		if (wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == (uintptr_t)WRITE_RECV_CTX)
			continue;
		EX_CHECK(ex_check_wc(&wc, IBV_WC_SEND, NULL));
		break;
	}
	if (send_imm != SEND_IMM || write_imm != WRITE_IMM || !data_ok) {
		ex_msg("unexpected immediate values or data");
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: both immediate values and the data\n");
	EX_CHECK(ex_await_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (data_mr)
		(void)rpma_mr_dereg(&data_mr);
	if (msg_mr)
		(void)rpma_mr_dereg(&msg_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&data);
	ex_mem_close(&msgs);
	return ret ? 1 : 0;
}
