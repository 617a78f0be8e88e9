/* SPDX-License-Identifier: BSD-3-Clause */
/* test_peerkill.c -- integration: the peer process is killed (SIGKILL) at every stage */

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

/*
 * Each scenario forks a victim (the server or the client of one connection)
 * and plays the other side, the survivor, in the test process. The victim is
 * killed with SIGKILL at a given stage; the survivor must see the end of the
 * connection (an event, error completions) within its configured connection
 * timeout plus PK_SLACK_MS for scheduling, never hang (a blocked wait is
 * watched by alarm(): PK_WATCHDOG_S), and delete every object it made with
 * success. Each scenario prints one "[peerkill]" line: what the survivor saw
 * and when.
 *
 * The timeout matters on verbs: a survivor blocked in rpma_cq_wait (or
 * streaming) learns of the death only when its queue pair runs out of
 * retries, and the provider derives the ACK timeout of each retry from the
 * connection's timeout so that all of them fit in it. The socket transports
 * and libfabric's verbs (whose progress thread takes the peer's disconnect)
 * take milliseconds. PEERKILL_SLACK_MS overrides the slack (valgrind).
 */
#define PK_SLACK_MS   1500
#define PK_WAIT_MS    30000 /* the victim's answers before it is killed */
#define PK_WATCHDOG_S 40
#define PK_TIMEOUT_MS 3000 /* the survivor's connection timeout */
/*
 * the victim's connection timeout: what is measured is the survivor's; the
 * victim's bounds only its own side of the set-up, where the default second
 * was too short over reliable datagrams on a loaded machine (rxm's accept)
 */
#define PK_VICTIM_TIMEOUT_MS 10000
#define PK_REGION	     (1u << 20)
#define PK_WINDOW	     16
#define PK_BEFORE_KILL	     200 /* completions of the stream before the victim dies */
#define PK_KILL_DELAY	     300 /* ms between the survivor blocking and the kill */

/* stages the victim is killed at */
enum pk_stage { PK_SETUP, PK_STREAM, PK_CQ_WAIT, PK_NEXT_EVENT };

/* the survivor's side of a scenario */
struct pk {
	pid_t victim;
	bool survivor_is_server;
	int up[2];   /* victim -> survivor: port, progress bytes */
	int down[2]; /* survivor -> victim: port */
	struct rpma_conn_cfg *cfg;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct itest_region reg;    /* the survivor's own region */
	struct rpma_mr_remote *rmr; /* the victim's region */
	long long t_kill;	    /* when the victim was killed (ms) */
	int timeout_ms;		    /* the survivor's connection timeout */
};

/* pk_deadline_ms -- how long after the kill the survivor may take to see the end */
static long long pk_deadline_ms(const struct pk *k)
{
	const char *e = getenv("PEERKILL_SLACK_MS");
	long long slack = e && *e ? atoll(e) : PK_SLACK_MS;
	return k->timeout_ms + slack;
}

/* ------------------------------------------------------------ helpers */

/* pk_now_ms -- a monotonic clock in ms */
static long long pk_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* pk_wait_fd -- wait up to ms for fd to become readable */
static bool pk_wait_fd(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r == 1 && (p.revents & (POLLIN | POLLHUP));
}

/* the victim's pid, for the watchdog */
static volatile pid_t pk_watched = -1;
static const char *volatile pk_where = "";

/* pk_watchdog -- a blocked wait outlived PK_WATCHDOG_S: kill the victim and fail */
static void pk_watchdog(int sig)
{
	(void)sig;
	static const char msg[] = "[peerkill] watchdog: the survivor is blocked: ";
	if (pk_watched > 0)
		kill(pk_watched, SIGKILL);
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	r = write(2, pk_where, strlen(pk_where));
	r = write(2, "\n", 1);
	(void)r;
	abort();
}

/* pk_arm -- the watchdog covers what follows, named where */
static void pk_arm(const char *where)
{
	pk_where = where;
	alarm(PK_WATCHDOG_S);
}

/* pk_disarm -- the watched wait returned */
static void pk_disarm(void)
{
	alarm(0);
}

/* pk_kill -- kill the victim now and reap it */
static void pk_kill(struct pk *k)
{
	if (k->victim <= 0)
		return;
	k->t_kill = pk_now_ms();
	cr_assert_eq(kill(k->victim, SIGKILL), 0);
	int status = 0;
	cr_assert_eq(waitpid(k->victim, &status, 0), k->victim);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the victim ended by itself before it was killed (status 0x%x)", status);
	k->victim = -1;
	pk_watched = -1;
}

/* the delayed killer: a thread that kills the victim while the survivor blocks */
struct pk_killer {
	pthread_t thread;
	pid_t victim;
	long long t_kill;
};

