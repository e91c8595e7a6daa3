// SPDX-License-Identifier: MIT
/*
 * ptod_sandbox.c - the clients' sandboxes: pto-sandbox processes that run
 * a client's kernels as the client (Documentation/execution-model.rst)
 *
 * All on the main thread. For a client that -K says to sandbox, hello
 * gives it a sandbox number S (its tasks' exec_ctx), puts its heap ring
 * in a buffer of the client's own file (so that the sandbox can map it),
 * creates the mailbox memfd, starts pto-sandbox S as the client's uid and
 * gid and hands the mailbox to pto-aicore (ADD on the control channel).
 * A sandbox that dies is reaped here: pto-aicore is told (REMOVE, which
 * fails the tasks waiting on it with -EOWNERDEAD), the client's run gets
 * a note saying why, and a sandbox killed by a signal (a crashed kernel)
 * is started again for the client's next run, unless the client is being
 * stopped (ptod_drain.c kills the sandbox of a run that does not drain)
 * or its sandbox crashed PTOD_SBX_CRASHES times within
 * PTOD_SBX_CRASH_WINDOW_NS already: then its later graphs fail at once
 * and it has to connect again (a start is a fork, an exec and pto-aicore's
 * answer, on the main thread that serves every client).
 * A client that goes takes its sandbox with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include <pto-private/fdpass.h>
#include <pto-private/sandbox.h>

#include "ptod.h"

#define SBX_FD_CLIENT	3	/* the sandbox's descriptors */
#define SBX_FD_MAILBOX	4

int ptod_sbx_parse_mode(struct ptod *d, const char *s)
{
	if (!strcmp(s, "all"))
		d->sbx_mode = PTOD_SBX_ALL;
	else if (!strcmp(s, "nonroot"))
		d->sbx_mode = PTOD_SBX_NONROOT;
	else if (!strcmp(s, "none"))
		d->sbx_mode = PTOD_SBX_NONE;
	else
		return -EINVAL;
	return 0;
}

/*
 * A process is dumpable from its exec until it says otherwise, unless its
 * user cannot read the binary it runs. pto-sandbox makes itself
 * non-dumpable first thing, but until then another sandbox of the same
 * uid could open its descriptors through /proc (the client's file, the
 * mailbox). Owned by root and installed mode 0711, it is never dumpable:
 * warn if it is not.
 */
static void sbx_binary_check(const struct ptod *d)
{
	struct stat st;

	if (stat(d->sandbox_path, &st))
		return;		/* its start fails later, saying why */
	/* a binary its owner may read is readable by that user's sandboxes */
	if ((st.st_mode & (S_IRGRP | S_IROTH)) ||
	    (st.st_uid && (st.st_mode & S_IRUSR)))
		ptod_log(PTOD_LOG_WARN,
			 "%s is readable by its users (mode %04o, owner uid %u): a sandbox is dumpable from its start until it makes itself non-dumpable, and another sandbox of the same user can open its descriptors meanwhile; install it owned by root, mode 0711",
			 d->sandbox_path, (unsigned int)(st.st_mode & 07777),
			 (unsigned int)st.st_uid);
}

/*
 * A sandbox maps its client's buffers through the client's file, which
 * only pto.ko gives: the user-mode device runs every kernel in
 * pto-aicore.
 */
int ptod_sbx_settle_mode(struct ptod *d)
{
	bool user = d->ops == &ptod_udev_ops;

	if (d->sbx_mode == PTOD_SBX_DEFAULT)
		d->sbx_mode = user ? PTOD_SBX_NONE : PTOD_SBX_NONROOT;
	if (user && d->sbx_mode != PTOD_SBX_NONE) {
		fprintf(stderr,
			"ptod: -K all|nonroot needs pto.ko: the user-mode device has no client file to give a sandbox (use -K none)\n");
		return -EINVAL;
	}
	if (d->sbx_mode == PTOD_SBX_NONE && d->sbx_opt) {
		fprintf(stderr,
			"ptod: -%c sets up the sandboxes, which %s turns off\n",
			d->sbx_opt, user ? "-d user" : "-K none");
		return -EINVAL;
	}
	if (d->sbx_mode != PTOD_SBX_NONE)
		sbx_binary_check(d);
	else if (!user)
		ptod_log(PTOD_LOG_WARN,
			 "-K none: every client's kernels run in pto-aicore, as root, other users' too: for measurements, not for a device other users may reach");
	return 0;
}

static bool sbx_wanted(const struct ptod *d, uid_t uid)
{
	return d->sbx_mode == PTOD_SBX_ALL ||
	       (d->sbx_mode == PTOD_SBX_NONROOT && uid != 0);
}

