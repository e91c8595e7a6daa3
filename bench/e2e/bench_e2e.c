// SPDX-License-Identifier: MIT
/*
 * bench_e2e.c - end-to-end graph benchmarks: pto-bench-e2e (a libpto
 * client of a running ptod) and pto-bench-e2e-sim (the same graphs on the
 * PTO2 runtime core over the in-process sim device, -DBENCH_SIM).
 *
 * Graphs (every task is an AIV task; tensors are 64-byte slices of the
 * client's own buffers, so nothing is allocated from the runtime's heap):
 *
 *   independent_noop  N independent no-op tasks, each with one OUTPUT
 *                     tensor of its own: per_task_us = graph wall / N
 *   chain_inout       L no-op tasks each INOUT on the same tensor (a serial
 *                     chain): per_hop_us = graph wall / L
 *   fan72             a producer (OUTPUT t0), 72 consumers (INPUT t0,
 *                     OUTPUT slot i of a 72-slot tensor), and one fan-in
 *                     task whose single INPUT is the whole 72-slot tensor:
 *                     the TensorMap finds all 72 producers by overlap, so
 *                     this is a true 72-way fan-in in one task (74 tasks)
 *   fan72_tree16      the same fan-out, fan-in as a reduction tree whose
 *                     tasks have at most PTO2_MAX_TASK_PARAMS (16) params:
 *                     5 tasks of <= 15 slot INPUTs + 1 OUTPUT, then one
 *                     task over the 5 partials (79 tasks)
 *
 * The independent and chain tasks are submitted in scopes of 1024 (one
 * scope at the default sizes; a scope with more tasks than the task
 * window would deadlock the runtime, see SCOPE_TASKS). The fan graphs
 * check their result (72 marks summed) after every run.
 * The wall time of a run is begin .. every task completed: pto_run() on
 * the libpto side; pto2_runtime_orchestrate() + pto2_runtime_wait() on
 * the sim, the orchestration on the calling thread as in a libpto client.
 * Median and p99 (nearest rank: with 15 runs, the largest) are over the
 * runs.
 *
 * pto-bench-e2e-sim alone runs every graph (one unmeasured warm-up run,
 * then R runs) and prints, in microseconds,
 *
 *   sim <graph> <metric> median=M p99=P reps=R
 *
 * (with -g GRAPH -R: only GRAPH, one "sample US" line per run).
 *
 * pto-bench-e2e measures the baseline in the same run, on the same
 * machine: per graph it alternates BLOCKS times between a fresh
 * pto-bench-e2e-sim process (-g GRAPH -R, next to itself) and its own
 * runs over libpto, R / BLOCKS runs each (each block with one warm-up
 * run), so that a phase of contention on the host (TCG guests are noisy)
 * hits both sides alike. It prints its own and the sim lines, then
 *
 *   e2e <graph> <metric> median=M p99=P | sim median=M p99=P | ratio=X
 *
 * with ratio = e2e median / sim median. On pto.ko it also prints, per
 * graph, what its tasks cost in the device's notification counters
 * (sysfs "counters", read around its own blocks of runs, warm-ups
 * included; other clients of the same ptod would count too):
 *
 *   e2e <graph> device per_task kicks=K parks=P wakes=W irqs=I tasks=N
 *
 * Options (defaults): -n TASKS (1000) of the independent graph, -l CHAIN
 * (200) hops, -r REPS (15) runs of those two, -f FAN_REPS (50) runs of
 * each fan graph, -v every run's time; pto-bench-e2e also -b BLOCKS (5),
 * -k KERNEL_SO (noop_kernel.so next to itself), -S SIM_BENCH
 * (pto-bench-e2e-sim next to itself), -s (no sim baseline). $PTO_SOCKET
 * names ptod's socket.
 *
 * The sim side mirrors ptod's defaults: 24 AIC + 48 AIV cores (pto.ko's
 * default), 3 scheduler threads, task window 16384, heap 32 MiB, cores
 * spinning at most 2000 polls or 4 us before they park, as pto-aicore's do
 * (bench/common/bench_sim.c, shared with bench/peers).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>
#include <pto-private/parse.h>

#ifdef BENCH_SIM
#include "bench_sim.h"
#define LABEL "sim"
#else
#include <pto/libpto.h>
#include <pto-private/wire.h>
#define LABEL "e2e"
#endif

#include "bench_kernels.h"
#include "bench_stat.h"

#define FAN		72
#define TREE_WIDTH	(PTO2_MAX_TASK_PARAMS - 1)	/* inputs + 1 output */
#define TREE_GROUPS	((FAN + TREE_WIDTH - 1) / TREE_WIDTH)
#define MAX_REPS	10000

