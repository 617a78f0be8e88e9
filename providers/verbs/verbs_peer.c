/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_peer.c -- the verbs peer: protection domain and device capability probes */

#include <stdlib.h>
#include <string.h>

#include "verbs.h"

/*
 * vrb_query_device -- the extended device attributes; 0 or an errno value
 * (logged)
 */
static int vrb_query_device(struct ibv_context *ctx, struct ibv_device_attr_ex *attr)
{
	memset(attr, 0, sizeof(*attr));
	int e = ibv_query_device_ex(ctx, NULL, attr);
	if (e) {
		VRB_LOG_ERRNO(e, "ibv_query_device_ex(%s) failed",
			      ibv_get_device_name(ctx->device));
		return e;
	}
	return 0;
}

/* vrb_attr_is_odp -- on-demand paging for RC reads and writes? */
static bool vrb_attr_is_odp(const struct ibv_device_attr_ex *attr)
{
	const uint32_t rc_needed = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;
	return (attr->odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (attr->odp_caps.per_transport_caps.rc_odp_caps & rc_needed) == rc_needed;
}

/* vrb_device_is_odp_capable -- does the device offer on-demand paging for RC? */
int vrb_device_is_odp_capable(void *dev, int *is_odp_capable)
{
	struct ibv_device_attr_ex attr;
	int e = vrb_query_device(dev, &attr);
	if (e)
		return vrb_err(e);
	*is_odp_capable = vrb_attr_is_odp(&attr);
	return 0;
}

/* vrb_inline_enabled -- RPMA_VERBS_INLINE=0 turns inline ordinary writes off */
static bool vrb_inline_enabled(void)
{
	const char *v = getenv("RPMA_VERBS_INLINE");
	return v == NULL || strcmp(v, "0") != 0;
}

/*
 * vrb_max_msg_size -- the longest message every port of the device carries
 * (the smallest max_msg_sz), never beyond what a scatter/gather entry's
 * 32-bit length holds; that bound alone when no port answers
 */
static size_t vrb_max_msg_size(struct ibv_context *ctx, uint8_t ports)
{
	uint64_t max = UINT32_MAX;
	for (uint8_t p = 1; p <= ports && p != 0; p++) {
		struct ibv_port_attr pattr;
		memset(&pattr, 0, sizeof(pattr));
		int e = ibv_query_port(ctx, p, &pattr);
		if (e) {
			VRB_LOG_DEBUG("ibv_query_port(%s, %u) failed (%d)",
				      ibv_get_device_name(ctx->device), (unsigned)p, e);
			continue;
		}
		if (pattr.max_msg_sz != 0 && pattr.max_msg_sz < max)
			max = pattr.max_msg_sz;
	}
	return (size_t)max;
}

/* vrb_peer_max_msg_size -- the largest length of one operation (found by vrb_peer_init) */
size_t vrb_peer_max_msg_size(const struct rpma_peer *peer)
{
	return vrb_peer(peer)->max_msg_size;
}

/*
 * vrb_peer_describe -- the device, its transport and the private-data limits
 * of rdma_cm's RC connections
 */
void vrb_peer_describe(const struct rpma_peer *peer, char *buf, size_t size)
{
	const struct vrb_peer *vp = vrb_peer(peer);
	const struct ibv_device *d = vp->ctx->device;
	snprintf(buf, size,
		 "device %s (%s), RC queue pairs through rdma_cm, private data up to %d bytes "
		 "on connect and %d on accept",
		 ibv_get_device_name(vp->ctx->device),
		 d->transport_type == IBV_TRANSPORT_IWARP ? "iWARP"
		 : d->transport_type == IBV_TRANSPORT_IB  ? "InfiniBand or RoCE"
							  : "other transport",
		 VRB_PDATA_MAX_CONNECT, VRB_PDATA_MAX_ACCEPT);
}

/*
 * vrb_native_mode -- RPMA_VERBS_NATIVE_FLUSH: 0 no native flush nor atomic
 * write (the APM flush, the fenced inline write), 1 native flushes also to
 * regions that do not announce native flush access, unset: automatic
 */
static int vrb_native_mode(void)
{
	const char *v = getenv("RPMA_VERBS_NATIVE_FLUSH");
	if (v == NULL || v[0] == '\0')
		return -1;
	if (strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "1") == 0)
		return 1;
	VRB_LOG_WARNING("RPMA_VERBS_NATIVE_FLUSH=\"%s\" ignored: use 0 or 1", v);
	return -1;
}

/*
 * vrb_peer_init -- probe the device (ODP, native atomic write, native
 * flush) and allocate the protection domain
 */
int vrb_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	struct vrb_peer *vp = vrb_peer(peer);
	struct ibv_context *ctx = dev;
	struct ibv_device_attr_ex attr;

	int e = vrb_query_device(ctx, &attr);
	if (e)
		return vrb_err(e);

	vp->ctx = ctx;
	vp->odp = vrb_attr_is_odp(&attr);
	vp->iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	vp->inline_writes = vrb_inline_enabled();
	vp->max_msg_size = vrb_max_msg_size(ctx, attr.orig_attr.phys_port_cnt);
	*caps = vp->odp ? RPMA_PROV_CAP_ODP : 0;

#ifdef VERBS_NATIVE_ATOMIC_WRITE
	vp->native_atomic_write = (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE) != 0;
#endif
#ifdef VERBS_NATIVE_FLUSH
	const uint64_t flush_both =
		IB_UVERBS_DEVICE_FLUSH_GLOBAL | IB_UVERBS_DEVICE_FLUSH_PERSISTENT;
	vp->native_flush = (attr.device_cap_flags_ex & flush_both) == flush_both;
#endif
	int mode = vrb_native_mode();
	VRB_LOG_INFO("%s: native flush %s, native atomic write %s%s",
		     ibv_get_device_name(ctx->device), vp->native_flush ? "yes" : "no",
		     vp->native_atomic_write ? "yes" : "no",
		     mode == 0	 ? " (this side sends neither: RPMA_VERBS_NATIVE_FLUSH=0)"
		     : mode == 1 ? " (flushes native to every region: RPMA_VERBS_NATIVE_FLUSH=1)"
				 : "");
	/*
	 * 0 turns off what this side sends; its regions still get (and
	 * announce) native flush access, for initiators that flush natively
	 */
	if (mode == 0)
		vp->native_atomic_write = false;
	vp->flush_unannounced = mode == 1 && vp->native_flush;
	/* the core logs which of them the peer lacks */
	if (vp->native_atomic_write)
		*caps |= RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE;
	if (vp->native_flush && mode != 0)
		*caps |= RPMA_PROV_CAP_NATIVE_FLUSH;
	if (vp->flush_unannounced)
		*caps |= RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED;

	errno = 0;
	vp->pd = ibv_alloc_pd(ctx);
	if (vp->pd == NULL) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "ibv_alloc_pd(%s) failed", ibv_get_device_name(ctx->device));
		return vrb_err(e);
	}
	return 0;
}

/* vrb_peer_fini -- release the protection domain */
int vrb_peer_fini(struct rpma_peer *peer)
{
	struct vrb_peer *vp = vrb_peer(peer);
	if (vp->pd == NULL)
		return 0;
	int e = ibv_dealloc_pd(vp->pd);
	if (e) {
		/* EBUSY: something registered on this peer is still alive */
		VRB_LOG_ERRNO(e, "ibv_dealloc_pd failed");
		return vrb_err(e);
	}
	vp->pd = NULL;
	return 0;
}
