// SPDX-License-Identifier: MIT
/*
 * ptod_runner.c - one runner thread per client
 *
 * The runner reads the client's submission stream (a ring in a GM buffer
 * the client owns, see wire.h). A GRAPH_BEGIN record starts a graph: the
 * runner runs the client's pto2 runtime with the stream reader as the
 * orchestration function, on this thread: every SCOPE / SUBMIT record
 * becomes the pto2 call of the same name, GRAPH_END returns. The
 * runtime's ready tasks go to the device's shared scheduler (the HWS),
 * which places every client's tasks on every core. Then the runner waits
 * for the run and reports DONE(tag, status, message) to the client.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/compiler.h>
#include <pto-private/params.h>

#include "ptod.h"

PTO_USDT_DEFINE(ptod, submit);
PTO_USDT_DEFINE(ptod, graph_start);
PTO_USDT_DEFINE(ptod, graph_done);

/* ---- Stream ------------------------------------------------------------------ */

/*
 * The stream's state before a record is read at the tail (ring offset
 * @off), @head being what the client published: the head is at most a
 * ring ahead, and a header fits before the end of the ring. 0, or
 * -EPROTO with the reason in c->serr.
 */
static int stream_at_check(struct client *c, uint64_t head, uint32_t off)
{
	if (head - c->tail > c->ssize)
		snprintf(c->serr, sizeof(c->serr),
			 "corrupt submission stream: the head (%" PRIu64
			 ") is more than the ring's %u bytes past the tail (%"
			 PRIu64 ")", head, c->ssize, c->tail);
	else if (off + sizeof(struct pto_rec) > c->ssize)
		snprintf(c->serr, sizeof(c->serr),
			 "corrupt submission stream: the record at %" PRIu64
			 " has %u bytes before the end of the ring, less than a header's %zu",
			 c->tail, c->ssize - off, sizeof(struct pto_rec));
	else
		return 0;
	return -EPROTO;
}

/*
 * The length of the record at the tail: PTO_REC_LEN() of its contents
 * (wire.h), at most PTOD_REC_MAX, within the ring and what the client
 * published (@head). 0, or -EPROTO with the reason, which names the
 * length, in c->serr.
 */
static int rec_len_check(struct client *c, uint64_t head, uint32_t off,
			 uint32_t len)
{
	char why[80];

	if (len < sizeof(struct pto_rec))
		snprintf(why, sizeof(why), "less than its header's %zu",
			 sizeof(struct pto_rec));
	else if (len % PTO_REC_ALIGN)
		snprintf(why, sizeof(why), "not a multiple of %u",
			 PTO_REC_ALIGN);
	else if (len > PTOD_REC_MAX)
		snprintf(why, sizeof(why), "more than the longest record's %d",
			 PTOD_REC_MAX);
	else if (len > c->ssize - off)
		snprintf(why, sizeof(why),
			 "more than the %u bytes to the end of the ring",
			 c->ssize - off);
	else if (len > head - c->tail)
		snprintf(why, sizeof(why),
			 "more than the %" PRIu64 " bytes the client published",
			 head - c->tail);
	else
		return 0;
	snprintf(c->serr, sizeof(c->serr),
		 "corrupt submission stream: the record at %" PRIu64
		 " is %u bytes long, %s", c->tail, len, why);
	return -EPROTO;
}

/*
 * Sleep until the client rings its doorbell (the pipe, c->bell), the main
 * thread writes c->efd (a stop, or a DOORBELL message), or 1 s passes;
 * then empty both. The pipe's read end is ours alone and non-blocking:
 * a client that keeps it full only keeps its own runner reading.
 */
static void reader_sleep(struct client *c)
{
	struct pollfd pfd[2] = { { .fd = c->efd, .events = POLLIN },
				 { .fd = c->bell[0], .events = POLLIN } };
	char buf[64];
	uint64_t v;
	int i;

	if (poll(pfd, 2, 1000) <= 0)
		return;
	if ((pfd[0].revents & POLLIN) && read(c->efd, &v, sizeof(v)) < 0)
		(void)0;
	for (i = 0; i < 16 && (pfd[1].revents & POLLIN); i++)
		if (read(c->bell[0], buf, sizeof(buf)) < (ssize_t)sizeof(buf))
			break;
}

/*
 * Next record, copied into c->rec (the client can write its buffer at any
 * time; we only ever look at our copy). Blocks: spins briefly, then parks
 * (reader_parked = 1, full fence, recheck, reader_sleep()). Returns NULL
 * when the client must stop (stop_err) or violated the format (then
 * stop_err is set).
 */
