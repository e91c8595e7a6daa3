// SPDX-License-Identifier: MIT
/*
 * pto2_engine.c - the device's scheduler (see pto2_engine.h)
 *
 * Locking. The engine lock protects the HWS, the table of attached
 * runtimes (@rts), the admission state of every runtime (its staged heap,
 * in_rs), the mirror of the ready station (@rs) and the early launches
 * waiting for a core (pto2_ecore.pending). It is held for admissions and
 * decisions (tens of nanoseconds each) and for SIP completions; never
 * while a core's registers or payload are written.
 *
 * Without the lock:
 *  - a core's dispatch (pto2_ecore fields, then @busy with release, then
 *    the payload and DATA_MAIN_BASE) is done by the thread that planned it;
 *    the HWS keeps the core busy until its completion, so no other thread
 *    touches it;
 *  - a core's completion is noticed by whoever runs the pass of the
 *    thread that owns the core (@busy acquire, then COND == FIN of the
 *    dispatch): that thread, or a core thread of the device that assists
 *    it (below, "Assists"); pto2_ethread.pass makes them take turns;
 *  - the runtimes' scan and drain read @rts_pub; a runtime leaves only
 *    after every thread has passed a quiescent point (@qs, even between
 *    loop iterations and while sleeping).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/params.h>

#include "pto2_internal.h"
#include "pto2_record.h"
#include "pto2_status.h"

/* Decisions per hold of the lock; more wait for the next loop. */
#define PTO2_ENGINE_BATCH	16
/* Empty passes of a thread's loop between schedule() calls (schedule_due) */
#define PTO2_SCHED_IDLE_PASSES	8
/* Passes with work in a row an assist runs at most (engine_assist()) */
#define PTO2_ASSIST_ROUNDS	8

/* One core execution: a thread of a block of a task. */
struct pto2_unit {
	PTO2Runtime *rt;
	int32_t task;
	uint32_t core;
	uint16_t block_idx;
	uint16_t block_num;
	uint16_t thread_idx;
	uint16_t thread_num;
};

/* A core, as the engine sees it. */
struct pto2_ecore {
	_Atomic bool busy;	/* a dispatch runs (see the file comment) */
	uint32_t dispatch;	/* its id */
	/* when it should end: dispatch + the task's estimate (ns) */
	_Atomic int64_t expect_ns;
	PTO2Runtime *rt;	/* its task */
	int32_t task;
	bool pending;		/* @pend waits for this core (engine lock) */
	struct pto2_unit pend;
	/*
	 * @withheld: the core is not ours (another executor attached it):
	 * a dispatch to it writes no register and sets @refused, which its
	 * completion poller takes as the dispatch's failure.
	 */
	_Atomic bool withheld;
	_Atomic bool refused;
};

/*
 * A cluster (one block of the device) as pto2_rt_allocate_cluster hands
 * it out (engine lock): allocated by @owner until freed, and reusable once
 * freed and the @tasks submitted on it have completed.
 */
struct pto2_cluster {
	PTO2Runtime *owner;	/* NULL: free */
	bool freed;		/* the owner let it go; waits for @tasks */
	uint32_t tasks;		/* submitted on it, not yet completed */
};

struct pto2_ethread {
	struct pto2_engine *e;
	uint32_t index;
	pthread_t thread;
	bool live;
	uint32_t first, count;		/* the cores it polls */
	uint64_t own[PTO_CORE_MASK_WORDS];	/* the same, as a mask */
	_Atomic uint64_t qs;		/* odd while it may touch runtimes */
	/*
	 * Held by whoever runs a pass for these cores (complete, feed,
	 * schedule, and the qs window around them): the thread itself or an
	 * assisting core thread; @again: an assist found it held, and the
	 * assist that holds it passes once more before it lets go.
	 */
	_Atomic bool pass;
	_Atomic bool again;
	/*
	 * While an assist of core @self_want holds @pass (engine_assist()):
	 * @self_take, the first dispatch the assisting core thread is to run
	 * next is still to come: one to @self_want itself (whose parked flag
	 * that thread may have cleared) or to a parked core, sent no kick;
	 * @self_core, the core it went to.
	 */
	bool self_take;
	uint32_t self_want, self_core;
	uint32_t quiet;			/* sleeps since it last found work */
	/*
	 * How late its timed sleeps in the device ended past their deadline,
	 * a running average (ns): the host's timer slack and wake-up
	 * latency, which a sleep that is to end before a completion must
	 * allow for (sleep_in_device()).
	 */
	int64_t late_ns;
	struct pto2_unit units[PTO_MAX_CORES];	/* one batch's dispatches */
};

_Static_assert(HWS_MAX_DAGS <= 32, "pto2_engine.rts_live is 32 bits");
_Static_assert(PTO2_SCHED_THREADS_MAX <= 256,
	       "pto2_engine.thread_of holds a thread's index in a byte");

/* Sleeps without work after which a thread sleeps wake_sleep_ns. */
#define PTO2_QUIET_SLEEPS	16

struct pto2_engine {
	struct pto2_device dev;
	struct pto2_engine_config cfg;
	struct pto2_logger log;
	uint32_t nr_cores;
	struct pto2_ecore *cores;
	uint16_t sip_of[PTO_MAX_CORES];

	pthread_mutex_t lock;		/* see the file comment */
	pthread_cond_t slot_cond;	/* a DAG slot freed */
	struct hws hws;
	uint64_t rsv_seen;		/* hws.st.reservations probed (lock) */
	struct pto2_status status;	/* the status registers (lock) */
	bool status_owed;		/* HWS changes not in them (lock) */
	PTO2Runtime *rts[HWS_MAX_DAGS];
	/* bit s: rts[s] is set; changed under the lock, read without it */
	_Atomic uint32_t rts_live;
	_Atomic(PTO2Runtime *) rts_pub[HWS_MAX_DAGS];
	uint32_t rr;			/* admission round robin */
	uint64_t rs[HWS_RS_SIZE];	/* cookies in the ready station */
	uint32_t rs_n;
	struct pto2_cluster *clusters;	/* [nr_clusters] */
	uint32_t nr_clusters;
	_Atomic uint64_t cluster_frees;	/* clusters released, ever */

	alignas(64) _Atomic bool dirty;	/* a decision may be possible */
	_Atomic uint32_t next_dispatch;
	/*
	 * Bit c: cores[c].busy may be set. Set before the dispatch's
	 * registers, cleared with @busy by the core's completion poller: the
	 * cores complete() looks at, and how many dispatches run
	 * (busy_count()).
	 */
	_Atomic uint64_t busy_bits[PTO_CORE_MASK_WORDS];
	alignas(64) _Atomic int32_t sleepers;
	_Atomic bool stop;
	struct pto2_ethread *threads;
	uint32_t nr_threads;
	uint8_t thread_of[PTO_MAX_CORES];	/* the thread owning a core */
	bool assisted;			/* dev.assist() set to engine_assist() */

	uint32_t cfg_seq;		/* CFG_SEQ last loaded; odd: none yet */
	/* early launch in SIP report mode (set under the lock) */
	_Atomic bool pre_reports;

	_Atomic uint64_t st_dispatches, st_kicks, st_sleeps, st_admitted;
	_Atomic uint64_t st_early, st_assists, st_evicted;

	/* the block hook (set before use; block_on switches it) */
	pto2_block_fn block_fn;
	void *block_ctx;
	_Atomic bool block_on;
};

static inline uint64_t cookie_of(uint32_t slot, int32_t id)
{
	return (uint64_t)slot << 32 | (uint32_t)id;
}

static inline uint32_t cookie_slot(uint64_t c)
{
	return (uint32_t)(c >> 32);
}

static inline int32_t cookie_task(uint64_t c)
{
	return (int32_t)(uint32_t)c;
}

static inline PTO2TaskDescriptor *task_desc(PTO2Runtime *rt, int32_t id)
{
	return &rt->desc[(uint32_t)id & rt->mask];
}

/* ---- Configuration ------------------------------------------------------ */

void pto2_engine_config_default(struct pto2_engine_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->threads = PTO2_SCHED_THREADS;
	cfg->idle_spins = 2000;
	cfg->idle_ns = 20000;
	cfg->sleep_ns = 1000000;
	cfg->wake_sleep_ns = 100000000;
	cfg->predict_ns = PTO2_ENGINE_PREDICT_NS;
	cfg->predict_late_ns = PTO2_ENGINE_PREDICT_LATE_NS;
	cfg->yield_polls = PTO2_ENGINE_YIELD_POLLS;
}

/* Task @id's kernel has no place on the device: its run fails. */
static void unplaceable(PTO2Runtime *rt, int32_t id, int err)
{
	PTO2TaskDescriptor *d = task_desc(rt, id);

	pto2_rt_fail(rt, err,
		     "kernel %d (task %d): %u block(s) of %u thread(s) cannot be placed on this device's cores (shape, cluster, affinity or usage masks)",
		     d->kernel_id, id, d->block_num, d->thread_num);
}

/*
 * The HWS took a configuration (engine lock held). A kernel in the
 * station that its usage masks now leave no place fails its run, as it
 * would have had it arrived after the change (live_rt() then takes the
 * run's kernels out): no decision would ever launch it.
 */
static void hws_configured(struct pto2_engine *e)
{
	uint64_t stranded[HWS_RS_SIZE];
	uint32_t n, i;

	atomic_store_explicit(&e->pre_reports,
			      e->hws.cfg.early_launch &&
			      e->hws.cfg.early_mode == HWS_EARLY_SIP_REPORT,
			      memory_order_relaxed);
	n = hws_stranded(&e->hws, stranded);
	for (i = 0; i < n; i++)
		unplaceable(e->rts[cookie_slot(stranded[i])],
			    cookie_task(stranded[i]), -EINVAL);
}

