/* SPDX-License-Identifier: BSD-3-Clause */
/* itest.h -- helpers of the integration tests (real connections through a provider) */

#ifndef RPMA_ITEST_H
#define RPMA_ITEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "librpma.h"
#include "provider.h" /* struct rpma_provider_traits */

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* the longest any single wait of a test may take */
#define ITEST_WAIT_MS 5000

/*
 * the wait for a transfer of megabytes: one 8 MiB message over libfabric
 * 1.17's sockets takes 0.2-1.1 s on a 2-core machine at a load of 9, and a
 * CI run once gave up on it after ITEST_WAIT_MS (cq/srq_memory_bounded)
 */
#define ITEST_BULK_WAIT_MS 30000

/*
 * the time limit of one scenario: generous, for valgrind inside the QEMU
 * guest (the program's --timeout lowers it: Criterion applies the smaller)
 */
#define ITEST_TIMEOUT_S 300.

/* the line the core logs when a peer opens: "peer opened on provider NAME (...)" */
#define ITEST_PEER_OPENED "peer opened on provider "

/*
 * PROVIDER_TEST -- a scenario run over the provider the environment selects
 * (RPMA_PROVIDER, or automatic selection): the body sees the provider's name
 * as `prov` (for messages; what to expect of it comes from itest_traits())
 */
#define PROVIDER_TEST(suite, name)                           \
	static void suite##_##name##_body(const char *prov); \
	Test(suite, name, .timeout = ITEST_TIMEOUT_S)        \
	{                                                    \
		suite##_##name##_body(itest_begin(NULL));    \
		itest_end();                                 \
	}                                                    \
	static void suite##_##name##_body(const char *prov)

/*
 * VERBS_TEST -- a scenario of the verbs provider's own behaviour on the
 * device: skipped (reported as skipped, never as passed) unless
 * RPMA_PROVIDER=verbs
 */
#define VERBS_TEST(suite, name)                       \
	static void suite##_##name##_body(void);      \
	Test(suite, name, .timeout = ITEST_TIMEOUT_S) \
	{                                             \
		itest_begin("verbs");                 \
		suite##_##name##_body();              \
		itest_end();                          \
	}                                             \
	static void suite##_##name##_body(void)

/*
 * itest_begin -- before a scenario: skip it unless `only` is NULL or the
 * provider RPMA_PROVIDER names; quieten stderr; learn which provider serves
 * the testing address and its traits.  Returns the provider's name.
 */
const char *itest_begin(const char *only);
/* itest_traits -- the traits (core/provider.h) of the provider itest_begin() found */
const struct rpma_provider_traits *itest_traits(void);
/*
 * itest_end -- after a scenario's body: in an AddressSanitizer build, fail the
 * scenario when LeakSanitizer finds memory nothing points to any more
 * (Criterion ends its test processes without running LeakSanitizer's exit
 * check)
 */
void itest_end(void);
/* itest_current_provider -- the provider itest_begin() selected */
const char *itest_current_provider(void);
/* itest_ip -- the address tests listen on and connect to (RPMA_TESTING_IP, default 127.0.0.1) */
const char *itest_ip(void);
/* itest_libfabric_prov -- the libfabric provider FI_PROVIDER asks for ("" when unset) */
const char *itest_libfabric_prov(void);
/*
 * itest_check_pdata -- got is the private data sent (len bytes at sent; NULL
 * and 0 for none): exactly so, or, when the provider's traits say private
 * data arrives padded, the same bytes followed by zeros only
 */
void itest_check_pdata(const struct rpma_conn_private_data *got, const void *sent, size_t len);

/* itest_peer -- a peer on the testing address */
struct rpma_peer *itest_peer(void);

/*
 * itest_cfg_patient -- give cfg a connection timeout as long as the harness's
 * waits (ITEST_WAIT_MS): for scenarios that are not about the timeout
 */
void itest_cfg_patient(struct rpma_conn_cfg *cfg);

/*
 * itest_ccfg -- a client configuration with that timeout, for connections a
 * scenario expects to be established (made once per process and kept)
 */
const struct rpma_conn_cfg *itest_ccfg(void);

/*
 * itest_scfg -- the server's side of itest_pair_open when the scenario gives
 * none: 3 s (ITEST_SERVER_TIMEOUT_MS), longer than the default second (over
 * reliable datagrams an accept waits that long for the client's READY, and
 * the silence before LOST is as long), shorter than the harness's waits, so
 * that a peer that vanished is still seen in time
 */
