/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_traits.c -- what the fabric provider's transport does, for the tests (provider.h) */

#include <stdlib.h>
#include <string.h>

#include "fabric.h"

void rpma_provider_traits(struct rpma_provider_traits *traits);

/*
 * rpma_provider_traits -- the traits of the libfabric provider FI_PROVIDER
 * names (tcp when unset): libfabric's verbs provider connects through
 * rdma_cm (55 bytes of connection data, zero-padded, the disconnecting side
 * closes only once the other answers); tcp and sockets over a plain socket
 * (256 bytes); the envelope takes 6 of them
 */
/*
 * fab_traits_rdm -- does the provider serve reliable datagrams: forced by
 * RPMA_FABRIC_EP_TYPE=rdm, or FI_PROVIDER (set) offers no message endpoint
 */
static bool fab_traits_rdm(const char *fp)
{
	const char *t = fab_ep_type_env();
	if (t != NULL)
		return strcmp(t, "rdm") == 0;
	if (*fp == '\0')
		return false; /* not tried by itself (fab_device_lookup) */
	struct fi_info *h = fi_allocinfo(), *list = NULL;
	if (h == NULL)
		return false;
	/* the hints of the device lookup (fabric_provider.c): verbs wants FI_RX_CQ_DATA */
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	bool msg = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &list) == 0;
	fi_freeinfo(list);
	fi_freeinfo(h);
	return !msg;
}

void rpma_provider_traits(struct rpma_provider_traits *traits)
{
	const char *fp = getenv("FI_PROVIDER");
	if (fp == NULL)
		fp = "";
	bool rdma_cm = strcmp(fp, "verbs") == 0;
	bool rdm = fab_traits_rdm(fp);

	memset(traits, 0, sizeof(*traits));
	/* reliable datagrams: the connection protocol carries 255 bytes (fabric_rdm_proto.h) */
	traits->pdata_connect_max = rdm ? 255 : rdma_cm ? 49 : 250;
	traits->pdata_accept_max = traits->pdata_connect_max;
	traits->pdata_padded = rdma_cm;
	traits->close_waits_for_peer = rdma_cm;
	traits->plain_tcp_connect = !rdma_cm && !rdm;
	traits->refused_event = RPMA_CONN_UNREACHABLE;
	traits->bad_key_breaks_conn = true;
	/* shm (1.17): a read of a region registered without remote read succeeded */
	traits->access_checked = strcmp(fp, "shm") != 0;
	/*
	 * FI_RMA_PMEM + FI_COMMIT_COMPLETE: tcp (net) only, not sockets' MSG
	 * endpoints, nor shm or tcp;ofi_rxm; libfabric 2.x's tcp offers them
	 * on its own reliable datagrams too
	 */
	bool tcp = strcmp(fp, "tcp") == 0 || strcmp(fp, "net") == 0;
	traits->persistent_flush = rdm ? tcp : *fp == '\0' || tcp;
	traits->odp_possible = false;
	traits->mr_advise = false;
	traits->drawn_key_min = FAB_KEY_MIN;
	traits->progress_threads_per_peer = 1;
	traits->log_prefix = "fabric: ";
	/* reliable datagrams: the server answers PENDING while its application decides */
	traits->accept_waits_for_app = rdm;
	/*
	 * shm's locks are pthread spin locks in the shared memory: 1.17 takes
	 * the receiver's for a whole send and its own for a whole progress
	 * step, 1.18 and later (libfabric commit 017f27141) only around
	 * taking or giving back inject and SAR buffers; a process killed with
	 * one held leaves it held
	 */
	traits->killed_peer_may_wedge = strcmp(fp, "shm") == 0;
	/*
	 * a connection's own libfabric CQ parks while its user polls (fabric.h,
	 * parking), a CQ group never does: RPMA_FABRIC_OWN_CQS=0 puts a peer's
	 * first connections in groups too
	 */
	traits->polled_cq_quiets_progress = fab_own_cqs(NULL) > 0;
}
