/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_mr_desc.c -- libFuzzer target: a remote region descriptor from the peer,
 * its getters and every data-path call that is bounded by it
 *
 * Input: a configuration byte (peer kind, direct write to PMem), a length
 * byte and that many descriptor bytes, then data-path operations (an op
 * byte, offsets, lengths, flags, immediate data, a provider failure to
 * inject) until the input runs out.  The core's answers are checked against
 * a model built from the wire format and the bounds rules of HACKING.md:
 * the same return code, the provider called exactly when the model says so,
 * with the remote address, key, length and flags the model computes, and
 * never beyond the region the descriptor declares.
 */

#define RPMA_NO_DEPRECATION_WARNINGS 1 /* the 0.10 calls are fuzzed too */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define MAX_OPS 48
#define POISON	((struct rpma_mr_remote *)(uintptr_t)0x5a5a5a5a)

/* what the descriptor says, decoded by the target itself */
struct model {
	uint64_t addr;
	uint64_t size;
	uint64_t key;
	int usage;
	bool dw2pmem;
	bool native;
	struct rpma_mr_local *lmr;
};

/* expected -- the result the model predicts and, when the provider is reached, what it gets */
struct expected {
	int ret;
	enum fake_op op; /* the op that must be called, or FAKE_OP_MAX for none */
	uint64_t raddr;	 /* its remote address */
	size_t len;	 /* its length */
	uint64_t rkey;	 /* its key */
	int pflags;	 /* its flags */
	bool null_form;	 /* the zero-length form (no regions) */
	size_t loffset;	 /* local offset of read/write */
	uint32_t imm;	 /* immediate data */
	bool with_imm;	 /* write/send with immediate data */
	bool flush_mr;	 /* the local region is the core's flush region (APM) */
	int flush_type;	 /* native flush: the type */
	char src8[8];	 /* atomic write: the bytes */
	bool check_src8; /* compare them */
};

/*
 * model_flags -- the data-path flags rule: non-zero, only the two known bits;
 * accepted flags reach the provider unchanged
 */
static bool model_flags(int flags, int *pflags)
{
	if (flags == 0 || (flags & ~RPMA_F_COMPLETION_ALWAYS))
		return false;
	*pflags = flags;
	return true;
}

/* model_remote -- is [off, off + len) inside the region, with an address that does not overflow? */
static bool model_remote(const struct model *m, size_t off, size_t len)
{
	return (uint64_t)off <= m->size && (uint64_t)len <= m->size - off &&
	       m->addr <= UINT64_MAX - off;
}

/* model_local -- is [off, off + len) inside the local region? */
static bool model_local(size_t off, size_t len)
{
	return off <= FUZZ_LOCAL_SIZE && len <= FUZZ_LOCAL_SIZE - off;
}

/* inval -- the model says RPMA_E_INVAL and no provider call */
static struct expected inval(void)
{
	struct expected e = {.ret = RPMA_E_INVAL, .op = FAKE_OP_MAX};
	return e;
}

