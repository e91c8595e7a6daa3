// SPDX-License-Identifier: MIT
/*
 * hws.h - the device's hardware scheduler (HWS): the policy, as a library
 *
 * One HWS serves every DAG (graph) of every client of a device: it holds
 * up to HWS_RS_SIZE ready kernels (the ready station, RS), classifies them
 * into the R-, P- and O-task pools, and at each decision picks one kernel
 * block and the cores (SIPs) it launches on. It is plain C: no I/O, no
 * threads, no allocation, no clock (the caller passes the time). ptod's
 * schedulers drive it live, pto-hws-sim replays DAG files through it and
 * the unit tests call it directly, so the three cannot disagree.
 *
 * Terms (Documentation/hws.rst maps each to the rest of the project):
 *
 *   SIP        one emulated core (an AIC or an AIV). The HWS numbers SIPs
 *              in its own space (hws_layout.core[] maps them to device
 *              cores): clusters occupy aligned, power-of-two slots.
 *   cluster    (VG) the SIPs a block may span; never crossed. On the
 *              device a cluster is one PTO2 block: AIV 2b, AIV 2b+1 and
 *              AIC b at SIPs 4b, 4b+1, 4b+2 (4b+3 absent: a "harvested"
 *              4-slot cluster of 3 SIPs).
 *   kernel     a ready PTO2 task: block_num blocks of thread_num threads.
 *   block      one launch of a kernel on thread_num SIPs at once.
 *   thread     one SIP of a block (thread_idx 0 .. thread_num-1).
 *   DAG        one graph of one client, in a slot 0 .. HWS_MAX_DAGS-1.
 *   context    one of HWS_NR_CTX register sets of usage masks; every
 *              kernel belongs to one (its client's).
 *   R/P/O      reserve-SIP tasks (promoted, holding reserved SIPs) >
 *              prioritized tasks (the top offline-priority kernel of each
 *              DAG, ordered by online priority) > opportunistic tasks (the
 *              rest, ordered by offline priority).
 *
 * Times (est_time, now, margins, offsets) are in one unit chosen by the
 * caller (ptod: ns); only differences and comparisons are used. An
 * est_time, offset, delay or margin is at most HWS_MAX_SPAN units (the
 * largest estimate a task may carry: 2^40 ns, 18 minutes), and the
 * caller keeps now below 2^62 units: what the library adds up then
 * fits 64 bits.
 *
 * The library's rule, which the invariant checker (hws_check) enforces:
 * scheduling may be suboptimal, allocation may never overlap or leak. A
 * SIP holds at most one launch (plus at most one early launch waiting for
 * it), a reservation lives only as long as its R-task, every block of a
 * kernel launches exactly once, and a SIP outside a kernel's usage and
 * affinity masks never gets it.
 */
#ifndef PTO_HWS_H
#define PTO_HWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/pto.h>
#include <pto-private/graph.h>	/* PTO_MAX_EST_NS */

/* SIP positions: four per device block (2 AIV, 1 AIC, 1 absent) */
#define HWS_MAX_SIPS	((4 * PTO_MAX_AIC + 63) / 64 * 64)
#define HWS_MASK_WORDS	(HWS_MAX_SIPS / 64)
#define HWS_RS_SIZE	32			/* ready station entries */
#define HWS_MAX_DAGS	32			/* DAGs in flight */
#define HWS_NR_CTX	4			/* contexts (usage mask sets) */
#define HWS_MAX_SPAN	PTO_MAX_EST_NS		/* largest time given (above) */
#define HWS_SCALE_RANKS	PTO_HWS_SCALE_RANKS	/* one per 5% remaining */

/* ---- SIP masks ------------------------------------------------------------ */

/* A set of SIPs (bit i: SIP i). Only words below hws.words are used. */
typedef struct hws_mask {
	uint64_t w[HWS_MASK_WORDS];
} hws_mask;

static inline void hws_mask_set(hws_mask *m, uint32_t sip)
{
	m->w[sip / 64] |= 1ULL << (sip % 64);
}

static inline void hws_mask_clear(hws_mask *m, uint32_t sip)
{
	m->w[sip / 64] &= ~(1ULL << (sip % 64));
}

