// SPDX-License-Identifier: MIT
/*
 * test_parse.c - the one parser of an unsigned number from the environment
 * or the command line (pto-private/parse.h), and what is built on it:
 * pto_parse_dec() (parse.h), pto_parse_size() (size.h), pto_env_bound_ms() (time.h) and
 * pto_parse_cores() (parse.h). A number
 * starts with a digit; a sign or a space is refused, not skipped as
 * strtoull() skips them (" -18446744073709551615" would be 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/parse.h>
#include <pto-private/size.h>
#include <pto-private/time.h>

#include "tap.h"

#define U32_MAX	4294967295ULL
#define NONE	0x5a5a5a5a5a5a5a5aULL	/* *v untouched */

struct pcase {
	const char *s;
	int base;
	uint64_t max;
	int ret;
	uint64_t v;		/* on success */
	size_t used;		/* characters taken, on success */
};

static const struct pcase u64_cases[] = {
	{ "42", 10, UINT64_MAX, 0, 42, 2 },
	{ "0", 0, UINT64_MAX, 0, 0, 1 },
	{ "0x1f", 0, UINT64_MAX, 0, 31, 4 },
	{ "0X1F", 0, UINT64_MAX, 0, 31, 4 },
	{ "017", 0, UINT64_MAX, 0, 17, 3 },	/* decimal, not octal */
	{ "017", 10, UINT64_MAX, 0, 17, 3 },
	{ "08", 0, UINT64_MAX, 0, 8, 2 },
	{ "0x", 0, UINT64_MAX, 0, 0, 1 },	/* the x is the caller's */
	{ "0x10", 10, UINT64_MAX, 0, 0, 1 },
	{ "ff", 16, UINT64_MAX, 0, 255, 2 },
	{ "0xff", 16, UINT64_MAX, 0, 255, 4 },
	{ "9", 8, UINT64_MAX, -EINVAL, 0, 0 },
	{ "777", 8, UINT64_MAX, 0, 511, 3 },
	{ "0777", 8, UINT64_MAX, 0, 511, 4 },
	{ "78", 8, UINT64_MAX, 0, 7, 1 },	/* the 8 is the caller's */
	{ "1777777777777777777777", 8, UINT64_MAX, 0, UINT64_MAX, 22 },
	{ "2000000000000000000000", 8, UINT64_MAX, -ERANGE, 0, 0 },
	{ "0778", 8, 0777, 0, 077, 3 },
	{ "1000", 8, 0777, -ERANGE, 0, 0 },
	{ "12abc", 10, UINT64_MAX, 0, 12, 2 },
	{ "7:3", 10, UINT64_MAX, 0, 7, 1 },
	/* @max exactly, and one more */
	{ "4294967295", 10, U32_MAX, 0, U32_MAX, 10 },
	{ "4294967296", 10, U32_MAX, -ERANGE, 0, 0 },
	{ "0xffffffff", 0, U32_MAX, 0, U32_MAX, 10 },
	{ "0x100000000", 0, U32_MAX, -ERANGE, 0, 0 },
	{ "0", 0, 0, 0, 0, 1 },
	{ "1", 0, 0, -ERANGE, 0, 0 },
	/* 64 bits exactly, and 2^64 */
	{ "18446744073709551615", 10, UINT64_MAX, 0, UINT64_MAX, 20 },
	{ "18446744073709551616", 10, UINT64_MAX, -ERANGE, 0, 0 },
	{ "0x10000000000000000", 0, UINT64_MAX, -ERANGE, 0, 0 },
	{ "99999999999999999999999", 0, UINT64_MAX, -ERANGE, 0, 0 },
	/* no sign, no space, no number: refused */
	{ " 1", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "\t1", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "+1", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "-1", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "-0", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "-18446744073709551615", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ " -18446744073709551615", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ " -18446744073709551615", 10, 1, -EINVAL, 0, 0 },
	{ "", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "x", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "k", 0, UINT64_MAX, -EINVAL, 0, 0 },
};

