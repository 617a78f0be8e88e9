/* SPDX-License-Identifier: BSD-3-Clause */
/* test_cq.c -- integration: CQ fds and waits, shared channel, receive CQ, SRQ */

#include <arpa/inet.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

/* the CQ's fd with poll, rpma_cq_wait, several completions at once, the neutral view */
PROVIDER_TEST(cq, fd_wait_and_batches)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL, *rcq = (struct rpma_cq *)0x1;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(d.p.cconn, &rcq), 0);
	cr_assert_null(rcq);
	int fd = -1;
	cr_assert_eq(rpma_cq_get_fd(cq, &fd), 0);
	cr_assert_not(itest_fd_ready(fd, 20), "the CQ fd is readable before anything happened");

	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
				(void *)1),
		     0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS), "no notification on the CQ fd");
	cr_assert_eq(rpma_cq_wait(cq), 0);
	struct ibv_wc wc[4];
	int got = 0;
	cr_assert_eq(rpma_cq_get_wc(cq, 4, wc, &got), 0);
	cr_assert_eq(got, 1);
	cr_assert_eq(wc[0].wr_id, 1);
	cr_assert_eq(rpma_cq_get_wc(cq, 4, wc, &got), RPMA_E_NO_COMPLETION);

	/* three operations, then a blocking wait and one batch */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 64 * i, d.rmr, 0, 64,
				       RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(10 + i)),
			     0);
	int seen = 0;
	while (seen < 3) {
		cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
		cr_assert_eq(rpma_cq_wait(cq), 0);
		int ret;
		while ((ret = rpma_cq_get_wc(cq, 4, wc, &got)) == 0) {
			for (int i = 0; i < got; i++) {
				cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
				cr_assert_eq(wc[i].opcode, IBV_WC_RDMA_READ);
				cr_assert_eq(wc[i].wr_id, (uint64_t)(10 + seen + i));
			}
			seen += got;
		}
		cr_assert_eq(ret, RPMA_E_NO_COMPLETION);
	}
	cr_assert_eq(seen, 3);

	/* the 0.10-era neutral completion */
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
				(void *)0x77),
		     0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	cr_assert_eq(rpma_cq_wait(cq), 0);
	struct rpma_completion cmpl;
	int ret;
	for (int i = 0; i < ITEST_WAIT_MS * 5; i++) { /* 200 us apart */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		ret = rpma_cq_get_completion(cq, &cmpl);
#pragma GCC diagnostic pop
		if (ret != RPMA_E_NO_COMPLETION)
			break;
		usleep(200);
	}
	cr_assert_eq(ret, 0);
	cr_assert_eq(cmpl.op, RPMA_OP_WRITE);
	cr_assert_eq(cmpl.op_context, (void *)0x77);
	cr_assert_eq(cmpl.op_status, IBV_WC_SUCCESS);
	itest_dpair_close(&d);
}

/*
 * rpma_cq_wait without the CQ's fd (the waiter drives libfabric itself and
 * keeps what woke it for the next rpma_cq_get_wc) and polls of an empty CQ
 * (straight from libfabric into the caller's array): rounds of 1 to 24
 * reads and writes, taken 1, 3 or 32 at a time, arrive all, once and in the
 * order they were posted, also where a round is larger than what one wait
 * keeps (8)
 */
PROVIDER_TEST(cq, wait_direct_order)
{
	struct rpma_conn_cfg *ccfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&ccfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(ccfg, 32), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(ccfg, 32), 0);
	/* the harness's connect timeout, as every client's (over shm under load 1 s passed) */
	itest_cfg_patient(ccfg);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, ccfg, NULL, NULL);
	cr_assert_eq(rpma_conn_cfg_delete(&ccfg), 0);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	static const int takes[] = {1, 3, 32};
	uint64_t posted = 0, seen = 0;
	int waits = 0;
	for (int round = 0; round < 48; round++) {
		int k = 1 + round % 24;
		for (int i = 0; i < k; i++) {
			uint64_t id = ++posted;
			if (id % 2)
				cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 64,
							RPMA_F_COMPLETION_ALWAYS,
							(void *)(uintptr_t)id),
					     0);
			else
				cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, 0, 64,
						       RPMA_F_COMPLETION_ALWAYS,
						       (void *)(uintptr_t)id),
					     0);
		}
		int take = takes[round % 3];
		while (seen < posted) {
			struct ibv_wc wc[32];
			int got = 0;
			int ret = rpma_cq_get_wc(cq, take, wc, &got);
			if (ret == RPMA_E_NO_COMPLETION) {
				cr_assert_eq(rpma_cq_wait(cq), 0);
				waits++;
				continue;
			}
			cr_assert_eq(ret, 0);
			cr_assert(got >= 1 && got <= take);
			for (int i = 0; i < got; i++) {
				uint64_t id = ++seen;
				cr_assert_eq(wc[i].wr_id, id,
					     "completion %d of a take: wr_id %llu, %llu expected",
					     i, (unsigned long long)wc[i].wr_id,
					     (unsigned long long)id);
				cr_assert_eq(wc[i].status, IBV_WC_SUCCESS);
				cr_assert_eq(wc[i].opcode,
					     (id % 2) ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ);
			}
		}
		struct ibv_wc wc;
		cr_assert_eq(rpma_cq_get_wc(cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
	}
	cr_assert_eq(seen, posted);
	cr_log_info("%llu completions, %d waits", (unsigned long long)seen, waits);
	itest_dpair_close(&d);
}