/* pk_killer_main -- sleep PK_KILL_DELAY ms, then SIGKILL the victim */
static void *pk_killer_main(void *arg)
{
	struct pk_killer *kl = arg;
	usleep(PK_KILL_DELAY * 1000);
	kl->t_kill = pk_now_ms();
	kill(kl->victim, SIGKILL);
	return NULL;
}

/* pk_killer_start -- the victim dies PK_KILL_DELAY ms from now */
static void pk_killer_start(struct pk *k, struct pk_killer *kl)
{
	kl->victim = k->victim;
	kl->t_kill = 0;
	cr_assert_eq(pthread_create(&kl->thread, NULL, pk_killer_main, kl), 0);
}

/* pk_killer_join -- the killer is done; reap the victim */
static void pk_killer_join(struct pk *k, struct pk_killer *kl)
{
	cr_assert_eq(pthread_join(kl->thread, NULL), 0);
	k->t_kill = kl->t_kill;
	int status = 0;
	cr_assert_eq(waitpid(k->victim, &status, 0), k->victim);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		  "the victim ended by itself (status 0x%x)", status);
	k->victim = -1;
	pk_watched = -1;
}

/* ------------------------------------------------------------ the victim */

/* pkv_fail -- the victim cannot go on: tell the survivor by closing the pipe */
static void pkv_fail(const char *what, int ret)
{
	fprintf(stderr, "[peerkill] victim: %s failed: %s\n", what, rpma_err_2str(ret));
	_exit(2);
}

/* pkv_send -- one progress byte to the survivor */
static void pkv_send(struct pk *k, char c)
{
	if (write(k->up[1], &c, 1) != 1)
		_exit(3);
}

/* pkv_event -- the next connection event within PK_WAIT_MS */
static enum rpma_conn_event pkv_event(struct rpma_conn *conn)
{
	int fd = -1;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	if (rpma_conn_get_event_fd(conn, &fd) || !pk_wait_fd(fd, PK_WAIT_MS))
		pkv_fail("waiting for a connection event", RPMA_E_UNKNOWN);
	int ret = rpma_conn_next_event(conn, &ev);
	if (ret)
		pkv_fail("rpma_conn_next_event", ret);
	return ev;
}

