/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_provider.c -- a scripted in-memory provider for the unit tests of the core */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake_provider.h"

#define MAGIC_PEER 0x70656572u
#define MAGIC_MR   0x6d720000u
#define MAGIC_EP   0x65700000u
#define MAGIC_CONN 0x636f6e6eu
#define MAGIC_CQ   0x63710000u
#define MAGIC_SRQ  0x73727100u

#define CQ_QUEUE_MAX 32
#define QUEUE_MAX    32

/* the provider state of each object */
struct fake_peer {
	uint32_t magic;
	enum fake_prov prov;
	void *dev;
	size_t max_msg_size; /* what peer_max_msg_size answers (the fake "verbs" only) */
};

struct fake_mr {
	uint32_t magic;
	enum fake_prov prov;
	void *ptr;
	size_t size;
	int usage;
};

struct fake_ep {
	uint32_t magic;
	int fd;
};

struct fake_cq {
	uint32_t magic;
	int fd;	     /* own eventfd, or -1 when the CQ uses the connection's shared channel */
	bool shared; /* signals through a shared channel */
	int head;
	int count;
	struct ibv_wc wc[CQ_QUEUE_MAX];
};

enum conn_state { CONN_NONE = 0, CONN_REQ, CONN_CONNECTED };

struct fake_conn {
	uint32_t magic;
	enum conn_state state;
	bool incoming;
	bool shared;
	int event_fd;
	int compl_fd;
	struct rpma_cq *cq;
	struct rpma_cq *rcq;
	struct rpma_srq *srq;
};

struct fake_srq {
	uint32_t magic;
	struct rpma_cq *rcq;
};

/* a queued connection event or request */
struct fake_event {
	int event;
	uint8_t len;
	uint8_t pdata[255];
};

struct ibv_context fake_ibv_ctx;
static int fabric_dev_storage;

static struct {
	struct fake_call *calls;
	int ncalls;
	int capacity;
	struct {
		bool armed;
		int ret;
	} next[FAKE_OP_MAX];
	int fail_at;
	int fail_ret;
	int failable_calls;
	int injected;

	bool serves[2];
	bool odp;
	uint64_t peer_caps;
	bool offset_addressing;
	size_t max_msg_size;
	uint64_t rkey;
	uint32_t qp_num;

	struct fake_event reqs[QUEUE_MAX];
	int nreqs, reqs_head;
	struct fake_event events[QUEUE_MAX];
	int nevents, events_head;
	bool waits[QUEUE_MAX];
	int nwaits, waits_head;
} F = {
	.serves = {true, true},
	.max_msg_size = FAKE_MAX_MSG_SIZE,
	.rkey = 0x1234abcd,
	.qp_num = 0x2a,
};

static int live[FAKE_OBJ_MAX];
static int violations;
static char last_violation[256];
static int fds_open;

static const char *const op_names[FAKE_OP_MAX] = {
	[FAKE_OP_DEVICE_GET] = "device_get",
	[FAKE_OP_DEVICE_PUT] = "device_put",
	[FAKE_OP_DEVICE_IS_ODP_CAPABLE] = "device_is_odp_capable",
	[FAKE_OP_PEER_INIT] = "peer_init",
	[FAKE_OP_PEER_FINI] = "peer_fini",
	[FAKE_OP_MR_REG] = "mr_reg",
	[FAKE_OP_MR_DEREG] = "mr_dereg",
	[FAKE_OP_MR_ADVISE] = "mr_advise",
	[FAKE_OP_EP_LISTEN] = "ep_listen",
	[FAKE_OP_EP_SHUTDOWN] = "ep_shutdown",
	[FAKE_OP_EP_GET_FD] = "ep_get_fd",
	[FAKE_OP_EP_NEXT_CONN_REQ] = "ep_next_conn_req",
	[FAKE_OP_CONN_REQ_NEW] = "conn_req_new",
	[FAKE_OP_CONN_REQ_DELETE] = "conn_req_delete",
	[FAKE_OP_CONN_REQ_CONNECT] = "conn_req_connect",
	[FAKE_OP_CONN_REQ_RECV] = "conn_req_recv",
	[FAKE_OP_CONN_GET_EVENT_FD] = "conn_get_event_fd",
	[FAKE_OP_CONN_NEXT_EVENT] = "conn_next_event",
	[FAKE_OP_CONN_DISCONNECT] = "conn_disconnect",
	[FAKE_OP_CONN_DELETE] = "conn_delete",
	[FAKE_OP_CONN_GET_QP_NUM] = "conn_get_qp_num",
	[FAKE_OP_CONN_GET_COMPL_FD] = "conn_get_compl_fd",
	[FAKE_OP_CONN_WAIT] = "conn_wait",
	[FAKE_OP_READ] = "read",
	[FAKE_OP_WRITE] = "write",
	[FAKE_OP_ATOMIC_WRITE] = "atomic_write",
	[FAKE_OP_FLUSH] = "flush",
	[FAKE_OP_SEND] = "send",
	[FAKE_OP_RECV] = "recv",
	[FAKE_OP_CQ_GET_FD] = "cq_get_fd",
	[FAKE_OP_CQ_WAIT] = "cq_wait",
	[FAKE_OP_CQ_POLL] = "cq_poll",
	[FAKE_OP_SRQ_NEW] = "srq_new",
	[FAKE_OP_SRQ_DELETE] = "srq_delete",
	[FAKE_OP_SRQ_RECV] = "srq_recv",
};

/* fake_op_name -- the name of an op */
const char *fake_op_name(enum fake_op op)
{
	if ((int)op < 0 || op >= FAKE_OP_MAX)
		return "?";
	return op_names[op];
}

/* violation -- remember that the core broke a rule of the provider boundary */
__attribute__((format(printf, 1, 2))) static void violation(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_violation, sizeof(last_violation), fmt, ap);
	va_end(ap);
	violations++;
	fprintf(stderr, "fake provider: core violated the boundary: %s\n", last_violation);
}

/* record -- append a call to the log and return it for the op to fill in */
static struct fake_call *record(enum fake_op op, enum fake_prov prov)
{
	if (F.ncalls == F.capacity) {
		int cap = F.capacity ? 2 * F.capacity : 256;
		struct fake_call *c = realloc(F.calls, (size_t)cap * sizeof(*c));
		if (c == NULL)
			abort();
		F.calls = c;
		F.capacity = cap;
	}
	struct fake_call *c = &F.calls[F.ncalls++];
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->prov = prov;
	c->pdata_len = -1;
	return c;
}

