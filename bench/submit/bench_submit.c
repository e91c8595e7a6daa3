// SPDX-License-Identifier: MIT
/*
 * bench_submit.c - orchestrator submit cost per task, 0..5 dependencies
 *
 * For each dependency count d, an orchestration submits N tasks; task i
 * writes its own 64-byte external tensor (OUTPUT) and reads the tensors of
 * tasks i-1 .. i-d (INPUT), so every submit does d TensorMap lookups that
 * each find one live producer, d fanout registrations, one insert. Tasks
 * are grouped in scopes of 64. Each pto2_rt_submit_task() call is timed
 * with CLOCK_MONOTONIC; median and p99 are printed per d.
 *
 * Consumption: the real runtime, natively: one scheduler thread and a
 * sim device (1 AIC + 1 AIV core threads running a no-op kernel). Two
 * modes per d:
 *
 *  - "alone": the first kernel on each core blocks on a gate until the
 *    orchestration has returned, so the scheduler idles (sleeps) and the
 *    orchestrator runs alone; then the gate opens and everything drains.
 *  - "concurrent": the scheduler and cores consume while tasks are
 *    submitted (on a 2-CPU machine they compete with the orchestrator for
 *    CPUs, which shows in p99).
 *
 * The task window (65536) exceeds N and the dep-list pool is enlarged to
 * 2^20 entries, so submits never block on flow control (with the default
 * 65536 entries and 5 deps a concurrent consumer that lags hits DepPool
 * back-pressure, by design). Each row is preceded by an unmeasured
 * warm-up run (first-touch page faults of the shared memory).
 *
 * Baseline, same run: per task, malloc() a PTO2TaskDescriptor, memcpy a
 * template descriptor into it, free() it; timed the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_runtime.h"
#include "pto2_util.h"
#include "sim_device.h"

#define N_TASKS		20000
#define SCOPE		64
#define MAX_DEPS	5

static uint64_t samples[N_TASKS];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void stats(uint64_t *s, int n, uint64_t *med, uint64_t *p99)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	*med = s[n / 2];
	*p99 = s[(size_t)n * 99 / 100];
}

static _Atomic int gate_open = 1;

static int k_noop(const struct pto_kernel_ctx *c, const uint64_t *a,
		  uint32_t n)
{
	(void)c;
	(void)a;
	(void)n;
	while (!atomic_load_explicit(&gate_open, memory_order_acquire))
		pto_sleep_ns(100000);
	return 0;
}

/* args: base device address, deps */
static int orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t base = args[0], deps = args[1], one = 8;
	int i;

	(void)argc;
	for (i = 0; i < N_TASKS; i += SCOPE) {
		PTO2_SCOPE(rt) {
			int j;

			for (j = i; j < i + SCOPE && j < N_TASKS; j++) {
				Tensor t[MAX_DEPS + 1];
				PTOParam p[MAX_DEPS + 1];
				uint64_t d, t0, t1;

				t[0] = make_tensor_external(
					(void *)(uintptr_t)(base + (uint64_t)j * 64),
					&one, 1, PTO_DT_INT64);
				p[0] = make_output_param(&t[0]);
				for (d = 1; d <= deps && (uint64_t)j >= d; d++) {
					t[d] = make_tensor_external(
						(void *)(uintptr_t)(base + (uint64_t)(j - (int)d) * 64),
						&one, 1, PTO_DT_INT64);
					p[d] = make_input_param(&t[d]);
				}
				t0 = (uint64_t)pto_mono_ns();
				pto2_rt_submit_task(rt, 0, j & 1 ? PTO2_WORKER_CUBE :
						    PTO2_WORKER_VECTOR, p, (int32_t)d);
				t1 = (uint64_t)pto_mono_ns();
				samples[j] = t1 - t0;
			}
		}
	}
	return 0;
}

