// SPDX-License-Identifier: MIT
/*
 * pto2_types.h - constants and shared-memory layout of the PTO2 runtime
 *
 * The shared-memory (SM) region is one caller-provided block of memory (in
 * GM under ptod, plain memory in the tests). Layout, every part aligned to
 * PTO2_ALIGN_SIZE (64):
 *
 *   offset 0                 PTO2SharedMemoryHeader
 *   descriptors_offset       PTO2TaskDescriptor[task_window_size]
 *   dep_list_offset          PTO2DepListEntry[dep_list_pool_size + 1]
 *                            (entry 0 is the NULL sentinel)
 *   payload_offset           PTO2DispatchPayload[nr_cores]  (see below)
 *
 *   total = ALIGN(Header) + ALIGN(window * sizeof(TaskDescriptor))
 *         + ALIGN((dep_pool + 1) * sizeof(DepListEntry))
 *         + ALIGN(nr_cores * sizeof(DispatchPayload))
 *
 * The first three terms are the PTO2 shared-memory formula. The fourth is
 * the per-core payload area (pto-private/dispatch.h): core i of the
 * runtime's core map has slot i, written by the scheduler only while the
 * core is idle; at each dispatch the scheduler stores the slot's device
 * address in the core's task register (Handshake.task), then
 * DATA_MAIN_BASE = task_id + 1. The layout is computed in one place,
 * pto2_sm_layout() (pto2_runtime.c).
 *
 * The heap ring's memory follows the SM region in the runtime's memory
 * (see pto2_runtime_mem_size()); the header records its device address.
 */
#ifndef PTO2_TYPES_H
#define PTO2_TYPES_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/pto.h>
#include <pto/pto_orchestration_api.h>
#include <pto-private/compiler.h>
#include <pto-private/dispatch.h>
#include <pto-private/graph.h>	/* PTO_DEFAULT_EST_NS, PTO_EST_CLAMP */

/* Defaults and limits (PTO2's constants; the environment may change some). */
#define PTO2_TASK_WINDOW_SIZE		65536
#define PTO2_HEAP_SIZE			(1ULL << 30)
#define PTO2_DEP_LIST_POOL_SIZE		65536
#define PTO2_TENSORMAP_POOL_SIZE	65536
#define PTO2_TENSORMAP_NUM_BUCKETS	65536
#define PTO2_ALIGN_SIZE			64
#define PTO2_PACKED_OUTPUT_ALIGN	1024
#define PTO2_READY_QUEUE_SHARDS		3
#define PTO2_SCHED_THREADS		3

/* Validity ranges of the environment variables (pto2_config_from_env). */
#define PTO2_TASK_WINDOW_MIN		4
#define PTO2_TASK_WINDOW_MAX		(1U << 22)
#define PTO2_HEAP_MIN			1024ULL
#define PTO2_HEAP_MAX			(1ULL << 40)
#define PTO2_DEP_POOL_MIN		16
#define PTO2_DEP_POOL_MAX		(1U << 28)
#define PTO2_READY_QUEUE_SHARDS_MAX	16
#define PTO2_SCHED_THREADS_MAX		16

/* Flow-control diagnostics: a BLOCKED warning every 10,000 spins, a
 * deadlock after 100,000 spins without progress. */
#define PTO2_BLOCK_NOTIFY_INTERVAL	10000
#define PTO2_FLOW_CONTROL_SPIN_LIMIT	100000

#define PTO2_MAX_SCOPE_DEPTH		64
#define PTO2_MAX_OUTPUTS		PTO2_MAX_TASK_PARAMS

#define PTO2_ALIGN_UP(x, a)	PTO_ALIGN_UP(x, a)

#define PTO2_SM_MAGIC		0x324d5350	/* "PSM2" */
#define PTO2_SM_VERSION		1

/* Task states in the scheduler's completed[] array (PTO2's life cycle). */
#define PTO2_TASK_INITIAL	0	/* not yet ready (initial or recycled) */
#define PTO2_TASK_READY		1	/* all fanin satisfied (and running) */
#define PTO2_TASK_COMPLETED	2	/* hardware execution complete */
#define PTO2_TASK_CONSUMED	3	/* fanout traversed, fully consumed */

/* fanin_count before the orchestrator finalizes it in step 7. */
#define PTO2_FANIN_PENDING	INT32_MAX

