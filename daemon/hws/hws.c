// SPDX-License-Identifier: MIT
/*
 * hws.c - the hardware scheduler's policy (see hws.h; the policy step by
 * step is in Documentation/hws.rst)
 *
 * State is kept incrementally so that a decision walks the pools' order
 * only until a kernel fits:
 *
 *   order[]    every RS entry, the R-task first, then the P pool by online
 *              priority, then the O pool by offline priority (ties: older
 *              first). Keys change only when a kernel arrives or leaves, a
 *              DAG's top or critical-path priority or remaining-kernel rank
 *              changes, or a kernel is promoted or launched from R.
 *   age[]      every RS entry, oldest first (the FIFO policy's order).
 *   DAG lists  each DAG's entries by offline priority: the head is the
 *              DAG's top kernel (its P-task).
 *   fail[]     bit-sliced fail counters: one "+1" to any set of entries is
 *              a ripple of ANDs and XORs; the threshold test and the
 *              most-failures search are bit-sliced too.
 *   older[]    the age matrix: older[e] = the entries older than e.
 *
 * SIP masks are up to HWS_MASK_WORDS words; aligned groups of 2^k SIPs
 * never straddle a word, so every group search is a few shifts and ANDs
 * per word. Only the layout's h->words are ever non-zero: the decision
 * path is compiled twice, for two words (the device's layouts up to 32
 * blocks) and for all of them, each with its loops unrolled.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <pto/pto_orchestration_api.h>

#include "hws.h"

#define HWS_E_COOP	(1U << 0)
#define HWS_E_ON_CP	(1U << 1)
#define HWS_E_R		(1U << 2)	/* promoted: holds a reservation */
#define HWS_E_DESC	(1U << 3)	/* 1..4 SIPs: high end first */

/* Order keys: the pool in the top two bits, then the priority. */
#define KEY_R		(3ULL << 62)
#define KEY_P		(2ULL << 62)
#define KEY_O		(1ULL << 62)
#define KEY_PRIO	((1ULL << 62) - 1)

/* Largest scale_ratio value the device accepts (kmod/pto_dev.h). */
#define HWS_SCALE_MAX	100000U

#define BIT(e)		(1U << (e))

/* The decision path: inlined into each instance of decide() */
#define HWS_HOT		static inline __attribute__((always_inline))

/* thread_num -> usage class, aligned group size (0: not a shape) */
static const uint8_t shape_class[17] = {
	[1] = PTO_HWS_USAGE_1SIP, [2] = PTO_HWS_USAGE_2SIP,
	[3] = PTO_HWS_USAGE_3_4SIP, [4] = PTO_HWS_USAGE_3_4SIP,
	[6] = PTO_HWS_USAGE_6_8SIP, [8] = PTO_HWS_USAGE_6_8SIP,
	[9] = PTO_HWS_USAGE_9_16SIP, [12] = PTO_HWS_USAGE_9_16SIP,
	[16] = PTO_HWS_USAGE_9_16SIP,
};

static const uint8_t shape_group[17] = {
	[1] = 1, [2] = 2, [3] = 4, [4] = 4, [6] = 8, [8] = 8,
	[9] = 16, [12] = 16, [16] = 16,
};

/* group size -> the bits where an aligned group of that size starts */
static const uint64_t group_pat[17] = {
	[1] = ~0ULL,
	[2] = 0x5555555555555555ULL,
	[4] = 0x1111111111111111ULL,
	[8] = 0x0101010101010101ULL,
	[16] = 0x0001000100010001ULL,
};

/* ---- Mask helpers -------------------------------------------------------- */

static inline bool m_any(const hws_mask *m, uint32_t n)
{
	uint64_t x = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		x |= m->w[i];
	return x != 0;
}

/* a within b */
static inline bool m_subset(const hws_mask *a, const hws_mask *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a->w[i] & ~b->w[i])
			return false;
	return true;
}

static inline bool m_meets(const hws_mask *a, const hws_mask *b, uint32_t n)
{
	uint64_t x = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		x |= a->w[i] & b->w[i];
	return x != 0;
}

static inline uint32_t m_weight(const hws_mask *m, uint32_t n)
{
	uint32_t i, c = 0;

	for (i = 0; i < n; i++)
		c += hws_popcount64(m->w[i]);
	return c;
}

static inline uint32_t ctz64(uint64_t x)
{
	return (uint32_t)__builtin_ctzll(x);
}

static inline uint32_t top64(uint64_t x)
{
	return 63 - (uint32_t)__builtin_clzll(x);
}

/*
 * Bit p of the result is set iff bits p .. p + tn - 1 of @x are all set
 * (runs are counted within the word: groups never cross a word).
 */
static inline uint64_t run_starts(uint64_t x, uint32_t tn)
{
	uint64_t r2, r4, r8;

	switch (tn) {
	case 1:
		return x;
	case 2:
		return x & (x >> 1);
	case 3:
		return x & (x >> 1) & (x >> 2);
	default:
		break;
	}
	r2 = x & (x >> 1);
	r4 = r2 & (r2 >> 2);
	switch (tn) {
	case 4:
		return r4;
	case 6:
		return r4 & (r2 >> 4);
	default:
		break;
	}
	r8 = r4 & (r4 >> 4);
	switch (tn) {
	case 8:
		return r8;
	case 9:
		return r8 & (x >> 8);
	case 12:
		return r8 & (r4 >> 8);
	default:
		return r8 & (r8 >> 8);
	}
}

/* The start bits of every aligned group of @tn SIPs lying within @m. */
static inline void group_starts(const hws_mask *m, uint32_t tn, uint32_t g,
				uint32_t n, hws_mask *s)
{
	uint64_t pat = group_pat[g];
	uint32_t i;

	for (i = 0; i < n; i++)
		s->w[i] = run_starts(m->w[i], tn) & pat;
}

/* The highest (@desc) or lowest set bit of @s, or -1. */
static inline int pick_bit(const hws_mask *s, uint32_t n, bool desc)
{
	uint32_t i;

	if (desc) {
		for (i = n; i-- > 0;)
			if (s->w[i])
				return (int)(i * 64 + top64(s->w[i]));
	} else {
		for (i = 0; i < n; i++)
			if (s->w[i])
				return (int)(i * 64 + ctz64(s->w[i]));
	}
	return -1;
}

static inline void shape_set(hws_mask *m, uint32_t start, uint32_t tn)
{
	m->w[start / 64] |= ((1ULL << tn) - 1) << (start % 64);
}

/* ---- SIP times ----------------------------------------------------------- */

/* Estimated time until @s has finished everything it holds. */
static uint64_t sip_rem(const struct hws *h, uint32_t s, uint64_t now)
{
	const struct hws_sip *p = &h->sip[s];
	uint64_t r = 0;

	if (!hws_mask_test(&h->busy, s))
		return 0;
	if (p->end > now)
		r = p->end - now;
	if (hws_mask_test(&h->shadow, s))
		r += p->shadow_est;
	return r;
}

static uint64_t shape_rem(const struct hws *h, uint32_t start, uint32_t tn,
			  uint64_t now)
{
	uint64_t r = 0, x;
	uint32_t i;

	for (i = 0; i < tn; i++) {
		x = sip_rem(h, start + i, now);
		if (x > r)
			r = x;
	}
	return r;
}

/* A kernel of @est may backfill a group with @rem left: rem >= est - margin. */
static inline bool bf_meets(uint64_t rem, uint64_t est, int64_t margin)
{
	if (margin >= 0)
		return rem >= est || est - rem <= (uint64_t)margin;
	return rem >= est && rem - est >= 0 - (uint64_t)margin;
}

/* ---- Fail counters (bit-sliced) ------------------------------------------ */

static void fail_inc(struct hws *h, uint32_t set)
{
	uint32_t k, p;

	for (k = 0; k < HWS_FAIL_BITS && set; k++) {
		p = h->fail[k];
		h->fail[k] = p ^ set;
		set &= p;
	}
	/* counters that wrapped were at the maximum: keep them there */
	for (k = 0; set && k < HWS_FAIL_BITS; k++)
		h->fail[k] |= set;
}

/* The entries of @set whose count is @v (the low bits decide most). */
static uint32_t fail_eq(const struct hws *h, uint32_t set, uint32_t v)
{
	uint32_t k;

	for (k = 0; k < HWS_FAIL_BITS && set; k++)
		set &= ((v >> k) & 1) ? h->fail[k] : ~h->fail[k];
	return set;
}

/*
 * +1 to the entries of @set, and the over-threshold set kept: a count
 * moves by one (or stays at HWS_FAIL_MAX >= the threshold), so the
 * entries that cross the threshold are those of @set that now equal it.
 */
static void fail_inc_over(struct hws *h, uint32_t set)
{
	fail_inc(h, set);
	h->fail_over |= fail_eq(h, set, h->cfg.promote_threshold);
}

static void fail_clear(struct hws *h, uint32_t set)
{
	uint32_t k;

	for (k = 0; k < HWS_FAIL_BITS; k++)
		h->fail[k] &= ~set;
	h->fail_over &= ~set;
}

/* The entries whose count is >= @thr. */
static uint32_t fail_ge(const struct hws *h, uint32_t thr)
{
	uint32_t gt = 0, eq = ~0U, k, t;

	if (thr > HWS_FAIL_MAX)
		return 0;
	for (k = HWS_FAIL_BITS; k-- > 0;) {
		t = 0U - ((thr >> k) & 1);	/* all ones where thr has 1 */
		gt |= eq & h->fail[k] & ~t;
		eq &= ~(h->fail[k] ^ t);
	}
	return gt | eq;
}

