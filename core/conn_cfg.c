/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg.c -- connection settings; every field is read and written atomically */

#include <stdatomic.h>

#include "alloc.h"
#include "conn_cfg.h"
#include "log.h"

struct rpma_conn_cfg {
	_Atomic int timeout_ms;
	_Atomic uint32_t cq_size;
	_Atomic uint32_t rcq_size;
	_Atomic uint32_t sq_size;
	_Atomic uint32_t rq_size;
	_Atomic bool shared_channel;
	_Atomic(struct rpma_srq *) srq;
};

/* the settings used when a function gets cfg == NULL */
static struct rpma_conn_cfg rpma_conn_cfg_default = {
	.timeout_ms = RPMA_DEFAULT_TIMEOUT_MS,
	.cq_size = RPMA_CONN_CFG_DEFAULT_CQ_SIZE,
	.rcq_size = RPMA_CONN_CFG_DEFAULT_RCQ_SIZE,
	.sq_size = RPMA_CONN_CFG_DEFAULT_SQ_SIZE,
	.rq_size = RPMA_CONN_CFG_DEFAULT_RQ_SIZE,
	.shared_channel = false,
	.srq = NULL,
};

/* RPMA_CFG -- the mutable object behind a const pointer (atomic loads only) */
#define RPMA_CFG(cfg) ((struct rpma_conn_cfg *)(cfg))

/* rpma_conn_cfg_read -- the settings of cfg, or the defaults when cfg is NULL */
void rpma_conn_cfg_read(const struct rpma_conn_cfg *cfg, struct rpma_conn_cfg_values *v)
{
	struct rpma_conn_cfg *c = cfg ? RPMA_CFG(cfg) : &rpma_conn_cfg_default;

	v->timeout_ms = atomic_load(&c->timeout_ms);
	v->cq_size = atomic_load(&c->cq_size);
	v->rcq_size = atomic_load(&c->rcq_size);
	v->sq_size = atomic_load(&c->sq_size);
	v->rq_size = atomic_load(&c->rq_size);
	v->shared_channel = atomic_load(&c->shared_channel);
	v->srq = atomic_load(&c->srq);
}

/* rpma_conn_cfg_new -- settings with the defaults */
int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_conn_cfg *cfg = rpma_malloc(sizeof(*cfg));
	if (cfg == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}

	atomic_init(&cfg->timeout_ms, RPMA_DEFAULT_TIMEOUT_MS);
	atomic_init(&cfg->cq_size, RPMA_CONN_CFG_DEFAULT_CQ_SIZE);
	atomic_init(&cfg->rcq_size, RPMA_CONN_CFG_DEFAULT_RCQ_SIZE);
	atomic_init(&cfg->sq_size, RPMA_CONN_CFG_DEFAULT_SQ_SIZE);
	atomic_init(&cfg->rq_size, RPMA_CONN_CFG_DEFAULT_RQ_SIZE);
	atomic_init(&cfg->shared_channel, false);
	atomic_init(&cfg->srq, NULL);

	*cfg_ptr = cfg;
	return 0;
}

/* rpma_conn_cfg_delete -- release the settings */
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	rpma_free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

/* rpma_conn_cfg_set_timeout -- the time allowed for setting a connection up */
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}
	if (timeout_ms < 0) {
		RPMA_LOG_ERROR("invalid argument: timeout_ms %d < 0", timeout_ms);
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->timeout_ms, timeout_ms);
	return 0;
}

/* rpma_conn_cfg_get_timeout -- read the timeout back */
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms)
{
	if (cfg == NULL || timeout_ms == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "timeout_ms");
		return RPMA_E_INVAL;
	}

	*timeout_ms = atomic_load(&RPMA_CFG(cfg)->timeout_ms);
	return 0;
}

/* rpma_conn_cfg_set_cq_size -- the number of entries of the main CQ */
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->cq_size, cq_size);
	return 0;
}

/* rpma_conn_cfg_get_cq_size -- read the main CQ size back */
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size)
{
	if (cfg == NULL || cq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "cq_size");
		return RPMA_E_INVAL;
	}

	*cq_size = atomic_load(&RPMA_CFG(cfg)->cq_size);
	return 0;
}

/* rpma_conn_cfg_set_rcq_size -- the number of entries of a separate receive CQ (0: none) */
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

/* rpma_conn_cfg_get_rcq_size -- read the receive CQ size back */
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "rcq_size");
		return RPMA_E_INVAL;
	}

	*rcq_size = atomic_load(&RPMA_CFG(cfg)->rcq_size);
	return 0;
}

/* rpma_conn_cfg_set_sq_size -- how many send-side operations may be outstanding */
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->sq_size, sq_size);
	return 0;
}

/* rpma_conn_cfg_get_sq_size -- read the send queue size back */
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size)
{
	if (cfg == NULL || sq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "sq_size");
		return RPMA_E_INVAL;
	}

	*sq_size = atomic_load(&RPMA_CFG(cfg)->sq_size);
	return 0;
}

/* rpma_conn_cfg_set_rq_size -- how many receives may be posted at once */
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

/* rpma_conn_cfg_get_rq_size -- read the receive queue size back */
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "rq_size");
		return RPMA_E_INVAL;
	}

	*rq_size = atomic_load(&RPMA_CFG(cfg)->rq_size);
	return 0;
}

/* rpma_conn_cfg_set_compl_channel -- make the CQ and the receive CQ share one channel */
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->shared_channel, shared);
	return 0;
}

/* rpma_conn_cfg_get_compl_channel -- read the shared-channel setting back */
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared)
{
	if (cfg == NULL || shared == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "shared");
		return RPMA_E_INVAL;
	}

	*shared = atomic_load(&RPMA_CFG(cfg)->shared_channel);
	return 0;
}

/* rpma_conn_cfg_set_srq -- take receives from a shared receive queue (as upstream: not NULL) */
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	if (cfg == NULL || srq == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "srq");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->srq, srq);
	return 0;
}

/* rpma_conn_cfg_get_srq -- read the shared receive queue back */
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr)
{
	if (cfg == NULL || srq_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "srq_ptr");
		return RPMA_E_INVAL;
	}

	*srq_ptr = atomic_load(&RPMA_CFG(cfg)->srq);
	return 0;
}