static struct pto_rec *stream_next(struct client *c)
{
	struct pto_stream_hdr *sh = c->sh;
	uint32_t spins = 0;

	for (;;) {
		uint64_t head;
		uint32_t off, len;
		struct pto_rec r;

		if (atomic_load(&c->stop_err))
			return NULL;
		head = atomic_load_explicit(&sh->head, memory_order_acquire);
		if (head == c->tail) {
			if (++spins < 2000) {
				cpu_relax();
				continue;
			}
			spins = 0;
			atomic_store_explicit(&sh->reader_parked, 1,
					      memory_order_seq_cst);
			atomic_thread_fence(memory_order_seq_cst);
			if (atomic_load_explicit(&sh->head,
						 memory_order_acquire) != c->tail)
				continue;	/* the client clears the flag */
			reader_sleep(c);
			continue;
		}
		off = (uint32_t)(c->tail & (c->ssize - 1));
		if (stream_at_check(c, head, off))
			goto bad;
		memcpy(&r, c->sdata + off, sizeof(r));
		len = r.len;
		if (rec_len_check(c, head, off, len))
			goto bad;
		if (r.type == PTO_REC_PAD) {
			c->tail += len;
			atomic_store_explicit(&sh->tail, c->tail,
					      memory_order_release);
			continue;
		}
		memcpy(c->rec, c->sdata + off, len);
		((struct pto_rec *)(void *)c->rec)->len = len;
		return (struct pto_rec *)(void *)c->rec;
	}
bad:
	ptod_clog(c, PTOD_LOG_ERR, "client %u: %s", c->id, c->serr);
	{
		int exp = 0;

		atomic_compare_exchange_strong(&c->stop_err, &exp, -EPROTO);
	}
	return NULL;
}

/* Consume the record returned by stream_next(); wake a waiting writer. */
static void stream_consume(struct client *c, const struct pto_rec *r)
{
	struct pto_stream_hdr *sh = c->sh;

	c->tail += r->len;
	atomic_store_explicit(&sh->tail, c->tail, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&sh->writer_waiting, memory_order_relaxed) &&
	    atomic_exchange(&sh->writer_waiting, 0)) {
		struct pto_msg m;

		memset(&m, 0, sizeof(m));
		m.type = PTO_MSG_SPACE;
		ptod_send(c, &m);
	}
}

/* ---- Graph errors -------------------------------------------------------------- */

/* Why @c stopped with @err (its stop_err); -EPROTO: what stream_next() found. */
static const char *stop_reason(const struct client *c, int err)
{
	switch (err) {
	case -ESHUTDOWN: return "ptod is shutting down: the graph was cancelled";
	case -EPROTO: return c->serr[0] ? c->serr : "corrupt submission stream";
	case -ECONNRESET: return "client disconnected: the graph was cancelled";
	case -EOWNERDEAD: return c->note[0] ? c->note : strerror(-err);
	default: return strerror(-err);
	}
}

__attribute__((format(printf, 3, 4)))
static void graph_fail(struct client *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->gerr || pto2_rt_get_error(c->rt))
		return;		/* the first error wins */
	c->gerr = err;
	va_start(ap, fmt);
	vsnprintf(c->gmsg, sizeof(c->gmsg), fmt, ap);
	va_end(ap);
	ptod_clog(c, PTOD_LOG_ERR, "client %u graph %" PRIu64 ": %s", c->id,
		  c->tag, c->gmsg);
	pto2_runtime_abort(c->rt, err);
}

static const char *graph_msg(struct client *c)
{
	return c->gerr ? c->gmsg : pto2_rt_get_error_msg(c->rt);
}

static int graph_err(struct client *c)
{
	return c->gerr ? c->gerr : pto2_rt_get_error(c->rt);
}

/*
 * A message of @type that ends something: graph @tag's (0: none) with
 * @status and @text (NULL: none), with @st when it ran (DONE).
 */
static void send_status(struct client *c, uint32_t type, uint64_t tag,
			int status, const char *text,
			const struct pto_graph_stats *st)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.status = status;
	m.tag = tag;
	if (st)
		m.u.done.stats = *st;
	snprintf(m.text, sizeof(m.text), "%s", text ? text : "");
	ptod_send(c, &m);
}

/* Early notice: the client's orchestration can stop submitting. */
static void maybe_send_error(struct client *c)
{
	if (c->err_sent || !graph_err(c))
		return;
	c->err_sent = true;
	send_status(c, PTO_MSG_ERROR, c->tag, graph_err(c), graph_msg(c),
		    NULL);
}

/* ---- Submit ---------------------------------------------------------------------- */

