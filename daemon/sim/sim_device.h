// SPDX-License-Identifier: MIT
/*
 * sim_device.h - an in-process device for native tests and benchmarks
 *
 * Plain memory plays GM and the register file (the uapi layout: info
 * page, HWS block, per-core blocks); one thread per core plays the
 * AICores. The cores run the executor core (daemon/exec/pto_exec.h), the
 * same code pto-aicore runs, so they honour the device protocol exactly
 * as pto-aicore does. What is the sim's own:
 *
 *   - kernels are C functions (pto_kernel_entry_fn) registered by kernel
 *     id, not shared objects loaded from GM;
 *   - a parked core sleeps on a futex on its DATA_MAIN_BASE (what
 *     PTO_IOC_CORE_WAIT does in pto.ko), and kick() is FUTEX_WAKE on it;
 *   - the AICPU interrupt is a counter with FUTEX_WAKE (irq_wait() is
 *     FUTEX_WAIT on it).
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
 * @stat_irqs, @stat_kicks: counters.
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
	_Atomic uint64_t stat_irqs;
	_Atomic uint64_t stat_kicks;
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
