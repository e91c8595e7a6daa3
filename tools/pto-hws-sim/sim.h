// SPDX-License-Identifier: MIT
/*
 * sim.h - pto-hws-sim: DAG workloads replayed through the HWS library in
 * simulated time, against PTO2's default (FIFO) and an offline HEFT
 * schedule (Documentation/hws.rst)
 */
#ifndef PTO_HWS_SIM_H
#define PTO_HWS_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pto-private/dagfile.h>

#include "hws.h"

/* A task's cores, as DAG files name them (dagfile.h). */
enum sim_type {
	SIM_ANY = PTO_DAGF_ANY,
	SIM_AIC = PTO_DAGF_AIC,
	SIM_AIV = PTO_DAGF_AIV,
};

/**
 * struct sim_task - one kernel of a DAG.
 * @id: its id in the file (unique in the DAG).
 * @cost: what one block really takes (ns).
 * @est: what the HWS is told a block takes (the cost hint; default @cost).
 * @type: enum sim_type.
 * @block_num, @thread_num, @coop: the shape.
 * @func: kernel function id (informational; recordings carry it).
 * @prio: offline priority given in the file, or -1: computed.
 * @cp: on_cp given in the file (0/1), or -1: computed.
 * @pred, @npred: predecessors (indices into the DAG's tasks, all earlier).
 * @succ, @nsucc: successors (derived).
 * @offline, @on_cp: what the HWS is given (derived).
 * @rank: upward rank on @est (derived; static DAGs).
 * @ran, @nran: where and when its blocks ran, for a recording of a live
 *	run ("block" lines; kept and written back, never replayed).
 */
struct sim_task {
	uint32_t id;
	uint64_t cost;
	uint64_t est;
	uint8_t type;
	uint16_t block_num;
	uint16_t thread_num;
	bool coop;
	int32_t func;
	int64_t prio;
	int8_t cp;
	uint32_t *pred;
	uint32_t npred;
	uint32_t *succ;
	uint32_t nsucc;
	uint32_t offline;
	bool on_cp;
	uint64_t rank;
	struct pto_dagf_block *ran;
	uint32_t nran;
};

/**
 * struct sim_dag - one DAG of a workload.
 * @name: its name.
 * @arrival: when it is submitted (ns).
 * @dynamic: dynamic (priorities in submission order) or static.
 * @ctx: HWS context.
 * @task, @ntask: its tasks, predecessors before successors.
 * @cp_len: its critical path on real costs (ns).
 * @work: the sum of its real block costs times threads (SIP-ns).
 */
struct sim_dag {
	char name[PTO_DAGF_NAME_MAX + 1];
	uint64_t arrival;
	bool dynamic;
	uint32_t ctx;
	struct sim_task *task;
	uint32_t ntask;
	uint64_t cp_len;
	uint64_t work;
};

/*
 * How a static DAG's offline priority derives from its upward ranks:
 * the rank itself (one scale for the whole workload), or normalized per
 * DAG (rank / the DAG's critical path, in 2^-30 units: the fraction of
 * its critical path still ahead of the kernel).
 */
enum prio_mode {
	PRIO_RANK = 0,
	PRIO_NORM = 1,
};

struct workload {
	struct sim_dag *dag;
	uint32_t ndag;
	uint32_t prio_mode;	/* enum prio_mode */
};

/* dag.c: files, priorities, freeing */
void *xrealloc(void *p, size_t n);	/* realloc(), or exit 2 */
int wl_parse(FILE *f, const char *fname, struct workload *w, char *err,
	     size_t errlen);
void wl_write(FILE *f, const struct workload *w);
int wl_prepare(struct workload *w, char *err, size_t errlen);
void wl_free(struct workload *w);
struct sim_dag *wl_add_dag(struct workload *w);
struct sim_task *dag_add_task(struct sim_dag *d);
/* @pred as @t's next predecessor; add: unless @t has it, push: it has not */
void task_add_pred(struct sim_task *t, uint32_t pred);
void task_push_pred(struct sim_task *t, uint32_t pred);
/*
 * A number DIGITS[.DIGITS] at @s, *@end just after it: 0 or -EINVAL. No
 * sign, space, hexadecimal, exponent, "nan" or "inf", all of which
 * strtod() alone would take.
 */
int parse_decimal(const char *s, double *v, char **end);
/*
 * "1500", "1500ns", "1.5us", "2ms", "0.25s" -> ns (the digits of
 * parse_decimal() and a unit, exact to the ns, rounded half up), at most
 * SIM_MAX_TIME (a time of day: arrivals, a recording's block times);
 * 0 or -errno.
 */
#define SIM_MAX_TIME	(1ULL << 62)
int parse_time(const char *s, uint64_t *out);
/*
 * A cost or estimate, or a time added once a task or decision (latencies,
 * delays, offsets, margins): at most PTO_MAX_EST_NS (2^40), the largest an
 * estimate may be. What they add up to is sim_time_check()'s.
 */
