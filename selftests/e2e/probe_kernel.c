// SPDX-License-Identifier: MIT
/*
 * A kernel that records where and when it ran (probe.h): the e2e tests
 * learn from it which cores and blocks a client's run used, and when.
 *
 *   args[0]: OUTPUT, one struct pto_probe_rec
 *   args[1]: SCALAR, the task's sequence number (non-zero)
 *   args[2]: SCALAR, optional: nanoseconds to sleep before recording the
 *            end (a slow task, to hold its successors back)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <pto/pto_kernel.h>
#include <pto-private/time.h>

#include "probe.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	struct pto_probe_rec *r;
	int64_t start = pto_mono_ns();

	if (nargs < 2 || !args[0] || !args[1])
		return -EINVAL;
	r = (struct pto_probe_rec *)(uintptr_t)args[0];
	r->core_id = ctx->core_id;
	r->block_idx = ctx->block_idx;
	r->sub_block_idx = ctx->sub_block_idx;
	r->start_ns = start;
	if (nargs >= 3 && args[2]) {
		struct timespec d = {
			.tv_sec = (time_t)(args[2] / 1000000000ULL),
			.tv_nsec = (long)(args[2] % 1000000000ULL),
		};

		while (nanosleep(&d, &d) && errno == EINTR)
			;
	}
	r->end_ns = pto_mono_ns();
	__atomic_store_n(&r->seq, (uint32_t)args[1], __ATOMIC_RELEASE);
	return 0;
}
