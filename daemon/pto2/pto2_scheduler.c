// SPDX-License-Identifier: MIT
/*
 * pto2_scheduler.c - the PTO2 scheduler threads
 *
 * Each thread owns an equal share of the AIC and AIV cores and loops over
 * four phases:
 *
 *  1. completion: poll COND of its busy cores; on FIN of the running task
 *     set completed=2, walk the fanout list (under the fanout lock, as in
 *     section 7) incrementing each consumer's fanin_refcount (a consumer
 *     whose count reaches its fanin_count becomes READY), release the
 *     task's producers and its own reference; the last release marks a
 *     task CONSUMED (3) and advances last_task_alive and heap_tail.
 *  2. dispatch: for each idle core pop a task of its type (own shard
 *     first, then steal), write the core's payload slot, store
 *     DATA_MAIN_BASE = task_id + 1 (release), full fence, kick the core
 *     if it is parked.
 *  3. incremental scan: claim published task ids from next_scan_index by
 *     CAS; a root (fanin_count == 0) goes 0 -> 1 by CAS into a ready queue.
 *  4. drain the orchestrator's early-ready queue into the ready queues.
 *
 * A thread that finds nothing to do for sched_idle_spins loops or (on a
 * device with irq_wake) for sched_idle_ns (20 us), whichever ends first,
 * sleeps in the device's irq_wait (virtio-style suppression: set irq_en
 * on its busy cores, count itself as a sleeper, full fence, rescan, then
 * sleep). The time cap matters on an oversubscribed host (72 core
 * threads, 3 schedulers and the orchestrator on a few CPUs): a scheduler
 * spinning for milliseconds takes the CPU from the threads that would
 * give it work, whereas the IRQ's wake-up gets a sleeping one running at
 * once. The threads live as long as the runtime; between runs they wait
 * on a condition variable (pto2_sched_start/stop/exit).
 *
 * Consumption (CONSUMED, state 3): a task's fanout_count is 1 (its scope)
 * + the consumers registered in its fanout list; fanout_refcount counts
 * released references: the scope's (scope_end), each registered
 * consumer's (at the consumer's completion) and one held by the task's
 * own completion handler until its fanout walk is over. The task is
 * consumed when fanout_refcount reaches fanout_count + 1; the 2 -> 3
 * transition is made under the fanout lock. The handler's reference
 * keeps the slot from being recycled while its fanout list is walked.
 * A consumer submitted after its producer completed (early finish) still
 * takes a fanout reference while the producer is COMPLETED, so that the
 * producer's output buffer outlives the consumer (the PTO2 reference's
 * early path skips this and lets the buffer be reclaimed under a
 * pending reader).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "pto2_internal.h"

static inline uint32_t slot_of(PTO2Runtime *rt, int32_t id)
{
	return (uint32_t)id & rt->mask;
}

static inline int type_of_core(PTO2Runtime *rt, uint32_t core)
{
	return core < rt->dev.nr_aic ? PTO2_WORKER_CUBE : PTO2_WORKER_VECTOR;
}

/* Push a READY task to this thread's shard; wake sleepers to take it. */
static void push_ready(PTO2Runtime *rt, uint32_t thread, int32_t id)
{
	PTO2TaskDescriptor *d = &rt->desc[slot_of(rt, id)];

	if (pto2_ready_push(&rt->rq, d->worker_type, thread, id))
		pto2_rt_fail(rt, -ENOSPC, "ready queue overflow (task %d)", id);
	pto2_wake_schedulers(rt);
}

/* INITIAL -> READY, once. */
static bool make_ready(PTO2Runtime *rt, int32_t id)
{
	int32_t exp = PTO2_TASK_INITIAL;

	return atomic_compare_exchange_strong(&rt->completed[slot_of(rt, id)],
					      &exp, PTO2_TASK_READY);
}

/* A producer of @id completed. */
static void release_fanin(PTO2Runtime *rt, uint32_t thread, int32_t id)
{
	uint32_t s = slot_of(rt, id);
	int32_t n, fc;

	/* seq_cst pairs with the orchestrator's fanin_count store (step 7) */
	n = atomic_fetch_add_explicit(&rt->fanin_refcount[s], 1,
				      memory_order_seq_cst) + 1;
	fc = atomic_load_explicit(&rt->desc[s].fanin_count, memory_order_seq_cst);
	if (n == fc && make_ready(rt, id))
		push_ready(rt, thread, id);
}

