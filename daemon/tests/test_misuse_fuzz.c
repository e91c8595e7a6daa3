// SPDX-License-Identifier: MIT
/*
 * test_misuse_fuzz.c - random programs of orchestration calls on the sim
 * device, each valid or making exactly one mistake, at a random call.
 *
 * A program is MF_OPS operations drawn by its own RNG (xorshift64 from a
 * splitmix64 seed of MISUSE_SEED and the program's index, so programs do
 * not depend on each other): tasks submitted plainly, with launch
 * attributes (MIXED, COOP, priorities, affinities, clusters), on a cluster
 * and as block_incore, over views of two external tensors and of
 * intermediates the program produces (read only while the scope that
 * produced them is open); scopes begun and ended; clusters allocated (two
 * held at most) and freed; kernel costs; pto2_rt_get_error();
 * orchestration_done, after which it submits nothing; at the end
 * orchestration_done none, one or two times, and some or all of its
 * scopes ended. The kernels do nothing (no memory is touched).
 *
 * One program in two (its RNG's first draw) is valid throughout: it must
 * return 0. The others draw a mistake kind (enum mf_kind) and an
 * operation index from 0 to MF_OPS - 1: the operations before it are
 * valid, so tasks are in flight, scopes open and clusters held when it
 * comes; that operation makes the mistake; the ones after it are drawn as
 * in a valid program, but for orchestration_done (the run is failing by
 * then: they must do no harm). Every such program must fail with a
 * negative errno and a message naming its mistake (mf_kinds[].says), have
 * no error before its mistake, and have one right after it unless its
 * kind shows only later (a kernel the device has not and a launch no core
 * can take fail when the task is ready, one scope_end too many at the
 * next submit outside any scope or at the end; for these three only the
 * message tells the mistake from a later one). Every run must end within
 * the harness's bound, and the same runtime must then run a plain
 * program. With 1000 programs or more (the default) every kind must have
 * been made. Under ASan and TSan (make check) nothing may be reported.
 *
 * MISUSE_SEED and MISUSE_PROGRAMS change the programs (a failure names
 * its seed, program, mistake and call); MISUSE_VERBOSE=1 prints every
 * program's error.
 *
 * Not mistakes, so never made: scopes left open at the end (the runtime
 * ends them), calls other than submits after orchestration_done, a second
 * orchestration_done, params NULL with a count of 0, any est_time_ns or
 * priority, a cost for any kernel id the runtime has room for.
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
#define MF_AIC		3	/* the device: cores 0 .. 2 AIC, 3 .. 8 AIV */
#define MF_AIV		6
#define MF_CORES	(MF_AIC + MF_AIV)
#define MF_CLUSTERS	MF_AIC
#define MF_HELD		2	/* held at once by a valid program */
#define MF_HEAP		(1U << 20)
#define MF_COVER	1000	/* programs enough for every kind */

enum mf_kind {
	MK_NONE,
	/* a task's params */
	MK_COUNT, MK_NULL_PARAMS, MK_TYPE, MK_NULL_TENSOR, MK_OUTSIDE,
	MK_WRAP, MK_DTYPE, MK_NDIMS, MK_ADDR0, MK_TWICE_NEW, MK_TOO_LARGE,
	/* the task */
	MK_WORKER, MK_KERNEL,
	/* its launch attributes */
	MK_THREADS, MK_FLAGS, MK_CLUSTER_RANGE, MK_CLUSTER_STALE,
	MK_AFFINITY, MK_UNPLACEABLE,
	/* other calls */
	MK_SCOPE_END, MK_SCOPE_DEEP, MK_FREE_STALE, MK_ALLOC_ALL, MK_KCOST,
	MK_BLOCK_COUNT, MK_AFTER_DONE,
	MK_NR
};

/*
 * What a kind is, what the error of a program that makes it says (one of
 * up to three parts of a message), and whether the runtime can see it
 * only later.
 */
