/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- read-to-volatile example, active side: read the server's
 * region into local DRAM, in two reads (the halves, in reverse order), and
 * check the pattern
 *
 * usage: client <addr> <port>
 */

#include <stdio.h>
#include <stdlib.h>

#include "../common/common.h"

#define REGION_SIZE  (64 * 1024)
#define PATTERN_SEED 2

/* main -- connect, read, verify, disconnect */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	struct ex_mem mem = {0};
	size_t remote_size = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));

	/* what to read: the server's descriptor came as private data */
	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &src_mr, NULL));
	EX_TRY(rpma_mr_remote_get_size(src_mr, &remote_size));
	if (remote_size != REGION_SIZE) {
		ex_msg("the server's region has %zu bytes, expected %d", remote_size, REGION_SIZE);
		ret = EX_E_FAIL;
		goto out;
	}

	EX_CHECK(ex_mem_open(NULL, remote_size, &mem));
	EX_TRY(rpma_mr_reg(peer, mem.ptr, remote_size, RPMA_MR_USAGE_READ_DST, &dst_mr));
	EX_TRY(rpma_conn_get_cq(conn, &cq));

	/*
	 * Two reads; only the second asks for a completion.  Completions of one
	 * connection come in order, so when the second completes the first is
	 * done too (a failure of the first would still be reported).
	 */
	size_t half = remote_size / 2;
	static const int second = 2;
	EX_TRY(rpma_read(conn, dst_mr, half, src_mr, half, remote_size - half,
			 RPMA_F_COMPLETION_ON_ERROR, NULL));
	EX_TRY(rpma_read(conn, dst_mr, 0, src_mr, 0, half, RPMA_F_COMPLETION_ALWAYS, &second));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, &second, NULL));

	EX_CHECK(ex_verify(mem.ptr, remote_size, PATTERN_SEED, "the data read"));
	printf("verified: read %zu bytes from the server's DRAM\n", remote_size);

	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (src_mr)
		(void)rpma_mr_remote_delete(&src_mr);
	if (dst_mr)
		(void)rpma_mr_dereg(&dst_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
