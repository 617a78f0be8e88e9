/* SPDX-License-Identifier: BSD-3-Clause */
/* utils.c -- devices (real contexts and the core's opaque handles) and event names */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "log.h"
#include "provider_select.h"
#include "utils.h"

/*
 * An opaque device handle: what rpma_utils_get_ibv_context() returns under a
 * provider without RPMA_PROV_CAP_IBV_CONTEXT.  The application sees it as a
 * struct ibv_context * and must not dereference it; the core recognises it
 * only by finding its address in the list below (an unknown pointer is
 * never dereferenced).  Handles live until the library is unloaded.
 */
struct rpma_dev_handle {
	const struct rpma_provider *prov;
	void *dev; /* the provider's device data */
	struct rpma_dev_handle *next;
};

static pthread_mutex_t rpma_handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpma_dev_handle *rpma_handles;

/* rpma_handle_find_locked -- the handle at address ptr, or NULL (lock held) */
static struct rpma_dev_handle *rpma_handle_find_locked(const void *ptr)
{
	for (struct rpma_dev_handle *h = rpma_handles; h != NULL; h = h->next) {
		if ((const void *)h == ptr)
			return h;
	}
	return NULL;
}

/*
 * rpma_handle_get -- the handle of (prov, dev), issuing a new one if needed.
 * A provider that hands out the same device data again gets one handle for
 * it and one device_put at unload (never a second one).
 */
static int rpma_handle_get(const struct rpma_provider *prov, void *dev,
			   struct rpma_dev_handle **handle_ptr)
{
	pthread_mutex_lock(&rpma_handles_lock);
	for (struct rpma_dev_handle *h = rpma_handles; h != NULL; h = h->next) {
		if (h->prov == prov && h->dev == dev) {
			pthread_mutex_unlock(&rpma_handles_lock);
			*handle_ptr = h;
			return 0;
		}
	}

	struct rpma_dev_handle *h = rpma_calloc(1, sizeof(*h));
	if (h == NULL) {
		pthread_mutex_unlock(&rpma_handles_lock);
		if (prov->ops->device_put)
			prov->ops->device_put(dev);
		RPMA_LOG_ERROR("out of memory for a device handle");
		return RPMA_E_NOMEM;
	}
	h->prov = prov;
	h->dev = dev;
	h->next = rpma_handles;
	rpma_handles = h;
	pthread_mutex_unlock(&rpma_handles_lock);

	*handle_ptr = h;
	return 0;
}

/*
 * rpma_utils_devices_release -- give back every device of prov (NULL: of
 * every provider) and free their handles
 */
void rpma_utils_devices_release(const struct rpma_provider *prov)
{
	struct rpma_dev_handle *gone = NULL;

	pthread_mutex_lock(&rpma_handles_lock);
	struct rpma_dev_handle **link = &rpma_handles;
	while (*link != NULL) {
		struct rpma_dev_handle *h = *link;
		if (prov == NULL || h->prov == prov) {
			*link = h->next;
			h->next = gone;
			gone = h;
		} else {
			link = &h->next;
		}
	}
	pthread_mutex_unlock(&rpma_handles_lock);

	while (gone != NULL) {
		struct rpma_dev_handle *next = gone->next;
		if (gone->prov->ops->device_put)
			gone->prov->ops->device_put(gone->dev);
		rpma_free(gone);
		gone = next;
	}
}

/* rpma_handles_release -- library destructor: give every device back and free the handles */
__attribute__((destructor)) static void rpma_handles_release(void)
{
	rpma_utils_devices_release(NULL);
}

/* rpma_utils_device_resolve -- which provider serves ibv_ctx, and the provider's device */
int rpma_utils_device_resolve(struct ibv_context *ibv_ctx, const struct rpma_provider **prov,
			      void **dev)
{
	pthread_mutex_lock(&rpma_handles_lock);
	struct rpma_dev_handle *h = rpma_handle_find_locked(ibv_ctx);
	if (h != NULL) {
		*prov = h->prov;
		*dev = h->dev;
		pthread_mutex_unlock(&rpma_handles_lock);
		return 0;
	}
	pthread_mutex_unlock(&rpma_handles_lock);

	/* not a handle of ours: a real struct ibv_context */
	const struct rpma_provider *forced;
	int ret = rpma_provider_forced(&forced);
	if (ret)
		return ret;

	if (forced != NULL) {
		if (!(forced->caps & RPMA_PROV_CAP_IBV_CONTEXT)) {
			RPMA_LOG_ERROR("the device is not a handle issued by "
				       "rpma_utils_get_ibv_context() and provider %s does not "
				       "take struct ibv_context",
				       forced->name);
			return RPMA_E_NOSUPP;
		}
		*prov = forced;
		*dev = ibv_ctx;
		return 0;
	}

	size_t iter = 0;
	const struct rpma_provider *p;
	while ((p = rpma_provider_next(&iter)) != NULL) {
		if (p->caps & RPMA_PROV_CAP_IBV_CONTEXT) {
			*prov = p;
			*dev = ibv_ctx;
			return 0;
		}
	}

	char names[256];
	rpma_provider_names(names, sizeof(names));
	RPMA_LOG_ERROR("the device is not a handle issued by rpma_utils_get_ibv_context() and no "
		       "built provider takes struct ibv_context (built: %s)",
		       names);
	return RPMA_E_NOSUPP;
}

