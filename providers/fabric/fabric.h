/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric.h -- private definitions of the libfabric provider (FI_EP_MSG endpoints) */

/*
 * Design in short (the details live next to the code):
 *
 * - One libfabric fabric + domain per peer, opened from the device the core
 *   hands over (a struct fab_dev made by device_get).
 * - Every libfabric CQ and EQ the provider opens is internal.  The
 *   endpoints of a peer's connections share one EQ, made with the first
 *   connection, whose entries are handed to the connection the entry's
 *   endpoint belongs to (struct fab_ceq); a listening endpoint has its own.
 *   A progress thread per peer waits on their wait fds (fi_trywait + one
 *   epoll set) and drains the ones that fired, and the EQs (struct
 *   fab_round: a round's cost follows the busy connections, not all): CQ entries become struct ibv_wc in software completion queues
 *   (struct fab_cq), EQ entries become connection events in software event
 *   queues (struct fab_evq).  Draining also drives libfabric's data progress,
 *   which the tcp provider needs at a passive RMA target.  The descriptors the
 *   user sees (CQ fd, shared completion fd, event fd, endpoint fd) are our own
 *   eventfds, so their readiness means exactly what it means on verbs.
 * - A connection owns a TX CQ and, when its receives go elsewhere than its
 *   main CQ (a receive CQ, an SRQ) or the provider is libfabric's verbs, an
 *   RX CQ (libfabric); otherwise one libfabric CQ takes both directions.
 *   Their entries are routed into the software CQs chosen by the core (main
 *   CQ, receive CQ, the SRQ's receive CQ).  Beyond a peer's first few
 *   connections, one whose receives go to its main CQ shares that one
 *   libfabric CQ with others (struct fab_cqg, CQ groups).  A user polling a software CQ
 *   that is empty drains its feeding libfabric CQs directly, so busy polling
 *   does not wait for the progress thread; rpma_cq_wait() on a connection's
 *   own CQ whose fd was never handed out sleeps on the feeding CQs' wait
 *   fds itself (fi_trywait + poll) and drains them on waking, so the
 *   progress thread, which keeps those sources parked meanwhile, has no
 *   part in the completion (fab_cq_wait_direct).
 * - Shared receive queues are emulated: each attached connection posts
 *   internal bounce buffers; a message that lands in one is copied into the
 *   next buffer posted to the SRQ (or waits for one), so the completion can
 *   name the connection (qp_num) as verbs does.
 */

#ifndef RPMA_FABRIC_H
#define RPMA_FABRIC_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "fabric_envelope.h"
#include "fabric_rdm_proto.h"
#include "provider.h"

/* logging with the provider's prefix */
#define FAB_LOG_ERROR(fmt, ...)	  RPMA_LOG_ERROR("fabric: " fmt, ##__VA_ARGS__)
#define FAB_LOG_WARNING(fmt, ...) RPMA_LOG_WARNING("fabric: " fmt, ##__VA_ARGS__)
#define FAB_LOG_NOTICE(fmt, ...)  RPMA_LOG_NOTICE("fabric: " fmt, ##__VA_ARGS__)
#define FAB_LOG_INFO(fmt, ...)	  RPMA_LOG_INFO("fabric: " fmt, ##__VA_ARGS__)
#define FAB_LOG_DEBUG(fmt, ...)	  RPMA_LOG_DEBUG("fabric: " fmt, ##__VA_ARGS__)
/* a failed libfabric call (ret is the negative fi error): "fabric: <call> failed: <fi_strerror>" */
#define FAB_LOG_FI(ret, call) \
	RPMA_LOG_ERROR("fabric: %s failed: %s", call, fi_strerror((int)-(ret)))

#define FAB_FI_VERSION FI_VERSION(1, 17)

/* the largest connection private data the API can carry (uint8_t length) */
#define FAB_PDATA_API_MAX 255
/* the most we send or keep: the API's bytes in our envelope (fabric_envelope.h) */
#define FAB_PDATA_WIRE_MAX (FAB_PDATA_API_MAX + FAB_ENV_SIZE)
/* the buffer size for one EQ entry (the CM entry plus its private data) */
#define FAB_EQ_ENTRY_SIZE (sizeof(struct fi_eq_cm_entry) + 512)
/* a marker sent with every rejection so that the client tells REJECTED from UNREACHABLE */
#define FAB_REJECT_MARK "rpma-rej"

/* ----- the device (what device_get returns, one per address and type; kept until unload) */
struct fab_dev {
	char *addr;
	int type; /* enum rpma_util_ibv_context_type */
	char *prov_name;
	char *fabric_name;
	char *domain_name;
	int ep_type;	      /* FI_EP_MSG, or FI_EP_RDM (fabric_rdm.c) */
	struct fab_dev *next; /* the provider's list of devices looked up */
};

/* ----- an internal wait source of the progress thread (a libfabric CQ or EQ) */
struct fab_source;
typedef void fab_drain_fn(struct fab_source *src);
typedef void fab_expire_fn(struct fab_source *src);

struct fab_source {
	struct fid *fid;
	int fd; /* the wait fd (FI_GETWAIT), -1: none (polled periodically) */
	fab_drain_fn *drain;
	void *arg;
	/*
	 * one drainer at a time keeps the order: a flag taken by exchange,
	 * waited for with sched_yield() (the user and the progress thread
	 * rarely meet here, and a drain is short: cheaper than a mutex)
	 */
	_Atomic bool draining;
	/* an absolute deadline (CLOCK_MONOTONIC ns, 0: none) and what to do then */
	_Atomic uint64_t deadline_ns;
	fab_expire_fn *expire;
	bool registered;
	struct fab_peer *peer; /* whose progress thread drains it (set by fab_source_init) */
	/*
	 * Parking: while the user busy-polls the CQ this source feeds (each
	 * empty rpma_cq_get_wc() drains it, bumping user_drains), the progress
	 * thread leaves its wait fd alone, so completions and incoming RMA
	 * traffic do not wake the thread per operation; it still drains the
	 * source every FAB_PARK_MS.  A source does not park while a user
	 * sleeping on the CQ's fd may need the thread: the fd was handed out,
	 * the CQ is armed and the user has waited on it (fab_source_may_park).
	 * rpma_cq_wait() and rpma_conn_wait() set unpark and kick the thread
	 * before they sleep.
	 */
	_Atomic uint32_t user_drains;
	uint32_t seen_drains; /* the thread's last look at user_drains */
	struct fab_cq *feeds; /* the CQ this source feeds, NULL: none (an EQ, a CQ group) */
	bool shared;	      /* feeds several CQs (a CQ group): never parks, feeds stays NULL */
	/*
	 * its fd is watched but never passed to fi_trywait() (a CQ group's
	 * over reliable datagrams: fab_cqg_open); the round's wait is then
	 * 1 ms at most, as for a source without a wait fd
	 */
	bool no_trywait;
	_Atomic bool parked; /* the thread does not wait on the fd */
	_Atomic bool unpark; /* a user is about to sleep: wait on the fd again */
	/*
	 * drained in the same round just before this one (a connection's TX
	 * source for its RX source: causal order), or NULL; set before
	 * fab_source_add
	 */
	struct fab_source *before;
	/*
	 * Traffic to watch (fab_progress.spin_ns; set before fab_source_add):
	 * watch, the thread looks after each of its drains at activity, a
	 * counter of the RMA operations the endpoint was the target of
	 * (FI_REMOTE_WRITE | FI_REMOTE_READ; NULL: none), and at rx_events,
	 * the application's receives the source's drains delivered (the
	 * protocol's own messages, keep-alives among them, are not counted:
	 * they must not keep the thread busy), of which only those of its own
	 * drain count, and only while the CQ has a sleeper (fab_cq.sleepers;
	 * fab_cq.waited once its fd was handed out: fab_progress_activity).
	 * While either moves the thread polls without sleeping.
	 * The counter does not count while the program polls the CQ this
	 * source feeds (user_drains moved within FAB_POLLED_NS, polled_ns):
	 * its polls drive the endpoint, and a thread polling beside it took
	 * the processor from both sides (writes of 8 B at a window of 16 over
	 * shm: 0.7 MiB/s, 1.7 with the thread's polling off).
	 */
	bool watch;
	struct fid_cntr *activity;
	/* instead of activity: the sum of several counters (a CQ group's members') */
	uint64_t (*activity_sum)(struct fab_source *src);
	_Atomic uint64_t rx_events;
	uint64_t activity_seen;
	uint32_t seen_polls; /* the thread's last look at user_drains ... */
	uint64_t polled_ns;  /* ... and when it last saw it move */
	/*
	 * The progress thread's own bookkeeping (fabric_progress.c): whether
	 * the fd is in the peer's epoll set now (EPOLLIN; out of it while
	 * parked), whether it could be added there at all (false: drained
	 * every round; changed under the progress lock), a first drain owed to
	 * a new source, and whether the source is in this round's list
	 */
	bool watched;
	bool in_epoll;
	bool fresh;
	bool due;
	struct fab_source *next;
	/*
	 * Noisy wait fds: a source whose drain counts what it took (counts,
	 * set before fab_source_add; found, bumped by the drain) tells the
	 * thread when its fd fired with nothing to take.  libfabric 2.x's tcp
	 * puts the progress fd of every domain bound to an EQ into the EQ's
	 * wait set (xnet_add_domain_progress), so the connections' EQ fires
	 * on every message of every connection, and each fi_eq_read()
	 * progresses the whole domain under its lock, beside the program's
	 * own fi_cq_read() (read bandwidth over tcp on 2.1: 0.6 of raw
	 * libfabric's); a reliable-datagram listener's CQ fires so on 2.1
	 * over tcp;ofi_rxm and tcp.  After FAB_NOISY_FIRES firings in a row
	 * that found nothing the source is noisy: while a source of the peer
	 * is parked (the program busy-polls, and its polls progress the
	 * domain), the thread leaves a noisy fd out of its epoll set and
	 * drains the source at each of its rounds instead, every
	 * FAB_PARK_MAX_MS at the latest.
	 * The thread's own, but found.
	 */
	bool counts;
	bool fired; /* its fd fired for this round */
	bool noisy;
	_Atomic uint32_t found;
	uint32_t seen_found;
	uint32_t idle_fires;
};