/* ---- The control channel to pto-aicore ------------------------------------------- */

static int ctl_send(struct ptod *d, uint32_t type, const struct client *c)
{
	struct pto_sbx_ctl m = { .type = type, .sbx = c->sbx,
				 .pid = c->sbx_pid };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;

	if (d->sbx_ctl < 0)
		return 0;	/* the next pto-aicore gets every ADD */
	if (type == PTO_SBX_CTL_ADD) {
		int fds[2] = { c->sbx_mfd, c->sbx_pidfd };

		pto_msg_attach_fds(&mh, &cm, fds, c->sbx_pidfd >= 0 ? 2 : 1);
	}
	if (sendmsg(d->sbx_ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		ptod_log(PTOD_LOG_ERR, "sandbox %u: control channel: %m", c->sbx);
		return -errno;
	}
	return 0;
}

/*
 * Read pto-aicore's answers; with @wait_sbx, until the ADDED of that
 * sandbox's process @wait_pid (at most 2 s: an ADDED of an earlier
 * process of that number, left from a start batch or an ADD that timed
 * out, is not it). 0, or the -errno of that ADDED, or -ETIMEDOUT.
 */
static int ctl_answers(struct ptod *d, uint32_t wait_sbx, pid_t wait_pid)
{
	int64_t deadline = pto_mono_ns() + 2000000000LL;
	struct pto_sbx_ctl m;

	while (d->sbx_ctl >= 0) {
		struct pollfd pfd = { d->sbx_ctl, POLLIN, 0 };
		int64_t left = (deadline - pto_mono_ns()) / 1000000;
		ssize_t n;
		int ready;

		if (wait_sbx) {
			if (left <= 0)
				return -ETIMEDOUT;
			/* a signal (a sandbox's SIGCHLD) is not the deadline */
			ready = poll(&pfd, 1, (int)left);
			if (ready < 0 && errno == EINTR)
				continue;
			if (ready <= 0)
				return -ETIMEDOUT;
		}
		n = recv(d->sbx_ctl, &m, sizeof(m), MSG_DONTWAIT);
		if (n != sizeof(m))
			return wait_sbx ? -EPIPE : 0;
		if (m.status)
			ptod_log(PTOD_LOG_ERR, "pto-aicore refused sandbox %u: %s",
				 m.sbx, strerror(-m.status));
		if (wait_sbx && m.type == PTO_SBX_CTL_ADDED &&
		    m.sbx == wait_sbx && m.pid == wait_pid)
			return m.status;
	}
	return 0;
}

/*
 * Room for an ADD of every sandbox there can be, queued before pto-aicore
 * reads any: a message that carries a descriptor takes about
 * SBX_CTL_MSG_BYTES of the send buffer, whose default
 * (net.core.wmem_default, 208 KiB) held 278 of them, and an ADD or
 * REMOVE that does not fit is lost.
 */
#define SBX_CTL_MSG_BYTES	770
#define SBX_CTL_SNDBUF		(PTO_SBX_MAX * 2048)

/*
 * SBX_CTL_SNDBUF for @fd's send buffer: root's, past net.core.wmem_max;
 * else as much as that allows, saying what is lost (@what).
 */
static void ctl_sndbuf(int fd, const char *what)
{
	int size = SBX_CTL_SNDBUF;
	socklen_t len = sizeof(size);

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) &&
	    (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) ||
	     getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) ||
	     size < SBX_CTL_SNDBUF))
		ptod_log(PTOD_LOG_WARN, "sandbox control channel: a send buffer of %d bytes (SO_SNDBUFFORCE: not root?): at a pto-aicore start, %s more than about %d sandboxes",
			 size, what, size / SBX_CTL_MSG_BYTES);
}

int ptod_sbx_ctl_open(struct ptod *d)
{
	struct client *c;
	int sv[2];

	ptod_sbx_ctl_close(d);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	ctl_sndbuf(sv[0], "the ADDs are lost of");
	/*
	 * pto-aicore's end too: it answers every queued ADD before it is
	 * ready, and ptod reads the answers only when it waits for one.
	 */
	ctl_sndbuf(sv[1], "pto-aicore waits to answer the ADDs of");
	d->sbx_ctl = sv[0];
	/* queued before pto-aicore starts: in place before it is ready */
	for (c = d->clients; c; c = c->next)
		if (c->sbx_pid > 0)
			ctl_send(d, PTO_SBX_CTL_ADD, c);
	return sv[1];
}

void ptod_sbx_ctl_close(struct ptod *d)
{
	if (d->sbx_ctl >= 0)
		close(d->sbx_ctl);
	d->sbx_ctl = -1;
}

