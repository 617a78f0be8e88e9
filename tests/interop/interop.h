/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h -- what the interoperability client and server share: the
 * private-data layout, the constants of the exchange and small helpers.
 * Uses only the librpma 1.2 API, so it builds against upstream's header too.
 */

#ifndef INTEROP_H
#define INTEROP_H

#include <arpa/inet.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librpma.h>

/* built in this tree (-DHAVE_CONFIG_H): the header must be the tree's own */
#if defined(HAVE_CONFIG_H) && !defined(LIBRPMA_PROVIDER_PLUGGABLE)
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* the server's region and where each step of the exchange writes into it */
#define IO_REGION_SIZE 4096
#define IO_WRITE_OFF   0 /* rpma_write + rpma_flush + rpma_read */
#define IO_WRITE_LEN   512
#define IO_ATOMIC_OFF  1024 /* rpma_atomic_write */
#define IO_IMM_OFF     2048 /* rpma_write_with_imm */
#define IO_IMM_LEN     256
#define IO_IMM_VALUE   0xC0FFEE42u
#define IO_MSG_SIZE    64 /* one message slot */
#define IO_TIMEOUT_S   60 /* a stuck exchange ends the program */

/* the client's private data: a fixed string */
#define IO_CLIENT_HELLO "rpma-interop-client"

/* the server's private data: its region and peer configuration */
#define IO_SERVER_MAGIC "RPIO"
struct io_server_pdata {
	char magic[4];
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint8_t descriptors[26]; /* the MR descriptor, then the peer-config descriptor */
};

/* op contexts: which operation a completion belongs to */
#define IO_CTX_WRITE	 ((void *)0x101)
#define IO_CTX_FLUSH	 ((void *)0x102)
#define IO_CTX_READ	 ((void *)0x103)
#define IO_CTX_ATOMIC	 ((void *)0x104)
#define IO_CTX_FLUSH2	 ((void *)0x105)
#define IO_CTX_SEND	 ((void *)0x106)
#define IO_CTX_RECV0	 ((void *)0x200)
#define IO_CTX_RECV1	 ((void *)0x201)
#define IO_CTX_WRITE_IMM ((void *)0x107)

/* io_fail -- report a failed step and end the program */
static inline void io_fail(const char *who, const char *what, int ret)
{
	fprintf(stderr, "%s: FAILED: %s: %s (%d)\n", who, what, rpma_err_2str(ret), ret);
	exit(1);
}

#define IO_CHECK(who, call)                           \
	do {                                          \
		int io_ret_ = (call);                 \
		if (io_ret_)                          \
			io_fail(who, #call, io_ret_); \
	} while (0)

/* io_pattern -- the byte at position i of the data pattern number seed */
static inline unsigned char io_pattern(size_t i, unsigned seed)
{
	return (unsigned char)((i * 31u + seed * 7u + 1u) & 0xff);
}

/* completions taken from the CQ while another one was awaited */
struct io_stash {
	struct ibv_wc wc[16];
	int n;
};

/*
 * io_expect -- wait for the completion of op_context (opcode one of op1 or
 * op2), keeping the other completions for later calls
 */
static inline struct ibv_wc io_expect(const char *who, struct rpma_cq *cq, struct io_stash *st,
				      const void *op_context, enum ibv_wc_opcode op1,
				      enum ibv_wc_opcode op2)
{
	struct ibv_wc wc;
	for (;;) {
		int found = -1;
		for (int i = 0; i < st->n; i++) {
			if (st->wc[i].wr_id == (uint64_t)(uintptr_t)op_context) {
				found = i;
				break;
			}
		}
		if (found >= 0) {
			wc = st->wc[found];
			st->wc[found] = st->wc[--st->n];
			break;
		}
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			IO_CHECK(who, rpma_cq_wait(cq));
			continue;
		}
		if (ret)
			io_fail(who, "rpma_cq_get_wc", ret);
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "%s: FAILED: completion of %#" PRIx64 ": %s\n", who,
				wc.wr_id, ibv_wc_status_str(wc.status));
			exit(1);
		}
		if (wc.wr_id == (uint64_t)(uintptr_t)op_context)
			break;
		if (st->n == 16) {
			fprintf(stderr, "%s: FAILED: too many unexpected completions\n", who);
			exit(1);
		}
		st->wc[st->n++] = wc;
	}
	if (wc.opcode != op1 && wc.opcode != op2) {
		fprintf(stderr, "%s: FAILED: completion of %p has opcode %d (expected %d or %d)\n",
			who, op_context, (int)wc.opcode, (int)op1, (int)op2);
		exit(1);
	}
	return wc;
}

/* io_expect_event -- the next connection event must be ev */
static inline void io_expect_event(const char *who, struct rpma_conn *conn,
				   enum rpma_conn_event expected)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	IO_CHECK(who, rpma_conn_next_event(conn, &ev));
	if (ev != expected) {
		fprintf(stderr, "%s: FAILED: event '%s' instead of '%s'\n", who,
			rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(expected));
		exit(1);
	}
}

/* io_alloc -- page-aligned zeroed memory */
static inline void *io_alloc(const char *who, size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, size)) {
		fprintf(stderr, "%s: FAILED: out of memory\n", who);
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

#endif /* INTEROP_H */
