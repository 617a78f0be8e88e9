/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_envelope.c -- libFuzzer target: the fabric provider's envelope of
 * connection private data (providers/fabric/fabric_envelope.c)
 *
 * Input: the bytes a peer sends as private data with a connection request
 * or an accept.  fab_env_decode() must agree with a model of the format
 * (magic, major version 1, a length byte within the bytes; anything after
 * the user's bytes ignored), hand out a pointer inside the input only, and
 * never read beyond it (the input is copied into an exact-size buffer for
 * AddressSanitizer).  Whatever it accepts re-encodes to the same bytes
 * (with our version byte); any 0..255 bytes of user data survive
 * fab_env_encode() + fab_env_decode(); too small buffers and too long data
 * are refused by the encoder.
 */

#include <stdlib.h>
#include <string.h>

#include "fabric_envelope.h"
#include "fuzz.h"

/* model -- the status the format gives len bytes at w */
static enum fab_env_status model(const uint8_t *w, size_t len)
{
	if (len < 6 || memcmp(w, "rpm\xfa", 4) != 0)
		return FAB_ENV_NONE;
	if ((w[4] >> 4) != 1)
		return FAB_ENV_OTHER_MAJOR;
	if (w[5] > len - 6)
		return FAB_ENV_LENGTH;
	return FAB_ENV_OK;
}

/* LLVMFuzzerInitialize -- nothing to set up */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* LLVMFuzzerTestOneInput -- decode the input, then encode it as user data */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *w = malloc(size ? size : 1);
	FUZZ_CHECK(w != NULL, "malloc");
	if (size)
		memcpy(w, data, size);

	/* 1. the decoder against the model */
	const void *user = (void *)1;
	size_t ulen = 12345;
	unsigned version = 999;
	enum fab_env_status st = fab_env_decode(size ? w : NULL, size, &user, &ulen, &version);
	enum fab_env_status exp = model(w, size);
	FUZZ_CHECK(st == exp, "status %d, the model says %d (%zu bytes)", st, exp, size);
	FUZZ_CHECK(fab_env_status_str(st) != NULL && *fab_env_status_str(st), "no text");
	if (st == FAB_ENV_NONE)
		FUZZ_CHECK(version == 0, "a version without a magic");
	else
		FUZZ_CHECK(version == w[4], "version %u, byte 4 is %u", version, w[4]);
	if (st != FAB_ENV_OK) {
		FUZZ_CHECK(user == NULL && ulen == 0, "user data handed out on status %d", st);
	} else {
		FUZZ_CHECK(ulen == w[5], "%zu user bytes, the length byte says %u", ulen, w[5]);
		if (ulen == 0) {
			FUZZ_CHECK(user == NULL, "a pointer for no user data");
		} else {
			FUZZ_CHECK((const uint8_t *)user == w + 6,
				   "the user's bytes are elsewhere");
			/* read them all: AddressSanitizer checks the extent */
			volatile uint8_t sum = 0;
			for (size_t i = 0; i < ulen; i++)
				sum ^= ((const uint8_t *)user)[i];
			(void)sum;
		}
		/* it re-encodes to the same bytes, with our version */
		uint8_t again[6 + 255];
		size_t n = fab_env_encode(again, sizeof(again), user, ulen);
		FUZZ_CHECK(n == 6 + ulen, "re-encoded to %zu bytes", n);
		FUZZ_CHECK(memcmp(again, w, 4) == 0 && again[4] == 0x10 && again[5] == w[5] &&
				   memcmp(again + 6, w + 6, ulen) == 0,
			   "re-encoding differs");
	}

	/* 2. the input as user data: encode, decode, the same bytes */
	size_t take = size > 255 ? 255 : size;
	uint8_t *out = malloc(6 + take);
	FUZZ_CHECK(out != NULL, "malloc");
	FUZZ_CHECK(fab_env_encode(out, 6 + take - 1, w, take) == 0, "a too small buffer taken");
	size_t n = fab_env_encode(out, 6 + take, w, take);
	FUZZ_CHECK(n == 6 + take, "encoded %zu bytes of %zu", n, take);
	st = fab_env_decode(out, n, &user, &ulen, &version);
	FUZZ_CHECK(st == FAB_ENV_OK && ulen == take && version == 0x10, "round trip: %d, %zu", st,
		   ulen);
	FUZZ_CHECK(take == 0 || memcmp(user, w, take) == 0, "round trip: the bytes differ");
	if (size > 255)
		FUZZ_CHECK(fab_env_encode(out, 6 + take, w, size) == 0, "%zu user bytes taken",
			   size);
	free(out);
	free(w);
	return 0;
}