/* pkv_stream -- write + flush to the survivor's region forever; 'S' after PK_BEFORE_KILL */
static void pkv_stream(struct pk *k, struct rpma_conn *conn, struct rpma_mr_local *src,
		       struct rpma_mr_remote *dst)
{
	struct rpma_cq *cq = NULL;
	if (rpma_conn_get_cq(conn, &cq))
		_exit(4);
	long posted = 0, done = 0;
	for (;;) {
		while (posted - done < PK_WINDOW) {
			size_t off = (size_t)(posted % 64) * 4096;
			int ret = (posted % 4 == 3) ? rpma_flush(conn, dst, off, 4096,
								 RPMA_FLUSH_TYPE_VISIBILITY,
								 RPMA_F_COMPLETION_ALWAYS, NULL)
						    : rpma_write(conn, dst, off, src, off, 4096,
								 RPMA_F_COMPLETION_ALWAYS, NULL);
			if (ret)
				pkv_fail("posting the stream", ret);
			posted++;
		}
		struct ibv_wc wc[PK_WINDOW];
		int got = 0;
		int ret = rpma_cq_get_wc(cq, PK_WINDOW, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		if (ret)
			pkv_fail("rpma_cq_get_wc", ret);
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				pkv_fail("a completion of the stream", RPMA_E_PROVIDER);
		if (done < PK_BEFORE_KILL && done + got >= PK_BEFORE_KILL)
			pkv_send(k, 'S');
		done += got;
	}
}

/* pkv_main -- the victim's life: set up its side of the connection up to the stage */
static void pkv_main(struct pk *k, enum pk_stage stage)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret = rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	if (ret == 0)
		ret = rpma_peer_new(dev, &peer);
	if (ret)
		pkv_fail("the peer", ret);
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, PK_REGION))
		_exit(5);
	memset(buf, 0x5e, PK_REGION);
	struct rpma_mr_local *mr = NULL;
	ret = rpma_mr_reg(peer, buf, PK_REGION, ITEST_ALL_USAGE, &mr);
	if (ret)
		pkv_fail("rpma_mr_reg", ret);
	char desc[32];
	size_t desc_size = 0;
	if (rpma_mr_get_descriptor_size(mr, &desc_size) || rpma_mr_get_descriptor(mr, desc))
		_exit(6);
	struct rpma_conn_private_data pd = {.ptr = desc, .len = (uint8_t)desc_size};
	struct rpma_conn_cfg *cfg = NULL;
	if (rpma_conn_cfg_new(&cfg) || rpma_conn_cfg_set_sq_size(cfg, 2 * PK_WINDOW) ||
	    rpma_conn_cfg_set_cq_size(cfg, 4 * PK_WINDOW) ||
	    rpma_conn_cfg_set_timeout(cfg, PK_VICTIM_TIMEOUT_MS))
		_exit(7);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;

	if (!k->survivor_is_server) {
		/* the victim serves */
		char port[8] = {0}; /* all 8 bytes go through the pipe */
		struct rpma_ep *ep = NULL;
		unsigned base = 20000 + ((unsigned)getpid() * 13u) % 30000u;
		for (unsigned i = 0; i < 64 && ep == NULL; i++) {
			snprintf(port, sizeof(port), "%u", base + i * 7u);
			(void)rpma_ep_listen(peer, itest_ip(), port, &ep);
		}
		if (ep == NULL)
			pkv_fail("rpma_ep_listen", RPMA_E_PROVIDER);
		if (write(k->up[1], port, sizeof(port)) != sizeof(port))
			_exit(8);
		int fd = -1;
		if (rpma_ep_get_fd(ep, &fd) || !pk_wait_fd(fd, PK_WAIT_MS))
			pkv_fail("waiting for the request", RPMA_E_UNKNOWN);
		ret = rpma_ep_next_conn_req(ep, cfg, &req);
		if (ret)
			pkv_fail("rpma_ep_next_conn_req", ret);
		if (stage == PK_SETUP) {
			pkv_send(k, 'R'); /* got the request; killed before accepting */
			for (;;)
				pause();
		}
		ret = rpma_conn_req_connect(&req, &pd, &conn);
		if (ret)
			pkv_fail("rpma_conn_req_connect", ret);
		if (pkv_event(conn) != RPMA_CONN_ESTABLISHED)
			pkv_fail("establishing", RPMA_E_UNKNOWN);
		pkv_send(k, 'E');
		for (;;)
			pause();
	}

	/* the victim is the client */
	char port[8];
	if (!pk_wait_fd(k->down[0], PK_WAIT_MS) ||
	    read(k->down[0], port, sizeof(port)) != sizeof(port))
		_exit(9);
	ret = rpma_conn_req_new(peer, itest_ip(), port, cfg, &req);
	if (ret)
		pkv_fail("rpma_conn_req_new", ret);
	ret = rpma_conn_req_connect(&req, &pd, &conn);
	if (ret)
		pkv_fail("rpma_conn_req_connect", ret);
	if (stage == PK_SETUP) {
		pkv_send(k, 'C'); /* the request is out; killed once the server has it */
		for (;;)
			pause();
	}
	if (pkv_event(conn) != RPMA_CONN_ESTABLISHED)
		pkv_fail("establishing", RPMA_E_UNKNOWN);
	struct rpma_conn_private_data got = {0};
	struct rpma_mr_remote *rmr = NULL;
	if (rpma_conn_get_private_data(conn, &got) || got.ptr == NULL)
		_exit(10);
	ret = rpma_mr_remote_from_descriptor(got.ptr, got.len, &rmr);
	if (ret)
		pkv_fail("the survivor's descriptor", ret);
	pkv_send(k, 'E');
	if (stage == PK_STREAM)
		pkv_stream(k, conn, mr, rmr);
	for (;;)
		pause();
}

/* ------------------------------------------------------------ the survivor */

/* pk_recv_byte -- the victim's next progress byte (within PK_WAIT_MS) */
static char pk_recv_byte(struct pk *k)
{
	char c = 0;
	cr_assert(pk_wait_fd(k->up[0], PK_WAIT_MS), "the victim said nothing");
	cr_assert_eq(read(k->up[0], &c, 1), 1, "the victim failed before the stage");
	return c;
}

/* pk_start -- fork the victim, then make the survivor's peer, region and configuration */
static void pk_start(struct pk *k, bool survivor_is_server, enum pk_stage stage)
{
	memset(k, 0, sizeof(*k));
	k->survivor_is_server = survivor_is_server;
	cr_assert_eq(pipe(k->up), 0);
	cr_assert_eq(pipe(k->down), 0);
	signal(SIGALRM, pk_watchdog);
	k->victim = fork();
	cr_assert_geq(k->victim, 0);
	if (k->victim == 0) {
		pkv_main(k, stage);
		_exit(1);
	}
	pk_watched = k->victim;
	close(k->up[1]);
	close(k->down[0]);

	k->peer = itest_peer();
	itest_region_new(&k->reg, k->peer, PK_REGION, ITEST_ALL_USAGE);
	cr_assert_eq(rpma_conn_cfg_new(&k->cfg), 0);
	k->timeout_ms = PK_TIMEOUT_MS;
	cr_assert_eq(rpma_conn_cfg_set_timeout(k->cfg, k->timeout_ms), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(k->cfg, 2 * PK_WINDOW), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(k->cfg, 4 * PK_WINDOW), 0);
}

