// SPDX-License-Identifier: MIT
/*
 * pto2_runtime.h - the PTO2 runtime core: API for the daemon (ptod)
 *
 * A runtime is one orchestrator plus N scheduler threads over one device
 * (a set of AIC and AIV cores reached through their register blocks) and
 * one memory region (shared-memory structures followed by the GM heap
 * ring). Several runtimes may exist in one process; none uses global
 * mutable state.
 *
 * Life cycle:
 *
 *	pto2_config_default(&cfg);
 *	pto2_config_from_env(&cfg, err, sizeof(err));	// -EINVAL if invalid
 *	size = pto2_runtime_mem_size(&cfg, nr_cores);
 *	pto2_runtime_create(&dev, &cfg, mem, mem_dev_addr, size, &rt);
 *	pto2_runtime_launch(rt, entry, args, argc);	// orchestrator thread
 *	pto2_runtime_wait(rt, timeout_ns);		// 0 or -errno
 *	... launch/wait again (each run starts from empty rings) ...
 *	pto2_runtime_destroy(rt);
 *
 * A run starts the scheduler threads and ends by stopping them once every
 * task has been consumed (or, after an error, once no task is on a core).
 * pto2_runtime_orchestrate() runs the orchestration on the calling thread
 * instead of a new one.
 */
#ifndef PTO2_RUNTIME_H
#define PTO2_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/pto.h>

#include <pto-private/env.h>

#include "pto2_types.h"

/*
 * A device's core thread runs the scheduler's pass for @core (@assist);
 * *@next: a core the pass dispatched to and sent no kick for (@core
 * itself, or one that was parked), which the caller runs next itself
 * (UINT32_MAX: none).
 */
typedef bool (*pto2_assist_fn)(void *arg, uint32_t core, uint32_t *next);

/**
 * struct pto2_device - what the runtime needs from a device.
 * @regs: the device's register file (uapi layout: info page, HWS block,
 *	core blocks; AIC cores are 0 .. nr_aic-1, AIV follow).
 * @nr_aic: AIC cores.
 * @nr_aiv: AIV cores.
 * @ctx: passed to every op.
 * @kick: wake a parked core (its @parked flag was seen set after the
 *	DATA_MAIN_BASE store and a full fence).
 * @irq_count: the device's AICPU interrupt count now.
 * @irq_wait: sleep until the interrupt count differs from *@count or the
 *	absolute CLOCK_MONOTONIC @deadline_ns passes (0 = none); stores the
 *	current count in *@count. Returns 0 or -ETIMEDOUT / -EINTR.
 * @irq_wake: optional: wake the AICPU's irq_wait() sleepers (the
 *	orchestrator uses it when it publishes work for sleeping schedulers);
 *	NULL means schedulers rely on their bounded sleep.
 *
 * @assist: optional: the device's core threads may run the scheduler's
 *	pass for a core whose task they have just finished (pto2_engine.c,
 *	"Assists"). @assist(@ctx, fn, arg) has them call fn(arg, core, &next)
 *	once the core's COND says FIN, skip the completion interrupt when it
 *	returns true (the completion was handled), and claim and run core
 *	next themselves when it is set; 0, or -EBUSY if another
 *	fn is set. @assist(@ctx, NULL, arg) stops the calls of the fn set
 *	with @arg: when it returns, none runs any more.
 * @run_cores: optional: run the device's cores on the calling thread, as
 *	its core threads would: first core @first (UINT32_MAX: none), then
 *	any core found with work, until none is or, between two tasks,
 *	@stop(@arg) returns true; the number of tasks run or -errno. A
 *	runtime whose config has @wait_runs_kernels uses it in
 *	pto2_runtime_wait() (only with @assist: the runtime also runs the
 *	scheduler's pass there).
 *
 * @engine: optional: the device's scheduler, shared by every runtime
 *	created over it (pto2_engine.h); NULL: each runtime creates one of
 *	its own, configured from its pto2_config.
 *
 * A core finds what to run through its task register, which the
 * scheduler writes with the device address of the core's payload slot at
 * every dispatch (pto-private/dispatch.h).
 */
struct pto2_device {
	void *regs;
	uint32_t nr_aic;
	uint32_t nr_aiv;
	void *ctx;
	int (*kick)(void *ctx, uint32_t core);
	uint32_t (*irq_count)(void *ctx);
	int (*irq_wait)(void *ctx, uint32_t *count, int64_t deadline_ns);
	void (*irq_wake)(void *ctx);
	int (*assist)(void *ctx, pto2_assist_fn fn, void *arg);
	int (*run_cores)(void *ctx, uint32_t first, bool (*stop)(void *arg),
			 void *arg);
	struct pto2_engine *engine;
};

