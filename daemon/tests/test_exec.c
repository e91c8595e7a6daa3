// SPDX-License-Identifier: MIT
/*
 * test_exec.c - the executor's threads (pto_exec_pool) on the sim device,
 * driven at the register level as the AICPU drives them: fewer threads
 * than cores, kernels that sleep or wait for each other, growth and
 * retirement of threads, every dispatch run once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pto/pto_kernel.h>
#include <pto-private/compiler.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "pto_cpu_share.h"
#include "sim_device.h"
#include "tap.h"
#include "test_kernels.h"

enum { K_SLEEP, K_BARRIER, K_COUNT };

/* args: ms to sleep */
static int k_sleep(const struct pto_kernel_ctx *c, const uint64_t *a,
		   uint32_t n)
{
	struct timespec ts = { 0, (long)a[0] * 1000000L };

	(void)c;
	(void)n;
	nanosleep(&ts, NULL);
	return 0;
}

/* args: counter (tensor): one more run */
static int k_count(const struct pto_kernel_ctx *c, const uint64_t *a,
		   uint32_t n)
{
	(void)c;
	(void)n;
	__atomic_add_fetch((int64_t *)(uintptr_t)a[0], 1, __ATOMIC_SEQ_CST);
	return 0;
}

/* ---- the AICPU's side ---------------------------------------------------- */

struct rig {
	struct sim_device *sd;
	struct sim_gm_arena arena;
	uint64_t payload_dev;		/* one payload per core */
	uint64_t counter_dev;
	int64_t *counter;
	uint32_t next_id[PTO_MAX_CORES];
	bool announce;		/* set SIP_LAUNCH_PENDING, as ptod does */
};

/*
 * A sim device of @aic + @aiv cores on @workers threads; @grow: threads
 * are also added for dispatches that wait (else only for launches that
 * run together).
 */
static int rig_open_park(struct rig *g, uint32_t aic, uint32_t aiv,
			 uint32_t workers, bool grow, int64_t linger_ns,
			 int64_t hand_over_ns, uint64_t park_ns)
{
	struct pto_exec_pool_config pc = {
		.workers = workers,
		.grow_ns = grow ? 0 : 3600000000000ULL,
		.linger_ns = linger_ns,
		.hand_over_ns = hand_over_ns,
		.park_ns = park_ns,
	};
	int ret;

	memset(g, 0, sizeof(*g));
	ret = sim_device_create_pool(aic, aiv, 16 << 20, &pc, &g->sd);
	if (ret)
		return ret;
	sim_device_set_kernel(g->sd, K_SLEEP, k_sleep);
	sim_device_set_kernel(g->sd, K_BARRIER, k_barrier);
	sim_device_set_kernel(g->sd, K_COUNT, k_count);
	g->arena.sd = g->sd;
	g->payload_dev = sim_gm_alloc(&g->arena, (aic + aiv) *
				      PTO2_PAYLOAD_STRIDE, 64);
	g->counter_dev = sim_gm_alloc(&g->arena, 64, 64);
	if (!g->payload_dev || !g->counter_dev)
		return -ENOMEM;
	g->counter = sim_dev_to_host(g->sd, g->counter_dev);
	g->announce = true;
	return 0;
}

static int rig_open_full(struct rig *g, uint32_t aic, uint32_t aiv,
			 uint32_t workers, bool grow, int64_t linger_ns,
			 int64_t hand_over_ns)
{
	return rig_open_park(g, aic, aiv, workers, grow, linger_ns,
			     hand_over_ns, 0);
}

static int rig_open_linger(struct rig *g, uint32_t aic, uint32_t aiv,
			   uint32_t workers, bool grow, int64_t linger_ns)
{
	return rig_open_full(g, aic, aiv, workers, grow, linger_ns, 0);
}

static int rig_open(struct rig *g, uint32_t aic, uint32_t aiv,
		    uint32_t workers, bool grow)
{
	return rig_open_linger(g, aic, aiv, workers, grow, 0);
}

