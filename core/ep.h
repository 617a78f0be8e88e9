/* SPDX-License-Identifier: BSD-3-Clause */
/* ep.h -- listening endpoints (internal) */

#ifndef RPMA_EP_H
#define RPMA_EP_H

#include "provider.h"

/* nothing beyond provider.h's rpma_ep_priv() and rpma_ep_peer() yet */

#endif /* RPMA_EP_H */
