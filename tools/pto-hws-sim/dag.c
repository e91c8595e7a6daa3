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

#include <pto-private/graph.h>

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

void task_add_pred(struct sim_task *t, uint32_t pred)
{
	uint32_t i;

	for (i = 0; i < t->npred; i++)
		if (t->pred[i] == pred)
			return;
	if (!(t->npred & (t->npred - 1)))
		t->pred = xrealloc(t->pred, (t->npred ? 2 * t->npred : 1) *
				   sizeof(*t->pred));
	t->pred[t->npred++] = pred;
}

void wl_free(struct workload *w)
{
	uint32_t i, j;

	for (i = 0; i < w->ndag; i++) {
		for (j = 0; j < w->dag[i].ntask; j++) {
			free(w->dag[i].task[j].pred);
			free(w->dag[i].task[j].succ);
		}
		free(w->dag[i].task);
	}
	free(w->dag);
	memset(w, 0, sizeof(*w));
}

/* "1500", "1500ns", "1.5us", "2ms", "0.25s" -> ns */
int parse_time(const char *s, uint64_t *out)
{
	char *end;
	double v;
	double unit = 1;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	if (!strcmp(end, "") || !strcmp(end, "ns"))
		unit = 1;
	else if (!strcmp(end, "us"))
		unit = 1e3;
	else if (!strcmp(end, "ms"))
		unit = 1e6;
	else if (!strcmp(end, "s"))
		unit = 1e9;
	else
		return -EINVAL;
	v *= unit;
	if (v > 9e18)
		return -ERANGE;
	*out = (uint64_t)(v + 0.5);
	return 0;
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
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

#define PERR(...) do {							\
	int _n = snprintf(err, errlen, "%s:%u: ", fname, line);	\
	if (_n > 0 && (size_t)_n < errlen)				\
		snprintf(err + _n, errlen - (size_t)_n, __VA_ARGS__);	\
	ret = -EINVAL;							\
	goto out;							\
} while (0)