/* The whole string: anything after the number is refused. */
static const struct pcase all_cases[] = {
	{ "42", 10, UINT64_MAX, 0, 42, 0 },
	{ "0x2A", 0, UINT64_MAX, 0, 42, 0 },
	{ "052", 0, UINT64_MAX, 0, 52, 0 },
	{ "4294967295", 0, U32_MAX, 0, U32_MAX, 0 },
	{ "4294967296", 0, U32_MAX, -ERANGE, 0, 0 },
	{ "42x", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "42 ", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "42\n", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "4 2", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "0x10", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "08", 0, UINT64_MAX, 0, 8, 0 },
	{ "0x", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "0xg", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "1k", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ " 42", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "+42", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ "-42", 10, UINT64_MAX, -EINVAL, 0, 0 },
	{ " -18446744073709551615", 0, UINT64_MAX, -EINVAL, 0, 0 },
	{ "", 10, UINT64_MAX, -EINVAL, 0, 0 },
	/* octal, as ptod's -m takes a mode */
	{ "0644", 8, 0777, 0, 0644, 0 },
	{ "644", 8, 0777, 0, 0644, 0 },
	{ "0648", 8, 0777, -EINVAL, 0, 0 },
	{ "01000", 8, 0777, -ERANGE, 0, 0 },
};

/* pto_parse_size() in @base (its max is 64 bits). */
static const struct pcase size_cases[] = {
	{ "10", 0, 0, 0, 10, 2 },
	{ "4k", 0, 0, 0, 4096, 2 },
	{ "4K", 10, 0, 0, 4096, 2 },
	{ "3m", 0, 0, 0, 3ULL << 20, 2 },
	{ "3M", 0, 0, 0, 3ULL << 20, 2 },
	{ "2g", 0, 0, 0, 2ULL << 30, 2 },
	{ "2G", 10, 0, 0, 2ULL << 30, 2 },
	{ "0x10k", 0, 0, 0, 16ULL << 10, 5 },
	{ "010k", 0, 0, 0, 10ULL << 10, 4 },
	{ "010k", 10, 0, 0, 10ULL << 10, 4 },
	{ "0x10k", 10, 0, 0, 0, 1 },		/* the x is the caller's */
	{ "1kb", 0, 0, 0, 1024, 2 },		/* so is the b */
	{ "1:file", 0, 0, 0, 1, 1 },
	{ "1t", 0, 0, 0, 1, 1 },
	/* overflow after the shift, and the largest that fits */
	{ "18014398509481983k", 0, 0, 0, 18014398509481983ULL << 10, 18 },
	{ "18014398509481984k", 0, 0, -ERANGE, 0, 0 },
	{ "17592186044415m", 0, 0, 0, 17592186044415ULL << 20, 15 },
	{ "17592186044416m", 0, 0, -ERANGE, 0, 0 },
	{ "17179869183G", 10, 0, 0, 17179869183ULL << 30, 12 },
	{ "17179869184G", 10, 0, -ERANGE, 0, 0 },
	{ "0x400000000g", 0, 0, -ERANGE, 0, 0 },
	{ "18446744073709551615", 0, 0, 0, UINT64_MAX, 20 },
	{ "18446744073709551616", 0, 0, -ERANGE, 0, 0 },
	{ "18446744073709551616k", 0, 0, -ERANGE, 0, 0 },
	{ "k", 0, 0, -EINVAL, 0, 0 },
	{ "", 0, 0, -EINVAL, 0, 0 },
	{ " 1k", 0, 0, -EINVAL, 0, 0 },
	{ "+1k", 0, 0, -EINVAL, 0, 0 },
	{ "-1k", 0, 0, -EINVAL, 0, 0 },
	{ " -18446744073709551615", 0, 0, -EINVAL, 0, 0 },
};

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* "\t1" and "42\n" as C would write them, for the test point's name. */
static const char *shown(const char *s)
{
	static char buf[64];
	size_t i, n = 0;

	for (i = 0; s[i] && n < sizeof(buf) - 3; i++) {
		if (s[i] == '\t' || s[i] == '\n') {
			buf[n++] = '\\';
			buf[n++] = s[i] == '\t' ? 't' : 'n';
		} else {
			buf[n++] = s[i];
		}
	}
	buf[n] = 0;
	return buf;
}

/*
 * @got and its value against @c, and its end if @has_end (the parsers
 * that return one); on failure, nothing written.
 */
