// SPDX-License-Identifier: MIT
/*
 * dag.c - DAG files (the format is in Documentation/hws.rst, "DAG files"),
 * and what the HWS is told about each kernel (offline priority, on_cp)
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/dagfile.h>
#include <pto-private/graph.h>
#include <pto-private/parse.h>
#include <pto-private/utf8.h>

#include "sim.h"

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "pto-hws-sim: out of memory\n");
		exit(2);
	}
	return p;
}

struct sim_dag *wl_add_dag(struct workload *w)
{
	struct sim_dag *d;

	w->dag = xrealloc(w->dag, (w->ndag + 1) * sizeof(*w->dag));
	d = &w->dag[w->ndag++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "dag%u", w->ndag - 1);
	return d;
}

struct sim_task *dag_add_task(struct sim_dag *d)
{
	struct sim_task *t;

	/* grow by doubling: ntask is a power of two when full */
	if (!(d->ntask & (d->ntask - 1)))
		d->task = xrealloc(d->task, (d->ntask ? 2 * d->ntask : 1) *
				   sizeof(*d->task));
	t = &d->task[d->ntask];
	memset(t, 0, sizeof(*t));
	t->id = d->ntask++;
	t->block_num = 1;
	t->thread_num = 1;
	t->func = -1;
	t->prio = -1;
	t->cp = -1;
	return t;
}

void task_push_pred(struct sim_task *t, uint32_t pred)
{
	if (!(t->npred & (t->npred - 1)))
		t->pred = xrealloc(t->pred, (t->npred ? 2 * t->npred : 1) *
				   sizeof(*t->pred));
	t->pred[t->npred++] = pred;
}

/* linear in @t's predecessors: for the few of a generated PA task */
void task_add_pred(struct sim_task *t, uint32_t pred)
{
	uint32_t i;

	for (i = 0; i < t->npred; i++)
		if (t->pred[i] == pred)
			return;
	task_push_pred(t, pred);
}

void wl_free(struct workload *w)
{
	uint32_t i, j;

	for (i = 0; i < w->ndag; i++) {
		for (j = 0; j < w->dag[i].ntask; j++) {
			free(w->dag[i].task[j].pred);
			free(w->dag[i].task[j].succ);
			free(w->dag[i].task[j].ran);
		}
		free(w->dag[i].task);
	}
	free(w->dag);
	memset(w, 0, sizeof(*w));
}

int parse_decimal(const char *s, double *v, char **end)
{
	const char *p = s;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return -EINVAL;
	if (*p == '.')
		while (isdigit((unsigned char)*++p))
			;
	errno = 0;
	*v = strtod(s, end);
	if (*end != p || errno)
		return -EINVAL;
	return 0;
}

/*
 * "1500", "1500ns", "1.5us", "2ms", "0.25s" -> ns, in integers: the
 * units are powers of ten, so a time is exact (rounded half up past the
 * nanosecond) and its bound holds to the nanosecond; a double keeps 53
 * bits and took 2^62 + 512 for 2^62.
 */
int parse_time(const char *s, uint64_t *out)
{
	static const struct {
		const char *name;
		unsigned int digits;	/* the unit is 10^digits ns */
	} units[] = { { "", 0 }, { "ns", 0 }, { "us", 3 }, { "ms", 6 },
		      { "s", 9 } };
	const char *p = s, *frac = NULL;
	unsigned int k, i, e;
	uint64_t ns = 0;

	for (; isdigit((unsigned char)*p); p++)
		if (__builtin_mul_overflow(ns, 10, &ns) ||
		    __builtin_add_overflow(ns, (uint64_t)(*p - '0'), &ns))
			return -ERANGE;
	if (p == s)
		return -EINVAL;
	if (*p == '.')
		for (frac = ++p; isdigit((unsigned char)*p); p++)
			;
	for (k = 0; k < PTO_ARRAY_SIZE(units) && strcmp(p, units[k].name);
	     k++)
		;
	if (k == PTO_ARRAY_SIZE(units))
		return -EINVAL;
	e = units[k].digits;
	/* the first @e fraction digits are whole ns, the next rounds */
	for (i = 0; i <= e; i++) {
		unsigned int d = frac && isdigit((unsigned char)frac[i]) ?
				 (unsigned int)(frac[i] - '0') : 0;

		if (frac && !isdigit((unsigned char)frac[i]))
			frac = NULL;	/* past the last digit: zeros */
		if (i == e) {
			if (d >= 5 && __builtin_add_overflow(ns, 1, &ns))
				return -ERANGE;
		} else if (__builtin_mul_overflow(ns, 10, &ns) ||
			   __builtin_add_overflow(ns, (uint64_t)d, &ns)) {
			return -ERANGE;
		}
	}
	if (ns > SIM_MAX_TIME)
		return -ERANGE;
	*out = ns;
	return 0;
}