int pto2_engine_configure(struct pto2_engine *e, const struct hws_config *c,
			  char *msg, size_t msglen)
{
	int ret;

	pthread_mutex_lock(&e->lock);
	ret = hws_configure(&e->hws, c, msg, msglen);
	if (!ret)
		hws_configured(e);
	pthread_mutex_unlock(&e->lock);
	if (!ret)
		pto2_engine_wake(e);
	return ret;
}

void pto2_engine_get_config(struct pto2_engine *e, struct hws_config *c)
{
	pthread_mutex_lock(&e->lock);
	*c = e->hws.cfg;
	pthread_mutex_unlock(&e->lock);
}

uint32_t pto2_engine_threads(const struct pto2_engine *e)
{
	return e->nr_threads;
}

uint32_t pto2_engine_clusters(const struct pto2_engine *e)
{
	return e->nr_clusters;
}

const struct hws_layout *pto2_engine_layout(const struct pto2_engine *e)
{
	return &e->hws.layout;
}

void pto2_engine_get_stats(struct pto2_engine *e, struct pto2_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->dispatches = atomic_load(&e->st_dispatches);
	st->kicks = atomic_load(&e->st_kicks);
	st->sleeps = atomic_load(&e->st_sleeps);
	st->admitted = atomic_load(&e->st_admitted);
	st->early = atomic_load(&e->st_early);
	st->assists = atomic_load(&e->st_assists);
	st->evicted = atomic_load(&e->st_evicted);
	pthread_mutex_lock(&e->lock);
	hws_get_stats(&e->hws, &st->hws);
	pthread_mutex_unlock(&e->lock);
}

struct PTO2Runtime *pto2_engine_core_runtime(struct pto2_engine *e,
					     uint32_t core)
{
	struct pto2_ecore *ec;

	if (core >= e->nr_cores)
		return NULL;
	ec = &e->cores[core];
	return atomic_load_explicit(&ec->busy, memory_order_acquire) ?
	       ec->rt : NULL;
}

bool pto2_engine_core_dispatch(struct pto2_engine *e, uint32_t core,
			       uint32_t *id, uint64_t *payload)
{
	struct pto2_ecore *ec;

	if (core >= e->nr_cores)
		return false;
	ec = &e->cores[core];
	/* a refused dispatch reached no core: complete() fails it */
	if (!atomic_load_explicit(&ec->busy, memory_order_acquire) ||
	    atomic_load_explicit(&ec->refused, memory_order_relaxed))
		return false;
	*id = ec->dispatch;
	*payload = pto2_payload_dev(ec->rt, core);
	return true;
}

void pto2_engine_withhold(struct pto2_engine *e, const uint64_t *mask,
			  bool withhold)
{
	uint32_t c;

	for (c = 0; c < e->nr_cores; c++)
		if (!mask || (mask[c / 64] & (1ULL << (c % 64))))
			atomic_store_explicit(&e->cores[c].withheld, withhold,
					      memory_order_release);
	pto2_engine_wake(e);
}

bool pto2_engine_withheld(struct pto2_engine *e, uint32_t core)
{
	return core < e->nr_cores &&
	       atomic_load_explicit(&e->cores[core].withheld,
				    memory_order_acquire);
}

/* ---- The HWS registers of the register file ---------------------------- */

/* A core bitmap of the registers as a SIP mask of the layout. */
static void cores_to_sips(const struct pto2_engine *e, const __u64 *cores,
			  hws_mask *m)
{
	uint32_t c;

	memset(m, 0, sizeof(*m));
	for (c = 0; c < e->nr_cores; c++)
		if ((cores[c / 64] >> (c % 64)) & 1)
			hws_mask_set(m, e->sip_of[c]);
}

/* The registers in host form (the usage masks: core bitmaps -> SIPs). */
static void regs_to_config(const struct pto2_engine *e,
			   const struct pto_hws_cfg *r, struct hws_config *c)
{
	uint32_t x, k;
	int64_t margin = r->backfill_margin & 0x7fffffffU;

	memset(c, 0, sizeof(*c));
	c->policy = r->policy == PTO_HWS_POLICY_PTO2 ? HWS_POLICY_FIFO :
		    HWS_POLICY_HWS;
	c->cluster_sip_num = r->cluster_sip_num;
	c->early_launch = r->early_launch_en;
	c->early_mode = r->early_launch_mode;
	c->pre_idle_offset = r->pre_idle_offset;
	c->backfill_margin = (r->backfill_margin & (1U << 31)) ? margin :
			     -margin;
	c->fillup_first = r->fillup_first;
	c->rsvd_first = r->rsvd_first;
	c->promote_rule = r->promote_rule;
	c->promote_threshold = r->promote_threshold;
	c->launch_delay = r->launch_delay;
	memcpy(c->scale_ratio, r->scale_ratio, sizeof(c->scale_ratio));
	for (x = 0; x < HWS_NR_CTX; x++)
		for (k = 0; k < PTO_HWS_USAGE_CLASSES; k++)
			cores_to_sips(e, r->usage_mask[x][k], &c->usage[x][k]);
}

/*
 * Load the configuration registers if CFG_SEQ moved since the last load
 * (engine lock held): 1 loaded, 0 unchanged or being written (the next
 * decision looks again), -EINVAL refused (logged, the previous values
 * stay in force until CFG_SEQ moves again).
 */
static int load_regs_locked(struct pto2_engine *e)
{
	const struct pto_regs_hws *hw = pto_regs_hws(e->dev.regs);
	uint32_t seq = reg_load_acquire(&hw->cfg_seq);
	struct pto_hws_cfg r;
	struct hws_config c;
	char msg[256];

	if (seq == e->cfg_seq || (seq & 1))
		return 0;
	memcpy(&r, (const void *)&hw->cfg, sizeof(r));
	atomic_thread_fence(memory_order_acquire);
	if (reg_load_relaxed(&hw->cfg_seq) != seq)
		return 0;
	e->cfg_seq = seq;
	regs_to_config(e, &r, &c);
	if (hws_configure(&e->hws, &c, msg, sizeof(msg))) {
		pto2_logf(&e->log, PTO2_LOG_ERROR,
			  "HWS registers (CFG_SEQ %u) refused, the previous ones stay: %s",
			  seq, msg);
		return -EINVAL;
	}
	hws_configured(e);
	pto2_logf(&e->log, PTO2_LOG_INFO,
		  "HWS registers (CFG_SEQ %u) in force", seq);
	return 1;
}

int pto2_engine_load_regs(struct pto2_engine *e)
{
	int ret;

	pthread_mutex_lock(&e->lock);
	ret = load_regs_locked(e);
	pthread_mutex_unlock(&e->lock);
	if (ret > 0)
		pto2_engine_wake(e);
	return ret;
}

/* The status registers, from the HWS (engine lock held). */
static void publish_status(struct pto2_engine *e, uint64_t now)
{
	pto2_status_publish(&e->status, &e->hws, pto_regs_hws(e->dev.regs),
			    e->nr_cores, now);
	e->status_owed = false;
}

/* ---- Wake-ups ---------------------------------------------------------------- */

void pto2_engine_wake(struct pto2_engine *e)
{
	atomic_store_explicit(&e->dirty, true, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->sleepers, memory_order_relaxed) > 0 &&
	    e->dev.irq_wake)
		e->dev.irq_wake(e->dev.ctx);
}

void pto2_engine_wake_for_publish(struct pto2_engine *e)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&e->sleepers, memory_order_relaxed) >=
	    (int32_t)e->nr_threads && e->dev.irq_wake)
		e->dev.irq_wake(e->dev.ctx);
}

/* ---- Dispatch -------------------------------------------------------------- */

/* Dispatches running: the cores with their busy_bits bit set. */
static uint32_t busy_count(struct pto2_engine *e)
{
	uint32_t w, n = 0;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		n += hws_popcount64(atomic_load_explicit(&e->busy_bits[w],
							 memory_order_relaxed));
	return n;
}

static uint32_t next_dispatch_id(struct pto2_engine *e, uint32_t last)
{
	uint32_t id;

	do {
		id = atomic_fetch_add_explicit(&e->next_dispatch, 1,
					       memory_order_relaxed) &
		     PTO_COND_ID_MASK;
	} while (id > PTO_TASK_ID_MAX || id == last);
	return id;
}

/*
 * How long a dispatch of task @d should take: the estimate it was given
 * (a task's or its kernel's), else what the kernel's runs have taken by
 * now (an estimate made at submission may predate them).
 */
static uint64_t expected_time(PTO2Runtime *rt, const PTO2TaskDescriptor *d)
{
	uint64_t m;

	if (d->est_declared || !pto_kernel_id_ok(d->kernel_id))
		return d->est_time;
	m = atomic_load_explicit(&rt->kmeasured[d->kernel_id],
				 memory_order_relaxed);
	return m ? m : d->est_time;
}

