/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- gpspm example, passive side: persist on request the ranges the
 * client has written
 *
 * usage: server <addr> <port> [<pmem-file>]
 *
 * The region (the file, or DRAM) is registered for remote writes and reads
 * only: no flush usage, because the client never flushes remotely.  Every
 * request is checked against the region before the server persists it.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "proto.h"

#define SLOT_RECV 0
#define SLOT_SEND 1

/* main -- accept, then serve persist requests until the client's last one */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL, *msg_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem mem = {0}, msgs = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	struct persist_req req;
	unsigned served = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<pmem-file>]"));
	EX_CHECK(ex_mem_open(argc > 3 ? argv[3] : NULL, REGION_SIZE, &mem));
	memset(mem.ptr, 0, mem.size);
	EX_CHECK(ex_mem_persist(&mem, 0, mem.size));
	printf("region: %s\n", ex_mem_kind_str(&mem));
	EX_CHECK(ex_mem_open(NULL, 2 * MSG_SLOT, &msgs));

	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, mem.ptr, mem.size,
			   RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr));
	EX_TRY(rpma_mr_reg(peer, msgs.ptr, msgs.size, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			   &msg_mr));
	EX_CHECK(ex_pdata_pack(mr, NULL, &pd, &pdata));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, msg_mr, SLOT_RECV * MSG_SLOT, sizeof(req), &pdata, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	struct ibv_wc wc;
	bool have_next = false; /* the next request's completion came in already */
	do {
		struct persist_resp resp;
		if (!have_next)
			EX_CHECK(ex_expect_wc(cq, IBV_WC_RECV, NULL, &wc));
		have_next = false;
		if (wc.byte_len != sizeof(req)) {
			ex_msg("a request of %u bytes", wc.byte_len);
			ret = EX_E_FAIL;
			goto out;
		}
		memcpy(&req, msgs.ptr + SLOT_RECV * MSG_SLOT, sizeof(req));
		if (!req.last)
			EX_TRY(rpma_recv(conn, msg_mr, SLOT_RECV * MSG_SLOT, sizeof(req), NULL));

		memset(&resp, 0, sizeof(resp));
		resp.op_id = req.op_id;
		if (req.offset > mem.size || req.length > mem.size - req.offset) {
			ex_msg("refusing to persist %" PRIu64 "+%" PRIu64 ": outside the region",
			       req.offset, req.length);
			resp.status = -1;
		} else if (ex_mem_persist(&mem, req.offset, req.length)) {
			resp.status = -2;
		}
		memcpy(msgs.ptr + SLOT_SEND * MSG_SLOT, &resp, sizeof(resp));
		EX_TRY(rpma_send(conn, msg_mr, SLOT_SEND * MSG_SLOT, sizeof(resp),
				 RPMA_F_COMPLETION_ALWAYS, NULL));
		/* the client's next request may overtake our send's completion */
		EX_CHECK(ex_wait_send(cq, &wc, &have_next));
		if (resp.status == 0)
			served++;
	} while (!req.last);

	EX_CHECK(ex_await_close(&conn));

	/* what is persistent now must be exactly what the client wrote */
	for (unsigned i = 0; i < CHUNKS; i++)
		EX_CHECK(ex_verify(mem.ptr + CHUNK_OFFSET(i), CHUNK_SIZE, CHUNK_SEED(i),
				   "a persisted chunk"));
	if (served != CHUNKS) {
		ex_msg("persisted %u ranges, expected %d", served, CHUNKS);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: %u ranges persisted on request and intact\n", served);

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (msg_mr)
		(void)rpma_mr_dereg(&msg_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	ex_mem_close(&msgs);
	return ret ? 1 : 0;
}
