// SPDX-License-Identifier: GPL-2.0
/*
 * pto_ioctl: ABI version, device info, roles, and the size-first /
 * must-be-zero rules of every ioctl argument.
 *
 * Module parameters the info test checks come from PTO_EXPECT_NR_AIC,
 * PTO_EXPECT_GM_SIZE_MB and PTO_EXPECT_PROFILE (1/a2a3, 2/a5) when set,
 * otherwise from /sys/module/pto/parameters/.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

#include <sys/stat.h>

static bool profile_from_str(const char *s, __u64 *out)
{
	if (!strcasecmp(s, "a2a3") || !strcmp(s, "1")) {
		*out = PTO_PROFILE_A2A3;
		return true;
	}
	if (!strcasecmp(s, "a5") || !strcmp(s, "2")) {
		*out = PTO_PROFILE_A5;
		return true;
	}
	return false;
}

/* N of /dev/ptoN. */
static __u32 dev_index_of(const char *path)
{
	const char *p = path + strlen(path);

	while (p > path && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return (__u32)strtoul(p, NULL, 10);
}

/* ---------------------------------------------------------------------- */

FIXTURE(info) {
	int fd;
	struct pto_info info;
};

FIXTURE_SETUP(info)
{
	PTO_OPEN_OR_SKIP(self->fd);
	ASSERT_EQ(0, pto_get_info(self->fd, &self->info));
}

FIXTURE_TEARDOWN(info)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(info, abi_version)
{
	__u32 v = 0;

	ASSERT_EQ(0, pto_abi_version(self->fd, &v));
	EXPECT_EQ(PTO_ABI_VERSION, v);
	EXPECT_EQ((__u32)PTO_ABI_VERSION, self->info.abi_version);
}

TEST_F(info, abi_version_bad_pointer)
{
	EXPECT_EQ(-EFAULT, pto_ioc(self->fd, PTO_IOC_ABI_VERSION, NULL));
}

TEST_F(info, get_info_bad_pointer)
{
	EXPECT_EQ(-EFAULT, pto_ioc(self->fd, PTO_IOC_GET_INFO, NULL));
	EXPECT_EQ(-EFAULT, pto_ioc(self->fd, PTO_IOC_GET_INFO,
				   (void *)(uintptr_t)8));
}

TEST_F(info, fields_consistent)
{
	struct pto_info *i = &self->info;

	EXPECT_EQ((__u32)sizeof(*i), i->size);
	EXPECT_EQ(0U, i->flags);
	EXPECT_TRUE(i->profile == PTO_PROFILE_A2A3 ||
		    i->profile == PTO_PROFILE_A5);
	EXPECT_LE(1U, i->nr_aic);
	EXPECT_GE((__u32)PTO_MAX_AIC, i->nr_aic);
	EXPECT_EQ(i->nr_aic * PTO_AIV_PER_AIC, i->nr_aiv);
	EXPECT_EQ(i->nr_aic + i->nr_aiv, i->nr_cores);
	EXPECT_GE((__u32)PTO_MAX_CORES, i->nr_cores);
	EXPECT_EQ(dev_index_of(pto_dev_path()), i->dev_index);
	EXPECT_LT(0ULL, i->gm_size);
	EXPECT_EQ(0ULL, i->gm_size % PTO_PAGE);
	EXPECT_EQ(PTO_GM_DEV_BASE, i->gm_dev_base);
	EXPECT_GE(i->gm_size, i->gm_free);
	if (i->profile == PTO_PROFILE_A2A3) {
		EXPECT_EQ((__u64)PTO_CAPS_A2A3, i->caps);
	} else {
		EXPECT_EQ((__u64)PTO_CAPS_A5, i->caps);
	}
	EXPECT_EQ((__u64)PTO_REGS_SIZE, i->regs_size);
	EXPECT_EQ(PTO_MMAP_REGS, i->regs_mmap_offset);
	EXPECT_EQ(PTO_MMAP_GM, i->gm_mmap_offset);
	EXPECT_EQ(PTO_SYS_CNT_FREQ, i->sys_cnt_freq);
}

/* Nothing allocated by anyone: all of GM is free. */
TEST_F(info, gm_all_free_at_start)
{
	EXPECT_EQ(self->info.gm_size, self->info.gm_free);
}

TEST_F(info, matches_module_params)
{
	__u64 v;
	char s[64];
	int checked = 0;

	if (pto_expect_env("PTO_EXPECT_NR_AIC", &v) ||
	    !pto_read_str("/sys/module/pto/parameters/nr_aic", s, sizeof(s))) {
		/* nr_aic=-1 (not given): the profile's blocks */
		if (!getenv("PTO_EXPECT_NR_AIC"))
			v = strcmp(s, "-1") ? strtoull(s, NULL, 10) :
			    self->info.profile == PTO_PROFILE_A5 ?
			    PTO_PROFILE_A5_BLOCKS : PTO_PROFILE_A2A3_BLOCKS;
		EXPECT_EQ(v, (__u64)self->info.nr_aic);
		checked++;
	}
	if (pto_expect_env("PTO_EXPECT_GM_SIZE_MB", &v) ||
	    !pto_read_kv("/sys/module/pto/parameters/gm_size_mb", NULL, &v)) {
		EXPECT_EQ(v << 20, self->info.gm_size);
		checked++;
	}
	if ((getenv("PTO_EXPECT_PROFILE") &&
	     profile_from_str(getenv("PTO_EXPECT_PROFILE"), &v)) ||
	    (!pto_read_str("/sys/module/pto/parameters/profile", s,
			   sizeof(s)) && profile_from_str(s, &v))) {
		EXPECT_EQ(v, (__u64)self->info.profile);
		checked++;
	}
	if (!checked)
		SKIP(return, "no PTO_EXPECT_* and no /sys/module/pto/parameters");
	TH_LOG("checked %d module parameters", checked);
}

/* The misc device's sysfs attributes agree with GET_INFO. */
TEST_F(info, matches_sysfs_info)
{
	struct pto_info *i = &self->info;
	char path[256], s[64];
	__u64 v, prof;

	snprintf(path, sizeof(path), "%s/info", pto_sysfs_dir());
	if (access(path, R_OK))
		SKIP(return, "%s: %s", path, strerror(errno));
	ASSERT_EQ(0, pto_sysfs_kv("info", "nr_aic", &v));
	EXPECT_EQ((__u64)i->nr_aic, v);
	ASSERT_EQ(0, pto_sysfs_kv("info", "nr_aiv", &v));
	EXPECT_EQ((__u64)i->nr_aiv, v);
	ASSERT_EQ(0, pto_sysfs_kv("info", "gm_size", &v));
	EXPECT_EQ(i->gm_size, v);
	ASSERT_EQ(0, pto_sysfs_kv("nr_aic", NULL, &v));
	EXPECT_EQ((__u64)i->nr_aic, v);
	ASSERT_EQ(0, pto_sysfs_kv("nr_aiv", NULL, &v));
	EXPECT_EQ((__u64)i->nr_aiv, v);
	ASSERT_EQ(0, pto_sysfs_kv("gm_size", NULL, &v));
	EXPECT_EQ(i->gm_size, v);
	snprintf(path, sizeof(path), "%s/profile", pto_sysfs_dir());
	ASSERT_EQ(0, pto_read_str(path, s, sizeof(s)));
	ASSERT_TRUE(profile_from_str(s, &prof)) TH_LOG("profile '%s'", s);
	EXPECT_EQ((__u64)i->profile, prof);
}

/* The register file's info page carries the same facts. */
TEST_F(info, regs_info_page)
{
	int a = pto_open_role(PTO_ROLE_AICPU);
	volatile struct pto_regs_info *ri;
	struct pto_info *i = &self->info;
	void *regs;
	__s64 now;

	ASSERT_LE(0, a);
	regs = pto_map_regs(a);
	ASSERT_NE(NULL, regs);
	ri = pto_regs_info(regs);
	EXPECT_EQ((__u32)PTO_REGS_MAGIC, ri->magic);
	EXPECT_EQ((__u32)PTO_ABI_VERSION, ri->abi_version);
	EXPECT_EQ(i->profile, ri->profile);
	EXPECT_EQ(i->nr_aic, ri->nr_aic);
	EXPECT_EQ(i->nr_aiv, ri->nr_aiv);
	EXPECT_EQ(i->nr_cores, ri->nr_cores);
	EXPECT_EQ(i->dev_index, ri->dev_index);
	EXPECT_EQ(0U, ri->pad0);
	EXPECT_EQ(i->gm_size, ri->gm_size);
	EXPECT_EQ(i->gm_dev_base, ri->gm_dev_base);
	EXPECT_EQ(i->caps, ri->caps);
	EXPECT_EQ(PTO_SYS_CNT_FREQ, ri->sys_cnt_freq);
	EXPECT_EQ(1U, ri->aicpu_attached);
	EXPECT_EQ(0U, ri->pad1);
	/* The epoch is in the past and the coarse copy is not ahead. */
	now = pto_now_ns();
	EXPECT_GE(now, ri->sys_cnt_epoch_ns);
	EXPECT_GE((__u64)((now - ri->sys_cnt_epoch_ns) / 20), ri->sys_cnt);
	munmap(regs, PTO_REGS_SIZE);
	close(a);
}

/* aicpu_attached follows the AICPU file's life (seen by an executor). */
TEST_F(info, regs_aicpu_attached)
{
	int e = pto_open_role(PTO_ROLE_EXECUTOR), a;
	volatile struct pto_regs_info *ri;
	void *regs;

	ASSERT_LE(0, e);
	regs = pto_map_regs(e);
	ASSERT_NE(NULL, regs);
	ri = pto_regs_info(regs);
	EXPECT_EQ(0U, ri->aicpu_attached);
	a = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, a);
	EXPECT_EQ(1U, ri->aicpu_attached);
	close(a);
	EXPECT_EQ(0U, ri->aicpu_attached);
	munmap(regs, PTO_REGS_SIZE);
	close(e);
}

