/* SPDX-License-Identifier: BSD-3-Clause */
/* common.c -- helpers shared by the example programs (public API only) */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef EX_HAVE_PMEM2
#include <libpmem2.h>
#endif

#include "common.h"

static const char *Prog = "example";

/* ex_set_prog -- the name printed in front of every message */
void ex_set_prog(const char *prog)
{
	const char *slash = strrchr(prog, '/');
	Prog = slash ? slash + 1 : prog;
}

/* ex_msg -- print "<prog>: <message>" to stderr */
void ex_msg(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", Prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ex_fail -- print "<prog>: <what>: <reason>" for an error code */
void ex_fail(const char *what, int ret)
{
	if (ret == EX_E_FAIL)
		ex_msg("%s failed", what);
	else
		ex_msg("%s: %s (%d)", what, rpma_err_2str(ret), ret);
}

/* ex_usage -- check argc against [min, max] and print the usage line when it is wrong */
int ex_usage(int argc, int min, int max, const char *usage)
{
	if (argc >= min && argc <= max)
		return 0;
	fprintf(stderr, "usage: %s %s\n", Prog, usage);
	return EX_E_FAIL;
}

/* ex_parse_count -- a positive decimal number from a command line argument */
int ex_parse_count(const char *arg, const char *name, unsigned *count)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end != '\0' || v == 0 || v > 1000000) {
		ex_msg("%s: '%s' is not a number between 1 and 1000000", name, arg);
		return EX_E_FAIL;
	}
	*count = (unsigned)v;
	return 0;
}

/* ex_peer_open -- find the device serving addr and open a peer on it */
int ex_peer_open(const char *addr, bool server, struct rpma_peer **peer_ptr)
{
	struct ibv_context *dev = NULL;
	int ret = rpma_utils_get_ibv_context(
		addr, server ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE, &dev);
	if (ret) {
		ex_fail("rpma_utils_get_ibv_context", ret);
		return ret;
	}
	ret = rpma_peer_new(dev, peer_ptr);
	if (ret)
		ex_fail("rpma_peer_new", ret);
	return ret;
}

/* ex_listen -- listen on addr:port and announce it on stdout */
int ex_listen(struct rpma_peer *peer, const char *addr, const char *port, struct rpma_ep **ep_ptr)
{
	int ret = rpma_ep_listen(peer, addr, port, ep_ptr);
	if (ret) {
		ex_fail("rpma_ep_listen", ret);
		return ret;
	}
	/* the test runner starts the clients when it sees this line */
	printf("listening on %s:%s\n", addr, port);
	fflush(stdout);
	return 0;
}

/* ex_accept -- take the next request, post a receive if asked, accept and wait for the peer */
int ex_accept(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, struct rpma_mr_local *recv_mr,
	      size_t recv_offset, size_t recv_len, const struct rpma_conn_private_data *pdata,
	      struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		ex_fail("rpma_ep_next_conn_req", ret);
		return ret;
	}
	if (recv_mr) {
		/* a receive posted now is ready before the client can send anything */
		ret = rpma_conn_req_recv(req, recv_mr, recv_offset, recv_len, NULL);
		if (ret) {
			ex_fail("rpma_conn_req_recv", ret);
			(void)rpma_conn_req_delete(&req);
			return ret;
		}
	}
	/* rpma_conn_req_connect() consumes the request whatever happens */
	ret = rpma_conn_req_connect(&req, pdata, &conn);
	if (ret) {
		ex_fail("rpma_conn_req_connect", ret);
		return ret;
	}
	ret = ex_wait_event(conn, RPMA_CONN_ESTABLISHED);
	if (ret) {
		(void)rpma_conn_delete(&conn);
		return ret;
	}
	*conn_ptr = conn;
	return 0;
}

