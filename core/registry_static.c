/* SPDX-License-Identifier: BSD-3-Clause */
/* registry_static.c -- the providers of a program that links them in (rpma-info) */

#include "config.h"

#include "provider.h"

/* the tables of the providers this program links in */
extern const struct rpma_provider rpma_provider_verbs;
extern const struct rpma_provider rpma_provider_fabric;

/* the linked-in providers: verbs first, then fabric (NULL-terminated) */
const struct rpma_provider *const rpma_providers[] = {
#ifdef RPMA_HAVE_VERBS
	&rpma_provider_verbs,
#endif
#ifdef RPMA_HAVE_FABRIC
	&rpma_provider_fabric,
#endif
	NULL,
};

/* no module is loaded: the program has them all */
const char *const rpma_provider_modules = NULL;
