/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric_envelope.h -- the envelope of the fabric provider's connection private data */

/*
 * Every connection request and every accept of the fabric provider carries
 * its private data in an envelope:
 *
 *   byte 0..3  magic 0x72 0x70 0x6d 0xfa ("rpm" and 0xfa)
 *   byte 4     version: major in the high nibble, minor in the low one (1.0: 0x10)
 *   byte 5     n, the length of the user's private data (0..255)
 *   byte 6..   the user's n bytes
 *
 * Bytes after 6 + n are ignored: rdma_cm pads the private data with zeros,
 * and a later minor version may add fields there.  A different major version
 * is refused.  The envelope tells a librpma fabric peer from anything else
 * that speaks the transport's connection protocol; it authenticates nothing.
 * The codec needs nothing but libc, so that the fuzz target links it alone.
 */

#ifndef RPMA_FABRIC_ENVELOPE_H
#define RPMA_FABRIC_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#define FAB_ENV_MAGIC	 "rpm\xfa"
#define FAB_ENV_MAJOR	 1
#define FAB_ENV_MINOR	 0
#define FAB_ENV_SIZE	 6   /* the envelope's own bytes */
#define FAB_ENV_USER_MAX 255 /* the user's bytes it can carry (one length byte) */

/* what fab_env_decode() found */
enum fab_env_status {
	FAB_ENV_OK = 0,
	FAB_ENV_NONE,	     /* shorter than an envelope, or no magic */
	FAB_ENV_OTHER_MAJOR, /* our magic, another major version */
	FAB_ENV_LENGTH,	     /* the length byte names more bytes than came */
};

/*
 * fab_env_encode -- the envelope of user_len bytes at user into out, which
 * has room for out_size bytes; returns the bytes written, or 0 when
 * user_len > FAB_ENV_USER_MAX or out is too small
 */
size_t fab_env_encode(void *out, size_t out_size, const void *user, size_t user_len);

/*
 * fab_env_decode -- check the envelope of len bytes at wire; on FAB_ENV_OK
 * *user and *user_len are the user's bytes (inside wire; NULL and 0 when
 * none); *version is the version byte whenever the magic was there (else 0)
 */
enum fab_env_status fab_env_decode(const void *wire, size_t len, const void **user,
				   size_t *user_len, unsigned *version);

/* fab_env_status_str -- a few words about a status, for the log */
const char *fab_env_status_str(enum fab_env_status st);

#endif /* RPMA_FABRIC_ENVELOPE_H */
