/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * churn.c -- connection churn: many connect / write / flush / disconnect
 * cycles against one server, without growing fds, threads or memory
 *
 * usage: churn [cycles]
 *
 * The process forks: the parent is the server (one peer, one region, one
 * endpoint for the whole run), the child the client (one peer and one
 * region; per cycle a connection request, a write of a block stamped with
 * the cycle number, a flush to visibility waited for on the CQ, a
 * disconnect).  The server hands out the region's descriptor as private
 * data, waits for the client to close, and checks that the block of the
 * cycle arrived.  Both processes count their open file descriptors
 * (/proc/self/fd), threads (/proc/self/task), resident memory (/proc/self/statm)
 * and heap bytes in use (mallinfo2) after a warm-up and at the end: more fds
 * or threads, or more memory than the margin, fail the run.
 *
 * Environment: RPMA_CHURN_CYCLES (default 15000, about 30 s on loopback, or the argument),
 * RPMA_CHURN_WARMUP (cycles before the first measurement, default 20),
 * RPMA_CHURN_RSS_MARGIN_KB (default 4096), RPMA_CHURN_HEAP_MARGIN_KB
 * (default 128), RPMA_CHURN_IP (default 127.0.0.1), RPMA_CHURN_PORT (default:
 * a free one), RPMA_CHURN_CYCLE_TIMEOUT (seconds one cycle may take, default
 * 30), RPMA_CHURN_BUSY (busy-looping processes beside the pair, default 2),
 * RPMA_CHURN_CONNECT_TIMEOUT_MS (the client's connection timeout,
 * rpma_conn_cfg_set_timeout, default 5000), RPMA_CHURN_RECORD (library log
 * lines each process keeps in memory, default 256, 0: none; see below).
 * RPMA_PROVIDER defaults to fabric.
 *
 * The flight recorder: unless RPMA_LOG_LEVEL is set (then the library's
 * own log function prints to stderr as asked), each process takes the
 * library's log lines up to INFO into a ring in memory, prints the ones of
 * WARNING or worse at once, and prints the ring when a cycle fails: a
 * failure one cycle in 15 000 shows what the library saw just before it,
 * which a run with the log on stderr (slower, other timing) may never hit.
 *
 * The client's connections wait for the server longer than the default
 * 1000 ms, which bounds the whole handshake on the fabric provider: with the
 * busy loops a 2-core machine can stall a cycle that long (2 of 12 runs once
 * failed with "no connection within 1000 ms"), and the churn is about what a
 * connection leaves behind, not about the timeout.
 *
 * The busy loops keep every CPU taken, so that the server's and the
 * client's threads are preempted anywhere, also inside libfabric: that is
 * how libfabric 2.x's tcp queues a connection's FI_SHUTDOWN before its
 * FI_CONNECTED on the server (fabric_conn.c, fab_conn_early), which a quiet
 * machine shows only now and then.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "librpma.h"

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

#define REGION_SIZE (64 * 1024)
#define BLOCK_SIZE  4096
#define FLUSH_CTX   ((const void *)0xF1u)

#if defined(__SANITIZE_ADDRESS__)
#define CHURN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHURN_ASAN 1
#endif
#endif

static const char *role = "churn";

/* what one process uses */
struct usage {
	long fds;
	long threads;
	long rss_kb;
	long heap_kb; /* -1 when the allocator does not tell (sanitizers) */
};

/* msg -- one line on stderr, prefixed with the role */
__attribute__((format(printf, 1, 2))) static void msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", role);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ----- the flight recorder: the library's last log lines of this process */

#define RECORD_LINE 240

static struct {
	pthread_mutex_t lock;
	char (*lines)[RECORD_LINE]; /* a ring of size lines */
	size_t size;
	size_t next;		   /* lines taken so far */
	enum rpma_log_level saved; /* the threshold before record_start */
} rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * say -- the role, then len bytes of text, on stderr in one write()
 * (async-signal-safe; the other process may be printing too)
 */
static void say(const char *text, size_t len)
{
	char out[16 + 8 + RECORD_LINE];
	size_t r = strnlen(role, 15);
	if (len > sizeof(out) - r)
		len = sizeof(out) - r;
	memcpy(out, role, r);
	memcpy(out + r, text, len);
	ssize_t w = write(2, out, r + len);
	(void)w;
}

