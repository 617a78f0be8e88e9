/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * relay.c -- an out-of-tree test provider: "relay", a module that hands every
 * op to another provider module (RPMA_RELAY_TO, default fabric) found in the
 * directories of RPMA_PROVIDER_PATH.  It is built outside providers/, named
 * nowhere in core/ and loaded only from the directory the environment names:
 * what a new provider needs is this file and its build lines.
 */

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider.h"

const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version);
void rpma_provider_traits(struct rpma_provider_traits *traits);

static struct rpma_provider_ops relay_ops;
/* the next provider's traits, or NULL when its module declares none */
static rpma_provider_traits_fn *relay_next_traits;
static struct rpma_provider relay_provider;

/* relay_open -- dlopen() librpma-<name>.so from the first directory of RPMA_PROVIDER_PATH holding it */
static void *relay_open(const char *name)
{
	const char *dirs = getenv("RPMA_PROVIDER_PATH");
	char path[PATH_MAX];

	while (dirs != NULL && *dirs != '\0') {
		size_t len = strcspn(dirs, ":");
		int n = snprintf(path, sizeof(path), "%.*s/librpma-%s.so", (int)len, dirs, name);
		dirs += len;
		if (*dirs == ':')
			dirs++;
		if (len == 0 || n < 0 || (size_t)n >= sizeof(path))
			continue;
		void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (handle != NULL)
			return handle;
	}
	return NULL;
}

/* rpma_provider_module -- the entry point: load the next provider and take its ops */
const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version)
{
	*abi_version = RPMA_PROVIDER_ABI_VERSION;
	const char *to = getenv("RPMA_RELAY_TO");
	if (to == NULL || *to == '\0')
		to = "fabric";
	if (strcmp(to, "relay") == 0)
		return NULL;

	void *handle = relay_open(to);
	if (handle == NULL)
		return NULL;
	rpma_provider_module_fn *entry;
	void *sym = dlsym(handle, RPMA_PROVIDER_MODULE_ENTRY);
	memcpy(&entry, &sym, sizeof(entry));
	unsigned next_abi = 0;
	const struct rpma_provider *next = entry ? entry(core, &next_abi) : NULL;
	if (next == NULL || next_abi != RPMA_PROVIDER_ABI_VERSION)
		return NULL; /* the core logs "holds no provider named relay" */

	/* every op is the next provider's; the private state sizes are its too */
	relay_ops = *next->ops;
	/*
	 * the next module gives its devices back when it is unloaded, before
	 * this one; a device_put of ours would come after its transport library
	 * is gone, so the devices stay with the process
	 */
	relay_ops.device_put = NULL;
	/* RPMA_RELAY_DROP=op: leave that mandatory op out (the core must refuse the table) */
	const char *drop = getenv("RPMA_RELAY_DROP");
#define RELAY_DROP(op)                                                                 \
	if (drop != NULL && strcmp(drop, #op) == 0)                                    \
		memset((char *)&relay_ops + offsetof(struct rpma_provider_ops, op), 0, \
		       sizeof(relay_ops.op));
	RPMA_PROVIDER_MANDATORY_OPS(RELAY_DROP)
#undef RELAY_DROP
	sym = dlsym(handle, RPMA_PROVIDER_TRAITS_ENTRY);
	memcpy(&relay_next_traits, &sym, sizeof(relay_next_traits));
	relay_provider = *next;
	relay_provider.name = "relay";
	relay_provider.description = "a test provider handing every op to another module";
	relay_provider.ops = &relay_ops;
	return &relay_provider;
}

/* rpma_provider_traits -- the transport is the next provider's, so are its traits */
void rpma_provider_traits(struct rpma_provider_traits *traits)
{
	memset(traits, 0, sizeof(*traits));
	if (relay_next_traits != NULL)
		relay_next_traits(traits);
}
