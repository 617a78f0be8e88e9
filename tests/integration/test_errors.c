/* SPDX-License-Identifier: BSD-3-Clause */
/* test_errors.c -- integration: failures must end in error completions and events, never hangs */

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "itest.h"

/*
 * a descriptor with a key nobody registered: an error completion for the
 * unsignaled write; the fabric provider also breaks the connection (LOST),
 * while on verbs (as with upstream librpma) the queue pair goes to the error
 * state without a connection event and the connection closes normally
 */
PROVIDER_TEST(errors, bad_remote_key)
{
	struct itest_dpair d = {0};
	/*
	 * the server's side keeps the default timeout (1 s): over shm the
	 * write with a bad key never completes and stops the client's messages
	 * behind it, so the server's silence timeout is what ends the
	 * connection in time (with the harness's 3 s the client's error came
	 * after the scenario's wait)
	 */
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	itest_dpair_open(&d, scfg, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	/* the queue pair (not the connection) fails, as on verbs */
	bool qp_error = !itest_traits()->bad_key_breaks_conn;

	char desc[32];
	memcpy(desc, d.sreg.desc, d.sreg.desc_size);
	desc[16] ^= 0x5a; /* another rkey */
	desc[19] ^= 0x11;
	struct rpma_mr_remote *bad = NULL;
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, d.sreg.desc_size, &bad), 0);

	cr_assert_eq(rpma_write(d.p.cconn, bad, 0, d.creg.mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
				(void *)0xbad),
		     0);
	/* an unsignaled write still reports its failure; a flush behind it fails too */
	int ret = rpma_flush(d.p.cconn, d.rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			     RPMA_F_COMPLETION_ALWAYS, (void *)0xf1);
	cr_assert(ret == 0 || ret == RPMA_E_PROVIDER);
	if (qp_error)
		cr_assert_eq(ret, 0, "posting on a queue pair that is not yet in error");
	struct ibv_wc wc;
	bool saw_error = false;
	for (int i = 0; i < 2; i++) {
		if (itest_wc(cq, &wc, ITEST_WAIT_MS) != 0)
			break;
		if (wc.status != IBV_WC_SUCCESS) {
			saw_error = true;
			cr_assert(wc.wr_id == 0xbad || wc.wr_id == 0xf1);
		}
		if (qp_error) {
			/* in order: the write fails at the target, the flush is flushed out */
			if (i == 0) {
				cr_assert_eq(wc.wr_id, 0xbad);
				cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "status %s",
					     ibv_wc_status_str(wc.status));
			} else {
				cr_assert_eq(wc.wr_id, 0xf1);
				cr_assert_eq(wc.status, IBV_WC_WR_FLUSH_ERR, "status %s",
					     ibv_wc_status_str(wc.status));
			}
		}
	}
	cr_assert(saw_error, "a write with a bad key produced no error completion");
	if (qp_error) {
		/* no connection event on either side: the connection itself stays up */
		int cfd = -1, sfd = -1;
		cr_assert_eq(rpma_conn_get_event_fd(d.p.cconn, &cfd), 0);
		cr_assert_eq(rpma_conn_get_event_fd(d.p.sconn, &sfd), 0);
		cr_assert_not(itest_fd_ready(cfd, 300), "a connection event on the client");
		cr_assert_not(itest_fd_ready(sfd, 300), "a connection event on the server");
	} else {
		enum rpma_conn_event ev = itest_next_event(d.p.cconn);
		cr_assert(ev == RPMA_CONN_LOST, "client event %s", rpma_utils_conn_event_2str(ev));
		ev = itest_next_event(d.p.sconn);
		cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "server event %s",
			  rpma_utils_conn_event_2str(ev));
	}
	/* the broken connection refuses or fails further work, and can be deleted */
	ret = rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, (void *)2);
	if (qp_error)
		cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
	if (ret == 0) {
		cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0);
		cr_assert_neq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 2);
	} else {
		cr_assert_eq(ret, RPMA_E_PROVIDER, "%s", rpma_err_2str(ret));
	}
	cr_assert_eq(rpma_mr_remote_delete(&bad), 0);
	if (qp_error) {
		itest_close_pair(&d.p.cconn, &d.p.sconn);
	} else {
		cr_assert_eq(rpma_conn_delete(&d.p.cconn), 0);
		cr_assert_eq(rpma_conn_delete(&d.p.sconn), 0);
	}
	itest_dpair_close(&d);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
}

