// SPDX-License-Identifier: MIT
/*
 * ptoctl_ptod.c - what ptoctl asks ptod on its socket (wire.h,
 * PTO_MSG_CLIENTS ...): clients, graphs, trace. See Documentation/ptoctl.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/dagfile.h>
#include <pto-private/wire.h>

#include "ptoctl.h"

/* ---- The socket --------------------------------------------------------------- */

/*
 * How long ptod may take to answer a request (each message of a list,
 * the start and the stop of a trace): it answers from its event loop,
 * so silence this long means a daemon that is stuck, or not ptod.
 */
#define PTOD_ANSWER_MS 10000

/* A connection to ptod at @path: the socket, or -1 (said on stderr). */
static int ptod_dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ptoctl: %s: socket path too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0) {
		perror("ptoctl: socket");
		return -1;
	}
	if (!connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		return s;
	if (errno == ENOENT || errno == ECONNREFUSED)
		fprintf(stderr,
			"ptoctl: ptod is not running (nothing listens on %s; -s or $PTO_SOCKET name another socket)\n",
			path);
	else if (errno == EACCES)
		fprintf(stderr,
			"ptoctl: %s: permission denied: ptod's socket is for root and its group (pto)\n",
			path);
	else
		fprintf(stderr, "ptoctl: %s: %s\n", path, strerror(errno));
	close(s);
	return -1;
}

