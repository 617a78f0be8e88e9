/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_rdm_proto.c -- the fabric provider's connection protocol over
 * reliable-datagram endpoints (providers/fabric/fabric_rdm_proto.c): the
 * wire codec, connection ids, and the state machine driven message by
 * message with explicit times (no clock, no libfabric)
 */

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "fabric_rdm_proto.h"

static const struct fab_rdm_cfg CFG = {
	.timeout_ms = 1000,
	.retry_ms = 250,
	.keepalive_ms = 100,
	.decide_ms = 3000,
};

static const uint8_t CLIENT_ADDR[] = "fi_shm://client:0:0";
static const uint8_t PD_REQ[] = {1, 2, 3, 4, 5};
static const uint8_t PD_ACC[] = {9, 8, 7};

/* wire -- every message the machine emits must survive the codec unchanged */
static struct fab_rdm_msg wire(const struct fab_rdm_msg *m, uint8_t *buf)
{
	size_t len = fab_rdm_encode(m, buf, FAB_RDM_MSG_MAX);
	cr_assert_neq(len, 0, "the machine emitted a message the codec refuses (type %s)",
		      fab_rdm_type_str(m->type));
	struct fab_rdm_msg d;
	cr_assert_eq(fab_rdm_decode(buf, len, &d), FAB_RDM_OK);
	cr_assert_eq(d.type, m->type);
	cr_assert_eq(d.src_id, m->src_id);
	cr_assert_eq(d.src_gen, m->src_gen);
	cr_assert_eq(d.dst_id, m->dst_id);
	cr_assert_eq(d.dst_gen, m->dst_gen);
	cr_assert_eq(d.seq, m->seq);
	return d;
}

/* expect -- exactly these outputs: n messages of the given types, and the event (or none) */
static void expect(const struct fab_rdm_out *out, unsigned nmsgs, const uint8_t *types, int event)
{
	cr_assert_eq(out->nmsgs, nmsgs, "messages: %u, expected %u", out->nmsgs, nmsgs);
	for (unsigned i = 0; i < nmsgs; i++)
		cr_assert_eq(out->msgs[i].type, types[i], "message %u is %s, expected %s", i,
			     fab_rdm_type_str(out->msgs[i].type), fab_rdm_type_str(types[i]));
	if (event == RPMA_CONN_UNDEFINED) {
		cr_assert_eq(out->nevents, 0, "an unexpected event %d", out->events[0]);
	} else {
		cr_assert_eq(out->nevents, 1, "no event, expected %d", event);
		cr_assert_eq(out->events[0], event, "event %d, expected %d", out->events[0], event);
	}
}

static void expect_nothing(const struct fab_rdm_out *out)
{
	expect(out, 0, NULL, RPMA_CONN_UNDEFINED);
}

static void expect_msg(const struct fab_rdm_out *out, uint8_t type, int event)
{
	expect(out, 1, &type, event);
}

/* a client (id 3, gen 7) and a server connection (id 5, gen 2) */
struct pair {
	struct fab_rdm_conn cli, srv;
	struct fab_rdm_out out;
	uint8_t buf[FAB_RDM_MSG_MAX];
	struct fab_rdm_msg req; /* the first REQ as it came off the wire */
};

static void pair_request(struct pair *p, uint64_t now)
{
	cr_assert_eq(fab_rdm_conn_connect(&p->cli, &CFG, 3, 7, CLIENT_ADDR, sizeof(CLIENT_ADDR),
					  PD_REQ, sizeof(PD_REQ), now, &p->out),
		     0);
	expect_msg(&p->out, FAB_RDM_REQ, RPMA_CONN_UNDEFINED);
	p->req = wire(&p->out.msgs[0], p->buf);
	cr_assert_eq(fab_rdm_conn_from_req(&p->srv, &CFG, 5, 2, &p->req, now), 0);
	cr_assert_eq(p->srv.state, FAB_RDM_ST_REQ_RCVD);
	cr_assert_eq(p->srv.peer_pdata_len, sizeof(PD_REQ));
	cr_assert_arr_eq(p->srv.peer_pdata, PD_REQ, sizeof(PD_REQ));
	cr_assert_eq(p->srv.peer_addr_len, sizeof(CLIENT_ADDR));
}

/* pair_establish -- the whole handshake at time now, each step's outputs asserted */
static void pair_establish(struct pair *p, uint64_t now)
{
	struct fab_rdm_out o2;
	uint8_t b2[FAB_RDM_MSG_MAX];
	static const uint8_t srv_addr[] = "fi_sockaddr_in://127.0.0.1:41459";
	pair_request(p, now);
	cr_assert_eq(fab_rdm_conn_set_addr(&p->srv, srv_addr, sizeof(srv_addr)), 0);
	cr_assert_eq(fab_rdm_conn_accept(&p->srv, PD_ACC, sizeof(PD_ACC), now, &p->out), 0);
	expect_msg(&p->out, FAB_RDM_ACCEPT, RPMA_CONN_UNDEFINED);
	struct fab_rdm_msg acc = wire(&p->out.msgs[0], p->buf);
	cr_assert_eq(acc.addr_len, sizeof(srv_addr));
	cr_assert_eq(fab_rdm_conn_recv(&p->cli, &acc, now, &o2), FAB_RDM_TAKEN);
	expect_msg(&o2, FAB_RDM_READY, RPMA_CONN_ESTABLISHED);
	/* the client learns where the server's side of the connection is */
	cr_assert_eq(p->cli.peer_addr_len, sizeof(srv_addr));
	cr_assert_arr_eq(p->cli.peer_addr, srv_addr, sizeof(srv_addr));
	cr_assert_eq(fab_rdm_conn_set_addr(&p->srv, srv_addr, FAB_RDM_ADDR_MAX + 1), RPMA_E_INVAL);
	cr_assert_eq(p->cli.peer_pdata_len, sizeof(PD_ACC));
	cr_assert_arr_eq(p->cli.peer_pdata, PD_ACC, sizeof(PD_ACC));
	struct fab_rdm_msg rdy = wire(&o2.msgs[0], b2);
	/* the server's ESTABLISHED comes with the READY */
	cr_assert_eq(fab_rdm_conn_recv(&p->srv, &rdy, now, &p->out), FAB_RDM_TAKEN);
	expect(&p->out, 0, NULL, RPMA_CONN_ESTABLISHED);
	cr_assert_eq(p->srv.state, FAB_RDM_ST_ESTABLISHED);
	cr_assert_eq(p->cli.state, FAB_RDM_ST_ESTABLISHED);
}

