// SPDX-License-Identifier: GPL-2.0
/*
 * e2e_test - end-to-end tests of the emulated device: ptod, pto-aicore,
 * libpto and the examples (kselftest harness)
 *
 * As root in the VM, with pto.ko loaded:
 *
 *   scripts/vm-run --module kmod/pto.ko -- prove -v selftests/e2e/run.sh
 *   (or: make -C selftests/e2e run; -l lists the tests, -t NAME runs one)
 *
 * main() starts build/daemon/ptod (which spawns pto-aicore) on /dev/pto0
 * and a private socket in a temporary directory, through a small keeper
 * process that reports ptod's exit status on a pipe (only a parent can
 * wait for a process, and the tests run in children of the harness). ptod
 * says it listens with "READY=1" on $NOTIFY_SOCKET, a datagram socket of
 * ours. The tests then run in order, each in a process of its own; they
 * share ptod and a small MAP_SHARED state (struct e2e).
 *
 * Clients are build/selftests/e2e/pto_e2e subcommands with their output in
 * a memfd; those that must be ready before the test goes on get a pipe
 * (pto_e2e -r FD) and write one byte to it. Outcomes come from exit
 * statuses, the clients' own messages (status and text returned by
 * libpto, the examples' golden checks, the probe kernel's records of where
 * and when each task ran), the device's counters
 * (/sys/class/misc/pto0/counters), its core registers (mapped read-only
 * with the EXECUTOR role) and, for the executor's pid, debugfs. ptod's log
 * is printed at the end for humans; a test reads it only where what ptod
 * logs is what it tests.
 *
 * With PTO_DEVICE=user in the environment the suite runs natively, on
 * ptod's user-mode device (ptod -d user; no pto.ko): the clients inherit
 * the variable, and what came from the device (counters, the executor's
 * pid, the register file, the HWS registers) comes from ptod, which runs
 * that device (PTO_MSG_DEV_STATUS, PTO_MSG_HWS_CONFIG). A test that needs
 * what the user-mode device does not have says so and is skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/pto.h>

#include "../../daemon/tests/lingering.h"
#include "hostile.h"
#include "ptod_dial.h"

/*
 * The harness's messages (a failed assertion's, TH_LOG's) go to stderr as
 * usual and into a file too (fail_note_write()), so that the end of the
 * run can say again what failed.
 */
static FILE *th_log_stream(void);
#define TH_LOG_STREAM	th_log_stream()

#include "kselftest_harness.h"
#include "pto_user.h"

#include <pto-private/asleep.h>
#include <pto-private/fdpass.h>
#include <pto-private/regs.h>
#include <pto-private/sandbox.h>
#include <pto-private/wire.h>

#define DEV_PATH	"/dev/pto0"
#define COUNTERS	"/sys/class/misc/pto0/counters"
#define DEBUGFS_CORES	"/sys/kernel/debug/pto/pto0/cores"

/* How long a client may take (the old suite ran each under timeout 120). */
#define CLIENT_MS	120000
/*
 * pto-aicore's park bound and the longest sleep of an idle scheduler
 * thread in this suite (PTO_AICORE_PARK_MS, PTO_SCHED_SLEEP_MS): kicks,
 * new work and completions end those sleeps, so the bounds only cap what
 * a lost wake-up costs; long here, one stalls its graph for all of it
 * (chain_no_lost_kick, stuck_kernels_client_killed and others then fail)
 * instead of hiding in the default. CHAIN_LIMIT_MS: the longest a chain
 * graph may take.
 */
#define PARK_MS		60000
#define CHAIN_LIMIT_MS	20000
/* How long a client may take to say it is ready. */
#define READY_MS	30000

/* ptod runs this user's clients in HWS context NOBODY_CTX (ptod -x). */
#define NOBODY		65534
#define NOBODY_CTX	1

/* ptod -q: GM each user but root may hold, MiB */
#define QUOTA_MIB	64
/* ptod -D: graphs a user but root may have running at once */
#define RUNS_UID	4
/* ptod -M: a sandbox's private memory, MiB (hostile.h's sizes around it) */
#define SBX_DATA_MIB	256
/* ptod -P: a sandbox starts no thread while its user has this many tasks */
#define SBX_TASKS	1024
/* ptod -q QUOTA_OWN_UID=QUOTA_OWN_MIB: a user with a quota of its own */
#define QUOTA_OWN_UID	65533
#define QUOTA_OWN_MIB	128
/*
 * kernel_reload_unpins_old_blob: a kernel loaded RELOAD_QUOTA_COUNT times
 * from blobs of RELOAD_QUOTA_MIB, more than QUOTA_MIB in all
 */
#define RELOAD_QUOTA_COUNT	12
#define RELOAD_QUOTA_MIB	8
_Static_assert(RELOAD_QUOTA_COUNT * RELOAD_QUOTA_MIB > QUOTA_MIB + 16,
	       "the replaced blobs must not fit in the quota");
/* ptod's default connections per user (ptod -c) */
#define CONNS_PER_UID	16

#define STR_(x)	#x
#define STR(x)	STR_(x)

/* What main() sets up and what one test hands to the next. */
struct e2e {
	bool user;			/* PTO_DEVICE=user: ptod -d user */
	char tmp[PATH_MAX];
	char sock[PATH_MAX + 16];
	char notify[PATH_MAX + 16];
	char log[PATH_MAX + 16];
	char fails[PATH_MAX + 16];	/* what the failed tests said */
	char bin[PATH_MAX];		/* build/selftests/e2e */
	char build[PATH_MAX + 16];	/* build */
	pid_t main_pid;
	pid_t ptod;
	int ptod_status_fd;		/* the keeper writes ptod's wait status */
	bool ptod_exited;
	int ptod_status;
	char setup_err[512];		/* why ptod is not up */
	int64_t ready_ms, online_ms;	/* READY=1, all cores online */
	uint32_t nr_aic, nr_aiv, nr_cores;
	uint64_t gm_idle, bufs_idle;
	/* killed_client_other_passes -> killed_client_gm_freed */
	bool killed_ran;
	uint64_t gm_during;
	/* crash_kernel_clear_error -> aicore_restarted_next_run_passes */
	bool crash_ran;
	pid_t exec_before_crash;
	/* the HWS registers before a test changed them (teardown restores) */
	bool hws_changed;
	struct pto_hws_cfg hws_orig;
	/* ptod's RLIMIT_NOFILE before a test lowered it (teardown restores) */
	bool nofile_lowered;
	/* ptod stopped (SIGSTOP) by a test that did not get to continue it */
	bool ptod_stopped;
	struct rlimit nofile_orig;
};

static struct e2e *E;

/* ---- small helpers -------------------------------------------------------------- */

static int64_t mono_ms(void)
{
	return pto_mono_ns() / 1000000;
}

static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- what a failed test said, said again at the end ----------------------------- */

/*
 * A failed test's messages scroll by among hundreds of lines, and a log
 * cut to its end loses them. So the harness's messages go to E->fails as
 * well, after a line the fixture's setup writes for each test: "@@ NAME
 * OFFSET", where OFFSET is the length of ptod's log when the test began.
 * At the end, teardown() prints every test that said something there
 * (an assertion that failed, a TH_LOG; not a SKIP, which its TAP line
 * says), with what ptod logged while it ran (fails_print()). The
 * fixture's teardown cannot do it: the harness skips it after a failed
 * ASSERT.
 */
#define LOG_TAIL_LINES	60	/* ptod's lines shown: of all, of a test */
#define LOG_TAIL_BYTES	(1 << 20)	/* read from a log's end at most */

static void fail_note_write(const char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!E || !E->fails[0])
		return;
	fd = open(E->fails, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	n = write(fd, buf, len);
	(void)n;		/* the message went to stderr anyway */
	close(fd);
}

static ssize_t th_log_write(void *cookie, const char *buf, size_t len)
{
	ssize_t n = write(STDERR_FILENO, buf, len);

	(void)cookie;
	(void)n;
	fail_note_write(buf, len);
	return (ssize_t)len;
}

static FILE *th_log_stream(void)
{
	static FILE *f;		/* made once per process, unbuffered */
	cookie_io_functions_t io = { .write = th_log_write };

	if (!f) {
		f = fopencookie(NULL, "w", io);
		if (f)
			setvbuf(f, NULL, _IONBF, 0);
	}
	return f ? f : stderr;
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

/* The fixture's setup: the test's line in E->fails. */
static void fail_mark_start(const char *name)
{
	char line[256];

	snprintf(line, sizeof(line), "@@ %s %lld\n", name,
		 (long long)file_size(E->log));
	fail_note_write(line, strlen(line));
}

/*
 * The last LOG_TAIL_LINES lines of ptod's log in [@from, @to), under
 * "--- @what (last N of M lines) ---" (M: of the last LOG_TAIL_BYTES).
 */
static void log_tail_print(const char *what, off_t from, off_t to)
{
	int fd, total = 0, n_line = 0;
	char *buf, *p;
	ssize_t n = 0;

	if (to - from > LOG_TAIL_BYTES)
		from = to - LOG_TAIL_BYTES;
	buf = to > from ? malloc((size_t)(to - from)) : NULL;
	fd = buf ? open(E->log, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = pread(fd, buf, (size_t)(to - from), from);
		close(fd);
	}
	if (n < 0)
		n = 0;
	for (p = buf; p && p < buf + n; p++)
		total += *p == '\n';
	note("--- %s (last %d of %d lines) ---", what,
	     total < LOG_TAIL_LINES ? total : LOG_TAIL_LINES, total);
	for (p = buf; p && p < buf + n; ) {
		char *eol = memchr(p, '\n', (size_t)(buf + n - p));
		int len = eol ? (int)(eol - p) : (int)(buf + n - p);

		if (++n_line > total - LOG_TAIL_LINES)
			printf("# %.*s\n", len, p);
		p += len + 1;
	}
	fflush(stdout);
	free(buf);
}

/* At the end: each test that said something, with its part of ptod's log. */
static void fails_print(void)
{
	char line[512], name[128] = "", next[128], what[192];
	long long off = 0, next_off;
	bool said = false, any = false;
	off_t end = file_size(E->log);
	FILE *f = fopen(E->fails, "re");

	if (!f)
		return;
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || sscanf(line, "@@ %127s %lld", next, &next_off) == 2) {
			snprintf(what, sizeof(what),
				 "%s: ptod's log while it ran", name);
			if (said)
				log_tail_print(what, (off_t)off,
					       eof ? end : (off_t)next_off);
			if (eof)
				break;
			snprintf(name, sizeof(name), "%s", next);
			off = next_off;
			said = false;
			continue;
		}
		if (strstr(line, "SKIP      "))
			continue;	/* ok N ... # SKIP says it */
		if (!said && !any)
			note("--- what the tests said through the harness, again ---");
		if (!said)
			note("--- %s ---", name);
		said = any = true;
		fputs(line, stdout);
	}
	fclose(f);
	fflush(stdout);
}

/* A new connection to ptod's socket, or -errno. */
static int ptod_dial(void)
{
	return ptod_dial_path(E->sock, SOCK_SEQPACKET | SOCK_CLOEXEC);
}

/*
 * A new connection to ptod with a PING sent on it: the socket, or -errno.
 * A connection ptod refused at once may be shut down before the PING goes
 * (EPIPE): the refusal's reply is there to read all the same.
 */
static int ping_conn(void)
{
	struct pto_msg m = { .type = PTO_MSG_PING };
	int s, ret;

	s = ptod_dial();
	if (s >= 0 && send(s, &m, offsetof(struct pto_msg, text) + 1,
			   MSG_NOSIGNAL) < 0 && errno != EPIPE) {
		ret = -errno;
		close(s);
		s = ret;
	}
	return s;
}

/*
 * Did @s get a reply within @ms ("hello first": ptod took it)? Its status
 * into *@status, if not NULL.
 */
static bool got_reply(int s, int ms, int *status)
{
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	struct pto_msg m;
	ssize_t n;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	n = recv(s, &m, sizeof(m), MSG_DONTWAIT);
	if (n <= 0 || pto_msg_from_ptod(&m, (size_t)n, NULL, 0) ||
	    m.type != PTO_MSG_REPLY)
		return false;
	if (status)
		*status = m.status;
	return true;
}

/*
 * The user-mode device: send @m to ptod on a connection of its own and
 * put the reply into @m (and the descriptor it carries, if any, into
 * *@fd, else -1). The reply's status, or -errno.
 */
static int ptod_request(struct pto_msg *m, int *fd)
{
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;
	int s, got = -1;
	ssize_t n;

	*fd = -1;
	s = ptod_dial();
	if (s < 0)
		return s;
	if (send(s, m, sizeof(*m), MSG_NOSIGNAL) < 0) {
		got = -errno;
		close(s);
		return got;
	}
	pto_msg_want_fds(&mh, &cm);
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		got = -errno;
	else if (pto_msg_take_fds(&mh, &got, 1))
		*fd = got;
	close(s);
	if (n < 0)
		return got;
	if (pto_msg_from_ptod(m, (size_t)n, NULL, 0))
		return -EPROTO;
	return m->status;
}

/*
 * The device's counters: pto.ko's sysfs file, or what ptod says of its
 * user-mode device (the same lines); NULL with errno set.
 */
static FILE *counters_open(void)
{
	static struct pto_msg m;
	int fd, ret;

	if (!E->user)
		return fopen(COUNTERS, "re");
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_STATUS;
	ret = ptod_request(&m, &fd);
	if (fd >= 0)
		close(fd);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	return fmemopen(m.text, strlen(m.text), "r");
}

/* Value of @key in the device's counters; 0 or -errno. */
static int counter(const char *key, uint64_t *val)
{
	char line[128], k[64];
	unsigned long long v;
	FILE *f = counters_open();
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", k, &v) == 2 && !strcmp(k, key)) {
			*val = v;
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* A counter, or the test fails. */
static uint64_t cnt(struct __test_metadata *_metadata, const char *key)
{
	uint64_t v = 0;
	int ret = counter(key, &v);

	ASSERT_EQ(0, ret) TH_LOG("%s %s: %s", COUNTERS, key, strerror(-ret));
	return v;
}

/*
 * Wait up to @ms for gm_bytes_used and gm_buffers to be back at their idle
 * values (ptod frees a client's GM on its main thread after the client
 * went: nothing to wait on but the counters). true if they are; *@used
 * and *@bufs get the last values read.
 */
static bool wait_gm_idle(int ms, uint64_t *used, uint64_t *bufs)
{
	int64_t until = mono_ms() + ms;

	for (;;) {
		if (counter("gm_bytes_used", used) || counter("gm_buffers", bufs))
			return false;
		if (*used == E->gm_idle && *bufs == E->bufs_idle)
			return true;
		if (mono_ms() > until)
			return false;
		usleep(10000);
	}
}

/* Entries of /proc/PID/SUB: "fd" (open descriptors), "task" (threads). */
static int proc_entries(pid_t pid, const char *sub)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, sub);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * ptod's open descriptors while it serves no request of ours: the least
 * of a few counts 20 ms apart (a connection of an earlier counter read
 * may still be closing), or -errno.
 */
static int ptod_quiet_fds(void)
{
	int i, n, least = INT_MAX;

	for (i = 0; i < 5; i++) {
		if (i)
			usleep(20000);
		n = proc_entries(E->ptod, "fd");
		if (n < 0)
			return n;
		least = n < least ? n : least;
	}
	return least;
}

/*
 * Log where each of @pid's descriptors points ("fd -> target"), for a
 * failure about a descriptor count: the ones a test did not expect are
 * among them.
 */
static void log_fds(struct __test_metadata *_metadata, pid_t pid,
		    const char *when)
{
	char path[64], link[PATH_MAX], target[256];
	struct dirent *de;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", path, de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		target[len < 0 ? 0 : len] = '\0';
		TH_LOG("%s: fd %s -> %s", when, de->d_name, target);
	}
	closedir(d);
}

/*
 * The pid that owns the online cores, from the device's own table
 * (debugfs cores: "core type state pid ..."); -errno, or -EBADE if the
 * online cores do not all have one owner.
 */
static pid_t executor_pid(void)
{
	char line[256], state[16];
	unsigned int core;
	FILE *f;
	pid_t pid = 0;
	uint64_t v;
	int owner;

	if (E->user) {
		/* ptod reads the owner off the device's own table too */
		owner = counter("executor_pid", &v);
		return owner ? owner : v ? (pid_t)v : -ENOENT;
	}
	f = fopen(DEBUGFS_CORES, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %*s %15s %d", &core, state, &owner) != 3 ||
		    strcmp(state, "online"))
			continue;
		if (pid && owner != pid) {
			pid = -EBADE;
			break;
		}
		pid = owner;
	}
	fclose(f);
	return pid ? pid : -ENOENT;
}

/*
 * executor_pid() once an executor has every core online, or what it last
 * said after READY_MS: a test that follows one whose kernel killed
 * pto-aicore starts while ptod is still starting the next one, and a
 * snapshot taken then would be of no executor at all.
 */
static pid_t executor_pid_settled(void)
{
	int64_t until = mono_ms() + READY_MS;
	uint64_t online;
	pid_t pid;

	for (;;) {
		pid = executor_pid();
		if ((pid > 0 && !counter("cores_online", &online) &&
		     online == E->nr_cores) || mono_ms() >= until)
			return pid;
		usleep(10000);
	}
}

/* ---- ptod's exit status (from the keeper) -------------------------------------- */

/*
 * Wait up to @ms for ptod to have exited; 1 (status in E->ptod_status),
 * 0 if it is still running, -errno.
 */
static int ptod_wait(int ms)
{
	struct pollfd pfd = { .fd = E->ptod_status_fd, .events = POLLIN };
	ssize_t n;
	int st, ret;

	if (E->ptod_exited)
		return 1;
	do
		ret = poll(&pfd, 1, ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (!ret)
		return 0;
	do
		n = read(E->ptod_status_fd, &st, sizeof(st));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != sizeof(st))	/* the keeper died without telling */
		st = -1;
	E->ptod_status = st;
	E->ptod_exited = true;
	return 1;
}

static const char *wstatus_str(int st, char *buf, size_t len)
{
	if (st == -1)
		snprintf(buf, len, "unknown (keeper lost)");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "status 0x%x", st);
	return buf;
}

/* ---- client processes ------------------------------------------------------------------ */

/**
 * struct proc - a program the test started.
 * @name: label of its output lines.
 * @pid: its pid.
 * @pidfd: pidfd_open() of it: readable once it has exited.
 * @out: memfd that is its stdout and stderr.
 * @ready: our end of its ready pipe, or -1.
 * @status: wait status once reaped.
 * @reaped: waited for.
 * @text: its output once reaped (NUL-terminated).
 */
struct proc {
	char name[32];
	pid_t pid;
	int pidfd;
	int out;
	int ready;
	int status;
	bool reaped;
	char *text;
};

/* Kill and reap a process a test gives up on. */
static void proc_kill(pid_t pid)
{
	int ret;

	if (kill(pid, SIGKILL))
		note("kill %d: %s", pid, strerror(errno));
	do
		ret = waitpid(pid, NULL, 0);
	while (ret < 0 && errno == EINTR);
	if (ret != pid)
		note("waitpid %d: %s", pid, strerror(errno));
}

/*
 * Start @argv with the extra environment @env (NULL-terminated, or NULL),
 * as user @uid (0: as we are, root; with @in_group in the device's group).
 * @ready_w >= 0: the write end of a ready pipe, kept open across exec. 0
 * or -errno.
 */
