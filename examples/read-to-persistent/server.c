/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- read-to-persistent example, passive side: read the client's
 * data straight into a local persistent region and make it durable
 *
 * usage: server <addr> <port> [<pmem-file>]
 *
 * With <pmem-file> the destination is that file (mapped with libpmem2 when
 * the examples are built with it, else with mmap); without it, DRAM.  The
 * client publishes its source region in the connection's private data; the
 * server reads it, persists the range it read, checks the contents and then
 * ends the connection itself.
 */

#include <stdio.h>

#include "../common/common.h"

#define DATA_SIZE    12345 /* deliberately not a multiple of any page or cache line */
#define DATA_OFFSET  4096
#define REGION_SIZE  (DATA_OFFSET + DATA_SIZE)
#define PATTERN_SEED 3

/* main -- accept, read into the persistent region, persist, verify, disconnect */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	struct ex_mem mem = {0};
	size_t src_size = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<pmem-file>]"));
	EX_CHECK(ex_mem_open(argc > 3 ? argv[3] : NULL, REGION_SIZE, &mem));
	printf("destination: %s\n", ex_mem_kind_str(&mem));

	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	/* READ_DST: local reads land here */
	EX_TRY(rpma_mr_reg(peer, mem.ptr, mem.size, RPMA_MR_USAGE_READ_DST, &dst_mr));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, NULL, 0, 0, NULL, &conn));

	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &src_mr, NULL));
	EX_TRY(rpma_mr_remote_get_size(src_mr, &src_size));
	if (src_size != DATA_SIZE) {
		ex_msg("the client offers %zu bytes, expected %d", src_size, DATA_SIZE);
		ret = EX_E_FAIL;
		goto out;
	}

	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_read(conn, dst_mr, DATA_OFFSET, src_mr, 0, src_size, RPMA_F_COMPLETION_ALWAYS,
			 NULL));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, NULL, NULL));

	/* the data is in our memory now; make it durable before telling anyone */
	EX_CHECK(ex_mem_persist(&mem, DATA_OFFSET, src_size));
	EX_CHECK(ex_verify(mem.ptr + DATA_OFFSET, src_size, PATTERN_SEED, "the data read"));
	printf("verified: read and persisted %zu bytes at offset %d\n", src_size, DATA_OFFSET);

	/* this side is done: the server ends the connection */
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (src_mr)
		(void)rpma_mr_remote_delete(&src_mr);
	if (dst_mr)
		(void)rpma_mr_dereg(&dst_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
