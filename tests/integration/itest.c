/* SPDX-License-Identifier: BSD-3-Clause */
/* itest.c -- helpers of the integration tests */

#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define ITEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ITEST_LSAN 1
#endif
#endif
#ifndef ITEST_LSAN
#define ITEST_LSAN 0
#endif
#if ITEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#include "itest.h"

extern char **environ;

/* the provider of the running scenario (its name, from the core's log) and its traits */
static char itest_current[64];
static struct rpma_provider_traits itest_current_traits;

/* the log lines itest_probe() reads */
static char itest_probe_line[512];

/* itest_probe_log -- keep the line naming the provider a peer was opened on */
static void itest_probe_log(enum rpma_log_level level, const char *file_name, int line_no,
			    const char *function_name, const char *message_format, ...)
{
	(void)level, (void)file_name, (void)line_no, (void)function_name;
	char line[sizeof(itest_probe_line)];
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(line, sizeof(line), message_format, ap);
	va_end(ap);
	if (strstr(line, ITEST_PEER_OPENED) != NULL)
		memcpy(itest_probe_line, line, sizeof(line));
}

/* itest_module_traits -- dl_iterate_phdr() callback: the traits of the loaded module data names */
static int itest_module_traits(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strcmp(base, data) != 0)
		return 0;
	void *handle = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
	if (handle == NULL)
		return 0;
	void *sym = dlsym(handle, RPMA_PROVIDER_TRAITS_ENTRY);
	rpma_provider_traits_fn *fn;
	memcpy(&fn, &sym, sizeof(fn));
	if (fn != NULL)
		fn(&itest_current_traits);
	dlclose(handle);
	return fn != NULL;
}

/* what the probe's child process hands back */
struct itest_probe_msg {
	char name[64];
	char log_prefix[64];
	bool has_prefix;
	bool has_traits;
	struct rpma_provider_traits traits; /* log_prefix: see above */
	char err[256];			    /* empty: the probe worked */
};

/* itest_probe_child -- open a peer, read the provider's name and ask its module */
static void itest_probe_child(struct itest_probe_msg *m)
{
	enum rpma_log_level saved;
	if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &saved) != 0 ||
	    rpma_log_set_function(itest_probe_log) != 0 ||
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO) != 0) {
		snprintf(m->err, sizeof(m->err), "the log could not be redirected");
		return;
	}
	itest_probe_line[0] = '\0';
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret = rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	if (ret == 0)
		ret = rpma_peer_new(dev, &peer);
	if (ret != 0) {
		snprintf(m->err, sizeof(m->err), "no peer on %s: %s", itest_ip(),
			 rpma_err_2str(ret));
		return;
	}
	(void)rpma_peer_delete(&peer);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, saved);

	const char *name = strstr(itest_probe_line, ITEST_PEER_OPENED);
	if (name == NULL) {
		snprintf(m->err, sizeof(m->err), "the core logged no '" ITEST_PEER_OPENED "' line");
		return;
	}
	name += strlen(ITEST_PEER_OPENED);
	size_t len = strcspn(name, " ");
	if (len == 0 || len >= sizeof(m->name)) {
		snprintf(m->err, sizeof(m->err), "no provider name in '%s'", itest_probe_line);
		return;
	}
	memcpy(m->name, name, len);
	m->name[len] = '\0';

	char module[sizeof(m->name) + 16];
	snprintf(module, sizeof(module), "librpma-%s.so", m->name);
	memset(&itest_current_traits, 0, sizeof(itest_current_traits));
	m->has_traits = dl_iterate_phdr(itest_module_traits, module) != 0;
	m->traits = itest_current_traits;
	if (m->traits.log_prefix != NULL) {
		snprintf(m->log_prefix, sizeof(m->log_prefix), "%s", m->traits.log_prefix);
		m->has_prefix = true;
	}
	m->traits.log_prefix = NULL;
}

/* the environment variable that makes a new image of the test program the probe */
#define ITEST_PROBE_FD_ENV "RPMA_ITEST_PROBE_FD"

