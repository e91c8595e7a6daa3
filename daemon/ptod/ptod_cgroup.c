// SPDX-License-Identifier: MIT
/*
 * ptod_cgroup.c - a memory cgroup per sandbox
 *
 * A sandbox's RLIMIT_DATA (-M) counts its heap, stacks and private
 * mappings, not the memfds its kernels may create and write, which are
 * memory as well. A cgroup v2 leaf per sandbox process, whose memory.max
 * is the same limit, counts them all: past it the kernel's memory cgroup
 * kills the sandbox, and no other. ptod makes a parent for the leaves,
 * "pto-sandboxes.DEV", in its own cgroup at start; a cgroup that hands
 * the memory controller down may hold no process, so ptod first moves
 * itself into a leaf "ptod" of its own cgroup unless that is the root
 * (systemd: Delegate=memory). Where any step fails (no cgroup v2, no
 * memory controller, a cgroup shared with other processes, not root),
 * ptod warns and the sandboxes run with their rlimits only.
 *
 * The leaf of a sandbox is "sbx-PID": its child makes it and joins it
 * before it drops root (ptod_sbx_cg_join(), async-signal-safe), and ptod
 * removes it when it reaps that pid (ptod_sbx_cg_reaped()), whoever's
 * sandbox it was.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "ptod.h"

#define CG_MOUNT	"/sys/fs/cgroup"
#define CG_LEAF_PREFIX	"sbx-"

/* "sbx-PID" into @buf (PTOD_CG_NAME_LEN bytes), async-signal-safe. */
void ptod_sbx_cg_name(char *buf, pid_t pid)
{
	char num[16], *p = num + sizeof(num);
	unsigned int v = pid > 0 ? (unsigned int)pid : 0;

	*--p = 0;
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) && p > num);
	memcpy(buf, CG_LEAF_PREFIX, sizeof(CG_LEAF_PREFIX) - 1);
	memcpy(buf + sizeof(CG_LEAF_PREFIX) - 1, p,
	       (size_t)(num + sizeof(num) - p));
}

/* Write @s to file @name of the cgroup directory @dir: 0 or -errno. */
static int cg_write(int dir, const char *name, const char *s)
{
	size_t len = strlen(s);
	int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n != (ssize_t)len) {
		int err = n < 0 ? errno : EIO;

		close(fd);
		return -err;
	}
	close(fd);
	return 0;
}

int ptod_sbx_cg_join(int base, uint64_t limit)
{
	char name[PTOD_CG_NAME_LEN], num[24], *p = num + sizeof(num);
	int dir, ret;

	*--p = 0;
	do
		*--p = (char)('0' + limit % 10);
	while ((limit /= 10) && p > num);
	ptod_sbx_cg_name(name, getpid());
	if (mkdirat(base, name, 0755) && errno != EEXIST)
		return -errno;
	dir = openat(base, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	ret = cg_write(dir, "memory.max", p);
	/* memory it may not swap out of the limit (no swap: no such file) */
	if (!ret) {
		ret = cg_write(dir, "memory.swap.max", "0");
		ret = ret == -ENOENT ? 0 : ret;
	}
	if (!ret)
		ret = cg_write(dir, "cgroup.procs", "0");
	close(dir);
	return ret;
}

/* The leaves left by an earlier ptod (their sandboxes are gone). */
static void cg_sweep(int base)
{
	int fd = openat(base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, CG_LEAF_PREFIX,
			     sizeof(CG_LEAF_PREFIX) - 1) &&
		    unlinkat(base, e->d_name, AT_REMOVEDIR))
			ptod_log(PTOD_LOG_WARN, "sandboxes' cgroup: %s left by an earlier ptod: cannot remove it: %m",
				 e->d_name);
	closedir(dir);
}

/*
 * Our own cgroup's path below the mount, from /proc/self/cgroup ("0::"
 * on the unified hierarchy), into @buf. 0 or -errno.
 */
static int cg_own_path(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 8];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			if (strlen(line + 3) >= len) {
				ret = -ENAMETOOLONG;
				break;
			}
			strcpy(buf, line + 3);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/*
 * Hand the memory controller down from our cgroup @own (path @path): we
 * leave it for a leaf "ptod" of ours first, unless it is the root (which
 * may hold processes). 0, or -errno after saying what failed in @what.
 */
