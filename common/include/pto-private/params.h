// SPDX-License-Identifier: MIT
/*
 * params.h - the rules a submitted task's parameters follow
 *
 * Checked where a task enters (libpto, before it goes on the stream), where
 * ptod replays it into a runtime, and by the runtime itself (which is also
 * driven directly by tests and the sim device): the same function with
 * the same messages everywhere.
 */
#ifndef PTO_PRIVATE_PARAMS_H
#define PTO_PRIVATE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

/* Is @id a kernel id a client may use, 0 .. PTO2_MAX_KERNELS - 1? */
static inline bool pto_kernel_id_ok(int32_t id)
{
	return id >= 0 && id < PTO2_MAX_KERNELS;
}

/*
 * 0 if @t is a valid view: a known dtype, 1..PTO2_MAX_TENSOR_DIMS
 * dimensions, every raw dimension non-zero, the view inside the raw shape
 * in each dimension, and the raw shape inside @t->size bytes (no
 * overflow). -EINVAL otherwise. The address is not checked.
 */
int pto_tensor_check(const Tensor *t);

/*
 * 0 if the @n parameters of a task of @kernel_id can be submitted:
 * 0 <= n <= PTO2_MAX_TASK_PARAMS, every type INPUT/OUTPUT/INOUT/SCALAR,
 * every tensor parameter a valid view (pto_tensor_check), and every tensor
 * that is read (INPUT, INOUT) has an address (an OUTPUT may have 0: the
 * runtime allocates it). Otherwise -EINVAL and the reason in @msg.
 */
int pto_params_check(int32_t kernel_id, const PTOParam *params, int32_t n,
		     char *msg, size_t msglen);

#endif /* PTO_PRIVATE_PARAMS_H */
