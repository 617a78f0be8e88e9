/* SPDX-License-Identifier: BSD-3-Clause */
/* proto.h -- the layout shared by both sides of the multi-connection example */

#ifndef MULTI_CONNECTION_PROTO_H
#define MULTI_CONNECTION_PROTO_H 1

/*
 * Each client registers one small region:
 *   [NAME_OFFSET, +NAME_SIZE)          its name, NUL-terminated (the server reads it)
 *   [GREETING_OFFSET, +GREETING_SIZE)  where the server writes its greeting
 *   [MSG_OFFSET, +MSG_SIZE)            the receive buffer for the server's "done"
 */
#define NAME_OFFSET	   0
#define NAME_SIZE	   64
#define GREETING_OFFSET	   64
#define GREETING_SIZE	   128
#define MSG_OFFSET	   192
#define MSG_SIZE	   8
#define CLIENT_REGION_SIZE 256

#define DONE_MAGIC   0x656e6f64u /* the server's "done" message */
#define GREETING_FMT "hello, %s!"

#endif /* MULTI_CONNECTION_PROTO_H */
