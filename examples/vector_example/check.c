// SPDX-License-Identifier: MIT
/*
 * vector_example native check (no runtime).  For every case:
 *   <case>       the five kernels called directly, in a topological order
 *   <case>/orch  orch.so run through the serial reference executor
 * both compared with the double-precision golden.
 *
 * usage: check [-d BUILD_DIR] [CASE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_common.h"
#include "../common/ex_exec.h"
#include "vector_case.h"

static const struct ex_kernel_desc kernels[] = {
	{ VEC_FUNC_ADD, "ADD", "aiv_add.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_ADD_SCALAR, "ADD_SCALAR", "aiv_add_scalar.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_MUL, "MUL", "aiv_mul.so", PTO2_WORKER_VECTOR },
};

#define P(x) ((uint64_t)(uintptr_t)(x))

/* The graph by hand: c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c */
static int run_direct(struct ex_kernel_set *ks, const float *a,
		      const float *b, float *f, size_t n)
{
	float *c = malloc(n * sizeof(float)), *d = malloc(n * sizeof(float));
	float *e = malloc(n * sizeof(float)), *g = malloc(n * sizeof(float));
	int ret = -1;

	if (c && d && e && g) {
		uint64_t t0[] = { P(a), P(b), P(c), n };
		uint64_t t1[] = { P(c), P(d), ex_u64_from_f32(1.0f), n };
		uint64_t t2[] = { P(c), P(e), ex_u64_from_f32(2.0f), n };
		uint64_t t3[] = { P(d), P(e), P(g), n };
		uint64_t t4[] = { P(g), P(c), P(f), n };

		ret = ex_kernel_run(ks, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, t0, 4);
		if (!ret)
			ret = ex_kernel_run(ks, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, t1, 4);
		if (!ret)
			ret = ex_kernel_run(ks, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, t2, 4);
		if (!ret)
			ret = ex_kernel_run(ks, VEC_FUNC_MUL, PTO2_WORKER_VECTOR, t3, 4);
		if (!ret)
			ret = ex_kernel_run(ks, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, t4, 4);
	}
	free(c);
	free(d);
	free(e);
	free(g);
	return ret;
}

static int compare(const char *name, const char *suffix, const double *ref,
		   const float *f, size_t n, unsigned long tasks, int ret)
{
	return ex_check_f32(name, suffix, VEC_TOL, ref, f, n, tasks, VEC_TASKS,
			    ret);
}

int main(int argc, char **argv)
{
	char dir[4096], orch[4200];
	struct ex_kernel_set ks;
	int first, failed = 0;
	size_t ci, n = VEC_N;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	snprintf(orch, sizeof(orch), "%s/orch.so", dir);
	if (ex_kernels_load(&ks, dir, kernels, sizeof(kernels) / sizeof(kernels[0])))
		return 1;

	for (ci = 0; ci < vec_num_cases; ci++) {
		const struct vec_case *c = &vec_cases[ci];
		float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
		float *f = malloc(n * sizeof(float));
		double *ref = malloc(n * sizeof(double));
		unsigned long tasks;
		int ret;

		if (!ex_case_selected(argc, argv, first, c->name)) {
			free(a); free(b); free(f); free(ref);
			continue;
		}
		if (!a || !b || !f || !ref) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		vec_gen_inputs(c, a, b, n);
		vec_golden(a, b, ref, n);

		/* 1. kernels directly */
		memset(f, 0xff, n * sizeof(float));
		ks.tasks = 0;
		ret = run_direct(&ks, a, b, f, n);
		failed += !compare(c->name, "", ref, f, n, ks.tasks, ret);

		/* 2. orchestration through the serial reference executor */
		{
			uint64_t args[VEC_NARGS] = {
				[VEC_ARG_A] = P(a), [VEC_ARG_B] = P(b),
				[VEC_ARG_F] = P(f), [VEC_ARG_N] = n,
			};

			memset(f, 0xff, n * sizeof(float));
			ret = ex_serial_run_orch(orch, &ks, args, VEC_NARGS, &tasks);
			failed += !compare(c->name, "/orch", ref, f, n, tasks, ret);
		}
		free(a);
		free(b);
		free(f);
		free(ref);
	}
	ex_kernels_unload(&ks);
	return failed ? 1 : 0;
}
