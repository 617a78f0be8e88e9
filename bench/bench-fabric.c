/* SPDX-License-Identifier: BSD-3-Clause */
/* bench-fabric.c -- what the two raw libfabric baselines (FI_EP_MSG, FI_EP_RDM) share */

#include "bench-fabric.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

uint64_t bfab_write_level;
static const char *bfab_write_level_name = "none";
static const char *bfab_ep_tag = "";
static char bfab_desc[200] = "libfabric (raw)";

/* bfab_err -- log a failed libfabric call */
void bfab_err(const char *call, ssize_t ret)
{
	bench_log("%s: %s (%zd)", call, fi_strerror((int)-ret), ret);
}

/* bfab_getinfo -- fi_getinfo(cfg->addr, cfg->port, flags) with hints, which it frees */
struct fi_info *bfab_getinfo(const struct bench_cfg *cfg, struct fi_info *hints, uint64_t flags)
{
	struct fi_info *info = NULL;
	int ret;

	if (hints == NULL) {
		bench_log("out of memory");
		return NULL;
	}
	ret = fi_getinfo(BFAB_VERSION, cfg->addr, cfg->port, flags, hints, &info);
	if (ret == -FI_ENODATA) /* name the provider there is none of */
		bench_log("fi_getinfo: no %s provider \"%s\" for %s:%s (%s)",
			  fi_tostr(&hints->ep_attr->type, FI_TYPE_EP_TYPE),
			  hints->fabric_attr->prov_name, cfg->addr, cfg->port, fi_strerror(-ret));
	else if (ret)
		bfab_err("fi_getinfo", ret);
	fi_freeinfo(hints);
	return ret ? NULL : info;
}

/* bfab_hints -- fi_allocinfo() with what every fi_getinfo() of a baseline asks */
struct fi_info *bfab_hints(enum fi_ep_type type, uint64_t mode, uint64_t mr_mode,
			   const char *default_prov)
{
	struct fi_info *hints = fi_allocinfo();
	const char *prov = getenv("FI_PROVIDER");

	if (hints == NULL)
		return NULL;
	hints->ep_attr->type = type;
	hints->caps = FI_MSG | FI_RMA;
	hints->mode = mode;
	hints->domain_attr->mr_mode = (int)mr_mode;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->fabric_attr->prov_name = strdup(prov && *prov ? prov : default_prov);
	if (hints->fabric_attr->prov_name == NULL) {
		fi_freeinfo(hints);
		return NULL;
	}
	return hints;
}

/* bfab_env -- take BENCH_FI_WRITE_LEVEL and start the description with ep_tag */
int bfab_env(const char *tool, const char *ep_tag)
{
	const char *level = getenv("BENCH_FI_WRITE_LEVEL");

	bfab_ep_tag = ep_tag;
	snprintf(bfab_desc, sizeof(bfab_desc), "libfabric (raw)%s", ep_tag);
	if (level == NULL || *level == '\0' || strcmp(level, "none") == 0)
		return 0;
	if (strcmp(level, "delivery") == 0) {
		bfab_write_level = FI_DELIVERY_COMPLETE;
	} else if (strcmp(level, "commit") == 0) {
		bfab_write_level = FI_COMMIT_COMPLETE;
	} else {
		fprintf(stderr, "%s: BENCH_FI_WRITE_LEVEL=%s: want none, delivery or commit\n",
			tool, level);
		return -1;
	}
	bfab_write_level_name = level;
	return 0;
}

/* bfab_describe_fabric -- the description once the provider is known */
void bfab_describe_fabric(const struct fi_info *info)
{
	snprintf(bfab_desc, sizeof(bfab_desc), "libfabric %s (raw)%s prov=%s write-level=%s",
		 fi_tostr(&(uint32_t){fi_version()}, FI_TYPE_VERSION), bfab_ep_tag,
		 info->fabric_attr->prov_name, bfab_write_level_name);
}

/* bfab_describe -- the header description */
const char *bfab_describe(void)
{
	return bfab_desc;
}

