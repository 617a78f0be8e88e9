/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_provider.c -- the verbs provider's table and device lookup */

#include <stdlib.h>

#include "verbs.h"

/*
 * vrb_device_get -- find the RDMA device serving addr: bind a temporary
 * rdma_cm id to it (a local address) or resolve it (a remote one) and take
 * the id's device context, which librdmacm keeps open after the id is gone
 */
static int vrb_device_get(const char *addr, enum rpma_util_ibv_context_type type, void **dev)
{
	bool local = type == RPMA_UTIL_IBV_CONTEXT_LOCAL;
	struct rdma_addrinfo *ai = NULL;
	struct rdma_cm_id *id = NULL;
	/* automatic selection tries verbs first: no device is an answer, not an error */
	int ret = vrb_getaddrinfo(addr, NULL, local, &ai, RPMA_LOG_LEVEL_NOTICE);
	if (ret)
		return ret;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		int e = vrb_errno();
		/* no device at all is an answer, not a failure of the library */
		RPMA_LOG_NOTICE("verbs: rdma_create_id failed: %s", strerror(e));
		ret = vrb_err(e);
		goto out_free_ai;
	}

	if (local) {
		if (rdma_bind_addr(id, ai->ai_src_addr)) {
			int e = vrb_errno();
			RPMA_LOG_NOTICE("verbs: rdma_bind_addr(%s) failed: %s", addr, strerror(e));
			ret = vrb_err(e);
			goto out_destroy;
		}
	} else {
		if (rdma_resolve_addr(id, ai->ai_src_addr, ai->ai_dst_addr,
				      VRB_RESOLVE_TIMEOUT_MS)) {
			int e = vrb_errno();
			RPMA_LOG_NOTICE("verbs: rdma_resolve_addr(%s) failed: %s", addr,
					strerror(e));
			ret = vrb_err(e);
			goto out_destroy;
		}
	}

	if (id->verbs == NULL) {
		RPMA_LOG_NOTICE("verbs: no RDMA device serves the address %s", addr);
		ret = RPMA_E_PROVIDER;
		goto out_destroy;
	}

	*dev = id->verbs;
	VRB_LOG_DEBUG("%s is served by device %s", addr, ibv_get_device_name(id->verbs->device));

out_destroy:
	(void)rdma_destroy_id(id);
out_free_ai:
	rdma_freeaddrinfo(ai);
	return ret;
}

static const struct rpma_provider_ops vrb_ops = {
	.device_get = vrb_device_get,
	.device_put = NULL, /* librdmacm owns the device contexts */
	.device_is_odp_capable = vrb_device_is_odp_capable,

	.peer_init = vrb_peer_init,
	.peer_fini = vrb_peer_fini,
	.peer_max_msg_size = vrb_peer_max_msg_size,
	.peer_describe = vrb_peer_describe,

	.mr_reg = vrb_mr_reg,
	.mr_dereg = vrb_mr_dereg,
	.mr_advise = vrb_mr_advise,

	.ep_listen = vrb_ep_listen,
	.ep_shutdown = vrb_ep_shutdown,
	.ep_get_fd = vrb_ep_get_fd,
	.ep_next_conn_req = vrb_ep_next_conn_req,

	.conn_req_new = vrb_conn_req_new,
	.conn_req_delete = vrb_conn_req_delete,
	.conn_req_connect = vrb_conn_req_connect,
	.conn_req_recv = vrb_conn_req_recv,

	.conn_get_event_fd = vrb_conn_get_event_fd,
	.conn_next_event = vrb_conn_next_event,
	.conn_disconnect = vrb_conn_disconnect,
	.conn_delete = vrb_conn_delete,
	.conn_get_qp_num = vrb_conn_get_qp_num,
	.conn_get_compl_fd = vrb_conn_get_compl_fd,
	.conn_wait = vrb_conn_wait,

	.read = vrb_read,
	.write = vrb_write,
	.write_imm = vrb_write_imm,
	.atomic_write = vrb_atomic_write,
#ifdef VERBS_NATIVE_FLUSH
	.flush = vrb_flush,
#else
	.flush = NULL, /* rdma-core without IBV_WR_FLUSH: the core's APM flush */
#endif
	.send = vrb_send,
	.recv = vrb_recv,

	.cq_get_fd = vrb_cq_get_fd,
	.cq_wait = vrb_cq_wait,
	.cq_poll = vrb_cq_poll,

	.srq_new = vrb_srq_new,
	.srq_delete = vrb_srq_delete,
	.srq_recv = vrb_srq_recv,
};

const struct rpma_provider rpma_provider_verbs = {
	.name = "verbs",
	.description = "rdma-core: libibverbs and librdmacm (RC queue pairs)",
	.caps = RPMA_PROV_CAP_IBV_CONTEXT | RPMA_PROV_CAP_IMM_CONSUMES_RECV,
	.peer_size = sizeof(struct vrb_peer),
	.mr_size = sizeof(struct vrb_mr),
	.ep_size = sizeof(struct vrb_ep),
	.conn_size = sizeof(struct vrb_conn),
	.cq_size = sizeof(struct vrb_cq),
	.srq_size = sizeof(struct vrb_srq),
	.ops = &vrb_ops,
};
