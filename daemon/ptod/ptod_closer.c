// SPDX-License-Identifier: MIT
/*
 * ptod_closer.c - descriptors a client chose, closed off the main thread
 *
 * A close() can block for as long as whoever made the file wishes: a TCP
 * socket with SO_LINGER waits for its unsent data (an hour, if the peer
 * never reads), a FUSE file waits for its server's answer to FLUSH, and a
 * unix socket that still holds such descriptors in flight closes each of
 * them. The last close of the file does this, and when a client passes
 * ptod a descriptor and closes its own copy, ptod's is the last one.
 *
 * So the main thread never closes a descriptor a client chose: not one
 * passed with a message it does not keep, not a hello's file that is not
 * the device's, not a client's socket whose queue still holds messages
 * (closing it would close what they carry). Those go to the closer, into
 * their user's lane: a queue with a thread of its own, started by the
 * lane's first descriptor and ended once the lane is empty, which closes
 * them in order. So a close that never ends holds up its user's other
 * descriptors, not another user's. A socket the lane's thread first
 * drains of its messages and of the descriptors they carry, so that its
 * peer gets what was sent to it rather than a reset. Should no thread
 * start (or no memory be left for the queue), the main thread closes the
 * descriptor itself, and may wait. What the main thread closes itself
 * is known to close at once: the device file a hello passed once it is
 * checked, a socket whose queue holds no descriptors after shutdown()
 * (nothing more can come in; what is there it reads first).
 *
 * A user whose descriptors are still waiting (PTOD_CLOSING_MAX of them,
 * counted per uid) gets no more: its connections are dropped at their
 * next message that carries any, and new ones are refused (ptod_client.c)
 * until its lane is through with them. All users together, the closer
 * holds PTOD_CLOSER_MAX, and a little more: at that, ptod accepts no
 * connection (a refused one whose queue carries descriptors would come
 * here too) and reads no message that carries any, until the closer has
 * closed some (ptod.c looks again every PTOD_ACCEPT_PAUSE_MS). Beyond it,
 * it may hold one message's descriptors, and the socket of each
 * connection ptod has, once that goes (runtime.rst, "Descriptors a client
 * passes").
 *
 * At exit, what the closer still holds is left to the process's end, in
 * which a lingering socket no longer waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pto-private/fdpass.h>

#include "ptod.h"

/* ptod_sock_close() reads this many messages, then leaves the rest */
#define PTOD_SOCK_DRAIN_MAX	1024

struct ptod_closing {
	struct ptod_closing *next;
	int fd;
	bool sock;		/* drain it, closing what it carries, first */
};

/*
 * One user's descriptors to close, and the thread that closes them in
 * order: it starts with the lane's first descriptor and ends, freeing
 * the lane, once it finds the lane empty (or the closer stopping).
 */
struct ptod_closer_lane {
	struct ptod_closer_lane *next;	/* in cl->lanes */
	struct ptod_closer *cl;
	uid_t uid;
	struct ptod_closing *head, **tail;	/* to close, in order */
	bool busy;			/* its thread is closing one */
	unsigned int n;			/* queued and busy */
};

/* A lane thread's stack: a close needs little (sock_drain_close()'s) */
#define PTOD_CLOSER_STACK	(64u << 10)

/* Close the descriptors @n in @fds (lane thread). */
static void close_all(const int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * Read what is left in the socket @s (shut down: nothing more comes in),
 * closing the descriptors it carries, then close it (lane thread). An
 * empty message reads as the end: what comes after it is closed with
 * the socket, here, holding up this lane alone.
 */
static void sock_drain_close(int s)
{
	int fds[PTO_FDPASS_ANY_MAX];
	char junk[256];
	unsigned int nfds;
	ssize_t n;

	do {
		n = pto_recv_with_fds(s, junk, sizeof(junk), MSG_DONTWAIT,
				      fds, &nfds);
		close_all(fds, nfds);
	} while (n > 0 || nfds || n == -EINTR);
	close(s);
}

/* Take @ln out of cl->lanes (cl->lock held). */
static void lane_unlink(struct ptod_closer *cl, struct ptod_closer_lane *ln)
{
	struct ptod_closer_lane **pp;

	for (pp = &cl->lanes; *pp != ln; pp = &(*pp)->next)
		;
	*pp = ln->next;
}

/* Drop what waits in @ln, unclosed (cl->lock held; ptod stops). */
static void lane_drop(struct ptod_closer *cl, struct ptod_closer_lane *ln)
{
	struct ptod_closing *it;

	while ((it = ln->head)) {
		ln->head = it->next;
		ln->n--;
		atomic_fetch_sub(&cl->held, 1);
		free(it);
	}
	ln->tail = &ln->head;
}

static void *lane_main(void *arg)
{
	struct ptod_closer_lane *ln = arg;
	struct ptod_closer *cl = ln->cl;
	struct ptod_closing *it;

	pthread_mutex_lock(&cl->lock);
	while (!cl->stop && (it = ln->head)) {
		ln->head = it->next;
		if (!ln->head)
			ln->tail = &ln->head;
		ln->busy = true;
		pthread_mutex_unlock(&cl->lock);

		if (it->sock)
			sock_drain_close(it->fd);
		else
			close(it->fd);

		pthread_mutex_lock(&cl->lock);
		ln->busy = false;
		ln->n--;
		atomic_fetch_sub(&cl->held, 1);
		free(it);
	}
	/* empty, or stopping (ptod_closer_stop() dropped the rest) */
	lane_unlink(cl, ln);
	pthread_cond_signal(&cl->gone);
	pthread_mutex_unlock(&cl->lock);
	free(ln);
	return NULL;
}

void ptod_closer_start(struct ptod *d)
{
	struct ptod_closer *cl = &d->closer;

	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->gone, NULL);
	cl->live = true;
}

