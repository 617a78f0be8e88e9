/* SPDX-License-Identifier: BSD-3-Clause */
/* alloc.c -- the memory allocation entry points of the core (a link seam for tests) */

#include <stdlib.h>

#include "alloc.h"

/* rpma_malloc -- allocate size bytes (uninitialised) */
__attribute__((noinline)) void *rpma_malloc(size_t size)
{
	return malloc(size);
}

/* rpma_calloc -- allocate nmemb zero-filled elements of size bytes */
__attribute__((noinline)) void *rpma_calloc(size_t nmemb, size_t size)
{
	return calloc(nmemb, size);
}

/* rpma_free -- release memory of rpma_malloc(), rpma_calloc() or a provider's malloc() */
__attribute__((noinline)) void rpma_free(void *ptr)
{
	free(ptr);
}