/* the server's late message of cq/wait_outlasts_spin */
struct late_send {
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	int ms;
	int ret;
};

static void *late_send_thread(void *arg)
{
	struct late_send *ls = arg;
	usleep((useconds_t)ls->ms * 1000);
	ls->ret = rpma_send(ls->conn, ls->mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, (void *)0x52);
	return NULL;
}

/*
 * rpma_cq_wait without the CQ's fd for a message that comes long after the
 * wait began (30 ms: longer than a waiter keeps reading a queue without a
 * wait object before it sleeps, RPMA_FABRIC_SPIN_US, 1 ms by default): the
 * wait ends with the message, which the next rpma_cq_get_wc gives
 */
PROVIDER_TEST(cq, wait_outlasts_spin)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_cq *cq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	cr_assert_eq(rpma_recv(d.p.cconn, d.creg.mr, 0, 64, (void *)0x51), 0);
	struct late_send ls = {.conn = d.p.sconn, .mr = d.sreg.mr, .ms = 30, .ret = -1};
	pthread_t t;
	long long t0 = itest_now_ms();
	cr_assert_eq(pthread_create(&t, NULL, late_send_thread, &ls), 0);
	struct ibv_wc wc;
	int got = 0, waits = 0;
	while (got == 0) {
		int ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			cr_assert_eq(rpma_cq_wait(cq), 0);
			waits++;
			continue;
		}
		cr_assert_eq(ret, 0);
	}
	long long took = itest_now_ms() - t0;
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(ls.ret, 0);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(wc.opcode, IBV_WC_RECV);
	cr_assert_eq(wc.wr_id, 0x51);
	cr_assert_geq(took, ls.ms, "the message came after %lld ms, before it was sent", took);
	cr_assert_lt(took, ls.ms + ITEST_WAIT_MS, "the wait took %lld ms", took);
	cr_log_info("the message after %lld ms, %d waits", took, waits);
	itest_expect_wc(scq, IBV_WC_SEND, (void *)0x52, NULL);
	itest_dpair_close(&d);
}

/* post_rcq_recv -- a receive for the separate receive CQ */
static void post_rcq_recv(struct rpma_conn_req *req, void *arg)
{
	struct itest_dpair *d = arg;
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 0, 128, (void *)0x81), 0);
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 128, 128, (void *)0x82), 0);
}

/* a separate receive CQ, and the shared completion channel telling which CQ fired */
PROVIDER_TEST(cq, rcq_and_shared_channel)
{
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(scfg, 8), 0);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(scfg, true), 0);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, scfg, NULL, post_rcq_recv, &d);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(d.p.sconn, &rcq), 0);
	cr_assert_not_null(rcq);
	cr_assert_neq(cq, rcq);
	int fd = -1;
	cr_assert_eq(rpma_conn_get_compl_fd(d.p.sconn, &fd), 0);
	cr_assert_eq(rpma_cq_wait(cq), RPMA_E_SHARED_CHANNEL);
	int cfd = -1;
	cr_assert_eq(rpma_conn_get_compl_fd(d.p.cconn, &cfd), RPMA_E_NOT_SHARED_CHNL);

	/* a message from the client: the receive CQ fires */
	strcpy(d.creg.ptr, "to the rcq");
	cr_assert_eq(rpma_send(d.p.cconn, d.creg.mr, 0, 11, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	struct rpma_cq *fired = NULL;
	bool is_rcq = false;
	cr_assert_eq(rpma_conn_wait(d.p.sconn, 0, &fired, &is_rcq), 0);
	cr_assert(is_rcq);
	cr_assert_eq(fired, rcq);
	struct ibv_wc wc;
	itest_expect_wc(rcq, IBV_WC_RECV, (void *)0x81, &wc);
	cr_assert_eq(wc.byte_len, 11);
	cr_assert_eq(itest_wc(cq, &wc, 20), RPMA_E_NO_COMPLETION, "a receive went to the main CQ");

	/* the server sends: the main CQ fires */
	cr_assert_eq(rpma_recv(d.p.cconn, d.creg.mr, 4096, 64, (void *)0x83), 0);
	cr_assert_eq(rpma_send(d.p.sconn, d.sreg.mr, 0, 11, RPMA_F_COMPLETION_ALWAYS, (void *)0x84),
		     0);
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	cr_assert_eq(rpma_conn_wait(d.p.sconn, 0, &fired, &is_rcq), 0);
	cr_assert_not(is_rcq);
	cr_assert_eq(fired, cq);
	itest_expect_wc(cq, IBV_WC_SEND, (void *)0x84, NULL);
	struct rpma_cq *ccq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &ccq), 0);
	itest_expect_wc(ccq, IBV_WC_RECV, (void *)0x83, NULL);
	cr_assert_eq(rpma_conn_wait(d.p.sconn, 1, &fired, &is_rcq), RPMA_E_INVAL);
	itest_dpair_close(&d);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
}