/* check_call -- the provider got exactly what the model predicts */
static void check_call(const struct model *m, const struct expected *e, int calls_before,
		       const char *what)
{
	int calls = fuzz_calls() - calls_before;
	if (e->op == FAKE_OP_MAX) {
		FUZZ_CHECK(calls == 0, "%s: refused (%d) but %d provider call(s) made", what,
			   e->ret, calls);
		return;
	}
	FUZZ_CHECK(calls == 1, "%s: %d provider calls, 1 expected", what, calls);
	const struct fake_call *c = fake_last_call(e->op);
	FUZZ_CHECK(c != NULL, "%s: provider op %s not called", what, fake_op_name(e->op));
	FUZZ_CHECK(c->flags == e->pflags, "%s: flags %d, %d expected", what, c->flags, e->pflags);
	if (e->null_form) {
		FUZZ_CHECK(c->mr == NULL && c->raddr == 0 && c->rkey == 0 && c->len == 0,
			   "%s: zero-length form with fields", what);
		return;
	}
	FUZZ_CHECK(c->raddr == e->raddr, "%s: raddr 0x%llx, 0x%llx expected", what,
		   (unsigned long long)c->raddr, (unsigned long long)e->raddr);
	FUZZ_CHECK(c->rkey == e->rkey, "%s: rkey 0x%llx, 0x%llx expected", what,
		   (unsigned long long)c->rkey, (unsigned long long)e->rkey);
	if (e->op != FAKE_OP_ATOMIC_WRITE)
		FUZZ_CHECK(c->len == e->len, "%s: len %zu, %zu expected", what, c->len, e->len);
	/* whatever goes out stays inside what the descriptor declares */
	uint64_t len = e->op == FAKE_OP_ATOMIC_WRITE ? 8 : c->len;
	FUZZ_CHECK(c->raddr >= m->addr && c->raddr - m->addr <= m->size &&
			   len <= m->size - (c->raddr - m->addr),
		   "%s: [0x%llx, +%llu) outside the region [0x%llx, +%llu)", what,
		   (unsigned long long)c->raddr, (unsigned long long)len,
		   (unsigned long long)m->addr, (unsigned long long)m->size);
	switch (e->op) {
	case FAKE_OP_WRITE:
	case FAKE_OP_READ:
		if (e->flush_mr) {
			FUZZ_CHECK(c->mr != NULL && c->mr != m->lmr && c->offset == 0,
				   "%s: the APM read does not land in the flush region", what);
		} else {
			FUZZ_CHECK(c->mr == m->lmr && c->offset == e->loffset,
				   "%s: local region/offset %zu, %zu expected", what, c->offset,
				   e->loffset);
		}
		FUZZ_CHECK(c->with_imm == e->with_imm && (!e->with_imm || c->imm == e->imm),
			   "%s: immediate data %d/0x%x, %d/0x%x expected", what, c->with_imm,
			   c->imm, e->with_imm, e->imm);
		break;
	case FAKE_OP_FLUSH:
		FUZZ_CHECK(c->type == e->flush_type, "%s: flush type %d, %d expected", what,
			   c->type, e->flush_type);
		break;
	case FAKE_OP_ATOMIC_WRITE:
		if (e->check_src8)
			FUZZ_CHECK(memcmp(c->src8, e->src8, 8) == 0, "%s: atomic bytes differ",
				   what);
		break;
	default:
		break;
	}
}

/* finish -- compare the result, the provider calls and the log with the model */
static void finish(const struct model *m, const struct expected *e, int ret, int calls_before,
		   int errors_before, const char *what)
{
	FUZZ_CHECK(ret == e->ret, "%s returned %d (%s), the model says %d", what, ret,
		   rpma_err_2str(ret), e->ret);
	check_call(m, e, calls_before, what);
	if (e->op == FAKE_OP_MAX)
		FUZZ_CHECK(fuzz_log_errors() - errors_before == 1,
			   "%s: refused with %d error messages, one expected", what,
			   fuzz_log_errors() - errors_before);
}

/* arm -- maybe make the provider op fail, when the model says it will be called */
static void arm(struct expected *e, uint8_t inject)
{
	if (e->op == FAKE_OP_MAX || !(inject & 0x80))
		return;
	static const int codes[] = {RPMA_E_PROVIDER, RPMA_E_NOMEM, RPMA_E_AGAIN, RPMA_E_INVAL};
	e->ret = codes[inject & 3];
	fake_fail_next(e->op, e->ret);
}

/* do_write -- rpma_write / rpma_write_with_imm over regions or in the zero-length form */
static void do_write(struct rpma_conn *conn, struct rpma_mr_remote *rmr, const struct model *m,
		     struct fuzz_in *in, bool with_imm, bool null_form)
{
	size_t doff = fuzz_size(in, m->size);
	size_t len = fuzz_size(in, m->size - doff);
	size_t soff = fuzz_size(in, FUZZ_LOCAL_SIZE - len);
	int flags = (int8_t)fuzz_u8(in);
	uint32_t imm = fuzz_u32(in);
	uint8_t inject = fuzz_u8(in);
	if (null_form && (inject & 0x40))
		doff = soff = len = 0;

