/* SPDX-License-Identifier: BSD-3-Clause */
/* server.c -- the README's minimal server: publish a region, print what a client wrote into it */
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		int r_ = (call);                                               \
		if (r_) {                                                      \
			fprintf(stderr, "%s: %s\n", #call, rpma_err_2str(r_)); \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* main -- listen on argv[1]:argv[2], accept one client, print the string it wrote */
int main(int argc, char *argv[])
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	enum rpma_conn_event ev;
	static char buf[4096], desc[64];
	size_t desc_size;
	if (argc != 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 2;
	}
	CHECK(rpma_utils_get_ibv_context(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	CHECK(rpma_mr_reg(peer, buf, sizeof(buf),
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size));
	CHECK(rpma_mr_get_descriptor(mr, desc));
	struct rpma_conn_private_data pdata = {desc, (uint8_t)desc_size};
	CHECK(rpma_ep_listen(peer, argv[1], argv[2], &ep));
	printf("listening on %s:%s\n", argv[1], argv[2]);
	fflush(stdout);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn));
	CHECK(rpma_conn_next_event(conn, &ev)); /* RPMA_CONN_ESTABLISHED */
	CHECK(rpma_conn_next_event(conn, &ev)); /* RPMA_CONN_CLOSED: the client is done */
	printf("the client wrote: %s\n", buf);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	return 0;
}
