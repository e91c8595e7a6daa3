// SPDX-License-Identifier: MIT
/*
 * ptod_info.c - what ptoctl asks ptod (wire.h, PTO_MSG_CLIENTS ...):
 * the clients, the graphs in flight and the last ones that ended, and a
 * live trace of every block that ran.
 *
 * Privacy: a caller of uid 0 sees everything; any other caller sees only
 * the clients of its own uid, their graphs and their blocks
 * (Documentation/decisions.rst).
 *
 * Nothing here may slow ptod: replies go through the client's bounded
 * output queue; trace blocks go from the engine's threads into a fixed
 * ring (what does not fit is counted, not waited for) and from the main
 * loop to each subscriber only as far as its queue has room (the rest is
 * counted as that subscriber's loss). While nobody traces, the engine's
 * block hook is off.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ptod.h"

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* May @asker see what belongs to user @uid? */
static bool may_see(const struct client *asker, uid_t uid)
{
	return asker->uid == 0 || asker->uid == uid;
}

/* An empty LIST or TRACE_DATA message for entries of @size bytes. */
static void list_init(struct pto_msg *m, uint32_t type, size_t size)
{
	memset(m, 0, offsetof(struct pto_msg, text) + 1);
	m->type = type;
	m->u.list.version = PTO_INFO_VERSION;
	m->u.list.entry_size = (uint32_t)size;
}

/* The length of @m with its entries and the closing 0 byte. */
static size_t list_len(struct pto_msg *m)
{
	size_t n = (size_t)m->u.list.n * m->u.list.entry_size;

	m->text[n] = 0;
	return offsetof(struct pto_msg, text) + n + 1;
}

/*
 * Add @e (@size bytes) to the LIST @m; sends @m first when it is full.
 * 0, or -ECONNRESET when the asker is being dropped.
 */
static int list_add(struct client *c, struct pto_msg *m, const void *e,
		    size_t size)
{
	int ret;

	if ((m->u.list.n + 1) * size > PTO_MSG_TEXT - 1) {
		ret = ptod_send_len(c, m, list_len(m));
		if (ret)
			return ret;
		m->u.list.n = 0;
	}
	memcpy(m->text + m->u.list.n * size, e, size);
	m->u.list.n++;
	return 0;
}

/* The last LIST (if it has entries), then REPLY with the count. */
static void list_end(struct client *c, struct pto_msg *m, uint64_t count)
{
	if (m->u.list.n && ptod_send_len(c, m, list_len(m)))
		return;
	memset(m, 0, offsetof(struct pto_msg, text) + 1);
	m->type = PTO_MSG_REPLY;
	m->tag = count;
	ptod_send(c, m);
}

/* ---- CLIENTS -------------------------------------------------------------------- */

static void client_info(struct client *c, struct pto_client_info *e)
{
	memset(e, 0, sizeof(*e));
	e->id = c->id;
	e->pid = (int32_t)c->pid;
	e->uid = (uint32_t)c->uid;
	e->gid = (uint32_t)c->gid;
	e->ctx = c->ctx;
	e->sbx_pid = (int32_t)c->sbx_pid;
	e->flags = (c->hello_done ? PTO_CLIENT_HELLO : 0) |
		   (atomic_load(&c->in_run) ? PTO_CLIENT_IN_RUN : 0) |
		   (c->tracing ? PTO_CLIENT_TRACING : 0);
	e->since_ns = (uint64_t)c->since_ns;
	e->runs = atomic_load(&c->runs);
	e->tasks = atomic_load(&c->tasks_done);
	pthread_mutex_lock(&c->send_lock);
	e->out_bytes = c->out_bytes;
	pthread_mutex_unlock(&c->send_lock);
}

