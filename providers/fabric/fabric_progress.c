/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_progress.c -- the progress engine: a peer's thread draining its CQs and EQs */

#define _GNU_SOURCE /* pthread_setname_np */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"

/*
 * fab_source_init -- describe a libfabric CQ/EQ for the progress thread of
 * peer (without a wait fd the thread polls it periodically)
 */
void fab_source_init(struct fab_source *src, struct fab_peer *peer, struct fid *fid,
		     fab_drain_fn *drain, void *arg)
{
	memset(src, 0, sizeof(*src));
	src->peer = peer; /* before anyone can see src: fab_cq_unpark_feeders reads it unlocked */
	src->fid = fid;
	src->drain = drain;
	src->arg = arg;
	src->fd = -1;
	/* FI_WAIT_FD was requested, so FI_GETWAIT gives an int (see libfabric.md) */
	int fd = -1;
	int ret = fi_control(fid, FI_GETWAIT, &fd);
	if (ret == 0 && fd >= 0)
		src->fd = fd;
	else
		FAB_LOG_DEBUG("no wait fd (%s): the object is polled periodically",
			      fi_strerror(-ret));
	atomic_init(&src->draining, false);
}

/* fab_source_fini -- release what fab_source_init set up */
void fab_source_fini(struct fab_source *src)
{
	if (src->fid == NULL)
		return;
	src->fid = NULL;
}

/* fab_source_drain -- drain one source (serialised with other drainers) */
void fab_source_drain(struct fab_source *src)
{
	fab_source_hold(src);
	src->drain(src);
	fab_source_release(src);
}

/* fab_progress_kick -- interrupt the progress thread's wait */
void fab_progress_kick(struct fab_peer *peer)
{
	uint64_t one = 1;
	if (write(peer->prog.wake_fd, &one, sizeof(one)) != sizeof(one))
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
}

/* fab_source_add -- let the progress thread wait on and drain src */
void fab_source_add(struct fab_peer *peer, struct fab_source *src)
{
	struct fab_progress *pr = &peer->prog;
	/*
	 * its wait fd joins the peer's epoll set; when it cannot (the fd is
	 * already there for another source, or epoll refuses it) the thread
	 * drains the source every round instead
	 */
	src->in_epoll = src->watched = false;
	if (src->fd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};
		if (epoll_ctl(pr->epfd, EPOLL_CTL_ADD, src->fd, &ev) == 0)
			src->in_epoll = src->watched = true;
		else
			FAB_LOG_DEBUG("epoll_ctl(ADD, fd %d): %s: drained every round", src->fd,
				      strerror(errno));
	}
	src->due = false;
	src->fresh = true;
	pthread_mutex_lock(&pr->lock);
	src->next = pr->sources;
	pr->sources = src;
	src->registered = true;
	pr->gen++;
	pthread_mutex_unlock(&pr->lock);
	fab_progress_kick(peer);
}

/*
 * fab_source_remove -- take src away from the progress thread; on return the
 * thread no longer uses it (it has started a new round without it)
 */
void fab_source_remove(struct fab_peer *peer, struct fab_source *src)
{
	struct fab_progress *pr = &peer->prog;
	if (!src->registered)
		return;
	pthread_mutex_lock(&pr->lock);
	for (struct fab_source **pp = &pr->sources; *pp; pp = &(*pp)->next) {
		if (*pp == src) {
			*pp = src->next;
			break;
		}
	}
	src->registered = false;
	/*
	 * out of the set while its fd is surely open (ENOENT: parked, out of
	 * it already); the thread adds it again only while registered
	 */
	if (src->in_epoll && epoll_ctl(pr->epfd, EPOLL_CTL_DEL, src->fd, NULL) && errno != ENOENT)
		FAB_LOG_DEBUG("epoll_ctl(DEL, fd %d): %s", src->fd, strerror(errno));
	uint64_t gen = ++pr->gen;
	pthread_mutex_unlock(&pr->lock);
	fab_progress_kick(peer);
	pthread_mutex_lock(&pr->lock);
	while (pr->running && !pr->stop && pr->seen_gen < gen)
		pthread_cond_wait(&pr->cond, &pr->lock);
	pthread_mutex_unlock(&pr->lock);
}

