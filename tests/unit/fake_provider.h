/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_provider.h -- a scripted in-memory provider for the unit tests of the core
 *
 * Two provider tables share one implementation: fake_provider_verbs (name
 * "verbs", RPMA_PROV_CAP_IBV_CONTEXT, every optional op) and
 * fake_provider_fabric (name "fabric", opaque devices, no optional op but
 * device_put).  Every op call is appended to a call log with its key
 * arguments; results can be scripted per op (fake_fail_next) or by the
 * position of the call (fake_fail_call); objects initialised by the
 * provider are counted so that a test can check that everything was
 * released; protocol violations of the core (an op on an object that was
 * never initialised, a double tear-down, a length beyond a local region)
 * are counted too.
 */

#ifndef FAKE_PROVIDER_H
#define FAKE_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "provider.h"

enum fake_op {
	FAKE_OP_DEVICE_GET,
	FAKE_OP_DEVICE_PUT,
	FAKE_OP_DEVICE_IS_ODP_CAPABLE,
	FAKE_OP_PEER_INIT,
	FAKE_OP_PEER_FINI,
	FAKE_OP_MR_REG,
	FAKE_OP_MR_DEREG,
	FAKE_OP_MR_ADVISE,
	FAKE_OP_EP_LISTEN,
	FAKE_OP_EP_SHUTDOWN,
	FAKE_OP_EP_GET_FD,
	FAKE_OP_EP_NEXT_CONN_REQ,
	FAKE_OP_CONN_REQ_NEW,
	FAKE_OP_CONN_REQ_DELETE,
	FAKE_OP_CONN_REQ_CONNECT,
	FAKE_OP_CONN_REQ_RECV,
	FAKE_OP_CONN_GET_EVENT_FD,
	FAKE_OP_CONN_NEXT_EVENT,
	FAKE_OP_CONN_DISCONNECT,
	FAKE_OP_CONN_DELETE,
	FAKE_OP_CONN_GET_QP_NUM,
	FAKE_OP_CONN_GET_COMPL_FD,
	FAKE_OP_CONN_WAIT,
	FAKE_OP_READ,
	FAKE_OP_WRITE,
	FAKE_OP_ATOMIC_WRITE,
	FAKE_OP_FLUSH,
	FAKE_OP_SEND,
	FAKE_OP_RECV,
	FAKE_OP_CQ_GET_FD,
	FAKE_OP_CQ_WAIT,
	FAKE_OP_CQ_POLL,
	FAKE_OP_SRQ_NEW,
	FAKE_OP_SRQ_DELETE,
	FAKE_OP_SRQ_RECV,
	FAKE_OP_MAX
};

/* the kinds of objects whose provider state the fake initialises */
enum fake_obj {
	FAKE_OBJ_PEER,
	FAKE_OBJ_MR,
	FAKE_OBJ_EP,
	FAKE_OBJ_CONN,
	FAKE_OBJ_CQ,
	FAKE_OBJ_SRQ,
	FAKE_OBJ_MAX
};

/* which of the two fake providers */
enum fake_prov { FAKE_PROV_NONE = -1, FAKE_PROV_VERBS = 0, FAKE_PROV_FABRIC = 1 };

/* the largest private data the fake transport carries (like rdma_cm's RDMA_PS_TCP) */
#define FAKE_PDATA_MAX 56

/* one recorded op call; fields an op does not have stay zero */
struct fake_call {
	enum fake_op op;
	enum fake_prov prov; /* the provider whose table was called, if known */
	int ret;	     /* what the op returned */
	const void *obj;     /* peer, mr, ep, request/connection, cq or srq (the core object) */
	const void *obj2;    /* the second object: peer of mr_reg/ep_listen, conn of connect */
	const void *mr;	     /* the local region of a data-path op, or NULL */
	void *dev;	     /* device of device_*, peer_init */
	char addr[64];
	char port[16];
	int type; /* device type, flush type */
	const void *ptr;
	size_t size;
	int usage;
	size_t offset;
	size_t len;
	uint64_t raddr;
	uint64_t rkey;
	int flags;
	bool with_imm;
	uint32_t imm;
	const void *op_context;
	int num_entries;
	int advice;
	uint32_t advice_flags;
	char src8[8];
	uint32_t rq_size;
	uint32_t rcq_size;
	const void *rcq;
	bool has_setup;
	struct rpma_conn_setup setup;
	int pdata_len; /* -1: pdata pointer NULL */
	uint8_t pdata[256];
};

extern const struct rpma_provider fake_provider_verbs;
extern const struct rpma_provider fake_provider_fabric;

/* the device the fake "verbs" provider hands out (a real-looking struct ibv_context) */
extern struct ibv_context fake_ibv_ctx;
/* the provider data the fake "fabric" provider hands out for its device */
void *fake_fabric_dev(void);

/* fake_reset -- forget the call log and every script; live counters are kept */
void fake_reset(void);

/* ----- the call log */
int fake_call_count(enum fake_op op);
int fake_calls_total(void);
/* fake_last_call -- the last call of op, or NULL */
const struct fake_call *fake_last_call(enum fake_op op);
/* fake_nth_call -- the n-th (0-based) call of op, or NULL */
const struct fake_call *fake_nth_call(enum fake_op op, int n);
/* fake_op_name -- "mr_reg" etc. */
const char *fake_op_name(enum fake_op op);

/* ----- scripted results */
/* fake_fail_next -- the next call of op returns ret and does nothing (ret may also be >= 0 for cq_poll) */
void fake_fail_next(enum fake_op op, int ret);
/* fake_fail_call -- the n-th (1-based) failable op call from now returns ret (0 disables) */
void fake_fail_call(int n, int ret);
/* fake_injected -- how many scripted failures have fired since the last reset */
int fake_injected(void);

/* ----- device selection and capabilities */
void fake_set_serves(enum fake_prov prov, bool serves);
void fake_set_odp_capable(bool capable);
void fake_set_peer_caps(uint64_t caps);
/*
 * the largest message the fake "verbs" declares (peer_max_msg_size) for peers
 * opened from now: FAKE_MAX_MSG_SIZE after a reset; the fake "fabric"
 * declares none
 */
#define FAKE_MAX_MSG_SIZE 4096
void fake_set_max_msg_size(size_t max);

/* ----- memory registration */
/* fake_set_mr_keys -- offset addressing (raddr 0) or the region's address; the next rkey */
void fake_set_mr_keys(bool offset_addressing, uint64_t rkey);

/* ----- endpoint and connections */
/* fake_push_conn_req -- queue an incoming connection request carrying pdata (len 0: none) */
void fake_push_conn_req(const void *pdata, uint8_t len);
/* fake_push_conn_event -- queue a connection event (pdata only meaningful with ESTABLISHED) */
void fake_push_conn_event(enum rpma_conn_event event, const void *pdata, uint8_t len);
/* fake_push_conn_wait -- queue the answer of the next conn_wait */
void fake_push_conn_wait(bool is_rcq);
void fake_set_qp_num(uint32_t qp_num);

/* ----- completions */
/* fake_cq_push_wc -- queue a completion on a CQ the fake initialised */
void fake_cq_push_wc(const struct rpma_cq *cq, const struct ibv_wc *wc);

/* ----- accounting */
int fake_live(enum fake_obj obj);
int fake_live_total(void);
int fake_violations(void);
const char *fake_last_violation(void);
/* fake_fds_open -- how many fds the fake has open */
int fake_fds_open(void);

#endif /* FAKE_PROVIDER_H */