static inline bool hws_mask_test(const hws_mask *m, uint32_t sip)
{
	return (m->w[sip / 64] >> (sip % 64)) & 1;
}

static inline bool hws_mask_empty(const hws_mask *m)
{
	uint64_t x = 0;
	int i;

	for (i = 0; i < HWS_MASK_WORDS; i++)
		x |= m->w[i];
	return !x;
}

/* The lowest SIP in @m, or -1 if it is empty. */
static inline int hws_mask_first(const hws_mask *m)
{
	int i;

	for (i = 0; i < HWS_MASK_WORDS; i++)
		if (m->w[i])
			return i * 64 + __builtin_ctzll(m->w[i]);
	return -1;
}

/*
 * The bits set in @x, inline: without POPCNT (the x86-64 baseline) the
 * builtin is a call into libgcc, on the decision path and in the
 * scheduler threads' every pass.
 */
static inline uint32_t hws_popcount64(uint64_t x)
{
#ifdef __POPCNT__
	return (uint32_t)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
#endif
}

static inline uint32_t hws_mask_weight(const hws_mask *m)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < HWS_MASK_WORDS; i++)
		n += hws_popcount64(m->w[i]);
	return n;
}

/* ---- Configuration (the HWS registers, in host form) ---------------------- */

/* Which scheduler decides (a register: both can run the same workload). */
enum hws_policy {
	HWS_POLICY_HWS = 0,	/* the HWS policy of this file */
	HWS_POLICY_FIFO = 1,	/* PTO2's default: ready order, first free SIP */
};

/* Where pre-idle comes from (EARLY_LAUNCH_MODE). */
enum hws_early_mode {
	HWS_EARLY_SIP_REPORT = PTO_HWS_EL_SIP_REPORT,	/* hws_sip_pre_complete */
	HWS_EARLY_PREDICT = PTO_HWS_EL_HWS_PREDICT,	/* remaining <= offset */
};

/**
 * struct hws_config - the HWS registers.
 * @policy: enum hws_policy.
 * @cluster_sip_num: CLUSTER_SIP_NUM: SIPs per cluster (3, 4, 6, 8, 12 or
 *	16); must equal the layout's. A kernel with more threads is refused.
 * @early_launch: ENABLE_EARLY_LAUNCH_SIP: pre-idle SIPs may be launched
 *	on (the launch waits in the SIP's shadow slot until it completes).
 * @early_mode: EARLY_LAUNCH_MODE, enum hws_early_mode.
 * @pre_idle_offset: with HWS_EARLY_PREDICT, a busy SIP is pre-idle once
 *	its remaining time is at most this.
 * @backfill_margin: RSVD_SIP_BACKFILL_MARGIN_OFFSET, signed: a kernel may
 *	backfill a reserved-but-idle SIP when the reserving group's
 *	remaining time >= the kernel's est_time - @backfill_margin.
 * @fillup_first: SIP_FILLUP_TASK_FIRST: among the P (then the O)
 *	candidates that fit, prefer the first that leaves no SIP it could use
 *	free in the clusters it lands in; else the first that fits.
 * @rsvd_first: USE_RSVD_SIP_FIRST: prefer backfilling reserved-but-idle
 *	SIPs over unreserved ones.
 * @promote_rule: PROMOTE_RULE, PTO_HWS_PROMOTE_* bits.
 * @promote_threshold: PROMOTE_THRESHOLD: fail_times that promote
 *	(1 .. HWS_FAIL_MAX).
 * @launch_delay: LAUNCH_SIP_DELAY: added to a SIP's remaining time when a
 *	kernel is launched on an idle SIP.
 * @scale_ratio: SCALE_RATIO_TABLE_RANK_0..19, rank i for a DAG whose
 *	remaining fraction of kernels is in (95 - 5i, 100 - 5i] percent.
 * @usage: <n>_SIP_USAGE_MASK per context and thread_num class
 *	(PTO_HWS_USAGE_*); SIPs outside the mask are never used by kernels
 *	of that context and class.
 */
struct hws_config {
	uint32_t policy;
	uint32_t cluster_sip_num;
	bool early_launch;
	uint32_t early_mode;
	uint64_t pre_idle_offset;
	int64_t backfill_margin;
	bool fillup_first;
	bool rsvd_first;
	uint32_t promote_rule;
	uint32_t promote_threshold;
	uint64_t launch_delay;
	uint32_t scale_ratio[HWS_SCALE_RANKS];
	hws_mask usage[HWS_NR_CTX][PTO_HWS_USAGE_CLASSES];
};

