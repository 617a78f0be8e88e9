/* SPDX-License-Identifier: BSD-3-Clause */
/* test_data.c -- integration: memory regions and every data-path operation */

#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "itest.h"

/* every usage combination: registration, descriptors, remote getters */
PROVIDER_TEST(data, mr_every_usage)
{
	struct rpma_peer *peer = itest_peer();
	const size_t size = 8192;
	char *buf = itest_alloc(size);
	for (int usage = 1; usage <= ITEST_ALL_USAGE; usage++) {
		struct rpma_mr_local *mr = NULL;
		int ret = rpma_mr_reg(peer, buf, size, usage, &mr);
		cr_assert_eq(ret, 0, "usage 0x%x: %s", usage, rpma_err_2str(ret));
		size_t dsize = 0;
		cr_assert_eq(rpma_mr_get_descriptor_size(mr, &dsize), 0);
		cr_assert_eq(dsize, 21, "usage 0x%x: descriptor of %zu bytes", usage, dsize);
		char desc[32];
		cr_assert_eq(rpma_mr_get_descriptor(mr, desc), 0);
		/*
		 * a region with a flush usage: SEND and RECV both set say "native
		 * flush accepted" (rpma_verbs(7)), both clear otherwise
		 */
		int want = usage;
		int fl = RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
		int sr = RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;
		if (usage & fl)
			want = (usage & ~sr) | ((desc[20] & sr) == sr ? sr : 0);
		cr_assert_eq((unsigned char)desc[20], want, "usage 0x%x: descriptor usage 0x%x",
			     usage, (unsigned char)desc[20]);
		void *ptr = NULL;
		size_t got = 0;
		cr_assert_eq(rpma_mr_get_ptr(mr, &ptr), 0);
		cr_assert_eq(ptr, buf);
		cr_assert_eq(rpma_mr_get_size(mr, &got), 0);
		cr_assert_eq(got, size);
		struct rpma_mr_remote *rmr = NULL;
		cr_assert_eq(rpma_mr_remote_from_descriptor(desc, dsize, &rmr), 0);
		cr_assert_eq(rpma_mr_remote_get_size(rmr, &got), 0);
		cr_assert_eq(got, size);
		int ft = -1;
		cr_assert_eq(rpma_mr_remote_get_flush_type(rmr, &ft), 0);
		cr_assert_eq(ft, usage & (RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
					  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
		cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
		if (usage == ITEST_ALL_USAGE) {
			ret = rpma_mr_advise(mr, 0, size, 0, 0);
			if (!itest_traits()->mr_advise)
				cr_assert_eq(ret, RPMA_E_NOSUPP, "%s", rpma_err_2str(ret));
		}
		cr_assert_eq(rpma_mr_dereg(&mr), 0);
		cr_assert_null(mr);
	}
	/* keys stay unique: two regions over the same memory at once */
	struct rpma_mr_local *a = NULL, *b = NULL;
	char da[32], db[32];
	cr_assert_eq(rpma_mr_reg(peer, buf, size, RPMA_MR_USAGE_READ_SRC, &a), 0);
	cr_assert_eq(rpma_mr_reg(peer, buf, size, RPMA_MR_USAGE_READ_SRC, &b), 0);
	cr_assert_eq(rpma_mr_get_descriptor(a, da), 0);
	cr_assert_eq(rpma_mr_get_descriptor(b, db), 0);
	cr_assert_neq(memcmp(da + 16, db + 16, 4), 0, "two regions got the same key");
	cr_assert_eq(rpma_mr_dereg(&a), 0);
	cr_assert_eq(rpma_mr_dereg(&b), 0);
	free(buf);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

/* fill -- a recognisable pattern */
static void fill(char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed + i * 31 + (i >> 8));
}

/* write (ON_ERROR and ALWAYS), flush to visibility, read back, zero-length forms */
PROVIDER_TEST(data, write_flush_read)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	struct ibv_wc wc;
	char *src = d.creg.ptr, *dst = d.sreg.ptr;

	fill(src, 4096, 1);
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 4096, d.creg.mr, 0, 4096,
				RPMA_F_COMPLETION_ON_ERROR, (void *)0x11),
		     0);
	/* an unsignaled success produces no completion */
	cr_assert_eq(itest_wc(cq, &wc, 100), RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 4096, 4096, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x12),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x12, &wc);
	cr_assert_eq(memcmp(dst + 4096, src, 4096), 0, "flushed data is not visible");

	fill(src + 8192, 100, 7);
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 8192, 100, RPMA_F_COMPLETION_ALWAYS,
				(void *)0x13),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)0x13, &wc);
	cr_assert_eq(wc.qp_num, ({
			     uint32_t q;
			     rpma_conn_get_qp_num(d.p.cconn, &q);
			     q;
		     }));

	/* the server changes its memory; the client reads it */
	fill(dst + 65536, 3000, 9);
	cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 16384, d.rmr, 65536, 3000,
			       RPMA_F_COMPLETION_ALWAYS, (void *)0x14),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x14, NULL);
	cr_assert_eq(memcmp(src + 16384, dst + 65536, 3000), 0);

	/* zero-length forms */
	cr_assert_eq(
		rpma_read(d.p.cconn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, (void *)0x15),
		0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x15, NULL);
	cr_assert_eq(
		rpma_write(d.p.cconn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, (void *)0x16),
		0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)0x16, NULL);
	cr_assert_eq(
		rpma_read(d.p.cconn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR, (void *)0x17),
		0);
	cr_assert_eq(itest_wc(cq, &wc, 100), RPMA_E_NO_COMPLETION);
	/* the connection still works after all that */
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x18),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x18, NULL);
	itest_dpair_close(&d);
}

