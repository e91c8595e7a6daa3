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
 * Launch geometry (the system queries GetBlockIdx, GetBlockNum,
 * GetSubBlockIdx, GetSubBlockNum): a task is launched as block_num blocks
 * of thread_num threads, one core each (pto2_rt_submit_task_attr; a plain
 * submit is 1 block of 1 thread). A kernel sees the numbers of its launch,
 * not of the device: block_idx 0 .. block_num - 1, thread_idx 0 ..
 * thread_num - 1. The AIV threads of a block are its sub-blocks
 * (sub_block_idx 0 or 1 of sub_block_num): a block of 2 threads is the
 * two AIV cores of one cluster, a block of 3 is that cluster's 2 AIV
 * (threads 0 and 1) and its AIC (thread 2). block_incore SPMD calls may
 * also be expanded by the orchestration into one task per block, with the
 * block id passed as a scalar.
 *
 * The profile and its capabilities (struct pto_kernel_ctx) let a kernel
 * choose a code path; a kernel that cannot run without a capability
 * declares it (PTO_KERNEL_REQUIRES) and is refused, with a clear error,
 * on a device whose profile lacks it.
 */
#ifndef PTO_KERNEL_H
#define PTO_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTO_KERNEL_ENTRY_SYMBOL	"pto_kernel_entry"
#define PTO_KERNEL_REQUIRES_SYMBOL "pto_kernel_required_caps"

/*
 * PTO_KERNEL_REQUIRES(PTO_CAP_FP8 | ...) at file scope: the capabilities
 * (linux/pto.h PTO_CAP_*) the kernel cannot run without. pto_kernel_load()
 * reads them and ptod refuses the kernel on a device whose profile lacks
 * one.
 */
#define PTO_KERNEL_REQUIRES(caps)					\
	__attribute__((visibility("default")))				\
	const uint64_t pto_kernel_required_caps = (caps)

/**
 * struct pto_kernel_ctx - what a kernel knows about where it runs.
 * @block_idx: GetBlockIdx().
 * @block_num: GetBlockNum().
 * @sub_block_idx: GetSubBlockIdx().
 * @sub_block_num: GetSubBlockNum().
 * @core_id: physical core number (uapi numbering).
 * @task_id: PTO2 task id of this execution.
 * @kernel_id: the task's kernel (func) id.
 * @thread_idx: this core's thread in the block (0 .. thread_num - 1).
 * @thread_num: the block's threads: cores running the block together.
 * @profile: the device's target profile (enum pto_profile: 1 A2A3, 2 A5).
 * @caps: the profile's capabilities (PTO_CAP_* bits of linux/pto.h).
 *
 * The executor owns this struct; a kernel reads it and never keeps it
 * past its return. Its layout does not grow, for an older executor would
 * fill in less than a newer kernel reads: what a newer executor offers,
 * a kernel finds through the executor's exports, as
 * pto_kernel_pre_complete() does.
 */
struct pto_kernel_ctx {
	uint32_t block_idx;
	uint32_t block_num;
	uint32_t sub_block_idx;
	uint32_t sub_block_num;
	uint32_t core_id;
	uint32_t task_id;
	int32_t kernel_id;
	uint32_t thread_idx;
	uint32_t thread_num;
	uint32_t profile;
	uint64_t caps;
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

/*
 * SIP_REPORT_PRE_COMPLETE: this core is close to finishing its block (the
 * design's example: before the last copy-out). When the HWS's early launch
 * is on in SIP report mode (EARLY_LAUNCH_MODE 0), it may then launch the
 * next block onto this core, to start the moment this one returns. The
 * kernel chooses the moment: the HWS cannot know a kernel's end. It is a
 * hint: reporting too early only keeps the next block waiting for this
 * core; a second report of the same block, or none, changes nothing.
 *
 * Call it on the thread the kernel was called on, with the ctx it was
 * given; any other call is ignored. The executor that runs the kernel
 * exports pto_kernel_report_pre_complete() (pto-aicore, pto-sandbox and
 * the sim device's programs do); the kernel's reference to it is weak,
 * so under an executor without it (older than this ABI) the symbol
 * resolves to NULL when the kernel is loaded and the report is a no-op.
 */
extern void pto_kernel_report_pre_complete(const struct pto_kernel_ctx *ctx)
	__attribute__((weak));

static inline void pto_kernel_pre_complete(const struct pto_kernel_ctx *ctx)
{
	if (pto_kernel_report_pre_complete)
		pto_kernel_report_pre_complete(ctx);
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