TEST_F(info, unknown_ioctl)
{
	char buf[64] = { 0 };

	*(__u32 *)buf = 16;
	EXPECT_EQ(-ENOTTY, pto_ioc(self->fd, _IO(PTO_IOCTL_MAGIC, 0x3f), buf));
	/* the number after the last ioctl */
	EXPECT_EQ(-ENOTTY, pto_ioc(self->fd, _IO(PTO_IOCTL_MAGIC,
				   _IOC_NR(PTO_IOC_GM_QUOTA) + 1), buf));
	EXPECT_EQ(-ENOTTY, pto_ioc(self->fd, _IO('x', 0x01), buf));
}

/* A known number with a different direction/size encoding is unknown. */
TEST_F(info, ioctl_wrong_encoding)
{
	struct pto_info i = { .size = sizeof(i) };

	EXPECT_EQ(-ENOTTY, pto_ioc(self->fd,
				   _IOWR(PTO_IOCTL_MAGIC, 0x01, struct pto_info),
				   &i));
	EXPECT_EQ(-ENOTTY, pto_ioc(self->fd, _IO(PTO_IOCTL_MAGIC, 0x00), &i));
}

TEST_F(info, gm_lookup_no_role)
{
	EXPECT_EQ(-ENOENT, pto_gm_lookup(self->fd, PTO_GM_DEV_BASE, 1, NULL));
}