static int proc_spawn(struct proc *p, const char *name, char *const argv[],
		      const char *const env[], int ready_w, uid_t uid,
		      bool in_group)
{
	int i;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pidfd = -1;
	p->ready = -1;
	p->out = memfd_create(name, MFD_CLOEXEC);
	if (p->out < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	p->pid = fork();
	if (p->pid < 0) {
		i = -errno;
		close(p->out);
		return i;
	}
	if (p->pid == 0) {
		/* the client goes with the test (SIGKILL of the test's group) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || dup2(p->out, 1) < 0 ||
		    dup2(p->out, 2) < 0 ||
		    (ready_w >= 0 && fcntl(ready_w, F_SETFD, 0)))
			_exit(127);
		for (i = 0; env && env[i]; i++)
			if (putenv((char *)env[i]))
				_exit(127);
		/* a user the administrator put in the device's group, or not */
		if (uid && pto_become_user(uid, in_group))
			_exit(127);
		execv(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	if (p->pidfd < 0) {
		i = -errno;
		proc_kill(p->pid);
		close(p->out);
		return i;
	}
	return 0;
}

/*
 * Start build/selftests/e2e/pto_e2e as user @uid (0: root; with @in_group
 * in the device's group) with @args (NULL-terminated); with @ready, a
 * ready pipe passed as -r FD.
 */
static int e2e_start_grp(struct proc *p, const char *name, uid_t uid,
			 bool in_group, bool ready, const char *const env[],
			 const char *const args[])
{
	char prog[2 * PATH_MAX], fdarg[16];
	char *argv[16];
	int pfd[2] = { -1, -1 }, n = 0, i, ret;

	snprintf(prog, sizeof(prog), "%s/pto_e2e", E->bin);
	argv[n++] = prog;
	if (ready) {
		if (pipe2(pfd, O_CLOEXEC))
			return -errno;
		snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
		argv[n++] = "-r";
		argv[n++] = fdarg;
	}
	for (i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	ret = proc_spawn(p, name, argv, env, pfd[1], uid, in_group);
	if (ready) {
		close(pfd[1]);
		if (ret)
			close(pfd[0]);
		else
			p->ready = pfd[0];
	}
	return ret;
}

static int e2e_start_as(struct proc *p, const char *name, uid_t uid,
			bool ready, const char *const env[],
			const char *const args[])
{
	return e2e_start_grp(p, name, uid, true, ready, env, args);
}

static int e2e_start(struct proc *p, const char *name, bool ready,
		     const char *const env[], const char *const args[])
{
	return e2e_start_as(p, name, 0, ready, env, args);
}

#define ARGS(...)	((const char *const[]){ __VA_ARGS__, NULL })

/*
 * Wait up to @ms for @p's ready byte: 0, -ETIMEDOUT, or -EPIPE if it
 * closed the pipe (exited) without it.
 */
static int proc_ready(struct proc *p, int ms)
{
	struct pollfd pfd = { .fd = p->ready, .events = POLLIN };
	ssize_t n;
	char c;
	int ret;

	if (p->ready < 0)
		return -EINVAL;
	do
		ret = poll(&pfd, 1, ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (!ret)
		return -ETIMEDOUT;
	do
		n = read(p->ready, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 1 && c == 'R' ? 0 : -EPIPE;
}

/* true while @p runs (its pidfd is not readable yet) */
static bool proc_running(struct proc *p)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

	return !p->reaped && poll(&pfd, 1, 0) == 0;
}

/*
 * Print @p's output as TAP comments (but the probe kernel's per-core
 * lines: the tests print what they make of them).
 */
static void proc_print(const struct proc *p)
{
	const char *s = p->text, *e;

	while (s && *s) {
		e = strchrnul(s, '\n');
		if (strncmp(s, "PROBE core=", 11))
			note("%s: %.*s", p->name, (int)(e - s), s);
		s = *e ? e + 1 : e;
	}
}

/*
 * Wait up to @ms for @p to exit (then SIGKILL it), reap it, read and print
 * its output. 0, -ETIMEDOUT (killed) or -errno.
 */
static int proc_wait(struct proc *p, int ms)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
	int ret, timedout = 0;
	struct stat st;
	ssize_t n;
	size_t got = 0;

	if (p->reaped)
		return 0;
	do
		ret = poll(&pfd, 1, ms);
	while (ret < 0 && errno == EINTR);
	if (ret <= 0) {
		timedout = 1;
		if (ret < 0)
			note("%s: poll: %s, killing it", p->name, strerror(errno));
		else
			note("%s: still running after %d ms, killing it",
			     p->name, ms);
		if (kill(p->pid, SIGKILL))
			return -errno;
	}
	do
		ret = waitpid(p->pid, &p->status, 0);
	while (ret < 0 && errno == EINTR);
	if (ret != p->pid)
		return ret < 0 ? -errno : -ECHILD;
	p->reaped = true;
	close(p->pidfd);
	p->pidfd = -1;
	if (p->ready >= 0) {
		close(p->ready);
		p->ready = -1;
	}
	if (fstat(p->out, &st))
		return -errno;
	p->text = calloc(1, (size_t)st.st_size + 1);
	if (!p->text)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		n = pread(p->out, p->text + got, (size_t)st.st_size - got,
			  (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p->out);
	p->out = -1;
	proc_print(p);
	return timedout ? -ETIMEDOUT : 0;
}

static bool exited_ok(const struct proc *p)
{
	return p->reaped && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

static void proc_free(struct proc *p)
{
	if (!p->reaped && p->pid > 0)
		proc_kill(p->pid);
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->ready >= 0)
		close(p->ready);
	if (p->out >= 0)
		close(p->out);
	free(p->text);
	memset(p, 0, sizeof(*p));
	p->pidfd = p->ready = p->out = -1;
}

/* The line of @text that begins with @prefix, or NULL. */
static const char *line_with(const char *text, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *s = text;

	while (s && *s) {
		if (!strncmp(s, prefix, len))
			return s;
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	return NULL;
}

/*
 * "CASE <name> [time]: PASS ..." or "CASE <name>: PASS ..." is in @text
 * (the examples' golden checks and pto_e2e's own scenario checks).
 */
static bool case_passed(const char *text, const char *name)
{
	char prefix[128];
	const char *s = text, *eol, *pass;
	size_t len;

	len = (size_t)snprintf(prefix, sizeof(prefix), "CASE %s", name);
	while ((s = line_with(s, prefix))) {
		eol = strchrnul(s, '\n');
		pass = strstr(s, ": PASS");
		if ((s[len] == ' ' || s[len] == ':') && pass && pass < eol)
			return true;
		s = eol;
	}
	return false;
}

static bool any_case_failed(const char *text)
{
	const char *s = text, *eol, *fail;

	while ((s = line_with(s, "CASE "))) {
		eol = strchrnul(s, '\n');
		fail = strstr(s, ": FAIL");
		if (fail && fail < eol)
			return true;
		s = eol;
	}
	return false;
}

static bool has_text(const char *text, const char *needle)
{
	return text && strstr(text, needle);
}

/*
 * Run pto_e2e @args as user @uid (0: root) to the end; the test fails
 * unless it exits 0, every CASE in @cases passed (and none failed) and
 * its output has every string of @texts (may be NULL).
 */
static void run_client_as(struct __test_metadata *_metadata, const char *name,
			  uid_t uid, const char *const env[],
			  const char *const args[], const char *const cases[],
			  const char *const texts[])
{
	struct proc p;
	int ret, i;

	ret = e2e_start_as(&p, name, uid, false, env, args);
	ASSERT_EQ(0, ret) TH_LOG("start pto_e2e %s: %s", args[0], strerror(-ret));
	ret = proc_wait(&p, CLIENT_MS);
	EXPECT_EQ(0, ret) TH_LOG("pto_e2e %s: %s", args[0], strerror(-ret));
	EXPECT_TRUE(exited_ok(&p)) TH_LOG("pto_e2e %s: wait status 0x%x",
					 args[0], p.status);
	EXPECT_FALSE(any_case_failed(p.text));
	/* braces: EXPECT_*() TH_LOG() is more than one statement */
	for (i = 0; cases && cases[i]; i++) {
		EXPECT_TRUE(case_passed(p.text, cases[i]))
			TH_LOG("no \"CASE %s: PASS\" from pto_e2e", cases[i]);
	}
	for (i = 0; texts && texts[i]; i++) {
		EXPECT_TRUE(has_text(p.text, texts[i]))
			TH_LOG("no \"%s\" from pto_e2e", texts[i]);
	}
	proc_free(&p);
}

static void run_client(struct __test_metadata *_metadata, const char *name,
		       const char *const env[], const char *const args[],
		       const char *const cases[], const char *const texts[])
{
	run_client_as(_metadata, name, 0, env, args, cases, texts);
}

/* Another client, @name, runs the vector example's Const case: ptod goes on. */
static void vector_passes(struct __test_metadata *_metadata, const char *name)
{
	run_client(_metadata, name, NULL, ARGS("vector", "Const"),
		   ARGS("vector/Const"), NULL);
}

/* Why a test that needs nobody's clients is skipped on the user device. */
#define NOBODY_ON_USER_DEVICE \
	"needs a second user's clients (nobody), and the user-mode device serves only ptod's user and root"

/*
 * pto_e2e @what as a local user (NOBODY): it must exit 0, CASE @what
 * passed. Its libpto client asks for a heap of 64 KiB: its kernels run
 * sandboxed, so the heap is charged to its GM quota (QUOTA_MIB), which a
 * second client of the same case (a raw hello) needs too.
 */
static void run_as_nobody(struct __test_metadata *_metadata, const char *what)
{
	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	run_client_as(_metadata, what, NOBODY, ARGS("PTO2_RING_HEAP=65536"),
		      ARGS(what), ARGS(what), NULL);
}

/* ---- the probe kernel's report (pto_e2e probe, probe-n) ---------------------------- */

struct probe_core {
	unsigned int core, block, n;
	int aic;
	long long last_start, last_end;
};

struct probe_report {
	int status;
	long long t0, t1, first, last;
	long tasks, recorded;
	unsigned long long blocks;
	unsigned int ncores;
	unsigned int nc;
	struct probe_core core[PTO_MAX_CORES];
};

static int probe_parse(const char *text, struct probe_report *r)
{
	const char *s;

	memset(r, 0, sizeof(*r));
	s = line_with(text, "PROBE run ");
	if (!s || sscanf(s, "PROBE run status=%d t0_ns=%lld t1_ns=%lld tasks=%ld recorded=%ld",
			 &r->status, &r->t0, &r->t1, &r->tasks,
			 &r->recorded) != 5)
		return -EINVAL;
	s = line_with(text, "PROBE span ");
	if (!s || sscanf(s, "PROBE span first_ns=%lld last_ns=%lld blocks=0x%llx cores=%u",
			 &r->first, &r->last, &r->blocks, &r->ncores) != 4)
		return -EINVAL;
	s = text;
	while ((s = line_with(s, "PROBE core=")) && r->nc < PTO_MAX_CORES) {
		struct probe_core *c = &r->core[r->nc];

		if (sscanf(s, "PROBE core=%u block=%u aic=%d n=%u last_start_ns=%lld last_end_ns=%lld",
			   &c->core, &c->block, &c->aic, &c->n,
			   &c->last_start, &c->last_end) != 6)
			return -EINVAL;
		r->nc++;
		s = strchrnul(s, '\n');
	}
	return r->nc == r->ncores ? 0 : -EINVAL;
}

/* "0-11,14" */
static const char *blocks_str(unsigned long long mask, char *buf, size_t len)
{
	size_t n = 0;
	int b, lo = -1;

	buf[0] = 0;
	for (b = 0; b <= 64; b++) {
		bool set = b < 64 && (mask >> b & 1);

		if (set && lo < 0)
			lo = b;
		if (!set && lo >= 0 && n < len) {
			n += (size_t)snprintf(buf + n, len - n,
					      b - 1 == lo ? "%s%d" : "%s%d-%d",
					      n ? "," : "", lo, b - 1);
			lo = -1;
		}
	}
	return buf;
}

/* ---- the HWS registers ------------------------------------------------------------- */

/* The same through ptod, which runs the user-mode device. */
static int hws_io_user(struct pto_hws_cfg *c, bool set)
{
	static struct pto_msg m;
	int fd, ret;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_HWS_CONFIG;
	if (set) {
		m.u.hws.flags = PTO_HWS_CONFIG_SET;
		m.u.hws.cfg = *c;
	}
	ret = ptod_request(&m, &fd);
	if (fd >= 0)
		close(fd);
	if (!ret)
		*c = m.u.hws.cfg;
	return ret;
}

/* Read (@set false) or, as root, set the HWS registers: 0 or -errno. */
static int hws_io(struct pto_hws_cfg *c, bool set)
{
	struct pto_hws_config h = { .size = sizeof(h) };
	int fd, ret = 0;

	if (E->user)
		return hws_io_user(c, set);
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (set) {
		h.flags = PTO_HWS_CONFIG_SET;
		h.cfg = *c;
	}
	if (ioctl(fd, PTO_IOC_HWS_CONFIG, &h))
		ret = -errno;
	else
		*c = h.cfg;
	close(fd);
	return ret;
}

/* Set @c, the first time remembering what to restore. */
static int hws_set(struct pto_hws_cfg *c)
{
	int ret;

	if (!E->hws_changed) {
		ret = hws_io(&E->hws_orig, false);
		if (ret)
			return ret;
		E->hws_changed = true;
	}
	return hws_io(c, true);
}

static void hws_restore(void)
{
	if (E->hws_changed && !hws_io(&E->hws_orig, true))
		E->hws_changed = false;
}

static void nofile_restore(void)
{
	if (E->nofile_lowered &&
	    !prlimit(E->ptod, RLIMIT_NOFILE, &E->nofile_orig, NULL))
		E->nofile_lowered = false;
}

/* Context @ctx may use the @n cores @core[] only, in every usage class. */
static void hws_only_cores(struct pto_hws_cfg *c, unsigned int ctx,
			   const unsigned int *core, unsigned int n)
{
	unsigned int k, i;

	for (k = 0; k < PTO_HWS_USAGE_CLASSES; k++) {
		memset(c->usage_mask[ctx][k], 0, sizeof(c->usage_mask[ctx][k]));
		for (i = 0; i < n; i++)
			c->usage_mask[ctx][k][core[i] / 64] |=
				1ULL << (core[i] % 64);
	}
}

/* Context @ctx may use device block @blk's cores only (AIC b, AIV 2b, 2b+1). */
static void hws_only_block(struct pto_hws_cfg *c, unsigned int ctx,
			   unsigned int blk)
{
	unsigned int core[3] = { blk, E->nr_aic + 2 * blk,
				 E->nr_aic + 2 * blk + 1 };

	hws_only_cores(c, ctx, core, 3);
}

/* ---- the register file ------------------------------------------------------------------ */

/*
 * The register file, read-only: pto.ko's mapped with the EXECUTOR role
 * (no core attached), or the memfd of the user-mode device that ptod
 * hands out with its status. @info gets the device's core counts and the
 * mapping's size. Returns the descriptor to close after munmap, or
 * -errno.
 */
static int regs_map(struct pto_info *info, void **regs)
{
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_EXECUTOR };
	static struct pto_msg m;
	int fd, ret;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (E->user) {
		memset(&m, 0, sizeof(m));
		m.type = PTO_MSG_DEV_STATUS;
		ret = ptod_request(&m, &fd);
		if (!ret && fd < 0)
			ret = -EBADF;
		info->regs_size = PTO_REGS_SIZE;
	} else {
		fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		ret = fd < 0 || ioctl(fd, PTO_IOC_GET_INFO, info) ||
		      ioctl(fd, PTO_IOC_SET_ROLE, &role) ? -errno : 0;
	}
	*regs = ret ? MAP_FAILED :
		mmap(NULL, info->regs_size, PROT_READ, MAP_SHARED, fd,
		     (off_t)info->regs_mmap_offset);
	if (!ret && *regs == MAP_FAILED)
		ret = -errno;
	if (ret) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	info->nr_aic = pto_regs_info(*regs)->nr_aic;
	info->nr_aiv = pto_regs_info(*regs)->nr_aiv;
	info->nr_cores = pto_regs_info(*regs)->nr_cores;
	return fd;
}

/* ---- the tests ----------------------------------------------------------------------------- */

FIXTURE(e2e) {
};

FIXTURE_SETUP(e2e)
{
	fail_mark_start(_metadata->name);
	if (!E->user && access(DEV_PATH, F_OK))
		SKIP(return, "%s missing (pto.ko not loaded?)", DEV_PATH);
	ASSERT_EQ(0, E->setup_err[0]) TH_LOG("%s", E->setup_err);
}

FIXTURE_TEARDOWN(e2e)
{
	hws_restore();
	nofile_restore();
	if (E->ptod_stopped && !kill(E->ptod, SIGCONT))
		E->ptod_stopped = false;
}

/*
 * ptod said READY=1 on our notify socket, and pto-aicore attached every
 * core (counters; see wait_cores_online() for the one bounded wait).
 */
TEST_F_TIMEOUT(e2e, ptod_ready, 30)
{
	struct stat st;

	note("ptod (pid %d): READY=1 after %lld ms, %u cores online after %lld ms",
	     E->ptod, (long long)E->ready_ms, E->nr_cores,
	     (long long)E->online_ms);
	ASSERT_EQ(0, stat(E->sock, &st));
	ASSERT_TRUE(S_ISSOCK(st.st_mode));
	ASSERT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
	ASSERT_EQ(0, cnt(_metadata, "cores_dead"));
	ASSERT_EQ(1, cnt(_metadata, "aicpu"));
	ASSERT_LT(0, executor_pid());
}

/*
 * pto-aicore's idle threads yield in auto mode unless
 * PTO_EXEC_SPIN_YIELD (which ptod and pto-aicore inherit from us) says
 * otherwise: its line "cores online ...; idle threads yield: MODE" in
 * ptod's log, the same in every pto-aicore ptod has started.
 */
TEST_F_TIMEOUT(e2e, aicore_yield_mode, 30)
{
	static const char key[] = "idle threads yield: ";
	const char *env = getenv("PTO_EXEC_SPIN_YIELD");
	const char *want = !env ? "auto" : !strcmp(env, "0") ? "never" :
			   !strcmp(env, "1") ? "always" : env;
	int64_t until = mono_ms() + 20000;
	char line[1024], *p;
	int seen = 0, other = 0;
	FILE *f;

	/*
	 * pto-aicore logs its mode once it has the device; ptod may be
	 * ready before that line is in the log on a loaded machine.
	 */
	for (;;) {
		f = fopen(E->log, "re");
		ASSERT_NE(NULL, f) TH_LOG("%s: %s", E->log, strerror(errno));
		while (fgets(line, sizeof(line), f)) {
			p = strstr(line, key);
			if (!p || !strstr(line, "pto-aicore["))
				continue;
			p += sizeof(key) - 1;
			p[strcspn(p, "\n")] = 0;
			if (strcmp(p, want)) {
				note("pto-aicore: idle threads yield: %s (want %s)",
				     p, want);
				other++;
			}
			seen++;
		}
		fclose(f);
		if (seen || mono_ms() >= until)
			break;
		usleep(50000);
	}
	note("%d pto-aicore start(s) in ptod's log, %d not in mode %s", seen,
	     other, want);
	ASSERT_LT(0, seen);
	ASSERT_EQ(0, other);
}

TEST_F_TIMEOUT(e2e, vector_golden, 150)
{
	run_client(_metadata, "vector", NULL, ARGS("vector"),
		   ARGS("vector/Const", "vector/Random"), NULL);
}

TEST_F_TIMEOUT(e2e, bgemm_golden, 150)
{
	run_client(_metadata, "bgemm", NULL, ARGS("bgemm"),
		   ARGS("bgemm/Default"), NULL);
}

TEST_F_TIMEOUT(e2e, pa_golden, 150)
{
	run_client(_metadata, "pa", NULL, ARGS("pa"),
		   ARGS("paged_attention/Case1", "paged_attention/Case2",
			"paged_attention/CaseBatch256",
			"paged_attention/CaseBatch256Ctx33",
			"paged_attention/CaseVarLen"), NULL);
}

/*
 * After a run through ptod and pto-aicore, every core that ran a task
 * (the probe kernel's records say which) has ts_dispatch <= ts_start <=
 * ts_end on the device's system counter, all within the run, and the
 * kernel's own clock readings of its last task on the core lie within
 * [ts_start, ts_end]. The registers are read through a read-only mapping
 * of the register file (the EXECUTOR role may map it; no core attached).
 */
TEST_F_TIMEOUT(e2e, core_timestamps_in_order, 150)
{
	static struct probe_report rep;
	unsigned int i, naic = 0, naiv = 0, bad = 0;
	struct pto_info info;
	uint64_t c0, c1;
	int64_t epoch;
	struct proc p;
	void *regs;
	int fd, ret;

	fd = regs_map(&info, &regs);
	ASSERT_LE(0, fd) TH_LOG("the register file: %s", strerror(-fd));
	epoch = pto_regs_info(regs)->sys_cnt_epoch_ns;

	/* 3 * nr_cores independent tasks, one AIC for two AIV */
	{
		char n[16];

		snprintf(n, sizeof(n), "%u", 3 * info.nr_cores);
		ret = e2e_start(&p, "probe", false, NULL, ARGS("probe-n", n));
	}
	ASSERT_EQ(0, ret) TH_LOG("start pto_e2e probe-n: %s", strerror(-ret));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	ASSERT_TRUE(exited_ok(&p));
	ASSERT_TRUE(case_passed(p.text, "probe"));
	ASSERT_EQ(0, probe_parse(p.text, &rep));
	proc_free(&p);

	c0 = pto_sys_cnt_at(epoch, rep.t0);
	c1 = pto_sys_cnt_at(epoch, rep.t1);
	note("run on the system counter: %llu..%llu, %u cores ran tasks",
	     (unsigned long long)c0, (unsigned long long)c1, rep.nc);
	for (i = 0; i < rep.nc; i++) {
		const struct probe_core *pc = &rep.core[i];
		struct pto_core_regs *r;
		uint64_t d, s, e, ks, ke;
		const char *why = NULL;

		ASSERT_LT(pc->core, info.nr_cores);
		r = pto_regs_core(regs, pc->core);
		d = reg64_load_acquire(&r->ts_dispatch);
		s = reg64_load_acquire(&r->ts_start);
		e = reg64_load_acquire(&r->ts_end);
		ks = pto_sys_cnt_at(epoch, pc->last_start);
		ke = pto_sys_cnt_at(epoch, pc->last_end);
		if (d < c0)
			why = "ts_dispatch before the run";
		else if (d > s)
			why = "ts_dispatch > ts_start";
		else if (s > e)
			why = "ts_start > ts_end";
		else if (e > c1)
			why = "ts_end after the run";
		else if (ks < s || ke > e)
			why = "the kernel ran outside [ts_start, ts_end]";
		if (why) {
			note("core %u (%s, block %u): %s: ts_dispatch %llu ts_start %llu ts_end %llu, run %llu..%llu, kernel %llu..%llu",
			     pc->core, pc->aic ? "AIC" : "AIV", pc->block, why,
			     (unsigned long long)d, (unsigned long long)s,
			     (unsigned long long)e, (unsigned long long)c0,
			     (unsigned long long)c1, (unsigned long long)ks,
			     (unsigned long long)ke);
			bad++;
		}
		naic += pc->aic != 0;
		naiv += pc->aic == 0;
	}
	note("%u AIC + %u AIV cores checked, %u out of order", naic, naiv, bad);
	EXPECT_LT(0, naic);
	EXPECT_LT(0, naiv);
	EXPECT_EQ(0, bad);
	munmap(regs, info.regs_size);
	close(fd);
}

TEST_F_TIMEOUT(e2e, two_concurrent_clients, 150)
{
	struct proc c1, c2;
	int r1, r2;

	ASSERT_EQ(0, e2e_start(&c1, "c1", false, NULL,
			       ARGS("pa", "Case2", "CaseVarLen")));
	r2 = e2e_start(&c2, "c2", false, NULL, ARGS("bgemm"));
	if (r2)
		proc_free(&c1);
	ASSERT_EQ(0, r2);
	r1 = proc_wait(&c1, CLIENT_MS);
	r2 = proc_wait(&c2, CLIENT_MS);
	EXPECT_EQ(0, r1);
	EXPECT_EQ(0, r2);
	EXPECT_TRUE(exited_ok(&c1));
	EXPECT_TRUE(exited_ok(&c2));
	EXPECT_TRUE(case_passed(c1.text, "paged_attention/Case2"));
	EXPECT_TRUE(case_passed(c1.text, "paged_attention/CaseVarLen"));
	EXPECT_TRUE(case_passed(c2.text, "bgemm/Default"));
	proc_free(&c1);
	proc_free(&c2);
}

/*
 * Runs of two clients share the device's cores task by task: there are no
 * partitions, and an idle third client (connected throughout) holds no
 * share. o1's run executes (its first task ran) before o2 starts, and goes
 * on until o2 is done (then SIGTERM ends its stream). The probe kernel's
 * records give each run's blocks and the time span of its tasks: the spans
 * intersect (both runs executed at once), o1 used more than half of the
 * blocks (the idle client reserved nothing) and some block ran tasks of
 * both clients.
 */
TEST_F_TIMEOUT(e2e, runs_share_cores, 120)
{
	static struct probe_report r1, r2;
	struct proc o0, o1, o2;
	char b1[128], b2[128];
	long long from, to;
	bool idle_throughout;
	int ret;

	ASSERT_EQ(0, e2e_start(&o0, "o0", true, NULL, ARGS("idle", "60")));
	ret = proc_ready(&o0, READY_MS);
	if (!ret)
		ret = e2e_start(&o1, "o1", true, NULL, ARGS("probe", "60"));
	if (ret)
		proc_free(&o0);
	ASSERT_EQ(0, ret) TH_LOG("idle client: %s", strerror(-ret));
	ret = proc_ready(&o1, READY_MS);
	if (!ret)
		ret = e2e_start(&o2, "o2", false, NULL, ARGS("probe", "1"));
	if (ret) {
		proc_free(&o1);
		proc_free(&o0);
	}
	ASSERT_EQ(0, ret) TH_LOG("o1: %s", strerror(-ret));
	EXPECT_EQ(0, proc_wait(&o2, CLIENT_MS));
	EXPECT_TRUE(proc_running(&o1)) TH_LOG("o1 ended before o2");
	EXPECT_EQ(0, kill(o1.pid, SIGTERM));
	EXPECT_EQ(0, proc_wait(&o1, CLIENT_MS));
	idle_throughout = proc_running(&o0);
	EXPECT_EQ(0, kill(o0.pid, SIGTERM));
	EXPECT_EQ(0, proc_wait(&o0, CLIENT_MS));
	EXPECT_TRUE(idle_throughout) TH_LOG("the idle client did not stay connected");
	ASSERT_TRUE(exited_ok(&o1));
	ASSERT_TRUE(exited_ok(&o2));
	ASSERT_TRUE(case_passed(o1.text, "probe"));
	ASSERT_TRUE(case_passed(o2.text, "probe"));
	ASSERT_EQ(0, probe_parse(o1.text, &r1));
	ASSERT_EQ(0, probe_parse(o2.text, &r2));
	proc_free(&o0);
	proc_free(&o1);
	proc_free(&o2);

	from = r1.first > r2.first ? r1.first : r2.first;
	to = r1.last < r2.last ? r1.last : r2.last;
	note("o1: blocks %s, %ld tasks in %.1f ms; o2: blocks %s, %ld tasks in %.1f ms; both running for %.1f ms",
	     blocks_str(r1.blocks, b1, sizeof(b1)), r1.recorded,
	     (r1.last - r1.first) / 1e6, blocks_str(r2.blocks, b2, sizeof(b2)),
	     r2.recorded, (r2.last - r2.first) / 1e6,
	     to > from ? (to - from) / 1e6 : 0.0);
	EXPECT_NE(0, r1.blocks);
	EXPECT_NE(0, r2.blocks);
	EXPECT_NE(0, r1.blocks & r2.blocks) TH_LOG("no block ran tasks of both runs");
	EXPECT_LT(E->nr_aic / 2, (unsigned int)__builtin_popcountll(r1.blocks))
		TH_LOG("o1 used half of the blocks or fewer");
	EXPECT_LT(from, to) TH_LOG("the runs did not execute at the same time");
}

/*
 * Contexts and usage masks place tasks: ptod runs root's clients in HWS
 * context 0 and NOBODY's in NOBODY_CTX (ptod -x). With context 0 limited
 * to device block 0 and NOBODY_CTX to block 1, two concurrent probe runs,
 * one per user, run on those blocks only; with the masks swapped (a
 * register change between runs), the next runs swap blocks.
 */
TEST_F_TIMEOUT(e2e, hws_masks_place_contexts, 150)
{
	static struct probe_report rr, rn;
	struct pto_hws_cfg c;
	struct proc pr, pn;
	unsigned int round;
	int ret;

	if (E->nr_aic < 2 || E->nr_aiv < 4)
		SKIP(return, "needs 2 device blocks");
	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	ASSERT_EQ(0, hws_io(&c, false));
	for (round = 0; round < 2; round++) {
		hws_only_block(&c, 0, round);
		hws_only_block(&c, NOBODY_CTX, !round);
		ASSERT_EQ(0, hws_set(&c)) TH_LOG("HWS_CONFIG set");
		ASSERT_EQ(0, e2e_start(&pr, "root", false, NULL,
				       ARGS("probe-n", "30")));
		ret = e2e_start_as(&pn, "nobody", NOBODY, false, NULL,
				   ARGS("probe-n", "30"));
		if (ret)
			proc_free(&pr);
		ASSERT_EQ(0, ret);
		EXPECT_EQ(0, proc_wait(&pr, CLIENT_MS));
		EXPECT_EQ(0, proc_wait(&pn, CLIENT_MS));
		ASSERT_TRUE(exited_ok(&pr)) TH_LOG("%s", pr.text);
		ASSERT_TRUE(exited_ok(&pn)) TH_LOG("%s", pn.text);
		ASSERT_EQ(0, probe_parse(pr.text, &rr));
		ASSERT_EQ(0, probe_parse(pn.text, &rn));
		proc_free(&pr);
		proc_free(&pn);
		note("round %u: root (context 0) on blocks 0x%llx, nobody (context %d) on blocks 0x%llx",
		     round, rr.blocks, NOBODY_CTX, rn.blocks);
		EXPECT_EQ(1ULL << round, rr.blocks);
		EXPECT_EQ(1ULL << !round, rn.blocks);
	}
}

/* Position of task @name in @order ("R A0 ..."), or -1. */
static int prio_pos(const char *order, const char *name)
{
	char line[256], *tok, *save;
	int pos = 0;

	snprintf(line, sizeof(line), "%s", order);
	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save), pos++)
		if (!strcmp(tok, name))
			return pos;
	return -1;
}

/*
 * Run "pto_e2e prio @mode" and put the order its tasks started in
 * ("R A0 ...") into @order.
 */
static void prio_order(struct __test_metadata *_metadata, const char *mode,
		       char *order, size_t len)
{
	const char *s;
	struct proc p;

	order[0] = 0;
	ASSERT_EQ(0, e2e_start(&p, "prio", false, NULL, ARGS("prio", mode)));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "prio")) TH_LOG("%s", p.text);
	s = line_with(p.text, "PRIO order: ");
	if (s) {
		s += strlen("PRIO order: ");
		snprintf(order, len, "%.*s", (int)strcspn(s, "\n"), s);
	}
	proc_free(&p);
	note("prio %s: %s", mode, order);
}

/* How many of the four leaves started before the chain's head C0. */
static int leaves_before_c0(const char *order)
{
	const char *leaf[] = { "A0", "A1", "A2", "A3" };
	int c0 = prio_pos(order, "C0"), n = 0, i;

	for (i = 0; i < 4; i++)
		n += prio_pos(order, leaf[i]) < c0;
	return n;
}

/*
 * Priorities order tasks: on one core (context 0 limited to AIC 0), a
 * static graph under the HWS runs its critical chain's head C0 before
 * four leaves submitted earlier (upward ranks); streamed, the same graph
 * runs the leaves first (submission order); so does the static graph
 * whose kernel cost is raised for the leaves and set back for the chain
 * (a cost counts for the tasks submitted after it: the leaves' ranks are
 * 10 ms, C0's 0.4 ms). Under the PTO2 policy
 * (HWS_POLICY register) ranks do not count: the static and the streamed
 * graph run in the same order, the order tasks became ready.
 */
TEST_F_TIMEOUT(e2e, hws_priorities_order_tasks, 150)
{
	static const unsigned int aic0 = 0;
	char st[128], sm[128], rc[128], pst[128], psm[128];
	struct pto_hws_cfg c;

	ASSERT_EQ(0, hws_io(&c, false));
	hws_only_cores(&c, 0, &aic0, 1);
	c.policy = PTO_HWS_POLICY_HWS;
	ASSERT_EQ(0, hws_set(&c));
	prio_order(_metadata, "static", st, sizeof(st));
	prio_order(_metadata, "stream", sm, sizeof(sm));
	prio_order(_metadata, "recost", rc, sizeof(rc));
	c.policy = PTO_HWS_POLICY_PTO2;
	ASSERT_EQ(0, hws_set(&c));
	prio_order(_metadata, "static", pst, sizeof(pst));
	prio_order(_metadata, "stream", psm, sizeof(psm));
	EXPECT_EQ(0, leaves_before_c0(st)) TH_LOG("HWS, static: %s", st);
	EXPECT_EQ(4, leaves_before_c0(sm)) TH_LOG("HWS, streamed: %s", sm);
	EXPECT_EQ(4, leaves_before_c0(rc)) TH_LOG("HWS, recost: %s", rc);
	EXPECT_STREQ(psm, pst);
	EXPECT_EQ(0, prio_pos(pst, "R"));
}

/*
 * Serial chains, each hop a dispatch to a core whose thread may have just
 * parked: a kick the device or pto-aicore loses leaves the next hop
 * waiting for the park bound (PARK_MS here). pto.ko once lost one in a
 * few thousand hops this way (it cleared the parked flags of threads that
 * would sleep again without looking). 40 chains of 200 hops.
 */
TEST_F_TIMEOUT(e2e, chain_no_lost_kick, 150)
{
	const char *s;
	struct proc p;

	ASSERT_EQ(0, e2e_start(&p, "chain", false, NULL,
			       ARGS("chain", "200", "40", STR(CHAIN_LIMIT_MS))));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	s = line_with(p.text, "CHAIN ");
	if (s)
		note("%.*s", (int)strcspn(s, "\n"), s);
	EXPECT_TRUE(exited_ok(&p)) TH_LOG("%s", p.text);
	EXPECT_TRUE(case_passed(p.text, "chain")) TH_LOG("%s", p.text);
	proc_free(&p);
}

/* A STATS line of pto_e2e: pto_graph_stats() and what LIBPTO_1.2 gave. */
struct graph_stats {
	unsigned long long tasks, blocks, wall, busy, wait, wmax, early;
	char v12[32];
};

/* The STATS line of @text into @g. */
static void stats_parse(struct __test_metadata *_metadata, const char *text,
			struct graph_stats *g)
{
	const char *s = line_with(text, "STATS ");

	ASSERT_NE(NULL, s) TH_LOG("no STATS line: %s", text);
	ASSERT_EQ(8, sscanf(s, "STATS tasks=%llu blocks=%llu wall_ns=%llu busy_ns=%llu wait_ns=%llu wait_max_ns=%llu early=%llu v1.2=%31s",
			    &g->tasks, &g->blocks, &g->wall, &g->busy,
			    &g->wait, &g->wmax, &g->early, g->v12))
		TH_LOG("%s", s);
}

/*
 * A run's statistics reach the client (pto_graph_stats()): prio's graph
 * of 9 single-block tasks whose root sleeps 200 ms: 9 tasks, 9 core
 * executions, at least 200 ms of kernel time, a wall time no shorter than
 * the root, a longest wait no longer than the whole run, no early launch
 * (the registers' defaults have none), and the same six figures from
 * pto_graph_stats@LIBPTO_1.2, the symbol programs built before @early
 * call, which writes nothing past them.
 */
TEST_F_TIMEOUT(e2e, graph_stats_returned, 150)
{
	struct graph_stats g;
	struct proc p;

	ASSERT_EQ(0, e2e_start(&p, "stats", false, NULL, ARGS("prio", "stream")));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "prio")) TH_LOG("%s", p.text);
	stats_parse(_metadata, p.text, &g);
	note("stats: %llu tasks, %llu blocks, wall %.1f ms, busy %.1f ms, wait %.3f ms (max %.3f), %llu early; LIBPTO_1.2: %s",
	     g.tasks, g.blocks, g.wall / 1e6, g.busy / 1e6, g.wait / 1e6,
	     g.wmax / 1e6, g.early, g.v12);
	EXPECT_EQ(9, g.tasks);
	EXPECT_EQ(9, g.blocks);
	EXPECT_LE(200000000ULL, g.busy);
	EXPECT_LE(200000000ULL, g.wall);
	EXPECT_LE(g.wmax, g.wall);
	EXPECT_LE(g.wmax, g.wait);
	EXPECT_EQ(0, g.early);
	EXPECT_STREQ("same", g.v12);
	proc_free(&p);
}

#define EARLY_TASKS	6
#define EARLY_MS	100

static unsigned long long ptoctl_graph_early(struct __test_metadata *_metadata,
					     pid_t pid);

/*
 * pto_e2e pre REPORT EARLY_MS EARLY_TASKS as root: its statistics, which
 * ptoctl -j graphs shows too.
 */
static void early_run(struct __test_metadata *_metadata, bool report,
		      struct graph_stats *g)
{
	struct proc p;

	ASSERT_EQ(0, e2e_start(&p, "early", false, NULL,
			       ARGS("pre", report ? "1" : "0", STR(EARLY_MS),
				    STR(EARLY_TASKS))));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "pre")) TH_LOG("%s", p.text);
	stats_parse(_metadata, p.text, g);
	EXPECT_EQ(g->early, ptoctl_graph_early(_metadata, p.pid));
	proc_free(&p);
	note("%s: %llu tasks, %llu blocks, %llu launched early, wall %.1f ms",
	     report ? "kernels that report pre-complete" :
		      "kernels that do not report",
	     g->tasks, g->blocks, g->early, g->wall / 1e6);
}

/*
 * Early launch in SIP report mode, end to end: with root's context
 * limited to AIV 0, the HWS policy and early launch on in report mode
 * (the HWS registers), EARLY_TASKS independent tasks whose kernels report
 * pre-complete at their start and then run EARLY_MS more are launched
 * early onto that busy core (at least one, at most all but the first),
 * and each runs once; the same kernels not reporting are never launched
 * early. The count is the run's @early statistic; ptoctl -j graphs shows
 * the same count for the graph.
 */
TEST_F_TIMEOUT(e2e, hws_early_launch_on_report, 150)
{
	unsigned int aiv0 = E->nr_aic;
	struct graph_stats g;
	struct pto_hws_cfg c;

	if (E->nr_aiv < 1)
		SKIP(return, "needs an AIV");
	ASSERT_EQ(0, hws_io(&c, false));
	hws_only_cores(&c, 0, &aiv0, 1);
	c.policy = PTO_HWS_POLICY_HWS;
	c.early_launch_en = 1;
	c.early_launch_mode = PTO_HWS_EL_SIP_REPORT;
	ASSERT_EQ(0, hws_set(&c));
	early_run(_metadata, true, &g);
	EXPECT_EQ(EARLY_TASKS, g.tasks);
	EXPECT_EQ(EARLY_TASKS, g.blocks);
	EXPECT_LE(1, g.early);
	EXPECT_GE(EARLY_TASKS - 1, g.early);
	early_run(_metadata, false, &g);
	EXPECT_EQ(EARLY_TASKS, g.tasks);
	EXPECT_EQ(EARLY_TASKS, g.blocks);
	EXPECT_EQ(0, g.early);
}

/*
 * s1 streams; once its run executes (its first task ran), s2 (vector
 * Const, golden check) connects and submits its graph, which waits behind
 * s1's; s1 is killed with SIGKILL and s2 must pass.
 */
TEST_F_TIMEOUT(e2e, killed_client_other_passes, 150)
{
	struct proc s1, s2;
	bool s2_waiting;
	int ret;

	ASSERT_EQ(0, e2e_start(&s1, "killed", true, NULL, ARGS("stream", "60")));
	ret = proc_ready(&s1, READY_MS);
	if (!ret)
		ret = e2e_start(&s2, "other", true, NULL, ARGS("vector", "Const"));
	if (ret)
		proc_free(&s1);
	ASSERT_EQ(0, ret) TH_LOG("s1: %s", strerror(-ret));
	/* s2 is ready once its graph is in its stream */
	ret = proc_ready(&s2, READY_MS);
	if (ret) {
		proc_free(&s1);
		proc_free(&s2);
	}
	ASSERT_EQ(0, ret) TH_LOG("s2: %s", strerror(-ret));
	E->gm_during = cnt(_metadata, "gm_bytes_used");
	s2_waiting = proc_running(&s2);
	ASSERT_EQ(0, kill(s1.pid, SIGKILL));
	ASSERT_EQ(0, proc_wait(&s1, CLIENT_MS));
	EXPECT_TRUE(WIFSIGNALED(s1.status) && WTERMSIG(s1.status) == SIGKILL);
	E->killed_ran = true;
	note("s2 was %s when s1 was killed", s2_waiting ? "still waiting" : "done");
	EXPECT_EQ(0, proc_wait(&s2, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&s2));
	EXPECT_TRUE(case_passed(s2.text, "vector/Const"));
	proc_free(&s1);
	proc_free(&s2);
}

/*
 * The killed client's runtime drained and its GM freed: gm_bytes_used and
 * gm_buffers go back to their idle values. ptod destroys a client's
 * runtime (its GM) on its own main thread after the socket closed, and the
 * client's buffers go when ptod closes its copy of the client's file;
 * nothing outside ptod can wait for that (the counters file has no poll
 * notification), so this is a bounded wait. Back to idle GM implies that
 * ptod let the client go (the old test also grepped ptod's log for
 * "client ... gone").
 */
