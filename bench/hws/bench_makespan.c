// SPDX-License-Identifier: MIT
/*
 * bench_makespan.c - live makespans of static DAGs on the sim device
 * against max(critical path, work / cores), HWS and PTO2 policies side by
 * side, with the simulator's figure for the same DAGs
 *
 *   pto-bench-makespan [-n DAGS] [-c CORES,...] [-s SEED] [-t LO-HI]
 *                      [-f LO-HI] [-k LO-HI] [FILE...]
 *
 * The DAGs: -n random layered DAGs from pto-hws-sim's generator (its
 * experiment a: 50-300 tasks, 1-20 predecessors, costs 0.5-1.5 ms), or
 * the DAGs of pto-hws-sim DAG files. Each DAG runs alone, for each core
 * count (default 2, 4 and 8), on a sim device of that many AIC cores, in
 * the runtime with its own engine (invariant checker on): as a static
 * graph with cost hints, every task carrying its cost as estimated time
 * and its upward rank as offline priority with the on_cp flags -- what
 * libpto computes for a PTO_GRAPH_STATIC graph -- under the HWS policy,
 * then under the PTO2 policy (the baseline, same run). A task's kernel
 * sleeps until its cost has passed and records when it started and ended.
 *
 * Dependencies are the DAG's, derived by the runtime from tensors: a task
 * writes its own record and reads its predecessors' (a task with more
 * predecessors than a task has parameters reads one "inbox" that each of
 * them writes a slot of; no edge is added or lost).
 *
 * The ratio is makespan (first start to last end) over max(critical path,
 * work / cores) computed from what the tasks really took (a sleep
 * overshoots a little; the ratio measures the scheduling, not the sleep):
 * mean, max, and how many DAGs are within 3%. The simulator column is
 * pto-hws-sim's HWS makespan for the same DAG and cores, over the same
 * bound on the nominal costs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto_kernel.h>
#include <pto-private/compiler.h>
#include <pto-private/graph.h>
#include <pto-private/parse.h>
#include <pto-private/profile.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "pto2_engine.h"
#include "pto2_runtime.h"
#include "sim.h"
#include "sim_device.h"

#define K_SLEEP		1
#define MAX_CORES	16
#define GM_BYTES	(64ULL << 20)
/* parameters left for inputs and inbox writes: own record and the cost */
#define IO_SLOTS	(PTO2_MAX_TASK_PARAMS - 2)

/* What a task's kernel writes. */
struct rec {
	int64_t start, end;		/* the kernel's own clock readings */
	int64_t core;
	int64_t dispatch;		/* the core's ts_dispatch, as ns */
};

/*
 * The register file of the sim device the kernels run on (a kernel gets
 * no pointer of ours; one device at a time).
 */
static void *run_regs;

/* How a task's dependencies are expressed (see route()). */
struct troute {
	uint32_t nin;			/* direct inputs: predecessors' records */
	uint32_t in[IO_SLOTS];
	bool inbox;			/* reads its inbox */
	uint32_t inbox_n;		/* slots in it */
	uint64_t inbox_off;		/* its first slot (index) */
	uint32_t nout;			/* inbox slots it writes */
	uint64_t out[IO_SLOTS];		/* their indices */
};

struct live {
	uint64_t early;			/* pre-idle offset (ns), 0: off */
	bool no_hints;			/* tasks carry no estimate */
	struct sim_device *sd;
	PTO2Runtime *rt;
	uint64_t rec_dev, inbox_dev;
	struct rec *rec;
	/* the DAG being run */
	const struct sim_dag *dag;
	struct troute *route;
};

/* One DAG's results at one core count. */
struct res {
	double live[2];		/* hws, pto2: makespan / measured bound */
	double sim;		/* simulator (hws): makespan / nominal bound */
	double overshoot;	/* mean measured - nominal task time (ns) */
	double lat[5];		/* hws: latencies(), turnaround() */
};

