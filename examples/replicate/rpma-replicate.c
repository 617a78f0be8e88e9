/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma-replicate.c -- persistent replication demo: a client streams records
 * into a server's file-backed region with write + flush
 *
 *   rpma-replicate server <addr> <port> <file> [--records N] [--pmem]
 *   rpma-replicate client <addr> <port> [--records N] [--size BYTES]
 *   rpma-replicate demo [--records N] [--size BYTES] [--addr A] [--port P] [--file F]
 *
 * The server maps <file> (created and sized as needed), registers it as a
 * remote write destination that accepts both flush types and sends the
 * region's descriptor and its peer configuration as connection private data.
 * The client writes record after record, flushes each one (persistent when
 * the server declared direct write to PMem, otherwise to visibility),
 * records the latency of every write + flush pair, reads the whole range back
 * and compares, then tells the server by message how many records it sent
 * and their checksum.  The server checks the checksum over its file, syncs
 * the file and answers.  "demo" runs both in two processes on 127.0.0.1 and
 * finally re-reads the file from disk to show that it holds exactly the
 * records that were sent.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

#define MSG_SIZE   64
#define PDATA_MAX  64
#define MIN_RECORD 16

/* what the server sends as private data: both descriptors back to back */
struct pdata_hdr {
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[PDATA_MAX - 2];
};

/* the end-of-stream message and the server's answer */
struct stream_msg {
	uint64_t records;
	uint64_t record_size;
	uint64_t checksum;
	int64_t status; /* answer: 0 when the server's copy matches */
};

struct opts {
	const char *addr;
	const char *port;
	const char *file;
	uint64_t records;
	uint64_t size;
	int pmem;
};

/* die -- print a message (and an RPMA error text) and exit */
static void die(int ret, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "rpma-replicate: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (ret)
		fprintf(stderr, ": %s", rpma_err_2str(ret));
	fprintf(stderr, "\n");
	exit(1);
}

#define CHECK(call)                             \
	do {                                    \
		int ret_ = (call);              \
		if (ret_)                       \
			die(ret_, "%s", #call); \
	} while (0)

/* now_ns -- a monotonic clock in nanoseconds */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fill_record -- the deterministic content of record i */
static void fill_record(char *dst, uint64_t i, uint64_t size)
{
	uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
	memcpy(dst, &i, sizeof(i));
	for (uint64_t off = sizeof(i); off < size; off++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		dst[off] = (char)(x & 0xff);
	}
}

/* checksum -- FNV-1a over a buffer */
static uint64_t checksum(const char *buf, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* wait_event -- take the next connection event and insist on the expected one */
static void wait_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	CHECK(rpma_conn_next_event(conn, &ev));
	if (ev != expected)
		die(0, "expected event '%s', got '%s'", rpma_utils_conn_event_2str(expected),
		    rpma_utils_conn_event_2str(ev));
}

/* wait_completion -- block until one completion arrives on cq and check it */
static void wait_completion(struct rpma_cq *cq, enum ibv_wc_opcode opcode, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int got = 0;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, &got)) == RPMA_E_NO_COMPLETION)
		CHECK(rpma_cq_wait(cq));
	if (ret)
		die(ret, "rpma_cq_get_wc");
	if (wc.status != IBV_WC_SUCCESS)
		die(0, "completion failed: ibv_wc_status %d", (int)wc.status);
	if (wc.opcode != opcode)
		die(0, "unexpected completion opcode %d (wanted %d)", wc.opcode, opcode);
	if (out)
		*out = wc;
}

/* map_file -- open (creating as needed) and map size bytes of path */
static char *map_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0)
		die(0, "open %s: %s", path, strerror(errno));
	if (ftruncate(fd, (off_t)size))
		die(0, "ftruncate %s: %s", path, strerror(errno));
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		die(0, "mmap %s: %s", path, strerror(errno));
	return p;
}

