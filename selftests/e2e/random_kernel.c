// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel of the random programs (daemon/tests/random_dag.h), for
 * pto_e2e random: the same function the sim-device test runs.
 */
#include "../../daemon/tests/random_dag.h"

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	return rd_kernel(ctx, args, nargs);
}
