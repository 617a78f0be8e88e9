/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop-server.c -- the passive side of the interoperability test: it
 * registers a region, hands its MR descriptor and peer-config descriptor to
 * the client as private data, then checks what the client wrote into it.
 *
 * Usage: interop-server <addr> <port> <ready-file> [dw2pm]
 * The ready file is created once the server listens.  "dw2pm" declares
 * Direct Write to PMem, so the client flushes to persistence.
 * INTEROP_DAX=/dev/daxX.Y puts the region on that device-DAX device
 * (persistent-memory pages: what native persistent flush access needs)
 * instead of ordinary memory.
 */

#include <fcntl.h>
#include <sys/mman.h>

#include "interop.h"

/* the mapping of a device-DAX device: its alignment (2 MiB) at least */
#define DAX_MAP_SIZE (2u << 20)

static const char *const who = "server";

/* check_region -- compare part of the region with the expected bytes */
static void check_region(const unsigned char *got, const unsigned char *want, size_t len,
			 const char *what)
{
	for (size_t i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			fprintf(stderr, "server: FAILED: %s: byte %zu is 0x%02x, expected 0x%02x\n",
				what, i, got[i], want[i]);
			exit(1);
		}
	}
	printf("server: %s verified\n", what);
}

/* reply -- send a verdict message from slot 0 of the message buffer */
static void reply(struct rpma_conn *conn, struct rpma_cq *cq, struct io_stash *st,
		  struct rpma_mr_local *msg_mr, char *msg, const char *text)
{
	snprintf(msg, IO_MSG_SIZE, "%s", text);
	IO_CHECK(who,
		 rpma_send(conn, msg_mr, 0, IO_MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, IO_CTX_SEND));
	(void)io_expect(who, cq, st, IO_CTX_SEND, IBV_WC_SEND, IBV_WC_SEND);
}

