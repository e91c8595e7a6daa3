// SPDX-License-Identifier: MIT
/*
 * time.h - the programs' one time base: CLOCK_MONOTONIC in nanoseconds
 *
 * The device's system counter (see regs.h) is defined from the same
 * clock, so every timestamp in the project converts to every other.
 */
#ifndef PTO_PRIVATE_TIME_H
#define PTO_PRIVATE_TIME_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in ns. */
static inline int64_t pto_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A relative time in ns as a struct timespec. */
static inline struct timespec pto_ns_to_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	return ts;
}

/* Sleep for @ns (an interrupted sleep returns early). */
static inline void pto_sleep_ns(uint64_t ns)
{
	struct timespec ts = pto_ns_to_timespec(ns);

	nanosleep(&ts, NULL);
}

#endif /* PTO_PRIVATE_TIME_H */
