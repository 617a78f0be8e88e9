/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.h -- the persist request and answer of the gpspm example, shared by
 * its server and client
 *
 * GPSPM ("general purpose server persistency method") makes remote writes
 * durable without any help from the RDMA transport: the client writes, then
 * asks the server by message to persist a range, and the server does it with
 * the CPU (libpmem2's persist, or msync() for an ordinary file) and answers.
 * It works whether or not the server writes inbound data directly to PMem.
 */

#ifndef GPSPM_PROTO_H
#define GPSPM_PROTO_H 1

#include <stdint.h>

#define REGION_SIZE	(256 * 1024)
#define CHUNK_SIZE	10000 /* bytes per write */
#define CHUNKS		8
#define CHUNK_OFFSET(i) (4096 + (uint64_t)(i)*12288)
#define CHUNK_SEED(i)	(900 + (i))

struct persist_req {
	uint64_t offset;
	uint64_t length;
	uint64_t op_id; /* echoed in the answer */
	uint32_t last;	/* the client will not ask again */
	uint32_t reserved;
};

struct persist_resp {
	uint64_t op_id;
	int32_t status; /* 0: persistent; otherwise the range was refused or failed */
	uint32_t reserved;
};

#define MSG_SLOT 64

#endif /* GPSPM_PROTO_H */
