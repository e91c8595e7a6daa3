// SPDX-License-Identifier: MIT
/*
 * bgemm native check (no runtime).  For every case:
 *   <case>       GEMM_TILE / TILE_ADD called directly, in submission order
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
#include "bgemm_case.h"

static const struct ex_kernel_desc kernels[] = {
	{ BGEMM_FUNC_GEMM_TILE, "GEMM_TILE", "aic_gemm_tile.so", PTO2_WORKER_CUBE },
	{ BGEMM_FUNC_TILE_ADD, "TILE_ADD", "aiv_tile_add.so", PTO2_WORKER_VECTOR },
};

#define P(x) ((uint64_t)(uintptr_t)(x))

/*
 * The graph by hand.  Order: for each (batch, m, n, k) the GEMM then the
 * ADD, exactly the orchestration's submission order.
 */
static int run_direct(struct ex_kernel_set *ks, const float *a,
		      const float *b, float *cm)
{
	float *p = malloc(BGEMM_TILE_ELEMS * sizeof(float));
	int bt, m, n, k, ret = 0;

	if (!p)
		return -1;
	for (bt = 0; bt < BGEMM_BATCH && !ret; bt++)
		for (m = 0; m < BGEMM_GRID_M && !ret; m++)
			for (n = 0; n < BGEMM_GRID_N && !ret; n++)
				for (k = 0; k < BGEMM_GRID_K && !ret; k++) {
					uint64_t gemm[] = {
						P(a + BGEMM_A_TILE(bt, m, k)),
						P(b + BGEMM_B_TILE(bt, k, n)),
						P(p), BGEMM_TILE, BGEMM_TILE,
						BGEMM_TILE,
					};
					uint64_t add[] = {
						P(cm + BGEMM_C_TILE(bt, m, n)),
						P(p), BGEMM_TILE_ELEMS,
					};

					ret = ex_kernel_run(ks, BGEMM_FUNC_GEMM_TILE,
							    PTO2_WORKER_CUBE, gemm, 6);
					if (!ret)
						ret = ex_kernel_run(ks, BGEMM_FUNC_TILE_ADD,
								    PTO2_WORKER_VECTOR, add, 3);
				}
	free(p);
	return ret;
}

static int compare(const char *name, const char *suffix, const double *ref,
		   const float *cm, unsigned long tasks, int ret)
{
	return ex_check_f32(name, suffix, BGEMM_TOL, ref, cm, BGEMM_C_ELEMS,
			    tasks, BGEMM_TASKS, ret);
}

int main(int argc, char **argv)
{
	char dir[4096], orch[4200];
	struct ex_kernel_set ks;
	int first, failed = 0;
	size_t ci;

	first = ex_parse_args(argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	snprintf(orch, sizeof(orch), "%s/orch.so", dir);
	if (ex_kernels_load(&ks, dir, kernels, sizeof(kernels) / sizeof(kernels[0])))
		return 1;

	for (ci = 0; ci < bgemm_num_cases; ci++) {
		const struct bgemm_case *c = &bgemm_cases[ci];
		float *a, *b, *cm;
		double *ref;
		unsigned long tasks;
		int ret;

		if (!ex_case_selected(argc, argv, first, c->name))
			continue;
		a = malloc(BGEMM_A_ELEMS * sizeof(float));
		b = malloc(BGEMM_B_ELEMS * sizeof(float));
		cm = malloc(BGEMM_C_ELEMS * sizeof(float));
		ref = malloc(BGEMM_C_ELEMS * sizeof(double));
		if (!a || !b || !cm || !ref) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
		bgemm_gen_inputs(c, a, b, cm);
		bgemm_golden(a, b, ref);

		/* 1. kernels directly (C starts at zero) */
		ks.tasks = 0;
		ret = run_direct(&ks, a, b, cm);
		failed += !compare(c->name, "", ref, cm, ks.tasks, ret);

		/* 2. orchestration through the serial reference executor */
		{
			uint64_t args[BGEMM_NARGS] = {
				[BGEMM_ARG_A] = P(a), [BGEMM_ARG_B] = P(b),
				[BGEMM_ARG_C] = P(cm),
			};

			memset(cm, 0, BGEMM_C_ELEMS * sizeof(float));
			ret = ex_serial_run_orch(orch, &ks, args, BGEMM_NARGS, &tasks);
			failed += !compare(c->name, "/orch", ref, cm, tasks, ret);
		}
		free(a);
		free(b);
		free(cm);
		free(ref);
	}
	ex_kernels_unload(&ks);
	return failed ? 1 : 0;
}
