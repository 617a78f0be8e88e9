/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- connection example, active side: connect with a greeting as
 * private data, check the server's greeting, disconnect
 *
 * usage: client <addr> <port>
 */

#include <stdio.h>
#include <string.h>

#include "../common/common.h"

#define SERVER_GREETING "greetings from the server"
#define CLIENT_GREETING "greetings from the client"

/* main -- the whole life of a connection as seen by the client */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data theirs;
	char greeting[] = CLIENT_GREETING;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));

	struct rpma_conn_private_data ours = {greeting, sizeof(greeting)};
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, &ours, &conn));

	/* the server's greeting arrived with the "established" event */
	EX_TRY(rpma_conn_get_private_data(conn, &theirs));
	if (theirs.ptr == NULL || theirs.len < sizeof(SERVER_GREETING) ||
	    memcmp(theirs.ptr, SERVER_GREETING, sizeof(SERVER_GREETING)) != 0) {
		ex_msg("the server's private data (%u bytes) is not its greeting", theirs.len);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: connected; the server says: %s\n", (char *)theirs.ptr);

	EX_CHECK(ex_close(&conn));
	printf("disconnected\n");

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (peer)
		(void)rpma_peer_delete(&peer);
	return ret ? 1 : 0;
}
