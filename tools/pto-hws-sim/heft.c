// SPDX-License-Identifier: MIT
/*
 * heft.c - a plain HEFT list schedule, computed offline with full
 * knowledge (real costs, every arrival), for comparison
 *
 * Every kernel of every DAG, by upward rank (real costs; the edge cost is
 * the latency between a kernel's end and its successor's readiness,
 * lat.completion + lat.dep_resolve), highest first. Each block in turn
 * takes the aligned group of SIPs of its shape and type where it finishes
 * earliest, inserted into the first gap that holds it (insertion-based
 * HEFT). A kernel is ready lat.host after its DAG's arrival (roots) or
 * the edge cost after its last predecessor ends. Approximation: the
 * blocks of a cooperative kernel are placed like any others, not forced
 * to start together.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

#include "sim.h"

struct ival {
	uint64_t s, e;
};

struct lane {
	struct ival *v;
	uint32_t n, cap;
};

struct tref {
	uint32_t d, t;
	uint64_t rank;
	uint64_t arrival;
};

static int tref_cmp(const void *a, const void *b)
{
	const struct tref *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* The earliest start >= @t where @lane is free for @len. */
static uint64_t lane_fit(const struct lane *l, uint64_t t, uint64_t len)
{
	uint32_t lo = 0, hi = l->n;

	/* first interval ending after t */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (l->v[mid].e <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->n; lo++) {
		if (l->v[lo].s >= t + len)
			break;
		if (l->v[lo].e > t)
			t = l->v[lo].e;
	}
	return t;
}

/*
 * [@s, @e) busy on @l, joined to an interval it touches: lane_fit()
 * sees only the union, and the blocks of a kernel, placed end to end,
 * stay one interval instead of a run that every later fit walks
 * (quadratic in the blocks).
 */
static void lane_add(struct lane *l, uint64_t s, uint64_t e)
{
	uint32_t i = l->n;

	while (i > 0 && l->v[i - 1].s > s)
		i--;
	if (i > 0 && l->v[i - 1].e >= s) {
		i--;			/* into the one before */
		if (e > l->v[i].e)
			l->v[i].e = e;
	} else {
		if (l->n == l->cap) {
			l->cap = l->cap ? 2 * l->cap : 64;
			l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
		}
		memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(*l->v));
		l->v[i].s = s;
		l->v[i].e = e;
		l->n++;
	}
	/* and the ones after that it reaches */
	while (i + 1 < l->n && l->v[i + 1].s <= l->v[i].e) {
		if (l->v[i + 1].e > l->v[i].e)
			l->v[i].e = l->v[i + 1].e;
		memmove(&l->v[i + 1], &l->v[i + 2],
			(l->n - i - 2) * sizeof(*l->v));
		l->n--;
	}
}

struct heft {
	const struct workload *w;
	const struct hws_layout *l;
	const struct sim_opts *o;
	uint64_t edge;		/* a kernel's end -> its successor ready */
	struct lane *lanes;	/* per SIP: its busy intervals */
	struct tref *order;	/* every kernel that runs, by rank */
	uint32_t n;
	uint64_t **fin;		/* per DAG, per kernel: when it ends */
};

/* Every kernel of the DAGs that run, by upward rank, highest first. */
static void heft_order(struct heft *x)
{
	const struct workload *w = x->w;
	uint32_t d, j, k, n = 0;

	for (d = 0; d < w->ndag; d++)
		n += w->dag[d].ntask;
	x->order = calloc(n ? n : 1, sizeof(*x->order));
	for (d = 0; d < w->ndag; d++) {
		const struct sim_dag *g = &w->dag[d];
		uint64_t *rank;

		x->fin[d] = calloc(g->ntask, sizeof(uint64_t));
		if (!sim_dag_runs(x->o, d))
			continue;
		rank = calloc(g->ntask, sizeof(uint64_t));
		for (j = g->ntask; j-- > 0;) {
			uint64_t m = 0;

			for (k = 0; k < g->task[j].nsucc; k++) {
				uint64_t y = x->edge + rank[g->task[j].succ[k]];

				if (y > m)
					m = y;
			}
			rank[j] = g->task[j].cost + m;
		}
		for (j = 0; j < g->ntask; j++)
			x->order[x->n++] = (struct tref){
				d, j, rank[j], sim_dag_arrival(w, x->o, d) };
		free(rank);
	}
	qsort(x->order, x->n, sizeof(*x->order), tref_cmp);
}

