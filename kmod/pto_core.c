// SPDX-License-Identifier: GPL-2.0
/*
 * Roles, the register file, core attach / detach, park
 * (CORE_WAIT) and kick, the AICPU interrupt, HWS configuration.
 *
 * Notification protocol (virtio-style suppression, Documentation/kmod.rst):
 *
 *   core:  parked = 1; smp_mb(); if (DATA_MAIN_BASE == last) CORE_WAIT
 *   AICPU: DATA_MAIN_BASE = id + 1; smp_mb(); if (parked) KICK
 *
 * CORE_WAIT rechecks DATA_MAIN_BASE after queueing itself, and a kick is
 * latched in pto_core.kick_pending until a CORE_WAIT consumes it, so no
 * wakeup is lost whichever side runs first.
 */
#include <linux/capability.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/wait.h>

#include <pto-private/hws_rules.h>

#include "pto_dev.h"
#include "pto_trace.h"

/* Internal CORE_WAIT outcome: the core is no longer this file's. */
#define PTO_WAKE_GONE		0x100
/* Internal CORE_WAIT_ANY outcome: a parked flag of the set is clear. */
#define PTO_WAKE_UNPARKED	0x200

/* ------------------------------------------------------------------------
 * Register file
 * ------------------------------------------------------------------------
 */
/* At load, before the device is registered. */
void pto_regs_init(struct pto_dev *pdev)
{
	struct pto_regs_info *info = pdev->info;
	u32 i;

	info->magic = PTO_REGS_MAGIC;
	info->abi_version = PTO_ABI_VERSION;
	info->profile = pdev->profile;
	info->nr_aic = pdev->nr_aic;
	info->nr_aiv = pdev->nr_aiv;
	info->nr_cores = pdev->nr_cores;
	info->dev_index = pdev->index;
	info->gm_size = pdev->gm_size;
	info->gm_dev_base = PTO_GM_DEV_BASE;
	info->caps = pdev->caps;
	info->sys_cnt_freq = PTO_SYS_CNT_FREQ;
	info->sys_cnt_epoch_ns = pdev->epoch_ns;

	pto_hws_cfg_default(&pdev->hws->cfg, pdev->nr_cores);

	for (i = 0; i < pdev->nr_cores; i++) {
		struct pto_core_regs *regs = pdev->cores[i].regs;

		regs->data_main_base = PTO_DMB_IDLE;
		regs->cond = PTO_COND_IDLE;
		regs->state = PTO_CORE_OFFLINE;
	}
}

/**
 * pto_touch_sys_cnt() - store the system counter into the info page.
 * @pdev: the device.
 *
 * The counter runs at PTO_SYS_CNT_FREQ from @pdev->epoch_ns. Callers on
 * every CPU race to store it; only a value later than the kernel's own
 * last one is stored, so that the copy never goes back. The info page is
 * never read: the AICPU maps it writable, and a value it wrote there is
 * overwritten by the next touch.
 */
static void pto_touch_sys_cnt(struct pto_dev *pdev)
{
	u64 ns = ktime_get_ns() - pdev->epoch_ns;
	u64 now = div_u64(ns, NSEC_PER_SEC / PTO_SYS_CNT_FREQ);

	spin_lock(&pdev->sys_cnt_lock);
	if (now > pdev->sys_cnt)
		pdev->sys_cnt = now;
	WRITE_ONCE(pdev->info->sys_cnt, pdev->sys_cnt);
	spin_unlock(&pdev->sys_cnt_lock);
}

/* ------------------------------------------------------------------------
 * Roles
 * ------------------------------------------------------------------------
 */
int pto_set_role(struct pto_ucmd *ucmd)
{
	struct pto_set_role *arg = &ucmd->cmd.set_role;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	int ret = 0;

	if (arg->flags || arg->pad)
		return -EINVAL;
	if (arg->role < PTO_ROLE_CLIENT || arg->role > PTO_ROLE_EXECUTOR)
		return -EINVAL;
	/* a file opened read-only reads the device, and nothing more */
	if (!pf->writable)
		return -EBADF;
	/* the roles that reach every client's memory and the cores */
	if (arg->role != PTO_ROLE_CLIENT && !pto_file_admin(pf)) {
		dev_dbg(pdev->misc.this_device,
			"role %u refused without CAP_SYS_ADMIN (pid %d%s)\n",
			arg->role, task_tgid_nr(current),
			pf->opener_admin ? "" : ", opener");
		return -EPERM;
	}

	mutex_lock(&pdev->lock);
	if (pf->role != PTO_ROLE_NONE) {
		ret = -EBUSY;
	} else if (arg->role == PTO_ROLE_AICPU && pdev->aicpu) {
		ret = -EBUSY;
	} else {
		if (arg->role == PTO_ROLE_AICPU) {
			/* its first GM_QUOTA SET replaces the quotas in force */
			pf->aicpu_gen = ++pdev->aicpu_gen;
			pdev->aicpu = pf;
			pf->irq_seen = atomic_read(&pdev->irq_count);
			WRITE_ONCE(pdev->info->aicpu_attached, 1);
		}
		/* Publishes the setup above; see pto_file_role(). */
		smp_store_release(&pf->role, arg->role);
	}
	mutex_unlock(&pdev->lock);
	return ret;
}