/*
 * fab_source_park -- decide (progress thread only) whether the thread leaves
 * src's wait fd alone until its next round: the user drained src since the
 * last round, no sleeper may need the thread and nobody announced a sleep
 * (fabric.h, parking); *briefly: look again after FAB_PARK_MS at the latest
 */
static bool fab_source_park(struct fab_source *src, bool *briefly)
{
	bool park = false;
	*briefly = false;
	if (src->fd >= 0) {
		uint32_t u = atomic_load_explicit(&src->user_drains, memory_order_acquire);
		bool drained = u != src->seen_drains;
		src->seen_drains = u;
		if (drained && fab_source_may_park(src, briefly)) {
			/* parked first, then the check: a sleeper sees one or the other */
			atomic_store(&src->parked, true);
			park = !atomic_exchange(&src->unpark, false);
		}
	}
	if (!park)
		atomic_store(&src->parked, false);
	return park;
}

/*
 * What one round of the progress thread works on (the thread's own, grown as
 * needed).  A round drains only the sources that need it: those whose wait
 * fd fired (the peer's epoll set), the EQs and the sources without a wait fd
 * (every round, as few as a peer has endpoints), the parked ones, new ones,
 * and those fi_trywait() sent back; so its cost grows with the connections
 * that are active, not with all of them.  A source whose fd did not fire
 * was drained and passed fi_trywait() since it last fired: nothing new is in
 * it, and anything that comes makes its fd readable.
 */
#define FAB_ROUND_EVENTS 256
struct fab_round {
	struct fab_source **always; /* EQs and sources without a wait fd (not CQ groups) */
	struct fab_source **parked; /* the sources parked at the end of the last round */
	struct fab_source **due;    /* this round's sources, in drain order */
	struct fab_source **tws;    /* the ones fi_trywait() checks ... */
	struct fid **fids;	    /* ... and their fids */
	struct fab_source **noisy;  /* noisy sources drained this round (fab_source_noisy) */
	size_t cap;		    /* entries of each of these arrays */
	size_t nalways, nparked, ndue, ntw, nnoisy;
	struct epoll_event ev[FAB_ROUND_EVENTS];
	int nev;      /* events of the last wait */
	uint64_t gen; /* the source list's generation the arrays were made from */
	bool started; /* gen is valid */
	bool retry;   /* fi_trywait() answered -FI_EAGAIN: drain tws again */
	bool all;     /* fi_trywait() fails: drain every source every round */
	bool sweep;   /* the safety-net timeout passed with no event: drain every source once */
	/* what draining found (fab_progress_drain) */
	int timeout;	/* ms until the nearest deadline (1000 at most: a safety net) */
	bool nofd;	/* a source without a wait fd: it must be polled */
	bool anyparked; /* a source the user drains is left alone for a while */
	bool briefly;	/* ... but only for FAB_PARK_MS */
	/* fi_trywait() */
	int eagain;  /* successive -FI_EAGAIN answers */
	bool warned; /* its failure was logged */
};

/* fab_round_grow -- room for n sources; false when out of memory */
static bool fab_round_grow(struct fab_round *r, size_t n)
{
	if (n <= r->cap)
		return true;
	size_t ncap = n * 2;
	struct fab_source ***arrs[] = {&r->always, &r->parked, &r->due, &r->tws, &r->noisy};
	bool ok = true;
	for (size_t i = 0; i < sizeof(arrs) / sizeof(arrs[0]); i++) {
		struct fab_source **na = realloc(*arrs[i], ncap * sizeof(*na));
		if (na)
			*arrs[i] = na;
		else
			ok = false;
	}
	struct fid **nf = realloc(r->fids, ncap * sizeof(*nf));
	if (nf)
		r->fids = nf;
	if (!ok || !nf)
		return false;
	r->cap = ncap;
	return true;
}

/* fab_round_due -- put s (after the source it must follow) on the round's list */
static void fab_round_due(struct fab_round *r, struct fab_source *s)
{
	if (s->due)
		return;
	if (s->before && s->before->registered && !s->before->due) {
		s->before->due = true;
		r->due[r->ndue++] = s->before;
	}
	s->due = true;
	r->due[r->ndue++] = s;
}

