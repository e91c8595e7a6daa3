// SPDX-License-Identifier: MIT
/*
 * PV (func 2, AIC): oi_new = pij . vj for one chunk and one KV block.
 *
 * args: [0] pij          fp16 [nb * G][bs]                INPUT
 *       [1] value_cache  fp16 [num_blocks][bs][kv_heads][head_dim] INPUT
 *       [2] block_table view int32 [nb][max_blocks]       INPUT
 *       [3] context_lens view int32 [nb]                  INPUT
 *       [4] config       int64 [PA_CFG_COUNT]             INPUT
 *       [5] oi_new       fp32 [nb * G][head_dim]          OUTPUT
 *       [6] nb  [7] kvh  [8] bn                           scalars
 *
 * Only the valid positions of the block are read (masked pij are 0 anyway,
 * and a sequence with no such block has no physical block to read).
 */
#include <pto/pto_kernel.h>

#include "pa_kernel.h"

/* The G rows of sequence @bi: pij times the block's valid values. */
static void pv_seq(const struct pa_mm *mm, uint64_t bi, int64_t phys,
		   int64_t valid)
{
	const struct pa_geom *g = &mm->g;
	int64_t gi, j, d;

	for (gi = 0; gi < g->group; gi++) {
		int64_t r = (int64_t)bi * g->group + gi;
		const uint16_t *prow = mm->x + r * g->block_size;
		float *orow = mm->y + r * g->head_dim;

		for (d = 0; d < g->head_dim; d++)
			orow[d] = 0.0f;
		for (j = 0; j < valid; j++) {
			float p = ex_f16_to_f32(prow[j]);
			const uint16_t *vrow = pa_kv_row(g, mm->cache, phys, j,
							 mm->kvh);

			if (p == 0.0f)
				continue;
			for (d = 0; d < g->head_dim; d++)
				orow[d] += p * ex_f16_to_f32(vrow[d]);
		}
	}
}

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	(void)ctx;
	return pa_mm_run(args, nargs, pv_seq);
}