/* Write @u's payload and announce it to its core. */
static void dispatch(struct pto2_engine *e, struct pto2_ethread *t,
		     const struct pto2_unit *u)
{
	PTO2Runtime *rt = u->rt;
	PTO2TaskDescriptor *d = task_desc(rt, u->task);
	PTO2DispatchPayload *p = pto2_payload(rt, u->core);
	struct pto_core_regs *r = pto_regs_core(e->dev.regs, u->core);
	struct pto2_ecore *ec = &e->cores[u->core];
	int64_t now = pto_mono_ns();	/* one clock read: a vDSO call */
	uint32_t mask = 0;
	int i;

	p->task_id = u->task;
	p->kernel_id = d->kernel_id;
	p->function_bin_addr =
		(d->kernel_id >= 0 &&
		 (uint32_t)d->kernel_id < rt->cfg.nr_kernel_addrs) ?
		rt->cfg.kernel_addrs[d->kernel_id] : 0;
	p->num_args = (uint32_t)d->param_count;
	p->status = 0;
	p->block_idx = u->block_idx;
	p->block_num = u->block_num;
	p->thread_idx = u->thread_idx;
	p->thread_num = u->thread_num;
	p->flags = (d->attr_flags & PTO2_ATTR_COOP) ? PTO2_PAYLOAD_COOP : 0;
	p->exec_ctx = rt->cfg.exec_ctx;
	for (i = 0; i < d->param_count; i++) {
		p->args[i] = d->args[i];
		if (d->param_type[i] != PTO_PARAM_SCALAR)
			mask |= 1U << i;
	}
	p->tensor_mask = mask;

	ec->dispatch = next_dispatch_id(e, ec->dispatch);
	ec->rt = rt;
	ec->task = u->task;
	atomic_store_explicit(&ec->refused,
			      atomic_load_explicit(&ec->withheld,
						   memory_order_acquire),
			      memory_order_relaxed);
	atomic_store_explicit(&ec->expect_ns,
			      now + (int64_t)expected_time(rt, d),
			      memory_order_relaxed);
	atomic_store_explicit(&ec->busy, true, memory_order_release);
	atomic_fetch_or_explicit(&e->busy_bits[u->core / 64],
				 1ULL << (u->core % 64), memory_order_release);
	if (unlikely(atomic_load_explicit(&ec->refused,
					  memory_order_relaxed))) {
		p->status = -EOWNERDEAD;	/* complete() fails it */
		pto2_engine_wake(e);		/* no completion irq comes */
		return;
	}
	reg64_store_relaxed(&r->ts_dispatch,
			    pto_sys_cnt_at(pto_regs_info(e->dev.regs)->sys_cnt_epoch_ns,
					   now));
	reg64_store_relaxed(&r->task, pto2_payload_dev(rt, u->core));
	PTO2_TASK_PROBE(task_dispatch, rt, u->task, d->kernel_id, u->core,
			ec->dispatch);
	reg_store_release(&r->data_main_base, ec->dispatch + 1);
	pto_launch_pending_set(e->dev.regs, u->core);
	atomic_thread_fence(memory_order_seq_cst);
	atomic_fetch_add_explicit(&e->st_dispatches, 1, memory_order_relaxed);
	if (t->self_take &&
	    (u->core == t->self_want || reg_load_relaxed(&r->parked))) {
		/* the assisting core thread runs it: no wake-up */
		t->self_take = false;
		t->self_core = u->core;
		return;
	}
	/*
	 * A dispatch to the assisting core after its thread took another:
	 * that thread may have cleared the core's flag, and it runs the
	 * other first; a sleeper must take this one.
	 */
	if (reg_load_relaxed(&r->parked) ||
	    (t->self_core != UINT32_MAX && u->core == t->self_want)) {
		e->dev.kick(e->dev.ctx, u->core);
		atomic_fetch_add_explicit(&e->st_kicks, 1, memory_order_relaxed);
	}
}

/* ---- Admission: ready tasks into the HWS --------------------------------- */

/* The SIPs a task may use: its type's, its affinity, its cluster. */
static void task_sips(struct pto2_engine *e, PTO2Runtime *rt,
		      const PTO2TaskDescriptor *d, hws_mask *out)
{
	const struct hws_layout *l = &e->hws.layout;
	bool any = true;
	uint32_t w, c;

	(void)rt;
	if (d->worker_type == PTO2_WORKER_MIXED)
		*out = l->present;
	else
		*out = l->type[d->worker_type];
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		any &= !d->affinity[w];
	if (any && d->cluster_id < 0)
		return;
	for (c = 0; c < e->nr_cores; c++) {
		uint32_t sip = e->sip_of[c];
		bool ok = any || ((d->affinity[c / 64] >> (c % 64)) & 1);

		if (d->cluster_id >= 0)
			ok &= sip / l->cluster_slot == (uint32_t)d->cluster_id;
		if (!ok)
			hws_mask_clear(out, sip);
	}
}

/*
 * Move @rt's ready queues into its staged heap: by offline priority for
 * the HWS, in the order they became ready for the PTO2 policy (a counter
 * as the key; it wraps after 2^32 tasks, which only reorders a few).
 */
static bool refill(struct pto2_engine *e, PTO2Runtime *rt, uint32_t thread)
{
	bool fifo = e->hws.cfg.policy == HWS_POLICY_FIFO;
	int type;

	for (type = 0; type < PTO2_NUM_WORKER_TYPES; type++) {
		int32_t id;

		while (!pto2_ready_pop(&rt->rq, type, thread, &id)) {
			uint32_t key = fifo ? UINT32_MAX - rt->ready_seq++ :
				       task_desc(rt, id)->offline_priority;

			if (pto2_heap_push(&rt->staged, key, id))
				pto2_rt_fail(rt, -ENOSPC,
					     "staged ready heap overflow (task %d)",
					     id);
		}
	}
	return !pto2_heap_empty(&rt->staged);
}

static void rs_forget(struct pto2_engine *e, uint64_t cookie)
{
	uint32_t i;

	for (i = 0; i < e->rs_n; i++)
		if (e->rs[i] == cookie) {
			e->rs[i] = e->rs[--e->rs_n];
			return;
		}
}

static int admit_one(struct pto2_engine *e, PTO2Runtime *rt, int32_t id,
		     uint64_t now)
{
	PTO2TaskDescriptor *d = task_desc(rt, id);
	struct hws_kernel k;
	int ret;

	memset(&k, 0, sizeof(k));
	k.cookie = cookie_of((uint32_t)rt->slot, id);
	k.dag = (uint32_t)rt->slot;
	k.ctx = rt->hws_ctx;
	k.block_num = d->block_num;
	k.thread_num = d->thread_num;
	k.coop = d->attr_flags & PTO2_ATTR_COOP;
	k.on_cp = d->attr_flags & PTO2_ATTR_ON_CP;
	k.offline_priority = d->offline_priority;
	k.est_time = d->est_time;
	task_sips(e, rt, d, &k.affinity);
	atomic_store_explicit(&d->threads_left,
			      (int32_t)d->block_num * d->thread_num,
			      memory_order_relaxed);
	ret = hws_add(&e->hws, &k, now);
	if (ret) {
		unplaceable(rt, id, ret);
		return ret;
	}
	e->rs[e->rs_n++] = k.cookie;
	rt->in_rs++;
	PTO2_TASK_PROBE(task_admit, rt, id, d->kernel_id, -1, e->rs_n);
	atomic_fetch_add_explicit(&e->st_admitted, 1, memory_order_relaxed);
	return 0;
}

/* Drop a failed run's kernels from the HWS (engine lock held). */
static void purge_locked(struct pto2_engine *e, PTO2Runtime *rt)
{
	uint32_t i = 0;
	int32_t id;

	while (i < e->rs_n) {
		if (cookie_slot(e->rs[i]) != (uint32_t)rt->slot) {
			i++;
			continue;
		}
		hws_remove(&e->hws, e->rs[i]);
		e->rs[i] = e->rs[--e->rs_n];
	}
	rt->in_rs = 0;
	pto2_heap_reset(&rt->staged);
	for (i = 0; i < PTO2_NUM_WORKER_TYPES; i++)
		while (!pto2_ready_pop(&rt->rq, (int)i, 0, &id))
			;
}

void pto2_engine_purge(struct pto2_engine *e, PTO2Runtime *rt)
{
	pthread_mutex_lock(&e->lock);
	if (rt->slot >= 0)
		purge_locked(e, rt);
	pthread_mutex_unlock(&e->lock);
}

/*
 * Admission: one task at a time from each attached runtime in turn (its
 * highest priority first), so that every DAG with ready work has its
 * most urgent tasks in the ready station, while the station has room.
 *
 * The station's HWS_RS_SIZE entries are the device's, and a kernel keeps
 * its entry until its blocks are placed: the tasks of one runtime that
 * wait for cores they cannot get now (bound to a core its own long
 * kernel holds, or of a type whose cores its kernels all hold) would
 * otherwise keep every other runtime's ready tasks out, idle cores or
 * not. So while more than one runtime has tasks ready, each is first
 * admitted up to its share, HWS_RS_SIZE / (runtimes with tasks ready or
 * in the station); then, with the station full, a runtime below its
 * share that has tasks staged takes entries back from the runtime
 * furthest beyond its share (the lowest offline priority first, never a
 * kernel with blocks placed: hws_evict()), whose tasks are staged again;
 * only then may the station's remaining room go beyond the shares.
 */

/*
 * Runtime @slot (engine lock held), or NULL if its run has failed: its
 * kernels are taken out of the station.
 */
static PTO2Runtime *live_rt(struct pto2_engine *e, uint32_t slot)
{
	PTO2Runtime *rt = e->rts[slot];

	if (!atomic_load_explicit(&rt->error, memory_order_relaxed))
		return rt;
	if (rt->in_rs)
		purge_locked(e, rt);
	return NULL;
}