/* The entries of @set with the largest count. */
static uint32_t fail_max(const struct hws *h, uint32_t set)
{
	uint32_t k, t;

	for (k = HWS_FAIL_BITS; k-- > 0;) {
		t = set & h->fail[k];
		if (t)
			set = t;
	}
	return set;
}

static uint32_t fail_get(const struct hws *h, uint32_t e)
{
	uint32_t k, v = 0;

	for (k = 0; k < HWS_FAIL_BITS; k++)
		v |= ((h->fail[k] >> e) & 1) << k;
	return v;
}

/* ---- Priorities and the order -------------------------------------------- */

/*
 * Online priority of a DAG's top kernel: ceil(critical_ratio *
 * scale_ratio[rank]), critical_ratio = offline priority / the DAG's
 * critical-path priority (1 until an on-cp kernel of the DAG arrived). A
 * dynamic DAG uses the offline priority.
 */
static uint64_t online_priority(const struct hws *h, const struct hws_entry *k)
{
	const struct hws_dag *d = &h->dag[k->dag];
	uint64_t num, cp = d->cp_priority, q, r;

	if (d->dynamic)
		return k->offline_priority;
	if (!cp)
		return k->offline_priority ? h->cfg.scale_ratio[d->rank] : 0;
	/*
	 * ceil(num / cp) with the DAG's reciprocal: num < 2^49, so q is at
	 * most 2 short of the quotient; two branchless corrections.
	 */
	num = (uint64_t)k->offline_priority * h->cfg.scale_ratio[d->rank];
	q = (uint64_t)(((unsigned __int128)num * d->cp_inv) >> 64);
	r = num - q * cp;
	q += r >= cp;
	r -= (r >= cp) ? cp : 0;
	q += r >= cp;
	r -= (r >= cp) ? cp : 0;
	return q + (r != 0);
}

static uint64_t entry_key(const struct hws *h, uint32_t e)
{
	const struct hws_entry *k = &h->rs[e];

	if (k->flags & HWS_E_R)
		return KEY_R;
	if (h->pset & BIT(e))
		return KEY_P | (online_priority(h, k) & KEY_PRIO);
	return KEY_O | k->offline_priority;
}

static inline uint32_t key_pool(uint64_t key)
{
	return key >= KEY_R ? HWS_POOL_R : key >= KEY_P ? HWS_POOL_P :
	       HWS_POOL_O;
}

/*
 * The position of @e in @a (order[] or age[]), HWS_RS_SIZE if absent.
 * Bytes past the last entry are HWS_NONE, so the search needs no count.
 */
static inline uint32_t byte_pos(const uint8_t *a, uint32_t e)
{
#ifdef __SSE2__
	__m128i k = _mm_set1_epi8((char)e);
	uint32_t lo, hi;

	lo = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_loadu_si128((const __m128i *)a), k));
	hi = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
		_mm_loadu_si128((const __m128i *)(a + 16)), k));
	lo |= hi << 16;
	return lo ? (uint32_t)__builtin_ctz(lo) : HWS_RS_SIZE;
#else
	uint32_t j;

	for (j = 0; j < HWS_RS_SIZE; j++)
		if (a[j] == e)
			return j;
	return HWS_RS_SIZE;
#endif
}

/*
 * Fixed-size moves through registers (a constant memmove still becomes a
 * libc call): the arrays are 2 * HWS_RS_SIZE long.
 */
static inline void move32(uint8_t *dst, const uint8_t *src)
{
	uint8_t t[HWS_RS_SIZE];

	memcpy(t, src, sizeof(t));
	memcpy(dst, t, sizeof(t));
}

static inline void bytes_remove(uint8_t *a, uint32_t j)
{
	move32(&a[j], &a[j + 1]);
}

static inline void bytes_insert(uint8_t *a, uint32_t j, uint32_t e)
{
	move32(&a[j + 1], &a[j]);
	a[j] = (uint8_t)e;
}

static void order_remove(struct hws *h, uint32_t e)
{
	uint32_t j = byte_pos(h->order, e);

	if (j < HWS_RS_SIZE)
		bytes_remove(h->order, j);
}

/*
 * Where @e (not in the order, which holds @n entries) goes: after every
 * entry that precedes it (higher key, or equal key and older). Binary
 * search: the order is sorted.
 */
static uint32_t order_place(const struct hws *h, uint32_t e, uint32_t n)
{
	uint64_t key = h->key[e], seq = h->seq[e];
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2, x = h->order[mid];
		bool before = h->key[x] > key ||
			      (h->key[x] == key && h->seq[x] < seq);

		lo = before ? mid + 1 : lo;
		hi = before ? hi : mid;
	}
	return lo;
}

/* @e enters the order, which holds @n entries. */
static void order_insert(struct hws *h, uint32_t e, uint32_t n)
{
	bytes_insert(h->order, order_place(h, e, n), e);
}

/* Entry @e's key may have changed: move it to its place (the order holds
 * h->n_order entries, @e among them). */
static void rekey(struct hws *h, uint32_t e)
{
	uint64_t key = entry_key(h, e);

	if (key == h->key[e])
		return;
	order_remove(h, e);
	h->key[e] = key;
	order_insert(h, e, h->n_order - 1u);
}

static void age_remove(struct hws *h, uint32_t e)
{
	uint32_t j = byte_pos(h->age, e);

	if (j < HWS_RS_SIZE)
		bytes_remove(h->age, j);
}

/* ---- DAGs ---------------------------------------------------------------- */

static void dag_set_rank(struct hws_dag *d)
{
	uint64_t r;

	if (!d->total) {
		d->rank = 0;
		d->rank_next = UINT32_MAX;
		return;
	}
	r = (uint64_t)d->finished * HWS_SCALE_RANKS / d->total;
	if (r >= HWS_SCALE_RANKS - 1) {
		d->rank = HWS_SCALE_RANKS - 1;
		d->rank_next = UINT32_MAX;
		return;
	}
	d->rank = (uint8_t)r;
	/* rank r holds while finished < ceil((r + 1) * total / ranks) */
	d->rank_next = (uint32_t)(((r + 1) * d->total + HWS_SCALE_RANKS - 1) /
				  HWS_SCALE_RANKS);
}

/*
 * Into its DAG's list: by offline priority, an equal one goes after. A
 * streamed graph's kernels have their submission order as priority, so
 * the next one goes last: straight after the tail, not down the list.
 */
static void dag_link(struct hws *h, uint32_t e)
{
	struct hws_entry *k = &h->rs[e];
	struct hws_dag *d = &h->dag[k->dag];
	uint32_t prev = HWS_NONE, cur = d->head;

	if (d->tail != HWS_NONE &&
	    h->rs[d->tail].offline_priority >= k->offline_priority) {
		prev = d->tail;
		cur = HWS_NONE;
	}
	while (cur != HWS_NONE &&
	       h->rs[cur].offline_priority >= k->offline_priority) {
		prev = cur;
		cur = h->rs[cur].dag_next;
	}
	k->dag_prev = (uint8_t)prev;
	k->dag_next = (uint8_t)cur;
	if (prev == HWS_NONE)
		d->head = (uint8_t)e;
	else
		h->rs[prev].dag_next = (uint8_t)e;
	if (cur != HWS_NONE)
		h->rs[cur].dag_prev = (uint8_t)e;
	else
		d->tail = (uint8_t)e;
	d->members |= BIT(e);
}

static void dag_unlink(struct hws *h, uint32_t e)
{
	struct hws_entry *k = &h->rs[e];
	struct hws_dag *d = &h->dag[k->dag];

	if (k->dag_prev == HWS_NONE)
		d->head = k->dag_next;
	else
		h->rs[k->dag_prev].dag_next = k->dag_next;
	if (k->dag_next != HWS_NONE)
		h->rs[k->dag_next].dag_prev = k->dag_prev;
	else
		d->tail = k->dag_prev;
	d->members &= ~BIT(e);
}

/* ---- Reservation --------------------------------------------------------- */

static void unreserve(struct hws *h)
{
	uint32_t r = h->r_entry;

	if (r == HWS_NONE)
		return;
	memset(&h->reserved, 0, sizeof(h->reserved));
	memset(&h->rs[r].reserved, 0, sizeof(h->rs[r].reserved));
	h->rs[r].flags &= (uint8_t)~HWS_E_R;
	h->r_entry = HWS_NONE;
}

/*
 * The SIPs that a kernel of @est may backfill among the reserved ones:
 * those of every reserved group whose remaining time is >= est - margin.
 */
HWS_HOT void backfill_ok(const struct hws *h, uint64_t est, uint64_t now,
			hws_mask *ok, uint32_t n)
{
	const struct hws_entry *r = &h->rs[h->r_entry];
	uint32_t tn = r->thread_num, i;
	hws_mask s;
	uint64_t bits;

	for (i = 0; i < n; i++)
		ok->w[i] = 0;
	group_starts(&h->reserved, tn, r->group, n, &s);
	for (i = 0; i < n; i++) {
		for (bits = s.w[i]; bits; bits &= bits - 1) {
			uint32_t start = i * 64 + ctz64(bits);

			if (bf_meets(shape_rem(h, start, tn, now), est,
				     h->cfg.backfill_margin))
				shape_set(ok, start, tn);
		}
	}
}

/*
 * Reserve for entry @e the group(s) of its shape, within its allowed
 * SIPs, that free soonest (a cooperative kernel: block_num of them).
 * Equal remaining times: an idle group first, then the search order of
 * the shape.
 */
