// SPDX-License-Identifier: MIT
/*
 * pto2_ready_queue.h - sharded ready queues, one set per core type: a
 * thread pushes to its own shard and pops from it first, then steals
 *
 * One set of shards per worker type (AIC, AIV); PTO2_READY_QUEUE_SHARDS
 * shards each (default 3). Scheduler thread t pushes to shard
 * t % shards and pops from it first, then steals from the others.
 *
 * Each shard is a bounded lock-free MPMC queue (per-cell sequence numbers,
 * D. Vyukov's design): push and pop are one CAS on the shard's tail/head.
 * A shard holds up to its capacity; the runtime sizes it to the task
 * window, which bounds the number of ready tasks, so a push cannot fail
 * in practice (it returns -ENOSPC if it would).
 */
#ifndef PTO2_READY_QUEUE_H
#define PTO2_READY_QUEUE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "pto2_types.h"

struct pto2_rq_cell {
	_Atomic uint64_t seq;	/* Vyukov sequence: who may use the cell */
	int32_t value;
	int32_t pad;
};

struct pto2_rq_shard {
	alignas(64) _Atomic uint64_t head;	/* next pop position */
	alignas(64) _Atomic uint64_t tail;	/* next push position */
	alignas(64) struct pto2_rq_cell *cells;
	uint64_t mask;
};

struct pto2_ready_queues {
	uint32_t shards;
	struct pto2_rq_shard q[PTO2_NUM_WORKER_TYPES][PTO2_READY_QUEUE_SHARDS_MAX];
};

int pto2_rq_shard_init(struct pto2_rq_shard *s, uint32_t capacity);
void pto2_rq_shard_destroy(struct pto2_rq_shard *s);
int pto2_rq_shard_push(struct pto2_rq_shard *s, int32_t v);
/* 0 and *v on success, -EAGAIN if empty. */
int pto2_rq_shard_pop(struct pto2_rq_shard *s, int32_t *v);

static inline bool pto2_rq_shard_maybe_empty(struct pto2_rq_shard *s)
{
	return atomic_load_explicit(&s->head, memory_order_relaxed) >=
	       atomic_load_explicit(&s->tail, memory_order_relaxed);
}

/* @capacity is rounded up to a power of 2. */
int pto2_ready_queues_init(struct pto2_ready_queues *rq, uint32_t shards,
			   uint32_t capacity);
void pto2_ready_queues_destroy(struct pto2_ready_queues *rq);
void pto2_ready_queues_reset(struct pto2_ready_queues *rq);
/* Push to shard @thread % shards; falls over to other shards if full. */
int pto2_ready_push(struct pto2_ready_queues *rq, int type, uint32_t thread,
		    int32_t task_id);
/* Pop from own shard first, then steal. -EAGAIN if all are empty. */
int pto2_ready_pop(struct pto2_ready_queues *rq, int type, uint32_t thread,
		   int32_t *task_id);
bool pto2_ready_empty(struct pto2_ready_queues *rq, int type);

#endif /* PTO2_READY_QUEUE_H */
