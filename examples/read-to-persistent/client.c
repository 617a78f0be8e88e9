/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- read-to-persistent example, active side: offer a region for
 * the server to read and wait until the server has taken it
 *
 * usage: client <addr> <port>
 *
 * The source region's descriptor goes to the server as private data of the
 * connection request.  The server closes the connection once its copy is
 * persistent, so "closed" is this side's acknowledgement.
 */

#include <stdio.h>

#include "../common/common.h"

#define DATA_SIZE    12345
#define PATTERN_SEED 3

/* main -- register, connect with the descriptor, wait for the server to finish */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct ex_mem mem = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, DATA_SIZE, &mem));
	ex_fill(mem.ptr, DATA_SIZE, PATTERN_SEED);

	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	/* register exactly the data: the server learns the size from the descriptor */
	EX_TRY(rpma_mr_reg(peer, mem.ptr, DATA_SIZE, RPMA_MR_USAGE_READ_SRC, &src_mr));
	EX_CHECK(ex_pdata_pack(src_mr, NULL, &pd, &pdata));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, &pdata, &conn));
	printf("connected; offering %d bytes\n", DATA_SIZE);

	/* the server disconnects when its copy is durable */
	EX_CHECK(ex_await_close(&conn));
	printf("verified: the server took the data and closed the connection\n");

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (src_mr)
		(void)rpma_mr_dereg(&src_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
