/* SPDX-License-Identifier: BSD-3-Clause */
/* scale.c -- many concurrent connections to one server: throughput, latency, server cost */

/*
 * rpma-scale runs a series of connection counts (1, 2, 4, ... 256 by
 * default) against one server process that owns one memory region.  For
 * each count N the client opens N connections, keeps a window of operations
 * in flight on each of them for a fixed time and reports the aggregate
 * operations per second and the p50/p99 latency of one operation; meanwhile
 * it samples the server's resident memory, open descriptors and threads
 * (/proc/PID), and times a separate probe connection (connect + write +
 * flush) to see whether the server still answers newcomers.  After the N
 * connections are closed it waits for the server to release them and checks
 * that its descriptors and threads are back to their idle values and its
 * resident memory within a margin: PASS or FAIL per count.
 *
 * Client design: by default one thread multiplexes every connection (each
 * with its own window and CQ, busy-polled round robin); -T spreads the
 * connections over more threads.
 *
 * Only the public librpma 1.2 API is used, so the file also builds against
 * Debian's librpma0:  gcc -O2 bench/scale.c -o rpma-scale -lrpma -lpthread -lm
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

#define TOOL	     "rpma-scale"
#define HELLO	     "SCL1"	  /* the client's private data */
#define PD_TAG	     0x53	  /* first byte of the server's private data */
#define MAX_CONNS    4096	  /* the largest connection count accepted */
#define MAX_COUNTS   32		  /* connection counts in one series */
#define MAX_WINDOW   64		  /* operations in flight per connection */
#define CTX_WRITE    (1ull << 63) /* marks the unsignaled write of write-flush */
#define NS	     1000000000ull
#define PROBE_WAIT_S 20 /* the longest a probe may take before the server counts as stuck */

enum op { OP_WRITE_FLUSH, OP_WRITE };
static const char *const op_names[] = {"write-flush", "write"};

/* what one process uses, from /proc */
struct usage {
	long fds;
	long threads;
	long rss_kb;
};

/* the options */
struct cfg {
	const char *addr;
	const char *port;
	unsigned counts[MAX_COUNTS];
	unsigned ncounts;
	size_t sizes[8];
	unsigned nsizes;
	unsigned ops; /* bit mask of 1u << enum op */
	double duration_s;
	double warmup_s;
	unsigned window;
	unsigned threads;
	unsigned active; /* connections that carry load (0: all); the others stay idle */
	unsigned probes;
	long rss_margin_kb;
	long heap_margin_kb;
	double settle_s;
	size_t region_size;
	bool pmem_usage;
	bool keep_one;	  /* self-test: leave one connection of each count open until the end */
	pid_t server_pid; /* 0: unknown (no server figures) */
	int status_fd;	  /* server: where to report; client: where to read (-1: none) */
	const char *label;
	const char *csv_path;
	const char *json_path;
	int timeout_s;
};

/* one client connection */
struct sconn {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_remote *rmr;
	size_t off; /* where this connection writes in the server's region */
	uint64_t seq;
	unsigned inflight;
	uint64_t t_post[MAX_WINDOW]; /* post time by seq % window, 0 when free */
	struct sconn *next_kept;
};

static struct sconn *kept; /* --keep-one: connections left open until the end */

/* what a measurement thread shares and returns */
struct worker {
	pthread_t th;
	struct sconn **c;
	unsigned n;
	enum op op;
	size_t size;
	unsigned window;
	struct rpma_mr_local *src;
	uint64_t t_measure, t_end;
	uint32_t *lat; /* latency samples in ns */
	size_t nlat, cap;
	uint64_t ops;
	int err;
};

static struct cfg C = {
	.addr = "127.0.0.1",
	.port = "7474",
	.duration_s = 2.0,
	.warmup_s = -1,
	.window = 1,
	.threads = 1,
	.probes = 5,
	.rss_margin_kb = 4096,
	.heap_margin_kb = 256,
	.settle_s = 10.0,
	.region_size = 1 << 20,
	.status_fd = -1,
	.label = "",
	.timeout_s = 0,
};

static pid_t child_pid;		   /* the forked server (both) */
static volatile sig_atomic_t stop; /* server: SIGTERM/SIGINT seen */
static int stop_pipe[2] = {-1, -1};
static bool csv_header; /* the CSV file was empty: write the column names first */

/* say -- one line on stderr, prefixed with the tool and role */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s[%d]: %s\n", TOOL, (int)getpid(), line);
}

/* rerr -- report a failed librpma call; returns -1 */
static int rerr(const char *call, int ret)
{
	say("%s: %s (%d)", call, rpma_err_2str(ret), ret);
	return -1;
}

/* now_ns -- monotonic time */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* sleep_until -- sleep until a monotonic time */
static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / NS), .tv_nsec = (long)(t % NS)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ------------------------------------------------------------ /proc */

/* count_dir -- entries of a directory besides . and .. (-1 when unreadable) */
static long count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	long n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* usage_of -- fds, threads and resident memory of pid (0: this process) */
static int usage_of(pid_t pid, struct usage *u)
{
	char path[64], line[256];
	FILE *f;

	u->fds = u->threads = u->rss_kb = -1;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/fd");
	u->fds = count_dir(path);
	if (u->fds > 0 && pid == 0)
		u->fds--; /* the directory stream itself */
	snprintf(path, sizeof(path), "/proc/%d/status", pid ? (int)pid : (int)getpid());
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			u->rss_kb = strtol(line + 6, NULL, 10);
		else if (strncmp(line, "Threads:", 8) == 0)
			u->threads = strtol(line + 8, NULL, 10);
	}
	fclose(f);
	return u->fds < 0 || u->threads < 0 || u->rss_kb < 0 ? -1 : 0;
}

/* rss_self_kb -- this process's resident memory, cheaply (/proc/self/statm) */
static long rss_self_kb(void)
{
	long size, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* load1 -- the 1-minute load average */
static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* raise_nofile -- lift the soft descriptor limit towards want (at most the hard one) */
static void raise_nofile(rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur =
			(rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want) ? want : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			say("descriptor limit raised from %llu to %llu", (unsigned long long)old,
			    (unsigned long long)rl.rlim_cur);
		if (rl.rlim_cur < want)
			say("warning: descriptor limit %llu is below the %llu this run may need",
			    (unsigned long long)rl.rlim_cur, (unsigned long long)want);
	}
}

/* ------------------------------------------------------------ common */

/* open_peer -- a peer on the device serving addr */
static int open_peer(bool passive, struct rpma_peer **peer)
{
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(
		C.addr, passive ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev);

	if (ret)
		return rerr("rpma_utils_get_ibv_context", ret);
	ret = rpma_peer_new(dev, peer);
	if (ret)
		return rerr("rpma_peer_new", ret);
	return 0;
}

/* ------------------------------------------------------------ server */

/* a connection the server holds */
struct srv_conn {
	struct rpma_conn *conn;
	int fd;
	bool established;
};

/* on_stop -- SIGTERM/SIGINT: wake the server's poll */
static void on_stop(int sig)
{
	ssize_t r;

	(void)sig;
	stop = 1;
	r = write(stop_pipe[1], "x", 1);
	(void)r;
}

/* heap_kb -- bytes of heap this process has in use, in KiB (-1 when the allocator does not say) */
static long heap_kb(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();

	return (long)((mi.uordblks + mi.hblkhd) / 1024);
#else
	return -1;
#endif
}

