/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- write-flush example, active side: write into the server's
 * region, flush it as far as the server allows, read it back and compare
 *
 * usage: client <addr> <port>
 *
 * The flush type follows the server's declaration: after
 * rpma_conn_apply_remote_peer_cfg() the connection knows whether the server
 * writes directly to PMem; if it does, RPMA_FLUSH_TYPE_PERSISTENT is used,
 * otherwise RPMA_FLUSH_TYPE_VISIBILITY (a persistent flush would be refused
 * with RPMA_E_NOSUPP, which this example also shows).  A transport that
 * cannot make remote writes persistent refuses the persistent flush with
 * RPMA_E_NOSUPP too; the example then flushes to visibility and says so.
 */

#include <stdio.h>

#include "../common/common.h"

#define DATA_OFFSET  1000
#define DATA_SIZE    20000
#define PATTERN_SEED 4

/* main -- connect, write, flush, read back, compare */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL, *back_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	struct ex_mem src = {0}, back = {0};
	bool dw2pmem = false;
	int flush_types = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, DATA_SIZE, &src));
	EX_CHECK(ex_mem_open(NULL, DATA_SIZE, &back));
	ex_fill(src.ptr, DATA_SIZE, PATTERN_SEED);

	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, src.ptr, DATA_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	EX_TRY(rpma_mr_reg(peer, back.ptr, DATA_SIZE, RPMA_MR_USAGE_READ_DST, &back_mr));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &dst_mr, &pcfg));
	if (pcfg == NULL) {
		ex_msg("the server sent no peer configuration");
		ret = EX_E_FAIL;
		goto out;
	}
	EX_TRY(rpma_mr_remote_get_flush_type(dst_mr, &flush_types));
	EX_TRY(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw2pmem));

	/* before the server's declaration is applied a persistent flush is never allowed */
	ret = rpma_flush(conn, dst_mr, DATA_OFFSET, DATA_SIZE, RPMA_FLUSH_TYPE_PERSISTENT,
			 RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret != RPMA_E_NOSUPP) {
		ex_msg("a persistent flush before rpma_conn_apply_remote_peer_cfg() returned %d",
		       ret);
		ret = EX_E_FAIL;
		goto out;
	}
	EX_TRY(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	enum rpma_flush_type type = RPMA_FLUSH_TYPE_VISIBILITY;
	if (dw2pmem && (flush_types & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		type = RPMA_FLUSH_TYPE_PERSISTENT;
	printf("the server %s direct write to PMem: flushing to %s\n",
	       dw2pmem ? "declares" : "does not declare",
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistence" : "visibility");

	/*
	 * The write asks for a completion only if it fails; the flush that
	 * follows it on the same connection completes after it, so one
	 * completion covers both.
	 */
	static const int flush_ctx = 1, read_ctx = 2;
	EX_TRY(rpma_write(conn, dst_mr, DATA_OFFSET, src_mr, 0, DATA_SIZE,
			  RPMA_F_COMPLETION_ON_ERROR, NULL));
	EX_CHECK(ex_flush(conn, dst_mr, DATA_OFFSET, DATA_SIZE, &type, RPMA_F_COMPLETION_ALWAYS,
			  &flush_ctx));
	EX_CHECK(ex_expect_wc(cq, EX_ANY_OPCODE, &flush_ctx, NULL));

	/* read the range back and compare */
	EX_TRY(rpma_read(conn, back_mr, 0, dst_mr, DATA_OFFSET, DATA_SIZE, RPMA_F_COMPLETION_ALWAYS,
			 &read_ctx));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, &read_ctx, NULL));
	EX_CHECK(ex_verify(back.ptr, DATA_SIZE, PATTERN_SEED, "the data read back"));
	printf("verified: %d bytes written, flushed to %s and read back\n", DATA_SIZE,
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistence" : "visibility");

	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (dst_mr)
		(void)rpma_mr_remote_delete(&dst_mr);
	if (pcfg)
		(void)rpma_peer_cfg_delete(&pcfg);
	if (src_mr)
		(void)rpma_mr_dereg(&src_mr);
	if (back_mr)
		(void)rpma_mr_dereg(&back_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&src);
	ex_mem_close(&back);
	return ret ? 1 : 0;
}