/* get_peer -- the device for addr and a peer on it */
static struct rpma_peer *get_peer(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	CHECK(rpma_utils_get_ibv_context(addr, type, &dev));
	CHECK(rpma_peer_new(dev, &peer));
	return peer;
}

/* run_server -- accept one client, hold its records, check and sync them */
static int run_server(const struct opts *o, int ready_fd)
{
	size_t region = (size_t)(o->records * o->size);
	char *data = map_file(o->file, region);
	memset(data, 0, region);

	struct rpma_peer *peer = get_peer(o->addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr = NULL;
	CHECK(rpma_mr_reg(peer, data, region,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
				  RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			  &mr));
	char *msg = aligned_alloc(64, 2 * MSG_SIZE);
	struct rpma_mr_local *msg_mr = NULL;
	CHECK(rpma_mr_reg(peer, msg, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			  &msg_mr));

	struct rpma_peer_cfg *pcfg = NULL;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, o->pmem != 0));

	struct pdata_hdr hdr;
	memset(&hdr, 0, sizeof(hdr));
	size_t mr_size = 0, pcfg_size = 0;
	CHECK(rpma_mr_get_descriptor_size(mr, &mr_size));
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size));
	if (mr_size + pcfg_size > sizeof(hdr.descriptors))
		die(0, "descriptors do not fit in the private data");
	hdr.mr_desc_size = (uint8_t)mr_size;
	hdr.pcfg_desc_size = (uint8_t)pcfg_size;
	CHECK(rpma_mr_get_descriptor(mr, hdr.descriptors));
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, hdr.descriptors + mr_size));

	struct rpma_ep *ep = NULL;
	CHECK(rpma_ep_listen(peer, o->addr, o->port, &ep));
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "r", 1);
		close(ready_fd);
	}
	printf("[server] listening on %s:%s, %" PRIu64 " records of %" PRIu64 " B in %s%s\n",
	       o->addr, o->port, o->records, o->size, o->file,
	       o->pmem ? " (declared direct write to PMem)" : "");
	fflush(stdout); /* whoever waits for this line may read a pipe or a file */

	struct rpma_conn_req *req = NULL;
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK(rpma_conn_req_recv(req, msg_mr, MSG_SIZE, MSG_SIZE, NULL));
	struct rpma_conn_private_data pd = {&hdr, (uint8_t)(2 + mr_size + pcfg_size)};
	struct rpma_conn *conn = NULL;
	CHECK(rpma_conn_req_connect(&req, &pd, &conn));
	wait_event(conn, RPMA_CONN_ESTABLISHED);

	struct rpma_cq *cq = NULL;
	CHECK(rpma_conn_get_cq(conn, &cq));
	wait_completion(cq, IBV_WC_RECV, NULL);

	struct stream_msg in, out;
	memcpy(&in, msg + MSG_SIZE, sizeof(in));
	memset(&out, 0, sizeof(out));
	out.records = in.records;
	out.record_size = in.record_size;
	size_t used = (size_t)(in.records * in.record_size);
	if (used > region) {
		out.status = -1;
	} else {
		out.checksum = checksum(data, used);
		out.status = out.checksum == in.checksum ? 0 : -2;
		if (msync(data, region, MS_SYNC))
			out.status = -3;
	}
	printf("[server] client reports %" PRIu64 " records, checksum %016" PRIx64
	       "; server copy %016" PRIx64 " -> %s\n",
	       in.records, in.checksum, out.checksum, out.status == 0 ? "match" : "MISMATCH");
	memcpy(msg, &out, sizeof(out));
	CHECK(rpma_send(conn, msg_mr, 0, sizeof(out), RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_completion(cq, IBV_WC_SEND, NULL);

	wait_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_disconnect(conn));
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_ep_shutdown(&ep));
	CHECK(rpma_peer_cfg_delete(&pcfg));
	CHECK(rpma_mr_dereg(&msg_mr));
	CHECK(rpma_mr_dereg(&mr));
	CHECK(rpma_peer_delete(&peer));
	free(msg);
	munmap(data, region);
	return out.status == 0 ? 0 : 1;
}