TEST_F_TIMEOUT(e2e, killed_client_gm_freed, 30)
{
	uint64_t used = 0, bufs = 0;

	if (!E->killed_ran)
		SKIP(return, "needs killed_client_other_passes");
	wait_gm_idle(10000, &used, &bufs);
	note("gm_bytes_used: idle %llu, during %llu, after %llu; gm_buffers: idle %llu, after %llu",
	     (unsigned long long)E->gm_idle, (unsigned long long)E->gm_during,
	     (unsigned long long)used, (unsigned long long)E->bufs_idle,
	     (unsigned long long)bufs);
	EXPECT_NE(E->gm_idle, E->gm_during);
	EXPECT_EQ(E->gm_idle, used);
	EXPECT_EQ(E->bufs_idle, bufs);
}

/*
 * A task that meets the end of the submission stream's ring with the
 * smallest gap the records' lengths allow before it: libpto pads the end,
 * ptod reads on; two such graphs pass (pto_e2e streampad).
 */
TEST_F_TIMEOUT(e2e, stream_pad_smallest_gap, 150)
{
	run_client(_metadata, "streampad", NULL, ARGS("streampad"),
		   ARGS("streampad"), NULL);
}

/* Descriptors process @pid has open, or -errno. */
static int count_fds(pid_t pid)
{
	struct dirent *de;
	char path[64];
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* reloaded_kernels_stay_bounded: uploads, and the executor's fd limit */
#define RELOAD_KERNELS	2000
#define RELOAD_NOFILE	1024

/*
 * A client that keeps loading new kernels, as a JIT does: RELOAD_KERNELS
 * uploads, each a new blob in a buffer of its own, each run once.
 * pto-aicore, its descriptors limited to RELOAD_NOFILE (the usual soft
 * limit), keeps at most PTO_KCACHE_MAX of them loaded (a memfd each):
 * every run passes and its descriptors grow by no more than that. On the
 * user-mode device only: under TCG the runs take minutes, and the cache
 * is the executor's code on either device.
 */
TEST_F_TIMEOUT(e2e, reloaded_kernels_stay_bounded, 300)
{
	struct rlimit old, lim;
	int before, after;
	pid_t exec;

	if (!E->user)
		SKIP(return, "runs on the user-mode device only (its cost under TCG)");
	exec = executor_pid_settled();
	ASSERT_LT(0, exec);
	ASSERT_EQ(0, prlimit(exec, RLIMIT_NOFILE, NULL, &old));
	lim.rlim_max = old.rlim_max;
	lim.rlim_cur = old.rlim_max < RELOAD_NOFILE ? old.rlim_max : RELOAD_NOFILE;
	ASSERT_EQ(0, prlimit(exec, RLIMIT_NOFILE, &lim, NULL));
	before = count_fds(exec);
	run_client(_metadata, "reload", NULL,
		   ARGS("reload", STR(RELOAD_KERNELS)),
		   ARGS("reload/" STR(RELOAD_KERNELS)), NULL);
	after = count_fds(exec);
	note("pto-aicore (pid %d): %d descriptors before, %d after", exec,
	     before, after);
	EXPECT_LT(0, before);
	EXPECT_LE(after, before + PTO_KCACHE_MAX);
	EXPECT_EQ(0, prlimit(exec, RLIMIT_NOFILE, &old, NULL));
}

/*
 * A client that writes its own stream (pto_e2e reclen, no libpto) puts in
 * a graph a record whose length is not PTO_REC_LEN() of anything: 24 and
 * 4088 (multiples of 8 but not of PTO_REC_ALIGN, 16; GRAPH_BEGIN and the
 * cluster records were once 24 bytes), 8 and 0 (less than a header; a
 * record of 0 bytes would hold the tail where it is). ptod refuses each:
 * the graph fails with -EPROTO and a message that names the record's
 * position (after pto_e2e's GRAPH_BEGIN) and its length. ptod goes on:
 * the same process's next client, then another client's vector run, pass.
 */
TEST_F_TIMEOUT(e2e, stream_record_length_refused, 150)
{
	static const char *const len[] = { "24", "4088", "8", "0" };
	char want[ARRAY_SIZE(len)][160], why[48];
	const char *texts[ARRAY_SIZE(len) + 1] = { NULL };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(len); i++) {
		if (atoi(len[i]) < (int)sizeof(struct pto_rec))
			snprintf(why, sizeof(why), "less than its header's %zu",
				 sizeof(struct pto_rec));
		else
			snprintf(why, sizeof(why), "not a multiple of %u",
				 PTO_REC_ALIGN);
		snprintf(want[i], sizeof(want[i]),
			 "reclen %s: status=%d corrupt submission stream: the record at %zu is %s bytes long, %s",
			 len[i], -EPROTO, sizeof(struct pto_rec_graph), len[i],
			 why);
		texts[i] = want[i];
	}
	run_client(_metadata, "reclen", NULL,
		   ARGS("reclen", len[0], len[1], len[2], len[3]),
		   ARGS("reclen/24", "reclen/4088", "reclen/8", "reclen/0"),
		   texts);
	vector_passes(_metadata, "vector");
}

/*
 * A client that writes its own stream (pto_e2e rawhead) breaks the ring's
 * rules in a graph, after ptod has consumed its GRAPH_BEGIN: a head more
 * than the ring (8192 bytes) past the tail; a tail started 8 bytes off
 * the records' alignment, so that a record lies where its header does not
 * fit before the end of the ring; a 48-byte record 32 bytes before the
 * end; a 64-byte record of which 32 bytes are published. ptod fails each
 * graph with -EPROTO and a message that says which rule, at which
 * position; the same process's next client passes, then another client.
 * The last record before any graph: no graph's DONE can say why, so ptod
 * says it in a CLOSING message before it closes the connection.
 */
TEST_F_TIMEOUT(e2e, stream_head_and_ring_end_refused, 150)
{
	static const char *const want[] = {
		"rawhead ahead: status=-71 corrupt submission stream: the head (8240) is more than the ring's 8192 bytes past the tail (32)",
		"rawhead edge: status=-71 corrupt submission stream: the record at 8184 has 8 bytes before the end of the ring, less than a header's 16",
		"rawhead end: status=-71 corrupt submission stream: the record at 8160 is 48 bytes long, more than the 32 bytes to the end of the ring",
		"rawhead published: status=-71 corrupt submission stream: the record at 32 is 64 bytes long, more than the 32 bytes the client published",
		"rawhead outside: status=-71 corrupt submission stream: the record at 0 is 64 bytes long, more than the 32 bytes the client published",
		NULL
	};

	run_client(_metadata, "rawhead", NULL,
		   ARGS("rawhead", "ahead", "edge", "end", "published",
			"outside"),
		   ARGS("rawhead/ahead", "rawhead/edge", "rawhead/end",
			"rawhead/published", "rawhead/outside"),
		   want);
	vector_passes(_metadata, "vector");
}

/*
 * One user but root holds at most half the device's clusters (ptod -L,
 * default): a nobody client whose graph allocates 13 of the 24 gets
 * -EDQUOT at the 13th, with a message saying why, at once (only its own
 * graph could free one); root's same graph gets all 13.
 */
TEST_F_TIMEOUT(e2e, clusters_per_user_limited, 150)
{
	struct proc p;

	if (E->user)
		SKIP(return, "needs a user other than root: pto.ko");
	if (E->nr_cores != 72)
		SKIP(return, "written for 24 clusters (%u cores)", E->nr_cores);
	ASSERT_EQ(0, e2e_start_as(&p, "cluster-half", NOBODY, false, NULL,
				  ARGS("rawcluster", "half")));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "rawcluster/half"))
		TH_LOG("%s", p.text ? p.text : "");
	EXPECT_TRUE(has_text(p.text, "the most its user may hold"));
	proc_free(&p);
	run_client(_metadata, "rawcluster", NULL, ARGS("rawcluster", "half"),
		   ARGS("rawcluster/half"), NULL);
}

/*
 * A client that writes its own stream (pto_e2e rawcluster) allocates
 * clusters out of order: a first id of 2^28 + 1, then 1 and 3. ptod
 * fails each graph with -EPROTO and a message naming the id and the one
 * it expected, before it sizes anything by the id; the same process's
 * next client passes, then another client. Then it frees id 1 after the
 * scope that allocated it ended and id 2 got the same cluster: ptod
 * fails the graph with -EINVAL (id 1 names no cluster now), where it
 * once freed id 2's cluster.
 */
TEST_F_TIMEOUT(e2e, stream_cluster_ids_in_order, 150)
{
	static const char *const want[] = {
		"rawcluster far: status=-71 pto2_rt_allocate_cluster: cluster 268435457 out of order (the next is 1)",
		"rawcluster skip: status=-71 pto2_rt_allocate_cluster: cluster 3 out of order (the next is 2)",
		"rawcluster stale: status=-22 pto2_rt_free_cluster: cluster 1 was not allocated",
		NULL
	};

	run_client(_metadata, "rawcluster", NULL,
		   ARGS("rawcluster", "far", "skip", "stale"),
		   ARGS("rawcluster/far", "rawcluster/skip", "rawcluster/stale"),
		   want);
	vector_passes(_metadata, "vector");
}

/* stream_cluster_pairs_bounded: CLUSTER_ALLOC / CLUSTER_FREE pairs */
#define CLPAIRS		4194304	/* 2^22 */

/*
 * A raw client's graph allocates and frees a cluster CLPAIRS times
 * (pto_e2e clpairs: vid 1, 2, ...; 256 MiB of stream and no task). The
 * graph passes and ptod grows by less than 8 MiB: its table of a graph's
 * clusters holds what can be live (one entry per cluster of the device),
 * not one per vid. It once grew to 2^23 entries (32 MiB) here, 8 bytes
 * for every pair a client sends, which any client could repeat until the
 * host ran out of memory.
 */
TEST_F_TIMEOUT(e2e, stream_cluster_pairs_bounded, 150)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)E->ptod);
	run_client(_metadata, "clpairs", NULL,
		   ARGS("clpairs", pid, STR(CLPAIRS)), ARGS("clpairs"), NULL);
}

/*
 * An OUTPUT on a placeholder address the client forged (pto_e2e badph):
 * the largest index, with no intermediate before it. The graph fails with
 * -EPROTO and a message naming the index. Then an intermediate of 4096
 * bytes read through its placeholder plus an offset of 4096: -EACCES and
 * the range. Then a task's two intermediates of 2^64 - 4096 and 8192
 * bytes (their packed size wrapped to 4096, the second lay before the
 * heap and a read 1 MiB into the first passed): -ENOMEM at that submit.
 * Then one new placeholder as two OUTPUTs of a task (each would get a
 * buffer, the placeholder only the last), and libpto's own refusal of
 * the same Tensor passed twice: -EINVAL naming both params.
 * ptod goes on (another client's vector run passes).
 */
TEST_F_TIMEOUT(e2e, stream_placeholder_in_order, 150)
{
	run_client(_metadata, "badph", NULL, ARGS("badph"),
		   ARGS("badph", "badph-off", "badph-huge", "badph-twice",
			"output-twice"), NULL);
	vector_passes(_metadata, "vector");
}

/*
 * ptod keeps the placeholders of the intermediates that can be live: with
 * a task window of 16, the newest 256 (pto_e2e phring). 300
 * intermediates, each made and read in a scope of its own, are all
 * translated right as the ring wraps; a read of the first after them
 * fails the graph with -EINVAL (its task retired; ptod once kept every
 * index a graph used, up to 2^24 x 16 bytes).
 */
TEST_F_TIMEOUT(e2e, stream_placeholder_window, 150)
{
	run_client(_metadata, "phring", ARGS("PTO2_RING_TASK_WINDOW=16"),
		   ARGS("phring"), ARGS("phring-ok", "phring-stale"), NULL);
}

/*
 * A nobody client whose hello asks for @env is refused at connect,
 * saying @needle; root's client with the same @env runs vector.
 */
static void capped_for_users(struct __test_metadata *_metadata,
			     const char *const env[], const char *needle)
{
	struct proc p;
	int ret;

	ret = e2e_start_as(&p, "vector", NOBODY, false, env, ARGS("vector"));
	ASSERT_EQ(0, ret) TH_LOG("start pto_e2e vector: %s", strerror(-ret));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_FALSE(exited_ok(&p));
	EXPECT_TRUE(has_text(p.text, needle)) TH_LOG("%s", p.text);
	proc_free(&p);
	run_client(_metadata, "vector", env, ARGS("vector"),
		   ARGS("vector/Const", "vector/Random"), NULL);
}

/*
 * A task window is host memory of ptod's and work of its main thread at
 * the hello that no quota counts: a nobody client asking for more than
 * ptod's own (-w, 16384 here) is refused at connect, saying so; root may.
 */
TEST_F_TIMEOUT(e2e, task_window_capped_for_users, 150)
{
	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	capped_for_users(_metadata, ARGS("PTO2_RING_TASK_WINDOW=32768"),
			 "PTO2_RING_TASK_WINDOW=32768: more than 16384, the most ptod lets a user but root ask for");
}

/*
 * A client's heap and dependency pool are GM that ptod's main thread
 * allocates, and pto.ko zeroes, at the hello: a nobody client asking for
 * a heap beyond ptod's own (-H, 32 MiB here) or a pool beyond 2^20
 * entries is refused at connect, saying so; root may.
 */
TEST_F_TIMEOUT(e2e, heap_and_dep_pool_capped_for_users, 150)
{
	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	capped_for_users(_metadata, ARGS("PTO2_RING_HEAP=64M"),
			 "PTO2_RING_HEAP=67108864: more than 33554432, the most ptod lets a user but root ask for (its -H)");
	capped_for_users(_metadata, ARGS("PTO2_RING_DEP_POOL=2097152"),
			 "PTO2_RING_DEP_POOL=2097152: more than 1048576, the most ptod lets a user but root ask for");
}

/*
 * A kernel that segfaults: its task fails with -EIO and a message naming
 * the executor (the pid the device shows as the cores' owner), the signal
 * and the task.
 */
TEST_F_TIMEOUT(e2e, crash_kernel_clear_error, 150)
{
	char want[96];
	struct proc p;
	int ret;

	E->exec_before_crash = executor_pid_settled();
	ASSERT_LT(0, E->exec_before_crash)
		TH_LOG("%s: %s", DEBUGFS_CORES, strerror(-E->exec_before_crash));
	ret = e2e_start(&p, "crash", false, NULL, ARGS("crash"));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	E->crash_ran = true;
	EXPECT_TRUE(exited_ok(&p));
	EXPECT_TRUE(case_passed(p.text, "crash"));
	EXPECT_TRUE(has_text(p.text, "status=-5 "));
	snprintf(want, sizeof(want), "pto-aicore (pid %d) was killed by signal %d",
		 E->exec_before_crash, SIGSEGV);
	EXPECT_TRUE(has_text(p.text, want)) TH_LOG("no \"%s\"", want);
	EXPECT_TRUE(has_text(p.text, " ran task "));
	proc_free(&p);
}

/*
 * ptod restarted pto-aicore: the next run passes (ptod starts runs only
 * once the new executor is ready), every core is online again under a new
 * executor pid, none is dead.
 */
TEST_F_TIMEOUT(e2e, aicore_restarted_next_run_passes, 150)
{
	pid_t now;

	if (!E->crash_ran)
		SKIP(return, "needs crash_kernel_clear_error");
	vector_passes(_metadata, "vector");
	now = executor_pid();
	note("pto-aicore pid: %d before the crash, %d now", E->exec_before_crash,
	     now);
	EXPECT_LT(0, now);
	EXPECT_NE(E->exec_before_crash, now);
	EXPECT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
	EXPECT_EQ(0, cnt(_metadata, "cores_dead"));
}

/*
 * pto-aicore releases the device and lives on (a kernel execs sleep(1) in
 * it): no SIGCHLD comes, but pto.ko's netlink events say its cores are
 * lost. ptod fails the run at once with a message that says so, kills
 * and replaces the executor; the next run passes on a new executor with
 * every core online. (ptod without the events: the run waits forever.)
 */
TEST_F_TIMEOUT(e2e, exec_closed_device_replaced, 150)
{
	pid_t before, now;
	struct proc p;
	int ret;

	if (E->user)
		SKIP(return, "needs pto.ko's netlink events");
	before = executor_pid_settled();
	ASSERT_LT(0, before)
		TH_LOG("%s: %s", DEBUGFS_CORES, strerror(-before));
	ASSERT_EQ(0, e2e_start(&p, "closedev", false, NULL, ARGS("closedev")));
	ret = proc_wait(&p, 60000);
	EXPECT_EQ(0, ret) TH_LOG("the run never ended: ptod did not notice");
	EXPECT_TRUE(exited_ok(&p));
	EXPECT_TRUE(case_passed(p.text, "closedev"));
	EXPECT_TRUE(has_text(p.text, "status=-5 "));
	EXPECT_TRUE(has_text(p.text, "closed the device while it ran"));
	proc_free(&p);
	vector_passes(_metadata, "after");
	now = executor_pid();
	note("pto-aicore pid: %d before, %d now", before, now);
	EXPECT_LT(0, now);
	EXPECT_NE(before, now);
	EXPECT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
	EXPECT_EQ(0, cnt(_metadata, "cores_dead"));
}

/* ---- sandboxes: a client's kernels run as the client ------------------------------ */

/*
 * Why the sandbox tests are skipped on the user device: a sandbox maps its
 * client's buffers through the client's file, which only pto.ko gives
 * (ptod -d user runs every kernel in pto-aicore, -K none).
 */
#define SANDBOX_ON_USER_DEVICE \
	"sandboxes need pto.ko's client file; ptod -d user runs kernels in pto-aicore (-K none)"

/* The hostile kernel's record and the run's status, as pto_e2e printed them. */
struct hostile {
	int status, done, pid, uid, euid, open, creat, sock, ptrace;
	unsigned long long peek;
};

static int hostile_parse(const char *text, struct hostile *h)
{
	const char *s = strstr(text, "status=");
	const char *r = strstr(text, "hostile: ");

	if (!s || !r || sscanf(s, "status=%d", &h->status) != 1)
		return -EINVAL;
	if (sscanf(r, "hostile: done=%d pid=%d uid=%d euid=%d open=%d creat=%d socket=%d ptrace=%d peek=0x%llx",
		   &h->done, &h->pid, &h->uid, &h->euid, &h->open, &h->creat,
		   &h->sock, &h->ptrace, &h->peek) != 9)
		return -EINVAL;
	return 0;
}

/* Run pto_e2e hostile [@peek] as nobody and parse what it printed. */
static void run_hostile(struct __test_metadata *_metadata, const char *peek,
			struct proc *p, struct hostile *h)
{
	int ret;

	ret = e2e_start_as(p, "hostile", NOBODY, false, NULL,
			   peek ? ARGS("hostile", peek) : ARGS("hostile"));
	ASSERT_EQ(0, ret) TH_LOG("start pto_e2e hostile: %s", strerror(-ret));
	ASSERT_EQ(0, proc_wait(p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(p));
	ASSERT_EQ(0, hostile_parse(p->text, h)) TH_LOG("no hostile record");
}

/* Wait up to @ms for process @pid to be gone (reaped); 0 or -ETIMEDOUT. */
static int wait_pid_gone(pid_t pid, int ms)
{
	int64_t until = mono_ms() + ms;

	while (!kill(pid, 0) || errno != ESRCH) {
		if (mono_ms() > until)
			return -ETIMEDOUT;
		usleep(10000);
	}
	return 0;
}

/*
 * A nobody client's kernel runs as nobody: it cannot read /etc/shadow,
 * and the sandbox's seccomp filter answers creating a file in /etc,
 * socket() and ptrace() with EPERM. Its sandbox is a session of its own
 * (ptod's controlling terminal, if ptod has one, is out of its reach,
 * and its process group is not ptod's). The process it ran in goes with
 * the client.
 */
TEST_F_TIMEOUT(e2e, sandbox_kernel_runs_as_owner, 150)
{
	pid_t exec_pid = executor_pid_settled();
	int session = 0, tty = -1;
	struct hostile h;
	struct proc p;
	const char *r;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	unlink(PTO_HOSTILE_FILE);
	run_hostile(_metadata, NULL, &p, &h);
	note("uid %d euid %d; errno: open %d creat %d socket %d ptrace %d",
	     h.uid, h.euid, h.open, h.creat, h.sock, h.ptrace);
	EXPECT_EQ(0, h.status);
	EXPECT_EQ(1, h.done);
	EXPECT_EQ(NOBODY, h.uid);
	EXPECT_EQ(NOBODY, h.euid);
	EXPECT_EQ(EACCES, h.open);
	/* no file is opened for writing (the seccomp filter) */
	EXPECT_EQ(EPERM, h.creat);
	EXPECT_NE(0, access(PTO_HOSTILE_FILE, F_OK));
	EXPECT_EQ(EPERM, h.sock);
	EXPECT_EQ(EPERM, h.ptrace);
	EXPECT_NE(exec_pid, h.pid);
	r = strstr(p.text, "hostile6: ");
	ASSERT_TRUE(r && sscanf(r, "hostile6: session=%d ttynr=%d", &session,
				&tty) == 2) TH_LOG("no hostile6 record");
	note("sandbox pid %d: session %d, tty_nr %d", h.pid, session, tty);
	EXPECT_EQ(h.pid, session) TH_LOG("the sandbox is in ptod's session");
	EXPECT_EQ(0, tty);
	EXPECT_EQ(0, wait_pid_gone(h.pid, 10000))
		TH_LOG("pid %d, where the kernel ran, outlived its client", h.pid);
	unlink(PTO_HOSTILE_FILE);
	proc_free(&p);
}

/*
 * A sandbox's private memory is bounded (ptod -M SBX_DATA_MIB in this
 * suite): a nobody client's kernel finds RLIMIT_DATA at SBX_DATA_MIB plus
 * PTO_SBX_STACK a core (its worker threads' stacks), soft and hard;
 * malloc() of PTO_HOSTILE_SMALL_MIB works, of PTO_HOSTILE_OVER_MIB past
 * the limit fails with ENOMEM. Raising it fails with EPERM (the seccomp
 * filter allows no setrlimit; soft == hard is what shows that the client
 * could not raise it anyway). Memory RLIMIT_DATA does not count is
 * refused: shared anonymous mappings and files opened for writing (in
 * tmpfs, memory). A kernel that allocates without end fails, not the
 * host's memory.
 */
TEST_F_TIMEOUT(e2e, sandbox_memory_bounded, 150)
{
	int soft = 0, hard = 0, over = 0, small = -1, raise = 0;
	int shared = 0, wopen = 0;
	long cores = E->nr_cores;
	struct hostile h;
	struct proc p;
	const char *r;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	ASSERT_LT(0, cores);
	run_hostile(_metadata, NULL, &p, &h);
	r = strstr(p.text, "hostile3: ");
	ASSERT_TRUE(r && sscanf(r, "hostile3: datasoft=%d datahard=%d overalloc=%d smallalloc=%d raise=%d",
				&soft, &hard, &over, &small, &raise) == 5)
		TH_LOG("no hostile3 record");
	note("RLIMIT_DATA %d / %d MiB (ptod -M %d, %ld cores); malloc %d MiB past it: errno %d, of %d MiB: errno %d; raising it: errno %d",
	     soft, hard, SBX_DATA_MIB, cores, PTO_HOSTILE_OVER_MIB, over,
	     PTO_HOSTILE_SMALL_MIB, small, raise);
	EXPECT_EQ(0, h.status);
	EXPECT_EQ(SBX_DATA_MIB + (long)(PTO_SBX_STACK >> 20) * cores, soft);
	EXPECT_EQ(soft, hard);
	EXPECT_EQ(ENOMEM, over);
	EXPECT_EQ(0, small);
	EXPECT_EQ(EPERM, raise);
	/* memory the limit does not count: refused by the seccomp filter */
	r = strstr(p.text, "hostile6: ");
	ASSERT_TRUE(r && sscanf(r, "hostile6: session=%*d ttynr=%*d shared=%d wopen=%d",
				&shared, &wopen) == 2) TH_LOG("no hostile6 record");
	note("shared anonymous mmap: errno %d; creating %s: errno %d", shared,
	     PTO_HOSTILE_SHM_FILE, wopen);
	EXPECT_EQ(EPERM, shared);
	EXPECT_EQ(EPERM, wopen);
	unlink(PTO_HOSTILE_SHM_FILE);
	proc_free(&p);
}

/*
 * The line of ptod's log from its start on that holds @needle, copied
 * into @buf: 0, or -ENOENT.
 */
static int log_line(const char *needle, char *buf, size_t len)
{
	FILE *f = fopen(E->log, "re");
	char line[4200];
	int ret = -ENOENT;

	while (f && ret && fgets(line, sizeof(line), f))
		if (strstr(line, needle)) {
			snprintf(buf, len, "%s", line);
			ret = 0;
		}
	if (f)
		fclose(f);
	return ret;
}

/* Is @word one of the words of file @path? */
static bool file_has_word(const char *path, const char *word)
{
	FILE *f = fopen(path, "re");
	char w[64];
	bool found = false;

	while (f && !found && fscanf(f, "%63s", w) == 1)
		found = !strcmp(w, word);
	if (f)
		fclose(f);
	return found;
}

#define SBX_CG_LINE	"sandboxes: a memory cgroup each under "
#define SBX_PIDS_LINE	"sandboxes: pids.max "

/*
 * Memory a kernel writes into a memfd is in no rlimit of its sandbox; the
 * sandbox's memory cgroup counts it (ptod's log says where the cgroups
 * are and their memory.max: -M, the worker stacks and some slack). A
 * nobody client's kernel that writes PTO_HOSTILE_MEMFD_MIB into a memfd,
 * more than that, gets less than the limit: the cgroup kills its sandbox
 * (the run fails, saying the limit was reached) or a write fails with
 * ENOMEM. The sandbox's cgroup is gone once ptod reaped it; pto-aicore
 * lives on, and another client's run passes.
 */
TEST_F_TIMEOUT(e2e, sandbox_memfd_bounded, 300)
{
	char line[4200], dir[PATH_MAX], leaf[PATH_MAX + 32];
	pid_t exec_before = executor_pid_settled();
	int mib = -1, err = -1, sbx = 0, i;
	long limit = 0, rlim;
	struct hostile h;
	struct stat st;
	struct proc p;
	const char *r;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	/* a kernel without the memory controller (CONFIG_MEMCG) has none */
	if (!file_has_word("/sys/fs/cgroup/cgroup.controllers", "memory"))
		SKIP(return, "this kernel has no cgroup v2 memory controller");
	ASSERT_EQ(0, log_line(SBX_CG_LINE, line, sizeof(line)))
		TH_LOG("ptod made no memory cgroup for its sandboxes (see its log: \"no memory cgroup\")");
	r = strstr(line, SBX_CG_LINE) + strlen(SBX_CG_LINE);
	ASSERT_EQ(2, sscanf(r, "%4095[^,], memory.max %ld MiB", dir, &limit))
		TH_LOG("%s", line);
	/* above the RLIMIT_DATA that sandbox_memory_bounded checks */
	rlim = SBX_DATA_MIB + (long)(PTO_SBX_STACK >> 20) * E->nr_cores;
	EXPECT_LT(rlim, limit);
	if (limit >= PTO_HOSTILE_MEMFD_MIB)
		SKIP(return, "the limit (%ld MiB) is not below what the kernel writes",
		     limit);
	run_hostile(_metadata, "memfd", &p, &h);
	r = strstr(p.text, "hostile7: ");
	ASSERT_TRUE(r && sscanf(r, "hostile7: memfdmib=%d memfderr=%d", &mib,
				&err) == 2) TH_LOG("no hostile7 record");
	r = strstr(p.text, "kernel sandbox (pid ");
	if (r)
		sscanf(r, "kernel sandbox (pid %d)", &sbx);
	note("memfd: %d of %d MiB written (memory.max %ld MiB, RLIMIT_DATA %ld), errno %d, run status %d, sandbox pid %d",
	     mib, PTO_HOSTILE_MEMFD_MIB, limit, rlim, err, h.status, sbx);
	EXPECT_GT(limit, mib);
	if (h.status) {
		EXPECT_TRUE(has_text(p.text, "memory cgroup's limit of"))
			TH_LOG("%s", p.text);
		/* ptod removes the leaf when it reaps the sandbox */
		EXPECT_LT(0, sbx);
		snprintf(leaf, sizeof(leaf), "%s/sbx-%d", dir, sbx);
		for (i = 0; i < 50 && !stat(leaf, &st); i++)
			usleep(100000);
		EXPECT_NE(0, stat(leaf, &st)) TH_LOG("%s is still there", leaf);
	} else {
		EXPECT_EQ(ENOMEM, err);
	}
	EXPECT_EQ(exec_before, executor_pid());
	proc_free(&p);
	vector_passes(_metadata, "other");
}

/*
 * A sandbox's threads are bounded (ptod -P SBX_TASKS in this suite): a
 * nobody client's kernel finds RLIMIT_NPROC at SBX_TASKS, soft and hard,
 * and its threads, started without end with small stacks, stop with
 * EAGAIN before nobody has SBX_TASKS tasks (the client's own count too),
 * not at the kernel's own cap of PTO_HOSTILE_THREADS. A kernel that
 * starts threads without end fails, not the host's or ptod's tasks.
 * Where ptod has the pids controller (its log says "pids.max N each"),
 * the sandbox's cgroup stops them before N: the whole sandbox, its
 * workers included, holds at most N tasks.
 */
TEST_F_TIMEOUT(e2e, sandbox_threads_bounded, 150)
{
	int soft = 0, hard = 0, threads = -1, err = -1, pids = 0;
	char line[4200];
	struct hostile h;
	struct proc p;
	const char *r;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	run_hostile(_metadata, NULL, &p, &h);
	r = strstr(p.text, "hostile4: ");
	ASSERT_TRUE(r && sscanf(r, "hostile4: nprocsoft=%d nprochard=%d threads=%d threadserr=%d",
				&soft, &hard, &threads, &err) == 4)
		TH_LOG("no hostile4 record");
	note("RLIMIT_NPROC %d / %d (ptod -P %d); the kernel started %d threads, then: %s",
	     soft, hard, SBX_TASKS, threads, strerror(err));
	EXPECT_EQ(0, h.status);
	EXPECT_EQ(SBX_TASKS, soft);
	EXPECT_EQ(SBX_TASKS, hard);
	EXPECT_EQ(EAGAIN, err);
	EXPECT_LT(0, threads);
	EXPECT_GT(SBX_TASKS, threads);
	if (!log_line(SBX_PIDS_LINE, line, sizeof(line)) &&
	    sscanf(strstr(line, SBX_PIDS_LINE) + strlen(SBX_PIDS_LINE), "%d",
		   &pids) == 1) {
		note("the sandbox's cgroup: pids.max %d", pids);
		EXPECT_GT(pids, threads);
	} else if (file_has_word("/sys/fs/cgroup/cgroup.controllers", "pids")) {
		EXPECT_TRUE(0) TH_LOG("ptod set no pids.max for its sandboxes (see its log: \"no pids limit\")");
	}
	proc_free(&p);
}

/* ptod's PTOD_SBX_STARTS_BURST and _RATE; a user of this test's own */
#define SBX_STARTS_BURST	32
#define SBX_STARTS_RATE		10
#define CHURN_UID		65531
#define SBX_CHURN		100
#define SBX_CHURNERS		4

/*
 * A sandbox start costs ptod's main thread a fork, an exec and
 * pto-aicore's answer (about 14 ms in the VM): a user whose clients
 * connect and hang up without end gets SBX_STARTS_BURST starts at once,
 * then SBX_STARTS_RATE a second; the others are refused with -EAGAIN,
 * saying why. SBX_CHURNERS clients at once each connect until their
 * fifth refusal, at most SBX_CHURN times, holding at most 2 x
 * SBX_CHURNERS of the user's 16 connections. Where ptod's main thread
 * itself starts fewer sandboxes a second than the rate (the debug
 * kernel: 3.5 a second), the limit cannot be reached: skipped, saying
 * so. (A user of its own, so that no other test's starts count.)
 */
TEST_F_TIMEOUT(e2e, sandbox_starts_rate_limited, 600)
{
	static const char *const env[] = { "PTO2_RING_HEAP=65536", NULL };
	long connected = 0, again = 0, c, a, o;
	struct proc p[SBX_CHURNERS];
	char why[256] = "";
	int ret, i, n = 0;
	int64_t t0, t1;
	const char *l;
	double secs;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	t0 = mono_ms();
	for (i = 0; i < SBX_CHURNERS; i++, n++) {
		ret = e2e_start_as(&p[i], "sbxchurn", CHURN_UID, false, env,
				   ARGS("sbxchurn", STR(SBX_CHURN)));
		ASSERT_EQ(0, ret) TH_LOG("start pto_e2e sbxchurn: %s",
					 strerror(-ret));
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, proc_wait(&p[i], 540000));
		EXPECT_TRUE(exited_ok(&p[i])) TH_LOG("%s", p[i].text);
		l = line_with(p[i].text, "CASE sbxchurn: PASS ");
		c = a = o = -1;
		EXPECT_TRUE(l && sscanf(l, "CASE sbxchurn: PASS connected=%ld again=%ld other=%ld secs=%*f why=%255[^\n]",
					&c, &a, &o, why) >= 3)
			TH_LOG("%s", p[i].text);
		connected += c;
		again += a;
	}
	t1 = mono_ms();
	secs = (double)(t1 - t0) / 1e3;
	note("%d clients: %ld hellos in %.3f s, %ld connected (and their own %d), %ld refused: %s",
	     SBX_CHURNERS, connected + again, secs, connected, SBX_CHURNERS,
	     again, why);
	for (i = 0; i < n; i++)
		proc_free(&p[i]);
	if (!again && connected + SBX_CHURNERS <
		      SBX_STARTS_BURST + SBX_STARTS_RATE * secs)
		SKIP(return, "ptod started fewer sandboxes than the limit lets (%ld in %.1f s): it cannot be reached here",
		     connected + SBX_CHURNERS, secs);
	EXPECT_LT(0, again);
	/* each client's own connection started one too, before the clock */
	EXPECT_GE(SBX_STARTS_BURST + SBX_STARTS_RATE * ((long)secs + 2),
		  connected + SBX_CHURNERS);
	EXPECT_TRUE(strstr(why, "started more than " STR(SBX_STARTS_BURST) " sandboxes at once or " STR(SBX_STARTS_RATE) " a second"))
		TH_LOG("%s", why);
}

