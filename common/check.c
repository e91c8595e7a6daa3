// SPDX-License-Identifier: MIT
/*
 * check.c - the checking mode (check.h)
 *
 * Every write of the graph (an OUTPUT or INOUT region and its task) is
 * kept in a hash table by buffer address; every task keeps its producers.
 * Whether an earlier writer W is ordered before the task T being checked
 * is a search back from T's producers through theirs, never below W (all
 * edges go from earlier to later tasks).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/check.h>
#include <pto-private/tensormap.h>
#include <pto-private/wire.h>

#define CHK_BUCKETS	4096		/* power of 2 */

enum ph_state {
	PH_UNSEEN = 0,
	PH_LIVE,
	PH_DEAD,			/* its scope ended */
};

struct chk_write {
	struct pto2_region r;
	uint32_t task;
	bool owner;			/* the OUTPUT that made an intermediate */
	int32_t next;			/* in its bucket, -1 = end */
};

struct pto_check {
	int32_t bucket[CHK_BUCKETS];	/* newest write first, -1 = none */
	struct chk_write *w;
	uint32_t nw, capw;
	/* tasks: kernel and producers (pred[pred_off[t] .. pred_off[t+1]]) */
	uint32_t ntask, captask;
	int32_t *kernel;
	uint32_t *pred_off;
	uint32_t *pred;
	uint32_t npred, cappred;
	/* the search: tasks seen in this search carry its stamp */
	uint32_t *seen;
	uint32_t stamp;
	uint32_t *stack;
	/* intermediates, by placeholder index; open scopes' first index */
	uint8_t *ph;
	uint32_t capph;
	uint32_t *scope;
	uint32_t depth, capscope;
};

/* Grow @*p (elements of @size) to hold @need; false if out of memory. */
static bool grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

struct pto_check *pto_check_new(void)
{
	struct pto_check *k = calloc(1, sizeof(*k));

	if (k)
		pto_check_graph_begin(k);
	return k;
}

void pto_check_free(struct pto_check *k)
{
	if (!k)
		return;
	free(k->w);
	free(k->kernel);
	free(k->pred_off);
	free(k->pred);
	free(k->seen);
	free(k->stack);
	free(k->ph);
	free(k->scope);
	free(k);
}

void pto_check_graph_begin(struct pto_check *k)
{
	memset(k->bucket, 0xff, sizeof(k->bucket));
	k->nw = 0;
	k->ntask = 0;
	k->npred = 0;
	k->depth = 0;
	if (k->ph)
		memset(k->ph, PH_UNSEEN, k->capph);
}

int pto_check_scope_begin(struct pto_check *k, uint32_t last_ph)
{
	if (!grow((void **)&k->scope, &k->capscope, k->depth + 1,
		  sizeof(*k->scope)))
		return -ENOMEM;
	k->scope[k->depth++] = last_ph + 1;
	return 0;
}

int pto_check_scope_end(struct pto_check *k, uint32_t last_ph)
{
	uint32_t i;

	if (!k->depth)
		return 0;		/* unbalanced: the runtime reports it */
	for (i = k->scope[--k->depth]; i <= last_ph && i < k->capph; i++)
		k->ph[i] = PH_DEAD;
	return 0;
}

static uint32_t bucket_of(uint64_t addr)
{
	return (uint32_t)((addr * 0x9E3779B97F4A7C15ULL) >> 52) &
	       (CHK_BUCKETS - 1);
}

/* Is @w among the producers of the task whose producers are @pred[@n], or
 * theirs, recursively? */
static bool ordered_after(struct pto_check *k, const uint32_t *pred,
			  uint32_t n, uint32_t w)
{
	uint32_t sp = 0, i, t;

	if (++k->stamp == 0) {
		memset(k->seen, 0, (size_t)k->captask * sizeof(*k->seen));
		k->stamp = 1;
	}
	for (i = 0; i < n; i++) {
		if (pred[i] == w)
			return true;
		if (pred[i] > w && k->seen[pred[i]] != k->stamp) {
			k->seen[pred[i]] = k->stamp;
			k->stack[sp++] = pred[i];
		}
	}
	while (sp) {
		t = k->stack[--sp];
		for (i = k->pred_off[t]; i < k->pred_off[t + 1]; i++) {
			uint32_t p = k->pred[i];

			if (p == w)
				return true;
			if (p > w && k->seen[p] != k->stamp) {
				k->seen[p] = k->stamp;
				k->stack[sp++] = p;
			}
		}
	}
	return false;
}

