// SPDX-License-Identifier: MIT
/*
 * pto_exec.h - the executor core: how an emulated AICore runs a task
 *
 * One piece of code, used by every executor: pto-aicore (cores of pto.ko,
 * kernels loaded from GM) and the sim device (in-process cores, kernels
 * registered by id). What differs between them is behind struct
 * pto_exec_ops: how a kernel is found, how idle threads sleep in their
 * device, how the AICPU interrupt is raised. Everything else, the
 * handshake, the payload, the kernel context, timestamps and counters,
 * and the threads that run the cores (pto_exec_pool.c), is here.
 *
 * The protocol of one core (Documentation/uapi.rst, "Notification
 * protocol"):
 *
 *   a thread with nothing to do spins briefly over DATA_MAIN_BASE of its
 *   cores; then parked = 1 on each idle core, full fence, recheck, sleep
 *   in the device (ops->park_any) until one of them is kicked;
 *   PTO_DMB_EXIT: the core stops;
 *   PTO_DMB_IDLE: COND = IDLE (the AICPU's reset handshake);
 *   dispatch id + 1: COND = ACK(id), ts_start, read the payload through
 *   the task register, translate tensor arguments into this process's
 *   mapping of GM, find and run the kernel with the context of its launch
 *   (block, thread, profile) -- or, if the payload's exec_ctx names a
 *   sandbox, hand the task to it (ops->hand_off) and wait for its
 *   answer -- (a kernel's pre-complete report while it runs: the core's
 *   bit ORed into SIP_REPORT_PRE_COMPLETE, then the interrupt as below),
 *   store the result in the payload's status,
 *   ts_end, COND = FIN(id) (release), full fence, and raise the AICPU
 *   interrupt if the core's irq_en or the AICPU's aicpu_irq_en is set
 *   (unless ops->task_done handled the completion on this thread).
 *
 * Timestamps are the device's system counter (pto_sys_cnt(), the info
 * page's epoch), the same time base as the AICPU's ts_dispatch.
 */
#ifndef PTO_EXEC_H
#define PTO_EXEC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto-private/dispatch.h>
#include <pto-private/gm.h>

struct pto_exec;

/**
 * struct pto_exec_ops - what an executor's device provides.
 * @kernel: find the kernel of the task in @p, which runs on @core; 0,
 *	*@fn and *@ref (what keeps the kernel loaded while it runs: given
 *	to @kernel_put once it returned), or a negative errno (the task
 *	then fails with it) and nothing to put.
 * @kernel_put: optional: the kernel of @ref returned (a kernel that never
 *	returns keeps its reference).
 * @park_any: sleep until one of the cores of @mask (PTO_CORE_MASK_WORDS
 *	words) is kicked, at most until @deadline_ns (CLOCK_MONOTONIC, 0:
 *	none); the caller has set their parked flags and rechecked. 0 on a
 *	wake-up (*@core: the core kicked, a hint: the caller looks at every
 *	core again), -ETIMEDOUT or -EINTR to look again; any other negative
 *	errno stops the threads.
 * @raise_irq: raise the AICPU interrupt on behalf of @core.
 * @task_done: optional: @core's COND says FIN (fenced); true if the
 *	device handled the completion on this thread (the sim device: the
 *	scheduler's pass, pto2_device.assist), and no interrupt is raised;
 *	*@next: a core given work that nobody was woken for, which this
 *	thread must run next (UINT32_MAX: none).
 * @hand_off: optional: run the task in @p (exec_ctx != 0) in the sandbox
 *	it names and return its status once it has run there; a task
 *	whose sandbox is gone fails with -EOWNERDEAD (as it does when
 *	@hand_off is NULL). pto-aicore's is in aicore_sbx.c.
 * @pre_complete: optional: the kernel running on @core reported
 *	pre-complete (pto_kernel_pre_complete(), at most once a task); NULL:
 *	pto_exec_pre_complete(). A sandbox's passes the report to the
 *	executor that handed it the task.
 * @log: optional: a message about @core (NULL: stderr).
 */
