// SPDX-License-Identifier: MIT
/*
 * pto_exec_pool.c - the host threads that run an executor's cores (see
 * pto_exec.h, pto_exec_pool_start())
 *
 * A core is taken by one thread at a time: its claim flag. A thread looks
 * for a core whose DATA_MAIN_BASE moved since the value last acted on
 * (@last), claims it, acts (pto_exec_run_task() for a dispatch), and lets
 * it go. With nothing to take it spins briefly (longer right after a task:
 * linger_ns, for the task's dependents), then sleeps on all of the
 * pool's cores at once: under @lock it counts itself idle and sets the
 * parked flag of every core not done, fences, looks once more, and
 * calls ops->park_any. The AICPU kicks a parked core after it dispatches
 * to it, which wakes one sleeping thread; a kick for work another thread
 * took meanwhile stays latched, and a thread it wakes looks once more and
 * sleeps again (stale_kicks). The last idle thread to wake clears the
 * parked flags, so that a busy pool is not kicked (pto.ko clears them
 * sooner, with the kick that wakes the last thread asleep in the
 * device; a thread then finds one clear on its way to sleep, and is
 * sent back to set them again: a stale kick too, ex->unparks).
 *
 * Growth: threads beyond cfg.workers start when a dispatch would wait on
 * kernels that do not finish: before a launch whose kernels run together
 * (cooperative, or a block of several cores), enough threads for the
 * other cores of the launch; and when every thread runs a kernel and a
 * core with work was not taken for grow_ns (the monitor thread watches
 * only while every thread is busy). A thread beyond cfg.workers that had
 * nothing to do for retire_ns exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pto-private/compiler.h>
#include <pto-private/futex.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>
#include <pto-private/usdt.h>

#include "pto_cpu_share.h"
#include "pto_exec.h"

PTO_USDT_DEFINE(pto_aicore, park);
PTO_USDT_DEFINE(pto_aicore, wake);

/* Looks at a core another thread holds for a moment (step()) */
#define POOL_CLAIM_TRIES	64
/* A lingering thread scans the cores and yields after this many polls. */
#define POOL_LINGER_YIELD	64
/*
 * spin()'s yields in PTO_EXEC_YIELD_AUTO: the host's runnable threads are
 * sampled at most every POOL_YIELD_SAMPLE_NS; more than its CPUs plus
 * POOL_YIELD_SLACK stops the yields for POOL_YIELD_HOLD_NS; no more than
 * its CPUs stops them until the next sample.
 */
#define POOL_YIELD_SAMPLE_NS	10000000LL
#define POOL_YIELD_HOLD_NS	20000000LL
#define POOL_YIELD_SLACK	2

struct pool_core {
	_Atomic uint32_t claim;		/* 1 while a thread acts for it */
	_Atomic uint32_t last;		/* DATA_MAIN_BASE last acted on */
	_Atomic bool done;		/* stopped (EXIT, or the AICPU gone) */
};

enum { SLOT_EMPTY, SLOT_LIVE, SLOT_EXITED };

struct pool_thread {
	struct pto_exec_pool *p;
	pthread_t th;
	uint32_t idx;
	int state;			/* SLOT_*, under the pool's lock */
	struct pto_cpu_share share;	/* its late yields (yield_cpu()) */
};

struct pto_exec_pool {
	struct pto_exec *ex;
	struct pto_exec_pool_config cfg;
	uint32_t ncores;
	uint16_t list[PTO_MAX_CORES];	/* the cores served */
	struct pool_core core[PTO_MAX_CORES];	/* by device core */
	_Atomic uint32_t ndone;
	_Atomic int error;		/* park_any's failure: all stop */
	_Atomic uint32_t scan;		/* where the next look starts */
	_Atomic uint32_t busy;		/* threads running a kernel */
	_Atomic uint32_t live;		/* threads running (@nthreads) */
	_Atomic uint32_t helpers;	/* in pto_exec_pool_help() */
	_Atomic uint32_t lingering;	/* threads in linger() */
	/* the host's load (host_sample()) and what spin()'s yields take */
	_Atomic uint32_t runnable;	/* the last sample's runnable threads */
	_Atomic bool yield_ok;		/* yield_pays() */
	_Atomic int64_t yield_sampled;	/* last sample (mono ns) */
	_Atomic int64_t yield_held;	/* no yields before (mono ns) */
	uint32_t host_cpus;
	/* cfg.hand_over_ns in system counter ticks, UINT64_MAX: never */
	uint64_t hand_over_cnt;
	_Atomic uint64_t hand_overs;
	_Atomic uint64_t stale_kicks;
	_Atomic uint64_t moves;		/* yield_cpu()'s */
	int64_t late_ns;		/* pto_cpu_share_late_ns() */
	/*
	 * Protects @nthreads, the changes of @idle (read without it too),
	 * @slots, the statistics and the parked flags of the cores as a set
	 * (set while @idle > 0).
	 */
	pthread_mutex_t lock;
	pthread_cond_t gone;		/* @nthreads reached 0 */
	uint32_t nthreads;
	_Atomic uint32_t idle;
	struct pool_thread *slots;	/* [ncores] */
	struct pto_exec_pool_stats st;
	/* the monitor: sleeps on @mon_word unless every thread is busy */
	pthread_t mon;
	bool mon_live;
	_Atomic uint32_t mon_word;
	_Atomic bool watching;
	_Atomic bool stop;
};

