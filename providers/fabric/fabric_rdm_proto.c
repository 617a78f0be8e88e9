/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_rdm_proto.c -- wire codec and state machine of connections over FI_EP_RDM */

#include <stdlib.h>
#include <string.h>

#include "fabric_rdm_proto.h"

/* ------------------------------------------------------------ codec */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* fields_ok -- the per-type rules of the header's fields */
static int fields_ok(const struct fab_rdm_msg *m)
{
	if (m->type < FAB_RDM_REQ || m->type > FAB_RDM_TYPE_LAST)
		return 0;
	if (m->type == FAB_RDM_REJECT) {
		if (m->reason < FAB_RDM_REASON_APP || m->reason > FAB_RDM_REASON_LAST)
			return 0;
	} else if (m->reason != 0) {
		return 0;
	}
	if (m->pdata_len && m->type != FAB_RDM_REQ && m->type != FAB_RDM_ACCEPT)
		return 0;
	if (m->type == FAB_RDM_REQ) {
		if (m->addr_len == 0 || m->addr_len > FAB_RDM_ADDR_MAX)
			return 0;
		if (m->dst_id != 0 || m->dst_gen != 0)
			return 0;
	} else {
		/* an ACCEPT may name the endpoint the connection continues on */
		if (m->addr_len > (m->type == FAB_RDM_ACCEPT ? FAB_RDM_ADDR_MAX : 0))
			return 0;
		if (m->dst_id == 0 || m->dst_gen == 0)
			return 0;
	}
	/* the sender is known, but for a REJECT of the listener itself */
	if (m->src_id == 0 || m->src_gen == 0) {
		if (m->type != FAB_RDM_REJECT || m->src_id != 0 || m->src_gen != 0)
			return 0;
	}
	return 1;
}

/* fab_rdm_encode -- header, address, private data */
size_t fab_rdm_encode(const struct fab_rdm_msg *m, void *out, size_t out_size)
{
	if (m == NULL || out == NULL || !fields_ok(m))
		return 0;
	if ((m->addr_len && m->addr == NULL) || (m->pdata_len && m->pdata == NULL))
		return 0;
	size_t len = FAB_RDM_HDR_SIZE + (size_t)m->addr_len + m->pdata_len;
	if (out_size < len)
		return 0;
	uint8_t *o = out;
	memcpy(o, FAB_RDM_MAGIC, 4);
	o[4] = (uint8_t)(FAB_RDM_MAJOR << 4 | FAB_RDM_MINOR);
	o[5] = m->type;
	o[6] = m->reason;
	o[7] = m->pdata_len;
	put32(o + 8, m->src_id);
	put32(o + 12, m->src_gen);
	put32(o + 16, m->dst_id);
	put32(o + 20, m->dst_gen);
	put32(o + 24, m->seq);
	o[28] = (uint8_t)m->addr_len;
	o[29] = (uint8_t)(m->addr_len >> 8);
	o[30] = 0;
	o[31] = 0;
	if (m->addr_len)
		memcpy(o + FAB_RDM_HDR_SIZE, m->addr, m->addr_len);
	if (m->pdata_len)
		memcpy(o + FAB_RDM_HDR_SIZE + m->addr_len, m->pdata, m->pdata_len);
	return len;
}

