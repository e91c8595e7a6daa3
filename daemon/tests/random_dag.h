/* SPDX-License-Identifier: MIT */
/*
 * random_dag.h - random programs and their sequential result, for the
 * tests that run them on the runtime (test_random_dag, on the sim
 * device) and through ptod (the e2e suite's "random"). Header-only.
 *
 * A program is a sequence of tasks over a few external int64 tensors of
 * 1-12 x 1-12 elements and the intermediates its scopes make. A task
 * reads tiles (INPUT), writes tiles (OUTPUT) or updates them (INOUT), and
 * stores a hash of everything it read in its own slot of a sink tensor.
 * Its kernel may run as several blocks, of one thread, two (AIV tasks)
 * or three (MIXED: a cluster's 2 AIV and its AIC), each thread writing
 * its share of the elements.
 *
 * The runtime orders a task after every earlier task whose write its
 * reads (INPUT, INOUT) overlap, a use of an intermediate also after the
 * task that made it, and after nothing else: not a write after an
 * earlier read, not an OUTPUT after another earlier write. The generator
 * keeps to programs whose result that order defines: a task writes an
 * element only if the element's last writer and every task that read it
 * since are ordered before the task, and where one is not, the task also
 * reads that task's sink slot, which only that task writes. Every schedule the runtime may choose then gives the
 * sequential result; a difference is a dependency it missed, a block it
 * ran twice, early or never, or memory reused too early.
 *
 * The task that makes an intermediate may write only a tile of it; later
 * tasks may write the rest (OUTPUT), and no task reads an element of an
 * intermediate before one wrote it (its memory holds whatever the heap
 * held).
 */
#ifndef RANDOM_DAG_H
#define RANDOM_DAG_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

#include "test_rng.h"

#define RD_TENSORS	3		/* external data tensors */
#define RD_SINK		RD_TENSORS	/* then the sink */
#define RD_IM0		(RD_SINK + 1)	/* then the intermediates */
#define RD_IMS		2		/* intermediates a scope makes */
#define RD_NT		(RD_IM0 + RD_IMS)
#define RD_DIM		12		/* rows and columns at most */
#define RD_ELEMS	(RD_DIM * RD_DIM)
#define RD_MAX_TASKS	256
#define RD_WORDS	(RD_MAX_TASKS / 64)
#define RD_MAX_VIEWS	6		/* tensor params besides the sink */
#define RD_MAX_BLOCKS	3

struct rd_view {
	uint8_t tensor, kind;		/* kind: PTO_PARAM_INPUT .. INOUT */
	uint8_t r0, c0, nr, nc;
	uint16_t stride;		/* the tensor's row, elements */
	bool make;			/* makes the intermediate (its first
					 * write: all of it or a tile) */
	uint8_t mrows;			/* make: the intermediate's rows */
};

struct rd_task {
	uint32_t seed;
	uint8_t nviews, worker, blocks, threads;
	uint8_t opens, closes;		/* scopes begun before, ended after */
	uint32_t priority;		/* 0: submission order */
	uint32_t est_ns;		/* estimated time; 0: the default */
	uint8_t cluster;		/* RD_CLUSTER_* */
	struct rd_view v[RD_MAX_VIEWS];
};

/* What a case's programs held, to see that they test something. */
struct rd_stats {
	uint32_t tasks, writes, inouts, order_reads, reads_only, blocks;
	uint32_t threads;		/* tasks of two-thread blocks */
	uint32_t mixed;			/* MIXED tasks (three threads) */
	uint32_t clustered;		/* tasks on a cluster */
	uint32_t makes, im_uses;	/* intermediates made, tiles used */
	uint32_t part_makes;		/* intermediates made by a tile */
};

struct rd_prog {
	uint32_t rows[RD_TENSORS + 1], cols[RD_TENSORS + 1];
	uint32_t ntasks;
	struct rd_task task[RD_MAX_TASKS];
	int64_t init[RD_TENSORS][RD_ELEMS];
};

/* A scope's first task may allocate a cluster, and its tasks run there. */
#define RD_CLUSTER_ALLOC	1	/* allocate one before the task */
#define RD_CLUSTER_ON		2	/* the task runs on it */