/* one SRQ shared by two connections: completions name the connection that received */
PROVIDER_TEST(cq, srq_two_connections)
{
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	struct rpma_srq_cfg *qcfg = NULL;
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(qcfg, 8), 0);
	cr_assert_eq(rpma_srq_cfg_set_rcq_size(qcfg, 8), 0);
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(speer, qcfg, &srq), 0);
	struct rpma_cq *srcq = NULL;
	cr_assert_eq(rpma_srq_get_rcq(srq, &srcq), 0);
	cr_assert_not_null(srcq);
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(scfg, srq), 0);

	struct itest_region sreg, creg;
	itest_region_new(&sreg, speer, 4096, RPMA_MR_USAGE_RECV);
	itest_region_new(&creg, cpeer, 4096, RPMA_MR_USAGE_SEND);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(
			rpma_srq_recv(srq, sreg.mr, 256 * i, 256, (void *)(uintptr_t)(0x90 + i)),
			0);

	struct itest_pair a = {0}, b = {0};
	a.speer = b.speer = speer;
	a.cpeer = b.cpeer = cpeer;
	itest_pair_open(&a, scfg, NULL, NULL, NULL, NULL, NULL);
	b.ep = a.ep;
	memcpy(b.port, a.port, sizeof(a.port));
	itest_pair_open(&b, scfg, NULL, NULL, NULL, NULL, NULL);
	uint32_t qa = 0, qb = 0;
	cr_assert_eq(rpma_conn_get_qp_num(a.sconn, &qa), 0);
	cr_assert_eq(rpma_conn_get_qp_num(b.sconn, &qb), 0);

	strcpy(creg.ptr, "from a");
	strcpy((char *)creg.ptr + 64, "from bb");
	cr_assert_eq(rpma_send(a.cconn, creg.mr, 0, 7, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	cr_assert_eq(rpma_send(b.cconn, creg.mr, 64, 8, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	bool got_a = false, got_b = false;
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc;
		cr_assert_eq(itest_wc(srcq, &wc, ITEST_WAIT_MS), 0);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		cr_assert_eq(wc.opcode, IBV_WC_RECV);
		cr_assert(wc.wr_id >= 0x90 && wc.wr_id < 0x94);
		const char *msg = (char *)sreg.ptr + 256 * (wc.wr_id - 0x90);
		if (wc.qp_num == qa) {
			cr_assert_eq(wc.byte_len, 7);
			cr_assert_str_eq(msg, "from a");
			got_a = true;
		} else {
			cr_assert_eq(wc.qp_num, qb, "qp_num %u is neither %u nor %u", wc.qp_num, qa,
				     qb);
			cr_assert_eq(wc.byte_len, 8);
			cr_assert_str_eq(msg, "from bb");
			got_b = true;
		}
	}
	cr_assert(got_a && got_b);
	/* a message that arrives before any buffer is posted waits for one */
	struct ibv_wc wc;
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 2048, 256, (void *)0xa0), 0);
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 2304, 256, (void *)0xa1), 0);
	cr_assert_eq(rpma_send(a.cconn, creg.mr, 0, 7, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	cr_assert_eq(itest_wc(srcq, &wc, ITEST_WAIT_MS), 0);
	cr_assert_eq(wc.qp_num, qa);
	/* the connection's own receive queue is not used with an SRQ */
	cr_assert_eq(rpma_recv(a.sconn, sreg.mr, 0, 8, NULL), RPMA_E_PROVIDER);

	itest_conn_close(&a.cconn, &a.sconn);
	itest_conn_close(&b.cconn, &b.sconn);
	cr_assert_eq(rpma_ep_shutdown(&a.ep), 0);
	itest_region_delete(&sreg);
	itest_region_delete(&creg);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/*
 * a connection attaches to an SRQ while only small buffers are posted; a
 * buffer posted later takes a message of its own length on it, whole, and
 * the connection lives on (the fabric provider's emulation once sized its
 * internal buffers when the connection attached: the 64 KiB message was
 * truncated and the connection reported LOST)
 */
PROVIDER_TEST(cq, srq_later_larger_message)
{
	const size_t big = 64 * 1024;
	struct rpma_peer *speer = itest_peer();
	struct rpma_srq_cfg *qcfg = NULL;
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(qcfg, 4), 0);
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(speer, qcfg, &srq), 0);
	struct rpma_cq *srcq = NULL;
	cr_assert_eq(rpma_srq_get_rcq(srq, &srcq), 0);
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(scfg, srq), 0);
	struct itest_region sreg, creg;
	itest_region_new(&sreg, speer, 2 * big, RPMA_MR_USAGE_RECV);
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 0, 512, (void *)0xc0), 0);

	struct itest_pair p = {0};
	p.speer = speer;
	itest_pair_open(&p, scfg, NULL, NULL, NULL, NULL, NULL);
	itest_region_new(&creg, p.cpeer, 2 * big, RPMA_MR_USAGE_SEND);
	struct rpma_cq *ccq = NULL;
	cr_assert_eq(rpma_conn_get_cq(p.cconn, &ccq), 0);
	struct ibv_wc wc;

	/* a small message into the small buffer */
	memset(creg.ptr, 0x11, 512);
	cr_assert_eq(rpma_send(p.cconn, creg.mr, 0, 512, RPMA_F_COMPLETION_ALWAYS, (void *)0xd0),
		     0);
	itest_expect_wc(ccq, IBV_WC_SEND, (void *)0xd0, &wc);
	itest_expect_wc(srcq, IBV_WC_RECV, (void *)0xc0, &wc);
	cr_assert_eq(wc.byte_len, 512);

	/* now a large buffer, then a message of its length */
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, big, big, (void *)0xc1), 0);
	unsigned char *src = (unsigned char *)creg.ptr + big;
	for (size_t i = 0; i < big; i++)
		src[i] = (unsigned char)(i * 13 + 5);
	cr_assert_eq(rpma_send(p.cconn, creg.mr, big, big, RPMA_F_COMPLETION_ALWAYS, (void *)0xd1),
		     0);
	itest_expect_wc(ccq, IBV_WC_SEND, (void *)0xd1, &wc);
	cr_assert_eq(itest_wc(srcq, &wc, ITEST_WAIT_MS), 0, "no receive completion");
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "receive status %d (%s)", wc.status,
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 0xc1);
	cr_assert_eq(wc.byte_len, big);
	cr_assert_eq(memcmp((char *)sreg.ptr + big, src, big), 0, "the message arrived altered");

	/* the connection still works: and a small one again */
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 0, 512, (void *)0xc2), 0);
	cr_assert_eq(rpma_send(p.cconn, creg.mr, 0, 100, RPMA_F_COMPLETION_ALWAYS, (void *)0xd2),
		     0);
	itest_expect_wc(ccq, IBV_WC_SEND, (void *)0xd2, &wc);
	itest_expect_wc(srcq, IBV_WC_RECV, (void *)0xc2, &wc);
	cr_assert_eq(wc.byte_len, 100);

	itest_close_pair(&p.cconn, &p.sconn);
	itest_region_delete(&sreg);
	itest_region_delete(&creg);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	itest_pair_close(&p);
}

