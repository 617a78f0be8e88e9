/* SPDX-License-Identifier: BSD-3-Clause */
/* bench.c -- options, operation loops, statistics and output of the benchmarks */

#include "bench.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOT_NONE 0xffffffffu /* a receive completion that consumed no buffer */
#define WC_BATCH  32

static const char *tool_name = "bench";

static const char *const op_names[BENCH_OP_COUNT] = {
	[BENCH_OP_WRITE] = "write",
	[BENCH_OP_WRITE_FLUSH_V] = "write-flush-v",
	[BENCH_OP_WRITE_FLUSH_P] = "write-flush-p",
	[BENCH_OP_READ] = "read",
	[BENCH_OP_SEND_RECV] = "send-recv",
	[BENCH_OP_ATOMIC_FLUSH] = "atomic-flush",
	[BENCH_OP_WRITE_IMM] = "write-imm",
};

/* bench_op_name -- the name of an operation as used in options and output */
const char *bench_op_name(enum bench_op op)
{
	return (unsigned)op < BENCH_OP_COUNT ? op_names[op] : "?";
}

/* bench_log -- a line on stderr prefixed with the tool name */
void bench_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", tool_name, line);
}

/* bench_alloc -- page-aligned zeroed memory of len bytes (NULL on failure) */
void *bench_alloc(size_t len)
{
	void *p = NULL;

	if (len == 0)
		len = 1;
	if (posix_memalign(&p, 4096, len) != 0)
		return NULL;
	memset(p, 0, len);
	return p;
}

/* put_u32 -- store v little-endian */
static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* get_u32 -- load a little-endian u32 */
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* bench_hello_decode -- check a client's hello; 0 and the values, or -1 */
int bench_hello_decode(const void *data, size_t len, uint32_t *max_size, uint32_t *window)
{
	const uint8_t *p = data;

	if (data == NULL || len < BENCH_HELLO_SIZE || get_u32(p) != BENCH_HELLO_MAGIC) {
		bench_log("server: the client's private data is not a benchmark hello");
		return -1;
	}
	*max_size = get_u32(p + 4);
	*window = get_u32(p + 8);
	if (*max_size < BENCH_MIN_SIZE || *max_size > (1u << 30) || *window == 0 ||
	    *window > BENCH_MAX_WINDOW) {
		bench_log("server: bad hello: max_size %" PRIu32 " window %" PRIu32, *max_size,
			  *window);
		return -1;
	}
	return 0;
}

/* now_ns -- monotonic time in nanoseconds */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------- options */

/* parse_size -- a byte count with an optional K/M/G suffix (powers of 1024) */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return -1;
	*out = (size_t)v;
	return 0;
}

/* parse_sizes -- "8-1M" (powers of two) or "8,64,4K" (a list), or a mix of both */
static int parse_sizes(const char *arg, struct bench_cfg *cfg)
{
	char buf[512];
	char *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	cfg->nsizes = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		size_t lo, hi;

		if (dash) {
			*dash = '\0';
			if (parse_size(tok, &lo) || parse_size(dash + 1, &hi) || lo == 0 || hi < lo)
				return -1;
		} else {
			if (parse_size(tok, &lo))
				return -1;
			hi = lo;
		}
		for (size_t s = lo; s <= hi; s *= 2) {
			if (s < BENCH_MIN_SIZE || s > (1u << 30) || cfg->nsizes >= 64)
				return -1;
			cfg->sizes[cfg->nsizes++] = s;
			if (s > SIZE_MAX / 2)
				break;
		}
	}
	return cfg->nsizes ? 0 : -1;
}

/* parse_ops -- a comma-separated list of operation names, or "all" */
static int parse_ops(const char *arg, unsigned *mask)
{
	char buf[256];
	char *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	*mask = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;

		if (strcmp(tok, "all") == 0) {
			*mask = (1u << BENCH_OP_COUNT) - 1;
			continue;
		}
		for (int op = 0; op < BENCH_OP_COUNT; op++) {
			if (strcmp(tok, op_names[op]) == 0) {
				*mask |= 1u << op;
				found = 1;
			}
		}
		if (!found)
			return -1;
	}
	return *mask ? 0 : -1;
}

