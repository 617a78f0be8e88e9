/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_ep.c -- listening endpoints and incoming connection requests (rdma_cm) */

#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

/*
 * vrb_getaddrinfo -- resolve addr[:port] for an RC queue pair on the TCP
 * port space; passive: addr is a local address to bind to
 */
int vrb_getaddrinfo(const char *addr, const char *port, bool passive, struct rdma_addrinfo **ai,
		    enum rpma_log_level level)
{
	struct rdma_addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = passive ? RAI_PASSIVE : 0;
	hints.ai_qp_type = IBV_QPT_RC;
	hints.ai_port_space = RDMA_PS_TCP;

	errno = 0;
	int ret = rdma_getaddrinfo(addr, port, &hints, ai);
	if (ret) {
		if (ret == -1) {
			int e = vrb_errno();
			RPMA_LOG(level, "verbs: rdma_getaddrinfo(%s, %s) failed: %s", addr,
				 port ? port : "-", strerror(e));
			return vrb_err(e);
		}
		/* older librdmacm: a getaddrinfo() EAI_* code */
		RPMA_LOG(level, "verbs: rdma_getaddrinfo(%s, %s) failed: %s", addr,
			 port ? port : "-", gai_strerror(ret));
		return RPMA_E_PROVIDER;
	}
	return 0;
}

/* vrb_ep_listen -- bind a new rdma_cm id to addr:port and listen on it */
int vrb_ep_listen(struct rpma_peer *peer, struct rpma_ep *ep, const char *addr, const char *port)
{
	struct vrb_ep *ve = vrb_ep(ep);
	struct rdma_addrinfo *ai = NULL;
	int ret, e;

	ret = vrb_getaddrinfo(addr, port, true, &ai, RPMA_LOG_LEVEL_ERROR);
	if (ret)
		return ret;

	errno = 0;
	ve->evch = rdma_create_event_channel();
	if (ve->evch == NULL) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_create_event_channel failed");
		ret = vrb_err(e);
		goto err_ai;
	}
	if (rdma_create_id(ve->evch, &ve->id, NULL, RDMA_PS_TCP)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_create_id failed");
		ret = vrb_err(e);
		goto err_evch;
	}
	if (rdma_bind_addr(ve->id, ai->ai_src_addr)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_bind_addr(%s:%s) failed", addr, port);
		ret = vrb_err(e);
		goto err_id;
	}
	if (rdma_listen(ve->id, 0 /* the default backlog */)) {
		e = vrb_errno();
		VRB_LOG_ERRNO(e, "rdma_listen(%s:%s) failed", addr, port);
		ret = vrb_err(e);
		goto err_id;
	}
	rdma_freeaddrinfo(ai);
	return 0;

err_id:
	(void)rdma_destroy_id(ve->id);
	ve->id = NULL;
err_evch:
	rdma_destroy_event_channel(ve->evch);
	ve->evch = NULL;
err_ai:
	rdma_freeaddrinfo(ai);
	return ret;
}

/* vrb_ep_shutdown -- stop listening; requests not taken yet are dropped by the kernel */
int vrb_ep_shutdown(struct rpma_ep *ep)
{
	struct vrb_ep *ve = vrb_ep(ep);
	int ret = 0;

	if (ve->id) {
		if (rdma_destroy_id(ve->id)) {
			int e = vrb_errno();
			VRB_LOG_ERRNO(e, "rdma_destroy_id failed");
			ret = vrb_err(e);
		}
		ve->id = NULL;
	}
	if (ve->evch) {
		rdma_destroy_event_channel(ve->evch);
		ve->evch = NULL;
	}
	return ret;
}

/* vrb_ep_get_fd -- the descriptor of the listening event channel */
int vrb_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	*fd = vrb_ep(ep)->evch->fd;
	return 0;
}

/*
 * vrb_ep_next_conn_req -- take the next CONNECT_REQUEST, build the queue
 * pair on the new id and hand the client's private data to the core
 */
int vrb_ep_next_conn_req(struct rpma_ep *ep, struct rpma_conn_req *req,
			 const struct rpma_conn_setup *setup, struct rpma_conn_private_data *pdata)
{
	struct vrb_ep *ve = vrb_ep(ep);
	struct vrb_conn *vc = vrb_conn_req(req);
	struct rdma_cm_event *event = NULL;
	int ret;

	errno = 0;
	if (rdma_get_cm_event(ve->evch, &event)) {
		int e = vrb_errno();
		if (e == ENODATA || e == EAGAIN || e == EWOULDBLOCK)
			return RPMA_E_NO_EVENT;
		VRB_LOG_ERRNO(e, "rdma_get_cm_event failed");
		return vrb_err(e);
	}

	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		VRB_LOG_ERROR("the endpoint got %s instead of a connection request",
			      rdma_event_str(event->event));
		(void)rdma_ack_cm_event(event);
		return RPMA_E_INVAL;
	}

	struct rdma_cm_id *id = event->id;
	struct rpma_conn_private_data pd = {NULL, 0};
	ret = vrb_pdata_copy(event->param.conn.private_data, event->param.conn.private_data_len,
			     &pd);
	if (ret == 0) {
		vc->incoming = true;
		ret = vrb_transport_new(vrb_peer(rpma_ep_peer(ep)), vc, id, setup);
	}
	/* the event must be acknowledged before the id can be rejected or destroyed */
	(void)rdma_ack_cm_event(event);
	if (ret) {
		free(pd.ptr);
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_destroy_id(id);
		return ret;
	}

	*pdata = pd;
	return 0;
}
