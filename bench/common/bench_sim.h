// SPDX-License-Identifier: MIT
/*
 * bench_sim.h - the PTO2 runtime core over the in-process sim device, as
 * the benchmarks use it (pto-bench-e2e-sim, pto-bench-peers)
 *
 * The device mirrors ptod's defaults: 24 AIC + 48 AIV cores (pto.ko's
 * default), 3 scheduler threads, task window 16384, heap 32 MiB, cores
 * spinning at most 2000 polls or 4 us before they park, as pto-aicore's do.
 * Kernels are C functions, one function registered under ids
 * 0 .. nr_kernels - 1 (it dispatches on ctx->kernel_id).
 *
 * A run is pto2_runtime_orchestrate() + pto2_runtime_wait(): the
 * orchestration on the calling thread, as in a libpto client.
 */
#ifndef BENCH_SIM_H
#define BENCH_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

#define BENCH_SIM_NR_AIC	24	/* and twice as many AIV */

struct bench_sim;

/**
 * struct bench_sim_info - what a benchmark reports about the device.
 * @nr_aic, @nr_aiv: cores.
 * @core_threads: host threads running the cores (the executor's pool at
 *	start; more start only while kernels wait).
 * @sched_threads: the engine's scheduler threads.
 * @task_window: task ring slots.
 * @heap_mib: heap ring size.
 */
struct bench_sim_info {
	uint32_t nr_aic, nr_aiv, core_threads, sched_threads, task_window;
	unsigned long long heap_mib;
};

/*
 * A sim device with @data_bytes of GM for bench_sim_alloc() besides the
 * runtime's memory, @kernel registered under ids
 * 0 .. @nr_kernels - 1, and a runtime over it. 0 or -errno (after a
 * message on stderr).
 */
int bench_sim_open(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		   int nr_kernels, struct bench_sim **out);
void bench_sim_close(struct bench_sim *bs);
void bench_sim_info(const struct bench_sim *bs, struct bench_sim_info *info);

/* @len bytes of GM (4 KiB aligned): device address and host view. */
int bench_sim_alloc(struct bench_sim *bs, size_t len, uint64_t *dev,
		    void **host);

/*
 * One run of @entry(@args, @argc): 0 once every task completed, or
 * -errno with the runtime's message in @msg.
 */
int bench_sim_run(struct bench_sim *bs, pto2_orchestration_entry_fn entry,
		  uint64_t *args, int argc, char *msg, size_t msglen);

#endif /* BENCH_SIM_H */
