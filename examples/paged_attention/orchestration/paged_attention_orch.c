// SPDX-License-Identifier: MIT
/*
 * paged_attention orchestration (PTO2 API only), with the loops of PTO2's
 * batch paged attention:
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

/* The geometry, from the scalar arguments. */
struct pa_geometry {
	uint64_t batch, num_heads, kv_head_num, head_dim, block_size;
	uint64_t max_blocks, num_blocks, max_bn, group;
};

/* The external tensors (inputs and output), whole. */
struct pa_tensors {
	Tensor query, key_cache, value_cache, block_table, context_lens;
	Tensor out, config;
};

/* A chunk: nb sequences from batch_start, KV head q_idx. */
struct pa_chunk {
	uint64_t q_idx, nb, rows;
	Tensor q_view, bt_view, cl_view, out_view;	/* of the externals */
	Tensor oi, li, mi;				/* accumulators */
};

static int pa_geometry_of(const uint64_t *args, struct pa_geometry *g)
{
	g->batch = args[PA_ARG_BATCH];
	g->num_heads = args[PA_ARG_NUM_HEADS];
	g->kv_head_num = args[PA_ARG_KV_HEAD_NUM];
	g->head_dim = args[PA_ARG_HEAD_DIM];
	g->block_size = args[PA_ARG_BLOCK_SIZE];
	g->max_blocks = args[PA_ARG_MAX_BLOCKS];
	g->num_blocks = args[PA_ARG_NUM_BLOCKS];
	g->max_bn = args[PA_ARG_MAX_BN];
	if (g->batch == 0 || g->num_heads == 0 || g->kv_head_num == 0 ||
	    g->num_heads % g->kv_head_num || g->head_dim == 0 ||
	    g->block_size == 0 || g->max_blocks == 0 || g->num_blocks == 0 ||
	    g->max_bn == 0 || g->max_bn > g->max_blocks)
		return -EINVAL;
	g->group = g->num_heads / g->kv_head_num;
	return 0;
}

static Tensor pa_external(const uint64_t *args, int arg, const uint64_t *shape,
			  uint64_t ndims, DataType dtype)
{
	return make_tensor_external((void *)(uintptr_t)args[arg], shape, ndims,
				    dtype);
}

static void pa_tensors_of(const uint64_t *args, const struct pa_geometry *g,
			  struct pa_tensors *t)
{
	uint64_t q_shape[3] = { g->batch, g->num_heads, g->head_dim };
	uint64_t kv_shape[4] = { g->num_blocks, g->block_size, g->kv_head_num,
				 g->head_dim };
	uint64_t bt_shape[2] = { g->batch, g->max_blocks };
	uint64_t cl_shape[1] = { g->batch };
	uint64_t cfg_shape[1] = { PA_CFG_COUNT };

	t->query = pa_external(args, PA_ARG_QUERY, q_shape, 3, PTO_DT_FP16);
	t->key_cache = pa_external(args, PA_ARG_KEY_CACHE, kv_shape, 4, PTO_DT_FP16);
	t->value_cache = pa_external(args, PA_ARG_VALUE_CACHE, kv_shape, 4,
				     PTO_DT_FP16);
	t->block_table = pa_external(args, PA_ARG_BLOCK_TABLE, bt_shape, 2,
				     PTO_DT_INT32);
	t->context_lens = pa_external(args, PA_ARG_CONTEXT_LENS, cl_shape, 1,
				      PTO_DT_INT32);
	t->out = pa_external(args, PA_ARG_OUT, q_shape, 3, PTO_DT_FP32);
	t->config = pa_external(args, PA_ARG_CONFIG, cfg_shape, 1, PTO_DT_INT64);
}

