// SPDX-License-Identifier: MIT
/*
 * dispatch.h - what the AICPU hands a core: the dispatch payload
 *
 * The scheduler writes a payload into GM, stores its device address in
 * the core's task register (Handshake.task), then stores DATA_MAIN_BASE =
 * dispatch id + 1 (release): dispatch ids are unique per dispatch on the
 * device, the payload names the task. The core loads DATA_MAIN_BASE
 * (acquire), answers COND = ACK(dispatch id), reads the payload through
 * the task register, runs the kernel, writes @status and stores COND =
 * FIN(dispatch id) (release). Each runtime has a payload slot per core,
 * written only while the core is idle (its previous FIN was seen).
 */
#ifndef PTO_PRIVATE_DISPATCH_H
#define PTO_PRIVATE_DISPATCH_H

#include <stdint.h>

#include <pto/pto_orchestration_api.h>

#include "compiler.h"

/**
 * struct PTO2DispatchPayload - what a core runs.
 * @task_id: task identifier (DATA_MAIN_BASE - 1).
 * @kernel_id: function id.
 * @function_bin_addr: GM address of the kernel binary (a kernel blob,
 *	wire.h), or 0 if the executor resolves kernels by id (the sim
 *	device does).
 * @num_args: number of valid @args.
 * @status: written by the core before COND FIN: the kernel's return value
 *	(0 or a negative errno).
 * @tensor_mask: bit i set: args[i] is the device address of a tensor
 *	view's first element (the executor translates it into its own
 *	mapping of GM); clear: a raw 64-bit scalar.
 * @block_idx: the block of the launch this core runs.
 * @block_num: the launch's blocks.
 * @thread_idx: this core's thread in the block.
 * @thread_num: the block's threads (cores).
 * @flags: PTO2_PAYLOAD_* bits.
 * @exec_ctx: where the kernel runs: 0 in the executor that took the
 *	dispatch (pto-aicore, the sim device), else the sandbox of that
 *	number (sandbox.h), which the executor hands the task to. Set by
 *	the runtime that owns the task (ptod gives each client whose kernels
 *	run sandboxed a number of its own).
 * @args: the task's parameters in submit order.
 */
typedef struct PTO2DispatchPayload {
	int32_t task_id;
	int32_t kernel_id;
	uint64_t function_bin_addr;
	uint32_t num_args;
	int32_t status;
	uint32_t tensor_mask;
	uint16_t block_idx;
	uint16_t block_num;
	uint16_t thread_idx;
	uint16_t thread_num;
	uint32_t flags;
	uint32_t exec_ctx;
	uint64_t args[PTO2_MAX_TASK_PARAMS];
} PTO2DispatchPayload;

/*
 * The launch is cooperative: all its blocks run at once (the executor
 * runs every one of its cores at the same time).
 */
#define PTO2_PAYLOAD_COOP	(1U << 0)

/* Distance between two cores' payload slots (whole cache lines). */
#define PTO2_PAYLOAD_STRIDE	PTO_ALIGN_UP(sizeof(PTO2DispatchPayload), 64)

#endif /* PTO_PRIVATE_DISPATCH_H */