/* pk_request -- the survivor's connection request (client) or the victim's one (server) */
static struct rpma_conn_req *pk_request(struct pk *k)
{
	struct rpma_conn_req *req = NULL;
	if (k->survivor_is_server) {
		char port[8] = {0};
		k->ep = itest_listen(k->peer, port);
		cr_assert_eq(write(k->down[1], port, sizeof(port)), (ssize_t)sizeof(port));
		return itest_next_req(k->ep, k->cfg);
	}
	char port[8];
	cr_assert(pk_wait_fd(k->up[0], PK_WAIT_MS), "the victim did not listen");
	cr_assert_eq(read(k->up[0], port, sizeof(port)), (ssize_t)sizeof(port));
	cr_assert_eq(rpma_conn_req_new(k->peer, itest_ip(), port, k->cfg, &req), 0);
	return req;
}

/* pk_connect -- an established connection to the victim; rmr is the victim's region */
static void pk_connect(struct pk *k)
{
	struct rpma_conn_req *req = pk_request(k);
	struct rpma_conn_private_data pd = {.ptr = k->reg.desc, .len = (uint8_t)k->reg.desc_size};
	int ret = rpma_conn_req_connect(&req, &pd, &k->conn);
	cr_assert_eq(ret, 0, "rpma_conn_req_connect: %s", rpma_err_2str(ret));
	cr_assert_eq(itest_next_event(k->conn), RPMA_CONN_ESTABLISHED);
	k->rmr = itest_remote(k->conn);
	cr_assert_eq(rpma_conn_get_cq(k->conn, &k->cq), 0);
	cr_assert_eq(pk_recv_byte(k), 'E');
}

/*
 * pk_progress_cpu_ms -- the CPU time (user + system, ms) the threads named
 * "rpma-progress" of this process used so far
 */
static long long pk_progress_cpu_ms(void)
{
	long long total = 0, tick = sysconf(_SC_CLK_TCK);
	DIR *d = opendir("/proc/self/task");
	cr_assert_not_null(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], line[512] = {0};
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue; /* the thread ended */
		size_t n = fread(line, 1, sizeof(line) - 1, f);
		fclose(f);
		line[n] = '\0';
		/* "tid (comm) state ..."; utime and stime are the 14th and 15th fields */
		char *comm = strchr(line, '('), *end = strrchr(line, ')');
		if (comm == NULL || end == NULL || strncmp(comm + 1, "rpma-progress", 13) != 0)
			continue;
		unsigned long long ut = 0, st = 0;
		if (sscanf(end + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			   &st) == 2)
			total += (long long)(ut + st) * 1000 / tick;
	}
	closedir(d);
	return total;
}

/*
 * pk_wedged -- the transport says a killed peer may wedge it (shm: its
 * spin locks live in the shared memory, and the victim may die holding
 * one) and a progress thread spins: it used at least half of
 * PK_SPIN_PROBE_MS of CPU time in that long.  A progress thread that only
 * missed its timer sleeps, and the scenario fails.
 */
#define PK_SPIN_PROBE_MS 600
static bool pk_wedged(void)
{
	if (!itest_traits()->killed_peer_may_wedge)
		return false;
	long long cpu0 = pk_progress_cpu_ms();
	usleep(PK_SPIN_PROBE_MS * 1000);
	long long used = pk_progress_cpu_ms() - cpu0;
	fprintf(stderr,
		"[peerkill] %s: no end of the connection; the progress thread used %lld ms "
		"of CPU time in %d ms\n",
		itest_libfabric_prov(), used, PK_SPIN_PROBE_MS);
	return used >= PK_SPIN_PROBE_MS / 2;
}

/* pk_skip_if_wedged -- the survivor saw no end in time: a wedged transport skips the scenario */
static void pk_skip_if_wedged(void)
{
	if (pk_wedged())
		cr_skip_test("the victim died holding a lock of the transport, whose sends to it "
			     "now spin (shm, HACKING.md: a peer killed inside shm)");
}

/* pk_end_event -- the event that ends the connection, within the deadline from the kill */
static enum rpma_conn_event pk_end_event(struct pk *k, long long *ms)
{
	int fd = -1;
	long long deadline = pk_deadline_ms(k), left = k->t_kill + deadline - pk_now_ms();
	cr_assert_eq(rpma_conn_get_event_fd(k->conn, &fd), 0);
	/* an end that comes while pk_wedged() looks is late all the same */
	bool in_time = pk_wait_fd(fd, left > 0 ? (int)left : 0);
	if (!in_time)
		pk_skip_if_wedged();
	cr_assert(in_time, "no connection event within %lld ms of the kill", deadline);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	cr_assert_eq(rpma_conn_next_event(k->conn, &ev), 0);
	*ms = pk_now_ms() - k->t_kill;
	cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
		  "the connection ended with %s, LOST or CLOSED expected",
		  rpma_utils_conn_event_2str(ev));
	return ev;
}

