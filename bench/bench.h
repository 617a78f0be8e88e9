/* SPDX-License-Identifier: BSD-3-Clause */
/* bench.h -- the benchmark engine shared by rpma-bench and the raw baselines */

/*
 * The engine (bench.c) owns everything that must be identical across the
 * three programs: options, the operation loops, the window, the message
 * protocol with the server, statistics and output.  A program only supplies
 * a transport: a handful of post/poll primitives plus connection setup.
 * That way "ours" and a baseline cannot drift apart in what they measure.
 */

#ifndef BENCH_H
#define BENCH_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the operations, in the order they run */
enum bench_op {
	BENCH_OP_WRITE,		/* write, signaled */
	BENCH_OP_WRITE_FLUSH_V, /* write (unsignaled) + flush to visibility */
	BENCH_OP_WRITE_FLUSH_P, /* write (unsignaled) + flush to persistence */
	BENCH_OP_READ,		/* read, signaled */
	BENCH_OP_SEND_RECV,	/* send/recv ping-pong (the server echoes) */
	BENCH_OP_ATOMIC_FLUSH,	/* 8-byte atomic write + flush to visibility */
	BENCH_OP_WRITE_IMM,	/* write with immediate, acknowledged by the server */
	BENCH_OP_COUNT
};

/* measurement modes */
#define BENCH_MODE_LAT 1 /* queue depth 1, one latency sample per operation */
#define BENCH_MODE_BW  2 /* a window of operations in flight */

/* return codes of the transport primitives besides 0 */
#define BENCH_E_FAIL   (-1) /* hard failure: the run stops */
#define BENCH_E_NOSUPP (-2) /* the operation is not available here: skip it */
#define BENCH_E_CLOSED (-3) /* the peer went away (server side) */

/*
 * Message flags: the first 4 bytes of a message, or the immediate value of a
 * write with immediate.  Every byte of a flag is the same, so the value
 * reads the same whichever byte order a transport delivers immediates in.
 */
#define BENCH_FLAG_NONE 0x00000000u /* no reply */
#define BENCH_FLAG_ECHO 0x01010101u /* reply with a message of the same size */
#define BENCH_FLAG_ACK	0x02020202u /* reply with an 8-byte message */
#define BENCH_FLAG_BYE	0x03030303u /* the client is done: disconnect */

/* what the client tells the server in its connection private data */
#define BENCH_HELLO_MAGIC 0x52424e31u /* "RBN1" */
#define BENCH_HELLO_SIZE  16	      /* magic, max_size, window, reserved (u32 LE each) */

/* the largest window: bounds the server's receive queue */
#define BENCH_MAX_WINDOW 256
/* receives the server keeps posted for a client window w */
#define BENCH_SERVER_RECVS(w) ((w) + 2)
/* the smallest message size: room for a flag */
#define BENCH_MIN_SIZE 8

/*
 * Work-request contexts: the kind in the top byte, a slot number below.
 * Transports pass them through untouched (op_context, wr_id, fi_context).
 */
#define BENCH_CTX_OP	      0x01ull /* one-sided operation */
#define BENCH_CTX_SEND	      0x02ull
#define BENCH_CTX_RECV	      0x03ull
#define BENCH_CTX(kind, slot) (((uint64_t)(kind) << 56) | (uint64_t)(slot))
#define BENCH_CTX_KIND(ctx)   ((unsigned)((ctx) >> 56))
#define BENCH_CTX_SLOT(ctx)   ((uint32_t)((ctx)&0xffffffffu))

/* one completion as the engine sees it */
struct bench_wc {
	uint64_t ctx;
	uint32_t len; /* received bytes (receives) */
	uint32_t imm; /* immediate value when has_imm */
	bool has_imm;
	bool ok;    /* the operation succeeded */
	int status; /* transport-specific status when !ok */
};

struct bench_conn;