/* injected -- should this call fail with a scripted result? */
static bool injected(enum fake_op op, int *ret)
{
	if (F.next[op].armed) {
		F.next[op].armed = false;
		*ret = F.next[op].ret;
		F.injected++;
		return true;
	}
	F.failable_calls++;
	if (F.fail_at > 0 && F.failable_calls == F.fail_at) {
		*ret = F.fail_ret;
		F.injected++;
		return true;
	}
	return false;
}

/* new_fd -- an eventfd standing for a transport's notification channel */
static int new_fd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		abort();
	fds_open++;
	return fd;
}

/* close_fd -- close an fd made by new_fd() */
static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		fds_open--;
	}
	*fd = -1;
}

/* ----- public helpers */

/* fake_reset -- forget the call log and every script */
void fake_reset(void)
{
	free(F.calls);
	memset(&F, 0, sizeof(F));
	F.serves[0] = F.serves[1] = true;
	F.max_msg_size = FAKE_MAX_MSG_SIZE;
	F.rkey = 0x1234abcd;
	F.qp_num = 0x2a;
	violations = 0;
	last_violation[0] = '\0';
}

/* fake_call_count -- how many times op was called */
int fake_call_count(enum fake_op op)
{
	int n = 0;
	for (int i = 0; i < F.ncalls; i++)
		n += F.calls[i].op == op;
	return n;
}

/* fake_calls_total -- how many op calls were logged */
int fake_calls_total(void)
{
	return F.ncalls;
}

/* fake_nth_call -- the n-th (0-based) call of op */
const struct fake_call *fake_nth_call(enum fake_op op, int n)
{
	for (int i = 0; i < F.ncalls; i++) {
		if (F.calls[i].op == op && n-- == 0)
			return &F.calls[i];
	}
	return NULL;
}

/* fake_last_call -- the last call of op */
const struct fake_call *fake_last_call(enum fake_op op)
{
	for (int i = F.ncalls - 1; i >= 0; i--) {
		if (F.calls[i].op == op)
			return &F.calls[i];
	}
	return NULL;
}

/* fake_fail_next -- script the result of the next call of op */
void fake_fail_next(enum fake_op op, int ret)
{
	F.next[op].armed = true;
	F.next[op].ret = ret;
}

/* fake_fail_call -- make the n-th failable call from now fail */
void fake_fail_call(int n, int ret)
{
	F.fail_at = n;
	F.fail_ret = ret;
	F.failable_calls = 0;
}

/* fake_injected -- how many scripted results were delivered */
int fake_injected(void)
{
	return F.injected;
}

/* fake_set_serves -- does the provider's device_get serve addresses? */
void fake_set_serves(enum fake_prov prov, bool serves)
{
	F.serves[prov] = serves;
}

/* fake_set_odp_capable -- the answer of device_is_odp_capable */
void fake_set_odp_capable(bool capable)
{
	F.odp = capable;
}

/* fake_set_peer_caps -- the device-dependent caps peer_init reports */
void fake_set_peer_caps(uint64_t caps)
{
	F.peer_caps = caps;
}

/* fake_set_max_msg_size -- the largest message of the fake "verbs" peers opened from now */
void fake_set_max_msg_size(size_t max)
{
	F.max_msg_size = max;
}

/* fake_set_mr_keys -- what mr_reg returns as raddr and rkey */
void fake_set_mr_keys(bool offset_addressing, uint64_t rkey)
{
	F.offset_addressing = offset_addressing;
	F.rkey = rkey;
}

/* push_event -- append an event to a queue */
static void push_event(struct fake_event *q, int *n, int head, int event, const void *pdata,
		       uint8_t len)
{
	if (*n - head >= QUEUE_MAX || *n >= QUEUE_MAX)
		abort();
	struct fake_event *e = &q[*n];
	e->event = event;
	e->len = len;
	if (len)
		memcpy(e->pdata, pdata, len);
	(*n)++;
}

/* fake_push_conn_req -- queue an incoming connection request */
void fake_push_conn_req(const void *pdata, uint8_t len)
{
	push_event(F.reqs, &F.nreqs, F.reqs_head, 0, pdata, len);
}

/* fake_push_conn_event -- queue a connection event */
void fake_push_conn_event(enum rpma_conn_event event, const void *pdata, uint8_t len)
{
	push_event(F.events, &F.nevents, F.events_head, (int)event, pdata, len);
}

/* fake_push_conn_wait -- queue the answer of conn_wait */
void fake_push_conn_wait(bool is_rcq)
{
	if (F.nwaits >= QUEUE_MAX)
		abort();
	F.waits[F.nwaits++] = is_rcq;
}

/* fake_set_qp_num -- what conn_get_qp_num answers */
void fake_set_qp_num(uint32_t qp_num)
{
	F.qp_num = qp_num;
}

/* fake_cq_push_wc -- queue a completion on a CQ */
void fake_cq_push_wc(const struct rpma_cq *cq, const struct ibv_wc *wc)
{
	struct fake_cq *fcq = rpma_cq_priv(cq);
	if (fcq->magic != MAGIC_CQ || fcq->count == CQ_QUEUE_MAX)
		abort();
	fcq->wc[(fcq->head + fcq->count) % CQ_QUEUE_MAX] = *wc;
	fcq->count++;
}

/* fake_live -- how many objects of a kind the fake holds initialised */
int fake_live(enum fake_obj obj)
{
	return live[obj];
}

/* fake_live_total -- all live objects */
int fake_live_total(void)
{
	int n = 0;
	for (int i = 0; i < FAKE_OBJ_MAX; i++)
		n += live[i];
	return n;
}

/* fake_violations -- how many boundary violations were seen since the last reset */
int fake_violations(void)
{
	return violations;
}

/* fake_last_violation -- the text of the last violation */
const char *fake_last_violation(void)
{
	return last_violation;
}

/* fake_fds_open -- fds held by the fake */
int fake_fds_open(void)
{
	return fds_open;
}

/* fake_fabric_dev -- the fabric provider's device data */
void *fake_fabric_dev(void)
{
	return &fabric_dev_storage;
}

/* ----- object state helpers */

/* peer_of -- the fake state of a peer, checked */
static struct fake_peer *peer_of(const struct rpma_peer *peer, const char *op)
{
	struct fake_peer *p = rpma_peer_priv(peer);
	if (p == NULL || p->magic != MAGIC_PEER) {
		violation("%s: peer not initialised", op);
		return NULL;
	}
	return p;
}

