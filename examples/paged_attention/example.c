// SPDX-License-Identifier: MIT
/*
 * paged_attention for the check and e2e programs (common/ex_example.h):
 * its kernels, a case's data (struct pa_inputs, placed where the
 * orchestration can name it) and the graph by hand.
 *
 * Environment: PA_CASE=<name> selects a case when none is named on the
 * command line; PA_SEQ_LEN=<n,n,...> overrides the context lengths
 * (cycled over the batch).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_example.h"
#include "pa_case.h"

#define PA_MAX_ENV_LENS 4096

static const struct ex_kernel_desc pa_kernels[] = {
	{ PA_FUNC_QK, "QK", "aic_qk_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_SF, "SF", "aiv_softmax_prepare.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_PV, "PV", "aic_pv_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_UP, "UP", "aiv_online_update.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_AIV_HUB, "AIV_HUB", "aiv_hub.so", PTO2_WORKER_VECTOR },
};

/* PA_SEQ_LEN, if set */
static int32_t pa_env_lens[PA_MAX_ENV_LENS];
static int pa_nr_env_lens;

static int pa_init(void)
{
	pa_nr_env_lens = pa_env_seq_lens(pa_env_lens, PA_MAX_ENV_LENS);
	if (pa_nr_env_lens >= 0)
		return 0;
	fprintf(stderr, "PA_SEQ_LEN: expected n[,n...] with 1 <= n <= 1048576, at most %d values\n",
		PA_MAX_ENV_LENS);
	return -1;
}

static const char *pa_case_name(size_t ci)
{
	return ci < pa_num_cases ? pa_cases[ci].name : NULL;
}

/* The inputs where the orchestration sees them; args get their addresses. */
static int pa_put_inputs(struct ex_mem *m, struct pa_inputs *in,
			 struct ex_case *c)
{
	uint64_t *a = c->args;
	size_t bt_bytes = (size_t)in->batch * in->max_blocks * sizeof(int32_t);
	size_t kv_bytes = in->kv_elems * sizeof(uint16_t);

	if (!ex_mem_put(m, in->query, in->q_elems * sizeof(uint16_t),
			&a[PA_ARG_QUERY]) ||
	    !ex_mem_put(m, in->key_cache, kv_bytes, &a[PA_ARG_KEY_CACHE]) ||
	    !ex_mem_put(m, in->value_cache, kv_bytes, &a[PA_ARG_VALUE_CACHE]) ||
	    !ex_mem_put(m, in->block_table, bt_bytes, &a[PA_ARG_BLOCK_TABLE]) ||
	    !ex_mem_put(m, in->context_lens, (size_t)in->batch * sizeof(int32_t),
			&a[PA_ARG_CONTEXT_LENS]) ||
	    !ex_mem_put(m, in->config, sizeof(in->config), &a[PA_ARG_CONFIG]))
		return -ENOMEM;
	c->out = ex_mem_put(m, in->out, in->out_elems * sizeof(float),
			    &a[PA_ARG_OUT]);
	return c->out ? 0 : -ENOMEM;
}

static int pa_setup(size_t ci, struct ex_mem *m, struct ex_case *c)
{
	struct pa_case pc = pa_cases[ci];
	struct pa_inputs *in = ex_mem_host(m, sizeof(*in));
	double *ref;

	if (!in)
		return -ENOMEM;
	if (pa_nr_env_lens > 0) {
		pc.seq_lens = pa_env_lens;
		pc.n_seq_lens = pa_nr_env_lens;
	}
	c->priv = in;
	if (pa_gen_inputs(&pc, in))
		return -ENOMEM;
	ref = ex_mem_host(m, in->out_elems * sizeof(double));
	if (!ref)
		return -ENOMEM;
	pa_golden(in, ref);
	pa_orch_args(in, c->args);	/* the scalars; addresses below */
	c->nargs = PA_NARGS;
	c->out_elems = in->out_elems;
	c->out_init = 0xff;		/* NaN until written */
	c->ref = ref;
	c->tol = PA_TOL;
	c->tasks = pa_task_count(in);
	return pa_put_inputs(m, in, c);
}