/* Dispatch @kernel on @core with @args (arg 0 the counter if @tensor0). */
static uint32_t dispatch(struct rig *g, uint32_t core, int32_t kernel,
			 uint64_t a1, bool tensor0, uint16_t block_num,
			 uint16_t thread_num, uint32_t flags)
{
	uint64_t pdev = g->payload_dev + core * PTO2_PAYLOAD_STRIDE;
	PTO2DispatchPayload *p = sim_dev_to_host(g->sd, pdev);
	struct pto_core_regs *r = pto_regs_core(g->sd->regs, core);
	uint32_t id = ++g->next_id[core];

	if (!p)
		return 0;
	memset(p, 0, sizeof(*p));
	p->task_id = (int32_t)id;
	p->kernel_id = kernel;
	p->num_args = 2;
	p->tensor_mask = tensor0 ? 1 : 0;
	p->args[0] = tensor0 ? g->counter_dev : a1;
	p->args[1] = a1;
	p->block_num = block_num;
	p->thread_num = thread_num;
	p->flags = flags;
	reg64_store_relaxed(&r->task, pdev);
	reg_store_release(&r->data_main_base, id + 1);
	if (g->announce)
		pto_launch_pending_set(g->sd->regs, core);
	atomic_thread_fence(memory_order_seq_cst);
	if (reg_load_relaxed(&r->parked))
		g->sd->dev.kick(g->sd->dev.ctx, core);
	return id;
}

/* Until core @core finished dispatch @id (its status in *@status). */
static bool wait_fin(struct rig *g, uint32_t core, uint32_t id, int64_t ms,
		     int32_t *status)
{
	struct pto_core_regs *r = pto_regs_core(g->sd->regs, core);
	int64_t end = pto_mono_ns() + ms * 1000000LL;

	while (reg_load_acquire(&r->cond) != PTO_COND_DONE(id)) {
		if (pto_mono_ns() > end)
			return false;
		pto_sleep_ns(50000);
	}
	if (status) {
		PTO2DispatchPayload *p = sim_dev_to_host(g->sd, g->payload_dev +
					 core * PTO2_PAYLOAD_STRIDE);

		*status = p->status;
	}
	return true;
}

static struct pto_exec_pool_stats stats(struct rig *g)
{
	struct pto_exec_pool_stats st;

	pto_exec_pool_get_stats(g->sd->pool, &st);
	return st;
}

/* ---- the tests -------------------------------------------------------------- */

/*
 * 2 threads, 8 cores, 8 kernels that sleep 50 ms: threads are added while
 * dispatches wait behind sleeping kernels, so the kernels overlap (the
 * pool had at least 4 threads at once), never more threads than cores;
 * once idle the extra threads go. The time they took is printed, not
 * bounded: under TSan on a loaded machine a bound flakes.
 */
static void t_grow_and_retire(void)
{
	struct pto_exec_pool_stats st;
	uint32_t id[8], c, done = 0;
	struct rig g;
	int64_t t0, took, end;
	int ret = rig_open(&g, 0, 8, 2, true);

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	t0 = pto_mono_ns();
	for (c = 0; c < 8; c++)
		id[c] = dispatch(&g, c, K_SLEEP, 50, false, 1, 1, 0);
	for (c = 0; c < 8; c++)
		done += wait_fin(&g, c, id[c], 5000, NULL);
	took = pto_mono_ns() - t0;
	st = stats(&g);
	ok(done == 8 && st.peak >= 4 && st.peak <= 8 && st.grown >= 4,
	   "8 sleeping kernels on 2 threads overlap: %u done in %.1f ms, peak %u threads, %llu grown",
	   done, took / 1e6, st.peak, (unsigned long long)st.grown);
	end = pto_mono_ns() + 2000000000LL;
	while ((st = stats(&g)).threads > 2 && pto_mono_ns() < end)
		pto_sleep_ns(10000000);
	ok(st.threads == 2 && st.retired >= st.grown,
	   "idle, the extra threads retire: %u threads, %llu retired",
	   st.threads, (unsigned long long)st.retired);
	sim_device_destroy(g.sd);
}

