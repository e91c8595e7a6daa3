// SPDX-License-Identifier: MIT
/*
 * MUL (func 2, AIV): z = x * y, element-wise over n fp32 elements.
 * args: [0] x (INPUT)  [1] y (INPUT)  [2] z (OUTPUT)  [3] n (scalar)
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const float *x, *y;
	float *z;
	uint64_t n, i;

	(void)ctx;
	if (nargs != 4 || !args[0] || !args[1] || !args[2])
		return -EINVAL;
	x = (const float *)(uintptr_t)args[0];
	y = (const float *)(uintptr_t)args[1];
	z = (float *)(uintptr_t)args[2];
	n = args[3];
	for (i = 0; i < n; i++)
		z[i] = x[i] * y[i];
	return 0;
}
