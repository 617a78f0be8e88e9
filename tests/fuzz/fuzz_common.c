/* SPDX-License-Identifier: BSD-3-Clause */
/* fuzz_common.c -- input reader, log capture and fake-provider objects of the fuzz targets */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static struct rpma_peer *peers[FUZZ_PEER_MAX];
static struct rpma_mr_local *local_mrs[FUZZ_PEER_MAX];
static void *local_bufs[FUZZ_PEER_MAX];
static int baseline_live[FAKE_OBJ_MAX];
static int baseline_fds;

static int log_errors;
static char log_last[512];

/* fuzz_fail -- report a broken expectation and abort (libFuzzer keeps the input) */
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\n%s:%d: FUZZ_CHECK(%s) failed: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  last log message: %s\n", log_last);
	if (fake_violations())
		fprintf(stderr, "  fake provider: %d violation(s), last: %s\n", fake_violations(),
			fake_last_violation());
	abort();
}

/* ----- input */

/* fuzz_empty -- is everything consumed? */
bool fuzz_empty(const struct fuzz_in *in)
{
	return in->n == 0;
}

/* fuzz_le -- n bytes little-endian */
uint64_t fuzz_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* take -- n bytes little-endian from the input, zeros once it runs out */
static uint64_t take(struct fuzz_in *in, int n)
{
	uint8_t buf[8] = {0};
	size_t k = in->n < (size_t)n ? in->n : (size_t)n;
	if (k) {
		memcpy(buf, in->p, k);
		in->p += k;
		in->n -= k;
	}
	return fuzz_le(buf, n);
}

/* fuzz_u8 -- one byte */
uint8_t fuzz_u8(struct fuzz_in *in)
{
	return (uint8_t)take(in, 1);
}

/* fuzz_u16 -- two bytes */
uint16_t fuzz_u16(struct fuzz_in *in)
{
	return (uint16_t)take(in, 2);
}

/* fuzz_u32 -- four bytes */
uint32_t fuzz_u32(struct fuzz_in *in)
{
	return (uint32_t)take(in, 4);
}

/* fuzz_u64 -- eight bytes */
uint64_t fuzz_u64(struct fuzz_in *in)
{
	return take(in, 8);
}

/* fuzz_size -- an offset or a length, often near the interesting boundaries */
size_t fuzz_size(struct fuzz_in *in, uint64_t ref)
{
	uint8_t mode = fuzz_u8(in);
	switch (mode % 6) {
	case 0:
		return fuzz_u8(in);
	case 1:
		return fuzz_u16(in);
	case 2:
		return (size_t)fuzz_u64(in);
	case 3:
		return (size_t)(ref - fuzz_u8(in));
	case 4:
		return (size_t)(ref + fuzz_u8(in));
	default:
		return SIZE_MAX - fuzz_u8(in);
	}
}

/* fuzz_bytes -- an exact-size heap copy of up to want input bytes */
uint8_t *fuzz_bytes(struct fuzz_in *in, size_t want, size_t *got)
{
	size_t k = in->n < want ? in->n : want;
	/* malloc(0) may return NULL: keep one byte of slack out of reach instead */
	uint8_t *buf = malloc(k ? k : 1);
	if (buf == NULL)
		abort();
	if (k) {
		memcpy(buf, in->p, k);
		in->p += k;
		in->n -= k;
	}
	*got = k;
	return buf;
}

/* ----- log capture */

/* capture_log -- format and count a message of the library */
__attribute__((format(printf, 5, 6))) static void
capture_log(enum rpma_log_level level, const char *file_name, const int line_no,
	    const char *function_name, const char *message_format, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(msg, sizeof(msg), message_format, ap);
	va_end(ap);
	snprintf(log_last, sizeof(log_last), "%s:%d %s(): %s", file_name ? file_name : "?", line_no,
		 function_name ? function_name : "?", msg);
	if (level <= RPMA_LOG_LEVEL_ERROR)
		log_errors++;
	if (getenv("FUZZ_LOG_STDERR"))
		fprintf(stderr, "[rpma %d] %s\n", (int)level, log_last);
}

/* fuzz_log_reset -- forget counted messages */
void fuzz_log_reset(void)
{
	log_errors = 0;
	log_last[0] = '\0';
}

/* fuzz_log_errors -- error messages since the last reset */
int fuzz_log_errors(void)
{
	return log_errors;
}

