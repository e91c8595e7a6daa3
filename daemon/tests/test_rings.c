// SPDX-License-Identifier: MIT
/*
 * test_rings.c - task ring, heap ring, dep-list pool: wrap, back-pressure,
 * BLOCKED warnings and deadlock diagnosis
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_ring.h"
#include "tap.h"

struct logbuf {
	pthread_mutex_t lock;
	char text[8192];
	int warns;
};

static void capture(void *ctx, int level, const char *msg)
{
	struct logbuf *lb = ctx;

	pthread_mutex_lock(&lb->lock);
	if (level == PTO2_LOG_WARN)
		lb->warns++;
	if (strlen(lb->text) + strlen(msg) + 2 < sizeof(lb->text)) {
		strcat(lb->text, msg);
		strcat(lb->text, "\n");
	}
	pthread_mutex_unlock(&lb->lock);
}

static struct logbuf lb = { PTHREAD_MUTEX_INITIALIZER, "", 0 };
static struct pto2_logger logger = { capture, &lb };
static char errmsg[4096];

static struct pto2_flow flow(uint32_t warn, uint32_t limit)
{
	struct pto2_flow f = {
		.log = &logger, .warn_interval = warn, .spin_limit = limit,
		.errmsg = errmsg, .errlen = sizeof(errmsg),
	};
	return f;
}

/* ---- task ring ------------------------------------------------------------ */

struct tr_consumer {
	_Atomic int32_t last_alive;
	_Atomic int32_t *current;	/* producer's published index */
	int32_t total;
};

/*
 * Retire a task only while the ring is full (15 of 16 slots in use) or
 * the producer is done: the producer then meets back-pressure on every
 * slot it needs, however the threads are scheduled.
 */
static void *tr_consume(void *arg)
{
	struct tr_consumer *c = arg;

	while (atomic_load(&c->last_alive) < c->total) {
		int32_t cur = atomic_load(c->current);
		int32_t la = atomic_load(&c->last_alive);

		if (la < cur && (cur - la >= 15 || cur == c->total))
			atomic_fetch_add(&c->last_alive, 1);
		else
			sched_yield();
	}
	return NULL;
}

static void test_task_ring(void)
{
	static PTO2TaskDescriptor desc[16];
	struct pto2_task_ring r;
	struct tr_consumer c = { .total = 208 };
	_Atomic int32_t current = 0;
	struct pto2_flow f = flow(10000, 100000);
	pthread_t th;
	int32_t id;
	int i, good = 1, blocked = 0;

	atomic_init(&c.last_alive, 0);
	c.current = &current;
	pto2_task_ring_init(&r, desc, 16, &c.last_alive);
	for (i = 0; i < 15; i++)
		good &= pto2_task_ring_alloc(&r, &f, &id) == 0 && id == i;
	ok(good && !pto2_task_ring_has_space(&r),
	   "window 16: 15 slots allocate, then the ring is full (active < window-1)");
	ok(pto2_task_ring_get(&r, 17) == &desc[1], "slot = id & (window - 1)");

	atomic_store(&current, 15);
	pthread_create(&th, NULL, tr_consume, &c);
	for (i = 15; i < 208; i++) {
		if (!pto2_task_ring_has_space(&r))
			blocked++;
		good &= pto2_task_ring_alloc(&r, &f, &id) == 0 && id == i;
		good &= id - atomic_load(&c.last_alive) < 16;
		atomic_store(&current, id + 1);
	}
	pthread_join(th, NULL);
	ok(good, "208 tasks through a window of 16 (slots recycled ~13 times)");
	ok(blocked > 0, "the producer met back-pressure %d times", blocked);
}