/* firings of a wait fd in a row that found nothing before its source is noisy */
#define FAB_NOISY_FIRES 8

/*
 * how often the progress thread drains a parked source: after FAB_PARK_MS at
 * first, twice as long each round it stays parked, up to FAB_PARK_MAX_MS
 */
#define FAB_PARK_MS	1
#define FAB_PARK_MAX_MS 8
/* fab_progress.spin_ns: the default and the largest RPMA_FABRIC_SPIN_US */
#define FAB_SPIN_US	1000
#define FAB_SPIN_US_MAX 1000000
/*
 * while it polls, the progress thread yields the CPU at once after it woke a
 * sleeper of the program (fab_cq_woke), else once FAB_YIELD_NS passed since
 * its last yield
 */
#define FAB_YIELD_NS 50000
/*
 * a sched_yield() that returned this late gave the CPU to a thread that
 * keeps it for a whole slice (a CPU-bound process beside the program):
 * for FAB_NAP_PERIOD_NS the thread then sleeps briefly instead of yielding,
 * since a woken sleeper gets the CPU back where a yielder waits its turn
 * (over shm with one spinning process, a passive target took 2.3 ms a
 * write against 0.01 for an active one)
 */
#define FAB_YIELD_LOST_NS 500000
#define FAB_NAP_PERIOD_NS 100000000
/* a program that drained a CQ this recently polls it (fab_source.polled_ns) */
#define FAB_POLLED_NS 100000
/*
 * the longest a sleeper of the provider (the progress thread, a thread in
 * rpma_cq_wait() driving its CQ itself) sleeps without looking at its
 * sources: a wakeup lost somewhere costs at most this, never a hang
 */
#define FAB_SAFETY_NET_MS 1000

/* the name of the progress thread (/proc/PID/task/TID/comm, rpma_fabric(7)) */
#define FAB_PROGRESS_NAME "rpma-progress"

/* ----- the progress engine of a peer */
struct fab_progress {
	pthread_t thread;
	bool running;
	int wake_fd; /* eventfd that interrupts the wait */
	int epfd;    /* epoll set: wake_fd and the sources' wait fds (not while parked) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fab_source *sources;
	int park_ms;	   /* the thread's current wait while sources are parked */
	uint64_t gen;	   /* bumped on every change of the source list */
	uint64_t seen_gen; /* the last generation the thread has taken up */
	bool stop;
	/*
	 * Target-side progress without a wait fd (shm): an RMA operation
	 * against this process executes only when the thread drains the
	 * endpoint, which it does once a millisecond when nothing wakes it.
	 * So does a message sent to it.  After a watched source saw traffic
	 * (fab_source.watch) the thread polls again at once until spin_ns
	 * passed without more (RPMA_FABRIC_SPIN_US; 0: never), yielding the
	 * CPU after it woke the program and every FAB_YIELD_NS.
	 */
	uint64_t spin_ns;
	uint64_t busy_until_ns; /* the thread's own */
	uint64_t yielded_ns;	/* the thread's own: the end of its last yield or nap */
	uint64_t nap_until_ns;	/* the thread's own: naps instead of yields until then */
};

/*
 * ----- the connections' EQ of a peer: one libfabric EQ (one wait object)
 * to which every endpoint of the peer is bound, made with its first
 * connection and closed with the peer.  Its drain hands each entry to the
 * connection whose endpoint the entry names (a list searched under lock);
 * an entry whose endpoint is no longer in the list is dropped.  A
 * connection leaves the list, waits for a drain in progress to end (the
 * source's draining flag), and closes its endpoint holding that flag: a
 * drain that took one of the endpoint's entries before the close ends
 * first (and drops it), and the close removes the entries still queued
 * (tcp, sockets and verbs of libfabric 1.17 do, xnet of 2.1 too): no entry
 * of a closed endpoint can reach the connection that reuses its address.
 * Connect timeouts live in the connections (deadline_ns); the source's
 * deadline is their nearest one.
 */
struct fab_conn;
struct fab_ceq {
	pthread_mutex_t lock; /* making eq, the list and the deadlines */
	struct fid_eq *eq;
	struct fab_source src;
	struct fab_conn *conns; /* the connections bound to eq (fab_conn.ceq_next) */
	_Atomic bool nearly;	/* a connection may hold an early end (fab_conn_early) */
	/*
	 * fi_accept() calls that returned: a drain that began after a
	 * connection's number (fab_conn.accepted) read the EQ after its
	 * FI_CONNECTED was queued
	 */
	_Atomic uint64_t accepts;
	/*
	 * testing: microseconds the drain waits between reading an entry and
	 * looking its endpoint up (RPMA_FABRIC_TEST_EQ_DELAY_US, read when the
	 * EQ is made), the window a preempted progress thread opens
	 */
	unsigned delay_us;
};

/* the entries of a peer's connections' EQ (a connection has at most a few at once) */
#define FAB_CEQ_SIZE 1024
/* the most connections one drain of that EQ settles (fab_ceq_settle) */
#define FAB_CEQ_BATCH 16

/* ----- peer */
/*
 * the mode bits the hints offer: FI_RX_CQ_DATA; over reliable datagrams
 * FI_CONTEXT and FI_CONTEXT2 too (fab_hints)
 */
#define FAB_HINTS_MODE(ep_type) \
	(FI_RX_CQ_DATA | ((ep_type) == FI_EP_RDM ? FI_CONTEXT | FI_CONTEXT2 : 0))

