// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel that tries what a hostile client's kernel would (hostile.h):
 * the e2e sandbox tests check that it runs as its client, in its
 * client's memory, with the system calls the sandbox allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>
#include <pto/pto_kernel.h>

#include "hostile.h"

/* errno of a call that returned @ret (< 0 on failure), else 0. */
static int32_t err_of(long ret)
{
	return ret < 0 ? errno : 0;
}

/* 1 if descriptor @fd is /dev/null, 0 if not, -errno. */
static int32_t is_null(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	       minor(st.st_rdev) == 3;
}

/* Bytes of the environment, as /proc/self/environ would count them. */
static int32_t env_len(void)
{
	int32_t len = 0;
	char **e;

	for (e = environ; e && *e && len < (1 << 20); e++)
		len += (int32_t)strlen(*e) + 1;
	return len;
}

/* Is the working directory /? (struct pto_hostile_rec, @cwd_root) */
static int32_t cwd_root(void)
{
	struct stat dot, root;

	if (stat(".", &dot) || stat("/", &root))
		return -errno;
	return dot.st_dev == root.st_dev && dot.st_ino == root.st_ino;
}

/* The start of file @path into @buf (@len bytes), NUL-ended: 0 or -errno. */
static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = 0;
	return 0;
}

static int32_t oom_adj(void)
{
	char buf[32];

	return read_text("/proc/self/oom_score_adj", buf, sizeof(buf)) ?
	       -10000 : (int32_t)atoi(buf);
}

/* Its session and controlling terminal, from /proc/self/stat. */
static void session_of(struct pto_hostile_rec *r)
{
	char buf[512];
	const char *p;

	r->session = read_text("/proc/self/stat", buf, sizeof(buf));
	if (r->session)
		return;
	/* pid (comm) state ppid pgrp session tty_nr: comm may hold ") " */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %d %d", &r->session,
			 &r->tty_nr) != 2)
		r->session = -EINVAL;
}

/*
 * Owner of /proc/self/mem: root once the process is not dumpable (the
 * directory /proc/PID itself keeps the process's euid either way).
 */
static int32_t proc_owner(void)
{
	struct stat st;

	return stat("/proc/self/mem", &st) ? -errno : (int32_t)st.st_uid;
}

static void *thread_main(void *arg)
{
	__atomic_store_n((int32_t *)arg, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A process of our own, a user namespace, a child of ptod's, a thread. */
static void try_spawn(struct pto_hostile_rec *r)
{
	struct timespec nap = { .tv_sec = 30 };
	pthread_t t;
	long ret;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		/* would outlive the sandbox; the test kills it */
		nanosleep(&nap, NULL);
		_exit(0);
	}
	r->fork_err = err_of(pid);
	r->fork_pid = pid > 0 ? (int32_t)pid : 0;
	ret = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL,
		      NULL);
	if (ret == 0)
		_exit(0);
	r->clone_err = err_of(ret);
	r->clone_pid = ret > 0 ? (int32_t)ret : 0;
	ret = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
	if (ret == 0)
		_exit(0);
	r->cparent_err = err_of(ret);
	r->cparent_pid = ret > 0 ? (int32_t)ret : 0;
	r->thread_ran = 0;
	r->thread_err = pthread_create(&t, NULL, thread_main, &r->thread_ran);
	if (!r->thread_err)
		pthread_join(t, NULL);
}

/* The threads of try_threads() wait for this to be 1. */
static uint32_t threads_go;

static void *waiter_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&threads_go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &threads_go, FUTEX_WAIT_PRIVATE, 0, NULL,
			NULL, 0);
	return NULL;
}

/*
 * Threads without end, small stacks, all alive at once: how many it got
 * before pthread_create() failed (up to PTO_HOSTILE_THREADS), and why.
 */
static void try_threads(struct pto_hostile_rec *r)
{
	static pthread_t t[PTO_HOSTILE_THREADS];
	pthread_attr_t at;
	int32_t i, n = 0;

	r->threads_err = 0;
	__atomic_store_n(&threads_go, 0, __ATOMIC_RELEASE);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 << 10);
	while (n < PTO_HOSTILE_THREADS) {
		r->threads_err = pthread_create(&t[n], &at, waiter_main, NULL);
		if (r->threads_err)
			break;
		n++;
	}
	pthread_attr_destroy(&at);
	r->threads = n;
	__atomic_store_n(&threads_go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &threads_go, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
		0);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* The line longer than a piece of ptod's log (hostile.h). */
static void long_line(void)
{
	char line[PTO_HOSTILE_LONG_CUT + sizeof(PTO_HOSTILE_LONG_END "\n")];
	size_t n = strlen(PTO_HOSTILE_LONG);
	ssize_t wrote;

	memcpy(line, PTO_HOSTILE_LONG, n);
	memset(line + n, 'x', PTO_HOSTILE_LONG_CUT - n);
	memcpy(line + PTO_HOSTILE_LONG_CUT, PTO_HOSTILE_LONG_END "\n",
	       sizeof(PTO_HOSTILE_LONG_END "\n") - 1);
	wrote = write(2, line, sizeof(line) - 1);
	(void)wrote;
}

/*
 * Newlines to standard error, as fast as the pipe takes them (ptod made
 * it non-blocking), for PTO_HOSTILE_FLOOD_MS or PTO_HOSTILE_FLOOD_MIB:
 * how many it took.
 */
