/* SPDX-License-Identifier: BSD-3-Clause */
/* baseline-scale.c -- what N raw libfabric FI_EP_MSG connections cost: descriptors, heap, RSS */

/*
 * The anchor of the fabric provider's per-connection cost (issue 17): a
 * server and a client (forked, on 127.0.0.1, FI_PROVIDER or tcp) open N
 * connections the way the provider does, with nothing of librpma around
 * them.  Per connection, on each side: one endpoint, its own EQ (size 64),
 * a transmit CQ (36 entries: the provider's cq 10 + sq 10 + 16) and a
 * receive CQ (26 entries: rq 10 + 16), FI_CQ_FORMAT_DATA, selective
 * completion on transmit, queues of sq 10 + 2 and rq 10 + 1, and an 8-byte
 * registered scratch buffer; the server has one listening endpoint with its
 * EQ and one 1 MiB region.  Wait objects are FI_WAIT_FD (as the provider
 * asks) or, with -w none, FI_WAIT_NONE: the difference is what the wait
 * objects cost.  With -s the connections of a side share one EQ, one transmit
 * CQ and one receive CQ (sized for all of them) instead: what sharing them
 * per peer would save.  Each connection carries one 64-byte write and an 8-byte
 * read (the provider's flush) before the figures are taken, so that
 * libfabric's lazy allocations of a connection that carried data count.
 *
 * The server is one thread that polls every EQ and CQ without blocking
 * (it must: over tcp libfabric moves RMA data only when somebody reads a
 * CQ).  At each count the client asks it for its usage through a pipe and
 * prints, for each side, the descriptors by kind (readlink of /proc/self/fd:
 * socket, eventfd, epoll, pipe, other), the heap in use (mallinfo2:
 * uordblks + hblkhd) and VmRSS, at N and per connection over the idle
 * figures (taken after one warm-up connection came and went).
 *
 * Usage: baseline-scale [-c 1,64,256] [-w fd|none] [-s] [-a 127.0.0.1] [-p PORT]
 */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define BS_VERSION   FI_VERSION(1, 10)
#define BS_REGION    (1 << 20)
#define BS_MAX_CONNS 4096
#define BS_TIMEOUT_S 30

/* what a side uses */
struct bs_usage {
	long sock, efd, epoll, pipe, other, total;
	long heap_kib, rss_kib, threads;
};

/* the objects of one connection (either side) */
struct bs_conn {
	struct fid_ep *ep;
	struct fid_eq *eq;
	struct fid_cq *txcq, *rxcq;
	struct fid_mr *mr;
	uint64_t *scratch;
};

/* one side: fabric, domain and its connections */
struct bs_side {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct bs_conn conns[BS_MAX_CONNS];
	int nconns;
	struct fid_eq *eq;	    /* -s: the EQ every connection shares */
	struct fid_cq *txcq, *rxcq; /* -s: the CQs every connection shares */
};

static enum fi_wait_obj bs_wait = FI_WAIT_FD;
static bool bs_shared;
static uint64_t bs_next_key =
	0x10000; /* keys we choose, where libfabric does not (no FI_MR_PROV_KEY) */
static const char *bs_addr = "127.0.0.1";
static char bs_port[16];

/* bs_die -- report a failed libfabric call and exit */
static void bs_die(const char *what, int ret)
{
	fprintf(stderr, "baseline-scale: %s: %s\n", what, fi_strerror(ret < 0 ? -ret : ret));
	exit(2);
}