/* Admit in turns, a runtime up to @cap entries, until a turn admits none. */
static uint32_t admit_turns(struct pto2_engine *e, uint32_t live,
			    uint32_t thread, uint64_t now, uint32_t cap)
{
	uint32_t n = 0, idle = 0, nlive = hws_popcount64(live);

	while (idle < nlive && hws_rs_free(&e->hws)) {
		uint32_t from = e->rr % HWS_MAX_DAGS;
		uint32_t after = live & (~0U << from);
		uint32_t slot = (uint32_t)__builtin_ctz(after ? after : live);
		PTO2Runtime *rt = live_rt(e, slot);
		int32_t id;

		e->rr = slot + 1;
		if (!rt || rt->in_rs >= cap || !refill(e, rt, thread) ||
		    pto2_heap_pop(&rt->staged, &id)) {
			idle++;
			continue;
		}
		idle = 0;
		if (!admit_one(e, rt, id, now))
			n++;
	}
	return n;
}

/* Each runtime's share of the station now (see above). */
static uint32_t rs_share(struct pto2_engine *e, uint32_t live,
			 uint32_t thread)
{
	uint32_t want = 0, m;

	for (m = live; m; m &= m - 1) {
		PTO2Runtime *rt = live_rt(e, (uint32_t)__builtin_ctz(m));

		if (rt && (refill(e, rt, thread) || rt->in_rs))
			want++;
	}
	return want > 1 ? HWS_RS_SIZE / want : HWS_RS_SIZE;
}

/*
 * Take one of @rt's kernels back out of the station: the lowest offline
 * priority of those with no block placed. false if it has none.
 */
static bool evict_one(struct pto2_engine *e, PTO2Runtime *rt)
{
	bool fifo = e->hws.cfg.policy == HWS_POLICY_FIFO;
	uint64_t tried = 0, cookie;
	uint32_t i, best, low = 0;

	for (;;) {
		best = UINT32_MAX;
		for (i = 0; i < e->rs_n; i++) {
			uint32_t prio;

			if (cookie_slot(e->rs[i]) != (uint32_t)rt->slot ||
			    (tried & (1ULL << i)))
				continue;
			prio = task_desc(rt, cookie_task(e->rs[i]))->offline_priority;
			if (best == UINT32_MAX || prio < low) {
				best = i;
				low = prio;
			}
		}
		if (best == UINT32_MAX)
			return false;
		if (!hws_evict(&e->hws, e->rs[best]))
			break;
		tried |= 1ULL << best;	/* blocks of it placed: it stays */
	}
	cookie = e->rs[best];
	e->rs[best] = e->rs[--e->rs_n];
	rt->in_rs--;
	/*
	 * Staged again ahead of its runtime's later tasks: under FIFO it
	 * became ready before every task still staged.
	 */
	if (pto2_heap_push(&rt->staged, fifo ? UINT32_MAX : low,
			   cookie_task(cookie)))
		pto2_rt_fail(rt, -ENOSPC, "staged ready heap overflow (task %d)",
			     cookie_task(cookie));
	atomic_fetch_add_explicit(&e->st_evicted, 1, memory_order_relaxed);
	return true;
}

/*
 * The station is full: runtimes below @share with tasks staged take
 * entries back from the runtime furthest beyond it, one at a time.
 */
static uint32_t rebalance(struct pto2_engine *e, uint32_t live,
			  uint64_t now, uint32_t share)
{
	uint32_t n = 0, round;

	for (round = 0; round < HWS_RS_SIZE && !hws_rs_free(&e->hws);
	     round++) {
		PTO2Runtime *poor = NULL, *rich = NULL;
		uint32_t m;
		int32_t id;

		for (m = live; m; m &= m - 1) {
			PTO2Runtime *rt = live_rt(e, (uint32_t)__builtin_ctz(m));

			if (!rt)
				continue;
			if (rt->in_rs < share &&
			    !pto2_heap_empty(&rt->staged) &&
			    (!poor || rt->in_rs < poor->in_rs))
				poor = rt;
			if (rt->in_rs > share &&
			    (!rich || rt->in_rs > rich->in_rs))
				rich = rt;
		}
		if (!poor || !rich || !evict_one(e, rich))
			break;
		if (!pto2_heap_pop(&poor->staged, &id) &&
		    !admit_one(e, poor, id, now))
			n++;
	}
	return n;
}

static uint32_t admit(struct pto2_engine *e, uint32_t thread, uint64_t now)
{
	uint32_t live = atomic_load_explicit(&e->rts_live,
					     memory_order_relaxed);
	uint32_t share, n;

	if (!(live & (live - 1)))
		return admit_turns(e, live, thread, now, HWS_RS_SIZE);
	share = rs_share(e, live, thread);
	n = admit_turns(e, live, thread, now, share);
	if (share == HWS_RS_SIZE)
		return n;
	n += rebalance(e, live, now, share);
	return n + admit_turns(e, live, thread, now, HWS_RS_SIZE);
}

/* ---- Decisions ----------------------------------------------------------------- */

/* The @k'th SIP of launch @l, @sip: pending on its core or into @units. */
static void plan_unit(struct pto2_engine *e, const struct hws_launch *l,
		      PTO2Runtime *rt, const PTO2TaskDescriptor *d,
		      uint32_t sip, uint32_t k, struct pto2_unit *units,
		      uint32_t *n)
{
	uint32_t core = e->hws.layout.core[sip];
	struct pto2_unit u = {
		.rt = rt,
		.task = cookie_task(l->cookie),
		.core = core,
		.block_idx = (uint16_t)(l->block_idx + k / l->thread_num),
		.block_num = d->block_num,
		.thread_idx = (uint16_t)(k % l->thread_num),
		.thread_num = l->thread_num,
	};

	if (hws_mask_test(&l->early, sip)) {
		e->cores[core].pending = true;
		e->cores[core].pend = u;
		atomic_fetch_add_explicit(&e->st_early, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&rt->run_early, 1,
					  memory_order_relaxed);
		return;
	}
	units[(*n)++] = u;
}

/*
 * Turn a decision into core executions: the SIPs in ascending order are
 * block_idx's threads, then the next block's. Early SIPs get the unit as
 * their pending launch; the others go to @units for dispatch after the
 * lock is dropped. Returns how many went to @units.
 */
static uint32_t plan(struct pto2_engine *e, const struct hws_launch *l,
		     struct pto2_unit *units)
{
	PTO2Runtime *rt = e->rts[cookie_slot(l->cookie)];
	PTO2TaskDescriptor *d = task_desc(rt, cookie_task(l->cookie));
	uint32_t w, k = 0, n = 0;

	/* the launch's SIPs in ascending order, word by word */
	for (w = 0; w < e->hws.words; w++) {
		uint64_t bits;

		for (bits = l->sips.w[w]; bits; bits &= bits - 1) {
			uint32_t sip = w * 64 + (uint32_t)__builtin_ctzll(bits);

			plan_unit(e, l, rt, d, sip, k++, units, &n);
		}
	}
	atomic_fetch_add_explicit(&rt->running, k, memory_order_relaxed);
	/* extra: flags | pool << 8 (bpftrace 0.17 reads arg0 .. arg5) */
	PTO_PROBE8(pto2, task_pick, rt->trace_client, rt->trace_graph,
		   cookie_task(l->cookie), d->kernel_id, -1,
		   (int64_t)(l->flags | (uint32_t)l->pool << 8), k,
		   l->block_idx);
	if (l->flags & HWS_LAUNCH_DONE) {
		rs_forget(e, l->cookie);
		rt->in_rs--;
	}
	return n;
}

/*
 * task_reserve: the HWS reserved cores for a promoted kernel (R pool)
 * since the last look. extra: the reserved cores; core: the first.
 */
static void probe_reserve(struct pto2_engine *e)
{
	PTO2TaskDescriptor *d;
	PTO2Runtime *rt;
	uint64_t cookie;
	hws_mask sips;
	int first;

	if (e->hws.st.reservations == e->rsv_seen)
		return;
	e->rsv_seen = e->hws.st.reservations;
	if (hws_reservation(&e->hws, &cookie, &sips))
		return;
	rt = e->rts[cookie_slot(cookie)];
	d = task_desc(rt, cookie_task(cookie));
	first = hws_mask_first(&sips);
	PTO2_TASK_PROBE(task_reserve, rt, cookie_task(cookie), d->kernel_id,
			first < 0 ? -1 : (int32_t)e->hws.layout.core[first],
			hws_mask_weight(&sips));
}

static void check_hws(struct pto2_engine *e)
{
	char msg[256];

	if (e->cfg.check && hws_check(&e->hws, msg, sizeof(msg))) {
		pto2_logf(&e->log, PTO2_LOG_ERROR, "HWS invariant broken: %s",
			  msg);
		abort();
	}
}

static _Atomic uint64_t *pre_bell(const struct pto2_engine *e)
{
	return PTO_REG64(pto_regs_hws(e->dev.regs)->sip_report_pre_complete);
}

/*
 * SIP_REPORT_PRE_COMPLETE, in SIP report mode (engine lock held): the
 * doorbell is emptied, and the reporting cores that are still busy become
 * pre-idle SIPs. A core's bit goes when complete() takes its completion,
 * under this lock, so a bit found here was set by the dispatch the HWS
 * holds the core busy with. Outside report mode the bits stay for
 * complete() to drop.
 */
