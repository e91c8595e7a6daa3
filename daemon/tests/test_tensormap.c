// SPDX-License-Identifier: MIT
/*
 * test_tensormap.c - TensorMap: overlap classes, lookup order, chain
 * truncation, cleanup_retired, pool exhaustion; the granule index against
 * a brute-force model
 */
#include <errno.h>
#include <string.h>

#include <pto-private/params.h>
#include <pto-private/tensormap.h>
#include "tap.h"
#include "test_rng.h"

#define BASE 0x100000000ULL

static Tensor t2d(uint64_t addr, uint64_t r, uint64_t c)
{
	uint64_t s[2] = { r, c };

	return make_tensor_external((void *)(uintptr_t)addr, s, 2, PTO_DT_FP32);
}

static Tensor view2(const Tensor *t, uint64_t r0, uint64_t nr, uint64_t c0,
		    uint64_t nc)
{
	uint64_t s[2] = { nr, nc }, o[2] = { r0, c0 };

	return pto_tensor_view(t, s, o);
}

static struct pto2_region R(const Tensor *t)
{
	struct pto2_region r;

	if (pto2_region_from_tensor(&r, t))
		memset(&r, 0, sizeof(r));
	return r;
}

static enum pto2_overlap ov(Tensor n, Tensor o)
{
	struct pto2_region rn = R(&n), ro = R(&o);

	return pto2_region_overlap(&rn, &ro);
}

/* One dim of @n fp32 elements (or two of @n each), claiming all memory. */
static Tensor huge(uint64_t n, uint32_t ndims)
{
	uint64_t s[2] = { n, n };
	Tensor t = make_tensor_external((void *)(uintptr_t)BASE, s, ndims,
					PTO_DT_FP32);

	t.size = UINT64_MAX;
	return t;
}

/* Buffer sizes that do not fit in 64 bits are malformed, not wrapped. */
static void test_size_overflow(void)
{
	Tensor t = huge(1ULL << 32, 2);
	struct pto2_region r;

	ok(pto_tensor_check(&t) == -EINVAL &&
	   pto2_region_from_tensor(&r, &t) == -EINVAL,
	   "2^32 x 2^32 elements (2^64) rejected");
	t = huge(1ULL << 62, 1);
	ok(pto_tensor_check(&t) == -EINVAL,
	   "2^62 fp32 elements (2^64 bytes) rejected");
	t = huge(UINT64_MAX / 4, 1);
	ok(pto_tensor_check(&t) == 0,
	   "UINT64_MAX / 4 fp32 elements (2^64 - 4 bytes) accepted");
	t.raw_shapes[0] = t.shapes[0] = UINT64_MAX / 4 + 1;
	ok(pto_tensor_check(&t) == -EINVAL,
	   "UINT64_MAX / 4 + 1 fp32 elements rejected");
}