typedef uint64_t rd_set[RD_WORDS];

/*
 * The generator's state: the data tensors' shapes (an intermediate's is
 * chosen when a scope makes it), which exist, who wrote and who read each
 * element last.
 */
struct rd_gen {
	uint64_t rng;
	uint32_t rows[RD_NT], cols[RD_NT];
	uint32_t alive;					/* bit: tensor */
	int16_t writer[RD_NT][RD_ELEMS];		/* -1: none */
	rd_set readers[RD_NT][RD_ELEMS];		/* since that write */
	rd_set before[RD_MAX_TASKS];	/* the tasks ordered before each */
};

static inline uint32_t rnd(uint64_t *s, uint32_t n)
{
	return (uint32_t)(test_rng_next(s) % n);
}

static inline void set_add(rd_set s, uint32_t t)
{
	s[t / 64] |= 1ULL << (t % 64);
}

static inline bool set_has(const rd_set s, uint32_t t)
{
	return (s[t / 64] >> (t % 64)) & 1;
}

/* ---- the kernel, and the sequential reference ---------------------------- */

static inline uint64_t mix(uint64_t acc, uint64_t x)
{
	acc ^= x;
	acc *= 0x100000001b3ULL;
	return acc ^ (acc >> 29);
}

/*
 * args: the sink slot, the views' first elements, then seed | views << 32
 * and per view kind | rows << 8 | cols << 16 | row stride << 24. Every
 * thread hashes the INPUT views; of the written views' elements, thread t
 * of block b (T threads a block, B blocks) writes those whose index in the
 * view is b * T + t modulo B * T; thread 0 of block 0 stores the hash in
 * the sink slot.
 */
static inline int rd_kernel(const struct pto_kernel_ctx *ctx,
			    const uint64_t *a, uint32_t n)
{
	uint32_t nv = (n - 2) / 2, part, parts, i, r, c;
	uint64_t acc;

	if (n < 2 || n % 2 || a[1 + nv] >> 32 != nv)
		return -EINVAL;
	acc = a[1 + nv] & 0xffffffffULL;
	part = ctx->block_idx * (ctx->thread_num ? ctx->thread_num : 1) +
	       ctx->thread_idx;
	parts = (ctx->block_num ? ctx->block_num : 1) *
		(ctx->thread_num ? ctx->thread_num : 1);
	for (i = 0; i < nv; i++) {
		uint64_t d = a[2 + nv + i];
		const int64_t *x = (const int64_t *)(uintptr_t)a[1 + i];
		uint32_t nr = (d >> 8) & 0xff, nc = (d >> 16) & 0xff;
		uint32_t stride = (uint32_t)(d >> 24);

		if ((d & 0xff) != PTO_PARAM_INPUT)
			continue;
		for (r = 0; r < nr; r++)
			for (c = 0; c < nc; c++)
				acc = mix(acc, (uint64_t)x[r * stride + c]);
	}
	for (i = 0; i < nv; i++) {
		uint64_t d = a[2 + nv + i];
		int64_t *x = (int64_t *)(uintptr_t)a[1 + i];
		uint32_t nr = (d >> 8) & 0xff, nc = (d >> 16) & 0xff;
		uint32_t stride = (uint32_t)(d >> 24), j;

		if ((d & 0xff) == PTO_PARAM_INPUT)
			continue;
		for (r = 0; r < nr; r++)
			for (c = 0; c < nc; c++) {
				j = r * nc + c;
				if (j % parts != part)
					continue;
				if ((d & 0xff) == PTO_PARAM_OUTPUT)
					x[r * stride + c] = (int64_t)
						(acc + j * 0x9e3779b9ULL + i);
				else
					x[r * stride + c] = (int64_t)
						((uint64_t)x[r * stride + c] * 3 +
						 (acc ^ j));
			}
	}
	if (part == 0)
		*(int64_t *)(uintptr_t)a[0] = (int64_t)acc;
	return 0;
}