/*
 * fab_progress_rebuild -- the source list changed (under the lock): the
 * arrays anew, a first drain for new sources
 */
static int fab_progress_rebuild(struct fab_progress *pr, struct fab_round *r)
{
	size_t n = 0;
	for (struct fab_source *s = pr->sources; s; s = s->next)
		n++;
	if (!fab_round_grow(r, n))
		return -1;
	r->nalways = r->nparked = 0;
	for (struct fab_source *s = pr->sources; s; s = s->next) {
		s->due = false;
		if (s->fd < 0 || !s->in_epoll || (s->feeds == NULL && !s->shared))
			r->always[r->nalways++] = s;
		else if (atomic_load(&s->parked))
			r->parked[r->nparked++] = s;
	}
	r->ndue = 0;
	for (struct fab_source *s = pr->sources; s; s = s->next) {
		if (s->fresh) {
			s->fresh = false;
			fab_round_due(r, s);
		}
	}
	r->gen = pr->gen;
	r->started = true;
	return 0;
}

/*
 * fab_progress_snapshot -- under the lock: take up a changed source list,
 * make this round's list and tell fab_source_remove() waiters that the
 * thread no longer uses removed sources; 1: the thread must stop, 0: go on,
 * -1: out of memory (try again)
 */
static int fab_progress_snapshot(struct fab_peer *p, struct fab_round *r)
{
	struct fab_progress *pr = &p->prog;
	pthread_mutex_lock(&pr->lock);
	if (pr->stop) {
		pthread_mutex_unlock(&pr->lock);
		return 1;
	}
	/*
	 * the sources of the last wait's events and those fi_trywait() sent
	 * back, while still registered (a removed one is not freed before
	 * this round has begun: fab_source_remove waits for it)
	 */
	struct fab_source *fired[FAB_ROUND_EVENTS];
	int nfired = 0;
	for (int i = 0; i < r->nev; i++) {
		struct fab_source *s = r->ev[i].data.ptr;
		if (s && s->registered) {
			fired[nfired++] = s;
			s->fired = s->counts; /* fab_source_noisy */
		}
	}
	r->nev = 0;
	if (!r->started || r->gen != pr->gen) {
		if (fab_progress_rebuild(pr, r)) {
			pthread_mutex_unlock(&pr->lock);
			return -1;
		}
	}
	if (r->retry) {
		for (size_t i = 0; i < r->ntw; i++)
			if (r->tws[i]->registered)
				fab_round_due(r, r->tws[i]);
		r->retry = false;
	}
	for (int i = 0; i < nfired; i++)
		fab_round_due(r, fired[i]);
	for (size_t i = 0; i < r->nalways; i++)
		fab_round_due(r, r->always[i]);
	for (size_t i = 0; i < r->nparked; i++)
		fab_round_due(r, r->parked[i]);
	if (r->all || r->sweep)
		for (struct fab_source *s = pr->sources; s; s = s->next)
			fab_round_due(r, s);
	r->sweep = false;
	pr->seen_gen = pr->gen;
	pthread_cond_broadcast(&pr->cond);
	pthread_mutex_unlock(&pr->lock);
	return 0;
}

/*
 * fab_source_watch -- the thread waits on src's fd (in the epoll set) or not
 * (parked: out of the set).  A parked fd leaves the set rather than staying
 * there without interest: libfabric's CQ wait fd is itself an epoll set, and
 * while it sat in ours, even without interest, libfabric's tcp progress
 * inside fi_cq_read() reset the CQ's signal (a read) and set it again (a
 * write) on every completion instead of every other one (issue 20: 7.0
 * system calls per write against 6.0).  The fd comes back only while src is
 * registered (under the lock that fab_source_remove takes it away with: no
 * removed source is added again); where that fails, the thread drains src
 * every round (r->started: the arrays are made anew).
 */