static void list_clients(struct client *asker, struct pto_msg *m)
{
	struct pto_client_info e;
	struct client *c;
	uint64_t n = 0;

	list_init(m, PTO_MSG_LIST, sizeof(e));
	for (c = asker->d->clients; c; c = c->next) {
		if (!may_see(asker, c->uid))
			continue;
		client_info(c, &e);
		if (list_add(asker, m, &e, sizeof(e)))
			return;
		n++;
	}
	list_end(asker, m, n);
}

/* ---- GRAPHS --------------------------------------------------------------------- */

/* Graph bookkeeping of the runner: its run starts. */
void ptod_graph_begin(struct client *c)
{
	struct pto_graph_info *g = &c->graph;

	atomic_store(&c->submitted, 0);
	pthread_mutex_lock(&c->d->graphs_lock);
	memset(g, 0, sizeof(*g));
	g->client = c->id;
	g->pid = (int32_t)c->pid;
	g->uid = (uint32_t)c->uid;
	g->state = PTO_GRAPH_RUNNING;
	g->graph = c->tag;
	g->start_ns = real_ns();
	c->graph_t0 = pto_mono_ns();
	c->graph_live = true;
	pthread_mutex_unlock(&c->d->graphs_lock);
}

/*
 * The graph ended with @status and statistics @st (NULL: it did not run,
 * ptod_graph_begin() was not called): kept among the last ones.
 */
void ptod_graph_end(struct client *c, int status,
		    const struct pto_graph_stats *st)
{
	struct ptod *d = c->d;
	struct pto_graph_info *g = &c->graph;

	pthread_mutex_lock(&d->graphs_lock);
	if (!st) {
		memset(g, 0, sizeof(*g));
		g->client = c->id;
		g->pid = (int32_t)c->pid;
		g->uid = (uint32_t)c->uid;
		g->graph = c->tag;
		g->start_ns = real_ns();
	} else {
		g->stats = *st;
		g->done = st->tasks;
		g->wall_ns = st->wall_ns;
	}
	g->state = status ? PTO_GRAPH_FAILED : PTO_GRAPH_DONE;
	g->status = status;
	g->submitted = atomic_load(&c->submitted);
	d->done[d->ndone++ % PTO_GRAPHS_KEPT] = *g;
	c->graph_live = false;
	pthread_mutex_unlock(&d->graphs_lock);
	atomic_fetch_add(&c->runs, 1);
	if (st)
		atomic_fetch_add(&c->tasks_done, st->tasks);
}

/* Called with graphs_lock held: the graph @c runs, as of now. */
static void live_graph(struct client *c, struct pto_graph_info *e)
{
	*e = c->graph;
	e->submitted = atomic_load(&c->submitted);
	e->done = c->rt ? pto2_runtime_completions(c->rt) : 0;
	e->wall_ns = (uint64_t)(pto_mono_ns() - c->graph_t0);
}

static void list_graphs(struct client *asker, struct pto_msg *m)
{
	struct pto_graph_info e[PTO_GRAPHS_KEPT];
	struct ptod *d = asker->d;
	struct client *c;
	uint64_t n = 0, i, first;
	uint32_t nd = 0;

	list_init(m, PTO_MSG_LIST, sizeof(e[0]));
	/* running ones, then the finished ones oldest first */
	for (c = d->clients; c; c = c->next) {
		pthread_mutex_lock(&d->graphs_lock);
		if (c->graph_live && may_see(asker, c->uid))
			live_graph(c, &e[0]);
		else
			e[0].state = 0;
		pthread_mutex_unlock(&d->graphs_lock);
		if (!e[0].state)
			continue;
		if (list_add(asker, m, &e[0], sizeof(e[0])))
			return;
		n++;
	}
	pthread_mutex_lock(&d->graphs_lock);
	first = d->ndone > PTO_GRAPHS_KEPT ? d->ndone - PTO_GRAPHS_KEPT : 0;
	for (i = first; i < d->ndone; i++)
		if (may_see(asker, d->done[i % PTO_GRAPHS_KEPT].uid))
			e[nd++] = d->done[i % PTO_GRAPHS_KEPT];
	pthread_mutex_unlock(&d->graphs_lock);
	for (i = 0; i < nd; i++, n++)
		if (list_add(asker, m, &e[i], sizeof(e[i])))
			return;
	list_end(asker, m, n);
}

