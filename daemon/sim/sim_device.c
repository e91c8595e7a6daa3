// SPDX-License-Identifier: MIT
/*
 * sim_device.c - in-process simulated device (see sim_device.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/futex.h>
#include <pto-private/parklot.h>
#include <pto-private/parse.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "sim_device.h"

static struct pto_core_regs *core_regs(struct sim_device *sd, uint32_t core)
{
	return pto_regs_core(sd->regs, core);
}

/* ---- Device ops (AICPU side) -------------------------------------------- */

static int sim_kick(void *ctx, uint32_t core)
{
	struct sim_device *sd = ctx;
	struct pto_core_regs *r;

	if (core >= sd->nr_cores)
		return -EINVAL;
	r = core_regs(sd, core);
	atomic_fetch_add_explicit(&sd->stat_kicks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(PTO_REG32(&r->kick_count), 1,
				  memory_order_relaxed);
	/* latched, then a sleeping executor thread woken if none is yet */
	atomic_fetch_or_explicit(&sd->kicked[core / 64], 1ULL << (core % 64),
				 memory_order_seq_cst);
	pto_parklot_kick(&sd->kick, false);
	return 0;
}

static uint32_t sim_irq_count(void *ctx)
{
	struct sim_device *sd = ctx;

	return atomic_load_explicit(&sd->irq_count, memory_order_acquire);
}

static int sim_irq_wait(void *ctx, uint32_t *count, int64_t deadline_ns)
{
	struct sim_device *sd = ctx;
	uint32_t c;

	for (;;) {
		struct timespec rel, *prel = NULL;

		c = atomic_load_explicit(&sd->irq_count, memory_order_acquire);
		if (c != *count)
			break;
		if (deadline_ns > 0) {
			int64_t now = pto_mono_ns();

			if (now >= deadline_ns) {
				*count = c;
				return -ETIMEDOUT;
			}
			rel = pto_ns_to_timespec((uint64_t)(deadline_ns - now));
			prel = &rel;
		}
		pto_futex_wait(&sd->irq_count, *count, prel);
	}
	*count = c;
	return 0;
}

static void sim_raise(struct sim_device *sd)
{
	atomic_fetch_add_explicit(&sd->irq_count, 1, memory_order_release);
	atomic_fetch_add_explicit(&sd->stat_irqs, 1, memory_order_relaxed);
	pto_futex_wake(&sd->irq_count, INT_MAX);
}

static void sim_irq_wake(void *ctx)
{
	sim_raise(ctx);
}

/* pto2_device.assist: one fn at a time; clearing waits for its callers. */
static int sim_assist(void *ctx, pto2_assist_fn fn, void *arg)
{
	struct sim_device *sd = ctx;
	int ret = 0;

	pthread_mutex_lock(&sd->assist_lock);
	if (fn && sd->assist_off) {
		ret = -EOPNOTSUPP;
	} else if (fn && atomic_load(&sd->assist_fn)) {
		ret = -EBUSY;
	} else if (fn) {
		sd->assist_arg = arg;
		atomic_store_explicit(&sd->assist_fn, fn, memory_order_release);
	} else if (atomic_load(&sd->assist_fn) && sd->assist_arg == arg) {
		atomic_store(&sd->assist_fn, NULL);
		while (atomic_load(&sd->assisting))
			sched_yield();
		sd->assist_arg = NULL;
	}
	pthread_mutex_unlock(&sd->assist_lock);
	return ret;
}

/* ---- Executor ops (core side) ------------------------------------------- */

static int sim_exec_kernel(struct pto_exec *ex, const PTO2DispatchPayload *p,
			   uint32_t core, pto_kernel_entry_fn *fn, void **ref)
{
	struct sim_device *sd = ex->priv;

	(void)core;
	(void)ref;	/* registered kernels stay: nothing to put */
	if (p->kernel_id < 0 || p->kernel_id >= SIM_MAX_KERNELS ||
	    !sd->kernels[p->kernel_id])
		return -ENOSYS;
	*fn = sd->kernels[p->kernel_id];
	return 0;
}

/* Take a latched kick of a core of @mask: its index, or -1. */
static int sim_take_kick(struct sim_device *sd, const uint64_t *mask)
{
	uint32_t w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t k = atomic_load_explicit(&sd->kicked[w],
						  memory_order_acquire) & mask[w];

		while (k) {
			uint64_t bit = k & -k;

			if (atomic_fetch_and(&sd->kicked[w], ~bit) & bit)
				return (int)(w * 64 + __builtin_ctzll(bit));
			k &= ~bit;
		}
	}
	return -1;
}

