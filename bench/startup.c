/* SPDX-License-Identifier: BSD-3-Clause */
/* startup.c -- what loading librpma costs a process: no call at all, or one device look-up */

#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * main -- "startup" only asks the log threshold (no transport call);
 * "startup ctx ADDR" also looks the device of ADDR up
 * (rpma_utils_get_ibv_context), which selects and loads a provider
 */
int main(int argc, char *argv[])
{
	enum rpma_log_level level;
	if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level)) {
		fprintf(stderr, "rpma_log_get_threshold failed\n");
		return 1;
	}
	if (argc == 3 && strcmp(argv[1], "ctx") == 0) {
		struct ibv_context *ctx;
		int ret = rpma_utils_get_ibv_context(argv[2], RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
		if (ret) {
			fprintf(stderr, "rpma_utils_get_ibv_context(%s): %s\n", argv[2],
				rpma_err_2str(ret));
			return 1;
		}
	}
	return 0;
}