/* The hostile kernel's second line: processes, threads, what it inherited. */
struct hostile2 {
	int fork, forkpid, clone, clonepid, cparent, cparentpid, thread, ran,
	    procuid, in, out, env, oom, cwdroot;
};

static int hostile2_parse(const char *text, struct hostile2 *h)
{
	const char *r = strstr(text, "hostile2: ");

	if (!r || sscanf(r, "hostile2: fork=%d forkpid=%d clone=%d clonepid=%d cparent=%d cparentpid=%d thread=%d ran=%d procuid=%d stdin=%d stdout=%d env=%d oom=%d cwdroot=%d",
			 &h->fork, &h->forkpid, &h->clone, &h->clonepid,
			 &h->cparent, &h->cparentpid, &h->thread, &h->ran, &h->procuid, &h->in, &h->out,
			 &h->env, &h->oom, &h->cwdroot) != 14)
		return -EINVAL;
	return 0;
}

/* The hostile kernel run once by nobody: both of its lines. */
static void run_hostile2(struct __test_metadata *_metadata, struct proc *p,
			 struct hostile *h, struct hostile2 *h2)
{
	run_hostile(_metadata, NULL, p, h);
	ASSERT_EQ(0, hostile2_parse(p->text, h2)) TH_LOG("no hostile2 record");
}

/*
 * A nobody client's kernel may start threads but no process: fork(),
 * clone(CLONE_NEWUSER) and clone(CLONE_PARENT) fail with EPERM (a process
 * of its own would outlive the sandbox, keeping the client's file and its
 * GM; with CLONE_PARENT it would be ptod's child). In the VM, which runs
 * the suite chrooted, CLONE_NEWUSER fails anyway; CLONE_PARENT does not.
 * pthread_create() works (glibc's clone3 gets ENOSYS, and its fallback,
 * clone with the thread flags, is allowed). Nothing the kernel started
 * outlives the client.
 */
TEST_F_TIMEOUT(e2e, sandbox_kernel_no_processes, 150)
{
	struct hostile2 h2;
	struct hostile h;
	struct proc p;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	run_hostile2(_metadata, &p, &h, &h2);
	note("fork: errno %d pid %d; clone(NEWUSER): errno %d pid %d; clone(PARENT): errno %d pid %d; pthread_create %d ran %d",
	     h2.fork, h2.forkpid, h2.clone, h2.clonepid, h2.cparent,
	     h2.cparentpid, h2.thread, h2.ran);
	EXPECT_EQ(0, h.status);
	EXPECT_EQ(1, h.done);
	EXPECT_EQ(EPERM, h2.fork);
	EXPECT_EQ(0, h2.forkpid);
	EXPECT_EQ(EPERM, h2.clone);
	EXPECT_EQ(0, h2.clonepid);
	EXPECT_EQ(EPERM, h2.cparent);
	EXPECT_EQ(0, h2.cparentpid);
	EXPECT_EQ(0, h2.thread);
	EXPECT_EQ(1, h2.ran);
	EXPECT_EQ(0, wait_pid_gone(h.pid, 10000))
		TH_LOG("pid %d, where the kernel ran, outlived its client", h.pid);
	if (h2.forkpid > 0) {
		EXPECT_EQ(0, wait_pid_gone(h2.forkpid, 2000))
			TH_LOG("pid %d, forked by the kernel, outlived its sandbox",
			       h2.forkpid);
		kill(h2.forkpid, SIGKILL);
	}
	proc_free(&p);
}

/*
 * Lines of ptod's log with PTO_HOSTILE_FORGED: as the whole line, in
 * *@bare; after "client N: sandbox M: " and followed by the escapes as
 * '?' (PTO_HOSTILE_ESC_LOGGED), in *@marked.
 */
static void forged_lines(int *bare, int *marked)
{
	FILE *f = fopen(E->log, "re");
	char line[1024], *p;

	*bare = *marked = 0;
	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, PTO_HOSTILE_FORGED);
		if (!p)
			continue;
		if (p == line)
			(*bare)++;
		else if (strstr(line, ": sandbox ") &&
			 strstr(line, ": sandbox ") < p &&
			 !strncmp(p + strlen(PTO_HOSTILE_FORGED),
				  PTO_HOSTILE_ESC_LOGGED,
				  strlen(PTO_HOSTILE_ESC_LOGGED)))
			(*marked)++;
	}
	if (f)
		fclose(f);
}

/*
 * The pieces of the kernel's long line (hostile.h) in ptod's log from
 * offset @from, each after "client N: sandbox M: ": the first, the whole
 * text up to its byte 255, in *@first; the second, starting with the
 * UTF-8 letter that was across the cut, in *@second; any other line with
 * a piece's text (a byte of the letter on either side, as '?'), in
 * *@torn.
 */
static void long_pieces(off_t from, int *first, int *second, int *torn)
{
	size_t head = strlen(PTO_HOSTILE_LONG);
	FILE *f = fopen(E->log, "re");
	char line[1024], *p, *q;

	*first = *second = *torn = 0;
	if (f && fseeko(f, from, SEEK_SET)) {
		fclose(f);
		f = NULL;
	}
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, PTO_HOSTILE_LONG) &&
		    !strstr(line, "is where it was cut"))
			continue;
		p = strstr(line, ": sandbox ");
		q = p ? p + strlen(": sandbox ") : NULL;
		if (q)
			q += strspn(q, "0123456789");
		if (!q || strncmp(q, ": ", 2)) {
			(*torn)++;
			continue;
		}
		q += 2;
		if (!strncmp(q, PTO_HOSTILE_LONG, head) &&
		    strspn(q + head, "x") == PTO_HOSTILE_LONG_CUT - head &&
		    !strcmp(q + PTO_HOSTILE_LONG_CUT, "\n"))
			(*first)++;
		else if (!strcmp(q, PTO_HOSTILE_LONG_END "\n"))
			(*second)++;
		else
			(*torn)++;
	}
	if (f)
		fclose(f);
}

/*
 * What else a nobody client's kernel finds in its sandbox: the process is
 * not dumpable (/proc/self/mem is root's, so another process of the same
 * uid, another client's sandbox, cannot open the sandbox's),
 * descriptors 0 and 1 are /dev/null, the environment is empty (nothing
 * of ptod's), oom_score_adj is 1000 (the OOM killer takes a sandbox
 * before ptod or pto-aicore) and its working directory is / (not
 * ptod's, which the client may not reach by path). The line it writes
 * to its standard error, one that looks like ptod's own, is in ptod's log
 * only after the sandbox's name, the escapes and the characters that
 * reorder or break a line that follow it as '?'. Its longer line is
 * logged in two pieces, cut before the UTF-8 letter across its byte 256,
 * not inside it.
 */
TEST_F_TIMEOUT(e2e, sandbox_kernel_confined, 150)
{
	int bare = 0, marked = 0, first = 0, second = 0, torn = 0, i;
	struct hostile2 h2;
	struct hostile h;
	struct proc p;
	off_t from;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	from = file_size(E->log);
	run_hostile2(_metadata, &p, &h, &h2);
	note("/proc/self/mem uid %d; stdin null %d, stdout null %d; environ %d bytes; oom_score_adj %d; cwd / %d",
	     h2.procuid, h2.in, h2.out, h2.env, h2.oom, h2.cwdroot);
	EXPECT_EQ(0, h.status);
	EXPECT_EQ(NOBODY, h.uid);
	EXPECT_EQ(0, h2.procuid);
	EXPECT_EQ(1, h2.in);
	EXPECT_EQ(1, h2.out);
	EXPECT_EQ(0, h2.env);
	EXPECT_EQ(1000, h2.oom);
	EXPECT_EQ(1, h2.cwdroot);
	/* ptod logs the kernel's line from its main loop: up to 5 s */
	for (i = 0; i < 50; i++) {
		forged_lines(&bare, &marked);
		if (marked)
			break;
		usleep(100000);
	}
	note("the kernel's stderr line: %d times marked as the sandbox's, %d bare",
	     marked, bare);
	EXPECT_LT(0, marked);
	EXPECT_EQ(0, bare);
	/* the long line after it, in two pieces */
	for (i = 0; i < 50; i++) {
		long_pieces(from, &first, &second, &torn);
		if (first && second)
			break;
		usleep(100000);
	}
	note("the kernel's long line: first piece %d, second %d, torn %d",
	     first, second, torn);
	EXPECT_EQ(1, first);
	EXPECT_EQ(1, second);
	EXPECT_EQ(0, torn);
	if (h2.forkpid > 0)
		kill(h2.forkpid, SIGKILL);
	proc_free(&p);
}

#define HOSTILE_SECRET	0x5ec2e75ec2e75ec2ULL

/*
 * Another client's buffer (ours, root's, holding a secret): a nobody
 * client's kernel that reads at its device address gets nothing; the
 * sandbox has only its client's buffers mapped, so it dies, its run fails
 * with a message saying so, and pto-aicore lives on.
 */
TEST_F_TIMEOUT(e2e, sandbox_cannot_read_other_client, 150)
{
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_CLIENT };
	struct pto_gm_alloc ga = { .size = sizeof(ga), .len = 4096 };
	pid_t exec_before = executor_pid_settled();
	struct hostile h;
	char addr[32];
	uint64_t *secret;
	struct proc p;
	int fd;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PTO_IOC_SET_ROLE, &role));
	ASSERT_EQ(0, ioctl(fd, PTO_IOC_GM_ALLOC, &ga));
	secret = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      (off_t)ga.mmap_offset);
	ASSERT_NE(MAP_FAILED, secret);
	*secret = HOSTILE_SECRET;
	snprintf(addr, sizeof(addr), "%llx", (unsigned long long)ga.dev_addr);
	run_hostile(_metadata, addr, &p, &h);
	note("peek at 0x%s: status %d, read 0x%llx", addr, h.status, h.peek);
	EXPECT_NE(HOSTILE_SECRET, h.peek);
	EXPECT_EQ(-EIO, h.status);
	EXPECT_TRUE(has_text(p.text, "sandbox"));
	EXPECT_TRUE(has_text(p.text, "killed by signal"));
	EXPECT_EQ(exec_before, executor_pid());
	proc_free(&p);
	munmap(secret, 4096);
	close(fd);
}

/*
 * A nobody client's kernel that segfaults fails that client's run with a
 * clear error; its next run, on the same connection, passes (a new
 * sandbox); pto-aicore never died.
 */
TEST_F_TIMEOUT(e2e, sandbox_crash_next_run_passes, 150)
{
	pid_t exec_before = executor_pid_settled();
	struct proc p;
	int ret;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	ret = e2e_start_as(&p, "crash-next", NOBODY, false, NULL,
			   ARGS("crash-next"));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&p));
	EXPECT_TRUE(case_passed(p.text, "crash"));
	EXPECT_TRUE(has_text(p.text, "sandbox"));
	EXPECT_TRUE(case_passed(p.text, "crash/next"));
	EXPECT_EQ(exec_before, executor_pid());
	EXPECT_EQ(0, cnt(_metadata, "cores_dead"));
	proc_free(&p);
}

/*
 * A client whose kernels crash its sandbox again and again: ptod starts
 * it again after each of the first PTOD_SBX_CRASHES crashes (5 in a
 * minute), not after the sixth; the client's next graph fails at once
 * with a note saying so, and another client's run passes.
 */
TEST_F_TIMEOUT(e2e, sandbox_crash_loop_not_restarted, 150)
{
	pid_t exec_before = executor_pid_settled();
	struct proc p;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	ASSERT_EQ(0, e2e_start_as(&p, "crash-loop", NOBODY, false, NULL,
				  ARGS("crash-loop", "6")));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "crash-loop"))
		TH_LOG("%s", p.text ? p.text : "");
	EXPECT_EQ(exec_before, executor_pid());
	proc_free(&p);
	vector_passes(_metadata, "other");
}

/*
 * Run pto_e2e pre REPORT PRE_RUN_MS as nobody (its kernel in a sandbox)
 * and watch the HWS register SIP_REPORT_PRE_COMPLETE through @regs until
 * the client ends: the bits seen set (OR'd) into @seen, the bits still
 * set after its end into @after.
 */
#define PRE_RUN_MS	1500

static void pre_watch(struct __test_metadata *_metadata, void *regs,
		      bool report, uint64_t seen[PTO_CORE_MASK_WORDS],
		      uint64_t after[PTO_CORE_MASK_WORDS])
{
	_Atomic uint64_t *bell =
		PTO_REG64(pto_regs_hws(regs)->sip_report_pre_complete);
	int64_t until = mono_ms() + CLIENT_MS;
	struct proc p;
	unsigned int w;

	ASSERT_EQ(0, e2e_start_as(&p, "pre", NOBODY, false, NULL,
				  ARGS("pre", report ? "1" : "0",
				       STR(PRE_RUN_MS))));
	memset(seen, 0, PTO_CORE_MASK_WORDS * sizeof(*seen));
	for (;;) {
		for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
			seen[w] |= atomic_load(&bell[w]);
		if (!proc_running(&p) || mono_ms() > until)
			break;
		usleep(1000);
	}
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		after[w] = atomic_load(&bell[w]);
	EXPECT_TRUE(exited_ok(&p));
	EXPECT_TRUE(case_passed(p.text, "pre")) TH_LOG("%s", p.text);
	proc_free(&p);
}

static unsigned int bits_in(const uint64_t m[PTO_CORE_MASK_WORDS])
{
	unsigned int w, n = 0;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		n += (unsigned int)__builtin_popcountll(m[w]);
	return n;
}

/*
 * A sandboxed kernel's pre-complete report reaches the device: a nobody
 * client's kernel that calls pto_kernel_pre_complete() at its start and
 * then runs PRE_RUN_MS more sets its core's bit, one bit, in the HWS
 * register SIP_REPORT_PRE_COMPLETE (the sandbox forwards it through its
 * mailbox, pto-aicore into the register), and the bit goes when ptod
 * takes the core's completion. The same kernel told not to report sets
 * none. Outside SIP report mode (the registers' defaults) ptod leaves the
 * bits for completions to drop, so a read-only mapping of the register
 * file sees them.
 */
TEST_F_TIMEOUT(e2e, sandbox_kernel_pre_complete_report, 150)
{
	uint64_t seen[PTO_CORE_MASK_WORDS], after[PTO_CORE_MASK_WORDS];
	struct pto_info info;
	void *regs;
	int fd;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	fd = regs_map(&info, &regs);
	ASSERT_LE(0, fd) TH_LOG("the register file: %s", strerror(-fd));
	pre_watch(_metadata, regs, true, seen, after);
	note("reporting kernel: %u bit(s) seen set, %u left after the run",
	     bits_in(seen), bits_in(after));
	EXPECT_EQ(1, bits_in(seen));
	EXPECT_EQ(0, bits_in(after));
	pre_watch(_metadata, regs, false, seen, after);
	note("kernel that does not report: %u bit(s) seen set", bits_in(seen));
	EXPECT_EQ(0, bits_in(seen));
	EXPECT_EQ(0, bits_in(after));
	munmap(regs, info.regs_size);
	close(fd);
}

/* a user of this test's own, whose sandbox starts no other test spends */
#define CRASH_BUDGET_UID	65530

/*
 * A crashed sandbox's restart costs its user a sandbox start, as a
 * connection does: while a thread of the client's process keeps the
 * user's starts used up (SBX_STARTS_BURST, then SBX_STARTS_RATE a
 * second), a crash is not followed by a new sandbox, and the client's
 * next graph fails at once, saying why. Where ptod starts fewer
 * sandboxes a second than the rate (the debug kernel), the starts
 * cannot be used up: skipped, saying so.
 */
TEST_F_TIMEOUT(e2e, sandbox_restart_paid_from_start_budget, 150)
{
	static const char *const env[] = { "PTO2_RING_HEAP=65536", NULL };
	pid_t exec_before = executor_pid_settled();
	struct proc p;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	ASSERT_EQ(0, e2e_start_as(&p, "crash-budget", CRASH_BUDGET_UID, false,
				  env, ARGS("crash-budget", "4")));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	if (has_text(p.text, "the thread was never refused")) {
		proc_free(&p);
		SKIP(return, "ptod started sandboxes too slowly to use up a user's starts here");
	}
	EXPECT_TRUE(case_passed(p.text, "crash-budget")) TH_LOG("%s", p.text);
	EXPECT_TRUE(has_text(p.text, "is not started again"))
		TH_LOG("%s", p.text);
	EXPECT_EQ(exec_before, executor_pid());
	proc_free(&p);
	vector_passes(_metadata, "other");
}

/*
 * pto-aicore dies (root's crash kernel) while a nobody client is
 * connected: the restarted pto-aicore gets the client's sandbox again
 * from ptod, and the client's next run passes.
 */
TEST_F_TIMEOUT(e2e, sandbox_survives_aicore_restart, 150)
{
	pid_t exec_before = executor_pid_settled();
	struct proc nb, cr;
	int ret;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	ret = e2e_start_as(&nb, "rerun", NOBODY, true, NULL, ARGS("rerun"));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, proc_ready(&nb, READY_MS));
	ASSERT_EQ(0, e2e_start(&cr, "crash", false, NULL, ARGS("crash")));
	ASSERT_EQ(0, proc_wait(&cr, CLIENT_MS));
	EXPECT_TRUE(case_passed(cr.text, "crash"));
	proc_free(&cr);
	ASSERT_EQ(0, kill(nb.pid, SIGUSR1));
	ASSERT_EQ(0, proc_wait(&nb, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&nb));
	EXPECT_TRUE(case_passed(nb.text, "rerun/first"));
	EXPECT_TRUE(case_passed(nb.text, "rerun/second"));
	note("pto-aicore pid: %d before, %d now", exec_before, executor_pid());
	EXPECT_NE(exec_before, executor_pid());
	proc_free(&nb);
}

/*
 * A nobody client's cooperative launch of 8 blocks whose kernels wait for
 * each other completes: its sandbox runs all 8 at once (it starts a
 * thread per kernel handed to it while the others are busy).
 */
TEST_F_TIMEOUT(e2e, sandbox_coop_launch_runs_together, 150)
{
	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	run_client_as(_metadata, "rendezvous", NOBODY, NULL,
		      ARGS("rendezvous", "8"), ARGS("rendezvous/8"), NULL);
}

/* ---- kernels that never return -------------------------------------------------- */

/* The next run must end this soon after a stuck client was killed. */
#define STUCK_BOUND_MS	60000

/*
 * Kernels that never return keep no core once their client is gone:
 * client @uid puts a kernel that sleeps an hour on every core
 * (pto_e2e hang, ready once all of them run) and is killed; ptod kills
 * what runs them when its drain grace (ptod -G, 5 s) is over. With
 * @exec_dies (the kernels ran in pto-aicore), the next client starts once
 * pto-aicore was replaced: killing it fails whatever it had, other
 * clients' dispatches included (Documentation/ptod.rst); else at once.
 * The next client's run, which needs cores, completes.
 */
static void stuck_client_killed(struct __test_metadata *_metadata, uid_t uid,
				bool exec_dies, const char *cmd)
{
	pid_t exec = executor_pid_settled();
	struct proc h, v;
	int64_t t0;
	int ret;

	ASSERT_LT(0, exec);
	ASSERT_EQ(0, e2e_start_as(&h, "hang", uid, true, NULL, ARGS(cmd)));
	ret = proc_ready(&h, READY_MS);
	if (ret) {
		proc_wait(&h, 0);
		proc_free(&h);
	}
	ASSERT_EQ(0, ret) TH_LOG("hang: %s", strerror(-ret));
	ASSERT_EQ(0, kill(h.pid, SIGKILL));
	ASSERT_EQ(0, proc_wait(&h, CLIENT_MS));
	proc_free(&h);
	t0 = mono_ms();
	while (exec_dies && executor_pid() == exec &&
	       mono_ms() - t0 < STUCK_BOUND_MS)
		usleep(100000);
	if (exec_dies)
		note("pto-aicore (pid %d) %s %lld ms after the stuck client was killed",
		     exec, executor_pid() == exec ? "still ran" : "was replaced",
		     (long long)(mono_ms() - t0));
	ASSERT_EQ(0, e2e_start(&v, "next", false, NULL, ARGS("vector", "Const")));
	ret = proc_wait(&v, STUCK_BOUND_MS);
	note("the next run ended %lld ms after the stuck client was killed",
	     (long long)(mono_ms() - t0));
	EXPECT_EQ(0, ret)
		TH_LOG("the stuck kernels kept the cores for %d s", STUCK_BOUND_MS / 1000);
	EXPECT_TRUE(exited_ok(&v));
	EXPECT_TRUE(v.text && case_passed(v.text, "vector/Const"));
	proc_free(&v);
	if (exec_dies) {
		EXPECT_NE(exec, executor_pid()) TH_LOG("pto-aicore was not replaced");
	} else {
		EXPECT_EQ(exec, executor_pid()) TH_LOG("pto-aicore was replaced");
	}
	if (!E->user) {
		EXPECT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
	}
}

/*
 * An unprivileged client's stuck kernels run in its sandbox: ptod kills
 * the sandbox, and only it: pto-aicore (and every other client's kernels)
 * live on.
 */
TEST_F_TIMEOUT(e2e, stuck_kernels_sandbox_client_killed, 150)
{
	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	stuck_client_killed(_metadata, NOBODY, false, "hang");
}

/*
 * root's stuck kernels run in pto-aicore (no sandbox; on the user-mode
 * device everyone's do): ptod kills pto-aicore and starts a new one.
 */
TEST_F_TIMEOUT(e2e, stuck_kernels_client_killed, 150)
{
	stuck_client_killed(_metadata, 0, true, "hang");
}

/*
 * The same after the client did the worst to the doorbell ptod handed it
 * (filled it, made it blocking) while ptod's runner waits for the run:
 * nothing ptod does when the client goes may block on it (it did when the
 * doorbell was the runner's own eventfd: ptod's main thread stopped).
 */
TEST_F_TIMEOUT(e2e, stuck_kernels_bell_abused, 150)
{
	stuck_client_killed(_metadata, 0, true, "hang-bell");
}

/*
 * ptod lets a client go (here: the client shut its connection for
 * writing) while the client goes on and submits: ringing the doorbell
 * whose read end went with ptod's side must give the client an error,
 * not kill it with SIGPIPE. The ptod that serves the others is untouched.
 */
TEST_F_TIMEOUT(e2e, bell_orphaned_client_error, 60)
{
	struct proc p;

	ASSERT_EQ(0, e2e_start(&p, "bell-orphaned", false, NULL,
			       ARGS("bell-orphaned")));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(p.reaped && WIFEXITED(p.status))
		TH_LOG("pto_e2e bell-orphaned died of signal %d",
		       WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0);
	EXPECT_TRUE(line_with(p.text, "CASE bell-orphaned: PASS"))
		TH_LOG("no \"CASE bell-orphaned: PASS\"");
	proc_free(&p);
}

TEST_F_TIMEOUT(e2e, deadlock_clean_error, 150)
{
	char want[32];

	snprintf(want, sizeof(want), "status=%d ", -EDEADLK);
	run_client(_metadata, "deadlock", ARGS("PTO2_RING_TASK_WINDOW=16"),
		   ARGS("deadlock", "33"), ARGS("deadlock/33"),
		   ARGS(want, "Deadlock"));
}

TEST_F_TIMEOUT(e2e, badbuf_refused, 150)
{
	char want[32];

	snprintf(want, sizeof(want), "status=%d ", -EACCES);
	run_client(_metadata, "badbuf", NULL, ARGS("badbuf"), ARGS("badbuf"),
		   ARGS(want));
}

/*
 * The checking mode (PTO_GRAPH_CHECK): an intermediate used after its
 * scope, a read of an intermediate's unwritten half and two unordered
 * writes of one buffer each fail their graph with the hazard named; the
 * same work without a hazard runs.
 */
TEST_F_TIMEOUT(e2e, check_mode_refuses_hazards, 150)
{
	run_client(_metadata, "hazards", NULL, ARGS("hazards"),
		   ARGS("hazard/scope", "hazard/unwritten", "hazard/waw",
			"hazard/ordered"), NULL);
}

/*
 * Random programs (daemon/tests/random_dag.h: tiles of external tensors
 * and intermediates read, written and updated, several blocks a task)
 * give their sequential result through ptod, streamed and static graphs in
 * turns, three clients at once: one with the defaults, one with a 4 KiB
 * heap, a window of 32 tasks and 512 dependency entries (the
 * orchestrator waits for retirement, a static graph's hold ends early,
 * the heap wraps), one in the checking
 * mode, which must find nothing (on pto.ko a local user's, so its
 * kernels run in a sandbox).
 */
TEST_F_TIMEOUT(e2e, random_programs_sequential_result, 300)
{
	static const char *const who[] = { "defaults", "small", "checked" };
	const char *const *env[] = {
		NULL,
		ARGS("PTO2_RING_HEAP=4096", "PTO2_RING_TASK_WINDOW=32",
		     "PTO2_RING_DEP_POOL=512"),
		ARGS("PTO_CHECK=1", "PTO2_RING_HEAP=65536"),
	};
	const char *const *args[] = {
		ARGS("random", "10", "1", "200", "both"),
		ARGS("random", "10", "1001", "200", "both"),
		ARGS("random", "10", "2001", "150", "both"),
	};
	struct proc c[3];
	int i, n, ret[3];

	for (n = 0; n < 3; n++) {
		ret[n] = e2e_start_as(&c[n], who[n], n == 2 && !E->user ?
				      NOBODY : 0, false, env[n], args[n]);
		if (ret[n])
			break;
	}
	for (i = 0; i < n; i++)
		ret[i] = proc_wait(&c[i], CLIENT_MS);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, ret[i]) TH_LOG("pto_e2e random (%s): %s", who[i],
					    strerror(-ret[i]));
		EXPECT_TRUE(exited_ok(&c[i]))
			TH_LOG("pto_e2e random (%s): wait status 0x%x",
			       who[i], c[i].status);
		EXPECT_TRUE(case_passed(c[i].text, "random/programs"))
			TH_LOG("pto_e2e random (%s): %s", who[i], c[i].text);
		proc_free(&c[i]);
	}
	ASSERT_EQ(3, n) TH_LOG("start pto_e2e random (%s): %s", who[n],
			       strerror(-ret[n]));
}

/* PTO_CHECK=1 finds nothing wrong in paged attention: no false alarm. */
TEST_F_TIMEOUT(e2e, check_mode_passes_examples, 300)
{
	run_client(_metadata, "pa", ARGS("PTO_CHECK=1"), ARGS("pa"),
		   ARGS("paged_attention/Case1", "paged_attention/Case2",
			"paged_attention/CaseBatch256",
			"paged_attention/CaseBatch256Ctx33",
			"paged_attention/CaseVarLen"), NULL);
}

/*
 * Defect 4, as a local user: a client frees the stream buffer and the
 * kernel blob it handed ptod, and another tenant allocates all of GM. The
 * tenant gets none of that memory while ptod holds it (ptod pins it), so
 * ptod never writes the tenant's; it returns once the client is gone.
 */
