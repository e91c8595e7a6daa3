// SPDX-License-Identifier: MIT
/*
 * vec_kernel.h - the body ADD and MUL share (header-only: every kernel is
 * a self-contained .so): z = x op y, element-wise over n fp32 elements.
 * args: [0] x (INPUT)  [1] y (INPUT)  [2] z (OUTPUT)  [3] n (scalar)
 */
#ifndef PTO_EXAMPLES_VEC_KERNEL_H
#define PTO_EXAMPLES_VEC_KERNEL_H

#include <errno.h>
#include <stdint.h>

enum vec_op { VEC_OP_ADD, VEC_OP_MUL };

static inline int vec_xyz(const uint64_t *args, uint32_t nargs,
			  enum vec_op op)
{
	const float *x, *y;
	float *z;
	uint64_t n, i;

	if (nargs != 4 || !args[0] || !args[1] || !args[2])
		return -EINVAL;
	x = (const float *)(uintptr_t)args[0];
	y = (const float *)(uintptr_t)args[1];
	z = (float *)(uintptr_t)args[2];
	n = args[3];
	for (i = 0; i < n; i++)
		z[i] = op == VEC_OP_ADD ? x[i] + y[i] : x[i] * y[i];
	return 0;
}

#endif
