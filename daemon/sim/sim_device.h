// SPDX-License-Identifier: MIT
/*
 * sim_device.h - an in-process device for native tests and benchmarks
 *
 * Plain memory plays GM and the register file (the uapi layout: info
 * page, HWS block, per-core blocks); the executor's pool of host threads
 * (daemon/exec/pto_exec_pool.c, as many as the host has CPUs) plays the
 * AICores. The cores run the executor core (daemon/exec/pto_exec.h), the
 * same code pto-aicore runs, so they honour the device protocol exactly
 * as pto-aicore does. What is the sim's own:
 *
 *   - kernels are C functions (pto_kernel_entry_fn) registered by kernel
 *     id, not shared objects loaded from GM;
 *   - a thread with no core to run sleeps in the device's parking lot
 *     (pto-private/parklot.h; what PTO_IOC_CORE_WAIT_ANY does in pto.ko),
 *     and kick() latches the core's kick and wakes one if needed;
 *   - the AICPU interrupt is a counter with FUTEX_WAKE (irq_wait() is
 *     FUTEX_WAIT on it);
 *   - the AICPU's scheduler runs in this process too, so a core thread
 *     that has just posted a completion runs the scheduler's pass itself
 *     (dev.assist, pto2_engine.c "Assists") instead of waking a scheduler
 *     thread; PTO_SIM_ASSIST=0 turns that off (SIM_ASSIST_ENV).
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto-private/parklot.h>

#include "pto2_runtime.h"
#include "pto_exec.h"

#define SIM_MAX_KERNELS	64
/* "0": core threads do not run the scheduler's pass; "1" (default): do */
#define SIM_ASSIST_ENV	"PTO_SIM_ASSIST"

/**
 * struct sim_device - the simulated device.
 * @dev: the device as the runtime sees it (ops bound to this sim).
 * @exec: the executor its cores run (register file, GM map, counters).
 * @regs: the register file, PTO_REGS_SIZE bytes.
 * @nr_aic, @nr_aiv, @nr_cores: core counts.
 * @kernels: kernel id -> function (set before runs; read by cores).
 * @irq_count: the AICPU interrupt count (futex word).
 * @kicked: kicks not yet taken by an executor thread (core bitmap).
 * @kick: where executor threads sleep for kicks (pto-private/parklot.h).
 * @pool: the executor's threads.
 * @assist_lock: serializes dev.assist() calls.
 * @assist_fn, @assist_arg: the scheduler's pass the core threads run
 *	after a task (@assist_arg written before @assist_fn is set).
 * @assisting: core threads inside @assist_fn.
 * @assist_off: PTO_SIM_ASSIST=0.
 * @stat_irqs, @stat_kicks: counters.
 * @stat_core_irqs: of @stat_irqs, those the cores raised for completions.
 */
struct sim_device {
	struct pto2_device dev;
	struct pto_exec exec;
	void *regs;
	uint32_t nr_aic, nr_aiv, nr_cores;
	pto_kernel_entry_fn kernels[SIM_MAX_KERNELS];
	_Atomic uint32_t irq_count;
	_Atomic uint64_t kicked[PTO_CORE_MASK_WORDS];
	struct pto_parklot kick;
	struct pto_exec_pool *pool;
	pthread_mutex_t assist_lock;
	_Atomic(pto2_assist_fn) assist_fn;
	void *assist_arg;
	_Atomic uint32_t assisting;
	bool assist_off;
	_Atomic uint64_t stat_irqs;
	_Atomic uint64_t stat_kicks;
	_Atomic uint64_t stat_core_irqs;
};

/*
 * @gm_size bytes of GM at device address PTO_GM_DEV_BASE; the cores run
 * on the executor's threads as @pool says (its @cores are ignored: every
 * core), or as pto_exec_pool_start() does by default (@pool NULL, as
 * sim_device_create() does: as many threads as the host has CPUs).
 */
int sim_device_create_pool(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
			   const struct pto_exec_pool_config *pool,
			   struct sim_device **out);
int sim_device_create(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
		      struct sim_device **out);
void sim_device_destroy(struct sim_device *sd);
int sim_device_set_kernel(struct sim_device *sd, int32_t kernel_id,
			  pto_kernel_entry_fn fn);

static inline void *sim_dev_to_host(struct sim_device *sd, uint64_t dev_addr)
{
	return pto_gm_ptr(&sd->exec.gm, dev_addr, 1);
}

static inline uint64_t sim_host_to_dev(struct sim_device *sd, const void *p)
{
	return pto_gm_dev(&sd->exec.gm, p);
}

/*
 * A trivial bump allocator over GM for tests: returns device addresses,
 * 64-byte aligned (@align a power of two >= 64). Not thread safe.
 */
struct sim_gm_arena {
	struct sim_device *sd;
	uint64_t off;
};
uint64_t sim_gm_alloc(struct sim_gm_arena *a, uint64_t size, uint64_t align);

#endif /* SIM_DEVICE_H */