/* deliver -- the first message of from_out to conn, returns the verdict, its outputs in out */
static enum fab_rdm_verdict deliver(const struct fab_rdm_out *from_out, unsigned i,
				    struct fab_rdm_conn *conn, uint64_t now,
				    struct fab_rdm_out *out)
{
	uint8_t buf[FAB_RDM_MSG_MAX];
	struct fab_rdm_msg m = wire(&from_out->msgs[i], buf);
	return fab_rdm_conn_recv(conn, &m, now, out);
}

/* ================================================================ codec */

Test(rdm_codec, req_golden_bytes_and_round_trip)
{
	uint8_t addr[] = {0xaa, 0xbb};
	uint8_t pd[] = {0x11};
	struct fab_rdm_msg m = {
		.type = FAB_RDM_REQ,
		.pdata_len = 1,
		.addr_len = 2,
		.src_id = 0x01020304,
		.src_gen = 0x0a0b0c0d,
		.seq = 0x100,
		.addr = addr,
		.pdata = pd,
	};
	uint8_t buf[FAB_RDM_MSG_MAX];
	const uint8_t golden[] = {
		0x72, 0x70, 0x6d, 0xd6, 0x20, 0x01, 0x00, 0x01, /* magic, 2.0, REQ, -, n */
		0x04, 0x03, 0x02, 0x01, 0x0d, 0x0c, 0x0b, 0x0a, /* src id, gen */
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* dst id, gen */
		0x00, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, /* seq, a, 0 */
		0xaa, 0xbb, 0x11,
	};
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), sizeof(golden));
	cr_assert_arr_eq(buf, golden, sizeof(golden));
	/* one byte too little room */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(golden) - 1), 0);

	struct fab_rdm_msg d;
	cr_assert_eq(fab_rdm_decode(golden, sizeof(golden), &d), FAB_RDM_OK);
	cr_assert_eq(d.type, FAB_RDM_REQ);
	cr_assert_eq(d.src_id, 0x01020304);
	cr_assert_eq(d.src_gen, 0x0a0b0c0d);
	cr_assert_eq(d.seq, 0x100);
	cr_assert_eq(d.addr_len, 2);
	cr_assert_eq(d.addr, golden + 32);
	cr_assert_eq(d.pdata_len, 1);
	cr_assert_eq(d.pdata, golden + 34);

	/*
	 * what a 1.x peer sends is refused: its application messages are
	 * untagged, a receive of ours would never take them
	 */
	uint8_t v11[sizeof(golden)];
	memcpy(v11, golden, sizeof(golden));
	v11[4] = 0x11;
	cr_assert_eq(fab_rdm_decode(v11, sizeof(v11), &d), FAB_RDM_E_MAJOR);
}

Test(rdm_codec, every_type_round_trips)
{
	uint8_t addr[FAB_RDM_ADDR_MAX];
	uint8_t pd[FAB_RDM_PDATA_MAX];
	memset(addr, 0x5a, sizeof(addr));
	memset(pd, 0xa5, sizeof(pd));
	for (unsigned t = FAB_RDM_REQ; t <= FAB_RDM_TYPE_LAST; t++) {
		struct fab_rdm_msg m = {.type = (uint8_t)t, .src_id = 1, .src_gen = 1, .seq = t};
		if (t == FAB_RDM_REQ) {
			m.addr_len = FAB_RDM_ADDR_MAX;
			m.addr = addr;
		} else {
			m.dst_id = 9;
			m.dst_gen = 4;
		}
		if (t == FAB_RDM_ACCEPT) {
			/* the endpoint the server's side continues on */
			m.addr_len = 16;
			m.addr = addr;
		}
		if (t == FAB_RDM_REQ || t == FAB_RDM_ACCEPT) {
			m.pdata_len = FAB_RDM_PDATA_MAX;
			m.pdata = pd;
		}
		if (t == FAB_RDM_REJECT)
			m.reason = FAB_RDM_REASON_APP;
		uint8_t buf[FAB_RDM_MSG_MAX];
		size_t len = fab_rdm_encode(&m, buf, sizeof(buf));
		cr_assert_eq(len, 32 + m.addr_len + m.pdata_len, "type %s", fab_rdm_type_str(t));
		struct fab_rdm_msg d;
		cr_assert_eq(fab_rdm_decode(buf, len, &d), FAB_RDM_OK, "type %s",
			     fab_rdm_type_str(t));
		cr_assert_eq(d.type, t);
		cr_assert_eq(d.reason, m.reason);
		cr_assert_eq(d.dst_id, m.dst_id);
		cr_assert_eq(d.dst_gen, m.dst_gen);
		cr_assert_eq(d.pdata_len, m.pdata_len);
		cr_assert_eq(d.addr_len, m.addr_len);
		if (m.pdata_len)
			cr_assert_arr_eq(d.pdata, pd, m.pdata_len);
	}
}

Test(rdm_codec, encode_refuses_fields_a_type_does_not_allow)
{
	uint8_t addr[] = {1};
	uint8_t buf[FAB_RDM_MSG_MAX];
	const struct fab_rdm_msg good_req = {
		.type = FAB_RDM_REQ, .src_id = 1, .src_gen = 1, .addr_len = 1, .addr = addr};
	const struct fab_rdm_msg good_disc = {
		.type = FAB_RDM_DISC, .src_id = 1, .src_gen = 1, .dst_id = 2, .dst_gen = 2};
	cr_assert_neq(fab_rdm_encode(&good_req, buf, sizeof(buf)), 0);
	cr_assert_neq(fab_rdm_encode(&good_disc, buf, sizeof(buf)), 0);

	struct fab_rdm_msg m = good_req;
	m.dst_id = 1; /* a REQ names no receiver */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_req;
	m.addr_len = 0; /* a REQ carries the client's address */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_req;
	m.addr_len = FAB_RDM_ADDR_MAX + 1;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_req;
	m.pdata_len = 1; /* length without bytes */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_req;
	m.src_gen = 0;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);

	m = good_disc;
	m.pdata_len = 1;
	m.pdata = addr; /* private data only in REQ and ACCEPT */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_disc;
	m.addr_len = 1;
	m.addr = addr;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_disc;
	m.reason = FAB_RDM_REASON_APP; /* a reason only in a REJECT */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_disc;
	m.dst_gen = 0;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_disc;
	m.src_id = 0;
	m.src_gen = 0; /* only a REJECT may come from no connection */
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m.type = FAB_RDM_REJECT;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0); /* no reason */
	m.reason = FAB_RDM_REASON_PROTOCOL;
	cr_assert_neq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m.reason = FAB_RDM_REASON_LAST + 1;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m = good_disc;
	m.type = 0;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
	m.type = FAB_RDM_TYPE_LAST + 1;
	cr_assert_eq(fab_rdm_encode(&m, buf, sizeof(buf)), 0);
}

