// SPDX-License-Identifier: MIT
/* bgemm: input generator and double-precision golden. */
#include "bgemm_case.h"

#include <string.h>

#include "../common/ex_common.h"

const struct bgemm_case bgemm_cases[] = {
	{ "Default", -1.0f, 1.0f },
};
const size_t bgemm_num_cases = sizeof(bgemm_cases) / sizeof(bgemm_cases[0]);

void bgemm_gen_inputs(const struct bgemm_case *c, float *a, float *b,
		      float *cm)
{
	struct ex_rng r;
	size_t i;

	ex_rng_seed(&r, c->name);
	for (i = 0; i < BGEMM_A_ELEMS; i++)
		a[i] = ex_rng_uniform(&r, c->lo, c->hi);
	for (i = 0; i < BGEMM_B_ELEMS; i++)
		b[i] = ex_rng_uniform(&r, c->lo, c->hi);
	memset(cm, 0, BGEMM_C_ELEMS * sizeof(*cm));
}

/* @ct += @at . @bt for one pair of T x T tiles, in double. */
static void bgemm_tile_acc(double *ct, const float *at, const float *bt)
{
	const int T = BGEMM_TILE;
	int i, j, kk;

	for (i = 0; i < T; i++)
		for (kk = 0; kk < T; kk++) {
			double av = at[i * T + kk];

			for (j = 0; j < T; j++)
				ct[i * T + j] += av * (double)bt[kk * T + j];
		}
}

void bgemm_golden(const float *a, const float *b, double *cm)
{
	int bt, m, n, k, i;

	for (bt = 0; bt < BGEMM_BATCH; bt++)
		for (m = 0; m < BGEMM_GRID_M; m++)
			for (n = 0; n < BGEMM_GRID_N; n++) {
				double *ct = cm + BGEMM_C_TILE(bt, m, n);

				for (i = 0; i < BGEMM_TILE_ELEMS; i++)
					ct[i] = 0.0;
				for (k = 0; k < BGEMM_GRID_K; k++)
					bgemm_tile_acc(ct, a + BGEMM_A_TILE(bt, m, k),
						       b + BGEMM_B_TILE(bt, k, n));
			}
}
