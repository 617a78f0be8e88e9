/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_peer.c -- devices (rpma_utils_*), provider selection from the
 * environment, and the peer
 */

#include <stdlib.h>

#include "unit.h"

/* ================================================== utils_get_ibv_context */

UNIT_SUITE(utils_get_ibv_context);

Test(utils_get_ibv_context, addr_eq_NULL)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	cr_assert_eq(rpma_utils_get_ibv_context(NULL, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
		     RPMA_E_INVAL);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(utils_get_ibv_context, ibv_ctx_ptr_eq_NULL)
{
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, NULL),
		     RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(utils_get_ibv_context, type_unknown)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	cr_assert_eq(
		rpma_utils_get_ibv_context(UNIT_ADDR, (enum rpma_util_ibv_context_type)2, &ctx),
		RPMA_E_INVAL);
	cr_assert_eq(
		rpma_utils_get_ibv_context(UNIT_ADDR, (enum rpma_util_ibv_context_type) - 1, &ctx),
		RPMA_E_INVAL);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(utils_get_ibv_context, auto_picks_verbs_first)
{
	struct ibv_context *ctx = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx), 0);
	cr_assert_eq(ctx, &fake_ibv_ctx);
	cr_assert_eq(fake_call_count(FAKE_OP_DEVICE_GET), 1);
	const struct fake_call *c = fake_last_call(FAKE_OP_DEVICE_GET);
	cr_assert_eq(c->prov, FAKE_PROV_VERBS);
	cr_assert_str_eq(c->addr, UNIT_ADDR);
	cr_assert_eq(c->type, RPMA_UTIL_IBV_CONTEXT_REMOTE);
}

Test(utils_get_ibv_context, auto_falls_to_fabric)
{
	struct ibv_context *ctx = NULL;
	fake_set_serves(FAKE_PROV_VERBS, false);
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	cr_assert_not_null(ctx);
	cr_assert_neq(ctx, &fake_ibv_ctx);
	/* an opaque handle of the core, not the provider's data */
	cr_assert_neq((void *)ctx, fake_fabric_dev());
	cr_assert_eq(fake_call_count(FAKE_OP_DEVICE_GET), 2);
	cr_assert_eq(fake_nth_call(FAKE_OP_DEVICE_GET, 0)->prov, FAKE_PROV_VERBS);
	cr_assert_eq(fake_nth_call(FAKE_OP_DEVICE_GET, 1)->prov, FAKE_PROV_FABRIC);
	cr_assert_eq(fake_nth_call(FAKE_OP_DEVICE_GET, 1)->type, RPMA_UTIL_IBV_CONTEXT_LOCAL);
}

Test(utils_get_ibv_context, empty_env_is_auto)
{
	struct ibv_context *ctx = NULL;
	setenv("RPMA_PROVIDER", "", 1);
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	cr_assert_eq(ctx, &fake_ibv_ctx);
}

Test(utils_get_ibv_context, no_provider_serves)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	fake_set_serves(FAKE_PROV_VERBS, false);
	fake_set_serves(FAKE_PROV_FABRIC, false);
	int ret = rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	cr_assert(ret == RPMA_E_PROVIDER || ret == RPMA_E_NOSUPP, "ret %d", ret);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
	cr_assert_gt(unit_log_count(RPMA_LOG_LEVEL_ERROR), 0);
}

Test(utils_get_ibv_context, forced_verbs_no_fallback)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	unit_provider("verbs");
	fake_set_serves(FAKE_PROV_VERBS, false);
	int ret = rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	cr_assert_lt(ret, 0);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_DEVICE_GET), 1);
	cr_assert_eq(fake_last_call(FAKE_OP_DEVICE_GET)->prov, FAKE_PROV_VERBS);
}

