/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_key.c -- remote keys and memory registration in a peer's domain */

#include <errno.h>
#include <sys/random.h>

#include "fabric.h"

/*
 * fab_peer_new_key -- a key for a region, drawn from getrandom(): 31 random
 * bits (the top bit is FAB_KEY_PMEM, set by the caller), never below
 * FAB_KEY_MIN, so that neither small integers nor the keys of a counter are
 * ever right.  A key the domain has already is refused by libfabric
 * (-FI_ENOKEY) and the caller draws again.
 */
int fab_peer_new_key(uint32_t *key)
{
	uint32_t k;
	do {
		ssize_t n;
		do {
			n = getrandom(&k, sizeof(k), 0);
		} while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(k)) {
			RPMA_LOG_ERROR_WITH_ERRNO(n < 0 ? errno : EIO,
						  "fabric: getrandom() for a memory key");
			return RPMA_E_PROVIDER;
		}
		k &= ~FAB_KEY_PMEM;
	} while (k < FAB_KEY_MIN);
	*key = k;
	return 0;
}

/*
 * fab_peer_reg -- register memory in the peer's domain, honouring the
 * mr_mode; pmem: the region may be flushed to persistence, which our own
 * keys tell the initiator by FAB_KEY_PMEM (fabric.h)
 */
int fab_peer_reg(struct fab_peer *peer, void *ptr, size_t size, uint64_t access, bool pmem,
		 struct fid_mr **mr, void **desc, uint64_t *key)
{
	int ret = 0;
	pmem = pmem && peer->has_commit; /* only then does the key bit matter */
	uint64_t flags = pmem ? FI_RMA_PMEM : 0;
	for (int attempt = 0; attempt < 8; attempt++) {
		uint64_t req_key = 0;
		if (!peer->prov_keys) {
			uint32_t k;
			ret = fab_peer_new_key(&k);
			if (ret)
				return ret;
			req_key = k | (pmem ? FAB_KEY_PMEM : 0);
		}
		ret = fi_mr_reg(peer->domain, ptr, size, access, 0, req_key, flags, mr, NULL);
		if (ret == -FI_EBADFLAGS && flags) {
			flags = 0; /* the provider does not take the hint: commit works without it */
			attempt--;
			continue;
		}
		if (ret != -FI_ENOKEY)
			break;
		FAB_LOG_DEBUG("fi_mr_reg(): the key is taken, drawing another one");
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_mr_reg()");
		return fab_err(ret);
	}
	uint64_t k = fi_mr_key(*mr);
	if (k == FI_KEY_NOTAVAIL) {
		FAB_LOG_ERROR("fi_mr_key(): the key needs FI_MR_RAW, which is not supported");
		fi_close(&(*mr)->fid);
		*mr = NULL;
		return RPMA_E_NOSUPP;
	}
	*desc = fi_mr_desc(*mr);
	*key = k;
	return 0;
}
