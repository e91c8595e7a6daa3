// SPDX-License-Identifier: MIT
/*
 * vector_example end to end on the PTO2 runtime over the sim device
 * (see common/ex_sim.h): CASE <case>/sim lines.
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
#include "vector_case.h"

static const struct ex_kernel_desc kernels[] = {
	{ VEC_FUNC_ADD, "ADD", "aiv_add.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_ADD_SCALAR, "ADD_SCALAR", "aiv_add_scalar.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_MUL, "MUL", "aiv_mul.so", PTO2_WORKER_VECTOR },
};

int main(int argc, char **argv)
{
	const size_t n = VEC_N;
	char dir[4096];
	struct ex_sim sim;
	int first, failed = 0;
	size_t ci;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	if (ex_sim_open(&sim, dir, kernels, sizeof(kernels) / sizeof(kernels[0]),
			4 * n * sizeof(float) + (1 << 20)))
		return 1;

	for (ci = 0; ci < vec_num_cases; ci++) {
		const struct vec_case *c = &vec_cases[ci];
		double *ref = malloc(n * sizeof(double));
		float *a, *b, *f;
		uint64_t args[VEC_NARGS];
		unsigned long tasks;
		int ret;

		if (!ref)
			return 1;
		if (!ex_case_selected(argc, argv, first, c->name)) {
			free(ref);
			continue;
		}
		ex_sim_reset(&sim);
		args[VEC_ARG_A] = ex_sim_alloc(&sim, n * sizeof(float), (void **)&a);
		args[VEC_ARG_B] = ex_sim_alloc(&sim, n * sizeof(float), (void **)&b);
		args[VEC_ARG_F] = ex_sim_alloc(&sim, n * sizeof(float), (void **)&f);
		args[VEC_ARG_N] = n;
		if (!a || !b || !f) {
			fprintf(stderr, "GM exhausted\n");
			return 1;
		}
		vec_gen_inputs(c, a, b, n);
		vec_golden(a, b, ref, n);
		memset(f, 0xff, n * sizeof(float));

		ret = ex_sim_run(&sim, args, VEC_NARGS, &tasks);
		failed += !ex_check_f32(c->name, ex_sim_label(&sim), VEC_TOL, ref,
					 f, n, tasks, VEC_TASKS, ret);
		free(ref);
	}
	ex_sim_close(&sim);
	return failed ? 1 : 0;
}