int wl_parse(FILE *f, const char *fname, struct workload *w, char *err,
	     size_t errlen)
{
	struct idmap ids = { NULL, 0 };
	struct sim_dag *d = NULL;
	char *buf = NULL, *save, *tok, *hash;
	size_t cap = 0;
	unsigned int line = 0;
	int ret = 0;

	while (getline(&buf, &cap, f) >= 0) {
		line++;
		hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		tok = strtok_r(buf, " \t\r\n", &save);
		if (!tok)
			continue;
		if (!strcmp(tok, "dag")) {
			d = wl_add_dag(w);
			memset(ids.idx, 0xff, ids.size * sizeof(*ids.idx));
			tok = strtok_r(NULL, " \t\r\n", &save);
			if (!tok)
				PERR("dag: a name is needed");
			snprintf(d->name, sizeof(d->name), "%s", tok);
			while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
				char *val;

				if (!strcmp(tok, "static")) {
					d->dynamic = false;
					continue;
				}
				if (!strcmp(tok, "dynamic")) {
					d->dynamic = true;
					continue;
				}
				val = strtok_r(NULL, " \t\r\n", &save);
				if (!val)
					PERR("dag: '%s' needs a value", tok);
				if (!strcmp(tok, "arrival")) {
					if (parse_time(val, &d->arrival))
						PERR("dag: bad arrival time '%s'", val);
				} else if (!strcmp(tok, "ctx")) {
					if (parse_u32(val, HWS_NR_CTX - 1, &d->ctx))
						PERR("dag: context '%s' not in 0..%d",
						     val, HWS_NR_CTX - 1);
				} else {
					PERR("dag: unknown field '%s'", tok);
				}
			}
		} else if (!strcmp(tok, "task")) {
			struct sim_task *t;
			uint32_t id, v;
			bool have_cost = false, have_est = false;

			if (!d)
				PERR("task before any 'dag' line");
			tok = strtok_r(NULL, " \t\r\n", &save);
			if (!tok || parse_u32(tok, ID_MAX - 1, &id))
				PERR("task: an id 0..%u is needed", ID_MAX - 1);
			if (idmap_get(&ids, id) != UINT32_MAX)
				PERR("task %u: defined twice in dag %s", id,
				     d->name);
			t = dag_add_task(d);
			t->id = id;
			idmap_put(&ids, id, d->ntask - 1);
			while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
				char *val, *p, *q;

				if (!strcmp(tok, "cp")) {
					t->cp = 1;
					continue;
				}
				val = strtok_r(NULL, " \t\r\n", &save);
				if (!val)
					PERR("task %u: '%s' needs a value", id, tok);
				if (!strcmp(tok, "cost")) {
					if (parse_time(val, &t->cost))
						PERR("task %u: bad cost '%s'", id, val);
					have_cost = true;
				} else if (!strcmp(tok, "est")) {
					if (parse_time(val, &t->est))
						PERR("task %u: bad est '%s'", id, val);
					have_est = true;
				} else if (!strcmp(tok, "type")) {
					if (!strcmp(val, "aic"))
						t->type = SIM_AIC;
					else if (!strcmp(val, "aiv"))
						t->type = SIM_AIV;
					else if (!strcmp(val, "any"))
						t->type = SIM_ANY;
					else
						PERR("task %u: type '%s' (aic, aiv or any)",
						     id, val);
				} else if (!strcmp(tok, "shape")) {
					/* BxT or BxTc */
					p = strchr(val, 'x');
					if (!p)
						PERR("task %u: shape '%s' (BLOCKSxTHREADS[c])",
						     id, val);
					*p++ = '\0';
					q = p + strlen(p);
					if (q > p && q[-1] == 'c') {
						t->coop = true;
						*--q = '\0';
					}
					if (parse_u32(val, UINT16_MAX, &v) || !v)
						PERR("task %u: block count '%s' (1..65535)",
						     id, val);
					t->block_num = (uint16_t)v;
					if (parse_u32(p, 16, &v) || !v)
						PERR("task %u: thread count '%s' (1..16)",
						     id, p);
					t->thread_num = (uint16_t)v;
				} else if (!strcmp(tok, "prio")) {
					if (parse_u32(val, UINT32_MAX, &v))
						PERR("task %u: priority '%s'", id, val);
					t->prio = v;
				} else if (!strcmp(tok, "func")) {
					if (parse_u32(val, INT32_MAX, &v))
						PERR("task %u: func '%s'", id, val);
					t->func = (int32_t)v;
				} else if (!strcmp(tok, "pred")) {
					for (p = strtok(val, ","); p;
					     p = strtok(NULL, ",")) {
						uint32_t x;

						if (parse_u32(p, ID_MAX - 1, &v))
							PERR("task %u: predecessor '%s'",
							     id, p);
						x = idmap_get(&ids, v);
						if (x == UINT32_MAX || v == id)
							PERR("task %u: predecessor %u is not an earlier task of dag %s",
							     id, v, d->name);
						task_add_pred(t, x);
					}
				} else {
					PERR("task %u: unknown field '%s'", id,
					     tok);
				}
			}
			if (!have_cost)
				PERR("task %u: 'cost' is required", id);
			if (!have_est)
				t->est = t->cost;
		} else {
			PERR("unknown line '%s' (dag, task or #)", tok);
		}
	}
	if (!w->ndag) {
		snprintf(err, errlen, "%s: no dag", fname);
		ret = -EINVAL;
	}
out:
	free(buf);
	free(ids.idx);
	return ret;
}

static void put_time(FILE *f, const char *key, uint64_t ns)
{
	if (ns && !(ns % 1000000))
		fprintf(f, " %s %llums", key, (unsigned long long)(ns / 1000000));
	else if (ns && !(ns % 1000))
		fprintf(f, " %s %lluus", key, (unsigned long long)(ns / 1000));
	else
		fprintf(f, " %s %llu", key, (unsigned long long)ns);
}

