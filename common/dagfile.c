// SPDX-License-Identifier: MIT
/*
 * dagfile.c - writing DAG files (dagfile.h)
 */
#include <pto-private/dagfile.h>
#include <pto-private/graph.h>

/* A time in the largest unit that keeps it exact. */
static void put_time(FILE *f, const char *key, uint64_t ns)
{
	if (ns && !(ns % 1000000))
		fprintf(f, " %s %llums", key, (unsigned long long)(ns / 1000000));
	else if (ns && !(ns % 1000))
		fprintf(f, " %s %lluus", key, (unsigned long long)(ns / 1000));
	else
		fprintf(f, " %s %llu", key, (unsigned long long)ns);
}

void pto_dagf_write_dag(FILE *f, const char *name, uint64_t arrival,
			bool dynamic, uint32_t ctx)
{
	fprintf(f, "dag %s", name);
	put_time(f, "arrival", arrival);
	fprintf(f, " %s", dynamic ? "dynamic" : "static");
	if (ctx)
		fprintf(f, " ctx %u", ctx);
	fprintf(f, "\n");
}

void pto_dagf_write_task(FILE *f, const struct pto_dagf_task *t)
{
	static const char *const types[] = { "any", "aic", "aiv" };
	uint32_t k;

	fprintf(f, "task %u", t->id);
	/* the reader takes at most PTO_MAX_EST_NS (a block that ran longer) */
	put_time(f, "cost", PTO_EST_CLAMP(t->cost));
	if (PTO_EST_CLAMP(t->est) != PTO_EST_CLAMP(t->cost))
		put_time(f, "est", PTO_EST_CLAMP(t->est));
	fprintf(f, " type %s", types[t->type <= PTO_DAGF_AIV ? t->type : 0]);
	if (t->block_num != 1 || t->thread_num != 1 || t->coop)
		fprintf(f, " shape %ux%u%s", t->block_num, t->thread_num,
			t->coop ? "c" : "");
	if (t->func >= 0)
		fprintf(f, " func %d", t->func);
	if (t->prio >= 0)
		fprintf(f, " prio %lld", (long long)t->prio);
	if (t->cp > 0)
		fprintf(f, " cp");
	for (k = 0; k < t->npred; k++)
		fprintf(f, "%s%u", k ? "," : " pred ", t->pred[k]);
	fprintf(f, "\n");
}

void pto_dagf_write_block(FILE *f, const struct pto_dagf_block *b)
{
	fprintf(f, "block %u core %u", b->task, b->core);
	put_time(f, "dispatch", b->dispatch);
	put_time(f, "start", b->start);
	put_time(f, "end", b->end);
	fprintf(f, "\n");
}