/* record_log -- the library's log function: the line into the ring; WARNING or worse on stderr */
__attribute__((format(printf, 5, 6))) static void record_log(enum rpma_log_level level,
							     const char *file, const int line,
							     const char *func, const char *fmt, ...)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char text[RECORD_LINE];
	int n = snprintf(text, sizeof(text), "%ld.%06ld %s:%d %s: ", (long)ts.tv_sec,
			 ts.tv_nsec / 1000, file, line, func);
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof(text)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (level <= RPMA_LOG_LEVEL_WARNING)
		fprintf(stderr, "%s: library: %s\n", role, text);
	pthread_mutex_lock(&rec.lock);
	memcpy(rec.lines[rec.next % rec.size], text, sizeof(text));
	rec.next++;
	pthread_mutex_unlock(&rec.lock);
}

/* record_start -- take the library's log into the ring (not when RPMA_LOG_LEVEL asks for stderr) */
static void record_start(long size)
{
	const char *lvl = getenv("RPMA_LOG_LEVEL");
	if (size <= 0 || (lvl && *lvl))
		return;
	rec.lines = calloc((size_t)size, RECORD_LINE);
	if (rec.lines == NULL)
		return;
	rec.size = (size_t)size;
	if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &rec.saved) ||
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO) ||
	    rpma_log_set_function(record_log)) {
		free(rec.lines);
		rec.lines = NULL;
		rec.size = 0;
	}
}

/*
 * record_write -- the ring on stderr, oldest line first, with write() only:
 * the watchdog calls it without the lock too (a thread may hold the lock,
 * or be writing a line meanwhile)
 */
static void record_write(void)
{
	static const char h[] = ": the library's last log lines, oldest first:\n";
	size_t next = rec.next, size = rec.size;
	if (size == 0)
		return;
	say(h, sizeof(h) - 1);
	for (size_t i = next > size ? next - size : 0; i < next; i++) {
		char text[8 + RECORD_LINE];
		size_t n = strnlen(rec.lines[i % size], RECORD_LINE);
		memcpy(text, ":   ", 4);
		memcpy(text + 4, rec.lines[i % size], n);
		text[4 + n] = '\n';
		say(text, 5 + n);
	}
}

/* record_dump -- print the ring (a cycle failed) */
static void record_dump(void)
{
	pthread_mutex_lock(&rec.lock);
	record_write();
	pthread_mutex_unlock(&rec.lock);
}

/* record_stop -- back to the library's own log function (the caller deleted its peer) */
static void record_stop(void)
{
	if (rec.size == 0)
		return;
	(void)rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, rec.saved);
	/* the peers are deleted: no thread of the library logs any more */
	free(rec.lines);
	rec.lines = NULL;
	rec.size = 0;
}

/* fail_rpma -- report a failed call and return -1 */
static int fail_rpma(const char *what, int ret, long cycle)
{
	msg("cycle %ld: %s failed: %s (%d)", cycle, what, rpma_err_2str(ret), ret);
	return -1;
}

/* env_long -- a positive number from the environment, or def */
static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	if (v == NULL || *v == '\0')
		return def;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end != '\0' || n < 0) {
		msg("%s=\"%s\" is not a number: using %ld", name, v, def);
		return def;
	}
	return n;
}

/* count_dir -- entries of a /proc directory, without . and .. (and the dir's own fd) */
static long count_dir(const char *path, bool own_fd)
{
	DIR *d = opendir(path);
	if (d == NULL)
		return -1;
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return own_fd ? n - 1 : n;
}

/* measure -- fds, threads and memory of this process now */
static struct usage measure(void)
{
	struct usage u = {-1, -1, -1, -1};
	u.fds = count_dir("/proc/self/fd", true);
	u.threads = count_dir("/proc/self/task", false);
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		long size, resident;
		if (fscanf(f, "%ld %ld", &size, &resident) == 2)
			u.rss_kb = resident * (sysconf(_SC_PAGESIZE) / 1024);
		fclose(f);
	}
#ifndef CHURN_ASAN
	struct mallinfo2 mi = mallinfo2();
	u.heap_kb = (long)((mi.uordblks + mi.hblkhd) / 1024);