static const struct {
	const char *what;
	const char *says[3];
	bool late;
} mf_kinds[MK_NR] = {
	[MK_NONE] = { "none", { "" } },
	[MK_COUNT] = { "a param count out of range", { "params (kernel" } },
	/* block_incore's helper says -1 params */
	[MK_NULL_PARAMS] = { "params NULL with a count",
			     { "params is NULL", "-1 params (kernel" } },
	[MK_TYPE] = { "a param of no type", { "has type" } },
	[MK_NULL_TENSOR] = { "a tensor param without a tensor (NULL)",
			     { "has no tensor (NULL)" } },
	[MK_OUTSIDE] = { "a view outside its tensor",
			 { "past its raw shape" } },
	/* pto_tensor_view() turns it into a view of no dimensions */
	[MK_WRAP] = { "a view whose offset wraps", { ": no dimensions" } },
	[MK_DTYPE] = { "a view of an unknown dtype", { "unknown dtype" } },
	[MK_NDIMS] = { "a view of 0 or too many dimensions",
		       { ": no dimensions", " dimensions (1 to" } },
	[MK_ADDR0] = { "a read of address 0 (a tensor never produced)",
		       { "never produced (addr 0)" } },
	[MK_TWICE_NEW] = { "a new intermediate as two OUTPUTs",
			   { "the same new intermediate" } },
	[MK_TOO_LARGE] = { "an intermediate larger than the heap",
			   { "can never fit in a heap" } },
	[MK_WORKER] = { "an unknown worker type", { "unknown worker type" } },
	[MK_KERNEL] = { "a kernel the device has not", { "failed with" },
			true },
	[MK_THREADS] = { "a thread_num its worker type's blocks cannot have",
			 { "blocks are" } },
	[MK_FLAGS] = { "unknown attribute flags",
		       { "unknown attribute flags" } },
	[MK_CLUSTER_RANGE] = { "a cluster id out of range",
			       { "no such cluster" } },
	[MK_CLUSTER_STALE] = { "a task on a cluster the program does not hold",
			       { "is not allocated by this orchestration" } },
	[MK_AFFINITY] = { "an affinity naming a core the device has not",
			  { "a core the device does not have" } },
	[MK_UNPLACEABLE] = { "a launch no core can take",
			     { "cannot be placed" }, true },
	/* at the end, at a submit outside any scope, or at a cluster the
	 * extra end released */
	[MK_SCOPE_END] = { "one scope_end more than scope_begins",
			   { "scope_end() without scope_begin()",
			     "submit outside of any PTO2_SCOPE",
			     "is not allocated by this orchestration" }, true },
	[MK_SCOPE_DEEP] = { "scopes nested deeper than the runtime allows",
			    { "nested deeper than" } },
	[MK_FREE_STALE] = { "a free of a cluster the program does not hold",
			    { "is not allocated by this orchestration" } },
	[MK_ALLOC_ALL] = { "an allocation with every cluster held",
			   { "Cluster allocation deadlock" } },
	[MK_KCOST] = { "a kernel cost of a kernel id out of range",
		       { "out of range" } },
	[MK_BLOCK_COUNT] = { "a block_incore param count out of range",
			     { "params (kernel" } },
	[MK_AFTER_DONE] = { "a submit after orchestration_done",
			    { "submit after pto2_rt_orchestration_done()" } },
};

/* Whether @msg is an error of @kind's. */
static bool mf_says(enum mf_kind kind, const char *msg)
{
	uint32_t i;

	for (i = 0; i < 3 && mf_kinds[kind].says[i]; i++)
		if (strstr(msg, mf_kinds[kind].says[i]))
			return true;
	return false;
}

/* A program's arguments in, and what its orchestration saw out. */
struct mf_prog {
	uint64_t seed;
	uint64_t ext[MF_EXT];		/* device addresses */
	int err_before, err_after;	/* pto2_rt_get_error() around its mistake */
};

/* A program's generator: its RNG, and its mistake (MK_NONE: none). */
struct mf_gen {
	uint64_t s;
	enum mf_kind kind;
	uint32_t at;			/* the operation that makes it */
};

/* How a task is submitted. */
enum mf_how { MF_PLAIN, MF_ATTR, MF_CLUSTERED, MF_BLOCKS, MF_HOWS };