/* post_two_recvs -- the server's receives, posted before it accepts */
static void post_two_recvs(struct rpma_conn_req *req, void *arg)
{
	struct itest_dpair *d = arg;
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 0, 256, (void *)0x21), 0);
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 256, 256, (void *)0x22), 0);
}

/* send, send with immediate, zero-length send, receives on both sides */
PROVIDER_TEST(data, send_recv)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, post_two_recvs, &d);
	struct rpma_cq *ccq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &ccq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	struct ibv_wc wc;
	char *c = d.creg.ptr, *s = d.sreg.ptr;

	strcpy(c, "ping");
	cr_assert_eq(rpma_send(d.p.cconn, d.creg.mr, 0, 5, RPMA_F_COMPLETION_ALWAYS, (void *)0x31),
		     0);
	itest_expect_wc(ccq, IBV_WC_SEND, (void *)0x31, NULL);
	itest_expect_wc(scq, IBV_WC_RECV, (void *)0x21, &wc);
	cr_assert_eq(wc.byte_len, 5);
	cr_assert_eq(wc.wc_flags & IBV_WC_WITH_IMM, 0);
	cr_assert_str_eq(s, "ping");
	uint32_t sq;
	cr_assert_eq(rpma_conn_get_qp_num(d.p.sconn, &sq), 0);
	cr_assert_eq(wc.qp_num, sq);

	/* zero-length send with immediate data */
	cr_assert_eq(rpma_send_with_imm(d.p.cconn, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR,
					0xfeedbeef, (void *)0x32),
		     0);
	itest_expect_wc(scq, IBV_WC_RECV, (void *)0x22, &wc);
	cr_assert_eq(wc.byte_len, 0);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 0xfeedbeef);

	/* the server answers with immediate data into a receive the client posts now */
	cr_assert_eq(rpma_recv(d.p.cconn, d.creg.mr, 4096, 512, (void *)0x33), 0);
	strcpy(s + 1024, "pong!");
	cr_assert_eq(rpma_send_with_imm(d.p.sconn, d.sreg.mr, 1024, 6, RPMA_F_COMPLETION_ALWAYS, 7,
					(void *)0x34),
		     0);
	itest_expect_wc(scq, IBV_WC_SEND, (void *)0x34, NULL);
	itest_expect_wc(ccq, IBV_WC_RECV, (void *)0x33, &wc);
	cr_assert_eq(wc.byte_len, 6);
	cr_assert_eq(ntohl(wc.imm_data), 7);
	cr_assert_str_eq(c + 4096, "pong!");
	/* the client's unsignaled send produced nothing */
	cr_assert_eq(itest_wc(ccq, &wc, 50), RPMA_E_NO_COMPLETION);
	itest_dpair_close(&d);
}