/* ---- Layout: SIPs, clusters and the SIP -> core map ---------------------- */

/**
 * struct hws_layout - where the SIPs are.
 * @nr_sips: SIP positions in use (a multiple of @cluster_slot).
 * @cluster_slot: positions per cluster: a power of two >= @cluster_sips.
 * @cluster_sips: SIPs present per cluster (CLUSTER_SIP_NUM).
 * @present: the SIP positions that exist.
 * @type: per PTO2 worker type (PTO2_WORKER_CUBE, _VECTOR), the SIPs of
 *	that type; a uniform layout has every SIP of both types.
 * @core: SIP position -> device core (uapi numbering); meaningless for
 *	absent positions.
 */
struct hws_layout {
	uint32_t nr_sips;
	uint32_t cluster_slot;
	uint32_t cluster_sips;
	hws_mask present;
	hws_mask type[2];
	uint16_t core[HWS_MAX_SIPS];
};

/*
 * The device's layout: one cluster per PTO2 block (see above), block b
 * holding AIV 2b and 2b + 1 and AIC b where the device has them (the
 * device has 2 AIV per AIC; the sim device may have any counts):
 * max(nr_aic, ceil(nr_aiv / 2)) clusters.
 */
int hws_layout_device(struct hws_layout *l, uint32_t nr_aic, uint32_t nr_aiv);
/* @nr_sips uniform SIPs in clusters of @cluster_sips (tests, simulator). */
int hws_layout_uniform(struct hws_layout *l, uint32_t nr_sips,
		       uint32_t cluster_sips);

/* The register defaults: HWS policy, threshold promotion at 4, table
 * 100 * (1 .. 20), every usage mask = every SIP of @l. */
void hws_config_default(struct hws_config *c, const struct hws_layout *l);
/* 0, or -EINVAL and the reason in @msg. */
int hws_config_check(const struct hws_config *c, const struct hws_layout *l,
		     char *msg, size_t msglen);

/* ---- Kernels ---------------------------------------------------------------- */

/**
 * struct hws_kernel - a ready kernel, as its task descriptor gives it.
 * @cookie: the caller's id of the kernel (unique while in the RS).
 * @dag: DAG slot (hws_dag_open).
 * @ctx: context, 0 .. HWS_NR_CTX-1.
 * @block_num: blocks to launch (gridDimX), >= 1.
 * @thread_num: SIPs per block (blockDimX): 1, 2, 3, 4, 6, 8, 9, 12, 16.
 * @block_trigger_cnt: blocks the firmware allows launched so far (0: all
 *	of them); hws_set_trigger() raises it. Ignored for @coop.
 * @coop: cooperative: all blocks launch in one decision, or none.
 * @on_cp: on a critical path of its DAG.
 * @offline_priority: higher runs first (upward rank for static DAGs,
 *	submission order for dynamic ones).
 * @est_time: estimated time of one block.
 * @affinity: the SIPs it may use (sip_alloc_affinity_mask), already
 *	restricted to its worker type's SIPs.
 */
struct hws_kernel {
	uint64_t cookie;
	uint32_t dag;
	uint32_t ctx;
	uint16_t block_num;
	uint16_t thread_num;
	uint16_t block_trigger_cnt;
	bool coop;
	bool on_cp;
	uint32_t offline_priority;
	uint64_t est_time;
	hws_mask affinity;
};

enum hws_pool {
	HWS_POOL_R = 0,
	HWS_POOL_P = 1,
	HWS_POOL_O = 2,
};

#define HWS_LAUNCH_BACKFILL	(1U << 0)	/* uses reserved-but-idle SIPs */
#define HWS_LAUNCH_EARLY	(1U << 1)	/* some SIPs are pre-idle */
#define HWS_LAUNCH_DONE		(1U << 2)	/* the kernel's last block(s):
						 * it has left the RS */
#define HWS_LAUNCH_PROMOTED	(1U << 3)	/* this decision promoted a
						 * P-task (hws_stats.promotions) */

