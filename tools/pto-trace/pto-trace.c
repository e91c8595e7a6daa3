// SPDX-License-Identifier: MIT
/*
 * pto-trace - pictures of a recorded run
 *
 *   pto-trace [-f json|svg|dot] [-d DAG] [-o OUT] RECORDING
 *
 * RECORDING is a DAG file with "block" lines, as ptod -R FILE (every
 * client's runs) or pto-bench-makespan -w FILE writes it: per task its
 * kernel, core type and producers, per block the core it ran on and when
 * it was dispatched, started and ended (Documentation/hws.rst, "DAG
 * files"). The file is read by the simulator's parser, so the two always
 * agree on the format.
 *
 *   json  Chrome trace-event JSON (Perfetto, chrome://tracing): process
 *         "cores" with one lane per core, each block from its start to its
 *         end; one process per client with its tasks, each from its first
 *         dispatch to its last end.
 *   svg   a swimlane that needs no browser: one row per core, time from
 *         left to right, one colour per client, each block's wait from
 *         dispatch to start as a thin line before it.
 *   dot   the DAGs' task graphs for Graphviz, one cluster per DAG.
 *
 * -d DAG keeps the DAG of that name only. A DAG's client is its name up
 * to the last '.' (ptod names runs CLIENT.RUN, e.g. uid1000.client3.2).
 * Exit status: 0, 1 if the file cannot be read, 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* What is drawn: the DAGs kept, their clients, the cores, the time span. */
struct scene {
	const struct workload *w;
	const char *only;		/* -d */
	/* distinct clients, in file order */
	char (*client)[PTO_DAGF_NAME_MAX + 1];
	uint32_t nclient;
	uint32_t *dag_client;		/* DAG -> index in client[] */
	uint32_t *core;			/* cores that ran a block, ascending */
	uint32_t ncore;
	uint64_t t0, t1;		/* first dispatch or start, last end */
	uint64_t nblock;
};

static bool dag_kept(const struct scene *s, uint32_t i)
{
	return !s->only || !strcmp(s->w->dag[i].name, s->only);
}

/* The client part of DAG name @name into @out. */
static void client_of(const char *name, char out[PTO_DAGF_NAME_MAX + 1])
{
	const char *dot = strrchr(name, '.');
	int n = dot && dot != name ? (int)(dot - name) : (int)strlen(name);

	snprintf(out, PTO_DAGF_NAME_MAX + 1, "%.*s", n, name);
}

/* FNV-1a of @str */
static uint32_t name_hash(const char *str)
{
	uint32_t h = 2166136261u;

	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 16777619u;
	return h;
}

/*
 * s->client[]: the clients of the kept DAGs, each once, in the order of
 * their first DAG in the file; s->dag_client[]: each kept DAG's. Found
 * through a hash table (open addressing, at most half full) of indexes
 * into s->client[] plus 1, 0 for a free slot.
 */
static void find_clients(struct scene *s)
{
	const struct workload *w = s->w;
	char c[PTO_DAGF_NAME_MAX + 1];
	size_t h, mask = 1;
	uint32_t i, *slot;

	while (mask < 2 * (size_t)w->ndag)
		mask <<= 1;
	slot = xrealloc(NULL, mask * sizeof(*slot));
	memset(slot, 0, mask * sizeof(*slot));
	mask--;
	s->client = xrealloc(NULL, (w->ndag ? w->ndag : 1) *
			     sizeof(*s->client));
	for (i = 0; i < w->ndag; i++) {
		if (!dag_kept(s, i))
			continue;
		client_of(w->dag[i].name, c);
		for (h = name_hash(c) & mask;
		     slot[h] && strcmp(s->client[slot[h] - 1], c);
		     h = (h + 1) & mask)
			;
		if (!slot[h]) {
			memcpy(s->client[s->nclient], c, sizeof(c));
			slot[h] = ++s->nclient;
		}
		s->dag_client[i] = slot[h] - 1;
	}
	free(slot);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * s->core[]: the cores of the kept DAGs' blocks (s->nblock of them,
 * counted), each once, ascending.
 */
static void find_cores(struct scene *s)
{
	const struct workload *w = s->w;
	uint64_t n = 0;
	uint32_t i, j, k;

	s->core = xrealloc(NULL, (s->nblock ? s->nblock : 1) *
			   sizeof(*s->core));
	for (i = 0; i < w->ndag; i++)
		for (j = 0; dag_kept(s, i) && j < w->dag[i].ntask; j++)
			for (k = 0; k < w->dag[i].task[j].nran; k++)
				s->core[n++] = w->dag[i].task[j].ran[k].core;
	qsort(s->core, n, sizeof(*s->core), u32_cmp);
	for (i = 0; i < n; i++)
		if (!s->ncore || s->core[s->ncore - 1] != s->core[i])
			s->core[s->ncore++] = s->core[i];
}