/* A program's state: what it has made, as far as it knows. */
struct mf_state {
	PTO2Runtime *rt;
	struct mf_gen g;
	uint32_t depth;			/* its scopes open */
	bool close_all;			/* it ends them all at the end */
	bool done;			/* orchestration_done: no submit */
	Tensor ext[MF_EXT];
	Tensor im[MF_IMS];
	int32_t im_depth[MF_IMS];	/* its producer's scope; -1: none yet */
	bool im_new[MF_IMS];		/* produced by the task being made */
	int32_t cl[MF_CLUSTERS];	/* the clusters it holds */
	uint32_t cl_depth[MF_CLUSTERS];	/* the scopes that allocated them */
	uint32_t ncl;
	Tensor ts[PTO2_MAX_TASK_PARAMS];	/* the params' views */
	Tensor odd[2];			/* a mistake's own tensors */
	/* a count made larger reads the scalars past the real params */
	PTOParam p[PTO2_MAX_TASK_PARAMS + 8];
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

/* A program's generator from its seed: its first draw says if it errs. */
static struct mf_gen mf_gen_start(uint64_t seed)
{
	struct mf_gen g = { .s = seed };

	if (rnd(&g, 2)) {
		g.kind = (enum mf_kind)(1 + rnd(&g, MK_NR - 1));
		g.at = rnd(&g, MF_OPS);
	}
	return g;
}

/* The cores of worker type @wt (CUBE or VECTOR), as affinity word 0. */
static uint64_t mf_cores(PTO2WorkerType wt)
{
	uint64_t aic = (1ULL << MF_AIC) - 1;

	return wt == PTO2_WORKER_CUBE ? aic : ((1ULL << MF_CORES) - 1) & ~aic;
}

static Tensor mf_new_im(struct mf_gen *g)
{
	uint64_t shape[2] = { 1 + rnd(g, 8), 1 + rnd(g, 8) };

	return make_tensor(shape, 2, PTO_DT_FP32);
}

/* A view inside external tensor @t. */
static Tensor mf_view(struct mf_gen *g, const Tensor *t)
{
	uint64_t len = 1 + rnd(g, 16), off = rnd(g, MF_ELEMS - len + 1);

	return pto_tensor_view(t, &len, &off);
}

static bool mf_used(const struct mf_state *st, int32_t n, const Tensor *t)
{
	int32_t i;

	for (i = 0; i < n; i++)
		if (st->p[i].tensor == t)
			return true;
	return false;
}

/*
 * Valid params into st->p, at most @max; their count. An intermediate is
 * produced by its first OUTPUT and only then read; one param of it a task.
 */
static int32_t mf_params(struct mf_state *st, int32_t max)
{
	struct mf_gen *g = &st->g;
	int32_t n = (int32_t)rnd(g, 6), i;

	for (i = 0; i < PTO2_MAX_TASK_PARAMS + 8; i++)
		st->p[i] = make_scalar_param((uint64_t)i);
	memset(st->im_new, 0, sizeof(st->im_new));
	for (i = 0; i < n; i++) {
		uint32_t what = rnd(g, 10), k;

		if (what < 5) {
			st->ts[i] = mf_view(g, &st->ext[rnd(g, MF_EXT)]);
			st->p[i] = pto_param_(what < 2 ? PTO_PARAM_INPUT :
					      what < 4 ? PTO_PARAM_OUTPUT :
					      PTO_PARAM_INOUT, &st->ts[i], 0);
		} else if (what < 8) {
			k = rnd(g, MF_IMS);
			if (mf_used(st, i, &st->im[k]))
				continue;
			st->p[i] = pto_param_(st->im_depth[k] >= 0 ?
					      (int32_t)rnd(g, 3) :
					      PTO_PARAM_OUTPUT, &st->im[k], 0);
			st->im_new[k] = st->im_depth[k] < 0;
		}
	}
	if (one_in(g, 8))
		n += (int32_t)rnd(g, (uint32_t)(max - n + 1));
	return n;
}

/* The intermediates the task just submitted produced (if it was). */
static void mf_produced(struct mf_state *st, bool submitted)
{
	uint32_t k;

	for (k = 0; k < MF_IMS; k++)
		if (st->im_new[k] && submitted)
			st->im_depth[k] = (int32_t)st->depth;
}

/* Valid launch attributes, and their worker type into *@wt. */
static void mf_attr(struct mf_state *st, PTO2TaskAttr *a, PTO2WorkerType *wt)
{
	struct mf_gen *g = &st->g;
	uint32_t k = rnd(g, 4);

	memset(a, 0, sizeof(*a));
	*wt = k == 3 ? PTO2_WORKER_MIXED :
	      k ? PTO2_WORKER_VECTOR : PTO2_WORKER_CUBE;
	a->thread_num = (uint16_t)(*wt == PTO2_WORKER_MIXED ? 3 :
				   *wt == PTO2_WORKER_VECTOR ? rnd(g, 3) :
				   rnd(g, 2));
	/* COOP: at most 3 blocks, what the device has of every shape */
	a->block_num = (uint16_t)rnd(g, 4);
	a->flags = rnd(g, PTO2_ATTR_ALL + 1) & ~PTO2_ATTR_CLUSTER;
	a->est_time_ns = rnd(g, 4) ? rnd(g, 1000000) : rnd64(g);
	a->priority = (uint32_t)rnd64(g);
	if (st->ncl && rnd(g, 2)) {
		/* a cluster has one block of each shape: no COOP */
		a->flags = (a->flags & ~PTO2_ATTR_COOP) | PTO2_ATTR_CLUSTER;
		a->cluster_id = st->cl[rnd(g, st->ncl)];
	} else if (a->thread_num <= 1 && *wt != PTO2_WORKER_MIXED &&
		   !(a->flags & PTO2_ATTR_COOP) && one_in(g, 3)) {
		/* some cores of its type, maybe some of the other */
		a->affinity[0] = rnd64(g) & ((1ULL << MF_CORES) - 1);
		if (!(a->affinity[0] & mf_cores(*wt)))
			a->affinity[0] |= mf_cores(*wt);
	}
}

/*
 * A cluster id of the device the program does not hold (there is one: it
 * holds MF_HELD at most when it makes its mistake).
 */
static int32_t mf_unheld(struct mf_state *st)
{
	int32_t id;
	uint32_t k;

	for (;;) {
		id = (int32_t)rnd(&st->g, MF_CLUSTERS);
		for (k = 0; k < st->ncl && st->cl[k] != id; k++)
			;
		if (k == st->ncl)
			return id;
	}
}

/* A cluster id the device has not. */
static int32_t mf_no_cluster(struct mf_gen *g)
{
	return rnd(g, 2) ? -1 - (int32_t)rnd(g, 8) :
	       MF_CLUSTERS + (int32_t)rnd(g, 60);
}

/*
 * A param of a mistake at a random place of the @n params (or after
 * them, within @max): a valid view of an external tensor, for the
 * mistake to spoil.
 */
static int32_t mf_slot(struct mf_state *st, int32_t *n, int32_t max)
{
	struct mf_gen *g = &st->g;
	int32_t j = (int32_t)rnd(g, (uint32_t)(*n + (*n < max)));

	if (j == *n)
		(*n)++;
	st->ts[j] = mf_view(g, &st->ext[rnd(g, MF_EXT)]);
	st->p[j] = pto_param_((int32_t)rnd(g, 3), &st->ts[j], 0);
	return j;
}

/* Spoil the params of a task: @kind's mistake. */
static void mf_bad_params(struct mf_state *st, enum mf_kind kind,
			  PTOParam **p, int32_t *n, int32_t max)
{
	struct mf_gen *g = &st->g;
	uint64_t len, off, big;
	int32_t j, j2;
	Tensor in;

	if ((kind < MK_COUNT || kind > MK_TOO_LARGE) && kind != MK_BLOCK_COUNT)
		return;
	switch (kind) {
	case MK_COUNT:
	case MK_BLOCK_COUNT:
		*n = rnd(g, 2) ? -1 - (int32_t)rnd(g, 3) :
		     max + 1 + (int32_t)rnd(g, 4);
		return;
	case MK_NULL_PARAMS:
		*p = NULL;
		if (!*n)
			*n = 1 + (int32_t)rnd(g, 4);
		return;
	case MK_TWICE_NEW:
		st->odd[0] = mf_new_im(g);
		j = mf_slot(st, n, max);
		do
			j2 = mf_slot(st, n, max);
		while (j2 == j);
		st->p[j] = make_output_param(&st->odd[0]);
		st->p[j2] = make_output_param(&st->odd[0]);
		return;
	default:
		break;
	}
	j = mf_slot(st, n, max);
	switch (kind) {
	case MK_TYPE:
		st->p[j].type = rnd(g, 2) ? 4 + (int32_t)rnd(g, 100) :
				-1 - (int32_t)rnd(g, 4);
		break;
	case MK_NULL_TENSOR:
		st->p[j].tensor = NULL;
		break;
	case MK_OUTSIDE:
		len = 1 + rnd(g, 16);
		off = rnd(g, 4) ? MF_ELEMS - len + 1 + rnd(g, MF_ELEMS) :
		      UINT64_MAX - rnd(g, 4);
		st->ts[j] = pto_tensor_view(&st->ext[rnd(g, MF_EXT)], &len,
					    &off);
		break;
	case MK_WRAP:
		/* a view of a view at 1 .. 8, then past 2^64 from there */
		len = 1;
		off = 1 + rnd(g, 8);
		in = pto_tensor_view(&st->ext[rnd(g, MF_EXT)], &len, &off);
		off = UINT64_MAX - rnd(g, (uint32_t)off);
		st->ts[j] = pto_tensor_view(&in, &len, &off);
		break;
	case MK_DTYPE:
		st->ts[j].dtype = rnd(g, 2) ? PTO_DT_COUNT + (int32_t)rnd(g, 100) :
				  -1 - (int32_t)rnd(g, 4);
		break;
	case MK_NDIMS:
		st->ts[j].ndims = rnd(g, 3) ?
				  PTO2_MAX_TENSOR_DIMS + 1 + rnd(g, 10) : 0;
		break;
	case MK_ADDR0:
		st->odd[0] = rnd(g, 2) ? mf_new_im(g) :
			     ext1(0, MF_ELEMS, PTO_DT_INT64);
		st->p[j] = pto_param_(rnd(g, 2) ? PTO_PARAM_INPUT :
				      PTO_PARAM_INOUT, &st->odd[0], 0);
		break;
	case MK_TOO_LARGE:
		big = MF_HEAP / 4 + 1 + rnd(g, 1000);
		st->odd[1] = make_tensor(&big, 1, PTO_DT_FP32);
		st->p[j] = make_output_param(&st->odd[1]);
		break;
	default:
		break;
	}
}

/* Spoil launch attributes @a of worker type *@wt: @kind's mistake. */
static void mf_bad_attr(struct mf_state *st, enum mf_kind kind,
			PTO2TaskAttr *a, PTO2WorkerType *wt)
{
	struct mf_gen *g = &st->g;
	PTO2WorkerType other;

	switch (kind) {
	case MK_THREADS:
		a->thread_num = (uint16_t)
			(*wt == PTO2_WORKER_MIXED ?
			 (rnd(g, 2) ? rnd(g, 3) : 4 + rnd(g, 100)) :
			 (*wt == PTO2_WORKER_VECTOR ? 3 : 2) + rnd(g, 65000));
		break;
	case MK_FLAGS:
		a->flags |= 1U << (4 + rnd(g, 28));
		break;
	case MK_CLUSTER_RANGE:
		a->flags = (a->flags & ~PTO2_ATTR_COOP) | PTO2_ATTR_CLUSTER;
		a->cluster_id = mf_no_cluster(g);
		break;
	case MK_CLUSTER_STALE:
		a->flags = (a->flags & ~PTO2_ATTR_COOP) | PTO2_ATTR_CLUSTER;
		a->cluster_id = mf_unheld(st);
		break;
	case MK_AFFINITY:
		if (rnd(g, 2))
			a->affinity[0] |= 1ULL << (MF_CORES +
						   rnd(g, 64 - MF_CORES));
		else
			a->affinity[1 + rnd(g, PTO2_AFFINITY_WORDS - 1)] |=
				1ULL << rnd(g, 64);
		break;
	case MK_UNPLACEABLE:
		/* one thread a block, no cluster: the rest made anew */
		*wt = rnd(g, 2) ? PTO2_WORKER_VECTOR : PTO2_WORKER_CUBE;
		a->thread_num = 1;
		a->flags &= ~(PTO2_ATTR_CLUSTER | PTO2_ATTR_COOP);
		memset(a->affinity, 0, sizeof(a->affinity));
		if (rnd(g, 2)) {
			/* only cores of the other type */
			other = *wt == PTO2_WORKER_CUBE ? PTO2_WORKER_VECTOR :
				PTO2_WORKER_CUBE;
			a->affinity[0] = rnd64(g) & mf_cores(other);
			if (!a->affinity[0])
				a->affinity[0] = mf_cores(other);
		} else {
			/* all at once, more blocks than it has cores */
			a->flags |= PTO2_ATTR_COOP;
			a->block_num = (uint16_t)
				((*wt == PTO2_WORKER_CUBE ? MF_AIC : MF_AIV) +
				 1 + rnd(g, 100));
		}
		break;
	default:
		break;
	}
}

/* The attribute kinds: only a submit with attributes can make them. */
static bool mf_attr_kind(enum mf_kind kind)
{
	return kind >= MK_THREADS && kind <= MK_UNPLACEABLE;
}

/* Submit a task as @how says: valid, or with @kind's mistake. */
static void mf_submit(struct mf_state *st, enum mf_how how,
		      enum mf_kind kind)
{
	struct mf_gen *g = &st->g;
	int32_t max = how == MF_BLOCKS ? PTO2_MAX_TASK_PARAMS - 2 :
		      PTO2_MAX_TASK_PARAMS;
	int32_t kid = (int32_t)rnd(g, MF_KERNELS), cid = -1;
	int32_t n = mf_params(st, max);
	PTO2WorkerType wt = rnd(g, 2) ? PTO2_WORKER_VECTOR : PTO2_WORKER_CUBE;
	uint32_t bd = rnd(g, 4);
	PTOParam *p = st->p;
	PTO2TaskAttr a, *ap = NULL;