/*
 * itest_probe_main -- before main(): in the image itest_probe() executes, do
 * the probe, write its answer to the descriptor the environment names, exit
 */
__attribute__((constructor)) static void itest_probe_main(void)
{
	const char *fd = getenv(ITEST_PROBE_FD_ENV);
	if (fd == NULL)
		return;
	struct itest_probe_msg m;
	memset(&m, 0, sizeof(m));
	itest_probe_child(&m);
	ssize_t w = write(atoi(fd), &m, sizeof(m));
	_exit(w == (ssize_t)sizeof(m) ? 0 : 1);
}

/*
 * itest_probe -- open a peer on the testing address as the scenarios will
 * (RPMA_PROVIDER, or automatic selection), learn from the core's log which
 * provider serves it and ask that provider's module for its traits.  That
 * happens in a new image of this program (fork and exec): the scenario's own
 * process must not open a device before it forks (peerkill's victims), since
 * a verbs device opened before fork() does not work in the child, and a
 * forked copy of a multi-threaded process must not start threads
 * (ThreadSanitizer ends such a child; libfabric starts some).
 */
static void itest_probe(void)
{
	static char prefix[64];
	struct itest_probe_msg m;
	memset(&m, 0, sizeof(m));
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	cr_assert(n > 0 && n < (ssize_t)sizeof(exe) - 1, "readlink(/proc/self/exe): %s",
		  strerror(errno));
	exe[n] = '\0';
	int fds[2];
	cr_assert_eq(pipe(fds), 0, "pipe: %s", strerror(errno));
	/* the child's environment is made here: after fork() only exec */
	size_t nenv = 0;
	while (environ[nenv] != NULL)
		nenv++;
	char **envp = calloc(nenv + 2, sizeof(*envp));
	char fdvar[sizeof(ITEST_PROBE_FD_ENV) + 16];
	cr_assert_not_null(envp, "out of memory");
	snprintf(fdvar, sizeof(fdvar), "%s=%d", ITEST_PROBE_FD_ENV, fds[1]);
	envp[0] = fdvar;
	memcpy(envp + 1, environ, nenv * sizeof(*envp));
	char *argv[] = {exe, NULL};
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		execve(exe, argv, envp);
		_exit(127);
	}
	free(envp);
	close(fds[1]);
	size_t got = 0;
	while (got < sizeof(m)) {
		ssize_t r = read(fds[0], (char *)&m + got, sizeof(m) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fds[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cr_assert_eq(got, sizeof(m), "the probe process answered %zu of %zu bytes (status 0x%x)",
		     got, sizeof(m), (unsigned)status);
	cr_assert_eq(m.err[0], '\0', "probe: %s", m.err);
	memcpy(itest_current, m.name, sizeof(itest_current));
	itest_current_traits = m.traits;
	if (m.has_prefix) {
		memcpy(prefix, m.log_prefix, sizeof(prefix));
		itest_current_traits.log_prefix = prefix;
	}
	if (!m.has_traits)
		cr_log_warn("librpma-%s.so declares no traits (%s): expecting their zero values",
			    itest_current, RPMA_PROVIDER_TRAITS_ENTRY);
}

/*
 * itest_begin -- only NULL: run over the provider the environment selects
 * (RPMA_PROVIDER, or automatic selection when it is unset); else skip the
 * scenario unless RPMA_PROVIDER names `only`
 */
const char *itest_begin(const char *only)
{
	const char *want = getenv("RPMA_PROVIDER");
	if (only != NULL && (want == NULL || strcmp(want, only) != 0))
		cr_skip_test("a scenario of provider %s, not selected (RPMA_PROVIDER=%s)", only,
			     want ? want : "");
	/* keep stderr for real problems; errors the scenarios provoke are expected */
	if (getenv("RPMA_LOG_LEVEL") == NULL)
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	itest_probe();
	return itest_current;
}

/* itest_traits -- what the provider of the running scenario does (itest_begin() asked it) */
const struct rpma_provider_traits *itest_traits(void)
{
	return &itest_current_traits;
}

/* itest_end -- the leak check of an AddressSanitizer build */
void itest_end(void)
{
#if ITEST_LSAN
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0,
		     "LeakSanitizer found leaks in this scenario (its report is above)");
#endif
}

/* itest_current_provider -- the provider of the running scenario */
const char *itest_current_provider(void)
{
	return itest_current;
}

/* itest_ip -- the testing address */
const char *itest_ip(void)
{
	const char *ip = getenv("RPMA_TESTING_IP");
	return (ip && *ip) ? ip : "127.0.0.1";
}

/* itest_libfabric_prov -- FI_PROVIDER or "" */
const char *itest_libfabric_prov(void)
{
	const char *p = getenv("FI_PROVIDER");
	return p ? p : "";
}

/* itest_check_pdata -- the private data that arrived is what was sent */
void itest_check_pdata(const struct rpma_conn_private_data *got, const void *sent, size_t len)
{
	if (!itest_traits()->pdata_padded) {
		cr_assert_eq(got->len, len, "%u bytes of private data arrived, %zu were sent",
			     (unsigned)got->len, len);
		if (len == 0)
			cr_assert_null(got->ptr);
		else
			cr_assert_eq(memcmp(got->ptr, sent, len), 0, "the private data differs");
		return;
	}
	/* the transport hands over the whole private-data field of its message (rdma_cm) */
	cr_assert_geq(got->len, len, "%u bytes of private data arrived, %zu were sent",
		      (unsigned)got->len, len);
	if (got->len == 0)
		return;
	cr_assert_not_null(got->ptr);
	if (len)
		cr_assert_eq(memcmp(got->ptr, sent, len), 0, "the private data differs");
	const unsigned char *pad = got->ptr;
	for (size_t i = len; i < got->len; i++)
		cr_assert_eq(pad[i], 0, "byte %zu of the padding is 0x%02x, not 0", i, pad[i]);
}

/* itest_peer -- a peer on the testing address */
struct rpma_peer *itest_peer(void)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret = rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	cr_assert_eq(ret, 0, "rpma_utils_get_ibv_context(%s): %s", itest_ip(), rpma_err_2str(ret));
	cr_assert_not_null(dev);
	ret = rpma_peer_new(dev, &peer);
	cr_assert_eq(ret, 0, "rpma_peer_new: %s", rpma_err_2str(ret));
	return peer;
}