/*
 * The aligned group of SIPs of @t's shape and type where a block of
 * @cost, ready at @ready, ends earliest (the first gap that holds it in
 * every lane); its first SIP, or -1 if none fits. Sets *@start, *@end.
 */
static int heft_place(const struct heft *x, const struct sim_task *t,
		      uint64_t ready, uint64_t cost, uint64_t *start,
		      uint64_t *end)
{
	const struct hws_layout *l = x->l;
	const hws_mask *type = sim_type_mask(l, t->type);
	uint32_t tn = t->thread_num, grp = 1, s, k;
	int best = -1;

	while (grp < tn)
		grp <<= 1;
	*end = UINT64_MAX;
	*start = 0;
	for (s = 0; s + tn <= l->nr_sips; s += grp) {
		uint64_t st = ready, prev;
		bool ok = true;

		if (s / l->cluster_slot != (s + tn - 1) / l->cluster_slot)
			continue;
		for (k = 0; k < tn; k++)
			ok &= hws_mask_test(type, s + k);
		if (!ok)
			continue;
		do {
			prev = st;
			for (k = 0; k < tn; k++) {
				uint64_t y = lane_fit(&x->lanes[s + k], st,
						      cost);

				if (y > st)
					st = y;
			}
		} while (st != prev);
		if (st + cost < *end) {
			*end = st + cost;
			*start = st;
			best = (int)s;
		}
	}
	return best;
}

/* Place every block of kernel @i of the order, after its predecessors. */
static int heft_task(struct heft *x, uint32_t i, struct sim_result *r,
		     char *err, size_t errlen)
{
	const struct tref *ref = &x->order[i];
	const struct sim_dag *g = &x->w->dag[ref->d];
	const struct sim_task *t = &g->task[ref->t];
	uint64_t ready = ref->arrival + x->o->lat.host, done = 0;
	uint32_t tn = t->thread_num, b, k;

	for (k = 0; k < t->npred; k++) {
		uint64_t y = x->fin[ref->d][t->pred[k]] + x->edge;

		if (y > ready)
			ready = y;
	}
	for (b = 0; b < t->block_num; b++) {
		uint64_t cost = sim_block_cost(x->o, ref->d, ref->t, b,
					       t->cost);
		uint64_t start, end;
		int best = heft_place(x, t, ready, cost, &start, &end);

		if (best < 0) {
			snprintf(err, errlen,
				 "dag %s task %u: no SIPs of its type and shape",
				 g->name, t->id);
			return -EINVAL;
		}
		for (k = 0; k < tn; k++)
			lane_add(&x->lanes[best + (int)k], start, end);
		r->busy += cost * tn;
		if (end > done)
			done = end;
	}
	x->fin[ref->d][ref->t] = done;
	if (done + x->o->lat.completion > r->done[ref->d])
		r->done[ref->d] = done + x->o->lat.completion;
	return 0;
}

int heft_run(const struct workload *w, const struct hws_layout *l,
	     const struct sim_opts *o, struct sim_result *r, char *err,
	     size_t errlen)
{
	struct heft x = {
		.w = w, .l = l, .o = o,
		.edge = o->lat.completion + o->lat.dep_resolve,
		.lanes = calloc(HWS_MAX_SIPS, sizeof(*x.lanes)),
		.fin = calloc(w->ndag, sizeof(*x.fin)),
	};
	uint32_t d, i;
	int ret = 0;

	result_init(r, w->ndag);
	ret = sim_time_check(w, o, 0, err, errlen);
	if (!ret)
		heft_order(&x);
	for (i = 0; i < x.n && !ret; i++)
		ret = heft_task(&x, i, r, err, errlen);
	if (!ret)
		result_finish(r, w, o);
	else
		result_free(r);
	for (d = 0; d < w->ndag; d++)
		free(x.fin[d]);
	for (i = 0; i < HWS_MAX_SIPS; i++)
		free(x.lanes[i].v);
	free(x.lanes);
	free(x.fin);
	free(x.order);
	return ret;
}