	if (how == MF_CLUSTERED)
		cid = kind == MK_CLUSTER_STALE ? mf_unheld(st) :
		      st->cl[rnd(g, st->ncl)];
	if (how == MF_ATTR && (rnd(g, 8) || mf_attr_kind(kind))) {
		mf_attr(st, &a, &wt);
		ap = &a;
	}
	if (kind && !bd)
		bd = 1;			/* a block_incore of 0 submits nothing */
	if (ap)
		mf_bad_attr(st, kind, ap, &wt);
	mf_bad_params(st, kind, &p, &n, max);
	if (!n && one_in(g, 4))
		p = NULL;
	if (kind == MK_WORKER)
		wt = rnd(g, 2) ? 3 + (int32_t)rnd(g, 10) : -1 - (int32_t)rnd(g, 4);
	if (kind == MK_KERNEL)
		kid = rnd(g, 2) ? MF_KERNELS + (int32_t)rnd(g, 100) :
		      -1 - (int32_t)rnd(g, 8);
	if (kind == MK_AFTER_DONE)
		pto2_rt_orchestration_done(st->rt);
	switch (how) {
	case MF_PLAIN:
		pto2_rt_submit_task(st->rt, kid, wt, p, n);
		break;
	case MF_ATTR:
		pto2_rt_submit_task_attr(st->rt, kid, wt, p, n, ap);
		break;
	case MF_CLUSTERED:
		pto2_rt_submit_task_clustered(st->rt, kid, wt, p, n, cid);
		break;
	default:
		pto2_rt_submit_block_incore(st->rt, kid, wt, p, n, bd);
		break;
	}
	mf_produced(st, !kind && (how != MF_BLOCKS || bd));
}

/* Any way to submit, on a cluster only while the program holds one. */
static enum mf_how mf_how(struct mf_state *st)
{
	enum mf_how how = (enum mf_how)rnd(&st->g, MF_HOWS);