/* ex_connect -- request a connection to addr:port and wait until it is established */
int ex_connect(struct rpma_peer *peer, const char *addr, const char *port,
	       const struct rpma_conn_cfg *cfg, struct rpma_mr_local *recv_mr, size_t recv_offset,
	       size_t recv_len, const struct rpma_conn_private_data *pdata,
	       struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_cfg *own = NULL;
	int ret;
	if (cfg == NULL) {
		/* the defaults, but a patient timeout (EX_CONNECT_TIMEOUT_MS) */
		ret = rpma_conn_cfg_new(&own);
		if (ret == 0)
			ret = rpma_conn_cfg_set_timeout(own, EX_CONNECT_TIMEOUT_MS);
		if (ret) {
			ex_fail("rpma_conn_cfg_new/set_timeout", ret);
			(void)rpma_conn_cfg_delete(&own);
			return ret;
		}
		cfg = own;
	}
	ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (own)
		(void)rpma_conn_cfg_delete(&own); /* the request keeps what it needs */
	if (ret) {
		ex_fail("rpma_conn_req_new", ret);
		return ret;
	}
	if (recv_mr) {
		ret = rpma_conn_req_recv(req, recv_mr, recv_offset, recv_len, NULL);
		if (ret) {
			ex_fail("rpma_conn_req_recv", ret);
			(void)rpma_conn_req_delete(&req);
			return ret;
		}
	}
	ret = rpma_conn_req_connect(&req, pdata, &conn);
	if (ret) {
		ex_fail("rpma_conn_req_connect", ret);
		return ret;
	}
	ret = ex_wait_event(conn, RPMA_CONN_ESTABLISHED);
	if (ret) {
		(void)rpma_conn_delete(&conn);
		return ret;
	}
	*conn_ptr = conn;
	return 0;
}

/* ex_wait_event -- take the next connection event and insist that it is the expected one */
int ex_wait_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		ex_fail("rpma_conn_next_event", ret);
		return ret;
	}
	if (event != expected) {
		ex_msg("expected the event '%s', got '%s'", rpma_utils_conn_event_2str(expected),
		       rpma_utils_conn_event_2str(event));
		return EX_E_FAIL;
	}
	return 0;
}

/* ex_await_close -- wait for the peer to disconnect, then disconnect and delete */
int ex_await_close(struct rpma_conn **conn_ptr)
{
	if (*conn_ptr == NULL)
		return 0;
	int ret = ex_wait_event(*conn_ptr, RPMA_CONN_CLOSED);
	int ret2 = rpma_conn_disconnect(*conn_ptr);
	if (ret2)
		ex_fail("rpma_conn_disconnect", ret2);
	int ret3 = rpma_conn_delete(conn_ptr);
	if (ret3)
		ex_fail("rpma_conn_delete", ret3);
	return ret ? ret : ret2 ? ret2 : ret3;
}

/* ex_close -- disconnect, wait until the connection is closed and delete it */
int ex_close(struct rpma_conn **conn_ptr)
{
	if (*conn_ptr == NULL)
		return 0;
	int ret = rpma_conn_disconnect(*conn_ptr);
	if (ret)
		ex_fail("rpma_conn_disconnect", ret);
	else
		ret = ex_wait_event(*conn_ptr, RPMA_CONN_CLOSED);
	int ret2 = rpma_conn_delete(conn_ptr);
	if (ret2)
		ex_fail("rpma_conn_delete", ret2);
	return ret ? ret : ret2;
}

/* ex_wait_wc -- block until one completion is available on cq and take it */
int ex_wait_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		if (ret == 0)
			return 0;
		if (ret != RPMA_E_NO_COMPLETION) {
			ex_fail("rpma_cq_get_wc", ret);
			return ret;
		}
		/* nothing yet: sleep on the CQ's channel (it may wake up with nothing, too) */
		ret = rpma_cq_wait(cq);
		if (ret) {
			ex_fail("rpma_cq_wait", ret);
			return ret;
		}
	}
}

/* ex_opcode_str -- a readable name of a completion opcode */
const char *ex_opcode_str(enum ibv_wc_opcode opcode)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return "send";
	case IBV_WC_RDMA_WRITE:
		return "write";
	case IBV_WC_RDMA_READ:
		return "read";
	case IBV_WC_RECV:
		return "receive";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "receive (write with immediate)";
	default:
		return "other";
	}
}