static void baseline(uint64_t *med, uint64_t *p99)
{
	static PTO2TaskDescriptor tmpl;
	int i;

	memset(&tmpl, 0x5a, sizeof(tmpl));
	for (i = 0; i < N_TASKS; i++) {
		uint64_t t0 = (uint64_t)pto_mono_ns(), t1;
		PTO2TaskDescriptor *d = malloc(sizeof(*d));

		if (!d)
			abort();
		memcpy(d, &tmpl, sizeof(*d));
		__asm__ __volatile__("" : : "r"(d) : "memory");
		free(d);
		t1 = (uint64_t)pto_mono_ns();
		samples[i] = t1 - t0;
	}
	stats(samples, N_TASKS, med, p99);
}

int main(void)
{
	struct pto2_config cfg;
	struct sim_device *sd;
	struct sim_gm_arena arena;
	PTO2Runtime *rt;
	uint64_t mem, bufs, args[2], med, p99, tmed, tp99;
	size_t size;
	int d, ret, i;

	pto2_config_default(&cfg);
	cfg.sched_threads = 1;
	cfg.heap_size = 1 << 20;
	cfg.dep_pool_size = 1 << 20;
	ret = sim_device_create(1, 1, 64 << 20, &sd);
	if (ret)
		return 1;
	sim_device_set_kernel(sd, 0, k_noop);
	arena.sd = sd;
	arena.off = 0;
	size = pto2_runtime_mem_size(&cfg, 2);
	mem = sim_gm_alloc(&arena, size, 4096);
	bufs = sim_gm_alloc(&arena, (uint64_t)N_TASKS * 64, 4096);
	if (!mem || !bufs)
		return 1;
	ret = pto2_runtime_create(&sd->dev, &cfg, sim_dev_to_host(sd, mem), mem,
				  size, &rt);
	if (ret) {
		fprintf(stderr, "create: %d\n", ret);
		return 1;
	}

	for (i = 0; i < N_TASKS; i++) {
		uint64_t t0 = (uint64_t)pto_mono_ns();

		samples[i] = (uint64_t)pto_mono_ns() - t0;
	}
	stats(samples, N_TASKS, &tmed, &tp99);
	printf("# submit cost per task, %d tasks per row, scopes of %d\n",
	       N_TASKS, SCOPE);
	printf("# consumer: real scheduler (1 thread) + sim device (1 AIC + 1 AIV, no-op kernel)\n");
	printf("# alone: consumers held back while submitting; concurrent: consuming meanwhile\n");
	printf("# timer overhead (clock_gettime pair): median %llu ns, p99 %llu ns (included below)\n",
	       (unsigned long long)tmed, (unsigned long long)tp99);
	printf("%-44s %10s %10s\n", "case", "median_ns", "p99_ns");
	baseline(&med, &p99);
	printf("%-44s %10llu %10llu\n", "baseline malloc+memcpy(descriptor)+free",
	       (unsigned long long)med, (unsigned long long)p99);
	for (d = 0; d <= MAX_DEPS; d++) {
		int mode, rep;

		for (mode = 0; mode < 2; mode++) {
			for (rep = 0; rep < 2; rep++) {	/* 0: warm-up */
				struct pto2_stats st;

				args[0] = bufs;
				args[1] = (uint64_t)d;
				atomic_store(&gate_open, mode);
				ret = pto2_runtime_orchestrate(rt, orch, args, 2);
				atomic_store(&gate_open, 1);
				if (!ret)
					ret = pto2_runtime_wait(rt, 60ULL * 1000000000ULL);
				pto2_runtime_get_stats(rt, &st);
				if (ret || st.tasks_completed != N_TASKS) {
					fprintf(stderr, "run with %d deps failed: %d %s\n",
						d, ret, pto2_rt_get_error_msg(rt));
					return 1;
				}
			}
			stats(samples, N_TASKS, &med, &p99);
			printf("submit, %d deps, %-10s %17s %10llu %10llu\n", d,
			       mode ? "concurrent" : "alone", "",
			       (unsigned long long)med, (unsigned long long)p99);
		}
	}
	pto2_runtime_destroy(rt);
	sim_device_destroy(sd);
	return 0;
}
