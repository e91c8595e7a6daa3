// SPDX-License-Identifier: MIT
/*
 * pto2_error.c - a run's error state: the first error wins, every thread
 * that can act on it is told (schedulers woken, waiters signalled)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "pto2_internal.h"

void pto2_rt_signal(PTO2Runtime *rt)
{
	pthread_mutex_lock(&rt->lock);
	pthread_cond_broadcast(&rt->cond);
	pthread_mutex_unlock(&rt->lock);
}

void pto2_rt_fail(PTO2Runtime *rt, int err, const char *fmt, ...)
{
	bool first = false;
	va_list ap;

	pthread_mutex_lock(&rt->err_lock);
	if (!atomic_load_explicit(&rt->error, memory_order_relaxed)) {
		va_start(ap, fmt);
		vsnprintf(rt->errmsg, sizeof(rt->errmsg), fmt, ap);
		va_end(ap);
		atomic_store_explicit(&rt->error, err, memory_order_release);
		first = true;
	}
	pthread_mutex_unlock(&rt->err_lock);
	if (first) {
		pto2_logf(&rt->log, PTO2_LOG_ERROR, "%s", rt->errmsg);
		pto2_wake_schedulers(rt);
		pto2_rt_signal(rt);
	}
}

int pto2_rt_get_error(PTO2Runtime *rt)
{
	return rt ? atomic_load_explicit(&rt->error, memory_order_acquire) :
		    -EINVAL;
}

const char *pto2_rt_get_error_msg(PTO2Runtime *rt)
{
	if (!rt || !atomic_load_explicit(&rt->error, memory_order_acquire))
		return "";
	return rt->errmsg;
}

void pto2_rt_aborted(PTO2Runtime *rt, int err)
{
	pto2_rt_fail(rt, err, "run aborted (%d)", err);
}

void pto2_runtime_abort(PTO2Runtime *rt, int err)
{
	if (!err)
		err = -ECANCELED;
	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_ACTIVE) {
		/*
		 * No run yet: its caller may have decided to start one and
		 * be on its way to run_begin(), whose reset would clear an
		 * error set now. The next run starts in it instead.
		 */
		rt->abort_next = err;
		pthread_mutex_unlock(&rt->lock);
		return;
	}
	pthread_mutex_unlock(&rt->lock);
	pto2_rt_aborted(rt, err);
}
