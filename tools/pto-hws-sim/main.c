// SPDX-License-Identifier: MIT
/*
 * pto-hws-sim - replay DAG workloads through the HWS library (daemon/hws)
 * in simulated time, side by side with PTO2's default (the FIFO policy of
 * the same library) and an offline HEFT list schedule.
 *
 * Usage: pto-hws-sim --help. The DAG file format, the time model and the
 * measured tables are in Documentation/hws.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/parse.h>
#include <pto-private/profile.h>

#include "sim.h"

enum { SCHED_HWS, SCHED_FIFO, SCHED_HEFT, NR_SCHED };
static const char *const sched_name[NR_SCHED] = { "hws", "fifo", "heft" };

/* the generated kinds, in the order a mix of them takes its turns */
enum { GEN_RANDOM, GEN_FORKJOIN, GEN_PA, NR_GEN };
static const char *const gen_name[NR_GEN] = { "random", "forkjoin", "pa" };
static void (*const gen_fn[NR_GEN])(struct sim_dag *, const struct gen_opts *,
				    struct rng *) = {
	gen_random, gen_forkjoin, gen_pa,
};

struct opts {
	struct gen_opts gen;
	struct sim_opts sim;
	struct hws_config cfg;		/* overrides, applied to defaults */
	uint32_t set;			/* SET_* bits: which overrides */
	uint32_t ngen[NR_GEN];		/* DAGs to generate, per kind */
	uint64_t arrive_mean;
	bool dynamic;
	uint64_t seed;
	const char *dump;
	uint32_t cores, cluster, device;
	bool per_dag;
	bool digest;
	bool quiet;
	char experiment;
	uint32_t count;
	uint32_t mix;
	uint32_t prio_mode;
	uint32_t gen_set;		/* GEN_SET_*: generator options given */
};

/* options of one generator, refused when it generates nothing */
#define GEN_SET_BRANCHES	(1U << 0)	/* fork-join */
#define GEN_SET_PA		(1U << 1)	/* paged attention */

#define SIM_MIX_DEFAULT	6	/* experiment b: DAGs per mix */

#define SET_PROMOTE	(1U << 0)
#define SET_THRESHOLD	(1U << 1)
#define SET_SCALE	(1U << 2)
#define SET_EARLY	(1U << 3)
#define SET_MARGIN	(1U << 4)
#define SET_FILLUP	(1U << 5)
#define SET_RSVD	(1U << 6)
#define SET_DELAY	(1U << 7)

static void usage(FILE *f)
{
	fprintf(f,
"usage: pto-hws-sim [OPTION]... [FILE]...\n"
"Replay DAG files (or generated DAGs) through the HWS in simulated time and\n"
"print HWS, FIFO (PTO2's default) and HEFT side by side.\n"
"\n"
"Workload (DAG files, generated DAGs, or both; generated kinds together\n"
"take turns: a random DAG, a fork-join, a paged attention, ...):\n"
"  --random N            N random layered DAGs\n"
"  --forkjoin N          N fork-join DAGs\n"
"  --pa N                N paged-attention-shaped DAGs\n"
"  --tasks LO-HI         tasks per generated DAG (50-300)\n"
"  --fanin LO-HI         predecessors per task of random DAGs (1-20)\n"
"  --width W             tasks per layer of random DAGs (about sqrt(tasks))\n"
"  --cost LO-HI          block cost range (0.5ms-1.5ms)\n"
"  --branches W          fork-join width (8)\n"
"  --pa-shape C:B        paged attention: C chunks of 1 + 4 B tasks (4:3)\n"
"  --pa-cost H,Q,S,P,U   hub, QK, SF, PV, UP costs (2us,20us,10us,20us,5us)\n"
"  --arrive MEAN         generated DAGs arrive with exponential gaps of MEAN\n"
"  --dynamic             generated DAGs are dynamic\n"
"  --prio rank|norm      static DAGs' offline priority: the upward rank, or\n"
"                        the rank over the DAG's critical path (rank)\n"
"  --seed N              generator and noise seed (1)\n"
"  --dump FILE           write the workload as a DAG file (- for stdout)\n"
"Machine:\n"
"  --cores N[:C]         N uniform SIPs in clusters of C (4)\n"
"  --device B            the device: B blocks of 1 AIC + 2 AIV (default 24)\n"
"Model:\n"
"  --noise F             real costs vary by up to +-F (0 <= F < 1)\n"
"  --lat D,C,R,H         dispatch, completion, dependency resolution, host\n"
"                        latencies (profile.h: 0,100ns,1us,3us)\n"
"HWS registers (defaults: hws_config_default):\n"
"  --promote RULES       0..15 or a list of threshold,cp,top1,skipped\n"
"  --threshold N         PROMOTE_THRESHOLD\n"
"  --scale LIST|linear|flat   the 20 scale ratios (1/100 units)\n"
"  --early report:OFF|predict:OFF   early launch\n"
"  --margin T            RSVD_SIP_BACKFILL_MARGIN_OFFSET (signed)\n"
"  --fillup              SIP_FILLUP_TASK_FIRST\n"
"  --rsvd-first          USE_RSVD_SIP_FIRST\n"
"  --launch-delay T      LAUNCH_SIP_DELAY\n"
"Output:\n"
"  --per-dag             a line per DAG\n"
"  --digest              a digest of every HWS and FIFO launch (equal\n"
"                        digests: the same decisions)\n"
"  --check               the HWS invariant checker after every decision\n"
"  --experiment a|b      the target experiments (Documentation/hws.rst)\n"
"  --count N             experiment: DAGs (a, 100) or mixes (b, 20)\n"
"  --mix K               experiment b: DAGs per mix (6)\n"
"Times take ns, us, ms or s (default ns).\n");
}

