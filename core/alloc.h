/* SPDX-License-Identifier: BSD-3-Clause */
/* alloc.h -- the memory allocation entry points of the core */

#ifndef RPMA_ALLOC_H
#define RPMA_ALLOC_H

#include <stddef.h>

/*
 * Every allocation of the core goes through these functions.  They live in
 * their own object file (alloc.c) and are never inlined, so that a test
 * binary can replace them with -Wl,--wrap=rpma_malloc / --wrap=rpma_calloc
 * and make any allocation fail.  rpma_free() releases memory obtained from
 * either of them and memory a provider allocated with malloc().
 */
void *rpma_malloc(size_t size);
void *rpma_calloc(size_t nmemb, size_t size);
void rpma_free(void *ptr);

#endif /* RPMA_ALLOC_H */