/**
 * struct PTO2SharedMemoryHeader - flow control, config and sync flags.
 *
 * Fields written by the orchestrator and by the schedulers live on
 * different cache lines. Heap positions are monotonic byte counters (the
 * offset into the heap is pos % heap_size), so that full and empty are
 * never confused and heap_tail only grows.
 */
typedef struct PTO2SharedMemoryHeader {
	/* written by the orchestrator, read by schedulers */
	alignas(64) _Atomic int32_t current_task_index;	/* task ring head */
	_Atomic int32_t orchestrator_done;
	_Atomic uint64_t heap_top;			/* heap ring head */
	/* written by schedulers, read by the orchestrator */
	alignas(64) _Atomic int32_t last_task_alive;	/* task ring tail */
	int32_t pad0;
	_Atomic uint64_t heap_tail;			/* heap ring tail */
	/* set at init, read by both */
	alignas(64) uint32_t magic;
	uint32_t version;
	uint32_t task_window_size;
	uint32_t dep_list_pool_size;
	uint64_t heap_size;
	uint64_t heap_dev_addr;		/* device address of heap offset 0 */
	uint64_t sm_size;
	uint32_t descriptors_offset;
	uint32_t dep_list_offset;
	uint32_t payload_offset;
	uint32_t payload_stride;
	uint32_t nr_cores;
	uint32_t pad1;
} PTO2SharedMemoryHeader;

/**
 * struct PTO2TaskDescriptor - one slot of the task ring.
 *
 * Written by the orchestrator at submit (steps 1-7) and read by the
 * schedulers once published (current_task_index, release) or once
 * fanin_count is final (seq_cst store). fanout_lock protects fanout_head
 * and fanout_count against the scheduler's completion handler.
 *
 * A descriptor starts a cache line (no two share one), and the fanout
 * fields are in its last line, away from the first: a consumer's submit
 * takes the producer's fanout_lock right after the schedulers' scan read
 * the producer's task_id and fanin_count; in one line, that lock moved
 * the line from CPU to CPU on most dependencies.
 */
typedef struct PTO2TaskDescriptor {
	alignas(64) _Atomic int32_t task_id;
	int32_t kernel_id;
	int32_t worker_type;
	int32_t fanin_head;		/* DepListPool offset: producers to release */
	_Atomic int32_t fanin_count;	/* producers to wait for */
	uint64_t packed_buffer_base;	/* device address, 0 = no outputs */
	uint64_t packed_buffer_end;	/* device address */
	uint64_t heap_pos_end;		/* heap position after this task's
					 * buffer, 0 = none */
	int32_t num_outputs;
	int32_t param_count;
	int8_t output_index[PTO2_MAX_OUTPUTS];
	uint8_t param_type[PTO2_MAX_TASK_PARAMS];
	uint64_t args[PTO2_MAX_TASK_PARAMS];	/* device addr or scalar */
	/* the launch, as the HWS sees it (the TD fields of the design) */
	uint16_t block_num;		/* blocks */
	uint16_t thread_num;		/* cores per block */
	uint32_t attr_flags;		/* PTO2_ATTR_* */
	uint32_t offline_priority;
	int32_t cluster_id;		/* -1: not pinned */
	uint64_t est_time;		/* ns, one block */
	bool est_declared;		/* @est_time given (task or kernel),
					 * not measured or the default */
	uint64_t affinity[PTO_CORE_MASK_WORDS];	/* cores; all 0: any */
	/* off the first line, written after publication */
	_Atomic int32_t fanout_lock;	/* spinlock, see above */
	int32_t fanout_head;		/* DepListPool offset: consumers */
	_Atomic int32_t fanout_count;	/* 1 (scope ref) + consumers */
	_Atomic int32_t threads_left;	/* core executions to finish */
} PTO2TaskDescriptor;

/* Dependency list node; offset 0 is the NULL sentinel. */
typedef struct PTO2DepListEntry {
	int32_t task_id;
	int32_t next_offset;
} PTO2DepListEntry;


/* Log levels of the pluggable log callback. */
#define PTO2_LOG_ERROR	0
#define PTO2_LOG_WARN	1
#define PTO2_LOG_INFO	2
#define PTO2_LOG_DEBUG	3

typedef void (*pto2_log_fn)(void *ctx, int level, const char *msg);

#endif /* PTO2_TYPES_H */