/* post_one_recv -- a receive for write-with-immediate (needed where imm consumes one) */
static void post_one_recv(struct rpma_conn_req *req, void *arg)
{
	struct itest_dpair *d = arg;
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 0, 64, (void *)0x41), 0);
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 64, 64, (void *)0x42), 0);
}

/* write with immediate: data placed, RECV_RDMA_WITH_IMM with the value in network order */
PROVIDER_TEST(data, write_with_imm)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, post_one_recv, &d);
	struct rpma_cq *ccq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &ccq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	struct ibv_wc wc;
	fill(d.creg.ptr, 512, 3);
	cr_assert_eq(rpma_write_with_imm(d.p.cconn, d.rmr, 8192, d.creg.mr, 0, 512,
					 RPMA_F_COMPLETION_ALWAYS, 0x12345678, (void *)0x43),
		     0);
	itest_expect_wc(ccq, IBV_WC_RDMA_WRITE, (void *)0x43, NULL);
	cr_assert_eq(itest_wc(scq, &wc, ITEST_WAIT_MS), 0);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert(wc.wc_flags & IBV_WC_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 0x12345678);
	/* verbs hands out the consumed receive's context; tcp consumes none */
	cr_assert(wc.wr_id == 0x41 || wc.wr_id == 0, "wr_id 0x%lx", (unsigned long)wc.wr_id);
	cr_assert_eq(memcmp((char *)d.sreg.ptr + 8192, d.creg.ptr, 512), 0);

	/* the zero-length form only carries the value */
	cr_assert_eq(rpma_write_with_imm(d.p.cconn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR,
					 99, (void *)0x44),
		     0);
	cr_assert_eq(itest_wc(scq, &wc, ITEST_WAIT_MS), 0);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	cr_assert_eq(ntohl(wc.imm_data), 99);
	itest_dpair_close(&d);
}

/* atomic write: placed after the flushed data, alignment enforced */
PROVIDER_TEST(data, atomic_write)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	char *dst = d.sreg.ptr;

	/* a log append as upstream's example 07 does it: data, flush, then the pointer */
	fill(d.creg.ptr, 1024, 5);
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 4096, d.creg.mr, 0, 1024,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 4096, 1024, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	uint64_t used = 4096 + 1024;
	char v[8];
	memcpy(v, &used, 8);
	cr_assert_eq(
		rpma_atomic_write(d.p.cconn, d.rmr, 8, v, RPMA_F_COMPLETION_ALWAYS, (void *)0x51),
		0);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)0x51, NULL);
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 8, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x52),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x52, NULL);
	uint64_t seen;
	memcpy(&seen, dst + 8, 8);
	cr_assert_eq(seen, used);
	cr_assert_eq(memcmp(dst + 4096, d.creg.ptr, 1024), 0);
	cr_assert_eq(rpma_atomic_write(d.p.cconn, d.rmr, 12, v, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	itest_dpair_close(&d);
}

/* persistent flush: durable where the transport can do it, RPMA_E_NOSUPP otherwise */
PROVIDER_TEST(data, flush_persistent)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	fill(d.creg.ptr, 65536, 11);
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 65536,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	int ret = rpma_flush(d.p.cconn, d.rmr, 0, 65536, RPMA_FLUSH_TYPE_PERSISTENT,
			     RPMA_F_COMPLETION_ALWAYS, (void *)0x61);
	if (itest_traits()->persistent_flush) {
		cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x61, NULL);
		cr_assert_eq(memcmp(d.sreg.ptr, d.creg.ptr, 65536), 0);
	} else {
		cr_assert_eq(ret, RPMA_E_NOSUPP, "%s", rpma_err_2str(ret));
	}
	/* a zero-length flush orders too */
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 0, 0, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x62),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x62, NULL);
	/* without the peer's declaration the core refuses (checked before the provider) */
	itest_dpair_close(&d);
}

