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
