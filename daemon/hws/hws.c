// SPDX-License-Identifier: MIT
/*
 * hws.c - the hardware scheduler's policy (see hws.h; the policy step by
 * step is in Documentation/hws.rst)
 *
 * State is kept incrementally so that a decision walks the pools' order
 * only until a kernel fits:
 *
 *   order[]    every RS entry, R-task first, then the P pool by online
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
 * per word.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

#include "hws.h"

#define HWS_E_COOP	(1U << 0)
#define HWS_E_ON_CP	(1U << 1)
#define HWS_E_R		(1U << 2)	/* promoted: holds the reservation */
#define HWS_E_DESC	(1U << 3)	/* shape of 1..4 SIPs: high end first */

/* Order keys: the pool in the top two bits, then the priority. */
#define KEY_R		(3ULL << 62)
#define KEY_P		(2ULL << 62)
#define KEY_O		(1ULL << 62)
#define KEY_PRIO	((1ULL << 62) - 1)

/* Largest scale_ratio value the device accepts (kmod/pto_dev.h). */
#define HWS_SCALE_MAX	100000U

#define BIT(e)		(1U << (e))

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

/* ---- Mask helpers ---------------------------------------------------------- */

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
		c += (uint32_t)__builtin_popcountll(m->w[i]);
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

/* ---- SIP times ------------------------------------------------------------- */

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

/* ---- Fail counters (bit-sliced) -------------------------------------------- */

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

static void fail_clear(struct hws *h, uint32_t set)
{
	uint32_t k;

	for (k = 0; k < HWS_FAIL_BITS; k++)
		h->fail[k] &= ~set;
}

