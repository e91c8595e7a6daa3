// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel whose blocks wait for each other: every kernel of a launch
 * counts itself in a shared word, then waits (at most 20 s) until all
 * have: it completes only if the executor runs every kernel of the launch
 * at the same time (a cooperative launch in a sandbox needs a thread per
 * kernel).
 *
 *   args[0]: INOUT, a uint32_t counter, zero before the launch
 *   args[1]: SCALAR, the kernels of the launch (block_num * thread_num)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include <pto/pto_kernel.h>
#include <pto-private/time.h>

#define WAIT_NS	20000000000LL

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	uint32_t *count;
	int64_t until = pto_mono_ns() + WAIT_NS;

	(void)ctx;
	if (nargs < 2 || !args[0] || !args[1])
		return -EINVAL;
	count = (uint32_t *)(uintptr_t)args[0];
	__atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < args[1]) {
		if (pto_mono_ns() > until)
			return -ETIMEDOUT;
		sched_yield();
	}
	return 0;
}
