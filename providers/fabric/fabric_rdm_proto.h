/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_rdm_proto.h -- the connection protocol over reliable-datagram endpoints */

/*
 * fabric_rdm.c wires it to libfabric (see rpma_fabric(7),
 * "RELIABLE-DATAGRAM ENDPOINTS", and HACKING.md).
 *
 * An FI_EP_RDM endpoint has no connections: librpma's connections are made
 * by a small protocol of tagged messages.  This file holds the wire codec
 * and the state machine of one connection.  Both are pure logic: no
 * libfabric call, no clock, no allocation in the machine; time is a number
 * of milliseconds the caller passes in, so the tests drive it explicitly.
 *
 * Every message starts with a 32-byte header (integers little-endian):
 *
 *   byte 0..3    magic 0x72 0x70 0x6d 0xd6 ("rpm" and 0xd6)
 *   byte 4       version: major in the high nibble, minor in the low (2.0:
 *                0x20; 1.1 added PENDING, 2.0 tags the application's
 *                messages with the receiving connection's id, fabric.h,
 *                which a 1.x peer neither sends nor takes: its messages
 *                are refused as another major version)
 *   byte 5       type (enum fab_rdm_type)
 *   byte 6       reason: REJECT only (enum fab_rdm_reason), else 0
 *   byte 7       n, the length of the private data (REQ and ACCEPT only)
 *   byte 8..11   the sender's connection id     (slot; 0 only in a REJECT
 *                without connection)
 *   byte 12..15  the sender's generation        (0 only with id 0)
 *   byte 16..19  the receiver's connection id   (0 in a REQ)
 *   byte 20..23  the receiver's generation      (0 in a REQ, else never 0)
 *   byte 24..27  sequence: the try of a REQ or DISC, the count of KEEPALIVEs
 *   byte 28..29  a, the length of the sender's endpoint address (REQ: the
 *                client's, at least 1 byte; ACCEPT: the endpoint the server's
 *                side of the connection continues on, or 0; else 0)
 *   byte 30..31  0
 *   then a bytes of address, then n bytes of private data.
 *
 * A message of version 2.0 is exactly 32 + a + n bytes; a later
 * minor version may append bytes, which this one ignores.  Anything else (another
 * magic or major version, an unknown type, a non-zero reserved field, a
 * field a type does not allow, a length that does not add up) is refused.
 */

#ifndef RPMA_FABRIC_RDM_PROTO_H
#define RPMA_FABRIC_RDM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

#define FAB_RDM_MAGIC	  "rpm\xd6"
#define FAB_RDM_MAJOR	  2
#define FAB_RDM_MINOR	  0
#define FAB_RDM_HDR_SIZE  32
#define FAB_RDM_PDATA_MAX 255 /* one length byte, as rdma_cm's limit for librpma */
#define FAB_RDM_ADDR_MAX  128 /* sockaddr_in6 is 28, an shm name is below 64 */
#define FAB_RDM_MSG_MAX	  (FAB_RDM_HDR_SIZE + FAB_RDM_ADDR_MAX + FAB_RDM_PDATA_MAX)

/*
 * FAB_RDM_TAG_BITS -- the tags of the protocol (the control tag, fabric_rdm.c,
 * and the application's, fab_rdm_app_tag) use bits 0 to 62.  A provider that
 * reserves upper tag bits says so with leading zero bits of its entry's
 * ep_attr->mem_tag_format (0 is FI_TAG_BITS: all 64): rxm keeps 63 in one
 * of its entries, psm3 60 where it carries CQ data (libfabric 2.1's
 * sources).  An entry with fewer than FAB_RDM_TAG_BITS is not used: its
 * provider would drop or mangle the upper bits and match the wrong receive.
 */
#define FAB_RDM_TAG_BITS 63

static inline int fab_rdm_tag_bits(uint64_t mem_tag_format)
{
	return mem_tag_format == 0 ? 64 : 64 - __builtin_clzll(mem_tag_format);
}

