// SPDX-License-Identifier: GPL-2.0
/*
 * pto_core: core attach/detach, park (CORE_WAIT), kick, the AICPU
 * interrupt (RAISE_IRQ, IRQ_WAIT, read, poll) and the notification
 * protocol of Documentation/uapi.rst end to end.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

#include <pto-private/asleep.h>

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

FIXTURE(core) {
	int aicpu, exec;
	void *aregs;	/* register file as the AICPU maps it */
	void *eregs;	/* ... and as the executor maps it */
	struct pto_info info;
};

FIXTURE_SETUP(core)
{
	self->exec = -1;
	PTO_OPEN_OR_SKIP(self->aicpu);
	ASSERT_EQ(0, pto_set_role(self->aicpu, PTO_ROLE_AICPU));
	self->exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, self->exec);
	ASSERT_EQ(0, pto_get_info(self->aicpu, &self->info));
	ASSERT_EQ(0, pto_reset_cores(self->info.nr_cores));
	self->aregs = pto_map_regs(self->aicpu);
	ASSERT_NE(NULL, self->aregs);
	self->eregs = pto_map_regs(self->exec);
	ASSERT_NE(NULL, self->eregs);
}

FIXTURE_TEARDOWN(core)
{
	/* Process exit releases the files. */
}

static volatile struct pto_core_regs *acore(FIXTURE_DATA(core) *self,
					    unsigned int core)
{
	return pto_core(self->aregs, core);
}

static volatile struct pto_regs_info *ainfo(FIXTURE_DATA(core) *self)
{
	return pto_regs_info(self->aregs);
}

/* Spin (with short sleeps) until *p == v or ms pass. */
static bool wait_u32(volatile __u32 *p, __u32 v, long ms)
{
	__s64 end = pto_deadline_ms(ms);

	while (PTO_LOAD(*p) != v) {
		if (pto_now_ns() > end)
			return false;
		usleep(200);
	}
	return true;
}

static bool wait_u32_ne(volatile __u32 *p, __u32 v, long ms)
{
	__s64 end = pto_deadline_ms(ms);

	while (PTO_LOAD(*p) == v) {
		if (pto_now_ns() > end)
			return false;
		usleep(200);
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* attach / detach */

TEST_F(core, attach_detach)
{
	volatile struct pto_core_regs *c = acore(self, 0);

	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, c->state);
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, c->state);
	EXPECT_EQ(PTO_COND_IDLE, c->cond);
	EXPECT_EQ(0U, c->parked);
	/* The executor's own mapping sees the same block. */
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, pto_core(self->eregs, 0)->state);
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, c->state);
}

TEST_F(core, attach_all_cores)
{
	unsigned int i, n = self->info.nr_cores;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, n));
	for (i = 0; i < n; i++) {
		EXPECT_EQ((__u32)PTO_CORE_ONLINE, acore(self, i)->state);
		EXPECT_EQ(PTO_COND_IDLE, acore(self, i)->cond);
	}
	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_DETACH, 0, n));
	for (i = 0; i < n; i++)
		EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, i)->state);
}

/* Attach resets the doorbells: DATA_MAIN_BASE idle, COND idle. */
TEST_F(core, attach_resets_doorbells)
{
	volatile struct pto_core_regs *c = acore(self, 0);

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	PTO_STORE(c->data_main_base, 77);
	PTO_STORE(c->cond, PTO_COND_DONE(76));
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(PTO_DMB_IDLE, c->data_main_base);
	EXPECT_EQ(PTO_COND_IDLE, c->cond);
}

TEST_F(core, attach_core_beyond_nr_cores)
{
	EXPECT_EQ(-EINVAL, pto_attach(self->exec, self->info.nr_cores));
	EXPECT_EQ(-EINVAL, pto_attach(self->exec, PTO_MAX_CORES - 1));
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 0)->state);
}

/* All or nothing: one bad bit, no core attached. */
TEST_F(core, attach_bad_bit_attaches_nothing)
{
	struct pto_cores c = { .size = sizeof(c) };

	pto_mask_set(&c, 0);
	pto_mask_set(&c, self->info.nr_cores);
	EXPECT_EQ(-EINVAL, pto_ioc(self->exec, PTO_IOC_CORE_ATTACH, &c));
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 0)->state);
}

TEST_F(core, attach_empty_mask)
{
	struct pto_cores c = { .size = sizeof(c) };

	EXPECT_EQ(-EINVAL, pto_ioc(self->exec, PTO_IOC_CORE_ATTACH, &c));
}

TEST_F(core, attach_busy)
{
	int other = pto_open_role(PTO_ROLE_EXECUTOR);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(-EBUSY, pto_attach(other, 0));
	/* All or nothing: core 1 is free but 0 is not. */
	EXPECT_EQ(-EBUSY, pto_cores_range(other, PTO_IOC_CORE_ATTACH, 0, 2));
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 1)->state);
	EXPECT_EQ(0, pto_attach(other, 1));
	close(other);
}

/* Only another file's core is busy; attaching one's own again is fine. */
TEST_F(core, attach_twice_same_file)
{
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, acore(self, 0)->state);
}

TEST_F(core, detach_not_attached)
{
	EXPECT_EQ(-EINVAL, pto_detach(self->exec, 0));
}

TEST_F(core, detach_other_files_core)
{
	int other = pto_open_role(PTO_ROLE_EXECUTOR);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pto_attach(other, 0));
	EXPECT_EQ(-EINVAL, pto_detach(self->exec, 0));
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, acore(self, 0)->state);
	close(other);
}

/* Detach then close: OFFLINE, not DEAD. */
TEST_F(core, clean_close_offline)
{
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	close(self->exec);
	self->exec = -1;
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 0)->state);
}

/* Close without detach: DEAD, the AICPU is told, re-attach revives. */
TEST_F(core, close_attached_dead)
{
	__u32 irq0;
	int e2;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	irq0 = ainfo(self)->irq_count;
	munmap(self->eregs, PTO_REGS_SIZE);
	close(self->exec);
	self->exec = -1;
	EXPECT_EQ((__u32)PTO_CORE_DEAD, acore(self, 0)->state);
	EXPECT_EQ((__u32)PTO_CORE_DEAD, acore(self, 1)->state);
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 2)->state);
	EXPECT_NE(irq0, ainfo(self)->irq_count);
	e2 = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, e2);
	ASSERT_EQ(0, pto_attach(e2, 0));
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, acore(self, 0)->state);
	EXPECT_EQ(PTO_COND_IDLE, acore(self, 0)->cond);
	EXPECT_EQ((__u32)PTO_CORE_DEAD, acore(self, 1)->state);
	close(e2);
}

/* ---------------------------------------------------------------------- */
/* CORE_WAIT */