static inline void signal_if_done(PTO2Runtime *rt)
{
	int32_t la, cur;

	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load_explicit(&rt->hdr->orchestrator_done,
				  memory_order_seq_cst))
		return;
	la = atomic_load_explicit(&rt->hdr->last_task_alive,
				  memory_order_seq_cst);
	cur = atomic_load_explicit(&rt->hdr->current_task_index,
				   memory_order_seq_cst);
	if (la != cur)
		return;
	pthread_mutex_lock(&rt->lock);
	if (!rt->run_done) {
		rt->run_done = true;
		pthread_cond_broadcast(&rt->cond);
	}
	pthread_mutex_unlock(&rt->lock);
	pto2_wake_schedulers(rt);
}

/*
 * Advance last_task_alive over CONSUMED tasks and heap_tail with them
 * (PTO2's lock-free watermark advance). One thread advances at a
 * time (advance_busy), so that heap_tail is stored in task order and never
 * moves back; a thread that loses the flag relies on the holder's recheck
 * after clearing it (seq_cst flag and state accesses, Dekker-style).
 */
void pto2_try_advance(PTO2Runtime *rt)
{
	PTO2SharedMemoryHeader *h = rt->hdr;
	bool moved = false;
	int32_t la, cur;

	for (;;) {
		if (atomic_flag_test_and_set_explicit(&rt->advance_busy,
						      memory_order_seq_cst))
			break;
		la = atomic_load_explicit(&h->last_task_alive,
					  memory_order_relaxed);
		cur = atomic_load_explicit(&h->current_task_index,
					   memory_order_acquire);
		while (la < cur) {
			uint32_t s = slot_of(rt, la);
			PTO2TaskDescriptor *d = &rt->desc[s];

			if (atomic_load_explicit(&rt->completed[s],
						 memory_order_seq_cst) !=
			    PTO2_TASK_CONSUMED)
				break;
			atomic_store_explicit(&rt->fanin_refcount[s], 0,
					      memory_order_relaxed);
			atomic_store_explicit(&rt->fanout_refcount[s], 0,
					      memory_order_relaxed);
			if (d->heap_pos_end)
				atomic_store_explicit(&h->heap_tail,
						      d->heap_pos_end,
						      memory_order_release);
			la++;
			atomic_store_explicit(&h->last_task_alive, la,
					      memory_order_release);
			moved = true;
		}
		atomic_flag_clear_explicit(&rt->advance_busy,
					   memory_order_seq_cst);
		la = atomic_load_explicit(&h->last_task_alive,
					  memory_order_seq_cst);
		cur = atomic_load_explicit(&h->current_task_index,
					   memory_order_acquire);
		if (la >= cur ||
		    atomic_load_explicit(&rt->completed[slot_of(rt, la)],
					 memory_order_seq_cst) !=
		    PTO2_TASK_CONSUMED)
			break;
	}
	(void)moved;
	signal_if_done(rt);
}

void pto2_release_fanout(PTO2Runtime *rt, int32_t id)
{
	uint32_t s = slot_of(rt, id);
	PTO2TaskDescriptor *d = &rt->desc[s];
	int32_t n, fc, exp;
	bool consumed = false;

	n = atomic_fetch_add_explicit(&rt->fanout_refcount[s], 1,
				      memory_order_acq_rel) + 1;
	fc = atomic_load_explicit(&d->fanout_count, memory_order_relaxed);
	if (n != fc + 1)
		return;
	/*
	 * Looks like the last reference. Recheck under the fanout lock: the
	 * orchestrator's early-finish path may have just added a consumer
	 * reference (it does so only under the lock, with completed == 2).
	 */
	while (atomic_exchange_explicit(&d->fanout_lock, 1,
					memory_order_acquire))
		cpu_relax();
	fc = atomic_load_explicit(&d->fanout_count, memory_order_relaxed);
	n = atomic_load_explicit(&rt->fanout_refcount[s], memory_order_relaxed);
	exp = PTO2_TASK_COMPLETED;
	if (n == fc + 1)
		consumed = atomic_compare_exchange_strong(&rt->completed[s],
							  &exp,
							  PTO2_TASK_CONSUMED);
	atomic_store_explicit(&d->fanout_lock, 0, memory_order_release);
	if (consumed)
		pto2_try_advance(rt);
}

/* ---- Phase 1: completion ----------------------------------------------------- */