int parse_cost(const char *s, uint64_t *out);
/* Decimal digits only, at most @max: 0 or -EINVAL. */
int parse_u32(const char *s, uint32_t max, uint32_t *out);
/* The most DAGs, mixes, layer width, fork-join branches or blocks asked for */
#define SIM_MAX_COUNT	(1U << 20)
/* "A" or "A-B" (parse_u32()), each from @min to SIM_MAX_COUNT, A <= B. */
int parse_count_range(const char *s, uint32_t min, uint32_t *lo,
		      uint32_t *hi);
/* "A" or "A-B" (parse_cost()), A <= B. */
int parse_cost_range(const char *s, uint64_t *lo, uint64_t *hi);

/* gen.c: generated workloads */
struct rng {
	uint64_t s;
};

uint64_t rng_next(struct rng *r);
uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi);	/* [lo, hi] */
double rng_unit(struct rng *r);					/* [0, 1) */

struct gen_opts {
	uint32_t tasks_lo, tasks_hi;	/* random: task count range */
	uint32_t fanin_lo, fanin_hi;	/* random: predecessors per task */
	uint32_t width;			/* random: tasks per layer (0: auto) */
	uint64_t cost_lo, cost_hi;	/* block cost range (ns) */
	uint32_t forkjoin;		/* fork-join: branches */
	uint32_t pa_chunks, pa_bn;	/* paged attention: chunks, blocks */
	uint64_t pa_cost[5];		/* hub, QK, SF, PV, UP */
};

void gen_defaults(struct gen_opts *g);
void gen_random(struct sim_dag *d, const struct gen_opts *g, struct rng *r);
void gen_forkjoin(struct sim_dag *d, const struct gen_opts *g, struct rng *r);
void gen_pa(struct sim_dag *d, const struct gen_opts *g, struct rng *r);

/* engine.c: HWS or FIFO (libhws) in simulated time */
struct sim_lat {
	uint64_t dispatch;	/* launch -> the block starts on idle SIPs */
	uint64_t completion;	/* a block ends -> the HWS knows */
	uint64_t dep_resolve;	/* per completed task, serialized */
	uint64_t host;		/* DAG submitted -> its roots can be ready */
};

struct sim_opts {
	struct sim_lat lat;
	double noise;		/* real cost *= 1 + U(-noise, noise) */
	uint64_t seed;
	bool report_pre;	/* early launch by SIP reports: report at
				 * end - pre_idle_offset */
	int only_dag;		/* >= 0: run this DAG alone, from time 0 */
	bool check;		/* hws_check after every decision */
};

struct sim_result {
	uint64_t makespan;	/* first arrival -> last completion */
	uint64_t *done;		/* per DAG: completion time */
	uint64_t *resp;		/* per DAG: completion - arrival */
	struct hws_stats st;
	uint64_t busy;		/* SIP-ns of real work */
	uint64_t digest;	/* FNV-1a of every launch, in order (HWS
				 * engine): equal digests, equal decisions */
};

/* The profile's latency table, pre-complete reports, every DAG, seed 1. */
void sim_opts_default(struct sim_opts *o);
/* sim_run(), heft_run(): 0, @r filled (result_free() it); or -errno,
 * the reason in @err and @r holding nothing. */
int sim_run(const struct workload *w, const struct hws_layout *l,
	    const struct hws_config *c, const struct sim_opts *o,
	    struct sim_result *r, char *err, size_t errlen);
/* heft.c: offline HEFT list schedule with full knowledge */
int heft_run(const struct workload *w, const struct hws_layout *l,
	     const struct sim_opts *o, struct sim_result *r, char *err,
	     size_t errlen);

/* engine.c, for both engines: a result of @ndag DAGs, zeroed */
void result_init(struct sim_result *r, uint32_t ndag);
/* responses and makespan from the DAGs' completion times */
void result_finish(struct sim_result *r, const struct workload *w,
		   const struct sim_opts *o);
void result_free(struct sim_result *r);

/* the real cost of block @b of task @t of DAG @d under @o (noise) */
uint64_t sim_block_cost(const struct sim_opts *o, uint32_t d, uint32_t t,
			uint32_t b, uint64_t cost);
/* whether DAG @d runs under @o (o->only_dag), and when it arrives */
bool sim_dag_runs(const struct sim_opts *o, uint32_t d);
uint64_t sim_dag_arrival(const struct workload *w, const struct sim_opts *o,
			 uint32_t d);
/*
 * Whether the simulated clock stays below SIM_MAX_TIME running @w under
 * @o with @launch_delay: 0, or -EOVERFLOW and why in @err. The bound:
 * every block of every DAG one after another, after the last arrival,
 * each paying every latency, its cost (twice it under noise; its
 * estimate if larger) on each of its threads' SIPs. Below it, a time plus
 * a cost or offset (each at most PTO_MAX_EST_NS) does not wrap, nor do the
 * SIP-ns of the DAGs' work.
 */
int sim_time_check(const struct workload *w, const struct sim_opts *o,
		   uint64_t launch_delay, char *err, size_t errlen);
/* the SIPs a kernel of @type (enum sim_type) may use on @l */
const hws_mask *sim_type_mask(const struct hws_layout *l, uint8_t type);

#endif /* PTO_HWS_SIM_H */
