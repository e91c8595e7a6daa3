// SPDX-License-Identifier: MIT
/*
 * test_sbx.c - pto-aicore's side of the sandboxes (aicore_sbx.c) without
 * ptod: this test plays ptod on the control channel (ADD with a mailbox
 * and a pidfd, REMOVE) and the sandbox (a child process that answers
 * tasks, or never does). What it shows:
 *
 *  - a sandbox that answers gets its tasks' status back;
 *  - a kernel's pre-complete report, sent by the sandbox before its
 *    answer (twice here), reaches the executor's device once: the
 *    core's doorbell bit and one interrupt;
 *  - a sandbox that dies ends the wait on it, with -EOWNERDEAD, without
 *    any REMOVE (a REMOVE can be lost: ptod never blocks on the channel),
 *    and so does every later task for it;
 *  - a wait on a live sandbox that does not answer goes on;
 *  - an ADD whose second descriptor is not a pidfd is refused (-EBADF);
 *  - an ADD without a pidfd is taken, and REMOVE ends the wait on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pto-private/fdpass.h>
#include <pto-private/futex.h>
#include <pto-private/regs.h>
#include <pto-private/sandbox.h>
#include <pto-private/time.h>

#include "aicore_sbx.h"
#include "pto_exec.h"
#include "tap.h"

#define NR_CORES	4
#define HAND_OFF_MS	3000	/* far beyond one 50 ms futex wait */

void aicore_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pto-aicore: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A "sandbox": answers every task on @mfd's slots with @status, 1 ms after
 * two pre-complete reports of it, or never answers.
 */
static void sandbox_main(int mfd, bool answer, int32_t status)
{
	size_t size = pto_sbx_size(NR_CORES);
	struct pto_sbx_hdr *mb;
	uint32_t done[NR_CORES] = { 0 };

	mb = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (mb == MAP_FAILED)
		_exit(1);
	for (;;) {
		uint32_t c;

		if (!answer) {
			pause();
			continue;
		}
		for (c = 0; c < NR_CORES; c++) {
			struct pto_sbx_slot *s = pto_sbx_slot(mb, c);
			uint32_t req = atomic_load(&s->req);

			if (req == done[c])
				continue;
			done[c] = req;
			for (int i = 0; i < 2; i++) {
				atomic_store(&s->pre, req);
				pto_sbx_slot_wake(s);
			}
			pto_sleep_ns(1000000);
			atomic_store(&s->res,
				     (uint64_t)req << 32 | (uint32_t)status);
			pto_sbx_slot_wake(s);
		}
		pto_sleep_ns(1000000);
	}
}

struct sandbox {
	pid_t pid;
	int pidfd;
	int mfd;
};

static int sandbox_start(struct sandbox *sb, bool answer, int32_t status)
{
	sb->mfd = pto_sbx_mailbox_create(NR_CORES);
	if (sb->mfd < 0)
		return sb->mfd;
	sb->pid = fork();
	if (sb->pid < 0)
		return -errno;
	if (!sb->pid)
		sandbox_main(sb->mfd, answer, status);
	sb->pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
	return sb->pidfd < 0 ? -errno : 0;
}

static void sandbox_end(struct sandbox *sb)
{
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		waitpid(sb->pid, NULL, 0);
	}
	sb->pid = 0;
	if (sb->pidfd >= 0)
		close(sb->pidfd);
	if (sb->mfd >= 0)
		close(sb->mfd);
	sb->pidfd = sb->mfd = -1;
}

