// SPDX-License-Identifier: MIT
/*
 * bench_sim.c - the PTO2 runtime core over the in-process sim device for
 * the benchmarks (see bench_sim.h)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_engine.h"
#include "pto2_runtime.h"
#include "sim_device.h"

#include "bench_sim.h"

#define SIM_HEAP	(32ull << 20)
#define SIM_WINDOW	16384
#define SIM_TIMEOUT_NS	(120ull * 1000000000ull)

struct bench_sim {
	struct sim_device *sd;
	struct sim_gm_arena arena;
	struct pto2_config cfg;
	PTO2Runtime *rt;
};

static void sim_log(void *ctx, int level, const char *msg)
{
	(void)ctx;
	if (level == PTO2_LOG_ERROR)
		fprintf(stderr, "pto2: %s\n", msg);
}

int bench_sim_open(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		   int nr_kernels, struct bench_sim **out)
{
	struct bench_sim *bs = calloc(1, sizeof(*bs));
	uint64_t mem;
	size_t size;
	int ret, k;

	*out = NULL;
	if (!bs)
		return -ENOMEM;
	pto2_config_default(&bs->cfg);
	bs->cfg.task_window = SIM_WINDOW;
	bs->cfg.heap_size = SIM_HEAP;
	bs->cfg.log = sim_log;
	size = pto2_runtime_mem_size(&bs->cfg, BENCH_SIM_NR_AIC * 3);
	ret = sim_device_create(BENCH_SIM_NR_AIC, 2 * BENCH_SIM_NR_AIC,
				PTO2_ALIGN_UP(size, 4096) + data_bytes, &bs->sd);
	if (ret) {
		fprintf(stderr, "sim_device_create: %s\n", strerror(-ret));
		goto fail;
	}
	for (k = 0; k < nr_kernels && !ret; k++)
		ret = sim_device_set_kernel(bs->sd, k, kernel);
	if (ret)
		goto fail;
	bs->arena.sd = bs->sd;
	mem = sim_gm_alloc(&bs->arena, size, 4096);
	ret = -ENOMEM;
	if (!mem)
		goto fail;
	ret = pto2_runtime_create(&bs->sd->dev, &bs->cfg,
				  sim_dev_to_host(bs->sd, mem), mem, size,
				  &bs->rt);
	if (ret) {
		fprintf(stderr, "pto2_runtime_create: %s\n", strerror(-ret));
		goto fail;
	}
	*out = bs;
	return 0;
fail:
	bench_sim_close(bs);
	return ret;
}

void bench_sim_close(struct bench_sim *bs)
{
	if (!bs)
		return;
	if (bs->rt)
		pto2_runtime_destroy(bs->rt);
	if (bs->sd)
		sim_device_destroy(bs->sd);
	free(bs);
}

void bench_sim_info(const struct bench_sim *bs, struct bench_sim_info *info)
{
	struct pto_exec_pool_stats st;

	info->nr_aic = bs->sd->nr_aic;
	info->nr_aiv = bs->sd->nr_aiv;
	pto_exec_pool_get_stats(bs->sd->pool, &st);
	info->core_threads = st.threads;
	info->sched_threads = pto2_engine_threads(pto2_runtime_engine(bs->rt));
	info->task_window = bs->cfg.task_window;
	info->heap_mib = (unsigned long long)(bs->cfg.heap_size >> 20);
}

int bench_sim_alloc(struct bench_sim *bs, size_t len, uint64_t *dev,
		    void **host)
{
	*dev = sim_gm_alloc(&bs->arena, len, 4096);
	if (!*dev)
		return -ENOMEM;
	*host = sim_dev_to_host(bs->sd, *dev);
	return 0;
}

int bench_sim_run(struct bench_sim *bs, pto2_orchestration_entry_fn entry,
		  uint64_t *args, int argc, char *msg, size_t msglen)
{
	struct pto2_stats st;
	int ret;

	msg[0] = 0;
	ret = pto2_runtime_orchestrate(bs->rt, entry, args, argc);
	if (!ret)
		ret = pto2_runtime_wait(bs->rt, SIM_TIMEOUT_NS);
	if (ret == -ETIMEDOUT) {
		pto2_runtime_abort(bs->rt, -ETIMEDOUT);
		pto2_runtime_wait(bs->rt, SIM_TIMEOUT_NS);
	}
	if (ret) {
		snprintf(msg, msglen, "%s", pto2_rt_get_error_msg(bs->rt));
		return ret;
	}
	pto2_runtime_get_stats(bs->rt, &st);
	if (st.tasks_completed != st.tasks_submitted) {
		snprintf(msg, msglen, "%llu tasks submitted, %llu completed",
			 (unsigned long long)st.tasks_submitted,
			 (unsigned long long)st.tasks_completed);
		return -EIO;
	}
	return 0;
}