static long n_indep = 1000, chain_len = 200, reps = 15, fan_reps = 50;
static int verbose;

/* ---- Backends ----------------------------------------------------------- */

struct bbuf {
	uint64_t dev;	/* device address */
	void *host;	/* this process's view */
	size_t len;
};

#ifdef BENCH_SIM

#define SIM_DATA	(1ull << 20)	/* + the independent graph's slots */

static struct bench_sim *bs;

static int be_open(void)
{
	struct bench_sim_info in;
	int ret;

	ret = bench_sim_open(SIM_DATA + (uint64_t)n_indep * BENCH_SLOT_BYTES,
			     bench_kernel, BK_NR, &bs);
	if (ret)
		return ret;
	bench_sim_info(bs, &in);
	printf("# sim: runtime core + in-process sim device, %u AIC + %u AIV cores "
	       "on %u host threads, %u scheduler threads, task window %u, heap %llu MiB\n",
	       in.nr_aic, in.nr_aiv, in.core_threads, in.sched_threads,
	       in.task_window, in.heap_mib);
	return 0;
}

static int be_alloc(size_t len, struct bbuf *b)
{
	b->len = len;
	return bench_sim_alloc(bs, len, &b->dev, &b->host);
}

static int be_run(pto2_orchestration_entry_fn entry, uint64_t *args, int argc,
		  char *msg, size_t msglen)
{
	return bench_sim_run(bs, entry, args, argc, msg, msglen);
}

static void be_close(void)
{
	bench_sim_close(bs);
}

#else /* libpto */

static pto_client *cl;
static char kernel_so[PATH_MAX + 64];

static int be_open(void)
{
	int ret, k;

	ret = pto_connect(NULL, &cl);
	if (ret) {
		fprintf(stderr, "pto_connect: %s\n", pto_last_error(NULL));
		return ret;
	}
	for (k = 0; k < BK_NR; k++) {
		ret = pto_kernel_load(cl, k, PTO2_WORKER_VECTOR, kernel_so);
		if (ret) {
			fprintf(stderr, "kernel %s: %s\n", kernel_so,
				pto_last_error(cl));
			return ret;
		}
	}
	printf("# e2e: libpto client of ptod (%s), device %u AIC + %u AIV cores, kernels %s\n",
	       getenv("PTO_SOCKET") ? getenv("PTO_SOCKET") : "/run/pto/ptod.sock",
	       pto_nr_aic(cl), pto_nr_aiv(cl), kernel_so);
	return 0;
}

static int be_alloc(size_t len, struct bbuf *b)
{
	pto_buf *pb;
	int ret = pto_buf_alloc(cl, len, &pb);

	if (ret) {
		fprintf(stderr, "GM alloc %zu: %s\n", len, pto_last_error(cl));
		return ret;
	}
	b->dev = pto_buf_dev_addr(pb);
	b->host = pto_buf_ptr(pb);
	b->len = len;
	return 0;
}

static int be_run(pto2_orchestration_entry_fn entry, uint64_t *args, int argc,
		  char *msg, size_t msglen)
{
	msg[0] = 0;
	return pto_run(cl, entry, args, argc, msg, msglen);
}

static void be_close(void)
{
	if (cl)
		pto_disconnect(cl);	/* frees the buffers too */
}

#endif

/* ---- Graphs (orchestration code, the same on both sides) ----------------- */

static Tensor slot_tensor(uint64_t addr)
{
	uint64_t shape[1] = { BENCH_SLOT_U64 };

	return make_tensor_external((void *)(uintptr_t)addr, shape, 1,
				    PTO_DT_UINT64);
}

