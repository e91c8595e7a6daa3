// SPDX-License-Identifier: MIT
/*
 * test_random_dag.c - random programs (random_dag.h) on the sim device,
 * checked against running their tasks one at a time in submission order
 *
 * Each case runs programs on one configuration: the runtime's own
 * scheduler threads, or the device's engine (the HWS, or PTO2's FIFO
 * order) with one or three runtimes at once; small windows, pools and
 * heap make the orchestrator wait for retirement. The programs come from
 * a fixed seed; RANDOM_DAG_SEED=N gives others (a failure names its
 * program's seed), RANDOM_DAG_PROGRAMS=N runs N programs a case.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_runtime.h"
#include "random_dag.h"
#include "sim_device.h"
#include "sim_env.h"
#include "tap.h"

#define RD_KERNEL	7
#define RD_MAX_RUNTIMES	3

/* GM for @run's sink and external tensors, with their first values. */
static int run_buffers(struct env *e, struct rd_run *run)
{
	uint32_t k;

	for (k = 0; k <= RD_SINK; k++) {
		uint64_t bytes = (uint64_t)run->p->rows[k] * run->p->cols[k] * 8;

		run->dev[k] = sim_gm_alloc(&e->arena, bytes, 64);
		if (!run->dev[k])
			return -ENOMEM;
		run->host[k] = host(run->dev[k]);
	}
	rd_init_buffers(run);
	return 0;
}

struct rd_case {
	const char *name;
	uint32_t aic, aiv;
	bool engine;			/* the device's engine, as ptod runs */
	uint32_t policy;		/* with it: HWS_POLICY_* */
	uint32_t runtimes;		/* at once, on one engine */
	bool small;			/* small window and pools */
	uint32_t tasks;
};

static void case_config(const struct rd_case *rc, struct pto2_config *c)
{
	cfg_small(c);
	c->dep_pool_size = 1 << 16;
	if (rc->small) {
		c->task_window = 32;
		c->heap_size = 4096;
		c->dep_pool_size = 128;
		c->tensormap_pool_size = 32;
		c->tensormap_buckets = 16;
	}
}

