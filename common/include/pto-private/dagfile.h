// SPDX-License-Identifier: MIT
/*
 * dagfile.h - writing DAG files, the text format pto-hws-sim replays
 * (Documentation/hws.rst, "DAG files"): the simulator's own workloads and
 * the recordings of live runs (pto2_runtime_record()) use this writer, so
 * both write what the simulator's parser reads.
 */
#ifndef PTO_PRIVATE_DAGFILE_H
#define PTO_PRIVATE_DAGFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The longest DAG name a DAG file carries, in bytes: the parser refuses
 * a longer one rather than cut it (a cut name loses the ".N" that tells
 * a recording's runs apart).
 */
#define PTO_DAGF_NAME_MAX	63
/* What a recording's @name may keep so that "@name.N" fits (N: u32). */
#define PTO_DAGF_REC_NAME_MAX	(PTO_DAGF_NAME_MAX - 11)

enum pto_dagf_type {
	PTO_DAGF_ANY = 0,	/* any core */
	PTO_DAGF_AIC = 1,	/* AIC (PTO2_WORKER_CUBE) */
	PTO_DAGF_AIV = 2,	/* AIV (PTO2_WORKER_VECTOR) */
};

/**
 * struct pto_dagf_task - one task line.
 * @id: its id in the DAG.
 * @cost: what one block takes (ns).
 * @est: what the HWS is told (written only if it differs from @cost).
 * @type: enum pto_dagf_type.
 * @block_num, @thread_num, @coop: the launch shape.
 * @func: kernel id, or -1.
 * @prio: offline priority given, or -1.
 * @cp: on a critical path as given (1), or not given (<= 0).
 * @pred, @npred: the ids of its predecessors (earlier tasks).
 */
struct pto_dagf_task {
	uint32_t id;
	uint64_t cost;
	uint64_t est;
	uint8_t type;
	uint16_t block_num;
	uint16_t thread_num;
	bool coop;
	int32_t func;
	int64_t prio;
	int8_t cp;
	const uint32_t *pred;
	uint32_t npred;
};

/**
 * struct pto_dagf_block - one execution of one block of a recorded task:
 * where and when it ran in the live run (the simulator does not replay
 * these; pto-trace draws them).
 * @task: the task's id in its DAG.
 * @core: the uapi core number it ran on.
 * @dispatch: when the AICPU dispatched it (ns from the file's time 0).
 * @start, @end: when the kernel started and ended on the core (same base).
 */
struct pto_dagf_block {
	uint32_t task;
	uint32_t core;
	uint64_t dispatch;
	uint64_t start;
	uint64_t end;
};

/* "dag NAME arrival T static|dynamic [ctx C]" */
void pto_dagf_write_dag(FILE *f, const char *name, uint64_t arrival,
			bool dynamic, uint32_t ctx);
/* "task ID cost C [est E] type T [shape BxT[c]] [func F] ... [pred ...]" */
void pto_dagf_write_task(FILE *f, const struct pto_dagf_task *t);
/* "block TASK core C dispatch D start S end E" (after its task's line) */
void pto_dagf_write_block(FILE *f, const struct pto_dagf_block *b);

#endif /* PTO_PRIVATE_DAGFILE_H */