/* mr_ok -- is mr a live region holding [offset, offset + len)? */
static bool mr_ok(const struct rpma_mr_local *mr, size_t offset, size_t len, const char *op)
{
	struct fake_mr *m = rpma_mr_priv(mr);
	if (m == NULL || m->magic != MAGIC_MR) {
		violation("%s: local region not registered", op);
		return false;
	}
	if (offset > m->size || len > m->size - offset) {
		violation("%s: [%zu, +%zu) beyond the local region (%zu)", op, offset, len,
			  m->size);
		return false;
	}
	if (rpma_mr_local_size(mr) != m->size || rpma_mr_local_ptr(mr) != m->ptr) {
		violation("%s: core's view of the region differs from the registration", op);
		return false;
	}
	return true;
}

/* conn_of -- the fake state of a request or connection in the expected state */
static struct fake_conn *conn_of(void *priv, enum conn_state state, const char *op)
{
	struct fake_conn *c = priv;
	if (c == NULL || c->magic != MAGIC_CONN) {
		violation("%s: connection state not initialised", op);
		return NULL;
	}
	if (state != CONN_NONE && c->state != state) {
		violation("%s: connection in state %d, expected %d", op, c->state, state);
		return NULL;
	}
	return c;
}

/* flags_ok -- data-path flags are non-zero and within ALWAYS */
static bool flags_ok(int flags, const char *op)
{
	if (flags == 0 || (flags & ~RPMA_F_COMPLETION_ALWAYS)) {
		violation("%s: flags %d passed to the provider", op, flags);
		return false;
	}
	return true;
}

/* cq_init -- initialise a CQ's state */
static void cq_init(struct rpma_cq *cq, bool shared, const char *op)
{
	struct fake_cq *q = rpma_cq_priv(cq);
	if (q->magic != 0)
		violation("%s: CQ state not zero-filled or initialised twice", op);
	memset(q, 0, sizeof(*q));
	q->magic = MAGIC_CQ;
	q->shared = shared;
	q->fd = shared ? -1 : new_fd();
	live[FAKE_OBJ_CQ]++;
}

/* cq_fini -- release a CQ's state */
static void cq_fini(struct rpma_cq *cq, const char *op)
{
	struct fake_cq *q = rpma_cq_priv(cq);
	if (q->magic != MAGIC_CQ) {
		violation("%s: CQ torn down twice", op);
		return;
	}
	close_fd(&q->fd);
	q->magic = 0xdead;
	live[FAKE_OBJ_CQ]--;
}

/* conn_build -- build a request's transport as setup says */
static void conn_build(struct rpma_conn_req *req, const struct rpma_conn_setup *setup,
		       bool incoming, const char *op)
{
	struct fake_conn *c = rpma_conn_req_priv(req);
	if (c->magic != 0)
		violation("%s: connection state not zero-filled", op);
	if (setup->cq == NULL || setup->cq_size < 1)
		violation("%s: no main CQ or cq_size 0", op);
	if (setup->sq_size < 1)
		violation("%s: sq_size 0", op);
	if (setup->rcq != NULL && setup->rcq_size < 1)
		violation("%s: rcq without rcq_size", op);
	if (setup->shared_channel && setup->srq_rcq != NULL)
		violation("%s: shared channel together with an SRQ's receive CQ", op);
	if (setup->srq_rcq != NULL && setup->srq == NULL)
		violation("%s: srq_rcq without srq", op);
	if (setup->srq_rcq != NULL && setup->rcq != NULL)
		violation("%s: both an rcq and the SRQ's rcq", op);
	if (setup->srq != NULL) {
		struct fake_srq *s = rpma_srq_priv(setup->srq);
		if (s->magic != MAGIC_SRQ)
			violation("%s: SRQ not initialised", op);
	}
	memset(c, 0, sizeof(*c));
	c->magic = MAGIC_CONN;
	c->state = CONN_REQ;
	c->incoming = incoming;
	c->shared = setup->shared_channel;
	c->event_fd = new_fd();
	c->compl_fd = c->shared ? new_fd() : -1;
	c->srq = setup->srq;
	if (setup->cq) {
		c->cq = setup->cq;
		cq_init(setup->cq, c->shared, op);
	}
	if (setup->rcq) {
		c->rcq = setup->rcq;
		cq_init(setup->rcq, c->shared, op);
	}
	live[FAKE_OBJ_CONN]++;
}

/* conn_teardown -- release everything conn_build made */
static void conn_teardown(struct fake_conn *c, const char *op)
{
	if (c->cq)
		cq_fini(c->cq, op);
	if (c->rcq)
		cq_fini(c->rcq, op);
	close_fd(&c->event_fd);
	close_fd(&c->compl_fd);
	c->magic = 0xdead;
	c->state = CONN_NONE;
	live[FAKE_OBJ_CONN]--;
}

/* copy_setup -- keep setup in the log */
static void copy_setup(struct fake_call *c, const struct rpma_conn_setup *setup)
{
	c->has_setup = true;
	c->setup = *setup;
}

/* ----- device */

/* device_get -- serve every address unless told otherwise */
static int device_get(enum fake_prov prov, const char *addr, enum rpma_util_ibv_context_type type,
		      void **dev)
{
	struct fake_call *c = record(FAKE_OP_DEVICE_GET, prov);
	snprintf(c->addr, sizeof(c->addr), "%s", addr ? addr : "(null)");
	c->type = (int)type;
	if (addr == NULL || dev == NULL)
		violation("device_get: NULL argument");
	if (injected(FAKE_OP_DEVICE_GET, &c->ret))
		return c->ret;
	if (!F.serves[prov])
		return c->ret = RPMA_E_PROVIDER;
	*dev = prov == FAKE_PROV_VERBS ? (void *)&fake_ibv_ctx : fake_fabric_dev();
	c->dev = *dev;
	return 0;
}

/* verbs_device_get -- device_get of the fake "verbs" */
static int verbs_device_get(const char *addr, enum rpma_util_ibv_context_type type, void **dev)
{
	return device_get(FAKE_PROV_VERBS, addr, type, dev);
}

/* fabric_device_get -- device_get of the fake "fabric" */
static int fabric_device_get(const char *addr, enum rpma_util_ibv_context_type type, void **dev)
{
	return device_get(FAKE_PROV_FABRIC, addr, type, dev);
}

