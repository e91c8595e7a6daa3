// SPDX-License-Identifier: MIT
/*
 * paged_attention native check (no runtime).  For every case:
 *   <case>       QK/SF/PV/UP/AIV_HUB called directly, in the
 *                orchestration's submission order (a topological order)
 *   <case>/orch  orch.so run through the serial reference executor
 * both compared with the double-precision (plain softmax) golden.
 *
 * usage: check [-d BUILD_DIR] [CASE...]
 * Environment (seed 000): PA_CASE=<name> selects a case when none is named
 * on the command line; PA_SEQ_LEN=<n,n,...> overrides the context lengths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_common.h"
#include "../common/ex_exec.h"
#include "pa_case.h"

static const struct ex_kernel_desc kernels[] = {
	{ PA_FUNC_QK, "QK", "aic_qk_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_SF, "SF", "aiv_softmax_prepare.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_PV, "PV", "aic_pv_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_UP, "UP", "aiv_online_update.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_AIV_HUB, "AIV_HUB", "aiv_hub.so", PTO2_WORKER_VECTOR },
};

#define P(x) ((uint64_t)(uintptr_t)(x))
#define PA_MAX_ENV_LENS 4096

/* The graph by hand, same loops as the orchestration. */
static int run_direct(struct ex_kernel_set *ks, struct pa_inputs *in)
{
	const uint64_t G = (uint64_t)(in->num_heads / in->kv_head_num);
	const uint64_t D = (uint64_t)in->head_dim, BS = (uint64_t)in->block_size;
	const uint64_t max_rows = PA_IN_CORE_BATCH * G;
	const int max_bn = pa_max_bn(in);
	float *oi = malloc(max_rows * D * sizeof(float));
	float *li = malloc(max_rows * sizeof(float));
	float *mi = malloc(max_rows * sizeof(float));
	float *sij = malloc(max_rows * BS * sizeof(float));
	uint16_t *pij = malloc(max_rows * BS * sizeof(uint16_t));
	float *mij = malloc(max_rows * sizeof(float));
	float *lij = malloc(max_rows * sizeof(float));
	float *oi_new = malloc(max_rows * D * sizeof(float));
	uint64_t q, bs0;
	int ret = -1;

	if (!oi || !li || !mi || !sij || !pij || !mij || !lij || !oi_new)
		goto out;
	ret = 0;
	for (q = 0; q < (uint64_t)in->kv_head_num && !ret; q++) {
		for (bs0 = 0; bs0 < (uint64_t)in->batch && !ret;
		     bs0 += PA_IN_CORE_BATCH) {
			uint64_t nb = (uint64_t)in->batch - bs0 < PA_IN_CORE_BATCH ?
				      (uint64_t)in->batch - bs0 : PA_IN_CORE_BATCH;
			uint64_t rows = nb * G;
			const uint16_t *qv = in->query + bs0 * in->num_heads * D;
			const int32_t *btv = in->block_table + bs0 * in->max_blocks;
			const int32_t *clv = in->context_lens + bs0;
			float *outv = in->out + bs0 * in->num_heads * D;
			uint64_t hub[HUB_NARGS] = {
				[HUB_OI] = P(oi), [HUB_LI] = P(li), [HUB_MI] = P(mi),
				[HUB_ROWS] = rows, [HUB_HEAD_DIM] = D,
			};
			int bn;

			ret = ex_kernel_run(ks, PA_FUNC_AIV_HUB, PTO2_WORKER_VECTOR,
					    hub, HUB_NARGS);
			for (bn = 0; bn < max_bn && !ret; bn++) {
				uint64_t is_last = bn + 1 == max_bn;
				uint64_t qk[QK_NARGS] = {
					[QK_Q] = P(qv), [QK_KCACHE] = P(in->key_cache),
					[QK_BT] = P(btv), [QK_CL] = P(clv),
					[QK_CFG] = P(in->config), [QK_SIJ] = P(sij),
					[QK_NB] = nb, [QK_KVH] = q, [QK_BN] = (uint64_t)bn,
				};
				uint64_t sf[SF_NARGS] = {
					[SF_SIJ] = P(sij), [SF_PIJ] = P(pij),
					[SF_MIJ] = P(mij), [SF_LIJ] = P(lij),
					[SF_ROWS] = rows, [SF_COLS] = BS,
				};
				uint64_t pv[PV_NARGS] = {
					[PV_PIJ] = P(pij), [PV_VCACHE] = P(in->value_cache),
					[PV_BT] = P(btv), [PV_CL] = P(clv),
					[PV_CFG] = P(in->config), [PV_OI_NEW] = P(oi_new),
					[PV_NB] = nb, [PV_KVH] = q, [PV_BN] = (uint64_t)bn,
				};
				uint64_t up[UP_NARGS] = {
					[UP_MIJ] = P(mij), [UP_LIJ] = P(lij),
					[UP_OI_NEW] = P(oi_new), [UP_MI] = P(mi),
					[UP_LI] = P(li), [UP_OI] = P(oi),
					[UP_CFG] = P(in->config), [UP_NB] = nb,
					[UP_KVH] = q, [UP_IS_LAST] = is_last,
					[UP_OUT] = P(outv),
				};

				/* poison the intermediates: each must be written */
				memset(sij, 0xff, rows * BS * sizeof(float));
				memset(pij, 0xff, rows * BS * sizeof(uint16_t));
				memset(oi_new, 0xff, rows * D * sizeof(float));
				ret = ex_kernel_run(ks, PA_FUNC_QK, PTO2_WORKER_CUBE,
						    qk, QK_NARGS);
				if (!ret)
					ret = ex_kernel_run(ks, PA_FUNC_SF, PTO2_WORKER_VECTOR,
							    sf, SF_NARGS);
				if (!ret)
					ret = ex_kernel_run(ks, PA_FUNC_PV, PTO2_WORKER_CUBE,
							    pv, PV_NARGS);
				if (!ret)
					ret = ex_kernel_run(ks, PA_FUNC_UP, PTO2_WORKER_VECTOR,
							    up, is_last ? UP_NARGS : UP_NARGS - 1);
			}
		}
	}
out:
	free(oi);
	free(li);
	free(mi);
	free(sij);
	free(pij);
	free(mij);
	free(lij);
	free(oi_new);
	return ret;
}

