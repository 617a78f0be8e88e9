/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- connection example, passive side: listen, accept one client,
 * exchange greetings as private data, wait for the client to disconnect
 *
 * usage: server <addr> <port>
 */

#include <stdio.h>
#include <string.h>

#include "../common/common.h"

#define SERVER_GREETING "greetings from the server"
#define CLIENT_GREETING "greetings from the client"

/* main -- the whole life of a connection as seen by the server */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data theirs;
	char greeting[] = SERVER_GREETING;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));

	/* the greeting travels with the acceptance; the NUL is sent as well */
	struct rpma_conn_private_data ours = {greeting, sizeof(greeting)};
	EX_CHECK(ex_accept(ep, NULL, NULL, 0, 0, &ours, &conn));

	/* the client's greeting came with its connection request */
	EX_TRY(rpma_conn_get_private_data(conn, &theirs));
	if (theirs.ptr == NULL || theirs.len < sizeof(CLIENT_GREETING) ||
	    memcmp(theirs.ptr, CLIENT_GREETING, sizeof(CLIENT_GREETING)) != 0) {
		ex_msg("the client's private data (%u bytes) is not its greeting", theirs.len);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: connected; the client says: %s\n", (char *)theirs.ptr);

	/* the client ends the connection: wait for that, then clean up */
	EX_CHECK(ex_await_close(&conn));
	printf("connection closed\n");

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (peer)
		(void)rpma_peer_delete(&peer);
	return ret ? 1 : 0;
}