int main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <addr> <port> <ready-file> [dw2pm]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1], *port = argv[2], *ready = argv[3];
	bool dw2pm = argc > 4 && strcmp(argv[4], "dw2pm") == 0;
	alarm(IO_TIMEOUT_S);

	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	IO_CHECK(who, rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	IO_CHECK(who, rpma_peer_new(ctx, &peer));

	/* the region the client writes, reads and flushes */
	const char *dax = getenv("INTEROP_DAX");
	unsigned char *region;
	if (dax != NULL && dax[0] != '\0') {
		int fd = open(dax, O_RDWR);
		void *p = fd < 0 ? MAP_FAILED
				 : mmap(NULL, DAX_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
					0);
		if (p == MAP_FAILED) {
			perror(dax);
			return 1;
		}
		close(fd);
		region = p;
		memset(region, 0, IO_REGION_SIZE);
		printf("server: region on device DAX\n");
	} else {
		region = io_alloc(who, IO_REGION_SIZE);
	}
	struct rpma_mr_local *mr = NULL;
	IO_CHECK(who, rpma_mr_reg(peer, region, IO_REGION_SIZE,
				  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
					  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
					  RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
				  &mr));
	/* messages: slot 0 sends, slots 1 and 2 receive */
	char *msg = io_alloc(who, 3 * IO_MSG_SIZE);
	struct rpma_mr_local *msg_mr = NULL;
	IO_CHECK(who, rpma_mr_reg(peer, msg, 3 * IO_MSG_SIZE,
				  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr));

	/* the private data: both descriptors */
	struct io_server_pdata sp;
	memset(&sp, 0, sizeof(sp));
	memcpy(sp.magic, IO_SERVER_MAGIC, 4);
	size_t mr_desc_size = 0, pcfg_desc_size = 0;
	struct rpma_peer_cfg *pcfg = NULL;
	IO_CHECK(who, rpma_peer_cfg_new(&pcfg));
	IO_CHECK(who, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, dw2pm));
	IO_CHECK(who, rpma_mr_get_descriptor_size(mr, &mr_desc_size));
	IO_CHECK(who, rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size));
	if (mr_desc_size + pcfg_desc_size > sizeof(sp.descriptors)) {
		fprintf(stderr, "server: FAILED: descriptors of %zu + %zu bytes\n", mr_desc_size,
			pcfg_desc_size);
		return 1;
	}
	IO_CHECK(who, rpma_mr_get_descriptor(mr, sp.descriptors));
	IO_CHECK(who, rpma_peer_cfg_get_descriptor(pcfg, sp.descriptors + mr_desc_size));
	sp.mr_desc_size = (uint8_t)mr_desc_size;
	sp.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	printf("server: descriptors %zu + %zu bytes, direct write to pmem %s\n", mr_desc_size,
	       pcfg_desc_size, dw2pm ? "yes" : "no");

	struct rpma_ep *ep = NULL;
	IO_CHECK(who, rpma_ep_listen(peer, addr, port, &ep));
	FILE *f = fopen(ready, "w");
	if (f == NULL) {
		perror(ready);
		return 1;
	}
	fclose(f);

	struct rpma_conn_cfg *cfg = NULL;
	IO_CHECK(who, rpma_conn_cfg_new(&cfg));
	IO_CHECK(who, rpma_conn_cfg_set_rq_size(cfg, 4));
	IO_CHECK(who, rpma_conn_cfg_set_cq_size(cfg, 16));
	struct rpma_conn_req *req = NULL;
	IO_CHECK(who, rpma_ep_next_conn_req(ep, cfg, &req));

	/* the client's private data */
	struct rpma_conn_private_data cpd = {NULL, 0};
	IO_CHECK(who, rpma_conn_req_get_private_data(req, &cpd));
	if (cpd.ptr == NULL || cpd.len < sizeof(IO_CLIENT_HELLO) ||
	    memcmp(cpd.ptr, IO_CLIENT_HELLO, sizeof(IO_CLIENT_HELLO)) != 0) {
		fprintf(stderr, "server: FAILED: client private data (%u bytes) is not '%s'\n",
			(unsigned)cpd.len, IO_CLIENT_HELLO);
		return 1;
	}
	printf("server: client private data '%s'\n", (const char *)cpd.ptr);

	/* both receives are posted before the connection exists */
	IO_CHECK(who, rpma_conn_req_recv(req, msg_mr, IO_MSG_SIZE, IO_MSG_SIZE, IO_CTX_RECV0));
	IO_CHECK(who, rpma_conn_req_recv(req, msg_mr, 2 * IO_MSG_SIZE, IO_MSG_SIZE, IO_CTX_RECV1));

	struct rpma_conn_private_data pd = {&sp, (uint8_t)sizeof(sp)};
	struct rpma_conn *conn = NULL;
	IO_CHECK(who, rpma_conn_req_connect(&req, &pd, &conn));
	io_expect_event(who, conn, RPMA_CONN_ESTABLISHED);
	printf("server: connected\n");

	struct rpma_cq *cq = NULL;
	IO_CHECK(who, rpma_conn_get_cq(conn, &cq));
	struct io_stash st = {.n = 0};

	/* 1. the client's "check" message: the written data must be here */
	struct ibv_wc wc = io_expect(who, cq, &st, IO_CTX_RECV0, IBV_WC_RECV, IBV_WC_RECV);
	char *m = msg + IO_MSG_SIZE;
	if (strncmp(m, "check", IO_MSG_SIZE) != 0) {
		fprintf(stderr, "server: FAILED: message '%.*s' instead of 'check'\n", IO_MSG_SIZE,
			m);
		return 1;
	}
	printf("server: message '%s' (%u bytes)\n", m, wc.byte_len);
	unsigned char want[IO_WRITE_LEN];
	for (size_t i = 0; i < IO_WRITE_LEN; i++)
		want[i] = io_pattern(i, 1);
	check_region(region + IO_WRITE_OFF, want, IO_WRITE_LEN, "written data");
	check_region(region + IO_ATOMIC_OFF, (const unsigned char *)"ATOMIC-8", 8, "atomic write");
	reply(conn, cq, &st, msg_mr, msg, "data ok");

	/* 2. the write with immediate data consumes the second receive */
	wc = io_expect(who, cq, &st, IO_CTX_RECV1, IBV_WC_RECV_RDMA_WITH_IMM,
		       IBV_WC_RECV_RDMA_WITH_IMM);
	if (!(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != IO_IMM_VALUE) {
		fprintf(stderr, "server: FAILED: immediate data 0x%08x (flags 0x%x)\n",
			ntohl(wc.imm_data), wc.wc_flags);
		return 1;
	}
	printf("server: immediate data 0x%08x\n", ntohl(wc.imm_data));
	unsigned char want_imm[IO_IMM_LEN];
	for (size_t i = 0; i < IO_IMM_LEN; i++)
		want_imm[i] = io_pattern(i, 2);
	check_region(region + IO_IMM_OFF, want_imm, IO_IMM_LEN, "data written with imm");
	reply(conn, cq, &st, msg_mr, msg, "imm ok");

	/* the client disconnects */
	io_expect_event(who, conn, RPMA_CONN_CLOSED);
	IO_CHECK(who, rpma_conn_disconnect(conn));
	IO_CHECK(who, rpma_conn_delete(&conn));
	printf("server: closed\n");

	IO_CHECK(who, rpma_conn_cfg_delete(&cfg));
	IO_CHECK(who, rpma_ep_shutdown(&ep));
	IO_CHECK(who, rpma_peer_cfg_delete(&pcfg));
	IO_CHECK(who, rpma_mr_dereg(&msg_mr));
	IO_CHECK(who, rpma_mr_dereg(&mr));
	IO_CHECK(who, rpma_peer_delete(&peer));
	free(msg);
	if (dax != NULL && dax[0] != '\0')
		(void)munmap(region, DAX_MAP_SIZE);
	else
		free(region);
	printf("server: PASS\n");
	return 0;
}
