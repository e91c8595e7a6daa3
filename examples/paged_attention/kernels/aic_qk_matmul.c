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

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const uint16_t *q, *kc;
	const int32_t *bt, *cl;
	float *sij;
	struct pa_geom g;
	uint64_t nb, kvh, bn, bi;
	int64_t gi, j, d;
	int ret;

	(void)ctx;
	if (nargs != QK_NARGS)
		return -EINVAL;
	ret = pa_geom_load((const int64_t *)(uintptr_t)args[QK_CFG], &g);
	if (ret)
		return ret;
	q = (const uint16_t *)(uintptr_t)args[QK_Q];
	kc = (const uint16_t *)(uintptr_t)args[QK_KCACHE];
	bt = (const int32_t *)(uintptr_t)args[QK_BT];
	cl = (const int32_t *)(uintptr_t)args[QK_CL];
	sij = (float *)(uintptr_t)args[QK_SIJ];
	nb = args[QK_NB];
	kvh = args[QK_KVH];
	bn = args[QK_BN];
	if (!q || !kc || !bt || !cl || !sij || !pa_chunk_ok(&g, nb, kvh, bn))
		return -EINVAL;

	for (bi = 0; bi < nb; bi++) {
		int64_t phys = 0;
		int64_t valid = pa_block_valid(&g, bt + bi * g.max_blocks,
					       cl[bi], bn, &phys);

		if (valid < 0)
			return (int)valid;
		for (gi = 0; gi < g.group; gi++) {
			int64_t h = (int64_t)kvh * g.group + gi;
			const uint16_t *qrow = q + ((int64_t)bi * g.num_heads + h) * g.head_dim;
			float *srow = sij + ((int64_t)bi * g.group + gi) * g.block_size;
			for (j = 0; j < g.block_size; j++) {
				const uint16_t *krow;
				float acc = 0.0f;

				if (j >= valid) {
					srow[j] = -INFINITY;
					continue;
				}
				krow = kc + ((phys * g.block_size + j) * g.kv_head_num +
					     (int64_t)kvh) * g.head_dim;
				for (d = 0; d < g.head_dim; d++)
					acc += ex_f16_to_f32(qrow[d]) *
					       ex_f16_to_f32(krow[d]);
				srow[j] = acc * g.scale;
			}
		}
	}
	return 0;
}
