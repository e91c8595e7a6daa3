// SPDX-License-Identifier: MIT
/*
 * paged_attention end to end on the PTO2 runtime over the sim device (see
 * common/ex_sim.h): CASE <case>/sim lines.
 *
 * usage: e2e_sim [-d BUILD_DIR] [CASE...]   (PA_CASE, PA_SEQ_LEN as check)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_common.h"
#include "../common/ex_sim.h"
#include "pa_case.h"

#define PA_MAX_ENV_LENS 4096

static const struct ex_kernel_desc kernels[] = {
	{ PA_FUNC_QK, "QK", "aic_qk_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_SF, "SF", "aiv_softmax_prepare.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_PV, "PV", "aic_pv_matmul.so", PTO2_WORKER_CUBE },
	{ PA_FUNC_UP, "UP", "aiv_online_update.so", PTO2_WORKER_VECTOR },
	{ PA_FUNC_AIV_HUB, "AIV_HUB", "aiv_hub.so", PTO2_WORKER_VECTOR },
};

/* Cases named on the command line, else $PA_CASE, else all. */
static int selected(int argc, char **argv, int first, const char *name)
{
	const char *env = getenv("PA_CASE");

	if (first >= argc && env && *env)
		return strcmp(env, name) == 0;
	return ex_case_selected(argc, argv, first, name);
}

/* Inputs into GM; args get device addresses.  0 or -1. */
static int upload(struct ex_sim *sim, const struct pa_inputs *in,
		  uint64_t args[PA_NARGS], float **out_host)
{
	void *h;

	pa_orch_args(in, args);		/* scalars; pointers replaced below */
	args[PA_ARG_QUERY] = ex_sim_upload(sim, in->query,
					   in->q_elems * sizeof(uint16_t), NULL);
	args[PA_ARG_KEY_CACHE] = ex_sim_upload(sim, in->key_cache,
					       in->kv_elems * sizeof(uint16_t), NULL);
	args[PA_ARG_VALUE_CACHE] = ex_sim_upload(sim, in->value_cache,
						 in->kv_elems * sizeof(uint16_t), NULL);
	args[PA_ARG_BLOCK_TABLE] = ex_sim_upload(sim, in->block_table,
		(uint64_t)in->batch * in->max_blocks * sizeof(int32_t), NULL);
	args[PA_ARG_CONTEXT_LENS] = ex_sim_upload(sim, in->context_lens,
		(uint64_t)in->batch * sizeof(int32_t), NULL);
	args[PA_ARG_CONFIG] = ex_sim_upload(sim, in->config, sizeof(in->config), NULL);
	args[PA_ARG_OUT] = ex_sim_alloc(sim, in->out_elems * sizeof(float), &h);
	*out_host = h;
	if (!args[PA_ARG_QUERY] || !args[PA_ARG_KEY_CACHE] ||
	    !args[PA_ARG_VALUE_CACHE] || !args[PA_ARG_BLOCK_TABLE] ||
	    !args[PA_ARG_CONTEXT_LENS] || !args[PA_ARG_CONFIG] || !h)
		return -1;
	memset(h, 0xff, in->out_elems * sizeof(float));	/* NaN until written */
	return 0;
}

int main(int argc, char **argv)
{
	char dir[4096];
	int32_t lens[PA_MAX_ENV_LENS];
	struct ex_sim sim;
	int first, failed = 0, n_lens;
	size_t ci;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	n_lens = pa_env_seq_lens(lens, PA_MAX_ENV_LENS);
	if (n_lens < 0) {
		fprintf(stderr, "PA_SEQ_LEN: expected n[,n...]\n");
		return 2;
	}
	if (ex_sim_open(&sim, dir, kernels, sizeof(kernels) / sizeof(kernels[0]),
			256ull << 20))
		return 1;

	for (ci = 0; ci < pa_num_cases; ci++) {
		struct pa_case cc = pa_cases[ci];
		struct pa_inputs in;
		uint64_t args[PA_NARGS];
		unsigned long tasks;
		double *ref;
		float *out;
		int ret;

		if (!selected(argc, argv, first, cc.name))
			continue;
		if (n_lens > 0) {
			cc.seq_lens = lens;
			cc.n_seq_lens = n_lens;
		}
		if (pa_gen_inputs(&cc, &in))
			return 1;
		ref = malloc(in.out_elems * sizeof(double));
		if (!ref)
			return 1;
		pa_golden(&in, ref);
		ex_sim_reset(&sim);
		if (upload(&sim, &in, args, &out)) {
			fprintf(stderr, "%s: GM exhausted\n", cc.name);
			return 1;
		}

		ret = ex_sim_run(&sim, args, PA_NARGS, &tasks);
		failed += !ex_check_f32(cc.name, ex_sim_label(&sim), PA_TOL, ref,
					 out, in.out_elems, tasks, pa_task_count(&in), ret);
		if (sim.task_ring_blocked)
			printf("  task ring flow control: %llu submits waited for a slot\n",
			       (unsigned long long)sim.task_ring_blocked);
		free(ref);
		pa_free_inputs(&in);
	}
	ex_sim_close(&sim);
	return failed ? 1 : 0;
}