static void take_pre_reports_locked(struct pto2_engine *e)
{
	_Atomic uint64_t *bell = pre_bell(e);
	hws_mask sips, idle;
	uint32_t w, i;
	bool any = false;

	if (!atomic_load_explicit(&e->pre_reports, memory_order_relaxed))
		return;
	memset(&sips, 0, sizeof(sips));
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t bits = atomic_load_explicit(&bell[w],
						     memory_order_relaxed);

		if (!bits)
			continue;
		bits = atomic_exchange_explicit(&bell[w], 0,
						memory_order_acquire);
		for (; bits; bits &= bits - 1) {
			uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(bits);

			if (c < e->nr_cores &&
			    atomic_load_explicit(&e->cores[c].busy,
						 memory_order_relaxed)) {
				hws_mask_set(&sips, e->sip_of[c]);
				any = true;
			}
		}
	}
	if (!any)
		return;
	/*
	 * hws_sip_pre_complete() refuses the whole mask if one SIP is idle
	 * in the HWS; a busy core's is not (completions clear busy first,
	 * then complete the SIP under this lock), but a lost report costs
	 * only an early launch, a refused mask every report of the round
	 */
	hws_status(&e->hws, 0, &idle, NULL, NULL);
	for (i = 0; i < HWS_MASK_WORDS; i++)
		sips.w[i] &= ~idle.w[i];
	hws_sip_pre_complete(&e->hws, &sips);
}

/* The reports of completed cores @fin[0..@n) go (engine lock held). */
static void drop_pre_reports_locked(struct pto2_engine *e,
				    const uint32_t *fin, uint32_t n)
{
	uint64_t done[PTO_CORE_MASK_WORDS] = { 0 };
	_Atomic uint64_t *bell = pre_bell(e);
	uint32_t i, w;

	for (i = 0; i < n; i++)
		done[fin[i] / 64] |= 1ULL << (fin[i] % 64);
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		if (atomic_load_explicit(&bell[w], memory_order_relaxed) &
		    done[w])
			atomic_fetch_and_explicit(&bell[w], ~done[w],
						  memory_order_relaxed);
}

/*
 * Admit ready tasks and run decisions; dispatch what they launched.
 * With @wait the lock is waited for, else a busy lock means another
 * thread is doing it. Returns the work done.
 */
static int schedule(struct pto2_ethread *t, bool wait)
{
	struct pto2_engine *e = t->e;
	struct hws_launch l;
	uint32_t n = 0, units = 0, i, admitted;
	uint64_t now = (uint64_t)pto_mono_ns();

	if (wait)
		pthread_mutex_lock(&e->lock);
	else if (pthread_mutex_trylock(&e->lock))
		return 0;
	atomic_store_explicit(&e->dirty, false, memory_order_relaxed);
	if (e->cfg.follow_regs)
		load_regs_locked(e);
	take_pre_reports_locked(e);
	admitted = admit(e, t->index, now);
	while (n < PTO2_ENGINE_BATCH && hws_decide(&e->hws, now, &l) == 1) {
		if (PTO_USDT_ENABLED(pto2, task_reserve))
			probe_reserve(e);
		units += plan(e, &l, t->units + units);
		check_hws(e);
		n++;
	}
	if (PTO_USDT_ENABLED(pto2, task_reserve))
		probe_reserve(e);
	if (n < PTO2_ENGINE_BATCH && e->rs_n)
		PTO_PROBE2(pto2, hws_wait, e->rs_n,
			   busy_count(e));
	if (n == PTO2_ENGINE_BATCH || (admitted && hws_rs_free(&e->hws) == 0))
		atomic_store_explicit(&e->dirty, true, memory_order_relaxed);
	if (n)
		e->status_owed = true;
	else if (e->status_owed)
		publish_status(e, now);
	pthread_mutex_unlock(&e->lock);
	for (i = 0; i < units; i++)
		dispatch(e, t, &t->units[i]);
	/*
	 * The status registers after the dispatches, not on their path; with
	 * the lock taken meanwhile, a later schedule() publishes them (every
	 * thread calls one that waits for the lock before it sleeps).
	 */
	if (n && !pthread_mutex_trylock(&e->lock)) {
		if (e->status_owed)
			publish_status(e, now);
		pthread_mutex_unlock(&e->lock);
	}
	return (int)(n + admitted);
}

/* ---- Completions ---------------------------------------------------------------- */

/* A core execution of @rt's run: @busy ns running after @wait ns waiting. */
static void run_account(PTO2Runtime *rt, uint64_t busy, uint64_t wait)
{
	uint64_t old = atomic_load_explicit(&rt->run_wait_max_ns,
					    memory_order_relaxed);

	atomic_fetch_add_explicit(&rt->run_blocks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->run_busy_ns, busy, memory_order_relaxed);
	atomic_fetch_add_explicit(&rt->run_wait_ns, wait, memory_order_relaxed);
	while (wait > old &&
	       !atomic_compare_exchange_weak(&rt->run_wait_max_ns, &old, wait))
		;
}

static int64_t epoch_of(const struct pto2_engine *e)
{
	return pto_regs_info(e->dev.regs)->sys_cnt_epoch_ns;
}

/* The block hook is on: tell it about the block that ran on @core. */
static void block_hook(struct pto2_engine *e, PTO2Runtime *rt, int32_t id,
		       int32_t kid, uint32_t core,
		       const struct pto_core_regs *r)
{
	struct pto2_block_event ev = {
		.client = rt->trace_client, .core = core,
		.graph = rt->trace_graph, .task = id, .kernel = kid,
		.dispatch_ns = pto_sys_cnt_to_ns(epoch_of(e), r->ts_dispatch),
		.start_ns = pto_sys_cnt_to_ns(epoch_of(e), r->ts_start),
		.end_ns = pto_sys_cnt_to_ns(epoch_of(e), r->ts_end),
	};

	if (e->block_fn)
		e->block_fn(e->block_ctx, &ev);
}

void pto2_engine_set_block_hook(struct pto2_engine *e, pto2_block_fn fn,
				void *ctx)
{
	e->block_fn = fn;
	e->block_ctx = ctx;
}

void pto2_engine_block_hook_enable(struct pto2_engine *e, bool on)
{
	atomic_store_explicit(&e->block_on, on, memory_order_relaxed);
}

/*
 * What one block of a kernel takes, measured: the core's ts_end - ts_start
 * folded into the kernel's running estimate (weight 1/8), which ready
 * tasks of a kernel without a declared cost use.
 */
static void measure(struct pto2_engine *e, PTO2Runtime *rt, int32_t id,
		    int32_t kid, uint32_t core)
{
	const struct pto_core_regs *r = pto_regs_core(e->dev.regs, core);
	uint64_t s = r->ts_start, f = r->ts_end, ns, old;

	if (!pto_kernel_id_ok(kid) || f < s)
		return;
	ns = PTO_EST_CLAMP((f - s) * PTO_NS_PER_SYS_CNT);
	run_account(rt, ns, s >= r->ts_dispatch ?
			    (s - r->ts_dispatch) * PTO_NS_PER_SYS_CNT : 0);
	if (rt->rec)
		pto2_record_block(rt, id, core,
				  pto_sys_cnt_to_ns(epoch_of(e), r->ts_dispatch),
				  pto_sys_cnt_to_ns(epoch_of(e), s),
				  pto_sys_cnt_to_ns(epoch_of(e), f));
	if (atomic_load_explicit(&e->block_on, memory_order_relaxed))
		block_hook(e, rt, id, kid, core, r);
	old = atomic_load_explicit(&rt->kmeasured[kid], memory_order_relaxed);
	atomic_store_explicit(&rt->kmeasured[kid],
			      old ? old - old / 8 + ns / 8 : ns,
			      memory_order_relaxed);
}

/*
 * A core execution of @rt's task @id finished with @status; @ran: it ran
 * (a refused dispatch did not: no times to measure, its failure said).
 */
static void finish_unit(struct pto2_ethread *t, PTO2Runtime *rt, int32_t id,
			uint32_t core, int32_t status, bool ran)
{
	PTO2TaskDescriptor *d = task_desc(rt, id);

	if (ran)
		measure(t->e, rt, id, d->kernel_id, core);
	if (unlikely(status < 0) && ran)
		pto2_rt_fail(rt, -EIO,
			     "kernel %d failed with %d (task %d on core %u)",
			     d->kernel_id, status, id, core);
	if (atomic_fetch_sub_explicit(&d->threads_left, 1,
				      memory_order_acq_rel) == 1)
		pto2_rt_task_done(rt, t->index, id);
	atomic_fetch_sub_explicit(&rt->running, 1, memory_order_release);
}

