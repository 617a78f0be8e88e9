/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg.h -- the peer configuration (internal) */

#ifndef RPMA_PEER_CFG_H
#define RPMA_PEER_CFG_H

#include <stdbool.h>

/* the size of a peer-configuration descriptor: one byte, direct_write_to_pmem */
#define RPMA_PEER_CFG_DESC_SIZE 1

/*
 * Set in the descriptor byte beside direct_write_to_pmem (bit 0) by this
 * library's targets only: their region descriptors announce native flush
 * access (RPMA_MR_DESC_NATIVE_FLUSH, mr.h).  Upstream librpma writes 0 or 1
 * and reads any non-zero byte as direct_write_to_pmem, so the bit goes only
 * with direct_write_to_pmem: a 0 byte stays 0.
 */
#define RPMA_PEER_CFG_DESC_ANNOUNCES 0x80

struct rpma_peer_cfg;

/* rpma_peer_cfg_announces -- the configuration came from a descriptor with the announcement bit */
bool rpma_peer_cfg_announces(const struct rpma_peer_cfg *pcfg);

#endif /* RPMA_PEER_CFG_H */
