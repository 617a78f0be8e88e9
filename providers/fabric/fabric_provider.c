/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_provider.c -- the libfabric provider's table, devices and error translation */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"

/*
 * fab_test_us -- a testing variable of microseconds (1..100000): its value,
 * 0 when unset or not such a number (logged); a set one is logged with what
 * it does
 */
unsigned fab_test_us(const char *name, const char *what)
{
	const char *v = getenv(name);
	if (v == NULL || *v == '\0')
		return 0;
	char *end;
	errno = 0;
	unsigned long us = strtoul(v, &end, 10);
	if (errno || *end != '\0' || us < 1 || us > 100000) {
		FAB_LOG_WARNING("%s=\"%s\" ignored: 1..100000 expected", name, v);
		return 0;
	}
	FAB_LOG_NOTICE("%s=%lu: %s (testing)", name, us, what);
	return (unsigned)us;
}

/* fab_err -- translate a negative libfabric error into an RPMA_E_* code */
int fab_err(int fi_ret)
{
	switch (-fi_ret) {
	case FI_ENOMEM:
		return RPMA_E_NOMEM;
	case FI_EINVAL:
		return RPMA_E_INVAL;
	case FI_ENOSYS:
	case FI_EOPNOTSUPP:
	case FI_ENODATA:
		return RPMA_E_NOSUPP;
	case FI_EAGAIN:
		return RPMA_E_AGAIN;
	default:
		return RPMA_E_PROVIDER;
	}
}

/* fab_now_ns -- the monotonic clock in nanoseconds */
uint64_t fab_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* fab_rank_rdm -- the same for reliable-datagram endpoints */
static int fab_rank_rdm(const char *name)
{
	/* layered over another provider: after the native ones, shm (one node only) last */
	if (strstr(name, "ofi_rxm") != NULL)
		return strncmp(name, "verbs", 5) == 0 ? 20 : 21;
	if (strstr(name, "ofi_rxd") != NULL)
		return 30;
	if (strcmp(name, "shm") == 0)
		return 40;
	if (strcmp(name, "sockets") == 0)
		return 50;
	return 10; /* efa, cxi, psm3, opx, ...: native reliable datagrams */
}

/* fab_rank -- how much we prefer a libfabric provider when FI_PROVIDER does not choose */
static int fab_rank(const struct fi_info *fi)
{
	const char *name = fi->fabric_attr->prov_name;
	if (name != NULL && fi->ep_attr->type == FI_EP_RDM)
		return fab_rank_rdm(name);
	if (name == NULL || strchr(name, ';') != NULL)
		return 100; /* layered (utility) providers are not MSG cores */
	if (strcmp(name, "verbs") == 0)
		return 0;
	if (strcmp(name, "tcp") == 0)
		return 1;
	if (strcmp(name, "sockets") == 0)
		return 2;
	/* "net" (experimental in 1.17): its wait fd is always readable */
	if (strcmp(name, "net") == 0)
		return 50;
	return 10;
}

/* fab_pick -- the entry of list of type to use (the first one with the best rank) */
static struct fi_info *fab_pick(struct fi_info *list, enum fi_ep_type type)
{
	struct fi_info *best = NULL;
	for (struct fi_info *fi = list; fi != NULL; fi = fi->next) {
		if (fi->ep_attr->type != type || !fab_entry_tags_fit(fi))
			continue;
		if (best == NULL || fab_rank(fi) < fab_rank(best))
			best = fi;
	}
	return best;
}

/* fab_dev_free -- release a device */
static void fab_dev_free(struct fab_dev *d)
{
	if (d == NULL)
		return;
	free(d->addr);
	free(d->prov_name);
	free(d->fabric_name);
	free(d->domain_name);
	free(d);
}

/*
 * The devices looked up so far, one per (address, type): looking the same
 * address up again returns the same device, so that the core hands out the
 * same handle and a program that asks per connection does not grow.  A
 * device stays until the core gives it back at unload (fab_device_put).
 */
static pthread_mutex_t fab_devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fab_dev *fab_devs;

/* fab_dev_find_locked -- the device of (addr, type) looked up before, or NULL (lock held) */
static struct fab_dev *fab_dev_find_locked(const char *addr, int type)
{
	for (struct fab_dev *d = fab_devs; d != NULL; d = d->next) {
		if (d->type == type && strcmp(d->addr, addr) == 0)
			return d;
	}
	return NULL;
}