TEST_F(core, wait_not_attached)
{
	EXPECT_EQ(-EINVAL, pto_core_wait(self->exec, 0, 0,
					 pto_deadline_ms(50), NULL));
}

TEST_F(core, wait_core_beyond_nr_cores)
{
	EXPECT_EQ(-EINVAL, pto_core_wait(self->exec, self->info.nr_cores, 0,
					 pto_deadline_ms(50), NULL));
	EXPECT_EQ(-EINVAL, pto_core_wait(self->exec, 0xffffffffU, 0,
					 pto_deadline_ms(50), NULL));
}

TEST_F(core, wait_other_files_core)
{
	int other = pto_open_role(PTO_ROLE_EXECUTOR);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, pto_attach(other, 0));
	EXPECT_EQ(-EINVAL, pto_core_wait(self->exec, 0, 0,
					 pto_deadline_ms(50), NULL));
	close(other);
}

TEST_F(core, wait_timeout)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct pto_core_wait w;
	__u32 parks;
	__s64 t0, dt;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	parks = c->park_count;
	PTO_STORE(pto_core(self->eregs, 0)->parked, 1);
	t0 = pto_now_ns();
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, 0,
					    t0 + 100 * 1000000LL, &w));
	dt = pto_now_ns() - t0;
	EXPECT_LE(100 * 1000000LL - 1000000LL, dt);
	EXPECT_GT(5000 * 1000000LL, dt);
	EXPECT_EQ(0U, c->parked);
	EXPECT_EQ(parks + 1, c->park_count);
}

TEST_F(core, wait_deadline_in_past)
{
	__s64 t0 = pto_now_ns();

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, 0, t0 - 1000000LL,
					    NULL));
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, 0, 1, NULL));
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
}

/* DATA_MAIN_BASE already differs from last_dmb: no sleep. */
TEST_F(core, wait_dmb_already_changed)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct pto_core_wait w;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	PTO_STORE(c->data_main_base, 5);
	EXPECT_EQ(0, pto_core_wait(self->exec, 0, 0, pto_deadline_ms(5000),
				   &w));
	EXPECT_EQ(5U, w.dmb);
	EXPECT_EQ((__u32)PTO_WAKE_DMB, w.reason);
	EXPECT_EQ(0U, c->parked);
}

/*
 * The window of the protocol: the core has set parked but is not asleep
 * yet when the kick comes. The kick is latched, CORE_WAIT consumes it and
 * returns at once; the next CORE_WAIT sleeps again.
 */
TEST_F(core, kick_latched_before_sleep)
{
	volatile struct pto_core_regs *ec = pto_core(self->eregs, 0);
	struct pto_core_wait w;
	__u32 dmb;
	__s64 t0;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	dmb = ec->data_main_base;
	PTO_STORE(ec->parked, 1);
	PTO_FENCE();
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	t0 = pto_now_ns();
	EXPECT_EQ(0, pto_core_wait(self->exec, 0, dmb, pto_deadline_ms(5000),
				   &w));
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
	EXPECT_EQ((__u32)PTO_WAKE_KICK, w.reason);
	EXPECT_EQ(dmb, w.dmb);
	EXPECT_EQ(0U, ec->parked);
	PTO_STORE(ec->parked, 1);
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, dmb,
					    pto_deadline_ms(50), NULL));
}

/*
 * A kick on a core that is not parked is harmless: it returns 0, is not
 * counted and not latched (a later CORE_WAIT with nothing new times out
 * instead of returning for the stale kick), and the next dispatch goes
 * through as usual (the core sees DATA_MAIN_BASE).
 */
TEST_F(core, kick_not_parked_harmless)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct pto_core_wait w;
	__u32 kicks;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0U, c->parked);
	kicks = c->kick_count;
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	EXPECT_EQ((__u32)PTO_CORE_ONLINE, c->state);
	EXPECT_EQ(kicks, c->kick_count);
	/* DATA_MAIN_BASE is still 0: only a latched kick would wake this. */
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, 0,
					    pto_deadline_ms(100), &w))
		TH_LOG("woke with reason %u", w.reason);
	PTO_STORE(c->data_main_base, 7);
	EXPECT_EQ(0, pto_core_wait(self->exec, 0, 0, pto_deadline_ms(5000),
				   &w));
	EXPECT_EQ(7U, w.dmb);
	EXPECT_EQ((__u32)PTO_WAKE_DMB, w.reason);
}

/* Kicking a core nobody attached does nothing harmful. */
TEST_F(core, kick_unattached_core)
{
	EXPECT_EQ(0, pto_kick(self->aicpu, 2));
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, acore(self, 2)->state);
}

TEST_F(core, kick_many_cores)
{
	EXPECT_EQ(0, pto_cores_range(self->aicpu, PTO_IOC_KICK, 0,
				     self->info.nr_cores));
}

TEST_F(core, kick_beyond_nr_cores)
{
	EXPECT_EQ(-EINVAL, pto_kick(self->aicpu, self->info.nr_cores));
	EXPECT_EQ(-EINVAL, pto_kick(self->aicpu, PTO_MAX_CORES - 1));
}

/* ---------------------------------------------------------------------- */
/* Threads: the executor parks, the AICPU dispatches. */

struct exec_thread {
	int fd;
	volatile struct pto_core_regs *c;	/* executor's mapping */
	volatile struct pto_regs_info *info;	/* executor's mapping */
	__u32 core;
	__u32 last;
	__s64 timeout_ns;
	bool follow_protocol;	/* set parked, fence, recheck */
	bool finish;		/* write COND FIN (+ irq) after waking */
	/* results */
	int ret;
	bool slept;		/* went into CORE_WAIT */
	struct pto_core_wait w;
	__s64 woke_ns;
	volatile pid_t tid;	/* the thread's id, once it runs */
};

/*
 * Wait until thread @tid of this process sleeps off the CPU
 * (pto_thread_asleep()), at most until @end_ns. A core's park_count moves
 * before the thread really sleeps in CORE_WAIT; a test that needs it
 * asleep waits for this too.
 */
static bool task_wait_sleeping(pid_t tid, __s64 end_ns)
{
	while (pto_now_ns() < end_ns) {
		if (pto_thread_asleep(tid) == 1)
			return true;
		usleep(1000);
	}
	return false;
}

