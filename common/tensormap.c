// SPDX-License-Identifier: MIT
/*
 * tensormap.c - TensorMap (see pto-private/tensormap.h)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/params.h>
#include <pto-private/tensormap.h>

/* ---- Regions ------------------------------------------------------------ */

int pto2_region_from_tensor(struct pto2_region *r, const Tensor *t)
{
	if (pto_tensor_check(t))
		return -EINVAL;
	pto2_region_from_valid_tensor(r, t);
	return 0;
}

void pto2_region_from_valid_tensor(struct pto2_region *r, const Tensor *t)
{
	uint64_t stride[PTO2_MAX_TENSOR_DIMS];
	uint64_t first = 0, last = 0, raw = 1;
	uint32_t es = pto_dtype_size(t->dtype);
	bool empty = false;
	int i, j, n = (int)t->ndims;

	for (i = n - 1; i >= 0; i--) {
		stride[i] = raw;
		raw *= t->raw_shapes[i];
		if (t->shapes[i] == 0)
			empty = true;
	}

	/*
	 * Field by field, not memset(): on the submit path a memset of the
	 * whole region (a rep stos) took half of this function's time.
	 */
	r->addr = t->addr;
	r->elem_size = es;
	r->ndims = (uint8_t)n;
	r->contiguous = 0;
	r->pad = 0;
	for (i = 0; i < n; i++) {
		r->raw_shapes[i] = t->raw_shapes[i];
		r->shapes[i] = t->shapes[i];
		r->offsets[i] = t->offsets[i];
		first += t->offsets[i] * stride[i];
		if (!empty)
			last += (t->offsets[i] + t->shapes[i] - 1) * stride[i];
	}
	for (; i < PTO2_MAX_TENSOR_DIMS; i++) {
		r->raw_shapes[i] = 0;
		r->shapes[i] = 0;
		r->offsets[i] = 0;
	}
	if (empty) {
		r->begin = r->end = t->addr + first * es;
		r->contiguous = 1;
		return;
	}
	r->begin = t->addr + first * es;
	r->end = t->addr + (last + 1) * es;
	/* dense iff dims after the first non-1 dim are whole */
	for (i = 0; i < n && t->shapes[i] == 1; i++)
		;
	r->contiguous = 1;
	for (j = i + 1; j < n; j++)
		if (t->shapes[j] != t->raw_shapes[j])
			r->contiguous = 0;
}

static bool same_layout(const struct pto2_region *a, const struct pto2_region *b)
{
	int i;

	if (a->ndims != b->ndims || a->elem_size != b->elem_size)
		return false;
	for (i = 0; i < a->ndims; i++)
		if (a->raw_shapes[i] != b->raw_shapes[i])
			return false;
	return true;
}

enum pto2_overlap pto2_region_overlap(const struct pto2_region *n,
				      const struct pto2_region *o)
{
	bool covered = true;
	int i;

	if (n->addr != o->addr)
		return PTO2_NO_OVERLAP;
	if (n->begin >= n->end || o->begin >= o->end)
		return PTO2_NO_OVERLAP;		/* empty views touch nothing */
	if (n->end <= o->begin || o->end <= n->begin)
		return PTO2_NO_OVERLAP;
	if (same_layout(n, o)) {
		/* exact per-dimension box test */
		for (i = 0; i < n->ndims; i++) {
			uint64_t nb = n->offsets[i], ne = nb + n->shapes[i];
			uint64_t ob = o->offsets[i], oe = ob + o->shapes[i];

			if (ne <= ob || oe <= nb)
				return PTO2_NO_OVERLAP;
			if (!(nb <= ob && oe <= ne))
				covered = false;
		}
		return covered ? PTO2_OVERLAP_COVERED : PTO2_OVERLAP_OTHER;
	}
	/* different layouts (reshaped views): compare byte hulls */
	if (n->contiguous && n->begin <= o->begin && o->end <= n->end)
		return PTO2_OVERLAP_COVERED;
	return PTO2_OVERLAP_OTHER;
}

/* ---- Map ---------------------------------------------------------------- */