/* Task @i's kernel args, over the tensors at @base (host or device). */
static inline uint32_t task_args(const struct rd_prog *p, uint32_t i,
				 const uint64_t base[RD_NT], uint64_t *a)
{
	const struct rd_task *t = &p->task[i];
	uint32_t k;

	a[0] = base[RD_SINK] + (uint64_t)i * 8;
	for (k = 0; k < t->nviews; k++) {
		const struct rd_view *v = &t->v[k];

		a[1 + k] = base[v->tensor] +
			   ((uint64_t)v->r0 * v->stride + v->c0) * 8;
		a[2 + t->nviews + k] = v->kind | (uint64_t)v->nr << 8 |
				       (uint64_t)v->nc << 16 |
				       (uint64_t)v->stride << 24;
	}
	a[1 + t->nviews] = t->seed | (uint64_t)t->nviews << 32;
	return 2 + 2 * t->nviews;
}

/* Run @p one task, one block at a time into the host arrays @ref. */
static inline void rd_reference(const struct rd_prog *p, int64_t *ref[RD_NT])
{
	uint64_t base[RD_NT], a[PTO2_MAX_TASK_PARAMS];
	struct pto_kernel_ctx ctx;
	uint32_t i, b, th, n, k;

	for (k = 0; k < RD_NT; k++)
		base[k] = (uint64_t)(uintptr_t)ref[k];
	for (k = 0; k < RD_TENSORS; k++)
		memcpy(ref[k], p->init[k], sizeof(p->init[k]));
	memset(ref[RD_SINK], 0, RD_MAX_TASKS * 8);
	for (i = 0; i < p->ntasks; i++) {
		n = task_args(p, i, base, a);
		memset(&ctx, 0, sizeof(ctx));
		ctx.block_num = p->task[i].blocks;
		ctx.thread_num = p->task[i].threads;
		for (b = 0; b < p->task[i].blocks; b++)
			for (th = 0; th < p->task[i].threads; th++) {
				ctx.block_idx = b;
				ctx.thread_idx = th;
				rd_kernel(&ctx, a, n);
			}
	}
}

/* ---- the generator --------------------------------------------------------- */

/* A tile of an external tensor or a live intermediate. */
static inline void random_view(struct rd_gen *g, struct rd_view *v,
			       uint8_t kind)
{
	uint32_t t, rows, cols;
	/* mostly small tiles, so that some tasks are independent */
	uint32_t most = rnd(&g->rng, 4) ? 4 : RD_DIM;

	do
		t = rnd(&g->rng, RD_NT);
	while (!((g->alive >> t) & 1));
	rows = g->rows[t];
	cols = g->cols[t];
	*v = (struct rd_view){ .tensor = (uint8_t)t, .kind = kind,
			       .stride = (uint16_t)cols };
	v->nr = (uint8_t)(1 + rnd(&g->rng, most < rows ? most : rows));
	v->nc = (uint8_t)(1 + rnd(&g->rng, most < cols ? most : cols));
	v->r0 = (uint8_t)rnd(&g->rng, rows - v->nr + 1);
	v->c0 = (uint8_t)rnd(&g->rng, cols - v->nc + 1);
}

static inline bool overlap(const struct rd_view *x, const struct rd_view *y)
{
	return x->tensor == y->tensor &&
	       x->r0 < y->r0 + y->nr && y->r0 < x->r0 + x->nr &&
	       x->c0 < y->c0 + y->nc && y->c0 < x->c0 + x->nc;
}

static inline bool writes(const struct rd_view *v)
{
	return v->kind != PTO_PARAM_INPUT;
}

/* Every element of @v, as an index into its tensor's arrays. */
#define for_each_elem(v, e, r, c)					\
	for ((r) = (v)->r0; (r) < (uint32_t)(v)->r0 + (v)->nr; (r)++)	\
		for ((c) = (v)->c0, (e) = (r) * (v)->stride + (c);	\
		     (c) < (uint32_t)(v)->c0 + (v)->nc;			\
		     (c)++, (e)++)

/* Does @v read an element of an intermediate that no task wrote yet? */
static inline bool reads_unwritten(const struct rd_gen *g,
				   const struct rd_view *v)
{
	uint32_t r, c, e;

	if (v->kind == PTO_PARAM_OUTPUT || v->tensor < RD_IM0)
		return false;
	for_each_elem(v, e, r, c)
		if (g->writer[v->tensor][e] < 0)
			return true;
	return false;
}

