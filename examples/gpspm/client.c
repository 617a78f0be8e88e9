/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- gpspm example, active side: write chunks into the server's
 * region and have the server persist each one
 *
 * usage: client <addr> <port>
 *
 * For every chunk: post the receive for the answer, write the chunk (no
 * completion unless it fails), send the persist request.  The request is
 * delivered after the write on the same connection, so by the time the
 * server sees it the chunk is in the server's memory.  The answer must carry
 * the request's op_id and status 0.  Finally everything is read back.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "proto.h"

#define SLOT_SEND 0
#define SLOT_RECV 1

/* main -- connect, write + persist every chunk, read back */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL, *msg_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_conn_private_data pdata;
	struct ex_mem src = {0}, msgs = {0};
	size_t remote_size = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, REGION_SIZE, &src));
	EX_CHECK(ex_mem_open(NULL, 2 * MSG_SLOT, &msgs));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, src.ptr, src.size,
			   RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &src_mr));
	EX_TRY(rpma_mr_reg(peer, msgs.ptr, msgs.size, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			   &msg_mr));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &dst_mr, NULL));
	EX_TRY(rpma_mr_remote_get_size(dst_mr, &remote_size));
	if (remote_size < REGION_SIZE) {
		ex_msg("the server's region has only %zu bytes", remote_size);
		ret = EX_E_FAIL;
		goto out;
	}

	for (unsigned i = 0; i < CHUNKS; i++) {
		uint64_t off = CHUNK_OFFSET(i);
		struct persist_req req = {.offset = off,
					  .length = CHUNK_SIZE,
					  .op_id = 0xabc000 + i,
					  .last = i + 1 == CHUNKS};
		struct persist_resp resp;
		ex_fill(src.ptr + off, CHUNK_SIZE, CHUNK_SEED(i));

		EX_TRY(rpma_recv(conn, msg_mr, SLOT_RECV * MSG_SLOT, sizeof(resp), NULL));
		EX_TRY(rpma_write(conn, dst_mr, off, src_mr, off, CHUNK_SIZE,
				  RPMA_F_COMPLETION_ON_ERROR, NULL));
		memcpy(msgs.ptr + SLOT_SEND * MSG_SLOT, &req, sizeof(req));
		EX_TRY(rpma_send(conn, msg_mr, SLOT_SEND * MSG_SLOT, sizeof(req),
				 RPMA_F_COMPLETION_ALWAYS, NULL));

		/* the send's completion and the answer, in either order */
		bool sent = false, answered = false;
		while (!sent || !answered) {
			struct ibv_wc wc;
			EX_CHECK(ex_wait_wc(cq, &wc));
			if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && !sent) {
				sent = true;
				continue;
			}
			EX_CHECK(ex_check_wc(&wc, IBV_WC_RECV, NULL));
			if (answered || wc.byte_len != sizeof(resp)) {
				ex_msg("an unexpected answer");
				ret = EX_E_FAIL;
				goto out;
			}
			answered = true;
		}
		memcpy(&resp, msgs.ptr + SLOT_RECV * MSG_SLOT, sizeof(resp));
		if (resp.op_id != req.op_id || resp.status != 0) {
			ex_msg("chunk %u: answer op_id %" PRIx64 " status %d (asked %" PRIx64 ")",
			       i, resp.op_id, resp.status, req.op_id);
			ret = EX_E_FAIL;
			goto out;
		}
	}
	printf("the server persisted %d chunks of %d bytes on request\n", CHUNKS, CHUNK_SIZE);

	/* read everything back into a clean buffer and compare */
	memset(src.ptr, 0, src.size);
	static const int read_ctx = 1;
	EX_TRY(rpma_read(conn, src_mr, 0, dst_mr, 0, REGION_SIZE, RPMA_F_COMPLETION_ALWAYS,
			 &read_ctx));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, &read_ctx, NULL));
	for (unsigned i = 0; i < CHUNKS; i++)
		EX_CHECK(ex_verify(src.ptr + CHUNK_OFFSET(i), CHUNK_SIZE, CHUNK_SEED(i),
				   "a chunk read back"));
	printf("verified: all %d chunks read back intact\n", CHUNKS);
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (dst_mr)
		(void)rpma_mr_remote_delete(&dst_mr);
	if (src_mr)
		(void)rpma_mr_dereg(&src_mr);
	if (msg_mr)
		(void)rpma_mr_dereg(&msg_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&src);
	ex_mem_close(&msgs);
	return ret ? 1 : 0;
}
