/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * diff_transcript.c -- print a canonical transcript of what the librpma API
 * answers without an RDMA device, for the differential test (diff.sh)
 *
 * The same source is built against our librpma and against Debian's
 * librpma0 1.2.0 (with its own header); diff.sh compares the two outputs.
 * Only the public librpma 1.2 API is used.  Every line is "<what>: <value>".
 * Lines where this implementation differs from upstream on purpose (the
 * deliberate differences listed in HACKING.md) start with
 * "DIFF-OK:<reason> "; they are printed but not compared.  Lines starting
 * with '#' are information (which library was loaded) and not compared.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* quiet -- a log function that drops everything (keeps the transcript clean) */
static void quiet(enum rpma_log_level level, const char *file_name, const int line_no,
		  const char *function_name, const char *message_format, ...)
{
	(void)level;
	(void)file_name;
	(void)line_no;
	(void)function_name;
	(void)message_format;
}

/* ret -- print a return code */
static void ret(const char *what, int r)
{
	printf("%s: %d\n", what, r);
}

/* errs -- every error string */
static void errs(void)
{
	const int codes[] = {0,
			     RPMA_E_UNKNOWN,
			     RPMA_E_NOSUPP,
			     RPMA_E_PROVIDER,
			     RPMA_E_NOMEM,
			     RPMA_E_INVAL,
			     RPMA_E_NO_COMPLETION,
			     RPMA_E_NO_EVENT,
			     RPMA_E_AGAIN,
			     RPMA_E_SHARED_CHANNEL,
			     RPMA_E_NOT_SHARED_CHNL,
			     1,
			     -1,
			     -100010,
			     -99999,
			     100004};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		printf("rpma_err_2str(%d): %s\n", codes[i], rpma_err_2str(codes[i]));
}

/* events -- every event string */
static void events(void)
{
	for (int e = -3; e <= 7; e++)
		printf("rpma_utils_conn_event_2str(%d): %s\n", e,
		       rpma_utils_conn_event_2str((enum rpma_conn_event)e));
}

/* logs -- thresholds and their validation */
static void logs(void)
{
	enum rpma_log_level level = (enum rpma_log_level)42;
	ret("log_get_threshold(MAIN)", rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level));
	printf("log main threshold default: %d\n", (int)level);
	ret("log_get_threshold(AUX)", rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level));
	/* HACKING.md difference 7: warnings reach stderr by default */
	printf("DIFF-OK:log-aux-default log aux threshold default: %d\n", (int)level);
	ret("log_get_threshold(MAX)", rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, &level));
	ret("log_get_threshold(MAIN, NULL)", rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL));
	ret("log_set_threshold(MAX, ERROR)",
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_ERROR));
	ret("log_set_threshold(MAIN, -2)",
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level) - 2));
	ret("log_set_threshold(MAIN, 6)",
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)6));
	for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG; l++) {
		for (int t = RPMA_LOG_THRESHOLD; t <= RPMA_LOG_THRESHOLD_AUX; t++) {
			char what[64];
			level = (enum rpma_log_level)42;
			snprintf(what, sizeof(what), "log_set_threshold(%d, %d)", t, l);
			ret(what, rpma_log_set_threshold((enum rpma_log_threshold)t,
							 (enum rpma_log_level)l));
			rpma_log_get_threshold((enum rpma_log_threshold)t, &level);
			printf("log threshold %d read back: %d\n", t, (int)level);
		}
	}
	ret("log_set_threshold(MAIN, WARNING)",
	    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING));
	ret("log_set_function(quiet)", rpma_log_set_function(quiet));
}

