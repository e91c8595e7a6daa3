// SPDX-License-Identifier: MIT
/*
 * graph_static.c - a static graph: held, ranked, then released
 *
 * The records of a graph begun with PTO_GRAPH_STATIC go to a buffer of
 * this process instead of the stream. At pto_graph_end() the buffer is a
 * whole DAG: its dependencies are derived with the runtime's own TensorMap
 * (pto-private/tensormap.h: the same overlap rules ptod applies), every
 * task gets its upward rank as offline priority and its critical-path
 * flag (pto-private/graph.h), and the graph goes to the stream behind a
 * GRAPH_BEGIN that carries its task count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/graph.h>
#include <pto-private/params.h>
#include <pto-private/tensormap.h>

#include "client.h"

void *static_reserve(pto_client *c, uint32_t len)
{
	if (c->slen + len > c->scap) {
		size_t cap = c->scap ? 2 * c->scap : 1 << 16;
		uint8_t *n;

		while (cap < c->slen + len)
			cap *= 2;
		n = realloc(c->sbuf, cap);
		if (!n) {
			graph_fail(c, -ENOMEM,
				   "out of memory for a static graph of %zu bytes",
				   c->slen + len);
			return NULL;
		}
		c->sbuf = n;
		c->scap = cap;
	}
	return c->sbuf + c->slen;
}

void static_commit(pto_client *c, uint32_t len)
{
	c->slen += len;
}

void static_free(pto_client *c)
{
	free(c->sbuf);
	c->sbuf = NULL;
	c->slen = c->scap = 0;
}

/* The graph as a DAG: SUBMIT records in order and their successors. */
struct sgraph {
	uint32_t n;
	struct pto_rec_submit **task;	/* [n] */
	uint64_t *cost;			/* [n] */
	uint32_t *succ_off;		/* [n + 1] */
	uint32_t *succ;			/* [edges] */
	uint64_t *rank;			/* [n] */
	bool *on_cp;			/* [n] */
	/* building the edges */
	uint32_t *pred;			/* [edges]: producer of each edge */
	uint32_t *cons;			/* [edges]: its consumer */
	uint32_t nedges, capedges;
	uint32_t *mark;			/* [n]: last consumer a producer fed */
	uint32_t cur;			/* the task being looked up */
	/* kernel costs as the records leave them (c->kcost: as before) */
	uint64_t kcost[PTO2_MAX_KERNELS];
};

static void sgraph_free(struct sgraph *g)
{
	free(g->task);
	free(g->cost);
	free(g->succ_off);
	free(g->succ);
	free(g->rank);
	free(g->on_cp);
	free(g->pred);
	free(g->cons);
	free(g->mark);
}

/* TensorMap callback: producer @p feeds the task being looked up. */
static int add_edge(void *ctx, int32_t p)
{
	struct sgraph *g = ctx;

	if (g->mark[p] == g->cur + 1)
		return 0;
	g->mark[p] = g->cur + 1;
	if (g->nedges == g->capedges) {
		uint32_t cap = g->capedges ? 2 * g->capedges : 1024;
		uint32_t *a = realloc(g->pred, sizeof(*a) * cap);
		uint32_t *b = a ? realloc(g->cons, sizeof(*b) * cap) : NULL;

		if (a)
			g->pred = a;
		if (!b)
			return -ENOMEM;
		g->cons = b;
		g->capedges = cap;
	}
	g->pred[g->nedges] = (uint32_t)p;
	g->cons[g->nedges] = g->cur;
	g->nedges++;
	return 0;
}

/*
 * The SUBMIT records of the buffer, in order, and each one's estimated
 * cost: its own, else its kernel's cost as the KCOST records before it
 * in the graph left it (c->kcost holds the costs from before the graph:
 * a later pto2_rt_set_kernel_cost does not re-rank earlier tasks, as
 * ptod applies each KCOST record in order to the tasks after it).
 */