static int k_sleep(const struct pto_kernel_ctx *c, const uint64_t *a,
		   uint32_t n)
{
	struct rec *r = (struct rec *)(uintptr_t)a[0];
	int64_t t0 = pto_mono_ns(), until = t0 + (int64_t)a[n - 1];
	struct timespec ts = { until / 1000000000LL, until % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	r->start = t0;
	r->dispatch = pto_sys_cnt_to_ns(
		pto_regs_info(run_regs)->sys_cnt_epoch_ns,
		reg64_load_acquire(&pto_regs_core(run_regs, c->core_id)->ts_dispatch));
	r->end = pto_mono_ns();
	r->core = c->core_id;
	return 0;
}

/*
 * Express every edge: directly (the consumer reads the producer's
 * record, one parameter of the consumer) or through the consumer's inbox
 * (the producer writes a slot of it, one parameter of the producer; the
 * consumer reads the whole inbox, one parameter). A consumer with more
 * predecessors than fit takes an inbox and routes through it the edges
 * whose producers have room. -E2BIG if some task cannot be expressed.
 */
static int route(const struct sim_dag *d, struct troute *r,
		 uint64_t *inbox_slots)
{
	uint32_t i, k, used;
	uint64_t slots = 0;

	memset(r, 0, d->ntask * sizeof(*r));
	for (i = 0; i < d->ntask; i++) {
		const struct sim_task *t = &d->task[i];

		used = r[i].nout;
		if (t->npred + used <= IO_SLOTS) {
			for (k = 0; k < t->npred; k++)
				r[i].in[r[i].nin++] = t->pred[k];
			continue;
		}
		r[i].inbox = true;
		r[i].inbox_off = slots;
		for (k = 0; k < t->npred; k++) {
			struct troute *p = &r[t->pred[k]];

			if (p->nin + p->inbox + p->nout < IO_SLOTS) {
				p->out[p->nout++] = slots + r[i].inbox_n++;
			} else if (r[i].nin + 1 + r[i].nout < IO_SLOTS) {
				r[i].in[r[i].nin++] = t->pred[k];
			} else {
				fprintf(stderr, "task %u of %s: %u predecessors cannot be expressed in %d parameters\n",
					i, d->name, t->npred,
					PTO2_MAX_TASK_PARAMS);
				return -E2BIG;
			}
		}
		slots += r[i].inbox_n;
	}
	*inbox_slots = slots;
	return 0;
}

static Tensor rec_tensor(struct live *L, uint32_t task)
{
	uint64_t shape[1] = { sizeof(struct rec) / 8 };
	uint64_t a = L->rec_dev + (uint64_t)task * sizeof(struct rec);

	return make_tensor_external((void *)(uintptr_t)a, shape, 1,
				    PTO_DT_INT64);
}

static Tensor inbox_tensor(struct live *L, uint64_t first, uint64_t n)
{
	uint64_t shape[1] = { n };

	return make_tensor_external((void *)(uintptr_t)(L->inbox_dev +
							 first * 8),
				    shape, 1, PTO_DT_INT64);
}

/* The DAG, in order, each task with its hint, rank and on_cp. */
static int orch_dag(PTO2Runtime *rt, uint64_t *args, int argc)
{
	struct live *L = (struct live *)(uintptr_t)args[0];
	const struct sim_dag *d = L->dag;
	Tensor ts[PTO2_MAX_TASK_PARAMS];
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	uint32_t i, k, n;

	(void)argc;
	for (i = 0; i < d->ntask; i++) {
		const struct sim_task *t = &d->task[i];
		const struct troute *r = &L->route[i];
		PTO2TaskAttr a = {
			.flags = PTO2_ATTR_PRIORITY |
				 (t->on_cp ? PTO2_ATTR_ON_CP : 0),
			.est_time_ns = L->no_hints ? 0 : t->est,
			.priority = t->offline,
		};

		n = 0;
		ts[n] = rec_tensor(L, i);
		p[n] = make_output_param(&ts[n]);
		n++;
		for (k = 0; k < r->nin; k++, n++) {
			ts[n] = rec_tensor(L, r->in[k]);
			p[n] = make_input_param(&ts[n]);
		}
		if (r->inbox) {
			ts[n] = inbox_tensor(L, r->inbox_off, r->inbox_n);
			p[n] = make_input_param(&ts[n]);
			n++;
		}
		for (k = 0; k < r->nout; k++, n++) {
			ts[n] = inbox_tensor(L, r->out[k], 1);
			p[n] = make_output_param(&ts[n]);
		}
		p[n++] = make_scalar_param(t->cost);
		pto2_rt_submit_task_attr(rt, K_SLEEP, PTO2_WORKER_CUBE, p,
					 (int32_t)n, &a);
	}
	return 0;
}

static int live_open(struct live *L, uint32_t cores, uint32_t max_tasks,
		     uint64_t max_inbox)
{
	struct pto2_config c;
	struct sim_gm_arena arena;
	uint64_t size, mem;
	int ret;

	memset(L, 0, sizeof(*L));
	ret = sim_device_create(cores, 0, GM_BYTES, &L->sd);
	if (ret)
		return ret;
	sim_device_set_kernel(L->sd, K_SLEEP, k_sleep);
	pto2_config_default(&c);
	c.task_window = 1024;
	while (c.task_window < 2 * max_tasks)
		c.task_window *= 2;
	c.heap_size = 1 << 20;		/* the tasks allocate nothing */
	c.hws_check = true;
	arena.sd = L->sd;
	arena.off = 0;
	size = pto2_runtime_mem_size(&c, cores);
	mem = sim_gm_alloc(&arena, size, 4096);
	L->rec_dev = sim_gm_alloc(&arena, max_tasks * sizeof(struct rec), 64);
	L->inbox_dev = sim_gm_alloc(&arena, (max_inbox + 1) * 8, 64);
	if (!mem || !L->rec_dev || !L->inbox_dev)
		return -ENOMEM;
	L->rec = sim_dev_to_host(L->sd, L->rec_dev);
	run_regs = L->sd->regs;
	return pto2_runtime_create(&L->sd->dev, &c,
				   sim_dev_to_host(L->sd, mem), mem, size,
				   &L->rt);
}

static void live_close(struct live *L)
{
	pto2_runtime_destroy(L->rt);
	sim_device_destroy(L->sd);
}

static int set_policy(struct live *L, enum hws_policy policy)
{
	struct pto2_engine *e = pto2_runtime_engine(L->rt);
	struct hws_config c;
	char msg[256];
	int ret;

	pto2_engine_get_config(e, &c);
	c.policy = policy;
	c.early_launch = L->early != 0;
	c.early_mode = HWS_EARLY_PREDICT;
	c.pre_idle_offset = L->early;
	ret = pto2_engine_configure(e, &c, msg, sizeof(msg));
	if (ret)
		fprintf(stderr, "HWS configuration: %s\n", msg);
	return ret;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* When task @i became ready: its last predecessor's end (INT64_MIN: none). */
static int64_t ready_at(const struct sim_dag *d, const struct rec *rec,
			uint32_t i)
{
	const struct sim_task *t = &d->task[i];
	int64_t ready = INT64_MIN;
	uint32_t k;

	for (k = 0; k < t->npred; k++)
		if (rec[t->pred[k]].end > ready)
			ready = rec[t->pred[k]].end;
	return ready;
}

/*
 * Dispatch latency: for each task with predecessors, from the end of the
 * last of them (it became ready) to its start, split at its dispatch
 * (the engine noticed the completion and decided; the core picked it
 * up). A task may also wait for a free core: on a DAG narrower than the
 * device, it does not. Median and p99 of the whole, medians of the parts
 * (ns) in @out[0..3].
 */
static int latencies(const struct sim_dag *d, const struct rec *rec,
		     double *out)
{
	int64_t *all = calloc(d->ntask, sizeof(*all));
	int64_t *eng = calloc(d->ntask, sizeof(*eng));
	int64_t *core = calloc(d->ntask, sizeof(*core));
	uint32_t i, m = 0;
	int ret = -ENOMEM;

	if (!all || !eng || !core)
		goto out;
	for (i = 0; i < d->ntask; i++) {
		int64_t ready = ready_at(d, rec, i);

		if (ready == INT64_MIN)
			continue;
		all[m] = rec[i].start - ready;
		eng[m] = rec[i].dispatch - ready;
		core[m++] = rec[i].start - rec[i].dispatch;
	}
	qsort(all, m, sizeof(*all), cmp_i64);
	qsort(eng, m, sizeof(*eng), cmp_i64);
	qsort(core, m, sizeof(*core), cmp_i64);
	out[0] = m ? (double)all[m / 2] : 0;
	out[1] = m ? (double)all[m - 1 - m / 100] : 0;
	out[2] = m ? (double)eng[m / 2] : 0;
	out[3] = m ? (double)core[m / 2] : 0;
	ret = 0;
out:
	free(all);
	free(eng);
	free(core);
	return ret;
}

/* A task's run on a core, for sorting by (core, start). */
struct run_at {
	int64_t core, start;
	uint32_t task;
};

static int cmp_run_at(const void *a, const void *b)
{
	const struct run_at *x = a, *y = b;

	if (x->core != y->core)
		return (x->core > y->core) - (x->core < y->core);
	return (x->start > y->start) - (x->start < y->start);
}

/*
 * A core's turnaround: from the end of one of its tasks to the start of
 * its next, when that next task was ready (its predecessors ended, or it
 * had none) by the end of the first: the core was free while work
 * waited, for the completion to be seen, the successors resolved, the
 * decision and the dispatch. Median (ns) in *@out, 0 if no such pair.
 */
static int turnaround(const struct sim_dag *d, const struct rec *rec,
		      double *out)
{
	struct run_at *run = calloc(d->ntask, sizeof(*run));
	int64_t *gap = calloc(d->ntask, sizeof(*gap));
	uint32_t i, m = 0;

	if (!run || !gap) {
		free(run);
		free(gap);
		return -ENOMEM;
	}
	for (i = 0; i < d->ntask; i++)
		run[i] = (struct run_at){ rec[i].core, rec[i].start, i };
	qsort(run, d->ntask, sizeof(*run), cmp_run_at);
	for (i = 1; i < d->ntask; i++) {
		const struct rec *p = &rec[run[i - 1].task];
		const struct rec *n = &rec[run[i].task];

		if (p->core == n->core &&
		    ready_at(d, rec, run[i].task) <= p->end)
			gap[m++] = n->start - p->end;
	}
	qsort(gap, m, sizeof(*gap), cmp_i64);
	*out = m ? (double)gap[m / 2] : 0;
	free(run);
	free(gap);
	return 0;
}

/*
 * Run DAG @d live under @policy: makespan over max(critical path,
 * work / cores) on the durations the tasks really had; *@over gets their
 * mean overshoot over the nominal costs.
 */
static int run_live(struct live *L, const struct sim_dag *d, uint32_t cores,
		    enum hws_policy policy, double *ratio, double *over)
{
	uint64_t arg = (uint64_t)(uintptr_t)L, *cost, *rank, work = 0, cp = 0;
	uint32_t *off, *succ, i, k, e = 0, edges = 0;
	int64_t first = INT64_MAX, last = INT64_MIN, excess = 0;
	bool *on_cp;
	int ret;

	ret = set_policy(L, policy);
	if (!ret)
		ret = pto2_runtime_set_dag(L->rt, d->ntask, false);
	if (ret)
		return ret;
	memset(L->rec, 0, d->ntask * sizeof(*L->rec));
	L->dag = d;
	ret = pto2_runtime_launch(L->rt, orch_dag, &arg, 1);
	if (!ret)
		ret = pto2_runtime_wait(L->rt, 600ULL * 1000000000ULL);
	if (ret) {
		fprintf(stderr, "%s: run failed: %s\n", d->name,
			pto2_rt_get_error_msg(L->rt));
		return ret;
	}
	/* the bound on the measured durations: same graph, other costs */
	for (i = 0; i < d->ntask; i++)
		edges += d->task[i].nsucc;
	cost = calloc(d->ntask, sizeof(*cost));
	rank = calloc(d->ntask, sizeof(*rank));
	on_cp = calloc(d->ntask, sizeof(*on_cp));
	off = calloc(d->ntask + 1, sizeof(*off));
	succ = calloc(edges + 1, sizeof(*succ));
	if (!cost || !rank || !on_cp || !off || !succ) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < d->ntask; i++) {
		const struct rec *r = &L->rec[i];

		if (r->end <= 0) {
			fprintf(stderr, "%s: task %u did not run\n", d->name, i);
			ret = -EIO;
			goto out;
		}
		cost[i] = (uint64_t)(r->end - r->start);
		work += cost[i];
		excess += (int64_t)cost[i] - (int64_t)d->task[i].cost;
		first = r->start < first ? r->start : first;
		last = r->end > last ? r->end : last;
		off[i] = e;
		for (k = 0; k < d->task[i].nsucc; k++)
			succ[e++] = d->task[i].succ[k];
	}
	off[d->ntask] = e;
	ret = pto_upward_rank(d->ntask, cost, off, succ, rank, on_cp);
	for (i = 0; !ret && i < d->ntask; i++)
		cp = rank[i] > cp ? rank[i] : cp;
	if (!ret) {
		double bound = (double)cp > (double)work / cores ?
			       (double)cp : (double)work / cores;

		*ratio = (double)(last - first) / bound;
		*over = (double)excess / d->ntask;
	}
out:
	free(cost);
	free(rank);
	free(on_cp);
	free(off);
	free(succ);
	return ret;
}

/* The simulator's HWS makespan of DAG @i alone over its nominal bound. */
static int run_sim(const struct workload *w, uint32_t i, uint32_t cores,
		   double *ratio)
{
	const struct sim_dag *d = &w->dag[i];
	struct sim_opts o;
	struct sim_result r;
	struct hws_layout l;
	struct hws_config c;
	char err[256];
	double bound;
	int ret;

	ret = hws_layout_uniform(&l, cores, 4);
	if (ret)
		return ret;
	hws_config_default(&c, &l);
	sim_opts_default(&o);
	o.only_dag = (int)i;
	ret = sim_run(w, &l, &c, &o, &r, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "simulator: %s\n", err);
		return ret;
	}
	bound = (double)d->cp_len > (double)d->work / cores ?
		(double)d->cp_len : (double)d->work / cores;
	*ratio = (double)r.makespan / bound;
	result_free(&r);
	return 0;
}

