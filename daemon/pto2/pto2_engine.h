// SPDX-License-Identifier: MIT
/*
 * pto2_engine.h - the device's scheduler: one per device, every runtime's
 * ready tasks, every core
 *
 * A runtime (pto2_runtime.h) is one client's orchestrator, TensorMap,
 * rings and scopes: it finds out which of its tasks are ready. The engine
 * is the AICPU's scheduling side for the whole device: its threads take
 * the ready tasks of every attached runtime into the hardware scheduler
 * (daemon/hws/hws.h, whose policy register chooses between the HWS and
 * PTO2's default order), dispatch each decision to its cores, notice the
 * cores' completions and hand them back to the runtime that owns the
 * task. Cores are shared task by task: no runtime owns a core longer than
 * a task of it runs there.
 *
 * A dispatch writes the task's payload into the owning runtime's payload
 * slot for that core, the slot's device address into the core's task
 * register, ts_dispatch, then DATA_MAIN_BASE = dispatch id + 1 (release).
 * Dispatch ids are the engine's, unique per dispatch, so that a core
 * always sees a new value even when two runtimes' task ids coincide or
 * one task's blocks run on the same core one after the other; COND FIN
 * carries the dispatch id.
 *
 * Threads: @threads scheduler threads; each polls the completions of an
 * equal share of the cores, and every one of them scans the attached
 * runtimes for newly ready tasks, admits them into the HWS and runs
 * decisions (one at a time, under the engine lock). A thread with nothing
 * to do sleeps in the device's irq_wait after enabling the completion
 * interrupt of its busy cores.
 */
#ifndef PTO2_ENGINE_H
#define PTO2_ENGINE_H

#include <stdint.h>

#include "hws.h"
#include "pto2_types.h"

struct pto2_device;
struct pto2_engine;

/**
 * struct pto2_engine_config - what an engine is created with.
 * @threads: scheduler threads at most (1 .. PTO2_SCHED_THREADS_MAX): the
 *	engine runs one per PTO2_BLOCKS_PER_SCHED_THREAD blocks of the
 *	device, up to this and up to half the host's CPUs.
 * @idle_spins: empty loops before a thread sleeps, at most...
 * @idle_ns: ...and at most this long (0: no time limit; applies only to a
 *	device with irq_wake).
 * @sleep_ns: longest sleep in irq_wait on a device without irq_wake.
 * @wake_sleep_ns: longest sleep of a thread that found no work in its
 *	last sleeps, on a device with irq_wake: new work and completions
 *	wake a sleeper at once, so this bound only caps what a lost wake-up
 *	(a bug) would cost; idle, a thread wakes this often.
 * @predict_ns: a thread polls instead of sleeping from this long before a
 *	dispatch on its cores should end (dispatch time + the task's
 *	estimate) until it ends, so that a completion is seen without an
 *	interrupt and a wake-up (0: never); from longer still by as much
 *	as its sleeps have lately ended past their deadline (at most
 *	PTO2_ENGINE_LATE_MAX_NS more).
 * @predict_late_ns: ...and at most this long past the expected end (an
 *	estimate that was too short).
 * @yield_polls: a polling thread gives up its CPU (sched_yield()) once
 *	every this many empty polls (0: never): on a host with fewer CPUs
 *	than runnable threads, the orchestrator that is to submit the next
 *	task, or the thread that is to run the kernel a poll waits for, may
 *	be waiting for the very CPU the poller holds.
 * @hws: the HWS registers (hws_config_default() for the device's layout
 *	if @hws_set is false).
 * @hws_set: @hws is given.
 * @check: run the HWS invariant checker after every decision and fail
 *	loudly on a violation (tests; ptod with PTO_HWS_CHECK=1).
 * @follow_regs: before each decision, load the register file's HWS
 *	configuration if its CFG_SEQ moved (ptod: PTO_IOC_HWS_CONFIG
 *	changes apply from the next decision).
 * @log, @log_ctx: log callback (NULL: stderr).
 */
struct pto2_engine_config {
	uint32_t threads;
	uint32_t idle_spins;
	uint64_t idle_ns;
	uint64_t sleep_ns;
	uint64_t wake_sleep_ns;
	uint64_t predict_ns;
	uint64_t predict_late_ns;
	uint32_t yield_polls;
	struct hws_config hws;
	bool hws_set;
	bool check;
	bool follow_regs;
	pto2_log_fn log;
	void *log_ctx;
};

#define PTO2_BLOCKS_PER_SCHED_THREAD	8
#define PTO2_ENGINE_PREDICT_NS		50000	/* 50 us */
#define PTO2_ENGINE_PREDICT_LATE_NS	500000	/* 500 us */
/*
 * Most a thread polls early for its sleeps' lateness (poll_ahead() in
 * pto2_engine.c): on a host whose timers are later still, completions
 * are noticed through the interrupt.
 */
#define PTO2_ENGINE_LATE_MAX_NS		200000	/* 200 us */
#define PTO2_ENGINE_YIELD_POLLS		16
/* Timer slack of the scheduler threads (PR_SET_TIMERSLACK; default 50 us). */
#define PTO2_ENGINE_TIMER_SLACK_NS	1000UL	/* 1 us */

/* Defaults: 3 threads, the runtime's idle and sleep bounds, HWS defaults. */
void pto2_engine_config_default(struct pto2_engine_config *cfg);

/*
 * An engine over @dev (copied; it must outlive the engine). Its threads
 * start at once and sleep until a runtime attaches.
 */