/* Room for one more task and its producers; -ENOMEM. */
static int reserve_task(struct pto_check *k, int n)
{
	uint32_t cap = k->captask, t = k->ntask + 2;

	if (!grow((void **)&k->kernel, &cap, t, sizeof(*k->kernel)))
		return -ENOMEM;
	cap = k->captask;
	if (!grow((void **)&k->pred_off, &cap, t, sizeof(*k->pred_off)))
		return -ENOMEM;
	cap = k->captask;
	if (!grow((void **)&k->stack, &cap, t, sizeof(*k->stack)))
		return -ENOMEM;
	cap = k->captask;
	if (!grow((void **)&k->seen, &cap, t, sizeof(*k->seen)))
		return -ENOMEM;
	if (cap > k->captask)
		memset(k->seen + k->captask, 0,
		       (size_t)(cap - k->captask) * sizeof(*k->seen));
	k->captask = cap;
	if (!grow((void **)&k->w, &k->capw, k->nw + (uint32_t)n,
		  sizeof(*k->w)))
		return -ENOMEM;
	return 0;
}

/* Add producer @p of the task being checked (its list starts at @from). */
static int add_pred(struct pto_check *k, uint32_t from, uint32_t p)
{
	uint32_t i;

	for (i = from; i < k->npred; i++)
		if (k->pred[i] == p)
			return 0;
	if (!grow((void **)&k->pred, &k->cappred, k->npred + 1,
		  sizeof(*k->pred)))
		return -ENOMEM;
	k->pred[k->npred++] = p;
	return 0;
}

/* The placeholder index of an intermediate's view, else 0. */
static uint32_t ph_of(const Tensor *t)
{
	return PTO_IS_PH(t->addr) ? PTO_PH_IDX(t->addr) : 0;
}

/* Param @i: an intermediate whose scope ended? */
static int check_scope(struct pto_check *k, const PTOParam *p, int i,
		       char *msg, size_t len)
{
	uint32_t ph = ph_of(p->tensor);

	if (!ph)
		return 0;
	if (ph < k->capph && k->ph[ph] == PH_DEAD) {
		snprintf(msg, len,
			 "param %d uses intermediate tensor #%u after the scope that made it ended",
			 i, ph);
		return -EINVAL;
	}
	if (ph >= k->capph) {
		uint32_t old = k->capph;

		if (!grow((void **)&k->ph, &k->capph, ph + 1, 1))
			return -ENOMEM;
		/* realloc() leaves the new part undefined: unseen */
		memset(k->ph + old, PH_UNSEEN, k->capph - old);
	}
	k->ph[ph] = PH_LIVE;
	return 0;
}

/* Param @i reads @r: its producers; an intermediate's region must have one. */
static int check_read(struct pto_check *k, const struct pto2_region *r,
		      uint32_t ph, int i, char *msg, size_t len)
{
	uint32_t found = 0;
	int32_t e;
	int ret;

	for (e = k->bucket[bucket_of(r->addr)]; e >= 0; e = k->w[e].next) {
		if (pto2_region_overlap(r, &k->w[e].r) == PTO2_NO_OVERLAP)
			continue;
		found++;
		ret = add_pred(k, k->pred_off[k->ntask], k->w[e].task);
		if (ret)
			return ret;
	}
	if (ph && !found) {
		snprintf(msg, len,
			 "param %d reads a region of intermediate tensor #%u that no earlier task wrote",
			 i, ph);
		return -EINVAL;
	}
	return 0;
}

/*
 * Param @i uses @r, part of an intermediate: as in the runtime
 * (PTO2_TM_OWNER_EDGE), it depends on the task that made the
 * intermediate; if none did, an OUTPUT makes it (*@owner).
 */