/*
 * Give @core to @pf (attach, again or anew) or to nobody (NULL: detach,
 * release), its parked flag cleared: an executor sets it again before it
 * sleeps, and nobody parks on a core without an owner. pdev->lock held.
 */
static void pto_core_set_owner(struct pto_core *core, struct pto_file *pf)
{
	lockdep_assert_held(&core->pdev->lock);
	spin_lock(&core->lock);
	WRITE_ONCE(core->regs->parked, 0);
	WRITE_ONCE(core->owner, pf);
	spin_unlock(&core->lock);
}

/*
 * Clear @core's parked flag for @pf, a thread of which is back from a
 * wait: not if the core went to another file meanwhile, whose flag it
 * is not ours to clear.
 */
static void pto_core_unpark(struct pto_core *core, struct pto_file *pf)
{
	spin_lock(&core->lock);
	if (core->owner == pf)
		WRITE_ONCE(core->regs->parked, 0);
	spin_unlock(&core->lock);
}

/* Every thread sleeping for core @i: in CORE_WAIT, or CORE_WAIT_ANY. */
static void pto_core_wake_all(struct pto_dev *pdev, u32 i)
{
	wake_up_all(&pdev->cores[i].wq);
	__wake_up(&pdev->any_wq, TASK_NORMAL, 0, (void *)(unsigned long)(i + 1));
}

/*
 * release(): an AICPU gives the role back (the GM quotas it set stay in
 * force until the next AICPU sets its own) and kicks every online core
 * so that parked executors look at aicpu_attached; an executor's cores
 * become DEAD, their waiters are woken and the AICPU gets an interrupt.
 */
void pto_release_roles(struct pto_file *pf)
{
	struct pto_dev *pdev = pf->pdev;
	DECLARE_BITMAP(dead, PTO_MAX_CORES);
	bool was_aicpu = false;
	u32 i;

	bitmap_zero(dead, PTO_MAX_CORES);

	mutex_lock(&pdev->lock);
	if (pdev->aicpu == pf) {
		was_aicpu = true;
		pdev->aicpu = NULL;
		pto_hws_unfinished(pdev);
		WRITE_ONCE(pdev->info->aicpu_irq_en, 0);
		WRITE_ONCE(pdev->info->aicpu_attached, 0);
		for (i = 0; i < pdev->nr_cores; i++) {
			struct pto_core *core = &pdev->cores[i];

			if (core->state != PTO_CORE_ONLINE)
				continue;
			atomic_set(&core->kick_pending, 1);
			pto_core_wake_all(pdev, i);
		}
	}
	for (i = 0; i < pdev->nr_cores; i++) {
		struct pto_core *core = &pdev->cores[i];

		if (core->owner != pf)
			continue;
		pto_core_set_owner(core, NULL);
		core->owner_pid = 0;
		WRITE_ONCE(core->state, PTO_CORE_DEAD);
		WRITE_ONCE(core->regs->state, PTO_CORE_DEAD);
		pto_core_wake_all(pdev, i);
		__set_bit(i, dead);
	}
	mutex_unlock(&pdev->lock);

	if (!bitmap_empty(dead, PTO_MAX_CORES)) {
		dev_dbg(pdev->misc.this_device,
			"executor pid %d closed with %u core(s) attached\n",
			pf->pid, bitmap_weight(dead, PTO_MAX_CORES));
		trace_pto_detach(pdev, dead, PTO_CORE_DEAD);
		pto_raise_irq(pdev, PTO_CORE_NONE);
		pto_nl_notify_cores(pdev, PTO_CMD_CORE_FAULT, dead, pf->pid);
	}
	if (pto_file_role(pf) == PTO_ROLE_EXECUTOR)
		pto_nl_notify_cores(pdev, PTO_CMD_EXEC_GONE, dead, pf->pid);
	if (was_aicpu)
		pto_nl_notify_aicpu_gone(pdev, pf->pid);
}

/* ------------------------------------------------------------------------
 * Cores
 * ------------------------------------------------------------------------
 */

