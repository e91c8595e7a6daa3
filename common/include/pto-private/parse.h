// SPDX-License-Identifier: MIT
/*
 * parse.h - an unsigned number from the environment or the command line:
 * the programs' one parser of it, strict, and of a decimal one within
 * bounds; a 0/1 switch of the
 * environment; a list of cores built on the first (parse.c); and the one
 * splitter of the lists they come in
 */
#ifndef PTO_PRIVATE_PARSE_H
#define PTO_PRIVATE_PARSE_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The number at @s in @base (10, 8, 16, or 0: hex after "0x" or "0X",
 * decimal otherwise, a leading 0 included: "010" is ten, not the eight
 * of C's octal, which nobody typing a size or a count means) into *@v,
 * *@end just after it. It starts with a digit: no sign and no space
 * (strtoull() skips both and negates, taking " -18446744073709551615"
 * as 1). 0; -EINVAL if there is no number; -ERANGE if it is above @max
 * or 64 bits. *@v and *@end are set on success only; what follows the
 * number is the caller's to check.
 */
static inline int pto_parse_u64(const char *s, int base, uint64_t max,
				uint64_t *v, const char **end)
{
	unsigned long long n;
	char *e;

	if (!base)
		base = s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
		       isxdigit((unsigned char)s[2]) ? 16 : 10;
	if (base == 16 ? !isxdigit((unsigned char)*s) :
			 !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &e, base);
	if (errno == ERANGE || n > max)
		return -ERANGE;
	if (errno || e == s)
		return -EINVAL;
	*v = n;
	*end = e;
	return 0;
}

/*
 * The same for all of @s, the common case: -EINVAL if anything follows
 * the number.
 */
static inline int pto_parse_u64_all(const char *s, int base, uint64_t max,
				    uint64_t *v)
{
	const char *end;
	uint64_t n;
	int ret = pto_parse_u64(s, base, max, &n, &end);

	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	*v = n;
	return 0;
}

/*
 * The decimal number that is all of @s, from @min to @max, into *@v: the
 * programs' counts and limits. 0; -EINVAL if @s is not a number, -ERANGE
 * if it lies outside (*@v is set on success only).
 */
static inline int pto_parse_dec(const char *s, uint64_t min, uint64_t max,
				uint64_t *v)
{
	uint64_t n;
	int ret = pto_parse_u64_all(s, 10, max, &n);

	if (ret)
		return ret;
	if (n < min)
		return -ERANGE;
	*v = n;
	return 0;
}

/*
 * A switch in environment variable @name: *@on is @dflt if it is unset,
 * false for "0", true for "1". 0; -EINVAL for any other value, the empty
 * one included (*@on is @dflt then), for the caller to say.
 */
static inline int pto_env_bool(const char *name, bool dflt, bool *on)
{
	const char *v = getenv(name);

	*on = dflt;
	if (!v)
		return 0;
	if (strcmp(v, "0") && strcmp(v, "1"))
		return -EINVAL;
	*on = v[0] == '1';
	return 0;
}

/*
 * The next field of the list at *@s, whose fields are separated by @sep,
 * cut in place: the separator after it becomes a NUL and *@s moves past
 * it, or becomes NULL after the last field; NULL once *@s is NULL.
 * Unlike strtok(), an empty field ("1,,2", a separator first or last, or
 * an empty list) comes back as "" for the caller's parser to refuse,
 * and no state is kept between calls.
 */
static inline char *pto_next_field(char **s, char sep)
{
	char *f = *s, *e;

	if (!f)
		return NULL;
	e = strchr(f, sep);
	if (e)
		*e++ = '\0';
	*s = e;
	return f;
}

/*
 * A list of cores, "0-3,8,12", into the bitmap @mask of @words 64-bit
 * words (cleared first; nr_cores at most words * 64): ranges LO-HI
 * (LO <= HI) and single cores, decimal, separated by single commas; no
 * space, nothing empty, no trailing comma. 0; -EINVAL if it is not such
 * a list; -ERANGE if a core is not below @nr_cores. Words such as
 * "all" or "none" are the caller's. On failure *@mask holds no
 * meaning.
 */
int pto_parse_cores(const char *s, uint32_t nr_cores, uint64_t *mask,
		    size_t words);

#endif /* PTO_PRIVATE_PARSE_H */