TEST_F(info, hws_read_no_role)
{
	struct pto_hws_cfg c;

	EXPECT_EQ(0, pto_hws_get(self->fd, &c));
}

/* ---------------------------------------------------------------------- */

FIXTURE(roles) {
	int fd;
};

FIXTURE_SETUP(roles)
{
	PTO_OPEN_OR_SKIP(self->fd);
}

FIXTURE_TEARDOWN(roles)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(roles, client)
{
	EXPECT_EQ(0, pto_set_role(self->fd, PTO_ROLE_CLIENT));
}

TEST_F(roles, aicpu)
{
	EXPECT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
}

TEST_F(roles, executor)
{
	EXPECT_EQ(0, pto_set_role(self->fd, PTO_ROLE_EXECUTOR));
}

/*
 * The device node is the administrator's to hand out: mode 0660, group
 * "pto" (kmod/60-pto.rules; the VM rig applies it). A user outside the
 * group cannot open it; one in the group can.
 */
TEST(node_group_only)
{
	struct stat st;
	struct group *g = getgrnam("pto");
	int fd;

	if (stat(pto_dev_path(), &st))
		SKIP(return, "%s: %s", pto_dev_path(), strerror(errno));
	ASSERT_NE(NULL, g) TH_LOG("no group pto (scripts/deps.sh creates it)");
	EXPECT_EQ(0660U, st.st_mode & 0777);
	EXPECT_EQ(g->gr_gid, st.st_gid);
	ASSERT_EQ(0, pto_become_nobody(false));
	fd = open(pto_dev_path(), O_RDWR | O_CLOEXEC);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EACCES, errno);
}

/*
 * The AICPU and EXECUTOR roles reach every client's memory and the
 * cores: without CAP_SYS_ADMIN they are refused, the client role is not.
 */
TEST_F(roles, privileged_roles_need_cap_sys_admin)
{
	int c;

	ASSERT_EQ(0, pto_drop_privileges());
	EXPECT_EQ(-EPERM, pto_set_role(self->fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EPERM, pto_set_role(self->fd, PTO_ROLE_EXECUTOR));
	c = pto_open_role(PTO_ROLE_CLIENT);
	EXPECT_LE(0, c);
	if (c >= 0)
		close(c);
}

/*
 * A file an unprivileged user opened and handed to a privileged process
 * (SCM_RIGHTS, as a client hands its file to ptod) does not get the
 * AICPU or EXECUTOR role from it, nor the right to set the HWS
 * configuration: the opener needs CAP_SYS_ADMIN too.
 */
TEST(privileged_roles_need_privileged_opener)
{
	struct pto_hws_config h = { .size = sizeof(h) };
	int sv[2], fd, status;
	pid_t pid;

	PTO_OPEN_OR_SKIP(fd);
	close(fd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int f;

		close(sv[0]);
		if (pto_drop_privileges())
			_exit(2);
		f = pto_open();
		if (f < 0)
			_exit(3);
		_exit(pto_send_fd(sv[1], f) ? 4 : 0);
	}
	close(sv[1]);
	fd = pto_recv_fd(sv[0]);
	close(sv[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child: status %#x", status);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPERM, pto_set_role(fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EPERM, pto_set_role(fd, PTO_ROLE_EXECUTOR));
	/* nor may it change the HWS configuration */
	h.flags = 0;
	ASSERT_EQ(0, pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h));
	h.flags = PTO_HWS_CONFIG_SET;
	EXPECT_EQ(-EACCES, pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h));
	/* still without a role: the client role needs no privilege */
	EXPECT_EQ(0, pto_set_role(fd, PTO_ROLE_CLIENT));
	close(fd);
}

/*
 * A file opened read-only reads the device (GET_INFO, the HWS
 * configuration) and takes no role and changes nothing: -EBADF.
 */
TEST(read_only_file_takes_no_role)
{
	struct pto_hws_config h = { .size = sizeof(h) };
	struct pto_info info;
	int fd, rw;

	PTO_OPEN_OR_SKIP(rw);
	close(rw);
	fd = open(pto_dev_path(), O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, pto_get_info(fd, &info));
	ASSERT_EQ(0, pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h));
	h.flags = PTO_HWS_CONFIG_SET;
	EXPECT_EQ(-EBADF, pto_ioc(fd, PTO_IOC_HWS_CONFIG, &h));
	EXPECT_EQ(-EBADF, pto_set_role(fd, PTO_ROLE_CLIENT));
	EXPECT_EQ(-EBADF, pto_set_role(fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EBADF, pto_set_role(fd, PTO_ROLE_EXECUTOR));
	close(fd);
}

TEST_F(roles, set_twice)
{
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_CLIENT));
	EXPECT_EQ(-EBUSY, pto_set_role(self->fd, PTO_ROLE_CLIENT));
	EXPECT_EQ(-EBUSY, pto_set_role(self->fd, PTO_ROLE_EXECUTOR));
	EXPECT_EQ(-EBUSY, pto_set_role(self->fd, PTO_ROLE_AICPU));
}

