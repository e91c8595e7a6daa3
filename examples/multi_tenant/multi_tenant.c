// SPDX-License-Identifier: MIT
/*
 * multi_tenant - K clients of one ptod at once, each with its own example
 *
 *   multi_tenant [-k K] [-e PTO_E2E] [-t SECONDS] [SPEC...]
 *
 * SPEC is vector[:CASE], bgemm or pa[:CASE] (e.g. pa:Case1); the specs
 * are handed out to the K clients round robin. Defaults: K = 4 and the
 * specs vector, bgemm, pa:Case1, pa:Case2.
 *
 * Each client is a separate process running the end-to-end client of the
 * VM tests (build/selftests/e2e/pto_e2e, found next to this program's
 * build directory, or -e): it connects to ptod ($PTO_SOCKET), uploads the
 * example's kernel .so files, runs the example's unchanged orch.so through
 * libpto and checks the output against the example's double-precision
 * golden. All clients are forked first and held at a gate; the gate opens
 * for all of them at once, so they connect and submit concurrently. Each
 * has its own GM buffers, runtime and submission stream in ptod; their
 * runs execute at the same time on disjoint partitions of the device's
 * blocks (see Documentation/runtime.rst).
 *
 * Output: each client's own lines (CASE ...: PASS|FAIL ...), then one line
 * per client
 *
 *   client I [SPEC]: PASS|FAIL cases=P/N time=T ms graphs=G ms
 *
 * T: from the gate opening to the client's exit (connect, kernel uploads,
 * inputs and golden, waiting for the device, runs, checks); G: the sum of
 * its graphs' end-to-end times as the client measured them (pto_run(),
 * including the wait for the device behind other clients' runs). Then a
 * total line with the wall time of the whole demo.
 * Exits 1 if any client failed (or timed out: -t, default 120 s), 2 on
 * bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/parse.h>

#define MAX_CLIENTS	64
#define MAX_ARGS	8

struct client {
	const char *spec;
	char *argv[MAX_ARGS];
	pid_t pid;
	int fd;			/* its stdout + stderr, -1 after EOF */
	char *out;		/* everything it printed */
	size_t len, cap;
	double end_ms;
	int status;		/* wait status */
	int done, killed;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void usage(void)
{
	fprintf(stderr, "usage: multi_tenant [-k K] [-e PTO_E2E] [-t SECONDS] "
		"[vector[:CASE] | bgemm | pa[:CASE]]...\n");
}

/* "pa:Case1" -> pto_e2e pa Case1 */
static int build_argv(struct client *c, const char *e2e, const char *spec)
{
	char *s = strdup(spec), *colon;
	int n = 0;

	if (!s)
		return -ENOMEM;
	colon = strchr(s, ':');
	if (colon)
		*colon++ = 0;
	if (strcmp(s, "vector") && strcmp(s, "bgemm") && strcmp(s, "pa")) {
		fprintf(stderr, "unknown example '%s'\n", s);
		return -EINVAL;
	}
	if (colon && !strcmp(s, "bgemm")) {
		fprintf(stderr, "bgemm has one case: give no :CASE\n");
		return -EINVAL;
	}
	c->spec = spec;
	c->argv[n++] = (char *)e2e;
	c->argv[n++] = s;
	if (colon && *colon)
		c->argv[n++] = colon;
	c->argv[n] = NULL;
	return 0;
}

static void append(struct client *c, const char *buf, size_t n)
{
	if (c->len + n + 1 > c->cap) {
		size_t cap = (c->len + n + 1) * 2;
		char *p = realloc(c->out, cap);

		if (!p)
			return;	/* keep what we have */
		c->out = p;
		c->cap = cap;
	}
	memcpy(c->out + c->len, buf, n);
	c->len += n;
	c->out[c->len] = 0;
}

/* CASE lines: passed, total and the sum of their "[T ms end to end]" */
static void count_cases(const struct client *c, int *pass, int *total,
			double *graph_ms)
{
	const char *p = c->out;

	*pass = *total = 0;
	*graph_ms = 0;
	while (p && (p = strstr(p, "CASE ")) != NULL) {
		const char *eol = strchr(p, '\n');
		const char *colon = strstr(p, ": ");

		if (colon && (!eol || colon < eol)) {
			const char *br = strstr(p, " [");
			double ms;

			(*total)++;
			if (!strncmp(colon + 2, "PASS", 4))
				(*pass)++;
			if (br && (!eol || br < eol) &&
			    sscanf(br, " [%lf ms end to end]", &ms) == 1)
				*graph_ms += ms;
		}
		p = eol ? eol + 1 : p + 5;
	}
}