static void check(const char *what, const struct pcase *c, int got,
		  uint64_t v, bool has_end, const char *end)
{
	bool good = got == c->ret;

	if (!c->ret)
		good = good && v == c->v &&
		       (!has_end || end == c->s + c->used);
	else
		good = good && v == NONE && (!has_end || !end);
	ok(good, "%s(\"%s\", base %d): %s, want %d %" PRIu64
	   " after %zu chars (got %d %" PRIu64 ")",
	   what, shown(c->s), c->base, c->ret ? "refused" : "taken", c->ret,
	   c->v, c->used, got, v);
}

static void test_u64(void)
{
	for (size_t i = 0; i < N(u64_cases); i++) {
		const struct pcase *c = &u64_cases[i];
		const char *end = NULL;
		uint64_t v = NONE;
		int ret = pto_parse_u64(c->s, c->base, c->max, &v, &end);

		check("pto_parse_u64", c, ret, v, true, end);
	}
}

static void test_all(void)
{
	for (size_t i = 0; i < N(all_cases); i++) {
		const struct pcase *c = &all_cases[i];
		uint64_t v = NONE;
		int ret = pto_parse_u64_all(c->s, c->base, c->max, &v);

		/* no end to check: the whole string, when taken */
		check("pto_parse_u64_all", c, ret, v, false, NULL);
	}
}

/* pto_parse_dec(): a decimal count from min to max, all of the string */
static const struct dcase {
	const char *s;
	uint64_t min, max;
	int ret;
	uint64_t v;
} dec_cases[] = {
	{ "1", 1, 10, 0, 1 },			/* @min exactly */
	{ "10", 1, 10, 0, 10 },			/* @max exactly */
	{ "0", 1, 10, -ERANGE, 0 },		/* below @min */
	{ "11", 1, 10, -ERANGE, 0 },		/* above @max */
	{ "0", 0, 0, 0, 0 },
	{ "010", 1, 100, 0, 10 },		/* decimal, not octal */
	{ "0x10", 1, 100, -EINVAL, 0 },
	{ "5k", 1, 100, -EINVAL, 0 },
	{ "", 0, 100, -EINVAL, 0 },
	{ "-1", 0, UINT64_MAX, -EINVAL, 0 },
	{ " 7", 0, 100, -EINVAL, 0 },
	{ "18446744073709551615", UINT64_MAX, UINT64_MAX, 0, UINT64_MAX },
	{ "18446744073709551616", 0, UINT64_MAX, -ERANGE, 0 },
};

static void test_dec(void)
{
	for (size_t i = 0; i < N(dec_cases); i++) {
		const struct dcase *c = &dec_cases[i];
		uint64_t v = NONE;
		int ret = pto_parse_dec(c->s, c->min, c->max, &v);

		ok(ret == c->ret && v == (c->ret ? NONE : c->v),
		   "pto_parse_dec(\"%s\", %" PRIu64 ", %" PRIu64 "): %s %d %" PRIu64
		   " (got %d %" PRIu64 ")", c->s, c->min, c->max,
		   c->ret ? "refused" : "taken", c->ret, c->v, ret, v);
	}
}

static void test_size(void)
{
	for (size_t i = 0; i < N(size_cases); i++) {
		const struct pcase *c = &size_cases[i];
		const char *end = NULL;
		uint64_t v = NONE;
		int ret = pto_parse_size(c->s, c->base, &v, &end);

		check("pto_parse_size", c, ret, v, true, end);
	}
}

static void test_bound_ms(void)
{
	static const struct {
		const char *s;
		uint64_t ns;	/* 0: refused */
	} cases[] = {
		{ "1", 1000000 }, { "60000", 60000000000ULL },
		{ "3600000", 3600000ULL * 1000000 }, { "3600001", 0 },
		{ "0", 0 }, { "", 0 }, { " 5", 0 }, { "+5", 0 }, { "-5", 0 },
		{ "5ms", 0 }, { "0x10", 0 },
		{ " -18446744073709551615", 0 },
	};
	uint64_t ns;
	int ret;

	unsetenv("TEST_PARSE_MS");
	ns = NONE;
	ret = pto_env_bound_ms("TEST_PARSE_MS", &ns);
	ok(!ret && !ns, "pto_env_bound_ms: unset is the default (0)");
	for (size_t i = 0; i < N(cases); i++) {
		setenv("TEST_PARSE_MS", cases[i].s, 1);
		ns = NONE;
		ret = pto_env_bound_ms("TEST_PARSE_MS", &ns);
		if (cases[i].ns)
			ok(!ret && ns == cases[i].ns,
			   "pto_env_bound_ms(\"%s\"): %" PRIu64 " ns",
			   cases[i].s, ns);
		else
			ok(ret == -EINVAL && !ns,
			   "pto_env_bound_ms(\"%s\"): refused (%d), 0 ns",
			   cases[i].s, ret);
	}
	unsetenv("TEST_PARSE_MS");
}