static void test_regions(void)
{
	Tensor a = t2d(BASE, 4, 8), b = t2d(BASE + 4096, 4, 8);
	Tensor top = view2(&a, 0, 2, 0, 8), bot = view2(&a, 2, 2, 0, 8);
	Tensor left = view2(&a, 0, 4, 0, 4), mid = view2(&a, 1, 2, 2, 4);
	Tensor row1 = view2(&a, 1, 1, 0, 8);
	struct pto2_region ra = R(&a), rb = R(&b), rtop = R(&top),
			   rbot = R(&bot), rleft = R(&left), rmid = R(&mid);
	struct pto2_region r;
	Tensor bad;
	uint64_t s1[1] = { 32 };
	Tensor flat = make_tensor_external((void *)(uintptr_t)BASE, s1, 1,
					   PTO_DT_FP32);
	uint64_t fs[1] = { 8 }, fo[1] = { 8 };
	Tensor flatrow = pto_tensor_view(&flat, fs, fo);

	ok(ra.begin == BASE && ra.end == BASE + 128 && ra.contiguous,
	   "region of a whole 4x8 fp32 tensor is [base, base+128)");
	ok(rtop.contiguous && rtop.end == BASE + 64, "top half is contiguous");
	ok(!rleft.contiguous && rleft.begin == BASE &&
	   rleft.end == BASE + (3 * 8 + 4) * 4,
	   "left half is strided, hull begin/end right");
	ok(R(&row1).contiguous, "one full row is contiguous");
	ok(pto2_region_overlap(&ra, &rb) == PTO2_NO_OVERLAP,
	   "different buffers: no overlap");
	ok(pto2_region_overlap(&rtop, &rbot) == PTO2_NO_OVERLAP,
	   "disjoint rows: no overlap");
	ok(pto2_region_overlap(&ra, &rtop) == PTO2_OVERLAP_COVERED,
	   "whole covers top half: COVERED");
	ok(pto2_region_overlap(&rtop, &ra) == PTO2_OVERLAP_OTHER,
	   "top half vs whole: OTHER");
	ok(pto2_region_overlap(&rtop, &rtop) == PTO2_OVERLAP_COVERED,
	   "exact same view: COVERED");
	ok(pto2_region_overlap(&rleft, &rmid) == PTO2_OVERLAP_OTHER,
	   "left half vs middle box: OTHER (partial)");
	ok(ov(left, view2(&a, 1, 2, 0, 2)) == PTO2_OVERLAP_COVERED, "2-D box containment: COVERED");
	ok(ov(view2(&a, 0, 4, 4, 4), left) == PTO2_NO_OVERLAP,
	   "right half vs left half: no overlap although hulls intersect");
	ok(ov(flatrow, row1) == PTO2_OVERLAP_COVERED,
	   "reshaped 1-D view of the same bytes: COVERED (byte hulls)");
	ok(ov(row1, left) == PTO2_OVERLAP_OTHER,
	   "row vs left half: OTHER");

	bad = view2(&a, 3, 2, 0, 8);
	ok(pto2_region_from_tensor(&r, &bad) == -EINVAL,
	   "view past the end is rejected");
	bad = a;
	bad.dtype = 99;
	ok(pto2_region_from_tensor(&r, &bad) == -EINVAL, "bad dtype rejected");
	bad = a;
	bad.ndims = 6;
	ok(pto2_region_from_tensor(&r, &bad) == -EINVAL, "6 dims rejected");
	test_size_overflow();
}

static void test_lookup_insert(void)
{
	struct pto2_tensormap tm;
	struct pto2_lookup_result lr;
	Tensor a = t2d(BASE, 4, 8), top = view2(&a, 0, 2, 0, 8),
	       bot = view2(&a, 2, 2, 0, 8), other = t2d(BASE + 65536, 4, 8);
	struct pto2_region ra = R(&a), rtop = R(&top), rbot = R(&bot),
			   ro = R(&other);

	ok(pto2_tensormap_init(&tm, 1, 64, 16) == 0,
	   "init with 1 bucket (all keys collide)");
	pto2_tensormap_insert(&tm, &ra, 1, true);
	pto2_tensormap_insert(&tm, &ro, 2, true);
	pto2_tensormap_insert(&tm, &rtop, 3, false);
	pto2_tensormap_insert(&tm, &rbot, 4, false);

	pto2_tensormap_lookup(&tm, &rtop, &lr);
	ok(lr.count == 2 && pto2_tensormap_producer(&tm, lr.entry[0]) == 3 &&
	   lr.status[0] == PTO2_OVERLAP_COVERED &&
	   pto2_tensormap_producer(&tm, lr.entry[1]) == 1 &&
	   lr.status[1] == PTO2_OVERLAP_OTHER,
	   "lookup(top): newest first: 3 COVERED, then 1 OTHER; skips bot and other buffer");
	pto2_tensormap_lookup(&tm, &ra, &lr);
	ok(lr.count == 3 && pto2_tensormap_producer(&tm, lr.entry[0]) == 4 &&
	   pto2_tensormap_producer(&tm, lr.entry[1]) == 3 &&
	   pto2_tensormap_producer(&tm, lr.entry[2]) == 1,
	   "lookup(whole): 4, 3, 1");
	pto2_tensormap_lookup(&tm, &ro, &lr);
	ok(lr.count == 1 && pto2_tensormap_producer(&tm, lr.entry[0]) == 2,
	   "colliding key of another buffer found only by its own lookup");

	/* chain truncation: threshold 3 makes tasks 1 and 2 stale */
	pto2_tensormap_sync(&tm, 3, false);
	ok(tm.last_cleanup == 0, "sync below the interval does not clean up");
	pto2_tensormap_lookup(&tm, &ra, &lr);
	ok(lr.count == 2 && tm.stat_truncated == 2 &&
	   pto2_tensormap_linked(&tm) == 2 && pto2_tensormap_used(&tm) == 4,
	   "lookup truncates the stale tail (2 entries unlinked, still allocated)");
	pto2_tensormap_sync(&tm, 3, true);
	ok(pto2_tensormap_used(&tm) == 2 && tm.free_num == 2,
	   "forced sync frees the truncated entries to the free list");
	pto2_tensormap_remove_entry(&tm, lr.entry[0]);
	pto2_tensormap_lookup(&tm, &ra, &lr);
	ok(lr.count == 1 && pto2_tensormap_producer(&tm, lr.entry[0]) == 3,
	   "remove_entry unlinks from bucket and task chains");
	pto2_tensormap_destroy(&tm);
}

