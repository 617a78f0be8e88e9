/* SPDX-License-Identifier: BSD-3-Clause */
/* compat.c -- the 0.10-era calls, implemented on top of the 1.x ones */

#define RPMA_NO_DEPRECATION_WARNINGS 1

#include <arpa/inet.h>
#include <string.h>

#include "log.h"
#include "mr.h"
#include "provider.h"

/* rpma_wc_2completion -- the 0.10 form of a work completion */
static int rpma_wc_2completion(const struct ibv_wc *wc, struct rpma_completion *cmpl)
{
	if (wc->status != IBV_WC_SUCCESS) {
		/* only these two fields are meaningful for a failed operation */
		cmpl->op_context = (void *)(uintptr_t)wc->wr_id;
		cmpl->op_status = wc->status;
		return 0;
	}

	enum rpma_op op;
	switch (wc->opcode) {
	case IBV_WC_RDMA_READ:
		op = RPMA_OP_READ;
		break;
	case IBV_WC_RDMA_WRITE:
		op = RPMA_OP_WRITE;
		break;
	case IBV_WC_SEND:
		op = RPMA_OP_SEND;
		break;
	case IBV_WC_RECV:
		op = RPMA_OP_RECV;
		break;
	case IBV_WC_RECV_RDMA_WITH_IMM:
		op = RPMA_OP_RECV_RDMA_WITH_IMM;
		break;
	default:
		RPMA_LOG_ERROR("unsupported completion opcode %d", (int)wc->opcode);
		return RPMA_E_NOSUPP;
	}

	cmpl->op_context = (void *)(uintptr_t)wc->wr_id;
	cmpl->op = op;
	cmpl->byte_len = wc->byte_len;
	cmpl->op_status = wc->status;
	cmpl->flags = wc->wc_flags;
	if ((op == RPMA_OP_RECV || op == RPMA_OP_RECV_RDMA_WITH_IMM) &&
	    (wc->wc_flags & IBV_WC_WITH_IMM))
		cmpl->imm = ntohl(wc->imm_data);
	return 0;
}

/* rpma_cq_get_completion -- take one completion in the 0.10 form */
int rpma_cq_get_completion(struct rpma_cq *cq, struct rpma_completion *cmpl)
{
	if (cq == NULL || cmpl == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cq == NULL ? "cq" : "cmpl");
		return RPMA_E_INVAL;
	}

	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	if (ret)
		return ret;

	return rpma_wc_2completion(&wc, cmpl);
}

/* rpma_write_atomic -- the 8 bytes at src + src_offset written with rpma_atomic_write() */
int rpma_write_atomic(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const struct rpma_mr_local *src, size_t src_offset, int flags,
		      const void *op_context)
{
	if (conn == NULL || dst == NULL || src == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       conn == NULL ? "conn" : (dst == NULL ? "dst" : "src"));
		return RPMA_E_INVAL;
	}
	if (flags == 0) {
		RPMA_LOG_ERROR("invalid argument: flags == 0");
		return RPMA_E_INVAL;
	}
	if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT != 0) {
		RPMA_LOG_ERROR("invalid argument: dst_offset %zu is not a multiple of %d",
			       dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT);
		return RPMA_E_INVAL;
	}
	int ret = rpma_mr_local_check(src, src_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, "source");
	if (ret)
		return ret;

	char value[RPMA_ATOMIC_WRITE_ALIGNMENT];
	memcpy(value, (const char *)rpma_mr_local_ptr(src) + src_offset, sizeof(value));

	return rpma_atomic_write(conn, dst, dst_offset, value, flags, op_context);
}

/* rpma_conn_completion_wait -- wait on the connection's main CQ */
int rpma_conn_completion_wait(struct rpma_conn *conn)
{
	if (conn == NULL) {
		RPMA_LOG_ERROR("invalid argument: conn == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_cq *cq;
	int ret = rpma_conn_get_cq(conn, &cq);
	if (ret)
		return ret;

	return rpma_cq_wait(cq);
}

/* rpma_conn_completion_get -- take one completion of the main CQ in the 0.10 form */
int rpma_conn_completion_get(struct rpma_conn *conn, struct rpma_completion *cmpl)
{
	if (conn == NULL || cmpl == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "cmpl");
		return RPMA_E_INVAL;
	}

	struct rpma_cq *cq;
	int ret = rpma_conn_get_cq(conn, &cq);
	if (ret)
		return ret;

	return rpma_cq_get_completion(cq, cmpl);
}

/* rpma_conn_get_completion_fd -- the main CQ's descriptor */
int rpma_conn_get_completion_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "fd");
		return RPMA_E_INVAL;
	}

	struct rpma_cq *cq;
	int ret = rpma_conn_get_cq(conn, &cq);
	if (ret)
		return ret;

	return rpma_cq_get_fd(cq, fd);
}