	struct expected e = inval();
	int pflags;
	if (!model_flags(flags, &pflags)) {
		/* refused */
	} else if (null_form) {
		if (doff == 0 && soff == 0 && len == 0)
			e = (struct expected){
				.op = FAKE_OP_WRITE, .pflags = pflags, .null_form = true};
	} else if (model_local(soff, len) && model_remote(m, doff, len)) {
		e = (struct expected){.op = FAKE_OP_WRITE,
				      .raddr = m->addr + doff,
				      .len = len,
				      .rkey = m->key,
				      .pflags = pflags,
				      .loffset = soff};
	}
	e.with_imm = with_imm;
	e.imm = imm;
	arm(&e, inject);

	int calls = fuzz_calls(), errors = fuzz_log_errors(), ret;
	struct rpma_mr_remote *dst = null_form ? NULL : rmr;
	struct rpma_mr_local *src = null_form ? NULL : m->lmr;
	if (with_imm)
		ret = rpma_write_with_imm(conn, dst, doff, src, soff, len, flags, imm, NULL);
	else
		ret = rpma_write(conn, dst, doff, src, soff, len, flags, NULL);
	finish(m, &e, ret, calls, errors, with_imm ? "rpma_write_with_imm" : "rpma_write");
}

/* do_read -- rpma_read over regions or in the zero-length form */
static void do_read(struct rpma_conn *conn, struct rpma_mr_remote *rmr, const struct model *m,
		    struct fuzz_in *in, bool null_form)
{
	size_t soff = fuzz_size(in, m->size);
	size_t len = fuzz_size(in, m->size - soff);
	size_t doff = fuzz_size(in, FUZZ_LOCAL_SIZE - len);
	int flags = (int8_t)fuzz_u8(in);
	uint8_t inject = fuzz_u8(in);
	if (null_form && (inject & 0x40))
		doff = soff = len = 0;

	struct expected e = inval();
	int pflags;
	if (!model_flags(flags, &pflags)) {
		/* refused */
	} else if (null_form) {
		if (doff == 0 && soff == 0 && len == 0)
			e = (struct expected){
				.op = FAKE_OP_READ, .pflags = pflags, .null_form = true};
	} else if (model_local(doff, len) && model_remote(m, soff, len)) {
		e = (struct expected){.op = FAKE_OP_READ,
				      .raddr = m->addr + soff,
				      .len = len,
				      .rkey = m->key,
				      .pflags = pflags,
				      .loffset = doff};
	}
	arm(&e, inject);

	int calls = fuzz_calls(), errors = fuzz_log_errors();
	int ret = rpma_read(conn, null_form ? NULL : m->lmr, doff, null_form ? NULL : rmr, soff,
			    len, flags, NULL);
	finish(m, &e, ret, calls, errors, "rpma_read");
}

/* do_atomic -- rpma_atomic_write, or the 0.10 rpma_write_atomic from the local region */
static void do_atomic(struct rpma_conn *conn, struct rpma_mr_remote *rmr, const struct model *m,
		      struct fuzz_in *in, bool compat)
{
	size_t doff = fuzz_size(in, m->size - 8);
	size_t soff = fuzz_size(in, FUZZ_LOCAL_SIZE - 8);
	int flags = (int8_t)fuzz_u8(in);
	uint8_t inject = fuzz_u8(in);
	uint64_t value = fuzz_u64(in);

	struct expected e = inval();
	int pflags;
	bool local_ok = !compat || model_local(soff, 8);
	if (model_flags(flags, &pflags) && doff % 8 == 0 && local_ok && model_remote(m, doff, 8)) {
		e = (struct expected){.op = FAKE_OP_ATOMIC_WRITE,
				      .raddr = m->addr + doff,
				      .rkey = m->key,
				      .pflags = pflags,
				      .check_src8 = true};
		if (compat)
			memcpy(e.src8, (char *)rpma_mr_local_ptr(m->lmr) + soff, 8);
		else
			memcpy(e.src8, &value, 8);
	}
	arm(&e, inject);

