/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_peer.c -- the peer: the fabric and the domain on a device, what they can do */

#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "fabric.h"

/* FI_ORDER_RMA_RAW: an RMA read after RMA writes only (libfabric 1.15 and later) */
#ifdef FI_ORDER_RMA_RAW
#define FAB_ORDER_RMA_RAW FI_ORDER_RMA_RAW
#else
#define FAB_ORDER_RMA_RAW 0
#endif

/* fab_hints -- hints for the peer's domain on the device, with extra caps */
static struct fi_info *fab_hints(const struct fab_dev *d, uint64_t extra_caps)
{
	struct fi_info *h = fi_allocinfo();
	if (h == NULL)
		return NULL;
	h->ep_attr->type = (enum fi_ep_type)d->ep_type;
	/* over reliable datagrams the connection protocol speaks in tagged messages */
	h->caps = FI_MSG | FI_RMA | extra_caps | (d->ep_type == FI_EP_RDM ? FI_TAGGED : 0);
	/*
	 * FI_CONTEXT and FI_CONTEXT2 only over reliable datagrams, where every
	 * context libfabric gets is a record of ours that starts with a struct
	 * fi_context2 (fabric_rdm.c); over message endpoints the application's
	 * op_context goes to libfabric as it is
	 */
	h->mode = FAB_HINTS_MODE(d->ep_type);
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->fabric_attr->prov_name = strdup(d->prov_name);
	h->fabric_attr->name = strdup(d->fabric_name);
	h->domain_attr->name = strdup(d->domain_name);
	if (!h->fabric_attr->prov_name || !h->fabric_attr->name || !h->domain_attr->name) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

/*
 * fab_peer_getinfo -- p->info: the device's FI_EP_MSG entry with the most
 * wanted optional capabilities libfabric grants, default op_flags cleared
 */
static int fab_peer_getinfo(struct fab_peer *p, const struct fab_dev *d)
{
	/* the optional capabilities, most wanted first (FI_FENCE orders the emulated atomic write) */
	static const uint64_t extras[] = {
		FI_ATOMIC | FI_RMA_PMEM | FI_FENCE,
		FI_ATOMIC | FI_RMA_PMEM,
		FI_RMA_PMEM | FI_FENCE,
		FI_RMA_PMEM,
		FI_ATOMIC | FI_FENCE,
		FI_ATOMIC,
		FI_FENCE,
		0,
	};
	/*
	 * Over reliable datagrams FI_DIRECTED_RECV first, and without it where
	 * the provider lacks it: every receive of ours takes any source
	 * (FI_ADDR_UNSPEC), but with it rxm (over a shared receive context, as
	 * on tcp) looks up the connection of every message it gets.  Without
	 * it, libfabric 2.0-2.4 crash in fi_av_insert() when a message of a
	 * peer not yet inserted waits in rxm's queue of unexpected messages
	 * (rxm_get_addr follows the missing connection; fixed in 2.5): a client
	 * inserting the server's address from its ACCEPT while a repeated
	 * ACCEPT waited (conn/request_burst, 2 runs of 6 on 2.1), a listener
	 * inserting a client's while other REQs waited.
	 */
	static const uint64_t wants[] = {FI_DIRECTED_RECV, 0};
	struct fi_info *list = NULL, *fi = NULL;
	int ret = -FI_ENODATA;
	size_t w0 = d->ep_type == FI_EP_RDM ? 0 : 1;
	/* testing: the way of a provider without FI_DIRECTED_RECV (rdm.sh runs shm so) */
	const char *v = getenv("RPMA_FABRIC_TEST_NO_DIRECTED_RECV");
	if (w0 == 0 && v != NULL && strcmp(v, "1") == 0) {
		FAB_LOG_NOTICE(
			"RPMA_FABRIC_TEST_NO_DIRECTED_RECV=1: FI_DIRECTED_RECV not asked for "
			"(testing)");
		w0 = 1;
	}

	for (size_t w = w0; ret && w < 2; w++) {
		for (size_t i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
			struct fi_info *h = fab_hints(d, extras[i] | wants[w]);
			if (h == NULL) {
				FAB_LOG_ERROR("out of memory");
				return RPMA_E_NOMEM;
			}
			ret = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &list);
			fi_freeinfo(h);
			if (ret == 0)
				break;
		}
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_getinfo()");
		return RPMA_E_PROVIDER;
	}
	for (fi = list;
	     fi && (fi->ep_attr->type != (enum fi_ep_type)d->ep_type || !fab_entry_tags_fit(fi));
	     fi = fi->next)
		;
	if (fi == NULL) {
		fi_freeinfo(list);
		FAB_LOG_ERROR("fi_getinfo(): no %s entry",
			      d->ep_type == FI_EP_RDM ? "FI_EP_RDM" : "FI_EP_MSG");
		return RPMA_E_PROVIDER;
	}
	p->info = fi_dupinfo(fi);
	fi_freeinfo(list);
	if (p->info == NULL) {
		FAB_LOG_ERROR("fi_dupinfo() failed");
		return RPMA_E_NOMEM;
	}
	/* every op says what it wants: default op_flags would apply to all (libfabric.md 11) */
	p->info->tx_attr->op_flags = 0;
	p->info->rx_attr->op_flags = 0;
	return 0;
}

