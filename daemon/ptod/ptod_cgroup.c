// SPDX-License-Identifier: MIT
/*
 * ptod_cgroup.c - a memory cgroup per sandbox, with a pids.max where the
 * pids controller can be had (cg_pids())
 *
 * A sandbox's RLIMIT_DATA (-M) counts its heap, stacks and private
 * mappings, not the memfds its kernels may create and write, which are
 * memory as well. A cgroup v2 leaf per sandbox process counts them all,
 * with memory.max the rlimit and PTOD_SBX_CG_SLACK: past it the kernel's
 * memory cgroup kills the sandbox, and no other.
 *
 * At start ptod hands the memory controller down from its own cgroup
 * (writing "+memory" to its cgroup.subtree_control) and makes the
 * parent of the leaves there, "pto-sandboxes.DEV". A cgroup that hands a
 * controller down may hold no process, so where the kernel refuses
 * (EBUSY: ptod is in it, and it is not the root of the hierarchy) ptod
 * first moves itself into a leaf "ptod" of its cgroup (systemd:
 * Delegate=memory). Where a step fails (no cgroup v2, no memory
 * controller, another process in ptod's cgroup, not root), ptod undoes
 * what it did, warns, and the sandboxes run with their rlimits only.
 *
 * The leaf of a sandbox is "sbx-PID": the sandbox's child makes it and
 * joins it before it drops root (ptod_sbx_cg_join(), async-signal-safe),
 * and ptod removes it when it reaps that pid (ptod_sbx_cg_reaped()),
 * whoever's sandbox it was. A leaf left over (an earlier ptod's, its
 * sandbox dying while this ptod started) is removed and made anew by the
 * next sandbox that gets its pid, so that no sandbox inherits another's
 * counters.
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
#define CG_PTOD_LEAF	"ptod"

uint64_t ptod_sbx_cg_limit(const struct ptod *d)
{
	return ptod_sbx_mem_limit(d) + PTOD_SBX_CG_SLACK;
}

/* A sandbox's tasks: its worker a core, its main thread, its kernels'. */
static uint32_t ptod_sbx_cg_pids_of(const struct ptod *d)
{
	return d->info.nr_cores + 1 + PTOD_SBX_PIDS_SLACK;
}

uint32_t ptod_sbx_cg_pids(const struct ptod *d)
{
	return d->sbx_pids ? ptod_sbx_cg_pids_of(d) : 0;
}

void ptod_sbx_cg_name(char *buf, pid_t pid)
{
	char num[24];
	const char *p = ptod_utoa(num + sizeof(num) - 1,
				  pid > 0 ? (uint64_t)pid : 0);

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
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	err = n == (ssize_t)len ? 0 : n < 0 ? errno : EIO;
	close(fd);
	return -err;
}

int ptod_sbx_cg_join(int base, uint64_t limit, uint32_t pids)
{
	char name[PTOD_CG_NAME_LEN], num[24], pnum[24];
	const char *max = ptod_utoa(num + sizeof(num) - 1, limit);
	const char *pmax = ptod_utoa(pnum + sizeof(pnum) - 1, pids);
	int dir, ret;

	ptod_sbx_cg_name(name, getpid());
	if (mkdirat(base, name, 0755)) {
		/* an earlier sandbox's of this pid: its counters are not ours */
		if (errno != EEXIST || unlinkat(base, name, AT_REMOVEDIR) ||
		    mkdirat(base, name, 0755))
			return -errno;
	}
	dir = openat(base, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	ret = cg_write(dir, "memory.max", max);
	/* memory it may not swap out of the limit (no swap: no such file) */
	if (!ret) {
		ret = cg_write(dir, "memory.swap.max", "0");
		ret = ret == -ENOENT ? 0 : ret;
	}
	if (!ret && pids)
		ret = cg_write(dir, "pids.max", pmax);
	if (!ret)
		ret = cg_write(dir, "cgroup.procs", "0");
	close(dir);
	return ret;
}

/* The leaves left by an earlier ptod whose sandboxes are gone. */
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
	/* EBUSY: its sandbox is still dying; the next of that pid does it */
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, CG_LEAF_PREFIX,
			     sizeof(CG_LEAF_PREFIX) - 1))
			unlinkat(base, e->d_name, AT_REMOVEDIR);
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
			ret = strlen(line + 3) < len ? 0 : -ENAMETOOLONG;
			if (!ret)
				strcpy(buf, line + 3);
			break;
		}
	fclose(f);
	return ret;
}