static int intermediate_use(struct pto_check *k, const struct pto2_region *r,
			    int32_t type, bool *owner)
{
	int32_t e;

	for (e = k->bucket[bucket_of(r->addr)]; e >= 0; e = k->w[e].next)
		if (k->w[e].owner && k->w[e].r.addr == r->addr)
			return add_pred(k, k->pred_off[k->ntask], k->w[e].task);
	*owner = type == PTO_PARAM_OUTPUT;
	return 0;
}

/* Param @i writes @r (OUTPUT): every earlier overlapping write ordered? */
static int check_write(struct pto_check *k, const struct pto2_region *r,
		       int i, char *msg, size_t len)
{
	uint32_t base = k->pred_off[k->ntask];
	int32_t e;

	for (e = k->bucket[bucket_of(r->addr)]; e >= 0; e = k->w[e].next) {
		uint32_t w = k->w[e].task;

		if (w == k->ntask ||
		    pto2_region_overlap(r, &k->w[e].r) == PTO2_NO_OVERLAP)
			continue;
		if (!ordered_after(k, k->pred + base, k->npred - base, w)) {
			snprintf(msg, len,
				 "param %d writes a region that task %u (kernel %d) also writes, and no dependency orders the two",
				 i, w, k->kernel[w]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Record @t's writes @r[] (OUTPUT and INOUT params); @owner: made it. */
static void add_writes(struct pto_check *k, const PTOParam *params, int n,
		       const struct pto2_region *r, const bool *owner)
{
	int i;

	for (i = 0; i < n; i++) {
		struct chk_write *w;
		uint32_t b;

		if (params[i].type != PTO_PARAM_OUTPUT &&
		    params[i].type != PTO_PARAM_INOUT)
			continue;
		b = bucket_of(r[i].addr);
		w = &k->w[k->nw];
		w->r = r[i];
		w->task = k->ntask;
		w->owner = owner[i];
		w->next = k->bucket[b];
		k->bucket[b] = (int32_t)k->nw++;
	}
}

/*
 * Scopes, reads, then writes of the task's params, in that order;
 * @owner[i]: param i is the OUTPUT that makes its intermediate.
 */
static int check_params(struct pto_check *k, const PTOParam *params, int n,
			struct pto2_region *r, bool *owner, char *msg,
			size_t len)
{
	int i, ret = 0;

	for (i = 0; !ret && i < n; i++) {
		if (params[i].type == PTO_PARAM_SCALAR)
			continue;
		if (pto2_region_from_tensor(&r[i], params[i].tensor))
			return 0;	/* malformed: validation reports it */
		ret = check_scope(k, &params[i], i, msg, len);
	}
	for (i = 0; !ret && i < n; i++)
		if (params[i].type == PTO_PARAM_INPUT ||
		    params[i].type == PTO_PARAM_INOUT)
			ret = check_read(k, &r[i], ph_of(params[i].tensor), i,
					 msg, len);
	for (i = 0; !ret && i < n; i++)
		if (params[i].type != PTO_PARAM_SCALAR &&
		    ph_of(params[i].tensor))
			ret = intermediate_use(k, &r[i], params[i].type,
					       &owner[i]);
	for (i = 0; !ret && i < n; i++)
		if (params[i].type == PTO_PARAM_OUTPUT)
			ret = check_write(k, &r[i], i, msg, len);
	return ret;
}

int pto_check_task(struct pto_check *k, int32_t kernel_id,
		   const PTOParam *params, int num_params, char *msg,
		   size_t msglen)
{
	struct pto2_region r[PTO2_MAX_TASK_PARAMS];
	bool owner[PTO2_MAX_TASK_PARAMS] = { false };
	int ret;

	if (num_params < 0 || num_params > PTO2_MAX_TASK_PARAMS)
		return 0;		/* validation reports it */
	ret = reserve_task(k, num_params);
	if (ret)
		return ret;
	k->pred_off[k->ntask] = k->npred;
	ret = check_params(k, params, num_params, r, owner, msg, msglen);
	if (ret) {
		k->npred = k->pred_off[k->ntask];
		return ret;
	}
	k->kernel[k->ntask] = kernel_id;
	add_writes(k, params, num_params, r, owner);
	k->ntask++;
	k->pred_off[k->ntask] = k->npred;
	return 0;
}

uint32_t pto_check_ntasks(const struct pto_check *k)
{
	return k->ntask;
}