/*
 * Whether block @b has a wait to draw: a recorded dispatch before its
 * start (0 is none: dispatched before the recording's time 0; one at or
 * after the start is none either).
 */
static bool has_wait(const struct pto_dagf_block *b)
{
	return b->dispatch && b->dispatch < b->start;
}

/* When block @b began: its dispatch if it has a wait, else its start. */
static uint64_t block_first(const struct pto_dagf_block *b)
{
	return has_wait(b) ? b->dispatch : b->start;
}

static void add_block(struct scene *s, const struct pto_dagf_block *b)
{
	uint64_t first = block_first(b);

	if (!s->nblock || first < s->t0)
		s->t0 = first;
	if (!s->nblock || b->end > s->t1)
		s->t1 = b->end;
	s->nblock++;
}

static void scene_build(struct scene *s, const struct workload *w,
			const char *only)
{
	uint32_t i, j, k;

	memset(s, 0, sizeof(*s));
	s->w = w;
	s->only = only;
	s->dag_client = xrealloc(NULL, (w->ndag + 1) * sizeof(uint32_t));
	for (i = 0; i < w->ndag; i++) {
		if (!dag_kept(s, i))
			continue;
		for (j = 0; j < w->dag[i].ntask; j++)
			for (k = 0; k < w->dag[i].task[j].nran; k++)
				add_block(s, &w->dag[i].task[j].ran[k]);
	}
	find_clients(s);
	find_cores(s);
}

static void scene_free(struct scene *s)
{
	free(s->client);
	free(s->dag_client);
	free(s->core);
}

/* @str with the characters JSON (json) or XML (!json) reserves escaped. */
static void put_escaped(FILE *f, const char *str, bool json)
{
	for (; *str; str++) {
		unsigned char c = (unsigned char)*str;

		if (json && (c == '"' || c == '\\'))
			fprintf(f, "\\%c", c);
		else if (json && c < 0x20)
			fprintf(f, "\\u%04x", c);
		else if (!json && c == '<')
			fputs("&lt;", f);
		else if (!json && c == '>')
			fputs("&gt;", f);
		else if (!json && c == '&')
			fputs("&amp;", f);
		else if (!json && c == '"')
			fputs("&quot;", f);
		else
			fputc(c, f);
	}
}

/* ns from the scene's start, in us with ns resolution (JSON's unit). */
static double us(const struct scene *s, uint64_t t)
{
	return (double)(t - s->t0) / 1e3;
}

static void json_meta(FILE *f, const struct scene *s)
{
	uint32_t k;

	fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"cores\"}}");
	for (k = 0; k < s->ncore; k++)
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"core %u\"}}",
			s->core[k], s->core[k]);
	for (k = 0; k < s->nclient; k++) {
		fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":\"",
			k + 2);
		put_escaped(f, s->client[k], true);
		fprintf(f, "\"}}");
	}
}

/* Task @t of DAG @d: its blocks on the core lanes, its span on its client. */
static void json_task(FILE *f, const struct scene *s, uint32_t d,
		      const struct sim_task *t, uint64_t *id)
{
	uint64_t first = UINT64_MAX, last = 0;
	uint32_t k;

	for (k = 0; k < t->nran; k++) {
		const struct pto_dagf_block *b = &t->ran[k];

		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":\"k%d\",\"cat\":\"",
			b->core, us(s, b->start), (double)(b->end - b->start) / 1e3,
			t->func);
		put_escaped(f, s->client[s->dag_client[d]], true);
		fprintf(f, "\",\"args\":{\"dag\":\"");
		put_escaped(f, s->w->dag[d].name, true);
		fprintf(f, "\",\"task\":%u,\"dispatch_us\":%.3f}}", t->id,
			us(s, b->dispatch > s->t0 ? b->dispatch : s->t0));
		if (block_first(b) < first)
			first = block_first(b);
		if (b->end > last)
			last = b->end;
	}
	if (!t->nran)
		return;
	first = first > s->t0 ? first : s->t0;
	(*id)++;
	fprintf(f, ",\n{\"ph\":\"b\",\"pid\":%u,\"tid\":0,\"cat\":\"task\",\"id\":%" PRIu64 ",\"ts\":%.3f,\"name\":\"task %u k%d\"}",
		s->dag_client[d] + 2, *id, us(s, first), t->id, t->func);
	fprintf(f, ",\n{\"ph\":\"e\",\"pid\":%u,\"tid\":0,\"cat\":\"task\",\"id\":%" PRIu64 ",\"ts\":%.3f,\"name\":\"task %u k%d\"}",
		s->dag_client[d] + 2, *id, us(s, last), t->id, t->func);
}

