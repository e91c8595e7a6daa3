// SPDX-License-Identifier: MIT
/*
 * pto2_log.c - the runtime core's logger (see pto2_util.h)
 */
#include <stdarg.h>
#include <stdio.h>

#include "pto2_util.h"

/* Without a callback: errors and warnings to stderr, the rest dropped. */
static void log_stderr(int level, const char *msg)
{
	static const char *const names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

	if (level < 0 || level > PTO2_LOG_DEBUG)
		level = PTO2_LOG_ERROR;
	if (level >= PTO2_LOG_INFO)
		return;
	fprintf(stderr, "[pto2 %s] %s\n", names[level], msg);
}

void pto2_logf(const struct pto2_logger *lg, int level, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (lg && lg->fn)
		lg->fn(lg->ctx, level, buf);
	else
		log_stderr(level, buf);
}
