// SPDX-License-Identifier: MIT
/*
 * bench_stat.c - order statistics shared by the benchmarks (bench_stat.h)
 */
#include <errno.h>
#include <stdlib.h>

#include "bench_stat.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int bench_stat(const double *s, long n, double scale, struct bench_stat *st)
{
	double *t;
	long i;

	*st = (struct bench_stat){ 0, 0, 0, 0 };
	if (n < 1)
		return -EINVAL;
	t = malloc((size_t)n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		t[i] = s[i] * scale;
	qsort(t, (size_t)n, sizeof(*t), cmp_dbl);
	st->median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	st->p99 = t[(n * 99 + 99) / 100 - 1];
	st->min = t[0];
	st->max = t[n - 1];
	free(t);
	return 0;
}