/*
 * pk_fails_now -- an operation toward the dead victim fails: refused when
 * posted, or an error completion within the deadline; returns what it saw
 */
static const char *pk_fails_now(struct pk *k, long long *ms)
{
	long long t0 = pk_now_ms();
	int ret = rpma_read(k->conn, k->reg.mr, 0, k->rmr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
			    (void *)0xdead);
	if (ret) {
		cr_assert_eq(ret, RPMA_E_PROVIDER, "posting after the kill: %s",
			     rpma_err_2str(ret));
		*ms = 0;
		return "post refused (RPMA_E_PROVIDER)";
	}
	struct ibv_wc wc;
	long long deadline = pk_deadline_ms(k);
	for (;;) {
		long long left = t0 + deadline - pk_now_ms();
		cr_assert_eq(itest_wc(k->cq, &wc, left > 0 ? (int)left : 0), 0,
			     "no completion within %lld ms for a read toward the dead peer",
			     deadline);
		if (wc.wr_id == 0xdead)
			break;
		/*
		 * libfabric 2.1's sockets reports a remote write that the dead
		 * peer left half-received as an error without a context in
		 * the target's CQ (sock_pe_progress_rx_pe_entry: FI_EIO); the
		 * provider cannot tell it from an operation posted with a NULL
		 * context (HACKING.md). Only an error may come so.
		 */
		fprintf(stderr,
			"[peerkill] %s: a completion this side did not post: wr_id 0x%llx, %s, "
			"opcode %d, vendor error %u\n",
			itest_libfabric_prov(), (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), (int)wc.opcode, wc.vendor_err);
		cr_assert_neq(wc.status, IBV_WC_SUCCESS,
			      "a successful completion of something this side did not post");
	}
	*ms = pk_now_ms() - t0;
	cr_assert_neq(wc.status, IBV_WC_SUCCESS, "a read from a dead peer succeeded");
	return ibv_wc_status_str(wc.status);
}

/* pk_finish -- delete everything the survivor made: every call returns 0 */
static void pk_finish(struct pk *k)
{
	if (k->victim > 0)
		pk_kill(k);
	if (k->conn) {
		(void)rpma_conn_disconnect(k->conn); /* may fail: the peer is gone */
		cr_assert_eq(rpma_conn_delete(&k->conn), 0);
	}
	cr_assert_eq(rpma_mr_remote_delete(&k->rmr), 0);
	itest_region_delete(&k->reg);
	cr_assert_eq(rpma_ep_shutdown(&k->ep), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&k->cfg), 0);
	cr_assert_eq(rpma_peer_delete(&k->peer), 0);
	close(k->up[0]);
	close(k->down[1]);
	pk_disarm();
}

/* pk_who -- "server dies" or "client dies" */
static const char *pk_who(const struct pk *k)
{
	return k->survivor_is_server ? "client dies" : "server dies";
}

/* ------------------------------------------------------------ (a) setup */

/*
 * pk_setup -- the victim dies between the request and the answer: the
 * survivor's attempt ends (never ESTABLISHED alone) within the deadline
 */
static void pk_setup(const char *prov, bool survivor_is_server)
{
	struct pk k;
	pk_start(&k, survivor_is_server, PK_SETUP);
	struct rpma_conn_req *req = pk_request(&k);
	const char *first = "none", *second = "none";
	long long ms = 0;
	if (!survivor_is_server) {
		/* the client asks; the server dies holding the request */
		struct rpma_conn_private_data pd = {.ptr = k.reg.desc,
						    .len = (uint8_t)k.reg.desc_size};
		cr_assert_eq(rpma_conn_req_connect(&req, &pd, &k.conn), 0);
		cr_assert_eq(pk_recv_byte(&k), 'R');
		pk_kill(&k);
	} else {
		/* the server got the request; the client dies before the answer */
		cr_assert_eq(pk_recv_byte(&k), 'C');
		pk_kill(&k);
		struct rpma_conn_private_data pd = {.ptr = k.reg.desc,
						    .len = (uint8_t)k.reg.desc_size};
		int ret = rpma_conn_req_connect(&req, &pd, &k.conn);
		if (ret) {
			/* the answer could not go out: nothing is left */
			cr_assert_null(req);
			cr_assert_null(k.conn);
			first = rpma_err_2str(ret);
			ms = pk_now_ms() - k.t_kill;
		}
	}
	if (k.conn) {
		int fd = -1;
		cr_assert_eq(rpma_conn_get_event_fd(k.conn, &fd), 0);
		pk_arm("waiting for the end of a connection whose peer died while connecting");
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		cr_assert_eq(rpma_conn_next_event(k.conn, &ev), 0); /* blocking */
		pk_disarm();
		ms = pk_now_ms() - k.t_kill;
		first = rpma_utils_conn_event_2str(ev);
		cr_assert_neq(ev, RPMA_CONN_UNDEFINED);
		if (ev == RPMA_CONN_ESTABLISHED) {
			/* the answer went out before the death was noticed: it ends at once */
			long long ms2 = 0;
			ev = pk_end_event(&k, &ms2);
			second = rpma_utils_conn_event_2str(ev);
			ms = ms2;
		}
		cr_assert_leq(ms, pk_deadline_ms(&k), "the end took %lld ms after the kill", ms);
	}
	fprintf(stderr, "[peerkill] %s/%s: setup, %s: %s, then %s, %lld ms after the kill\n", prov,
		itest_libfabric_prov(), pk_who(&k), first, second, ms);
	pk_finish(&k);
}