static int compare(const char *name, const char *suffix,
		   const struct pa_inputs *in, const double *ref,
		   unsigned long tasks, int ret)
{
	return ex_check_f32(name, suffix, PA_TOL, ref, in->out, in->out_elems,
			    tasks, pa_task_count(in), ret);
}

/* Cases named on the command line, else $PA_CASE, else all. */
static int selected(int argc, char **argv, int first, const char *name)
{
	const char *env = getenv("PA_CASE");

	if (first >= argc && env && *env)
		return strcmp(env, name) == 0;
	return ex_case_selected(argc, argv, first, name);
}

int main(int argc, char **argv)
{
	char dir[4096], orch[4200];
	struct ex_kernel_set ks;
	int32_t lens[PA_MAX_ENV_LENS];
	int first, failed = 0, n_lens;
	size_t ci;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	snprintf(orch, sizeof(orch), "%s/orch.so", dir);
	if (ex_kernels_load(&ks, dir, kernels, sizeof(kernels) / sizeof(kernels[0])))
		return 1;

	n_lens = pa_env_seq_lens(lens, PA_MAX_ENV_LENS);
	if (n_lens < 0) {
		fprintf(stderr, "PA_SEQ_LEN: expected n[,n...] with 1 <= n <= 1048576, at most %d values\n",
			PA_MAX_ENV_LENS);
		return 2;
	}

	for (ci = 0; ci < pa_num_cases; ci++) {
		struct pa_case cc = pa_cases[ci];
		const struct pa_case *c = &cc;
		struct pa_inputs in;
		double *ref;
		unsigned long tasks;
		int ret;

		if (!selected(argc, argv, first, c->name))
			continue;
		if (n_lens > 0) {
			cc.seq_lens = lens;
			cc.n_seq_lens = n_lens;
		}
		if (pa_gen_inputs(c, &in)) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		ref = malloc(in.out_elems * sizeof(double));
		if (!ref) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		pa_golden(&in, ref);

		/* 1. kernels directly */
		memset(in.out, 0xff, in.out_elems * sizeof(float));
		ks.tasks = 0;
		ret = run_direct(&ks, &in);
		failed += !compare(c->name, "", &in, ref, ks.tasks, ret);

		/* 2. orchestration through the serial reference executor */
		{
			uint64_t args[PA_NARGS];

			pa_orch_args(&in, args);
			memset(in.out, 0xff, in.out_elems * sizeof(float));
			ret = ex_serial_run_orch(orch, &ks, args, PA_NARGS, &tasks);
			failed += !compare(c->name, "/orch", &in, ref, tasks, ret);
		}
		free(ref);
		pa_free_inputs(&in);
	}
	ex_kernels_unload(&ks);
	return failed ? 1 : 0;
}
