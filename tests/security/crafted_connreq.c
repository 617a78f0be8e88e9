/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crafted_connreq.c -- attack: crafted connection requests on a plain TCP socket
 *
 * A server listens with rpma_ep_listen() and takes every request that
 * rpma_ep_next_conn_req() gives it: a real client (private data
 * "REAL-CLIENT") is accepted, anything else is counted as a crafted request
 * that reached the application, and refused.  From plain TCP sockets the test
 * sends, to the listening port:
 *
 * - libfabric tcp's connection request: the 32-byte struct ofi_ctrl_hdr
 *   (version 3, type 0 = connreq, seg_size = length of the private data in
 *   network order, conn_data 1), then garbage private data: 60 bytes of 0xff,
 *   none, 256 random bytes, random lengths 1..256, oversized (seg_size 4096
 *   with 4096 bytes; seg_size 65535 with 300 bytes), truncated header,
 *   truncated data, a half-open request held until the end, wrong version
 *   and type, look-alikes of the fabric provider's envelope (an unknown major
 *   version, an inconsistent length);
 * - libfabric sockets' connection request: struct sock_conn_hdr (type 0,
 *   port, cm_data_sz in network order), a 48-byte source address and 8 bytes
 *   of caps, then the same kinds of garbage;
 * - random bytes (64, 1024), a connection closed without a byte.
 *
 * Both layouts are libfabric's (prov/tcp xnet_cm.c / tcpx_conn_mgr.c,
 * prov/sockets sock_ep_msg.c, the same in 1.17 and 2.x).  After every group
 * a real client must still connect.  The run fails when one crafted request
 * reaches the application or a real client is not served.  SEC_ROUNDS
 * (default 10) repeats the random cases.
 *
 * libfabric's sockets provider (1.17) dies on a message whose type byte is
 * 1, 2 or 3 (it takes it for an answer or a shutdown of an endpoint that
 * does not exist; random bytes hit that soon, since every 8th byte of a
 * stream that is not a request is read as a type) and stops serving while a
 * peer holds a request half sent: under FI_PROVIDER=sockets the tcp header
 * (type byte 3) and the half-open requests are left out, and the random bytes
 * have bit 6 set (libfabric defects that no librpma provider can hide;
 * rpma_fabric(7)).  Exit 77 when nothing accepts
 * TCP connections on the listening port (the transport is not TCP based).
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "sec.h"

#define MAX_CONNS 16
#define MAX_HELD  8
#define WAIT_MS	  5000

/* ------------------------------------------------------------- the server */

struct server {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	char port[8];
	_Atomic bool stop;
	_Atomic unsigned real;	  /* real clients accepted */
	_Atomic unsigned crafted; /* other requests that reached the application */
	pthread_mutex_t lock;
	char last_crafted[128];
	pthread_t thread;
};

/* server_take_request -- accept a real client, count and refuse anything else */
static void server_take_request(struct server *s, struct rpma_conn **conns, int *nconns)
{
	struct rpma_conn_req *req = NULL;
	if (rpma_ep_next_conn_req(s->ep, NULL, &req) != 0)
		return;
	struct rpma_conn_private_data in = {0};
	(void)rpma_conn_req_get_private_data(req, &in);
	if (in.len == 11 && memcmp(in.ptr, "REAL-CLIENT", 11) == 0 && *nconns < MAX_CONNS) {
		struct rpma_conn_private_data out = {"SERVER-OK", 9};
		struct rpma_conn *conn = NULL;
		if (rpma_conn_req_connect(&req, &out, &conn) == 0) {
			atomic_fetch_add(&s->real, 1);
			conns[(*nconns)++] = conn;
		}
		return;
	}
	atomic_fetch_add(&s->crafted, 1);
	pthread_mutex_lock(&s->lock);
	int n = snprintf(s->last_crafted, sizeof(s->last_crafted), "%u bytes:", (unsigned)in.len);
	for (unsigned i = 0; i < in.len && i < 16 && n < 100; i++)
		n += snprintf(s->last_crafted + n, sizeof(s->last_crafted) - (size_t)n, " %02x",
			      ((const unsigned char *)in.ptr)[i]);
	pthread_mutex_unlock(&s->lock);
	(void)rpma_conn_req_delete(&req);
}

