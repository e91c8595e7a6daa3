// SPDX-License-Identifier: MIT
/*
 * MUL (func 2, AIV): z = x * y, element-wise over n fp32 elements.
 * args: [0] x (INPUT)  [1] y (INPUT)  [2] z (OUTPUT)  [3] n (scalar)
 */
#include <pto/pto_kernel.h>

#include "vec_kernel.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	(void)ctx;
	return vec_xyz(args, nargs, VEC_OP_MUL);
}