static void test_cleanup(void)
{
	struct pto2_tensormap tm;
	struct pto2_lookup_result lr;
	struct pto2_region r[200];
	Tensor t;
	int i, ok1 = 1;

	pto2_tensormap_init(&tm, 256, 1024, 16);
	for (i = 0; i < 200; i++) {
		t = t2d(BASE + (uint64_t)i * 4096, 2, 2);
		r[i] = R(&t);
		/* window 16: slots are shared by tasks i, i+16, ... */
		if (pto2_tensormap_insert(&tm, &r[i], i, true))
			ok1 = 0;
		if (i >= 16)
			pto2_tensormap_sync(&tm, i - 15, false);
	}
	ok(ok1, "200 inserts with periodic sync");
	ok(tm.last_cleanup == 128 && pto2_tensormap_used(&tm) == 200 - 128,
	   "cleanup_retired ran every 64 retired tasks (last at 128, %u used)",
	   pto2_tensormap_used(&tm));
	pto2_tensormap_lookup(&tm, &r[190], &lr);
	ok(lr.count == 1 && pto2_tensormap_producer(&tm, lr.entry[0]) == 190,
	   "live entry survives cleanup of its slot's older tasks");
	pto2_tensormap_sync(&tm, 200, true);
	ok(pto2_tensormap_used(&tm) == 0 && pto2_tensormap_linked(&tm) == 0,
	   "forced sync at the end frees everything");
	pto2_tensormap_destroy(&tm);
}

static void test_pool_exhaustion(void)
{
	struct pto2_tensormap tm;
	struct pto2_region r;
	Tensor t;
	int i, fails = 0;

	pto2_tensormap_init(&tm, 16, 16, 16);
	for (i = 0; i < 16; i++) {
		t = t2d(BASE + (uint64_t)i * 4096, 2, 2);
		r = R(&t);
		fails += pto2_tensormap_insert(&tm, &r, i, true) != 0;
	}
	ok(!fails && pto2_tensormap_pool_empty(&tm), "pool of 16 filled");
	ok(pto2_tensormap_insert(&tm, &r, 16, true) == -ENOSPC,
	   "17th insert: -ENOSPC (caller applies back-pressure)");
	ok(pto2_tensormap_sync(&tm, 4, false) == 0,
	   "non-forced sync below the interval frees nothing");
	ok(pto2_tensormap_sync(&tm, 4, true) == 4, "forced sync frees 4 entries");
	ok(pto2_tensormap_insert(&tm, &r, 16, true) == 0,
	   "insert succeeds from the free list");
	pto2_tensormap_destroy(&tm);
}

/* ---- The granule index ---------------------------------------------------- */

#define GR (1ULL << PTO2_TM_GRANULE_SHIFT)
#define SPAN PTO2_TM_INDEX_SPAN

/* Every chain: its entries are in use, linked, and their prev links and
 * heads mirror the next links; none is on a chain twice. */
static int chains_consistent(const struct pto2_tensormap *tm)
{
	uint32_t h, n, total;
	int c;

	for (c = 0; c < PTO2_TM_NCHAINS; c++) {
		for (h = 0, total = 0; h < tm->num_buckets; h++) {
			int32_t prev = -1, off = tm->heads[c][h];

			for (n = 0; off >= 0; n++) {
				const struct pto2_tm_entry *e = &tm->pool[off];

				if (!e->in_use || !e->linked[c] ||
				    e->prev[c] != prev || e->head[c] != h)
					return 0;
				prev = off;
				off = tm->keys[off].next[c];
			}
			total += n;
		}
		for (n = 0; n < tm->next_entry_idx; n++)
			total -= tm->pool[n].linked[c];
		if (total)
			return 0;
	}
	return 1;
}

/* A 1-D fp32 buffer of @n elements at @addr and its view [@o, @o + @len). */
static struct pto2_region span1(uint64_t addr, uint64_t n, uint64_t o,
				uint64_t len)
{
	uint64_t s[1] = { n }, vs[1] = { len }, vo[1] = { o };
	Tensor t = make_tensor_external((void *)(uintptr_t)addr, s, 1,
					PTO_DT_FP32);
	Tensor v = pto_tensor_view(&t, vs, vo);

	return R(&v);
}

