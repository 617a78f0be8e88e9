/* SPDX-License-Identifier: BSD-3-Clause */
/* provider_select.h -- looking up and choosing the built providers (internal) */

#ifndef RPMA_PROVIDER_SELECT_H
#define RPMA_PROVIDER_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "provider.h"

/* the environment variable that forces a provider */
#define RPMA_PROVIDER_ENV "RPMA_PROVIDER"

/*
 * rpma_provider_next -- iterate over the usable built providers in registry
 * order: start with *iter = 0; returns NULL after the last one.  A provider
 * whose table lacks a mandatory op is never returned (it is reported once).
 */
const struct rpma_provider *rpma_provider_next(size_t *iter);

/*
 * rpma_provider_forced -- the provider RPMA_PROVIDER names: *prov is NULL
 * when the variable is unset or empty (automatic selection).  An unknown or
 * not built name is RPMA_E_NOSUPP, logged with the list of built providers.
 */
int rpma_provider_forced(const struct rpma_provider **prov);

/* rpma_provider_names -- the names of the usable built providers ("verbs, fabric") */
void rpma_provider_names(char *buf, size_t size);

/* rpma_provider_usable -- is prov one of the usable built providers? */
bool rpma_provider_usable(const struct rpma_provider *prov);

/*
 * rpma_provider_env_defaults -- set the environment defaults of list
 * ("NAME=VALUE;...") where unset, only while the process has a single thread
 * (setenv() is unsafe while other threads may read the environment)
 */
void rpma_provider_env_defaults(const char *list);

#endif /* RPMA_PROVIDER_SELECT_H */
