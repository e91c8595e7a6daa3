// SPDX-License-Identifier: MIT
/*
 * bench_stat.h - time and order statistics shared by the benchmarks
 */
#ifndef BENCH_STAT_H
#define BENCH_STAT_H

#include <time.h>

static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/**
 * struct bench_stat - order statistics of a sample.
 * @median: the middle value (mean of the two middle ones for even n).
 * @p99: the ceil(0.99 n)-th smallest (nearest rank).
 * @min, @max: the extremes.
 */
struct bench_stat {
	double median, p99, min, max;
};

/*
 * The statistics of @s[0 .. @n - 1], each multiplied by @scale. Returns 0,
 * -EINVAL if @n < 1 or -ENOMEM (then *@st is all 0).
 */
int bench_stat(const double *s, long n, double scale, struct bench_stat *st);

#endif /* BENCH_STAT_H */