/* fab_rdm_decode -- every field checked before anything is trusted */
enum fab_rdm_status fab_rdm_decode(const void *wire, size_t len, struct fab_rdm_msg *m)
{
	const uint8_t *w = wire;
	memset(m, 0, sizeof(*m));
	if (w == NULL || len < FAB_RDM_HDR_SIZE)
		return FAB_RDM_E_SHORT;
	if (memcmp(w, FAB_RDM_MAGIC, 4) != 0)
		return FAB_RDM_E_MAGIC;
	if ((w[4] >> 4) != FAB_RDM_MAJOR)
		return FAB_RDM_E_MAJOR;
	unsigned minor = w[4] & 0xfu;
	struct fab_rdm_msg d = {
		.type = w[5],
		.reason = w[6],
		.pdata_len = w[7],
		.src_id = get32(w + 8),
		.src_gen = get32(w + 12),
		.dst_id = get32(w + 16),
		.dst_gen = get32(w + 20),
		.seq = get32(w + 24),
		.addr_len = (uint16_t)(w[28] | w[29] << 8),
	};
	if (d.type < FAB_RDM_REQ || d.type > FAB_RDM_TYPE_LAST)
		return FAB_RDM_E_TYPE;
	if (w[30] != 0 || w[31] != 0 || !fields_ok(&d))
		return FAB_RDM_E_FIELD;
	size_t need = FAB_RDM_HDR_SIZE + (size_t)d.addr_len + d.pdata_len;
	/* our minor: exactly; a later minor may append bytes */
	if (len < need || (minor <= FAB_RDM_MINOR && len != need))
		return FAB_RDM_E_LENGTH;
	if (d.addr_len)
		d.addr = w + FAB_RDM_HDR_SIZE;
	if (d.pdata_len)
		d.pdata = w + FAB_RDM_HDR_SIZE + d.addr_len;
	*m = d;
	return FAB_RDM_OK;
}

/* fab_rdm_status_str -- what a status means */
const char *fab_rdm_status_str(enum fab_rdm_status st)
{
	switch (st) {
	case FAB_RDM_OK:
		return "a valid message";
	case FAB_RDM_E_SHORT:
		return "shorter than a header";
	case FAB_RDM_E_MAGIC:
		return "no librpma magic";
	case FAB_RDM_E_MAJOR:
		return "another major version";
	case FAB_RDM_E_TYPE:
		return "an unknown message type";
	case FAB_RDM_E_FIELD:
		return "a field its type does not allow";
	case FAB_RDM_E_LENGTH:
		return "lengths that do not add up to its size";
	}
	return "an unknown status";
}

/* fab_rdm_type_str -- a message type's name */
const char *fab_rdm_type_str(unsigned type)
{
	static const char *const names[] = {
		[FAB_RDM_REQ] = "REQ",
		[FAB_RDM_ACCEPT] = "ACCEPT",
		[FAB_RDM_REJECT] = "REJECT",
		[FAB_RDM_READY] = "READY",
		[FAB_RDM_DISC] = "DISC",
		[FAB_RDM_DISC_ACK] = "DISC_ACK",
		[FAB_RDM_KEEPALIVE] = "KEEPALIVE",
		[FAB_RDM_PENDING] = "PENDING",
	};
	if (type < FAB_RDM_REQ || type > FAB_RDM_TYPE_LAST)
		return "?";
	return names[type];
}

/* ------------------------------------------------------------ connection ids */

/* fab_rdm_ids_init -- all slots free, every generation 1 */
int fab_rdm_ids_init(struct fab_rdm_ids *ids, uint32_t nslots)
{
	memset(ids, 0, sizeof(*ids));
	if (nslots < 2)
		return RPMA_E_INVAL;
	ids->gen = calloc(nslots, sizeof(*ids->gen));
	ids->used = calloc(nslots, sizeof(*ids->used));
	if (ids->gen == NULL || ids->used == NULL) {
		fab_rdm_ids_fini(ids);
		return RPMA_E_NOMEM;
	}
	for (uint32_t i = 0; i < nslots; i++)
		ids->gen[i] = 1;
	ids->used[0] = 1; /* never given: 0 means unknown */
	ids->nslots = nslots;
	return 0;
}

/* fab_rdm_ids_fini -- free the tables */
void fab_rdm_ids_fini(struct fab_rdm_ids *ids)
{
	free(ids->gen);
	free(ids->used);
	memset(ids, 0, sizeof(*ids));
}

/* fab_rdm_ids_get -- the first free slot */
int fab_rdm_ids_get(struct fab_rdm_ids *ids, uint32_t *id, uint32_t *gen)
{
	for (uint32_t i = 1; i < ids->nslots; i++) {
		if (!ids->used[i]) {
			ids->used[i] = 1;
			*id = i;
			*gen = ids->gen[i];
			return 0;
		}
	}
	return RPMA_E_NOMEM;
}

