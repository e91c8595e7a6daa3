// SPDX-License-Identifier: MIT
/*
 * test_tensormap.c - TensorMap: overlap classes, lookup order, chain
 * truncation, cleanup_retired, pool exhaustion
 */
#include <errno.h>
#include <string.h>

#include <pto-private/params.h>
#include <pto-private/tensormap.h>
#include "tap.h"

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

int main(void)
{
	test_regions();
	test_lookup_insert();
	test_cleanup();
	test_pool_exhaustion();
	return tap_done();
}