static int parse_promote(const char *s, uint32_t *rule)
{
	char buf[128], *tok, *rest = buf;
	uint64_t v;

	if (!pto_parse_u64_all(s, 0, PTO_HWS_PROMOTE_ALL, &v)) {
		*rule = (uint32_t)v;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*rule = 0;
	while ((tok = pto_next_field(&rest, ','))) {
		if (!strcmp(tok, "threshold"))
			*rule |= PTO_HWS_PROMOTE_THRESHOLD;
		else if (!strcmp(tok, "cp"))
			*rule |= PTO_HWS_PROMOTE_ON_CP;
		else if (!strcmp(tok, "top1"))
			*rule |= PTO_HWS_PROMOTE_TOP_1;
		else if (!strcmp(tok, "skipped"))
			*rule |= PTO_HWS_PROMOTE_SKIPPED_TOP;
		else if (strcmp(tok, "none"))
			return -EINVAL;
	}
	return 0;
}

static int parse_scale(const char *s, uint32_t *t)
{
	char buf[512], *tok, *rest = buf;
	uint32_t i;

	if (!strcmp(s, "linear")) {
		for (i = 0; i < HWS_SCALE_RANKS; i++)
			t[i] = 100 * (i + 1);
		return 0;
	}
	if (!strcmp(s, "flat")) {
		for (i = 0; i < HWS_SCALE_RANKS; i++)
			t[i] = 100;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (i = 0; i < HWS_SCALE_RANKS; i++) {
		uint64_t v;

		tok = pto_next_field(&rest, ',');
		if (!tok || pto_parse_dec(tok, 1, PTO_HWS_SCALE_MAX, &v))
			return -EINVAL;
		t[i] = (uint32_t)v;
	}
	return rest ? -EINVAL : 0;
}

/* The machine of @o into @l: 0, or -EINVAL said on stderr. */
static int make_layout(const struct opts *o, struct hws_layout *l)
{
	if (o->device) {
		if (!hws_layout_device(l, o->device, 2 * o->device))
			return 0;
		fprintf(stderr, "pto-hws-sim: --device %u: %u AIC and %u AIV take more than the HWS's %u SIPs or the device's %u cores\n",
			o->device, o->device, 2 * o->device, HWS_MAX_SIPS,
			PTO_MAX_CORES);
		return -EINVAL;
	}
	if (!hws_layout_uniform(l, o->cores, o->cluster))
		return 0;
	fprintf(stderr, "pto-hws-sim: --cores %u:%u: a cluster is 3, 4, 6, 8, 12 or 16 SIPs, each in a power-of-two slot, and the HWS has %u slots\n",
		o->cores, o->cluster, HWS_MAX_SIPS);
	return -EINVAL;
}

static void make_config(const struct opts *o, const struct hws_layout *l,
			struct hws_config *c, uint32_t policy)
{
	hws_config_default(c, l);
	c->policy = policy;
	if (o->set & SET_PROMOTE)
		c->promote_rule = o->cfg.promote_rule;
	if (o->set & SET_THRESHOLD)
		c->promote_threshold = o->cfg.promote_threshold;
	if (o->set & SET_SCALE)
		memcpy(c->scale_ratio, o->cfg.scale_ratio,
		       sizeof(c->scale_ratio));
	if (o->set & SET_EARLY) {
		c->early_launch = true;
		c->early_mode = o->cfg.early_mode;
		c->pre_idle_offset = o->cfg.pre_idle_offset;
	}
	if (o->set & SET_MARGIN)
		c->backfill_margin = o->cfg.backfill_margin;
	if (o->set & SET_FILLUP)
		c->fillup_first = true;
	if (o->set & SET_RSVD)
		c->rsvd_first = true;
	if (o->set & SET_DELAY)
		c->launch_delay = o->cfg.launch_delay;
}

/* One scheduler over @w: the whole mix, and (mixes) each DAG alone. */
struct outcome {
	struct sim_result mix;
	uint64_t *alone;	/* per DAG: response time alone */
	double slr;		/* mean response / critical path, NAN: none */
	double mean_s;
	double unfair;
};

static int run_one(const struct opts *o, const struct workload *w,
		   const struct hws_layout *l, int sched, int only,
		   struct sim_result *r, char *err, size_t errlen)
{
	struct sim_opts so = o->sim;
	struct hws_config c;

	so.only_dag = only;
	if (sched == SCHED_HEFT)
		return heft_run(w, l, &so, r, err, errlen);
	make_config(o, l, &c,
		    sched == SCHED_HWS ? HWS_POLICY_HWS : HWS_POLICY_FIFO);
	return sim_run(w, l, &c, &so, r, err, errlen);
}

/* Idempotent: what evaluate() filled, or left on failure. */
static void outcome_free(struct outcome *x)
{
	result_free(&x->mix);
	free(x->alone);
	x->alone = NULL;
}

/*
 * Simulated time @a over simulated time @b, each taken as at least the
 * clock's 1 ns: times of 0 (zero costs and latencies) compare as equal,
 * not as 0 / 0, and a wait after no time alone stays a number.
 */
static double tratio(double a, double b)
{
	return fmax(a, 1) / fmax(b, 1);
}

/*
 * Mean response / critical path over the DAGs of @w whose critical path is
 * not zero (one of zero-cost tasks has none); NAN if none has.
 */
static double slr(const struct workload *w, const struct sim_result *r)
{
	double sum = 0;
	uint32_t d, n = 0;

	for (d = 0; d < w->ndag; d++) {
		if (!w->dag[d].cp_len)
			continue;
		sum += (double)r->resp[d] / (double)w->dag[d].cp_len;
		n++;
	}
	return n ? sum / n : NAN;
}

static int evaluate(const struct opts *o, const struct workload *w,
		    const struct hws_layout *l, int sched, bool alone,
		    struct outcome *out, char *err, size_t errlen)
{
	uint32_t d;
	double sum = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = run_one(o, w, l, sched, -1, &out->mix, err, errlen);
	if (ret)
		return ret;
	out->slr = slr(w, &out->mix);
	if (!alone)
		return 0;
	out->alone = calloc(w->ndag, sizeof(*out->alone));
	if (!out->alone) {
		result_free(&out->mix);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (d = 0; d < w->ndag; d++) {
		struct sim_result r;

		if (w->ndag == 1) {
			out->alone[d] = out->mix.resp[d];
		} else {
			ret = run_one(o, w, l, sched, (int)d, &r, err, errlen);
			if (ret) {
				outcome_free(out);
				return ret;
			}
			out->alone[d] = r.resp[d];
			result_free(&r);
		}
		sum += tratio(out->mix.resp[d], out->alone[d]);
	}
	out->mean_s = sum / w->ndag;
	for (d = 0; d < w->ndag; d++)
		out->unfair += fabs(tratio(out->mix.resp[d], out->alone[d]) -
				    out->mean_s);
	return 0;
}

/*
 * @w under every scheduler into @out, the DAGs alone too; on a failure,
 * said on stderr, nothing is left filled and -1 is returned.
 */
static int evaluate_all(const struct opts *o, const struct workload *w,
			const struct hws_layout *l,
			struct outcome out[NR_SCHED])
{
	char err[256];
	int s;

	for (s = 0; s < NR_SCHED; s++) {
		if (evaluate(o, w, l, s, true, &out[s], err, sizeof(err))) {
			fprintf(stderr, "pto-hws-sim: %s: %s\n", sched_name[s],
				err);
			while (s--)
				outcome_free(&out[s]);
			return -1;
		}
	}
	return 0;
}

static uint32_t gen_total(const struct opts *o)
{
	uint32_t k, n = 0;

	for (k = 0; k < NR_GEN; k++)
		n += o->ngen[k];
	return n;
}

/*
 * The DAGs of o->ngen into @w, the kinds taking turns (a random DAG, a
 * fork-join, a paged attention, a random one again...) until each kind
 * has its count; each kind's DAGs are named by its own index.
 */
static void generate(const struct opts *o, struct workload *w, uint64_t seed)
{
	struct rng r = { seed * 0x9E3779B97F4A7C15ULL + 1 };
	uint32_t k, i, n = 0, total = gen_total(o);
	uint64_t t = 0;

	for (i = 0; n < total; i++) {
		for (k = 0; k < NR_GEN; k++) {
			struct sim_dag *d;

			if (i >= o->ngen[k])
				continue;
			d = wl_add_dag(w);
			gen_fn[k](d, &o->gen, &r);
			snprintf(d->name, sizeof(d->name), "%s%u",
				 gen_name[k], i);
			d->dynamic = o->dynamic;
			if (n++ && o->arrive_mean) {
				double gap = -log(1 - rng_unit(&r)) *
					     (double)o->arrive_mean;

				/* past the clock's limit: refused later */
				t = gap < (double)(SIM_MAX_TIME - t) ?
				    t + (uint64_t)gap : SIM_MAX_TIME;
			}
			d->arrival = t;
		}
	}
}

static void describe(const struct opts *o, const struct workload *w,
		     const struct hws_layout *l)
{
	uint64_t tasks = 0, work = 0, cp = 0;
	uint32_t d;

	for (d = 0; d < w->ndag; d++) {
		tasks += w->dag[d].ntask;
		work += w->dag[d].work;
		if (w->dag[d].cp_len > cp)
			cp = w->dag[d].cp_len;
	}
	printf("workload: %u DAG(s), %llu tasks, work %.3f ms, longest critical path %.3f ms\n",
	       w->ndag, (unsigned long long)tasks, work / 1e6, cp / 1e6);
	if (o->device)
		printf("machine: device layout, %u blocks (%u AIC + %u AIV)\n",
		       o->device, o->device, 2 * o->device);
	else
		printf("machine: %u uniform SIPs in clusters of %u\n",
		       hws_mask_weight(&l->present), l->cluster_sips);
}

static int run_workload(const struct opts *o, struct workload *w)
{
	struct outcome out[NR_SCHED];
	struct hws_layout l;
	uint32_t d;
	int s;

	if (make_layout(o, &l))
		return 2;
	describe(o, w, &l);
	if (evaluate_all(o, w, &l, out))
		return 1;
	printf("%-6s %12s %8s %8s %10s %9s %10s %9s %7s\n", "sched",
	       "makespan_ms", "SLR", "mean_S", "unfairness", "launches",
	       "promotions", "backfills", "early");
	for (s = 0; s < NR_SCHED; s++) {
		const struct sim_result *r = &out[s].mix;

		printf("%-6s %12.3f", sched_name[s], r->makespan / 1e6);
		if (isnan(out[s].slr))
			printf(" %8s", "-");
		else
			printf(" %8.4f", out[s].slr);
		printf(" %8.4f %10.4f", out[s].mean_s, out[s].unfair);
		if (s == SCHED_HEFT)
			printf(" %9s %10s %9s %7s\n", "-", "-", "-", "-");
		else
			printf(" %9llu %10llu %9llu %7llu\n",
			       (unsigned long long)r->st.launches,
			       (unsigned long long)r->st.promotions,
			       (unsigned long long)r->st.backfills,
			       (unsigned long long)r->st.early_launches);
	}
	if (o->digest)
		printf("digest: hws %016llx fifo %016llx (%llu and %llu decisions)\n",
		       (unsigned long long)out[SCHED_HWS].mix.digest,
		       (unsigned long long)out[SCHED_FIFO].mix.digest,
		       (unsigned long long)out[SCHED_HWS].mix.st.decisions,
		       (unsigned long long)out[SCHED_FIFO].mix.st.decisions);
	if (o->per_dag) {
		printf("%-16s %10s %10s %8s", "dag", "arrival_ms", "cp_ms",
		       "tasks");
		for (s = 0; s < NR_SCHED; s++)
			printf(" %8s_ms %6s_S", sched_name[s], sched_name[s]);
		printf("\n");
		for (d = 0; d < w->ndag; d++) {
			printf("%-16s %10.3f %10.3f %8u", w->dag[d].name,
			       w->dag[d].arrival / 1e6, w->dag[d].cp_len / 1e6,
			       w->dag[d].ntask);
			for (s = 0; s < NR_SCHED; s++)
				printf(" %11.3f %8.3f",
				       out[s].mix.resp[d] / 1e6,
				       tratio(out[s].mix.resp[d],
					      out[s].alone[d]));
			printf("\n");
		}
	}
	for (s = 0; s < NR_SCHED; s++)
		outcome_free(&out[s]);
	return 0;
}

struct ht {
	uint64_t tail;
	uint64_t cost;
};

static int ht_cmp(const void *a, const void *b)
{
	const struct ht *x = a, *y = b;

	return x->tail > y->tail ? -1 : x->tail < y->tail;
}

/*
 * A lower bound on any schedule of @d on @p identical cores, tighter than
 * max(critical path, work / p): a kernel cannot start before its head
 * (the longest path to it) and leaves its tail (the longest path after
 * it) to run after it ends, so the kernels with head >= a and tail >= b
 * all run within [a, T - b]: T >= a + b + their work / p. The maximum
 * over every (a, b) (a = 0, b = 0 gives work / p).
 */
static double tight_bound(const struct sim_dag *d, uint32_t p)
{
	uint32_t n = d->ntask, i, j, k;
	uint64_t *head = calloc(n, sizeof(*head));
	uint64_t *tail = calloc(n, sizeof(*tail));
	struct ht *v = calloc(n, sizeof(*v));
	double best = (double)d->cp_len;

	for (i = 0; i < n; i++) {
		const struct sim_task *t = &d->task[i];

		for (j = 0; j < t->npred; j++) {
			uint64_t x = head[t->pred[j]] + d->task[t->pred[j]].cost;

			if (x > head[i])
				head[i] = x;
		}
	}
	for (i = n; i-- > 0;) {
		const struct sim_task *t = &d->task[i];

		for (j = 0; j < t->nsucc; j++) {
			uint64_t x = tail[t->succ[j]] + d->task[t->succ[j]].cost;

			if (x > tail[i])
				tail[i] = x;
		}
	}
	for (i = 0; i < n; i++) {
		uint64_t a = head[i], w = 0;

		/* the kernels with head >= a, by tail */
		for (j = 0, k = 0; j < n; j++) {
			const struct sim_task *t = &d->task[j];

			if (head[j] < a)
				continue;
			v[k].tail = tail[j];
			v[k].cost = t->cost * t->block_num * t->thread_num;
			k++;
		}
		qsort(v, k, sizeof(*v), ht_cmp);
		for (j = 0; j < k; j++) {
			double x;

			w += v[j].cost;
			if (j + 1 < k && v[j + 1].tail == v[j].tail)
				continue;
			x = (double)a + (double)v[j].tail + (double)w / p;
			if (x > best)
				best = x;
		}
	}
	free(head);
	free(tail);
	free(v);
	return best;
}

/*
 * Experiment a: one static DAG at a time (random layered, cost hints
 * exact), on 2, 4 and 8 uniform cores: makespan over the lower bound
 * max(critical path, work / cores).
 */
static int experiment_a(struct opts *o)
{
	static const uint32_t cores[] = { 2, 4, 8 };
	uint32_t c, i, s;
	char err[256];

	printf("experiment a: %u random static DAGs (%u-%u tasks, fan-in %u-%u, costs %.2f-%.2f ms), alone, makespan / max(critical path, work / cores)\n",
	       o->count, o->gen.tasks_lo, o->gen.tasks_hi, o->gen.fanin_lo,
	       o->gen.fanin_hi, o->gen.cost_lo / 1e6, o->gen.cost_hi / 1e6);
	printf("(bound: max(critical path, work / cores); tight: the head/tail bound, see tight_bound())\n");
	printf("%-6s %-6s %10s %10s %12s %12s %11s %11s\n", "cores", "sched",
	       "mean", "max", "within 1%", "CP-bound", "mean/tight", "max/tight");
	for (c = 0; c < sizeof(cores) / sizeof(cores[0]); c++) {
		double sum[NR_SCHED] = { 0 }, max[NR_SCHED] = { 0 };
		double tsum[NR_SCHED] = { 0 }, tmax[NR_SCHED] = { 0 };
		uint32_t within[NR_SCHED] = { 0 }, cpb = 0;
		struct hws_layout l;

		o->cores = cores[c];
		o->cluster = 4;
		o->device = 0;
		if (make_layout(o, &l))
			return 2;
		for (i = 0; i < o->count; i++) {
			struct workload w = { 0 };
			double lb, tb;

			o->ngen[GEN_RANDOM] = 1;
			o->arrive_mean = 0;
			generate(o, &w, o->seed * 1000003ULL + i);
			w.prio_mode = o->prio_mode;
			if (wl_prepare(&w, err, sizeof(err)))
				return 1;
			lb = (double)w.dag[0].work / cores[c];
			if ((double)w.dag[0].cp_len >= lb) {
				lb = (double)w.dag[0].cp_len;
				cpb++;
			}
			tb = tight_bound(&w.dag[0], cores[c]);
			for (s = 0; s < NR_SCHED; s++) {
				struct sim_result r;
				double x;

				if (run_one(o, &w, &l, (int)s, -1, &r, err,
					    sizeof(err))) {
					fprintf(stderr, "pto-hws-sim: %s\n", err);
					return 1;
				}
				x = tratio(r.makespan, lb);
				sum[s] += x;
				if (x > max[s])
					max[s] = x;
				within[s] += x <= 1.01;
				x = tratio(r.makespan, tb);
				tsum[s] += x;
				if (x > tmax[s])
					tmax[s] = x;
				result_free(&r);
			}
			wl_free(&w);
		}
		for (s = 0; s < NR_SCHED; s++)
			printf("%-6u %-6s %10.4f %10.4f %7u/%-4u %7u/%-4u %11.4f %11.4f\n",
			       cores[c], sched_name[s], sum[s] / o->count,
			       max[s], within[s], o->count, cpb, o->count,
			       tsum[s] / o->count, tmax[s]);
	}
	return 0;
}

/* " %10.3f" of @a / @b, or "-" where @b is 0 (nothing to compare to). */
static void print_ratio(double a, double b)
{
	if (b > 0)
		printf(" %10.3f", a / b);
	else
		printf(" %10s", "-");
}

/*
 * Experiment b: mixes of static DAGs arriving over time on 8 uniform
 * cores: unfairness and makespan, HWS against FIFO (and HEFT).
 */
static int experiment_b(struct opts *o)
{
	double unf[NR_SCHED] = { 0 }, mk[NR_SCHED] = { 0 }, ms[NR_SCHED] = { 0 };
	double ratio_unf = 0, ratio_mk = 0;
	uint32_t i, s, better = 0, nunf = 0;
	struct hws_layout l;
	char err[256];

	if (!o->cores)
		o->cores = 8;
	o->device = 0;
	if (make_layout(o, &l))
		return 2;
	printf("experiment b: %u mixes of %u random static DAGs (%u-%u tasks, fan-in %u-%u), arrivals %.1f ms apart on average, %u uniform cores\n",
	       o->count, o->mix, o->gen.tasks_lo, o->gen.tasks_hi,
	       o->gen.fanin_lo, o->gen.fanin_hi, o->arrive_mean / 1e6,
	       o->cores);
	printf("%-5s %12s %12s %12s %10s %10s %10s %10s %10s\n", "mix",
	       "hws_unfair", "fifo_unfair", "heft_unfair", "hws_ms",
	       "fifo_ms", "heft_ms", "unf_ratio", "mk_ratio");
	for (i = 0; i < o->count; i++) {
		struct outcome out[NR_SCHED];
		struct workload w = { 0 };

		o->ngen[GEN_RANDOM] = o->mix;
		generate(o, &w, o->seed * 7919ULL + i);
		w.prio_mode = o->prio_mode;
		if (wl_prepare(&w, err, sizeof(err))) {
			fprintf(stderr, "pto-hws-sim: %s\n", err);
			wl_free(&w);
			return 1;
		}
		if (evaluate_all(o, &w, &l, out)) {
			wl_free(&w);
			return 1;
		}
		for (s = 0; s < NR_SCHED; s++) {
			unf[s] += out[s].unfair;
			mk[s] += out[s].mix.makespan / 1e6;
			ms[s] += out[s].mean_s;
		}
		printf("%-5u %12.4f %12.4f %12.4f %10.3f %10.3f %10.3f",
		       i, out[0].unfair, out[1].unfair, out[2].unfair,
		       out[0].mix.makespan / 1e6, out[1].mix.makespan / 1e6,
		       out[2].mix.makespan / 1e6);
		print_ratio(out[0].unfair, out[1].unfair);
		printf(" %10.4f\n",
		       tratio(out[0].mix.makespan, out[1].mix.makespan));
		/* a mix FIFO serves perfectly fairly has no ratio */
		if (out[1].unfair > 0) {
			ratio_unf += out[0].unfair / out[1].unfair;
			nunf++;
		}
		ratio_mk += tratio(out[0].mix.makespan, out[1].mix.makespan);
		better += out[1].unfair > 0 &&
			  out[0].unfair <= 0.5 * out[1].unfair;
		for (s = 0; s < NR_SCHED; s++)
			outcome_free(&out[s]);
		wl_free(&w);
	}
	printf("mean  %12.4f %12.4f %12.4f %10.3f %10.3f %10.3f",
	       unf[0] / o->count, unf[1] / o->count, unf[2] / o->count,
	       mk[0] / o->count, mk[1] / o->count, mk[2] / o->count);
	print_ratio(ratio_unf, nunf);
	printf(" %10.4f\n", ratio_mk / o->count);
	printf("mean S: hws %.3f fifo %.3f heft %.3f; unfairness of the mean: hws / fifo = ",
	       ms[0] / o->count, ms[1] / o->count, ms[2] / o->count);
	if (unf[1] > 0)
		printf("%.3f", unf[0] / unf[1]);
	else
		printf("-");
	printf(" (target <= 0.5); makespan hws / fifo = %.4f (target <= 1.05); mixes with hws <= half fifo: %u/%u\n",
	       tratio(mk[0], mk[1]), better, nunf);
	return 0;
}

/* Long options without a short form, in the groups of usage(). */
enum {
	OPT_TASKS = 1, OPT_FANIN, OPT_WIDTH, OPT_COST, OPT_BRANCHES,
	OPT_PA_SHAPE, OPT_PA_COST, OPT_ARRIVE, OPT_DYNAMIC, OPT_SEED, OPT_DUMP,
	OPT_PRIO,
	OPT_CORES, OPT_DEVICE, OPT_NOISE, OPT_LAT,
	OPT_PROMOTE, OPT_THRESHOLD, OPT_SCALE, OPT_EARLY, OPT_MARGIN,
	OPT_FILLUP, OPT_RSVD_FIRST, OPT_LAUNCH_DELAY,
	OPT_PER_DAG, OPT_DIGEST, OPT_CHECK, OPT_EXPERIMENT, OPT_COUNT,
	OPT_MIX,
};

static const struct option long_opts[] = {
	{ "random", required_argument, NULL, 'r' },
	{ "forkjoin", required_argument, NULL, 'f' },
	{ "pa", required_argument, NULL, 'p' },
	{ "tasks", required_argument, NULL, OPT_TASKS },
	{ "fanin", required_argument, NULL, OPT_FANIN },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "cost", required_argument, NULL, OPT_COST },
	{ "branches", required_argument, NULL, OPT_BRANCHES },
	{ "pa-shape", required_argument, NULL, OPT_PA_SHAPE },
	{ "pa-cost", required_argument, NULL, OPT_PA_COST },
	{ "arrive", required_argument, NULL, OPT_ARRIVE },
	{ "dynamic", no_argument, NULL, OPT_DYNAMIC },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "dump", required_argument, NULL, OPT_DUMP },
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "noise", required_argument, NULL, OPT_NOISE },
	{ "lat", required_argument, NULL, OPT_LAT },
	{ "promote", required_argument, NULL, OPT_PROMOTE },
	{ "threshold", required_argument, NULL, OPT_THRESHOLD },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "early", required_argument, NULL, OPT_EARLY },
	{ "margin", required_argument, NULL, OPT_MARGIN },
	{ "fillup", no_argument, NULL, OPT_FILLUP },
	{ "rsvd-first", no_argument, NULL, OPT_RSVD_FIRST },
	{ "launch-delay", required_argument, NULL, OPT_LAUNCH_DELAY },
	{ "per-dag", no_argument, NULL, OPT_PER_DAG },
	{ "digest", no_argument, NULL, OPT_DIGEST },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "experiment", required_argument, NULL, OPT_EXPERIMENT },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "mix", required_argument, NULL, OPT_MIX },
	{ "prio", required_argument, NULL, OPT_PRIO },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Exactly @n times (parse_cost()) separated by commas into @cost. */
