// SPDX-License-Identifier: MIT
/*
 * shapes.c - the graph shapes of pto-bench-peers, each defined once for
 * every system (see peers.h)
 *
 *   independent  10,000 tasks, each OUT on a slot of its own   us/task
 *   chain        2,000 tasks, each INOUT on one slot           us/hop
 *   fan          a source (OUT s), 72 middles (IN s, OUT own slot), a
 *                sink (IN the 72 slots as one range, OUT r); 50 graphs
 *                per round, each run to completion            us/graph
 *   random       2,000 tasks in layers of 10-40; a task after the first
 *                layer reads the slots of 1-3 distinct tasks of the 3
 *                layers before its own and writes its own      us/task
 *   pa           paged attention's shape: 16 chunks (batch 256 in
 *                chunks of 16 sequences) x 32 KV blocks; per chunk a hub
 *                (OUT acc), then per block QK (AIC: IN q, IN kcache,
 *                OUT s) -> SF (IN s, OUT p, OUT ml) -> PV (AIC: IN p,
 *                IN vcache, OUT o) -> UP (IN ml, IN o, INOUT acc; the
 *                last also OUT out): the UPs of a chunk form a chain; a
 *                scope per chunk; 2,064 tasks                  us/task
 *   latency      200 tasks sleeping 1 ms, in layers of 2-4; a task after
 *                the first layer reads the slots of 1-2 tasks of the layer
 *                before: per task, its start minus its last predecessor's
 *                end, median and p99 over the tasks            us
 *
 * Random choices come from one generator (splitmix64) with a fixed seed
 * per shape, so every system gets the same graph. Tasks are AIV tasks
 * for our device except QK and PV (AIC). The other shapes are submitted in
 * scopes of SCOPE_TASKS, as bench/e2e does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

#define SCOPE_TASKS	1024

#define N_INDEP		10000
#define N_CHAIN		2000
#define FAN		72
#define FAN_REPS	50
#define N_RANDOM	2000
#define RANDOM_WMIN	10
#define RANDOM_WMAX	40
#define RANDOM_BACK	3	/* layers a predecessor may come from */
#define PA_CHUNKS	16
#define PA_BLOCKS	32
#define N_LATENCY	200
#define LATENCY_WMIN	2
#define LATENCY_WMAX	4

/* ---- Random numbers (splitmix64, state on the caller's stack) ------------ */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static uint32_t rnd_in(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd(s) % (hi - lo + 1));
}

/* ---- The builder --------------------------------------------------------- */

struct builder {
	struct peers_graph *g;
	uint32_t cap_task, cap_acc;
	bool stamp;
	int err;
};

/*
 * Room in array @p (capacity *@cap elements of @size) for @need elements:
 * the array (moved, perhaps), or NULL with @p unchanged.
 */
static void *grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, (size_t)n * size);
	if (q)
		*cap = n;
	return q;
}

/* @n fresh slots: the first one's index. */
static uint32_t b_slots(struct builder *b, uint32_t n)
{
	uint32_t s = b->g->nr_slots;

	b->g->nr_slots += n;
	return s;
}

static void b_acc(struct builder *b, uint32_t slot, uint32_t count,
		  enum peers_mode mode)
{
	struct peers_graph *g = b->g;
	struct peers_access *acc;

	if (b->err || !g->nr_tasks)
		return;
	acc = grow(g->acc, &b->cap_acc, g->nr_acc + 1, sizeof(*acc));
	if (!acc) {
		b->err = -ENOMEM;
		return;
	}
	g->acc = acc;
	g->acc[g->nr_acc++] = (struct peers_access){ slot, count, mode };
	g->task[g->nr_tasks - 1].nacc++;
}

/*
 * A new task (@scope: a new scope begins with it). A stamped task (the
 * check round, or a sleeping task) gets an OUT slot of its own as its
 * first access: its stamp slot, returned (0 otherwise).
 */
static uint32_t b_task(struct builder *b, enum peers_kernel kernel,
		       enum peers_core core, bool scope)
{
	struct peers_graph *g = b->g;
	struct peers_task *t;
	uint32_t stamp = 0;

