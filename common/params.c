// SPDX-License-Identifier: MIT
/*
 * params.c - task parameter rules (see params.h)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <pto-private/params.h>

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

/*
 * The rules of a valid view, in one place: 0, or -EINVAL and (unless @why
 * is NULL) the rule broken. The reason is written only on failure, so
 * the check of every submit pays nothing for it.
 */
static int tensor_rules(const Tensor *t, char *why, size_t len)
{
	uint32_t es = pto_dtype_size(t->dtype);
	uint64_t raw = 1;
	uint32_t i;

	if (!es)
		return fail(why, len, "unknown dtype %u", (unsigned int)t->dtype);
	/* what make_tensor() and pto_tensor_view() return refused */
	if (!t->ndims)
		return fail(why, len,
			    "no dimensions (a tensor or view its maker refused: a shape, offset or dimension count out of range)");
	if (t->ndims > PTO2_MAX_TENSOR_DIMS)
		return fail(why, len, "%u dimensions (1 to %d)",
			    (unsigned int)t->ndims, PTO2_MAX_TENSOR_DIMS);
	/* overflow tests by multiplication: a 64-bit divide per dimension
	 * was a good part of a submit's cost */
	for (i = 0; i < t->ndims; i++) {
		const uint64_t o = t->offsets[i], sh = t->shapes[i];
		const uint64_t r = t->raw_shapes[i];

		if (!r)
			return fail(why, len, "dimension %u: raw shape 0", i);
		if (o > r || sh > r - o)
			return fail(why, len,
				    "dimension %u: offset %llu + shape %llu past its raw shape %llu",
				    i, (unsigned long long)o,
				    (unsigned long long)sh,
				    (unsigned long long)r);
		if (__builtin_mul_overflow(raw, r, &raw))
			return fail(why, len,
				    "its raw shapes' product overflows 64 bits");
	}
	if (__builtin_mul_overflow(raw, (uint64_t)es, &raw))
		return fail(why, len, "its raw shapes' bytes overflow 64 bits");
	if (raw > t->size)
		return fail(why, len,
			    "its raw shapes take %llu bytes, its size is %llu",
			    (unsigned long long)raw,
			    (unsigned long long)t->size);
	return 0;
}

int pto_tensor_check(const Tensor *t)
{
	return tensor_rules(t, NULL, 0);
}

int pto_params_check(int32_t kernel_id, const PTOParam *params, int32_t n,
		     char *msg, size_t msglen)
{
	char why[128];
	int32_t i, j;

	if (n < 0 || n > PTO2_MAX_TASK_PARAMS)
		return fail(msg, msglen,
			    "submit: %d params (kernel %d); at most %d allowed",
			    n, kernel_id, PTO2_MAX_TASK_PARAMS);
	if (n && !params)
		return fail(msg, msglen,
			    "submit: kernel %d: params is NULL with %d params",
			    kernel_id, n);
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
		if (!t)
			return fail(msg, msglen,
				    "submit: param %d of kernel %d has no tensor (NULL)",
				    i, kernel_id);
		if (tensor_rules(t, why, sizeof(why)))
			return fail(msg, msglen,
				    "submit: param %d of kernel %d is not a valid tensor view: %s",
				    i, kernel_id, why);
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