static int sim_exec_park_any(struct pto_exec *ex, const uint64_t *mask,
			     int64_t deadline_ns, uint32_t *core)
{
	struct sim_device *sd = ex->priv;

	for (;;) {
		uint32_t seq = pto_parklot_seq(&sd->kick);
		int c = sim_take_kick(sd, mask), ret;

		if (c >= 0) {
			reg_store_relaxed(&core_regs(sd, (uint32_t)c)->parked, 0);
			*core = (uint32_t)c;
			return 0;
		}
		if (deadline_ns && pto_mono_ns() >= deadline_ns)
			return -ETIMEDOUT;
		ret = pto_parklot_wait(&sd->kick, seq, deadline_ns, false);
		if (ret && ret != -EAGAIN && ret != -ETIMEDOUT)
			return ret;
	}
}

static void sim_exec_raise_irq(struct pto_exec *ex, uint32_t core)
{
	struct sim_device *sd = ex->priv;

	(void)core;
	atomic_fetch_add_explicit(&sd->stat_core_irqs, 1, memory_order_relaxed);
	sim_raise(sd);
}

/* pto2_device.run_cores: the executor's cores on the caller's thread */
static int sim_run_cores(void *ctx, uint32_t first, bool (*stop)(void *arg),
			 void *arg)
{
	struct sim_device *sd = ctx;

	return pto_exec_pool_help(sd->pool, first, stop, arg);
}

/* The scheduler's pass on this thread, if one is set (sim_assist()). */
static bool sim_exec_task_done(struct pto_exec *ex, uint32_t core,
			       uint32_t *next)
{
	struct sim_device *sd = ex->priv;
	pto2_assist_fn fn;
	bool done = false;

	if (sd->assist_off)
		return false;	/* nothing is ever set: no shared counter */
	atomic_fetch_add(&sd->assisting, 1);
	fn = atomic_load(&sd->assist_fn);
	if (fn)
		done = fn(sd->assist_arg, core, next);
	atomic_fetch_sub_explicit(&sd->assisting, 1, memory_order_release);
	return done;
}

static const struct pto_exec_ops sim_exec_ops = {
	.kernel = sim_exec_kernel,
	.park_any = sim_exec_park_any,
	.raise_irq = sim_exec_raise_irq,
	.task_done = sim_exec_task_done,
	/* in-process: the scheduler threads a spinning core holds up are ours */
	.spin_yield = PTO_EXEC_YIELD_AUTO,
};

/* ---- Create / destroy ------------------------------------------------------ */

/* The info page, as pto.ko fills it for an a2a3 device with an AICPU. */
static void init_regs(struct sim_device *sd, uint64_t gm_size)
{
	struct pto_regs_info *ri = pto_regs_info(sd->regs);
	uint32_t i;

	memset(sd->regs, 0, PTO_REGS_SIZE);
	ri->magic = PTO_REGS_MAGIC;
	ri->abi_version = PTO_ABI_VERSION;
	ri->profile = PTO_PROFILE_A2A3;
	ri->nr_aic = sd->nr_aic;
	ri->nr_aiv = sd->nr_aiv;
	ri->nr_cores = sd->nr_cores;
	ri->gm_size = gm_size;
	ri->gm_dev_base = PTO_GM_DEV_BASE;
	ri->caps = PTO_CAPS_A2A3;
	ri->sys_cnt_freq = PTO_SYS_CNT_FREQ;
	ri->sys_cnt_epoch_ns = pto_mono_ns();
	ri->aicpu_attached = 1;
	for (i = 0; i < sd->nr_cores; i++) {
		core_regs(sd, i)->cond = PTO_COND_IDLE;
		core_regs(sd, i)->state = PTO_CORE_ONLINE;
	}
}

/* SIM_ASSIST_ENV into @sd->assist_off; -EINVAL, said, if neither 0 nor 1. */
static int assist_env(struct sim_device *sd)
{
	bool on;

	if (!pto_env_bool(SIM_ASSIST_ENV, true, &on)) {
		sd->assist_off = !on;
		return 0;
	}
	fprintf(stderr, "sim device: %s=%s: not 0 or 1\n", SIM_ASSIST_ENV,
		getenv(SIM_ASSIST_ENV));
	return -EINVAL;
}

