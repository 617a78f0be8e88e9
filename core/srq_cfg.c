/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg.c -- shared receive queue settings; fields are read and written atomically */

#include <stdatomic.h>

#include "alloc.h"
#include "log.h"
#include "srq_cfg.h"

struct rpma_srq_cfg {
	_Atomic uint32_t rq_size;
	_Atomic uint32_t rcq_size;
};

static struct rpma_srq_cfg rpma_srq_cfg_default = {
	.rq_size = RPMA_SRQ_CFG_DEFAULT_RQ_SIZE,
	.rcq_size = RPMA_SRQ_CFG_DEFAULT_RCQ_SIZE,
};

/* RPMA_SRQ_CFG -- the mutable object behind a const pointer (atomic loads only) */
#define RPMA_SRQ_CFG(cfg) ((struct rpma_srq_cfg *)(cfg))

/* rpma_srq_cfg_read -- the sizes of cfg, or the defaults when cfg is NULL */
void rpma_srq_cfg_read(const struct rpma_srq_cfg *cfg, uint32_t *rq_size, uint32_t *rcq_size)
{
	struct rpma_srq_cfg *c = cfg ? RPMA_SRQ_CFG(cfg) : &rpma_srq_cfg_default;

	*rq_size = atomic_load(&c->rq_size);
	*rcq_size = atomic_load(&c->rcq_size);
}

/* rpma_srq_cfg_new -- settings with the defaults */
int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_srq_cfg *cfg = rpma_malloc(sizeof(*cfg));
	if (cfg == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	atomic_init(&cfg->rq_size, RPMA_SRQ_CFG_DEFAULT_RQ_SIZE);
	atomic_init(&cfg->rcq_size, RPMA_SRQ_CFG_DEFAULT_RCQ_SIZE);

	*cfg_ptr = cfg;
	return 0;
}

/* rpma_srq_cfg_delete -- release the settings */
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	rpma_free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

/* rpma_srq_cfg_set_rq_size -- how many receives the queue holds */
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

/* rpma_srq_cfg_get_rq_size -- read the queue size back */
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "rq_size");
		return RPMA_E_INVAL;
	}

	*rq_size = atomic_load(&RPMA_SRQ_CFG(cfg)->rq_size);
	return 0;
}

/* rpma_srq_cfg_set_rcq_size -- the entries of the queue's own receive CQ (0: none) */
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: cfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

/* rpma_srq_cfg_get_rcq_size -- read the receive CQ size back */
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", cfg == NULL ? "cfg" : "rcq_size");
		return RPMA_E_INVAL;
	}

	*rcq_size = atomic_load(&RPMA_SRQ_CFG(cfg)->rcq_size);
	return 0;
}
