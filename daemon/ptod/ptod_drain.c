// SPDX-License-Identifier: MIT
/*
 * ptod_drain.c - runs that do not end after their client was stopped
 *
 * A stopped client (it hung up, or ptod is shutting down) has its run
 * aborted: nothing new is dispatched and the run ends once the kernels
 * already on cores return. A kernel that never returns would keep its
 * core, its client and, at shutdown, ptod itself forever. So the main
 * thread watches every stopped client whose runner still lives; once the
 * drain grace (-G, PTOD_DRAIN_GRACE_MS by default) has passed, it kills
 * what runs the client's kernels:
 *
 *  - the client's sandbox, if it has one: pto-aicore fails the tasks that
 *    waited on it (it sees the sandbox's pidfd readable, or gets ptod's
 *    REMOVE), nobody else is touched; not pto-aicore for such a client,
 *    whose kernels it does not run, unless its tasks still wait on a
 *    sandbox reaped PTOD_DRAIN_SBX_LATE_MS ago (a sandbox ptod had no
 *    pidfd of, and whose REMOVE was lost);
 *  - else, if a kernel of the client is on a core, pto-aicore itself: its
 *    death fails every dispatch it had (fail_dead_cores() in ptod.c),
 *    other clients' kernels in flight included, and ptod starts a new one
 *    (not while shutting down).
 *
 * Either way the run's cores complete with an error, the run drains and
 * the client goes. While shutting down, ptod also bounds its own end: if
 * clients are still there PTOD_DRAIN_EXIT_MS after the grace, it logs
 * them, kills pto-aicore and the sandboxes and exits with status 2 (the
 * device cleans up after the files).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include <pto-private/time.h>

#include "ptod.h"

#define DRAIN_TICK_US	250000

/* The client's dispatches still on cores (the engine's record). */
static uint32_t busy_cores(struct client *c)
{
	struct ptod *d = c->d;
	uint32_t i, n = 0;

	if (!c->rt)
		return 0;
	pthread_mutex_lock(&d->dev_lock);
	for (i = 0; i < d->info.nr_cores; i++) {
		uint64_t payload;
		uint32_t id;

		if (pto2_engine_core_runtime(d->engine, i) != c->rt ||
		    !pto2_engine_core_dispatch(d->engine, i, &id, &payload))
			continue;
		if (reg_load_acquire(&ptod_core(d, i)->cond) != PTO_COND_DONE(id))
			n++;
	}
	pthread_mutex_unlock(&d->dev_lock);
	return n;
}

/* Kill what runs @c's kernels (once per client). */
static void drain_force(struct client *c, int64_t waited_ms)
{
	struct ptod *d = c->d;
	uint32_t busy = busy_cores(c);

	/*
	 * A sandboxed client's kernels run in its sandbox, never in
	 * pto-aicore: killing pto-aicore would end none of them and fail
	 * every other client's tasks (a sandbox that dies just before the
	 * tick, its waits not yet failed, must not get it killed). Once the
	 * sandbox is reaped, pto-aicore fails the tasks that waited on it
	 * (REMOVE): the next tick looks again.
	 */
	if (c->sbx) {
		if (c->sbx_pid <= 0 &&
		    waited_ms < (int64_t)d->drain_grace_ms + PTOD_DRAIN_SBX_LATE_MS)
			return;
		if (c->sbx_pid <= 0) {
			/*
			 * Far past what a sandbox can stretch pto-aicore's
			 * notice of its death: pto-aicore never failed its
			 * waits (no pidfd, and a REMOVE lost). Only its
			 * death frees the cores those waits hold.
			 */
			if (busy)
				ptod_log(PTOD_LOG_WARN,
					 "client %u: its sandbox is gone, but %u of its tasks still wait on it %" PRId64 " ms after the client was stopped",
					 c->id, busy, waited_ms);
			goto exec;
		}
		c->drain_forced = true;
		ptod_log(PTOD_LOG_WARN,
			 "client %u: its run has not ended %" PRId64 " ms after the client was stopped (%u kernels on cores): killing its kernel sandbox (pid %d)",
			 c->id, waited_ms, busy, (int)c->sbx_pid);
		kill(c->sbx_pid, SIGKILL);	/* reaped: ptod_sbx_reaped() */
		return;
	}
exec:
	c->drain_forced = true;
	if (!busy || d->exec_pid <= 0) {
		ptod_log(PTOD_LOG_WARN,
			 "client %u: its run has not ended %" PRId64 " ms after the client was stopped, with no kernel of it on a core",
			 c->id, waited_ms);
		return;
	}
	snprintf(d->exec_kill_why, sizeof(d->exec_kill_why),
		 "client %u's run had not ended %" PRId64 " ms after the client was stopped (%u kernels that do not return)",
		 c->id, waited_ms, busy);
	ptod_log(PTOD_LOG_WARN, "killing pto-aicore (pid %d): %s",
		 (int)d->exec_pid, d->exec_kill_why);
	kill(d->exec_pid, SIGKILL);	/* reaped: on_sigchld() */
}