static int cg_delegate(int own, const char *path, const char **what)
{
	int ret;

	if (strcmp(path, "/")) {
		*what = "cannot make the leaf ptod of its own cgroup";
		if (mkdirat(own, "ptod", 0755) && errno != EEXIST)
			return -errno;
		*what = "cannot move into the leaf ptod of its own cgroup";
		ret = cg_write(own, "ptod/cgroup.procs", "0");
		if (ret)
			return ret;
	}
	*what = "cannot enable the memory controller for its cgroup's children (other processes in its cgroup? systemd: Delegate=memory)";
	ret = cg_write(own, "cgroup.subtree_control", "+memory");
	if (ret && strcmp(path, "/") &&
	    cg_write(own, "cgroup.procs", "0") == 0)	/* back where we were */
		unlinkat(own, "ptod", AT_REMOVEDIR);
	return ret;
}

void ptod_sbx_cg_setup(struct ptod *d)
{
	char path[PATH_MAX], full[PATH_MAX + sizeof(CG_MOUNT)];
	const char *what = "no cgroup v2 (unified) hierarchy";
	const char *dev = strrchr(d->dev_path, '/');
	int own = -1, base = -1, ret;
	char devname[NAME_MAX];
	struct statfs sfs;

	d->sbx_cg = -1;
	if (d->sbx_mode == PTOD_SBX_NONE || !d->sbx_data)
		return;
	ret = cg_own_path(path, sizeof(path));
	if (ret)
		goto fail;
	snprintf(devname, sizeof(devname), "pto-sandboxes.%s",
		 dev ? dev + 1 : d->dev_path);
	what = "cannot open its own cgroup";
	snprintf(full, sizeof(full), "%s%s", CG_MOUNT, path);
	own = open(full, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (own < 0 || fstatfs(own, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		ret = own < 0 ? -errno : -ENOTSUP;
		goto fail;
	}
	ret = cg_delegate(own, path, &what);
	if (ret)
		goto fail;
	what = "cannot make the sandboxes' cgroup";
	if (mkdirat(own, devname, 0755) && errno != EEXIST) {
		ret = -errno;
		goto fail;
	}
	base = openat(own, devname, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0) {
		ret = -errno;
		goto fail;
	}
	what = "cannot enable the memory controller for the sandboxes' cgroups";
	ret = cg_write(base, "cgroup.subtree_control", "+memory");
	if (ret)
		goto fail;
	cg_sweep(base);
	close(own);
	d->sbx_cg = base;
	ptod_log(PTOD_LOG_INFO,
		 "sandboxes: a memory cgroup each under %s%s%s%s, memory.max %" PRIu64 " MiB (-M and the worker stacks)",
		 CG_MOUNT, path, strcmp(path, "/") ? "/" : "", devname,
		 ptod_sbx_mem_limit(d) >> 20);
	return;
fail:
	if (base >= 0)
		close(base);
	if (own >= 0)
		close(own);
	ptod_log(PTOD_LOG_WARN,
		 "sandboxes: no memory cgroup (%s: %s): the memory a kernel writes into memfds is not bounded by -M",
		 what, strerror(-ret));
}

bool ptod_sbx_cg_oom(const struct ptod *d, pid_t pid)
{
	char name[PTOD_CG_NAME_LEN], file[PTOD_CG_NAME_LEN + 16];
	char line[128];
	uint64_t n = 0;
	FILE *f;
	int fd;

	if (d->sbx_cg < 0)
		return false;
	ptod_sbx_cg_name(name, pid);
	snprintf(file, sizeof(file), "%s/memory.events", name);
	fd = openat(d->sbx_cg, file, O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "oom_kill %" SCNu64, &n) == 1)
			break;
	fclose(f);
	return n > 0;
}

void ptod_sbx_cg_reaped(const struct ptod *d, pid_t pid)
{
	char name[PTOD_CG_NAME_LEN];

	if (d->sbx_cg < 0)
		return;
	ptod_sbx_cg_name(name, pid);
	if (unlinkat(d->sbx_cg, name, AT_REMOVEDIR) && errno != ENOENT)
		ptod_log(PTOD_LOG_WARN, "sandbox (pid %d): cannot remove its cgroup %s: %m",
			 (int)pid, name);
}

void ptod_sbx_cg_close(struct ptod *d)
{
	if (d->sbx_cg >= 0)
		close(d->sbx_cg);
	d->sbx_cg = -1;
}