/* What ptod_sbx_cg_setup() did, to undo it if a later step fails. */
struct cg_setup {
	int own;		/* ptod's cgroup */
	bool moved;		/* ptod moved into its leaf CG_PTOD_LEAF */
	bool made_leaf;		/* and made that leaf */
	bool enabled;		/* "+memory" in own's subtree_control */
	bool made_base;		/* made pto-sandboxes.DEV */
	const char *what;	/* the step that failed */
};

/* Is controller @ctl in @dir's cgroup.subtree_control already? */
static bool cg_ctrl_on(int dir, const char *ctl)
{
	int fd = openat(dir, "cgroup.subtree_control", O_RDONLY | O_CLOEXEC);
	char buf[256];
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	char *tok, *save;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, ctl))
			return true;
	return false;
}

/*
 * Hand the memory controller down from our cgroup: at once where the
 * kernel lets us (the root of the hierarchy, whose processes do not
 * count), else once we moved into a leaf of our own. 0 or -errno.
 */
static int cg_delegate(struct cg_setup *s)
{
	int ret;

	if (cg_ctrl_on(s->own, "memory"))
		return 0;
	s->what = "cannot enable the memory controller for its cgroup's children (systemd: Delegate=memory)";
	ret = cg_write(s->own, "cgroup.subtree_control", "+memory");
	if (ret != -EBUSY) {
		s->enabled = !ret;
		return ret;
	}
	/* processes in it, ours among them: we leave it for a leaf */
	s->what = "cannot make the leaf ptod of its own cgroup";
	if (mkdirat(s->own, CG_PTOD_LEAF, 0755)) {
		if (errno != EEXIST)
			return -errno;
	} else {
		s->made_leaf = true;
	}
	s->what = "cannot move into the leaf ptod of its own cgroup";
	ret = cg_write(s->own, CG_PTOD_LEAF "/cgroup.procs", "0");
	if (ret)
		return ret;
	s->moved = true;
	s->what = "cannot enable the memory controller for its cgroup's children (other processes in its cgroup? systemd: Delegate=memory)";
	ret = cg_write(s->own, "cgroup.subtree_control", "+memory");
	s->enabled = !ret;
	return ret;
}

/*
 * The pids controller too, where it can be had: a leaf's pids.max bounds
 * a sandbox's tasks (its workers and what its kernels start), and the
 * sandboxes' parent, below ptod's own cgroup's limit (systemd's
 * TasksMax, which counts the sandboxes too), keeps PTOD_PIDS_RESERVE
 * tasks for ptod's and pto-aicore's threads whatever the sandboxes do.
 * Optional: NULL, or what could not be done, and the sandboxes have
 * their rlimits (-P) only (a controller it enabled stays: it only counts).
 * *@all: the sandboxes' limit, 0 for none.
 */
static const char *cg_pids(struct ptod *d, int own, int base,
			   uint64_t *all)
{
	uint64_t reserve = PTOD_PIDS_RESERVE + d->info.nr_cores +
			   2ULL * (d->max_conn ? d->max_conn : 1024);
	bool own_on = cg_ctrl_on(own, "pids");
	char buf[32], num[24];
	const char *max;
	ssize_t n = -1;
	char *end;
	int fd;

	*all = 0;
	if (!own_on && cg_write(own, "cgroup.subtree_control", "+pids"))
		return "cannot enable the pids controller for its cgroup's children (systemd: Delegate=memory pids)";
	if (!cg_ctrl_on(base, "pids") &&
	    cg_write(base, "cgroup.subtree_control", "+pids")) {
		if (!own_on)
			cg_write(own, "cgroup.subtree_control", "-pids");
		return "cannot enable the pids controller for the sandboxes' cgroups";
	}
	/* ptod's own limit, if it has one (the root cgroup has none) */
	fd = openat(own, "pids.max", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = 0;
		*all = strtoull(buf, &end, 10);
		if (end == buf)
			*all = 0;	/* "max" */
	}
	if (*all && *all < reserve + ptod_sbx_cg_pids_of(d)) {
		ptod_log(PTOD_LOG_WARN,
			 "sandboxes: ptod's cgroup may hold %" PRIu64 " tasks, fewer than the %" PRIu64 " it keeps for its own and pto-aicore's threads and one sandbox's %u: no limit for the sandboxes together (systemd: raise TasksMax)",
			 *all, reserve, ptod_sbx_cg_pids_of(d));
		*all = 0;
	} else if (*all) {
		*all -= reserve;
	}
	/* "max": no limit left from an earlier ptod's */
	max = *all ? ptod_utoa(num + sizeof(num) - 1, *all) : "max";
	if (cg_write(base, "pids.max", max))
		return "cannot set the sandboxes' pids.max";
	d->sbx_pids = true;
	return NULL;
}

