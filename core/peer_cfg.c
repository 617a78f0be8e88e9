/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg.c -- the peer configuration: the declared direct write to PMem */

#include <stdatomic.h>
#include <stdint.h>

#include "alloc.h"
#include "log.h"
#include "peer_cfg.h"

struct rpma_peer_cfg {
	_Atomic bool direct_write_to_pmem;
	bool announces; /* from a descriptor with RPMA_PEER_CFG_DESC_ANNOUNCES */
};

/* rpma_peer_cfg_announces -- the peer's region descriptors announce native flush access */
bool rpma_peer_cfg_announces(const struct rpma_peer_cfg *pcfg)
{
	return pcfg->announces;
}

/* rpma_peer_cfg_new -- a configuration declaring no direct write to PMem */
int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr)
{
	if (pcfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: pcfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_peer_cfg *pcfg = rpma_calloc(1, sizeof(*pcfg));
	if (pcfg == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	atomic_init(&pcfg->direct_write_to_pmem, false);

	*pcfg_ptr = pcfg;
	return 0;
}

/* rpma_peer_cfg_delete -- release a configuration */
int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr)
{
	if (pcfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: pcfg_ptr == NULL");
		return RPMA_E_INVAL;
	}

	rpma_free(*pcfg_ptr);
	*pcfg_ptr = NULL;
	return 0;
}

/* rpma_peer_cfg_set_direct_write_to_pmem -- declare whether direct write to PMem works */
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported)
{
	if (pcfg == NULL) {
		RPMA_LOG_ERROR("invalid argument: pcfg == NULL");
		return RPMA_E_INVAL;
	}

	atomic_store(&pcfg->direct_write_to_pmem, supported);
	return 0;
}

/* rpma_peer_cfg_get_direct_write_to_pmem -- read the declaration back */
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported)
{
	if (pcfg == NULL || supported == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", pcfg == NULL ? "pcfg" : "supported");
		return RPMA_E_INVAL;
	}

	*supported = atomic_load(&((struct rpma_peer_cfg *)pcfg)->direct_write_to_pmem);
	return 0;
}

/* rpma_peer_cfg_get_descriptor -- write the one-byte descriptor */
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc)
{
	if (pcfg == NULL || desc == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", pcfg == NULL ? "pcfg" : "desc");
		return RPMA_E_INVAL;
	}

	bool dw = atomic_load(&((struct rpma_peer_cfg *)pcfg)->direct_write_to_pmem);
	*(uint8_t *)desc = dw ? 1 | RPMA_PEER_CFG_DESC_ANNOUNCES : 0;
	return 0;
}

/* rpma_peer_cfg_get_descriptor_size -- the descriptor takes one byte */
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size)
{
	if (pcfg == NULL || desc_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", pcfg == NULL ? "pcfg" : "desc_size");
		return RPMA_E_INVAL;
	}

	*desc_size = RPMA_PEER_CFG_DESC_SIZE;
	return 0;
}

/* rpma_peer_cfg_from_descriptor -- a configuration from a peer's descriptor */
int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
				  struct rpma_peer_cfg **pcfg_ptr)
{
	if (desc == NULL || pcfg_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", desc == NULL ? "desc" : "pcfg_ptr");
		return RPMA_E_INVAL;
	}
	if (desc_size < RPMA_PEER_CFG_DESC_SIZE) {
		RPMA_LOG_ERROR("invalid argument: desc_size %zu < %d", desc_size,
			       RPMA_PEER_CFG_DESC_SIZE);
		return RPMA_E_INVAL;
	}

	struct rpma_peer_cfg *pcfg = rpma_calloc(1, sizeof(*pcfg));
	if (pcfg == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	uint8_t byte = *(const uint8_t *)desc;
	atomic_init(&pcfg->direct_write_to_pmem, byte != 0);
	pcfg->announces = (byte & RPMA_PEER_CFG_DESC_ANNOUNCES) != 0;

	*pcfg_ptr = pcfg;
	return 0;
}