/*
 * Memory registration cache: libfabric's verbs provider caches registrations
 * and registers every cached region for local write and remote read, write
 * and atomics, whatever access was asked for, and hands out one key for two
 * registrations of the same memory; librpma promises that a region is
 * reachable only as its usage says, and that every registration has a key of
 * its own.  libfabric reads the setting only from the environment, and
 * setenv() is safe only while no other thread may read it: librpma.so.0's
 * constructor sets FI_MR_CACHE_MAX_COUNT=0 where unset when the process has
 * a single thread (configure's RPMA_PROVIDER_ENV_DEFAULTS, core/registry.c).
 * When it could not, the first lookup of a device served by libfabric's
 * verbs warns (fab_env_check).
 */

/* fab_env_check -- warn once when libfabric's verbs runs with its registration cache */
static void fab_env_check(const char *prov_name)
{
	static atomic_bool warned;
	if (strcmp(prov_name, "verbs") != 0)
		return;
	const char *v = getenv("FI_MR_CACHE_MAX_COUNT");
	if (v != NULL) {
		if (strcmp(v, "0") != 0)
			FAB_LOG_INFO(
				"libfabric's registration cache is on: FI_MR_CACHE_MAX_COUNT=%s",
				v);
		return;
	}
	if (!atomic_exchange(&warned, true))
		FAB_LOG_WARNING("libfabric's registration cache is on (the library was loaded "
				"while other threads ran, so FI_MR_CACHE_MAX_COUNT was left "
				"unset): regions get every access and may share keys; set "
				"FI_MR_CACHE_MAX_COUNT=0 to turn it off");
}

/* fab_ep_type_name -- a short name of an endpoint type for log messages */
static const char *fab_ep_type_name(enum fi_ep_type t)
{
	switch (t) {
	case FI_EP_MSG:
		return "msg";
	case FI_EP_RDM:
		return "rdm";
	case FI_EP_DGRAM:
		return "dgram";
	default:
		return "other";
	}
}

/*
 * fab_refusal -- log, at the default level, why no device serves addr: what
 * was asked (a message endpoint with send/receive and RMA, and FI_PROVIDER
 * when set) and what libfabric offers for the address without those
 * requirements (provider and endpoint type of each distinct entry)
 */
static __attribute__((cold)) void fab_refusal(const char *addr, uint64_t flags, const char *why,
					      const char *wanted)
{
	char offered[256] = "";
	size_t used = 0;
	struct fi_info *all = NULL;
	if (fi_getinfo(FAB_FI_VERSION, addr, NULL, flags, NULL, &all) == 0) {
		for (struct fi_info *fi = all; fi != NULL; fi = fi->next) {
			const char *pn =
				fi->fabric_attr->prov_name ? fi->fabric_attr->prov_name : "?";
			/* each (provider, type) once */
			bool seen = false;
			for (struct fi_info *f = all; f != fi && !seen; f = f->next) {
				const char *fpn =
					f->fabric_attr->prov_name ? f->fabric_attr->prov_name : "?";
				seen = f->ep_attr->type == fi->ep_attr->type &&
				       strcmp(fpn, pn) == 0;
			}
			if (seen)
				continue;
			int n = snprintf(offered + used, sizeof(offered) - used, "%s%s (%s)",
					 used ? ", " : "", pn, fab_ep_type_name(fi->ep_attr->type));
			if (n < 0 || (size_t)n >= sizeof(offered) - used)
				break;
			used += (size_t)n;
		}
		fi_freeinfo(all);
	}
	const char *fp = getenv("FI_PROVIDER");
	FAB_LOG_WARNING("no libfabric provider%s%s offers %s with send/receive and RMA for the %s "
			"address %s (%s); libfabric offers: %s",
			fp ? " of FI_PROVIDER=" : "", fp ? fp : "", wanted,
			(flags & FI_SOURCE) ? "local" : "remote", addr, why,
			used ? offered : "nothing for this address");
}

/*
 * fab_device_find -- the entries of endpoint type ep_type serving addr
 * (*list NULL: none, *why says why)
 */
static int fab_device_find(const char *addr, uint64_t flags, enum fi_ep_type ep_type,
			   struct fi_info **list, struct fi_info **fi, const char **why)
{
	struct fi_info *hints = fi_allocinfo();
	*list = *fi = NULL;
	if (hints == NULL) {
		FAB_LOG_ERROR("fi_allocinfo() failed");
		return RPMA_E_NOMEM;
	}
	hints->ep_attr->type = ep_type;
	/* over reliable datagrams the connection protocol speaks in tagged messages */
	hints->caps = FI_MSG | FI_RMA | (ep_type == FI_EP_RDM ? FI_TAGGED : 0);
	hints->mode = FAB_HINTS_MODE(ep_type);
	hints->domain_attr->mr_mode =
		FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	int ret = fi_getinfo(FAB_FI_VERSION, addr, NULL, flags, hints, list);
	fi_freeinfo(hints);
	if (ret) {
		*list = NULL;
		*why = fi_strerror(-ret);
		return 0;
	}
	*fi = fab_pick(*list, ep_type);
	if (*fi == NULL) {
		fi_freeinfo(*list);
		*list = NULL;
		*why = ep_type == FI_EP_RDM ? "no entry of type FI_EP_RDM"
					    : "no entry of type FI_EP_MSG";
	}
	return 0;
}