TEST_F(roles, aicpu_then_other)
{
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EBUSY, pto_set_role(self->fd, PTO_ROLE_CLIENT));
	EXPECT_EQ(-EBUSY, pto_set_role(self->fd, PTO_ROLE_AICPU));
}

TEST_F(roles, role_none_invalid)
{
	EXPECT_EQ(-EINVAL, pto_set_role(self->fd, PTO_ROLE_NONE));
}

TEST_F(roles, role_unknown_invalid)
{
	EXPECT_EQ(-EINVAL, pto_set_role(self->fd, PTO_ROLE_EXECUTOR + 1));
	EXPECT_EQ(-EINVAL, pto_set_role(self->fd, 0xffffffffU));
}

/* A rejected SET_ROLE leaves the file without a role. */
TEST_F(roles, failed_set_keeps_none)
{
	ASSERT_EQ(-EINVAL, pto_set_role(self->fd, 77));
	EXPECT_EQ(-EACCES, pto_gm_alloc(self->fd, PTO_PAGE, 0, NULL));
	EXPECT_EQ(0, pto_set_role(self->fd, PTO_ROLE_CLIENT));
}

TEST_F(roles, second_aicpu_busy)
{
	int b = pto_open();

	ASSERT_LE(0, b);
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
	EXPECT_EQ(-EBUSY, pto_set_role(b, PTO_ROLE_AICPU));
	/* The failed claim did not give b a role: it can still be a client. */
	EXPECT_EQ(0, pto_set_role(b, PTO_ROLE_CLIENT));
	close(b);
}

TEST_F(roles, aicpu_free_again_after_close)
{
	int b = pto_open();

	ASSERT_LE(0, b);
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
	ASSERT_EQ(-EBUSY, pto_set_role(b, PTO_ROLE_AICPU));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, pto_set_role(b, PTO_ROLE_AICPU));
	close(b);
}

/* The role belongs to the open file, not to a descriptor of it. */
TEST_F(roles, aicpu_held_by_dup)
{
	int d = dup(self->fd), b = pto_open();

	ASSERT_LE(0, d);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(-EBUSY, pto_set_role(b, PTO_ROLE_AICPU));
	close(d);
	EXPECT_EQ(0, pto_set_role(b, PTO_ROLE_AICPU));
	close(b);
}

/* The AICPU role is per device (needs nr_devices >= 2). */
TEST_F(roles, aicpu_per_device)
{
	char other[64];
	int b;

	snprintf(other, sizeof(other), "/dev/pto%u",
		 dev_index_of(pto_dev_path()) ^ 1);
	b = open(other, O_RDWR | O_CLOEXEC);
	if (b < 0)
		SKIP(return, "%s: %s", other, strerror(errno));
	ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
	EXPECT_EQ(0, pto_set_role(b, PTO_ROLE_AICPU));
	close(b);
}

/* Several clients and executors may coexist. */
TEST_F(roles, many_clients_and_executors)
{
	int c[4], i;

	for (i = 0; i < 4; i++) {
		c[i] = pto_open_role(i & 1 ? PTO_ROLE_EXECUTOR :
				     PTO_ROLE_CLIENT);
		EXPECT_LE(0, c[i]);
	}
	for (i = 0; i < 4; i++)
		if (c[i] >= 0)
			close(c[i]);
}

/* ---------------------------------------------------------------------- */
/*
 * Wrong role: every ioctl a role may not issue is -EACCES, with a
 * well-formed argument so that only the role can be the reason.
 */

FIXTURE(wrong_role) {
	int fd;
	struct pto_info info;
	union {
		struct pto_gm_alloc alloc;
		struct pto_gm_free free;
		struct pto_cores cores;
		struct pto_core_wait wait;
		struct pto_raise_irq raise;
		struct pto_irq_wait irq;
		struct pto_hws_config hws;
		struct pto_core_wait_any any;
		struct pto_gm_quota quota;
		struct pto_gm_pin pin;
		struct pto_gm_unpin unpin;
	} arg;
};

FIXTURE_VARIANT(wrong_role) {
	__u32 role;
	unsigned long req;
};

#define WRONG_ROLE(_name, _role, _req) \
	FIXTURE_VARIANT_ADD(wrong_role, _name) { \
		.role = _role, .req = _req, \
	}

