// SPDX-License-Identifier: MIT
/*
 * sim_device.c - in-process simulated device (see sim_device.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "sim_device.h"

/* A parked core looks at DATA_MAIN_BASE again after this long anyway. */
#define SIM_PARK_TIMEOUT_NS	100000000ULL

struct sim_core {
	struct sim_device *sd;
	uint32_t id;
	pthread_t thread;
	bool live;
};

static long futex_wait(void *addr, uint32_t val, const struct timespec *rel)
{
	return syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, rel, NULL, 0);
}

static long futex_wake(void *addr, int n)
{
	return syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

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
	futex_wake(&r->data_main_base, 1);
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
		futex_wait(&sd->irq_count, *count, prel);
	}
	*count = c;
	return 0;
}

static void sim_raise(struct sim_device *sd)
{
	atomic_fetch_add_explicit(&sd->irq_count, 1, memory_order_release);
	atomic_fetch_add_explicit(&sd->stat_irqs, 1, memory_order_relaxed);
	futex_wake(&sd->irq_count, INT_MAX);
}

static void sim_irq_wake(void *ctx)
{
	sim_raise(ctx);
}

/* ---- Executor ops (core side) ------------------------------------------- */

static int sim_exec_kernel(struct pto_exec *ex, const PTO2DispatchPayload *p,
			   uint32_t core, pto_kernel_entry_fn *fn)
{
	struct sim_device *sd = ex->priv;

	(void)core;
	if (p->kernel_id < 0 || p->kernel_id >= SIM_MAX_KERNELS ||
	    !sd->kernels[p->kernel_id])
		return -ENOSYS;
	*fn = sd->kernels[p->kernel_id];
	return 0;
}

static int sim_exec_park(struct pto_exec *ex, uint32_t core, uint32_t last)
{
	struct sim_device *sd = ex->priv;
	struct pto_core_regs *r = core_regs(sd, core);
	struct timespec rel = pto_ns_to_timespec(SIM_PARK_TIMEOUT_NS);

	atomic_fetch_add_explicit(PTO_REG32(&r->park_count), 1,
				  memory_order_relaxed);
	if (futex_wait(&r->data_main_base, last, &rel) && errno != EAGAIN)
		return -errno;
	return 0;
}

static void sim_exec_raise_irq(struct pto_exec *ex, uint32_t core)
{
	(void)core;
	sim_raise(ex->priv);
}

static const struct pto_exec_ops sim_exec_ops = {
	.kernel = sim_exec_kernel,
	.park = sim_exec_park,
	.raise_irq = sim_exec_raise_irq,
};

static void *core_main(void *arg)
{
	struct sim_core *c = arg;

	pto_exec_core_loop(&c->sd->exec, c->id);
	return NULL;
}

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

int sim_device_create(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
		      struct sim_device **out)
{
	struct sim_device *sd;
	void *gm = NULL;
	uint32_t i;
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
	sd->cores = calloc(sd->nr_cores, sizeof(*sd->cores));
	if (!sd->cores) {
		ret = -ENOMEM;
		goto fail;
	}
	sd->dev.regs = sd->regs;
	sd->dev.nr_aic = nr_aic;
	sd->dev.nr_aiv = nr_aiv;
	sd->dev.ctx = sd;
	sd->dev.kick = sim_kick;
	sd->dev.irq_count = sim_irq_count;
	sd->dev.irq_wait = sim_irq_wait;
	sd->dev.irq_wake = sim_irq_wake;
	for (i = 0; i < sd->nr_cores; i++) {
		sd->cores[i].sd = sd;
		sd->cores[i].id = i;
		ret = -pthread_create(&sd->cores[i].thread, NULL, core_main,
				      &sd->cores[i]);
		if (ret)
			goto fail;
		sd->cores[i].live = true;
	}
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
	for (i = 0; sd->cores && i < sd->nr_cores; i++) {
		if (!sd->cores[i].live)
			continue;
		reg_store_release(&core_regs(sd, i)->data_main_base,
				  PTO_DMB_EXIT);
		futex_wake(&core_regs(sd, i)->data_main_base, 1);
	}
	for (i = 0; sd->cores && i < sd->nr_cores; i++)
		if (sd->cores[i].live)
			pthread_join(sd->cores[i].thread, NULL);
	free(sd->cores);
	free(sd->exec.gm.host);
	free(sd->regs);
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
