/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_env_helper.c -- print the log thresholds the core set at load time
 *
 * RPMA_LOG_LEVEL is read by a constructor of the core, before main(), so
 * test_basics runs this program with the variable set and reads
 * "main=<level> aux=<level>" from its standard output.  With an argument
 * "error" it also logs one error through the default log function (the
 * message reaches stderr when the auxiliary threshold lets it).
 */

#include <stdio.h>
#include <string.h>

#include "librpma.h"

/* main -- print both thresholds, optionally provoke an error message */
int main(int argc, char *argv[])
{
	enum rpma_log_level main_level, aux_level;
	if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &main_level) ||
	    rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &aux_level))
		return 2;
	if (argc > 1 && strcmp(argv[1], "error") == 0)
		(void)rpma_peer_cfg_new(NULL);
	printf("main=%d aux=%d\n", (int)main_level, (int)aux_level);
	return 0;
}