/* a valid DISC, as bytes */
static size_t disc_bytes(uint8_t *buf)
{
	const struct fab_rdm_msg m = {
		.type = FAB_RDM_DISC, .src_id = 1, .src_gen = 1, .dst_id = 2, .dst_gen = 2};
	return fab_rdm_encode(&m, buf, FAB_RDM_MSG_MAX);
}

Test(rdm_codec, decode_names_what_is_wrong)
{
	uint8_t buf[FAB_RDM_MSG_MAX + 8];
	struct fab_rdm_msg d;
	size_t len = disc_bytes(buf);
	cr_assert_eq(len, 32);
	cr_assert_eq(fab_rdm_decode(NULL, 0, &d), FAB_RDM_E_SHORT);
	for (size_t l = 0; l < 32; l++)
		cr_assert_eq(fab_rdm_decode(buf, l, &d), FAB_RDM_E_SHORT, "length %zu", l);
	/* one byte more, same minor version: refused */
	buf[32] = 0;
	cr_assert_eq(fab_rdm_decode(buf, 33, &d), FAB_RDM_E_LENGTH);
	/* a later minor version may append bytes */
	buf[4] = 0x21;
	cr_assert_eq(fab_rdm_decode(buf, 33, &d), FAB_RDM_OK);
	cr_assert_eq(d.type, FAB_RDM_DISC);
	/* 1.x (untagged application messages) and 3.x: another major version */
	buf[4] = 0x11;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_MAJOR);
	buf[4] = 0x30;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_MAJOR);
	buf[4] = FAB_RDM_MAJOR << 4 | FAB_RDM_MINOR;
	buf[0] ^= 1;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_MAGIC);
	buf[0] ^= 1;
	buf[5] = 0;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_TYPE);
	buf[5] = FAB_RDM_TYPE_LAST + 1;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_TYPE);
	buf[5] = FAB_RDM_DISC;
	buf[31] = 1; /* reserved */
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_E_FIELD);
	buf[31] = 0;
	buf[7] = 1; /* private data in a DISC */
	cr_assert_eq(fab_rdm_decode(buf, 33, &d), FAB_RDM_E_FIELD);
	buf[7] = 0;
	cr_assert_eq(fab_rdm_decode(buf, 32, &d), FAB_RDM_OK);

	/* a REQ whose address length names more bytes than came */
	uint8_t addr[4] = {1, 2, 3, 4};
	const struct fab_rdm_msg req = {
		.type = FAB_RDM_REQ, .src_id = 1, .src_gen = 1, .addr_len = 4, .addr = addr};
	len = fab_rdm_encode(&req, buf, sizeof(buf));
	cr_assert_eq(len, 36);
	cr_assert_eq(fab_rdm_decode(buf, 35, &d), FAB_RDM_E_LENGTH);
	cr_assert_eq(d.type, 0, "a refused message leaves nothing behind");
	cr_assert_str_neq(fab_rdm_status_str(FAB_RDM_E_LENGTH), "an unknown status");
}

/* a small xorshift, so that the "fuzz" runs are the same every time */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* check_any -- decode anything; what decodes must encode back to the same bytes */
static unsigned check_any(const uint8_t *buf, size_t len)
{
	struct fab_rdm_msg d;
	enum fab_rdm_status st = fab_rdm_decode(buf, len, &d);
	if (st != FAB_RDM_OK) {
		struct fab_rdm_msg zero;
		memset(&zero, 0, sizeof(zero));
		cr_assert_eq(memcmp(&d, &zero, sizeof(d)), 0);
		return 0;
	}
	cr_assert(d.addr == NULL || (d.addr >= buf && d.addr + d.addr_len <= buf + len));
	cr_assert(d.pdata == NULL || (d.pdata >= buf && d.pdata + d.pdata_len <= buf + len));
	if ((buf[4] & 0xf) == FAB_RDM_MINOR) {
		uint8_t again[FAB_RDM_MSG_MAX];
		cr_assert_eq(fab_rdm_encode(&d, again, sizeof(again)), len);
		cr_assert_arr_eq(again, buf, len);
	}
	return 1;
}

Test(rdm_codec, random_and_mutated_bytes)
{
	uint8_t buf[FAB_RDM_MSG_MAX + 16];
	unsigned ok = 0;
	/* random bytes, some with a valid magic and version */
	for (int i = 0; i < 200000; i++) {
		size_t len = rng() % sizeof(buf);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)rng();
		if (len >= 6 && (i & 1)) {
			memcpy(buf, FAB_RDM_MAGIC, 4);
			buf[4] = FAB_RDM_MAJOR << 4 | FAB_RDM_MINOR;
			buf[5] = (uint8_t)(1 + rng() % FAB_RDM_TYPE_LAST);
		}
		ok += check_any(buf, len);
	}
	/* every truncation and every single-byte change of valid messages */
	uint8_t addr[] = "fi_shm://x:0:0";
	uint8_t pd[] = {1, 2, 3};
	const struct fab_rdm_msg seeds[] = {
		{.type = FAB_RDM_REQ,
		 .src_id = 3,
		 .src_gen = 7,
		 .addr_len = sizeof(addr),
		 .addr = addr,
		 .pdata_len = sizeof(pd),
		 .pdata = pd},
		{.type = FAB_RDM_ACCEPT,
		 .src_id = 5,
		 .src_gen = 2,
		 .dst_id = 3,
		 .dst_gen = 7,
		 .pdata_len = sizeof(pd),
		 .pdata = pd},
		{.type = FAB_RDM_REJECT, .reason = 2, .dst_id = 3, .dst_gen = 7},
		{.type = FAB_RDM_KEEPALIVE, .src_id = 5, .src_gen = 2, .dst_id = 3, .dst_gen = 7},
		{.type = FAB_RDM_PENDING, .src_id = 5, .src_gen = 2, .dst_id = 3, .dst_gen = 7},
	};
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
		size_t len = fab_rdm_encode(&seeds[s], buf, sizeof(buf));
		cr_assert_neq(len, 0);
		for (size_t l = 0; l < len; l++)
			cr_assert_eq(check_any(buf, l), 0, "seed %zu cut at %zu decoded", s, l);
		for (size_t j = 0; j < len; j++) {
			for (int bit = 0; bit < 8; bit++) {
				buf[j] ^= (uint8_t)(1u << bit);
				ok += check_any(buf, len);
				buf[j] ^= (uint8_t)(1u << bit);
			}
		}
		cr_assert_eq(check_any(buf, len), 1);
	}
	cr_assert_gt(ok, 0, "nothing decoded: the property was never checked");
}

