// SPDX-License-Identifier: MIT
/*
 * peers.h - pto-bench-peers: the same graph shapes through our runtime
 * and through StarPU, OpenMP tasks and oneTBB flow graph
 *
 * A shape is defined once (shapes.c) as a task graph over "slots", 64-byte
 * cache lines of one array: every task names the slot ranges it reads
 * (IN), writes (OUT) or updates (INOUT), in submission order. Each system
 * gets the graph in its own idiom: our runtime and StarPU derive the
 * dependencies from those accesses (TensorMap, StarPU's sequential
 * consistency), OpenMP from depend clauses on the slots' addresses, and
 * TBB takes the explicit predecessor lists that peers_build()
 * derives from the same accesses (read after write, write after write,
 * write after read).
 *
 * Kernels are no-ops, except that a stamped task records the
 * CLOCK_MONOTONIC time it started and ended in its stamp slot (its first
 * access, an OUT slot of its own) and that PK_SLEEP sleeps 1 ms between
 * the two. The check round stamps every task and verifies that no task
 * started before every predecessor ended; the latency shape always
 * stamps.
 */
#ifndef PEERS_H
#define PEERS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PEERS_SLOT_U64		8	/* a slot: 64 bytes */
#define PEERS_SLOT_BYTES	(PEERS_SLOT_U64 * 8)

/* Kernels (our kernel ids). */
enum peers_kernel {
	PK_NOOP = 0,
	PK_STAMP,	/* record start and end in the stamp slot */
	PK_SLEEP,	/* the same around a 1 ms sleep */
	PK_NR
};

enum peers_mode { PM_IN, PM_OUT, PM_INOUT };

/* Where a task runs on our device (PTO2_WORKER_*); peers ignore it. */
enum peers_core { PC_AIC = 0, PC_AIV = 1 };

/* Task flags. */
#define PT_SCOPE	(1U << 0)	/* ours: a new scope begins here */
#define PT_STAMPED	(1U << 1)	/* access 0 is the task's stamp slot */

struct peers_access {
	uint32_t slot;		/* first slot */
	uint32_t count;		/* consecutive slots */
	uint32_t mode;		/* enum peers_mode */
};

struct peers_task {
	uint32_t acc, nacc;	/* accesses: graph acc[acc .. acc + nacc - 1] */
	uint32_t pred, npred;	/* predecessors: graph pred[pred .. ] */
	uint8_t kernel;		/* enum peers_kernel */
	uint8_t core;		/* enum peers_core */
	uint16_t flags;		/* PT_* */
};

/**
 * struct peers_graph - one shape, built by peers_build().
 * @name: the shape's name; @unit: what a reported time is per.
 * @task, @nr_tasks: in submission order (a topological order).
 * @acc, @nr_acc: the tasks' accesses.
 * @pred, @nr_pred: the tasks' predecessors (derived from the accesses).
 * @nr_slots: slots the graph uses.
 * @max_slots_per_task: the most slots one task accesses (summed counts).
 * @reps: graphs per round (each run to completion before the next).
 * @per: a round's total time is divided by this (tasks, hops or @reps).
 * @workers: the fewest workers a peer needs (0: any; the latency shape:
 *	its width, so that no ready task waits for a free worker).
 * @latency: the round's figure is the dispatch latency from the stamps,
 *	not the wall time.
 */
struct peers_graph {
	const char *name, *unit;
	struct peers_task *task;
	struct peers_access *acc;
	uint32_t *pred;
	uint32_t nr_tasks, nr_acc, nr_pred, nr_slots;
	uint32_t max_slots_per_task;
	uint32_t reps, per, workers;
	bool latency;
};

enum peers_shape {
	PS_INDEPENDENT, PS_CHAIN, PS_FAN, PS_RANDOM, PS_PA, PS_LATENCY,
	PS_NR
};

/*
 * Build shape @s into @g; @stamp: every task stamped (the check round).
 * 0 or -ENOMEM. peers_graph_free() frees it.
 */
int peers_build(enum peers_shape s, bool stamp, struct peers_graph *g);
void peers_graph_free(struct peers_graph *g);
/* What the shapes are, for the output's header (one line each). */
void peers_describe_shapes(void);

/* The stamp slot of stamped task @t. */
static inline uint32_t peers_stamp_slot(const struct peers_graph *g,
					const struct peers_task *t)
{
	return g->acc[t->acc].slot;
}

static inline uint64_t peers_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The one kernel body every system runs: @stamp is the task's stamp slot
 * (NULL for PK_NOOP).
 */
static inline void peers_kernel(int kernel, uint64_t *stamp)
{
	struct timespec ms;
	uint64_t start;

	if (kernel == PK_NOOP || !stamp)
		return;
	start = peers_mono_ns();
	if (kernel == PK_SLEEP) {
		ms.tv_sec = 0;
		ms.tv_nsec = 1000000;
		nanosleep(&ms, NULL);
	}
	stamp[1] = peers_mono_ns();
	stamp[0] = start;
}

/**
 * struct peers_sys - a system that runs graphs (ours or a peer).
 * @name: as printed.
 * @ours: a path of ours (ratios are ours / peer).
 * @priv: the system's own (ours: the device backend).
 * @open: start the system with @workers worker threads (peers) for
 *	graphs of up to @max_slots slots; describe its threads in @desc.
 * @prepare: before the runs of @g: its slots (all 0).
 * @run: one run of @g to completion (the timed part).
 * @access: call @fn(@arg, slots) with the slots of @g as the last run
 *	left them, then keep what @fn wrote (zeroed stamps).
 * @finish: after the runs of @g.
 * @close: stop the system (no thread of it runs or spins afterwards).
 * All return 0 or -errno.
 */
struct peers_sys {
	const char *name;
	bool ours;
	const void *priv;
	int (*open)(const struct peers_sys *sys, unsigned int workers,
		    uint32_t max_slots, void **ctx, char *desc, size_t desclen);
	int (*prepare)(void *ctx, const struct peers_graph *g);
	int (*run)(void *ctx, const struct peers_graph *g);
	int (*access)(void *ctx, const struct peers_graph *g,
		      void (*fn)(void *arg, uint64_t *slots), void *arg);
	void (*finish)(void *ctx, const struct peers_graph *g);
	void (*close)(void *ctx);
};

/* The ops of a system whose functions are PFX_open .. PFX_close. */
#define PEERS_SYS_OPS(pfx)						\
	.open = pfx##_open, .prepare = pfx##_prepare, .run = pfx##_run,	\
	.access = pfx##_access, .finish = pfx##_finish,			\
	.close = pfx##_close

/* Our paths (ours.c): their number and table. */
extern const struct peers_sys peers_ours[];
extern const unsigned int peers_nr_ours;

/*
 * The peers, each built only if its package is installed; their names,
 * known also to a build without them (in the order they take turns).
 */
extern const struct peers_sys peers_starpu, peers_omp, peers_tbb;
#define PEERS_NAME_STARPU	"starpu-lws"
#define PEERS_NAME_OMP		"omp"
#define PEERS_NAME_TBB		"tbb"

/* Slot arrays of the peers (64-byte aligned, zeroed); NULL if none. */
uint64_t *peers_slots_alloc(uint32_t nr_slots);

#ifdef __cplusplus
}
#endif

#endif /* PEERS_H */