/* ex_status_str -- a readable completion status (without needing libibverbs itself) */
static const char *ex_status_str(enum ibv_wc_status status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return "success";
	case IBV_WC_LOC_LEN_ERR:
		return "local length error";
	case IBV_WC_LOC_PROT_ERR:
		return "local protection error";
	case IBV_WC_WR_FLUSH_ERR:
		return "flushed (the connection is going down)";
	case IBV_WC_REM_ACCESS_ERR:
		return "remote access error";
	case IBV_WC_REM_OP_ERR:
		return "remote operation error";
	case IBV_WC_RETRY_EXC_ERR:
		return "transport retries exceeded";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return "no receive posted at the peer (RNR retries exceeded)";
	default:
		return "error";
	}
}

/* ex_check_wc -- status, opcode and (optionally) context of a completion */
int ex_check_wc(const struct ibv_wc *wc, int opcode, const void *op_context)
{
	if (wc->status != IBV_WC_SUCCESS) {
		ex_msg("completion failed: %s (status %d, opcode %d)", ex_status_str(wc->status),
		       (int)wc->status, (int)wc->opcode);
		return EX_E_FAIL;
	}
	if (opcode != EX_ANY_OPCODE && (int)wc->opcode != opcode) {
		ex_msg("expected a %s completion, got %s (%d)",
		       ex_opcode_str((enum ibv_wc_opcode)opcode), ex_opcode_str(wc->opcode),
		       (int)wc->opcode);
		return EX_E_FAIL;
	}
	if (op_context && wc->wr_id != (uint64_t)(uintptr_t)op_context) {
		ex_msg("a %s completion with an unexpected context", ex_opcode_str(wc->opcode));
		return EX_E_FAIL;
	}
	return 0;
}

/* ex_expect_wc -- take one completion and check it */
int ex_expect_wc(struct rpma_cq *cq, int opcode, const void *op_context, struct ibv_wc *wc)
{
	struct ibv_wc local;
	if (wc == NULL)
		wc = &local;
	int ret = ex_wait_wc(cq, wc);
	if (ret)
		return ret;
	return ex_check_wc(wc, opcode, op_context);
}

/* ex_flush -- flush, falling back from persistence to visibility where refused */
int ex_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t offset, size_t len,
	     enum rpma_flush_type *type, int flags, const void *op_context)
{
	int ret = rpma_flush(conn, dst, offset, len, *type, flags, op_context);
	if (ret == RPMA_E_NOSUPP && *type == RPMA_FLUSH_TYPE_PERSISTENT) {
		printf("this connection cannot flush to persistence (RPMA_E_NOSUPP): "
		       "flushing to visibility\n");
		*type = RPMA_FLUSH_TYPE_VISIBILITY;
		ret = rpma_flush(conn, dst, offset, len, *type, flags, op_context);
	}
	if (ret)
		ex_fail("rpma_flush()", ret);
	return ret;
}

/* ex_wait_send -- wait for a send completion, keeping a receive that overtakes it */
int ex_wait_send(struct rpma_cq *cq, struct ibv_wc *early, bool *have_early)
{
	for (;;) {
		struct ibv_wc wc;
		int ret = ex_wait_wc(cq, &wc);
		if (ret)
			return ret;
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND)
			return 0;
		ret = ex_check_wc(&wc, IBV_WC_RECV, NULL);
		if (ret)
			return ret;
		if (*have_early) {
			ex_msg("two messages arrived while a send was in flight");
			return EX_E_FAIL;
		}
		*early = wc;
		*have_early = true;
	}
}

/* ex_pdata_pack -- serialise mr and pcfg (may be NULL) into pd */
int ex_pdata_pack(const struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
		  struct ex_pdata *pd, struct rpma_conn_private_data *out)
{
	size_t mr_size = 0, pcfg_size = 0;
	int ret;