/* fab_rdm_ids_put -- free a slot; its generation moves on (and skips 0) */
void fab_rdm_ids_put(struct fab_rdm_ids *ids, uint32_t id)
{
	if (id == 0 || id >= ids->nslots || !ids->used[id])
		return;
	ids->used[id] = 0;
	if (++ids->gen[id] == 0)
		ids->gen[id] = 1;
}

/* fab_rdm_ids_live -- in use, and this generation */
int fab_rdm_ids_live(const struct fab_rdm_ids *ids, uint32_t id, uint32_t gen)
{
	return id != 0 && id < ids->nslots && ids->used[id] && ids->gen[id] == gen;
}

/* ------------------------------------------------------------ state machine */

static void out_reset(struct fab_rdm_out *out)
{
	out->nmsgs = 0;
	out->nevents = 0;
}

static void out_event(struct fab_rdm_out *out, enum rpma_conn_event ev)
{
	out->events[0] = ev;
	out->nevents = 1;
}

/* out_msg -- a message of c to its peer (ids and seq filled in) */
static struct fab_rdm_msg *out_msg(struct fab_rdm_out *out, const struct fab_rdm_conn *c,
				   uint8_t type)
{
	struct fab_rdm_msg *m = &out->msgs[out->nmsgs++];
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->src_id = c->id;
	m->src_gen = c->gen;
	m->dst_id = c->peer_id;
	m->dst_gen = c->peer_gen;
	m->seq = c->seq;
	return m;
}

static int cfg_ok(const struct fab_rdm_cfg *cfg)
{
	return cfg != NULL && cfg->timeout_ms > 0 && cfg->retry_ms > 0 && cfg->keepalive_ms > 0;
}

static void send_req(struct fab_rdm_conn *c, struct fab_rdm_out *out)
{
	struct fab_rdm_msg *m = out_msg(out, c, FAB_RDM_REQ);
	m->addr_len = c->addr_len;
	m->addr = c->addr;
	m->pdata_len = c->pdata_len;
	m->pdata = c->pdata_len ? c->pdata : NULL;
}

static void send_accept(struct fab_rdm_conn *c, struct fab_rdm_out *out)
{
	struct fab_rdm_msg *m = out_msg(out, c, FAB_RDM_ACCEPT);
	m->addr_len = c->addr_len;
	m->addr = c->addr_len ? c->addr : NULL;
	m->pdata_len = c->pdata_len;
	m->pdata = c->pdata_len ? c->pdata : NULL;
}

static void send_reject(struct fab_rdm_conn *c, struct fab_rdm_out *out)
{
	out_msg(out, c, FAB_RDM_REJECT)->reason = c->reason;
}

/* close_with -- CLOSED, and the event when there is one */
static void close_with(struct fab_rdm_conn *c, struct fab_rdm_out *out, enum rpma_conn_event ev)
{
	c->state = FAB_RDM_ST_CLOSED;
	if (ev != RPMA_CONN_UNDEFINED)
		out_event(out, ev);
}

/* fab_rdm_conn_connect -- REQ_SENT, the first try out */
int fab_rdm_conn_connect(struct fab_rdm_conn *c, const struct fab_rdm_cfg *cfg, uint32_t id,
			 uint32_t gen, const void *addr, size_t addr_len, const void *pdata,
			 size_t pdata_len, uint64_t now, struct fab_rdm_out *out)
{
	out_reset(out);
	if (!cfg_ok(cfg) || id == 0 || gen == 0 || addr == NULL || addr_len == 0 ||
	    addr_len > FAB_RDM_ADDR_MAX || pdata_len > FAB_RDM_PDATA_MAX ||
	    (pdata_len && pdata == NULL))
		return RPMA_E_INVAL;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->id = id;
	c->gen = gen;
	c->addr_len = (uint16_t)addr_len;
	memcpy(c->addr, addr, addr_len);
	c->pdata_len = (uint8_t)pdata_len;
	if (pdata_len)
		memcpy(c->pdata, pdata, pdata_len);
	c->state = FAB_RDM_ST_REQ_SENT;
	c->seq = 1;
	c->deadline = now + cfg->timeout_ms;
	c->give_up = now + (cfg->decide_ms > cfg->timeout_ms ? cfg->decide_ms : cfg->timeout_ms);
	c->next_try = now + cfg->retry_ms;
	send_req(c, out);
	return 0;
}

