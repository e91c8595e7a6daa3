// SPDX-License-Identifier: MIT
/*
 * pto2_record.c - recording a runtime's runs as DAG files for pto-hws-sim
 * (pto2_runtime_record())
 *
 * The orchestrator records each task as it is submitted (kernel, core
 * type, launch shape, the estimate it got, its producers); the engine's
 * threads record every block that ran (its core, when it was dispatched,
 * started and ended) and the longest time one of its blocks took; the run
 * is written when it is waited for. Task and block records live in chunks
 * that never move, since the engine writes into them while the
 * orchestrator adds more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/dagfile.h>
#include <pto-private/time.h>

#include "pto2_internal.h"
#include "pto2_record.h"

#define REC_CHUNK	4096
#define REC_CHUNKS	256		/* at most 1 Mi tasks, 1 Mi blocks per run */
#define REC_PREDS	(4U << 20)	/* and 4 Mi predecessors (16 MiB) */

struct rec_task {
	int32_t kernel;
	uint8_t type;			/* enum pto_dagf_type */
	uint16_t blocks, threads;
	bool coop;
	uint64_t est;
	_Atomic uint64_t cost;		/* longest block, ns */
	uint32_t pred_off, npred;
};

struct pto2_rec {
	FILE *f;
	char name[PTO_DAGF_REC_NAME_MAX + 1];	/* "name.N" fits a DAG file */
	int64_t epoch_ns;
	uint32_t runs;
	int64_t run_start;
	_Atomic bool dropped;		/* this run did not fit */
	_Atomic uint32_t n;		/* tasks of this run */
	struct rec_task *chunk[REC_CHUNKS];
	/* blocks that ran: engine threads claim an index, then fill it */
	_Atomic uint32_t nblk;
	struct pto_dagf_block *_Atomic blk[REC_CHUNKS];
	/* task slot -> record: valid if id matches (orchestrator writes,
	 * engine reads after the task was published) */
	int32_t *slot_id;
	uint32_t *slot_idx;
	uint32_t *slot_run;
	uint32_t *pred;
	uint32_t npred, pred_cap;
};

static struct rec_task *rec_at(struct pto2_rec *r, uint32_t i)
{
	return &r->chunk[i / REC_CHUNK][i % REC_CHUNK];
}

static void rec_free(struct pto2_rec *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < REC_CHUNKS; i++) {
		free(r->chunk[i]);
		free(r->blk[i]);
	}
	free(r->slot_id);
	free(r->slot_idx);
	free(r->slot_run);
	free(r->pred);
	free(r);
}

void pto2_record_destroy(PTO2Runtime *rt)
{
	rec_free(rt->rec);
	rt->rec = NULL;
}

int pto2_runtime_record(PTO2Runtime *rt, FILE *f, const char *name,
			int64_t epoch_ns)
{
	struct pto2_rec *r;

	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_IDLE) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&rt->lock);
	pto2_record_destroy(rt);
	if (!f)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->slot_id = malloc(rt->window * sizeof(*r->slot_id));
	r->slot_idx = malloc(rt->window * sizeof(*r->slot_idx));
	r->slot_run = calloc(rt->window, sizeof(*r->slot_run));
	if (!r->slot_id || !r->slot_idx || !r->slot_run) {
		rec_free(r);
		return -ENOMEM;
	}
	memset(r->slot_id, 0xff, rt->window * sizeof(*r->slot_id));
	r->f = f;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "run");
	r->epoch_ns = epoch_ns;
	rt->rec = r;
	return 0;
}

void pto2_record_run_begin(PTO2Runtime *rt)
{
	struct pto2_rec *r = rt->rec;

	if (!r)
		return;
	r->run_start = pto_mono_ns();
	r->dropped = false;
	r->npred = 0;
	atomic_store(&r->n, 0);
	atomic_store(&r->nblk, 0);
}

/* The record index of task @id of this run, or -1. */
static int64_t rec_index(struct pto2_rec *r, PTO2Runtime *rt, int32_t id)
{
	uint32_t s = (uint32_t)id & rt->mask;

	return r->slot_id[s] == id && r->slot_run[s] == r->runs ?
	       (int64_t)r->slot_idx[s] : -1;
}

static bool add_preds(struct pto2_rec *r, PTO2Runtime *rt,
		      struct rec_task *t, const int32_t *producers, int n)
{
	int i;

	if ((uint64_t)r->npred + (uint32_t)n > REC_PREDS)
		return false;	/* the run is not recorded */
	if (r->npred + (uint32_t)n > r->pred_cap) {
		uint32_t cap = r->pred_cap ? 2 * r->pred_cap : 1024;
		uint32_t *p;

		while (cap < r->npred + (uint32_t)n)
			cap *= 2;
		p = realloc(r->pred, cap * sizeof(*p));
		if (!p)
			return false;
		r->pred = p;
		r->pred_cap = cap;
	}
	t->pred_off = r->npred;
	for (i = 0; i < n; i++) {
		int64_t k = rec_index(r, rt, producers[i]);

		if (k >= 0)
			r->pred[r->npred++] = (uint32_t)k;
	}
	t->npred = r->npred - t->pred_off;
	return true;
}

