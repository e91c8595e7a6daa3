// SPDX-License-Identifier: MIT
/*
 * pto_cpu_share.h - a polling thread that finds company on its CPU
 *
 * An executor thread that polls for work yields its CPU now and then
 * (pto_exec_pool.c, spin() and linger()). A yield that comes back late
 * ran another thread on this CPU. The AICPU thread that the poller waits
 * for and the poller itself, put on one CPU while the host's other CPUs
 * were busy (an orchestrator submitting its graph beside them), stay
 * there once those CPUs go idle: both run every few microseconds, so the
 * kernel's load balancer finds neither cold enough to move for
 * milliseconds, and every hand-off between them waits for a yield (a
 * serial chain's hop took 5 us instead of 1). A thread that sees
 * PTO_SHARE_RUN late yields in a row looks at the host and, if another
 * CPU is idle, moves itself there; one that keeps finding company looks
 * less and less often.
 */
#ifndef PTO_CPU_SHARE_H
#define PTO_CPU_SHARE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A yield that takes PTO_SHARE_LATE_NS or more, and PTO_SHARE_LATE_X
 * times an uncontended yield (pto_cpu_share_late_ns()), ran another thread.
 */
#define PTO_SHARE_LATE_NS	1000
#define PTO_SHARE_LATE_X	4
/* Late yields in a row before a look; doubled up to PTO_SHARE_RUN_MAX */
#define PTO_SHARE_RUN		16
#define PTO_SHARE_RUN_MAX	4096
/* A look within PTO_SHARE_BACKOFF_NS of the last doubles the run ... */
#define PTO_SHARE_BACKOFF_NS	20000000LL
/* ... and PTO_SHARE_RESET_NS without one resets it. */
#define PTO_SHARE_RESET_NS	200000000LL

/* One thread's late yields (zeroed: none yet). */
struct pto_cpu_share {
	uint32_t run;		/* late yields in a row */
	uint32_t need;		/* how many make a look, 0: PTO_SHARE_RUN */
	int64_t looked;		/* the last look (mono ns), 0: none */
};

/*
 * How long a yield that ran another thread takes at least, here: measured
 * (the least of a few yields of the calling thread; under an emulator a
 * system call alone can take microseconds).
 */
int64_t pto_cpu_share_late_ns(void);

/*
 * A yield ended at @now_ns, @late or not: true if the thread should look
 * for an idle CPU now (it counts as a look).
 */
bool pto_cpu_share_yielded(struct pto_cpu_share *sh, bool late,
			   int64_t now_ns);

/*
 * Move the calling thread off CPU @cpu: to the next CPU its affinity
 * allows, then the affinity back as it was (the thread stays where it
 * went, which the affinity allows). 0, -EINVAL if it may run on @cpu
 * alone (or @cpu < 0), or the -errno of sched_setaffinity().
 */
int pto_cpu_move_off(int cpu);

#endif /* PTO_CPU_SHARE_H */
