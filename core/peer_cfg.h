/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg.h -- the peer configuration (internal) */

#ifndef RPMA_PEER_CFG_H
#define RPMA_PEER_CFG_H

/* the size of a peer-configuration descriptor: one byte, direct_write_to_pmem */
#define RPMA_PEER_CFG_DESC_SIZE 1

#endif /* RPMA_PEER_CFG_H */
