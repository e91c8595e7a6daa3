// SPDX-License-Identifier: MIT
/*
 * time.h - the programs' one time base: CLOCK_MONOTONIC in nanoseconds
 *
 * The device's system counter (see regs.h) is defined from the same
 * clock, so every timestamp in the project converts to every other.
 */
#ifndef PTO_PRIVATE_TIME_H
#define PTO_PRIVATE_TIME_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <pto-private/parse.h>

/* Longest idle-sleep bound a variable may set (pto_env_bound_ms()). */
#define PTO_BOUND_MS_MAX	3600000		/* an hour */

/* CLOCK_MONOTONIC now, in ns. */
static inline int64_t pto_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The CLOCK_REALTIME time @ns from now: the deadline of a
 * pthread_cond_timedwait() on a condition variable of the default clock.
 */
static inline struct timespec pto_cond_deadline(uint64_t ns)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec += (time_t)(t / 1000000000ULL);
	ts.tv_nsec = (long)(t % 1000000000ULL);
	return ts;
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

/*
 * The bound on an idle thread's sleep that environment variable @name
 * sets, in ms from 1 to PTO_BOUND_MS_MAX (pto-aicore's PTO_AICORE_PARK_MS,
 * ptod's PTO_SCHED_SLEEP_MS): *@ns in ns, or 0 if unset (the default).
 * 0, or -EINVAL if the value is not such a number (*@ns 0 then).
 */
static inline int pto_env_bound_ms(const char *name, uint64_t *ns)
{
	const char *v = getenv(name);
	uint64_t ms;

	*ns = 0;
	if (!v)
		return 0;
	if (pto_parse_dec(v, 1, PTO_BOUND_MS_MAX, &ms))
		return -EINVAL;
	*ns = ms * 1000000ULL;
	return 0;
}

/* Sleep for @ns (an interrupted sleep returns early). */
static inline void pto_sleep_ns(uint64_t ns)
{
	struct timespec ts = pto_ns_to_timespec(ns);

	nanosleep(&ts, NULL);
}

#endif /* PTO_PRIVATE_TIME_H */