	int calls = fuzz_calls(), errors = fuzz_log_errors(), ret;
	if (compat) {
		if (model_local(soff, 8))
			memcpy((char *)rpma_mr_local_ptr(m->lmr) + soff, &value, 8);
		if (e.op != FAKE_OP_MAX)
			memcpy(e.src8, &value, 8);
		ret = rpma_write_atomic(conn, rmr, doff, m->lmr, soff, flags, NULL);
	} else {
		char src[8];
		memcpy(src, &value, 8);
		ret = rpma_atomic_write(conn, rmr, doff, src, flags, NULL);
	}
	finish(m, &e, ret, calls, errors, compat ? "rpma_write_atomic" : "rpma_atomic_write");
}

/* do_flush -- rpma_flush: gating on the peer and the region, bounds, native or APM read */
static void do_flush(struct rpma_conn *conn, struct rpma_mr_remote *rmr, const struct model *m,
		     struct fuzz_in *in)
{
	size_t off = fuzz_size(in, m->size);
	size_t len = fuzz_size(in, m->size - off);
	uint8_t t = fuzz_u8(in);
	int type = t < 0xf0 ? (t & 1) : (int)(int8_t)t; /* mostly the two known types */
	int flags = (int8_t)fuzz_u8(in);
	uint8_t inject = fuzz_u8(in);

	struct expected e = inval();
	int pflags;
	if (!model_flags(flags, &pflags) ||
	    (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY)) {
		/* refused */
	} else if (type == RPMA_FLUSH_TYPE_PERSISTENT && !m->dw2pmem) {
		e.ret = RPMA_E_NOSUPP;
	} else if (!(m->usage &
		     (type == RPMA_FLUSH_TYPE_PERSISTENT ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT
							 : RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY))) {
		e.ret = RPMA_E_NOSUPP;
	} else if (!model_remote(m, off, len)) {
		/* refused */
	} else if (m->native && m->dw2pmem && (m->usage & 0xc0) == 0xc0) {
		/* native only toward a region announced (SEND | RECV) by an announcing peer */
		e = (struct expected){.op = FAKE_OP_FLUSH,
				      .raddr = m->addr + off,
				      .len = len,
				      .rkey = m->key,
				      .pflags = pflags,
				      .flush_type = type};
	} else {
		/* the APM read: up to 8 bytes inside the region, at off or moved back */
		uint64_t apm = m->size < 8 ? m->size : 8;
		uint64_t aoff = apm > m->size - off ? m->size - apm : off; /* no wrap near 2^64 */
		if (apm == 0)
			e = (struct expected){
				.op = FAKE_OP_READ, .pflags = pflags, .null_form = true};
		else
			e = (struct expected){.op = FAKE_OP_READ,
					      .raddr = m->addr + aoff,
					      .len = apm,
					      .rkey = m->key,
					      .pflags = pflags,
					      .flush_mr = true};
	}
	arm(&e, inject);

	int calls = fuzz_calls(), errors = fuzz_log_errors();
	int ret = rpma_flush(conn, rmr, off, len, (enum rpma_flush_type)type, flags, NULL);
	finish(m, &e, ret, calls, errors, "rpma_flush");
}

/* check_getters -- the remote region's getters tell what the descriptor said */
static void check_getters(const struct rpma_mr_remote *rmr, const struct model *m)
{
	size_t size = 0;
	int ft = -1;
	int ret = rpma_mr_remote_get_size(rmr, &size);
	FUZZ_CHECK(ret == 0 && size == (size_t)m->size, "rpma_mr_remote_get_size: %d %zu", ret,
		   size);
	ret = rpma_mr_remote_get_flush_type(rmr, &ft);
	FUZZ_CHECK(ret == 0 && ft == (m->usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
						  RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)),
		   "rpma_mr_remote_get_flush_type: %d 0x%x (usage 0x%x)", ret, ft, m->usage);
	FUZZ_CHECK(rpma_mr_remote_get_size(rmr, NULL) == RPMA_E_INVAL, "get_size(NULL)");
	FUZZ_CHECK(rpma_mr_remote_get_flush_type(rmr, NULL) == RPMA_E_INVAL,
		   "get_flush_type(NULL)");
}

