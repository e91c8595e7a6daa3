// SPDX-License-Identifier: MIT
/*
 * pto2_internal.h - the runtime structure shared by the orchestrator
 * (pto2_runtime.c) and the schedulers (pto2_scheduler.c)
 */
#ifndef PTO2_INTERNAL_H
#define PTO2_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pto2_ready_queue.h"
#include "pto2_ring.h"
#include "pto2_runtime.h"
#include "pto2_tensormap.h"
#include "pto2_util.h"

#define PTO2_ERRMSG_LEN	4096

struct pto2_sched_thread {
	PTO2Runtime *rt;
	uint32_t index;
	pthread_t thread;
	bool live;
	uint32_t gen;		/* the last run generation it took part in */
	/* owned cores: [first, first + count) of each type (core ids) */
	uint32_t aic_first, aic_count;
	uint32_t aiv_first, aiv_count;
	uint64_t sleeps;	/* stats, this thread only */
	uint64_t kicks;
};

enum pto2_run_state {
	PTO2_RUN_IDLE = 0,	/* no run, or the last one was waited for */
	PTO2_RUN_ACTIVE,	/* launched, not yet waited for */
};

struct PTO2Runtime {
	/* ---- set at create, read-only afterwards ---- */
	struct pto2_config cfg;
	struct pto2_logger log;
	struct pto2_device dev;
	uint8_t *mem;
	uint64_t mem_dev;
	size_t mem_size;
	PTO2SharedMemoryHeader *hdr;
	PTO2TaskDescriptor *desc;
	PTO2DepListEntry *dep;
	uint8_t *payload;		/* per-core PTO2DispatchPayload slots */
	uint64_t payload_dev;		/* their device address */
	uint32_t payload_stride;
	uint32_t window;
	uint32_t mask;			/* window - 1 */
	uint32_t nr_cores;		/* cores of the current core map */
	uint32_t max_cores;		/* cores at create (payload slots) */
	uint32_t block_num;		/* AIC at create: kernels' block_num */
	uint64_t heap_dev;		/* device address of the heap */

	/* ---- orchestrator thread only ---- */
	struct pto2_task_ring task_ring;
	struct pto2_heap_ring heap_ring;
	struct pto2_dep_pool dep_pool;
	struct pto2_tensormap tm;
	uint64_t *dep_pos_begin;	/* [window]: dep pool pos at submit */
	int32_t *scope_tasks;		/* tasks of the open scopes */
	uint32_t scope_tasks_size;
	uint32_t scope_tasks_cap;
	uint32_t scope_begins[PTO2_MAX_SCOPE_DEPTH];
	int scope_depth;
	bool orch_done;			/* orchestration_done() was called */
	struct pto2_flow flow;
	char flow_msg[PTO2_ERRMSG_LEN];
	uint64_t stat_submitted;
	uint64_t stat_heap_bytes;
	uint64_t stat_ring_blocked;
	/*
	 * runtime_reset() cleans only the slots of the ids handed out since
	 * the last reset, [dirty_begin, task_ring.current_index), unless
	 * !reset_clean (first reset) or they span the whole window.
	 */
	int32_t dirty_begin;
	bool reset_clean;

	/*
	 * Early-ready queue, orchestrator -> schedulers (step 7 / phase 4).
	 * Single producer (orchestrator: writes cells, then tail with
	 * release), several consumers (claim a cell by CAS on head). The
	 * capacity is the task window, which bounds the entries in flight.
	 */
	int32_t *orch_ready;
	alignas(64) _Atomic uint32_t orch_ready_head;
	alignas(64) _Atomic uint32_t orch_ready_tail;

	/*
	 * Per-slot scheduler state ([window] each; slot = id & mask). Written
	 * with atomics by schedulers and, at submit/retire, the orchestrator.
	 */
	_Atomic int32_t *completed;		/* PTO2_TASK_* state */
	_Atomic int32_t *completed_by_task;	/* id whose completion it is */
	_Atomic int32_t *fanin_refcount;	/* producers completed */
	_Atomic int32_t *fanout_refcount;	/* references released */

	alignas(64) _Atomic int32_t next_scan_index;	/* phase 3 claim */
	alignas(64) atomic_flag advance_busy;	/* serializes the advance of
						 * last_task_alive/heap_tail */
	alignas(64) _Atomic int32_t running;	/* tasks on cores */
	_Atomic uint64_t completions;		/* tasks completed */
	alignas(64) _Atomic int32_t sleepers;	/* schedulers in irq_wait */
	struct pto2_ready_queues rq;

