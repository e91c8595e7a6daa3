// SPDX-License-Identifier: MIT
/*
 * bgemm end to end on the PTO2 runtime over the sim device (see
 * common/ex_sim.h): CASE <case>/sim lines.
 *
 * usage: e2e_sim [-d BUILD_DIR] [CASE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_common.h"
#include "../common/ex_sim.h"
#include "bgemm_case.h"

static const struct ex_kernel_desc kernels[] = {
	{ BGEMM_FUNC_GEMM_TILE, "GEMM_TILE", "aic_gemm_tile.so", PTO2_WORKER_CUBE },
	{ BGEMM_FUNC_TILE_ADD, "TILE_ADD", "aiv_tile_add.so", PTO2_WORKER_VECTOR },
};

int main(int argc, char **argv)
{
	char dir[4096];
	struct ex_sim sim;
	int first, failed = 0;
	size_t ci;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	if (ex_sim_open(&sim, dir, kernels, sizeof(kernels) / sizeof(kernels[0]),
			(BGEMM_A_ELEMS + BGEMM_B_ELEMS + BGEMM_C_ELEMS) *
			sizeof(float) + (1 << 20)))
		return 1;

	for (ci = 0; ci < bgemm_num_cases; ci++) {
		const struct bgemm_case *c = &bgemm_cases[ci];
		double *ref;
		float *a, *b, *cm;
		uint64_t args[BGEMM_NARGS];
		unsigned long tasks;
		int ret;

		if (!ex_case_selected(argc, argv, first, c->name))
			continue;
		ref = malloc(BGEMM_C_ELEMS * sizeof(double));
		if (!ref)
			return 1;
		ex_sim_reset(&sim);
		args[BGEMM_ARG_A] = ex_sim_alloc(&sim, BGEMM_A_ELEMS * sizeof(float), (void **)&a);
		args[BGEMM_ARG_B] = ex_sim_alloc(&sim, BGEMM_B_ELEMS * sizeof(float), (void **)&b);
		args[BGEMM_ARG_C] = ex_sim_alloc(&sim, BGEMM_C_ELEMS * sizeof(float), (void **)&cm);
		if (!a || !b || !cm) {
			fprintf(stderr, "GM exhausted\n");
			return 1;
		}
		bgemm_gen_inputs(c, a, b, cm);	/* C = 0 */
		bgemm_golden(a, b, ref);

		ret = ex_sim_run(&sim, args, BGEMM_NARGS, &tasks);
		failed += !ex_check_f32(c->name, ex_sim_label(&sim), BGEMM_TOL, ref,
					 cm, BGEMM_C_ELEMS, tasks, BGEMM_TASKS, ret);
		free(ref);
	}
	ex_sim_close(&sim);
	return failed ? 1 : 0;
}
