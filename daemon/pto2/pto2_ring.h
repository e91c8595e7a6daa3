// SPDX-License-Identifier: MIT
/*
 * pto2_ring.h - task ring, heap ring and dependency-list pool
 *
 * All three are allocated from by the orchestrator thread only and
 * reclaimed by watermarks the schedulers advance (last_task_alive,
 * heap_tail). When a ring is exhausted the orchestrator spin-waits
 * (back-pressure), printing a BLOCKED warning every warn_interval spins
 * and declaring a flow-control deadlock after spin_limit spins without
 * progress while no task is running on a core.
 * Instead of exiting, the allocation then returns -EDEADLK with the FATAL
 * diagnosis in flow->errmsg; the caller puts the runtime into its error
 * state.
 */
#ifndef PTO2_RING_H
#define PTO2_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pto2_types.h"
#include "pto2_util.h"

/**
 * struct pto2_flow - how flow-control waits behave and report.
 * @log: where BLOCKED warnings go.
 * @warn_interval: spins between BLOCKED warnings (PTO2_BLOCK_NOTIFY_INTERVAL).
 * @spin_limit: spins without progress before a deadlock is declared.
 * @abort: non-zero (a negative errno) makes waits give up with that value.
 * @running: number of tasks currently on cores; a deadlock is declared
 *	only while it is zero (a long kernel is not a deadlock).
 * @completions: count of completed tasks; any change counts as progress.
 * @errmsg: buffer that receives the FATAL diagnosis.
 * @errlen: its size.
 */
struct pto2_flow {
	const struct pto2_logger *log;
	uint32_t warn_interval;
	uint32_t spin_limit;
	_Atomic int *abort;
	_Atomic int32_t *running;
	_Atomic uint64_t *completions;
	char *errmsg;
	size_t errlen;
	/* called when a wait begins (may be NULL): what waits must not hold */
	void (*on_wait)(void *arg);
	void *on_wait_arg;
};

/* State of one blocking wait. */
struct pto2_flow_wait {
	struct pto2_spinner sp;
	uint64_t mark;		/* watermark at the last progress */
	uint64_t completions;	/* completions at the last progress */
	uint32_t spins;		/* spins since the last progress */
};

void pto2_flow_wait_init(const struct pto2_flow *f, struct pto2_flow_wait *w,
			 uint64_t mark);
/*
 * One spin of a wait whose watermark is now @mark. Returns 0 to go on,
 * 1 if a warning is due (spins % warn_interval == 0), 2 if the deadlock
 * limit is reached, or the negative abort value.
 */
int pto2_flow_wait_step(const struct pto2_flow *f, struct pto2_flow_wait *w,
			uint64_t mark);

/* ---- Task ring -------------------------------------------------------- */

struct pto2_task_ring {
	PTO2TaskDescriptor *descriptors;	/* SM, [window_size] */
	uint32_t window_size;			/* power of 2 */
	int32_t current_index;			/* next id (orchestrator-local) */
	_Atomic int32_t *last_alive_ptr;	/* header->last_task_alive */
};

void pto2_task_ring_init(struct pto2_task_ring *r, PTO2TaskDescriptor *desc,
			 uint32_t window_size, _Atomic int32_t *last_alive_ptr);
/* Allocate the next task id (slot = id & (window - 1)); may block. */
int pto2_task_ring_alloc(struct pto2_task_ring *r, const struct pto2_flow *f,
			 int32_t *task_id);
bool pto2_task_ring_has_space(const struct pto2_task_ring *r);

static inline PTO2TaskDescriptor *
pto2_task_ring_get(const struct pto2_task_ring *r, int32_t task_id)
{
	return &r->descriptors[(uint32_t)task_id & (r->window_size - 1)];
}

/* ---- Heap ring -------------------------------------------------------- */

struct pto2_heap_ring {
	uint64_t base;			/* device address of offset 0 */
	uint64_t size;
	uint64_t top;			/* monotonic (orchestrator-local) */
	/* the end of the ring skipped last, [from, to) (orchestrator-local) */
	uint64_t skip_from, skip_to;
	_Atomic uint64_t *tail_ptr;	/* header->heap_tail (schedulers) */
	_Atomic uint64_t *top_ptr;	/* header->heap_top (published) */
};

void pto2_heap_ring_init(struct pto2_heap_ring *r, uint64_t base, uint64_t size,
			 _Atomic uint64_t *top_ptr, _Atomic uint64_t *tail_ptr);
/*
 * Allocate @size bytes (a multiple of PTO2_PACKED_OUTPUT_ALIGN), never
 * straddling the end of the heap; may block. On success *@dev_addr is the
 * buffer's device address and *@pos_end the heap position after it (what
 * heap_tail becomes when the owning task retires).
 */
int pto2_heap_ring_alloc(struct pto2_heap_ring *r, const struct pto2_flow *f,
			 uint64_t size, uint64_t *dev_addr, uint64_t *pos_end);

/*
 * Where the live bytes begin with the tail at @tail: a tail at the start
 * of the end skipped last has every buffer before the skip reclaimed, so
 * the skipped bytes are free too. (The tail moves from buffer end to
 * buffer end; an older skip is left counted as live: a wait, never an
 * overlap.)
 */
static inline uint64_t pto2_heap_ring_live_from(const struct pto2_heap_ring *r,
						uint64_t tail)
{
	return tail >= r->skip_from && tail < r->skip_to ? r->skip_to : tail;
}

static inline uint64_t pto2_heap_ring_available(const struct pto2_heap_ring *r,
						uint64_t tail)
{
	return r->size - (r->top - pto2_heap_ring_live_from(r, tail));
}

/* ---- Dependency list pool ---------------------------------------------- */

struct pto2_dep_pool {
	PTO2DepListEntry *entries;	/* SM, [capacity + 1], [0] sentinel */
	uint32_t capacity;
	uint32_t top;			/* last index handed out, 0..capacity */
	uint64_t pos;			/* allocations so far (monotonic) */
	uint64_t live_pos;		/* pos of the oldest entry still needed */
};

void pto2_dep_pool_init(struct pto2_dep_pool *p, PTO2DepListEntry *entries,
			uint32_t capacity);
/* True if one more entry can be taken without overwriting a live one. */
static inline bool pto2_dep_pool_has_space(const struct pto2_dep_pool *p)
{
	return p->pos - p->live_pos < p->capacity;
}
/* Prepend @task_id to the list at @head; the caller ensured has_space. */
static inline int32_t pto2_dep_list_prepend(struct pto2_dep_pool *p,
					    int32_t head, int32_t task_id)
{
	uint32_t idx = p->top + 1;

	if (idx > p->capacity)
		idx = 1;		/* wrap: entry 0 stays the sentinel */
	p->top = idx;
	p->pos++;
	p->entries[idx].task_id = task_id;
	p->entries[idx].next_offset = head;
	return (int32_t)idx;
}

#endif /* PTO2_RING_H */