struct opts {
	const char *record;
	bool no_hints;
	uint64_t early;
	uint32_t ndag;
	uint32_t cores[8], ncores;
	uint64_t seed;
	struct gen_opts gen;
	char gen_opt;		/* the first of -n -s -t -f -k -W given, or 0 */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: pto-bench-makespan [-n DAGS] [-c CORES,...] [-s SEED] [-t LO-HI]\n"
"                          [-f LO-HI] [-k LO-HI] [-e OFFSET] [-W WIDTH] [-N]\n"
"                          [-w FILE]\n"
"                          [FILE...]\n"
"  -n DAGS     random static DAGs to generate (20); -n, -s, -t, -f, -k\n"
"              and -W shape them and are refused with FILEs\n"
"  -c CORES    core counts, comma-separated (2,4,8; at most %d)\n"
"  -s SEED     generator seed (1)\n"
"  -t LO-HI    tasks per DAG (50-300)\n"
"  -f LO-HI    predecessors per task (1-20)\n"
"  -k LO-HI    task cost, with a unit (0.5ms-1.5ms)\n"
"  -e OFFSET   early launch: a core is pre-idle OFFSET before its task's\n"
"              estimated end (EARLY_LAUNCH_MODE predict; default off)\n"
"  -W WIDTH    tasks per layer of the random DAGs (about sqrt(tasks))\n"
"  -N          no cost hints: tasks carry no estimate (the engine learns\n"
"              the kernel's time as it runs; ranks still use the costs)\n"
"  -w FILE     record the DAGs as they ran under the HWS on the first core\n"
"              count (measured costs, the hints as est) as a DAG file for\n"
"              pto-hws-sim\n"
"  FILE        pto-hws-sim DAG files: run their DAGs instead\n",
		MAX_CORES);
}

