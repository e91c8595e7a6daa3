// SPDX-License-Identifier: MIT
/*
 * asleep.h - whether a thread of this process sleeps, for the tests and
 * benchmarks that must wake a thread only once it really is asleep, and
 * the CPU time a thread or process has used, for those that check that
 * threads sleep rather than poll
 *
 * The thread's state alone (S in /proc/self/task/TID/stat) is not enough:
 * a thread that queues itself on a wait queue or a futex shows S from that
 * moment, while it still runs and checks its wake-up condition before it
 * calls schedule(). Its wait channel (/proc/self/task/TID/wchan) reads "0"
 * for as long as it is on a CPU, and names the function it sleeps in once
 * it is off. A kernel that hides wait channels (the file is missing or
 * unreadable) leaves the state alone to decide; one that cannot name
 * them (no kallsyms) prints "0" for every thread, and there this says
 * no thread is asleep (its callers' waits time out: Debian's kernels
 * name them).
 */
#ifndef PTO_PRIVATE_ASLEEP_H
#define PTO_PRIVATE_ASLEEP_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Read /proc/self/task/@tid/@file into @buf (NUL-terminated); -errno. */
static inline int pto_task_file(pid_t tid, const char *file, char *buf,
				size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = 0;
	return 0;
}

/*
 * 1 if thread @tid of this process sleeps interruptibly off the CPU, 0 if
 * not (yet), -errno if its stat cannot be read.
 */
static inline int pto_thread_asleep(pid_t tid)
{
	char buf[256], *p;
	int ret;

	ret = pto_task_file(tid, "stat", buf, sizeof(buf));
	if (ret)
		return ret;
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p || p[1] != ' ')
		return -EIO;
	if (p[2] != 'S')
		return 0;
	if (pto_task_file(tid, "wchan", buf, sizeof(buf)))
		return 1;
	return strcmp(buf, "0") != 0;
}

/*
 * User plus system CPU time, ns, of the task whose /proc stat line is
 * @stat (utime and stime, fields 14 and 15, in clock ticks; the command
 * name, field 2, may hold anything, so the fields are counted from its
 * closing parenthesis); -EIO if the line is not one.
 */
static inline int64_t pto_stat_cpu_ns(const char *stat)
{
	const char *p = strrchr(stat, ')');
	unsigned long long ut, st;

	/* ") state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime" */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u"
			 " %llu %llu", &ut, &st) != 2)
		return -EIO;
	return (int64_t)(ut + st) * (1000000000LL / sysconf(_SC_CLK_TCK));
}

/* CPU time, ns, thread @tid of this process has used; -errno. */
static inline int64_t pto_thread_cpu_ns(pid_t tid)
{
	char buf[512];
	int ret = pto_task_file(tid, "stat", buf, sizeof(buf));

	return ret ? ret : pto_stat_cpu_ns(buf);
}

#endif /* PTO_PRIVATE_ASLEEP_H */
