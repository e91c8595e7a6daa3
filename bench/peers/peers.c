// SPDX-License-Identifier: MIT
/*
 * peers.c - pto-bench-peers: the graph shapes of shapes.c through the
 * paths of ours (ours.c) and the peers (StarPU, OpenMP, oneTBB), in one
 * process, rounds interleaved
 *
 *   pto-bench-peers [-r ROUNDS] [-t THREADS] [-s SHAPE,...] [-p SYSTEM,...]
 *
 * ROUNDS (default 5, or $ROUNDS) rounds; in each, every system has a turn
 * (ours first, then the peers, always in that order) in which it runs
 * every shape: one unmeasured run, then the measured one (the fan shape:
 * 50 graphs, each to completion). A turn starts the system and stops it,
 * then waits 300 ms (SETTLE_NS), so that no thread of one spins through
 * another's turn. Before the
 * rounds, a check round runs every shape on every system with every task
 * stamped and verifies that no task started before all its predecessors
 * ended (nothing of it is reported but failures).
 *
 * THREADS (default: the host's online CPUs, or $THREADS) is the peers'
 * worker threads; a shape that needs more workers than that (the latency
 * shape: its widest layer, as its tasks sleep) gets them. Our paths size
 * their host threads to the host's CPUs whatever THREADS says (the header
 * line "threads:" of each system says how many it runs).
 *
 * -s and -p pick shapes and systems by name (comma-separated; default:
 * all): a name that is none of them is refused (exit 2, with the names
 * there are); a peer this build left out is said on stderr.
 *
 * Output: a header (shapes, threads), then per shape and system the
 * median, min and max over the rounds, then for each shape, peer and path
 * of ours
 *
 *   ratio <shape> <peer> <x> <path>
 *
 * with x = our median / the peer's median (the latency shape: of the
 * median latencies; its p99 is in the table). Exit status 1 if a run or
 * the check failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto-private/compiler.h>
#include <pto-private/parse.h>
#include <pto-private/time.h>

#include "bench_stat.h"
#include "peers.h"

#define MAX_SYS		8
#define MAX_ROUNDS	1000
#define DESC_LEN	256

/* What one system did with one shape: a value per round. */
struct result {
	double *v;	/* per round: the figure (latency: its median) */
	double *p99;	/* the latency shape: per round, the p99 */
	long n;
	bool failed;
};

struct bench {
	const struct peers_sys *sys[MAX_SYS];
	unsigned int nr_sys;
	bool shape_on[PS_NR];
	struct peers_graph graph[PS_NR], stamped[PS_NR];
	uint32_t max_slots;
	unsigned int threads;
	long rounds;
	char desc[MAX_SYS][2][DESC_LEN];	/* [sys][more workers?] */
	struct result res[PS_NR][MAX_SYS];
	bool failed;
};

uint64_t *peers_slots_alloc(uint32_t nr_slots)
{
	size_t len = (size_t)nr_slots * PEERS_SLOT_BYTES;
	uint64_t *s = aligned_alloc(PEERS_SLOT_BYTES, len ? len : PEERS_SLOT_BYTES);

	if (s)
		memset(s, 0, len);
	return s;
}

/* ---- Stamps: the check and the latencies --------------------------------- */

struct stamps {
	const struct peers_graph *g;
	uint32_t missing, early;	/* tasks not run; started too early */
	double *lat;			/* latency: per task with preds, us */
	long nr_lat;
};