enum fab_rdm_type {
	FAB_RDM_REQ = 1,   /* client: connect, with its address and private data */
	FAB_RDM_ACCEPT,	   /* server: accepted, with its private data */
	FAB_RDM_REJECT,	   /* server: refused (reason) */
	FAB_RDM_READY,	   /* client: got the ACCEPT (the server's ESTABLISHED) */
	FAB_RDM_DISC,	   /* either side: disconnect */
	FAB_RDM_DISC_ACK,  /* either side: got the DISC */
	FAB_RDM_KEEPALIVE, /* either side: still here (sent while idle) */
	FAB_RDM_PENDING,   /* server (1.1): a REQ try came while the application decides */
	FAB_RDM_TYPE_LAST = FAB_RDM_PENDING,
};

enum fab_rdm_reason {
	FAB_RDM_REASON_APP = 1,	 /* the application deleted the request */
	FAB_RDM_REASON_PROTOCOL, /* the listener refused the request itself */
	FAB_RDM_REASON_LAST = FAB_RDM_REASON_PROTOCOL,
};

/* one message, decoded (addr and pdata point into the wire bytes or into a connection) */
struct fab_rdm_msg {
	uint8_t type;
	uint8_t reason;
	uint8_t pdata_len;
	uint16_t addr_len;
	uint32_t src_id, src_gen;
	uint32_t dst_id, dst_gen;
	uint32_t seq;
	const uint8_t *addr;
	const uint8_t *pdata;
};

/* what fab_rdm_decode() found */
enum fab_rdm_status {
	FAB_RDM_OK = 0,
	FAB_RDM_E_SHORT,  /* fewer bytes than a header */
	FAB_RDM_E_MAGIC,  /* not our magic */
	FAB_RDM_E_MAJOR,  /* another major version */
	FAB_RDM_E_TYPE,	  /* unknown type */
	FAB_RDM_E_FIELD,  /* a reserved, id, reason or length field the type does not allow */
	FAB_RDM_E_LENGTH, /* the lengths do not add up to the bytes that came */
};

/*
 * fab_rdm_encode -- the wire bytes of m into out (room for out_size bytes);
 * returns the bytes written, or 0 when m would not decode (bad fields) or
 * out is too small
 */
size_t fab_rdm_encode(const struct fab_rdm_msg *m, void *out, size_t out_size);

/*
 * fab_rdm_decode -- check len bytes at wire; on FAB_RDM_OK *m holds the
 * message (its addr and pdata point into wire); else *m is zeroed
 */
enum fab_rdm_status fab_rdm_decode(const void *wire, size_t len, struct fab_rdm_msg *m);

/* fab_rdm_status_str / fab_rdm_type_str -- a few words, for the log */
const char *fab_rdm_status_str(enum fab_rdm_status st);
const char *fab_rdm_type_str(unsigned type);

/* ------------------------------------------------------------ connection ids */

/*
 * Connection ids of one endpoint: a slot and a generation; freeing a slot
 * bumps its generation, so a message of an old connection in that slot
 * names a generation that no longer exists and is dropped.  Slot 0 is never
 * given (0 means "unknown" in a REQ), generations start at 1 and skip 0.
 */
struct fab_rdm_ids {
	uint32_t nslots;
	uint32_t *gen; /* the slot's current generation */
	uint8_t *used;
};

/* fab_rdm_ids_init -- nslots - 1 usable slots; 0 or RPMA_E_NOMEM / RPMA_E_INVAL */
int fab_rdm_ids_init(struct fab_rdm_ids *ids, uint32_t nslots);
void fab_rdm_ids_fini(struct fab_rdm_ids *ids);
/* fab_rdm_ids_get -- a free slot into *id, *gen; RPMA_E_NOMEM when none is free */
int fab_rdm_ids_get(struct fab_rdm_ids *ids, uint32_t *id, uint32_t *gen);
/* fab_rdm_ids_put -- free the slot (its next user gets the next generation) */
void fab_rdm_ids_put(struct fab_rdm_ids *ids, uint32_t id);
/* fab_rdm_ids_live -- is (id, gen) a connection in use now? */
int fab_rdm_ids_live(const struct fab_rdm_ids *ids, uint32_t id, uint32_t gen);

/* ------------------------------------------------------------ state machine */

