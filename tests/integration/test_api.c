/* SPDX-License-Identifier: BSD-3-Clause */
/* test_api.c -- integration: what each man page promises, for the calls other scenarios use in passing */

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "itest.h"

/* ------------------------------------------------ peer configurations */

/* what the server's before-accept hook learnt from the client's request */
struct api_pcfg_seen {
	int ret_get;
	int ret_from;
	int ret_bad;
	bool direct;
	size_t len;
	const char *prov;
};

/* api_read_client_pcfg -- the server reads the client's peer-config descriptor from the request */
static void api_read_client_pcfg(struct rpma_conn_req *req, void *arg)
{
	struct api_pcfg_seen *seen = arg;
	struct rpma_conn_private_data pd = {0};
	cr_assert_eq(rpma_conn_req_get_private_data(NULL, &pd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_get_private_data(req, NULL), RPMA_E_INVAL);
	seen->ret_get = rpma_conn_req_get_private_data(req, &pd);
	cr_assert_eq(seen->ret_get, 0);
	const char zero = 0;
	itest_check_pdata(&pd, &zero, 1);
	seen->len = pd.len;
	struct rpma_peer_cfg *pcfg = NULL;
	/* desc_size 0 is refused and leaves the output alone */
	seen->ret_bad = rpma_peer_cfg_from_descriptor(pd.ptr, 0, &pcfg);
	cr_assert_null(pcfg);
	/* every byte that arrived: a longer descriptor is accepted */
	seen->ret_from = rpma_peer_cfg_from_descriptor(pd.ptr, pd.len, &pcfg);
	cr_assert_eq(seen->ret_from, 0);
	seen->direct = true;
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &seen->direct), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	cr_assert_null(pcfg);
}

/*
 * peer configurations: defaults, setters, getters and descriptors, sent both
 * ways as private data; applying one allows the persistent flush and applying
 * the opposite takes the permission away again
 */
PROVIDER_TEST(api, peer_cfg_exchange)
{
	struct rpma_peer_cfg *pcfg = NULL, *ccfg = NULL;
	bool b = true;

	cr_assert_eq(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_not_null(pcfg);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &b), 0);
	cr_assert_eq(b, false, "a new peer configuration starts without direct write to PMem");
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(NULL, &b), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(NULL, true), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	b = false;
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &b), 0);
	cr_assert_eq(b, true);

	size_t psize = 99;
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(NULL, &psize), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(psize, 99, "a failed call left the output alone");
	cr_assert_eq(rpma_peer_cfg_get_descriptor_size(pcfg, &psize), 0);
	cr_assert_eq(psize, 1, "the peer-config descriptor is one byte");
	char pdesc[8] = {0};
	cr_assert_eq(rpma_peer_cfg_get_descriptor(NULL, pdesc), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, NULL), RPMA_E_INVAL);

	/* the client's configuration says no: byte 0 */
	cr_assert_eq(rpma_peer_cfg_new(&ccfg), 0);
	char cdesc[8] = {0x55};
	cr_assert_eq(rpma_peer_cfg_get_descriptor(ccfg, cdesc), 0);
	cr_assert_eq(cdesc[0], 0);
	cr_assert_eq(rpma_peer_cfg_delete(&ccfg), 0);
	cr_assert_null(ccfg);
	cr_assert_eq(rpma_peer_cfg_delete(&ccfg), 0, "deleting a NULL configuration succeeds");
	cr_assert_eq(rpma_peer_cfg_delete(NULL), RPMA_E_INVAL);

	/* the server sends its region's descriptor and then its peer configuration */
	struct itest_pair p = {0};
	p.speer = itest_peer();
	struct itest_region sreg;
	itest_region_new(&sreg, p.speer, ITEST_REGION_SIZE, ITEST_ALL_USAGE);
	char spd_buf[64];
	memcpy(spd_buf, sreg.desc, sreg.desc_size);
	cr_assert_eq(rpma_peer_cfg_get_descriptor(pcfg, spd_buf + sreg.desc_size), 0);
	/* direct write to PMem (bit 0) and "my regions announce native flush" (bit 7) */
	cr_assert_eq((unsigned char)spd_buf[sreg.desc_size], 0x81);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	struct rpma_conn_private_data spd = {.ptr = spd_buf, .len = (uint8_t)(sreg.desc_size + 1)};
	struct rpma_conn_private_data cpd = {.ptr = cdesc, .len = 1};

	struct api_pcfg_seen seen = {.prov = prov, .direct = true};
	itest_pair_open(&p, NULL, NULL, &cpd, &spd, api_read_client_pcfg, &seen);
	cr_assert_eq(seen.ret_bad, RPMA_E_INVAL);
	cr_assert_eq(seen.direct, false, "the client's descriptor said no direct write");

	/* the client rebuilds the server's configuration */
	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_get_private_data(p.cconn, &got), 0);
	itest_check_pdata(&got, spd_buf, spd.len);
	struct rpma_mr_remote *rmr = NULL;
	cr_assert_eq(rpma_mr_remote_from_descriptor(got.ptr, sreg.desc_size, &rmr), 0);
	const char *rest = (const char *)got.ptr + sreg.desc_size;
	size_t rest_len = got.len - sreg.desc_size;
	struct rpma_peer_cfg *rcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_from_descriptor(NULL, rest_len, &rcfg), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_from_descriptor(rest, rest_len, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_cfg_from_descriptor(rest, rest_len, &rcfg), 0);
	b = false;
	cr_assert_eq(rpma_peer_cfg_get_direct_write_to_pmem(rcfg, &b), 0);
	cr_assert_eq(b, true, "the server declared direct write to PMem");

	/* before the configuration is applied, a persistent flush is refused */
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(p.cconn, &cq), 0);
	cr_assert_eq(rpma_flush(p.cconn, rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x101),
		     RPMA_E_NOSUPP);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(NULL, rcfg), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(p.cconn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(p.cconn, rcfg), 0);
	/* the connection keeps what it learnt: the configuration may go at once */
	cr_assert_eq(rpma_peer_cfg_delete(&rcfg), 0);

	/* a write, then a persistent flush where the transport can make it durable */
	struct itest_region creg;
	itest_region_new(&creg, p.cpeer, 4096, RPMA_MR_USAGE_WRITE_SRC);
	memset(creg.ptr, 0xa5, 64);
	cr_assert_eq(rpma_write(p.cconn, rmr, 0, creg.mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	int ret = rpma_flush(p.cconn, rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
			     RPMA_F_COMPLETION_ALWAYS, (void *)0x102);
	if (itest_traits()->persistent_flush) {
		cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x102, NULL);
		cr_assert_eq(memcmp(sreg.ptr, creg.ptr, 64), 0);
	} else {
		cr_assert_eq(ret, RPMA_E_NOSUPP, "%s", rpma_err_2str(ret));
	}

	/* the client's own (negative) configuration applied takes the permission away */
	cr_assert_eq(rpma_peer_cfg_from_descriptor(cdesc, 1, &rcfg), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(p.cconn, rcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&rcfg), 0);
	cr_assert_eq(rpma_flush(p.cconn, rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x103),
		     RPMA_E_NOSUPP);
	/* the visibility flush needs no declaration */
	cr_assert_eq(rpma_flush(p.cconn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x104),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x104, NULL);

	itest_conn_close(&p.cconn, &p.sconn);
	cr_assert_eq(rpma_mr_remote_delete(&rmr), 0);
	itest_region_delete(&creg);
	itest_region_delete(&sreg);
	itest_pair_close(&p);
}

