/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.c -- what turns a provider into a loadable module: the entry point
 * the core looks up, and the core's services as the functions provider.h and
 * log.h declare, forwarded to the table the core hands over.  Built into
 * every module with -DRPMA_MODULE_TABLE=<the provider's struct rpma_provider>.
 */

#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "provider.h"

#ifndef RPMA_MODULE_TABLE
#error "RPMA_MODULE_TABLE must name the provider's table (providers/<name>/Makefile.inc)"
#endif

extern const struct rpma_provider RPMA_MODULE_TABLE;

/* the core's services, set by the entry point before any op runs */
static const struct rpma_core_services *rpma_core;

const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version);

/* rpma_provider_module -- the entry point: keep the core's services, give the table */
const struct rpma_provider *rpma_provider_module(const struct rpma_core_services *core,
						 unsigned *abi_version)
{
	*abi_version = RPMA_PROVIDER_ABI_VERSION;
	if (core == NULL || core->abi_version != RPMA_PROVIDER_ABI_VERSION)
		return NULL;
	rpma_core = core;
	return &RPMA_MODULE_TABLE;
}

/* rpma_module_fini -- the module is unloaded (process exit): the core gives its devices back */
__attribute__((destructor)) static void rpma_module_fini(void)
{
	if (rpma_core != NULL)
		rpma_core->module_fini(&RPMA_MODULE_TABLE);
}

/* rpma_log_enabled -- would a message of this level be emitted? (the core decides) */
int rpma_log_enabled(enum rpma_log_level level)
{
	return rpma_core->log_enabled(level);
}

/* rpma_log_emit -- hand the message to the core's log, which formats it (once) */
void rpma_log_emit(enum rpma_log_level level, const char *file, int line, const char *func,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rpma_core->log_emitv(level, file, line, func, fmt, ap);
	va_end(ap);
}

/* rpma_ep_peer -- the peer an endpoint was made from (the core's) */
struct rpma_peer *rpma_ep_peer(const struct rpma_ep *ep)
{
	return rpma_core->ep_peer(ep);
}

/* rpma_conn_req_peer -- the peer a connection request was made from (the core's) */
struct rpma_peer *rpma_conn_req_peer(const struct rpma_conn_req *req)
{
	return rpma_core->conn_req_peer(req);
}

/* rpma_conn_peer -- the peer a connection was made from (the core's) */
struct rpma_peer *rpma_conn_peer(const struct rpma_conn *conn)
{
	return rpma_core->conn_peer(conn);
}

/* rpma_srq_peer -- the peer a shared receive queue was made from (the core's) */
struct rpma_peer *rpma_srq_peer(const struct rpma_srq *srq)
{
	return rpma_core->srq_peer(srq);
}

/* rpma_peer_caps -- the capability bits of a peer (the core's) */
uint64_t rpma_peer_caps(const struct rpma_peer *peer)
{
	return rpma_core->peer_caps(peer);
}

/* rpma_peer_max_msg_size -- the largest length of one operation on the peer (the core's) */
size_t rpma_peer_max_msg_size(const struct rpma_peer *peer)
{
	return rpma_core->peer_max_msg_size(peer);
}

/* rpma_mr_local_ptr -- the start of a local region (the core's) */
void *rpma_mr_local_ptr(const struct rpma_mr_local *mr)
{
	return rpma_core->mr_local_ptr(mr);
}

/* rpma_mr_local_size -- the size of a local region (the core's) */
size_t rpma_mr_local_size(const struct rpma_mr_local *mr)
{
	return rpma_core->mr_local_size(mr);
}

/* rpma_mr_local_usage -- the usage a local region was registered for (the core's) */
int rpma_mr_local_usage(const struct rpma_mr_local *mr)
{
	return rpma_core->mr_local_usage(mr);
}

/* rpma_utils_conn_event_2str -- the name of a connection event (the core's) */
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	return rpma_core->conn_event_2str(conn_event);
}
