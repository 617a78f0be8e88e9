/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- log example, active side: the same custom logging function
 * on the connecting side
 *
 * usage: client <addr> <port>
 *
 * The threshold is NOTICE while connecting and WARNING while disconnecting;
 * the client also makes one call with an invalid argument, whose error the
 * library may report to the function (errors pass any threshold above
 * DISABLED).
 */

#include "logger.h"

/* main -- a connection with the custom logging function installed */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_conn *conn = NULL;
	unsigned before = 0, after = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(logger_install());
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));

	before = notices();
	EX_CHECK(set_threshold(RPMA_LOG_LEVEL_WARNING));
	after = __atomic_load_n(&Count[RPMA_LOG_LEVEL_NOTICE], __ATOMIC_RELAXED);

	/* a deliberate mistake: the answer is RPMA_E_INVAL, perhaps with an error message */
	ret = rpma_conn_cfg_set_cq_size(NULL, 1);
	if (ret != RPMA_E_INVAL) {
		ex_msg("rpma_conn_cfg_set_cq_size(NULL) returned %d", ret);
		ret = EX_E_FAIL;
		goto out;
	}
	EX_CHECK(ex_close(&conn));

	EX_CHECK(logger_check(before, after));
	printf("verified: %u messages at the NOTICE threshold, none above the threshold\n", before);

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (peer)
		(void)rpma_peer_delete(&peer);
	logger_restore();
	return ret ? 1 : 0;
}
