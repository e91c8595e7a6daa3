/* SPDX-License-Identifier: MIT */
/*
 * test_rng.h - the native tests' pseudo-random numbers: xorshift64
 * (shifts 13, 7, 17) over a state the test seeds, so that a run repeats.
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

#endif /* TEST_RNG_H */