/* itest_listen -- listen on a port derived from the pid, trying the next ones when taken */
struct rpma_ep *itest_listen(struct rpma_peer *peer, char port[8])
{
	struct rpma_ep *ep = NULL;
	unsigned base = 20000 + ((unsigned)getpid() * 13u) % 30000u;
	for (unsigned i = 0; i < 64; i++) {
		snprintf(port, 8, "%u", base + i * 7u);
		if (rpma_ep_listen(peer, itest_ip(), port, &ep) == 0)
			return ep;
	}
	cr_assert_fail("no free port to listen on near %u", base);
	return NULL;
}

/* itest_fd_ready -- wait up to ms for fd to become readable */
bool itest_fd_ready(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r == 1 && (p.revents & POLLIN);
}

/* itest_next_event -- the next connection event (bounded wait) */
enum rpma_conn_event itest_next_event(struct rpma_conn *conn)
{
	int fd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(conn, &fd), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS), "no connection event within %d ms",
		  ITEST_WAIT_MS);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);
	cr_assert_eq(ret, 0, "rpma_conn_next_event: %s", rpma_err_2str(ret));
	return ev;
}

/* itest_next_req -- the next connection request (bounded wait) */
struct rpma_conn_req *itest_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg)
{
	int fd = -1;
	cr_assert_eq(rpma_ep_get_fd(ep, &fd), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS), "no connection request within %d ms",
		  ITEST_WAIT_MS);
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	cr_assert_eq(ret, 0, "rpma_ep_next_conn_req: %s", rpma_err_2str(ret));
	cr_assert_not_null(req);
	return req;
}