/* ---- The sandbox process --------------------------------------------------------- */

/* ---- The sandbox's standard error ------------------------------------------------ */

/* longer lines are cut in pieces at most this long */
#define SBX_ERR_LINE	256
#define SBX_ERR_RATE	50	/* lines logged per sandbox and second */
/* bytes read per sandbox and second: as many as those lines can hold */
#define SBX_ERR_BYTES	(SBX_ERR_RATE * SBX_ERR_LINE)

/*
 * What a sandbox writes to its standard error (pto-sandbox's messages,
 * and whatever its kernels print) reaches ptod's log line by line, each
 * after "client N: sandbox M: ", so that a kernel cannot write a line of
 * ptod's own; at most SBX_ERR_RATE lines a second, the rest counted, and
 * within all clients' PTOD_CLIENTS_LOG_RATE (ptod_clients_log_take()). ptod
 * reads at most SBX_ERR_BYTES a second of it: past that the pipe is left
 * alone until the next second, it fills, and what the sandbox writes
 * meanwhile is lost (its end does not block), so that a sandbox writing
 * without end costs ptod's main thread that much reading and no more.
 */
struct ptod_sbx_err {
	struct client *c;
	int fd;				/* the pipe's read end */
	struct event *ev;
	struct event *resume;		/* ends a pause, at the next second */
	char line[SBX_ERR_LINE];
	size_t len;			/* of the line so far */
	int64_t sec;			/* the second being counted */
	uint32_t lines, dropped;	/* in it */
	uint32_t bytes;			/* read in it */
	bool paused;			/* in it: ev is not pending */
};

/*
 * The lines of the second counted that were not logged, if any (this
 * line, if all clients' budget refuses it, counts as one at least).
 */
static void sbx_err_dropped(struct ptod_sbx_err *e)
{
	if ((e->dropped || e->paused) &&
	    ptod_clients_log_take(e->c->d, e->c->uid,
				  e->dropped ? e->dropped : 1))
		ptod_log(PTOD_LOG_WARN, "client %u: sandbox %u: %u lines not logged (more than %d a second)%s",
			 e->c->id, e->c->sbx, e->dropped, SBX_ERR_RATE,
			 e->paused ? ", and what it wrote past the bytes read in that second was lost" : "");
	e->dropped = 0;
}

/* Start counting the second we are in, if it is a new one. */
static void sbx_err_second(struct ptod_sbx_err *e)
{
	int64_t sec = pto_mono_ns() / 1000000000LL;

	if (sec == e->sec)
		return;
	sbx_err_dropped(e);
	e->sec = sec;
	e->lines = 0;
	e->bytes = 0;
	e->paused = false;
}

static void sbx_err_line(struct ptod_sbx_err *e)
{
	struct client *c = e->c;

	sbx_err_second(e);
	if (e->lines++ >= SBX_ERR_RATE)
		e->dropped++;
	else if (ptod_clients_log_take(c->d, c->uid, 1))
		ptod_log(PTOD_LOG_INFO, "client %u: sandbox %u: %.*s", c->id,
			 c->sbx, (int)e->len, e->line);
	e->len = 0;
}

/*
 * The line is as long as a line gets: log it, up to a UTF-8 character it
 * ends in the middle of, which starts the next piece.
 */
static void sbx_err_piece(struct ptod_sbx_err *e)
{
	size_t keep = ptod_log_cut(e->line, e->len), rest = e->len - keep;
	char tail[4];

	memcpy(tail, e->line + keep, rest);
	e->len = keep;
	sbx_err_line(e);
	memcpy(e->line, tail, rest);
	e->len = rest;
}

/* The timer that ends a pause, at the start of the next second. */
static int sbx_err_resume_at_next_second(struct ptod_sbx_err *e)
{
	int64_t ns = pto_mono_ns();
	struct timeval tv = { .tv_usec = (1000000000LL - ns % 1000000000LL) /
					 1000 + 1 };

	return evtimer_add(e->resume, &tv);
}

/* The pipe is read again from the next second on. */
static void sbx_err_pause(struct ptod_sbx_err *e)
{
	if (e->paused || sbx_err_resume_at_next_second(e))
		return;		/* if that failed, ev stays: no worse */
	if (event_del(e->ev)) {
		event_del(e->resume);
		return;
	}
	e->paused = true;
}

static void sbx_err_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ptod_sbx_err *e = arg;

	(void)fd;
	(void)what;
	sbx_err_second(e);
	/* early (the loop's clock is coarse): still the same second */
	if (e->paused && !sbx_err_resume_at_next_second(e))
		return;
	e->paused = false;
	if (event_add(e->ev, NULL))
		ptod_log(PTOD_LOG_WARN, "client %u: sandbox %u: its standard error is no longer read",
			 e->c->id, e->c->sbx);
}

