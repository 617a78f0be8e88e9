/* SPDX-License-Identifier: BSD-3-Clause */
/* flush.c -- rpma_flush() (gating, native or read-after-write) and rpma_atomic_write() */

#include <errno.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "conn.h"
#include "flush.h"
#include "log.h"
#include "mr.h"
#include "peer.h"

struct rpma_flush {
	void *buf; /* one mapped page */
	size_t buf_size;
	struct rpma_mr_local *mr; /* its first RPMA_FLUSH_APM_LEN bytes, READ_DST */
};

/*
 * rpma_flush_new -- the region an APM flush reads into, unless every flush
 * of the peer goes native
 */
int rpma_flush_new(struct rpma_peer *peer, struct rpma_flush **flush_ptr)
{
	const uint64_t always_native =
		RPMA_PROV_CAP_NATIVE_FLUSH | RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED;
	if ((rpma_peer_caps(peer) & always_native) == always_native) {
		*flush_ptr = NULL;
		return 0;
	}

	struct rpma_flush *flush = rpma_calloc(1, sizeof(*flush));
	if (flush == NULL) {
		RPMA_LOG_ERROR("out of memory");
		return RPMA_E_NOMEM;
	}

	/*
	 * A page of its own, shared-anonymous: it stays usable by the transport
	 * in a process that forks, and no other data shares its page.
	 */
	long page = sysconf(_SC_PAGESIZE);
	flush->buf_size = page > 0 ? (size_t)page : 4096;
	flush->buf = mmap(NULL, flush->buf_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
	if (flush->buf == MAP_FAILED) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "mmap() of the flush region failed");
		rpma_free(flush);
		return RPMA_E_NOMEM;
	}

	int ret = rpma_mr_reg(peer, flush->buf, RPMA_FLUSH_APM_LEN, RPMA_MR_USAGE_READ_DST,
			      &flush->mr);
	if (ret) {
		(void)munmap(flush->buf, flush->buf_size);
		rpma_free(flush);
		return ret;
	}

	*flush_ptr = flush;
	return 0;
}

/* rpma_flush_delete -- deregister and unmap the region */
int rpma_flush_delete(struct rpma_flush **flush_ptr)
{
	struct rpma_flush *flush = *flush_ptr;
	if (flush == NULL)
		return 0;

	int ret = rpma_mr_dereg(&flush->mr);
	if (munmap(flush->buf, flush->buf_size)) {
		RPMA_LOG_ERROR_WITH_ERRNO(errno, "munmap() of the flush region failed");
		if (ret == 0)
			ret = RPMA_E_INVAL;
	}
	rpma_free(flush);

	*flush_ptr = NULL;
	return ret;
}

/* rpma_flush -- make earlier writes to a remote range visible or persistent */
int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context)
{
	/* 1. arguments */
	if (conn == NULL || dst == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL", conn == NULL ? "conn" : "dst");
		return RPMA_E_INVAL;
	}
	int ret = rpma_data_flags(flags);
	if (ret)
		return ret;
	if (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY) {
		RPMA_LOG_ERROR("invalid argument: unknown flush type %d", (int)type);
		return RPMA_E_INVAL;
	}

	/* 2. persistence needs the peer's direct write to PMem */
	if (type == RPMA_FLUSH_TYPE_PERSISTENT && !rpma_conn_direct_write_to_pmem(conn)) {
		RPMA_LOG_ERROR("the connection does not support flush to persistency: the peer "
			       "has not declared direct write to PMem "
			       "(rpma_conn_apply_remote_peer_cfg())");
		return RPMA_E_NOSUPP;
	}

	/* 3. the remote region must accept this flush type */
	int needed = type == RPMA_FLUSH_TYPE_PERSISTENT ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT
							: RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	if (!(dst->usage & needed)) {
		RPMA_LOG_ERROR("the remote region was not registered for flush to %s",
			       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistency" : "visibility");
		return RPMA_E_NOSUPP;
	}

	/* 4. bounds */
	uint64_t raddr, rkey;
	ret = rpma_mr_remote_target(dst, dst_offset, len, "flushed", &raddr, &rkey);
	if (ret)
		return ret;

	const struct rpma_provider_ops *ops = conn->ops;
	const char *tname = type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistency" : "visibility";

	/*
	 * native only when the target said its region takes it: a native flush
	 * the region's access rights refuse breaks the connection
	 */
	bool announced = dst->native_flush && atomic_load(&conn->remote_announces);
	if ((conn->caps & RPMA_PROV_CAP_NATIVE_FLUSH) &&
	    (announced || (conn->caps & RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED))) {
		if (ops->flush == NULL) {
			RPMA_LOG_ERROR("the provider has no native flush");
			return RPMA_E_NOSUPP;
		}
		/* asked first: a varargs call per flush costs more than the post */
		if (rpma_log_enabled(RPMA_LOG_LEVEL_DEBUG))
			RPMA_LOG_DEBUG("flush to %s of %zu bytes at 0x%" PRIx64
				       ": native FLUSH (%s)",
				       tname, len, raddr,
				       announced ? "the region announced it"
						 : "forced toward unannounced regions");
		return ops->flush(conn, raddr, rkey, len, type, flags, op_context);
	}

	struct rpma_flush *flush = conn->flush;
	if (flush == NULL) {
		RPMA_LOG_ERROR("the connection has no flush region");
		return RPMA_E_UNKNOWN;
	}

	/*
	 * APM: a read on the same connection after the writes makes them reach
	 * the target's memory; the bytes read do not matter, but the read has
	 * to stay inside the region: up to 8 bytes at dst_offset, moved back
	 * when the range ends closer than that to the region's end.
	 */
	uint64_t size = dst->size;
	size_t apm_len = size < RPMA_FLUSH_APM_LEN ? (size_t)size : RPMA_FLUSH_APM_LEN;
	size_t apm_offset = dst_offset;
	if (apm_len > size - (uint64_t)dst_offset) /* dst_offset <= size: checked above */
		apm_offset = (size_t)(size - apm_len);
	raddr = raddr - dst_offset + apm_offset;
	if (rpma_log_enabled(RPMA_LOG_LEVEL_DEBUG))
		RPMA_LOG_DEBUG(
			"flush to %s of %zu bytes: APM read of %zu bytes at 0x%" PRIx64 " (%s)",
			tname, len, apm_len, raddr,
			!(conn->caps & RPMA_PROV_CAP_NATIVE_FLUSH)
				? "no native flush on this connection"
				: "the region did not announce native flush access, or the peer "
				  "configuration applied is not from one of our targets");

	if (apm_len == 0) /* an empty remote region: the zero-byte read still orders */
		return ops->read(conn, NULL, 0, 0, 0, 0, flags, op_context);

	return ops->read(conn, flush->mr, 0, raddr, rkey, apm_len, flags, op_context);
}

/* rpma_atomic_write -- write 8 bytes to the remote region, ordered after earlier flushes */
int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context)
{
	if (conn == NULL || dst == NULL || src == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       conn == NULL ? "conn" : (dst == NULL ? "dst" : "src"));
		return RPMA_E_INVAL;
	}
	int ret = rpma_data_flags(flags);
	if (ret)
		return ret;
	if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT != 0) {
		RPMA_LOG_ERROR("invalid argument: dst_offset %zu is not a multiple of %d",
			       dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT);
		return RPMA_E_INVAL;
	}

	uint64_t raddr, rkey;
	ret = rpma_mr_remote_target(dst, dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, "destination",
				    &raddr, &rkey);
	if (ret)
		return ret;

	return conn->ops->atomic_write(conn, raddr, rkey, src, flags, op_context);
}
