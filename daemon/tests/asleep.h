// SPDX-License-Identifier: MIT
/*
 * asleep.h - whether a thread of this process sleeps (for the tests that
 * wait until a thread is in a futex before they wake it)
 */
#ifndef TEST_ASLEEP_H
#define TEST_ASLEEP_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Is thread @tid of this process asleep (state S in its stat file)? */
static inline bool thread_asleep(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

#endif /* TEST_ASLEEP_H */
