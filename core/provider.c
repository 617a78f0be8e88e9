/* SPDX-License-Identifier: BSD-3-Clause */
/* provider.c -- looking up, loading, validating and choosing the providers */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr(), secure_getenv() */
#endif

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "provider_select.h"
#include "utils.h"

#ifndef RPMA_MODULE_DIR
#define RPMA_MODULE_DIR "" /* set by the build: $(pkglibdir) */
#endif

/* at most this many providers are considered (the registry holds two) */
#define RPMA_PROVIDERS_MAX 16

/* one mandatory op of struct rpma_provider_ops */
struct rpma_mandatory_op {
	size_t offset;
	const char *name;
};

#define RPMA_MANDATORY(op) {offsetof(struct rpma_provider_ops, op), #op},

/* provider.h's list of mandatory ops, the only one */
static const struct rpma_mandatory_op rpma_mandatory_ops[] = {
	RPMA_PROVIDER_MANDATORY_OPS(RPMA_MANDATORY)};

/* the usable linked-in providers, in registry order, found once */
static const struct rpma_provider *rpma_usable[RPMA_PROVIDERS_MAX];
static size_t rpma_usable_num;
static pthread_once_t rpma_usable_once = PTHREAD_ONCE_INIT;

/* the longest provider name a module may have */
#define RPMA_MODULE_NAME_MAX 32

/* one provider module: named by the registry or by RPMA_PROVIDER */
struct rpma_module {
	char name[RPMA_MODULE_NAME_MAX];
	bool tried;			  /* loading was attempted (prov or why is set) */
	const struct rpma_provider *prov; /* the loaded, validated table, or NULL */
	char why[320];			  /* why it is not usable */
};

/* the registry's modules first (rpma_auto_num of them), then others RPMA_PROVIDER named */
static struct rpma_module rpma_modules[RPMA_PROVIDERS_MAX];
static size_t rpma_auto_num, rpma_modules_num;
static pthread_mutex_t rpma_modules_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* rpma_module_name_valid -- a provider name usable in a file name: [a-z0-9_], 1..31 chars */
static bool rpma_module_name_valid(const char *name, size_t len)
{
	if (len == 0 || len >= RPMA_MODULE_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

/* rpma_module_add_locked -- a slot for the module name (existing or new), or NULL */
static struct rpma_module *rpma_module_add_locked(const char *name, size_t len)
{
	for (size_t i = 0; i < rpma_modules_num; i++) {
		if (strlen(rpma_modules[i].name) == len &&
		    strncmp(rpma_modules[i].name, name, len) == 0)
			return &rpma_modules[i];
	}
	if (!rpma_module_name_valid(name, len) || rpma_modules_num == RPMA_PROVIDERS_MAX)
		return NULL;
	struct rpma_module *m = &rpma_modules[rpma_modules_num++];
	memcpy(m->name, name, len);
	m->name[len] = '\0';
	return m;
}

/* rpma_provider_scan -- validate the linked-in providers and list the registry's modules once */
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

	const char *list = rpma_provider_modules ? rpma_provider_modules : "";
	while (*list != '\0') {
		size_t len = strcspn(list, ":");
		if (len > 0 && rpma_module_add_locked(list, len) == NULL)
			RPMA_LOG_ERROR(
				"provider module \"%.*s\" of the registry ignored (bad name or "
				"more than %d)",
				(int)len, list, RPMA_PROVIDERS_MAX);
		list += len;
		if (*list == ':')
			list++;
	}
	rpma_auto_num = rpma_modules_num;
}

/* the core's services for provider modules */
static const struct rpma_core_services rpma_core_services = {
	.abi_version = RPMA_PROVIDER_ABI_VERSION,
	.log_enabled = rpma_log_enabled,
	.log_emitv = rpma_log_emitv,
	.ep_peer = rpma_ep_peer,
	.conn_req_peer = rpma_conn_req_peer,
	.conn_peer = rpma_conn_peer,
	.srq_peer = rpma_srq_peer,
	.peer_caps = rpma_peer_caps,
	.peer_max_msg_size = rpma_peer_max_msg_size,
	.mr_local_ptr = rpma_mr_local_ptr,
	.mr_local_size = rpma_mr_local_size,
	.mr_local_usage = rpma_mr_local_usage,
	.conn_event_2str = rpma_utils_conn_event_2str,
	.module_fini = rpma_utils_devices_release,
};

/* rpma_module_own_dir -- the directory "librpma" next to the file holding this code */
static bool rpma_module_own_dir(char *buf, size_t size)
{
	Dl_info info;
	char real[PATH_MAX];

	if (dladdr((void *)rpma_module_own_dir, &info) == 0 || info.dli_fname == NULL ||
	    realpath(info.dli_fname, real) == NULL)
		return false;
	char *slash = strrchr(real, '/');
	if (slash == NULL)
		return false;
	*slash = '\0';
	int n = snprintf(buf, size, "%s/librpma", real);
	return n > 0 && (size_t)n < size;
}

/*
 * rpma_module_dlopen -- dlopen() path keeping the process's signal handlers:
 * a library a module depends on may install its own at load time (Debian's
 * libfabric pulls in libpsm_infinipath, whose constructor takes SIGTERM and
 * SIGINT and exits), which would replace the application's handlers set
 * before the first transport call; those changed by the load are put back
 */
static void *rpma_module_dlopen(const char *path)
{
	static struct sigaction before[NSIG]; /* the modules lock is held */
	struct sigaction after;

	for (int sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &before[sig]) != 0)
			before[sig].sa_handler = SIG_ERR;
	}

	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	for (int sig = 1; sig < NSIG; sig++) {
		if (before[sig].sa_handler == SIG_ERR || sigaction(sig, NULL, &after) != 0)
			continue;
		if (after.sa_handler != before[sig].sa_handler ||
		    after.sa_flags != before[sig].sa_flags) {
			(void)sigaction(sig, &before[sig], NULL);
			RPMA_LOG_INFO("%s changed the handler of signal %d: put back", path, sig);
		}
	}
	return handle;
}