/*
 * Read what there is, up to SBX_ERR_READS x 1 KiB (the main loop serves
 * everyone: a sandbox that writes without end gets its share) and up to
 * SBX_ERR_BYTES in this second (then a pause until the next one; the
 * pipe is non-blocking at both ends, so what the sandbox writes while it
 * is full is lost, not waited for); at the end (the sandbox is gone) 1,
 * else 0. The @last read of a sandbox that is gone takes what its pipe
 * still holds, budget or not (at most a pipe's 64 KiB: the filter lets
 * no sandbox resize it).
 */
#define SBX_ERR_READS	16
#define SBX_ERR_LAST_READS 64

static int sbx_err_read(struct ptod_sbx_err *e, bool last)
{
	char buf[1024];
	ssize_t n, i;
	int reads = 0;
	size_t room;

	for (;;) {
		if (reads++ == (last ? SBX_ERR_LAST_READS : SBX_ERR_READS))
			return 0;
		sbx_err_second(e);
		room = last ? sizeof(buf) : SBX_ERR_BYTES - e->bytes;
		if (!room) {
			sbx_err_pause(e);
			return 0;
		}
		n = read(e->fd, buf, room < sizeof(buf) ? room : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno != EAGAIN;
		if (!n)
			break;
		e->bytes += (uint32_t)n;
		for (i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)buf[i];

			if (ch == '\n') {
				sbx_err_line(e);
				continue;
			}
			/*
			 * ptod_log() makes the controls and what is not
			 * UTF-8 '?'; a NUL would end the line's "%.*s" early
			 */
			e->line[e->len++] = ch ? (char)ch : '?';
			if (e->len == sizeof(e->line))
				sbx_err_piece(e);
		}
	}
	if (e->len)
		sbx_err_line(e);
	return 1;
}

static void sbx_err_close(struct ptod_sbx_err *e)
{
	if (!e)
		return;
	if (e->len)
		sbx_err_line(e);
	sbx_err_dropped(e);
	if (e->ev)
		event_free(e->ev);
	if (e->resume)
		event_free(e->resume);
	if (e->fd >= 0)
		close(e->fd);
	free(e);
}

static void sbx_err_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ptod_sbx_err *e = arg;
	struct client *c = e->c;

	(void)fd;
	(void)what;
	if (sbx_err_read(e, false)) {
		c->sbx_err = NULL;
		sbx_err_close(e);
	}
}

/*
 * The read end of a new sandbox's standard error, in the main loop:
 * c->sbx_err (a sandbox before it, gone, has its last words logged
 * first). The write end for the child in *@w. 0 or -errno.
 */
static int sbx_err_open(struct client *c, int *w)
{
	struct ptod_sbx_err *e;
	int p[2];

	if (c->sbx_err) {
		sbx_err_read(c->sbx_err, true);
		sbx_err_close(c->sbx_err);
		c->sbx_err = NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->c = c;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		free(e);
		return -errno;
	}
	e->fd = p[0];
	e->ev = event_new(c->d->base, p[0], EV_READ | EV_PERSIST, sbx_err_cb,
			  e);
	e->resume = evtimer_new(c->d->base, sbx_err_resume_cb, e);
	if (!e->ev || !e->resume || event_add(e->ev, NULL)) {
		close(p[1]);
		sbx_err_close(e);
		return -ENOMEM;
	}
	c->sbx_err = e;
	*w = p[1];
	return 0;
}

/* The sandbox's environment: pto-sandbox reads none, and ptod's is ptod's. */
static char *const sbx_envp[] = { NULL };

void ptod_child_warn(const char *what, int err)
{
	char num[32], *p = ptod_utoa(num + sizeof(num) - 3,
				     err > 0 ? (uint64_t)err : 0);

	memcpy(num + sizeof(num) - 3, ")\n", 2);
	memcpy(p -= 8, " (errno ", 8);
	if (write(2, what, strlen(what)) < 0 ||
	    write(2, p, (size_t)(num + sizeof(num) - 1 - p)) < 0)
		return;		/* nowhere to say it */
}

/*
 * The sandbox dies first when memory runs out, before ptod or
 * pto-aicore: oom_score_adj 1000, written while we are still root (once
 * the client's uid is ours, /proc/self is no longer ours to write).
 * Failing is not fatal: the sandbox works without it.
 */
static void sbx_child_oom(void)
{
	static const char adj[] = "1000";
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, adj, sizeof(adj) - 1) != sizeof(adj) - 1)
		ptod_child_warn("cannot set oom_score_adj to 1000", errno);
	if (fd >= 0)
		close(fd);
}