int pto2_engine_create(const struct pto2_device *dev,
		       const struct pto2_engine_config *cfg,
		       struct pto2_engine **out);
/* No runtime may be attached. */
void pto2_engine_destroy(struct pto2_engine *e);

/*
 * New HWS register values (policy, usage masks, promotion, ...): 0, or
 * -EINVAL with the reason in @msg and nothing changed. They apply from
 * the next decision.
 */
int pto2_engine_configure(struct pto2_engine *e, const struct hws_config *c,
			  char *msg, size_t msglen);
/*
 * Load the HWS registers of the device's register file (core bitmaps
 * become SIP masks) if their CFG_SEQ moved since the last load: 1 if they
 * did and apply from the next decision, 0 if not (or a writer is between
 * its two CFG_SEQ stores), -EINVAL if the HWS refuses them (the previous
 * ones stay; logged). The engine also publishes the HWS status
 * registers (idle, pre-idle, reserved cores, remaining times in us) into
 * the register file after its decisions.
 */
int pto2_engine_load_regs(struct pto2_engine *e);
/* The HWS registers in force. */
void pto2_engine_get_config(struct pto2_engine *e, struct hws_config *c);
/* The scheduler threads the engine runs. */
uint32_t pto2_engine_threads(const struct pto2_engine *e);
/* The device's clusters: pto2_rt_allocate_cluster() returns 0 .. this - 1. */
uint32_t pto2_engine_clusters(const struct pto2_engine *e);
/* The device layout the HWS places blocks in. */
const struct hws_layout *pto2_engine_layout(const struct pto2_engine *e);

/**
 * struct pto2_block_event - one block that ran (the block hook).
 * @client, @graph: the runtime's pto2_runtime_set_trace() values.
 * @task, @kernel, @core: the task id, its kernel, the core it ran on.
 * @dispatch_ns, @start_ns, @end_ns: the core's timestamps, CLOCK_MONOTONIC.
 */
struct pto2_block_event {
	uint32_t client;
	uint32_t core;
	uint64_t graph;
	int32_t task;
	int32_t kernel;
	int64_t dispatch_ns;
	int64_t start_ns;
	int64_t end_ns;
};

typedef void (*pto2_block_fn)(void *ctx, const struct pto2_block_event *ev);

/*
 * The block hook: while enabled, @fn(@ctx, event) is called by the
 * engine's threads for every block that finished (it must not block).
 * Set it before any runtime attaches; disabled, it costs one relaxed
 * load per block and nothing is computed for it.
 */
void pto2_engine_set_block_hook(struct pto2_engine *e, pto2_block_fn fn,
				void *ctx);
void pto2_engine_block_hook_enable(struct pto2_engine *e, bool on);

/* The runtime whose task core @core runs now, or NULL (diagnostics). */
struct PTO2Runtime *pto2_engine_core_runtime(struct pto2_engine *e,
					     uint32_t core);
/*
 * The dispatch core @core runs now, from the engine's own record (the
 * core's registers may have been reset since, e.g. by a CORE_ATTACH):
 * true with its id in *@id and its payload's device address in *@payload,
 * false if the core runs none.
 */
bool pto2_engine_core_dispatch(struct pto2_engine *e, uint32_t core,
			       uint32_t *id, uint64_t *payload);

/*
 * Wake sleeping scheduler threads (if any) to look for work: for what no
 * interrupt reports, e.g. a completion the caller wrote on behalf of a
 * dead executor.
 */
void pto2_engine_wake(struct pto2_engine *e);

/*
 * Run, on the calling thread, the pass of every scheduler thread whose
 * pass nobody holds (completions, admission, decisions), as the device's
 * core threads do after a task (pto2_device.assist): a thread that waits
 * for a run does the scheduler's work meanwhile. Only on an engine whose
 * device takes assists; true if a pass found work. *@next: a core
 * dispatched to and sent no kick (it was parked), which the caller must
 * run (pto2_device.run_cores), or UINT32_MAX.
 */
bool pto2_engine_help(struct pto2_engine *e, uint32_t *next);

/*
 * Withhold the cores of @mask (PTO_CORE_MASK_WORDS words; NULL: every
 * core) from dispatch, or give them back (@withhold false): a core another executor attached
 * is not the AICPU's to use. A dispatch the HWS plans onto a withheld
 * core writes none of its registers; the task fails at once ("core C is
 * attached by another executor"). Dispatches already running there are
 * the caller's to fail (pto2_engine_core_dispatch()).
 */
void pto2_engine_withhold(struct pto2_engine *e, const uint64_t *mask,
			  bool withhold);
/* Is @core withheld? */
bool pto2_engine_withheld(struct pto2_engine *e, uint32_t core);

/* Counters since create. */
struct pto2_engine_stats {
	uint64_t dispatches;	/* core dispatches */
	uint64_t kicks;		/* of them, to a parked core */
	uint64_t sleeps;	/* scheduler sleeps in irq_wait */
	uint64_t admitted;	/* kernels into the HWS */
	uint64_t early;		/* dispatches that waited for their core */
	uint64_t assists;	/* passes run by the device's core threads */
	uint64_t evicted;	/* kernels taken back out of the HWS (admit()) */
	struct hws_stats hws;
};
void pto2_engine_get_stats(struct pto2_engine *e, struct pto2_engine_stats *st);

#endif /* PTO2_ENGINE_H */