static struct pto_core_regs *pregs(struct pto_exec_pool *p, uint32_t c)
{
	return pto_regs_core(p->ex->regs, c);
}

/* Is @c (a core number from the device, any value) one this pool serves? */
static bool serves(const struct pto_exec_pool *p, uint32_t c)
{
	return c < PTO_MAX_CORES && (p->cfg.cores[c / 64] >> (c % 64) & 1);
}

/* Threads that may run a kernel now: the pool's and its helpers. */
static uint32_t runners(struct pto_exec_pool *p)
{
	return atomic_load(&p->live) + atomic_load(&p->helpers);
}

static bool finished(struct pto_exec_pool *p)
{
	return atomic_load(&p->ndone) == p->ncores ||
	       atomic_load_explicit(&p->error, memory_order_relaxed);
}

static void core_done(struct pto_exec_pool *p, uint32_t c)
{
	if (!atomic_exchange(&p->core[c].done, true))
		atomic_fetch_add(&p->ndone, 1);
}

/* Has core @c work nobody took? */
static bool pending(struct pto_exec_pool *p, uint32_t c)
{
	struct pool_core *pc = &p->core[c];

	return !atomic_load_explicit(&pc->claim, memory_order_relaxed) &&
	       !atomic_load_explicit(&pc->done, memory_order_relaxed) &&
	       reg_load_acquire(&pregs(p, c)->data_main_base) !=
	       atomic_load_explicit(&pc->last, memory_order_relaxed);
}

/*
 * Claim core @c if it has work: 1; 0 if it has none; -1 if another
 * thread holds it.
 */
static int take_core(struct pto_exec_pool *p, uint32_t c)
{
	struct pool_core *pc = &p->core[c];
	uint32_t zero = 0;

	if (atomic_load_explicit(&pc->done, memory_order_relaxed))
		return 0;
	if (!atomic_compare_exchange_strong(&pc->claim, &zero, 1))
		return -1;
	if (reg_load_acquire(&pregs(p, c)->data_main_base) !=
	    atomic_load_explicit(&pc->last, memory_order_relaxed))
		return 1;
	atomic_store_explicit(&pc->claim, 0, memory_order_release);
	return 0;
}

/*
 * Claim a core the AICPU announced in SIP_LAUNCH_PENDING, taking its bit;
 * its index, or -1. A bit of a core another thread holds goes back: the
 * holder acts on the value it read, the bit says there may be a newer.
 */
static int take(struct pto_exec_pool *p)
{
	_Atomic uint64_t *pend =
		PTO_REG64(pto_regs_hws(p->ex->regs)->sip_launch_pending);
	uint32_t w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t bits = atomic_load_explicit(&pend[w],
						     memory_order_relaxed) &
				p->cfg.cores[w];

		while (bits) {
			uint64_t bit = bits & -bits;
			uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(bit);
			int got;

			bits &= ~bit;
			if (!(atomic_fetch_and(&pend[w], ~bit) & bit))
				continue;
			got = take_core(p, c);
			if (got > 0)
				return (int)c;
			if (got < 0)
				atomic_fetch_or(&pend[w], bit);
		}
	}
	return -1;
}

/*
 * Every core, for an AICPU that announces dispatches by DATA_MAIN_BASE
 * and kicks alone: a claimed core with work, or -1.
 */
static int take_scan(struct pto_exec_pool *p)
{
	uint32_t start = atomic_fetch_add_explicit(&p->scan, 1,
						   memory_order_relaxed);
	uint32_t k;

	for (k = 0; k < p->ncores; k++) {
		uint32_t c = p->list[(start + k) % p->ncores];

		if (pending(p, c) && take_core(p, c) > 0)
			return (int)c;
	}
	return -1;
}

static uint32_t count_pending(struct pto_exec_pool *p)
{
	uint32_t k, n = 0;

	for (k = 0; k < p->ncores; k++)
		n += pending(p, p->list[k]);
	return n;
}