static void on_task_complete(PTO2Runtime *rt, uint32_t thread, uint32_t core,
			     int32_t id)
{
	uint32_t s = slot_of(rt, id);
	PTO2TaskDescriptor *d = &rt->desc[s];
	PTO2DispatchPayload *p = pto2_payload(rt, core);
	int32_t head, off;

	if (unlikely(p->status < 0))
		pto2_rt_fail(rt, -EIO,
			     "kernel %d failed with %d (task %d on core %u)",
			     d->kernel_id, p->status, id, core);

	atomic_store_explicit(&rt->completed_by_task[s], id,
			      memory_order_release);
	atomic_store_explicit(&rt->completed[s], PTO2_TASK_COMPLETED,
			      memory_order_seq_cst);
	/* after this lock/unlock no consumer can be added to the list */
	while (atomic_exchange_explicit(&d->fanout_lock, 1,
					memory_order_acquire))
		cpu_relax();
	head = d->fanout_head;
	atomic_store_explicit(&d->fanout_lock, 0, memory_order_release);

	for (off = head; off; off = rt->dep[off].next_offset)
		release_fanin(rt, thread, rt->dep[off].task_id);
	for (off = d->fanin_head; off; off = rt->dep[off].next_offset)
		pto2_release_fanout(rt, rt->dep[off].task_id);

	atomic_fetch_add_explicit(&rt->completions, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&rt->running, 1, memory_order_release);
	pto2_release_fanout(rt, id);	/* the handler's own reference */
}

static int phase_complete(struct pto2_sched_thread *st, uint32_t first,
			  uint32_t count)
{
	PTO2Runtime *rt = st->rt;
	uint32_t c;
	int done = 0;

	for (c = first; c < first + count; c++) {
		int32_t id = rt->core_task[c];

		if (id < 0)
			continue;
		if (reg_load_acquire(&pto2_core_regs(rt, c)->cond) !=
		    PTO_COND_DONE((uint32_t)id))
			continue;
		rt->core_task[c] = -1;
		on_task_complete(rt, st->index, c, id);
		done++;
	}
	return done;
}

/* ---- Phase 2: dispatch --------------------------------------------------------- */

