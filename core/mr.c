/* SPDX-License-Identifier: BSD-3-Clause */
/* mr.c -- local and remote memory regions and their descriptors */

#include <inttypes.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "mr.h"
#include "peer.h"

/* rpma_put_le -- store the low n bytes of v little-endian */
static void rpma_put_le(uint8_t *buf, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		buf[i] = (uint8_t)(v >> (8 * i));
}

/* rpma_get_le -- load n bytes little-endian */
static uint64_t rpma_get_le(const uint8_t *buf, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)buf[i] << (8 * i);
	return v;
}

/* rpma_mr_local_ptr -- the start of a local region */
void *rpma_mr_local_ptr(const struct rpma_mr_local *mr)
{
	return mr->ptr;
}

/* rpma_mr_local_size -- the registered size of a local region */
size_t rpma_mr_local_size(const struct rpma_mr_local *mr)
{
	return mr->size;
}

/* rpma_mr_local_usage -- the usage a local region was registered for */
int rpma_mr_local_usage(const struct rpma_mr_local *mr)
{
	return mr->usage;
}

/* rpma_msg_too_long -- the refusal of rpma_msg_len(), logged */
__attribute__((noinline, cold)) void rpma_msg_too_long(size_t len, size_t max, const char *op)
{
	RPMA_LOG_ERROR("invalid argument: a %s of %zu bytes is longer than the largest message the "
		       "transport carries (%zu bytes)",
		       op, len, max);
}

/* rpma_mr_local_refuse -- the refusal of rpma_mr_local_check(), logged */
void rpma_mr_local_refuse(const struct rpma_mr_local *mr, size_t offset, size_t len,
			  const char *what)
{
	RPMA_LOG_ERROR("invalid argument: %s range [%zu, +%zu) goes beyond the local region of "
		       "%zu bytes",
		       what, offset, len, mr->size);
}

/* rpma_mr_remote_refuse -- the refusal of rpma_mr_remote_target(), logged */
void rpma_mr_remote_refuse(const struct rpma_mr_remote *mr, size_t offset, size_t len,
			   const char *what)
{
	if (!rpma_range_fits(offset, len, mr->size))
		RPMA_LOG_ERROR("invalid argument: %s range [%zu, +%zu) goes beyond the remote "
			       "region of %" PRIu64 " bytes",
			       what, offset, len, mr->size);
	else
		RPMA_LOG_ERROR("invalid argument: %s offset %zu overflows the remote address", what,
			       offset);
}

/* rpma_mr_reg -- register memory for the given usage */
int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr)
{
	if (peer == NULL || ptr == NULL || mr_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       peer == NULL ? "peer" : (ptr == NULL ? "ptr" : "mr_ptr"));
		return RPMA_E_INVAL;
	}
	if (size == 0) {
		RPMA_LOG_ERROR("invalid argument: size == 0");
		return RPMA_E_INVAL;
	}
	if (usage == 0 || (usage & ~RPMA_MR_USAGE_ALL)) {
		RPMA_LOG_ERROR("invalid argument: usage 0x%x (needs known RPMA_MR_USAGE_* bits)",
			       (unsigned)usage);
		return RPMA_E_INVAL;
	}
	if ((uintptr_t)ptr > UINTPTR_MAX - size) {
		RPMA_LOG_ERROR("invalid argument: ptr + size wraps around the address space");
		return RPMA_E_INVAL;
	}

	const struct rpma_provider *prov = rpma_peer_provider(peer);
	struct rpma_mr_local *mr = rpma_calloc(1, sizeof(*mr));
	if (mr == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	int ret = rpma_priv_alloc(prov->mr_size, &mr->priv);
	if (ret) {
		rpma_free(mr);
		return ret;
	}
	mr->peer = peer;
	mr->ptr = ptr;
	mr->size = size;
	mr->usage = usage;
	mr->native_flush = false;

	uint64_t raddr = 0, rkey = 0;
	ret = prov->ops->mr_reg(peer, mr, ptr, size, usage, &raddr, &rkey);
	if (ret) {
		rpma_free(mr->priv);
		rpma_free(mr);
		return ret;
	}
	mr->raddr = raddr;
	mr->rkey = rkey;
	rpma_peer_ref(peer);

	*mr_ptr = mr;
	return 0;
}

/* rpma_mr_dereg -- undo a registration; the object is freed whatever the provider says */
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr)
{
	if (mr_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: mr_ptr == NULL");
		return RPMA_E_INVAL;
	}

	struct rpma_mr_local *mr = *mr_ptr;
	if (mr == NULL)
		return 0;

	struct rpma_peer *peer = mr->peer;
	int ret = rpma_peer_provider(peer)->ops->mr_dereg(mr);
	rpma_free(mr->priv);
	rpma_free(mr);
	int ret2 = rpma_peer_unref(peer);
	if (ret == 0)
		ret = ret2;

	*mr_ptr = NULL;
	return ret;
}

/* rpma_mr_get_descriptor_size -- 21 bytes, or 26 for a key beyond 32 bits */
int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size)
{
	if (mr == NULL || desc_size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "desc_size");
		return RPMA_E_INVAL;
	}

	*desc_size = mr->rkey > UINT32_MAX ? RPMA_MR_DESC_SIZE_LONG : RPMA_MR_DESC_SIZE;
	return 0;
}

