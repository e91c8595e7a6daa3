// SPDX-License-Identifier: MIT
/*
 * env.h - the runtime's environment variables
 *
 * Read by the runtime (pto2_config_from_env), forwarded by libpto to ptod
 * at hello (wire.h), and looked up by ptod in what the client forwarded.
 * Their order here is the hello message's slot order.
 */
#ifndef PTO_PRIVATE_ENV_H
#define PTO_PRIVATE_ENV_H

enum pto_env_var {
	PTO_ENV_TASK_WINDOW,	/* PTO2_RING_TASK_WINDOW */
	PTO_ENV_HEAP,		/* PTO2_RING_HEAP */
	PTO_ENV_DEP_POOL,	/* PTO2_RING_DEP_POOL */
	PTO_ENV_RQ_SHARDS,	/* PTO2_READY_QUEUE_SHARDS */
	PTO_ENV_N
};

/* The variable's name, e.g. "PTO2_RING_TASK_WINDOW" (env.c). */
extern const char *const pto_env_names[PTO_ENV_N];

#endif /* PTO_PRIVATE_ENV_H */
