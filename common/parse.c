// SPDX-License-Identifier: MIT
/*
 * parse.c - what is built on the number parser of parse.h: a list of
 * cores
 */
#include <errno.h>
#include <string.h>

#include <pto-private/parse.h>

int pto_parse_cores(const char *s, uint32_t nr_cores, uint64_t *mask,
		    size_t words)
{
	const char *end;

	if (!nr_cores || nr_cores > words * 64)
		return -EINVAL;
	memset(mask, 0, words * sizeof(*mask));
	for (;;) {
		uint64_t lo, hi;
		int ret = pto_parse_u64(s, 10, nr_cores - 1, &lo, &end);

		if (ret)
			return ret;
		hi = lo;
		if (*end == '-') {
			ret = pto_parse_u64(end + 1, 10, nr_cores - 1, &hi,
					    &end);
			if (ret)
				return ret;
		}
		if (lo > hi)
			return -EINVAL;
		for (; lo <= hi; lo++)
			mask[lo / 64] |= 1ULL << (lo % 64);
		if (!*end)
			return 0;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}
