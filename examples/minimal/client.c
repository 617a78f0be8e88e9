/* SPDX-License-Identifier: BSD-3-Clause */
/* client.c -- the README's minimal client: write a string into the server's region and flush it */
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		int r_ = (call);                                               \
		if (r_) {                                                      \
			fprintf(stderr, "%s: %s\n", #call, rpma_err_2str(r_)); \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* main -- connect to argv[1]:argv[2], write argv[3] at offset 0, flush it, disconnect */
int main(int argc, char *argv[])
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_mr_local *src;
	struct rpma_mr_remote *dst;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	enum rpma_conn_event ev;
	int n, ret;
	static char buf[4096];
	if (argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> <text>\n", argv[0]);
		return 2;
	}
	snprintf(buf, sizeof(buf), "%s", argv[3]);
	CHECK(rpma_utils_get_ibv_context(argv[1], RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC, &src));
	CHECK(rpma_conn_req_new(peer, argv[1], argv[2], NULL, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	CHECK(rpma_conn_next_event(conn, &ev));		 /* RPMA_CONN_ESTABLISHED */
	CHECK(rpma_conn_get_private_data(conn, &pdata)); /* the server's region descriptor */
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &dst));
	CHECK(rpma_write(conn, dst, 0, src, 0, strlen(buf) + 1, RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(conn, dst, 0, strlen(buf) + 1, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, NULL));
	CHECK(rpma_conn_get_cq(conn, &cq));
	do { /* the flush completes after the write: one completion covers both */
		CHECK(rpma_cq_wait(cq));
		ret = rpma_cq_get_wc(cq, 1, &wc, &n);
	} while (ret == RPMA_E_NO_COMPLETION);
	CHECK(ret);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "the flush failed: ibv_wc_status %d\n", (int)wc.status);
		return 1;
	}
	printf("wrote and flushed %zu bytes\n", strlen(buf) + 1);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_next_event(conn, &ev)); /* RPMA_CONN_CLOSED */
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_mr_remote_delete(&dst));
	CHECK(rpma_mr_dereg(&src));
	CHECK(rpma_peer_delete(&peer));
	return 0;
}
