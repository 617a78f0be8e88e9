/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_private_data.c -- libFuzzer target: the private data a peer sends while
 * connecting, on both sides of a connection, and the connection events
 *
 * Input: a configuration byte (peer kind, incoming or outgoing side, accept
 * or reject), the peer's private data (a length byte 0..255 and the bytes),
 * our own private data for accept/connect (a length byte and the bytes; the
 * fake transport carries up to FAKE_PDATA_MAX), then connection events (an
 * event code, possibly unknown, and private data with it) until the input
 * runs out.  The core must keep an exact copy of the peer's bytes
 * (rpma_conn_req_get_private_data, rpma_conn_get_private_data), own and
 * free it, map events as documented, and release everything on every path.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAX_EVENTS 24

/* check_pdata -- a private data pair holds exactly the expected bytes */
static void check_pdata(const struct rpma_conn_private_data *pd, const uint8_t *exp, size_t exp_len,
			const char *what)
{
	FUZZ_CHECK(pd->len == exp_len, "%s: %u bytes, %zu expected", what, (unsigned)pd->len,
		   exp_len);
	if (exp_len == 0) {
		FUZZ_CHECK(pd->ptr == NULL, "%s: no bytes but a pointer", what);
		return;
	}
	FUZZ_CHECK(pd->ptr != NULL, "%s: NULL pointer for %zu bytes", what, exp_len);
	/* the bytes are read in full: AddressSanitizer checks the buffer's extent */
	FUZZ_CHECK(memcmp(pd->ptr, exp, exp_len) == 0, "%s: bytes differ", what);
}

/* known_event -- the events rpma_conn_next_event() passes on */
static bool known_event(int ev)
{
	return ev >= RPMA_CONN_ESTABLISHED && ev <= RPMA_CONN_UNREACHABLE;
}

/* run_events -- feed connection events and check the kept private data */
static void run_events(struct rpma_conn *conn, struct fuzz_in *in, uint8_t *kept, size_t *kept_len)
{
	for (int i = 0; i < MAX_EVENTS && !fuzz_empty(in); i++) {
		uint8_t sel = fuzz_u8(in);
		int ev;
		if (sel < 0xc0)
			ev = sel % 5; /* a known event */
		else if (sel < 0xe0)
			ev = RPMA_CONN_UNDEFINED;
		else
			ev = (int)fuzz_u32(in);
		size_t plen;
		uint8_t *pd = fuzz_bytes(in, fuzz_u8(in), &plen);
		bool queue = (sel & 0x0f) != 0x0f; /* sometimes nothing waits */
		if (queue)
			fake_push_conn_event((enum rpma_conn_event)ev, pd, (uint8_t)plen);

		enum rpma_conn_event got = (enum rpma_conn_event)0x7777;
		int errors = fuzz_log_errors();
		int ret = rpma_conn_next_event(conn, &got);
		if (!queue) {
			FUZZ_CHECK(ret == RPMA_E_NO_EVENT, "no event waiting: %d", ret);
		} else if (known_event(ev)) {
			FUZZ_CHECK(ret == 0 && (int)got == ev, "event %d gave %d/%d", ev, ret,
				   (int)got);
			/* the first private data that arrives with ESTABLISHED is kept */
			if (ev == RPMA_CONN_ESTABLISHED && plen && *kept_len == 0) {
				memcpy(kept, pd, plen);
				*kept_len = plen;
			}
		} else {
			FUZZ_CHECK(ret == RPMA_E_UNKNOWN && (int)got == 0x7777,
				   "unknown event %d gave %d, event %d", ev, ret, (int)got);
			FUZZ_CHECK(fuzz_log_errors() == errors, "an unknown event is a warning");
		}
		free(pd);

		const char *name = rpma_utils_conn_event_2str((enum rpma_conn_event)ev);
		FUZZ_CHECK(name != NULL && strlen(name) > 0, "no name for event %d", ev);

		struct rpma_conn_private_data now = {NULL, 0};
		ret = rpma_conn_get_private_data(conn, &now);
		FUZZ_CHECK(ret == 0, "rpma_conn_get_private_data: %d", ret);
		check_pdata(&now, kept, *kept_len, "connection's private data");
	}
}

/* our_pdata -- the private data we send, from the input (NULL for none) */
static struct rpma_conn_private_data *
our_pdata(struct fuzz_in *in, struct rpma_conn_private_data *pd, uint8_t **buf, bool *bogus)
{
	uint8_t sel = fuzz_u8(in);
	size_t len;
	*buf = fuzz_bytes(in, fuzz_u8(in), &len);
	*bogus = false;
	if (sel & 1)
		return NULL;
	pd->ptr = *buf;
	pd->len = (uint8_t)len;
	if (len == 0 || (sel & 2)) {
		/* a pair the core must refuse: no bytes, or no pointer */
		if (sel & 2)
			pd->ptr = NULL;
		*bogus = true;
	}
	return pd;
}