/* fabric_device_put -- release device data (nothing to do) */
static void fabric_device_put(void *dev)
{
	struct fake_call *c = record(FAKE_OP_DEVICE_PUT, FAKE_PROV_FABRIC);
	c->dev = dev;
	if (dev != fake_fabric_dev())
		violation("device_put: not our device");
}

/* verbs_device_is_odp_capable -- scripted ODP answer */
static int verbs_device_is_odp_capable(void *dev, int *is_odp_capable)
{
	struct fake_call *c = record(FAKE_OP_DEVICE_IS_ODP_CAPABLE, FAKE_PROV_VERBS);
	c->dev = dev;
	if (injected(FAKE_OP_DEVICE_IS_ODP_CAPABLE, &c->ret))
		return c->ret;
	*is_odp_capable = F.odp ? 1 : 0;
	return 0;
}

/* ----- peer */

/* peer_init -- open the fake transport */
static int peer_init(enum fake_prov prov, struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	struct fake_call *c = record(FAKE_OP_PEER_INIT, prov);
	c->obj = peer;
	c->dev = dev;
	if (dev == NULL)
		violation("peer_init: NULL device");
	if (prov == FAKE_PROV_FABRIC && dev != fake_fabric_dev())
		violation("peer_init(fabric): device %p is not the fabric device data", dev);
	if (injected(FAKE_OP_PEER_INIT, &c->ret))
		return c->ret;
	struct fake_peer *p = rpma_peer_priv(peer);
	if (p->magic != 0)
		violation("peer_init: state not zero-filled");
	p->magic = MAGIC_PEER;
	p->prov = prov;
	p->dev = dev;
	p->max_msg_size = F.max_msg_size;
	*caps = F.peer_caps;
	live[FAKE_OBJ_PEER]++;
	return 0;
}

/* verbs_peer_init -- peer_init of the fake "verbs" */
static int verbs_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	return peer_init(FAKE_PROV_VERBS, peer, dev, caps);
}

/* fabric_peer_init -- peer_init of the fake "fabric" */
static int fabric_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	return peer_init(FAKE_PROV_FABRIC, peer, dev, caps);
}

/* verbs_peer_max_msg_size -- the largest message of the fake "verbs" (fixed at peer_init) */
static size_t verbs_peer_max_msg_size(const struct rpma_peer *peer)
{
	struct fake_peer *p = peer_of(peer, "peer_max_msg_size");
	return p ? p->max_msg_size : 0;
}

/* fake_peer_fini -- close the fake transport */
static int fake_peer_fini(struct rpma_peer *peer)
{
	struct fake_peer *p = peer_of(peer, "peer_fini");
	struct fake_call *c = record(FAKE_OP_PEER_FINI, p ? p->prov : FAKE_PROV_NONE);
	c->obj = peer;
	if (p == NULL)
		return RPMA_E_INVAL;
	if (live[FAKE_OBJ_MR] || live[FAKE_OBJ_EP] || live[FAKE_OBJ_CONN] || live[FAKE_OBJ_SRQ])
		violation("peer_fini: objects still live (mr %d ep %d conn %d srq %d)",
			  live[FAKE_OBJ_MR], live[FAKE_OBJ_EP], live[FAKE_OBJ_CONN],
			  live[FAKE_OBJ_SRQ]);
	p->magic = 0xdead;
	live[FAKE_OBJ_PEER]--;
	injected(FAKE_OP_PEER_FINI, &c->ret);
	return c->ret;
}

/* ----- memory registration */

/* fake_mr_reg -- register a region */
static int fake_mr_reg(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size,
		       int usage, uint64_t *raddr, uint64_t *rkey)
{
	struct fake_peer *p = peer_of(peer, "mr_reg");
	struct fake_call *c = record(FAKE_OP_MR_REG, p ? p->prov : FAKE_PROV_NONE);
	c->obj = mr;
	c->obj2 = peer;
	c->ptr = ptr;
	c->size = size;
	c->usage = usage;
	if (ptr == NULL || size == 0 || usage == 0 || (usage & ~0xff))
		violation("mr_reg: unchecked arguments ptr %p size %zu usage %#x", ptr, size,
			  usage);
	if (injected(FAKE_OP_MR_REG, &c->ret))
		return c->ret;
	struct fake_mr *m = rpma_mr_priv(mr);
	if (m->magic != 0)
		violation("mr_reg: state not zero-filled");
	m->magic = MAGIC_MR;
	m->prov = p ? p->prov : FAKE_PROV_NONE;
	m->ptr = ptr;
	m->size = size;
	m->usage = usage;
	*raddr = F.offset_addressing ? 0 : (uint64_t)(uintptr_t)ptr;
	*rkey = F.rkey;
	c->raddr = *raddr;
	c->rkey = *rkey;
	live[FAKE_OBJ_MR]++;
	return 0;
}

/* fake_mr_dereg -- deregister a region */
static int fake_mr_dereg(struct rpma_mr_local *mr)
{
	struct fake_mr *m = rpma_mr_priv(mr);
	struct fake_call *c = record(FAKE_OP_MR_DEREG, m ? m->prov : FAKE_PROV_NONE);
	c->obj = mr;
	if (m == NULL || m->magic != MAGIC_MR) {
		violation("mr_dereg: region not registered");
		return RPMA_E_INVAL;
	}
	m->magic = 0xdead;
	live[FAKE_OBJ_MR]--;
	injected(FAKE_OP_MR_DEREG, &c->ret);
	return c->ret;
}

/* fake_mr_advise -- record the advice */
static int fake_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice,
			  uint32_t flags)
{
	struct fake_call *c = record(FAKE_OP_MR_ADVISE, FAKE_PROV_VERBS);
	c->obj = mr;
	c->offset = offset;
	c->len = len;
	c->advice = advice;
	c->advice_flags = flags;
	mr_ok(mr, offset, len, "mr_advise");
	injected(FAKE_OP_MR_ADVISE, &c->ret);
	return c->ret;
}

/* ----- endpoint */