static void *exec_main(void *arg)
{
	struct exec_thread *t = arg;
	__u32 d;

	t->tid = (pid_t)syscall(SYS_gettid);

	if (t->follow_protocol) {
		PTO_STORE(t->c->parked, 1);
		PTO_FENCE();
		d = PTO_LOAD(t->c->data_main_base);
		if (d != t->last) {
			PTO_STORE(t->c->parked, 0);
			t->w.dmb = d;
			t->ret = 0;
			goto done;
		}
	}
	t->slept = true;
	t->ret = pto_core_wait(t->fd, t->core, t->last, t->timeout_ns, &t->w);
done:
	t->woke_ns = pto_now_ns();
	if (!t->ret && t->finish) {
		PTO_STORE(t->c->cond, PTO_COND_DONE(t->w.dmb - 1));
		PTO_FENCE();
		if (PTO_LOAD(t->info->aicpu_irq_en))
			t->ret = pto_raise_irq(t->fd, t->core);
	}
	return NULL;
}

/* Returns pthread_create()'s result. */
static int exec_start(FIXTURE_DATA(core) *self, struct exec_thread *t,
		      pthread_t *th, __u32 core, bool protocol, bool finish,
		      __s64 timeout_ns)
{
	memset(t, 0, sizeof(*t));
	t->fd = self->exec;
	t->c = pto_core(self->eregs, core);
	t->info = pto_regs_info(self->eregs);
	t->core = core;
	t->last = t->c->data_main_base;
	t->timeout_ns = timeout_ns;
	t->follow_protocol = protocol;
	t->finish = finish;
	return pthread_create(th, NULL, exec_main, t);
}

/* ---------------------------------------------------------------------- */
/* CORE_WAIT_ANY: one wait for a set of cores */

static void any_mask(__u64 *m, unsigned int first, unsigned int n)
{
	unsigned int i;

	memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
	for (i = first; i < first + n; i++)
		m[i / 64] |= 1ULL << (i % 64);
}

/* Park cores @first .. @first + @n - 1 as the protocol wants. */
static void any_park(FIXTURE_DATA(core) *self, unsigned int first,
		     unsigned int n)
{
	unsigned int i;

	for (i = first; i < first + n; i++)
		PTO_STORE(pto_core(self->eregs, i)->parked, 1);
	PTO_FENCE();
}

TEST_F(core, wait_any_bad_sets)
{
	__u64 m[PTO_CORE_MASK_WORDS];
	struct pto_core_wait_any w = { .size = sizeof(w), .flags = 1 };

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_mask(m, 0, 0);
	EXPECT_EQ(-EINVAL, pto_core_wait_any(self->exec, m, 0, NULL));
	any_mask(m, 0, 3);	/* core 2 is not ours */
	EXPECT_EQ(-EINVAL, pto_core_wait_any(self->exec, m, 0, NULL));
	any_mask(m, self->info.nr_cores, 1);
	EXPECT_EQ(-EINVAL, pto_core_wait_any(self->exec, m, 0, NULL));
	w.mask[0] = 1;
	EXPECT_EQ(-EINVAL, pto_ioc(self->exec, PTO_IOC_CORE_WAIT_ANY, &w));
}

/* Nothing kicked: the deadline ends the wait. */
TEST_F(core, wait_any_timeout)
{
	__u64 m[PTO_CORE_MASK_WORDS];
	__s64 t0 = pto_now_ns();

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	any_park(self, 0, 4);
	any_mask(m, 0, 4);
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait_any(self->exec, m,
						pto_deadline_ms(50), NULL));
	EXPECT_LE(40 * 1000000LL, pto_now_ns() - t0);
}

/*
 * A kick that lands before the wait is latched: the wait returns that
 * core at once and clears its parked flag only; the kick is consumed.
 */
TEST_F(core, wait_any_latched_kick)
{
	__u64 m[PTO_CORE_MASK_WORDS];
	__u32 core = ~0U;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	any_park(self, 0, 4);
	ASSERT_EQ(0, pto_kick(self->aicpu, 2));
	any_mask(m, 0, 4);
	EXPECT_EQ(0, pto_core_wait_any(self->exec, m, pto_deadline_ms(5000),
				       &core));
	EXPECT_EQ(2U, core);
	EXPECT_EQ(0U, acore(self, 2)->parked);
	EXPECT_EQ(1U, acore(self, 1)->parked);
	EXPECT_EQ(1U, acore(self, 3)->parked);
	any_park(self, 2, 1);
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait_any(self->exec, m,
						pto_deadline_ms(50), NULL));
}

/*
 * A set with a parked flag clear (the device clears them, see below):
 * the call returns that core at once, so that the caller sets the flags
 * again and looks once more. It is no wake-up: the device's wakes
 * counter does not move.
 */
TEST_F(core, wait_any_flag_clear_returns)
{
	__u64 m[PTO_CORE_MASK_WORDS];
	__u64 wakes0, wakes1;
	__u32 core = ~0U;
	__s64 t0 = pto_now_ns();

	ASSERT_EQ(0, pto_sysfs_kv("counters", "wakes", &wakes0));
	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	any_park(self, 0, 4);
	PTO_STORE(pto_core(self->eregs, 2)->parked, 0);
	PTO_FENCE();
	any_mask(m, 0, 4);
	EXPECT_EQ(0, pto_core_wait_any(self->exec, m, pto_deadline_ms(3000),
				       &core));
	EXPECT_EQ(2U, core);
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
	EXPECT_EQ(1U, acore(self, 1)->parked);
	ASSERT_EQ(0, pto_sysfs_kv("counters", "wakes", &wakes1));
	EXPECT_EQ(wakes0, wakes1);
	any_park(self, 2, 1);
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait_any(self->exec, m,
						pto_deadline_ms(50), NULL));
}

struct any_thread {
	int fd;
	__u64 mask[PTO_CORE_MASK_WORDS];
	__s64 timeout_ns;
	int ret;
	__u32 core;
	int done;
	volatile pid_t tid;
};

static void *any_main(void *arg)
{
	struct any_thread *t = arg;

	t->tid = (pid_t)syscall(SYS_gettid);
	t->ret = pto_core_wait_any(t->fd, t->mask, t->timeout_ns, &t->core);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a CORE_WAIT_ANY thread on cores @first.. and wait until it sleeps. */
static int any_start(FIXTURE_DATA(core) *self, struct any_thread *t,
		     pthread_t *th, unsigned int first, unsigned int n)
{
	memset(t, 0, sizeof(*t));
	t->fd = self->exec;
	any_mask(t->mask, first, n);
	t->timeout_ns = pto_deadline_ms(3000);
	if (pthread_create(th, NULL, any_main, t))
		return -1;
	while (!t->tid)
		usleep(100);
	return task_wait_sleeping(t->tid, pto_deadline_ms(2000)) ? 0 : -1;
}

static bool any_done(struct any_thread *t)
{
	return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE);
}

/* Until @t is done or @ms pass. */
static bool any_wait_done(struct any_thread *t, long ms)
{
	__s64 end = pto_deadline_ms(ms);

	while (!any_done(t) && pto_now_ns() < end)
		usleep(200);
	return any_done(t);
}