int parse_cost(const char *s, uint64_t *out)
{
	int ret = parse_time(s, out);

	return ret ? ret : *out > PTO_MAX_EST_NS ? -ERANGE : 0;
}

int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (pto_parse_u64_all(s, 10, max, &v))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "A" or "A-B" split at the dash into @buf: the part after it, or NULL. */
static char *split_range(const char *s, char *buf, size_t len)
{
	char *dash;

	if (strlen(s) >= len)
		return NULL;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	return dash ? dash : buf;
}

int parse_count_range(const char *s, uint32_t min, uint32_t *lo,
		      uint32_t *hi)
{
	char buf[32], *b = split_range(s, buf, sizeof(buf));
	uint32_t x, y;

	if (!b || parse_u32(buf, SIM_MAX_COUNT, &x) ||
	    parse_u32(b, SIM_MAX_COUNT, &y) || x < min || x > y)
		return -EINVAL;
	*lo = x;
	*hi = y;
	return 0;
}

int parse_cost_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	char buf[64], *b = split_range(s, buf, sizeof(buf));
	uint64_t x, y;

	if (!b || parse_cost(buf, &x) || parse_cost(b, &y) || x > y)
		return -EINVAL;
	*lo = x;
	*hi = y;
	return 0;
}

/* id -> task index of the DAG being read */
struct idmap {
	uint32_t *idx;		/* UINT32_MAX: no such task */
	uint32_t size;
};

#define ID_MAX	(1U << 24)

static uint32_t idmap_get(const struct idmap *m, uint32_t id)
{
	return id < m->size ? m->idx[id] : UINT32_MAX;
}

static void idmap_put(struct idmap *m, uint32_t id, uint32_t idx)
{
	if (id >= m->size) {
		uint32_t n = m->size ? m->size : 64;

		while (n <= id)
			n *= 2;
		m->idx = xrealloc(m->idx, n * sizeof(*m->idx));
		memset(m->idx + m->size, 0xff, (n - m->size) * sizeof(*m->idx));
		m->size = n;
	}
	m->idx[id] = idx;
}

/*
 * Forget the ids of @d's tasks (a new DAG begins): those alone, not the
 * whole map, which one large id makes 64 MiB; it keeps its memory.
 */
static void idmap_forget(struct idmap *m, const struct sim_dag *d)
{
	for (uint32_t i = 0; i < d->ntask; i++)
		m->idx[d->task[i].id] = UINT32_MAX;
}

/* A DAG file being read. */
struct reader {
	const char *fname;
	unsigned int line;
	char *err;
	size_t errlen;
	struct workload *w;
	struct sim_dag *d;	/* the DAG being read, or NULL */
	struct idmap ids;	/* its task ids */
	char *save;		/* strtok_r() state of the line */
	/*
	 * Per task of the DAG (by index, @nmark of them): the line that
	 * last named it as a predecessor, so that a task's list of them
	 * is kept free of repeats in one pass, not one per predecessor
	 */
	uint32_t *mark;
	uint32_t nmark;
};

