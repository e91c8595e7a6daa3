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

/* z = x (func) y, n elements: ADD or MUL. */
static void submit_xyz(PTO2Runtime *rt, int32_t func, Tensor *x, Tensor *y,
		       Tensor *z, uint64_t n)
{
	PTOParam p[] = {
		make_input_param(x), make_input_param(y),
		make_output_param(z), make_scalar_param(n),
	};

	pto2_rt_submit_task(rt, func, PTO2_WORKER_VECTOR, p, 4);
}

/* z = x + s, n elements: ADD_SCALAR. */
static void submit_add_scalar(PTO2Runtime *rt, Tensor *x, float s, Tensor *z,
			      uint64_t n)
{
	PTOParam p[] = {
		make_input_param(x), make_output_param(z),
		make_scalar_param(pto_f32_arg(s)), make_scalar_param(n),
	};

	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
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

		submit_xyz(rt, VEC_FUNC_ADD, &a, &b, &c, n);	/* c = a + b */
		submit_add_scalar(rt, &c, 1.0f, &d, n);		/* d = c + 1 */
		submit_add_scalar(rt, &c, 2.0f, &e, n);		/* e = c + 2 */
		submit_xyz(rt, VEC_FUNC_MUL, &d, &e, &g, n);	/* g = d * e */
		submit_xyz(rt, VEC_FUNC_ADD, &g, &c, &f, n);	/* f = g + c */
	}

	pto2_rt_orchestration_done(rt);
	return pto2_rt_get_error(rt);
}
