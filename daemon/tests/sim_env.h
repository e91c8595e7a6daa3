// SPDX-License-Identifier: MIT
/*
 * sim_env.h - the native tests' environment: a sim device, a runtime over
 * it in the device's GM, a log capture, GM helpers (header-only, for the
 * test programs)
 */
#ifndef SIM_ENV_H
#define SIM_ENV_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_engine.h"
#include "pto2_runtime.h"
#include "sim_device.h"

struct logbuf {
	pthread_mutex_t lock;
	char text[16384];
	int warns, errors;
};

static inline void capture(void *ctx, int level, const char *msg)
{
	struct logbuf *lb = ctx;

	pthread_mutex_lock(&lb->lock);
	if (level == PTO2_LOG_WARN)
		lb->warns++;
	if (level == PTO2_LOG_ERROR)
		lb->errors++;
	if (strlen(lb->text) + strlen(msg) + 2 < sizeof(lb->text)) {
		strcat(lb->text, msg);
		strcat(lb->text, "\n");
	}
	pthread_mutex_unlock(&lb->lock);
}

struct env {
	struct sim_device *sd;
	struct sim_gm_arena arena;
	PTO2Runtime *rt;
	struct pto2_engine *eng;	/* env_open_engine()'s, or NULL */
	struct pto2_config cfg;
	struct logbuf log;
};

static _Thread_local struct env *E;	/* the env of the running test (kernels, orch) */

static inline void cfg_small(struct pto2_config *c)
{
	pto2_config_default(c);
	c->task_window = 1024;
	c->heap_size = 4 << 20;
	c->dep_pool_size = 8192;
	c->tensormap_pool_size = 4096;
	c->tensormap_buckets = 1024;
	c->sched_threads = 2;
}

/* A runtime over the env's device, in its GM. */
static inline int env_runtime(struct env *e, const struct pto2_config *cfg)
{
	uint64_t size, dev;
	uint32_t cores = e->sd->nr_cores;
	int ret;

	e->arena.sd = e->sd;
	e->cfg = *cfg;
	e->cfg.log = capture;
	e->cfg.log_ctx = &e->log;
	size = pto2_runtime_mem_size(&e->cfg, cores);
	dev = sim_gm_alloc(&e->arena, size, 4096);
	if (!dev)
		return -ENOMEM;
	ret = pto2_runtime_create(&e->sd->dev, &e->cfg,
				  sim_dev_to_host(e->sd, dev), dev, size, &e->rt);
	E = e;
	return ret;
}

/* The same, its executor's threads as @pool says (NULL: the defaults). */
static inline int env_device_pool(struct env *e, uint32_t aic, uint32_t aiv,
				  const struct pto_exec_pool_config *pool)
{
	memset(e, 0, sizeof(*e));
	pthread_mutex_init(&e->log.lock, NULL);
	return sim_device_create_pool(aic, aiv, 64 << 20, pool, &e->sd);
}

/* A sim device of @aic + @aiv cores with 64 MiB of GM, no runtime yet. */
static inline int env_device(struct env *e, uint32_t aic, uint32_t aiv)
{
	return env_device_pool(e, aic, aiv, NULL);
}

static inline int env_open(struct env *e, uint32_t aic, uint32_t aiv,
		    const struct pto2_config *cfg)
{
	int ret = env_device(e, aic, aiv);

	return ret ? ret : env_runtime(e, cfg);
}

/*
 * env_open() with the device's engine created first (defaults, the
 * invariant checker and follow_regs on), as ptod does; env_close()
 * destroys it.
 */
static inline int env_open_engine(struct env *e, uint32_t aic, uint32_t aiv,
				  const struct pto2_config *cfg)
{
	struct pto2_engine_config ec;
	int ret = env_device(e, aic, aiv);

	if (ret)
		return ret;
	pto2_engine_config_default(&ec);
	ec.check = true;
	ec.follow_regs = true;
	ec.log = capture;
	ec.log_ctx = &e->log;
	ret = pto2_engine_create(&e->sd->dev, &ec, &e->eng);
	if (ret)
		return ret;
	e->sd->dev.engine = e->eng;
	return env_runtime(e, cfg);
}

static inline void env_close(struct env *e)
{
	pto2_runtime_destroy(e->rt);
	if (e->eng)
		pto2_engine_destroy(e->eng);
	sim_device_destroy(e->sd);
	pthread_mutex_destroy(&e->log.lock);
}

static inline int run(struct env *e, pto2_orchestration_entry_fn fn, uint64_t *args,
	       int argc)
{
	int ret = pto2_runtime_launch(e->rt, fn, args, argc);

	if (ret)
		return ret;
	return pto2_runtime_wait(e->rt, 30ULL * 1000000000ULL);
}

static inline uint64_t gm(uint64_t size)
{
	return sim_gm_alloc(&E->arena, size, 1024);
}

static inline void *host(uint64_t dev)
{
	return sim_dev_to_host(E->sd, dev);
}

static inline Tensor ext1(uint64_t dev, uint64_t n, DataType dt)
{
	return make_tensor_external((void *)(uintptr_t)dev, &n, 1, dt);
}

#endif /* SIM_ENV_H */
