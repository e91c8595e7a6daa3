// SPDX-License-Identifier: MIT
/* paged_attention: helpers shared by the five kernels. */
#ifndef PTO_EXAMPLES_PA_KERNEL_H
#define PTO_EXAMPLES_PA_KERNEL_H

#include <errno.h>
#include <stdint.h>

#include "../../common/ex_common.h"
#include "../pa_case.h"

struct pa_geom {
	int64_t batch, num_heads, kv_head_num, head_dim, block_size;
	int64_t max_blocks, num_blocks, group;	/* group = heads per KV head */
	float scale;
};

/* Read and validate the config tensor. 0 or -EINVAL. */
static inline int pa_geom_load(const int64_t *cfg, struct pa_geom *g)
{
	if (!cfg)
		return -EINVAL;
	g->batch = cfg[PA_CFG_BATCH];
	g->num_heads = cfg[PA_CFG_NUM_HEADS];
	g->kv_head_num = cfg[PA_CFG_KV_HEAD_NUM];
	g->head_dim = cfg[PA_CFG_HEAD_DIM];
	g->block_size = cfg[PA_CFG_BLOCK_SIZE];
	g->max_blocks = cfg[PA_CFG_MAX_BLOCKS];
	g->num_blocks = cfg[PA_CFG_NUM_BLOCKS];
	g->scale = ex_f32_from_u64((uint64_t)cfg[PA_CFG_SCALE_BITS]);
	if (g->batch <= 0 || g->num_heads <= 0 || g->kv_head_num <= 0 ||
	    g->num_heads % g->kv_head_num || g->head_dim <= 0 ||
	    g->head_dim > 4096 || g->block_size <= 0 ||
	    g->block_size > 4096 || g->max_blocks <= 0 || g->num_blocks <= 0)
		return -EINVAL;
	g->group = g->num_heads / g->kv_head_num;
	return 0;
}

/* Check the chunk scalars (nb sequences, KV head kvh, logical block bn). */
static inline int pa_chunk_ok(const struct pa_geom *g, uint64_t nb,
			      uint64_t kvh, uint64_t bn)
{
	return nb >= 1 && nb <= PA_IN_CORE_BATCH && nb <= (uint64_t)g->batch &&
	       kvh < (uint64_t)g->kv_head_num && bn < (uint64_t)g->max_blocks;
}

/*
 * Valid positions of logical block bn of a sequence of ctx_len tokens
 * (0 when the sequence has no such block), and its physical block.
 * Returns the count, or -ERANGE when the block table is inconsistent.
 */
static inline int64_t pa_block_valid(const struct pa_geom *g,
				     const int32_t *bt_row, int32_t ctx_len,
				     uint64_t bn, int64_t *phys)
{
	int64_t valid = (int64_t)ctx_len - (int64_t)bn * g->block_size;

	if (ctx_len < 0 || ctx_len > g->max_blocks * g->block_size)
		return -ERANGE;
	if (valid <= 0)
		return 0;
	if (valid > g->block_size)
		valid = g->block_size;
	*phys = bt_row[bn];
	if (*phys < 0 || *phys >= g->num_blocks)
		return -ERANGE;
	return valid;
}

/*
 * QK and PV: the parameters they share (pa_case.h: the same layout) and
 * their loop over the chunk's sequences.
 *   x      the chunk's rows: query view (QK) or pij (PV)    INPUT
 *   cache  the key (QK) or value (PV) cache                  INPUT
 *   bt, cl the chunk's block-table and context-length views INPUT
 *   y      sij (QK) or oi_new (PV)                           OUTPUT
 *   nb, kvh, bn                                              scalars
 */
struct pa_mm {
	struct pa_geom g;
	const uint16_t *x, *cache;
	const int32_t *bt, *cl;
	float *y;
	uint64_t nb, kvh, bn;
};

/* One sequence @bi of the chunk: block bn is @phys, @valid positions. */
typedef void (*pa_mm_seq_fn)(const struct pa_mm *mm, uint64_t bi,
			     int64_t phys, int64_t valid);

/* Check the parameters, then @seq for every sequence. 0 or -errno. */
static inline int pa_mm_run(const uint64_t *args, uint32_t nargs,
			    pa_mm_seq_fn seq)
{
	struct pa_mm mm;
	uint64_t bi;
	int ret;

	if (nargs != QK_NARGS)
		return -EINVAL;
	ret = pa_geom_load((const int64_t *)(uintptr_t)args[QK_CFG], &mm.g);
	if (ret)
		return ret;
	mm.x = (const uint16_t *)(uintptr_t)args[QK_Q];
	mm.cache = (const uint16_t *)(uintptr_t)args[QK_KCACHE];
	mm.bt = (const int32_t *)(uintptr_t)args[QK_BT];
	mm.cl = (const int32_t *)(uintptr_t)args[QK_CL];
	mm.y = (float *)(uintptr_t)args[QK_SIJ];
	mm.nb = args[QK_NB];
	mm.kvh = args[QK_KVH];
	mm.bn = args[QK_BN];
	if (!mm.x || !mm.cache || !mm.bt || !mm.cl || !mm.y ||
	    !pa_chunk_ok(&mm.g, mm.nb, mm.kvh, mm.bn))
		return -EINVAL;

	for (bi = 0; bi < mm.nb; bi++) {
		int64_t phys = 0;
		int64_t valid = pa_block_valid(&mm.g, mm.bt + bi * mm.g.max_blocks,
					       mm.cl[bi], mm.bn, &phys);

		if (valid < 0)
			return (int)valid;
		seq(&mm, bi, phys, valid);
	}
	return 0;
}

/* Row @j of block @phys of KV cache @cache for KV head @kvh. */
static inline const uint16_t *pa_kv_row(const struct pa_geom *g,
					const uint16_t *cache, int64_t phys,
					int64_t j, uint64_t kvh)
{
	return cache + ((phys * g->block_size + j) * g->kv_head_num +
			(int64_t)kvh) * g->head_dim;
}

#endif