/* ---- Threads ------------------------------------------------------------- */

static void *worker_main(void *arg);

/* Start one more thread (lock held); false if at the limit or it failed. */
static bool spawn_locked(struct pto_exec_pool *p)
{
	struct pool_thread *t = NULL;
	char name[16];
	uint32_t i;

	if (p->nthreads >= p->ncores || atomic_load(&p->stop))
		return false;
	for (i = 0; i < p->ncores && !t; i++)
		if (p->slots[i].state != SLOT_LIVE)
			t = &p->slots[i];
	if (!t)
		return false;
	if (t->state == SLOT_EXITED)
		pthread_join(t->th, NULL);
	t->state = SLOT_LIVE;
	if (pthread_create(&t->th, NULL, worker_main, t)) {
		t->state = SLOT_EMPTY;
		return false;
	}
	snprintf(name, sizeof(name), "%.8s%u", p->cfg.name ? p->cfg.name : "core",
		 t->idx);
	pthread_setname_np(t->th, name);
	p->nthreads++;
	atomic_store(&p->live, p->nthreads);
	if (p->nthreads > p->st.peak)
		p->st.peak = p->nthreads;
	if (p->nthreads > p->cfg.workers)
		p->st.grown++;
	return true;
}

/* This thread leaves (lock held). */
static void exit_locked(struct pto_exec_pool *p, struct pool_thread *t)
{
	t->state = SLOT_EXITED;
	p->nthreads--;
	atomic_store(&p->live, p->nthreads);
	if (!p->nthreads)
		pthread_cond_broadcast(&p->gone);
}

/*
 * Before a launch whose kernels run together: a thread free (not running
 * a kernel) for every other core of the launch, this one running.
 */
static void ensure_together(struct pto_exec_pool *p,
			    const PTO2DispatchPayload *pl)
{
	int64_t others, free;

	others = (pl->flags & PTO2_PAYLOAD_COOP) ?
		 (int64_t)pl->block_num * pl->thread_num - 1 :
		 (int64_t)pl->thread_num - 1;
	pthread_mutex_lock(&p->lock);
	/* helpers run kernels too: busy counts them */
	free = (int64_t)p->nthreads + atomic_load(&p->helpers) -
	       atomic_load(&p->busy) - 1;
	while (free < others && spawn_locked(p))
		free++;
	pthread_mutex_unlock(&p->lock);
}

/* Every thread runs a kernel: have the monitor watch for stalls. */
static void poke_monitor(struct pto_exec_pool *p)
{
	if (atomic_exchange(&p->watching, true))
		return;
	atomic_fetch_add(&p->mon_word, 1);
	pto_futex_wake(&p->mon_word, 1);
}

static void *monitor_main(void *arg)
{
	struct pto_exec_pool *p = arg;
	struct timespec grow = pto_ns_to_timespec(p->cfg.grow_ns);

	while (!atomic_load(&p->stop)) {
		uint32_t w = atomic_load(&p->mon_word);

		if (!atomic_load(&p->watching)) {
			pto_futex_wait(&p->mon_word, w, NULL);
			continue;
		}
		/* grow_ns, or until stopped (join bumps the word) */
		pto_futex_wait(&p->mon_word, w, &grow);
		if (atomic_load(&p->stop))
			break;
		if (atomic_load(&p->busy) < runners(p)) {
			atomic_store(&p->watching, false);
			/*
			 * A thread that got busy after the look above found
			 * @watching still set and did not poke: look again
			 * now that it is clear (either that look sees the
			 * thread busy, or the thread's poke sees it clear).
			 */
			if (atomic_load(&p->busy) >= runners(p))
				atomic_store(&p->watching, true);
			continue;
		}
		if (!count_pending(p))
			continue;
		pthread_mutex_lock(&p->lock);
		spawn_locked(p);
		pthread_mutex_unlock(&p->lock);
	}
	return NULL;
}

/* ---- A core's step ------------------------------------------------------- */

static bool runs_together(const PTO2DispatchPayload *pl)
{
	return pl && ((pl->flags & PTO2_PAYLOAD_COOP) || pl->thread_num > 1);
}

/*
 * Act on claimed core @c's new DATA_MAIN_BASE, then let the core go;
 * true if it ran a task whose completion the AICPU polls for (no
 * completion interrupt asked): the AICPU is awake and may dispatch the
 * task's dependents at once, worth lingering for. *@then: a core this
 * thread has claimed and runs next, or -1: the device's assist gave it
 * work and woke nobody for it (pto_exec_ops.task_done).
 */