static inline uint32_t tm_hash(const struct pto2_tensormap *tm, uint64_t addr)
{
	return (uint32_t)((addr * 0x9E3779B97F4A7C15ULL) >> tm->bucket_shift) &
	       (tm->num_buckets - 1);
}

/* The index chain of (@addr, @granule); the key test still compares addr. */
static inline uint32_t tm_index_hash(const struct pto2_tensormap *tm,
				     uint64_t addr, uint64_t granule)
{
	return tm_hash(tm, addr ^ (granule * 0xC2B2AE3D27D4EB4FULL));
}

/* Granules of the non-empty hull [begin, end): first and last. */
static inline uint64_t tm_g0(const struct pto2_region *r)
{
	return r->begin >> PTO2_TM_GRANULE_SHIFT;
}

static inline uint64_t tm_g1(const struct pto2_region *r)
{
	return (r->end - 1) >> PTO2_TM_GRANULE_SHIFT;
}

/* Non-empty and spanning at most PTO2_TM_INDEX_SPAN granules. */
static inline bool tm_small(const struct pto2_region *r)
{
	return r->begin < r->end &&
	       tm_g1(r) - tm_g0(r) < PTO2_TM_INDEX_SPAN;
}

/*
 * Empty every chain head and task slot. Each one that is not -1 names an
 * entry in use (unlinking the entry a head names moves the head on), and
 * every entry in use lies below next_entry_idx (the bump allocator's mark
 * since the last reset): with few of them against the tables, clearing
 * what those entries name is cheaper than clearing the tables (at the
 * default sizes 576 KB, which a run of a few dozen tasks paid at its
 * start). @whole: the tables themselves (at init nothing is known).
 */
static void reset_heads(struct pto2_tensormap *tm, bool whole)
{
	uint32_t i;
	int c;

	if (whole || tm->next_entry_idx >
		     (tm->num_buckets + tm->window_size) / PTO2_TM_SPARSE_RESET) {
		for (c = 0; c < PTO2_TM_NCHAINS; c++)
			memset(tm->heads[c], 0xff,
			       sizeof(int32_t) * tm->num_buckets);
		memset(tm->task_entry_head, 0xff,
		       sizeof(int32_t) * tm->window_size);
		return;
	}
	for (i = 0; i < tm->next_entry_idx; i++) {
		const struct pto2_tm_entry *e = &tm->pool[i];

		if (!e->in_use)
			continue;
		for (c = 0; c < PTO2_TM_NCHAINS; c++)
			if (e->linked[c])
				tm->heads[c][e->head[c]] = -1;
		tm->task_entry_head[(uint32_t)tm->keys[i].producer &
				    (tm->window_size - 1)] = -1;
	}
}

static void reset_state(struct pto2_tensormap *tm)
{
	tm->short_chain = PTO2_TM_SHORT_CHAIN;
	tm->next_entry_idx = 0;
	tm->free_num = 0;
	tm->last_task_alive = 0;
	tm->last_cleanup = 0;
	tm->next_seq = 0;
	tm->stat_truncated = 0;
	tm->stat_cleaned = 0;
}

void pto2_tensormap_reset(struct pto2_tensormap *tm)
{
	reset_heads(tm, false);
	reset_state(tm);
}

int pto2_tensormap_init(struct pto2_tensormap *tm, uint32_t num_buckets,
			uint32_t pool_size, uint32_t window_size)
{
	uint32_t lg = 0;
	int c;

	memset(tm, 0, sizeof(*tm));
	if (!num_buckets || (num_buckets & (num_buckets - 1)) || !pool_size ||
	    pool_size > INT32_MAX || !window_size ||
	    (window_size & (window_size - 1)))
		return -EINVAL;
	while ((1U << lg) < num_buckets)
		lg++;
	tm->num_buckets = num_buckets;
	tm->bucket_shift = 64 - (lg ? lg : 1);
	tm->pool_size = pool_size;
	tm->window_size = window_size;
	for (c = 0; c < PTO2_TM_NCHAINS; c++)
		tm->heads[c] = malloc(sizeof(*tm->heads[c]) * num_buckets);
	tm->pool = calloc(pool_size, sizeof(*tm->pool));
	tm->keys = calloc(pool_size, sizeof(*tm->keys));
	tm->free_entry_list = malloc(sizeof(int32_t) * pool_size);
	tm->task_entry_head = malloc(sizeof(int32_t) * window_size);
	if (!tm->heads[PTO2_TM_BUF] || !tm->heads[PTO2_TM_IDX] ||
	    !tm->heads[PTO2_TM_OWN] || !tm->pool ||
	    !tm->keys || !tm->free_entry_list || !tm->task_entry_head) {
		pto2_tensormap_destroy(tm);
		return -ENOMEM;
	}
	reset_heads(tm, true);
	reset_state(tm);
	return 0;
}

