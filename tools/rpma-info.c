/* SPDX-License-Identifier: BSD-3-Clause */
/* rpma-info.c -- list the built providers and show what each would do for an address */

#include "config.h"

#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librpma.h"
#include "peer.h"
#include "provider.h"
#include "provider_select.h"
#include "utils.h"

#ifndef LIBRPMA_PROVIDER_PLUGGABLE
#error "librpma.h is not this tree's include/librpma.h (is AM_CPPFLAGS missing from the target's CPPFLAGS?)"
#endif

/* the name of each static capability bit */
static const struct {
	uint64_t bit;
	const char *name;
} caps_names[] = {
	{RPMA_PROV_CAP_IBV_CONTEXT, "ibv_context"},
	{RPMA_PROV_CAP_NATIVE_FLUSH, "native_flush"},
	{RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE, "native_atomic_write"},
	{RPMA_PROV_CAP_ODP, "odp"},
	{RPMA_PROV_CAP_IMM_CONSUMES_RECV, "imm_consumes_recv"},
	{RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED, "native_flush_unannounced"},
};

/* print_caps -- the capability bits as names */
static void print_caps(uint64_t caps)
{
	printf("0x%" PRIx64, caps);
	const char *sep = " (";
	for (size_t i = 0; i < sizeof(caps_names) / sizeof(caps_names[0]); i++) {
		if (caps & caps_names[i].bit) {
			printf("%s%s", sep, caps_names[i].name);
			sep = ", ";
			caps &= ~caps_names[i].bit;
		}
	}
	if (caps)
		printf("%sunknown 0x%" PRIx64, sep, caps);
	if (strcmp(sep, " (") != 0 || caps)
		printf(")");
	printf("\n");
}

/* the last message the library logged while a provider was tried: the reason it refused */
static char last_msg[512];

/* capture_log -- a log function that keeps the last message at NOTICE or more severe */
static void capture_log(enum rpma_log_level level, const char *file_name, const int line_no,
			const char *function_name, const char *message_format, ...)
{
	if (level > RPMA_LOG_LEVEL_NOTICE)
		return;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(last_msg, sizeof(last_msg), message_format, ap);
	va_end(ap);
	size_t n = strlen(last_msg);
	while (n > 0 && (last_msg[n - 1] == '\n' || last_msg[n - 1] == ' '))
		last_msg[--n] = '\0';
}

/* usage -- how to call the program */
static void usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"usage: %s [-r] [address]\n"
		"  Lists the providers librpma was built with (the modules found) and, for\n"
		"  the address (default 127.0.0.1), what each provider would do with it or\n"
		"  why it cannot serve it, then the one RPMA_PROVIDER or automatic selection\n"
		"  picks.\n"
		"  -r  the address is a remote peer's (default: a local address)\n"
		"  -h  this help\n",
		argv0);
}