/* ================================================================ ids */

Test(rdm_ids, slots_and_generations)
{
	struct fab_rdm_ids ids;
	uint32_t id, gen;
	cr_assert_eq(fab_rdm_ids_init(&ids, 1), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_ids_init(&ids, 3), 0);
	cr_assert_eq(fab_rdm_ids_get(&ids, &id, &gen), 0);
	cr_assert_eq(id, 1);
	cr_assert_eq(gen, 1);
	cr_assert_eq(fab_rdm_ids_get(&ids, &id, &gen), 0);
	cr_assert_eq(id, 2);
	cr_assert_eq(fab_rdm_ids_get(&ids, &id, &gen), RPMA_E_NOMEM);
	cr_assert(fab_rdm_ids_live(&ids, 1, 1));
	cr_assert_not(fab_rdm_ids_live(&ids, 0, 1));
	cr_assert_not(fab_rdm_ids_live(&ids, 3, 1));
	fab_rdm_ids_put(&ids, 1);
	cr_assert_not(fab_rdm_ids_live(&ids, 1, 1));
	cr_assert_eq(fab_rdm_ids_get(&ids, &id, &gen), 0);
	cr_assert_eq(id, 1);
	cr_assert_eq(gen, 2, "the slot's next user has the next generation");
	cr_assert_not(fab_rdm_ids_live(&ids, 1, 1));
	cr_assert(fab_rdm_ids_live(&ids, 1, 2));
	/* the generation skips 0 when it wraps */
	ids.gen[1] = UINT32_MAX;
	fab_rdm_ids_put(&ids, 1);
	cr_assert_eq(ids.gen[1], 1);
	fab_rdm_ids_put(&ids, 1); /* twice: no effect */
	cr_assert_eq(ids.gen[1], 1);
	fab_rdm_ids_fini(&ids);
}

/* ================================================================ state machine */

Test(rdm_conn, handshake)
{
	struct pair p;
	pair_establish(&p, 10);
	cr_assert_eq(p.cli.peer_id, 5);
	cr_assert_eq(p.cli.peer_gen, 2);
	cr_assert_eq(p.srv.peer_id, 3);
	cr_assert_eq(p.srv.peer_gen, 7);
	cr_assert_eq(p.req.seq, 1);
	cr_assert_eq(p.req.pdata_len, sizeof(PD_REQ));
}

Test(rdm_conn, server_established_by_keepalive_when_ready_is_lost)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, NULL, 0, 0, &p.out), 0);
	cr_assert_eq(deliver(&p.out, 0, &p.cli, 0, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_READY, RPMA_CONN_ESTABLISHED);
	/* the READY is dropped; the client's first keep-alive establishes */
	fab_rdm_conn_tick(&p.cli, 100, &o);
	expect_msg(&o, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	cr_assert_eq(deliver(&o, 0, &p.srv, 100, &p.out), FAB_RDM_TAKEN);
	expect(&p.out, 0, NULL, RPMA_CONN_ESTABLISHED);
}

Test(rdm_conn, request_retried_until_unreachable)
{
	struct pair p;
	pair_request(&p, 0);
	fab_rdm_conn_tick(&p.cli, 249, &p.out);
	expect_nothing(&p.out);
	const uint64_t tries[] = {250, 500, 750};
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(fab_rdm_conn_next_tick(&p.cli), tries[i]);
		fab_rdm_conn_tick(&p.cli, tries[i], &p.out);
		expect_msg(&p.out, FAB_RDM_REQ, RPMA_CONN_UNDEFINED);
		struct fab_rdm_msg m = wire(&p.out.msgs[0], p.buf);
		cr_assert_eq(m.seq, i + 2);
		cr_assert_eq(m.src_gen, 7, "a try is the same connection");
		cr_assert_eq(m.pdata_len, sizeof(PD_REQ));
	}
	cr_assert_eq(fab_rdm_conn_next_tick(&p.cli), 1000);
	fab_rdm_conn_tick(&p.cli, 999, &p.out);
	expect_nothing(&p.out);
	fab_rdm_conn_tick(&p.cli, 1000, &p.out);
	expect(&p.out, 0, NULL, RPMA_CONN_UNREACHABLE);
	fab_rdm_conn_tick(&p.cli, 5000, &p.out);
	expect_nothing(&p.out);
	cr_assert(fab_rdm_conn_done(&p.cli, 5000));
}