/* Until @a or @b is done or @ms pass. */
static bool any_wait_either(struct any_thread *a, struct any_thread *b,
			    long ms)
{
	__s64 end = pto_deadline_ms(ms);

	while (!any_done(a) && !any_done(b) && pto_now_ns() < end)
		usleep(200);
	return any_done(a) || any_done(b);
}

/*
 * Two threads wait on the same cores: one kick wakes exactly one of them,
 * with the kicked core; the next kick wakes the other.
 */
TEST_F(core, wait_any_one_kick_one_waiter)
{
	struct any_thread a, b, *first, *second;
	pthread_t ta, tb;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_park(self, 0, 2);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	ASSERT_EQ(0, any_start(self, &b, &tb, 0, 2));
	ASSERT_EQ(0, pto_kick(self->aicpu, 1));
	/* one wakes (however slow the guest), then the other must not */
	EXPECT_TRUE(any_wait_either(&a, &b, 2000));
	usleep(100 * 1000);
	EXPECT_EQ(1, any_done(&a) + any_done(&b));
	first = any_done(&a) ? &a : &b;
	second = first == &a ? &b : &a;
	EXPECT_EQ(0, first->ret);
	EXPECT_EQ(1U, first->core);
	/* the other thread still sleeps for core 0: its flag stays */
	EXPECT_EQ(1U, acore(self, 0)->parked);
	PTO_STORE(pto_core(self->eregs, 1)->parked, 1);
	PTO_FENCE();
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	EXPECT_TRUE(any_wait_done(second, 2000));
	EXPECT_EQ(0, second->ret);
	EXPECT_EQ(0U, second->core);
	/* nobody sleeps any more: the kick cleared core 1's flag too */
	EXPECT_EQ(0U, acore(self, 1)->parked);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}

/*
 * Two threads wait on cores 0-1; core 0 is kicked, then core 1 a moment
 * later. The thread woken first may be queued again to look when the
 * second kick comes, and take that kick's one wake-up; it takes core 0,
 * and must hand core 1's kick on to the other. The gap between the kicks
 * sweeps 0-99.5 us so that some rounds land in that window.
 */
TEST_F(core, wait_any_back_to_back_kicks)
{
	unsigned int round;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	for (round = 0; round < 400; round++) {
		__s64 gap_end;
		struct any_thread a, b;
		pthread_t ta, tb;

		any_park(self, 0, 2);
		ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
		ASSERT_EQ(0, any_start(self, &b, &tb, 0, 2));
		ASSERT_EQ(0, pto_kick(self->aicpu, 0));
		gap_end = pto_now_ns() + (round % 200) * 500;
		while (pto_now_ns() < gap_end)
			;
		ASSERT_EQ(0, pto_kick(self->aicpu, 1));
		EXPECT_TRUE(any_wait_done(&a, 1000) &&
			    any_wait_done(&b, 1000)) {
			TH_LOG("round %u: a kick left a thread asleep", round);
		}
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		EXPECT_EQ(0, a.ret);
		EXPECT_EQ(0, b.ret);
		EXPECT_EQ(1U, a.core ^ b.core);
		if (_metadata->exit_code)
			break;
	}
}

/*
 * One thread waits on cores 0-3, parked as the protocol wants; a kick of
 * core 1 wakes it. @core_wait_first: the file called CORE_WAIT before.
 * The parked flags of cores 0, 2 and 3 afterwards must be @flags.
 */
static void one_waiter_kicked(struct __test_metadata *_metadata,
			      FIXTURE_DATA(core) *self, bool core_wait_first,
			      __u32 flags)
{
	struct any_thread a;
	pthread_t ta;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	/* a deadline already passed: one look, then -ETIMEDOUT */
	if (core_wait_first)
		EXPECT_EQ(-ETIMEDOUT,
			  pto_core_wait(self->exec, 0,
					acore(self, 0)->data_main_base, 1,
					NULL));
	any_park(self, 0, 4);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 4));
	ASSERT_EQ(0, pto_kick(self->aicpu, 1));
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(1U, a.core);
	EXPECT_EQ(flags, acore(self, 0)->parked);
	EXPECT_EQ(flags, acore(self, 2)->parked);
	EXPECT_EQ(flags, acore(self, 3)->parked);
	pthread_join(ta, NULL);
}

/*
 * The kick that wakes the last thread asleep in the device clears the
 * parked flags of that thread's whole set (it looks at every core before
 * it sleeps again), so that dispatches until then send no KICK.
 */
TEST_F(core, wait_any_last_wake_unparks)
{
	one_waiter_kicked(_metadata, self, false, 0);
}

/*
 * A file that has used CORE_WAIT, which does not look at parked flags,
 * keeps its flags as it set them.
 */
TEST_F(core, wait_any_after_core_wait_keeps_flags)
{
	one_waiter_kicked(_metadata, self, true, 1);
}

/*
 * A kick wakes a thread whose set has the core, not the others, even if
 * they queued first.
 */
TEST_F(core, wait_any_kick_goes_to_its_set)
{
	struct any_thread a, b;
	pthread_t ta, tb;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	any_park(self, 0, 4);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	ASSERT_EQ(0, any_start(self, &b, &tb, 2, 2));
	ASSERT_EQ(0, pto_kick(self->aicpu, 3));
	EXPECT_TRUE(any_wait_done(&b, 2000));
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(3U, b.core);
	usleep(50 * 1000);
	EXPECT_FALSE(any_done(&a));
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(0U, a.core);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}

/* A core of the set detached while a thread waits: -ENODEV. */
TEST_F(core, wait_any_core_detached)
{
	struct any_thread a;
	pthread_t ta;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_park(self, 0, 2);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	ASSERT_EQ(0, pto_detach(self->exec, 1));
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(-ENODEV, a.ret);
	pthread_join(ta, NULL);
}

/*
 * SCHED_FIFO (@on) on the one CPU: the threads started after
 * one_cpu_fifo_begin() do not run until this thread turns it off.
 */
static int one_cpu_fifo(bool on)
{
	struct sched_param p = { .sched_priority = on ? 1 : 0 };

	return sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &p) ?
	       -errno : 0;
}

/*
 * Pin this thread (and the threads it starts from now on) to the CPU it
 * runs on, saving its affinity in @was: 0, or -errno if it cannot become
 * SCHED_FIFO there (it is left as it was).
 */
static int one_cpu_fifo_begin(cpu_set_t *was)
{
	cpu_set_t one;
	int ret;

	if (sched_getaffinity(0, sizeof(*was), was))
		return -errno;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	ret = one_cpu_fifo(true);
	if (!ret)
		ret = one_cpu_fifo(false);
	if (ret)
		sched_setaffinity(0, sizeof(*was), was);
	return ret;
}

