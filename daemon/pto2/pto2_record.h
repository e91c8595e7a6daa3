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
/* One of task @id's blocks took @ns on a core (engine threads). */
void pto2_record_cost(PTO2Runtime *rt, int32_t id, uint64_t ns);
/* The run was waited for with @status (written if 0). */
void pto2_record_run_end(PTO2Runtime *rt, int status);
void pto2_record_destroy(PTO2Runtime *rt);

#endif /* PTO2_RECORD_H */
