/* SPDX-License-Identifier: BSD-3-Clause */
/* registry.c -- the providers of librpma.so.0: modules, in the order of automatic selection */

#include "config.h"

#include "provider_select.h"

/* librpma.so.0 links no provider in */
const struct rpma_provider *const rpma_providers[] = {
	NULL,
};

/* the modules this build made, as configure listed them ("verbs:fabric") */
const char *const rpma_provider_modules = RPMA_PROVIDER_AUTO;

/*
 * rpma_registry_env_init -- library constructor: the environment defaults the
 * providers of this build declare (configure's RPMA_PROVIDER_ENV_DEFAULTS).
 * A transport library may read a setting only from the environment, and a
 * module is loaded on first use, maybe among threads; so the defaults are set
 * when librpma.so.0 itself is loaded (before main in a program linked with it).
 */
__attribute__((constructor)) static void rpma_registry_env_init(void)
{
	rpma_provider_env_defaults(RPMA_PROVIDER_ENV_DEFAULTS);
}