/*
 * A waits on cores 0-1, then B on core 1. A kick of core 1 wakes A alone
 * (the first in the queue); core 0 is detached before A looks, so A
 * leaves with -ENODEV for core 0: the kick it was woken for must go to B
 * at once, not stay latched while B sleeps to its deadline. This thread
 * and both waiters share one CPU, and this thread kicks and detaches as
 * SCHED_FIFO, so that A cannot run in between.
 */
TEST_F(core, wait_any_gone_passes_kick_on)
{
	struct any_thread a, b;
	pthread_t ta, tb;
	cpu_set_t was;
	int ret;

	ret = one_cpu_fifo_begin(&was);
	if (ret)
		SKIP(return, "one CPU, SCHED_FIFO: %s", strerror(-ret));
	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_park(self, 0, 2);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	ASSERT_EQ(0, any_start(self, &b, &tb, 1, 1));
	ASSERT_EQ(0, one_cpu_fifo(true));
	ASSERT_EQ(0, pto_kick(self->aicpu, 1));
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	ASSERT_EQ(0, one_cpu_fifo(false));
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(-ENODEV, a.ret);
	EXPECT_TRUE(any_wait_done(&b, 1000)) TH_LOG("the kick stayed latched");
	EXPECT_EQ(0, b.ret);
	EXPECT_EQ(1U, b.core);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	sched_setaffinity(0, sizeof(was), &was);
}

/*
 * A thread back from a wait clears its core's parked flag only while the
 * core is still its file's. A waits on cores 0-1; core 0 is detached and
 * attached by another executor, which parks on it, before A runs again
 * (one CPU, this thread SCHED_FIFO): A leaves with -ENODEV for core 0
 * and must leave the new owner's flag set, or the AICPU's next dispatch
 * there would send no kick to wake it.
 */
TEST_F(core, wait_return_spares_new_owner)
{
	struct any_thread a;
	pthread_t ta;
	cpu_set_t was;
	int e2, ret;

	ret = one_cpu_fifo_begin(&was);
	if (ret)
		SKIP(return, "one CPU, SCHED_FIFO: %s", strerror(-ret));
	e2 = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, e2);
	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_park(self, 0, 2);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	ASSERT_EQ(0, one_cpu_fifo(true));
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	ASSERT_EQ(0, pto_attach(e2, 0));
	any_park(self, 0, 1);	/* e2's executor parks on core 0 */
	ASSERT_EQ(0, one_cpu_fifo(false));
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(-ENODEV, a.ret);
	EXPECT_EQ(0U, a.core);
	EXPECT_EQ(1U, acore(self, 0)->parked);
	pthread_join(ta, NULL);
	close(e2);
	sched_setaffinity(0, sizeof(was), &was);
}

/* The AICPU closing wakes a thread waiting on its cores. */
TEST_F(core, wait_any_aicpu_close)
{
	struct any_thread a;
	pthread_t ta;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	any_park(self, 0, 2);
	ASSERT_EQ(0, any_start(self, &a, &ta, 0, 2));
	munmap(self->aregs, PTO_REGS_SIZE);
	close(self->aicpu);
	self->aicpu = -1;
	EXPECT_TRUE(any_wait_done(&a, 2000));
	EXPECT_EQ(0, a.ret);
	pthread_join(ta, NULL);
}

/*
 * Core 0 attached, an executor thread started on it (exec_start(), no
 * FIN) and the core seen to park. 0, or -errno.
 */
static int exec_parked(FIXTURE_DATA(core) *self, struct exec_thread *t,
		       pthread_t *th, bool protocol, __s64 timeout_ns)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	__u32 parks;
	int ret = pto_attach(self->exec, 0);

	if (ret)
		return ret;
	parks = c->park_count;
	ret = exec_start(self, t, th, 0, protocol, false, timeout_ns);
	if (ret)
		return -ret;
	return wait_u32_ne(&c->park_count, parks, 5000) ? 0 : -ETIMEDOUT;
}

/* The whole round trip of Documentation/uapi.rst. */
TEST_F(core, park_kick_irq_roundtrip)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	volatile struct pto_regs_info *ri = ainfo(self);
	const __u32 task = 41;
	struct exec_thread t;
	__u32 parks, kicks, irq0, cnt = 0;
	__u64 sys0;
	pthread_t th;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	PTO_STORE(ri->aicpu_irq_en, 1);
	irq0 = ri->irq_count;
	parks = c->park_count;
	kicks = c->kick_count;
	sys0 = ri->sys_cnt;
	ASSERT_EQ(0, exec_start(self, &t, &th, 0, true, true,
				pto_deadline_ms(10000)));

	/* Wait until the core is really asleep in the device. */
	ASSERT_TRUE(wait_u32(&c->parked, 1, 5000));
	ASSERT_TRUE(wait_u32_ne(&c->park_count, parks, 5000));
	ASSERT_TRUE(wait_u32_ne((volatile __u32 *)&t.tid, 0, 5000));
	ASSERT_TRUE(task_wait_sleeping(t.tid, pto_deadline_ms(5000)));

	/* AICPU: store, full barrier, kick only if parked. */
	PTO_STORE(c->data_main_base, task + 1);
	PTO_FENCE();
	ASSERT_NE(0U, PTO_LOAD(c->parked));
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));

	/* Completion interrupt. */
	ASSERT_EQ(0, pto_irq_wait(self->aicpu, irq0, pto_deadline_ms(10000),
				  &cnt));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.ret) TH_LOG("executor: %s", strerror(-t.ret));
	EXPECT_TRUE(t.slept);
	EXPECT_EQ(task + 1, t.w.dmb);
	EXPECT_TRUE(t.w.reason == PTO_WAKE_DMB || t.w.reason == PTO_WAKE_KICK)
		TH_LOG("reason %u", t.w.reason);
	EXPECT_EQ(irq0 + 1, cnt);
	EXPECT_EQ(irq0 + 1, ri->irq_count);
	EXPECT_EQ(PTO_COND_DONE(task), c->cond);
	EXPECT_EQ(0U, c->parked);
	EXPECT_EQ(parks + 1, c->park_count);
	EXPECT_EQ(kicks + 1, c->kick_count);
	EXPECT_LT(sys0, ri->sys_cnt);
}

/* A kick with DATA_MAIN_BASE unchanged wakes with PTO_WAKE_KICK. */
TEST_F(core, kick_wakes_parked_core)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct exec_thread t;
	pthread_t th;

	ASSERT_EQ(0, exec_parked(self, &t, &th, true, 0 /* no deadline */));
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.ret) TH_LOG("executor: %s", strerror(-t.ret));
	EXPECT_EQ((__u32)PTO_WAKE_KICK, t.w.reason);
	EXPECT_EQ(t.last, t.w.dmb);
	EXPECT_EQ(0U, c->parked);
}

