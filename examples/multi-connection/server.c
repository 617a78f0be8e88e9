/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- multi-connection example: one thread serves many clients at
 * once, driven by epoll over the endpoint's, the connections' event and the
 * CQs' file descriptors
 *
 * usage: server <addr> <port> [<clients>]
 *
 * For every client: accept its connection request (its region's descriptor
 * is the request's private data), on "established" read the client's name
 * from its memory, on that read's completion write a greeting into the
 * client's memory and send a short "done" message, and on "closed" release
 * everything.  The server exits after <clients> (default 3) clients have
 * been served.  All descriptors are non-blocking: the library then answers
 * RPMA_E_NO_EVENT / RPMA_E_NO_COMPLETION instead of waiting.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../common/common.h"
#include "proto.h"

#define MAX_CLIENTS 8
#define SLOT_SIZE   CLIENT_REGION_SIZE

enum source_kind { SRC_EP, SRC_EVENT, SRC_CQ };

struct client;

/* what an epoll event points at */
struct source {
	enum source_kind kind;
	struct client *client;
};

struct client {
	bool used;
	unsigned index; /* the client's slot in the local buffer */
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_remote *region;
	int event_fd, cq_fd;
	struct source ev_src, cq_src;
	bool greeted; /* the greeting and "done" went out successfully */
};

struct server {
	int epfd;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr; /* MAX_CLIENTS slots laid out like a client's region */
	char *buf;
	struct client clients[MAX_CLIENTS];
	unsigned served, failed, wanted;
};

/* nonblock -- make fd non-blocking */
static int nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		ex_msg("fcntl: %s", strerror(errno));
		return EX_E_FAIL;
	}
	return 0;
}

/* watch -- add fd to the epoll set */
static int watch(int epfd, int fd, struct source *src)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = src};
	if (nonblock(fd))
		return EX_E_FAIL;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
		ex_msg("epoll_ctl: %s", strerror(errno));
		return EX_E_FAIL;
	}
	return 0;
}

/* client_release -- stop watching a client and release its connection */
static void client_release(struct server *s, struct client *c)
{
	if (c->event_fd >= 0)
		(void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->event_fd, NULL);
	if (c->cq_fd >= 0)
		(void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->cq_fd, NULL);
	if (c->conn) {
		(void)rpma_conn_disconnect(c->conn);
		(void)rpma_conn_delete(&c->conn);
	}
	if (c->region)
		(void)rpma_mr_remote_delete(&c->region);
	c->used = false;
}

/* client_finish -- the client has gone: count it and free its slot */
static void client_finish(struct server *s, struct client *c, bool ok)
{
	ok = ok && c->greeted;
	printf("client %u %s\n", c->index, ok ? "served" : "FAILED");
	client_release(s, c);
	s->served++;
	if (!ok)
		s->failed++;
}

/* on_conn_req -- accept every waiting connection request */
static int on_conn_req(struct server *s)
{
	for (;;) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn_private_data pdata;
		int ret = rpma_ep_next_conn_req(s->ep, NULL, &req);
		if (ret == RPMA_E_NO_EVENT)
			return 0;
		if (ret) {
			ex_fail("rpma_ep_next_conn_req", ret);
			return ret;
		}
		struct client *c = NULL;
		for (unsigned i = 0; i < MAX_CLIENTS && c == NULL; i++)
			if (!s->clients[i].used)
				c = &s->clients[i];
		if (c == NULL) {
			/* deleting an incoming request rejects it */
			ex_msg("no room for another client: rejecting it");
			(void)rpma_conn_req_delete(&req);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->index = (unsigned)(c - s->clients);
		c->event_fd = c->cq_fd = -1;
		c->ev_src = (struct source){SRC_EVENT, c};
		c->cq_src = (struct source){SRC_CQ, c};

		ret = rpma_conn_req_get_private_data(req, &pdata);
		if (ret == 0)
			ret = ex_pdata_unpack(&pdata, &c->region, NULL);
		if (ret) {
			(void)rpma_conn_req_delete(&req);
			continue; /* a client that sent garbage does not stop the server */
		}
		c->used = true;
		ret = rpma_conn_req_connect(&req, NULL, &c->conn);
		if (ret == 0)
			ret = rpma_conn_get_event_fd(c->conn, &c->event_fd);
		if (ret == 0)
			ret = rpma_conn_get_cq(c->conn, &c->cq);
		if (ret == 0)
			ret = rpma_cq_get_fd(c->cq, &c->cq_fd);
		if (ret) {
			ex_fail("accepting a client", ret);
			client_release(s, c);
			return ret;
		}
		if (watch(s->epfd, c->event_fd, &c->ev_src) ||
		    watch(s->epfd, c->cq_fd, &c->cq_src)) {
			client_release(s, c);
			return EX_E_FAIL;
		}
		printf("client %u: connection accepted\n", c->index);
	}
}

/* on_event -- connection events of one client */
static int on_event(struct server *s, struct client *c)
{
	for (;;) {
		enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
		int ret = rpma_conn_next_event(c->conn, &event);
		if (ret == RPMA_E_NO_EVENT)
			return 0;
		if (ret) {
			ex_fail("rpma_conn_next_event", ret);
			client_finish(s, c, false);
			return 0;
		}
		if (event == RPMA_CONN_ESTABLISHED) {
			/* step 1: read the client's name */
			size_t off = c->index * SLOT_SIZE;
			ret = rpma_read(c->conn, s->mr, off + NAME_OFFSET, c->region, NAME_OFFSET,
					NAME_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL);
			if (ret) {
				ex_fail("rpma_read", ret);
				client_finish(s, c, false);
				return 0;
			}
			continue;
		}
		/* closed, lost or anything else: this client is over */
		client_finish(s, c, event == RPMA_CONN_CLOSED);
		return 0;
	}
}