static int parse_costs(const char *s, uint64_t *cost, size_t n)
{
	char buf[256], *tok, *rest = buf;
	size_t i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (i = 0; i < n; i++) {
		tok = pto_next_field(&rest, ',');
		if (!tok || parse_cost(tok, &cost[i]))
			return -EINVAL;
	}
	return rest ? -EINVAL : 0;
}

/* --lat D,C,R,H */
static int parse_lat(const char *s, struct sim_lat *lat)
{
	uint64_t v[4];

	if (parse_costs(s, v, 4))
		return -EINVAL;
	lat->dispatch = v[0];
	lat->completion = v[1];
	lat->dep_resolve = v[2];
	lat->host = v[3];
	return 0;
}

/* --early report:OFF|predict:OFF */
static int parse_early(const char *s, struct hws_config *c)
{
	const char *p = strchr(s, ':');

	if (!p || parse_cost(p + 1, &c->pre_idle_offset))
		return -EINVAL;
	if (!strncmp(s, "report:", 7))
		c->early_mode = HWS_EARLY_SIP_REPORT;
	else if (!strncmp(s, "predict:", 8))
		c->early_mode = HWS_EARLY_PREDICT;
	else
		return -EINVAL;
	return 0;
}

/* A count from @min to @max into *@out: 0 or -EINVAL. */
static int opt_u32(const char *arg, uint32_t min, uint32_t max,
		   uint32_t *out)
{
	uint64_t v;

	if (pto_parse_dec(arg, min, max, &v))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * "A:B" (or "A" when @b_optional) into *@a and *@b, each a count from 1
 * to @max: 0 or -EINVAL.
 */
static int opt_pair(const char *arg, uint32_t max, bool b_optional,
		    uint32_t *a, uint32_t *b)
{
	char buf[32], *colon;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, arg);
	colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	else if (!b_optional)
		return -EINVAL;
	if (opt_u32(buf, 1, max, a))
		return -EINVAL;
	return colon ? opt_u32(colon + 1, 1, max, b) : 0;
}