/* Kicking another core does not wake this one. */
TEST_F(core, kick_other_core_no_wake)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct exec_thread t;
	__u32 parks;
	pthread_t th;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 2));
	parks = c->park_count;
	ASSERT_EQ(0, exec_start(self, &t, &th, 0, true, false,
				pto_deadline_ms(10000)));
	ASSERT_TRUE(wait_u32_ne(&c->park_count, parks, 5000));
	ASSERT_EQ(0, pto_kick(self->aicpu, 1));
	pto_sleep_ms(100);
	EXPECT_EQ(1U, PTO_LOAD(c->parked));
	ASSERT_EQ(0, pto_kick(self->aicpu, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.ret);
	EXPECT_EQ((__u32)PTO_WAKE_KICK, t.w.reason);
}

/* Detaching a core its own thread sleeps on: the sleeper gets -ENODEV. */
TEST_F(core, wait_core_detached_while_sleeping)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct exec_thread t;
	pthread_t th;

	ASSERT_EQ(0, exec_parked(self, &t, &th, false, pto_deadline_ms(10000)));
	pto_sleep_ms(20);
	ASSERT_EQ(0, pto_detach(self->exec, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(-ENODEV, t.ret);
	EXPECT_EQ((__u32)PTO_CORE_OFFLINE, c->state);
}

/* The AICPU going away kicks parked cores so that they notice. */
TEST_F(core, aicpu_close_kicks_parked_cores)
{
	volatile struct pto_regs_info *ei = pto_regs_info(self->eregs);
	struct exec_thread t;
	pthread_t th;

	ASSERT_EQ(0, exec_parked(self, &t, &th, true, pto_deadline_ms(10000)));
	munmap(self->aregs, PTO_REGS_SIZE);
	close(self->aicpu);
	self->aicpu = -1;
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, t.ret);
	EXPECT_EQ((__u32)PTO_WAKE_KICK, t.w.reason);
	EXPECT_EQ(0U, ei->aicpu_attached);
	EXPECT_EQ(0U, ei->aicpu_irq_en);
}

/* Many dispatches in a row through park/kick: none lost. */
struct pingpong {
	int fd;
	volatile struct pto_core_regs *c;
	__u32 last;	/* DATA_MAIN_BASE before the first dispatch */
	int n;
	int ret;
	int slept;
};

static void *pingpong_exec(void *arg)
{
	struct pingpong *p = arg;
	__u32 last = p->last;
	struct pto_core_wait w;
	int i;

	for (i = 0; i < p->n; i++) {
		__u32 d;

		for (;;) {
			PTO_STORE(p->c->parked, 1);
			PTO_FENCE();
			d = PTO_LOAD(p->c->data_main_base);
			if (d != last) {
				PTO_STORE(p->c->parked, 0);
				break;
			}
			p->slept++;
			p->ret = pto_core_wait(p->fd, 0, last,
					       pto_deadline_ms(10000), &w);
			if (p->ret)
				return NULL;
			d = w.dmb;
			if (d != last)
				break;
		}
		last = d;
		PTO_STORE(p->c->cond, PTO_COND_DONE(d - 1));
	}
	return NULL;
}

TEST_F(core, dispatch_many_no_lost_wakeup)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	struct pingpong p = { .fd = self->exec, .c = pto_core(self->eregs, 0),
			      .n = 300 };
	pthread_t th;
	int i;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	p.last = PTO_LOAD(c->data_main_base);
	ASSERT_EQ(0, pthread_create(&th, NULL, pingpong_exec, &p));
	for (i = 1; i <= p.n; i++) {
		__s64 end = pto_deadline_ms(10000);

		PTO_STORE(c->data_main_base, (__u32)i);
		PTO_FENCE();
		if (PTO_LOAD(c->parked))
			ASSERT_EQ(0, pto_kick(self->aicpu, 0));
		while (PTO_LOAD(c->cond) != PTO_COND_DONE(i - 1)) {
			ASSERT_GT(end, pto_now_ns())
				TH_LOG("task %d lost (cond 0x%x)", i, c->cond);
			if (p.ret)
				break;
			sched_yield();
		}
		ASSERT_EQ(0, p.ret);
	}
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, p.ret);
	TH_LOG("%d dispatches, executor slept %d times", p.n, p.slept);
}

static void on_sigusr1(int sig)
{
}

struct sig_after {
	pthread_t target;
	pid_t tid;
	long ms;
	int ret;	/* pthread_kill()'s result */
};

/* Signal the target once it sleeps (task_wait_sleeping()), plus ms. */
static void *sig_after_main(void *arg)
{
	struct sig_after *s = arg;

	task_wait_sleeping(s->tid, pto_deadline_ms(10000));
	pto_sleep_ms(s->ms);
	s->ret = pthread_kill(s->target, SIGUSR1);
	return NULL;
}

/* A signal interrupts the sleep (no SA_RESTART): -EINTR. */
TEST_F(core, wait_interrupted_by_signal)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct sig_after s = { .target = pthread_self(),
				.tid = (pid_t)syscall(SYS_gettid), .ms = 20 };
	pthread_t th;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, sig_after_main, &s));
	EXPECT_EQ(-EINTR, pto_core_wait(self->exec, 0, 0,
					pto_deadline_ms(5000), NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, s.ret);
	EXPECT_EQ(0U, acore(self, 0)->parked);
}

/* ---------------------------------------------------------------------- */
/* The AICPU interrupt */

TEST_F(core, raise_irq_counts)
{
	volatile struct pto_regs_info *ri = ainfo(self);
	__u32 irq0 = ri->irq_count, cnt = 0;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(irq0 + 1, ri->irq_count);
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(irq0 + 2, ri->irq_count);
	/* IRQ_WAIT with an old count returns at once with the new one. */
	EXPECT_EQ(0, pto_irq_wait(self->aicpu, irq0, pto_deadline_ms(5000),
				  &cnt));
	EXPECT_EQ(irq0 + 2, cnt);
}