/* fuzz_log_last -- the last message */
const char *fuzz_log_last(void)
{
	return log_last;
}

/* ----- objects */

/* make_peer -- a peer of one kind, with one local region */
static void make_peer(enum fuzz_peer_kind kind)
{
	struct ibv_context *ctx = NULL;
	const char *prov = kind == FUZZ_PEER_FABRIC ? "fabric" : "verbs";

	setenv("RPMA_PROVIDER", prov, 1);
	fake_set_peer_caps(kind == FUZZ_PEER_VERBS_NATIVE ? (RPMA_PROV_CAP_NATIVE_FLUSH |
							     RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE)
							  : 0);
	int ret = rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	FUZZ_CHECK(ret == 0, "rpma_utils_get_ibv_context(%s): %d", prov, ret);
	ret = rpma_peer_new(ctx, &peers[kind]);
	FUZZ_CHECK(ret == 0, "rpma_peer_new(%s): %d", prov, ret);
	unsetenv("RPMA_PROVIDER");
	fake_set_peer_caps(0);

	local_bufs[kind] = calloc(1, FUZZ_LOCAL_SIZE);
	FUZZ_CHECK(local_bufs[kind] != NULL, "out of memory");
	ret = rpma_mr_reg(peers[kind], local_bufs[kind], FUZZ_LOCAL_SIZE, 0xff, &local_mrs[kind]);
	FUZZ_CHECK(ret == 0, "rpma_mr_reg: %d", ret);
}

/* fuzz_init -- the objects every input may use */
void fuzz_init(void)
{
	if (peers[0] != NULL)
		return;
	rpma_log_set_function(capture_log);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG);
	fake_reset();
	for (int k = 0; k < FUZZ_PEER_MAX; k++)
		make_peer((enum fuzz_peer_kind)k);
	for (int o = 0; o < FAKE_OBJ_MAX; o++)
		baseline_live[o] = fake_live((enum fake_obj)o);
	baseline_fds = fake_fds_open();
	FUZZ_CHECK(fake_violations() == 0, "violations while setting up");
	fake_reset();
}

/* fuzz_peer -- the peer of a kind */
struct rpma_peer *fuzz_peer(enum fuzz_peer_kind kind)
{
	return peers[kind];
}

/* fuzz_local_mr -- the local region of a kind's peer */
struct rpma_mr_local *fuzz_local_mr(enum fuzz_peer_kind kind)
{
	return local_mrs[kind];
}

/* fuzz_begin -- a fresh call log for one input */
void fuzz_begin(void)
{
	fake_reset();
	fuzz_log_reset();
}

/* fuzz_end -- nothing of this input is left behind */
void fuzz_end(void)
{
	FUZZ_CHECK(fake_violations() == 0, "the core violated the provider boundary: %s",
		   fake_last_violation());
	for (int o = 0; o < FAKE_OBJ_MAX; o++)
		FUZZ_CHECK(fake_live((enum fake_obj)o) == baseline_live[o],
			   "fake object kind %d: %d live, %d expected", o,
			   fake_live((enum fake_obj)o), baseline_live[o]);
	FUZZ_CHECK(fake_fds_open() == baseline_fds, "fake fds: %d open, %d expected",
		   fake_fds_open(), baseline_fds);
}

/* fuzz_conn -- a connected outgoing connection */
struct rpma_conn *fuzz_conn(enum fuzz_peer_kind kind, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret = rpma_conn_req_new(peers[kind], "127.0.0.1", "7204", cfg, &req);
	FUZZ_CHECK(ret == 0, "rpma_conn_req_new: %d", ret);
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	FUZZ_CHECK(ret == 0 && conn != NULL && req == NULL, "rpma_conn_req_connect: %d", ret);
	return conn;
}

/* fuzz_conn_delete -- the end of a connection */
void fuzz_conn_delete(struct rpma_conn **conn)
{
	int ret = rpma_conn_disconnect(*conn);
	FUZZ_CHECK(ret == 0, "rpma_conn_disconnect: %d", ret);
	ret = rpma_conn_delete(conn);
	FUZZ_CHECK(ret == 0 && *conn == NULL, "rpma_conn_delete: %d", ret);
}

/* fuzz_calls -- provider op calls since fuzz_begin() */
int fuzz_calls(void)
{
	return fake_calls_total();
}