/* ------------------------------------------------ connection configurations */

/*
 * connection configuration: the documented defaults, every getter after its
 * setter, refused arguments leaving the value alone, and what the settings do
 * to a real connection (receive CQ, shared channel)
 */
PROVIDER_TEST(api, conn_cfg_getters_and_effects)
{
	struct rpma_conn_cfg *cfg = NULL;
	int t = 0;
	uint32_t v = 0;
	bool shared = true;
	struct rpma_srq *srq = (struct rpma_srq *)0x1;

	cr_assert_eq(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	cr_assert_eq(t, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	cr_assert_eq(shared, false);
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	cr_assert_null(srq);

	/* NULL arguments */
	cr_assert_eq(rpma_conn_cfg_get_timeout(NULL, &t), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(NULL, &shared), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_sq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_rq_size(cfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_timeout(NULL, 10), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(NULL, 4), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(NULL, true), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, NULL), RPMA_E_INVAL);
	/* a negative timeout is refused and leaves the setting alone */
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, -1), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	cr_assert_eq(t, RPMA_DEFAULT_TIMEOUT_MS);
	cr_assert_eq(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);

	/* each getter returns what its setter stored */
	cr_assert_eq(rpma_conn_cfg_set_timeout(cfg, 2500), 0);
	cr_assert_eq(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	cr_assert_eq(t, 2500);
	cr_assert_eq(rpma_conn_cfg_set_cq_size(cfg, 12), 0);
	cr_assert_eq(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
	cr_assert_eq(v, 12);
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, 8), 0);
	cr_assert_eq(rpma_conn_cfg_get_rcq_size(cfg, &v), 0);
	cr_assert_eq(v, 8);
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	cr_assert_eq(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	cr_assert_eq(shared, true);

	/* a connection built from it on both sides */
	struct itest_dpair d = {0};
	itest_cfg_patient(cfg);
	itest_dpair_open(&d, cfg, cfg, NULL, NULL);
	/* the connection keeps its own copy: changing the configuration now changes nothing */
	cr_assert_eq(rpma_conn_cfg_set_rcq_size(cfg, 0), 0);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int fd = -1;
	cr_assert_eq(rpma_conn_get_cq(d.p.cconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_rcq(d.p.cconn, &rcq), 0);
	cr_assert_not_null(rcq, "rcq_size 8 gave the connection a receive CQ");
	cr_assert_neq(rcq, cq);
	cr_assert_eq(rpma_conn_get_compl_fd(d.p.cconn, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(rpma_cq_wait(cq), RPMA_E_SHARED_CHANNEL);
	cr_assert_eq(rpma_cq_wait(rcq), RPMA_E_SHARED_CHANNEL);

	/* a write completes on the main CQ; the shared channel says which queue fired */
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, 0, d.creg.mr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
				(void *)0x201),
		     0);
	struct rpma_cq *which = NULL;
	bool is_rcq = true;
	cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
	cr_assert_eq(rpma_conn_wait(d.p.cconn, 0, &which, &is_rcq), 0);
	cr_assert_eq(which, cq);
	cr_assert_eq(is_rcq, false);
	itest_expect_wc(cq, IBV_WC_RDMA_WRITE, (void *)0x201, NULL);
	itest_dpair_close(&d);

	/* from the (now changed) configuration: no receive CQ; defaults: no shared channel */
	struct itest_dpair e = {0};
	cr_assert_eq(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	itest_dpair_open(&e, cfg, NULL, NULL, NULL);
	rcq = (struct rpma_cq *)0x1;
	cr_assert_eq(rpma_conn_get_rcq(e.p.sconn, &rcq), 0);
	cr_assert_null(rcq);
	cr_assert_eq(rpma_conn_get_rcq(e.p.cconn, &rcq), 0);
	cr_assert_null(rcq);
	fd = -7;
	cr_assert_eq(rpma_conn_get_compl_fd(e.p.cconn, &fd), RPMA_E_NOT_SHARED_CHNL);
	cr_assert_eq(fd, -7);
	itest_dpair_close(&e);

	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	cr_assert_null(cfg);
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
}

/* ------------------------------------------------ shared receive queues */

/*
 * SRQ configuration: defaults, getters after setters, NULL arguments; a
 * queue without its own CQ set in a connection configuration receives a
 * message whose completion arrives on the connection's main CQ
 */
PROVIDER_TEST(api, srq_cfg_getters_and_effects)
{
	struct rpma_srq_cfg *qcfg = NULL;
	uint32_t v = 0;

	cr_assert_eq(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_new(&qcfg), 0);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(qcfg, &v), 0);
	cr_assert_eq(v, 20);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(qcfg, &v), 0);
	cr_assert_eq(v, 20);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(qcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(qcfg, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(NULL, 4), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_set_rcq_size(NULL, 4), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_cfg_set_rq_size(qcfg, 6), 0);
	cr_assert_eq(rpma_srq_cfg_get_rq_size(qcfg, &v), 0);
	cr_assert_eq(v, 6);
	cr_assert_eq(rpma_srq_cfg_set_rcq_size(qcfg, 0), 0);
	cr_assert_eq(rpma_srq_cfg_get_rcq_size(qcfg, &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(rpma_srq_cfg_delete(NULL), RPMA_E_INVAL);

	struct itest_pair p = {0};
	p.speer = itest_peer();
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(NULL, qcfg, &srq), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_new(p.speer, qcfg, &srq), 0);
	/* the queue keeps its own copy of the settings */
	cr_assert_eq(rpma_srq_cfg_delete(&qcfg), 0);
	cr_assert_null(qcfg);
	struct rpma_cq *qrcq = (struct rpma_cq *)0x1;
	cr_assert_eq(rpma_srq_get_rcq(srq, &qrcq), 0);
	cr_assert_null(qrcq, "rcq_size 0: the SRQ has no CQ of its own");

	struct rpma_conn_cfg *cfg = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&cfg), 0);
	cr_assert_eq(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_srq *got = NULL;
	cr_assert_eq(rpma_conn_cfg_get_srq(cfg, &got), 0);
	cr_assert_eq(got, srq);

	struct itest_region sreg, creg;
	itest_region_new(&sreg, p.speer, 4096, RPMA_MR_USAGE_RECV);
	p.cpeer = itest_peer();
	itest_region_new(&creg, p.cpeer, 4096, RPMA_MR_USAGE_SEND);
	cr_assert_eq(rpma_srq_recv(srq, sreg.mr, 128, 256, (void *)0x301), 0);

	itest_pair_open(&p, cfg, NULL, NULL, NULL, NULL, NULL);
	/* the configuration may go: the connection keeps its settings */
	cr_assert_eq(rpma_conn_cfg_delete(&cfg), 0);
	strcpy(creg.ptr, "to the shared queue");
	cr_assert_eq(rpma_send(p.cconn, creg.mr, 0, 20, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	struct rpma_cq *scq = NULL, *srcq = (struct rpma_cq *)0x1;
	cr_assert_eq(rpma_conn_get_cq(p.sconn, &scq), 0);
	cr_assert_eq(rpma_conn_get_rcq(p.sconn, &srcq), 0);
	cr_assert_null(srcq);
	struct ibv_wc wc;
	itest_expect_wc(scq, IBV_WC_RECV, (void *)0x301, &wc);
	cr_assert_eq(wc.byte_len, 20);
	cr_assert_str_eq((char *)sreg.ptr + 128, "to the shared queue");
	uint32_t qpn = 0;
	cr_assert_eq(rpma_conn_get_qp_num(p.sconn, &qpn), 0);
	cr_assert_eq(wc.qp_num, qpn, "the completion names the connection it came through");

	itest_conn_close(&p.cconn, &p.sconn);
	itest_region_delete(&creg);
	itest_region_delete(&sreg);
	cr_assert_eq(rpma_srq_delete(&srq), 0);
	cr_assert_null(srq);
	itest_pair_close(&p);
}

/* ------------------------------------------------ receives before accept, qp numbers, endpoints */

/*
 * endpoints refuse NULL arguments and a port already taken; a receive posted
 * on the request before accepting takes the first message; queue-pair
 * numbers identify each connection and appear in its completions
 */
PROVIDER_TEST(api, listen_req_recv_and_qp_num)
{
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	struct rpma_ep *ep = NULL, *ep2 = (struct rpma_ep *)0x1;

	cr_assert_eq(rpma_ep_listen(NULL, itest_ip(), "7999", &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(p.speer, NULL, "7999", &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(p.speer, itest_ip(), NULL, &ep), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_listen(p.speer, itest_ip(), "7999", NULL), RPMA_E_INVAL);
	cr_assert_null(ep);
	p.ep = itest_listen(p.speer, p.port);
	/* the port is taken by the endpoint just made */
	cr_assert_eq(rpma_ep_listen(p.speer, itest_ip(), p.port, &ep2), RPMA_E_PROVIDER);
	cr_assert_eq(ep2, (struct rpma_ep *)0x1, "a failed listen left the output alone");

	struct itest_region sreg, creg;
	itest_region_new(&sreg, p.speer, 4096, RPMA_MR_USAGE_RECV);
	itest_region_new(&creg, p.cpeer, 4096, RPMA_MR_USAGE_SEND);
	/* the connection set up step by step: the server posts receives on the request */
	struct rpma_conn_req *creq = NULL;
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, itest_ccfg(), &creq), 0);
	cr_assert_eq(rpma_conn_req_connect(&creq, NULL, &p.cconn), 0);
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	cr_assert_eq(rpma_conn_req_recv(NULL, sreg.mr, 0, 64, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_recv(sreq, NULL, 0, 64, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_recv(sreq, sreg.mr, sreg.size - 32, 64, NULL), RPMA_E_INVAL,
		     "a range beyond the region is refused");
	cr_assert_eq(rpma_conn_req_recv(sreq, sreg.mr, SIZE_MAX - 8, 64, NULL), RPMA_E_INVAL,
		     "a range that wraps is refused");
	cr_assert_eq(rpma_conn_req_recv(sreq, sreg.mr, 512, 128, (void *)0x401), 0);
	cr_assert_eq(rpma_conn_req_connect(&sreq, NULL, &p.sconn), 0);
	cr_assert_null(sreq);
	cr_assert_eq(itest_next_event(p.cconn), RPMA_CONN_ESTABLISHED);
	cr_assert_eq(itest_next_event(p.sconn), RPMA_CONN_ESTABLISHED);

	/* the message sent right after establishment finds the receive posted on the request */
	strcpy(creg.ptr, "first message");
	cr_assert_eq(rpma_send(p.cconn, creg.mr, 0, 14, RPMA_F_COMPLETION_ALWAYS, (void *)0x402),
		     0);
	struct rpma_cq *ccq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(p.cconn, &ccq), 0);
	cr_assert_eq(rpma_conn_get_cq(p.sconn, &scq), 0);
	struct ibv_wc wc;
	itest_expect_wc(ccq, IBV_WC_SEND, (void *)0x402, &wc);
	uint32_t cqpn = 0, sqpn = 0, again = 0;
	cr_assert_eq(rpma_conn_get_qp_num(NULL, &cqpn), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_qp_num(p.cconn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_qp_num(p.cconn, &cqpn), 0);
	cr_assert_eq(wc.qp_num, cqpn, "the send completion names the client's connection");
	itest_expect_wc(scq, IBV_WC_RECV, (void *)0x401, &wc);
	cr_assert_eq(wc.byte_len, 14);
	cr_assert_str_eq((char *)sreg.ptr + 512, "first message");
	cr_assert_eq(rpma_conn_get_qp_num(p.sconn, &sqpn), 0);
	cr_assert_eq(wc.qp_num, sqpn, "the receive completion names the server's connection");
	cr_assert_eq(rpma_conn_get_qp_num(p.sconn, &again), 0);
	cr_assert_eq(again, sqpn, "the number does not change during the connection");

	itest_conn_close(&p.cconn, &p.sconn);
	itest_region_delete(&creg);
	itest_region_delete(&sreg);
	itest_pair_close(&p);
}

/* ------------------------------------------------ logging */

/* what api_log_capture saw (the provider's threads may log too) */
static pthread_mutex_t api_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int api_log_count, api_log_errors;
static enum rpma_log_level api_log_last_level;
static char api_log_last[256];

/* api_log_capture -- a log function counting what reaches it */
static void api_log_capture(enum rpma_log_level level, const char *file_name, const int line_no,
			    const char *function_name, const char *message_format, ...)
{
	va_list ap;
	pthread_mutex_lock(&api_log_lock);
	api_log_count++;
	if (level == RPMA_LOG_LEVEL_ERROR)
		api_log_errors++;
	api_log_last_level = level;
	va_start(ap, message_format);
	vsnprintf(api_log_last, sizeof(api_log_last), message_format, ap);
	va_end(ap);
	pthread_mutex_unlock(&api_log_lock);
}

/* api_log_reset -- forget what was captured */
static void api_log_reset(void)
{
	pthread_mutex_lock(&api_log_lock);
	api_log_count = 0;
	api_log_errors = 0;
	api_log_last[0] = '\0';
	pthread_mutex_unlock(&api_log_lock);
}

/*
 * logging thresholds: refused values leave them alone; on a live
 * connection a refused operation logs one error through the installed
 * function when the main threshold lets errors through, and nothing when
 * it is FATAL or DISABLED
 */
PROVIDER_TEST(api, log_thresholds_on_connection)
{
	enum rpma_log_level main_lvl = RPMA_LOG_LEVEL_DEBUG, aux_lvl = RPMA_LOG_LEVEL_DEBUG, l;

	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &main_lvl), 0);
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &aux_lvl), 0);
	cr_assert(main_lvl >= RPMA_LOG_DISABLED && main_lvl <= RPMA_LOG_LEVEL_DEBUG);
	if (getenv("RPMA_LOG_LEVEL") == NULL)
		cr_assert_eq(aux_lvl, RPMA_LOG_DISABLED, "itest_begin() turned stderr off");
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL), RPMA_E_INVAL);
	l = RPMA_LOG_LEVEL_INFO;
	cr_assert_eq(rpma_log_get_threshold((enum rpma_log_threshold)7, &l), RPMA_E_INVAL);
	cr_assert_eq(l, RPMA_LOG_LEVEL_INFO, "a failed get left the output alone");
	cr_assert_eq(rpma_log_set_threshold((enum rpma_log_threshold)7, RPMA_LOG_LEVEL_ERROR),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)42),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level) - 2),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &l), 0);
	cr_assert_eq(l, main_lvl, "a refused level left the threshold alone");
	for (int lvl = RPMA_LOG_DISABLED; lvl <= RPMA_LOG_LEVEL_DEBUG; lvl++) {
		cr_assert_eq(
			rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, (enum rpma_log_level)lvl),
			0);
		cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &l), 0);
		cr_assert_eq((int)l, lvl);
	}
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, aux_lvl), 0);

	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	cr_assert_eq(rpma_log_set_function(api_log_capture), 0);

	/* errors let through: a read beyond the remote region is refused and logged once */
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR), 0);
	cr_assert_eq(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &l), 0);
	cr_assert_eq(l, RPMA_LOG_LEVEL_ERROR);
	api_log_reset();
	cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, ITEST_REGION_SIZE - 8, 64,
			       RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	pthread_mutex_lock(&api_log_lock);
	cr_assert_eq(api_log_errors, 1, "%d error lines (last: %s)", api_log_errors, api_log_last);
	cr_assert_eq(api_log_last_level, RPMA_LOG_LEVEL_ERROR);
	cr_assert_neq(api_log_last[0], '\0');
	pthread_mutex_unlock(&api_log_lock);

	/* FATAL only: the error is not produced at all */
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_FATAL), 0);
	api_log_reset();
	cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, ITEST_REGION_SIZE - 8, 64,
			       RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	pthread_mutex_lock(&api_log_lock);
	cr_assert_eq(api_log_errors, 0, "an error passed a FATAL threshold: %s", api_log_last);
	pthread_mutex_unlock(&api_log_lock);

	/* DISABLED: nothing at all while the connection works and refuses */
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	api_log_reset();
	cr_assert_eq(rpma_write(d.p.cconn, d.rmr, ITEST_REGION_SIZE, d.creg.mr, 0, 8,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(d.p.cconn, NULL), RPMA_E_INVAL);
	pthread_mutex_lock(&api_log_lock);
	cr_assert_eq(api_log_count, 0, "a message passed a disabled threshold: %s", api_log_last);
	pthread_mutex_unlock(&api_log_lock);

	/* the default function back, the threshold as it was */
	cr_assert_eq(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	cr_assert_eq(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, main_lvl), 0);
	api_log_reset();
	cr_assert_eq(rpma_read(d.p.cconn, d.creg.mr, 0, d.rmr, ITEST_REGION_SIZE - 8, 64,
			       RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	pthread_mutex_lock(&api_log_lock);
	cr_assert_eq(api_log_count, 0, "the removed function was still called");
	pthread_mutex_unlock(&api_log_lock);
	itest_dpair_close(&d);
}

/* ------------------------------------------------ texts */

/*
 * every error code and connection event has its own non-empty text, unknown
 * values get the documented fallback; the events a real connection reports
 * are among them
 */
PROVIDER_TEST(api, err_and_event_texts)
{
	static const int codes[] = {0,
				    RPMA_E_UNKNOWN,
				    RPMA_E_NOSUPP,
				    RPMA_E_PROVIDER,
				    RPMA_E_NOMEM,
				    RPMA_E_INVAL,
				    RPMA_E_NO_COMPLETION,
				    RPMA_E_NO_EVENT,
				    RPMA_E_AGAIN,
				    RPMA_E_SHARED_CHANNEL,
				    RPMA_E_NOT_SHARED_CHNL};
	const size_t ncodes = sizeof(codes) / sizeof(codes[0]);
	for (size_t i = 0; i < ncodes; i++) {
		const char *s = rpma_err_2str(codes[i]);
		cr_assert_not_null(s);
		cr_assert_neq(s[0], '\0');
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(s, rpma_err_2str(codes[j]),
					  "codes %d and %d share a text", codes[i], codes[j]);
	}
	cr_assert_str_eq(rpma_err_2str(-12345), rpma_err_2str(RPMA_E_UNKNOWN));
	cr_assert_str_eq(rpma_err_2str(1), rpma_err_2str(RPMA_E_UNKNOWN));

	static const enum rpma_conn_event evs[] = {RPMA_CONN_UNDEFINED, RPMA_CONN_ESTABLISHED,
						   RPMA_CONN_CLOSED,	RPMA_CONN_LOST,
						   RPMA_CONN_REJECTED,	RPMA_CONN_UNREACHABLE};
	const size_t nevs = sizeof(evs) / sizeof(evs[0]);
	const char *unknown = rpma_utils_conn_event_2str((enum rpma_conn_event)77);
	cr_assert_not_null(unknown);
	cr_assert_neq(unknown[0], '\0');
	for (size_t i = 0; i < nevs; i++) {
		const char *s = rpma_utils_conn_event_2str(evs[i]);
		cr_assert_not_null(s);
		cr_assert_neq(s[0], '\0');
		cr_assert_str_neq(s, unknown, "event %d has the unknown event's text", evs[i]);
		for (size_t j = 0; j < i; j++)
			cr_assert_str_neq(s, rpma_utils_conn_event_2str(evs[j]));
	}

	/* a real connection: its events and the errors it returns have those texts */
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	p.ep = itest_listen(p.speer, p.port);
	struct rpma_conn_req *req = NULL;
	cr_assert_eq(rpma_conn_req_new(p.cpeer, itest_ip(), p.port, itest_ccfg(), &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &p.cconn), 0);
	struct rpma_conn_req *sreq = itest_next_req(p.ep, NULL);
	cr_assert_eq(rpma_conn_req_connect(&sreq, NULL, &p.sconn), 0);
	enum rpma_conn_event ev = itest_next_event(p.cconn);
	cr_assert_str_eq(rpma_utils_conn_event_2str(ev),
			 rpma_utils_conn_event_2str(RPMA_CONN_ESTABLISHED));
	cr_assert_eq(itest_next_event(p.sconn), RPMA_CONN_ESTABLISHED);
	/* a non-blocking event descriptor: no event waiting is RPMA_E_NO_EVENT */
	int efd = -1;
	cr_assert_eq(rpma_conn_get_event_fd(p.cconn, &efd), 0);
	int fl = fcntl(efd, F_GETFL);
	cr_assert_geq(fl, 0);
	cr_assert_eq(fcntl(efd, F_SETFL, fl | O_NONBLOCK), 0);
	enum rpma_conn_event none = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(p.cconn, &none);
	cr_assert_eq(ret, RPMA_E_NO_EVENT, "a second event with nothing pending: %s",
		     rpma_err_2str(ret));
	cr_assert_str_eq(rpma_err_2str(ret), rpma_err_2str(RPMA_E_NO_EVENT));
	itest_pair_close(&p);
}

/* ------------------------------------------------ devices */

/* device handles: refused arguments, and the ODP answer each provider documents */
PROVIDER_TEST(api, device_odp_answer)
{
	struct ibv_context *dev = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(
		rpma_utils_get_ibv_context(itest_ip(), (enum rpma_util_ibv_context_type)9, &dev),
		RPMA_E_INVAL);
	cr_assert_null(dev);
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	int odp = 7;
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(NULL, &odp), RPMA_E_INVAL);
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(dev, NULL), RPMA_E_INVAL);
	cr_assert_eq(odp, 7, "a failed call left the output alone");
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(dev, &odp), 0);
	if (!itest_traits()->odp_possible)
		cr_assert_eq(odp, 0, "provider %s has no on-demand paging", prov);
	else
		cr_assert(odp == 0 || odp == 1);

	/* the same handle makes a peer that carries a connection */
	struct itest_pair p = {0};
	cr_assert_eq(rpma_peer_new(dev, &p.speer), 0);
	p.cpeer = itest_peer();
	itest_pair_open(&p, NULL, NULL, NULL, NULL, NULL, NULL);
	itest_pair_close(&p);
}

