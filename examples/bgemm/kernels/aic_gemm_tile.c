// SPDX-License-Identifier: MIT
/*
 * GEMM_TILE (func 0, AIC): P = A . B for one tile, fp32 in, fp32
 * accumulation (what the cube's L0C does).
 * args: [0] A (INPUT, m x k)  [1] B (INPUT, k x n)  [2] P (OUTPUT, m x n)
 *       [3] m  [4] n  [5] k   (scalars; all row-major, contiguous)
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const float *a, *b;
	float *p;
	uint64_t m, n, k, i, j, kk;

	(void)ctx;
	if (nargs != 6 || !args[0] || !args[1] || !args[2])
		return -EINVAL;
	a = (const float *)(uintptr_t)args[0];
	b = (const float *)(uintptr_t)args[1];
	p = (float *)(uintptr_t)args[2];
	m = args[3];
	n = args[4];
	k = args[5];
	if (m > 4096 || n > 4096 || k > 4096)
		return -EINVAL;

	for (i = 0; i < m; i++) {
		float *prow = p + i * n;

		for (j = 0; j < n; j++)
			prow[j] = 0.0f;
		for (kk = 0; kk < k; kk++) {
			float av = a[i * k + kk];
			const float *brow = b + kk * n;

			for (j = 0; j < n; j++)
				prow[j] += av * brow[j];
		}
	}
	return 0;
}
