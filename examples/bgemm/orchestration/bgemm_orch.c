// SPDX-License-Identifier: MIT
/*
 * bgemm orchestration (PTO2 API only).
 *
 * args: [0] A  [1] B  [2] C   device addresses, tile-major fp32 (see
 *                             bgemm_case.h); C must be zero on entry.
 *
 * For every batch and output tile (m, n), inside one PTO2_SCOPE (which
 * bounds the lifetime of the four partial products):
 *   for k: P = A[m,k] . B[k,n]   GEMM_TILE (AIC), P from make_tensor()
 *          C[m,n] += P           TILE_ADD (AIV), INOUT on C's tile view
 * The TensorMap links GEMM -> ADD through P and chains the ADDs of one
 * tile through C's view (overlap on the same buffer).  256 tasks.
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

#include "../bgemm_case.h"

__attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(uint64_t *args,
						   int arg_count)
{
	PTO2OrchestrationConfig cfg = { .expected_arg_count = BGEMM_NARGS };

	(void)args;
	(void)arg_count;
	return cfg;
}

/* Output tile (bt, m, n): for each k, P = A[m,k] . B[k,n], C[m,n] += P. */
static void bgemm_submit_tile(PTO2Runtime *rt, Tensor *A, Tensor *B,
			      Tensor *C, int bt, int m, int n)
{
	uint64_t tile_shape[2] = { BGEMM_TILE, BGEMM_TILE };
	uint64_t tile_elems[1] = { BGEMM_TILE_ELEMS };
	uint64_t c_off[1] = { BGEMM_C_TILE(bt, m, n) };
	Tensor c_tile = pto_tensor_view(C, tile_elems, c_off);
	int k;

	for (k = 0; k < BGEMM_GRID_K; k++) {
		uint64_t a_off[1] = { BGEMM_A_TILE(bt, m, k) };
		uint64_t b_off[1] = { BGEMM_B_TILE(bt, k, n) };
		Tensor a_tile = pto_tensor_view(A, tile_elems, a_off);
		Tensor b_tile = pto_tensor_view(B, tile_elems, b_off);
		Tensor p = make_tensor(tile_shape, 2, PTO_DT_FP32);

		PTOParam gemm[] = {
			make_input_param(&a_tile),
			make_input_param(&b_tile),
			make_output_param(&p),
			make_scalar_param(BGEMM_TILE),
			make_scalar_param(BGEMM_TILE),
			make_scalar_param(BGEMM_TILE),
		};
		pto2_rt_submit_task(rt, BGEMM_FUNC_GEMM_TILE, PTO2_WORKER_CUBE,
				    gemm, 6);

		PTOParam add[] = {
			make_inout_param(&c_tile),
			make_input_param(&p),
			make_scalar_param(BGEMM_TILE_ELEMS),
		};
		pto2_rt_submit_task(rt, BGEMM_FUNC_TILE_ADD, PTO2_WORKER_VECTOR,
				    add, 3);
	}
}

__attribute__((visibility("default")))
int aicpu_orchestration_entry(PTO2Runtime *rt, uint64_t *args, int arg_count)
{
	uint64_t a_shape[1] = { BGEMM_A_ELEMS };
	uint64_t b_shape[1] = { BGEMM_B_ELEMS };
	uint64_t c_shape[1] = { BGEMM_C_ELEMS };
	Tensor A, B, C;
	int bt, m, n;

	if (arg_count != BGEMM_NARGS)
		return -EINVAL;
	A = make_tensor_external((void *)(uintptr_t)args[BGEMM_ARG_A], a_shape, 1, PTO_DT_FP32);
	B = make_tensor_external((void *)(uintptr_t)args[BGEMM_ARG_B], b_shape, 1, PTO_DT_FP32);
	C = make_tensor_external((void *)(uintptr_t)args[BGEMM_ARG_C], c_shape, 1, PTO_DT_FP32);

	for (bt = 0; bt < BGEMM_BATCH; bt++)
		for (m = 0; m < BGEMM_GRID_M; m++)
			for (n = 0; n < BGEMM_GRID_N; n++)
				PTO2_SCOPE(rt) {
					bgemm_submit_tile(rt, &A, &B, &C, bt, m, n);
				}

	pto2_rt_orchestration_done(rt);
	return pto2_rt_get_error(rt);
}
