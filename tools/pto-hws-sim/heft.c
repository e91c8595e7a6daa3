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

static void lane_add(struct lane *l, uint64_t s, uint64_t e)
{
	uint32_t i;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			fprintf(stderr, "pto-hws-sim: out of memory\n");
			exit(2);
		}
	}
	for (i = l->n; i > 0 && l->v[i - 1].s > s; i--)
		l->v[i] = l->v[i - 1];
	l->v[i].s = s;
	l->v[i].e = e;
	l->n++;
}

int heft_run(const struct workload *w, const struct hws_layout *l,
	     const struct sim_opts *o, struct sim_result *r, char *err,
	     size_t errlen)
{
	uint64_t c = o->lat.completion + o->lat.dep_resolve;
	uint64_t first = UINT64_MAX, last = 0;
	struct lane *lanes = calloc(HWS_MAX_SIPS, sizeof(*lanes));
	struct tref *order;
	uint64_t **rank, **fin;
	uint32_t d, j, k, n = 0, i;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	r->done = calloc(w->ndag, sizeof(*r->done));
	r->resp = calloc(w->ndag, sizeof(*r->resp));
	rank = calloc(w->ndag, sizeof(*rank));
	fin = calloc(w->ndag, sizeof(*fin));
	for (d = 0; d < w->ndag; d++)
		n += w->dag[d].ntask;
	order = calloc(n ? n : 1, sizeof(*order));
	n = 0;
	for (d = 0; d < w->ndag; d++) {
		const struct sim_dag *g = &w->dag[d];
		uint64_t arr = o->only_dag >= 0 ? 0 : g->arrival;

		rank[d] = calloc(g->ntask, sizeof(uint64_t));
		fin[d] = calloc(g->ntask, sizeof(uint64_t));
		if (o->only_dag >= 0 && (uint32_t)o->only_dag != d)
			continue;
		for (j = g->ntask; j-- > 0;) {
			uint64_t m = 0;

			for (k = 0; k < g->task[j].nsucc; k++) {
				uint64_t x = c + rank[d][g->task[j].succ[k]];

				if (x > m)
					m = x;
			}
			rank[d][j] = g->task[j].cost + m;
		}
		for (j = 0; j < g->ntask; j++)
			order[n++] = (struct tref){ d, j, rank[d][j], arr };
		if (arr < first)
			first = arr;
	}
	qsort(order, n, sizeof(*order), tref_cmp);

	for (i = 0; i < n; i++) {
		const struct sim_dag *g = &w->dag[order[i].d];
		const struct sim_task *t = &g->task[order[i].t];
		uint32_t tn = t->thread_num, grp = 1, b, s;
		uint64_t ready = order[i].arrival + o->lat.host, done = 0;
		const hws_mask *type = t->type == SIM_AIC ?
				       &l->type[PTO2_WORKER_CUBE] :
				       t->type == SIM_AIV ?
				       &l->type[PTO2_WORKER_VECTOR] :
				       &l->present;

		while (grp < tn)
			grp <<= 1;
		for (k = 0; k < t->npred; k++) {
			uint64_t x = fin[order[i].d][t->pred[k]] + c;

			if (x > ready)
				ready = x;
		}
		for (b = 0; b < t->block_num; b++) {
			uint64_t cost = sim_block_cost(o, order[i].d,
						       order[i].t, b, t->cost);
			uint64_t best_end = UINT64_MAX, best_start = 0;
			int best = -1;

			for (s = 0; s + tn <= l->nr_sips; s += grp) {
				uint64_t st = ready, prev;
				bool ok = true;

				if (s / l->cluster_slot !=
				    (s + tn - 1) / l->cluster_slot)
					continue;
				for (k = 0; k < tn; k++)
					ok &= hws_mask_test(type, s + k);
				if (!ok)
					continue;
				do {
					prev = st;
					for (k = 0; k < tn; k++) {
						uint64_t x = lane_fit(&lanes[s + k],
								      st, cost);

						if (x > st)
							st = x;
					}
				} while (st != prev);
				if (st + cost < best_end) {
					best_end = st + cost;
					best_start = st;
					best = (int)s;
				}
			}
			if (best < 0) {
				snprintf(err, errlen,
					 "dag %s task %u: no SIPs of its type and shape",
					 g->name, t->id);
				ret = -EINVAL;
				goto out;
			}
			for (k = 0; k < tn; k++)
				lane_add(&lanes[best + (int)k], best_start,
					 best_end);
			r->busy += cost * tn;
			if (best_end > done)
				done = best_end;
		}
		fin[order[i].d][order[i].t] = done;
		if (done + o->lat.completion > r->done[order[i].d])
			r->done[order[i].d] = done + o->lat.completion;
	}
	for (d = 0; d < w->ndag; d++) {
		uint64_t arr = o->only_dag >= 0 ? 0 : w->dag[d].arrival;

		if (o->only_dag >= 0 && (uint32_t)o->only_dag != d)
			continue;
		r->resp[d] = r->done[d] - arr;
		if (r->done[d] > last)
			last = r->done[d];
	}
	r->makespan = last - first;
out:
	for (d = 0; d < w->ndag; d++) {
		free(rank[d]);
		free(fin[d]);
	}
	for (i = 0; i < HWS_MAX_SIPS; i++)
		free(lanes[i].v);
	free(lanes);
	free(rank);
	free(fin);
	free(order);
	return ret;
}