/**
 * struct hws_launch - one decision.
 * @cookie: the kernel.
 * @block_idx: the first block launched.
 * @nr_blocks: blocks launched (1, or block_num for a cooperative kernel).
 * @thread_num: SIPs per block.
 * @sips: the SIPs, nr_blocks * thread_num of them. In ascending SIP order
 *	they are block @block_idx's threads 0 .. thread_num-1, then the next
 *	block's, and so on (blocks are disjoint aligned groups).
 * @early: the SIPs of @sips that were pre-idle: their launch waits in the
 *	SIP's shadow slot until it completes what it runs (hws_sip_complete);
 *	the block starts when all its SIPs are free.
 * @pool: enum hws_pool the kernel was picked from.
 * @flags: HWS_LAUNCH_*.
 */
struct hws_launch {
	uint64_t cookie;
	uint16_t block_idx;
	uint16_t nr_blocks;
	uint16_t thread_num;
	hws_mask sips;
	hws_mask early;
	uint8_t pool;
	uint8_t flags;
};

/* Counters, since hws_init. */
struct hws_stats {
	uint64_t decisions;	/* hws_decide calls */
	uint64_t launches;	/* decisions that launched */
	uint64_t launches_pool[3];
	uint64_t promotions;
	uint64_t backfills;
	uint64_t early_launches;
	uint64_t fillups;	/* launches chosen by fill-up-first */
	uint64_t trigger_waits;	/* kernels held by block_trigger_cnt */
	uint64_t reservations;	/* groups reserved for an R-task */
};

/**
 * struct hws_kernel_state - one RS entry as the HWS sees it (tests, tools).
 * @pool: enum hws_pool the kernel is in now; HWS_POOL_NONE while
 *	block_trigger_cnt holds it.
 * @top: it is its DAG's top offline-priority kernel.
 * @launched: blocks launched so far.
 * @fail_times: schedule_fail_times (saturates at HWS_FAIL_MAX).
 * @priority: the key it is ordered by in its pool: the online priority in
 *	P (and R), the offline priority in O.
 * @reserved: its reserved SIPs (R-task), else empty.
 */
struct hws_kernel_state {
	uint8_t pool;
	bool top;
	uint16_t launched;
	uint32_t fail_times;
	uint64_t priority;
	hws_mask reserved;
};

#define HWS_POOL_NONE	3
#define HWS_FAIL_BITS	8
#define HWS_FAIL_MAX	((1U << HWS_FAIL_BITS) - 1)

/* ---- The scheduler ---------------------------------------------------------- */

/* What a SIP runs, or has waiting in its shadow slot. */
struct hws_sip_rec {
	uint64_t cookie;
	uint16_t block_idx;
	uint16_t thread_idx;
	uint16_t thread_num;
	uint16_t ctx;
};

/*
 * Per SIP: @end is the estimated end of what it runs (absolute time);
 * @shadow_est the est_time of the early launch waiting for it (its
 * countdown starts at hws_sip_complete).
 */
struct hws_sip {
	uint64_t end;
	uint64_t shadow_est;
	struct hws_sip_rec run;
	struct hws_sip_rec shadow;
};

/* One ready-station entry (hws.c keeps it). */
struct hws_entry {
	uint64_t cookie;
	uint64_t est_time;
	hws_mask affinity;		/* as given, restricted to present SIPs */
	hws_mask reserved;		/* R-task: its reservation */
	uint32_t offline_priority;
	uint16_t block_num;
	uint16_t thread_num;
	uint16_t trigger;
	uint16_t launched;
	uint8_t dag;
	uint8_t ctx;
	uint8_t cls;			/* PTO_HWS_USAGE_* */
	uint8_t group;			/* aligned group size: pow2(thread_num) */
	uint8_t flags;			/* HWS_E_* (hws.c) */
	uint8_t dag_prev;		/* DAG list, by offline priority */
	uint8_t dag_next;
	uint8_t pad;
};

