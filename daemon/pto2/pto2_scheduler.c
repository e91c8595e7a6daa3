// SPDX-License-Identifier: MIT
/*
 * pto2_scheduler.c - the runtime's side of scheduling
 *
 * The engine (pto2_engine.c) owns the cores and decides which ready task
 * runs where; what is the runtime's own is run here, by the engine's
 * threads:
 *
 *  - incremental scan: claim published task ids from next_scan_index by
 *    CAS; a root (fanin_count == 0) goes INITIAL -> READY by CAS into the
 *    runtime's ready queue;
 *  - drain: the orchestrator's early-ready queue (tasks whose producers
 *    had all completed when they were submitted) into the ready queue;
 *  - completion: when the last core execution of a task finished, set
 *    completed=2, walk the fanout list (under the fanout lock) incrementing
 *    each consumer's fanin_refcount (a consumer whose count reaches its
 *    fanin_count becomes READY), release the task's producers and its own
 *    reference; the last release marks a task CONSUMED (3) and advances
 *    last_task_alive and heap_tail.
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

/* Push a READY task to this thread's shard; wake sleepers to take it. */
static void push_ready(PTO2Runtime *rt, uint32_t thread, int32_t id)
{
	PTO2TaskDescriptor *d = &rt->desc[slot_of(rt, id)];
	int q = d->worker_type == PTO2_WORKER_CUBE ? PTO2_WORKER_CUBE :
		PTO2_WORKER_VECTOR;

	if (pto2_ready_push(&rt->rq, q, thread, id))
		pto2_rt_fail(rt, -ENOSPC, "ready queue overflow (task %d)", id);
	pto2_wake_schedulers(rt);
}

/* INITIAL -> READY, once. @producers: 0 for a root (found by the scan). */
static bool make_ready(PTO2Runtime *rt, int32_t id, int32_t producers)
{
	int32_t exp = PTO2_TASK_INITIAL;

	if (!atomic_compare_exchange_strong(&rt->completed[slot_of(rt, id)],
					    &exp, PTO2_TASK_READY))
		return false;
	PTO2_TASK_PROBE(task_ready, rt, id, rt->desc[slot_of(rt, id)].kernel_id,
			-1, producers);
	return true;
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
	if (n == fc && make_ready(rt, id, fc))
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
			PTO2_TASK_PROBE(task_retire, rt, la, d->kernel_id, -1,
					0);
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
	if (consumed) {
		PTO2_TASK_PROBE(task_consumed, rt, id, d->kernel_id, -1, fc);
		pto2_try_advance(rt);
	}
}

/* ---- Completion ------------------------------------------------------------ */

void pto2_rt_task_done(PTO2Runtime *rt, uint32_t thread, int32_t id)
{
	uint32_t s = slot_of(rt, id);
	PTO2TaskDescriptor *d = &rt->desc[s];
	int32_t head, off;

	PTO2_TASK_PROBE(task_done, rt, id, d->kernel_id, -1, 0);
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

	if (d->cluster_id >= 0)
		pto2_engine_cluster_task(rt->engine, rt, d->cluster_id, true);
	atomic_fetch_add_explicit(&rt->completions, 1, memory_order_relaxed);
	pto2_release_fanout(rt, id);	/* the handler's own reference */
}

/* ---- Incremental scan ------------------------------------------------------- */

#define PTO2_SCAN_BATCH	64

int pto2_rt_scan(PTO2Runtime *rt, uint32_t thread)
{
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
		    make_ready(rt, idx, 0))
			push_ready(rt, thread, idx);
		idx++;
		n++;
	}
	return n;
}

/* ---- The orchestrator's early-ready queue ------------------------------------ */

int pto2_rt_drain(PTO2Runtime *rt, uint32_t thread)
{
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
		push_ready(rt, thread, id);
		h++;
		n++;
	}
	return n;
}

bool pto2_rt_feed_pending(PTO2Runtime *rt)
{
	return atomic_load(&rt->next_scan_index) <
	       atomic_load(&rt->hdr->current_task_index) ||
	       atomic_load(&rt->orch_ready_head) !=
	       atomic_load(&rt->orch_ready_tail);
}
