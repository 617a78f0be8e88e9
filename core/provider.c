/* SPDX-License-Identifier: BSD-3-Clause */
/* provider.c -- looking up, validating and choosing the built providers */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "provider_select.h"

/* at most this many providers are considered (the registry holds two) */
#define RPMA_PROVIDERS_MAX 16

/* one mandatory op of struct rpma_provider_ops */
struct rpma_mandatory_op {
	size_t offset;
	const char *name;
};

#define RPMA_MANDATORY(op)                                  \
	{                                                   \
		offsetof(struct rpma_provider_ops, op), #op \
	}

/* every op but device_put, device_is_odp_capable, mr_advise and flush */
static const struct rpma_mandatory_op rpma_mandatory_ops[] = {
	RPMA_MANDATORY(device_get),
	RPMA_MANDATORY(peer_init),
	RPMA_MANDATORY(peer_fini),
	RPMA_MANDATORY(mr_reg),
	RPMA_MANDATORY(mr_dereg),
	RPMA_MANDATORY(ep_listen),
	RPMA_MANDATORY(ep_shutdown),
	RPMA_MANDATORY(ep_get_fd),
	RPMA_MANDATORY(ep_next_conn_req),
	RPMA_MANDATORY(conn_req_new),
	RPMA_MANDATORY(conn_req_delete),
	RPMA_MANDATORY(conn_req_connect),
	RPMA_MANDATORY(conn_req_recv),
	RPMA_MANDATORY(conn_get_event_fd),
	RPMA_MANDATORY(conn_next_event),
	RPMA_MANDATORY(conn_disconnect),
	RPMA_MANDATORY(conn_delete),
	RPMA_MANDATORY(conn_get_qp_num),
	RPMA_MANDATORY(conn_get_compl_fd),
	RPMA_MANDATORY(conn_wait),
	RPMA_MANDATORY(read),
	RPMA_MANDATORY(write),
	RPMA_MANDATORY(write_imm),
	RPMA_MANDATORY(atomic_write),
	RPMA_MANDATORY(send),
	RPMA_MANDATORY(recv),
	RPMA_MANDATORY(cq_get_fd),
	RPMA_MANDATORY(cq_wait),
	RPMA_MANDATORY(cq_poll),
	RPMA_MANDATORY(srq_new),
	RPMA_MANDATORY(srq_delete),
	RPMA_MANDATORY(srq_recv),
};

/* the usable providers, in registry order, found once */
static const struct rpma_provider *rpma_usable[RPMA_PROVIDERS_MAX];
static size_t rpma_usable_num;
static pthread_once_t rpma_usable_once = PTHREAD_ONCE_INIT;

/* rpma_provider_validate -- does the table carry everything the core relies on? */
static bool rpma_provider_validate(const struct rpma_provider *prov)
{
	if (prov->name == NULL || prov->name[0] == '\0') {
		RPMA_LOG_ERROR("a built provider has no name: ignored");
		return false;
	}
	if (prov->ops == NULL) {
		RPMA_LOG_ERROR("provider %s has no ops table: ignored", prov->name);
		return false;
	}

	const char *ops = (const char *)prov->ops;
	for (size_t i = 0; i < sizeof(rpma_mandatory_ops) / sizeof(rpma_mandatory_ops[0]); i++) {
		void (*fn)(void);
		memcpy(&fn, ops + rpma_mandatory_ops[i].offset, sizeof(fn));
		if (fn == NULL) {
			RPMA_LOG_ERROR("provider %s lacks the mandatory op %s: ignored", prov->name,
				       rpma_mandatory_ops[i].name);
			return false;
		}
	}

	if ((prov->caps & RPMA_PROV_CAP_NATIVE_FLUSH) && prov->ops->flush == NULL) {
		RPMA_LOG_ERROR("provider %s claims native flush without a flush op: ignored",
			       prov->name);
		return false;
	}

	return true;
}

/* rpma_provider_scan -- validate the registry once */
static void rpma_provider_scan(void)
{
	for (size_t i = 0; rpma_providers[i] != NULL; i++) {
		if (rpma_usable_num == RPMA_PROVIDERS_MAX) {
			RPMA_LOG_ERROR("too many providers built: only the first %d are used",
				       RPMA_PROVIDERS_MAX);
			break;
		}
		if (rpma_provider_validate(rpma_providers[i]))
			rpma_usable[rpma_usable_num++] = rpma_providers[i];
	}
}

/* rpma_provider_next -- iterate over the usable built providers in registry order */
const struct rpma_provider *rpma_provider_next(size_t *iter)
{
	(void)pthread_once(&rpma_usable_once, rpma_provider_scan);

	if (*iter >= rpma_usable_num)
		return NULL;

	return rpma_usable[(*iter)++];
}

/* rpma_provider_usable -- is prov one of the usable built providers? */
bool rpma_provider_usable(const struct rpma_provider *prov)
{
	size_t iter = 0;
	const struct rpma_provider *p;
	while ((p = rpma_provider_next(&iter)) != NULL) {
		if (p == prov)
			return true;
	}
	return false;
}

/* rpma_provider_names -- the names of the usable built providers ("verbs, fabric") */
void rpma_provider_names(char *buf, size_t size)
{
	size_t iter = 0, used = 0;
	const struct rpma_provider *p;

	if (size == 0)
		return;
	buf[0] = '\0';

	while ((p = rpma_provider_next(&iter)) != NULL) {
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", p->name);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	if (used == 0)
		snprintf(buf, size, "none");
}

/* rpma_provider_forced -- the provider RPMA_PROVIDER names, or NULL for automatic selection */
int rpma_provider_forced(const struct rpma_provider **prov)
{
	const char *name = getenv(RPMA_PROVIDER_ENV);

	if (name == NULL || name[0] == '\0') {
		*prov = NULL;
		return 0;
	}

	size_t iter = 0;
	const struct rpma_provider *p;
	while ((p = rpma_provider_next(&iter)) != NULL) {
		if (strcmp(p->name, name) == 0) {
			*prov = p;
			return 0;
		}
	}

	char names[256];
	rpma_provider_names(names, sizeof(names));
	RPMA_LOG_ERROR("%s=\"%s\": no such provider in this build (built: %s)", RPMA_PROVIDER_ENV,
		       name, names);
	return RPMA_E_NOSUPP;
}