/* itest_now_ms -- a monotonic clock in ms */
long long itest_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* itest_wc_nap -- one completion within ms, polling with naps of nap_us (0: none) */
static int itest_wc_nap(struct rpma_cq *cq, struct ibv_wc *wc, int ms, useconds_t nap_us)
{
	long long until = itest_now_ms() + ms;
	for (;;) {
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 1, wc, &got);
		if (ret == 0) {
			cr_assert_eq(got, 1);
			return 0;
		}
		cr_assert_eq(ret, RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (itest_now_ms() >= until)
			return RPMA_E_NO_COMPLETION;
		if (nap_us)
			usleep(nap_us);
	}
}

/* itest_wc -- one completion within ms (polling with short sleeps) */
int itest_wc(struct rpma_cq *cq, struct ibv_wc *wc, int ms)
{
	return itest_wc_nap(cq, wc, ms, 200);
}

/* itest_wc_busy -- itest_wc busy-polling: no nap bounds the pace */
int itest_wc_busy(struct rpma_cq *cq, struct ibv_wc *wc, int ms)
{
	return itest_wc_nap(cq, wc, ms, 0);
}

/* itest_expect_wc -- one successful completion of the given kind */
void itest_expect_wc(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const void *op_context,
		     struct ibv_wc *wc_out)
{
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0,
		     "no completion within %d ms (opcode %d, op_context %p expected)",
		     ITEST_WAIT_MS, opcode, op_context);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "completion status %d (%s)", wc.status,
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, opcode, "opcode %d, expected %d", wc.opcode, opcode);
	cr_assert_eq(wc.wr_id, (uint64_t)(uintptr_t)op_context);
	if (wc_out)
		*wc_out = wc;
}

/* itest_alloc -- page-aligned, zeroed memory */
void *itest_alloc(size_t size)
{
	void *p = NULL;
	cr_assert_eq(posix_memalign(&p, 4096, size), 0);
	memset(p, 0, size);
	return p;
}

/* itest_cfg_patient -- cfg's connection timeout becomes the harness's wait */
void itest_cfg_patient(struct rpma_conn_cfg *cfg)
{
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, ITEST_WAIT_MS), 0);
}

/* itest_cfg_timeout -- a new configuration with timeout ms (NULL: out of memory) */
static struct rpma_conn_cfg *itest_cfg_timeout(int ms)
{
	struct rpma_conn_cfg *cfg = NULL;
	if (rpma_conn_cfg_new(&cfg) == 0)
		(void)rpma_conn_cfg_set_timeout(cfg, ms);
	return cfg;
}

static struct rpma_conn_cfg *itest_ccfg_v, *itest_scfg_v;
static void itest_cfgs_init(void)
{
	itest_ccfg_v = itest_cfg_timeout(ITEST_WAIT_MS);
	itest_scfg_v = itest_cfg_timeout(ITEST_SERVER_TIMEOUT_MS);
}
static pthread_once_t itest_cfgs_once = PTHREAD_ONCE_INIT;

/* itest_ccfg -- the process's patient client configuration (made once, kept) */
const struct rpma_conn_cfg *itest_ccfg(void)
{
	(void)pthread_once(&itest_cfgs_once, itest_cfgs_init);
	cr_assert_not_null(itest_ccfg_v, "no patient connection configuration");
	return itest_ccfg_v;
}

/* itest_scfg -- the server's side of itest_pair_open (made once, kept) */
const struct rpma_conn_cfg *itest_scfg(void)
{
	(void)pthread_once(&itest_cfgs_once, itest_cfgs_init);
	cr_assert_not_null(itest_scfg_v, "no server configuration");
	return itest_scfg_v;
}