struct opts {
	int k;
	const char **specs;
	int nspecs;
	double timeout_s;
	char e2e[PATH_MAX + 64];
};

/* Options into @o: 0, or -1 and the exit status in *@exit_code. */
static int parse_opts(int argc, char **argv, struct opts *o, int *exit_code)
{
	static const char *def_specs[] = { "vector", "bgemm", "pa:Case1", "pa:Case2" };
	char self[PATH_MAX], *end;
	ssize_t n;
	uint64_t k;
	int opt;

	*o = (struct opts){ .k = 4, .specs = def_specs, .nspecs = 4, .timeout_s = 120 };
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		*strrchr(self, '/') = 0;
		/* build/examples/multi_tenant -> build/selftests/e2e */
		snprintf(o->e2e, sizeof(o->e2e), "%s/../../selftests/e2e/pto_e2e", self);
	}
	while ((opt = getopt(argc, argv, "k:e:t:h")) != -1) {
		switch (opt) {
		case 'k':
			if (pto_parse_dec(optarg, 1, MAX_CLIENTS, &k)) {
				fprintf(stderr, "-k: 1..%d\n", MAX_CLIENTS);
				*exit_code = 2;
				return -1;
			}
			o->k = (int)k;
			break;
		case 'e':
			snprintf(o->e2e, sizeof(o->e2e), "%s", optarg);
			break;
		case 't':
			errno = 0;
			o->timeout_s = strtod(optarg, &end);
			if (end == optarg || *end || errno ||
			    !(o->timeout_s > 0) || o->timeout_s > 86400) {
				fprintf(stderr, "-t: seconds, more than 0, at most 86400\n");
				*exit_code = 2;
				return -1;
			}
			break;
		default:
			usage();
			*exit_code = opt == 'h' ? 0 : 2;
			return -1;
		}
	}
	if (optind < argc) {
		o->specs = (const char **)(argv + optind);
		o->nspecs = argc - optind;
	}
	return 0;
}

/* In client @i's child: wait at the gate (EOF on gate[0]), then exec. */
static void __attribute__((noreturn))
client_exec(struct client *cl, int i, int out[2], int gate[2])
{
	char c;
	int j;

	setpgid(0, 0);	/* -t kills its whole group */
	dup2(out[1], 1);
	dup2(out[1], 2);
	close(out[0]);
	close(out[1]);
	close(gate[1]);
	for (j = 0; j < i; j++)
		close(cl[j].fd);
	while (read(gate[0], &c, 1) < 0 && errno == EINTR)
		;
	close(gate[0]);
	execv(cl[i].argv[0], cl[i].argv);
	fprintf(stderr, "exec %s: %s\n", cl[i].argv[0], strerror(errno));
	_exit(127);
}

/* Fork every client, each held at the gate. 0 or -1. */
static int fork_clients(struct client *cl, int k, int gate[2])
{
	int i;

	for (i = 0; i < k; i++) {
		int out[2];

		if (pipe(out))
			return -1;
		cl[i].pid = fork();
		if (cl[i].pid < 0) {
			perror("fork");
			return -1;
		}
		if (cl[i].pid == 0)
			client_exec(cl, i, out, gate);
		close(out[1]);
		cl[i].fd = out[0];
	}
	return 0;
}

/* -t expired or a signal: kill every client's process group. */
static void kill_clients(struct client *cl, int k)
{
	int i;

	for (i = 0; i < k; i++)
		if (!cl[i].done && !cl[i].killed &&
		    (kill(-cl[i].pid, SIGKILL) == 0 ||
		     kill(cl[i].pid, SIGKILL) == 0))
			cl[i].killed = 1;
}