/* rpma_module_open -- dlopen() file in the first directory holding it; NULL with m->why set */
static void *rpma_module_open(struct rpma_module *m, const char *file)
{
	char own[PATH_MAX] = "";
	const char *env = secure_getenv(RPMA_PROVIDER_PATH_ENV);
	const char *dirs[3] = {env ? env : "", rpma_module_own_dir(own, sizeof(own)) ? own : "",
			       RPMA_MODULE_DIR};
	char path[PATH_MAX];

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		const char *dir = dirs[d];
		while (*dir != '\0') {
			size_t len = strcspn(dir, ":");
			int n = snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, file);
			dir += len;
			if (*dir == ':')
				dir++;
			if (len == 0 || n < 0 || (size_t)n >= sizeof(path) ||
			    access(path, F_OK) != 0)
				continue;
			void *handle = rpma_module_dlopen(path);
			if (handle == NULL) {
				const char *err = dlerror();
				snprintf(m->why, sizeof(m->why), "cannot load %.160s: %.140s", path,
					 err ? err : "unknown error");
			}
			return handle;
		}
	}
	snprintf(m->why, sizeof(m->why), "%s not found (%s=%.80s, %.80s, %.80s)", file,
		 RPMA_PROVIDER_PATH_ENV, env ? env : "", own[0] ? own : "-", RPMA_MODULE_DIR);
	return NULL;
}

/* rpma_module_load -- load and check the module of m (modules lock held) */
static void rpma_module_load(struct rpma_module *m)
{
	char file[RPMA_MODULE_NAME_MAX + 16];
	m->tried = true;
	snprintf(file, sizeof(file), "librpma-%s.so", m->name);

	void *handle = rpma_module_open(m, file);
	if (handle == NULL)
		return;

	rpma_provider_module_fn *entry;
	void *sym = dlsym(handle, RPMA_PROVIDER_MODULE_ENTRY);
	memcpy(&entry, &sym, sizeof(entry));
	if (entry == NULL) {
		snprintf(m->why, sizeof(m->why), "%s exports no %s", file,
			 RPMA_PROVIDER_MODULE_ENTRY);
		dlclose(handle);
		return;
	}

	unsigned abi = 0;
	const struct rpma_provider *prov = entry(&rpma_core_services, &abi);
	if (abi != RPMA_PROVIDER_ABI_VERSION) {
		snprintf(m->why, sizeof(m->why),
			 "%s was built for provider ABI version %u, this librpma has %u", file, abi,
			 RPMA_PROVIDER_ABI_VERSION);
		dlclose(handle);
		return;
	}
	if (prov == NULL || prov->name == NULL || strcmp(prov->name, m->name) != 0) {
		snprintf(m->why, sizeof(m->why), "%s holds no provider named %s", file, m->name);
		dlclose(handle);
		return;
	}
	if (!rpma_provider_validate(prov)) {
		snprintf(m->why, sizeof(m->why), "%s: the provider's table is incomplete", file);
		dlclose(handle);
		return;
	}
	m->prov = prov; /* never unloaded: objects and device handles may refer to it */
	RPMA_LOG_INFO("provider %s loaded from %s", m->name, file);
}

