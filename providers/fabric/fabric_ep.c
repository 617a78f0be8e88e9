/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_ep.c -- the listening endpoint (libfabric passive endpoint) */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric.h"

/* fab_info_hints -- hints that ask for the peer's provider, fabric and domain */
struct fi_info *fab_info_hints(const struct fab_peer *peer)
{
	struct fi_info *h = fi_dupinfo(peer->info);
	if (h == NULL)
		return NULL;
	free(h->src_addr);
	h->src_addr = NULL;
	h->src_addrlen = 0;
	free(h->dest_addr);
	h->dest_addr = NULL;
	h->dest_addrlen = 0;
	h->addr_format = FI_FORMAT_UNSPEC;
	h->handle = NULL;
	return h;
}

/* fab_eq_open -- an event queue of size entries with a wait fd */
int fab_eq_open(struct fab_peer *peer, size_t size, struct fid_eq **eq)
{
	struct fi_eq_attr attr = {.size = size, .wait_obj = FI_WAIT_FD};
	int ret = fi_eq_open(peer->fabric, &attr, eq, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_eq_open()");
		return fab_err(ret);
	}
	return 0;
}

/* fab_getinfo -- resolve node:service with the peer's hints (any fabric as a fallback) */
static int fab_getinfo(struct fab_peer *peer, const char *node, const char *service, uint64_t flags,
		       struct fi_info **info)
{
	struct fi_info *h = fab_info_hints(peer);
	if (h == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = fi_getinfo(FAB_FI_VERSION, node, service, flags, h, info);
	if (ret == -FI_ENODATA) {
		/* the address may belong to another fabric (e.g. a wildcard address) */
		free(h->fabric_attr->name);
		h->fabric_attr->name = NULL;
		free(h->domain_attr->name);
		h->domain_attr->name = NULL;
		ret = fi_getinfo(FAB_FI_VERSION, node, service, flags, h, info);
	}
	fi_freeinfo(h);
	if (ret) {
		FAB_LOG_ERROR("fi_getinfo(%s:%s) failed: %s", node, service, fi_strerror(-ret));
		return ret == -FI_ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	return 0;
}

/* fab_conn_getinfo -- resolve a destination (for conn_req_new) */
int fab_conn_getinfo(struct fab_peer *peer, const char *addr, const char *port,
		     struct fi_info **info)
{
	return fab_getinfo(peer, addr, port, 0, info);
}

/*
 * fab_addr_str -- the source address of a request, as the transport reports
 * it (the peer's socket address on tcp; on sockets the address the request
 * itself claims)
 */
static void fab_addr_str(const struct fi_info *info, char *out, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "";
	const struct sockaddr *sa = info ? info->dest_addr : NULL;
	if (sa && sa->sa_family == AF_INET && info->dest_addrlen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;
		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(out, size, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
	} else if (sa && sa->sa_family == AF_INET6 &&
		   info->dest_addrlen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(out, size, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
	} else {
		snprintf(out, size, "an unknown address");
	}
}

/*
 * fab_refuse_request -- a request without our envelope never reaches the
 * application: refuse it with one notice naming its source
 */
static void fab_refuse_request(struct fab_ep *e, struct fi_info *info, enum fab_env_status st,
			       unsigned version, size_t len)
{
	char from[INET6_ADDRSTRLEN + 16];
	fab_addr_str(info, from, sizeof(from));
	uint64_t n = atomic_fetch_add(&e->peer->refused_reqs, 1) + 1;
	if (st == FAB_ENV_OTHER_MAJOR)
		FAB_LOG_NOTICE("refused a connection request from %s: it speaks version %u.%u of "
			       "the fabric provider's connection protocol, this library %u.%u "
			       "(%llu refused so far)",
			       from, version >> 4, version & 0xf, FAB_ENV_MAJOR, FAB_ENV_MINOR,
			       (unsigned long long)n);
	else
		FAB_LOG_NOTICE("refused a connection request from %s: %zu bytes of private data "
			       "with %s (%llu refused so far)",
			       from, len, fab_env_status_str(st), (unsigned long long)n);
	int r = fab_reject(e->peer, e->pep, info->handle);
	if (r)
		FAB_LOG_FI(r, "fi_reject()");
	fi_freeinfo(info);
}

/* fab_drain_pep -- turn the listening EQ's entries into queued connection requests */
static void fab_drain_pep(struct fab_source *src)
{
	struct fab_ep *e = src->arg;
	union {
		struct fi_eq_cm_entry cm;
		char raw[FAB_EQ_ENTRY_SIZE];
	} buf;
	for (;;) {
		uint32_t event = 0;
		ssize_t n = fi_eq_read(e->eq, &event, &buf, sizeof(buf), 0);
		if (n == -FI_EAGAIN)
			break;
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err = {0};
			ssize_t r = fi_eq_readerr(e->eq, &err, 0);
			if (r < 0) {
				FAB_LOG_FI(r, "fi_eq_readerr()");
				break;
			}
			FAB_LOG_ERROR("listening endpoint: %s", fi_strerror(err.err));
			fab_evq_push(&e->reqs, FAB_EV_ERROR, NULL, 0, NULL);
			continue;
		}
		if (n < 0) {
			FAB_LOG_FI(n, "fi_eq_read()");
			break;
		}
		if (event != FI_CONNREQ) {
			FAB_LOG_WARNING("listening endpoint: unexpected event %u", event);
			fab_evq_push(&e->reqs, FAB_EV_ERROR, NULL, 0, NULL);
			continue;
		}
		size_t len = (size_t)n > sizeof(buf.cm) ? (size_t)n - sizeof(buf.cm) : 0;
		const void *user;
		size_t user_len;
		unsigned version;
		enum fab_env_status st =
			fab_env_decode(buf.cm.data, len, &user, &user_len, &version);
		if (st != FAB_ENV_OK) {
			fab_refuse_request(e, buf.cm.info, st, version, len);
			continue;
		}
		if (fab_evq_push(&e->reqs, FAB_EV_CONNREQ, user, user_len, buf.cm.info)) {
			/* no memory to queue it: refuse it, so the client is not left waiting */
			int r = fi_reject(e->pep, buf.cm.info->handle, NULL, 0);
			if (r)
				FAB_LOG_FI(r, "fi_reject()");
			fi_freeinfo(buf.cm.info);
		}
	}
}

/* fab_ep_listen -- listen for connection requests on addr:port */
int fab_ep_listen(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr, const char *port)
{
	struct fab_peer *p = fab_peer(peer);
	struct fab_ep *e = fab_ep(ep);
	struct fi_info *info = NULL;
	e->peer = p;
	if (p->rdm)
		return fab_rdm_listen(p, e, addr, port);
	int ret = fab_getinfo(p, addr, port, FI_SOURCE, &info);
	if (ret)
		return ret;
	ret = fab_eq_open(p, 64, &e->eq);
	if (ret)
		goto err_info;
	ret = fi_passive_ep(p->fabric, info, &e->pep, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_passive_ep()");
		ret = fab_err(ret);
		goto err_eq;
	}
	ret = fi_pep_bind(e->pep, &e->eq->fid, 0);
	if (ret) {
		FAB_LOG_FI(ret, "fi_pep_bind()");
		ret = fab_err(ret);
		goto err_pep;
	}
	ret = fi_listen(e->pep);
	if (ret) {
		FAB_LOG_ERROR("fi_listen(%s:%s) failed: %s", addr, port, fi_strerror(-ret));
		ret = RPMA_E_PROVIDER;
		goto err_pep;
	}
	ret = fab_evq_init(&e->reqs, false);
	if (ret)
		goto err_pep;
	fab_source_init(&e->src, p, &e->eq->fid, fab_drain_pep, e);
	fab_source_add(p, &e->src);
	e->info = info;
	FAB_LOG_NOTICE("waiting for incoming connections on %s:%s", addr, port);
	return 0;

err_pep:
	fi_close(&e->pep->fid);
	e->pep = NULL;
err_eq:
	fi_close(&e->eq->fid);
	e->eq = NULL;
err_info:
	fi_freeinfo(info);
	return ret;
}

/* fab_ep_shutdown -- stop listening; requests nobody took are rejected */
int fab_ep_shutdown(struct rpma_ep *ep)
{
	struct fab_ep *e = fab_ep(ep);
	int ret = 0;
	if (e->rdm)
		return fab_rdm_ep_shutdown(e);
	fab_source_remove(e->peer, &e->src);
	fab_source_fini(&e->src);
	for (struct fab_event *ev = e->reqs.head; ev; ev = ev->next)
		if (ev->kind == FAB_EV_CONNREQ && ev->info)
			(void)fab_reject(e->peer, e->pep, ev->info->handle);
	fab_evq_fini(&e->reqs);
	int r = fi_close(&e->pep->fid);
	if (r) {
		FAB_LOG_FI(r, "fi_close(pep)");
		ret = RPMA_E_PROVIDER;
	}
	r = fi_close(&e->eq->fid);
	if (r && !ret) {
		FAB_LOG_FI(r, "fi_close(eq)");
		ret = RPMA_E_PROVIDER;
	}
	fi_freeinfo(e->info);
	e->info = NULL;
	return ret;
}

/* fab_ep_get_fd -- readable while a connection request waits */
int fab_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	*fd = atomic_load(&fab_ep(ep)->reqs.efd);
	return 0;
}

/* fab_ep_next_conn_req -- take the next request and build its transport */
int fab_ep_next_conn_req(struct rpma_ep *ep, struct rpma_conn_req *req,
			 const struct rpma_conn_setup *setup, struct rpma_conn_private_data *pdata)
{
	struct fab_ep *e = fab_ep(ep);
	struct fab_event *ev = NULL;
	if (e->rdm)
		return fab_rdm_next_conn_req(e, fab_req(req), setup, pdata);
	int ret = fab_evq_pop_req(&e->reqs, &ev);
	if (ret)
		return ret;
	struct fab_conn *c = fab_req(req);
	c->pep = e->pep;
	ret = fab_conn_build(e->peer, c, ev->info, true, setup);
	if (ret) {
		(void)fab_reject(e->peer, e->pep, ev->info->handle);
		fab_event_free(ev);
		return ret;
	}
	ev->info = NULL; /* the connection owns it now */
	fab_event_take_pdata(ev, pdata);
	return 0;
}