/* pto_parse_cores(): @bits the cores set when taken, -1 ending them. */
static void test_cores(void)
{
	static const struct {
		const char *s;
		uint32_t nr;
		int ret;
		int bits[8];
	} cases[] = {
		{ "0", 72, 0, { 0, -1 } },
		{ "71", 72, 0, { 71, -1 } },
		{ "0-3,8", 72, 0, { 0, 1, 2, 3, 8, -1 } },
		{ "5,2-2,63-65", 72, 0, { 2, 5, 63, 64, 65, -1 } },
		{ "3,3", 72, 0, { 3, -1 } },
		{ "255", 256, 0, { 255, -1 } },
		{ "72", 72, -ERANGE, { -1 } },
		{ "0-72", 72, -ERANGE, { -1 } },
		{ "256", 256, -ERANGE, { -1 } },
		{ "4-3", 72, -EINVAL, { -1 } },
		{ "", 72, -EINVAL, { -1 } },
		{ "1,", 72, -EINVAL, { -1 } },
		{ ",1", 72, -EINVAL, { -1 } },
		{ "1,,2", 72, -EINVAL, { -1 } },
		{ "1-", 72, -EINVAL, { -1 } },
		{ "-1", 72, -EINVAL, { -1 } },
		{ "1 ,2", 72, -EINVAL, { -1 } },
		{ "1, 2", 72, -EINVAL, { -1 } },
		{ "+1", 72, -EINVAL, { -1 } },
		{ "0x1", 72, -EINVAL, { -1 } },
		{ "1-2-3", 72, -EINVAL, { -1 } },
		{ "all", 72, -EINVAL, { -1 } },
		{ "0", 0, -EINVAL, { -1 } },
		{ "0", 257, -EINVAL, { -1 } },	/* more than the words hold */
	};

	for (size_t i = 0; i < N(cases); i++) {
		uint64_t mask[4], want[4] = { 0 };
		int ret;

		memset(mask, 0xa5, sizeof(mask));
		for (const int *b = cases[i].bits; *b >= 0; b++)
			want[*b / 64] |= 1ULL << (*b % 64);
		ret = pto_parse_cores(cases[i].s, cases[i].nr, mask, 4);
		ok(ret == cases[i].ret &&
		   (ret || !memcmp(mask, want, sizeof(mask))),
		   "pto_parse_cores(\"%s\", %u cores): %d, want %d",
		   cases[i].s, cases[i].nr, ret, cases[i].ret);
	}
}

/* pto_next_field(): the fields, joined by '|' to compare, and their count. */
static void test_fields(void)
{
	static const struct {
		const char *s, *want;
		int n;
	} cases[] = {
		{ "a,bc,d", "a|bc|d", 3 },
		{ "abc", "abc", 1 },
		{ "", "", 1 },
		{ "a,", "a|", 2 },
		{ ",a", "|a", 2 },
		{ "a,,b", "a||b", 3 },
		{ ",", "|", 2 },
	};

	for (size_t i = 0; i < N(cases); i++) {
		char buf[32], got[64] = "", *rest = buf, *f;
		int n = 0;

		snprintf(buf, sizeof(buf), "%s", cases[i].s);
		while ((f = pto_next_field(&rest, ','))) {
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s%s", n ? "|" : "", f);
			n++;
		}
		ok(n == cases[i].n && !strcmp(got, cases[i].want) &&
		   !pto_next_field(&rest, ','),
		   "pto_next_field(\"%s\"): %d fields \"%s\", want %d \"%s\"",
		   cases[i].s, n, got, cases[i].n, cases[i].want);
	}
}

int main(void)
{
	test_u64();
	test_all();
	test_dec();
	test_size();
	test_bound_ms();
	test_cores();
	test_fields();
	return tap_done();
}