/*
 * rpma_mr_get_descriptor -- serialise the region:
 * u64 addr | u64 length | u32 key (low half) | u8 usage [| u8 0xE5 | u32 key high half]
 */
int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc)
{
	if (mr == NULL || desc == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "desc");
		return RPMA_E_INVAL;
	}

	uint8_t buf[RPMA_MR_DESC_SIZE_LONG];
	rpma_put_le(buf, mr->raddr, 8);
	rpma_put_le(buf + 8, (uint64_t)mr->size, 8);
	rpma_put_le(buf + 16, mr->rkey & UINT32_MAX, 4);
	uint8_t usage = (uint8_t)mr->usage;
	if (mr->usage & RPMA_MR_USAGE_FLUSH_ANY) {
		usage &= (uint8_t)~RPMA_MR_DESC_NATIVE_FLUSH;
		if (mr->native_flush)
			usage |= RPMA_MR_DESC_NATIVE_FLUSH;
	}
	buf[20] = usage;

	size_t size = RPMA_MR_DESC_SIZE;
	if (mr->rkey > UINT32_MAX) {
		buf[21] = RPMA_MR_DESC_LONG_TAG;
		rpma_put_le(buf + 22, mr->rkey >> 32, 4);
		size = RPMA_MR_DESC_SIZE_LONG;
	}

	memcpy(desc, buf, size);
	return 0;
}

/* rpma_mr_remote_from_descriptor -- a remote region from the peer's descriptor */
int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
				   struct rpma_mr_remote **mr_ptr)
{
	if (desc == NULL || mr_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", desc == NULL ? "desc" : "mr_ptr");
		return RPMA_E_INVAL;
	}
	if (desc_size < RPMA_MR_DESC_SIZE) {
		RPMA_LOG_ERROR("invalid argument: desc_size %zu < %d", desc_size,
			       RPMA_MR_DESC_SIZE);
		return RPMA_E_INVAL;
	}

	const uint8_t *buf = desc;
	int usage = buf[20];
	if (usage == 0 || (usage & ~RPMA_MR_USAGE_ALL)) {
		RPMA_LOG_ERROR("invalid descriptor: usage 0x%x", (unsigned)usage);
		return RPMA_E_INVAL;
	}

	uint64_t raddr = rpma_get_le(buf, 8);
	uint64_t size = rpma_get_le(buf + 8, 8);
	if (size > UINT64_MAX - raddr) {
		RPMA_LOG_ERROR("invalid descriptor: region at 0x%" PRIx64 " of %" PRIu64
			       " bytes wraps past the end of the address space",
			       raddr, size);
		return RPMA_E_INVAL;
	}

	uint64_t rkey = rpma_get_le(buf + 16, 4);
	if (desc_size >= RPMA_MR_DESC_SIZE_LONG && buf[21] == RPMA_MR_DESC_LONG_TAG)
		rkey |= rpma_get_le(buf + 22, 4) << 32;

	struct rpma_mr_remote *mr = rpma_malloc(sizeof(*mr));
	if (mr == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}
	mr->raddr = raddr;
	mr->size = size;
	mr->rkey = rkey;
	mr->usage = usage;
	mr->native_flush = (usage & RPMA_MR_USAGE_FLUSH_ANY) &&
			   (usage & RPMA_MR_DESC_NATIVE_FLUSH) == RPMA_MR_DESC_NATIVE_FLUSH;

	*mr_ptr = mr;
	return 0;
}

/* rpma_mr_remote_delete -- release a remote region object */
int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr)
{
	if (mr_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: mr_ptr == NULL");
		return RPMA_E_INVAL;
	}

	rpma_free(*mr_ptr);
	*mr_ptr = NULL;
	return 0;
}

/* rpma_mr_get_ptr -- the start of the registered memory */
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr)
{
	if (mr == NULL || ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "ptr");
		return RPMA_E_INVAL;
	}

	*ptr = mr->ptr;
	return 0;
}

/* rpma_mr_get_size -- the length of the registered memory */
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size)
{
	if (mr == NULL || size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "size");
		return RPMA_E_INVAL;
	}

	*size = mr->size;
	return 0;
}

/* rpma_mr_remote_get_size -- the length of the remote region */
int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size)
{
	if (mr == NULL || size == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "size");
		return RPMA_E_INVAL;
	}

	*size = (size_t)mr->size;
	return 0;
}

/* rpma_mr_remote_get_flush_type -- the RPMA_MR_USAGE_FLUSH_TYPE_* bits of the remote region */
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type)
{
	if (mr == NULL || flush_type == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", mr == NULL ? "mr" : "flush_type");
		return RPMA_E_INVAL;
	}

	*flush_type = mr->usage &
		      (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

/* rpma_mr_advise -- pass a paging hint for part of a local region to the device */
int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags)
{
	if (mr == NULL) {
		RPMA_LOG_ERROR("invalid argument: mr == NULL");
		return RPMA_E_INVAL;
	}
	int ret = rpma_mr_local_check(mr, offset, len, "advised");
	if (ret)
		return ret;

	const struct rpma_provider *prov = rpma_peer_provider(mr->peer);
	if (prov->ops->mr_advise == NULL) {
		RPMA_LOG_ERROR("provider %s does not support memory advice", prov->name);
		return RPMA_E_NOSUPP;
	}

	return prov->ops->mr_advise(mr, offset, len, advice, flags);
}