/*
 * a passive target (never touches its CQ): 1 MiB written, flushed and read
 * back quickly.  Without progress at the target nothing completes, or only
 * after whole seconds (a progress loop that wakes on its safety-net timeout
 * instead of the descriptors); a loaded machine can stretch one round too, so
 * the best of up to three rounds is held to the limit.
 */
PROVIDER_TEST(data, passive_target_progress)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	const size_t size = ITEST_REGION_SIZE;
	char *c = d.creg.ptr;
	char *copy = malloc(size);
	cr_assert_not_null(copy);
	/* valgrind slows everything */
	const long limit = RUNNING_ON_VALGRIND ? 4000 : 1000;
	long best = -1;
	for (int round = 0; round < 3 && (best < 0 || best >= limit); round++) {
		fill(c, size, 13 + round);
		memcpy(copy, c, size);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, size,
					RPMA_F_COMPLETION_ON_ERROR, NULL),
			     0);
		cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 0, size, RPMA_FLUSH_TYPE_VISIBILITY,
					RPMA_F_COMPLETION_ALWAYS, (void *)1),
			     0);
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)1, NULL);
		memset(c, 0, size);
		cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, 0, size,
				       RPMA_F_COMPLETION_ALWAYS, (void *)2),
			     0);
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)2, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		cr_assert_eq(memcmp(c, copy, size), 0, "the data read back differs");
		cr_assert_eq(memcmp(d.sreg.ptr, copy, size), 0, "the target holds other data");
		cr_log_info(
			"passive target, round %d: 1 MiB written, flushed and read back in %ld ms",
			round + 1, ms);
		if (best < 0 || ms < best)
			best = ms;
	}
	free(copy);
	cr_assert_lt(best, limit, "a passive target took %ld ms at best of 3 rounds (limit %ld ms)",
		     best, limit);
	itest_dpair_close(&d);
}

/* stream_poller -- an active target: busy-polls its CQ until told to stop */
struct stream_poller {
	struct rpma_cq *cq;
	atomic_bool stop;
};

static void *stream_poll(void *arg)
{
	struct stream_poller *sp = arg;
	while (!atomic_load(&sp->stop)) {
		struct ibv_wc wc;
		int got = 0;
		(void)rpma_cq_get_wc(sp->cq, 1, &wc, &got);
	}
	return NULL;
}

/* stream_ms -- n writes of 64 B one at a time, the client busy-polling; their ms */
static long stream_ms(struct itest_dpair *d, struct rpma_cq *cq, int n, int seed)
{
	char *c = d->creg.ptr;
	fill(c, 64 * (size_t)n, seed);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < n; i++) {
		cr_assert_eq(rpma_write(d->p.cconn, d->rmr, 64 * (size_t)i, d->creg.mr,
					64 * (size_t)i, 64, RPMA_F_COMPLETION_ALWAYS,
					(void *)(uintptr_t)(i + 1)),
			     0);
		/* busy polling: itest_wc's naps would bound the stream instead */
		struct ibv_wc wc;
		int ret = itest_wc_busy(cq, &wc, ITEST_WAIT_MS);
		cr_assert_eq(ret, 0, "write %d: %s", i, rpma_err_2str(ret));
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "write %d: %s", i,
			     ibv_wc_status_str(wc.status));
		cr_assert_eq(wc.wr_id, (uint64_t)(i + 1));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_eq(rpma_flush(d->p.cconn, d->rmr, 0, 64 * (size_t)n, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x51),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x51, NULL);
	cr_assert_eq(memcmp(d->sreg.ptr, c, 64 * (size_t)n), 0, "the target holds other data");
	return (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
}