/* Counts of the cores online and dead, and the AICPU, under pdev->lock. */
void pto_core_counts(struct pto_dev *pdev, struct pto_core_counts *n)
{
	u32 i;

	n->online = 0;
	n->dead = 0;
	mutex_lock(&pdev->lock);
	for (i = 0; i < pdev->nr_cores; i++) {
		if (pdev->cores[i].state == PTO_CORE_ONLINE)
			n->online++;
		else if (pdev->cores[i].state == PTO_CORE_DEAD)
			n->dead++;
	}
	n->aicpu = pdev->aicpu;
	mutex_unlock(&pdev->lock);
}

/*
 * A core mask: not empty, no bit at or beyond nr_cores (the rule the HWS
 * usage masks follow too, pto_core_mask_fits()).
 */
static int pto_mask_get(struct pto_dev *pdev, u32 flags, const __u64 *mask,
			unsigned long *bits)
{
	if (flags)
		return -EINVAL;
	if (!pto_core_mask_fits(mask, pdev->nr_cores))
		return -EINVAL;
	bitmap_from_arr64(bits, mask, PTO_MAX_CORES);
	if (bitmap_empty(bits, PTO_MAX_CORES))
		return -EINVAL;
	return 0;
}

int pto_core_attach(struct pto_ucmd *ucmd)
{
	struct pto_cores *arg = &ucmd->cmd.cores;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	DECLARE_BITMAP(bits, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	ret = pto_mask_get(pdev, arg->flags, arg->mask, bits);
	if (ret)
		return ret;

	mutex_lock(&pdev->lock);
	for_each_set_bit(i, bits, pdev->nr_cores) {
		struct pto_file *owner = pdev->cores[i].owner;

		if (owner && owner != pf) {
			ret = -EBUSY;
			goto out_unlock;
		}
	}
	for_each_set_bit(i, bits, pdev->nr_cores) {
		struct pto_core *core = &pdev->cores[i];
		struct pto_core_regs *regs = core->regs;

		atomic_set(&core->kick_pending, 0);
		clear_bit(i, (unsigned long *)pdev->hws->sip_launch_pending);
		WRITE_ONCE(regs->data_main_base, PTO_DMB_IDLE);
		WRITE_ONCE(regs->cond, PTO_COND_IDLE);
		WRITE_ONCE(regs->task, 0);
		/* Registers first, then the state that publishes them. */
		smp_wmb();
		WRITE_ONCE(regs->state, PTO_CORE_ONLINE);
		core->owner_pid = pf->pid;
		WRITE_ONCE(core->state, PTO_CORE_ONLINE);
		pto_core_set_owner(core, pf);
	}
	trace_pto_attach(pdev, bits, PTO_CORE_ONLINE);
out_unlock:
	mutex_unlock(&pdev->lock);
	if (!ret)
		pto_nl_notify_cores(pdev, PTO_CMD_EXEC_ATTACH, bits, pf->pid);
	return ret;
}

int pto_core_detach(struct pto_ucmd *ucmd)
{
	struct pto_cores *arg = &ucmd->cmd.cores;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	DECLARE_BITMAP(bits, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	ret = pto_mask_get(pdev, arg->flags, arg->mask, bits);
	if (ret)
		return ret;

	mutex_lock(&pdev->lock);
	for_each_set_bit(i, bits, pdev->nr_cores) {
		if (pdev->cores[i].owner != pf) {
			ret = -EINVAL;
			goto out_unlock;
		}
	}
	for_each_set_bit(i, bits, pdev->nr_cores) {
		struct pto_core *core = &pdev->cores[i];

		pto_core_set_owner(core, NULL);
		core->owner_pid = 0;
		WRITE_ONCE(core->state, PTO_CORE_OFFLINE);
		WRITE_ONCE(core->regs->state, PTO_CORE_OFFLINE);
		/* Sleepers in CORE_WAIT(_ANY) see they lost it: -ENODEV. */
		pto_core_wake_all(pdev, i);
	}
	trace_pto_detach(pdev, bits, PTO_CORE_OFFLINE);
out_unlock:
	mutex_unlock(&pdev->lock);
	return ret;
}

/* The core @index if @pf attached it, else NULL. */
static struct pto_core *pto_core_owned(struct pto_file *pf, u32 index)
{
	struct pto_dev *pdev = pf->pdev;
	struct pto_core *core;

	if (index >= pdev->nr_cores)
		return NULL;
	core = &pdev->cores[array_index_nospec(index, pdev->nr_cores)];
	return READ_ONCE(core->owner) == pf ? core : NULL;
}

/* A thread in CORE_WAIT. */
struct pto_core_waiter {
	struct pto_core *core;
	struct pto_file *pf;
	u32 last_dmb;
	u32 reason;
};

/*
 * CORE_WAIT's condition. True with w->reason set to PTO_WAKE_DMB,
 * PTO_WAKE_KICK or PTO_WAKE_GONE. Returning consumes a pending kick: the
 * caller rereads DATA_MAIN_BASE anyway.
 */
static bool pto_core_woken(struct pto_core_waiter *w)
{
	struct pto_core *core = w->core;

	if (READ_ONCE(core->owner) != w->pf) {
		w->reason = PTO_WAKE_GONE;
	} else if (READ_ONCE(core->regs->data_main_base) != w->last_dmb) {
		atomic_set(&core->kick_pending, 0);
		w->reason = PTO_WAKE_DMB;
	} else if (atomic_xchg(&core->kick_pending, 0)) {
		w->reason = PTO_WAKE_KICK;
	} else {
		w->reason = 0;
	}
	return w->reason;
}

/*
 * Timeout for wait_event_interruptible_hrtimeout() from an absolute
 * CLOCK_MONOTONIC deadline in ns (0: none, KTIME_MAX). A deadline already
 * passed gives 0: the caller checks its condition once, then times out.
 * Absolute deadlines make a restarted call (-ERESTARTSYS) wait no longer.
 */
static ktime_t pto_timeout(s64 deadline_ns)
{
	ktime_t now;

	if (!deadline_ns)
		return KTIME_MAX;
	now = ktime_get();
	/*
	 * Compared before subtracting: deadline - now overflows for a
	 * deadline near S64_MIN and would wait ~292 years. Past this test
	 * deadline > now >= 0, so the difference fits.
	 */
	if (deadline_ns <= ktime_to_ns(now))
		return 0;
	return ktime_sub(ns_to_ktime(deadline_ns), now);
}

/* The hrtimeout waits report a timeout as -ETIME; the ABI says -ETIMEDOUT. */
static int pto_wait_ret(long ret)
{
	return ret == -ETIME ? -ETIMEDOUT : (int)ret;
}

static long pto_core_sleep(struct pto_core_waiter *w, ktime_t timeout)
{
	if (!timeout)
		return pto_core_woken(w) ? 0 : -ETIME;
	return wait_event_interruptible_hrtimeout(w->core->wq,
						  pto_core_woken(w), timeout);
}

int pto_core_wait(struct pto_ucmd *ucmd)
{
	struct pto_core_wait *arg = &ucmd->cmd.core_wait;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	struct pto_core_waiter w = { .pf = pf, .last_dmb = arg->last_dmb };
	struct pto_core *core;
	u32 parks;
	u32 dmb;
	int ret;

	if (arg->flags)
		return -EINVAL;
	core = pto_core_owned(pf, arg->core);
	if (!core)
		return -EINVAL;
	w.core = core;

	/* before it sleeps: from now on its parked flags stay as set */
	WRITE_ONCE(pf->core_waits, true);
	/* the mirror is its owner's to see, and never goes back */
	spin_lock(&core->lock);
	parks = atomic_inc_return(&core->park_count);
	if (core->owner == pf)
		WRITE_ONCE(core->regs->park_count, parks);
	spin_unlock(&core->lock);
	atomic64_inc(&pdev->cnt.parks);
	pto_touch_sys_cnt(pdev);
	trace_pto_park(pdev, core->index, arg->last_dmb, parks, 0);

	ret = pto_wait_ret(pto_core_sleep(&w, pto_timeout(arg->timeout_ns)));
	if (!ret && w.reason == PTO_WAKE_GONE)
		ret = -ENODEV;
	if (ret)
		w.reason = 0;

	pto_core_unpark(core, pf);

	dmb = READ_ONCE(core->regs->data_main_base);
	if (!ret)
		atomic64_inc(&pdev->cnt.wakes);
	pto_touch_sys_cnt(pdev);
	trace_pto_wake(pdev, core->index, dmb, w.reason, ret);

	arg->dmb = dmb;
	arg->reason = w.reason;
	return ret;
}

/*
 * A thread in CORE_WAIT_ANY. @unwoken: counted in pf->any_unwoken (under
 * pdev->any_wq.lock).
 */
struct pto_any_waiter {
	struct wait_queue_entry wq;
	struct pto_file *pf;
	DECLARE_BITMAP(mask, PTO_MAX_CORES);
	u32 core;
	u32 reason;
	bool unwoken;
};

/*
 * A kick woke the last thread of the file that slept unwoken: nobody is
 * left asleep for the cores of @w's set, and the woken thread sets their
 * parked flags and rechecks them all before it sleeps again. Until then
 * a dispatch to one of them would send a KICK that wakes nobody: clear
 * the flags, so that the AICPU sends none. A thread that counts itself
 * asleep later finds a flag clear and returns to redo the protocol
 * (pto_any_unparked()). Under pdev->any_wq.lock.
 */
static void pto_any_unpark(struct pto_any_waiter *w)
{
	struct pto_dev *pdev = w->pf->pdev;
	unsigned int i;

	if (READ_ONCE(w->pf->core_waits))
		return;
	for_each_set_bit(i, w->mask, pdev->nr_cores)
		pto_core_unpark(&pdev->cores[i], w->pf);
}

/*
 * Wake-up filter of a CORE_WAIT_ANY waiter: a kick of core k (key k + 1)
 * wakes it only if k is in its set, and only then counts as the one
 * exclusive wake-up of the kick. Other wake-ups (key 0) always do.
 * Called under pdev->any_wq.lock.
 */
static int pto_any_wake(struct wait_queue_entry *wq, unsigned int mode,
			int sync, void *key)
{
	struct pto_any_waiter *w = container_of(wq, struct pto_any_waiter, wq);
	unsigned long core = (unsigned long)key;
	int ret;

	if (core && !test_bit(core - 1, w->mask))
		return 0;
	ret = default_wake_function(wq, mode, sync, key);
	if (w->unwoken) {
		w->unwoken = false;
		if (!--w->pf->any_unwoken && core)
			pto_any_unpark(w);
	}
	return ret;
}

/* Count @w as asleep and unwoken (@asleep), or no longer. */
static void pto_any_count(struct pto_dev *pdev, struct pto_any_waiter *w,
			  bool asleep)
{
	spin_lock_irq(&pdev->any_wq.lock);
	if (w->unwoken != asleep) {
		w->unwoken = asleep;
		if (asleep)
			w->pf->any_unwoken++;
		else
			w->pf->any_unwoken--;
	}
	spin_unlock_irq(&pdev->any_wq.lock);
}

/*
 * A core of the set whose parked flag is clear, found after counting
 * itself asleep: pto_any_unpark() cleared it (or the caller never set
 * it), so a dispatch to it would not kick. Return it (PTO_WAKE_UNPARKED):
 * the caller sets the flags again and rechecks before it sleeps.
 */
static bool pto_any_unparked(struct pto_dev *pdev, struct pto_any_waiter *w)
{
	unsigned int i;

	for_each_set_bit(i, w->mask, pdev->nr_cores) {
		if (!READ_ONCE(pdev->cores[i].regs->parked)) {
			w->core = i;
			w->reason = PTO_WAKE_UNPARKED;
			return true;
		}
	}
	return false;
}

/*
 * CORE_WAIT_ANY's condition: a core of the set that went to another file
 * (PTO_WAKE_GONE), else one with a kick pending, which is consumed
 * (PTO_WAKE_KICK). The scan starts after the core found last, so that a
 * busy core does not starve the others.
 */
static bool pto_any_woken(struct pto_dev *pdev, struct pto_any_waiter *w)
{
	unsigned int i;

	for_each_set_bit_wrap(i, w->mask, pdev->nr_cores, w->core + 1) {
		struct pto_core *core = &pdev->cores[i];

		if (READ_ONCE(core->owner) != w->pf)
			w->reason = PTO_WAKE_GONE;
		else if (atomic_read(&core->kick_pending) &&
			 atomic_xchg(&core->kick_pending, 0))
			w->reason = PTO_WAKE_KICK;
		else
			continue;
		w->core = i;
		return true;
	}
	return false;
}

/*
 * A waiter leaving may have taken the one wake-up of a kick it did not
 * consume: it left without a kick (timeout, signal, a core gone or
 * unparked), or a second core of its set was kicked after it was woken
 * and queued again to look, and it took the first. Hand such kicks on to
 * the waiters still asleep.
 */
static void pto_any_pass_on(struct pto_dev *pdev, struct pto_any_waiter *w)
{
	unsigned int i;

	for_each_set_bit(i, w->mask, pdev->nr_cores)
		if (atomic_read(&pdev->cores[i].kick_pending))
			__wake_up(&pdev->any_wq, TASK_INTERRUPTIBLE, 1,
				  (void *)(unsigned long)(i + 1));
}

static int pto_any_sleep(struct pto_dev *pdev, struct pto_any_waiter *w,
			 s64 deadline_ns)
{
	ktime_t expires = ns_to_ktime(deadline_ns);
	int ret = 0;

	init_waitqueue_func_entry(&w->wq, pto_any_wake);
	w->wq.private = current;
	INIT_LIST_HEAD(&w->wq.entry);	/* prepare_to_wait queues it once */
	for (;;) {
		prepare_to_wait_exclusive(&pdev->any_wq, &w->wq,
					  TASK_INTERRUPTIBLE);
		/* again after every wake-up: a kick may have left it asleep */
		pto_any_count(pdev, w, true);
		if (pto_any_woken(pdev, w) || pto_any_unparked(pdev, w))
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (deadline_ns && ktime_compare(ktime_get(), expires) >= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		if (deadline_ns)
			schedule_hrtimeout(&expires, HRTIMER_MODE_ABS);
		else
			schedule();
	}
	finish_wait(&pdev->any_wq, &w->wq);
	pto_any_count(pdev, w, false);
	pto_any_pass_on(pdev, w);
	return ret;
}

int pto_core_wait_any(struct pto_ucmd *ucmd)
{
	struct pto_core_wait_any *arg = &ucmd->cmd.core_wait_any;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	struct pto_any_waiter w = { .pf = pf, .core = pdev->nr_cores - 1 };
	unsigned int i;
	int ret;

	ret = pto_mask_get(pdev, arg->flags, arg->mask, w.mask);
	if (ret)
		return ret;
	for_each_set_bit(i, w.mask, pdev->nr_cores)
		if (!pto_core_owned(pf, i))
			return -EINVAL;

	atomic64_inc(&pdev->cnt.parks);
	pto_touch_sys_cnt(pdev);
	ret = pto_any_sleep(pdev, &w, arg->timeout_ns);
	if (!ret && w.reason == PTO_WAKE_GONE)
		ret = -ENODEV;
	if (ret && ret != -ENODEV)
		return ret;

	/* As CORE_WAIT: the core's parked flag, unless it changed hands. */
	if (w.reason != PTO_WAKE_UNPARKED)
		pto_core_unpark(&pdev->cores[w.core], pf);

	arg->core = w.core;
	arg->dmb = READ_ONCE(pdev->cores[w.core].regs->data_main_base);
	if (!ret && w.reason == PTO_WAKE_KICK)
		atomic64_inc(&pdev->cnt.wakes);
	pto_touch_sys_cnt(pdev);
	trace_pto_wake(pdev, w.core, arg->dmb, w.reason, ret);
	return ret;
}

/*
 * A kick is delivered to a core that is online and either parked (its
 * parked register is set, as the protocol wants before CORE_WAIT) or has a
 * thread in CORE_WAIT. Other cores of the mask are skipped silently and
 * counted nowhere: latching a kick for a core that is running would only
 * make its next CORE_WAIT return at once for nothing.
 */
int pto_kick(struct pto_ucmd *ucmd)
{
	struct pto_cores *arg = &ucmd->cmd.cores;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	DECLARE_BITMAP(bits, PTO_MAX_CORES);
	unsigned int i;
	int ret;

	ret = pto_mask_get(pdev, arg->flags, arg->mask, bits);
	if (ret)
		return ret;

	for_each_set_bit(i, bits, pdev->nr_cores) {
		struct pto_core *core = &pdev->cores[i];
		u32 kicks;

		if (READ_ONCE(core->state) != PTO_CORE_ONLINE)
			continue;
		/*
		 * wq_has_sleeper()'s barrier pairs with the waiter queueing;
		 * CORE_WAIT_ANY callers set parked before they queue.
		 */
		if (!READ_ONCE(core->regs->parked) && !wq_has_sleeper(&core->wq))
			continue;
		/*
		 * Latched before the wakeup; a CORE_WAIT that has not yet
		 * queued itself finds it in its condition.
		 */
		atomic_set(&core->kick_pending, 1);
		kicks = atomic_inc_return(&core->kick_count);
		WRITE_ONCE(core->regs->kick_count, kicks);
		atomic64_inc(&pdev->cnt.kicks);
		trace_pto_kick(pdev, i, READ_ONCE(core->regs->data_main_base),
			       kicks, 0);
		wake_up_interruptible(&core->wq);
		/* one CORE_WAIT_ANY thread whose set has the core */
		if (wq_has_sleeper(&pdev->any_wq))
			__wake_up(&pdev->any_wq, TASK_INTERRUPTIBLE, 1,
				  (void *)(unsigned long)(i + 1));
	}
	pto_touch_sys_cnt(pdev);
	return 0;
}

/* ------------------------------------------------------------------------
 * AICPU interrupt
 * ------------------------------------------------------------------------
 */
void pto_raise_irq(struct pto_dev *pdev, u32 core)
{
	u32 dmb = 0;
	u32 count;

	spin_lock(&pdev->irq_lock);
	count = atomic_inc_return(&pdev->irq_count);
	WRITE_ONCE(pdev->info->irq_count, count);
	spin_unlock(&pdev->irq_lock);

	atomic64_inc(&pdev->cnt.irqs);
	pto_touch_sys_cnt(pdev);
	if (core < pdev->nr_cores) {
		u32 i = array_index_nospec(core, pdev->nr_cores);

		dmb = READ_ONCE(pdev->cores[i].regs->data_main_base);
	}
	trace_pto_irq(pdev, core, dmb, count, 0);
	wake_up_interruptible_all(&pdev->irq_wq);
}

int pto_raise_irq_ioctl(struct pto_ucmd *ucmd)
{
	struct pto_raise_irq *arg = &ucmd->cmd.raise_irq;
	struct pto_file *pf = ucmd->pf;

	if (arg->flags || arg->pad)
		return -EINVAL;
	/* the AICPU wakes its own threads; no core is involved */
	if (pto_file_role(pf) == PTO_ROLE_AICPU ?
	    arg->core != PTO_CORE_NONE : !pto_core_owned(pf, arg->core))
		return -EINVAL;
	pto_raise_irq(pf->pdev, arg->core);
	return 0;
}

/**
 * pto_irq_pending() - has the AICPU interrupt count moved?
 * @pdev: the device.
 * @seen: the count the caller has seen: IRQ_WAIT's count, or the file's
 *	irq_seen for read() and poll(). Read at every call, since a wait
 *	condition is evaluated again after each wakeup.
 * @count: the current count, stored whatever the result.
 *
 * Return: true if the current count differs from *@seen.
 */
bool pto_irq_pending(struct pto_dev *pdev, const u32 *seen, u32 *count)
{
	*count = atomic_read(&pdev->irq_count);
	return *count != READ_ONCE(*seen);
}

static long pto_irq_sleep(struct pto_dev *pdev, u32 seen, u32 *cur,
			  ktime_t timeout)
{
	if (!timeout)
		return pto_irq_pending(pdev, &seen, cur) ? 0 : -ETIME;
	return wait_event_interruptible_hrtimeout(pdev->irq_wq,
						  pto_irq_pending(pdev, &seen,
								  cur),
						  timeout);
}

int pto_irq_wait(struct pto_ucmd *ucmd)
{
	struct pto_irq_wait *arg = &ucmd->cmd.irq_wait;
	struct pto_file *pf = ucmd->pf;
	u32 cur = 0;
	int ret;

	if (arg->flags || arg->pad)
		return -EINVAL;

	ret = pto_wait_ret(pto_irq_sleep(pf->pdev, arg->count, &cur,
					 pto_timeout(arg->timeout_ns)));
	if (ret)
		return ret;

	arg->count = cur;
	WRITE_ONCE(pf->irq_seen, cur);
	return 0;
}

/* ------------------------------------------------------------------------
 * HWS configuration
 * ------------------------------------------------------------------------
 *
 * A write (PTO_IOC_HWS_CONFIG here, hws-set in pto_netlink.c) is validated
 * by pto_hws_cfg_check(), the rules the user-mode device shares
 * (common/include/pto-private/hws_rules.h).
 */
/*
 * The configuration registers are under their sequence count (uapi
 * @cfg_seq): odd while they change, even and new once they are whole.
 * The device writes them under pdev->lock, but the AICPU's mapping of the
 * page is writable too, so a writer takes the count from even to odd with
 * a compare-and-swap and a reader copies between two equal even readings;
 * neither waits for the AICPU longer than PTO_HWS_SEQ_WAIT_NS (-EAGAIN).
 */
#define PTO_HWS_SEQ_WAIT_NS	(10 * NSEC_PER_MSEC)

/* Another try at the count, or -EAGAIN once @end is past. */
static int pto_hws_seq_again(u64 end)
{
	if (ktime_get_ns() > end)
		return -EAGAIN;
	usleep_range(10, 20);
	return 0;
}

/* pto_hws_read() with its wait bounded by @end instead. */
static int pto_hws_read_until(struct pto_dev *pdev, struct pto_hws_cfg *cfg,
			      u32 *seq, u64 end)
{
	struct pto_regs_hws *hws = pdev->hws;
	u32 s;

	do {
		/* the count before the values it covers */
		s = smp_load_acquire(&hws->cfg_seq);
		if (!(s & 1)) {
			/* a racing writer is what the count is checked for */
			data_race(memcpy(cfg, &hws->cfg, sizeof(*cfg)));
			smp_rmb();	/* the values before the count again */
			if (READ_ONCE(hws->cfg_seq) == s) {
				*seq = s;
				return 0;
			}
		}
	} while (!pto_hws_seq_again(end));
	return -EAGAIN;
}

/*
 * Copy the registers into @cfg, and their count into @seq. No lock: the
 * count is all a reader needs, and a reader that waits for the AICPU
 * holds up nobody else.
 */
int pto_hws_read(struct pto_dev *pdev, struct pto_hws_cfg *cfg, u32 *seq)
{
	return pto_hws_read_until(pdev, cfg, seq,
				  ktime_get_ns() + PTO_HWS_SEQ_WAIT_NS);
}

/*
 * The AICPU's file is gone, and with it every writable mapping of the
 * page: a write it left half done (an odd count) gives way to the
 * defaults, which pass the checks, under an even count. pdev->lock held.
 */
void pto_hws_unfinished(struct pto_dev *pdev)
{
	struct pto_regs_hws *hws = pdev->hws;
	u32 s = READ_ONCE(hws->cfg_seq);

	if (!(s & 1))
		return;
	pto_hws_cfg_default(&hws->cfg, pdev->nr_cores);
	/* the defaults before the even count that publishes them */
	smp_store_release(&hws->cfg_seq, s + 1);
}

/*
 * Replace the registers with @cfg if their count is still @from (even),
 * and return true; false if anybody wrote them since @from was read, or
 * is writing them. The device's writers take pdev->lock for this short
 * step only, never while they wait: it orders them with
 * pto_hws_unfinished(), which ends an odd count without the swap.
 */
static bool pto_hws_replace(struct pto_dev *pdev,
			    const struct pto_hws_cfg *cfg, u32 from)
{
	struct pto_regs_hws *hws = pdev->hws;
	bool won;

	mutex_lock(&pdev->lock);
	/* odd for as short as can be: readers spin meanwhile */
	preempt_disable();
	/* a full barrier: the odd count before the new values */
	won = cmpxchg(&hws->cfg_seq, from, from + 1) == from;
	if (won) {
		memcpy(&hws->cfg, cfg, sizeof(*cfg));
		/* the new values before the even count */
		smp_store_release(&hws->cfg_seq, from + 2);
	}
	preempt_enable();
	mutex_unlock(&pdev->lock);
	return won;
}

/* Write the whole of @cfg into the registers; their new count into @seq. */
int pto_hws_write(struct pto_dev *pdev, const struct pto_hws_cfg *cfg,
		  u32 *seq)
{
	struct pto_regs_hws *hws = pdev->hws;
	u64 end = ktime_get_ns() + PTO_HWS_SEQ_WAIT_NS;
	u32 s;

	do {
		s = READ_ONCE(hws->cfg_seq);
		if (!(s & 1) && pto_hws_replace(pdev, cfg, s)) {
			*seq = s + 2;
			return 0;
		}
	} while (!pto_hws_seq_again(end));
	return -EAGAIN;
}

/*
 * Read the registers into @cfg, let @edit change them, and write the
 * result back, all under one count: if anybody (the AICPU through its
 * mapping, another writer) wrote in between, the edit is made again on
 * their values rather than writing over them. The new count into @seq.
 * An error of @edit is returned as it is, with nothing written; -EAGAIN
 * if the registers did not hold still for PTO_HWS_SEQ_WAIT_NS.
 */
int pto_hws_update(struct pto_dev *pdev, struct pto_hws_cfg *cfg,
		   int (*edit)(struct pto_hws_cfg *cfg, void *priv),
		   void *priv, u32 *seq)
{
	u64 end = ktime_get_ns() + PTO_HWS_SEQ_WAIT_NS;
	u32 from;
	int ret;

	do {
		ret = pto_hws_read_until(pdev, cfg, &from, end);
		if (ret)
			return ret;
		ret = edit(cfg, priv);
		if (ret)
			return ret;
		if (pto_hws_replace(pdev, cfg, from)) {
			*seq = from + 2;
			return 0;
		}
	} while (!pto_hws_seq_again(end));
	return -EAGAIN;
}

int pto_hws_config(struct pto_ucmd *ucmd)
{
	struct pto_hws_config *arg = &ucmd->cmd.hws_config;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	u32 seq;
	int ret;

	if (arg->flags & ~PTO_HWS_CONFIG_SET)
		return -EINVAL;

	if (arg->flags & PTO_HWS_CONFIG_SET) {
		if (!pf->writable)
			return -EBADF;
		/* the AICPU (the firmware), or an administrator */
		if (pto_file_role(pf) != PTO_ROLE_AICPU &&
		    !pto_file_admin(pf)) {
			dev_dbg(pdev->misc.this_device,
				"HWS_CONFIG set by a non-AICPU without CAP_SYS_ADMIN (pid %d%s)\n",
				task_tgid_nr(current),
				pf->opener_admin ? "" : ", opener");
			return -EACCES;
		}
		ret = pto_hws_cfg_check(&arg->cfg, pdev->nr_cores);
		if (ret)
			return ret;
	}

	if (arg->flags & PTO_HWS_CONFIG_SET)
		ret = pto_hws_write(pdev, &arg->cfg, &seq);
	else
		ret = pto_hws_read(pdev, &arg->cfg, &seq);
	if (!ret && (arg->flags & PTO_HWS_CONFIG_SET))
		pto_nl_notify_hws(pdev, task_tgid_nr(current), seq);
	return ret;
}
