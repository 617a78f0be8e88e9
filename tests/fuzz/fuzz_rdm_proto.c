/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_rdm_proto.c -- libFuzzer target: the fabric provider's connection
 * protocol for reliable-datagram endpoints (providers/fabric/fabric_rdm_proto.c,
 * which fabric_rdm.c wires to libfabric)
 *
 * Input, read twice:
 * 1. as one message from a peer: fab_rdm_decode() must hand out pointers
 *    inside the input only (copied into an exact-size buffer for
 *    AddressSanitizer), and what it accepts must encode back to the same
 *    bytes (to the same header and payload when a later minor version
 *    appended some);
 * 2. as a script for a client and a server connection, one op byte at a
 *    time (op % 10): 0/1 tick the client/server after arg * 4 ms, 2/3 hand
 *    the client/server a message of the next arg bytes of the input, 4/5
 *    pass the oldest message queued by the client/server to the other side,
 *    6/7 disconnect the client/server, 8 accept, 9 reject.  Every message
 *    the machine emits must encode; each side reports ESTABLISHED at most
 *    once and at most one end (CLOSED, LOST, REJECTED, UNREACHABLE), and
 *    no event after its end.
 */

#include <stdlib.h>
#include <string.h>

#include "fabric_rdm_proto.h"
#include "fuzz.h"

#define QLEN 16

struct side {
	struct fab_rdm_conn c;
	int have;			  /* the server exists once the first REQ came */
	int ended;			  /* an end event was reported */
	int est;			  /* ESTABLISHED was reported */
	uint8_t q[QLEN][FAB_RDM_MSG_MAX]; /* messages to the other side */
	size_t qlen[QLEN];
	unsigned qn;
};

static const struct fab_rdm_cfg CFG = {.timeout_ms = 1000, .retry_ms = 250, .keepalive_ms = 100};

/* take -- check the outputs of one step of s, queue its messages */
static void take(struct side *s, const struct fab_rdm_out *out)
{
	FUZZ_CHECK(out->nmsgs <= FAB_RDM_OUT_MSGS && out->nevents <= 1, "output counts");
	for (unsigned i = 0; i < out->nmsgs; i++) {
		uint8_t buf[FAB_RDM_MSG_MAX];
		size_t n = fab_rdm_encode(&out->msgs[i], buf, sizeof(buf));
		FUZZ_CHECK(n != 0, "the machine emitted a %s the codec refuses",
			   fab_rdm_type_str(out->msgs[i].type));
		if (s->qn < QLEN) {
			memcpy(s->q[s->qn], buf, n);
			s->qlen[s->qn++] = n;
		}
	}
	if (out->nevents) {
		enum rpma_conn_event ev = out->events[0];
		FUZZ_CHECK(!s->ended, "event %d after the end", ev);
		if (ev == RPMA_CONN_ESTABLISHED) {
			FUZZ_CHECK(!s->est, "a second ESTABLISHED");
			s->est = 1;
		} else {
			FUZZ_CHECK(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST ||
					   ev == RPMA_CONN_REJECTED || ev == RPMA_CONN_UNREACHABLE,
				   "unknown event %d", ev);
			s->ended = 1;
		}
	}
}

/* give -- bytes from the other side (or from the input) to s */
static void give(struct side *s, const uint8_t *w, size_t n, uint64_t now)
{
	struct fab_rdm_msg m;
	struct fab_rdm_out out;
	if (fab_rdm_decode(w, n, &m) != FAB_RDM_OK)
		return;
	if (!s->have) {
		/* the server side: made from the first REQ */
		if (m.type == FAB_RDM_REQ && fab_rdm_conn_from_req(&s->c, &CFG, 5, 2, &m, now) == 0)
			s->have = 1;
		return;
	}
	enum fab_rdm_verdict v = fab_rdm_conn_recv(&s->c, &m, now, &out);
	FUZZ_CHECK(v == FAB_RDM_TAKEN || out.nmsgs + out.nevents == 0, "verdict %d with outputs",
		   v);
	take(s, &out);
}