	memset(pd, 0, sizeof(*pd));
	ret = rpma_mr_get_descriptor_size(mr, &mr_size);
	if (ret) {
		ex_fail("rpma_mr_get_descriptor_size", ret);
		return ret;
	}
	if (pcfg) {
		ret = rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size);
		if (ret) {
			ex_fail("rpma_peer_cfg_get_descriptor_size", ret);
			return ret;
		}
	}
	if (mr_size + pcfg_size > sizeof(pd->descriptors)) {
		ex_msg("descriptors of %zu + %zu bytes do not fit in the private data", mr_size,
		       pcfg_size);
		return EX_E_FAIL;
	}
	ret = rpma_mr_get_descriptor(mr, pd->descriptors);
	if (ret) {
		ex_fail("rpma_mr_get_descriptor", ret);
		return ret;
	}
	if (pcfg) {
		ret = rpma_peer_cfg_get_descriptor(pcfg, pd->descriptors + mr_size);
		if (ret) {
			ex_fail("rpma_peer_cfg_get_descriptor", ret);
			return ret;
		}
	}
	pd->mr_desc_size = (uint8_t)mr_size;
	pd->pcfg_desc_size = (uint8_t)pcfg_size;
	out->ptr = pd;
	out->len = (uint8_t)(2 + mr_size + pcfg_size);
	return 0;
}

/* ex_pdata_unpack -- rebuild the remote region (and peer configuration) from private data */
int ex_pdata_unpack(const struct rpma_conn_private_data *in, struct rpma_mr_remote **mr_ptr,
		    struct rpma_peer_cfg **pcfg_ptr)
{
	struct ex_pdata pd;
	struct rpma_mr_remote *mr = NULL;
	int ret;

	/* never trust the peer's sizes: they must describe bytes that really arrived */
	if (in->ptr == NULL || in->len < 2) {
		ex_msg("the peer sent no descriptors");
		return EX_E_FAIL;
	}
	memset(&pd, 0, sizeof(pd));
	memcpy(&pd, in->ptr, in->len < sizeof(pd) ? in->len : sizeof(pd));
	if ((size_t)pd.mr_desc_size + pd.pcfg_desc_size > (size_t)in->len - 2) {
		ex_msg("the peer's descriptor sizes (%u + %u) exceed its private data (%u bytes)",
		       pd.mr_desc_size, pd.pcfg_desc_size, in->len);
		return EX_E_FAIL;
	}
	ret = rpma_mr_remote_from_descriptor(pd.descriptors, pd.mr_desc_size, &mr);
	if (ret) {
		ex_fail("rpma_mr_remote_from_descriptor", ret);
		return ret;
	}
	if (pcfg_ptr) {
		*pcfg_ptr = NULL;
		if (pd.pcfg_desc_size) {
			ret = rpma_peer_cfg_from_descriptor(pd.descriptors + pd.mr_desc_size,
							    pd.pcfg_desc_size, pcfg_ptr);
			if (ret) {
				ex_fail("rpma_peer_cfg_from_descriptor", ret);
				(void)rpma_mr_remote_delete(&mr);
				return ret;
			}
		}
	}
	*mr_ptr = mr;
	return 0;
}

/* ex_fill -- a deterministic byte pattern derived from seed (xorshift64) */
void ex_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
}

/* ex_verify -- does buf hold ex_fill(len, seed)? */
int ex_verify(const void *buf, size_t len, uint64_t seed, const char *what)
{
	const unsigned char *p = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned char expected = (unsigned char)(x >> 24);
		if (p[i] != expected) {
			ex_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, len, p[i],
			       expected);
			return EX_E_FAIL;
		}
	}
	return 0;
}

/* ex_page_round -- size rounded up to whole pages */
static size_t ex_page_round(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t p = page > 0 ? (size_t)page : 4096;
	return (size + p - 1) / p * p;
}

