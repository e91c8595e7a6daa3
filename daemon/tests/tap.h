// SPDX-License-Identifier: MIT
/*
 * tap.h - minimal TAP producer for the native tests (plan printed last)
 */
#ifndef TAP_H
#define TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <pto-private/parse.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* @n test points that cannot run here, and why (TAP's SKIP directive). */
static inline void tap_skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * A test's knob: environment variable @name into *@v, @dflt if unset or
 * empty; a number (decimal, 0x hex) from @min to @max. -EINVAL, said as
 * a failed test point, for anything else: a mistyped knob must not
 * quietly test less.
 */
static inline int tap_env_u64(const char *name, uint64_t dflt, uint64_t min,
			      uint64_t max, uint64_t *v)
{
	const char *s = getenv(name);

	*v = dflt;
	if (!s || !*s)
		return 0;
	if (pto_parse_u64_all(s, 0, max, v) || *v < min) {
		tap_ok(0, "%s=%s: a number from %llu to %llu", name, s,
		       (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#endif /* TAP_H */