/*
 * Stop the closer. The lanes' queues are dropped, not closed: a close that
 * waits would hold ptod's exit, and the process's end closes without
 * waiting. A close may still be under way in some lanes: their threads
 * are then left to the exit (they end, touching nothing but the closer,
 * if their close does end first).
 */
void ptod_closer_stop(struct ptod *d)
{
	struct ptod_closer *cl = &d->closer;
	struct ptod_closer_lane *ln;
	unsigned int busy;
	bool idle;

	if (!cl->live)
		return;
	pthread_mutex_lock(&cl->lock);
	cl->stop = true;
	/* the lanes not in a close end at once, each with its thread */
	for (;;) {
		busy = 0;
		idle = false;
		for (ln = cl->lanes; ln; ln = ln->next) {
			lane_drop(cl, ln);
			busy += ln->busy;
			idle |= !ln->busy;
		}
		if (!idle)
			break;
		pthread_cond_wait(&cl->gone, &cl->lock);
	}
	pthread_mutex_unlock(&cl->lock);
	if (busy) {
		ptod_log(PTOD_LOG_WARN,
			 "%u descriptors clients passed are still closing; left to the exit",
			 busy);
	} else {
		pthread_cond_destroy(&cl->gone);
		pthread_mutex_destroy(&cl->lock);
	}
	cl->live = false;
}

/*
 * A lane for @uid, with its thread started (cl->lock held): NULL if none
 * could be made.
 */
static struct ptod_closer_lane *lane_new(struct ptod_closer *cl, uid_t uid)
{
	struct ptod_closer_lane *ln;
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t thread;
	int ret;

	ln = malloc(sizeof(*ln));
	if (!ln)
		return NULL;
	*ln = (struct ptod_closer_lane){ .cl = cl, .uid = uid };
	ln->tail = &ln->head;
	ret = pthread_attr_init(&attr);
	if (ret)
		goto err_free;
	ret = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!ret)
		ret = pthread_attr_setstacksize(&attr, PTOD_CLOSER_STACK);
	if (ret)
		goto err_attr;
	/* no signal for it: the loop handles them, and none cuts a close short */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* it waits for cl->lock, held here, before it looks at the lane */
	ret = pthread_create(&thread, &attr, lane_main, ln);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto err_attr;
	pthread_attr_destroy(&attr);
	ln->next = cl->lanes;
	cl->lanes = ln;
	if (cl->start_failed) {
		cl->start_failed = false;
		ptod_log(PTOD_LOG_INFO, "closer threads start again");
	}
	return ln;

err_attr:
	pthread_attr_destroy(&attr);
err_free:
	free(ln);
	/* a message may carry 252 descriptors, each one more try: said once */
	if (!cl->start_failed) {
		cl->start_failed = true;
		ptod_log(PTOD_LOG_ERR,
			 "cannot start a closer thread for uid %u: %s; closing on the main thread (said once until one starts)",
			 (unsigned int)uid, strerror(ret));
	}
	return NULL;
}

/* @uid's lane, or NULL (cl->lock held) */
static struct ptod_closer_lane *lane_of(struct ptod_closer *cl, uid_t uid)
{
	struct ptod_closer_lane *ln;

	for (ln = cl->lanes; ln; ln = ln->next)
		if (ln->uid == uid)
			return ln;
	return NULL;
}