#endif
	return u;
}

/* judge -- compare the two measurements; 0 when nothing grew beyond its margin */
static int judge(const struct usage *a, const struct usage *b, long cycles)
{
	long rss_margin = env_long("RPMA_CHURN_RSS_MARGIN_KB", 4096);
	long heap_margin = env_long("RPMA_CHURN_HEAP_MARGIN_KB", 128);
	int bad = 0;

	printf("%s: after warm-up -> after %ld more cycles: fds %ld -> %ld, threads %ld -> %ld, "
	       "rss %ld -> %ld KiB, heap in use %ld -> %ld KiB\n",
	       role, cycles, a->fds, b->fds, a->threads, b->threads, a->rss_kb, b->rss_kb,
	       a->heap_kb, b->heap_kb);
	fflush(stdout);
	if (a->fds < 0 || a->threads < 0 || a->rss_kb < 0) {
		msg("cannot read /proc/self");
		return -1;
	}
	if (b->fds > a->fds) {
		msg("open file descriptors grew by %ld", b->fds - a->fds);
		bad = -1;
	}
	if (b->threads > a->threads) {
		msg("threads grew by %ld", b->threads - a->threads);
		bad = -1;
	}
#ifdef CHURN_ASAN
	(void)rss_margin;
	(void)heap_margin;
	msg("built with AddressSanitizer: memory growth not judged (LeakSanitizer runs at exit)");
#else
	if (b->rss_kb - a->rss_kb > rss_margin) {
		msg("resident memory grew by %ld KiB (margin %ld KiB)", b->rss_kb - a->rss_kb,
		    rss_margin);
		bad = -1;
	}
	if (a->heap_kb >= 0 && b->heap_kb - a->heap_kb > heap_margin) {
		msg("heap in use grew by %ld KiB (margin %ld KiB)", b->heap_kb - a->heap_kb,
		    heap_margin);
		bad = -1;
	}
#endif
	return bad;
}

/* watchdog -- a cycle took too long: say so, print the ring, and stop */
static void watchdog(int sig)
{
	(void)sig;
	static const char m[] = ": a cycle exceeded RPMA_CHURN_CYCLE_TIMEOUT: stuck\n";
	say(m, sizeof(m) - 1);
	record_write(); /* without the lock, no stdio: a thread may hold either */
	_exit(3);
}

/* open_peer -- a peer on the device serving addr */
static int open_peer(const char *addr, bool passive, struct rpma_peer **peer)
{
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(
		addr, passive ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev);
	if (ret)
		return fail_rpma("rpma_utils_get_ibv_context", ret, 0);
	ret = rpma_peer_new(dev, peer);
	if (ret)
		return fail_rpma("rpma_peer_new", ret, 0);
	return 0;
}

/* wait_event -- the next connection event must be the expected one */
static int wait_event(struct rpma_conn *conn, enum rpma_conn_event expected, long cycle)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);
	if (ret)
		return fail_rpma("rpma_conn_next_event", ret, cycle);
	if (ev != expected) {
		msg("cycle %ld: event \"%s\", \"%s\" expected", cycle,
		    rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(expected));
		return -1;
	}
	return 0;
}

/* stamp -- the block of a cycle: its number, then a pattern derived from it */
static void stamp(unsigned char *block, long cycle)
{
	uint64_t c = (uint64_t)cycle;
	memcpy(block, &c, sizeof(c));
	for (size_t i = sizeof(c); i < BLOCK_SIZE; i++)
		block[i] = (unsigned char)(i * 31 + (size_t)cycle);
}

/* ----- server */