static void pa_teardown(struct ex_case *c)
{
	if (c->priv)
		pa_free_inputs(c->priv);
}

/* ---- The graph by hand ------------------------------------------------ */

/* A chunk's accumulators and one block's intermediates (host memory). */
struct pa_scratch {
	float *oi, *li, *mi;
	float *sij, *mij, *lij, *oi_new;
	uint16_t *pij;
};

/* One chunk: nb sequences from bs0 with KV head q, and its views. */
struct pa_chunk {
	uint64_t q, nb, rows;
	const uint16_t *qv;
	const int32_t *btv, *clv;
	float *outv;
};

/* Room for the largest chunk: PA_IN_CORE_BATCH sequences. 0 or -1. */
static int pa_scratch_alloc(struct pa_scratch *s, const struct pa_inputs *in,
			    struct ex_mem *m)
{
	const size_t G = (size_t)(in->num_heads / in->kv_head_num);
	const size_t D = (size_t)in->head_dim, BS = (size_t)in->block_size;
	const size_t rows = PA_IN_CORE_BATCH * G, f = sizeof(float);

	s->oi = ex_mem_host(m, rows * D * f);
	s->li = ex_mem_host(m, rows * f);
	s->mi = ex_mem_host(m, rows * f);
	s->sij = ex_mem_host(m, rows * BS * f);
	s->pij = ex_mem_host(m, rows * BS * sizeof(uint16_t));
	s->mij = ex_mem_host(m, rows * f);
	s->lij = ex_mem_host(m, rows * f);
	s->oi_new = ex_mem_host(m, rows * D * f);
	return s->oi && s->li && s->mi && s->sij && s->pij && s->mij &&
	       s->lij && s->oi_new ? 0 : -1;
}

static struct pa_chunk pa_chunk_of(const struct pa_inputs *in, uint64_t q,
				   uint64_t bs0)
{
	const uint64_t left = (uint64_t)in->batch - bs0;
	const uint64_t D = (uint64_t)in->head_dim;
	struct pa_chunk ch = {
		.q = q,
		.nb = left < PA_IN_CORE_BATCH ? left : PA_IN_CORE_BATCH,
		.qv = in->query + bs0 * in->num_heads * D,
		.btv = in->block_table + bs0 * in->max_blocks,
		.clv = in->context_lens + bs0,
		/* this KV head's query heads only, as UP writes them */
		.outv = in->out + (bs0 * in->num_heads +
				   q * (in->num_heads / in->kv_head_num)) * D,
	};

	ch.rows = ch.nb * (uint64_t)(in->num_heads / in->kv_head_num);
	return ch;
}

/*
 * The arguments QK and PV share (QK_* and PV_* are the same layout): the
 * chunk's rows @x, a KV @cache, the chunk's views, config, output @y.
 */
static void pa_mm_args(uint64_t *a, const struct pa_inputs *in,
		       const struct pa_chunk *ch, const void *x,
		       const uint16_t *cache, void *y, uint64_t bn)
{
	a[QK_Q] = EX_ADDR(x);
	a[QK_KCACHE] = EX_ADDR(cache);
	a[QK_BT] = EX_ADDR(ch->btv);
	a[QK_CL] = EX_ADDR(ch->clv);
	a[QK_CFG] = EX_ADDR(in->config);
	a[QK_SIJ] = EX_ADDR(y);
	a[QK_NB] = ch->nb;
	a[QK_KVH] = ch->q;
	a[QK_BN] = bn;
}