/* fab_rdm_conn_from_req -- REQ_RCVD, the client's side copied */
int fab_rdm_conn_from_req(struct fab_rdm_conn *c, const struct fab_rdm_cfg *cfg, uint32_t id,
			  uint32_t gen, const struct fab_rdm_msg *m, uint64_t now)
{
	(void)now;
	if (!cfg_ok(cfg) || id == 0 || gen == 0 || m == NULL || m->type != FAB_RDM_REQ ||
	    !fields_ok(m) || m->addr == NULL || (m->pdata_len && m->pdata == NULL))
		return RPMA_E_INVAL;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->server = 1;
	c->id = id;
	c->gen = gen;
	c->peer_id = m->src_id;
	c->peer_gen = m->src_gen;
	c->peer_addr_len = m->addr_len;
	memcpy(c->peer_addr, m->addr, m->addr_len);
	c->peer_pdata_len = m->pdata_len;
	if (m->pdata_len)
		memcpy(c->peer_pdata, m->pdata, m->pdata_len);
	c->state = FAB_RDM_ST_REQ_RCVD;
	return 0;
}

/* fab_rdm_conn_is_req_of -- same client connection (ids) from the same address */
int fab_rdm_conn_is_req_of(const struct fab_rdm_conn *c, const struct fab_rdm_msg *m)
{
	return c->server && m->type == FAB_RDM_REQ && m->src_id == c->peer_id &&
	       m->src_gen == c->peer_gen && m->addr_len == c->peer_addr_len && m->addr != NULL &&
	       memcmp(m->addr, c->peer_addr, m->addr_len) == 0;
}

/* fab_rdm_conn_set_addr -- server: the address its ACCEPT names (0 bytes: none) */
int fab_rdm_conn_set_addr(struct fab_rdm_conn *c, const void *addr, size_t addr_len)
{
	if (addr_len > FAB_RDM_ADDR_MAX || (addr_len && addr == NULL))
		return RPMA_E_INVAL;
	c->addr_len = (uint16_t)addr_len;
	if (addr_len)
		memcpy(c->addr, addr, addr_len);
	return 0;
}

/* fab_rdm_conn_accept -- ACCEPT_SENT; READY (or any later message) establishes */
int fab_rdm_conn_accept(struct fab_rdm_conn *c, const void *pdata, size_t pdata_len, uint64_t now,
			struct fab_rdm_out *out)
{
	out_reset(out);
	if (c->state != FAB_RDM_ST_REQ_RCVD || pdata_len > FAB_RDM_PDATA_MAX ||
	    (pdata_len && pdata == NULL))
		return RPMA_E_INVAL;
	c->pdata_len = (uint8_t)pdata_len;
	if (pdata_len)
		memcpy(c->pdata, pdata, pdata_len);
	c->state = FAB_RDM_ST_ACCEPT_SENT;
	c->deadline = now + c->cfg.timeout_ms;
	c->last_heard = now;
	c->last_sent = now;
	send_accept(c, out);
	return 0;
}

/* fab_rdm_conn_reject -- CLOSED, remembered until the timeout */
int fab_rdm_conn_reject(struct fab_rdm_conn *c, enum fab_rdm_reason reason, uint64_t now,
			struct fab_rdm_out *out)
{
	out_reset(out);
	if (c->state != FAB_RDM_ST_REQ_RCVD || reason < FAB_RDM_REASON_APP ||
	    reason > FAB_RDM_REASON_LAST)
		return RPMA_E_INVAL;
	c->reason = (uint8_t)reason;
	c->rejected = 1;
	c->deadline = now + c->cfg.timeout_ms;
	send_reject(c, out);
	close_with(c, out, RPMA_CONN_UNDEFINED);
	return 0;
}