/* what a flush waits for before its read (fab_peer.flush_wait) */
enum fab_flush_wait { FAB_FLUSH_WAIT_NONE = 0, FAB_FLUSH_WAIT_ATOMICS, FAB_FLUSH_WAIT_ALL };

struct fab_peer {
	struct fi_info *info; /* the negotiated template (caps, mode, mr_mode, names) */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	uint64_t mr_mode;
	bool va_addressing; /* remote addresses are virtual addresses (else offsets) */
	bool prov_keys;	    /* the provider chooses the keys */
	bool has_atomic;    /* FI_ATOMIC_WRITE on FI_UINT64 usable */
	bool has_commit;    /* FI_RMA_PMEM + FI_COMMIT_COMPLETE: persistent flush supported */
	bool has_fence;	    /* FI_FENCE offered */
	bool has_delivery;  /* FI_DELIVERY_COMPLETE accepted as a completion level */
	/*
	 * RPMA_FABRIC_TEST_IMM_GAP_US (testing): an emulated write with
	 * immediate data waits that long between its write and its send
	 */
	unsigned imm_gap_us;
	/*
	 * what a flush waits for before its read over reliable datagrams
	 * (fab_rdm_flush_wait): nothing where the provider orders a read after
	 * earlier writes (FI_ORDER_RAW); the native atomic writes still out
	 * where it orders RMA reads after RMA writes only (FI_ORDER_RMA_RAW:
	 * rxm with FI_ATOMIC, whose atomics travel as messages); every earlier
	 * operation where it declares neither (shm)
	 */
	enum fab_flush_wait flush_wait;
	/*
	 * reliable datagrams without FI_ORDER_WAR and FI_FENCE (shm, rxm): an
	 * atomic write waits for the earlier operations, the flush before it
	 * among them (fab_rdm_flush_wait), so that it lands after them
	 */
	bool atomic_waits;
	/*
	 * an atomic write's 8 bytes are injected (else staged until it
	 * completes): not over reliable datagrams (session 11 took shm 1.17's
	 * wrong values for a late read of the source; the cause was the target,
	 * see fab_peer_open, but staging costs little there)
	 */
	bool inject_atomic;
	bool rx_cq_data;   /* mode FI_RX_CQ_DATA: remote CQ data consumes a receive */
	bool imm_emulated; /* write-with-imm = write + tagged zero-length send (see below) */
	bool in_order;	   /* one in-order stream: writes are applied after earlier reads */
	bool refused_sync; /* fi_connect() itself fails when nobody listens (sockets) */
	bool reject_ep_ok; /* fi_reject() works on a request an endpoint was made from */
	/*
	 * make a connection's eventfds with it, not when first needed:
	 * libfabric's sockets closes some of its socket descriptors twice
	 * while a connection ends (1.17, seen with strace), and an eventfd made
	 * in between takes the number and is closed under us
	 */
	bool eager_fds;
	/*
	 * an FI_SHUTDOWN or an EQ error of an endpoint means that libfabric
	 * closed the endpoint's connection socket itself, and fi_shutdown()
	 * would close its number again (sockets 1.17: fab_conn_fi_shutdown)
	 */
	bool end_closes;
	bool verbs; /* libfabric's verbs: prov_errno is an ibv_wc_status, and any
			       error completion means the queue pair is in the error state */
	size_t inject_size;
	/* what an attacker leaves behind (logged; see fabric_envelope.h) */
	_Atomic uint64_t refused_reqs;	/* requests refused for their envelope */
	_Atomic uint64_t access_errors; /* our operations the remote side refused */
	struct fab_progress prog;
	struct fab_ceq ceq; /* the connections' EQ (eq NULL until the first connection) */
	/*
	 * reliable-datagram endpoints (fabric_rdm.c): the connection ids of
	 * the peer (struct fab_rdm_ids) and the listeners' lists of requests,
	 * under rdm_lock
	 */
	bool rdm;
	/*
	 * a name of this process that was closed and opened again is inserted
	 * with a '/' after its "://" (shm: fab_port_av_add)
	 */
	bool respell_reused;
	pthread_mutex_t rdm_lock;
	struct fab_rdm_ids *rdm_ids;
	/*
	 * CQ groups (fabric_cqg.c): connections beyond the first own_cq_limit
	 * with their own libfabric CQ share one with others
	 */
	pthread_mutex_t cqg_lock;
	struct fab_cqg *cqgs;	       /* the groups, each with room or not */
	_Atomic uint32_t own_cq_conns; /* connections with a libfabric CQ of their own */
	uint32_t own_cq_limit;	       /* RPMA_FABRIC_OWN_CQS */
	bool own_cq_asked;	       /* RPMA_FABRIC_OWN_CQS is set (fab_cqg_wanted) */
};

/* ----- software event queue (connection events, connection requests) */
struct fab_event {
	int kind; /* enum rpma_conn_event, or FAB_EV_CONNREQ / FAB_EV_ERROR */
	void *data;
	size_t len;
	struct fi_info *info; /* FAB_EV_CONNREQ: the request (owned) */
	struct fab_rdm *rec;  /* FAB_EV_CONNREQ of a reliable-datagram listener (owned) */
	struct fab_event *next;
};

#define FAB_EV_CONNREQ 100
#define FAB_EV_ERROR   101

/*
 * A queue's eventfd (a semaphore: one count per queued event) is made when
 * the user asks for it (a connection's, lazily) or at once (an endpoint's);
 * made late, it starts with the count of the events queued then.  Until it
 * exists, fab_evq_pop sleeps on the condition variable.
 */
struct fab_evq {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled by pushes while there is no eventfd */
	_Atomic int efd;     /* -1 until made; set once, under lock */
	bool made;	     /* fab_evq_init succeeded */
	struct fab_event *head, *tail;
	uint64_t count; /* queued events */
};

/* ----- listening endpoint */
struct fab_rdm;
struct fab_rdm_lst;
struct fab_ep {
	struct fab_peer *peer;
	struct fab_rdm_lst *rdm; /* reliable-datagram listener (fabric_rdm.c), or NULL */
	struct fid_pep *pep;
	struct fid_eq *eq;
	struct fi_info *info; /* kept while listening: sockets' pep keeps pointers into it */
	struct fab_source src;
	struct fab_evq reqs; /* connection requests */
};

/*
 * Completion levels of writes.  Where we choose the keys (tcp, sockets), a
 * region registered with RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT gets a key with
 * FAB_KEY_PMEM set, so the initiator knows from the key alone which writes a
 * persistent flush may cover: those carry FI_COMMIT_COMPLETE (the target
 * writes them back to persistence before it processes what follows, e.g. the
 * flush read).  Every other write carries FI_DELIVERY_COMPLETE, signaled or
 * not: on tcp a refused write otherwise completes successfully, and when no
 * read follows it nothing would ever report it (the target just closes the
 * connection, which the initiator cannot tell from an orderly disconnect).
 * The other key bits stay below 2^31, so keys keep the 21-byte descriptor.
 * They are random (getrandom()) and never below FAB_KEY_MIN.
 */
#define FAB_KEY_PMEM 0x80000000U
#define FAB_KEY_MIN  0x10000U

/* ----- memory region */
struct fab_mr {
	struct fid_mr *mr;
	void *desc;
	uint64_t key;
	char *ptr; /* the region's start (rpma_mr_local_ptr, without the call into the core) */
};

/*
 * ----- completion channel (own per CQ, or shared by a connection's CQ and
 * RCQ).  Its eventfd (a semaphore: one count per notification) is made when
 * the user asks for the descriptor or a waiter must sleep on it together
 * with libfabric's wait fds (fab_cq_wait_direct), with the count of the
 * notifications pending then; until it exists, fab_chan_wait sleeps on the
 * condition variable.
 */