/* rpma_module_get -- the provider of module m, loaded on first use; NULL when not usable */
static const struct rpma_provider *rpma_module_get(struct rpma_module *m, bool quiet)
{
	pthread_mutex_lock(&rpma_modules_lock);
	bool first = !m->tried;
	if (first)
		rpma_module_load(m);
	const struct rpma_provider *prov = m->prov;
	pthread_mutex_unlock(&rpma_modules_lock);

	if (prov == NULL && first && !quiet)
		RPMA_LOG_NOTICE("provider %s skipped: %s", m->name, m->why);
	return prov;
}

/*
 * rpma_provider_next -- iterate over the usable providers in registry order:
 * the linked-in ones, then the registry's modules (each loaded when reached)
 */
const struct rpma_provider *rpma_provider_next(size_t *iter)
{
	(void)pthread_once(&rpma_usable_once, rpma_provider_scan);

	while (*iter < rpma_usable_num + rpma_auto_num) {
		size_t i = (*iter)++;
		if (i < rpma_usable_num)
			return rpma_usable[i];
		const struct rpma_provider *p =
			rpma_module_get(&rpma_modules[i - rpma_usable_num], false);
		if (p != NULL)
			return p;
	}
	return NULL;
}

/* rpma_provider_usable -- is prov one of the usable providers (linked in or loaded)? */
bool rpma_provider_usable(const struct rpma_provider *prov)
{
	(void)pthread_once(&rpma_usable_once, rpma_provider_scan);

	for (size_t i = 0; i < rpma_usable_num; i++) {
		if (rpma_usable[i] == prov)
			return true;
	}
	bool found = false;
	pthread_mutex_lock(&rpma_modules_lock);
	for (size_t i = 0; i < rpma_modules_num; i++) {
		if (rpma_modules[i].prov == prov && prov != NULL)
			found = true;
	}
	pthread_mutex_unlock(&rpma_modules_lock);
	return found;
}

/*
 * rpma_provider_names -- the names of the providers automatic selection
 * tries ("verbs, fabric"), without loading any module
 */
void rpma_provider_names(char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	(void)pthread_once(&rpma_usable_once, rpma_provider_scan);

	for (size_t i = 0; i < rpma_usable_num + rpma_auto_num; i++) {
		const char *name = i < rpma_usable_num ? rpma_usable[i]->name
						       : rpma_modules[i - rpma_usable_num].name;
		int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
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
	(void)pthread_once(&rpma_usable_once, rpma_provider_scan);

	for (size_t i = 0; i < rpma_usable_num; i++) {
		if (strcmp(rpma_usable[i]->name, name) == 0) {
			*prov = rpma_usable[i];
			return 0;
		}
	}

	pthread_mutex_lock(&rpma_modules_lock);
	struct rpma_module *m = rpma_module_add_locked(name, strlen(name));
	pthread_mutex_unlock(&rpma_modules_lock);
	const struct rpma_provider *p = m ? rpma_module_get(m, true) : NULL;
	if (p != NULL) {
		*prov = p;
		return 0;
	}

	char names[256];
	rpma_provider_names(names, sizeof(names));
	if (m != NULL) {
		RPMA_LOG_ERROR("%s=\"%s\": the provider is not usable: %s (automatic selection "
			       "tries: %s)",
			       RPMA_PROVIDER_ENV, name, m->why, names);
		return RPMA_E_NOSUPP;
	}
	RPMA_LOG_ERROR("%s=\"%s\": no such provider (automatic selection tries: %s)",
		       RPMA_PROVIDER_ENV, name, names);
	return RPMA_E_NOSUPP;
}

/* rpma_single_threaded -- does the process have one thread (false when unknown)? */
static bool rpma_single_threaded(void)
{
	DIR *dir = opendir("/proc/self/task");
	if (dir == NULL)
		return false;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	closedir(dir);
	return n == 1;
}

/* rpma_provider_env_defaults -- set the NAME=VALUE;... of list where unset, if single-threaded */
void rpma_provider_env_defaults(const char *list)
{
	if (list == NULL || list[0] == '\0' || !rpma_single_threaded())
		return;

	while (*list != '\0') {
		size_t len = strcspn(list, ";");
		const char *eq = memchr(list, '=', len);
		char name[64], value[64];
		size_t nlen = eq ? (size_t)(eq - list) : 0;
		size_t vlen = eq ? len - nlen - 1 : 0;
		if (eq != NULL && nlen > 0 && nlen < sizeof(name) && vlen < sizeof(value)) {
			memcpy(name, list, nlen);
			name[nlen] = '\0';
			memcpy(value, eq + 1, vlen);
			value[vlen] = '\0';
			(void)setenv(name, value, 0);
		}
		list += len;
		if (*list == ';')
			list++;
	}
}
