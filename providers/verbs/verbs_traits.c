/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_traits.c -- what the verbs provider's transport does, for the tests (provider.h) */

#include <string.h>

#include "verbs.h"

void rpma_provider_traits(struct rpma_provider_traits *traits);

/* rpma_provider_traits -- rdma_cm and an RC queue pair, as upstream librpma uses them */
void rpma_provider_traits(struct rpma_provider_traits *traits)
{
	memset(traits, 0, sizeof(*traits));
	traits->pdata_connect_max = VRB_PDATA_MAX_CONNECT;
	traits->pdata_accept_max = VRB_PDATA_MAX_ACCEPT;
	traits->pdata_padded = true;
	traits->close_waits_for_peer = true;
	traits->plain_tcp_connect = false;
	traits->refused_event = RPMA_CONN_REJECTED;
	traits->bad_key_breaks_conn = false;
	traits->access_checked = true;
	traits->persistent_flush = true; /* the APM flush; the core gates it on the peer's word */
	traits->odp_possible = true;
	traits->mr_advise = true;
	traits->drawn_key_min = 0;
	traits->progress_threads_per_peer = 0;
	traits->log_prefix = "verbs: ";
	/* rdma_cm's passive side answers a request the application holds with an MRA */
	traits->accept_waits_for_app = true;
}
