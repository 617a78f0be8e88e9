/* SPDX-License-Identifier: BSD-3-Clause */
/* utils.h -- devices: the opaque handles of the core and resolving a device (internal) */

#ifndef RPMA_UTILS_H
#define RPMA_UTILS_H

#include "provider.h"

/*
 * rpma_utils_device_resolve -- which provider serves ibv_ctx, and the
 * provider's device to pass to its ops: a handle issued by
 * rpma_utils_get_ibv_context() remembers both; any other pointer is taken
 * for a real struct ibv_context and goes to the forced provider (which must
 * have RPMA_PROV_CAP_IBV_CONTEXT) or to the first such provider.
 * RPMA_E_NOSUPP (logged) when no provider can take it.
 */
int rpma_utils_device_resolve(struct ibv_context *ibv_ctx, const struct rpma_provider **prov,
			      void **dev);

/*
 * rpma_utils_devices_release -- give back every device of prov (NULL: of
 * every provider) and free their handles (a provider module's unloading,
 * the library's destructor)
 */
void rpma_utils_devices_release(const struct rpma_provider *prov);

#endif /* RPMA_UTILS_H */