/* on_usage -- SIGUSR1: the driver wants a usage line */
static void on_usage(int sig)
{
	ssize_t r;

	(void)sig;
	r = write(stop_pipe[1], "u", 1);
	(void)r;
}

/*
 * report -- tell the driver how many connections the server holds, with its
 * heap in use and resident memory; when the last one has gone, freed heap is
 * given back to the system first (malloc_trim), as a long-running server
 * would, and the resident memory reported is the one before that
 */
static void report(const char *what, long n)
{
	char line[128];
	long heap = heap_kb(), rss = rss_self_kb();
	int len;

#ifdef __GLIBC__
	if (n == 0)
		malloc_trim(0);
#endif
	if (C.status_fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%s %ld heap_kb %ld rss_kb %ld\n", what, n, heap, rss);
	if (write(C.status_fd, line, (size_t)len) != len)
		say("cannot write to the status descriptor");
}

/* srv_drop -- disconnect and delete connection i (moves the last one into its place) */
static int srv_drop(struct srv_conn *sc, unsigned *n, unsigned i)
{
	int ret, rc = 0;

	ret = rpma_conn_disconnect(sc[i].conn);
	if (ret)
		rc = rerr("rpma_conn_disconnect", ret);
	ret = rpma_conn_delete(&sc[i].conn);
	if (ret)
		rc = rerr("rpma_conn_delete", ret);
	sc[i] = sc[--*n];
	return rc;
}

/* srv_accept -- take one connection request: check the hello, answer with the region */
static int srv_accept(struct rpma_ep *ep, const struct rpma_conn_private_data *pd,
		      struct srv_conn *sc, unsigned *n)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data in;
	struct rpma_conn *conn = NULL;
	int ret = rpma_ep_next_conn_req(ep, NULL, &req);

	if (ret == RPMA_E_NO_EVENT)
		return 0;
	if (ret)
		return rerr("rpma_ep_next_conn_req", ret);
	if (rpma_conn_req_get_private_data(req, &in) || in.ptr == NULL || in.len < 4 ||
	    memcmp(in.ptr, HELLO, 4) != 0 || *n >= MAX_CONNS + 8) {
		say("refusing a connection request (not ours, or too many)");
		ret = rpma_conn_req_delete(&req);
		return ret ? rerr("rpma_conn_req_delete", ret) : 0;
	}
	ret = rpma_conn_req_connect(&req, pd, &conn);
	if (ret) {
		/* the client may have given up already: not the server's failure */
		rerr("rpma_conn_req_connect", ret);
		return 0;
	}
	sc[*n].conn = conn;
	sc[*n].established = false;
	ret = rpma_conn_get_event_fd(conn, &sc[*n].fd);
	if (ret) {
		rerr("rpma_conn_get_event_fd", ret);
		(void)rpma_conn_disconnect(conn);
		(void)rpma_conn_delete(&conn);
		return -1;
	}
	(*n)++;
	return 0;
}

/* srv_event -- a connection's event: closed ones are released at once */
static int srv_event(struct srv_conn *sc, unsigned *n, unsigned i, long *served)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(sc[i].conn, &ev);

	if (ret == RPMA_E_NO_EVENT)
		return 0;
	if (ret) {
		rerr("rpma_conn_next_event", ret);
		return srv_drop(sc, n, i);
	}
	if (ev == RPMA_CONN_ESTABLISHED) {
		sc[i].established = true;
		(*served)++;
		return 0;
	}
	/* CLOSED, LOST, REJECTED, UNREACHABLE: gone */
	return srv_drop(sc, n, i);
}

/* run_server -- one region, any number of connections, until SIGTERM/SIGINT */
static int run_server(void)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct srv_conn *sc = NULL;
	struct pollfd *pfd = NULL;
	unsigned n = 0, last = ~0u;
	long served = 0;
	char *region = NULL;
	uint8_t pdbuf[64];
	size_t dsize = 0;
	int ep_fd, ret, rc = -1;
	struct sigaction sa = {.sa_handler = on_stop};

	if (pipe(stop_pipe)) {
		say("pipe: %s", strerror(errno));
		return -1;
	}
#ifdef __GLIBC__
	/*
	 * A fixed mmap threshold: glibc raises it to the size of each large
	 * block freed, so that the next such blocks (libfabric's buffer pools,
	 * 17 MB each over tcp;ofi_rxm) come from a thread's arena, where
	 * malloc_trim() may leave them resident once freed; the release check
	 * then saw memory that was no longer in use
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = on_usage;
	sigaction(SIGUSR1, &sa, NULL);
	sc = calloc(MAX_CONNS + 8, sizeof(*sc));
	pfd = calloc(MAX_CONNS + 10, sizeof(*pfd));
	region = aligned_alloc(4096, C.region_size);
	if (sc == NULL || pfd == NULL || region == NULL) {
		say("out of memory");
		goto out;
	}
	memset(region, 0, C.region_size);
	if (open_peer(true, &peer))
		goto out;
	ret = rpma_mr_reg(peer, region, C.region_size,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				  (C.pmem_usage ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT : 0),
			  &mr);
	if (ret) {
		rerr("rpma_mr_reg", ret);
		goto out;
	}
	ret = rpma_mr_get_descriptor_size(mr, &dsize);
	if (!ret && dsize + 2 > sizeof(pdbuf))
		ret = RPMA_E_UNKNOWN;
	if (!ret)
		ret = rpma_mr_get_descriptor(mr, pdbuf + 2);
	if (ret) {
		rerr("rpma_mr_get_descriptor", ret);
		goto out;
	}
	pdbuf[0] = PD_TAG;
	pdbuf[1] = (uint8_t)dsize;
	struct rpma_conn_private_data pd = {.ptr = pdbuf, .len = (uint8_t)(dsize + 2)};

	ret = rpma_ep_listen(peer, C.addr, C.port, &ep);
	if (ret) {
		rerr("rpma_ep_listen", ret);
		goto out;
	}
	ret = rpma_ep_get_fd(ep, &ep_fd);
	if (ret) {
		rerr("rpma_ep_get_fd", ret);
		goto out;
	}
	report("ready", 0);
	while (!stop) {
		unsigned m = 0;

		if (n != last) {
			report("conns", n);
			last = n;
		}
		pfd[m++] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
		pfd[m++] = (struct pollfd){.fd = ep_fd, .events = POLLIN};
		for (unsigned i = 0; i < n; i++)
			pfd[m++] = (struct pollfd){.fd = sc[i].fd, .events = POLLIN};
		ret = poll(pfd, m, -1);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			say("poll: %s", strerror(errno));
			goto out;
		}
		if (pfd[0].revents) {
			char b[64];
			ssize_t got = read(stop_pipe[0], b, sizeof(b));

			if (got > 0 && memchr(b, 'u', (size_t)got))
				report("usage", n);
		}
		/* connections first (from the last, srv_drop moves the last one down) */
		for (unsigned i = m - 2; i-- > 0;)
			if (pfd[2 + i].revents && srv_event(sc, &n, i, &served))
				goto out;
		if (pfd[1].revents && srv_accept(ep, &pd, sc, &n))
			goto out;
	}
	rc = 0;
out:
	if (n)
		say("stopping with %u connections still open", n);
	while (n)
		if (srv_drop(sc, &n, n - 1))
			rc = -1;
	if (ep && (ret = rpma_ep_shutdown(&ep)))
		rc = rerr("rpma_ep_shutdown", ret);
	if (mr && (ret = rpma_mr_dereg(&mr)))
		rc = rerr("rpma_mr_dereg", ret);
	if (peer && (ret = rpma_peer_delete(&peer)))
		rc = rerr("rpma_peer_delete", ret);
	say("server: %ld connections served, %s", served, rc ? "FAILED" : "clean exit");
	free(region);
	free(sc);
	free(pfd);
	return rc;
}