/* "2,4,8" into @o's core counts, each 1 .. MAX_CORES, as many as it holds. */
static int parse_core_counts(const char *arg, struct opts *o)
{
	char buf[64], *tok, *rest = buf;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	o->ncores = 0;
	while ((tok = pto_next_field(&rest, ','))) {
		uint32_t v;

		if (parse_u32(tok, MAX_CORES, &v) || !v ||
		    o->ncores == PTO_ARRAY_SIZE(o->cores))
			return -EINVAL;
		o->cores[o->ncores++] = v;
	}
	return o->ncores ? 0 : -EINVAL;
}

/* Option @c's value: 0, -EINVAL if it is bad, -ENOENT if @c takes none. */
static int set_opt(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case 'W':
		return parse_u32(arg, SIM_MAX_COUNT, &o->gen.width);
	case 'e':
		return parse_time(arg, &o->early) ? -EINVAL : 0;
	case 'n':
		return parse_u32(arg, SIM_MAX_COUNT, &o->ndag) || !o->ndag ?
		       -EINVAL : 0;
	case 'c':
		return parse_core_counts(arg, o);
	case 's':
		return pto_parse_u64_all(arg, 0, UINT64_MAX, &o->seed) ?
		       -EINVAL : 0;
	case 't':
		return parse_count_range(arg, 1, &o->gen.tasks_lo,
					 &o->gen.tasks_hi);
	case 'f':
		return parse_count_range(arg, 0, &o->gen.fanin_lo,
					 &o->gen.fanin_hi);
	case 'k':
		return parse_cost_range(arg, &o->gen.cost_lo, &o->gen.cost_hi);
	}
	return -ENOENT;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->ndag = 20;
	o->seed = 1;
	gen_defaults(&o->gen);
	while ((c = getopt(argc, argv, "n:c:s:t:f:k:e:w:W:Nh")) != -1) {
		switch (c) {
		case 'N':
			o->no_hints = true;
			break;
		case 'w':
			o->record = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			ret = set_opt(o, c, optarg);
			if (ret == -ENOENT)	/* unknown: getopt said so */
				return -EINVAL;
			if (ret) {
				fprintf(stderr, "pto-bench-makespan: bad value for -%c: '%s'\n",
					c, optarg);
				return -EINVAL;
			}
			if (!o->gen_opt && strchr("nstfkW", c))
				o->gen_opt = (char)c;
		}
	}
	if (optind < argc && o->gen_opt) {
		fprintf(stderr, "pto-bench-makespan: -%c shapes the random DAGs, which the DAG files replace\n",
			o->gen_opt);
		return -EINVAL;
	}
	if (!o->ncores) {
		o->cores[0] = 2;
		o->cores[1] = 4;
		o->cores[2] = 8;
		o->ncores = 3;
	}
	return 0;
}