/* Send request @type for entries of @size bytes: 0 or -1 (said). */
static int ptod_ask(int s, uint32_t type, size_t size)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.u.list.version = PTO_INFO_VERSION;
	m.u.list.entry_size = (uint32_t)size;
	if (send(s, &m, offsetof(struct pto_msg, text) + 1, MSG_NOSIGNAL) < 0) {
		fprintf(stderr, "ptoctl: sending to ptod: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Receive one message into @m (waiting up to @ms, -1: forever): its
 * length, 0 if ptod hung up, -ETIMEDOUT after @ms, -EAGAIN on a signal,
 * -1 (said).
 */
static ssize_t ptod_recv(int s, struct pto_msg *m, int ms)
{
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	char why[48];
	ssize_t n;
	int ret;

	ret = poll(&pfd, 1, ms);
	if (ret < 0 && errno == EINTR)
		return -EAGAIN;
	if (ret == 0)
		return -ETIMEDOUT;
	memset(m, 0, offsetof(struct pto_msg, text) + 1);
	n = recv(s, m, sizeof(*m), 0);
	if (n < 0 && errno == EINTR)
		return -EAGAIN;
	if (n < 0) {
		fprintf(stderr, "ptoctl: reading from ptod: %s\n",
			strerror(errno));
		return -1;
	}
	if (n > 0 && pto_msg_from_ptod(m, (size_t)n, why, sizeof(why))) {
		fprintf(stderr, "ptoctl: ptod broke the protocol: %s\n", why);
		return -1;
	}
	return n;
}

/* A REPLY with an error: say it (ptod's words). Returns 1. */
static int refused(const struct pto_msg *m, const char *what)
{
	fprintf(stderr, "ptoctl: %s: ptod refused: %s%s%s\n", what,
		strerror(-m->status), m->text[0] ? ": " : "", m->text);
	if (m->status == -EPROTO && strstr(m->text, "hello first"))
		fprintf(stderr,
			"ptoctl: this ptod does not know the request (older than ptoctl)\n");
	return 1;
}

/* The entries of a LIST or TRACE_DATA message of @n bytes, checked. */
static const void *entries(const struct pto_msg *m, ssize_t n, size_t size)
{
	size_t len = (size_t)n - offsetof(struct pto_msg, text);

	if (m->u.list.entry_size == size && (size_t)m->u.list.n * size < len)
		return m->text;
	fprintf(stderr,
		"ptoctl: malformed list from ptod (%u entries of %u bytes in %zu, expected %zu-byte entries)\n",
		m->u.list.n, m->u.list.entry_size, len, size);
	return NULL;
}

/*
 * Ask @type and collect the LIST entries (@size bytes each) into *@out
 * (malloc'ed), *@n of them. 0, or the exit status (said).
 */
static int ptod_list(const char *path, uint32_t type, size_t size,
		     const char *what, void **out, size_t *n)
{
	struct pto_msg m;
	const void *e;
	void *all = NULL, *more;
	ssize_t len;
	int s, ret = 1;

	*n = 0;
	s = ptod_dial(path);
	if (s < 0 || ptod_ask(s, type, size))
		goto out;
	for (;;) {
		len = ptod_recv(s, &m, PTOD_ANSWER_MS);
		if (len == -EAGAIN)
			continue;
		if (len == -ETIMEDOUT)
			fprintf(stderr, "ptoctl: %s: no answer from ptod within %d s\n",
				what, PTOD_ANSWER_MS / 1000);
		if (len <= 0) {
			if (!len)
				fprintf(stderr, "ptoctl: %s: ptod hung up\n", what);
			goto out;
		}
		if (m.type == PTO_MSG_REPLY) {
			ret = m.status ? refused(&m, what) : 0;
			goto out;
		}
		if (m.type != PTO_MSG_LIST)
			continue;
		e = entries(&m, len, size);
		if (!e)
			goto out;
		more = realloc(all, (*n + m.u.list.n) * size + 1);
		if (!more) {
			fprintf(stderr, "ptoctl: %s: out of memory\n", what);
			goto out;
		}
		all = more;
		memcpy((char *)all + *n * size, e, m.u.list.n * size);
		*n += m.u.list.n;
	}
out:
	if (s >= 0)
		close(s);
	if (ret) {
		free(all);
		all = NULL;
	}
	*out = all;
	return ret;
}

/* "YYYY-MM-DD HH:MM:SS" of CLOCK_REALTIME ns @ns. */
static const char *when(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ULL);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%F %T", &tm))
		snprintf(buf, len, "%" PRIu64, ns);
	return buf;
}

/* ---- clients ------------------------------------------------------------------ */

static void client_json(const struct pto_client_info *c, bool last)
{
	printf("  {\"id\": %u, \"pid\": %d, \"uid\": %u, \"gid\": %u, \"ctx\": %u, \"sandbox-pid\": %d, \"hello\": %s, \"in-run\": %s, \"tracing\": %s, \"since-ns\": %" PRIu64 ", \"runs\": %" PRIu64 ", \"tasks\": %" PRIu64 ", \"bytes-queued\": %" PRIu64 "}%s\n",
	       c->id, c->pid, c->uid, c->gid, c->ctx, c->sbx_pid,
	       c->flags & PTO_CLIENT_HELLO ? "true" : "false",
	       c->flags & PTO_CLIENT_IN_RUN ? "true" : "false",
	       c->flags & PTO_CLIENT_TRACING ? "true" : "false",
	       c->since_ns, c->runs, c->tasks, c->out_bytes, last ? "" : ",");
}

static void client_line(const struct pto_client_info *c)
{
	char sbx[16], since[32];

	snprintf(sbx, sizeof(sbx), c->sbx_pid ? "%d" : "-", c->sbx_pid);
	printf("%-4u %-7d %-6u %-6u %-3u %-7s %-6s %-5" PRIu64 " %-7" PRIu64 " %-7" PRIu64 " %s%s\n",
	       c->id, c->pid, c->uid, c->gid, c->ctx, sbx,
	       c->flags & PTO_CLIENT_IN_RUN ? "yes" :
	       c->flags & PTO_CLIENT_HELLO ? "no" : "-",
	       c->runs, c->tasks, c->out_bytes,
	       when(c->since_ns, since, sizeof(since)),
	       c->flags & PTO_CLIENT_TRACING ? " (tracing)" : "");
}

int ptoctl_clients(const struct ptoctl_sock *o)
{
	struct pto_client_info *c;
	size_t n, i;
	int ret;

	ret = ptod_list(pto_socket_path(o->sock), PTO_MSG_CLIENTS, sizeof(*c),
			"clients", (void **)&c, &n);
	if (ret)
		return ret;
	if (o->json) {
		printf("[\n");
		for (i = 0; i < n; i++)
			client_json(&c[i], i + 1 == n);
		printf("]\n");
	} else {
		printf("ID   PID     UID    GID    CTX SANDBOX IN-RUN RUNS  TASKS   QUEUED  SINCE\n");
		for (i = 0; i < n; i++)
			client_line(&c[i]);
	}
	free(c);
	return 0;
}

/* ---- graphs ------------------------------------------------------------------- */

static const char *state_name(uint32_t state)
{
	switch (state) {
	case PTO_GRAPH_RUNNING: return "running";
	case PTO_GRAPH_DONE: return "done";
	case PTO_GRAPH_FAILED: return "failed";
	default: return "unknown";
	}
}

static void graph_json(const struct pto_graph_info *g, bool last)
{
	const struct pto_graph_stats *s = &g->stats;

	printf("  {\"client\": %u, \"pid\": %d, \"uid\": %u, \"graph\": %" PRIu64 ", \"state\": \"%s\", \"status\": %d, \"tasks-submitted\": %" PRIu64 ", \"tasks-done\": %" PRIu64 ", \"start-ns\": %" PRIu64 ", \"wall-ns\": %" PRIu64 ", \"stats\": {\"tasks\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"wall-ns\": %" PRIu64 ", \"busy-ns\": %" PRIu64 ", \"wait-ns\": %" PRIu64 ", \"wait-max-ns\": %" PRIu64 ", \"early\": %" PRIu64 "}}%s\n",
	       g->client, g->pid, g->uid, g->graph, state_name(g->state),
	       g->status, g->submitted, g->done, g->start_ns, g->wall_ns,
	       s->tasks, s->blocks, s->wall_ns, s->busy_ns, s->wait_ns,
	       s->wait_max_ns, s->early, last ? "" : ",");
}

static void graph_line(const struct pto_graph_info *g)
{
	char start[32];

	printf("%-6u %-6" PRIu64 " %-7s %-6d %-9" PRIu64 " %-6" PRIu64 " %-6" PRIu64 " %9.3f %9.3f %9.3f  %s\n",
	       g->client, g->graph, state_name(g->state), g->status,
	       g->submitted, g->done, g->stats.blocks, g->wall_ns / 1e6,
	       g->stats.busy_ns / 1e6, g->stats.wait_ns / 1e6,
	       when(g->start_ns, start, sizeof(start)));
}

int ptoctl_graphs(const struct ptoctl_sock *o)
{
	struct pto_graph_info *g;
	size_t n, i;
	int ret;

	ret = ptod_list(pto_socket_path(o->sock), PTO_MSG_GRAPHS, sizeof(*g),
			"graphs", (void **)&g, &n);
	if (ret)
		return ret;
	if (o->json) {
		printf("[\n");
		for (i = 0; i < n; i++)
			graph_json(&g[i], i + 1 == n);
		printf("]\n");
	} else {
		printf("CLIENT GRAPH  STATE   STATUS SUBMITTED DONE   BLOCKS   WALL_MS   BUSY_MS   WAIT_MS  STARTED\n");
		for (i = 0; i < n; i++)
			graph_line(&g[i]);
	}
	free(g);
	return 0;
}

/* ---- trace -------------------------------------------------------------------- */

struct trace {
	const struct ptoctl_sock *o;
	long max;			/* -n: blocks, 0: no limit */
	long secs;			/* -d: seconds, 0: no limit */
	const char *out;		/* -o FILE */
	FILE *f;			/* FILE, opened before tracing */
	bool created;			/* by us: removed if not written */
	long seen;			/* blocks printed */
	uint64_t lost;			/* ptod's count */
	struct pto_trace_block *b;	/* kept for -o */
	size_t nb, cap;
};

static volatile sig_atomic_t g_stop;

static void on_stop(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void block_line(const struct pto_trace_block *b, bool json)
{
	if (json)
		printf("{\"client\": %u, \"uid\": %u, \"graph\": %" PRIu64 ", \"task\": %d, \"kernel\": %d, \"core\": %u, \"core-type\": \"%s\", \"dispatch-ns\": %" PRIu64 ", \"start-ns\": %" PRIu64 ", \"end-ns\": %" PRIu64 "}\n",
		       b->client, b->uid, b->graph, b->task, b->kernel, b->core,
		       b->aic ? "aic" : "aiv", b->dispatch, b->start, b->end);
	else
		printf("client %u graph %" PRIu64 " task %d kernel %d core %u (%s) dispatch %" PRIu64 " start %" PRIu64 " end %" PRIu64 " (%.3f us)\n",
		       b->client, b->graph, b->task, b->kernel, b->core,
		       b->aic ? "AIC" : "AIV", b->dispatch, b->start, b->end,
		       b->end > b->start ? (b->end - b->start) / 1e3 : 0.0);
}

/*
 * -o keeps every block until the trace ends (a recording lists a DAG's
 * tasks before its blocks): at most this many, 224 MiB.
 */
#define TRACE_KEEP_MAX	(4UL << 20)

/* Keep @b for -o: 0, -ENOSPC (TRACE_KEEP_MAX kept) or -ENOMEM. */
static int keep(struct trace *t, const struct pto_trace_block *b)
{
	struct pto_trace_block *n;

	if (t->nb == TRACE_KEEP_MAX)
		return -ENOSPC;
	if (t->nb == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		n = realloc(t->b, t->cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->b = n;
	}
	t->b[t->nb++] = *b;
	return 0;
}

/* The blocks of one TRACE_DATA message: 0, or 1 (said). */
static int trace_data(struct trace *t, const struct pto_msg *m, ssize_t len)
{
	const struct pto_trace_block *b = entries(m, len, sizeof(*b));
	uint32_t i;

	if (!b)
		return 1;
	t->lost = m->u.list.dropped;
	for (i = 0; i < m->u.list.n; i++) {
		int ret;

		if (t->max && t->seen >= t->max)
			return 0;
		ret = t->out ? keep(t, &b[i]) : 0;
		if (ret == -ENOSPC) {
			fprintf(stderr, "ptoctl: trace: -o holds at most %lu blocks: trace ended\n",
				TRACE_KEEP_MAX);
			t->max = t->seen;
			return 0;
		}
		if (ret) {
			fprintf(stderr, "ptoctl: trace: out of memory\n");
			return 1;
		}
		block_line(&b[i], t->o->json);
		t->seen++;
	}
	fflush(stdout);
	return 0;
}

/* Read TRACE_DATA until -n, -d or a signal ends the trace: 0 or 1. */
static int trace_follow(struct trace *t, int s)
{
	struct timespec now, end;
	struct pto_msg m;
	ssize_t len;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += t->secs;
	while (!g_stop && !(t->max && t->seen >= t->max)) {
		ms = -1;
		if (t->secs) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			ms = (end.tv_sec - now.tv_sec) * 1000 +
			     (end.tv_nsec - now.tv_nsec) / 1000000;
			if (ms <= 0)
				break;
		}
		len = ptod_recv(s, &m, (int)(ms > INT_MAX ? INT_MAX : ms));
		if (len == -EAGAIN || len == -ETIMEDOUT)
			continue;
		if (len <= 0) {
			if (!len)
				fprintf(stderr, "ptoctl: trace: ptod hung up\n");
			return 1;
		}
		if (m.type == PTO_MSG_TRACE_DATA && trace_data(t, &m, len))
			return 1;
	}
	return 0;
}

/* TRACE_STOP; the blocks still on their way, then ptod's loss count. */
static int trace_stop(struct trace *t, int s)
{
	struct pto_msg m;
	ssize_t len;

	if (ptod_ask(s, PTO_MSG_TRACE_STOP, sizeof(struct pto_trace_block)))
		return 1;
	for (;;) {
		len = ptod_recv(s, &m, PTOD_ANSWER_MS);
		if (len == -1)
			return 1;	/* said */
		if (len <= 0) {
			fprintf(stderr, "ptoctl: trace: %s\n",
				len ? "no answer to the stop" : "ptod hung up");
			return 1;
		}
		if (m.type == PTO_MSG_TRACE_DATA && trace_data(t, &m, len))
			return 1;
		if (m.type == PTO_MSG_REPLY) {
			t->lost = m.tag;
			return 0;
		}
	}
}

/* The first message after TRACE: REPLY 0, or a refusal (said). */
static int trace_begin(int s)
{
	struct pto_msg m;
	ssize_t len;

	do
		len = ptod_recv(s, &m, PTOD_ANSWER_MS);
	while (len > 0 && m.type != PTO_MSG_REPLY);
	if (len == -1)
		return 1;	/* said */
	if (len <= 0) {
		fprintf(stderr, "ptoctl: trace: %s\n",
			len ? "no answer from ptod" : "ptod hung up");
		return 1;
	}
	return m.status ? refused(&m, "trace") : 0;
}

/* Block order for -o: by client, graph, then dispatch time. */
static int block_cmp(const void *a, const void *b)
{
	const struct pto_trace_block *x = a, *y = b;

	if (x->client != y->client)
		return x->client < y->client ? -1 : 1;
	if (x->graph != y->graph)
		return x->graph < y->graph ? -1 : 1;
	if (x->dispatch != y->dispatch)
		return x->dispatch < y->dispatch ? -1 : 1;
	return 0;
}

/* A block of one DAG: its task and its position in dispatch order. */
struct blk_ref {
	int32_t task;
	uint32_t pos;
};

/* A task of one DAG: its blocks are refs[start .. start + len). */
struct task_ref {
	uint32_t first;		/* position of its first dispatch */
	uint32_t start, len;
};

static int ref_by_task(const void *a, const void *b)
{
	const struct blk_ref *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int task_by_first(const void *a, const void *b)
{
	const struct task_ref *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* One task line from the blocks of @t; their ids in @id. */
static void write_task(FILE *f, const struct pto_trace_block *b,
		       const struct blk_ref *r, const struct task_ref *t,
		       uint32_t tid, uint32_t *id)
{
	struct pto_dagf_task ft = {
		.id = tid, .block_num = 0, .thread_num = 1,
		.func = -1, .prio = -1, .cp = -1,
	};
	uint32_t i;

	for (i = t->start; i < t->start + t->len; i++) {
		const struct pto_trace_block *x = &b[r[i].pos];

		id[r[i].pos] = tid;
		if (x->end - x->start > ft.cost)
			ft.cost = x->end - x->start;
		ft.type = x->aic ? PTO_DAGF_AIC : PTO_DAGF_AIV;
		ft.func = x->kernel;
		ft.block_num++;
	}
	ft.est = ft.cost;
	pto_dagf_write_task(f, &ft);
}

/*
 * The tasks of one DAG (@b[0 .. @n), one client's graph, in dispatch
 * order) as task lines: ids in order of first dispatch into @id (per
 * block), the longest block as the cost. Sorts, no search: a trace of a
 * long run has millions of blocks. 0 or -ENOMEM.
 */
static int write_tasks(FILE *f, const struct pto_trace_block *b, uint32_t n,
		       uint32_t *id)
{
	struct blk_ref *r = calloc(n, sizeof(*r));
	struct task_ref *t = calloc(n, sizeof(*t));
	uint32_t i, nt = 0;

	if (!r || !t) {
		free(r);
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		r[i] = (struct blk_ref){ .task = b[i].task, .pos = i };
	qsort(r, n, sizeof(*r), ref_by_task);
	for (i = 0; i < n; i++) {
		if (!i || r[i].task != r[i - 1].task)
			t[nt++] = (struct task_ref){ .first = r[i].pos,
						     .start = i };
		t[nt - 1].len++;
	}
	qsort(t, nt, sizeof(*t), task_by_first);
	for (i = 0; i < nt; i++)
		write_task(f, b, r, &t[i], i, id);
	free(r);
	free(t);
	return 0;
}

/* One DAG: its line, its tasks, its blocks (times from @t0). */
static int write_dag(FILE *f, const struct pto_trace_block *b, size_t n,
		     uint64_t t0)
{
	uint32_t *id = calloc(n, sizeof(*id));
	char name[64];
	size_t i;

	if (!id)
		return -ENOMEM;
	snprintf(name, sizeof(name), "uid%u.client%u.%" PRIu64, b[0].uid,
		 b[0].client, b[0].graph);
	pto_dagf_write_dag(f, name, b[0].dispatch - t0, true, 0);
	if (write_tasks(f, b, (uint32_t)n, id)) {
		free(id);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct pto_dagf_block fb = {
			.task = id[i], .core = b[i].core,
			.dispatch = b[i].dispatch - t0,
			.start = b[i].start - t0, .end = b[i].end - t0,
		};

		pto_dagf_write_block(f, &fb);
	}
	free(id);
	return 0;
}

/*
 * Open -o FILE before the trace, so that a path that cannot be written
 * fails at once, not after the trace. An existing FILE is not truncated
 * until the recording is written: a trace that fails, or sees no block,
 * leaves it as it was (out_drop()). FILE may be a pipe or a device
 * (/dev/stdout): opened without waiting (a FIFO nobody reads is an
 * error, not a hang), written without truncating. 0 or 1.
 */
static int out_open(struct trace *t)
{
	int fd = open(t->out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	int fl;

	t->created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(t->out, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !t->created) {
		fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
			close(fd);
			fd = -1;
		}
	}
	t->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!t->f) {
		fprintf(stderr, "ptoctl: -o %s: %s%s\n", t->out, strerror(errno),
			errno == ENXIO ? " (a FIFO with no reader?)" : "");
		if (fd >= 0)
			close(fd);
		if (t->created)
			unlink(t->out);
		return 1;
	}
	return 0;
}

/* FILE is not written: closed, and removed if we made it. */
static void out_drop(struct trace *t)
{
	fclose(t->f);
	t->f = NULL;
	if (t->created)
		unlink(t->out);
}

/*
 * -o FILE: the blocks as a recording (the DAG file format ptod -R writes,
 * with the same writer): one DAG per client's graph, its tasks as the
 * blocks show them (no producers), time 0 at the first dispatch. With
 * no block traced nothing is written (a recording has at least one DAG).
 */
static int write_recording(struct trace *t)
{
	uint64_t t0 = UINT64_MAX;
	struct stat st;
	size_t i, start;
	int ret = 0;
	FILE *f;

	if (!t->nb) {
		out_drop(t);
		fprintf(stderr, "ptoctl: -o %s: no block was traced; not written\n",
			t->out);
		return 1;
	}
	f = t->f;
	t->f = NULL;
	if (fstat(fileno(f), &st) ||
	    (S_ISREG(st.st_mode) && ftruncate(fileno(f), 0))) {
		fprintf(stderr, "ptoctl: -o %s: %s\n", t->out, strerror(errno));
		fclose(f);
		return 1;
	}
	qsort(t->b, t->nb, sizeof(*t->b), block_cmp);
	for (i = 0; i < t->nb; i++)
		if (t->b[i].dispatch < t0)
			t0 = t->b[i].dispatch;
	for (start = 0, i = 1; !ret && i <= t->nb; i++)
		if (i == t->nb || t->b[i].client != t->b[start].client ||
		    t->b[i].graph != t->b[start].graph) {
			ret = write_dag(f, &t->b[start], i - start, t0);
			start = i;
		}
	if (fclose(f) || ret) {
		fprintf(stderr, "ptoctl: -o %s: %s\n", t->out,
			strerror(ret ? -ret : errno));
		return 1;
	}
	return 0;
}

static int trace_opts(struct trace *t, int argc, char **argv)
{
	int ch;

	optind = 1;
	while ((ch = getopt(argc, argv, "n:d:o:")) != -1) {
		switch (ch) {
		case 'n':
			t->max = ptoctl_num(optarg, LONG_MAX);
			if (t->max < 0)
				return -EINVAL;
			break;
		case 'd':
			t->secs = ptoctl_num(optarg, INT_MAX / 1000);
			if (t->secs < 0)
				return -EINVAL;
			break;
		case 'o':
			t->out = optarg;
			break;
		default:
			return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

int ptoctl_trace(const struct ptoctl_sock *o, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct trace t = { .o = o };
	int s, ret;

	if (trace_opts(&t, argc, argv)) {
		fprintf(stderr,
			"usage: ptoctl [-j] [-s SOCKET] trace [-n BLOCKS] [-d SECONDS] [-o FILE]\n");
		return 2;
	}
	if (t.out && out_open(&t))
		return 1;
	s = ptod_dial(pto_socket_path(o->sock));
	if (s < 0) {
		ret = 1;
		goto out;
	}
	/* no SA_RESTART: Ctrl-C ends the wait for the next message */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = ptod_ask(s, PTO_MSG_TRACE, sizeof(struct pto_trace_block));
	if (!ret)
		ret = trace_begin(s);
	if (!ret) {
		fprintf(stderr, "ptoctl: tracing\n");
		ret = trace_follow(&t, s);
		if (!ret)
			ret = trace_stop(&t, s);
	}
	close(s);
	if (!ret && t.out)
		ret = write_recording(&t);
	if (!ret)
		fprintf(stderr, "ptoctl: trace: %ld blocks, %" PRIu64 " lost\n",
			t.seen, t.lost);
out:
	/* not written: an error came first */
	if (t.f)
		out_drop(&t);
	free(t.b);
	return ret;
}