static bool reserve(struct hws *h, uint32_t e, uint64_t now)
{
	struct hws_entry *k = &h->rs[e];
	uint32_t n = HWS_MASK_WORDS, tn = k->thread_num, need, got = 0, i;
	bool desc = k->flags & HWS_E_DESC;
	hws_mask s, m;
	uint64_t bits;

	need = (k->flags & HWS_E_COOP) ? k->block_num : 1;
	for (i = 0; i < n; i++)
		m.w[i] = h->allowed[e].w[i] & ~h->reserved.w[i];
	if (need == 1) {
		/* an idle group frees soonest of all: no times to compare */
		hws_mask mi;
		int b;

		for (i = 0; i < n; i++)
			mi.w[i] = m.w[i] & h->idle.w[i];
		group_starts(&mi, tn, k->group, n, &s);
		b = pick_bit(&s, n, desc);
		if (b >= 0) {
			memset(&m, 0, sizeof(m));
			shape_set(&m, (uint32_t)b, tn);
			got = need;
		}
	}
	if (!got) {
		group_starts(&m, tn, k->group, n, &s);
		memset(&m, 0, sizeof(m));
	}
	while (got < need) {
		uint64_t best_rem = UINT64_MAX;
		int best = -1;
		uint32_t j;

		for (j = 0; j < n; j++) {
			uint32_t w = desc ? n - 1 - j : j;

			for (bits = s.w[w]; bits;) {
				uint32_t b = desc ? top64(bits) : ctz64(bits);
				uint32_t start = w * 64 + b;
				uint64_t rem = shape_rem(h, start, tn, now);

				bits &= ~(1ULL << b);
				if (rem < best_rem) {
					best_rem = rem;
					best = (int)start;
				}
			}
		}
		if (best < 0)
			return false;
		s.w[best / 64] &= ~(1ULL << (best % 64));
		shape_set(&m, (uint32_t)best, tn);
		got++;
	}
	h->reserved = m;
	k->reserved = m;
	k->flags |= HWS_E_R;
	h->r_entry = (uint8_t)e;
	rekey(h, e);
	h->st.promotions++;
	h->st.reservations++;
	return true;
}

/* ---- Placement ----------------------------------------------------------- */

/*
 * place() for a cooperative kernel: block_num groups in one decision, or
 * none (out of line: the rare case).
 */
static bool place_coop(const struct hws *restrict h,
		       const struct hws_entry *restrict k,
		       const hws_mask *restrict target, bool early, bool desc,
		       hws_mask *restrict sips, uint32_t n)
{
	uint32_t tn = k->thread_num, g = k->group;
	uint32_t i, need, got;
	hws_mask si, sr, m;
	int b;

	for (i = 0; i < n; i++)
		m.w[i] = target->w[i] & h->idle.w[i];
	group_starts(&m, tn, g, n, &si);
	need = k->block_num;
	got = m_weight(&si, n);
	if (early) {
		group_starts(target, tn, g, n, &sr);
		for (i = 0; i < n; i++)
			sr.w[i] &= ~si.w[i];
		got += m_weight(&sr, n);
	} else {
		for (i = 0; i < n; i++)
			sr.w[i] = 0;
	}
	if (got < need)
		return false;
	for (i = 0; i < n; i++)
		sips->w[i] = 0;
	for (got = 0; got < need; got++) {
		hws_mask *from = m_any(&si, n) ? &si : &sr;

		b = pick_bit(from, n, desc);
		from->w[b / 64] &= ~(1ULL << (b % 64));
		shape_set(sips, (uint32_t)b, tn);
	}
	return true;
}

/*
 * sel_best_sip_to_launch: place entry @k's block (a cooperative kernel:
 * all its blocks) in @target (a subset of the ready SIPs): groups whose
 * SIPs are all idle first, then groups with pre-idle SIPs. 1..4-SIP shapes
 * take the highest such group (@desc), larger ones the lowest. The SIPs
 * go to @sips (its first @n words written, word by word).
 */
HWS_HOT bool place_n(const struct hws *restrict h,
		     const struct hws_entry *restrict k,
		     const hws_mask *restrict target, bool early, bool desc,
		     hws_mask *restrict sips, uint32_t n)
{
	uint32_t tn = k->thread_num, g = k->group, i;
	hws_mask si, sr, m;
	int b;

	if (k->flags & HWS_E_COOP)
		return place_coop(h, k, target, early, desc, sips, n);
	for (i = 0; i < n; i++)
		m.w[i] = target->w[i] & h->idle.w[i];
	if (tn == 1) {
		/* every SIP is a group of one (the common case) */
		b = pick_bit(&m, n, desc);
		if (b < 0 && early)
			b = pick_bit(target, n, desc);
	} else {
		group_starts(&m, tn, g, n, &si);
		b = pick_bit(&si, n, desc);
		if (b < 0 && early) {
			group_starts(target, tn, g, n, &sr);
			b = pick_bit(&sr, n, desc);
		}
	}
	if (b < 0)
		return false;
	for (i = 0; i < n; i++)
		sips->w[i] = i == (uint32_t)b / 64 ?
			     ((1ULL << tn) - 1) << (b % 64) : 0;
	return true;
}

/* place_n() out of line, one instance per decide() instance */
static bool place_2(const struct hws *restrict h,
		    const struct hws_entry *restrict k,
		    const hws_mask *restrict target, bool early, bool desc,
		    hws_mask *restrict sips)
{
	return place_n(h, k, target, early, desc, sips, 2);
}

static bool place_w(const struct hws *restrict h,
		    const struct hws_entry *restrict k,
		    const hws_mask *restrict target, bool early, bool desc,
		    hws_mask *restrict sips)
{
	return place_n(h, k, target, early, desc, sips, HWS_MASK_WORDS);
}

HWS_HOT bool place(const struct hws *restrict h,
		   const struct hws_entry *restrict k,
		   const hws_mask *restrict target, bool early, bool desc,
		   hws_mask *restrict sips, uint32_t n)
{
	if (n == 2)
		return place_2(h, k, target, early, desc, sips);
	return place_w(h, k, target, early, desc, sips);
}

/* Fill-up: no SIP of @target is left free in the clusters @sips touches. */
HWS_HOT bool fills_up(const struct hws *h, const hws_mask *sips,
		      const hws_mask *target, uint32_t n)
{
	uint32_t slot = h->layout.cluster_slot, i, sh;
	uint64_t y, span, ones = (1ULL << slot) - 1;

	for (i = 0; i < n; i++) {
		y = sips->w[i];
		for (sh = 1; sh < slot; sh <<= 1)
			y |= y >> sh;
		span = (y & group_pat[slot]) * ones;
		if (target->w[i] & span & ~sips->w[i])
			return false;
	}
	return true;
}

/*
 * adaptive_allocation for one non-R kernel: option 1 on unreserved ready
 * SIPs, option 2 on reserved-but-ready SIPs it may backfill, option 3 on
 * both; USE_RSVD_SIP_FIRST says whether 1 or 2 is tried first. @usable:
 * its allowed SIPs that are ready. The SIPs go to @sips; with fill-up-
 * first, what they were chosen from to @target.
 */
HWS_HOT bool try_entry(const struct hws *restrict h, uint32_t e, uint64_t now,
		       const hws_mask *restrict usable, bool early,
		       hws_mask *restrict sips, hws_mask *restrict target,
		       uint32_t n)
{
	const struct hws_entry *k = &h->rs[e];
	uint32_t i;
	bool desc = k->flags & HWS_E_DESC;
	hws_mask nonrsv, ok, both;
	const hws_mask *from;

	if (h->r_entry == HWS_NONE || !m_meets(usable, &h->reserved, n)) {
		/* no reservation in the way (the common case): inline */
		from = usable;
		if (!place_n(h, k, from, early, desc, sips, n))
			return false;
		goto found;
	}
	for (i = 0; i < n; i++)
		nonrsv.w[i] = usable->w[i] & ~h->reserved.w[i];
	backfill_ok(h, k->est_time, now, &ok, n);
	for (i = 0; i < n; i++)
		ok.w[i] &= usable->w[i];
	from = &nonrsv;
	if (!h->cfg.rsvd_first && place(h, k, from, early, desc, sips, n))
		goto found;
	from = &ok;
	if (m_any(&ok, n) && place(h, k, from, early, desc, sips, n))
		goto found;
	from = &nonrsv;
	if (h->cfg.rsvd_first && place(h, k, from, early, desc, sips, n))
		goto found;
	for (i = 0; i < n; i++)
		both.w[i] = nonrsv.w[i] | ok.w[i];
	from = &both;
	if (!place(h, k, from, early, desc, sips, n))
		return false;
found:
	if (target)
		for (i = 0; i < n; i++)
			target->w[i] = from->w[i];
	return true;
}

/* The R-task: on its reserved SIPs once they are all ready, or anywhere. */
HWS_HOT bool try_r(const struct hws *restrict h, uint32_t e,
		   const hws_mask *restrict usable, bool early,
		   hws_mask *restrict sips, uint32_t n)
{
	const struct hws_entry *k = &h->rs[e];
	uint32_t i;

	if (m_subset(&k->reserved, usable, n)) {
		for (i = 0; i < n; i++)
			sips->w[i] = k->reserved.w[i];
		return true;
	}
	return place(h, k, usable, early, k->flags & HWS_E_DESC, sips, n);
}

/*
 * The HWS policy's choice, into @out->sips: the R-task, else the first
 * P-task that fits, else the first O-task (with fill-up-first: the first
 * candidate of the pool that fills up its clusters, else the first that
 * fits). Returns the entry or HWS_NONE, its pool in *@pool; *@p0 is the
 * first P-task of the walk (PTP[0]) if the walk reached the P pool.
 */
