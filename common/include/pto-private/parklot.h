// SPDX-License-Identifier: MIT
/*
 * parklot.h - where executor threads sleep for kicks, without a system
 * call per kick
 *
 * Used by the two devices whose kicks are futex calls: the sim device (in
 * process, private futex) and the user-mode device (shared page, shared
 * futex). pto.ko does the same in the kernel (Documentation/kmod.rst).
 *
 * A kick latches its event first (the device's pending-kick bitmap), then
 * calls pto_parklot_kick(): it bumps @seq, and makes the futex call only
 * if a parked thread is left that no kick has woken yet (signaled <
 * parkers), claiming that wake-up by the increment of signaled and
 * bumping @seq once more before the call: the thread it claimed for may
 * have read @seq after the first bump, and would otherwise sleep on that
 * value while every later kick counts it as woken already. A
 * thread that parks reads @seq, looks for a latched event, and only if it
 * found none calls pto_parklot_wait(): it counts itself in parkers and
 * sleeps while @seq still holds the value it read. Both sides are
 * seq_cst: either the kick sees the parker counted, or the parker sees
 * @seq moved (the futex returns at once) and finds the latched event. So
 * no wake-up is lost, and a burst of kicks that comes before the woken
 * thread runs makes one system call: the other kicks stay latched, and it
 * (or the next thread to park) takes them without sleeping.
 *
 * A thread leaving the futex, woken or not, takes one outstanding wake-up
 * with it (one meant for another parker then goes again to the next
 * kick) and uncounts itself. The two counts are one word (@count), and
 * each side changes it with one compare-and-swap, so signaled never
 * exceeds parkers: with two words a kick could claim the wake-up of a
 * thread that had looked at signaled and was about to uncount itself,
 * and the claim outlived it; the next thread to park was then not woken
 * by a kick (it slept until another thread's task ended, about 1 ms in
 * pto-bench-peers' latency shape). A thread woken on the CPU its kicker ran on (the kernel puts
 * a wakee there, and it preempts the kicker) yields once first, so that
 * the kicker finishes the dispatches it was making: on two CPUs a fan's
 * dispatches otherwise went one task per wake-up, the other CPU idle.
 */
#ifndef PTO_PRIVATE_PARKLOT_H
#define PTO_PRIVATE_PARKLOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/**
 * struct pto_parklot - sleepers waiting for kicks.
 * @seq: the futex word: every kick and every wake-all bumps it.
 * @kicker_cpu: the CPU of the last kick that made the futex call.
 * @count: PTO_PARKLOT_COUNT(parkers, signaled): the threads in
 *	pto_parklot_wait(), and of them those a kick has woken that have
 *	not yet left.
 *
 * @shared below: the lot lies in memory shared between processes (a
 * shared futex), else the futex is private to the process.
 */
struct pto_parklot {
	_Atomic uint32_t seq;
	_Atomic int32_t kicker_cpu;
	_Atomic uint64_t count;
};

#define PTO_PARKLOT_COUNT(parkers, signaled) \
	((uint64_t)(uint32_t)(parkers) | (uint64_t)(uint32_t)(signaled) << 32)
#define PTO_PARKLOT_PARKERS(count)	((uint32_t)(count))
#define PTO_PARKLOT_SIGNALED(count)	((uint32_t)((count) >> 32))

/* What a thread about to park reads before it looks for a latched event. */
static inline uint32_t pto_parklot_seq(struct pto_parklot *l)
{
	return atomic_load(&l->seq);
}

/*
 * After an event is latched: wake one parked thread that no kick has
 * woken yet, if there is one. True if it made the futex call.
 */
bool pto_parklot_kick(struct pto_parklot *l, bool shared);

/* Every parked thread looks again (teardown, a detach, a death). */
void pto_parklot_wake_all(struct pto_parklot *l, bool shared);

/*
 * Sleep while @seq (from pto_parklot_seq(), read before looking for an
 * event) is current, until the absolute CLOCK_MONOTONIC @deadline_ns (0:
 * none; one that has passed: -ETIMEDOUT at once). 0 when woken (or
 * spuriously), -EAGAIN if a kick came since @seq was read, -ETIMEDOUT,
 * -EINTR. The caller looks for a latched event again in every case.
 */
int pto_parklot_wait(struct pto_parklot *l, uint32_t seq, int64_t deadline_ns,
		     bool shared);

#endif /* PTO_PRIVATE_PARKLOT_H */