/* Read every stamp of the last run, then zero them for the next. */
static void stamps_collect(void *arg, uint64_t *slots)
{
	struct stamps *st = arg;
	const struct peers_graph *g = st->g;
	uint32_t t, p;

	for (t = 0; t < g->nr_tasks; t++) {
		const struct peers_task *tk = &g->task[t];
		const uint64_t *s;
		uint64_t last = 0;

		if (!(tk->flags & PT_STAMPED))
			continue;
		s = &slots[(size_t)peers_stamp_slot(g, tk) * PEERS_SLOT_U64];
		if (!s[0] || s[1] < s[0]) {
			st->missing++;
			continue;
		}
		for (p = tk->pred; p < tk->pred + tk->npred; p++) {
			const struct peers_task *pt = &g->task[g->pred[p]];
			const uint64_t *ps;

			if (!(pt->flags & PT_STAMPED))
				continue;
			ps = &slots[(size_t)peers_stamp_slot(g, pt) * PEERS_SLOT_U64];
			if (s[0] < ps[1])
				st->early++;
			last = ps[1] > last ? ps[1] : last;
		}
		if (st->lat && tk->npred && last && s[0] >= last)
			st->lat[st->nr_lat++] = (double)(s[0] - last) / 1e3;
	}
	for (t = 0; t < g->nr_tasks; t++)
		if (g->task[t].flags & PT_STAMPED)
			memset(&slots[(size_t)peers_stamp_slot(g, &g->task[t]) *
				      PEERS_SLOT_U64], 0, 16);
}

/* ---- One system's turn --------------------------------------------------- */

/* Run @g (stamped or not) once; check its stamps if it has any. */
static int run_once(const struct peers_sys *sys, void *ctx,
		    const struct peers_graph *g, double *us, struct stamps *st)
{
	double t0, t1;
	int ret;

	t0 = bench_now_us();
	ret = sys->run(ctx, g);
	t1 = bench_now_us();
	if (ret) {
		fprintf(stderr, "%s %s: run failed: %s\n", sys->name, g->name,
			strerror(-ret));
		return ret;
	}
	*us += t1 - t0;
	ret = sys->access(ctx, g, stamps_collect, st);
	if (!ret && (st->missing || st->early)) {
		fprintf(stderr, "%s %s: CHECK FAILED: %u tasks did not run, "
			"%u started before a predecessor ended\n", sys->name,
			g->name, st->missing, st->early);
		ret = -EPROTO;
	}
	return ret;
}

/*
 * A warm-up run of @g, then the measured runs: the round's figure (and
 * the latency shape's p99) into @res, unless @res is NULL (the check).
 */
static int run_shape(const struct peers_sys *sys, void *ctx,
		     const struct peers_graph *g, struct result *res)
{
	struct stamps st = { .g = g };
	double us = 0;
	uint32_t i;
	int ret;

	ret = run_once(sys, ctx, g, &us, &st);
	if (g->latency)
		st.lat = malloc((size_t)g->nr_tasks * sizeof(*st.lat));
	if (g->latency && !st.lat)
		ret = -ENOMEM;
	for (i = 0, us = 0; i < g->reps && !ret; i++)
		ret = run_once(sys, ctx, g, &us, &st);
	if (!ret && res && g->latency) {
		struct bench_stat bs;

		ret = bench_stat(st.lat, st.nr_lat, 1.0, &bs);
		res->v[res->n] = bs.median;
		res->p99[res->n++] = bs.p99;
	} else if (!ret && res) {
		res->v[res->n++] = us / g->per;
	}
	free(st.lat);
	return ret;
}

/*
 * A pause after a turn, so that what a system leaves running when it is
 * stopped does not spin through the next one's turn: libomp's workers
 * spin for KMP_BLOCKTIME (200 ms by default) after their last parallel
 * region, and a stopped ptod's pto-aicore exits a moment after ptod.
 */
#define SETTLE_NS	300000000ULL

