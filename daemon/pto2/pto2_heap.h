// SPDX-License-Identifier: MIT
/*
 * pto2_heap.h - a bounded max-heap of ready task ids by priority
 *
 * A runtime's ready tasks wait here until the engine admits them into the
 * HWS's ready station, highest offline priority first (ties: the older
 * task), so that a DAG with more ready tasks than the station has room for
 * offers its most urgent ones. Capacity: the task window. Not thread
 * safe (the engine's lock).
 */
#ifndef PTO2_HEAP_H
#define PTO2_HEAP_H

#include <stdbool.h>
#include <stdint.h>

struct pto2_heap {
	uint64_t *key;		/* [cap]: priority << 32 | ~id */
	uint32_t n;
	uint32_t cap;
};

int pto2_heap_init(struct pto2_heap *h, uint32_t cap);
void pto2_heap_destroy(struct pto2_heap *h);

static inline void pto2_heap_reset(struct pto2_heap *h)
{
	h->n = 0;
}

static inline bool pto2_heap_empty(const struct pto2_heap *h)
{
	return h->n == 0;
}

/* -ENOSPC if full. */
int pto2_heap_push(struct pto2_heap *h, uint32_t priority, int32_t id);
/* The highest priority id (the oldest among equals); -EAGAIN if empty. */
int pto2_heap_pop(struct pto2_heap *h, int32_t *id);

#endif /* PTO2_HEAP_H */
