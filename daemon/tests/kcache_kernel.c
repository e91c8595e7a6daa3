// SPDX-License-Identifier: MIT
/*
 * kcache_kernel.c - a kernel that test_kcache loads from a blob: built
 * once per KCACHE_VALUE (and once more with -z nodelete), so that a test
 * can tell which upload ran. With an argument it returns that argument
 * (a kernel that fails with it).
 */
#include <pto/pto_kernel.h>

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t n)
{
	(void)ctx;
	return n ? (int)args[0] : KCACHE_VALUE;
}
