// SPDX-License-Identifier: MIT
/*
 * ptod_logtext.c - what of a text ptod's log keeps, one UTF-8 character
 * at a time (ptod_log_clean()), and where a text too long for one line
 * is cut (ptod_log_cut()).
 */
#include <stdint.h>
#include <string.h>

#include <pto-private/utf8.h>

#include "ptod.h"

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
	uint32_t cp;
	int n = pto_utf8_char(s, &cp);

	if (!n)
		return -1;
	if (pto_utf8_control(cp) ||
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
		n = pto_utf8_len(s[len - i]);
		return n > i ? len - i : len;
	}
	return len;
}
