// SPDX-License-Identifier: MIT
/* End-to-end runs on the sim device (see ex_sim.h). */
#include "ex_sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/parse.h>

#include "pto2_runtime.h"
#include "sim_device.h"

#define EX_SIM_HEAP		(64ull << 20)
#define EX_SIM_TIMEOUT_NS	(120ull * 1000000000ull)

static void ex_sim_log(void *ctx, int level, const char *msg)
{
	struct ex_sim *s = ctx;

	if (level == PTO2_LOG_WARN)
		s->warnings++;	/* BLOCKED notices under flow control */
	if (level == PTO2_LOG_ERROR)
		fprintf(stderr, "pto2: %s\n", msg);
}

void ex_sim_close(struct ex_sim *s)
{
	if (s->rt)
		pto2_runtime_destroy(s->rt);
	if (s->sd)
		sim_device_destroy(s->sd);
	if (s->orch_dl)
		dlclose(s->orch_dl);
	ex_kernels_unload(&s->ks);
	memset(s, 0, sizeof(*s));
}

/* The core count (EX_SIM_AIC) and the runtime configuration. */
static int ex_sim_config(struct ex_sim *s, struct pto2_config *cfg,
			 uint32_t *nr_aic)
{
	const char *env = getenv("EX_SIM_AIC");
	char err[256];
	int ret;

	*nr_aic = 24;
	if (env && *env) {
		uint64_t v;

		if (pto_parse_dec(env, 1, PTO_MAX_CORES / 3, &v)) {
			fprintf(stderr, "EX_SIM_AIC=%s: 1..%d\n", env, PTO_MAX_CORES / 3);
			return -EINVAL;
		}
		*nr_aic = (uint32_t)v;
	}
	pto2_config_default(cfg);
	cfg->heap_size = EX_SIM_HEAP;
	ret = pto2_config_from_env(cfg, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "runtime configuration: %s\n", err);
		return ret;
	}
	cfg->log = ex_sim_log;
	cfg->log_ctx = s;
	s->task_window = cfg->task_window;
	return 0;
}

/* @dir/orch.so and its two entry points. */
static int ex_sim_load_orch(struct ex_sim *s, const char *dir)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/orch.so", dir);
	s->orch_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!s->orch_dl) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -ENOENT;
	}
	*(void **)&s->config = dlsym(s->orch_dl, "aicpu_orchestration_config");
	*(void **)&s->entry = dlsym(s->orch_dl, "aicpu_orchestration_entry");
	if (!s->config || !s->entry) {
		fprintf(stderr, "%s: missing aicpu_orchestration_config/entry\n", path);
		return -ENOENT;
	}
	return 0;
}

/*
 * The device (@nr_aic + 2 @nr_aic cores, the loaded kernels registered),
 * the runtime's memory at the start of its GM, @data_bytes after it.
 */
static int ex_sim_create(struct ex_sim *s, const struct pto2_config *cfg,
			 uint32_t nr_aic, uint64_t data_bytes)
{
	uint64_t mem = pto2_runtime_mem_size(cfg, nr_aic * 3), dev;
	struct sim_gm_arena arena;
	size_t i;
	int ret;

	ret = sim_device_create(nr_aic, 2 * nr_aic,
				PTO2_ALIGN_UP(mem, 4096) + data_bytes + (1 << 20),
				&s->sd);
	if (ret) {
		fprintf(stderr, "sim_device_create: %s\n", strerror(-ret));
		return ret;
	}
	for (i = 0; i < s->ks.n; i++) {
		ret = sim_device_set_kernel(s->sd, s->ks.k[i].desc.func_id,
					    s->ks.k[i].entry);
		if (ret)
			return ret;
	}
	arena.sd = s->sd;
	arena.off = 0;
	dev = sim_gm_alloc(&arena, mem, 4096);
	s->arena_base = PTO2_ALIGN_UP(arena.off, 4096);
	s->arena_off = s->arena_base;
	ret = dev ? pto2_runtime_create(&s->sd->dev, cfg,
					sim_dev_to_host(s->sd, dev), dev, mem,
					&s->rt) : -ENOMEM;
	if (ret)
		fprintf(stderr, "pto2_runtime_create: %s\n", strerror(-ret));
	return ret;
}

int ex_sim_open(struct ex_sim *s, const char *dir,
		const struct ex_kernel_desc *descs, size_t n,
		uint64_t data_bytes)
{
	struct pto2_config cfg;
	uint32_t nr_aic;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = ex_sim_config(s, &cfg, &nr_aic);
	if (ret)
		return ret;
	ret = ex_kernels_load(&s->ks, dir, descs, n);
	if (ret)
		return ret;
	ret = ex_sim_load_orch(s, dir);
	if (!ret)
		ret = ex_sim_create(s, &cfg, nr_aic, data_bytes);
	if (ret)
		ex_sim_close(s);
	return ret;
}

void ex_sim_reset(struct ex_sim *s)
{
	s->arena_off = s->arena_base;
}

uint64_t ex_sim_alloc(struct ex_sim *s, uint64_t bytes, void **host)
{
	struct sim_gm_arena arena = { .sd = s->sd, .off = s->arena_off };
	uint64_t dev = sim_gm_alloc(&arena, bytes ? bytes : 1, 1024);

	if (!dev) {
		*host = NULL;
		return 0;
	}
	s->arena_off = arena.off;
	*host = sim_dev_to_host(s->sd, dev);
	return dev;
}

uint64_t ex_sim_upload(struct ex_sim *s, const void *src, uint64_t bytes,
		       void **host)
{
	void *h;
	uint64_t dev = ex_sim_alloc(s, bytes, &h);

	if (dev)
		memcpy(h, src, bytes);
	if (host)
		*host = h;
	return dev;
}

int ex_sim_run(struct ex_sim *s, uint64_t *args, int nargs,
	       unsigned long *tasks)
{
	PTO2OrchestrationConfig cfg = s->config(args, nargs);
	struct pto2_stats st;
	int ret;

	*tasks = 0;
	if (cfg.expected_arg_count != nargs) {
		fprintf(stderr, "orch.so expects %d args, given %d\n",
			cfg.expected_arg_count, nargs);
		return -EINVAL;
	}
	s->warnings = 0;
	ret = pto2_runtime_launch(s->rt, s->entry, args, nargs);
	if (!ret)
		ret = pto2_runtime_wait(s->rt, EX_SIM_TIMEOUT_NS);
	if (ret == -ETIMEDOUT) {
		pto2_runtime_abort(s->rt, -ETIMEDOUT);
		pto2_runtime_wait(s->rt, EX_SIM_TIMEOUT_NS);
	}
	pto2_runtime_get_stats(s->rt, &st);
	*tasks = (unsigned long)st.tasks_submitted;
	s->task_ring_blocked = st.task_ring_blocked;
	if (ret)
		fprintf(stderr, "run failed: %d (%s)%s%s\n", ret, strerror(-ret),
			pto2_rt_get_error_msg(s->rt)[0] ? ": " : "",
			pto2_rt_get_error_msg(s->rt));
	else if (st.tasks_completed != st.tasks_submitted) {
		fprintf(stderr, "run: %llu tasks submitted, %llu completed\n",
			(unsigned long long)st.tasks_submitted,
			(unsigned long long)st.tasks_completed);
		ret = -EIO;
	}
	return ret;
}

const char *ex_sim_label(const struct ex_sim *s)
{
	static char buf[32];

	if (s->task_window == PTO2_TASK_WINDOW_SIZE)
		return "/sim";
	snprintf(buf, sizeof(buf), "/sim-w%u", s->task_window);
	return buf;
}
