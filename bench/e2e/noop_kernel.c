// SPDX-License-Identifier: MIT
/*
 * noop_kernel.so - the kernels of pto-bench-e2e as one shared object for
 * pto-aicore; registered under every BK_* id (see bench_kernels.h).
 */
#include "bench_kernels.h"

__attribute__((visibility("default")))
int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	return bench_kernel(ctx, args, nargs);
}