/*
 * 1 thread, no growth for waiting dispatches: a cooperative launch of 6
 * blocks whose kernels wait for each other runs them all at once (the
 * executor adds threads before the first block's kernel starts).
 */
static void t_coop_together(void)
{
	uint32_t id[6], c, done = 0;
	int32_t status[6];
	struct rig g;
	int ret = rig_open(&g, 0, 6, 1, false), bad = 0;

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	*g.counter = 0;
	for (c = 0; c < 6; c++)
		id[c] = dispatch(&g, c, K_BARRIER, 6, true, 6, 1,
				 PTO2_PAYLOAD_COOP);
	for (c = 0; c < 6; c++) {
		done += wait_fin(&g, c, id[c], 5000, &status[c]);
		bad += status[c] != 0;
	}
	ok(done == 6 && !bad && stats(&g).peak >= 6,
	   "1 thread, cooperative launch of 6 waiting blocks: %u done, %d failed, peak %u threads",
	   done, bad, stats(&g).peak);
	sim_device_destroy(g.sd);
}

/*
 * 1 thread, no growth for waiting dispatches: a block of 3 threads (a
 * cluster's 2 AIV + AIC) whose kernels wait for each other runs its 3
 * cores at once.
 */
static void t_block_together(void)
{
	uint32_t core[3] = { 1, 2, 0 }, id[3], i, done = 0;
	int32_t status[3];
	struct rig g;
	int ret = rig_open(&g, 1, 2, 1, false), bad = 0;

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	*g.counter = 0;
	for (i = 0; i < 3; i++)
		id[i] = dispatch(&g, core[i], K_BARRIER, 3, true, 1, 3, 0);
	for (i = 0; i < 3; i++) {
		done += wait_fin(&g, core[i], id[i], 5000, &status[i]);
		bad += status[i] != 0;
	}
	ok(done == 3 && !bad,
	   "1 thread, a block of 3 threads waiting for each other: %u done, %d failed",
	   done, bad);
	sim_device_destroy(g.sd);
}

/*
 * 2 threads, 24 cores: 2000 rounds of a dispatch to every core, each run
 * exactly once (the counter), the kicks of parked cores never lost; with
 * the dispatches announced in SIP_LAUNCH_PENDING (as ptod does) or by
 * DATA_MAIN_BASE and kicks alone.
 */
static void t_every_dispatch_once(bool announce)
{
	uint32_t id[24], c, r, done = 0;
	struct rig g;
	int ret = rig_open(&g, 8, 16, 2, true);

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	g.announce = announce;
	*g.counter = 0;
	for (r = 0; r < 2000; r++) {
		for (c = 0; c < 24; c++)
			id[c] = dispatch(&g, c, K_COUNT, 0, true, 1, 1, 0);
		for (c = 0; c < 24; c++)
			done += wait_fin(&g, c, id[c], 5000, NULL);
	}
	ok(done == 48000 && *g.counter == 48000,
	   "2 threads, 24 cores, 2000 rounds%s: %u dispatches finished, %lld kernel runs",
	   announce ? "" : " without SIP_LAUNCH_PENDING", done,
	   (long long)*g.counter);
	sim_device_destroy(g.sd);
}

/*
 * Kicks for no work (as a kick is once another thread took the work it
 * announced): the parked threads wake, find nothing and sleep again
 * without leaving their sleep (no empty wake-up, the kicks counted
 * stale); each core's next dispatch still wakes a thread. The threads
 * park for a minute: a kick lost with a core's parked flag would show
 * as a dispatch not finished in 5 s.
 */