static int32_t producer_at(struct pto2_tensormap *tm,
			   const struct pto2_region *r, int i)
{
	struct pto2_lookup_result lr;

	if (pto2_tensormap_lookup(tm, r, &lr) || i >= lr.count)
		return -1;
	return pto2_tensormap_producer(tm, lr.entry[i]);
}

static int hits(struct pto2_tensormap *tm, const struct pto2_region *r)
{
	struct pto2_lookup_result lr;

	return pto2_tensormap_lookup(tm, r, &lr) ? -1 : lr.count;
}

/* Insert @r[i] as written by task i + 1 (OUTPUT). */
static void insert_seq(struct pto2_tensormap *tm,
		       const struct pto2_region *const *r, int n)
{
	int i;

	for (i = 0; i < n; i++)
		pto2_tensormap_insert(tm, r[i], i + 1, true);
}

/* Lookback, WIDE chain, order across chains; index forced (short_chain 0). */
static void test_index_probes(void)
{
	const uint64_t n = 64 * GR / 4, a = BASE;
	struct pto2_tensormap tm;
	/* begins in granule 8, ends in granule 8 + SPAN - 1 */
	struct pto2_region straddle = span1(a, n, (8 * GR + GR / 2) / 4,
					    ((SPAN - 1) * GR) / 4);
	struct pto2_region whole = span1(a, n, 0, n);
	struct pto2_region wide = span1(a, n, 40 * GR / 4, (SPAN + 1) * GR / 4);
	struct pto2_region last = span1(a, n, (8 + SPAN - 1) * GR / 4 + 2, 1);
	struct pto2_region tile8 = span1(a, n, (8 * GR + GR / 2) / 4 + 1, 2);
	struct pto2_region far = span1(a, n, 30 * GR / 4, 4);
	struct pto2_region other = span1(a + 64 * GR, n, 8 * GR / 4, 4);

	pto2_tensormap_init(&tm, 64, 64, 64);
	tm.short_chain = 0;
	insert_seq(&tm, (const struct pto2_region *[]){ &whole, &straddle,
							&far, &other, &wide },
		   5);
	ok(pto2_tensormap_indexed(&tm) == 0 && hits(&tm, &far) == 2 &&
	   pto2_tensormap_indexed(&tm) == 4 && chains_consistent(&tm),
	   "a buffer's entries join the index at the first lookup of the buffer that uses it (4 of 5: not the other buffer's); chain links agree");
	ok(hits(&tm, &last) == 2 && producer_at(&tm, &last, 0) == 2 &&
	   producer_at(&tm, &last, 1) == 1,
	   "a tile in the last granule of a %d-granule entry finds it (lookback) and the whole buffer (WIDE), newest first",
	   SPAN);
	ok(hits(&tm, &tile8) == 2 && producer_at(&tm, &tile8, 0) == 2,
	   "a tile in the entry's first granule finds it");
	ok(hits(&tm, &far) == 2 && producer_at(&tm, &far, 0) == 3 &&
	   producer_at(&tm, &far, 1) == 1,
	   "far tile: itself and the WIDE whole buffer, not the straddling entry");
	pto2_tensormap_insert(&tm, &tile8, 6, true);
	ok(hits(&tm, &last) == 2 && hits(&tm, &tile8) == 3 &&
	   producer_at(&tm, &tile8, 0) == 6 &&
	   producer_at(&tm, &tile8, 1) == 2 &&
	   producer_at(&tm, &tile8, 2) == 1,
	   "hits of three chains come newest first (6, 2, 1)");
	pto2_tensormap_remove_entry(&tm, 1);	/* straddle: the 2nd insert */
	ok(hits(&tm, &last) == 1 && pto2_tensormap_indexed(&tm) == 4 &&
	   pto2_tensormap_linked(&tm) == 5 && chains_consistent(&tm),
	   "remove_entry unlinks from both chains");
	pto2_tensormap_destroy(&tm);
}