static bool step(struct pto_exec_pool *p, uint32_t c, int *then)
{
	struct pto_core_regs *r = pregs(p, c);
	struct pool_core *pc = &p->core[c];
	uint32_t dmb = reg_load_acquire(&r->data_main_base);
	uint32_t next = UINT32_MAX;
	bool polled = false;

	*then = -1;
	atomic_store_explicit(&pc->last, dmb, memory_order_relaxed);
	if (dmb == PTO_DMB_EXIT) {
		core_done(p, c);	/* stays claimed: nobody looks again */
		return false;
	}
	if (dmb == PTO_DMB_IDLE) {
		reg_store_release(&r->cond, PTO_COND_IDLE);
	} else {
		const PTO2DispatchPayload *pl =
			pto_gm_ptr(&p->ex->gm, reg64_load_acquire(&r->task),
				   sizeof(*pl));

		if (runs_together(pl))
			ensure_together(p, pl);
		if (atomic_fetch_add(&p->busy, 1) + 1 >= runners(p))
			poke_monitor(p);
		next = pto_exec_run_task(p->ex, c, dmb - 1);
		atomic_fetch_sub(&p->busy, 1);
		polled = !pto_exec_irq_wanted(p->ex, c);
	}
	atomic_store_explicit(&pc->claim, 0, memory_order_release);
	/*
	 * Work nobody was woken for: ours. A thread that looks at the core
	 * holds it for a moment: wait that out. One that holds it longer
	 * runs it (SIP_LAUNCH_PENDING keeps it announced until then). The
	 * core's parked flag stays as the sleepers set it: this thread does
	 * not look at the core again while it runs the task, so a dispatch
	 * there after this one must still wake one of them.
	 */
	if (next < p->ex->nr_aic + p->ex->nr_aiv && serves(p, next)) {
		int got, i;

		for (i = 0; (got = take_core(p, next)) < 0 &&
			    i < POOL_CLAIM_TRIES; i++)
			cpu_relax();
		if (got > 0) {
			*then = (int)next;
			return polled;
		}
	}
	if (polled && reg64_load_acquire(&r->ts_end) -
		      reg64_load_acquire(&r->ts_start) >= p->hand_over_cnt) {
		/* cfg.hand_over_ns: the polling AICPU may share this CPU */
		atomic_fetch_add_explicit(&p->hand_overs, 1,
					  memory_order_relaxed);
		sched_yield();
	}
	return polled;
}

/* ---- Sleeping ------------------------------------------------------------- */

/* Parked flags of the cores not done, into @mask (lock held). */
static void park_cores_locked(struct pto_exec_pool *p, uint64_t *mask)
{
	uint32_t k;

	memset(mask, 0, PTO_CORE_MASK_WORDS * sizeof(*mask));
	for (k = 0; k < p->ncores; k++) {
		uint32_t c = p->list[k];

		if (atomic_load(&p->core[c].done))
			continue;
		mask[c / 64] |= 1ULL << (c % 64);
		reg_store_relaxed(&pregs(p, c)->parked, 1);
	}
}

/*
 * After a wake-up that found no work: the parked flag again of every core
 * of @mask whose flag is clear (pto.ko may have cleared them all, and it
 * sends a thread back at once for a clear flag in its set). A flag
 * already set is only read, so that the AICPU's copy of its line stays
 * valid.
 */
static void repark_cores(struct pto_exec_pool *p, const uint64_t *mask)
{
	uint32_t w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t m;

		for (m = mask[w]; m; m &= m - 1) {
			struct pto_core_regs *r =
				pregs(p, w * 64 + (uint32_t)__builtin_ctzll(m));

			if (!reg_load_relaxed(&r->parked))
				reg_store_relaxed(&r->parked, 1);
		}
	}
}

static void unpark_cores_locked(struct pto_exec_pool *p)
{
	uint32_t k;

	for (k = 0; k < p->ncores; k++)
		reg_store_relaxed(&pregs(p, p->list[k])->parked, 0);
}

/* Nothing can come any more: the AICPU went and no core has work. */
static void check_aicpu(struct pto_exec_pool *p)
{
	uint32_t k;

	if (reg_load_acquire(&pto_regs_info(p->ex->regs)->aicpu_attached) ||
	    count_pending(p))
		return;
	for (k = 0; k < p->ncores; k++)
		if (!atomic_load(&p->core[p->list[k]].claim))
			core_done(p, p->list[k]);
}

/*
 * Sleep until a core may have work: returns a claimed core (found when
 * looking once more after announcing the sleep), or -1 to look again.
 * A surplus thread that waited retire_ns for nothing leaves: -2.
 */
