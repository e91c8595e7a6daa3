// SPDX-License-Identifier: MIT
/*
 * size.h - a size on the command line, SIZE[k|m|g], for the tools
 */
#ifndef PTO_PRIVATE_SIZE_H
#define PTO_PRIVATE_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * SIZE[k|m|g] at @s (decimal, 0x hex or 0 octal; no sign or space) into
 * *@v, *@end just after it: 0, or -EINVAL if there is no number or it
 * does not fit 64 bits, scaled. What may follow is the caller's to check.
 */
static inline int pto_parse_size(const char *s, uint64_t *v, const char **end)
{
	unsigned int shift = 0;
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &e, 0);
	if (errno)
		return -EINVAL;
	switch (*e) {
	case 'k': case 'K': shift = 10; e++; break;
	case 'm': case 'M': shift = 20; e++; break;
	case 'g': case 'G': shift = 30; e++; break;
	default: break;
	}
	if (*v > UINT64_MAX >> shift)
		return -EINVAL;
	*v <<= shift;
	*end = e;
	return 0;
}

#endif /* PTO_PRIVATE_SIZE_H */