/* Address 0 and 2^64: granule 0 lookback, hulls wrapped past 2^64. */
static void test_index_edges(void)
{
	const uint64_t n = 4 * GR / 4, top = 0 - 4 * GR, wrap = 0 - GR;
	struct pto2_tensormap tm;
	struct pto2_region z0 = span1(0, n, GR / 4 - 1, 1);
	struct pto2_region z1 = span1(0, n, GR / 4 - 1, 2);	/* straddles */
	struct pto2_region zt = span1(0, n, GR / 4, 1);
	struct pto2_region t_end = span1(top, n, n - 2, 2);	/* end 2^64 */
	struct pto2_region t_in = span1(top, n, n - GR / 8, 4);
	struct pto2_region w_across = span1(wrap, n, GR / 4 - 2, 4);
	struct pto2_region w_low = span1(wrap, n, GR / 4 + 8, 4);
	struct pto2_region w_all = span1(wrap, n, 0, n);
	struct pto2_region empty = span1(0, n, 5, 0);

	ok(t_end.end == 0 && t_end.begin > t_end.end &&
	   w_across.begin > w_across.end && w_low.begin < w_low.end &&
	   w_low.end < GR, "hulls: one ending at 2^64 (end 0), one wrapped, one past 2^64");
	pto2_tensormap_init(&tm, 1024, 64, 64);
	tm.short_chain = 0;
	insert_seq(&tm, (const struct pto2_region *[]){ &z1, &t_end, &t_in,
							&w_across, &w_low,
							&empty },
		   6);
	ok(hits(&tm, &z0) == 1 && hits(&tm, &zt) == 1 &&
	   producer_at(&tm, &zt, 0) == 1,
	   "address 0: a tile of granule 0 and one of granule 1 find the straddling tile");
	ok(hits(&tm, &t_in) == 1 && hits(&tm, &t_end) == 0,
	   "top granule: a tile is found; the view ending at 2^64 touches nothing (as its hull is empty)");
	ok(hits(&tm, &w_low) == 1 && hits(&tm, &w_across) == 0 &&
	   hits(&tm, &w_all) == 0 && hits(&tm, &empty) == 0,
	   "past 2^64: the low tile is found; wrapped and empty views touch nothing");
	ok(pto2_tensormap_linked(&tm) == 6 && pto2_tensormap_indexed(&tm) == 3 &&
	   chains_consistent(&tm),
	   "empty and wrapped hulls are on no index chain; chains consistent");
	pto2_tensormap_destroy(&tm);
}

/* Reshaped views and colliding keys of different buffers (1 bucket). */
static void test_index_layouts(void)
{
	struct pto2_tensormap tm;
	Tensor a = t2d(BASE, 64, 256), b = t2d(BASE + GR, 64, 256);
	Tensor row = view2(&a, 3, 1, 0, 256), brow = view2(&b, 3, 1, 0, 256);
	uint64_t s1[1] = { 64 * 256 }, fs[1] = { 128 }, fo[1] = { 3 * 256 };
	Tensor flat = make_tensor_external((void *)(uintptr_t)BASE, s1, 1,
					   PTO_DT_FP32);
	Tensor half = pto_tensor_view(&flat, fs, fo);
	struct pto2_region rrow = R(&row), rb = R(&brow), rhalf = R(&half);
	struct pto2_lookup_result lr;

	pto2_tensormap_init(&tm, 1, 64, 64);
	tm.short_chain = 0;
	pto2_tensormap_insert(&tm, &rhalf, 1, false);
	pto2_tensormap_insert(&tm, &rb, 2, true);
	pto2_tensormap_lookup(&tm, &rrow, &lr);
	ok(lr.count == 1 && lr.status[0] == PTO2_OVERLAP_COVERED &&
	   pto2_tensormap_producer(&tm, lr.entry[0]) == 1,
	   "a 2-D row covers a reshaped 1-D half row (byte hulls); one bucket: the other buffer's bytes at the same offsets are not reported, no probe walks a chain twice");
	pto2_tensormap_insert(&tm, &rrow, 3, true);
	pto2_tensormap_lookup(&tm, &rhalf, &lr);
	ok(lr.count == 2 && lr.status[0] == PTO2_OVERLAP_OTHER &&
	   pto2_tensormap_producer(&tm, lr.entry[0]) == 3 &&
	   lr.status[1] == PTO2_OVERLAP_COVERED,
	   "the half row finds the row (OTHER), then itself (COVERED)");
	pto2_tensormap_destroy(&tm);
}

/* ---- Randomized: the TensorMap against a brute-force model ---------------- */

#define RND_POOL	96
#define RND_STEPS	6000
#define RND_NLAYOUTS	8

struct model_ent {
	struct pto2_region r;
	int32_t producer;
	uint64_t seq;
	bool with_alloc;
	bool gone;		/* removed or cleaned */
};

