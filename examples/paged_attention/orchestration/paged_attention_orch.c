// SPDX-License-Identifier: MIT
/*
 * paged_attention orchestration (PTO2 API only), the seed's structure:
 *
 *   for q_idx in 0 .. kv_head_num-1:              (q_loop)
 *     for batch_start in 0 .. batch-1 step 16:    (IN_CORE_BATCH)
 *       PTO2_SCOPE(rt) {
 *         oi, li, mi = make_tensor()              accumulators
 *         AIV_HUB(oi, li, mi)                     initialise
 *         for bn in 0 .. max_bn-1:
 *           sij, pij, mij, lij, oi_new = make_tensor()
 *           QK -> SF -> PV -> UP                  UP INOUT on oi, li, mi;
 *                                                 the last UP also writes
 *                                                 out = oi / li
 *       }
 *
 * Per chunk the QK/SF/PV of all blocks are independent; the UPs form a
 * chain through the accumulators.  Arguments: see PA_ARG_* in pa_case.h.
 * Tasks = kv_head_num * ceil(batch / 16) * (1 + 4 * max_bn).
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

#include "../pa_case.h"

__attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(uint64_t *args,
						   int arg_count)
{
	PTO2OrchestrationConfig cfg = { .expected_arg_count = PA_NARGS };

	(void)args;
	(void)arg_count;
	return cfg;
}

__attribute__((visibility("default")))
int aicpu_orchestration_entry(PTO2Runtime *rt, uint64_t *args, int arg_count)
{
	uint64_t batch, num_heads, kv_head_num, head_dim, block_size;
	uint64_t max_blocks, num_blocks, max_bn, group, q_idx, batch_start;
	Tensor query, key_cache, value_cache, block_table, context_lens, out;
	Tensor config;

	if (arg_count != PA_NARGS)
		return -EINVAL;
	batch = args[PA_ARG_BATCH];
	num_heads = args[PA_ARG_NUM_HEADS];
	kv_head_num = args[PA_ARG_KV_HEAD_NUM];
	head_dim = args[PA_ARG_HEAD_DIM];
	block_size = args[PA_ARG_BLOCK_SIZE];
	max_blocks = args[PA_ARG_MAX_BLOCKS];
	num_blocks = args[PA_ARG_NUM_BLOCKS];
	max_bn = args[PA_ARG_MAX_BN];
	if (batch == 0 || num_heads == 0 || kv_head_num == 0 ||
	    num_heads % kv_head_num || head_dim == 0 || block_size == 0 ||
	    max_blocks == 0 || num_blocks == 0 || max_bn == 0 ||
	    max_bn > max_blocks)
		return -EINVAL;
	group = num_heads / kv_head_num;

	{
		uint64_t q_shape[3] = { batch, num_heads, head_dim };
		uint64_t kv_shape[4] = { num_blocks, block_size, kv_head_num, head_dim };
		uint64_t bt_shape[2] = { batch, max_blocks };
		uint64_t cl_shape[1] = { batch };
		uint64_t cfg_shape[1] = { PA_CFG_COUNT };

		query = make_tensor_external((void *)(uintptr_t)args[PA_ARG_QUERY],
					     q_shape, 3, PTO_DT_FP16);
		key_cache = make_tensor_external((void *)(uintptr_t)args[PA_ARG_KEY_CACHE],
						 kv_shape, 4, PTO_DT_FP16);
		value_cache = make_tensor_external((void *)(uintptr_t)args[PA_ARG_VALUE_CACHE],
						   kv_shape, 4, PTO_DT_FP16);
		block_table = make_tensor_external((void *)(uintptr_t)args[PA_ARG_BLOCK_TABLE],
						   bt_shape, 2, PTO_DT_INT32);
		context_lens = make_tensor_external((void *)(uintptr_t)args[PA_ARG_CONTEXT_LENS],
						    cl_shape, 1, PTO_DT_INT32);
		out = make_tensor_external((void *)(uintptr_t)args[PA_ARG_OUT],
					   q_shape, 3, PTO_DT_FP32);
		config = make_tensor_external((void *)(uintptr_t)args[PA_ARG_CONFIG],
					      cfg_shape, 1, PTO_DT_INT64);
	}

	for (q_idx = 0; q_idx < kv_head_num; q_idx++) {
		for (batch_start = 0; batch_start < batch;
		     batch_start += PA_IN_CORE_BATCH) {
			uint64_t nb = batch - batch_start < PA_IN_CORE_BATCH ?
				      batch - batch_start : PA_IN_CORE_BATCH;
			uint64_t rows = nb * group;

			PTO2_SCOPE(rt) {
				/* this chunk's views of the external tensors */
				uint64_t q_vs[3] = { nb, num_heads, head_dim };
				uint64_t q_vo[3] = { batch_start, 0, 0 };
				uint64_t bt_vs[2] = { nb, max_blocks };
				uint64_t bt_vo[2] = { batch_start, 0 };
				uint64_t cl_vs[1] = { nb };
				uint64_t cl_vo[1] = { batch_start };
				Tensor q_view = pto_tensor_view(&query, q_vs, q_vo);
				Tensor bt_view = pto_tensor_view(&block_table, bt_vs, bt_vo);
				Tensor cl_view = pto_tensor_view(&context_lens, cl_vs, cl_vo);
				Tensor out_view = pto_tensor_view(&out, q_vs, q_vo);

				/* accumulators */
				uint64_t o_shape[2] = { rows, head_dim };
				uint64_t r_shape[1] = { rows };
				uint64_t s_shape[2] = { rows, block_size };
				Tensor oi = make_tensor(o_shape, 2, PTO_DT_FP32);
				Tensor li = make_tensor(r_shape, 1, PTO_DT_FP32);
				Tensor mi = make_tensor(r_shape, 1, PTO_DT_FP32);
				uint64_t bn;

				PTOParam hub[HUB_NARGS] = {
					[HUB_OI] = make_output_param(&oi),
					[HUB_LI] = make_output_param(&li),
					[HUB_MI] = make_output_param(&mi),
					[HUB_ROWS] = make_scalar_param(rows),
					[HUB_HEAD_DIM] = make_scalar_param(head_dim),
				};
				pto2_rt_submit_task(rt, PA_FUNC_AIV_HUB,
						    PTO2_WORKER_VECTOR, hub, HUB_NARGS);

				for (bn = 0; bn < max_bn; bn++) {
					Tensor sij = make_tensor(s_shape, 2, PTO_DT_FP32);
					Tensor pij = make_tensor(s_shape, 2, PTO_DT_FP16);
					Tensor mij = make_tensor(r_shape, 1, PTO_DT_FP32);
					Tensor lij = make_tensor(r_shape, 1, PTO_DT_FP32);
					Tensor oi_new = make_tensor(o_shape, 2, PTO_DT_FP32);
					uint64_t is_last = bn + 1 == max_bn;

					PTOParam qk[QK_NARGS] = {
						[QK_Q] = make_input_param(&q_view),
						[QK_KCACHE] = make_input_param(&key_cache),
						[QK_BT] = make_input_param(&bt_view),
						[QK_CL] = make_input_param(&cl_view),
						[QK_CFG] = make_input_param(&config),
						[QK_SIJ] = make_output_param(&sij),
						[QK_NB] = make_scalar_param(nb),
						[QK_KVH] = make_scalar_param(q_idx),
						[QK_BN] = make_scalar_param(bn),
					};
					pto2_rt_submit_task(rt, PA_FUNC_QK,
							    PTO2_WORKER_CUBE, qk, QK_NARGS);

					PTOParam sf[SF_NARGS] = {
						[SF_SIJ] = make_input_param(&sij),
						[SF_PIJ] = make_output_param(&pij),
						[SF_MIJ] = make_output_param(&mij),
						[SF_LIJ] = make_output_param(&lij),
						[SF_ROWS] = make_scalar_param(rows),
						[SF_COLS] = make_scalar_param(block_size),
					};
					pto2_rt_submit_task(rt, PA_FUNC_SF,
							    PTO2_WORKER_VECTOR, sf, SF_NARGS);

					PTOParam pv[PV_NARGS] = {
						[PV_PIJ] = make_input_param(&pij),
						[PV_VCACHE] = make_input_param(&value_cache),
						[PV_BT] = make_input_param(&bt_view),
						[PV_CL] = make_input_param(&cl_view),
						[PV_CFG] = make_input_param(&config),
						[PV_OI_NEW] = make_output_param(&oi_new),
						[PV_NB] = make_scalar_param(nb),
						[PV_KVH] = make_scalar_param(q_idx),
						[PV_BN] = make_scalar_param(bn),
					};
					pto2_rt_submit_task(rt, PA_FUNC_PV,
							    PTO2_WORKER_CUBE, pv, PV_NARGS);

					PTOParam up[UP_NARGS] = {
						[UP_MIJ] = make_input_param(&mij),
						[UP_LIJ] = make_input_param(&lij),
						[UP_OI_NEW] = make_input_param(&oi_new),
						[UP_MI] = make_inout_param(&mi),
						[UP_LI] = make_inout_param(&li),
						[UP_OI] = make_inout_param(&oi),
						[UP_CFG] = make_input_param(&config),
						[UP_NB] = make_scalar_param(nb),
						[UP_KVH] = make_scalar_param(q_idx),
						[UP_IS_LAST] = make_scalar_param(is_last),
						[UP_OUT] = make_output_param(&out_view),
					};
					pto2_rt_submit_task(rt, PA_FUNC_UP,
							    PTO2_WORKER_VECTOR, up,
							    is_last ? UP_NARGS : UP_NARGS - 1);
				}
			}
		}
	}

	pto2_rt_orchestration_done(rt);
	return pto2_rt_get_error(rt);
}