/*
 * a stream of small writes, one at a time, to a passive target must go at
 * the pace it goes to an active one (whose thread busy-polls its CQ, which
 * drives the transport itself).  Over a libfabric provider whose queues have
 * no wait object (shm) the passive target's progress thread read them once a
 * millisecond, which bounded such a stream to a write per millisecond
 * (rpma_fabric(7), Progress at the target): 200 writes took 220 ms against
 * 1 ms.  Held: passive <= 4 x active + 50 ms, or half a millisecond a write
 * when that is more (udp;ofi_rxd's passive target takes ~57 ms for the 200
 * on a quiet machine, and 59 against an active 2 failed a loaded CI run),
 * at best of up to three rounds (valgrind: only the data is checked).
 */
static long passive_bound(long active, int n)
{
	long b = 4 * active + 50;
	return b > n / 2 ? b : n / 2;
}

PROVIDER_TEST(data, passive_target_stream)
{
	enum { N = 200 };
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	struct stream_poller sp = {0};
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &sp.cq), 0);
	long passive = -1, active = -1;
	for (int round = 0; round < 3 && (passive < 0 || passive > passive_bound(active, N));
	     round++) {
		long ms = stream_ms(&d, cq, N, 21 + round);
		if (passive < 0 || ms < passive)
			passive = ms;
		atomic_store(&sp.stop, false);
		pthread_t t;
		cr_assert_eq(pthread_create(&t, NULL, stream_poll, &sp), 0);
		ms = stream_ms(&d, cq, N, 31 + round);
		atomic_store(&sp.stop, true);
		cr_assert_eq(pthread_join(t, NULL), 0);
		if (active < 0 || ms < active)
			active = ms;
		cr_log_info("%s, round %d: %d writes of 64 B one at a time: passive target "
			    "%ld ms, active %ld ms (best so far)",
			    prov, round + 1, N, passive, active);
	}
	if (!RUNNING_ON_VALGRIND)
		cr_assert_leq(passive, passive_bound(active, N),
			      "%d writes to a passive target took %ld ms, to an active one %ld ms",
			      N, passive, active);
	itest_dpair_close(&d);
}

/* aw_take -- take one signaled atomic write's completion and check it */
static void aw_take(struct rpma_cq *cq, int *seen, int signaled)
{
	struct ibv_wc wc;
	cr_assert_eq(itest_wc(cq, &wc, ITEST_WAIT_MS), 0, "%d of %d completions", *seen, signaled);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	cr_assert_eq(wc.wr_id % 8, 0, "an unsignaled write completed (wr_id %llu)",
		     (unsigned long long)wc.wr_id);
	(*seen)++;
}

/*
 * aw_full_queue -- atomic writes, every eighth one signaled, posted as fast
 * as the connection takes them (a refused post waits for a completion), then
 * a flush: every value must have arrived, none overwritten by a later one
 * (each atomic write's 8 bytes stay the provider's until it is done with
 * them, also where it cannot inject them)
 */
