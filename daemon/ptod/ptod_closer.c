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
 * (closing it would close what they carry). Those go to the closer
 * thread, which closes them in order; a socket it first drains of its
 * messages and of the descriptors they carry, so that its peer gets what
 * was sent to it rather than a reset. What the main thread closes itself
 * is known to close at once: the device file a hello passed once it is
 * checked, a socket whose queue holds no descriptors after shutdown()
 * (nothing more can come in; what is there it reads first).
 *
 * A user whose descriptors are still waiting (PTOD_CLOSING_MAX of them,
 * counted per uid) gets no more: its connections are dropped at their
 * next message that carries any, and new ones are refused (ptod_client.c)
 * until the closer is through with them. All users together, the closer
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
	uid_t uid;
	bool sock;		/* drain it, closing what it carries, first */
};

/* Close the descriptors @n in @fds (closer thread). */
static void close_all(const int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

/*
 * Read what is left in the socket @s (shut down: nothing more comes in),
 * closing the descriptors it carries, then close it (closer thread).
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

static void *closer_main(void *arg)
{
	struct ptod_closer *cl = arg;
	struct ptod_closing *it;

	pthread_mutex_lock(&cl->lock);
	for (;;) {
		while (!cl->head && !cl->stop)
			pthread_cond_wait(&cl->cond, &cl->lock);
		if (cl->stop)
			break;
		it = cl->head;
		cl->head = it->next;
		if (!cl->head)
			cl->tail = &cl->head;
		cl->busy = it;
		pthread_mutex_unlock(&cl->lock);

		if (it->sock)
			sock_drain_close(it->fd);
		else
			close(it->fd);

		pthread_mutex_lock(&cl->lock);
		cl->busy = NULL;
		atomic_fetch_sub(&cl->held, 1);
		free(it);
	}
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

int ptod_closer_start(struct ptod *d)
{
	struct ptod_closer *cl = &d->closer;
	sigset_t all, old;
	int ret;

	pthread_mutex_init(&cl->lock, NULL);
	pthread_cond_init(&cl->cond, NULL);
	cl->tail = &cl->head;
	/* no signal for it: the loop handles them, and none cuts a close short */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&cl->thread, NULL, closer_main, cl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		ptod_log(PTOD_LOG_ERR, "cannot start the closer thread: %s",
			 strerror(-ret));
		pthread_cond_destroy(&cl->cond);
		pthread_mutex_destroy(&cl->lock);
		return ret;
	}
	cl->live = true;
	return 0;
}

/*
 * Stop the closer. Its queue is dropped, not closed: a close that waits
 * would hold ptod's exit, and the process's end closes without waiting.
 * One close may still be under way: the thread is then left to the exit.
 */
void ptod_closer_stop(struct ptod *d)
{
	struct ptod_closer *cl = &d->closer;
	struct ptod_closing *it;
	bool busy;

	if (!cl->live)
		return;
	pthread_mutex_lock(&cl->lock);
	cl->stop = true;
	busy = cl->busy;
	while ((it = cl->head)) {
		cl->head = it->next;
		free(it);
	}
	cl->tail = &cl->head;
	atomic_store(&cl->held, busy ? 1 : 0);
	pthread_cond_signal(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
	if (busy) {
		ptod_log(PTOD_LOG_WARN,
			 "a descriptor a client passed is still closing; left to the exit");
		pthread_detach(cl->thread);
	} else {
		pthread_join(cl->thread, NULL);
		pthread_cond_destroy(&cl->cond);
		pthread_mutex_destroy(&cl->lock);
	}
	cl->live = false;
}

/* Queue @fd (a socket if @sock) for the closer, on behalf of @uid. */
static void close_later(struct ptod *d, uid_t uid, int fd, bool sock)
{
	struct ptod_closer *cl = &d->closer;
	struct ptod_closing *it;

	it = cl->live ? malloc(sizeof(*it)) : NULL;
	if (!it) {
		/* no closer (it could not start), no memory: it may wait */
		if (sock)
			sock_drain_close(fd);
		else
			close(fd);
		return;
	}
	*it = (struct ptod_closing){ .fd = fd, .uid = uid, .sock = sock };
	pthread_mutex_lock(&cl->lock);
	*cl->tail = it;
	cl->tail = &it->next;
	atomic_fetch_add(&cl->held, 1);
	pthread_cond_signal(&cl->cond);
	pthread_mutex_unlock(&cl->lock);
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
 * Peek at the next message on @s, with no room for control data: it
 * passes no descriptor to us, and *@carries says whether the message
 * carries any (MSG_CTRUNC). Its length (0: the end, or an empty message),
 * or -errno (-EAGAIN: none yet).
 */
ssize_t ptod_peek(int s, bool *carries)
{
	char junk[256];
	struct iovec iov = { junk, sizeof(junk) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	n = recvmsg(s, &mh, MSG_PEEK | MSG_DONTWAIT);
	*carries = n >= 0 && (mh.msg_flags & MSG_CTRUNC);
	return n < 0 ? -errno : n;
}

/*
 * Close a client's socket @s (of user @uid): shut down, so nothing more
 * comes in, then read what came already, so that the peer gets what was
 * sent to it rather than a reset (a refusal's reply). A message that
 * carries descriptors is left to the closer, with the socket. Never
 * waits.
 */
void ptod_sock_close(struct ptod *d, uid_t uid, int s)
{
	char junk[256];
	bool carries;
	ssize_t n;
	int i;

	shutdown(s, SHUT_RDWR);
	for (i = 0; i < PTOD_SOCK_DRAIN_MAX; i++) {
		/* shut down, the queue changes only by our reads */
		n = ptod_peek(s, &carries);
		if (n < 0 || carries)
			break;
		/* the end, or an empty message: nothing to close with it */
		if (!n) {
			close(s);
			return;
		}
		if (recv(s, junk, sizeof(junk), MSG_DONTWAIT) < 0)
			break;
	}
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
	const struct ptod_closing *it;
	unsigned int n = 0;

	if (!cl->live)
		return 0;
	pthread_mutex_lock(&cl->lock);
	if (cl->busy && cl->busy->uid == uid)
		n++;
	for (it = cl->head; it; it = it->next)
		n += it->uid == uid;
	pthread_mutex_unlock(&cl->lock);
	return n;
}
