/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz.h -- what every libFuzzer target of the core shares
 *
 * The targets link the core sources and the fake provider of the unit tests
 * (tests/unit/fake_provider.c, fake_registry.c), so that everything a peer
 * controls (descriptors, private data, completions, immediate data) reaches
 * the core without a network.  Each target checks the core against its own
 * model of the documented behaviour (HACKING.md) and stops the run with
 * abort() when they differ; AddressSanitizer, UndefinedBehaviorSanitizer and
 * LeakSanitizer watch memory.
 */

#ifndef FUZZ_H
#define FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "librpma.h"
#include "fake_provider.h"

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* the libFuzzer entry points */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FUZZ_CHECK -- stop the run (a crash libFuzzer saves) when cond does not hold */
#define FUZZ_CHECK(cond, ...)                                              \
	do {                                                               \
		if (!(cond))                                               \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

__attribute__((noreturn, format(printf, 4, 5))) void
fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...);

/* ----- the input, consumed front to back; an exhausted input yields zeros */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

bool fuzz_empty(const struct fuzz_in *in);
uint8_t fuzz_u8(struct fuzz_in *in);
uint16_t fuzz_u16(struct fuzz_in *in);
uint32_t fuzz_u32(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/*
 * fuzz_size -- an offset or a length: a mode byte picks a small value, a
 * 16-bit one, a full 64-bit one, or one within 255 of ref (below or above,
 * wrapping like size_t)
 */
size_t fuzz_size(struct fuzz_in *in, uint64_t ref);
/*
 * fuzz_bytes -- up to want bytes of the input copied into an exact-size heap
 * buffer (so that AddressSanitizer sees any read beyond it); *got gets the
 * count; free() the result (never NULL, even for 0 bytes)
 */
uint8_t *fuzz_bytes(struct fuzz_in *in, size_t want, size_t *got);

/* fuzz_le -- n bytes little-endian (the reference decoder of the targets) */
uint64_t fuzz_le(const uint8_t *p, int n);

/* ----- log capture: every message is formatted (catching format bugs) and counted */
void fuzz_log_reset(void);
int fuzz_log_errors(void); /* messages of level ERROR or FATAL since the last reset */
const char *fuzz_log_last(void);

/* ----- objects over the fake provider */
enum fuzz_peer_kind {
	FUZZ_PEER_VERBS,	/* the verbs-like fake: APM flush through an 8-byte read */
	FUZZ_PEER_VERBS_NATIVE, /* the verbs-like fake with native flush and atomic write */
	FUZZ_PEER_FABRIC,	/* the fabric-like fake: opaque device, no optional op */
	FUZZ_PEER_MAX
};

/* the size of the local region registered on every peer */
#define FUZZ_LOCAL_SIZE 4096

/*
 * fuzz_init -- once per process: quiet log capture, one peer of each kind
 * and one local region (FUZZ_LOCAL_SIZE bytes, every usage) on each
 */
void fuzz_init(void);
struct rpma_peer *fuzz_peer(enum fuzz_peer_kind kind);
struct rpma_mr_local *fuzz_local_mr(enum fuzz_peer_kind kind);

/* fuzz_begin -- per input: forget the fake's call log and scripts, reset the log counters */
void fuzz_begin(void);
/*
 * fuzz_end -- per input: the core kept to the provider boundary and released
 * everything it built for this input (objects and fds back to the baseline)
 */
void fuzz_end(void);

/* fuzz_conn -- an outgoing connection on a peer, connected without private data */
struct rpma_conn *fuzz_conn(enum fuzz_peer_kind kind, const struct rpma_conn_cfg *cfg);
/* fuzz_conn_delete -- disconnect and delete a connection, checking both succeed */
void fuzz_conn_delete(struct rpma_conn **conn);

/* fuzz_calls -- the total of provider op calls logged by the fake since fuzz_begin() */
int fuzz_calls(void);

#endif /* FUZZ_H */