void pto2_record_task(PTO2Runtime *rt, int32_t id,
		      const PTO2TaskDescriptor *d, PTO2WorkerType wt,
		      const int32_t *producers, int n)
{
	struct pto2_rec *r = rt->rec;
	uint32_t i = atomic_load_explicit(&r->n, memory_order_relaxed);
	struct rec_task *t;

	if (r->dropped)
		return;
	if (i >= REC_CHUNK * REC_CHUNKS ||
	    (!r->chunk[i / REC_CHUNK] &&
	     !(r->chunk[i / REC_CHUNK] = calloc(REC_CHUNK,
						sizeof(struct rec_task))))) {
		r->dropped = true;
		return;
	}
	t = rec_at(r, i);
	t->kernel = d->kernel_id;
	t->type = wt == PTO2_WORKER_CUBE ? PTO_DAGF_AIC :
		  wt == PTO2_WORKER_VECTOR ? PTO_DAGF_AIV : PTO_DAGF_ANY;
	t->blocks = d->block_num;
	t->threads = d->thread_num;
	t->coop = d->attr_flags & PTO2_ATTR_COOP;
	t->est = d->est_time;
	atomic_store_explicit(&t->cost, 0, memory_order_relaxed);
	if (!add_preds(r, rt, t, producers, n)) {
		r->dropped = true;
		return;
	}
	r->slot_id[(uint32_t)id & rt->mask] = id;
	r->slot_idx[(uint32_t)id & rt->mask] = i;
	r->slot_run[(uint32_t)id & rt->mask] = r->runs;
	/* before the task is published: the engine finds the record */
	atomic_store_explicit(&r->n, i + 1, memory_order_release);
}

/* Block record @i, its chunk allocated by whichever thread comes first. */
static struct pto_dagf_block *blk_at(struct pto2_rec *r, uint32_t i)
{
	struct pto_dagf_block *c, *fresh;

	c = atomic_load_explicit(&r->blk[i / REC_CHUNK], memory_order_acquire);
	if (!c) {
		fresh = calloc(REC_CHUNK, sizeof(*fresh));
		if (!fresh)
			return NULL;
		if (atomic_compare_exchange_strong(&r->blk[i / REC_CHUNK], &c,
						   fresh))
			c = fresh;
		else
			free(fresh);
	}
	return &c[i % REC_CHUNK];
}

/* Monotonic ns -> ns from the recording's time 0. */
static uint64_t rec_time(const struct pto2_rec *r, int64_t ns)
{
	return ns > r->epoch_ns ? (uint64_t)(ns - r->epoch_ns) : 0;
}

void pto2_record_block(PTO2Runtime *rt, int32_t id, uint32_t core,
		       int64_t dispatch_ns, int64_t start_ns, int64_t end_ns)
{
	struct pto2_rec *r = rt->rec;
	int64_t k = rec_index(r, rt, id);
	uint64_t ns = (uint64_t)(end_ns - start_ns), old;
	struct pto_dagf_block *b;
	struct rec_task *t;
	uint32_t i;

	if (k < 0 || (uint32_t)k >= atomic_load_explicit(&r->n,
							 memory_order_acquire))
		return;
	t = rec_at(r, (uint32_t)k);
	old = atomic_load_explicit(&t->cost, memory_order_relaxed);
	while (ns > old &&
	       !atomic_compare_exchange_weak(&t->cost, &old, ns))
		;
	i = atomic_fetch_add_explicit(&r->nblk, 1, memory_order_relaxed);
	b = i < REC_CHUNK * REC_CHUNKS ? blk_at(r, i) : NULL;
	if (!b) {
		r->dropped = true;
		return;
	}
	*b = (struct pto_dagf_block){
		.task = (uint32_t)k, .core = core,
		.dispatch = rec_time(r, dispatch_ns),
		.start = rec_time(r, start_ns), .end = rec_time(r, end_ns),
	};
}

/* Write the run just waited for (runs that failed are not written). */
void pto2_record_run_end(PTO2Runtime *rt, int status)
{
	struct pto2_rec *r = rt->rec;
	uint32_t i, n, nblk;
	char name[PTO_DAGF_NAME_MAX + 1];

	if (!r)
		return;
	n = atomic_load(&r->n);
	r->runs++;
	if (status || r->dropped || !n)
		return;
	snprintf(name, sizeof(name), "%s.%u", r->name, r->runs);
	flockfile(r->f);	/* one DAG at a time in a shared file */
	pto_dagf_write_dag(r->f, name,
			   (uint64_t)(r->run_start > r->epoch_ns ?
				      r->run_start - r->epoch_ns : 0),
			   rt->dag_dynamic, rt->hws_ctx);
	for (i = 0; i < n; i++) {
		struct rec_task *t = rec_at(r, i);
		struct pto_dagf_task ft = {
			.id = i, .cost = atomic_load(&t->cost),
			.est = t->est, .type = t->type,
			.block_num = t->blocks ? t->blocks : 1,
			.thread_num = t->threads ? t->threads : 1,
			.coop = t->coop, .func = t->kernel, .prio = -1,
			.cp = -1, .pred = r->pred + t->pred_off,
			.npred = t->npred,
		};

		pto_dagf_write_task(r->f, &ft);
	}
	nblk = atomic_load(&r->nblk);
	for (i = 0; i < nblk; i++)
		pto_dagf_write_block(r->f, blk_at(r, i));
	fflush(r->f);
	funlockfile(r->f);
}
