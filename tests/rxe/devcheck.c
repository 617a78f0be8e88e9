// SPDX-License-Identifier: BSD-3-Clause
/*
 * devcheck.c -- list the RDMA devices libibverbs sees and check that a given
 * one is there with an ACTIVE port 1 (used by selftest.sh: built on the host,
 * run in the Soft-RoCE guest)
 *
 * Usage: devcheck DEVICE
 */

#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}

	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (list == NULL) {
		perror("ibv_get_device_list");
		return 1;
	}

	int ret = 1;
	for (int i = 0; i < num; i++) {
		const char *name = ibv_get_device_name(list[i]);
		printf("devcheck: device %s\n", name);
		if (strcmp(name, argv[1]) != 0)
			continue;

		struct ibv_context *ctx = ibv_open_device(list[i]);
		if (ctx == NULL) {
			perror("ibv_open_device");
			break;
		}
		struct ibv_port_attr attr;
		if (ibv_query_port(ctx, 1, &attr) != 0) {
			perror("ibv_query_port");
		} else {
			printf("devcheck: %s port 1 state %s\n", name,
			       ibv_port_state_str(attr.state));
			if (attr.state == IBV_PORT_ACTIVE)
				ret = 0;
		}
		ibv_close_device(ctx);
		break;
	}
	ibv_free_device_list(list);

	printf("devcheck: %s\n", ret == 0 ? "OK" : "FAILED");
	return ret;
}
