/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- imm-data example, active side: a send and a write, each with a
 * 32-bit immediate value, and the server's account of what it received
 *
 * usage: client <addr> <port>
 *
 * rpma_send_with_imm() and rpma_write_with_imm() take the value in host byte
 * order.  The client posts its two receives up front; receives form an
 * unordered set, so which buffer got which answer is told by the
 * completion's op_context, and what the answer is by its "kind".
 */

#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "proto.h"

#define SLOT_SEND    0
#define SLOT_RECV_A  1
#define SLOT_RECV_B  2
#define MSG_BUF_SIZE (3 * MSG_SLOT)

/* take_msg -- copy out the message a receive completion delivered */
static int take_msg(const struct ibv_wc *wc, const char *buf, struct msg *m)
{
	int ret = ex_check_wc(wc, IBV_WC_RECV, NULL);
	if (ret)
		return ret;
	unsigned slot = (unsigned)wc->wr_id;
	if ((slot != SLOT_RECV_A && slot != SLOT_RECV_B) || wc->byte_len != sizeof(*m)) {
		ex_msg("a receive completion for an unknown buffer or of a wrong size");
		return EX_E_FAIL;
	}
	memcpy(m, buf + slot * MSG_SLOT, sizeof(*m));
	return 0;
}

/* main -- connect, send with imm, write with imm, check the server's report */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *data_mr = NULL, *msg_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_conn_private_data pdata;
	struct ex_mem data = {0}, msgs = {0};
	struct ibv_wc wc;
	struct msg m;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, DATA_SIZE, &data));
	EX_CHECK(ex_mem_open(NULL, MSG_BUF_SIZE, &msgs));
	ex_fill(data.ptr, DATA_SIZE, DATA_SEED);
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, data.ptr, DATA_SIZE, RPMA_MR_USAGE_WRITE_SRC, &data_mr));
	EX_TRY(rpma_mr_reg(peer, msgs.ptr, MSG_BUF_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			   &msg_mr));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &dst_mr, NULL));

	/* both answers' buffers, identified by op_context = slot number */
	EX_TRY(rpma_recv(conn, msg_mr, SLOT_RECV_A * MSG_SLOT, sizeof(m),
			 (const void *)(uintptr_t)SLOT_RECV_A));
	EX_TRY(rpma_recv(conn, msg_mr, SLOT_RECV_B * MSG_SLOT, sizeof(m),
			 (const void *)(uintptr_t)SLOT_RECV_B));

	/* 1. a message with an immediate value */
	memset(&m, 0, sizeof(m));
	m.kind = MSG_HELLO;
	memcpy(msgs.ptr + SLOT_SEND * MSG_SLOT, &m, sizeof(m));
	EX_TRY(rpma_send_with_imm(conn, msg_mr, SLOT_SEND * MSG_SLOT, sizeof(m),
				  RPMA_F_COMPLETION_ALWAYS, SEND_IMM, NULL));

	/* 2. wait until the server is ready for the write, then write with a value */
	bool sent = false, received = false;
	while (!sent || !received) {
		/* the send's completion and the answer may come in either order */
		EX_CHECK(ex_wait_wc(cq, &wc));
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && !sent) {
			sent = true;
		} else if (!received) {
			EX_CHECK(take_msg(&wc, msgs.ptr, &m));
			received = true;
		} else {
			EX_CHECK(ex_check_wc(&wc, IBV_WC_SEND, NULL));
		}
	}
	if (m.kind != MSG_READY) {
		ex_msg("expected the server's 'ready', got message kind %u", m.kind);
		ret = EX_E_FAIL;
		goto out;
	}
	EX_TRY(rpma_write_with_imm(conn, dst_mr, 0, data_mr, 0, DATA_SIZE, RPMA_F_COMPLETION_ALWAYS,
				   WRITE_IMM, NULL));

	/* 3. the server's report, which may come before the write's own completion */
	bool written = false, reported = false;
	while (!written || !reported) {
		EX_CHECK(ex_wait_wc(cq, &wc));
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && !written) {
			written = true;
		} else if (!reported) {
			EX_CHECK(take_msg(&wc, msgs.ptr, &m));
			reported = true;
		} else {
			EX_CHECK(ex_check_wc(&wc, IBV_WC_RDMA_WRITE, NULL));
		}
	}
	if (m.kind != MSG_DONE) {
		ex_msg("expected the server's report, got message kind %u", m.kind);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("the server saw 0x%08x with the send, 0x%08x with the write, data %s\n", m.send_imm,
	       m.write_imm, m.data_ok ? "intact" : "DAMAGED");
	if (m.send_imm != SEND_IMM || m.write_imm != WRITE_IMM || !m.data_ok) {
		ex_msg("expected 0x%08x and 0x%08x and intact data", SEND_IMM, WRITE_IMM);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: both immediate values arrived unchanged, and the data too\n");
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (dst_mr)
		(void)rpma_mr_remote_delete(&dst_mr);
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
