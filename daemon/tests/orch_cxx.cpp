// SPDX-License-Identifier: MIT
/*
 * orch_cxx.cpp - an orchestration written the reference runtime's way in
 * C++ (Tensor&, DataType::FLOAT32, RAII PTO2_SCOPE), built as C++ and run
 * by test_runtime: checks that the API header serves C++ sources.
 */
#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

extern "C" int cxx_orch_entry(PTO2Runtime *rt, uint64_t *args, int arg_count);

/* kernel ids of test_runtime.c */
static const int K_ADD = 0, K_ADD_SCALAR = 1, K_MUL = 2;

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(uint64_t *args,
							      int arg_count)
{
	(void)args;
	(void)arg_count;
	PTO2OrchestrationConfig c;
	c.expected_arg_count = 4;
	return c;
}

extern "C" int cxx_orch_entry(PTO2Runtime *rt, uint64_t *args, int arg_count)
{
	if (arg_count != 4)
		return -22;
	uint64_t shapes[1] = { args[3] };
	Tensor a = make_tensor_external((void *)(uintptr_t)args[0], shapes, 1,
					DataType::FLOAT32);
	Tensor b = make_tensor_external((void *)(uintptr_t)args[1], shapes, 1,
					DataType::FLOAT32);
	Tensor f = make_tensor_external((void *)(uintptr_t)args[2], shapes, 1,
					DataType::FLOAT32);
	Tensor c = make_tensor(shapes, 1, DataType::FLOAT32);

	PTOParam p0[] = { make_input_param(a), make_input_param(b),
			  make_output_param(c), make_scalar_param(args[3]) };
	pto2_rt_submit_task(rt, K_ADD, PTO2_WORKER_VECTOR, p0, 4);
	PTO2_SCOPE(rt) {
		Tensor d = make_tensor(shapes, 1, DataType::FLOAT32);
		Tensor e = make_tensor(shapes, 1, DataType::FLOAT32);
		Tensor g = make_tensor(shapes, 1, DataType::FLOAT32);
		PTOParam p1[] = { make_input_param(c), make_output_param(d),
				  make_scalar_param(pto_f32_arg(1.0f)),
				  make_scalar_param(args[3]) };
		pto2_rt_submit_task(rt, K_ADD_SCALAR, PTO2_WORKER_VECTOR, p1, 4);
		PTOParam p2[] = { make_input_param(c), make_output_param(e),
				  make_scalar_param(pto_f32_arg(2.0f)),
				  make_scalar_param(args[3]) };
		pto2_rt_submit_task(rt, K_ADD_SCALAR, PTO2_WORKER_VECTOR, p2, 4);
		PTOParam p3[] = { make_input_param(d), make_input_param(e),
				  make_output_param(g), make_scalar_param(args[3]) };
		pto2_rt_submit_task(rt, K_MUL, PTO2_WORKER_VECTOR, p3, 4);
		PTOParam p4[] = { make_input_param(g), make_input_param(c),
				  make_inout_param(f), make_scalar_param(args[3]) };
		pto2_rt_submit_task(rt, K_ADD, PTO2_WORKER_VECTOR, p4, 4);
		if (get_element_size(DataType::BF16) != 2)
			break;	/* break is safe with the C++ RAII scope */
	}
	return 0;
}