void wl_write(FILE *f, const struct workload *w)
{
	static const char *const types[] = { "any", "aic", "aiv" };
	uint32_t i, j, k;

	fprintf(f, "# pto-hws-sim workload: %u DAG(s)\n", w->ndag);
	for (i = 0; i < w->ndag; i++) {
		const struct sim_dag *d = &w->dag[i];

		fprintf(f, "dag %s", d->name);
		put_time(f, "arrival", d->arrival);
		fprintf(f, " %s", d->dynamic ? "dynamic" : "static");
		if (d->ctx)
			fprintf(f, " ctx %u", d->ctx);
		fprintf(f, "\n");
		for (j = 0; j < d->ntask; j++) {
			const struct sim_task *t = &d->task[j];

			fprintf(f, "task %u", t->id);
			put_time(f, "cost", t->cost);
			if (t->est != t->cost)
				put_time(f, "est", t->est);
			fprintf(f, " type %s", types[t->type]);
			if (t->block_num != 1 || t->thread_num != 1 || t->coop)
				fprintf(f, " shape %ux%u%s", t->block_num,
					t->thread_num, t->coop ? "c" : "");
			if (t->func >= 0)
				fprintf(f, " func %d", t->func);
			if (t->prio >= 0)
				fprintf(f, " prio %lld", (long long)t->prio);
			if (t->cp > 0)
				fprintf(f, " cp");
			for (k = 0; k < t->npred; k++)
				fprintf(f, "%s%u", k ? "," : " pred ",
					d->task[t->pred[k]].id);
			fprintf(f, "\n");
		}
	}
}

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
	uint32_t i, j, k, shift = 0;

	for (i = 0; i < w->ndag; i++) {
		struct sim_dag *d = &w->dag[i];
		uint32_t n = d->ntask, *off, *succ, e = 0;
		uint64_t *cost, *rank;
		bool *cp;
		int ret;

		if (!n) {
			snprintf(err, errlen, "dag %s has no task", d->name);
			return -EINVAL;
		}
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
		cost = xrealloc(NULL, n * sizeof(*cost));
		rank = xrealloc(NULL, n * sizeof(*rank));
		cp = xrealloc(NULL, n * sizeof(*cp));
		/* the critical path and the work, on real costs */
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
		/* what the HWS sees: ranks on the estimates */
		for (j = 0; !ret && j < n; j++)
			cost[j] = d->task[j].est;
		if (!ret)
			ret = pto_upward_rank(n, cost, off, succ, rank, cp);
		for (j = 0; !ret && j < n; j++) {
			struct sim_task *t = &d->task[j];

			t->rank = rank[j];
			t->on_cp = t->cp >= 0 ? t->cp : (!d->dynamic && cp[j]);
			if (!d->dynamic && t->prio < 0 && rank[j] > maxrank)
				maxrank = rank[j];
		}
		free(off);
		free(succ);
		free(cost);
		free(rank);
		free(cp);
		if (ret) {
			snprintf(err, errlen, "dag %s: edges do not go forwards",
				 d->name);
			return ret;
		}
	}
	while ((maxrank >> shift) > INT32_MAX)
		shift++;
	for (i = 0; i < w->ndag; i++) {
		struct sim_dag *d = &w->dag[i];

		for (j = 0; j < d->ntask; j++) {
			struct sim_task *t = &d->task[j];

			if (t->prio >= 0)
				t->offline = (uint32_t)t->prio;
			else if (d->dynamic)
				t->offline = d->ntask - j;
			else if (w->prio_mode == PRIO_NORM)
				t->offline = (uint32_t)(((unsigned __int128)
					t->rank << 30) / (d->task[0].rank ?
					dag_max_rank(d) : 1));
			else
				t->offline = (uint32_t)(t->rank >> shift);
		}
	}
	return 0;
}