static void aw_full_queue(const char *prov)
{
	enum { N = 2048, SQ = 8 };
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(cfg, SQ), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(cfg, N), 0);
	itest_cfg_patient(cfg);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, cfg, cfg, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	memset(d.sreg.ptr, 0, 8 * N);
	int signaled = 0, seen = 0, refused = 0;
	struct ibv_wc wc;
	for (int i = 0; i < N; i++) {
		uint64_t v = 0xa7a7000000000000ULL | ((uint64_t)i << 8) | 0x5a;
		char src[8];
		memcpy(src, &v, 8);
		bool sig = i % 8 == 7;
		int ret;
		while ((ret = rpma_atomic_write(d.p.cconn, d.rmr, 8 * (size_t)i, src,
						sig ? RPMA_F_COMPLETION_ALWAYS
						    : RPMA_F_COMPLETION_ON_ERROR,
						(void *)(uintptr_t)(i + 1))) == RPMA_E_PROVIDER &&
		       seen < signaled) {
			/* the send queue is full: one signaled write frees it */
			refused++;
			aw_take(cq, &seen, signaled);
		}
		cr_assert_eq(ret, 0, "atomic write %d: %s", i, rpma_err_2str(ret));
		signaled += sig;
	}
	/* the flush needs a place in the send queue too (the last writes may fill it) */
	int ret;
	while ((ret = rpma_flush(d.p.cconn, d.rmr, 0, 8 * N, RPMA_FLUSH_TYPE_VISIBILITY,
				 RPMA_F_COMPLETION_ALWAYS, (void *)0xf1)) == RPMA_E_PROVIDER &&
	       seen < signaled) {
		refused++;
		aw_take(cq, &seen, signaled);
	}
	cr_assert_eq(ret, 0, "the flush: %s", rpma_err_2str(ret));
	while (seen < signaled)
		aw_take(cq, &seen, signaled);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0xf1, NULL);
	cr_assert_eq(itest_wc(cq, &wc, 20), RPMA_E_NO_COMPLETION, "a completion too many");
	int bad = 0, first = -1;
	uint64_t first_got = 0;
	for (int i = 0; i < N; i++) {
		uint64_t want = 0xa7a7000000000000ULL | ((uint64_t)i << 8) | 0x5a, got;
		memcpy(&got, (char *)d.sreg.ptr + 8 * i, 8);
		if (got != want && bad++ == 0) {
			first = i;
			first_got = got;
		}
	}
	cr_log_info("%s: %d atomic writes, %d posts waited for a completion", prov, N, refused);
	cr_assert_eq(bad, 0, "%d of %d values wrong at the target; the first at %d: 0x%llx", bad, N,
		     first, (unsigned long long)first_got);
	itest_dpair_close(&d);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

/* atomic writes filling the send queue, each value verified at the target */
PROVIDER_TEST(data, atomic_write_full_queue)
{
	aw_full_queue(prov);
}

/*
 * the same where the fabric provider injects nothing (RPMA_FABRIC_INJECT=0,
 * rpma_fabric(7)), so that it stages each value; other providers ignore it
 */
PROVIDER_TEST(data, atomic_write_full_queue_staged)
{
	cr_assert_eq(setenv("RPMA_FABRIC_INJECT", "0", 1), 0);
	aw_full_queue(prov);
	cr_assert_eq(unsetenv("RPMA_FABRIC_INJECT"), 0);
}

/*
 * Two connections between the same peers: the first is deleted with writes
 * in flight whose completions nobody takes, the second carries on and sees
 * nothing of them.  Where connections share a libfabric CQ (the fabric
 * provider's CQ groups, run with every connection grouped by
 * tests/integration/grouped.sh) both client connections are in one group,
 * and so are both server connections.
 */
