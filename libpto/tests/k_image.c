// SPDX-License-Identifier: MIT
/*
 * k_image.c - the kernel images test_kernel_caps reads, one per build:
 * K_OK a kernel that declares K_CAPS, K_NOENTRY a shared object without
 * pto_kernel_entry, K_PIE an executable (main), K_HIDDEN a kernel built
 * with -fvisibility=hidden, so that its entry is not exported.
 */
#include <pto/pto_kernel.h>

#if defined(K_OK)
PTO_KERNEL_REQUIRES(K_CAPS);
#endif

#if defined(K_OK) || defined(K_HIDDEN)
int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	(void)ctx;
	(void)args;
	return (int)nargs;
}
#elif defined(K_NOENTRY)
int not_the_entry(int x);

int not_the_entry(int x)
{
	return x;
}
#elif defined(K_PIE)
int main(void)
{
	return 0;
}
#endif
