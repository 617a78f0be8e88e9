/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- the layout of the remote log of the atomic-write example, shared
 * by its server and client
 *
 * The region starts with an 8-byte "used" counter: how many bytes of the
 * log area hold published entries.  Entries are appended after the ones
 * already published and become part of the log only when "used" moves past
 * them, and "used" is only ever changed by one 8-byte atomic write, so a
 * reader (or a crash) sees either the old log or the new one, never a torn
 * entry.
 */

#ifndef ATOMIC_WRITE_LOG_H
#define ATOMIC_WRITE_LOG_H 1

#include <stddef.h>
#include <stdint.h>

#define LOG_USED_OFFSET 0  /* the counter (must be 8-byte aligned) */
#define LOG_DATA_OFFSET 64 /* the first entry */
#define LOG_REGION_SIZE (64 * 1024)
#define LOG_ENTRIES	12

/* log_entry_size -- the size of the i-th entry the client appends (varied on purpose) */
static inline size_t log_entry_size(unsigned i)
{
	return 100 + 377 * (size_t)i;
}

/* log_entry_seed -- the pattern seed of the i-th entry */
static inline uint64_t log_entry_seed(unsigned i)
{
	return 7000 + i;
}

#endif /* ATOMIC_WRITE_LOG_H */