/*
 * Tasks go into scopes of at most SCOPE_TASKS (one scope with the default
 * sizes). A scope with more tasks than the task window (16384 in ptod)
 * deadlocks: a task keeps its slot until its scope ends, and the
 * orchestrator cannot end the scope while it waits for a free slot (the
 * runtime fails the run with -EDEADLK).
 */
#define SCOPE_TASKS	1024

/* args: slots base, n */
static int orch_indep(PTO2Runtime *r, uint64_t *args, int argc)
{
	uint64_t i, j;

	(void)argc;
	for (i = 0; i < args[1]; i += SCOPE_TASKS) {
		PTO2_SCOPE(r) {
			for (j = i; j < args[1] && j < i + SCOPE_TASKS; j++) {
				Tensor t = slot_tensor(args[0] + j * BENCH_SLOT_BYTES);
				PTOParam p = make_output_param(&t);

				pto2_rt_submit_task(r, BK_NOOP, PTO2_WORKER_VECTOR,
						    &p, 1);
			}
		}
	}
	return 0;
}

/* args: the tensor, length */
static int orch_chain(PTO2Runtime *r, uint64_t *args, int argc)
{
	Tensor t = slot_tensor(args[0]);
	uint64_t i, j;

	(void)argc;
	for (i = 0; i < args[1]; i += SCOPE_TASKS) {
		PTO2_SCOPE(r) {
			for (j = i; j < args[1] && j < i + SCOPE_TASKS; j++) {
				PTOParam p = make_inout_param(&t);

				pto2_rt_submit_task(r, BK_NOOP, PTO2_WORKER_VECTOR,
						    &p, 1);
			}
		}
	}
	return 0;
}

/* args: t0, slots[FAN], partials[TREE_GROUPS], result, tree? */
static int orch_fan(PTO2Runtime *r, uint64_t *args, int argc)
{
	uint64_t shape[2] = { FAN, BENCH_SLOT_U64 };
	uint64_t pshape[2] = { TREE_GROUPS, BENCH_SLOT_U64 };
	uint64_t one[2] = { 1, BENCH_SLOT_U64 };
	Tensor t0 = slot_tensor(args[0]);
	Tensor slots = make_tensor_external((void *)(uintptr_t)args[1], shape, 2,
					    PTO_DT_UINT64);
	Tensor parts = make_tensor_external((void *)(uintptr_t)args[2], pshape, 2,
					    PTO_DT_UINT64);
	Tensor res = slot_tensor(args[3]);
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	Tensor v[PTO2_MAX_TASK_PARAMS];
	int i, g;

	(void)argc;
	p[0] = make_output_param(&t0);
	pto2_rt_submit_task(r, BK_NOOP, PTO2_WORKER_VECTOR, p, 1);
	for (i = 0; i < FAN; i++) {
		uint64_t off[2] = { (uint64_t)i, 0 };

		v[0] = pto_tensor_view(&slots, one, off);
		p[0] = make_input_param(&t0);
		p[1] = make_output_param(&v[0]);
		pto2_rt_submit_task(r, BK_MARK, PTO2_WORKER_VECTOR, p, 2);
	}
	if (!args[4]) {
		/* one task: its INPUT overlaps all 72 slots */
		p[0] = make_input_param(&slots);
		p[1] = make_output_param(&res);
		p[2] = make_scalar_param(FAN);
		pto2_rt_submit_task(r, BK_SUM_SLOTS, PTO2_WORKER_VECTOR, p, 3);
		return 0;
	}
	for (g = 0; g < TREE_GROUPS; g++) {
		uint64_t poff[2] = { (uint64_t)g, 0 };
		Tensor pv;
		int k = 0;

		for (i = g * TREE_WIDTH; i < FAN && i < (g + 1) * TREE_WIDTH; i++) {
			uint64_t off[2] = { (uint64_t)i, 0 };

			v[k] = pto_tensor_view(&slots, one, off);
			p[k] = make_input_param(&v[k]);
			k++;
		}
		pv = pto_tensor_view(&parts, one, poff);
		p[k] = make_output_param(&pv);
		pto2_rt_submit_task(r, BK_SUM_PTRS, PTO2_WORKER_VECTOR, p, k + 1);
	}
	for (g = 0; g < TREE_GROUPS; g++) {
		uint64_t poff[2] = { (uint64_t)g, 0 };

		v[g] = pto_tensor_view(&parts, one, poff);
		p[g] = make_input_param(&v[g]);
	}
	p[TREE_GROUPS] = make_output_param(&res);
	pto2_rt_submit_task(r, BK_SUM_PTRS, PTO2_WORKER_VECTOR, p,
			    TREE_GROUPS + 1);
	return 0;
}

