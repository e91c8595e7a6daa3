// SPDX-License-Identifier: MIT
/*
 * env.c - names of the runtime's environment variables (see env.h)
 */
#include <pto-private/env.h>

const char *const pto_env_names[PTO_ENV_N] = {
	[PTO_ENV_TASK_WINDOW] = "PTO2_RING_TASK_WINDOW",
	[PTO_ENV_HEAP] = "PTO2_RING_HEAP",
	[PTO_ENV_DEP_POOL] = "PTO2_RING_DEP_POOL",
	[PTO_ENV_RQ_SHARDS] = "PTO2_READY_QUEUE_SHARDS",
};
