/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_registry.c -- the provider list of the unit tests: the two fake providers */

#include <stddef.h>

#include "fake_provider.h"

/* automatic selection tries the verbs-like fake first, as the real registry does */
const struct rpma_provider *const rpma_providers[] = {
	&fake_provider_verbs,
	&fake_provider_fabric,
	NULL,
};

/* the unit tests load no provider module */
const char *const rpma_provider_modules = NULL;