/* parse_uint -- an unsigned in [lo, hi] */
static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* usage -- print the help text */
static void usage(FILE *f, const struct bench_transport *t)
{
	fprintf(f,
		"usage: %s server|client|both [options]\n"
		"  -a, --addr ADDR        address (server: to listen on; default 127.0.0.1)\n"
		"  -p, --port PORT        port (default 7471)\n"
		"  -o, --ops LIST         operations, comma-separated, or all (default):\n"
		"                         write, write-flush-v, write-flush-p, read, send-recv,\n"
		"                         atomic-flush, write-imm\n"
		"  -s, --sizes LIST       sizes: MIN-MAX for powers of two and/or a comma list,\n"
		"                         K/M suffixes (default 8-1M; at least %d)\n"
		"  -m, --mode lat|bw|both latency (queue depth 1) and/or bandwidth (default both)\n"
		"  -n, --iters N          latency samples per operation and size (default 1000)\n"
		"  -N, --bw-iters N       operations per bandwidth measurement (default 1000)\n"
		"  -W, --warmup N         untimed operations first (default: a tenth, at least 1)\n"
		"  -w, --window N         operations in flight for bandwidth (default 16, max %d)\n"
		"  -c, --completion poll|wait  busy-poll the CQ or block on it (default poll)\n"
		"  -C, --server-completion poll|wait|fd  the server's (default: as -c); fd:\n"
		"                         it sleeps in poll() on its CQ's descriptor where the\n"
		"                         tool has one (rpma-bench), else as wait\n"
		"  -l, --label TEXT       a label for the machine-readable rows\n"
		"      --csv FILE         append CSV rows to FILE ('-' for stdout)\n"
		"      --json FILE        append JSON lines to FILE ('-' for stdout)\n"
		"  -q, --quiet            no progress on stderr\n"
		"  -t, --timeout SEC      give up after SEC seconds (default: never)\n"
		"      --loop             server: serve clients one after another, forever\n"
		"      --no-pmem          server: do not claim direct write to persistence\n"
		"  -h, --help\n",
		t->tool, BENCH_MIN_SIZE, BENCH_MAX_WINDOW);
	if (t->extra_usage)
		fputs(t->extra_usage, f);
}

enum { OPT_CSV = 1000, OPT_JSON, OPT_LOOP, OPT_NO_PMEM, OPT_NO_PROGRESS_THREAD };

/* parse_args -- fill cfg from argv; -1 on a bad command line, 1 for --help */
static int parse_args(int argc, char *argv[], const struct bench_transport *t,
		      struct bench_cfg *cfg)
{
	static const struct option longopts[] = {
		{"addr", required_argument, NULL, 'a'},
		{"port", required_argument, NULL, 'p'},
		{"ops", required_argument, NULL, 'o'},
		{"sizes", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"iters", required_argument, NULL, 'n'},
		{"bw-iters", required_argument, NULL, 'N'},
		{"warmup", required_argument, NULL, 'W'},
		{"window", required_argument, NULL, 'w'},
		{"completion", required_argument, NULL, 'c'},
		{"server-completion", required_argument, NULL, 'C'},
		{"label", required_argument, NULL, 'l'},
		{"quiet", no_argument, NULL, 'q'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"csv", required_argument, NULL, OPT_CSV},
		{"json", required_argument, NULL, OPT_JSON},
		{"loop", no_argument, NULL, OPT_LOOP},
		{"no-pmem", no_argument, NULL, OPT_NO_PMEM},
		{"no-progress-thread", no_argument, NULL, OPT_NO_PROGRESS_THREAD},
		{NULL, 0, NULL, 0},
	};
	unsigned u;
	int c;

	memset(cfg, 0, sizeof(*cfg));
	cfg->addr = "127.0.0.1";
	cfg->port = "7471";
	cfg->ops = (1u << BENCH_OP_COUNT) - 1;
	cfg->lat_iters = 1000;
	cfg->bw_iters = 1000;
	cfg->window = 16;
	cfg->modes = BENCH_MODE_LAT | BENCH_MODE_BW;
	cfg->label = "";
	cfg->server_block = -1;
	if (parse_sizes("8-1M", cfg))
		return -1;