/* ------------------------------------------------------------ client */

/* conn_cfg -- the client's queue sizes for a window */
static struct rpma_conn_cfg *conn_cfg(unsigned window)
{
	struct rpma_conn_cfg *cfg = NULL;
	int ret = rpma_conn_cfg_new(&cfg);

	if (ret) {
		rerr("rpma_conn_cfg_new", ret);
		return NULL;
	}
	ret = rpma_conn_cfg_set_sq_size(cfg, 2 * window + 2);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, 1);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, 2 * window + 2);
	if (!ret)
		ret = rpma_conn_cfg_set_timeout(cfg, 5000);
	if (ret) {
		rerr("rpma_conn_cfg_set_*", ret);
		rpma_conn_cfg_delete(&cfg);
		return NULL;
	}
	return cfg;
}

/* conn_close -- disconnect (unless done already), wait for CLOSED, delete */
static int conn_close(struct sconn *c, bool disconnected)
{
	int ret, rc = 0;

	if (c->conn) {
		int fd;

		if (!disconnected && (ret = rpma_conn_disconnect(c->conn)))
			rc = rerr("rpma_conn_disconnect", ret);
		if (rc == 0 && rpma_conn_get_event_fd(c->conn, &fd) == 0) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;

			for (int i = 0; i < 20 && ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST;
			     i++) {
				if (poll(&p, 1, 250) != 1)
					continue;
				if (rpma_conn_next_event(c->conn, &ev))
					break;
			}
		}
		if ((ret = rpma_conn_delete(&c->conn)))
			rc = rerr("rpma_conn_delete", ret);
	}
	if (c->rmr)
		rpma_mr_remote_delete(&c->rmr);
	free(c);
	return rc;
}

/* conn_open -- connect, take the server's region from its private data */
static struct sconn *conn_open(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg,
			       unsigned idx, size_t size)
{
	struct rpma_conn_private_data pd = {.ptr = (void *)HELLO, .len = 4};
	struct rpma_conn_req *req = NULL;
	enum rpma_conn_event ev;
	struct sconn *c = calloc(1, sizeof(*c));
	size_t rlen;
	const uint8_t *p;
	int ret;

	if (c == NULL) {
		say("out of memory");
		return NULL;
	}
	ret = rpma_conn_req_new(peer, C.addr, C.port, cfg, &req);
	if (ret) {
		rerr("rpma_conn_req_new", ret);
		goto err;
	}
	ret = rpma_conn_req_connect(&req, &pd, &c->conn);
	if (ret) {
		rerr("rpma_conn_req_connect", ret);
		goto err;
	}
	ret = rpma_conn_next_event(c->conn, &ev);
	if (ret || ev != RPMA_CONN_ESTABLISHED) {
		if (ret)
			rerr("rpma_conn_next_event", ret);
		else
			say("connection %u: %s", idx, rpma_utils_conn_event_2str(ev));
		goto err;
	}
	ret = rpma_conn_get_private_data(c->conn, &pd);
	p = pd.ptr;
	if (ret || p == NULL || pd.len < 2 || p[0] != PD_TAG || 2u + p[1] > pd.len) {
		say("the server's private data is not an rpma-scale descriptor");
		goto err;
	}
	ret = rpma_mr_remote_from_descriptor(p + 2, p[1], &c->rmr);
	if (!ret)
		ret = rpma_mr_remote_get_size(c->rmr, &rlen);
	if (ret) {
		rerr("rpma_mr_remote_from_descriptor", ret);
		goto err;
	}
	if (rlen < size) {
		say("the server's region (%zu B) is smaller than %zu B", rlen, size);
		goto err;
	}
	c->off = (idx % (rlen / size)) * size;
	ret = rpma_conn_get_cq(c->conn, &c->cq);
	if (ret) {
		rerr("rpma_conn_get_cq", ret);
		goto err;
	}
	return c;
err:
	if (req)
		rpma_conn_req_delete(&req);
	conn_close(c, false);
	return NULL;
}

/* post_unit -- one operation on c: a signaled write, or an unsignaled write + flush */
static int post_unit(struct worker *w, struct sconn *c, uint64_t t)
{
	uint64_t seq = c->seq;
	unsigned slot = (unsigned)(seq % w->window);
	int ret;

	if (c->t_post[slot])
		return 1; /* completions came out of order: that slot is still busy */
	if (w->op == OP_WRITE) {
		ret = rpma_write(c->conn, c->rmr, c->off, w->src, 0, w->size,
				 RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)seq);
		if (ret)
			return rerr("rpma_write", ret);
	} else {
		ret = rpma_write(c->conn, c->rmr, c->off, w->src, 0, w->size,
				 RPMA_F_COMPLETION_ON_ERROR, (void *)(uintptr_t)(seq | CTX_WRITE));
		if (ret)
			return rerr("rpma_write", ret);
		ret = rpma_flush(c->conn, c->rmr, c->off, w->size, RPMA_FLUSH_TYPE_VISIBILITY,
				 RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)seq);
		if (ret)
			return rerr("rpma_flush", ret);
	}
	c->t_post[slot] = t;
	c->seq++;
	c->inflight++;
	return 0;
}

/* add_sample -- keep one latency sample */
static int add_sample(struct worker *w, uint64_t ns)
{
	if (w->nlat == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 65536;
		uint32_t *p = realloc(w->lat, cap * sizeof(*p));

		if (p == NULL) {
			say("out of memory for latency samples");
			return -1;
		}
		w->lat = p;
		w->cap = cap;
	}
	w->lat[w->nlat++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	return 0;
}

/* reap -- take c's completions; measured ones become samples */
static int reap(struct worker *w, struct sconn *c)
{
	struct ibv_wc wc[MAX_WINDOW];
	int n = 0, ret = rpma_cq_get_wc(c->cq, MAX_WINDOW, wc, &n);
	uint64_t t;

	if (ret == RPMA_E_NO_COMPLETION)
		return 0;
	if (ret)
		return rerr("rpma_cq_get_wc", ret);
	t = now_ns();
	for (int i = 0; i < n; i++) {
		uint64_t seq = wc[i].wr_id;
		unsigned slot;
		uint64_t t0;

		if (wc[i].status != IBV_WC_SUCCESS) {
			say("%s failed: completion status %d",
			    (seq & CTX_WRITE) ? "a write" : "an operation", (int)wc[i].status);
			return -1;
		}
		if (seq & CTX_WRITE)
			continue; /* an unsignaled write's success (not expected) */
		slot = (unsigned)(seq % w->window);
		t0 = c->t_post[slot];
		c->t_post[slot] = 0;
		c->inflight--;
		if (t0 >= w->t_measure && t <= w->t_end) {
			w->ops++;
			if (add_sample(w, t - t0))
				return -1;
		}
	}
	return 0;
}

/* worker_main -- keep every connection's window full until t_end, then drain */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t t = now_ns(), deadline;
	bool busy;

	while (t < w->t_end) {
		for (unsigned i = 0; i < w->n; i++) {
			struct sconn *c = w->c[i];
			int r = 0;

			while (c->inflight < w->window && (r = post_unit(w, c, t)) == 0)
				;
			if (r < 0 || reap(w, c))
				goto fail;
			t = now_ns();
		}
	}
	deadline = now_ns() + 10 * NS;
	do {
		busy = false;
		for (unsigned i = 0; i < w->n; i++) {
			if (w->c[i]->inflight == 0)
				continue;
			busy = true;
			if (reap(w, w->c[i]))
				goto fail;
		}
	} while (busy && now_ns() < deadline);
	if (busy) {
		say("operations still in flight 10 s after the end");
		goto fail;
	}
	return NULL;
fail:
	w->err = -1;
	return NULL;
}