static void drain_arm(struct ptod *d)
{
	struct timeval tv = { 0, DRAIN_TICK_US };

	if (d->ev_drain && !evtimer_pending(d->ev_drain, NULL) &&
	    evtimer_add(d->ev_drain, &tv))
		ptod_log(PTOD_LOG_ERR, "libevent: cannot arm the drain timer");
}

/* Shutting down and still not done long after the grace: give up. */
static void drain_exit_check(struct ptod *d, int64_t now)
{
	uint32_t left = 0;
	struct client *c;

	if (!d->shutdown_ns ||
	    now - d->shutdown_ns < (int64_t)(d->drain_grace_ms +
					     PTOD_DRAIN_EXIT_MS) * 1000000)
		return;
	for (c = d->clients; c; c = c->next) {
		ptod_log(PTOD_LOG_ERR,
			 "shutdown: client %u (pid %d) has not ended (%u kernels on cores)",
			 c->id, (int)c->pid, busy_cores(c));
		if (c->sbx_pid > 0)
			kill(c->sbx_pid, SIGKILL);
		left++;
	}
	ptod_log(PTOD_LOG_ERR, "shutdown: %u clients left after %u ms: exiting anyway",
		 left, d->drain_grace_ms + PTOD_DRAIN_EXIT_MS);
	/* our children do not outlive us (the device frees their files) */
	if (d->exec_pid > 0)
		kill(d->exec_pid, SIGKILL);
	_exit(2);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct ptod *d = arg;
	int64_t now = pto_mono_ns();
	bool watching = false;
	struct client *c;

	(void)fd;
	(void)what;
	for (c = d->clients; c; c = c->next) {
		int64_t waited_ms;

		if (!c->stop_ns || !c->runner_live)
			continue;
		watching = true;
		waited_ms = (now - c->stop_ns) / 1000000;
		if (!c->drain_forced && waited_ms >= d->drain_grace_ms)
			drain_force(c, waited_ms);
	}
	drain_exit_check(d, now);
	if (watching || d->shutdown_ns)
		drain_arm(d);
}

void ptod_drain_watch(struct client *c)
{
	if (!c->stop_ns)
		c->stop_ns = pto_mono_ns();
	drain_arm(c->d);
}

void ptod_drain_shutdown(struct ptod *d)
{
	d->shutdown_ns = pto_mono_ns();
	drain_arm(d);
}

int ptod_drain_setup(struct ptod *d)
{
	d->ev_drain = evtimer_new(d->base, on_drain, d);
	return d->ev_drain ? 0 : -ENOMEM;
}

void ptod_drain_teardown(struct ptod *d)
{
	if (d->ev_drain)
		event_free(d->ev_drain);
	d->ev_drain = NULL;
}