/* server_cycle -- accept one client, wait until it has gone, check its block */
static int server_cycle(struct rpma_ep *ep, const struct rpma_conn_private_data *pdata,
			unsigned char *region, long cycle)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret)
		return fail_rpma("rpma_ep_next_conn_req", ret, cycle);
	ret = rpma_conn_req_connect(&req, pdata, &conn);
	if (ret)
		return fail_rpma("rpma_conn_req_connect", ret, cycle);
	int rc = wait_event(conn, RPMA_CONN_ESTABLISHED, cycle);
	if (rc == 0)
		rc = wait_event(conn, RPMA_CONN_CLOSED, cycle);
	ret = rpma_conn_disconnect(conn);
	if (ret && rc == 0)
		rc = fail_rpma("rpma_conn_disconnect", ret, cycle);
	ret = rpma_conn_delete(&conn);
	if (ret && rc == 0)
		rc = fail_rpma("rpma_conn_delete", ret, cycle);
	if (rc)
		return rc;

	unsigned char expected[BLOCK_SIZE];
	stamp(expected, cycle);
	size_t off = (size_t)(cycle % (REGION_SIZE / BLOCK_SIZE)) * BLOCK_SIZE;
	if (memcmp(region + off, expected, BLOCK_SIZE) != 0) {
		msg("cycle %ld: the block written by the client did not arrive", cycle);
		return -1;
	}
	return 0;
}

/* run_server -- one endpoint for all cycles; ready_fd gets a byte once it listens */
static int run_server(const char *addr, const char *port, long cycles, long warmup, int ready_fd,
		      long timeout)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	unsigned char *region = NULL;
	struct usage before = {0}, after;
	int rc = -1;

	if (open_peer(addr, true, &peer))
		goto out;
	region = aligned_alloc(4096, REGION_SIZE);
	if (region == NULL) {
		msg("out of memory");
		goto out;
	}
	memset(region, 0, REGION_SIZE);
	int ret = rpma_mr_reg(peer, region, REGION_SIZE,
			      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			      &mr);
	if (ret) {
		fail_rpma("rpma_mr_reg", ret, 0);
		goto out;
	}
	unsigned char desc[32];
	size_t desc_size = 0;
	ret = rpma_mr_get_descriptor_size(mr, &desc_size);
	if (ret == 0 && desc_size > sizeof(desc))
		ret = RPMA_E_UNKNOWN;
	if (ret == 0)
		ret = rpma_mr_get_descriptor(mr, desc);
	if (ret) {
		fail_rpma("rpma_mr_get_descriptor", ret, 0);
		goto out;
	}
	struct rpma_conn_private_data pdata = {desc, (uint8_t)desc_size};

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		fail_rpma("rpma_ep_listen", ret, 0);
		goto out;
	}
	if (write(ready_fd, "r", 1) != 1) {
		msg("cannot tell the client that the server listens");
		goto out;
	}
	close(ready_fd);
	ready_fd = -1;

	for (long c = 0; c < cycles; c++) {
		if (c == warmup)
			before = measure();
		alarm((unsigned)timeout);
		if (server_cycle(ep, &pdata, region, c)) {
			record_dump();
			goto out;
		}
	}
	alarm(0);
	after = measure();
	rc = judge(&before, &after, cycles - warmup);

out:
	alarm(0);
	if (ready_fd >= 0)
		close(ready_fd);
	if (ep)
		(void)rpma_ep_shutdown(&ep);
	if (mr)
		(void)rpma_mr_dereg(&mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	free(region);
	return rc;
}

/* ----- client */

/* wait_flush -- wait on the CQ until the flush completes (writes complete silently) */
static int wait_flush(struct rpma_conn *conn, long cycle)
{
	struct rpma_cq *cq = NULL;
	int ret = rpma_conn_get_cq(conn, &cq);
	if (ret)
		return fail_rpma("rpma_conn_get_cq", ret, cycle);
	for (;;) {
		ret = rpma_cq_wait(cq);
		if (ret)
			return fail_rpma("rpma_cq_wait", ret, cycle);
		for (;;) {
			struct ibv_wc wc;
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			if (ret == RPMA_E_NO_COMPLETION)
				break;
			if (ret)
				return fail_rpma("rpma_cq_get_wc", ret, cycle);
			if (wc.status != IBV_WC_SUCCESS) {
				msg("cycle %ld: completion failed: status %d", cycle,
				    (int)wc.status);
				return -1;
			}
			if (wc.wr_id == (uint64_t)(uintptr_t)FLUSH_CTX)
				return 0;
		}
	}
}