/* api_device_lookups -- look both kinds of address up n times: always the handles in first */
static void api_device_lookups(struct ibv_context *const first[2], int n)
{
	const enum rpma_util_ibv_context_type types[2] = {RPMA_UTIL_IBV_CONTEXT_LOCAL,
							  RPMA_UTIL_IBV_CONTEXT_REMOTE};
	for (int i = 0; i < n; i++) {
		for (int t = 0; t < 2; t++) {
			struct ibv_context *dev = NULL;
			cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), types[t], &dev), 0);
			cr_assert_eq(dev, first[t], "lookup %d of type %d: handle %p, first %p", i,
				     t, (void *)dev, (void *)first[t]);
		}
	}
}

/*
 * the same address gives the same handle every time, and looking it up again
 * costs no memory (programs such as fio's engines ask once per connection;
 * the handle is never freed by the application)
 */
PROVIDER_TEST(api, device_same_handle_no_growth)
{
	struct ibv_context *first[2] = {NULL, NULL};
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &first[0]),
		     0);
	cr_assert_eq(
		rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_REMOTE, &first[1]), 0);
	/* warm up whatever the libraries below set up once */
	api_device_lookups(first, 50);

	struct mallinfo2 before = mallinfo2();
	const int n = 5000;
	api_device_lookups(first, n);
	struct mallinfo2 after = mallinfo2();
	size_t grown = after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
	cr_assert_leq(grown, 4096, "the heap grew by %zu bytes over %d lookups of each kind", grown,
		      n);

	/* the handle still makes a peer */
	struct rpma_peer *peer = NULL;
	cr_assert_eq(rpma_peer_new(first[0], &peer), 0);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