WRONG_ROLE(gm_alloc_none, PTO_ROLE_NONE, PTO_IOC_GM_ALLOC);
WRONG_ROLE(gm_alloc_executor, PTO_ROLE_EXECUTOR, PTO_IOC_GM_ALLOC);
WRONG_ROLE(gm_free_none, PTO_ROLE_NONE, PTO_IOC_GM_FREE);
WRONG_ROLE(gm_free_executor, PTO_ROLE_EXECUTOR, PTO_IOC_GM_FREE);
WRONG_ROLE(attach_none, PTO_ROLE_NONE, PTO_IOC_CORE_ATTACH);
WRONG_ROLE(attach_client, PTO_ROLE_CLIENT, PTO_IOC_CORE_ATTACH);
WRONG_ROLE(attach_aicpu, PTO_ROLE_AICPU, PTO_IOC_CORE_ATTACH);
WRONG_ROLE(detach_none, PTO_ROLE_NONE, PTO_IOC_CORE_DETACH);
WRONG_ROLE(detach_client, PTO_ROLE_CLIENT, PTO_IOC_CORE_DETACH);
WRONG_ROLE(detach_aicpu, PTO_ROLE_AICPU, PTO_IOC_CORE_DETACH);
WRONG_ROLE(core_wait_none, PTO_ROLE_NONE, PTO_IOC_CORE_WAIT);
WRONG_ROLE(core_wait_client, PTO_ROLE_CLIENT, PTO_IOC_CORE_WAIT);
WRONG_ROLE(core_wait_aicpu, PTO_ROLE_AICPU, PTO_IOC_CORE_WAIT);
WRONG_ROLE(kick_none, PTO_ROLE_NONE, PTO_IOC_KICK);
WRONG_ROLE(kick_client, PTO_ROLE_CLIENT, PTO_IOC_KICK);
WRONG_ROLE(kick_executor, PTO_ROLE_EXECUTOR, PTO_IOC_KICK);
WRONG_ROLE(raise_irq_none, PTO_ROLE_NONE, PTO_IOC_RAISE_IRQ);
WRONG_ROLE(raise_irq_client, PTO_ROLE_CLIENT, PTO_IOC_RAISE_IRQ);
WRONG_ROLE(irq_wait_none, PTO_ROLE_NONE, PTO_IOC_IRQ_WAIT);
WRONG_ROLE(irq_wait_client, PTO_ROLE_CLIENT, PTO_IOC_IRQ_WAIT);
WRONG_ROLE(irq_wait_executor, PTO_ROLE_EXECUTOR, PTO_IOC_IRQ_WAIT);
WRONG_ROLE(hws_set_none, PTO_ROLE_NONE, PTO_IOC_HWS_CONFIG);
WRONG_ROLE(hws_set_client, PTO_ROLE_CLIENT, PTO_IOC_HWS_CONFIG);
WRONG_ROLE(hws_set_executor, PTO_ROLE_EXECUTOR, PTO_IOC_HWS_CONFIG);
WRONG_ROLE(wait_any_none, PTO_ROLE_NONE, PTO_IOC_CORE_WAIT_ANY);
WRONG_ROLE(wait_any_client, PTO_ROLE_CLIENT, PTO_IOC_CORE_WAIT_ANY);
WRONG_ROLE(wait_any_aicpu, PTO_ROLE_AICPU, PTO_IOC_CORE_WAIT_ANY);
WRONG_ROLE(gm_quota_none, PTO_ROLE_NONE, PTO_IOC_GM_QUOTA);
WRONG_ROLE(gm_quota_client, PTO_ROLE_CLIENT, PTO_IOC_GM_QUOTA);
WRONG_ROLE(gm_quota_executor, PTO_ROLE_EXECUTOR, PTO_IOC_GM_QUOTA);
WRONG_ROLE(gm_pin_none, PTO_ROLE_NONE, PTO_IOC_GM_PIN);
WRONG_ROLE(gm_pin_client, PTO_ROLE_CLIENT, PTO_IOC_GM_PIN);
WRONG_ROLE(gm_pin_executor, PTO_ROLE_EXECUTOR, PTO_IOC_GM_PIN);
WRONG_ROLE(gm_unpin_none, PTO_ROLE_NONE, PTO_IOC_GM_UNPIN);
WRONG_ROLE(gm_unpin_client, PTO_ROLE_CLIENT, PTO_IOC_GM_UNPIN);
WRONG_ROLE(gm_unpin_executor, PTO_ROLE_EXECUTOR, PTO_IOC_GM_UNPIN);

FIXTURE_SETUP(wrong_role)
{
	PTO_OPEN_OR_SKIP(self->fd);
	ASSERT_EQ(0, pto_get_info(self->fd, &self->info));
	if (variant->role != PTO_ROLE_NONE)
		ASSERT_EQ(0, pto_set_role(self->fd, variant->role));
	memset(&self->arg, 0, sizeof(self->arg));
	switch (variant->req) {
	case PTO_IOC_GM_ALLOC:
		self->arg.alloc.size = sizeof(self->arg.alloc);
		self->arg.alloc.len = PTO_PAGE;
		break;
	case PTO_IOC_GM_FREE:
		self->arg.free.size = sizeof(self->arg.free);
		self->arg.free.handle = 1;
		break;
	case PTO_IOC_CORE_ATTACH:
	case PTO_IOC_CORE_DETACH:
	case PTO_IOC_KICK:
		self->arg.cores.size = sizeof(self->arg.cores);
		self->arg.cores.mask[0] = 1;
		break;
	case PTO_IOC_CORE_WAIT:
		self->arg.wait.size = sizeof(self->arg.wait);
		self->arg.wait.last_dmb = 0;
		self->arg.wait.timeout_ns = pto_deadline_ms(20);
		break;
	case PTO_IOC_CORE_WAIT_ANY:
		self->arg.any.size = sizeof(self->arg.any);
		self->arg.any.mask[0] = 1;
		self->arg.any.timeout_ns = pto_deadline_ms(20);
		break;
	case PTO_IOC_RAISE_IRQ:
		self->arg.raise.size = sizeof(self->arg.raise);
		break;
	case PTO_IOC_IRQ_WAIT:
		self->arg.irq.size = sizeof(self->arg.irq);
		self->arg.irq.timeout_ns = pto_deadline_ms(20);
		break;
	case PTO_IOC_GM_PIN:
		/* a descriptor of a client file: its own, if it is one */
		self->arg.pin.size = sizeof(self->arg.pin);
		self->arg.pin.fd = self->fd;
		self->arg.pin.dev_addr = PTO_GM_DEV_BASE;
		self->arg.pin.len = 1;
		break;
	case PTO_IOC_GM_UNPIN:
		self->arg.unpin.size = sizeof(self->arg.unpin);
		self->arg.unpin.pin = 1;
		break;
	case PTO_IOC_HWS_CONFIG:
		self->arg.hws.size = sizeof(self->arg.hws);
		ASSERT_EQ(0, pto_ioc(self->fd, PTO_IOC_HWS_CONFIG,
				     &self->arg.hws));
		self->arg.hws.flags = PTO_HWS_CONFIG_SET;
		break;
	case PTO_IOC_GM_QUOTA:
		self->arg.quota.size = sizeof(self->arg.quota);
		self->arg.quota.flags = PTO_GM_QUOTA_SET;
		self->arg.quota.bytes = PTO_PAGE;
		break;
	}
}