void pto2_tensormap_destroy(struct pto2_tensormap *tm)
{
	int c;

	for (c = 0; c < PTO2_TM_NCHAINS; c++)
		free(tm->heads[c]);
	free(tm->pool);
	free(tm->keys);
	free(tm->free_entry_list);
	free(tm->task_entry_head);
	memset(tm, 0, sizeof(*tm));
}

/* Put entry @idx at the head of chain @h of kind @c (newest first). */
static void link_chain(struct pto2_tensormap *tm, int32_t idx, int c,
		       uint32_t h)
{
	struct pto2_tm_entry *e = &tm->pool[idx];
	struct pto2_tm_key *k = &tm->keys[idx];

	e->head[c] = h;
	e->prev[c] = -1;
	k->next[c] = tm->heads[c][h];
	if (k->next[c] >= 0)
		tm->pool[k->next[c]].prev[c] = idx;
	tm->heads[c][h] = idx;
	e->linked[c] = true;
}

static void unlink_chain(struct pto2_tensormap *tm, int32_t idx, int c)
{
	struct pto2_tm_entry *e = &tm->pool[idx];
	struct pto2_tm_key *k = &tm->keys[idx];

	if (!e->linked[c])
		return;
	if (e->prev[c] >= 0)
		tm->keys[e->prev[c]].next[c] = k->next[c];
	else
		tm->heads[c][e->head[c]] = k->next[c];
	if (k->next[c] >= 0)
		tm->pool[k->next[c]].prev[c] = e->prev[c];
	e->linked[c] = false;
	k->next[c] = e->prev[c] = -1;
}

static void unlink_task(struct pto2_tensormap *tm, int32_t idx)
{
	struct pto2_tm_entry *e = &tm->pool[idx];

	if (e->prev_in_task >= 0) {
		tm->pool[e->prev_in_task].next_in_task = e->next_in_task;
	} else {
		uint32_t slot = (uint32_t)tm->keys[idx].producer &
				(tm->window_size - 1);

		if (tm->task_entry_head[slot] == idx)
			tm->task_entry_head[slot] = e->next_in_task;
	}
	if (e->next_in_task >= 0)
		tm->pool[e->next_in_task].prev_in_task = e->prev_in_task;
	e->next_in_task = e->prev_in_task = -1;
}

/* Unlink entry @idx from every chain and free it. */
static void drop_entry(struct pto2_tensormap *tm, int32_t idx)
{
	struct pto2_tm_entry *e = &tm->pool[idx];

	unlink_chain(tm, idx, PTO2_TM_BUF);
	unlink_chain(tm, idx, PTO2_TM_IDX);
	unlink_chain(tm, idx, PTO2_TM_OWN);
	unlink_task(tm, idx);
	e->in_use = false;
	tm->free_entry_list[tm->free_num++] = idx;
}

void pto2_tensormap_remove_entry(struct pto2_tensormap *tm, int32_t idx)
{
	if (tm->pool[idx].in_use)
		drop_entry(tm, idx);
}

/*
 * Chain truncation: the buffer's chain is newest-first, so every entry
 * from @off on is stale. Cut the chain at @prev_ptr; the entries stay on
 * their index chain and their task chains until cleanup.
 */