/*
 * The placeholders ptod keeps are those of the intermediates that can be
 * live. A task binds at most PTO2_MAX_TASK_PARAMS new indices, and it
 * gets a slot of the task window only once every task task_window - 1 or
 * more ids before it has retired (its scope ended, its heap space went
 * back). So an index task_window * PTO2_MAX_TASK_PARAMS or more below the
 * newest belongs to a retired task: c->ph is a ring of at most that many
 * entries (all of PTO_PH_MAX_IDX, if fewer), 256 bytes per slot of the
 * task window, less than the slot's own descriptor in the runtime's
 * memory. It grows as a graph binds indices.
 */
static uint32_t ph_ring_max(const struct client *c)
{
	uint64_t n = (uint64_t)c->cfg.task_window * PTO2_MAX_TASK_PARAMS;

	return n > (uint64_t)PTO_PH_MAX_IDX + 1 ? PTO_PH_MAX_IDX + 1 :
						  (uint32_t)n;
}

/* Whether placeholder @idx has an entry of its own: 1 .. c->ph_hi, and
 * no newer index took its slot of the ring. */
static bool ph_held(const struct client *c, uint32_t idx)
{
	return idx && idx <= c->ph_hi && c->ph_hi - idx < c->ph_cap;
}

static struct ptod_ph *ph_entry(struct client *c, uint32_t idx)
{
	return &c->ph[idx & (c->ph_cap - 1)];
}

/*
 * Placeholder c->ph_hi + 1 is new: its entry, empty. The ring grows while
 * it is smaller than ph_ring_max(); once it is not, the new index takes
 * the slot of the one ph_cap below it. 0 or -ENOMEM.
 */
static int ph_new(struct client *c)
{
	uint32_t idx = c->ph_hi + 1, max = ph_ring_max(c);

	if (idx >= c->ph_cap && c->ph_cap < max) {
		uint32_t cap = c->ph_cap ? 2 * c->ph_cap : 256;
		struct ptod_ph *n;

		if (cap > max)
			cap = max;
		n = realloc(c->ph, sizeof(*n) * cap);
		if (!n)
			return -ENOMEM;
		memset(n + c->ph_cap, 0, sizeof(*n) * (cap - c->ph_cap));
		c->ph = n;
		c->ph_cap = cap;
	}
	c->ph_hi = idx;
	*ph_entry(c, idx) = (struct ptod_ph){ 0 };
	return 0;
}

/*
 * Bind placeholder @idx (ph_translate() made its entry) to @t's tensor.
 * pto2 gave it a part of its task's packed heap buffer at least @t->size
 * bytes long (a size larger than the heap fails the submit), so the size
 * kept here bounds later uses within what was allocated.
 */
static void ph_bind(struct client *c, uint32_t idx, const Tensor *t)
{
	if (ph_held(c, idx))
		*ph_entry(c, idx) = (struct ptod_ph){ .addr = t->addr,
						      .size = t->size };
}

/*
 * The cluster id a record names: the graph's @vid, translated; -1 if no
 * cluster is allocated as @vid (never, freed, or given to a later vid
 * since its scope ended).
 */
static int32_t cluster_of(struct client *c, int32_t vid)
{
	uint32_t i;

	for (i = 0; vid > 0 && i < c->ncl; i++)
		if (c->cl[i] == vid)
			return (int32_t)i;
	return -1;
}

/*
 * The address of tensor param @i once its placeholder (if any) is bound:
 * 0 with *@bind set for an intermediate's first OUTPUT (the runtime
 * allocates it; the placeholder is bound to the result after submit).
 * -EINVAL after failing the graph if it reads an unproduced intermediate
 * or one whose task has retired and left ptod's ring (ph_ring_max()).
 */
