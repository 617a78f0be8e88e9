/* SPDX-License-Identifier: BSD-3-Clause */
/* private_data.h -- ownership of the private data exchanged while connecting (internal) */

#ifndef RPMA_PRIVATE_DATA_H
#define RPMA_PRIVATE_DATA_H

#include "librpma.h"

/*
 * The core keeps private data as a heap buffer it owns (ptr allocated with
 * malloc() by a provider, released with rpma_free()), or { NULL, 0 }.
 */

/* rpma_private_data_adopt -- take a buffer a provider returned; normalises ptr/len pairs */
void rpma_private_data_adopt(struct rpma_conn_private_data *dst,
			     struct rpma_conn_private_data *src);

/* rpma_private_data_move -- hand the buffer from src to dst (dst must be empty) */
void rpma_private_data_move(struct rpma_conn_private_data *dst, struct rpma_conn_private_data *src);

/* rpma_private_data_discard -- release the buffer and empty the pair */
void rpma_private_data_discard(struct rpma_conn_private_data *pdata);

#endif /* RPMA_PRIVATE_DATA_H */