	if (argc < 2) {
		usage(stderr, t);
		return -1;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout, t);
		return 1;
	}
	if (strcmp(argv[1], "server") == 0)
		cfg->role = BENCH_ROLE_SERVER;
	else if (strcmp(argv[1], "client") == 0)
		cfg->role = BENCH_ROLE_CLIENT;
	else if (strcmp(argv[1], "both") == 0)
		cfg->role = BENCH_ROLE_BOTH;
	else {
		bench_log("unknown role '%s' (server, client or both)", argv[1]);
		return -1;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "a:p:o:s:m:n:N:W:w:c:C:l:qt:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'a':
			cfg->addr = optarg;
			break;
		case 'p':
			if (parse_uint(optarg, 1, 65535, &u)) {
				bench_log("bad port '%s'", optarg);
				return -1;
			}
			cfg->port = optarg;
			break;
		case 'o':
			if (parse_ops(optarg, &cfg->ops)) {
				bench_log("bad operation list '%s'", optarg);
				return -1;
			}
			break;
		case 's':
			if (parse_sizes(optarg, cfg)) {
				bench_log(
					"bad size list '%s' (e.g. 8-1M or 8,64,4K; %d B to 1 GiB)",
					optarg, BENCH_MIN_SIZE);
				return -1;
			}
			break;
		case 'm':
			if (strcmp(optarg, "lat") == 0)
				cfg->modes = BENCH_MODE_LAT;
			else if (strcmp(optarg, "bw") == 0)
				cfg->modes = BENCH_MODE_BW;
			else if (strcmp(optarg, "both") == 0)
				cfg->modes = BENCH_MODE_LAT | BENCH_MODE_BW;
			else {
				bench_log("bad mode '%s' (lat, bw or both)", optarg);
				return -1;
			}
			break;
		case 'n':
		case 'N':
		case 'W':
			if (parse_uint(optarg, c == 'W' ? 0 : 1, 100000000, &u)) {
				bench_log("bad count '%s'", optarg);
				return -1;
			}
			if (c == 'n')
				cfg->lat_iters = u;
			else if (c == 'N')
				cfg->bw_iters = u;
			else
				cfg->warmup = u;
			break;
		case 'w':
			if (parse_uint(optarg, 1, BENCH_MAX_WINDOW, &cfg->window)) {
				bench_log("bad window '%s' (1..%d)", optarg, BENCH_MAX_WINDOW);
				return -1;
			}
			break;
		case 'C':
			if (strcmp(optarg, "poll") == 0)
				cfg->server_block = 0;
			else if (strcmp(optarg, "wait") == 0)
				cfg->server_block = 1;
			else if (strcmp(optarg, "fd") == 0) {
				cfg->server_block = 1;
				cfg->server_fd = true;
			} else {
				bench_log("bad completion mode '%s' (poll, wait or fd)", optarg);
				return -1;
			}
			break;
		case 'c':
			if (strcmp(optarg, "poll") == 0)
				cfg->block = false;
			else if (strcmp(optarg, "wait") == 0)
				cfg->block = true;
			else {
				bench_log("bad completion mode '%s' (poll or wait)", optarg);
				return -1;
			}
			break;
		case 'l':
			cfg->label = optarg;
			break;
		case 'q':
			cfg->quiet = true;
			break;
		case 't':
			if (parse_uint(optarg, 0, 1000000, &u)) {
				bench_log("bad timeout '%s'", optarg);
				return -1;
			}
			cfg->timeout_s = (int)u;
			break;
		case OPT_CSV:
			cfg->csv_path = optarg;
			break;
		case OPT_JSON:
			cfg->json_path = optarg;
			break;
		case OPT_LOOP:
			cfg->loop = true;
			break;
		case OPT_NO_PMEM:
			cfg->no_pmem = true;
			break;
		case OPT_NO_PROGRESS_THREAD:
			cfg->no_progress_thread = true;
			break;
		case 'h':
			usage(stdout, t);
			return 1;
		default:
			usage(stderr, t);
			return -1;
		}
	}
	if (optind != argc) {
		bench_log("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (cfg->role == BENCH_ROLE_SERVER && cfg->server_block >= 0)
		cfg->block = cfg->server_block;
	cfg->max_size = BENCH_MIN_SIZE;
	for (unsigned i = 0; i < cfg->nsizes; i++)
		if (cfg->sizes[i] > cfg->max_size)
			cfg->max_size = cfg->sizes[i];
	return 0;
}

/* -------------------------------------------------------------- results */

struct result {
	enum bench_op op;
	int mode;
	size_t size;
	unsigned iters;
	double p50, p99, p999, avg; /* microseconds; NAN when not measured */
	double ops_s, mib_s;
	const char *status; /* "ok", "nosupp" */
};

struct output {
	const struct bench_transport *t;
	const struct bench_cfg *cfg;
	FILE *csv, *json;
	bool csv_close, json_close;
};

/* open_out -- open a machine-readable output ("-" is stdout) */
static FILE *open_out(const char *path, bool *close_it)
{
	FILE *f;

	*close_it = false;
	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "a");
	if (f == NULL) {
		bench_log("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	*close_it = true;
	return f;
}

/* fmt_us -- a latency for the human table ("-" when not measured) */
static const char *fmt_us(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", v);
	return buf;
}

/* json_num -- a number for JSON (null when not measured) */
static const char *json_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "null");
	else
		snprintf(buf, len, "%.3f", v);
	return buf;
}

/* csv_num -- a number for CSV (empty when not measured) */
static const char *csv_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		buf[0] = '\0';
	else
		snprintf(buf, len, "%.3f", v);
	return buf;
}

