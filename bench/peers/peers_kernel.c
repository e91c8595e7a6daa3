// SPDX-License-Identifier: MIT
/*
 * peers_kernel.c - the peers' kernel as a kernel .so, for the "user" path
 * of ours (pto-aicore loads it from GM): every kernel id runs
 * peers_kernel() of kernel id % PK_NR (ours.c, OURS_KID()).
 */
#include <pto/pto_kernel.h>

#include "peers.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	peers_kernel(ctx->kernel_id % PK_NR,
		     nargs ? (uint64_t *)(uintptr_t)args[0] : NULL);
	return 0;
}
