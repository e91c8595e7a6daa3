// SPDX-License-Identifier: MIT
/*
 * test_ready_queue.c - sharded ready queues under concurrent push/pop/steal
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "pto2_ready_queue.h"
#include "tap.h"

#define THREADS		4
#define PER_THREAD	200000

static struct pto2_ready_queues rq;
static _Atomic uint8_t *seen;
static _Atomic int pushed_all;
static _Atomic long popped;
static _Atomic int dup_or_bad;

static void take(int32_t v)
{
	if (v < 0 || v >= THREADS * PER_THREAD || atomic_fetch_add(&seen[v], 1))
		atomic_store(&dup_or_bad, 1);
	atomic_fetch_add(&popped, 1);
}

static void *worker(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	int32_t v;
	int i;

	for (i = 0; i < PER_THREAD; i++) {
		int32_t id = (int32_t)(t * PER_THREAD + i);

		int full = 0;

		while (pto2_ready_push(&rq, id & 1, t, id)) {
			/* full: make room ourselves */
			if (!pto2_ready_pop(&rq, full++ & 1, t, &v))
				take(v);
		}
		/* pop about every other push, from either type */
		if (i & 1 && !pto2_ready_pop(&rq, (i >> 1) & 1, t, &v))
			take(v);
	}
	atomic_fetch_add(&pushed_all, 1);
	for (;;) {
		int got = 0, ty;

		for (ty = 0; ty < 2; ty++) {
			if (!pto2_ready_pop(&rq, ty, t, &v)) {
				take(v);
				got = 1;
			}
		}
		if (!got && atomic_load(&pushed_all) == THREADS &&
		    pto2_ready_empty(&rq, 0) && pto2_ready_empty(&rq, 1))
			break;
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	struct pto2_rq_shard s;
	int32_t v;
	long i, missing = 0;

	ok(pto2_rq_shard_init(&s, 4) == 0, "shard of 4");
	for (i = 0; i < 4; i++)
		pto2_rq_shard_push(&s, (int32_t)i);
	ok(pto2_rq_shard_push(&s, 9) == -ENOSPC, "full shard: -ENOSPC");
	ok(!pto2_rq_shard_pop(&s, &v) && v == 0 && !pto2_rq_shard_push(&s, 4),
	   "FIFO pop frees a cell");
	for (i = 1; i <= 4; i++)
		pto2_rq_shard_pop(&s, &v);
	ok(v == 4 && pto2_rq_shard_pop(&s, &v) == -EAGAIN, "empty: -EAGAIN");
	pto2_rq_shard_destroy(&s);

	ok(pto2_ready_queues_init(&rq, 3, 1024) == 0, "3 shards x 2 types");
	seen = calloc(THREADS * PER_THREAD, 1);
	for (i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < THREADS * PER_THREAD; i++)
		missing += atomic_load(&seen[i]) != 1;
	ok(!atomic_load(&dup_or_bad) && !missing &&
	   atomic_load(&popped) == THREADS * PER_THREAD,
	   "%d threads push/pop/steal %d items: each popped exactly once",
	   THREADS, THREADS * PER_THREAD);
	pto2_ready_queues_destroy(&rq);
	free((void *)seen);
	return tap_done();
}