FIXTURE_TEARDOWN(wrong_role)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(wrong_role, eacces)
{
	/* an administrator may set the HWS registers from any role */
	if (variant->req == PTO_IOC_HWS_CONFIG)
		ASSERT_EQ(0, pto_drop_privileges());
	EXPECT_EQ(-EACCES, pto_ioc(self->fd, variant->req, &self->arg));
}

/* ---------------------------------------------------------------------- */
/*
 * Size-first rules, one variant per ioctl. Each variant's prep() builds a
 * valid argument in self->arg and returns the file to issue it on, so that
 * the only thing a test changes is @size, @flags or the tail.
 */

FIXTURE(sized) {
	int none, fresh, client, aicpu, exec;
	void *regs;
	struct pto_info info;
	__u8 arg[2 * PTO_PAGE] __attribute__((aligned(8)));
};

FIXTURE_VARIANT(sized) {
	unsigned long req;
	__u32 size;
	int (*prep)(FIXTURE_DATA(sized) *self, void *arg);
};

static int prep_get_info(FIXTURE_DATA(sized) *self, void *arg)
{
	return self->none;
}

static int prep_set_role(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_set_role *)arg)->role = PTO_ROLE_CLIENT;
	return self->fresh;
}

static int prep_gm_alloc(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_gm_alloc *)arg)->len = PTO_PAGE;
	return self->client;
}

static int prep_gm_free(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_gm_alloc a;

	if (pto_gm_alloc(self->client, PTO_PAGE, 0, &a))
		return -1;
	((struct pto_gm_free *)arg)->handle = a.handle;
	return self->client;
}

static int prep_gm_lookup(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_gm_alloc a;

	if (pto_gm_alloc(self->client, PTO_PAGE, 0, &a))
		return -1;
	((struct pto_gm_lookup *)arg)->dev_addr = a.dev_addr;
	((struct pto_gm_lookup *)arg)->len = 1;
	return self->client;
}

static int prep_attach(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_cores *)arg)->mask[0] = 2;	/* core 1 */
	return self->exec;
}

static int prep_detach(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_cores *)arg)->mask[0] = 1;	/* core 0 */
	return self->exec;
}

static int prep_core_wait(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_core_wait *w = arg;

	/* A stale last_dmb: the call returns at once. */
	w->core = 0;
	w->last_dmb = pto_core(self->regs, 0)->data_main_base + 1;
	w->timeout_ns = pto_deadline_ms(1000);
	return self->exec;
}

static int prep_core_wait_any(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_core_wait_any *w = arg;

	/* A kick latched on parked core 0: the call returns at once. */
	PTO_STORE(pto_core(self->regs, 0)->parked, 1);
	PTO_FENCE();
	if (pto_kick(self->aicpu, 0))
		return -1;
	w->mask[0] = 1;
	w->timeout_ns = pto_deadline_ms(1000);
	return self->exec;
}

static int prep_gm_pin(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_gm_pin *p = arg;
	struct pto_gm_alloc a;

	if (pto_gm_alloc(self->client, PTO_PAGE, 0, &a))
		return -1;
	p->fd = self->client;
	p->dev_addr = a.dev_addr;
	p->len = 1;
	return self->aicpu;
}

static int prep_gm_unpin(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_gm_pin p = { .size = sizeof(p) };

	if (prep_gm_pin(self, &p) < 0 ||
	    pto_ioc(self->aicpu, PTO_IOC_GM_PIN, &p))
		return -1;
	((struct pto_gm_unpin *)arg)->pin = p.pin;
	return self->aicpu;
}

static int prep_kick(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_cores *)arg)->mask[0] = 1;
	return self->aicpu;
}

static int prep_raise_irq(FIXTURE_DATA(sized) *self, void *arg)
{
	((struct pto_raise_irq *)arg)->core = 0;
	return self->exec;
}

static int prep_irq_wait(FIXTURE_DATA(sized) *self, void *arg)
{
	struct pto_irq_wait *w = arg;

	/* A count that differs from the device's: returns at once. */
	w->count = pto_regs_info(self->regs)->irq_count + 0x1000;
	w->timeout_ns = pto_deadline_ms(1000);
	return self->aicpu;
}

static int prep_hws_config(FIXTURE_DATA(sized) *self, void *arg)
{
	return self->none;
}

static int prep_gm_quota(FIXTURE_DATA(sized) *self, void *arg)
{
	return self->aicpu;
}

#define SIZED(_name, _req, _type) \
	FIXTURE_VARIANT_ADD(sized, _name) { \
		.req = _req, .size = sizeof(_type), .prep = prep_##_name, \
	}