static void truncate_chain(struct pto2_tensormap *tm, int32_t *prev_ptr,
			   int32_t off)
{
	*prev_ptr = -1;
	while (off >= 0) {
		struct pto2_tm_key *s = &tm->keys[off];

		tm->pool[off].linked[PTO2_TM_BUF] = false;
		tm->pool[off].prev[PTO2_TM_BUF] = -1;
		off = s->next[PTO2_TM_BUF];
		s->next[PTO2_TM_BUF] = -1;
		tm->stat_truncated++;
	}
}

/*
 * Append to @res the entries of chain @h of kind @c that overlap @r;
 * -EAGAIN if the chain is longer than @limit entries. The buffer's chain
 * is cut at its first stale entry; an index chain, whose order is not
 * insertion order, skips stale entries (cleanup frees them).
 */
static inline __attribute__((always_inline)) int
walk_chain(struct pto2_tensormap *tm, int c, uint32_t h,
	   const struct pto2_region *r, struct pto2_lookup_result *res,
	   uint32_t limit)
{
	int32_t *prev_ptr = &tm->heads[c][h];
	int32_t off = *prev_ptr;

	for (; off >= 0; prev_ptr = &tm->keys[off].next[c], off = *prev_ptr) {
		struct pto2_tm_key *k = &tm->keys[off];
		enum pto2_overlap st;

		if (!pto2_tensormap_key_valid(tm, k)) {
			if (c == PTO2_TM_IDX)
				continue;
			truncate_chain(tm, prev_ptr, off);
			return 0;
		}
		if (!limit--)
			return -EAGAIN;
		/* the full test only for the same buffer's touching bytes */
		if (k->addr != r->addr || k->begin >= r->end ||
		    r->begin >= k->end)
			continue;
		st = pto2_region_overlap(r, &tm->pool[off].region);
		if (st == PTO2_NO_OVERLAP)
			continue;
		if (res->count >= PTO2_LOOKUP_MAX)
			return -E2BIG;
		res->entry[res->count] = off;
		res->status[res->count] = st;
		res->count++;
	}
	return 0;
}

/* Newest first, as on the buffer's chain (hits are few: insertion sort). */
static void sort_hits(const struct pto2_tensormap *tm,
		      struct pto2_lookup_result *res)
{
	int i, j;

	for (i = 1; i < res->count; i++) {
		int32_t e = res->entry[i];
		enum pto2_overlap st = res->status[i];
		uint64_t seq = tm->pool[e].seq;

		for (j = i; j > 0 && tm->pool[res->entry[j - 1]].seq < seq; j--) {
			res->entry[j] = res->entry[j - 1];
			res->status[j] = res->status[j - 1];
		}
		res->entry[j] = e;
		res->status[j] = st;
	}
}

/*
 * Put on their index chains the entries of buffer chain @b not indexed
 * yet: they are its newest ones (the chain holds them, then indexed
 * entries down to its first stale one), so the walk stops at the first
 * indexed or stale entry. Empty hulls match nothing: no index chain.
 */
static void index_new_entries(struct pto2_tensormap *tm, uint32_t b)
{
	int32_t off = tm->heads[PTO2_TM_BUF][b];

	while (off >= 0) {
		struct pto2_tm_key *k = &tm->keys[off];
		const struct pto2_region *r = &tm->pool[off].region;

		if (k->indexed || !pto2_tensormap_key_valid(tm, k))
			return;
		k->indexed = 1;
		if (r->begin < r->end)
			link_chain(tm, off, PTO2_TM_IDX,
				   tm_index_hash(tm, r->addr,
						 tm_small(r) ? tm_g0(r) :
							       PTO2_TM_WIDE));
		off = k->next[PTO2_TM_BUF];
	}
}

/* Adds @h to the @n chains in @hs unless there (colliding probes). */
static int add_probe(uint32_t *hs, int n, uint32_t h)
{
	int i;

	for (i = 0; i < n; i++)
		if (hs[i] == h)
			return n;
	hs[n] = h;
	return n + 1;
}