/* Undo what a failed ptod_sbx_cg_setup() did, as far as it can. */
static void cg_undo(struct cg_setup *s, const char *base)
{
	if (s->made_base)
		unlinkat(s->own, base, AT_REMOVEDIR);
	if (s->enabled)
		cg_write(s->own, "cgroup.subtree_control", "-memory");
	if (s->moved)
		cg_write(s->own, "cgroup.procs", "0");
	if (s->made_leaf)
		unlinkat(s->own, CG_PTOD_LEAF, AT_REMOVEDIR);
}

void ptod_sbx_cg_setup(struct ptod *d)
{
	char path[PATH_MAX], full[PATH_MAX + sizeof(CG_MOUNT)];
	struct cg_setup s = { .own = -1,
			      .what = "no cgroup v2 (unified) hierarchy" };
	const char *dev = strrchr(d->dev_path, '/');
	char base_name[NAME_MAX + 1];
	const char *why;
	struct statfs sfs;
	uint64_t all;
	int base = -1, ret;

	if (d->sbx_mode == PTOD_SBX_NONE || !d->sbx_data)
		return;
	ret = cg_own_path(path, sizeof(path));
	if (ret)
		goto fail;
	snprintf(base_name, sizeof(base_name), "pto-sandboxes.%s",
		 dev ? dev + 1 : d->dev_path);
	snprintf(full, sizeof(full), "%s%s", CG_MOUNT, path);
	s.what = "cannot open its own cgroup";
	s.own = open(full, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s.own < 0) {
		ret = -errno;
		goto fail;
	}
	s.what = "its own cgroup is not on a cgroup v2 hierarchy";
	if (fstatfs(s.own, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		ret = -ENOTSUP;
		goto fail;
	}
	ret = cg_delegate(&s);
	if (ret)
		goto fail;
	s.what = "cannot make the sandboxes' cgroup";
	if (mkdirat(s.own, base_name, 0755)) {
		ret = -errno;
		if (ret != -EEXIST)
			goto fail;
	} else {
		s.made_base = true;
	}
	base = openat(s.own, base_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0) {
		ret = -errno;
		goto fail;
	}
	s.what = "cannot enable the memory controller for the sandboxes' cgroups";
	ret = cg_ctrl_on(base, "memory") ? 0 :
	      cg_write(base, "cgroup.subtree_control", "+memory");
	if (ret)
		goto fail;
	cg_sweep(base);
	why = cg_pids(d, s.own, base, &all);
	close(s.own);
	d->sbx_cg = base;
	ptod_log(PTOD_LOG_INFO,
		 "sandboxes: a memory cgroup each under %s%s%s%s, memory.max %" PRIu64 " MiB (-M, the worker stacks and %llu MiB)",
		 CG_MOUNT, path, strcmp(path, "/") ? "/" : "", base_name,
		 ptod_sbx_cg_limit(d) >> 20, PTOD_SBX_CG_SLACK >> 20);
	if (why)
		ptod_log(PTOD_LOG_WARN,
			 "sandboxes: no pids limit (%s): their tasks are bounded by -P only",
			 why);
	else if (all)
		ptod_log(PTOD_LOG_INFO,
			 "sandboxes: pids.max %u each, %" PRIu64 " for all (below ptod's own limit)",
			 ptod_sbx_cg_pids(d), all);
	else
		ptod_log(PTOD_LOG_INFO,
			 "sandboxes: pids.max %u each, no limit for all of them",
			 ptod_sbx_cg_pids(d));
	return;
fail:
	if (base >= 0)
		close(base);
	if (s.own >= 0) {
		cg_undo(&s, base_name);
		close(s.own);
	}
	ptod_log(PTOD_LOG_WARN,
		 "sandboxes: no memory cgroup (%s: %s): the memory a kernel writes into memfds is not bounded by -M",
		 s.what, strerror(-ret));
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
