// SPDX-License-Identifier: MIT
/*
 * sim_device.c - in-process simulated device (see sim_device.h)
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pto2_util.h"
#include "sim_device.h"

struct sim_core {
	struct sim_device *sd;
	uint32_t id;
	pthread_t thread;
	int live;
};

static long futex_wait(void *addr, uint32_t val, const struct timespec *rel)
{
	return syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, rel, NULL, 0);
}

static long futex_wake(void *addr, int n)
{
	return syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ---- Device ops (AICPU side) -------------------------------------------- */

static int sim_kick(void *ctx, uint32_t core)
{
	struct sim_device *sd = ctx;

	if (core >= sd->nr_cores)
		return -EINVAL;
	atomic_fetch_add_explicit(&sd->stat_kicks, 1, memory_order_relaxed);
	sd->regs[core].kick_count++;
	futex_wake(&sd->regs[core].data_main_base, 1);
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
			uint64_t now = pto2_now_ns();

			if (now >= (uint64_t)deadline_ns) {
				*count = c;
				return -ETIMEDOUT;
			}
			rel.tv_sec = (time_t)(((uint64_t)deadline_ns - now) /
					      1000000000ULL);
			rel.tv_nsec = (long)(((uint64_t)deadline_ns - now) %
					     1000000000ULL);
			prel = &rel;
		}
		futex_wait(&sd->irq_count, *count, prel);
	}
	*count = c;
	return 0;
}

static void sim_raise_irq(struct sim_device *sd)
{
	atomic_fetch_add_explicit(&sd->irq_count, 1, memory_order_release);
	atomic_fetch_add_explicit(&sd->stat_irqs, 1, memory_order_relaxed);
	futex_wake(&sd->irq_count, INT_MAX);
}

static void sim_irq_wake(void *ctx)
{
	sim_raise_irq(ctx);
}

static int sim_bind(void *ctx, void *sm, uint64_t sm_dev_addr)
{
	struct sim_device *sd = ctx;

	(void)sm_dev_addr;
	atomic_store_explicit(&sd->sm, (uint8_t *)sm, memory_order_release);
	return 0;
}

/* ---- Cores ------------------------------------------------------------------ */

static void run_task(struct sim_device *sd, uint32_t core, uint32_t task_id)
{
	struct pto_core_regs *r = &sd->regs[core];
	uint8_t *sm = atomic_load_explicit(&sd->sm, memory_order_acquire);
	const PTO2SharedMemoryHeader *h = (const PTO2SharedMemoryHeader *)sm;
	PTO2DispatchPayload *p;
	uint64_t args[PTO2_MAX_TASK_PARAMS];
	struct pto_kernel_ctx kc;
	pto_kernel_entry_fn fn = NULL;
	uint32_t i, n;
	int ret = 0;

	reg_store_release(&r->cond, PTO_COND_ACK(task_id));
	r->ts_start = pto2_now_ns() / 20;
	if (!sm) {
		ret = -ENODEV;
		goto out_nopayload;
	}
	p = (PTO2DispatchPayload *)(void *)(sm + h->payload_offset +
					    (size_t)core * h->payload_stride);
	n = p->num_args;
	if ((uint32_t)p->task_id != task_id || n > PTO2_MAX_TASK_PARAMS) {
		ret = -EPROTO;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (p->tensor_mask & (1U << i)) {
			void *hp = sim_dev_to_host(sd, p->args[i]);

			if (!hp) {
				ret = -EFAULT;
				goto out;
			}
			args[i] = (uint64_t)(uintptr_t)hp;
		} else {
			args[i] = p->args[i];
		}
	}
	if (p->kernel_id >= 0 && p->kernel_id < SIM_MAX_KERNELS)
		fn = sd->kernels[p->kernel_id];
	if (!fn) {
		ret = -ENOSYS;
		goto out;
	}
	memset(&kc, 0, sizeof(kc));
	if (core < sd->nr_aic) {
		kc.block_idx = core;
		kc.sub_block_idx = 0;
		kc.sub_block_num = 1;
	} else {
		kc.block_idx = (core - sd->nr_aic) / 2;
		kc.sub_block_idx = (core - sd->nr_aic) % 2;
		kc.sub_block_num = 2;
	}
	kc.block_num = sd->nr_aic ? sd->nr_aic : (sd->nr_aiv + 1) / 2;
	kc.core_id = core;
	kc.task_id = task_id;
	kc.kernel_id = p->kernel_id;
	ret = fn(&kc, args, n);
out:
	p->status = ret;
out_nopayload:
	r->ts_end = pto2_now_ns() / 20;
	atomic_fetch_add_explicit(&sd->stat_tasks, 1, memory_order_relaxed);
	reg_store_release(&r->cond, PTO_COND_DONE(task_id));
	atomic_thread_fence(memory_order_seq_cst);
	if (reg_load_relaxed(&r->irq_en))
		sim_raise_irq(sd);
}

