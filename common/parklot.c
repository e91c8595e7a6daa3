// SPDX-License-Identifier: MIT
/*
 * parklot.c - sleeping for kicks (see pto-private/parklot.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>

#include <pto-private/futex.h>
#include <pto-private/parklot.h>

bool pto_parklot_kick(struct pto_parklot *l, bool shared)
{
	uint32_t s;

	atomic_fetch_add(&l->seq, 1);
	s = atomic_load(&l->signaled);
	while (s < atomic_load(&l->parkers))
		if (atomic_compare_exchange_weak(&l->signaled, &s, s + 1)) {
			atomic_store_explicit(&l->kicker_cpu, sched_getcpu(),
					      memory_order_relaxed);
			pto_futex_wake_op(&l->seq, 1, shared);
			return true;
		}
	return false;
}

void pto_parklot_wake_all(struct pto_parklot *l, bool shared)
{
	atomic_fetch_add(&l->seq, 1);
	if (atomic_load(&l->parkers))
		pto_futex_wake_op(&l->seq, INT_MAX, shared);
}

int pto_parklot_wait(struct pto_parklot *l, uint32_t seq, int64_t deadline_ns,
		     bool shared)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000LL),
		.tv_nsec = (long)(deadline_ns % 1000000000LL),
	};
	uint32_t s;
	int ret;

	if (deadline_ns < 0)
		return -ETIMEDOUT;
	atomic_fetch_add(&l->parkers, 1);
	ret = pto_futex_wait_op(&l->seq, seq, deadline_ns > 0 ? &ts : NULL,
				deadline_ns > 0, shared);
	/* a wake-up outstanding goes with this thread, then it uncounts */
	s = atomic_load(&l->signaled);
	while (s && !atomic_compare_exchange_weak(&l->signaled, &s, s - 1))
		;
	atomic_fetch_sub(&l->parkers, 1);
	/*
	 * Woken on the CPU of the thread that kicked: the kernel placed us
	 * there and we preempted it, most likely in the middle of a batch
	 * of dispatches. Let it finish them, so that we find them all
	 * rather than one, and sleep again after each.
	 */
	if (!ret && sched_getcpu() ==
	    atomic_load_explicit(&l->kicker_cpu, memory_order_relaxed))
		sched_yield();
	return ret;
}