/* server_thread -- serve the endpoint and the connections' events */
static void *server_thread(void *arg)
{
	struct server *s = arg;
	struct rpma_conn *conns[MAX_CONNS];
	int nconns = 0, epfd = -1;
	SEC_CHECK(rpma_ep_get_fd(s->ep, &epfd) == 0, "rpma_ep_get_fd");
	while (!atomic_load(&s->stop)) {
		struct pollfd pfd[MAX_CONNS + 1];
		pfd[0] = (struct pollfd){.fd = epfd, .events = POLLIN};
		for (int i = 0; i < nconns; i++) {
			int fd = -1;
			(void)rpma_conn_get_event_fd(conns[i], &fd);
			pfd[i + 1] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
		if (poll(pfd, (nfds_t)nconns + 1, 50) <= 0)
			continue;
		int polled = nconns; /* a connection taken now was not polled */
		for (int i = polled - 1; i >= 0; i--) {
			if (!(pfd[i + 1].revents & POLLIN))
				continue;
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			if (rpma_conn_next_event(conns[i], &ev) != 0 || ev == RPMA_CONN_ESTABLISHED)
				continue;
			(void)rpma_conn_disconnect(conns[i]);
			(void)rpma_conn_delete(&conns[i]);
			conns[i] = conns[--nconns];
		}
		if (pfd[0].revents & POLLIN)
			server_take_request(s, conns, &nconns);
	}
	for (int i = 0; i < nconns; i++) {
		(void)rpma_conn_disconnect(conns[i]);
		(void)rpma_conn_delete(&conns[i]);
	}
	return NULL;
}

/* ------------------------------------------------------------ real clients */

/* real_client -- connect with the real client's private data; true when served */
static bool real_client(struct rpma_peer *peer, const char *port)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	if (rpma_conn_req_new(peer, sec_ip(), port, NULL, &req) != 0)
		return false;
	struct rpma_conn_private_data pd = {"REAL-CLIENT", 11};
	if (rpma_conn_req_connect(&req, &pd, &conn) != 0)
		return false;
	bool ok = sec_next_event(conn, WAIT_MS) == RPMA_CONN_ESTABLISHED;
	struct rpma_conn_private_data got = {0};
	if (ok)
		ok = rpma_conn_get_private_data(conn, &got) == 0 && got.len >= 9 &&
		     memcmp(got.ptr, "SERVER-OK", 9) == 0;
	(void)rpma_conn_disconnect(conn);
	(void)sec_next_event(conn, 1000);
	(void)rpma_conn_delete(&conn);
	return ok;
}

/* ---------------------------------------------------------- crafted bytes */

static struct sockaddr_in target;
static int held[MAX_HELD], nheld;
static bool is_sockets; /* the listener is libfabric's sockets provider (see above) */

enum send_mode { CLOSE_AFTER, HOLD_OPEN };

/*
 * send_raw -- a TCP connection to the listener that sends len bytes, waits
 * a little for the listener's answer and closes (or is held open)
 */
static void send_raw(const void *buf, size_t len, enum send_mode mode)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	SEC_CHECK(fd >= 0, "socket(): %s", strerror(errno));
	SEC_CHECK(connect(fd, (struct sockaddr *)&target, sizeof(target)) == 0,
		  "connect() to the listener: %s", strerror(errno));
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break; /* the listener closed it: fine */
		off += (size_t)n;
	}
	if (mode == HOLD_OPEN && nheld < MAX_HELD) {
		held[nheld++] = fd;
		return;
	}
	/* give the listener the time to read it before the connection goes */
	char c;
	if (sec_fd_ready(fd, 200))
		(void)recv(fd, &c, 1, MSG_DONTWAIT);
	close(fd);
}

/* rnd -- random bytes (not for keys: the inputs only need to vary) */
static void rnd(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(random() >> 7);
}

/* tcp_req -- libfabric tcp's connection request header, then plen bytes of data */
static size_t tcp_req(unsigned char *buf, uint8_t version, uint8_t type, uint16_t seg_size,
		      const void *data, size_t plen)
{
	memset(buf, 0, 32);
	buf[0] = version;
	buf[1] = type;
	buf[2] = (unsigned char)(seg_size >> 8); /* network order */
	buf[3] = (unsigned char)seg_size;
	uint64_t one = 1; /* conn_data: 1 in the sender's order (endianness check) */
	memcpy(buf + 24, &one, sizeof(one));
	if (plen)
		memcpy(buf + 32, data, plen);
	return 32 + plen;
}

