// SPDX-License-Identifier: MIT
/*
 * engine.c - a workload through libhws in simulated time
 *
 * Nothing runs: a block takes its cost (with optional noise) on its SIPs.
 * Time model, the same for the HWS and the FIFO policy:
 *
 *   DAG submitted at its arrival; its root kernels are ready lat.host
 *     later (host -> AICPU).
 *   A ready kernel enters the RS (or waits, in ready order, while the RS
 *     is full).
 *   A decision launches one block (a cooperative kernel: all of them);
 *     decisions repeat, at the same instant, until none launches. They
 *     happen whenever a SIP completes, a kernel becomes ready, or (early
 *     launch) a SIP becomes pre-idle.
 *   A block starts lat.dispatch after its launch, or when the last of its
 *     pre-idle SIPs finishes (early launch); it ends cost later.
 *   The HWS learns of the end lat.completion later (hws_sip_complete).
 *   A finished kernel's successors are resolved by the AICPU one kernel at
 *     a time, lat.dep_resolve each: a successor is ready when the last of
 *     its predecessors has been resolved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>
#include <pto-private/profile.h>

#include "sim.h"

enum { EV_ARRIVE, EV_READY, EV_END, EV_PRE, EV_TICK };

struct ev {
	uint64_t t;
	uint64_t seq;
	uint32_t kind;
	uint32_t a;		/* DAG or global task */
	hws_mask m;		/* SIPs (EV_END, EV_PRE) */
};

struct heap {
	struct ev *v;
	size_t n, cap;
	uint64_t seq;
};

