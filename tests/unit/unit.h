/* SPDX-License-Identifier: BSD-3-Clause */
/* unit.h -- what every unit test of the core includes: Criterion, the API, the fake provider */

#ifndef UNIT_H
#define UNIT_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "librpma.h"
#include "fake_provider.h"

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* arbitrary, recognisable values the tests pass through */
#define UNIT_ADDR	"127.0.0.1"
#define UNIT_PORT	"7204"
#define UNIT_OP_CTX	((const void *)0xC0FFEE)
#define UNIT_MR_SIZE	4096
#define UNIT_RADDR	0x7f0000001000ULL
#define UNIT_RKEY	0xabcd1234ULL
#define UNIT_USAGE_ALL	0xff
#define UNIT_POISON_PTR ((void *)0xBADBADBAD)

/* unit_init -- per-test setup: fake reset, automatic provider selection, log capture */
void unit_init(void);
/* unit_fini -- per-test teardown: no boundary violation, nothing left live, no fd left open */
void unit_fini(void);

/* ----- log capture (installed by unit_init; UNIT_LOG_STDERR=1 also prints the messages) */
int unit_log_count(enum rpma_log_level level);
int unit_log_total(void);
const char *unit_log_last(void);
void unit_log_reset(void);

/* ----- building objects over the fake provider (each asserts success) */
/* unit_provider -- force a provider for the next calls (NULL: automatic) */
void unit_provider(const char *name);
struct rpma_peer *unit_peer(enum fake_prov prov);
struct rpma_mr_local *unit_mr(struct rpma_peer *peer, void *ptr, size_t size, int usage);
/* unit_desc -- the 21-byte descriptor of (raddr, size, rkey, usage) */
void unit_desc(uint8_t desc[21], uint64_t raddr, uint64_t size, uint32_t rkey, uint8_t usage);
struct rpma_mr_remote *unit_remote(uint64_t raddr, uint64_t size, uint64_t rkey, int usage);
struct rpma_conn_req *unit_req(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg);
struct rpma_conn *unit_conn(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg);
/* unit_conn_dw2pmem -- apply a remote peer configuration declaring direct_write_to_pmem */
void unit_conn_dw2pmem(struct rpma_conn *conn, bool dw2pmem);

/* unit_fd_open -- is fd an open descriptor? */
bool unit_fd_open(int fd);

/* the usual fixture of a test suite */
#define UNIT_SUITE(name) TestSuite(name, .init = unit_init, .fini = unit_fini)

#endif /* UNIT_H */