extern char **environ;

/*
 * the first device lookup changes nothing in the process environment (a
 * setenv() there races with getenv() in the application's threads); the
 * setting the fabric provider needs from libfabric (its registration cache
 * off, see rpma_fabric(7)) was made when the library was loaded
 */
PROVIDER_TEST(api, device_lookup_leaves_environment)
{
	int n = 0;
	while (environ[n] != NULL)
		n++;
	char **copy = calloc((size_t)n + 1, sizeof(*copy));
	cr_assert_not_null(copy);
	for (int i = 0; i < n; i++) {
		copy[i] = strdup(environ[i]);
		cr_assert_not_null(copy[i]);
	}
#ifdef RPMA_HAVE_FABRIC
	cr_assert_not_null(getenv("FI_MR_CACHE_MAX_COUNT"),
			   "FI_MR_CACHE_MAX_COUNT is set when the library is loaded");
#endif

	struct ibv_context *dev = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	struct rpma_peer *peer = NULL;
	cr_assert_eq(rpma_peer_new(dev, &peer), 0);

	int m = 0;
	while (environ[m] != NULL)
		m++;
	for (int i = 0; i < m && i < n; i++)
		cr_assert_str_eq(environ[i], copy[i], "environment entry %d changed", i);
	cr_assert_eq(m, n, "the environment had %d entries and has %d after the lookup%s%s", n, m,
		     m > n ? ", the first new one: " : "", m > n ? environ[n] : "");
	cr_assert_eq(rpma_peer_delete(&peer), 0);
	for (int i = 0; i < n; i++)
		free(copy[i]);
	free(copy);
}

