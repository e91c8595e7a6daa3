// SPDX-License-Identifier: MIT
/*
 * gen.c - generated workloads: random layered DAGs, fork-join DAGs and
 * DAGs shaped like PTO2's paged-attention orchestration
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

uint64_t rng_next(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return lo;
	return lo + rng_next(r) % (hi - lo + 1);
}

double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

void gen_defaults(struct gen_opts *g)
{
	memset(g, 0, sizeof(*g));
	g->tasks_lo = 50;
	g->tasks_hi = 300;
	g->fanin_lo = 1;
	g->fanin_hi = 20;
	g->cost_lo = 500000;		/* 0.5 ms */
	g->cost_hi = 1500000;		/* 1.5 ms */
	g->forkjoin = 8;
	g->pa_chunks = 4;
	g->pa_bn = 3;
	g->pa_cost[0] = 2000;		/* hub */
	g->pa_cost[1] = 20000;		/* QK (AIC) */
	g->pa_cost[2] = 10000;		/* SF (AIV) */
	g->pa_cost[3] = 20000;		/* PV (AIC) */
	g->pa_cost[4] = 5000;		/* UP (AIV) */
}

static struct sim_task *add(struct sim_dag *d, struct rng *r,
			    uint64_t lo, uint64_t hi, uint8_t type)
{
	struct sim_task *t = dag_add_task(d);

	t->cost = rng_range(r, lo, hi);
	t->est = t->cost;
	t->type = type;
	return t;
}

/*
 * N tasks in layers of 1 .. 2 * width - 1 tasks (width ~ sqrt(N) unless
 * given); a task past the first layer has fan-in in [fanin_lo, fanin_hi]
 * (at most the tasks before its layer): one predecessor in the layer just
 * before, the others anywhere before. A predecessor drawn twice is one
 * edge: @mark[p] holds the index + 1 of the task that last took p (0:
 * none yet), one test per draw rather than a search of the task's list.
 */
void gen_random(struct sim_dag *d, const struct gen_opts *g, struct rng *r)
{
	uint32_t n = (uint32_t)rng_range(r, g->tasks_lo, g->tasks_hi);
	uint32_t width = g->width ? g->width :
			 (uint32_t)(sqrt((double)n) + 0.5);
	uint32_t done = 0, prev_start = 0, layer_start = 0, i;
	uint32_t *mark = xrealloc(NULL, (size_t)n * sizeof(*mark));

	memset(mark, 0, (size_t)n * sizeof(*mark));

	if (width < 1)
		width = 1;
	while (done < n) {
		uint32_t size = (uint32_t)rng_range(r, 1, 2 * width - 1);

		if (size > n - done)
			size = n - done;
		for (i = 0; i < size; i++) {
			struct sim_task *t = add(d, r, g->cost_lo, g->cost_hi,
						 SIM_ANY);
			uint32_t fanin, k, me = d->ntask;	/* t's index + 1 */

			if (!layer_start)
				continue;
			fanin = (uint32_t)rng_range(r, g->fanin_lo, g->fanin_hi);
			if (fanin > layer_start)
				fanin = layer_start;
			if (!fanin)
				fanin = 1;
			for (k = 0; k < fanin; k++) {
				uint32_t p = (uint32_t)rng_range(r,
					k ? 0 : prev_start, layer_start - 1);

				if (mark[p] == me)
					continue;
				mark[p] = me;
				task_push_pred(t, p);
			}
		}
		prev_start = layer_start;
		layer_start += size;
		done += size;
	}
	free(mark);
}

/*
 * Fork-join: a source, then stages of @forkjoin parallel tasks each
 * joined by one task, about tasks_lo .. tasks_hi tasks in all.
 */
void gen_forkjoin(struct sim_dag *d, const struct gen_opts *g, struct rng *r)
{
	uint32_t n = (uint32_t)rng_range(r, g->tasks_lo, g->tasks_hi);
	uint32_t w = g->forkjoin ? g->forkjoin : 1, stages, s, i, join;

	stages = n / (w + 1);
	if (!stages)
		stages = 1;
	add(d, r, g->cost_lo, g->cost_hi, SIM_ANY);
	join = 0;
	for (s = 0; s < stages; s++) {
		uint32_t first = d->ntask;
		struct sim_task *j;

		for (i = 0; i < w; i++)
			task_push_pred(add(d, r, g->cost_lo, g->cost_hi,
					   SIM_ANY), join);
		j = add(d, r, g->cost_lo, g->cost_hi, SIM_ANY);
		for (i = 0; i < w; i++)
			task_push_pred(j, first + i);
		join = d->ntask - 1;
	}
}

/*
 * Paged attention as PTO2's orchestration builds it, per chunk of 16
 * sequences: AIV_HUB, then per KV block QK (AIC) -> SF (AIV) -> PV (AIC)
 * -> UP (AIV); UP also reads SF's row max and sum and updates the
 * accumulators of the previous UP (the first UP: the hub's). 1 + 4 * bn
 * tasks per chunk; chunks are independent.
 */
void gen_pa(struct sim_dag *d, const struct gen_opts *g, struct rng *r)
{
	uint32_t c, b;

	for (c = 0; c < g->pa_chunks; c++) {
		uint32_t hub, acc;

		add(d, r, g->pa_cost[0], g->pa_cost[0], SIM_AIV);
		hub = d->ntask - 1;
		acc = hub;
		for (b = 0; b < g->pa_bn; b++) {
			uint32_t qk, sf, pv;

			add(d, r, g->pa_cost[1], g->pa_cost[1], SIM_AIC);
			qk = d->ntask - 1;
			task_add_pred(add(d, r, g->pa_cost[2], g->pa_cost[2],
					  SIM_AIV), qk);
			sf = d->ntask - 1;
			task_add_pred(add(d, r, g->pa_cost[3], g->pa_cost[3],
					  SIM_AIC), sf);
			pv = d->ntask - 1;
			add(d, r, g->pa_cost[4], g->pa_cost[4], SIM_AIV);
			task_add_pred(&d->task[d->ntask - 1], pv);
			task_add_pred(&d->task[d->ntask - 1], sf);
			task_add_pred(&d->task[d->ntask - 1], acc);
			acc = d->ntask - 1;
		}
	}
}
