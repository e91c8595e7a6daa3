// SPDX-License-Identifier: MIT
/*
 * omp.c - the OpenMP peer of pto-bench-peers ("omp"): LLVM's OpenMP
 * runtime (libomp), compiled by clang -fopenmp=libomp
 *
 * A run is a parallel region of as many threads as asked (the main
 * thread among them) in which one thread creates every task with depend
 * clauses on its slots' addresses (in, out, inout; an iterator per mode,
 * so that a task may name any number of slots), and the region's end
 * waits for them all. libomp derives the dependencies from the addresses,
 * as our TensorMap does from the tensors. When the turn ends the runtime
 * is paused (omp_pause_resource_all), so its threads do not spin through
 * the others' turns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "peers.h"

struct om {
	unsigned int workers;
	uint64_t *slots;
	uint64_t **in, **out, **io;	/* one task's slots, per mode */
};

static int om_open(const struct peers_sys *sys, unsigned int workers,
		   uint32_t max_slots, void **ctx, char *desc, size_t desclen)
{
	struct om *om = calloc(1, sizeof(*om));

	(void)sys;
	(void)max_slots;
	if (!om)
		return -ENOMEM;
	om->workers = workers;
	snprintf(desc, desclen, "%u threads, the main thread among them",
		 workers);
	*ctx = om;
	return 0;
}

static void om_finish(void *ctx, const struct peers_graph *g)
{
	struct om *om = ctx;

	(void)g;
	free(om->slots);
	free(om->in);
	free(om->out);
	free(om->io);
	om->slots = NULL;
	om->in = om->out = om->io = NULL;
}

static int om_prepare(void *ctx, const struct peers_graph *g)
{
	struct om *om = ctx;
	size_t n = g->max_slots_per_task;

	om->slots = peers_slots_alloc(g->nr_slots);
	om->in = calloc(n, sizeof(*om->in));
	om->out = calloc(n, sizeof(*om->out));
	om->io = calloc(n, sizeof(*om->io));
	if (!om->slots || !om->in || !om->out || !om->io) {
		om_finish(om, g);
		return -ENOMEM;
	}
	return 0;
}

static int om_run(void *ctx, const struct peers_graph *g)
{
	struct om *om = ctx;
	uint64_t *s = om->slots, **in = om->in, **out = om->out, **io = om->io;

#pragma omp parallel num_threads(om->workers)
#pragma omp single
	for (uint32_t t = 0; t < g->nr_tasks; t++) {
		const struct peers_task *tk = &g->task[t];
		int ni = 0, no = 0, nio = 0, kernel = tk->kernel;
		uint64_t *stamp;

		for (uint32_t a = tk->acc; a < tk->acc + tk->nacc; a++) {
			const struct peers_access *ac = &g->acc[a];

			for (uint32_t k = 0; k < ac->count; k++) {
				uint64_t *p = &s[(size_t)(ac->slot + k) * PEERS_SLOT_U64];

				if (ac->mode == PM_IN)
					in[ni++] = p;
				else if (ac->mode == PM_OUT)
					out[no++] = p;
				else
					io[nio++] = p;
			}
		}
		stamp = tk->flags & PT_STAMPED ? out[0] : NULL;
#pragma omp task depend(iterator(i = 0:ni), in: in[i][0]) \
	depend(iterator(i = 0:no), out: out[i][0]) \
	depend(iterator(i = 0:nio), inout: io[i][0]) \
	firstprivate(kernel, stamp)
		peers_kernel(kernel, stamp);
	}
	return 0;
}

static int om_access(void *ctx, const struct peers_graph *g,
		     void (*fn)(void *arg, uint64_t *slots), void *arg)
{
	struct om *om = ctx;

	(void)g;
	fn(arg, om->slots);
	return 0;
}

static void om_close(void *ctx)
{
	omp_pause_resource_all(omp_pause_soft);
	free(ctx);
}

const struct peers_sys peers_omp = {
	.name = PEERS_NAME_OMP,
	PEERS_SYS_OPS(om),
};
