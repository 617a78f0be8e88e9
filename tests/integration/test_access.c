/* SPDX-License-Identifier: BSD-3-Clause */
/* test_access.c -- integration: lying descriptors and missing access rights end in errors */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "itest.h"

/*
 * The server registers ACC_SIZE bytes in the middle of a buffer with
 * ACC_GUARD canary bytes before and after. The client crafts descriptors
 * that claim more (or other) memory than was registered, or uses honest
 * descriptors of regions registered without the needed access, and posts
 * one operation per connection: the operation must end in an error
 * completion, no byte of the server's buffer may change, and both sides must
 * stay usable (the next attempt reuses the same server endpoint, peer and
 * region) and deletable.
 */
#define ACC_GUARD  8192
#define ACC_SIZE   65536
#define ACC_CANARY 0xa5
#define ACC_SRC	   0x77 /* what the client writes */
#define ACC_DST	   0x11 /* what the client's read destination holds before */
#define ACC_CTX	   ((void *)0xacce55)

enum acc_op { ACC_WRITE, ACC_WRITE_IMM, ACC_READ, ACC_FLUSH, ACC_ATOMIC };

static const char *const acc_op_names[] = {"write", "write_with_imm", "read", "flush",
					   "atomic_write"};

/* everything one scenario uses: server side (peer, endpoint, region), client side */
struct acc {
	struct itest_pair p; /* peers and endpoint; a new connection per attempt */
	uint8_t *sbuf;	     /* guard | region | guard */
	uint8_t *sref;	     /* what sbuf must keep holding */
	struct rpma_mr_local *smr;
	uint8_t sdesc[32];
	size_t sdesc_size;
	struct rpma_mr_local *recv_mr; /* server receive buffer (write with immediate data) */
	uint8_t recv_buf[64];
	struct itest_region creg; /* client: write source and read destination */
};

