// SPDX-License-Identifier: MIT
/*
 * ptod_logtext.c - what of a text ptod's log keeps, one UTF-8 character
 * at a time (ptod_log_clean()), and where a text too long for one line
 * is cut (ptod_log_cut()).
 */
#include <stdint.h>
#include <string.h>

#include "ptod.h"

/*
 * The length of the UTF-8 sequence that byte @b starts: 1 (ASCII), 2 to
 * 4, or 0 if no well-formed sequence starts with it (a continuation
 * byte, the overlong leads 0xc0 and 0xc1, and 0xf5..0xff, past U+10FFFF).
 */
static size_t utf8_len(unsigned char b)
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
 * What a log line does with the UTF-8 character at @s: n > 0, keeps its
 * n bytes, a well-formed sequence (no overlong form, surrogate or code
 * point past U+10FFFF) of a printable character; -n, shows its n bytes
 * as one '?'. Not printable: the C0 controls and DEL; the C1 controls
 * U+0080..U+009F, which a terminal may take for escapes as it does ESC;
 * the line and paragraph separators U+2028 and U+2029; and the
 * bidirectional formatting characters (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069), which reorder what a terminal shows.
 * A byte that starts no well-formed sequence is -1.
 */
static int log_char_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n = (int)utf8_len(s[0]), i;
	uint32_t cp;

	if (n == 1)
		return s[0] >= 0x20 && s[0] != 0x7f ? 1 : -1;
	if (!n)
		return -1;
	if (s[0] == 0xe0)
		lo = 0xa0;		/* not overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* not a surrogate */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* not overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* at most U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return -1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return -1;
	if (n == 4)
		return n;
	cp = n == 2 ? (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f) :
		      (uint32_t)(s[0] & 0x0f) << 12 |
		      (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	if (cp <= 0x9f ||			/* C1 controls */
	    cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x2028 && cp <= 0x202e) ||	/* separators, embeddings */
	    (cp >= 0x2066 && cp <= 0x2069))	/* isolates */
		return -n;
	return n;
}

void ptod_log_clean(char *buf)
{
	unsigned char *r, *w;
	int n;

	for (r = w = (unsigned char *)buf; *r; r += n) {
		n = log_char_len(r);
		if (n > 0) {
			memmove(w, r, (size_t)n);
			w += n;
			continue;
		}
		n = -n;
		*w++ = '?';
	}
	*w = 0;
}

size_t ptod_log_cut(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i, n;

	/* back over continuation bytes, to the byte that starts the last */
	for (i = 1; i <= 3 && i <= len; i++) {
		if (s[len - i] >= 0x80 && s[len - i] < 0xc0)
			continue;
		/* a sequence cut short starts the next piece, whole */
		n = utf8_len(s[len - i]);
		return n > i ? len - i : len;
	}
	return len;
}
