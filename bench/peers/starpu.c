// SPDX-License-Identifier: MIT
/*
 * starpu.c - the StarPU 1.3 peer of pto-bench-peers ("starpu-lws")
 *
 * StarPU with the lws scheduler (locality work stealing) and as many CPU
 * workers as asked, each bound to a CPU as StarPU does (unbound when
 * there are more workers than CPUs); no GPU. Every
 * slot is a variable handle registered over the slot's memory in main
 * RAM, and every task is submitted by starpu_task_insert() with the
 * handles of its slots and their modes (STARPU_DATA_MODE_ARRAY, a
 * codelet with a variable number of buffers): StarPU's sequential
 * consistency derives the dependencies, as our TensorMap does. A run is
 * the insertion of every task, then starpu_task_wait_for_all(). StarPU is
 * started (starpu_init) when its turn begins and shut down when it ends,
 * so its workers, which poll while idle, are gone during the others'.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <starpu.h>

#include "peers.h"

struct sp {
	struct starpu_codelet cl;
	starpu_data_handle_t *h;	/* per slot of the current graph */
	uint64_t *slots;
	uint32_t nr_slots;
	struct starpu_data_descr *d;	/* one task's buffers */
};

static void sp_task(void *buffers[], void *arg)
{
	const struct peers_task *t = arg;

	peers_kernel(t->kernel, t->flags & PT_STAMPED ?
		     (uint64_t *)STARPU_VARIABLE_GET_PTR(buffers[0]) : NULL);
}

static int sp_open(const struct peers_sys *sys, unsigned int workers,
		   uint32_t max_slots, void **ctx, char *desc, size_t desclen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct starpu_conf conf;
	struct sp *sp;
	int ret;

	(void)sys;
	(void)max_slots;
	if (workers > STARPU_NMAXWORKERS)
		return -EINVAL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->cl.where = STARPU_CPU;
	sp->cl.cpu_funcs[0] = sp_task;
	sp->cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	sp->cl.name = "peers";
	starpu_conf_init(&conf);
	conf.precedence_over_environment_variables = 1;
	conf.sched_policy_name = "lws";
	conf.ncpus = (int)workers;
	conf.ncuda = 0;
	conf.nopencl = 0;
	conf.nmic = 0;
	conf.nmpi_ms = 0;
	/*
	 * StarPU binds a worker to each CPU. With more workers than CPUs
	 * (the latency shape, whose tasks sleep) it would bind two to one
	 * CPU and warn; let the kernel place them instead (the environment
	 * is the only way to say so in 1.3).
	 */
	if (ncpu > 0 && workers > (unsigned int)ncpu)
		setenv("STARPU_WORKERS_NOBIND", "1", 1);
	ret = starpu_init(&conf);
	unsetenv("STARPU_WORKERS_NOBIND");
	if (ret) {
		free(sp);
		return ret == -ENODEV ? -ENODEV : -EIO;
	}
	snprintf(desc, desclen, "%u CPU workers + the submitting main thread",
		 starpu_cpu_worker_get_count());
	*ctx = sp;
	return 0;
}

static enum starpu_data_access_mode sp_mode(uint32_t mode)
{
	return mode == PM_IN ? STARPU_R : mode == PM_OUT ? STARPU_W : STARPU_RW;
}

static void sp_finish(void *ctx, const struct peers_graph *g)
{
	struct sp *sp = ctx;
	uint32_t i;

	(void)g;
	for (i = 0; i < sp->nr_slots && sp->h; i++)
		starpu_data_unregister(sp->h[i]);
	free(sp->h);
	free(sp->slots);
	free(sp->d);
	sp->h = NULL;
	sp->slots = NULL;
	sp->d = NULL;
	sp->nr_slots = 0;
}

static int sp_prepare(void *ctx, const struct peers_graph *g)
{
	struct sp *sp = ctx;
	uint32_t i;

	sp->slots = peers_slots_alloc(g->nr_slots);
	sp->h = calloc(g->nr_slots, sizeof(*sp->h));
	sp->d = calloc(g->max_slots_per_task, sizeof(*sp->d));
	if (!sp->slots || !sp->h || !sp->d) {
		sp_finish(sp, g);
		return -ENOMEM;
	}
	for (i = 0; i < g->nr_slots; i++)
		starpu_variable_data_register(&sp->h[i], STARPU_MAIN_RAM,
					      (uintptr_t)&sp->slots[i * PEERS_SLOT_U64],
					      PEERS_SLOT_BYTES);
	sp->nr_slots = g->nr_slots;
	return 0;
}

static int sp_run(void *ctx, const struct peers_graph *g)
{
	struct sp *sp = ctx;
	uint32_t t, a, k;
	int ret = 0;

	for (t = 0; t < g->nr_tasks && !ret; t++) {
		const struct peers_task *tk = &g->task[t];
		int n = 0;

		for (a = tk->acc; a < tk->acc + tk->nacc; a++) {
			for (k = 0; k < g->acc[a].count; k++) {
				sp->d[n].handle = sp->h[g->acc[a].slot + k];
				sp->d[n++].mode = sp_mode(g->acc[a].mode);
			}
		}
		ret = starpu_task_insert(&sp->cl, STARPU_DATA_MODE_ARRAY, sp->d, n,
					 STARPU_CL_ARGS_NFREE, (void *)(uintptr_t)tk,
					 sizeof(*tk), 0);
	}
	if (starpu_task_wait_for_all())
		ret = ret ? ret : -EIO;
	return ret ? -EIO : 0;
}

/* The slots are read and written in main RAM, each handle acquired. */
static int sp_access(void *ctx, const struct peers_graph *g,
		     void (*fn)(void *arg, uint64_t *slots), void *arg)
{
	struct sp *sp = ctx;
	uint32_t i;
	int ret = 0;

	(void)g;
	for (i = 0; i < sp->nr_slots; i++) {
		ret = starpu_data_acquire(sp->h[i], STARPU_RW);
		if (ret)
			break;
	}
	if (!ret)
		fn(arg, sp->slots);
	while (i-- > 0)
		starpu_data_release(sp->h[i]);
	return ret ? -EIO : 0;
}

static void sp_close(void *ctx)
{
	starpu_shutdown();
	free(ctx);
}

const struct peers_sys peers_starpu = {
	.name = PEERS_NAME_STARPU,
	PEERS_SYS_OPS(sp),
};