/* fake_ep_listen -- "listen" on addr:port */
static int fake_ep_listen(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr,
			  const char *port)
{
	struct fake_peer *p = peer_of(peer, "ep_listen");
	struct fake_call *c = record(FAKE_OP_EP_LISTEN, p ? p->prov : FAKE_PROV_NONE);
	c->obj = ep;
	c->obj2 = peer;
	snprintf(c->addr, sizeof(c->addr), "%s", addr ? addr : "(null)");
	snprintf(c->port, sizeof(c->port), "%s", port ? port : "(null)");
	if (addr == NULL || port == NULL)
		violation("ep_listen: NULL address or port");
	if (injected(FAKE_OP_EP_LISTEN, &c->ret))
		return c->ret;
	struct fake_ep *e = rpma_ep_priv(ep);
	if (e->magic != 0)
		violation("ep_listen: state not zero-filled");
	e->magic = MAGIC_EP;
	e->fd = new_fd();
	live[FAKE_OBJ_EP]++;
	return 0;
}

/* ep_of -- the fake state of an endpoint */
static struct fake_ep *ep_of(const struct rpma_ep *ep, const char *op)
{
	struct fake_ep *e = rpma_ep_priv(ep);
	if (e == NULL || e->magic != MAGIC_EP) {
		violation("%s: endpoint not listening", op);
		return NULL;
	}
	return e;
}

/* fake_ep_shutdown -- stop listening */
static int fake_ep_shutdown(struct rpma_ep *ep)
{
	struct fake_call *c = record(FAKE_OP_EP_SHUTDOWN, FAKE_PROV_NONE);
	c->obj = ep;
	struct fake_ep *e = ep_of(ep, "ep_shutdown");
	if (e == NULL)
		return RPMA_E_INVAL;
	close_fd(&e->fd);
	e->magic = 0xdead;
	live[FAKE_OBJ_EP]--;
	injected(FAKE_OP_EP_SHUTDOWN, &c->ret);
	return c->ret;
}

/* fake_ep_get_fd -- the endpoint's fd */
static int fake_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	struct fake_call *c = record(FAKE_OP_EP_GET_FD, FAKE_PROV_NONE);
	c->obj = ep;
	struct fake_ep *e = ep_of(ep, "ep_get_fd");
	if (e == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_EP_GET_FD, &c->ret))
		return c->ret;
	*fd = e->fd;
	return 0;
}

/* fake_ep_next_conn_req -- take a queued incoming request */
static int fake_ep_next_conn_req(struct rpma_ep *ep, struct rpma_conn_req *req,
				 const struct rpma_conn_setup *setup,
				 struct rpma_conn_private_data *pdata)
{
	struct fake_call *c = record(FAKE_OP_EP_NEXT_CONN_REQ, FAKE_PROV_NONE);
	c->obj = ep;
	c->obj2 = req;
	copy_setup(c, setup);
	if (ep_of(ep, "ep_next_conn_req") == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_EP_NEXT_CONN_REQ, &c->ret))
		return c->ret;
	if (F.reqs_head == F.nreqs)
		return c->ret = RPMA_E_NO_EVENT;
	struct fake_event *ev = &F.reqs[F.reqs_head++];
	pdata->ptr = NULL;
	pdata->len = 0;
	if (ev->len) {
		pdata->ptr = malloc(ev->len);
		if (pdata->ptr == NULL)
			return c->ret = RPMA_E_NOMEM;
		memcpy(pdata->ptr, ev->pdata, ev->len);
		pdata->len = ev->len;
	}
	conn_build(req, setup, true, "ep_next_conn_req");
	return 0;
}

/* ----- connection requests */

/* fake_conn_req_new -- "resolve" addr:port and build the transport */
static int fake_conn_req_new(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
			     const char *port, const struct rpma_conn_setup *setup)
{
	struct fake_peer *p = peer_of(peer, "conn_req_new");
	struct fake_call *c = record(FAKE_OP_CONN_REQ_NEW, p ? p->prov : FAKE_PROV_NONE);
	c->obj = req;
	c->obj2 = peer;
	snprintf(c->addr, sizeof(c->addr), "%s", addr ? addr : "(null)");
	snprintf(c->port, sizeof(c->port), "%s", port ? port : "(null)");
	copy_setup(c, setup);
	if (addr == NULL || port == NULL)
		violation("conn_req_new: NULL address or port");
	if (injected(FAKE_OP_CONN_REQ_NEW, &c->ret))
		return c->ret;
	conn_build(req, setup, false, "conn_req_new");
	return 0;
}

/* fake_conn_req_delete -- drop a request */
static int fake_conn_req_delete(struct rpma_conn_req *req)
{
	struct fake_call *c = record(FAKE_OP_CONN_REQ_DELETE, FAKE_PROV_NONE);
	c->obj = req;
	struct fake_conn *fc = conn_of(rpma_conn_req_priv(req), CONN_REQ, "conn_req_delete");
	if (fc == NULL)
		return RPMA_E_INVAL;
	conn_teardown(fc, "conn_req_delete");
	injected(FAKE_OP_CONN_REQ_DELETE, &c->ret);
	return c->ret;
}

/* fake_conn_req_connect -- connect or accept */
static int fake_conn_req_connect(struct rpma_conn_req *req, struct rpma_conn *conn,
				 const struct rpma_conn_private_data *pdata)
{
	struct fake_call *c = record(FAKE_OP_CONN_REQ_CONNECT, FAKE_PROV_NONE);
	c->obj = req;
	c->obj2 = conn;
	if (pdata) {
		c->pdata_len = pdata->len;
		if (pdata->ptr && pdata->len)
			memcpy(c->pdata, pdata->ptr, pdata->len);
		if (pdata->ptr == NULL || pdata->len == 0)
			violation("conn_req_connect: pdata with NULL ptr or len 0");
	}
	struct fake_conn *fc = conn_of(rpma_conn_req_priv(req), CONN_REQ, "conn_req_connect");
	if (fc == NULL)
		return RPMA_E_INVAL;
	if (rpma_conn_priv(conn) != (void *)fc)
		violation("conn_req_connect: conn's state is not the request's");
	if (injected(FAKE_OP_CONN_REQ_CONNECT, &c->ret)) {
		conn_teardown(fc, "conn_req_connect");
		return c->ret;
	}
	if (pdata && pdata->len > FAKE_PDATA_MAX) {
		conn_teardown(fc, "conn_req_connect");
		return c->ret = RPMA_E_INVAL;
	}
	fc->state = CONN_CONNECTED;
	return 0;
}

