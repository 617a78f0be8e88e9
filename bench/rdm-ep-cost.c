/* SPDX-License-Identifier: BSD-3-Clause */
/* rdm-ep-cost.c -- what one raw libfabric FI_EP_RDM endpoint costs in heap, open and closed */

/*
 * The fabric provider gives every reliable-datagram connection an endpoint
 * of its own; this measures, with nothing of librpma around it, what such an
 * endpoint costs the process in heap (mallinfo2: uordblks + hblkhd) once
 * enabled, and what of it is still in use after it closed.  It opens one
 * fabric and one domain (or, with -D, a domain per endpoint, closed with
 * it), then N endpoints, each with its own CQ and AV as the provider does:
 * one after the other (each closed before the next opens), or with -t all
 * of them together and then all closed.  Nothing is sent: the figures are
 * those of fi_enable(), where rxm fills its shared receive context.
 *
 * Usage: rdm-ep-cost [-p PROVIDER] [-n N] [-t] [-D]
 *        (PROVIDER: a libfabric provider name; default "tcp;ofi_rxm")
 */

#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define MAX_EPS 64

struct rdm_ep {
	struct fid_domain *dom; /* only with -D */
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
};

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fi_info *info;
static bool own_domain;

/* heap_kib -- heap in use in KiB */
static long heap_kib(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (long)((mi.uordblks + mi.hblkhd) / 1024);
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "rdm-ep-cost: %s: %s\n", what, fi_strerror(-ret));
	return -1;
}

/* ep_open -- an enabled endpoint with its own CQ and AV */
static int ep_open(struct rdm_ep *e)
{
	struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_DATA, .size = 64};
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	struct fid_domain *d = domain;
	int ret;

	memset(e, 0, sizeof(*e));
	if (own_domain) {
		if ((ret = fi_domain(fabric, info, &e->dom, NULL)))
			return fail("fi_domain", ret);
		d = e->dom;
	}
	if ((ret = fi_cq_open(d, &cq_attr, &e->cq, NULL)))
		return fail("fi_cq_open", ret);
	if ((ret = fi_av_open(d, &av_attr, &e->av, NULL)))
		return fail("fi_av_open", ret);
	if ((ret = fi_endpoint(d, info, &e->ep, NULL)))
		return fail("fi_endpoint", ret);
	if ((ret = fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV)))
		return fail("fi_ep_bind(cq)", ret);
	if ((ret = fi_ep_bind(e->ep, &e->av->fid, 0)))
		return fail("fi_ep_bind(av)", ret);
	/* a stale shm name of this pid: -FI_EBUSY once, then the name is free (bench-fabric.c) */
	if ((ret = fi_enable(e->ep)) == -FI_EBUSY)
		ret = fi_enable(e->ep);
	if (ret)
		return fail("fi_enable", ret);
	return 0;
}

/* ep_close -- close what ep_open made, the endpoint first */
static void ep_close(struct rdm_ep *e)
{
	struct fid *f[] = {e->ep ? &e->ep->fid : NULL, e->av ? &e->av->fid : NULL,
			   e->cq ? &e->cq->fid : NULL, e->dom ? &e->dom->fid : NULL};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i])
			(void)fi_close(f[i]);
	memset(e, 0, sizeof(*e));
}

int main(int argc, char *argv[])
{
	const char *prov = "tcp;ofi_rxm";
	unsigned n = 3;
	bool together = false;
	struct rdm_ep eps[MAX_EPS];
	int opt, ret, rc = 1;

	while ((opt = getopt(argc, argv, "p:n:tDh")) != -1) {
		switch (opt) {
		case 'p':
			prov = optarg;
			break;
		case 'n':
			n = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 't':
			together = true;
			break;
		case 'D':
			own_domain = true;
			break;
		default:
			fprintf(stderr,
				"usage: rdm-ep-cost [-p PROVIDER] [-n N (1-%d)] [-t] [-D]\n",
				MAX_EPS);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 1 || n > MAX_EPS) {
		fprintf(stderr, "rdm-ep-cost: -n takes 1 to %d\n", MAX_EPS);
		return 2;
	}

	struct fi_info *hints = fi_allocinfo();
	if (hints == NULL)
		return 1;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode =
		FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	/* on 127.0.0.1, any port; shm takes that as the name of every endpoint: it names its own */
	bool named = strcmp(prov, "shm") != 0;
	ret = fi_getinfo(FI_VERSION(1, 14), named ? "127.0.0.1" : NULL, named ? "0" : NULL,
			 named ? FI_SOURCE : 0, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		fail("fi_getinfo", ret);
		return 1;
	}
	memset(eps, 0, sizeof(eps));
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL))) {
		fail("fi_fabric", ret);
		goto out;
	}
	if (!own_domain && (ret = fi_domain(fabric, info, &domain, NULL))) {
		fail("fi_domain", ret);
		goto out;
	}
	printf("provider %s, libfabric %u.%u, %s, %s\n", info->fabric_attr->prov_name,
	       FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
	       own_domain ? "a domain per endpoint" : "one domain",
	       together ? "all open together" : "one after the other");
	long base = heap_kib(), peak = base;
	printf("heap in use before the endpoints: %ld KiB\n", base);
	for (unsigned i = 0; i < n; i++) {
		if (ep_open(&eps[i]))
			goto out;
		long h = heap_kib();
		peak = h > peak ? h : peak;
		printf("endpoint %u enabled: %ld KiB (+%ld)\n", i + 1, h, h - base);
		if (!together) {
			ep_close(&eps[i]);
			h = heap_kib();
			printf("endpoint %u closed:  %ld KiB (+%ld)\n", i + 1, h, h - base);
		}
	}
	if (together)
		for (unsigned i = 0; i < n; i++)
			ep_close(&eps[i]);
	long end = heap_kib();
	if (together)
		printf("all %u closed: %ld KiB (+%ld)\n", n, end, end - base);
	printf("per endpoint at the peak: %ld KiB; kept after closing: %ld KiB\n",
	       (peak - base) / (together ? n : 1), end - base);
	rc = 0;
out:
	for (unsigned i = 0; i < n; i++)
		ep_close(&eps[i]);
	if (domain)
		(void)fi_close(&domain->fid);
	if (fabric)
		(void)fi_close(&fabric->fid);
	fi_freeinfo(info);
	return rc;
}