Test(rdm_conn, duplicate_request_gets_the_same_accept)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_request(&p, 0);
	/* while the application decides, a try gets PENDING and no second request */
	fab_rdm_conn_tick(&p.cli, 250, &o);
	expect_msg(&o, FAB_RDM_REQ, RPMA_CONN_UNDEFINED);
	struct fab_rdm_out retry = o;
	cr_assert_eq(deliver(&retry, 0, &p.srv, 250, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_PENDING, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].seq, 2, "PENDING names the try it answers");
	cr_assert_eq(p.srv.state, FAB_RDM_ST_REQ_RCVD);

	cr_assert_eq(fab_rdm_conn_accept(&p.srv, PD_ACC, sizeof(PD_ACC), 300, &p.out), 0);
	struct fab_rdm_out first_accept = p.out;
	/* the ACCEPT is late; another try comes: the same ACCEPT again, no event */
	cr_assert_eq(deliver(&retry, 0, &p.srv, 310, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_ACCEPT, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].pdata_len, sizeof(PD_ACC));
	cr_assert_arr_eq(o.msgs[0].pdata, PD_ACC, sizeof(PD_ACC));
	struct fab_rdm_out second_accept = o;

	/* both ACCEPTs reach the client: one ESTABLISHED */
	cr_assert_eq(deliver(&first_accept, 0, &p.cli, 320, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_READY, RPMA_CONN_ESTABLISHED);
	cr_assert_eq(deliver(&second_accept, 0, &p.cli, 330, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_READY, RPMA_CONN_UNDEFINED);
	/* both READYs reach the server: one ESTABLISHED */
	cr_assert_eq(deliver(&o, 0, &p.srv, 340, &p.out), FAB_RDM_TAKEN);
	expect(&p.out, 0, NULL, RPMA_CONN_ESTABLISHED);
	cr_assert_eq(deliver(&o, 0, &p.srv, 350, &p.out), FAB_RDM_IGNORED);
	expect_nothing(&p.out);
	/* a try after that is answered, and still no event */
	cr_assert_eq(deliver(&retry, 0, &p.srv, 360, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_ACCEPT, RPMA_CONN_UNDEFINED);
}

/*
 * a server whose application is slow to decide: each PENDING moves the
 * client's deadline to a timeout ahead, up to decide_ms after the first REQ;
 * then the accept still establishes
 */
Test(rdm_conn, pending_waits_for_the_application)
{
	struct pair p;
	struct fab_rdm_out o, pend;
	pair_request(&p, 0);
	/* tries at 250, 500, ...; each answered PENDING */
	for (uint64_t t = 250; t <= 1750; t += 250) {
		cr_assert_eq(fab_rdm_conn_next_tick(&p.cli), t);
		fab_rdm_conn_tick(&p.cli, t, &o);
		expect_msg(&o, FAB_RDM_REQ, RPMA_CONN_UNDEFINED);
		cr_assert_eq(deliver(&o, 0, &p.srv, t, &pend), FAB_RDM_TAKEN);
		expect_msg(&pend, FAB_RDM_PENDING, RPMA_CONN_UNDEFINED);
		cr_assert_eq(deliver(&pend, 0, &p.cli, t + 1, &o), FAB_RDM_TAKEN);
		expect_nothing(&o);
		cr_assert_eq(p.cli.deadline, t + 1 + CFG.timeout_ms);
	}
	/* well past the timeout of the first REQ: still connecting */
	cr_assert_eq(p.cli.state, FAB_RDM_ST_REQ_SENT);
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, PD_ACC, sizeof(PD_ACC), 1800, &p.out), 0);
	cr_assert_eq(deliver(&p.out, 0, &p.cli, 1810, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_READY, RPMA_CONN_ESTABLISHED);
	/* a late PENDING changes nothing now */
	cr_assert_eq(deliver(&pend, 0, &p.cli, 1820, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
	cr_assert_eq(p.cli.state, FAB_RDM_ST_ESTABLISHED);
}

/* PENDING never takes a connect beyond decide_ms; without PENDING, the timeout */
Test(rdm_conn, pending_is_bounded)
{
	struct pair p;
	struct fab_rdm_out o, pend;
	pair_request(&p, 0);
	fab_rdm_conn_tick(&p.cli, 250, &o);
	cr_assert_eq(deliver(&o, 0, &p.srv, 250, &pend), FAB_RDM_TAKEN);
	expect_msg(&pend, FAB_RDM_PENDING, RPMA_CONN_UNDEFINED);
	/* the same PENDING again and again: the deadline stops at 3000 */
	for (uint64_t t = 500; t <= 2900; t += 200) {
		cr_assert_eq(deliver(&pend, 0, &p.cli, t, &o), FAB_RDM_TAKEN);
		uint64_t want = t + CFG.timeout_ms < 3000 ? t + CFG.timeout_ms : 3000;
		cr_assert_eq(p.cli.deadline, want, "at %llu: deadline %llu, expected %llu",
			     (unsigned long long)t, (unsigned long long)p.cli.deadline,
			     (unsigned long long)want);
	}
	fab_rdm_conn_tick(&p.cli, 2999, &o);
	cr_assert_eq(o.nevents, 0);
	fab_rdm_conn_tick(&p.cli, 3000, &o);
	expect(&o, 0, NULL, RPMA_CONN_UNREACHABLE);

	/* decide_ms 0 (or below the timeout): PENDING extends nothing */
	struct fab_rdm_cfg plain = CFG;
	plain.decide_ms = 0;
	struct fab_rdm_conn c;
	cr_assert_eq(fab_rdm_conn_connect(&c, &plain, 3, 8, CLIENT_ADDR, sizeof(CLIENT_ADDR), NULL,
					  0, 0, &o),
		     0);
	pend.msgs[0].dst_gen = 8;
	cr_assert_eq(deliver(&pend, 0, &c, 900, &o), FAB_RDM_TAKEN);
	cr_assert_eq(c.deadline, 1000);
	fab_rdm_conn_tick(&c, 1000, &o);
	expect(&o, 0, NULL, RPMA_CONN_UNREACHABLE);
}

/* PENDING of another connection, or to a server, or before the REQ: not ours to act on */
Test(rdm_conn, pending_elsewhere_is_ignored)
{
	struct pair p;
	struct fab_rdm_out o, pend;
	pair_establish(&p, 0);
	struct fab_rdm_msg m = {.type = FAB_RDM_PENDING,
				.src_id = 5,
				.src_gen = 2,
				.dst_id = 3,
				.dst_gen = 7,
				.seq = 2};
	pend.nmsgs = 1;
	pend.nevents = 0;
	pend.msgs[0] = m;
	/* established: ignored */
	cr_assert_eq(deliver(&pend, 0, &p.cli, 10, &o), FAB_RDM_IGNORED);
	/* another generation: stale */
	pend.msgs[0].dst_gen = 6;
	cr_assert_eq(deliver(&pend, 0, &p.cli, 10, &o), FAB_RDM_STALE);
	/* at the server: ignored */
	pend.msgs[0].src_id = 3;
	pend.msgs[0].src_gen = 7;
	pend.msgs[0].dst_id = 5;
	pend.msgs[0].dst_gen = 2;
	cr_assert_eq(deliver(&pend, 0, &p.srv, 10, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
}

Test(rdm_conn, reject_and_its_repeats)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_conn_reject(&p.srv, FAB_RDM_REASON_APP, 100, &p.out), 0);
	expect_msg(&p.out, FAB_RDM_REJECT, RPMA_CONN_UNDEFINED);
	cr_assert_eq(p.out.msgs[0].reason, FAB_RDM_REASON_APP);
	struct fab_rdm_out rej = p.out;
	/* a try that crossed the REJECT gets it again */
	cr_assert_eq(fab_rdm_conn_recv(&p.srv, &p.req, 150, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_REJECT, RPMA_CONN_UNDEFINED);
	cr_assert_not(fab_rdm_conn_done(&p.srv, 1099));
	cr_assert_eq(fab_rdm_conn_next_tick(&p.srv), 1100);
	cr_assert(fab_rdm_conn_done(&p.srv, 1100));

	cr_assert_eq(deliver(&rej, 0, &p.cli, 160, &o), FAB_RDM_TAKEN);
	expect(&o, 0, NULL, RPMA_CONN_REJECTED);
	/* the second REJECT changes nothing */
	cr_assert_eq(deliver(&rej, 0, &p.cli, 170, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.cli, 2000, &o);
	expect_nothing(&o);
}

Test(rdm_conn, listener_rejects_without_a_connection)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_reply_stateless(&p.req, 0, &o), 0);
	cr_assert_eq(fab_rdm_reply_stateless(&p.req, 1, &o), 1);
	expect_msg(&o, FAB_RDM_REJECT, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].src_id, 0);
	cr_assert_eq(o.msgs[0].dst_id, 3);
	cr_assert_eq(o.msgs[0].dst_gen, 7);
	cr_assert_eq(deliver(&o, 0, &p.cli, 10, &p.out), FAB_RDM_TAKEN);
	expect(&p.out, 0, NULL, RPMA_CONN_REJECTED);
}

Test(rdm_conn, stale_generation_is_dropped)
{
	struct pair p;
	struct fab_rdm_out o, old_ka;
	pair_establish(&p, 0);
	/* the server's keep-alive to the client's connection (3, 7) is late */
	fab_rdm_conn_tick(&p.srv, 100, &old_ka);
	expect_msg(&old_ka, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	/* meanwhile the client's slot 3 holds a new connection, generation 8 */
	struct fab_rdm_conn fresh;
	cr_assert_eq(fab_rdm_conn_connect(&fresh, &CFG, 3, 8, CLIENT_ADDR, sizeof(CLIENT_ADDR),
					  NULL, 0, 100, &o),
		     0);
	struct fab_rdm_out fresh_req = o;
	cr_assert_eq(deliver(&old_ka, 0, &fresh, 110, &o), FAB_RDM_STALE);
	expect_nothing(&o);
	cr_assert_eq(fresh.state, FAB_RDM_ST_REQ_SENT);
	/* the new REQ is not a try of the old request for the old server connection */
	cr_assert_eq(deliver(&fresh_req, 0, &p.srv, 110, &o), FAB_RDM_STALE);
	expect_nothing(&o);
	/* a message naming us but from another generation of the peer */
	struct fab_rdm_msg m = {
		.type = FAB_RDM_DISC, .src_id = 5, .src_gen = 1, .dst_id = 3, .dst_gen = 7};
	cr_assert_eq(fab_rdm_conn_recv(&p.cli, &m, 120, &o), FAB_RDM_STALE);
	expect_nothing(&o);
	cr_assert_eq(p.cli.state, FAB_RDM_ST_ESTABLISHED);
	/* an ACCEPT for the old generation does not establish the new connection */
	m.type = FAB_RDM_ACCEPT;
	m.src_gen = 2;
	cr_assert_eq(fab_rdm_conn_recv(&fresh, &m, 130, &o), FAB_RDM_STALE);
	expect_nothing(&o);
	/* a REJECT for the old generation does not end it either */
	m.type = FAB_RDM_REJECT;
	m.reason = FAB_RDM_REASON_APP;
	cr_assert_eq(fab_rdm_conn_recv(&fresh, &m, 130, &o), FAB_RDM_STALE);
	cr_assert_eq(fresh.state, FAB_RDM_ST_REQ_SENT);
}

Test(rdm_conn, keepalive_while_idle_and_lost)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_establish(&p, 0);
	fab_rdm_conn_tick(&p.cli, 99, &o);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.cli, 100, &o);
	expect_msg(&o, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].seq, 1);
	cr_assert_eq(deliver(&o, 0, &p.srv, 100, &p.out), FAB_RDM_TAKEN);
	expect_nothing(&p.out);
	/* our own data defers the keep-alive */
	fab_rdm_conn_sent(&p.cli, 150);
	fab_rdm_conn_tick(&p.cli, 200, &o);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.cli, 250, &o);
	expect_msg(&o, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].seq, 2);
	/* the server heard nothing since 0 but the client's data at 600 */
	fab_rdm_conn_heard(&p.cli, 600);
	fab_rdm_conn_tick(&p.cli, 1000, &o);
	expect_msg(&o, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	cr_assert_eq(fab_rdm_conn_next_tick(&p.cli), 1100);
	fab_rdm_conn_tick(&p.cli, 1599, &o);
	cr_assert_eq(o.nevents, 0);
	fab_rdm_conn_tick(&p.cli, 1600, &o);
	expect(&o, 0, NULL, RPMA_CONN_LOST);
	/* the server heard the client last at 100 */
	fab_rdm_conn_tick(&p.srv, 1099, &o);
	cr_assert_eq(o.nevents, 0);
	fab_rdm_conn_tick(&p.srv, 1100, &o);
	expect(&o, 0, NULL, RPMA_CONN_LOST);
	fab_rdm_conn_tick(&p.srv, 9000, &o);
	expect_nothing(&o);
}