/* Queue @fd (a socket if @sock) in @uid's lane. */
static void close_later(struct ptod *d, uid_t uid, int fd, bool sock)
{
	struct ptod_closer *cl = &d->closer;
	struct ptod_closer_lane *ln = NULL;
	struct ptod_closing *it;

	it = cl->live ? malloc(sizeof(*it)) : NULL;
	if (it) {
		*it = (struct ptod_closing){ .fd = fd, .sock = sock };
		pthread_mutex_lock(&cl->lock);
		ln = lane_of(cl, uid);
		if (!ln)
			ln = lane_new(cl, uid);
		if (ln) {
			*ln->tail = it;
			ln->tail = &it->next;
			ln->n++;
			atomic_fetch_add(&cl->held, 1);
		}
		pthread_mutex_unlock(&cl->lock);
	}
	if (ln)
		return;
	/* no closer (stopped), no memory, no thread: it may wait */
	free(it);
	if (sock)
		sock_drain_close(fd);
	else
		close(fd);
}

void ptod_close_later(struct ptod *d, uid_t uid, int fd)
{
	if (fd >= 0)
		close_later(d, uid, fd, false);
}

void ptod_close_fds_later(struct ptod *d, uid_t uid, const int *fds,
			  unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		ptod_close_later(d, uid, fds[i]);
}

/*
 * Peek at the next message on @s, with @ctllen bytes at @ctl for control
 * data, never room for a descriptor (none is passed to us). *@carries
 * says whether the message carries descriptors (MSG_CTRUNC), *@cmsg (if
 * given) whether some control data came. Its length, or -errno.
 */
static ssize_t peek(int s, void *ctl, size_t ctllen, bool *carries,
		    bool *cmsg)
{
	char junk[256];
	struct iovec iov = { junk, sizeof(junk) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = ctllen };
	ssize_t n;

	n = recvmsg(s, &mh, MSG_PEEK | MSG_DONTWAIT);
	*carries = n >= 0 && (mh.msg_flags & MSG_CTRUNC);
	if (cmsg)
		*cmsg = n >= 0 && CMSG_FIRSTHDR(&mh);
	return n < 0 ? -errno : n;
}

/*
 * Peek at the next message on @s, with no room for control data: it
 * passes no descriptor to us, and *@carries says whether the message
 * carries any. Its length (0: the end, or an empty message), or -errno
 * (-EAGAIN: none yet).
 */
ssize_t ptod_peek(int s, bool *carries)
{
	return peek(s, NULL, 0, carries, NULL);
}

/*
 * Peek at the next message on @s, shut down and with SO_PASSCRED on:
 * every message, an empty one too, comes with its sender's credentials,
 * the end with none (a length of 0 is both). Room for the credentials
 * alone, so no descriptor. 1: a message, 0: the end, -errno.
 */
static int sock_peek_next(int s, bool *carries)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cb;
	bool cred;
	ssize_t n;

	n = peek(s, cb.buf, sizeof(cb.buf), carries, &cred);
	return n < 0 ? (int)n : cred;
}

/*
 * Close a client's socket @s (of user @uid): shut down, so nothing more
 * comes in, then read what came already, so that the peer gets what was
 * sent to it rather than a reset (a refusal's reply). The socket is
 * closed here only once its queue is seen empty; at a message that
 * carries descriptors, or if the end cannot be told from an empty
 * message (which may have more behind it), it is left to the closer.
 * Never waits.
 */
void ptod_sock_close(struct ptod *d, uid_t uid, int s)
{
	int on = 1, off = 0, i, ret;
	char junk[256];
	bool carries;

	shutdown(s, SHUT_RDWR);
	if (setsockopt(s, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
		close_later(d, uid, s, true);
		return;
	}
	for (i = 0; i < PTOD_SOCK_DRAIN_MAX; i++) {
		/* shut down, the queue changes only by our reads */
		ret = sock_peek_next(s, &carries);
		if (ret < 0 || carries)
			break;
		if (!ret) {
			close(s);
			return;
		}
		if (recv(s, junk, sizeof(junk), MSG_DONTWAIT) < 0)
			break;
	}
	/* the lane reads it as any socket, with no credentials */
	setsockopt(s, SOL_SOCKET, SO_PASSCRED, &off, sizeof(off));
	close_later(d, uid, s, true);
}

/*
 * Does the closer hold PTOD_CLOSER_MAX descriptors or more, all users
 * together? Then ptod takes no more until it has closed some: it accepts
 * no connection (a refused one whose queue carries descriptors would be
 * one more) and reads no message that carries any (main thread).
 */
bool ptod_closer_full(struct ptod *d)
{
	return atomic_load(&d->closer.held) >= PTOD_CLOSER_MAX;
}

/* How many descriptors of @uid's the closer still holds (main thread). */
unsigned int ptod_closing(struct ptod *d, uid_t uid)
{
	struct ptod_closer *cl = &d->closer;
	const struct ptod_closer_lane *ln;
	unsigned int n;

	if (!cl->live)
		return 0;
	pthread_mutex_lock(&cl->lock);
	ln = lane_of(cl, uid);
	n = ln ? ln->n : 0;
	pthread_mutex_unlock(&cl->lock);
	return n;
}
