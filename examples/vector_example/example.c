// SPDX-License-Identifier: MIT
/*
 * vector_example for the check and e2e programs (common/ex_example.h):
 * its kernels, a case's data (a, b, f of VEC_N floats) and the graph by
 * hand.
 */
#include <errno.h>

#include <pto/pto_orchestration_api.h>

#include "../common/ex_common.h"
#include "../common/ex_example.h"
#include "vector_case.h"

static const struct ex_kernel_desc vec_kernels[] = {
	{ VEC_FUNC_ADD, "ADD", "aiv_add.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_ADD_SCALAR, "ADD_SCALAR", "aiv_add_scalar.so", PTO2_WORKER_VECTOR },
	{ VEC_FUNC_MUL, "MUL", "aiv_mul.so", PTO2_WORKER_VECTOR },
};

static const char *vec_case_name(size_t ci)
{
	return ci < vec_num_cases ? vec_cases[ci].name : NULL;
}

/* a, b and f for the orchestration, the golden in host memory. */
static int vec_setup(size_t ci, struct ex_mem *m, struct ex_case *c)
{
	const size_t n = VEC_N, bytes = n * sizeof(float);
	float *a = ex_mem_dev(m, bytes, &c->args[VEC_ARG_A]);
	float *b = ex_mem_dev(m, bytes, &c->args[VEC_ARG_B]);
	float *f = ex_mem_dev(m, bytes, &c->args[VEC_ARG_F]);
	double *ref = ex_mem_host(m, n * sizeof(double));

	if (!a || !b || !f || !ref)
		return -ENOMEM;
	vec_gen_inputs(&vec_cases[ci], a, b, n);
	vec_golden(a, b, ref, n);
	c->args[VEC_ARG_N] = n;
	c->nargs = VEC_NARGS;
	c->out = f;
	c->out_elems = n;
	c->out_init = 0xff;		/* NaN until written */
	c->ref = ref;
	c->tol = VEC_TOL;
	c->tasks = VEC_TASKS;
	return 0;
}

/* The graph by hand: c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c */
static int vec_run_direct(struct ex_kernel_set *ks, const struct ex_case *cs,
			  struct ex_mem *m)
{
	const uint64_t n = cs->args[VEC_ARG_N];
	const uint64_t a = cs->args[VEC_ARG_A], b = cs->args[VEC_ARG_B];
	const uint64_t f = cs->args[VEC_ARG_F];
	float *c = ex_mem_host(m, n * sizeof(float));
	float *d = ex_mem_host(m, n * sizeof(float));
	float *e = ex_mem_host(m, n * sizeof(float));
	float *g = ex_mem_host(m, n * sizeof(float));
	uint64_t t0[] = { a, b, EX_ADDR(c), n };
	uint64_t t1[] = { EX_ADDR(c), EX_ADDR(d), ex_u64_from_f32(1.0f), n };
	uint64_t t2[] = { EX_ADDR(c), EX_ADDR(e), ex_u64_from_f32(2.0f), n };
	uint64_t t3[] = { EX_ADDR(d), EX_ADDR(e), EX_ADDR(g), n };
	uint64_t t4[] = { EX_ADDR(g), EX_ADDR(c), f, n };
	int ret;

	if (!c || !d || !e || !g)
		return -1;
	ret = ex_kernel_run(ks, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, t0, 4);
	if (!ret)
		ret = ex_kernel_run(ks, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, t1, 4);
	if (!ret)
		ret = ex_kernel_run(ks, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, t2, 4);
	if (!ret)
		ret = ex_kernel_run(ks, VEC_FUNC_MUL, PTO2_WORKER_VECTOR, t3, 4);
	if (!ret)
		ret = ex_kernel_run(ks, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, t4, 4);
	return ret;
}

const struct ex_example ex_example = {
	.kernels = vec_kernels,
	.nr_kernels = sizeof(vec_kernels) / sizeof(vec_kernels[0]),
	.case_name = vec_case_name,
	.sim_bytes = 4 * VEC_N * sizeof(float) + (1 << 20),
	.setup = vec_setup,
	.run_direct = vec_run_direct,
};