/* client_cycle -- connect, write the cycle's block, flush, disconnect */
static int client_cycle(struct rpma_peer *peer, const char *addr, const char *port,
			const struct rpma_conn_cfg *cfg, struct rpma_mr_local *src,
			unsigned char *buf, long cycle)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *dst = NULL;
	bool established = false;
	int rc = -1;

	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret)
		return fail_rpma("rpma_conn_req_new", ret, cycle);
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret)
		return fail_rpma("rpma_conn_req_connect", ret, cycle);
	if (wait_event(conn, RPMA_CONN_ESTABLISHED, cycle))
		goto out;
	established = true;

	struct rpma_conn_private_data pdata;
	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		fail_rpma("rpma_conn_get_private_data", ret, cycle);
		goto out;
	}
	ret = rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &dst);
	if (ret) {
		fail_rpma("rpma_mr_remote_from_descriptor", ret, cycle);
		goto out;
	}

	size_t off = (size_t)(cycle % (REGION_SIZE / BLOCK_SIZE)) * BLOCK_SIZE;
	stamp(buf, cycle);
	ret = rpma_write(conn, dst, off, src, 0, BLOCK_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret) {
		fail_rpma("rpma_write", ret, cycle);
		goto out;
	}
	ret = rpma_flush(conn, dst, off, BLOCK_SIZE, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, FLUSH_CTX);
	if (ret) {
		fail_rpma("rpma_flush", ret, cycle);
		goto out;
	}
	if (wait_flush(conn, cycle))
		goto out;
	rc = 0;

out:
	ret = rpma_conn_disconnect(conn);
	if (ret && rc == 0)
		rc = fail_rpma("rpma_conn_disconnect", ret, cycle);
	/* a connection that never came up has had its last event already */
	if (ret == 0 && established && wait_event(conn, RPMA_CONN_CLOSED, cycle) && rc == 0)
		rc = -1;
	ret = rpma_conn_delete(&conn);
	if (ret && rc == 0)
		rc = fail_rpma("rpma_conn_delete", ret, cycle);
	if (dst)
		(void)rpma_mr_remote_delete(&dst);
	return rc;
}

/* run_client -- all cycles, once the server listens */
static int run_client(const char *addr, const char *port, long cycles, long warmup, int ready_fd,
		      long timeout)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	unsigned char *buf = NULL;
	struct usage before = {0}, after;
	int rc = -1;
	char r;

	alarm((unsigned)timeout);
	if (read(ready_fd, &r, 1) != 1) {
		msg("the server did not start");
		return -1;
	}
	close(ready_fd);

	if (open_peer(addr, false, &peer))
		goto out;
	buf = aligned_alloc(4096, BLOCK_SIZE);
	if (buf == NULL) {
		msg("out of memory");
		goto out;
	}
	int ret = rpma_mr_reg(peer, buf, BLOCK_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src);
	if (ret) {
		fail_rpma("rpma_mr_reg", ret, 0);
		goto out;
	}
	ret = rpma_conn_cfg_new(&cfg);
	if (ret) {
		fail_rpma("rpma_conn_cfg_new", ret, 0);
		goto out;
	}
	long ms = env_long("RPMA_CHURN_CONNECT_TIMEOUT_MS", 5000);
	ret = rpma_conn_cfg_set_timeout(cfg, ms < 1 ? 1 : ms > 600000 ? 600000 : (int)ms);
	if (ret) {
		fail_rpma("rpma_conn_cfg_set_timeout", ret, 0);
		goto out;
	}

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long c = 0; c < cycles; c++) {
		if (c == warmup)
			before = measure();
		alarm((unsigned)timeout);
		if (client_cycle(peer, addr, port, cfg, src, buf, c)) {
			record_dump();
			goto out;
		}
	}
	alarm(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	after = measure();
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("client: %ld cycles in %.1f s (%.1f ms per connect/write/flush/disconnect)\n",
	       cycles, secs, 1000.0 * secs / (double)cycles);
	rc = judge(&before, &after, cycles - warmup);

out:
	alarm(0);
	if (cfg)
		(void)rpma_conn_cfg_delete(&cfg);
	if (src)
		(void)rpma_mr_dereg(&src);
	if (peer)
		(void)rpma_peer_delete(&peer);
	free(buf);
	return rc;
}