/* acc_now_ms -- a monotonic clock in ms */
static long long acc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* acc_le -- read a little-endian u64 of a descriptor */
static uint64_t acc_le(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* acc_put_le -- write a little-endian u64 into a descriptor */
static void acc_put_le(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* acc_open -- the server's guarded region with the given usage, peers, endpoint, client region */
static void acc_open(struct acc *a, int susage)
{
	if (!itest_traits()->access_checked)
		cr_skip_test("the transport does not hold remote accesses to the region's key and "
			     "rights (rpma_fabric(7): shm)");
	memset(a, 0, sizeof(*a));
	a->p.speer = itest_peer();
	a->p.cpeer = itest_peer();
	a->p.ep = itest_listen(a->p.speer, a->p.port);

	size_t total = ACC_GUARD + ACC_SIZE + ACC_GUARD;
	a->sbuf = itest_alloc(total);
	memset(a->sbuf, ACC_CANARY, total);
	for (size_t i = 0; i < ACC_SIZE; i++)
		a->sbuf[ACC_GUARD + i] = (uint8_t)(i * 7 + 3);
	a->sref = malloc(total);
	cr_assert_not_null(a->sref);
	memcpy(a->sref, a->sbuf, total);
	int ret = rpma_mr_reg(a->p.speer, a->sbuf + ACC_GUARD, ACC_SIZE, susage, &a->smr);
	cr_assert_eq(ret, 0, "rpma_mr_reg: %s", rpma_err_2str(ret));
	cr_assert_eq(rpma_mr_get_descriptor_size(a->smr, &a->sdesc_size), 0);
	cr_assert_leq(a->sdesc_size, sizeof(a->sdesc));
	cr_assert_eq(rpma_mr_get_descriptor(a->smr, a->sdesc), 0);
	cr_assert_eq(acc_le(a->sdesc + 8), ACC_SIZE);
	cr_assert_eq(rpma_mr_reg(a->p.speer, a->recv_buf, sizeof(a->recv_buf), RPMA_MR_USAGE_RECV,
				 &a->recv_mr),
		     0);

	itest_region_new(&a->creg, a->p.cpeer, 2 * ACC_SIZE,
			 RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	memset(a->creg.ptr, ACC_SRC, ACC_SIZE);
	memset((uint8_t *)a->creg.ptr + ACC_SIZE, ACC_DST, ACC_SIZE);
}

/* acc_check_memory -- no byte of the server's buffer changed, the read destination neither */
static void acc_check_memory(struct acc *a, const char *what)
{
	size_t total = ACC_GUARD + ACC_SIZE + ACC_GUARD;
	for (size_t i = 0; i < total; i++)
		cr_assert_eq(a->sbuf[i], a->sref[i],
			     "%s: server byte %zd (relative to the region) is 0x%02x, was 0x%02x",
			     what, (ssize_t)i - ACC_GUARD, a->sbuf[i], a->sref[i]);
	const uint8_t *dst = (const uint8_t *)a->creg.ptr + ACC_SIZE;
	for (size_t i = 0; i < ACC_SIZE; i++)
		cr_assert_eq(dst[i], ACC_DST, "%s: read destination byte %zu became 0x%02x", what,
			     i, dst[i]);
}

/* acc_close -- every object of the scenario is deleted successfully */
static void acc_close(struct acc *a)
{
	cr_assert_eq(rpma_mr_dereg(&a->smr), 0);
	cr_assert_eq(rpma_mr_dereg(&a->recv_mr), 0);
	itest_region_delete(&a->creg);
	itest_pair_close(&a->p);
	free(a->sbuf);
	free(a->sref);
}

/* acc_post_recv -- the server posts a receive for the immediate data before accepting */
static void acc_post_recv(struct rpma_conn_req *req, void *arg)
{
	struct acc *a = arg;
	cr_assert_eq(rpma_conn_req_recv(req, a->recv_mr, 0, sizeof(a->recv_buf), NULL), 0);
}

/* acc_post -- post op on the remote region at off (len bytes) with a completion */
static int acc_post(struct acc *a, enum acc_op op, struct rpma_mr_remote *rmr, size_t off,
		    size_t len)
{
	struct rpma_conn *c = a->p.cconn;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	switch (op) {
	case ACC_WRITE:
		return rpma_write(c, rmr, off, a->creg.mr, 0, len, f, ACC_CTX);
	case ACC_WRITE_IMM:
		return rpma_write_with_imm(c, rmr, off, a->creg.mr, 0, len, f, 0x1234, ACC_CTX);
	case ACC_READ:
		return rpma_read(c, a->creg.mr, ACC_SIZE, rmr, off, len, f, ACC_CTX);
	case ACC_FLUSH:
		return rpma_flush(c, rmr, off, len, RPMA_FLUSH_TYPE_VISIBILITY, f, ACC_CTX);
	case ACC_ATOMIC: {
		char v[8];
		memset(v, ACC_SRC, sizeof(v));
		return rpma_atomic_write(c, rmr, off, v, f, ACC_CTX);
	}
	}
	return RPMA_E_UNKNOWN;
}

/*
 * acc_attempt -- one connection, one operation through the descriptor desc:
 * it must be posted, end in an error completion, and leave the server's
 * memory as it was; then the connection is torn down as the provider allows
 */
static void acc_attempt(struct acc *a, const char *prov, const char *what, const uint8_t *desc,
			enum acc_op op, size_t off, size_t len)
{
	struct rpma_conn_private_data spd = {.ptr = a->sdesc, .len = (uint8_t)a->sdesc_size};
	itest_pair_open(&a->p, NULL, NULL, NULL, &spd, op == ACC_WRITE_IMM ? acc_post_recv : NULL,
			a);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(a->p.cconn, &cq), 0);
	struct rpma_mr_remote *rmr = NULL;
	int ret = rpma_mr_remote_from_descriptor(desc, a->sdesc_size, &rmr);
	cr_assert_eq(ret, 0, "%s: the crafted descriptor was refused: %s", what,
		     rpma_err_2str(ret));

	long long t0 = acc_now_ms();
	ret = acc_post(a, op, rmr, off, len);
	cr_assert_eq(ret, 0, "%s: %s at %zu (+%zu) was not posted: %s", what, acc_op_names[op], off,
		     len, rpma_err_2str(ret));
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0, "%s: no completion within %d ms", what,
		     ITEST_WAIT_MS);
	long long t_wc = acc_now_ms() - t0;
	cr_assert_eq(wc.wr_id, (uint64_t)(uintptr_t)ACC_CTX);
	cr_assert_neq(wc.status, IBV_WC_SUCCESS, "%s: %s succeeded, it must fail", what,
		      acc_op_names[op]);

	/* the client may see its connection end (fabric: LOST), or not (verbs) */
	int cfd = -1, sfd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(a->p.cconn, &cfd), 0);
	cr_assert_eq(rpma_conn_get_event_fd(a->p.sconn, &sfd), 0);
	const char *cev = "none", *sev = "none";
	if (itest_fd_ready(cfd, 500)) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		cr_assert_eq(rpma_conn_next_event(a->p.cconn, &ev), 0);
		cev = rpma_utils_conn_event_2str(ev);
		cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "%s: client event %s",
			  what, cev);
		/* the server's connection ends too, within the usual wait */
		ev = itest_next_event(a->p.sconn);
		sev = rpma_utils_conn_event_2str(ev);
		cr_assert(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "%s: server event %s",
			  what, sev);
		(void)rpma_conn_disconnect(a->p.cconn);
		(void)rpma_conn_disconnect(a->p.sconn);
		cr_assert_eq(rpma_conn_delete(&a->p.cconn), 0);
		cr_assert_eq(rpma_conn_delete(&a->p.sconn), 0);
	} else {
		/* the connection itself is up: an orderly close works */
		cr_assert_not(itest_fd_ready(sfd, 0), "%s: a server event without a client one",
			      what);
		itest_close_pair(&a->p.cconn, &a->p.sconn);
	}
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	fprintf(stderr,
		"[access] %s/%s: %s at %zu (+%zu): %s (vendor_err %u) after %lld ms, "
		"client event %s, server event %s\n",
		prov, itest_libfabric_prov(), what, off, len, ibv_wc_status_str(wc.status),
		wc.vendor_err, t_wc, cev, sev);
	acc_check_memory(a, what);
}