struct fab_cq;
struct fab_chan {
	pthread_mutex_t lock;
	pthread_cond_t cond;	 /* signalled by notifications while there is no eventfd */
	_Atomic int efd;	 /* -1 until made; set once, under lock */
	struct fab_cq *fired[4]; /* which CQs notified, oldest first */
	int nfired;
	int refs;
};

/* ----- software completion queue (the provider state of struct rpma_cq) */
#define FAB_CQ_STASH 8 /* entries of fab_cq.stash */
struct fab_cq {
	pthread_mutex_t lock;
	struct ibv_wc *ring;
	uint32_t cap, head, count;
	/*
	 * entries neither filled nor promised to pushers (cap - count -
	 * reserved): fab_cq_reserve takes from it without the lock while it is
	 * positive; count and cap change under lock only
	 */
	_Atomic int64_t avail;
	_Atomic uint32_t filled; /* count, stored under lock: fab_cq_poll looks at it without */
	_Atomic bool starved;	 /* full and out of memory: completions wait in libfabric */
	_Atomic bool armed;	 /* changed under lock; the progress thread reads it without */
	bool is_rcq;
	bool initialized;
	_Atomic bool fd_exported; /* the user got the fd (rpma_cq_get_fd, compl fd) */
	_Atomic bool waited;	  /* rpma_cq_wait / rpma_conn_wait has slept on it */
	_Atomic int sleepers;	  /* threads asleep in rpma_cq_wait / rpma_conn_wait now */
	/*
	 * fed only by the libfabric CQs of its own connection, which outlive
	 * every rpma_cq_wait() on it: the waiting thread drives them itself
	 * (fab_cq_wait) instead of sleeping until the progress thread does
	 */
	bool own_feeders;
	/*
	 * under lock: completions pushed so far, and whether a thread in
	 * rpma_cq_wait() is draining the feeders itself, so that pushes then
	 * need not notify the channel (the waiter counts them instead)
	 */
	_Atomic uint64_t pushes; /* changed under lock; fab_cq_poll reads it without */
	_Atomic bool direct;	 /* set without the lock, cleared under it (fab_cq_wait_direct) */
	struct fab_chan *chan;
	/*
	 * completions a thread in rpma_cq_wait() took from libfabric itself
	 * (fab_cq_wait_direct) while the ring was empty, older than anything
	 * in the ring, handed out first by fab_cq_poll: used only by the CQ's
	 * completion side (one thread at a time, librpma(7)), so no lock
	 */
	struct ibv_wc stash[FAB_CQ_STASH];
	uint32_t stash_head, stash_n;
	/* the feeder whose entries may skip the ring (fab_cq_set_direct_src), or NULL */
	struct fab_source *direct_src;
	/* the libfabric CQs that feed this one, drained directly by a polling user */
	pthread_mutex_t feed_lock;
	struct fab_source **feeders;
	int nfeeders, feeders_cap;
};

/*
 * Write with immediate data where remote CQ data consumes no receive (tcp,
 * sockets): the write (if any) is followed by a zero-length send whose 8
 * bytes of CQ data carry the immediate value in the low half and
 * FAB_IMM_TAG | min(len, FAB_IMM_LEN_MAX) in the high half.  The send takes
 * the oldest receive posted at the target (of the connection or of its SRQ),
 * after the data (FI_ORDER_SAW), which the target reports as
 * IBV_WC_RECV_RDMA_WITH_IMM with that receive's op_context, as verbs does.
 * On such transports every send carries CQ data, so that the value alone
 * tells what arrived (sockets drops FI_REMOTE_CQ_DATA from the flags of a
 * message that waited for its receive, and leaves stale data in a message
 * sent without any): FAB_IMM_SEND_TAG | 0 in the high half for a send with
 * immediate data, 0 for one without.
 */
#define FAB_IMM_TAG	 0x80000000U
#define FAB_IMM_SEND_TAG 0x40000000U
#define FAB_IMM_LEN_MAX	 0x3fffffffU

/* the initiator's record of one emulated write with immediate data */
struct fab_imm_slot {
	const void *op_context;
	_Atomic bool err_seen; /* an error completion was reported for it */
	/*
	 * over reliable datagrams both halves ask for a completion and the
	 * pair is reported once, by the last of them: rxm delivered the send
	 * of a write its target refused, and a success reported at the send
	 * would hide the write's error (access/no_remote_write)
	 */
	_Atomic int left; /* completions of the pair still to come */
	bool want;	  /* the application asked for the completion of a success */
	/*
	 * the write was posted, the send could not be (fab_imm_unsent): the
	 * pair completes with an error (read over reliable datagrams, whose
	 * write completes either way)
	 */
	_Atomic bool unsent;
};

/*
 * An atomic write staged in the connection's scratch region (when the
 * provider cannot inject 8 bytes): the slot stays taken until libfabric
 * completes the write (each one asks for a completion), so its 8 bytes are
 * never overwritten while the write may still read them.
 */
struct fab_stage_slot {
	const void *op_context;
	bool report;	    /* the user asked for the completion of a success */
	_Atomic bool taken; /* a write reads the slot's bytes */
};

/*
 * ----- CQ groups.  libfabric 1.17's tcp gives every CQ a pool of 1024
 * transfer entries (~450 KiB), taken at its first transfer, and a wait
 * object of 3 descriptors; a server with many busy connections pays that
 * per connection.  So only a peer's first own_cq_limit connections
 * (RPMA_FABRIC_OWN_CQS, default FAB_OWN_CQS) get a libfabric CQ of their
 * own; later ones whose sends and receives complete into their main CQ (no
 * receive CQ, no SRQ, no shared completion channel, not libfabric's verbs)
 * bind their endpoint to a CQ shared by up to FAB_CQG_MAX connections.
 * Every operation of such a connection is posted with a record of its own
 * (struct fab_op) as libfabric's context, asks for a completion (the
 * record goes back to its connection when it arrives) and reserves an
 * entry of the software CQ its completion goes to; the group's drain
 * routes each entry through its record to that connection's software CQ,
 * and drops the successes nobody asked for.  Completions of one
 * connection keep libfabric's order (causal, as with a CQ of its own).
 * A connection that leaves marks its records in flight dead before it
 * closes its endpoint (whoever drains the group drops their entries from
 * then on), drains the group after the close, and leaves the records still
 * out then (a provider that would complete them later) with the group until
 * it closes.
 */
/*
 * Reliable-datagram connections join groups too: their operations carry a
 * record of the connection (struct fab_rdm_op, fabric_rdm.c) inside the
 * group's, and their control messages (fabric_rdm.c), posted by several
 * threads, carry none: each context a shared CQ may return starts with a
 * struct fab_ctx whose kind tells a group's record from a control slot,
 * which names its connection's record.
 */
enum fab_ctx_kind { FAB_CTX_OP = 0x6f70, FAB_CTX_CTL = 0x636c };

struct fab_ctx {
	struct fi_context2 fi_ctx; /* first: libfabric's, where it asks for FI_CONTEXT(2) */
	uint32_t kind;		   /* enum fab_ctx_kind */
};

#define FAB_OWN_CQS  16	  /* default of RPMA_FABRIC_OWN_CQS */
#define FAB_CQG_MAX  16	  /* connections per shared libfabric CQ */
#define FAB_CQG_SIZE 1024 /* entries of a shared libfabric CQ (libfabric queues more) */

struct fab_op {
	struct fab_ctx head;   /* first: FAB_CTX_OP */
	struct fab_conn *conn; /* NULL: the connection left (the entry is dropped) */
	void *ctx;	       /* the context the operation would have had */
	struct fab_cq *to;     /* where its completion goes (an entry is reserved there) */
	bool report;	       /* the user asked for the completion of a success */
	_Atomic bool busy;     /* posted, its completion not yet taken */
	struct fab_op *next;   /* the connection's free records */
};