struct pto_exec_ops {
	int (*kernel)(struct pto_exec *ex, const PTO2DispatchPayload *p,
		      uint32_t core, pto_kernel_entry_fn *fn, void **ref);
	void (*kernel_put)(struct pto_exec *ex, void *ref);
	int (*park_any)(struct pto_exec *ex, const uint64_t *mask,
			int64_t deadline_ns, uint32_t *core);
	void (*raise_irq)(struct pto_exec *ex, uint32_t core);
	bool (*task_done)(struct pto_exec *ex, uint32_t core, uint32_t *next);
	int (*hand_off)(struct pto_exec *ex, uint32_t core,
			const PTO2DispatchPayload *p);
	void (*pre_complete)(struct pto_exec *ex, uint32_t core);
	void (*log)(struct pto_exec *ex, const char *msg);
	/* spin_yield when PTO_EXEC_SPIN_YIELD is unset (enum pto_exec_yield) */
	uint8_t spin_yield;
};

/**
 * struct pto_exec - an executor: its view of the device.
 * @regs: the register file (uapi layout: info page, HWS, cores); NULL
 *	in a sandbox, which runs the kernels handed to it and no core.
 * @gm: GM as this process maps it (translates payload and tensor
 *	addresses).
 * @nr_aic: AIC cores of the device (kernel context geometry).
 * @nr_aiv: AIV cores of the device.
 * @profile: the device's profile (enum pto_profile; kernel context).
 * @caps: the device's PTO_CAP_* bits (kernel context).
 * @spins: polls of DATA_MAIN_BASE before parking, at most...
 * @spin_ns: ...and at most this long (0: no time limit).
 * @ops: the device's operations.
 * @unparks: the device may clear the parked flags of a whole set that
 *	park_any sleeps on (pto.ko: once no thread is left asleep), and
 *	returns at once a core whose flag it finds clear: after a wake-up
 *	that found no work, every clear flag of the set is set again, not
 *	only the kicked core's.
 * @priv: the executor's own data.
 * @tasks: tasks run (all cores).
 * @parks: times a core slept in the device.
 *
 * Set up before any core runs; read-only afterwards except the counters.
 */
struct pto_exec {
	void *regs;
	struct pto_gm_map gm;
	uint32_t nr_aic;
	uint32_t nr_aiv;
	uint32_t profile;
	uint64_t caps;
	uint32_t spins;
	int64_t spin_ns;
	uint8_t spin_yield;		/* enum pto_exec_yield */
	const struct pto_exec_ops *ops;
	bool unparks;
	void *priv;
	_Atomic uint64_t tasks;
	_Atomic uint64_t parks;
};

/*
 * Default spin bounds: a thread with nothing to do polls its cores at most
 * this many times and this long before it parks.
 */
#define PTO_EXEC_SPINS		2000
#define PTO_EXEC_SPIN_NS	4000

/*
 * Whether a spinning thread yields its CPU every 16 polls (spin_yield;
 * pto_exec_pool.c, spin()): NEVER; AUTO while the host has more runnable
 * threads than CPUs (someone waits for one) but no more than a few more
 * (no other work keeps it busy); ALWAYS. The backend's default is its
 * ops' spin_yield: AUTO for pto-aicore and the in-process sim device
 * alike. PTO_EXEC_SPIN_YIELD in the environment overrides it: 0 =
 * never, auto, 1 = always. pto_exec_spin_yield_env() reads it into
 * *@mode: 0 (*@mode unchanged when it is unset), or -EINVAL (*@mode
 * unchanged) for any other value.
 */
enum pto_exec_yield {
	PTO_EXEC_YIELD_NEVER,
	PTO_EXEC_YIELD_AUTO,
	PTO_EXEC_YIELD_ALWAYS,
};

#define PTO_EXEC_SPIN_YIELD_ENV	"PTO_EXEC_SPIN_YIELD"
int pto_exec_spin_yield_env(uint8_t *mode);

