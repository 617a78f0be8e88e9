/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg.h -- connection settings (internal) */

#ifndef RPMA_CONN_CFG_H
#define RPMA_CONN_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "librpma.h"

/* the defaults of a new configuration (and of a NULL one) */
#define RPMA_CONN_CFG_DEFAULT_CQ_SIZE  10
#define RPMA_CONN_CFG_DEFAULT_RCQ_SIZE 0
#define RPMA_CONN_CFG_DEFAULT_SQ_SIZE  10
#define RPMA_CONN_CFG_DEFAULT_RQ_SIZE  10

/* one consistent reading of every setting */
struct rpma_conn_cfg_values {
	int timeout_ms;
	uint32_t cq_size;
	uint32_t rcq_size;
	uint32_t sq_size;
	uint32_t rq_size;
	bool shared_channel;
	struct rpma_srq *srq;
};

/* rpma_conn_cfg_read -- the settings of cfg, or the defaults when cfg is NULL */
void rpma_conn_cfg_read(const struct rpma_conn_cfg *cfg, struct rpma_conn_cfg_values *v);

#endif /* RPMA_CONN_CFG_H */