/* the server process is killed: the client gets an event and error completions, and cleans up */
PROVIDER_TEST(errors, peer_killed)
{
	int to_parent[2];
	cr_assert_eq(pipe(to_parent), 0);
	/* fork before any peer exists: libfabric's state (its threads) does not survive a fork */
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* the server: listen, accept one connection, tell the parent, wait to die */
		struct rpma_peer *speer = itest_peer();
		char port[8] = {0};
		struct rpma_ep *ep = itest_listen(speer, port);
		struct itest_region r;
		itest_region_new(&r, speer, 65536, ITEST_ALL_USAGE);
		if (write(to_parent[1], port, sizeof(port)) != sizeof(port))
			_exit(1);
		struct rpma_conn_req *req = itest_next_req(ep, NULL);
		struct rpma_conn *conn = NULL;
		struct rpma_conn_private_data pd = {.ptr = r.desc, .len = (uint8_t)r.desc_size};
		if (rpma_conn_req_connect(&req, &pd, &conn) != 0)
			_exit(1);
		for (;;)
			pause();
	}
	/* only the child writes: a child that dies early ends the read below at once */
	close(to_parent[1]);
	struct rpma_peer *cpeer = itest_peer();
	char port[8];
	cr_assert_eq(read(to_parent[0], port, sizeof(port)), (ssize_t)sizeof(port),
		     "the server process ended before it listened");
	struct itest_region creg;
	itest_region_new(&creg, cpeer, 65536, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	cr_assert_eq(rpma_conn_req_new(cpeer, itest_ip(), port, NULL, &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	cr_assert_eq(itest_next_event(conn), RPMA_CONN_ESTABLISHED);
	struct rpma_mr_remote *rmr = itest_remote(conn);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	cr_assert_eq(
		rpma_write(conn, rmr, 0, creg.mr, 0, 4096, RPMA_F_COMPLETION_ALWAYS, (void *)1), 0);
	struct ibv_wc wc;
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)1, &wc);

	cr_assert_eq(kill(pid, SIGKILL), 0);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	enum rpma_conn_event ev = itest_next_event(conn);
	cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "event %s",
		  rpma_utils_conn_event_2str(ev));
	/* work posted now fails, one way or the other, without hanging */
	int ret = rpma_read(conn, creg.mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, (void *)2);
	if (ret == 0) {
		cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0,
			     "no completion after the peer died");
		cr_assert_neq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.wr_id, 2);
	} else {
		cr_assert_eq(ret, RPMA_E_PROVIDER);
	}
	(void)rpma_conn_disconnect(conn); /* may fail: the peer is gone */
	cr_assert_eq(rpma_conn_delete(&conn), 0);
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	itest_region_delete(&creg);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	close(to_parent[0]);
}

/*
 * offset + len beyond the size the remote descriptor declares (also when the
 * sum overflows): every data-path call refuses with RPMA_E_INVAL before
 * anything is posted (no completion and no connection event follow), and the
 * connection stays usable up to the last declared byte
 */
PROVIDER_TEST(errors, beyond_declared_size)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	struct rpma_conn *c = d.p.cconn;
	const size_t S = ITEST_REGION_SIZE;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	static const struct {
		size_t off, len;
	} cases[] = {{ITEST_REGION_SIZE, 1},
		     {ITEST_REGION_SIZE - 8, 16},
		     {8, ITEST_REGION_SIZE},
		     {ITEST_REGION_SIZE + 8, 0},
		     {1, SIZE_MAX},
		     {SIZE_MAX - 7, 16},
		     {ITEST_REGION_SIZE / 2, ITEST_REGION_SIZE / 2 + 1}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t off = cases[i].off, len = cases[i].len;
		/* local offset 0: the local side is in bounds whenever len <= S */
		int ret[6];
		ret[0] = rpma_write(c, d.rmr, off, d.creg.mr, 0, len, f, (void *)1);
		ret[1] = rpma_write_with_imm(c, d.rmr, off, d.creg.mr, 0, len, f, 7, (void *)2);
		ret[2] = rpma_read(c, d.creg.mr, 0, d.rmr, off, len, f, (void *)3);
		ret[3] = rpma_flush(c, d.rmr, off, len, RPMA_FLUSH_TYPE_VISIBILITY, f, (void *)4);
		ret[4] = rpma_flush(c, d.rmr, off, len, RPMA_FLUSH_TYPE_PERSISTENT, f, (void *)5);
		/* atomic writes are 8 bytes at an 8-aligned offset: only offsets beyond the end */
		char v[8] = {0};
		bool beyond = off % 8 == 0 && (off > S || S - off < 8);
		ret[5] = beyond ? rpma_atomic_write(c, d.rmr, off, v, f, (void *)6) : RPMA_E_INVAL;
		for (int k = 0; k < 6; k++) {
			cr_assert_eq(ret[k], RPMA_E_INVAL, "call %d at %zu (+%zu) returned %s", k,
				     off, len, rpma_err_2str(ret[k]));
		}
	}
	/* nothing was posted: no completion, no event on either side */
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, 300), RPMA_E_NO_COMPLETION,
		     "a refused call left a completion (wr_id %llu, status %s)",
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	int cfd = -1, sfd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(d.p.cconn, &cfd), 0);
	cr_assert_eq(rpma_conn_get_event_fd(d.p.sconn, &sfd), 0);
	cr_assert_not(itest_fd_ready(cfd, 0), "a connection event on the client");
	cr_assert_not(itest_fd_ready(sfd, 0), "a connection event on the server");

	/* the last declared bytes are reachable */
	memset(d.creg.ptr, 0x6b, 16);
	cr_assert_eq(rpma_write(c, d.rmr, S - 16, d.creg.mr, 0, 16, f, (void *)10), 0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)10, NULL);
	cr_assert_eq(rpma_flush(c, d.rmr, S - 8, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, (void *)11), 0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)11, NULL);
	char v[8];
	memset(v, 0x6c, sizeof(v));
	cr_assert_eq(rpma_atomic_write(c, d.rmr, S - 8, v, f, (void *)12), 0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)12, NULL);
	const uint8_t *end = (const uint8_t *)d.sreg.ptr + S - 16;
	for (int i = 0; i < 16; i++)
		cr_assert_eq(end[i], i < 8 ? 0x6b : 0x6c, "byte %d of the region's end", i);
	itest_dpair_close(&d);
}

