// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel that makes its executor give up the device and live on: it
 * replaces the executor's program by sleep(1). execve() drops every
 * mapping and close-on-exec descriptor, so the device file is released
 * (its cores go DEAD) while the process, ptod's child, stays alive. The
 * e2e test exec_closed_device_replaced.
 */
#include <stdint.h>
#include <unistd.h>

#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	char *const argv[] = { "sleep", "infinity", NULL };

	(void)ctx;
	(void)args;
	(void)nargs;
	execv("/bin/sleep", argv);
	return -1;	/* no exec: the task fails with -1, not the test's error */
}
