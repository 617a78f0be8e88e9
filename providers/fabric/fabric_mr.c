/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_mr.c -- memory registration in the peer's libfabric domain */

#include "fabric.h"

/* fab_usage2access -- the libfabric access bits a usage needs */
static uint64_t fab_usage2access(int usage)
{
	uint64_t access = 0;
	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= FI_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_READ_DST)
		access |= FI_READ;
	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= FI_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= FI_REMOTE_WRITE;
	/* a flush is an 8-byte read of the target region */
	if (usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		access |= FI_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_SEND)
		access |= FI_SEND;
	if (usage & RPMA_MR_USAGE_RECV)
		access |= FI_RECV;
	return access;
}

/*
 * fab_mr_reg -- register a region; keys are ours (32-bit, unique in the
 * domain) unless the provider chooses them; the remote address is the
 * virtual address or 0, as the negotiated mr_mode says
 */
int fab_mr_reg(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size, int usage,
	       uint64_t *raddr, uint64_t *rkey)
{
	struct fab_peer *p = fab_peer(peer);
	struct fab_mr *m = fab_mr(mr);
	int ret = fab_peer_reg(p, ptr, size, fab_usage2access(usage),
			       (usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) != 0, &m->mr, &m->desc,
			       &m->key);
	if (ret)
		return ret;
	m->ptr = ptr;
	*raddr = p->va_addressing ? (uint64_t)(uintptr_t)ptr : 0;
	*rkey = m->key;
	return 0;
}

/* fab_mr_dereg -- undo a registration */
int fab_mr_dereg(struct rpma_mr_local *mr)
{
	struct fab_mr *m = fab_mr(mr);
	int ret = fi_close(&m->mr->fid);
	m->mr = NULL;
	if (ret) {
		FAB_LOG_FI(ret, "fi_close(mr)");
		return RPMA_E_PROVIDER;
	}
	return 0;
}
