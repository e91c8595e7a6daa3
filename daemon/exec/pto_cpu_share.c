// SPDX-License-Identifier: MIT
/*
 * pto_cpu_share.c - a polling thread that finds company on its CPU (see
 * pto_cpu_share.h)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include <pto-private/time.h>

#include "pto_cpu_share.h"

/* Yields timed by pto_cpu_share_late_ns(). */
#define SHARE_CALIBRATE	8

int64_t pto_cpu_share_late_ns(void)
{
	int64_t least = INT64_MAX;
	int i;

	for (i = 0; i < SHARE_CALIBRATE; i++) {
		int64_t t0 = pto_mono_ns(), dt;

		sched_yield();
		dt = pto_mono_ns() - t0;
		if (dt < least)
			least = dt;
	}
	if (least > INT64_MAX / PTO_SHARE_LATE_X)
		return INT64_MAX;
	return least * PTO_SHARE_LATE_X > PTO_SHARE_LATE_NS ?
	       least * PTO_SHARE_LATE_X : PTO_SHARE_LATE_NS;
}

bool pto_cpu_share_yielded(struct pto_cpu_share *sh, bool late,
			   int64_t now_ns)
{
	if (!late) {
		sh->run = 0;
		return false;
	}
	if (!sh->need ||
	    (sh->looked && now_ns - sh->looked >= PTO_SHARE_RESET_NS))
		sh->need = PTO_SHARE_RUN;
	if (++sh->run < sh->need)
		return false;
	sh->run = 0;
	if (sh->looked && now_ns - sh->looked < PTO_SHARE_BACKOFF_NS &&
	    sh->need < PTO_SHARE_RUN_MAX)
		sh->need *= 2;
	sh->looked = now_ns;
	return true;
}

int pto_cpu_move_off(int cpu)
{
	cpu_set_t was, one;
	int c;

	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(was), &was))
		return -EINVAL;
	for (c = (cpu + 1) % CPU_SETSIZE; c != cpu; c = (c + 1) % CPU_SETSIZE)
		if (CPU_ISSET(c, &was))
			break;
	if (c == cpu)
		return -EINVAL;
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -errno;
	/* the thread runs on @c now; allowed there, it stays */
	if (sched_setaffinity(0, sizeof(was), &was))
		return -errno;
	return 0;
}