static void dispatch(struct pto2_sched_thread *st, uint32_t core, int32_t id)
{
	PTO2Runtime *rt = st->rt;
	PTO2TaskDescriptor *d = &rt->desc[slot_of(rt, id)];
	PTO2DispatchPayload *p = pto2_payload(rt, core);
	struct pto_core_regs *r = pto2_core_regs(rt, core);
	uint32_t mask = 0;
	int i;

	p->task_id = id;
	p->kernel_id = d->kernel_id;
	p->function_bin_addr =
		(d->kernel_id >= 0 &&
		 (uint32_t)d->kernel_id < rt->cfg.nr_kernel_addrs) ?
		rt->cfg.kernel_addrs[d->kernel_id] : 0;
	p->num_args = (uint32_t)d->param_count;
	p->status = 0;
	p->block_num = rt->block_num;
	for (i = 0; i < d->param_count; i++) {
		p->args[i] = d->args[i];
		if (d->param_type[i] != PTO_PARAM_SCALAR)
			mask |= 1U << i;
	}
	p->tensor_mask = mask;
	rt->core_task[core] = id;
	atomic_fetch_add_explicit(&rt->running, 1, memory_order_relaxed);
	reg64_store_relaxed(&r->ts_dispatch,
			    pto_sys_cnt(pto_regs_info(rt->dev.regs)));
	reg64_store_relaxed(&r->task, pto2_payload_dev(rt, core));
	reg_store_release(&r->data_main_base, (uint32_t)id + 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (reg_load_relaxed(&r->parked)) {
		rt->dev.kick(rt->dev.ctx, pto2_core_id(rt, core));
		st->kicks++;
	}
}

static int dispatch_type(struct pto2_sched_thread *st, int type, uint32_t first,
			 uint32_t count)
{
	PTO2Runtime *rt = st->rt;
	uint32_t c;
	int n = 0;

	for (c = first; c < first + count; c++) {
		int32_t id;

		if (rt->core_task[c] >= 0)
			continue;
		if (pto2_ready_pop(&rt->rq, type, st->index, &id))
			break;
		dispatch(st, c, id);
		n++;
	}
	return n;
}

static int phase_dispatch(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;

	/* fail fast: after an error no new task starts */
	if (unlikely(atomic_load_explicit(&rt->error, memory_order_relaxed)))
		return 0;
	return dispatch_type(st, PTO2_WORKER_CUBE, st->aic_first,
			     st->aic_count) +
	       dispatch_type(st, PTO2_WORKER_VECTOR, st->aiv_first,
			     st->aiv_count);
}

/* ---- Phase 3: incremental scan ---------------------------------------------------- */

#define PTO2_SCAN_BATCH	64

static int phase_scan(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;
	int32_t idx = atomic_load_explicit(&rt->next_scan_index,
					   memory_order_relaxed);
	int32_t cur = atomic_load_explicit(&rt->hdr->current_task_index,
					   memory_order_acquire);
	int n = 0;

	while (idx < cur && n < PTO2_SCAN_BATCH) {
		PTO2TaskDescriptor *d;

		if (!atomic_compare_exchange_weak(&rt->next_scan_index, &idx,
						  idx + 1))
			continue;	/* idx reloaded */
		d = &rt->desc[slot_of(rt, idx)];
		if (atomic_load_explicit(&d->task_id, memory_order_acquire) ==
			    idx &&
		    atomic_load_explicit(&d->fanin_count,
					 memory_order_acquire) == 0 &&
		    make_ready(rt, idx))
			push_ready(rt, st->index, idx);
		idx++;
		n++;
	}
	return n;
}

/* ---- Phase 4: orchestrator early-ready queue ------------------------------------- */

static int phase_drain(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;
	uint32_t h = atomic_load_explicit(&rt->orch_ready_head,
					  memory_order_relaxed);
	int n = 0;

	for (;;) {
		uint32_t t = atomic_load_explicit(&rt->orch_ready_tail,
						  memory_order_acquire);
		int32_t id;

		if (h == t)
			break;
		id = rt->orch_ready[h & rt->mask];
		if (!atomic_compare_exchange_weak(&rt->orch_ready_head, &h,
						  h + 1))
			continue;
		/* the orchestrator did INITIAL -> READY (step 7) */
		push_ready(rt, st->index, id);
		h++;
		n++;
	}
	return n;
}

/* ---- Idle: sleep in the device ---------------------------------------------------- */

static bool has_idle_core(PTO2Runtime *rt, uint32_t first, uint32_t count)
{
	uint32_t c;

	for (c = first; c < first + count; c++)
		if (rt->core_task[c] < 0)
			return true;
	return false;
}

static bool work_pending(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;
	uint32_t c;

	if (atomic_load_explicit(&rt->stop, memory_order_relaxed))
		return true;
	for (c = 0; c < rt->nr_cores; c++) {
		bool mine = (c >= st->aic_first &&
			     c < st->aic_first + st->aic_count) ||
			    (c >= st->aiv_first &&
			     c < st->aiv_first + st->aiv_count);
		int32_t id;

		if (!mine)
			continue;	/* core_task[] of other threads' cores */
		id = rt->core_task[c];
		if (id >= 0 &&
		    reg_load_acquire(&pto2_core_regs(rt, c)->cond) ==
		    PTO_COND_DONE((uint32_t)id))
			return true;
	}
	if (atomic_load(&rt->next_scan_index) <
	    atomic_load(&rt->hdr->current_task_index))
		return true;
	if (atomic_load(&rt->orch_ready_head) !=
	    atomic_load(&rt->orch_ready_tail))
		return true;
	if (!atomic_load(&rt->error) &&
	    ((has_idle_core(rt, st->aic_first, st->aic_count) &&
	      !pto2_ready_empty(&rt->rq, PTO2_WORKER_CUBE)) ||
	     (has_idle_core(rt, st->aiv_first, st->aiv_count) &&
	      !pto2_ready_empty(&rt->rq, PTO2_WORKER_VECTOR))))
		return true;
	return false;
}

static void set_irq_en(struct pto2_sched_thread *st, uint32_t v)
{
	PTO2Runtime *rt = st->rt;
	uint32_t c;

	for (c = st->aic_first; c < st->aic_first + st->aic_count; c++)
		reg_store_relaxed(&pto2_core_regs(rt, c)->irq_en,
				  v && rt->core_task[c] >= 0);
	for (c = st->aiv_first; c < st->aiv_first + st->aiv_count; c++)
		reg_store_relaxed(&pto2_core_regs(rt, c)->irq_en,
				  v && rt->core_task[c] >= 0);
}

static void sched_sleep(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;
	uint32_t count = rt->dev.irq_count(rt->dev.ctx);

	set_irq_en(st, 1);
	atomic_fetch_add_explicit(&rt->sleepers, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	if (!work_pending(st)) {
		rt->dev.irq_wait(rt->dev.ctx, &count,
				 (int64_t)((uint64_t)pto_mono_ns() + rt->cfg.sched_sleep_ns));
		st->sleeps++;
	}
	atomic_fetch_sub_explicit(&rt->sleepers, 1, memory_order_relaxed);
	set_irq_en(st, 0);
}

/* ---- Thread ----------------------------------------------------------------------- */

static void sched_run(struct pto2_sched_thread *st)
{
	PTO2Runtime *rt = st->rt;
	uint32_t idle = 0;
	uint64_t idle_t0 = 0;
	/*
	 * The time cap only with irq_wake: without it (ptod's device) work
	 * published while every scheduler sleeps waits for sched_sleep_ns.
	 */
	uint64_t idle_ns = rt->dev.irq_wake ? rt->cfg.sched_idle_ns : 0;

	while (!atomic_load_explicit(&rt->stop, memory_order_acquire)) {
		int work = 0;

		work += phase_complete(st, st->aic_first, st->aic_count);
		work += phase_complete(st, st->aiv_first, st->aiv_count);
		work += phase_dispatch(st);
		work += phase_scan(st);
		work += phase_drain(st);
		if (work) {
			idle = 0;
			continue;
		}
		if (!idle)
			idle_t0 = (uint64_t)pto_mono_ns();
		if (++idle < rt->cfg.sched_idle_spins &&
		    (!idle_ns || (idle & 7) ||
		     (uint64_t)pto_mono_ns() - idle_t0 < idle_ns)) {
			cpu_relax();
			continue;
		}
		idle = 0;
		sched_sleep(st);
	}
}

static void *sched_main(void *arg)
{
	struct pto2_sched_thread *st = arg;
	PTO2Runtime *rt = st->rt;

	pthread_mutex_lock(&rt->sched_lock);
	for (;;) {
		while (!rt->sched_exit && st->gen == rt->sched_gen)
			pthread_cond_wait(&rt->sched_cond, &rt->sched_lock);
		if (rt->sched_exit)
			break;
		st->gen = rt->sched_gen;
		pthread_mutex_unlock(&rt->sched_lock);
		sched_run(st);
		pthread_mutex_lock(&rt->sched_lock);
		if (--rt->sched_active == 0)
			pthread_cond_broadcast(&rt->sched_cond);
	}
	pthread_mutex_unlock(&rt->sched_lock);
	return NULL;
}

int pto2_sched_start(PTO2Runtime *rt)
{
	uint32_t i;
	int ret = 0;

	atomic_store(&rt->stop, 0);
	pthread_mutex_lock(&rt->sched_lock);
	rt->sched_gen++;
	rt->sched_active = 0;
	for (i = 0; i < rt->nr_threads; i++) {
		struct pto2_sched_thread *st = &rt->threads[i];

		st->sleeps = 0;
		st->kicks = 0;
		if (!st->live) {
			st->gen = rt->sched_gen - 1;	/* takes this run */
			ret = -pthread_create(&st->thread, NULL, sched_main, st);
			if (ret)
				break;
			st->live = true;
		}
		rt->sched_active++;
	}
	pthread_cond_broadcast(&rt->sched_cond);
	pthread_mutex_unlock(&rt->sched_lock);
	if (ret)
		pto2_sched_stop(rt);
	return ret;
}

void pto2_sched_stop(PTO2Runtime *rt)
{
	atomic_store(&rt->stop, 1);
	if (rt->dev.irq_wake)
		rt->dev.irq_wake(rt->dev.ctx);
	pthread_mutex_lock(&rt->sched_lock);
	while (rt->sched_active > 0)
		pthread_cond_wait(&rt->sched_cond, &rt->sched_lock);
	pthread_mutex_unlock(&rt->sched_lock);
}

void pto2_sched_exit(PTO2Runtime *rt)
{
	uint32_t i;

	if (!rt->threads)
		return;
	pthread_mutex_lock(&rt->sched_lock);
	rt->sched_exit = true;
	pthread_cond_broadcast(&rt->sched_cond);
	pthread_mutex_unlock(&rt->sched_lock);
	for (i = 0; i < rt->nr_threads; i++) {
		struct pto2_sched_thread *st = &rt->threads[i];

		if (!st->live)
			continue;
		pthread_join(st->thread, NULL);
		st->live = false;
	}
}
