/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_peer.c -- the peer (fabric + domain), its progress thread and the software event queues */

#define _GNU_SOURCE /* pthread_setname_np */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <rdma/fi_atomic.h>

#include "fabric.h"

/* ----------------------------------------------------------- event queues */

/*
 * fab_eventfd -- an eventfd (flags as eventfd(2)) numbered 3 or above:
 * libfabric's sockets provider closes descriptor 0 during connection churn,
 * and a program that closed its standard input would otherwise lend that
 * number to one of ours (an event queue then stops signalling); -1 and errno
 * on failure
 */
int fab_eventfd(int flags)
{
	int fd = eventfd(0, flags);
	if (fd < 0 || fd > 2)
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	close(fd);
	errno = e;
	return high;
}

/* fab_evq_init -- an empty software event queue with its eventfd */
int fab_evq_init(struct fab_evq *q)
{
	q->head = q->tail = NULL;
	q->efd = fab_eventfd(EFD_SEMAPHORE | EFD_CLOEXEC);
	if (q->efd < 0) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd()");
		return RPMA_E_PROVIDER;
	}
	pthread_mutex_init(&q->lock, NULL);
	return 0;
}

/* fab_event_free -- release one event and what it owns */
void fab_event_free(struct fab_event *ev)
{
	if (ev == NULL)
		return;
	free(ev->data);
	if (ev->info)
		fi_freeinfo(ev->info);
	free(ev);
}

/* fab_evq_fini -- release a queue and every event still in it */
void fab_evq_fini(struct fab_evq *q)
{
	if (q->efd < 0)
		return;
	struct fab_event *ev = q->head;
	while (ev) {
		struct fab_event *next = ev->next;
		fab_event_free(ev);
		ev = next;
	}
	q->head = q->tail = NULL;
	close(q->efd);
	q->efd = -1;
	pthread_mutex_destroy(&q->lock);
}

/* fab_evq_push_event -- queue an event made beforehand (the queue takes it over) and signal the fd */
void fab_evq_push_event(struct fab_evq *q, struct fab_event *ev)
{
	ev->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = ev;
	else
		q->head = ev;
	q->tail = ev;
	pthread_mutex_unlock(&q->lock);
	uint64_t one = 1;
	if (write(q->efd, &one, sizeof(one)) != sizeof(one))
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
}

/*
 * fab_evq_push -- queue an event (data is copied, info is taken over) and
 * signal the fd; RPMA_E_NOMEM when there is no memory for it (info then stays
 * the caller's)
 */
int fab_evq_push(struct fab_evq *q, int kind, const void *data, size_t len, struct fi_info *info)
{
	struct fab_event *ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		goto nomem;
	if (len > 0) {
		ev->data = malloc(len);
		if (ev->data == NULL) {
			free(ev);
			goto nomem;
		}
		memcpy(ev->data, data, len);
		ev->len = len;
	}
	ev->kind = kind;
	ev->info = info;
	fab_evq_push_event(q, ev);
	return 0;
nomem:
	FAB_LOG_ERROR("out of memory: an event is lost");
	return RPMA_E_NOMEM;
}

/*
 * fab_evq_pop -- take the oldest event; blocks unless the user made the fd
 * non-blocking (then RPMA_E_NO_EVENT when nothing waits)
 */
int fab_evq_pop(struct fab_evq *q, struct fab_event **evp)
{
	uint64_t v;
	for (;;) {
		ssize_t n = read(q->efd, &v, sizeof(v));
		if (n == sizeof(v))
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return RPMA_E_NO_EVENT;
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd read");
		return RPMA_E_PROVIDER;
	}
	pthread_mutex_lock(&q->lock);
	struct fab_event *ev = q->head;
	if (ev) {
		q->head = ev->next;
		if (q->head == NULL)
			q->tail = NULL;
		ev->next = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	if (ev == NULL) {
		FAB_LOG_ERROR("event queue signalled but empty");
		return RPMA_E_UNKNOWN;
	}
	*evp = ev;
	return 0;
}

/* ------------------------------------------------------------- progress */

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
	pthread_mutex_init(&src->drain_lock, NULL);
}

/* fab_source_fini -- release what fab_source_init set up */
void fab_source_fini(struct fab_source *src)
{
	if (src->fid == NULL)
		return;
	pthread_mutex_destroy(&src->drain_lock);
	src->fid = NULL;
}

