/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop-client.c -- the active side of the interoperability test: it
 * connects, takes the server's descriptors from the private data, writes,
 * flushes (persistent if the server declared Direct Write to PMem, else to
 * visibility), reads back, writes atomically, exchanges messages and writes
 * with immediate data.
 *
 * Usage: interop-client <addr> <port>
 */

#include "interop.h"

#ifdef LIBRPMA_PROVIDER_PLUGGABLE
/* ours keeps the librpma 1.2 opcodes on the native paths too (rpma_atomic_write(3)) */
#define IO_WC_FLUSH	   IBV_WC_RDMA_READ
#define IO_WC_ATOMIC_WRITE IBV_WC_RDMA_WRITE
#else
/* upstream 1.3: completion opcodes of rdma-core >= 45, not named in older headers */
#define IO_WC_FLUSH	   ((enum ibv_wc_opcode)8)
#define IO_WC_ATOMIC_WRITE ((enum ibv_wc_opcode)9)
#endif

static const char *const who = "client";

/* wait_reply -- the server's next message must be text */
static void wait_reply(struct rpma_cq *cq, struct io_stash *st, const void *ctx, const char *slot,
		       const char *text)
{
	(void)io_expect(who, cq, st, ctx, IBV_WC_RECV, IBV_WC_RECV);
	if (strncmp(slot, text, IO_MSG_SIZE) != 0) {
		fprintf(stderr, "client: FAILED: server said '%.*s', expected '%s'\n", IO_MSG_SIZE,
			slot, text);
		exit(1);
	}
	printf("client: server says '%s'\n", slot);
}

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1], *port = argv[2];
	alarm(IO_TIMEOUT_S);

	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	IO_CHECK(who, rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
	IO_CHECK(who, rpma_peer_new(ctx, &peer));

	/* local data: [0, 4096) write sources, [4096, 8192) read destination */
	unsigned char *buf = io_alloc(who, 2 * IO_REGION_SIZE);
	struct rpma_mr_local *mr = NULL;
	IO_CHECK(who, rpma_mr_reg(peer, buf, 2 * IO_REGION_SIZE,
				  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr));
	for (size_t i = 0; i < IO_WRITE_LEN; i++)
		buf[IO_WRITE_OFF + i] = io_pattern(i, 1);
	for (size_t i = 0; i < IO_IMM_LEN; i++)
		buf[IO_IMM_OFF + i] = io_pattern(i, 2);
	/* messages: slot 0 sends, slots 1 and 2 receive */
	char *msg = io_alloc(who, 3 * IO_MSG_SIZE);
	struct rpma_mr_local *msg_mr = NULL;
	IO_CHECK(who, rpma_mr_reg(peer, msg, 3 * IO_MSG_SIZE,
				  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr));

	struct rpma_conn_cfg *cfg = NULL;
	IO_CHECK(who, rpma_conn_cfg_new(&cfg));
	IO_CHECK(who, rpma_conn_cfg_set_sq_size(cfg, 16));
	IO_CHECK(who, rpma_conn_cfg_set_cq_size(cfg, 16));
	IO_CHECK(who, rpma_conn_cfg_set_rq_size(cfg, 4));
	struct rpma_conn_req *req = NULL;
	IO_CHECK(who, rpma_conn_req_new(peer, addr, port, cfg, &req));
	IO_CHECK(who, rpma_conn_req_recv(req, msg_mr, IO_MSG_SIZE, IO_MSG_SIZE, IO_CTX_RECV0));

	char hello[] = IO_CLIENT_HELLO;
	struct rpma_conn_private_data hpd = {hello, (uint8_t)sizeof(hello)};
	struct rpma_conn *conn = NULL;
	IO_CHECK(who, rpma_conn_req_connect(&req, &hpd, &conn));
	io_expect_event(who, conn, RPMA_CONN_ESTABLISHED);
	printf("client: connected\n");

	/* the server's descriptors */
	struct rpma_conn_private_data pd = {NULL, 0};
	IO_CHECK(who, rpma_conn_get_private_data(conn, &pd));
	const struct io_server_pdata *sp = pd.ptr;
	if (sp == NULL || pd.len < sizeof(*sp) || memcmp(sp->magic, IO_SERVER_MAGIC, 4) != 0 ||
	    (size_t)sp->mr_desc_size + sp->pcfg_desc_size > sizeof(sp->descriptors)) {
		fprintf(stderr, "client: FAILED: server private data (%u bytes) is not ours\n",
			(unsigned)pd.len);
		return 1;
	}
	struct rpma_mr_remote *rmr = NULL;
	struct rpma_peer_cfg *rpcfg = NULL;
	IO_CHECK(who, rpma_mr_remote_from_descriptor(sp->descriptors, sp->mr_desc_size, &rmr));
	IO_CHECK(who, rpma_peer_cfg_from_descriptor(sp->descriptors + sp->mr_desc_size,
						    sp->pcfg_desc_size, &rpcfg));
	IO_CHECK(who, rpma_conn_apply_remote_peer_cfg(conn, rpcfg));
	size_t rsize = 0;
	int flush_types = 0;
	bool dw2pm = false;
	IO_CHECK(who, rpma_mr_remote_get_size(rmr, &rsize));
	IO_CHECK(who, rpma_mr_remote_get_flush_type(rmr, &flush_types));
	IO_CHECK(who, rpma_peer_cfg_get_direct_write_to_pmem(rpcfg, &dw2pm));
	enum rpma_flush_type ftype =
		dw2pm ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
	printf("client: remote region %zu bytes, flush types 0x%x, direct write to pmem %s -> "
	       "flush %s\n",
	       rsize, flush_types, dw2pm ? "yes" : "no", dw2pm ? "PERSISTENT" : "VISIBILITY");
	if (rsize != IO_REGION_SIZE) {
		fprintf(stderr, "client: FAILED: remote size %zu\n", rsize);
		return 1;
	}

	struct rpma_cq *cq = NULL;
	IO_CHECK(who, rpma_conn_get_cq(conn, &cq));
	struct io_stash st = {.n = 0};

	/* write (completion only on error) + flush */
	IO_CHECK(who, rpma_write(conn, rmr, IO_WRITE_OFF, mr, IO_WRITE_OFF, IO_WRITE_LEN,
				 RPMA_F_COMPLETION_ON_ERROR, IO_CTX_WRITE));
	IO_CHECK(who, rpma_flush(conn, rmr, IO_WRITE_OFF, IO_WRITE_LEN, ftype,
				 RPMA_F_COMPLETION_ALWAYS, IO_CTX_FLUSH));
	(void)io_expect(who, cq, &st, IO_CTX_FLUSH, IBV_WC_RDMA_READ, IO_WC_FLUSH);
	printf("client: write + flush done\n");

	/* read back */
	unsigned char *back = buf + IO_REGION_SIZE;
	IO_CHECK(who, rpma_read(conn, mr, IO_REGION_SIZE, rmr, IO_WRITE_OFF, IO_WRITE_LEN,
				RPMA_F_COMPLETION_ALWAYS, IO_CTX_READ));
	struct ibv_wc wc = io_expect(who, cq, &st, IO_CTX_READ, IBV_WC_RDMA_READ, IBV_WC_RDMA_READ);
	if (memcmp(back, buf + IO_WRITE_OFF, IO_WRITE_LEN) != 0) {
		fprintf(stderr, "client: FAILED: the data read back differs\n");
		return 1;
	}
	printf("client: read back %u bytes, equal\n", wc.byte_len);

	/* atomic write + flush */
	char word[8];
	memcpy(word, "ATOMIC-8", 8);
	IO_CHECK(who, rpma_atomic_write(conn, rmr, IO_ATOMIC_OFF, word, RPMA_F_COMPLETION_ALWAYS,
					IO_CTX_ATOMIC));
	memset(word, 0, sizeof(word)); /* the library copied it */
	(void)io_expect(who, cq, &st, IO_CTX_ATOMIC, IBV_WC_RDMA_WRITE, IO_WC_ATOMIC_WRITE);
	IO_CHECK(who, rpma_flush(conn, rmr, IO_ATOMIC_OFF, 8, ftype, RPMA_F_COMPLETION_ALWAYS,
				 IO_CTX_FLUSH2));
	(void)io_expect(who, cq, &st, IO_CTX_FLUSH2, IBV_WC_RDMA_READ, IO_WC_FLUSH);
	printf("client: atomic write + flush done\n");

	/* messages: "check", the server answers after looking at its region */
	IO_CHECK(who, rpma_recv(conn, msg_mr, 2 * IO_MSG_SIZE, IO_MSG_SIZE, IO_CTX_RECV1));
	snprintf(msg, IO_MSG_SIZE, "check");
	IO_CHECK(who,
		 rpma_send(conn, msg_mr, 0, IO_MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, IO_CTX_SEND));
	(void)io_expect(who, cq, &st, IO_CTX_SEND, IBV_WC_SEND, IBV_WC_SEND);
	wait_reply(cq, &st, IO_CTX_RECV0, msg + IO_MSG_SIZE, "data ok");

	/* write with immediate data */
	IO_CHECK(who,
		 rpma_write_with_imm(conn, rmr, IO_IMM_OFF, mr, IO_IMM_OFF, IO_IMM_LEN,
				     RPMA_F_COMPLETION_ALWAYS, IO_IMM_VALUE, IO_CTX_WRITE_IMM));
	(void)io_expect(who, cq, &st, IO_CTX_WRITE_IMM, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
	printf("client: write with imm 0x%08x done\n", IO_IMM_VALUE);
	wait_reply(cq, &st, IO_CTX_RECV1, msg + 2 * IO_MSG_SIZE, "imm ok");

	IO_CHECK(who, rpma_conn_disconnect(conn));
	io_expect_event(who, conn, RPMA_CONN_CLOSED);
	IO_CHECK(who, rpma_conn_delete(&conn));
	printf("client: closed\n");

	IO_CHECK(who, rpma_mr_remote_delete(&rmr));
	IO_CHECK(who, rpma_peer_cfg_delete(&rpcfg));
	IO_CHECK(who, rpma_conn_cfg_delete(&cfg));
	IO_CHECK(who, rpma_mr_dereg(&msg_mr));
	IO_CHECK(who, rpma_mr_dereg(&mr));
	IO_CHECK(who, rpma_peer_delete(&peer));
	free(msg);
	free(buf);
	printf("client: PASS\n");
	return 0;
}