/* bs_now -- seconds of the monotonic clock */
static double bs_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* bs_usage_get -- the calling process's descriptors by kind, heap in use, RSS and threads */
static void bs_usage_get(struct bs_usage *u)
{
	memset(u, 0, sizeof(*u));
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char path[300], tgt[128];
			snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
			ssize_t n = readlink(path, tgt, sizeof(tgt) - 1);
			if (n < 0)
				continue;
			tgt[n] = '\0';
			if (atoi(e->d_name) == dirfd(d))
				continue;
			u->total++;
			if (strncmp(tgt, "socket:", 7) == 0)
				u->sock++;
			else if (strcmp(tgt, "anon_inode:[eventfd]") == 0)
				u->efd++;
			else if (strcmp(tgt, "anon_inode:[eventpoll]") == 0)
				u->epoll++;
			else if (strncmp(tgt, "pipe:", 5) == 0)
				u->pipe++;
			else
				u->other++;
		}
		closedir(d);
	}
	struct mallinfo2 mi = mallinfo2();
	u->heap_kib = (long)((mi.uordblks + mi.hblkhd) / 1024);
	FILE *f = fopen("/proc/self/status", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "VmRSS:", 6) == 0)
				u->rss_kib = atol(line + 6);
			else if (strncmp(line, "Threads:", 8) == 0)
				u->threads = atol(line + 8);
		}
		fclose(f);
	}
}

/* bs_hints -- the provider's hints (fabric_peer.c): FI_EP_MSG, FI_MSG | FI_RMA */
static struct fi_info *bs_hints(void)
{
	struct fi_info *h = fi_allocinfo();
	if (h == NULL)
		bs_die("fi_allocinfo", -FI_ENOMEM);
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	h->domain_attr->threading = FI_THREAD_SAFE;
	const char *prov = getenv("FI_PROVIDER");
	h->fabric_attr->prov_name = strdup(prov && *prov ? prov : "tcp");
	return h;
}

static struct fid_eq *bs_eq_open(struct bs_side *s);
static struct fid_cq *bs_cq_open(struct bs_side *s, size_t size);

/* bs_side_open -- fabric and domain of a side (server: listening on bs_port) */
static void bs_side_open(struct bs_side *s, bool server)
{
	struct fi_info *h = bs_hints();
	int ret = fi_getinfo(BS_VERSION, bs_addr, bs_port, server ? FI_SOURCE : 0, h, &s->info);
	fi_freeinfo(h);
	if (ret)
		bs_die("fi_getinfo", ret);
	if ((ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL)))
		bs_die("fi_fabric", ret);
	if ((ret = fi_domain(s->fabric, s->info, &s->domain, NULL)))
		bs_die("fi_domain", ret);
	if (bs_shared) {
		s->eq = bs_eq_open(s);
		s->txcq = bs_cq_open(s, 36 * 64);
		s->rxcq = bs_cq_open(s, 26 * 64);
	}
}

/* bs_eq_open -- an EQ as the provider opens it (fabric_ep.c) */
static struct fid_eq *bs_eq_open(struct bs_side *s)
{
	struct fi_eq_attr attr = {.size = 64, .wait_obj = bs_wait};
	struct fid_eq *eq;
	int ret = fi_eq_open(s->fabric, &attr, &eq, NULL);
	if (ret)
		bs_die("fi_eq_open", ret);
	return eq;
}

/* bs_cq_open -- a CQ as the provider opens it (fabric_conn.c) */
static struct fid_cq *bs_cq_open(struct bs_side *s, size_t size)
{
	struct fi_cq_attr attr = {.size = size, .format = FI_CQ_FORMAT_DATA, .wait_obj = bs_wait};
	struct fid_cq *cq;
	int ret = fi_cq_open(s->domain, &attr, &cq, NULL);
	if (ret)
		bs_die("fi_cq_open", ret);
	return cq;
}

/* bs_conn_make -- endpoint, EQ, CQs and scratch of a connection (info: the request or the
 * destination) */
