/* SPDX-License-Identifier: BSD-3-Clause */
/* private_data.c -- ownership of the private data exchanged while connecting */

#include <stddef.h>

#include "alloc.h"
#include "private_data.h"

/* rpma_private_data_adopt -- take a buffer a provider returned; normalises ptr/len pairs */
void rpma_private_data_adopt(struct rpma_conn_private_data *dst, struct rpma_conn_private_data *src)
{
	if (src->ptr != NULL && src->len == 0) {
		/* a buffer without bytes carries nothing: do not keep it */
		rpma_free(src->ptr);
		src->ptr = NULL;
	}
	if (src->ptr == NULL)
		src->len = 0;

	dst->ptr = src->ptr;
	dst->len = src->len;
	src->ptr = NULL;
	src->len = 0;
}

/* rpma_private_data_move -- hand the buffer from src to dst (dst must be empty) */
void rpma_private_data_move(struct rpma_conn_private_data *dst, struct rpma_conn_private_data *src)
{
	dst->ptr = src->ptr;
	dst->len = src->len;
	src->ptr = NULL;
	src->len = 0;
}

/* rpma_private_data_discard -- release the buffer and empty the pair */
void rpma_private_data_discard(struct rpma_conn_private_data *pdata)
{
	rpma_free(pdata->ptr);
	pdata->ptr = NULL;
	pdata->len = 0;
}
