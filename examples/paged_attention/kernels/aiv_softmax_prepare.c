// SPDX-License-Identifier: MIT
/*
 * SF (func 1, AIV): softmax prepare for one chunk and one KV block.
 *   mij = rowmax(sij); pij = exp(sij - mij) rounded to fp16 (the PV
 *   matmul's input type); lij = rowsum(pij) of the rounded values.
 * A row that is entirely masked (-inf) gives mij = -inf, pij = 0, lij = 0.
 *
 * args: [0] sij fp32 [rows][cols] INPUT   [1] pij fp16 [rows][cols] OUTPUT
 *       [2] mij fp32 [rows] OUTPUT        [3] lij fp32 [rows] OUTPUT
 *       [4] rows  [5] cols                scalars
 */
#include <math.h>

#include <pto/pto_kernel.h>

#include "pa_kernel.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const float *sij;
	uint16_t *pij;
	float *mij, *lij;
	uint64_t rows, cols, r, j;

	(void)ctx;
	if (nargs != SF_NARGS)
		return -EINVAL;
	sij = (const float *)(uintptr_t)args[SF_SIJ];
	pij = (uint16_t *)(uintptr_t)args[SF_PIJ];
	mij = (float *)(uintptr_t)args[SF_MIJ];
	lij = (float *)(uintptr_t)args[SF_LIJ];
	rows = args[SF_ROWS];
	cols = args[SF_COLS];
	if (!sij || !pij || !mij || !lij || rows == 0 || cols == 0 ||
	    rows > (1u << 20) || cols > 4096)
		return -EINVAL;

	for (r = 0; r < rows; r++) {
		const float *s = sij + r * cols;
		uint16_t *p = pij + r * cols;
		float m = -INFINITY, l = 0.0f;

		for (j = 0; j < cols; j++)
			m = fmaxf(m, s[j]);
		for (j = 0; j < cols; j++) {
			uint16_t h = (m == -INFINITY || s[j] == -INFINITY) ?
				     0 : ex_f32_to_f16(expf(s[j] - m));

			p[j] = h;
			l += ex_f16_to_f32(h);
		}
		mij[r] = m;
		lij[r] = l;
	}
	return 0;
}