/* a client connecting; the server process dies holding its request */
PROVIDER_TEST(peerkill, setup_server_dies)
{
	pk_setup(prov, false);
}

/* a server holding a request; the client process dies before the answer */
PROVIDER_TEST(peerkill, setup_client_dies)
{
	pk_setup(prov, true);
}

/* ------------------------------------------------------------ (b) stream */

/*
 * the client streams writes and flushes (PK_WINDOW in flight) and the server
 * dies mid-stream: every posted operation completes (successfully before the
 * death, with an error after), or posting fails; then LOST or CLOSED
 */
/*
 * pk_watch -- a thread that notes when the survivor's connection event fd
 * becomes readable (its end was reported), without taking the event
 */
struct pk_watch {
	int fd;
	long long deadline; /* ms, pk_now_ms() */
	long long t_end;    /* when the fd became readable; -1: not by the deadline */
	pthread_t th;
};

static void *pk_watch_run(void *arg)
{
	struct pk_watch *w = arg;
	long long left = w->deadline - pk_now_ms();
	w->t_end = pk_wait_fd(w->fd, left > 0 ? (int)left : 0) ? pk_now_ms() : -1;
	return NULL;
}

PROVIDER_TEST(peerkill, stream_server_dies)
{
	struct pk k;
	pk_start(&k, false, PK_STREAM);
	pk_connect(&k);
	long posted = 0, done = 0, errors = 0, ok_after = 0;
	int post_ret = 0;
	enum ibv_wc_status first_err = IBV_WC_SUCCESS;
	long long t_err = 0, until = pk_now_ms() + PK_WAIT_MS;
	/* the post that took longest after the kill: its start and its return */
	long long t_post = 0, t_post_ret = 0;
	struct pk_watch watch = {.fd = -1, .t_end = -1};
	bool watching = false;
	while (pk_now_ms() < until) {
		if (k.victim > 0 && done >= PK_BEFORE_KILL) {
			pk_kill(&k);
			until = k.t_kill +
				pk_deadline_ms(&k); /* the deadline counts from the kill */
			cr_assert_eq(rpma_conn_get_event_fd(k.conn, &watch.fd), 0);
			watch.deadline = until;
			cr_assert_eq(pthread_create(&watch.th, NULL, pk_watch_run, &watch), 0);
			watching = true;
		}
		while (post_ret == 0 && posted - done < PK_WINDOW) {
			size_t off = (size_t)(posted % 64) * 4096;
			long long t0 = pk_now_ms();
			post_ret = (posted % 4 == 3)
					   ? rpma_flush(k.conn, k.rmr, off, 4096,
							RPMA_FLUSH_TYPE_VISIBILITY,
							RPMA_F_COMPLETION_ALWAYS, NULL)
					   : rpma_write(k.conn, k.rmr, off, k.reg.mr, off, 4096,
							RPMA_F_COMPLETION_ALWAYS, NULL);
			long long t1 = pk_now_ms();
			if (k.victim <= 0 && t1 - t0 >= t_post_ret - t_post) {
				t_post = t0;
				t_post_ret = t1;
			}
			if (post_ret == 0)
				posted++;
		}
		struct ibv_wc wc[PK_WINDOW];
		int got = 0;
		int ret = rpma_cq_get_wc(k.cq, PK_WINDOW, wc, &got);
		if (ret == 0) {
			for (int i = 0; i < got; i++) {
				if (wc[i].status == IBV_WC_SUCCESS) {
					ok_after += k.victim <= 0;
					continue;
				}
				cr_assert_leq(k.victim, 0,
					      "an error completion (%s) before the kill",
					      ibv_wc_status_str(wc[i].status));
				if (errors++ == 0) {
					first_err = wc[i].status;
					t_err = pk_now_ms() - k.t_kill;
				}
			}
			done += got;
		} else {
			cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s",
				     rpma_err_2str(ret));
			usleep(100);
		}
		if (k.victim <= 0 && (errors > 0 || post_ret != 0) && done == posted)
			break;
	}
	cr_assert_leq(k.victim, 0, "the stream made %ld completions, the kill needed %d", done,
		      PK_BEFORE_KILL);
	if ((errors == 0 && post_ret == 0) || done != posted)
		pk_skip_if_wedged();
	cr_assert(errors > 0 || post_ret != 0,
		  "the server died but the stream went on without a failure for %lld ms "
		  "(%ld posted, %ld completed)",
		  pk_deadline_ms(&k), posted, done);
	cr_assert_eq(done, posted, "%ld operations posted, %ld completed", posted, done);
	if (post_ret)
		cr_assert_eq(post_ret, RPMA_E_PROVIDER, "posting: %s", rpma_err_2str(post_ret));
	if (watching)
		cr_assert_eq(pthread_join(watch.th, NULL), 0);
	/*
	 * a post waiting for room toward the dead server stops once the
	 * connection's end is reported (over shm one went on for 2 s)
	 */
	long long end_ms = watch.t_end < 0 ? -1 : watch.t_end - k.t_kill;
	if (watch.t_end >= 0 && t_post_ret > watch.t_end) {
		long long late = t_post_ret - (t_post > watch.t_end ? t_post : watch.t_end);
		cr_assert_leq(late, 500,
			      "a post returned %lld ms after the connection's end was reported "
			      "(%lld ms after the kill)",
			      late, end_ms);
	}
	long long ev_ms = 0;
	enum rpma_conn_event ev = pk_end_event(&k, &ev_ms);
	fprintf(stderr,
		"[peerkill] %s/%s: stream, server dies: %ld posted, %ld ok after the kill, %ld "
		"errors (first %s after %lld ms), post %s (the longest took %lld ms), "
		"event %s after %lld ms (on the fd after %lld ms)\n",
		prov, itest_libfabric_prov(), posted, ok_after, errors,
		errors ? ibv_wc_status_str(first_err) : "-", t_err,
		post_ret ? rpma_err_2str(post_ret) : "ok", t_post_ret - t_post,
		rpma_utils_conn_event_2str(ev), ev_ms, end_ms);
	pk_finish(&k);
}