uint64_t ptod_sbx_mem_limit(const struct ptod *d)
{
	return d->sbx_data + (uint64_t)d->info.nr_cores * PTO_SBX_STACK;
}

/*
 * The child of fork(): only async-signal-safe calls. Standard input and
 * output become /dev/null (a kernel reads nothing of ptod's), standard
 * error the pipe @errw whose lines ptod logs after the sandbox's name
 * (pto-sandbox's messages, a kernel's prints: never a line of ptod's
 * own), the client's file and the mailbox descriptors 3 and 4, every
 * other one is closed; then a session of its own, / as its working
 * directory, oom_score_adj, the limit on its private memory (-M, plus the
 * stacks of its worker threads, one per core: soft and hard, so that the
 * client cannot raise it), the limit on its user's tasks (-P, soft and
 * hard), no ambient capabilities, the client's identity, not dumpable
 * until the exec, no_new_privs, death with ptod, and an empty
 * environment.
 */
static void sbx_child(const struct client *c, int errw, char *const argv[])
{
	pid_t parent = getppid();
	sigset_t none;
	int cf, mf, nf, ef;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	cf = fcntl(c->cfd, F_DUPFD, 16);
	mf = fcntl(c->sbx_mfd, F_DUPFD, 16);
	ef = fcntl(errw, F_DUPFD, 16);
	/* not O_CLOEXEC: it may be one of 0-2 itself (which dup2 keeps) */
	nf = open("/dev/null", O_RDWR);
	if (cf < 0 || mf < 0 || ef < 0 || nf < 0 ||
	    dup2(nf, STDIN_FILENO) < 0 || dup2(nf, STDOUT_FILENO) < 0 ||
	    dup2(ef, STDERR_FILENO) < 0 ||
	    dup2(cf, SBX_FD_CLIENT) < 0 || dup2(mf, SBX_FD_MAILBOX) < 0)
		_exit(126);
	/* its memory cgroup (ptod_cgroup.c), before its descriptor goes */
	if (c->d->sbx_cg >= 0) {
		int err = ptod_sbx_cg_join(c->d->sbx_cg,
					   ptod_sbx_cg_limit(c->d),
					   ptod_sbx_cg_pids(c->d));

		if (err) {
			ptod_child_warn("cannot join its memory cgroup", -err);
			_exit(126);
		}
	}
	if (syscall(SYS_close_range, SBX_FD_MAILBOX + 1, ~0U, 0))
		_exit(126);
	/*
	 * A session of its own: no controlling terminal (a kernel that
	 * opened ptod's /dev/tty could read and write it, or stop ptod's
	 * whole process group with one read in the background), and not in
	 * ptod's process group.
	 */
	if (setsid() < 0)
		_exit(126);
	/* not ptod's working directory, which the client may not reach */
	if (chdir("/"))
		_exit(126);
	sbx_child_oom();
	if (c->d->sbx_data) {
		rlim_t lim = ptod_sbx_mem_limit(c->d);
		struct rlimit rl = { .rlim_cur = lim, .rlim_max = lim };

		if (setrlimit(RLIMIT_DATA, &rl))
			_exit(126);
	}
	if (c->d->sbx_tasks) {
		struct rlimit rl = { .rlim_cur = c->d->sbx_tasks,
				     .rlim_max = c->d->sbx_tasks };

		if (setrlimit(RLIMIT_NPROC, &rl))
			_exit(126);
	}
	/*
	 * No ambient capability survives the uid change (a ptod that is not
	 * root but was given some); EINVAL: a kernel without them.
	 */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		_exit(126);
	if (syscall(SYS_setgroups, 0, NULL) ||
	    syscall(SYS_setresgid, c->gid, c->gid, c->gid) ||
	    syscall(SYS_setresuid, c->uid, c->uid, c->uid))
		_exit(126);
	/*
	 * Until the exec, this is a copy of ptod's memory (other clients'
	 * messages, its configuration) now owned by the client's uid: not
	 * dumpable, so that the client cannot attach to it meanwhile.
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
		_exit(126);
	execve(argv[0], argv, sbx_envp);
	/* EAGAIN: the user had -P tasks already when it became ours */
	ptod_child_warn("cannot exec pto-sandbox", errno);
	_exit(127);
}

/* Close the mailbox and the pidfd of @c's sandbox, once it is gone. */
static void sbx_fds_close(struct client *c)
{
	if (c->sbx_mfd >= 0)
		close(c->sbx_mfd);
	c->sbx_mfd = -1;
	if (c->sbx_pidfd >= 0)
		close(c->sbx_pidfd);
	c->sbx_pidfd = -1;
}

