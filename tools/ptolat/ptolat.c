// SPDX-License-Identifier: MIT
/*
 * ptolat - scheduler latency of the PTO2 runtime's tasks, phase by phase,
 * as log2 histograms (in the manner of libbpf-tools' runqlat).
 *
 *   ptolat [-c CLIENT] [-g GRAPH] [-k KERNEL] [-d PTOD] [-a AICORE]
 *          [INTERVAL [COUNT]]
 *
 * Attaches ptolat.bpf.c to the runtime's USDT probes in PTOD (ptod, or
 * any program that links the runtime), the executor's in AICORE
 * (pto-aicore) and, when pto.ko is loaded, its kick and wake
 * tracepoints; prints "READY" once attached, then the histograms every
 * INTERVAL seconds (COUNT times), or once on Ctrl-C.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include <pto-private/parse.h>

#include "ptolat.h"
#include "ptolat.skel.h"

struct opts {
	long long client, graph, kernel;
	char ptod[PATH_MAX];
	char aicore[PATH_MAX];
	unsigned int interval;	/* seconds; 0: until Ctrl-C */
	unsigned int count;	/* 0: no limit */
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static const char *const phase_names[PTOLAT_NR_PHASES] = {
	[PTOLAT_SUBMIT_READY] = "submit -> ready",
	[PTOLAT_READY_DISPATCH] = "ready -> dispatch (queueing)",
	[PTOLAT_DISPATCH_START] = "dispatch -> start",
	[PTOLAT_RUN] = "run",
	[PTOLAT_END_OBSERVED] = "end -> observed",
	[PTOLAT_KICK_WAKE] = "kick -> wake (pto.ko)",
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptolat [-c CLIENT] [-g GRAPH] [-k KERNEL] [-d PTOD] [-a AICORE]\n"
		"              [INTERVAL [COUNT]]\n"
		"  -c, -g, -k  only tasks of this client id, graph tag, kernel id\n"
		"  -d PTOD     the program running the runtime (default: ptod next to this tool's build)\n"
		"  -a AICORE   the program running the cores (default: pto-aicore likewise)\n");
}

/* Default paths: build/tools/ptolat/ptolat -> build/daemon/... */
static void default_paths(struct opts *o, const char *argv0)
{
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		snprintf(self, sizeof(self), "%s", argv0);
	else
		self[n] = 0;
	dir = dirname(self);
	snprintf(o->ptod, sizeof(o->ptod), "%s/../../daemon/ptod", dir);
	snprintf(o->aicore, sizeof(o->aicore), "%s/../../daemon/pto-aicore",
		 dir);
}

/* @s as a decimal number from @min to @max into *@out; -EINVAL said. */
static int parse_num(const char *what, const char *s, long long min,
		     long long max, long long *out)
{
	uint64_t v;

	if (pto_parse_dec(s, (uint64_t)min, (uint64_t)max, &v)) {
		fprintf(stderr, "ptolat: bad %s '%s' (%lld .. %lld)\n", what, s,
			min, max);
		return -EINVAL;
	}
	*out = (long long)v;
	return 0;
}

/*
 * The filters are the probes' arguments: a client id is 32 bits, a kernel
 * id (a func_id) a non-negative int32_t, and a graph tag is compared as
 * the BPF side's long long.
 */
