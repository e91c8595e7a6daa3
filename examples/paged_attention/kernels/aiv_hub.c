// SPDX-License-Identifier: MIT
/*
 * AIV_HUB (func 5, AIV): initialise a chunk's online-softmax accumulators:
 * oi = 0, li = 0, mi = -inf.  Every UP of the chunk depends on it through
 * the INOUT accumulators.
 *
 * args: [0] oi fp32 [rows][head_dim]  [1] li fp32 [rows]
 *       [2] mi fp32 [rows]            (all OUTPUT)
 *       [3] rows  [4] head_dim        scalars
 */
#include <math.h>

#include <pto/pto_kernel.h>

#include "pa_kernel.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	float *oi, *li, *mi;
	uint64_t rows, dim, r, d;

	(void)ctx;
	if (nargs != HUB_NARGS)
		return -EINVAL;
	oi = (float *)(uintptr_t)args[HUB_OI];
	li = (float *)(uintptr_t)args[HUB_LI];
	mi = (float *)(uintptr_t)args[HUB_MI];
	rows = args[HUB_ROWS];
	dim = args[HUB_HEAD_DIM];
	if (!oi || !li || !mi || rows == 0 || rows > (1u << 20) ||
	    dim == 0 || dim > 4096)
		return -EINVAL;
	for (r = 0; r < rows; r++) {
		for (d = 0; d < dim; d++)
			oi[r * dim + d] = 0.0f;
		li[r] = 0.0f;
		mi[r] = -INFINITY;
	}
	return 0;
}