/* @pre and everything before it join @set. */
static inline void order_after(struct rd_gen *g, rd_set set, uint32_t pre)
{
	uint32_t w;

	set_add(set, pre);
	for (w = 0; w < RD_WORDS; w++)
		set[w] |= g->before[pre][w];
}

/*
 * Task @i in @t: random views (@reads_only: INPUT views only); then for each task that must come before
 * (an element's last writer or one of its readers since) but is not
 * ordered so, a read of its sink slot. false if that needs more views
 * than a task has.
 */
static inline bool try_task(struct rd_gen *g, uint32_t i, struct rd_task *t,
			    rd_set before, bool reads_only)
{
	uint32_t nw = reads_only ? 0 : 1 + rnd(&g->rng, 2);
	uint32_t nr = (reads_only ? 1 : 0) + rnd(&g->rng, 4), k, j, r, c, e;
	rd_set need;

	memset(before, 0, sizeof(rd_set));
	memset(need, 0, sizeof(need));
	t->nviews = 0;
	for (k = 0; k < nw + nr; k++) {
		struct rd_view v;
		bool clash = false;

		random_view(g, &v, k >= nw ? PTO_PARAM_INPUT :
			    rnd(&g->rng, 2) ? PTO_PARAM_INOUT :
			    PTO_PARAM_OUTPUT);
		/* a task's writes overlap none of its other views */
		for (j = 0; j < t->nviews; j++)
			clash |= (writes(&v) || writes(&t->v[j])) &&
				 overlap(&v, &t->v[j]);
		clash |= reads_unwritten(g, &v);
		if (!clash)
			t->v[t->nviews++] = v;
	}
	/* what the runtime orders: after the last writers of what it reads */
	for (k = 0; k < t->nviews; k++) {
		const struct rd_view *v = &t->v[k];

		if (v->kind == PTO_PARAM_OUTPUT)
			continue;
		for_each_elem(v, e, r, c)
			if (g->writer[v->tensor][e] >= 0)
				order_after(g, before,
					    (uint32_t)g->writer[v->tensor][e]);
	}
	/* what the result needs: after the last writer and readers of what
	 * it writes */
	for (k = 0; k < t->nviews; k++) {
		const struct rd_view *v = &t->v[k];

		if (!writes(v))
			continue;
		for_each_elem(v, e, r, c) {
			if (g->writer[v->tensor][e] >= 0)
				set_add(need, (uint32_t)g->writer[v->tensor][e]);
			for (j = 0; j < RD_WORDS; j++)
				need[j] |= g->readers[v->tensor][e][j];
		}
	}
	for (j = 0; j < i; j++) {
		struct rd_view *s;

		if (!set_has(need, j) || set_has(before, j))
			continue;
		if (t->nviews == RD_MAX_VIEWS)
			return false;
		/* the sink is one row of RD_MAX_TASKS: column j is task j's */
		s = &t->v[t->nviews++];
		*s = (struct rd_view){ .tensor = RD_SINK,
				       .kind = PTO_PARAM_INPUT,
				       .c0 = (uint8_t)j, .nr = 1, .nc = 1,
				       .stride = RD_MAX_TASKS };
		order_after(g, before, j);
	}
	return true;
}

/* Record task @i's reads and writes in the generator's state. */
static inline void commit_task(struct rd_gen *g, const struct rd_prog *p,
			       uint32_t i, const rd_set before)
{
	const struct rd_task *t = &p->task[i];
	uint32_t k, r, c, e;

	memcpy(g->before[i], before, sizeof(rd_set));
	for (k = 0; k < t->nviews; k++) {
		const struct rd_view *v = &t->v[k];

		if (v->tensor == RD_SINK)
			continue;
		for_each_elem(v, e, r, c) {
			if (writes(v)) {
				g->writer[v->tensor][e] = (int16_t)i;
				memset(g->readers[v->tensor][e], 0,
				       sizeof(rd_set));
			} else {
				set_add(g->readers[v->tensor][e], i);
			}
		}
	}
}

/*
 * Task @i makes the intermediates @ims (bits) of a new scope: an OUTPUT
 * of each, all of it or (one in two) a tile, and a few reads. Their
 * memory is new: nothing before touched it.
 */