TEST_F_TIMEOUT(e2e, freed_buffers_stay_pinned, 150)
{
	run_as_nobody(_metadata, "freed");
}

/*
 * The same with a tensor: freed by its client while the run that uses it
 * goes on (after a task of the run wrote it, before another names it).
 */
TEST_F_TIMEOUT(e2e, freed_tensor_stays_pinned, 150)
{
	run_as_nobody(_metadata, "freed-tensor");
}

/*
 * A JIT-style client, as a local user under its GM quota (QUOTA_MIB):
 * it loads one kernel id again and again, each time from a fresh blob
 * (libpto frees the one it replaces), and runs a task of it. Its blobs
 * add up to more than the quota: every load and run passes only if ptod
 * lets go of each replaced blob, which it pinned.
 */
TEST_F_TIMEOUT(e2e, kernel_reload_unpins_old_blob, 150)
{
	if (E->user)
		SKIP(return, "the user-mode device has no GM quota (ptod -q)");
	run_client_as(_metadata, "reload-quota", NOBODY, ARGS("PTO2_RING_HEAP=65536"),
		      ARGS("reload-quota", STR(RELOAD_QUOTA_COUNT), STR(RELOAD_QUOTA_MIB)),
		      ARGS("reload-quota"), NULL);
}

/*
 * A kernel id registered again while a task of its old blob runs, and
 * the old blob's buffer freed at once (a raw client: libpto waits for its
 * graphs to end before it frees a replaced blob): another tenant that
 * allocates all of GM gets none of the old blob while that run is in
 * flight (ptod hands its pin to the run), the run completes (its next
 * task runs the new blob), and the memory comes back after it. As root:
 * its kernels run in pto-aicore, which holds no buffer of the client's
 * (a sandbox's mapping of the blob would keep it allocated by itself).
 */
TEST_F_TIMEOUT(e2e, kernel_reload_in_flight_run_passes, 150)
{
	run_client(_metadata, "reload-busy", NULL, ARGS("reload-busy"),
		   ARGS("reload-busy"), NULL);
}

/*
 * During a run, 300 registrations of its kernel from buffers that hold no
 * blob are each refused, and a good blob then still replaces the kernel:
 * a failed registration's pin is not one of the run's replaced blobs, of
 * which ptod takes at most 256 (a raw client: libpto checks images).
 */
TEST_F_TIMEOUT(e2e, kernel_reload_failures_not_counted, 150)
{
	run_client(_metadata, "reload-failed", NULL, ARGS("reload-failed"),
		   ARGS("reload-failed"), NULL);
}

/*
 * Two kernels from one buffer: when one moves to another buffer and the
 * client frees the first, ptod keeps it pinned for the other (another
 * tenant filling GM gets none of it, and that kernel still runs), and
 * lets it go once the other moves too. As root (kernels in pto-aicore).
 */
TEST_F_TIMEOUT(e2e, kernel_blob_buffer_shared_stays_pinned, 150)
{
	run_client(_metadata, "kshare", NULL, ARGS("kshare"), ARGS("kshare"),
		   NULL);
}

/*
 * The user-mode device's pins (user-device.rst, "Pins"), as root: a
 * client frees a buffer that a task of its open graph wrote, and its
 * stream buffer, while connected; another tenant that allocates all of
 * GM gets none of either, the client's next task naming the freed buffer
 * runs or gets -EACCES and writes none of the tenant's buffers, and the
 * freed buffer's memory comes back once the graph is over (pto_e2e
 * freed-named). Once the client is gone, the device's counters are back
 * at idle and no pin is left. (Before, the stale pin let that task write
 * the other tenant's buffer.) pto.ko's pins: freed_buffers_stay_pinned
 * and freed_tensor_stays_pinned, as nobody.
 */
TEST_F_TIMEOUT(e2e, freed_named_buffers_stay_pinned, 150)
{
	uint64_t used = 0, bufs = 0, pins = 0;
	bool idle;

	if (!E->user)
		SKIP(return, "on pto.ko: freed_buffers_stay_pinned, freed_tensor_stays_pinned");
	run_client(_metadata, "freed-named", NULL, ARGS("freed-named"),
		   ARGS("freed-named"), NULL);
	idle = wait_gm_idle(10000, &used, &bufs);
	EXPECT_TRUE(idle) TH_LOG("gm_bytes_used %llu (idle %llu), gm_buffers %llu (idle %llu) once the client is gone",
				 (unsigned long long)used,
				 (unsigned long long)E->gm_idle,
				 (unsigned long long)bufs,
				 (unsigned long long)E->bufs_idle);
	EXPECT_EQ(0, counter("pins", &pins));
	EXPECT_EQ(0, pins) TH_LOG("%llu pins left", (unsigned long long)pins);
}

/*
 * libpto, loading a kernel id again while a task of its old blob runs,
 * keeps the old blob's buffer until that graph is over (a sandbox could
 * not map it any more), then frees it: what libpto maps of GM shows when
 * (ptod's pin of the old blob for that run keeps it in the device's
 * count either way). On the user-mode device only: it checks libpto,
 * which is the same on both devices. Loaded again and again while that
 * graph runs, the 257th replaced blob is refused with -EBUSY (ptod keeps
 * each pinned for the run), and a load after the graph passes.
 */
TEST_F_TIMEOUT(e2e, kernel_reload_freed_after_graph, 150)
{
	if (!E->user)
		SKIP(return, "checks libpto, the same on both devices: on the user-mode device only");
	run_client(_metadata, "reload-defer", NULL, ARGS("reload-defer"),
		   ARGS("reload-defer", "reload-cap"), NULL);
}

/*
 * Defect 3: pto-aicore dies while a run is in flight and, before ptod has
 * noticed, someone attaches every core (CORE_ATTACH resets the cores'
 * registers, erasing the in-flight dispatch). The run still ends, its
 * task failed with -EOWNERDEAD or refused (ptod withholds cores another
 * executor attached, from its netlink event on); pto-aicore cannot come back while the cores are held, and
 * does by itself once they are let go: the next run passes. (A local
 * user cannot attach cores at all: unprivileged_user_refused.)
 */
TEST_F_TIMEOUT(e2e, stolen_cores_run_fails_next_passes, 240)
{
	struct pto_set_role sr = { .size = sizeof(sr),
				   .role = PTO_ROLE_EXECUTOR };
	struct pto_cores all = { .size = sizeof(all) };
	struct proc s;
	pid_t exec;
	int fd, ret;
	unsigned int i;

	if (E->user)
		SKIP(return, "needs pto.ko's node, to attach the cores from outside");
	for (i = 0; i < E->nr_cores; i++)
		all.mask[i / 64] |= 1ULL << (i % 64);
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PTO_IOC_SET_ROLE, &sr));
	ASSERT_EQ(0, e2e_start(&s, "victim", true, NULL, ARGS("stream", "60")));
	ret = proc_ready(&s, READY_MS);
	exec = executor_pid_settled();
	if (ret || exec <= 0)
		proc_free(&s);
	ASSERT_EQ(0, ret);
	ASSERT_LT(0, exec);
	/* ptod must not see the death before the cores are taken */
	ASSERT_EQ(0, kill(E->ptod, SIGSTOP));
	EXPECT_EQ(0, kill(exec, SIGKILL));
	for (i = 0; i < 1000 && ioctl(fd, PTO_IOC_CORE_ATTACH, &all); i++)
		usleep(10000);
	EXPECT_EQ(0, kill(E->ptod, SIGCONT));
	EXPECT_GT(1000, i) TH_LOG("CORE_ATTACH after the executor's death: %s",
				  strerror(errno));
	ret = proc_wait(&s, 60000);
	EXPECT_EQ(0, ret) TH_LOG("the run on the stolen cores never ended");
	/*
	 * "kernel K failed with -130 (task T on core C)", or, for a task
	 * the engine planned onto a stolen core after ptod had the attach
	 * event, "... core C is attached by another executor"
	 */
	EXPECT_TRUE(has_text(s.text, "failed with -130 ") ||
		    has_text(s.text, "is attached by another executor"));
	proc_free(&s);
	close(fd);
	vector_passes(_metadata, "after");
	note("pto-aicore pid: %d before, %d now", exec, executor_pid());
	EXPECT_NE(exec, executor_pid());
	EXPECT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
}

/*
 * Defect 2, through the real node (root:pto 0660) as a local user in the
 * device's group: no AICPU or executor role, no GM beyond its own
 * buffers, no register file, no pins (pto_e2e unpriv).
 */
TEST_F_TIMEOUT(e2e, unprivileged_user_refused, 60)
{
	run_as_nobody(_metadata, "unpriv");
}

/* Malformed messages on the socket: clear errors, nothing lost. */
TEST_F_TIMEOUT(e2e, proto_malformed_messages, 150)
{
	static const struct {
		const char *what;
		int err;
		const char *text;	/* how ptod's reply begins */
	} want[] = {
		{ "short message", EPROTO, "short message" },
		{ "long message", EPROTO, "message of " },
		{ "ping before hello", EPROTO, "hello first" },
		{ "hello without a file", EBADF, "hello without" },
		{ "hello with /dev/null", ENODEV, "" },
		{ "hello with another wire version", EPROTO, "protocol version" },
	};
	char line[96];
	struct proc p;
	unsigned int i;

	ASSERT_EQ(0, e2e_start(&p, "proto", false, NULL, ARGS("proto")));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&p));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(line, sizeof(line), "%s: %d \"%s", want[i].what,
			 -want[i].err, want[i].text);
		EXPECT_TRUE(line_with(p.text, line)) TH_LOG("no \"%s\"", line);
	}
	proc_free(&p);
}

/* ---- clients that misbehave, access control, limits ---------------------------- */

#define FLOODERS	3
#define PINGS		400
/*
 * Generous: while flooded, ptod answers PINGS pings in a few seconds, even
 * on TCG (2 s measured). The old ptod waited a second on each flooding
 * connection whose socket was full: 84 s.
 */
#define PINGS_MS	30000

/*
 * FLOODERS processes (unprivileged, 4 connections each) ping ptod without
 * ever reading a reply, connecting again each time ptod drops one: the
 * first as fast as ptod takes them (dropped when its queue is full), the
 * others 600 per connection, more than the socket holds (about 330 on
 * the VM) but less than the queue does (dropped when they take none of
 * their replies in time). Meanwhile another client's PINGS pings, each
 * waiting for its reply, take less than PINGS_MS, and every flooder was
 * dropped.
 */
TEST_F_TIMEOUT(e2e, flood_does_not_stall_others, 300)
{
	struct proc f[FLOODERS], v;
	int i, n, ret = 0;
	int64_t t0, dt;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);

	for (n = 0; n < FLOODERS && !ret; n++) {
		ret = e2e_start_as(&f[n], "flooder", NOBODY, true, NULL,
				   ARGS("flood", "300", n ? "600" : "0"));
		if (!ret)
			ret = proc_ready(&f[n], READY_MS);
		if (ret)
			proc_free(&f[n]);
	}
	if (ret)
		for (i = 0; i < n - 1; i++)
			proc_free(&f[i]);
	ASSERT_EQ(0, ret) TH_LOG("flooder %d: %s", n, strerror(-ret));
	t0 = mono_ms();
	ret = e2e_start_as(&v, "pinger", NOBODY, false, NULL,
			   ARGS("pings", STR(PINGS)));
	if (!ret)
		ret = proc_wait(&v, CLIENT_MS);
	dt = mono_ms() - t0;
	for (i = 0; i < FLOODERS; i++) {
		if (kill(f[i].pid, SIGTERM))
			note("kill flooder: %s", strerror(errno));
		EXPECT_EQ(0, proc_wait(&f[i], CLIENT_MS));
		EXPECT_TRUE(has_text(f[i].text, "flood: dropped "));
		proc_free(&f[i]);
	}
	note("%d pings while %d clients flooded: %lld ms", PINGS, FLOODERS,
	     (long long)dt);
	EXPECT_EQ(0, ret) TH_LOG("pinger: %s", strerror(-ret));
	EXPECT_TRUE(exited_ok(&v));
	EXPECT_TRUE(case_passed(v.text, "pings"));
	EXPECT_LT(dt, PINGS_MS) TH_LOG("the flooders stalled ptod");
	proc_free(&v);
}

/* ---- descriptors a client passes ------------------------------------------------ */

/* How long ptod may take to answer while a passed descriptor closes */
#define LINGER_PROBE_MS	5000
/* A passed socket's last close would wait an hour (lingering_socket()) */
#define LINGER_S	3600

/*
 * PING on a new connection: ptod's reply's status (before a hello:
 * -EPROTO, "hello first") if it answers within @ms, else -ETIMEDOUT or
 * another -errno; *@answered says which.
 */
static int ptod_ping_within(int ms, bool *answered)
{
	int s, st = -ETIMEDOUT;

	s = ping_conn();
	if (s < 0) {
		*answered = false;
		return s;
	}
	*answered = got_reply(s, ms, &st);
	close(s);
	return st;
}

/*
 * Is a thread of ptod inside close() (/proc/PID/task/TID/syscall): one
 * whose last close waits, as a lingering socket's does? 1, 0, or -errno.
 */
static int ptod_in_close_now(void)
{
	char path[64];
	struct dirent *de;
	int ret = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)E->ptod);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir))) {
		char f[sizeof(path) + 256 + 16];
		long nr = -1;
		FILE *fp;

		if (de->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/syscall", path, de->d_name);
		fp = fopen(f, "re");
		if (!fp) {
			ret = -errno;
			break;
		}
		if (fscanf(fp, "%ld", &nr) == 1 && nr == SYS_close)
			ret = 1;
		fclose(fp);
	}
	closedir(dir);
	return ret;
}

/*
 * ptod_in_close_now(), asked until it says 1 or @ms have passed: the
 * closer may not have reached close() yet. Its last answer.
 */
static int ptod_in_close_within(int ms)
{
	int64_t t0 = mono_ms();
	int ret;

	while ((ret = ptod_in_close_now()) == 0 && mono_ms() - t0 < ms)
		usleep(10000);
	return ret;
}

/* How a passed descriptor reaches ptod */
enum linger_how {
	LINGER_PING,		/* with a PING */
	LINGER_THIRD,		/* the third of three, with a PING */
	LINGER_HELLO,		/* as a hello's device file */
	LINGER_MANY,		/* LINGER_NR of them with a PING */
	LINGER_AFTER_EMPTY,	/* with a PING after two empty messages */
};

/*
 * Well past what ptod lets a user have closing (PTOD_CLOSING_MAX, 16):
 * the connection that passed them is dropped, the user's next refused
 */
#define LINGER_NR	32

/*
 * After LINGER_MANY (child): @s, which passed them, is dropped, and a new
 * connection of the same user is refused with -EUSERS. 0, or an exit
 * code saying what went wrong.
 */
static int lingering_user_refused(int s)
{
	struct pto_msg m;
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	bool answered;
	int ret;

	/* no reply: the connection is hung up on */
	if (poll(&pfd, 1, LINGER_PROBE_MS) != 1 ||
	    recv(s, &m, sizeof(m), 0) != 0)
		return 20;
	ret = ptod_ping_within(LINGER_PROBE_MS, &answered);
	if (!answered || ret != -EUSERS) {
		dprintf(2, "the user's next connection: %s\n", strerror(-ret));
		return 21;
	}
	return 0;
}

/* What a test checks while a passed socket lingers in ptod's close() */
typedef void (*linger_meanwhile_t)(struct __test_metadata *_metadata);

/*
 * In a child (as @uid, in the device's group if @in_group; 0: root), pass
 * ptod a lingering socket (@how), with ptod stopped until the child has
 * closed its own copy: ptod's is then the last. While the child keeps the
 * socket's peer, ptod must answer another connection's PING at once, and
 * @meanwhile (if any) runs once ptod is seen in the lingering close.
 */
