// SPDX-License-Identifier: MIT
/*
 * aicore_sbx.c - pto-aicore's side of the sandboxes (see aicore_sbx.h)
 *
 * The mailbox is shared with the sandbox, where the client's kernels
 * run: its header is checked once when ptod adds it (the memfd is sealed
 * against resizing), and afterwards pto-aicore reads only the answer
 * words of the slot it waits on. Its own sequence numbers stay here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pto-private/fdpass.h>
#include <pto-private/futex.h>
#include <pto-private/sandbox.h>
#include <pto-private/time.h>

#include "aicore_sbx.h"
#include "pto_exec.h"

#define SBX_WAIT_NS	50000000	/* one futex wait: 50 ms */
/*
 * Wake-ups with no answer to our question after which a wait backs off:
 * a sandbox that bumps the slot's futex word without answering must not
 * make a root thread spin. The first wake-up normally brings the answer.
 */
#define SBX_SPURIOUS_MAX 8
#define SBX_BACKOFF_NS	1000000		/* then 1 ms between looks, doubled
					   each time up to SBX_WAIT_NS */

/*
 * One sandbox's mailbox and the pidfd of its process (-1: ptod had none);
 * freed by the last sbx_put().
 */
struct sbx {
	struct pto_sbx_hdr *mb;
	size_t size;
	pid_t pid;
	int pidfd;
	_Atomic bool dead;
	uint32_t refs;			/* table lock */
	uint32_t seq[];			/* per core: its pool thread only */
};

/*
 * @lock protects @tab and every sbx's refs; the control thread owns the
 * table's reference of each entry.
 */
struct aicore_sbxs {
	pthread_mutex_t lock;
	struct sbx *tab[PTO_SBX_MAX + 1];
	uint32_t nr_cores;
	int ctl_fd;
	pthread_t thread;
};

static struct sbx *sbx_get(struct aicore_sbxs *t, uint32_t id)
{
	struct sbx *s = NULL;

	if (!id || id > PTO_SBX_MAX)
		return NULL;
	pthread_mutex_lock(&t->lock);
	s = t->tab[id];
	if (s)
		s->refs++;
	pthread_mutex_unlock(&t->lock);
	return s;
}

static void sbx_put(struct aicore_sbxs *t, struct sbx *s)
{
	bool last;

	pthread_mutex_lock(&t->lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&t->lock);
	if (!last)
		return;
	if (s->pidfd >= 0)
		close(s->pidfd);
	munmap(s->mb, s->size);
	free(s);
}

/* End every wait on @s, now and to come. */
static void sbx_kill_waits(struct aicore_sbxs *t, struct sbx *s)
{
	uint32_t c;

	atomic_store(&s->dead, true);
	/*
	 * The word moves before the wake-up: a waiter about to sleep on the
	 * value it read returns at once instead of missing the wake-up (the
	 * sandbox may have moved the word too, so a wake alone could go to
	 * nobody).
	 */
	for (c = 0; c < t->nr_cores; c++) {
		_Atomic uint32_t *w = &pto_sbx_slot(s->mb, c)->wake;

		atomic_fetch_add_explicit(w, 1, memory_order_release);
		pto_futex_wake_shared(w, INT_MAX);
	}
}

/* End every wait on @s, out of the table already, and drop its ref. */
static void sbx_end(struct aicore_sbxs *t, struct sbx *s)
{
	if (!s)
		return;
	sbx_kill_waits(t, s);
	sbx_put(t, s);
}

/*
 * Whether @s's process has exited (its pidfd is readable): then every
 * wait on it ends, as a REMOVE would end them, REMOVE or not.
 */
static bool sbx_exited(struct aicore_sbxs *t, struct sbx *s)
{
	struct pollfd pfd = { .fd = s->pidfd, .events = POLLIN };

	if (s->pidfd < 0 || poll(&pfd, 1, 0) <= 0)
		return false;
	if (!atomic_exchange(&s->dead, true))
		sbx_kill_waits(t, s);
	return true;
}

/* Put @s (may be NULL) in sandbox @id's place; the one it replaces. */
static struct sbx *sbx_swap(struct aicore_sbxs *t, uint32_t id,
			    struct sbx *s)
{
	struct sbx *old;

