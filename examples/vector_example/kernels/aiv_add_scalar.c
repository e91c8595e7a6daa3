// SPDX-License-Identifier: MIT
/*
 * ADD_SCALAR (func 1, AIV): z = x + s, element-wise over n fp32 elements.
 * args: [0] x (INPUT)  [1] z (OUTPUT)  [2] s (scalar: float bits in the
 *       low 32 bits)  [3] n (scalar)
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

#include "../../common/ex_common.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const float *x;
	float *z, s;
	uint64_t n, i;

	(void)ctx;
	if (nargs != 4 || !args[0] || !args[1])
		return -EINVAL;
	x = (const float *)(uintptr_t)args[0];
	z = (float *)(uintptr_t)args[1];
	s = ex_f32_from_u64(args[2]);
	n = args[3];
	for (i = 0; i < n; i++)
		z[i] = x[i] + s;
	return 0;
}