/* ptod's side: a control message with @n descriptors @fds (n may be 0). */
static int ctl_send(int sock, uint32_t type, uint32_t sbx, pid_t pid,
		    const int *fds, unsigned int n)
{
	struct pto_sbx_ctl m = { .type = type, .sbx = sbx, .pid = pid };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;

	if (n)
		pto_msg_attach_fds(&mh, &cm, fds, n);
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* The ADDED of sandbox @sbx: its status, or -ETIMEDOUT. */
static int ctl_added(int sock, uint32_t sbx)
{
	int64_t deadline = pto_mono_ns() + 5000000000LL;
	struct pto_sbx_ctl m;

	while (pto_mono_ns() < deadline) {
		ssize_t n = recv(sock, &m, sizeof(m), MSG_DONTWAIT);

		if (n == sizeof(m) && m.type == PTO_SBX_CTL_ADDED &&
		    m.sbx == sbx)
			return m.status;
		if (n < 0)
			pto_sleep_ns(1000000);
	}
	return -ETIMEDOUT;
}

/* The executor's device, as far as a pre-complete report goes. */
static atomic_int irqs;

static void count_irq(struct pto_exec *ex, uint32_t core)
{
	(void)ex;
	(void)core;
	atomic_fetch_add(&irqs, 1);
}

static const struct pto_exec_ops irq_ops = { .raise_irq = count_irq };

/* A task on @core of sandbox 1, which reports: the bits and interrupts. */
static void pre_complete_reaches(struct aicore_sbxs *t, uint32_t core)
{
	static alignas(4096) uint8_t regs[PTO_REGS_SIZE];
	const struct pto_regs_hws *hw = pto_regs_hws(regs);
	struct pto_exec ex;
	uint64_t bell;
	int ret;

	pto_exec_init(&ex, regs, &irq_ops, NULL);
	pto_regs_info(regs)->aicpu_irq_en = 1;
	ret = aicore_sbx_hand_off(t, &ex, core,
				  &(PTO2DispatchPayload){ .exec_ctx = 1 });
	bell = hw->sip_report_pre_complete[0];
	ok(ret == -ENOTTY && bell == 1ULL << core && atomic_load(&irqs) == 1,
	   "a pre-complete report, sent twice: core %u's doorbell bit once (0x%llx), one interrupt (%d), then the status (%d)",
	   core, (unsigned long long)bell, atomic_load(&irqs), ret);
}

/* One hand-off on a thread, so that a wait that never ends is seen. */
struct hand_off {
	struct aicore_sbxs *t;
	uint32_t core;
	PTO2DispatchPayload p;
	int ret;
	atomic_bool done;
	pthread_t thread;
};

static void *hand_off_main(void *arg)
{
	struct hand_off *h = arg;

	h->ret = aicore_sbx_hand_off(h->t, NULL, h->core, &h->p);
	atomic_store(&h->done, true);
	return NULL;
}

static int hand_off_start(struct hand_off *h, struct aicore_sbxs *t,
			  uint32_t core, uint32_t sbx)
{
	memset(h, 0, sizeof(*h));
	h->t = t;
	h->core = core;
	h->p.task_id = (int32_t)core;
	h->p.exec_ctx = sbx;
	return -pthread_create(&h->thread, NULL, hand_off_main, h);
}

/* Whether @h returned within @ms, and then with @want. */
static bool hand_off_within(struct hand_off *h, int64_t ms, int want)
{
	int64_t deadline = pto_mono_ns() + ms * 1000000;

	while (!atomic_load(&h->done) && pto_mono_ns() < deadline)
		pto_sleep_ns(1000000);
	if (!atomic_load(&h->done))
		return false;
	if (h->ret != want)
		tap_diag("the hand-off returned %d, not %d", h->ret, want);
	return h->ret == want;
}

/* Whether @h is still waiting after @ms. */
static bool hand_off_waits(struct hand_off *h, int64_t ms)
{
	pto_sleep_ns(ms * 1000000);
	return !atomic_load(&h->done);
}

int main(void)
{
	struct sandbox live = { .pidfd = -1, .mfd = -1 };
	struct sandbox mute = { .pidfd = -1, .mfd = -1 };
	struct sandbox old = { .pidfd = -1, .mfd = -1 };
	struct aicore_sbxs *t;
	struct hand_off h;
	int sv[2], fds[2], ret, null_fd;

	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ok(0, "socketpair: %s", strerror(errno));
		return tap_done();
	}
	ret = sandbox_start(&live, true, -ENOTTY);
	if (ret == -ENOSYS) {
		tap_skip(1, "no pidfd_open() in this kernel");
		return tap_done();
	}
	if (!ok(!ret, "a sandbox that answers (%d)", ret) ||
	    !ok(!sandbox_start(&mute, false, 0), "a sandbox that never answers") ||
	    !ok(!sandbox_start(&old, false, 0), "a sandbox added without a pidfd"))
		goto out;

	/* ADDs queued before pto-aicore starts, as ptod queues them */
	fds[0] = live.mfd;
	fds[1] = live.pidfd;
	ok(!ctl_send(sv[0], PTO_SBX_CTL_ADD, 1, live.pid, fds, 2), "ADD 1");
	fds[0] = mute.mfd;
	fds[1] = mute.pidfd;
	ok(!ctl_send(sv[0], PTO_SBX_CTL_ADD, 2, mute.pid, fds, 2), "ADD 2");
	ok(!ctl_send(sv[0], PTO_SBX_CTL_ADD, 3, old.pid, &old.mfd, 1),
	   "ADD 3, without a pidfd");
	ret = aicore_sbx_start(sv[1], NR_CORES, &t);
	if (!ok(!ret, "aicore_sbx_start: %s", strerror(-ret)))
		goto out;
	ok(ctl_added(sv[0], 1) == 0, "sandbox 1 taken");
	ok(ctl_added(sv[0], 2) == 0, "sandbox 2 taken");
	ok(ctl_added(sv[0], 3) == 0, "sandbox 3 taken without a pidfd");

	/* a descriptor that is not a pidfd is no pidfd */
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[0] = pto_sbx_mailbox_create(NR_CORES);
	fds[1] = null_fd;
	ok(fds[0] >= 0 && null_fd >= 0 &&
	   !ctl_send(sv[0], PTO_SBX_CTL_ADD, 4, getpid(), fds, 2) &&
	   ctl_added(sv[0], 4) == -EBADF,
	   "an ADD whose second descriptor is not a pidfd: -EBADF");
	if (fds[0] >= 0)
		close(fds[0]);
	if (null_fd >= 0)
		close(null_fd);

	ok(aicore_sbx_hand_off(t, NULL, 0, &(PTO2DispatchPayload){ .exec_ctx = 1 }) ==
	   -ENOTTY, "a task in the sandbox that answers: its status");
	pre_complete_reaches(t, 3);
	ok(aicore_sbx_hand_off(t, NULL, 1, &(PTO2DispatchPayload){ .exec_ctx = 4 }) ==
	   -EOWNERDEAD, "a task in a sandbox that was refused: -EOWNERDEAD");

	/* the mute sandbox: the wait goes on while it lives ... */
	if (hand_off_start(&h, t, 2, 2))
		goto out;
	ok(hand_off_waits(&h, 300),
	   "a task in a live sandbox that does not answer still waits");
	/* ... and ends when it dies, with no REMOVE */
	kill(mute.pid, SIGKILL);
	ok(hand_off_within(&h, HAND_OFF_MS, -EOWNERDEAD),
	   "its sandbox killed, no REMOVE sent: the wait ends with -EOWNERDEAD");
	if (!atomic_load(&h.done))	/* unstick it to end the test */
		ctl_send(sv[0], PTO_SBX_CTL_REMOVE, 2, mute.pid, NULL, 0);
	pthread_join(h.thread, NULL);
	if (hand_off_start(&h, t, 3, 2))
		goto out;
	ok(hand_off_within(&h, HAND_OFF_MS, -EOWNERDEAD),
	   "a later task for the dead sandbox: -EOWNERDEAD");
	if (!atomic_load(&h.done))
		ctl_send(sv[0], PTO_SBX_CTL_REMOVE, 2, mute.pid, NULL, 0);
	pthread_join(h.thread, NULL);

	/* without a pidfd, REMOVE still ends the wait */
	if (hand_off_start(&h, t, 1, 3))
		goto out;
	ok(hand_off_waits(&h, 100), "a task in sandbox 3 waits");
	ok(!ctl_send(sv[0], PTO_SBX_CTL_REMOVE, 3, old.pid, NULL, 0) &&
	   hand_off_within(&h, HAND_OFF_MS, -EOWNERDEAD),
	   "REMOVE ends its wait with -EOWNERDEAD");
	pthread_join(h.thread, NULL);
out:
	sandbox_end(&live);
	sandbox_end(&mute);
	sandbox_end(&old);
	close(sv[0]);	/* the control thread sees the channel close */
	return tap_done();
}