struct model {
	struct model_ent e[RND_STEPS];
	int n;
	uint64_t seq;
	int32_t la, last_cleanup;
	uint32_t used;
	int lookups, removed, nospc;	/* what a run exercised */
	uint64_t truncated;
};

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	return test_rng_next(&rnd_state);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* A few buffers: tiles of one big tensor, reshaped views of it, wide
 * strided tiles, buffers at 0, ending at 2^64 and wrapping past it. */
static Tensor rnd_layout(int i)
{
	static const struct {
		uint64_t addr;
		uint32_t ndims, dtype;
		uint64_t s[3];
	} l[RND_NLAYOUTS] = {
		{ BASE, 2, PTO_DT_INT64, { 256, 8 } },		/* slots */
		{ BASE, 1, PTO_DT_INT64, { 2048 } },		/* reshaped */
		{ BASE, 3, PTO_DT_FP32, { 16, 32, 8 } },	/* reshaped */
		{ BASE + 0x100000, 2, PTO_DT_FP32, { 64, 512 } },
		{ 0, 2, PTO_DT_FP32, { 32, 64 } },
		{ 0x40, 1, PTO_DT_FP16, { 8192 } },
		{ 0 - 3 * GR, 2, PTO_DT_FP32, { 3, GR / 4 } },
		{ 0 - GR - 64, 1, PTO_DT_FP32, { 2 * GR / 4 } },
	};

	return make_tensor_external((void *)(uintptr_t)l[i].addr,
				    l[i].s, l[i].ndims, (DataType)l[i].dtype);
}

/* A random view: a tiny tile, a row range, the whole buffer, an empty or
 * an arbitrary box. */
static struct pto2_region rnd_view(void)
{
	Tensor t = rnd_layout((int)rnd_below(RND_NLAYOUTS)), v;
	uint64_t s[PTO2_MAX_TENSOR_DIMS], o[PTO2_MAX_TENSOR_DIMS];
	uint32_t i, kind = (uint32_t)rnd_below(8);

	for (i = 0; i < t.ndims; i++) {
		uint64_t raw = t.raw_shapes[i];

		if (kind == 0) {		/* whole */
			o[i] = 0;
			s[i] = raw;
		} else if (kind <= 3) {		/* tiny */
			s[i] = i + 1 < t.ndims ? 1 : 1 + rnd_below(raw < 8 ? raw : 8);
			o[i] = rnd_below(raw - s[i] + 1);
		} else {			/* any box */
			o[i] = rnd_below(raw);
			s[i] = 1 + rnd_below(raw - o[i]);
		}
	}
	if (kind == 7)
		s[rnd_below(t.ndims)] = 0;	/* empty */
	v = pto_tensor_view(&t, s, o);
	return R(&v);
}

static uint32_t model_sync(struct model *m, int32_t la, bool force)
{
	uint32_t freed = 0;
	int i;

	if (la > m->la)
		m->la = la;
	if (m->la - m->last_cleanup < PTO2_TENSORMAP_CLEANUP_INTERVAL &&
	    !(force && m->la > m->last_cleanup))
		return 0;
	for (i = 0; i < m->n; i++) {
		if (!m->e[i].gone && m->e[i].producer < m->la) {
			m->e[i].gone = true;
			freed++;
		}
	}
	m->last_cleanup = m->la;
	m->used -= freed;
	return freed;
}

/* Compare one lookup, in order: producer, status, insertion. */
static int check_lookup(struct pto2_tensormap *tm, struct model *m,
			const struct pto2_region *r,
			struct pto2_lookup_result *lr, int *hit)
{
	int i, n = 0;

	if (pto2_tensormap_lookup(tm, r, lr))
		return 0;
	for (i = m->n - 1; i >= 0; i--) {
		const struct model_ent *e = &m->e[i];
		enum pto2_overlap st;

		if (e->gone || e->producer < m->la)
			continue;
		st = pto2_region_overlap(r, &e->r);
		if (st == PTO2_NO_OVERLAP)
			continue;
		if (n >= lr->count || lr->status[n] != st ||
		    tm->pool[lr->entry[n]].seq != e->seq ||
		    pto2_tensormap_producer(tm, lr->entry[n]) != e->producer)
			return 0;
		hit[n++] = i;
	}
	return n == lr->count;
}