/* ex_file_open -- open (create) path and make it at least size bytes long */
static int ex_file_open(const char *path, size_t size)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0) {
		ex_msg("open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))) {
		ex_msg("%s is neither a regular file nor a device DAX", path);
		close(fd);
		return -1;
	}
	if (S_ISREG(st.st_mode) && (size_t)st.st_size < size && ftruncate(fd, (off_t)size)) {
		ex_msg("ftruncate %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

#ifdef EX_HAVE_PMEM2
/* ex_pmem2_map -- map size bytes of fd with libpmem2 */
static int ex_pmem2_map(int fd, const char *path, size_t size, struct ex_mem *mem)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	int ret = EX_E_FAIL;

	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
	    /* page granularity: the weakest requirement, met by any file */
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_config_set_length(cfg, size) || pmem2_map_new(&map, cfg, src)) {
		ex_msg("libpmem2 cannot map %s: %s", path, pmem2_errormsg());
		goto out;
	}
	mem->ptr = pmem2_map_get_address(map);
	mem->size = size;
	mem->kind = EX_MEM_PMEM2;
	mem->is_pmem = pmem2_map_get_store_granularity(map) != PMEM2_GRANULARITY_PAGE;
	mem->handle = map;
	mem->persist = (void *)pmem2_get_persist_fn(map);
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	return ret;
}
#endif

/* ex_mem_open -- size bytes of DRAM (path == NULL) or of the file at path */
int ex_mem_open(const char *path, size_t size, struct ex_mem *mem)
{
	memset(mem, 0, sizeof(*mem));
	size = ex_page_round(size);
	if (path == NULL) {
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);
		if (p == MAP_FAILED) {
			ex_msg("mmap of %zu bytes: %s", size, strerror(errno));
			return EX_E_FAIL;
		}
		mem->ptr = p;
		mem->size = size;
		mem->kind = EX_MEM_DRAM;
		return 0;
	}

	int fd = ex_file_open(path, size);
	if (fd < 0)
		return EX_E_FAIL;
	int ret = 0;
#ifdef EX_HAVE_PMEM2
	ret = ex_pmem2_map(fd, path, size, mem);
#else
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		ex_msg("mmap %s: %s", path, strerror(errno));
		ret = EX_E_FAIL;
	} else {
		mem->ptr = p;
		mem->size = size;
		mem->kind = EX_MEM_FILE;
	}
#endif
	close(fd);
	return ret;
}

/* ex_mem_persist -- make [offset, offset + len) of the region persistent */
int ex_mem_persist(struct ex_mem *mem, size_t offset, size_t len)
{
	if (offset > mem->size || len > mem->size - offset) {
		ex_msg("persist: range %zu+%zu is outside the region of %zu bytes", offset, len,
		       mem->size);
		return EX_E_FAIL;
	}
	switch (mem->kind) {
	case EX_MEM_DRAM:
		return 0; /* volatile anyway */
	case EX_MEM_FILE: {
		/* msync() wants a page-aligned start */
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		size_t start = offset / page * page;
		if (msync(mem->ptr + start, offset + len - start, MS_SYNC)) {
			ex_msg("msync: %s", strerror(errno));
			return EX_E_FAIL;
		}
		return 0;
	}
	case EX_MEM_PMEM2:
#ifdef EX_HAVE_PMEM2
		((pmem2_persist_fn)mem->persist)(mem->ptr + offset, len);
		return 0;
#endif
	default:
		return EX_E_FAIL;
	}
}

/* ex_mem_close -- unmap or free the region */
void ex_mem_close(struct ex_mem *mem)
{
	if (mem->ptr == NULL)
		return;
#ifdef EX_HAVE_PMEM2
	if (mem->kind == EX_MEM_PMEM2) {
		struct pmem2_map *map = mem->handle;
		(void)pmem2_map_delete(&map);
		memset(mem, 0, sizeof(*mem));
		return;
	}
#endif
	(void)munmap(mem->ptr, mem->size);
	memset(mem, 0, sizeof(*mem));
}

/* ex_mem_kind_str -- a readable name of where the region lives */
const char *ex_mem_kind_str(const struct ex_mem *mem)
{
	switch (mem->kind) {
	case EX_MEM_DRAM:
		return "DRAM";
	case EX_MEM_FILE:
		return "a file mapped with mmap (persisted with msync)";
	case EX_MEM_PMEM2:
		return mem->is_pmem ? "PMem mapped with libpmem2"
				    : "a file mapped with libpmem2 (page granularity)";
	}
	return "?";
}

/* ex_direct_write_to_pmem -- may a server backed by mem promise direct write to PMem? */
bool ex_direct_write_to_pmem(const struct ex_mem *mem)
{
	const char *force = getenv("RPMA_EXAMPLE_DW2PMEM");
	if (force && *force)
		return strcmp(force, "0") != 0;
	return mem->is_pmem;
}
