// SPDX-License-Identifier: MIT
/*
 * pto2_ready_queue.c - sharded lock-free ready queues
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_ready_queue.h"
#include "pto2_util.h"

int pto2_rq_shard_init(struct pto2_rq_shard *s, uint32_t capacity)
{
	uint64_t cap = pto_next_pow2_u32(capacity < 2 ? 2 : capacity), i;

	s->cells = calloc(cap, sizeof(*s->cells));
	if (!s->cells)
		return -ENOMEM;
	s->mask = cap - 1;
	for (i = 0; i < cap; i++)
		atomic_init(&s->cells[i].seq, i);
	atomic_init(&s->head, 0);
	atomic_init(&s->tail, 0);
	return 0;
}

void pto2_rq_shard_destroy(struct pto2_rq_shard *s)
{
	free(s->cells);
	s->cells = NULL;
}

static void rq_shard_reset(struct pto2_rq_shard *s)
{
	uint64_t i;

	/*
	 * An empty shard is consistent as it is (every cell's seq is ready
	 * for the push at its position): nothing to rewrite. Only a shard
	 * left non-empty (an aborted run) is rebuilt.
	 */
	if (atomic_load_explicit(&s->head, memory_order_relaxed) ==
	    atomic_load_explicit(&s->tail, memory_order_relaxed))
		return;
	for (i = 0; i <= s->mask; i++)
		atomic_store_explicit(&s->cells[i].seq, i, memory_order_relaxed);
	atomic_store_explicit(&s->head, 0, memory_order_relaxed);
	atomic_store_explicit(&s->tail, 0, memory_order_release);
}

int pto2_rq_shard_push(struct pto2_rq_shard *s, int32_t v)
{
	uint64_t pos = atomic_load_explicit(&s->tail, memory_order_relaxed);
	struct pto2_rq_cell *c;

	for (;;) {
		uint64_t seq;
		int64_t diff;

		c = &s->cells[pos & s->mask];
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		diff = (int64_t)(seq - pos);
		if (diff == 0) {
			if (atomic_compare_exchange_weak_explicit(&s->tail, &pos,
					pos + 1, memory_order_relaxed,
					memory_order_relaxed))
				break;
		} else if (diff < 0) {
			return -ENOSPC;
		} else {
			pos = atomic_load_explicit(&s->tail,
						   memory_order_relaxed);
		}
	}
	c->value = v;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return 0;
}

int pto2_rq_shard_pop(struct pto2_rq_shard *s, int32_t *v)
{
	uint64_t pos = atomic_load_explicit(&s->head, memory_order_relaxed);
	struct pto2_rq_cell *c;

	for (;;) {
		uint64_t seq;
		int64_t diff;

		c = &s->cells[pos & s->mask];
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		diff = (int64_t)(seq - (pos + 1));
		if (diff == 0) {
			if (atomic_compare_exchange_weak_explicit(&s->head, &pos,
					pos + 1, memory_order_relaxed,
					memory_order_relaxed))
				break;
		} else if (diff < 0) {
			return -EAGAIN;
		} else {
			pos = atomic_load_explicit(&s->head,
						   memory_order_relaxed);
		}
	}
	*v = c->value;
	atomic_store_explicit(&c->seq, pos + s->mask + 1, memory_order_release);
	return 0;
}

int pto2_ready_queues_init(struct pto2_ready_queues *rq, uint32_t shards,
			   uint32_t capacity)
{
	uint32_t t, i;
	int ret;

	memset(rq, 0, sizeof(*rq));
	if (shards < 1 || shards > PTO2_READY_QUEUE_SHARDS_MAX)
		return -EINVAL;
	rq->shards = shards;
	for (t = 0; t < PTO2_NUM_WORKER_TYPES; t++) {
		for (i = 0; i < shards; i++) {
			ret = pto2_rq_shard_init(&rq->q[t][i], capacity);
			if (ret) {
				pto2_ready_queues_destroy(rq);
				return ret;
			}
		}
	}
	return 0;
}

void pto2_ready_queues_destroy(struct pto2_ready_queues *rq)
{
	uint32_t t, i;

	for (t = 0; t < PTO2_NUM_WORKER_TYPES; t++)
		for (i = 0; i < PTO2_READY_QUEUE_SHARDS_MAX; i++)
			pto2_rq_shard_destroy(&rq->q[t][i]);
}

void pto2_ready_queues_reset(struct pto2_ready_queues *rq)
{
	uint32_t t, i;

	for (t = 0; t < PTO2_NUM_WORKER_TYPES; t++)
		for (i = 0; i < rq->shards; i++)
			rq_shard_reset(&rq->q[t][i]);
}

int pto2_ready_push(struct pto2_ready_queues *rq, int type, uint32_t thread,
		    int32_t task_id)
{
	uint32_t own = thread % rq->shards, i;

	for (i = 0; i < rq->shards; i++) {
		if (!pto2_rq_shard_push(&rq->q[type][(own + i) % rq->shards],
					task_id))
			return 0;
	}
	return -ENOSPC;
}

int pto2_ready_pop(struct pto2_ready_queues *rq, int type, uint32_t thread,
		   int32_t *task_id)
{
	uint32_t own = thread % rq->shards, i;

	for (i = 0; i < rq->shards; i++) {
		struct pto2_rq_shard *s = &rq->q[type][(own + i) % rq->shards];

		if (i && pto2_rq_shard_maybe_empty(s))
			continue;
		if (!pto2_rq_shard_pop(s, task_id))
			return 0;
	}
	return -EAGAIN;
}

bool pto2_ready_empty(struct pto2_ready_queues *rq, int type)
{
	uint32_t i;

	for (i = 0; i < rq->shards; i++)
		if (!pto2_rq_shard_maybe_empty(&rq->q[type][i]))
			return false;
	return true;
}
