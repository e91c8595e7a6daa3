// SPDX-License-Identifier: MIT
/*
 * test_kernels.h - kernels shared by the native tests (header-only)
 */
#ifndef TEST_KERNELS_H
#define TEST_KERNELS_H

#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto-private/time.h>

/*
 * A barrier: args: counter (tensor, int64), parties. Every kernel
 * arrives, then waits up to 2 s for all the others; -ETIMEDOUT if they
 * never come (they were not run at the same time).
 */
static inline int k_barrier(const struct pto_kernel_ctx *c, const uint64_t *a,
			    uint32_t n)
{
	int64_t *cnt = (int64_t *)(uintptr_t)a[0];
	int64_t t0 = pto_mono_ns();

	(void)c;
	if (n != 2)
		return -EINVAL;
	__atomic_add_fetch(cnt, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(cnt, __ATOMIC_SEQ_CST) < (int64_t)a[1])
		if (pto_mono_ns() - t0 > 2000000000LL)
			return -ETIMEDOUT;
	return 0;
}

/* Does nothing: a task's cost is the runtime's and the device's alone. */
static inline int k_nop(const struct pto_kernel_ctx *c, const uint64_t *a,
			uint32_t n)
{
	(void)c;
	(void)a;
	(void)n;
	return 0;
}

#endif /* TEST_KERNELS_H */