/**
 * struct pto2_config - runtime configuration.
 * @task_window: task ring slots (PTO2_RING_TASK_WINDOW), power of 2, >= 4.
 * @heap_size: heap ring bytes (PTO2_RING_HEAP), >= 1024.
 * @dep_pool_size: dependency list entries (PTO2_RING_DEP_POOL), >= 16.
 * @ready_queue_shards: shards per core type (PTO2_READY_QUEUE_SHARDS).
 * @sched_threads: scheduler threads (default 3).
 * @tensormap_pool_size: TensorMap entries.
 * @tensormap_buckets: TensorMap hash buckets (power of 2).
 * @warn_interval: spins between BLOCKED warnings (10,000).
 * @spin_limit: spins without progress before a deadlock (100,000).
 * @sched_idle_spins: empty scheduler loops before sleeping (at most).
 * @sched_idle_ns: and at most this long in empty loops before sleeping
 *	(0: no time limit; applies only to a device with irq_wake, since
 *	without it work published while all schedulers sleep waits for
 *	sched_sleep_ns).
 * @sched_sleep_ns: longest scheduler sleep in irq_wait.
 * @hws_check: run the HWS invariant checker after every decision.
 *	(The sched_* fields and @hws_check configure the runtime's own
 *	engine; a device's shared engine has its own configuration.)
 * @kernel_addrs: optional kernel_id -> function_bin_addr table.
 * @nr_kernel_addrs: its length.
 * @heap_dev: device address of the heap ring (64-byte aligned,
 *	@heap_size bytes) when it lies outside the runtime's memory; 0: it
 *	follows the shared-memory structures in that memory. (ptod puts a
 *	client's heap in a buffer of the client's own file, which the
 *	client's sandbox can map.)
 * @wait_runs_kernels: pto2_runtime_wait() runs the scheduler's passes
 *	and the device's cores on the waiting thread while there is work,
 *	before it sleeps (a device with @run_cores and @assist; otherwise
 *	ignored): no wake-up of a scheduler or core thread for work the
 *	waiter can do, and none of the waiter at the run's end. A kernel
 *	that does not return then holds the wait past its timeout; on by
 *	default.
 * @exec_ctx: the exec_ctx of this runtime's payloads (dispatch.h): 0,
 *	the executor runs its kernels; else the sandbox of that number.
 * @log: log callback (NULL: stderr); @log_ctx its context.
 */
struct pto2_config {
	uint32_t task_window;
	uint64_t heap_size;
	uint32_t dep_pool_size;
	uint32_t ready_queue_shards;
	uint32_t sched_threads;
	uint32_t tensormap_pool_size;
	uint32_t tensormap_buckets;
	uint32_t warn_interval;
	uint32_t spin_limit;
	uint32_t sched_idle_spins;
	uint64_t sched_idle_ns;
	uint64_t sched_sleep_ns;
	bool hws_check;
	bool wait_runs_kernels;
	const uint64_t *kernel_addrs;
	uint32_t nr_kernel_addrs;
	uint64_t heap_dev;
	uint32_t exec_ctx;
	/*
	 * Clusters (pto2_rt_allocate_cluster()): runtimes of one
	 * @cluster_user (0: none, not limited) hold at most @cluster_limit
	 * of the engine's clusters together (0: no limit).
	 */
	uint32_t cluster_user;
	uint32_t cluster_limit;
	pto2_log_fn log;
	void *log_ctx;
};

void pto2_config_default(struct pto2_config *cfg);
/*
 * Apply PTO2_RING_TASK_WINDOW, PTO2_RING_HEAP, PTO2_RING_DEP_POOL and
 * PTO2_READY_QUEUE_SHARDS from the environment. Unset variables keep
 * their value in @cfg. A set but invalid variable makes this return
 * -EINVAL with a message in @err (and nothing of @cfg is changed); the
 * caller decides what to do. Rules in pto2_runtime.c.
 */
int pto2_config_from_env(struct pto2_config *cfg, char *err, size_t errlen);
/* Same, reading variables through @getenv_fn (tests). */
int pto2_config_from_getenv(struct pto2_config *cfg,
			    const char *(*getenv_fn)(void *ctx, const char *name),
			    void *ctx, char *err, size_t errlen);
/*
 * Set @var's field of @cfg from the text @s by the rule the variable has
 * (e.g. "a power of 2 from 4 to 4194304"), or -EINVAL with "must be
 * <rule>" in @err: ptod's options for its defaults use the same rules.
 */
int pto2_config_set_var(struct pto2_config *cfg, enum pto_env_var var,
			const char *s, char *err, size_t errlen);
/* -EINVAL with a message if @cfg is out of range. */
int pto2_config_validate(const struct pto2_config *cfg, char *err, size_t errlen);

/*
 * Bytes of the shared-memory structures: header, task descriptors, dep
 * list pool (+ sentinel) and the payload area (pto2_types.h).
 */
size_t pto2_sm_size(uint32_t task_window, uint32_t dep_pool_size,
		    uint32_t nr_cores);
/*
 * Bytes of memory a runtime needs: SM region, then the heap (4 KiB
 * aligned); only the SM region if @cfg places the heap elsewhere
 * (heap_dev).
 */
size_t pto2_runtime_mem_size(const struct pto2_config *cfg, uint32_t nr_cores);