static int collect(pto_client *c, struct sgraph *g)
{
	size_t off;
	uint32_t n = 0;

	for (off = 0; off < c->slen; off += ((struct pto_rec *)(void *)
					     (c->sbuf + off))->len)
		n += ((struct pto_rec *)(void *)(c->sbuf + off))->type ==
		     PTO_REC_SUBMIT;
	g->n = n;
	g->task = calloc(n ? n : 1, sizeof(*g->task));
	g->cost = calloc(n ? n : 1, sizeof(*g->cost));
	g->succ_off = calloc(n + 1, sizeof(*g->succ_off));
	g->rank = calloc(n ? n : 1, sizeof(*g->rank));
	g->on_cp = calloc(n ? n : 1, sizeof(*g->on_cp));
	g->mark = calloc(n ? n : 1, sizeof(*g->mark));
	if (!g->task || !g->cost || !g->succ_off || !g->rank || !g->on_cp ||
	    !g->mark)
		return -ENOMEM;
	memcpy(g->kcost, c->kcost, sizeof(g->kcost));
	n = 0;
	for (off = 0; off < c->slen; off += ((struct pto_rec *)(void *)
					     (c->sbuf + off))->len) {
		struct pto_rec *r = (struct pto_rec *)(void *)(c->sbuf + off);
		struct pto_rec_submit *s = (struct pto_rec_submit *)r;
		struct pto_rec_kcost *k = (struct pto_rec_kcost *)r;

		if (r->type == PTO_REC_KCOST) {
			/*
			 * pto2_rt_set_kernel_cost checked the id; the buffer
			 * is the orchestration's to scribble on, and ptod
			 * refuses a record that names none
			 */
			if (pto_kernel_id_ok(k->kernel_id))
				g->kcost[k->kernel_id] = k->est_ns;
		} else if (r->type == PTO_REC_SUBMIT) {
			g->cost[n] = pto_est_pick(s->attr.est_time_ns,
						  pto_kernel_id_ok(s->kernel_id) ?
						  g->kcost[s->kernel_id] : 0);
			g->task[n++] = s;
		}
	}
	return 0;
}

/* Dependencies with the TensorMap. */
static int derive_edges(struct sgraph *g)
{
	struct pto2_tensormap tm;
	uint32_t i, outs = 16, win;
	int ret, bad;

	for (i = 0; i < g->n; i++)
		outs += (uint32_t)g->task[i]->nparams;
	win = pto_next_pow2_u32(g->n + 1);
	ret = pto2_tensormap_init(&tm, pto_next_pow2_u32(outs), outs, win);
	if (ret)
		return ret;
	for (i = 0; i < g->n && !ret; i++) {
		struct pto_rec_submit *s = g->task[i];
		struct pto2_region reg[PTO2_MAX_TASK_PARAMS];
		int32_t types[PTO2_MAX_TASK_PARAMS];
		int32_t deps[PTO2_MAX_TASK_PARAMS];
		int32_t k;

		bool owner[PTO2_MAX_TASK_PARAMS] = { false };

		for (k = 0; k < s->nparams; k++) {
			types[k] = deps[k] = s->p[k].type;
			if (types[k] != PTO_PARAM_SCALAR)
				pto2_region_from_tensor(&reg[k], &s->p[k].tensor);
			/*
			 * As in the runtime: an intermediate's first OUTPUT
			 * allocates it (its owner); every later use of it
			 * depends on that one.
			 */
			if (types[k] == PTO_PARAM_SCALAR ||
			    !PTO_IS_PH(s->p[k].tensor.addr))
				continue;
			if (pto2_tensormap_owner(&tm, reg[k].addr) >= 0)
				deps[k] |= PTO2_TM_OWNER_EDGE;
			else if (types[k] == PTO_PARAM_OUTPUT)
				owner[k] = true;
		}
		g->cur = i;
		ret = pto2_tensormap_deps(&tm, reg, deps, s->nparams,
					  add_edge, g, &bad);
		for (k = 0; k < s->nparams && !ret; k++)
			if (owner[k])
				ret = pto2_tensormap_insert_owner(&tm, &reg[k],
								  (int32_t)i);
			else if (types[k] == PTO_PARAM_OUTPUT ||
				 types[k] == PTO_PARAM_INOUT)
				ret = pto2_tensormap_insert(&tm, &reg[k],
							    (int32_t)i,
							    types[k] == PTO_PARAM_OUTPUT);
	}
	pto2_tensormap_destroy(&tm);
	return ret;
}

