/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_rdm.c -- librpma's connections over reliable-datagram (FI_EP_RDM) endpoints */

/*
 * An FI_EP_RDM endpoint has no connections; the protocol of
 * fabric_rdm_proto.[ch] makes them, in tagged messages (FAB_RDM_CTL_TAG)
 * that never meet the application's sends and receives, whose tags name
 * the receiving connection (fab_rdm_app_tag, fabric.h).
 *
 * Endpoints.  A listener opens one endpoint on fi_getinfo(address, port,
 * FI_SOURCE) and takes every client's REQ there.  Every connection, on both
 * sides, has an endpoint, an AV and CQs of its own, as a message endpoint
 * has: the client's is opened on fi_getinfo(address, port)'s entry, the
 * server's on an entry whose destination is the client's address (so the
 * provider picks the local address that reaches it), and the ACCEPT names
 * it.  A connection's completions therefore reach only its CQs (or its CQ
 * group's, whose drain routes them by their records: fabric.h, CQ groups)
 * and its receives only its peer's messages, and the data path is the
 * message endpoints' own with the peer's fi_addr_t.
 *
 * Per peer (struct fab_peer): the table of connection ids (a slot and a
 * generation: a message of a connection that ended names a generation that
 * no longer exists and is dropped) and rdm_lock, which guards it and the
 * listeners' lists.  Per request / connection (struct fab_rdm, "rec"): the
 * protocol machine, under its own lock, and the control port of the
 * connection's endpoint.  A listener keeps each request's rec in a list
 * (repeated REQs find it; a rejected one stays until its timeout, so that a
 * repeat gets the REJECT again and never makes a second request); the
 * connection built from it holds it too (two references).
 *
 * Control messages are sent from per-port slots (struct fab_rdm_tx) with a
 * completion each; a send refused with -FI_EAGAIN (shm before the peer's
 * region is mapped, a full queue) stays queued and is posted again by the
 * connection's timer, which runs every millisecond meanwhile.  A slot is
 * never waited for: when all are busy a message is dropped, which the
 * protocol's retries cover.  Timers run in the drain of the peer's
 * connections' EQ (fab_ceq_settle): the machine's next tick is the
 * connection's deadline there.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_tagged.h>

#include "fabric.h"

/* the tag of control messages (the application's: fab_rdm_app_tag, fabric.h) */
#define FAB_RDM_CTL_TAG 0x72706d615f63746cULL /* "rpma_ctl" */
/* no application's tag (fab_rdm_app_tag) is ever the control protocol's */
_Static_assert((FAB_RDM_CTL_TAG >> 48) != FAB_RDM_APP_TAG, "control and application tags meet");
_Static_assert((FAB_RDM_CTL_TAG >> FAB_RDM_TAG_BITS) == 0,
	       "the control tag needs more bits than FAB_RDM_TAG_BITS");
/* control sends a port may have out at once */
#define FAB_RDM_TXS 8
/* the connection ids of a peer (slot 0 is never used) */
#define FAB_RDM_IDS 65536
/* the application's tags hold 16 bits of slot (fab_rdm_app_tag) */
_Static_assert(FAB_RDM_IDS <= 65536, "connection slots beyond the tag's 16 bits");
/* the longest a closing connection waits for its last control messages to leave */
#define FAB_RDM_LINGER_MS 200
/*
 * the longest a connect waits for the server's application once the server
 * answered PENDING (fabric_rdm_proto.h): a server that holds a request
 * without deciding gets no more than this, a loaded one more than the timeout
 */
#define FAB_RDM_DECIDE_MS 30000
/* the longest a connection stays silent: a KEEPALIVE goes after this at the latest */
#define FAB_RDM_KEEPALIVE_MAX_MS 100
/* the timeout a request has until the application's setup names one */
#define FAB_RDM_DEFAULT_TIMEOUT_MS 1000
/* the longest a post waits for a free operation record, a flush for the writes before it */
#define FAB_RDM_WAIT_NS (2ULL * 1000000000ULL)

enum { FAB_TX_FREE = 0, FAB_TX_QUEUED, FAB_TX_POSTED };

struct fab_rdm;

/* the start of a control slot: the context of its send or receive is the slot */
struct fab_rdm_slot {
	struct fab_ctx head;   /* FAB_CTX_CTL */
	struct fab_rdm *owner; /* the connection's record; NULL: a listener's */
};

/* one control send */
struct fab_rdm_tx {
	struct fab_rdm_slot s; /* first */
	_Atomic int st;
	uint64_t order; /* when it was queued (the port's qseq; under the port's lock) */
	fi_addr_t to;
	size_t to_len; /* the destination's name (string addresses: fab_gone_is), 0: unknown */
	uint8_t to_name[FAB_RDM_ADDR_MAX];
	size_t len;
	uint8_t buf[FAB_RDM_MSG_MAX];
};

/* one control receive */
struct fab_rdm_rx_slot {
	struct fab_rdm_slot s; /* first */
	uint8_t buf[FAB_RDM_MSG_MAX];
};

/*
 * A listener keeps FAB_RDM_PORT_RXS control receives posted, a connection's
 * endpoint one.  Many clients' REQs arrive at a listener at once, and one
 * that finds no receive waits in the provider's queue of unexpected
 * messages, to be copied once more.  (Without FI_DIRECTED_RECV, libfabric
 * 2.0-2.4's rxm crashed in the listener's next fi_av_insert() while one
 * waited there: fab_peer_getinfo.)
 */
#define FAB_RDM_PORT_RXS 16

/* the control side of an endpoint: its receive buffers and send slots */
struct fab_rdm_port {
	pthread_mutex_t lock; /* posting sends */
	struct fid_ep *ep;
	struct fid_av *av;
	struct fid_mr *mr; /* FI_MR_LOCAL: this structure, registered */
	void *desc;
	bool str_addrs; /* FI_ADDR_STR: sends check the closed endpoints of this process */
	bool respell;	/* fab_peer.respell_reused */
	size_t inject;	/* a message up to this long is injected: no completion, no slot kept */
	unsigned nrx;	/* control receives kept posted: 1, or FAB_RDM_PORT_RXS */
	_Atomic unsigned rx_out; /* control receives posted and not completed */
	_Atomic bool closing;	 /* post no more control receives (fab_rdm_teardown) */
	_Atomic int queued;	 /* slots refused with -FI_EAGAIN, to be posted again */
	uint64_t qseq;		 /* the order of the slots taken (under lock) */
	uint8_t name[FAB_RDM_ADDR_MAX];
	size_t name_len;
	struct fab_rdm_tx tx[FAB_RDM_TXS];
	/*
	 * the control receives: a connection's one is rx_one, a listener's are
	 * an array of their own (with a registration of its own under
	 * FI_MR_LOCAL), so that a connection does not carry a listener's
	 * receives (7 KB each)
	 */
	struct fab_rdm_rx_slot *rx;
	struct fid_mr *rx_mr; /* FI_MR_LOCAL: rx, when it is not rx_one */
	void *rx_desc;
	struct fab_rdm_rx_slot rx_one;
};

/* a request or connection over a reliable-datagram endpoint */
struct fab_rdm {
	pthread_mutex_t lock; /* the machine */
	struct fab_rdm_conn m;
	struct fab_peer *peer;
	struct fab_conn *conn; /* the connection built from it, or NULL */
	struct fab_rdm_port port;
	bool port_made;
	/*
	 * a grouped connection's endpoint is about to close: the group's drains
	 * drop its control entries (set with the group's source held)
	 */
	bool ctl_dead;
	fi_addr_t to; /* the peer's side of the connection (valid: to_known) */
	bool to_known;
	uint8_t to_name[FAB_RDM_ADDR_MAX]; /* its name (fab_gone_is) */
	size_t to_len;
	fi_addr_t lst_addr; /* client: the listener (the REQ goes there) */
	bool lst_known;	    /* lst_addr is in the AV */
	uint8_t lst_name[FAB_RDM_ADDR_MAX];
	size_t lst_len;
	bool lst_gone;	    /* client: a listener of this process that was closed (see below) */
	uint64_t rma_heard; /* the RMA counter's value the timer last saw (fab_rdm_data_heard) */
	/* server: the listener's list (under the peer's rdm_lock) */
	struct fab_rdm_lst *lst;
	fi_addr_t lst_peer; /* the client's address in the listener's AV */
	struct fab_rdm *lnext;
	int refs; /* under the peer's rdm_lock: the listener's list, the owner */
	/*
	 * Every send, write, read and atomic asks for a completion and carries
	 * a record (struct fab_rdm_op, a ring): whether the application wants
	 * the completion of a success, and its opcode.  So
	 * - a connection that ends completes what is still out with
	 *   IBV_WC_WR_FLUSH_ERR, as a verbs queue pair in the error state does
	 *   (a dead or refusing peer may never answer: shm drops an access its
	 *   target refuses, and reports an operation toward a dead peer without
	 *   its context);
	 * - where the provider does not order a read after earlier writes
	 *   (FI_ORDER_RAW; shm declares no order at all), a flush waits until
	 *   the earlier operations completed before it posts its read; where
	 *   it orders RMA reads after RMA writes only (FI_ORDER_RMA_RAW), until
	 *   the native atomic writes completed (atomics_out, the records with
	 *   atomic set still out).
	 */
	struct fab_rdm_op *ops;
	uint32_t nops, op_next;
	_Atomic uint64_t ops_posted, ops_done;
	_Atomic uint32_t atomics_out;
};

enum { FAB_OP_FREE = 0, FAB_OP_BUSY, FAB_OP_FLUSHED };

/*
 * The context of every operation of a reliable-datagram connection is a
 * record of ours that starts with a struct fi_context2: the providers that
 * ask for FI_CONTEXT or FI_CONTEXT2 (psm3, opx, efa) may use it until the
 * operation completes.  So are the control port's, the SRQ bounce
 * buffers' and the receives' contexts (struct fab_recv_rec, fabric.h).
 */
struct fab_rdm_op {
	struct fi_context2 fi_ctx;
	_Atomic int st;
	void *op_context;
	bool report;
	/* a native atomic write (fab_rdm_op_atomic; set after st, read where st is exchanged) */
	_Atomic bool atomic;
	enum ibv_wc_opcode opcode;
};

/* a listening reliable-datagram endpoint */
struct fab_rdm_lst {
	struct fab_peer *peer;
	struct fi_info *info;
	struct fid_cq *cq;
	struct fab_rdm_port port;
	struct fab_rdm *recs; /* requests and connections made here (under rdm_lock) */
	/* set by rpma_ep_shutdown() while the progress thread may still drain the listener */
	_Atomic bool closing;
	/* a peer of another major version was told about once (fab_lst_rx) */
	_Atomic bool told_major;
};