/* fab_peer_learn -- what p->info tells of addressing, keys, immediate data, ordering */
static void fab_peer_learn(struct fab_peer *p, const struct fab_dev *d)
{
	/*
	 * An mr_mode of exactly 1 is the legacy FI_MR_BASIC (virtual addresses,
	 * provider keys); libfabric 2.x deprecates the name, the value stays.
	 */
	uint64_t mm = p->info->domain_attr->mr_mode;
	p->mr_mode = mm;
	/*
	 * testing: register what a provider of FI_MR_LOCAL (efa) needs
	 * registered, and pass its descriptors, on one that does not ask for
	 * it (rdm.sh runs shm so); the memory of ours that libfabric reads or
	 * writes is registered anyway but for the control port
	 */
	const char *v = getenv("RPMA_FABRIC_MR_LOCAL");
	if (v != NULL && strcmp(v, "1") == 0 && !(mm & FI_MR_LOCAL)) {
		p->mr_mode |= FI_MR_LOCAL;
		FAB_LOG_NOTICE("RPMA_FABRIC_MR_LOCAL=1: local memory registered as under "
			       "FI_MR_LOCAL (testing)");
	}
	p->va_addressing = (mm == 1) || (mm & FI_MR_VIRT_ADDR);
	p->prov_keys = (mm == 1) || (mm & FI_MR_PROV_KEY);
	p->rx_cq_data = (p->info->mode & FI_RX_CQ_DATA) != 0;
	/* remote CQ data that takes no receive: carry the value in a send (fabric.h) */
	p->rdm = d->ep_type == FI_EP_RDM;
	/*
	 * reliable datagrams: shm declares no ordering at all, but applies the
	 * operations of one endpoint to a peer in order (one command queue per
	 * pair, or a copy made at posting: fabric_rdm.c); rxm declares SAW
	 */
	p->imm_emulated = !p->rx_cq_data && p->info->domain_attr->cq_data_size >= 8 &&
			  ((p->info->tx_attr->msg_order & FI_ORDER_SAW) || p->rdm);
	p->has_fence = (p->info->caps & FI_FENCE) != 0;
	uint64_t order = p->info->tx_attr->msg_order;
	p->flush_wait = !p->rdm || (order & FI_ORDER_RAW) ? FAB_FLUSH_WAIT_NONE
			: (order & FAB_ORDER_RMA_RAW)	  ? FAB_FLUSH_WAIT_ATOMICS
							  : FAB_FLUSH_WAIT_ALL;
	p->inject_size = fab_inject_size(p->info->tx_attr->inject_size);
	p->inject_atomic = p->inject_size >= 8 && d->ep_type != FI_EP_RDM;
	p->in_order = (p->info->tx_attr->msg_order & FI_ORDER_WAR) ||
		      p->info->ep_attr->protocol == FI_PROTO_SOCK_TCP;
	p->atomic_waits = p->rdm && !p->in_order && !p->has_fence;
	/* libfabric's sockets: its quirks (the flags' comments, fabric.h) */
	bool sockets = strcmp(d->prov_name, "sockets") == 0;
	p->refused_sync = !p->rdm && sockets;
	p->eager_fds = sockets;
	p->end_closes = !p->rdm && sockets;
	p->verbs = strcmp(d->prov_name, "verbs") == 0;
	p->reject_ep_ok =
		strcmp(d->prov_name, "tcp") != 0 && strcmp(d->prov_name, "net") != 0 && !sockets;
	atomic_init(&p->refused_reqs, 0);
	atomic_init(&p->access_errors, 0);
}

