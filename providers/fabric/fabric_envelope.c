/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_envelope.c -- encode and check the envelope of connection private data */

#include <string.h>

#include "fabric_envelope.h"

/* fab_env_encode -- magic, version, length, then the user's bytes */
size_t fab_env_encode(void *out, size_t out_size, const void *user, size_t user_len)
{
	if (user_len > FAB_ENV_USER_MAX || out_size < FAB_ENV_SIZE + user_len)
		return 0;
	unsigned char *o = out;
	memcpy(o, FAB_ENV_MAGIC, 4);
	o[4] = (unsigned char)(FAB_ENV_MAJOR << 4 | FAB_ENV_MINOR);
	o[5] = (unsigned char)user_len;
	if (user_len)
		memcpy(o + FAB_ENV_SIZE, user, user_len);
	return FAB_ENV_SIZE + user_len;
}

/* fab_env_decode -- magic, a major version we speak, a length within the bytes */
enum fab_env_status fab_env_decode(const void *wire, size_t len, const void **user,
				   size_t *user_len, unsigned *version)
{
	const unsigned char *w = wire;
	*user = NULL;
	*user_len = 0;
	*version = 0;
	if (w == NULL || len < FAB_ENV_SIZE || memcmp(w, FAB_ENV_MAGIC, 4) != 0)
		return FAB_ENV_NONE;
	*version = w[4];
	if ((w[4] >> 4) != FAB_ENV_MAJOR)
		return FAB_ENV_OTHER_MAJOR;
	size_t n = w[5];
	if (n > len - FAB_ENV_SIZE)
		return FAB_ENV_LENGTH;
	if (n)
		*user = w + FAB_ENV_SIZE;
	*user_len = n;
	return FAB_ENV_OK;
}

/* fab_env_status_str -- what a status means */
const char *fab_env_status_str(enum fab_env_status st)
{
	switch (st) {
	case FAB_ENV_OK:
		return "a valid envelope";
	case FAB_ENV_NONE:
		return "no librpma envelope (not a librpma fabric peer, or one older than the "
		       "envelope)";
	case FAB_ENV_OTHER_MAJOR:
		return "an envelope of another major version";
	case FAB_ENV_LENGTH:
		return "an envelope whose length byte exceeds the bytes that came";
	}
	return "an unknown envelope status";
}