/* rpma_utils_device_get -- ask one provider for the device serving addr */
static int rpma_utils_device_get(const struct rpma_provider *prov, const char *addr,
				 enum rpma_util_ibv_context_type type,
				 struct ibv_context **ibv_ctx_ptr)
{
	void *dev = NULL;
	int ret = prov->ops->device_get(addr, type, &dev);
	if (ret)
		return ret;
	if (dev == NULL) {
		RPMA_LOG_ERROR("provider %s returned no device for %s", prov->name, addr);
		return RPMA_E_PROVIDER;
	}

	if (prov->caps & RPMA_PROV_CAP_IBV_CONTEXT) {
		*ibv_ctx_ptr = dev;
		return 0;
	}

	struct rpma_dev_handle *h;
	ret = rpma_handle_get(prov, dev, &h);
	if (ret)
		return ret;
	*ibv_ctx_ptr = (struct ibv_context *)h;
	return 0;
}

/* rpma_utils_get_ibv_context -- the device serving a local or a remote address */
int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
			       struct ibv_context **ibv_ctx_ptr)
{
	if (addr == NULL || ibv_ctx_ptr == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       addr == NULL ? "addr" : "ibv_ctx_ptr");
		return RPMA_E_INVAL;
	}
	if (type != RPMA_UTIL_IBV_CONTEXT_LOCAL && type != RPMA_UTIL_IBV_CONTEXT_REMOTE) {
		RPMA_LOG_ERROR("invalid argument: unknown type %d", (int)type);
		return RPMA_E_INVAL;
	}

	const struct rpma_provider *forced;
	int ret = rpma_provider_forced(&forced);
	if (ret)
		return ret;
	if (forced != NULL)
		return rpma_utils_device_get(forced, addr, type, ibv_ctx_ptr);

	/* automatic selection: the first provider that serves the address wins */
	size_t iter = 0;
	const struct rpma_provider *p;
	bool nomem = false, tried = false;
	while ((p = rpma_provider_next(&iter)) != NULL) {
		tried = true;
		ret = rpma_utils_device_get(p, addr, type, ibv_ctx_ptr);
		if (ret == 0) {
			RPMA_LOG_INFO("provider %s serves %s", p->name, addr);
			return 0;
		}
		if (ret == RPMA_E_NOMEM)
			nomem = true;
	}

	char names[256];
	rpma_provider_names(names, sizeof(names));
	if (!tried) {
		RPMA_LOG_ERROR("no usable provider in this build");
		return RPMA_E_NOSUPP;
	}
	RPMA_LOG_ERROR("no provider serves the %s address %s (tried: %s)",
		       type == RPMA_UTIL_IBV_CONTEXT_LOCAL ? "local" : "remote", addr, names);
	return nomem ? RPMA_E_NOMEM : RPMA_E_PROVIDER;
}

/* rpma_utils_ibv_context_is_odp_capable -- does the device offer on-demand paging? */
int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable)
{
	if (ibv_ctx == NULL || is_odp_capable == NULL) {
		RPMA_LOG_ERROR("invalid argument: %s == NULL",
			       ibv_ctx == NULL ? "ibv_ctx" : "is_odp_capable");
		return RPMA_E_INVAL;
	}

	const struct rpma_provider *prov;
	void *dev;
	int ret = rpma_utils_device_resolve(ibv_ctx, &prov, &dev);
	if (ret)
		return ret;

	if (prov->ops->device_is_odp_capable == NULL) {
		*is_odp_capable = 0;
		return 0;
	}

	int capable = 0;
	ret = prov->ops->device_is_odp_capable(dev, &capable);
	if (ret)
		return ret;

	*is_odp_capable = capable ? 1 : 0;
	return 0;
}

/* rpma_utils_conn_event_2str -- a readable name of a connection event */
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	switch (conn_event) {
	case RPMA_CONN_UNDEFINED:
		return "Undefined connection event";
	case RPMA_CONN_ESTABLISHED:
		return "Connection established";
	case RPMA_CONN_CLOSED:
		return "Connection closed";
	case RPMA_CONN_LOST:
		return "Connection lost";
	case RPMA_CONN_REJECTED:
		return "Connection rejected";
	case RPMA_CONN_UNREACHABLE:
		return "Connection unreachable";
	default:
		return "Unsupported connection event";
	}
}