/* Lookup of a small view (tm_small) through the index chains. */
static int lookup_index(struct pto2_tensormap *tm, const struct pto2_region *r,
			struct pto2_lookup_result *res)
{
	uint32_t hs[2 * PTO2_TM_INDEX_SPAN];
	uint64_t g, g0 = tm_g0(r), g1 = tm_g1(r);
	int i, n = 0, ret;

	/* entries overlapping r begin at most SPAN - 1 granules before g0 */
	g = g0 >= PTO2_TM_INDEX_SPAN - 1 ? g0 - (PTO2_TM_INDEX_SPAN - 1) : 0;
	for (; g <= g1; g++)
		n = add_probe(hs, n, tm_index_hash(tm, r->addr, g));
	n = add_probe(hs, n, tm_index_hash(tm, r->addr, PTO2_TM_WIDE));
	for (i = 0; i < n; i++) {
		ret = walk_chain(tm, PTO2_TM_IDX, hs[i], r, res, UINT32_MAX);
		if (ret)
			return ret;
	}
	sort_hits(tm, res);
	return 0;
}

int pto2_tensormap_lookup(struct pto2_tensormap *tm, const struct pto2_region *r,
			  struct pto2_lookup_result *res)
{
	uint32_t b = tm_hash(tm, r->addr);
	int ret;

	res->count = 0;
	if (!tm_small(r))
		return walk_chain(tm, PTO2_TM_BUF, b, r, res, UINT32_MAX);
	/* a short chain is walked; a long one left for the index */
	ret = walk_chain(tm, PTO2_TM_BUF, b, r, res, tm->short_chain);
	if (ret != -EAGAIN)
		return ret;
	res->count = 0;
	index_new_entries(tm, b);
	return lookup_index(tm, r, res);
}

static int insert_entry(struct pto2_tensormap *tm, const struct pto2_region *r,
			int32_t producer, bool with_alloc, bool owner)
{
	uint32_t slot = (uint32_t)producer & (tm->window_size - 1);
	struct pto2_tm_entry *e;
	struct pto2_tm_key *k;
	int32_t idx;

	if (tm->free_num)
		idx = tm->free_entry_list[--tm->free_num];
	else if (tm->next_entry_idx < tm->pool_size)
		idx = (int32_t)tm->next_entry_idx++;
	else
		return -ENOSPC;

	e = &tm->pool[idx];
	k = &tm->keys[idx];
	e->region = *r;
	k->addr = r->addr;
	k->begin = r->begin;
	k->end = r->end;
	k->producer = producer;
	k->indexed = 0;		/* index_new_entries() does, when needed */
	e->seq = tm->next_seq++;
	e->with_alloc = with_alloc;
	e->in_use = true;
	link_chain(tm, idx, PTO2_TM_BUF, tm_hash(tm, r->addr));
	e->linked[PTO2_TM_IDX] = false;
	e->linked[PTO2_TM_OWN] = false;
	if (owner)
		link_chain(tm, idx, PTO2_TM_OWN, tm_hash(tm, r->addr));
	/* per-task chain */
	e->prev_in_task = -1;
	e->next_in_task = tm->task_entry_head[slot];
	if (e->next_in_task >= 0)
		tm->pool[e->next_in_task].prev_in_task = idx;
	tm->task_entry_head[slot] = idx;
	return 0;
}

void pto2_tensormap_cleanup_retired(struct pto2_tensormap *tm, int32_t old_la,
				    int32_t new_la)
{
	int32_t id;

	/* a slot holds entries of one task at a time: at most a window */
	if (new_la - old_la > (int32_t)tm->window_size)
		old_la = new_la - (int32_t)tm->window_size;
	for (id = old_la; id < new_la; id++) {
		uint32_t slot = (uint32_t)id & (tm->window_size - 1);
		int32_t off = tm->task_entry_head[slot];

		while (off >= 0) {
			struct pto2_tm_entry *e = &tm->pool[off];
			int32_t next = e->next_in_task;

			if (tm->keys[off].producer >= new_la) {
				/* a newer task's entry: keep (cannot happen
				 * while the orchestrator cleans before reuse) */
				off = next;
				continue;
			}
			drop_entry(tm, off);
			tm->stat_cleaned++;
			off = next;
		}
	}
}