static inline void make_task(struct rd_gen *g, struct rd_task *t,
			     uint32_t ims, rd_set before)
{
	uint32_t k, e, nr = rnd(&g->rng, 3);

	memset(before, 0, sizeof(rd_set));
	t->nviews = 0;
	for (k = RD_IM0; k < RD_NT; k++) {
		if (!((ims >> k) & 1))
			continue;
		g->rows[k] = 1 + rnd(&g->rng, RD_DIM);
		g->cols[k] = 1 + rnd(&g->rng, RD_DIM);
		for (e = 0; e < RD_ELEMS; e++) {
			g->writer[k][e] = -1;
			memset(g->readers[k][e], 0, sizeof(rd_set));
		}
		t->v[t->nviews] = (struct rd_view){
			.tensor = (uint8_t)k, .kind = PTO_PARAM_OUTPUT,
			.nr = (uint8_t)g->rows[k], .nc = (uint8_t)g->cols[k],
			.stride = (uint16_t)g->cols[k], .make = true,
			.mrows = (uint8_t)g->rows[k] };
		if (rnd(&g->rng, 2)) {
			struct rd_view *v = &t->v[t->nviews];

			v->nr = (uint8_t)(1 + rnd(&g->rng, g->rows[k]));
			v->nc = (uint8_t)(1 + rnd(&g->rng, g->cols[k]));
			v->r0 = (uint8_t)rnd(&g->rng, g->rows[k] - v->nr + 1);
			v->c0 = (uint8_t)rnd(&g->rng, g->cols[k] - v->nc + 1);
		}
		t->nviews++;
	}
	/* reads of the tensors that exist (not the new ones) */
	while (nr--) {
		random_view(g, &t->v[t->nviews], PTO_PARAM_INPUT);
		t->nviews++;
	}
	/* reads order the task after their writers */
	for (k = 0; k < t->nviews; k++) {
		const struct rd_view *v = &t->v[k];
		uint32_t r, c;

		if (v->kind != PTO_PARAM_INPUT)
			continue;
		for_each_elem(v, e, r, c)
			if (g->writer[v->tensor][e] >= 0)
				order_after(g, before,
					    (uint32_t)g->writer[v->tensor][e]);
	}
}

/*
 * A program of @ntasks tasks in scopes of at most @scope_tasks tasks
 * (nested one or two deep). A task's dependency entries are reclaimed
 * only after its scope ended, so without scopes a long program fills any
 * pool. A scope may begin with a task that makes one or two intermediate
 * tensors, which the scope's tasks then use like the external ones.
 */
static inline void rd_generate(struct rd_prog *p, uint64_t seed,
			       uint32_t ntasks, uint32_t scope_tasks,
			       uint32_t max_threads, struct rd_stats *st,
			       struct rd_gen *gen)
{
#define g (*gen)
	uint32_t i, k, depth = 0, in_scope = 0;
	const uint32_t ext = (1U << RD_TENSORS) - 1;
	bool clustered = false;
	rd_set before;

