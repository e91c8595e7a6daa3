// SPDX-License-Identifier: MIT
/*
 * A kernel that crashes the executor (SIGSEGV): the e2e crash test.
 */
#include <stdint.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	/* args[1] is a GM pointer: far past it lies unmapped memory */
	volatile int *p = (volatile int *)(uintptr_t)(nargs > 1 ? args[1] : 0);

	(void)ctx;
	p = (volatile int *)((uintptr_t)p ^ (1ULL << 46));
	*p = 1;		/* SIGSEGV */
	return 0;
}