static void t_stale_kicks(void)
{
	struct pto_exec_pool_stats st;
	uint32_t c, r, parked, done = 0;
	int64_t end;
	struct rig g;
	int ret = rig_open_park(&g, 4, 4, 2, false, 0, 0, 60000000000ULL);

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	/* both threads asleep: every core announced parked, then a while */
	end = pto_mono_ns() + 5000000000LL;
	do {
		pto_sleep_ns(1000000);
		for (c = 0, parked = 0; c < 8; c++)
			parked += !!reg_load_acquire(&pto_regs_core(g.sd->regs,
								    c)->parked);
	} while (parked < 8 && pto_mono_ns() < end);
	pto_sleep_ns(20000000);
	for (r = 0; r < 20; r++) {
		for (c = 0; c < 8; c++)
			if (reg_load_acquire(&pto_regs_core(g.sd->regs,
							    c)->parked))
				g.sd->dev.kick(g.sd->dev.ctx, c);
		pto_sleep_ns(1000000);
	}
	pto_sleep_ns(20000000);
	st = stats(&g);
	*g.counter = 0;
	for (c = 0; c < 8; c++)
		done += wait_fin(&g, c, dispatch(&g, c, K_COUNT, 0, true, 1, 1,
						 0), 5000, NULL);
	ok(parked == 8 && st.stale_kicks > 0 && st.empty_wakes == 0 &&
	   done == 8 && *g.counter == 8,
	   "kicks for no work: %llu stale, %llu empty wake-ups; then a dispatch to each of the 8 cores: %u finished",
	   (unsigned long long)st.stale_kicks,
	   (unsigned long long)st.empty_wakes, done);
	sim_device_destroy(g.sd);
}

/*
 * 1 thread, 1 core, linger_ns of 10 s: the thread that ran a task is
 * still polling 5 ms later (far beyond spin_ns), so the next dispatch is
 * taken without the thread parking (the executor's park count does not
 * move) and without a kick (the core is not parked). With linger_ns
 * negative the thread parks within spin_ns: the core announces it parked
 * (waited for up to 5 s, so a slow machine does not matter) before the
 * next dispatch, which then needs the kick. Whether the thread runs in
 * time does not matter: only a 10 s stall would turn the first case red.
 * (The park count cannot tell the second case: the thread may park
 * before the count is first read, and again after it is read last.)
 */
static void t_linger(bool on)
{
	uint64_t parks0, parks1;
	uint32_t id1, id2;
	bool fin, parked;
	int64_t end;
	struct rig g;
	int ret = rig_open_linger(&g, 0, 1, 1, false,
				  on ? 10000000000LL : -1);

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	id1 = dispatch(&g, 0, K_COUNT, 0, true, 1, 1, 0);
	fin = wait_fin(&g, 0, id1, 5000, NULL);
	parks0 = atomic_load(&g.sd->exec.parks);
	end = pto_mono_ns() + (on ? 5000000LL : 5000000000LL);
	do {
		pto_sleep_ns(1000000);
		parked = reg_load_acquire(&pto_regs_core(g.sd->regs,
							 0)->parked);
	} while (!parked && pto_mono_ns() < end);
	id2 = dispatch(&g, 0, K_COUNT, 0, true, 1, 1, 0);
	fin = wait_fin(&g, 0, id2, 5000, NULL) && fin;
	parks1 = atomic_load(&g.sd->exec.parks);
	ok(fin && (on ? !parked && parks1 == parks0 : parked),
	   "linger %s: the next dispatch after a task %s (core parked: %d; parks %llu -> %llu)",
	   on ? "10 s" : "off", on ? "5 ms later needs no park" : "finds the core parked",
	   parked, (unsigned long long)parks0, (unsigned long long)parks1);
	sim_device_destroy(g.sd);
}

/*
 * hand_over_ns: after a polled task of 1 ms the thread gives its CPU away
 * once (counted in the pool's hand_overs), after a no-op task it does
 * not; with hand_over_ns negative, not after the long task either.
 */
