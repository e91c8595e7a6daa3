// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the example kernels, goldens, input generators and
 * native check programs.  Header-only, C11, no dependency beyond libc.
 *
 *  - ex_f32_to_f16 / ex_f16_to_f32: portable IEEE 754 binary16 conversion
 *    (round to nearest, ties to even; subnormals, infinities and NaN kept).
 *    No _Float16, no compiler builtins: kernels and goldens agree bit for
 *    bit on every compiler.
 *  - ex_rng_*: splitmix64, seeded from the case name so every case has its
 *    own deterministic input stream and no input file is needed.
 *  - ex_cmp_*: element-wise comparison against a double-precision golden.
 *  - ex_u64_from_f32 / ex_f32_from_u64: how a float travels in a 64-bit
 *    scalar parameter (the float's bits in the low 32 bits).
 */
#ifndef PTO_EXAMPLES_EX_COMMON_H
#define PTO_EXAMPLES_EX_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* float <-> half                                                      */
/* ------------------------------------------------------------------ */

static inline uint16_t ex_f32_to_f16(float f)
{
	uint32_t x;
	uint32_t sign, exp, mant;
	int32_t e;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	exp = (x >> 23) & 0xffu;
	mant = x & 0x7fffffu;

	if (exp == 0xffu)			/* Inf or NaN (NaN stays quiet) */
		return (uint16_t)(sign | 0x7c00u |
				  (mant ? 0x200u | (mant >> 13) : 0u));

	e = (int32_t)exp - 127 + 15;
	if (e >= 31)				/* overflow: +-Inf */
		return (uint16_t)(sign | 0x7c00u);

	if (e <= 0) {				/* half subnormal or zero */
		uint32_t full, shift, m, rem, halfway;

		if (e < -10)			/* below 2^-25: rounds to 0 */
			return (uint16_t)sign;
		full = mant | 0x800000u;	/* float zero/subnormal: e < -10 */
		shift = (uint32_t)(14 - e);	/* 14..24 */
		m = full >> shift;
		rem = full & ((1u << shift) - 1u);
		halfway = 1u << (shift - 1u);
		if (rem > halfway || (rem == halfway && (m & 1u)))
			m++;			/* may become the smallest normal */
		return (uint16_t)(sign | m);
	}

	{
		uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13);
		uint32_t rem = mant & 0x1fffu;

		if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
			h++;			/* carry may reach Inf: correct */
		return (uint16_t)h;
	}
}

static inline float ex_f16_to_f32(uint16_t h)
{
	uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
	int32_t e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ffu;
	uint32_t bits;
	float f;

	if (e == 0) {
		if (m == 0) {
			bits = sign;
		} else {			/* subnormal: normalise */
			e = 1;
			while ((m & 0x400u) == 0) {
				m <<= 1;
				e--;
			}
			m &= 0x3ffu;
			bits = sign | ((uint32_t)(e + 112) << 23) | (m << 13);
		}
	} else if (e == 31) {
		bits = sign | 0x7f800000u | (m << 13);
	} else {
		bits = sign | ((uint32_t)(e + 112) << 23) | (m << 13);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* ------------------------------------------------------------------ */
/* float in a 64-bit scalar parameter                                  */
/* ------------------------------------------------------------------ */

static inline uint64_t ex_u64_from_f32(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint64_t)u;
}

static inline float ex_f32_from_u64(uint64_t v)
{
	uint32_t u = (uint32_t)v;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* ------------------------------------------------------------------ */
/* deterministic PRNG                                                  */
/* ------------------------------------------------------------------ */

struct ex_rng {
	uint64_t s;
};

/* FNV-1a of the case name: each case gets its own stream. */
static inline void ex_rng_seed(struct ex_rng *r, const char *case_name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *case_name; case_name++) {
		h ^= (uint8_t)*case_name;
		h *= 0x100000001b3ull;
	}
	r->s = h;
}

static inline uint64_t ex_rng_u64(struct ex_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi), 24 random bits (exact in float). */
static inline float ex_rng_uniform(struct ex_rng *r, float lo, float hi)
{
	float u = (float)(ex_rng_u64(r) >> 40) * (1.0f / 16777216.0f);

	return lo + (hi - lo) * u;
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply, bias < 2^-32). */
static inline uint32_t ex_rng_below(struct ex_rng *r, uint32_t n)
{
	return (uint32_t)(((ex_rng_u64(r) >> 32) * (uint64_t)n) >> 32);
}

/* ------------------------------------------------------------------ */
/* comparison against a double-precision golden                        */
/* ------------------------------------------------------------------ */

/*
 * An element passes when |got - ref| <= tol + tol * |ref| (numpy's
 * allclose with rtol = atol = tol).  max_rel_err is reported over the
 * elements with |ref| > tol, where a relative error means something.
 */
struct ex_cmp {
	double tol;
	double max_abs;
	double max_rel;
	size_t n;
	size_t bad;
	size_t first_bad;
	double first_bad_ref;
	double first_bad_got;
};

static inline void ex_cmp_init(struct ex_cmp *c, double tol)
{
	memset(c, 0, sizeof(*c));
	c->tol = tol;
}

static inline void ex_cmp_add(struct ex_cmp *c, double ref, double got)
{
	double err = fabs(got - ref);
	int ok = !isnan(got) && !isnan(err) && err <= c->tol + c->tol * fabs(ref);

	if (isnan(err))
		err = INFINITY;
	if (err > c->max_abs)
		c->max_abs = err;
	if (fabs(ref) > c->tol && err / fabs(ref) > c->max_rel)
		c->max_rel = err / fabs(ref);
	if (!ok) {
		if (c->bad == 0) {
			c->first_bad = c->n;
			c->first_bad_ref = ref;
			c->first_bad_got = got;
		}
		c->bad++;
	}
	c->n++;
}

static inline int ex_cmp_ok(const struct ex_cmp *c)
{
	return c->bad == 0 && c->n > 0;
}

/* The one line every check prints per case. */
static inline int ex_report(const char *case_name, const char *suffix,
			    const struct ex_cmp *c, unsigned long tasks)
{
	int ok = ex_cmp_ok(c);

	printf("CASE %s%s: %s max_abs_err=%.3g max_rel_err=%.3g tasks=%lu\n",
	       case_name, suffix, ok ? "PASS" : "FAIL", c->max_abs, c->max_rel,
	       tasks);
	if (!ok && c->n > 0)
		printf("  %zu/%zu elements out of tolerance %.0e; first at [%zu]: ref=%.9g got=%.9g\n",
		       c->bad, c->n, c->tol, c->first_bad, c->first_bad_ref,
		       c->first_bad_got);
	fflush(stdout);
	return ok;
}

/*
 * Compare @n fp32 results against the double-precision reference within
 * @tol (only when the run returned 0) and the task count against the
 * expected one, then print the CASE line. Returns 1 on PASS.
 */
static inline int ex_check_f32(const char *name, const char *suffix,
			       double tol, const double *ref, const float *got,
			       size_t n, unsigned long tasks,
			       unsigned long expect, int ret)
{
	struct ex_cmp cmp;
	size_t i;

	ex_cmp_init(&cmp, tol);
	if (ret == 0)
		for (i = 0; i < n; i++)
			ex_cmp_add(&cmp, ref[i], got[i]);
	if (tasks != expect) {
		fprintf(stderr, "%s%s: %lu tasks, expected %lu\n", name, suffix,
			tasks, expect);
		cmp.bad++;
	}
	return ex_report(name, suffix, &cmp, tasks);
}

#endif /* PTO_EXAMPLES_EX_COMMON_H */