HWS_HOT uint32_t pick_hws(struct hws *restrict h, uint64_t now,
			  const hws_mask *restrict ready, bool early,
			  struct hws_launch *restrict out, uint32_t *pool,
			  uint32_t *p0, uint32_t n)
{
	uint32_t i, w, e, p, seg = HWS_POOL_NONE, first = HWS_NONE;
	bool fill = h->cfg.fillup_first;
	hws_mask fsips, tsips, target, usable;
	uint64_t any;

	for (i = 0; i < n; i++)
		fsips.w[i] = 0;

	for (i = 0; (e = h->order[i]) != HWS_NONE; i++) {
		if (!(h->eligible & BIT(e)))
			continue;
		p = key_pool(h->key[e]);
		if (p != seg) {
			if (first != HWS_NONE)
				break;
			seg = p;
		}
		if (p == HWS_POOL_P && *p0 == HWS_NONE)
			*p0 = e;
		/* nothing it may use is ready: no need to look further */
		for (w = 0, any = 0; w < n; w++) {
			usable.w[w] = h->allowed[e].w[w] & ready->w[w];
			any |= usable.w[w];
		}
		if (!any)
			continue;
		if (p == HWS_POOL_R) {
			if (try_r(h, e, &usable, early, &out->sips, n)) {
				*pool = p;
				return e;
			}
			continue;
		}
		if (!fill) {
			if (try_entry(h, e, now, &usable, early, &out->sips,
				      NULL, n)) {
				*pool = p;
				return e;
			}
			continue;
		}
		if (!try_entry(h, e, now, &usable, early, &tsips, &target,
			       n))
			continue;
		if (fills_up(h, &tsips, &target, n)) {
			if (first != HWS_NONE)
				h->st.fillups++;
			first = e;
			fsips = tsips;
			break;
		}
		if (first == HWS_NONE) {
			first = e;
			fsips = tsips;
		}
	}
	if (first == HWS_NONE)
		return HWS_NONE;
	for (i = 0; i < n; i++)
		out->sips.w[i] = fsips.w[i];
	*pool = key_pool(h->key[first]);
	return first;
}

/* PTO2's default: the oldest ready kernel that fits, the first free SIPs. */
HWS_HOT uint32_t pick_fifo(const struct hws *h, const hws_mask *ready,
			   struct hws_launch *out, uint32_t n)
{
	uint32_t i, j, e;
	hws_mask usable;

	for (j = 0; (e = h->age[j]) != HWS_NONE; j++) {
		if (!(h->eligible & BIT(e)))
			continue;
		for (i = 0; i < n; i++)
			usable.w[i] = h->allowed[e].w[i] & ready->w[i] &
				      ~h->reserved.w[i];
		if (place(h, &h->rs[e], &usable, false, false, &out->sips, n))
			return e;
	}
	return HWS_NONE;
}

/* ---- Launch and release -------------------------------------------------- */

/*
 * Entry @e leaves the RS: all its blocks launched (@done) or taken out.
 * Its DAG's top and rank may change, and with them the P-task's key.
 */
static void rs_release(struct hws *h, uint32_t e, bool done)
{
	struct hws_entry *k = &h->rs[e];
	struct hws_dag *d = &h->dag[k->dag];
	uint32_t b = BIT(e), old = d->head;
	bool rank_changed = false;

	if (e == h->r_entry)
		unreserve(h);
	order_remove(h, e);
	age_remove(h, e);
	h->n_order--;
	dag_unlink(h, e);
	h->occupied &= ~b;
	h->eligible &= ~b;
	h->pset &= ~b;
	fail_clear(h, b);
	if (done) {
		if (!d->total || d->finished < d->total)
			d->finished += d->finished != UINT32_MAX;
		if (d->finished >= d->rank_next) {
			uint8_t r = d->rank;

			dag_set_rank(d);
			rank_changed = d->rank != r;
		}
	}
	if (d->head == HWS_NONE)
		return;
	if (d->head != old) {
		h->pset |= BIT(d->head);
		rekey(h, d->head);
	} else if (rank_changed) {
		rekey(h, d->head);
	}
}

/*
 * Record entry @e's blocks, from its next one on, on the SIPs of
 * @out->sips in ascending order (block, then thread): an idle SIP runs
 * its block until @end, a pre-idle one holds it in its shadow (early
 * launch). Returns the HWS_LAUNCH_EARLY and HWS_LAUNCH_BACKFILL flags.
 */
HWS_HOT uint8_t launch_sips(struct hws *restrict h, uint32_t e, uint64_t end,
			    struct hws_launch *restrict out, uint32_t n)
{
	uint32_t i, tn;
	struct hws_entry *k = &h->rs[e];
	uint64_t bits;
	uint16_t blk, thr = 0;
	uint8_t flags = 0;

	tn = k->thread_num;
	blk = k->launched;
	for (i = 0; i < n; i++) {
		uint64_t sips = out->sips.w[i], run, sh;

		h->chk.last_sips.w[i] = sips;
		if (!sips) {
			out->early.w[i] = 0;
			continue;
		}
		run = sips & h->idle.w[i];
		sh = sips & ~run;
		out->early.w[i] = sh;
		for (bits = sips; bits; bits &= bits - 1) {
			uint32_t s = i * 64 + ctz64(bits);
			struct hws_sip *p = &h->sip[s];
			struct hws_sip_rec *r;

			if ((run >> (s % 64)) & 1) {
				r = &p->run;
				p->end = end;
			} else {
				r = &p->shadow;
				p->shadow_est = k->est_time;
			}
			r->cookie = k->cookie;
			r->block_idx = blk;
			r->thread_idx = thr;
			r->thread_num = (uint16_t)tn;
			r->ctx = k->ctx;
			if (++thr == tn) {
				thr = 0;
				blk++;
			}
		}
		h->idle.w[i] &= ~run;
		h->busy.w[i] |= run;
		h->shadow.w[i] |= sh;
		h->pre_idle.w[i] &= ~sips;
		if (sh)
			flags |= HWS_LAUNCH_EARLY;
		if (sips & h->reserved.w[i] && e != h->r_entry)
			flags |= HWS_LAUNCH_BACKFILL;
	}
	return flags;
}

/* Count a launch of @nblk blocks of @k: statistics and the checker's. */
HWS_HOT void launch_count(struct hws *restrict h, const struct hws_entry *k,
			  uint32_t pool, uint32_t nblk, uint8_t flags,
			  uint32_t n)
{
	uint32_t i;

	if (flags & HWS_LAUNCH_BACKFILL)
		h->st.backfills++;
	if (flags & HWS_LAUNCH_EARLY)
		h->st.early_launches++;
	h->st.launches++;
	h->st.launches_pool[pool]++;

	h->chk.blocks_launched += nblk;
	/* the words past @n are zero in both */
	for (i = 0; i < n; i++)
		h->chk.last_affinity.w[i] = k->affinity.w[i];
	h->chk.last_ctx = k->ctx;
	h->chk.last_cls = k->cls;
	h->chk.last_cfg_gen = h->chk.cfg_gen;
	h->chk.last_valid = true;
}

/*
 * Entry @e launched blocks and has more: it waits if it reached its
 * trigger count; an R-task gives its reservation back and is keyed again.
 */
static inline void launch_more_left(struct hws *h, uint32_t e)
{
	struct hws_entry *k = &h->rs[e];

	if (!(k->flags & HWS_E_COOP) && k->trigger &&
	    k->launched >= k->trigger) {
		h->eligible &= ~BIT(e);
		h->st.trigger_waits++;
	}
	if (e == h->r_entry) {
		unreserve(h);
		rekey(h, e);
	}
}

/*
 * Entry @e's last block went (inc_kernel_fail_cnt_upon_launch): every
 * P-task older than it (all of them if it came from O) failed once; it
 * leaves the RS.
 */
static inline void launch_last(struct hws *h, uint32_t e, uint32_t pool)
{
	uint32_t fails = h->pset & h->eligible & ~BIT(e);

	if (h->r_entry != HWS_NONE)
		fails &= ~BIT(h->r_entry);
	if (pool == HWS_POOL_P)
		fails &= h->older[e];
	else if (pool == HWS_POOL_R)
		fails = 0;
	if (fails)
		fail_inc_over(h, fails);
	h->chk.blocks_departed += h->rs[e].block_num;
	rs_release(h, e, true);
}

/* Launch @out->sips for entry @e, picked from @pool; fills in @out. */
HWS_HOT void launch(struct hws *restrict h, uint64_t now, uint32_t e,
		    uint32_t pool, struct hws_launch *restrict out, uint32_t n)
{
	struct hws_entry *k = &h->rs[e];
	uint64_t end = now + k->est_time + h->cfg.launch_delay;
	uint32_t nblk = (k->flags & HWS_E_COOP) ? k->block_num : 1;
	uint8_t flags = launch_sips(h, e, end, out, n);

	/* the words past the layout's: no SIP there */
	if (n < HWS_MASK_WORDS) {
		memset(&out->sips.w[n], 0, (HWS_MASK_WORDS - n) * 8);
		memset(&out->early.w[n], 0, (HWS_MASK_WORDS - n) * 8);
	}

	out->cookie = k->cookie;
	out->block_idx = k->launched;
	out->nr_blocks = (uint16_t)nblk;
	out->thread_num = (uint16_t)k->thread_num;
	out->pool = (uint8_t)pool;
	if (end < h->pre_next)
		h->pre_next = end;
	launch_count(h, k, pool, nblk, flags, n);
	k->launched = (uint16_t)(k->launched + nblk);
	if (k->launched < k->block_num) {
		out->flags = flags;
		launch_more_left(h, e);
		return;
	}
	out->flags = flags | HWS_LAUNCH_DONE;
	launch_last(h, e, pool);
}

/* The first entry of the order that is in @set, or HWS_NONE. */
static uint32_t first_in_order(const struct hws *h, uint32_t set)
{
	uint32_t i, e;

	for (i = 0; set && (e = h->order[i]) != HWS_NONE; i++)
		if (set & BIT(e))
			return e;
	return HWS_NONE;
}