/* peer_cfgs -- peer configuration, its descriptor both ways */
static void peer_cfgs(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool dw = true;
	size_t size = 0;
	uint8_t desc[4];

	ret("peer_cfg_new", rpma_peer_cfg_new(&pcfg));
	ret("peer_cfg_get_direct_write_to_pmem", rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw));
	printf("peer_cfg default direct_write_to_pmem: %d\n", dw);
	ret("peer_cfg_get_descriptor_size", rpma_peer_cfg_get_descriptor_size(pcfg, &size));
	printf("peer_cfg descriptor size: %zu\n", size);
	for (int v = 0; v <= 1; v++) {
		memset(desc, 0xAA, sizeof(desc));
		ret("peer_cfg_set_direct_write_to_pmem",
		    rpma_peer_cfg_set_direct_write_to_pmem(pcfg, v));
		ret("peer_cfg_get_descriptor", rpma_peer_cfg_get_descriptor(pcfg, desc));
		/* what every decoder reads (non-zero: direct write to PMem) is compared */
		printf("peer_cfg descriptor(%d): non-zero %d, next byte %02x\n", v, desc[0] != 0,
		       desc[1]);
		/* ours adds bit 7 beside bit 0 (native flush announcement, rpma_verbs(7)) */
		printf("DIFF-OK:peer-cfg-announce peer_cfg descriptor(%d) byte: %02x\n", v,
		       desc[0]);
	}
	ret("peer_cfg_delete", rpma_peer_cfg_delete(&pcfg));
	printf("peer_cfg after delete: %s\n", pcfg ? "set" : "NULL");

	const uint8_t bytes[] = {0x00, 0x01, 0x02, 0x80, 0xff};
	for (size_t i = 0; i < sizeof(bytes); i++) {
		char what[64];
		snprintf(what, sizeof(what), "peer_cfg_from_descriptor(%02x, 1)", bytes[i]);
		pcfg = NULL;
		ret(what, rpma_peer_cfg_from_descriptor(&bytes[i], 1, &pcfg));
		dw = false;
		rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw);
		printf("peer_cfg from %02x: %d\n", bytes[i], dw);
		rpma_peer_cfg_delete(&pcfg);
	}
	pcfg = NULL;
	ret("peer_cfg_from_descriptor(size 4)", rpma_peer_cfg_from_descriptor(bytes, 4, &pcfg));
	rpma_peer_cfg_delete(&pcfg);
	ret("peer_cfg_from_descriptor(size 0)", rpma_peer_cfg_from_descriptor(bytes, 0, &pcfg));
	ret("peer_cfg_from_descriptor(NULL)", rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg));
	ret("peer_cfg_from_descriptor(out NULL)", rpma_peer_cfg_from_descriptor(bytes, 1, NULL));
}

/* put_le -- little-endian store */
static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* remote -- decode one MR descriptor and print what the API shows of it */
static void remote(const char *name, const uint8_t *desc, size_t desc_size)
{
	struct rpma_mr_remote *mr = NULL;
	char what[128];
	snprintf(what, sizeof(what), "mr_remote_from_descriptor(%s, %zu)", name, desc_size);
	int r = rpma_mr_remote_from_descriptor(desc, desc_size, &mr);
	ret(what, r);
	if (r)
		return;
	size_t size = 0;
	int ft = -1;
	ret("  mr_remote_get_size", rpma_mr_remote_get_size(mr, &size));
	ret("  mr_remote_get_flush_type", rpma_mr_remote_get_flush_type(mr, &ft));
	printf("  size %#zx flush_type %#x\n", size, ft);
	ret("  mr_remote_delete", rpma_mr_remote_delete(&mr));
}

/* descriptors -- MR descriptors accepted and refused */
static void descriptors(void)
{
	uint8_t d[32];
	for (int usage = 0; usage <= 0xff; usage += 3) {
		char name[32];
		memset(d, 0, sizeof(d));
		put_le(d, 0x00007f1234560000ULL + (uint64_t)usage, 8);
		put_le(d + 8, 0x1000ULL * (uint64_t)(usage + 1), 8);
		put_le(d + 16, 0x11223344, 4);
		d[20] = (uint8_t)usage;
		snprintf(name, sizeof(name), "usage %#x", usage);
		remote(name, d, 21);
	}
	memset(d, 0, sizeof(d));
	put_le(d + 8, 0x123456789ULL, 8);
	d[20] = 0x30;
	for (size_t s = 0; s <= 22; s += 1)
		if (s < 3 || s > 18)
			remote("sizes", d, s);
	d[21] = 0x77;
	remote("trailing byte", d, 26);
	d[20] = 0;
	remote("usage 0", d, 21);
	remote("usage 0 long", d, 26);
	ret("mr_remote_from_descriptor(NULL)", rpma_mr_remote_from_descriptor(NULL, 21, NULL));
	struct rpma_mr_remote *mr = NULL;
	ret("mr_remote_from_descriptor(NULL desc)", rpma_mr_remote_from_descriptor(NULL, 21, &mr));
}