/* Start pto-sandbox for @c (c->sbx, c->sbx_mfd set). 0 or -errno. */
static int sbx_spawn(struct client *c)
{
	struct ptod *d = c->d;
	char id[16], fcl[8], fmb[8];
	char *argv[] = { (char *)d->sandbox_path, "-n", id, "-f", fcl,
			 "-m", fmb, d->verbose ? "-v" : NULL, NULL };
	int errw = -1, ret;
	pid_t pid;

	snprintf(id, sizeof(id), "%u", c->sbx);
	snprintf(fcl, sizeof(fcl), "%d", SBX_FD_CLIENT);
	snprintf(fmb, sizeof(fmb), "%d", SBX_FD_MAILBOX);
	ret = sbx_err_open(c, &errw);
	if (ret)
		return ret;
	pid = fork();
	if (pid == 0)
		sbx_child(c, errw, argv);
	ret = pid < 0 ? -errno : 0;
	close(errw);
	if (ret)
		return ret;	/* ptod_sbx_client_stop() closes c->sbx_err */
	/*
	 * Ours to reap, so this is surely the child: pto-aicore watches it
	 * die (a REMOVE can be lost).
	 */
	c->sbx_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (c->sbx_pidfd < 0)
		ptod_log(PTOD_LOG_WARN, "client %u: pidfd_open of its sandbox: %m: pto-aicore learns of its death only from ptod",
			 c->id);
	/* the runner reads it in run_admit() (a restart: it is running) */
	pthread_mutex_lock(&c->d->dev_lock);
	c->sbx_pid = pid;
	pthread_mutex_unlock(&c->d->dev_lock);
	ptod_log(PTOD_LOG_INFO, "client %u: sandbox %u (pid %d, uid %d gid %d)",
		 c->id, c->sbx, (int)pid, (int)c->uid, (int)c->gid);
	return 0;
}

/* Free the heap ring's buffer: the client's file may outlive its hello. */
static void sbx_heap_free(struct client *c)
{
	struct pto_gm_free gf = { .size = sizeof(gf),
				  .handle = c->heap_handle };

	if (c->heap_handle && ioctl(c->cfd, PTO_IOC_GM_FREE, &gf))
		ptod_log(PTOD_LOG_WARN, "client %u: GM_FREE of its heap: %m",
			 c->id);
	c->heap_handle = 0;
}

/* The heap ring in a buffer of the client's file, pinned by our mapping. */
static int sbx_heap(struct client *c)
{
	struct pto_gm_alloc ga = { .size = sizeof(ga),
				   .len = c->cfg.heap_size };
	void *pin;

	if (ioctl(c->cfd, PTO_IOC_GM_ALLOC, &ga))
		return -errno;
	c->heap_handle = ga.handle;
	pin = mmap(NULL, ga.len, PROT_READ, MAP_SHARED, c->cfd,
		   (off_t)ga.mmap_offset);
	if (pin == MAP_FAILED)
		return -errno;	/* ptod_sbx_client_stop() frees it */
	c->heap_pin = pin;
	c->heap_len = ga.len;
	c->cfg.heap_dev = ga.dev_addr;
	return 0;
}

static uint32_t sbx_number(struct ptod *d)
{
	uint32_t i;

	for (i = 1; i <= PTO_SBX_MAX; i++)
		if (!d->sbx_used[i]) {
			d->sbx_used[i] = true;
			return i;
		}
	return 0;
}

/*
 * Why user @uid may not start a sandbox (sbx_start_paid()'s -EAGAIN or
 * another -errno), after @what, into @buf.
 */
static void sbx_start_refused(char *buf, size_t len, const char *what,
			      uid_t uid, int err)
{
	if (err == -EAGAIN)
		snprintf(buf, len,
			 "%s: user %d started more than %d sandboxes at once or %d a second (ptod's limit): connect again later",
			 what, (int)uid, PTOD_SBX_STARTS_BURST,
			 PTOD_SBX_STARTS_RATE);
	else
		snprintf(buf, len, "%s: %s", what, strerror(-err));
}

/*
 * May user @uid start a sandbox now? Each start costs its user 1 /
 * PTOD_SBX_STARTS_RATE s, paid up to PTOD_SBX_STARTS_BURST starts ahead
 * of the clock; root is not counted. 0, -EAGAIN, or -ENOMEM. A user
 * whose starts are all paid for leaves the table (it holds only the
 * users of the last PTOD_SBX_STARTS_BURST / PTOD_SBX_STARTS_RATE s).
 */