uint32_t pto2_tensormap_sync(struct pto2_tensormap *tm, int32_t last_task_alive,
			     bool force)
{
	uint64_t before = tm->stat_cleaned;

	if (last_task_alive > tm->last_task_alive)
		tm->last_task_alive = last_task_alive;
	if (tm->last_task_alive - tm->last_cleanup >=
		    PTO2_TENSORMAP_CLEANUP_INTERVAL ||
	    (force && tm->last_task_alive > tm->last_cleanup)) {
		pto2_tensormap_cleanup_retired(tm, tm->last_cleanup,
					       tm->last_task_alive);
		tm->last_cleanup = tm->last_task_alive;
	}
	return (uint32_t)(tm->stat_cleaned - before);
}

uint32_t pto2_tensormap_used(const struct pto2_tensormap *tm)
{
	return tm->next_entry_idx - tm->free_num;
}

static uint32_t count_linked(const struct pto2_tensormap *tm, int c)
{
	uint32_t i, n = 0;

	for (i = 0; i < tm->num_buckets; i++) {
		int32_t off = tm->heads[c][i];

		while (off >= 0) {
			n++;
			off = tm->keys[off].next[c];
		}
	}
	return n;
}

uint32_t pto2_tensormap_linked(const struct pto2_tensormap *tm)
{
	return count_linked(tm, PTO2_TM_BUF);
}

uint32_t pto2_tensormap_indexed(const struct pto2_tensormap *tm)
{
	return count_linked(tm, PTO2_TM_IDX);
}

int pto2_tensormap_insert(struct pto2_tensormap *tm, const struct pto2_region *r,
			  int32_t producer, bool with_alloc)
{
	return insert_entry(tm, r, producer, with_alloc, false);
}

int pto2_tensormap_insert_owner(struct pto2_tensormap *tm,
				const struct pto2_region *r, int32_t producer)
{
	return insert_entry(tm, r, producer, true, true);
}

/*
 * The owner chain holds owners only, newest first: a buffer reused after
 * its owner retired finds its new owner first; stale owners are skipped
 * (cleanup unlinks them).
 */
int32_t pto2_tensormap_owner(struct pto2_tensormap *tm, uint64_t addr)
{
	int32_t off = tm->heads[PTO2_TM_OWN][tm_hash(tm, addr)];

	for (; off >= 0; off = tm->keys[off].next[PTO2_TM_OWN]) {
		const struct pto2_tm_key *k = &tm->keys[off];

		if (k->addr == addr && pto2_tensormap_key_valid(tm, k))
			return k->producer;
	}
	return -1;
}

int pto2_tensormap_deps(struct pto2_tensormap *tm, const struct pto2_region *reg,
			const int32_t *types, int n,
			int (*add)(void *ctx, int32_t producer), void *ctx,
			int *bad)
{
	struct pto2_lookup_result lr;
	int i, k, ret;

	for (i = 0; i < n; i++) {
		int32_t t = types[i] & ~PTO2_TM_OWNER_EDGE;

		if (types[i] & PTO2_TM_OWNER_EDGE) {
			int32_t owner = pto2_tensormap_owner(tm, reg[i].addr);

			ret = owner >= 0 ? add(ctx, owner) : 0;
			if (ret < 0)
				return ret;
		}
		if (t != PTO_PARAM_INPUT && t != PTO_PARAM_INOUT)
			continue;
		if (pto2_tensormap_lookup(tm, &reg[i], &lr)) {
			*bad = i;
			return -E2BIG;
		}
		for (k = 0; k < lr.count; k++) {
			struct pto2_tm_entry *e = &tm->pool[lr.entry[k]];

			ret = add(ctx, tm->keys[lr.entry[k]].producer);
			if (ret < 0)
				return ret;
			if (t == PTO_PARAM_INOUT &&
			    lr.status[k] == PTO2_OVERLAP_COVERED &&
			    !e->with_alloc)
				pto2_tensormap_remove_entry(tm, lr.entry[k]);
		}
	}
	return 0;
}
