// SPDX-License-Identifier: MIT
/*
 * pto2_record.h - recording runs as DAG files (pto2_record.c); the hooks
 * the runtime and the engine call while rt->rec is set
 */
#ifndef PTO2_RECORD_H
#define PTO2_RECORD_H

#include <stdint.h>

#include "pto2_runtime.h"
#include "pto2_types.h"

/* At the start of a run. */
void pto2_record_run_begin(PTO2Runtime *rt);
/* A task submitted (orchestrator, before it can become ready). */
void pto2_record_task(PTO2Runtime *rt, int32_t id,
		      const PTO2TaskDescriptor *d, PTO2WorkerType wt,
		      const int32_t *producers, int n);
/*
 * One of task @id's blocks ran on @core: dispatched, started and ended at
 * these CLOCK_MONOTONIC times (engine threads).
 */
void pto2_record_block(PTO2Runtime *rt, int32_t id, uint32_t core,
		       int64_t dispatch_ns, int64_t start_ns, int64_t end_ns);
/* The run was waited for with @status (written if 0). */
void pto2_record_run_end(PTO2Runtime *rt, int status);
void pto2_record_destroy(PTO2Runtime *rt);

#endif /* PTO2_RECORD_H */