/* @nprogs programs from @seed on @rc: 0, or -1 after a failed point */
static int run_case(const struct rd_case *rc, uint64_t seed, uint32_t nprogs)
{
	static struct rd_prog prog[RD_MAX_RUNTIMES];
	static struct rd_gen gen;
	static int64_t refs[RD_MAX_RUNTIMES][RD_NT][RD_MAX_TASKS];
	struct rd_run run[RD_MAX_RUNTIMES];
	struct rd_stats st = { 0 };
	struct pto2_config c;
	struct env e;
	char where[96] = "", msg[160];
	uint32_t n, r, k, nrt = rc->runtimes ? rc->runtimes : 1;
	int ret;

	case_config(rc, &c);
	ret = rc->engine ? env_open_engine(&e, rc->aic, rc->aiv, &c) :
			   env_open(&e, rc->aic, rc->aiv, &c);
	if (!ret && rc->engine) {
		struct hws_config h;

		pto2_engine_get_config(e.eng, &h);
		h.policy = rc->policy;
		ret = pto2_engine_configure(e.eng, &h, msg, sizeof(msg));
	}
	memset(run, 0, sizeof(run));
	for (r = 0; !ret && r < nrt; r++) {
		uint64_t size, mem;

		run[r].p = &prog[r];
		run[r].kernel[PTO2_WORKER_CUBE] = RD_KERNEL;
		run[r].kernel[PTO2_WORKER_VECTOR] = RD_KERNEL;
		run[r].kernel[PTO2_WORKER_MIXED] = RD_KERNEL;
		for (k = 0; k < RD_NT; k++)
			run[r].ref[k] = refs[r][k];
		if (!r) {
			run[r].rt = e.rt;
			continue;
		}
		size = pto2_runtime_mem_size(&c, e.sd->nr_cores);
		mem = sim_gm_alloc(&e.arena, size, 4096);
		ret = mem ? pto2_runtime_create(&e.sd->dev, &c, host(mem), mem,
						size, &run[r].rt) : -ENOMEM;
	}
	if (ret) {
		ok(0, "%s: setup failed (%d)", rc->name, ret);
		goto out;
	}
	sim_device_set_kernel(e.sd, RD_KERNEL, rd_kernel);
	for (n = 0; n < nprogs && !ret; n++) {
		uint64_t args[RD_MAX_RUNTIMES];

		for (r = 0; r < nrt && !ret; r++) {
			/* two-thread blocks need two AIV (one cluster),
			 * MIXED ones a whole cluster */
			rd_generate(&prog[r], seed + n * RD_MAX_RUNTIMES + r,
				    rc->tasks, rc->small ? 8 : 32,
				    rc->aiv >= 2 * rc->aic ? 3 :
				    rc->aiv >= 2 ? 2 : 1, &st, &gen);
			rd_reference(&prog[r], run[r].ref);
			ret = run_buffers(&e, &run[r]);
			args[r] = (uint64_t)(uintptr_t)&run[r];
			if (!ret)
				ret = pto2_runtime_launch(run[r].rt, rd_orchestrate,
							  &args[r], 1);
		}
		for (r = 0; r < nrt; r++) {
			int w = pto2_runtime_wait(run[r].rt,
						  60ULL * 1000000000ULL);

			if (!ret)
				ret = w;
			if (!ret && rd_compare(&run[r], where, sizeof(where)))
				ret = -EPROTO;
			if (ret) {
				tap_diag("%s: program %u (seed %" PRIu64 "): %s %s",
					 rc->name, n, seed + n * RD_MAX_RUNTIMES + r,
					 ret == -EPROTO ? where : strerror(-ret),
					 pto2_rt_get_error_msg(run[r].rt));
				break;
			}
		}
	}
	tap_diag("%s: %u tasks: %u writes (%u INOUT), %u reads to order a write, %u tasks of reads only, %u of several blocks, %u of two-thread blocks, %u MIXED, %u on a cluster, %u making intermediates (%u intermediates made by a tile), %u tiles of intermediates",
		 rc->name, st.tasks, st.writes, st.inouts, st.order_reads,
		 st.reads_only, st.blocks, st.threads, st.mixed, st.clustered,
		 st.makes, st.part_makes, st.im_uses);
	ok(!ret, "%s: %u programs of %u tasks%s give the sequential result",
	   rc->name, n, rc->tasks, nrt > 1 ? " on each runtime" : "");
out:
	for (r = 1; r < nrt; r++)
		if (run[r].rt)
			pto2_runtime_destroy(run[r].rt);
	env_close(&e);
	return ret ? -1 : 0;
}

int main(void)
{
	static const struct rd_case cases[] = {
		{ "runtime's schedulers, 1 AIC + 1 AIV", 1, 1, false, 0, 1,
		  false, 200 },
		{ "runtime's schedulers, 3 AIC + 5 AIV", 3, 5, false, 0, 1,
		  false, 200 },
		{ "runtime's schedulers, small window and pools", 2, 3, false,
		  0, 1, true, 200 },
		{ "engine, HWS", 2, 4, true, HWS_POLICY_HWS, 1, false, 200 },
		{ "engine, FIFO", 2, 4, true, HWS_POLICY_FIFO, 1, false, 200 },
		{ "engine, HWS, 3 runtimes", 2, 4, true, HWS_POLICY_HWS, 3,
		  false, 150 },
		{ "engine, FIFO, 3 runtimes, small windows", 2, 4, true,
		  HWS_POLICY_FIFO, 3, true, 150 },
	};
	uint64_t seed, nprogs;
	uint32_t i;

	if (tap_env_u64("RANDOM_DAG_SEED", 1, 0, UINT64_MAX, &seed) ||
	    tap_env_u64("RANDOM_DAG_PROGRAMS", 10, 1, UINT32_MAX, &nprogs))
		return tap_done();
	tap_diag("RANDOM_DAG_SEED=%" PRIu64 " RANDOM_DAG_PROGRAMS=%" PRIu64,
		 seed, nprogs);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i], seed + i * 1000003ULL, (uint32_t)nprogs);
	return tap_done();
}