static int sleep_on_cores(struct pto_exec_pool *p)
{
	uint64_t mask[PTO_CORE_MASK_WORDS];
	int64_t now = pto_mono_ns(), deadline;
	uint32_t hint = UINT32_MAX;
	bool surplus;
	int c, ret;

	pthread_mutex_lock(&p->lock);
	surplus = p->nthreads > p->cfg.workers;
	atomic_fetch_add(&p->idle, 1);
	park_cores_locked(p, mask);
	pthread_mutex_unlock(&p->lock);
	atomic_thread_fence(memory_order_seq_cst);

	ret = 0;
	deadline = now + (int64_t)(surplus ? p->cfg.retire_ns : p->cfg.park_ns);
	for (;;) {
		/* once more after announcing the sleep, and after a stale kick */
		c = take(p);
		if (c < 0)
			c = take_scan(p);
		if (c >= 0 || finished(p))
			break;
		PTO_PROBE1(pto_aicore, park, p->ncores);
		atomic_fetch_add_explicit(&p->ex->parks, 1,
					  memory_order_relaxed);
		ret = p->ex->ops->park_any(p->ex, mask, deadline, &hint);
		PTO_PROBE2(pto_aicore, wake, hint, ret);
		if (ret || !serves(p, hint))
			break;
		if (take_core(p, hint) > 0) {
			c = (int)hint;
			break;
		}
		/*
		 * Kicked for work another thread took (it found the core in
		 * SIP_LAUNCH_PENDING first): the kick stayed latched. Look
		 * once more and sleep again rather than spin: after a burst of
		 * dispatches every latched kick sent a thread through spin(),
		 * and on two CPUs those spins held off the AICPU thread that
		 * was dispatching (a 1 -> 72 -> 1 fan took 5-10 times as long).
		 * The device cleared the core's parked flag with the kick
		 * (pto.ko perhaps the others too: ex->unparks): set it again
		 * before looking, or the next dispatch to that core would not
		 * kick. Only that one elsewhere: the others' flags are either
		 * set or cleared by the thread that took their core, which
		 * looks at every core when it lets it go; a flag set there
		 * would make a dispatch wake a thread for nothing.
		 */
		if (p->ex->unparks)
			repark_cores(p, mask);
		else
			reg_store_relaxed(&pregs(p, hint)->parked, 1);
		atomic_thread_fence(memory_order_seq_cst);
		atomic_fetch_add_explicit(&p->stale_kicks, 1,
					  memory_order_relaxed);
	}

	pthread_mutex_lock(&p->lock);
	if (c < 0)
		p->st.empty_wakes++;
	if (atomic_fetch_sub(&p->idle, 1) == 1)
		unpark_cores_locked(p);
	if (ret == -ETIMEDOUT && surplus && p->nthreads > p->cfg.workers) {
		p->st.retired++;
		pthread_mutex_unlock(&p->lock);
		return -2;
	}
	pthread_mutex_unlock(&p->lock);
	if (ret && ret != -ETIMEDOUT && ret != -EINTR) {
		atomic_store(&p->error, ret);
		return -1;
	}
	if (c < 0)
		check_aicpu(p);
	return c;
}

/* ---- The worker ----------------------------------------------------------- */

/* Runnable threads on the host (the fourth field of /proc/loadavg), 0 if unknown. */
static uint32_t host_runnable(void)
{
	char buf[128];
	unsigned int n = 0;
	ssize_t len;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	if (sscanf(buf, "%*s %*s %*s %u/", &n) != 1)
		return 0;
	return n;
}

/*
 * The host's runnable threads, the pool's one reader of them: read at
 * most every POOL_YIELD_SAMPLE_NS (one thread at a time; the others get
 * the last sample), or now with @fresh (yield_cpu()'s move, which must
 * see the host as it is). Each reading also decides spin()'s yields in
 * PTO_EXEC_YIELD_AUTO: they pay only while the host runs more threads
 * than CPUs (a thread waits for the CPU the spinner holds: with no one
 * waiting, a yield is a system call that delays the next take; a serial
 * chain lost 0.5 us a hop to it), and not for POOL_YIELD_HOLD_NS after a
 * reading found more than CPUs plus POOL_YIELD_SLACK (other work on the
 * host, whose threads a yield would hand the CPU to) or none. 0: unknown.
 */
