// SPDX-License-Identifier: MIT
/*
 * bgemm for the check and e2e programs (common/ex_example.h): its kernels,
 * a case's data (tile-major A, B and C) and the graph by hand.
 */
#include <errno.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_example.h"
#include "bgemm_case.h"

static const struct ex_kernel_desc bgemm_kernels[] = {
	{ BGEMM_FUNC_GEMM_TILE, "GEMM_TILE", "aic_gemm_tile.so", PTO2_WORKER_CUBE },
	{ BGEMM_FUNC_TILE_ADD, "TILE_ADD", "aiv_tile_add.so", PTO2_WORKER_VECTOR },
};

static const char *bgemm_case_name(size_t ci)
{
	return ci < bgemm_num_cases ? bgemm_cases[ci].name : NULL;
}

/* A, B and C for the orchestration (C zero), the golden in host memory. */
static int bgemm_setup(size_t ci, struct ex_mem *m, struct ex_case *c)
{
	float *a = ex_mem_dev(m, BGEMM_A_ELEMS * sizeof(float), &c->args[BGEMM_ARG_A]);
	float *b = ex_mem_dev(m, BGEMM_B_ELEMS * sizeof(float), &c->args[BGEMM_ARG_B]);
	float *cm = ex_mem_dev(m, BGEMM_C_ELEMS * sizeof(float), &c->args[BGEMM_ARG_C]);
	double *ref = ex_mem_host(m, BGEMM_C_ELEMS * sizeof(double));

	if (!a || !b || !cm || !ref)
		return -ENOMEM;
	bgemm_gen_inputs(&bgemm_cases[ci], a, b, cm);
	bgemm_golden(a, b, ref);
	c->nargs = BGEMM_NARGS;
	c->out = cm;
	c->out_elems = BGEMM_C_ELEMS;
	c->out_init = 0;		/* C accumulates: zero on entry */
	c->ref = ref;
	c->tol = BGEMM_TOL;
	c->tasks = BGEMM_TASKS;
	return 0;
}

/* Output tile (bt, m, n): for each k the GEMM into @p, then C += p. */
static int bgemm_run_tile(struct ex_kernel_set *ks, const struct ex_case *c,
			  float *p, int bt, int m, int n)
{
	const float *a = EX_HOST(c->args[BGEMM_ARG_A]);
	const float *b = EX_HOST(c->args[BGEMM_ARG_B]);
	float *cm = EX_HOST(c->args[BGEMM_ARG_C]);
	int k, ret = 0;

	for (k = 0; k < BGEMM_GRID_K && !ret; k++) {
		uint64_t gemm[] = {
			EX_ADDR(a + BGEMM_A_TILE(bt, m, k)),
			EX_ADDR(b + BGEMM_B_TILE(bt, k, n)),
			EX_ADDR(p), BGEMM_TILE, BGEMM_TILE, BGEMM_TILE,
		};
		uint64_t add[] = {
			EX_ADDR(cm + BGEMM_C_TILE(bt, m, n)),
			EX_ADDR(p), BGEMM_TILE_ELEMS,
		};

		ret = ex_kernel_run(ks, BGEMM_FUNC_GEMM_TILE, PTO2_WORKER_CUBE,
				    gemm, 6);
		if (!ret)
			ret = ex_kernel_run(ks, BGEMM_FUNC_TILE_ADD,
					    PTO2_WORKER_VECTOR, add, 3);
	}
	return ret;
}

/*
 * The graph by hand.  Order: for each (batch, m, n, k) the GEMM then the
 * ADD, exactly the orchestration's submission order.
 */
static int bgemm_run_direct(struct ex_kernel_set *ks, const struct ex_case *c,
			    struct ex_mem *mem)
{
	float *p = ex_mem_host(mem, BGEMM_TILE_ELEMS * sizeof(float));
	int bt, m, n, ret = 0;

	if (!p)
		return -1;
	for (bt = 0; bt < BGEMM_BATCH && !ret; bt++)
		for (m = 0; m < BGEMM_GRID_M && !ret; m++)
			for (n = 0; n < BGEMM_GRID_N && !ret; n++)
				ret = bgemm_run_tile(ks, c, p, bt, m, n);
	return ret;
}

const struct ex_example ex_example = {
	.kernels = bgemm_kernels,
	.nr_kernels = sizeof(bgemm_kernels) / sizeof(bgemm_kernels[0]),
	.case_name = bgemm_case_name,
	.sim_bytes = (BGEMM_A_ELEMS + BGEMM_B_ELEMS + BGEMM_C_ELEMS) *
		     sizeof(float) + (1 << 20),
	.setup = bgemm_setup,
	.run_direct = bgemm_run_direct,
};