static int ph_translate(struct client *c, int i, int32_t kid, int32_t type,
			Tensor *t, int32_t *bind)
{
	uint64_t a = t->addr;
	uint32_t idx = PTO_PH_IDX(a);

	*bind = -1;
	if (!PTO_IS_PH(a))
		return 0;
	if (idx && idx <= c->ph_hi && !ph_held(c, idx)) {
		/* its task retired, and its slot went to a newer index */
		graph_fail(c, -EINVAL,
			   "submit: param %d of kernel %d uses intermediate tensor %u after the scope that made it ended (%u intermediates later: its task left the task window of %u)",
			   i, kid, idx, c->ph_hi - idx, c->cfg.task_window);
		return -EINVAL;
	}
	if (ph_held(c, idx) && ph_entry(c, idx)->addr) {
		const struct ptod_ph *ph = ph_entry(c, idx);
		uint64_t off = PTO_PH_OFF(a);

		/* as a buffer's range is checked at its pin */
		if (off > ph->size || t->size > ph->size - off) {
			graph_fail(c, -EACCES,
				   "submit: param %d of kernel %d: [+%" PRIu64 ", +%" PRIu64 ") is not inside intermediate tensor %u (%" PRIu64 " bytes)",
				   i, kid, off, off + t->size, idx, ph->size);
			return -EACCES;
		}
		t->addr = ph->addr + off;
		return 0;
	}
	if (type == PTO_PARAM_OUTPUT && idx && !PTO_PH_OFF(a)) {
		/* new indices come in order (wire.h): the ring holds the
		 * newest, not as many as the index a client writes */
		if (idx > c->ph_hi + 1) {
			graph_fail(c, -EPROTO,
				   "submit: param %d of kernel %d: intermediate tensor %u out of order (the next is %u)",
				   i, kid, idx, c->ph_hi + 1);
			return -EPROTO;
		}
		if (idx > c->ph_hi && ph_new(c)) {
			graph_fail(c, -ENOMEM, "out of memory");
			return -ENOMEM;
		}
		t->addr = 0;
		*bind = (int32_t)idx;
		return 0;
	}
	graph_fail(c, -EINVAL,
		   "submit: param %d of kernel %d reads an intermediate tensor that was never produced",
		   i, kid);
	return -EINVAL;
}

/* A worker type as the user named it; any other value as unknown. */
static const char *wt_name(int32_t wt)
{
	return wt == PTO2_WORKER_CUBE ? "AIC (PTO2_WORKER_CUBE)" :
	       wt == PTO2_WORKER_VECTOR ? "AIV (PTO2_WORKER_VECTOR)" :
	       wt == PTO2_WORKER_MIXED ? "MIXED (PTO2_WORKER_MIXED)" :
	       "an unknown worker type";
}

/* The kernel of a SUBMIT is registered, for the worker type submitted. */
static int submit_kernel_ok(struct client *c, int32_t kid, int32_t wt)
{
	int32_t kt;

	if (!pto_kernel_id_ok(kid) ||
	    (kt = atomic_load(&c->ktype[kid])) < 0) {
		graph_fail(c, -ENOENT,
			   "submit: kernel %d is not registered (pto_kernel_load)",
			   kid);
		return -ENOENT;
	}
	if (kt != wt) {
		graph_fail(c, -EINVAL,
			   "submit: kernel %d is an %s kernel, submitted as %s",
			   kid, wt_name(kt), wt_name(wt));
		return -EINVAL;
	}
	return 0;
}

/*
 * A new intermediate is made by one param of its SUBMIT: two would each
 * get a buffer, and the placeholder only the last (pto_params_check()'s
 * rule for the same Tensor passed twice, on the wire's indices).
 */
static int bind_once(struct client *c, int32_t kid, const int32_t *bind,
		     int i)
{
	int j;

	for (j = 0; bind[i] > 0 && j < i; j++)
		if (bind[j] == bind[i]) {
			graph_fail(c, -EINVAL,
				   "submit: params %d and %d of kernel %d are the same new intermediate tensor %d (an OUTPUT without an address): pass it once",
				   j, i, kid, bind[i]);
			return -EINVAL;
		}
	return 0;
}

/*
 * A SUBMIT record as PTOParams over private copies of its tensors, checked
 * by the same rules as everywhere (pto_params_check), placeholders
 * translated, every real address inside one of the client's own buffers,
 * pinned for the run.
 */