/* --seed: any 64-bit number, decimal or 0x hex */
static int parse_seed(const char *arg, uint64_t *seed)
{
	return pto_parse_u64_all(arg, 0, UINT64_MAX, seed) ? -EINVAL : 0;
}

/* --noise: a fraction, 0 <= F < 1, so that no cost goes negative */
static int parse_noise(const char *arg, double *noise)
{
	char *end;
	double v;

	if (parse_decimal(arg, &v, &end) || *end || !(v < 1))
		return -EINVAL;
	*noise = v;
	return 0;
}

/* --margin T, signed */
static int parse_margin(const char *s, int64_t *margin)
{
	bool neg = s[0] == '-';
	uint64_t t;

	if (parse_cost(s + neg, &t))
		return -EINVAL;
	*margin = neg ? -(int64_t)t : (int64_t)t;
	return 0;
}

/*
 * The workload options: 0, -EINVAL for a bad value, -ENOENT if @c is not
 * one of them (likewise the other groups below).
 */
static int set_workload_opt(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case 'r':
		return opt_u32(arg, 1, SIM_MAX_COUNT, &o->ngen[GEN_RANDOM]);
	case 'f':
		return opt_u32(arg, 1, SIM_MAX_COUNT, &o->ngen[GEN_FORKJOIN]);
	case 'p':
		return opt_u32(arg, 1, SIM_MAX_COUNT, &o->ngen[GEN_PA]);
	case OPT_TASKS:
		return parse_count_range(arg, 1, &o->gen.tasks_lo,
					 &o->gen.tasks_hi);
	case OPT_FANIN:
		return parse_count_range(arg, 0, &o->gen.fanin_lo,
					 &o->gen.fanin_hi);
	case OPT_WIDTH:
		return opt_u32(arg, 0, SIM_MAX_COUNT, &o->gen.width);
	case OPT_COST:
		return parse_cost_range(arg, &o->gen.cost_lo, &o->gen.cost_hi);
	case OPT_BRANCHES:
		o->gen_set |= GEN_SET_BRANCHES;
		return opt_u32(arg, 1, SIM_MAX_COUNT, &o->gen.forkjoin);
	case OPT_PA_SHAPE:
		o->gen_set |= GEN_SET_PA;
		/* chunks x (1 + 4 x blocks) tasks: at most about 4 Mi */
		return opt_pair(arg, 1024, false, &o->gen.pa_chunks,
				&o->gen.pa_bn);
	case OPT_PA_COST:
		o->gen_set |= GEN_SET_PA;
		return parse_costs(arg, o->gen.pa_cost,
				   PTO_ARRAY_SIZE(o->gen.pa_cost));
	case OPT_ARRIVE:
		return parse_time(arg, &o->arrive_mean);
	case OPT_DYNAMIC:
		o->dynamic = true;
		return 0;
	case OPT_SEED:
		return parse_seed(arg, &o->seed);
	case OPT_DUMP:
		o->dump = arg;
		return 0;
	case OPT_PRIO:
		if (!strcmp(arg, "rank"))
			o->prio_mode = PRIO_RANK;
		else if (!strcmp(arg, "norm"))
			o->prio_mode = PRIO_NORM;
		else
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

/* The machine and model options. */
static int set_machine_opt(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_CORES:
		return opt_pair(arg, SIM_MAX_COUNT, true, &o->cores,
				&o->cluster);
	case OPT_DEVICE:
		return opt_u32(arg, 1, SIM_MAX_COUNT, &o->device);
	case OPT_NOISE:
		return parse_noise(arg, &o->sim.noise);
	case OPT_LAT:
		return parse_lat(arg, &o->sim.lat);
	}
	return -ENOENT;
}