/* free_port -- a TCP port nobody uses on addr right now */
static int free_port(const char *addr, char *port, size_t size)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = 0};
	socklen_t len = sizeof(sin);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    bind(s, (struct sockaddr *)&sin, sizeof(sin)) ||
	    getsockname(s, (struct sockaddr *)&sin, &len)) {
		close(s);
		return -1;
	}
	close(s);
	snprintf(port, size, "%u", (unsigned)ntohs(sin.sin_port));
	return 0;
}

/* busy_start -- fork n processes that spin until killed (or their parent dies) */
static int busy_start(long n, pid_t *pids)
{
	for (long i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("churn: fork");
			return -1;
		}
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (volatile unsigned long x = 0;; x++)
				;
		}
	}
	return 0;
}

/* busy_stop -- kill and reap the busy loops that were started */
static void busy_stop(long n, const pid_t *pids)
{
	for (long i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		kill(pids[i], SIGKILL);
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/* main -- fork a client, serve it, and combine both verdicts */
int main(int argc, char *argv[])
{
	long cycles = env_long("RPMA_CHURN_CYCLES", 15000);
	if (argc > 1) {
		char *end;
		cycles = strtol(argv[1], &end, 10);
		if (*end != '\0' || cycles < 1) {
			fprintf(stderr, "usage: %s [cycles]\n", argv[0]);
			return 2;
		}
	}
	long warmup = env_long("RPMA_CHURN_WARMUP", 20);
	if (warmup >= cycles)
		warmup = cycles / 2;
	long timeout = env_long("RPMA_CHURN_CYCLE_TIMEOUT", 30);
	if (timeout < 1)
		timeout = 1;
	const char *addr = getenv("RPMA_CHURN_IP");
	if (addr == NULL || *addr == '\0')
		addr = "127.0.0.1";
	char port[16];
	const char *p = getenv("RPMA_CHURN_PORT");
	if (p && *p) {
		snprintf(port, sizeof(port), "%s", p);
	} else if (free_port(addr, port, sizeof(port))) {
		fprintf(stderr, "churn: no free port on %s\n", addr);
		return 99;
	}
	long busy = env_long("RPMA_CHURN_BUSY", 2);
	long record = env_long("RPMA_CHURN_RECORD", 256);
	if (busy > 64)
		busy = 64;
	setenv("RPMA_PROVIDER", "fabric", 0);
	signal(SIGALRM, watchdog);

	printf("churn: %ld cycles (%ld to warm up) against %s:%s, provider %s, %ld busy loops\n",
	       cycles, warmup, addr, port, getenv("RPMA_PROVIDER"), busy);
	fflush(stdout);
	pid_t busy_pids[64] = {0};
	if (busy_start(busy, busy_pids)) {
		busy_stop(busy, busy_pids);
		return 99;
	}

	int pipefd[2];
	if (pipe(pipefd)) {
		perror("churn: pipe");
		busy_stop(busy, busy_pids);
		return 99;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("churn: fork");
		busy_stop(busy, busy_pids);
		return 99;
	}
	if (pid == 0) {
		role = "client";
		close(pipefd[1]);
		record_start(record);
		int rc = run_client(addr, port, cycles, warmup, pipefd[0], timeout);
		record_stop();
		/* exit(), not _exit(): LeakSanitizer checks the client at exit too */
		exit(rc ? 1 : 0);
	}

	role = "server";
	close(pipefd[0]);
	record_start(record);
	int rc = run_server(addr, port, cycles, warmup, pipefd[1], timeout);
	record_stop();
	int status = 0;
	pid_t done = 0;
	if (rc) {
		/*
		 * a client waiting for a server that gave up is stopped, but
		 * after 3 s: one that failed first prints its own story meanwhile
		 */
		for (int i = 0; i < 300 && (done = waitpid(pid, &status, WNOHANG)) == 0; i++)
			usleep(10000);
		if (done == 0)
			kill(pid, SIGTERM);
	}
	while (done <= 0 && (done = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	busy_stop(busy, busy_pids);
	bool client_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!client_ok)
		msg("the client failed (status 0x%x)", status);
	printf("churn: %s\n", rc == 0 && client_ok ? "PASS" : "FAIL");
	return rc == 0 && client_ok ? 0 : 1;
}