	if (b->err)
		return 0;
	t = grow(g->task, &b->cap_task, g->nr_tasks + 1, sizeof(*t));
	if (!t) {
		b->err = -ENOMEM;
		return 0;
	}
	g->task = t;
	t = &g->task[g->nr_tasks++];
	*t = (struct peers_task){ .acc = g->nr_acc, .kernel = (uint8_t)kernel,
				  .core = (uint8_t)core };
	if (scope)
		t->flags |= PT_SCOPE;
	if (b->stamp || kernel != PK_NOOP) {
		if (kernel == PK_NOOP)
			t->kernel = PK_STAMP;
		t->flags |= PT_STAMPED;
		stamp = b_slots(b, 1);
		b_acc(b, stamp, 1, PM_OUT);
	}
	return stamp;
}

/* ---- Dependencies from the accesses -------------------------------------- */

/*
 * Per slot: its last writer and the tasks that read it since. A task
 * depends on the last writer of every slot it accesses and, if it writes,
 * on the readers since (write after read).
 */
struct deps {
	int32_t *writer;	/* per slot, -1: none */
	int32_t *readers;	/* per slot: head of a list in rd_task/rd_next */
	uint32_t *rd_task;
	int32_t *rd_next;
	uint32_t nr_rd, cap_rd_task, cap_rd_next;
	uint32_t *seen;		/* per task: the task + 1 that last added it */
};

static int add_pred(struct peers_graph *g, uint32_t *cap, struct deps *d,
		    uint32_t t, int32_t p)
{
	uint32_t *pred;

	if (p < 0 || d->seen[p] == t + 1)
		return 0;
	d->seen[p] = t + 1;
	pred = grow(g->pred, cap, g->nr_pred + 1, sizeof(*pred));
	if (!pred)
		return -ENOMEM;
	g->pred = pred;
	g->pred[g->nr_pred++] = (uint32_t)p;
	g->task[t].npred++;
	return 0;
}

