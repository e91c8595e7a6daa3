// SPDX-License-Identifier: MIT
/*
 * check.h - the checking mode: orchestration hazards that run silently
 * wrong become errors at submit
 *
 * libpto feeds every task of a graph to a checker when the graph is built
 * with PTO_GRAPH_CHECK or PTO_CHECK=1 is set (libpto.h). The checker
 * derives each task's producers with the runtime's own overlap rule
 * (pto-private/tensormap.h: an INPUT or INOUT depends on every earlier
 * OUTPUT or INOUT of the same buffer whose region overlaps it; an OUTPUT
 * depends on nothing) and refuses:
 *
 *  - an intermediate tensor (make_tensor(): its buffer lives in the
 *    runtime's heap until the scope that made it ends) used after that
 *    scope ended;
 *  - a read (INPUT or INOUT) of a region of an intermediate tensor that no
 *    earlier task of the graph wrote (external tensors hold the host's
 *    data: their reads are not checked);
 *  - an OUTPUT whose region overlaps what an earlier task wrote while no
 *    chain of dependencies orders the two: which write lands last is up
 *    to the scheduler.
 *
 * The cost is memory for every write of the graph and, per write that
 * overlaps an earlier one, a search back through the producers; it is a
 * mode for finding bugs, not for production runs.
 */
#ifndef PTO_PRIVATE_CHECK_H
#define PTO_PRIVATE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

struct pto_check;

/* A checker with no graph; NULL if out of memory. */
struct pto_check *pto_check_new(void);
void pto_check_free(struct pto_check *k);
/* A new graph: forget the previous one's tasks, writes and scopes. */
void pto_check_graph_begin(struct pto_check *k);
/*
 * A scope begins or ends; @last_ph is the highest placeholder index given
 * to an intermediate tensor so far in this graph (wire.h: PTO_PH_IDX).
 * Every intermediate made inside a scope dies when it ends. 0 or -ENOMEM.
 */
int pto_check_scope_begin(struct pto_check *k, uint32_t last_ph);
int pto_check_scope_end(struct pto_check *k, uint32_t last_ph);
/*
 * The next task of the graph, its intermediates' placeholder addresses
 * already assigned: 0, -EINVAL with the hazard described in @msg (the
 * task is not recorded), or -ENOMEM.
 */
int pto_check_task(struct pto_check *k, int32_t kernel_id,
		   const PTOParam *params, int num_params, char *msg,
		   size_t msglen);
/* Tasks of the graph accepted so far: the index of the next one. */
uint32_t pto_check_ntasks(const struct pto_check *k);

#endif /* PTO_PRIVATE_CHECK_H */