/* fab_rdm_conn_disconnect -- DISC_SENT, or CLOSED at once while no peer is known */
int fab_rdm_conn_disconnect(struct fab_rdm_conn *c, uint64_t now, struct fab_rdm_out *out)
{
	out_reset(out);
	switch (c->state) {
	case FAB_RDM_ST_REQ_SENT:
		close_with(c, out, RPMA_CONN_CLOSED);
		return 0;
	case FAB_RDM_ST_ACCEPT_SENT:
	case FAB_RDM_ST_ESTABLISHED:
		c->state = FAB_RDM_ST_DISC_SENT;
		c->seq = 1;
		c->deadline = now + c->cfg.timeout_ms;
		c->next_try = now + c->cfg.retry_ms;
		out_msg(out, c, FAB_RDM_DISC);
		return 0;
	case FAB_RDM_ST_DISC_SENT:
	case FAB_RDM_ST_CLOSED:
		return 0;
	case FAB_RDM_ST_IDLE:
	case FAB_RDM_ST_REQ_RCVD:
		break;
	}
	return RPMA_E_INVAL;
}

/* recv_req -- a try of the REQ this server connection was made from */
static enum fab_rdm_verdict recv_req(struct fab_rdm_conn *c, const struct fab_rdm_msg *m,
				     struct fab_rdm_out *out)
{
	if (!fab_rdm_conn_is_req_of(c, m))
		return FAB_RDM_STALE;
	switch (c->state) {
	case FAB_RDM_ST_ACCEPT_SENT:
	case FAB_RDM_ST_ESTABLISHED:
		/* our ACCEPT was lost or is late: the same answer again */
		send_accept(c, out);
		return FAB_RDM_TAKEN;
	case FAB_RDM_ST_CLOSED:
		if (!c->rejected)
			return FAB_RDM_IGNORED;
		send_reject(c, out);
		return FAB_RDM_TAKEN;
	case FAB_RDM_ST_REQ_RCVD:
		/*
		 * the application has the request and has not decided: tell the
		 * client it was heard, so that its timeout waits for the decision
		 * (verbs' connection manager does the same with its MRA)
		 */
		out_msg(out, c, FAB_RDM_PENDING)->seq = m->seq;
		return FAB_RDM_TAKEN;
	default:
		return FAB_RDM_IGNORED;
	}
}