/* "never", "auto" or "always" (enum pto_exec_yield); "?" if none. */
const char *pto_exec_spin_yield_name(uint8_t mode);

/* Fill @ex's defaults and the geometry of the device at @regs. */
void pto_exec_init(struct pto_exec *ex, void *regs,
		   const struct pto_exec_ops *ops, void *priv);

/*
 * Run dispatch @id, which DATA_MAIN_BASE of @core has just announced
 * (the payload names the task). Returns a core the caller must run next
 * (ops->task_done), or UINT32_MAX.
 */
uint32_t pto_exec_run_task(struct pto_exec *ex, uint32_t core, uint32_t id);

/*
 * Whether the AICPU wants an interrupt for @core's events: the core's
 * irq_en or the AICPU's aicpu_irq_en is set (read after a full fence).
 */
bool pto_exec_irq_wanted(const struct pto_exec *ex, uint32_t core);

/*
 * SIP_REPORT_PRE_COMPLETE for @core: its bit ORed into the doorbell,
 * then, as a completion does, the AICPU interrupt if the core's irq_en
 * or the AICPU's aicpu_irq_en is set. What a kernel's report comes to,
 * in the executor that runs the core.
 */
void pto_exec_pre_complete(struct pto_exec *ex, uint32_t core);

/*
 * Run the kernel of the task in @p on @core in this process (the kernel
 * context of its launch, tensor arguments translated through ex->gm):
 * the task's status, 0 or -errno. pto_exec_run_task() calls it for
 * tasks of this process; a sandbox for the tasks handed to it.
 */
int pto_exec_run_payload(struct pto_exec *ex, uint32_t core,
			 const PTO2DispatchPayload *p);

/* A message about the executor (ops->log, else stderr). */
__attribute__((format(printf, 2, 3)))
void pto_exec_log(struct pto_exec *ex, const char *fmt, ...);

/* ---- The threads that run the cores ---------------------------------------- */

struct pto_exec_pool;

/**
 * struct pto_exec_pool_config - how a pool runs its cores.
 * @cores: the cores it serves (bit i of word i / 64: core i).
 * @workers: host threads that take whatever core is given work (0: the
 *	host's online CPUs). More threads are started only when a dispatch
 *	would otherwise wait on a kernel that has not finished: see
 *	pto_exec_pool_start().
 * @grow_ns: with every thread running a kernel, a dispatched core that no
 *	thread took for this long gets a new thread (0: the default).
 * @retire_ns: a thread beyond @workers that had nothing to do for this
 *	long exits (0: the default).
 * @linger_ns: a thread that has just run a task polls for work this long
 *	before it parks, instead of the executor's spins and spin_ns (0: the
 *	default, PTO_EXEC_LINGER_NS; negative: no lingering): the AICPU
 *	dispatches the task's dependents as soon as it sees the completion,
 *	and a thread still polling takes one without a park, a kick and a
 *	wake-up.
 * @hand_over_ns: a thread whose task ran at least this long and whose
 *	completion the AICPU polls for gives its CPU away once (sched_yield)
 *	after posting the completion (0: the default, PTO_EXEC_HAND_OVER_NS;
 *	negative: never). The thread of a long kernel often wakes on the CPU
 *	the polling AICPU thread holds, which then sees the completion only
 *	when that CPU is given back; elsewhere the yield returns at once.
 * @park_ns: longest sleep of a thread that parked for want of work (0: the
 *	default, PTO_EXEC_PARK_NS). Kicks end a park (for work, and on both
 *	devices for the AICPU's going), so this bound only caps what a lost
 *	kick would cost; each wake of an idle thread costs CPU. A test makes
 *	it long so that a lost kick shows as a stall.
 * @name: thread name prefix (at most 8 characters are used).
 */
struct pto_exec_pool_config {
	uint64_t cores[PTO_CORE_MASK_WORDS];
	uint32_t workers;
	uint64_t grow_ns;
	uint64_t retire_ns;
	int64_t linger_ns;
	int64_t hand_over_ns;
	uint64_t park_ns;
	const char *name;
};