Test(rdm_conn, orderly_disconnect)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_establish(&p, 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.cli, 10, &o), 0);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	struct fab_rdm_out disc = o;
	cr_assert_eq(fab_rdm_conn_disconnect(&p.cli, 11, &o), 0);
	expect_nothing(&o);
	cr_assert_eq(deliver(&disc, 0, &p.srv, 12, &p.out), FAB_RDM_TAKEN);
	expect_msg(&p.out, FAB_RDM_DISC_ACK, RPMA_CONN_CLOSED);
	struct fab_rdm_out ack = p.out;
	/* a try of the DISC: acknowledged again, no second CLOSED */
	cr_assert_eq(deliver(&disc, 0, &p.srv, 13, &p.out), FAB_RDM_TAKEN);
	expect_msg(&p.out, FAB_RDM_DISC_ACK, RPMA_CONN_UNDEFINED);
	cr_assert_eq(deliver(&ack, 0, &p.cli, 14, &o), FAB_RDM_TAKEN);
	expect(&o, 0, NULL, RPMA_CONN_CLOSED);
	cr_assert_eq(deliver(&p.out, 0, &p.cli, 15, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
	cr_assert(fab_rdm_conn_done(&p.cli, 15));
	cr_assert(fab_rdm_conn_done(&p.srv, 15));
	/* nothing is due any more */
	cr_assert_eq(fab_rdm_conn_next_tick(&p.cli), UINT64_MAX);
	fab_rdm_conn_tick(&p.srv, 5000, &o);
	expect_nothing(&o);
}

Test(rdm_conn, simultaneous_disconnects)
{
	struct pair p;
	struct fab_rdm_out oc, os, o;
	pair_establish(&p, 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.cli, 10, &oc), 0);
	expect_msg(&oc, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.srv, 10, &os), 0);
	expect_msg(&os, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	/* the DISCs cross: each side acknowledges and closes, once */
	struct fab_rdm_out ack_c, ack_s;
	cr_assert_eq(deliver(&os, 0, &p.cli, 20, &ack_c), FAB_RDM_TAKEN);
	expect_msg(&ack_c, FAB_RDM_DISC_ACK, RPMA_CONN_CLOSED);
	cr_assert_eq(deliver(&oc, 0, &p.srv, 20, &ack_s), FAB_RDM_TAKEN);
	expect_msg(&ack_s, FAB_RDM_DISC_ACK, RPMA_CONN_CLOSED);
	cr_assert_eq(deliver(&ack_s, 0, &p.cli, 30, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
	cr_assert_eq(deliver(&ack_c, 0, &p.srv, 30, &o), FAB_RDM_IGNORED);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.cli, 2000, &o);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.srv, 2000, &o);
	expect_nothing(&o);
}