/*
 * promote_and_reserve_sip, while no R-task holds a reservation, in this
 * precedence: a P-task over the fail threshold (most failures first), the
 * top P-task if it needs a whole cluster, the top P-task if this decision
 * passed it over, the best on-cp P-task if this decision launched an
 * off-cp kernel. @l is the entry launched (HWS_NONE if none; it may have
 * left the RS since), @l_pool and @l_cp what it was, @p0 the top P-task of
 * this decision.
 */
static bool promote(struct hws *h, uint64_t now, uint32_t l, uint32_t l_pool,
		    bool l_cp, uint32_t p0)
{
	uint32_t rule = h->cfg.promote_rule, ptp, t, m, e;
	bool passed = l != HWS_NONE;

	if (h->r_entry != HWS_NONE)
		return false;
	ptp = h->pset & h->eligible;
	if (passed)
		ptp &= ~BIT(l);
	if (!ptp)
		return false;
	if (rule & PTO_HWS_PROMOTE_THRESHOLD) {
		t = ptp & h->fail_over;
		while (t) {
			m = fail_max(h, t);
			while (m) {
				e = first_in_order(h, m);
				if (e == HWS_NONE)
					return false;
				if (reserve(h, e, now))
					return true;
				m &= ~BIT(e);
				t &= ~BIT(e);
			}
		}
	}
	if (l_pool == HWS_POOL_R || p0 == HWS_NONE || p0 == l ||
	    !(ptp & BIT(p0)))
		return false;
	if ((rule & PTO_HWS_PROMOTE_TOP_1) &&
	    h->rs[p0].thread_num == h->cfg.cluster_sip_num &&
	    reserve(h, p0, now))
		return true;
	if ((rule & PTO_HWS_PROMOTE_SKIPPED_TOP) && passed &&
	    reserve(h, p0, now))
		return true;
	if ((rule & PTO_HWS_PROMOTE_ON_CP) && passed && !l_cp) {
		uint32_t cp = 0, x;

		for (t = ptp; t; t &= t - 1) {
			x = (uint32_t)__builtin_ctz(t);
			if (h->rs[x].flags & HWS_E_ON_CP)
				cp |= BIT(x);
		}
		e = first_in_order(h, cp);
		if (e != HWS_NONE && reserve(h, e, now))
			return true;
	}
	return false;
}

/*
 * Whether promote() may promote at all: the tests it starts with, inline,
 * so that most decisions make no call. False only where promote() would
 * return false having changed nothing.
 */
HWS_HOT bool promote_may(const struct hws *h, uint32_t l, uint32_t l_pool,
			 uint32_t p0)
{
	uint32_t rule = h->cfg.promote_rule, ptp;

	if (!rule || h->r_entry != HWS_NONE)
		return false;
	ptp = h->pset & h->eligible;
	if (l != HWS_NONE)
		ptp &= ~BIT(l);
	if ((rule & PTO_HWS_PROMOTE_THRESHOLD) && (ptp & h->fail_over))
		return true;
	return (rule & ~PTO_HWS_PROMOTE_THRESHOLD) && l_pool != HWS_POOL_R &&
	       p0 != HWS_NONE && p0 != l && (ptp & BIT(p0));
}

/* EARLY_LAUNCH_MODE = predict: busy SIPs with remaining <= the offset. */
static void predict_refresh(struct hws *h, uint64_t now)
{
	uint64_t lim = now + h->cfg.pre_idle_offset, next = UINT64_MAX, bits;
	uint32_t i;

	if (lim < now)
		lim = UINT64_MAX;
	for (i = 0; i < h->words; i++) {
		bits = h->busy.w[i] & ~h->shadow.w[i] & ~h->pre_idle.w[i];
		for (; bits; bits &= bits - 1) {
			uint32_t s = i * 64 + ctz64(bits);
			uint64_t end = h->sip[s].end;

			if (end <= lim)
				h->pre_idle.w[i] |= 1ULL << (s % 64);
			else if (end < next)
				next = end;
		}
	}
	h->pre_next = next;
}

/*
 * One decision on masks of @n words: a constant in each of the two
 * instances hws_decide() chooses from, so that every mask loop unrolls.
 * The words from h->words on are zero in every mask, so any n >= h->words
 * decides the same.
 */
HWS_HOT int decide(struct hws *h, uint64_t now, struct hws_launch *out,
		   uint32_t n)
{
	uint32_t i, p0 = HWS_NONE, e, pool = HWS_POOL_NONE;
	bool early, l_cp = false;
	hws_mask ready;

	h->st.decisions++;
	if (!h->occupied)
		return 0;
	early = h->cfg.early_launch && h->cfg.policy != HWS_POLICY_FIFO;
	if (early && h->cfg.early_mode == HWS_EARLY_PREDICT &&
	    now + h->cfg.pre_idle_offset >= h->pre_next)
		predict_refresh(h, now);
	for (i = 0; i < n; i++)
		ready.w[i] = h->idle.w[i] | (early ? h->pre_idle.w[i] : 0);
	if (!m_any(&ready, n))
		return 0;
	if (h->cfg.policy == HWS_POLICY_FIFO) {
		e = pick_fifo(h, &ready, out, n);
		if (e == HWS_NONE)
			return 0;
		launch(h, now, e, HWS_POOL_O, out, n);
		return 1;
	}

	e = pick_hws(h, now, &ready, early, out, &pool, &p0, n);
	if (e != HWS_NONE) {
		l_cp = h->rs[e].flags & HWS_E_ON_CP;
		launch(h, now, e, pool, out, n);
	}
	if (promote_may(h, e, pool, p0) && promote(h, now, e, pool, l_cp, p0) &&
	    e != HWS_NONE)
		out->flags |= HWS_LAUNCH_PROMOTED;
	return e != HWS_NONE;
}

/* The device's layouts (up to 32 blocks) take the two-word instance. */
int hws_decide(struct hws *h, uint64_t now, struct hws_launch *out)
{
	if (__builtin_expect(h->words <= 2, 1))
		return decide(h, now, out, 2);
	return decide(h, now, out, HWS_MASK_WORDS);
}

/* ---- Layouts and configuration ------------------------------------------- */

int hws_layout_device(struct hws_layout *l, uint32_t nr_aic, uint32_t nr_aiv)
{
	uint32_t blocks = nr_aic > (nr_aiv + 1) / 2 ? nr_aic : (nr_aiv + 1) / 2;
	uint32_t c, i;

	if (!blocks || 4 * (uint64_t)blocks > HWS_MAX_SIPS ||
	    nr_aic + nr_aiv > PTO_MAX_CORES)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->nr_sips = 4 * blocks;
	l->cluster_slot = 4;
	l->cluster_sips = 3;
	for (c = 0; c < HWS_MAX_SIPS; c++)
		l->core[c] = UINT16_MAX;
	for (c = 0; c < blocks; c++) {
		for (i = 0; i < 2 && 2 * c + i < nr_aiv; i++) {
			l->core[4 * c + i] = (uint16_t)(nr_aic + 2 * c + i);
			hws_mask_set(&l->type[PTO2_WORKER_VECTOR], 4 * c + i);
			hws_mask_set(&l->present, 4 * c + i);
		}
		if (c < nr_aic) {
			l->core[4 * c + 2] = (uint16_t)c;
			hws_mask_set(&l->type[PTO2_WORKER_CUBE], 4 * c + 2);
			hws_mask_set(&l->present, 4 * c + 2);
		}
	}
	return 0;
}

static bool cluster_sips_valid(uint32_t cs)
{
	return cs == 3 || cs == 4 || cs == 6 || cs == 8 || cs == 12 ||
	       cs == 16;
}

int hws_layout_uniform(struct hws_layout *l, uint32_t nr_sips,
		       uint32_t cluster_sips)
{
	uint32_t slot = 1, clusters, c, i, core = 0;

	if (!nr_sips || !cluster_sips_valid(cluster_sips))
		return -EINVAL;
	while (slot < cluster_sips)
		slot <<= 1;
	clusters = (nr_sips + cluster_sips - 1) / cluster_sips;
	if ((uint64_t)clusters * slot > HWS_MAX_SIPS)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->nr_sips = clusters * slot;
	l->cluster_slot = slot;
	l->cluster_sips = cluster_sips;
	for (i = 0; i < HWS_MAX_SIPS; i++)
		l->core[i] = UINT16_MAX;
	for (c = 0; c < clusters; c++) {
		for (i = 0; i < cluster_sips && core < nr_sips; i++) {
			uint32_t s = c * slot + i;

			l->core[s] = (uint16_t)core++;
			hws_mask_set(&l->present, s);
		}
	}
	l->type[PTO2_WORKER_CUBE] = l->present;
	l->type[PTO2_WORKER_VECTOR] = l->present;
	return 0;
}

void hws_config_default(struct hws_config *c, const struct hws_layout *l)
{
	uint32_t i, j;

	memset(c, 0, sizeof(*c));
	c->policy = HWS_POLICY_HWS;
	c->cluster_sip_num = l->cluster_sips;
	c->early_mode = HWS_EARLY_SIP_REPORT;
	c->promote_rule = PTO_HWS_PROMOTE_THRESHOLD;
	c->promote_threshold = 4;
	for (i = 0; i < HWS_SCALE_RANKS; i++)
		c->scale_ratio[i] = 100 * (i + 1);
	for (i = 0; i < HWS_NR_CTX; i++)
		for (j = 0; j < PTO_HWS_USAGE_CLASSES; j++)
			c->usage[i][j] = l->present;
}

#define FAIL(...) do {						\
	if (msg && msglen)					\
		snprintf(msg, msglen, __VA_ARGS__);		\
	return -EINVAL;						\
} while (0)