/* ------------------------------------------------------------ helpers */

static uint64_t fab_ms(void)
{
	return fab_now_ns() / 1000000ULL;
}

/*
 * fab_ep_type_env -- RPMA_FABRIC_EP_TYPE: "msg", "rdm" or NULL (automatic:
 * message endpoints, else reliable datagrams)
 */
const char *fab_ep_type_env(void)
{
	const char *v = getenv("RPMA_FABRIC_EP_TYPE");
	if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
		return NULL;
	return v;
}

/* fab_rdm_cfg -- the protocol's timing for a connection timeout of timeout_ms */
static void fab_rdm_cfg(int timeout_ms, struct fab_rdm_cfg *cfg)
{
	uint64_t t = timeout_ms > 0 ? (uint64_t)timeout_ms : FAB_RDM_DEFAULT_TIMEOUT_MS;
	cfg->timeout_ms = t;
	cfg->retry_ms = t / 10 > 10 ? t / 10 : 10;
	/*
	 * the peer's timeout may be shorter than ours (each side has its own
	 * configuration): a keep-alive at least every FAB_RDM_KEEPALIVE_MAX_MS
	 * (threads over shm: a client with 5 s sent one every 1.25 s, and its
	 * server with 1 s reported LOST)
	 */
	uint64_t ka = t / 4 > 10 ? t / 4 : 10;
	cfg->keepalive_ms = ka < FAB_RDM_KEEPALIVE_MAX_MS ? ka : FAB_RDM_KEEPALIVE_MAX_MS;
	cfg->decide_ms = FAB_RDM_DECIDE_MS;
}

/* fab_rdm_peer_init -- the peer's connection ids */
int fab_rdm_peer_init(struct fab_peer *p)
{
	pthread_mutex_init(&p->rdm_lock, NULL);
	if (!p->rdm)
		return 0;
	p->rdm_ids = calloc(1, sizeof(*p->rdm_ids));
	if (p->rdm_ids == NULL || fab_rdm_ids_init(p->rdm_ids, FAB_RDM_IDS)) {
		free(p->rdm_ids);
		p->rdm_ids = NULL;
		pthread_mutex_destroy(&p->rdm_lock);
		FAB_LOG_ERROR("out of memory for the connection ids");
		return RPMA_E_NOMEM;
	}
	return 0;
}

void fab_rdm_peer_fini(struct fab_peer *p)
{
	if (p->rdm_ids) {
		fab_rdm_ids_fini(p->rdm_ids);
		free(p->rdm_ids);
		p->rdm_ids = NULL;
	}
	pthread_mutex_destroy(&p->rdm_lock);
}

/* fab_av_open -- a small AV for an endpoint (it names one or a few peers) */
static int fab_av_open(struct fab_peer *p, struct fid_av **av)
{
	struct fi_av_attr attr = {.type = FI_AV_UNSPEC, .count = 4};
	int ret = fi_av_open(p->domain, &attr, av, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_av_open()");
		return fab_err(ret);
	}
	return 0;
}