static void put_json(FILE *f, const struct scene *s)
{
	uint64_t id = 0;
	uint32_t i, j;

	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	json_meta(f, s);
	for (i = 0; i < s->w->ndag; i++)
		for (j = 0; dag_kept(s, i) && j < s->w->dag[i].ntask; j++)
			json_task(f, s, i, &s->w->dag[i].task[j], &id);
	fprintf(f, "\n]}\n");
}

/* ---- SVG ---------------------------------------------------------------------------- */

#define SVG_LEFT	70	/* core labels */
#define SVG_PLOT	1100	/* time axis, px */
#define SVG_TOP		40
#define SVG_ROW		16
#define SVG_BAR		12

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

static double svg_x(const struct scene *s, uint64_t t)
{
	uint64_t span = s->t1 > s->t0 ? s->t1 - s->t0 : 1;

	return SVG_LEFT + (double)(t - s->t0) * SVG_PLOT / (double)span;
}

/* The row of @core: its index in the ascending s->core[]. */
static uint32_t svg_row(const struct scene *s, uint32_t core)
{
	const uint32_t *c = bsearch(&core, s->core, s->ncore,
				    sizeof(*s->core), u32_cmp);

	return c ? (uint32_t)(c - s->core) : s->ncore;
}

/* A time-axis step: 1, 2 or 5 times a power of ten, at most 10 ticks. */
static uint64_t svg_step(const struct scene *s)
{
	static const uint64_t mult[] = { 1, 2, 5 };
	uint64_t span = s->t1 - s->t0, p;
	unsigned int k;

	for (p = 1; p < UINT64_MAX / 10; p *= 10)
		for (k = 0; k < 3; k++)
			if (span / (mult[k] * p) <= 10)
				return mult[k] * p;
	return p;
}

static void svg_axis(FILE *f, const struct scene *s, double bottom)
{
	uint64_t step = svg_step(s), t;
	uint32_t k;

	for (t = 0; s->t0 + t <= s->t1; t += step) {
		double x = svg_x(s, s->t0 + t);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			x, SVG_TOP - 4, x, bottom);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.*f us</text>\n",
			x, SVG_TOP - 8, step >= 1000 ? 0 : 3, (double)t / 1e3);
	}
	for (k = 0; k < s->ncore; k++)
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">core %u</text>\n",
			SVG_LEFT - 6, SVG_TOP + (int)k * SVG_ROW + SVG_BAR - 2,
			s->core[k]);
}

static void svg_block(FILE *f, const struct scene *s, uint32_t d,
		      const struct sim_task *t, const struct pto_dagf_block *b)
{
	double y = SVG_TOP + svg_row(s, b->core) * SVG_ROW;
	double x0 = svg_x(s, b->start), x1 = svg_x(s, b->end);

	if (has_wait(b))
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
			svg_x(s, b->dispatch), y + SVG_BAR / 2, x0,
			y + SVG_BAR / 2);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
		x0, y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, SVG_BAR,
		palette[s->dag_client[d] % (sizeof(palette) / sizeof(*palette))]);
	put_escaped(f, s->w->dag[d].name, false);
	fprintf(f, " task %u kernel %d core %u: %.3f-%.3f us</title></rect>\n",
		t->id, t->func, b->core, us(s, b->start), us(s, b->end));
}

static void svg_legend(FILE *f, const struct scene *s, double y)
{
	uint32_t k;

	for (k = 0; k < s->nclient; k++) {
		double x = SVG_LEFT + (k % 4) * 280.0, yy = y + (k / 4) * 18.0;

		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
			x, yy, palette[k % (sizeof(palette) / sizeof(*palette))]);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">", x + 16, yy + 10);
		put_escaped(f, s->client[k], false);
		fprintf(f, "</text>\n");
	}
}