Test(utils_get_ibv_context, forced_fabric)
{
	struct ibv_context *ctx = NULL;
	unit_provider("fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	cr_assert_not_null(ctx);
	cr_assert_neq(ctx, &fake_ibv_ctx);
	cr_assert_eq(fake_call_count(FAKE_OP_DEVICE_GET), 1);
	cr_assert_eq(fake_last_call(FAKE_OP_DEVICE_GET)->prov, FAKE_PROV_FABRIC);
}

Test(utils_get_ibv_context, forced_unknown)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	unit_provider("psm3");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
		     RPMA_E_NOSUPP);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0, "no silent fallback");
	/* the log names the built providers */
	cr_assert(strstr(unit_log_last(), "verbs") != NULL && strstr(unit_log_last(), "fabric"),
		  "log: %s", unit_log_last());
}

Test(utils_get_ibv_context, forced_case_matters)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	unit_provider("VERBS");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
		     RPMA_E_NOSUPP);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
}

Test(utils_get_ibv_context, provider_error_passes_through)
{
	struct ibv_context *ctx = UNIT_POISON_PTR;
	unit_provider("verbs");
	fake_fail_next(FAKE_OP_DEVICE_GET, RPMA_E_NOMEM);
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
		     RPMA_E_NOMEM);
	cr_assert_eq(ctx, UNIT_POISON_PTR);
}

/* ====================================== utils_ibv_context_is_odp_capable */

UNIT_SUITE(utils_ibv_context_is_odp_capable);

Test(utils_ibv_context_is_odp_capable, NULL_arguments)
{
	int odp = 7;
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(NULL, &odp), RPMA_E_INVAL);
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(&fake_ibv_ctx, NULL), RPMA_E_INVAL);
	cr_assert_eq(odp, 7);
}

Test(utils_ibv_context_is_odp_capable, verbs_answers)
{
	struct ibv_context *ctx = NULL;
	int odp = 7;
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	fake_set_odp_capable(true);
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(ctx, &odp), 0);
	cr_assert_eq(odp, 1);
	fake_set_odp_capable(false);
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(ctx, &odp), 0);
	cr_assert_eq(odp, 0);
	cr_assert_eq(fake_last_call(FAKE_OP_DEVICE_IS_ODP_CAPABLE)->dev, &fake_ibv_ctx);
}

Test(utils_ibv_context_is_odp_capable, provider_error)
{
	int odp = 7;
	fake_fail_next(FAKE_OP_DEVICE_IS_ODP_CAPABLE, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(&fake_ibv_ctx, &odp), RPMA_E_PROVIDER);
	cr_assert_eq(odp, 7);
}

