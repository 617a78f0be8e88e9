/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg.h -- shared receive queue settings (internal) */

#ifndef RPMA_SRQ_CFG_H
#define RPMA_SRQ_CFG_H

#include <stdint.h>

#include "librpma.h"

#define RPMA_SRQ_CFG_DEFAULT_RQ_SIZE  20
#define RPMA_SRQ_CFG_DEFAULT_RCQ_SIZE 20

/* rpma_srq_cfg_read -- the sizes of cfg, or the defaults when cfg is NULL */
void rpma_srq_cfg_read(const struct rpma_srq_cfg *cfg, uint32_t *rq_size, uint32_t *rcq_size);

#endif /* RPMA_SRQ_CFG_H */