static void put_svg(FILE *f, const struct scene *s)
{
	double bottom = SVG_TOP + s->ncore * SVG_ROW;
	uint32_t i, j, k;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"10\">\n",
		SVG_LEFT + SVG_PLOT + 40,
		bottom + 30 + ((s->nclient + 3) / 4) * 18.0);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"14\" font-size=\"12\">%" PRIu64 " blocks on %u cores, %.3f us</text>\n",
		SVG_LEFT, s->nblock, s->ncore, us(s, s->t1));
	if (s->nblock)
		svg_axis(f, s, bottom);
	for (i = 0; i < s->w->ndag; i++) {
		const struct sim_dag *d = &s->w->dag[i];

		for (j = 0; dag_kept(s, i) && j < d->ntask; j++)
			for (k = 0; k < d->task[j].nran; k++)
				svg_block(f, s, i, &d->task[j],
					  &d->task[j].ran[k]);
	}
	svg_legend(f, s, bottom + 14);
	fprintf(f, "</svg>\n");
}

/* ---- DOT ---------------------------------------------------------------------------- */

static void dot_dag(FILE *f, const struct sim_dag *d, uint32_t i)
{
	static const char *const types[] = { "any", "aic", "aiv" };
	uint32_t j, k;

	fprintf(f, "  subgraph \"cluster_%u\" {\n    label=\"", i);
	put_escaped(f, d->name, true);
	fprintf(f, "\";\n");
	for (j = 0; j < d->ntask; j++) {
		const struct sim_task *t = &d->task[j];

		fprintf(f, "    \"d%u.%u\" [label=\"%u\\nk%d %s\\n%.3f us\"];\n",
			i, t->id, t->id, t->func,
			types[t->type <= SIM_AIV ? t->type : 0],
			(double)t->cost / 1e3);
	}
	fprintf(f, "  }\n");
	for (j = 0; j < d->ntask; j++)
		for (k = 0; k < d->task[j].npred; k++)
			fprintf(f, "  \"d%u.%u\" -> \"d%u.%u\";\n", i,
				d->task[d->task[j].pred[k]].id, i,
				d->task[j].id);
}

static void put_dot(FILE *f, const struct scene *s)
{
	uint32_t i;

	fprintf(f, "digraph pto {\n  node [shape=box, fontsize=10];\n");
	for (i = 0; i < s->w->ndag; i++)
		if (dag_kept(s, i))
			dot_dag(f, &s->w->dag[i], i);
	fprintf(f, "}\n");
}

/* ---- main --------------------------------------------------------------------------- */

static int usage(void)
{
	fprintf(stderr, "usage: pto-trace [-f json|svg|dot] [-d DAG] [-o OUT] RECORDING\n");
	return 2;
}

static int read_recording(const char *path, struct workload *w)
{
	char err[256];
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	int ret;

	if (!f) {
		fprintf(stderr, "pto-trace: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	ret = wl_parse(f, path, w, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (ret)
		fprintf(stderr, "pto-trace: %s\n", err);
	return ret;
}

int main(int argc, char **argv)
{
	const char *fmt = "json", *only = NULL, *out = NULL;
	struct workload w = { 0 };
	struct scene s;
	FILE *f = stdout;
	int c, ret = 0;

	while ((c = getopt(argc, argv, "f:d:o:h")) != -1) {
		switch (c) {
		case 'f': fmt = optarg; break;
		case 'd': only = optarg; break;
		case 'o': out = optarg; break;
		default: return usage();
		}
	}
	if (optind != argc - 1 || (strcmp(fmt, "json") && strcmp(fmt, "svg") &&
				   strcmp(fmt, "dot")))
		return usage();
	if (read_recording(argv[optind], &w)) {
		wl_free(&w);	/* what the parse built before the error */
		return 1;
	}
	scene_build(&s, &w, only);
	if (only && !s.nclient) {
		fprintf(stderr, "pto-trace: no DAG named '%s'\n", only);
		ret = 1;
	} else if (out && !(f = fopen(out, "we"))) {
		fprintf(stderr, "pto-trace: %s: %s\n", out, strerror(errno));
		ret = 1;
	} else {
		if (!strcmp(fmt, "json"))
			put_json(f, &s);
		else if (!strcmp(fmt, "svg"))
			put_svg(f, &s);
		else
			put_dot(f, &s);
		if ((f != stdout ? fclose(f) : fflush(f)) == EOF) {
			fprintf(stderr, "pto-trace: %s: %s\n",
				out ? out : "stdout", strerror(errno));
			ret = 1;
		}
	}
	scene_free(&s);
	wl_free(&w);
	return ret;
}
