// SPDX-License-Identifier: MIT
/*
 * size.h - a size on the command line or in the environment, SIZE[k|m|g]
 */
#ifndef PTO_PRIVATE_SIZE_H
#define PTO_PRIVATE_SIZE_H

#include <errno.h>
#include <stdint.h>

#include <pto-private/parse.h>

/*
 * SIZE[k|m|g] at @s (a number by pto_parse_u64() in @base, then an
 * optional suffix k, m or g, either case: x 2^10, 2^20, 2^30) into *@v,
 * *@end just after it: 0, -EINVAL if there is no number, or -ERANGE if it
 * does not fit 64 bits, scaled. What may follow is the caller's to check.
 */
static inline int pto_parse_size(const char *s, int base, uint64_t *v,
				 const char **end)
{
	unsigned int shift = 0;
	const char *e;
	uint64_t n;
	int ret = pto_parse_u64(s, base, UINT64_MAX, &n, &e);

	if (ret)
		return ret;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	default: break;
	}
	if (n > UINT64_MAX >> shift)
		return -ERANGE;
	*v = n << shift;
	*end = e;
	return 0;
}

#endif /* PTO_PRIVATE_SIZE_H */