/* out_header -- the table header (and the CSV header when the file is new) */
static void out_header(struct output *o)
{
	const struct bench_cfg *cfg = o->cfg;

	printf("# %s: %s; completion=%s%s window=%u lat-iters=%u bw-iters=%u%s%s\n", o->t->tool,
	       o->t->describe(), cfg->block ? "wait" : "poll",
	       cfg->server_block < 0 ? ""
	       : cfg->server_fd	     ? " server=fd"
	       : cfg->server_block   ? " server=wait"
				     : " server=poll",
	       cfg->window, cfg->lat_iters, cfg->bw_iters, *cfg->label ? " label=" : "",
	       cfg->label);
	printf("%-14s %-4s %8s %9s %9s %9s %9s %9s %12s %10s\n", "#op", "mode", "bytes", "iters",
	       "p50[us]", "p99[us]", "p99.9[us]", "avg[us]", "ops/s", "MiB/s");
	fflush(stdout);
	if (o->csv && (o->csv == stdout || ftell(o->csv) == 0))
		fprintf(o->csv, "tool,label,transport,op,mode,completion,window,bytes,iters,"
				"p50_us,p99_us,p999_us,avg_us,ops_per_s,mib_per_s,status\n");
}

/* out_row -- one result in every output */
static void out_row(struct output *o, const struct result *r)
{
	const struct bench_cfg *cfg = o->cfg;
	const char *mode = r->mode == BENCH_MODE_LAT ? "lat" : "bw";
	const char *compl = cfg->block ? "wait" : "poll";
	char a[32], b[32], c[32], d[32];

	if (strcmp(r->status, "ok") == 0)
		printf("%-14s %-4s %8zu %9u %9s %9s %9s %9s %12.1f %10.2f\n", bench_op_name(r->op),
		       mode, r->size, r->iters, fmt_us(a, sizeof(a), r->p50),
		       fmt_us(b, sizeof(b), r->p99), fmt_us(c, sizeof(c), r->p999),
		       fmt_us(d, sizeof(d), r->avg), r->ops_s, r->mib_s);
	else
		printf("%-14s %-4s %8zu   (%s)\n", bench_op_name(r->op), mode, r->size,
		       strcmp(r->status, "nosupp") == 0 ? "not supported here" : r->status);
	fflush(stdout);
	if (o->csv) {
		fprintf(o->csv, "%s,%s,%s,%s,%s,%s,%u,%zu,%u,", o->t->tool, cfg->label,
			o->t->describe(), bench_op_name(r->op), mode, compl, cfg->window, r->size,
			r->iters);
		fprintf(o->csv, "%s,", csv_num(a, sizeof(a), r->p50));
		fprintf(o->csv, "%s,", csv_num(a, sizeof(a), r->p99));
		fprintf(o->csv, "%s,", csv_num(a, sizeof(a), r->p999));
		fprintf(o->csv, "%s,", csv_num(a, sizeof(a), r->avg));
		fprintf(o->csv, "%.1f,%.3f,%s\n", r->ops_s, r->mib_s, r->status);
		fflush(o->csv);
	}
	if (o->json) {
		fprintf(o->json,
			"{\"tool\":\"%s\",\"label\":\"%s\",\"transport\":\"%s\",\"op\":\"%s\","
			"\"mode\":\"%s\",\"completion\":\"%s\",\"window\":%u,\"bytes\":%zu,"
			"\"iters\":%u,",
			o->t->tool, cfg->label, o->t->describe(), bench_op_name(r->op), mode, compl,
			cfg->window, r->size, r->iters);
		fprintf(o->json, "\"p50_us\":%s,", json_num(a, sizeof(a), r->p50));
		fprintf(o->json, "\"p99_us\":%s,", json_num(a, sizeof(a), r->p99));
		fprintf(o->json, "\"p999_us\":%s,", json_num(a, sizeof(a), r->p999));
		fprintf(o->json, "\"avg_us\":%s,", json_num(a, sizeof(a), r->avg));
		fprintf(o->json, "\"ops_per_s\":%.1f,\"mib_per_s\":%.3f,\"status\":\"%s\"}\n",
			r->ops_s, r->mib_s, r->status);
		fflush(o->json);
	}
}

/* cmp_u64 -- qsort order of uint64_t */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* percentile -- the nearest-rank percentile q (0..1) of sorted samples, in us */
static double percentile(const uint64_t *v, unsigned n, double q)
{
	size_t idx = (size_t)ceil(q * n);

	if (idx > 0)
		idx--;
	if (idx >= n)
		idx = n - 1;
	return (double)v[idx] / 1000.0;
}

/* ------------------------------------------------------------- progress */

struct progress {
	bool quiet;
	const char *what;
	size_t size;
	unsigned total;
	uint64_t start, last;
};

/* progress_start -- begin a measurement */
static void progress_start(struct progress *p, const char *what, size_t size, unsigned total)
{
	p->what = what;
	p->size = size;
	p->total = total;
	p->start = p->last = now_ns();
}