/* The HWS registers: each sets its SET_* bit once its value is good. */
static int set_hws_opt(struct opts *o, int c, const char *arg)
{
	static const uint32_t bit[] = {
		[OPT_PROMOTE] = SET_PROMOTE, [OPT_THRESHOLD] = SET_THRESHOLD,
		[OPT_SCALE] = SET_SCALE, [OPT_EARLY] = SET_EARLY,
		[OPT_MARGIN] = SET_MARGIN, [OPT_FILLUP] = SET_FILLUP,
		[OPT_RSVD_FIRST] = SET_RSVD, [OPT_LAUNCH_DELAY] = SET_DELAY,
	};
	int ret = 0;

	switch (c) {
	case OPT_PROMOTE:
		ret = parse_promote(arg, &o->cfg.promote_rule);
		break;
	case OPT_THRESHOLD:
		ret = opt_u32(arg, 1, PTO_HWS_PROMOTE_THRESHOLD_MAX,
			      &o->cfg.promote_threshold);
		break;
	case OPT_SCALE:
		ret = parse_scale(arg, o->cfg.scale_ratio);
		break;
	case OPT_EARLY:
		ret = parse_early(arg, &o->cfg);
		break;
	case OPT_MARGIN:
		ret = parse_margin(arg, &o->cfg.backfill_margin);
		break;
	case OPT_FILLUP:
	case OPT_RSVD_FIRST:
		break;
	case OPT_LAUNCH_DELAY:
		ret = parse_cost(arg, &o->cfg.launch_delay);
		break;
	default:
		return -ENOENT;
	}
	if (!ret)
		o->set |= bit[c];
	return ret;
}