static void pass_lingering(struct __test_metadata *_metadata,
			   const char *what, enum linger_how how, uid_t uid,
			   bool in_group, linger_meanwhile_t meanwhile)
{
	int sent[2], done[2], ret, st;
	bool answered;
	int64_t t0, dt;
	char b = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe2(sent, O_CLOEXEC));
	if (pipe2(done, O_CLOEXEC)) {
		close(sent[0]);
		close(sent[1]);
		ASSERT_TRUE(false) TH_LOG("pipe2: %s", strerror(errno));
	}
	E->ptod_stopped = true;
	ASSERT_EQ(0, kill(E->ptod, SIGSTOP));
	pid = fork();
	if (pid == 0) {
		struct pto_msg m = { .type = PTO_MSG_PING };
		union pto_fd_cmsg_any cm;
		struct iovec iov = { &m, sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		int fds[LINGER_NR], peer[LINGER_NR], nfds = 1, s, i;

		if (uid && pto_become_user(uid, in_group))
			_exit(10);
		if (how == LINGER_MANY)
			nfds = LINGER_NR;
		for (i = 0; i < nfds; i++) {
			fds[i] = lingering_socket(&peer[i], LINGER_S);
			if (fds[i] < 0)
				_exit(11);
		}
		if (how == LINGER_THIRD) {
			fds[2] = fds[0];
			fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
			fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
			nfds = 3;
		} else if (how == LINGER_HELLO) {
			m.type = PTO_MSG_HELLO;
			m.u.hello.wire_version = PTO_WIRE_VERSION;
		}
		s = ptod_dial();
		if (s < 0)
			_exit(12);
		/*
		 * ptod reads the first as the end of the connection, then
		 * the second, 0 bytes as the end is, when it drains the socket
		 */
		for (i = 0; how == LINGER_AFTER_EMPTY && i < 2; i++)
			if (send(s, &b, 0, MSG_NOSIGNAL) < 0)
				_exit(16);
		pto_msg_attach_any(&mh, &cm, fds, nfds);
		if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
			_exit(13);
		/* in flight only: ptod's close will be the last */
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		if (write(sent[1], &b, 1) != 1)
			_exit(14);
		ret = how == LINGER_MANY ? lingering_user_refused(s) : 0;
		if (read(done[0], &b, 1) != 1)
			_exit(15);
		/* a close still waiting ends */
		for (i = 0; i < (how == LINGER_MANY ? LINGER_NR : 1); i++)
			close(peer[i]);
		_exit(ret);
	}
	if (pid < 0) {
		EXPECT_EQ(0, kill(E->ptod, SIGCONT));
		E->ptod_stopped = false;
		close(sent[0]);
		close(sent[1]);
		close(done[0]);
		close(done[1]);
	}
	ASSERT_LT(0, pid);
	close(sent[1]);
	close(done[0]);
	ret = read(sent[0], &b, 1);
	EXPECT_EQ(0, kill(E->ptod, SIGCONT));
	E->ptod_stopped = false;
	EXPECT_EQ(1, ret) TH_LOG("%s: the child did not pass the socket", what);
	t0 = mono_ms();
	ret = ptod_ping_within(LINGER_PROBE_MS, &answered);
	dt = mono_ms() - t0;
	note("%s: %s in %lld ms (status %d)", what,
	     answered ? "ptod answered a PING" : "no answer", (long long)dt,
	     ret);
	EXPECT_TRUE(answered) TH_LOG("%s: ptod did not answer: %s", what,
				     strerror(-ret));
	/*
	 * The socket still lingers, held by the closer: else this proved
	 * nothing (the old ptod has closed it, blocked, and does not answer).
	 * The closer may not have reached close() when the PING's answer
	 * left the main thread: a lingering close is seen within a while.
	 */
	ret = ptod_in_close_within(LINGER_PROBE_MS);
	EXPECT_EQ(1, ret) TH_LOG("%s: no thread of ptod in close() (%d): did the socket linger?",
				 what, ret);
	if (meanwhile && ret == 1)
		meanwhile(_metadata);
	if (write(done[1], &b, 1) != 1)
		note("%s: the child is gone", what);
	close(done[1]);
	close(sent[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("%s: child wait status %#x", what, st);
}

/*
 * ptod holds no more descriptors than @before within 5 s (what it closes
 * may still be on its way); else where they point is logged, @when.
 */
static void expect_fds_back(struct __test_metadata *_metadata, int before,
			    const char *when)
{
	int now, i;

	for (i = 0; i < 100; i++) {
		now = ptod_quiet_fds();
		if (now <= before)
			break;
		usleep(50000);
	}
	EXPECT_GE(before, now) TH_LOG("%s: ptod holds %d descriptors, %d before",
				      when, now, before);
	if (now > before)
		log_fds(_metadata, E->ptod, when);
}

/*
 * A client can pass ptod any descriptor, and the last close of some waits
 * as long as their maker wishes: here a TCP socket lingering on data its
 * peer never reads, an hour. ptod closes what it does not keep off its
 * main thread, so it answers others meanwhile: the socket passed with a
 * PING, after two empty messages (the first ends the connection; the
 * second, 0 bytes as the end is, was taken for it, and the socket closed
 * on the main thread), as the third of three descriptors (ptod used to
 * take two and let the kernel close the rest inside recvmsg()), as a
 * hello's device file,
 * by root and by a local user. A user who passes LINGER_NR of them at
 * once has that connection dropped and the next refused (-EUSERS) while
 * they close; others are still served. Once the peers are gone, ptod
 * holds no more descriptors than before.
 */
TEST_F_TIMEOUT(e2e, passed_descriptor_close_never_waits, 120)
{
	int before;

	/* a child that failed early: its pipe's end is closed */
	signal(SIGPIPE, SIG_IGN);
	before = ptod_quiet_fds();
	ASSERT_LT(0, before);
	pass_lingering(_metadata, "with a PING", LINGER_PING, 0, false, NULL);
	pass_lingering(_metadata, "third of three", LINGER_THIRD, 0, false,
		       NULL);
	pass_lingering(_metadata, "after two empty messages",
		       LINGER_AFTER_EMPTY, 0, false, NULL);
	pass_lingering(_metadata, "as a hello's file", LINGER_HELLO, 0, false,
		       NULL);
	pass_lingering(_metadata, "by a local user", LINGER_PING, NOBODY, true,
		       NULL);
	pass_lingering(_metadata, "many by a local user", LINGER_MANY, NOBODY,
		       true, NULL);
	expect_fds_back(_metadata, before, "after the passed sockets");
}

/* Send a PING on @s carrying the @n descriptors @fds: 0 or -errno */
static int ping_passing(int s, const int *fds, unsigned int n)
{
	struct pto_msg m = { .type = PTO_MSG_PING };
	struct iovec iov = { &m, offsetof(struct pto_msg, text) + 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg_any cm;

	pto_msg_attach_any(&mh, &cm, fds, n);
	return sendmsg(s, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Another local user, who passes descriptors while NOBODY's close is stuck */
#define CLOSE_OTHER_UID	65529
/*
 * Descriptors it passes, one at a time: more than a user may have closing
 * (PTOD_CLOSING_MAX, 16), so that were they to wait behind NOBODY's, its
 * connections would also be refused
 */
#define CLOSE_OTHER_NR	20

/*
 * CLOSE_OTHER_NR times (child, as CLOSE_OTHER_UID): a PING on a new
 * connection with a pipe's write end, whose own copy it then closes. ptod
 * must answer, and close its copy (the read end sees the end) within
 * LINGER_PROBE_MS. 0, or an exit code saying what went wrong.
 */
static int other_user_closes(void)
{
	static const char *const what[] = {
		[21] = "cannot connect", [22] = "cannot send",
		[23] = "no answer", [24] = "ptod did not close it",
	};
	struct pollfd pfd = { .events = POLLIN };
	int p[2], s, i, ret = 0;
	char b;

	for (i = 0; i < CLOSE_OTHER_NR && !ret; i++) {
		if (pipe2(p, O_CLOEXEC))
			return 20;
		s = ptod_dial();
		if (s < 0)
			ret = 21;
		else if (ping_passing(s, &p[1], 1))
			ret = 22;
		close(p[1]);
		if (!ret && !got_reply(s, LINGER_PROBE_MS, NULL))
			ret = 23;
		pfd.fd = p[0];
		if (!ret && (poll(&pfd, 1, LINGER_PROBE_MS) != 1 ||
			     read(p[0], &b, 1) != 0))
			ret = 24;
		if (ret)
			dprintf(2, "descriptor %d of %d: %s\n", i + 1,
				CLOSE_OTHER_NR, what[ret]);
		if (s >= 0)
			close(s);
		close(p[0]);
	}
	return ret;
}

/* other_user_closes() in a child as CLOSE_OTHER_UID, timed */
static void other_user_meanwhile(struct __test_metadata *_metadata)
{
	int64_t t0 = mono_ms();
	pid_t pid;
	int st;

	pid = fork();
	if (pid == 0)
		_exit(pto_become_user(CLOSE_OTHER_UID, true) ? 10 :
		      other_user_closes());
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	note("uid %d: %d descriptors passed in %lld ms, wait status %#x",
	     CLOSE_OTHER_UID, CLOSE_OTHER_NR, (long long)(mono_ms() - t0), st);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("uid %d: not each passed descriptor was answered and closed",
		       CLOSE_OTHER_UID);
}

/*
 * Each user's descriptors are closed in a lane of their own: while a
 * local user's passed socket lingers in ptod's close(), another user
 * passes CLOSE_OTHER_NR descriptors, and ptod closes each at once (and
 * never refuses that user for descriptors still closing).
 */
TEST_F_TIMEOUT(e2e, stuck_close_holds_up_its_user_alone, 120)
{
	int before;

	signal(SIGPIPE, SIG_IGN);
	before = ptod_quiet_fds();
	ASSERT_LT(0, before);
	pass_lingering(_metadata, "by a local user", LINGER_PING, NOBODY, true,
		       other_user_meanwhile);
	expect_fds_back(_metadata, before, "after the passed socket");
}

/*
 * Connections a local user makes while one of its passed descriptors is
 * stuck closing, each with a descriptor in its queue: ptod refuses them
 * (the user has too many closing), and the closer would hold each one's
 * socket. ptod takes no more once the closer holds PTOD_CLOSER_MAX (256):
 * it may then hold the user's connections (-c, 16) and one message's
 * descriptors more, well within FLOOD_HELD_MAX.
 */
#define FLOOD_CONNS	1024
#define FLOOD_HELD_MAX	640

#define FLOOD_STALL_MS	1000	/* the flood ends after no connection that long */

/*
 * The flood (child, as NOBODY): up to FLOOD_CONNS connections, each
 * sending a PING with a descriptor. While ptod's backlog is full, it
 * tries again, until FLOOD_STALL_MS pass with none made. The sockets into
 * *@socks (-1: none); how many were sent into *@sent. 0 or -errno.
 */
static int flood_conns(int *socks, int *sent)
{
	int64_t last = mono_ms();
	int null, i, ret = 0;

	*sent = 0;
	for (i = 0; i < FLOOD_CONNS; i++)
		socks[i] = -1;
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0)
		return -errno;
	for (i = 0; i < FLOOD_CONNS; i++) {
		socks[i] = ptod_dial_path(E->sock, SOCK_SEQPACKET |
					  SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (socks[i] == -EAGAIN &&
		    mono_ms() - last < FLOOD_STALL_MS) {
			usleep(1000);
			i--;
			continue;
		}
		if (socks[i] < 0) {
			/* -EAGAIN: none made for FLOOD_STALL_MS, the end */
			ret = socks[i] == -EAGAIN ? 0 : socks[i];
			socks[i] = -1;
			break;
		}
		last = mono_ms();
		if (ping_passing(socks[i], &null, 1)) {
			close(socks[i]);
			socks[i] = -1;
			continue;
		}
		(*sent)++;
	}
	close(null);
	return ret;
}

/*
 * Descriptors a connection passes with one PING while the closer is full:
 * fewer than a user may have closing (PTOD_CLOSING_MAX, 16), so that the
 * connection is answered once they are closed, not dropped
 */
#define FLOOD_PASS_NR	12

/* Send a PING on @s with FLOOD_PASS_NR descriptors (/dev/null): 0 or -errno */
static int ping_with_fds(int s)
{
	int fds[FLOOD_PASS_NR], null, i, ret;

	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0)
		return -errno;
	for (i = 0; i < FLOOD_PASS_NR; i++)
		fds[i] = null;
	ret = ping_passing(s, fds, FLOOD_PASS_NR);
	close(null);
	return ret;
}

/*
 * A close that never ends holds the closer; a local user then makes
 * FLOOD_CONNS connections, each with a descriptor in its queue. ptod must
 * hold a bounded number of descriptors (it stops accepting, and reading
 * what carries descriptors, while the closer is full: a connection it has
 * that passes FLOOD_PASS_NR more waits), still answer a connection it
 * has, and be itself again once the close ends.
 */
TEST_F_TIMEOUT(e2e, stuck_close_bounds_what_ptod_holds, 180)
{
	int sent[2], go[2], before, peak = 0, now = 0, st, i, *socks;
	struct rlimit rl;
	bool answered;
	int keep, waiter, settled;
	int64_t t0;
	char b = 0;
	pid_t pid;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < FLOOD_CONNS + 64)
		SKIP(return, "RLIMIT_NOFILE's hard limit %llu is below %d",
		     (unsigned long long)rl.rlim_max, FLOOD_CONNS + 64);
	signal(SIGPIPE, SIG_IGN);
	before = ptod_quiet_fds();
	ASSERT_LT(0, before);
	keep = ping_conn();
	ASSERT_LE(0, keep) TH_LOG("ping: %s", strerror(-keep));
	EXPECT_TRUE(got_reply(keep, LINGER_PROBE_MS, NULL));
	waiter = ptod_dial();
	ASSERT_LE(0, waiter) TH_LOG("dial: %s", strerror(-waiter));
	ASSERT_EQ(0, pipe2(sent, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	/* stopped until the child has closed its copy: ptod's is the last */
	E->ptod_stopped = true;
	ASSERT_EQ(0, kill(E->ptod, SIGSTOP));
	pid = fork();
	if (pid == 0) {
		int ling, peer, s, n = 0;

		socks = calloc(FLOOD_CONNS, sizeof(*socks));
		rl.rlim_cur = rl.rlim_max;
		if (!socks || setrlimit(RLIMIT_NOFILE, &rl) ||
		    pto_become_user(NOBODY, true))
			_exit(10);
		ling = lingering_socket(&peer, LINGER_S);
		s = ptod_dial();
		if (ling < 0 || s < 0)
			_exit(11);
		if (ping_passing(s, &ling, 1))
			_exit(12);
		close(ling);
		if (write(sent[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(13);
		if (flood_conns(socks, &n))
			_exit(14);
		if (write(sent[1], &n, sizeof(n)) != sizeof(n) ||
		    read(go[0], &b, 1) != 1)
			_exit(15);
		/* the close ends; ptod may take what waits */
		close(peer);
		for (i = 0; i < FLOOD_CONNS; i++)
			if (socks[i] >= 0)
				close(socks[i]);
		_exit(0);
	}
	if (pid < 0) {
		EXPECT_EQ(0, kill(E->ptod, SIGCONT));
		E->ptod_stopped = false;
	}
	ASSERT_LT(0, pid);
	close(sent[1]);
	close(go[0]);
	st = read(sent[0], &b, 1);
	EXPECT_EQ(0, kill(E->ptod, SIGCONT));
	E->ptod_stopped = false;
	ASSERT_EQ(1, st) TH_LOG("the child did not pass the lingering socket");
	/* the closer is stuck in the lingering close before the flood */
	st = ptod_in_close_within(LINGER_PROBE_MS);
	EXPECT_EQ(1, st) TH_LOG("no thread of ptod in close() (%d)", st);
	ASSERT_EQ(1, write(go[1], &b, 1));
	ASSERT_EQ((ssize_t)sizeof(i), read(sent[0], &i, sizeof(i)))
		TH_LOG("the flood failed");
	/* what ptod holds settles while it reads what it still may */
	for (t0 = mono_ms(); mono_ms() - t0 < 1000; usleep(50000)) {
		now = proc_entries(E->ptod, "fd");
		peak = now > peak ? now : peak;
	}
	note("%d of %d connections sent a descriptor; ptod holds %d descriptors (%d before, %d at most since)",
	     i, FLOOD_CONNS, now, before, peak);
	EXPECT_LE(peak - before, FLOOD_HELD_MAX)
		TH_LOG("ptod holds %d descriptors, %d before", peak, before);
	/* a connection ptod has is still answered: its loop does not wait */
	EXPECT_LT(0, send(keep, &(struct pto_msg){ .type = PTO_MSG_PING },
			  offsetof(struct pto_msg, text) + 1, MSG_NOSIGNAL));
	EXPECT_TRUE(got_reply(keep, LINGER_PROBE_MS, NULL))
		TH_LOG("ptod did not answer a PING during the flood");
	close(keep);
	/* nor does it read what a connection it has passes */
	settled = ptod_quiet_fds();
	EXPECT_EQ(0, ping_with_fds(waiter));
	usleep(300000);
	now = ptod_quiet_fds();
	EXPECT_GT(FLOOD_PASS_NR / 2, now - settled)
		TH_LOG("ptod took %d descriptors while the closer was full",
		       now - settled);
	EXPECT_EQ(1, write(go[1], &b, 1));
	close(go[1]);
	close(sent[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("child wait status %#x", st);
	/* the close has ended: ptod accepts again, and holds what it did */
	st = ptod_ping_within(10 * LINGER_PROBE_MS, &answered);
	EXPECT_TRUE(answered) TH_LOG("no answer after the flood: %s",
				     strerror(-st));
	/* the connection that waited is read again */
	EXPECT_TRUE(got_reply(waiter, LINGER_PROBE_MS, NULL))
		TH_LOG("the PING that waited for the closer got no answer");
	close(waiter);
	expect_fds_back(_metadata, before, "after the flood");
}

/* pto_e2e @args as @uid (@in_group: in the device's group); its output. */
static char *e2e_output(struct __test_metadata *_metadata, uid_t uid,
			bool in_group, const char *const args[])
{
	struct proc p;
	char *text;
	int ret;

	ret = e2e_start_grp(&p, args[0], uid, in_group, false, NULL, args);
	if (!ret)
		ret = proc_wait(&p, CLIENT_MS);
	EXPECT_EQ(0, ret) TH_LOG("pto_e2e %s: %s", args[0], strerror(-ret));
	text = p.text ? p.text : strdup("");
	p.text = NULL;
	proc_free(&p);
	return text;
}

/*
 * Lines of ptod's log from byte @from on that hold @needle: in all (the
 * return value), and of them those that begin with it in *@bare.
 */
static int log_lines_with(off_t from, const char *needle, int *bare)
{
	FILE *f = fopen(E->log, "re");
	char line[4200];
	int n = 0;

	*bare = 0;
	if (f && fseeko(f, from, SEEK_SET)) {
		fclose(f);
		f = NULL;
	}
	while (f && fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, needle);

		if (!p)
			continue;
		n++;
		*bare += p == line;
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * pto-sandbox is executable by every user and readable by none (mode
 * 0711): a process whose user cannot read its binary is not dumpable from
 * its exec on, so no other sandbox of the same uid can open its
 * descriptors through /proc before it has made itself non-dumpable. ptod
 * warns at start about a readable one: its log has no such line.
 */
TEST_F_TIMEOUT(e2e, sandbox_binary_unreadable, 30)
{
	char path[PATH_MAX + 48];
	struct stat st;
	int bare;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	snprintf(path, sizeof(path), "%s/daemon/pto-sandbox", E->build);
	ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s: %s", path, strerror(errno));
	note("%s: mode %04o", path, (unsigned int)(st.st_mode & 07777));
	EXPECT_EQ(0, st.st_mode & (S_IRGRP | S_IROTH));
	EXPECT_EQ(S_IXOTH, st.st_mode & S_IXOTH);
	EXPECT_EQ(0, log_lines_with(0, "owned by root, mode 0711", &bare));
}

/*
 * Wait until ptod's log has not grown for @quiet_ms (up to @max_ms): then
 * no line about connections was even tried for a whole second, and the
 * next ones are logged (ptod_conn_log() logs at most 100 a second, the
 * first of each second included). 0 or -ETIMEDOUT.
 */
static int log_quiet(int quiet_ms, int max_ms)
{
	int64_t until = mono_ms() + max_ms, since = mono_ms();
	off_t size = file_size(E->log);

	while (mono_ms() < until) {
		usleep(50000);
		if (file_size(E->log) != size) {
			size = file_size(E->log);
			since = mono_ms();
		} else if (mono_ms() - since >= quiet_ms) {
			return 0;
		}
	}
	return -ETIMEDOUT;
}

#define FORGED_HELLO	"ptod: error: FORGED by a client's hello"

/*
 * A hello's environment value with a newline, then a line that looks
 * like ptod's own, then terminal escapes and characters that reorder or
 * break a line (PTO_HOSTILE_ESC): ptod refuses it with -EINVAL and logs
 * the error, value and all, on one line of its own ("client N: ..."),
 * the newline and each of those as '?', the letter kept; no line of its
 * log begins with the client's text.
 */
TEST_F_TIMEOUT(e2e, hello_env_logged_on_one_line, 60)
{
	off_t from;
	int bare, n;
	char *out;

	/* earlier tests' lines must not have used up this second's */
	if (log_quiet(1200, 20000))
		note("ptod's log did not stay quiet for 1.2 s in 20 s");
	from = file_size(E->log);
	out = e2e_output(_metadata, 0, false,
			 ARGS("forge", FORGED_HELLO PTO_HOSTILE_ESC));
	EXPECT_TRUE(case_passed(out, "forge")) TH_LOG("%s", out);
	free(out);
	/* ptod logs the error before it replies */
	n = log_lines_with(from, FORGED_HELLO, &bare);
	note("the hello's value: in %d lines of ptod's log, %d of them its own",
	     n, bare);
	EXPECT_EQ(0, bare);
	EXPECT_LE(1, log_lines_with(from, "PTO2_RING_HEAP=\"1?" FORGED_HELLO
				    PTO_HOSTILE_ESC_LOGGED, &bare));
}

/*
 * A sandbox that writes to its standard error without end costs ptod no
 * more than reading SBX_ERR_BYTES a second (50 lines of 256 bytes): a
 * nobody client's kernel writes newlines as fast as its end of the pipe
 * takes them for PTO_HOSTILE_FLOOD_MS; the pipe (64 KiB) fills and stays
 * full, so its writes find it full and it got little more than the pipe
 * holds, not the PTO_HOSTILE_FLOOD_MIB it would if ptod read everything.
 * ptod says that output was lost, and the run is fine.
 */
#define FLOOD_TOOK_MAX	(192 << 10)

TEST_F_TIMEOUT(e2e, sandbox_stderr_flood_bounded, 150)
{
	int took = -1, bare, lost = 0, i;
	struct hostile h;
	struct proc p;
	const char *r;
	off_t from;

	if (E->user)
		SKIP(return, SANDBOX_ON_USER_DEVICE);
	from = file_size(E->log);
	run_hostile(_metadata, "flood", &p, &h);
	r = strstr(p.text, "hostile5: ");
	ASSERT_TRUE(r && sscanf(r, "hostile5: flood=%d", &took) == 1)
		TH_LOG("no hostile5 record");
	/* said when the second ends, or when the sandbox goes with the client */
	for (i = 0; i < 50 && !lost; i++) {
		lost = log_lines_with(from, "bytes read in that second was lost",
				      &bare);
		if (!lost)
			usleep(100000);
	}
	note("the flood's pipe took %d bytes in %d ms; \"was lost\" in %d lines of ptod's log",
	     took, PTO_HOSTILE_FLOOD_MS, lost);
	EXPECT_EQ(0, h.status);
	EXPECT_LT(0, took);
	EXPECT_GT(FLOOD_TOOK_MAX, took);
	EXPECT_LE(1, lost);
	proc_free(&p);
}

/* ptod's PTOD_WARN_MAX: records outside a graph logged per client */
#define OUTSIDE_LOGGED	20
#define OUTSIDE_RECS	"3000"

/*
 * A client's records outside a graph (16 bytes of stream each) are
 * ignored, and cost ptod's log at most OUTSIDE_LOGGED lines, the last
 * saying that further ones are not, and one line with their number once
 * the client is gone; its graph after them passes.
 */
TEST_F_TIMEOUT(e2e, records_outside_graph_log_bounded, 60)
{
	off_t from = file_size(E->log);
	const char *total = "client's " OUTSIDE_RECS " records outside a graph";
	int bare, n, i;
	char *out;

	out = e2e_output(_metadata, 0, false, ARGS("outside", OUTSIDE_RECS));
	EXPECT_TRUE(case_passed(out, "outside")) TH_LOG("%s", out);
	free(out);
	/* the runner says the number once it ends, after the client went */
	for (i = 0; i < 100 && !log_lines_with(from, " " OUTSIDE_RECS
					       " records outside a graph ignored",
					       &bare); i++)
		usleep(100000);
	n = log_lines_with(from, ": record type 77 outside a graph", &bare);
	note("%s: %d lines of ptod's log", total, n);
	EXPECT_GE(OUTSIDE_LOGGED, n);
	EXPECT_EQ(1, log_lines_with(from, "(its further ones are not logged)",
				    &bare));
	EXPECT_EQ(1, log_lines_with(from, " " OUTSIDE_RECS
				    " records outside a graph ignored in all",
				    &bare));
}

/* ptod's PTOD_CLIENTS_LOG_RATE: lines about all clients' graphs a second */
#define CLIENTS_LOG_RATE	200
#define OUTSIDE_CONNS		200
#define OUTSIDE_PER_CONN	"25"

/*
 * A client that connects again and again, each time with records outside
 * a graph, buys no more lines of ptod's log than the budget of all
 * clients' lines lets through: at most CLIENTS_LOG_RATE in each second
 * the connections took (and the second they end in), though each
 * connection's own budget would log OUTSIDE_LOGGED and a total line.
 */
TEST_F_TIMEOUT(e2e, records_outside_graph_reconnects_bounded, 120)
{
	off_t from = file_size(E->log);
	int bare, n, m, i;
	double secs = -1;
	const char *l;
	char *out;

	out = e2e_output(_metadata, 0, false,
			 ARGS("outside", OUTSIDE_PER_CONN, STR(OUTSIDE_CONNS)));
	l = line_with(out, "CASE outside: PASS ");
	ASSERT_TRUE(l && sscanf(l, "CASE outside: PASS %*d records outside a graph, then a graph, on %*d connections in %lf s",
				&secs) == 1)
		TH_LOG("%s", out);
	free(out);
	/* the last connection's total comes when its runner ends */
	for (i = 0; i < 20; i++) {
		usleep(100000);
		if (log_lines_with(from, "records outside a graph ignored in all",
				   &bare) >= OUTSIDE_CONNS)
			break;
	}
	n = log_lines_with(from, "outside a graph", &bare);
	m = log_lines_with(from, "lines about clients' graphs and sandboxes not logged",
			   &bare);
	note("%d connections of " OUTSIDE_PER_CONN " records outside a graph each in %.3f s: %d lines about them logged, %d lines saying how many were not",
	     OUTSIDE_CONNS, secs, n, m);
	EXPECT_GE(CLIENTS_LOG_RATE * ((long)secs + 3), n);
	EXPECT_LT(0, n);
}

/* ptod's PTOD_LOG_RATE: lines about a client's graphs logged a second */
#define GRAPH_LOG_RATE	50
#define GRAPHS		2000

/*
 * The numbers that @fmt (a whole line, with one %llu) reads in the lines
 * of ptod's log from byte @from on, added up.
 */
static unsigned long long log_sum(off_t from, const char *fmt)
{
	FILE *f = fopen(E->log, "re");
	unsigned long long sum = 0, v;
	char line[4200];

	if (f && fseeko(f, from, SEEK_SET)) {
		fclose(f);
		f = NULL;
	}
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			sum += v;
	if (f)
		fclose(f);
	return sum;
}

#define GRAPHS_DROPPED \
	"ptod: warning: client %*u: %llu lines about its graphs not logged"

/*
 * A client that runs GRAPHS empty graphs as fast as ptod takes them
 * (each is a "graph 1: done" line) gets at most GRAPH_LOG_RATE lines a
 * second in ptod's log; the others are counted, and by the time it is
 * gone the lines logged and those counted add up to GRAPHS.
 */
TEST_F_TIMEOUT(e2e, graph_lines_rate_limited, 120)
{
	off_t from = file_size(E->log);
	unsigned long long dropped = 0;
	int bare, logged = 0, i;
	double secs = 0;
	const char *l;
	struct proc p;

	ASSERT_EQ(0, e2e_start(&p, "graphs", false, NULL,
			       ARGS("graphs", STR(GRAPHS))));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&p));
	l = line_with(p.text, "CASE graphs: PASS ");
	EXPECT_TRUE(l && sscanf(l, "CASE graphs: PASS %*d of %*d graphs in %lf s",
				&secs) == 1) TH_LOG("%s", p.text);
	/* the number not logged is said by the time the client is gone */
	for (i = 0; i < 100; i++) {
		logged = log_lines_with(from, " graph 1: done (0)", &bare);
		dropped = log_sum(from, GRAPHS_DROPPED);
		if (logged + dropped >= GRAPHS)
			break;
		usleep(100000);
	}
	note("%d graphs in %.3f s: %d lines logged, %llu not", GRAPHS, secs,
	     logged, dropped);
	EXPECT_GE(GRAPH_LOG_RATE * ((int)secs + 2), logged);
	EXPECT_EQ(GRAPHS, logged + dropped);
	proc_free(&p);
}

/* the clients that exceed CLIENTS_LOG_RATE at once */
#define NOISY_CLIENTS		8
#define NOISY_GRAPHS		5000

#define CLIENTS_DROPPED \
	"ptod: warning: %llu lines about clients' graphs and sandboxes not logged"

/*
 * NOISY_CLIENTS clients running NOISY_GRAPHS empty graphs each at once
 * could log GRAPH_LOG_RATE lines a second each, twice what a journal
 * takes from one service beside ptod's own: all clients together get
 * at most CLIENTS_LOG_RATE lines a second, their "not logged" lines
 * included, and every graph's line is logged or counted once, by its
 * client or by all clients' count. One more graph a second later has
 * ptod say the count of the last second.
 */
TEST_F_TIMEOUT(e2e, clients_lines_rate_limited, 300)
{
	off_t from = file_size(E->log);
	struct proc p[NOISY_CLIENTS + 1];
	unsigned long long dropped = 0;
	int bare, logged = 0, i, n = 0;
	int64_t t0, t1;
	double secs;

	t0 = mono_ms();
	for (i = 0; i < NOISY_CLIENTS; i++, n++)
		ASSERT_EQ(0, e2e_start(&p[i], "graphs", false, NULL,
				       ARGS("graphs", STR(NOISY_GRAPHS))));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, proc_wait(&p[i], 240000));
		EXPECT_TRUE(exited_ok(&p[i])) TH_LOG("%s", p[i].text);
	}
	usleep(1100000);
	ASSERT_EQ(0, e2e_start(&p[n], "graphs", false, NULL,
			       ARGS("graphs", "1")));
	EXPECT_EQ(0, proc_wait(&p[n], CLIENT_MS));
	n++;
	t1 = mono_ms();
	secs = (double)(t1 - t0) / 1e3;
	for (i = 0; i < 100; i++) {
		logged = log_lines_with(from, " graph 1: done (0)", &bare);
		dropped = log_sum(from, GRAPHS_DROPPED) +
			  log_sum(from, CLIENTS_DROPPED);
		if (logged + dropped >= NOISY_CLIENTS * NOISY_GRAPHS + 1)
			break;
		usleep(100000);
	}
	note("%d clients x %d graphs and 1 in %.3f s: %d lines logged, %llu not (%llu by all clients' count)",
	     NOISY_CLIENTS, NOISY_GRAPHS, secs, logged, dropped,
	     log_sum(from, CLIENTS_DROPPED));
	EXPECT_GE(CLIENTS_LOG_RATE * ((int)secs + 2), logged);
	EXPECT_EQ(NOISY_CLIENTS * NOISY_GRAPHS + 1, logged + dropped);
	for (i = 0; i < n; i++)
		proc_free(&p[i]);
}

/* ptod's PTOD_USER_LOG_RATE: one user's share of CLIENTS_LOG_RATE */
#define USER_LOG_RATE		100
#define QUIET_OUTSIDE		"20"
#define QUIET_GAP_MS		"50"

/*
 * One user cannot take every line of all clients' budget: while root's
 * NOISY_CLIENTS clients run empty graphs as fast as ptod takes them
 * (more lines a second than CLIENTS_LOG_RATE), root's clients get at
 * most USER_LOG_RATE lines a second, and a nobody client's
 * QUIET_OUTSIDE records outside a graph, one every QUIET_GAP_MS (a line
 * each, far below its user's share, and over a second, so that some come
 * after root's clients have used all clients' budget of that second),
 * are all logged.
 */
TEST_F_TIMEOUT(e2e, one_user_leaves_others_log_room, 300)
{
	struct proc p[NOISY_CLIENTS];
	int bare, logged, quiet, i, n = 0;
	off_t from = file_size(E->log);
	int64_t t0, t1;
	double secs;
	char *out;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	t0 = mono_ms();
	for (i = 0; i < NOISY_CLIENTS; i++, n++)
		ASSERT_EQ(0, e2e_start(&p[i], "graphs", false, NULL,
				       ARGS("graphs", STR(NOISY_GRAPHS))));
	/* the noisy ones are logging (and refused) by now */
	for (i = 0; i < 100 && log_lines_with(from, " graph 1: done (0)",
					      &bare) < USER_LOG_RATE; i++)
		usleep(50000);
	usleep(300000);
	out = e2e_output(_metadata, NOBODY, true,
			 ARGS("outside", QUIET_OUTSIDE, "1", QUIET_GAP_MS));
	EXPECT_TRUE(case_passed(out, "outside")) TH_LOG("%s", out);
	free(out);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, proc_wait(&p[i], 240000));
		EXPECT_TRUE(exited_ok(&p[i])) TH_LOG("%s", p[i].text);
		proc_free(&p[i]);
	}
	t1 = mono_ms();
	secs = (double)(t1 - t0) / 1e3;
	logged = log_lines_with(from, " graph 1: done (0)", &bare);
	quiet = log_lines_with(from, ": record type 77 outside a graph",
			       &bare);
	note("root's %d clients x %d graphs in %.3f s: %d lines logged; nobody's " QUIET_OUTSIDE " records outside a graph meanwhile, " QUIET_GAP_MS " ms apart: %d lines",
	     NOISY_CLIENTS, NOISY_GRAPHS, secs, logged, quiet);
	EXPECT_GE(USER_LOG_RATE * ((int)secs + 2), logged);
	EXPECT_EQ(atoi(QUIET_OUTSIDE), quiet);
}

/*
 * libpto's API misused by a program (pto_e2e misuse): a wait for a graph
 * never sent, one already waited for or still being built, pto_run()
 * without a function (its msg says so, not what the buffer held), a
 * view whose offset wraps past 2^64, a negative block_incore param
 * count, seven dimensions, a FIFO as a kernel file, pto_disconnect()
 * from the orchestration function, pto_run_ex() of a graph, static or
 * not, that its orchestration function ended itself (run and waited
 * for, 0), a buffer freed after its client disconnected (unmapped by
 * then), a forked child's run and disconnect
 * on its parent's client (-ECHILD, nothing sent to ptod: the parent's
 * next run passes), a child forked by the orchestration function
 * submitting (-ECHILD; the parent's graph runs none of its tasks), a
 * child forked by another thread during a run, whose disconnect closes
 * its copies of the client's descriptors at once:
 * each call gets its clear error at once (none blocks, none touches
 * freed memory: the ASan run), and the client's next run passes.
 */
TEST_F_TIMEOUT(e2e, libpto_misuse_clear_errors, 120)
{
	char *out = e2e_output(_metadata, 0, false, ARGS("misuse"));
	static const char *const cases[] = {
		"wait-unknown", "begin", "wait-building", "end", "wait",
		"wait-again", "run-null", "run-null-msg", "view-wraps",
		"block-negative",
		"free-cluster-0", "cluster-after-scope",
		"ndims-7", "fifo", "kernel-no-entry", "kernel-pie",
		"end-in-run", "end-in-run-static", "disconnect-in-run",
		"free-after-disconnect", "fork", "fork-in-run",
		"fork-disconnect-in-run", "thread-fork-disconnect-in-run",
		"after",
	};
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "misuse/%s", cases[i]);
		EXPECT_TRUE(case_passed(out, name)) TH_LOG("%s: %s", name, out);
	}
	free(out);
}

/*
 * KERNEL_REG of a blob whose header has another version than
 * PTO_KBLOB_VERSION is refused at once, with -ENOEXEC and a message
 * naming both versions (pto-aicore would refuse it at the first task);
 * the same blob with its version right registers.
 */
TEST_F_TIMEOUT(e2e, kernel_blob_version_refused, 60)
{
	char *out = e2e_output(_metadata, 0, false, ARGS("kversion"));

	EXPECT_TRUE(case_passed(out, "kversion")) TH_LOG("%s", out);
	EXPECT_TRUE(has_text(out, "kversion: another version: -8 ")) TH_LOG("%s", out);
	EXPECT_TRUE(has_text(out, "this ptod runs version")) TH_LOG("%s", out);
	free(out);
}

/*
 * A hello whose stream header is not aligned to its 64 bytes (8 and 62
 * bytes into a buffer) is refused with -EINVAL and a message: ptod's
 * atomics on the header would straddle cache lines (a split lock) or
 * fault (arm64). One at 64 bytes is taken.
 */
TEST_F_TIMEOUT(e2e, stream_header_misaligned_refused, 60)
{
	char *out = e2e_output(_metadata, 0, false, ARGS("misaligned"));

	EXPECT_TRUE(case_passed(out, "misaligned")) TH_LOG("%s", out);
	/* each refused for its alignment, not for another reason */
	EXPECT_TRUE(has_text(out, "misaligned 8: -22 \"the stream buffer at "))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_text(out, "misaligned 62: -22 \"the stream buffer at "))
		TH_LOG("%s", out);
	EXPECT_TRUE(has_text(out, "is not aligned to 64 bytes"))
		TH_LOG("%s", out);
	free(out);
}

/* accept_out_of_fds_no_spin */
#define ACCEPT_SPARE	8	/* descriptors ptod has left */
#define ACCEPT_CONNS	24	/* connections made meanwhile */
#define ACCEPT_CPU_MS	2000	/* how long ptod's CPU time is looked at */

/* The CPU time process @pid used so far (user and system), ms; -1. */
static long long proc_cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	int64_t ns;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	ns = pto_stat_cpu_ns(buf);
	return ns < 0 ? -1 : ns / 1000000;
}

/*
 * The RLIMIT_NOFILE under which process @pid has exactly @spare
 * descriptor numbers free (a new descriptor takes the lowest free
 * number, and must be below the limit), or -errno.
 */
static long nofile_leaving(pid_t pid, int spare)
{
	char path[64], link[64];
	long fd, free_fds = 0;

	for (fd = 0; fd < 1L << 20; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)pid, fd);
		if (readlink(path, link, sizeof(link)) >= 0)
			continue;
		if (errno != ENOENT)
			return -errno;
		if (++free_fds == spare)
			return fd + 1;
	}
	return -ERANGE;
}


/*
 * ptod out of descriptors (its RLIMIT_NOFILE lowered to leave it
 * ACCEPT_SPARE) with connections waiting to be accepted: it says so once
 * and does not spin (the socket it cannot accept from stays readable):
 * less than a fifth of a CPU over ACCEPT_CPU_MS, where it took all of
 * one. As descriptors free up (the connections it took close), it
 * accepts the waiting ones: each gets the reply to its ping.
 */
TEST_F_TIMEOUT(e2e, accept_out_of_fds_no_spin, 90)
{
	off_t from = file_size(E->log);
	int s[ACCEPT_CONNS], i, took = 0, left, bare;
	long long cpu0, cpu1, t0, t1;
	struct rlimit lim;
	bool done[ACCEPT_CONNS];
	long cur;

	ASSERT_EQ(0, prlimit(E->ptod, RLIMIT_NOFILE, NULL, &E->nofile_orig));
	cur = nofile_leaving(E->ptod, ACCEPT_SPARE);
	ASSERT_LT(0, cur) TH_LOG("ptod's descriptors: %s", strerror((int)-cur));
	lim.rlim_cur = (rlim_t)cur;
	lim.rlim_max = E->nofile_orig.rlim_max;
	E->nofile_lowered = true;
	ASSERT_EQ(0, prlimit(E->ptod, RLIMIT_NOFILE, &lim, NULL));
	for (i = 0; i < ACCEPT_CONNS; i++)
		s[i] = ping_conn();
	for (i = 0; i < ACCEPT_CONNS; i++) {
		int got = s[i];

		ASSERT_LE(0, got) TH_LOG("connection %d: %s", i,
					 strerror(-got));
	}
	/* ptod answers those it took at once (kept open); the others wait */
	for (i = 0; i < ACCEPT_CONNS; i++) {
		done[i] = got_reply(s[i], i ? 200 : 5000, NULL);
		took += done[i];
	}
	cpu0 = proc_cpu_ms(E->ptod);
	t0 = mono_ms();
	usleep(ACCEPT_CPU_MS * 1000);
	cpu1 = proc_cpu_ms(E->ptod);
	t1 = mono_ms();
	note("RLIMIT_NOFILE %ld: ptod took %d of %d connections; then %lld ms of CPU in %lld ms",
	     cur, took, ACCEPT_CONNS, cpu1 - cpu0, t1 - t0);
	EXPECT_LT(0, took);
	EXPECT_GT(ACCEPT_CONNS, took) TH_LOG("the limit did not hold ptod back");
	EXPECT_LE(0, cpu0);
	EXPECT_GT((t1 - t0) / 5, cpu1 - cpu0) TH_LOG("ptod spins");
	/* those it took are closed: it takes the others as it can */
	for (i = 0; i < ACCEPT_CONNS; i++)
		if (done[i] && s[i] >= 0)
			close(s[i]);
	for (left = 1, i = 0; left && i < 300; i++) {
		int k;

		left = 0;
		for (k = 0; k < ACCEPT_CONNS; k++) {
			if (done[k])
				continue;
			done[k] = got_reply(s[k], 0, NULL);
			if (done[k])
				close(s[k]);
			else
				left++;
		}
		if (left)
			usleep(50000);
	}
	for (i = 0; i < ACCEPT_CONNS; i++)
		if (!done[i])
			close(s[i]);
	nofile_restore();
	EXPECT_EQ(0, left) TH_LOG("%d connections never taken", left);
	EXPECT_FALSE(E->nofile_lowered);
	EXPECT_LE(1, log_lines_with(from, "cannot accept connections: ", &bare));
}

/* ptod's PTOD_OUT_FDS: descriptors a client's output queue may hold */
#define OUT_FDS		16
#define STATUS_FLOOD	3000	/* DEV_STATUS requests at most */

/*
 * On the user-mode device each DEV_STATUS reply carries a descriptor (a
 * read-only file of the register memfd): a client that asks without ever
 * reading makes ptod queue its replies, each with a copy. ptod holds at
 * most OUT_FDS of them for the client, then drops it, where it held one
 * per reply up to -Q bytes (about 250). Its descriptors are counted
 * every 10 requests.
 */
TEST_F_TIMEOUT(e2e, queued_reply_fds_bounded, 60)
{
	int base, most, n, i, s;
	bool dropped = false;
	struct pto_msg m;

	if (!E->user)
		SKIP(return, "only the user-mode device's replies carry descriptors");
	base = most = count_fds(E->ptod);
	ASSERT_LT(0, base);
	s = ptod_dial();
	ASSERT_LE(0, s) TH_LOG("connect: %s", strerror(-s));
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_STATUS;
	for (i = 0; i < STATUS_FLOOD; i++) {
		dropped = send(s, &m, offsetof(struct pto_msg, text) + 1,
			       MSG_NOSIGNAL) < 0;
		if (dropped)
			break;
		if (i % 10)
			continue;
		n = count_fds(E->ptod);
		if (n > most)
			most = n;
		if (most > base + 4 * OUT_FDS)
			break;
	}
	note("%d DEV_STATUS requests, never read: ptod's descriptors %d at most, %d before; %s",
	     i, most, base, dropped ? "dropped" : "not dropped");
	close(s);
	EXPECT_GE(base + OUT_FDS + 4, most);
	EXPECT_TRUE(dropped);
}

/* ptod's PTOD_CONN_LOG_RATE: lines about connections logged a second */
#define CONN_LOG_RATE	100
#define CHURN		"3000"
#define CONN_DROPPED \
	"ptod: warning: %llu lines about connections not logged"

/*
 * pto_e2e @how CHURN (churn or hangup) as root: the seconds it took, 0 if
 * it did not say.
 */
static double run_churn(struct __test_metadata *_metadata, const char *how)
{
	char want[32];
	double secs = 0;
	const char *l;
	struct proc p;

	snprintf(want, sizeof(want), "CASE %s: PASS ", how);
	ASSERT_EQ(0, e2e_start(&p, how, false, NULL, ARGS(how, CHURN)));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&p));
	l = line_with(p.text, want);
	EXPECT_TRUE(l && sscanf(l + strlen(want),
				"%*d of %*d connections in %lf s",
				&secs) == 1) TH_LOG("%s", p.text);
	proc_free(&p);
	return secs;
}

/*
 * CHURN connections, each a ping before hello ("hello first", logged as
 * an error reply), then hung up ("disconnected", "gone"): at most
 * CONN_LOG_RATE lines a second in ptod's log; the others are counted and
 * said at the first such line of a later second (the test makes a
 * connection every 200 ms until they add up).
 */