static int model_insert(struct pto2_tensormap *tm, struct model *m,
			const struct pto2_region *r, int32_t producer,
			bool with_alloc)
{
	int ret = pto2_tensormap_insert(tm, r, producer, with_alloc);

	if (ret == -ENOSPC) {
		if (m->used != RND_POOL)
			return 0;
		m->nospc++;
		model_sync(m, m->la, true);
		pto2_tensormap_sync(tm, m->la, true);
		ret = pto2_tensormap_insert(tm, r, producer, with_alloc);
		if (ret == -ENOSPC)
			return m->used == RND_POOL;	/* all live: dropped */
	}
	if (ret || m->used == RND_POOL)
		return 0;
	m->e[m->n++] = (struct model_ent){ *r, producer, m->seq++,
					   with_alloc, false };
	m->used++;
	return 1;
}

/* INOUT: the lookup, drop covered non-allocating writes, then insert. */
static int model_inout(struct pto2_tensormap *tm, struct model *m,
		       const struct pto2_region *r, int32_t producer)
{
	static struct pto2_lookup_result lr;
	int i, hit[PTO2_LOOKUP_MAX];

	if (!check_lookup(tm, m, r, &lr, hit))
		return 0;
	for (i = 0; i < lr.count; i++) {
		struct model_ent *e = &m->e[hit[i]];

		if (lr.status[i] != PTO2_OVERLAP_COVERED || e->with_alloc)
			continue;
		pto2_tensormap_remove_entry(tm, lr.entry[i]);
		e->gone = true;
		m->used--;
		m->removed++;
	}
	return model_insert(tm, m, r, producer, false);
}

/* One run of RND_STEPS steps on @m; returns the step that failed, or -1. */
static int rnd_run(struct model *m, uint64_t seed, uint32_t buckets,
		   uint32_t short_chain)
{
	static struct pto2_lookup_result lr;
	struct pto2_tensormap tm;
	int hit[PTO2_LOOKUP_MAX], step, good = 1;
	int32_t producer = 0;

	memset(m, 0, sizeof(*m));
	rnd_state = seed;
	pto2_tensormap_init(&tm, buckets, RND_POOL, 128);
	tm.short_chain = short_chain;
	for (step = 0; step < RND_STEPS && good; step++) {
		struct pto2_region r = rnd_view();
		uint32_t op = (uint32_t)rnd_below(16);

		if (rnd_below(3))
			producer++;	/* else one more write of this task */
		if (op < 6) {
			good = check_lookup(&tm, m, &r, &lr, hit);
			m->lookups++;
		} else if (op < 10) {
			good = model_insert(&tm, m, &r, producer, true);
		} else if (op < 14) {
			good = model_inout(&tm, m, &r, producer);
			m->lookups++;
		} else {
			/* retire, at most a window (128) behind; every
			 * other 1000 steps far behind: the pool runs out */
			int32_t lag = (step / 1000) % 2 ? 96 : 0;
			int32_t la = producer - lag - (int32_t)rnd_below(32);
			bool force = rnd_below(2);

			good = pto2_tensormap_sync(&tm, la, force) ==
			       model_sync(m, la, force);
		}
		if (good)
			good = pto2_tensormap_used(&tm) == m->used &&
			       chains_consistent(&tm);
	}
	m->truncated = tm.stat_truncated;
	pto2_tensormap_destroy(&tm);
	return good ? -1 : step - 1;
}

static void test_index_random(void)
{
	static const struct {
		uint32_t buckets, short_chain;
	} cfg[] = { { 64, 0 }, { 4, 0 }, { 1, 0 }, { 64, PTO2_TM_SHORT_CHAIN } };
	static struct model m;
	uint64_t seed;
	size_t c;

	for (c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		for (seed = 1; seed <= 3; seed++) {
			int bad = rnd_run(&m, seed * 0x9E3779B97F4A7C15ULL,
					  cfg[c].buckets, cfg[c].short_chain);

			ok(bad < 0,
			   "random run (seed %llu, %u buckets, short_chain %u) agrees with the model: %d lookups, %d removals, %d pool exhaustions, %llu links truncated",
			   (unsigned long long)seed, cfg[c].buckets,
			   cfg[c].short_chain, m.lookups, m.removed, m.nospc,
			   (unsigned long long)m.truncated);
			if (bad >= 0)
				tap_diag("first disagreement at step %d", bad);
		}
	}
}

/* Every chain head and task slot is empty. */
static bool tables_empty(const struct pto2_tensormap *tm)
{
	uint32_t i;
	int c;

	for (c = 0; c < PTO2_TM_NCHAINS; c++)
		for (i = 0; i < tm->num_buckets; i++)
			if (tm->heads[c][i] != -1)
				return false;
	for (i = 0; i < tm->window_size; i++)
		if (tm->task_entry_head[i] != -1)
			return false;
	return true;
}