/* The output options. */
static int set_output_opt(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_PER_DAG:
		o->per_dag = true;
		return 0;
	case OPT_DIGEST:
		o->digest = true;
		return 0;
	case OPT_CHECK:
		o->sim.check = true;
		return 0;
	case OPT_EXPERIMENT:
		if (strcmp(arg, "a") && strcmp(arg, "b"))
			return -EINVAL;
		o->experiment = arg[0];
		return 0;
	case OPT_COUNT:
		/* 0: the experiment's default */
		return opt_u32(arg, 0, SIM_MAX_COUNT, &o->count);
	case OPT_MIX:
		/* unfairness is between DAGs: a mix of one has none */
		return opt_u32(arg, 2, SIM_MAX_COUNT, &o->mix);
	}
	return -ENOENT;
}

/*
 * The command line into @o. Returns -1 to go on, or the exit status
 * (0 after --help, 2 after a bad option or value).
 */
static int parse_args(struct opts *o, int argc, char **argv)
{
	int c, ret, idx = 0;

	memset(o, 0, sizeof(*o));
	gen_defaults(&o->gen);
	o->seed = 1;
	o->cluster = 4;
	o->mix = SIM_MIX_DEFAULT;
	sim_opts_default(&o->sim);
	while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		ret = set_workload_opt(o, c, optarg);
		if (ret == -ENOENT)
			ret = set_machine_opt(o, c, optarg);
		if (ret == -ENOENT)
			ret = set_hws_opt(o, c, optarg);
		if (ret == -ENOENT)
			ret = set_output_opt(o, c, optarg);
		if (ret == -ENOENT) {
			usage(stderr);
			return 2;
		}
		if (ret) {
			fprintf(stderr, "pto-hws-sim: bad value for --%s: '%s'\n",
				long_opts[idx].name, optarg);
			return 2;
		}
	}
	/* the experiments generate random DAGs only: these too */
	if ((o->gen_set & GEN_SET_BRANCHES) && !o->ngen[GEN_FORKJOIN]) {
		fprintf(stderr, "pto-hws-sim: --branches is --forkjoin's (nothing else reads it)\n");
		return 2;
	}
	if ((o->gen_set & GEN_SET_PA) && !o->ngen[GEN_PA]) {
		fprintf(stderr, "pto-hws-sim: --pa-shape and --pa-cost are --pa's (nothing else reads them)\n");
		return 2;
	}
	o->sim.seed = o->seed;
	return -1;
}

