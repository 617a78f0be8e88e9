#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# churn-eq-delay.sh -- churn with the progress thread held 300 us between
# reading an entry of a peer's connections' EQ and handing it on
# (RPMA_FABRIC_TEST_EQ_DELAY_US, a testing aid of the fabric provider).
#
# That is the window in which a preempted progress thread once gave the
# FI_SHUTDOWN of a closed endpoint to the next connection, whose endpoint had
# the freed address (REJECTED instead of ESTABLISHED; once in 15 000 cycles
# of a plain churn in CI).  Held open, it failed churn within its first
# cycles (3 of 3 runs) until endpoints were closed with no drain of the EQ
# running (fabric_conn.c, fab_conn_teardown).  RPMA_CHURN_EQ_DELAY_CYCLES:
# the cycles (default 300, a few seconds); churn's other variables apply.
set -u
b=${top_builddir:-.}
RPMA_FABRIC_TEST_EQ_DELAY_US=300 exec "$b/tests/churn/churn" "${RPMA_CHURN_EQ_DELAY_CYCLES:-300}"
