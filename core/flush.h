/* SPDX-License-Identifier: BSD-3-Clause */
/* flush.h -- the read-after-write flush region of a connection (internal) */

#ifndef RPMA_FLUSH_H
#define RPMA_FLUSH_H

#include "provider.h"

/* the length of the read that makes earlier writes reach the target's memory */
#define RPMA_FLUSH_APM_LEN 8

struct rpma_flush;

/*
 * rpma_flush_new -- the region an APM flush reads into (one page mapped,
 * its first 8 bytes registered with RPMA_MR_USAGE_READ_DST); *flush_ptr is
 * NULL when the peer flushes natively
 */
int rpma_flush_new(struct rpma_peer *peer, struct rpma_flush **flush_ptr);

/* rpma_flush_delete -- deregister and unmap the region (NULL is fine) */
int rpma_flush_delete(struct rpma_flush **flush_ptr);

#endif /* RPMA_FLUSH_H */