/*
 * What experiment @o->experiment sets itself or does not use, named
 * (NULL: nothing): refused, so that no option is silently ignored.
 * @nfiles: DAG files on the command line.
 */
static const char *experiment_ignores(const struct opts *o, int nfiles)
{
	bool a = o->experiment == 'a';

	if (nfiles)
		return "DAG files (the experiments generate their DAGs)";
	if (gen_total(o))
		return "--random, --forkjoin or --pa (the experiments generate random DAGs)";
	if (o->device)
		return "--device (the experiments run on uniform cores)";
	if (a && o->cores)
		return "--cores (experiment a runs 2, 4 and 8 cores)";
	if (a && o->arrive_mean)
		return "--arrive (experiment a runs each DAG alone)";
	if (a && o->mix != SIM_MIX_DEFAULT)
		return "--mix (it is experiment b's)";
	if (o->dump)
		return "--dump";
	if (o->per_dag || o->digest)
		return "--per-dag or --digest (the experiments print a line per run or mix)";
	return NULL;
}

/* --experiment a|b (parse_args() took no other), with its defaults. */
static int run_experiment(struct opts *o, int nfiles)
{
	const char *what = experiment_ignores(o, nfiles);

	if (what) {
		fprintf(stderr, "pto-hws-sim: --experiment %c does not take %s\n",
			o->experiment, what);
		return 2;
	}
	if (o->experiment == 'a') {
		if (!o->count)
			o->count = 100;
		return experiment_a(o);
	}
	if (!o->count)
		o->count = 20;
	if (!o->arrive_mean)
		o->arrive_mean = 10000000;
	return experiment_b(o);
}

