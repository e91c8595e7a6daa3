// SPDX-License-Identifier: MIT
/*
 * pto_exec.c - the executor core (see pto_exec.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>
#include <pto-private/usdt.h>

#include "pto_exec.h"

PTO_USDT_DEFINE(pto_aicore, task_start);
PTO_USDT_DEFINE(pto_aicore, task_end);

void pto_exec_log(struct pto_exec *ex, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ex->ops->log)
		ex->ops->log(ex, buf);
	else
		fprintf(stderr, "pto-exec: %s\n", buf);
}

int pto_exec_spin_yield_env(uint8_t *mode)
{
	const char *v = getenv(PTO_EXEC_SPIN_YIELD_ENV);

	if (!v)
		return 0;
	if (!strcmp(v, "auto")) {
		*mode = PTO_EXEC_YIELD_AUTO;
		return 0;
	}
	if (!strcmp(v, "0") || !strcmp(v, "1")) {
		*mode = v[0] == '1' ? PTO_EXEC_YIELD_ALWAYS :
				      PTO_EXEC_YIELD_NEVER;
		return 0;
	}
	return -EINVAL;
}

const char *pto_exec_spin_yield_name(uint8_t mode)
{
	switch (mode) {
	case PTO_EXEC_YIELD_NEVER: return "never";
	case PTO_EXEC_YIELD_AUTO: return "auto";
	case PTO_EXEC_YIELD_ALWAYS: return "always";
	default: return "?";
	}
}

void pto_exec_init(struct pto_exec *ex, void *regs,
		   const struct pto_exec_ops *ops, void *priv)
{
	const struct pto_regs_info *ri = pto_regs_info(regs);

	memset(ex, 0, sizeof(*ex));
	ex->regs = regs;
	ex->nr_aic = ri->nr_aic;
	ex->nr_aiv = ri->nr_aiv;
	ex->profile = ri->profile;
	ex->caps = ri->caps;
	ex->spins = PTO_EXEC_SPINS;
	ex->spin_ns = PTO_EXEC_SPIN_NS;
	/* the backend's default; an invalid value keeps it (pto-aicore
	 * refuses it) */
	ex->spin_yield = ops->spin_yield;
	pto_exec_spin_yield_env(&ex->spin_yield);
	ex->ops = ops;
	ex->priv = priv;
	atomic_init(&ex->tasks, 0);
	atomic_init(&ex->parks, 0);
}

/*
 * Where a task on @core runs: the block and thread of its launch (the
 * payload), the AIV threads of the block being its sub-blocks, and the
 * device's profile.
 */
static void kernel_ctx(const struct pto_exec *ex, uint32_t core,
		       const PTO2DispatchPayload *p, struct pto_kernel_ctx *kc)
{
	bool aiv = core >= ex->nr_aic;

	memset(kc, 0, sizeof(*kc));
	kc->block_idx = p->block_idx;
	kc->block_num = p->block_num ? p->block_num : 1;
	kc->thread_idx = p->thread_idx;
	kc->thread_num = p->thread_num ? p->thread_num : 1;
	if (aiv && kc->thread_num >= PTO_AIV_PER_AIC) {
		kc->sub_block_idx = kc->thread_idx % PTO_AIV_PER_AIC;
		kc->sub_block_num = PTO_AIV_PER_AIC;
	} else {
		kc->sub_block_idx = 0;
		kc->sub_block_num = 1;
	}
	kc->core_id = core;
	kc->task_id = (uint32_t)p->task_id;
	kc->kernel_id = p->kernel_id;
	kc->profile = ex->profile;
	kc->caps = ex->caps;
}

bool pto_exec_irq_wanted(const struct pto_exec *ex, uint32_t core)
{
	return reg_load_relaxed(&pto_regs_core(ex->regs, core)->irq_en) ||
	       reg_load_relaxed(&pto_regs_info(ex->regs)->aicpu_irq_en);
}