/* conn_cfgs -- defaults and round trips of the connection settings */
static void conn_cfgs(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	int timeout = -7;
	uint32_t v = 7;
	bool shared = true;
	struct rpma_srq *srq = (struct rpma_srq *)&v;

	ret("conn_cfg_new", rpma_conn_cfg_new(&cfg));
	ret("conn_cfg_get_timeout", rpma_conn_cfg_get_timeout(cfg, &timeout));
	printf("conn_cfg timeout default: %d\n", timeout);
	ret("conn_cfg_get_cq_size", rpma_conn_cfg_get_cq_size(cfg, &v));
	printf("conn_cfg cq_size default: %u\n", v);
	ret("conn_cfg_get_rcq_size", rpma_conn_cfg_get_rcq_size(cfg, &v));
	printf("conn_cfg rcq_size default: %u\n", v);
	ret("conn_cfg_get_sq_size", rpma_conn_cfg_get_sq_size(cfg, &v));
	printf("conn_cfg sq_size default: %u\n", v);
	ret("conn_cfg_get_rq_size", rpma_conn_cfg_get_rq_size(cfg, &v));
	printf("conn_cfg rq_size default: %u\n", v);
	ret("conn_cfg_get_compl_channel", rpma_conn_cfg_get_compl_channel(cfg, &shared));
	printf("conn_cfg compl_channel default: %d\n", shared);
	ret("conn_cfg_get_srq", rpma_conn_cfg_get_srq(cfg, &srq));
	printf("conn_cfg srq default: %s\n", srq ? "set" : "NULL");

	const uint32_t sizes[] = {0, 1, 12345, UINT32_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		printf("conn_cfg size %u: set %d %d %d %d", sizes[i],
		       rpma_conn_cfg_set_cq_size(cfg, sizes[i]),
		       rpma_conn_cfg_set_rcq_size(cfg, sizes[i]),
		       rpma_conn_cfg_set_sq_size(cfg, sizes[i]),
		       rpma_conn_cfg_set_rq_size(cfg, sizes[i]));
		uint32_t a = 1, b = 1, c = 1, d = 1;
		rpma_conn_cfg_get_cq_size(cfg, &a);
		rpma_conn_cfg_get_rcq_size(cfg, &b);
		rpma_conn_cfg_get_sq_size(cfg, &c);
		rpma_conn_cfg_get_rq_size(cfg, &d);
		printf(" got %u %u %u %u\n", a, b, c, d);
	}
	const int timeouts[] = {-1000, -1, 0, 1, 5000, 2147483647};
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		int r = rpma_conn_cfg_set_timeout(cfg, timeouts[i]);
		rpma_conn_cfg_get_timeout(cfg, &timeout);
		printf("conn_cfg_set_timeout(%d): %d, reads %d\n", timeouts[i], r, timeout);
	}
	for (int s = 1; s >= 0; s--) {
		int r = rpma_conn_cfg_set_compl_channel(cfg, s);
		rpma_conn_cfg_get_compl_channel(cfg, &shared);
		printf("conn_cfg_set_compl_channel(%d): %d, reads %d\n", s, r, shared);
	}
	ret("conn_cfg_set_srq(cfg, NULL)", rpma_conn_cfg_set_srq(cfg, NULL));
	ret("conn_cfg_set_srq(NULL, NULL)", rpma_conn_cfg_set_srq(NULL, NULL));
	ret("conn_cfg_get_srq(cfg, NULL)", rpma_conn_cfg_get_srq(cfg, NULL));
	ret("conn_cfg_get_timeout(NULL)", rpma_conn_cfg_get_timeout(NULL, &timeout));
	ret("conn_cfg_get_timeout(cfg, NULL)", rpma_conn_cfg_get_timeout(cfg, NULL));
	ret("conn_cfg_set_cq_size(NULL)", rpma_conn_cfg_set_cq_size(NULL, 1));
	ret("conn_cfg_get_cq_size(cfg, NULL)", rpma_conn_cfg_get_cq_size(cfg, NULL));
	ret("conn_cfg_set_compl_channel(NULL)", rpma_conn_cfg_set_compl_channel(NULL, true));
	ret("conn_cfg_get_compl_channel(cfg, NULL)", rpma_conn_cfg_get_compl_channel(cfg, NULL));
	ret("conn_cfg_delete", rpma_conn_cfg_delete(&cfg));
	ret("conn_cfg_delete(&NULL)", rpma_conn_cfg_delete(&cfg));
	ret("conn_cfg_delete(NULL)", rpma_conn_cfg_delete(NULL));
	ret("conn_cfg_new(NULL)", rpma_conn_cfg_new(NULL));
}