/* The DAG files @files[0..@n) ("-": stdin) into @w; 0 or exit status 1. */
static int read_files(struct workload *w, char **files, int n)
{
	char err[256];
	int i, ret;

	for (i = 0; i < n; i++) {
		FILE *f = strcmp(files[i], "-") ? fopen(files[i], "r") : stdin;

		if (!f) {
			fprintf(stderr, "pto-hws-sim: %s: %s\n", files[i],
				strerror(errno));
			return 1;
		}
		ret = wl_parse(f, files[i], w, err, sizeof(err));
		if (f != stdin)
			fclose(f);
		if (ret) {
			fprintf(stderr, "pto-hws-sim: %s\n", err);
			return 1;
		}
	}
	return 0;
}

/* --dump FILE ("-": stdout); 0 or exit status 1. */
static int dump_workload(const char *path, const struct workload *w)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "pto-hws-sim: %s: %s\n", path, strerror(errno));
		return 1;
	}
	wl_write(f, w);
	/* a full disk or a closed pipe: the file is not the workload */
	if (fflush(f) || ferror(f)) {
		fprintf(stderr, "pto-hws-sim: %s: %s\n", path,
			errno ? strerror(errno) : "write error");
		if (f != stdout)
			fclose(f);
		return 1;
	}
	if (f != stdout && fclose(f)) {
		fprintf(stderr, "pto-hws-sim: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct workload w = { 0 };
	struct opts o;
	char err[256];
	int ret;

	ret = parse_args(&o, argc, argv);
	if (ret >= 0)
		return ret;
	if (o.experiment)
		return run_experiment(&o, argc - optind);
	if (o.count || o.mix != SIM_MIX_DEFAULT) {
		fprintf(stderr, "pto-hws-sim: --count and --mix are --experiment's\n");
		return 2;
	}
	if (!o.cores && !o.device)
		o.device = 24;
	ret = read_files(&w, argv + optind, argc - optind);
	if (ret)
		goto out_free;
	generate(&o, &w, o.seed);
	if (!w.ndag) {
		usage(stderr);
		ret = 2;
		goto out_free;
	}
	w.prio_mode = o.prio_mode;
	if (wl_prepare(&w, err, sizeof(err))) {
		fprintf(stderr, "pto-hws-sim: %s\n", err);
		ret = 1;
		goto out_free;
	}
	ret = o.dump ? dump_workload(o.dump, &w) : 0;
	if (!ret)
		ret = run_workload(&o, &w);
out_free:
	wl_free(&w);
	return ret;
}