TEST_F(core, raise_irq_not_attached)
{
	EXPECT_EQ(-EINVAL, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(-EINVAL, pto_raise_irq(self->exec, self->info.nr_cores));
	/* "no core" is the AICPU's alone */
	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(-EINVAL, pto_raise_irq(self->exec, PTO_CORE_NONE));
}

/* The AICPU raises the interrupt without a core, and only so. */
TEST_F(core, aicpu_raise_irq_no_core)
{
	volatile struct pto_regs_info *ri = ainfo(self);
	__u32 irq0 = ri->irq_count;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	EXPECT_EQ(-EINVAL, pto_raise_irq(self->aicpu, 0));
	EXPECT_EQ(-EINVAL, pto_raise_irq(self->aicpu, self->info.nr_cores));
	EXPECT_EQ(irq0, ri->irq_count);
	EXPECT_EQ(0, pto_raise_irq(self->aicpu, PTO_CORE_NONE));
	EXPECT_EQ(irq0 + 1, ri->irq_count);
}

/*
 * The kernel never reads the system counter back from the info page: a
 * value the AICPU wrote there is overwritten by the next refresh with
 * the counter's real value, which lies between the two readings of the
 * clock around the refresh.
 */
TEST_F(core, sys_cnt_not_frozen_by_aicpu)
{
	volatile struct pto_regs_info *ri = ainfo(self);
	__u64 per = 1000000000ULL / ri->sys_cnt_freq;
	struct timespec t0, t1;
	__u64 lo, hi, v;

	ri->sys_cnt = ~0ULL;
	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC, &t0));
	ASSERT_EQ(0, pto_raise_irq(self->aicpu, PTO_CORE_NONE));
	ASSERT_EQ(0, clock_gettime(CLOCK_MONOTONIC, &t1));
	v = ri->sys_cnt;
	lo = (t0.tv_sec * 1000000000ULL + t0.tv_nsec - ri->sys_cnt_epoch_ns) /
	     per;
	hi = (t1.tv_sec * 1000000000ULL + t1.tv_nsec - ri->sys_cnt_epoch_ns) /
	     per;
	EXPECT_LE(lo, v);
	EXPECT_GE(hi, v);
}

/* Works with no AICPU at all (the interrupt is just counted). */
TEST_F(core, raise_irq_without_aicpu)
{
	__u32 irq0 = ainfo(self)->irq_count;
	volatile struct pto_regs_info *ei = pto_regs_info(self->eregs);

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	munmap(self->aregs, PTO_REGS_SIZE);
	close(self->aicpu);
	self->aicpu = -1;
	EXPECT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(irq0 + 1, ei->irq_count);
}

TEST_F(core, irq_wait_timeout)
{
	__u32 cnt = ainfo(self)->irq_count;
	__s64 t0 = pto_now_ns(), dt;

	EXPECT_EQ(-ETIMEDOUT, pto_irq_wait(self->aicpu, cnt,
					   t0 + 100 * 1000000LL, NULL));
	dt = pto_now_ns() - t0;
	EXPECT_LE(99 * 1000000LL, dt);
	EXPECT_GT(5000 * 1000000LL, dt);
}

TEST_F(core, irq_wait_deadline_in_past)
{
	__u32 cnt = ainfo(self)->irq_count;

	EXPECT_EQ(-ETIMEDOUT, pto_irq_wait(self->aicpu, cnt, 1, NULL));
}

struct irq_waiter {
	int fd;
	__u32 count;
	int ret;
	__u32 out;
};

static void *irq_waiter_main(void *arg)
{
	struct irq_waiter *w = arg;

	w->ret = pto_irq_wait(w->fd, w->count, pto_deadline_ms(10000),
			      &w->out);
	return NULL;
}

TEST_F(core, irq_wait_woken_by_raise)
{
	struct irq_waiter w = { .fd = self->aicpu,
				.count = ainfo(self)->irq_count };
	pthread_t th;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, irq_waiter_main, &w));
	pto_sleep_ms(50);
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(w.count + 1, w.out);
}

/* One AICPU thread wakes another out of IRQ_WAIT (new work for it). */
TEST_F(core, irq_wait_woken_by_aicpu)
{
	struct irq_waiter w = { .fd = self->aicpu,
				.count = ainfo(self)->irq_count };
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, irq_waiter_main, &w));
	pto_sleep_ms(50);
	ASSERT_EQ(0, pto_raise_irq(self->aicpu, PTO_CORE_NONE));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(w.count + 1, w.out);
}

TEST_F(core, irq_wait_interrupted_by_signal)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct sig_after s = { .target = pthread_self(),
				.tid = (pid_t)syscall(SYS_gettid), .ms = 20 };
	pthread_t th;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, sig_after_main, &s));
	EXPECT_EQ(-EINTR, pto_irq_wait(self->aicpu, ainfo(self)->irq_count,
				       pto_deadline_ms(5000), NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, s.ret);
}

/*
 * The most negative deadline has passed as surely as 1 has: the waits
 * look once and return -ETIMEDOUT at once. A watchdog thread ends a wait
 * that sleeps instead (SIGUSR1, -EINTR) so that the test fails, not hangs.
 */
struct watchdog {
	pthread_t target;
	int done;	/* atomic: the target's call returned */
	int fired;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *d = arg;
	__s64 end = pto_deadline_ms(2000);

	while (!__atomic_load_n(&d->done, __ATOMIC_ACQUIRE)) {
		if (pto_now_ns() > end) {
			d->fired = 1;
			pthread_kill(d->target, SIGUSR1);
			end = pto_deadline_ms(100);
		}
		usleep(1000);
	}
	return NULL;
}

static void watchdog_start(struct __test_metadata *_metadata,
			   struct watchdog *d, pthread_t *th)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };

	*d = (struct watchdog){ .target = pthread_self() };
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(th, NULL, watchdog_main, d));
}

static void watchdog_stop(struct __test_metadata *_metadata,
			  struct watchdog *d, pthread_t th)
{
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, d->fired) TH_LOG("the wait slept until signalled");
}

TEST_F(core, wait_deadline_most_negative)
{
	struct watchdog d;
	pthread_t th;
	__s64 t0;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	PTO_STORE(pto_core(self->eregs, 0)->parked, 1);
	watchdog_start(_metadata, &d, &th);
	t0 = pto_now_ns();
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait(self->exec, 0, 0, INT64_MIN,
					    NULL));
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
	watchdog_stop(_metadata, &d, th);
	EXPECT_EQ(0U, acore(self, 0)->parked);
}

TEST_F(core, wait_any_deadline_most_negative)
{
	__u64 m[PTO_CORE_MASK_WORDS];
	struct watchdog d;
	pthread_t th;
	__s64 t0;

	ASSERT_EQ(0, pto_cores_range(self->exec, PTO_IOC_CORE_ATTACH, 0, 4));
	any_park(self, 0, 4);
	any_mask(m, 0, 4);
	watchdog_start(_metadata, &d, &th);
	t0 = pto_now_ns();
	EXPECT_EQ(-ETIMEDOUT, pto_core_wait_any(self->exec, m, INT64_MIN,
						NULL));
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
	watchdog_stop(_metadata, &d, th);
}