/* Block @bn of a chunk: QK -> SF -> PV -> UP. */
static int pa_run_block(struct ex_kernel_set *ks, const struct pa_inputs *in,
			struct pa_scratch *s, const struct pa_chunk *ch,
			uint64_t bn, int is_last)
{
	const uint64_t D = (uint64_t)in->head_dim, BS = (uint64_t)in->block_size;
	uint64_t qk[QK_NARGS], pv[PV_NARGS];
	uint64_t sf[SF_NARGS] = {
		[SF_SIJ] = EX_ADDR(s->sij), [SF_PIJ] = EX_ADDR(s->pij),
		[SF_MIJ] = EX_ADDR(s->mij), [SF_LIJ] = EX_ADDR(s->lij),
		[SF_ROWS] = ch->rows, [SF_COLS] = BS,
	};
	uint64_t up[UP_NARGS] = {
		[UP_MIJ] = EX_ADDR(s->mij), [UP_LIJ] = EX_ADDR(s->lij),
		[UP_OI_NEW] = EX_ADDR(s->oi_new), [UP_MI] = EX_ADDR(s->mi),
		[UP_LI] = EX_ADDR(s->li), [UP_OI] = EX_ADDR(s->oi),
		[UP_CFG] = EX_ADDR(in->config), [UP_NB] = ch->nb,
		[UP_KVH] = ch->q, [UP_IS_LAST] = (uint64_t)is_last,
		[UP_OUT] = EX_ADDR(ch->outv),
	};
	int ret;

	pa_mm_args(qk, in, ch, ch->qv, in->key_cache, s->sij, bn);
	pa_mm_args(pv, in, ch, s->pij, in->value_cache, s->oi_new, bn);
	/* poison the intermediates: each must be written */
	memset(s->sij, 0xff, ch->rows * BS * sizeof(float));
	memset(s->pij, 0xff, ch->rows * BS * sizeof(uint16_t));
	memset(s->oi_new, 0xff, ch->rows * D * sizeof(float));
	ret = ex_kernel_run(ks, PA_FUNC_QK, PTO2_WORKER_CUBE, qk, QK_NARGS);
	if (!ret)
		ret = ex_kernel_run(ks, PA_FUNC_SF, PTO2_WORKER_VECTOR, sf, SF_NARGS);
	if (!ret)
		ret = ex_kernel_run(ks, PA_FUNC_PV, PTO2_WORKER_CUBE, pv, PV_NARGS);
	if (!ret)
		ret = ex_kernel_run(ks, PA_FUNC_UP, PTO2_WORKER_VECTOR, up,
				    is_last ? UP_NARGS : UP_NARGS - 1);
	return ret;
}

/* A chunk: AIV_HUB, then every block. */
static int pa_run_chunk(struct ex_kernel_set *ks, const struct pa_inputs *in,
			struct pa_scratch *s, uint64_t q, uint64_t bs0)
{
	const struct pa_chunk ch = pa_chunk_of(in, q, bs0);
	const int max_bn = pa_max_bn(in);
	uint64_t hub[HUB_NARGS] = {
		[HUB_OI] = EX_ADDR(s->oi), [HUB_LI] = EX_ADDR(s->li),
		[HUB_MI] = EX_ADDR(s->mi), [HUB_ROWS] = ch.rows,
		[HUB_HEAD_DIM] = (uint64_t)in->head_dim,
	};
	int bn, ret;

	ret = ex_kernel_run(ks, PA_FUNC_AIV_HUB, PTO2_WORKER_VECTOR, hub,
			    HUB_NARGS);
	for (bn = 0; bn < max_bn && !ret; bn++)
		ret = pa_run_block(ks, in, s, &ch, (uint64_t)bn, bn + 1 == max_bn);
	return ret;
}

/* The graph by hand, same loops as the orchestration. */
static int pa_run_direct(struct ex_kernel_set *ks, const struct ex_case *c,
			 struct ex_mem *m)
{
	const struct pa_inputs *in = c->priv;
	struct pa_scratch s;
	uint64_t q, bs0;
	int ret = 0;

	if (pa_scratch_alloc(&s, in, m))
		return -1;
	for (q = 0; q < (uint64_t)in->kv_head_num && !ret; q++)
		for (bs0 = 0; bs0 < (uint64_t)in->batch && !ret;
		     bs0 += PA_IN_CORE_BATCH)
			ret = pa_run_chunk(ks, in, &s, q, bs0);
	return ret;
}

const struct ex_example ex_example = {
	.kernels = pa_kernels,
	.nr_kernels = sizeof(pa_kernels) / sizeof(pa_kernels[0]),
	.case_name = pa_case_name,
	.case_env = "PA_CASE",
	.sim_bytes = 256ull << 20,
	.init = pa_init,
	.setup = pa_setup,
	.teardown = pa_teardown,
	.run_direct = pa_run_direct,
};
