/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_mr.c -- memory registration on the verbs provider */

#include "mr.h"
#include "verbs.h"

/* vrb_usage_to_access -- the ibv_access_flags a region of the given usage needs */
static int vrb_usage_to_access(const struct vrb_peer *vp, int usage)
{
	int access = 0;

	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= IBV_ACCESS_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_READ_DST) {
		access |= IBV_ACCESS_LOCAL_WRITE;
		/* iWARP carries a read's response as a write into the destination */
		if (vp->iwarp)
			access |= IBV_ACCESS_REMOTE_WRITE;
	}
	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_RECV)
		access |= IBV_ACCESS_LOCAL_WRITE;
	/* RPMA_MR_USAGE_SEND needs no access right */

	if (usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		/*
		 * The peer's flush may be the 8-byte read after the writes
		 * (every initiator without native flush, e.g. librpma 1.2):
		 * keep the region readable whatever this device offers.
		 */
		access |= IBV_ACCESS_REMOTE_READ;
#ifdef VERBS_NATIVE_FLUSH
		if (vp->native_flush) {
			if (usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)
				access |= IBV_ACCESS_FLUSH_GLOBAL;
			if (usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
				access |= IBV_ACCESS_FLUSH_PERSISTENT;
		}
#endif
	}
	return access;
}

/*
 * vrb_mr_reg -- register a region; a device that refuses the memory as it
 * is (EOPNOTSUPP, e.g. a file on FSDAX) gets a second try with on-demand
 * paging when it offers it
 */
int vrb_mr_reg(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size, int usage,
	       uint64_t *raddr, uint64_t *rkey)
{
	struct vrb_peer *vp = vrb_peer(peer);
	struct vrb_mr *vm = vrb_mr(mr);
	int access = vrb_usage_to_access(vp, usage);

	errno = 0;
	struct ibv_mr *m = ibv_reg_mr(vp->pd, ptr, size, access);
#ifdef VERBS_NATIVE_FLUSH
	if (m == NULL && errno == EINVAL && (access & IBV_ACCESS_FLUSH_PERSISTENT)) {
		/*
		 * Persistent flush access needs persistent-memory pages (rxe
		 * refuses it elsewhere with EINVAL): the region stays usable,
		 * flushed by the read after the writes, and its descriptor
		 * does not announce native flush.
		 */
		VRB_LOG_INFO("ibv_reg_mr(%p, %zu) refused persistent flush access (not "
			     "persistent memory?): registered without native flush access",
			     ptr, size);
		access &= ~IBV_ACCESS_FLUSH_PERSISTENT;
		errno = 0;
		m = ibv_reg_mr(vp->pd, ptr, size, access);
	}
#endif
	if (m == NULL) {
		int e = vrb_errno();
#ifdef VERBS_HAVE_ODP
		if (e == EOPNOTSUPP && vp->odp) {
			VRB_LOG_INFO("ibv_reg_mr(%p, %zu) refused the memory (FSDAX?): "
				     "retrying with on-demand paging",
				     ptr, size);
			errno = 0;
			m = ibv_reg_mr(vp->pd, ptr, size, access | IBV_ACCESS_ON_DEMAND);
			if (m == NULL)
				e = vrb_errno();
		}
#endif
		if (m == NULL) {
			VRB_LOG_ERRNO(e, "ibv_reg_mr(%p, %zu, access 0x%x) failed", ptr, size,
				      access);
			return vrb_err(e);
		}
	}

	vm->mr = m;
#ifdef VERBS_NATIVE_FLUSH
	/* every flush type asked for has its native access right */
	mr->native_flush = (usage & RPMA_MR_USAGE_FLUSH_ANY) &&
			   (!(usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) ||
			    (access & IBV_ACCESS_FLUSH_GLOBAL)) &&
			   (!(usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ||
			    (access & IBV_ACCESS_FLUSH_PERSISTENT));
#endif
	*raddr = (uint64_t)(uintptr_t)m->addr;
	*rkey = m->rkey;
	return 0;
}

/* vrb_mr_dereg -- undo the registration */
int vrb_mr_dereg(struct rpma_mr_local *mr)
{
	struct vrb_mr *vm = vrb_mr(mr);
	if (vm->mr == NULL)
		return 0;
	int e = ibv_dereg_mr(vm->mr);
	if (e) {
		VRB_LOG_ERRNO(e, "ibv_dereg_mr failed");
		return vrb_err(e);
	}
	vm->mr = NULL;
	return 0;
}

/* vrb_mr_advise -- pass a paging hint for [offset, offset + len) to the device */
int vrb_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags)
{
#ifdef VERBS_HAVE_ADVISE_MR
	struct vrb_mr *vm = vrb_mr(mr);
	if (len > UINT32_MAX) {
		VRB_LOG_ERROR("ibv_advise_mr: length %zu does not fit in 32 bits", len);
		return RPMA_E_INVAL;
	}
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)vm->mr->addr + offset,
		.length = (uint32_t)len,
		.lkey = vm->mr->lkey,
	};
	int e = ibv_advise_mr(vm->mr->pd, (enum ibv_advise_mr_advice)advice, flags, &sge, 1);
	if (e == 0)
		return 0;
	if (e < 0)
		e = vrb_errno();
	switch (e) {
	case EOPNOTSUPP:
		VRB_LOG_ERRNO(e, "ibv_advise_mr(advice %d, flags 0x%x) is not supported", advice,
			      flags);
		return RPMA_E_NOSUPP;
	case EFAULT:
	case EINVAL:
		VRB_LOG_ERRNO(e, "ibv_advise_mr(advice %d, flags 0x%x) refused the arguments",
			      advice, flags);
		return RPMA_E_INVAL;
	default:
		VRB_LOG_ERRNO(e, "ibv_advise_mr(advice %d, flags 0x%x) failed", advice, flags);
		return RPMA_E_PROVIDER;
	}
#else
	VRB_LOG_ERROR("ibv_advise_mr is not available in this build (rdma-core too old)");
	return RPMA_E_NOSUPP;
#endif
}