/* Successor lists (CSR) from the edge list. */
static int build_succ(struct sgraph *g)
{
	uint32_t i, *fill;

	g->succ = malloc(sizeof(*g->succ) * (g->nedges ? g->nedges : 1));
	fill = calloc(g->n + 1, sizeof(*fill));
	if (!g->succ || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < g->nedges; i++)
		g->succ_off[g->pred[i] + 1]++;
	for (i = 0; i < g->n; i++)
		g->succ_off[i + 1] += g->succ_off[i];
	for (i = 0; i < g->nedges; i++)
		g->succ[g->succ_off[g->pred[i]] + fill[g->pred[i]]++] =
			g->cons[i];
	free(fill);
	return 0;
}

/* Ranks into the records: offline priority (scaled into 31 bits), cp. */
static void stamp(struct sgraph *g)
{
	uint64_t max = 1;
	uint32_t i, shift = 0;

	for (i = 0; i < g->n; i++)
		if (g->rank[i] > max)
			max = g->rank[i];
	while ((max >> shift) > 0x7fffffffULL)
		shift++;
	for (i = 0; i < g->n; i++) {
		PTO2TaskAttr *a = &g->task[i]->attr;

		if (a->flags & PTO2_ATTR_PRIORITY)
			continue;	/* the orchestration's own */
		a->flags |= PTO2_ATTR_PRIORITY;
		a->priority = (uint32_t)(g->rank[i] >> shift);
		if (g->on_cp[i])
			a->flags |= PTO2_ATTR_ON_CP;
	}
}

/*
 * The held records behind a GRAPH_BEGIN with the task count. Once the
 * GRAPH_BEGIN is in the stream the graph is sent and owed its DONE: a
 * record that cannot follow it (ptod ended the graph, or the connection
 * went) fails the graph, for its pto_graph_wait(), not the release.
 */
static int write_out(pto_client *c, uint32_t n)
{
	size_t off;
	int ret;

	ret = graph_begin_rec(c, PTO_GRAPH_STATIC, n);
	if (ret)
		return ret;
	for (off = 0; off < c->slen;) {
		struct pto_rec *r = (struct pto_rec *)(void *)(c->sbuf + off);
		void *dst = stream_reserve(c, r->len);

		if (!dst)
			break;
		memcpy(dst, r, r->len);
		stream_commit(c, r->len);
		off += r->len;
	}
	return 0;
}

int static_release(pto_client *c)
{
	struct sgraph g;
	int ret;

	if (c->err)
		return c->err;
	memset(&g, 0, sizeof(g));
	ret = collect(c, &g);
	if (!ret)
		ret = derive_edges(&g);
	if (!ret)
		ret = build_succ(&g);
	if (!ret)
		ret = pto_upward_rank(g.n, g.cost, g.succ_off, g.succ, g.rank,
				      g.on_cp);
	if (!ret) {
		stamp(&g);
		ret = write_out(c, g.n);
		if (!ret)	/* the KCOST records went with the graph */
			memcpy(c->kcost, g.kcost, sizeof(c->kcost));
	} else {
		graph_fail(c, ret, "static graph: cannot rank its %u tasks (%s)",
			   g.n, strerror(-ret));
	}
	sgraph_free(&g);
	c->slen = 0;
	return ret;
}