/* The DAG files named, or generated DAGs; ranked as static graphs. */
static int load(int argc, char **argv, const struct opts *o,
		struct workload *w)
{
	struct rng r = { o->seed * 0x9e3779b97f4a7c15ULL + 1 };
	char err[256];
	uint32_t i, j;
	int ret = 0;

	memset(w, 0, sizeof(*w));
	for (i = 0; !ret && (int)i < argc; i++) {
		FILE *f = fopen(argv[i], "re");

		if (!f) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return -errno;
		}
		ret = wl_parse(f, argv[i], w, err, sizeof(err));
		fclose(f);
	}
	for (i = 0; !ret && !argc && i < o->ndag; i++) {
		struct sim_dag *d = wl_add_dag(w);

		gen_random(d, &o->gen, &r);
	}
	for (i = 0; !ret && i < w->ndag; i++) {
		w->dag[i].dynamic = false;
		w->dag[i].arrival = 0;
		for (j = 0; j < w->dag[i].ntask; j++) {
			const struct sim_task *t = &w->dag[i].task[j];

			if (t->thread_num > 1 || t->block_num > 1 || t->coop) {
				snprintf(err, sizeof(err),
					 "%s: task %u: only one-block one-thread tasks run here",
					 w->dag[i].name, j);
				ret = -EINVAL;
			}
		}
	}
	if (!ret)
		ret = wl_prepare(w, err, sizeof(err));
	if (ret)
		fprintf(stderr, "pto-bench-makespan: %s\n", err);
	return ret;
}

