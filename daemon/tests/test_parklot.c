// SPDX-License-Identifier: MIT
/*
 * test_parklot.c - where executor threads sleep for kicks
 * (pto-private/parklot.h), with the process-private futex the sim device
 * uses; test_udev runs the shared one through the user-mode device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pto-private/parklot.h>
#include <pto-private/time.h>

#include "asleep.h"
#include "tap.h"

#define MS	1000000LL

struct sleeper {
	struct pto_parklot *lot;
	pthread_t th;
	bool started;
	_Atomic pid_t tid;
	int ret;
	int64_t woke;
};

/* Park once, as a device's park_any does when it found no latched kick. */
static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	uint32_t seq = pto_parklot_seq(s->lot);

	atomic_store(&s->tid, gettid());
	s->ret = pto_parklot_wait(s->lot, seq, pto_mono_ns() + 3000 * MS,
				  false);
	s->woke = pto_mono_ns();
	return NULL;
}

/* Start @n sleepers and wait (bounded) until all are counted and asleep. */
static int start_sleepers(struct pto_parklot *lot, struct sleeper *s, int n)
{
	int64_t until = pto_mono_ns() + 5000 * MS;
	int i, made = 0;

	for (i = 0; i < n; i++) {
		s[i] = (struct sleeper){ .lot = lot, .ret = 1 };
		s[i].started = !pthread_create(&s[i].th, NULL, sleeper_main,
					       &s[i]);
		made += s[i].started;
	}
	for (i = 0; i < n && pto_mono_ns() < until; ) {
		pid_t tid = atomic_load(&s[i].tid);

		if (atomic_load(&lot->parkers) == (uint32_t)n && tid &&
		    thread_asleep(tid))
			i++;
		else
			pto_sleep_ns(MS / 10);
	}
	return i == n ? made : -1;
}

static void join_sleepers(struct sleeper *s, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (s[i].started)
			pthread_join(s[i].th, NULL);
}

/*
 * A burst of kicks while the one parked thread has not run yet makes one
 * futex call; a second parked thread one more.
 */
static void t_burst(void)
{
	struct pto_parklot lot = { 0 };
	int i, calls = 0;

	atomic_store(&lot.parkers, 1);	/* counted, not running yet */
	for (i = 0; i < 6; i++)
		calls += pto_parklot_kick(&lot, false);
	ok(calls == 1 && atomic_load(&lot.signaled) == 1 &&
	   atomic_load(&lot.seq) == 6,
	   "6 kicks, one parked thread that has not run: 1 futex call (%d), every kick counted in seq (%u)",
	   calls, atomic_load(&lot.seq));
	atomic_store(&lot.parkers, 2);
	for (i = 0; i < 6; i++)
		calls += pto_parklot_kick(&lot, false);
	ok(calls == 2 && atomic_load(&lot.signaled) == 2,
	   "a second parked thread: 6 more kicks, 1 more call (%d in all)",
	   calls);
	atomic_store(&lot.parkers, 0);
	atomic_store(&lot.signaled, 0);
	ok(!pto_parklot_kick(&lot, false), "nobody parked: no call");
}

/* Real sleepers: as many kicks as sleepers wake them all, at once. */
static void t_wake(void)
{
	struct pto_parklot lot = { 0 };
	struct sleeper s[2];
	int64_t t0;
	int made, calls = 0;

	made = start_sleepers(&lot, s, 2);
	ok(made == 2, "two threads parked, asleep");
	t0 = pto_mono_ns();
	calls += pto_parklot_kick(&lot, false);
	calls += pto_parklot_kick(&lot, false);
	join_sleepers(s, 2);
	ok(made == 2 && !s[0].ret && !s[1].ret && calls == 2 &&
	   s[0].woke - t0 < 1000 * MS && s[1].woke - t0 < 1000 * MS,
	   "two kicks woke both at once (%d %d, %lld %lld ms, %d calls)",
	   s[0].ret, s[1].ret, (long long)((s[0].woke - t0) / MS),
	   (long long)((s[1].woke - t0) / MS), calls);
	ok(!atomic_load(&lot.parkers) && !atomic_load(&lot.signaled),
	   "nobody counted as parked or woken afterwards");

	made = start_sleepers(&lot, s, 2);
	t0 = pto_mono_ns();
	pto_parklot_wake_all(&lot, false);
	join_sleepers(s, 2);
	ok(made == 2 && !s[0].ret && !s[1].ret &&
	   s[0].woke - t0 < 1000 * MS && s[1].woke - t0 < 1000 * MS,
	   "wake_all woke both parked threads at once (%d %d)",
	   s[0].ret, s[1].ret);
}

/* The futex's answers, and the counts left as they were. */
static void t_returns(void)
{
	struct pto_parklot lot = { 0 };
	uint32_t seq = pto_parklot_seq(&lot);
	int64_t t0;
	int ret;

	pto_parklot_kick(&lot, false);
	ret = pto_parklot_wait(&lot, seq, 0, false);
	ok(ret == -EAGAIN, "a kick since the seq was read: -EAGAIN at once (%d)",
	   ret);
	seq = pto_parklot_seq(&lot);
	t0 = pto_mono_ns();
	ret = pto_parklot_wait(&lot, seq, t0 + 20 * MS, false);
	ok(ret == -ETIMEDOUT && pto_mono_ns() - t0 >= 20 * MS,
	   "nothing comes: -ETIMEDOUT at the deadline (%d)", ret);
	ret = pto_parklot_wait(&lot, seq, -1, false);
	ok(ret == -ETIMEDOUT, "a deadline before the epoch: -ETIMEDOUT (%d)",
	   ret);
	ok(!atomic_load(&lot.parkers) && !atomic_load(&lot.signaled),
	   "no thread left counted");
}

int main(void)
{
	t_burst();
	t_wake();
	t_returns();
	return tap_done();
}