static void t_hand_over(bool on)
{
#ifndef __SANITIZE_THREAD__
	struct pto_exec_pool_stats st;
#endif
	unsigned long long long_task;
	uint32_t id;
	bool fin;
	struct rig g;
	int ret = rig_open_full(&g, 0, 1, 1, false, 0, on ? 0 : -1);

	if (ret) {
		ok(0, "setup: %d", ret);
		return;
	}
	id = dispatch(&g, 0, K_SLEEP, 1, false, 1, 1, 0);
	fin = wait_fin(&g, 0, id, 5000, NULL);
	pto_sleep_ns(10000000);	/* the thread is past its step() */
	long_task = stats(&g).hand_overs;
	id = dispatch(&g, 0, K_COUNT, 0, true, 1, 1, 0);
	fin = wait_fin(&g, 0, id, 5000, NULL) && fin;
	ok(fin && long_task == (on ? 1 : 0),
	   "hand-over %s: %llu yields after a 1 ms task",
	   on ? "at 50 us (default)" : "off", (unsigned long long)long_task);
#ifndef __SANITIZE_THREAD__
	/* under TSan a no-op task itself runs 50 us and more */
	pto_sleep_ns(10000000);
	st = stats(&g);
	ok(fin && st.hand_overs == long_task,
	   "hand-over %s: none after a no-op task (%llu in all)",
	   on ? "at 50 us (default)" : "off", (unsigned long long)st.hand_overs);
#endif
	sim_device_destroy(g.sd);
}

/*
 * PTO_EXEC_SPIN_YIELD: 0 never yields, auto while a thread waits for a
 * CPU and the host is not busy, 1 always; unset, the backend's default
 * (auto for the sim and pto-aicore alike); any other value is refused
 * (pto-aicore exits on it) and the executor keeps its default. The reader
 * leaves the mode as it was when the variable is unset or bad.
 */
static void t_spin_yield_env(void)
{
	static const struct { const char *v; int ret; uint8_t mode, sim; } c[] = {
		{ NULL, 0, PTO_EXEC_YIELD_ALWAYS, PTO_EXEC_YIELD_AUTO },
		{ "1", 0, PTO_EXEC_YIELD_ALWAYS, PTO_EXEC_YIELD_ALWAYS },
		{ "0", 0, PTO_EXEC_YIELD_NEVER, PTO_EXEC_YIELD_NEVER },
		{ "auto", 0, PTO_EXEC_YIELD_AUTO, PTO_EXEC_YIELD_AUTO },
		{ "", -EINVAL, PTO_EXEC_YIELD_ALWAYS, PTO_EXEC_YIELD_AUTO },
		{ "2", -EINVAL, PTO_EXEC_YIELD_ALWAYS, PTO_EXEC_YIELD_AUTO },
		{ "00", -EINVAL, PTO_EXEC_YIELD_ALWAYS, PTO_EXEC_YIELD_AUTO },
	};
	struct sim_device *sd;
	unsigned int i;
	uint8_t mode;
	int ret;

	for (i = 0; i < PTO_ARRAY_SIZE(c); i++) {
		if (c[i].v)
			setenv(PTO_EXEC_SPIN_YIELD_ENV, c[i].v, 1);
		else
			unsetenv(PTO_EXEC_SPIN_YIELD_ENV);
		mode = PTO_EXEC_YIELD_ALWAYS;	/* the caller's default */
		ret = pto_exec_spin_yield_env(&mode);
		ok(ret == c[i].ret && mode == c[i].mode, "%s=%s: %d, %s",
		   PTO_EXEC_SPIN_YIELD_ENV, c[i].v ? c[i].v : "(unset)", ret,
		   pto_exec_spin_yield_name(mode));
		if (sim_device_create(1, 0, 1 << 20, &sd)) {
			ok(0, "sim_device_create");
			continue;
		}
		ok(sd->exec.spin_yield == c[i].sim, "the sim's executor: %s",
		   pto_exec_spin_yield_name(c[i].sim));
		sim_device_destroy(sd);
	}
	unsetenv(PTO_EXEC_SPIN_YIELD_ENV);
}

/* @n late (@late) or early yields from *@now, 1 us apart: the looks. */
static int yields(struct pto_cpu_share *sh, int64_t *now, int n, bool late)
{
	int looks = 0;

	while (n-- > 0) {
		*now += 1000;
		looks += pto_cpu_share_yielded(sh, late, *now);
	}
	return looks;
}