/* cq_heap -- the heap in use, mmap()ed blocks included */
static size_t cq_heap(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/*
 * what an SRQ costs per connection is bounded by what was posted to it: with
 * one 8 MiB buffer posted (of 16 the queue may hold), a second connection
 * attaching takes less than 8 + 4 MiB more memory (the fabric provider's
 * emulation once gave every connection 16 internal buffers of the longest
 * length posted: 128 MiB each here); the 8 MiB message still arrives.  The
 * second connection is measured, not the first: the first one also pays
 * for what the transport allocates once per peer (libfabric 2.x's tcp
 * takes a 16 MiB transfer pool per domain at its first transfer)
 */
PROVIDER_TEST(cq, srq_memory_bounded)
{
	const size_t big = 8 << 20;
	struct rpma_peer *speer = itest_peer(), *cpeer = itest_peer();
	struct rpma_srq_cfg *qcfg = NULL;
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(qcfg, 16), 0);
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(speer, qcfg, &srq), 0);
	struct rpma_cq *srcq = NULL;
	cr_assert_eq(rpma_srq_get_rcq(srq, &srcq), 0);
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(scfg, srq), 0);
	struct itest_region sreg, creg;
	itest_region_new(&sreg, speer, big, RPMA_MR_USAGE_RECV);
	itest_region_new(&creg, cpeer, big, RPMA_MR_USAGE_SEND);
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 0, big, (void *)0xe0), 0);

	size_t before = cq_heap();
	struct itest_pair a = {0}, b = {0};
	a.speer = b.speer = speer;
	a.cpeer = b.cpeer = cpeer;
	itest_pair_open(&a, scfg, NULL, NULL, NULL, NULL, NULL);
	size_t middle = cq_heap();
	b.ep = a.ep;
	memcpy(b.port, a.port, sizeof(a.port));
	itest_pair_open(&b, scfg, NULL, NULL, NULL, NULL, NULL);
	size_t after = cq_heap();
	size_t first = middle > before ? middle - before : 0;
	size_t grown = after > middle ? after - middle : 0;
	cr_log_info("the first connection on the SRQ took %zu bytes, the second %zu", first, grown);
	cr_assert_lt(grown, big + ((size_t)4 << 20),
		     "the second connection on the SRQ took %zu bytes (%zu MiB)", grown,
		     grown >> 20);

	unsigned char *src = creg.ptr;
	for (size_t i = 0; i < big; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	long long t0 = itest_now_ms();
	cr_assert_eq(rpma_send(b.cconn, creg.mr, 0, big, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	struct ibv_wc wc;
	int got = itest_wc(srcq, &wc, ITEST_BULK_WAIT_MS);
	long long took = itest_now_ms() - t0;
	cr_log_info("the %zu MiB message %s after %lld ms", big >> 20,
		    got == 0 ? "completed" : "had not completed", took);
	if (got != 0) {
		/* what the sender saw: an error completion, or its connection's end */
		struct rpma_cq *ccq = NULL;
		struct ibv_wc cwc;
		int cgot = rpma_conn_get_cq(b.cconn, &ccq) ?: rpma_cq_get_wc(ccq, 1, &cwc, NULL);
		cr_log_error("the sender's CQ: %s",
			     cgot == 0 ? ibv_wc_status_str(cwc.status) : "nothing");
	}
	cr_assert_eq(got, 0, "no receive completion within %d ms", ITEST_BULK_WAIT_MS);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "receive status %d (%s)", wc.status,
		     ibv_wc_status_str(wc.status));
	cr_assert_eq(wc.wr_id, 0xe0);
	cr_assert_eq(wc.byte_len, big);
	cr_assert_eq(memcmp(sreg.ptr, src, big), 0, "the message arrived altered");

	itest_conn_close(&a.cconn, &a.sconn);
	itest_conn_close(&b.cconn, &b.sconn);
	cr_assert_eq(rpma_ep_shutdown(&a.ep), 0);
	itest_region_delete(&sreg);
	itest_region_delete(&creg);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	cr_assert_eq(rpma_peer_delete(&cpeer), 0);
	cr_assert_eq(rpma_peer_delete(&speer), 0);
}

/* an SRQ without its own CQ: receives complete on each connection's CQ */
PROVIDER_TEST(cq, srq_without_rcq)
{
	struct rpma_peer *speer = itest_peer();
	struct rpma_srq_cfg *qcfg = NULL;
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_srq_cfg_set_rcq_size(qcfg, 0), 0);
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(speer, qcfg, &srq), 0);
	struct rpma_cq *srcq = (struct rpma_cq *)0x1;
	cr_assert_eq(rpma_srq_get_rcq(srq, &srcq), 0);
	cr_assert_null(srcq);
	struct rpma_conn_cfg *scfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&scfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(scfg, srq), 0);
	struct itest_pair p = {0};
	p.speer = speer;
	itest_pair_open(&p, scfg, NULL, NULL, NULL, NULL, NULL);
	struct itest_region sreg, creg;
	itest_region_new(&sreg, speer, 4096, RPMA_MR_USAGE_RECV);
	itest_region_new(&creg, p.cpeer, 4096, RPMA_MR_USAGE_SEND);
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 0, 64, (void *)0xb0), 0);
	strcpy(creg.ptr, "hi");
	cr_assert_eq(rpma_send(p.cconn, creg.mr, 0, 3, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(p.sconn, &cq), 0);
	struct ibv_wc wc;
	itest_expect_wc(cq, IBV_WC_RECV, (void *)0xb0, &wc);
	cr_assert_eq(wc.byte_len, 3);
	cr_assert_str_eq(sreg.ptr, "hi");
	itest_conn_close(&p.cconn, &p.sconn);
	itest_region_delete(&sreg);
	itest_region_delete(&creg);
	cr_assert_eq(rpma_conn_cfg_delete(&scfg), 0);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	itest_pair_close(&p);
}