/* progress_tick -- report on stderr once a second when a measurement runs over 2 s */
static inline void progress_tick(struct progress *p, unsigned done)
{
	uint64_t t;

	if (p->quiet || (done & 255) != 0)
		return;
	t = now_ns();
	if (t - p->start < 2000000000ull || t - p->last < 1000000000ull)
		return;
	p->last = t;
	fprintf(stderr, "%s: %s %zu B: %u/%u (%.0f%%), %.1f s\n", tool_name, p->what, p->size, done,
		p->total, 100.0 * done / p->total, (double)(t - p->start) / 1e9);
}

/* ---------------------------------------------------------- client loops */

struct client {
	struct bench_conn *c;
	const struct bench_cfg *cfg;
	struct progress prog;
	int last_status; /* the status of the last failed completion */
};

/* set_flag -- write a message flag at the start of send slot 'slot' */
static void set_flag(struct bench_conn *c, unsigned slot, uint32_t flag)
{
	memcpy(c->sbuf + (size_t)slot * c->slot_size, &flag, sizeof(flag));
}

/* reap -- take completions (waiting for at least one); -1 on any failure */
static int reap(struct client *cl, struct bench_wc *wc, int *got)
{
	struct bench_conn *c = cl->c;
	int ret;

	do {
		ret = c->x->poll(c, wc, WC_BATCH, got, cl->cfg->block);
		if (ret)
			return BENCH_E_FAIL;
	} while (*got == 0);
	for (int i = 0; i < *got; i++) {
		if (!wc[i].ok) {
			bench_log("completion error: status %d (context kind %u slot %u)",
				  wc[i].status, BENCH_CTX_KIND(wc[i].ctx),
				  BENCH_CTX_SLOT(wc[i].ctx));
			return BENCH_E_FAIL;
		}
	}
	return 0;
}

/* post_unit -- post one one-sided unit of op (its last part signaled with ctx) */
static int post_unit(struct client *cl, enum bench_op op, size_t size, uint64_t ctx)
{
	struct bench_conn *c = cl->c;
	const struct bench_xops *x = c->x;
	int ret;

	switch (op) {
	case BENCH_OP_WRITE:
		return x->write(c, size, true, ctx);
	case BENCH_OP_READ:
		return x->read(c, size, true, ctx);
	case BENCH_OP_WRITE_FLUSH_V:
	case BENCH_OP_WRITE_FLUSH_P:
		ret = x->write(c, size, false, 0);
		if (ret)
			return ret;
		return x->flush(c, size, op == BENCH_OP_WRITE_FLUSH_P, ctx);
	case BENCH_OP_ATOMIC_FLUSH:
		ret = x->atomic_write(c, false, 0);
		if (ret)
			return ret;
		return x->flush(c, 8, false, ctx);
	default:
		return BENCH_E_FAIL;
	}
}

/*
 * one_sided -- run n units of op; window 1 measures each unit's latency into
 * lat[] (when lat != NULL), a larger window keeps that many units in flight
 */
static int one_sided(struct client *cl, enum bench_op op, size_t size, unsigned n, unsigned window,
		     uint64_t *lat, struct progress *prog)
{
	struct bench_wc wc[WC_BATCH];
	unsigned posted = 0, done = 0;
	int got, ret;

	if (window == 1) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t t0 = now_ns();

			ret = post_unit(cl, op, size, BENCH_CTX(BENCH_CTX_OP, i));
			if (ret)
				return ret;
			if (reap(cl, wc, &got))
				return BENCH_E_FAIL;
			if (got != 1 || wc[0].ctx != BENCH_CTX(BENCH_CTX_OP, i)) {
				bench_log("unexpected completion (%d, context %#" PRIx64 ")", got,
					  wc[0].ctx);
				return BENCH_E_FAIL;
			}
			if (lat)
				lat[i] = now_ns() - t0;
			if (prog)
				progress_tick(prog, i);
		}
		return 0;
	}
	while (done < n) {
		while (posted < n && posted - done < window) {
			ret = post_unit(cl, op, size, BENCH_CTX(BENCH_CTX_OP, posted % window));
			if (ret) {
				if (ret == BENCH_E_NOSUPP && posted != done)
					ret = BENCH_E_FAIL; /* only the first post may say so */
				return ret;
			}
			posted++;
		}
		if (reap(cl, wc, &got))
			return BENCH_E_FAIL;
		for (int i = 0; i < got; i++) {
			if (BENCH_CTX_KIND(wc[i].ctx) != BENCH_CTX_OP) {
				bench_log("unexpected completion (context %#" PRIx64 ")",
					  wc[i].ctx);
				return BENCH_E_FAIL;
			}
		}
		done += (unsigned)got;
		if (prog)
			progress_tick(prog, done & ~255u);
	}
	return 0;
}