/*
 * the client streams writes and flushes to the server and dies mid-stream:
 * the server sees LOST or CLOSED, and its own operation toward the dead
 * client fails
 */
PROVIDER_TEST(peerkill, stream_client_dies)
{
	struct pk k;
	pk_start(&k, true, PK_STREAM);
	pk_connect(&k);
	cr_assert_eq(pk_recv_byte(&k), 'S', "the client's stream did not run");
	pk_kill(&k);
	long long ev_ms = 0, op_ms = 0;
	enum rpma_conn_event ev = pk_end_event(&k, &ev_ms);
	const char *op = pk_fails_now(&k, &op_ms);
	fprintf(stderr,
		"[peerkill] %s/%s: stream, client dies: event %s after %lld ms, then a read: %s "
		"after %lld ms\n",
		prov, itest_libfabric_prov(), rpma_utils_conn_event_2str(ev), ev_ms, op, op_ms);
	pk_finish(&k);
}

/* ------------------------------------------------------------ (c) rpma_cq_wait */

/*
 * pk_cq_wait -- the survivor reads from the victim (stopped, so that a
 * transport that serves reads in the victim's process leaves them pending)
 * and blocks in rpma_cq_wait; the victim is killed meanwhile: a completion
 * with an error wakes the survivor, then the connection ends
 */
