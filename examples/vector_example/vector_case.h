// SPDX-License-Identifier: MIT
/*
 * vector_example: sizes, function ids, input generator and golden.
 *
 *   c = a + b          (ADD,        func 0, AIV)
 *   d = c + 1          (ADD_SCALAR, func 1, AIV)
 *   e = c + 2          (ADD_SCALAR, func 1, AIV)
 *   g = d * e          (MUL,        func 2, AIV)
 *   f = g + c          (ADD,        func 0, AIV)
 *
 * so f = (a + b + 1) * (a + b + 2) + (a + b); with a = 2, b = 3, f = 47.
 */
#ifndef PTO_EXAMPLES_VECTOR_CASE_H
#define PTO_EXAMPLES_VECTOR_CASE_H

#include <stddef.h>

#define VEC_FUNC_ADD		0
#define VEC_FUNC_ADD_SCALAR	1
#define VEC_FUNC_MUL		2

#define VEC_N			16384	/* elements per tensor (fp32) */
#define VEC_TASKS		5
#define VEC_TOL			1e-5

/* Orchestration arguments: [a, b, f, n] (a, b, f: fp32 tensors of n). */
#define VEC_ARG_A		0
#define VEC_ARG_B		1
#define VEC_ARG_F		2
#define VEC_ARG_N		3
#define VEC_NARGS		4

struct vec_case {
	const char *name;
	int constant;		/* 1: a = 2, b = 3 everywhere; 0: random */
};

extern const struct vec_case vec_cases[];
extern const size_t vec_num_cases;

/* Fill a and b (n elements each) for the case. */
void vec_gen_inputs(const struct vec_case *c, float *a, float *b, size_t n);

/* f = (a + b + 1)(a + b + 2) + (a + b), in double. */
void vec_golden(const float *a, const float *b, double *f, size_t n);

#endif
