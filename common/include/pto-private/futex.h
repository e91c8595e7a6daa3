// SPDX-License-Identifier: MIT
/*
 * futex.h - process-private futex wait and wake on a 32-bit word
 *
 * For the in-process sleepers of the sim device and the executor's
 * threads. (A user-mode device shared between processes would use the
 * shared variants.)
 */
#ifndef PTO_PRIVATE_FUTEX_H
#define PTO_PRIVATE_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * Sleep while *@addr == @val, at most @rel (NULL: no limit). 0 when woken
 * (or spuriously), -EAGAIN if *@addr already differs, -ETIMEDOUT,
 * -EINTR.
 */
static inline int pto_futex_wait(void *addr, uint32_t val,
				 const struct timespec *rel)
{
	if (syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, rel, NULL, 0))
		return -errno;
	return 0;
}

/* Wake at most @n sleepers on @addr. */
static inline void pto_futex_wake(void *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

#endif /* PTO_PRIVATE_FUTEX_H */
