// SPDX-License-Identifier: MIT
/*
 * pto_kernel.h - ABI of a kernel run by an AICore (pto-aicore, sim device)
 *
 * A kernel is a shared object exporting
 *
 *	int pto_kernel_entry(const struct pto_kernel_ctx *ctx,
 *			     const uint64_t *args, uint32_t nargs);
 *
 * args[i] is, for a tensor parameter, a host pointer (in the executor's
 * mapping of GM) to the first element of the tensor view, and for a scalar
 * parameter its raw 64-bit value; nargs is the number of parameters of the
 * task, in submit order. Return 0 on success, a negative errno on failure
 * (the runtime then fails the run with -EIO and says which task failed).
 *
 * Block geometry (the system queries GetBlockIdx, GetBlockNum,
 * GetSubBlockIdx, GetSubBlockNum): a task dispatched to AIC core i
 * runs as block i of nr_aic blocks with 1 sub-block; one dispatched to AIV
 * core nr_aic + 2b + s runs as block b, sub-block s of 2. (MPMD: each task
 * is one block; block_incore SPMD calls are expanded by the orchestration
 * into one task per block, with block_id passed as a scalar.)
 */
#ifndef PTO_KERNEL_H
#define PTO_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_KERNEL_ENTRY_SYMBOL	"pto_kernel_entry"

/**
 * struct pto_kernel_ctx - what a kernel knows about where it runs.
 * @block_idx: GetBlockIdx().
 * @block_num: GetBlockNum().
 * @sub_block_idx: GetSubBlockIdx().
 * @sub_block_num: GetSubBlockNum().
 * @core_id: physical core number (uapi numbering).
 * @task_id: PTO2 task id of this execution.
 * @kernel_id: the task's kernel (func) id.
 * @reserved: zero.
 */
struct pto_kernel_ctx {
	uint32_t block_idx;
	uint32_t block_num;
	uint32_t sub_block_idx;
	uint32_t sub_block_num;
	uint32_t core_id;
	uint32_t task_id;
	int32_t kernel_id;
	uint32_t reserved;
};

typedef int (*pto_kernel_entry_fn)(const struct pto_kernel_ctx *ctx,
				   const uint64_t *args, uint32_t nargs);

/* Declared for kernel authors; define it with default visibility. */
int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs);

static inline int32_t get_block_idx(const struct pto_kernel_ctx *ctx)
{
	return (int32_t)ctx->block_idx;
}

static inline int32_t get_block_num(const struct pto_kernel_ctx *ctx)
{
	return (int32_t)ctx->block_num;
}

static inline int32_t get_sub_block_idx(const struct pto_kernel_ctx *ctx)
{
	return (int32_t)ctx->sub_block_idx;
}

static inline int32_t get_sub_block_num(const struct pto_kernel_ctx *ctx)
{
	return (int32_t)ctx->sub_block_num;
}

/* Scalar args carry floats in their low 32 bits (reference convention). */
static inline float pto_arg_f32(uint64_t v)
{
	union { uint32_t u; float f; } c;

	c.u = (uint32_t)v;
	return c.f;
}

static inline uint64_t pto_f32_arg(float f)
{
	union { uint32_t u; float f; } c;

	c.f = f;
	return (uint64_t)c.u;
}

#ifdef __cplusplus
}
#endif

#endif /* PTO_KERNEL_H */
