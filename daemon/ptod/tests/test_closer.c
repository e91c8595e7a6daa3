// SPDX-License-Identifier: MIT
/*
 * test_closer.c - ptod's closer (ptod_closer.c): descriptors a client
 * passed are closed off the caller's thread, in one lane per user, so a
 * close that waits holds up its own user alone; when no lane thread can
 * start, the caller closes them itself and says so once. pthread_create()
 * is wrapped (-Wl,--wrap=pthread_create) so that the test can make it
 * fail.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../ptod.h"
#include "lingering.h"
#include "tap.h"

#define UID_A	1001		/* the user whose close waits */
#define UID_B	1002		/* another user */
#define NR_B	8		/* descriptors of B's, one after another */
#define LINGER_S	30	/* the stuck close's bound, should all else fail */

/* What the stubbed log saw. */
static struct {
	int start_err;		/* "cannot start a closer thread" lines */
	int start_again;	/* "closer threads start again" lines */
	int still_closing;	/* "still closing; left to the exit" lines */
} seen;

/* pthread_create() fails while this is set (EAGAIN, as at RLIMIT_NPROC) */
static bool fail_create;

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr,
			  void *(*fn)(void *), void *arg)
{
	if (fail_create)
		return EAGAIN;
	return __real_pthread_create(t, attr, fn, arg);
}

void ptod_log(int level, const char *fmt, ...)
{
	(void)level;
	if (strstr(fmt, "cannot start a closer thread"))
		seen.start_err++;
	else if (strstr(fmt, "closer threads start again"))
		seen.start_again++;
	else if (strstr(fmt, "still closing; left to the exit"))
		seen.still_closing++;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A pipe in @p, or a failed test point that says why */
static bool pipe_made(int p[2])
{
	if (!pipe(p))
		return true;
	tap_ok(0, "pipe: %s", strerror(errno));
	return false;
}

/* Does reading @rfd (a pipe's read end) see the end within @ms? */
static bool pipe_ends(int rfd, int ms)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(rfd, &c, 1) == 0;
}

/* Wait up to @ms for @uid's lane to hold @n descriptors. */
static bool closing_reaches(struct ptod *d, uid_t uid, unsigned int n, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	for (;;) {
		if (ptod_closing(d, uid) == n)
			return true;
		if (now_ms() > end)
			return false;
		usleep(1000);
	}
}

/* A user's descriptors are closed, in its lane, and the lane goes. */
static void test_lane_closes(void)
{
	static struct ptod d;
	int p[2];

	ptod_closer_start(&d);
	if (!pipe_made(p))
		return;
	ptod_close_later(&d, UID_B, p[1]);
	tap_ok(pipe_ends(p[0], 5000), "a passed descriptor is closed");
	tap_ok(closing_reaches(&d, UID_B, 0, 5000),
	       "its lane holds nothing once it is closed");
	close(p[0]);
	ptod_closer_stop(&d);
	tap_ok(!seen.still_closing, "stop with nothing closing: no warning");
}

/*
 * No lane thread starts: the caller closes at once and says so once, not
 * once a descriptor; once a thread starts again it says so, and the next
 * failure is said again.
 */
static void test_no_thread(void)
{
	static struct ptod d;
	int p[2][2], i, ok = 1;

	ptod_closer_start(&d);
	if (!pipe_made(p[0]))
		return;
	if (!pipe_made(p[1])) {
		close(p[0][0]);
		close(p[0][1]);
		return;
	}
	fail_create = true;
	ptod_close_later(&d, UID_B, p[0][1]);
	ptod_close_later(&d, UID_B, p[1][1]);
	for (i = 0; i < 2; i++)
		ok &= pipe_ends(p[i][0], 0);
	tap_ok(ok, "no thread: both closed by the caller, before it returns");
	tap_ok(ptod_closing(&d, UID_B) == 0 && !ptod_closer_full(&d),
	       "no thread: the closer holds nothing");
	tap_ok(seen.start_err == 1, "no thread: said once for two (%d lines)",
	       seen.start_err);
	for (i = 0; i < 2; i++)
		close(p[i][0]);

	fail_create = false;
	if (!pipe_made(p[0]))
		return;
	ptod_close_later(&d, UID_B, p[0][1]);
	tap_ok(pipe_ends(p[0][0], 5000) && seen.start_again == 1,
	       "a thread starts again: closed in its lane, and said (%d)",
	       seen.start_again);
	close(p[0][0]);
	closing_reaches(&d, UID_B, 0, 5000);

	fail_create = true;
	if (!pipe_made(p[0]))
		return;
	ptod_close_later(&d, UID_B, p[0][1]);
	tap_ok(pipe_ends(p[0][0], 0) && seen.start_err == 2,
	       "the next failure is said again (%d lines)", seen.start_err);
	close(p[0][0]);
	fail_create = false;
	ptod_closer_stop(&d);
}

/*
 * A close that waits holds up its own user's lane, not another user's;
 * stopping the closer does not wait for it.
 */
static void test_stuck_lane(void)
{
	static struct ptod d;
	int peer, s, p[2], i, ended = 0;
	uint64_t t0;

	s = lingering_socket(&peer, LINGER_S);
	if (s < 0) {
		tap_skip(4, "no lingering TCP socket on loopback here");
		tap_diag("lingering_socket: %s", strerror(-s));
		return;
	}
	ptod_closer_start(&d);
	ptod_close_later(&d, UID_A, s);
	usleep(100 * 1000);
	tap_ok(ptod_closing(&d, UID_A) == 1,
	       "a lingering close: its user's lane still holds it");

	t0 = now_ms();
	for (i = 0; i < NR_B; i++) {
		if (!pipe_made(p))
			break;
		ptod_close_later(&d, UID_B, p[1]);
		ended += pipe_ends(p[0], 5000);
		close(p[0]);
	}
	tap_ok(ended == NR_B && ptod_closing(&d, UID_A) == 1,
	       "another user's %d descriptors close meanwhile (%d in %llu ms)",
	       NR_B, ended, (unsigned long long)(now_ms() - t0));

	t0 = now_ms();
	ptod_closer_stop(&d);
	tap_ok(now_ms() - t0 < 2000 && seen.still_closing == 1,
	       "stop leaves the lingering close to the exit, and says so (%llu ms)",
	       (unsigned long long)(now_ms() - t0));

	/* the reset ends the linger; the lane's thread then goes */
	close(peer);
	t0 = now_ms();
	for (;;) {
		pthread_mutex_lock(&d.closer.lock);
		i = d.closer.lanes != NULL;
		pthread_mutex_unlock(&d.closer.lock);
		if (!i || now_ms() - t0 > 5000)
			break;
		usleep(1000);
	}
	tap_ok(!i, "the stuck lane's thread ends once its close does");
}

int main(void)
{
	test_lane_closes();
	test_no_thread();
	test_stuck_lane();
	return tap_done();
}
