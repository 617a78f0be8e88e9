/* SPDX-License-Identifier: BSD-3-Clause */
/* select.c -- which provider serves an address: the answer of a device look-up, for modules.sh */

#include <stdio.h>

#include <librpma.h>

/*
 * main -- "select ADDR": look the local device of ADDR up and print
 * "ok" or the error's name; with no argument only ask the log threshold
 */
int main(int argc, char *argv[])
{
	enum rpma_log_level level;
	if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level))
		return 2;
	if (argc < 2) {
		printf("ok\n");
		return 0;
	}
	struct ibv_context *ctx = NULL;
	int ret = rpma_utils_get_ibv_context(argv[1], RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx);
	printf("%s\n", ret ? rpma_err_2str(ret) : "ok");
	return ret ? 1 : 0;
}