/* srq_cfgs -- defaults and round trips of the SRQ settings */
static void srq_cfgs(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = 7;
	ret("srq_cfg_new", rpma_srq_cfg_new(&cfg));
	ret("srq_cfg_get_rq_size", rpma_srq_cfg_get_rq_size(cfg, &v));
	printf("srq_cfg rq_size default: %u\n", v);
	ret("srq_cfg_get_rcq_size", rpma_srq_cfg_get_rcq_size(cfg, &v));
	printf("srq_cfg rcq_size default: %u\n", v);
	const uint32_t sizes[] = {0, 1, 777, UINT32_MAX};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t a = 1, b = 1;
		printf("srq_cfg size %u: set %d %d", sizes[i],
		       rpma_srq_cfg_set_rq_size(cfg, sizes[i]),
		       rpma_srq_cfg_set_rcq_size(cfg, sizes[i]));
		rpma_srq_cfg_get_rq_size(cfg, &a);
		rpma_srq_cfg_get_rcq_size(cfg, &b);
		printf(" got %u %u\n", a, b);
	}
	ret("srq_cfg_set_rq_size(NULL)", rpma_srq_cfg_set_rq_size(NULL, 1));
	ret("srq_cfg_get_rq_size(cfg, NULL)", rpma_srq_cfg_get_rq_size(cfg, NULL));
	ret("srq_cfg_set_rcq_size(NULL)", rpma_srq_cfg_set_rcq_size(NULL, 1));
	ret("srq_cfg_get_rcq_size(cfg, NULL)", rpma_srq_cfg_get_rcq_size(cfg, NULL));
	ret("srq_cfg_delete", rpma_srq_cfg_delete(&cfg));
	ret("srq_cfg_delete(&NULL)", rpma_srq_cfg_delete(&cfg));
	ret("srq_cfg_delete(NULL)", rpma_srq_cfg_delete(NULL));
	ret("srq_cfg_new(NULL)", rpma_srq_cfg_new(NULL));
}

