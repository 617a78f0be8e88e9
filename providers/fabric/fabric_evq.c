/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_evq.c -- the software event queues (connection requests and events) and their eventfds */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric.h"

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

/*
 * fab_eventfd_take -- take one count of an eventfd (EFD_SEMAPHORE), blocking
 * unless it is non-blocking: 0, `empty` when a non-blocking one holds
 * nothing, RPMA_E_PROVIDER on another failure (logged, what names the fd)
 */
int fab_eventfd_take(int fd, int empty, const char *what)
{
	uint64_t v;
	for (;;) {
		ssize_t n = read(fd, &v, sizeof(v));
		if (n == sizeof(v))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return empty;
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: read(%s)", what);
		return RPMA_E_PROVIDER;
	}
}

/*
 * fab_evq_make_fd -- the queue's eventfd, counting the events queued now
 * (under the queue's lock); RPMA_E_PROVIDER when it cannot be made
 */
static int fab_evq_make_fd(struct fab_evq *q)
{
	int fd = fab_eventfd(EFD_SEMAPHORE | EFD_CLOEXEC);
	if (fd < 0) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd()");
		return RPMA_E_PROVIDER;
	}
	if (q->count > 0 && write(fd, &q->count, sizeof(q->count)) != sizeof(q->count)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
		close(fd);
		return RPMA_E_PROVIDER;
	}
	atomic_store(&q->efd, fd);
	/* a pop sleeping on the condition variable goes over to the fd */
	pthread_cond_broadcast(&q->cond);
	return 0;
}

/* fab_evq_init -- an empty software event queue; its eventfd at once unless lazy */
int fab_evq_init(struct fab_evq *q, bool lazy)
{
	q->head = q->tail = NULL;
	q->count = 0;
	atomic_init(&q->efd, -1);
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	if (!lazy) {
		int ret = fab_evq_make_fd(q);
		if (ret) {
			pthread_cond_destroy(&q->cond);
			pthread_mutex_destroy(&q->lock);
			return ret;
		}
	}
	q->made = true;
	return 0;
}

/* fab_evq_get_fd -- the queue's eventfd, made now if need be */
int fab_evq_get_fd(struct fab_evq *q, int *fd)
{
	int ret = 0;
	pthread_mutex_lock(&q->lock);
	if (atomic_load(&q->efd) < 0)
		ret = fab_evq_make_fd(q);
	if (ret == 0)
		*fd = atomic_load(&q->efd);
	pthread_mutex_unlock(&q->lock);
	return ret;
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

/*
 * fab_evq_pop_req -- the next event of a listener's queue, which must be a
 * connection request (RPMA_E_INVAL, logged, when it is not)
 */
int fab_evq_pop_req(struct fab_evq *q, struct fab_event **evp)
{
	int ret = fab_evq_pop(q, evp);
	if (ret)
		return ret;
	if ((*evp)->kind != FAB_EV_CONNREQ) {
		fab_event_free(*evp);
		*evp = NULL;
		FAB_LOG_ERROR("rpma_ep_next_conn_req: the event is not a connection request");
		return RPMA_E_INVAL;
	}
	return 0;
}

/* fab_event_take_pdata -- hand a request's private data to pdata, release the event */
void fab_event_take_pdata(struct fab_event *ev, struct rpma_conn_private_data *pdata)
{
	pdata->ptr = ev->data;
	pdata->len = (uint8_t)(ev->len > FAB_PDATA_API_MAX ? FAB_PDATA_API_MAX : ev->len);
	if (ev->len == 0) {
		free(ev->data);
		pdata->ptr = NULL;
	}
	ev->data = NULL;
	fab_event_free(ev);
}

/* fab_evq_fini -- release a queue and every event still in it */
void fab_evq_fini(struct fab_evq *q)
{
	if (!q->made)
		return;
	struct fab_event *ev = q->head;
	while (ev) {
		struct fab_event *next = ev->next;
		fab_event_free(ev);
		ev = next;
	}
	q->head = q->tail = NULL;
	int fd = atomic_exchange(&q->efd, -1);
	if (fd >= 0)
		close(fd);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	q->made = false;
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
	q->count++;
	/* under the lock: the fd, once made, counts every queued event once */
	int fd = atomic_load(&q->efd);
	uint64_t one = 1;
	if (fd < 0)
		pthread_cond_broadcast(&q->cond);
	else if (write(fd, &one, sizeof(one)) != sizeof(one))
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "fabric: eventfd write");
	pthread_mutex_unlock(&q->lock);
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

/* fab_evq_take -- unlink the oldest event (under the queue's lock; NULL: none) */
static struct fab_event *fab_evq_take(struct fab_evq *q)
{
	struct fab_event *ev = q->head;
	if (ev) {
		q->head = ev->next;
		if (q->head == NULL)
			q->tail = NULL;
		ev->next = NULL;
		q->count--;
	}
	return ev;
}

/*
 * fab_evq_pop -- take the oldest event; blocks unless the user made the fd
 * non-blocking (then RPMA_E_NO_EVENT when nothing waits).  Without an fd
 * (nobody asked for it) the wait is on the condition variable.
 */
int fab_evq_pop(struct fab_evq *q, struct fab_event **evp)
{
	pthread_mutex_lock(&q->lock);
	while (atomic_load(&q->efd) < 0 && q->head == NULL)
		pthread_cond_wait(&q->cond, &q->lock);
	int fd = atomic_load(&q->efd);
	if (fd < 0) {
		*evp = fab_evq_take(q);
		pthread_mutex_unlock(&q->lock);
		return 0;
	}
	pthread_mutex_unlock(&q->lock);
	int ret = fab_eventfd_take(fd, RPMA_E_NO_EVENT, "event queue");
	if (ret)
		return ret;
	pthread_mutex_lock(&q->lock);
	struct fab_event *ev = fab_evq_take(q);
	pthread_mutex_unlock(&q->lock);
	if (ev == NULL) {
		FAB_LOG_ERROR("event queue signalled but empty");
		return RPMA_E_UNKNOWN;
	}
	*evp = ev;
	return 0;
}