/* LLVMFuzzerInitialize -- peers and local regions for all inputs */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_init();
	return 0;
}

/* LLVMFuzzerTestOneInput -- decode one descriptor and use it */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	fuzz_begin();

	uint8_t cfg = fuzz_u8(&in);
	enum fuzz_peer_kind kind = (enum fuzz_peer_kind)(cfg % FUZZ_PEER_MAX);
	size_t dsize;
	uint8_t *desc = fuzz_bytes(&in, fuzz_u8(&in), &dsize);

	/* the reference decoder */
	struct model m = {.dw2pmem = (cfg & 0x10) != 0,
			  .native = kind == FUZZ_PEER_VERBS_NATIVE,
			  .lmr = fuzz_local_mr(kind)};
	bool valid = dsize >= 21 && desc[20] != 0;
	if (valid) {
		m.addr = fuzz_le(desc, 8);
		m.size = fuzz_le(desc + 8, 8);
		m.key = fuzz_le(desc + 16, 4);
		if (dsize >= 26 && desc[21] == 0xE5)
			m.key |= fuzz_le(desc + 22, 4) << 32;
		m.usage = desc[20];
		/* addr + size must fit in 64 bits: a region never wraps past 2^64 */
		valid = m.size <= UINT64_MAX - m.addr;
	}

	struct rpma_mr_remote *rmr = POISON;
	int ret = rpma_mr_remote_from_descriptor(desc, dsize, &rmr);
	free(desc); /* the region must not keep pointing into the descriptor */
	if (!valid) {
		FUZZ_CHECK(ret == RPMA_E_INVAL, "malformed descriptor (%zu bytes) gave %d", dsize,
			   ret);
		FUZZ_CHECK(rmr == POISON, "the output pointer was written on failure");
		FUZZ_CHECK(fuzz_log_errors() == 1, "%d error messages for one refusal",
			   fuzz_log_errors());
		fuzz_end();
		return 0;
	}
	FUZZ_CHECK(ret == 0 && rmr != NULL && rmr != POISON,
		   "a well-formed descriptor (%zu bytes) gave %d", dsize, ret);
	check_getters(rmr, &m);

	if (!fuzz_empty(&in)) {
		struct rpma_conn *conn = fuzz_conn(kind, NULL);
		if (m.dw2pmem) {
			/* as one of our targets sends it: bit 7 announces native flush */
			struct rpma_peer_cfg *pcfg = NULL;
			const uint8_t byte = 0x81;
			FUZZ_CHECK(rpma_peer_cfg_from_descriptor(&byte, 1, &pcfg) == 0,
				   "rpma_peer_cfg_from_descriptor");
			FUZZ_CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg) == 0, "apply");
			FUZZ_CHECK(rpma_peer_cfg_delete(&pcfg) == 0, "rpma_peer_cfg_delete");
		}
		for (int i = 0; i < MAX_OPS && !fuzz_empty(&in); i++) {
			switch (fuzz_u8(&in) % 9) {
			case 0:
				do_write(conn, rmr, &m, &in, false, false);
				break;
			case 1:
				do_write(conn, rmr, &m, &in, true, false);
				break;
			case 2:
				do_write(conn, rmr, &m, &in, (i & 1) != 0, true);
				break;
			case 3:
				do_read(conn, rmr, &m, &in, false);
				break;
			case 4:
				do_read(conn, rmr, &m, &in, true);
				break;
			case 5:
				do_atomic(conn, rmr, &m, &in, false);
				break;
			case 6:
				do_atomic(conn, rmr, &m, &in, true);
				break;
			case 7:
				do_flush(conn, rmr, &m, &in);
				break;
			default:
				check_getters(rmr, &m);
				break;
			}
		}
		fuzz_conn_delete(&conn);
	}

	ret = rpma_mr_remote_delete(&rmr);
	FUZZ_CHECK(ret == 0 && rmr == NULL, "rpma_mr_remote_delete: %d", ret);
	fuzz_end();
	return 0;
}