/*
 * fab_peer_accepts -- does the device also take tx op_flags (with the extra
 * caps)?  false when not, or out of memory (*nomem set)
 */
static bool fab_peer_accepts(const struct fab_dev *d, uint64_t extra_caps, uint64_t op_flags,
			     bool *nomem)
{
	struct fi_info *h = fab_hints(d, extra_caps);
	if (h == NULL) {
		*nomem = true;
		return false;
	}
	h->tx_attr->op_flags = op_flags;
	struct fi_info *l2 = NULL;
	bool ok = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &l2) == 0;
	if (ok)
		fi_freeinfo(l2);
	fi_freeinfo(h);
	return ok;
}

/*
 * fab_peer_completions -- the completion levels the device accepts:
 * FI_COMMIT_COMPLETE (with FI_RMA_PMEM: persistent flush) and
 * FI_DELIVERY_COMPLETE (a write fails when the target refuses it).  No
 * memory for the hints: RPMA_E_NOMEM rather than a peer with fewer capabilities.
 */
static int fab_peer_completions(struct fab_peer *p, const struct fab_dev *d)
{
	bool nomem = false;
	if (p->info->caps & FI_RMA_PMEM) {
		p->has_commit = fab_peer_accepts(d, FI_RMA_PMEM, FI_COMMIT_COMPLETE, &nomem);
		if (nomem)
			goto err_nomem;
	}
	p->has_delivery = fab_peer_accepts(d, p->info->caps & (FI_RMA_PMEM | FI_ATOMIC),
					   FI_DELIVERY_COMPLETE, &nomem);
	if (nomem)
		goto err_nomem;
	p->imm_gap_us = fab_test_us("RPMA_FABRIC_TEST_IMM_GAP_US",
				    "a write with immediate data waits between its two posts");
	return 0;

err_nomem:
	FAB_LOG_ERROR("out of memory");
	return RPMA_E_NOMEM;
}