/* One DAG slot (hws.c keeps it). */
struct hws_dag {
	uint32_t total;			/* dag_total_kernel_cnt, 0 unknown */
	uint32_t finished;		/* dag_finish_kernel_cnt */
	uint32_t rank_next;		/* finished count of the next rank */
	uint32_t cp_priority;		/* DAG_cp_priority, 0 none yet */
	uint64_t cp_inv;		/* UINT64_MAX / cp_priority */
	uint8_t rank;			/* scale_ratio rank in force */
	uint8_t open;
	uint8_t dynamic;
	uint8_t head;			/* top kernel (RS entry), or HWS_NONE */
	uint8_t tail;			/* last kernel of the list, or HWS_NONE */
	uint32_t members;		/* RS entries of this DAG */
};

#define HWS_NONE	0xff

/* What the invariant checker keeps of the last launch. */
struct hws_ledger {
	uint64_t blocks_launched;	/* sum over launches */
	uint64_t blocks_departed;	/* block_num of kernels that left */
	uint64_t cfg_gen;		/* hws_configure calls */
	uint64_t last_cfg_gen;		/* cfg_gen at the last launch */
	hws_mask last_sips;
	hws_mask last_affinity;
	uint32_t last_ctx;
	uint32_t last_cls;
	bool last_valid;
};

/*
 * struct hws - one HWS. Declared here so that it can live inside another
 * structure (no allocation); callers touch it only through the functions
 * below. Not thread safe: the caller serializes every call.
 *
 * Everything is kept incrementally: the pools' order, the DAG tops, the
 * fail counts (bit-sliced: bit e of fail[k] is bit k of entry e's count)
 * and the age matrix change on add, launch and completion, so that a
 * decision only walks the order until a kernel fits.
 */
struct hws {
	struct hws_layout layout;
	struct hws_config cfg;
	uint32_t words;			/* mask words in use */
	/* SIP state: idle | busy = present; shadow, pre_idle within busy */
	hws_mask idle;
	hws_mask busy;
	hws_mask shadow;
	hws_mask pre_idle;		/* reported (SIP_REPORT) or predicted */
	hws_mask reserved;		/* reserved_sip_bm */
	uint64_t pre_next;		/* predict: earliest end not yet pre-idle */
	/* RS entry sets, bit e = entry e */
	uint32_t occupied;
	uint32_t eligible;		/* not held by block_trigger_cnt */
	uint32_t pset;			/* DAG tops (P pool unless R) */
	uint32_t fail_over;		/* fail count >= PROMOTE_THRESHOLD */
	uint32_t fail[HWS_FAIL_BITS];
	uint32_t older[HWS_RS_SIZE];	/* age matrix: entries older than e */
	uint8_t r_entry;		/* the R-task, or HWS_NONE */
	uint8_t n_order;		/* entries in the RS */
	/*
	 * R, then P, then O, by priority; and oldest first (FIFO). Bytes from
	 * n_order on are HWS_NONE: the arrays are twice the RS so that an
	 * entry moves in or out with fixed-size 32-byte moves.
	 */
	uint8_t order[2 * HWS_RS_SIZE];
	uint8_t age[2 * HWS_RS_SIZE];
	uint64_t key[HWS_RS_SIZE];	/* order key: pool, then priority */
	uint64_t seq[HWS_RS_SIZE];	/* arrival order: lower is older */
	hws_mask allowed[HWS_RS_SIZE];	/* affinity & usage & present */
	uint64_t next_seq;
	struct hws_entry rs[HWS_RS_SIZE];
	struct hws_dag dag[HWS_MAX_DAGS];
	struct hws_stats st;
	struct hws_ledger chk;
	struct hws_sip sip[HWS_MAX_SIPS];
};

/* Validate @l and @c and start empty: every present SIP idle. */
int hws_init(struct hws *h, const struct hws_layout *l,
	     const struct hws_config *c, char *msg, size_t msglen);
/* New register values; usage masks apply from the next decision. */
int hws_configure(struct hws *h, const struct hws_config *c, char *msg,
		  size_t msglen);

/*
 * initDAGProperty: DAG slot @dag starts, with @total_kernels kernels (0 if
 * unknown) and @dynamic (online priority = offline priority). resetDAG:
 * hws_dag_close forgets it (its kernels must have left the RS).
 */
int hws_dag_open(struct hws *h, uint32_t dag, uint32_t total_kernels,
		 bool dynamic);
int hws_dag_close(struct hws *h, uint32_t dag);

