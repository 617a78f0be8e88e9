#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# relay.sh -- the integration scenarios over the out-of-tree test provider "relay"
# (tests/extprov/relay.c), selected the way any provider is: its directory in
# RPMA_PROVIDER_PATH and RPMA_PROVIDER=relay.  Neither core/ nor the scenarios know
# it: what they expect of it comes from the traits its module declares (those of
# the module it relays to, fabric, here over libfabric's tcp provider).
# Skipped (exit 77) when the caller selects a provider or a libfabric provider.
if [ -n "$RPMA_PROVIDER" ]; then
	echo "relay.sh: RPMA_PROVIDER=$RPMA_PROVIDER is set by the caller"
	exit 77
fi
if [ -n "$FI_PROVIDER" ]; then
	echo "relay.sh: FI_PROVIDER=$FI_PROVIDER is set by the caller"
	exit 77
fi
build="${top_builddir:-.}"
bin="$build/tests/integration/test_integration"
relay_dir=$(cd "$build/tests/extprov/.libs" && pwd) || exit 99
modules=$(cd "$build/.libs/librpma" && pwd) || exit 99
RPMA_PROVIDER_PATH="$relay_dir:$modules" RPMA_PROVIDER=relay FI_PROVIDER=tcp \
	exec "$bin" -j2 --timeout 60 "$@"