/* probe -- a new connection's connect + write + flush, timed (ms); -1 on failure */
static int probe(struct rpma_peer *peer, struct rpma_mr_local *src, const struct rpma_conn_cfg *cfg,
		 double *connect_ms, double *total_ms)
{
	uint64_t t0 = now_ns(), t1, until;
	struct sconn *c = conn_open(peer, cfg, MAX_CONNS, 64);
	struct ibv_wc wc;
	int ret, rc = -1;

	if (c == NULL)
		return -1;
	t1 = now_ns();
	ret = rpma_write(c->conn, c->rmr, c->off, src, 0, 64, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (!ret)
		ret = rpma_flush(c->conn, c->rmr, c->off, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				 RPMA_F_COMPLETION_ALWAYS, (void *)1);
	if (ret) {
		rerr("probe: rpma_write/rpma_flush", ret);
		goto out;
	}
	until = now_ns() + PROBE_WAIT_S * NS;
	while ((ret = rpma_cq_get_wc(c->cq, 1, &wc, NULL)) == RPMA_E_NO_COMPLETION) {
		if (now_ns() > until) {
			say("probe: no completion within %d s", PROBE_WAIT_S);
			goto out;
		}
		sched_yield();
	}
	if (ret) {
		rerr("probe: rpma_cq_get_wc", ret);
		goto out;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 1) {
		say("probe: completion status %d", (int)wc.status);
		goto out;
	}
	*connect_ms = (double)(t1 - t0) / 1e6;
	*total_ms = (double)(now_ns() - t0) / 1e6;
	rc = 0;
out:
	if (conn_close(c, false))
		rc = -1;
	return rc;
}

/* cmp_u32 -- qsort order of latency samples */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* cmp_dbl -- qsort order of probe times */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* pct -- the p-th percentile (0..1) of sorted samples, in us */
static double pct(const uint32_t *s, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return NAN;
	i = (size_t)ceil(p * (double)n);
	i = i ? i - 1 : 0;
	return (double)s[i < n ? i : n - 1] / 1e3;
}

static long srv_heap_kb = -1, srv_rss_kb = -1; /* from the server's last status line */
static bool srv_empty; /* the server said it had no connection left (settle) */

/*
 * server_status -- read the server's status lines ("WORD COUNT heap_kb H
 * rss_kb R") for up to ms, until one of WORD with COUNT want (any when want
 * < 0) comes; its count, or -1.  Lines after it stay for the next call.
 */
static long server_status(const char *what, long want, int ms)
{
	static char buf[8192];
	static size_t len;
	uint64_t until = now_ns() + (uint64_t)ms * 1000000ull;

	if (C.status_fd < 0)
		return -1;
	for (;;) {
		struct pollfd p = {.fd = C.status_fd, .events = POLLIN};
		int64_t left;
		ssize_t r;
		char *nl;

		while ((nl = strchr(buf, '\n')) != NULL) {
			char word[16];
			long v, h = -1, rss = -1;
			bool match = false;

			if (sscanf(buf, "%15s %ld heap_kb %ld rss_kb %ld", word, &v, &h, &rss) >=
				    2 &&
			    strcmp(word, what) == 0 && (want < 0 || v == want)) {
				srv_heap_kb = h;
				srv_rss_kb = rss;
				match = true;
			}
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
			if (match)
				return v;
		}
		left = (int64_t)(until - now_ns());
		if (left <= 0 || poll(&p, 1, (int)(left / 1000000) + 1) != 1)
			return -1;
		if (len + 1 >= sizeof(buf))
			len = 0; /* a line longer than the buffer: not ours */
		r = read(C.status_fd, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0)
			return -1; /* the server is gone */
		len += (size_t)r;
		buf[len] = 0;
	}
}

/*
 * settle -- wait until the server holds no connection and its fds/threads
 * are back to idle; then ask it for a last usage line (it trims its heap
 * again, since libfabric may free endpoint memory after the last close) and
 * read its resident memory.  Heap in use and the untrimmed rss come back in
 * *heap_after and *untrimmed_kb (-1 when unknown).
 */
static void settle(const struct usage *idle, struct usage *u, long *heap_after, long *untrimmed_kb)
{
	uint64_t until = now_ns() + (uint64_t)(C.settle_s * 1e9);

	srv_heap_kb = srv_rss_kb = -1;
	srv_empty = server_status("conns", 0, (int)(C.settle_s * 1000)) == 0;
	*heap_after = srv_heap_kb;
	*untrimmed_kb = srv_rss_kb;
	for (;;) {
		usage_of(C.server_pid, u);
		if ((u->fds == idle->fds && u->threads == idle->threads) || now_ns() > until)
			break;
		usleep(20000);
	}
	if (srv_empty && kill(C.server_pid, SIGUSR1) == 0 && server_status("usage", 0, 5000) == 0) {
		*heap_after = srv_heap_kb;
		usage_of(C.server_pid, u);
	}
}

/* one row of results */
struct row {
	enum op op;
	size_t size;
	unsigned n;
	uint64_t ops;
	double secs, ops_s, p50, p99, max;
	unsigned probes_ok;
	double probe_connect_ms, probe_ms, probe_max_ms;
	double open_s, close_s;
	struct usage s_idle, s_before, s_at, s_after;
	struct usage c_idle, c_at, c_after;
	double kb_per_conn;
	long s_heap_idle_kb, s_heap_at_kb,
		s_heap_after_kb; /* the server's heap in use (-1: unknown) */
	double heap_kb_per_conn;
	long s_rss_untrimmed_kb; /* its rss when the last client left, before trimming */
	bool pass;
	double load;
};

/* a named value of a result row */
struct kv {
	const char *k;
	char v[64];
	bool str; /* quoted in JSON */
};

/* kv_add -- append one named value */
__attribute__((format(printf, 5, 6))) static void kv_add(struct kv *a, int *n, const char *k,
							 bool str, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	a[*n].k = k;
	a[*n].str = str;
	vsnprintf(a[*n].v, sizeof(a[*n].v), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* emit -- the human line and the CSV / JSON rows of one count */
static void emit(const struct row *r, FILE *csv, FILE *json)
{
	const bool srv = C.server_pid != 0;
	const char *verdict = srv ? (r->pass ? "PASS" : "FAIL") : "n/a";
	struct kv a[64];
	int n = 0;

	printf("%-11s %6zu %5u %10.0f %8.1f %8.1f %3u %8.2f %8.2f %8.2f %6ld/%6ld/%6ld %6.0f/%6.0f "
	       "%4ld/%4ld/%4ld %3ld/%3ld/%3ld %5.2f %s\n",
	       op_names[r->op], r->size, r->n, r->ops_s, r->p50, r->p99, r->probes_ok,
	       r->probe_connect_ms, r->probe_ms, r->probe_max_ms, r->s_idle.rss_kb, r->s_at.rss_kb,
	       r->s_after.rss_kb, r->kb_per_conn, r->heap_kb_per_conn, r->s_before.fds, r->s_at.fds,
	       r->s_after.fds, r->s_before.threads, r->s_at.threads, r->s_after.threads, r->load,
	       verdict);
	fflush(stdout);
	if (csv == NULL && json == NULL)
		return;
	kv_add(a, &n, "tool", true, "%s", TOOL);
	kv_add(a, &n, "label", true, "%s", C.label);
	kv_add(a, &n, "op", true, "%s", op_names[r->op]);
	kv_add(a, &n, "bytes", false, "%zu", r->size);
	kv_add(a, &n, "window", false, "%u", C.window);
	kv_add(a, &n, "threads", false, "%u", C.threads);
	kv_add(a, &n, "conns", false, "%u", r->n);
	kv_add(a, &n, "active", false, "%u", C.active && C.active < r->n ? C.active : r->n);
	kv_add(a, &n, "secs", false, "%.3f", r->secs);
	kv_add(a, &n, "ops", false, "%" PRIu64, r->ops);
	kv_add(a, &n, "ops_per_s", false, "%.1f", r->ops_s);
	kv_add(a, &n, "p50_us", false, "%.2f", r->p50);
	kv_add(a, &n, "p99_us", false, "%.2f", r->p99);
	kv_add(a, &n, "max_us", false, "%.2f", r->max);
	kv_add(a, &n, "probes", false, "%u", r->probes_ok);
	kv_add(a, &n, "probe_connect_ms", false, "%.3f", r->probe_connect_ms);
	kv_add(a, &n, "probe_ms", false, "%.3f", r->probe_ms);
	kv_add(a, &n, "probe_max_ms", false, "%.3f", r->probe_max_ms);
	kv_add(a, &n, "open_s", false, "%.3f", r->open_s);
	kv_add(a, &n, "close_s", false, "%.3f", r->close_s);
	kv_add(a, &n, "srv_rss_idle_kb", false, "%ld", r->s_idle.rss_kb);
	kv_add(a, &n, "srv_rss_before_kb", false, "%ld", r->s_before.rss_kb);
	kv_add(a, &n, "srv_rss_at_kb", false, "%ld", r->s_at.rss_kb);
	kv_add(a, &n, "srv_rss_after_kb", false, "%ld", r->s_after.rss_kb);
	kv_add(a, &n, "srv_rss_untrimmed_kb", false, "%ld", r->s_rss_untrimmed_kb);
	kv_add(a, &n, "srv_kb_per_conn", false, "%.1f", r->kb_per_conn);
	kv_add(a, &n, "srv_heap_idle_kb", false, "%ld", r->s_heap_idle_kb);
	kv_add(a, &n, "srv_heap_at_kb", false, "%ld", r->s_heap_at_kb);
	kv_add(a, &n, "srv_heap_after_kb", false, "%ld", r->s_heap_after_kb);
	kv_add(a, &n, "srv_heap_kb_per_conn", false, "%.1f", r->heap_kb_per_conn);
	kv_add(a, &n, "srv_fds_idle", false, "%ld", r->s_idle.fds);
	kv_add(a, &n, "srv_fds_before", false, "%ld", r->s_before.fds);
	kv_add(a, &n, "srv_fds_at", false, "%ld", r->s_at.fds);
	kv_add(a, &n, "srv_fds_after", false, "%ld", r->s_after.fds);
	kv_add(a, &n, "srv_threads_idle", false, "%ld", r->s_idle.threads);
	kv_add(a, &n, "srv_threads_before", false, "%ld", r->s_before.threads);
	kv_add(a, &n, "srv_threads_at", false, "%ld", r->s_at.threads);
	kv_add(a, &n, "srv_threads_after", false, "%ld", r->s_after.threads);
	kv_add(a, &n, "cli_rss_idle_kb", false, "%ld", r->c_idle.rss_kb);
	kv_add(a, &n, "cli_rss_at_kb", false, "%ld", r->c_at.rss_kb);
	kv_add(a, &n, "cli_fds_idle", false, "%ld", r->c_idle.fds);
	kv_add(a, &n, "cli_fds_at", false, "%ld", r->c_at.fds);
	kv_add(a, &n, "cli_fds_after", false, "%ld", r->c_after.fds);
	kv_add(a, &n, "cli_threads_idle", false, "%ld", r->c_idle.threads);
	kv_add(a, &n, "cli_threads_at", false, "%ld", r->c_at.threads);
	kv_add(a, &n, "cli_threads_after", false, "%ld", r->c_after.threads);
	kv_add(a, &n, "load1", false, "%.2f", r->load);
	kv_add(a, &n, "release", true, "%s", verdict);
	if (csv) {
		if (csv_header) {
			csv_header = false;
			for (int i = 0; i < n; i++)
				fprintf(csv, "%s%c", a[i].k, i + 1 < n ? ',' : '\n');
		}
		for (int i = 0; i < n; i++)
			fprintf(csv, "%s%c", a[i].v, i + 1 < n ? ',' : '\n');
		fflush(csv);
	}
	if (json) {
		for (int i = 0; i < n; i++)
			fprintf(json, "%s\"%s\": %s%s%s", i ? ", " : "{", a[i].k,
				a[i].str ? "\"" : "", a[i].v, a[i].str ? "\"" : "");
		fprintf(json, "}\n");
		fflush(json);
	}
}

/* judge -- everything released: say what was not */
static bool judge(const struct row *r)
{
	bool ok = true;

	if (C.server_pid &&
	    (r->s_after.fds != r->s_idle.fds || r->s_after.threads != r->s_idle.threads)) {
		say("N=%u: the server holds %ld fds / %ld threads after the clients left, %ld / "
		    "%ld idle",
		    r->n, r->s_after.fds, r->s_after.threads, r->s_idle.fds, r->s_idle.threads);
		ok = false;
	}
	if (C.server_pid && C.status_fd >= 0 && !srv_empty) {
		say("N=%u: the server did not report being without connections", r->n);
		ok = false;
	}
	if (C.server_pid && r->s_heap_idle_kb >= 0 && r->s_heap_after_kb >= 0 &&
	    r->s_heap_after_kb - r->s_heap_idle_kb > C.heap_margin_kb) {
		say("N=%u: the server has %ld KiB of heap in use after the clients left, %ld KiB "
		    "idle "
		    "(margin %ld)",
		    r->n, r->s_heap_after_kb, r->s_heap_idle_kb, C.heap_margin_kb);
		ok = false;
	}
	if (C.server_pid && r->s_after.rss_kb - r->s_idle.rss_kb > C.rss_margin_kb) {
		say("N=%u: the server's rss is %ld KiB after the clients left, %ld KiB idle "
		    "(margin %ld)",
		    r->n, r->s_after.rss_kb, r->s_idle.rss_kb, C.rss_margin_kb);
		ok = false;
	}
	if (r->c_after.fds != r->c_idle.fds || r->c_after.threads != r->c_idle.threads) {
		say("N=%u: the client holds %ld fds / %ld threads after closing, %ld / %ld idle",
		    r->n, r->c_after.fds, r->c_after.threads, r->c_idle.fds, r->c_idle.threads);
		ok = false;
	}
	return ok;
}

/* close_all -- disconnect every connection first, then wait for each and delete it */
static int close_all(struct sconn **c, unsigned n)
{
	int rc = 0, ret;

	for (unsigned i = 0; i < n; i++)
		if (c[i] && (ret = rpma_conn_disconnect(c[i]->conn)))
			rc = rerr("rpma_conn_disconnect", ret);
	for (unsigned i = 0; i < n; i++) {
		if (c[i] && conn_close(c[i], true))
			rc = -1;
		c[i] = NULL;
	}
	return rc;
}

/* run_count -- one connection count: open, load (with a sample and probes), close, settle */
static int run_count(struct rpma_peer *peer, struct rpma_mr_local *src, enum op op, size_t size,
		     unsigned n, struct row *r)
{
	unsigned na = C.active && C.active < n ? C.active : n;
	unsigned nt = C.threads < na ? C.threads : na, probes_done = 0;
	struct rpma_conn_cfg *cfg = conn_cfg(C.window);
	struct sconn **conns = calloc(n, sizeof(*conns));
	struct worker *w = calloc(nt, sizeof(*w));
	double *pconn = calloc(C.probes + 1, sizeof(double));
	double *ptot = calloc(C.probes + 1, sizeof(double));
	uint32_t *all = NULL;
	size_t nall = 0;
	uint64_t t0, dur = (uint64_t)(C.duration_s * 1e9);
	unsigned started = 0;
	int rc = -1;

	r->op = op;
	r->size = size;
	r->n = n;
	if (cfg == NULL || conns == NULL || w == NULL || pconn == NULL || ptot == NULL) {
		say("out of memory");
		goto out;
	}
	if (C.server_pid)
		usage_of(C.server_pid, &r->s_before);

	t0 = now_ns();
	for (unsigned i = 0; i < n; i++) {
		conns[i] = conn_open(peer, cfg, i, size);
		if (conns[i] == NULL) {
			say("connection %u of %u failed", i + 1, n);
			goto out;
		}
	}
	r->open_s = (double)(now_ns() - t0) / 1e9;

	/* connections are dealt round robin to the threads */
	t0 = now_ns() + (uint64_t)(C.warmup_s * 1e9);
	for (unsigned t = 0; t < nt; t++) {
		w[t].c = calloc(na / nt + 1, sizeof(*w[t].c));
		if (w[t].c == NULL) {
			say("out of memory");
			goto join;
		}
		for (unsigned i = t; i < na; i += nt)
			w[t].c[w[t].n++] = conns[i];
		w[t].op = op;
		w[t].size = size;
		w[t].window = C.window;
		w[t].src = src;
		w[t].t_measure = t0;
		w[t].t_end = t0 + dur;
	}
	for (; started < nt; started++) {
		int ret = pthread_create(&w[started].th, NULL, worker_main, &w[started]);

		if (ret) {
			say("pthread_create: %s", strerror(ret));
			break;
		}
	}
	if (started < nt) {
		for (unsigned t = 0; t < started; t++)
			w[t].t_end = 0; /* unsynchronised, but only ends the loop early */
		goto join;
	}

	/* the server's usage a quarter into the measurement, then the probes */
	sleep_until(t0 + dur / 4);
	if (C.server_pid)
		usage_of(C.server_pid, &r->s_at);
	if (C.status_fd >= 0 && kill(C.server_pid, SIGUSR1) == 0 &&
	    server_status("usage", -1, 5000) >= 0)
		r->s_heap_at_kb = srv_heap_kb;
	usage_of(0, &r->c_at);
	for (unsigned j = 0; j < C.probes; j++) {
		sleep_until(t0 + (uint64_t)((0.35 + 0.55 * j / C.probes) * (double)dur));
		if (probe(peer, src, cfg, &pconn[probes_done], &ptot[probes_done]) == 0)
			probes_done++;
		else
			say("N=%u: probe %u failed", n, j + 1);
	}
	rc = 0;
join:
	for (unsigned t = 0; t < started; t++) {
		pthread_join(w[t].th, NULL);
		if (w[t].err)
			rc = -1;
		r->ops += w[t].ops;
		nall += w[t].nlat;
	}
	if (rc == 0 && nall) {
		all = malloc(nall * sizeof(*all));
		if (all == NULL) {
			say("out of memory");
			rc = -1;
		} else {
			nall = 0;
			for (unsigned t = 0; t < nt; t++) {
				memcpy(all + nall, w[t].lat, w[t].nlat * sizeof(*all));
				nall += w[t].nlat;
			}
			qsort(all, nall, sizeof(*all), cmp_u32);
		}
	}
	r->secs = (double)dur / 1e9;
	r->ops_s = (double)r->ops / r->secs;
	r->p50 = pct(all, all ? nall : 0, 0.50);
	r->p99 = pct(all, all ? nall : 0, 0.99);
	r->max = pct(all, all ? nall : 0, 1.0);
	r->probes_ok = probes_done;
	if (probes_done) {
		qsort(ptot, probes_done, sizeof(double), cmp_dbl);
		qsort(pconn, probes_done, sizeof(double), cmp_dbl);
		r->probe_connect_ms = pconn[probes_done / 2];
		r->probe_ms = ptot[probes_done / 2];
		r->probe_max_ms = ptot[probes_done - 1];
	} else {
		r->probe_connect_ms = r->probe_ms = r->probe_max_ms = NAN;
	}
	if (probes_done < C.probes)
		rc = -1;
out:
	t0 = now_ns();
	if (conns && C.keep_one && conns[0]) {
		conns[0]->next_kept = kept;
		kept = conns[0];
		conns[0] = NULL;
	}
	if (conns && close_all(conns, n))
		rc = -1;
	r->close_s = (double)(now_ns() - t0) / 1e9;
	if (C.server_pid) {
		settle(&r->s_idle, &r->s_after, &r->s_heap_after_kb, &r->s_rss_untrimmed_kb);
		r->kb_per_conn = (double)(r->s_at.rss_kb - r->s_idle.rss_kb) / n;
		if (r->s_heap_at_kb >= 0 && r->s_heap_idle_kb >= 0)
			r->heap_kb_per_conn = (double)(r->s_heap_at_kb - r->s_heap_idle_kb) / n;
	}
	usage_of(0, &r->c_after);
	r->load = load1();
	r->pass = judge(r);
	if (w)
		for (unsigned t = 0; t < nt; t++) {
			free(w[t].c);
			free(w[t].lat);
		}
	free(w);
	free(all);
	free(conns);
	free(pconn);
	free(ptot);
	if (cfg)
		rpma_conn_cfg_delete(&cfg);
	return rc;
}

/* run_client -- the whole series; 0 when every count ran and released everything */
static int run_client(void)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct usage s_idle = {-1, -1, -1}, c_idle;
	long s_heap_idle = -1;
	FILE *csv = NULL, *json = NULL;
	size_t max_size = 64;
	char *buf = NULL;
	unsigned rows = 0, passed = 0, failed_runs = 0, probes_lost = 0;
	double dummy1, dummy2, worst_probe = 0;
	const char *prov = getenv("RPMA_PROVIDER"), *fiprov = getenv("FI_PROVIDER"), *verdict;
	int ret, rc = -1;

	for (unsigned i = 0; i < C.nsizes; i++)
		if (C.sizes[i] > max_size)
			max_size = C.sizes[i];
	if (C.csv_path) {
		csv = strcmp(C.csv_path, "-") ? fopen(C.csv_path, "a") : stdout;
		if (csv == NULL) {
			say("%s: %s", C.csv_path, strerror(errno));
			goto out;
		}
		fseek(csv, 0, SEEK_END);
		csv_header = csv == stdout || ftell(csv) == 0;
	}
	if (C.json_path) {
		json = strcmp(C.json_path, "-") ? fopen(C.json_path, "a") : stdout;
		if (json == NULL) {
			say("%s: %s", C.json_path, strerror(errno));
			goto out;
		}
	}
	buf = aligned_alloc(4096, (max_size + 4095) / 4096 * 4096);
	if (buf == NULL) {
		say("out of memory");
		goto out;
	}
	memset(buf, 0x5a, max_size);
	if (open_peer(false, &peer))
		goto out;
	ret = rpma_mr_reg(peer, buf, max_size, RPMA_MR_USAGE_WRITE_SRC, &src);
	if (ret) {
		rerr("rpma_mr_reg", ret);
		goto out;
	}

	/* warm-up: one probe, so that one-time allocations do not count as growth */
	cfg = conn_cfg(C.window);
	if (cfg == NULL || probe(peer, src, cfg, &dummy1, &dummy2)) {
		say("the warm-up connection failed");
		goto out;
	}
	if (C.server_pid) {
		server_status("conns", 0, (int)(C.settle_s * 1000));
		s_heap_idle = srv_heap_kb;
		usleep(100000);
		/* measured as settle() measures "after": a usage line (a trim), then /proc */
		if (kill(C.server_pid, SIGUSR1) == 0 && server_status("usage", 0, 5000) == 0)
			s_heap_idle = srv_heap_kb;
		usage_of(C.server_pid, &s_idle);
	}
	usage_of(0, &c_idle);

	printf("# %s: RPMA_PROVIDER=%s FI_PROVIDER=%s %s:%s; window %u per connection, %u client "
	       "thread(s), %.2f s + %.2f s warm-up per count, %u probe(s); server pid %d%s; "
	       "load %.2f\n",
	       TOOL, prov && *prov ? prov : "(auto)", fiprov && *fiprov ? fiprov : "(auto)", C.addr,
	       C.port, C.window, C.threads, C.duration_s, C.warmup_s, C.probes, (int)C.server_pid,
	       C.server_pid ? "" : " (unknown: no server figures)", load1());
	printf("# server idle: rss %ld KiB, heap in use %ld KiB, %ld fds, %ld threads; client "
	       "idle: rss %ld KiB, %ld "
	       "fds, %ld threads\n",
	       s_idle.rss_kb, s_heap_idle, s_idle.fds, s_idle.threads, c_idle.rss_kb, c_idle.fds,
	       c_idle.threads);
	printf("#%-10s %6s %5s %10s %8s %8s %3s %8s %8s %8s %20s %13s %14s %11s %5s %s\n", "op",
	       "bytes", "conns", "ops/s", "p50[us]", "p99[us]", "prb", "conn[ms]", "prb[ms]",
	       "max[ms]", "srv rss 0/N/aft[KiB]", "KiB/conn rss/heap", "srv fds b/N/a",
	       "srv thr b/N/a", "load", "release");
	for (unsigned o = 0; o < 2; o++) {
		if (!(C.ops & (1u << o)))
			continue;
		for (unsigned s = 0; s < C.nsizes; s++) {
			for (unsigned k = 0; k < C.ncounts; k++) {
				struct row r = {.s_idle = s_idle,
						.c_idle = c_idle,
						.s_heap_idle_kb = s_heap_idle,
						.s_heap_at_kb = -1,
						.s_heap_after_kb = -1,
						.heap_kb_per_conn = NAN,
						.s_rss_untrimmed_kb = -1};

				if (run_count(peer, src, (enum op)o, C.sizes[s], C.counts[k], &r))
					failed_runs++;
				probes_lost += C.probes - r.probes_ok;
				if (r.probes_ok && r.probe_max_ms > worst_probe)
					worst_probe = r.probe_max_ms;
				emit(&r, csv, json);
				rows++;
				if (r.pass)
					passed++;
			}
		}
	}
	verdict = passed == rows ? "PASS" : "FAIL";
	if (!C.server_pid)
		verdict = "n/a, no server pid";
	printf("# release: %s (%u of %u counts back to idle fds/threads on both sides, server heap "
	       "within %ld KiB and rss within %ld KiB of idle)\n",
	       verdict, passed, rows, C.heap_margin_kb, C.rss_margin_kb);
	printf("# responsiveness: %s (%u probe(s) lost, slowest %.2f ms)\n",
	       probes_lost ? "FAIL" : "PASS", probes_lost, worst_probe);
	if (failed_runs)
		printf("# %u count(s) failed to run (see stderr)\n", failed_runs);
	rc = (failed_runs || probes_lost || (C.server_pid && passed != rows)) ? -1 : 0;
out:
	while (kept) {
		struct sconn *c = kept;

		kept = c->next_kept;
		if (conn_close(c, false))
			rc = -1;
	}
	if (cfg)
		rpma_conn_cfg_delete(&cfg);
	if (src && (ret = rpma_mr_dereg(&src)))
		rc = rerr("rpma_mr_dereg", ret);
	if (peer && (ret = rpma_peer_delete(&peer)))
		rc = rerr("rpma_peer_delete", ret);
	free(buf);
	if (csv && csv != stdout)
		fclose(csv);
	if (json && json != stdout)
		fclose(json);
	return rc;
}

/* ------------------------------------------------------------ options */

/* usage -- the help text */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s server|client|both [options]\n"
		"  -a ADDR      address (default 127.0.0.1)\n"
		"  -p PORT      port (default 7474)\n"
		"  -c COUNTS    connection counts: comma list of N or A-B (doubling from A to B);\n"
		"               default 1-256\n"
		"  -d SECONDS   measured time per count (default 2)\n"
		"  -W SECONDS   warm-up per count (default a tenth of -d)\n"
		"  -o OPS       write-flush (64 B unsignaled write + flush to visibility), write\n"
		"               (signaled write); comma list (default write-flush)\n"
		"  -s SIZES     bytes per write, comma list, K/M suffixes (default 64)\n"
		"  -w N         operations in flight per connection (default 1, at most %d)\n"
		"  -T N         client threads; connections are dealt round robin (default 1)\n"
		"  -A N         only the first N connections of a count carry load, the\n"
		"               others stay open and idle (default: all)\n"
		"  -k N         probe connections per count (default 5)\n"
		"  -P PID       client: the server's process id, for its /proc figures\n"
		"  -m KIB       resident memory the server may keep after clients leave (default "
		"4096)\n"
		"  -M KIB       heap in use the server may keep after clients leave (default 256)\n"
		"  -S SECONDS   how long to wait for the server to release (default 10)\n"
		"  -R BYTES     server: region size (default 1M)\n"
		"  --pmem       server: register the region for persistent flushes too\n"
		"  --status-fd FD  server: report connection counts there; client: read them\n"
		"  --keep-one   self-test of the release check: leave one connection of each "
		"count\n"
		"               open until the end (the check must then FAIL)\n"
		"  -l LABEL --csv FILE --json FILE (append; '-' is stdout) -t SECONDS (whole "
		"run)\n",
		TOOL, MAX_WINDOW);
}