/* what the custom log function saw */
static char logged[512];

/* capture_log -- a log function that keeps the last message */
static void capture_log(enum rpma_log_level level, const char *file_name, const int line_no,
			const char *function_name, const char *message_format, ...)
{
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(logged, sizeof(logged), message_format, ap);
	va_end(ap);
}

/* small queues set in the configuration, the 0.10-era calls, the provider's log lines */
PROVIDER_TEST(cq, sizes_legacy_calls_and_log)
{
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(cfg, 4), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(cfg, 4), 0);
	cr_assert_eq(rpma_conn_cfg_set_rq_size(cfg, 2), 0);
	uint32_t v = 0;
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
	cr_assert_eq(v, 4);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	cr_assert_eq(v, 4);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, &v), 0);
	cr_assert_eq(v, 2);
	itest_cfg_patient(cfg);
	struct itest_dpair d = {0};
	itest_dpair_open(&d, cfg, cfg, NULL, NULL);
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);

	/* as many signaled operations as the queues hold, several rounds */
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 4; i++)
			cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 64 * i, d.creg.mr, 0, 64,
						RPMA_F_COMPLETION_ALWAYS,
						(void *)(uintptr_t)(i + 1)),
				     0);
		for (int i = 0; i < 4; i++)
			itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)(uintptr_t)(i + 1), NULL);
	}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	int fd = -1;
	cr_assert_eq(rpma_conn_get_completion_fd(d.p.cconn, &fd), 0);
	int cqfd = -2;
	cr_assert_eq(rpma_cq_get_fd(cq, &cqfd), 0);
	cr_assert_eq(fd, cqfd);
	uint64_t val = 0x0102030405060708ULL;
	memcpy(d.creg.ptr, &val, 8);
	cr_assert_eq(rpma_write_atomic(d.p.cconn, d.rmr, 16, d.creg.mr, 0, RPMA_F_COMPLETION_ALWAYS,
				       (void *)0x99),
		     0);
	/* a notification may be stale (spurious wake-ups are allowed): wait until it comes */
	struct rpma_completion cmpl;
	int ret = RPMA_E_NO_COMPLETION;
	for (int i = 0; i < 10 && ret == RPMA_E_NO_COMPLETION; i++) {
		cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
		cr_assert_eq(rpma_conn_completion_wait(d.p.cconn), 0);
		ret = rpma_conn_completion_get(d.p.cconn, &cmpl);
	}
	cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