/* pass -- the oldest message queued by from, to to */
static void pass(struct side *from, struct side *to, uint64_t now)
{
	if (from->qn == 0)
		return;
	uint8_t buf[FAB_RDM_MSG_MAX];
	size_t n = from->qlen[0];
	memcpy(buf, from->q[0], n);
	memmove(from->q[0], from->q[1], sizeof(from->q[0]) * (QLEN - 1));
	memmove(&from->qlen[0], &from->qlen[1], sizeof(from->qlen[0]) * (QLEN - 1));
	from->qn--;
	give(to, buf, n, now);
}

/* LLVMFuzzerInitialize -- nothing to set up */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* LLVMFuzzerTestOneInput -- the input as a message, then as a script */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *w = malloc(size ? size : 1);
	FUZZ_CHECK(w != NULL, "malloc");
	if (size)
		memcpy(w, data, size);

	/* 1. one message */
	struct fab_rdm_msg m;
	enum fab_rdm_status st = fab_rdm_decode(size ? w : NULL, size, &m);
	FUZZ_CHECK(fab_rdm_status_str(st) != NULL, "no text");
	if (st == FAB_RDM_OK) {
		FUZZ_CHECK(m.addr == NULL || (m.addr >= w && m.addr + m.addr_len <= w + size),
			   "the address is outside the input");
		FUZZ_CHECK(m.pdata == NULL || (m.pdata >= w && m.pdata + m.pdata_len <= w + size),
			   "the private data is outside the input");
		uint8_t again[FAB_RDM_MSG_MAX];
		size_t n = fab_rdm_encode(&m, again, sizeof(again));
		FUZZ_CHECK(n != 0 && n <= size, "re-encoded to %zu bytes of %zu", n, size);
		FUZZ_CHECK(memcmp(again, w, 4) == 0 && memcmp(again + 5, w + 5, n - 5) == 0 &&
				   (again[4] >> 4) == (w[4] >> 4),
			   "re-encoding differs");
		FUZZ_CHECK((w[4] & 0xf) != FAB_RDM_MINOR || n == size, "trailing bytes taken");
	} else {
		FUZZ_CHECK(m.type == 0 && m.addr == NULL && m.pdata == NULL,
			   "a refused message left fields");
	}

	/* 2. a script */
	struct side *cli = calloc(1, sizeof(*cli));
	struct side *srv = calloc(1, sizeof(*srv));
	FUZZ_CHECK(cli != NULL && srv != NULL, "calloc");
	struct fab_rdm_out out;
	uint64_t now = 0;
	static const uint8_t addr[] = "fi_shm://client:0:0";
	FUZZ_CHECK(fab_rdm_conn_connect(&cli->c, &CFG, 3, 7, addr, sizeof(addr), "hi", 2, now,
					&out) == 0,
		   "connect");
	cli->have = 1;
	take(cli, &out);
	size_t i = 0;
	while (i + 1 < size) {
		uint8_t op = w[i] % 10, arg = w[i + 1];
		i += 2;
		switch (op) {
		case 0:
		case 1: {
			struct side *s = op == 0 ? cli : srv;
			now += (uint64_t)arg * 4;
			if (s->have) {
				fab_rdm_conn_tick(&s->c, now, &out);
				take(s, &out);
			}
			break;
		}
		case 2:
		case 3: {
			size_t n = arg <= size - i ? arg : size - i;
			give(op == 2 ? cli : srv, w + i, n, now);
			i += n;
			break;
		}
		case 4:
			pass(cli, srv, now);
			break;
		case 5:
			pass(srv, cli, now);
			break;
		case 6:
		case 7: {
			struct side *s = op == 6 ? cli : srv;
			if (s->have && fab_rdm_conn_disconnect(&s->c, now, &out) == 0)
				take(s, &out);
			break;
		}
		case 8:
			if (srv->have && fab_rdm_conn_accept(&srv->c, "ok", 2, now, &out) == 0)
				take(srv, &out);
			break;
		case 9:
			if (srv->have &&
			    fab_rdm_conn_reject(&srv->c, FAB_RDM_REASON_APP, now, &out) == 0)
				take(srv, &out);
			break;
		}
	}
	free(cli);
	free(srv);
	free(w);
	return 0;
}