/* parse_size -- a size with an optional K/M suffix; 0 on error */
static size_t parse_size(const char *s, char **end)
{
	unsigned long long v = strtoull(s, end, 10);

	if (*end == s)
		return 0;
	if (**end == 'K' || **end == 'k') {
		v <<= 10;
		(*end)++;
	} else if (**end == 'M' || **end == 'm') {
		v <<= 20;
		(*end)++;
	}
	return (size_t)v;
}

/* parse_counts -- "1-256,300" */
static int parse_counts(const char *s)
{
	C.ncounts = 0;
	while (*s) {
		char *e;
		unsigned long a = strtoul(s, &e, 10), b;

		if (e == s || a == 0)
			return -1;
		b = a;
		if (*e == '-') {
			s = e + 1;
			b = strtoul(s, &e, 10);
			if (e == s || b < a)
				return -1;
		}
		if (b > MAX_CONNS)
			return -1;
		for (unsigned long v = a; v <= b; v *= 2) {
			if (C.ncounts == MAX_COUNTS)
				return -1;
			C.counts[C.ncounts++] = (unsigned)v;
		}
		if (*e == ',')
			e++;
		else if (*e)
			return -1;
		s = e;
	}
	return C.ncounts ? 0 : -1;
}

/* parse_list -- sizes or operations */
static int parse_list(const char *s, bool sizes)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int rc = 0;

	if (copy == NULL)
		return -1;
	if (sizes)
		C.nsizes = 0;
	else
		C.ops = 0;
	for (tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		if (sizes) {
			char *e;
			size_t v = parse_size(tok, &e);

			if (v < 8 || v > (64u << 20) || *e || C.nsizes == 8)
				rc = -1;
			else
				C.sizes[C.nsizes++] = v;
		} else if (strcmp(tok, "write-flush") == 0) {
			C.ops |= 1u << OP_WRITE_FLUSH;
		} else if (strcmp(tok, "write") == 0) {
			C.ops |= 1u << OP_WRITE;
		} else {
			rc = -1;
		}
	}
	free(copy);
	return rc || (sizes ? C.nsizes == 0 : C.ops == 0) ? -1 : 0;
}