void pto_exec_pre_complete(struct pto_exec *ex, uint32_t core)
{
	_Atomic uint64_t *bell =
		PTO_REG64(pto_regs_hws(ex->regs)->sip_report_pre_complete);

	atomic_fetch_or_explicit(&bell[core / 64], 1ULL << (core % 64),
				 memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (pto_exec_irq_wanted(ex, core))
		ex->ops->raise_irq(ex, core);
}

/* A kernel's context, with what its pre-complete report needs. */
struct exec_kctx {
	struct pto_kernel_ctx kc;
	struct pto_exec *ex;
	uint32_t core;
	bool reported;
};

/*
 * The kernel this thread is running (NULL between kernels): what a
 * kernel's pre-complete report, which carries only its ctx, reports for.
 * Thread-local because each executor thread runs one kernel at a time.
 */
static _Thread_local struct exec_kctx *exec_running;

/*
 * pto_kernel_pre_complete() of pto/pto_kernel.h: exported by every program
 * that runs kernels (PTOEXEC_LDFLAGS), found by the kernel's weak
 * reference when it is loaded. Only the running kernel's own ctx counts,
 * once.
 */
__attribute__((visibility("default")))
void pto_kernel_report_pre_complete(const struct pto_kernel_ctx *kc)
{
	struct exec_kctx *k = exec_running;

	if (!k || kc != &k->kc || k->reported)
		return;
	k->reported = true;
	if (k->ex->ops->pre_complete)
		k->ex->ops->pre_complete(k->ex, k->core);
	else
		pto_exec_pre_complete(k->ex, k->core);
}

/* The kernel's arguments: tensor device addresses become host pointers. */
static int decode_args(struct pto_exec *ex, const PTO2DispatchPayload *p,
		       uint64_t *args)
{
	uint32_t i, n = p->num_args;

	if (p->task_id < 0 || n > PTO2_MAX_TASK_PARAMS)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		void *hp;

		if (!(p->tensor_mask & (1U << i))) {
			args[i] = p->args[i];
			continue;
		}
		hp = pto_gm_ptr(&ex->gm, p->args[i], 1);
		if (!hp)
			return -EFAULT;
		args[i] = (uint64_t)(uintptr_t)hp;
	}
	return 0;
}

int pto_exec_run_payload(struct pto_exec *ex, uint32_t core,
			 const PTO2DispatchPayload *p)
{
	uint64_t args[PTO2_MAX_TASK_PARAMS];
	struct exec_kctx k = { .ex = ex, .core = core };
	pto_kernel_entry_fn fn = NULL;
	void *ref = NULL;
	int ret;

	ret = decode_args(ex, p, args);
	if (ret)
		return ret;
	ret = ex->ops->kernel(ex, p, core, &fn, &ref);
	if (ret)
		return ret;
	kernel_ctx(ex, core, p, &k.kc);
	PTO_PROBE3(pto_aicore, task_start, core, p->task_id, p->kernel_id);
	exec_running = &k;
	ret = fn(&k.kc, args, p->num_args);
	exec_running = NULL;
	if (ex->ops->kernel_put)
		ex->ops->kernel_put(ex, ref);
	return ret > 0 ? -EIO : ret;
}

uint32_t pto_exec_run_task(struct pto_exec *ex, uint32_t core, uint32_t id)
{
	struct pto_regs_info *ri = pto_regs_info(ex->regs);
	struct pto_core_regs *r = pto_regs_core(ex->regs, core);
	uint32_t next = UINT32_MAX;
	uint64_t task;
	PTO2DispatchPayload *p;

	reg_store_release(&r->cond, PTO_COND_ACK(id));
	reg64_store_relaxed(&r->ts_start, pto_sys_cnt(ri));
	task = reg64_load_acquire(&r->task);
	p = pto_gm_ptr(&ex->gm, task, sizeof(*p));
	if (p) {
		if (!p->exec_ctx)
			p->status = pto_exec_run_payload(ex, core, p);
		else if (ex->ops->hand_off)
			p->status = ex->ops->hand_off(ex, core, p);
		else
			p->status = -EOWNERDEAD;
		PTO_PROBE3(pto_aicore, task_end, core, p->task_id, p->status);
	} else {
		pto_exec_log(ex, "core %u: dispatch %u: no payload (task register 0x%" PRIx64 ")",
			 core, id, task);
	}
	reg64_store_relaxed(&r->ts_end, pto_sys_cnt(ri));
	atomic_fetch_add_explicit(&ex->tasks, 1, memory_order_relaxed);
	reg_store_release(&r->cond, PTO_COND_DONE(id));
	atomic_thread_fence(memory_order_seq_cst);
	if (ex->ops->task_done && ex->ops->task_done(ex, core, &next))
		return next;
	if (pto_exec_irq_wanted(ex, core))
		ex->ops->raise_irq(ex, core);
	return next;
}
