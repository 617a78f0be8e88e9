/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_datapath.c -- read, write, atomic write, flush, send, receive and the
 * 0.10-era calls: argument checks, bounds, flags and what reaches the provider
 */

#include <arpa/inet.h>

#include "unit.h"

#define LOCAL_SIZE  1024
#define REMOTE_SIZE 4096
#define WHAT	    "type %d dw2pmem %d bits %#x native %d"

static struct rpma_peer *peer;
static struct rpma_conn *conn;
static struct rpma_mr_local *local;
static struct rpma_mr_remote *remote;
static uint8_t buf[LOCAL_SIZE];

/* dp_setup -- peer, connection, a local region and a remote region of every usage */
static void dp_setup(enum fake_prov prov, uint64_t caps)
{
	unit_init();
	fake_set_peer_caps(caps);
	peer = unit_peer(prov);
	conn = unit_conn(peer, NULL);
	local = unit_mr(peer, buf, LOCAL_SIZE, UNIT_USAGE_ALL);
	remote = unit_remote(UNIT_RADDR, REMOTE_SIZE, UNIT_RKEY, UNIT_USAGE_ALL);
	fake_reset();
}

/* dp_init -- the fixture over the verbs fake without native flush */
static void dp_init(void)
{
	dp_setup(FAKE_PROV_VERBS, 0);
}

/* dp_fini -- release everything, then the usual checks */
static void dp_fini(void)
{
	cr_expect_eq(rpma_mr_remote_delete(&remote), 0);
	cr_expect_eq(rpma_mr_dereg(&local), 0);
	cr_expect_eq(rpma_conn_delete(&conn), 0);
	cr_expect_eq(rpma_peer_delete(&peer), 0);
	unit_fini();
}

#define DP_SUITE(name) TestSuite(name, .init = dp_init, .fini = dp_fini)

/* ================================================================== read */

DP_SUITE(read);