/* greet -- step 2: write the greeting into the client's memory, then send "done" */
static int greet(struct server *s, struct client *c)
{
	char *slot = s->buf + c->index * SLOT_SIZE;
	char name[NAME_SIZE];
	memcpy(name, slot + NAME_OFFSET, NAME_SIZE);
	if (memchr(name, '\0', NAME_SIZE) == NULL || strncmp(name, "client-", 7) != 0) {
		ex_msg("client %u: its name is not a NUL-terminated \"client-...\"", c->index);
		return EX_E_FAIL;
	}
	printf("client %u is %s\n", c->index, name);
	memset(slot + GREETING_OFFSET, 0, GREETING_SIZE);
	snprintf(slot + GREETING_OFFSET, GREETING_SIZE, GREETING_FMT, name);
	uint32_t done = DONE_MAGIC;
	memcpy(slot + MSG_OFFSET, &done, sizeof(done));

	size_t off = c->index * SLOT_SIZE;
	int ret = rpma_write(c->conn, c->region, GREETING_OFFSET, s->mr, off + GREETING_OFFSET,
			     GREETING_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret == 0)
		ret = rpma_send(c->conn, s->mr, off + MSG_OFFSET, sizeof(done),
				RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret)
		ex_fail("rpma_write/rpma_send", ret);
	return ret;
}

/* on_cq -- completions of one client */
static int on_cq(struct server *s, struct client *c)
{
	/* acknowledge the notification and re-arm; non-blocking: may find nothing */
	int ret = rpma_cq_wait(c->cq);
	if (ret && ret != RPMA_E_NO_COMPLETION) {
		ex_fail("rpma_cq_wait", ret);
		client_finish(s, c, false);
		return 0;
	}
	struct ibv_wc wc;
	while ((ret = rpma_cq_get_wc(c->cq, 1, &wc, NULL)) == 0) {
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ)
			ret = greet(s, c);
		else if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND)
			c->greeted = true; /* now the client may hang up */
		else
			ret = ex_check_wc(&wc, IBV_WC_SEND, NULL);
		if (ret) {
			client_finish(s, c, false);
			return 0;
		}
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		ex_fail("rpma_cq_get_wc", ret);
		client_finish(s, c, false);
	}
	return 0;
}

/* main -- the event loop */
int main(int argc, char *argv[])
{
	struct rpma_peer *peer = NULL;
	struct ex_mem mem = {0};
	struct server s;
	struct source ep_src = {SRC_EP, NULL};
	int ep_fd = -1;
	int ret;

	memset(&s, 0, sizeof(s));
	s.epfd = -1;
	s.wanted = 3;
	ex_set_prog(argv[0]);
	EX_CHECK(ex_usage(argc, 3, 4, "<addr> <port> [<clients>]"));
	if (argc > 3)
		EX_CHECK(ex_parse_count(argv[3], "clients", &s.wanted));
	EX_CHECK(ex_mem_open(NULL, MAX_CLIENTS * SLOT_SIZE, &mem));
	s.buf = mem.ptr;
	EX_CHECK(ex_peer_open(argv[1], true, &peer));
	EX_TRY(rpma_mr_reg(peer, mem.ptr, mem.size,
			   RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND,
			   &s.mr));

	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s.epfd < 0) {
		ex_msg("epoll_create1: %s", strerror(errno));
		ret = EX_E_FAIL;
		goto out;
	}
	EX_CHECK(ex_listen(peer, argv[1], argv[2], &s.ep));
	EX_TRY(rpma_ep_get_fd(s.ep, &ep_fd));
	EX_CHECK(watch(s.epfd, ep_fd, &ep_src));

	while (s.served < s.wanted) {
		struct epoll_event events[8];
		int n = epoll_wait(s.epfd, events, 8, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ex_msg("epoll_wait: %s", strerror(errno));
			ret = EX_E_FAIL;
			goto out;
		}
		for (int i = 0; i < n; i++) {
			struct source *src = events[i].data.ptr;
			/* a client finished earlier in this batch: its events are stale */
			if (src->kind != SRC_EP && !src->client->used)
				continue;
			switch (src->kind) {
			case SRC_EP:
				EX_CHECK(on_conn_req(&s));
				break;
			case SRC_EVENT:
				EX_CHECK(on_event(&s, src->client));
				break;
			case SRC_CQ:
				EX_CHECK(on_cq(&s, src->client));
				break;
			}
		}
	}
	if (s.failed) {
		ex_msg("%u of %u clients failed", s.failed, s.served);
		ret = EX_E_FAIL;
		goto out;
	}
	printf("verified: served %u clients\n", s.served);

out:
	for (unsigned i = 0; i < MAX_CLIENTS; i++)
		if (s.clients[i].used)
			client_release(&s, &s.clients[i]);
	if (s.ep)
		(void)rpma_ep_shutdown(&s.ep);
	if (s.epfd >= 0)
		close(s.epfd);
	if (s.mr)
		(void)rpma_mr_dereg(&s.mr);
	if (peer)
		(void)rpma_peer_delete(&peer);
	ex_mem_close(&mem);
	return ret ? 1 : 0;
}