/* @sys's turn: every shape (@check: stamped, not recorded). */
static void turn(struct bench *b, unsigned int si, bool check)
{
	const struct peers_sys *sys = b->sys[si];
	unsigned int cur = 0;
	void *ctx = NULL;
	int s, ret;

	for (s = 0; s < PS_NR; s++) {
		struct peers_graph *g = check ? &b->stamped[s] : &b->graph[s];
		unsigned int need = b->threads;
		struct result *res = check ? NULL : &b->res[s][si];

		if (!b->shape_on[s] || (res && res->failed))
			continue;
		if (!sys->ours && g->workers > need)
			need = g->workers;
		if (ctx && need != cur) {
			sys->close(ctx);
			ctx = NULL;
		}
		if (!ctx) {
			ret = sys->open(sys, need, b->max_slots, &ctx,
					b->desc[si][need != b->threads], DESC_LEN);
			if (ret) {
				fprintf(stderr, "%s: cannot start: %s\n", sys->name,
					strerror(-ret));
				ctx = NULL;
				b->failed = true;
				b->res[s][si].failed = true;
				continue;
			}
			cur = need;
		}
		ret = sys->prepare(ctx, g);
		if (!ret) {
			ret = run_shape(sys, ctx, g, res);
			sys->finish(ctx, g);
		}
		if (ret) {
			b->failed = true;
			b->res[s][si].failed = true;
		}
	}
	if (ctx)
		sys->close(ctx);
	pto_sleep_ns(SETTLE_NS);
}

/* ---- Report -------------------------------------------------------------- */

static void print_row(const char *shape, const char *sys, const double *v,
		      long n, const char *unit)
{
	struct bench_stat st;

	if (bench_stat(v, n, 1.0, &st)) {
		printf("%-12s %-11s %10s %10s %10s  %s\n", shape, sys, "failed",
		       "-", "-", unit);
		return;
	}
	printf("%-12s %-11s %10.2f %10.2f %10.2f  %s\n", shape, sys, st.median,
	       st.min, st.max, unit);
}

static double median_of(const struct result *r)
{
	struct bench_stat st;

	if (r->failed || bench_stat(r->v, r->n, 1.0, &st))
		return 0;
	return st.median;
}

/* x with three significant digits, without an exponent */
static void print_ratio(const char *shape, const char *peer, double x,
			const char *path)
{
	int prec = x >= 100 ? 0 : x >= 10 ? 1 : x >= 1 ? 2 : x >= 0.1 ? 3 : 4;

	printf("ratio %s %s %.*f %s\n", shape, peer, prec, x, path);
}

static void report(struct bench *b)
{
	unsigned int i, j;
	int s;

	printf("# %-10s %-11s %10s %10s %10s  unit (over %ld rounds)\n",
	       "shape", "system", "median", "min", "max", b->rounds);
	for (s = 0; s < PS_NR; s++) {
		const struct peers_graph *g = &b->graph[s];

		if (!b->shape_on[s])
			continue;
		for (i = 0; i < b->nr_sys; i++) {
			struct result *r = &b->res[s][i];
			long n = r->failed ? 0 : r->n;

			if (!g->latency) {
				print_row(g->name, b->sys[i]->name, r->v, n, g->unit);
				continue;
			}
			print_row(g->name, b->sys[i]->name, r->v, n,
				  "us median latency");
			print_row("latency-p99", b->sys[i]->name, r->p99, n,
				  "us p99 latency");
		}
	}
	for (s = 0; s < PS_NR; s++) {
		if (!b->shape_on[s])
			continue;
		for (i = 0; i < b->nr_sys; i++) {
			if (b->sys[i]->ours)
				continue;
			for (j = 0; j < b->nr_sys; j++) {
				double ours = median_of(&b->res[s][j]);
				double peer = median_of(&b->res[s][i]);

				if (!b->sys[j]->ours)
					continue;
				if (ours > 0 && peer > 0)
					print_ratio(b->graph[s].name, b->sys[i]->name,
						    ours / peer, b->sys[j]->name);
				else
					printf("ratio %s %s n/a %s\n", b->graph[s].name,
					       b->sys[i]->name, b->sys[j]->name);
			}
		}
	}
}

