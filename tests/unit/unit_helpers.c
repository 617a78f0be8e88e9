/* SPDX-License-Identifier: BSD-3-Clause */
/* unit_helpers.c -- fixtures and object builders shared by the unit tests */

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "unit.h"

static int log_counts[RPMA_LOG_LEVEL_DEBUG + 1];
static char log_last[1024];
static bool log_stderr;

/* capture_log -- the log function of the tests: count messages, keep the last one */
static void capture_log(enum rpma_log_level level, const char *file_name, const int line_no,
			const char *function_name, const char *message_format, ...)
{
	(void)file_name;
	(void)line_no;
	if (level >= RPMA_LOG_LEVEL_FATAL && level <= RPMA_LOG_LEVEL_DEBUG)
		log_counts[level]++;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(log_last, sizeof(log_last), message_format, ap);
	va_end(ap);
	if (log_stderr)
		fprintf(stderr, "log %d %s: %s\n", level, function_name, log_last);
}

/* unit_log_count -- messages of one level captured since the last reset */
int unit_log_count(enum rpma_log_level level)
{
	return log_counts[level];
}

/* unit_log_total -- every captured message */
int unit_log_total(void)
{
	int n = 0;
	for (int i = 0; i <= RPMA_LOG_LEVEL_DEBUG; i++)
		n += log_counts[i];
	return n;
}

/* unit_log_last -- the text of the last captured message */
const char *unit_log_last(void)
{
	return log_last;
}

/* unit_log_reset -- forget the captured messages */
void unit_log_reset(void)
{
	memset(log_counts, 0, sizeof(log_counts));
	log_last[0] = '\0';
}

/* unit_init -- per-test setup */
void unit_init(void)
{
	unsetenv("RPMA_PROVIDER");
	fake_reset();
	unit_log_reset();
	const char *e = getenv("UNIT_LOG_STDERR");
	log_stderr = e != NULL && *e == '1';
	cr_assert_eq(rpma_log_set_function(capture_log), 0);
}

/* unit_fini -- per-test teardown: the core kept to the boundary and released everything */
void unit_fini(void)
{
	cr_expect_eq(fake_violations(), 0, "boundary violations: %d (last: %s)", fake_violations(),
		     fake_last_violation());
	cr_expect_eq(fake_live_total(), 0,
		     "objects left live: peer %d mr %d ep %d conn %d cq %d srq %d",
		     fake_live(FAKE_OBJ_PEER), fake_live(FAKE_OBJ_MR), fake_live(FAKE_OBJ_EP),
		     fake_live(FAKE_OBJ_CONN), fake_live(FAKE_OBJ_CQ), fake_live(FAKE_OBJ_SRQ));
	cr_expect_eq(fake_fds_open(), 0, "fds left open: %d", fake_fds_open());
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
}

/* unit_provider -- force a provider (NULL: automatic selection) */
void unit_provider(const char *name)
{
	if (name)
		setenv("RPMA_PROVIDER", name, 1);
	else
		unsetenv("RPMA_PROVIDER");
}

/* unit_peer -- a peer on one of the fake providers */
struct rpma_peer *unit_peer(enum fake_prov prov)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	unit_provider(prov == FAKE_PROV_VERBS ? "verbs" : "fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	cr_assert_eq(rpma_peer_new(ctx, &peer), 0);
	cr_assert_not_null(peer);
	unit_provider(NULL);
	return peer;
}

/* unit_mr -- register a local region */
struct rpma_mr_local *unit_mr(struct rpma_peer *peer, void *ptr, size_t size, int usage)
{
	struct rpma_mr_local *mr = NULL;
	cr_assert_eq(rpma_mr_reg(peer, ptr, size, usage, &mr), 0);
	cr_assert_not_null(mr);
	return mr;
}

/* put_le -- store the low n bytes of v little-endian */
static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* unit_desc -- the 21-byte descriptor of a remote region */
void unit_desc(uint8_t desc[21], uint64_t raddr, uint64_t size, uint32_t rkey, uint8_t usage)
{
	put_le(desc, raddr, 8);
	put_le(desc + 8, size, 8);
	put_le(desc + 16, rkey, 4);
	desc[20] = usage;
}

/* unit_remote -- a remote region decoded from a hand-made descriptor (26 bytes for long keys) */
struct rpma_mr_remote *unit_remote(uint64_t raddr, uint64_t size, uint64_t rkey, int usage)
{
	uint8_t desc[26];
	size_t len = 21;
	unit_desc(desc, raddr, size, (uint32_t)rkey, (uint8_t)usage);
	if (rkey >> 32) {
		desc[21] = 0xE5;
		put_le(desc + 22, rkey >> 32, 4);
		len = 26;
	}
	struct rpma_mr_remote *mr = NULL;
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, len, &mr), 0);
	cr_assert_not_null(mr);
	return mr;
}

/* unit_req -- an outgoing connection request */
struct rpma_conn_req *unit_req(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = NULL;
	cr_assert_eq(rpma_conn_req_new(peer, UNIT_ADDR, UNIT_PORT, cfg, &req), 0);
	cr_assert_not_null(req);
	return req;
}

/* unit_conn -- an outgoing connection, connected without private data */
struct rpma_conn *unit_conn(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = unit_req(peer, cfg);
	struct rpma_conn *conn = NULL;
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &conn), 0);
	cr_assert_null(req);
	cr_assert_not_null(conn);
	return conn;
}

/* unit_conn_dw2pmem -- make the connection believe the peer can (not) persist writes directly */
void unit_conn_dw2pmem(struct rpma_conn *conn, bool dw2pmem)
{
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, dw2pmem), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
}

/* unit_fd_open -- is fd open? */
bool unit_fd_open(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) != -1;
}