/* fab_av_add -- insert one address; RPMA_E_PROVIDER when the AV refuses it */
static int fab_av_add(struct fid_av *av, const void *addr, fi_addr_t *fa)
{
	int ret = fi_av_insert(av, addr, 1, fa, 0, NULL);
	if (ret != 1) {
		FAB_LOG_ERROR("fi_av_insert() failed: %s",
			      ret < 0 ? fi_strerror(-ret) : "the address was refused");
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/*
 * Endpoints of this process that were closed.  libfabric 1.17's shm keeps a
 * process-wide table of its local endpoints and reaches a peer endpoint of
 * the same process through a pointer to its region, which the endpoint's
 * close frees: a send to it afterwards, or inserting its name into an AV,
 * is a use after free (SIGSEGV in fi_tsendmsg and fi_av_insert, seen with
 * conn/unreachable and conn/disconnect_while_connecting).  So the names of
 * our closed endpoints (string addresses, FI_ADDR_STR, only) are kept, the
 * last FAB_GONE_MAX of them and every listener's: a control message to one
 * is dropped (under the read lock, which a close takes for writing, so no
 * send is under way when an endpoint closes), and a client asking for a closed listener of
 * this process is told UNREACHABLE without an insert.  The application's
 * own operations are not checked: none is posted to a peer that went.  A
 * name opened again stays in the list, marked open: it is no longer gone,
 * but shm's own list still holds its dead entry (fab_port_av_add).
 */
#define FAB_GONE_MAX 4096
struct fab_gone {
	struct fab_gone *next;
	bool open; /* opened again since (struct fab_peer: respell_reused) */
	bool keep; /* a listener's name, which may be opened again: never forgotten */
	size_t len;
	uint8_t addr[];
};
static pthread_rwlock_t fab_gone_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct fab_gone *fab_gone_head; /* the newest first */
static unsigned fab_gone_n;

/*
 * The string addresses in this process's AVs.  libfabric 2.x's shm follows
 * the pointer to a peer endpoint's region of the same process also when the
 * address leaves an AV (fi_av_remove, and fi_close of the AV), after that
 * endpoint's close unmapped the region: SIGSEGV in fi_av_remove, in nearly
 * every scenario over shm on libfabric 2.1.  So every insert of a string
 * address is recorded here (under fab_gone_lock, written), and before one
 * of our endpoints closes (fab_gone_set) its name leaves every AV of this
 * process that holds it, while its region is still mapped.  A removal the
 * owner of the entry asks for later finds it gone and does nothing.
 */
struct fab_avn {
	struct fab_avn *next;
	struct fid_av *av;
	fi_addr_t fa;
	size_t len;
	uint8_t name[];
};
static struct fab_avn *fab_avn_head;

/* fab_name_eq -- the same string address (the lengths may or may not count the NUL) */
static bool fab_name_eq(const void *a, size_t alen, const void *b, size_t blen)
{
	alen = strnlen(a, alen);
	blen = strnlen(b, blen);
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* fab_gone_find_locked -- the link that points at the entry of addr, or at NULL */
static struct fab_gone **fab_gone_find_locked(const void *addr, size_t len)
{
	struct fab_gone **pp = &fab_gone_head;
	for (; *pp; pp = &(*pp)->next)
		if (fab_name_eq((*pp)->addr, (*pp)->len, addr, len))
			break;
	return pp;
}

/*
 * fab_gone_set -- an endpoint of this process named addr closes (gone) or
 * opens; RPMA_E_NOMEM when a closing one cannot be remembered
 */
static int fab_gone_set(const struct fab_peer *p, const void *addr, size_t len, bool gone,
			bool keep)
{
	int ret = 0;
	if (p->info->addr_format != FI_ADDR_STR || addr == NULL || len == 0)
		return 0;
	pthread_rwlock_wrlock(&fab_gone_lock);
	struct fab_gone **pp = fab_gone_find_locked(addr, len);
	if (*pp) {
		(*pp)->open = !gone; /* a name closed once is kept (fab_port_av_add) */
		(*pp)->keep |= keep;
	}
	if (gone) {
		/* out of every AV of this process first (see struct fab_avn) */
		for (struct fab_avn **np = &fab_avn_head; *np;) {
			struct fab_avn *n = *np;
			if (!fab_name_eq(n->name, n->len, addr, len)) {
				np = &n->next;
				continue;
			}
			int r = fi_av_remove(n->av, &n->fa, 1, 0);
			if (r)
				FAB_LOG_FI(r, "fi_av_remove(closed endpoint of this process)");
			*np = n->next;
			free(n);
		}
	}
	if (gone && *pp == NULL) {
		struct fab_gone *g = malloc(sizeof(*g) + len);
		if (g) {
			g->open = false;
			g->keep = keep;
			g->len = len;
			memcpy(g->addr, addr, len);
			g->next = fab_gone_head;
			fab_gone_head = g;
			if (++fab_gone_n > FAB_GONE_MAX) {
				/*
				 * forget the oldest but listeners' names: shm
				 * holds a dead entry for each name it ever
				 * closed, and only a listener's name is opened
				 * again (fab_port_av_add); a connection's
				 * endpoint gets a fresh name
				 */
				struct fab_gone **last = NULL;
				for (struct fab_gone **q = &fab_gone_head; *q; q = &(*q)->next)
					if (!(*q)->keep)
						last = q;
				if (last) {
					struct fab_gone *old = *last;
					*last = old->next;
					free(old);
					fab_gone_n--;
				}
			}
		} else {
			ret = RPMA_E_NOMEM;
		}
	}
	pthread_rwlock_unlock(&fab_gone_lock);
	if (ret)
		FAB_LOG_ERROR("out of memory: a closed endpoint of this process is not remembered "
			      "(a control message of this process may reach it)");
	return ret;
}

/* fab_gone_is_locked -- is addr a closed endpoint of this process? (lock held) */
static bool fab_gone_is_locked(const void *addr, size_t len)
{
	struct fab_gone *g = *fab_gone_find_locked(addr, len);
	return g != NULL && !g->open;
}

static bool fab_gone_is(const void *addr, size_t len)
{
	pthread_rwlock_rdlock(&fab_gone_lock);
	bool found = fab_gone_is_locked(addr, len);
	pthread_rwlock_unlock(&fab_gone_lock);
	return found;
}

/*
 * fab_port_av_add -- insert addr into the port's AV; a string address
 * (NUL-terminated) is recorded (struct fab_avn), and refused when it names
 * a closed endpoint of this process
 */
static int fab_port_av_add(struct fab_rdm_port *pt, const void *addr, fi_addr_t *fa)
{
	if (!pt->str_addrs)
		return fab_av_add(pt->av, addr, fa);
	size_t len = strlen(addr);
	struct fab_avn *n = malloc(sizeof(*n) + len + 1);
	if (n == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret;
	pthread_rwlock_wrlock(&fab_gone_lock);
	/* closed, or closed once and opened again: one look at the list */
	const struct fab_gone *g = *fab_gone_find_locked(addr, len);
	if (g && !g->open) {
		FAB_LOG_INFO("%s is a closed endpoint of this process: not inserted",
			     (const char *)addr);
		ret = RPMA_E_PROVIDER;
	} else if (g && pt->respell) {
		/* around the dead entry of its name (struct fab_peer: respell_reused) */
		const char *a = addr, *sep = strstr(a, "://");
		size_t head = sep ? (size_t)(sep - a) + 3 : 0;
		char *alt = malloc(len + 2);
		if (alt == NULL) {
			FAB_LOG_ERROR("out of memory");
			ret = RPMA_E_NOMEM;
		} else {
			memcpy(alt, a, head);
			alt[head] = '/';
			memcpy(alt + head + 1, a + head, len - head + 1);
			FAB_LOG_INFO("%s was opened again in this process: inserted as %s", a, alt);
			ret = fab_av_add(pt->av, alt, fa);
			free(alt);
		}
	} else {
		ret = fab_av_add(pt->av, addr, fa);
	}
	if (ret == 0) {
		n->av = pt->av;
		n->fa = *fa;
		n->len = len;
		memcpy(n->name, addr, len + 1);
		n->next = fab_avn_head;
		fab_avn_head = n;
		n = NULL;
	}
	pthread_rwlock_unlock(&fab_gone_lock);
	free(n);
	return ret;
}

/*
 * fab_av_add_name -- insert an address that came in a message (len bytes),
 * ended with a NUL: a string address (FI_ADDR_STR) needs one
 */
static int fab_av_add_name(struct fab_rdm_port *pt, const uint8_t *addr, size_t len, fi_addr_t *fa)
{
	uint8_t name[FAB_RDM_ADDR_MAX + 1] = {0};
	memcpy(name, addr, len < FAB_RDM_ADDR_MAX ? len : FAB_RDM_ADDR_MAX);
	return fab_port_av_add(pt, name, fa);
}

/* fab_port_av_del -- take fa out of the port's AV, unless it went already (fab_gone_set) */
static void fab_port_av_del(struct fab_rdm_port *pt, fi_addr_t fa)
{
	if (!pt->str_addrs) {
		(void)fi_av_remove(pt->av, &fa, 1, 0);
		return;
	}
	pthread_rwlock_wrlock(&fab_gone_lock);
	for (struct fab_avn **np = &fab_avn_head; *np; np = &(*np)->next) {
		struct fab_avn *n = *np;
		if (n->av == pt->av && n->fa == fa) {
			(void)fi_av_remove(pt->av, &fa, 1, 0);
			*np = n->next;
			free(n);
			break;
		}
	}
	pthread_rwlock_unlock(&fab_gone_lock);
}

/* fab_port_av_close -- close the port's AV (if any), forgetting its records; fi_close's result */
static int fab_port_av_close(struct fab_rdm_port *pt)
{
	if (pt->av == NULL)
		return 0;
	/* the lock is held through the close: no name leaves this AV meanwhile */
	pthread_rwlock_wrlock(&fab_gone_lock);
	for (struct fab_avn **np = &fab_avn_head; *np;) {
		struct fab_avn *n = *np;
		if (n->av == pt->av) {
			*np = n->next;
			free(n);
		} else {
			np = &n->next;
		}
	}
	int ret = fi_close(&pt->av->fid);
	pthread_rwlock_unlock(&fab_gone_lock);
	if (ret)
		FAB_LOG_FI(ret, "fi_close(av)");
	pt->av = NULL;
	return ret;
}

/* ------------------------------------------------------------ control port */

/* fab_port_fini -- release what fab_port_init made (the endpoint is closed) */
static void fab_port_fini(struct fab_rdm_port *pt)
{
	if (pt->rx_mr) {
		int r = fi_close(&pt->rx_mr->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(control receives' mr)");
		pt->rx_mr = NULL;
	}
	if (pt->mr) {
		int r = fi_close(&pt->mr->fid);
		if (r)
			FAB_LOG_FI(r, "fi_close(control mr)");
		pt->mr = NULL;
	}
	if (pt->rx != &pt->rx_one)
		free(pt->rx);
	pt->rx = NULL;
	pthread_mutex_destroy(&pt->lock);
}

/*
 * fab_port_init -- a port on ep (enabled): its name and nrx control
 * receives (not posted yet); on failure nothing of it is left
 */
static int fab_port_init(struct fab_peer *p, struct fab_rdm_port *pt, struct fid_ep *ep,
			 struct fid_av *av, unsigned nrx, struct fab_rdm *owner)
{
	pthread_mutex_init(&pt->lock, NULL);
	pt->nrx = nrx;
	pt->ep = ep;
	pt->av = av;
	pt->str_addrs = p->info->addr_format == FI_ADDR_STR;
	pt->respell = pt->str_addrs && p->respell_reused;
	pt->inject = p->inject_size;
	pt->rx = nrx == 1 ? &pt->rx_one : calloc(nrx, sizeof(*pt->rx));
	if (pt->rx == NULL) {
		FAB_LOG_ERROR("out of memory");
		fab_port_fini(pt);
		return RPMA_E_NOMEM;
	}
	/* the slots name their connection to the drains of a shared CQ (fab_rdm_ctl_grouped) */
	for (int i = 0; i < FAB_RDM_TXS; i++)
		pt->tx[i].s = (struct fab_rdm_slot){.head.kind = FAB_CTX_CTL, .owner = owner};
	for (unsigned i = 0; i < nrx; i++)
		pt->rx[i].s = (struct fab_rdm_slot){.head.kind = FAB_CTX_CTL, .owner = owner};
	pt->name_len = sizeof(pt->name);
	int ret = fi_getname(&ep->fid, pt->name, &pt->name_len);
	if (ret || pt->name_len == 0 || pt->name_len > FAB_RDM_ADDR_MAX) {
		FAB_LOG_ERROR("fi_getname() failed: %s",
			      ret ? fi_strerror(-ret) : "no name, or a name over 128 bytes");
		fab_port_fini(pt);
		return RPMA_E_PROVIDER;
	}
	if (p->mr_mode & FI_MR_LOCAL) {
		uint64_t key;
		ret = fab_peer_reg(p, pt, sizeof(*pt), FI_SEND | FI_RECV, false, &pt->mr, &pt->desc,
				   &key);
		if (!ret && pt->rx != &pt->rx_one)
			ret = fab_peer_reg(p, pt->rx, nrx * sizeof(*pt->rx), FI_RECV, false,
					   &pt->rx_mr, &pt->rx_desc, &key);
		if (ret) {
			fab_port_fini(pt);
			return ret;
		}
	}
	if (pt->rx == &pt->rx_one)
		pt->rx_desc = pt->desc;
	return 0;
}

/* fab_port_post_rx -- (re)post control receive x: was it posted? */
static bool fab_port_post_rx(struct fab_rdm_port *pt, struct fab_rdm_rx_slot *x)
{
	if (atomic_load(&pt->closing))
		return false;
	struct iovec iov = {.iov_base = x->buf, .iov_len = sizeof(x->buf)};
	void *desc = pt->rx_desc;
	struct fi_msg_tagged msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = FI_ADDR_UNSPEC,
		.tag = FAB_RDM_CTL_TAG,
		.ignore = 0,
		.context = x,
	};
	for (int tries = 0; tries < 1000; tries++) {
		ssize_t r = fi_trecvmsg(pt->ep, &msg, FI_COMPLETION);
		if (r == 0) {
			atomic_fetch_add(&pt->rx_out, 1);
			return true;
		}
		if (r != -FI_EAGAIN) {
			FAB_LOG_FI(r, "fi_trecvmsg(control)");
			break;
		}
	}
	FAB_LOG_ERROR("a control receive could not be posted: the endpoint may not hear its peers");
	return false;
}

/* fab_port_post_rxs -- post the port's control receives: were they all? */
static bool fab_port_post_rxs(struct fab_rdm_port *pt)
{
	bool all = true;
	for (unsigned i = 0; i < pt->nrx; i++)
		all = fab_port_post_rx(pt, &pt->rx[i]) && all;
	return all;
}

/* fab_port_rx_of -- the control receive whose context is ctx, or NULL */
static inline struct fab_rdm_rx_slot *fab_port_rx_of(struct fab_rdm_port *pt, void *ctx)
{
	uintptr_t c = (uintptr_t)ctx, lo = (uintptr_t)pt->rx;
	if (c < lo || c >= lo + pt->nrx * sizeof(pt->rx[0]))
		return NULL;
	return ctx;
}

/* fab_port_post -- post slot t (port lock held); false: refused for now (-FI_EAGAIN) */
static bool fab_port_post(struct fab_rdm_port *pt, struct fab_rdm_tx *t)
{
	struct iovec iov = {.iov_base = t->buf, .iov_len = t->len};
	void *desc = pt->desc;
	struct fi_msg_tagged msg = {
		.msg_iov = &iov,
		.desc = &desc,
		.iov_count = 1,
		.addr = t->to,
		.tag = FAB_RDM_CTL_TAG,
		.context = t,
	};
	if (pt->str_addrs) {
		pthread_rwlock_rdlock(&fab_gone_lock);
		if (t->to_len && fab_gone_is_locked(t->to_name, t->to_len)) {
			pthread_rwlock_unlock(&fab_gone_lock);
			FAB_LOG_DEBUG("a control message to a closed endpoint dropped");
			atomic_store(&t->st, FAB_TX_FREE);
			return true;
		}
	}
	/*
	 * injected when short enough: the slot is free at once, whether or not
	 * anybody reads the CQ (a full CQ of the application is not read)
	 */
	bool inject = t->len <= pt->inject;
	ssize_t r = fi_tsendmsg(pt->ep, &msg, inject ? FI_INJECT : FI_COMPLETION);
	if (pt->str_addrs)
		pthread_rwlock_unlock(&fab_gone_lock);
	if (r == -FI_EAGAIN)
		return false;
	if (r == 0 && inject) {
		atomic_store(&t->st, FAB_TX_FREE);
		return true;
	}
	if (r) {
		/* the protocol sends again (or gives up at its timeout) */
		FAB_LOG_INFO("fi_tsendmsg(control) failed: %s", fi_strerror((int)-r));
		atomic_store(&t->st, FAB_TX_FREE);
		return true;
	}
	atomic_store(&t->st, FAB_TX_POSTED);
	return true;
}

/* fab_port_send -- send m to `to` from the port; dropped when every slot is busy */
static void fab_port_send(struct fab_rdm_port *pt, fi_addr_t to, const uint8_t *to_name,
			  size_t to_len, const struct fab_rdm_msg *m)
{
	pthread_mutex_lock(&pt->lock);
	/*
	 * a keep-alive behind a message still waiting for room says nothing
	 * that one does not (a connection's port sends to its peer only): the
	 * slots stay free for a DISC
	 */
	if (m->type == FAB_RDM_KEEPALIVE && atomic_load(&pt->queued) > 0) {
		pthread_mutex_unlock(&pt->lock);
		FAB_LOG_DEBUG("control KEEPALIVE not queued: a message waits for room");
		return;
	}
	struct fab_rdm_tx *t = NULL;
	for (int i = 0; i < FAB_RDM_TXS; i++) {
		if (atomic_load(&pt->tx[i].st) == FAB_TX_FREE) {
			t = &pt->tx[i];
			break;
		}
	}
	if (t == NULL) {
		pthread_mutex_unlock(&pt->lock);
		FAB_LOG_DEBUG("control %s dropped: every slot is busy", fab_rdm_type_str(m->type));
		return;
	}
	t->len = fab_rdm_encode(m, t->buf, sizeof(t->buf));
	if (t->len == 0) {
		pthread_mutex_unlock(&pt->lock);
		FAB_LOG_ERROR("control %s could not be encoded", fab_rdm_type_str(m->type));
		return;
	}
	FAB_LOG_DEBUG("control %s (seq %u) to %lu", fab_rdm_type_str(m->type), m->seq,
		      (unsigned long)to);
	t->to = to;
	t->to_len = to_name && to_len <= sizeof(t->to_name) ? to_len : 0;
	if (t->to_len)
		memcpy(t->to_name, to_name, t->to_len);
	t->order = ++pt->qseq;
	atomic_store(&t->st, FAB_TX_QUEUED);
	/* after the older ones: a queued slot goes first */
	if (atomic_load(&pt->queued) > 0 || !fab_port_post(pt, t))
		atomic_fetch_add(&pt->queued, 1);
	pthread_mutex_unlock(&pt->lock);
}

/* fab_port_flush -- post the queued slots again, oldest first; how many stay queued */
static int fab_port_flush(struct fab_rdm_port *pt)
{
	if (atomic_load(&pt->queued) == 0)
		return 0;
	pthread_mutex_lock(&pt->lock);
	/* a slot freed and taken again is not the oldest because its index is lower */
	while (atomic_load(&pt->queued) > 0) {
		struct fab_rdm_tx *t = NULL;
		for (int i = 0; i < FAB_RDM_TXS; i++) {
			struct fab_rdm_tx *u = &pt->tx[i];
			if (atomic_load(&u->st) == FAB_TX_QUEUED &&
			    (t == NULL || u->order < t->order))
				t = u;
		}
		if (t == NULL || !fab_port_post(pt, t))
			break;
		atomic_fetch_sub(&pt->queued, 1);
	}
	int left = atomic_load(&pt->queued);
	pthread_mutex_unlock(&pt->lock);
	return left;
}

/* fab_port_busy -- control sends still out (posted or queued) */
static bool fab_port_busy(struct fab_rdm_port *pt)
{
	for (int i = 0; i < FAB_RDM_TXS; i++)
		if (atomic_load(&pt->tx[i].st) != FAB_TX_FREE)
			return true;
	return false;
}

/* fab_port_tx_of -- the send slot ctx is, or NULL */
static struct fab_rdm_tx *fab_port_tx_of(struct fab_rdm_port *pt, void *ctx)
{
	uintptr_t c = (uintptr_t)ctx, lo = (uintptr_t)pt->tx;
	if (c < lo || c >= lo + sizeof(pt->tx))
		return NULL;
	return (struct fab_rdm_tx *)ctx;
}

/* ------------------------------------------------------------ records */

/* fab_rec_new -- a record with a fresh connection id; NULL when out of memory or ids */
static struct fab_rdm *fab_rec_new(struct fab_peer *p, uint32_t *id, uint32_t *gen)
{
	struct fab_rdm *r = calloc(1, sizeof(*r));
	if (r == NULL) {
		FAB_LOG_ERROR("out of memory");
		return NULL;
	}
	pthread_mutex_lock(&p->rdm_lock);
	int ret = fab_rdm_ids_get(p->rdm_ids, id, gen);
	pthread_mutex_unlock(&p->rdm_lock);
	if (ret) {
		free(r);
		FAB_LOG_ERROR("no connection id left (%u connections)", FAB_RDM_IDS - 1);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	r->peer = p;
	r->refs = 1;
	return r;
}

/* fab_rec_put_locked -- drop a reference (rdm_lock held); the last frees the record */
static void fab_rec_put_locked(struct fab_rdm *r)
{
	if (--r->refs > 0)
		return;
	fab_rdm_ids_put(r->peer->rdm_ids, r->m.id);
	pthread_mutex_destroy(&r->lock);
	free(r->ops);
	free(r);
}

static void fab_rec_put(struct fab_rdm *r)
{
	struct fab_peer *p = r->peer;
	pthread_mutex_lock(&p->rdm_lock);
	fab_rec_put_locked(r);
	pthread_mutex_unlock(&p->rdm_lock);
}

/* fab_rec_unlink_locked -- take r out of its listener's list (rdm_lock held) */
static void fab_rec_unlink_locked(struct fab_rdm *r)
{
	struct fab_rdm_lst *l = r->lst;
	if (l == NULL)
		return;
	for (struct fab_rdm **pp = &l->recs; *pp; pp = &(*pp)->lnext) {
		if (*pp == r) {
			*pp = r->lnext;
			break;
		}
	}
	fab_port_av_del(&l->port, r->lst_peer);
	r->lst = NULL;
	r->lnext = NULL;
	fab_rec_put_locked(r);
}

/* ------------------------------------------------------------ connection side */

/* fab_rdm_out_dest -- where a connection's control messages go now */
static fi_addr_t fab_rdm_out_dest(const struct fab_rdm *r)
{
	return r->to_known ? r->to : r->lst_addr;
}

/*
 * fab_rdm_send_out -- send what one step of the machine put out (record
 * lock held); when the connection's timer is due next
 */
static void fab_rdm_send_out(struct fab_rdm *r, const struct fab_rdm_out *o)
{
	/*
	 * a connection whose set-up failed before it knew where to send
	 * (tests/faultwalk: rxm dereferences an address not in the AV); an
	 * incoming one's refusal goes from the listener then
	 */
	if (!r->to_known && !r->lst_known) {
		if (o->nmsgs)
			FAB_LOG_DEBUG("%u control message(s) dropped: no address yet", o->nmsgs);
		return;
	}
	for (unsigned i = 0; i < o->nmsgs; i++)
		fab_port_send(&r->port, fab_rdm_out_dest(r), r->to_known ? r->to_name : r->lst_name,
			      r->to_known ? r->to_len : r->lst_len, &o->msgs[i]);
}

/* fab_rdm_arm -- the connection's next timer (record lock held) */
static void fab_rdm_arm(struct fab_conn *c, struct fab_rdm *r)
{
	uint64_t next = fab_rdm_conn_next_tick(&r->m);
	uint64_t now = fab_ms();
	if (atomic_load(&r->port.queued) > 0 && next > now + 1)
		next = now + 1;
	if (next == UINT64_MAX)
		return;
	fab_ceq_set_deadline(c, next * 1000000ULL);
}

/* fab_rdm_events -- report the events one step put out (no lock held) */
static void fab_rdm_events(struct fab_conn *c, const struct fab_rdm_out *o, const uint8_t *pdata,
			   size_t pdata_len)
{
	for (unsigned i = 0; i < o->nevents; i++) {
		if (o->events[i] == RPMA_CONN_ESTABLISHED) {
			fab_conn_established(c, pdata, pdata_len);
		} else {
			fab_conn_end(c, o->events[i]); /* fab_rdm_ended follows */
		}
	}
}

/*
 * fab_rdm_op_check -- may an operation be posted?  Not once the connection
 * ended: the peer may be gone, and shm completes an operation toward a
 * dead peer with an error that names no context (libfabric 1.17)
 */
static int fab_rdm_op_check(struct fab_conn *c)
{
	if (!fab_conn_ended(c))
		return 0;
	RPMA_LOG_ERROR("fabric: qp %u: the connection has ended", c->qp_num);
	return RPMA_E_PROVIDER;
}

/*
 * fab_rdm_op_wait -- fab_rdm_op_wrap's slow path: queued control messages
 * first, then a wait for the record op to come free
 */
static __attribute__((noinline, cold)) int fab_rdm_op_wait(struct fab_conn *c,
							   struct fab_rdm_op *op)
{
	struct fab_rdm *r = c->rdm;
	/*
	 * a control message of the connection (a keep-alive, a DISC) refused
	 * for want of room at the peer is posted again first, so that it gets
	 * the first slot that came free.  Over shm a message and a write wait
	 * for the same slot of the target's command queue (by libfabric 1.17's
	 * source), and a client writing 64 B one at a time had its keep-alives
	 * refused for as long as it wrote, retried by its timer while its
	 * writes took every slot (data::busy_stream_stays_up).  The operation
	 * does not wait for it: on libfabric 2.1's shm, under load, a variant
	 * that held operations back until the keep-alive went left the target
	 * hearing nothing (LOST after 3072 writes in 2 s, without the RMA
	 * counter's evidence).
	 */
	if (atomic_load_explicit(&r->port.queued, memory_order_relaxed) > 0)
		fab_rdm_flush_port(c);
	struct fab_conn_wait w = FAB_WAIT_INIT;
	while (atomic_load_explicit(&op->st, memory_order_acquire) != FAB_OP_FREE) {
		if (fab_conn_ended(c))
			return fab_rdm_op_check(c); /* a flushed record may never come back */
		if (!fab_conn_wait_round(c, &w, FAB_RDM_WAIT_NS)) {
			RPMA_LOG_ERROR("fabric: qp %u: all %u operations stayed in flight",
				       c->qp_num, r->nops);
			return RPMA_E_PROVIDER;
		}
	}
	return 0;
}

/*
 * fab_rdm_op_wrap -- an operation of the connection (not a receive): a
 * completion always, with a record (struct fab_rdm); none once the
 * connection ended (fab_rdm_op_check); waits for a free record while the
 * oldest is out, for 2 s at most
 */
int fab_rdm_op_wrap(struct fab_conn *c, enum ibv_wc_opcode opcode, void **ctx, uint64_t *ff)
{
	struct fab_rdm *r = c->rdm;
	if (__builtin_expect(fab_conn_ended(c), 0))
		return fab_rdm_op_check(c);
	struct fab_rdm_op *op = &r->ops[r->op_next];
	if (__builtin_expect(atomic_load_explicit(&r->port.queued, memory_order_relaxed) > 0 ||
				     atomic_load_explicit(&op->st, memory_order_acquire) !=
					     FAB_OP_FREE,
			     0)) {
		int ret = fab_rdm_op_wait(c, op);
		if (ret)
			return ret;
	}
	if (++r->op_next == r->nops)
		r->op_next = 0;
	op->op_context = *ctx;
	op->report = (*ff & FI_COMPLETION) != 0;
	atomic_store_explicit(&op->atomic, false, memory_order_relaxed);
	op->opcode = opcode;
	atomic_store_explicit(&op->st, FAB_OP_BUSY, memory_order_release);
	*ff |= FI_COMPLETION;
	*ctx = op;
	atomic_fetch_add_explicit(&r->ops_posted, 1, memory_order_relaxed);
	return 0;
}

/* fab_rdm_op_of -- the record ctx is, or NULL */
static struct fab_rdm_op *fab_rdm_op_of(struct fab_rdm *r, void *ctx)
{
	uintptr_t p = (uintptr_t)ctx, lo = (uintptr_t)r->ops;
	if (r->ops == NULL || p < lo || p >= lo + r->nops * sizeof(*r->ops))
		return NULL;
	return ctx;
}

/*
 * fab_rdm_op_unwrap -- a completion of ctx (fabric_cq.c, the drains of a
 * reliable-datagram connection): FAB_RDM_OP_NONE, not a record's;
 * FAB_RDM_OP_REPORT, report it (*ctx is the application's again, *opcode
 * what the operation was); FAB_RDM_OP_DROP, a success nobody asked for, or
 * an operation already flushed at the connection's end
 */
int fab_rdm_op_unwrap(struct fab_conn *c, void **ctx, enum ibv_wc_opcode *opcode, bool success)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_op *op = fab_rdm_op_of(r, *ctx);
	if (op == NULL)
		return FAB_RDM_OP_NONE;
	*ctx = op->op_context;
	*opcode = op->opcode;
	bool report = op->report || !success;
	if (success)
		fab_rdm_heard_data(c); /* the peer took it */
	int was = atomic_exchange_explicit(&op->st, FAB_OP_FREE, memory_order_acq_rel);
	if (atomic_load_explicit(&op->atomic, memory_order_relaxed) && was != FAB_OP_FREE)
		atomic_fetch_sub_explicit(&r->atomics_out, 1, memory_order_release);
	atomic_fetch_add_explicit(&r->ops_done, 1, memory_order_release);
	return (was == FAB_OP_BUSY && report) ? FAB_RDM_OP_REPORT : FAB_RDM_OP_DROP;
}

/*
 * fab_rdm_flush_ops -- the connection ended: complete every operation still
 * out with IBV_WC_WR_FLUSH_ERR (its later completion, if any, is dropped)
 */
static void fab_rdm_flush_ops(struct fab_conn *c)
{
	struct fab_rdm *r = c->rdm;
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->nops; i++) {
		struct fab_rdm_op *op = &r->ops[i];
		int busy = FAB_OP_BUSY;
		if (!atomic_compare_exchange_strong(&op->st, &busy, FAB_OP_FLUSHED))
			continue;
		if (!fab_imm_flushed(c, op->op_context))
			continue; /* the other half of a write with immediate data reported it */
		void *ctx = op->op_context;
		struct fab_stage_slot *st = fab_stage_of(c, ctx);
		if (st) {
			ctx = (void *)st->op_context;
			atomic_store(&st->taken, false);
		}
		if (fab_push_flushed(c, (uint64_t)(uintptr_t)fab_imm_context(c, ctx), op->opcode))
			n++;
	}
	if (n)
		FAB_LOG_INFO("qp %u: %u operations flushed", c->qp_num, n);
}

/*
 * fab_rdm_op_cancel -- the post of the operation with record ctx failed:
 * free the record.  true: the connection ended while the post was still
 * being retried (a full queue toward a dead peer) and fab_rdm_flush_ops
 * already reported the operation as flushed; that completion stands, so
 * the post must count as accepted (as on a verbs queue pair in the error
 * state), or the application would see a completion of an operation whose
 * post failed.
 */
bool fab_rdm_op_cancel(struct fab_conn *c, void *ctx)
{
	struct fab_rdm_op *op = fab_rdm_op_of(c->rdm, ctx);
	if (op == NULL)
		return false;
	int was = atomic_exchange(&op->st, FAB_OP_FREE);
	if (atomic_load_explicit(&op->atomic, memory_order_relaxed) && was != FAB_OP_FREE)
		atomic_fetch_sub(&c->rdm->atomics_out, 1);
	atomic_fetch_add(&c->rdm->ops_done, 1);
	if (was != FAB_OP_FLUSHED)
		return false;
	FAB_LOG_INFO("qp %u: the connection ended while an operation was being posted: "
		     "it completed as flushed",
		     c->qp_num);
	return true;
}

/*
 * fab_rdm_ended -- the connection's final event was reported (fab_conn_end,
 * once, after it cancelled the receives): its operations still out are
 * flushed
 */
void fab_rdm_ended(struct fab_conn *c)
{
	fab_rdm_flush_ops(c);
}

/* fab_rdm_flush_port -- post the connection's queued control messages again */
void fab_rdm_flush_port(struct fab_conn *c)
{
	if (c->rdm->port_made)
		(void)fab_port_flush(&c->rdm->port);
}

/*
 * fab_rdm_op_atomic -- the operation with record ctx (fab_rdm_op_wrap) is a
 * native atomic write: a later flush waits for it where the provider orders
 * RMA reads after RMA writes only (FAB_FLUSH_WAIT_ATOMICS).  Before the post:
 * its completion may come at once.
 */
void fab_rdm_op_atomic(struct fab_conn *c, void *ctx)
{
	struct fab_rdm_op *op = fab_rdm_op_of(c->rdm, ctx);
	if (op == NULL)
		return;
	atomic_fetch_add_explicit(&c->rdm->atomics_out, 1, memory_order_relaxed);
	atomic_store_explicit(&op->atomic, true, memory_order_release);
}

/*
 * fab_rdm_flush_done -- have the operations a flush waits for completed:
 * every earlier one, or the native atomic writes (FAB_FLUSH_WAIT_ATOMICS)
 */
static bool fab_rdm_flush_done(struct fab_rdm *r, enum fab_flush_wait what, uint64_t want)
{
	if (what == FAB_FLUSH_WAIT_ATOMICS)
		return atomic_load_explicit(&r->atomics_out, memory_order_acquire) == 0;
	return atomic_load_explicit(&r->ops_done, memory_order_acquire) >= want;
}

/*
 * fab_rdm_flush_wait -- before a flush's read: the earlier operations (or,
 * FAB_FLUSH_WAIT_ATOMICS, the native atomic writes) completed (for 2 s at most)
 */
int fab_rdm_flush_wait(struct fab_conn *c, enum fab_flush_wait what)
{
	struct fab_rdm *r = c->rdm;
	uint64_t want = atomic_load_explicit(&r->ops_posted, memory_order_relaxed);
	struct fab_conn_wait w = FAB_WAIT_INIT;
	while (!fab_rdm_flush_done(r, what, want)) {
		if (fab_conn_ended(c))
			return fab_rdm_op_check(c); /* a flushed write may never complete */
		if (!fab_conn_wait_round(c, &w, FAB_RDM_WAIT_NS)) {
			RPMA_LOG_ERROR("fabric: qp %u: the operations before a flush or an atomic "
				       "write did not complete",
				       c->qp_num);
			return RPMA_E_PROVIDER;
		}
	}
	return 0;
}

/*
 * fab_rdm_set_to -- the peer's side of the connection is at addr and has
 * the connection id (id, gen): insert it, and send everything there from
 * now on, the application's messages tagged with that id
 */
static int fab_rdm_set_to(struct fab_conn *c, struct fab_rdm *r, const uint8_t *addr, size_t len,
			  uint32_t id, uint32_t gen)
{
	int ret = fab_av_add_name(&r->port, addr, len, &r->to);
	if (ret)
		return ret;
	r->to_known = true;
	memcpy(r->to_name, addr, len);
	r->to_len = len;
	c->tx_tag = fab_rdm_app_tag(id, gen);
	c->dest = r->to;
	return 0;
}

/* fab_rdm_learn_to -- a client learns the server's side from an ACCEPT (record lock held) */
static void fab_rdm_learn_to(struct fab_conn *c, struct fab_rdm *r, const struct fab_rdm_msg *m)
{
	if (r->to_known || m->type != FAB_RDM_ACCEPT || m->addr_len == 0 || c->incoming)
		return;
	(void)fab_rdm_set_to(c, r, m->addr, m->addr_len, m->src_id, m->src_gen);
}

/* fab_rdm_ctl_rx -- a control message arrived at the connection's endpoint */
static void fab_rdm_ctl_rx(struct fab_conn *c, struct fab_rdm *r, struct fab_rdm_rx_slot *x,
			   size_t len)
{
	struct fab_rdm_msg m;
	struct fab_rdm_out o = {0};
	uint8_t pdata[FAB_RDM_PDATA_MAX];
	size_t pdata_len = 0;
	/*
	 * the message is copied and the receive posted again at once: a control
	 * message right behind this one (a repeated ACCEPT) then finds a posted
	 * receive instead of waiting in the provider's queue of unexpected
	 * messages (where, from an address not inserted yet, it crashed
	 * libfabric 2.0-2.4's rxm in the fi_av_insert() of fab_rdm_learn_to
	 * before we asked for FI_DIRECTED_RECV: fab_peer_getinfo).  The
	 * source's drains are serialised, so the next message is not handled
	 * before this one.
	 */
	uint8_t msg[FAB_RDM_MSG_MAX];
	if (len > sizeof(msg))
		len = sizeof(msg);
	memcpy(msg, x->buf, len);
	fab_port_post_rx(&r->port, x);
	enum fab_rdm_status st = fab_rdm_decode(msg, len, &m);
	if (st != FAB_RDM_OK) {
		FAB_LOG_NOTICE("qp %u: a control message of %zu bytes dropped: %s", c->qp_num, len,
			       fab_rdm_status_str(st));
		return;
	}
	pthread_mutex_lock(&r->lock);
	fab_rdm_learn_to(c, r, &m);
	enum fab_rdm_verdict v = fab_rdm_conn_recv(&r->m, &m, fab_ms(), &o);
	FAB_LOG_DEBUG("qp %u: control %s (seq %u) came: verdict %d", c->qp_num,
		      fab_rdm_type_str(m.type), m.seq, (int)v);
	if (v == FAB_RDM_STALE)
		FAB_LOG_DEBUG("qp %u: a stale %s dropped", c->qp_num, fab_rdm_type_str(m.type));
	fab_rdm_send_out(r, &o);
	if (o.nevents && o.events[0] == RPMA_CONN_ESTABLISHED && !c->incoming) {
		pdata_len = r->m.peer_pdata_len;
		memcpy(pdata, r->m.peer_pdata, pdata_len);
	}
	fab_rdm_arm(c, r);
	pthread_mutex_unlock(&r->lock);
	fab_rdm_events(c, &o, pdata, pdata_len);
}

/*
 * fab_rdm_ctl_entry -- a successful completion of the connection's endpoint
 * that belongs to the control protocol: handled (true), or not ours
 */
bool fab_rdm_ctl_entry(struct fab_conn *c, const struct fi_cq_data_entry *e)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_rx_slot *x = fab_port_rx_of(&r->port, e->op_context);
	if (x) {
		atomic_fetch_sub(&r->port.rx_out, 1);
		fab_rdm_ctl_rx(c, r, x, e->len);
		return true;
	}
	struct fab_rdm_tx *t = fab_port_tx_of(&r->port, e->op_context);
	if (t == NULL)
		return false;
	atomic_store(&t->st, FAB_TX_FREE);
	return true;
}

/* fab_rdm_ctl_error -- an error completion of the control protocol: handled, or not ours */
bool fab_rdm_ctl_error(struct fab_conn *c, const struct fi_cq_err_entry *e)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_rx_slot *x = fab_port_rx_of(&r->port, e->op_context);
	if (x) {
		atomic_fetch_sub(&r->port.rx_out, 1);
		if (e->err != FI_ECANCELED) {
			FAB_LOG_INFO("qp %u: the control receive failed: %s", c->qp_num,
				     fi_strerror(e->err));
			fab_port_post_rx(&r->port, x);
		}
		return true;
	}
	struct fab_rdm_tx *t = fab_port_tx_of(&r->port, e->op_context);
	if (t == NULL)
		return false;
	FAB_LOG_INFO("qp %u: a control message was not delivered: %s", c->qp_num,
		     fi_strerror(e->err));
	atomic_store(&t->st, FAB_TX_FREE);
	return true;
}

/*
 * fab_rdm_ctl_grouped -- an entry (e) or an error (err) of a CQ shared by
 * connections (fabric.h, CQ groups) whose context x is a control slot: to
 * the slot's connection, unless its endpoint is closing (ctl_dead, set
 * while no drain of the group runs; the group's drains are serialised)
 */
void fab_rdm_ctl_grouped(struct fab_ctx *x, const struct fi_cq_data_entry *e,
			 const struct fi_cq_err_entry *err)
{
	struct fab_rdm *r = ((struct fab_rdm_slot *)(void *)x)->owner;
	struct fab_conn *c = r ? r->conn : NULL;
	if (c == NULL || r->ctl_dead)
		return;
	if (e)
		(void)fab_rdm_ctl_entry(c, e);
	else
		(void)fab_rdm_ctl_error(c, err);
}

/*
 * fab_rdm_data_heard -- the peer's data since the last look counts as
 * hearing from it (record lock held): an operation of ours it completed
 * or a message of its that a receive took (fab_rdm_heard_data), or an RMA
 * operation of its against this side (the endpoint's RMA counter, where
 * one is bound).  A busy connection needs it: over shm a client's stream
 * of writes kept the target's command queue full, its keep-alives were
 * refused (-FI_EAGAIN) for as long as the stream went on, and the target,
 * hearing nothing, reported LOST after its timeout.  The keep-alives now
 * go first where they can (fab_rdm_op_wrap): without the counter that
 * was enough on libfabric 1.17; on 2.1 only a variant that held operations
 * back was tried without it, and failed under load.  So the counter stays,
 * and an endpoint shared by a peer's connections, whose counter cannot
 * tell whose writes moved it, will need another way (HACKING.md).
 */
static void fab_rdm_data_heard(struct fab_conn *c, struct fab_rdm *r)
{
	bool heard = atomic_exchange_explicit(&c->rdm_heard, false, memory_order_relaxed);
	if (c->rma_cntr) {
		uint64_t v = fi_cntr_read(c->rma_cntr);
		heard |= v != r->rma_heard;
		r->rma_heard = v;
	}
	if (heard)
		fab_rdm_conn_heard(&r->m, fab_ms());
}

/* fab_rdm_conn_timer -- the connection's deadline passed: the machine's tick, queued sends */
void fab_rdm_conn_timer(struct fab_conn *c)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_out o = {0};
	pthread_mutex_lock(&r->lock);
	fab_rdm_data_heard(c, r);
	if (fab_rdm_conn_gives_up(&r->m, fab_ms())) {
		/*
		 * a progress thread that got no CPU for the timeout finds the
		 * peer silent with its messages (keep-alives, DISC, READY,
		 * ACCEPT) still in the CQ: read them first, so that LOST or
		 * UNREACHABLE means the peer's silence, not ours (tcp;ofi_rxm
		 * under load: LOST instead of CLOSED at an orderly close; the
		 * server's side of conn/request_burst UNREACHABLE once in a
		 * CI run, its client ESTABLISHED)
		 */
		pthread_mutex_unlock(&r->lock);
		fab_source_drain(fab_conn_txs(c));
		if (c->rxcq)
			fab_source_drain(&c->rx_src);
		pthread_mutex_lock(&r->lock);
		fab_rdm_data_heard(c, r); /* what the drains found */
	}
	(void)fab_port_flush(&r->port);
	fab_rdm_conn_tick(&r->m, fab_ms(), &o);
	fab_rdm_send_out(r, &o);
	fab_rdm_arm(c, r);
	pthread_mutex_unlock(&r->lock);
	fab_rdm_events(c, &o, NULL, 0);
}

/*
 * fab_rdm_conn_prepare -- before fi_endpoint(): the connection's record (an
 * outgoing one's; an incoming one has it from its request) and its AV
 */
int fab_rdm_conn_prepare(struct fab_conn *c)
{
	struct fab_peer *p = c->peer;
	if (c->rdm == NULL) {
		uint32_t id, gen;
		c->rdm = fab_rec_new(p, &id, &gen);
		if (c->rdm == NULL)
			return RPMA_E_NOMEM;
		c->rdm->m.id = id;
		c->rdm->m.gen = gen;
	}
	c->rx_tag = fab_rdm_app_tag(c->rdm->m.id, c->rdm->m.gen);
	return fab_av_open(p, &c->rdm->port.av);
}

/*
 * fab_rdm_conn_bind -- the AV to the endpoint, first of all: rxm's close of
 * an endpoint without an AV dereferences it (SIGSEGV in fi_close(), seen
 * when the record's allocation failed after fi_endpoint(): tests/faultwalk)
 */
int fab_rdm_conn_bind(struct fab_conn *c)
{
	int ret = fi_ep_bind(c->ep, &c->rdm->port.av->fid, 0);
	if (ret) {
		FAB_LOG_FI(ret, "fi_ep_bind(av)");
		return fab_err(ret);
	}
	return 0;
}

/*
 * fab_rdm_conn_watch -- before fi_enable(): when the endpoint's CQ has no
 * wait fd (shm), RMA operations against this side and messages to it
 * execute only at this side's progress; a counter of the RMA operations
 * (the drains count the receives) tells the progress thread to poll
 * without sleeping while they come (fab_source.watch).  Without the
 * counter the thread polls once a millisecond, as for every such CQ.
 */
void fab_rdm_conn_watch(struct fab_conn *c, struct fid *cq)
{
	struct fab_peer *p = c->peer;
	int fd = -1;
	if (p->prog.spin_ns == 0 || fi_control(cq, FI_GETWAIT, &fd) == 0)
		return;
	struct fi_cntr_attr attr = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
	struct fid_cntr *cntr;
	int ret = fi_cntr_open(p->domain, &attr, &cntr, NULL);
	if (ret == 0) {
		ret = fi_ep_bind(c->ep, &cntr->fid, FI_REMOTE_WRITE | FI_REMOTE_READ);
		if (ret) {
			(void)fi_close(&cntr->fid);
			cntr = NULL;
		}
	}
	if (ret) {
		FAB_LOG_DEBUG("no counter of incoming RMA (%s): polled once a millisecond",
			      fi_strerror(-ret));
		return;
	}
	c->rma_cntr = cntr;
}

/*
 * fab_rdm_conn_ready -- after fi_enable(): the control port, the peer's
 * address (client: the listener; server: the client) and the control receive
 */
int fab_rdm_conn_ready(struct fab_conn *c, const struct fi_info *info)
{
	struct fab_rdm *r = c->rdm;
	struct fab_peer *p = c->peer;
	int ret = fab_port_init(p, &r->port, c->ep, r->port.av, 1, r);
	if (ret)
		return ret;
	r->port_made = true;
	/* under the lock the listener's purge reads it with (fab_lst_purge_locked) */
	pthread_mutex_lock(&p->rdm_lock);
	r->conn = c;
	pthread_mutex_unlock(&p->rdm_lock);
	c->cm_data_max = FAB_RDM_PDATA_MAX;
	/* more records than the TX queue holds operations (fab_rdm_op_wrap) */
	r->nops = (uint32_t)(2 * info->tx_attr->size + 2);
	r->ops = calloc(r->nops, sizeof(*r->ops));
	if (r->ops == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	if (c->incoming) {
		ret = fab_rdm_set_to(c, r, r->m.peer_addr, r->m.peer_addr_len, r->m.peer_id,
				     r->m.peer_gen);
		if (ret)
			return ret;
		fab_rdm_cfg(c->timeout_ms, &r->m.cfg);
	} else if (r->port.str_addrs && fab_gone_is(info->dest_addr, info->dest_addrlen)) {
		r->lst_gone = true; /* fab_rdm_connect reports UNREACHABLE */
	} else {
		r->lst_len = info->dest_addrlen < sizeof(r->lst_name) ? info->dest_addrlen
								      : sizeof(r->lst_name);
		memcpy(r->lst_name, info->dest_addr, r->lst_len);
		ret = fab_port_av_add(&r->port, info->dest_addr, &r->lst_addr);
		if (ret)
			return ret;
		r->lst_known = true;
	}
	return fab_port_post_rxs(&r->port) ? 0 : RPMA_E_PROVIDER;
}

/* fab_rdm_connect -- connect (client) or accept (server) with private data */
int fab_rdm_connect(struct fab_conn *c, const void *pdata, size_t len)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_out o = {0};
	int ret;
	if (len > FAB_RDM_PDATA_MAX) {
		FAB_LOG_ERROR("private data of %zu bytes exceeds the limit of %d", len,
			      FAB_RDM_PDATA_MAX);
		return RPMA_E_INVAL;
	}
	if (r->lst_gone) {
		FAB_LOG_INFO("qp %u: the listener was closed in this process", c->qp_num);
		atomic_store(&c->state, FAB_CONN_CONNECTING);
		fab_conn_end(c, RPMA_CONN_UNREACHABLE);
		return 0;
	}
	pthread_mutex_lock(&r->lock);
	uint64_t now = fab_ms();
	if (c->incoming) {
		ret = fab_rdm_conn_set_addr(&r->m, r->port.name, r->port.name_len);
		if (ret == 0)
			ret = fab_rdm_conn_accept(&r->m, pdata, len, now, &o);
	} else {
		struct fab_rdm_cfg cfg;
		fab_rdm_cfg(c->timeout_ms, &cfg);
		ret = fab_rdm_conn_connect(&r->m, &cfg, r->m.id, r->m.gen, r->port.name,
					   r->port.name_len, pdata, len, now, &o);
	}
	if (ret) {
		pthread_mutex_unlock(&r->lock);
		FAB_LOG_ERROR("qp %u: the connection protocol refused the %s", c->qp_num,
			      c->incoming ? "accept" : "request");
		return ret;
	}
	atomic_store(&c->state, FAB_CONN_CONNECTING);
	fab_rdm_send_out(r, &o);
	fab_rdm_arm(c, r);
	pthread_mutex_unlock(&r->lock);
	fab_progress_kick(c->peer);
	return 0;
}

/*
 * fab_rdm_disconnect -- tell the peer the connection ends (the local
 * event, if any, is the caller's): DISC, retried until acknowledged
 */
int fab_rdm_disconnect(struct fab_conn *c)
{
	struct fab_rdm *r = c->rdm;
	struct fab_rdm_out o = {0};
	pthread_mutex_lock(&r->lock);
	int ret = fab_rdm_conn_disconnect(&r->m, fab_ms(), &o);
	if (ret == 0) {
		fab_rdm_send_out(r, &o);
		fab_rdm_arm(c, r);
	}
	pthread_mutex_unlock(&r->lock);
	fab_rdm_events(c, &o, NULL, 0);
	return 0;
}

/*
 * fab_rdm_teardown -- before the endpoint closes: a request never accepted
 * is rejected (its record stays with the listener until its timeout), a
 * connection still up says DISC, and the last control messages get up to
 * FAB_RDM_LINGER_MS to leave
 */
int fab_rdm_teardown(struct fab_conn *c)
{
	struct fab_rdm *r = c->rdm;
	struct fab_peer *p = c->peer;
	if (r == NULL || !r->port_made)
		return 0;
	struct fab_rdm_out o = {0};
	bool keep = false;
	pthread_mutex_lock(&p->rdm_lock);
	pthread_mutex_lock(&r->lock);
	uint64_t now = fab_ms();
	if (r->m.state == FAB_RDM_ST_REQ_RCVD) {
		(void)fab_rdm_conn_reject(&r->m, FAB_RDM_REASON_APP, now, &o);
		keep = r->lst != NULL; /* the listener answers repeats until the timeout */
	} else if (r->m.state == FAB_RDM_ST_ESTABLISHED || r->m.state == FAB_RDM_ST_ACCEPT_SENT) {
		(void)fab_rdm_conn_disconnect(&r->m, now, &o);
	}
	fab_rdm_send_out(r, &o);
	pthread_mutex_unlock(&r->lock);
	if (!keep)
		fab_rec_unlink_locked(r);
	pthread_mutex_unlock(&p->rdm_lock);

	/*
	 * the connection's CQs are no longer drained by the progress thread:
	 * drain them here until the last messages left and a DISC was answered
	 * (so that the peer sends nothing more to the endpoint: libfabric 1.17's
	 * shm follows a pointer to a closed endpoint of the same process)
	 */
	uint64_t until = fab_ms() + FAB_RDM_LINGER_MS;
	while ((fab_port_busy(&r->port) || r->m.state == FAB_RDM_ST_DISC_SENT) &&
	       fab_ms() < until) {
		(void)fab_port_flush(&r->port);
		fab_conn_progress(c);
	}
	if (c->grp) {
		/*
		 * the control receive's entry must be out of the group's CQ
		 * before the record goes: over shm (1.17) an entry of it
		 * reached the shared CQ after the endpoint had closed and the
		 * group had been drained, and a later drain read the freed
		 * record (AddressSanitizer, threads/parallel_conns with shared
		 * CQs).  So it is cancelled here, and waited for.
		 */
		atomic_store(&r->port.closing, true);
		(void)fi_cancel(&c->ep->fid, &r->port.rx_one);
		until = fab_ms() + FAB_RDM_LINGER_MS;
		while (atomic_load(&r->port.rx_out) > 0 && fab_ms() < until)
			fab_conn_progress(c);
		if (atomic_load(&r->port.rx_out) > 0)
			FAB_LOG_NOTICE("qp %u: the control receive was not cancelled within %d ms",
				       c->qp_num, FAB_RDM_LINGER_MS);
		/* the group's drains leave the closing endpoint's control entries alone */
		fab_source_hold(&c->grp->src);
		r->ctl_dead = true;
		fab_source_release(&c->grp->src);
	}
	/* from now on nothing of this process sends to it (see fab_gone_set) */
	return fab_gone_set(p, r->port.name, r->port.name_len, true, false);
}

/* fab_rdm_release -- after the endpoint's close: the AV, the port, the record */
void fab_rdm_release(struct fab_conn *c)
{
	struct fab_rdm *r = c->rdm;
	if (r == NULL)
		return;
	c->rdm = NULL;
	pthread_mutex_lock(&c->peer->rdm_lock);
	r->conn = NULL; /* a listener may forget a rejected request now */
	pthread_mutex_unlock(&c->peer->rdm_lock);
	if (r->port_made)
		fab_port_fini(&r->port);
	r->port_made = false;
	(void)fab_port_av_close(&r->port);
	fab_rec_put(r);
}

/* ------------------------------------------------------------ drains */

/* fab_drain_tx_rdm / fab_drain_rx_rdm: fabric_cq.c (the same drains, control entries taken out) */

/* ------------------------------------------------------------ listener */

/* fab_lst_reply -- send what a step put out to the client of r from the listener */
static void fab_lst_reply(struct fab_rdm_lst *l, struct fab_rdm *r, const struct fab_rdm_out *o)
{
	for (unsigned i = 0; i < o->nmsgs; i++)
		fab_port_send(&l->port, r->lst_peer, r->m.peer_addr, r->m.peer_addr_len,
			      &o->msgs[i]);
}

/* fab_lst_purge_locked -- forget rejected requests whose timeout passed (rdm_lock held) */
static void fab_lst_purge_locked(struct fab_rdm_lst *l, uint64_t now)
{
	struct fab_rdm **pp = &l->recs;
	while (*pp) {
		struct fab_rdm *r = *pp;
		if (r->conn == NULL && r->refs == 1 && fab_rdm_conn_done(&r->m, now)) {
			fab_rec_unlink_locked(r);
			continue; /* *pp is the next one now */
		}
		pp = &r->lnext;
	}
}

/* fab_lst_req -- a REQ at the listener: a repeat of a known request, or a new one */
static void fab_lst_req(struct fab_ep *e, const struct fab_rdm_msg *m)
{
	struct fab_rdm_lst *l = e->rdm;
	struct fab_peer *p = l->peer;
	struct fab_rdm_out o = {0};
	uint64_t now = fab_ms();
	pthread_mutex_lock(&p->rdm_lock);
	fab_lst_purge_locked(l, now);
	for (struct fab_rdm *r = l->recs; r; r = r->lnext) {
		pthread_mutex_lock(&r->lock);
		bool mine = fab_rdm_conn_is_req_of(&r->m, m);
		if (mine) {
			(void)fab_rdm_conn_recv(&r->m, m, now, &o);
			fab_lst_reply(l, r, &o);
		}
		pthread_mutex_unlock(&r->lock);
		if (mine) {
			pthread_mutex_unlock(&p->rdm_lock);
			return;
		}
	}
	pthread_mutex_unlock(&p->rdm_lock);

	/* a new request */
	uint32_t id, gen;
	struct fab_rdm *r = l->closing ? NULL : fab_rec_new(p, &id, &gen);
	struct fab_rdm_cfg cfg;
	fab_rdm_cfg(FAB_RDM_DEFAULT_TIMEOUT_MS, &cfg);
	if (r == NULL || fab_rdm_conn_from_req(&r->m, &cfg, id, gen, m, now) ||
	    fab_av_add_name(&l->port, m->addr, m->addr_len, &r->lst_peer)) {
		/* refuse it without a connection of ours (sender id 0) */
		if (r)
			fab_rec_put(r);
		struct fab_rdm_out ro = {0};
		fi_addr_t to;
		if (fab_rdm_reply_stateless(m, 1, &ro) &&
		    fab_av_add_name(&l->port, m->addr, m->addr_len, &to) == 0) {
			fab_port_send(&l->port, to, NULL, 0, &ro.msgs[0]);
			/* the AV entry is needed until the send leaves: it stays */
		}
		return;
	}
	r->refs = 2; /* the list and the request event */
	pthread_mutex_lock(&p->rdm_lock);
	r->lst = l;
	r->lnext = l->recs;
	l->recs = r;
	pthread_mutex_unlock(&p->rdm_lock);
	struct fab_event *ev = calloc(1, sizeof(*ev));
	if (ev && r->m.peer_pdata_len) {
		ev->data = malloc(r->m.peer_pdata_len);
		if (ev->data)
			memcpy(ev->data, r->m.peer_pdata, r->m.peer_pdata_len);
		ev->len = r->m.peer_pdata_len;
	}
	if (ev == NULL || (ev->len && ev->data == NULL)) {
		free(ev);
		FAB_LOG_ERROR("out of memory for a connection request: refused");
		pthread_mutex_lock(&r->lock);
		(void)fab_rdm_conn_reject(&r->m, FAB_RDM_REASON_PROTOCOL, now, &o);
		fab_lst_reply(l, r, &o);
		pthread_mutex_unlock(&r->lock);
		fab_rec_put(r);
		return;
	}
	ev->kind = FAB_EV_CONNREQ;
	ev->rec = r;
	fab_evq_push_event(&e->reqs, ev);
}

/* fab_lst_rx -- a control message at the listener */
static void fab_lst_rx(struct fab_ep *e, struct fab_rdm_rx_slot *x, size_t len)
{
	struct fab_rdm_lst *l = e->rdm;
	struct fab_rdm_msg m;
	/* a copy: the receive buffer is posted again before the request is handled */
	uint8_t copy[FAB_RDM_MSG_MAX];
	if (len > sizeof(copy))
		len = sizeof(copy);
	memcpy(copy, x->buf, len);
	enum fab_rdm_status st = fab_rdm_decode(copy, len, &m);
	if (st != FAB_RDM_OK) {
		uint64_t n = atomic_fetch_add(&l->peer->refused_reqs, 1) + 1;
		FAB_LOG_NOTICE("listener: a message of %zu bytes dropped: %s (%llu refused so far)",
			       len, fab_rdm_status_str(st), (unsigned long long)n);
		if (st == FAB_RDM_E_MAJOR && !atomic_exchange(&l->told_major, true))
			FAB_LOG_NOTICE(
				"listener: a peer speaks protocol %u.%u, this library %u.%u: "
				"both ends need the same major version (rpma_fabric(7); "
				"said once)",
				copy[4] >> 4, copy[4] & 0xfU, FAB_RDM_MAJOR, FAB_RDM_MINOR);
	} else if (m.type == FAB_RDM_REQ) {
		fab_port_post_rx(&l->port, x);
		fab_lst_req(e, &m);
		return;
	} else {
		/* nothing but a REQ comes here: a connection answers at its own endpoint */
		FAB_LOG_DEBUG("listener: a %s dropped", fab_rdm_type_str(m.type));
	}
	fab_port_post_rx(&l->port, x);
}

/* fab_drain_lst -- the listener's CQ: control messages and the completions of its sends */
static void fab_drain_lst(struct fab_source *src)
{
	struct fab_ep *e = src->arg;
	struct fab_rdm_lst *l = e->rdm;
	struct fi_cq_data_entry ent[8];
	uint32_t found = 0;
	(void)fab_port_flush(&l->port);
	for (;;) {
		ssize_t n = fi_cq_read(l->cq, ent, 8);
		found += n > 0 ? (uint32_t)n : n == -FI_EAGAIN ? 0 : 1;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err;
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(l->cq, &err, 0) != 1)
				break;
			struct fab_rdm_tx *t = fab_port_tx_of(&l->port, err.op_context);
			struct fab_rdm_rx_slot *x = fab_port_rx_of(&l->port, err.op_context);
			if (t) {
				atomic_store(&t->st, FAB_TX_FREE);
			} else if (x) {
				if (err.err != FI_ECANCELED && !l->closing)
					fab_port_post_rx(&l->port, x);
			}
			continue;
		}
		if (n <= 0) {
			if (n != -FI_EAGAIN)
				FAB_LOG_FI(n, "fi_cq_read(listener)");
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			struct fab_rdm_tx *t = fab_port_tx_of(&l->port, ent[i].op_context);
			struct fab_rdm_rx_slot *x = fab_port_rx_of(&l->port, ent[i].op_context);
			if (t)
				atomic_store(&t->st, FAB_TX_FREE);
			else if (x)
				fab_lst_rx(e, x, ent[i].len);
		}
	}
	/* what it took, for the progress thread (fabric.h, noisy wait fds) */
	atomic_fetch_add_explicit(&src->found, found, memory_order_relaxed);
	/* queued sends: look again in a millisecond */
	if (atomic_load(&l->port.queued) > 0)
		atomic_store(&src->deadline_ns, fab_now_ns() + 1000000ULL);
}