static void print_threads(const struct bench *b)
{
	unsigned int i, lat_workers = 0;
	int s;

	for (s = 0; s < PS_NR; s++)
		if (b->shape_on[s] && b->graph[s].workers > lat_workers)
			lat_workers = b->graph[s].workers;
	printf("# threads: host %ld CPUs online; peers %u workers",
	       sysconf(_SC_NPROCESSORS_ONLN), b->threads);
	if (lat_workers > b->threads)
		printf(", %u for the latency shape (its widest layer: its tasks "
		       "sleep, so no ready task waits for a worker)", lat_workers);
	printf("\n");
	for (i = 0; i < b->nr_sys; i++) {
		printf("# threads: %s: %s", b->sys[i]->name,
		       b->desc[i][0][0] ? b->desc[i][0] : "(not started)");
		if (b->desc[i][1][0])
			printf("; latency: %s", b->desc[i][1]);
		printf("\n");
	}
}

/* ---- Setup --------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: pto-bench-peers [-r ROUNDS] [-t THREADS] "
		"[-s SHAPE,...] [-p SYSTEM,...]\n");
}

static long parse_count(const char *s, long max)
{
	uint64_t v;

	if (!s || pto_parse_dec(s, 1, (uint64_t)max, &v))
		return -1;
	return (long)v;
}

/* Is @name in the comma-separated @list (NULL: every name)? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!list)
		return true;
	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/*
 * Every name of the comma-separated @list (NULL: none given) is one of
 * @names (@n of them): 0, or -EINVAL with the first that is not, and the
 * names there are, on stderr (@what: "shape" or "system").
 */
