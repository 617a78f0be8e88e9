/* SPDX-License-Identifier: BSD-3-Clause */
/* badabi.c -- a provider module built for another provider ABI version (modules.sh) */

#include "provider.h"

const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version);

/* a table the core must never use */
static const struct rpma_provider badabi_provider = {
	.name = "badabi",
	.description = "a module of another ABI version",
};

/* rpma_provider_module -- claim an ABI version the core does not have */
const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version)
{
	(void)core;
	*abi_version = RPMA_PROVIDER_ABI_VERSION + 1;
	return &badabi_provider;
}
