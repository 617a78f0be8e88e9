/* SPDX-License-Identifier: BSD-3-Clause */
/* registry.c -- the providers of this build, in the order of automatic selection */

#include "config.h"

#include "provider.h"

/* the built-in providers: verbs first, then fabric (NULL-terminated) */
const struct rpma_provider *const rpma_providers[] = {
#ifdef RPMA_HAVE_VERBS
	&rpma_provider_verbs,
#endif
#ifdef RPMA_HAVE_FABRIC
	&rpma_provider_fabric,
#endif
	NULL,
};