static int layout_check(const struct hws_layout *l, char *msg, size_t msglen)
{
	uint32_t i;

	if (!l->nr_sips || l->nr_sips > HWS_MAX_SIPS)
		FAIL("layout: %u SIP positions (1..%u)", l->nr_sips,
		     HWS_MAX_SIPS);
	if (!l->cluster_slot || l->cluster_slot > 16 ||
	    l->cluster_slot & (l->cluster_slot - 1) ||
	    l->nr_sips % l->cluster_slot)
		FAIL("layout: cluster slot %u (a power of two <= 16 dividing %u)",
		     l->cluster_slot, l->nr_sips);
	if (!l->cluster_sips || l->cluster_sips > l->cluster_slot)
		FAIL("layout: %u SIPs per cluster in slots of %u",
		     l->cluster_sips, l->cluster_slot);
	for (i = l->nr_sips; i < HWS_MAX_SIPS; i++)
		if (hws_mask_test(&l->present, i))
			FAIL("layout: SIP %u present beyond %u", i, l->nr_sips);
	if (hws_mask_empty(&l->present))
		FAIL("layout: no SIP present");
	return 0;
}

int hws_config_check(const struct hws_config *c, const struct hws_layout *l,
		     char *msg, size_t msglen)
{
	uint32_t i;

	if (c->policy > HWS_POLICY_FIFO)
		FAIL("policy %u (0 HWS, 1 FIFO)", c->policy);
	if (c->cluster_sip_num != l->cluster_sips)
		FAIL("CLUSTER_SIP_NUM %u, the layout has %u", c->cluster_sip_num,
		     l->cluster_sips);
	if (c->early_mode > HWS_EARLY_PREDICT)
		FAIL("EARLY_LAUNCH_MODE %u (0 SIP report, 1 predict)",
		     c->early_mode);
	if (c->promote_rule & ~PTO_HWS_PROMOTE_ALL)
		FAIL("PROMOTE_RULE 0x%x (bits 0x%x)", c->promote_rule,
		     PTO_HWS_PROMOTE_ALL);
	if (!c->promote_threshold || c->promote_threshold > HWS_FAIL_MAX)
		FAIL("PROMOTE_THRESHOLD %u (1..%u)", c->promote_threshold,
		     HWS_FAIL_MAX);
	for (i = 0; i < HWS_SCALE_RANKS; i++)
		if (!c->scale_ratio[i] || c->scale_ratio[i] > HWS_SCALE_MAX)
			FAIL("SCALE_RATIO_TABLE_RANK_%u %u (1..%u)", i,
			     c->scale_ratio[i], HWS_SCALE_MAX);
	if (c->pre_idle_offset > HWS_MAX_SPAN)
		FAIL("PRE_IDLE_OFFSET %llu (0..%llu)",
		     (unsigned long long)c->pre_idle_offset, HWS_MAX_SPAN);
	if (c->launch_delay > HWS_MAX_SPAN)
		FAIL("LAUNCH_SIP_DELAY %llu (0..%llu)",
		     (unsigned long long)c->launch_delay, HWS_MAX_SPAN);
	if (c->backfill_margin > (int64_t)HWS_MAX_SPAN ||
	    c->backfill_margin < -(int64_t)HWS_MAX_SPAN)
		FAIL("RSVD_SIP_BACKFILL_MARGIN_OFFSET %lld (-%llu..%llu)",
		     (long long)c->backfill_margin, HWS_MAX_SPAN,
		     HWS_MAX_SPAN);
	return 0;
}

static void allowed_update(struct hws *h, uint32_t e)
{
	const struct hws_entry *k = &h->rs[e];
	const hws_mask *u = &h->cfg.usage[k->ctx][k->cls];
	uint32_t i;

	for (i = 0; i < HWS_MASK_WORDS; i++)
		h->allowed[e].w[i] = k->affinity.w[i] & u->w[i] &
				     h->layout.present.w[i];
}

int hws_init(struct hws *h, const struct hws_layout *l,
	     const struct hws_config *c, char *msg, size_t msglen)
{
	uint32_t i;
	int ret;

	ret = layout_check(l, msg, msglen);
	if (!ret)
		ret = hws_config_check(c, l, msg, msglen);
	if (ret)
		return ret;
	memset(h, 0, sizeof(*h));
	h->layout = *l;
	h->cfg = *c;
	h->words = (l->nr_sips + 63) / 64;
	memset(h->order, HWS_NONE, sizeof(h->order));
	memset(h->age, HWS_NONE, sizeof(h->age));
	h->idle = l->present;
	h->pre_next = UINT64_MAX;
	h->r_entry = HWS_NONE;
	for (i = 0; i < HWS_MAX_DAGS; i++)
		h->dag[i].head = h->dag[i].tail = HWS_NONE;
	return 0;
}

int hws_configure(struct hws *h, const struct hws_config *c, char *msg,
		  size_t msglen)
{
	uint32_t e;
	int ret;

	ret = hws_config_check(c, &h->layout, msg, msglen);
	if (ret)
		return ret;
	if (c->early_mode != h->cfg.early_mode) {
		/* pre-idle comes from elsewhere now: start again */
		memset(&h->pre_idle, 0, sizeof(h->pre_idle));
		h->pre_next = 0;
	}
	h->cfg = *c;
	h->chk.cfg_gen++;
	h->fail_over = fail_ge(h, c->promote_threshold) & h->occupied;
	for (e = 0; e < HWS_RS_SIZE; e++)
		if (h->occupied & BIT(e))
			allowed_update(h, e);
	/* a reservation outside the new masks, or under FIFO, goes */
	if (h->r_entry != HWS_NONE &&
	    (c->policy == HWS_POLICY_FIFO ||
	     !m_subset(&h->reserved, &h->allowed[h->r_entry], h->words))) {
		e = h->r_entry;
		unreserve(h);
		rekey(h, e);
	}
	/* the scale table may have changed every P-task's key */
	for (e = 0; e < HWS_RS_SIZE; e++)
		if (h->occupied & BIT(e))
			rekey(h, e);
	return 0;
}

/* ---- DAGs and kernels ---------------------------------------------------- */

int hws_dag_open(struct hws *h, uint32_t dag, uint32_t total_kernels,
		 bool dynamic)
{
	struct hws_dag *d;

	if (dag >= HWS_MAX_DAGS)
		return -EINVAL;
	d = &h->dag[dag];
	if (d->open)
		return -EBUSY;
	memset(d, 0, sizeof(*d));
	d->open = 1;
	d->dynamic = dynamic;
	d->total = total_kernels;
	d->head = d->tail = HWS_NONE;
	dag_set_rank(d);
	return 0;
}

int hws_dag_close(struct hws *h, uint32_t dag)
{
	struct hws_dag *d;

	if (dag >= HWS_MAX_DAGS || !h->dag[dag].open)
		return -EINVAL;
	d = &h->dag[dag];
	if (d->members)
		return -EBUSY;
	memset(d, 0, sizeof(*d));
	d->head = d->tail = HWS_NONE;
	return 0;
}

static int find_cookie(const struct hws *h, uint64_t cookie)
{
	uint32_t occ = h->occupied, e;

	for (; occ; occ &= occ - 1) {
		e = ctz64(occ);
		if (h->rs[e].cookie == cookie)
			return (int)e;
	}
	return -1;
}

static void eligible_update(struct hws *h, uint32_t e)
{
	const struct hws_entry *k = &h->rs[e];

	if ((k->flags & HWS_E_COOP) || !k->trigger || k->launched < k->trigger)
		h->eligible |= BIT(e);
	else
		h->eligible &= ~BIT(e);
}

/*
 * Whether a kernel of @tn SIPs a block (shape group @g) may ever be
 * placed on @allowed: an aligned group there at all, and @blocks of them
 * for a cooperative kernel (all its blocks at once).
 */
static bool shape_fits(const hws_mask *allowed, uint32_t tn, uint32_t g,
		       bool coop, uint32_t blocks, uint32_t n)
{
	uint32_t groups;
	hws_mask s;

	group_starts(allowed, tn, g, n, &s);
	groups = m_weight(&s, n);
	return groups && (!coop || groups >= blocks);
}

uint32_t hws_stranded(const struct hws *h, uint64_t cookies[HWS_RS_SIZE])
{
	uint32_t occ = h->occupied, e, n = 0;
	const struct hws_entry *k;

	for (; occ; occ &= occ - 1) {
		e = ctz64(occ);
		k = &h->rs[e];
		if (!shape_fits(&h->allowed[e], k->thread_num, k->group,
				k->flags & HWS_E_COOP, k->block_num, h->words))
			cookies[n++] = k->cookie;
	}
	return n;
}