/*
 * Create a runtime over @dev (copied) and @mem (host address of @mem_size
 * bytes whose device address is @mem_dev_addr; 64-byte aligned). The
 * runtime owns nothing of @dev or @mem; they must outlive it.
 */
int pto2_runtime_create(const struct pto2_device *dev,
			const struct pto2_config *cfg, void *mem,
			uint64_t mem_dev_addr, size_t mem_size,
			PTO2Runtime **out);
void pto2_runtime_destroy(PTO2Runtime *rt);

/*
 * Between runs: the DAG of the next runs, as the HWS sees it: its number
 * of tasks (0: unknown) and whether it is dynamic (streamed: offline
 * priority is submission order) or static (tasks carry their priority,
 * PTO2_ATTR_PRIORITY). A static DAG with a task count is held: none of
 * its tasks runs before @total_tasks are submitted, the orchestration
 * ends or the orchestrator waits for room or a cluster. -EBUSY during a
 * run.
 */
int pto2_runtime_set_dag(PTO2Runtime *rt, uint32_t total_tasks, bool dynamic);
/*
 * Record the runs of @rt for pto-hws-sim: from the next run on, each run
 * that completes is appended to @f when it is waited for, as a DAG named
 * @name.N (N from 1) arriving at its start minus @epoch_ns: its tasks in
 * submission order with their kernel, core type, launch shape, the
 * estimate they were submitted with, the longest time one of their
 * blocks took on a core (the cost), and their producers; @name is cut to
 * PTO_DAGF_REC_NAME_MAX bytes, so that @name.N is a valid DAG name. Several
 * runtimes may share @f (each DAG is written under the file's lock); the
 * caller owns it. @f NULL stops. -EBUSY during a run, -ENOMEM.
 */
int pto2_runtime_record(PTO2Runtime *rt, FILE *f, const char *name,
			int64_t epoch_ns);
/*
 * The client and graph the task probes name this runtime's tasks with
 * (Documentation/tracing.rst; default 0, 0); set between runs.
 */
void pto2_runtime_set_trace(PTO2Runtime *rt, uint32_t client, uint64_t graph);
/*
 * The id of the task the orchestrator submitted last, or -1 if the run
 * has failed (its last submit may not have made a task).
 */
int32_t pto2_rt_last_task_id(PTO2Runtime *rt);
/*
 * Is cluster @id held by this run's orchestration (allocated, and neither
 * freed nor released by its scope's end)? For the orchestrator thread.
 */
bool pto2_runtime_cluster_held(PTO2Runtime *rt, int32_t id);
/* The HWS context of this runtime's tasks (0 .. 3; default 0). */
int pto2_runtime_set_context(PTO2Runtime *rt, uint32_t ctx);
/* The engine this runtime's tasks are scheduled by. */
struct pto2_engine *pto2_runtime_engine(PTO2Runtime *rt);

/* Start a run: scheduler threads plus an orchestrator thread running
 * @entry(rt, args, argc) inside a scope, then orchestration_done. */
int pto2_runtime_launch(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
			uint64_t *args, int argc);
/* Start a run with the orchestration on the calling thread; returns when
 * the orchestration function returned (the run goes on: call wait). */
int pto2_runtime_orchestrate(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
			     uint64_t *args, int argc);
/*
 * Wait for the run to end: 0 when every task was consumed, the runtime's
 * error otherwise, -ETIMEDOUT if @timeout_ns (relative; 0 = forever)
 * passed first (the run goes on). Stops the scheduler threads.
 */
int pto2_runtime_wait(PTO2Runtime *rt, uint64_t timeout_ns);
/*
 * Put a run into the error state (-ECANCELED unless @err given). With no
 * run active, the next run starts in it (and ends at once): an abort
 * that races with the start of a run is not lost.
 */
void pto2_runtime_abort(PTO2Runtime *rt, int err);

/* Counters of the last run. */
struct pto2_stats {
	uint64_t tasks_submitted;
	uint64_t tasks_completed;
	uint64_t heap_bytes_allocated;
	uint64_t tensormap_truncated;
	uint64_t tensormap_cleaned;
	uint64_t task_ring_blocked;	/* submits that waited for a slot */
	uint64_t sched_sleeps;
	uint64_t kicks;
	uint64_t assists;	/* scheduler passes run by core threads */
	/* the run's core executions (blocks), their kernel time (end - start)
	 * and their wait from dispatch to start, on the system counter */
	uint64_t blocks;
	uint64_t busy_ns;
	uint64_t wait_ns;
	uint64_t wait_max_ns;
	/* of the run's core executions, those the HWS launched early: onto
	 * a core still running its previous kernel, to start when it ends */
	uint64_t early;
};
void pto2_runtime_get_stats(PTO2Runtime *rt, struct pto2_stats *st);
/* Tasks completed so far (any thread, during a run too). */
uint64_t pto2_runtime_completions(PTO2Runtime *rt);

/* Shared-memory header of the runtime (tests, executors). */
PTO2SharedMemoryHeader *pto2_runtime_sm(PTO2Runtime *rt);

#endif /* PTO2_RUNTIME_H */