#pragma GCC diagnostic pop
	cr_assert_eq(cmpl.op, RPMA_OP_WRITE);
	cr_assert_eq(cmpl.op_context, (void *)0x99);
	cr_assert_eq(cmpl.op_status, IBV_WC_SUCCESS);
	cr_assert_eq(rpma_flush(d.p.cconn, d.rmr, 16, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x9a),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x9a, NULL);
	cr_assert_eq(memcmp((char *)d.sreg.ptr + 16, &val, 8), 0);

	/*
	 * the provider logs through the library's log function, with its
	 * prefix: private data one byte over its connect limit is refused by
	 * the provider (the core knows no limit below 255)
	 */
	const struct rpma_provider_traits *t = itest_traits();
	if (t->pdata_connect_max < 255 && t->log_prefix != NULL) {
		char big[255] = {0};
		struct rpma_conn_private_data pd = {.ptr = big,
						    .len = (uint8_t)(t->pdata_connect_max + 1)};
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, NULL, &req), 0);
		logged[0] = '\0';
		cr_assert_eq(rpma_log_set_function(capture_log), 0);
		cr_assert_eq(rpma_conn_req_connect(&req, &pd, &conn), RPMA_E_INVAL);
		cr_assert_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
		cr_assert_null(conn);
		cr_assert_eq(strncmp(logged, t->log_prefix, strlen(t->log_prefix)), 0,
			     "last message: %s (expected the prefix '%s')", logged, t->log_prefix);
	}
	itest_dpair_close(&d);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

/*
 * ----- causal order on a shared completion channel
 *
 * A ping-pong over a connection whose main CQ and receive CQ share one
 * completion channel, both sides taking completions only from the CQ that
 * rpma_conn_wait() names.  Each side expects the completion of its own send
 * before the receive of the answer it causes: a completion must never be
 * reported after the completion of an event it caused.  The server runs in a
 * thread of its own; it records its first failure and the main thread
 * asserts it.
 */

/*
 * how many round trips the ping-pong makes at most, and for how long (the
 * Soft-RoCE guest under TCG makes a few hundred in that time)
 */
#define PP_ROUNDS    5000
#define PP_BUDGET_MS 20000
/* in the client's message: the server answers it and stops */
#define PP_LAST (1ULL << 62)

/* what one side of the ping-pong needs */
struct pp_side {
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	struct rpma_mr_local *mr; /* send at 0, receive at 64 */
	char *buf;
	int fd; /* the shared channel */
	/* completions taken from a named CQ but not yet consumed */
	struct ibv_wc pending[8];
	bool pending_rcq[8];
	int npending;
	char err[256];
	int fail_round; /* -1: no failure */
	int spurious;	/* notifications whose CQ was empty */
	/* the answer's receive that came before the send's completion (pp_expect) */
	struct ibv_wc early;
	bool has_early;
	int overtaken;
};

/* pp_fail -- record the first failure of a side */
__attribute__((format(printf, 3, 4))) static void pp_fail(struct pp_side *s, int round,
							  const char *fmt, ...)
{
	if (s->fail_round >= 0)
		return;
	s->fail_round = round;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
}

/*
 * pp_next -- the next completion in the order the channel reports them: wait
 * on the channel, then take everything from the CQ it names; false on a
 * failure (recorded)
 */