/* sock_req -- libfabric sockets' connection request, then plen bytes of data */
static size_t sock_req(unsigned char *buf, uint16_t cm_data_sz, const void *data, size_t plen)
{
	memset(buf, 0, 64);
	buf[0] = 0; /* SOCK_CONN_REQ */
	buf[4] = (unsigned char)(12345 >> 8);
	buf[5] = (unsigned char)(12345 & 0xff);
	buf[6] = (unsigned char)(cm_data_sz >> 8);
	buf[7] = (unsigned char)cm_data_sz;
	struct sockaddr_in src = target;
	src.sin_port = htons(12345);
	memcpy(buf + 8, &src, sizeof(src)); /* union ofi_sock_ip: 48 bytes */
	/* caps (8 bytes at 56): 0, a subset of anything */
	if (plen)
		memcpy(buf + 64, data, plen);
	return 64 + plen;
}

/* ----------------------------------------------------------------- groups */

static unsigned char buf[70000], data[70000];

/* group_tcp -- libfabric tcp's header with garbage private data */
static void group_tcp(int rounds)
{
	size_t n;
	memset(data, 0xff, 60);
	send_raw(buf, tcp_req(buf, 3, 0, 60, data, 60), CLOSE_AFTER);
	send_raw(buf, tcp_req(buf, 3, 0, 0, NULL, 0), CLOSE_AFTER);
	rnd(data, 256);
	send_raw(buf, tcp_req(buf, 3, 0, 256, data, 256), CLOSE_AFTER);
	for (int r = 0; r < rounds; r++) {
		size_t len = 1 + (size_t)random() % 256;
		rnd(data, len);
		send_raw(buf, tcp_req(buf, 3, 0, (uint16_t)len, data, len), CLOSE_AFTER);
	}
	/* oversized */
	memset(data, 0xee, 4096);
	send_raw(buf, tcp_req(buf, 3, 0, 4096, data, 4096), CLOSE_AFTER);
	rnd(data, 300);
	send_raw(buf, tcp_req(buf, 3, 0, 65535, data, 300), CLOSE_AFTER);
	/* truncated header, truncated data */
	n = tcp_req(buf, 3, 0, 60, data, 60);
	send_raw(buf, 10, CLOSE_AFTER);
	n = tcp_req(buf, 3, 0, 200, data, 50);
	send_raw(buf, n, CLOSE_AFTER);
	/* wrong version, wrong types (connresp, nack) */
	send_raw(buf, tcp_req(buf, 2, 0, 60, data, 60), CLOSE_AFTER);
	send_raw(buf, tcp_req(buf, 3, 1, 60, data, 60), CLOSE_AFTER);
	send_raw(buf, tcp_req(buf, 3, 6, 60, data, 60), CLOSE_AFTER);
	/* look-alikes of the fabric provider's envelope (magic "rpm\xfa") */
	memcpy(data, "rpm\xfa\xf0\x00", 6); /* major version 15 */
	send_raw(buf, tcp_req(buf, 3, 0, 6, data, 6), CLOSE_AFTER);
	memcpy(data, "rpm\xfa\x10\xc8", 6); /* 200 bytes announced, 4 sent */
	send_raw(buf, tcp_req(buf, 3, 0, 10, data, 10), CLOSE_AFTER);
	send_raw(buf, tcp_req(buf, 3, 0, 3, data, 3), CLOSE_AFTER); /* magic cut short */
	/* half-open: a header and a part of the data, held until the end */
	n = tcp_req(buf, 3, 0, 100, data, 10);
	send_raw(buf, n, HOLD_OPEN);
}

/* group_sockets -- libfabric sockets' header with garbage private data */
static void group_sockets(int rounds)
{
	memset(data, 0xff, 60);
	send_raw(buf, sock_req(buf, 60, data, 60), CLOSE_AFTER);
	send_raw(buf, sock_req(buf, 0, NULL, 0), CLOSE_AFTER);
	for (int r = 0; r < rounds; r++) {
		size_t len = (size_t)random() % 257;
		rnd(data, len);
		send_raw(buf, sock_req(buf, (uint16_t)len, data, len), CLOSE_AFTER);
	}
	rnd(data, 300);
	send_raw(buf, sock_req(buf, 300, data, 300), CLOSE_AFTER);    /* oversized */
	send_raw(buf, sock_req(buf, 60, data, 60) - 50, CLOSE_AFTER); /* truncated */
	memcpy(data, "rpm\xfa\xf0\x00", 6);
	send_raw(buf, sock_req(buf, 6, data, 6), CLOSE_AFTER);
	if (!is_sockets)
		send_raw(buf, sock_req(buf, 100, data, 10), HOLD_OPEN);
}

