// SPDX-License-Identifier: MIT
/*
 * pto2_internal.h - the runtime structure shared by the orchestrator
 * (pto2_runtime.c), the runtime's side of scheduling (pto2_scheduler.c)
 * and the device's engine (pto2_engine.c)
 */
#ifndef PTO2_INTERNAL_H
#define PTO2_INTERNAL_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pto2_engine.h"
#include "pto2_heap.h"
#include "pto2_ready_queue.h"
#include "pto2_ring.h"
#include "pto2_runtime.h"
#include <pto-private/tensormap.h>
#include "pto2_util.h"
#include <pto-private/usdt.h>

#define PTO2_ERRMSG_LEN	4096

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
	uint32_t nr_cores;		/* the device's cores (payload slots) */
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
	alignas(64) _Atomic int32_t running;	/* core executions in flight
						 * (dispatched or waiting for
						 * their core) */
	_Atomic uint64_t completions;		/* tasks completed */
	/* this run's core executions (engine threads add at completion) */
	_Atomic uint64_t run_blocks;
	_Atomic uint64_t run_busy_ns;		/* sum of ts_end - ts_start */
	_Atomic uint64_t run_wait_ns;		/* sum of ts_start - ts_dispatch */
	_Atomic uint64_t run_wait_max_ns;
	_Atomic uint64_t run_early;		/* of run_blocks, launched early
						 * (engine, at the decision) */
	struct pto2_ready_queues rq;

	/*
	 * The engine: shared by every runtime of a device (dev.engine) or
	 * created for this runtime alone (own_engine). The engine's lock
	 * protects @slot (its DAG slot while a run is attached, -1 when
	 * not), @staged, @ready_seq and @in_rs; the engine's threads read
	 * @attached.
	 */
	struct pto2_engine *engine;
	bool own_engine;
	int32_t slot;
	_Atomic bool attached;
	uint32_t in_rs;			/* kernels in the HWS's ready station */
	struct pto2_heap staged;	/* ready, not yet admitted (by priority) */
	uint32_t ready_seq;		/* staged key under the PTO2 policy */
	/* the run's DAG, as the HWS sees it (set between runs) */
	uint32_t trace_client;		/* the task probes' client and */
	uint64_t trace_graph;		/* graph (pto2_runtime_set_trace) */
	uint32_t hws_ctx;		/* HWS context 0 .. HWS_NR_CTX-1 */
	uint32_t dag_total;		/* kernels of the DAG, 0: unknown */
	bool dag_dynamic;		/* priorities are submission order */
	/*
	 * A static DAG of known size is held: the engine takes none of its
	 * tasks until dag_total are submitted, the orchestration ends or
	 * the orchestrator waits for room or a cluster (pto2_rt_unhold()),
	 * so that it sees the whole DAG's ready set at once. Set by
	 * run_begin, cleared once per run by whoever releases it.
	 */
	_Atomic bool held;

	/* clusters this orchestration holds: id and the scope depth that
	 * allocated it (orchestrator thread only) */
	struct { int32_t id; int depth; } *clusters;
	uint32_t nr_held;

	/* recording runs as DAG files (pto2_record.c), or NULL; set between
	 * runs */
	struct pto2_rec *rec;

	/* estimated ns of one block per kernel id: declared, else measured */
	_Atomic uint64_t kcost[PTO2_MAX_KERNELS];
	_Atomic uint64_t kmeasured[PTO2_MAX_KERNELS];

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
	int abort_next;			/* 0, or the error the next run starts in */

	/* ---- error: first one wins; err_lock serializes writers ---- */
	pthread_mutex_t err_lock;
	_Atomic int error;			/* 0 or -errno, release-published */
	char errmsg[PTO2_ERRMSG_LEN];
};

/*
 * The task probes (provider pto2, Documentation/tracing.rst): a task's
 * life as (client, graph, task, kernel, core, extra), core -1 where no
 * core is involved. (client, task) names a task for as long as the
 * runtime lives (task ids grow across runs). Semaphores in pto2_runtime.c.
 */
PTO_USDT_DECLARE(pto2, task_submit);
PTO_USDT_DECLARE(pto2, task_ready);
PTO_USDT_DECLARE(pto2, task_admit);
PTO_USDT_DECLARE(pto2, task_pick);
PTO_USDT_DECLARE(pto2, task_dispatch);
PTO_USDT_DECLARE(pto2, task_complete);
PTO_USDT_DECLARE(pto2, task_done);
PTO_USDT_DECLARE(pto2, task_consumed);
PTO_USDT_DECLARE(pto2, task_retire);
PTO_USDT_DECLARE(pto2, hws_wait);
PTO_USDT_DECLARE(pto2, task_reserve);
#define PTO2_TASK_PROBE(name, rt, id, kernel, core, extra)		\
	PTO_PROBE6(pto2, name, (rt)->trace_client, (rt)->trace_graph,	\
		   (int32_t)(id), (int32_t)(kernel), (int32_t)(core),	\
		   (int64_t)(extra))

