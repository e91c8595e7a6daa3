// SPDX-License-Identifier: MIT
/*
 * futex.h - futex wait and wake on a 32-bit word
 *
 * Process-private variants for the in-process sleepers of the sim device
 * and the executor's threads; shared variants (no FUTEX_PRIVATE_FLAG: the
 * kernel keys the word by its page, so processes mapping the same memfd
 * meet on it) for the user-mode device, whose AICPU (ptod) and executor
 * (pto-aicore) are different processes, and for a sandbox's mailbox
 * (sandbox.h), shared by pto-aicore and the sandbox.
 */
#ifndef PTO_PRIVATE_FUTEX_H
#define PTO_PRIVATE_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * FUTEX_WAIT_BITSET on @addr while it holds @val: @rel is relative (NULL:
 * no limit) unless @abs, then an absolute CLOCK_MONOTONIC time.
 */
static inline int pto_futex_wait_op(void *addr, uint32_t val,
				    const struct timespec *t, bool abs,
				    bool shared)
{
	int op = abs ? FUTEX_WAIT_BITSET : FUTEX_WAIT;

	if (!shared)
		op |= FUTEX_PRIVATE_FLAG;
	if (syscall(SYS_futex, addr, op, val, t, NULL,
		    abs ? FUTEX_BITSET_MATCH_ANY : 0))
		return -errno;
	return 0;
}

static inline void pto_futex_wake_op(void *addr, int n, bool shared)
{
	syscall(SYS_futex, addr,
		shared ? FUTEX_WAKE : FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		NULL, NULL, 0);
}

/*
 * Sleep while *@addr == @val, at most @rel (NULL: no limit). 0 when woken
 * (or spuriously), -EAGAIN if *@addr already differs, -ETIMEDOUT,
 * -EINTR.
 */
static inline int pto_futex_wait(void *addr, uint32_t val,
				 const struct timespec *rel)
{
	return pto_futex_wait_op(addr, val, rel, false, false);
}

/* Wake at most @n sleepers on @addr. */
static inline void pto_futex_wake(void *addr, int n)
{
	pto_futex_wake_op(addr, n, false);
}

/*
 * The same on a word in memory shared between processes, with an absolute
 * CLOCK_MONOTONIC deadline in ns (0: none; a deadline that has passed
 * returns -ETIMEDOUT at once).
 */
static inline int pto_futex_wait_shared(void *addr, uint32_t val,
					int64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000LL),
		.tv_nsec = (long)(deadline_ns % 1000000000LL),
	};

	if (deadline_ns < 0)
		return -ETIMEDOUT;
	return pto_futex_wait_op(addr, val, deadline_ns > 0 ? &ts : NULL,
				 deadline_ns > 0, true);
}

static inline void pto_futex_wake_shared(void *addr, int n)
{
	pto_futex_wake_op(addr, n, true);
}

#endif /* PTO_PRIVATE_FUTEX_H */
