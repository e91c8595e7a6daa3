// SPDX-License-Identifier: MIT
/*
 * test_misuse_fuzz.c - random sequences of orchestration calls on the sim
 * device, most of them valid and some not: tasks with views of external
 * and intermediate tensors (some outside their tensor, of address 0, of
 * unknown dtypes or types, NULL), launch attributes of every field in and
 * out of range, scopes begun and ended out of balance, clusters
 * allocated, freed twice or never allocated, kernel costs, block_incore
 * with bad counts, calls after orchestration_done. The kernels do nothing
 * (no memory is touched).
 *
 * Half the programs make no mistake (the same calls, every choice in
 * range): each must run. Every run must end within the harness's bound,
 * with 0 or a negative errno and, when it failed, a message; the same
 * runtime must then run a plain program. Under ASan and TSan (make check) nothing may be reported.
 * MISUSE_SEED and MISUSE_PROGRAMS change the programs (a failure names
 * its seed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto2_runtime.h"
#include "sim_device.h"
#include "sim_env.h"
#include "tap.h"
#include "test_kernels.h"
#include "test_rng.h"

#define MF_KERNELS	4	/* ids 0 .. 3, each a no-op */
#define MF_EXT		2	/* external tensors of MF_ELEMS int64 */
#define MF_ELEMS	64
#define MF_IMS		4	/* intermediates a program keeps */
#define MF_OPS		60

struct mf_prog {
	uint64_t seed;
	uint64_t ext[MF_EXT];		/* device addresses */
};

/* A program's generator: its RNG, and whether it makes mistakes. */
struct mf_gen {
	uint64_t s;
	bool bad;
};

static uint32_t rnd(struct mf_gen *g, uint32_t n)
{
	return (uint32_t)(test_rng_next(&g->s) % n);
}

static uint64_t rnd64(struct mf_gen *g)
{
	return test_rng_next(&g->s);
}

/* One in @n. */
static bool one_in(struct mf_gen *g, uint32_t n)
{
	return rnd(g, n) == 0;
}

/* A mistake, one in @n, in a program that makes them. */
static bool oops(struct mf_gen *g, uint32_t n)
{
	return g->bad && one_in(g, n);
}

/* A view of external tensor @t: inside it, but for a mistake. */
static Tensor mf_view(struct mf_gen *g, const Tensor *t)
{
	uint64_t len = 1 + rnd(g, 16), off = rnd(g, MF_ELEMS);
	Tensor v;

	if (off + len > MF_ELEMS && !oops(g, 2))
		off = MF_ELEMS - len;
	if (oops(g, 40))
		off = UINT64_MAX - rnd(g, 4);	/* wraps */
	v = pto_tensor_view(t, &len, &off);
	if (oops(g, 60))
		v.dtype = (DataType)(100 + rnd(g, 50));
	if (oops(g, 60))
		v.ndims = 9;
	return v;
}

/*
 * The params of a task, into @p (PTO2_MAX_TASK_PARAMS + 8 of them) over
 * @ts; their count (a bad one for a mistake). An intermediate is made by
 * its first OUTPUT and only then read, but for a mistake.
 */
static int32_t mf_params(struct mf_gen *g, const Tensor *ext, Tensor *ims,
			 PTOParam *p, Tensor *ts)
{
	int32_t n = (int32_t)rnd(g, 5), i, k;

	/* a count made larger below reads scalars past the real params */
	for (i = 0; i < PTO2_MAX_TASK_PARAMS + 8; i++)
		p[i] = make_scalar_param((uint64_t)i);
	for (i = 0; i < n; i++) {
		uint32_t what = rnd(g, 10);

		if (what < 5) {
			ts[i] = mf_view(g, &ext[rnd(g, MF_EXT)]);
			p[i] = pto_param_(what < 2 ? PTO_PARAM_INPUT :
					  what < 4 ? PTO_PARAM_OUTPUT :
					  PTO_PARAM_INOUT, &ts[i], 0);
		} else if (what < 8) {
			Tensor *im = &ims[rnd(g, MF_IMS)];
			bool used = false;

			/* one param per intermediate a task */
			for (k = 0; k < i; k++)
				used |= p[k].tensor == im;
			if (used && !oops(g, 4)) {
				p[i] = make_scalar_param(7);
				continue;
			}
			p[i] = pto_param_(im->addr ? (PTOParamType)rnd(g, 3) :
					  oops(g, 4) ? PTO_PARAM_INPUT :
					  PTO_PARAM_OUTPUT, im, 0);
		}
		if (oops(g, 80))
			p[i].type = (PTOParamType)(4 + rnd(g, 100));
		if (oops(g, 80) && p[i].type != PTO_PARAM_SCALAR)
			p[i].tensor = NULL;
	}
	if (oops(g, 30))
		n = (int32_t)rnd(g, 22) - 3;	/* -3 .. 18 */
	return n;
}