/* pto2_error.c */
__attribute__((format(printf, 3, 4)))
void pto2_rt_fail(PTO2Runtime *rt, int err, const char *fmt, ...);
/* pto2_rt_fail() with an abort's words: "run aborted (@err)" */
void pto2_rt_aborted(PTO2Runtime *rt, int err);
void pto2_rt_signal(PTO2Runtime *rt);

/* pto2_scheduler.c: the runtime's side of scheduling, run by the
 * engine's threads (@thread: the caller's index, for queue sharding) */
/* Claim published tasks; roots become ready. Returns tasks claimed. */
int pto2_rt_scan(PTO2Runtime *rt, uint32_t thread);
/* Take the orchestrator's early-ready tasks. Returns tasks taken. */
int pto2_rt_drain(PTO2Runtime *rt, uint32_t thread);
/* Work for the scan or the drain is waiting. */
bool pto2_rt_feed_pending(PTO2Runtime *rt);
/* The last core execution of @id finished: it is COMPLETED; consumers
 * whose producers are all done become ready. */
void pto2_rt_task_done(PTO2Runtime *rt, uint32_t thread, int32_t id);
/* Release one fanout reference of @task_id (scope end, consumer done,
 * own completion); marks it CONSUMED and advances the watermarks when
 * it was the last. Any thread. */
void pto2_release_fanout(PTO2Runtime *rt, int32_t task_id);
/* Try to advance last_task_alive / heap_tail over consumed tasks. */
void pto2_try_advance(PTO2Runtime *rt);
/* pto2_engine.c: runs attach to the engine and leave it */
int pto2_engine_attach(struct pto2_engine *e, PTO2Runtime *rt);
void pto2_engine_detach(struct pto2_engine *e, PTO2Runtime *rt);
/*
 * Clusters (device-wide pool, one per block): alloc returns an id or
 * -EAGAIN when all are allocated (*@mine: all by @rt itself), -EDQUOT
 * when the runtimes of @rt's cfg.cluster_user hold its cluster_limit
 * (*@mine: all of those by @rt itself); free lets
 * it go once the tasks submitted on it (counted by cluster_task) have
 * completed. -EINVAL: not @rt's (or already freed).
 */
int pto2_engine_cluster_alloc(struct pto2_engine *e, PTO2Runtime *rt,
			      bool *mine);
int pto2_engine_cluster_free(struct pto2_engine *e, PTO2Runtime *rt,
			     int32_t id);
int pto2_engine_cluster_task(struct pto2_engine *e, PTO2Runtime *rt,
			     int32_t id, bool done);
uint64_t pto2_engine_cluster_frees(struct pto2_engine *e);
/* A run failed: drop its kernels from the HWS (nothing new starts). */
void pto2_engine_purge(struct pto2_engine *e, PTO2Runtime *rt);
/*
 * Wake them for a newly published task only if all of them sleep: an
 * awake one finds it (a thread about to sleep counts itself as a sleeper,
 * fences and rechecks), and keeps the irq off the orchestrator's path.
 * Submit calls it only for a task that is ready (submit_publish()).
 */
void pto2_engine_wake_for_publish(struct pto2_engine *e);

static inline void pto2_wake_schedulers(PTO2Runtime *rt)
{
	pto2_engine_wake(rt->engine);
}

/* Release a held DAG (see PTO2Runtime.held): the engine takes its tasks. */
static inline void pto2_rt_unhold(PTO2Runtime *rt)
{
	if (atomic_load_explicit(&rt->held, memory_order_relaxed) &&
	    atomic_exchange(&rt->held, false))
		pto2_wake_schedulers(rt);
}

static inline void pto2_wake_schedulers_for_publish(PTO2Runtime *rt)
{
	pto2_engine_wake_for_publish(rt->engine);
}

/* Clusters of the device: one per block (1 AIC + 2 AIV). */
static inline uint32_t pto2_nr_clusters(const PTO2Runtime *rt)
{
	uint32_t v = (rt->dev.nr_aiv + PTO_AIV_PER_AIC - 1) / PTO_AIV_PER_AIC;

	return rt->dev.nr_aic > v ? rt->dev.nr_aic : v;
}

/* Payload slot of device core @core, and its device address. */
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