/* fab_lst_expire -- the listener's deadline: queued sends */
static void fab_lst_expire(struct fab_source *src)
{
	fab_source_drain(src);
}

/* fab_rdm_listen -- a reliable-datagram endpoint at addr:port taking connection requests */
int fab_rdm_listen(struct fab_peer *p, struct fab_ep *e, const char *addr, const char *port)
{
	struct fi_info *h = fab_info_hints(p);
	struct fi_info *info = NULL;
	struct fab_rdm_lst *l = calloc(1, sizeof(*l));
	int ret;
	if (h == NULL || l == NULL) {
		fi_freeinfo(h);
		free(l);
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	ret = fi_getinfo(FAB_FI_VERSION, addr, port, FI_SOURCE, h, &info);
	fi_freeinfo(h);
	if (ret) {
		FAB_LOG_ERROR("fi_getinfo(%s:%s) failed: %s", addr, port, fi_strerror(-ret));
		free(l);
		return ret == -FI_ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	info->tx_attr->op_flags = 0;
	info->rx_attr->op_flags = 0;
	l->peer = p;
	l->info = info;
	e->rdm = l;
	ret = fab_cq_open(p, 64, &l->cq);
	if (ret)
		goto err;
	ret = fi_endpoint(p->domain, info, &l->port.ep, NULL);
	if (ret) {
		FAB_LOG_ERROR("fi_endpoint(%s:%s) failed: %s", addr, port, fi_strerror(-ret));
		ret = RPMA_E_PROVIDER;
		goto err;
	}
	ret = fab_av_open(p, &l->port.av);
	if (ret)
		goto err;
	ret = fi_ep_bind(l->port.ep, &l->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION);
	if (!ret)
		ret = fi_ep_bind(l->port.ep, &l->port.av->fid, 0);
	if (!ret)
		ret = fi_enable(l->port.ep);
	if (ret) {
		FAB_LOG_ERROR("listening at %s:%s: %s", addr, port, fi_strerror(-ret));
		ret = RPMA_E_PROVIDER;
		goto err;
	}
	ret = fab_port_init(p, &l->port, l->port.ep, l->port.av, FAB_RDM_PORT_RXS, NULL);
	if (ret)
		goto err;
	if (!fab_port_post_rxs(&l->port)) {
		ret = RPMA_E_PROVIDER;
		goto err_port;
	}
	ret = fab_evq_init(&e->reqs, false);
	if (ret)
		goto err_port;
	fab_source_init(&e->src, p, &l->cq->fid, fab_drain_lst, e);
	e->src.expire = fab_lst_expire;
	e->src.counts = true;
	fab_source_add(p, &e->src);
	(void)fab_gone_set(p, info->src_addr, info->src_addrlen, false, true);
	(void)fab_gone_set(p, l->port.name, l->port.name_len, false, true);
	FAB_LOG_NOTICE("waiting for incoming connections on %s:%s (reliable datagrams)", addr,
		       port);
	return 0;

err_port:
	fab_port_fini(&l->port);
err:
	if (l->port.ep)
		fi_close(&l->port.ep->fid);
	(void)fab_port_av_close(&l->port);
	if (l->cq)
		fi_close(&l->cq->fid);
	fi_freeinfo(info);
	free(l);
	e->rdm = NULL;
	return ret;
}

/*
 * fab_rdm_ep_shutdown -- stop listening: requests nobody took are refused,
 * connections made here forget the listener; the refusals get up to
 * FAB_RDM_LINGER_MS to leave
 */
int fab_rdm_ep_shutdown(struct fab_ep *e)
{
	struct fab_rdm_lst *l = e->rdm;
	struct fab_peer *p = l->peer;
	int ret = 0;
	l->closing = true;
	/* the progress thread no longer drains the listener: this thread does */
	fab_source_remove(p, &e->src);
	for (struct fab_event *ev = e->reqs.head; ev; ev = ev->next) {
		struct fab_rdm *r = ev->rec;
		if (ev->kind != FAB_EV_CONNREQ || r == NULL)
			continue;
		struct fab_rdm_out o = {0};
		pthread_mutex_lock(&r->lock);
		(void)fab_rdm_conn_reject(&r->m, FAB_RDM_REASON_APP, fab_ms(), &o);
		fab_lst_reply(l, r, &o);
		pthread_mutex_unlock(&r->lock);
		ev->rec = NULL;
		fab_rec_put(r);
	}
	uint64_t until = fab_ms() + FAB_RDM_LINGER_MS;
	while (fab_port_busy(&l->port) && fab_ms() < until) {
		fab_source_drain(&e->src);
		sched_yield();
	}
	pthread_mutex_lock(&p->rdm_lock);
	while (l->recs)
		fab_rec_unlink_locked(l->recs);
	pthread_mutex_unlock(&p->rdm_lock);
	ret = fab_gone_set(p, l->info->src_addr, l->info->src_addrlen, true, true);
	int g = fab_gone_set(p, l->port.name, l->port.name_len, true, true);
	if (g && !ret)
		ret = g;
	fab_source_fini(&e->src);
	fab_evq_fini(&e->reqs);
	int rc[3]; /* in this order: the endpoint before what it is bound to */
	rc[0] = fi_close(&l->port.ep->fid);
	rc[1] = fab_port_av_close(&l->port);
	rc[2] = fi_close(&l->cq->fid);
	for (size_t i = 0; i < 3; i++) {
		if (rc[i] && !ret) {
			FAB_LOG_FI(rc[i], "fi_close(listener)");
			ret = RPMA_E_PROVIDER;
		}
	}
	fab_port_fini(&l->port);

	fi_freeinfo(l->info);
	free(l);
	e->rdm = NULL;
	return ret;
}

/*
 * fab_rdm_info_to -- an endpoint entry for a connection to the client at
 * addr: its destination is that address, so the provider picks the local
 * address (and a new endpoint name) that reaches it
 */
static int fab_rdm_info_to(struct fab_peer *p, const uint8_t *addr, size_t len,
			   struct fi_info **info)
{
	struct fi_info *h = fab_info_hints(p);
	if (h == NULL) {
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	h->addr_format = p->info->addr_format;
	h->dest_addr = calloc(1, len + 1); /* a string address ends with a NUL */
	if (h->dest_addr == NULL) {
		fi_freeinfo(h);
		FAB_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	memcpy(h->dest_addr, addr, len);
	h->dest_addrlen = len;
	int ret = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, info);
	fi_freeinfo(h);
	if (ret) {
		FAB_LOG_ERROR("fi_getinfo(the client's address) failed: %s", fi_strerror(-ret));
		return ret == -FI_ENOMEM ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
	}
	return 0;
}

/* fab_rdm_next_conn_req -- take the next request and build its connection's endpoint */
int fab_rdm_next_conn_req(struct fab_ep *e, struct fab_conn *c, const struct rpma_conn_setup *setup,
			  struct rpma_conn_private_data *pdata)
{
	struct fab_event *ev = NULL;
	int ret = fab_evq_pop_req(&e->reqs, &ev);
	if (ret)
		return ret;
	struct fab_rdm *r = ev->rec; /* every request of this listener has one */
	ev->rec = NULL;
	struct fi_info *info = NULL;
	ret = fab_rdm_info_to(e->peer, r->m.peer_addr, r->m.peer_addr_len, &info);
	if (ret == 0) {
		/*
		 * the connection owns the event's reference now; a build that
		 * fails drops it in its teardown (fab_rdm_release), so the
		 * refusal below holds one of its own meanwhile
		 */
		pthread_mutex_lock(&e->peer->rdm_lock);
		r->refs++;
		pthread_mutex_unlock(&e->peer->rdm_lock);
		c->rdm = r;
		ret = fab_conn_build(e->peer, c, info, true, setup);
		if (ret)
			fi_freeinfo(info);
		else
			fab_rec_put(r);
	}
	if (ret) {
		struct fab_rdm_out o = {0};
		pthread_mutex_lock(&r->lock);
		(void)fab_rdm_conn_reject(&r->m, FAB_RDM_REASON_PROTOCOL, fab_ms(), &o);
		fab_lst_reply(e->rdm, r, &o);
		pthread_mutex_unlock(&r->lock);
		fab_rec_put(r);
		fab_event_free(ev);
		return ret;
	}
	fab_event_take_pdata(ev, pdata);
	return 0;
}