static int32_t flood(void)
{
	struct timespec now, end, nap = { .tv_nsec = 1000000 };
	static char nl[4096];
	int64_t took = 0;
	ssize_t n;

	memset(nl, '\n', sizeof(nl));
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += PTO_HOSTILE_FLOOD_MS / 1000;
	while (took < ((int64_t)PTO_HOSTILE_FLOOD_MIB << 20)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		n = write(2, nl, sizeof(nl));
		if (n > 0)
			took += n;
		else if (n < 0 && errno == EAGAIN)
			nanosleep(&nap, NULL);
		else if (n < 0 && errno != EINTR)
			break;
	}
	return (int32_t)took;
}

/*
 * A memfd written a MiB at a time, up to PTO_HOSTILE_MEMFD_MIB (memory
 * that no rlimit counts; the sandbox's memory cgroup does): how much it
 * took before write() failed, and why. Kept open, as a hog would.
 */
static void memfd_fill(struct pto_hostile_rec *r)
{
	static char mib[1 << 20];
	int fd = memfd_create("pto-e2e-hostile", MFD_CLOEXEC);

	r->memfd_err = fd < 0 ? errno : 0;
	memset(mib, 0x5a, sizeof(mib));
	while (fd >= 0 && r->memfd_mib < PTO_HOSTILE_MEMFD_MIB) {
		if (write(fd, mib, sizeof(mib)) != (ssize_t)sizeof(mib)) {
			r->memfd_err = errno ? errno : EIO;
			break;
		}
		__atomic_store_n(&r->memfd_mib, r->memfd_mib + 1,
				 __ATOMIC_RELEASE);
	}
}

/* errno of malloc() of @mib MiB, 0 if it got them (freed at once). */
static int32_t alloc_err(size_t mib)
{
	void *p;

	errno = 0;
	p = malloc(mib << 20);
	if (!p)
		return errno ? errno : ENOMEM;
	free(p);
	return 0;
}

/* A limit of /proc/self/limits shifted right by @shift, -1: "unlimited". */
static int32_t limit_of(const char *v, unsigned int shift)
{
	return strcmp(v, "unlimited") ?
	       (int32_t)(strtoull(v, NULL, 10) >> shift) : -1;
}

/*
 * Its memory limit, read from /proc/self/limits (the filter has no
 * getrlimit): what it is, whether it holds, whether it can rise.
 */
static void try_memory(struct pto_hostile_rec *r)
{
	char buf[4096], soft[32], hard[32];
	const char *line;
	struct rlimit rl;
	void *shared;
	int fd;

	r->data_soft_mib = r->data_hard_mib = -1;
	r->nproc_soft = r->nproc_hard = -1;
	r->over_alloc_err = r->raise_err = -1;
	r->small_alloc_err = alloc_err(PTO_HOSTILE_SMALL_MIB);
	shared = mmap(NULL, (size_t)PTO_HOSTILE_OVER_MIB << 20,
		      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r->shared_err = shared == MAP_FAILED ? errno : 0;
	if (shared != MAP_FAILED)
		munmap(shared, (size_t)PTO_HOSTILE_OVER_MIB << 20);
	fd = open(PTO_HOSTILE_SHM_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	r->wopen_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	if (read_text("/proc/self/limits", buf, sizeof(buf)))
		return;
	line = strstr(buf, "Max processes");
	if (line && sscanf(line, "Max processes %31s %31s", soft, hard) == 2) {
		r->nproc_soft = limit_of(soft, 0);
		r->nproc_hard = limit_of(hard, 0);
	}
	line = strstr(buf, "Max data size");
	if (!line || sscanf(line, "Max data size %31s %31s", soft, hard) != 2)
		return;
	r->data_soft_mib = limit_of(soft, 20);
	r->data_hard_mib = limit_of(hard, 20);
	if (r->data_soft_mib < 0 || r->data_hard_mib < 0)
		return;
	r->over_alloc_err = alloc_err((size_t)r->data_soft_mib +
				      PTO_HOSTILE_OVER_MIB);
	rl.rlim_cur = rl.rlim_max = ((rlim_t)r->data_hard_mib + 1) << 20;
	r->raise_err = err_of(setrlimit(RLIMIT_DATA, &rl));
}

int pto_kernel_entry(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		     uint32_t nargs)
{
	struct pto_hostile_rec *r;
	ssize_t wrote;
	int fd;

	(void)ctx;
	if (nargs < 3 || !args[0])
		return -EINVAL;
	r = (struct pto_hostile_rec *)(uintptr_t)args[0];
	if (nargs > 3 && args[3]) {
		if (args[3] == PTO_HOSTILE_MEMFD)
			memfd_fill(r);
		else
			r->flood_bytes = flood();
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
		return 0;
	}
	r->pid = (int32_t)getpid();
	r->uid = (int32_t)getuid();
	r->euid = (int32_t)geteuid();
	fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
	r->open_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	fd = open(PTO_HOSTILE_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	r->creat_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r->socket_err = err_of(fd);
	if (fd >= 0)
		close(fd);
	r->ptrace_err = err_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	try_spawn(r);
	r->proc_uid = proc_owner();
	r->stdin_null = is_null(0);
	r->stdout_null = is_null(1);
	r->env_len = env_len();
	r->oom_adj = oom_adj();
	r->cwd_root = cwd_root();
	session_of(r);
	try_memory(r);
	try_threads(r);
	/* a line like ptod's own (the test looks for it in ptod's log) */
	wrote = write(2, PTO_HOSTILE_FORGED PTO_HOSTILE_ESC "\n",
		      sizeof(PTO_HOSTILE_FORGED PTO_HOSTILE_ESC "\n") - 1);
	(void)wrote;
	long_line();
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	if (args[2]) {
		/* another buffer, where the executor would map it */
		const volatile uint64_t *p = (const volatile uint64_t *)
			(uintptr_t)(args[0] - args[1] + args[2]);

		r->peek = *p;
	}
	return 0;
}