#define PTO_EXEC_GROW_NS	200000		/* 200 us */
#define PTO_EXEC_RETIRE_NS	50000000	/* 50 ms */
#define PTO_EXEC_PARK_NS	1000000000	/* 1 s */
/*
 * No lingering by default: on a host whose CPUs other work keeps busy, a
 * lingering thread held up the scheduler thread it waited for (the serial
 * chain of bench-peers went from 18-20 to up to 400 us per hop);
 * performance.md, "Dispatch latency to sleeping cores".
 */
#define PTO_EXEC_LINGER_NS	(-1)
/*
 * A yield costs about 0.5 us on these machines: after a task of 50 us or
 * more, at most 1% (hws.rst, "Target a, live on the sim device").
 */
#define PTO_EXEC_HAND_OVER_NS	50000		/* 50 us */

/**
 * struct pto_exec_pool_stats - what a pool did.
 * @threads: threads running now.
 * @peak: most threads at once.
 * @grown: threads started beyond @workers (stalled dispatches,
 *	launches whose kernels run together).
 * @retired: threads that exited for lack of work.
 * @hand_overs: yields after a long task (pto_exec_pool_config.hand_over_ns).
 * @stale_kicks: kicks that woke a thread for work another thread had
 *	taken; it slept again at once.
 * @empty_wakes: sleeps that ended with no core to run (the park bound,
 *	an interruption, a core not the pool's, the pool stopping).
 * @moves: threads that moved to an idle CPU, having found company on
 *	theirs (pto_cpu_share.h).
 */
struct pto_exec_pool_stats {
	uint32_t threads;
	uint32_t peak;
	uint64_t grown;
	uint64_t retired;
	uint64_t hand_overs;
	uint64_t stale_kicks;
	uint64_t empty_wakes;
	uint64_t moves;
};

/*
 * Start threads that run the cores of @cfg on @ex: @cfg->workers of them
 * (the host's CPUs by default), each taking whichever core was given work
 * and parking on all idle cores at once (ops->park_any) when none is.
 * Emulated cores keep their own registers, handshake and semantics; only
 * the host threads are fewer.
 *
 * Kernels that must run at the same time still do: a launch whose blocks
 * run together (cooperative, PTO2_PAYLOAD_COOP) or whose block spans
 * several cores (thread_num > 1) makes sure, before its kernel starts,
 * that a thread is free for every other core given work; and a dispatch
 * that waits longer than grow_ns while every thread runs a kernel (a
 * kernel that sleeps or waits) gets a thread of its own. So every core
 * with work gets a thread, at most one per core; threads beyond @workers
 * exit after retire_ns without work. 0 or -errno.
 */
int pto_exec_pool_start(struct pto_exec *ex,
			const struct pto_exec_pool_config *cfg,
			struct pto_exec_pool **out);
/*
 * Wait until every core of the pool has stopped (PTO_DMB_EXIT, or the
 * AICPU went away and nothing is left to run, or ops->park_any failed),
 * then free it. Returns 0 or park_any's error.
 */
int pto_exec_pool_join(struct pto_exec_pool *p);
/*
 * Run cores of @p on the calling thread, as one of its threads would:
 * first @first (a core a dispatch sent no kick for, which this thread is
 * to run; UINT32_MAX: none), then every core found with work, until none
 * is found or, between two tasks, @stop(@arg) (optional) returns true.
 * The thread counts as one of the pool's while it is in here, so
 * launches whose kernels run together still get a thread for every
 * other core. A kernel that does not return holds the caller. The
 * number of tasks run, or -ESHUTDOWN if the pool has stopped.
 */
int pto_exec_pool_help(struct pto_exec_pool *p, uint32_t first,
		       bool (*stop)(void *arg), void *arg);
void pto_exec_pool_get_stats(struct pto_exec_pool *p,
			     struct pto_exec_pool_stats *st);

#endif /* PTO_EXEC_H */