/* bfab_cq_open -- a CQ for window operations and nrecv receives, on an fd where there is one */
int bfab_cq_open(struct fid_domain *domain, unsigned window, unsigned nrecv, struct fid_cq **cq)
{
	struct fi_cq_attr cq_attr = {
		.size = 4 * (size_t)window + 2 * nrecv + 16,
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_FD,
	};
	int ret = fi_cq_open(domain, &cq_attr, cq, NULL);

	if (ret == -FI_ENOSYS || ret == -FI_EINVAL) {
		/* no fd to wait on (shm): whatever the provider has */
		cq_attr.wait_obj = FI_WAIT_UNSPEC;
		ret = fi_cq_open(domain, &cq_attr, cq, NULL);
	}
	if (ret) {
		bfab_err("fi_cq_open", ret);
		return -1;
	}
	return 0;
}

/* bfab_ep_open -- an endpoint bound to bind_first and to cq, enabled */
int bfab_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid *bind_first,
		 struct fid_cq *cq, unsigned window, unsigned nrecv, struct fid_ep **ep)
{
	int ret;

	info->tx_attr->op_flags = 0;
	if (info->tx_attr->size < 2 * (size_t)window + 4)
		info->tx_attr->size = 2 * (size_t)window + 4;
	if (info->rx_attr->size < (size_t)nrecv + 2)
		info->rx_attr->size = (size_t)nrecv + 2;
	ret = fi_endpoint(domain, info, ep, NULL);
	if (ret) {
		bfab_err("fi_endpoint", ret);
		return -1;
	}
	ret = fi_ep_bind(*ep, bind_first, 0);
	if (!ret)
		ret = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION);
	if (!ret)
		ret = fi_ep_bind(*ep, &cq->fid, FI_RECV);
	if (ret) {
		bfab_err("fi_ep_bind", ret);
		return -1;
	}
	ret = fi_enable(*ep);
	/*
	 * shm names an endpoint after the process id; a name left by a killed
	 * process whose pid this one now has makes shm refuse the enable with
	 * -FI_EBUSY after it removed the stale name: once more (as the fabric
	 * provider does, fabric_conn.c)
	 */
	if (ret == -FI_EBUSY)
		ret = fi_enable(*ep);
	if (ret) {
		bfab_err("fi_enable", ret);
		return -1;
	}
	return 0;
}

/* bfab_mr_reg -- register buf for everything; bind it where FI_MR_ENDPOINT asks */
int bfab_mr_reg(struct fid_domain *domain, const struct fi_info *info, struct fid_ep *ep, void *buf,
		size_t len, uint64_t key, struct fid_mr **mr, void **desc)
{
	uint64_t mode = (uint64_t)info->domain_attr->mr_mode;
	int ret;

	ret = fi_mr_reg(domain, buf, len,
			FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE,
			0, (mode & FI_MR_PROV_KEY) ? 0 : key, 0, mr, NULL);
	if (ret) {
		bfab_err("fi_mr_reg", ret);
		return -1;
	}
	if (mode & FI_MR_ENDPOINT) {
		ret = fi_mr_bind(*mr, &ep->fid, 0);
		if (!ret)
			ret = fi_mr_enable(*mr);
		if (ret) {
			bfab_err("fi_mr_bind/enable", ret);
			return -1;
		}
	}
	*desc = fi_mr_desc(*mr);
	return 0;
}

/* bfab_buf_setup -- the connection's buffer, laid out for the engine and registered on ep */
int bfab_buf_setup(struct bfab_conn *c, const struct fi_info *info, struct fid_ep *ep,
		   size_t slot_size, unsigned nrecv)
{
	size_t data_len = slot_size < 4096 ? 4096 : slot_size;

	c->buf_len = data_len + (2 + (size_t)nrecv) * slot_size + 64;
	c->buf = bench_alloc(c->buf_len);
	if (c->buf == NULL) {
		bench_log("cannot allocate %zu bytes", c->buf_len);
		return -1;
	}
	c->data = c->buf;
	c->base.sbuf = c->buf + data_len;
	c->base.rbuf = c->base.sbuf + 2 * slot_size;
	c->base.slot_size = slot_size;
	c->base.nrecv = nrecv;
	c->flush_dst = c->base.rbuf + (size_t)nrecv * slot_size;
	return bfab_mr_reg(c->domain, info, ep, c->buf, c->buf_len, 0x5eed, &c->mr, &c->mr_desc);
}