	memset(p, 0, sizeof(*p));
	memset(&g, 0, sizeof(g));
	memset(g.writer, 0xff, sizeof(g.writer));
	g.rng = seed | 1;
	g.alive = ext;
	for (k = 0; k < RD_TENSORS; k++) {
		p->rows[k] = g.rows[k] = 1 + rnd(&g.rng, RD_DIM);
		p->cols[k] = g.cols[k] = 1 + rnd(&g.rng, RD_DIM);
		for (i = 0; i < RD_ELEMS; i++)
			p->init[k][i] = (int64_t)test_rng_next(&g.rng);
	}
	p->rows[RD_SINK] = 1;
	p->cols[RD_SINK] = RD_MAX_TASKS;
	p->ntasks = ntasks;
	for (i = 0; i < ntasks; i++) {
		struct rd_task *t = &p->task[i];
		uint32_t ims = 0;
		int tries = 0;

		if (!in_scope || rnd(&g.rng, scope_tasks) == 0 ||
		    in_scope >= scope_tasks) {
			/* end the scope (or two), begin a new one */
			if (i)
				p->task[i - 1].closes = (uint8_t)depth;
			depth = 1 + rnd(&g.rng, 2);
			t->opens = (uint8_t)depth;
			in_scope = 0;
			g.alive = ext;
			ims = (rnd(&g.rng, 2) ? 1U << RD_IM0 : 0) |
			      (rnd(&g.rng, 3) ? 0 : 1U << (RD_IM0 + 1));
			clustered = rnd(&g.rng, 3) == 0;
			if (clustered)
				t->cluster = RD_CLUSTER_ALLOC;
		}
		in_scope++;
		if (ims) {
			make_task(&g, t, ims, before);
			st->makes++;
			for (k = 0; k < t->nviews; k++)
				st->part_makes += t->v[k].make &&
					(t->v[k].nr != t->v[k].mrows ||
					 t->v[k].nc != t->v[k].stride);
		} else {
			for (tries = 0; tries < 20; tries++)
				if (try_task(&g, i, t, before, false))
					break;
			/* reads alone need no order: always possible */
			if (tries == 20)
				try_task(&g, i, t, before, true);
		}
		st->tasks++;
		st->reads_only += tries == 20;
		for (k = 0; k < t->nviews; k++) {
			st->writes += writes(&t->v[k]);
			st->inouts += t->v[k].kind == PTO_PARAM_INOUT;
			st->order_reads += t->v[k].tensor == RD_SINK;
			st->im_uses += t->v[k].tensor >= RD_IM0 &&
				       !t->v[k].make;
		}
		t->seed = (uint32_t)test_rng_next(&g.rng);
		t->worker = rnd(&g.rng, 2) ? PTO2_WORKER_VECTOR :
			    PTO2_WORKER_CUBE;
		t->blocks = (uint8_t)(1 + (rnd(&g.rng, 4) ? 0 :
					   rnd(&g.rng, RD_MAX_BLOCKS)));
		t->priority = rnd(&g.rng, 3) ? 0 : 1 + rnd(&g.rng, 1000);
		/* a cluster's two AIV may be one (a device of 3 + 5) */
		if (clustered && rnd(&g.rng, 2))
			t->cluster |= RD_CLUSTER_ON;
		t->threads = !(t->cluster & RD_CLUSTER_ON) &&
			     t->worker == PTO2_WORKER_VECTOR &&
			     rnd(&g.rng, 6) == 0 && max_threads >= 2 ? 2 : 1;
		/* a whole cluster: 2 AIV + 1 AIC */
		if (!(t->cluster & RD_CLUSTER_ON) && max_threads >= 3 &&
		    rnd(&g.rng, 12) == 0) {
			t->worker = PTO2_WORKER_MIXED;
			t->threads = 3;
			st->mixed++;
		}
		t->est_ns = rnd(&g.rng, 3) ? 0 : 1000 * (1 + rnd(&g.rng, 200));
		st->clustered += (t->cluster & RD_CLUSTER_ON) != 0;
		st->blocks += t->blocks > 1;
		st->threads += t->threads == 2;
		commit_task(&g, p, i, before);
		g.alive |= ims;
	}
	if (ntasks)
		p->task[ntasks - 1].closes = (uint8_t)depth;
#undef g
}

/* ---- running a program ------------------------------------------------------ */

/*
 * One program on one runtime: its tensors' device addresses and host
 * mappings (the sink's and the external ones'), the reference's arrays,
 * the kernel ids of its AIC and AIV tasks.
 */
struct rd_run {
	const struct rd_prog *p;
	PTO2Runtime *rt;		/* the harness's */
	uint64_t dev[RD_NT];		/* intermediates: 0, the runtime's */
	int64_t *host[RD_SINK + 1];
	int64_t *ref[RD_NT];
	int32_t kernel[PTO2_WORKER_MIXED + 1];
};