	pthread_mutex_lock(&t->lock);
	old = t->tab[id];
	t->tab[id] = s;
	pthread_mutex_unlock(&t->lock);
	return old;
}

/* Take sandbox @id out of the table and end every wait on it. */
static void sbx_remove(struct aicore_sbxs *t, uint32_t id)
{
	sbx_end(t, sbx_swap(t, id, NULL));
}

/*
 * Map and check the mailbox memfd @fd of a sandbox whose process @pid has
 * the pidfd @pidfd (-1: none), which the new sbx takes: 0 or -errno.
 */
static int sbx_map(struct aicore_sbxs *t, int fd, pid_t pid, int pidfd,
		   struct sbx **out)
{
	size_t size = pto_sbx_size(t->nr_cores);
	int need = F_SEAL_SHRINK | F_SEAL_GROW;
	struct pto_sbx_hdr *mb;
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	struct sbx *s;
	uint32_t c;

	if (fstat(fd, &st) || (size_t)st.st_size != size || seals < 0 ||
	    (seals & need) != need)
		return -EINVAL;
	/* signal 0 to a pidfd: 0, or ESRCH once it has exited */
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) &&
	    errno != ESRCH)
		return -EBADF;
	mb = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mb == MAP_FAILED)
		return -errno;
	if (!pto_sbx_hdr_ok(mb, t->nr_cores)) {
		munmap(mb, size);
		return -EPROTO;
	}
	s = calloc(1, sizeof(*s) + t->nr_cores * sizeof(s->seq[0]));
	if (!s) {
		munmap(mb, size);
		return -ENOMEM;
	}
	s->mb = mb;
	s->size = size;
	s->pid = pid;
	s->pidfd = pidfd;
	s->refs = 1;
	/*
	 * Go on from the last task posted (a restarted pto-aicore gets the
	 * mailboxes of live sandboxes again): an answer still in a slot is
	 * never taken for one of ours.
	 */
	for (c = 0; c < t->nr_cores; c++)
		s->seq[c] = atomic_load(&pto_sbx_slot(mb, c)->req);
	*out = s;
	return 0;
}

/* ADD: @fds are the mailbox and the pidfd (-1: none); 0 once it has them. */
static int sbx_add(struct aicore_sbxs *t, const struct pto_sbx_ctl *m,
		   int *fds)
{
	struct sbx *s = NULL;
	int ret;

	/*
	 * An earlier start of it goes, whether this one can be taken or
	 * not: its process is gone, and the tasks waiting on it must fail
	 * now rather than wait for an answer that cannot come. The new one
	 * takes its place in one step, so that no hand-off in between finds
	 * no sandbox at all.
	 */
	ret = fds[0] < 0 ? -EBADF : sbx_map(t, fds[0], m->pid, fds[1], &s);
	if (!ret)
		fds[1] = -1;	/* s has it */
	sbx_end(t, sbx_swap(t, m->sbx, ret ? NULL : s));
	return ret;
}

/*
 * Receive one control message (@flags: 0 or MSG_DONTWAIT) and act on it:
 * 0, or -errno from the receive (-EAGAIN: nothing queued; 0 bytes: ptod
 * closed the channel, -EPIPE).
 */
static int ctl_one(struct aicore_sbxs *t, int flags)
{
	struct pto_sbx_ctl m;
	int fds[2];
	ssize_t n;

	do
		n = pto_recv_with_fdv(t->ctl_fd, &m, sizeof(m), flags, fds, 2);
	while (n == -EINTR);
	if (n <= 0)
		return n ? (int)n : -EPIPE;
	if (n != sizeof(m) || !m.sbx || m.sbx > PTO_SBX_MAX) {
		aicore_msg("control: bad message (%zd bytes)", n);
	} else if (m.type == PTO_SBX_CTL_ADD) {
		m.status = sbx_add(t, &m, fds);
		if (m.status)
			aicore_msg("sandbox %u: mailbox refused: %s", m.sbx,
				   strerror(-m.status));
		m.type = PTO_SBX_CTL_ADDED;
		if (send(t->ctl_fd, &m, sizeof(m), MSG_NOSIGNAL) < 0)
			aicore_msg("control: %s", strerror(errno));
	} else if (m.type == PTO_SBX_CTL_REMOVE) {
		sbx_remove(t, m.sbx);
	}
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return 0;
}