static void bs_conn_make(struct bs_side *s, struct bs_conn *c, struct fi_info *info)
{
	memset(c, 0, sizeof(*c));
	info->tx_attr->op_flags = 0;
	info->rx_attr->op_flags = 0;
	if (info->tx_attr->size > 12)
		info->tx_attr->size = 12;
	if (info->rx_attr->size > 11)
		info->rx_attr->size = 11;
	int ret = fi_endpoint(s->domain, info, &c->ep, NULL);
	if (ret)
		bs_die("fi_endpoint", ret);
	c->eq = bs_shared ? s->eq : bs_eq_open(s);
	c->txcq = bs_shared ? s->txcq : bs_cq_open(s, 36);
	c->rxcq = bs_shared ? s->rxcq : bs_cq_open(s, 26);
	if ((ret = fi_ep_bind(c->ep, &c->txcq->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION)) ||
	    (ret = fi_ep_bind(c->ep, &c->rxcq->fid, FI_RECV)) ||
	    (ret = fi_ep_bind(c->ep, &c->eq->fid, 0)))
		bs_die("fi_ep_bind", ret);
	if ((ret = fi_enable(c->ep)))
		bs_die("fi_enable", ret);
	c->scratch = calloc(2, sizeof(uint64_t));
	if ((ret = fi_mr_reg(s->domain, c->scratch, 2 * sizeof(uint64_t), FI_READ | FI_WRITE, 0,
			     bs_next_key++, 0, &c->mr, NULL)))
		bs_die("fi_mr_reg", ret);
}

/* bs_conn_close -- release a connection's objects */
static void bs_conn_close(struct bs_conn *c)
{
	if (c->ep == NULL)
		return;
	fi_close(&c->ep->fid);
	fi_close(&c->mr->fid);
	if (!bs_shared) {
		fi_close(&c->txcq->fid);
		fi_close(&c->rxcq->fid);
		fi_close(&c->eq->fid);
	}
	free(c->scratch);
	memset(c, 0, sizeof(*c));
}

/* bs_side_close -- close the shared EQ and CQs of a side (-s) */
static void bs_side_close(struct bs_side *s)
{
	if (!bs_shared)
		return;
	fi_close(&s->txcq->fid);
	fi_close(&s->rxcq->fid);
	fi_close(&s->eq->fid);
}