Test(rdm_conn, disconnect_retried_then_closed_by_timeout)
{
	struct pair p;
	struct fab_rdm_out o;
	pair_establish(&p, 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.srv, 0, &o), 0);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].seq, 1);
	fab_rdm_conn_tick(&p.srv, 250, &o);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].seq, 2);
	/* no keep-alive while leaving */
	fab_rdm_conn_tick(&p.srv, 260, &o);
	expect_nothing(&o);
	fab_rdm_conn_tick(&p.srv, 999, &o);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	fab_rdm_conn_tick(&p.srv, 1000, &o);
	expect(&o, 0, NULL, RPMA_CONN_CLOSED);
}

Test(rdm_conn, disconnect_while_connecting)
{
	struct pair p;
	struct fab_rdm_out o, acc;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.cli, 10, &o), 0);
	expect(&o, 0, NULL, RPMA_CONN_CLOSED);
	/* the server's ACCEPT comes late: the client tells it to go */
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, NULL, 0, 20, &acc), 0);
	cr_assert_eq(deliver(&acc, 0, &p.cli, 30, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].dst_id, 5);
	cr_assert_eq(o.msgs[0].dst_gen, 2);
	cr_assert_eq(deliver(&o, 0, &p.srv, 40, &p.out), FAB_RDM_TAKEN);
	expect_msg(&p.out, FAB_RDM_DISC_ACK, RPMA_CONN_CLOSED);
}

Test(rdm_conn, disc_after_giving_up_is_acknowledged_to_its_sender)
{
	struct pair p;
	struct fab_rdm_out o, acc;
	pair_request(&p, 0);
	/* the client gives up before any answer: it never learns the server's ids */
	fab_rdm_conn_tick(&p.cli, 1000, &o);
	expect(&o, 0, NULL, RPMA_CONN_UNREACHABLE);
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, NULL, 0, 1000, &acc), 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.srv, 1001, &p.out), 0);
	expect_msg(&p.out, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	cr_assert_eq(deliver(&p.out, 0, &p.cli, 1002, &o), FAB_RDM_TAKEN);
	expect_msg(&o, FAB_RDM_DISC_ACK, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].dst_id, 5);
	cr_assert_eq(o.msgs[0].dst_gen, 2);
	cr_assert_eq(deliver(&o, 0, &p.srv, 1003, &p.out), FAB_RDM_TAKEN);
	expect(&p.out, 0, NULL, RPMA_CONN_CLOSED);
}

Test(rdm_conn, accept_never_answered_is_unreachable)
{
	struct pair p;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, NULL, 0, 100, &p.out), 0);
	cr_assert_eq(fab_rdm_conn_next_tick(&p.srv), 1100);
	cr_assert_not(fab_rdm_conn_gives_up(&p.srv, 1099));
	fab_rdm_conn_tick(&p.srv, 1099, &p.out);
	expect_nothing(&p.out);
	cr_assert(fab_rdm_conn_gives_up(&p.srv, 1100));
	fab_rdm_conn_tick(&p.srv, 1100, &p.out);
	expect_msg(&p.out, FAB_RDM_DISC, RPMA_CONN_UNREACHABLE);
	cr_assert_not(fab_rdm_conn_gives_up(&p.srv, 9000), "a closed connection gives up nothing");
}

/*
 * fab_rdm_conn_gives_up tells the ticks that end a connection for its peer's
 * silence (the caller reads what arrived first), and no other tick
 */
Test(rdm_conn, gives_up_only_where_the_tick_ends_for_silence)
{
	struct pair q, p;
	struct fab_rdm_out o;
	/* the client's REQ: tries are not giving up, the deadline is */
	pair_request(&q, 0);
	cr_assert_not(fab_rdm_conn_gives_up(&q.cli, 250), "a retry of the REQ");
	cr_assert_not(fab_rdm_conn_gives_up(&q.srv, 5000), "the application decides: no timer");
	cr_assert(fab_rdm_conn_gives_up(&q.cli, 1000));
	/* established: a keep-alive is due, not an end */
	pair_establish(&p, 0);
	cr_assert_not(fab_rdm_conn_gives_up(&p.cli, 100));
	fab_rdm_conn_tick(&p.cli, 100, &o);
	expect_msg(&o, FAB_RDM_KEEPALIVE, RPMA_CONN_UNDEFINED);
	cr_assert_not(fab_rdm_conn_gives_up(&p.cli, 999));
	cr_assert(fab_rdm_conn_gives_up(&p.cli, 1000));
	fab_rdm_conn_heard(&p.cli, 900);
	cr_assert_not(fab_rdm_conn_gives_up(&p.cli, 1000), "heard at 900");
	/* leaving: the DISC's retries are not giving up, its deadline is */
	cr_assert_eq(fab_rdm_conn_disconnect(&p.cli, 1000, &o), 0);
	cr_assert_not(fab_rdm_conn_gives_up(&p.cli, 1250));
	cr_assert(fab_rdm_conn_gives_up(&p.cli, 2000));
	fab_rdm_conn_tick(&p.cli, 2000, &o);
	expect(&o, 0, NULL, RPMA_CONN_CLOSED);
	cr_assert_not(fab_rdm_conn_gives_up(&p.cli, 9000));
}