/* Notice the completions of this thread's cores. Returns how many. */
static int complete(struct pto2_ethread *t)
{
	struct pto2_engine *e = t->e;
	struct pto2_unit pend[PTO_MAX_CORES];
	uint32_t fin[PTO_MAX_CORES];
	uint32_t c, n = 0, np = 0, i, w;
	hws_mask done;

	memset(&done, 0, sizeof(done));
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t bits = t->own[w] ?
				atomic_load_explicit(&e->busy_bits[w],
						     memory_order_acquire) &
				t->own[w] : 0;

		for (; bits; bits &= bits - 1) {
			struct pto2_ecore *ec;
			PTO2Runtime *rt;
			int32_t status;
			bool refused;

			c = w * 64 + (uint32_t)__builtin_ctzll(bits);
			ec = &e->cores[c];
			if (!atomic_load_explicit(&ec->busy,
						  memory_order_acquire))
				continue;
			refused = atomic_load_explicit(&ec->refused,
						       memory_order_relaxed);
			if (!refused &&
			    reg_load_acquire(&pto_regs_core(e->dev.regs,
							    c)->cond) !=
			    PTO_COND_DONE(ec->dispatch))
				continue;
			rt = ec->rt;
			status = pto2_payload(rt, c)->status;
			if (unlikely(refused)) {
				atomic_store_explicit(&ec->refused, false,
						      memory_order_relaxed);
				pto2_rt_fail(rt, -EIO,
					     "kernel %d (task %d) was not dispatched: core %u is attached by another executor",
					     task_desc(rt, ec->task)->kernel_id,
					     ec->task, c);
			}
			PTO2_TASK_PROBE(task_complete, rt, ec->task,
					task_desc(rt, ec->task)->kernel_id, c,
					status);
			atomic_store_explicit(&ec->busy, false,
					      memory_order_relaxed);
			/* no dispatch to @c before hws_sip_complete() below */
			atomic_fetch_and_explicit(&e->busy_bits[w],
						  ~(1ULL << (c % 64)),
						  memory_order_relaxed);
			finish_unit(t, rt, ec->task, c, status, !refused);
			hws_mask_set(&done, e->sip_of[c]);
			fin[n++] = c;
		}
	}
	if (!n)
		return 0;
	pthread_mutex_lock(&e->lock);
	/* a core's report was set before its completion, which we saw */
	drop_pre_reports_locked(e, fin, n);
	hws_sip_complete(&e->hws, &done, (uint64_t)pto_mono_ns());
	e->status_owed = true;		/* idle SIPs: the next schedule() */
	for (i = 0; i < n; i++) {
		struct pto2_ecore *ec = &e->cores[fin[i]];

		if (ec->pending) {
			ec->pending = false;
			pend[np++] = ec->pend;
		}
	}
	atomic_store_explicit(&e->dirty, true, memory_order_relaxed);
	pthread_mutex_unlock(&e->lock);
	for (i = 0; i < np; i++)
		dispatch(e, t, &pend[i]);
	return (int)n;
}

/* ---- Threads ---------------------------------------------------------------------- */

/* Scan and drain every attached runtime. Returns the work done. */
/*
 * With every core busy, what becomes ready can wait for a core to free:
 * scanning the tasks the orchestrators publish as they publish them only
 * steals their cache lines (the ready station keeps filling from what is
 * already staged), and the completion that frees a core wakes a thread.
 */
static bool feed_deferred(struct pto2_engine *e)
{
	return busy_count(e) >= e->nr_cores;
}

static int feed(struct pto2_ethread *t)
{
	struct pto2_engine *e = t->e;
	uint32_t m;
	int n = 0;

	if (feed_deferred(e))
		return 0;
	for (m = atomic_load_explicit(&e->rts_live, memory_order_acquire);
	     m; m &= m - 1) {
		uint32_t s = (uint32_t)__builtin_ctz(m);
		PTO2Runtime *rt = atomic_load_explicit(&e->rts_pub[s],
						       memory_order_acquire);

		if (!rt || atomic_load_explicit(&rt->held, memory_order_acquire))
			continue;
		n += pto2_rt_scan(rt, t->index);
		n += pto2_rt_drain(rt, t->index);
	}
	return n;
}

static bool work_pending(struct pto2_ethread *t)
{
	struct pto2_engine *e = t->e;
	uint32_t c, m;

	if (atomic_load(&e->stop) || atomic_load(&e->dirty))
		return true;
	if (atomic_load_explicit(&e->pre_reports, memory_order_relaxed))
		for (m = 0; m < PTO_CORE_MASK_WORDS; m++)
			if (atomic_load_explicit(&pre_bell(e)[m],
						 memory_order_relaxed))
				return true;
	for (c = t->first; c < t->first + t->count; c++) {
		struct pto2_ecore *ec = &e->cores[c];

		if (atomic_load_explicit(&ec->busy, memory_order_acquire) &&
		    (atomic_load_explicit(&ec->refused, memory_order_relaxed) ||
		     reg_load_acquire(&pto_regs_core(e->dev.regs, c)->cond) ==
		     PTO_COND_DONE(ec->dispatch)))
			return true;
	}
	/* feed() would not take them: no reason to stay awake */
	if (feed_deferred(e))
		return false;
	for (m = atomic_load(&e->rts_live); m; m &= m - 1) {
		PTO2Runtime *rt = atomic_load(&e->rts_pub[__builtin_ctz(m)]);

		if (rt && !atomic_load(&rt->held) && pto2_rt_feed_pending(rt))
			return true;
	}
	return false;
}

static void set_irq_en(struct pto2_ethread *t, bool on)
{
	struct pto2_engine *e = t->e;
	uint32_t c;

	for (c = t->first; c < t->first + t->count; c++)
		reg_store_relaxed(&pto_regs_core(e->dev.regs, c)->irq_en,
				  on && atomic_load_explicit(&e->cores[c].busy,
							     memory_order_relaxed));
}

/*
 * The earliest expected end of a dispatch on this thread's cores that is
 * not overdue by more than predict_late_ns; INT64_MAX if none.
 */
static int64_t next_expected(struct pto2_ethread *t, int64_t now)
{
	struct pto2_engine *e = t->e;
	int64_t next = INT64_MAX;
	uint32_t c;

	for (c = t->first; c < t->first + t->count; c++) {
		struct pto2_ecore *ec = &e->cores[c];
		int64_t x;

		if (!atomic_load_explicit(&ec->busy, memory_order_relaxed))
			continue;
		x = atomic_load_explicit(&ec->expect_ns, memory_order_relaxed);
		if (x < next && now - x < (int64_t)e->cfg.predict_late_ns)
			next = x;
	}
	return next;
}

/*
 * How long before a dispatch's expected end @t polls instead of
 * sleeping: predict_ns, and as much again as its sleeps end late.
 */
static int64_t poll_ahead(const struct pto2_ethread *t)
{
	return (int64_t)t->e->cfg.predict_ns + t->late_ns;
}

/*
 * Keep polling instead of sleeping: a dispatch of ours should end within
 * poll_ahead() (or ended lately, within predict_late_ns): the completion
 * is then noticed at once, without an interrupt and a wake-up.
 */
static bool completion_due(struct pto2_ethread *t, int64_t now)
{
	return t->e->cfg.predict_ns &&
	       next_expected(t, now) - now <= poll_ahead(t);
}

/*
 * A sleep of @t that was to end at @deadline ended at @now, on @ret (0:
 * an interrupt or a wake): fold how late it ended into @t->late_ns. A
 * timeout tells how late the timer fired; an interrupt after the
 * deadline, that the timer had not fired yet (the least lateness, which
 * also teaches a thread whose every sleep the next completion ends);
 * one before it, nothing.
 */
static void sleep_ended(struct pto2_ethread *t, int ret, int64_t deadline,
			int64_t now)
{
	int64_t late = now - deadline;

	if (ret != -ETIMEDOUT && late <= 0)
		return;
	if (late < 0)
		late = 0;
	if (late > PTO2_ENGINE_LATE_MAX_NS)
		late = PTO2_ENGINE_LATE_MAX_NS;
	t->late_ns += (late - t->late_ns) / 8;
}

/* ---- Passes and assists ----------------------------------------------------- */

/* Take @t's pass; false: somebody else runs it. */
static bool pass_take(struct pto2_ethread *t)
{
	return !atomic_exchange(&t->pass, true);
}

static void pass_give(struct pto2_ethread *t)
{
	atomic_store(&t->pass, false);
}

/*
 * @t's pass on the caller's thread, which holds it: complete, feed and
 * schedule, again while @again is set. @want: the core whose thread
 * assists (UINT32_MAX: a thread with no core of its own,
 * pto2_engine_help()); *@next in and out as for engine_assist(). The
 * work found.
 */
static int pass_held(struct pto2_ethread *t, uint32_t want, uint32_t *next)
{
	struct pto2_engine *e = t->e;
	int work, rounds, all = 0;

	t->self_take = *next == UINT32_MAX;
	t->self_want = want;
	t->self_core = *next;
	atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
	while (atomic_exchange(&t->again, false)) {
		rounds = 0;
		do {
			work = complete(t);
			work += feed(t);
			work += schedule(t, false);
			/* owed: the lock was busy, a batch cut short */
			if (atomic_load_explicit(&e->dirty,
						 memory_order_relaxed))
				work += schedule(t, true);
			all += work;
		} while (work > 0 && ++rounds < PTO2_ASSIST_ROUNDS &&
			 atomic_load_explicit(&e->dirty,
					      memory_order_relaxed));
	}
	atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
	t->self_take = false;
	*next = t->self_core;
	t->self_core = UINT32_MAX;
	return all;
}

/*
 * Assists. On a host with fewer CPUs than the device has cores and
 * scheduler threads, a scheduler thread that is to notice a completion
 * may be waiting for the CPU of the very core thread that posted it, or
 * sleeping: the completion then costs a context switch or an interrupt
 * and a wake-up before the task's dependents can be dispatched. A device
 * whose core threads live in this process (the sim device: dev.assist)
 * has them run the pass of the scheduler thread that owns the core
 * instead, right after the core's COND says FIN: they notice the
 * completion, release its dependents, admit them and run the decisions,
 * and the dependents' dispatches may go to the core thread that made
 * them. Registers, payloads, the HWS and its decisions are the same as
 * the scheduler thread's own; only the host thread differs.
 *
 * The pass is @t->pass: held by the thread or by one assist at a time. An
 * assist that finds it held sets @again and gives up: if the holder is
 * the thread, the thread's poll or the completion interrupt (irq_en, the
 * core thread raises it as it would without assists) covers the
 * completion; if it is an assist, that assist finds @again after it let
 * go and passes once more. Returns true if this call ran a pass after
 * the caller's completion was posted: the completion is handled, no
 * interrupt is needed. *@next: the core of the dispatch the pass sent no
 * kick for (dispatch(), @self_take), which the caller runs next.
 */