	return how == MF_CLUSTERED && !st->ncl ? MF_PLAIN : how;
}

static void mf_begin(struct mf_state *st)
{
	pto2_rt_scope_begin(st->rt);
	st->depth++;
}

/* End the innermost scope: its clusters and intermediates go with it. */
static void mf_end(struct mf_state *st)
{
	uint32_t k = 0;

	pto2_rt_scope_end(st->rt);
	while (k < st->ncl) {
		if (st->cl_depth[k] < st->depth) {
			k++;
			continue;
		}
		st->ncl--;
		st->cl[k] = st->cl[st->ncl];
		st->cl_depth[k] = st->cl_depth[st->ncl];
	}
	for (k = 0; k < MF_IMS; k++)
		if (st->im_depth[k] >= (int32_t)st->depth) {
			st->im[k] = mf_new_im(&st->g);
			st->im_depth[k] = -1;
		}
	st->depth--;
}

static bool mf_alloc(struct mf_state *st)
{
	int32_t c = pto2_rt_allocate_cluster(st->rt);

	if (c < 0)
		return false;	/* the run failed: it says why */
	st->cl[st->ncl] = c;
	st->cl_depth[st->ncl++] = st->depth;
	return true;
}

static void mf_free(struct mf_state *st, uint32_t k)
{
	pto2_rt_free_cluster(st->rt, st->cl[k]);
	st->cl[k] = st->cl[--st->ncl];
	st->cl_depth[k] = st->cl_depth[st->ncl];
}

/* One valid operation. */
static void mf_op(struct mf_state *st)
{
	struct mf_gen *g = &st->g;
	uint32_t op = rnd(g, 100);

	if (op < 60) {
		if (!st->done)
			mf_submit(st, mf_how(st), MK_NONE);
	} else if (op < 70) {
		mf_begin(st);
	} else if (op < 80) {
		if (st->depth)
			mf_end(st);
	} else if (op < 85) {
		if (st->ncl < MF_HELD)
			mf_alloc(st);
	} else if (op < 90) {
		if (st->ncl)
			mf_free(st, rnd(g, st->ncl));
	} else if (op < 95) {
		pto2_rt_set_kernel_cost(st->rt,
					(int32_t)rnd(g, PTO2_MAX_KERNELS),
					rnd64(g));
	} else if (op == 95 && !g->kind && one_in(g, 3)) {
		/* the calls but submits may follow (in a program that makes a
		 * mistake, the mistake would be a submit after it) */
		pto2_rt_orchestration_done(st->rt);
		st->done = true;
	} else {
		(void)pto2_rt_get_error(st->rt);
	}
}

/* The operation that makes the program's mistake. */
static void mf_mistake(struct mf_state *st)
{
	struct mf_gen *g = &st->g;
	enum mf_kind kind = g->kind;
	uint32_t k;

	switch (kind) {
	case MK_SCOPE_END:
		/* the program's later ends match its begins: one too many */
		pto2_rt_scope_end(st->rt);
		st->close_all = true;
		break;
	case MK_SCOPE_DEEP:
		for (k = 0; k < PTO2_MAX_SCOPE_DEPTH; k++)
			mf_begin(st);
		break;
	case MK_FREE_STALE:
		pto2_rt_free_cluster(st->rt, rnd(g, 4) ? mf_unheld(st) :
				     mf_no_cluster(g));
		break;
	case MK_ALLOC_ALL:
		while (st->ncl < MF_CLUSTERS && mf_alloc(st))
			;
		(void)pto2_rt_allocate_cluster(st->rt);
		break;
	case MK_KCOST:
		pto2_rt_set_kernel_cost(st->rt, rnd(g, 2) ?
					-1 - (int32_t)rnd(g, 1000) :
					PTO2_MAX_KERNELS + (int32_t)rnd(g, 1000),
					rnd64(g));
		break;
	case MK_BLOCK_COUNT:
		mf_submit(st, MF_BLOCKS, kind);
		break;
	case MK_COUNT:
		/* a count over 14 is one block_incore refuses, over 16 all */
		k = rnd(g, 3);
		mf_submit(st, k == 2 && st->ncl ? MF_CLUSTERED : k ? MF_ATTR :
			  MF_PLAIN, kind);
		break;
	case MK_CLUSTER_STALE:
		mf_submit(st, rnd(g, 2) ? MF_CLUSTERED : MF_ATTR, kind);
		break;
	default:
		mf_submit(st, mf_attr_kind(kind) ? MF_ATTR : mf_how(st), kind);
		break;
	}
}

static int mf_orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	struct mf_prog *pr = (struct mf_prog *)(uintptr_t)args[0];
	struct mf_state st;
	uint32_t i, k;