static void *ctl_main(void *arg)
{
	struct aicore_sbxs *t = arg;

	while (!ctl_one(t, 0))
		;
	return NULL;		/* ptod is gone: PDEATHSIG follows */
}

int aicore_sbx_start(int ctl_fd, uint32_t nr_cores, struct aicore_sbxs **out)
{
	struct aicore_sbxs *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	t->nr_cores = nr_cores;
	t->ctl_fd = ctl_fd;
	/*
	 * What ptod queued before starting us (the live sandboxes) is in
	 * place before any core runs: it may hand them tasks at once.
	 */
	while (!ctl_one(t, MSG_DONTWAIT))
		;
	ret = -pthread_create(&t->thread, NULL, ctl_main, t);
	if (ret) {
		free(t);
		return ret;
	}
	pthread_detach(t->thread);
	*out = t;
	return 0;
}

/* Post @p on @core's slot of @s; the sequence number of the post. */
static uint32_t sbx_post(struct sbx *s, uint32_t core,
			 const PTO2DispatchPayload *p)
{
	struct pto_sbx_hdr *mb = s->mb;
	struct pto_sbx_slot *slot = pto_sbx_slot(mb, core);
	uint32_t seq = ++s->seq[core];

	if (!seq)
		seq = ++s->seq[core];
	memcpy(&slot->task, p, sizeof(slot->task));
	atomic_store_explicit(&slot->req, seq, memory_order_release);
	atomic_fetch_or(&mb->pending[core / 64], 1ULL << (core % 64));
	atomic_fetch_add(&mb->doorbell, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&mb->sleepers))
		pto_futex_wake_shared(&mb->doorbell, 1);
	return seq;
}

int aicore_sbx_hand_off(struct aicore_sbxs *t, struct pto_exec *ex,
			uint32_t core, const PTO2DispatchPayload *p)
{
	struct pto_sbx_slot *slot;
	uint32_t seq, spurious = 0;
	uint64_t backoff = SBX_BACKOFF_NS;
	bool slept = false, waited = false, pre = false;
	struct sbx *s;
	int status;

	s = t ? sbx_get(t, p->exec_ctx) : NULL;
	if (!s)
		return -EOWNERDEAD;
	slot = pto_sbx_slot(s->mb, core);
	seq = sbx_post(s, core, p);
	for (;;) {
		uint32_t w = atomic_load_explicit(&slot->wake,
						  memory_order_acquire);
		uint64_t r = atomic_load_explicit(&slot->res,
						  memory_order_acquire);

		if ((uint32_t)(r >> 32) == seq) {
			status = (int32_t)(uint32_t)r;
			break;
		}
		/* the one wake-up a report of this task is owed is not spurious */
		if (!pre && atomic_load_explicit(&slot->pre,
						 memory_order_acquire) == seq) {
			pre = true;
			spurious -= spurious > 0;
			if (ex)
				pto_exec_pre_complete(ex, core);
		}
		/* after a pause, whether it still lives (not per wake-up) */
		if (atomic_load(&s->dead) || (waited && sbx_exited(t, s))) {
			status = -EOWNERDEAD;
			break;
		}
		waited = false;
		/* a sandbox that keeps waking us: look less often, and look
		 * again at its answer and its death after each pause */
		if (spurious >= SBX_SPURIOUS_MAX && !slept) {
			pto_sleep_ns(backoff);
			backoff = backoff * 2 < SBX_WAIT_NS ? backoff * 2 :
							      SBX_WAIT_NS;
			slept = waited = true;
			continue;
		}
		slept = false;
		if (pto_futex_wait_shared(&slot->wake, w,
					  pto_mono_ns() + SBX_WAIT_NS) !=
		    -ETIMEDOUT)
			spurious++;
		else
			waited = true;
	}
	sbx_put(t, s);
	return status > 0 ? -EIO : status;
}