/* a connection's records: kept by its group when some are still out as it leaves */
struct fab_opset {
	struct fab_opset *next;
	uint32_t n;
	struct fab_op op[];
};

struct fab_cqg {
	struct fab_peer *peer;
	struct fid_cq *cq;
	struct fab_source src; /* drained by fab_drain_group; shared */
	bool rdm;	       /* of reliable-datagram connections */
	uint32_t members;      /* under the peer's cqg_lock */
	/* the members' RMA counters (fab_rdm_conn_watch; under the peer's cqg_lock) */
	struct fid_cntr *cntrs[FAB_CQG_MAX];
	struct fab_opset *graves;
	struct fab_cqg *next;
};

/* connection states */
enum fab_conn_state {
	FAB_CONN_NEW,
	FAB_CONN_CONNECTING,
	FAB_CONN_CONNECTED,
	FAB_CONN_DONE, /* CLOSED/LOST/REJECTED/UNREACHABLE reported */
};

struct fab_srq;
struct fab_bounce;

/* ----- connection request / connection (one block, see provider.h) */
/*
 * The receives a connection posted on its own endpoint that have not
 * completed (fabric_recvs.c): each is posted with a record of its own as
 * the context, which keeps the application's.  A connection that ends
 * cancels the ones still posted (they complete as IBV_WC_WR_FLUSH_ERR, as
 * on a verbs queue pair in the error state) and takes no new one: nothing
 * else would complete them (the peer is gone; libfabric's sockets cancels
 * no receive at a shutdown, its tcp takes receives on a disconnected
 * endpoint and never completes them).  Not for an SRQ's connections: their
 * bounce buffers are the SRQ's (fabric_srq.c).
 */
struct fab_recv_rec {
	struct fi_context2
		fi_ctx; /* first: libfabric's, where it asks for FI_CONTEXT / FI_CONTEXT2 */
	void *ctx;	/* the application's */
	/* what libfabric got as the context: the record, or a CQ group's record of it */
	_Atomic(void *) posted_as;
	struct fab_recv_rec *next_free;
	bool posted;
};

struct fab_recvs {
	/*
	 * A spin lock: it guards a few stores, twice per receive (post and
	 * completion); a mutex costs about 110 instructions per receive more
	 * (callgrind, send-recv over shm)
	 */
	pthread_spinlock_t lock;  /* made with rec */
	struct fab_recv_rec *rec; /* n records (posted: the ones not on the free list) */
	uint32_t n;
	struct fab_recv_rec *free;
	_Atomic bool cancelled; /* set under the lock; read after a post too */
};

struct fab_conn {
	struct fab_peer *peer;
	struct fi_info *info; /* outgoing: the resolved destination; incoming: the request */
	struct fid_ep *ep;
	/*
	 * over a reliable-datagram endpoint (fabric_rdm.c): the connection's
	 * side of the protocol, and the peer's address in the endpoint's AV
	 * (every send, write, read and atomic goes there); NULL and 0 on a
	 * message endpoint, where libfabric ignores the address
	 */
	struct fab_rdm *rdm;
	fi_addr_t dest;
	/*
	 * over a reliable-datagram endpoint: the tags of the application's
	 * messages (fab_rdm_app_tag): a send carries the receiving side's
	 * connection id (tx_tag, known with dest), a receive takes only
	 * messages that carry ours (rx_tag, known with the record)
	 */
	uint64_t tx_tag, rx_tag;
	/* over RDM without a wait fd: the RMA counter the thread watches (fab_source.activity) */
	struct fid_cntr *rma_cntr;
	/* over RDM: the peer's data came since the timer last looked (fab_rdm_data_heard) */
	_Atomic bool rdm_heard;
	/* posts take the slow path: grouped (grp) or over reliable datagrams (rdm) */
	bool wrap;
	struct fid_cq *txcq, *rxcq;
	struct fab_source tx_src, rx_src;
	/* a grouped connection (txcq NULL): its group and its operation records */
	struct fab_cqg *grp;
	struct fab_opset *ops;
	_Atomic(struct fab_op *) op_free;
	bool own_counted; /* counted in the peer's own_cq_conns */
	/* the peer's connections' EQ: linked in its list (from build to teardown) */
	bool in_ceq;
	struct fab_conn *ceq_prev, *ceq_next;
	/* the connect timeout (CLOCK_MONOTONIC ns, 0: none), under the EQ's lock */
	uint64_t deadline_ns;
	struct fab_evq events;
	/*
	 * the two events a connection can ever report, made with it so that the
	 * progress thread never needs memory to report them: ESTABLISHED (with
	 * room for FAB_PDATA_API_MAX bytes of private data) and the final one
	 * (CLOSED, LOST, REJECTED or UNREACHABLE); NULL once queued
	 */
	struct fab_event *ev_established, *ev_end;
	struct fab_cq *cq, *rcq, *recv_target;
	struct fab_chan *shared_chan;
	struct fab_srq *srq;
	bool incoming;
	struct fid_pep *pep; /* incoming: the listening endpoint (to reject the request) */
	bool ep_was_made;    /* an endpoint was made from the request */
	/*
	 * state: read without a lock; changed under state_lock, together with
	 * the queuing of the event the change reports, so that no change and no
	 * event can come between (ESTABLISHED is never queued after the final
	 * event, and the state never leaves DONE)
	 */
	_Atomic int state;
	pthread_mutex_t state_lock;
	bool state_lock_made;
	_Atomic bool broken; /* an error completion was seen: a shutdown is LOST */
	/* fi_shutdown() was called, or must not be (fab_conn_fi_shutdown) */
	_Atomic bool shut;
	/*
	 * incoming: accepted is the number fab_ceq.accepts gave the connection
	 * once fi_accept() had returned (0: not yet); early: an FI_SHUTDOWN (1)
	 * or an EQ error (2, early_err) read before FI_CONNECTED, held back
	 * until it (fab_conn_early)
	 */
	_Atomic uint64_t accepted;
	int early;
	struct fi_eq_err_entry early_err;
	uint32_t qp_num;
	size_t cm_data_max; /* the transport's limit, envelope included (at most FAB_PDATA_WIRE_MAX) */
	int timeout_ms;
	/*
	 * an 8-byte scratch region: flush reads land in slot 0; without 8-byte
	 * injection atomic writes are staged in slot 1 + i, owned by stages[i]
	 */
	uint64_t *scratch;
	size_t scratch_slots;
	struct fab_stage_slot *stages; /* scratch_slots - 1 of them, or NULL */
	size_t stage_next;
	struct fid_mr *scratch_mr;
	void *scratch_desc;
	/* emulated write with immediate data: the contexts of the operations in flight */
	struct fab_imm_slot *imm_slots;
	uint32_t nimm_slots, imm_next;
	/* SRQ emulation: the bounce buffers this connection posts */
	struct fab_bounce *bounces;
	size_t nbounces;      /* entries of bounces (the most a connection may use) */
	size_t bounce_active; /* the first ones, in use: fewer the longer they are */
	char *bounce_mem;
	struct fid_mr *bounce_mr;
	void *bounce_desc;
	size_t bounce_size;
	/*
	 * Growing the bounce buffers (fabric_srq.c): set when a buffer longer
	 * than bounce_size was posted to the SRQ; each bounce buffer, once
	 * cancelled or used, stays unposted (counted in bounce_idle) until all
	 * are, then the slab is replaced by a larger one and all are posted
	 * again.  Both under the SRQ's lock.
	 */
	bool bounce_regrow;
	size_t bounce_idle;
	struct fab_conn *srq_next; /* the SRQ's list of attached connections */
	struct fab_recvs recvs;	   /* the receives posted and not completed (no SRQ) */
};