/* parse_num -- a non-negative number; -1 on error */
static double parse_num(const char *s)
{
	char *e;
	double v = strtod(s, &e);

	return (e == s || *e || !(v >= 0)) ? -1 : v;
}

/* bad -- refuse a command line */
static int bad(const char *what)
{
	fprintf(stderr, "%s: bad %s\n", TOOL, what);
	usage(stderr);
	return 2;
}

/* on_alarm -- the whole run took too long */
static void on_alarm(int sig)
{
	static const char m[] = TOOL ": timeout, stopping\n";
	ssize_t r = write(2, m, sizeof(m) - 1);

	(void)sig;
	(void)r;
	if (child_pid > 0)
		kill(child_pid, SIGKILL);
	_exit(3);
}

/* main -- server, client, or both (a forked server and the client) */
int main(int argc, char *argv[])
{
	static const struct option lo[] = {
		{"pmem", no_argument, NULL, 1},
		{"status-fd", required_argument, NULL, 2},
		{"csv", required_argument, NULL, 3},
		{"json", required_argument, NULL, 4},
		{"keep-one", no_argument, NULL, 5},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *role;
	double v;
	int opt, rc;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	role = argv[1];
	if (strcmp(role, "server") && strcmp(role, "client") && strcmp(role, "both"))
		return bad("role");
	parse_counts("1-256");
	parse_list("64", true);
	parse_list("write-flush", false);
	optind = 2;
	while ((opt = getopt_long(argc, argv, "a:p:c:d:W:o:s:w:T:A:k:P:m:M:S:R:l:t:h", lo, NULL)) !=
	       -1) {
		switch (opt) {
		case 'a':
			C.addr = optarg;
			break;
		case 'p':
			C.port = optarg;
			break;
		case 'c':
			if (parse_counts(optarg))
				return bad("-c");
			break;
		case 'd':
			if ((C.duration_s = parse_num(optarg)) <= 0)
				return bad("-d");
			break;
		case 'W':
			if ((C.warmup_s = parse_num(optarg)) < 0)
				return bad("-W");
			break;
		case 'o':
			if (parse_list(optarg, false))
				return bad("-o");
			break;
		case 's':
			if (parse_list(optarg, true))
				return bad("-s");
			break;
		case 'w':
			v = parse_num(optarg);
			if (v < 1 || v > MAX_WINDOW || v != floor(v))
				return bad("-w");
			C.window = (unsigned)v;
			break;
		case 'T':
			v = parse_num(optarg);
			if (v < 1 || v > 64 || v != floor(v))
				return bad("-T");
			C.threads = (unsigned)v;
			break;
		case 'A':
			v = parse_num(optarg);
			if (v < 1 || v > MAX_CONNS || v != floor(v))
				return bad("-A");
			C.active = (unsigned)v;
			break;
		case 'k':
			v = parse_num(optarg);
			if (v < 0 || v > 1000 || v != floor(v))
				return bad("-k");
			C.probes = (unsigned)v;
			break;
		case 'P':
			v = parse_num(optarg);
			if (v < 1 || v != floor(v))
				return bad("-P");
			C.server_pid = (pid_t)v;
			break;
		case 'm':
			if ((v = parse_num(optarg)) < 0)
				return bad("-m");
			C.rss_margin_kb = (long)v;
			break;
		case 'M':
			if ((v = parse_num(optarg)) < 0)
				return bad("-M");
			C.heap_margin_kb = (long)v;
			break;
		case 'S':
			if ((C.settle_s = parse_num(optarg)) < 0)
				return bad("-S");
			break;
		case 'R': {
			char *e;

			C.region_size = parse_size(optarg, &e);
			if (C.region_size < 4096 || *e)
				return bad("-R");
			break;
		}
		case 'l':
			C.label = optarg;
			for (const char *q = optarg; *q; q++)
				if (*q == ',' || *q == '"' || *q == '\\' || (unsigned char)*q < 32)
					return bad("-l (no commas, quotes or control characters)");
			break;
		case 't':
			v = parse_num(optarg);
			if (v < 0 || v > 86400 || v != floor(v))
				return bad("-t");
			C.timeout_s = (int)v;
			break;
		case 5:
			C.keep_one = true;
			break;
		case 1:
			C.pmem_usage = true;
			break;
		case 2:
			v = parse_num(optarg);
			if (v < 0 || v != floor(v))
				return bad("--status-fd");
			C.status_fd = (int)v;
			break;
		case 3:
			C.csv_path = optarg;
			break;
		case 4:
			C.json_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		return bad("argument");
	if (C.warmup_s < 0)
		C.warmup_s = C.duration_s / 10;
	for (unsigned i = 0; i < C.nsizes; i++)
		if (C.sizes[i] > C.region_size)
			return bad("-s (larger than the region, -R)");

	/* each connection costs a few descriptors on either side; be generous */
	raise_nofile(1024 + 16 * (rlim_t)(C.counts[C.ncounts - 1] + 8));
	if (C.timeout_s) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)C.timeout_s);
	}
	if (strcmp(role, "server") == 0)
		return run_server() ? 1 : 0;
	if (strcmp(role, "client") == 0)
		return run_client() ? 1 : 0;

	/* both: the server is a child process reporting on a pipe */
	int sp[2], st = 0;

	if (pipe(sp)) {
		say("pipe: %s", strerror(errno));
		return 1;
	}
	fflush(NULL);
	child_pid = fork();
	if (child_pid < 0) {
		say("fork: %s", strerror(errno));
		return 1;
	}
	if (child_pid == 0) {
		close(sp[0]);
		C.status_fd = sp[1];
		alarm(0); /* the parent's timer kills the server too */
		_exit(run_server() ? 1 : 0);
	}
	close(sp[1]);
	C.status_fd = sp[0];
	C.server_pid = child_pid;
	if (server_status("ready", 0, 10000) != 0) {
		say("the server did not start");
		kill(child_pid, SIGTERM);
		waitpid(child_pid, NULL, 0);
		return 1;
	}
	rc = run_client();
	kill(child_pid, SIGTERM);
	if (waitpid(child_pid, &st, 0) != child_pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		say("the server did not exit cleanly (status 0x%x)", st);
		rc = -1;
	}
	return rc ? 1 : 0;
}