/* The chunk's views of the external tensors, and its accumulators. */
static void pa_chunk_init(struct pa_chunk *ch, const struct pa_tensors *t,
			  const struct pa_geometry *g, uint64_t q_idx,
			  uint64_t batch_start)
{
	uint64_t left = g->batch - batch_start;
	uint64_t nb = left < PA_IN_CORE_BATCH ? left : PA_IN_CORE_BATCH;
	uint64_t q_vs[3] = { nb, g->num_heads, g->head_dim };
	uint64_t q_vo[3] = { batch_start, 0, 0 };
	uint64_t bt_vs[2] = { nb, g->max_blocks };
	uint64_t bt_vo[2] = { batch_start, 0 };
	uint64_t cl_vs[1] = { nb };
	uint64_t cl_vo[1] = { batch_start };
	/* out: only this KV head's G query heads (what UP writes) */
	uint64_t o_vs[3] = { nb, g->group, g->head_dim };
	uint64_t o_vo[3] = { batch_start, q_idx * g->group, 0 };
	uint64_t o_shape[2] = { nb * g->group, g->head_dim };
	uint64_t r_shape[1] = { nb * g->group };

	ch->q_idx = q_idx;
	ch->nb = nb;
	ch->rows = nb * g->group;
	ch->q_view = pto_tensor_view(&t->query, q_vs, q_vo);
	ch->bt_view = pto_tensor_view(&t->block_table, bt_vs, bt_vo);
	ch->cl_view = pto_tensor_view(&t->context_lens, cl_vs, cl_vo);
	ch->out_view = pto_tensor_view(&t->out, o_vs, o_vo);
	ch->oi = make_tensor(o_shape, 2, PTO_DT_FP32);
	ch->li = make_tensor(r_shape, 1, PTO_DT_FP32);
	ch->mi = make_tensor(r_shape, 1, PTO_DT_FP32);
}

/* AIV_HUB: oi = 0, li = 0, mi = -inf. */
static void pa_submit_hub(PTO2Runtime *rt, struct pa_chunk *ch,
			  const struct pa_geometry *g)
{
	PTOParam hub[HUB_NARGS] = {
		[HUB_OI] = make_output_param(&ch->oi),
		[HUB_LI] = make_output_param(&ch->li),
		[HUB_MI] = make_output_param(&ch->mi),
		[HUB_ROWS] = make_scalar_param(ch->rows),
		[HUB_HEAD_DIM] = make_scalar_param(g->head_dim),
	};

	pto2_rt_submit_task(rt, PA_FUNC_AIV_HUB, PTO2_WORKER_VECTOR, hub,
			    HUB_NARGS);
}

/*
 * QK or PV (the same parameter layout): the chunk's rows @x times block
 * @bn of KV @cache into @y.
 */
static void pa_submit_mm(PTO2Runtime *rt, int32_t func, struct pa_chunk *ch,
			 struct pa_tensors *t, Tensor *x, Tensor *cache,
			 Tensor *y, uint64_t bn)
{
	PTOParam mm[QK_NARGS] = {
		[QK_Q] = make_input_param(x),
		[QK_KCACHE] = make_input_param(cache),
		[QK_BT] = make_input_param(&ch->bt_view),
		[QK_CL] = make_input_param(&ch->cl_view),
		[QK_CFG] = make_input_param(&t->config),
		[QK_SIJ] = make_output_param(y),
		[QK_NB] = make_scalar_param(ch->nb),
		[QK_KVH] = make_scalar_param(ch->q_idx),
		[QK_BN] = make_scalar_param(bn),
	};

	pto2_rt_submit_task(rt, func, PTO2_WORKER_CUBE, mm, QK_NARGS);
}

/* SF: sij -> pij, mij, lij. */
static void pa_submit_sf(PTO2Runtime *rt, const struct pa_chunk *ch,
			 const struct pa_geometry *g, Tensor *sij, Tensor *pij,
			 Tensor *mij, Tensor *lij)
{
	PTOParam sf[SF_NARGS] = {
		[SF_SIJ] = make_input_param(sij),
		[SF_PIJ] = make_output_param(pij),
		[SF_MIJ] = make_output_param(mij),
		[SF_LIJ] = make_output_param(lij),
		[SF_ROWS] = make_scalar_param(ch->rows),
		[SF_COLS] = make_scalar_param(g->block_size),
	};

	pto2_rt_submit_task(rt, PA_FUNC_SF, PTO2_WORKER_VECTOR, sf, SF_NARGS);
}