TEST_F_TIMEOUT(e2e, connection_lines_rate_limited, 120)
{
	off_t from = file_size(E->log);
	unsigned long long dropped = 0;
	int bare, logged = 0, i, s;
	double secs = run_churn(_metadata, "churn");

	/* each second's count is said at a line of a later second */
	for (i = 0; i < 50; i++) {
		usleep(200000);
		s = ping_conn();
		if (s >= 0)
			close(s);
		dropped = log_sum(from, CONN_DROPPED);
		logged = log_lines_with(from, "ptod: ", &bare);
		if (logged + dropped >= 3ULL * atoi(CHURN))
			break;
	}
	note("%s connections in %.3f s: %d lines logged, %llu not", CHURN,
	     secs, logged, dropped);
	/* the last connections' lines, and a second more */
	EXPECT_GE(CONN_LOG_RATE * ((int)secs + 2 + i / 5) + 10, logged);
	EXPECT_LE(3 * atoi(CHURN), logged + dropped);
}

/* ptod's PTOD_USER_LOG_RATE: lines about one user's clients a second */
#define USER_LOG_RATE	100

/*
 * CHURN connections, each a ping before hello, hung up before the reply:
 * ptod's send of it fails and it drops the client ("disconnected"). Those
 * lines are a client's, at most USER_LOG_RATE a second of one user's.
 */
TEST_F_TIMEOUT(e2e, hangup_lines_rate_limited, 120)
{
	off_t from = file_size(E->log);
	double secs = run_churn(_metadata, "hangup");
	int bare, logged;

	/* what ptod still had to read when the client was through */
	usleep(1000000);
	logged = log_lines_with(from, ": disconnected", &bare);
	note("%s connections hung up in %.3f s: %d lines \"disconnected\"",
	     CHURN, secs, logged);
	EXPECT_GE(USER_LOG_RATE * ((int)secs + 3) + 10, logged);
}

/*
 * The socket is root's and the device group's (mode 0660): a user outside
 * the group cannot connect. With the mode opened to everyone, ptod itself
 * refuses that user (SO_PEERCRED) with -EACCES and a message, and still
 * serves the group's members.
 */
TEST_F_TIMEOUT(e2e, outsider_refused, 60)
{
	struct group *g = getgrnam("pto");
	struct stat st;
	mode_t mode;
	char *out;

	ASSERT_NE(NULL, g) TH_LOG("no group pto (scripts/deps.sh creates it)");
	ASSERT_EQ(0, stat(E->sock, &st));
	mode = st.st_mode & 07777;
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, (int)st.st_uid);
	EXPECT_EQ(g->gr_gid, st.st_gid);
	out = e2e_output(_metadata, NOBODY, false, ARGS("peer"));
	EXPECT_TRUE(has_text(out, "peer: Permission denied"));
	free(out);
	ASSERT_EQ(0, chmod(E->sock, 0666));
	out = e2e_output(_metadata, NOBODY, false, ARGS("peer"));
	EXPECT_TRUE(has_text(out, "peer: reply status -13 ")) TH_LOG("not refused");
	EXPECT_TRUE(has_text(out, "is not allowed"));
	free(out);
	out = e2e_output(_metadata, NOBODY, true, ARGS("peer"));
	if (E->user) {
		/* the socket lets it in, the user-mode device refuses it */
		EXPECT_TRUE(has_text(out, "peer: reply status -13 "));
		EXPECT_TRUE(has_text(out, "serves only its own user"));
	} else {
		/* served: a ping before hello */
		EXPECT_TRUE(has_text(out, "peer: reply status -71 "));
	}
	free(out);
	ASSERT_EQ(0, chmod(E->sock, mode));
}

/*
 * A user the user-mode device refuses, connected and silent: refused all
 * the same after ptod's PTOD_SILENT_REFUSE_MS (3 s), so that it holds
 * none of its user's connection slots for longer. A user it serves may
 * stay silent. (pto.ko serves every user the socket lets in.)
 */
TEST_F_TIMEOUT(e2e, silent_outsider_refused, 60)
{
	double ms = -1;
	const char *l;
	char *out;

	if (!E->user)
		SKIP(return, "the user-mode device's refusal");
	out = e2e_output(_metadata, NOBODY, true, ARGS("peer-silent", "10"));
	EXPECT_TRUE(has_text(out, "peer-silent: reply status -13 "))
		TH_LOG("not refused");
	EXPECT_TRUE(has_text(out, "serves only its own user"));
	l = line_with(out, "peer-silent: ");
	if (l && strstr(l, " after "))
		ms = atof(strstr(l, " after ") + 7);
	/* at 3 s, not at once, and not at the 10 s the peer waits */
	EXPECT_LE(2900, ms);
	EXPECT_GE(9000, ms);
	free(out);
	out = e2e_output(_metadata, 0, false, ARGS("peer-silent", "4"));
	EXPECT_TRUE(has_text(out, "peer-silent: nothing after 4.0 s"))
		TH_LOG("root's silent connection was not left alone");
	free(out);
}

/* "conns: N accepted, then ..." from @out: N, or -1. */
static int conns_accepted(const char *out)
{
	const char *l = line_with(out, "conns: ");
	int n;

	return l && sscanf(l, "conns: %d accepted", &n) == 1 ? n : -1;
}

/*
 * A user (not root) gets at most CONNS_PER_UID connections (ptod -c);
 * the next is refused with -EUSERS and a message. root is not limited.
 * (Connections of earlier tests' clients that ptod has not let go yet
 * count too: at most CONNS_PER_UID are accepted.)
 */
TEST_F_TIMEOUT(e2e, connections_per_user_limited, 60)
{
	char *out;
	int n;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	out = e2e_output(_metadata, NOBODY, true,
			 ARGS("conns", STR(CONNS_PER_UID) "0"));
	n = conns_accepted(out);
	EXPECT_LE(1, n);
	EXPECT_GE(CONNS_PER_UID, n);
	EXPECT_TRUE(has_text(out, "then status -87 ")) TH_LOG("no -EUSERS");
	EXPECT_TRUE(has_text(out, "the limit per user"));
	free(out);
	out = e2e_output(_metadata, 0, false,
			 ARGS("conns", STR(CONNS_PER_UID) "0"));
	EXPECT_EQ(CONNS_PER_UID * 10, conns_accepted(out));
	free(out);
}

/*
 * User @uid's client allocates around @mib, its quota: beyond it GM_ALLOC
 * fails with -EDQUOT and a message that says so (pto.ko enforces it),
 * within it the allocations pass, and a freed buffer counts no more.
 * (The client's kernels run sandboxed, so its heap ring is a buffer of its
 * own file and counts too: it asks for a heap of 64 KiB, which leaves the
 * quota's boundaries where the test puts them.)
 */
static void quota_client(struct __test_metadata *_metadata, uid_t uid,
			 const char *mib)
{
	struct proc p;
	int ret;

	ret = e2e_start_grp(&p, "quota", uid, true, false,
			    ARGS("PTO2_RING_HEAP=65536"), ARGS("quota", mib));
	if (!ret)
		ret = proc_wait(&p, CLIENT_MS);
	EXPECT_EQ(0, ret) TH_LOG("pto_e2e quota: %s", strerror(-ret));
	EXPECT_TRUE(p.text && case_passed(p.text, "quota"));
	proc_free(&p);
}

/* ptod -q QUOTA_MIB: the default quota of every user but root. */
TEST_F_TIMEOUT(e2e, gm_quota_per_user, 60)
{
	if (E->user)
		SKIP(return, "the user-mode device has no GM quota (ptod -q)");
	quota_client(_metadata, NOBODY, STR(QUOTA_MIB));
}

/*
 * ptod -q UID=MIB: a user with a quota of its own gets that one instead
 * of the default: QUOTA_OWN_UID may hold QUOTA_OWN_MIB (twice the
 * default), and not a byte more.
 */
TEST_F_TIMEOUT(e2e, gm_quota_own_per_user, 60)
{
	if (E->user)
		SKIP(return, "the user-mode device has no GM quota (ptod -q)");
	quota_client(_metadata, QUOTA_OWN_UID, STR(QUOTA_OWN_MIB));
}

/*
 * ptod allocates each client's runtime (about 5.5 MiB with the default
 * task window) with its own file: a user could once fill GM with hellos
 * alone, up to its connection limit (-c). Under -q pto.ko charges each
 * runtime to the client's user: nobody's clients (64 KiB heaps) are
 * refused with -EDQUOT once their runtimes fill QUOTA_MIB, before the
 * connection limit.
 */
TEST_F_TIMEOUT(e2e, gm_quota_counts_runtimes, 120)
{
	if (E->user)
		SKIP(return, "the user-mode device has no GM quota (ptod -q)");
	run_client_as(_metadata, "hellos", NOBODY, ARGS("PTO2_RING_HEAP=65536"),
		      ARGS("hellos", "32"), ARGS("hellos"), NULL);
}

/*
 * The runtimes count against the user's quota after the hello too: a
 * client's own buffers get QUOTA_MIB less its runtime (before, ptod
 * checked only at the hello, and buffers allocated afterwards had the
 * whole quota again).
 */
TEST_F_TIMEOUT(e2e, gm_quota_runtime_then_buffers, 60)
{
	struct proc p;
	int ret;

	if (E->user)
		SKIP(return, "the user-mode device has no GM quota (ptod -q)");
	ret = e2e_start_grp(&p, "quota-rt", NOBODY, true, false,
			    ARGS("PTO2_RING_HEAP=65536"),
			    ARGS("quota-rt", STR(QUOTA_MIB)));
	if (!ret)
		ret = proc_wait(&p, CLIENT_MS);
	EXPECT_EQ(0, ret) TH_LOG("pto_e2e quota-rt: %s", strerror(-ret));
	EXPECT_TRUE(p.text && case_passed(p.text, "quota-rt"))
		TH_LOG("%s", p.text ? p.text : "");
	proc_free(&p);
}

/*
 * A client stopped (SIGSTOP) in the middle of a graph that it never ends
 * holds no core beyond the tasks it had running: another client's run
 * completes meanwhile.
 */
TEST_F_TIMEOUT(e2e, stopped_client_other_passes, 150)
{
	struct proc a;
	int ret;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	ASSERT_EQ(0, e2e_start_as(&a, "stopped", NOBODY, true, NULL,
				  ARGS("stream", "120")));
	ret = proc_ready(&a, READY_MS);
	if (!ret && kill(a.pid, SIGSTOP))
		ret = -errno;
	if (ret)
		proc_free(&a);
	ASSERT_EQ(0, ret) TH_LOG("stopped client: %s", strerror(-ret));
	vector_passes(_metadata, "other");
	EXPECT_EQ(0, kill(a.pid, SIGKILL));
	proc_wait(&a, CLIENT_MS);
	proc_free(&a);
}

/* ---- ptoctl: clients, graphs, trace (ptod's socket) ------------------------------- */

/*
 * Run build/tools/@tool with @args as user @uid (0: root; others in the
 * device's group) to the end: its output (stdout and stderr), or NULL;
 * its wait status in *@status.
 */
static char *tool_output(struct __test_metadata *_metadata, const char *tool,
			 uid_t uid, const char *const args[], int *status)
{
	char prog[2 * PATH_MAX];
	char *argv[16], *text;
	struct proc p;
	int n = 0, i, ret;

	snprintf(prog, sizeof(prog), "%s/tools/%s", E->build, tool);
	argv[n++] = prog;
	for (i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	ret = proc_spawn(&p, tool, argv, NULL, -1, uid, true);
	if (!ret)
		ret = proc_wait(&p, CLIENT_MS);
	EXPECT_EQ(0, ret) TH_LOG("%s: %s", tool, strerror(-ret));
	*status = p.status;
	text = p.text;
	p.text = NULL;
	proc_free(&p);
	return text;
}

/* @text parses as JSON (python3's json module). */
static bool json_ok(struct __test_metadata *_metadata, const char *text)
{
	char path[PATH_MAX + 32];
	struct proc p;
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ptoctl.json", E->tmp);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		return false;
	if (proc_spawn(&p, "json",
		       (char *const[]){ "/usr/bin/python3", "-c",
					"import json, sys; json.load(open(sys.argv[1]))",
					path, NULL }, NULL, -1, 0, false))
		return false;
	ok = !proc_wait(&p, CLIENT_MS) && exited_ok(&p);
	proc_free(&p);
	return ok;
}

/* The line of ptoctl's JSON @text with "KEY": @val followed by , or }. */
static const char *json_entry(const char *text, const char *key, long val)
{
	char pat[64];
	const char *s;

	snprintf(pat, sizeof(pat), "\"%s\": %ld,", key, val);
	s = text ? strstr(text, pat) : NULL;
	if (!s) {
		snprintf(pat, sizeof(pat), "\"%s\": %ld}", key, val);
		s = text ? strstr(text, pat) : NULL;
	}
	while (s && s > text && s[-1] != '\n')
		s--;
	return s;
}

/* The line @l (up to its end) has @needle. */
static bool line_has(const char *l, const char *needle)
{
	const char *eol = strchrnul(l, '\n'), *s = strstr(l, needle);

	return s && s < eol;
}

/* ptoctl -j clients as @uid: its JSON (checked to parse), or NULL. */
static char *clients_json(struct __test_metadata *_metadata, uid_t uid)
{
	int st;
	char *out = tool_output(_metadata, "ptoctl", uid, ARGS("-j", "clients"),
				&st);

	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s", out);
	EXPECT_TRUE(json_ok(_metadata, out ? out : "")) TH_LOG("%s", out);
	return out;
}

/*
 * A client that stays connected shows up in ptoctl clients with its pid,
 * uid and gid, and the human output has it too.
 */
TEST_F_TIMEOUT(e2e, ptoctl_clients_lists_client, 60)
{
	char want[64], *out;
	const char *l;
	struct proc a;
	int ret, st;

	ASSERT_EQ(0, e2e_start(&a, "idle", true, NULL, ARGS("idle", "60")));
	ret = proc_ready(&a, READY_MS);
	if (ret)
		proc_free(&a);
	ASSERT_EQ(0, ret) TH_LOG("idle client: %s", strerror(-ret));
	out = clients_json(_metadata, 0);
	l = json_entry(out, "pid", a.pid);
	EXPECT_NE(NULL, l) TH_LOG("pid %d not in: %s", a.pid, out);
	if (l) {
		EXPECT_TRUE(line_has(l, "\"uid\": 0,"));
		EXPECT_TRUE(line_has(l, "\"gid\": 0,"));
		EXPECT_TRUE(line_has(l, "\"hello\": true,"));
	}
	free(out);
	out = tool_output(_metadata, "ptoctl", 0, ARGS("clients"), &st);
	snprintf(want, sizeof(want), " %d ", a.pid);
	EXPECT_TRUE(has_text(out, want)) TH_LOG("%s", out);
	free(out);
	proc_free(&a);
}

/*
 * Connections of process @pid that said hello (clients with a runtime),
 * in ptoctl's list as root sees it; -1 if there is no list.
 */
static int hello_clients_of(struct __test_metadata *_metadata, pid_t pid)
{
	char *out = clients_json(_metadata, 0), pat[48];
	const char *s;
	int n = 0;

	if (!out)
		return -1;
	snprintf(pat, sizeof(pat), "\"pid\": %d,", pid);
	for (s = strstr(out, pat); s; s = strstr(s + 1, pat))
		n += line_has(s, "\"hello\": true,");
	free(out);
	return n;
}

/*
 * Graphs left open (pto_e2e slots: raw clients that never end their
 * graph) hold every DAG slot of the engine, and one more client's run
 * waits for a slot. That client hangs up: ptod aborts its run, and the
 * run, which waits for nothing else, must end and the client go at once,
 * though no slot frees. (The wait was a condition wait that only a freed
 * slot ended: the client stayed, with its runner thread and runtime, as
 * long as the graphs stayed open.) ptod serves the next client once the
 * holders are gone.
 */
TEST_F_TIMEOUT(e2e, slot_wait_ends_with_client, 120)
{
	int before, now = -1, i, ret;
	struct proc a;

	ASSERT_EQ(0, e2e_start(&a, "slots", true, NULL, ARGS("slots", "3")));
	ret = proc_ready(&a, READY_MS);
	if (ret)
		proc_free(&a);
	ASSERT_EQ(0, ret) TH_LOG("slots client: %s", strerror(-ret));
	before = hello_clients_of(_metadata, a.pid);
	/* it hangs up 3 s after ready; 10 s for ptod to let it go */
	for (i = 0; i < 100; i++) {
		usleep(100000);
		now = hello_clients_of(_metadata, a.pid);
		if (now != before)
			break;
	}
	note("pto_e2e slots: %d clients with the waiting one, %d after it hung up",
	     before, now);
	EXPECT_LT(1, before);
	EXPECT_EQ(before - 1, now);
	proc_free(&a);
	vector_passes(_metadata, "vector");
}

/*
 * A user but root may have RUNS_UID graphs running at once (ptod -D):
 * nobody leaves graphs open (pto_e2e slots) until one waits, which must
 * be its RUNS_UID + 1st though the engine has slots left, and root's
 * client runs meanwhile. Without the limit a user held as many of the
 * engine's slots as it had connections (-c), and two users all of them.
 */
TEST_F_TIMEOUT(e2e, runs_per_user_limited, 120)
{
	char want[64];
	struct proc a;
	int ret;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	ASSERT_EQ(0, e2e_start_as(&a, "slots-nobody", NOBODY, true, NULL,
				  ARGS("slots", "1", "1")));
	ret = proc_ready(&a, READY_MS);
	if (ret)
		proc_free(&a);
	ASSERT_EQ(0, ret) TH_LOG("slots client: %s", strerror(-ret));
	vector_passes(_metadata, "vector");
	EXPECT_EQ(0, proc_wait(&a, CLIENT_MS));
	snprintf(want, sizeof(want), "slots: %d graphs open, client %d waits",
		 RUNS_UID, RUNS_UID + 1);
	EXPECT_TRUE(a.text && has_text(a.text, want)) TH_LOG("%s", a.text);
	EXPECT_TRUE(a.text && case_passed(a.text, "slots"));
	proc_free(&a);
}

/*
 * ptoctl clients as nobody lists nobody's client, not root's; as root,
 * both.
 */
TEST_F_TIMEOUT(e2e, ptoctl_clients_private, 60)
{
	struct proc r, n;
	char *out;
	int ret;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	ASSERT_EQ(0, e2e_start(&r, "idle-root", true, NULL, ARGS("idle", "60")));
	ret = proc_ready(&r, READY_MS);
	if (!ret)
		ret = e2e_start_as(&n, "idle-nobody", NOBODY, true, NULL,
				   ARGS("idle", "60"));
	if (!ret) {
		ret = proc_ready(&n, READY_MS);
		if (ret)
			proc_free(&n);
	}
	if (ret)
		proc_free(&r);
	ASSERT_EQ(0, ret) TH_LOG("idle clients: %s", strerror(-ret));
	out = clients_json(_metadata, NOBODY);
	EXPECT_NE(NULL, json_entry(out, "pid", n.pid)) TH_LOG("%s", out);
	EXPECT_EQ(NULL, json_entry(out, "pid", r.pid)) TH_LOG("%s", out);
	EXPECT_EQ(NULL, json_entry(out, "uid", 0)) TH_LOG("%s", out);
	free(out);
	out = clients_json(_metadata, 0);
	EXPECT_NE(NULL, json_entry(out, "pid", n.pid)) TH_LOG("%s", out);
	EXPECT_NE(NULL, json_entry(out, "pid", r.pid)) TH_LOG("%s", out);
	free(out);
	proc_free(&n);
	proc_free(&r);
}

/*
 * After pto_e2e prio (a graph of 9 tasks) ran, ptoctl graphs has its
 * graph: done, 9 tasks submitted, 9 done, 9 in its statistics.
 */
TEST_F_TIMEOUT(e2e, ptoctl_graphs_counts_tasks, 150)
{
	struct proc p;
	const char *l;
	char *out;
	int st;

	ASSERT_EQ(0, e2e_start(&p, "prio", false, NULL, ARGS("prio", "stream")));
	EXPECT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(case_passed(p.text, "prio"));
	out = tool_output(_metadata, "ptoctl", 0, ARGS("-j", "graphs"), &st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s", out);
	EXPECT_TRUE(json_ok(_metadata, out ? out : "")) TH_LOG("%s", out);
	l = json_entry(out, "pid", p.pid);
	ASSERT_NE(NULL, l) TH_LOG("pid %d not in: %s", p.pid, out);
	EXPECT_TRUE(line_has(l, "\"state\": \"done\","));
	EXPECT_TRUE(line_has(l, "\"tasks-submitted\": 9,"));
	EXPECT_TRUE(line_has(l, "\"tasks-done\": 9,"));
	EXPECT_TRUE(line_has(l, "{\"tasks\": 9,"));
	EXPECT_TRUE(line_has(l, "\"blocks\": 9,"));
	free(out);
	proc_free(&p);
}

/*
 * The "early" statistic of the graph of client @pid in ptoctl -j graphs
 * (ULLONG_MAX if there is none).
 */
static unsigned long long ptoctl_graph_early(struct __test_metadata *_metadata,
					     pid_t pid)
{
	unsigned long long early = ULLONG_MAX;
	const char *l, *f;
	char *out;
	int st;

	out = tool_output(_metadata, "ptoctl", 0, ARGS("-j", "graphs"), &st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s", out);
	EXPECT_TRUE(json_ok(_metadata, out ? out : "")) TH_LOG("%s", out);
	l = json_entry(out, "pid", pid);
	f = l ? strstr(l, "\"early\": ") : NULL;
	if (!f || !line_has(l, "\"early\": ") ||
	    sscanf(f, "\"early\": %llu}", &early) != 1)
		TH_LOG("pid %d: no early count in: %s", pid, out);
	free(out);
	return early;
}

/* Lines of @text that begin with @prefix. */
static int lines_with(const char *text, const char *prefix)
{
	const char *s = text;
	int n = 0;

	while ((s = line_with(s, prefix))) {
		n++;
		s++;
	}
	return n;
}

/* Wait up to @ms for a trace subscriber among ptod's clients. */
static bool tracer_seen(struct __test_metadata *_metadata, int ms)
{
	int64_t end = mono_ms() + ms;
	bool seen = false;
	char *out;
	int st;

	while (!seen && mono_ms() < end) {
		out = tool_output(_metadata, "ptoctl", 0,
				  ARGS("-j", "clients"), &st);
		seen = has_text(out, "\"tracing\": true");
		free(out);
		if (!seen)
			usleep(50000);
	}
	return seen;
}

/* How many connections trace (ptoctl -j clients), within @ms for @want. */
static int tracers_seen(struct __test_metadata *_metadata, int want, int ms)
{
	int64_t end = mono_ms() + ms;
	int n = 0, st;
	const char *s;
	char *out;

	do {
		out = tool_output(_metadata, "ptoctl", 0,
				  ARGS("-j", "clients"), &st);
		for (n = 0, s = out; s && (s = strstr(s, "\"tracing\": true"));
		     s++)
			n++;
		free(out);
		if (n < want)
			usleep(50000);
	} while (n < want && mono_ms() < end);
	return n;
}

/*
 * A user but root traces on at most two connections at once: nobody's
 * third ptoctl trace is refused with -EBUSY and the limit, while its two
 * others go on (each costs ptod's main loop a pass over every block).
 */
TEST_F_TIMEOUT(e2e, trace_subscriptions_per_user_limited, 120)
{
	char prog[2 * PATH_MAX];
	struct proc t[3];
	int i;

	if (E->user)
		SKIP(return, NOBODY_ON_USER_DEVICE);
	snprintf(prog, sizeof(prog), "%s/tools/ptoctl", E->build);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, proc_spawn(&t[i], "trace",
					(char *const[]){ prog, "-s", E->sock,
							 "trace", "-d", "60",
							 NULL },
					NULL, -1, NOBODY, true));
		ASSERT_EQ(i + 1, tracers_seen(_metadata, i + 1, READY_MS));
	}
	ASSERT_EQ(0, proc_spawn(&t[2], "trace",
				(char *const[]){ prog, "-s", E->sock, "trace",
						 "-d", "5", NULL },
				NULL, -1, NOBODY, true));
	ASSERT_EQ(0, proc_wait(&t[2], CLIENT_MS));
	EXPECT_FALSE(exited_ok(&t[2]));
	EXPECT_TRUE(has_text(t[2].text, "traces on 2 connections already (at most 2 but root)"))
		TH_LOG("%s", t[2].text);
	EXPECT_EQ(2, tracers_seen(_metadata, 2, 0));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, kill(t[i].pid, SIGINT));
		EXPECT_EQ(0, proc_wait(&t[i], CLIENT_MS));
		EXPECT_TRUE(exited_ok(&t[i])) TH_LOG("%s", t[i].text);
		proc_free(&t[i]);
	}
	proc_free(&t[2]);
}

/*
 * ptoctl trace -n 9 -d 100 -o @out in @t while pto_e2e prio runs its 9
 * single-block tasks; @t has exited (or the wait's failure is said) when
 * this returns, its status and text for the caller to check and free.
 */
static void trace_prio(struct __test_metadata *_metadata, const char *out,
		       struct proc *t)
{
	char prog[2 * PATH_MAX];

	snprintf(prog, sizeof(prog), "%s/tools/ptoctl", E->build);
	ASSERT_EQ(0, proc_spawn(t, "trace",
				(char *const[]){ prog, "trace", "-n", "9", "-d",
						 "100", "-o", (char *)out,
						 NULL },
				NULL, -1, 0, false));
	if (!tracer_seen(_metadata, READY_MS))
		proc_free(t);
	ASSERT_TRUE(t->pid > 0) TH_LOG("ptoctl trace never subscribed");
	run_client(_metadata, "prio", NULL, ARGS("prio", "stream"),
		   ARGS("prio"), NULL);
	EXPECT_EQ(0, proc_wait(t, CLIENT_MS));
}

/*
 * ptoctl trace -n 9 -o FILE over pto_e2e prio (9 single-block tasks):
 * one line per block, all of graph 1, none lost; FILE has 9 task lines
 * numbered in dispatch order and 9 block lines, each of its own task, in
 * that order; pto-trace turns it into JSON. FILE held 64 KiB of other
 * lines before: the recording replaces them, none is left at its end.
 */
TEST_F_TIMEOUT(e2e, ptoctl_trace_blocks, 150)
{
	char rec[PATH_MAX + 32], *json;
	const char *l;
	struct proc t;
	FILE *f;
	char line[256];
	int st, nblk = 0, ntask = 0;

	snprintf(rec, sizeof(rec), "%s/trace.dag", E->tmp);
	f = fopen(rec, "w");
	ASSERT_NE(NULL, f);
	for (st = 0; st < 8192; st++)
		fputs("# old\n", f);
	ASSERT_EQ(0, fclose(f));
	trace_prio(_metadata, rec, &t);
	EXPECT_TRUE(exited_ok(&t));
	EXPECT_EQ(9, lines_with(t.text, "client ")) TH_LOG("%s", t.text);
	for (l = t.text; (l = line_with(l, "client ")); l++)
		EXPECT_TRUE(line_has(l, " graph 1 task ")) TH_LOG("%.80s", l);
	EXPECT_TRUE(has_text(t.text, "ptoctl: trace: 9 blocks, 0 lost"));
	proc_free(&t);
	f = fopen(rec, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned int id;

		EXPECT_EQ(NULL, strstr(line, "# old")) TH_LOG("left over");
		/* task ids follow first dispatch; blocks are in that order */
		if (sscanf(line, "task %u ", &id) == 1)
			EXPECT_EQ(ntask++, (int)id) TH_LOG("%s", line);
		if (sscanf(line, "block %u ", &id) == 1)
			EXPECT_EQ(nblk++, (int)id) TH_LOG("%s", line);
	}
	fclose(f);
	EXPECT_EQ(9, ntask);
	EXPECT_EQ(9, nblk);
	json = tool_output(_metadata, "pto-trace", 0, ARGS("-f", "json", rec),
			   &st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("%s", json);
	EXPECT_TRUE(json_ok(_metadata, json ? json : ""));
	free(json);
}

/*
 * ptoctl trace -o with a path it cannot write (a missing directory, a
 * FIFO nobody reads) fails before tracing, not after -d 100 seconds, and
 * not waiting in open() for a reader; with no block traced (nothing runs
 * for its 1 s)
 * it says so, fails and leaves no file behind (an empty recording is no
 * recording), and a FILE that was there stays as it was.
 */
TEST_F_TIMEOUT(e2e, ptoctl_trace_output_errors, 60)
{
	static const char *const bad[][2] = {	/* path in E->tmp, error */
		{ "no-such-dir/trace.dag", "No such file or directory" },
		{ "trace.fifo", "(a FIFO with no reader?)" },
	};
	char rec[PATH_MAX + 32], path[PATH_MAX + 32], keep[PATH_MAX + 32];
	char line[64] = "", *out;
	int64_t t0;
	size_t i;
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "%s/trace.fifo", E->tmp);
	ASSERT_EQ(0, mkfifo(path, 0600));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", E->tmp, bad[i][0]);
		t0 = mono_ms();
		out = tool_output(_metadata, "ptoctl", 0,
				  ARGS("trace", "-d", "100", "-o", path), &st);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1)
			TH_LOG("%s: %s", bad[i][0], out);
		EXPECT_TRUE(has_text(out, bad[i][1]))
			TH_LOG("%s: %s", bad[i][0], out);
		EXPECT_GT(20000, mono_ms() - t0) TH_LOG("%s: traced first",
							bad[i][0]);
		free(out);
	}
	snprintf(rec, sizeof(rec), "%s/empty.dag", E->tmp);
	out = tool_output(_metadata, "ptoctl", 0,
			  ARGS("trace", "-d", "1", "-o", rec), &st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) TH_LOG("%s", out);
	EXPECT_TRUE(has_text(out, "no block was traced; not written"))
		TH_LOG("%s", out);
	EXPECT_NE(0, access(rec, F_OK)) TH_LOG("%s left behind", rec);
	free(out);
	snprintf(keep, sizeof(keep), "%s/kept.dag", E->tmp);
	f = fopen(keep, "w");
	ASSERT_NE(NULL, f);
	ASSERT_LT(0, fputs("# an earlier recording\n", f));
	ASSERT_EQ(0, fclose(f));
	out = tool_output(_metadata, "ptoctl", 0,
			  ARGS("trace", "-d", "1", "-o", keep), &st);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) TH_LOG("%s", out);
	free(out);
	f = fopen(keep, "r");
	ASSERT_NE(NULL, f) TH_LOG("%s removed", keep);
	EXPECT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_STREQ("# an earlier recording\n", line);
	fclose(f);
}