/*
 * When a polling thread looks for an idle CPU: after PTO_SHARE_RUN late
 * yields in a row; an early one starts the run again; a look soon after
 * the last doubles the run, a quiet PTO_SHARE_RESET_NS resets it.
 */
static void t_share_rule(void)
{
	struct pto_cpu_share sh = { 0 };
	int64_t now = 1000000000LL, late;
	int a, b, c, d, e, f;

	a = yields(&sh, &now, PTO_SHARE_RUN - 1, true);
	b = yields(&sh, &now, 1, true);
	yields(&sh, &now, PTO_SHARE_RUN - 1, true);
	c = yields(&sh, &now, 1, false) + yields(&sh, &now, PTO_SHARE_RUN - 1, true);
	d = yields(&sh, &now, 1, true);	/* the second look, soon after */
	e = yields(&sh, &now, 2 * PTO_SHARE_RUN - 1, true);
	f = yields(&sh, &now, 1, true);
	ok(!a && b == 1 && !c && d == 1 && !e && f == 1 &&
	   sh.need == 4 * PTO_SHARE_RUN,
	   "share: a look after %d late yields, not after an early one; %d then %d when looks come within %lld ms (looks %d %d %d %d %d %d, run now %u)",
	   PTO_SHARE_RUN, PTO_SHARE_RUN, 2 * PTO_SHARE_RUN,
	   PTO_SHARE_BACKOFF_NS / 1000000, a, b, c, d, e, f, sh.need);
	now += PTO_SHARE_RESET_NS;
	a = yields(&sh, &now, PTO_SHARE_RUN, true);
	ok(a == 1 && sh.need == PTO_SHARE_RUN,
	   "share: %lld ms without a look: a look after %d again (looks %d, run %u)",
	   PTO_SHARE_RESET_NS / 1000000, PTO_SHARE_RUN, a, sh.need);
	late = pto_cpu_share_late_ns();
	ok(late >= PTO_SHARE_LATE_NS && late < 1000000000LL,
	   "share: a yield is late from %lld ns here (at least %d)",
	   (long long)late, PTO_SHARE_LATE_NS);
}

/*
 * pto_cpu_move_off() moves the caller to another CPU its affinity allows
 * and leaves the affinity as it was; with one CPU allowed it refuses.
 */
static void t_move_off(void)
{
	cpu_set_t was, now, one;
	int cpu = -1, after = -1, ret = -1, i, single;

	if (sched_getaffinity(0, sizeof(was), &was) || CPU_COUNT(&was) < 2) {
		tap_skip(2, "move_off: fewer than two CPUs allowed");
		return;
	}
	/* the kernel may move us back meanwhile: three tries */
	for (i = 0; i < 3 && after == cpu; i++) {
		cpu = sched_getcpu();
		ret = pto_cpu_move_off(cpu);
		after = sched_getcpu();
	}
	sched_getaffinity(0, sizeof(now), &now);
	ok(ret == 0 && after != cpu && CPU_EQUAL(&was, &now),
	   "move_off: from CPU %d to CPU %d, affinity as it was (%s; ret %d)",
	   cpu, after, CPU_EQUAL(&was, &now) ? "same" : "changed", ret);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	single = pto_cpu_move_off(sched_getcpu());
	sched_getaffinity(0, sizeof(now), &now);
	sched_setaffinity(0, sizeof(was), &was);
	ok(single == -EINVAL && CPU_EQUAL(&one, &now) &&
	   pto_cpu_move_off(-1) == -EINVAL,
	   "move_off: refused with one CPU allowed (%d), affinity untouched",
	   single);
}

int main(void)
{
	t_grow_and_retire();
	t_coop_together();
	t_block_together();
	t_every_dispatch_once(true);
	t_every_dispatch_once(false);
	t_stale_kicks();
	t_linger(true);
	t_linger(false);
	t_hand_over(true);
	t_hand_over(false);
	t_spin_yield_env();
	t_share_rule();
	t_move_off();
	return tap_done();
}