/*
 * A reset empties every chain head and task slot, whether it clears the
 * tables (64 buckets: 48 entries are too many for the sparse way) or only
 * what the entries in use name (4096 buckets), indexed entries included;
 * the map works afterwards.
 */
static void test_reset(void)
{
	static const uint32_t buckets[] = { 4096, 64 };
	static struct pto2_lookup_result lr;
	static struct model m;
	int hit[PTO2_LOOKUP_MAX];
	size_t c;

	for (c = 0; c < sizeof(buckets) / sizeof(buckets[0]); c++) {
		struct pto2_tensormap tm;
		uint32_t entries, indexed;
		int32_t producer = 0;
		int good = 1;

		memset(&m, 0, sizeof(m));
		rnd_state = 0x5eed + c;
		pto2_tensormap_init(&tm, buckets[c], RND_POOL, 128);
		tm.short_chain = 0;
		while (good && tm.next_entry_idx < 48) {
			struct pto2_region r = rnd_view();

			good = model_insert(&tm, &m, &r, ++producer, true) &&
			       check_lookup(&tm, &m, &r, &lr, hit);
		}
		entries = tm.next_entry_idx;
		indexed = pto2_tensormap_indexed(&tm);
		pto2_tensormap_reset(&tm);
		ok(good && indexed && tables_empty(&tm) &&
		   pto2_tensormap_used(&tm) == 0,
		   "reset with %u buckets after %u entries (%u indexed): every chain head and task slot empty",
		   buckets[c], entries, indexed);
		memset(&m, 0, sizeof(m));
		for (producer = 1; good && producer <= 16; producer++) {
			struct pto2_region r = rnd_view();

			good = model_insert(&tm, &m, &r, producer, true) &&
			       check_lookup(&tm, &m, &r, &lr, hit) &&
			       chains_consistent(&tm);
		}
		ok(good, "after the reset, 16 inserts and lookups agree with the model (%u buckets)",
		   buckets[c]);
		pto2_tensormap_destroy(&tm);
	}
}

/*
 * pto2_tensormap_owner(): one bucket, so every buffer shares the chains;
 * the owner is found behind later writes, per buffer, not once retired,
 * and a buffer address made again finds its new owner.
 */
static void test_owner(void)
{
	struct pto2_tensormap tm;
	Tensor a = t2d(BASE, 4, 4), b = t2d(BASE + 4096, 4, 4);
	struct pto2_region ra = R(&a), rb = R(&b), part;
	Tensor pa = view2(&a, 1, 1, 0, 4);
	int i, good = 1;

	part = R(&pa);
	pto2_tensormap_init(&tm, 1, 64, 16);
	good &= !pto2_tensormap_insert_owner(&tm, &part, 1);
	for (i = 2; i < 12; i++)
		good &= !pto2_tensormap_insert(&tm, i % 2 ? &ra : &part, i,
					       i % 3);
	good &= !pto2_tensormap_insert_owner(&tm, &rb, 12);
	ok(good && pto2_tensormap_owner(&tm, ra.addr) == 1 &&
	   pto2_tensormap_owner(&tm, rb.addr) == 12 &&
	   pto2_tensormap_owner(&tm, BASE + 8192) == -1,
	   "the owner of a buffer behind 10 later writes, of a colliding buffer, of none (%d, %d)",
	   pto2_tensormap_owner(&tm, ra.addr),
	   pto2_tensormap_owner(&tm, rb.addr));
	/* retired, not cleaned up yet: still on the chain */
	pto2_tensormap_sync(&tm, 2, false);
	ok(pto2_tensormap_owner(&tm, ra.addr) == -1 &&
	   pto2_tensormap_owner(&tm, rb.addr) == 12,
	   "a retired owner is not found; the other buffer's still is");
	good = !pto2_tensormap_insert_owner(&tm, &ra, 13);
	ok(good && pto2_tensormap_owner(&tm, ra.addr) == 13,
	   "the buffer made again: its new owner");
	pto2_tensormap_destroy(&tm);
}

int main(void)
{
	test_regions();
	test_owner();
	test_lookup_insert();
	test_cleanup();
	test_pool_exhaustion();
	test_index_probes();
	test_index_edges();
	test_index_layouts();
	test_index_random();
	test_reset();
	return tap_done();
}