/* ---- Measurement ----------------------------------------------------------- */

enum { G_INDEP, G_CHAIN, G_FAN, G_TREE, G_NR };

static const char *const gname[G_NR] = {
	"independent_noop", "chain_inout", "fan72", "fan72_tree16",
};
/* metric per unit of work (graph time / gdiv()), NULL: graph time only */
static const char *const gunit[G_NR] = {
	"per_task_us", "per_hop_us", NULL, NULL,
};

static long gdiv(int g)
{
	return g == G_INDEP ? n_indep : g == G_CHAIN ? chain_len : 1;
}

static long greps(int g)
{
	return g == G_INDEP || g == G_CHAIN ? reps : fan_reps;
}

#ifdef BENCH_SIM
static int graph_by_name(const char *name)
{
	int g;

	for (g = 0; g < G_NR; g++)
		if (!strcmp(name, gname[g]))
			return g;
	return -1;
}
#endif

/* median and p99 (nearest rank) of @s[@n] * @scale */
static struct bench_stat stats(const double *s, long n, double scale)
{
	struct bench_stat st;

	bench_stat(s, n, scale, &st);
	return st;
}

/* "<label> <graph> <metric> median=.. p99=.. reps=.." for each metric */
static void report(const char *label, int g, const double *s, long n)
{
	struct bench_stat st;

	if (gunit[g]) {
		st = stats(s, n, 1.0 / (double)gdiv(g));
		printf("%s %s %s median=%.2f p99=%.2f reps=%ld\n", label, gname[g],
		       gunit[g], st.median, st.p99, n);
	}
	st = stats(s, n, 1.0);
	printf("%s %s graph_us median=%.2f p99=%.2f reps=%ld\n", label, gname[g],
	       st.median, st.p99, n);
}

static struct bbuf b_slots, b_chain, b_t0, b_fan, b_parts, b_res;

static int fan_check(int prepare)
{
	uint64_t *res = b_res.host;

	if (prepare) {
		memset(b_fan.host, 0, b_fan.len);
		memset(b_parts.host, 0, b_parts.len);
		memset(b_res.host, 0, b_res.len);
		return 0;
	}
	return res[0] != FAN;
}

static int alloc_bufs(void)
{
	int ret;

	if ((ret = be_alloc((size_t)n_indep * BENCH_SLOT_BYTES, &b_slots)) ||
	    (ret = be_alloc(4096, &b_chain)) ||
	    (ret = be_alloc(4096, &b_t0)) ||
	    (ret = be_alloc((size_t)FAN * BENCH_SLOT_BYTES, &b_fan)) ||
	    (ret = be_alloc((size_t)TREE_GROUPS * BENCH_SLOT_BYTES, &b_parts)) ||
	    (ret = be_alloc(4096, &b_res)))
		return ret;
	return 0;
}

/*
 * Run graph @g once unmeasured (warm-up), then @n times; wall times (us)
 * into @s. The fan graphs' result is checked after every run.
 */
/* The orchestration of graph @g and its arguments: their count. */
static int graph_args(int g, pto2_orchestration_entry_fn *entry,
		      uint64_t args[5])
{
	if (g == G_INDEP || g == G_CHAIN) {
		*entry = g == G_INDEP ? orch_indep : orch_chain;
		args[0] = g == G_INDEP ? b_slots.dev : b_chain.dev;
		args[1] = (uint64_t)gdiv(g);	/* tasks or hops */
		return 2;
	}
	*entry = orch_fan;
	args[0] = b_t0.dev;
	args[1] = b_fan.dev;
	args[2] = b_parts.dev;
	args[3] = b_res.dev;
	args[4] = g == G_TREE;
	return 5;
}