SIZED(get_info, PTO_IOC_GET_INFO, struct pto_info);
SIZED(set_role, PTO_IOC_SET_ROLE, struct pto_set_role);
SIZED(gm_alloc, PTO_IOC_GM_ALLOC, struct pto_gm_alloc);
SIZED(gm_free, PTO_IOC_GM_FREE, struct pto_gm_free);
SIZED(gm_lookup, PTO_IOC_GM_LOOKUP, struct pto_gm_lookup);
SIZED(attach, PTO_IOC_CORE_ATTACH, struct pto_cores);
SIZED(detach, PTO_IOC_CORE_DETACH, struct pto_cores);
SIZED(core_wait, PTO_IOC_CORE_WAIT, struct pto_core_wait);
SIZED(kick, PTO_IOC_KICK, struct pto_cores);
SIZED(raise_irq, PTO_IOC_RAISE_IRQ, struct pto_raise_irq);
SIZED(irq_wait, PTO_IOC_IRQ_WAIT, struct pto_irq_wait);
SIZED(hws_config, PTO_IOC_HWS_CONFIG, struct pto_hws_config);
SIZED(core_wait_any, PTO_IOC_CORE_WAIT_ANY, struct pto_core_wait_any);
SIZED(gm_quota, PTO_IOC_GM_QUOTA, struct pto_gm_quota);
SIZED(gm_pin, PTO_IOC_GM_PIN, struct pto_gm_pin);
SIZED(gm_unpin, PTO_IOC_GM_UNPIN, struct pto_gm_unpin);

FIXTURE_SETUP(sized)
{
	self->fresh = self->client = self->aicpu = self->exec = -1;
	PTO_OPEN_OR_SKIP(self->none);
	ASSERT_EQ(0, pto_get_info(self->none, &self->info));
	self->fresh = pto_open();
	ASSERT_LE(0, self->fresh);
	self->client = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, self->client);
	self->aicpu = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, self->aicpu);
	self->exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, self->exec);
	self->regs = pto_map_regs(self->aicpu);
	ASSERT_NE(NULL, self->regs);
	ASSERT_EQ(0, pto_attach(self->exec, 0));
}

FIXTURE_TEARDOWN(sized)
{
	/* Process exit releases everything; nothing to undo. */
}

/* Fill self->arg with a valid argument of @size bytes; returns the fd. */
static int sized_prep(FIXTURE_DATA(sized) *self,
		      const FIXTURE_VARIANT(sized) *variant, __u32 size)
{
	memset(self->arg, 0, sizeof(self->arg));
	((__u32 *)self->arg)[0] = size;
	return variant->prep(self, self->arg);
}

static int sized_call(FIXTURE_DATA(sized) *self,
		      const FIXTURE_VARIANT(sized) *variant, int fd)
{
	return pto_ioc(fd, variant->req, self->arg);
}

static bool tail_zero(const __u8 *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

TEST_F(sized, exact)
{
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sized_call(self, variant, fd));
}

TEST_F(sized, size_zero)
{
	int fd = sized_prep(self, variant, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

TEST_F(sized, size_header_only)
{
	int fd = sized_prep(self, variant, 8);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

TEST_F(sized, size_short_by_one)
{
	int fd = sized_prep(self, variant, variant->size - 1);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

TEST_F(sized, size_short_by_word)
{
	int fd = sized_prep(self, variant, variant->size - 4);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

/* Longer with a zero tail is accepted; the kernel writes nothing past
 * the struct it knows.
 */
TEST_F(sized, longer_zero_tail)
{
	int fd = sized_prep(self, variant, variant->size + 64);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sized_call(self, variant, fd));
	EXPECT_TRUE(tail_zero(self->arg + variant->size, 64));
}

TEST_F(sized, longer_nonzero_first_tail_byte)
{
	int fd = sized_prep(self, variant, variant->size + 8);

	ASSERT_LE(0, fd);
	self->arg[variant->size] = 1;
	EXPECT_EQ(-E2BIG, sized_call(self, variant, fd));
}

TEST_F(sized, longer_nonzero_last_tail_byte)
{
	int fd = sized_prep(self, variant, variant->size + 8);

	ASSERT_LE(0, fd);
	self->arg[variant->size + 7] = 0x80;
	EXPECT_EQ(-E2BIG, sized_call(self, variant, fd));
}

/* A non-zero byte beyond the size userspace declared is not looked at. */
TEST_F(sized, garbage_beyond_declared_size)
{
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	self->arg[variant->size] = 0xff;
	EXPECT_EQ(0, sized_call(self, variant, fd));
}

TEST_F(sized, size_page)
{
	int fd = sized_prep(self, variant, PTO_PAGE);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sized_call(self, variant, fd));
}

TEST_F(sized, size_over_page)
{
	int fd = sized_prep(self, variant, PTO_PAGE + 8);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-E2BIG, sized_call(self, variant, fd));
}

TEST_F(sized, size_huge)
{
	int fd = sized_prep(self, variant, 0xffffffffU);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-E2BIG, sized_call(self, variant, fd));
}

TEST_F(sized, unknown_flag_high)
{
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	((__u32 *)self->arg)[1] = 1U << 31;
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

TEST_F(sized, unknown_flag_low)
{
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	/*
	 * Bit 0 is PTO_HWS_CONFIG_SET for HWS_CONFIG, bits 0-2 are
	 * PTO_GM_QUOTA_* for GM_QUOTA; bit 3 is unknown to every ioctl.
	 */
	((__u32 *)self->arg)[1] = 1U << 3;
	EXPECT_EQ(-EINVAL, sized_call(self, variant, fd));
}

/* The argument is read from user memory: a bad pointer is -EFAULT. */
TEST_F(sized, bad_pointer)
{
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, pto_ioc(fd, variant->req, NULL));
}

/* The struct runs off the end of the user mapping. */
TEST_F(sized, struct_crosses_unmapped_page)
{
	__u8 *p = mmap(NULL, 2 * PTO_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u8 *arg;
	int fd = sized_prep(self, variant, variant->size);

	ASSERT_LE(0, fd);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + PTO_PAGE, PTO_PAGE));
	/* Only the first 8 bytes (size, flags) are mapped. */
	arg = p + PTO_PAGE - 8;
	memcpy(arg, self->arg, 8);
	EXPECT_EQ(-EFAULT, pto_ioc(fd, variant->req, arg));
	munmap(p, PTO_PAGE);
}