/* the data-path primitives of a transport */
struct bench_xops {
	/* write len bytes from the local data buffer to remote offset 0 */
	int (*write)(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx);
	/* read len bytes from remote offset 0 into the local data buffer */
	int (*read)(struct bench_conn *c, size_t len, bool signaled, uint64_t ctx);
	/* make remote [0, len) visible (persistent) to the target; always signaled */
	int (*flush)(struct bench_conn *c, size_t len, bool persistent, uint64_t ctx);
	/* 8-byte atomic write to remote offset 0 */
	int (*atomic_write)(struct bench_conn *c, bool signaled, uint64_t ctx);
	/* write len bytes to remote offset 0 with an immediate value */
	int (*write_imm)(struct bench_conn *c, size_t len, uint32_t imm, bool signaled,
			 uint64_t ctx);
	/* send len bytes from send slot 'slot' (0 or 1) */
	int (*send)(struct bench_conn *c, unsigned slot, size_t len, bool signaled, uint64_t ctx);
	/* post a receive of up to slot_size bytes into receive slot 'slot' */
	int (*recv)(struct bench_conn *c, unsigned slot, uint64_t ctx);
	/*
	 * take up to max completions; with block, wait until at least one is
	 * there (or, on the server, until the peer is gone: BENCH_E_CLOSED)
	 */
	int (*poll)(struct bench_conn *c, struct bench_wc *wc, int max, int *got, bool block);
};

/* a connection as the engine sees it; transports embed it first */
struct bench_conn {
	const struct bench_xops *x;
	char *sbuf;	  /* 2 send slots of slot_size bytes */
	char *rbuf;	  /* nrecv receive slots of slot_size bytes */
	size_t slot_size; /* the largest message */
	unsigned nrecv;
};

/* options common to the three programs */
struct bench_cfg {
	int role; /* BENCH_ROLE_* */
	const char *addr;
	const char *port;
	unsigned ops; /* bit mask of 1u << enum bench_op */
	size_t sizes[64];
	unsigned nsizes;
	size_t max_size;
	unsigned lat_iters;
	unsigned bw_iters;
	unsigned warmup; /* 0: a tenth of the iterations */
	unsigned window;
	unsigned modes;		 /* BENCH_MODE_* */
	bool block;		 /* blocking completions instead of busy polling */
	int server_block;	 /* the server's: -1 as the client, else 0 (poll) or 1 (wait) */
	bool server_fd;		 /* -C fd: the server sleeps on its CQ's descriptor (poll()) */
	bool quiet;		 /* no progress on stderr */
	bool loop;		 /* server: keep serving clients one after another */
	bool no_pmem;		 /* server: do not claim direct write to persistence */
	bool no_progress_thread; /* baseline-fabric server: no progress thread */
	const char *label;
	const char *csv_path;
	const char *json_path;
	int timeout_s; /* whole run; 0: none */
};

#define BENCH_ROLE_SERVER 1
#define BENCH_ROLE_CLIENT 2
#define BENCH_ROLE_BOTH	  3

/* what a program provides */
struct bench_transport {
	const char *tool;	 /* "rpma-bench", "baseline-fabric", ... */
	const char *extra_usage; /* transport-specific lines of --help, or NULL */
	/* a short description for the header, e.g. "rpma (librpma.so.0) provider=fabric" */
	const char *(*describe)(void);
	/* client: connect to cfg->addr:cfg->port, sending the hello */
	int (*client_open)(const struct bench_cfg *cfg, const uint8_t *hello, size_t hello_len,
			   struct bench_conn **conn);
	/* client: say goodbye was sent; disconnect and release everything */
	void (*client_close)(struct bench_conn *conn);
	/* server: start listening */
	int (*server_listen)(const struct bench_cfg *cfg, void **listener);
	/*
	 * server: take the next connection; decode the client's hello with
	 * bench_hello_decode(), allocate the slots, post BENCH_SERVER_RECVS(window)
	 * receives with contexts BENCH_CTX(BENCH_CTX_RECV, slot), then accept
	 */
	int (*server_accept)(void *listener, const struct bench_cfg *cfg, struct bench_conn **conn);
	/* server: disconnect (waiting for the peer when it is still there) and release */
	void (*server_close)(struct bench_conn *conn);
	/* server: stop listening */
	void (*server_shutdown)(void *listener);
};

/* bench_main -- parse argv, run the role asked for, return the exit status */
int bench_main(int argc, char *argv[], const struct bench_transport *t);

/* bench_hello_decode -- check a client's hello; 0 and the values, or -1 */
int bench_hello_decode(const void *data, size_t len, uint32_t *max_size, uint32_t *window);

/* bench_slots_alloc -- page-aligned zeroed memory of len bytes (NULL on failure) */
void *bench_alloc(size_t len);

/* bench_log -- a line on stderr prefixed with the tool name */
void bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bench_op_name -- the name of an operation as used in options and output */
const char *bench_op_name(enum bench_op op);

#endif /* BENCH_H */