int hws_add(struct hws *h, const struct hws_kernel *k, uint64_t now)
{
	uint32_t tn = k->thread_num, e, i, old, n = h->words;
	struct hws_entry *x;
	struct hws_dag *d;
	hws_mask allowed;

	(void)now;
	if (k->dag >= HWS_MAX_DAGS || !h->dag[k->dag].open ||
	    k->est_time > HWS_MAX_SPAN ||
	    k->ctx >= HWS_NR_CTX || !k->block_num || tn > 16 ||
	    !shape_group[tn] || tn > h->cfg.cluster_sip_num)
		return -EINVAL;
	for (i = 0; i < HWS_MASK_WORDS; i++)
		allowed.w[i] = k->affinity.w[i] & h->layout.present.w[i] &
			       h->cfg.usage[k->ctx][shape_class[tn]].w[i];
	if (!shape_fits(&allowed, tn, shape_group[tn], k->coop, k->block_num,
			n))
		return -EINVAL;
	if (find_cookie(h, k->cookie) >= 0)
		return -EEXIST;
	if (h->occupied == ~0U)
		return -ENOSPC;

	e = ctz64(~(uint64_t)h->occupied);
	x = &h->rs[e];
	memset(x, 0, sizeof(*x));
	x->cookie = k->cookie;
	x->est_time = k->est_time;
	h->seq[e] = ++h->next_seq;
	x->offline_priority = k->offline_priority;
	x->block_num = k->block_num;
	x->thread_num = (uint16_t)tn;
	x->trigger = k->coop ? 0 : k->block_trigger_cnt;
	x->dag = (uint8_t)k->dag;
	x->ctx = (uint8_t)k->ctx;
	x->cls = shape_class[tn];
	x->group = shape_group[tn];
	x->flags = (k->coop ? HWS_E_COOP : 0) | (k->on_cp ? HWS_E_ON_CP : 0) |
		   (tn <= 4 ? HWS_E_DESC : 0);
	for (i = 0; i < HWS_MASK_WORDS; i++)
		x->affinity.w[i] = k->affinity.w[i] & h->layout.present.w[i];
	h->allowed[e] = allowed;

	/* the age matrix: everything already here is older */
	for (i = 0; i < HWS_RS_SIZE; i++)
		h->older[i] &= ~BIT(e);
	h->older[e] = h->occupied;
	fail_clear(h, BIT(e));
	h->age[h->n_order] = (uint8_t)e;
	h->occupied |= BIT(e);
	eligible_update(h, e);

	/* update_info_upon_new_task_arrive: DAG top and cp priority */
	d = &h->dag[k->dag];
	old = d->head;
	dag_link(h, e);
	if (k->on_cp && d->cp_priority != k->offline_priority) {
		d->cp_priority = k->offline_priority;
		d->cp_inv = d->cp_priority ? UINT64_MAX / d->cp_priority : 0;
	}
	if (d->head != old) {
		h->pset |= BIT(e);
		if (old != HWS_NONE) {
			h->pset &= ~BIT(old);
			rekey(h, old);
		}
	} else if (k->on_cp) {
		rekey(h, d->head);
	}
	/* the order holds the n_order others; then e counts */
	h->key[e] = entry_key(h, e);
	order_insert(h, e, h->n_order);
	h->n_order++;
	return 0;
}

int hws_set_trigger(struct hws *h, uint64_t cookie, uint16_t trigger_cnt)
{
	int e = find_cookie(h, cookie);

	if (e < 0)
		return -ENOENT;
	if (trigger_cnt && trigger_cnt < h->rs[e].launched)
		return -EINVAL;
	if (!(h->rs[e].flags & HWS_E_COOP))
		h->rs[e].trigger = trigger_cnt;
	eligible_update(h, (uint32_t)e);
	return 0;
}

int hws_remove(struct hws *h, uint64_t cookie)
{
	int e = find_cookie(h, cookie);

	if (e < 0)
		return -ENOENT;
	h->chk.blocks_departed += h->rs[e].launched;
	rs_release(h, (uint32_t)e, false);
	return 0;
}

int hws_evict(struct hws *h, uint64_t cookie)
{
	int e = find_cookie(h, cookie);

	if (e < 0)
		return -ENOENT;
	if (h->rs[e].launched)
		return -EBUSY;
	rs_release(h, (uint32_t)e, false);
	return 0;
}

uint32_t hws_rs_free(const struct hws *h)
{
	return HWS_RS_SIZE - h->n_order;
}

/* ---- SIP events and status ----------------------------------------------- */

int hws_sip_complete(struct hws *h, const hws_mask *sips, uint64_t now)
{
	uint32_t n = h->words, i;
	uint64_t bits;

	for (i = n; i < HWS_MASK_WORDS; i++)
		if (sips->w[i])
			return -EINVAL;
	if (!m_subset(sips, &h->busy, n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint64_t sh = sips->w[i] & h->shadow.w[i];

		for (bits = sh; bits; bits &= bits - 1) {
			struct hws_sip *p = &h->sip[i * 64 + ctz64(bits)];

			p->run = p->shadow;
			p->end = now + p->shadow_est;
			p->shadow_est = 0;
			if (p->end < h->pre_next)
				h->pre_next = p->end;
		}
		h->busy.w[i] &= ~(sips->w[i] & ~sh);
		h->idle.w[i] |= sips->w[i] & ~sh;
		h->shadow.w[i] &= ~sh;
		h->pre_idle.w[i] &= ~sips->w[i];
	}
	return 0;
}

int hws_sip_pre_complete(struct hws *h, const hws_mask *sips)
{
	uint32_t n = h->words, i;

	for (i = n; i < HWS_MASK_WORDS; i++)
		if (sips->w[i])
			return -EINVAL;
	if (!m_subset(sips, &h->busy, n))
		return -EINVAL;
	if (h->cfg.early_mode != HWS_EARLY_SIP_REPORT)
		return 0;
	for (i = 0; i < n; i++)
		h->pre_idle.w[i] |= sips->w[i] & ~h->shadow.w[i];
	return 0;
}

int hws_reservation(const struct hws *h, uint64_t *cookie, hws_mask *sips)
{
	if (h->r_entry == HWS_NONE)
		return -ENOENT;
	*cookie = h->rs[h->r_entry].cookie;
	*sips = h->reserved;
	return 0;
}

void hws_status(const struct hws *h, uint64_t now, hws_mask *idle,
		hws_mask *pre_idle, hws_mask *reserved)
{
	uint64_t lim = now + h->cfg.pre_idle_offset, bits;
	uint32_t i;

	if (idle)
		*idle = h->idle;
	if (reserved)
		*reserved = h->reserved;
	if (!pre_idle)
		return;
	*pre_idle = h->pre_idle;
	if (h->cfg.early_mode != HWS_EARLY_PREDICT)
		return;
	if (lim < now)
		lim = UINT64_MAX;
	for (i = 0; i < h->words; i++) {
		bits = h->busy.w[i] & ~h->shadow.w[i];
		for (; bits; bits &= bits - 1) {
			uint32_t s = i * 64 + ctz64(bits);

			if (h->sip[s].end <= lim)
				pre_idle->w[i] |= 1ULL << (s % 64);
		}
	}
}

uint64_t hws_sip_remaining(const struct hws *h, uint32_t sip, uint64_t now)
{
	if (sip >= h->layout.nr_sips)
		return 0;
	return sip_rem(h, sip, now);
}

void hws_busy(const struct hws *h, hws_mask *busy)
{
	*busy = h->busy;
}

void hws_get_stats(const struct hws *h, struct hws_stats *st)
{
	*st = h->st;
}

int hws_kernel_state(const struct hws *h, uint64_t cookie,
		     struct hws_kernel_state *st)
{
	int e = find_cookie(h, cookie);
	const struct hws_entry *k;

	if (e < 0)
		return -ENOENT;
	k = &h->rs[e];
	memset(st, 0, sizeof(*st));
	st->pool = (uint8_t)((h->eligible & BIT(e)) ? key_pool(h->key[e]) :
			     HWS_POOL_NONE);
	st->top = h->dag[k->dag].head == e;
	st->launched = k->launched;
	st->fail_times = fail_get(h, (uint32_t)e);
	st->priority = h->key[e] >= KEY_R ? online_priority(h, k) :
		       h->key[e] & KEY_PRIO;
	st->reserved = k->reserved;
	return 0;
}

/* ---- The invariant checker ----------------------------------------------- */

#define BAD(...) do {						\
	if (msg && msglen)					\
		snprintf(msg, msglen, __VA_ARGS__);		\
	return -EUCLEAN;					\
} while (0)

/*
 * One SIP's record of a block. The block's other SIPs may hold it in
 * either slot (an early launch onto idle and pre-idle SIPs is split
 * between run and shadow), or no longer (threads complete one by one);
 * a SIP of the block that holds it must hold it as its own thread.
 * A one-thread block has no other SIPs: only its own SIP's other slot
 * can hold it too, which is a block held twice.
 */
static int check_rec(const struct hws *h, uint32_t s,
		     const struct hws_sip_rec *r, bool shadow, char *msg,
		     size_t msglen)
{
	uint32_t tn = r->thread_num, g, start, t, k;
	const char *what = shadow ? "waiting launch" : "launch";

	if (tn > 16 || !shape_group[tn] || r->thread_idx >= tn)
		BAD("SIP %u: %s with thread %u of %u", s, what, r->thread_idx,
		    tn);
	if (tn == 1)
		goto twice;
	g = shape_group[tn];
	if (r->thread_idx > s || (s - r->thread_idx) % g)
		BAD("SIP %u: %s block %u starts at SIP %d, not a multiple of %u",
		    s, what, r->block_idx, (int)s - (int)r->thread_idx, g);
	start = s - r->thread_idx;
	if (start / h->layout.cluster_slot !=
	    (start + tn - 1) / h->layout.cluster_slot ||
	    !hws_mask_test(&h->layout.present, start + tn - 1))
		BAD("SIP %u: %s block %u crosses a cluster", s, what,
		    r->block_idx);
	for (t = 0; t < tn; t++) {
		for (k = 0; k < 2; k++) {
			const struct hws_sip_rec *o;

			if (!(k ? hws_mask_test(&h->shadow, start + t) :
			      hws_mask_test(&h->busy, start + t)))
				continue;
			o = k ? &h->sip[start + t].shadow :
				&h->sip[start + t].run;
			if (o->cookie == r->cookie &&
			    o->block_idx == r->block_idx &&
			    (o->thread_idx != t || o->thread_num != tn))
				BAD("SIP %u: %s block %u of %llu thread %u, SIP %u holds it as thread %u of %u",
				    s, what, r->block_idx,
				    (unsigned long long)r->cookie,
				    r->thread_idx, start + t, o->thread_idx,
				    o->thread_num);
		}
	}
twice:
	if (shadow && h->sip[s].run.cookie == r->cookie &&
	    h->sip[s].run.block_idx == r->block_idx)
		BAD("SIP %u holds block %u of %llu twice", s, r->block_idx,
		    (unsigned long long)r->cookie);
	return 0;
}