/* itest_pair_open -- connect a client to a server */
void itest_pair_open(struct itest_pair *p, const struct rpma_conn_cfg *scfg,
		     const struct rpma_conn_cfg *ccfg, const struct rpma_conn_private_data *cpd,
		     const struct rpma_conn_private_data *spd, itest_req_fn *before_accept,
		     void *arg)
{
	if (p->speer == NULL)
		p->speer = itest_peer();
	if (p->cpeer == NULL)
		p->cpeer = itest_peer();
	if (p->ep == NULL)
		p->ep = itest_listen(p->speer, p->port);

	/*
	 * without a configuration of its own the client waits for the server as
	 * long as the harness waits for anything: the default (1 s) bounds the
	 * whole handshake on some providers, and a loaded 2-core machine can
	 * stall that long (the trixie lane's sockets run once got the client's
	 * end instead of ESTABLISHED)
	 */
	if (ccfg == NULL)
		ccfg = itest_ccfg();
	struct rpma_conn_req *creq = NULL;
	int ret = rpma_conn_req_new(p->cpeer, itest_ip(), p->port, ccfg, &creq);
	cr_assert_eq(ret, 0, "rpma_conn_req_new: %s", rpma_err_2str(ret));
	ret = rpma_conn_req_connect(&creq, cpd, &p->cconn);
	cr_assert_eq(ret, 0, "rpma_conn_req_connect (client): %s", rpma_err_2str(ret));
	cr_assert_null(creq);

	/*
	 * the server's side too: over tcp;ofi_rxm under load an accept waited
	 * longer than the default second for the client's READY (access
	 * scenarios on trixie: the server got UNREACHABLE)
	 */
	if (scfg == NULL)
		scfg = itest_scfg();
	struct rpma_conn_req *sreq = itest_next_req(p->ep, scfg);
	if (before_accept)
		before_accept(sreq, arg);
	ret = rpma_conn_req_connect(&sreq, spd, &p->sconn);
	cr_assert_eq(ret, 0, "rpma_conn_req_connect (server): %s", rpma_err_2str(ret));

	enum rpma_conn_event ev = itest_next_event(p->cconn);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "the client got %s, not established",
		     rpma_utils_conn_event_2str(ev));
	ev = itest_next_event(p->sconn);
	cr_assert_eq(ev, RPMA_CONN_ESTABLISHED, "the server got %s, not established",
		     rpma_utils_conn_event_2str(ev));
}

/* itest_close_pair -- orderly shutdown started by first, then delete both */
void itest_close_pair(struct rpma_conn **first, struct rpma_conn **second)
{
	enum rpma_conn_event ev;
	cr_assert_eq(rpma_conn_disconnect(*first), 0);
	if (!itest_traits()->close_waits_for_peer) {
		/* the local CLOSED does not wait for the other side (tcp, sockets) */
		ev = itest_next_event(*first);
		cr_assert_eq(ev, RPMA_CONN_CLOSED, "the side that disconnected got %s",
			     rpma_utils_conn_event_2str(ev));
		ev = itest_next_event(*second);
		cr_assert_eq(ev, RPMA_CONN_CLOSED, "the other side got %s",
			     rpma_utils_conn_event_2str(ev));
		cr_assert_eq(rpma_conn_disconnect(*second), 0);
		goto delete;
	}
	ev = itest_next_event(*second);
	cr_assert_eq(ev, RPMA_CONN_CLOSED, "the other side got %s", rpma_utils_conn_event_2str(ev));
	cr_assert_eq(rpma_conn_disconnect(*second), 0);
	ev = itest_next_event(*first);
	cr_assert_eq(ev, RPMA_CONN_CLOSED, "the side that disconnected got %s",
		     rpma_utils_conn_event_2str(ev));
	delete : cr_assert_eq(rpma_conn_delete(first), 0);
	cr_assert_eq(rpma_conn_delete(second), 0);
	cr_assert_null(*first);
	cr_assert_null(*second);
}

/* itest_conn_close -- orderly shutdown from the client side, then delete both */
void itest_conn_close(struct rpma_conn **cconn, struct rpma_conn **sconn)
{
	itest_close_pair(cconn, sconn);
}