Test(rdm_conn, stateless_replies)
{
	struct fab_rdm_out o;
	const struct fab_rdm_msg disc = {.type = FAB_RDM_DISC,
					 .src_id = 4,
					 .src_gen = 9,
					 .dst_id = 6,
					 .dst_gen = 1,
					 .seq = 3};
	cr_assert_eq(fab_rdm_reply_stateless(&disc, 0, &o), 1);
	expect_msg(&o, FAB_RDM_DISC_ACK, RPMA_CONN_UNDEFINED);
	cr_assert_eq(o.msgs[0].src_id, 6);
	cr_assert_eq(o.msgs[0].src_gen, 1);
	cr_assert_eq(o.msgs[0].dst_id, 4);
	cr_assert_eq(o.msgs[0].dst_gen, 9);
	cr_assert_eq(o.msgs[0].seq, 3);
	uint8_t buf[FAB_RDM_MSG_MAX];
	wire(&o.msgs[0], buf);
	struct fab_rdm_msg m = disc;
	m.type = FAB_RDM_ACCEPT;
	cr_assert_eq(fab_rdm_reply_stateless(&m, 0, &o), 1);
	expect_msg(&o, FAB_RDM_DISC, RPMA_CONN_UNDEFINED);
	wire(&o.msgs[0], buf);
	const uint8_t others[] = {FAB_RDM_READY, FAB_RDM_DISC_ACK, FAB_RDM_KEEPALIVE};
	for (unsigned i = 0; i < sizeof(others); i++) {
		m.type = others[i];
		cr_assert_eq(fab_rdm_reply_stateless(&m, 1, &o), 0);
		expect_nothing(&o);
	}
	m.type = FAB_RDM_REJECT;
	m.reason = FAB_RDM_REASON_APP;
	cr_assert_eq(fab_rdm_reply_stateless(&m, 1, &o), 0);
}

Test(rdm_conn, invalid_calls)
{
	struct fab_rdm_conn c;
	struct fab_rdm_out o;
	uint8_t pd[FAB_RDM_PDATA_MAX + 1] = {0};
	uint8_t addr[FAB_RDM_ADDR_MAX + 1] = {0};
	struct fab_rdm_cfg bad = CFG;
	bad.retry_ms = 0;
	cr_assert_eq(fab_rdm_conn_connect(&c, &bad, 1, 1, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	bad = CFG;
	bad.timeout_ms = 0;
	cr_assert_eq(fab_rdm_conn_connect(&c, &bad, 1, 1, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	bad = CFG;
	bad.keepalive_ms = 0;
	cr_assert_eq(fab_rdm_conn_connect(&c, &bad, 1, 1, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, NULL, 1, 1, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 0, 1, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 0, addr, 1, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 1, addr, 0, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 1, addr, sizeof(addr), NULL, 0, 0, &o),
		     RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 1, addr, 1, pd, sizeof(pd), 0, &o),
		     RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 1, addr, 1, NULL, 1, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(o.nmsgs, 0);
	cr_assert_eq(fab_rdm_conn_connect(&c, &CFG, 1, 1, addr, FAB_RDM_ADDR_MAX, pd,
					  FAB_RDM_PDATA_MAX, 0, &o),
		     0);
	expect_msg(&o, FAB_RDM_REQ, RPMA_CONN_UNDEFINED);
	/* client calls of the server */
	cr_assert_eq(fab_rdm_conn_accept(&c, NULL, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_reject(&c, FAB_RDM_REASON_APP, 0, &o), RPMA_E_INVAL);
	/* a server connection from something that is no REQ */
	struct fab_rdm_msg m = {
		.type = FAB_RDM_DISC, .src_id = 1, .src_gen = 1, .dst_id = 1, .dst_gen = 1};
	cr_assert_eq(fab_rdm_conn_from_req(&c, &CFG, 1, 1, &m, 0), RPMA_E_INVAL);

	struct pair p;
	pair_request(&p, 0);
	cr_assert_eq(fab_rdm_conn_disconnect(&p.srv, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_reject(&p.srv, 0, 0, &o), RPMA_E_INVAL);
	cr_assert_eq(fab_rdm_conn_accept(&p.srv, pd, sizeof(pd), 0, &o), RPMA_E_INVAL);
	cr_assert_eq(p.srv.state, FAB_RDM_ST_REQ_RCVD);
	memset(&c, 0, sizeof(c));
	cr_assert_eq(fab_rdm_conn_disconnect(&c, 0, &o), RPMA_E_INVAL);
}

/* the tag bits an entry keeps, read from its mem_tag_format (libfabric 2.1's values) */
Test(rdm_tags, bits_of_a_format)
{
	cr_assert_eq(fab_rdm_tag_bits(0), 64);			   /* FI_TAG_BITS: all of them */
	cr_assert_eq(fab_rdm_tag_bits(0xAAAAAAAAAAAAAAAAULL), 64); /* FI_TAG_GENERIC: shm, tcp */
	cr_assert_eq(fab_rdm_tag_bits(0xAAAAAAAAAAAAAAAAULL >> 1), 63); /* one of rxm's entries */
	cr_assert_eq(fab_rdm_tag_bits(0xAAAAAAAAAAAAAAAAULL >> 4), 60); /* psm3 with CQ data */
	cr_assert_eq(fab_rdm_tag_bits(1), 1);
	cr_assert(fab_rdm_tag_bits(0xAAAAAAAAAAAAAAAAULL >> 1) >= FAB_RDM_TAG_BITS);
	cr_assert(fab_rdm_tag_bits(0xAAAAAAAAAAAAAAAAULL >> 2) < FAB_RDM_TAG_BITS);
}
