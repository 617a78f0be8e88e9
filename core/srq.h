/* SPDX-License-Identifier: BSD-3-Clause */
/* srq.h -- shared receive queues (internal) */

#ifndef RPMA_SRQ_H
#define RPMA_SRQ_H

#include "provider.h"

/* rpma_srq_rcq -- the SRQ's own receive CQ, or NULL */
struct rpma_cq *rpma_srq_rcq(const struct rpma_srq *srq);

#endif /* RPMA_SRQ_H */