/* ---- TRACE ---------------------------------------------------------------------- */

/* The engine's block hook (its threads): into the ring, or counted. */
static void on_block(void *ctx, const struct pto2_block_event *ev)
{
	struct ptod *d = ctx;
	uint64_t one = 1;
	bool wake;

	pthread_mutex_lock(&d->trace_lock);
	wake = !d->tr_n;
	if (d->tr_n == PTOD_TRACE_RING) {
		d->tr_lost++;
		wake = false;
	} else {
		d->tring[d->tr_n++] = (struct pto_trace_block){
			.client = ev->client, .graph = ev->graph,
			.task = ev->task, .kernel = ev->kernel,
			.core = ev->core, .aic = ev->core < d->info.nr_aic,
			.dispatch = (uint64_t)ev->dispatch_ns,
			.start = (uint64_t)ev->start_ns,
			.end = (uint64_t)ev->end_ns,
		};
	}
	pthread_mutex_unlock(&d->trace_lock);
	if (wake && write(d->trace_efd, &one, sizeof(one)) < 0)
		(void)0;	/* the counter is full: a wake-up is due anyway */
}

/* The uid of client @id, or -1 if it is gone (only root sees its blocks). */
static uid_t uid_of(struct ptod *d, uint32_t id, struct client **cache)
{
	struct client *c = *cache;

	if (c && c->id == id)
		return c->uid;
	for (c = d->clients; c; c = c->next)
		if (c->id == id) {
			*cache = c;
			return c->uid;
		}
	return (uid_t)-1;
}

/* Send @m (TRACE_DATA) to @sub if its queue has room; else it is lost. */
static void trace_push(struct client *sub, struct pto_msg *m)
{
	m->u.list.dropped = sub->trace_lost;
	if (ptod_send_try(sub, m, list_len(m)))
		sub->trace_lost += m->u.list.n;
	m->u.list.n = 0;
}

/* Send what @sub may see of @b[0 .. @n). */
static void trace_send(struct client *sub, const struct pto_trace_block *b,
		       uint32_t n)
{
	const uint32_t max = PTO_LIST_MAX(struct pto_trace_block);
	struct pto_msg m;
	uint32_t i;

	list_init(&m, PTO_MSG_TRACE_DATA, sizeof(*b));
	for (i = 0; i < n; i++) {
		if (!may_see(sub, b[i].uid))
			continue;
		memcpy(m.text + m.u.list.n * sizeof(*b), &b[i], sizeof(*b));
		if (++m.u.list.n == max)
			trace_push(sub, &m);
	}
	if (m.u.list.n)
		trace_push(sub, &m);
}

/*
 * Main loop: hand the ring's blocks to every subscriber (the engine fills
 * the other buffer meanwhile).
 */
static void trace_flush(struct ptod *d)
{
	struct pto_trace_block *b;
	struct client *c, *cache = NULL;
	uint64_t lost;
	uint32_t n, i;

	pthread_mutex_lock(&d->trace_lock);
	b = d->tring;
	n = d->tr_n;
	d->tring = d->tr_spare;
	d->tr_spare = b;
	d->tr_n = 0;
	lost = d->tr_lost;
	d->tr_lost = 0;
	pthread_mutex_unlock(&d->trace_lock);
	for (i = 0; i < n; i++)
		b[i].uid = (uint32_t)uid_of(d, b[i].client, &cache);
	for (c = d->clients; c; c = c->next) {
		if (!c->tracing)
			continue;
		c->trace_lost += lost;
		trace_send(c, b, n);
	}
}

static void on_trace(evutil_socket_t fd, short what, void *arg)
{
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0)
		(void)0;	/* nothing to read: flushed already */
	trace_flush(arg);
}