static void test_task_ring_deadlock(void)
{
	static PTO2TaskDescriptor desc[16];
	struct pto2_task_ring r;
	_Atomic int32_t la = 0;
	struct pto2_flow f = flow(1000, 3000);
	int32_t id;
	int i, ret;

	lb.text[0] = '\0';
	lb.warns = 0;
	pto2_task_ring_init(&r, desc, 16, &la);
	for (i = 0; i < 15; i++)
		pto2_task_ring_alloc(&r, &f, &id);
	ret = pto2_task_ring_alloc(&r, &f, &id);
	ok(ret == -EDEADLK, "full ring without progress: -EDEADLK");
	ok(strstr(errmsg, "FATAL: Flow Control Deadlock Detected!") &&
	   strstr(errmsg, "Task Ring is FULL and no progress after 3000 spins.") &&
	   strstr(errmsg, "- Active tasks: 15") &&
	   strstr(errmsg, "- Window size: 16") &&
	   strstr(errmsg, "Root Cause:") &&
	   strstr(errmsg, "Recommended: 32 (at least 2x current active tasks)"),
	   "diagnosis text in the PTO2 FATAL format");
	ok(lb.warns == 2 &&
	   strstr(lb.text, "[TaskRing] BLOCKED (Flow Control): current=15, last_alive=0, active=15/16 (93.8%), spins=1000"),
	   "BLOCKED warnings every warn_interval spins, PTO2 format");
}

/* ---- heap ring ------------------------------------------------------------- */

struct heap_consumer {
	_Atomic uint64_t tail;
	_Atomic uint64_t *ends;		/* pos_end of each allocation, 0 = not yet */
	int n;
};

static void *heap_consume(void *arg)
{
	struct heap_consumer *c = arg;
	int i;

	for (i = 0; i < c->n; i++) {
		uint64_t e;

		while (!(e = atomic_load(&c->ends[i])))
			sched_yield();
		atomic_store(&c->tail, e);
	}
	return NULL;
}

static void test_heap_ring(void)
{
	const uint64_t size = 16384, base = 0x100000000ULL;
	struct pto2_heap_ring r;
	struct heap_consumer c;
	_Atomic uint64_t top = 0;
	struct pto2_flow f = flow(10000, 100000);
	pthread_t th;
	uint64_t addr, end, tail, sizes[] = { 3072, 1024, 5120, 2048, 7168 };
	int i, j, straddle = 0, wrapped = 0, ret = 0, n = 300;

	c.n = n;
	c.ends = calloc((size_t)n, sizeof(*c.ends));
	atomic_init(&c.tail, 0);
	pto2_heap_ring_init(&r, base, size, &top, &c.tail);
	pthread_create(&th, NULL, heap_consume, &c);
	for (i = 0; i < n; i++) {
		uint64_t sz = sizes[i % 5];

		ret |= pto2_heap_ring_alloc(&r, &f, sz, &addr, &end);
		if (addr - base + sz > size)
			straddle++;
		if (addr == base && i)
			wrapped++;
		if ((addr - base) % PTO2_PACKED_OUTPUT_ALIGN)
			straddle++;
		/* live: the allocations whose end the tail has not passed */
		tail = atomic_load(&c.tail);
		for (j = 0; j < i; j++)
			if (atomic_load(&c.ends[j]) > tail) {
				if (end - (atomic_load(&c.ends[j]) -
					   sizes[j % 5]) > size)
					straddle++;
				break;
			}
		atomic_store(&c.ends[i], end);
	}
	pthread_join(th, NULL);
	ok(!ret && !straddle && wrapped > 10,
	   "300 allocations wrap %d times, none straddles the end or overlaps live data",
	   wrapped);
	ok(atomic_load(&top) == r.top, "heap_top published");
	free(c.ends);
}

static void test_heap_ring_block(void)
{
	struct pto2_heap_ring r;
	_Atomic uint64_t top = 0, tail = 0;
	struct pto2_flow f = flow(1000, 2500);
	uint64_t addr, end;
	int ret;

	lb.text[0] = '\0';
	pto2_heap_ring_init(&r, 0x100000000ULL, 4096, &top, &tail);
	pto2_heap_ring_alloc(&r, &f, 3072, &addr, &end);
	ret = pto2_heap_ring_alloc(&r, &f, 2048, &addr, &end);
	ok(ret == -EDEADLK && strstr(errmsg, "Heap Ring is FULL") &&
	   strstr(errmsg, "Recommended: "),
	   "heap without progress: -EDEADLK with diagnosis");
	ok(strstr(lb.text, "[HeapRing] BLOCKED: requesting 2048 bytes, available=1024, top=3072, tail=0, spins=1000") != NULL,
	   "[HeapRing] BLOCKED warning in the PTO2 format");
	atomic_store(&tail, 3072);
	ret = pto2_heap_ring_alloc(&r, &f, 2048, &addr, &end);
	ok(ret == 0 && addr == 0x100000000ULL && end == 4096 + 2048,
	   "after the tail moved, 2048 bytes skip the 1024-byte end and wrap to 0");
	ret = pto2_heap_ring_alloc(&r, &f, 8192, &addr, &end);
	ok(ret == -ENOMEM, "a request larger than the heap is -ENOMEM at once");
}