/* one internal receive buffer of an SRQ-attached connection */
struct fab_bounce {
	/* first: libfabric's, where it asks for FI_CONTEXT / FI_CONTEXT2 (the context is b) */
	struct fi_context2 fi_ctx;
	struct fab_conn *conn;
	char *buf;
	size_t len;	/* bytes received */
	uint64_t flags; /* completion flags */
	uint64_t data;	/* remote CQ data */
	int err;	/* 0 or the fi error of the receive */
	int prov_errno; /* the provider's error */
	bool pending;	/* holds a message that waits for an SRQ buffer */
	bool posted;	/* posted on the connection's endpoint (under the SRQ's lock) */
	struct fab_bounce *next_pending;
};

/* one buffer posted to an emulated SRQ */
struct fab_srq_buf {
	char *ptr;
	size_t len;
	const void *op_context;
};

/* ----- shared receive queue (emulated) */
struct fab_srq {
	pthread_mutex_t lock;
	struct fab_peer *peer;
	struct fab_cq *rcq; /* the SRQ's own receive CQ, or NULL */
	struct fab_srq_buf *bufs;
	uint32_t cap, head, count;
	struct fab_bounce *pend_head, *pend_tail; /* messages waiting for a buffer */
	size_t max_len;				  /* the largest buffer posted so far */
	uint32_t rq_size;
	struct fab_conn *conns; /* the attached connections (fab_conn.srq_next) */
	bool no_cancel_logged;	/* the provider cannot cancel receives: said once */
	struct fid_ep *srx;	/* libfabric's own shared receive context, or NULL (emulated) */
};

/* typed accessors of the provider state of the core's objects */
static inline struct fab_peer *fab_peer(const struct rpma_peer *p)
{
	return rpma_peer_priv(p);
}

static inline struct fab_mr *fab_mr(const struct rpma_mr_local *m)
{
	return rpma_mr_priv(m);
}

static inline struct fab_ep *fab_ep(const struct rpma_ep *e)
{
	return rpma_ep_priv(e);
}

static inline struct fab_conn *fab_conn(const struct rpma_conn *c)
{
	return rpma_conn_priv(c);
}

static inline struct fab_conn *fab_req(const struct rpma_conn_req *r)
{
	return rpma_conn_req_priv(r);
}

static inline struct fab_cq *fab_cq(const struct rpma_cq *c)
{
	return rpma_cq_priv(c);
}

static inline struct fab_srq *fab_srq(const struct rpma_srq *s)
{
	return rpma_srq_priv(s);
}

/* a region's descriptor for local access (NULL for zero-length forms) */
static inline void *fab_mr_desc(const struct rpma_mr_local *m)
{
	return m ? fab_mr(m)->desc : NULL;
}

/* the local address of offset within a region */
static inline void *fab_mr_addr(const struct rpma_mr_local *m, size_t offset)
{
	return m ? fab_mr(m)->ptr + offset : NULL;
}

/* ----- fabric_provider.c */
int fab_err(int fi_ret);
unsigned fab_test_us(const char *name, const char *what);
uint64_t fab_now_ns(void);

/* ----- fabric_peer.c: the peer */
int fab_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps);
int fab_peer_fini(struct rpma_peer *peer);

/* ----- fabric_progress.c: the progress engine */
int fab_progress_start(struct fab_peer *p);
void fab_progress_stop(struct fab_peer *p);
/* fab_source_count_rx -- an application receive for fab_source.rx_events (drains are serialised) */
static inline void fab_source_count_rx(struct fab_source *src)
{
	uint64_t v = atomic_load_explicit(&src->rx_events, memory_order_relaxed);
	atomic_store_explicit(&src->rx_events, v + 1, memory_order_relaxed);
}

void fab_source_init(struct fab_source *src, struct fab_peer *peer, struct fid *fid,
		     fab_drain_fn *drain, void *arg);
void fab_source_add(struct fab_peer *peer, struct fab_source *src);
void fab_source_remove(struct fab_peer *peer, struct fab_source *src);
void fab_source_fini(struct fab_source *src);
void fab_progress_kick(struct fab_peer *peer);
void fab_source_drain(struct fab_source *src);

/*
 * fab_source_hold / fab_source_release -- be src's only drainer meanwhile
 * (the draining flag, fabric.h struct fab_source); inlined: no call per drain
 */
static inline __attribute__((always_inline)) void fab_source_hold(struct fab_source *src)
{
	while (atomic_exchange_explicit(&src->draining, true, memory_order_acquire))
		sched_yield();
}

static inline __attribute__((always_inline)) void fab_source_release(struct fab_source *src)
{
	atomic_store_explicit(&src->draining, false, memory_order_release);
}

/* ----- fabric_key.c: keys and registration */
int fab_peer_new_key(uint32_t *key);
int fab_peer_reg(struct fab_peer *peer, void *ptr, size_t size, uint64_t access, bool pmem,
		 struct fid_mr **mr, void **desc, uint64_t *key);

/* ----- fabric_evq.c: the software event queues */
int fab_eventfd(int flags);
int fab_eventfd_take(int fd, int empty, const char *what);
int fab_evq_init(struct fab_evq *q, bool lazy);
int fab_evq_get_fd(struct fab_evq *q, int *fd);
void fab_evq_fini(struct fab_evq *q);
int fab_evq_push(struct fab_evq *q, int kind, const void *data, size_t len, struct fi_info *info);
void fab_evq_push_event(struct fab_evq *q, struct fab_event *ev);
int fab_evq_pop(struct fab_evq *q, struct fab_event **ev);
void fab_event_free(struct fab_event *ev);
int fab_evq_pop_req(struct fab_evq *q, struct fab_event **evp);
void fab_event_take_pdata(struct fab_event *ev, struct rpma_conn_private_data *pdata);

/* ----- fabric_cq.c */
int fab_cq_init(struct fab_cq *cq, uint32_t size, struct fab_chan *chan, bool is_rcq,
		bool eager_fd);
void fab_cq_fini(struct fab_cq *cq);
int fab_chan_new(struct fab_chan **chan_ptr, bool eager_fd);
void fab_chan_put(struct fab_chan *chan);
int fab_chan_get_fd(struct fab_chan *chan, int *fd);
uint32_t fab_cq_reserve(struct fab_cq *cq, uint32_t want);
void fab_cq_unreserve(struct fab_cq *cq, uint32_t n);
void fab_cq_push(struct fab_cq *cq, const struct ibv_wc *wc);
void fab_cq_commit(struct fab_cq *cq, const struct ibv_wc *wc, uint32_t n, uint32_t reserved);
/*
 * set when the calling thread notified a CQ's channel (a sleeper of the
 * program may have woken); the progress thread reads and clears it
 */
extern _Thread_local bool fab_cq_woke;
int fab_cq_add_feeder(struct fab_cq *cq, struct fab_source *src);
void fab_cq_del_feeder(struct fab_cq *cq, struct fab_source *src);
enum ibv_wc_status fab_wc_status(int err);
enum ibv_wc_status fab_wc_status_of(const struct fab_peer *p, int err, int prov_errno);
bool fab_wc_rx_kind(const struct fab_peer *p, struct ibv_wc *wc, uint64_t flags, uint64_t data,
		    size_t len);
void fab_drain_tx(struct fab_source *src);
void fab_drain_rx(struct fab_source *src);
void fab_drain_group(struct fab_source *src);
int fab_cq_get_fd(const struct rpma_cq *cq, int *fd);
int fab_cq_wait(struct rpma_cq *cq);
int fab_cq_poll(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc);
int fab_chan_wait(struct fab_chan *chan, struct fab_cq **cq);
void fab_cq_unpark(struct fab_cq *cq);
void fab_cq_awake(struct fab_cq *cq);
void fab_cq_export_fd(struct fab_cq *cq);
bool fab_source_may_park(const struct fab_source *src, bool *briefly);

