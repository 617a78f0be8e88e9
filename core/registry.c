/* SPDX-License-Identifier: BSD-3-Clause */
/* registry.c -- the providers of librpma.so.0: modules, in the order of automatic selection */

#include "config.h"

#include "provider.h"

/* librpma.so.0 links no provider in */
const struct rpma_provider *const rpma_providers[] = {
	NULL,
};

/* the modules this build made, as configure listed them ("verbs:fabric") */
const char *const rpma_provider_modules = RPMA_PROVIDER_AUTO;