static void pk_cq_wait(const char *prov, bool survivor_is_server, int timeout_ms)
{
	struct pk k;
	pk_start(&k, survivor_is_server, PK_CQ_WAIT);
	k.timeout_ms = timeout_ms;
	cr_assert_eq(rpma_conn_cfg_set_timeout(k.cfg, timeout_ms), 0);
	pk_connect(&k);
	cr_assert_eq(kill(k.victim, SIGSTOP), 0);
	struct pk_killer kl;
	pk_killer_start(&k, &kl);
	long ok = 0;
	struct ibv_wc wc = {0};
	long long t_block = 0;
	long long until = pk_now_ms() + PK_WAIT_MS;
	for (;;) {
		cr_assert_lt(pk_now_ms(), until, "%ld reads succeeded, no failure within %d ms", ok,
			     PK_WAIT_MS);
		int ret = rpma_read(k.conn, k.reg.mr, 0, k.rmr, 0, 4096, RPMA_F_COMPLETION_ALWAYS,
				    (void *)7);
		if (ret) {
			cr_assert_eq(ret, RPMA_E_PROVIDER, "rpma_read: %s", rpma_err_2str(ret));
			wc.status = IBV_WC_GENERAL_ERR; /* refused when posted */
			break;
		}
		t_block = pk_now_ms();
		pk_arm("rpma_cq_wait");
		ret = rpma_cq_wait(k.cq);
		pk_disarm();
		cr_assert_eq(ret, 0, "rpma_cq_wait: %s", rpma_err_2str(ret));
		int got = 0;
		ret = rpma_cq_get_wc(k.cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			/* woken for a completion taken already: wait again for this one */
			pk_arm("rpma_cq_wait (again)");
			ret = rpma_cq_wait(k.cq);
			pk_disarm();
			cr_assert_eq(ret, 0, "rpma_cq_wait: %s", rpma_err_2str(ret));
			ret = rpma_cq_get_wc(k.cq, 1, &wc, &got);
		}
		cr_assert_eq(ret, 0, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		cr_assert_eq(wc.wr_id, 7);
		if (wc.status != IBV_WC_SUCCESS)
			break;
		ok++;
	}
	long long woke = pk_now_ms();
	pk_killer_join(&k, &kl);
	cr_assert_geq(woke, k.t_kill, "a read failed before the victim was killed");
	long long blocked = woke - t_block, after_kill = woke - k.t_kill;
	cr_assert_leq(after_kill, pk_deadline_ms(&k),
		      "the failure woke rpma_cq_wait %lld ms after the kill (timeout %d ms)",
		      after_kill, k.timeout_ms);
	long long ev_ms = 0;
	enum rpma_conn_event ev = pk_end_event(&k, &ev_ms);
	fprintf(stderr,
		"[peerkill] %s/%s: cq_wait, %s, timeout %d ms: %ld reads ok, then %s; last wait "
		"blocked %lld ms, woke %lld ms after the kill; event %s after %lld ms\n",
		prov, itest_libfabric_prov(), pk_who(&k), k.timeout_ms, ok,
		ibv_wc_status_str(wc.status), blocked, after_kill, rpma_utils_conn_event_2str(ev),
		ev_ms);
	pk_finish(&k);
}

/* the client blocks in rpma_cq_wait while the server is killed */
PROVIDER_TEST(peerkill, cq_wait_server_dies)
{
	pk_cq_wait(prov, false, PK_TIMEOUT_MS);
}

/* the same with the default connection timeout (1 s): the failure comes as soon */
PROVIDER_TEST(peerkill, cq_wait_default_timeout)
{
	pk_cq_wait(prov, false, RPMA_DEFAULT_TIMEOUT_MS);
}

/* the server blocks in rpma_cq_wait while the client is killed */
PROVIDER_TEST(peerkill, cq_wait_client_dies)
{
	pk_cq_wait(prov, true, PK_TIMEOUT_MS);
}

/* ------------------------------------------------------------ (d) rpma_conn_next_event */

/*
 * pk_next_event -- the survivor blocks in rpma_conn_next_event and the
 * victim is killed: LOST or CLOSED wakes it; an operation then fails
 */
static void pk_next_event(const char *prov, bool survivor_is_server)
{
	struct pk k;
	pk_start(&k, survivor_is_server, PK_NEXT_EVENT);
	pk_connect(&k);
	struct pk_killer kl;
	pk_killer_start(&k, &kl);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	pk_arm("rpma_conn_next_event");
	int ret = rpma_conn_next_event(k.conn, &ev); /* blocking */
	pk_disarm();
	long long woke = pk_now_ms();
	pk_killer_join(&k, &kl);
	cr_assert_eq(ret, 0, "rpma_conn_next_event: %s", rpma_err_2str(ret));
	cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED,
		  "the connection ended with %s, LOST or CLOSED expected",
		  rpma_utils_conn_event_2str(ev));
	cr_assert_geq(woke, k.t_kill, "woken before the kill");
	cr_assert_leq(woke - k.t_kill, pk_deadline_ms(&k), "woken %lld ms after the kill",
		      woke - k.t_kill);
	long long op_ms = 0;
	const char *op = pk_fails_now(&k, &op_ms);
	fprintf(stderr,
		"[peerkill] %s/%s: next_event, %s: %s %lld ms after the kill, then a read: %s "
		"after %lld ms\n",
		prov, itest_libfabric_prov(), pk_who(&k), rpma_utils_conn_event_2str(ev),
		woke - k.t_kill, op, op_ms);
	pk_finish(&k);
}

/* the client blocks in rpma_conn_next_event while the server is killed */
PROVIDER_TEST(peerkill, next_event_server_dies)
{
	pk_next_event(prov, false);
}

/* the server blocks in rpma_conn_next_event while the client is killed */
PROVIDER_TEST(peerkill, next_event_client_dies)
{
	pk_next_event(prov, true);
}
