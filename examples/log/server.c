/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- log example, passive side: the library's messages go to the
 * example's own logging function
 *
 * usage: server <addr> <port>
 *
 * While the connection is being set up the main threshold is NOTICE, so the
 * library's milestones (listening, the connection's events) reach the
 * function.  Then the threshold is raised to WARNING: the teardown's
 * notices must no longer arrive.
 */

#include "logger.h"

/* main -- a connection with the custom logging function installed */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	unsigned before = 0, after = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(logger_install());
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, NULL, 0, 0, NULL, &conn));

	before = notices();
	EX_CHECK(set_threshold(RPMA_LOG_LEVEL_WARNING));
	after = __atomic_load_n(&Count[RPMA_LOG_LEVEL_NOTICE], __ATOMIC_RELAXED);
	EX_CHECK(ex_await_close(&conn));
	EX_TRY(rpma_ep_shutdown(&ep));

	EX_CHECK(logger_check(before, after));
	printf("verified: %u messages at the NOTICE threshold, none above the threshold\n", before);

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (peer)
		(void)rpma_peer_delete(&peer);
	logger_restore();
	return ret ? 1 : 0;
}
