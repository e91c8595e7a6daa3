// SPDX-License-Identifier: MIT
/*
 * params.c - task parameter rules (see params.h)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <pto-private/params.h>

int pto_tensor_check(const Tensor *t)
{
	uint32_t es = pto_dtype_size(t->dtype);
	uint64_t raw = 1;
	uint32_t i;

	if (!es || t->ndims < 1 || t->ndims > PTO2_MAX_TENSOR_DIMS)
		return -EINVAL;
	/* overflow tests by multiplication: a 64-bit divide per dimension
	 * was a good part of a submit's cost */
	for (i = 0; i < t->ndims; i++) {
		if (!t->raw_shapes[i] || t->offsets[i] > t->raw_shapes[i] ||
		    t->shapes[i] > t->raw_shapes[i] - t->offsets[i] ||
		    __builtin_mul_overflow(raw, t->raw_shapes[i], &raw))
			return -EINVAL;
	}
	if (__builtin_mul_overflow(raw, (uint64_t)es, &raw) || raw > t->size)
		return -EINVAL;
	return 0;
}

__attribute__((format(printf, 3, 4)))
static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int pto_params_check(int32_t kernel_id, const PTOParam *params, int32_t n,
		     char *msg, size_t msglen)
{
	int32_t i, j;

	if (n < 0 || n > PTO2_MAX_TASK_PARAMS || (n && !params))
		return fail(msg, msglen,
			    "submit: %d params (kernel %d); at most %d allowed",
			    n, kernel_id, PTO2_MAX_TASK_PARAMS);
	for (i = 0; i < n; i++) {
		int32_t type = (int32_t)params[i].type;
		const Tensor *t = params[i].tensor;

		if (type == PTO_PARAM_SCALAR)
			continue;
		if (type != PTO_PARAM_INPUT && type != PTO_PARAM_OUTPUT &&
		    type != PTO_PARAM_INOUT)
			return fail(msg, msglen,
				    "submit: param %d of kernel %d has type %d (not INPUT, OUTPUT, INOUT or SCALAR)",
				    i, kernel_id, type);
		if (!t || pto_tensor_check(t))
			return fail(msg, msglen,
				    "submit: param %d of kernel %d is not a valid tensor view (dtype, dimensions, shape, offsets or size)",
				    i, kernel_id);
		if (type != PTO_PARAM_OUTPUT && !t->addr)
			return fail(msg, msglen,
				    "submit: param %d of kernel %d reads a tensor that was never produced (addr 0)",
				    i, kernel_id);
		/* one buffer for each: the second would not be the first's */
		for (j = 0; !t->addr && j < i; j++)
			if (params[j].tensor == t)
				return fail(msg, msglen,
					    "submit: params %d and %d of kernel %d are the same new intermediate tensor (an OUTPUT without an address): pass it once",
					    j, i, kernel_id);
	}
	return 0;
}