static int run_cores(const struct workload *w, const struct opts *o,
		     uint32_t cores, struct res *res, FILE *rec, int64_t t0)
{
	uint32_t i, max_tasks = 0;
	uint64_t max_inbox = 0, slots;
	struct troute *r;
	struct live L;
	int ret = 0;

	for (i = 0; i < w->ndag; i++)
		max_tasks = w->dag[i].ntask > max_tasks ? w->dag[i].ntask :
			    max_tasks;
	r = calloc(max_tasks, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; !ret && i < w->ndag; i++) {
		ret = route(&w->dag[i], r, &slots);
		max_inbox = slots > max_inbox ? slots : max_inbox;
	}
	if (!ret)
		ret = live_open(&L, cores, max_tasks, max_inbox);
	L.route = r;
	L.early = o->early;
	L.no_hints = o->no_hints;
	for (i = 0; !ret && i < w->ndag; i++) {
		double over;

		ret = route(&w->dag[i], r, &slots);
		/* the runtime records the HWS run (pto2_runtime_record) */
		if (!ret && rec)
			ret = pto2_runtime_record(L.rt, rec, w->dag[i].name,
						  t0);
		if (!ret)
			ret = run_live(&L, &w->dag[i], cores, HWS_POLICY_HWS,
				       &res[i].live[0], &res[i].overshoot);
		if (!ret && rec)
			ret = pto2_runtime_record(L.rt, NULL, NULL, 0);
		if (!ret)
			ret = latencies(&w->dag[i], L.rec, res[i].lat);
		if (!ret)
			ret = turnaround(&w->dag[i], L.rec, &res[i].lat[4]);
		if (!ret)
			ret = run_live(&L, &w->dag[i], cores, HWS_POLICY_FIFO,
				       &res[i].live[1], &over);
		if (!ret)
			ret = run_sim(w, i, cores, &res[i].sim);
	}
	live_close(&L);
	free(r);
	return ret;
}