/* Launch attributes in range, but for a mistake in a field. */
static void mf_attr(struct mf_gen *g, PTO2TaskAttr *a, const int32_t *cls,
		    uint32_t ncl)
{
	uint32_t w;

	memset(a, 0, sizeof(*a));
	a->block_num = (uint16_t)(oops(g, 20) ? rnd(g, 65536) : rnd(g, 3));
	a->thread_num = (uint16_t)(oops(g, 20) ? rnd(g, 65536) : 1);
	a->flags = oops(g, 10) ? (uint32_t)rnd64(g) :
		   rnd(g, 2) ? PTO2_ATTR_PRIORITY : 0;
	a->est_time_ns = rnd(g, 4) ? rnd(g, 1000000) : rnd64(g);
	a->priority = (uint32_t)rnd64(g);
	if (ncl && rnd(g, 2)) {
		a->flags |= PTO2_ATTR_CLUSTER;
		a->cluster_id = cls[rnd(g, ncl)];
	}
	if (oops(g, 10))
		a->cluster_id = (int32_t)rnd(g, 64) - 8;
	for (w = 0; w < PTO2_AFFINITY_WORDS; w++)
		a->affinity[w] = oops(g, 8) ? rnd64(g) : 0;
}

/* A worker type: kernels 0 and 1 are of any type here (no-ops). */
static PTO2WorkerType mf_worker(struct mf_gen *g)
{
	return oops(g, 50) ? (PTO2WorkerType)(3 + rnd(g, 10)) :
	       rnd(g, 2) ? PTO2_WORKER_VECTOR : PTO2_WORKER_CUBE;
}

/* A program's generator from its seed: its first draw says if it errs. */
static struct mf_gen mf_gen_start(uint64_t seed)
{
	struct mf_gen g = { .s = seed };

	g.bad = rnd(&g, 2);
	return g;
}

static int mf_orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const struct mf_prog *pr = (const struct mf_prog *)(uintptr_t)args[0];
	struct mf_gen g = mf_gen_start(pr->seed);
	Tensor ext[MF_EXT], ims[MF_IMS], ts[PTO2_MAX_TASK_PARAMS];
	PTOParam p[PTO2_MAX_TASK_PARAMS + 8];
	uint32_t i, ncl = 0, depth = 0, cdepth[8];
	uint64_t ishape[2];
	int32_t cls[8], n;
	PTO2TaskAttr a;

	(void)argc;
	for (i = 0; i < MF_EXT; i++)
		ext[i] = ext1(pr->ext[i], MF_ELEMS, PTO_DT_INT64);
	for (i = 0; i < MF_IMS; i++) {
		ishape[0] = 1 + rnd(&g, 8);
		ishape[1] = 1 + rnd(&g, 8);
		ims[i] = make_tensor(ishape, 2, PTO_DT_FP32);
	}
	pto2_rt_scope_begin(rt);
	depth++;
	for (i = 0; i < MF_OPS; i++) {
		uint32_t op = rnd(&g, 100);

		if (op < 40) {
			n = mf_params(&g, ext, ims, p, ts);
			pto2_rt_submit_task(rt, oops(&g, 30) ? MF_KERNELS :
					    (int32_t)rnd(&g, MF_KERNELS),
					    mf_worker(&g),
					    oops(&g, 100) ? NULL : p, n);
		} else if (op < 55) {
			n = mf_params(&g, ext, ims, p, ts);
			mf_attr(&g, &a, cls, ncl);
			pto2_rt_submit_task_attr(rt, (int32_t)rnd(&g, MF_KERNELS),
						 mf_worker(&g), p, n,
						 rnd(&g, 10) ? &a : NULL);
		} else if (op < 65) {
			pto2_rt_scope_begin(rt);
			depth++;
		} else if (op < 75) {
			if (depth > 1 || oops(&g, 4)) {
				pto2_rt_scope_end(rt);
				/* its clusters went with it */
				while (ncl && cdepth[ncl - 1] >= depth &&
				       !oops(&g, 4))
					ncl--;
				depth -= depth > 0;
			}
		} else if (op < 79) {
			/* at most two at once: the device has three */
			int32_t c = ncl < 2 || oops(&g, 4) ?
				    pto2_rt_allocate_cluster(rt) : -1;

			if (c >= 0 && ncl < 8) {
				cdepth[ncl] = depth;
				cls[ncl++] = c;
			}
		} else if (op < 82) {
			if (ncl && !oops(&g, 2)) {
				pto2_rt_free_cluster(rt, cls[--ncl]);
			} else if (g.bad) {
				pto2_rt_free_cluster(rt, (int32_t)rnd(&g, 64) - 8);
			}
		} else if (op < 86) {
			n = mf_params(&g, ext, ims, p, ts);
			if (ncl)
				pto2_rt_submit_task_clustered(rt, 1,
					PTO2_WORKER_VECTOR, p, n,
					cls[rnd(&g, ncl)]);
		} else if (op < 90) {
			pto2_rt_set_kernel_cost(rt, oops(&g, 4) ?
						(int32_t)rnd(&g, 300) - 2 :
						(int32_t)rnd(&g, MF_KERNELS),
						rnd64(&g));
		} else if (op < 95) {
			n = mf_params(&g, ext, ims, p, ts);
			pto2_rt_submit_block_incore(rt, 2, PTO2_WORKER_VECTOR,
						    p, oops(&g, 4) ?
						    -1 - (int32_t)rnd(&g, 3) :
						    n % 8, rnd(&g, 4));
		} else if (op < 96) {
			if (oops(&g, 2))
				pto2_rt_orchestration_done(rt);
		} else {
			(void)pto2_rt_get_error(rt);
		}
	}
	while (depth-- && !oops(&g, 10))
		pto2_rt_scope_end(rt);
	return 0;
}