/* find_loaded -- the loaded provider named name, or NULL */
static const struct rpma_provider *find_loaded(const char *name)
{
	size_t iter = 0;
	const struct rpma_provider *p;
	while ((p = rpma_provider_next(&iter)) != NULL)
		if (p->name && strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* probe -- what provider name would do with addr: one line, 0 when it serves it (*caps set) */
static int probe(const char *name, const char *addr, enum rpma_util_ibv_context_type type,
		 uint64_t *caps_out)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	int odp = 0;

	setenv(RPMA_PROVIDER_ENV, name, 1);
	last_msg[0] = '\0';
	int ret = rpma_utils_get_ibv_context(addr, type, &ctx);
	if (ret == 0)
		ret = rpma_utils_ibv_context_is_odp_capable(ctx, &odp);
	if (ret == 0)
		ret = rpma_peer_new(ctx, &peer);
	if (ret) {
		printf("  %-8s cannot serve it: %s (%s)\n", name,
		       last_msg[0] ? last_msg : "no reason logged", rpma_err_2str(ret));
		return ret;
	}
	uint64_t caps = rpma_peer_caps(peer);
	*caps_out = caps;
	char max[32] = "unlimited";
	if (rpma_peer_max_msg_size(peer) != SIZE_MAX)
		snprintf(max, sizeof(max), "%zu", rpma_peer_max_msg_size(peer));
	printf("  %-8s serves it: native flush %s; native atomic write %s; on-demand paging %s; "
	       "max message size %s; caps ",
	       name,
	       !(caps & RPMA_PROV_CAP_NATIVE_FLUSH) ? "no (a read after the writes)"
	       : (caps & RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED)
		       ? "yes, to every region"
		       : "yes, to regions that announce it",
	       (caps & RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE) ? "yes" : "no (a fenced 8-byte write)",
	       odp ? "yes" : "no", max);
	print_caps(caps);
	const struct rpma_provider *prov = rpma_peer_provider(peer);
	if (prov != NULL && prov->ops->peer_describe != NULL) {
		char what[512];
		what[0] = '\0';
		prov->ops->peer_describe(peer, what, sizeof(what));
		printf("  %-8s on: %s\n", "", what);
	}
	(void)rpma_peer_delete(&peer);
	return 0;
}

/* main -- list the providers, try each on the address, then show the selection's choice */
int main(int argc, char *argv[])
{
	enum rpma_util_ibv_context_type type = RPMA_UTIL_IBV_CONTEXT_LOCAL;
	int opt;

	while ((opt = getopt(argc, argv, "rh")) != -1) {
		switch (opt) {
		case 'r':
			type = RPMA_UTIL_IBV_CONTEXT_REMOTE;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (argc - optind > 1) {
		usage(stderr, argv[0]);
		return 2;
	}
	const char *addr = optind < argc ? argv[optind] : "127.0.0.1";

	/* the reasons go to this program's lines, not to stderr */
	(void)rpma_log_set_function(capture_log);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE);

	/* the built providers: configure's list; each is a module (or linked in) */
	char built[256];
	snprintf(built, sizeof(built), "%s", RPMA_PROVIDER_AUTO);
	printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
	printf("providers (in the order of automatic selection):\n");
	const char *names[8];
	size_t n = 0;
	for (char *save = NULL, *name = strtok_r(built, ":", &save); name && n < 8;
	     name = strtok_r(NULL, ":", &save)) {
		names[n++] = name;
		last_msg[0] = '\0';
		const struct rpma_provider *p = find_loaded(name);
		if (p == NULL) {
			char mod[64];
			snprintf(mod, sizeof(mod), "librpma-%s.so", name);
			printf("  %-8s not loadable: %s\n", name,
			       strstr(last_msg, mod) ? last_msg : "its module was not found");
			continue;
		}
		printf("  %-8s %s\n", name, p->description ? p->description : "");
		printf("           static caps: ");
		print_caps(p->caps);
	}
	if (n == 0)
		printf("  none\n");

	const char *env = getenv(RPMA_PROVIDER_ENV);
	char *forced = env && env[0] ? strdup(env) : NULL;
	printf("%s: %s\n", RPMA_PROVIDER_ENV, forced ? forced : "unset (automatic selection)");

	printf("%s address %s:\n", type == RPMA_UTIL_IBV_CONTEXT_LOCAL ? "local" : "remote", addr);
	const char *first = NULL;
	uint64_t caps[8] = {0}, first_caps = 0;
	int served[8] = {0};
	for (size_t i = 0; i < n; i++) {
		served[i] = probe(names[i], addr, type, &caps[i]) == 0;
		if (served[i] && first == NULL) {
			first = names[i];
			first_caps = caps[i];
		}
	}

	int ret = 0;
	if (forced) {
		int ok = 0;
		for (size_t i = 0; i < n; i++)
			if (strcmp(names[i], forced) == 0)
				ok = 1;
		if (!ok) {
			printf("selected: none: RPMA_PROVIDER=%s names no built provider\n",
			       forced);
			ret = 1;
		} else {
			setenv(RPMA_PROVIDER_ENV, forced, 1);
			last_msg[0] = '\0';
			struct ibv_context *ctx = NULL;
			ret = rpma_utils_get_ibv_context(addr, type, &ctx) ? 1 : 0;
			printf("selected: %s (RPMA_PROVIDER)%s\n", forced,
			       ret ? ", which cannot serve the address" : "");
			for (size_t i = 0; i < n && !ret; i++) {
				if (strcmp(names[i], forced) == 0 && served[i]) {
					printf("device caps: ");
					print_caps(caps[i]);
				}
			}
		}
	} else if (first) {
		printf("selected: %s (automatic selection)\n", first);
		printf("device caps: ");
		print_caps(first_caps);
	} else {
		printf("selected: none: no provider serves the address\n");
		ret = 1;
	}
	free(forced);
	return ret;
}