/* itest_pair_close -- close everything itest_pair_open made */
void itest_pair_close(struct itest_pair *p)
{
	if (p->cconn && p->sconn)
		itest_conn_close(&p->cconn, &p->sconn);
	cr_assert_eq(rpma_conn_delete(&p->cconn), 0);
	cr_assert_eq(rpma_conn_delete(&p->sconn), 0);
	cr_assert_eq(rpma_ep_shutdown(&p->ep), 0);
	cr_assert_eq(rpma_peer_delete(&p->cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&p->speer), 0);
}

/* itest_region_new -- register a region and serialise its descriptor */
void itest_region_new(struct itest_region *r, struct rpma_peer *peer, size_t size, int usage)
{
	r->size = size;
	r->ptr = itest_alloc(size);
	int ret = rpma_mr_reg(peer, r->ptr, size, usage, &r->mr);
	cr_assert_eq(ret, 0, "rpma_mr_reg: %s", rpma_err_2str(ret));
	cr_assert_eq(rpma_mr_get_descriptor_size(r->mr, &r->desc_size), 0);
	cr_assert_leq(r->desc_size, sizeof(r->desc));
	cr_assert_eq(rpma_mr_get_descriptor(r->mr, r->desc), 0);
}

/* itest_region_delete -- deregister and free */
void itest_region_delete(struct itest_region *r)
{
	cr_assert_eq(rpma_mr_dereg(&r->mr), 0);
	free(r->ptr);
	r->ptr = NULL;
}

/* itest_remote -- the server region, from the private data the client received */
struct rpma_mr_remote *itest_remote(struct rpma_conn *cconn)
{
	struct rpma_conn_private_data pd = {0};
	cr_assert_eq(rpma_conn_get_private_data(cconn, &pd), 0);
	cr_assert_not_null(pd.ptr);
	struct rpma_mr_remote *rmr = NULL;
	int ret = rpma_mr_remote_from_descriptor(pd.ptr, pd.len, &rmr);
	cr_assert_eq(ret, 0, "rpma_mr_remote_from_descriptor: %s", rpma_err_2str(ret));
	return rmr;
}

/* itest_dpair_open -- a pair with a server region the client knows */
void itest_dpair_open(struct itest_dpair *d, const struct rpma_conn_cfg *scfg,
		      const struct rpma_conn_cfg *ccfg, itest_req_fn *before_accept, void *arg)
{
	d->p.speer = itest_peer();
	d->p.cpeer = itest_peer();
	itest_region_new(&d->sreg, d->p.speer, ITEST_REGION_SIZE, ITEST_ALL_USAGE);
	itest_region_new(&d->creg, d->p.cpeer, ITEST_REGION_SIZE,
			 RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
				 RPMA_MR_USAGE_RECV);
	cr_assert_eq(d->sreg.desc_size, 21, "a 32-bit key keeps the descriptor at 21 bytes");

	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	char pd[64];
	size_t pcfg_size = 0;
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size), 0);
	memcpy(pd, d->sreg.desc, d->sreg.desc_size);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, pd + d->sreg.desc_size), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	struct rpma_conn_private_data spd = {.ptr = pd,
					     .len = (uint8_t)(d->sreg.desc_size + pcfg_size)};

	itest_pair_open(&d->p, scfg, ccfg, NULL, &spd, before_accept, arg);

	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_get_private_data(d->p.cconn, &got), 0);
	cr_assert_geq(got.len, d->sreg.desc_size + pcfg_size);
	cr_assert_eq(rpma_mr_remote_from_descriptor(got.ptr, d->sreg.desc_size, &d->rmr), 0);
	struct rpma_peer_cfg *rcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_from_descriptor((char *)got.ptr + d->sreg.desc_size, pcfg_size,
						   &rcfg),
		     0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(d->p.cconn, rcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&rcfg), 0);
}

/* itest_dpair_close -- close the connection, then release the regions and peers */
void itest_dpair_close(struct itest_dpair *d)
{
	if (d->p.cconn && d->p.sconn)
		itest_conn_close(&d->p.cconn, &d->p.sconn);
	cr_assert_eq(rpma_mr_remote_delete(&d->rmr), 0);
	itest_region_delete(&d->sreg);
	itest_region_delete(&d->creg);
	itest_pair_close(&d->p);
}
