/* SPDX-License-Identifier: BSD-3-Clause */
/* rpma-info.c -- list the built providers and show which one serves an address */

#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librpma.h"
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

/* usage -- how to call the program */
static void usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"usage: %s [-r] [address]\n"
		"  Lists the providers built into librpma and shows which one serves the\n"
		"  address (default 127.0.0.1) as RPMA_PROVIDER or automatic selection decides.\n"
		"  -r  the address is a remote peer's (default: a local address)\n"
		"  -h  this help\n",
		argv0);
}

/* main -- list the providers, then resolve the address */
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

	printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
	printf("providers (in the order of automatic selection):\n");
	size_t n = 0;
	for (size_t i = 0; rpma_providers[i] != NULL; i++, n++) {
		const struct rpma_provider *p = rpma_providers[i];
		printf("  %-8s %s%s\n", p->name ? p->name : "(unnamed)",
		       p->description ? p->description : "",
		       rpma_provider_usable(p) ? "" : " [unusable: incomplete table]");
		printf("           static caps: ");
		print_caps(p->caps);
	}
	if (n == 0)
		printf("  none\n");

	const char *env = getenv(RPMA_PROVIDER_ENV);
	if (env == NULL || env[0] == '\0')
		printf("%s: unset (automatic selection)\n", RPMA_PROVIDER_ENV);
	else
		printf("%s: %s\n", RPMA_PROVIDER_ENV, env);

	const char *what = type == RPMA_UTIL_IBV_CONTEXT_LOCAL ? "local" : "remote";
	struct ibv_context *ctx = NULL;
	int ret = rpma_utils_get_ibv_context(addr, type, &ctx);
	if (ret) {
		printf("%s address %s: no provider serves it (%s)\n", what, addr,
		       rpma_err_2str(ret));
		return 1;
	}

	const struct rpma_provider *prov = NULL;
	void *dev = NULL;
	ret = rpma_utils_device_resolve(ctx, &prov, &dev);
	if (ret) {
		printf("%s address %s: served, but the device cannot be used (%s)\n", what, addr,
		       rpma_err_2str(ret));
		return 1;
	}

	int odp = 0;
	(void)rpma_utils_ibv_context_is_odp_capable(ctx, &odp);
	printf("%s address %s: provider %s (on-demand paging: %s)\n", what, addr, prov->name,
	       odp ? "yes" : "no");

	/* what a peer on the device gets: the device's native operations, as knobs leave them */
	struct rpma_peer *peer = NULL;
	ret = rpma_peer_new(ctx, &peer);
	if (ret) {
		printf("device caps: cannot open a peer on the device (%s)\n", rpma_err_2str(ret));
		return 1;
	}
	uint64_t caps = rpma_peer_caps(peer);
	printf("device caps: ");
	print_caps(caps);
	printf("native flush: %s\n", !(caps & RPMA_PROV_CAP_NATIVE_FLUSH)
					     ? "no (the read after the writes, APM)"
				     : (caps & RPMA_PROV_CAP_NATIVE_FLUSH_UNANNOUNCED)
					     ? "yes, to every remote region"
					     : "yes, to regions that announce it");
	printf("native atomic write: %s\n",
	       (caps & RPMA_PROV_CAP_NATIVE_ATOMIC_WRITE) ? "yes" : "no (a fenced 8-byte write)");
	(void)rpma_peer_delete(&peer);
	return 0;
}
