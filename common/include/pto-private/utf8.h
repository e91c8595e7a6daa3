// SPDX-License-Identifier: MIT
/*
 * utf8.h - well-formed UTF-8, one character at a time: what ptod's log
 * keeps of a text (ptod_logtext.c) and what a DAG file takes as a DAG
 * name (tools/pto-hws-sim/dag.c) both start from it.
 */
#ifndef PTO_PRIVATE_UTF8_H
#define PTO_PRIVATE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length of the UTF-8 sequence that byte @b starts: 1 (ASCII), 2 to
 * 4, or 0 if no well-formed sequence starts with it (a continuation
 * byte, the overlong leads 0xc0 and 0xc1, and 0xf5..0xff, past U+10FFFF).
 */
static inline size_t pto_utf8_len(unsigned char b)
{
	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef)
		return 3;
	if (b >= 0xf0 && b <= 0xf4)
		return 4;
	return 0;
}

/*
 * The character at @s (NUL-terminated, not at its NUL): its length n (1
 * to 4) and its code point in *@cp if its bytes are well-formed UTF-8
 * (no overlong form, surrogate or code point past U+10FFFF; a sequence
 * the NUL cuts short is not), else 0.
 */
static inline int pto_utf8_char(const unsigned char *s, uint32_t *cp)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n = (int)pto_utf8_len(s[0]), i;

	if (n <= 1) {
		*cp = s[0];
		return n;
	}
	if (s[0] == 0xe0)
		lo = 0xa0;		/* not overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* not a surrogate */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* not overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* at most U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	*cp = s[0] & (0x7f >> n);
	for (i = 1; i < n; i++)
		*cp = *cp << 6 | (s[i] & 0x3f);
	return n;
}

/* Whether code point @cp is a control character: C0, DEL or C1. */
static inline int pto_utf8_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

#endif /* PTO_PRIVATE_UTF8_H */
