// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel that may send its pre-complete report at its start and then
 * runs on for a while: the e2e test of a sandboxed kernel's report
 * reaching the device's HWS registers.
 *
 *   args[0]: SCALAR, 1: report pre-complete at the start, 0: do not
 *   args[1]: SCALAR, how long to run after that, in ms (at most 10000)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <pto/pto_kernel.h>

#define RUN_MS_MAX	10000

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	struct timespec ts;

	if (nargs < 2 || args[0] > 1 || args[1] > RUN_MS_MAX)
		return -EINVAL;
	if (args[0])
		pto_kernel_pre_complete(ctx);
	ts.tv_sec = (time_t)(args[1] / 1000);
	ts.tv_nsec = (long)(args[1] % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;
}