enum fab_rdm_state {
	FAB_RDM_ST_IDLE = 0,
	FAB_RDM_ST_REQ_SENT,	/* client: REQ sent, retried until the timeout */
	FAB_RDM_ST_REQ_RCVD,	/* server: REQ taken, the application decides */
	FAB_RDM_ST_ACCEPT_SENT, /* server: ACCEPT sent, waiting for READY */
	FAB_RDM_ST_ESTABLISHED,
	FAB_RDM_ST_DISC_SENT, /* DISC sent, retried until DISC_ACK or the timeout */
	FAB_RDM_ST_CLOSED,    /* final: nothing more happens but answers to late tries */
};

struct fab_rdm_cfg {
	uint64_t timeout_ms;   /* connect and disconnect bound, and silence before LOST */
	uint64_t retry_ms;     /* between two tries of a REQ or DISC */
	uint64_t keepalive_ms; /* a KEEPALIVE after this much of our silence */
	/*
	 * client: the longest a connect waits in all while the server answers
	 * PENDING (its application has the request and has not decided); each
	 * PENDING moves the deadline to timeout_ms ahead, never beyond this
	 * from the first REQ (0: PENDING changes nothing)
	 */
	uint64_t decide_ms;
};

/* the outputs of one step: messages to send to the peer and events for the application */
#define FAB_RDM_OUT_MSGS 2
struct fab_rdm_out {
	unsigned nmsgs;
	struct fab_rdm_msg msgs[FAB_RDM_OUT_MSGS];
	unsigned nevents;
	enum rpma_conn_event events[1];
};

/* what a step did with a received message */
enum fab_rdm_verdict {
	FAB_RDM_TAKEN = 0, /* it changed the state or was answered */
	FAB_RDM_STALE,	   /* it belongs to another connection (ids or generations differ) */
	FAB_RDM_IGNORED,   /* ours, but meaningless in this state (a late duplicate) */
};

struct fab_rdm_conn {
	struct fab_rdm_cfg cfg;
	enum fab_rdm_state state;
	int server;		    /* made from a REQ */
	int rejected;		    /* CLOSED by a local reject: a REQ try gets the REJECT again */
	uint8_t reason;		    /* of that reject */
	uint32_t id, gen;	    /* ours */
	uint32_t peer_id, peer_gen; /* the peer's (0, 0 until known) */
	uint32_t seq;		    /* our last try / keep-alive count */
	uint64_t deadline;	    /* of REQ_SENT, ACCEPT_SENT, DISC_SENT */
	uint64_t give_up;	    /* REQ_SENT: the latest a PENDING moves deadline to */
	uint64_t next_try;	    /* REQ_SENT, DISC_SENT: the next retransmission */
	uint64_t last_heard;	    /* ESTABLISHED: the last message from the peer */
	uint64_t last_sent;	    /* ESTABLISHED: our last message */
	uint8_t pdata_len;	    /* ours: REQ or ACCEPT */
	uint8_t pdata[FAB_RDM_PDATA_MAX];
	uint8_t peer_pdata_len; /* the peer's: REQ (server) or ACCEPT (client) */
	uint8_t peer_pdata[FAB_RDM_PDATA_MAX];
	uint16_t addr_len; /* ours: sent in the REQ (client) or the ACCEPT (server) */
	uint8_t addr[FAB_RDM_ADDR_MAX];
	uint16_t peer_addr_len; /* the peer's: from the REQ (server) or the ACCEPT (client) */
	uint8_t peer_addr[FAB_RDM_ADDR_MAX];
};

/*
 * fab_rdm_conn_connect -- client: start connecting as (id, gen), own address
 * addr, private data pdata; out gets the first REQ.  RPMA_E_INVAL on a bad
 * config (a zero timeout or interval), length, id or generation.
 */
int fab_rdm_conn_connect(struct fab_rdm_conn *c, const struct fab_rdm_cfg *cfg, uint32_t id,
			 uint32_t gen, const void *addr, size_t addr_len, const void *pdata,
			 size_t pdata_len, uint64_t now, struct fab_rdm_out *out);

/*
 * fab_rdm_conn_from_req -- server: a new connection (id, gen) for the REQ m
 * (decoded, type REQ); REQ_RCVD with the client's ids, address and private
 * data copied.  RPMA_E_INVAL as above, or when m is no REQ.
 */