/* ----- fabric_cqg.c: CQ groups */
uint32_t fab_own_cqs(const char **bad);
void fab_cqg_peer_init(struct fab_peer *p);
void fab_cqg_peer_fini(struct fab_peer *p);
bool fab_cqg_wanted(struct fab_peer *p);
int fab_cqg_join(struct fab_conn *c, uint32_t nops);
void fab_cqg_quiesce(struct fab_conn *c);
void fab_cqg_leave(struct fab_conn *c);
void fab_cqg_watch(struct fab_conn *c);
void fab_cqg_drain_all(struct fab_cqg *g);
int fab_op_begin(struct fab_conn *c, struct fab_cq *to, void **ctx, uint64_t *ff);
void fab_op_push(struct fab_conn *c, struct fab_op *op);
void fab_op_cancel(struct fab_conn *c, void *ctx);

/* fab_conn_txs -- the source that completes the connection's sends (its own or its group's) */
static inline struct fab_source *fab_conn_txs(struct fab_conn *c)
{
	return c->grp ? &c->grp->src : &c->tx_src;
}

/* ----- fabric_mr.c */
int fab_mr_reg(struct rpma_peer *peer, struct rpma_mr_local *mr, void *ptr, size_t size, int usage,
	       uint64_t *raddr, uint64_t *rkey);
int fab_mr_dereg(struct rpma_mr_local *mr);

/* ----- fabric_ep.c */
int fab_ep_listen(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr, const char *port);
int fab_ep_shutdown(struct rpma_ep *ep);
int fab_ep_get_fd(const struct rpma_ep *ep, int *fd);
int fab_ep_next_conn_req(struct rpma_ep *ep, struct rpma_conn_req *req,
			 const struct rpma_conn_setup *setup, struct rpma_conn_private_data *pdata);

/* ----- fabric_ep.c helpers */
struct fi_info *fab_info_hints(const struct fab_peer *peer);
int fab_eq_open(struct fab_peer *peer, size_t size, struct fid_eq **eq);

/* ----- fabric_conn.c */
int fab_conn_getinfo(struct fab_peer *peer, const char *addr, const char *port,
		     struct fi_info **info);
int fab_cq_open(struct fab_peer *p, size_t size, struct fid_cq **cq);
int fab_conn_build(struct fab_peer *peer, struct fab_conn *c, struct fi_info *info, bool incoming,
		   const struct rpma_conn_setup *setup);
int fab_conn_req_new(struct rpma_peer *peer, struct rpma_conn_req *req, const char *addr,
		     const char *port, const struct rpma_conn_setup *setup);
int fab_conn_req_delete(struct rpma_conn_req *req);
int fab_conn_req_connect(struct rpma_conn_req *req, struct rpma_conn *conn,
			 const struct rpma_conn_private_data *pdata);
int fab_conn_req_recv(struct rpma_conn_req *req, const struct rpma_mr_local *dst, size_t offset,
		      size_t len, const void *op_context);
int fab_conn_get_event_fd(const struct rpma_conn *conn, int *fd);
int fab_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event,
			struct rpma_conn_private_data *pdata);
int fab_conn_disconnect(struct rpma_conn *conn);
int fab_conn_delete(struct rpma_conn *conn);
int fab_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);
int fab_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);
int fab_conn_wait(struct rpma_conn *conn, bool *is_rcq);
void fab_ceq_fini(struct fab_peer *p);
void fab_conn_mark_broken(struct fab_conn *c, int err);
int fab_post_recv(struct fab_conn *c, void *buf, size_t len, void *desc, void *ctx);
/* ----- a connection's receive records (fabric_recvs.c) */
int fab_recvs_init(struct fab_conn *c, size_t n);
void fab_recvs_fini(struct fab_conn *c);
struct fab_recv_rec *fab_recvs_take(struct fab_conn *c, void *ctx);
void fab_recvs_put(struct fab_conn *c, struct fab_recv_rec *x);
void fab_recvs_posted(struct fab_conn *c, struct fab_recv_rec *x);
bool fab_recvs_done_slow(struct fab_conn *c, void **ctx);
void fab_recvs_cancel(struct fab_conn *c);

/* fab_recvs_owns -- is ctx one of the connection's receive records? */
static inline bool fab_recvs_owns(const struct fab_conn *c, const void *ctx)
{
	uintptr_t p = (uintptr_t)ctx, lo = (uintptr_t)c->recvs.rec;
	return p >= lo && p < lo + c->recvs.n * sizeof(*c->recvs.rec);
}

/*
 * fab_recvs_done -- a completion whose context is *ctx: when it is one of
 * the connection's receive records, free the record, put the application's
 * context in *ctx and say so
 */
static inline bool fab_recvs_done(struct fab_conn *c, void **ctx)
{
	if (!fab_recvs_owns(c, *ctx))
		return false;
	return fab_recvs_done_slow(c, ctx);
}

void fab_conn_end(struct fab_conn *c, enum rpma_conn_event event);
void fab_conn_established(struct fab_conn *c, const void *pdata, size_t len);
void fab_ceq_set_deadline(struct fab_conn *c, uint64_t when);

/* ----- fabric_rdm.c: connections over reliable-datagram endpoints */
const char *fab_ep_type_env(void);
int fab_rdm_peer_init(struct fab_peer *p);
void fab_rdm_peer_fini(struct fab_peer *p);
int fab_rdm_listen(struct fab_peer *p, struct fab_ep *e, const char *addr, const char *port);
int fab_rdm_ep_shutdown(struct fab_ep *e);
int fab_rdm_next_conn_req(struct fab_ep *e, struct fab_conn *c, const struct rpma_conn_setup *setup,
			  struct rpma_conn_private_data *pdata);
int fab_rdm_conn_prepare(struct fab_conn *c);
int fab_rdm_conn_bind(struct fab_conn *c);
void fab_rdm_conn_watch(struct fab_conn *c, struct fid *cq);
int fab_rdm_conn_ready(struct fab_conn *c, const struct fi_info *info);
int fab_rdm_connect(struct fab_conn *c, const void *pdata, size_t len);
int fab_rdm_disconnect(struct fab_conn *c);
void fab_rdm_conn_timer(struct fab_conn *c);
int fab_rdm_teardown(struct fab_conn *c);
void fab_rdm_release(struct fab_conn *c);
bool fab_rdm_ctl_entry(struct fab_conn *c, const struct fi_cq_data_entry *e);
bool fab_rdm_ctl_error(struct fab_conn *c, const struct fi_cq_err_entry *e);
void fab_rdm_ctl_grouped(struct fab_ctx *x, const struct fi_cq_data_entry *e,
			 const struct fi_cq_err_entry *err);
void fab_drain_tx_rdm(struct fab_source *src);
int fab_rdm_op_wrap(struct fab_conn *c, enum ibv_wc_opcode opcode, void **ctx, uint64_t *ff);
enum { FAB_RDM_OP_NONE = 0, FAB_RDM_OP_REPORT, FAB_RDM_OP_DROP };
int fab_rdm_op_unwrap(struct fab_conn *c, void **ctx, enum ibv_wc_opcode *opcode, bool success);
bool fab_rdm_op_cancel(struct fab_conn *c, void *ctx);
void fab_rdm_ended(struct fab_conn *c);

/*
 * The application's messages over a reliable-datagram endpoint are tagged
 * with the receiving connection's id: FAB_RDM_APP_TAG in the high 16 bits,
 * the generation and the slot below (slots stay below 2^16, fabric_rdm.c),
 * so a receive takes only the messages of its own connection, whatever
 * else arrives at its endpoint, and never a control message (whose tag is
 * another).  A message of a connection that ended names a generation that
 * no receive waits for.
 */
#define FAB_RDM_APP_TAG 0x6170ULL /* "ap" */

/*
 * fab_rdm_heard_data -- a reliable-datagram connection's peer completed an
 * operation of ours or sent a message a receive took: it is alive, as a
 * keep-alive would say (fab_rdm_data_heard, fabric_rdm.c, reads it); a
 * plain store, cheap on the data path
 */
