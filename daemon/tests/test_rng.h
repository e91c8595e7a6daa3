/* SPDX-License-Identifier: MIT */
/*
 * test_rng.h - the native tests' pseudo-random numbers: xorshift64
 * (shifts 13, 7, 17) over a state the test seeds, so that a run repeats;
 * splitmix64 to derive independent states from one seed.
 */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <stdint.h>

/* Advance *@state (not 0) and return it. */
static inline uint64_t test_rng_next(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * A state for stream @i of @seed: splitmix64's @i-th output, so that the
 * streams of neighbouring @i are unrelated (never 0: xorshift's fixed
 * point).
 */
static inline uint64_t test_rng_seed(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 1;
}

#endif /* TEST_RNG_H */