/* post_msg -- post one message of op: a send from slot, or a write with immediate */
static int post_msg(struct client *cl, enum bench_op op, size_t size, unsigned slot, uint32_t flag,
		    bool signaled, uint64_t ctx)
{
	struct bench_conn *c = cl->c;

	if (op == BENCH_OP_WRITE_IMM)
		return c->x->write_imm(c, size, flag, signaled, ctx);
	if (slot == 1)
		set_flag(c, 1, flag);
	return c->x->send(c, slot, size, signaled, ctx);
}

/*
 * messages -- n batches of 'batch' messages of op; the last message of a
 * batch asks for a reply (an echo of the same size for a single send, an
 * 8-byte acknowledgement otherwise) and the batch ends when both the reply
 * and the last message's own completion are in; lat[] gets each batch's time
 */
static int messages(struct client *cl, enum bench_op op, size_t size, unsigned n, unsigned batch,
		    uint64_t *lat, struct progress *prog)
{
	struct bench_conn *c = cl->c;
	struct bench_wc wc[WC_BATCH];
	uint32_t flag = (op == BENCH_OP_SEND_RECV && batch == 1) ? BENCH_FLAG_ECHO : BENCH_FLAG_ACK;
	int got, ret;

	for (unsigned i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		bool sent = false, replied = false;

		ret = c->x->recv(c, 0, BENCH_CTX(BENCH_CTX_RECV, 0));
		if (ret)
			return ret == BENCH_E_NOSUPP ? BENCH_E_FAIL : ret;
		for (unsigned j = 0; j + 1 < batch; j++) {
			ret = post_msg(cl, op, size, 0, BENCH_FLAG_NONE, false, 0);
			if (ret)
				return (ret == BENCH_E_NOSUPP && (i || j)) ? BENCH_E_FAIL : ret;
		}
		ret = post_msg(cl, op, size, 1, flag, true, BENCH_CTX(BENCH_CTX_SEND, 1));
		if (ret)
			return (ret == BENCH_E_NOSUPP && (i || batch > 1)) ? BENCH_E_FAIL : ret;
		while (!sent || !replied) {
			if (reap(cl, wc, &got))
				return BENCH_E_FAIL;
			for (int k = 0; k < got; k++) {
				unsigned kind = BENCH_CTX_KIND(wc[k].ctx);

				if (kind == BENCH_CTX_SEND)
					sent = true;
				else if (kind == BENCH_CTX_RECV)
					replied = true;
				else {
					bench_log("unexpected completion (context %#" PRIx64 ")",
						  wc[k].ctx);
					return BENCH_E_FAIL;
				}
			}
		}
		if (lat)
			lat[i] = now_ns() - t0;
		if (prog)
			progress_tick(prog, i);
	}
	return 0;
}

/* run_one -- warm up, then measure op at size in mode; fills r */
static int run_one(struct client *cl, enum bench_op op, size_t size, int mode, uint64_t *lat,
		   struct result *r)
{
	const struct bench_cfg *cfg = cl->cfg;
	bool msg = op == BENCH_OP_SEND_RECV || op == BENCH_OP_WRITE_IMM;
	unsigned n = mode == BENCH_MODE_LAT ? cfg->lat_iters : cfg->bw_iters;
	unsigned window = mode == BENCH_MODE_LAT ? 1 : cfg->window;
	unsigned warm = cfg->warmup ? cfg->warmup : (n / 10 ? n / 10 : 1);
	unsigned units, per_unit = 1;
	uint64_t t0, t1;
	int ret;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->mode = mode;
	r->size = size;
	r->p50 = r->p99 = r->p999 = r->avg = NAN;
	r->status = "ok";

	if (msg && mode == BENCH_MODE_BW) {
		/* n messages in batches of the window */
		per_unit = window;
		units = (n + window - 1) / window;
		warm = (warm + window - 1) / window;
	} else {
		units = n;
	}
	if (msg)
		ret = messages(cl, op, size, warm, per_unit, NULL, NULL);
	else
		ret = one_sided(cl, op, size, warm, window, NULL, NULL);
	if (ret == BENCH_E_NOSUPP) {
		r->status = "nosupp";
		return 0;
	}
	if (ret)
		return ret;

	progress_start(&cl->prog, bench_op_name(op), size, units);
	t0 = now_ns();
	if (msg)
		ret = messages(cl, op, size, units, per_unit, mode == BENCH_MODE_LAT ? lat : NULL,
			       &cl->prog);
	else
		ret = one_sided(cl, op, size, units, window, mode == BENCH_MODE_LAT ? lat : NULL,
				&cl->prog);
	t1 = now_ns();
	if (ret)
		return ret == BENCH_E_NOSUPP ? BENCH_E_FAIL : ret;