/*
 * A kernel enters the RS. -ENOSPC if the RS is full; -EEXIST if @cookie
 * is there already; -EINVAL if it cannot be placed (thread_num not
 * supported or above cluster_sip_num, no aligned group of its shape in
 * affinity & usage, a cooperative kernel with more blocks than such
 * groups, a DAG slot not open, a context out of range, block_num 0, an
 * est_time above HWS_MAX_SPAN).
 */
int hws_add(struct hws *h, const struct hws_kernel *k, uint64_t now);
/*
 * The kernels in the RS that the present configuration leaves no place
 * for (the test of hws_add(), on their affinity and the usage masks now
 * in force): a changed usage mask can strand a kernel that was added
 * before it, which no decision will launch. Their cookies go to
 * @cookies; how many. The caller takes them out (hws_remove()) and says
 * why to their owner.
 */
uint32_t hws_stranded(const struct hws *h, uint64_t cookies[HWS_RS_SIZE]);
/*
 * The firmware allows more blocks of @cookie (block_trigger_cnt; 0 = all
 * of them). -ENOENT if not in the RS; -EINVAL (nothing changed) if
 * @trigger_cnt is below the blocks already launched. A cooperative
 * kernel launches all at once: its count stays 0.
 */
int hws_set_trigger(struct hws *h, uint64_t cookie, uint16_t trigger_cnt);
/* Take a kernel out of the RS unlaunched (its run was aborted): its
 * reservation is released. -ENOENT if not there. */
int hws_remove(struct hws *h, uint64_t cookie);
/*
 * Take a kernel back out of the RS before any of its blocks was placed,
 * to be added again later (its fail count and reservation go): -ENOENT
 * if not there, -EBUSY if blocks of it were placed (it stays).
 */
int hws_evict(struct hws *h, uint64_t cookie);
/* Room in the RS. */
uint32_t hws_rs_free(const struct hws *h);

/*
 * One scheduling attempt at time @now: 1 and *@out if a block (or a
 * cooperative kernel's blocks) is launched, 0 if nothing can launch now.
 * The launched SIPs are busy until hws_sip_complete. Promotion and
 * reservation happen here, as the policy says.
 */
int hws_decide(struct hws *h, uint64_t now, struct hws_launch *out);

/*
 * SIP real-complete: @sips finished what they ran. Each becomes idle, or
 * busy with the early launch that was waiting for it (its countdown
 * starts now). Completing an idle SIP is an error (-EINVAL, nothing
 * changed).
 */
int hws_sip_complete(struct hws *h, const hws_mask *sips, uint64_t now);
/* SIP pre-complete (HWS_EARLY_SIP_REPORT): @sips are close to finishing;
 * a SIP that already holds a waiting launch stays as it is. Ignored in
 * HWS_EARLY_PREDICT mode; -EINVAL (nothing changed) if one is not busy. */
int hws_sip_pre_complete(struct hws *h, const hws_mask *sips);

/* Status, as the HWS status registers show it. */
void hws_status(const struct hws *h, uint64_t now, hws_mask *idle,
		hws_mask *pre_idle, hws_mask *reserved);
/* Estimated remaining time of what @sip holds: its current work (0 once
 * past its estimate) plus the est_time of a waiting early launch; 0 idle. */
uint64_t hws_sip_remaining(const struct hws *h, uint32_t sip, uint64_t now);
/* The SIPs that hold work: hws_sip_remaining() is 0 for every other. */
void hws_busy(const struct hws *h, hws_mask *busy);
void hws_get_stats(const struct hws *h, struct hws_stats *st);
/* The R-task and the SIPs it holds reserved: 0, or -ENOENT if none. */
int hws_reservation(const struct hws *h, uint64_t *cookie, hws_mask *sips);
/* Kernel @cookie as the HWS sees it: 0, or -ENOENT if not in the RS. */
int hws_kernel_state(const struct hws *h, uint64_t cookie,
		     struct hws_kernel_state *st);

/*
 * The invariant checker: 0, or -EUCLEAN and what is wrong in @msg. Cheap
 * (proportional to SIPs and RS entries): callers run it after every
 * decision in tests and under PTO_HWS_CHECK=1 in ptod.
 */
int hws_check(const struct hws *h, char *msg, size_t msglen);

#endif /* PTO_HWS_H */