static void trace_start(struct client *c)
{
	struct ptod *d = c->d;
	const struct client *o;
	uint32_t n = 0;

	for (o = d->clients; c->uid && !c->tracing && o; o = o->next)
		n += o->tracing && o->uid == c->uid;
	if (n >= PTOD_TRACE_SUBS_USER) {
		ptod_reply(c, -EBUSY,
			   "user %u traces on %u connections already (at most %d but root)",
			   (unsigned int)c->uid, n, PTOD_TRACE_SUBS_USER);
		return;
	}
	if (!c->tracing) {
		c->tracing = true;
		c->trace_lost = 0;
		if (!d->nr_tracers++)
			pto2_engine_block_hook_enable(d->engine, true);
	}
	ptod_reply(c, 0, NULL);
}

/* @c no longer traces; the last one turns the hook off. */
static void trace_stop(struct client *c)
{
	struct ptod *d = c->d;

	if (!c->tracing)
		return;
	trace_flush(d);
	c->tracing = false;
	if (!--d->nr_tracers) {
		pto2_engine_block_hook_enable(d->engine, false);
		trace_flush(d);	/* what came in meanwhile: nobody wants it */
	}
}

void ptod_trace_client_gone(struct client *c)
{
	trace_stop(c);
}

int ptod_trace_setup(struct ptod *d)
{
	d->tring = calloc(PTOD_TRACE_RING, sizeof(*d->tring));
	d->tr_spare = calloc(PTOD_TRACE_RING, sizeof(*d->tr_spare));
	if (!d->tring || !d->tr_spare)
		return -ENOMEM;
	d->trace_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->trace_efd < 0)
		return -errno;
	d->ev_trace = event_new(d->base, d->trace_efd, EV_READ | EV_PERSIST,
				on_trace, d);
	if (!d->ev_trace || event_add(d->ev_trace, NULL))
		return -ENOMEM;
	pto2_engine_set_block_hook(d->engine, on_block, d);
	return 0;
}

void ptod_trace_fini(struct ptod *d)
{
	if (d->ev_trace)
		event_free(d->ev_trace);
	d->ev_trace = NULL;
	if (d->trace_efd >= 0)
		close(d->trace_efd);
	d->trace_efd = -1;
	free(d->tring);
	free(d->tr_spare);
	d->tring = d->tr_spare = NULL;
}

/* ---- Requests ------------------------------------------------------------------- */

/* The request's version and entry size are ours: 0, or -EPROTO replied. */
static int check_request(struct client *c, const struct pto_msg *m,
			 size_t size)
{
	if (m->u.list.version == PTO_INFO_VERSION &&
	    m->u.list.entry_size == size)
		return 0;
	ptod_reply(c, -EPROTO,
		   "request %u: version %u with %u-byte entries; ptod speaks version %u with %zu-byte entries",
		   m->type, m->u.list.version, m->u.list.entry_size,
		   PTO_INFO_VERSION, size);
	return -EPROTO;
}

/*
 * A CLIENTS, GRAPHS, TRACE or TRACE_STOP request (main thread, any time):
 * handled and true, or false if @m is none of them.
 */
bool ptod_info_message(struct client *c, struct pto_msg *m)
{
	switch (m->type) {
	case PTO_MSG_CLIENTS:
		if (!check_request(c, m, sizeof(struct pto_client_info)))
			list_clients(c, m);
		return true;
	case PTO_MSG_GRAPHS:
		if (!check_request(c, m, sizeof(struct pto_graph_info)))
			list_graphs(c, m);
		return true;
	case PTO_MSG_TRACE:
		if (!check_request(c, m, sizeof(struct pto_trace_block)))
			trace_start(c);
		return true;
	case PTO_MSG_TRACE_STOP:
		trace_stop(c);
		memset(m, 0, offsetof(struct pto_msg, text) + 1);
		m->type = PTO_MSG_REPLY;
		m->tag = c->trace_lost;
		ptod_send(c, m);
		return true;
	default:
		return false;
	}
}
