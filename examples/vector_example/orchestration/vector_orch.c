// SPDX-License-Identifier: MIT
/*
 * vector_example orchestration (PTO2 API only).
 *
 * args: [0] a  [1] b  [2] f   device addresses of fp32 tensors of n
 *       [3] n                 element count
 *
 *   c = a + b; d = c + 1; e = c + 2; g = d * e; f = g + c
 *
 * c, d, e and g are intermediates (make_tensor, allocated by the runtime
 * from its heap at submit); the TensorMap derives the edges
 * c -> {d, e, f}, d -> g, e -> g, g -> f.  5 tasks, all AIV.
 */
#include <errno.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

#include "../vector_case.h"

__attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(uint64_t *args,
						   int arg_count)
{
	PTO2OrchestrationConfig cfg = { .expected_arg_count = VEC_NARGS };

	(void)args;
	(void)arg_count;
	return cfg;
}

__attribute__((visibility("default")))
int aicpu_orchestration_entry(PTO2Runtime *rt, uint64_t *args, int arg_count)
{
	uint64_t n, shape[1];
	Tensor a, b, f;

	if (arg_count != VEC_NARGS || args[VEC_ARG_N] == 0)
		return -EINVAL;
	n = args[VEC_ARG_N];
	shape[0] = n;
	a = make_tensor_external((void *)(uintptr_t)args[VEC_ARG_A], shape, 1, PTO_DT_FP32);
	b = make_tensor_external((void *)(uintptr_t)args[VEC_ARG_B], shape, 1, PTO_DT_FP32);
	f = make_tensor_external((void *)(uintptr_t)args[VEC_ARG_F], shape, 1, PTO_DT_FP32);

	PTO2_SCOPE(rt) {
		Tensor c = make_tensor(shape, 1, PTO_DT_FP32);
		Tensor d = make_tensor(shape, 1, PTO_DT_FP32);
		Tensor e = make_tensor(shape, 1, PTO_DT_FP32);
		Tensor g = make_tensor(shape, 1, PTO_DT_FP32);

		/* c = a + b */
		PTOParam p0[] = {
			make_input_param(&a), make_input_param(&b),
			make_output_param(&c), make_scalar_param(n),
		};
		pto2_rt_submit_task(rt, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, p0, 4);

		/* d = c + 1 */
		PTOParam p1[] = {
			make_input_param(&c), make_output_param(&d),
			make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(n),
		};
		pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p1, 4);

		/* e = c + 2 */
		PTOParam p2[] = {
			make_input_param(&c), make_output_param(&e),
			make_scalar_param(pto_f32_arg(2.0f)), make_scalar_param(n),
		};
		pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p2, 4);

		/* g = d * e */
		PTOParam p3[] = {
			make_input_param(&d), make_input_param(&e),
			make_output_param(&g), make_scalar_param(n),
		};
		pto2_rt_submit_task(rt, VEC_FUNC_MUL, PTO2_WORKER_VECTOR, p3, 4);

		/* f = g + c */
		PTOParam p4[] = {
			make_input_param(&g), make_input_param(&c),
			make_output_param(&f), make_scalar_param(n),
		};
		pto2_rt_submit_task(rt, VEC_FUNC_ADD, PTO2_WORKER_VECTOR, p4, 4);
	}

	pto2_rt_orchestration_done(rt);
	return pto2_rt_get_error(rt);
}