/* UP: INOUT on oi, li, mi; the last block also writes the chunk's out. */
static void pa_submit_up(PTO2Runtime *rt, struct pa_chunk *ch,
			 struct pa_tensors *t, Tensor *mij, Tensor *lij,
			 Tensor *oi_new, uint64_t is_last)
{
	PTOParam up[UP_NARGS] = {
		[UP_MIJ] = make_input_param(mij),
		[UP_LIJ] = make_input_param(lij),
		[UP_OI_NEW] = make_input_param(oi_new),
		[UP_MI] = make_inout_param(&ch->mi),
		[UP_LI] = make_inout_param(&ch->li),
		[UP_OI] = make_inout_param(&ch->oi),
		[UP_CFG] = make_input_param(&t->config),
		[UP_NB] = make_scalar_param(ch->nb),
		[UP_KVH] = make_scalar_param(ch->q_idx),
		[UP_IS_LAST] = make_scalar_param(is_last),
		[UP_OUT] = make_output_param(&ch->out_view),
	};

	pto2_rt_submit_task(rt, PA_FUNC_UP, PTO2_WORKER_VECTOR, up,
			    is_last ? UP_NARGS : UP_NARGS - 1);
}

/* Block @bn of a chunk: its intermediates, then QK -> SF -> PV -> UP. */
static void pa_submit_block(PTO2Runtime *rt, struct pa_chunk *ch,
			    struct pa_tensors *t,
			    const struct pa_geometry *g, uint64_t bn)
{
	uint64_t s_shape[2] = { ch->rows, g->block_size };
	uint64_t o_shape[2] = { ch->rows, g->head_dim };
	uint64_t r_shape[1] = { ch->rows };
	Tensor sij = make_tensor(s_shape, 2, PTO_DT_FP32);
	Tensor pij = make_tensor(s_shape, 2, PTO_DT_FP16);
	Tensor mij = make_tensor(r_shape, 1, PTO_DT_FP32);
	Tensor lij = make_tensor(r_shape, 1, PTO_DT_FP32);
	Tensor oi_new = make_tensor(o_shape, 2, PTO_DT_FP32);

	pa_submit_mm(rt, PA_FUNC_QK, ch, t, &ch->q_view, &t->key_cache, &sij, bn);
	pa_submit_sf(rt, ch, g, &sij, &pij, &mij, &lij);
	pa_submit_mm(rt, PA_FUNC_PV, ch, t, &pij, &t->value_cache, &oi_new, bn);
	pa_submit_up(rt, ch, t, &mij, &lij, &oi_new, bn + 1 == g->max_bn);
}

__attribute__((visibility("default")))
int aicpu_orchestration_entry(PTO2Runtime *rt, uint64_t *args, int arg_count)
{
	struct pa_geometry g;
	struct pa_tensors t;
	uint64_t q_idx, batch_start, bn;

	if (arg_count != PA_NARGS || pa_geometry_of(args, &g))
		return -EINVAL;
	pa_tensors_of(args, &g, &t);

	for (q_idx = 0; q_idx < g.kv_head_num; q_idx++) {
		for (batch_start = 0; batch_start < g.batch;
		     batch_start += PA_IN_CORE_BATCH) {
			PTO2_SCOPE(rt) {
				struct pa_chunk ch;

				pa_chunk_init(&ch, &t, &g, q_idx, batch_start);
				pa_submit_hub(rt, &ch, &g);
				for (bn = 0; bn < g.max_bn; bn++)
					pa_submit_block(rt, &ch, &t, &g, bn);
			}
		}
	}

	pto2_rt_orchestration_done(rt);
	return pto2_rt_get_error(rt);
}