	/* per core: task running there or -1; owned by its scheduler thread */
	int32_t *core_task;

	struct pto2_sched_thread *threads;
	uint32_t nr_threads;
	/*
	 * The scheduler threads outlive a run: created by the first run,
	 * they wait on sched_cond between runs (no polling) and end in
	 * pto2_runtime_destroy(). Under sched_lock: sched_gen (bumped by
	 * each run's start), sched_active (threads still in the current
	 * run; the run's end waits for 0), sched_exit.
	 */
	pthread_mutex_t sched_lock;
	pthread_cond_t sched_cond;
	uint32_t sched_gen;
	uint32_t sched_active;
	bool sched_exit;
	_Atomic int stop;			/* schedulers: exit */

	/* ---- run state: lock protects everything below except error ---- */
	pthread_mutex_t lock;
	pthread_cond_t cond;			/* run_done / orch_finished */
	enum pto2_run_state state;
	bool run_done;			/* every task consumed */
	bool orch_finished;		/* orchestration function returned */
	int orch_ret;
	bool orch_thread_live;
	pthread_t orch_thread;
	pto2_orchestration_entry_fn entry;
	uint64_t *args;
	int argc;

	/* ---- error: first one wins; err_lock serializes writers ---- */
	pthread_mutex_t err_lock;
	_Atomic int error;			/* 0 or -errno, release-published */
	char errmsg[PTO2_ERRMSG_LEN];
};

/* pto2_error.c */
__attribute__((format(printf, 3, 4)))
void pto2_rt_fail(PTO2Runtime *rt, int err, const char *fmt, ...);
void pto2_rt_signal(PTO2Runtime *rt);

/* pto2_scheduler.c */
/* Start the schedulers on a run (creating them the first time). */
int pto2_sched_start(PTO2Runtime *rt);
/* End the run for them; returns when none touches the run's state. */
void pto2_sched_stop(PTO2Runtime *rt);
/* End the threads (no run active). */
void pto2_sched_exit(PTO2Runtime *rt);
/* Release one fanout reference of @task_id (scope end, consumer done,
 * own completion); marks it CONSUMED and advances the watermarks when
 * it was the last. Any thread. */
void pto2_release_fanout(PTO2Runtime *rt, int32_t task_id);
/* Try to advance last_task_alive / heap_tail over consumed tasks. */
void pto2_try_advance(PTO2Runtime *rt);
/* Wake sleeping schedulers if there are any. */
static inline void pto2_wake_schedulers(PTO2Runtime *rt)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&rt->sleepers, memory_order_relaxed) > 0 &&
	    rt->dev.irq_wake)
		rt->dev.irq_wake(rt->dev.ctx);
}

/*
 * Wake the schedulers for a newly published task only if all of them
 * sleep: an awake one scans it (a scheduler about to sleep counts itself
 * as a sleeper, fences and rechecks next_scan_index / the early-ready
 * queue before it sleeps), and its push_ready() wakes the sleepers that
 * are needed. This keeps the IRQ syscall off the orchestrator's path.
 */
static inline void pto2_wake_schedulers_for_publish(PTO2Runtime *rt)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&rt->sleepers, memory_order_relaxed) >=
	    (int32_t)rt->nr_threads && rt->dev.irq_wake)
		rt->dev.irq_wake(rt->dev.ctx);
}

/* Device core id of runtime core @c (the core map, see pto2_device). */
static inline uint32_t pto2_core_id(const PTO2Runtime *rt, uint32_t c)
{
	return rt->dev.core_ids ? rt->dev.core_ids[c] : c;
}

/* Register block of runtime core @c. */
static inline struct pto_core_regs *pto2_core_regs(const PTO2Runtime *rt,
						   uint32_t c)
{
	return pto_regs_core(rt->dev.regs, pto2_core_id(rt, c));
}

/* Payload slot of runtime core @core, and its device address. */
static inline PTO2DispatchPayload *pto2_payload(PTO2Runtime *rt, uint32_t core)
{
	return (PTO2DispatchPayload *)(void *)(rt->payload +
					       (size_t)core * rt->payload_stride);
}

static inline uint64_t pto2_payload_dev(const PTO2Runtime *rt, uint32_t core)
{
	return rt->payload_dev + (uint64_t)core * rt->payload_stride;
}

#endif /* PTO2_INTERNAL_H */