/* fake_conn_req_recv -- post a receive on a request */
static int fake_conn_req_recv(struct rpma_conn_req *req, const struct rpma_mr_local *dst,
			      size_t offset, size_t len, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_CONN_REQ_RECV, FAKE_PROV_NONE);
	c->obj = req;
	c->mr = dst;
	c->offset = offset;
	c->len = len;
	c->op_context = op_context;
	conn_of(rpma_conn_req_priv(req), CONN_REQ, "conn_req_recv");
	if (dst)
		mr_ok(dst, offset, len, "conn_req_recv");
	else if (offset || len)
		violation("conn_req_recv: zero-length form with offset/len");
	injected(FAKE_OP_CONN_REQ_RECV, &c->ret);
	return c->ret;
}

/* ----- connections */

/* fake_conn_get_event_fd -- the connection's event fd */
static int fake_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	struct fake_call *c = record(FAKE_OP_CONN_GET_EVENT_FD, FAKE_PROV_NONE);
	c->obj = conn;
	struct fake_conn *fc = conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_get_event_fd");
	if (fc == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_CONN_GET_EVENT_FD, &c->ret))
		return c->ret;
	*fd = fc->event_fd;
	return 0;
}

/* fake_conn_next_event -- the next queued connection event */
static int fake_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
				struct rpma_conn_private_data *pdata)
{
	struct fake_call *c = record(FAKE_OP_CONN_NEXT_EVENT, FAKE_PROV_NONE);
	c->obj = conn;
	if (conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_next_event") == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_CONN_NEXT_EVENT, &c->ret))
		return c->ret;
	if (F.events_head == F.nevents)
		return c->ret = RPMA_E_NO_EVENT;
	struct fake_event *ev = &F.events[F.events_head++];
	*event = (enum rpma_conn_event)ev->event;
	c->type = ev->event;
	if (ev->event == RPMA_CONN_ESTABLISHED && ev->len) {
		pdata->ptr = malloc(ev->len);
		if (pdata->ptr == NULL)
			return c->ret = RPMA_E_NOMEM;
		memcpy(pdata->ptr, ev->pdata, ev->len);
		pdata->len = ev->len;
	}
	return 0;
}

/* fake_conn_disconnect -- record the disconnect */
static int fake_conn_disconnect(struct rpma_conn *conn)
{
	struct fake_call *c = record(FAKE_OP_CONN_DISCONNECT, FAKE_PROV_NONE);
	c->obj = conn;
	conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_disconnect");
	injected(FAKE_OP_CONN_DISCONNECT, &c->ret);
	return c->ret;
}

/* fake_conn_delete -- release the connection's transport */
static int fake_conn_delete(struct rpma_conn *conn)
{
	struct fake_call *c = record(FAKE_OP_CONN_DELETE, FAKE_PROV_NONE);
	c->obj = conn;
	struct fake_conn *fc = conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_delete");
	if (fc == NULL)
		return RPMA_E_INVAL;
	conn_teardown(fc, "conn_delete");
	injected(FAKE_OP_CONN_DELETE, &c->ret);
	return c->ret;
}

/* fake_conn_get_qp_num -- the scripted queue pair number */
static int fake_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	struct fake_call *c = record(FAKE_OP_CONN_GET_QP_NUM, FAKE_PROV_NONE);
	c->obj = conn;
	if (conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_get_qp_num") == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_CONN_GET_QP_NUM, &c->ret))
		return c->ret;
	*qp_num = F.qp_num;
	return 0;
}

/* fake_conn_get_compl_fd -- the shared channel's fd */
static int fake_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	struct fake_call *c = record(FAKE_OP_CONN_GET_COMPL_FD, FAKE_PROV_NONE);
	c->obj = conn;
	struct fake_conn *fc = conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_get_compl_fd");
	if (fc == NULL)
		return RPMA_E_INVAL;
	if (!fc->shared) {
		violation("conn_get_compl_fd: connection has no shared channel");
		return RPMA_E_NOT_SHARED_CHNL;
	}
	if (injected(FAKE_OP_CONN_GET_COMPL_FD, &c->ret))
		return c->ret;
	*fd = fc->compl_fd;
	return 0;
}

/* fake_conn_wait -- the next scripted shared-channel wake-up */
static int fake_conn_wait(struct rpma_conn *conn, bool *is_rcq)
{
	struct fake_call *c = record(FAKE_OP_CONN_WAIT, FAKE_PROV_NONE);
	c->obj = conn;
	struct fake_conn *fc = conn_of(rpma_conn_priv(conn), CONN_CONNECTED, "conn_wait");
	if (fc == NULL)
		return RPMA_E_INVAL;
	if (!fc->shared)
		violation("conn_wait: connection has no shared channel");
	if (injected(FAKE_OP_CONN_WAIT, &c->ret))
		return c->ret;
	if (F.waits_head == F.nwaits)
		return c->ret = RPMA_E_NO_COMPLETION;
	*is_rcq = F.waits[F.waits_head++];
	c->with_imm = *is_rcq;
	return 0;
}

/* ----- data path */

/* data_conn -- check the connection of a data-path op */
static struct fake_conn *data_conn(struct rpma_conn *conn, const char *op)
{
	return conn_of(rpma_conn_priv(conn), CONN_CONNECTED, op);
}

/* fake_read -- record a read */
static int fake_read(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
		     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_READ, FAKE_PROV_NONE);
	c->obj = conn;
	c->mr = dst;
	c->offset = dst_offset;
	c->raddr = raddr;
	c->rkey = rkey;
	c->len = len;
	c->flags = flags;
	c->op_context = op_context;
	data_conn(conn, "read");
	flags_ok(flags, "read");
	if (dst)
		mr_ok(dst, dst_offset, len, "read");
	else if (dst_offset || len || raddr || rkey)
		violation("read: zero-length form with non-zero fields");
	injected(FAKE_OP_READ, &c->ret);
	return c->ret;
}

/* fake_write_any -- record a write (with immediate data) */
static int fake_write_any(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey,
			  const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			  bool with_imm, uint32_t imm, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_WRITE, FAKE_PROV_NONE);
	c->obj = conn;
	c->mr = src;
	c->offset = src_offset;
	c->raddr = raddr;
	c->rkey = rkey;
	c->len = len;
	c->flags = flags;
	c->with_imm = with_imm;
	c->imm = imm;
	c->op_context = op_context;
	data_conn(conn, "write");
	flags_ok(flags, "write");
	if (src)
		mr_ok(src, src_offset, len, "write");
	else if (src_offset || len || raddr || rkey)
		violation("write: zero-length form with non-zero fields");
	injected(FAKE_OP_WRITE, &c->ret);
	return c->ret;
}