Test(read, NULL_arguments)
{
	cr_assert_eq(rpma_read(NULL, local, 0, remote, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, NULL, 0, remote, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, local, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(read, flags_invalid)
{
	const int flags[] = {0, 4, 8, RPMA_F_COMPLETION_ALWAYS | 4, -1, 1 << 20};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		cr_assert_eq(rpma_read(conn, local, 0, remote, 0, 8, flags[i], NULL), RPMA_E_INVAL,
			     "flags %#x", flags[i]);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(read, flags_reach_provider)
{
	cr_assert_eq(rpma_read(conn, local, 0, remote, 0, 8, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->flags, RPMA_F_COMPLETION_ON_ERROR);
	cr_assert_eq(rpma_read(conn, local, 0, remote, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->flags, RPMA_F_COMPLETION_ALWAYS);
	/* 2 alone means "always": it goes as it is, providers test the success bit */
	cr_assert_eq(rpma_read(conn, local, 0, remote, 0, 8, 2, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->flags, RPMA_F_COMPLETION_ON_SUCCESS);
}

Test(read, arguments_reach_provider)
{
	cr_assert_eq(rpma_read(conn, local, 100, remote, 200, 300, RPMA_F_COMPLETION_ALWAYS,
			       UNIT_OP_CTX),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_READ);
	cr_assert_eq(c->obj, conn);
	cr_assert_eq(c->mr, local);
	cr_assert_eq(c->offset, 100);
	cr_assert_eq(c->raddr, UNIT_RADDR + 200);
	cr_assert_eq(c->rkey, UNIT_RKEY);
	cr_assert_eq(c->len, 300);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
}

Test(read, remote_bounds)
{
	cr_assert_eq(rpma_read(conn, local, 0, remote, REMOTE_SIZE - 8, 9, RPMA_F_COMPLETION_ALWAYS,
			       NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, local, 0, remote, REMOTE_SIZE + 1, 0, RPMA_F_COMPLETION_ALWAYS,
			       NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(
		rpma_read(conn, local, 0, remote, SIZE_MAX - 3, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_read(conn, local, 0, remote, REMOTE_SIZE - 8, 8, RPMA_F_COMPLETION_ALWAYS,
			       NULL),
		     0);
}

Test(read, local_bounds)
{
	cr_assert_eq(rpma_read(conn, local, LOCAL_SIZE - 4, remote, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			       NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, local, SIZE_MAX, remote, 0, 2, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, local, 0, remote, 0, LOCAL_SIZE + 1, RPMA_F_COMPLETION_ALWAYS,
			       NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(
		rpma_read(conn, local, 0, remote, 0, LOCAL_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL),
		0);
}

Test(read, zero_length_form)
{
	cr_assert_eq(rpma_read(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, UNIT_OP_CTX),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_READ);
	cr_assert_null(c->mr);
	cr_assert_eq(c->len, 0);
	cr_assert_eq(c->raddr, 0);
	cr_assert_eq(c->rkey, 0);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	/* half-zero forms are invalid */
	cr_assert_eq(rpma_read(conn, NULL, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, NULL, 4, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_read(conn, NULL, 0, NULL, 4, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_call_count(FAKE_OP_READ), 1);
}

Test(read, provider_fails)
{
	fake_fail_next(FAKE_OP_READ, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_read(conn, local, 0, remote, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_PROVIDER);
}

/* ================================================================= write */

DP_SUITE(write);

Test(write, NULL_arguments)
{
	cr_assert_eq(rpma_write(NULL, remote, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write(conn, NULL, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write(conn, remote, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(NULL, remote, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1,
					 NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write_with_imm(conn, NULL, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write_with_imm(conn, remote, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(write, flags)
{
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, 8, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, 8, 4, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(conn, remote, 0, local, 0, 8, 0, 1, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(conn, remote, 0, local, 0, 8, 0x10, 1, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, 8, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_WRITE)->flags, RPMA_F_COMPLETION_ON_ERROR);
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, 8, 2, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_WRITE)->flags, RPMA_F_COMPLETION_ON_SUCCESS);
}

Test(write, arguments_reach_provider)
{
	cr_assert_eq(
		rpma_write(conn, remote, 64, local, 32, 16, RPMA_F_COMPLETION_ALWAYS, UNIT_OP_CTX),
		0);
	const struct fake_call *c = fake_last_call(FAKE_OP_WRITE);
	cr_assert_eq(c->raddr, UNIT_RADDR + 64);
	cr_assert_eq(c->rkey, UNIT_RKEY);
	cr_assert_eq(c->mr, local);
	cr_assert_eq(c->offset, 32);
	cr_assert_eq(c->len, 16);
	cr_assert_eq(c->with_imm, false);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);

	cr_assert_eq(rpma_write_with_imm(conn, remote, 8, local, 0, 4, RPMA_F_COMPLETION_ON_ERROR,
					 0xdeadbeef, UNIT_OP_CTX),
		     0);
	c = fake_last_call(FAKE_OP_WRITE);
	cr_assert_eq(c->with_imm, true);
	cr_assert_eq(c->imm, 0xdeadbeef, "imm in host order at the boundary");
	cr_assert_eq(c->raddr, UNIT_RADDR + 8);
	cr_assert_eq(c->flags, RPMA_F_COMPLETION_ON_ERROR);
}

Test(write, bounds)
{
	cr_assert_eq(
		rpma_write(conn, remote, REMOTE_SIZE, local, 0, 1, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write(conn, remote, SIZE_MAX, local, 0, 1, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write(conn, remote, 0, local, LOCAL_SIZE, 1, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_write(conn, remote, 0, local, 1, SIZE_MAX, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(conn, remote, REMOTE_SIZE - 1, local, 0, 2,
					 RPMA_F_COMPLETION_ALWAYS, 0, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_with_imm(conn, remote, 0, local, LOCAL_SIZE - 1, 2,
					 RPMA_F_COMPLETION_ALWAYS, 0, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(write, zero_length_form)
{
	cr_assert_eq(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, UNIT_OP_CTX),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_WRITE);
	cr_assert_null(c->mr);
	cr_assert_eq(c->raddr, 0);
	cr_assert_eq(c->rkey, 0);
	cr_assert_eq(c->len, 0);
	cr_assert_eq(
		rpma_write_with_imm(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, 77, NULL),
		0);
	c = fake_last_call(FAKE_OP_WRITE);
	cr_assert(c->with_imm);
	cr_assert_eq(c->imm, 77);
	cr_assert_eq(rpma_write(conn, NULL, 0, NULL, 0, 1, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write(conn, NULL, 1, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_call_count(FAKE_OP_WRITE), 2);
}

Test(write, long_key_reaches_provider)
{
	struct rpma_mr_remote *r64 =
		unit_remote(UNIT_RADDR, REMOTE_SIZE, 0x123456789abcdef0ULL, UNIT_USAGE_ALL);
	cr_assert_eq(rpma_write(conn, r64, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_WRITE)->rkey, 0x123456789abcdef0ULL);
	cr_assert_eq(rpma_mr_remote_delete(&r64), 0);
}

Test(write, provider_fails)
{
	fake_fail_next(FAKE_OP_WRITE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_PROVIDER);
}

/* ========================================================== atomic_write */

DP_SUITE(atomic_write);

static const char src8[8] = {1, 2, 3, 4, 5, 6, 7, 8};

Test(atomic_write, NULL_arguments)
{
	cr_assert_eq(rpma_atomic_write(NULL, remote, 0, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(conn, NULL, 0, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, NULL, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, src8, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, src8, 4, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(atomic_write, alignment)
{
	for (size_t off = 1; off < 8; off++)
		cr_assert_eq(
			rpma_atomic_write(conn, remote, off, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
			RPMA_E_INVAL, "offset %zu", off);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_atomic_write(conn, remote, 16, src8, RPMA_F_COMPLETION_ALWAYS, NULL), 0);
}

Test(atomic_write, bounds)
{
	cr_assert_eq(
		rpma_atomic_write(conn, remote, REMOTE_SIZE, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_atomic_write(conn, remote, SIZE_MAX - 7, src8, RPMA_F_COMPLETION_ALWAYS, NULL),
		RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_atomic_write(conn, remote, REMOTE_SIZE - 8, src8,
				       RPMA_F_COMPLETION_ALWAYS, NULL),
		     0);
}

Test(atomic_write, arguments_reach_provider)
{
	cr_assert_eq(
		rpma_atomic_write(conn, remote, 24, src8, RPMA_F_COMPLETION_ON_ERROR, UNIT_OP_CTX),
		0);
	const struct fake_call *c = fake_last_call(FAKE_OP_ATOMIC_WRITE);
	cr_assert_eq(c->raddr, UNIT_RADDR + 24);
	cr_assert_eq(c->rkey, UNIT_RKEY);
	cr_assert_arr_eq(c->src8, src8, 8);
	cr_assert_eq(c->flags, RPMA_F_COMPLETION_ON_ERROR);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, src8, 2, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_ATOMIC_WRITE)->flags, RPMA_F_COMPLETION_ON_SUCCESS);
	fake_fail_next(FAKE_OP_ATOMIC_WRITE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, src8, 2, NULL), RPMA_E_PROVIDER);
}

/* ================================================================= flush */

/*
 * the gating table: type x direct_write_to_pmem x the remote usage's flush
 * bits x native flush; expected: NOSUPP, the APM read or the native flush
 */

enum flush_expect { EXPECT_NOSUPP, EXPECT_APM, EXPECT_NATIVE };

/* flush_case -- run one cell of the table on the current connection */
static void flush_case(enum rpma_flush_type type, bool dw2pmem, int flush_bits, bool native,
		       int announce, bool peer_announces, enum flush_expect expect)
{
	struct rpma_mr_remote *dst = unit_remote(UNIT_RADDR, REMOTE_SIZE, UNIT_RKEY,
						 RPMA_MR_USAGE_WRITE_DST | flush_bits | announce);
	/* the peer configuration as a target sends it: bit 7 only beside bit 0 */
	uint8_t byte = dw2pmem ? (peer_announces ? 0x81 : 0x01) : 0x00;
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_from_descriptor(&byte, 1, &pcfg), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	int reads = fake_call_count(FAKE_OP_READ);
	int flushes = fake_call_count(FAKE_OP_FLUSH);
	int ret = rpma_flush(conn, dst, 128, 512, type, RPMA_F_COMPLETION_ALWAYS, UNIT_OP_CTX);
	switch (expect) {
	case EXPECT_NOSUPP:
		cr_assert_eq(ret, RPMA_E_NOSUPP, WHAT, type, dw2pmem, flush_bits, native);
		cr_assert_eq(fake_call_count(FAKE_OP_READ), reads);
		cr_assert_eq(fake_call_count(FAKE_OP_FLUSH), flushes);
		break;
	case EXPECT_APM: {
		cr_assert_eq(ret, 0, WHAT, type, dw2pmem, flush_bits, native);
		cr_assert_eq(fake_call_count(FAKE_OP_READ), reads + 1);
		cr_assert_eq(fake_call_count(FAKE_OP_FLUSH), flushes);
		const struct fake_call *c = fake_last_call(FAKE_OP_READ);
		cr_assert_eq(c->len, 8, "the APM read is 8 bytes, whatever len");
		cr_assert_eq(c->raddr, UNIT_RADDR + 128);
		cr_assert_eq(c->rkey, UNIT_RKEY);
		cr_assert_not_null(c->mr, "into the core's own region");
		cr_assert_neq(c->mr, local);
		cr_assert_eq(c->flags, RPMA_F_COMPLETION_ALWAYS);
		cr_assert_eq(c->op_context, UNIT_OP_CTX);
		break;
	}
	case EXPECT_NATIVE: {
		cr_assert_eq(ret, 0, WHAT, type, dw2pmem, flush_bits, native);
		cr_assert_eq(fake_call_count(FAKE_OP_READ), reads);
		cr_assert_eq(fake_call_count(FAKE_OP_FLUSH), flushes + 1);
		const struct fake_call *c = fake_last_call(FAKE_OP_FLUSH);
		cr_assert_eq(c->raddr, UNIT_RADDR + 128);
		cr_assert_eq(c->rkey, UNIT_RKEY);
		cr_assert_eq(c->len, 512);
		cr_assert_eq(c->type, (int)type);
		cr_assert_eq(c->flags, RPMA_F_COMPLETION_ALWAYS);
		cr_assert_eq(c->op_context, UNIT_OP_CTX);
		break;
	}
	}
	cr_assert_eq(rpma_mr_remote_delete(&dst), 0);
}

#define ANNOUNCE (RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)

/*
 * flush_table -- every cell, for a connection with or without native flush,
 * toward regions whose descriptor has the announce bits (SEND | RECV: native
 * flush accepted) or not, from a peer whose configuration byte says its
 * descriptors announce (0x81) or not; any: the connection flushes natively
 * toward every region (RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED)
 */
static void flush_table(bool native, int announce, bool peer_announces, bool any)
{
	const int P = RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	const int V = RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	const int bits[] = {0, P, V, P | V};
	for (int dw = 0; dw <= 1; dw++) {
		for (size_t b = 0; b < 4; b++) {
			/* announced: both bits on the region, bit 7 in the (dw2pm) peer byte */
			bool go = native && (any || (announce == ANNOUNCE && dw && peer_announces));
			const enum flush_expect ok = go ? EXPECT_NATIVE : EXPECT_APM;
			enum flush_expect pers = (dw && (bits[b] & P)) ? ok : EXPECT_NOSUPP;
			enum flush_expect vis = (bits[b] & V) ? ok : EXPECT_NOSUPP;
			flush_case(RPMA_FLUSH_TYPE_PERSISTENT, dw, bits[b], native, announce,
				   peer_announces, pers);
			flush_case(RPMA_FLUSH_TYPE_VISIBILITY, dw, bits[b], native, announce,
				   peer_announces, vis);
		}
	}
}

DP_SUITE(flush);

Test(flush, gating_table_apm)
{
	flush_table(false, 0, false, false);
	/* an announcing region changes nothing without native flush */
	flush_table(false, ANNOUNCE, true, false);
}

Test(flush, persistent_needs_remote_peer_cfg)
{
	/* a fresh connection: direct_write_to_pmem is false until a remote cfg is applied */
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP);
	unit_conn_dw2pmem(conn, true);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     0);
	unit_conn_dw2pmem(conn, false);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP);
}

Test(flush, invalid_arguments)
{
	unit_conn_dw2pmem(conn, true);
	cr_assert_eq(rpma_flush(NULL, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, NULL, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 0, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 4, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, (enum rpma_flush_type)2,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, (enum rpma_flush_type) - 1,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(flush, bounds)
{
	unit_conn_dw2pmem(conn, true);
	cr_assert_eq(rpma_flush(conn, remote, REMOTE_SIZE - 4, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_flush(conn, remote, SIZE_MAX, 2, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_flush(conn, remote, REMOTE_SIZE - 8, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     0);
}

Test(flush, apm_flags_and_failure)
{
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ON_ERROR, NULL),
		     0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->flags, RPMA_F_COMPLETION_ON_ERROR);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 2, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->flags, RPMA_F_COMPLETION_ON_SUCCESS);
	fake_fail_next(FAKE_OP_READ, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_PROVIDER);
}

Test(flush, apm_region_is_read_dst_8_bytes)
{
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     0);
	const struct rpma_mr_local *raw = fake_last_call(FAKE_OP_READ)->mr;
	cr_assert_eq(rpma_mr_local_size(raw), 8);
	cr_assert(rpma_mr_local_usage(raw) & RPMA_MR_USAGE_READ_DST);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->offset, 0);
}

/*
 * A region that reaches the top of the address space: the APM read near its
 * end must move back inside it, not wrap past 2^64 (found by fuzz_mr_desc).
 */
Test(flush, apm_read_near_2to64_stays_inside)
{
	struct rpma_mr_remote *top = unit_remote(0, UINT64_MAX, UNIT_RKEY, UNIT_USAGE_ALL);
	cr_assert_eq(rpma_flush(conn, top, (size_t)(UINT64_MAX - 3), 1, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_READ);
	cr_assert_eq(c->len, 8);
	cr_assert_eq(c->raddr, UINT64_MAX - 8, "raddr 0x%llx", (unsigned long long)c->raddr);
	cr_assert_eq(rpma_mr_remote_delete(&top), 0);
}

/* native flush: the peer reports the capability from peer_init */
static void native_init(void)
{
	dp_setup(FAKE_PROV_VERBS, RPMA_PROV_CAP_NATIVE_FLUSH);
}

TestSuite(flush_native, .init = native_init, .fini = dp_fini);

Test(flush_native, gating_table_native)
{
	flush_table(true, ANNOUNCE, true, false);
}

/* a region that does not announce native flush access (a DRAM region of ours) gets APM */
Test(flush_native, unannounced_region_gets_apm)
{
	flush_table(true, 0, true, false);
	/* one of the two bits is not the announcement */
	flush_table(true, RPMA_MR_USAGE_SEND, true, false);
	flush_table(true, RPMA_MR_USAGE_RECV, true, false);
}

/*
 * an upstream target (its peer byte is 0 or 1) whose region has SEND and RECV
 * besides a flush usage: not an announcement, APM
 */
Test(flush_native, upstream_peer_send_recv_region_gets_apm)
{
	flush_table(true, ANNOUNCE, false, false);
}

/* RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED: native toward every region (upstream 1.3's rule) */
static void native_any_init(void)
{
	dp_setup(FAKE_PROV_VERBS,
		 RPMA_PROV_CAP_NATIVE_FLUSH | RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED);
}

TestSuite(flush_native_any, .init = native_any_init, .fini = dp_fini);

Test(flush_native_any, unannounced_region_goes_native)
{
	flush_table(true, 0, false, true);
}

Test(flush_native, provider_fails)
{
	/* an announcing peer (0x81) and region (UNIT_USAGE_ALL has SEND and RECV) */
	uint8_t byte = 0x81;
	struct rpma_peer_cfg *pcfg = NULL;
	cr_assert_eq(rpma_peer_cfg_from_descriptor(&byte, 1, &pcfg), 0);
	cr_assert_eq(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	cr_assert_eq(rpma_peer_cfg_delete(&pcfg), 0);
	fake_fail_next(FAKE_OP_FLUSH, RPMA_E_NOSUPP);
	cr_assert_eq(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_NOSUPP);
}

/* a device-dependent native flush cap on a provider without a flush op */
static void native_no_op_init(void)
{
	dp_setup(FAKE_PROV_FABRIC, RPMA_PROV_CAP_NATIVE_FLUSH);
}

TestSuite(flush_native_no_op, .init = native_no_op_init, .fini = dp_fini);

Test(flush_native_no_op, nosupp_not_crash)
{
	int ret = rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			     RPMA_F_COMPLETION_ALWAYS, NULL);
	/* either the core refuses, or it falls back to the APM read; never a NULL call */
	if (ret == 0)
		cr_assert_eq(fake_call_count(FAKE_OP_READ), 1);
	else
		cr_assert_eq(ret, RPMA_E_NOSUPP);
}

/* ============================================================ send_recv */

DP_SUITE(send_recv);

Test(send_recv, send_NULL_and_flags)
{
	cr_assert_eq(rpma_send(NULL, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(conn, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(conn, local, 0, 8, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_send(conn, local, 0, 8, 4, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(NULL, local, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(conn, local, 0, 8, 0, 1, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_send_with_imm(conn, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(send_recv, send_arguments)
{
	cr_assert_eq(rpma_send(conn, local, 10, 20, RPMA_F_COMPLETION_ON_ERROR, UNIT_OP_CTX), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_SEND);
	cr_assert_eq(c->mr, local);
	cr_assert_eq(c->offset, 10);
	cr_assert_eq(c->len, 20);
	cr_assert_eq(c->flags, RPMA_F_COMPLETION_ON_ERROR);
	cr_assert_eq(c->with_imm, false);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	cr_assert_eq(rpma_send_with_imm(conn, local, 0, 4, 2, 0x01020304, NULL), 0);
	c = fake_last_call(FAKE_OP_SEND);
	cr_assert(c->with_imm);
	cr_assert_eq(c->imm, 0x01020304);
	cr_assert_eq(c->flags, RPMA_F_COMPLETION_ON_SUCCESS);
}

Test(send_recv, send_bounds_and_zero_length)
{
	cr_assert_eq(rpma_send(conn, local, LOCAL_SIZE - 1, 2, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_send(conn, local, SIZE_MAX, 2, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_send(conn, NULL, 1, 0, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL), 0);
	cr_assert_null(fake_last_call(FAKE_OP_SEND)->mr);
	cr_assert_eq(rpma_send_with_imm(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, 9, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_SEND)->imm, 9);
}

Test(send_recv, recv)
{
	cr_assert_eq(rpma_recv(NULL, local, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(conn, NULL, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(conn, NULL, 8, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(conn, local, LOCAL_SIZE, 1, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_recv(conn, local, 1, SIZE_MAX, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
	cr_assert_eq(rpma_recv(conn, local, 512, 512, UNIT_OP_CTX), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_RECV);
	cr_assert_eq(c->mr, local);
	cr_assert_eq(c->offset, 512);
	cr_assert_eq(c->len, 512);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	cr_assert_eq(rpma_recv(conn, NULL, 0, 0, UNIT_OP_CTX), 0);
	cr_assert_null(fake_last_call(FAKE_OP_RECV)->mr);
	fake_fail_next(FAKE_OP_RECV, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_recv(conn, local, 0, 8, NULL), RPMA_E_PROVIDER);
}

/* ======================================================== conn_req_recv */

UNIT_SUITE(conn_req_recv);

Test(conn_req_recv, arguments)
{
	static uint8_t rbuf[128];
	struct rpma_peer *p = unit_peer(FAKE_PROV_VERBS);
	struct rpma_mr_local *mr = unit_mr(p, rbuf, sizeof(rbuf), RPMA_MR_USAGE_RECV);
	struct rpma_conn_req *req = unit_req(p, NULL);
	cr_assert_eq(rpma_conn_req_recv(NULL, mr, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_recv(req, NULL, 0, 8, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_recv(req, mr, 100, 29, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_recv(req, mr, SIZE_MAX, 2, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_call_count(FAKE_OP_CONN_REQ_RECV), 0);
	cr_assert_eq(rpma_conn_req_recv(req, mr, 100, 28, UNIT_OP_CTX), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_CONN_REQ_RECV);
	cr_assert_eq(c->obj, req);
	cr_assert_eq(c->mr, mr);
	cr_assert_eq(c->offset, 100);
	cr_assert_eq(c->len, 28);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
	/* unlike rpma_recv(), no zero-length form (upstream refuses a NULL dst here) */
	cr_assert_eq(rpma_conn_req_recv(req, NULL, 0, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
	cr_assert_eq(rpma_peer_delete(&p), 0);
}

/* ============================================================== max_msg */

/*
 * The transport's largest message: the fake "verbs" declares MM_MAX bytes
 * (peer_max_msg_size); every data-path length beyond it is refused with
 * RPMA_E_INVAL before it reaches the provider (no transport field truncates
 * it), with one line naming the limit.
 */
#define MM_MAX 100

static struct rpma_srq *mm_srq;

/* mm_init -- the data-path fixture on a peer whose transport carries MM_MAX bytes */
static void mm_init(void)
{
	unit_init();
	fake_set_max_msg_size(MM_MAX);
	peer = unit_peer(FAKE_PROV_VERBS);
	conn = unit_conn(peer, NULL);
	local = unit_mr(peer, buf, LOCAL_SIZE, UNIT_USAGE_ALL);
	remote = unit_remote(UNIT_RADDR, REMOTE_SIZE, UNIT_RKEY, UNIT_USAGE_ALL);
	cr_assert_eq(rpma_srq_new(peer, NULL, &mm_srq), 0);
	fake_reset();
}

/* mm_fini -- release the SRQ, then the data-path fixture */
static void mm_fini(void)
{
	cr_expect_eq(rpma_srq_delete(&mm_srq), 0);
	dp_fini();
}

TestSuite(max_msg, .init = mm_init, .fini = mm_fini);

/* mm_refused -- ret is the refusal: nothing reached the provider, one error line naming MM_MAX */
static void mm_refused(int ret, const char *what)
{
	cr_assert_eq(ret, RPMA_E_INVAL, "%s: %d", what, ret);
	cr_assert_eq(fake_calls_total(), 0, "%s reached the provider", what);
	cr_assert_eq(unit_log_total(), 1, "%s: %d lines logged", what, unit_log_total());
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1, "%s", what);
	cr_assert_not_null(strstr(unit_log_last(), "(100 bytes)"), "%s: %s", what, unit_log_last());
	unit_log_reset();
}

Test(max_msg, longer_operations_are_refused)
{
	const int f = RPMA_F_COMPLETION_ALWAYS;
	const size_t n = MM_MAX + 1;
	unit_log_reset();
	mm_refused(rpma_read(conn, local, 0, remote, 0, n, f, NULL), "read");
	mm_refused(rpma_write(conn, remote, 0, local, 0, n, f, NULL), "write");
	mm_refused(rpma_write_with_imm(conn, remote, 0, local, 0, n, f, 7, NULL), "write_with_imm");
	mm_refused(rpma_send(conn, local, 0, n, f, NULL), "send");
	mm_refused(rpma_send_with_imm(conn, local, 0, n, f, 7, NULL), "send_with_imm");
	mm_refused(rpma_recv(conn, local, 0, n, NULL), "recv");
	mm_refused(rpma_srq_recv(mm_srq, local, 0, n, NULL), "srq_recv");
	mm_refused(rpma_read(conn, local, 0, remote, 0, LOCAL_SIZE, f, NULL), "read of the region");

	struct rpma_conn_req *req = unit_req(peer, NULL);
	fake_reset();
	mm_refused(rpma_conn_req_recv(req, local, 0, n, NULL), "conn_req_recv");
	cr_assert_eq(rpma_conn_req_recv(req, local, 0, MM_MAX, NULL), 0);
	cr_assert_eq(rpma_conn_req_delete(&req), 0);
}

Test(max_msg, the_limit_itself_passes)
{
	const int f = RPMA_F_COMPLETION_ALWAYS;
	cr_assert_eq(rpma_read(conn, local, 1, remote, 2, MM_MAX, f, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->len, MM_MAX);
	cr_assert_eq(rpma_write(conn, remote, 0, local, 0, MM_MAX, f, NULL), 0);
	cr_assert_eq(rpma_write_with_imm(conn, remote, 0, local, 0, MM_MAX, f, 1, NULL), 0);
	cr_assert_eq(rpma_send(conn, local, 0, MM_MAX, f, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_SEND)->len, MM_MAX);
	cr_assert_eq(rpma_recv(conn, local, 0, MM_MAX, NULL), 0);
	cr_assert_eq(rpma_srq_recv(mm_srq, local, 0, MM_MAX, NULL), 0);
	/* 8 bytes and the flush are below any limit */
	char v[8] = {0};
	cr_assert_eq(rpma_atomic_write(conn, remote, 0, v, f, NULL), 0);
	cr_assert_eq(rpma_flush(conn, remote, 0, REMOTE_SIZE, RPMA_FLUSH_TYPE_VISIBILITY, f, NULL),
		     0);
	/* zero-length forms */
	cr_assert_eq(rpma_read(conn, NULL, 0, NULL, 0, 0, f, NULL), 0);
	cr_assert_eq(rpma_send(conn, NULL, 0, 0, f, NULL), 0);
	cr_assert_eq(rpma_recv(conn, NULL, 0, 0, NULL), 0);
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 0);
}

UNIT_SUITE(max_msg_none);

/* a provider that declares no limit (the fake "fabric" has no peer_max_msg_size) has none */
Test(max_msg_none, no_limit_declared)
{
	fake_set_max_msg_size(MM_MAX);
	struct rpma_peer *fp = unit_peer(FAKE_PROV_FABRIC);
	struct rpma_conn *fc = unit_conn(fp, NULL);
	struct rpma_mr_local *fl = unit_mr(fp, buf, LOCAL_SIZE, UNIT_USAGE_ALL);
	struct rpma_mr_remote *fr = unit_remote(UNIT_RADDR, REMOTE_SIZE, UNIT_RKEY, UNIT_USAGE_ALL);
	cr_assert_eq(rpma_read(fc, fl, 0, fr, 0, LOCAL_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_READ)->len, LOCAL_SIZE);
	cr_assert_eq(rpma_recv(fc, fl, 0, LOCAL_SIZE, NULL), 0);
	cr_assert_eq(rpma_mr_remote_delete(&fr), 0);
	cr_assert_eq(rpma_mr_dereg(&fl), 0);
	cr_assert_eq(rpma_conn_delete(&fc), 0);
	cr_assert_eq(rpma_peer_delete(&fp), 0);
}

/* ============================================================ deprecated */

DP_SUITE(deprecated);

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

Test(deprecated, write_atomic_copies_source)
{
	memcpy(buf + 40, "ABCDEFGH", 8);
	cr_assert_eq(rpma_write_atomic(conn, remote, 64, local, 40, RPMA_F_COMPLETION_ALWAYS,
				       UNIT_OP_CTX),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_ATOMIC_WRITE);
	cr_assert_not_null(c);
	cr_assert_arr_eq(c->src8, "ABCDEFGH", 8);
	cr_assert_eq(c->raddr, UNIT_RADDR + 64);
	cr_assert_eq(c->rkey, UNIT_RKEY);
	cr_assert_eq(c->op_context, UNIT_OP_CTX);
}

Test(deprecated, write_atomic_invalid)
{
	cr_assert_eq(rpma_write_atomic(NULL, remote, 0, local, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_atomic(conn, NULL, 0, local, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_atomic(conn, remote, 0, NULL, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_atomic(conn, remote, 3, local, 0, RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_atomic(conn, remote, 0, local, LOCAL_SIZE - 4,
				       RPMA_F_COMPLETION_ALWAYS, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(rpma_write_atomic(conn, remote, 0, local, 0, 0, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

/* push -- queue one completion on the connection's main CQ */
static void push(enum ibv_wc_opcode opcode, enum ibv_wc_status status, uint32_t byte_len,
		 unsigned wc_flags, uint32_t imm_net)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = (uint64_t)(uintptr_t)UNIT_OP_CTX;
	wc.opcode = opcode;
	wc.status = status;
	wc.byte_len = byte_len;
	wc.wc_flags = wc_flags;
	wc.imm_data = imm_net;
	fake_cq_push_wc(cq, &wc);
}

Test(deprecated, cq_get_completion_opcodes)
{
	struct {
		enum ibv_wc_opcode in;
		enum rpma_op out;
	} map[] = {
		{IBV_WC_RDMA_READ, RPMA_OP_READ},
		{IBV_WC_RDMA_WRITE, RPMA_OP_WRITE},
		{IBV_WC_SEND, RPMA_OP_SEND},
		{IBV_WC_RECV, RPMA_OP_RECV},
		{IBV_WC_RECV_RDMA_WITH_IMM, RPMA_OP_RECV_RDMA_WITH_IMM},
	};
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		push(map[i].in, IBV_WC_SUCCESS, 33, 0, 0);
		struct rpma_completion cmpl;
		memset(&cmpl, 0xff, sizeof(cmpl));
		cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), 0);
		cr_assert_eq(cmpl.op, map[i].out, "opcode %d", map[i].in);
		cr_assert_eq(cmpl.op_context, UNIT_OP_CTX);
		cr_assert_eq(cmpl.op_status, IBV_WC_SUCCESS);
	}
}

Test(deprecated, cq_get_completion_recv_with_imm)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	push(IBV_WC_RECV, IBV_WC_SUCCESS, 17, IBV_WC_WITH_IMM, htonl(0xcafe0001));
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), 0);
	cr_assert_eq(cmpl.op, RPMA_OP_RECV);
	cr_assert_eq(cmpl.byte_len, 17);
	cr_assert(cmpl.flags & IBV_WC_WITH_IMM);
	cr_assert_eq(cmpl.imm, 0xcafe0001, "imm in host order");

	push(IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS, 0, IBV_WC_WITH_IMM, htonl(7));
	cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), 0);
	cr_assert_eq(cmpl.op, RPMA_OP_RECV_RDMA_WITH_IMM);
	cr_assert_eq(cmpl.imm, 7);
}

Test(deprecated, cq_get_completion_error_status)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	push(IBV_WC_RDMA_READ, IBV_WC_REM_ACCESS_ERR, 0, 0, 0);
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), 0);
	cr_assert_eq(cmpl.op_status, IBV_WC_REM_ACCESS_ERR);
	cr_assert_eq(cmpl.op_context, UNIT_OP_CTX);
}

Test(deprecated, cq_get_completion_unknown_opcode)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	push(IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, 0, 0, 0);
	struct rpma_completion cmpl;
	cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NOSUPP);
}

Test(deprecated, cq_get_completion_invalid_and_empty)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	memset(&cmpl, 0x5a, sizeof(cmpl));
	struct rpma_completion copy = cmpl;
	cr_assert_eq(rpma_cq_get_completion(NULL, &cmpl), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_completion(cq, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
	cr_assert_arr_eq(&cmpl, &copy, sizeof(cmpl));
}

Test(deprecated, conn_completion_calls_use_main_cq)
{
	struct rpma_cq *cq = NULL;
	cr_assert_eq(rpma_conn_get_cq(conn, &cq), 0);

	cr_assert_eq(rpma_conn_completion_wait(conn), 0);
	cr_assert_eq(fake_last_call(FAKE_OP_CQ_WAIT)->obj, cq);
	cr_assert_eq(rpma_conn_completion_wait(NULL), RPMA_E_INVAL);

	push(IBV_WC_SEND, IBV_WC_SUCCESS, 0, 0, 0);
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	cr_assert_eq(rpma_conn_completion_get(conn, &cmpl), 0);
	cr_assert_eq(cmpl.op, RPMA_OP_SEND);
	cr_assert_eq(rpma_conn_completion_get(conn, &cmpl), RPMA_E_NO_COMPLETION);
	cr_assert_eq(rpma_conn_completion_get(NULL, &cmpl), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_completion_get(conn, NULL), RPMA_E_INVAL);

	int fd = -1, cq_fd = -2;
	cr_assert_eq(rpma_conn_get_completion_fd(conn, &fd), 0);
	cr_assert_eq(rpma_cq_get_fd(cq, &cq_fd), 0);
	cr_assert_eq(fd, cq_fd);
	int bad = -5;
	cr_assert_eq(rpma_conn_get_completion_fd(NULL, &bad), RPMA_E_INVAL);
	cr_assert_eq(rpma_conn_get_completion_fd(conn, NULL), RPMA_E_INVAL);
	cr_assert_eq(bad, -5);
}
