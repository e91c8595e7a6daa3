// SPDX-License-Identifier: MIT
/*
 * bench_kernels.h - the kernels of pto-bench-e2e, one body for both sides
 *
 * noop_kernel.so (run by pto-aicore) and pto-bench-e2e-sim (registered with
 * the sim device) call the same function, so both measure the same work.
 * The kernel is chosen by the task's kernel id:
 *
 *   BK_NOOP      nothing (the measured tasks of the independent and chain
 *                graphs, and the fan-out producer)
 *   BK_MARK      *args[n-1] = 1 (a fan-out consumer marks its slot)
 *   BK_SUM_SLOTS *args[1] = sum of args[2] slots of BENCH_SLOT_U64 words
 *                at args[0] (the one-task fan-in)
 *   BK_SUM_PTRS  *args[n-1] = sum of *args[0..n-2] (the tree fan-in)
 *
 * The marks let the program check after every fan graph that the fan-in
 * really ran after all 72 consumers (result 72).
 */
#ifndef BENCH_KERNELS_H
#define BENCH_KERNELS_H

#include <stdint.h>

#include <pto/pto_kernel.h>

#define BK_NOOP		0
#define BK_MARK		1
#define BK_SUM_SLOTS	2
#define BK_SUM_PTRS	3
#define BK_NR		4

/* One slot per task: 64 bytes (a cache line), as uint64 words. */
#define BENCH_SLOT_BYTES	64
#define BENCH_SLOT_U64		(BENCH_SLOT_BYTES / 8)

static inline int bench_kernel(const struct pto_kernel_ctx *ctx,
			       const uint64_t *args, uint32_t n)
{
	uint64_t sum = 0, i;

	switch (ctx->kernel_id) {
	case BK_NOOP:
		return 0;
	case BK_MARK:
		if (n < 1)
			return -22;
		*(volatile uint64_t *)(uintptr_t)args[n - 1] = 1;
		return 0;
	case BK_SUM_SLOTS: {
		const volatile uint64_t *s;

		if (n != 3)
			return -22;
		s = (const volatile uint64_t *)(uintptr_t)args[0];
		for (i = 0; i < args[2]; i++)
			sum += s[i * BENCH_SLOT_U64];
		*(volatile uint64_t *)(uintptr_t)args[1] = sum;
		return 0;
	}
	case BK_SUM_PTRS:
		if (n < 2)
			return -22;
		for (i = 0; i + 1 < n; i++)
			sum += *(const volatile uint64_t *)(uintptr_t)args[i];
		*(volatile uint64_t *)(uintptr_t)args[n - 1] = sum;
		return 0;
	}
	return -22;	/* -EINVAL */
}

#endif /* BENCH_KERNELS_H */
