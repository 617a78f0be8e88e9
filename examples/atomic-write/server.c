/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- atomic-write example, passive side: hold a log that the client
 * appends to remotely, then check it
 *
 * usage: server <addr> <port> [<pmem-file>]
 *
 * The log lives in the file (or DRAM) and starts empty ("used" = 0).  The
 * server does nothing while the client appends; afterwards it walks the log
 * as any reader would: only the bytes below "used" count.
 */

#include <stdio.h>
#include <string.h>

#include "../common/common.h"
#include "log.h"

/* main -- publish an empty log, wait for the client, check the log */
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
	EX_CHECK(ex_mem_open(argc > 3 ? argv[3] : NULL, LOG_REGION_SIZE, &mem));
	memset(mem.ptr, 0, mem.size);
	EX_CHECK(ex_mem_persist(&mem, 0, mem.size));
	bool dw2pmem = ex_direct_write_to_pmem(&mem);
	printf("log in %s; direct write to PMem %s\n", ex_mem_kind_str(&mem),
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
	EX_CHECK(ex_await_close(&conn));

	/* read the log the way a recovering reader would */
	uint64_t used;
	memcpy(&used, mem.ptr + LOG_USED_OFFSET, sizeof(used));
	size_t off = 0;
	unsigned n = 0;
	while (off < used && n < LOG_ENTRIES) {
		size_t len = log_entry_size(n);
		if (off + len > used)
			break;
		EX_CHECK(ex_verify(mem.ptr + LOG_DATA_OFFSET + off, len, log_entry_seed(n),
				   "a log entry"));
		off += len;
		n++;
	}
	if (n != LOG_ENTRIES || off != used) {
		ex_msg("the log holds %u whole entries in %zu of %llu used bytes, expected %d", n,
		       off, (unsigned long long)used, LOG_ENTRIES);
		ret = EX_E_FAIL;
		goto out;
	}
	EX_CHECK(ex_mem_persist(&mem, 0, LOG_DATA_OFFSET + used));
	printf("verified: the log holds %u entries, %llu bytes\n", n, (unsigned long long)used);

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
