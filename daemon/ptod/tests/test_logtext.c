// SPDX-License-Identifier: MIT
/*
 * test_logtext.c - what ptod's log keeps of a text (ptod_log_clean()):
 * well-formed printable UTF-8 as it is; each byte that starts no
 * well-formed sequence (overlong forms, surrogates, code points past
 * U+10FFFF, a sequence cut short, a stray continuation byte) as one '?';
 * a control, a line or paragraph separator or a bidirectional formatting
 * character as one '?' for the whole character. And where a piece of a
 * longer text is cut (ptod_log_cut()): never inside a UTF-8 character.
 */
#include <stdio.h>
#include <string.h>

#include "../ptod.h"
#include "tap.h"

/* @in cleaned is @want; @what says what it holds. */
static void cleans(const char *what, const char *in, const char *want)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s", in);
	ptod_log_clean(buf);
	ok(!strcmp(buf, want), "%s: \"%s\" (want \"%s\")", what, buf, want);
}

/* @len bytes of @in end a line at @want bytes */
static void cuts(const char *what, const char *in, size_t len, size_t want)
{
	size_t got = ptod_log_cut(in, len);

	ok(got == want, "cut %s: at %zu of %zu (want %zu)", what, got, len,
	   want);
}

int main(void)
{
	cleans("ASCII", "ptod: hello, client 7", "ptod: hello, client 7");
	cleans("C0 controls and DEL", "a\tb\nc\x1b[31md\x7f" "e",
	       "a?b?c?[31md?e");
	cleans("two, three and four bytes", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	       "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	cleans("the first and last code points of each length",
	       "\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
	       "\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
	cleans("C1 controls, one '?' each", "a\xc2\x80" "b\xc2\x9b" "c\xc2\x9f" "d",
	       "a?b?c?d");
	cleans("overlong forms, a '?' a byte", "\xc0\xaf|\xc1\xbf|\xe0\x80\xaf|\xf0\x80\x80\xaf",
	       "??|??|???|????");
	cleans("surrogates", "\xed\xa0\x80|\xed\xbf\xbf|\xed\x9f\xbf",
	       "???|???|\xed\x9f\xbf");
	cleans("past U+10FFFF", "\xf4\x90\x80\x80|\xf5\x80\x80\x80|\xff",
	       "????|????|?");
	cleans("cut short at the end", "x\xe2\x82", "x??");
	cleans("cut short before ASCII", "\xf0\x9f\x98" "a\xc3" "b", "???a?b");
	cleans("stray continuation bytes", "\x80\xbf" "ok", "??ok");
	cleans("line and paragraph separators", "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c",
	       "a?b?c");
	cleans("bidirectional formatting", "\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9",
	       "???????");
	cleans("their neighbours are kept", "\xd8\x9b\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
	       "\xd8\x9b\xe2\x80\x8d\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
	cleans("empty", "", "");
	cuts("after ASCII", "abc", 3, 3);
	cuts("after a whole two bytes", "a\xc3\xa9", 3, 3);
	cuts("after a whole three bytes", "a\xe2\x82\xac", 4, 4);
	cuts("after a whole four bytes", "a\xf0\x9f\x98\x80", 5, 5);
	cuts("one byte into two", "ab\xc3", 3, 2);
	cuts("one byte into three", "ab\xe2\x82\xac", 3, 2);
	cuts("two bytes into three", "ab\xe2\x82\xac", 4, 2);
	cuts("one byte into four", "ab\xf0\x9f\x98\x80", 3, 2);
	cuts("two bytes into four", "ab\xf0\x9f\x98\x80", 4, 2);
	cuts("three bytes into four", "ab\xf0\x9f\x98\x80", 5, 2);
	cuts("after an overlong lead, kept", "ab\xc0", 3, 3);
	cuts("after a lead past U+10FFFF, kept", "ab\xf8\x80", 4, 4);
	cuts("stray continuation bytes, kept", "ab\x80\x80\x80\x80", 6, 6);
	cuts("a piece that is only a start", "\xe2\x82", 2, 0);
	cuts("nothing", "", 0, 0);
	return tap_done();
}