/* bs_cq_drain -- read (and so progress) a CQ; -1 on an error completion */
static int bs_cq_drain(struct fid_cq *cq, int *done)
{
	struct fi_cq_data_entry e[8];
	ssize_t n = fi_cq_read(cq, e, 8);
	if (n > 0) {
		*done += (int)n;
		return 0;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = {0};
		fi_cq_readerr(cq, &err, 0);
		fprintf(stderr, "baseline-scale: error completion: %s\n", fi_strerror(err.err));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ server */

/* bs_server -- accept and serve until told to quit on cmd; answer usage requests on rep */
static void bs_server(int cmd, int rep)
{
	static struct bs_side s;
	bs_side_open(&s, true);
	char *region = aligned_alloc(4096, BS_REGION);
	struct fid_mr *rmr;
	int ret = fi_mr_reg(s.domain, region, BS_REGION, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
			    bs_next_key++, 0, &rmr, NULL);
	if (ret)
		bs_die("fi_mr_reg(region)", ret);
	struct fid_eq *peq = bs_eq_open(&s);
	struct fid_pep *pep;
	if ((ret = fi_passive_ep(s.fabric, s.info, &pep, NULL)))
		bs_die("fi_passive_ep", ret);
	if ((ret = fi_pep_bind(pep, &peq->fid, 0)) || (ret = fi_listen(pep)))
		bs_die("fi_listen", ret);
	uint64_t pdata[2] = {(s.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uintptr_t)region
									      : 0,
			     fi_mr_key(rmr)};
	fcntl(cmd, F_SETFL, O_NONBLOCK);
	if (write(rep, "R", 1) != 1) /* listening */
		exit(2);
	for (;;) {
		bool busy = false;
		struct fi_eq_cm_entry ev;
		uint32_t event;
		ssize_t n = fi_eq_read(peq, &event, &ev, sizeof(ev), 0);
		if (n > 0 && event == FI_CONNREQ) {
			int i = 0;
			while (i < BS_MAX_CONNS && s.conns[i].ep)
				i++;
			if (i == BS_MAX_CONNS)
				bs_die("too many connections", -FI_ENOMEM);
			bs_conn_make(&s, &s.conns[i], ev.info);
			fi_freeinfo(ev.info);
			if ((ret = fi_accept(s.conns[i].ep, pdata, sizeof(pdata))))
				bs_die("fi_accept", ret);
			if (i >= s.nconns)
				s.nconns = i + 1;
			busy = true;
		}
		if (bs_shared) {
			int done = 0;
			bs_cq_drain(s.txcq, &done);
			bs_cq_drain(s.rxcq, &done);
			n = fi_eq_read(s.eq, &event, &ev, sizeof(ev), 0);
			if (n == -FI_EAVAIL) {
				struct fi_eq_err_entry err = {0};
				fi_eq_readerr(s.eq, &err, 0);
				ev.fid = err.fid;
				event = FI_SHUTDOWN;
				n = 1;
			}
			for (int i = 0; n > 0 && event == FI_SHUTDOWN && i < s.nconns; i++) {
				if (s.conns[i].ep && &s.conns[i].ep->fid == ev.fid) {
					bs_conn_close(&s.conns[i]);
					busy = true;
				}
			}
		}
		for (int i = 0; i < s.nconns && !bs_shared; i++) {
			struct bs_conn *c = &s.conns[i];
			if (c->ep == NULL)
				continue;
			int done = 0;
			bs_cq_drain(c->txcq, &done);
			bs_cq_drain(c->rxcq, &done);
			n = fi_eq_read(c->eq, &event, &ev, sizeof(ev), 0);
			if (n > 0 && event == FI_SHUTDOWN) {
				bs_conn_close(c);
				busy = true;
			} else if (n == -FI_EAVAIL) {
				struct fi_eq_err_entry err = {0};
				fi_eq_readerr(c->eq, &err, 0);
				bs_conn_close(c);
			}
		}
		char k;
		ssize_t got = read(cmd, &k, 1);
		if (got == 0)
			break; /* the client is gone (it failed): so is the server */
		if (got == 1) {
			if (k == 'q')
				break;
			struct bs_usage u;
			bs_usage_get(&u);
			dprintf(rep, "%ld %ld %ld %ld %ld %ld %ld %ld %ld\n", u.sock, u.efd,
				u.epoll, u.pipe, u.other, u.total, u.heap_kib, u.rss_kib,
				u.threads);
		}
		if (!busy)
			usleep(50);
	}
	for (int i = 0; i < s.nconns; i++)
		bs_conn_close(&s.conns[i]);
	fi_close(&pep->fid);
	fi_close(&peq->fid);
	bs_side_close(&s);
	fi_close(&rmr->fid);
	fi_close(&s.domain->fid);
	fi_close(&s.fabric->fid);
	fi_freeinfo(s.info);
	free(region);
	exit(0);
}

/* ------------------------------------------------------------------ client */

static struct bs_side cli;
static int srv_cmd, srv_rep;

/* bs_srv_usage -- ask the server for its usage */
static void bs_srv_usage(struct bs_usage *u)
{
	if (write(srv_cmd, "m", 1) != 1)
		bs_die("server pipe", -FI_EIO);
	char line[256];
	size_t len = 0;
	while (len < sizeof(line) - 1) {
		if (read(srv_rep, line + len, 1) != 1)
			bs_die("server pipe", -FI_EIO);
		if (line[len++] == '\n')
			break;
	}
	line[len] = '\0';
	memset(u, 0, sizeof(*u));
	if (sscanf(line, "%ld %ld %ld %ld %ld %ld %ld %ld %ld", &u->sock, &u->efd, &u->epoll,
		   &u->pipe, &u->other, &u->total, &u->heap_kib, &u->rss_kib, &u->threads) != 9)
		bs_die("server usage line", -FI_EIO);
}

/* bs_connect -- open n connections, each carrying a 64-byte write and an 8-byte read */
static void bs_connect(int n, char *buf, struct fid_mr *mr)
{
	void *desc = fi_mr_desc(mr);
	for (int i = 0; i < n; i++) {
		struct fi_info *h = bs_hints(), *dst;
		int ret = fi_getinfo(BS_VERSION, bs_addr, bs_port, 0, h, &dst);
		fi_freeinfo(h);
		if (ret)
			bs_die("fi_getinfo(dest)", ret);
		struct bs_conn *c = &cli.conns[i];
		bs_conn_make(&cli, c, dst);
		if ((ret = fi_connect(c->ep, dst->dest_addr, NULL, 0)))
			bs_die("fi_connect", ret);
		fi_freeinfo(dst);
		struct {
			struct fi_eq_cm_entry e;
			uint64_t pd[2];
		} ev;
		uint32_t event = 0;
		double until = bs_now() + BS_TIMEOUT_S;
		ssize_t r;
		/* a shared EQ (-s) may hold events of connections closed before: skip them */
		while ((r = fi_eq_read(c->eq, &event, &ev, sizeof(ev), 0)) == -FI_EAGAIN ||
		       (r > 0 && ev.e.fid != &c->ep->fid)) {
			if (bs_now() > until)
				bs_die("no FI_CONNECTED", -FI_ETIMEDOUT);
		}
		if (r < 0 || event != FI_CONNECTED)
			bs_die("fi_connect: no FI_CONNECTED", r < 0 ? (int)r : -FI_ECONNREFUSED);
		uint64_t raddr = ev.pd[0] + (uint64_t)(i % 1024) * 64, rkey = ev.pd[1];
		struct iovec iov = {.iov_base = buf, .iov_len = 64};
		struct fi_rma_iov riov = {.addr = raddr, .len = 64, .key = rkey};
		struct fi_msg_rma msg = {.msg_iov = &iov,
					 .desc = &desc,
					 .iov_count = 1,
					 .rma_iov = &riov,
					 .rma_iov_count = 1};
		while ((ret = (int)fi_writemsg(c->ep, &msg, 0)) == -FI_EAGAIN)
			;
		if (ret)
			bs_die("fi_writemsg", ret);
		iov.iov_base = buf + 64;
		iov.iov_len = 8;
		riov.len = 8;
		msg.context = c;
		while ((ret = (int)fi_readmsg(c->ep, &msg, FI_COMPLETION)) == -FI_EAGAIN)
			;
		if (ret)
			bs_die("fi_readmsg", ret);
		int done = 0;
		until = bs_now() + BS_TIMEOUT_S;
		while (done == 0) {
			if (bs_cq_drain(c->txcq, &done) || bs_now() > until)
				bs_die("the read did not complete", -FI_EIO);
		}
		cli.nconns = i + 1;
	}
}

/* bs_close_all -- shut the client's connections down and close them */
static void bs_close_all(void)
{
	for (int i = 0; i < cli.nconns; i++) {
		fi_shutdown(cli.conns[i].ep, 0);
		bs_conn_close(&cli.conns[i]);
	}
	cli.nconns = 0;
}

/* bs_print -- one side's row: at N, and per connection over idle */
static void bs_print(const char *side, int n, const struct bs_usage *idle,
		     const struct bs_usage *at)
{
	printf("%-6s %5d %5ld %5ld %5ld %5ld %5ld %5ld | %6.2f %6.2f %6.2f %6.2f | %8ld %8.1f %8ld "
	       "%8.1f\n",
	       side, n, at->total, at->sock, at->efd, at->epoll, at->pipe, at->other,
	       (double)(at->total - idle->total) / n, (double)(at->sock - idle->sock) / n,
	       (double)(at->efd - idle->efd) / n, (double)(at->epoll - idle->epoll) / n,
	       at->heap_kib, (double)(at->heap_kib - idle->heap_kib) / n, at->rss_kib,
	       (double)(at->rss_kib - idle->rss_kib) / n);
}

/* bs_wait_server_idle -- until the server's descriptors are back to idle (or a timeout) */
static void bs_wait_server_idle(const struct bs_usage *idle)
{
	double until = bs_now() + BS_TIMEOUT_S;
	struct bs_usage u;
	do {
		usleep(20000);
		bs_srv_usage(&u);
	} while (u.total != idle->total && bs_now() < until);
	if (u.total != idle->total)
		fprintf(stderr, "baseline-scale: the server kept %ld descriptors (idle %ld)\n",
			u.total, idle->total);
}

int main(int argc, char **argv)
{
	const char *counts = "1,64,256";
	int opt;
	snprintf(bs_port, sizeof(bs_port), "%d", 30000 + getpid() % 20000);
	while ((opt = getopt(argc, argv, "c:w:sa:p:")) != -1) {
		switch (opt) {
		case 'c':
			counts = optarg;
			break;
		case 'w':
			bs_wait = strcmp(optarg, "none") == 0 ? FI_WAIT_NONE : FI_WAIT_FD;
			break;
		case 's':
			bs_shared = true;
			break;
		case 'a':
			bs_addr = optarg;
			break;
		case 'p':
			snprintf(bs_port, sizeof(bs_port), "%s", optarg);
			break;
		default:
			fprintf(stderr,
				"usage: baseline-scale [-c 1,64,256] [-w fd|none] [-s] [-a ADDR] "
				"[-p PORT]\n");
			return 2;
		}
	}
	/* descriptors for the largest count, both sides */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	int c2s[2], s2c[2];
	if (pipe(c2s) || pipe(s2c))
		return 2;
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		close(c2s[1]);
		close(s2c[0]);
		bs_server(c2s[0], s2c[1]);
	}
	close(c2s[0]);
	close(s2c[1]);
	srv_cmd = c2s[1];
	srv_rep = s2c[0];
	char k;
	if (read(srv_rep, &k, 1) != 1 || k != 'R') {
		fprintf(stderr, "baseline-scale: the server did not start\n");
		return 2;
	}
	bs_side_open(&cli, false);
	char *buf = aligned_alloc(4096, 4096);
	memset(buf, 0x5a, 4096);
	struct fid_mr *mr;
	int ret = fi_mr_reg(cli.domain, buf, 4096, FI_READ | FI_WRITE, 0, bs_next_key++, 0, &mr,
			    NULL);
	if (ret)
		bs_die("fi_mr_reg(client)", ret);

	/* idle: after one warm-up connection came and went */
	struct bs_usage sidle, cidle, s, c;
	bs_srv_usage(&sidle);
	bs_connect(1, buf, mr);
	bs_close_all();
	bs_wait_server_idle(&sidle);
	bs_srv_usage(&sidle);
	bs_usage_get(&cidle);
	printf("# baseline-scale: raw libfabric %s, FI_EP_MSG on %s, wait objects %s; per "
	       "connection: endpoint, 8-byte MR, %s; one write + read each\n",
	       cli.info->fabric_attr->prov_name, bs_addr,
	       bs_wait == FI_WAIT_FD ? "FI_WAIT_FD" : "none",
	       bs_shared ? "EQ and CQs shared by all (-s)" : "EQ, tx CQ, rx CQ");
	printf("# idle: server %ld fds, heap %ld KiB, RSS %ld KiB, %ld threads; client %ld fds, "
	       "heap %ld KiB, RSS %ld KiB, %ld threads\n",
	       sidle.total, sidle.heap_kib, sidle.rss_kib, sidle.threads, cidle.total,
	       cidle.heap_kib, cidle.rss_kib, cidle.threads);
	printf("#side      N   fds  sock   efd epoll  pipe other | fds/c sock/c  efd/c epol/c |  "
	       "heapKiB  heap/c   rssKiB    rss/c\n");
	int rc = 0;
	for (const char *p = counts; *p;) {
		int n = atoi(p);
		if (n < 1 || n > BS_MAX_CONNS) {
			fprintf(stderr, "baseline-scale: bad count '%s'\n", p);
			rc = 2;
			break;
		}
		bs_connect(n, buf, mr);
		bs_srv_usage(&s);
		bs_usage_get(&c);
		bs_print("server", n, &sidle, &s);
		bs_print("client", n, &cidle, &c);
		fflush(stdout);
		bs_close_all();
		bs_wait_server_idle(&sidle);
		const char *comma = strchr(p, ',');
		p = comma ? comma + 1 : p + strlen(p);
	}
	if (write(srv_cmd, "q", 1) != 1)
		rc = 2;
	int st = 0;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		rc = 2;
	fi_close(&mr->fid);
	bs_side_close(&cli);
	fi_close(&cli.domain->fid);
	fi_close(&cli.fabric->fid);
	fi_freeinfo(cli.info);
	free(buf);
	return rc;
}