/* ---------------------------------------------------------------------- */
/* Must-be-zero pad fields that are inputs. */

FIXTURE(pads) {
	int fd, exec, aicpu;
	void *regs;
	__u8 arg[256] __attribute__((aligned(8)));
};

FIXTURE_VARIANT(pads) {
	unsigned long req;
	__u32 role;
	size_t size;
	size_t pad_off;
};

FIXTURE_VARIANT_ADD(pads, set_role) {
	.req = PTO_IOC_SET_ROLE, .role = PTO_ROLE_NONE,
	.size = sizeof(struct pto_set_role),
	.pad_off = offsetof(struct pto_set_role, pad),
};

FIXTURE_VARIANT_ADD(pads, gm_free) {
	.req = PTO_IOC_GM_FREE, .role = PTO_ROLE_CLIENT,
	.size = sizeof(struct pto_gm_free),
	.pad_off = offsetof(struct pto_gm_free, pad),
};

FIXTURE_VARIANT_ADD(pads, gm_alloc) {
	.req = PTO_IOC_GM_ALLOC, .role = PTO_ROLE_CLIENT,
	.size = sizeof(struct pto_gm_alloc),
	.pad_off = offsetof(struct pto_gm_alloc, uid),
};

FIXTURE_VARIANT_ADD(pads, gm_lookup) {
	.req = PTO_IOC_GM_LOOKUP, .role = PTO_ROLE_CLIENT,
	.size = sizeof(struct pto_gm_lookup),
	.pad_off = offsetof(struct pto_gm_lookup, pad),
};

FIXTURE_VARIANT_ADD(pads, raise_irq) {
	.req = PTO_IOC_RAISE_IRQ, .role = PTO_ROLE_EXECUTOR,
	.size = sizeof(struct pto_raise_irq),
	.pad_off = offsetof(struct pto_raise_irq, pad),
};

FIXTURE_VARIANT_ADD(pads, irq_wait) {
	.req = PTO_IOC_IRQ_WAIT, .role = PTO_ROLE_AICPU,
	.size = sizeof(struct pto_irq_wait),
	.pad_off = offsetof(struct pto_irq_wait, pad),
};

FIXTURE_VARIANT_ADD(pads, gm_quota) {
	.req = PTO_IOC_GM_QUOTA, .role = PTO_ROLE_AICPU,
	.size = sizeof(struct pto_gm_quota),
	.pad_off = offsetof(struct pto_gm_quota, pad),
};

FIXTURE_SETUP(pads)
{
	__u32 *w = (__u32 *)self->arg;
	struct pto_gm_alloc a;

	PTO_OPEN_OR_SKIP(self->fd);
	memset(self->arg, 0, sizeof(self->arg));
	w[0] = variant->size;
	switch (variant->role) {
	case PTO_ROLE_NONE:
		((struct pto_set_role *)self->arg)->role = PTO_ROLE_CLIENT;
		break;
	case PTO_ROLE_CLIENT:
		ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_CLIENT));
		ASSERT_EQ(0, pto_gm_alloc(self->fd, PTO_PAGE, 0, &a));
		if (variant->req == PTO_IOC_GM_FREE) {
			((struct pto_gm_free *)self->arg)->handle = a.handle;
		} else if (variant->req == PTO_IOC_GM_ALLOC) {
			((struct pto_gm_alloc *)self->arg)->len = PTO_PAGE;
		} else {
			((struct pto_gm_lookup *)self->arg)->dev_addr =
				a.dev_addr;
			((struct pto_gm_lookup *)self->arg)->len = 1;
		}
		break;
	case PTO_ROLE_EXECUTOR:
		ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_EXECUTOR));
		ASSERT_EQ(0, pto_attach(self->fd, 0));
		break;
	case PTO_ROLE_AICPU:
		ASSERT_EQ(0, pto_set_role(self->fd, PTO_ROLE_AICPU));
		self->regs = pto_map_regs(self->fd);
		ASSERT_NE(NULL, self->regs);
		if (variant->req == PTO_IOC_IRQ_WAIT)
			((struct pto_irq_wait *)self->arg)->count =
				pto_regs_info(self->regs)->irq_count + 1;
		break;
	}
}

FIXTURE_TEARDOWN(pads)
{
	close(self->fd);
}

TEST_F(pads, nonzero_pad)
{
	*(__u32 *)(self->arg + variant->pad_off) = 1;
	EXPECT_EQ(-EINVAL, pto_ioc(self->fd, variant->req, self->arg));
	/* ... and the same argument with the pad cleared works. */
	*(__u32 *)(self->arg + variant->pad_off) = 0;
	EXPECT_EQ(0, pto_ioc(self->fd, variant->req, self->arg));
}

TEST_HARNESS_MAIN