/* SIP state: the masks agree with each other, every record is sound. */
static int check_sips(const struct hws *h, char *msg, size_t msglen)
{
	const hws_mask *pres = &h->layout.present;
	uint32_t n = h->words, i, s;
	int ret;

	for (i = 0; i < HWS_MASK_WORDS; i++) {
		uint64_t p = i < n ? pres->w[i] : 0;

		if (h->idle.w[i] & h->busy.w[i])
			BAD("SIPs both idle and busy (word %u: %#llx)", i,
			    (unsigned long long)(h->idle.w[i] & h->busy.w[i]));
		if ((h->idle.w[i] | h->busy.w[i]) != p)
			BAD("idle | busy is not the present SIPs (word %u)", i);
		if (h->shadow.w[i] & ~h->busy.w[i])
			BAD("a waiting launch on a SIP that is not busy (word %u)",
			    i);
		if (h->pre_idle.w[i] & ~(h->busy.w[i] & ~h->shadow.w[i]))
			BAD("pre-idle SIPs that are idle or hold a waiting launch (word %u)",
			    i);
		if (h->reserved.w[i] & ~p)
			BAD("reserved SIPs that are not present (word %u)", i);
	}
	/*
	 * The records of the busy SIPs (shadow is within busy, above). A
	 * one-thread block in the run slot is sound as it is (check_rec()
	 * has nothing more to look at): the common case, tested here.
	 */
	for (i = 0; i < n; i++) {
		uint64_t w;

		for (w = h->busy.w[i]; w; w &= w - 1) {
			const struct hws_sip_rec *r;

			s = i * 64 + (uint32_t)__builtin_ctzll(w);
			r = &h->sip[s].run;
			if (r->thread_num != 1 || r->thread_idx) {
				ret = check_rec(h, s, r, false, msg, msglen);
				if (ret)
					return ret;
			}
			if (!hws_mask_test(&h->shadow, s))
				continue;
			ret = check_rec(h, s, &h->sip[s].shadow, true, msg,
					msglen);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The reservation: exactly the R-task's, only while it lives. */
static int check_reservation(const struct hws *h, char *msg, size_t msglen)
{
	uint32_t n = h->words, e = h->r_entry;

	if (e == HWS_NONE) {
		if (m_any(&h->reserved, n))
			BAD("SIPs reserved with no R-task");
		return 0;
	}
	if (e >= HWS_RS_SIZE || !(h->occupied & BIT(e)) ||
	    !(h->rs[e].flags & HWS_E_R))
		BAD("R-task %u is not a live promoted entry", e);
	if (memcmp(&h->reserved, &h->rs[e].reserved, sizeof(h->reserved)) ||
	    !m_any(&h->reserved, n))
		BAD("reserved SIPs are not the R-task's reservation");
	if (!m_subset(&h->reserved, &h->allowed[e], n))
		BAD("R-task reserves SIPs it may not use");
	return 0;
}

/*
 * The RS entries: launch counts, promotion, DAG membership, order keys,
 * and their number. Sets *@launched to the blocks they launched.
 */
static int check_entries(const struct hws *h, uint64_t *launched, char *msg,
			 size_t msglen)
{
	uint32_t n = h->words, e, cnt = 0;

	*launched = 0;
	for (e = 0; e < HWS_RS_SIZE; e++) {
		const struct hws_entry *k = &h->rs[e];

		if (!(h->occupied & BIT(e)))
			continue;
		cnt++;
		if (k->launched >= k->block_num)
			BAD("kernel %llu: %u of %u blocks launched and still in the RS",
			    (unsigned long long)k->cookie, k->launched,
			    k->block_num);
		if (!(k->flags & HWS_E_COOP) && k->trigger &&
		    k->launched > k->trigger)
			BAD("kernel %llu: %u blocks launched, trigger %u",
			    (unsigned long long)k->cookie, k->launched,
			    k->trigger);
		if ((k->flags & HWS_E_R) && e != h->r_entry)
			BAD("kernel %llu promoted but not the R-task",
			    (unsigned long long)k->cookie);
		if (!(k->flags & HWS_E_R) && m_any(&k->reserved, n))
			BAD("kernel %llu holds reserved SIPs unpromoted",
			    (unsigned long long)k->cookie);
		if (!(h->dag[k->dag].members & BIT(e)) || !h->dag[k->dag].open)
			BAD("kernel %llu not in its DAG %u",
			    (unsigned long long)k->cookie, k->dag);
		if (h->key[e] != entry_key(h, e))
			BAD("kernel %llu: stale order key",
			    (unsigned long long)k->cookie);
		*launched += k->launched;
	}
	if (cnt != h->n_order)
		BAD("%u entries, %u counted", cnt, h->n_order);
	return 0;
}

/* The order by key and the order by age: live entries, sorted. */
static int check_order(const struct hws *h, char *msg, size_t msglen)
{
	uint32_t i, e;

	for (i = 0; i < 2 * HWS_RS_SIZE; i++) {
		uint64_t k0, k1;

		if (i >= h->n_order) {
			if (h->order[i] != HWS_NONE || h->age[i] != HWS_NONE)
				BAD("order or age has an entry past its end (%u)",
				    i);
			continue;
		}
		e = h->order[i];
		if (e >= HWS_RS_SIZE || !(h->occupied & BIT(e)))
			BAD("order position %u: entry %u is not in the RS", i,
			    e);
		if (i && ((k0 = h->key[h->order[i - 1]]) <
			  (k1 = h->key[e]) ||
			  (k0 == k1 && h->seq[h->order[i - 1]] >
			   h->seq[e])))
			BAD("order not sorted at position %u", i);
		if (h->age[i] >= HWS_RS_SIZE ||
		    !(h->occupied & BIT(h->age[i])) ||
		    (i && h->seq[h->age[i - 1]] >= h->seq[h->age[i]]))
			BAD("age order wrong at position %u", i);
	}
	return 0;
}

/*
 * The DAG lists: disjoint, well linked, by offline priority, the P set
 * their tops, every RS entry in one.
 */
static int check_dags(const struct hws *h, char *msg, size_t msglen)
{
	uint32_t i, dags_members = 0;

	for (i = 0; i < HWS_MAX_DAGS; i++) {
		const struct hws_dag *d = &h->dag[i];
		uint32_t m = 0, c, prev = HWS_NONE;

		if (!d->members && d->head == HWS_NONE && d->tail == HWS_NONE)
			continue;	/* an empty DAG: nothing below applies */
		if (d->members & dags_members)
			BAD("DAG %u shares entries with another DAG", i);
		dags_members |= d->members;
		for (c = d->head; c != HWS_NONE; c = h->rs[c].dag_next) {
			if (c >= HWS_RS_SIZE || m & BIT(c) ||
			    h->rs[c].dag_prev != prev)
				BAD("DAG %u: list broken at entry %u", i, c);
			if (prev != HWS_NONE && h->rs[prev].offline_priority <
			    h->rs[c].offline_priority)
				BAD("DAG %u: top is not the highest priority", i);
			m |= BIT(c);
			prev = c;
		}
		if (m != d->members)
			BAD("DAG %u: list and members differ", i);
		if (d->tail != prev)
			BAD("DAG %u: the tail is not the list's last entry", i);
		if ((d->head != HWS_NONE) != !!(h->pset & m) ||
		    (d->head != HWS_NONE && !(h->pset & BIT(d->head))) ||
		    (h->pset & m & ~(d->head == HWS_NONE ? 0 : BIT(d->head))))
			BAD("DAG %u: P set is not its top", i);
	}
	if (dags_members != h->occupied)
		BAD("RS entries outside any DAG");
	return 0;
}

/*
 * Launches: every block launched exactly once (the RS's @launched plus
 * the departed ones), and the last launch within its usage and affinity
 * masks.
 */
static int check_launches(const struct hws *h, uint64_t launched, char *msg,
			  size_t msglen)
{
	const hws_mask *pres = &h->layout.present;
	uint32_t i;

	if (h->chk.blocks_launched != launched + h->chk.blocks_departed)
		BAD("%llu blocks launched, RS accounts for %llu + %llu departed",
		    (unsigned long long)h->chk.blocks_launched,
		    (unsigned long long)launched,
		    (unsigned long long)h->chk.blocks_departed);
	if (h->chk.last_valid && h->chk.last_cfg_gen == h->chk.cfg_gen) {
		const hws_mask *u =
			&h->cfg.usage[h->chk.last_ctx][h->chk.last_cls];

		for (i = 0; i < HWS_MASK_WORDS; i++) {
			uint64_t out = h->chk.last_sips.w[i] &
				~(u->w[i] & h->chk.last_affinity.w[i] &
				  pres->w[i]);

			if (out)
				BAD("last launch used SIPs outside usage & affinity (word %u: %#llx)",
				    i, (unsigned long long)out);
		}
	}
	return 0;
}

int hws_check(const struct hws *h, char *msg, size_t msglen)
{
	uint64_t launched;
	int ret;

	ret = check_sips(h, msg, msglen);
	if (!ret)
		ret = check_reservation(h, msg, msglen);
	if (!ret)
		ret = check_entries(h, &launched, msg, msglen);
	if (!ret)
		ret = check_order(h, msg, msglen);
	if (ret)
		return ret;
	if ((h->fail_over & ~h->occupied) ||
	    h->fail_over != (fail_ge(h, h->cfg.promote_threshold) &
			     h->occupied))
		BAD("over-threshold set is stale");
	ret = check_dags(h, msg, msglen);
	if (!ret)
		ret = check_launches(h, launched, msg, msglen);
	return ret;
}