static bool engine_assist(void *arg, uint32_t core, uint32_t *next)
{
	struct pto2_engine *e = arg;
	struct pto2_ethread *t;
	bool ran = false;

	*next = UINT32_MAX;
	/* not a dispatch of this engine's: its interrupt is not ours to skip */
	if (core >= e->nr_cores ||
	    !atomic_load_explicit(&e->cores[core].busy, memory_order_acquire))
		return false;
	t = &e->threads[e->thread_of[core]];
	atomic_store(&t->again, true);
	while (!atomic_load_explicit(&e->stop, memory_order_relaxed) &&
	       pass_take(t)) {
		ran = true;
		pass_held(t, core, next);
		pass_give(t);
		if (!atomic_load(&t->again))
			break;
	}
	/* decisions left (a long burst): the threads take them over */
	if (ran && atomic_load_explicit(&e->dirty, memory_order_relaxed))
		pto2_engine_wake(e);
	if (ran)
		atomic_fetch_add_explicit(&e->st_assists, 1,
					  memory_order_relaxed);
	return ran;
}

bool pto2_engine_help(struct pto2_engine *e, uint32_t *next)
{
	bool worked = false;
	uint32_t i;

	*next = UINT32_MAX;
	/* a dispatch sent no kick must have a thread of the device to run it */
	if (!e->assisted)
		return false;
	for (i = 0; i < e->nr_threads; i++) {
		struct pto2_ethread *t = &e->threads[i];

		/* a pass held is run by its holder: nothing owed to this one */
		if (atomic_load_explicit(&e->stop, memory_order_relaxed) ||
		    !pass_take(t))
			continue;
		atomic_store(&t->again, true);	/* pass_held() runs once */
		worked |= pass_held(t, UINT32_MAX, next) > 0;
		pass_give(t);
	}
	/* decisions left (a long burst): the threads take them over */
	if (worked && atomic_load_explicit(&e->dirty, memory_order_relaxed))
		pto2_engine_wake(e);
	return worked;
}

/*
 * Sleep in the device until a completion interrupt, a wake, the bound or
 * poll_ahead() before a dispatch of ours should end. The bound is sleep_ns
 * while the engine is busy; after PTO2_QUIET_SLEEPS sleeps without work
 * in a row, and with irq_wake (which new work uses), wake_sleep_ns: an
 * idle engine wakes ten times a second instead of a thousand.
 */
static void sleep_in_device(struct pto2_ethread *t)
{
	struct pto2_engine *e = t->e;
	uint32_t count = e->dev.irq_count(e->dev.ctx);
	bool quiet = e->dev.irq_wake && ++t->quiet > PTO2_QUIET_SLEEPS;
	int64_t now = pto_mono_ns();
	int64_t until = now + (int64_t)(quiet ? e->cfg.wake_sleep_ns :
					     e->cfg.sleep_ns);
	int64_t next = e->cfg.predict_ns ? next_expected(t, now) : INT64_MAX;
	int64_t ahead = poll_ahead(t);
	bool pending;

	if (next != INT64_MAX && next - ahead < until)
		until = next - ahead;
	set_irq_en(t, true);
	atomic_fetch_add_explicit(&e->sleepers, 1, memory_order_seq_cst);
	atomic_thread_fence(memory_order_seq_cst);
	/* it reads published runtimes: inside a quiescent-state window */
	atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
	pending = work_pending(t);
	atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
	pass_give(t);	/* assists run the passes while it sleeps */
	if (!pending && until > now) {
		int ret = e->dev.irq_wait(e->dev.ctx, &count, until);

		sleep_ended(t, ret, until, pto_mono_ns());
		atomic_fetch_add_explicit(&e->st_sleeps, 1,
					  memory_order_relaxed);
	}
	atomic_fetch_sub_explicit(&e->sleepers, 1, memory_order_relaxed);
	set_irq_en(t, false);
}

/*
 * One empty poll of ethread_main(), the @idle'th in a row. Every
 * yield_polls'th gives the CPU away: a thread that polls for a
 * completion it expects soon would otherwise hold its CPU until
 * predict_late_ns or its time slice runs out while the very thread that
 * is to run the kernel, or the orchestrator that is to submit the next
 * task, waits for that CPU. Measured on two CPUs (pto-bench-peers, the
 * sim device): with the orchestrator and this thread held on one CPU, a
 * serial chain took 517 us a hop, 6-8 with the yields; with the core
 * threads held on one CPU, a 1 -> 72 -> 1 fan 570-620 us a graph, 81
 * with them. With no other thread waiting for the CPU a yield returns
 * at once.
 */
static void idle_poll(const struct pto2_engine *e, uint32_t idle)
{
	if (e->cfg.yield_polls && !(idle % e->cfg.yield_polls))
		sched_yield();
	else
		cpu_relax();
}

/*
 * Whether a pass of ethread_main() runs schedule(): after work, when a
 * decision may be possible (@dirty: a task became ready, a DAG came or
 * went, a batch was cut short) and every PTO2_SCHED_IDLE_PASSES'th empty
 * pass, for the decisions that time alone allows (a core turning
 * pre-idle). An empty schedule() took about 60% of an idle pass: the
 * completion it waits for was noticed that much later.
 */
static bool schedule_due(const struct pto2_ethread *t, int work, uint32_t idle)
{
	return work || !(idle % PTO2_SCHED_IDLE_PASSES) ||
	       atomic_load_explicit(&t->e->dirty, memory_order_relaxed);
}

static void *ethread_main(void *arg)
{
	struct pto2_ethread *t = arg;
	struct pto2_engine *e = t->e;
	uint32_t idle = 0;
	int64_t idle_t0 = 0;
	int due = -1;	/* a completion is due: -1 not looked yet */
	/*
	 * The time cap only with irq_wake: without it, work published while
	 * every thread sleeps waits for sleep_ns.
	 */
	uint64_t idle_ns = e->dev.irq_wake ? e->cfg.idle_ns : 0;

	/*
	 * The sleep that ends predict_ns before a completion must end on
	 * time: with the default 50 us of timer slack it ended after the
	 * completion as often as not, which the interrupt then reported.
	 */
	prctl(PR_SET_TIMERSLACK, PTO2_ENGINE_TIMER_SLACK_NS, 0, 0, 0);
	while (!atomic_load_explicit(&e->stop, memory_order_acquire)) {
		int work;

		if (!pass_take(t)) {
			/* a core thread runs it (engine_assist()): give way */
			idle_poll(e, 0);
			continue;
		}
		atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
		work = complete(t);
		work += feed(t);
		if (schedule_due(t, work, idle))
			work += schedule(t, false);
		atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
		if (work) {
			pass_give(t);
			idle = 0;
			due = -1;
			t->quiet = 0;
			continue;
		}
		if (!idle)
			idle_t0 = pto_mono_ns();
		if (++idle < e->cfg.idle_spins &&
		    (!idle_ns || (idle & 7) ||
		     (uint64_t)(pto_mono_ns() - idle_t0) < idle_ns)) {
			pass_give(t);
			idle_poll(e, idle);
			continue;
		}
		/* past the idle budget: on while a completion is due */
		if (due < 0 || !(idle & 63))
			due = completion_due(t, pto_mono_ns());
		if (due) {
			pass_give(t);
			idle_poll(e, idle);
			continue;
		}
		idle = 0;
		due = -1;
		/* a decision needs the lock: make sure none is owed */
		atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
		work = schedule(t, true);
		atomic_fetch_add_explicit(&t->qs, 1, memory_order_seq_cst);
		if (!work)
			sleep_in_device(t);	/* gives the pass */
		else
			pass_give(t);
	}
	return NULL;
}

/*
 * Wait until every thread has been outside its loop body at least once
 * since now: a runtime unpublished before this call is no longer touched.
 */
static void quiesce(struct pto2_engine *e)
{
	uint64_t snap[PTO2_SCHED_THREADS_MAX];
	uint32_t i;

	for (i = 0; i < e->nr_threads; i++)
		snap[i] = atomic_load(&e->threads[i].qs);
	for (i = 0; i < e->nr_threads; i++)
		while ((snap[i] & 1) && atomic_load(&e->threads[i].qs) == snap[i])
			sched_yield();
}

/* ---- Clusters --------------------------------------------------------------------- */

static void cluster_put(struct pto2_engine *e, uint32_t id)
{
	struct pto2_cluster *cl = &e->clusters[id];

	if (cl->owner && cl->freed && !cl->tasks) {
		cl->owner = NULL;
		cl->freed = false;
		atomic_fetch_add_explicit(&e->cluster_frees, 1,
					  memory_order_release);
	}
}