Test(utils_ibv_context_is_odp_capable, fabric_without_op_is_not_capable)
{
	struct ibv_context *ctx = NULL;
	int odp = 7;
	unit_provider("fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	fake_set_odp_capable(true); /* the verbs fake would say yes */
	cr_assert_eq(rpma_utils_ibv_context_is_odp_capable(ctx, &odp), 0);
	cr_assert_eq(odp, 0);
	cr_assert_eq(fake_call_count(FAKE_OP_DEVICE_IS_ODP_CAPABLE), 0);
}

/* ============================================================== peer_new */

UNIT_SUITE(peer_new);

Test(peer_new, ibv_ctx_eq_NULL)
{
	struct rpma_peer *peer = UNIT_POISON_PTR;
	cr_assert_eq(rpma_peer_new(NULL, &peer), RPMA_E_INVAL);
	cr_assert_eq(peer, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(peer_new, peer_ptr_eq_NULL)
{
	cr_assert_eq(rpma_peer_new(&fake_ibv_ctx, NULL), RPMA_E_INVAL);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(peer_new, verbs_context)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	cr_assert_eq(rpma_peer_new(ctx, &peer), 0);
	cr_assert_not_null(peer);
	const struct fake_call *c = fake_last_call(FAKE_OP_PEER_INIT);
	cr_assert_not_null(c);
	cr_assert_eq(c->prov, FAKE_PROV_VERBS);
	cr_assert_eq(c->dev, &fake_ibv_ctx);
	cr_assert_eq(c->obj, peer);
	cr_assert_eq(fake_live(FAKE_OBJ_PEER), 1);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
	cr_assert_null(peer);
	cr_assert_eq(fake_call_count(FAKE_OP_PEER_FINI), 1);
}

Test(peer_new, real_looking_context_goes_to_ibv_provider)
{
	/* a struct ibv_context the core never issued: the IBV_CONTEXT provider gets it as is */
	struct ibv_context mine;
	memset(&mine, 0, sizeof(mine));
	struct rpma_peer *peer = NULL;
	cr_assert_eq(rpma_peer_new(&mine, &peer), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_PEER_INIT);
	cr_assert_eq(c->prov, FAKE_PROV_VERBS);
	cr_assert_eq(c->dev, &mine);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

Test(peer_new, fabric_handle_goes_to_fabric)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	unit_provider("fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), 0);
	unit_provider(NULL);
	cr_assert_eq(rpma_peer_new(ctx, &peer), 0);
	const struct fake_call *c = fake_last_call(FAKE_OP_PEER_INIT);
	cr_assert_eq(c->prov, FAKE_PROV_FABRIC);
	cr_assert_eq(c->dev, fake_fabric_dev(), "the provider gets its own device data back");
	cr_assert_eq(rpma_peer_delete(&peer), 0);
}

Test(peer_new, fabric_handle_is_stable)
{
	struct ibv_context *a = NULL, *b = NULL;
	unit_provider("fabric");
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_LOCAL, &a), 0);
	cr_assert_eq(rpma_utils_get_ibv_context(UNIT_ADDR, RPMA_UTIL_IBV_CONTEXT_REMOTE, &b), 0);
	cr_assert_eq(a, b, "one handle per device");
}

Test(peer_new, raw_context_under_forced_fabric)
{
	struct rpma_peer *peer = UNIT_POISON_PTR;
	unit_provider("fabric");
	cr_assert_eq(rpma_peer_new(&fake_ibv_ctx, &peer), RPMA_E_NOSUPP);
	cr_assert_eq(peer, UNIT_POISON_PTR);
	cr_assert_eq(fake_call_count(FAKE_OP_PEER_INIT), 0);
}

Test(peer_new, raw_context_under_unknown_provider)
{
	struct rpma_peer *peer = UNIT_POISON_PTR;
	unit_provider("nonesuch");
	cr_assert_eq(rpma_peer_new(&fake_ibv_ctx, &peer), RPMA_E_NOSUPP);
	cr_assert_eq(peer, UNIT_POISON_PTR);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(peer_new, peer_init_fails)
{
	const int codes[] = {RPMA_E_PROVIDER, RPMA_E_NOMEM, RPMA_E_NOSUPP};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct rpma_peer *peer = UNIT_POISON_PTR;
		fake_fail_next(FAKE_OP_PEER_INIT, codes[i]);
		cr_assert_eq(rpma_peer_new(&fake_ibv_ctx, &peer), codes[i]);
		cr_assert_eq(peer, UNIT_POISON_PTR);
		cr_assert_eq(fake_live(FAKE_OBJ_PEER), 0);
		cr_assert_eq(fake_call_count(FAKE_OP_PEER_FINI), 0);
	}
}

/* =========================================================== peer_delete */

UNIT_SUITE(peer_delete);

Test(peer_delete, peer_ptr_eq_NULL)
{
	cr_assert_eq(rpma_peer_delete(NULL), RPMA_E_INVAL);
}

Test(peer_delete, peer_eq_NULL)
{
	struct rpma_peer *peer = NULL;
	cr_assert_eq(rpma_peer_delete(&peer), 0);
	cr_assert_null(peer);
	cr_assert_eq(fake_calls_total(), 0);
}

Test(peer_delete, peer_fini_fails)
{
	struct rpma_peer *peer = unit_peer(FAKE_PROV_VERBS);
	fake_fail_next(FAKE_OP_PEER_FINI, RPMA_E_PROVIDER);
	cr_assert_eq(rpma_peer_delete(&peer), RPMA_E_PROVIDER);
	cr_assert_null(peer, "freed whatever the provider said");
}

Test(peer_delete, fabric_peer)
{
	struct rpma_peer *peer = unit_peer(FAKE_PROV_FABRIC);
	cr_assert_eq(rpma_peer_delete(&peer), 0);
	cr_assert_null(peer);
	cr_assert_eq(fake_last_call(FAKE_OP_PEER_FINI)->prov, FAKE_PROV_FABRIC);
}