/* invalid -- return codes of calls with NULL objects (no device needed) */
static void invalid(void)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	struct rpma_conn_private_data pdata;
	enum rpma_conn_event ev;
	int fd, n, odp;
	uint32_t u32;
	size_t size;
	void *ptr;
	bool b;
	const char src8[8] = {0};

	ret("utils_get_ibv_context(NULL)",
	    rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	ret("utils_get_ibv_context(out NULL)",
	    rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL));
	ret("utils_get_ibv_context(type 2)",
	    rpma_utils_get_ibv_context("127.0.0.1", (enum rpma_util_ibv_context_type)2, &ctx));
	ret("utils_ibv_context_is_odp_capable(NULL)",
	    rpma_utils_ibv_context_is_odp_capable(NULL, &odp));
	ret("peer_new(NULL)", rpma_peer_new(NULL, &peer));
	ret("peer_delete(NULL)", rpma_peer_delete(NULL));
	ret("peer_delete(&NULL)", rpma_peer_delete(&peer));
	ret("mr_reg(NULL)", rpma_mr_reg(NULL, NULL, 0, 0, &mr));
	ret("mr_reg(NULL peer, buf)",
	    rpma_mr_reg(NULL, &n, sizeof(n), RPMA_MR_USAGE_READ_SRC, &mr));
	ret("mr_dereg(NULL)", rpma_mr_dereg(NULL));
	ret("mr_dereg(&NULL)", rpma_mr_dereg(&mr));
	ret("mr_get_descriptor(NULL)", rpma_mr_get_descriptor(NULL, &n));
	ret("mr_get_descriptor_size(NULL)", rpma_mr_get_descriptor_size(NULL, &size));
	ret("mr_get_ptr(NULL)", rpma_mr_get_ptr(NULL, &ptr));
	ret("mr_get_size(NULL)", rpma_mr_get_size(NULL, &size));
	ret("mr_remote_get_size(NULL)", rpma_mr_remote_get_size(NULL, &size));
	ret("mr_remote_get_flush_type(NULL)", rpma_mr_remote_get_flush_type(NULL, &n));
	ret("mr_remote_delete(NULL)", rpma_mr_remote_delete(NULL));
	/* not rpma_mr_advise(NULL, ...): upstream 1.2.0 dereferences NULL there (crash) */
	ret("ep_listen(NULL)", rpma_ep_listen(NULL, NULL, NULL, &ep));
	ret("ep_shutdown(NULL)", rpma_ep_shutdown(NULL));
	ret("ep_shutdown(&NULL)", rpma_ep_shutdown(&ep));
	ret("ep_get_fd(NULL)", rpma_ep_get_fd(NULL, &fd));
	ret("ep_next_conn_req(NULL)", rpma_ep_next_conn_req(NULL, NULL, &req));
	ret("conn_req_new(NULL)", rpma_conn_req_new(NULL, "127.0.0.1", "7204", NULL, &req));
	ret("conn_req_delete(NULL)", rpma_conn_req_delete(NULL));
	ret("conn_req_delete(&NULL)", rpma_conn_req_delete(&req));
	ret("conn_req_connect(NULL)", rpma_conn_req_connect(NULL, NULL, &conn));
	ret("conn_req_connect(&NULL)", rpma_conn_req_connect(&req, NULL, &conn));
	ret("conn_req_recv(NULL)", rpma_conn_req_recv(NULL, NULL, 0, 0, NULL));
	ret("conn_req_get_private_data(NULL)", rpma_conn_req_get_private_data(NULL, &pdata));
	ret("conn_get_event_fd(NULL)", rpma_conn_get_event_fd(NULL, &fd));
	ret("conn_next_event(NULL)", rpma_conn_next_event(NULL, &ev));
	ret("conn_get_private_data(NULL)", rpma_conn_get_private_data(NULL, &pdata));
	ret("conn_apply_remote_peer_cfg(NULL)", rpma_conn_apply_remote_peer_cfg(NULL, NULL));
	ret("conn_get_qp_num(NULL)", rpma_conn_get_qp_num(NULL, &u32));
	ret("conn_get_cq(NULL)", rpma_conn_get_cq(NULL, &cq));
	ret("conn_get_rcq(NULL)", rpma_conn_get_rcq(NULL, &cq));
	ret("conn_get_compl_fd(NULL)", rpma_conn_get_compl_fd(NULL, &fd));
	ret("conn_wait(NULL)", rpma_conn_wait(NULL, 0, &cq, &b));
	ret("conn_disconnect(NULL)", rpma_conn_disconnect(NULL));
	ret("conn_delete(NULL)", rpma_conn_delete(NULL));
	ret("conn_delete(&NULL)", rpma_conn_delete(&conn));
	ret("read(NULL)", rpma_read(NULL, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL));
	ret("write(NULL)", rpma_write(NULL, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL));
	ret("write_with_imm(NULL)",
	    rpma_write_with_imm(NULL, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, 1, NULL));
	ret("atomic_write(NULL)",
	    rpma_atomic_write(NULL, NULL, 0, src8, RPMA_F_COMPLETION_ALWAYS, NULL));
	ret("flush(NULL)", rpma_flush(NULL, NULL, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				      RPMA_F_COMPLETION_ALWAYS, NULL));
	ret("send(NULL)", rpma_send(NULL, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL));
	ret("send_with_imm(NULL)",
	    rpma_send_with_imm(NULL, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, 1, NULL));
	ret("recv(NULL)", rpma_recv(NULL, NULL, 0, 0, NULL));
	ret("cq_get_fd(NULL)", rpma_cq_get_fd(NULL, &fd));
	ret("cq_wait(NULL)", rpma_cq_wait(NULL));
	ret("cq_get_wc(NULL)", rpma_cq_get_wc(NULL, 1, &wc, &n));
	ret("srq_new(NULL)", rpma_srq_new(NULL, NULL, &srq));
	ret("srq_delete(NULL)", rpma_srq_delete(NULL));
	ret("srq_delete(&NULL)", rpma_srq_delete(&srq));
	ret("srq_recv(NULL)", rpma_srq_recv(NULL, NULL, 0, 0, NULL));
	ret("srq_get_rcq(NULL)", rpma_srq_get_rcq(NULL, &cq));
	ret("peer_cfg_new(NULL)", rpma_peer_cfg_new(NULL));
	ret("peer_cfg_delete(NULL)", rpma_peer_cfg_delete(NULL));
	ret("log_set_function(default)", rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
	ret("log_set_function(quiet)", rpma_log_set_function(quiet));
}

/* main -- the whole transcript */
int main(void)
{
	Dl_info info;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dladdr((void *)rpma_err_2str, &info) && info.dli_fname)
		printf("# library: %s\n", info.dli_fname);
	logs();
	errs();
	events();
	peer_cfgs();
	descriptors();
	conn_cfgs();
	srq_cfgs();
	invalid();
	printf("# end\n");
	return 0;
}
