/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * collect.h -- waiting on a connection's shared completion channel, used by
 * both sides of the shared-channel example
 *
 * With rpma_conn_cfg_set_compl_channel(cfg, true) the main CQ and the
 * receive CQ signal through one channel: rpma_conn_wait() sleeps on it,
 * says which CQ fired and re-arms that CQ; the completions are then taken
 * from that CQ with rpma_cq_get_wc() until it is empty.  Taking completions
 * only from the CQ that fired keeps the bookkeeping simple and exact: a CQ
 * that holds a completion has always either signalled already (and will be
 * reported by the next rpma_conn_wait()) or is armed and will signal.  A
 * wake-up may find nothing new (its completion was taken after an earlier
 * wake-up); that is normal.
  */

#ifndef SHARED_CHANNEL_COLLECT_H
#define SHARED_CHANNEL_COLLECT_H 1

#include "../common/common.h"

/* what the connection has produced so far */
struct tally {
	unsigned sends;	  /* send completions (main CQ) */
	unsigned recvs;	  /* receive completions (receive CQ) */
	unsigned wakeups; /* how often rpma_conn_wait() returned */
	unsigned on_rcq;  /* ... of which for the receive CQ */
};

/* drain -- take whatever cq holds; sends must be on the main CQ, receives on the RCQ */
static inline int drain(struct rpma_cq *cq, bool is_rcq, struct tally *t)
{
	struct ibv_wc wc;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, NULL)) == 0) {
		ret = ex_check_wc(&wc, is_rcq ? IBV_WC_RECV : IBV_WC_SEND, NULL);
		if (ret)
			return ret;
		if (is_rcq)
			t->recvs++;
		else
			t->sends++;
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		ex_fail("rpma_cq_get_wc", ret);
		return ret;
	}
	return 0;
}

/* collect -- wait on the shared channel until the tally reaches the wanted counts */
static inline int collect(struct rpma_conn *conn, unsigned sends, unsigned recvs, struct tally *t)
{
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int ret = rpma_conn_get_cq(conn, &cq);
	if (ret == 0)
		ret = rpma_conn_get_rcq(conn, &rcq);
	if (ret) {
		ex_fail("rpma_conn_get_cq/rcq", ret);
		return ret;
	}
	while (t->sends < sends || t->recvs < recvs) {
		struct rpma_cq *fired = NULL;
		bool is_rcq = false;
		ret = rpma_conn_wait(conn, 0, &fired, &is_rcq);
		if (ret) {
			ex_fail("rpma_conn_wait", ret);
			return ret;
		}
		if (fired != (is_rcq ? rcq : cq)) {
			ex_msg("rpma_conn_wait() named a CQ that does not match is_rcq");
			return EX_E_FAIL;
		}
		t->wakeups++;
		if (is_rcq)
			t->on_rcq++;
		ret = drain(fired, is_rcq, t);
		if (ret)
			return ret;
	}
	return 0;
}

#endif /* SHARED_CHANNEL_COLLECT_H */