/* group_random -- random bytes, and nothing at all */
static void group_random(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		size_t len = r % 2 ? 1024 : 64;
		rnd(buf, len);
		/* sockets reads any byte 0..3 at a multiple of 8 as a message type */
		for (size_t i = 0; is_sockets && i < len; i++)
			buf[i] |= 0x40;
		send_raw(buf, len, CLOSE_AFTER);
	}
	send_raw(buf, 0, CLOSE_AFTER);
	/* libfabric tcp's version and type, then random bytes */
	rnd(buf, 200);
	buf[0] = 3;
	buf[1] = 0;
	if (!is_sockets)
		send_raw(buf, 200, CLOSE_AFTER);
}

/* check_served -- a real client must be served now */
static void check_served(struct server *s, struct rpma_peer *cpeer, const char *after,
			 unsigned *real_tries)
{
	(*real_tries)++;
	bool ok = real_client(cpeer, s->port);
	printf("crafted_connreq: after %s: %u crafted requests reached the application so far; "
	       "a real client %s\n",
	       after, atomic_load(&s->crafted), ok ? "was served" : "was NOT served");
	fflush(stdout);
	SEC_CHECK(ok, "the listener stopped serving real clients after %s", after);
}

/* main -- the server, the crafted inputs and the real clients */
int main(void)
{
	sec_quiet();
	const char *rs = getenv("SEC_ROUNDS");
	int rounds = (rs && *rs) ? atoi(rs) : 10;
	const char *fp = getenv("FI_PROVIDER");
	is_sockets = fp && strcmp(fp, "sockets") == 0;
	srandom((unsigned)(time(NULL) ^ getpid()));

	struct server s = {0};
	pthread_mutex_init(&s.lock, NULL);
	s.peer = sec_peer();
	s.ep = sec_listen(s.peer, s.port);
	target.sin_family = AF_INET;
	target.sin_port = htons((uint16_t)atoi(s.port));
	if (inet_pton(AF_INET, sec_ip(), &target.sin_addr) != 1) {
		printf("crafted_connreq: %s is not an IPv4 address: skipped\n", sec_ip());
		return SEC_SKIP;
	}
	int probe = socket(AF_INET, SOCK_STREAM, 0);
	SEC_CHECK(probe >= 0, "socket(): %s", strerror(errno));
	if (connect(probe, (struct sockaddr *)&target, sizeof(target)) != 0) {
		printf("crafted_connreq: nothing accepts TCP connections on %s:%s (%s): the "
		       "transport does not listen on TCP, skipped\n",
		       sec_ip(), s.port, strerror(errno));
		close(probe);
		(void)rpma_ep_shutdown(&s.ep);
		(void)rpma_peer_delete(&s.peer);
		return SEC_SKIP;
	}
	close(probe);
	SEC_CHECK(pthread_create(&s.thread, NULL, server_thread, &s) == 0, "pthread_create");

	struct rpma_peer *cpeer = sec_peer();
	unsigned real_tries = 0;
	check_served(&s, cpeer, "nothing", &real_tries);
	if (!is_sockets) {
		group_tcp(rounds);
		check_served(&s, cpeer, "libfabric tcp's header with garbage", &real_tries);
	}
	group_sockets(rounds);
	check_served(&s, cpeer, "libfabric sockets' header with garbage", &real_tries);
	group_random(rounds);
	check_served(&s, cpeer, "random bytes", &real_tries);

	/* the half-open requests go, then a last real client */
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	usleep(300 * 1000);
	check_served(&s, cpeer, "the half-open requests closed", &real_tries);

	atomic_store(&s.stop, true);
	pthread_join(s.thread, NULL);
	unsigned crafted = atomic_load(&s.crafted), real = atomic_load(&s.real);
	printf("crafted_connreq: %u of %u real clients served, %u crafted requests reached the "
	       "application%s%s\n",
	       real, real_tries, crafted, crafted ? "; the last one: " : "",
	       crafted ? s.last_crafted : "");
	(void)rpma_ep_shutdown(&s.ep);
	(void)rpma_peer_delete(&cpeer);
	(void)rpma_peer_delete(&s.peer);
	SEC_CHECK(real == real_tries, "real clients not served");
	SEC_CHECK(crafted == 0, "crafted requests reached rpma_ep_next_conn_req()");
	printf("PASS: crafted_connreq\n");
	return 0;
}
