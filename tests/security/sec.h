/* SPDX-License-Identifier: BSD-3-Clause */
/* sec.h -- helpers of the attack tests (plain programs: exit 0 passed, 1 failed, 77 skipped) */

#ifndef RPMA_SEC_H
#define RPMA_SEC_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "librpma.h"

#define SEC_SKIP 77

/* sec_fail -- report a broken expectation and end the program as failed */
static inline void sec_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void sec_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stdout, "FAIL: ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	fflush(stdout);
	_exit(1);
}

#define SEC_CHECK(cond, ...)                   \
	do {                                   \
		if (!(cond))                   \
			sec_fail(__VA_ARGS__); \
	} while (0)

/* sec_now_ms -- a monotonic clock in ms */
static inline long long sec_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* sec_ip -- the testing address (RPMA_TESTING_IP, default 127.0.0.1) */
static inline const char *sec_ip(void)
{
	const char *ip = getenv("RPMA_TESTING_IP");
	return (ip && *ip) ? ip : "127.0.0.1";
}

/* sec_fd_ready -- wait up to ms for fd to become readable */
static inline bool sec_fd_ready(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r == 1 && (p.revents & POLLIN);
}

/* sec_peer -- a peer on the testing address */
static inline struct rpma_peer *sec_peer(void)
{
	struct ibv_context *dev = NULL;
	struct rpma_peer *peer = NULL;
	int ret = rpma_utils_get_ibv_context(sec_ip(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &dev);
	SEC_CHECK(ret == 0, "rpma_utils_get_ibv_context(%s): %s", sec_ip(), rpma_err_2str(ret));
	ret = rpma_peer_new(dev, &peer);
	SEC_CHECK(ret == 0, "rpma_peer_new: %s", rpma_err_2str(ret));
	return peer;
}

/* sec_listen -- listen on a free port near one derived from the pid */
static inline struct rpma_ep *sec_listen(struct rpma_peer *peer, char port[8])
{
	struct rpma_ep *ep = NULL;
	unsigned base = 20000 + ((unsigned)getpid() * 17u) % 30000u;
	for (unsigned i = 0; i < 64; i++) {
		snprintf(port, 8, "%u", base + i * 11u);
		if (rpma_ep_listen(peer, sec_ip(), port, &ep) == 0)
			return ep;
	}
	sec_fail("no free port to listen on near %u", base);
}

/* sec_next_event -- the next connection event within ms (RPMA_CONN_UNDEFINED: none) */
static inline enum rpma_conn_event sec_next_event(struct rpma_conn *conn, int ms)
{
	int fd = -1;
	SEC_CHECK(rpma_conn_get_event_fd(conn, &fd) == 0, "rpma_conn_get_event_fd");
	if (!sec_fd_ready(fd, ms))
		return RPMA_CONN_UNDEFINED;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &ev);
	SEC_CHECK(ret == 0, "rpma_conn_next_event: %s", rpma_err_2str(ret));
	return ev;
}

/*
 * sec_quiet -- keep the library's expected errors off stderr unless
 * RPMA_LOG_LEVEL is set; ignore SIGPIPE (libfabric's sockets provider writes
 * to sockets the other side closed without MSG_NOSIGNAL, as a server must
 * expect anyway)
 */
static inline void sec_quiet(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (getenv("RPMA_LOG_LEVEL") == NULL)
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

#endif /* RPMA_SEC_H */
