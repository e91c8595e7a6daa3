// SPDX-License-Identifier: MIT
/*
 * kcache_pre_kernel.c - a kernel that test_kcache loads to check its
 * pre-complete report (pto_kernel_pre_complete()) under an executor that
 * exports the report and under one that does not.
 *
 *   args[0]: 0 no report; 1 report with its ctx, twice; 2 report with a
 *	copy of its ctx (not the executor's: ignored)
 *
 * Returns 0, or -EINVAL without an argument or with another.
 */
#include <errno.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t n)
{
	struct pto_kernel_ctx copy;

	if (!n || args[0] > 2)
		return -EINVAL;
	if (args[0] == 1) {
		pto_kernel_pre_complete(ctx);
		pto_kernel_pre_complete(ctx);
	} else if (args[0] == 2) {
		copy = *ctx;
		pto_kernel_pre_complete(&copy);
	}
	return 0;
}