static bool pp_next(struct pp_side *s, int round, struct ibv_wc *wc, bool *from_rcq)
{
	while (s->npending == 0) {
		if (!itest_fd_ready(s->fd, ITEST_WAIT_MS)) {
			pp_fail(s, round, "no notification within %d ms", ITEST_WAIT_MS);
			return false;
		}
		struct rpma_cq *named = NULL;
		bool is_rcq = false;
		int ret = rpma_conn_wait(s->conn, 0, &named, &is_rcq);
		if (ret) {
			pp_fail(s, round, "rpma_conn_wait: %s", rpma_err_2str(ret));
			return false;
		}
		if (named != (is_rcq ? s->rcq : s->cq)) {
			pp_fail(s, round, "rpma_conn_wait named a CQ that is_rcq contradicts");
			return false;
		}
		int got = 0;
		while ((ret = rpma_cq_get_wc(named, 1, &s->pending[s->npending], &got)) == 0) {
			s->pending_rcq[s->npending++] = is_rcq;
			if (s->npending == 8) {
				pp_fail(s, round, "more completions than operations in flight");
				return false;
			}
		}
		if (ret != RPMA_E_NO_COMPLETION) {
			pp_fail(s, round, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
			return false;
		}
		if (s->npending == 0)
			s->spurious++;
	}
	*wc = s->pending[0];
	*from_rcq = s->pending_rcq[0];
	s->npending--;
	memmove(&s->pending[0], &s->pending[1], (size_t)s->npending * sizeof(s->pending[0]));
	memmove(&s->pending_rcq[0], &s->pending_rcq[1], (size_t)s->npending);
	return true;
}

/* pp_expect -- the next completion must be a successful one of this kind, from this CQ */
static bool pp_expect(struct pp_side *s, int round, enum ibv_wc_opcode opcode, uint64_t wr_id,
		      bool rcq)
{
	struct ibv_wc wc;
	bool from_rcq = false;
	if (opcode == IBV_WC_RECV && s->has_early) {
		wc = s->early;
		from_rcq = true;
		s->has_early = false;
	} else if (!pp_next(s, round, &wc, &from_rcq)) {
		return false;
	}
	/*
	 * The one inversion the transport may make: the answer's receive
	 * before the completion of the send it answers.  A queue pair's send
	 * and receive completions are written by different agents (Soft-RoCE:
	 * the completer task on the ACK, the responder task on the answer),
	 * and nothing orders the ACK before the answer; libfabric's verbs over
	 * rxe showed it about once in 5000 rounds (the send's completion was
	 * not in libfabric's CQ when the receive's was).  Kept for the next
	 * expectation and counted; anything else out of order fails.
	 */
	if (opcode == IBV_WC_SEND && !s->has_early && from_rcq && wc.status == IBV_WC_SUCCESS &&
	    wc.opcode == IBV_WC_RECV) {
		s->early = wc;
		s->has_early = true;
		s->overtaken++;
		if (!pp_next(s, round, &wc, &from_rcq))
			return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode || wc.wr_id != wr_id ||
	    from_rcq != rcq) {
		/*
		 * for the diagnosis: had the channel more to say already, and
		 * was the awaited completion in its CQ?
		 */
		bool more = itest_fd_ready(s->fd, 0);
		struct ibv_wc late;
		int got = 0;
		bool there = rpma_cq_get_wc(rcq ? s->rcq : s->cq, 1, &late, &got) == 0 &&
			     late.wr_id == wr_id;
		pp_fail(s, round,
			"expected %s (wr_id 0x%llx) from the %s, got opcode %d (wr_id 0x%llx, "
			"status %s) from the %s; the channel had %s pending; the awaited one %s",
			opcode == IBV_WC_SEND ? "the send's completion" : "a receive",
			(unsigned long long)wr_id, rcq ? "receive CQ" : "main CQ", wc.opcode,
			(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			from_rcq ? "receive CQ" : "main CQ", more ? "a notification" : "nothing",
			there ? "was in its CQ already" : "was not in its CQ yet");
		return false;
	}
	return true;
}

/* the op_context values of the ping-pong (the round number in the low bits) */
#define PP_SEND 0x5000000ULL
#define PP_RECV 0x7000000ULL

/* pp_send -- send the round number (last: the client's last round) */
static bool pp_send(struct pp_side *s, int round, bool last)
{
	uint64_t v = (uint64_t)round | (last ? PP_LAST : 0);
	memcpy(s->buf, &v, 8);
	int ret = rpma_send(s->conn, s->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			    (void *)(uintptr_t)(PP_SEND + (uint64_t)round));
	if (ret)
		pp_fail(s, round, "rpma_send: %s", rpma_err_2str(ret));
	return ret == 0;
}

/* pp_recv -- post the receive of a round */
static bool pp_recv(struct pp_side *s, int round)
{
	int ret = rpma_recv(s->conn, s->mr, 64, 64, (void *)(uintptr_t)(PP_RECV + (uint64_t)round));
	if (ret)
		pp_fail(s, round, "rpma_recv: %s", rpma_err_2str(ret));
	return ret == 0;
}

/* pp_got -- the receive of a round carried that round's number; *last: the client's last */
static bool pp_got(struct pp_side *s, int round, bool *last)
{
	uint64_t v;
	memcpy(&v, s->buf + 64, 8);
	*last = (v & PP_LAST) != 0;
	v &= ~PP_LAST;
	if (v != (uint64_t)round)
		pp_fail(s, round, "received %llu", (unsigned long long)v);
	return v == (uint64_t)round;
}

/* pp_server -- answer every ping; the answer's completion must come before the next ping */
static void *pp_server(void *arg)
{
	struct pp_side *s = arg;
	bool last = false;
	/* the receive of round 0 was posted before the connection was accepted */
	if (!pp_expect(s, 0, IBV_WC_RECV, PP_RECV, true) || !pp_got(s, 0, &last))
		return NULL;
	for (int r = 0;; r++) {
		if (!last && !pp_recv(s, r + 1))
			return NULL;
		if (!pp_send(s, r, false) ||
		    !pp_expect(s, r, IBV_WC_SEND, PP_SEND + (uint64_t)r, false))
			return NULL;
		if (last)
			return NULL;
		if (!pp_expect(s, r + 1, IBV_WC_RECV, PP_RECV + (uint64_t)(r + 1), true) ||
		    !pp_got(s, r + 1, &last))
			return NULL;
	}
}

/* pp_post_first -- the server's receive of round 0 */
static void pp_post_first(struct rpma_conn_req *req, void *arg)
{
	struct pp_side *s = arg;
	cr_assert_eq(rpma_conn_req_recv(req, s->mr, 64, 64, (void *)(uintptr_t)PP_RECV), 0);
}

/* pp_side_init -- the CQs and the channel of one side */
static void pp_side_init(struct pp_side *s, struct rpma_conn *conn)
{
	s->conn = conn;
	cr_assert_eq(rpma_conn_get_cq(conn, &s->cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(conn, &s->rcq), 0);
	cr_assert_not_null(s->rcq);
	cr_assert_eq(rpma_conn_get_compl_fd(conn, &s->fd), 0);
}

/*
 * a ping-pong over a separate receive CQ and the shared channel on both
 * sides: the completion of each send comes before the receive it caused,
 * but for the one inversion the transport may make (pp_expect)
 */
PROVIDER_TEST(cq, shared_channel_causal_order)
{
	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, 8), 0);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	struct itest_region sreg, creg;
	itest_region_new(&sreg, p.speer, 4096, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	itest_region_new(&creg, p.cpeer, 4096, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct pp_side srv = {.mr = sreg.mr, .buf = sreg.ptr, .fail_round = -1};
	struct pp_side cli = {.mr = creg.mr, .buf = creg.ptr, .fail_round = -1};
	itest_cfg_patient(cfg);
	itest_pair_open(&p, cfg, cfg, NULL, NULL, pp_post_first, &srv);
	pp_side_init(&srv, p.sconn);
	pp_side_init(&cli, p.cconn);

	pthread_t server;
	cr_assert_eq(pthread_create(&server, NULL, pp_server, &srv), 0);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rounds = 0;
	for (bool last = false; !last; rounds++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long long ms = (t.tv_sec - t0.tv_sec) * 1000LL + (t.tv_nsec - t0.tv_nsec) / 1000000;
		last = rounds + 1 == PP_ROUNDS || ms >= PP_BUDGET_MS;
		bool ignored;
		int r = rounds;
		if (!pp_recv(&cli, r) || !pp_send(&cli, r, last) ||
		    !pp_expect(&cli, r, IBV_WC_SEND, PP_SEND + (uint64_t)r, false) ||
		    !pp_expect(&cli, r, IBV_WC_RECV, PP_RECV + (uint64_t)r, true) ||
		    !pp_got(&cli, r, &ignored))
			break;
	}
	/* a failed client leaves the server waiting: its bounded wait ends it */
	cr_assert_eq(pthread_join(server, NULL), 0);
	cr_log_info("%s: %d rounds; notifications with nothing to take: client %d, server %d; "
		    "receives before the send they answer: client %d, server %d",
		    prov, rounds, cli.spurious, srv.spurious, cli.overtaken, srv.overtaken);
	/* one side's failure leaves the other waiting in vain: report both */
	cr_assert(cli.fail_round < 0 && srv.fail_round < 0,
		  "client: round %d (of %d at most): %s; server: round %d: %s", cli.fail_round,
		  PP_ROUNDS, cli.fail_round < 0 ? "ok" : cli.err, srv.fail_round,
		  srv.fail_round < 0 ? "ok" : srv.err);
	itest_conn_close(&p.cconn, &p.sconn);
	itest_region_delete(&sreg);
	itest_region_delete(&creg);
	itest_pair_close(&p);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}