/* A plain program: one task per kernel type. */
static int plain_orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const struct mf_prog *pr = (const struct mf_prog *)(uintptr_t)args[0];
	Tensor x = ext1(pr->ext[0], MF_ELEMS, PTO_DT_INT64);
	PTOParam p[] = { make_inout_param(&x) };

	(void)argc;
	PTO2_SCOPE(rt) {
		pto2_rt_submit_task(rt, 0, PTO2_WORKER_VECTOR, p, 1);
		pto2_rt_submit_task(rt, 1, PTO2_WORKER_CUBE, p, 1);
	}
	return 0;
}

int main(void)
{
	uint32_t i, k, errors = 0, hung = 0, silent = 0, next = 0, refused = 0;
	uint32_t nbad = 0;
	uint64_t seed, programs;
	bool bad;
	struct pto2_config c;
	struct mf_prog pr;
	struct env e;
	uint64_t args[1] = { (uintptr_t)&pr };
	int ret;

	if (tap_env_u64("MISUSE_SEED", 1, 0, UINT64_MAX, &seed) ||
	    tap_env_u64("MISUSE_PROGRAMS", 300, 1, UINT32_MAX, &programs))
		return tap_done();
	/* room for a program's tasks in one scope: its valid ones must run */
	cfg_small(&c);
	c.task_window = 512;
	c.dep_pool_size = 4096;
	c.tensormap_pool_size = 2048;
	c.heap_size = 1 << 20;
	if (!tap_ok(!env_open(&e, 3, 6, &c), "a sim device of 3 AIC + 6 AIV"))
		return tap_done();
	for (k = 0; k < MF_KERNELS; k++)
		sim_device_set_kernel(e.sd, (int32_t)k, k_nop);
	for (k = 0; k < MF_EXT; k++)
		pr.ext[k] = gm(MF_ELEMS * 8);
	for (i = 0; i < programs; i++) {
		pr.seed = seed * 0x9e3779b97f4a7c15ULL + i + 1;
		ret = run(&e, mf_orch, args, 1);
		bad = mf_gen_start(pr.seed).bad;
		nbad += bad;
		if (ret && (!bad || getenv("MISUSE_VERBOSE")))
			tap_diag("program %u (MISUSE_SEED=%" PRIu64 ", %s): %d %.600s",
				 i, seed, bad ? "with mistakes" : "valid", ret,
				 pto2_rt_get_error_msg(e.rt));
		refused += ret && !bad;
		if (ret) {
			errors++;
			if (ret == -ETIMEDOUT)
				hung++;
			if (ret > 0 || !pto2_rt_get_error_msg(e.rt)[0])
				silent++;
		}
		if (run(&e, plain_orch, args, 1)) {
			tap_diag("after program %u (MISUSE_SEED=%" PRIu64 "): a plain program failed: %s",
				 i, seed, pto2_rt_get_error_msg(e.rt));
			next++;
		}
	}
	tap_diag("%" PRIu64 " programs of %d calls, %u with mistakes, %u failed with an error",
		 programs, MF_OPS, nbad, errors);
	tap_ok(!refused, "every program without mistakes runs (%u refused)",
	       refused);
	tap_ok(!hung, "every run ended (%u did not)", hung);
	tap_ok(!silent, "every failed run has a negative errno and a message (%u have not)",
	       silent);
	tap_ok(!next, "the runtime runs a plain program after each (%u failed)",
	       next);
	/* a program's mistake may be one the runtime takes (an empty scope) */
	tap_ok(errors <= nbad && errors >= nbad / 2,
	       "at least half the programs with mistakes are refused, no other (%u of %u failed, %u with mistakes)",
	       errors, (uint32_t)programs, nbad);
	env_close(&e);
	return tap_done();
}