/* fake_write -- the provider's write */
static int fake_write(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		      uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context)
{
	return fake_write_any(conn, raddr, rkey, src, src_offset, len, flags, false, 0, op_context);
}

/* fake_write_imm -- the provider's write with immediate data */
static int fake_write_imm(struct rpma_conn *conn, const struct rpma_mr_local *src,
			  size_t src_offset, uint64_t raddr, uint64_t rkey, size_t len, int flags,
			  uint32_t imm, const void *op_context)
{
	return fake_write_any(conn, raddr, rkey, src, src_offset, len, flags, true, imm,
			      op_context);
}

/* fake_atomic_write -- record an 8-byte write */
static int fake_atomic_write(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey,
			     const char src[8], int flags, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_ATOMIC_WRITE, FAKE_PROV_NONE);
	c->obj = conn;
	c->raddr = raddr;
	c->rkey = rkey;
	c->flags = flags;
	c->op_context = op_context;
	if (src)
		memcpy(c->src8, src, 8);
	else
		violation("atomic_write: NULL src");
	data_conn(conn, "atomic_write");
	flags_ok(flags, "atomic_write");
	injected(FAKE_OP_ATOMIC_WRITE, &c->ret);
	return c->ret;
}

/* fake_flush -- record a native flush */
static int fake_flush(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
		      enum rpma_flush_type type, int flags, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_FLUSH, FAKE_PROV_NONE);
	c->obj = conn;
	c->raddr = raddr;
	c->rkey = rkey;
	c->len = len;
	c->type = (int)type;
	c->flags = flags;
	c->op_context = op_context;
	data_conn(conn, "flush");
	flags_ok(flags, "flush");
	injected(FAKE_OP_FLUSH, &c->ret);
	return c->ret;
}

/* fake_send -- record a send */
static int fake_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		     size_t len, int flags, bool with_imm, uint32_t imm, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_SEND, FAKE_PROV_NONE);
	c->obj = conn;
	c->mr = src;
	c->offset = offset;
	c->len = len;
	c->flags = flags;
	c->with_imm = with_imm;
	c->imm = imm;
	c->op_context = op_context;
	data_conn(conn, "send");
	flags_ok(flags, "send");
	if (src)
		mr_ok(src, offset, len, "send");
	else if (offset || len)
		violation("send: zero-length form with offset/len");
	injected(FAKE_OP_SEND, &c->ret);
	return c->ret;
}

/* fake_recv -- record a receive */
static int fake_recv(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset,
		     size_t len, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_RECV, FAKE_PROV_NONE);
	c->obj = conn;
	c->mr = dst;
	c->offset = offset;
	c->len = len;
	c->op_context = op_context;
	data_conn(conn, "recv");
	if (dst)
		mr_ok(dst, offset, len, "recv");
	else if (offset || len)
		violation("recv: zero-length form with offset/len");
	injected(FAKE_OP_RECV, &c->ret);
	return c->ret;
}

/* ----- completion queues */

/* cq_of -- the fake state of a CQ */
static struct fake_cq *cq_of(const struct rpma_cq *cq, const char *op)
{
	struct fake_cq *q = rpma_cq_priv(cq);
	if (q == NULL || q->magic != MAGIC_CQ) {
		violation("%s: CQ not initialised", op);
		return NULL;
	}
	return q;
}

/* fake_cq_get_fd -- the CQ's fd */
static int fake_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	struct fake_call *c = record(FAKE_OP_CQ_GET_FD, FAKE_PROV_NONE);
	c->obj = cq;
	struct fake_cq *q = cq_of(cq, "cq_get_fd");
	if (q == NULL)
		return RPMA_E_INVAL;
	if (injected(FAKE_OP_CQ_GET_FD, &c->ret))
		return c->ret;
	if (q->shared) {
		violation("cq_get_fd: called for a CQ on a shared channel");
		return c->ret = RPMA_E_SHARED_CHANNEL;
	}
	*fd = q->fd;
	return 0;
}

/* fake_cq_wait -- "wait" on a CQ */
static int fake_cq_wait(struct rpma_cq *cq)
{
	struct fake_call *c = record(FAKE_OP_CQ_WAIT, FAKE_PROV_NONE);
	c->obj = cq;
	struct fake_cq *q = cq_of(cq, "cq_wait");
	if (q == NULL)
		return RPMA_E_INVAL;
	if (q->shared)
		violation("cq_wait: called for a CQ on a shared channel");
	injected(FAKE_OP_CQ_WAIT, &c->ret);
	return c->ret;
}

/* fake_cq_poll -- hand out queued completions */
static int fake_cq_poll(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct fake_call *c = record(FAKE_OP_CQ_POLL, FAKE_PROV_NONE);
	c->obj = cq;
	c->num_entries = num_entries;
	struct fake_cq *q = cq_of(cq, "cq_poll");
	if (q == NULL)
		return RPMA_E_INVAL;
	if (num_entries < 1 || wc == NULL)
		violation("cq_poll: num_entries %d wc %p", num_entries, (void *)wc);
	if (injected(FAKE_OP_CQ_POLL, &c->ret))
		return c->ret;
	int n = 0;
	while (n < num_entries && q->count > 0) {
		wc[n++] = q->wc[q->head];
		q->head = (q->head + 1) % CQ_QUEUE_MAX;
		q->count--;
	}
	return c->ret = n;
}

/* ----- shared receive queues */

/* fake_srq_new -- build a shared receive queue */
static int fake_srq_new(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size,
			struct rpma_cq *rcq, uint32_t rcq_size)
{
	struct fake_peer *p = peer_of(peer, "srq_new");
	struct fake_call *c = record(FAKE_OP_SRQ_NEW, p ? p->prov : FAKE_PROV_NONE);
	c->obj = srq;
	c->obj2 = peer;
	c->rq_size = rq_size;
	c->rcq_size = rcq_size;
	c->rcq = rcq;
	if ((rcq == NULL) != (rcq_size == 0))
		violation("srq_new: rcq %p with rcq_size %u", (void *)rcq, rcq_size);
	if (injected(FAKE_OP_SRQ_NEW, &c->ret))
		return c->ret;
	struct fake_srq *s = rpma_srq_priv(srq);
	if (s->magic != 0)
		violation("srq_new: state not zero-filled");
	s->magic = MAGIC_SRQ;
	s->rcq = rcq;
	if (rcq)
		cq_init(rcq, false, "srq_new");
	live[FAKE_OBJ_SRQ]++;
	return 0;
}