static inline void fab_rdm_heard_data(struct fab_conn *c)
{
	atomic_store_explicit(&c->rdm_heard, true, memory_order_relaxed);
}

/*
 * fab_entry_tags_fit -- may the connection protocol use fi's tags (a
 * reliable-datagram entry: FAB_RDM_TAG_BITS)?  Logs the refusal.
 */
static inline bool fab_entry_tags_fit(const struct fi_info *fi)
{
	if (fi->ep_attr->type != FI_EP_RDM)
		return true;
	int bits = fab_rdm_tag_bits(fi->ep_attr->mem_tag_format);
	if (bits >= FAB_RDM_TAG_BITS)
		return true;
	FAB_LOG_INFO("an entry of %s (domain %s) with tags of %d bits left out: "
		     "the connection protocol needs %d",
		     fi->fabric_attr->prov_name, fi->domain_attr->name, bits, FAB_RDM_TAG_BITS);
	return false;
}

_Static_assert((FAB_RDM_APP_TAG << 48) >> FAB_RDM_TAG_BITS == 0,
	       "application tags need more bits than FAB_RDM_TAG_BITS");

static inline uint64_t fab_rdm_app_tag(uint32_t id, uint32_t gen)
{
	return FAB_RDM_APP_TAG << 48 | (uint64_t)gen << 16 | (id & 0xffffU);
}

/* fab_tagged -- m as a tagged message of tag (data: m's, 0 for a receive) */
static inline struct fi_msg_tagged fab_tagged(const struct fi_msg *m, uint64_t tag)
{
	return (struct fi_msg_tagged){.msg_iov = m->msg_iov,
				      .desc = m->desc,
				      .iov_count = m->iov_count,
				      .addr = m->addr,
				      .tag = tag,
				      .ignore = 0,
				      .context = m->context,
				      .data = m->data};
}

/* fab_sendmsg -- send an application's message: over reliable datagrams tagged with tx_tag */
static inline ssize_t fab_sendmsg(struct fab_conn *c, const struct fi_msg *m, uint64_t ff)
{
	if (c->rdm == NULL)
		return fi_sendmsg(c->ep, m, ff);
	struct fi_msg_tagged t = fab_tagged(m, c->tx_tag);
	return fi_tsendmsg(c->ep, &t, ff);
}

/* fab_recvmsg -- post an application's receive: over reliable datagrams for rx_tag only */
static inline ssize_t fab_recvmsg(struct fab_conn *c, const struct fi_msg *m, uint64_t ff)
{
	if (c->rdm == NULL)
		return fi_recvmsg(c->ep, m, ff);
	struct fi_msg_tagged t = fab_tagged(m, c->rx_tag);
	return fi_trecvmsg(c->ep, &t, ff);
}
void *fab_imm_context(struct fab_conn *c, void *ctx);
bool fab_imm_flushed(struct fab_conn *c, void *ctx);
void fab_imm_unsent(struct fab_conn *c, struct fab_imm_slot *s);
bool fab_push_flushed(struct fab_conn *c, uint64_t wr_id, enum ibv_wc_opcode opcode);
int fab_rdm_flush_wait(struct fab_conn *c, enum fab_flush_wait what);
void fab_rdm_op_atomic(struct fab_conn *c, void *ctx);
void fab_rdm_flush_port(struct fab_conn *c);
void fab_drain_rx_rdm(struct fab_source *src);

/* ----- fabric_ops.c: the data path */
size_t fab_inject_size(size_t offered);
void fab_conn_progress(struct fab_conn *c);
void fab_conn_progress_spin(struct fab_conn *c);

/*
 * fab_reject -- refuse a connection request, with FAB_REJECT_MARK where the
 * client needs it to tell REJECTED from UNREACHABLE.  Not over sockets
 * (refused_sync: any later refusal is the server's): there private data
 * with a refusal reaches the client's EQ as error data, which libfabric's
 * sock_eq.c (1.17 to 2.1 at least) appends to a list outside the EQ's lock
 * while fi_eq_read() frees entries of that list outside it too, and the
 * list broke ("free(): invalid pointer" in our progress thread's
 * fi_eq_read, conn::disconnect_while_connecting: HACKING.md)
 */
static inline int fab_reject(struct fab_peer *p, struct fid_pep *pep, fid_t handle)
{
	if (p->refused_sync)
		return fi_reject(pep, handle, NULL, 0);
	return fi_reject(pep, handle, FAB_REJECT_MARK, sizeof(FAB_REJECT_MARK));
}

/* fab_conn_ended -- has the connection's final event been reported? */
static inline bool fab_conn_ended(struct fab_conn *c)
{
	return atomic_load_explicit(&c->state, memory_order_relaxed) == FAB_CONN_DONE;
}

/*
 * a loop that drives a connection's progress while it waits (a full queue,
 * earlier operations to complete, a free record): FAB_WAIT_INIT, then
 * fab_conn_wait_round() once a round
 */
struct fab_conn_wait {
	uint64_t until; /* when it gives up; 0: not started */
	uint64_t yield; /* when it yields the processor next */
};
#define FAB_WAIT_INIT \
	{             \
		0, 0  \
	}

/*
 * fab_conn_wait_round -- one round of such a loop: false once limit_ns
 * passed since its first round, else the connection's sources drained and,
 * every FAB_YIELD_NS, the processor yielded (over shm, which takes one
 * delivered write per peer at a time, a yield each round halved the rate
 * of small writes: a system call in this VM costs as much as a write)
 */
static inline bool fab_conn_wait_round(struct fab_conn *c, struct fab_conn_wait *w,
				       uint64_t limit_ns)
{
	uint64_t now = fab_now_ns();
	if (w->until == 0) {
		w->until = now + limit_ns;
		w->yield = now + FAB_YIELD_NS;
	} else if (now > w->until) {
		return false;
	}
	if (now >= w->yield) {
		w->yield = now + FAB_YIELD_NS;
		fab_conn_progress(c);
	} else {
		fab_conn_progress_spin(c);
	}
	return true;
}
struct fab_stage_slot *fab_stage_of(struct fab_conn *c, void *ctx);
int fab_read(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t dst_offset,
	     uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
int fab_write(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
	      uint64_t raddr, uint64_t rkey, size_t len, int flags, const void *op_context);
int fab_write_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t src_offset,
		  uint64_t raddr, uint64_t rkey, size_t len, int flags, uint32_t imm,
		  const void *op_context);
int fab_atomic_write(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, const char src[8],
		     int flags, const void *op_context);
int fab_flush(struct rpma_conn *conn, uint64_t raddr, uint64_t rkey, size_t len,
	      enum rpma_flush_type type, int flags, const void *op_context);
int fab_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	     int flags, bool with_imm, uint32_t imm, const void *op_context);
int fab_recv(struct rpma_conn *conn, const struct rpma_mr_local *dst, size_t offset, size_t len,
	     const void *op_context);

/* ----- fabric_srq.c */
int fab_srq_new(struct rpma_peer *peer, struct rpma_srq *srq, uint32_t rq_size, struct rpma_cq *rcq,
		uint32_t rcq_size);
int fab_srq_delete(struct rpma_srq *srq);
int fab_srq_recv(struct rpma_srq *srq, const struct rpma_mr_local *dst, size_t offset, size_t len,
		 const void *op_context);
int fab_srq_bind(struct fab_srq *srq, struct fid_ep *ep);
int fab_srq_attach(struct fab_srq *srq, struct fab_conn *c);
void fab_srq_detach(struct fab_srq *srq, struct fab_conn *c);
bool fab_srq_arrived(struct fab_conn *c, struct fab_bounce *b);
void fab_srq_cancelled(struct fab_conn *c, struct fab_bounce *b);

#endif /* RPMA_FABRIC_H */