PROVIDER_TEST(data, delete_with_writes_in_flight)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct itest_pair q = {0};
	q.speer = d.p.speer;
	q.cpeer = d.p.cpeer;
	q.ep = d.p.ep;
	memcpy(q.port, d.p.port, sizeof(q.port));
	itest_pair_open(&q, NULL, NULL, NULL, NULL, NULL, NULL);

	/* fewer than the default queue sizes (10): every post is accepted */
	for (int i = 0; i < 8; i++)
		cr_assert_eq(rpma_write(d.p.cconn, d.rmr, (size_t)i * 4096, d.creg.mr, 0, 4096,
					RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x100 + i)),
			     0);
	itest_conn_close(&d.p.cconn, &d.p.sconn);

	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(q.cconn, &cq), 0);
	char *src = d.creg.ptr, *dst = d.sreg.ptr;
	fill(src + 65536, 4096, 5);
	cr_assert_eq(rpma_write(q.cconn, d.rmr, 131072, d.creg.mr, 65536, 4096,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	cr_assert_eq(rpma_flush(q.cconn, d.rmr, 131072, 4096, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x77),
		     0);
	struct ibv_wc wc;
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x77, &wc);
	cr_assert_eq(memcmp(dst + 131072, src + 65536, 4096), 0, "the write is not visible");
	/* no completion of the deleted connection turns up here */
	cr_assert_eq(itest_wc(cq, &wc, 200), RPMA_E_NO_COMPLETION,
		     "a stray completion: wr_id 0x%llx", (unsigned long long)wc.wr_id);

	itest_conn_close(&q.cconn, &q.sconn);
	itest_dpair_close(&d);
}

/*
 * busy_stream -- a connection busy with one-sided operations stays up: a
 * client writes (or reads) 64 B one at a time for four of the server's
 * timeouts (500 ms) toward a server that never touches its CQ and has the
 * smallest receive queue; the server must not report the connection lost
 * (over shm the client's keep-alives found no room in the server's command
 * queue while the writes took every free slot, and the server, hearing
 * nothing, reported LOST after its timeout)
 */
static void busy_stream(const char *prov, bool reads)
{
	enum { SERVER_TIMEOUT_MS = 500, STREAM_MS = 4 * SERVER_TIMEOUT_MS };
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_timeout(scfg, SERVER_TIMEOUT_MS), 0);
	cr_assert_eq(rpma_conn_cfg_set_rq_size(scfg, 1), 0);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, scfg, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	int sfd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(d.p.sconn, &sfd), 0);
	const char *what = reads ? "read" : "write";
	long long end = itest_now_ms() + STREAM_MS;
	long n = 0;
	struct ibv_wc wc;
	while (itest_now_ms() < end) {
		size_t off = (size_t)(n % 1024) * 64;
		void *ctx = (void *)(uintptr_t)(n + 1);
		int ret = reads ? rpma_read(d.p.cconn, d.creg.mr, off, d.rmr, off, 64,
					    RPMA_F_COMPLETION_ALWAYS, ctx)
				: rpma_write(d.p.cconn, d.rmr, off, d.creg.mr, off, 64,
					     RPMA_F_COMPLETION_ALWAYS, ctx);
		cr_assert_eq(ret, 0, "%s %ld: %s", what, n, rpma_err_2str(ret));
		cr_assert_eq(itest_wc_busy(cq, &wc, ITEST_WAIT_MS), 0, "%s %ld: no completion",
			     what, n);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s %ld: %s", what, n,
			     ibv_wc_status_str(wc.status));
		n++;
		if ((n & 63) == 0 && itest_fd_ready(sfd, 0))
			break;
	}
	bool event = itest_fd_ready(sfd, 0);
	enum rpma_conn_event ev = event ? itest_next_event(d.p.sconn) : RPMA_CONN_UNDEFINED;
	cr_log_info("%s: %ld %ss in %d ms, the server's event: %s", prov, n, what, STREAM_MS,
		    event ? rpma_utils_conn_event_2str(ev) : "none");
	cr_assert(!event, "the server reported \"%s\" after %ld %ss of a busy connection",
		  rpma_utils_conn_event_2str(ev), n, what);
	itest_dpair_close(&d);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
}

PROVIDER_TEST(data, busy_stream_stays_up)
{
	busy_stream(prov, false);
}

PROVIDER_TEST(data, busy_read_stream_stays_up)
{
	busy_stream(prov, true);
}
