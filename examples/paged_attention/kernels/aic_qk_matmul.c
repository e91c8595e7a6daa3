// SPDX-License-Identifier: MIT
/*
 * QK (func 0, AIC): sij = scale * qi . kj^T for one chunk and one KV block.
 *
 * args: [0] query view   fp16 [nb][num_heads][head_dim]   INPUT
 *       [1] key_cache    fp16 [num_blocks][bs][kv_heads][head_dim] INPUT
 *       [2] block_table view int32 [nb][max_blocks]       INPUT
 *       [3] context_lens view int32 [nb]                  INPUT
 *       [4] config       int64 [PA_CFG_COUNT]             INPUT
 *       [5] sij          fp32 [nb * G][bs]                OUTPUT
 *       [6] nb  [7] kvh  [8] bn                           scalars
 *
 * Positions past the sequence's context length (the tail of its last
 * block, or the whole block when the sequence is shorter than the chunk's
 * longest) are written as -inf: masked before the softmax.  Products are
 * of fp16 inputs, accumulated in fp32 as the cube does.
 */
#include <math.h>

#include <pto/pto_kernel.h>

#include "pa_kernel.h"

/* The G query heads of sequence @bi against the block's valid keys. */
static void qk_seq(const struct pa_mm *mm, uint64_t bi, int64_t phys,
		   int64_t valid)
{
	const struct pa_geom *g = &mm->g;
	int64_t gi, j, d;

	for (gi = 0; gi < g->group; gi++) {
		int64_t h = (int64_t)mm->kvh * g->group + gi;
		const uint16_t *qrow = mm->x +
			((int64_t)bi * g->num_heads + h) * g->head_dim;
		float *srow = mm->y + ((int64_t)bi * g->group + gi) * g->block_size;

		for (j = 0; j < g->block_size; j++) {
			const uint16_t *krow;
			float acc = 0.0f;

			if (j >= valid) {
				srow[j] = -INFINITY;
				continue;
			}
			krow = pa_kv_row(g, mm->cache, phys, j, mm->kvh);
			for (d = 0; d < g->head_dim; d++)
				acc += ex_f16_to_f32(qrow[d]) *
				       ex_f16_to_f32(krow[d]);
			srow[j] = acc * g->scale;
		}
	}
}

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	(void)ctx;
	return pa_mm_run(args, nargs, qk_seq);
}