static int sbx_start_paid(struct ptod *d, uid_t uid)
{
	const int64_t cost = 1000000000LL / PTOD_SBX_STARTS_RATE;
	int64_t now = pto_mono_ns(), *paid = NULL;
	uint32_t i;

	if (!uid)
		return 0;
	/* the others whose starts are all paid for go */
	for (i = 0; i < d->nr_sbx_starts;)
		if (d->sbx_starts[i].uid != uid &&
		    d->sbx_starts[i].paid_ns <= now)
			d->sbx_starts[i] = d->sbx_starts[--d->nr_sbx_starts];
		else
			i++;
	for (i = 0; i < d->nr_sbx_starts && !paid; i++)
		if (d->sbx_starts[i].uid == uid)
			paid = &d->sbx_starts[i].paid_ns;
	if (!paid) {
		if (d->nr_sbx_starts == d->cap_sbx_starts) {
			uint32_t cap = d->cap_sbx_starts ?
				       2 * d->cap_sbx_starts : 16;
			void *n = realloc(d->sbx_starts,
					  cap * sizeof(*d->sbx_starts));

			if (!n)
				return -ENOMEM;
			d->sbx_starts = n;
			d->cap_sbx_starts = cap;
		}
		d->sbx_starts[d->nr_sbx_starts].uid = uid;
		paid = &d->sbx_starts[d->nr_sbx_starts++].paid_ns;
		*paid = now;
	}
	if (*paid < now)
		*paid = now;
	if (*paid - now > (PTOD_SBX_STARTS_BURST - 1) * cost)
		return -EAGAIN;
	*paid += cost;
	return 0;
}

int ptod_sbx_client_start(struct client *c, char *err, size_t len)
{
	struct ptod *d = c->d;
	const char *what;
	int ret;

	if (!sbx_wanted(d, c->uid))
		return 0;
	ret = sbx_start_paid(d, c->uid);
	if (ret) {
		sbx_start_refused(err, len, "the client's sandbox", c->uid,
				  ret);
		return ret;
	}
	what = "no sandbox number is free";
	ret = -EBUSY;
	c->sbx = sbx_number(d);
	if (!c->sbx)
		goto fail;
	what = "cannot allocate its heap in the client's GM";
	ret = sbx_heap(c);
	if (ret)
		goto fail;
	what = "cannot create its mailbox";
	ret = c->sbx_mfd = pto_sbx_mailbox_create(d->info.nr_cores);
	if (ret < 0)
		goto fail;
	what = "cannot start it";
	ret = sbx_spawn(c);
	if (ret)
		goto fail;
	c->cfg.exec_ctx = c->sbx;
	what = "pto-aicore refused it";
	ret = ctl_send(d, PTO_SBX_CTL_ADD, c);
	if (!ret && d->exec_ready)
		ret = ctl_answers(d, c->sbx, c->sbx_pid);
	if (ret)
		goto fail;
	return 0;
fail:
	snprintf(err, len, "the client's sandbox: %s: %s", what, strerror(-ret));
	return ret;	/* client_destroy() undoes the rest */
}

void ptod_sbx_client_stop(struct client *c)
{
	struct ptod *d = c->d;

	if (c->sbx_pid > 0) {
		kill(c->sbx_pid, SIGKILL);	/* reaped as a stranger */
		ctl_send(d, PTO_SBX_CTL_REMOVE, c);
		c->sbx_pid = 0;
	}
	sbx_fds_close(c);
	sbx_err_close(c->sbx_err);	/* what is left unread goes with it */
	c->sbx_err = NULL;
	if (c->heap_pin)
		munmap(c->heap_pin, c->heap_len);
	c->heap_pin = NULL;
	sbx_heap_free(c);
	if (c->sbx)
		d->sbx_used[c->sbx] = false;
	c->sbx = 0;
	ctl_answers(d, 0, 0);
}

/*
 * One more crash of @c's sandbox: true if it is one too many to start it
 * again (then the client's graphs fail from now on, with a note).
 */
static bool sbx_crashed_too_often(struct client *c)
{
	struct ptod *d = c->d;
	int64_t now = pto_mono_ns();

	if (!c->sbx_crashes || now - c->sbx_crash_t0 > PTOD_SBX_CRASH_WINDOW_NS) {
		c->sbx_crash_t0 = now;
		c->sbx_crashes = 0;
	}
	if (++c->sbx_crashes <= PTOD_SBX_CRASHES)
		return false;
	ptod_log(PTOD_LOG_ERR,
		 "client %u: its sandbox crashed %u times within %lld s: not started again, the client's graphs fail",
		 c->id, c->sbx_crashes,
		 (long long)(PTOD_SBX_CRASH_WINDOW_NS / 1000000000LL));
	pthread_mutex_lock(&d->dev_lock);
	c->sbx_gave_up = true;
	snprintf(c->note, sizeof(c->note),
		 "the client's kernel sandbox crashed %u times within %lld s and is not started again: connect again for a new one",
		 c->sbx_crashes,
		 (long long)(PTOD_SBX_CRASH_WINDOW_NS / 1000000000LL));
	pthread_mutex_unlock(&d->dev_lock);
	return true;
}