static int run_graph(int g, long n, double *s)
{
	pto2_orchestration_entry_fn entry;
	uint64_t args[5];
	char msg[4096];
	int argc = graph_args(g, &entry, args), fan = g == G_FAN || g == G_TREE;
	long i;

	for (i = -1; i < n; i++) {
		double t0, t1;
		int ret;

		if (fan)
			fan_check(1);
		t0 = bench_now_us();
		ret = be_run(entry, args, argc, msg, sizeof(msg));
		t1 = bench_now_us();
		if (ret) {
			fprintf(stderr, LABEL " %s: run %ld failed: %d (%s) %s\n",
				gname[g], i, ret, strerror(-ret), msg);
			return ret;
		}
		if (fan && fan_check(0)) {
			fprintf(stderr, LABEL " %s: run %ld: wrong result %llu (want %d)\n",
				gname[g], i,
				(unsigned long long)*(uint64_t *)b_res.host, FAN);
			return -EIO;
		}
		if (i >= 0)
			s[i] = t1 - t0;
		if (verbose)
			printf("# " LABEL " %s run %ld: %.1f us\n", gname[g], i,
			       t1 - t0);
	}
	return 0;
}

/* ---- Main ---------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
#ifdef BENCH_SIM
		"usage: pto-bench-e2e-sim [-g GRAPH -R]"
#else
		"usage: pto-bench-e2e [-b BLOCKS] [-k KERNEL_SO] [-S SIM_BENCH | -s]"
#endif
		" [-n TASKS] [-l CHAIN] [-r REPS] [-f FAN_REPS] [-v]\n");
}

static long parse_count(const char *s)
{
	uint64_t v;

	if (pto_parse_dec(s, 1, 10000000, &v)) {
		usage();
		exit(2);
	}
	return (long)v;
}

#ifndef BENCH_SIM
static char sim_path[PATH_MAX + 64];
static int sim_described;

/* @n runs of graph @g by the sim baseline: wall times (us) into @s. */
static int run_sim(int g, long n, double *s)
{
	char cmd[PATH_MAX * 2], line[512];
	long got = 0;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' -g %s -R -n %ld -l %ld -r %ld%s",
		 sim_path, gname[g], n_indep, chain_len, n, verbose ? " -v" : "");
	fflush(stdout);
	f = popen(cmd, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		double v;

		if (sscanf(line, "sample %lf", &v) == 1) {
			if (got < n)
				s[got++] = v;
		} else if (verbose ||
			   (!sim_described && !strncmp(line, "# sim:", 6))) {
			fputs(line, stdout);
			sim_described = 1;
		}
	}
	st = pclose(f);
	if (st || got != n) {
		fprintf(stderr, "%s: status %d, %ld of %ld samples\n", cmd, st,
			got, n);
		return -EIO;
	}
	return 0;
}
#endif

/* What the command line sets besides the sizes (n_indep ... verbose). */
struct opts {
	long blocks;		/* e2e: alternations with the sim baseline */
	int no_sim;		/* e2e: -s */
	int g_only, raw;	/* sim: -g GRAPH -R */
};

#ifndef BENCH_SIM
/* noop_kernel.so and pto-bench-e2e-sim next to this program. */
static void default_paths(void)
{
	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return;
	self[len] = 0;
	*strrchr(self, '/') = 0;
	snprintf(kernel_so, sizeof(kernel_so), "%s/noop_kernel.so", self);
	snprintf(sim_path, sizeof(sim_path), "%s/pto-bench-e2e-sim", self);
}
#define OPTS "n:l:r:f:vb:k:S:s"
#else
#define OPTS "n:l:r:f:vg:R"
#endif

/* The option of this program's own (not shared by both): 0 or -1. */
static int parse_own_opt(int opt, struct opts *o)
{
	switch (opt) {
#ifndef BENCH_SIM
	case 'k': snprintf(kernel_so, sizeof(kernel_so), "%s", optarg); break;
	case 'S': snprintf(sim_path, sizeof(sim_path), "%s", optarg); break;
	case 's': o->no_sim = 1; break;
#else
	case 'g':
		o->g_only = graph_by_name(optarg);
		if (o->g_only < 0) {
			fprintf(stderr, "unknown graph %s\n", optarg);
			return -1;
		}
		break;
	case 'R': o->raw = 1; break;
#endif
	default: usage(); return -1;
	}
	return 0;
}

