/* SPDX-License-Identifier: BSD-3-Clause */
/* test_mr.c -- local and remote memory regions and their descriptors */

#include "unit.h"

static struct rpma_peer *peer;
static uint8_t buf[UNIT_MR_SIZE];

/* mr_init -- a verbs peer for every test */
static void mr_init(void)
{
	unit_init();
	peer = unit_peer(FAKE_PROV_VERBS);
	fake_reset();
}

/* mr_fini -- drop the peer, then the usual checks */
static void mr_fini(void)
{
	cr_expect_eq(rpma_peer_delete(&peer), 0);
	unit_fini();
}

#define MR_SUITE(name) TestSuite(name, .init = mr_init, .fini = mr_fini)

/* ================================================================ mr_reg */

MR_SUITE(mr_reg);

Test(mr_reg, peer_eq_NULL)
{
	struct rpma_mr_local *mr = UNIT_POISON_PTR;
	cr_assert_eq(rpma_mr_reg(NULL, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
		     RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, ptr_eq_NULL)
{
	struct rpma_mr_local *mr = UNIT_POISON_PTR;
	cr_assert_eq(rpma_mr_reg(peer, NULL, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
		     RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, size_eq_0)
{
	struct rpma_mr_local *mr = UNIT_POISON_PTR;
	cr_assert_eq(rpma_mr_reg(peer, buf, 0, RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, usage_eq_0)
{
	struct rpma_mr_local *mr = UNIT_POISON_PTR;
	cr_assert_eq(rpma_mr_reg(peer, buf, sizeof(buf), 0, &mr), RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, usage_unknown_bits)
{
	const int usages[] = {1 << 8, RPMA_MR_USAGE_READ_SRC | (1 << 12), -1, 1 << 30};
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		struct rpma_mr_local *mr = UNIT_POISON_PTR;
		cr_assert_eq(rpma_mr_reg(peer, buf, sizeof(buf), usages[i], &mr), RPMA_E_INVAL,
			     "usage %#x", usages[i]);
		cr_assert_eq(mr, UNIT_POISON_PTR);
	}
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, mr_ptr_eq_NULL)
{
	cr_assert_eq(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_reg, success)
{
	struct rpma_mr_local *mr = NULL;
	const int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	cr_assert_eq(rpma_mr_reg(peer, buf + 16, 100, usage, &mr), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_MR_REG);
	cr_assert_eq(c->obj2, peer);
	cr_assert_eq(c->obj, mr);
	cr_assert_eq(c->ptr, buf + 16);
	cr_assert_eq(c->size, 100);
	cr_assert_eq(c->usage, usage);

	void *ptr = NULL;
	size_t size = 0;
	cr_assert_eq(rpma_mr_get_ptr(mr, &ptr), 0);
	cr_assert_eq(ptr, buf + 16);
	cr_assert_eq(rpma_mr_get_size(mr, &size), 0);
	cr_assert_eq(size, 100);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
	cr_assert_null(mr);
	cr_assert_eq(fake_call_count(FAKE_OP_MR_DEREG), 1);
}

Test(mr_reg, every_single_usage_bit)
{
	for (int bit = 0; bit < 8; bit++) {
		struct rpma_mr_local *mr = NULL;
		cr_assert_eq(rpma_mr_reg(peer, buf, sizeof(buf), 1 << bit, &mr), 0, "bit %d", bit);
		cr_assert_eq(rpma_mr_dereg(&mr), 0);
	}
}

Test(mr_reg, provider_fails)
{
	struct rpma_mr_local *mr = UNIT_POISON_PTR;
	fake_fail_next(FAKE_OP_MR_REG, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
		     RPMA_E_PROVIDER);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(fake_live(FAKE_OBJ_MR), 0);
	cr_assert_eq(fake_call_count(FAKE_OP_MR_DEREG), 0);
}

/* ============================================================== mr_dereg */

MR_SUITE(mr_dereg);

Test(mr_dereg, mr_ptr_eq_NULL)
{
	cr_assert_eq(rpma_mr_dereg(NULL), RPMA_E_INVAL);
}

Test(mr_dereg, mr_eq_NULL)
{
	struct rpma_mr_local *mr = NULL;
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_dereg, provider_fails)
{
	struct rpma_mr_local *mr = unit_mr(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	fake_fail_next(FAKE_OP_MR_DEREG, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_mr_dereg(&mr), RPMA_E_PROVIDER);
	cr_assert_null(mr);
}

/* ============================================================ mr_getters */

MR_SUITE(mr_getters);

Test(mr_getters, NULL_arguments)
{
	struct rpma_mr_local *mr = unit_mr(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	void *ptr = UNIT_POISON_PTR;
	size_t size = 77;
	cr_assert_eq(rpma_mr_get_ptr(NULL, &ptr), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_ptr(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_size(NULL, &size), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_size(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor_size(NULL, &size), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor_size(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor(NULL, buf), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_get_descriptor(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(ptr, UNIT_POISON_PTR);
	cr_assert_eq(size, 77);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

/* ===================================================== mr_get_descriptor */

MR_SUITE(mr_get_descriptor);

Test(mr_get_descriptor, short_form_byte_exact)
{
	fake_set_mr_keys(false, 0x11223344);
	const int usage = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	struct rpma_mr_local *mr = unit_mr(peer, buf, 0x1000, usage);
	size_t size = 0;
	cr_assert_eq(rpma_mr_get_descriptor_size(mr, &size), 0);
	cr_assert_eq(size, 21);

	uint8_t desc[32];
	memset(desc, 0xAA, sizeof(desc));
	cr_assert_eq(rpma_mr_get_descriptor(mr, desc), 0);
	uint8_t want[21];
	unit_desc(want, (uint64_t)(uintptr_t)buf, 0x1000, 0x11223344, (uint8_t)usage);
	cr_assert_arr_eq(desc, want, 21);
	/* little-endian, spelled out */
	cr_assert_eq(desc[8], 0x00);
	cr_assert_eq(desc[9], 0x10);
	cr_assert_eq(desc[16], 0x44);
	cr_assert_eq(desc[19], 0x11);
	cr_assert_eq(desc[20], 0x21);
	cr_assert_eq(desc[21], 0xAA, "wrote beyond 21 bytes");
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(mr_get_descriptor, offset_addressing)
{
	fake_set_mr_keys(true, 7);
	struct rpma_mr_local *mr = unit_mr(peer, buf, 64, RPMA_MR_USAGE_WRITE_DST);
	uint8_t desc[21], want[21];
	cr_assert_eq(rpma_mr_get_descriptor(mr, desc), 0);
	unit_desc(want, 0, 64, 7, RPMA_MR_USAGE_WRITE_DST);
	cr_assert_arr_eq(desc, want, 21);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(mr_get_descriptor, long_form_for_64_bit_key)
{
	const uint64_t rkey = 0xfedcba9876543210ULL;
	fake_set_mr_keys(true, rkey);
	struct rpma_mr_local *mr = unit_mr(peer, buf, 256, RPMA_MR_USAGE_READ_SRC);
	size_t size = 0;
	cr_assert_eq(rpma_mr_get_descriptor_size(mr, &size), 0);
	cr_assert_eq(size, 26);
	uint8_t desc[32], want[26];
	memset(desc, 0xAA, sizeof(desc));
	cr_assert_eq(rpma_mr_get_descriptor(mr, desc), 0);
	unit_desc(want, 0, 256, 0x76543210, RPMA_MR_USAGE_READ_SRC);
	want[21] = 0xE5;
	want[22] = 0x98;
	want[23] = 0xba;
	want[24] = 0xdc;
	want[25] = 0xfe;
	cr_assert_arr_eq(desc, want, 26);
	cr_assert_eq(desc[26], 0xAA, "wrote beyond 26 bytes");
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(mr_get_descriptor, key_of_exactly_32_bits_is_short)
{
	fake_set_mr_keys(false, 0xffffffffULL);
	struct rpma_mr_local *mr = unit_mr(peer, buf, 256, RPMA_MR_USAGE_READ_SRC);
	size_t size = 0;
	cr_assert_eq(rpma_mr_get_descriptor_size(mr, &size), 0);
	cr_assert_eq(size, 21);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);

	fake_set_mr_keys(false, 0x100000000ULL);
	mr = unit_mr(peer, buf, 256, RPMA_MR_USAGE_READ_SRC);
	cr_assert_eq(rpma_mr_get_descriptor_size(mr, &size), 0);
	cr_assert_eq(size, 26);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

/* ============================================ mr_remote_from_descriptor */

MR_SUITE(mr_remote_from_descriptor);

Test(mr_remote_from_descriptor, NULL_arguments)
{
	uint8_t desc[21];
	struct rpma_mr_remote *mr = UNIT_POISON_PTR;
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, RPMA_MR_USAGE_READ_SRC);
	cr_assert_eq(rpma_mr_remote_from_descriptor(NULL, 21, &mr), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, NULL), RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
}

Test(mr_remote_from_descriptor, size_too_short)
{
	uint8_t desc[21];
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, RPMA_MR_USAGE_READ_SRC);
	for (size_t size = 0; size < 21; size++) {
		struct rpma_mr_remote *mr = UNIT_POISON_PTR;
		cr_assert_eq(rpma_mr_remote_from_descriptor(desc, size, &mr), RPMA_E_INVAL,
			     "size %zu", size);
		cr_assert_eq(mr, UNIT_POISON_PTR);
	}
}

Test(mr_remote_from_descriptor, usage_eq_0)
{
	uint8_t desc[21];
	struct rpma_mr_remote *mr = UNIT_POISON_PTR;
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, 0);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &mr), RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
}

Test(mr_remote_from_descriptor, end_wraps_past_2_64)
{
	uint8_t desc[21];
	struct rpma_mr_remote *mr = UNIT_POISON_PTR;
	unit_log_reset();
	unit_desc(desc, 0xfffffffffffff800ULL, 4096, UNIT_RKEY, RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &mr), RPMA_E_INVAL);
	cr_assert_eq(mr, UNIT_POISON_PTR);
	cr_assert_eq(unit_log_count(RPMA_LOG_LEVEL_ERROR), 1);

	/* the sum 2^64 itself does not fit either; one byte less does */
	unit_desc(desc, 0xffffffffffffff00ULL, 0x100, UNIT_RKEY, RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &mr), RPMA_E_INVAL);
	unit_desc(desc, 0xffffffffffffff00ULL, 0xff, UNIT_RKEY, RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &mr), 0);
	cr_assert_eq(rpma_mr_remote_delete(&mr), 0);
}

Test(mr_remote_from_descriptor, round_trip_every_usage)
{
	for (int usage = 1; usage <= 0xff; usage++) {
		uint8_t desc[21];
		struct rpma_mr_remote *mr = NULL;
		size_t size = 0;
		int flush_type = -1;
		unit_desc(desc, UNIT_RADDR, 0x123456789ULL, UNIT_RKEY, (uint8_t)usage);
		cr_assert_eq(rpma_mr_remote_from_descriptor(desc, 21, &mr), 0);
		cr_assert_eq(rpma_mr_remote_get_size(mr, &size), 0);
		cr_assert_eq(size, 0x123456789ULL);
		cr_assert_eq(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
		cr_assert_eq(flush_type,
			     usage & (RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
				      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY),
			     "usage %#x", usage);
		cr_assert_eq(rpma_mr_remote_delete(&mr), 0);
		cr_assert_null(mr);
	}
}

Test(mr_remote_from_descriptor, local_to_remote_round_trip)
{
	fake_set_mr_keys(false, 0x0badf00d);
	struct rpma_mr_local *local = unit_mr(
		peer, buf, 1000, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	uint8_t desc[26];
	size_t desc_size = 0;
	cr_assert_eq(rpma_mr_get_descriptor_size(local, &desc_size), 0);
	cr_assert_eq(rpma_mr_get_descriptor(local, desc), 0);
	struct rpma_mr_remote *remote = NULL;
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, desc_size, &remote), 0);
	size_t size = 0;
	int ft = 0;
	cr_assert_eq(rpma_mr_remote_get_size(remote, &size), 0);
	cr_assert_eq(size, 1000);
	cr_assert_eq(rpma_mr_remote_get_flush_type(remote, &ft), 0);
	cr_assert_eq(ft, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	cr_assert_eq(rpma_mr_remote_delete(&remote), 0);
	cr_assert_eq(rpma_mr_dereg(&local), 0);
}

Test(mr_remote_from_descriptor, longer_short_form_accepted)
{
	/* 25 bytes with the tag byte: still the 21-byte form (the long one needs 26) */
	uint8_t desc[25];
	memset(desc, 0xE5, sizeof(desc));
	unit_desc(desc, UNIT_RADDR, 4096, UNIT_RKEY, RPMA_MR_USAGE_READ_SRC);
	struct rpma_mr_remote *mr = NULL;
	size_t size = 0;
	cr_assert_eq(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr), 0);
	cr_assert_eq(rpma_mr_remote_get_size(mr, &size), 0);
	cr_assert_eq(size, 4096);
	cr_assert_eq(rpma_mr_remote_delete(&mr), 0);
}

Test(mr_remote_from_descriptor, getters_NULL)
{
	struct rpma_mr_remote *mr = unit_remote(UNIT_RADDR, 4096, UNIT_RKEY, 0x30);
	size_t size = 77;
	int ft = 77;
	cr_assert_eq(rpma_mr_remote_get_size(NULL, &size), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_get_size(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_get_flush_type(NULL, &ft), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_get_flush_type(mr, NULL), RPMA_E_INVAL);
	cr_assert_eq(size, 77);
	cr_assert_eq(ft, 77);
	cr_assert_eq(rpma_mr_remote_delete(&mr), 0);
}

Test(mr_remote_from_descriptor, delete_NULL)
{
	struct rpma_mr_remote *mr = NULL;
	cr_assert_eq(rpma_mr_remote_delete(NULL), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_remote_delete(&mr), 0);
}

/* ============================================================= mr_advise */

MR_SUITE(mr_advise);

Test(mr_advise, mr_eq_NULL)
{
	cr_assert_eq(rpma_mr_advise(NULL, 0, 8, 0, 0), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(mr_advise, passthrough)
{
	struct rpma_mr_local *mr = unit_mr(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_advise(mr, 128, 256, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH),
		     0);
	const struct fake_call *c = fake_last_call(FAKE_OP_MR_ADVISE);
	cr_assert_eq(c->obj, mr);
	cr_assert_eq(c->offset, 128);
	cr_assert_eq(c->len, 256);
	cr_assert_eq(c->advice, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
	cr_assert_eq(c->advice_flags, IBV_ADVISE_MR_FLAG_FLUSH);
	fake_fail_next(FAKE_OP_MR_ADVISE, RPMA_E_NOSUPP);
	cr_assert_eq(rpma_mr_advise(mr, 0, 8, 0, 0), RPMA_E_NOSUPP);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(mr_advise, beyond_the_region)
{
	struct rpma_mr_local *mr = unit_mr(peer, buf, 100, RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_advise(mr, 50, 51, 0, 0), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_advise(mr, 101, 0, 0, 0), RPMA_E_INVAL);
	cr_assert_eq(rpma_mr_advise(mr, SIZE_MAX, 2, 0, 0), RPMA_E_INVAL);
	cr_assert_eq(fake_call_count(FAKE_OP_MR_ADVISE), 0);
	cr_assert_eq(rpma_mr_advise(mr, 50, 50, 0, 0), 0);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
}

Test(mr_advise, fabric_has_no_advise)
{
	struct rpma_peer *fp = unit_peer(FAKE_PROV_FABRIC);
	struct rpma_mr_local *mr = unit_mr(fp, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_DST);
	cr_assert_eq(rpma_mr_advise(mr, 0, 8, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0),
		     RPMA_E_NOSUPP);
	cr_assert_eq(rpma_mr_dereg(&mr), 0);
	cr_assert_eq(rpma_peer_delete(&fp), 0);
}