/* fab_peer_open -- open the fabric and the domain; is the atomic write native? */
static int fab_peer_open(struct fab_peer *p)
{
	int ret = fi_fabric(p->info->fabric_attr, &p->fabric, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_fabric()");
		return fab_err(ret);
	}
	ret = fi_domain(p->fabric, p->info, &p->domain, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_domain()");
		fi_close(&p->fabric->fid);
		return fab_err(ret);
	}
	if (p->info->caps & FI_ATOMIC) {
		struct fi_atomic_attr aattr;
		p->has_atomic =
			fi_query_atomic(p->domain, FI_UINT64, FI_ATOMIC_WRITE, &aattr, 0) == 0;
	}
	/*
	 * libfabric 1.17's shm applies an atomic after it gave its command's
	 * slot back to the sender (smr_progress_cmd_atomic discards the slot,
	 * then reads the value from it): under a stream of atomic writes the
	 * value of a later one lands (data/atomic_write_full_queue: 1121 of
	 * 2048 values wrong, each the next write's).  Rewritten in 1.18.
	 */
	if (p->has_atomic && strcmp(p->info->fabric_attr->prov_name, "shm") == 0 &&
	    FI_VERSION_LT(fi_version(), FI_VERSION(1, 18))) {
		FAB_LOG_NOTICE("libfabric %u.%u's shm applies atomics from a freed command slot: "
			       "an atomic write is an 8-byte write here",
			       FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
		p->has_atomic = false;
	}
	/*
	 * shm (libfabric 1.17 to 2.x at least) keeps the name of every
	 * endpoint the process opens in a list with a pointer to the
	 * endpoint's region, and leaves it there when the endpoint closes and
	 * its region is unmapped.  An insert of that name into an AV of the
	 * same process takes the first entry of the list: when the name was
	 * opened again (a listener at the same address and port), the dead
	 * one.  A client of this process then writes to freed memory (spins or
	 * crashes: api/conn_cfg_getters_and_effects).  shm maps a name it does
	 * not find in that list from its file, and the C library's shm_open()
	 * ignores leading slashes: "fi_shm:///name" reaches the file of
	 * "fi_shm://name" without the list (fabric_rdm.c: fab_port_av_add).
	 */
	p->respell_reused = strcmp(p->info->fabric_attr->prov_name, "shm") == 0;
	return 0;
}

/* fab_peer_caps -- the device-dependent RPMA_PROV_CAP_* bits; log what the peer can do */
static uint64_t fab_peer_caps(const struct fab_peer *p, const struct fab_dev *d)
{
	uint64_t caps = 0;
	if (p->has_atomic)
		caps |= RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE;
	if (p->rx_cq_data || p->imm_emulated)
		caps |= RPMA_PROV_CAP_IMM_CONSUMES_RECV;
	FAB_LOG_INFO("peer on %s/%s/%s (%s%s): mr_mode 0x%lx (%s addressing, %s keys), atomic %s, "
		     "persistent flush %s, delivery complete %s, write with immediate data %s",
		     d->prov_name, d->fabric_name, d->domain_name,
		     p->rdm ? "reliable datagrams" : "message endpoints",
		     !p->rdm				  ? ""
		     : (p->info->caps & FI_DIRECTED_RECV) ? ", directed receives"
							  : ", no directed receives",
		     (unsigned long)p->mr_mode, p->va_addressing ? "virtual" : "offset",
		     p->prov_keys ? "provider" : "our", p->has_atomic ? "native" : "emulated",
		     p->has_commit ? "FI_COMMIT_COMPLETE" : "not supported",
		     p->has_delivery ? "yes" : "no",
		     p->rx_cq_data     ? "native (takes a receive)"
		     : p->imm_emulated ? "write + send (takes a receive)"
				       : "native (takes no receive)");
	if (!p->rx_cq_data && !p->imm_emulated)
		FAB_LOG_NOTICE("a write with immediate data takes no receive on this transport");
	if (!p->has_atomic && !p->in_order && !p->has_fence && !p->atomic_waits)
		FAB_LOG_NOTICE("atomic write is not ordered after flushes on this transport");
	return caps;
}

/* fab_peer_init -- open the fabric and the domain; find out what they can do */
int fab_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	struct fab_peer *p = fab_peer(peer);
	const struct fab_dev *d = dev;

	int ret = fab_peer_getinfo(p, d);
	if (ret)
		return ret;
	fab_peer_learn(p, d);
	ret = fab_peer_completions(p, d);
	if (ret)
		goto err_info;
	ret = fab_peer_open(p);
	if (ret)
		goto err_info;
	ret = fab_progress_start(p);
	if (ret)
		goto err_domain;

	ret = fab_rdm_peer_init(p);
	if (ret) {
		fab_progress_stop(p);
		goto err_domain;
	}
	pthread_mutex_init(&p->ceq.lock, NULL);
	fab_cqg_peer_init(p);
	*caps = fab_peer_caps(p, d);
	return 0;

err_domain:
	fi_close(&p->domain->fid);
	fi_close(&p->fabric->fid);
err_info:
	fi_freeinfo(p->info);
	p->info = NULL;
	return ret;
}

/* fab_peer_fini -- stop the progress thread, close the domain and the fabric */
int fab_peer_fini(struct rpma_peer *peer)
{
	struct fab_peer *p = fab_peer(peer);
	int ret = 0;
	uint64_t refused = atomic_load(&p->refused_reqs), failed = atomic_load(&p->access_errors);
	if (refused || failed)
		FAB_LOG_NOTICE("peer closed: %llu connection requests refused for their envelope, "
			       "%llu failed operations",
			       (unsigned long long)refused, (unsigned long long)failed);
	fab_ceq_fini(p);
	fab_progress_stop(p);
	pthread_mutex_destroy(&p->ceq.lock);
	fab_cqg_peer_fini(p);
	fab_rdm_peer_fini(p);
	int r = fi_close(&p->domain->fid);
	if (r) {
		FAB_LOG_FI(r, "fi_close(domain)");
		ret = RPMA_E_PROVIDER;
	}
	r = fi_close(&p->fabric->fid);
	if (r && !ret) {
		FAB_LOG_FI(r, "fi_close(fabric)");
		ret = RPMA_E_PROVIDER;
	}
	fi_freeinfo(p->info);
	p->info = NULL;
	return ret;
}