/* fake_srq_delete -- release a shared receive queue */
static int fake_srq_delete(struct rpma_srq *srq)
{
	struct fake_call *c = record(FAKE_OP_SRQ_DELETE, FAKE_PROV_NONE);
	c->obj = srq;
	struct fake_srq *s = rpma_srq_priv(srq);
	if (s == NULL || s->magic != MAGIC_SRQ) {
		violation("srq_delete: SRQ not initialised");
		return RPMA_E_INVAL;
	}
	if (s->rcq)
		cq_fini(s->rcq, "srq_delete");
	s->magic = 0xdead;
	live[FAKE_OBJ_SRQ]--;
	injected(FAKE_OP_SRQ_DELETE, &c->ret);
	return c->ret;
}

/* fake_srq_recv -- record a receive posted to the SRQ */
static int fake_srq_recv(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset,
			 size_t len, const void *op_context)
{
	struct fake_call *c = record(FAKE_OP_SRQ_RECV, FAKE_PROV_NONE);
	c->obj = srq;
	c->mr = dst;
	c->offset = offset;
	c->len = len;
	c->op_context = op_context;
	struct fake_srq *s = rpma_srq_priv(srq);
	if (s == NULL || s->magic != MAGIC_SRQ)
		violation("srq_recv: SRQ not initialised");
	if (dst)
		mr_ok(dst, offset, len, "srq_recv");
	else if (offset || len)
		violation("srq_recv: zero-length form with offset/len");
	injected(FAKE_OP_SRQ_RECV, &c->ret);
	return c->ret;
}

/* ----- the tables */

static const struct rpma_provider_ops verbs_ops = {
	.device_get = verbs_device_get,
	.device_put = NULL,
	.device_is_odp_capable = verbs_device_is_odp_capable,
	.peer_init = verbs_peer_init,
	.peer_max_msg_size = verbs_peer_max_msg_size,
	.peer_fini = fake_peer_fini,
	.mr_reg = fake_mr_reg,
	.mr_dereg = fake_mr_dereg,
	.mr_advise = fake_mr_advise,
	.ep_listen = fake_ep_listen,
	.ep_shutdown = fake_ep_shutdown,
	.ep_get_fd = fake_ep_get_fd,
	.ep_next_conn_req = fake_ep_next_conn_req,
	.conn_req_new = fake_conn_req_new,
	.conn_req_delete = fake_conn_req_delete,
	.conn_req_connect = fake_conn_req_connect,
	.conn_req_recv = fake_conn_req_recv,
	.conn_get_event_fd = fake_conn_get_event_fd,
	.conn_next_event = fake_conn_next_event,
	.conn_disconnect = fake_conn_disconnect,
	.conn_delete = fake_conn_delete,
	.conn_get_qp_num = fake_conn_get_qp_num,
	.conn_get_compl_fd = fake_conn_get_compl_fd,
	.conn_wait = fake_conn_wait,
	.read = fake_read,
	.write = fake_write,
	.write_imm = fake_write_imm,
	.atomic_write = fake_atomic_write,
	.flush = fake_flush,
	.send = fake_send,
	.recv = fake_recv,
	.cq_get_fd = fake_cq_get_fd,
	.cq_wait = fake_cq_wait,
	.cq_poll = fake_cq_poll,
	.srq_new = fake_srq_new,
	.srq_delete = fake_srq_delete,
	.srq_recv = fake_srq_recv,
};

/* the fabric-like table: opaque devices, no optional op but device_put */
static const struct rpma_provider_ops fabric_ops = {
	.device_get = fabric_device_get,
	.device_put = fabric_device_put,
	.device_is_odp_capable = NULL,
	.peer_init = fabric_peer_init,
	.peer_fini = fake_peer_fini,
	.mr_reg = fake_mr_reg,
	.mr_dereg = fake_mr_dereg,
	.mr_advise = NULL,
	.ep_listen = fake_ep_listen,
	.ep_shutdown = fake_ep_shutdown,
	.ep_get_fd = fake_ep_get_fd,
	.ep_next_conn_req = fake_ep_next_conn_req,
	.conn_req_new = fake_conn_req_new,
	.conn_req_delete = fake_conn_req_delete,
	.conn_req_connect = fake_conn_req_connect,
	.conn_req_recv = fake_conn_req_recv,
	.conn_get_event_fd = fake_conn_get_event_fd,
	.conn_next_event = fake_conn_next_event,
	.conn_disconnect = fake_conn_disconnect,
	.conn_delete = fake_conn_delete,
	.conn_get_qp_num = fake_conn_get_qp_num,
	.conn_get_compl_fd = fake_conn_get_compl_fd,
	.conn_wait = fake_conn_wait,
	.read = fake_read,
	.write = fake_write,
	.write_imm = fake_write_imm,
	.atomic_write = fake_atomic_write,
	.flush = NULL,
	.send = fake_send,
	.recv = fake_recv,
	.cq_get_fd = fake_cq_get_fd,
	.cq_wait = fake_cq_wait,
	.cq_poll = fake_cq_poll,
	.srq_new = fake_srq_new,
	.srq_delete = fake_srq_delete,
	.srq_recv = fake_srq_recv,
};

const struct rpma_provider fake_provider_verbs = {
	.name = "verbs",
	.description = "fake verbs-like provider of the unit tests",
	.caps = RPMA_PROV_CAP_IBV_CONTEXT,
	.peer_size = sizeof(struct fake_peer),
	.mr_size = sizeof(struct fake_mr),
	.ep_size = sizeof(struct fake_ep),
	.conn_size = sizeof(struct fake_conn),
	.cq_size = sizeof(struct fake_cq),
	.srq_size = sizeof(struct fake_srq),
	.ops = &verbs_ops,
};

const struct rpma_provider fake_provider_fabric = {
	.name = "fabric",
	.description = "fake fabric-like provider of the unit tests",
	.caps = 0,
	.peer_size = sizeof(struct fake_peer),
	.mr_size = sizeof(struct fake_mr),
	.ep_size = sizeof(struct fake_ep),
	.conn_size = sizeof(struct fake_conn),
	.cq_size = sizeof(struct fake_cq),
	.srq_size = sizeof(struct fake_srq),
	.ops = &fabric_ops,
};
