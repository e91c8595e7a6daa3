// SPDX-License-Identifier: MIT
/*
 * TILE_ADD (func 1, AIV): C += P over one tile.
 * args: [0] C (INOUT)  [1] P (INPUT)  [2] elements (scalar)
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	float *c;
	const float *p;
	uint64_t n, i;

	(void)ctx;
	if (nargs != 3 || !args[0] || !args[1])
		return -EINVAL;
	c = (float *)(uintptr_t)args[0];
	p = (const float *)(uintptr_t)args[1];
	n = args[2];
	for (i = 0; i < n; i++)
		c[i] += p[i];
	return 0;
}