/* The command line: 0, or -1 after the usage (exit status 2). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int opt;

	*o = (struct opts){ .blocks = 5, .g_only = -1 };
	while ((opt = getopt(argc, argv, OPTS)) != -1) {
		switch (opt) {
		case 'n': n_indep = parse_count(optarg); break;
		case 'l': chain_len = parse_count(optarg); break;
		case 'r': reps = parse_count(optarg); break;
		case 'f': fan_reps = parse_count(optarg); break;
		case 'v': verbose = 1; break;
		case 'b': o->blocks = parse_count(optarg); break;
		default:
			if (parse_own_opt(opt, o))
				return -1;
		}
	}
	if (reps > MAX_REPS || fan_reps > MAX_REPS || optind != argc ||
	    (o->raw && o->g_only < 0)) {
		usage();
		return -1;
	}
	if (o->raw)	/* -g G -R: reps runs of G, one "sample US" line each */
		fan_reps = reps;
	return 0;
}

#ifdef BENCH_SIM
/* Every graph (or -g's), "sim ..." lines or (-R) one sample per run. */
static int bench_sim(const struct opts *o, double *s)
{
	int g, ret;
	long i;

	for (g = 0; g < G_NR; g++) {
		if (o->g_only >= 0 && g != o->g_only)
			continue;
		ret = run_graph(g, greps(g), s);
		if (ret)
			return ret;
		if (!o->raw) {
			report(LABEL, g, s, greps(g));
			continue;
		}
		for (i = 0; i < greps(g); i++)
			printf("sample %.3f\n", s[i]);
	}
	return 0;
}
#else
/* [graph][unit, graph][e2e, sim] */
static struct bench_stat summary[G_NR][2][2];
static int have_sim[G_NR];

enum { DC_KICKS, DC_PARKS, DC_WAKES, DC_IRQS, DC_NR };
static const char *const dc_name[DC_NR] = { "kicks", "parks", "wakes", "irqs" };

/*
 * @v[] from the device's notification counters: the sysfs "counters" of
 * the pto.ko device this client (and so ptod) uses, $PTO_DEVICE as libpto
 * reads it (default /dev/pto0): how many system calls a task cost the
 * AICPU and the executor. 0, or -1 if they cannot be read whole (the
 * user-mode device, PTO_DEVICE=user, is left out).
 */
static int dev_counters(unsigned long long *v)
{
	const char *dev = getenv("PTO_DEVICE"), *base;
	char path[PATH_MAX], name[64];
	unsigned long long x;
	int i, found = 0;
	FILE *f;

	if (!dev || !*dev)
		dev = "/dev/pto0";
	if (!strcmp(dev, PTO_DEVICE_USER))
		return -1;
	base = strrchr(dev, '/');
	snprintf(path, sizeof(path), "/sys/class/misc/%s/counters",
		 base ? base + 1 : dev);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", name, &x) == 2)
		for (i = 0; i < DC_NR; i++)
			if (!strcmp(name, dc_name[i])) {
				v[i] = x;
				found |= 1 << i;
			}
	fclose(f);
	return found == (1 << DC_NR) - 1 ? 0 : -1;
}

/* tasks in one run of graph @g */
static long gtasks(int g)
{
	return g == G_FAN ? 2 + FAN : g == G_TREE ? 2 + FAN + TREE_GROUPS :
	       gdiv(g);
}

/* "e2e <graph> device per_task kicks=.. parks=.. wakes=.. irqs=.." */
static void report_counters(int g, const unsigned long long *sum, long tasks)
{
	int i;

	printf("e2e %s device per_task", gname[g]);
	for (i = 0; i < DC_NR; i++)
		printf(" %s=%.3f", dc_name[i], (double)sum[i] / (double)tasks);
	printf(" tasks=%ld\n", tasks);
}

/*
 * Graph @g: blocks of runs alternating between the sim baseline (into
 * @s_sim) and ours (into @s), then both reports and the summary's figures.
 */