static int add_reader(struct deps *d, uint32_t slot, uint32_t t)
{
	uint32_t *task = grow(d->rd_task, &d->cap_rd_task, d->nr_rd + 1,
			      sizeof(*task));
	int32_t *next;

	if (!task)
		return -ENOMEM;
	d->rd_task = task;
	next = grow(d->rd_next, &d->cap_rd_next, d->nr_rd + 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	d->rd_next = next;
	d->rd_task[d->nr_rd] = t;
	d->rd_next[d->nr_rd] = d->readers[slot];
	d->readers[slot] = (int32_t)d->nr_rd++;
	return 0;
}

/* One slot @s accessed by task @t in @mode. */
static int dep_slot(struct peers_graph *g, uint32_t *cap, struct deps *d,
		    uint32_t t, uint32_t s, uint32_t mode)
{
	int32_t r;
	int ret;

	ret = add_pred(g, cap, d, t, d->writer[s]);
	if (ret)
		return ret;
	if (mode == PM_IN)
		return add_reader(d, s, t);
	for (r = d->readers[s]; r >= 0; r = d->rd_next[r]) {
		ret = add_pred(g, cap, d, t, (int32_t)d->rd_task[r]);
		if (ret)
			return ret;
	}
	d->readers[s] = -1;
	d->writer[s] = (int32_t)t;
	return 0;
}

static int derive_preds(struct peers_graph *g)
{
	struct deps d = { 0 };
	uint32_t cap = 0, t, a, k, n;
	int ret = -ENOMEM;

	d.writer = malloc((size_t)g->nr_slots * sizeof(*d.writer));
	d.readers = malloc((size_t)g->nr_slots * sizeof(*d.readers));
	d.seen = calloc(g->nr_tasks, sizeof(*d.seen));
	if (!d.writer || !d.readers || !d.seen)
		goto out;
	memset(d.writer, 0xff, (size_t)g->nr_slots * sizeof(*d.writer));
	memset(d.readers, 0xff, (size_t)g->nr_slots * sizeof(*d.readers));
	ret = 0;
	for (t = 0; t < g->nr_tasks && !ret; t++) {
		struct peers_task *tk = &g->task[t];

		tk->pred = g->nr_pred;
		n = 0;
		for (a = tk->acc; a < tk->acc + tk->nacc && !ret; a++) {
			n += g->acc[a].count;
			for (k = 0; k < g->acc[a].count && !ret; k++)
				ret = dep_slot(g, &cap, &d, t, g->acc[a].slot + k,
					       g->acc[a].mode);
		}
		if (n > g->max_slots_per_task)
			g->max_slots_per_task = n;
	}
out:
	free(d.writer);
	free(d.readers);
	free(d.rd_task);
	free(d.rd_next);
	free(d.seen);
	return ret;
}

/* ---- The shapes ---------------------------------------------------------- */

static void build_independent(struct builder *b)
{
	uint32_t i, s = b_slots(b, N_INDEP);

	for (i = 0; i < N_INDEP; i++) {
		b_task(b, PK_NOOP, PC_AIV, i % SCOPE_TASKS == 0);
		b_acc(b, s + i, 1, PM_OUT);
	}
	b->g->per = N_INDEP;
}

static void build_chain(struct builder *b)
{
	uint32_t i, s = b_slots(b, 1);

	for (i = 0; i < N_CHAIN; i++) {
		b_task(b, PK_NOOP, PC_AIV, i % SCOPE_TASKS == 0);
		b_acc(b, s, 1, PM_INOUT);
	}
	b->g->per = N_CHAIN;
}

static void build_fan(struct builder *b)
{
	uint32_t i, src = b_slots(b, 1), mid = b_slots(b, FAN);
	uint32_t res = b_slots(b, 1);

	b_task(b, PK_NOOP, PC_AIV, true);
	b_acc(b, src, 1, PM_OUT);
	for (i = 0; i < FAN; i++) {
		b_task(b, PK_NOOP, PC_AIV, false);
		b_acc(b, src, 1, PM_IN);
		b_acc(b, mid + i, 1, PM_OUT);
	}
	b_task(b, PK_NOOP, PC_AIV, false);
	b_acc(b, mid, FAN, PM_IN);
	b_acc(b, res, 1, PM_OUT);
	b->g->reps = FAN_REPS;
	b->g->per = FAN_REPS;
}

/*
 * Layers of @wmin .. @wmax tasks (the last one shorter) up to @n tasks; a
 * task after the first layer reads the output slots of @pmin .. @pmax
 * distinct tasks of the @back layers before its own and writes its own.
 * Returns the widest layer.
 */
static uint32_t build_layers(struct builder *b, uint64_t seed, uint32_t n,
			     uint32_t wmin, uint32_t wmax, uint32_t back,
			     uint32_t pmin, uint32_t pmax, enum peers_kernel k)
{
	uint32_t *out = malloc((size_t)n * sizeof(*out));
	uint32_t *lstart = malloc((size_t)(n + 1) * sizeof(*lstart));
	uint32_t t = 0, l = 0, widest = 0, i, j, w;
	uint64_t rs = seed;

	if (!out || !lstart) {
		b->err = -ENOMEM;
		goto out;
	}
	while (t < n && !b->err) {
		w = rnd_in(&rs, wmin, wmax);
		if (w > n - t)
			w = n - t;
		widest = w > widest ? w : widest;
		lstart[l] = t;
		for (i = 0; i < w; i++, t++) {
			/* a candidate range: the @back layers before this */
			uint32_t lo = lstart[l >= back ? l - back : 0];
			uint32_t hi = lstart[l], np, picked[4];

			out[t] = b_task(b, k, PC_AIV, t % SCOPE_TASKS == 0);
			if (k == PK_NOOP) {
				out[t] = b_slots(b, 1);
				b_acc(b, out[t], 1, PM_OUT);
			}
			if (l == 0)
				continue;
			np = rnd_in(&rs, pmin, pmax);
			if (np > hi - lo)
				np = hi - lo;
			for (j = 0; j < np; j++) {
				uint32_t p, x;

				do {	/* distinct predecessors */
					p = rnd_in(&rs, lo, hi - 1);
					for (x = 0; x < j && picked[x] != p; x++)
						;
				} while (x < j);
				picked[j] = p;
				b_acc(b, out[p], 1, PM_IN);
			}
		}
		l++;
	}
out:
	free(out);
	free(lstart);
	return widest;
}

static void build_random(struct builder *b)
{
	build_layers(b, 0x70a2d5eedull, N_RANDOM, RANDOM_WMIN, RANDOM_WMAX,
		     RANDOM_BACK, 1, 3, PK_NOOP);
	b->g->per = N_RANDOM;
}

static void build_pa(struct builder *b)
{
	uint32_t q = b_slots(b, PA_CHUNKS), out = b_slots(b, PA_CHUNKS);
	uint32_t acc = b_slots(b, PA_CHUNKS);
	uint32_t kc = b_slots(b, 1), vc = b_slots(b, 1), c, bn;

	for (c = 0; c < PA_CHUNKS; c++) {
		b_task(b, PK_NOOP, PC_AIV, true);		/* hub */
		b_acc(b, acc + c, 1, PM_OUT);
		for (bn = 0; bn < PA_BLOCKS; bn++) {
			uint32_t s = b_slots(b, 1), p = b_slots(b, 1);
			uint32_t ml = b_slots(b, 1), o = b_slots(b, 1);

			b_task(b, PK_NOOP, PC_AIC, false);	/* QK */
			b_acc(b, q + c, 1, PM_IN);
			b_acc(b, kc, 1, PM_IN);
			b_acc(b, s, 1, PM_OUT);
			b_task(b, PK_NOOP, PC_AIV, false);	/* SF */
			b_acc(b, s, 1, PM_IN);
			b_acc(b, p, 1, PM_OUT);
			b_acc(b, ml, 1, PM_OUT);
			b_task(b, PK_NOOP, PC_AIC, false);	/* PV */
			b_acc(b, p, 1, PM_IN);
			b_acc(b, vc, 1, PM_IN);
			b_acc(b, o, 1, PM_OUT);
			b_task(b, PK_NOOP, PC_AIV, false);	/* UP */
			b_acc(b, ml, 1, PM_IN);
			b_acc(b, o, 1, PM_IN);
			b_acc(b, acc + c, 1, PM_INOUT);
			if (bn + 1 == PA_BLOCKS)
				b_acc(b, out + c, 1, PM_OUT);
		}
	}
	b->g->per = b->g->nr_tasks;
}

static void build_latency(struct builder *b)
{
	b->g->workers = build_layers(b, 0x1a7e5eedull, N_LATENCY, LATENCY_WMIN,
				     LATENCY_WMAX, 1, 1, 2, PK_SLEEP);
	b->g->latency = true;
	b->g->per = 1;
}

static const struct {
	const char *name, *unit;
	void (*build)(struct builder *b);
} shapes[PS_NR] = {
	[PS_INDEPENDENT] = { "independent", "us/task", build_independent },
	[PS_CHAIN] = { "chain", "us/hop", build_chain },
	[PS_FAN] = { "fan", "us/graph", build_fan },
	[PS_RANDOM] = { "random", "us/task", build_random },
	[PS_PA] = { "pa", "us/task", build_pa },
	[PS_LATENCY] = { "latency", "us", build_latency },
};

int peers_build(enum peers_shape s, bool stamp, struct peers_graph *g)
{
	struct builder b = { .g = g, .stamp = stamp };
	int ret;

	*g = (struct peers_graph){ .name = shapes[s].name,
				   .unit = shapes[s].unit, .reps = 1 };
	shapes[s].build(&b);
	ret = b.err ? b.err : derive_preds(g);
	if (ret)
		peers_graph_free(g);
	return ret;
}

void peers_graph_free(struct peers_graph *g)
{
	free(g->task);
	free(g->acc);
	free(g->pred);
	*g = (struct peers_graph){ 0 };
}

void peers_describe_shapes(void)
{
	printf("# independent: %d independent no-op tasks (OUT own slot), us/task\n"
	       "# chain: %d no-op tasks INOUT on one slot, us/hop\n"
	       "# fan: 1 -> %d -> 1 (the sink reads the %d slots as one range), "
	       "%d graphs per round each run to completion, us/graph\n"
	       "# random: %d tasks in layers of %d-%d, 1-3 predecessors from "
	       "the %d layers before, fixed seed, us/task\n"
	       "# pa: paged attention's shape, %d chunks x %d blocks (hub, "
	       "QK -> SF -> PV -> UP, UP chain), %d tasks, us/task\n"
	       "# latency: %d tasks sleeping 1 ms in layers of %d-%d, 1-2 "
	       "predecessors in the layer before; start - last predecessor's "
	       "end, us\n",
	       N_INDEP, N_CHAIN, FAN, FAN, FAN_REPS, N_RANDOM, RANDOM_WMIN,
	       RANDOM_WMAX, RANDOM_BACK, PA_CHUNKS, PA_BLOCKS,
	       PA_CHUNKS * (1 + 4 * PA_BLOCKS), N_LATENCY, LATENCY_WMIN,
	       LATENCY_WMAX);
}
