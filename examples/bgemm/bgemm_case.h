// SPDX-License-Identifier: MIT
/*
 * bgemm: batched tiled GEMM, C[b] = A[b] . B[b].
 *
 * Tile-major layout (each 64x64 fp32 tile is contiguous, row-major inside):
 *   A: [BATCH][GRID_M][GRID_K][TILE][TILE]
 *   B: [BATCH][GRID_K][GRID_N][TILE][TILE]
 *   C: [BATCH][GRID_M][GRID_N][TILE][TILE]   (zero on entry)
 *
 * Per batch b and output tile (m, n), for k in 0..GRID_K-1:
 *   P      = A[b,m,k] . B[b,k,n]   GEMM_TILE (func 0, AIC), P intermediate
 *   C[b,m,n] += P                  TILE_ADD  (func 1, AIV), INOUT on C's tile
 * so every output tile carries an add chain over k, and the GEMMs of one
 * tile are independent of each other.
 *
 * Tasks: BATCH * GRID_M * GRID_N * GRID_K * 2 = 2 * 4 * 4 * 4 * 2 = 256.
 */
#ifndef PTO_EXAMPLES_BGEMM_CASE_H
#define PTO_EXAMPLES_BGEMM_CASE_H

#include <stddef.h>

#define BGEMM_FUNC_GEMM_TILE	0
#define BGEMM_FUNC_TILE_ADD	1

#define BGEMM_TILE		64
#define BGEMM_GRID_M		4
#define BGEMM_GRID_N		4
#define BGEMM_GRID_K		4
#define BGEMM_BATCH		2
#define BGEMM_TILE_ELEMS	(BGEMM_TILE * BGEMM_TILE)
#define BGEMM_TASKS \
	(BGEMM_BATCH * BGEMM_GRID_M * BGEMM_GRID_N * BGEMM_GRID_K * 2)
#define BGEMM_TOL		1e-3

#define BGEMM_A_ELEMS	((size_t)BGEMM_BATCH * BGEMM_GRID_M * BGEMM_GRID_K * BGEMM_TILE_ELEMS)
#define BGEMM_B_ELEMS	((size_t)BGEMM_BATCH * BGEMM_GRID_K * BGEMM_GRID_N * BGEMM_TILE_ELEMS)
#define BGEMM_C_ELEMS	((size_t)BGEMM_BATCH * BGEMM_GRID_M * BGEMM_GRID_N * BGEMM_TILE_ELEMS)

/* Element offset of a tile. */
#define BGEMM_A_TILE(b, m, k) \
	((((size_t)(b) * BGEMM_GRID_M + (m)) * BGEMM_GRID_K + (k)) * BGEMM_TILE_ELEMS)
#define BGEMM_B_TILE(b, k, n) \
	((((size_t)(b) * BGEMM_GRID_K + (k)) * BGEMM_GRID_N + (n)) * BGEMM_TILE_ELEMS)
#define BGEMM_C_TILE(b, m, n) \
	((((size_t)(b) * BGEMM_GRID_M + (m)) * BGEMM_GRID_N + (n)) * BGEMM_TILE_ELEMS)

/* Orchestration arguments: [A, B, C]. */
#define BGEMM_ARG_A		0
#define BGEMM_ARG_B		1
#define BGEMM_ARG_C		2
#define BGEMM_NARGS		3

struct bgemm_case {
	const char *name;
	float lo, hi;		/* A and B uniform in [lo, hi) */
};

extern const struct bgemm_case bgemm_cases[];
extern const size_t bgemm_num_cases;

void bgemm_gen_inputs(const struct bgemm_case *c, float *a, float *b,
		      float *cm);
void bgemm_golden(const float *a, const float *b, double *cm);

#endif
