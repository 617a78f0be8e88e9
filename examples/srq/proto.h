/* SPDX-License-Identifier: BSD-3-Clause */
/* proto.h -- the messages of the srq example, shared by its server and client */

#ifndef SRQ_PROTO_H
#define SRQ_PROTO_H 1

#include <stdint.h>

/* what a client sends as private data: who it is */
struct hello {
	uint32_t magic;
	uint32_t id;
};
#define HELLO_MAGIC 0x51525321u

/* one message in either direction */
struct msg {
	uint32_t id; /* the client's id (the server echoes it) */
	uint32_t last;
	uint64_t value;
};

#define MSG_SLOT 64

#endif /* SRQ_PROTO_H */