#define ITEST_SERVER_TIMEOUT_MS 3000
const struct rpma_conn_cfg *itest_scfg(void);
/* itest_listen -- listen on a free port of the testing address; the port is written to port */
struct rpma_ep *itest_listen(struct rpma_peer *peer, char port[8]);
/* itest_fd_ready -- wait up to ms for fd to become readable */
bool itest_fd_ready(int fd, int ms);
/* itest_next_event -- the next connection event, failing the test after ITEST_WAIT_MS */
enum rpma_conn_event itest_next_event(struct rpma_conn *conn);
/* itest_next_req -- the next connection request, failing the test after ITEST_WAIT_MS */
struct rpma_conn_req *itest_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg);
/* itest_now_ms -- a monotonic clock in ms */
long long itest_now_ms(void);
/* itest_wc -- one completion within ms: 0, or RPMA_E_NO_COMPLETION */
int itest_wc(struct rpma_cq *cq, struct ibv_wc *wc, int ms);
/* itest_wc_busy -- the same without naps between polls */
int itest_wc_busy(struct rpma_cq *cq, struct ibv_wc *wc, int ms);
/* itest_expect_wc -- one successful completion of opcode and op_context within ITEST_WAIT_MS */
void itest_expect_wc(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const void *op_context,
		     struct ibv_wc *wc_out);
/* itest_alloc -- page-aligned, zeroed memory */
void *itest_alloc(size_t size);

/* a connected client/server pair, each side with its own peer */
struct itest_pair {
	struct rpma_peer *speer, *cpeer;
	struct rpma_ep *ep;
	char port[8];
	struct rpma_conn *sconn, *cconn;
};

/* called on the server's request before it is accepted (e.g. to post receives) */
typedef void itest_req_fn(struct rpma_conn_req *req, void *arg);

/*
 * itest_pair_open -- connect a client to a server (peers and endpoint
 * created here unless already set); spd/cpd: private data of each side
 */
void itest_pair_open(struct itest_pair *p, const struct rpma_conn_cfg *scfg,
		     const struct rpma_conn_cfg *ccfg, const struct rpma_conn_private_data *cpd,
		     const struct rpma_conn_private_data *spd, itest_req_fn *before_accept,
		     void *arg);
/*
 * itest_close_pair -- an orderly close started by `first`: it disconnects,
 * the other side takes CLOSED and answers with its own disconnect, then the
 * first one takes CLOSED (on RoCE the side that disconnects first sees
 * CLOSED only once the other side answered); both are deleted
 */
void itest_close_pair(struct rpma_conn **first, struct rpma_conn **second);
/* itest_conn_close -- disconnect one connection from the client side and delete both */
void itest_conn_close(struct rpma_conn **cconn, struct rpma_conn **sconn);
/* itest_pair_close -- close the connection, the endpoint and both peers */
void itest_pair_close(struct itest_pair *p);

/* a server region (1 MiB) whose descriptor the server sends as private data */
struct itest_region {
	void *ptr;
	size_t size;
	struct rpma_mr_local *mr;
	char desc[32];
	size_t desc_size;
};
void itest_region_new(struct itest_region *r, struct rpma_peer *peer, size_t size, int usage);
void itest_region_delete(struct itest_region *r);
/* itest_remote -- the client's view of the server region from the received private data */
struct rpma_mr_remote *itest_remote(struct rpma_conn *cconn);

/*
 * a connected pair whose server exposes a region (every usage) and declares
 * direct write to PMem: its private data is the region's descriptor and
 * then the peer-config descriptor
 */
struct itest_dpair {
	struct itest_pair p;
	struct itest_region sreg; /* the server's region */
	struct itest_region creg; /* a client region: WRITE_SRC | READ_DST | SEND | RECV */
	struct rpma_mr_remote *rmr;
};

#define ITEST_REGION_SIZE (1u << 20)
#define ITEST_ALL_USAGE	  0xff

void itest_dpair_open(struct itest_dpair *d, const struct rpma_conn_cfg *scfg,
		      const struct rpma_conn_cfg *ccfg, itest_req_fn *before_accept, void *arg);
void itest_dpair_close(struct itest_dpair *d);

#endif /* RPMA_ITEST_H */