/*
 * sweep -- every length 0..255 once, whatever the fuzzer picks: with an
 * incoming request (accepted, and rejected) and with ESTABLISHED on an
 * outgoing connection
 */
static void sweep(void)
{
	uint8_t in[300];
	for (int len = 0; len <= 255; len++) {
		for (int variant = 0; variant < 3; variant++) {
			size_t n = 0;
			/* incoming and accepted / incoming and rejected / outgoing */
			in[n++] = variant == 0 ? 0x10 : (variant == 1 ? 0x70 : 0x00);
			in[n++] = variant == 2 ? 0 : (uint8_t)len;
			for (int i = 0; variant != 2 && i < len; i++)
				in[n++] = (uint8_t)(i * 7 + len);
			in[n++] = 0x01; /* no private data of ours */
			in[n++] = 0x00;
			if (variant == 2) {
				in[n++] = 0x00; /* ESTABLISHED with len bytes */
				in[n++] = (uint8_t)len;
				for (int i = 0; i < len; i++)
					in[n++] = (uint8_t)(i * 13 + len);
			}
			LLVMFuzzerTestOneInput(in, n);
		}
	}
}

/* LLVMFuzzerInitialize -- peers for all inputs, and the sweep of all lengths */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	sweep();
	return 0;
}

/* LLVMFuzzerTestOneInput -- one connection set up with the peer's private data */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	fuzz_begin();

	uint8_t cfg = fuzz_u8(&in);
	enum fuzz_peer_kind kind = (enum fuzz_peer_kind)(cfg % FUZZ_PEER_MAX);
	bool incoming = (cfg & 0x10) != 0;
	bool reject = (cfg & 0x60) == 0x60;

	size_t in_len;
	uint8_t *in_pd = fuzz_bytes(&in, fuzz_u8(&in), &in_len);
	uint8_t kept[255];
	size_t kept_len = 0;

	struct rpma_conn_req *req = NULL;
	struct rpma_ep *ep = NULL;
	int ret;
	if (incoming) {
		ret = rpma_ep_listen(fuzz_peer(kind), "127.0.0.1", "7204", &ep);
		FUZZ_CHECK(ret == 0, "rpma_ep_listen: %d", ret);
		fake_push_conn_req(in_pd, (uint8_t)in_len);
		ret = rpma_ep_next_conn_req(ep, NULL, &req);
		FUZZ_CHECK(ret == 0 && req != NULL, "rpma_ep_next_conn_req: %d", ret);
		memcpy(kept, in_pd, in_len);
		kept_len = in_len;
	} else {
		ret = rpma_conn_req_new(fuzz_peer(kind), "127.0.0.1", "7204", NULL, &req);
		FUZZ_CHECK(ret == 0 && req != NULL, "rpma_conn_req_new: %d", ret);
	}
	free(in_pd); /* the request must hold its own copy */

	struct rpma_conn_private_data pd = {(void *)1, 1};
	ret = rpma_conn_req_get_private_data(req, &pd);
	FUZZ_CHECK(ret == 0, "rpma_conn_req_get_private_data: %d", ret);
	check_pdata(&pd, kept, kept_len, "request's private data");

	if (reject) {
		ret = rpma_conn_req_delete(&req);
		FUZZ_CHECK(ret == 0 && req == NULL, "rpma_conn_req_delete: %d", ret);
	} else {
		struct rpma_conn_private_data mine;
		uint8_t *mine_buf;
		bool bogus;
		struct rpma_conn_private_data *p = our_pdata(&in, &mine, &mine_buf, &bogus);
		struct rpma_conn *conn = NULL;
		ret = rpma_conn_req_connect(&req, p, &conn);
		free(mine_buf); /* the transport had to copy what it sends */
		FUZZ_CHECK(req == NULL, "the request survived rpma_conn_req_connect (%d)", ret);
		int expect = 0;
		if (bogus || (p != NULL && p->len > FAKE_PDATA_MAX))
			expect = RPMA_E_INVAL;
		FUZZ_CHECK(ret == expect, "rpma_conn_req_connect: %d, %d expected", ret, expect);
		if (ret == 0) {
			FUZZ_CHECK(conn != NULL, "no connection");
			struct rpma_conn_private_data now = {(void *)1, 1};
			ret = rpma_conn_get_private_data(conn, &now);
			FUZZ_CHECK(ret == 0, "rpma_conn_get_private_data: %d", ret);
			check_pdata(&now, kept, kept_len, "connection's private data");
			run_events(conn, &in, kept, &kept_len);
			fuzz_conn_delete(&conn);
		} else {
			FUZZ_CHECK(conn == NULL, "a connection pointer after a failed connect");
		}
	}

	if (ep) {
		ret = rpma_ep_shutdown(&ep);
		FUZZ_CHECK(ret == 0 && ep == NULL, "rpma_ep_shutdown: %d", ret);
	}
	fuzz_end();
	return 0;
}