static uint32_t host_sample(struct pto_exec_pool *p, int64_t now, bool fresh)
{
	int64_t last = atomic_load_explicit(&p->yield_sampled,
					    memory_order_relaxed);
	uint32_t n;

	if (fresh)
		atomic_store_explicit(&p->yield_sampled, now,
				      memory_order_relaxed);
	else if (now - last < POOL_YIELD_SAMPLE_NS ||
		 !atomic_compare_exchange_strong(&p->yield_sampled, &last, now))
		return atomic_load_explicit(&p->runnable, memory_order_relaxed);
	n = host_runnable();
	atomic_store_explicit(&p->runnable, n, memory_order_relaxed);
	if (!n || n > p->host_cpus + POOL_YIELD_SLACK)
		atomic_store_explicit(&p->yield_held, now + POOL_YIELD_HOLD_NS,
				      memory_order_relaxed);
	atomic_store_explicit(&p->yield_ok,
			      n > p->host_cpus &&
			      now >= atomic_load_explicit(&p->yield_held,
							  memory_order_relaxed),
			      memory_order_relaxed);
	return n;
}

/* Whether spin() yields (PTO_EXEC_YIELD_AUTO): host_sample() says. */
static bool yield_pays(struct pto_exec_pool *p, int64_t now)
{
	host_sample(p, now, false);
	return atomic_load_explicit(&p->yield_ok, memory_order_relaxed);
}

/*
 * sched_yield(), and what it tells: after a run of late yields (company on
 * this CPU, pto_cpu_share.h), the thread moves to another CPU if the host
 * runs no more threads than it has CPUs, so that one is idle. With more,
 * as while an orchestrator submits beside the two, a move only trades
 * company (independent tasks took 10% longer with every run moving).
 */
static void yield_cpu(struct pto_exec_pool *p, struct pto_cpu_share *sh)
{
	int64_t t0 = pto_mono_ns(), t1;
	uint32_t n;

	sched_yield();
	t1 = pto_mono_ns();
	if (!pto_cpu_share_yielded(sh, t1 - t0 >= p->late_ns, t1))
		return;
	n = host_sample(p, t1, true);	/* this thread included */
	if (n && n <= p->host_cpus && !pto_cpu_move_off(sched_getcpu()))
		atomic_fetch_add_explicit(&p->moves, 1, memory_order_relaxed);
}

/*
 * Look for work a little before sleeping; a claimed core or -1. It yields
 * its CPU every 16 polls (ex->spin_yield; in auto mode while the host is
 * not busy, yield_pays()): on a host with fewer CPUs than busy threads,
 * the AICPU thread that is to dispatch the next task may be waiting for
 * the very CPU this thread holds; a thread that only polls keeps it there
 * until it parks, to be kicked and woken a moment later (on two CPUs a
 * fan of 72 no-op tasks took 250-330 us a graph that way, 86-127
 * yielding). On a host other work keeps busy a yield may give the CPU to
 * another process for its whole slice while the dispatch waits for this
 * thread, which is not parked and so is not woken: hence auto, the
 * default of both backends (runtime.rst, performance.md, "Spinning
 * threads yield").
 */
static bool spin_yields(struct pto_exec_pool *p)
{
	switch (p->ex->spin_yield) {
	case PTO_EXEC_YIELD_ALWAYS: return true;
	case PTO_EXEC_YIELD_NEVER: return false;
	default: return yield_pays(p, pto_mono_ns());
	}
}

static int spin(struct pto_exec_pool *p, struct pto_cpu_share *sh)
{
	struct pto_exec *ex = p->ex;
	int64_t t0 = pto_mono_ns();
	uint32_t i;
	int c;

	for (i = 0; i < ex->spins; i++) {
		c = take(p);
		if (c >= 0 || finished(p))
			return c;
		if (ex->spin_ns && !(i & 15) &&
		    pto_mono_ns() - t0 >= ex->spin_ns)
			break;
		if (!(i & 15) && i && spin_yields(p))
			yield_cpu(p, sh);
		else
			cpu_relax();
	}
	return -1;
}

/*
 * Right after a task: look for work for linger_ns rather than spin()'s
 * bounds; a claimed core or -1. The AICPU dispatches the task's
 * dependents once it has seen the completion, and a thread still looking
 * takes one without the park, kick and wake-up. Every POOL_LINGER_YIELD
 * polls it also scans the cores (an AICPU that does not announce in
 * SIP_LAUNCH_PENDING; PTO_DMB_EXIT) and yields the CPU, so that on a
 * host with fewer CPUs than busy threads it does not keep the AICPU from
 * making the very dispatch it waits for. At most one thread fewer than
 * cfg.workers (the host's CPUs) lingers at once, at least one: a CPU is
 * left to the AICPU when a layer of tasks ends together.
 */
