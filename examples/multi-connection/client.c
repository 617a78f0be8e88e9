/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- multi-connection example, one of the clients: publish a name,
 * receive a greeting written into this process's memory by the server
 *
 * usage: client <addr> <port>
 *
 * The client's name is "client-<pid>".  The server reads it, writes the
 * greeting back and then sends "done"; a send is delivered after the write
 * that preceded it on the connection, so when "done" arrives the greeting is
 * in place.
 */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/common.h"
#include "proto.h"

/* main -- connect, wait for "done", check the greeting */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ex_mem mem = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	struct ibv_wc wc;
	char name[NAME_SIZE], expected[GREETING_SIZE];
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_mem_open(NULL, CLIENT_REGION_SIZE, &mem));
	snprintf(name, sizeof(name), "client-%ld", (long)getpid());
	memcpy(mem.ptr + NAME_OFFSET, name, strlen(name) + 1);
	snprintf(expected, sizeof(expected), GREETING_FMT, name);

	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_TRY(rpma_mr_reg(peer, mem.ptr, CLIENT_REGION_SIZE,
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV,
			   &mr));
	EX_CHECK(ex_pdata_pack(mr, NULL, &pd, &pdata));
	/* the receive for "done" is posted before the server can send it */
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, mr, MSG_OFFSET, MSG_SIZE, &pdata, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	printf("%s connected\n", name);

	EX_CHECK(ex_expect_wc(cq, IBV_WC_RECV, NULL, &wc));
	uint32_t done;
	memcpy(&done, mem.ptr + MSG_OFFSET, sizeof(done));
	if (wc.byte_len != sizeof(done) || done != DONE_MAGIC) {
		ex_msg("the server's message is not \"done\"");
		ret = EX_E_FAIL;
		goto out;
	}
	char *greeting = mem.ptr + GREETING_OFFSET;
	if (memchr(greeting, '\0', GREETING_SIZE) == NULL || strcmp(greeting, expected) != 0) {
		ex_msg("the greeting in memory is not \"%s\"", expected);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: %s found \"%s\" in its memory\n", name, greeting);
	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
