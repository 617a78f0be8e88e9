/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- atomic-write example, active side: append entries to the
 * server's log so that each one is published all at once
 *
 * usage: client <addr> <port>
 *
 * One append is four operations on the connection:
 *   1. rpma_write()        the entry, past the published end of the log;
 *   2. rpma_flush()        the entry (persistent or visible, as the server allows);
 *   3. rpma_atomic_write() the new value of "used" (8 bytes, 8-byte aligned);
 *   4. rpma_flush()        the counter.
 * The atomic write is ordered after the flush before it, so "used" never
 * covers an entry that is not flushed yet.  At the end the client reads the
 * whole log back and checks it.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"
#include "log.h"

/* main -- connect, append LOG_ENTRIES entries, read everything back */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_local *src_mr = NULL, *back_mr = NULL;
	struct rpma_mr_remote *log_mr = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	struct ex_mem src = {0}, back = {0};
	bool dw2pmem = false;
	size_t log_size = 0;
	int ret;

	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 3, "<addr> <port>"));
	EX_CHECK(ex_peer_open(argv[1], false, &peer));
	EX_CHECK(ex_connect(peer, argv[1], argv[2], NULL, NULL, 0, 0, NULL, &conn));
	EX_TRY(rpma_conn_get_cq(conn, &cq));
	EX_TRY(rpma_conn_get_private_data(conn, &pdata));
	EX_CHECK(ex_pdata_unpack(&pdata, &log_mr, &pcfg));
	if (pcfg == NULL) {
		ex_msg("the server sent no peer configuration");
		ret = EX_E_FAIL;
		goto out;
	}
	EX_TRY(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	EX_TRY(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw2pmem));
	enum rpma_flush_type type =
		dw2pmem ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
	EX_TRY(rpma_mr_remote_get_size(log_mr, &log_size));

	/* local buffers: the entries to send and a copy of the whole log to read back */
	EX_CHECK(ex_mem_open(NULL, log_size, &src));
	EX_CHECK(ex_mem_open(NULL, log_size, &back));
	EX_TRY(rpma_mr_reg(peer, src.ptr, src.size, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	EX_TRY(rpma_mr_reg(peer, back.ptr, back.size, RPMA_MR_USAGE_READ_DST, &back_mr));

	/* where does the log end now?  Read the counter (0 for the server's fresh log) */
	static const int ctx_read = 1, ctx_data = 2, ctx_used = 3;
	EX_TRY(rpma_read(conn, back_mr, 0, log_mr, LOG_USED_OFFSET, sizeof(uint64_t),
			 RPMA_F_COMPLETION_ALWAYS, &ctx_read));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, &ctx_read, NULL));
	uint64_t used;
	memcpy(&used, back.ptr, sizeof(used));
	if (used != 0) {
		ex_msg("the server's log is not empty (%llu bytes)", (unsigned long long)used);
		ret = EX_E_FAIL;
		goto out;
	}

	for (unsigned i = 0; i < LOG_ENTRIES; i++) {
		size_t len = log_entry_size(i);
		size_t at = LOG_DATA_OFFSET + used;
		if (at + len > log_size) {
			ex_msg("the log is full");
			ret = EX_E_FAIL;
			goto out;
		}
		ex_fill(src.ptr + at, len, log_entry_seed(i));

		/* 1 + 2: the entry, then its flush (one completion for both) */
		EX_TRY(rpma_write(conn, log_mr, at, src_mr, at, len, RPMA_F_COMPLETION_ON_ERROR,
				  NULL));
		EX_CHECK(ex_flush(conn, log_mr, at, len, &type, RPMA_F_COMPLETION_ALWAYS,
				  &ctx_data));
		EX_CHECK(ex_expect_wc(cq, EX_ANY_OPCODE, &ctx_data, NULL));

		/* 3 + 4: publish it by moving the counter in one 8-byte atomic write */
		used += len;
		char word[8];
		memcpy(word, &used, sizeof(word));
		EX_TRY(rpma_atomic_write(conn, log_mr, LOG_USED_OFFSET, word,
					 RPMA_F_COMPLETION_ON_ERROR, NULL));
		EX_CHECK(ex_flush(conn, log_mr, LOG_USED_OFFSET, sizeof(word), &type,
				  RPMA_F_COMPLETION_ALWAYS, &ctx_used));
		EX_CHECK(ex_expect_wc(cq, EX_ANY_OPCODE, &ctx_used, NULL));
	}
	printf("appended %d entries (%llu bytes), flushed to %s\n", LOG_ENTRIES,
	       (unsigned long long)used,
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistence" : "visibility");

	/* read the counter and the log back and check both */
	EX_TRY(rpma_read(conn, back_mr, 0, log_mr, 0, LOG_DATA_OFFSET + used,
			 RPMA_F_COMPLETION_ALWAYS, &ctx_read));
	EX_CHECK(ex_expect_wc(cq, IBV_WC_RDMA_READ, &ctx_read, NULL));
	uint64_t remote_used;
	memcpy(&remote_used, back.ptr + LOG_USED_OFFSET, sizeof(remote_used));
	if (remote_used != used) {
		ex_msg("the remote counter is %llu, expected %llu", (unsigned long long)remote_used,
		       (unsigned long long)used);
		ret = EX_E_FAIL;
		goto out;
	}
	size_t off = LOG_DATA_OFFSET;
	for (unsigned i = 0; i < LOG_ENTRIES; i++) {
		EX_CHECK(ex_verify(back.ptr + off, log_entry_size(i), log_entry_seed(i),
				   "a log entry read back"));
		off += log_entry_size(i);
	}
	printf("verified: the remote log holds all %d entries\n", LOG_ENTRIES);

	EX_CHECK(ex_close(&conn));

out:
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (log_mr)
		(void)rpma_mr_remote_delete(&log_mr);
	if (pcfg)
		(void)rpma_peer_cfg_delete(&pcfg);
	if (src_mr)
		(void)rpma_mr_dereg(&src_mr);
	if (back_mr)
		(void)rpma_mr_dereg(&back_mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&src);
	ex_mem_close(&back);
	return ret ? 1 : 0;
}