/*
 * May @c's crashed sandbox start again? A restart costs the main thread
 * what a start does, so it is paid from the same budget of the user's
 * (sbx_start_paid()): a kernel that crashes on purpose, in each of its
 * user's connections, starts no more sandboxes a second than connecting
 * does.
 */
static bool sbx_restart_paid(struct client *c)
{
	struct ptod *d = c->d;
	int ret = sbx_start_paid(d, c->uid);
	char why[sizeof(c->note)];

	if (!ret)
		return true;
	sbx_start_refused(why, sizeof(why),
			  "the client's kernel sandbox crashed and is not started again",
			  c->uid, ret);
	ptod_log(PTOD_LOG_ERR, "client %u: %s", c->id, why);
	pthread_mutex_lock(&d->dev_lock);
	c->sbx_gave_up = true;	/* its graphs fail with the note */
	memcpy(c->note, why, sizeof(c->note));
	pthread_mutex_unlock(&d->dev_lock);
	return false;
}

/*
 * The reap of @c's sandbox is over (started again and taken by
 * pto-aicore, or given up): a graph waiting in run_admit() for it may go
 * on.
 */
static void reaped_wake(struct client *c)
{
	struct ptod *d = c->d;

	pthread_mutex_lock(&d->dev_lock);
	c->sbx_swapping = false;
	pthread_cond_broadcast(&d->dev_cond);
	pthread_mutex_unlock(&d->dev_lock);
}

bool ptod_sbx_reaped(struct ptod *d, pid_t pid, int status)
{
	struct client *c;
	char why[192];

	for (c = d->clients; c && c->sbx_pid != pid; c = c->next)
		;
	if (!c || pid <= 0)
		return false;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    ptod_sbx_cg_oom(d, pid))
		snprintf(why, sizeof(why), "was killed by signal %d (%s): it reached its memory cgroup's limit of %" PRIu64 " MiB (ptod -M, the worker stacks and %llu MiB)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)),
			 ptod_sbx_cg_limit(d) >> 20, PTOD_SBX_CG_SLACK >> 20);
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, sizeof(why), "exited with status %d",
			 WEXITSTATUS(status));
	ptod_log(PTOD_LOG_ERR, "client %u: sandbox %u (pid %d) %s", c->id,
		 c->sbx, (int)pid, why);
	pthread_mutex_lock(&d->dev_lock);
	if (!c->note[0])
		snprintf(c->note, sizeof(c->note),
			 "the client's kernel sandbox (pid %d) %s", (int)pid, why);
	c->sbx_pid = 0;
	c->sbx_swapping = true;
	pthread_cond_broadcast(&d->dev_cond);	/* sbx_death_noted() */
	pthread_mutex_unlock(&d->dev_lock);
	sbx_fds_close(c);
	/*
	 * A crashed kernel: a new sandbox with a new mailbox for the next
	 * run. Its ADD replaces the dead one in pto-aicore in one step (the
	 * tasks waiting on the old one fail), so that no task of the client
	 * finds no sandbox in between.
	 */
	if (WIFSIGNALED(status) && !atomic_load(&c->stop_err) &&
	    !sbx_crashed_too_often(c) && sbx_restart_paid(c)) {
		c->sbx_mfd = pto_sbx_mailbox_create(d->info.nr_cores);
		if (c->sbx_mfd >= 0 && !sbx_spawn(c) &&
		    !ctl_send(d, PTO_SBX_CTL_ADD, c)) {
			if (d->exec_ready && ctl_answers(d, c->sbx, c->sbx_pid))
				ptod_log(PTOD_LOG_ERR, "client %u: pto-aicore did not take its new sandbox",
					 c->id);
			reaped_wake(c);
			return true;
		}
		ptod_log(PTOD_LOG_ERR, "client %u: cannot restart its sandbox",
			 c->id);
	}
	ctl_send(d, PTO_SBX_CTL_REMOVE, c);	/* fails its waiting tasks */
	ctl_answers(d, 0, 0);
	reaped_wake(c);
	return true;
}

bool ptod_sbx_exited(pid_t pid)
{
	siginfo_t si = { 0 };

	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT))
		return errno == ECHILD;	/* reaped, its state not yet ours */
	return si.si_pid == pid;
}