/* The error "FILE:LINE: ..."; returns -EINVAL. */
__attribute__((format(printf, 2, 3)))
static int perr(struct reader *rd, const char *fmt, ...)
{
	int n = snprintf(rd->err, rd->errlen, "%s:%u: ", rd->fname, rd->line);
	va_list ap;

	if (n > 0 && (size_t)n < rd->errlen) {
		va_start(ap, fmt);
		vsnprintf(rd->err + n, rd->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The line's next word, or NULL. */
static char *next_word(struct reader *rd)
{
	return strtok_r(NULL, " \t\r\n", &rd->save);
}

/*
 * A DAG name is text: well-formed UTF-8 without control characters (C0,
 * DEL, C1), so that pto-trace can put it into JSON and XML as it is. 0,
 * or -EINVAL.
 */
static int name_check(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	uint32_t cp;
	int n;

	for (; *p; p += n) {
		n = pto_utf8_char(p, &cp);
		if (!n || pto_utf8_control(cp))
			return -EINVAL;
	}
	return 0;
}

/* "dag NAME [static|dynamic] [arrival T] [ctx N]": a new DAG. */
static int parse_dag(struct reader *rd)
{
	unsigned int seen = 0, bit;
	struct sim_dag *d;
	char *tok, *val;

	/* before wl_add_dag(), which may move rd->d */
	if (rd->d)
		idmap_forget(&rd->ids, rd->d);
	d = wl_add_dag(rd->w);
	rd->d = d;
	tok = next_word(rd);
	if (!tok)
		return perr(rd, "dag: a name is needed");
	if (strlen(tok) > PTO_DAGF_NAME_MAX)
		return perr(rd, "dag: name '%.16s...' longer than %d bytes",
			    tok, PTO_DAGF_NAME_MAX);
	if (name_check(tok))
		return perr(rd, "dag: name is not text (UTF-8 without control characters)");
	snprintf(d->name, sizeof(d->name), "%s", tok);
	while ((tok = next_word(rd))) {
		/* each once: a second value would silently win */
		bit = !strcmp(tok, "static") || !strcmp(tok, "dynamic") ? 1 :
		      !strcmp(tok, "arrival") ? 2 : !strcmp(tok, "ctx") ? 4 : 0;
		if (seen & bit)
			return perr(rd, "dag %s: '%s' given twice", d->name,
				    bit == 1 ? "static|dynamic" : tok);
		seen |= bit;
		if (!strcmp(tok, "static")) {
			d->dynamic = false;
			continue;
		}
		if (!strcmp(tok, "dynamic")) {
			d->dynamic = true;
			continue;
		}
		val = next_word(rd);
		if (!val)
			return perr(rd, "dag: '%s' needs a value", tok);
		if (!strcmp(tok, "arrival")) {
			if (parse_time(val, &d->arrival))
				return perr(rd, "dag: bad arrival time '%s'",
					    val);
		} else if (!strcmp(tok, "ctx")) {
			if (parse_u32(val, HWS_NR_CTX - 1, &d->ctx))
				return perr(rd, "dag: context '%s' not in 0..%d",
					    val, HWS_NR_CTX - 1);
		} else {
			return perr(rd, "dag: unknown field '%s'", tok);
		}
	}
	return 0;
}

/* "shape BxT" or "shape BxTc" (cooperative) of task @t. */
static int parse_shape(struct reader *rd, struct sim_task *t, char *val)
{
	char *p = strchr(val, 'x'), *q;
	uint32_t v;

	if (!p)
		return perr(rd, "task %u: shape '%s' (BLOCKSxTHREADS[c])",
			    t->id, val);
	*p++ = '\0';
	q = p + strlen(p);
	if (q > p && q[-1] == 'c') {
		t->coop = true;
		*--q = '\0';
	}
	if (parse_u32(val, UINT16_MAX, &v) || !v)
		return perr(rd, "task %u: block count '%s' (1..65535)", t->id,
			    val);
	t->block_num = (uint16_t)v;
	if (parse_u32(p, 16, &v) || !v)
		return perr(rd, "task %u: thread count '%s' (1..16)", t->id, p);
	t->thread_num = (uint16_t)v;
	return 0;
}

/* "pred ID,ID,...": earlier tasks of the same DAG. */
static int parse_preds(struct reader *rd, struct sim_task *t, char *val)
{
	uint32_t v, x;
	char *p;

	if (rd->nmark < rd->d->ntask) {
		rd->mark = xrealloc(rd->mark, rd->d->ntask * sizeof(*rd->mark));
		memset(rd->mark + rd->nmark, 0,
		       (rd->d->ntask - rd->nmark) * sizeof(*rd->mark));
		rd->nmark = rd->d->ntask;
	}
	while ((p = pto_next_field(&val, ','))) {
		if (parse_u32(p, ID_MAX - 1, &v))
			return perr(rd, "task %u: predecessor '%s'", t->id, p);
		x = idmap_get(&rd->ids, v);
		if (x == UINT32_MAX || v == t->id)
			return perr(rd, "task %u: predecessor %u is not an earlier task of dag %s",
				    t->id, v, rd->d->name);
		if (rd->mark[x] != rd->line) {	/* lines count from 1 */
			rd->mark[x] = rd->line;
			task_push_pred(t, x);
		}
	}
	return 0;
}

/* One "KEY VALUE" field of task @t other than "cp". */
static int parse_task_field(struct reader *rd, struct sim_task *t,
			    const char *tok, char *val)
{
	uint32_t v;

	if (!strcmp(tok, "cost")) {
		if (parse_cost(val, &t->cost))
			return perr(rd, "task %u: bad cost '%s'", t->id, val);
	} else if (!strcmp(tok, "est")) {
		if (parse_cost(val, &t->est))
			return perr(rd, "task %u: bad est '%s'", t->id, val);
	} else if (!strcmp(tok, "type")) {
		if (!strcmp(val, "aic"))
			t->type = SIM_AIC;
		else if (!strcmp(val, "aiv"))
			t->type = SIM_AIV;
		else if (!strcmp(val, "any"))
			t->type = SIM_ANY;
		else
			return perr(rd, "task %u: type '%s' (aic, aiv or any)",
				    t->id, val);
	} else if (!strcmp(tok, "shape")) {
		return parse_shape(rd, t, val);
	} else if (!strcmp(tok, "prio")) {
		if (parse_u32(val, UINT32_MAX, &v))
			return perr(rd, "task %u: priority '%s'", t->id, val);
		t->prio = v;
	} else if (!strcmp(tok, "func")) {
		if (parse_u32(val, INT32_MAX, &v))
			return perr(rd, "task %u: func '%s'", t->id, val);
		t->func = (int32_t)v;
	} else if (!strcmp(tok, "pred")) {
		return parse_preds(rd, t, val);
	} else {
		return perr(rd, "task %u: unknown field '%s'", t->id, tok);
	}
	return 0;
}

/*
 * The fields a task line gives at most once (a second value would
 * silently win), field k seen: bit k; "pred" may be given again and
 * adds edges.
 */
enum { TF_COST, TF_EST, TF_TYPE, TF_SHAPE, TF_PRIO, TF_FUNC, TF_CP, TF_N };
static const char *const task_once[TF_N] = {
	[TF_COST] = "cost", [TF_EST] = "est", [TF_TYPE] = "type",
	[TF_SHAPE] = "shape", [TF_PRIO] = "prio", [TF_FUNC] = "func",
	[TF_CP] = "cp",
};

/* "task ID FIELD...": a task of the current DAG; "cost" is required. */
static int parse_task(struct reader *rd)
{
	unsigned int seen = 0, k;
	struct sim_task *t;
	char *tok, *val;
	uint32_t id;
	int ret;

	if (!rd->d)
		return perr(rd, "task before any 'dag' line");
	tok = next_word(rd);
	if (!tok || parse_u32(tok, ID_MAX - 1, &id))
		return perr(rd, "task: an id 0..%u is needed", ID_MAX - 1);
	if (idmap_get(&rd->ids, id) != UINT32_MAX)
		return perr(rd, "task %u: defined twice in dag %s", id,
			    rd->d->name);
	t = dag_add_task(rd->d);
	t->id = id;
	idmap_put(&rd->ids, id, rd->d->ntask - 1);
	while ((tok = next_word(rd))) {
		for (k = 0; k < TF_N && strcmp(tok, task_once[k]); k++)
			;
		if (k < TF_N) {
			if (seen & (1U << k))
				return perr(rd, "task %u: '%s' given twice",
					    id, tok);
			seen |= 1U << k;
		}
		if (!strcmp(tok, "cp")) {
			t->cp = 1;
			continue;
		}
		val = next_word(rd);
		if (!val)
			return perr(rd, "task %u: '%s' needs a value", id, tok);
		ret = parse_task_field(rd, t, tok, val);
		if (ret)
			return ret;
	}
	if (!(seen & (1U << TF_COST)))
		return perr(rd, "task %u: 'cost' is required", id);
	if (!(seen & (1U << TF_EST)))
		t->est = t->cost;
	return 0;
}

/* One "KEY TIME" field of block line @b; @seen collects the keys given. */
static int parse_block_field(struct reader *rd, struct pto_dagf_block *b,
			     const char *tok, const char *val,
			     unsigned int *seen)
{
	static const char *const key[] = { "core", "dispatch", "start", "end" };
	uint64_t *t[] = { NULL, &b->dispatch, &b->start, &b->end };
	unsigned int k;

	for (k = 0; k < 4 && strcmp(tok, key[k]); k++)
		;
	if (k == 4)
		return perr(rd, "block of task %u: unknown field '%s'",
			    b->task, tok);
	if (*seen & (1U << k))
		return perr(rd, "block of task %u: '%s' given twice", b->task,
			    tok);
	if (k ? parse_time(val, t[k]) : parse_u32(val, UINT32_MAX, &b->core))
		return perr(rd, "block of task %u: bad %s '%s'", b->task, tok,
			    val);
	*seen |= 1U << k;
	return 0;
}

/* "block TASK core C dispatch T start T end T": an earlier task ran. */
static int parse_block(struct reader *rd)
{
	struct pto_dagf_block b = { 0 };
	unsigned int seen = 0;
	struct sim_task *t;
	char *tok, *val;
	uint32_t x;
	int ret;

	if (!rd->d)
		return perr(rd, "block before any 'dag' line");
	tok = next_word(rd);
	if (!tok || parse_u32(tok, ID_MAX - 1, &b.task))
		return perr(rd, "block: a task id 0..%u is needed", ID_MAX - 1);
	x = idmap_get(&rd->ids, b.task);
	if (x == UINT32_MAX)
		return perr(rd, "block: task %u is not an earlier task of dag %s",
			    b.task, rd->d->name);
	while ((tok = next_word(rd))) {
		val = next_word(rd);
		if (!val)
			return perr(rd, "block of task %u: '%s' needs a value",
				    b.task, tok);
		ret = parse_block_field(rd, &b, tok, val, &seen);
		if (ret)
			return ret;
	}
	if (seen != 0xf)
		return perr(rd, "block of task %u: core, dispatch, start and end are required",
			    b.task);
	if (b.end < b.start)
		return perr(rd, "block of task %u: ends before it starts",
			    b.task);
	t = &rd->d->task[x];
	if (!(t->nran & (t->nran - 1)))
		t->ran = xrealloc(t->ran, (t->nran ? 2 * t->nran : 1) *
				  sizeof(*t->ran));
	t->ran[t->nran++] = b;
	return 0;
}

int wl_parse(FILE *f, const char *fname, struct workload *w, char *err,
	     size_t errlen)
{
	struct reader rd = { .fname = fname, .err = err, .errlen = errlen,
			     .w = w };
	char *buf = NULL, *tok, *hash;
	uint32_t ndag = w->ndag;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	while (!ret && (len = getline(&buf, &cap, f)) >= 0) {
		rd.line++;
		/* what follows a NUL would be dropped unseen: not text */
		if (strlen(buf) != (size_t)len) {
			ret = perr(&rd, "a NUL byte (not a text file?)");
			break;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		tok = strtok_r(buf, " \t\r\n", &rd.save);
		if (!tok)
			continue;
		if (!strcmp(tok, "dag"))
			ret = parse_dag(&rd);
		else if (!strcmp(tok, "task"))
			ret = parse_task(&rd);
		else if (!strcmp(tok, "block"))
			ret = parse_block(&rd);
		else
			ret = perr(&rd, "unknown line '%s' (dag, task, block or #)",
				   tok);
	}
	if (!ret && ferror(f)) {
		snprintf(err, errlen, "%s: %s", fname,
			 errno ? strerror(errno) : "read error");
		ret = -EIO;
	} else if (!ret && w->ndag == ndag) {
		/* of this file: an earlier file's DAGs are not its own */
		snprintf(err, errlen, "%s: no dag", fname);
		ret = -EINVAL;
	}
	free(buf);
	free(rd.ids.idx);
	free(rd.mark);
	return ret;
}

void wl_write(FILE *f, const struct workload *w)
{
	uint32_t i, j, k, *ids = NULL, cap = 0;

	fprintf(f, "# pto-hws-sim workload: %u DAG(s)\n", w->ndag);
	for (i = 0; i < w->ndag; i++) {
		const struct sim_dag *d = &w->dag[i];

		pto_dagf_write_dag(f, d->name, d->arrival, d->dynamic, d->ctx);
		for (j = 0; j < d->ntask; j++) {
			const struct sim_task *t = &d->task[j];
			struct pto_dagf_task ft = {
				.id = t->id, .cost = t->cost, .est = t->est,
				.type = t->type, .block_num = t->block_num,
				.thread_num = t->thread_num, .coop = t->coop,
				.func = t->func, .prio = t->prio, .cp = t->cp,
				.npred = t->npred,
			};

			if (t->npred > cap) {
				cap = t->npred;
				ids = xrealloc(ids, cap * sizeof(*ids));
			}
			for (k = 0; k < t->npred; k++)
				ids[k] = d->task[t->pred[k]].id;
			ft.pred = ids;
			pto_dagf_write_task(f, &ft);
			for (k = 0; k < t->nran; k++)
				pto_dagf_write_block(f, &t->ran[k]);
		}
	}
	free(ids);
}

/* The largest rank of @d's tasks, at least 1: a divisor. */
static uint64_t dag_max_rank(const struct sim_dag *d)
{
	uint64_t m = 1;
	uint32_t j;

	for (j = 0; j < d->ntask; j++)
		if (d->task[j].rank > m)
			m = d->task[j].rank;
	return m;
}

/*
 * The successors of @d's tasks, from their predecessors: in each task,
 * and as one array *@succp of the tasks' successors in order, task j's
 * from (*@offp)[j] to (*@offp)[j + 1].
 */
static void dag_successors(struct sim_dag *d, uint32_t **offp,
			   uint32_t **succp)
{
	uint32_t n = d->ntask, *off, *succ, e = 0, j, k;

	off = xrealloc(NULL, (n + 1) * sizeof(*off));
	memset(off, 0, (n + 1) * sizeof(*off));
	for (j = 0; j < n; j++)
		for (k = 0; k < d->task[j].npred; k++)
			off[d->task[j].pred[k] + 1]++;
	for (j = 0; j < n; j++)
		off[j + 1] += off[j];
	succ = xrealloc(NULL, (off[n] + 1) * sizeof(*succ));
	for (j = 0; j < n; j++) {
		free(d->task[j].succ);
		d->task[j].nsucc = off[j + 1] - off[j];
		d->task[j].succ = xrealloc(NULL, (d->task[j].nsucc + 1) *
					   sizeof(uint32_t));
		d->task[j].nsucc = 0;
	}
	for (j = 0; j < n; j++) {
		for (k = 0; k < d->task[j].npred; k++) {
			struct sim_task *p = &d->task[d->task[j].pred[k]];

			p->succ[p->nsucc++] = j;
		}
	}
	for (j = 0; j < n; j++)
		for (k = 0; k < d->task[j].nsucc; k++)
			succ[e++] = d->task[j].succ[k];
	*offp = off;
	*succp = succ;
}

/*
 * @d's work and critical path on real costs, then its tasks' upward
 * ranks and on_cp on the estimates (what the HWS sees); raises *@maxrank
 * to the largest rank of a static task whose file gives no priority.
 * Fails if an edge goes backwards.
 */
static int dag_ranks(struct sim_dag *d, const uint32_t *off,
		     const uint32_t *succ, uint64_t *maxrank)
{
	uint32_t n = d->ntask, j;
	uint64_t *cost = xrealloc(NULL, n * sizeof(*cost));
	uint64_t *rank = xrealloc(NULL, n * sizeof(*rank));
	bool *cp = xrealloc(NULL, n * sizeof(*cp));
	int ret;

	d->work = 0;
	for (j = 0; j < n; j++) {
		cost[j] = d->task[j].cost;
		d->work += d->task[j].cost * d->task[j].block_num *
			   d->task[j].thread_num;
	}
	ret = pto_upward_rank(n, cost, off, succ, rank, cp);
	d->cp_len = 0;
	for (j = 0; !ret && j < n; j++)
		if (rank[j] > d->cp_len)
			d->cp_len = rank[j];
	for (j = 0; !ret && j < n; j++)
		cost[j] = d->task[j].est;
	if (!ret)
		ret = pto_upward_rank(n, cost, off, succ, rank, cp);
	for (j = 0; !ret && j < n; j++) {
		struct sim_task *t = &d->task[j];

		t->rank = rank[j];
		t->on_cp = t->cp >= 0 ? t->cp : (!d->dynamic && cp[j]);
		if (!d->dynamic && t->prio < 0 && rank[j] > *maxrank)
			*maxrank = rank[j];
	}
	free(cost);
	free(rank);
	free(cp);
	return ret;
}

/* Every task's offline priority (see wl_prepare()). */
static void wl_offline(struct workload *w, uint64_t maxrank)
{
	uint32_t i, j, shift = 0;

	while ((maxrank >> shift) > INT32_MAX)
		shift++;
	for (i = 0; i < w->ndag; i++) {
		struct sim_dag *d = &w->dag[i];
		uint64_t dmax = dag_max_rank(d);

		for (j = 0; j < d->ntask; j++) {
			struct sim_task *t = &d->task[j];

			if (t->prio >= 0)
				t->offline = (uint32_t)t->prio;
			else if (d->dynamic)
				t->offline = d->ntask - j;
			else if (w->prio_mode == PRIO_NORM)
				t->offline = (uint32_t)(((unsigned __int128)
					t->rank << 30) / dmax);
			else
				t->offline = (uint32_t)(t->rank >> shift);
		}
	}
}

/*
 * Successors, ranks, critical paths and what the HWS is told: a static
 * DAG's kernels get offline priority = upward rank on the estimates
 * (scaled by one power of two for the whole workload so that every rank
 * fits 31 bits; or, PRIO_NORM, divided by the DAG's largest rank) and
 * on_cp from pto_upward_rank; a dynamic DAG's kernels
 * get their submission order (the first submitted highest) and on_cp 0.
 * Values given in the file win.
 */
int wl_prepare(struct workload *w, char *err, size_t errlen)
{
	uint64_t maxrank = 0;
	uint32_t i;

	for (i = 0; i < w->ndag; i++) {
		struct sim_dag *d = &w->dag[i];
		uint32_t *off, *succ;
		int ret;

		if (!d->ntask) {
			snprintf(err, errlen, "dag %s has no task", d->name);
			return -EINVAL;
		}
		dag_successors(d, &off, &succ);
		ret = dag_ranks(d, off, succ, &maxrank);
		free(off);
		free(succ);
		if (ret) {
			snprintf(err, errlen, "dag %s: edges do not go forwards",
				 d->name);
			return ret;
		}
	}
	wl_offline(w, maxrank);
	return 0;
}