/* A 4 KiB ring whose first 2048 bytes were made and reclaimed. */
static void ring_2048_reclaimed(struct pto2_heap_ring *r, _Atomic uint64_t *top,
				_Atomic uint64_t *tail, struct pto2_flow *f)
{
	uint64_t addr, end;

	atomic_store(tail, 0);
	pto2_heap_ring_init(r, 0x100000000ULL, 4096, top, tail);
	pto2_heap_ring_alloc(r, f, 2048, &addr, &end);
	atomic_store(tail, end);
}

/*
 * Skipped bytes are free once the tail reached them: with every buffer
 * reclaimed, a request that skips the ring's end fits at once, and so
 * does one beside it. They are not free before: a request that would
 * overlap a buffer still live waits.
 */
static void test_heap_ring_skip(void)
{
	struct pto2_heap_ring r;
	_Atomic uint64_t top = 0, tail = 0;
	struct pto2_flow f = flow(1000, 2500);
	uint64_t addr, end;
	int ret;

	ring_2048_reclaimed(&r, &top, &tail, &f);
	ret = pto2_heap_ring_alloc(&r, &f, 2560, &addr, &end);
	ok(ret == 0 && addr == 0x100000000ULL && end == 4096 + 2560,
	   "empty ring, top at 2048 of 4096: 2560 bytes skip the end and fit at 0 (ret %d)",
	   ret);
	ret = pto2_heap_ring_alloc(&r, &f, 1024, &addr, &end);
	ok(ret == 0 && addr == 0x100000000ULL + 2560,
	   "2560 bytes live at 0 after a skip: 1024 more fit at 2560 (ret %d)",
	   ret);
	ret = pto2_heap_ring_alloc(&r, &f, 2048, &addr, &end);
	ok(ret == -EDEADLK,
	   "the same ring with those 3584 bytes live: 2048 more wait (ret %d)",
	   ret);

	ring_2048_reclaimed(&r, &top, &tail, &f);
	pto2_heap_ring_alloc(&r, &f, 1536, &addr, &end); /* live at 2048 */
	ret = pto2_heap_ring_alloc(&r, &f, 2048, &addr, &end);
	ok(ret == 0 && addr == 0x100000000ULL,
	   "1536 bytes live at 2048: 2048 more skip the end and fit at 0 (ret %d)",
	   ret);
	ret = pto2_heap_ring_alloc(&r, &f, 512, &addr, &end);
	ok(ret == -EDEADLK,
	   "then 512 more would overlap the live 1536 at 2048: they wait (ret %d)",
	   ret);
}

/* ---- dep pool ---------------------------------------------------------------- */

static void test_dep_pool(void)
{
	PTO2DepListEntry e[17];
	struct pto2_dep_pool p;
	int32_t head = 0, idx;
	int i, good = 1, wraps = 0;

	pto2_dep_pool_init(&p, e, 16);
	ok(e[0].task_id == -1 && e[0].next_offset == 0, "entry 0 is the NULL sentinel");
	for (i = 0; i < 100; i++) {
		if (!pto2_dep_pool_has_space(&p))
			p.live_pos = p.pos - 8;	/* tasks retired */
		idx = pto2_dep_list_prepend(&p, i % 4 ? head : 0, i);
		good &= idx >= 1 && idx <= 16;
		if (idx == 1 && i)
			wraps++;
		head = idx;
	}
	ok(good && wraps == 6, "100 entries in a pool of 16: wrap skips the sentinel (%d wraps)", wraps);
	ok(e[0].task_id == -1 && e[0].next_offset == 0, "sentinel intact after wraps");
	ok(e[head].task_id == 99 && e[e[head].next_offset].task_id == 98 &&
	   e[e[e[head].next_offset].next_offset].task_id == 97,
	   "lists link newest first");
	p.live_pos = p.pos - 16;
	ok(!pto2_dep_pool_has_space(&p), "no space when 16 live entries");
}

int main(void)
{
	test_task_ring();
	test_task_ring_deadlock();
	test_heap_ring();
	test_heap_ring_block();
	test_heap_ring_skip();
	test_dep_pool();
	return tap_done();
}
