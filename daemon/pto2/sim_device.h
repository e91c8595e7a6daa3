// SPDX-License-Identifier: MIT
/*
 * sim_device.h - an in-process device for native tests and benchmarks
 *
 * Plain memory plays GM and the register file; one thread per core plays
 * the AICores. Kernels are C functions (pto_kernel_entry_fn) registered
 * by kernel id. The core threads honour the device protocol of
 * uapi/linux/pto.h exactly as pto-aicore will:
 *
 *   - wait for DATA_MAIN_BASE to change (spin, then set @parked, fence,
 *     recheck and sleep on a futex on DATA_MAIN_BASE, as CORE_WAIT does);
 *     the spin ends after spin_before_park polls or spin_ns (4 us),
 *     whichever comes first: 72 spinning threads on a host with few CPUs
 *     would starve the orchestrator and the schedulers, whereas a kick
 *     (FUTEX_WAKE) gets a parked core running at once;
 *   - on task_id + 1: read the payload slot, COND = ACK(id), translate
 *     tensor args from device addresses into host pointers, run the kernel,
 *     store its return value in the payload's status, COND = FIN(id)
 *     (release), full fence, and raise the AICPU interrupt if @irq_en;
 *   - PTO_DMB_EXIT ends the thread.
 *
 * kick() is FUTEX_WAKE on the core's DATA_MAIN_BASE; the AICPU interrupt
 * is a counter with FUTEX_WAKE (irq_wait() is FUTEX_WAIT on it).
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

#include "pto2_runtime.h"

#define SIM_MAX_KERNELS	64

struct sim_core;

/**
 * struct sim_device - the simulated device.
 * @dev: the device as the runtime sees it (ops bound to this sim).
 * @regs: register blocks, [nr_cores], 64-byte aligned.
 * @gm: host address of GM; @gm_dev_base its device address.
 * @kernels: kernel id -> function (set before runs; read by cores).
 */
struct sim_device {
	struct pto2_device dev;
	struct pto_core_regs *regs;
	uint32_t nr_aic, nr_aiv, nr_cores;
	uint8_t *gm;
	uint64_t gm_dev_base;
	uint64_t gm_size;
	pto_kernel_entry_fn kernels[SIM_MAX_KERNELS];
	uint32_t spin_before_park;	/* core polls before parking, at most */
	uint64_t spin_ns;		/* and at most this long (0: no limit) */
	_Atomic uint32_t irq_count;	/* futex word */
	_Atomic(uint8_t *) sm;		/* bound SM region (payload area) */
	struct sim_core *cores;
	/* stats */
	_Atomic uint64_t stat_irqs;
	_Atomic uint64_t stat_parks;
	_Atomic uint64_t stat_kicks;
	_Atomic uint64_t stat_tasks;
};

/* @gm_size bytes of GM at device address PTO_GM_DEV_BASE. */
int sim_device_create(uint32_t nr_aic, uint32_t nr_aiv, uint64_t gm_size,
		      struct sim_device **out);
void sim_device_destroy(struct sim_device *sd);
int sim_device_set_kernel(struct sim_device *sd, int32_t kernel_id,
			  pto_kernel_entry_fn fn);

static inline void *sim_dev_to_host(struct sim_device *sd, uint64_t dev_addr)
{
	if (dev_addr < sd->gm_dev_base ||
	    dev_addr - sd->gm_dev_base >= sd->gm_size)
		return (void *)0;
	return sd->gm + (dev_addr - sd->gm_dev_base);
}

static inline uint64_t sim_host_to_dev(struct sim_device *sd, const void *p)
{
	return sd->gm_dev_base + (uint64_t)((const uint8_t *)p - sd->gm);
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