/* The orchestration of a program; args[0]: its struct rd_run. */
static inline int rd_orchestrate(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const struct rd_run *run = (const struct rd_run *)(uintptr_t)args[0];
	const struct rd_prog *p = run->p;
	Tensor whole[RD_NT];
	int32_t cid = -1;
	uint32_t i, k;

	(void)argc;
	memset(whole, 0, sizeof(whole));
	for (k = 0; k <= RD_SINK; k++) {
		uint64_t shape[2] = { p->rows[k], p->cols[k] };

		whole[k] = make_tensor_external((void *)(uintptr_t)run->dev[k],
						shape, 2, PTO_DT_INT64);
	}
	for (i = 0; i < p->ntasks; i++) {
		const struct rd_task *t = &p->task[i];
		PTOParam prm[PTO2_MAX_TASK_PARAMS];
		Tensor view[RD_MAX_VIEWS + 1];
		uint64_t shape[2] = { 1, 1 }, off[2] = { 0, i };
		uint64_t a[PTO2_MAX_TASK_PARAMS];
		PTO2TaskAttr attr = { .block_num = t->blocks,
				      .thread_num = t->threads,
				      .est_time_ns = t->est_ns };
		uint32_t n;

		for (k = 0; k < t->opens; k++)
			pto2_rt_scope_begin(rt);
		/* released at the end of this scope; -1 after an error */
		if (t->cluster & RD_CLUSTER_ALLOC)
			cid = pto2_rt_allocate_cluster(rt);
		n = task_args(p, i, run->dev, a);
		view[0] = pto_tensor_view(&whole[RD_SINK], shape, off);
		prm[0] = make_output_param(&view[0]);
		for (k = 0; k < t->nviews; k++) {
			const struct rd_view *v = &t->v[k];

			shape[0] = v->nr;
			shape[1] = v->nc;
			off[0] = v->r0;
			off[1] = v->c0;
			if (v->make) {
				uint64_t ws[2] = { v->mrows, v->stride };

				/* the submit writes its address back */
				whole[v->tensor] = make_tensor(ws, 2,
							       PTO_DT_INT64);
				view[k + 1] = pto_tensor_view(&whole[v->tensor],
							      shape, off);
				prm[k + 1] = make_output_param(&view[k + 1]);
				continue;
			}
			view[k + 1] = pto_tensor_view(&whole[v->tensor], shape,
						      off);
			prm[k + 1] = pto_param_(v->kind, &view[k + 1], 0);
		}
		for (k = 1 + t->nviews; k < n; k++)
			prm[k] = make_scalar_param(a[k]);
		if (t->priority) {
			attr.flags = PTO2_ATTR_PRIORITY;
			attr.priority = t->priority;
		}
		if (t->cluster & RD_CLUSTER_ON) {
			attr.flags |= PTO2_ATTR_CLUSTER;
			attr.cluster_id = cid;
		}
		pto2_rt_submit_task_attr(rt, run->kernel[t->worker],
					 t->worker, prm, (int32_t)n, &attr);
		/* the made intermediates: their buffers, views of all of it */
		for (k = 0; k < t->nviews; k++)
			if (t->v[k].make)
				whole[t->v[k].tensor].addr = view[k + 1].addr;
		for (k = 0; k < t->closes; k++)
			pto2_rt_scope_end(rt);
	}
	return 0;
}

/* The first values of @run's sink and external tensors, into their host
 * mappings. */
static inline void rd_init_buffers(const struct rd_run *run)
{
	uint32_t k;

	for (k = 0; k <= RD_SINK; k++) {
		uint64_t n = (uint64_t)run->p->rows[k] * run->p->cols[k];

		if (k < RD_TENSORS)
			memcpy(run->host[k], run->p->init[k], n * 8);
		else
			memset(run->host[k], 0, n * 8);
	}
}

/*
 * The first element where @run's device tensors differ from the
 * reference, described in @where; 0 if none.
 */
static inline int rd_compare(const struct rd_run *run, char *where,
			     size_t len)
{
	const struct rd_prog *p = run->p;
	uint32_t j, k, i, n;

	/* the sink first: the first task that read other values */
	for (j = 0; j <= RD_SINK; j++) {
		const int64_t *d;

		k = j ? j - 1 : RD_SINK;
		d = run->host[k];
		n = k == RD_SINK ? p->ntasks : p->rows[k] * p->cols[k];

		for (i = 0; i < n; i++)
			if (d[i] != run->ref[k][i]) {
				snprintf(where, len, k == RD_SINK ?
					 "task %u read other values" :
					 "tensor %u element %u differs",
					 k == RD_SINK ? i : k, i);
				return -1;
			}
	}
	return 0;
}

#endif /* RANDOM_DAG_H */