/* fab_source_drain -- drain one source (serialised with other drainers) */
void fab_source_drain(struct fab_source *src)
{
	pthread_mutex_lock(&src->drain_lock);
	src->drain(src);
	pthread_mutex_unlock(&src->drain_lock);
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
 * fab_progress_thread -- drain every registered CQ and EQ, then sleep until
 * one of their wait fds (or the wake fd) fires; fi_trywait() tells when
 * sleeping is safe.  Draining drives the libfabric provider's progress, so
 * one-sided operations against this peer complete while the application sleeps.
 */
static void *fab_progress_thread(void *arg)
{
	struct fab_peer *p = arg;
	struct fab_progress *pr = &p->prog;
	/* a name for ps, top, gdb (at most 15 characters); failing to set it is harmless */
	(void)pthread_setname_np(pthread_self(), FAB_PROGRESS_NAME);
	struct fab_source **snap = NULL;
	struct fid **fids = NULL;
	struct pollfd *pfds = NULL;
	size_t cap = 0;
	int eagain = 0;
	bool warned = false;

	for (;;) {
		pthread_mutex_lock(&pr->lock);
		if (pr->stop) {
			pthread_mutex_unlock(&pr->lock);
			break;
		}
		size_t n = 0;
		for (struct fab_source *s = pr->sources; s; s = s->next)
			n++;
		if (n + 1 > cap) {
			size_t ncap = (n + 1) * 2;
			struct fab_source **ns = realloc(snap, ncap * sizeof(*ns));
			if (ns)
				snap = ns;
			struct fid **nf = realloc(fids, ncap * sizeof(*nf));
			if (nf)
				fids = nf;
			struct pollfd *np = realloc(pfds, ncap * sizeof(*np));
			if (np)
				pfds = np;
			if (!ns || !nf || !np) {
				pthread_mutex_unlock(&pr->lock);
				FAB_LOG_ERROR("progress thread: out of memory, retrying");
				usleep(1000);
				continue;
			}
			cap = ncap;
		}
		n = 0;
		for (struct fab_source *s = pr->sources; s; s = s->next)
			snap[n++] = s;
		pr->seen_gen = pr->gen;
		pthread_cond_broadcast(&pr->cond);
		pthread_mutex_unlock(&pr->lock);

		int timeout = 1000; /* a safety net; every change kicks the thread */
		bool nofd = false, parked = false, briefly = false;
		uint64_t now = fab_now_ns();
		for (size_t i = 0; i < n; i++) {
			struct fab_source *s = snap[i];
			/* a parked source the user still drains needs nothing from us */
			if (!atomic_load(&s->parked) ||
			    atomic_load_explicit(&s->user_drains, memory_order_acquire) ==
				    s->seen_drains)
				fab_source_drain(s);
			uint64_t dl = atomic_load(&s->deadline_ns);
			if (dl != 0) {
				if (dl <= now) {
					atomic_store(&s->deadline_ns, 0);
					if (s->expire)
						s->expire(s);
				} else {
					uint64_t ms = (dl - now) / 1000000 + 1;
					if (ms < (uint64_t)timeout)
						timeout = (int)ms;
				}
			}
			if (s->fd < 0)
				nofd = true;
			bool b;
			if (fab_source_park(s, &b)) {
				parked = true;
				briefly |= b;
			}
		}
		if (nofd && timeout > 1)
			timeout = 1;
		if (parked) {
			/* the user keeps polling: look less often (but see briefly) */
			if (briefly)
				pr->park_ms = FAB_PARK_MS;
			if (timeout > pr->park_ms)
				timeout = pr->park_ms;
			if (!briefly && pr->park_ms < FAB_PARK_MAX_MS)
				pr->park_ms *= 2;
		} else {
			pr->park_ms = FAB_PARK_MS;
		}

		size_t nf = 0;
		for (size_t i = 0; i < n; i++)
			if (snap[i]->fd >= 0 && !atomic_load(&snap[i]->parked))
				fids[nf++] = snap[i]->fid;
		int ret = nf ? fi_trywait(p->fabric, fids, (int)nf) : 0;
		if (ret == -FI_EAGAIN) {
			/* something arrived meanwhile: drain again, but never spin */
			if (++eagain < 4)
				continue;
			timeout = 1;
		} else {
			eagain = 0;
			if (ret != 0) {
				if (!warned)
					FAB_LOG_WARNING("fi_trywait: %s; polling every 5 ms",
							fi_strerror(-ret));
				warned = true;
				if (timeout > 5)
					timeout = 5;
			}
		}
		size_t m = 0;
		pfds[m].fd = pr->wake_fd;
		pfds[m].events = POLLIN;
		pfds[m++].revents = 0;
		for (size_t i = 0; i < n; i++) {
			if (snap[i]->fd < 0 || atomic_load(&snap[i]->parked))
				continue;
			pfds[m].fd = snap[i]->fd;
			pfds[m].events = POLLIN;
			pfds[m++].revents = 0;
		}
		int r = poll(pfds, m, timeout);
		if (r > 0 && (pfds[0].revents & POLLIN)) {
			uint64_t v;
			if (read(pr->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd read");
		}
	}
	free(snap);
	free(fids);
	free(pfds);
	return NULL;
}

/* fab_progress_start -- start the progress thread of a peer */
static int fab_progress_start(struct fab_peer *p)
{
	struct fab_progress *pr = &p->prog;
	pr->wake_fd = fab_eventfd(EFD_NONBLOCK | EFD_CLOEXEC);
	if (pr->wake_fd < 0) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd()");
		return RPMA_E_PROVIDER;
	}
	pthread_mutex_init(&pr->lock, NULL);
	pthread_cond_init(&pr->cond, NULL);
	pr->sources = NULL;
	pr->gen = pr->seen_gen = 0;
	pr->stop = false;
	pr->park_ms = FAB_PARK_MS;
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
		close(pr->wake_fd);
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/* fab_progress_stop -- stop and join the progress thread */
static void fab_progress_stop(struct fab_peer *p)
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
	close(pr->wake_fd);
}

/* ------------------------------------------------------------------ keys */

/*
 * fab_peer_new_key -- a key for a region, drawn from getrandom(): 31 random
 * bits (the top bit is FAB_KEY_PMEM, set by the caller), never below
 * FAB_KEY_MIN, so that neither small integers nor the keys of a counter are
 * ever right.  A key the domain has already is refused by libfabric
 * (-FI_ENOKEY) and the caller draws again.
 */
int fab_peer_new_key(uint32_t *key)
{
	uint32_t k;
	do {
		ssize_t n;
		do {
			n = getrandom(&k, sizeof(k), 0);
		} while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(k)) {
			RPMA_LOG_ERROR_WITH_ERRNO(n < 0 ? errno : EIO,
						  "fabric: getrandom() for a memory key");
			return RPMA_E_PROVIDER;
		}
		k &= ~FAB_KEY_PMEM;
	} while (k < FAB_KEY_MIN);
	*key = k;
	return 0;
}

/*
 * fab_peer_reg -- register memory in the peer's domain, honouring the
 * mr_mode; pmem: the region may be flushed to persistence, which our own
 * keys tell the initiator by FAB_KEY_PMEM (fabric.h)
 */
int fab_peer_reg(struct fab_peer *peer, void *ptr, size_t size, uint64_t access, bool pmem,
		 struct fid_mr **mr, void **desc, uint64_t *key)
{
	int ret = 0;
	pmem = pmem && peer->has_commit; /* only then does the key bit matter */
	uint64_t flags = pmem ? FI_RMA_PMEM : 0;
	for (int attempt = 0; attempt < 8; attempt++) {
		uint64_t req_key = 0;
		if (!peer->prov_keys) {
			uint32_t k;
			ret = fab_peer_new_key(&k);
			if (ret)
				return ret;
			req_key = k | (pmem ? FAB_KEY_PMEM : 0);
		}
		ret = fi_mr_reg(peer->domain, ptr, size, access, 0, req_key, flags, mr, NULL);
		if (ret == -FI_EBADFLAGS && flags) {
			flags = 0; /* the provider does not take the hint: commit works without it */
			attempt--;
			continue;
		}
		if (ret != -FI_ENOKEY)
			break;
		FAB_LOG_DEBUG("fi_mr_reg(): the key is taken, drawing another one");
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_mr_reg()");
		return fab_err(ret);
	}
	uint64_t k = fi_mr_key(*mr);
	if (k == FI_KEY_NOTAVAIL) {
		FAB_LOG_ERROR("fi_mr_key(): the key needs FI_MR_RAW, which is not supported");
		fi_close(&(*mr)->fid);
		*mr = NULL;
		return RPMA_E_NOSUPP;
	}
	*desc = fi_mr_desc(*mr);
	*key = k;
	return 0;
}

/* ------------------------------------------------------------------ peer */

/* fab_hints -- hints for the peer's domain on the device, with extra caps */
static struct fi_info *fab_hints(const struct fab_dev *d, uint64_t extra_caps)
{
	struct fi_info *h = fi_allocinfo();
	if (h == NULL)
		return NULL;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA | extra_caps;
	/* FI_CONTEXT is not offered: the user's op_context goes to libfabric as it is */
	h->mode = FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->fabric_attr->prov_name = strdup(d->prov_name);
	h->fabric_attr->name = strdup(d->fabric_name);
	h->domain_attr->name = strdup(d->domain_name);
	if (!h->fabric_attr->prov_name || !h->fabric_attr->name || !h->domain_attr->name) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

/* fab_peer_init -- open the fabric and the domain; find out what they can do */
int fab_peer_init(struct rpma_peer *peer, void *dev, uint64_t *caps)
{
	struct fab_peer *p = fab_peer(peer);
	struct fab_dev *d = dev;
	/* the optional capabilities, most wanted first (FI_FENCE orders the emulated atomic write) */
	static const uint64_t extras[] = {
		FI_ATOMIC | FI_RMA_PMEM | FI_FENCE,
		FI_ATOMIC | FI_RMA_PMEM,
		FI_RMA_PMEM | FI_FENCE,
		FI_RMA_PMEM,
		FI_ATOMIC | FI_FENCE,
		FI_ATOMIC,
		FI_FENCE,
		0,
	};
	struct fi_info *list = NULL, *fi = NULL;
	int ret = 0;

	for (size_t i = 0; i < sizeof(extras) / sizeof(extras[0]); i++) {
		struct fi_info *h = fab_hints(d, extras[i]);
		if (h == NULL) {
			FAB_LOG_ERROR("out of memory");
			return RPMA_E_NOMEM;
		}
		ret = fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &list);
		fi_freeinfo(h);
		if (ret == 0)
			break;
	}
	if (ret) {
		FAB_LOG_FI(ret, "fi_getinfo()");
		return RPMA_E_PROVIDER;
	}
	for (fi = list; fi && fi->ep_attr->type != FI_EP_MSG; fi = fi->next)
		;
	if (fi == NULL) {
		fi_freeinfo(list);
		FAB_LOG_ERROR("fi_getinfo(): no FI_EP_MSG entry");
		return RPMA_E_PROVIDER;
	}
	p->info = fi_dupinfo(fi);
	fi_freeinfo(list);
	if (p->info == NULL) {
		FAB_LOG_ERROR("fi_dupinfo() failed");
		return RPMA_E_NOMEM;
	}
	/* every op says what it wants: default op_flags would apply to all (libfabric.md 11) */
	p->info->tx_attr->op_flags = 0;
	p->info->rx_attr->op_flags = 0;

	/*
	 * An mr_mode of exactly 1 is the legacy FI_MR_BASIC (virtual addresses,
	 * provider keys); libfabric 2.x deprecates the name, the value stays.
	 */
	uint64_t mm = p->info->domain_attr->mr_mode;
	p->mr_mode = mm;
	p->va_addressing = (mm == 1) || (mm & FI_MR_VIRT_ADDR);
	p->prov_keys = (mm == 1) || (mm & FI_MR_PROV_KEY);
	p->rx_cq_data = (p->info->mode & FI_RX_CQ_DATA) != 0;
	/* remote CQ data that takes no receive: carry the value in a send (fabric.h) */
	p->imm_emulated = !p->rx_cq_data && p->info->domain_attr->cq_data_size >= 8 &&
			  (p->info->tx_attr->msg_order & FI_ORDER_SAW);
	p->has_fence = (p->info->caps & FI_FENCE) != 0;
	p->inject_size = fab_inject_size(p->info->tx_attr->inject_size);
	p->in_order = (p->info->tx_attr->msg_order & FI_ORDER_WAR) ||
		      p->info->ep_attr->protocol == FI_PROTO_SOCK_TCP;
	p->refused_sync = strcmp(d->prov_name, "sockets") == 0;
	p->verbs = strcmp(d->prov_name, "verbs") == 0;
	p->reject_ep_ok = strcmp(d->prov_name, "tcp") != 0 && strcmp(d->prov_name, "net") != 0 &&
			  strcmp(d->prov_name, "sockets") != 0;
	atomic_init(&p->refused_reqs, 0);
	atomic_init(&p->access_errors, 0);

	/* FI_COMMIT_COMPLETE must be accepted as a completion level too */
	/* (no memory for the hints: fail rather than open a peer with fewer capabilities) */
	if (p->info->caps & FI_RMA_PMEM) {
		struct fi_info *h = fab_hints(d, FI_RMA_PMEM);
		if (h == NULL)
			goto err_nomem;
		h->tx_attr->op_flags = FI_COMMIT_COMPLETE;
		struct fi_info *l2 = NULL;
		if (fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &l2) == 0) {
			p->has_commit = true;
			fi_freeinfo(l2);
		}
		fi_freeinfo(h);
	}

	/* FI_DELIVERY_COMPLETE lets a write fail when the target refuses it */
	{
		struct fi_info *h = fab_hints(d, p->info->caps & (FI_RMA_PMEM | FI_ATOMIC));
		if (h == NULL)
			goto err_nomem;
		h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
		struct fi_info *l2 = NULL;
		if (fi_getinfo(FAB_FI_VERSION, NULL, NULL, 0, h, &l2) == 0) {
			p->has_delivery = true;
			fi_freeinfo(l2);
		}
		fi_freeinfo(h);
	}

	ret = fi_fabric(p->info->fabric_attr, &p->fabric, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_fabric()");
		ret = fab_err(ret);
		goto err_info;
	}
	ret = fi_domain(p->fabric, p->info, &p->domain, NULL);
	if (ret) {
		FAB_LOG_FI(ret, "fi_domain()");
		ret = fab_err(ret);
		goto err_fabric;
	}
	if (p->info->caps & FI_ATOMIC) {
		struct fi_atomic_attr aattr;
		p->has_atomic =
			fi_query_atomic(p->domain, FI_UINT64, FI_ATOMIC_WRITE, &aattr, 0) == 0;
	}
	ret = fab_progress_start(p);
	if (ret)
		goto err_domain;

	*caps = 0;
	if (p->has_atomic)
		*caps |= RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE;
	if (p->rx_cq_data || p->imm_emulated)
		*caps |= RPMA_PROV_CAP_IMM_CONSUMES_RECV;
	FAB_LOG_INFO("peer on %s/%s/%s: mr_mode 0x%lx (%s addressing, %s keys), atomic %s, "
		     "persistent flush %s, write with immediate data %s",
		     d->prov_name, d->fabric_name, d->domain_name, (unsigned long)mm,
		     p->va_addressing ? "virtual" : "offset", p->prov_keys ? "provider" : "our",
		     p->has_atomic ? "native" : "emulated",
		     p->has_commit ? "FI_COMMIT_COMPLETE" : "not supported",
		     p->rx_cq_data     ? "native (takes a receive)"
		     : p->imm_emulated ? "write + send (takes a receive)"
				       : "native (takes no receive)");
	if (!p->rx_cq_data && !p->imm_emulated)
		FAB_LOG_NOTICE("a write with immediate data takes no receive on this transport");
	if (!p->has_atomic && !p->in_order && !p->has_fence)
		FAB_LOG_NOTICE("atomic write is not ordered after flushes on this transport");
	return 0;

err_domain:
	fi_close(&p->domain->fid);
err_fabric:
	fi_close(&p->fabric->fid);
err_info:
	fi_freeinfo(p->info);
	p->info = NULL;
	return ret;
err_nomem:
	FAB_LOG_ERROR("out of memory");
	ret = RPMA_E_NOMEM;
	goto err_info;
}

/* fab_peer_fini -- stop the progress thread, close the domain and the fabric */
int fab_peer_fini(struct rpma_peer *peer)
{
	struct fab_peer *p = fab_peer(peer);
	int ret = 0;
	uint64_t refused = atomic_load(&p->refused_reqs), failed = atomic_load(&p->access_errors);
	if (refused || failed)
		FAB_LOG_NOTICE("peer closed: %llu connection requests refused for their envelope, "
			       "%llu failed operations",
			       (unsigned long long)refused, (unsigned long long)failed);
	fab_progress_stop(p);
	int r = fi_close(&p->domain->fid);
	if (r) {
		FAB_LOG_FI(r, "fi_close(domain)");
		ret = RPMA_E_PROVIDER;
	}
	r = fi_close(&p->fabric->fid);
	if (r && !ret) {
		FAB_LOG_FI(r, "fi_close(fabric)");
		ret = RPMA_E_PROVIDER;
	}
	fi_freeinfo(p->info);
	p->info = NULL;
	return ret;
}