/* fab_rdm_conn_recv -- check the ids, then the message's meaning in this state */
enum fab_rdm_verdict fab_rdm_conn_recv(struct fab_rdm_conn *c, const struct fab_rdm_msg *m,
				       uint64_t now, struct fab_rdm_out *out)
{
	out_reset(out);
	if (m->type == FAB_RDM_REQ)
		return recv_req(c, m, out);
	if (m->dst_id != c->id || m->dst_gen != c->gen)
		return FAB_RDM_STALE;
	if (m->type == FAB_RDM_REJECT) {
		/* the sender may be the listener itself (id 0) */
		if (c->state != FAB_RDM_ST_REQ_SENT)
			return FAB_RDM_IGNORED;
		close_with(c, out, RPMA_CONN_REJECTED);
		return FAB_RDM_TAKEN;
	}
	if (c->peer_gen != 0 && (m->src_id != c->peer_id || m->src_gen != c->peer_gen))
		return FAB_RDM_STALE;
	if (c->state == FAB_RDM_ST_ESTABLISHED)
		c->last_heard = now;

	switch (m->type) {
	case FAB_RDM_ACCEPT:
		if (c->server)
			return FAB_RDM_IGNORED;
		if (c->state == FAB_RDM_ST_REQ_SENT) {
			c->peer_id = m->src_id;
			c->peer_gen = m->src_gen;
			c->peer_addr_len = m->addr_len;
			if (m->addr_len)
				memcpy(c->peer_addr, m->addr, m->addr_len);
			c->peer_pdata_len = m->pdata_len;
			if (m->pdata_len)
				memcpy(c->peer_pdata, m->pdata, m->pdata_len);
			c->state = FAB_RDM_ST_ESTABLISHED;
			c->seq = 0;
			c->last_heard = now;
			c->last_sent = now;
			out_msg(out, c, FAB_RDM_READY);
			out_event(out, RPMA_CONN_ESTABLISHED);
			return FAB_RDM_TAKEN;
		}
		if (c->state == FAB_RDM_ST_ESTABLISHED) {
			out_msg(out, c, FAB_RDM_READY); /* our READY was lost */
			return FAB_RDM_TAKEN;
		}
		if (c->state == FAB_RDM_ST_CLOSED) {
			/* we gave up or left before it came: tell the server */
			struct fab_rdm_msg *d = out_msg(out, c, FAB_RDM_DISC);
			d->dst_id = m->src_id;
			d->dst_gen = m->src_gen;
			return FAB_RDM_TAKEN;
		}
		return FAB_RDM_IGNORED;
	case FAB_RDM_READY:
	case FAB_RDM_KEEPALIVE:
		if (c->server && c->state == FAB_RDM_ST_ACCEPT_SENT) {
			/* a KEEPALIVE proves the client established as well as READY does */
			c->state = FAB_RDM_ST_ESTABLISHED;
			c->last_heard = now;
			out_event(out, RPMA_CONN_ESTABLISHED);
			return FAB_RDM_TAKEN;
		}
		if (m->type == FAB_RDM_KEEPALIVE && c->state == FAB_RDM_ST_ESTABLISHED)
			return FAB_RDM_TAKEN;
		return FAB_RDM_IGNORED;
	case FAB_RDM_DISC:
		switch (c->state) {
		case FAB_RDM_ST_ACCEPT_SENT:
		case FAB_RDM_ST_ESTABLISHED:
		case FAB_RDM_ST_DISC_SENT: /* both disconnected at once */
			out_msg(out, c, FAB_RDM_DISC_ACK)->seq = m->seq;
			close_with(c, out, RPMA_CONN_CLOSED);
			return FAB_RDM_TAKEN;
		case FAB_RDM_ST_CLOSED: {
			/* our ack was lost, or we closed before knowing the peer */
			struct fab_rdm_msg *a = out_msg(out, c, FAB_RDM_DISC_ACK);
			a->seq = m->seq;
			a->dst_id = m->src_id;
			a->dst_gen = m->src_gen;
			return FAB_RDM_TAKEN;
		}
		default:
			return FAB_RDM_IGNORED;
		}
	case FAB_RDM_DISC_ACK:
		if (c->state != FAB_RDM_ST_DISC_SENT)
			return FAB_RDM_IGNORED;
		close_with(c, out, RPMA_CONN_CLOSED);
		return FAB_RDM_TAKEN;
	case FAB_RDM_PENDING: {
		if (c->server || c->state != FAB_RDM_ST_REQ_SENT)
			return FAB_RDM_IGNORED;
		/* the server is there: wait for its application, up to give_up */
		uint64_t until = now + c->cfg.timeout_ms;
		if (until > c->give_up)
			until = c->give_up;
		if (until > c->deadline)
			c->deadline = until;
		return FAB_RDM_TAKEN;
	}
	default:
		return FAB_RDM_IGNORED;
	}
}

/* fab_rdm_conn_gives_up -- the ends of fab_rdm_conn_tick that silence causes */
int fab_rdm_conn_gives_up(const struct fab_rdm_conn *c, uint64_t now)
{
	switch (c->state) {
	case FAB_RDM_ST_REQ_SENT:
	case FAB_RDM_ST_ACCEPT_SENT:
	case FAB_RDM_ST_DISC_SENT:
		return now >= c->deadline;
	case FAB_RDM_ST_ESTABLISHED:
		return now - c->last_heard >= c->cfg.timeout_ms;
	default:
		return 0;
	}
}

