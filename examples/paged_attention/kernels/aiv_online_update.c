// SPDX-License-Identifier: MIT
/*
 * UP (func 3, AIV): online-softmax update of the chunk's accumulators with
 * one KV block's partial results, and, on the chunk's last block, the
 * final normalisation out = oi / li.
 *
 *   m_new = max(mi, mij)
 *   alpha = exp(mi - m_new)    (0 when mi = -inf: nothing accumulated yet)
 *   beta  = exp(mij - m_new)   (0 when mij = -inf: block fully masked)
 *   li    = alpha * li + beta * lij
 *   oi    = alpha * oi + beta * oi_new
 *   mi    = m_new
 *
 * args: [0] mij fp32 [rows]  [1] lij fp32 [rows]  [2] oi_new fp32
 *       [rows][head_dim]                                   INPUT
 *       [3] mi  [4] li  [5] oi (same shapes)               INOUT
 *       [6] config int64 [PA_CFG_COUNT]                    INPUT
 *       [7] nb  [8] kvh  [9] is_last                       scalars
 *       [10] out view fp32 [nb][G][head_dim] of out, from head kvh * G
 *            (rows num_heads * head_dim apart)    OUTPUT, present only
 *            when is_last (nargs = 11, else 10)
 * rows = nb * G; row bi * G + g goes to out[bi][kvh * G + g][:], i.e.
 * the view's [bi][g][:].
 */
#include <math.h>

#include <pto/pto_kernel.h>

#include "pa_kernel.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const float *mij, *lij, *oi_new;
	float *mi, *li, *oi, *out = NULL;
	struct pa_geom g;
	uint64_t nb, kvh, is_last;
	int64_t rows, r, d;
	int ret;

	(void)ctx;
	if (nargs != UP_NARGS - 1 && nargs != UP_NARGS)
		return -EINVAL;
	ret = pa_geom_load((const int64_t *)(uintptr_t)args[UP_CFG], &g);
	if (ret)
		return ret;
	mij = (const float *)(uintptr_t)args[UP_MIJ];
	lij = (const float *)(uintptr_t)args[UP_LIJ];
	oi_new = (const float *)(uintptr_t)args[UP_OI_NEW];
	mi = (float *)(uintptr_t)args[UP_MI];
	li = (float *)(uintptr_t)args[UP_LI];
	oi = (float *)(uintptr_t)args[UP_OI];
	nb = args[UP_NB];
	kvh = args[UP_KVH];
	is_last = args[UP_IS_LAST];
	if (is_last > 1 || nargs != (is_last ? UP_NARGS : UP_NARGS - 1))
		return -EINVAL;
	if (is_last)
		out = (float *)(uintptr_t)args[UP_OUT];
	if (!mij || !lij || !oi_new || !mi || !li || !oi ||
	    (is_last && !out) || !pa_chunk_ok(&g, nb, kvh, 0))
		return -EINVAL;
	rows = (int64_t)nb * g.group;

	for (r = 0; r < rows; r++) {
		float m_old = mi[r], m_blk = mij[r];
		float m_new = fmaxf(m_old, m_blk);
		float alpha = m_old == -INFINITY ? 0.0f : expf(m_old - m_new);
		float beta = m_blk == -INFINITY ? 0.0f : expf(m_blk - m_new);
		float *orow = oi + r * g.head_dim;
		const float *nrow = oi_new + r * g.head_dim;

		li[r] = alpha * li[r] + beta * lij[r];
		for (d = 0; d < g.head_dim; d++)
			orow[d] = alpha * orow[d] + beta * nrow[d];
		mi[r] = m_new;

		if (is_last) {
			int64_t bi = r / g.group, gi = r % g.group;
			float *dst = out + (bi * g.num_heads + gi) *
					   g.head_dim;
			float inv = li[r] > 0.0f ? 1.0f / li[r] : 0.0f;

			for (d = 0; d < g.head_dim; d++)
				dst[d] = orow[d] * inv;
		}
	}
	return 0;
}