/* Read what the clients behind @pfd printed; close their ends at EOF. */
static void read_outputs(struct client *cl, struct pollfd *pfd,
			 const int *idx, int np)
{
	int i;

	for (i = 0; i < np; i++) {
		struct client *c = &cl[idx[i]];
		char buf[4096];
		ssize_t n;

		if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(c->fd, buf, sizeof(buf));
		if (n > 0) {
			append(c, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		close(c->fd);
		c->fd = -1;
	}
}

/* Reap whoever has exited and closed its output: how many did. */
static int reap_clients(struct client *cl, int k, double t0)
{
	int i, reaped = 0;

	for (i = 0; i < k; i++) {
		struct client *c = &cl[i];

		if (c->done || (c->fd >= 0 && !c->killed))
			continue;
		if (waitpid(c->pid, &c->status, c->fd >= 0 ? WNOHANG : 0) !=
		    c->pid)
			continue;
		if (c->fd >= 0) {
			close(c->fd);
			c->fd = -1;
		}
		c->end_ms = now_ms() - t0;
		c->done = 1;
		reaped++;
	}
	return reaped;
}

/* Collect output until every client has exited. 0 or -1 (poll failed). */
static int collect(struct client *cl, int k, double t0, double timeout_s)
{
	double deadline = t0 + timeout_s * 1e3;
	int left = k;

	while (left) {
		struct pollfd pfd[MAX_CLIENTS];
		int idx[MAX_CLIENTS], np = 0, ms, i;

		for (i = 0; i < k; i++) {
			if (cl[i].fd < 0)
				continue;
			pfd[np].fd = cl[i].fd;
			pfd[np].events = POLLIN;
			idx[np++] = i;
		}
		ms = (int)(deadline - now_ms());
		if (ms <= 0 || interrupted) {
			kill_clients(cl, k);
			interrupted = 0;
			ms = 1000;
			deadline = now_ms() + 5e3;
		}
		if (np && poll(pfd, (nfds_t)np, ms) < 0 && errno != EINTR)
			return -1;
		read_outputs(cl, pfd, idx, np);
		left -= reap_clients(cl, k, t0);
		if (!np && left)
			usleep(1000);
	}
	return 0;
}

/* Every client's own lines, prefixed with "  client I: ". */
static void print_outputs(const struct client *cl, int k)
{
	int i;

	for (i = 0; i < k; i++) {
		const char *p = cl[i].out ? cl[i].out : "";

		while (*p) {
			const char *eol = strchr(p, '\n');
			int len = eol ? (int)(eol - p) : (int)strlen(p);

			printf("  client %d: %.*s\n", i, len, p);
			p += len + (eol ? 1 : 0);
		}
	}
}

/* One line per client and the total: the number of clients that failed. */
static int print_summary(const struct client *cl, int k, double t0)
{
	double total_busy = 0;
	int i, failed = 0;

	for (i = 0; i < k; i++) {
		const struct client *c = &cl[i];
		int pass, total, ok;
		double graph_ms;

		count_cases(c, &pass, &total, &graph_ms);
		ok = !c->killed && WIFEXITED(c->status) &&
		     WEXITSTATUS(c->status) == 0 && total > 0 && pass == total;
		failed += !ok;
		total_busy += c->end_ms;
		printf("client %d [%s]: %s cases=%d/%d time=%.1f ms graphs=%.1f ms%s\n",
		       i, c->spec, ok ? "PASS" : "FAIL", pass, total, c->end_ms,
		       graph_ms, c->killed ? " (killed: -t timeout or signal)" :
		       !WIFEXITED(c->status) ? " (killed by a signal)" : "");
	}
	printf("total: %d clients, %d passed, %d failed, wall %.1f ms "
	       "(sum of client times %.1f ms)\n", k, k - failed, failed,
	       now_ms() - t0, total_busy);
	return failed;
}

int main(int argc, char **argv)
{
	static struct client cl[MAX_CLIENTS];
	struct opts o;
	int i, gate[2], ret;
	double t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_opts(argc, argv, &o, &ret))
		return ret;
	if (access(o.e2e, X_OK)) {
		fprintf(stderr, "%s: %s (build it: make -C selftests/e2e)\n", o.e2e,
			strerror(errno));
		return 2;
	}
	for (i = 0; i < o.k; i++)
		if (build_argv(&cl[i], o.e2e, o.specs[i % o.nspecs])) {
			usage();
			return 2;
		}

	/* fork everyone, held at the gate (EOF on gate[0] opens it) */
	if (pipe(gate) || fork_clients(cl, o.k, gate))
		return 1;
	close(gate[0]);
	signal(SIGINT, on_signal);	/* Ctrl-C: kill the clients' groups */
	signal(SIGTERM, on_signal);
	printf("# %d clients of ptod (%s) at once:", o.k,
	       getenv("PTO_SOCKET") ? getenv("PTO_SOCKET") : "/run/pto/ptod.sock");
	for (i = 0; i < o.k; i++)
		printf(" [%s]", cl[i].spec);
	printf("\n");
	t0 = now_ms();
	close(gate[1]);		/* go */

	if (collect(cl, o.k, t0, o.timeout_s))
		return 1;
	print_outputs(cl, o.k);
	return print_summary(cl, o.k, t0) ? 1 : 0;
}
