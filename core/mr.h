/* SPDX-License-Identifier: BSD-3-Clause */
/* mr.h -- local and remote memory regions and their descriptors (internal) */

#ifndef RPMA_MR_H
#define RPMA_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "provider.h"

/* every RPMA_MR_USAGE_* bit */
#define RPMA_MR_USAGE_ALL                                                            \
	(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | \
	 RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |             \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)

/* descriptor sizes: upstream's layout, and the long form for keys beyond 32 bits */
#define RPMA_MR_DESC_SIZE      21
#define RPMA_MR_DESC_SIZE_LONG 26
#define RPMA_MR_DESC_LONG_TAG  0xE5

/* rpma_range_fits -- does [offset, offset + len) lie within size bytes (overflow-safe)? */
static inline bool rpma_range_fits(size_t offset, size_t len, uint64_t size)
{
	return (uint64_t)offset <= size && (uint64_t)len <= size - (uint64_t)offset;
}

/*
 * The two region objects; defined here (for the core only) so that the range
 * checks every operation makes inline into the data path.
 */
struct rpma_mr_local {
	void *priv; /* the provider's state */
	struct rpma_peer *peer;
	void *ptr;
	size_t size;
	int usage;
	uint64_t raddr; /* what the peer uses for offset 0 */
	uint64_t rkey;
	/* set by ops->mr_reg: every flush type of usage may be flushed natively */
	bool native_flush;
};
RPMA_OBJ_PRIV_FIRST(rpma_mr_local);

struct rpma_mr_remote {
	uint64_t raddr;
	uint64_t size;
	uint64_t rkey;
	int usage;
	bool native_flush; /* the descriptor announced native flush access */
};

/*
 * The descriptor's usage byte of a region with a flush usage: these two bits,
 * meaningless to a remote peer (they are about local sends and receives),
 * both set say that the region accepts native flushes of its flush types;
 * our targets clear both otherwise (see rpma_verbs(7))
 */
#define RPMA_MR_DESC_NATIVE_FLUSH (RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)
#define RPMA_MR_USAGE_FLUSH_ANY \
	(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)

/* rpma_mr_local_refuse -- log the refusal of rpma_mr_local_check() */
void rpma_mr_local_refuse(const struct rpma_mr_local *mr, size_t offset, size_t len,
			  const char *what);

/* rpma_mr_remote_refuse -- log the refusal of rpma_mr_remote_target() */
void rpma_mr_remote_refuse(const struct rpma_mr_remote *mr, size_t offset, size_t len,
			   const char *what);

/*
 * rpma_mr_local_check -- a local range of an operation: RPMA_E_INVAL (logged,
 * naming what) when offset + len goes beyond the registered size
 */
static inline int rpma_mr_local_check(const struct rpma_mr_local *mr, size_t offset, size_t len,
				      const char *what)
{
	if (rpma_range_fits(offset, len, mr->size))
		return 0;
	rpma_mr_local_refuse(mr, offset, len, what);
	return RPMA_E_INVAL;
}

/*
 * rpma_mr_remote_target -- the remote address of offset and the key of a
 * remote region; RPMA_E_INVAL (logged, naming what) when offset + len goes
 * beyond the region's size or the address overflows
 */
static inline int rpma_mr_remote_target(const struct rpma_mr_remote *mr, size_t offset, size_t len,
					const char *what, uint64_t *raddr, uint64_t *rkey)
{
	if (!rpma_range_fits(offset, len, mr->size) || mr->raddr > UINT64_MAX - (uint64_t)offset) {
		rpma_mr_remote_refuse(mr, offset, len, what);
		return RPMA_E_INVAL;
	}
	*raddr = mr->raddr + (uint64_t)offset;
	*rkey = mr->rkey;
	return 0;
}

/* rpma_msg_too_long -- log the refusal of rpma_msg_len() (out of the data path) */
void rpma_msg_too_long(size_t len, size_t max, const char *op);

/*
 * rpma_msg_len -- a data-path length against the transport's largest message
 * (max, cached where the operation starts): RPMA_E_INVAL (logged, naming the
 * limit) when longer, so that no provider truncates it into a narrower field
 */
static inline int rpma_msg_len(size_t len, size_t max, const char *op)
{
	if (len <= max)
		return 0;
	rpma_msg_too_long(len, max, op);
	return RPMA_E_INVAL;
}

#endif /* RPMA_MR_H */