static void stats(const struct res *res, uint32_t n, size_t off, double *mean,
		  double *max, uint32_t *within)
{
	uint32_t i;

	*mean = 0;
	*max = 0;
	*within = 0;
	for (i = 0; i < n; i++) {
		double v = *(const double *)(const void *)((const char *)&res[i] +
							    off);

		*mean += v / n;
		*max = v > *max ? v : *max;
		*within += v <= 1.03;
	}
}

static void report(const struct workload *w, uint32_t cores,
		   const struct res *res)
{
	static const struct {
		const char *name;
		size_t off;
	} col[] = {
		{ "hws", offsetof(struct res, live[0]) },
		{ "pto2", offsetof(struct res, live[1]) },
		{ "sim-hws", offsetof(struct res, sim) },
	};
	double mean, max, over = 0, lat[5] = { 0 };
	uint32_t i, k, within;

	for (i = 0; i < w->ndag; i++) {
		over += res[i].overshoot / w->ndag / 1000.0;
		for (k = 0; k < 5; k++)
			lat[k] += res[i].lat[k] / w->ndag / 1000.0;
	}
	for (i = 0; i < sizeof(col) / sizeof(col[0]); i++) {
		stats(res, w->ndag, col[i].off, &mean, &max, &within);
		printf("%-5u  %-8s  %8.4f  %8.4f  %6u/%-4u\n", cores,
		       col[i].name, mean, max, within, w->ndag);
	}
	printf("       hws dispatch latency (ready -> start): median %.1f us, p99 %.1f us; medians ready -> dispatch %.1f us, dispatch -> start %.1f us; sleep overshoot %.1f us; core turnaround (end -> next start, work waiting) median %.1f us\n",
	       lat[0], lat[1], lat[2], lat[3], over, lat[4]);
}

int main(int argc, char **argv)
{
	int64_t t0 = pto_mono_ns();
	struct workload w;
	FILE *rec = NULL;
	struct opts o;
	struct res *res;
	uint32_t i;
	int ret = 0;

	if (parse_opts(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	if (load(argc - optind, argv + optind, &o, &w))
		return 1;
	res = calloc(w.ndag, sizeof(*res));
	if (!res)
		return 1;
	if (o.record) {
		rec = fopen(o.record, "we");
		if (!rec) {
			fprintf(stderr, "%s: %s\n", o.record, strerror(errno));
			return 1;
		}
	}
	printf("live makespan on the sim device: %u static DAGs with cost hints%s, each alone\n",
	       w.ndag, optind < argc ? " (DAG files)" : "");
	if (optind == argc)
		printf("(random layered: %u-%u tasks, %u-%u predecessors, costs %.2f-%.2f ms, seed %llu)\n",
		       o.gen.tasks_lo, o.gen.tasks_hi, o.gen.fanin_lo,
		       o.gen.fanin_hi, o.gen.cost_lo / 1e6, o.gen.cost_hi / 1e6,
		       (unsigned long long)o.seed);
	printf("ratio: makespan / max(critical path, work / cores); live on the tasks' measured times, sim on nominal costs\n");
	printf("cores  sched         mean       max  within 3%%\n");
	for (i = 0; i < o.ncores; i++) {
		ret = run_cores(&w, &o, o.cores[i], res, i ? NULL : rec, t0);
		if (ret) {
			fprintf(stderr, "pto-bench-makespan: %d cores: %s\n",
				o.cores[i], strerror(-ret));
			break;
		}
		report(&w, o.cores[i], res);
		fflush(stdout);
	}
	if (rec && fclose(rec)) {
		fprintf(stderr, "%s: %s\n", o.record, strerror(errno));
		ret = -EIO;
	}
	free(res);
	wl_free(&w);
	return ret ? 1 : 0;
}
