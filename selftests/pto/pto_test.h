/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the pto selftests. Every wrapper returns 0 (or a
 * non-negative value) on success and -errno on failure, so that tests read
 * ASSERT_EQ(-EINVAL, pto_xxx(...)).
 *
 * Include after kselftest_harness.h.
 */
#ifndef PTO_SELFTEST_H
#define PTO_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/pto.h>

#include "pto_user.h"

#define PTO_PAGE		4096UL

/* Where the device lives; overridable for a second device. */
static inline const char *pto_dev_path(void)
{
	const char *p = getenv("PTO_DEV");

	return p && *p ? p : "/dev/pto0";
}

static inline const char *pto_sysfs_dir(void)
{
	const char *p = getenv("PTO_SYSFS");

	return p && *p ? p : "/sys/class/misc/pto0";
}

static inline int pto_open(void)
{
	int fd = open(pto_dev_path(), O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int pto_ioc(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

static inline int pto_abi_version(int fd, __u32 *ver)
{
	return pto_ioc(fd, PTO_IOC_ABI_VERSION, ver);
}

static inline int pto_get_info(int fd, struct pto_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return pto_ioc(fd, PTO_IOC_GET_INFO, info);
}

static inline int pto_set_role(int fd, __u32 role)
{
	struct pto_set_role r = { .size = sizeof(r), .role = role };

	return pto_ioc(fd, PTO_IOC_SET_ROLE, &r);
}

/* Open the device and give the file a role; returns the fd or -errno. */
static inline int pto_open_role(__u32 role)
{
	int fd = pto_open(), ret;

	if (fd < 0)
		return fd;
	ret = pto_set_role(fd, role);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static inline int pto_gm_alloc(int fd, __u64 len, __u64 align,
			       struct pto_gm_alloc *out)
{
	struct pto_gm_alloc a = { .size = sizeof(a), .len = len,
				  .align = align };
	int ret = pto_ioc(fd, PTO_IOC_GM_ALLOC, &a);

	if (!ret && out)
		*out = a;
	return ret;
}

static inline int pto_gm_free(int fd, __u32 handle)
{
	struct pto_gm_free f = { .size = sizeof(f), .handle = handle };

	return pto_ioc(fd, PTO_IOC_GM_FREE, &f);
}

static inline int pto_gm_lookup(int fd, __u64 dev_addr, __u64 len,
				struct pto_gm_lookup *out)
{
	struct pto_gm_lookup l = { .size = sizeof(l), .dev_addr = dev_addr,
				   .len = len };
	int ret = pto_ioc(fd, PTO_IOC_GM_LOOKUP, &l);

	if (!ret && out)
		*out = l;
	return ret;
}

static inline void pto_mask_set(struct pto_cores *c, unsigned int core)
{
	c->mask[core / 64] |= 1ULL << (core % 64);
}

static inline int pto_cores_range(int fd, unsigned long req,
				  unsigned int first, unsigned int n)
{
	struct pto_cores c = { .size = sizeof(c) };
	unsigned int i;

	for (i = first; i < first + n; i++)
		pto_mask_set(&c, i);
	return pto_ioc(fd, req, &c);
}

static inline int pto_attach(int fd, unsigned int core)
{
	return pto_cores_range(fd, PTO_IOC_CORE_ATTACH, core, 1);
}

static inline int pto_detach(int fd, unsigned int core)
{
	return pto_cores_range(fd, PTO_IOC_CORE_DETACH, core, 1);
}

static inline int pto_kick(int fd, unsigned int core)
{
	return pto_cores_range(fd, PTO_IOC_KICK, core, 1);
}

static inline int pto_core_wait(int fd, __u32 core, __u32 last_dmb,
				__s64 timeout_ns, struct pto_core_wait *out)
{
	struct pto_core_wait w = { .size = sizeof(w), .core = core,
				   .last_dmb = last_dmb,
				   .timeout_ns = timeout_ns };
	int ret = pto_ioc(fd, PTO_IOC_CORE_WAIT, &w);

	if (out)
		*out = w;
	return ret;
}

/* CORE_WAIT_ANY on @mask (PTO_CORE_MASK_WORDS words); *@core: the core. */
static inline int pto_core_wait_any(int fd, const __u64 *mask,
				    __s64 timeout_ns, __u32 *core)
{
	struct pto_core_wait_any w = { .size = sizeof(w),
				       .timeout_ns = timeout_ns };
	int ret;

	memcpy(w.mask, mask, sizeof(w.mask));
	ret = pto_ioc(fd, PTO_IOC_CORE_WAIT_ANY, &w);
	if (core)
		*core = w.core;
	return ret;
}

static inline int pto_raise_irq(int fd, __u32 core)
{
	struct pto_raise_irq r = { .size = sizeof(r), .core = core };

	return pto_ioc(fd, PTO_IOC_RAISE_IRQ, &r);
}

static inline int pto_irq_wait(int fd, __u32 count, __s64 timeout_ns,
			       __u32 *out)
{
	struct pto_irq_wait w = { .size = sizeof(w), .count = count,
				  .timeout_ns = timeout_ns };
	int ret = pto_ioc(fd, PTO_IOC_IRQ_WAIT, &w);

	if (out)
		*out = w.count;
	return ret;
}

static inline int pto_hws_get(int fd, struct pto_hws_cfg *cfg)
{
	struct pto_hws_config h = { .size = sizeof(h) };
	int ret = pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h);

	if (!ret)
		*cfg = h.cfg;
	return ret;
}

static inline int pto_hws_set(int fd, const struct pto_hws_cfg *cfg,
			      struct pto_hws_cfg *out)
{
	struct pto_hws_config h = { .size = sizeof(h),
				    .flags = PTO_HWS_CONFIG_SET, .cfg = *cfg };
	int ret = pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h);

	if (!ret && out)
		*out = h.cfg;
	return ret;
}

/* mmap returning the address or NULL with *err = -errno. */
static inline void *pto_mmap(int fd, size_t len, __u64 off, int prot,
			     int flags, int *err)
{
	void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

	if (p == MAP_FAILED) {
		*err = -errno;
		return NULL;
	}
	*err = 0;
	return p;
}

static inline int pto_mmap_err(int fd, size_t len, __u64 off, int prot,
			       int flags)
{
	int err;
	void *p = pto_mmap(fd, len, off, prot, flags, &err);

	if (p)
		munmap(p, len);
	return err;
}

/*
 * An executor's register file: read-only, with its writable part (from
 * PTO_REGS_EXEC_WRITE_OFFSET) mapped over it, as pto-aicore maps it. NULL
 * with *@err on failure.
 */
static inline void *pto_map_regs_exec(int fd, int *err)
{
	char *p = pto_mmap(fd, PTO_REGS_SIZE, PTO_MMAP_REGS, PROT_READ,
			   MAP_SHARED, err);
	void *w;

	if (!p)
		return NULL;
	w = mmap(p + PTO_REGS_EXEC_WRITE_OFFSET,
		 PTO_REGS_SIZE - PTO_REGS_EXEC_WRITE_OFFSET,
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 PTO_MMAP_REGS + PTO_REGS_EXEC_WRITE_OFFSET);
	if (w == MAP_FAILED) {
		*err = -errno;
		munmap(p, PTO_REGS_SIZE);
		return NULL;
	}
	return p;
}

/* The register file as the file's role may map it writable. */
static inline void *pto_map_regs(int fd)
{
	int err;
	void *p = pto_mmap(fd, PTO_REGS_SIZE, PTO_MMAP_REGS,
			   PROT_READ | PROT_WRITE, MAP_SHARED, &err);

	return p || err != -EACCES ? p : pto_map_regs_exec(fd, &err);
}

static inline void *pto_map_gm(int fd, __u64 gm_size)
{
	int err;

	return pto_mmap(fd, gm_size, PTO_MMAP_GM, PROT_READ | PROT_WRITE,
			MAP_SHARED, &err);
}

static inline volatile struct pto_regs_info *pto_regs_info(void *regs)
{
	return (volatile struct pto_regs_info *)
		((char *)regs + PTO_REGS_INFO_OFFSET);
}

static inline volatile struct pto_regs_hws *pto_regs_hws(void *regs)
{
	return (volatile struct pto_regs_hws *)
		((char *)regs + PTO_REGS_HWS_OFFSET);
}

static inline volatile struct pto_core_regs *pto_core(void *regs,
						       unsigned int core)
{
	return (volatile struct pto_core_regs *)
		((char *)regs + PTO_REGS_CORE_OFFSET) + core;
}

#define PTO_LOAD(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define PTO_STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define PTO_FENCE()	__atomic_thread_fence(__ATOMIC_SEQ_CST)

static inline int pto_become_nobody(bool device)
{
	return pto_become_user(65534, device);
}

/* An unprivileged user of the device (nobody, in its group). */
static inline int pto_drop_privileges(void)
{
	return pto_become_nobody(true);
}

static inline __s64 pto_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline __s64 pto_deadline_ms(long ms)
{
	return pto_now_ns() + (__s64)ms * 1000000LL;
}

static inline void pto_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Read the number after @key in a sysfs (or any) file: "key value" lines
 * or "key=value" tokens, e.g. "gm_buffers 0\n" or "nr_aic=24 gm_size=..".
 * A file holding a single number is read with key NULL. Returns 0 or
 * -errno (-ENOENT if the key is missing).
 */
static inline int pto_read_kv(const char *path, const char *key, __u64 *val)
{
	char buf[4096], *p, *end;
	size_t klen = key ? strlen(key) : 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	for (p = buf; key; p++) {
		p = strstr(p, key);
		if (!p)
			return -ENOENT;
		if ((p == buf || p[-1] == ' ' || p[-1] == '\t' ||
		     p[-1] == '\n') &&
		    (p[klen] == '=' || p[klen] == ':' || p[klen] == ' ' ||
		     p[klen] == '\t')) {
			p += klen;
			while (*p == '=' || *p == ':' || *p == ' ' ||
			       *p == '\t')
				p++;
			break;
		}
	}
	if (!key)
		p = buf;
	errno = 0;
	*val = strtoull(p, &end, 0);
	return end == p || errno ? -EINVAL : 0;
}

static inline int pto_sysfs_kv(const char *file, const char *key, __u64 *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", pto_sysfs_dir(), file);
	return pto_read_kv(path, key, val);
}

/* Read a whole small file into buf (NUL-terminated, trailing \n cut). */
static inline int pto_read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

/* Expected value from the environment (PTO_EXPECT_*); false if unset. */
static inline bool pto_expect_env(const char *name, __u64 *val)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return false;
	*val = strtoull(s, &end, 0);
	return end != s;
}

static inline void pto_fill(void *p, size_t len, __u32 seed)
{
	__u32 *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		w[i] = seed ^ (__u32)(i * 2654435761U);
}

/* Returns the index of the first mismatching word + 1, or 0 if equal. */
static inline size_t pto_check(const void *p, size_t len, __u32 seed)
{
	const volatile __u32 *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		if (w[i] != (seed ^ (__u32)(i * 2654435761U)))
			return i + 1;
	return 0;
}

/* Block until fd is readable; used to hand "ready" between processes. */
static inline int pto_pipe_wait(int fd, char *c)
{
	ssize_t n;

	do
		n = read(fd, c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -EIO;
}

/* A one-byte message with room for one passed descriptor. */
struct pto_fd_msg {
	char c;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg;
};

static inline void pto_fd_msg_init(struct pto_fd_msg *m)
{
	m->c = 'f';
	m->iov = (struct iovec){ &m->c, 1 };
	m->msg = (struct msghdr){ .msg_iov = &m->iov, .msg_iovlen = 1,
				  .msg_control = m->u.buf,
				  .msg_controllen = sizeof(m->u.buf) };
}

/*
 * Hand @fd over the unix socket @sock (SCM_RIGHTS), as a client hands its
 * file to ptod: 0 or -errno.
 */
static inline int pto_send_fd(int sock, int fd)
{
	struct pto_fd_msg m;
	struct cmsghdr *cm;

	pto_fd_msg_init(&m);
	cm = CMSG_FIRSTHDR(&m.msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m.msg, 0) == 1 ? 0 : -errno;
}

/* The descriptor pto_send_fd() sent on @sock, or -errno. */
static inline int pto_recv_fd(int sock)
{
	struct pto_fd_msg m;
	struct cmsghdr *cm;
	int fd;

	pto_fd_msg_init(&m);
	if (recvmsg(sock, &m.msg, MSG_CMSG_CLOEXEC) != 1)
		return -errno;
	cm = CMSG_FIRSTHDR(&m.msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * Put every core back to OFFLINE (a previous test may have left some DEAD):
 * attach all, detach all. Only valid when no live file has cores.
 */
static inline int pto_reset_cores(unsigned int nr_cores)
{
	int fd = pto_open_role(PTO_ROLE_EXECUTOR), ret;

	if (fd < 0)
		return fd;
	ret = pto_cores_range(fd, PTO_IOC_CORE_ATTACH, 0, nr_cores);
	if (!ret)
		ret = pto_cores_range(fd, PTO_IOC_CORE_DETACH, 0, nr_cores);
	close(fd);
	return ret;
}

/* Skip the test when there is no device at all (module not loaded). */
#define PTO_OPEN_OR_SKIP(_fd) do { \
	_fd = pto_open(); \
	if (_fd == -ENOENT) \
		SKIP(return, "%s not present (module not loaded?)", \
		     pto_dev_path()); \
	ASSERT_LE(0, _fd) \
		TH_LOG("open %s: %s", pto_dev_path(), strerror(-_fd)); \
} while (0)

#endif /* PTO_SELFTEST_H */