/* acc_good_write -- an honest write on a new connection still works and lands */
static void acc_good_write(struct acc *a)
{
	struct rpma_conn_private_data spd = {.ptr = a->sdesc, .len = (uint8_t)a->sdesc_size};
	itest_pair_open(&a->p, NULL, NULL, NULL, &spd, NULL, NULL);
	struct rpma_mr_remote *rmr = itest_remote(a->p.cconn);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(a->p.cconn, &cq), 0);
	cr_assert_eq(acc_post(a, ACC_WRITE, rmr, ACC_SIZE - 64, 64), 0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, ACC_CTX, NULL);
	memset(a->sref + ACC_GUARD + ACC_SIZE - 64, ACC_SRC, 64);
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	itest_close_pair(&a->p.cconn, &a->p.sconn);
	acc_check_memory(a, "honest write after the attempts");
}

/* kinds of lies about the server's region */
enum acc_lie { LIE_LARGER, LIE_SHIFTED_UP, LIE_SHIFTED_DOWN };

/* acc_forge -- the server's descriptor with a lie; false when the decoder must refuse it */
static bool acc_forge(const struct acc *a, enum acc_lie lie, uint8_t desc[32])
{
	memcpy(desc, a->sdesc, a->sdesc_size);
	uint64_t addr = acc_le(desc);
	switch (lie) {
	case LIE_LARGER: /* twice the size: the second half is not registered */
		acc_put_le(desc + 8, 2 * ACC_SIZE);
		return true;
	case LIE_SHIFTED_UP: /* the same size, starting at the real end */
		acc_put_le(desc, addr + ACC_SIZE);
		return true;
	case LIE_SHIFTED_DOWN: /* the same size, starting inside the guard before the region */
		acc_put_le(desc, addr - ACC_GUARD / 2);
		/* offset addressing (0): 0 - 4096 + the size wraps past 2^64 */
		return addr >= ACC_GUARD / 2;
	}
	return false;
}

/*
 * a descriptor claiming a region larger than, or elsewhere than, the one the
 * server registered: every operation beyond the real region ends in an error
 * completion; the server's memory outside (and inside) stays untouched
 */
PROVIDER_TEST(access, lying_descriptor)
{
	struct acc a;
	acc_open(&a, ITEST_ALL_USAGE);
	static const enum acc_op ops[] = {ACC_WRITE, ACC_READ, ACC_FLUSH, ACC_ATOMIC};
	static const char *const lies[] = {"larger", "shifted up", "shifted down"};
	for (int l = LIE_LARGER; l <= LIE_SHIFTED_DOWN; l++) {
		uint8_t desc[32];
		if (!acc_forge(&a, (enum acc_lie)l, desc)) {
			struct rpma_mr_remote *rmr = NULL;
			cr_assert_eq(rpma_mr_remote_from_descriptor(desc, a.sdesc_size, &rmr),
				     RPMA_E_INVAL, "a region wrapping past 2^64 was accepted");
			fprintf(stderr, "[access] %s/%s: %s: refused when decoded (wraps)\n", prov,
				itest_libfabric_prov(), lies[l]);
			continue;
		}
		/* larger: just past the real end; shifted: the start of the claimed region */
		size_t off = l == LIE_LARGER ? ACC_SIZE : 0;
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			char what[64];
			snprintf(what, sizeof(what), "%s %s", lies[l], acc_op_names[ops[i]]);
			acc_attempt(&a, prov, what, desc, ops[i], off,
				    ops[i] == ACC_ATOMIC ? 8 : 256);
		}
	}
	/* straddling the real end: nothing of it lands, not even the part inside */
	uint8_t desc[32];
	cr_assert(acc_forge(&a, LIE_LARGER, desc));
	acc_attempt(&a, prov, "larger write across the end", desc, ACC_WRITE, ACC_SIZE - 128, 256);
	acc_attempt(&a, prov, "larger read across the end", desc, ACC_READ, ACC_SIZE - 128, 256);
	acc_good_write(&a);
	acc_close(&a);
}