static void fab_source_watch(struct fab_progress *pr, struct fab_round *r, struct fab_source *src,
			     bool on)
{
	if (!src->in_epoll || src->watched == on)
		return;
	if (!on) {
		if (epoll_ctl(pr->epfd, EPOLL_CTL_DEL, src->fd, NULL) && errno != ENOENT)
			FAB_LOG_DEBUG("epoll_ctl(DEL, fd %d): %s", src->fd, strerror(errno));
		src->watched = false;
		return;
	}
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};
	pthread_mutex_lock(&pr->lock);
	if (src->registered) {
		if (epoll_ctl(pr->epfd, EPOLL_CTL_ADD, src->fd, &ev) == 0) {
			src->watched = true;
		} else {
			FAB_LOG_DEBUG("epoll_ctl(ADD, fd %d): %s: drained every round", src->fd,
				      strerror(errno));
			src->in_epoll = false;
			r->started = false;
		}
	}
	pthread_mutex_unlock(&pr->lock);
}

/*
 * fab_progress_activity -- RMA operations against the source's endpoint
 * since the last look (unless the program polls its CQ: fabric.h), or
 * receives the thread's own drain delivered to a CQ the program sleeps on
 * (rx0: rx_events before it; a program that polls the CQ takes its
 * receives itself, and the thread must not compete with it): keep polling
 * for spin_ns (fabric.h).  Sleeps on the CQ: a thread is asleep in
 * rpma_cq_wait() or rpma_conn_wait() on it now, or, once the user took
 * its fd, has ever slept on it (a sleep in poll() on the fd cannot be
 * seen).  Not "has ever slept" for the others: after one long sleep a
 * waiter that reads the CQ itself again (fab_cq_wait_direct) would keep
 * the thread polling beside it, and over shm, with 2 CPUs, the two
 * waiters and this thread then shared them (send-recv of 8 B, both
 * sides waiting, after a phase of writes: 4.1 us instead of 1.5).
 */
static void fab_progress_activity(struct fab_progress *pr, struct fab_source *s, uint64_t now,
				  uint64_t rx0)
{
	/* receives count where the program sleeps on the CQ, not polls it */
	const struct fab_cq *cq = s->feeds;
	bool moved = cq != NULL &&
		     (atomic_load(&cq->fd_exported) ? atomic_load(&cq->waited)
						    : atomic_load(&cq->sleepers) > 0) &&
		     atomic_load_explicit(&s->rx_events, memory_order_relaxed) != rx0;
	if (s->activity || s->activity_sum) {
		uint64_t v = s->activity_sum ? s->activity_sum(s) : fi_cntr_read(s->activity);
		uint32_t u = atomic_load_explicit(&s->user_drains, memory_order_relaxed);
		if (u != s->seen_polls) {
			s->seen_polls = u;
			s->polled_ns = now;
		}
		/* the program polls the CQ: its polls drive the endpoint */
		moved |= v != s->activity_seen && now - s->polled_ns >= FAB_POLLED_NS;
		s->activity_seen = v;
	}
	if (moved)
		pr->busy_until_ns = now + pr->spin_ns;
}

/*
 * fab_source_noisy -- after the thread drained src: did its fd fire with
 * nothing to take once too often (fabric.h, noisy wait fds)?
 */
static bool fab_source_noisy(struct fab_source *s)
{
	if (!s->counts)
		return false;
	uint32_t f = atomic_load_explicit(&s->found, memory_order_relaxed);
	if (s->fired && !s->noisy) {
		if (f != s->seen_found)
			s->idle_fires = 0;
		else if (++s->idle_fires >= FAB_NOISY_FIRES) {
			s->noisy = true;
			FAB_LOG_INFO(
				"a wait fd fires without entries (fd %d: the domain's traffic, "
				"as libfabric 2.x's tcp does): left alone while the program "
				"polls",
				s->fd);
		}
	}
	s->fired = false;
	s->seen_found = f;
	return s->noisy;
}

/* fab_round_trywait -- fi_trywait() checks src before the round's wait */
static void fab_round_trywait(struct fab_round *r, struct fab_source *src)
{
	r->tws[r->ntw] = src;
	r->fids[r->ntw++] = src->fid;
}