static int bench_e2e_graph(const struct opts *o, int g, double *s,
			   double *s_sim)
{
	long total = greps(g), per = (total + o->blocks - 1) / o->blocks;
	unsigned long long c0[DC_NR], c1[DC_NR], sum[DC_NR] = { 0 };
	long done = 0, k, tasks = 0;
	int sim_ok = !o->no_sim, counted = 1, ret, i;

	while (done < total) {
		k = total - done < per ? total - done : per;
		if (sim_ok && run_sim(g, k, s_sim + done)) {
			fprintf(stderr, "sim baseline of %s failed; e2e only\n",
				gname[g]);
			sim_ok = 0;
		}
		/* only ours: the sim baseline runs without the device */
		counted = counted && !dev_counters(c0);
		ret = run_graph(g, k, s + done);
		if (ret)
			return ret;
		counted = counted && !dev_counters(c1);
		for (i = 0; counted && i < DC_NR; i++)
			sum[i] += c1[i] - c0[i];
		tasks += (k + 1) * gtasks(g);	/* with the warm-up run */
		done += k;
	}
	report("e2e", g, s, total);
	if (counted)
		report_counters(g, sum, tasks);
	summary[g][0][0] = stats(s, total, 1.0 / (double)gdiv(g));
	summary[g][1][0] = stats(s, total, 1.0);
	if (sim_ok) {
		report("sim", g, s_sim, total);
		summary[g][0][1] = stats(s_sim, total, 1.0 / (double)gdiv(g));
		summary[g][1][1] = stats(s_sim, total, 1.0);
		have_sim[g] = 1;
	}
	return 0;
}

static void print_summary(void)
{
	int g, m;

	printf("# summary: ratio = e2e median / sim median\n");
	for (g = 0; g < G_NR; g++) {
		for (m = 0; m < 2; m++) {
			struct bench_stat *e = &summary[g][m][0], *b = &summary[g][m][1];

			if (m == 0 && !gunit[g])
				continue;
			printf("e2e %s %s median=%.2f p99=%.2f", gname[g],
			       m ? "graph_us" : gunit[g], e->median, e->p99);
			if (have_sim[g] && b->median > 0)
				printf(" | sim median=%.2f p99=%.2f | ratio=%.2f\n",
				       b->median, b->p99, e->median / b->median);
			else
				printf(" | sim n/a | ratio=n/a\n");
		}
	}
}

static int bench_e2e(const struct opts *o, double *s, double *s_sim)
{
	int g, ret;

	printf("# per graph, %ld blocks alternating sim baseline (a fresh "
	       "pto-bench-e2e-sim process each, 1 warm-up run) and e2e (1 warm-up "
	       "run), so both see the same machine conditions\n", o->blocks);
	for (g = 0; g < G_NR; g++) {
		ret = bench_e2e_graph(o, g, s, s_sim);
		if (ret)
			return ret;
	}
	print_summary();
	return 0;
}
#endif

int main(int argc, char **argv)
{
	double *s[2] = { NULL, NULL };
	struct opts o;
	long maxreps;
	int ret;

#ifndef BENCH_SIM
	default_paths();
#endif
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_opts(argc, argv, &o))
		return 2;
	maxreps = reps > fan_reps ? reps : fan_reps;
	s[0] = calloc((size_t)maxreps, sizeof(double));
	s[1] = calloc((size_t)maxreps, sizeof(double));
	if (!s[0] || !s[1])
		return 1;
	if (!o.raw)
		printf("# graphs: independent_noop %ld tasks, chain_inout %ld hops, "
		       "%ld runs each; fan72 (74 tasks), fan72_tree16 (%d tasks) "
		       "%ld runs each; times in us, p99 = nearest rank\n",
		       n_indep, chain_len, reps, 2 + FAN + TREE_GROUPS, fan_reps);
	ret = be_open();
	if (!ret)
		ret = alloc_bufs();
#ifdef BENCH_SIM
	if (!ret)
		ret = bench_sim(&o, s[0]);
#else
	if (!ret)
		ret = bench_e2e(&o, s[0], s[1]);
#endif
	be_close();
	free(s[0]);
	free(s[1]);
	return ret ? 1 : 0;
}
