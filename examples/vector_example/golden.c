// SPDX-License-Identifier: MIT
/* vector_example: input generator and double-precision golden. */
#include "vector_case.h"

#include "../common/ex_common.h"

const struct vec_case vec_cases[] = {
	{ "Const", 1 },		/* a = 2, b = 3, f = 47 */
	{ "Random", 0 },	/* a, b uniform in [-4, 4) */
};
const size_t vec_num_cases = sizeof(vec_cases) / sizeof(vec_cases[0]);

void vec_gen_inputs(const struct vec_case *c, float *a, float *b, size_t n)
{
	struct ex_rng r;
	size_t i;

	ex_rng_seed(&r, c->name);
	for (i = 0; i < n; i++) {
		if (c->constant) {
			a[i] = 2.0f;
			b[i] = 3.0f;
		} else {
			a[i] = ex_rng_uniform(&r, -4.0f, 4.0f);
			b[i] = ex_rng_uniform(&r, -4.0f, 4.0f);
		}
	}
}

void vec_golden(const float *a, const float *b, double *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double c = (double)a[i] + (double)b[i];

		f[i] = (c + 1.0) * (c + 2.0) + c;
	}
}