static int parse_args(int argc, char **argv, struct opts *o)
{
	long long v;
	int c, ret = 0;

	o->client = o->graph = o->kernel = -1;
	default_paths(o, argv[0]);
	while ((c = getopt(argc, argv, "c:g:k:d:a:h")) != -1) {
		switch (c) {
		case 'c':
			ret = parse_num("-c", optarg, 0, UINT32_MAX, &o->client);
			break;
		case 'g':
			ret = parse_num("-g", optarg, 0, LLONG_MAX, &o->graph);
			break;
		case 'k':
			ret = parse_num("-k", optarg, 0, INT32_MAX, &o->kernel);
			break;
		case 'd':
			snprintf(o->ptod, sizeof(o->ptod), "%s", optarg);
			break;
		case 'a':
			snprintf(o->aicore, sizeof(o->aicore), "%s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
		if (ret)
			return ret;
	}
	if (optind < argc) {
		if (parse_num("interval", argv[optind++], 1, 86400, &v))
			return -EINVAL;
		o->interval = (unsigned int)v;
	}
	if (optind < argc) {
		if (parse_num("count", argv[optind++], 1, UINT_MAX, &v))
			return -EINVAL;
		o->count = (unsigned int)v;
	}
	if (optind < argc) {
		fprintf(stderr, "ptolat: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int attach_usdt(struct bpf_program *p, const char *bin,
		       const char *prov, const char *name, struct bpf_link **l)
{
	*l = bpf_program__attach_usdt(p, -1, bin, prov, name, NULL);
	if (!*l) {
		int err = -errno;

		fprintf(stderr, "ptolat: %s:%s:%s: %s\n", bin, prov, name,
			strerror(-err));
		return err;
	}
	return 0;
}

#define NR_USDT 7
#define NR_LINKS (NR_USDT + 2)

static int attach_all(struct ptolat_bpf *s, const struct opts *o,
		      struct bpf_link **l)
{
	const struct {
		struct bpf_program *prog;
		const char *bin, *prov, *name;
	} usdt[NR_USDT] = {
		{ s->progs.task_submit, o->ptod, "pto2", "task_submit" },
		{ s->progs.task_ready, o->ptod, "pto2", "task_ready" },
		{ s->progs.task_dispatch, o->ptod, "pto2", "task_dispatch" },
		{ s->progs.task_complete, o->ptod, "pto2", "task_complete" },
		{ s->progs.task_done, o->ptod, "pto2", "task_done" },
		{ s->progs.exec_start, o->aicore, "pto_aicore", "task_start" },
		{ s->progs.exec_end, o->aicore, "pto_aicore", "task_end" },
	};
	int i, ret;

	for (i = 0; i < NR_USDT; i++) {
		ret = attach_usdt(usdt[i].prog, usdt[i].bin, usdt[i].prov,
				  usdt[i].name, &l[i]);
		if (ret)
			return ret;
	}
	/* the device's side only where pto.ko is loaded */
	if (access("/sys/kernel/tracing/events/pto", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/pto", F_OK)) {
		fprintf(stderr, "ptolat: no pto tracepoints (pto.ko not loaded): no kick -> wake\n");
		return 0;
	}
	l[NR_USDT] = bpf_program__attach(s->progs.pto_kick);
	l[NR_USDT + 1] = l[NR_USDT] ?
		bpf_program__attach(s->progs.pto_wake) : NULL;
	if (!l[NR_USDT + 1])
		fprintf(stderr, "ptolat: pto.ko's tracepoints not attached: no kick -> wake\n");
	return 0;
}

static void print_stars(unsigned int v, unsigned int max)
{
	unsigned int i, n = max ? (v * 40 + max - 1) / max : 0;

	putchar('|');
	for (i = 0; i < 40; i++)
		putchar(i < n ? '*' : ' ');
	putchar('|');
}

static void print_hist(const char *name, struct ptolat_hist *h)
{
	unsigned int i, max = 0, last = 0, total = 0;

	for (i = 0; i < PTOLAT_SLOTS; i++) {
		total += h->slots[i];
		if (h->slots[i] > max)
			max = h->slots[i];
		if (h->slots[i])
			last = i;
	}
	printf("%s: %u\n", name, total);
	if (!total)
		return;
	printf("%24s : %-10s %s\n", "usecs", "count", "distribution");
	for (i = 0; i <= last; i++) {
		unsigned long long lo = i ? 1ULL << (i - 1) : 0;
		unsigned long long hi = (1ULL << i) - 1;

		printf("%10llu -> %-10llu : %-10u ", lo, hi, h->slots[i]);
		print_stars(h->slots[i], max);
		putchar('\n');
	}
}

static void print_all(struct ptolat_bpf *s)
{
	int i;

	for (i = 0; i < PTOLAT_NR_PHASES; i++) {
		struct ptolat_hist h = s->bss->hists[i];

		/* take and clear: interval output shows each interval */
		memset(&s->bss->hists[i], 0, sizeof(h));
		print_hist(phase_names[i], &h);
		putchar('\n');
	}
	fflush(stdout);
}

static int run(struct ptolat_bpf *s, const struct opts *o)
{
	unsigned int n = 0;

	printf("READY: tracing pto task phases%s\n",
	       o->interval ? "" : ", Ctrl-C to end");
	fflush(stdout);
	for (;;) {
		sleep(o->interval ? o->interval : 1);
		if (o->interval && !exiting) {
			print_all(s);
			if (o->count && ++n >= o->count)
				return 0;
		}
		if (exiting)
			break;
	}
	if (!o->interval)
		print_all(s);
	return 0;
}

static int setup_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[NR_LINKS] = { 0 };
	struct ptolat_bpf *s;
	struct opts o;
	int i, ret;

	memset(&o, 0, sizeof(o));
	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	ret = setup_signals();
	if (ret)
		return 1;
	s = ptolat_bpf__open();
	if (!s) {
		fprintf(stderr, "ptolat: cannot open the BPF object: %s\n",
			strerror(errno));
		return 1;
	}
	s->rodata->targ_client = o.client;
	s->rodata->targ_graph = o.graph;
	s->rodata->targ_kernel = o.kernel;
	ret = ptolat_bpf__load(s);
	if (ret)
		fprintf(stderr, "ptolat: cannot load the BPF program: %s\n",
			strerror(-ret));
	else
		ret = attach_all(s, &o, links);
	if (!ret)
		ret = run(s, &o);
	for (i = 0; i < NR_LINKS; i++)
		bpf_link__destroy(links[i]);
	ptolat_bpf__destroy(s);
	return ret ? 1 : 0;
}