int pto2_engine_cluster_alloc(struct pto2_engine *e, PTO2Runtime *rt,
			      bool *mine)
{
	uint32_t user = rt->cfg.cluster_user, held = 0, i;
	bool others = false, user_others = false;
	int ret = -EAGAIN, free_id = -1;

	pthread_mutex_lock(&e->lock);
	for (i = 0; i < e->nr_clusters; i++) {
		PTO2Runtime *owner = e->clusters[i].owner;
		bool same = owner && user && owner->cfg.cluster_user == user;

		if (!owner) {
			if (free_id < 0)
				free_id = (int)i;
			continue;
		}
		held += same;
		/*
		 * Another runtime's, or one this runtime freed whose tasks
		 * still run: either comes back without this orchestrator.
		 */
		if (owner != rt || e->clusters[i].freed) {
			others = true;
			user_others |= same;
		}
	}
	if (user && rt->cfg.cluster_limit && held >= rt->cfg.cluster_limit) {
		/* the user's limit: only its own runtimes can free one */
		*mine = !user_others;
		ret = -EDQUOT;
	} else if (free_id >= 0) {
		struct pto2_cluster *cl = &e->clusters[free_id];

		cl->owner = rt;
		cl->freed = false;
		cl->tasks = 0;
		ret = free_id;
	} else {
		*mine = !others;
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

uint64_t pto2_engine_cluster_frees(struct pto2_engine *e)
{
	return atomic_load_explicit(&e->cluster_frees, memory_order_acquire);
}

int pto2_engine_cluster_free(struct pto2_engine *e, PTO2Runtime *rt,
			     int32_t id)
{
	int ret = 0;

	pthread_mutex_lock(&e->lock);
	if (id < 0 || (uint32_t)id >= e->nr_clusters ||
	    e->clusters[id].owner != rt || e->clusters[id].freed) {
		ret = -EINVAL;
	} else {
		e->clusters[id].freed = true;
		cluster_put(e, (uint32_t)id);
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

int pto2_engine_cluster_task(struct pto2_engine *e, PTO2Runtime *rt,
			     int32_t id, bool done)
{
	struct pto2_cluster *cl;
	int ret = 0;

	pthread_mutex_lock(&e->lock);
	cl = id >= 0 && (uint32_t)id < e->nr_clusters ? &e->clusters[id] :
							 NULL;
	if (!cl || cl->owner != rt || (!done && cl->freed)) {
		ret = -EINVAL;
	} else if (done) {
		cl->tasks--;
		cluster_put(e, (uint32_t)id);
	} else {
		cl->tasks++;
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

/* A run ends: whatever it still holds is freed (its tasks are done). */
static void clusters_release_locked(struct pto2_engine *e, PTO2Runtime *rt)
{
	uint32_t i;

	for (i = 0; i < e->nr_clusters; i++)
		if (e->clusters[i].owner == rt) {
			e->clusters[i].freed = true;
			e->clusters[i].tasks = 0;
			cluster_put(e, i);
		}
}

/* ---- Runs ---------------------------------------------------------------------- */

/*
 * How often a run waiting for a DAG slot looks at its own error: an abort
 * (its client gone or stopped) does not take the engine's lock to signal.
 */
#define ATTACH_ERROR_POLL_NS	100000000LL

int pto2_engine_attach(struct pto2_engine *e, PTO2Runtime *rt)
{
	struct timespec ts;
	uint32_t s;
	int ret;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		for (s = 0; s < HWS_MAX_DAGS && e->rts[s]; s++)
			;
		if (s < HWS_MAX_DAGS)
			break;
		/* every slot held (by open graphs, maybe for good): the run
		 * must stay abortable while it waits */
		ret = atomic_load_explicit(&rt->error, memory_order_acquire);
		if (ret) {
			pthread_mutex_unlock(&e->lock);
			return ret;
		}
		ts = pto_cond_deadline(ATTACH_ERROR_POLL_NS);
		pthread_cond_timedwait(&e->slot_cond, &e->lock, &ts);
	}
	ret = hws_dag_open(&e->hws, s, rt->dag_total, rt->dag_dynamic);
	if (!ret) {
		rt->slot = (int32_t)s;
		rt->in_rs = 0;
		pto2_heap_reset(&rt->staged);
		e->rts[s] = rt;
		atomic_store_explicit(&e->rts_pub[s], rt, memory_order_release);
		atomic_fetch_or_explicit(&e->rts_live, 1U << s,
					 memory_order_release);
	}
	pthread_mutex_unlock(&e->lock);
	if (!ret)
		pto2_engine_wake(e);
	return ret;
}

void pto2_engine_detach(struct pto2_engine *e, PTO2Runtime *rt)
{
	uint32_t s;

	pthread_mutex_lock(&e->lock);
	if (rt->slot < 0) {
		pthread_mutex_unlock(&e->lock);
		return;
	}
	s = (uint32_t)rt->slot;
	purge_locked(e, rt);
	clusters_release_locked(e, rt);
	atomic_fetch_and_explicit(&e->rts_live, ~(1U << s),
				  memory_order_relaxed);
	atomic_store_explicit(&e->rts_pub[s], NULL, memory_order_release);
	e->rts[s] = NULL;
	hws_dag_close(&e->hws, s);
	rt->slot = -1;
	pthread_cond_broadcast(&e->slot_cond);
	pthread_mutex_unlock(&e->lock);
	quiesce(e);
}

/* ---- Create / destroy ------------------------------------------------------------ */

static int engine_threads_start(struct pto2_engine *e)
{
	uint32_t i, c, n = e->nr_threads;
	int ret;

	for (i = 0; i < n; i++) {
		struct pto2_ethread *t = &e->threads[i];

		t->e = e;
		t->index = i;
		t->self_core = UINT32_MAX;	/* no assist yet */
		t->first = i * e->nr_cores / n;
		t->count = (i + 1) * e->nr_cores / n - t->first;
		memset(t->own, 0, sizeof(t->own));
		for (c = t->first; c < t->first + t->count; c++) {
			t->own[c / 64] |= 1ULL << (c % 64);
			e->thread_of[c] = (uint8_t)i;
		}
		ret = -pthread_create(&t->thread, NULL, ethread_main, t);
		if (ret)
			return ret;
		t->live = true;
	}
	return 0;
}

void pto2_engine_destroy(struct pto2_engine *e)
{
	uint32_t i;

	if (!e)
		return;
	/* no assist runs once this returns */
	if (e->assisted)
		e->dev.assist(e->dev.ctx, NULL, e);
	atomic_store(&e->stop, true);
	pto2_engine_wake(e);
	for (i = 0; e->threads && i < e->nr_threads; i++)
		if (e->threads[i].live)
			pthread_join(e->threads[i].thread, NULL);
	free(e->threads);
	free(e->clusters);
	free(e->cores);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->slot_cond);
	free(e);
}

static int engine_hws_init(struct pto2_engine *e)
{
	struct hws_layout l;
	char msg[256];
	uint32_t sip;
	int ret;

	ret = hws_layout_device(&l, e->dev.nr_aic, e->dev.nr_aiv);
	if (ret)
		return ret;
	if (!e->cfg.hws_set)
		hws_config_default(&e->cfg.hws, &l);
	ret = hws_init(&e->hws, &l, &e->cfg.hws, msg, sizeof(msg));
	if (ret) {
		pto2_logf(&e->log, PTO2_LOG_ERROR, "HWS: %s", msg);
		return ret;
	}
	for (sip = 0; sip < l.nr_sips; sip++)
		if (hws_mask_test(&l.present, sip))
			e->sip_of[l.core[sip]] = (uint16_t)sip;
	hws_configured(e);
	pto2_status_reset(&e->status);
	return 0;
}

/*
 * Scheduler threads as the AICPU sizes them: one per
 * PTO2_BLOCKS_PER_SCHED_THREAD blocks of the device, at most
 * @cfg->threads; and, since the cores' kernels run on the same host, at
 * most half its CPUs. At least one.
 */
static uint32_t engine_threads(const struct pto2_device *dev,
			       const struct pto2_engine_config *cfg)
{
	uint32_t blocks = dev->nr_aic > (dev->nr_aiv + 1) / 2 ?
			  dev->nr_aic : (dev->nr_aiv + 1) / 2;
	uint32_t n = (blocks + PTO2_BLOCKS_PER_SCHED_THREAD - 1) /
		     PTO2_BLOCKS_PER_SCHED_THREAD;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (n > cfg->threads)
		n = cfg->threads;
	if (cpus > 1 && n > (uint32_t)cpus / 2)
		n = (uint32_t)cpus / 2;
	return n ? n : 1;
}

int pto2_engine_create(const struct pto2_device *dev,
		       const struct pto2_engine_config *cfg,
		       struct pto2_engine **out)
{
	struct pto2_engine *e;
	int ret;

	*out = NULL;
	if (!dev || !cfg || !dev->regs || !dev->kick || !dev->irq_count ||
	    !dev->irq_wait || dev->nr_aic + dev->nr_aiv == 0 ||
	    dev->nr_aic + dev->nr_aiv > PTO_MAX_CORES || !cfg->threads ||
	    cfg->threads > PTO2_SCHED_THREADS_MAX)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->dev = *dev;
	e->cfg = *cfg;
	e->log.fn = cfg->log;
	e->log.ctx = cfg->log_ctx;
	e->nr_cores = dev->nr_aic + dev->nr_aiv;
	e->cfg_seq = 1;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->slot_cond, NULL);
	e->nr_threads = engine_threads(dev, cfg);
	e->cores = calloc(e->nr_cores, sizeof(*e->cores));
	e->threads = calloc(e->nr_threads, sizeof(*e->threads));
	e->nr_clusters = dev->nr_aic > (dev->nr_aiv + 1) / 2 ?
			 dev->nr_aic : (dev->nr_aiv + 1) / 2;
	e->clusters = calloc(e->nr_clusters, sizeof(*e->clusters));
	if (!e->cores || !e->threads || !e->clusters) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = engine_hws_init(e);
	if (ret)
		goto fail;
	ret = engine_threads_start(e);
	if (ret)
		goto fail;
	/* another engine's assists (-EBUSY): this one's threads do it all */
	if (e->dev.assist && !e->dev.assist(e->dev.ctx, engine_assist, e))
		e->assisted = true;
	*out = e;
	return 0;
fail:
	pto2_engine_destroy(e);
	return ret;
}