TEST_F(core, irq_wait_deadline_most_negative)
{
	struct watchdog d;
	pthread_t th;
	__s64 t0;

	watchdog_start(_metadata, &d, &th);
	t0 = pto_now_ns();
	EXPECT_EQ(-ETIMEDOUT, pto_irq_wait(self->aicpu,
					   ainfo(self)->irq_count, INT64_MIN,
					   NULL));
	EXPECT_GT(1000 * 1000000LL, pto_now_ns() - t0);
	watchdog_stop(_metadata, &d, th);
}

/* read() and poll(), uio style. */

/*
 * Core 0 attached and one interrupt raised; the AICPU's read() of it
 * (*@v) brings its last-seen count up to date. 0, or -errno.
 */
static int irq_synced(FIXTURE_DATA(core) *self, __u32 *v)
{
	ssize_t n;
	int ret = pto_attach(self->exec, 0);

	if (!ret)
		ret = pto_raise_irq(self->exec, 0);
	if (ret)
		return ret;
	n = read(self->aicpu, v, 4);
	return n == 4 ? 0 : n < 0 ? -errno : -EIO;
}

TEST_F(core, read_returns_count)
{
	__u32 v = 0;

	ASSERT_EQ(0, irq_synced(self, &v));
	EXPECT_EQ(ainfo(self)->irq_count, v);
}

TEST_F(core, read_wrong_size)
{
	__u64 v;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(-1, read(self->aicpu, &v, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->aicpu, &v, 8));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->aicpu, &v, 3));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(core, read_bad_buffer)
{
	void *volatile bad = NULL;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(-1, read(self->aicpu, bad, 4));
	EXPECT_EQ(EFAULT, errno);
}

struct reader {
	int fd;
	ssize_t n;
	int err;
	__u32 v;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->n = read(r->fd, &r->v, 4);
	r->err = errno;
	return NULL;
}

/* After a read, the next read sleeps until the next interrupt. */
TEST_F(core, read_blocks_until_irq)
{
	struct reader r = { .fd = self->aicpu };
	__u32 v;
	pthread_t th;

	ASSERT_EQ(0, irq_synced(self, &v));
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_main, &r));
	pto_sleep_ms(100);
	EXPECT_EQ(0, r.n);	/* still blocked */
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(4, r.n) TH_LOG("read: %s", strerror(r.err));
	EXPECT_EQ(v + 1, r.v);
}

TEST_F(core, read_nonblock_eagain)
{
	__u32 v;
	int fl = fcntl(self->aicpu, F_GETFL);

	ASSERT_LE(0, fl);
	ASSERT_EQ(0, irq_synced(self, &v));
	ASSERT_EQ(0, fcntl(self->aicpu, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->aicpu, &v, 4));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(4, read(self->aicpu, &v, 4));
}

TEST_F(core, read_wrong_role)
{
	int cl = pto_open_role(PTO_ROLE_CLIENT);
	__u32 v;

	ASSERT_LE(0, cl);
	EXPECT_EQ(-1, read(cl, &v, 4));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, read(self->exec, &v, 4));
	EXPECT_EQ(EACCES, errno);
	close(cl);
}

TEST_F(core, poll_aicpu)
{
	struct pollfd pfd = { .fd = self->aicpu, .events = POLLIN };
	__u32 v, cnt;

	ASSERT_EQ(0, irq_synced(self, &v));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	ASSERT_EQ(4, read(self->aicpu, &v, 4));
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	/* IRQ_WAIT also moves the last-seen count. */
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_EQ(0, pto_irq_wait(self->aicpu, v, pto_deadline_ms(1000),
				  &cnt));
	EXPECT_EQ(v + 1, cnt);
	pfd.revents = 0;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

struct poller {
	int fd;
	int ret;
	short revents;
};

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	p->ret = poll(&pfd, 1, 10000);
	p->revents = pfd.revents;
	return NULL;
}

TEST_F(core, poll_woken_by_raise)
{
	struct poller p = { .fd = self->aicpu };
	pthread_t th;
	__u32 v;

	ASSERT_EQ(0, irq_synced(self, &v));
	ASSERT_EQ(0, pthread_create(&th, NULL, poller_main, &p));
	pto_sleep_ms(50);
	ASSERT_EQ(0, pto_raise_irq(self->exec, 0));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1, p.ret);
	EXPECT_TRUE(p.revents & POLLIN);
}

/*
 * A file in an epoll set before it takes the AICPU role: EPOLLERR while
 * it has no role, and once it is the AICPU, the next interrupt wakes the
 * set (the file waits on the interrupt queue whatever its role).
 */
TEST(epoll_before_the_aicpu_role)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pto_info info;
	int fd, ep, exec;
	__u32 v;

	PTO_OPEN_OR_SKIP(fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, 0));
	EXPECT_TRUE(out.events & EPOLLERR);

	ASSERT_EQ(0, pto_set_role(fd, PTO_ROLE_AICPU));
	ASSERT_EQ(0, pto_get_info(fd, &info));
	ASSERT_EQ(0, pto_reset_cores(info.nr_cores));
	exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, exec);
	ASSERT_EQ(0, pto_attach(exec, 0));
	/* Catch up with the interrupts raised before: nothing pending. */
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	while (read(fd, &v, 4) == 4)
		;
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, epoll_wait(ep, &out, 1, 0));

	ASSERT_EQ(0, pto_raise_irq(exec, 0));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, 1000));
	EXPECT_TRUE(out.events & EPOLLIN);
	close(exec);
	close(ep);
	close(fd);
}

/* ---------------------------------------------------------------------- */
/* The spin (no system call) path of the protocol also works. */
TEST_F(core, dispatch_by_store_only)
{
	volatile struct pto_core_regs *c = acore(self, 0);
	volatile struct pto_core_regs *ec = pto_core(self->eregs, 0);
	__u32 kicks;

	ASSERT_EQ(0, pto_attach(self->exec, 0));
	kicks = c->kick_count;
	/* Handshake.task first, then DATA_MAIN_BASE. */
	PTO_STORE(c->task, self->info.gm_dev_base + 0x1000);
	PTO_STORE(c->data_main_base, 9);
	EXPECT_EQ(self->info.gm_dev_base + 0x1000, PTO_LOAD(ec->task));
	EXPECT_EQ(9U, PTO_LOAD(ec->data_main_base));
	PTO_STORE(ec->cond, PTO_COND_ACK(8));
	EXPECT_EQ(PTO_COND_ACK(8), PTO_LOAD(c->cond));
	PTO_STORE(ec->cond, PTO_COND_DONE(8));
	EXPECT_EQ(PTO_COND_DONE(8), PTO_LOAD(c->cond));
	EXPECT_EQ(kicks, c->kick_count);
}

TEST_HARNESS_MAIN