/*
 * a region registered without RPMA_MR_USAGE_WRITE_DST cannot be written by
 * the peer: write, write with immediate data and atomic write fail with an
 * error completion and nothing in the region changes
 */
PROVIDER_TEST(access, no_remote_write)
{
	struct acc a;
	acc_open(&a, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	/* the descriptor tells the truth: the core leaves the check to the target */
	acc_attempt(&a, prov, "write without WRITE_DST", a.sdesc, ACC_WRITE, 0, 4096);
	acc_attempt(&a, prov, "write_with_imm without WRITE_DST", a.sdesc, ACC_WRITE_IMM, 64, 64);
	acc_attempt(&a, prov, "atomic_write without WRITE_DST", a.sdesc, ACC_ATOMIC, 128, 8);
	acc_close(&a);
}

/*
 * a region registered without RPMA_MR_USAGE_READ_SRC (nor a flush usage,
 * which needs a remote read) cannot be read by the peer: the read and a flush
 * through a descriptor that lies about the flush usage fail, and the reader's
 * destination keeps what it held
 */
PROVIDER_TEST(access, no_remote_read)
{
	struct acc a;
	acc_open(&a, RPMA_MR_USAGE_WRITE_DST);
	acc_attempt(&a, prov, "read without READ_SRC", a.sdesc, ACC_READ, 0, 4096);
	uint8_t desc[32];
	memcpy(desc, a.sdesc, a.sdesc_size);
	desc[20] |= RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY; /* claims what was not registered */
	acc_attempt(&a, prov, "flush without READ_SRC", desc, ACC_FLUSH, 0, 64);
	acc_close(&a);
}

/*
 * keys the fabric provider chooses (offset addressing: the descriptor's
 * address is 0) are random: never below 0x10000, all different, not a run
 * of consecutive numbers (rpma_fabric(7)); the driver's keys elsewhere are
 * not checked
 */
PROVIDER_TEST(access, fabric_keys_unpredictable)
{
	enum { N = 16 };
	struct rpma_peer *peer = itest_peer();
	char *mem = itest_alloc(N * 4096);
	struct rpma_mr_local *mr[N];
	uint32_t key[N];
	bool offset_addressing = true;
	for (int i = 0; i < N; i++) {
		int usage = RPMA_MR_USAGE_WRITE_DST | (i % 2 ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT
							     : RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
		cr_assert_eq(rpma_mr_reg(peer, mem + i * 4096, 4096, usage, &mr[i]), 0);
		unsigned char d[32];
		size_t ds = 0;
		cr_assert_eq(rpma_mr_get_descriptor_size(mr[i], &ds), 0);
		cr_assert(ds >= 21 && ds <= sizeof(d));
		cr_assert_eq(rpma_mr_get_descriptor(mr[i], d), 0);
		uint64_t addr = 0;
		for (int b = 7; b >= 0; b--)
			addr = addr << 8 | d[b];
		offset_addressing = offset_addressing && addr == 0;
		key[i] = (uint32_t)d[16] | (uint32_t)d[17] << 8 | (uint32_t)d[18] << 16 |
			 (uint32_t)d[19] << 24;
	}
	/* a provider that draws keys itself: random, unique, never below its minimum */
	uint32_t key_min = itest_traits()->drawn_key_min;
	if (key_min != 0 && offset_addressing) {
		uint32_t lo = UINT32_MAX, hi = 0;
		for (int i = 0; i < N; i++) {
			uint32_t k = key[i] & 0x7fffffffu; /* the top bit marks persistence */
			cr_assert_geq(k, key_min, "key %d is 0x%x", i, key[i]);
			for (int j = 0; j < i; j++)
				cr_assert_neq(key[i], key[j], "keys %d and %d are both 0x%x", i, j,
					      key[i]);
			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
		cr_assert_gt(hi - lo, (uint32_t)(64 * N), "the keys lie within 0x%x..0x%x", lo, hi);
	}
	for (int i = 0; i < N; i++)
		cr_assert_eq(rpma_mr_dereg(&mr[i]), 0);
	free(mem);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}