/* The entries whose count is >= @thr. */
static uint32_t fail_ge(const struct hws *h, uint32_t thr)
{
	uint32_t gt = 0, eq = ~0U, k;

	if (thr > HWS_FAIL_MAX)
		return 0;
	for (k = HWS_FAIL_BITS; k-- > 0;) {
		if (thr & BIT(k)) {
			eq &= h->fail[k];
		} else {
			gt |= eq & h->fail[k];
			eq &= ~h->fail[k];
		}
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

/* ---- Priorities and the order ---------------------------------------------- */

/*
 * Online priority of a DAG's top kernel: ceil(critical_ratio *
 * scale_ratio[rank]), critical_ratio = offline priority / the DAG's
 * critical-path priority (1 until an on-cp kernel of the DAG arrived). A
 * dynamic DAG uses the offline priority.
 */
static uint64_t online_priority(const struct hws *h, const struct hws_entry *k)
{
	const struct hws_dag *d = &h->dag[k->dag];
	uint64_t num, cp;

	if (d->dynamic)
		return k->offline_priority;
	cp = d->cp_priority ? d->cp_priority : k->offline_priority;
	if (!cp)
		return 0;
	num = (uint64_t)k->offline_priority * h->cfg.scale_ratio[d->rank];
	return (num + cp - 1) / cp;
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

static uint32_t order_find(const struct hws *h, uint32_t e)
{
	const uint8_t *p = memchr(h->order, (int)e, h->n_order);

	return p ? (uint32_t)(p - h->order) : h->n_order;
}

static void order_remove(struct hws *h, uint32_t e)
{
	uint32_t j = order_find(h, e), n = h->n_order;

	if (j == n)
		return;
	memmove(&h->order[j], &h->order[j + 1], n - j - 1);
	memmove(&h->okey[j], &h->okey[j + 1], (n - j - 1) * sizeof(h->okey[0]));
	h->n_order = (uint8_t)(n - 1);
}

static void order_insert(struct hws *h, uint32_t e)
{
	uint64_t key = h->rs[e].key, seq = h->rs[e].seq;
	uint32_t n = h->n_order, j;

	for (j = 0; j < n; j++) {
		uint64_t kj = h->okey[j];

		if (kj < key || (kj == key && h->rs[h->order[j]].seq > seq))
			break;
	}
	memmove(&h->order[j + 1], &h->order[j], n - j);
	memmove(&h->okey[j + 1], &h->okey[j], (n - j) * sizeof(h->okey[0]));
	h->order[j] = (uint8_t)e;
	h->okey[j] = key;
	h->n_order = (uint8_t)(n + 1);
}

/* Entry @e's key may have changed: move it to its place. */
static void rekey(struct hws *h, uint32_t e)
{
	uint64_t key = entry_key(h, e);

	if (key == h->rs[e].key)
		return;
	order_remove(h, e);
	h->rs[e].key = key;
	order_insert(h, e);
}

static void age_remove(struct hws *h, uint32_t e, uint32_t n)
{
	const uint8_t *p = memchr(h->age, (int)e, n);
	uint32_t j;

	if (!p)
		return;
	j = (uint32_t)(p - h->age);
	memmove(&h->age[j], &h->age[j + 1], n - j - 1);
}

/* ---- DAGs ------------------------------------------------------------------ */

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

/* Into its DAG's list: by offline priority, an equal one goes after. */
static void dag_link(struct hws *h, uint32_t e)
{
	struct hws_entry *k = &h->rs[e];
	struct hws_dag *d = &h->dag[k->dag];
	uint32_t prev = HWS_NONE, cur = d->head;

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
	d->members &= ~BIT(e);
}

/* ---- Reservation ----------------------------------------------------------- */

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
static void backfill_ok(const struct hws *h, uint64_t est, uint64_t now,
			hws_mask *ok)
{
	const struct hws_entry *r = &h->rs[h->r_entry];
	uint32_t n = h->words, tn = r->thread_num, i;
	hws_mask s;
	uint64_t bits;

	memset(ok, 0, sizeof(*ok));
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
 * Equal remaining times: the search order of the shape.
 */
static bool reserve(struct hws *h, uint32_t e, uint64_t now)
{
	struct hws_entry *k = &h->rs[e];
	uint32_t n = h->words, tn = k->thread_num, need, got = 0, i;
	bool desc = k->flags & HWS_E_DESC;
	hws_mask s, m;
	uint64_t bits;

	need = (k->flags & HWS_E_COOP) ? k->block_num : 1;
	for (i = 0; i < n; i++)
		m.w[i] = h->allowed[e].w[i] & ~h->reserved.w[i];
	group_starts(&m, tn, k->group, n, &s);
	memset(&m, 0, sizeof(m));
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
	return true;
}

/* ---- Placement --------------------------------------------------------------- */

struct cand {
	uint32_t e;
	uint32_t pool;
	hws_mask sips;
	hws_mask target;	/* what it was placed in (fill-up test) */
};

/*
 * sel_best_sip_to_launch: place entry @k's block (a cooperative kernel:
 * all its blocks) in @target (a subset of the ready SIPs): groups whose
 * SIPs are all idle first, then groups with pre-idle SIPs. 1..4-SIP shapes
 * take the highest such group (@desc), larger ones the lowest.
 */
static bool place(const struct hws *h, const struct hws_entry *k,
		  const hws_mask *target, bool early, bool desc, hws_mask *sips)
{
	uint32_t n = h->words, tn = k->thread_num, g = k->group, i, need, got;
	hws_mask si, sr, m;
	int b;

	for (i = 0; i < n; i++)
		m.w[i] = target->w[i] & h->idle.w[i];
	group_starts(&m, tn, g, n, &si);
	if (!(k->flags & HWS_E_COOP)) {
		b = pick_bit(&si, n, desc);
		if (b < 0 && early) {
			group_starts(target, tn, g, n, &sr);
			b = pick_bit(&sr, n, desc);
		}
		if (b < 0)
			return false;
		memset(sips, 0, sizeof(*sips));
		shape_set(sips, (uint32_t)b, tn);
		return true;
	}

	/* cooperative: block_num groups in one decision, or none */
	need = k->block_num;
	got = m_weight(&si, n);
	if (early) {
		group_starts(target, tn, g, n, &sr);
		for (i = 0; i < n; i++)
			sr.w[i] &= ~si.w[i];
		got += m_weight(&sr, n);
	} else {
		memset(&sr, 0, sizeof(sr));
	}
	if (got < need)
		return false;
	memset(sips, 0, sizeof(*sips));
	for (got = 0; got < need; got++) {
		hws_mask *from = m_any(&si, n) ? &si : &sr;

		b = pick_bit(from, n, desc);
		from->w[b / 64] &= ~(1ULL << (b % 64));
		shape_set(sips, (uint32_t)b, tn);
	}
	return true;
}

/* Fill-up: no SIP of @target is left free in the clusters @sips touches. */
static bool fills_up(const struct hws *h, const hws_mask *sips,
		     const hws_mask *target)
{
	uint32_t slot = h->layout.cluster_slot, n = h->words, i, sh;
	uint64_t y, span, ones = slot >= 64 ? ~0ULL : (1ULL << slot) - 1;

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
 * both; USE_RSVD_SIP_FIRST says whether 1 or 2 is tried first.
 */
static bool try_entry(const struct hws *h, uint32_t e, uint64_t now,
		      const hws_mask *ready, bool early, struct cand *c)
{
	const struct hws_entry *k = &h->rs[e];
	uint32_t n = h->words, i;
	bool desc = k->flags & HWS_E_DESC;
	hws_mask usable, nonrsv, ok, both;

	for (i = 0; i < n; i++)
		usable.w[i] = h->allowed[e].w[i] & ready->w[i];
	if (h->r_entry == HWS_NONE || !m_meets(&usable, &h->reserved, n)) {
		c->target = usable;
		return place(h, k, &usable, early, desc, &c->sips);
	}
	for (i = 0; i < n; i++)
		nonrsv.w[i] = usable.w[i] & ~h->reserved.w[i];
	backfill_ok(h, k->est_time, now, &ok);
	for (i = 0; i < n; i++)
		ok.w[i] &= usable.w[i];
	if (!h->cfg.rsvd_first &&
	    place(h, k, &nonrsv, early, desc, &c->sips)) {
		c->target = nonrsv;
		return true;
	}
	if (m_any(&ok, n) && place(h, k, &ok, early, desc, &c->sips)) {
		c->target = ok;
		return true;
	}
	if (h->cfg.rsvd_first && place(h, k, &nonrsv, early, desc, &c->sips)) {
		c->target = nonrsv;
		return true;
	}
	for (i = 0; i < n; i++)
		both.w[i] = nonrsv.w[i] | ok.w[i];
	c->target = both;
	return place(h, k, &both, early, desc, &c->sips);
}

/* The R-task: on its reserved SIPs once they are all ready, or anywhere. */
static bool try_r(const struct hws *h, uint32_t e, const hws_mask *ready,
		  bool early, struct cand *c)
{
	const struct hws_entry *k = &h->rs[e];
	uint32_t n = h->words, i;
	hws_mask usable;

	for (i = 0; i < n; i++)
		usable.w[i] = h->allowed[e].w[i] & ready->w[i];
	c->target = usable;
	if (m_subset(&k->reserved, &usable, n)) {
		c->sips = k->reserved;
		return true;
	}
	return place(h, k, &usable, early, k->flags & HWS_E_DESC, &c->sips);
}

/*
 * The HWS policy's choice: the R-task, else the first P-task that fits,
 * else the first O-task (with fill-up-first: the first candidate of the
 * pool that fills up its clusters, else the first that fits). *@p0 is the
 * first P-task considered (PTP[0]) when the walk reached the P pool.
 */
static bool pick_hws(struct hws *h, uint64_t now, const hws_mask *ready,
		     bool early, struct cand *c, uint32_t *p0)
{
	bool fill = h->cfg.fillup_first, have = false;
	uint32_t i, n = h->n_order, seg = HWS_POOL_NONE;
	struct cand t;

	for (i = 0; i < n; i++) {
		uint32_t e = h->order[i], pool = key_pool(h->okey[i]);

		if (!(h->eligible & BIT(e)))
			continue;
		if (pool != seg) {
			if (have)
				return true;
			seg = pool;
		}
		if (pool == HWS_POOL_R) {
			if (try_r(h, e, ready, early, c)) {
				c->e = e;
				c->pool = pool;
				return true;
			}
			continue;
		}
		if (pool == HWS_POOL_P && *p0 == HWS_NONE)
			*p0 = e;
		if (!try_entry(h, e, now, ready, early, &t))
			continue;
		t.e = e;
		t.pool = pool;
		if (!fill) {
			*c = t;
			return true;
		}
		if (fills_up(h, &t.sips, &t.target)) {
			if (have)
				h->st.fillups++;
			*c = t;
			return true;
		}
		if (!have) {
			*c = t;
			have = true;
		}
	}
	return have;
}

/* PTO2's default: the oldest ready kernel that fits, the first free SIPs. */
static bool pick_fifo(const struct hws *h, const hws_mask *ready,
		      struct cand *c)
{
	uint32_t n = h->words, i, j, cnt = HWS_RS_SIZE - hws_rs_free(h);
	hws_mask usable;

	for (j = 0; j < cnt; j++) {
		uint32_t e = h->age[j];

		if (!(h->eligible & BIT(e)))
			continue;
		for (i = 0; i < n; i++)
			usable.w[i] = h->allowed[e].w[i] & ready->w[i] &
				      ~h->reserved.w[i];
		if (place(h, &h->rs[e], &usable, false, false, &c->sips)) {
			c->e = e;
			c->pool = HWS_POOL_O;
			return true;
		}
	}
	return false;
}

/* ---- Launch and release -------------------------------------------------------- */

/*
 * Entry @e leaves the RS: all its blocks launched (@done) or taken out.
 * Its DAG's top and rank may change, and with them the P-task's key.
 */
static void rs_release(struct hws *h, uint32_t e, bool done)
{
	struct hws_entry *k = &h->rs[e];
	struct hws_dag *d = &h->dag[k->dag];
	uint32_t b = BIT(e), old = d->head, cnt;
	bool rank_changed = false;

	cnt = HWS_RS_SIZE - hws_rs_free(h);
	if (e == h->r_entry)
		unreserve(h);
	order_remove(h, e);
	age_remove(h, e, cnt);
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

static void launch(struct hws *h, uint64_t now, const struct cand *c,
		   struct hws_launch *out)
{
	uint32_t e = c->e, n = h->words, i, j = 0, b = BIT(e), nblk, tn, fails;
	struct hws_entry *k = &h->rs[e];
	uint64_t end = now + k->est_time + h->cfg.launch_delay, bits;
	bool backfill = false;

	tn = k->thread_num;
	nblk = (k->flags & HWS_E_COOP) ? k->block_num : 1;
	out->cookie = k->cookie;
	out->block_idx = k->launched;
	out->nr_blocks = (uint16_t)nblk;
	out->thread_num = (uint16_t)tn;
	out->sips = c->sips;
	out->pool = (uint8_t)c->pool;
	out->flags = 0;

	/* SIP records, in ascending order: block, then thread */
	for (i = 0; i < n; i++) {
		uint64_t run = c->sips.w[i] & h->idle.w[i];
		uint64_t sh = c->sips.w[i] & ~h->idle.w[i];

		out->early.w[i] = sh;
		for (bits = c->sips.w[i]; bits; bits &= bits - 1, j++) {
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
			r->block_idx = (uint16_t)(k->launched + j / tn);
			r->thread_idx = (uint16_t)(j % tn);
			r->thread_num = (uint16_t)tn;
			r->ctx = k->ctx;
		}
		h->idle.w[i] &= ~run;
		h->busy.w[i] |= run;
		h->shadow.w[i] |= sh;
		h->pre_idle.w[i] &= ~c->sips.w[i];
		if (sh)
			out->flags |= HWS_LAUNCH_EARLY;
		if (c->sips.w[i] & h->reserved.w[i] && e != h->r_entry)
			backfill = true;
	}
	for (; i < HWS_MASK_WORDS; i++)
		out->early.w[i] = 0;
	if (end < h->pre_next)
		h->pre_next = end;
	if (backfill) {
		out->flags |= HWS_LAUNCH_BACKFILL;
		h->st.backfills++;
	}
	if (out->flags & HWS_LAUNCH_EARLY)
		h->st.early_launches++;
	h->st.launches++;
	h->st.launches_pool[c->pool]++;

	h->chk.blocks_launched += nblk;
	h->chk.last_sips = c->sips;
	h->chk.last_affinity = k->affinity;
	h->chk.last_ctx = k->ctx;
	h->chk.last_cls = k->cls;
	h->chk.last_cfg_gen = h->chk.cfg_gen;
	h->chk.last_valid = true;

	k->launched = (uint16_t)(k->launched + nblk);
	if (e == h->r_entry)
		unreserve(h);
	if (k->launched < k->block_num) {
		if (!(k->flags & HWS_E_COOP) && k->trigger &&
		    k->launched >= k->trigger) {
			h->eligible &= ~b;
			h->st.trigger_waits++;
		}
		rekey(h, e);
		return;
	}

	/*
	 * inc_kernel_fail_cnt_upon_launch: the kernel's last block went; every
	 * P-task older than it (all of them if it came from O) failed once.
	 */
	fails = h->pset & h->eligible & ~b;
	if (h->r_entry != HWS_NONE)
		fails &= ~BIT(h->r_entry);
	if (c->pool == HWS_POOL_P)
		fails &= h->older[e];
	else if (c->pool == HWS_POOL_R)
		fails = 0;
	if (fails)
		fail_inc(h, fails);
	out->flags |= HWS_LAUNCH_DONE;
	h->chk.blocks_departed += k->block_num;
	rs_release(h, e, true);
}

/* The first entry of the order that is in @set, or HWS_NONE. */
static uint32_t first_in_order(const struct hws *h, uint32_t set)
{
	uint32_t i;

	for (i = 0; set && i < h->n_order; i++)
		if (set & BIT(h->order[i]))
			return h->order[i];
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
	ptp = h->pset & h->eligible & h->occupied;
	if (passed)
		ptp &= ~BIT(l);
	if (!ptp)
		return false;
	if (rule & PTO_HWS_PROMOTE_THRESHOLD) {
		t = ptp & fail_ge(h, h->cfg.promote_threshold);
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
	    h->rs[p0].thread_num == h->cfg.cluster_sip_num && reserve(h, p0, now))
		return true;
	if ((rule & PTO_HWS_PROMOTE_SKIPPED_TOP) && passed &&
	    reserve(h, p0, now))
		return true;
	if ((rule & PTO_HWS_PROMOTE_ON_CP) && passed && !l_cp) {
		uint32_t cp = 0, i;

		for (i = 0; i < HWS_RS_SIZE; i++)
			if (ptp & BIT(i) && h->rs[i].flags & HWS_E_ON_CP)
				cp |= BIT(i);
		e = first_in_order(h, cp);
		if (e != HWS_NONE && reserve(h, e, now))
			return true;
	}
	return false;
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

int hws_decide(struct hws *h, uint64_t now, struct hws_launch *out)
{
	uint32_t n = h->words, i, p0 = HWS_NONE, l = HWS_NONE;
	uint32_t l_pool = HWS_POOL_NONE;
	bool fifo = h->cfg.policy == HWS_POLICY_FIFO, early, found, l_cp = false;
	hws_mask ready;
	struct cand c;

	h->st.decisions++;
	if (!h->occupied)
		return 0;
	early = h->cfg.early_launch && !fifo;
	if (early && h->cfg.early_mode == HWS_EARLY_PREDICT &&
	    now + h->cfg.pre_idle_offset >= h->pre_next)
		predict_refresh(h, now);
	for (i = 0; i < n; i++)
		ready.w[i] = h->idle.w[i] | (early ? h->pre_idle.w[i] : 0);
	if (!m_any(&ready, n))
		return 0;
	if (fifo) {
		if (!pick_fifo(h, &ready, &c))
			return 0;
		launch(h, now, &c, out);
		return 1;
	}

	found = pick_hws(h, now, &ready, early, &c, &p0);
	if (found) {
		l = c.e;
		l_pool = c.pool;
		l_cp = h->rs[l].flags & HWS_E_ON_CP;
		launch(h, now, &c, out);
	}
	if (h->cfg.promote_rule &&
	    promote(h, now, l, l_pool, l_cp, p0) && found)
		out->flags |= HWS_LAUNCH_PROMOTED;
	return found;
}

/* ---- Layouts and configuration ------------------------------------------------ */

int hws_layout_device(struct hws_layout *l, uint32_t nr_aic, uint32_t nr_aiv)
{
	uint32_t c;

	if (!nr_aic || nr_aiv != 2 * nr_aic || 4 * nr_aic > HWS_MAX_SIPS)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->nr_sips = 4 * nr_aic;
	l->cluster_slot = 4;
	l->cluster_sips = 3;
	for (c = 0; c < HWS_MAX_SIPS; c++)
		l->core[c] = UINT16_MAX;
	for (c = 0; c < nr_aic; c++) {
		l->core[4 * c] = (uint16_t)(nr_aic + 2 * c);
		l->core[4 * c + 1] = (uint16_t)(nr_aic + 2 * c + 1);
		l->core[4 * c + 2] = (uint16_t)c;
		hws_mask_set(&l->type[PTO2_WORKER_VECTOR], 4 * c);
		hws_mask_set(&l->type[PTO2_WORKER_VECTOR], 4 * c + 1);
		hws_mask_set(&l->type[PTO2_WORKER_CUBE], 4 * c + 2);
		hws_mask_set(&l->present, 4 * c);
		hws_mask_set(&l->present, 4 * c + 1);
		hws_mask_set(&l->present, 4 * c + 2);
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
	h->idle = l->present;
	h->pre_next = UINT64_MAX;
	h->r_entry = HWS_NONE;
	for (i = 0; i < HWS_MAX_DAGS; i++)
		h->dag[i].head = HWS_NONE;
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

/* ---- DAGs and kernels -------------------------------------------------------- */

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
	d->head = HWS_NONE;
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
	d->head = HWS_NONE;
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

int hws_add(struct hws *h, const struct hws_kernel *k, uint64_t now)
{
	uint32_t tn = k->thread_num, e, i, old, n = h->words, groups;
	struct hws_entry *x;
	struct hws_dag *d;
	hws_mask allowed, s;

	(void)now;
	if (k->dag >= HWS_MAX_DAGS || !h->dag[k->dag].open ||
	    k->ctx >= HWS_NR_CTX || !k->block_num || tn > 16 ||
	    !shape_group[tn] || tn > h->cfg.cluster_sip_num)
		return -EINVAL;
	for (i = 0; i < HWS_MASK_WORDS; i++)
		allowed.w[i] = k->affinity.w[i] & h->layout.present.w[i] &
			       h->cfg.usage[k->ctx][shape_class[tn]].w[i];
	group_starts(&allowed, tn, shape_group[tn], n, &s);
	groups = m_weight(&s, n);
	if (!groups || (k->coop && groups < k->block_num))
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
	x->seq = ++h->seq;
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
	h->age[HWS_RS_SIZE - hws_rs_free(h)] = (uint8_t)e;
	h->occupied |= BIT(e);
	eligible_update(h, e);

	/* update_info_upon_new_task_arrive: DAG top and cp priority */
	d = &h->dag[k->dag];
	old = d->head;
	dag_link(h, e);
	if (k->on_cp)
		d->cp_priority = k->offline_priority;
	if (d->head != old) {
		h->pset |= BIT(e);
		if (old != HWS_NONE) {
			h->pset &= ~BIT(old);
			rekey(h, old);
		}
	} else if (k->on_cp) {
		rekey(h, d->head);
	}
	x->key = entry_key(h, e);
	order_insert(h, e);
	return 0;
}

int hws_set_trigger(struct hws *h, uint64_t cookie, uint16_t trigger_cnt)
{
	int e = find_cookie(h, cookie);

	if (e < 0)
		return -ENOENT;
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

uint32_t hws_rs_free(const struct hws *h)
{
	return HWS_RS_SIZE - (uint32_t)__builtin_popcount(h->occupied);
}

/* ---- SIP events and status ---------------------------------------------------- */

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
	st->pool = (uint8_t)((h->eligible & BIT(e)) ? key_pool(k->key) :
			     HWS_POOL_NONE);
	st->top = h->dag[k->dag].head == e;
	st->launched = k->launched;
	st->fail_times = fail_get(h, (uint32_t)e);
	st->priority = k->key >= KEY_R ? online_priority(h, k) :
		       k->key & KEY_PRIO;
	st->reserved = k->reserved;
	return 0;
}

/* ---- The invariant checker ---------------------------------------------------- */

#define BAD(...) do {						\
	if (msg && msglen)					\
		snprintf(msg, msglen, __VA_ARGS__);		\
	return -EUCLEAN;					\
} while (0)

static int check_rec(const struct hws *h, uint32_t s,
		     const struct hws_sip_rec *r, bool shadow, char *msg,
		     size_t msglen)
{
	uint32_t tn = r->thread_num, g, start, t;
	const char *what = shadow ? "waiting launch" : "launch";

	if (tn > 16 || !shape_group[tn] || r->thread_idx >= tn)
		BAD("SIP %u: %s with thread %u of %u", s, what, r->thread_idx,
		    tn);
	g = shape_group[tn];
	start = s - r->thread_idx;
	if (r->thread_idx > s || start % g)
		BAD("SIP %u: %s block %u starts at SIP %d, not a multiple of %u",
		    s, what, r->block_idx, (int)s - (int)r->thread_idx, g);
	if (start / h->layout.cluster_slot !=
	    (start + tn - 1) / h->layout.cluster_slot)
		BAD("SIP %u: %s block %u crosses a cluster", s, what,
		    r->block_idx);
	for (t = 0; t < tn; t++) {
		const struct hws_sip_rec *o;

		if (!(shadow ? hws_mask_test(&h->shadow, start + t) :
		      hws_mask_test(&h->busy, start + t)))
			BAD("SIP %u: %s block %u of %llu, but SIP %u of the block is free",
			    s, what, r->block_idx,
			    (unsigned long long)r->cookie, start + t);
		o = shadow ? &h->sip[start + t].shadow : &h->sip[start + t].run;
		if (o->cookie != r->cookie || o->block_idx != r->block_idx ||
		    o->thread_idx != t || o->thread_num != tn)
			BAD("SIP %u: %s block %u of %llu, SIP %u holds block %u of %llu thread %u",
			    s, what, r->block_idx,
			    (unsigned long long)r->cookie, start + t,
			    o->block_idx, (unsigned long long)o->cookie,
			    o->thread_idx);
	}
	return 0;
}

int hws_check(const struct hws *h, char *msg, size_t msglen)
{
	const hws_mask *pres = &h->layout.present;
	uint32_t n = h->words, i, e, cnt = 0, dags_members = 0;
	uint64_t launched = 0;
	int ret;

	/* SIP state */
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
	for (i = 0; i < n * 64; i++) {
		if (hws_mask_test(&h->busy, i)) {
			ret = check_rec(h, i, &h->sip[i].run, false, msg,
					msglen);
			if (ret)
				return ret;
		}
		if (hws_mask_test(&h->shadow, i)) {
			ret = check_rec(h, i, &h->sip[i].shadow, true, msg,
					msglen);
			if (ret)
				return ret;
		}
	}

	/* reservation: exactly the R-task's, only while it lives */
	if (h->r_entry == HWS_NONE) {
		if (m_any(&h->reserved, n))
			BAD("SIPs reserved with no R-task");
	} else {
		e = h->r_entry;
		if (e >= HWS_RS_SIZE || !(h->occupied & BIT(e)) ||
		    !(h->rs[e].flags & HWS_E_R))
			BAD("R-task %u is not a live promoted entry", e);
		if (memcmp(&h->reserved, &h->rs[e].reserved,
			   sizeof(h->reserved)) || !m_any(&h->reserved, n))
			BAD("reserved SIPs are not the R-task's reservation");
		if (!m_subset(&h->reserved, &h->allowed[e], n))
			BAD("R-task reserves SIPs it may not use");
	}

	/* RS entries, the order, the DAG lists */
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
		if (k->key != entry_key(h, e))
			BAD("kernel %llu: stale order key",
			    (unsigned long long)k->cookie);
		launched += k->launched;
	}
	if (cnt != h->n_order)
		BAD("%u entries, %u in the order", cnt, h->n_order);
	for (i = 0; i < h->n_order; i++) {
		e = h->order[i];
		if (!(h->occupied & BIT(e)) || h->okey[i] != h->rs[e].key)
			BAD("order position %u: entry %u is stale", i, e);
		if (i && (h->okey[i - 1] < h->okey[i] ||
			  (h->okey[i - 1] == h->okey[i] &&
			   h->rs[h->order[i - 1]].seq > h->rs[e].seq)))
			BAD("order not sorted at position %u", i);
		if (h->age[i] >= HWS_RS_SIZE || !(h->occupied & BIT(h->age[i])) ||
		    (i && h->rs[h->age[i - 1]].seq >= h->rs[h->age[i]].seq))
			BAD("age order wrong at position %u", i);
	}
	for (i = 0; i < HWS_MAX_DAGS; i++) {
		const struct hws_dag *d = &h->dag[i];
		uint32_t m = 0, c, prev = HWS_NONE;

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
		if ((d->head != HWS_NONE) != !!(h->pset & m) ||
		    (d->head != HWS_NONE && !(h->pset & BIT(d->head))) ||
		    (h->pset & m & ~(d->head == HWS_NONE ? 0 : BIT(d->head))))
			BAD("DAG %u: P set is not its top", i);
	}
	if (dags_members != h->occupied)
		BAD("RS entries outside any DAG");

	/* every block launched exactly once */
	if (h->chk.blocks_launched != launched + h->chk.blocks_departed)
		BAD("%llu blocks launched, RS accounts for %llu + %llu departed",
		    (unsigned long long)h->chk.blocks_launched,
		    (unsigned long long)launched,
		    (unsigned long long)h->chk.blocks_departed);

	/* the last launch respected its usage and affinity masks */
	if (h->chk.last_valid && h->chk.last_cfg_gen == h->chk.cfg_gen) {
		const hws_mask *u = &h->cfg.usage[h->chk.last_ctx][h->chk.last_cls];

		for (i = 0; i < HWS_MASK_WORDS; i++)
			if (h->chk.last_sips.w[i] &
			    ~(u->w[i] & h->chk.last_affinity.w[i] & pres->w[i]))
				BAD("last launch used SIPs outside usage & affinity (word %u: %#llx)",
				    i, (unsigned long long)(h->chk.last_sips.w[i] &
				    ~(u->w[i] & h->chk.last_affinity.w[i])));
	}
	return 0;
}