/* ------------------------------------------------ the 0.10-era calls */

/* post_imm_recv -- one receive for the write with immediate data */
static void post_imm_recv(struct rpma_conn_req *req, void *arg)
{
	struct itest_dpair *d = arg;
	cr_assert_eq(rpma_conn_req_recv(req, d->sreg.mr, 0, 64, (void *)0x501), 0);
}

/*
 * the deprecated calls on a live connection: refused arguments, an empty
 * queue, and the neutral completion of a write with immediate data
 */
PROVIDER_TEST(api, deprecated_calls)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, post_imm_recv, &d);
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	int fd = -1;
	cr_assert_eq(rpma_conn_get_completion_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_completion_fd(d.p.cconn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_completion_wait(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_completion_get(NULL, &cmpl), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_completion_get(d.p.cconn, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_completion_get(d.p.cconn, &cmpl), RPMA_E_NO_COMPLETION);
	struct rpma_cq *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	cr_assert_eq(rpma_cq_get_completion(NULL, &cmpl), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_completion(scq, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_completion(scq, &cmpl), RPMA_E_NO_COMPLETION);
	/* the atomic write takes 8 aligned bytes */
	cr_assert_eq(rpma_write_atomic(d.p.cconn, d.rmr, 4, d.creg.mr, 0, RPMA_F_COMPLETION_ALWAYS,
				       NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write_atomic(NULL, d.rmr, 0, d.creg.mr, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);

	/* a write with immediate data, seen through the neutral completion */
	strcpy(d.creg.ptr, "imm");
	cr_assert_eq(rpma_write_with_imm(d.p.cconn, d.rmr, 4096, d.creg.mr, 0, 4,
					 RPMA_F_COMPLETION_ALWAYS, 0xabcd1234, (void *)0x502),
		     0);
	int ret = RPMA_E_NO_COMPLETION;
	for (int i = 0; i < 5000 && ret == RPMA_E_NO_COMPLETION; i++) {
		ret = rpma_cq_get_completion(scq, &cmpl);
		if (ret == RPMA_E_NO_COMPLETION)
			usleep(1000);
	}
	cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
	cr_assert_eq(cmpl.op, RPMA_OP_RECV_RDMA_WITH_IMM);
	cr_assert_eq(cmpl.op_context, (void *)0x501);
	cr_assert_eq(cmpl.op_status, IBV_WC_SUCCESS);
	cr_assert(cmpl.flags & IBV_WC_WITH_IMM);
	cr_assert_eq(cmpl.imm, 0xabcd1234, "imm 0x%x, in host byte order", cmpl.imm);
	cr_assert_str_eq((char *)d.sreg.ptr + 4096, "imm");

	/* the writer's completion through the connection's calls */
	cr_assert_eq(rpma_conn_get_completion_fd(d.p.cconn, &fd), 0);
	ret = RPMA_E_NO_COMPLETION;
	for (int i = 0; i < 10 && ret == RPMA_E_NO_COMPLETION; i++) {
		cr_assert(itest_fd_ready(fd, ITEST_WAIT_MS));
		cr_assert_eq(rpma_conn_completion_wait(d.p.cconn), 0);
		ret = rpma_conn_completion_get(d.p.cconn, &cmpl);
	}
	cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
	cr_assert_eq(cmpl.op, RPMA_OP_WRITE);
	cr_assert_eq(cmpl.op_context, (void *)0x502);
	cr_assert_eq(cmpl.op_status, IBV_WC_SUCCESS);
#pragma GCC diagnostic pop
	itest_dpair_close(&d);
}

/* ------------------------------------------------ region descriptors */

/*
 * regions of three usages sent as descriptors (private data, a message): the
 * client's views report the size and the flush types of each, flushes follow
 * the usage, ranges beyond a region are refused; refused arguments on both
 * sides
 */
PROVIDER_TEST(api, mr_descriptors_over_connection)
{
	struct itest_pair p = {0};
	p.speer = itest_peer();
	p.cpeer = itest_peer();
	char *sbuf = itest_alloc(16384);
	struct rpma_mr_local *mr[3] = {NULL, NULL, NULL}, *none = NULL;
	const size_t size[3] = {8192, 4096, 4096};
	const int usage[3] = {RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			      RPMA_MR_USAGE_READ_SRC};
	const int ftype[3] = {RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, 0};
	char *base[3] = {sbuf, sbuf + 8192, sbuf + 12288};

	/* refused registrations leave the output alone */
	cr_assert_eq(rpma_mr_reg(NULL, sbuf, 4096, RPMA_MR_USAGE_READ_SRC, &none), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_reg(p.speer, NULL, 4096, RPMA_MR_USAGE_READ_SRC, &none), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_reg(p.speer, sbuf, 0, RPMA_MR_USAGE_READ_SRC, &none), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_reg(p.speer, sbuf, 4096, 0, &none), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_reg(p.speer, sbuf, 4096, 1 << 12, &none), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_reg(p.speer, sbuf, 4096, RPMA_MR_USAGE_READ_SRC, NULL), RPMA_E_INVAL);
	cr_assert_null(none);
	cr_assert_eq(rpma_mr_dereg(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_dereg(&none), 0);

	char pd[3 * 21];
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rpma_mr_reg(p.speer, base[i], size[i], usage[i], &mr[i]), 0);
		size_t ds = 0;
		cr_assert_eq(rpma_mr_get_descriptor_size(mr[i], &ds), 0);
		cr_assert_eq(ds, 21);
		cr_assert_eq(rpma_mr_get_descriptor(mr[i], pd + 21 * i), 0);
	}
	size_t ds = 5;
	void *ptr = (void *)0x5;
	cr_assert_eq(rpma_mr_get_descriptor_size(NULL, &ds), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor_size(mr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(ds, 5);
	cr_assert_eq(rpma_mr_get_descriptor(NULL, pd), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor(mr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_ptr(NULL, &ptr), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_ptr(mr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_size(NULL, &ds), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_size(mr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(ptr, (void *)0x5);
	cr_assert_eq(rpma_mr_get_ptr(mr[1], &ptr), 0);
	cr_assert_eq(ptr, base[1]);
	cr_assert_eq(rpma_mr_get_size(mr[1], &ds), 0);
	cr_assert_eq(ds, size[1]);

	/* advice: the range is checked first, then a provider without advice refuses it */
	cr_assert_eq(rpma_mr_advise(NULL, 0, 64, 0, 0), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_advise(mr[0], size[0] - 32, 64, 0, 0), RPMA_E_INVAL);
	if (!itest_traits()->mr_advise)
		cr_assert_eq(rpma_mr_advise(mr[0], 0, 64, 0, 0), RPMA_E_NOSUPP);

	/*
	 * two descriptors in the private data (42 bytes: libfabric's verbs
	 * carries 55), the third in a message
	 */
	struct rpma_conn_private_data spd = {.ptr = pd, .len = 2 * 21};
	itest_pair_open(&p, NULL, NULL, NULL, &spd, NULL, NULL);
	struct rpma_conn_private_data got = {0};
	cr_assert_eq(rpma_conn_get_private_data(p.cconn, &got), 0);
	itest_check_pdata(&got, pd, 2 * 21);
	struct itest_region creg, smsg;
	itest_region_new(&creg, p.cpeer, 8192,
			 RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_RECV);
	itest_region_new(&smsg, p.speer, 4096, RPMA_MR_USAGE_SEND);
	struct rpma_cq *cq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(p.cconn, &cq), 0);
	cr_assert_eq(rpma_conn_get_cq(p.sconn, &scq), 0);
	cr_assert_eq(rpma_recv(p.cconn, creg.mr, 4096, 64, (void *)0x610), 0);
	memcpy(smsg.ptr, pd + 2 * 21, 21);
	cr_assert_eq(rpma_send(p.sconn, smsg.mr, 0, 21, RPMA_F_COMPLETION_ALWAYS, (void *)0x611),
		     0);
	itest_expect_wc(scq, IBV_WC_SEND, (void *)0x611, NULL);
	struct ibv_wc wc;
	itest_expect_wc(cq, IBV_WC_RECV, (void *)0x610, &wc);
	cr_assert_eq(wc.byte_len, 21);

	/* the client's views of the three regions */
	struct rpma_mr_remote *rmr[3] = {NULL, NULL, NULL}, *bad = NULL;
	const char *desc = got.ptr;
	for (int i = 0; i < 3; i++) {
		const char *di = i < 2 ? desc + 21 * i : (const char *)creg.ptr + 4096;
		cr_assert_eq(rpma_mr_remote_from_descriptor(di, 21, &rmr[i]), 0);
		size_t rs = 0;
		int ft = -1;
		cr_assert_eq(rpma_mr_remote_get_size(rmr[i], &rs), 0);
		cr_assert_eq(rs, size[i]);
		cr_assert_eq(rpma_mr_remote_get_flush_type(rmr[i], &ft), 0);
		cr_assert_eq(ft, ftype[i], "region %d: flush type 0x%x", i, ft);
	}
	int ft = -1;
	cr_assert_eq(rpma_mr_remote_get_flush_type(NULL, &ft), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_get_flush_type(rmr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(ft, -1);
	cr_assert_eq(rpma_mr_remote_get_size(NULL, &ds), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_get_size(rmr[0], NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_from_descriptor(NULL, 21, &bad), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 20, &bad), RPMA_E_INVAL);
	char zero_usage[21];
	memcpy(zero_usage, desc, 21);
	zero_usage[20] = 0;
	cr_assert_eq(rpma_mr_remote_from_descriptor(zero_usage, 21, &bad), RPMA_E_INVAL);
	cr_assert_null(bad);
	cr_assert_eq(rpma_mr_remote_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_delete(&bad), 0);

	/* the server declares direct write, so only the usage decides the flush type */
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_new(&pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(p.cconn, pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);

	/* region 0: the last 64 bytes written and made visible; one byte more is refused */
	memset(creg.ptr, 0x3c, 64);
	cr_assert_eq(rpma_write(p.cconn, rmr[0], size[0] - 64, creg.mr, 0, 64,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	cr_assert_eq(rpma_write(p.cconn, rmr[0], size[0] - 63, creg.mr, 0, 64,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(p.cconn, rmr[0], size[0] - 64, 64, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP, "region 0 may not be flushed to persistence");
	cr_assert_eq(rpma_flush(p.cconn, rmr[0], size[0] - 64, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x601),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x601, NULL);
	cr_assert_eq(memcmp(base[0] + size[0] - 64, creg.ptr, 64), 0);

	/* region 1: persistence only */
	cr_assert_eq(rpma_flush(p.cconn, rmr[1], 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP, "region 1 may not be flushed for visibility");
	cr_assert_eq(
		rpma_write(p.cconn, rmr[1], 0, creg.mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, NULL),
		0);
	int ret = rpma_flush(p.cconn, rmr[1], 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
			     RPMA_F_COMPLETION_ALWAYS, (void *)0x602);
	if (itest_traits()->persistent_flush) {
		cr_assert_eq(ret, 0, "%s", rpma_err_2str(ret));
		itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x602, NULL);
		cr_assert_eq(memcmp(base[1], creg.ptr, 64), 0);
	} else {
		cr_assert_eq(ret, RPMA_E_NOSUPP, "%s", rpma_err_2str(ret));
	}

	/* region 2: read back whole, no flush of any type, nothing beyond its end */
	for (size_t i = 0; i < size[2]; i++)
		base[2][i] = (char)(i * 7 + 1);
	cr_assert_eq(rpma_read(p.cconn, creg.mr, 0, rmr[2], 0, size[2], RPMA_F_COMPLETION_ALWAYS,
			       (void *)0x603),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x603, NULL);
	cr_assert_eq(memcmp(creg.ptr, base[2], size[2]), 0);
	cr_assert_eq(
		rpma_read(p.cconn, creg.mr, 0, rmr[2], 1, size[2], RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(p.cconn, rmr[2], 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP);

	itest_conn_close(&p.cconn, &p.sconn);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rpma_mr_remote_delete(&rmr[i]), 0);
		cr_assert_null(rmr[i]);
		cr_assert_eq(rpma_mr_dereg(&mr[i]), 0);
		cr_assert_null(mr[i]);
	}
	itest_region_delete(&creg);
	itest_region_delete(&smsg);
	free(sbuf);
	itest_pair_close(&p);
}

/* ------------------------------------------------ refused calls on a live connection */

/* api_round_trip -- a write, a visibility flush and a read back still work on d */
static void api_round_trip(struct itest_dpair *d, unsigned char pattern)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(d->p.cconn, &cq), 0);
	memset(d->creg.ptr, pattern, 256);
	cr_assert_eq(rpma_write(d->p.cconn, d->rmr, 8192, d->creg.mr, 0, 256,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	cr_assert_eq(rpma_flush(d->p.cconn, d->rmr, 8192, 256, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, (void *)0x701),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x701, NULL);
	cr_assert_eq(rpma_read(d->p.cconn, d->creg.mr, 4096, d->rmr, 8192, 256,
			       RPMA_F_COMPLETION_ALWAYS, (void *)0x702),
		     0);
	itest_expect_wc(cq, IBV_WC_RDMA_READ, (void *)0x702, NULL);
	cr_assert_eq(memcmp((char *)d->creg.ptr + 4096, d->creg.ptr, 256), 0);
	cr_assert_eq(memcmp((char *)d->sreg.ptr + 8192, d->creg.ptr, 256), 0);
}

/*
 * every documented refusal of the connection's calls (NULL arguments,
 * flags, ranges, alignment, sizes) posts nothing, raises no event and
 * leaves the connection working; a refused accept rejects the request; a
 * peer deleted while in use keeps serving its connection
 */
PROVIDER_TEST(api, refusals_on_live_connection)
{
	struct itest_dpair d = {0};
	itest_dpair_open(&d, NULL, NULL, NULL, NULL);
	struct rpma_conn *c = d.p.cconn;
	struct rpma_mr_remote *r = d.rmr;
	struct rpma_mr_local *l = d.creg.mr;
	const size_t lsize = ITEST_REGION_SIZE, rsize = ITEST_REGION_SIZE;
	const int badflags[] = {0, 0x4, 0x103};
	void *ctx = (void *)0x7ff;

	for (size_t i = 0; i < sizeof(badflags) / sizeof(badflags[0]); i++) {
		int f = badflags[i];
		cr_assert_eq(rpma_read(c, l, 0, r, 0, 8, f, ctx), RPMA_E_INVAL, "flags 0x%x", f);
		cr_assert_eq(rpma_write(c, r, 0, l, 0, 8, f, ctx), RPMA_E_INVAL, "flags 0x%x", f);
		cr_assert_eq(rpma_write_with_imm(c, r, 0, l, 0, 8, f, 1, ctx), RPMA_E_INVAL);
		cr_assert_eq(rpma_atomic_write(c, r, 0, "12345678", f, ctx), RPMA_E_INVAL);
		cr_assert_eq(rpma_flush(c, r, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, ctx),
			     RPMA_E_INVAL);
		cr_assert_eq(rpma_send(c, l, 0, 8, f, ctx), RPMA_E_INVAL);
		cr_assert_eq(rpma_send_with_imm(c, l, 0, 8, f, 1, ctx), RPMA_E_INVAL);
	}
	const int ok = RPMA_F_COMPLETION_ALWAYS;
	/* no connection */
	cr_assert_eq(rpma_read(NULL, l, 0, r, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(NULL, r, 0, l, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(NULL, r, 0, l, 0, 8, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(NULL, r, 0, "12345678", ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(NULL, r, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(NULL, l, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(NULL, l, 0, 8, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(NULL, l, 0, 8, ctx), RPMA_E_INVAL);
	/* one side of a transfer missing, or none while a length is given */
	cr_assert_eq(rpma_read(c, NULL, 0, r, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_read(c, l, 0, NULL, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_read(c, NULL, 0, NULL, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, NULL, 0, l, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, r, 0, NULL, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, NULL, 0, NULL, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(c, NULL, 0, l, 0, 8, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(c, NULL, 0, "12345678", ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(c, r, 0, NULL, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(c, NULL, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(c, NULL, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(c, NULL, 0, 8, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(c, NULL, 0, 8, ctx), RPMA_E_INVAL);
	/* ranges beyond a region, local or remote, and sums that wrap */
	cr_assert_eq(rpma_read(c, l, lsize - 4, r, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_read(c, l, 0, r, rsize - 4, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_read(c, l, SIZE_MAX - 2, r, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, r, rsize - 4, l, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, r, 0, l, lsize - 4, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(c, r, SIZE_MAX - 2, l, 0, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(c, r, rsize, l, 0, 1, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(c, r, rsize - 4, 8, RPMA_FLUSH_TYPE_VISIBILITY, ok, ctx),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(c, r, 0, 8, (enum rpma_flush_type)7, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(c, l, lsize - 4, 8, ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(c, l, SIZE_MAX, 2, ok, 1, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(c, l, lsize - 4, 8, ctx), RPMA_E_INVAL);
	/* an atomic write: 8 aligned bytes inside the region */
	cr_assert_eq(rpma_atomic_write(c, r, 4, "12345678", ok, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(c, r, rsize, "12345678", ok, ctx), RPMA_E_INVAL);

	/* completion queues and connection getters */
	struct rpma_cq *cq = NULL, *scq = NULL;
	cr_assert_eq(rpma_conn_get_cq(NULL, &cq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_cq(c, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_rcq(NULL, &cq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_rcq(c, NULL), RPMA_E_INVAL);
	cr_assert_null(cq);
	cr_assert_eq(rpma_conn_get_cq(c, &cq), 0);
	cr_assert_eq(rpma_conn_get_cq(d.p.sconn, &scq), 0);
	struct ibv_wc wc[2];
	int got = -5, fd = -5;
	cr_assert_eq(rpma_cq_get_wc(NULL, 1, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 0, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, -1, wc, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 1, NULL, &got), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_wc(cq, 2, wc, NULL), RPMA_E_INVAL);
	cr_assert_eq(got, -5);
	cr_assert_eq(rpma_cq_get_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_fd(cq, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_wait(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_event_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_event_fd(c, NULL), RPMA_E_INVAL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	cr_assert_eq(rpma_conn_next_event(NULL, &ev), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_next_event(c, NULL), RPMA_E_INVAL);
	struct rpma_conn_private_data pd = {0};
	cr_assert_eq(rpma_conn_get_private_data(NULL, &pd), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_private_data(c, NULL), RPMA_E_INVAL);
	struct rpma_cq *which = NULL;
	bool is_rcq = false;
	cr_assert_eq(rpma_conn_wait(NULL, 0, &which, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_wait(c, 0, NULL, &is_rcq), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_wait(c, 0, &which, &is_rcq), RPMA_E_NOT_SHARED_CHNL);
	cr_assert_eq(rpma_conn_get_compl_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(fd, -5);
	cr_assert_eq(rpma_conn_disconnect(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_get_fd(NULL, &fd), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_get_fd(d.p.ep, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_shutdown(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_delete(NULL), RPMA_E_INVAL);
	struct rpma_peer *np = NULL;
	struct ibv_context *dev = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(itest_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev), 0);
	cr_assert_eq(rpma_peer_new(NULL, &np), RPMA_E_INVAL);
	cr_assert_eq(rpma_peer_new(dev, NULL), RPMA_E_INVAL);
	struct rpma_srq *srq = NULL;
	cr_assert_eq(rpma_srq_new(d.p.speer, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_get_rcq(NULL, &cq), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_recv(NULL, l, 0, 8, ctx), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_srq_delete(&srq), 0);

	/* nothing was posted, no event came, the connection works */
	cr_assert_eq(itest_wc(cq, wc, 50), RPMA_E_NO_COMPLETION, "a refused call posted something");
	cr_assert_eq(itest_wc(scq, wc, 10), RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_conn_get_event_fd(c, &fd), 0);
	cr_assert_not(itest_fd_ready(fd, 0), "a refused call raised a connection event");
	api_round_trip(&d, 0x5a);

	/* requests: refused settings, and an accept refused for its private data rejects */
	struct rpma_conn_cfg *bad = NULL;
	cr_assert_eq(rpma_conn_cfg_new(&bad), 0);
	cr_assert_eq(rpma_conn_cfg_set_sq_size(bad, 0), 0);
	struct rpma_conn_req *req = NULL;
	cr_assert_eq(rpma_conn_req_new(NULL, itest_ip(), d.p.port, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, NULL, d.p.port, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), NULL, NULL, &req), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, bad, &req), RPMA_E_INVAL,
		     "sq_size 0 is refused when the request is built");
	cr_assert_null(req);
	cr_assert_eq(rpma_conn_req_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, NULL, &req), 0);
	struct rpma_conn *c2 = NULL, *s2 = (struct rpma_conn *)0x1;
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, NULL), RPMA_E_INVAL);
	cr_assert_null(req, "a refused connect consumes the request");
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &c2), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_connect(NULL, NULL, &c2), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, itest_ccfg(), &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &c2), 0);
	struct rpma_conn_req *sreq = NULL;
	cr_assert_eq(rpma_ep_next_conn_req(NULL, NULL, &sreq), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_next_conn_req(d.p.ep, NULL, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_ep_next_conn_req(d.p.ep, bad, &sreq), RPMA_E_INVAL);
	cr_assert_null(sreq);
	/* the refusals did not consume the waiting request */
	sreq = itest_next_req(d.p.ep, NULL);
	char byte = 1;
	struct rpma_conn_private_data nopd = {.ptr = NULL, .len = 1},
				      zero = {.ptr = &byte, .len = 0};
	cr_assert_eq(rpma_conn_req_connect(&sreq, &zero, &s2), RPMA_E_INVAL);
	cr_assert_null(sreq);
	cr_assert_eq(s2, (struct rpma_conn *)0x1);
	ev = itest_next_event(c2);
	cr_assert_eq(ev, RPMA_CONN_REJECTED, "the client got %s", rpma_utils_conn_event_2str(ev));
	cr_assert_eq(rpma_conn_delete(&c2), 0);
	cr_assert_null(c2);
	/* the same with a NULL pointer for the private data, from a fresh request */
	cr_assert_eq(rpma_conn_req_new(d.p.cpeer, itest_ip(), d.p.port, itest_ccfg(), &req), 0);
	cr_assert_eq(rpma_conn_req_connect(&req, NULL, &c2), 0);
	sreq = itest_next_req(d.p.ep, NULL);
	cr_assert_eq(rpma_conn_req_connect(&sreq, &nopd, &s2), RPMA_E_INVAL);
	cr_assert_null(sreq);
	ev = itest_next_event(c2);
	cr_assert_eq(ev, RPMA_CONN_REJECTED, "the client got %s", rpma_utils_conn_event_2str(ev));
	cr_assert_eq(rpma_conn_delete(&c2), 0);
	cr_assert_eq(rpma_conn_cfg_delete(&bad), 0);

	/* the client's peer deleted while its connection and region live: refused, yet it serves */
	cr_assert_eq(rpma_peer_delete(&d.p.cpeer), RPMA_E_PROVIDER);
	cr_assert_null(d.p.cpeer);
	api_round_trip(&d, 0xa5);
	itest_dpair_close(&d);
}
