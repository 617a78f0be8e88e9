#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# sockets.sh -- the integration scenarios again over libfabric's sockets provider
#
# sockets differs from tcp where it matters to the fabric provider: native
# atomics, no FI_RMA_PMEM (persistent flush is refused), its own progress
# threads, synchronous refusal of connections nobody listens for.
# Skipped (exit 77) when RPMA_PROVIDER selects another provider or FI_PROVIDER
# is already set by the caller.
if [ -n "$RPMA_PROVIDER" ] && [ "$RPMA_PROVIDER" != fabric ]; then
	echo "sockets.sh: RPMA_PROVIDER=$RPMA_PROVIDER, nothing to do"
	exit 77
fi
if [ -n "$FI_PROVIDER" ]; then
	echo "sockets.sh: FI_PROVIDER=$FI_PROVIDER is set by the caller"
	exit 77
fi
if ! fi_info -p sockets -t FI_EP_MSG >/dev/null 2>&1 && command -v fi_info >/dev/null; then
	echo "sockets.sh: libfabric has no sockets MSG provider here"
	exit 77
fi
# sockets' progress thread (one per domain) keeps polling for
# FI_SOCKETS_PE_WAITTIME ms (default 10) after each wakeup before it sleeps
# again: with connections made every few ms (disconnect_while_connecting)
# its threads never slept, and on a 2-core machine other processes then
# went without a CPU for 0.6-2.1 s (seconds more beside the churn's busy
# loops; a scenario of this suite missed a 5 s wait in the trixie lane).
# 0 makes it sleep at once; a caller's value is kept
FI_SOCKETS_PE_WAITTIME=${FI_SOCKETS_PE_WAITTIME:-0}
export FI_SOCKETS_PE_WAITTIME
# the program is in the build tree (make check exports top_builddir)
bin="${top_builddir:-.}/tests/integration/test_integration"
FI_PROVIDER=sockets exec "$bin" -j2 --timeout 60 "$@"