int fab_rdm_conn_from_req(struct fab_rdm_conn *c, const struct fab_rdm_cfg *cfg, uint32_t id,
			  uint32_t gen, const struct fab_rdm_msg *m, uint64_t now);

/* fab_rdm_conn_is_req_of -- is the REQ m a try of the request c was made from? */
int fab_rdm_conn_is_req_of(const struct fab_rdm_conn *c, const struct fab_rdm_msg *m);

/*
 * fab_rdm_conn_set_addr -- server: the address its ACCEPT carries (the
 * endpoint of the connection, which the client sends to from then on);
 * the client keeps the one it got in peer_addr.  RPMA_E_INVAL: too long.
 */
int fab_rdm_conn_set_addr(struct fab_rdm_conn *c, const void *addr, size_t addr_len);

/* fab_rdm_conn_accept -- server, REQ_RCVD: ACCEPT with pdata; RPMA_E_INVAL in another state */
int fab_rdm_conn_accept(struct fab_rdm_conn *c, const void *pdata, size_t pdata_len, uint64_t now,
			struct fab_rdm_out *out);

/* fab_rdm_conn_reject -- server, REQ_RCVD: REJECT (no event); RPMA_E_INVAL in another state */
int fab_rdm_conn_reject(struct fab_rdm_conn *c, enum fab_rdm_reason reason, uint64_t now,
			struct fab_rdm_out *out);

/*
 * fab_rdm_conn_disconnect -- either side: DISC, CLOSED comes with DISC_ACK,
 * the peer's DISC or the timeout (ESTABLISHED, ACCEPT_SENT).  In REQ_SENT
 * (no peer known yet) CLOSED comes at once, and a late ACCEPT gets a DISC;
 * 0 and nothing in a state already leaving (DISC_SENT, CLOSED);
 * RPMA_E_INVAL in IDLE and REQ_RCVD.
 */
int fab_rdm_conn_disconnect(struct fab_rdm_conn *c, uint64_t now, struct fab_rdm_out *out);

/* fab_rdm_conn_recv -- a message m for this connection arrived at now */
enum fab_rdm_verdict fab_rdm_conn_recv(struct fab_rdm_conn *c, const struct fab_rdm_msg *m,
				       uint64_t now, struct fab_rdm_out *out);

/* fab_rdm_conn_tick -- the time is now: retries, keep-alives, timeouts */
void fab_rdm_conn_tick(struct fab_rdm_conn *c, uint64_t now, struct fab_rdm_out *out);

/* fab_rdm_conn_heard / _sent -- data-path traffic of the connection counts as liveness */
void fab_rdm_conn_heard(struct fab_rdm_conn *c, uint64_t now);
void fab_rdm_conn_sent(struct fab_rdm_conn *c, uint64_t now);

/*
 * fab_rdm_conn_gives_up -- would a tick at now end the connection because
 * the peer was silent (no answer to a REQ, an ACCEPT or a DISC within the
 * timeout, no sign of life while established)?  The caller reads what has
 * already arrived first, so that the end means the peer's silence, not ours.
 */
int fab_rdm_conn_gives_up(const struct fab_rdm_conn *c, uint64_t now);

/* fab_rdm_conn_next_tick -- when tick has something to do next; UINT64_MAX: never */
uint64_t fab_rdm_conn_next_tick(const struct fab_rdm_conn *c);

/*
 * fab_rdm_conn_done -- may the connection's state be forgotten?  CLOSED,
 * and a rejected one only after its timeout (until then it answers the
 * client's tries of the REQ with the REJECT again)
 */
int fab_rdm_conn_done(const struct fab_rdm_conn *c, uint64_t now);

/*
 * fab_rdm_reply_stateless -- the answer a listener gives to a message that
 * names no live connection of its: a DISC gets a DISC_ACK (the peer's try
 * after our connection ended), an ACCEPT a DISC (the client gave up), a REQ
 * it cannot serve a REJECT with reason PROTOCOL (sender id 0) when
 * reject_req; anything else nothing.  Returns the messages put
 * in out (0 or 1).
 */
unsigned fab_rdm_reply_stateless(const struct fab_rdm_msg *m, int reject_req,
				 struct fab_rdm_out *out);

#endif /* RPMA_FABRIC_RDM_PROTO_H */