int sim_device_create(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
		      struct sim_device **out)
{
	return sim_device_create_pool(nr_aic, nr_aiv, gm_size, NULL, out);
}

/* The executor's threads, serving every core. */
static int start_cores(struct sim_device *sd,
		       const struct pto_exec_pool_config *cfg)
{
	struct pto_exec_pool_config pc = { .name = "simcore" };
	uint32_t i;

	if (cfg)
		pc = *cfg;
	memset(pc.cores, 0, sizeof(pc.cores));
	for (i = 0; i < sd->nr_cores; i++)
		pc.cores[i / 64] |= 1ULL << (i % 64);
	return pto_exec_pool_start(&sd->exec, &pc, &sd->pool);
}

int sim_device_create_pool(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
			   const struct pto_exec_pool_config *pool,
			   struct sim_device **out)
{
	struct sim_device *sd;
	void *gm = NULL;
	int ret;

	*out = NULL;
	if (nr_aic + nr_aiv == 0 || nr_aic + nr_aiv > PTO_MAX_CORES || !gm_size)
		return -EINVAL;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	sd->nr_aic = nr_aic;
	sd->nr_aiv = nr_aiv;
	sd->nr_cores = nr_aic + nr_aiv;
	pthread_mutex_init(&sd->assist_lock, NULL);
	ret = assist_env(sd);
	if (ret)
		goto fail;
	gm_size = PTO_ALIGN_UP(gm_size, 4096);
	if (posix_memalign(&sd->regs, 4096, PTO_REGS_SIZE)) {
		sd->regs = NULL;
		ret = -ENOMEM;
		goto fail;
	}
	init_regs(sd, gm_size);
	pto_exec_init(&sd->exec, sd->regs, &sim_exec_ops, sd);
	if (posix_memalign(&gm, 4096, gm_size)) {
		ret = -ENOMEM;
		goto fail;
	}
	memset(gm, 0, gm_size);
	sd->exec.gm.host = gm;
	sd->exec.gm.dev_base = PTO_GM_DEV_BASE;
	sd->exec.gm.size = gm_size;
	sd->dev.regs = sd->regs;
	sd->dev.nr_aic = nr_aic;
	sd->dev.nr_aiv = nr_aiv;
	sd->dev.ctx = sd;
	sd->dev.kick = sim_kick;
	sd->dev.irq_count = sim_irq_count;
	sd->dev.irq_wait = sim_irq_wait;
	sd->dev.irq_wake = sim_irq_wake;
	sd->dev.assist = sim_assist;
	sd->dev.run_cores = sim_run_cores;
	ret = start_cores(sd, pool);
	if (ret)
		goto fail;
	*out = sd;
	return 0;
fail:
	sim_device_destroy(sd);
	return ret;
}

void sim_device_destroy(struct sim_device *sd)
{
	uint32_t i;

	if (!sd)
		return;
	if (sd->pool) {
		for (i = 0; i < sd->nr_cores; i++) {
			reg_store_release(&core_regs(sd, i)->data_main_base,
					  PTO_DMB_EXIT);
			sim_kick(sd, i);
		}
		/* every sleeper, not one per kick: they may outnumber cores */
		pto_parklot_wake_all(&sd->kick, false);
		pto_exec_pool_join(sd->pool);
	}
	free(sd->exec.gm.host);
	free(sd->regs);
	pthread_mutex_destroy(&sd->assist_lock);
	free(sd);
}

int sim_device_set_kernel(struct sim_device *sd, int32_t kernel_id,
			  pto_kernel_entry_fn fn)
{
	if (kernel_id < 0 || kernel_id >= SIM_MAX_KERNELS)
		return -EINVAL;
	sd->kernels[kernel_id] = fn;
	return 0;
}

uint64_t sim_gm_alloc(struct sim_gm_arena *a, uint64_t size, uint64_t align)
{
	uint64_t off;

	if (align < 64)
		align = 64;
	off = PTO_ALIGN_UP(a->off, align);
	if (off + size > a->sd->exec.gm.size)
		return 0;
	a->off = off + size;
	return a->sd->exec.gm.dev_base + off;
}