/* bfab_region_put -- the server's region (the data area) as BFAB_REGION_SIZE bytes */
void bfab_region_put(const struct bfab_conn *c, const struct fi_info *info, uint8_t *p)
{
	uint64_t mode = (uint64_t)info->domain_attr->mr_mode;
	/* exactly 1: the legacy FI_MR_BASIC, a name libfabric 2.x deprecates */
	bool virt = mode == 1 || (mode & FI_MR_VIRT_ADDR);
	size_t data_len = (size_t)(c->base.sbuf - c->data);

	bfab_put_u64(p, virt ? (uint64_t)(uintptr_t)c->data : 0);
	bfab_put_u64(p + 8, fi_mr_key(c->mr));
	bfab_put_u64(p + 16, data_len);
	bfab_put_u32(p + 24, virt ? BFAB_REGION_VIRT : 0);
}

/* bfab_region_get -- take the server's region from what bfab_region_put wrote */
void bfab_region_get(struct bfab_conn *c, const uint8_t *p)
{
	c->raddr = bfab_get_u64(p);
	c->rkey = bfab_get_u64(p + 8);
	c->rlen = bfab_get_u64(p + 16);
}

/* bfab_progress_thread -- drive the provider while the server's CQ is idle */
static void *bfab_progress_thread(void *arg)
{
	struct bfab_conn *c = arg;
	struct fid *fids[1] = {&c->progress_cq->fid};
	struct pollfd p = {.fd = c->wait_fd, .events = POLLIN};
	unsigned seen = atomic_load_explicit(&c->polls, memory_order_relaxed);

	while (!atomic_load(&c->stop)) {
		bool woke = true; /* fi_trywait fails when completions are waiting */
		unsigned polls = atomic_load_explicit(&c->polls, memory_order_relaxed);

		/*
		 * The main thread busy-polls (-C poll): its reads progress the
		 * provider, and ours would only contend for the CQ's lock with
		 * them (tcp;ofi_rxm, send-recv of 8 B at a window of 16: 170 000
		 * messages a second with this thread reading, 320 000 without).
		 * Look again in 10 ms, as the fabric provider's progress
		 * thread stands aside while the program polls.
		 */
		if (polls != seen) {
			seen = polls;
			poll(NULL, 0, 10);
			continue;
		}

		/*
		 * No fd (shm: its CQs only wait with FI_WAIT_YIELD, and
		 * fi_trywait() on one calls a NULL function in 1.17): look
		 * every 10 ms; the main thread's polling progresses anyway.
		 */
		if (c->wait_fd < 0)
			woke = poll(NULL, 0, 10) > 0;
		else if (fi_trywait(c->fabric, fids, 1) == FI_SUCCESS)
			woke = poll(&p, 1, 10) > 0;
		fi_cq_read(c->progress_cq, NULL, 0); /* progresses without taking entries */
		/*
		 * The data this thread just consumed will not wake a main thread
		 * sleeping in fi_cq_sread on the same sockets: wake it ourselves.
		 */
		if (woke && c->block)
			fi_cq_signal(c->progress_cq);
	}
	return NULL;
}

/* bfab_progress_start -- the server's progress thread on cq */
int bfab_progress_start(struct bfab_conn *c, struct fid_cq *cq, bool need_fd)
{
	int ret;

	c->progress_cq = cq;
	c->wait_fd = -1;
	ret = fi_control(&cq->fid, FI_GETWAIT, &c->wait_fd);
	if (ret) {
		if (need_fd) {
			bfab_err("fi_control(FI_GETWAIT)", ret);
			return -1;
		}
		c->wait_fd = -1; /* no fd: the thread polls every 10 ms */
	}
	atomic_store(&c->stop, false);
	ret = pthread_create(&c->progress, NULL, bfab_progress_thread, c);
	if (ret) {
		bench_log("pthread_create: %s", strerror(ret));
		return -1;
	}
	c->progress_running = true;
	return 0;
}

/* bfab_progress_stop -- stop the progress thread, if it runs */
void bfab_progress_stop(struct bfab_conn *c)
{
	if (!c->progress_running)
		return;
	atomic_store(&c->stop, true);
	pthread_join(c->progress, NULL);
	c->progress_running = false;
}

/* bfab_cq_readerr -- take the error entry of a CQ and log it; -1 when there is none */
int bfab_cq_readerr(struct fid_cq *cq, struct fi_cq_err_entry *err)
{
	if (fi_cq_readerr(cq, err, 0) < 0)
		return -1;
	bench_log("CQ error: %s (prov_errno %d: %s)", fi_strerror(err->err), err->prov_errno,
		  fi_cq_strerror(cq, err->prov_errno, err->err_data, NULL, 0));
	return 0;
}

void bfab_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void bfab_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t bfab_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t bfab_get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
