// SPDX-License-Identifier: MIT
/*
 * End-to-end runs of the examples on the PTO2 runtime core over the
 * in-process sim device (daemon/pto2: pto2_runtime.h, sim_device.h).
 *
 * The kernels are the built .so files (registered with the sim device by
 * func_id), the orchestration is the built orch.so (its pto2_rt_* calls
 * resolve to the runtime linked into the e2e program, which is linked
 * with -rdynamic and the whole of libpto2.a).  Inputs and outputs live in
 * the sim device's GM; the orchestration gets device addresses, the
 * kernels host pointers (translated by the sim cores).
 *
 * The runtime configuration is the default with a 64 MiB heap, then
 * PTO2's environment variables (PTO2_RING_TASK_WINDOW, PTO2_RING_HEAP,
 * PTO2_RING_DEP_POOL, PTO2_READY_QUEUE_SHARDS; pto2_config_from_env).
 * The device has EX_SIM_AIC AIC and 2 * EX_SIM_AIC AIV cores (default
 * 24: PTO2's PLATFORM_MAX_BLOCKDIM, 24 blocks of 1 AIC + 2 AIV).
 */
#ifndef PTO_EXAMPLES_EX_SIM_H
#define PTO_EXAMPLES_EX_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

#include "ex_exec.h"

struct sim_device;

struct ex_sim {
	struct sim_device *sd;
	PTO2Runtime *rt;
	uint64_t arena_base;	/* GM offset where case data starts */
	uint64_t arena_off;
	uint32_t task_window;	/* configured, for labels */
	void *orch_dl;
	pto2_orchestration_entry_fn entry;
	pto2_orchestration_config_fn config;
	struct ex_kernel_set ks;
	uint64_t task_ring_blocked;	/* stats of the last run */
	int warnings;
};

/* Open device + runtime, load kernels and orch.so from @dir; @data_bytes
 * of GM are left for case data.  0 or negative errno (message printed). */
int ex_sim_open(struct ex_sim *s, const char *dir,
		const struct ex_kernel_desc *descs, size_t n,
		uint64_t data_bytes);
void ex_sim_close(struct ex_sim *s);

/* Forget all case data (before the next case). */
void ex_sim_reset(struct ex_sim *s);
/* @bytes of GM for case data: device address, host pointer in *@host. */
uint64_t ex_sim_alloc(struct ex_sim *s, uint64_t bytes, void **host);
/* Copy @bytes from @src into new GM; returns the device address. */
uint64_t ex_sim_upload(struct ex_sim *s, const void *src, uint64_t bytes,
		       void **host);

/* One run of the orchestration: 0 or negative errno; *tasks submitted. */
int ex_sim_run(struct ex_sim *s, uint64_t *args, int nargs,
	       unsigned long *tasks);

/* "/sim", or "/sim-w<window>" when the task window is not the default. */
const char *ex_sim_label(const struct ex_sim *s);

#endif