	(void)argc;
	memset(&st, 0, sizeof(st));
	st.rt = rt;
	st.g = mf_gen_start(pr->seed);
	for (i = 0; i < MF_EXT; i++)
		st.ext[i] = ext1(pr->ext[i], MF_ELEMS, PTO_DT_INT64);
	for (i = 0; i < MF_IMS; i++) {
		st.im[i] = mf_new_im(&st.g);
		st.im_depth[i] = -1;
	}
	for (i = 0; i < MF_OPS; i++) {
		if (st.g.kind && i == st.g.at) {
			pr->err_before = pto2_rt_get_error(rt);
			mf_mistake(&st);
			pr->err_after = pto2_rt_get_error(rt);
		} else {
			mf_op(&st);
		}
	}
	/* a second orchestration_done is no mistake */
	for (k = rnd(&st.g, 3); k; k--)
		pto2_rt_orchestration_done(rt);
	k = st.close_all ? st.depth : rnd(&st.g, st.depth + 1);
	while (k--)
		mf_end(&st);
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
	uint32_t i, k, hung = 0, next = 0, refused = 0, unfailed = 0;
	uint32_t made[MK_NR] = { 0 }, unmade = 0;
	bool verbose = getenv("MISUSE_VERBOSE") != NULL;
	uint64_t seed, programs;
	struct pto2_config c;
	struct mf_prog pr;
	struct mf_gen g;
	struct env e;
	uint64_t args[1] = { (uintptr_t)&pr };
	const char *msg;
	int ret;