static int linger(struct pto_exec_pool *p, struct pto_cpu_share *sh)
{
	uint32_t max = p->cfg.workers > 1 ? p->cfg.workers - 1 : 1;
	int64_t t0 = pto_mono_ns();
	uint32_t i;
	int c = -1;

	if (atomic_fetch_add(&p->lingering, 1) >= max) {
		atomic_fetch_sub(&p->lingering, 1);
		return spin(p, sh);
	}
	for (i = 1;; i++) {
		c = take(p);
		if (c >= 0 || finished(p))
			break;
		if (i % POOL_LINGER_YIELD) {
			cpu_relax();
			continue;
		}
		c = take_scan(p);
		if (c >= 0 || pto_mono_ns() - t0 >= p->cfg.linger_ns)
			break;
		yield_cpu(p, sh);
	}
	atomic_fetch_sub(&p->lingering, 1);
	return c;
}

/*
 * This thread ran a task on @c and goes on to another core without
 * looking for work first: nobody looks at @c meanwhile. If threads sleep
 * for kicks and @c's parked flag is clear (the kick that woke this
 * thread for @c cleared it), set it, so that the next dispatch to @c
 * wakes one of them instead of waiting for this thread's next task to
 * end. A dispatch that came between the core's release and the flag
 * sent no kick; it stays announced in SIP_LAUNCH_PENDING, and this
 * thread takes it after its task.
 */
static void leave_core(struct pto_exec_pool *p, uint32_t c)
{
	struct pto_core_regs *r = pregs(p, c);

	if (!atomic_load(&p->idle) || reg_load_relaxed(&r->parked) ||
	    atomic_load_explicit(&p->core[c].claim, memory_order_relaxed))
		return;
	reg_store_relaxed(&r->parked, 1);
	atomic_thread_fence(memory_order_seq_cst);
}

static void *worker_main(void *arg)
{
	struct pool_thread *t = arg;
	struct pto_exec_pool *p = t->p;
	bool ran = false;
	int then = -1, left = -1;

	while (!finished(p)) {
		/*
		 * The core just left first: a dispatch there may have sent no
		 * kick, its parked flag cleared by the kick that woke this
		 * thread for it (this thread's to look at, not a sleeper's).
		 */
		int c = then >= 0 ? then :
			left >= 0 && pending(p, (uint32_t)left) &&
			take_core(p, (uint32_t)left) > 0 ? left : take(p);

		if (c < 0 && ran && p->cfg.linger_ns > 0)
			c = linger(p, &t->share);
		else if (c < 0)
			c = spin(p, &t->share);
		ran = false;
		if (c < 0 && !finished(p))
			c = sleep_on_cores(p);
		if (c == -2)
			break;
		if (c >= 0 && left >= 0 && left != c)
			leave_core(p, (uint32_t)left);
		if (c >= 0) {
			ran = step(p, (uint32_t)c, &then);
			left = c;
		} else {
			then = -1;
			left = -1;
		}
	}
	pthread_mutex_lock(&p->lock);
	exit_locked(p, t);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- A thread that helps ------------------------------------------------------ */

/* Claim @c, which a dispatch sent no kick for: as step() claims its next. */
static int claim_first(struct pto_exec_pool *p, uint32_t c)
{
	int got, i;

	if (c == UINT32_MAX || !serves(p, c))
		return -1;
	for (i = 0; (got = take_core(p, c)) < 0 && i < POOL_CLAIM_TRIES; i++)
		cpu_relax();
	return got > 0 ? (int)c : -1;
}

int pto_exec_pool_help(struct pto_exec_pool *p, uint32_t first,
		       bool (*stop)(void *arg), void *arg)
{
	int c, then = -1, left = -1, ran = 0;
	bool stopping = false;

	if (finished(p))
		return -ESHUTDOWN;
	atomic_fetch_add(&p->helpers, 1);
	c = claim_first(p, first);
	for (;;) {
		if (c < 0 && !stopping)
			c = take(p);
		if (c < 0 && !stopping)
			c = take_scan(p);
		if (c < 0 && left >= 0) {
			/*
			 * Leaving: the parked flag back (leave_core()), then
			 * one more look for a dispatch that came before the
			 * flag and sent no kick: nobody else would take it.
			 */
			leave_core(p, (uint32_t)left);
			left = -1;
			c = take(p);
		}
		if (c < 0)
			break;
		if (left >= 0 && left != c)
			leave_core(p, (uint32_t)left);
		step(p, (uint32_t)c, &then);
		ran++;
		left = c;
		c = then;	/* claimed: run it whatever @stop says */
		if (c < 0 && (finished(p) || (stop && stop(arg))))
			stopping = true;
	}
	atomic_fetch_sub(&p->helpers, 1);
	return ran;
}

/* ---- Start and stop -------------------------------------------------------- */

static uint32_t host_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (uint32_t)n : 1;
}