static int submit_decode(struct client *c, const struct pto_rec_submit *s,
			 Tensor *t, PTOParam *p, int32_t *bind)
{
	int32_t kid = s->kernel_id;
	char msg[256];
	int i, ret;

	for (i = 0; i < s->nparams; i++) {
		const struct pto_rec_param *rp = &s->p[i];

		t[i] = rp->tensor;
		p[i] = rp->type == PTO_PARAM_SCALAR ?
		       make_scalar_param(rp->scalar) :
		       pto_param_(rp->type, &t[i], 0);
	}
	if (pto_params_check(kid, p, s->nparams, msg, sizeof(msg))) {
		graph_fail(c, -EINVAL, "%s", msg);
		return -EINVAL;
	}
	for (i = 0; i < s->nparams; i++) {
		bind[i] = -1;
		if (p[i].type == PTO_PARAM_SCALAR)
			continue;
		if (PTO_IS_PH(t[i].addr)) {
			ret = ph_translate(c, i, kid, p[i].type, &t[i], &bind[i]);
			if (ret)
				return ret;
			ret = bind_once(c, kid, bind, i);
			if (ret)
				return ret;
			continue;
		}
		if (!t[i].addr) {
			graph_fail(c, -EINVAL,
				   "submit: param %d of kernel %d has address 0",
				   i, kid);
			return -EINVAL;
		}
		/* pinned until the run drained: its tasks may touch it */
		ret = ptod_pin_range(c, &c->run_pins, t[i].addr,
				     t[i].size);
		if (ret) {
			graph_fail(c, -EACCES,
				   "submit: param %d of kernel %d: [0x%" PRIx64 ", +%" PRIu64 ") is not inside a GM buffer of this client (%s)",
				   i, kid, t[i].addr, t[i].size, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static void handle_submit(struct client *c, const struct pto_rec *r)
{
	const struct pto_rec_submit *s = (const void *)r;
	Tensor t[PTO2_MAX_TASK_PARAMS];
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	int32_t bind[PTO2_MAX_TASK_PARAMS];
	PTO2TaskAttr attr;
	int i;

	c->seq++;	/* this record's place in the graph, from 1 */
	if (r->len < sizeof(*s) || s->nparams < 0 ||
	    s->nparams > PTO2_MAX_TASK_PARAMS ||
	    r->len < sizeof(*s) + (size_t)s->nparams * sizeof(s->p[0])) {
		graph_fail(c, -EPROTO, "malformed SUBMIT record");
		return;
	}
	if (submit_kernel_ok(c, s->kernel_id, s->worker_type) ||
	    submit_decode(c, s, t, p, bind))
		return;
	attr = s->attr;
	if (attr.flags & PTO2_ATTR_CLUSTER) {
		attr.cluster_id = cluster_of(c, s->attr.cluster_id);
		/* named by the client's id, not the runtime's */
		if (attr.cluster_id < 0 ||
		    !pto2_runtime_cluster_held(c->rt, attr.cluster_id)) {
			graph_fail(c, -EINVAL,
				   "submit: kernel %d: cluster %d is not allocated by this orchestration (never, or freed, or its scope ended)",
				   s->kernel_id, s->attr.cluster_id);
			return;
		}
	}
	atomic_fetch_add_explicit(&c->submitted, 1, memory_order_relaxed);
	pto2_rt_submit_task_attr(c->rt, s->kernel_id, s->worker_type, p,
				 s->nparams, &attr);
	/* joins libpto:submit (client, graph, seq) to the task id */
	PTO_PROBE5(ptod, submit, c->id, c->tag, c->seq - 1,
		   pto2_rt_last_task_id(c->rt), s->kernel_id);
	for (i = 0; i < s->nparams; i++)
		if (bind[i] > 0 && t[i].addr)
			ph_bind(c, (uint32_t)bind[i], &t[i]);
}

static void handle_cluster(struct client *c, const struct pto_rec *r)
{
	const struct pto_rec_cluster *cr = (const void *)r;
	int32_t id;

	if (r->len < sizeof(*cr) || cr->vid <= 0) {
		graph_fail(c, -EPROTO, "malformed cluster record");
		return;
	}
	if (r->type == PTO_REC_CLUSTER_FREE) {
		id = cluster_of(c, cr->vid);
		if (id < 0) {
			graph_fail(c, -EINVAL,
				   "pto2_rt_free_cluster: cluster %d was not allocated",
				   cr->vid);
			return;
		}
		pto2_rt_free_cluster(c->rt, id);
		c->cl[id] = 0;
		return;
	}
	/* each vid once, in order (wire.h) */
	if ((uint32_t)cr->vid != c->cl_hi + 1) {
		graph_fail(c, -EPROTO,
			   "pto2_rt_allocate_cluster: cluster %d out of order (the next is %u)",
			   cr->vid, c->cl_hi + 1);
		return;
	}
	c->cl_hi = (uint32_t)cr->vid;
	/* by cluster id: the table holds what can be live, however many
	 * vids the graph allocates and frees */
	if (!c->cl) {
		uint32_t n = pto2_engine_clusters(pto2_runtime_engine(c->rt));

		c->cl = calloc(n, sizeof(*c->cl));
		if (!c->cl) {
			graph_fail(c, -ENOMEM, "out of memory");
			return;
		}
		c->ncl = n;
	}
	/* may wait for a cluster; fails the graph on a deadlock. An id
	 * that a scope's end released (ptod is not told) changes hands. */
	id = pto2_rt_allocate_cluster(c->rt);
	if (id >= 0 && (uint32_t)id < c->ncl)
		c->cl[id] = cr->vid;
}

static void handle_kcost(struct client *c, const struct pto_rec *r)
{
	const struct pto_rec_kcost *k = (const void *)r;

	if (r->len < sizeof(*k)) {
		graph_fail(c, -EPROTO, "malformed KCOST record");
		return;
	}
	pto2_rt_set_kernel_cost(c->rt, k->kernel_id, k->est_ns);
}

/* The orchestration function of a run: replay the stream. */
static int reader_entry(PTO2Runtime *rt, uint64_t *args, int argc)
{
	struct client *c = (struct client *)(uintptr_t)args[0];

	(void)rt;
	(void)argc;
	for (;;) {
		struct pto_rec *r = stream_next(c);

		if (!r) {
			int err = atomic_load(&c->stop_err);

			graph_fail(c, err, "%s", stop_reason(c, err));
			return err;
		}
		switch (r->type) {
		case PTO_REC_GRAPH_END:
			stream_consume(c, r);
			return 0;
		case PTO_REC_SCOPE_BEGIN:
			pto2_rt_scope_begin(c->rt);
			break;
		case PTO_REC_SCOPE_END:
			pto2_rt_scope_end(c->rt);
			break;
		case PTO_REC_SUBMIT:
			if (!graph_err(c))
				handle_submit(c, r);
			break;
		case PTO_REC_KCOST:
			handle_kcost(c, r);
			break;
		case PTO_REC_CLUSTER_ALLOC:
		case PTO_REC_CLUSTER_FREE:
			if (!graph_err(c))
				handle_cluster(c, r);
			break;
		default:
			graph_fail(c, -EPROTO, "unexpected record type %u in a graph",
				   r->type);
			break;
		}
		stream_consume(c, r);
		maybe_send_error(c);
	}
}

/* ---- Runs ------------------------------------------------------------------------ */

/*
 * The count of graphs user @uid has running (d->uid_runs; dev_lock held),
 * its entry made if @add: NULL if there is none, or no memory for it.
 */
static uint32_t *uid_runs(struct ptod *d, uid_t uid, bool add)
{
	uint32_t i;

	for (i = 0; i < d->nr_uid_runs; i++)
		if (d->uid_runs[i].uid == uid)
			return &d->uid_runs[i].runs;
	if (!add)
		return NULL;
	if (d->nr_uid_runs == d->cap_uid_runs) {
		uint32_t cap = d->cap_uid_runs ? 2 * d->cap_uid_runs : 16;
		void *n = realloc(d->uid_runs, cap * sizeof(*d->uid_runs));

		if (!n)
			return NULL;
		d->uid_runs = n;
		d->cap_uid_runs = cap;
	}
	d->uid_runs[d->nr_uid_runs].uid = uid;
	d->uid_runs[d->nr_uid_runs].runs = 0;
	return &d->uid_runs[d->nr_uid_runs++].runs;
}

/*
 * Let client @c's graph run if it may now (dev_lock held): once the
 * executor is up (its cores are online), and while its user (but root)
 * has fewer than -D graphs running, for each holds one of the engine's
 * DAG slots as long as it is open, and one user must not hold them all.
 * Cores are not reserved: the runtime's ready tasks go to the device's
 * shared scheduler, which places them on any core task by task.
 * 0: it runs (counted for its user), 1: it waits, or -errno.
 */
static int run_admit(struct client *c)
{
	struct ptod *d = c->d;
	uint32_t *n = NULL;

	if (c->sbx_gave_up)
		return -EOWNERDEAD;	/* its note says why */
	/*
	 * Its sandbox died (a kernel of the last graph crashed it) and the
	 * main thread has not reaped it yet, or has started a new one that
	 * pto-aicore has not taken yet: whether it is started again or given
	 * up is decided there, and ptod_sbx_reaped() wakes us once
	 * pto-aicore has the new one. Let in now, the graph's tasks would
	 * go to the dead sandbox and fail.
	 */
	if (c->sbx_swapping || (c->sbx_pid > 0 && ptod_sbx_exited(c->sbx_pid)))
		return 1;
	if (!d->exec_ready)
		return 1;
	if (c->uid && d->max_runs_uid) {
		n = uid_runs(d, c->uid, true);
		if (!n)
			return -ENOMEM;
		if (*n >= d->max_runs_uid) {
			if (!c->runs_waited)
				ptod_clog(c, PTOD_LOG_INFO,
					  "client %u: its graph waits: user %u has %u graphs running (-D)",
					  c->id, (unsigned int)c->uid, *n);
			c->runs_waited = true;
			return 1;
		}
		(*n)++;
	}
	c->note[0] = 0;
	atomic_store(&c->in_run, 1);
	return 0;
}

static int run_enter(struct client *c)
{
	struct ptod *d = c->d;
	int ret;

	pthread_mutex_lock(&d->dev_lock);
	c->runs_waited = false;
	for (;;) {
		ret = atomic_load(&c->stop_err);
		if (!ret && d->shutting_down)
			ret = -ESHUTDOWN;
		if (!ret)
			ret = run_admit(c);
		if (ret <= 0)
			break;
		pthread_cond_wait(&d->dev_cond, &d->dev_lock);
	}
	pthread_mutex_unlock(&d->dev_lock);
	return ret;
}

static void run_leave(struct client *c)
{
	struct ptod *d = c->d;
	struct ptod_pinset old;
	uint32_t *n;

	pthread_mutex_lock(&d->dev_lock);
	atomic_store(&c->in_run, 0);
	n = c->uid ? uid_runs(d, c->uid, false) : NULL;
	if (n && *n)
		(*n)--;
	/*
	 * The run drained: no task of it can run a replaced kernel blob.
	 * Their unpins (an ioctl each) wait until the lock is given back.
	 */
	old = c->old_kpins;
	memset(&c->old_kpins, 0, sizeof(c->old_kpins));
	pthread_cond_broadcast(&d->dev_cond);
	pthread_mutex_unlock(&d->dev_lock);
	ptod_pins_free(d, &old);
}

/* Discard the records of a graph that cannot run, up to its GRAPH_END. */
static void drain_graph(struct client *c)
{
	for (;;) {
		struct pto_rec *r = stream_next(c);

		if (!r)
			return;
		stream_consume(c, r);
		if (r->type == PTO_REC_GRAPH_END)
			return;
	}
}

/* DONE of a graph that did not run: no statistics. */
static void send_done(struct client *c, int status, const char *msg)
{
	ptod_graph_end(c, status, NULL);
	send_status(c, PTO_MSG_DONE, c->tag, status, msg, NULL);
}

/*
 * @c's run failed, and its sandbox has died but the main thread has not
 * reaped it yet (dev_lock held). pto-aicore fails a task of a dead
 * sandbox as soon as it sees the death, through the sandbox's pidfd or
 * the main thread's REMOVE, so the run can end before
 * ptod_sbx_reaped() has written the note of why: wait for the note, so
 * that the run's message says why its sandbox died. Not past a stop
 * (client_stop() wakes us: the main thread may be about to join this
 * thread), nor past PTOD_SBX_NOTE_WAIT_MS (it may be busy).
 */
static void sbx_death_noted(struct client *c)
{
	struct ptod *d = c->d;
	pid_t pid = c->sbx_pid;
	struct timespec ts;

	if (c->note[0] || pid <= 0 || !ptod_sbx_exited(pid))
		return;
	ts = pto_cond_deadline(PTOD_SBX_NOTE_WAIT_MS * 1000000ULL);
	while (!c->note[0] && c->sbx_pid == pid &&
	       !atomic_load(&c->stop_err) && !d->shutting_down)
		if (pthread_cond_timedwait(&d->dev_cond, &d->dev_lock, &ts))
			break;
}

static void run_graph(struct client *c)
{
	struct ptod *d = c->d;
	uint64_t arg = (uintptr_t)c;
	struct pto2_stats st;
	struct pto_graph_stats gs;
	int64_t t0 = pto_mono_ns();
	char msg[PTO_MSG_TEXT];
	int ret;

	c->gerr = 0;
	c->gmsg[0] = 0;
	c->err_sent = false;
	c->ph_hi = 0;	/* ph_new() empties each entry as the graph needs it */
	if (c->cl)
		memset(c->cl, 0, sizeof(*c->cl) * c->ncl);
	c->cl_hi = 0;

	ret = run_enter(c);
	if (ret) {
		drain_graph(c);
		send_done(c, ret, stop_reason(c, ret));
		return;
	}
	c->seq = 0;
	PTO_PROBE3(ptod, graph_start, c->id, c->tag, c->pid);
	ptod_graph_begin(c);
	pto2_runtime_set_trace(c->rt, c->id, c->tag);
	ret = pto2_runtime_orchestrate(c->rt, reader_entry, &arg, 1);
	if (ret == -EBUSY || (ret == -EINVAL && !c->gerr &&
			      !pto2_rt_get_error(c->rt))) {
		/* the run did not start */
		ptod_pins_release(d, &c->run_pins);
		run_leave(c);
		drain_graph(c);
		send_done(c, ret, "cannot start a run");
		return;
	}
	ret = pto2_runtime_wait(c->rt, 0);
	/* the run drained: no task of it touches the client's memory now */
	ptod_pins_release(d, &c->run_pins);
	pto2_runtime_get_stats(c->rt, &st);
	pthread_mutex_lock(&d->dev_lock);
	if (atomic_load(&c->stop_err)) {
		/* stopped from outside (the main thread aborted the run) */
		ret = atomic_load(&c->stop_err);
		snprintf(msg, sizeof(msg), "%s", stop_reason(c, ret));
	} else {
		if (ret)
			sbx_death_noted(c);
		snprintf(msg, sizeof(msg), "%s%s%s", ret ? graph_msg(c) : "",
			 ret && c->note[0] ? "\n" : "", ret ? c->note : "");
		if (c->gerr)
			ret = c->gerr;
	}
	pthread_mutex_unlock(&d->dev_lock);
	run_leave(c);
	PTO_PROBE4(ptod, graph_done, c->id, c->tag, ret, st.tasks_completed);
	ptod_clog(c, ret ? PTOD_LOG_WARN : PTOD_LOG_INFO,
		  "client %u graph %" PRIu64 ": %s (%d), %" PRIu64 "/%" PRIu64
		  " tasks, %.3f ms", c->id, c->tag, ret ? "failed" : "done", ret,
		  st.tasks_completed, st.tasks_submitted,
		  (double)(pto_mono_ns() - t0) / 1e6);
	gs = (struct pto_graph_stats){
		.tasks = st.tasks_completed, .blocks = st.blocks,
		.wall_ns = (uint64_t)(pto_mono_ns() - t0), .busy_ns = st.busy_ns,
		.wait_ns = st.wait_ns, .wait_max_ns = st.wait_max_ns,
		.early = st.early,
	};
	ptod_graph_end(c, ret, &gs);
	send_status(c, PTO_MSG_DONE, c->tag, ret, msg, &gs);
}

/* A GRAPH_BEGIN says whether the graph is static and how large. */
static void graph_kind(struct client *c, const struct pto_rec *r)
{
	const struct pto_rec_graph *g = (const void *)r;
	bool stat = r->len >= sizeof(*g) && (g->flags & PTO_GRAPH_STATIC);

	if (pto2_runtime_set_dag(c->rt, stat ? g->total_tasks : 0, !stat))
		ptod_clog(c, PTOD_LOG_WARN, "client %u: cannot set the graph's kind",
			  c->id);
}

/*
 * A record outside a graph is ignored. The first PTOD_WARN_MAX of a
 * client's are logged, the others only counted: 16 bytes of stream
 * each, they must not buy a log line each. They are lines about the
 * client's graphs (ptod_clog()): a user who connects again and again
 * gets no more lines a second than one whose graphs fail.
 */
static void outside_graph(struct client *c, const struct pto_rec *r)
{
	if (c->nr_outside++ < PTOD_WARN_MAX)
		ptod_clog(c, PTOD_LOG_WARN,
			  "client %u: record type %u outside a graph, ignored%s",
			  c->id, r->type, c->nr_outside == PTOD_WARN_MAX ?
			  " (its further ones are not logged)" : "");
}

/*
 * stream_next() refused @c's stream outside any graph, which no DONE
 * reports: the client is told why before ptod closes the connection.
 */
static void stream_refused(struct client *c)
{
	send_status(c, PTO_MSG_CLOSING, 0, -EPROTO, stop_reason(c, -EPROTO),
		    NULL);
}

void *ptod_runner_main(void *arg)
{
	struct client *c = arg;
	struct ptod *d = c->d;
	uint64_t one = 1;

	for (;;) {
		bool stopped = atomic_load(&c->stop_err);
		struct pto_rec *r = stream_next(c);

		/*
		 * only stream_next() sets -EPROTO; set before this call, a
		 * graph's DONE already said why
		 */
		if (!r) {
			if (!stopped && atomic_load(&c->stop_err) == -EPROTO)
				stream_refused(c);
			break;
		}
		if (r->type != PTO_REC_GRAPH_BEGIN) {
			outside_graph(c, r);
			stream_consume(c, r);
			continue;
		}
		c->tag = r->tag;
		graph_kind(c, r);
		stream_consume(c, r);
		run_graph(c);
	}
	if (c->nr_outside > PTOD_WARN_MAX)
		ptod_clog(c, PTOD_LOG_WARN,
			  "client %u: %" PRIu64 " records outside a graph ignored in all, at most %d of them logged",
			  c->id, c->nr_outside, PTOD_WARN_MAX);
	pthread_mutex_lock(&d->fin_lock);
	c->fin_next = d->fin;
	d->fin = c;
	pthread_mutex_unlock(&d->fin_lock);
	if (write(d->fin_efd, &one, sizeof(one)) < 0)
		ptod_log(PTOD_LOG_ERR, "fin eventfd: %m");
	return NULL;
}