/*
 * fab_round_noisy -- the round's noisy sources: out of the epoll set while
 * a source is parked (the program polls; they are drained every round,
 * whose wait is then at most FAB_PARK_MAX_MS), watched again otherwise
 */
static void fab_round_noisy(struct fab_progress *pr, struct fab_round *r)
{
	for (size_t i = 0; i < r->nnoisy; i++) {
		struct fab_source *s = r->noisy[i];
		fab_source_watch(pr, r, s, !r->anyparked);
		if (!r->anyparked)
			fab_round_trywait(r, s);
	}
	r->nnoisy = 0;
}

/*
 * fab_progress_drain -- drain the round's sources (but parked ones the user
 * drains), fire expired deadlines, note the nearest one, sources without a
 * wait fd and the ones that park; the parked list and the fi_trywait() set
 * for the next steps
 */
static void fab_progress_drain(struct fab_progress *pr, struct fab_round *r)
{
	r->timeout = FAB_SAFETY_NET_MS; /* every change kicks the thread */
	r->nofd = r->anyparked = r->briefly = false;
	r->nparked = r->ntw = r->nnoisy = 0;
	uint64_t now = fab_now_ns();
	for (size_t i = 0; i < r->ndue; i++) {
		struct fab_source *s = r->due[i];
		s->due = false;
		/* a parked source the user still drains needs nothing from us */
		if (!atomic_load(&s->parked) ||
		    atomic_load_explicit(&s->user_drains, memory_order_acquire) == s->seen_drains) {
			uint64_t rx0 =
				s->watch ? atomic_load_explicit(&s->rx_events, memory_order_relaxed)
					 : 0;
			fab_source_drain(s);
			if (s->watch && !atomic_load(&s->parked))
				fab_progress_activity(pr, s, now, rx0);
		}
		bool noisy = fab_source_noisy(s);
		uint64_t dl = atomic_load(&s->deadline_ns);
		if (dl != 0) {
			if (dl <= now) {
				atomic_store(&s->deadline_ns, 0);
				if (s->expire)
					s->expire(s);
			} else {
				uint64_t ms = (dl - now) / 1000000 + 1;
				if (ms < (uint64_t)r->timeout)
					r->timeout = (int)ms;
			}
		}
		if (s->fd < 0 || s->no_trywait)
			r->nofd = true;
		bool b;
		if (fab_source_park(s, &b)) {
			r->anyparked = true;
			r->briefly |= b;
			fab_source_watch(pr, r, s, false);
			if (s->in_epoll && s->feeds != NULL)
				r->parked[r->nparked++] = s;
		} else if (noisy) {
			r->noisy[r->nnoisy++] = s; /* once the round knows what parks */
		} else {
			fab_source_watch(pr, r, s, true);
			if (s->fd >= 0 && !s->no_trywait)
				fab_round_trywait(r, s);
		}
	}
	r->ndue = 0;
	fab_round_noisy(pr, r);
}

/*
 * fab_progress_timeout -- how long the round's wait may sleep: 1 ms when a
 * source has no wait fd; while sources park, at most the parking interval,
 * which doubles (up to FAB_PARK_MAX_MS) as long as the user keeps polling
 */
static void fab_progress_timeout(struct fab_progress *pr, struct fab_round *r)
{
	if (r->nofd && r->timeout > 1)
		r->timeout = 1;
	if (r->anyparked) {
		/* the user keeps polling: look less often (but see briefly) */
		if (r->briefly)
			pr->park_ms = FAB_PARK_MS;
		if (r->timeout > pr->park_ms)
			r->timeout = pr->park_ms;
		if (!r->briefly && pr->park_ms < FAB_PARK_MAX_MS)
			pr->park_ms *= 2;
	} else {
		pr->park_ms = FAB_PARK_MS;
	}
	/* RMA traffic against a polled endpoint: look again at once */
	if (pr->busy_until_ns != 0) {
		if (fab_now_ns() < pr->busy_until_ns)
			r->timeout = 0;
		else
			pr->busy_until_ns = 0;
	}
}