/* @ns (negative: never) in ticks of a @freq Hz counter; UINT64_MAX: never. */
static uint64_t hand_over_cnt(int64_t ns, uint64_t freq)
{
	if (ns < 0 || !freq || (uint64_t)ns > UINT64_MAX / freq)
		return UINT64_MAX;
	return (uint64_t)ns * freq / 1000000000ULL;
}

static int pool_init(struct pto_exec *ex, const struct pto_exec_pool_config *cfg,
		     struct pto_exec_pool *p)
{
	uint32_t c, nr = ex->nr_aic + ex->nr_aiv;

	p->ex = ex;
	p->cfg = *cfg;
	p->host_cpus = host_cpus();
	p->late_ns = pto_cpu_share_late_ns();
	if (!p->cfg.workers)
		p->cfg.workers = p->host_cpus;
	if (!p->cfg.grow_ns)
		p->cfg.grow_ns = PTO_EXEC_GROW_NS;
	if (!p->cfg.retire_ns)
		p->cfg.retire_ns = PTO_EXEC_RETIRE_NS;
	if (!p->cfg.park_ns)
		p->cfg.park_ns = PTO_EXEC_PARK_NS;
	if (!p->cfg.linger_ns)
		p->cfg.linger_ns = PTO_EXEC_LINGER_NS;
	if (!p->cfg.hand_over_ns)
		p->cfg.hand_over_ns = PTO_EXEC_HAND_OVER_NS;
	p->hand_over_cnt = hand_over_cnt(p->cfg.hand_over_ns,
					 pto_regs_info(ex->regs)->sys_cnt_freq);
	for (c = 0; c < PTO_MAX_CORES; c++) {
		if (!(cfg->cores[c / 64] & (1ULL << (c % 64))))
			continue;
		if (c >= nr)
			return -EINVAL;
		p->list[p->ncores++] = (uint16_t)c;
		atomic_init(&p->core[c].last, PTO_DMB_IDLE);	/* cores start idle */
	}
	if (!p->ncores)
		return -EINVAL;
	if (p->cfg.workers > p->ncores)
		p->cfg.workers = p->ncores;
	p->slots = calloc(p->ncores, sizeof(*p->slots));
	if (!p->slots)
		return -ENOMEM;
	for (c = 0; c < p->ncores; c++) {
		p->slots[c].p = p;
		p->slots[c].idx = c;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->gone, NULL);
	return 0;
}

int pto_exec_pool_start(struct pto_exec *ex,
			const struct pto_exec_pool_config *cfg,
			struct pto_exec_pool **out)
{
	struct pto_exec_pool *p;
	uint32_t i;
	int ret;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = pool_init(ex, cfg, p);
	if (ret) {
		free(p->slots);
		free(p);
		return ret;
	}
	ret = -pthread_create(&p->mon, NULL, monitor_main, p);
	p->mon_live = !ret;
	pthread_mutex_lock(&p->lock);
	for (i = 0; !ret && i < p->cfg.workers; i++)
		if (!spawn_locked(p))
			ret = -EAGAIN;
	pthread_mutex_unlock(&p->lock);
	if (ret) {
		atomic_store(&p->error, ret);
		pto_exec_pool_join(p);
		return ret;
	}
	*out = p;
	return 0;
}

int pto_exec_pool_join(struct pto_exec_pool *p)
{
	uint32_t i;
	int ret;

	pthread_mutex_lock(&p->lock);
	while (p->nthreads)
		pthread_cond_wait(&p->gone, &p->lock);
	pthread_mutex_unlock(&p->lock);
	atomic_store(&p->stop, true);
	atomic_fetch_add(&p->mon_word, 1);
	pto_futex_wake(&p->mon_word, 1);
	if (p->mon_live)
		pthread_join(p->mon, NULL);
	for (i = 0; i < p->ncores; i++)
		if (p->slots[i].state == SLOT_EXITED)
			pthread_join(p->slots[i].th, NULL);
	ret = atomic_load(&p->error);
	pthread_cond_destroy(&p->gone);
	pthread_mutex_destroy(&p->lock);
	free(p->slots);
	free(p);
	return ret;
}

void pto_exec_pool_get_stats(struct pto_exec_pool *p,
			     struct pto_exec_pool_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	st->threads = p->nthreads;
	st->hand_overs = atomic_load_explicit(&p->hand_overs,
					      memory_order_relaxed);
	st->stale_kicks = atomic_load_explicit(&p->stale_kicks,
					       memory_order_relaxed);
	st->moves = atomic_load_explicit(&p->moves, memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
}