static void *core_main(void *arg)
{
	struct sim_core *c = arg;
	struct sim_device *sd = c->sd;
	struct pto_core_regs *r = &sd->regs[c->id];
	uint32_t last = PTO_DMB_IDLE, spins = 0;
	uint64_t t0 = 0;

	reg_store_release(&r->cond, PTO_COND_IDLE);
	for (;;) {
		uint32_t dmb = reg_load_acquire(&r->data_main_base);

		if (dmb == last) {
			struct timespec rel = { 0, 100000000L };

			if (!spins)
				t0 = pto2_now_ns();
			if (++spins < sd->spin_before_park &&
			    (!sd->spin_ns || (spins & 15) ||
			     pto2_now_ns() - t0 < sd->spin_ns)) {
				cpu_relax();
				continue;
			}
			/* park: flag, fence, recheck, sleep (CORE_WAIT) */
			reg_store_relaxed(&r->parked, 1);
			atomic_thread_fence(memory_order_seq_cst);
			if (reg_load_acquire(&r->data_main_base) == last) {
				r->park_count++;
				atomic_fetch_add_explicit(&sd->stat_parks, 1,
							  memory_order_relaxed);
				futex_wait(&r->data_main_base, last, &rel);
			}
			reg_store_relaxed(&r->parked, 0);
			spins = 0;
			continue;
		}
		spins = 0;
		last = dmb;
		if (dmb == PTO_DMB_EXIT)
			break;
		run_task(sd, c->id, dmb - 1);
	}
	return NULL;
}

int sim_device_create(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
		      struct sim_device **out)
{
	struct sim_device *sd;
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
	sd->gm_size = PTO2_ALIGN_UP(gm_size, 4096);
	sd->gm_dev_base = PTO_GM_DEV_BASE;
	sd->spin_before_park = 2000;
	sd->spin_ns = 4000;
	if (posix_memalign((void **)&sd->regs, 64,
			   sizeof(*sd->regs) * sd->nr_cores) ||
	    posix_memalign((void **)&sd->gm, 4096, sd->gm_size)) {
		ret = -ENOMEM;
		goto fail;
	}
	memset(sd->regs, 0, sizeof(*sd->regs) * sd->nr_cores);
	memset(sd->gm, 0, sd->gm_size);
	for (i = 0; i < sd->nr_cores; i++) {
		sd->regs[i].cond = PTO_COND_IDLE;
		sd->regs[i].state = PTO_CORE_ONLINE;
	}
	sd->cores = calloc(sd->nr_cores, sizeof(*sd->cores));
	if (!sd->cores) {
		ret = -ENOMEM;
		goto fail;
	}
	sd->dev.cores = sd->regs;
	sd->dev.nr_aic = nr_aic;
	sd->dev.nr_aiv = nr_aiv;
	sd->dev.ctx = sd;
	sd->dev.kick = sim_kick;
	sd->dev.irq_count = sim_irq_count;
	sd->dev.irq_wait = sim_irq_wait;
	sd->dev.irq_wake = sim_irq_wake;
	sd->dev.bind = sim_bind;
	for (i = 0; i < sd->nr_cores; i++) {
		sd->cores[i].sd = sd;
		sd->cores[i].id = i;
		ret = -pthread_create(&sd->cores[i].thread, NULL, core_main,
				      &sd->cores[i]);
		if (ret)
			goto fail;
		sd->cores[i].live = 1;
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
		reg_store_release(&sd->regs[i].data_main_base, PTO_DMB_EXIT);
		futex_wake(&sd->regs[i].data_main_base, 1);
	}
	for (i = 0; sd->cores && i < sd->nr_cores; i++)
		if (sd->cores[i].live)
			pthread_join(sd->cores[i].thread, NULL);
	free(sd->cores);
	free(sd->regs);
	free(sd->gm);
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
	off = PTO2_ALIGN_UP(a->off, align);
	if (off + size > a->sd->gm_size)
		return 0;
	a->off = off + size;
	return a->sd->gm_dev_base + off;
}