/*
 * fab_progress_trywait -- may the thread sleep on the wait fds of the
 * sources it drained this round (fi_trywait())?  false: something arrived
 * meanwhile, drain them again (three times in a row at most, then sleep
 * 1 ms: never spin)
 */
static bool fab_progress_trywait(struct fab_peer *p, struct fab_round *r)
{
	int ret = r->ntw ? fi_trywait(p->fabric, r->fids, (int)r->ntw) : 0;
	if (ret == -FI_EAGAIN) {
		r->retry = true;
		if (++r->eagain < 4)
			return false;
		r->timeout = 1;
		return true;
	}
	r->eagain = 0;
	if (ret != 0) {
		if (!r->warned)
			FAB_LOG_WARNING("fi_trywait: %s; polling every 5 ms", fi_strerror(-ret));
		r->warned = true;
		r->all = true;
		if (r->timeout > 5)
			r->timeout = 5;
	}
	return true;
}

/* fab_progress_wait -- sleep until the wake fd or a watched wait fd fires, or the timeout */
static void fab_progress_wait(struct fab_progress *pr, struct fab_round *r)
{
	int n = epoll_wait(pr->epfd, r->ev, FAB_ROUND_EVENTS, r->timeout);
	if (n < 0) {
		if (errno != EINTR)
			RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: epoll_wait");
		n = 0;
	}
	/*
	 * a whole safety-net interval without an event: the next round drains
	 * every source, not only those whose fd fired, so that a wakeup lost
	 * anywhere (a passive target's request waiting in a CQ nobody drains)
	 * costs at most that interval, not the connection
	 */
	if (n == 0 && r->timeout >= FAB_SAFETY_NET_MS)
		r->sweep = true;
	r->nev = n;
	for (int i = 0; i < n; i++) {
		if (r->ev[i].data.ptr == NULL) {
			uint64_t v;
			if (read(pr->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd read");
		}
	}
}

/*
 * fab_progress_yield -- between two rounds of polling, let the others of
 * this CPU run: at once when this round woke a sleeper of the program,
 * which may be waiting for this very CPU (2 vCPUs, the peer's thread
 * polling the other one: a send-recv of 64 KiB took 1.1 ms when the thread
 * never yielded), else every FAB_YIELD_NS.  A yield each round cost a write
 * of 8 B over shm a third of its time (3.2 us against 2.0 us).  A yield
 * that came back FAB_YIELD_LOST_NS late (a CPU-bound process shares the
 * CPU and got its whole slice) turns the yields of the next
 * FAB_NAP_PERIOD_NS into the shortest sleeps: a woken sleeper preempts
 * such a process, a yielder waits behind it.
 */
static void fab_progress_yield(struct fab_progress *pr)
{
	uint64_t now = fab_now_ns();
	if (!fab_cq_woke && now - pr->yielded_ns < FAB_YIELD_NS)
		return;
	if (now < pr->nap_until_ns) {
		/* the shortest sleep: the timer's slack, ~50 us */
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 1};
		(void)nanosleep(&ts, NULL);
		pr->yielded_ns = fab_now_ns();
		return;
	}
	sched_yield();
	pr->yielded_ns = fab_now_ns();
	if (pr->yielded_ns - now >= FAB_YIELD_LOST_NS)
		pr->nap_until_ns = pr->yielded_ns + FAB_NAP_PERIOD_NS;
}

/*
 * fab_progress_thread -- drain the CQs and EQs that need it (struct
 * fab_round), then sleep until one of their wait fds (or the wake fd) fires;
 * fi_trywait() tells when sleeping is safe.  Draining drives the libfabric
 * provider's progress, so one-sided operations against this peer complete
 * while the application sleeps.
 */
static void *fab_progress_thread(void *arg)
{
	struct fab_peer *p = arg;
	struct fab_round r = {0};
	/* a name for ps, top, gdb (at most 15 characters); failing to set it is harmless */
	(void)pthread_setname_np(pthread_self(), FAB_PROGRESS_NAME);

	for (;;) {
		int ret = fab_progress_snapshot(p, &r);
		if (ret > 0)
			break;
		if (ret < 0) {
			FAB_LOG_ERROR("progress thread: out of memory, retrying");
			usleep(1000);
			continue;
		}
		fab_progress_drain(&p->prog, &r);
		fab_progress_timeout(&p->prog, &r);
		if (!fab_progress_trywait(p, &r))
			continue;
		fab_progress_wait(&p->prog, &r);
		if (r.timeout == 0)
			fab_progress_yield(&p->prog);
		fab_cq_woke = false;
	}
	free(r.always);
	free(r.parked);
	free(r.due);
	free(r.tws);
	free(r.fids);
	free(r.noisy);
	return NULL;
}

/*
 * fab_spin_ns -- RPMA_FABRIC_SPIN_US: how long the thread keeps polling after
 * traffic reached an endpoint without a wait fd (fabric.h)
 */
static uint64_t fab_spin_ns(void)
{
	uint64_t us = FAB_SPIN_US;
	const char *v = getenv("RPMA_FABRIC_SPIN_US");
	if (v != NULL && *v != '\0') {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (*end != '\0' || errno != 0 || n > FAB_SPIN_US_MAX || *v == '-')
			FAB_LOG_WARNING("RPMA_FABRIC_SPIN_US=%s is not a number of microseconds "
					"up to %u: %u kept",
					v, (unsigned)FAB_SPIN_US_MAX, (unsigned)FAB_SPIN_US);
		else
			us = n;
	}
	return us * 1000;
}

/* fab_progress_start -- start the progress thread of a peer */
int fab_progress_start(struct fab_peer *p)
{
	struct fab_progress *pr = &p->prog;
	pr->wake_fd = fab_eventfd(EFD_NONBLOCK | EFD_CLOEXEC);
	if (pr->wake_fd < 0) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd()");
		return RPMA_E_PROVIDER;
	}
	pr->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event wev = {.events = EPOLLIN, .data.ptr = NULL};
	if (pr->epfd < 0 || epoll_ctl(pr->epfd, EPOLL_CTL_ADD, pr->wake_fd, &wev)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: epoll set of the progress thread");
		if (pr->epfd >= 0)
			close(pr->epfd);
		close(pr->wake_fd);
		return RPMA_E_PROVIDER;
	}
	pthread_mutex_init(&pr->lock, NULL);
	pthread_cond_init(&pr->cond, NULL);
	pr->sources = NULL;
	pr->gen = pr->seen_gen = 0;
	pr->stop = false;
	pr->park_ms = FAB_PARK_MS;
	pr->spin_ns = fab_spin_ns();
	pr->busy_until_ns = 0;
	pr->nap_until_ns = 0;
	pr->running = true;
	/*
	 * the thread starts with every signal blocked (it inherits the mask of
	 * its creator), so that the application's handlers never run on it
	 */
	sigset_t all, old;
	sigfillset(&all);
	int mret = pthread_sigmask(SIG_SETMASK, &all, &old);
	int ret = pthread_create(&pr->thread, NULL, fab_progress_thread, p);
	if (mret == 0)
		(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	else
		RPMA_LOG_WARNING("fabric: pthread_sigmask() failed (%d): the progress thread "
				 "takes signals",
				 mret);
	if (ret) {
		pr->running = false;
		RPMA_LOG_ERROR_WITH_ERRNO(ret, "fabric: pthread_create()");
		pthread_cond_destroy(&pr->cond);
		pthread_mutex_destroy(&pr->lock);
		close(pr->epfd);
		close(pr->wake_fd);
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/* fab_progress_stop -- stop and join the progress thread */
void fab_progress_stop(struct fab_peer *p)
{
	struct fab_progress *pr = &p->prog;
	if (!pr->running)
		return;
	pthread_mutex_lock(&pr->lock);
	pr->stop = true;
	pthread_cond_broadcast(&pr->cond);
	pthread_mutex_unlock(&pr->lock);
	fab_progress_kick(p);
	pthread_join(pr->thread, NULL);
	pr->running = false;
	if (pr->sources)
		FAB_LOG_WARNING("peer closed while %s still registered", "objects are");
	pthread_cond_destroy(&pr->cond);
	pthread_mutex_destroy(&pr->lock);
	close(pr->epfd);
	close(pr->wake_fd);
}