/* cmp_u64 -- qsort comparator */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* percentile -- the p-th percentile of sorted samples, in microseconds */
static double percentile(const uint64_t *sorted, uint64_t n, double p)
{
	uint64_t idx = (uint64_t)(p / 100.0 * (double)(n - 1) + 0.5);
	return (double)sorted[idx] / 1000.0;
}

/* run_client -- stream the records, verify them, report the figures */
static int run_client(const struct opts *o)
{
	size_t region = (size_t)(o->records * o->size);
	struct rpma_peer *peer = get_peer(o->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);

	char *src = aligned_alloc(4096, (region + 4095) / 4096 * 4096);
	char *back = aligned_alloc(4096, (region + 4095) / 4096 * 4096);
	char *msg = aligned_alloc(64, 2 * MSG_SIZE);
	if (!src || !back || !msg)
		die(0, "out of memory");
	for (uint64_t i = 0; i < o->records; i++)
		fill_record(src + i * o->size, i, o->size);
	memset(back, 0, region);

	struct rpma_mr_local *src_mr = NULL, *back_mr = NULL, *msg_mr = NULL;
	CHECK(rpma_mr_reg(peer, src, region, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	CHECK(rpma_mr_reg(peer, back, region, RPMA_MR_USAGE_READ_DST, &back_mr));
	CHECK(rpma_mr_reg(peer, msg, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			  &msg_mr));

	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_timeout(cfg, 5000));
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	CHECK(rpma_conn_req_new(peer, o->addr, o->port, cfg, &req));
	CHECK(rpma_conn_req_recv(req, msg_mr, MSG_SIZE, MSG_SIZE, NULL));
	CHECK(rpma_conn_req_connect(&req, NULL, &conn));
	wait_event(conn, RPMA_CONN_ESTABLISHED);

	struct rpma_conn_private_data pd;
	CHECK(rpma_conn_get_private_data(conn, &pd));
	if (pd.ptr == NULL || pd.len < 2)
		die(0, "the server sent no descriptors");
	struct pdata_hdr hdr;
	memset(&hdr, 0, sizeof(hdr));
	memcpy(&hdr, pd.ptr, pd.len < sizeof(hdr) ? pd.len : sizeof(hdr));
	if ((size_t)hdr.mr_desc_size + hdr.pcfg_desc_size + 2 > pd.len)
		die(0, "malformed private data");
	struct rpma_mr_remote *dst = NULL;
	CHECK(rpma_mr_remote_from_descriptor(hdr.descriptors, hdr.mr_desc_size, &dst));
	struct rpma_peer_cfg *rcfg = NULL;
	CHECK(rpma_peer_cfg_from_descriptor(hdr.descriptors + hdr.mr_desc_size, hdr.pcfg_desc_size,
					    &rcfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, rcfg));
	bool dw2pmem = false;
	CHECK(rpma_peer_cfg_get_direct_write_to_pmem(rcfg, &dw2pmem));
	size_t remote_size = 0;
	CHECK(rpma_mr_remote_get_size(dst, &remote_size));
	if (remote_size < region)
		die(0, "the server's region (%zu B) is smaller than the stream (%zu B)",
		    remote_size, region);

	enum rpma_flush_type type =
		dw2pmem ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
	/* a provider may not offer persistence: fall back to visibility, and say so */
	int ret = rpma_flush(conn, dst, 0, 0, type, RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret == RPMA_E_NOSUPP && type == RPMA_FLUSH_TYPE_PERSISTENT) {
		printf("[client] persistent flush not supported here, using visibility\n");
		type = RPMA_FLUSH_TYPE_VISIBILITY;
		ret = rpma_flush(conn, dst, 0, 0, type, RPMA_F_COMPLETION_ALWAYS, NULL);
	}
	if (ret)
		die(ret, "rpma_flush");
	struct rpma_cq *cq = NULL;
	CHECK(rpma_conn_get_cq(conn, &cq));
	wait_completion(cq, IBV_WC_RDMA_READ, NULL);

	uint64_t *lat = calloc(o->records, sizeof(*lat));
	if (!lat)
		die(0, "out of memory");
	uint64_t t_start = now_ns();
	for (uint64_t i = 0; i < o->records; i++) {
		uint64_t t0 = now_ns();
		size_t off = (size_t)(i * o->size);
		CHECK(rpma_write(conn, dst, off, src_mr, off, o->size, RPMA_F_COMPLETION_ON_ERROR,
				 NULL));
		CHECK(rpma_flush(conn, dst, off, o->size, type, RPMA_F_COMPLETION_ALWAYS, NULL));
		wait_completion(cq, IBV_WC_RDMA_READ, NULL);
		lat[i] = now_ns() - t0;
	}
	uint64_t elapsed = now_ns() - t_start;

	CHECK(rpma_read(conn, back_mr, 0, dst, 0, region, RPMA_F_COMPLETION_ALWAYS, NULL));
	wait_completion(cq, IBV_WC_RDMA_READ, NULL);
	int same = memcmp(src, back, region) == 0;

	struct stream_msg out = {o->records, o->size, checksum(src, region), 0};
	memcpy(msg, &out, sizeof(out));
	CHECK(rpma_send(conn, msg_mr, 0, sizeof(out), RPMA_F_COMPLETION_ALWAYS, NULL));
	struct ibv_wc wc;
	int got_send = 0, got_recv = 0;
	while (!got_send || !got_recv) {
		int n = 0;
		ret = rpma_cq_get_wc(cq, 1, &wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			CHECK(rpma_cq_wait(cq));
			continue;
		}
		if (ret)
			die(ret, "rpma_cq_get_wc");
		if (wc.status != IBV_WC_SUCCESS)
			die(0, "message failed: ibv_wc_status %d", (int)wc.status);
		got_send |= wc.opcode == IBV_WC_SEND;
		got_recv |= wc.opcode == IBV_WC_RECV;
	}
	struct stream_msg answer;
	memcpy(&answer, msg + MSG_SIZE, sizeof(answer));

	qsort(lat, o->records, sizeof(*lat), cmp_u64);
	double secs = (double)elapsed / 1e9;
	printf("[client] %" PRIu64 " records x %" PRIu64 " B, write + %s flush each: %.3f s\n",
	       o->records, o->size,
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visibility", secs);
	printf("[client] throughput %.0f records/s, %.2f MiB/s\n", (double)o->records / secs,
	       (double)region / secs / (1024.0 * 1024.0));
	printf("[client] latency (write + flush) us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  "
	       "max %.1f\n",
	       percentile(lat, o->records, 50), percentile(lat, o->records, 90),
	       percentile(lat, o->records, 99), percentile(lat, o->records, 99.9),
	       (double)lat[o->records - 1] / 1000.0);
	printf("[client] read back %zu B: %s; server: %s\n", region,
	       same ? "identical" : "DIFFERENT",
	       answer.status == 0 ? "checksum matches, file synced" : "FAILED");

	CHECK(rpma_conn_disconnect(conn));
	wait_event(conn, RPMA_CONN_CLOSED);
	CHECK(rpma_conn_delete(&conn));
	CHECK(rpma_peer_cfg_delete(&rcfg));
	CHECK(rpma_mr_remote_delete(&dst));
	CHECK(rpma_conn_cfg_delete(&cfg));
	CHECK(rpma_mr_dereg(&msg_mr));
	CHECK(rpma_mr_dereg(&back_mr));
	CHECK(rpma_mr_dereg(&src_mr));
	CHECK(rpma_peer_delete(&peer));
	free(lat);
	free(msg);
	free(back);
	free(src);
	return same && answer.status == 0 ? 0 : 1;
}

/* verify_file -- re-read the server's file from disk and compare with the records */
static int verify_file(const struct opts *o)
{
	size_t region = (size_t)(o->records * o->size);
	char *rec = malloc(o->size);
	FILE *f = fopen(o->file, "rb");
	if (!rec || !f)
		die(0, "cannot read back %s", o->file);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < o->records; i++) {
		char *got = malloc(o->size);
		if (!got || fread(got, 1, o->size, f) != o->size)
			die(0, "%s is shorter than the stream", o->file);
		fill_record(rec, i, o->size);
		bad += memcmp(rec, got, o->size) != 0;
		free(got);
	}
	fclose(f);
	free(rec);
	printf("[demo] %s on disk: %" PRIu64 " of %" PRIu64 " records (%zu B) exactly as sent%s\n",
	       o->file, o->records - bad, o->records, region, bad ? " -- MISMATCH" : "");
	return bad ? 1 : 0;
}

/* run_demo -- server and client in two processes on one host */
static int run_demo(struct opts *o)
{
	char tmpl[] = "/tmp/rpma-replicate-XXXXXX";
	int own_file = 0;
	if (!o->file) {
		int fd = mkstemp(tmpl);
		if (fd < 0)
			die(0, "mkstemp: %s", strerror(errno));
		close(fd);
		o->file = tmpl;
		own_file = 1;
	}
	int pipefd[2];
	if (pipe(pipefd))
		die(0, "pipe: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die(0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(pipefd[0]);
		int rc = run_server(o, pipefd[1]);
		fflush(stdout);
		_exit(rc);
	}
	close(pipefd[1]);
	char c;
	if (read(pipefd[0], &c, 1) != 1)
		die(0, "the server did not start");
	close(pipefd[0]);
	int client_rc = run_client(o);
	int status = 0;
	waitpid(pid, &status, 0);
	int server_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	int file_rc = verify_file(o);
	if (own_file)
		unlink(tmpl);
	int rc = client_rc || server_rc || file_rc;
	printf("[demo] %s\n", rc ? "FAILED" : "OK");
	return rc;
}

/* usage -- print how to call the program */
static void usage(void)
{
	fprintf(stderr, "usage:\n"
			"  rpma-replicate server <addr> <port> <file> [--records N] [--size B] "
			"[--pmem]\n"
			"  rpma-replicate client <addr> <port> [--records N] [--size B]\n"
			"  rpma-replicate demo [--records N] [--size B] [--addr A] [--port P] "
			"[--file F] [--pmem]\n");
	exit(2);
}

int main(int argc, char *argv[])
{
	struct opts o = {"127.0.0.1", "7204", NULL, 4096, 64, 0};
	if (argc < 2)
		usage();
	const char *mode = argv[1];
	int i = 2;
	if (!strcmp(mode, "server") || !strcmp(mode, "client")) {
		if (argc < 4)
			usage();
		o.addr = argv[2];
		o.port = argv[3];
		i = 4;
		if (!strcmp(mode, "server")) {
			if (argc < 5)
				usage();
			o.file = argv[4];
			i = 5;
		}
	} else if (strcmp(mode, "demo")) {
		usage();
	}
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--pmem"))
			o.pmem = 1;
		else if (i + 1 >= argc)
			usage();
		else if (!strcmp(argv[i], "--records"))
			o.records = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--size"))
			o.size = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--addr"))
			o.addr = argv[++i];
		else if (!strcmp(argv[i], "--port"))
			o.port = argv[++i];
		else if (!strcmp(argv[i], "--file"))
			o.file = argv[++i];
		else
			usage();
	}
	if (o.records == 0 || o.size < MIN_RECORD || o.size > (1u << 20))
		die(0, "need --records >= 1 and %d <= --size <= 1 MiB", MIN_RECORD);
	if (!strcmp(mode, "server"))
		return run_server(&o, -1);
	if (!strcmp(mode, "client"))
		return run_client(&o);
	return run_demo(&o);
}
