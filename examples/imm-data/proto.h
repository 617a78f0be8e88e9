/* SPDX-License-Identifier: BSD-3-Clause */
/* proto.h -- the messages of the imm-data example, shared by its server and client */

#ifndef IMM_DATA_PROTO_H
#define IMM_DATA_PROTO_H 1

#include <stdint.h>

#define SEND_IMM  0x5e11d001u /* carried by the client's send */
#define WRITE_IMM 0x3717e002u /* carried by the client's write */
#define DATA_SIZE 3000	      /* bytes the client writes */
#define DATA_SEED 10

enum msg_kind {
	MSG_HELLO = 1, /* client -> server, sent with SEND_IMM */
	MSG_READY,     /* server -> client: a receive for the write is posted */
	MSG_DONE,      /* server -> client: what the server saw */
};

struct msg {
	uint32_t kind;
	uint32_t send_imm;  /* MSG_DONE: the immediate value of the send, as received */
	uint32_t write_imm; /* MSG_DONE: the immediate value of the write, as received */
	uint32_t data_ok;   /* MSG_DONE: 1 when the written data was intact */
};

#define MSG_SLOT 64 /* messages sit in 64-byte slots of one buffer */

#endif /* IMM_DATA_PROTO_H */