/*
 * fab_device_lookup -- ask libfabric for the provider, fabric and domain
 * serving addr: message endpoints, else reliable datagrams
 * (RPMA_FABRIC_EP_TYPE: only the one named)
 */
static int fab_device_lookup(const char *addr, enum rpma_util_ibv_context_type type,
			     struct fab_dev **dev)
{
	struct fi_info *list = NULL, *fi = NULL;
	uint64_t flags = type == RPMA_UTIL_IBV_CONTEXT_LOCAL ? FI_SOURCE : 0;
	const char *want = fab_ep_type_env();
	const char *why = "";
	if (want && strcmp(want, "msg") != 0 && strcmp(want, "rdm") != 0) {
		FAB_LOG_ERROR("RPMA_FABRIC_EP_TYPE=%s: not msg, rdm or auto", want);
		return RPMA_E_INVAL;
	}
	int ret = 0;
	if (want == NULL || strcmp(want, "msg") == 0)
		ret = fab_device_find(addr, flags, FI_EP_MSG, &list, &fi, &why);
	/*
	 * reliable datagrams are tried by themselves only when FI_PROVIDER
	 * names the libfabric providers: shm takes any string as an address,
	 * so an address no message endpoint serves would otherwise land on shm
	 * instead of being refused
	 */
	bool rdm_auto = getenv("FI_PROVIDER") != NULL;
	if (ret == 0 && fi == NULL &&
	    ((want == NULL && rdm_auto) || (want && strcmp(want, "rdm") == 0)))
		ret = fab_device_find(addr, flags, FI_EP_RDM, &list, &fi, &why);
	if (ret)
		return ret;
	if (fi == NULL) {
		fab_refusal(addr, flags, why,
			    want == NULL && rdm_auto ? "a message or reliable-datagram endpoint"
			    : want == NULL	     ? "a message endpoint (FI_EP_MSG)"
			    : strcmp(want, "msg") == 0
				    ? "a message endpoint (FI_EP_MSG)"
				    : "a reliable-datagram endpoint (FI_EP_RDM)");
		return RPMA_E_PROVIDER;
	}
	struct fab_dev *d = calloc(1, sizeof(*d));
	if (d == NULL) {
		fi_freeinfo(list);
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	d->type = (int)type;
	d->ep_type = (int)fi->ep_attr->type;
	d->addr = strdup(addr);
	d->prov_name = strdup(fi->fabric_attr->prov_name);
	d->fabric_name = strdup(fi->fabric_attr->name);
	d->domain_name = strdup(fi->domain_attr->name);
	fi_freeinfo(list);
	if (!d->addr || !d->prov_name || !d->fabric_name || !d->domain_name) {
		fab_dev_free(d);
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	RPMA_LOG_INFO("fabric: %s is served by libfabric provider %s, fabric %s, domain %s (%s)",
		      addr, d->prov_name, d->fabric_name, d->domain_name,
		      d->ep_type == FI_EP_RDM ? "reliable datagrams" : "message endpoints");
	fab_env_check(d->prov_name);
	*dev = d;
	return 0;
}

/* fab_device_get -- the device serving addr: the one found before for (addr, type), or a new one */
static int fab_device_get(const char *addr, enum rpma_util_ibv_context_type type, void **dev)
{
	pthread_mutex_lock(&fab_devs_lock);
	struct fab_dev *d = fab_dev_find_locked(addr, (int)type);
	pthread_mutex_unlock(&fab_devs_lock);
	if (d != NULL) {
		*dev = d;
		return 0;
	}

	/* looked up unlocked (libfabric may take long); a racing lookup of the same address loses */
	struct fab_dev *nd = NULL;
	int ret = fab_device_lookup(addr, type, &nd);
	if (ret)
		return ret;
	pthread_mutex_lock(&fab_devs_lock);
	d = fab_dev_find_locked(addr, (int)type);
	if (d == NULL) {
		nd->next = fab_devs;
		fab_devs = nd;
		d = nd;
		nd = NULL;
	}
	pthread_mutex_unlock(&fab_devs_lock);
	fab_dev_free(nd);
	*dev = d;
	return 0;
}

/* fab_device_put -- the core gives a device back (at unload): forget and release it */
static void fab_device_put(void *dev)
{
	pthread_mutex_lock(&fab_devs_lock);
	for (struct fab_dev **pp = &fab_devs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == dev) {
			*pp = ((struct fab_dev *)dev)->next;
			break;
		}
	}
	pthread_mutex_unlock(&fab_devs_lock);
	fab_dev_free(dev);
}

/*
 * fab_peer_max_msg_size -- the largest length of one operation: the
 * negotiated endpoint attribute max_msg_size (0 there: no limit stated)
 */
static size_t fab_peer_max_msg_size(const struct rpma_peer *peer)
{
	const struct fi_info *info = fab_peer(peer)->info;
	if (info == NULL || info->ep_attr == NULL)
		return 0;
	return info->ep_attr->max_msg_size;
}

/*
 * fab_peer_describe -- the libfabric provider, endpoint type, fabric and
 * domain the peer negotiated, and libfabric's version
 */
static void fab_peer_describe(const struct rpma_peer *peer, char *buf, size_t size)
{
	const struct fi_info *info = fab_peer(peer)->info;
	if (info == NULL || info->fabric_attr == NULL) {
		snprintf(buf, size, "libfabric %u.%u", FI_MAJOR(fi_version()),
			 FI_MINOR(fi_version()));
		return;
	}
	const char *dom =
		info->domain_attr && info->domain_attr->name ? info->domain_attr->name : "?";
	snprintf(buf, size,
		 "libfabric %u.%u, provider %s, %s endpoints, fabric %s, domain %s, "
		 "private data up to %u bytes (less where the transport carries less)",
		 FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
		 info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?",
		 info->ep_attr && info->ep_attr->type == FI_EP_RDM ? "FI_EP_RDM" : "FI_EP_MSG",
		 info->fabric_attr->name ? info->fabric_attr->name : "?", dom,
		 (unsigned)FAB_PDATA_API_MAX);
}

static const struct rpma_provider_ops fab_ops = {
	.device_get = fab_device_get,
	.device_put = fab_device_put,
	.device_is_odp_capable = NULL,
	.peer_init = fab_peer_init,
	.peer_fini = fab_peer_fini,
	.peer_max_msg_size = fab_peer_max_msg_size,
	.peer_describe = fab_peer_describe,
	.mr_reg = fab_mr_reg,
	.mr_dereg = fab_mr_dereg,
	/* .mr_advise: none, libfabric has no counterpart of ibv_advise_mr() (core: RPMA_E_NOSUPP) */
	.ep_listen = fab_ep_listen,
	.ep_shutdown = fab_ep_shutdown,
	.ep_get_fd = fab_ep_get_fd,
	.ep_next_conn_req = fab_ep_next_conn_req,
	.conn_req_new = fab_conn_req_new,
	.conn_req_delete = fab_conn_req_delete,
	.conn_req_connect = fab_conn_req_connect,
	.conn_req_recv = fab_conn_req_recv,
	.conn_get_event_fd = fab_conn_get_event_fd,
	.conn_next_event = fab_conn_next_event,
	.conn_disconnect = fab_conn_disconnect,
	.conn_delete = fab_conn_delete,
	.conn_get_qp_num = fab_conn_get_qp_num,
	.conn_get_compl_fd = fab_conn_get_compl_fd,
	.conn_wait = fab_conn_wait,
	.read = fab_read,
	.write = fab_write,
	.write_imm = fab_write_imm,
	.atomic_write = fab_atomic_write,
	.flush = fab_flush,
	.send = fab_send,
	.recv = fab_recv,
	.cq_get_fd = fab_cq_get_fd,
	.cq_wait = fab_cq_wait,
	.cq_poll = fab_cq_poll,
	.srq_new = fab_srq_new,
	.srq_delete = fab_srq_delete,
	.srq_recv = fab_srq_recv,
};

const struct rpma_provider rpma_provider_fabric = {
	.name = "fabric",
	.description = "libfabric FI_EP_MSG endpoints (tcp, sockets, verbs, ...), else FI_EP_RDM "
		       "(shm, tcp;ofi_rxm, efa, ...)",
	/* fab_flush needs no access right on the target region: no announcement */
	.caps = RPMA_PROV_CAP_NATIVE_FLUSH | RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED,
	.peer_size = sizeof(struct fab_peer),
	.mr_size = sizeof(struct fab_mr),
	.ep_size = sizeof(struct fab_ep),
	.conn_size = sizeof(struct fab_conn),
	.cq_size = sizeof(struct fab_cq),
	.srq_size = sizeof(struct fab_srq),
	.ops = &fab_ops,
};