/* ------------------------------------------------ a device nobody serves */

/* the lines logged at the default level (warning or more severe) */
static char errors_log[8192];

/* errors_log_capture -- a log function that keeps lines up to the warning level */
static void errors_log_capture(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...)
{
	(void)file_name;
	(void)line_no;
	(void)function_name;
	if (level > RPMA_LOG_LEVEL_WARNING)
		return;
	size_t used = strlen(errors_log);
	if (used + 2 >= sizeof(errors_log))
		return;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(errors_log + used, sizeof(errors_log) - used - 1, message_format, ap);
	va_end(ap);
	strcat(errors_log, "\n");
}

/*
 * errors_device_refused -- look the testing address up with FI_PROVIDER set
 * to fi_provider (before anything of libfabric ran in this process): when the
 * lookup fails, one line at the default level says why, naming what was asked
 * (the FI_PROVIDER value) and the address; returns that line (or NULL when
 * the provider served the address anyway, not depending on FI_PROVIDER)
 */
static const char *errors_device_refused(const char *fi_provider)
{
	cr_assert_eq(setenv("FI_PROVIDER", fi_provider, 1), 0);
	errors_log[0] = '\0';
	cr_assert_eq(rpma_log_set_function(errors_log_capture), 0);
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	cr_assert_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	if (ret == 0)
		return NULL;
	cr_assert_eq(ret, RPMA_E_PROVIDER, "%s", rpma_err_2str(ret));
	const char *line = errors_log;
	while (line != NULL && *line != '\0') {
		if (strstr(line, fi_provider) != NULL)
			break;
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	cr_assert(line != NULL && *line != '\0',
		  "no line at the default level names FI_PROVIDER=%s; logged:\n%s", fi_provider,
		  errors_log);
	const char *end = strchr(line, '\n');
	size_t len = end ? (size_t)(end - line) : strlen(line);
	static char one[1024];
	snprintf(one, sizeof(one), "%.*s", (int)len, line);
	cr_assert_not_null(strstr(one, itest_ip()), "the line names the address: %s", one);
	return one;
}

/* a misspelt FI_PROVIDER: the refusal says what was asked and that nothing was offered */
PROVIDER_TEST(errors, device_unknown_fi_provider_says_why)
{
	(void)prov;
	const char *line = errors_device_refused("rpma-no-such-provider");
	if (line != NULL)
		cr_log_info("refused: %s", line);
}

/*
 * FI_PROVIDER naming a libfabric provider without message endpoints (shm):
 * the refusal names what libfabric offers instead
 */
PROVIDER_TEST(errors, device_no_msg_endpoint_says_why)
{
	(void)prov;
	const char *line = errors_device_refused("shm");
	if (line != NULL) {
		cr_log_info("refused: %s", line);
		cr_assert_not_null(strstr(line, "offer"), "the line says what is offered: %s",
				   line);
	}
}
