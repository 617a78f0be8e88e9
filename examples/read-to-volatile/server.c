/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- read-to-volatile example, passive side: expose a DRAM region
 * filled with a known pattern for the client to read
 *
 * usage: server <addr> <port>
 *
 * The region's descriptor travels to the client as private data of the
 * connection; the server itself takes no part in the reads (they are
 * one-sided) and only waits for the client to disconnect.
 */

#include <stdio.h>

#include "../common/common.h"

#define REGION_SIZE  (64 * 1024)
#define PATTERN_SEED 2

/* main -- register, publish, wait */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct ex_mem mem = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, REGION_SIZE, &mem));
	ex_fill(mem.ptr, REGION_SIZE, PATTERN_SEED);

	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	/* READ_SRC: the peer may read from it, nothing else */
	EX_TRY(rpma_mr_reg(peer, mem.ptr, REGION_SIZE, RPMA_MR_USAGE_READ_SRC, &mr));
	EX_CHECK(ex_pdata_pack(mr, NULL, &pd, &pdata));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, NULL, 0, 0, &pdata, &conn));
	printf("client connected; serving %d bytes of DRAM\n", REGION_SIZE);
	EX_CHECK(ex_await_close(&conn));
	printf("client gone\n");

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