static int check_names(const char *list, const char *const *names,
		       unsigned int n, const char *what)
{
	const char *p = list, *e;
	unsigned int i;
	size_t len;

	while (p) {
		e = strchr(p, ',');
		len = e ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				break;
		if (i == n) {
			fprintf(stderr, "pto-bench-peers: unknown %s '%.*s' (",
				what, (int)len, p);
			for (i = 0; i < n; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
			fprintf(stderr, ")\n");
			return -EINVAL;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/*
 * The systems of @only (NULL: all) into @b: a peer this build left out
 * (its package was missing when it was built) is said on stderr.
 */
static int add_systems(struct bench *b, const char *only)
{
	static const struct peers_sys *const peers[] = {
#ifdef PEERS_HAVE_STARPU
		&peers_starpu,
#endif
#ifdef PEERS_HAVE_OMP
		&peers_omp,
#endif
#ifdef PEERS_HAVE_TBB
		&peers_tbb,
#endif
		NULL
	};
	static const char *const all_peers[] = {
		PEERS_NAME_STARPU, PEERS_NAME_OMP, PEERS_NAME_TBB,
	};
	const char *names[MAX_SYS + PTO_ARRAY_SIZE(all_peers)];
	unsigned int i, j, n = 0;

	for (i = 0; i < peers_nr_ours && n < MAX_SYS; i++)
		names[n++] = peers_ours[i].name;
	for (i = 0; i < PTO_ARRAY_SIZE(all_peers); i++)
		names[n++] = all_peers[i];
	if (check_names(only, names, n, "system"))
		return -EINVAL;
	for (i = 0; i < peers_nr_ours && b->nr_sys < MAX_SYS; i++)
		if (listed(only, peers_ours[i].name))
			b->sys[b->nr_sys++] = &peers_ours[i];
	for (i = 0; i < PTO_ARRAY_SIZE(all_peers); i++) {
		for (j = 0; peers[j]; j++)
			if (!strcmp(peers[j]->name, all_peers[i]))
				break;
		if (!peers[j]) {
			if (only && listed(only, all_peers[i]))
				fprintf(stderr, "pto-bench-peers: %s is not in "
					"this build (make bench-peers installs "
					"what it needs)\n", all_peers[i]);
			continue;
		}
		if (listed(only, all_peers[i]) && b->nr_sys < MAX_SYS)
			b->sys[b->nr_sys++] = peers[j];
	}
	return 0;
}

static int parse_opts(struct bench *b, int argc, char **argv)
{
	const char *shapes = NULL, *only = NULL, *shape_names[PS_NR];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int opt, s;

	b->rounds = getenv("ROUNDS") ? parse_count(getenv("ROUNDS"), MAX_ROUNDS) : 5;
	b->threads = ncpu > 0 ? (unsigned int)ncpu : 1;
	if (getenv("THREADS"))
		b->threads = (unsigned int)parse_count(getenv("THREADS"), 1024);
	while ((opt = getopt(argc, argv, "r:t:s:p:")) != -1) {
		switch (opt) {
		case 'r': b->rounds = parse_count(optarg, MAX_ROUNDS); break;
		case 't': b->threads = (unsigned int)parse_count(optarg, 1024); break;
		case 's': shapes = optarg; break;
		case 'p': only = optarg; break;
		default: return -EINVAL;
		}
	}
	if (optind != argc || b->rounds < 1 || b->threads < 1 ||
	    b->threads > 1024) {
		fprintf(stderr, "bad arguments (ROUNDS 1..%d, THREADS 1..1024)\n",
			MAX_ROUNDS);
		return -EINVAL;
	}
	if (add_systems(b, only))
		return -EINVAL;
	for (s = 0; s < PS_NR; s++) {
		struct peers_graph g = { 0 };

		/* the names: from a graph's build */
		if (peers_build((enum peers_shape)s, false, &g))
			return -ENOMEM;
		b->graph[s] = g;
		b->shape_on[s] = listed(shapes, g.name);
		shape_names[s] = g.name;
	}
	if (check_names(shapes, shape_names, PS_NR, "shape"))
		return -EINVAL;
	if (!b->nr_sys)
		fprintf(stderr, "pto-bench-peers: none of the systems of -p "
			"is in this build\n");
	return b->nr_sys ? 0 : -EINVAL;
}

static int setup(struct bench *b)
{
	unsigned int i;
	int s;

	for (s = 0; s < PS_NR; s++) {
		if (peers_build((enum peers_shape)s, true, &b->stamped[s]))
			return -ENOMEM;
		if (b->stamped[s].nr_slots > b->max_slots)
			b->max_slots = b->stamped[s].nr_slots;
		for (i = 0; i < b->nr_sys; i++) {
			struct result *r = &b->res[s][i];

			r->v = calloc((size_t)b->rounds, sizeof(*r->v));
			r->p99 = calloc((size_t)b->rounds, sizeof(*r->p99));
			if (!r->v || !r->p99)
				return -ENOMEM;
		}
	}
	return 0;
}

static void teardown(struct bench *b)
{
	unsigned int i;
	int s;

	for (s = 0; s < PS_NR; s++) {
		peers_graph_free(&b->graph[s]);
		peers_graph_free(&b->stamped[s]);
		for (i = 0; i < MAX_SYS; i++) {
			free(b->res[s][i].v);
			free(b->res[s][i].p99);
		}
	}
}

int main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	unsigned int i;
	long r;
	int ret = 2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!b)
		return 1;
	if (parse_opts(b, argc, argv)) {
		usage();
		goto out;
	}
	ret = 1;
	if (setup(b))
		goto out;
	printf("# pto-bench-peers: %ld rounds, each a turn per system in this "
	       "order:", b->rounds);
	for (i = 0; i < b->nr_sys; i++)
		printf(" %s", b->sys[i]->name);
	printf("\n# per turn and shape: one unmeasured run, then the measured "
	       "one; times are wall clock from the first submission to the "
	       "last completion\n");
	peers_describe_shapes();
	printf("# check round: every task stamped, dependencies verified\n");
	for (i = 0; i < b->nr_sys; i++)
		turn(b, i, true);
	print_threads(b);
	for (r = 0; r < b->rounds; r++) {
		printf("# round %ld\n", r + 1);
		for (i = 0; i < b->nr_sys; i++)
			turn(b, i, false);
	}
	report(b);
	ret = b->failed ? 1 : 0;
out:
	teardown(b);
	free(b);
	return ret;
}
