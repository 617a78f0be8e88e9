/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_srq.c -- shared receive queues of the verbs provider */

#include <string.h>

#include "verbs.h"

/* vrb_srq_new -- an SRQ of rq_size entries (one SGE each) and its own receive CQ if asked */
int vrb_srq_new(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size, struct rpma_cq *rcq,
		uint32_t rcq_size)
{
	struct vrb_peer *vp = vrb_peer(peer);
	struct vrb_srq *vs = vrb_srq(srq);
	struct ibv_srq_init_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.attr.max_wr = rq_size;
	attr.attr.max_sge = 1;
	attr.attr.srq_limit = 0;

	errno = 0;
	vs->srq = ibv_create_srq(vp->pd, &attr);
	if (vs->srq == NULL) {
		int e = vrb_errno();
		VRB_LOG_ERRNO(e, "ibv_create_srq(%u entries) failed", rq_size);
		return vrb_err(e);
	}

	vs->rcq = NULL;
	if (rcq) {
		vs->rcq = vrb_cq(rcq);
		ret = vrb_cq_init(vs->rcq, vp->ctx, rcq_size, NULL);
		if (ret) {
			vs->rcq = NULL;
			(void)ibv_destroy_srq(vs->srq);
			vs->srq = NULL;
			return ret;
		}
	}
	return 0;
}

/* vrb_srq_delete -- destroy the SRQ, then its receive CQ */
int vrb_srq_delete(struct rpma_srq *srq)
{
	struct vrb_srq *vs = vrb_srq(srq);
	int ret = 0;

	if (vs->srq) {
		int e = ibv_destroy_srq(vs->srq);
		if (e) {
			/* EBUSY: a queue pair still takes its receives from it */
			VRB_LOG_ERRNO(e, "ibv_destroy_srq failed");
			ret = vrb_err(e);
		}
		vs->srq = NULL;
	}
	if (vs->rcq) {
		int r = vrb_cq_fini(vs->rcq);
		if (r && !ret)
			ret = r;
		vs->rcq = NULL;
	}
	return ret;
}

/* vrb_srq_recv -- post a receive to the shared queue (dst NULL: zero-length) */
int vrb_srq_recv(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset, size_t len,
		 const void *op_context)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)(uintptr_t)op_context;
	if (dst) {
		struct ibv_mr *m = vrb_mr(dst)->mr;
		sge.addr = (uint64_t)(uintptr_t)m->addr + offset;
		sge.length = (uint32_t)len;
		sge.lkey = m->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}

	int e = ibv_post_srq_recv(vrb_srq(srq)->srq, &wr, &bad);
	if (e) {
		if (e < 0)
			e = vrb_errno();
		VRB_LOG_ERRNO(e, "ibv_post_srq_recv(%zu bytes) failed", len);
		return RPMA_E_PROVIDER;
	}
	return 0;
}