/* fab_rdm_conn_tick -- what is due at now (its ends for silence: fab_rdm_conn_gives_up) */
void fab_rdm_conn_tick(struct fab_rdm_conn *c, uint64_t now, struct fab_rdm_out *out)
{
	out_reset(out);
	int gives_up = fab_rdm_conn_gives_up(c, now);
	switch (c->state) {
	case FAB_RDM_ST_REQ_SENT:
		if (gives_up) {
			close_with(c, out, RPMA_CONN_UNREACHABLE);
		} else if (now >= c->next_try) {
			c->seq++;
			c->next_try = now + c->cfg.retry_ms;
			send_req(c, out);
		}
		return;
	case FAB_RDM_ST_ACCEPT_SENT:
		if (gives_up) {
			out_msg(out, c, FAB_RDM_DISC); /* in case the client got the ACCEPT */
			close_with(c, out, RPMA_CONN_UNREACHABLE);
		}
		return;
	case FAB_RDM_ST_ESTABLISHED:
		if (gives_up) {
			close_with(c, out, RPMA_CONN_LOST);
		} else if (now - c->last_sent >= c->cfg.keepalive_ms) {
			c->seq++;
			c->last_sent = now;
			out_msg(out, c, FAB_RDM_KEEPALIVE);
		}
		return;
	case FAB_RDM_ST_DISC_SENT:
		if (gives_up) {
			close_with(c, out, RPMA_CONN_CLOSED); /* the peer is gone: closed anyway */
		} else if (now >= c->next_try) {
			c->seq++;
			c->next_try = now + c->cfg.retry_ms;
			out_msg(out, c, FAB_RDM_DISC);
		}
		return;
	default:
		return;
	}
}

/* fab_rdm_conn_heard -- the peer's data counts as hearing from it */
void fab_rdm_conn_heard(struct fab_rdm_conn *c, uint64_t now)
{
	if (c->state == FAB_RDM_ST_ESTABLISHED && now > c->last_heard)
		c->last_heard = now;
}

/* fab_rdm_conn_sent -- our data makes a KEEPALIVE needless */
void fab_rdm_conn_sent(struct fab_rdm_conn *c, uint64_t now)
{
	if (c->state == FAB_RDM_ST_ESTABLISHED && now > c->last_sent)
		c->last_sent = now;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* fab_rdm_conn_next_tick -- the earliest of the state's timers */
uint64_t fab_rdm_conn_next_tick(const struct fab_rdm_conn *c)
{
	switch (c->state) {
	case FAB_RDM_ST_REQ_SENT:
	case FAB_RDM_ST_DISC_SENT:
		return min64(c->deadline, c->next_try);
	case FAB_RDM_ST_ACCEPT_SENT:
		return c->deadline;
	case FAB_RDM_ST_ESTABLISHED:
		return min64(c->last_heard + c->cfg.timeout_ms, c->last_sent + c->cfg.keepalive_ms);
	case FAB_RDM_ST_CLOSED:
		return c->rejected ? c->deadline : UINT64_MAX;
	default:
		return UINT64_MAX;
	}
}

/* fab_rdm_conn_done -- CLOSED, and past a reject's memory */
int fab_rdm_conn_done(const struct fab_rdm_conn *c, uint64_t now)
{
	return c->state == FAB_RDM_ST_CLOSED && (!c->rejected || now >= c->deadline);
}

/* fab_rdm_reply_stateless -- answers of a listener without the connection */
unsigned fab_rdm_reply_stateless(const struct fab_rdm_msg *m, int reject_req,
				 struct fab_rdm_out *out)
{
	out_reset(out);
	struct fab_rdm_msg *r = &out->msgs[0];
	memset(r, 0, sizeof(*r));
	r->src_id = m->dst_id;
	r->src_gen = m->dst_gen;
	r->dst_id = m->src_id;
	r->dst_gen = m->src_gen;
	r->seq = m->seq;
	switch (m->type) {
	case FAB_RDM_DISC:
		r->type = FAB_RDM_DISC_ACK;
		break;
	case FAB_RDM_ACCEPT:
		r->type = FAB_RDM_DISC;
		r->seq = 1;
		break;
	case FAB_RDM_REQ:
		if (!reject_req)
			return 0;
		r->type = FAB_RDM_REJECT;
		r->reason = FAB_RDM_REASON_PROTOCOL;
		break;
	default:
		return 0;
	}
	out->nmsgs = 1;
	return 1;
}
