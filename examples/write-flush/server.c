/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- write-flush example, passive side: a region the client writes
 * into and flushes, and the server's declaration of what a flush can promise
 *
 * usage: server <addr> <port> [<pmem-file>]
 *
 * The region (the file, or DRAM) accepts remote writes, reads and both flush
 * types.  Its descriptor and the server's peer configuration travel as
 * private data.  The peer configuration says whether the server writes
 * inbound data directly to PMem (no caching on the way): only then can a
 * remote flush make data persistent, so only then does the client use
 * RPMA_FLUSH_TYPE_PERSISTENT.  The server promises it for real PMem (or when
 * RPMA_EXAMPLE_DW2PMEM=1 says the operator knows better).  After the client
 * has gone, the server checks what was written and persists it once more
 * the local way (msync for an ordinary file), which is what makes the data
 * durable when the remote flush could only reach visibility.
 */

#include <stdio.h>
#include <string.h>

#include "../common/common.h"

#define REGION_SIZE  (64 * 1024)
#define DATA_OFFSET  1000
#define DATA_SIZE    20000
#define PATTERN_SEED 4

/* main -- publish the region and the persistence declaration, then check the result */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *mr = NULL;
	struct ex_mem mem = {0};
	struct ex_pdata pd;
	struct rpma_conn_private_data pdata;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<pmem-file>]"));
	EX_CHECK(ex_mem_open(argc > 3 ? argv[3] : NULL, REGION_SIZE, &mem));
	/* start from a clean, durable state so that the final check means something */
	memset(mem.ptr, 0, mem.size);
	EX_CHECK(ex_mem_persist(&mem, 0, mem.size));

	bool dw2pmem = ex_direct_write_to_pmem(&mem);
	printf("region: %s; direct write to PMem %s\n", ex_mem_kind_str(&mem),
	       dw2pmem ? "declared" : "not declared");

	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, mem.ptr, mem.size,
			   RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				   RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				   RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			   &mr));
	EX_TRY(rpma_peer_cfg_new(&pcfg));
	EX_TRY(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, dw2pmem));
	EX_CHECK(ex_pdata_pack(mr, pcfg, &pd, &pdata));

	EX_CHECK(ex_listen(peer, argv[1], argv[2], &ep));
	EX_CHECK(ex_accept(ep, NULL, NULL, 0, 0, &pdata, &conn));
	printf("client connected\n");
	EX_CHECK(ex_await_close(&conn));

	/* what the client wrote, exactly there, and nothing around it */
	EX_CHECK(ex_verify(mem.ptr + DATA_OFFSET, DATA_SIZE, PATTERN_SEED, "the written data"));
	for (size_t i = 0; i < mem.size; i++) {
		if ((i < DATA_OFFSET || i >= DATA_OFFSET + DATA_SIZE) && mem.ptr[i] != 0) {
			ex_msg("byte %zu outside the written range was changed", i);
			ret = EX_E_FAIL;
			goto out;
		}
	}
	EX_CHECK(ex_mem_persist(&mem, DATA_OFFSET, DATA_SIZE));
	printf("verified: %d bytes at offset %d hold what the client wrote\n", DATA_SIZE,
	       DATA_OFFSET);

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (pcfg)
		(void)rpma_peer_cfg_delete(&pcfg);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