/*
 * ptoctl trace -o FIFO with a reader: the recording goes through the
 * FIFO (not truncated: a pipe cannot be) and ptoctl exits 0 with the 9
 * blocks of pto_e2e prio written. (With no reader: the test above.)
 */
TEST_F_TIMEOUT(e2e, ptoctl_trace_to_fifo, 150)
{
	char fifo[PATH_MAX + 32], buf[16384];
	struct proc t;
	ssize_t n;
	int rfd;

	snprintf(fifo, sizeof(fifo), "%s/reader.fifo", E->tmp);
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	/* the reader: this test, reading once ptoctl is done (9 blocks fit) */
	rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, rfd);
	trace_prio(_metadata, fifo, &t);
	EXPECT_TRUE(exited_ok(&t)) TH_LOG("%s", t.text);
	proc_free(&t);
	n = read(rfd, buf, sizeof(buf) - 1);
	close(rfd);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	EXPECT_EQ(9, lines_with(buf, "block ")) TH_LOG("%s", buf);
}

/*
 * ptod -a with a pto-aicore it cannot run (missing, a directory, not
 * executable) exits 2 with the reason at start, rather than listening and
 * starting it again once a second for ever.
 */
TEST_F_TIMEOUT(e2e, ptod_refuses_aicore_it_cannot_run, 60)
{
	static const char *const bad[][2] = {
		{ "/nonexistent/pto-aicore", "No such file or directory" },
		{ "/", "not a regular file" },
		{ "/etc/passwd", "Permission denied" },
	};
	char prog[2 * PATH_MAX], sock[PATH_MAX + 32];
	struct proc p;
	size_t i;

	snprintf(prog, sizeof(prog), "%s/daemon/ptod", E->build);
	snprintf(sock, sizeof(sock), "%s/bad-a.sock", E->tmp);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, proc_spawn(&p, "ptod",
					(char *const[]){ prog, "-d",
							 PTO_DEVICE_USER, "-s",
							 sock, "-a",
							 (char *)bad[i][0],
							 NULL },
					NULL, -1, 0, true));
		ASSERT_EQ(0, proc_wait(&p, 10000)) TH_LOG("-a %s", bad[i][0]);
		EXPECT_TRUE(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 2)
			TH_LOG("-a %s: %s", bad[i][0], p.text);
		EXPECT_TRUE(has_text(p.text, bad[i][1]))
			TH_LOG("-a %s: %s", bad[i][0], p.text);
		proc_free(&p);
	}
}

/*
 * A trace reader that stops reading (SIGSTOP) while pto_e2e probe-n runs
 * 20000 single-block tasks (about 940 KiB of blocks, more than ptod's
 * queue and the socket hold) loses blocks, not its connection, and the
 * run is not held up: after SIGCONT and SIGINT ptoctl reports the blocks
 * it printed and those ptod lost, which add up to 20000, some lost.
 * Natively only: 20000 tasks take long under TCG.
 */
TEST_F_TIMEOUT(e2e, ptoctl_trace_slow_reader, 150)
{
	char prog[2 * PATH_MAX];
	unsigned long long lost = 0;
	const char *l;
	long shown = -1;
	struct proc t;

	if (!E->user)
		SKIP(return, "20000 tasks take too long in the VM; natively only");
	snprintf(prog, sizeof(prog), "%s/tools/ptoctl", E->build);
	ASSERT_EQ(0, proc_spawn(&t, "trace",
				(char *const[]){ prog, "trace", "-d", "120",
						 NULL }, NULL, -1, 0, false));
	if (!tracer_seen(_metadata, READY_MS) || kill(t.pid, SIGSTOP))
		proc_free(&t);
	ASSERT_TRUE(t.pid > 0) TH_LOG("ptoctl trace never subscribed");
	run_client(_metadata, "probe", NULL, ARGS("probe-n", "20000"),
		   ARGS("probe"), NULL);
	EXPECT_EQ(0, kill(t.pid, SIGCONT));
	EXPECT_EQ(0, kill(t.pid, SIGINT));
	EXPECT_EQ(0, proc_wait(&t, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&t));
	l = line_with(t.text, "ptoctl: trace: ");
	ASSERT_NE(NULL, l) TH_LOG("no count from ptoctl");
	ASSERT_EQ(2, sscanf(l, "ptoctl: trace: %ld blocks, %llu lost", &shown,
			    &lost)) TH_LOG("%.80s", l);
	note("trace: %ld blocks shown, %llu lost", shown, lost);
	EXPECT_EQ(20000, shown + (long)lost);
	EXPECT_LT(0, lost);
	EXPECT_EQ(shown, lines_with(t.text, "client "));
	proc_free(&t);
}

/*
 * A hello whose file lives on a FUSE mount whose server reads every
 * GETATTR and FLUSH of it and answers none (pto_fusehello mounts it,
 * passes the file in a hello, then pings on another connection): ptod
 * identifies the file from what the kernel holds, refuses it (-ENODEV:
 * not its device's) and closes it on its closer thread, so it answers
 * the pings within 3 s and serves clients afterwards. Skipped where this
 * machine gives us no FUSE mount (pto_fusehello exits KSFT_SKIP).
 */
TEST_F_TIMEOUT(e2e, hello_file_on_stalled_fuse, 120)
{
	char prog[2 * PATH_MAX];
	struct proc p;

	ASSERT_EQ(0, ptod_wait(0)) TH_LOG("ptod exited");
	snprintf(prog, sizeof(prog), "%s/pto_fusehello", E->bin);
	{
		char *argv[] = { prog, E->sock, NULL };

		ASSERT_EQ(0, proc_spawn(&p, "fusehello", argv, NULL, -1, 0,
					false));
	}
	ASSERT_EQ(0, proc_wait(&p, 60 * 1000));
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == KSFT_SKIP) {
		proc_free(&p);
		SKIP(return, "no FUSE mount on this machine");
	}
	EXPECT_TRUE(exited_ok(&p))
		TH_LOG("pto_fusehello: wait status %#x (exit 1: ptod stalled or took the file)",
		       p.status);
	proc_free(&p);
	ASSERT_EQ(0, ptod_wait(0)) TH_LOG("ptod exited");
	run_client(_metadata, "vector", NULL, ARGS("vector"),
		   ARGS("vector/Const", "vector/Random"), NULL);
}

/*
 * pto_sockfuzz: several processes, each with several connections, send
 * random and mutated messages of the wire protocol (bad types, lengths,
 * versions, truncated and oversized messages, hellos with and without
 * the device file or with other files, junk stream records, kernel
 * blobs, floods whose replies nobody reads, disconnects at random
 * points) and are SIGKILLed at random; it probes that ptod answers in
 * time and checks every reply. Afterwards ptod still runs, is back at
 * rest once the fuzz clients are gone (its descriptors and threads as
 * before, GM and buffers at their idle values, every core online, none
 * dead) and serves a client with the vector golden check.
 * PTO_SOCKFUZZ_SEED / _OPS / _PROCS / _KILL_MS reach the fuzzer.
 */
TEST_F_TIMEOUT(e2e, sockfuzz, 1800)
{
	int fds0, thr0, fds = -1, thr = -1, ret;
	uint64_t used = 0, bufs = 0, online = 0, dead = 0;
	char prog[2 * PATH_MAX];
	int64_t t0, until;
	struct proc p;
	bool idle;

	ASSERT_EQ(0, ptod_wait(0)) TH_LOG("ptod exited");
	fds0 = ptod_quiet_fds();
	thr0 = proc_entries(E->ptod, "task");
	ASSERT_LT(0, fds0) TH_LOG("/proc/%d/fd: %s", E->ptod, strerror(-fds0));
	ASSERT_LT(0, thr0);
	snprintf(prog, sizeof(prog), "%s/pto_sockfuzz", E->bin);
	{
		char *argv[] = { prog, E->sock, NULL };

		ASSERT_EQ(0, proc_spawn(&p, "sockfuzz", argv, NULL, -1, 0, false));
	}
	t0 = mono_ms();
	ret = proc_wait(&p, 1500 * 1000);
	note("pto_sockfuzz ran %.1f s", (mono_ms() - t0) / 1000.0);
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(exited_ok(&p))
		TH_LOG("pto_sockfuzz: wait status %#x (exit 1: findings, above)",
		       p.status);
	proc_free(&p);
	ASSERT_EQ(0, ptod_wait(0)) TH_LOG("ptod exited during the fuzz");

	/*
	 * The fuzz clients are gone: ptod lets them go, then is at rest.
	 * On the user-mode device every counter read below is a connection
	 * to ptod, which ptod closes a moment after the reply: the
	 * descriptors are counted first, 20 ms after the last one.
	 */
	until = mono_ms() + 30000;
	for (;;) {
		fds = proc_entries(E->ptod, "fd");
		thr = proc_entries(E->ptod, "task");
		idle = wait_gm_idle(0, &used, &bufs);
		if (!counter("cores_online", &online) &&
		    !counter("cores_dead", &dead) && idle && fds <= fds0 &&
		    thr <= thr0 && online == E->nr_cores && !dead)
			break;
		if (mono_ms() >= until)
			break;
		usleep(20000);
	}
	note("ptod: %d descriptors, %d threads before, %d, %d after; gm_bytes_used %llu, gm_buffers %llu; %llu cores online, %llu dead",
	     fds0, thr0, fds, thr, (unsigned long long)used,
	     (unsigned long long)bufs, (unsigned long long)online,
	     (unsigned long long)dead);
	EXPECT_EQ(E->gm_idle, used);
	EXPECT_EQ(E->bufs_idle, bufs);
	/* no more than before (a startup pipe may have closed since) */
	EXPECT_GE(fds0, fds) {
		TH_LOG("ptod's open descriptors");
		log_fds(_metadata, E->ptod, "after the fuzz");
	}
	EXPECT_GE(thr0, thr) TH_LOG("ptod's threads");
	EXPECT_EQ(E->nr_cores, online);
	EXPECT_EQ(0, dead);
	EXPECT_EQ(1, cnt(_metadata, "aicpu"));
	run_client(_metadata, "vector", NULL, ARGS("vector"),
		   ARGS("vector/Const", "vector/Random"), NULL);
}

TEST_F_TIMEOUT(e2e, ptod_still_serving, 150)
{
	ASSERT_EQ(0, ptod_wait(0)) TH_LOG("ptod exited");
	ASSERT_EQ(0, kill(E->ptod, 0));
	EXPECT_EQ(E->nr_cores, cnt(_metadata, "cores_online"));
	vector_passes(_metadata, "vector");
}

/* pto-run, an unchanged orchestration .so: a = b = 0 gives f = 2. */
TEST_F_TIMEOUT(e2e, pto_run_unchanged_orch, 150)
{
	static char prog[2 * PATH_MAX], vx[2 * PATH_MAX], out[2 * PATH_MAX];
	static char k0[3 * PATH_MAX], k1[3 * PATH_MAX], k2[3 * PATH_MAX];
	static char orch[3 * PATH_MAX];
	float f[16384];
	size_t i, n, bad = 0;
	struct proc p;
	ssize_t got;
	int fd;

	snprintf(prog, sizeof(prog), "%s/tools/pto-run", E->build);
	snprintf(vx, sizeof(vx), "%s/examples/vector_example", E->build);
	snprintf(orch, sizeof(orch), "%s/orch.so", vx);
	snprintf(k0, sizeof(k0), "0:aiv:%s/aiv_add.so", vx);
	snprintf(k1, sizeof(k1), "1:aiv:%s/aiv_add_scalar.so", vx);
	snprintf(k2, sizeof(k2), "2:aiv:%s/aiv_mul.so", vx);
	snprintf(out, sizeof(out), "out:64K:%s/f.bin", E->tmp);
	{
		char *argv[] = { prog, "--orch", orch, "--kernel", k0,
				 "--kernel", k1, "--kernel", k2, "buf:64K",
				 "buf:64K", out, "16384", NULL };

		ASSERT_EQ(0, proc_spawn(&p, "pto-run", argv, NULL, -1, 0, false));
	}
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(exited_ok(&p));
	proc_free(&p);

	snprintf(out, sizeof(out), "%s/f.bin", E->tmp);
	fd = open(out, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", out, strerror(errno));
	got = read(fd, f, sizeof(f));
	close(fd);
	ASSERT_EQ((ssize_t)sizeof(f), got);
	n = sizeof(f) / sizeof(f[0]);
	for (i = 0; i < n; i++)
		bad += f[i] != 2.0f;
	note("f: %zu of %zu values are 2", n - bad, n);
	EXPECT_EQ(0, bad);
}

/* pto-run with @argv must exit with @status, saying @says. */
static void pto_run_refused(struct __test_metadata *_metadata,
			    char *const argv[], int status, const char *says)
{
	struct proc p;
	int n;

	for (n = 0; argv[n + 1]; n++)
		;
	ASSERT_EQ(0, proc_spawn(&p, "pto-run", argv, NULL, -1, 0, false));
	ASSERT_EQ(0, proc_wait(&p, CLIENT_MS));
	EXPECT_TRUE(WIFEXITED(p.status) && WEXITSTATUS(p.status) == status &&
		    strstr(p.text, says))
		TH_LOG("%s '%s': status %#x: %s", argv[2], argv[n], p.status,
		       p.text);
	proc_free(&p);
}

/*
 * pto-run refuses what it cannot take as given, with exit status 2 (1 for
 * a file it cannot read) and the value named, before any graph runs: a
 * size that overflows 64 bits or has text after it, an empty or
 * non-numeric scalar, a float after a space, a kernel id past 32 bits,
 * more than 64 arguments, a directory as a buffer's file, fewer
 * arguments than the orchestration's config asks for. It checks them
 * before it connects: with -s naming a socket no ptod listens on, each
 * is refused the same way, not with a connection error.
 */
TEST_F_TIMEOUT(e2e, pto_run_bad_arguments, 150)
{
	static char prog[2 * PATH_MAX], orch[3 * PATH_MAX], k1[3 * PATH_MAX];
	static char nowhere[PATH_MAX + 16];
	static char *many[64 + 8];
	static const struct {
		const char *arg;
		int status;
		const char *says;
	} cases[] = {
		{ "buf:18014398509481988K", 2, "bad size in 'buf:18014398509481988K'" },
		{ "buf:4Kjunk", 2, "bad size in 'buf:4Kjunk'" },
		{ "", 2, "bad argument ''" },
		{ "-", 2, "bad argument '-'" },
		{ "f:abc", 2, "bad argument 'f:abc'" },
		{ "f: 1.5", 2, "bad argument 'f: 1.5'" },
		{ "18446744073709551616", 2, "bad argument '18446744073709551616'" },
		{ "buf:4K:/", 1, "/: Is a directory" },
		/* aicpu_orchestration_config's count */
		{ "16384", 2, "expects 4 args, 1 given" },
	};
	char *sock;
	size_t i;
	int n, pass;

	snprintf(prog, sizeof(prog), "%s/tools/pto-run", E->build);
	snprintf(orch, sizeof(orch), "%s/examples/vector_example/orch.so",
		 E->build);
	snprintf(k1, sizeof(k1), "1:aiv:%s/examples/vector_example/aiv_add_scalar.so",
		 E->build);
	snprintf(nowhere, sizeof(nowhere), "%s/no-ptod.sock", E->tmp);
	for (pass = 0; pass < 2; pass++) {
		sock = pass ? nowhere : E->sock;
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char *argv[] = { prog, "-s", sock, "--orch", orch,
					 "--kernel", k1, (char *)cases[i].arg,
					 NULL };

			pto_run_refused(_metadata, argv, cases[i].status,
					cases[i].says);
		}
		{
			char *argv[] = { prog, "-s", sock, "--orch", orch,
					 "--kernel", "99999999999:aic:x.so",
					 NULL };

			pto_run_refused(_metadata, argv, 2,
					"bad --kernel '99999999999:aic:x.so'");
		}
		many[0] = prog;
		many[1] = "-s";
		many[2] = sock;
		many[3] = "--orch";
		many[4] = orch;
		for (n = 5; n < 5 + 65; n++)
			many[n] = "1";
		many[n] = NULL;
		pto_run_refused(_metadata, many, 2, "65 arguments, at most 64");
	}
}

/*
 * An out: FILE that cannot be written whole after the run is an error:
 * exit 1, the file named with the reason. 4 bytes to /dev/full fail only
 * when stdio writes them out, at fclose() (they used to pass unseen); 64K
 * fail in fwrite() itself.
 */
TEST_F_TIMEOUT(e2e, pto_run_out_file_errors, 60)
{
	static char prog[2 * PATH_MAX], orch[2 * PATH_MAX];
	static char *const outs[] = { "out:4:/dev/full", "out:64K:/dev/full" };
	size_t i;

	snprintf(prog, sizeof(prog), "%s/tools/pto-run", E->build);
	snprintf(orch, sizeof(orch), "%s/selftests/e2e/nop_orch.so", E->build);
	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		char *argv[] = { prog, "-s", E->sock, "--orch", orch,
				 outs[i], NULL };

		pto_run_refused(_metadata, argv, 1,
				"/dev/full: No space left on device");
	}
}

/*
 * SIGTERM with a client in the middle of a graph (its first task ran) and
 * another whose kernels never return (12 of them, in pto-aicore): the
 * first client gets -ESHUTDOWN, ptod kills pto-aicore once its drain
 * grace is over, the second client's run ends too, ptod exits 0 (status
 * from the keeper) within a bound, the device is released. Last: ptod is
 * gone afterwards.
 */
TEST_F_TIMEOUT(e2e, sigterm_shutdown, 120)
{
	pid_t exec = executor_pid_settled();
	char want[32], st[64];
	struct proc t, h;
	int64_t t0;
	int ret;

	ASSERT_EQ(0, e2e_start(&h, "hang", true, NULL, ARGS("hang", "12")));
	ret = proc_ready(&h, READY_MS);
	if (!ret)
		ret = e2e_start(&t, "client", true, NULL, ARGS("stream", "60"));
	if (ret) {
		proc_wait(&h, 0);
		proc_free(&h);
	}
	ASSERT_EQ(0, ret) TH_LOG("hang: %s", strerror(-ret));
	ret = proc_ready(&t, READY_MS);
	if (ret) {
		proc_free(&t);
		proc_free(&h);
	}
	ASSERT_EQ(0, ret) TH_LOG("client: %s", strerror(-ret));
	t0 = mono_ms();
	ASSERT_EQ(0, kill(E->ptod, SIGTERM));
	ret = ptod_wait(30000);
	note("ptod %s %lld ms after SIGTERM", ret == 1 ? "exited" : "still ran",
	     (long long)(mono_ms() - t0));
	EXPECT_EQ(1, ret) TH_LOG("ptod did not exit within 30 s");
	EXPECT_EQ(0, proc_wait(&t, CLIENT_MS));
	EXPECT_EQ(0, proc_wait(&h, CLIENT_MS));
	snprintf(want, sizeof(want), "status=%d ", -ESHUTDOWN);
	EXPECT_TRUE(t.reaped && WIFEXITED(t.status));
	EXPECT_TRUE(has_text(t.text, want)) TH_LOG("no \"%s\"", want);
	EXPECT_TRUE(h.reaped && WIFEXITED(h.status));
	proc_free(&t);
	proc_free(&h);
	ASSERT_EQ(1, ret);
	note("ptod: %s", wstatus_str(E->ptod_status, st, sizeof(st)));
	EXPECT_TRUE(WIFEXITED(E->ptod_status) && WEXITSTATUS(E->ptod_status) == 0);
	if (E->user) {
		/* the device went with ptod: its executor is gone too */
		EXPECT_LT(0, exec);
		EXPECT_TRUE(kill(exec, 0) && errno == ESRCH)
			TH_LOG("pto-aicore (pid %d) outlived ptod", exec);
		return;
	}
	EXPECT_EQ(0, cnt(_metadata, "cores_online"));
	EXPECT_EQ(0, cnt(_metadata, "aicpu"));
	EXPECT_EQ(0, cnt(_metadata, "gm_bytes_used"));
	EXPECT_EQ(0, cnt(_metadata, "gm_buffers"));
}

/* ---- ptod: start, readiness, stop ---------------------------------------------------- */

static void setup_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(E->setup_err, sizeof(E->setup_err), fmt, ap);
	va_end(ap);
}

/*
 * The keeper: starts ptod, reports its pid and then its wait status.
 * ptod's standard input is a pipe the keeper holds open, not /dev/null,
 * so that sandbox_kernel_confined sees whether a sandbox inherits it.
 */
static void keeper(int status_w)
{
	char ptod[2 * PATH_MAX];
	int st, log, in[2];
	pid_t pid;

	snprintf(ptod, sizeof(ptod), "%s/daemon/ptod", E->build);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || pipe2(in, O_CLOEXEC))
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid == 0) {
		/* if the keeper goes, ptod shuts down */
		log = open(E->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			   0644);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || log < 0 ||
		    dup2(in[0], 0) < 0 ||
		    dup2(log, 1) < 0 || dup2(log, 2) < 0 ||
		    setenv("NOTIFY_SOCKET", E->notify, 1) ||
		    setenv("PTO_HWS_CHECK", "1", 1) ||	/* the invariant checker */
		    /* a lost wake-up stalls a graph a minute (PARK_MS) */
		    setenv("PTO_AICORE_PARK_MS", STR(PARK_MS), 1) ||
		    setenv("PTO_SCHED_SLEEP_MS", STR(PARK_MS), 1))
			_exit(127);
		if (E->user)	/* the user-mode device has no GM quota */
			execl(ptod, "ptod", "-d", PTO_DEVICE_USER, "-s", E->sock,
			      "-x", STR(NOBODY) "=" STR(NOBODY_CTX), (char *)NULL);
		else
			execl(ptod, "ptod", "-d", DEV_PATH, "-s", E->sock, "-x",
			      STR(NOBODY) "=" STR(NOBODY_CTX), "-D",
			      STR(RUNS_UID), "-M", STR(SBX_DATA_MIB),
			      "-P", STR(SBX_TASKS),
			      "-q", STR(QUOTA_MIB), "-q",
			      STR(QUOTA_OWN_UID) "=" STR(QUOTA_OWN_MIB),
			      (char *)NULL);
		dprintf(2, "exec %s: %s\n", ptod, strerror(errno));
		_exit(127);
	}
	if (write(status_w, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	if (write(status_w, &st, sizeof(st)) != sizeof(st))
		_exit(1);
	_exit(0);
}

/* The notify socket got "READY=1" within @ms; ptod must not exit meanwhile. */
static int wait_ready1(int nfd, int ms)
{
	int64_t until = mono_ms() + ms;
	char buf[512], st[64];
	ssize_t n;
	int ret;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = nfd, .events = POLLIN },
			{ .fd = E->ptod_status_fd, .events = POLLIN },
		};
		int left = (int)(until - mono_ms());

		if (left <= 0) {
			setup_fail("ptod sent no READY=1 within %d s", ms / 1000);
			return -ETIMEDOUT;
		}
		ret = poll(pfd, 2, left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			setup_fail("poll: %s", strerror(errno));
			return -errno;
		}
		if (pfd[1].revents) {
			ptod_wait(0);
			setup_fail("ptod exited before READY=1: %s (log: %s)",
				   wstatus_str(E->ptod_status, st, sizeof(st)),
				   E->log);
			return -ESRCH;
		}
		if (!pfd[0].revents)
			continue;
		n = recv(nfd, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			setup_fail("recv %s: %s", E->notify, strerror(errno));
			return -errno;
		}
		buf[n] = 0;
		/* sd_notify: newline-separated assignments */
		if (!strncmp(buf, "READY=1", 7) || strstr(buf, "\nREADY=1"))
			return 0;
	}
}

/*
 * pto-aicore attaches its cores after ptod has said READY=1 (ptod notifies
 * once it listens, having spawned the executor). The executor's own ready
 * pipe belongs to ptod and the counters file is not poll()able, so this
 * is a bounded wait on cores_online: the only wait without an event.
 */
static int wait_cores_online(int ms)
{
	int64_t until = mono_ms() + ms;
	uint64_t online = 0;
	int ret;

	for (;;) {
		ret = counter("cores_online", &online);
		if (ret) {
			setup_fail("%s: %s", COUNTERS, strerror(-ret));
			return ret;
		}
		if (online == E->nr_cores)
			return 0;
		if (ptod_wait(0)) {
			setup_fail("ptod exited before pto-aicore attached the cores");
			return -ESRCH;
		}
		if (mono_ms() > until) {
			setup_fail("%llu of %u cores online after %d s",
				   (unsigned long long)online, E->nr_cores,
				   ms / 1000);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
}

/*
 * The device's core counts (GET_INFO; on the user-mode device, which is
 * ptod's, its register file once ptod is up); 0, or -1 with the failure
 * noted.
 */
static int read_device_info(void)
{
	struct pto_info info = { .size = sizeof(info) };
	void *regs;
	int fd, ret;

	if (E->user) {
		fd = regs_map(&info, &regs);
		if (fd < 0) {
			setup_fail("ptod's register file: %s", strerror(-fd));
			return -1;
		}
		munmap(regs, info.regs_size);
		close(fd);
		E->nr_aic = info.nr_aic;
		E->nr_aiv = info.nr_aiv;
		E->nr_cores = info.nr_cores;
		return 0;
	}
	fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		setup_fail("open %s: %s", DEV_PATH, strerror(errno));
		return -1;
	}
	ret = ioctl(fd, PTO_IOC_GET_INFO, &info);
	close(fd);
	if (ret) {
		setup_fail("GET_INFO: %s", strerror(errno));
		return -1;
	}
	E->nr_aic = info.nr_aic;
	E->nr_aiv = info.nr_aiv;
	E->nr_cores = info.nr_cores;
	return 0;
}

/* The datagram socket at E->notify that ptod's READY=1 comes to, or -1. */
static int notify_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int nfd;

	nfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (nfd < 0) {
		setup_fail("socket: %s", strerror(errno));
		return -1;
	}
	if (strlen(E->notify) >= sizeof(sa.sun_path)) {
		setup_fail("%s: path too long for a socket", E->notify);
		close(nfd);
		return -1;
	}
	memcpy(sa.sun_path, E->notify, strlen(E->notify) + 1);
	if (bind(nfd, (struct sockaddr *)&sa, sizeof(sa))) {
		setup_fail("bind %s: %s", E->notify, strerror(errno));
		close(nfd);
		return -1;
	}
	return nfd;
}

/*
 * Fork the keeper (which does not keep @nfd) and read ptod's pid from it
 * into E->ptod; its wait status follows on E->ptod_status_fd. 0, or -1
 * with the failure noted.
 */
static int spawn_keeper(int nfd)
{
	int pfd[2];
	ssize_t n;
	pid_t k;

	if (pipe2(pfd, O_CLOEXEC)) {
		setup_fail("pipe2: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	k = fork();
	if (k < 0) {
		setup_fail("fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (k == 0) {
		close(pfd[0]);
		close(nfd);
		keeper(pfd[1]);
	}
	close(pfd[1]);
	E->ptod_status_fd = pfd[0];
	do
		n = read(pfd[0], &E->ptod, sizeof(E->ptod));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(E->ptod)) {
		setup_fail("the keeper did not start ptod");
		E->ptod = 0;
		E->ptod_exited = true;
		return -1;
	}
	return 0;
}

/*
 * Start ptod under its keeper and wait until it said READY=1 and
 * pto-aicore attached every core; then note the idle GM counters and
 * point the clients at its socket. A failure is noted in E->setup_err.
 */
static void start_ptod(void)
{
	int64_t t0 = mono_ms();
	int nfd, ret;

	if (!E->user && read_device_info())
		return;
	nfd = notify_socket();
	if (nfd < 0)
		return;
	ret = spawn_keeper(nfd);
	if (!ret)
		ret = wait_ready1(nfd, 20000);
	close(nfd);
	if (ret || (E->user && read_device_info()))
		return;
	E->ready_ms = mono_ms() - t0;
	if (wait_cores_online(20000))
		return;
	E->online_ms = mono_ms() - t0;
	if (counter("gm_bytes_used", &E->gm_idle) ||
	    counter("gm_buffers", &E->bufs_idle))
		setup_fail("%s: no gm_bytes_used or gm_buffers", COUNTERS);
	if (setenv("PTO_SOCKET", E->sock, 1))
		setup_fail("setenv: %s", strerror(errno));
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

/* atexit: stop ptod if a test did not, print its log, remove the files. */
static void teardown(void)
{
	char st[64];

	if (getpid() != E->main_pid)
		return;
	if (E->ptod > 0 && !ptod_wait(0)) {
		if (kill(E->ptod, SIGTERM))
			note("kill ptod: %s", strerror(errno));
		if (ptod_wait(10000) != 1) {
			if (kill(E->ptod, SIGKILL))
				note("kill ptod: %s", strerror(errno));
			if (ptod_wait(10000) != 1)
				note("ptod did not exit");
		}
		if (E->ptod_exited)
			note("ptod stopped: %s",
			     wstatus_str(E->ptod_status, st, sizeof(st)));
	}
	log_tail_print("ptod log", 0, file_size(E->log));
	fails_print();
	if (E->tmp[0])
		nftw(E->tmp, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], *slash;
	ssize_t n;
	int i;

	E = mmap(NULL, sizeof(*E), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (E == MAP_FAILED) {
		perror("mmap");
		return KSFT_FAIL;
	}
	E->main_pid = getpid();
	E->ptod_status_fd = -1;
	for (i = 1; i < argc; i++)	/* -l, -h: nothing to start */
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			return test_harness_run(argc, argv);

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("readlink /proc/self/exe");
		return KSFT_FAIL;
	}
	self[n] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	snprintf(E->bin, sizeof(E->bin), "%s", self);	/* build/selftests/e2e */
	snprintf(E->build, sizeof(E->build), "%s/../..", self);
	snprintf(E->tmp, sizeof(E->tmp), "/tmp/pto-e2e.XXXXXX");
	/* other users' clients reach the socket in it */
	if (!mkdtemp(E->tmp) || chmod(E->tmp, 0755)) {
		perror(E->tmp);
		return KSFT_FAIL;
	}
	snprintf(E->sock, sizeof(E->sock), "%s/ptod.sock", E->tmp);
	snprintf(E->notify, sizeof(E->notify), "%s/notify", E->tmp);
	snprintf(E->log, sizeof(E->log), "%s/ptod.log", E->tmp);
	snprintf(E->fails, sizeof(E->fails), "%s/failed.txt", E->tmp);
	if (atexit(teardown)) {
		perror("atexit");
		return KSFT_FAIL;
	}
	E->user = getenv("PTO_DEVICE") &&
		  !strcmp(getenv("PTO_DEVICE"), PTO_DEVICE_USER);
	if (!E->user && access(DEV_PATH, F_OK))
		setup_fail("%s missing", DEV_PATH);
	else
		start_ptod();
	return test_harness_run(argc, argv);
}