	if (tap_env_u64("MISUSE_SEED", 1, 0, UINT64_MAX, &seed) ||
	    tap_env_u64("MISUSE_PROGRAMS", MF_COVER, 1, UINT32_MAX, &programs))
		return tap_done();
	/* room for a program's tasks in one scope: its valid ones must run */
	cfg_small(&c);
	c.task_window = 512;
	c.dep_pool_size = 4096;
	c.tensormap_pool_size = 2048;
	c.heap_size = MF_HEAP;
	/* an allocation with every cluster held fails within 0.1 s, not 1 */
	c.spin_limit = 10000;
	if (!tap_ok(!env_open(&e, MF_AIC, MF_AIV, &c),
		    "a sim device of %d AIC + %d AIV", MF_AIC, MF_AIV))
		return tap_done();
	for (k = 0; k < MF_KERNELS; k++)
		sim_device_set_kernel(e.sd, (int32_t)k, k_nop);
	for (k = 0; k < MF_EXT; k++)
		pr.ext[k] = gm(MF_ELEMS * 8);
	for (i = 0; i < programs; i++) {
		pr.seed = test_rng_seed(seed, i);
		pr.err_before = pr.err_after = 0;
		g = mf_gen_start(pr.seed);
		made[g.kind]++;
		ret = run(&e, mf_orch, args, 1);
		msg = pto2_rt_get_error_msg(e.rt);
		hung += ret == -ETIMEDOUT;
		if (!g.kind && ret) {
			refused++;
			tap_diag("program %u of MISUSE_SEED=%" PRIu64 " (valid): %d %.600s",
				 i, seed, ret, msg);
		} else if (g.kind &&
			   (ret >= 0 || !mf_says(g.kind, msg) || pr.err_before ||
			    (!mf_kinds[g.kind].late && !pr.err_after))) {
			unfailed++;
			tap_diag("program %u of MISUSE_SEED=%" PRIu64 " (%s at call %u): %d, error %d before it, %d after it: %.600s",
				 i, seed, mf_kinds[g.kind].what, g.at, ret,
				 pr.err_before, pr.err_after, msg);
		} else if (g.kind && verbose) {
			tap_diag("program %u (%s at call %u): %d %.300s", i,
				 mf_kinds[g.kind].what, g.at, ret, msg);
		}
		if (run(&e, plain_orch, args, 1)) {
			tap_diag("after program %u of MISUSE_SEED=%" PRIu64 ": a plain program failed: %s",
				 i, seed, pto2_rt_get_error_msg(e.rt));
			next++;
		}
	}
	tap_diag("%" PRIu64 " programs of %d calls, %u with a mistake",
		 programs, MF_OPS, (uint32_t)programs - made[MK_NONE]);
	tap_ok(!refused, "every program without a mistake runs (%u do not)",
	       refused);
	tap_ok(!unfailed,
	       "every program with a mistake fails for it (a negative errno, a message that names it), none before its mistake, at it unless the runtime sees it only later (%u do not)",
	       unfailed);
	tap_ok(!hung, "every run ended (%u did not)", hung);
	tap_ok(!next, "the runtime runs a plain program after each (%u failed)",
	       next);
	for (k = 1; k < MK_NR; k++) {
		if (made[k])
			continue;
		unmade++;
		tap_diag("no program made %s", mf_kinds[k].what);
	}
	if (programs >= MF_COVER)
		tap_ok(!unmade, "every kind of mistake made (%u not)", unmade);
	else
		tap_skip(1, "every kind of mistake made: fewer programs than 1000");
	env_close(&e);
	return tap_done();
}
