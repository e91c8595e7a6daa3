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

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	const uint16_t *pij, *vc;
	const int32_t *bt, *cl;
	float *oi_new;
	struct pa_geom g;
	uint64_t nb, kvh, bn, bi;
	int64_t gi, j, d;
	int ret;

	(void)ctx;
	if (nargs != PV_NARGS)
		return -EINVAL;
	ret = pa_geom_load((const int64_t *)(uintptr_t)args[PV_CFG], &g);
	if (ret)
		return ret;
	pij = (const uint16_t *)(uintptr_t)args[PV_PIJ];
	vc = (const uint16_t *)(uintptr_t)args[PV_VCACHE];
	bt = (const int32_t *)(uintptr_t)args[PV_BT];
	cl = (const int32_t *)(uintptr_t)args[PV_CL];
	oi_new = (float *)(uintptr_t)args[PV_OI_NEW];
	nb = args[PV_NB];
	kvh = args[PV_KVH];
	bn = args[PV_BN];
	if (!pij || !vc || !bt || !cl || !oi_new || !pa_chunk_ok(&g, nb, kvh, bn))
		return -EINVAL;

	for (bi = 0; bi < nb; bi++) {
		int64_t phys = 0;
		int64_t valid = pa_block_valid(&g, bt + bi * g.max_blocks,
					       cl[bi], bn, &phys);

		if (valid < 0)
			return (int)valid;
		for (gi = 0; gi < g.group; gi++) {
			int64_t r = (int64_t)bi * g.group + gi;
			const uint16_t *prow = pij + r * g.block_size;
			float *orow = oi_new + r * g.head_dim;

			for (d = 0; d < g.head_dim; d++)
				orow[d] = 0.0f;
			for (j = 0; j < valid; j++) {
				float p = ex_f16_to_f32(prow[j]);
				const uint16_t *vrow = vc +
					((phys * g.block_size + j) * g.kv_head_num +
					 (int64_t)kvh) * g.head_dim;

				if (p == 0.0f)
					continue;
				for (d = 0; d < g.head_dim; d++)
					orow[d] += p * ex_f16_to_f32(vrow[d]);
			}
		}
	}
	return 0;
}