static bool ev_before(const struct ev *x, const struct ev *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void heap_push(struct heap *h, struct ev e)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 256;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	e.seq = h->seq++;
	i = h->n++;
	while (i && ev_before(&e, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
}

static struct ev heap_pop(struct heap *h)
{
	struct ev top = h->v[0], last = h->v[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && ev_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!ev_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

uint64_t sim_block_cost(const struct sim_opts *o, uint32_t d, uint32_t t,
			uint32_t b, uint64_t cost)
{
	uint64_t x;
	double u;

	if (o->noise <= 0)
		return cost;
	/* a hash of (seed, dag, task, block): the same in every scheduler */
	x = o->seed ^ ((uint64_t)d << 48) ^ ((uint64_t)t << 20) ^ b;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	u = (double)(x >> 11) / 9007199254740992.0;
	return (uint64_t)((double)cost * (1 + o->noise * (2 * u - 1)) + 0.5);
}

bool sim_dag_runs(const struct sim_opts *o, uint32_t d)
{
	return o->only_dag < 0 || (uint32_t)o->only_dag == d;
}

uint64_t sim_dag_arrival(const struct workload *w, const struct sim_opts *o,
			 uint32_t d)
{
	return o->only_dag >= 0 ? 0 : w->dag[d].arrival;
}

int sim_time_check(const struct workload *w, const struct sim_opts *o,
		   uint64_t launch_delay, char *err, size_t errlen)
{
	unsigned __int128 t = 0, per_block;
	uint64_t last = 0;
	uint32_t d, j;

	per_block = (unsigned __int128)o->lat.dispatch + o->lat.completion +
		    launch_delay;
	for (d = 0; d < w->ndag; d++) {
		const struct sim_dag *g = &w->dag[d];
		uint64_t arrival = sim_dag_arrival(w, o, d);

		if (!sim_dag_runs(o, d))
			continue;
		if (arrival > last)
			last = arrival;
		t += o->lat.host;
		for (j = 0; j < g->ntask; j++) {
			const struct sim_task *k = &g->task[j];
			unsigned __int128 c = k->cost > k->est ? k->cost :
								 k->est;

			if (o->noise > 0)
				c *= 2;	/* noise is below 1 */
			t += (c * k->thread_num + per_block) * k->block_num +
			     o->lat.dep_resolve;
		}
	}
	if (t + last <= SIM_MAX_TIME)
		return 0;
	snprintf(err, errlen,
		 "the workload's times add up past 2^62 ns (every block's cost and latencies, one after another, after the last arrival): the simulated clock could wrap");
	return -EOVERFLOW;
}

const hws_mask *sim_type_mask(const struct hws_layout *l, uint8_t type)
{
	return type == SIM_AIC ? &l->type[PTO2_WORKER_CUBE] :
	       type == SIM_AIV ? &l->type[PTO2_WORKER_VECTOR] : &l->present;
}

void result_init(struct sim_result *r, uint32_t ndag)
{
	memset(r, 0, sizeof(*r));
	r->done = calloc(ndag, sizeof(*r->done));
	r->resp = calloc(ndag, sizeof(*r->resp));
}

/* The makespan runs from the first arrival of a DAG that ran. */
void result_finish(struct sim_result *r, const struct workload *w,
		   const struct sim_opts *o)
{
	uint64_t first = UINT64_MAX, last = 0;
	uint32_t d;

	for (d = 0; d < w->ndag; d++) {
		uint64_t arr = sim_dag_arrival(w, o, d);

		if (!sim_dag_runs(o, d))
			continue;
		if (arr < first)
			first = arr;
		r->resp[d] = r->done[d] - arr;
		if (r->done[d] > last)
			last = r->done[d];
	}
	r->makespan = last - first;
}

void result_free(struct sim_result *r)
{
	free(r->done);
	free(r->resp);
	memset(r, 0, sizeof(*r));
}

struct run {
	const struct workload *w;
	const struct sim_opts *o;
	const struct hws_layout *l;
	struct hws h;
	struct heap q;
	uint32_t *base;		/* first global task of each DAG */
	uint32_t ntasks;
	uint32_t *dag_of;	/* global task -> DAG */
	uint32_t *preds_left;
	uint16_t *blocks_done;
	uint32_t *tasks_done;	/* per DAG */
	int32_t *slot;		/* per DAG: HWS slot, -1 none */
	uint32_t slots_used;	/* bitmask of HWS DAG slots */
	uint32_t *dag_wait;	/* DAGs waiting for a slot (FIFO) */
	uint32_t nwait, wait_head;
	uint32_t *pending;	/* ready tasks waiting for RS room (FIFO) */
	uint32_t npend, pend_head;
	uint64_t free_at[HWS_MAX_SIPS];
	uint64_t resolver;	/* AICPU free for dependency resolution */
	uint64_t tick;		/* next predicted pre-idle decision */
	struct sim_result *r;
	bool early_predict;
	uint32_t dags_left;
};

static const struct sim_task *task_of(const struct run *s, uint32_t g)
{
	uint32_t d = s->dag_of[g];

	return &s->w->dag[d].task[g - s->base[d]];
}

static int add_kernel(struct run *s, uint32_t g, uint64_t now, char *err,
		      size_t errlen)
{
	const struct sim_task *t = task_of(s, g);
	uint32_t d = s->dag_of[g];
	struct hws_kernel k;
	int ret;

	memset(&k, 0, sizeof(k));
	k.cookie = g + 1;
	k.dag = (uint32_t)s->slot[d];
	k.ctx = s->w->dag[d].ctx;
	k.block_num = t->block_num;
	k.thread_num = t->thread_num;
	k.coop = t->coop;
	k.on_cp = t->on_cp;
	k.offline_priority = t->offline;
	k.est_time = t->est;
	k.affinity = *sim_type_mask(s->l, t->type);
	ret = hws_add(&s->h, &k, now);
	if (ret && ret != -ENOSPC)
		snprintf(err, errlen,
			 "dag %s task %u (shape %ux%u%s, type %u) cannot be placed on this layout (%d)",
			 s->w->dag[d].name, t->id, t->block_num, t->thread_num,
			 t->coop ? "c" : "", t->type, ret);
	return ret;
}

static int make_ready(struct run *s, uint32_t g, uint64_t now, char *err,
		      size_t errlen)
{
	int ret;

	if (s->npend == s->pend_head) {
		ret = add_kernel(s, g, now, err, errlen);
		if (ret != -ENOSPC)
			return ret;
	}
	s->pending[s->npend++] = g;
	return 0;
}

static int refill(struct run *s, uint64_t now, char *err, size_t errlen)
{
	while (s->pend_head < s->npend && hws_rs_free(&s->h)) {
		int ret = add_kernel(s, s->pending[s->pend_head], now, err,
				     errlen);

		if (ret)
			return ret;
		s->pend_head++;
	}
	return 0;
}

static void start_dag(struct run *s, uint32_t d, uint64_t now)
{
	const struct sim_dag *dag = &s->w->dag[d];
	uint32_t slot = (uint32_t)__builtin_ctz(~s->slots_used), j;

	s->slots_used |= 1U << slot;
	s->slot[d] = (int32_t)slot;
	hws_dag_open(&s->h, slot, dag->ntask, dag->dynamic);
	for (j = 0; j < dag->ntask; j++) {
		if (dag->task[j].npred)
			continue;
		heap_push(&s->q, (struct ev){ .t = now + s->o->lat.host,
					      .kind = EV_READY,
					      .a = s->base[d] + j });
	}
}

static void launched(struct run *s, const struct hws_launch *o, uint64_t now)
{
	uint32_t g = (uint32_t)(o->cookie - 1), d = s->dag_of[g];
	const struct sim_task *t = task_of(s, g);
	uint32_t tn = o->thread_num, b, i, sip = 0;
	hws_mask left = o->sips;

	for (b = 0; b < o->nr_blocks; b++) {
		hws_mask m = { { 0 } };
		uint64_t start = now + s->o->lat.dispatch, end, cost;
		bool waits = false;	/* in a shadow slot, behind a block */

		for (i = 0; i < tn; i++) {
			while (!hws_mask_test(&left, sip))
				sip++;
			hws_mask_clear(&left, sip);
			hws_mask_set(&m, sip);
			waits |= hws_mask_test(&s->h.shadow, sip);
			if (s->free_at[sip] > start)
				start = s->free_at[sip];
		}
		cost = sim_block_cost(s->o, d, g - s->base[d],
				      o->block_idx + b, t->cost);
		end = start + cost;
		for (i = 0; i < HWS_MAX_SIPS; i++)
			if (hws_mask_test(&m, i))
				s->free_at[i] = end;
		s->r->busy += cost * tn;
		heap_push(&s->q, (struct ev){ .t = end + s->o->lat.completion,
					      .kind = EV_END, .a = g, .m = m });
		if (s->o->report_pre && s->h.cfg.early_launch &&
		    s->h.cfg.early_mode == HWS_EARLY_SIP_REPORT) {
			uint64_t at = end > s->h.cfg.pre_idle_offset ?
				      end - s->h.cfg.pre_idle_offset : 0;
			/*
			 * A SIP reports on the block it runs, so after its
			 * complete report for the block before, which the
			 * HWS takes at start + completion (pushed earlier:
			 * first at the same time).
			 */
			uint64_t first = waits ? start + s->o->lat.completion :
					 start;

			heap_push(&s->q, (struct ev){ .t = at > first ? at : first,
						      .kind = EV_PRE, .a = g,
						      .m = m });
		}
	}
}

/* Predict mode: a decision when the next busy SIP turns pre-idle. */
static void plan_tick(struct run *s, uint64_t now)
{
	uint64_t next = UINT64_MAX, off = s->h.cfg.pre_idle_offset;
	hws_mask idle, pre;
	uint32_t i;

	hws_status(&s->h, now, &idle, &pre, NULL);
	for (i = 0; i < s->l->nr_sips; i++) {
		uint64_t rem;

		if (!hws_mask_test(&s->l->present, i) ||
		    hws_mask_test(&idle, i) || hws_mask_test(&pre, i) ||
		    hws_mask_test(&s->h.shadow, i))
			continue;
		rem = hws_sip_remaining(&s->h, i, now);
		if (rem > off && now + rem - off < next)
			next = now + rem - off;
	}
	if (next != UINT64_MAX && (s->tick <= now || next < s->tick)) {
		s->tick = next;
		heap_push(&s->q, (struct ev){ .t = next, .kind = EV_TICK });
	}
}

static int handle(struct run *s, const struct ev *e, char *err,
		  size_t errlen)
{
	uint32_t g = e->a, d, j;
	const struct sim_task *t;
	int ret;

	switch (e->kind) {
	case EV_ARRIVE:
		if (s->slots_used == UINT32_MAX)
			s->dag_wait[s->nwait++] = e->a;
		else
			start_dag(s, e->a, e->t);
		return 0;
	case EV_READY:
		return make_ready(s, g, e->t, err, errlen);
	case EV_PRE:
		if (hws_sip_pre_complete(&s->h, &e->m))
			return 0;	/* already completed: nothing to do */
		return 0;
	case EV_TICK:
		return 0;
	case EV_END:
		break;
	default:
		return -EINVAL;
	}
	ret = hws_sip_complete(&s->h, &e->m, e->t);
	if (ret) {
		snprintf(err, errlen, "hws_sip_complete refused a block's SIPs");
		return ret;
	}
	t = task_of(s, g);
	d = s->dag_of[g];
	if (++s->blocks_done[g] < t->block_num)
		return 0;
	/* the kernel is done: the AICPU resolves its successors */
	s->resolver = (s->resolver > e->t ? s->resolver : e->t) +
		      s->o->lat.dep_resolve;
	for (j = 0; j < t->nsucc; j++) {
		uint32_t sg = s->base[d] + t->succ[j];

		if (!--s->preds_left[sg])
			heap_push(&s->q, (struct ev){ .t = s->resolver,
						      .kind = EV_READY,
						      .a = sg });
	}
	if (++s->tasks_done[d] == s->w->dag[d].ntask) {
		s->r->done[d] = e->t;
		hws_dag_close(&s->h, (uint32_t)s->slot[d]);
		s->slots_used &= ~(1U << s->slot[d]);
		s->slot[d] = -1;
		s->dags_left--;
		if (s->wait_head < s->nwait)
			start_dag(s, s->dag_wait[s->wait_head++], e->t);
	}
	return 0;
}

void sim_opts_default(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->lat.dispatch = PTO_LAT_DISPATCH_NS;
	o->lat.completion = PTO_LAT_COMPLETION_NS;
	o->lat.dep_resolve = PTO_LAT_DEP_RESOLVE_NS;
	o->lat.host = PTO_LAT_HOST_TO_AICPU_NS;
	o->report_pre = true;
	o->only_dag = -1;
	o->seed = 1;
}

/*
 * Index the tasks of every DAG (global task numbers, predecessor counts)
 * and queue the arrivals of the DAGs that run.
 */
static void run_setup(struct run *s)
{
	const struct workload *w = s->w;
	const struct sim_opts *o = s->o;
	uint32_t d, j, n = 0;

	s->base = calloc(w->ndag + 1, sizeof(*s->base));
	for (d = 0; d < w->ndag; d++) {
		s->base[d] = n;
		n += w->dag[d].ntask;
	}
	s->base[w->ndag] = n;
	s->ntasks = n;
	s->dag_of = calloc(n, sizeof(*s->dag_of));
	s->preds_left = calloc(n, sizeof(*s->preds_left));
	s->blocks_done = calloc(n, sizeof(*s->blocks_done));
	s->pending = calloc(n, sizeof(*s->pending));
	s->tasks_done = calloc(w->ndag, sizeof(*s->tasks_done));
	s->slot = calloc(w->ndag, sizeof(*s->slot));
	s->dag_wait = calloc(w->ndag, sizeof(*s->dag_wait));
	for (d = 0; d < w->ndag; d++) {
		s->slot[d] = -1;
		for (j = 0; j < w->dag[d].ntask; j++) {
			s->dag_of[s->base[d] + j] = d;
			s->preds_left[s->base[d] + j] = w->dag[d].task[j].npred;
		}
		if (!sim_dag_runs(o, d))
			continue;
		s->dags_left++;
		heap_push(&s->q, (struct ev){ .t = sim_dag_arrival(w, o, d),
					      .kind = EV_ARRIVE, .a = d });
	}
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		h = (h ^ (v & 0xff)) * 0x100000001b3ULL;
	return h;
}

/* Fold launch @lo at @now into the run's digest, field by field. */
static void digest_launch(struct run *s, const struct hws_launch *lo,
			  uint64_t now)
{
	uint64_t h = s->r->digest;
	int i;

	h = fnv(h, now);
	h = fnv(h, lo->cookie);
	h = fnv(h, lo->block_idx | (uint64_t)lo->nr_blocks << 16 |
		   (uint64_t)lo->thread_num << 32 | (uint64_t)lo->pool << 48 |
		   (uint64_t)lo->flags << 56);
	for (i = 0; i < HWS_MASK_WORDS; i++) {
		h = fnv(h, lo->sips.w[i]);
		h = fnv(h, lo->early.w[i]);
	}
	s->r->digest = h;
}

/* One decision; with o->check, the invariant checker after it. */
static int decide(struct run *s, uint64_t now, struct hws_launch *lo,
		  char *err, size_t errlen)
{
	int ret = hws_decide(&s->h, now, lo);

	if (ret == 1)
		digest_launch(s, lo, now);
	if (s->o->check && hws_check(&s->h, err, errlen))
		return -EUCLEAN;
	return ret;
}

/* Events in time order; after each instant's events, the decisions. */
static int run_events(struct run *s, char *err, size_t errlen)
{
	int ret;

	while (s->q.n) {
		uint64_t now = s->q.v[0].t;
		struct hws_launch lo;

		while (s->q.n && s->q.v[0].t == now) {
			struct ev e = heap_pop(&s->q);

			ret = handle(s, &e, err, errlen);
			if (ret)
				return ret;
		}
		for (;;) {
			ret = refill(s, now, err, errlen);
			if (ret)
				return ret;
			ret = decide(s, now, &lo, err, errlen);
			if (ret < 0)
				return ret;
			if (ret != 1)
				break;
			launched(s, &lo, now);
		}
		if (s->early_predict)
			plan_tick(s, now);
	}
	return 0;
}

static void run_free(struct run *s)
{
	free(s->q.v);
	free(s->base);
	free(s->dag_of);
	free(s->preds_left);
	free(s->blocks_done);
	free(s->pending);
	free(s->tasks_done);
	free(s->slot);
	free(s->dag_wait);
	free(s);
}

int sim_run(const struct workload *w, const struct hws_layout *l,
	    const struct hws_config *c, const struct sim_opts *o,
	    struct sim_result *r, char *err, size_t errlen)
{
	struct run *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	result_init(r, w->ndag);
	ret = sim_time_check(w, o, c->launch_delay, err, errlen);
	if (ret)
		goto out;
	r->digest = 0xcbf29ce484222325ULL;
	s->w = w;
	s->o = o;
	s->l = l;
	s->r = r;
	ret = hws_init(&s->h, l, c, err, errlen);
	if (ret)
		goto out;
	run_setup(s);
	s->early_predict = c->early_launch &&
			   c->early_mode == HWS_EARLY_PREDICT &&
			   c->policy == HWS_POLICY_HWS;
	ret = run_events(s, err, errlen);
	if (ret)
		goto out;
	if (s->dags_left) {
		snprintf(err, errlen,
			 "%u DAG(s) never finished (a kernel that fits no SIP it may use?)",
			 s->dags_left);
		ret = -EDEADLK;
		goto out;
	}
	result_finish(r, w, o);
	hws_get_stats(&s->h, &r->st);
out:
	if (ret)
		result_free(r);
	run_free(s);
	return ret;
}