	r->iters = units * per_unit;
	r->ops_s = (double)r->iters / ((double)(t1 - t0) / 1e9);
	r->mib_s = r->ops_s * (double)size / (1024.0 * 1024.0);
	if (mode == BENCH_MODE_LAT) {
		double sum = 0;

		for (unsigned i = 0; i < units; i++)
			sum += (double)lat[i];
		qsort(lat, units, sizeof(*lat), cmp_u64);
		r->p50 = percentile(lat, units, 0.50);
		r->p99 = percentile(lat, units, 0.99);
		r->p999 = percentile(lat, units, 0.999);
		r->avg = sum / units / 1000.0;
	}
	return 0;
}

/* say_bye -- tell the server the run is over and wait for the send to complete */
static int say_bye(struct client *cl)
{
	struct bench_wc wc[WC_BATCH];
	int got;

	set_flag(cl->c, 1, BENCH_FLAG_BYE);
	if (cl->c->x->send(cl->c, 1, BENCH_MIN_SIZE, true, BENCH_CTX(BENCH_CTX_SEND, 1)))
		return BENCH_E_FAIL;
	for (;;) {
		if (reap(cl, wc, &got))
			return BENCH_E_FAIL;
		for (int i = 0; i < got; i++)
			if (BENCH_CTX_KIND(wc[i].ctx) == BENCH_CTX_SEND)
				return 0;
	}
}

/* run_client -- connect, run every operation, size and mode, print the results */
static int run_client(const struct bench_cfg *cfg, const struct bench_transport *t)
{
	struct output o = {.t = t, .cfg = cfg};
	struct client cl = {.cfg = cfg};
	uint8_t hello[BENCH_HELLO_SIZE] = {0};
	uint64_t *lat;
	int rc = 1;

	lat = calloc(cfg->lat_iters, sizeof(*lat));
	if (lat == NULL) {
		bench_log("out of memory for %u latency samples", cfg->lat_iters);
		return 1;
	}
	if (cfg->csv_path && (o.csv = open_out(cfg->csv_path, &o.csv_close)) == NULL)
		goto out_free;
	if (cfg->json_path && (o.json = open_out(cfg->json_path, &o.json_close)) == NULL)
		goto out_files;

	put_u32(hello, BENCH_HELLO_MAGIC);
	put_u32(hello + 4, (uint32_t)cfg->max_size);
	put_u32(hello + 8, cfg->window);
	if (t->client_open(cfg, hello, sizeof(hello), &cl.c))
		goto out_files;
	cl.prog.quiet = cfg->quiet;

	out_header(&o);
	for (int op = 0; op < BENCH_OP_COUNT; op++) {
		if (!(cfg->ops & (1u << op)))
			continue;
		for (unsigned s = 0; s < cfg->nsizes; s++) {
			size_t size = op == BENCH_OP_ATOMIC_FLUSH ? 8 : cfg->sizes[s];

			for (int mode = BENCH_MODE_LAT; mode <= BENCH_MODE_BW; mode <<= 1) {
				struct result r;

				if (!(cfg->modes & mode))
					continue;
				if (run_one(&cl, (enum bench_op)op, size, mode, lat, &r)) {
					bench_log("%s %zu B (%s) failed", bench_op_name(op), size,
						  mode == BENCH_MODE_LAT ? "lat" : "bw");
					goto out_conn;
				}
				out_row(&o, &r);
				if (strcmp(r.status, "ok") != 0)
					break;
			}
			if (op == BENCH_OP_ATOMIC_FLUSH)
				break; /* one size only */
		}
	}
	if (say_bye(&cl))
		goto out_conn;
	rc = 0;
out_conn:
	t->client_close(cl.c);
out_files:
	if (o.csv_close)
		fclose(o.csv);
	if (o.json_close)
		fclose(o.json);
out_free:
	free(lat);
	return rc;
}

/* ---------------------------------------------------------------- server */

