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
	uint64_t c;

	atomic_fetch_add(&l->seq, 1);
	c = atomic_load(&l->count);
	while (PTO_PARKLOT_SIGNALED(c) < PTO_PARKLOT_PARKERS(c))
		if (atomic_compare_exchange_weak(&l->count, &c,
						 c + PTO_PARKLOT_COUNT(0, 1))) {
			/*
			 * The thread counted may have read @seq after the
			 * bump above: move it again, or it sleeps on the new
			 * value with its wake-up claimed by this kick.
			 */
			atomic_fetch_add(&l->seq, 1);
			atomic_store_explicit(&l->kicker_cpu, sched_getcpu(),
					      memory_order_relaxed);
			pto_futex_wake_op(&l->seq, 1, shared);
			return true;
		}
	return false;
}

/* A thread leaves the futex: one outstanding wake-up, then itself. */
static void parklot_leave(struct pto_parklot *l)
{
	uint64_t c = atomic_load(&l->count), n;

	do {
		uint32_t s = PTO_PARKLOT_SIGNALED(c);

		n = PTO_PARKLOT_COUNT(PTO_PARKLOT_PARKERS(c) - 1, s ? s - 1 : 0);
	} while (!atomic_compare_exchange_weak(&l->count, &c, n));
}

void pto_parklot_wake_all(struct pto_parklot *l, bool shared)
{
	atomic_fetch_add(&l->seq, 1);
	if (PTO_PARKLOT_PARKERS(atomic_load(&l->count)))
		pto_futex_wake_op(&l->seq, INT_MAX, shared);
}

int pto_parklot_wait(struct pto_parklot *l, uint32_t seq, int64_t deadline_ns,
		     bool shared)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000LL),
		.tv_nsec = (long)(deadline_ns % 1000000000LL),
	};
	int ret;

	if (deadline_ns < 0)
		return -ETIMEDOUT;
	atomic_fetch_add(&l->count, PTO_PARKLOT_COUNT(1, 0));
	ret = pto_futex_wait_op(&l->seq, seq, deadline_ns > 0 ? &ts : NULL,
				deadline_ns > 0, shared);
	parklot_leave(l);
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