/* serve -- answer the client's messages until it says goodbye or goes away */
static int serve(struct bench_conn *c, const struct bench_cfg *cfg)
{
	struct bench_wc wc[WC_BATCH];
	int got, ret;

	for (;;) {
		ret = c->x->poll(c, wc, WC_BATCH, &got, cfg->block);
		if (ret == BENCH_E_CLOSED) {
			bench_log("server: the client went away without saying goodbye");
			return 0;
		}
		if (ret)
			return ret;
		for (int i = 0; i < got; i++) {
			unsigned kind = BENCH_CTX_KIND(wc[i].ctx);
			uint32_t slot = BENCH_CTX_SLOT(wc[i].ctx), flag;

			if (!wc[i].ok) {
				bench_log("server: completion error: status %d (context %#" PRIx64
					  ")",
					  wc[i].status, wc[i].ctx);
				return BENCH_E_FAIL;
			}
			if (kind == BENCH_CTX_SEND)
				continue;
			if (kind != BENCH_CTX_RECV && !wc[i].has_imm) {
				bench_log("server: unexpected completion (context %#" PRIx64 ")",
					  wc[i].ctx);
				return BENCH_E_FAIL;
			}
			if (kind != BENCH_CTX_RECV)
				slot = SLOT_NONE;
			if (slot != SLOT_NONE && slot >= c->nrecv) {
				bench_log("server: receive completion for slot %" PRIu32, slot);
				return BENCH_E_FAIL;
			}
			if (wc[i].has_imm)
				flag = wc[i].imm;
			else
				memcpy(&flag, c->rbuf + (size_t)slot * c->slot_size, sizeof(flag));
			if (flag == BENCH_FLAG_BYE)
				return 0;
			if (slot != SLOT_NONE &&
			    c->x->recv(c, slot, BENCH_CTX(BENCH_CTX_RECV, slot)))
				return BENCH_E_FAIL;
			if (flag == BENCH_FLAG_ECHO || flag == BENCH_FLAG_ACK) {
				size_t len = flag == BENCH_FLAG_ACK ? BENCH_MIN_SIZE : wc[i].len;

				if (len < BENCH_MIN_SIZE)
					len = BENCH_MIN_SIZE;
				if (len > c->slot_size)
					len = c->slot_size;
				if (c->x->send(c, 0, len, true, BENCH_CTX(BENCH_CTX_SEND, 0)))
					return BENCH_E_FAIL;
			} else if (flag != BENCH_FLAG_NONE) {
				bench_log("server: unknown message flag %#" PRIx32, flag);
				return BENCH_E_FAIL;
			}
		}
	}
}

/* run_server -- listen, then serve one client (or clients forever with --loop) */
static int run_server(const struct bench_cfg *cfg, const struct bench_transport *t, int ready_fd)
{
	void *listener;
	int rc = 0;

	if (t->server_listen(cfg, &listener))
		return 1;
	if (ready_fd >= 0) {
		if (write(ready_fd, "R", 1) != 1)
			bench_log("server: cannot signal readiness: %s", strerror(errno));
		close(ready_fd);
	} else {
		bench_log("server: %s, listening on %s:%s", t->describe(), cfg->addr, cfg->port);
	}
	do {
		struct bench_conn *c;

		if (t->server_accept(listener, cfg, &c)) {
			rc = 1;
			continue;
		}
		if (serve(c, cfg))
			rc = 1;
		t->server_close(c);
	} while (cfg->loop);
	t->server_shutdown(listener);
	return rc;
}

/* ----------------------------------------------------------------- both */

/* run_both -- fork a server on the same address, then run the client against it */
static int run_both(struct bench_cfg *cfg, const struct bench_transport *t)
{
	int pfd[2], status, rc;
	pid_t pid;
	char c;
	struct pollfd p;

	if (pipe(pfd)) {
		bench_log("pipe: %s", strerror(errno));
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		bench_log("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return 1;
	}
	if (pid == 0) {
		struct bench_cfg scfg = *cfg;

		close(pfd[0]);
		scfg.role = BENCH_ROLE_SERVER;
		scfg.loop = false;
		if (scfg.server_block >= 0)
			scfg.block = scfg.server_block;
		fflush(NULL);
		_exit(run_server(&scfg, t, pfd[1]));
	}
	close(pfd[1]);
	p.fd = pfd[0];
	p.events = POLLIN;
	if (poll(&p, 1, 60000) != 1 || read(pfd[0], &c, 1) != 1) {
		bench_log("the server did not start listening");
		close(pfd[0]);
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		return 1;
	}
	close(pfd[0]);
	cfg->role = BENCH_ROLE_CLIENT;
	rc = run_client(cfg, t);

	/* the server ends after the client's goodbye; give it 20 s */
	for (int i = 0; i < 200; i++) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid) {
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				bench_log("the server failed (status %#x)", status);
				rc = 1;
			}
			return rc;
		}
		usleep(100000);
	}
	bench_log("the server did not exit: killing it");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 1;
}

/* on_alarm -- the --timeout expired */
static void on_alarm(int sig)
{
	static const char msg[] = "benchmark: --timeout expired\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(124);
}

/* bench_main -- parse argv, run the role asked for, return the exit status */
int bench_main(int argc, char *argv[], const struct bench_transport *t)
{
	struct bench_cfg cfg;
	int ret;

	tool_name = t->tool;
	ret = parse_args(argc, argv, t, &cfg);
	if (ret)
		return ret > 0 ? 0 : 2;
	signal(SIGPIPE, SIG_IGN);
	if (cfg.timeout_s > 0) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)cfg.timeout_s);
	}
	switch (cfg.role) {
	case BENCH_ROLE_SERVER:
		return run_server(&cfg, t, -1);
	case BENCH_ROLE_CLIENT:
		return run_client(&cfg, t);
	default:
		return run_both(&cfg, t);
	}
}
