// SPDX-License-Identifier: GPL-2.0
/*
 * pto_hws: the HWS configuration registers: read by anyone, written
 * (validated) by the AICPU only, visible in the register file.
 *
 * Every core mask is a bitmap of the device's cores; the limits depend on
 * nr_cores, which every fixture reads from GET_INFO, so the suite holds
 * for any nr_aic (pto_module.sh runs it at 12 and 192 cores too).
 */
#include "kselftest_harness.h"
#include "pto_test.h"

/*
 * The limits (uapi) and the defaults as the user-mode device builds them
 * (common/hws_regs.c, built in): the module must agree.
 */
#include <pto-private/hws_regs.h>

#define HWS_PROMOTE_THRESHOLD_MAX	((unsigned int)PTO_HWS_PROMOTE_THRESHOLD_MAX)
#define HWS_TIME_MAX_NS			PTO_HWS_TIME_MAX_NS
#define HWS_CLUSTER_SIPS		((unsigned int)PTO_HWS_CLUSTER_SIPS)

static void mask_set(__u64 *m, unsigned int core)
{
	m[core / 64] |= 1ULL << (core % 64);
}

/* Bits 0 .. n - 1. */
static void mask_first(__u64 *m, unsigned int n)
{
	unsigned int i;

	memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
	for (i = 0; i < n; i++)
		mask_set(m, i);
}

static bool cfg_eq(const struct pto_hws_cfg *a, const struct pto_hws_cfg *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* Byte offset of the first difference, for the log; -1 if equal. */
static long cfg_diff(const struct pto_hws_cfg *a, const struct pto_hws_cfg *b)
{
	const __u8 *x = (const void *)a, *y = (const void *)b;
	size_t i;

	for (i = 0; i < sizeof(*a); i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

static void cfg_from_regs(void *regs, struct pto_hws_cfg *c)
{
	memcpy(c, (const void *)&pto_regs_hws(regs)->cfg, sizeof(*c));
}

/* What the module sets at load (Documentation/kmod.rst). */
static void cfg_default(struct pto_hws_cfg *c, unsigned int nr_cores)
{
	pto_hws_cfg_default(c, nr_cores);
}

/*
 * A valid configuration unlike the default in every field that has more
 * than one valid value; each context and class gets its own mask.
 */
static void cfg_good(struct pto_hws_cfg *c, unsigned int nr_cores)
{
	int i, ctx;

	memset(c, 0, sizeof(*c));
	c->policy = PTO_HWS_POLICY_PTO2;
	c->work_mode = PTO_HWS_MODE_FW;
	c->cluster_sip_num = HWS_CLUSTER_SIPS;
	c->second_rsc_sch = 0;
	c->early_launch_en = 1;
	c->early_launch_mode = PTO_HWS_EL_HWS_PREDICT;
	c->backfill_margin = (1U << 31) | 250;
	c->fillup_first = 1;
	c->rsvd_first = 1;
	c->promote_rule = PTO_HWS_PROMOTE_ALL;
	c->promote_threshold = 7;
	c->report_en = 1;
	c->launch_delay = 20000;
	c->pre_idle_offset = 5000;
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		c->scale_ratio[i] = 100 + 10 * i;
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			mask_set(c->usage_mask[ctx][i], ctx % nr_cores);
			mask_set(c->usage_mask[ctx][i],
				 (PTO_HWS_NR_CTX + i) % nr_cores);
		}
	}
}

FIXTURE(hws) {
	int aicpu, client, exec, none;
	void *regs;
	unsigned int nr_cores;
	struct pto_hws_cfg orig;
};

FIXTURE_SETUP(hws)
{
	struct pto_info info;

	self->client = self->exec = self->none = -1;
	self->regs = NULL;
	PTO_OPEN_OR_SKIP(self->aicpu);
	ASSERT_EQ(0, pto_set_role(self->aicpu, PTO_ROLE_AICPU));
	self->client = pto_open_role(PTO_ROLE_CLIENT);
	ASSERT_LE(0, self->client);
	self->exec = pto_open_role(PTO_ROLE_EXECUTOR);
	ASSERT_LE(0, self->exec);
	self->none = pto_open();
	ASSERT_LE(0, self->none);
	ASSERT_EQ(0, pto_get_info(self->none, &info));
	self->nr_cores = info.nr_cores;
	self->regs = pto_map_regs(self->aicpu);
	ASSERT_NE(NULL, self->regs);
	ASSERT_EQ(0, pto_hws_get(self->aicpu, &self->orig));
}

/* Leave the configuration as we found it for the tests that follow. */
FIXTURE_TEARDOWN(hws)
{
	if (self->aicpu >= 0 && self->regs)
		pto_hws_set(self->aicpu, &self->orig, NULL);
}

TEST_F(hws, read_any_role)
{
	struct pto_hws_cfg c;

	ASSERT_EQ(0, pto_hws_get(self->none, &c));
	EXPECT_TRUE(cfg_eq(&self->orig, &c));
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_TRUE(cfg_eq(&self->orig, &c));
	ASSERT_EQ(0, pto_hws_get(self->exec, &c));
	EXPECT_TRUE(cfg_eq(&self->orig, &c));
}

/* Whatever the configuration is, it obeys the rules of a write. */
TEST_F(hws, current_values_valid)
{
	struct pto_hws_cfg *c = &self->orig;
	unsigned int i, ctx, core;

	EXPECT_GE((__u32)PTO_HWS_POLICY_PTO2, c->policy);
	EXPECT_GE((__u32)PTO_HWS_MODE_FW, c->work_mode);
	EXPECT_EQ(HWS_CLUSTER_SIPS, c->cluster_sip_num);
	EXPECT_EQ(0U, c->second_rsc_sch);
	EXPECT_GE(1U, c->early_launch_en);
	EXPECT_GE((__u32)PTO_HWS_EL_HWS_PREDICT, c->early_launch_mode);
	EXPECT_GE(1U, c->fillup_first);
	EXPECT_GE(1U, c->rsvd_first);
	EXPECT_EQ(0U, c->promote_rule & ~PTO_HWS_PROMOTE_ALL);
	EXPECT_LE(1U, c->promote_threshold);
	EXPECT_GE(HWS_PROMOTE_THRESHOLD_MAX, c->promote_threshold);
	EXPECT_GE(1U, c->report_en);
	EXPECT_GE(HWS_TIME_MAX_NS, c->launch_delay);
	EXPECT_GE(HWS_TIME_MAX_NS, c->pre_idle_offset);
	EXPECT_EQ(0U, c->pad[0] | c->pad[1]);
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++) {
		EXPECT_LE(1U, c->scale_ratio[i]);
		EXPECT_GE(PTO_HWS_SCALE_MAX, c->scale_ratio[i]);
	}
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++)
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++)
			for (core = self->nr_cores; core < PTO_MAX_CORES;
			     core++)
				EXPECT_EQ(0ULL, c->usage_mask[ctx][i][core / 64] &
					  (1ULL << (core % 64)))
					TH_LOG("ctx %u class %u core %u",
					       ctx, i, core);
}

/*
 * The defaults of Documentation/kmod.rst, field by field, through the
 * ioctl and through the register file.
 */
TEST_F(hws, documented_defaults)
{
	struct pto_hws_cfg want, r;
	const struct pto_hws_cfg *c = &self->orig;
	unsigned int i, ctx, w;

	EXPECT_EQ((__u32)PTO_HWS_POLICY_HWS, c->policy);
	EXPECT_EQ((__u32)PTO_HWS_MODE_HW, c->work_mode);
	EXPECT_EQ(HWS_CLUSTER_SIPS, c->cluster_sip_num);
	EXPECT_EQ(0U, c->second_rsc_sch);
	EXPECT_EQ(0U, c->early_launch_en);
	EXPECT_EQ((__u32)PTO_HWS_EL_SIP_REPORT, c->early_launch_mode);
	EXPECT_EQ(0U, c->backfill_margin);
	EXPECT_EQ(0U, c->fillup_first);
	EXPECT_EQ(0U, c->rsvd_first);
	/* Documentation/decisions.rst: threshold rule on, threshold 4. */
	EXPECT_EQ(PTO_HWS_PROMOTE_THRESHOLD, c->promote_rule);
	EXPECT_EQ(4U, c->promote_threshold);
	EXPECT_EQ(0U, c->report_en);
	EXPECT_EQ(0U, c->launch_delay);
	EXPECT_EQ(0U, c->pre_idle_offset);
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		EXPECT_EQ(100 * (i + 1), c->scale_ratio[i]);
	/* Every context and class: exactly the device's cores. */
	cfg_default(&want, self->nr_cores);
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++)
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++)
			for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
				EXPECT_EQ(want.usage_mask[ctx][i][w],
					  c->usage_mask[ctx][i][w])
					TH_LOG("ctx %u class %u word %u",
					       ctx, i, w);
	/* The whole block, then the register file. */
	EXPECT_TRUE(cfg_eq(&want, c))
		TH_LOG("ioctl differs at byte %ld", cfg_diff(&want, c));
	cfg_from_regs(self->regs, &r);
	EXPECT_TRUE(cfg_eq(&want, &r))
		TH_LOG("register file differs at byte %ld",
		       cfg_diff(&want, &r));
}

TEST_F(hws, regs_match_ioctl)
{
	struct pto_hws_cfg r;

	cfg_from_regs(self->regs, &r);
	EXPECT_TRUE(cfg_eq(&self->orig, &r));
}

/* Without CAP_SYS_ADMIN only the AICPU may write the registers. */
TEST_F(hws, set_by_client_unprivileged)
{
	struct pto_hws_cfg c;

	ASSERT_EQ(0, pto_drop_privileges());
	EXPECT_EQ(-EACCES, pto_hws_set(self->client, &self->orig, NULL));
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_TRUE(cfg_eq(&self->orig, &c));
}

TEST_F(hws, set_by_executor_unprivileged)
{
	ASSERT_EQ(0, pto_drop_privileges());
	EXPECT_EQ(-EACCES, pto_hws_set(self->exec, &self->orig, NULL));
}

TEST_F(hws, set_by_no_role_unprivileged)
{
	ASSERT_EQ(0, pto_drop_privileges());
	EXPECT_EQ(-EACCES, pto_hws_set(self->none, &self->orig, NULL));
}

/* An administrator may, whatever the file's role (validated all the same). */
TEST_F(hws, set_by_admin_client)
{
	struct pto_hws_cfg want = self->orig, out, bad;

	want.promote_threshold = self->orig.promote_threshold % 200 + 1;
	ASSERT_EQ(0, pto_hws_set(self->client, &want, &out));
	EXPECT_TRUE(cfg_eq(&want, &out));
	bad = want;
	bad.policy = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->none, &bad, NULL));
	ASSERT_EQ(0, pto_hws_get(self->none, &out));
	EXPECT_TRUE(cfg_eq(&want, &out));
}

TEST_F(hws, set_good)
{
	struct pto_hws_cfg want, out, c;

	cfg_good(&want, self->nr_cores);
	memset(&out, 0xaa, sizeof(out));
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &want, &out));
	EXPECT_TRUE(cfg_eq(&want, &out))
		TH_LOG("returned config differs at byte %ld",
		       cfg_diff(&want, &out));
	/* In the register file ... */
	cfg_from_regs(self->regs, &c);
	EXPECT_TRUE(cfg_eq(&want, &c))
		TH_LOG("register file differs at byte %ld",
		       cfg_diff(&want, &c));
	/* ... and for everyone else. */
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_TRUE(cfg_eq(&want, &c));
}

static __u32 cfg_seq(void *regs)
{
	return PTO_LOAD(pto_regs_hws(regs)->cfg_seq);
}

/*
 * Every SET moves CFG_SEQ on by two and leaves it even (the HWS reads the
 * registers between two equal even counts); a refused SET leaves it.
 */
TEST_F(hws, set_advances_cfg_seq)
{
	struct pto_hws_cfg c;
	__u32 s0 = cfg_seq(self->regs);

	EXPECT_EQ(0U, s0 & 1);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &self->orig, NULL));
	EXPECT_EQ(s0 + 2, cfg_seq(self->regs));
	cfg_good(&c, self->nr_cores);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, NULL));
	EXPECT_EQ(s0 + 4, cfg_seq(self->regs));
	c.promote_threshold = 0;
	c.cluster_sip_num = 0;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	EXPECT_EQ(s0 + 4, cfg_seq(self->regs));
}

/* Setting the same values twice is fine (idempotent). */
TEST_F(hws, set_same_twice)
{
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &self->orig, NULL));
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &self->orig, NULL));
}

/* Empty masks are valid: that context and class may use no core. */
TEST_F(hws, set_empty_usage_masks)
{
	struct pto_hws_cfg c = self->orig, out;

	memset(c.usage_mask, 0, sizeof(c.usage_mask));
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &c, &out));
	EXPECT_TRUE(cfg_eq(&c, &out));
}

/*
 * Each context keeps its own masks: writing one context's masks changes
 * no other context's, and four different sets read back as written.
 */
TEST_F(hws, usage_mask_contexts_independent)
{
	struct pto_hws_cfg c, now;
	unsigned int ctx, other, i;

	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		c = self->orig;
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			memset(c.usage_mask[ctx][i], 0,
			       sizeof(c.usage_mask[ctx][i]));
			mask_set(c.usage_mask[ctx][i],
				 (ctx * PTO_HWS_USAGE_CLASSES + i) %
				 self->nr_cores);
		}
		ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, NULL))
			TH_LOG("ctx %u", ctx);
		ASSERT_EQ(0, pto_hws_get(self->none, &now));
		for (other = 0; other < PTO_HWS_NR_CTX; other++) {
			const void *want = other == ctx ?
				c.usage_mask[other] :
				self->orig.usage_mask[other];

			EXPECT_EQ(0, memcmp(want, now.usage_mask[other],
					    sizeof(now.usage_mask[other])))
				TH_LOG("wrote ctx %u, ctx %u reads back wrong",
				       ctx, other);
		}
		cfg_from_regs(self->regs, &now);
		EXPECT_TRUE(cfg_eq(&c, &now)) TH_LOG("ctx %u", ctx);
	}

	/* All four at once, each different. */
	c = self->orig;
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++)
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++)
			mask_first(c.usage_mask[ctx][i],
				   (ctx + 1) * self->nr_cores /
				   PTO_HWS_NR_CTX);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, &now));
	EXPECT_TRUE(cfg_eq(&c, &now));
	cfg_from_regs(self->regs, &now);
	EXPECT_TRUE(cfg_eq(&c, &now));
}

/* A rejected write leaves every register unchanged, not half-written. */
TEST_F(hws, set_rejected_is_atomic)
{
	struct pto_hws_cfg c, now;

	cfg_good(&c, self->nr_cores);
	/* The only bad field, in the last mask checked. */
	mask_set(c.usage_mask[PTO_HWS_NR_CTX - 1][PTO_HWS_USAGE_CLASSES - 1],
		 self->nr_cores);
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	ASSERT_EQ(0, pto_hws_get(self->none, &now));
	EXPECT_TRUE(cfg_eq(&self->orig, &now));
	cfg_from_regs(self->regs, &now);
	EXPECT_TRUE(cfg_eq(&self->orig, &now));
}

/* Reading ignores @cfg's input values: they are overwritten. */
TEST_F(hws, read_ignores_input_cfg)
{
	struct pto_hws_config h = { .size = sizeof(h) };

	memset(&h.cfg, 0xff, sizeof(h.cfg));
	memset(h.cfg.pad, 0, sizeof(h.cfg.pad));
	ASSERT_EQ(0, pto_ioc(self->client, PTO_IOC_HWS_CONFIG, &h));
	EXPECT_TRUE(cfg_eq(&self->orig, &h.cfg));
}

/*
 * The AICPU may also write the registers through its mapping, unchecked,
 * under their sequence count.
 */
TEST_F(hws, aicpu_writes_through_mapping)
{
	volatile struct pto_regs_hws *h = pto_regs_hws(self->regs);
	__u32 seq = cfg_seq(self->regs);
	struct pto_hws_cfg c;

	PTO_STORE(h->cfg_seq, seq + 1);
	PTO_STORE(h->cfg.promote_threshold, 9);
	PTO_STORE(h->cfg.launch_delay, 1234);
	PTO_STORE(h->cfg.usage_mask[2][PTO_HWS_USAGE_2SIP][1], 0x5ULL);
	PTO_STORE(h->cfg_seq, seq + 2);
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_EQ(9U, c.promote_threshold);
	EXPECT_EQ(1234U, c.launch_delay);
	EXPECT_EQ(0x5ULL, c.usage_mask[2][PTO_HWS_USAGE_2SIP][1]);
}

/*
 * While the AICPU's own write is under way (an odd count), the device
 * neither reads the registers (a half-written configuration) nor writes
 * them (two writers at once): both fail with -EAGAIN, and the AICPU's
 * values and count stay. Once the count is even again, both work.
 */
TEST_F(hws, odd_count_refused)
{
	volatile struct pto_regs_hws *h = pto_regs_hws(self->regs);
	__u32 seq = cfg_seq(self->regs);
	struct pto_hws_cfg c;

	ASSERT_EQ(0U, seq & 1);
	PTO_STORE(h->cfg_seq, seq + 1);
	PTO_STORE(h->cfg.promote_threshold, 9);
	EXPECT_EQ(-EAGAIN, pto_hws_get(self->client, &c));
	cfg_good(&c, self->nr_cores);
	EXPECT_EQ(-EAGAIN, pto_hws_set(self->aicpu, &c, NULL));
	EXPECT_EQ(seq + 1, cfg_seq(self->regs));
	EXPECT_EQ(9U, PTO_LOAD(h->cfg.promote_threshold));
	PTO_STORE(h->cfg_seq, seq + 2);
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_EQ(9U, c.promote_threshold);
	cfg_good(&c, self->nr_cores);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, NULL));
	EXPECT_EQ(seq + 4, cfg_seq(self->regs));
}

/*
 * An AICPU that goes in the middle of its own write leaves the defaults
 * under an even count, not a half-written configuration nobody can read
 * or write.
 */
TEST(hws_aicpu_gone_mid_write)
{
	volatile struct pto_regs_hws *h;
	struct pto_hws_cfg want, c, orig;
	struct pto_info info;
	void *regs;
	__u32 seq;
	int aicpu;

	PTO_OPEN_OR_SKIP(aicpu);
	ASSERT_EQ(0, pto_set_role(aicpu, PTO_ROLE_AICPU));
	ASSERT_EQ(0, pto_get_info(aicpu, &info));
	ASSERT_EQ(0, pto_hws_get(aicpu, &orig));
	regs = pto_map_regs(aicpu);
	ASSERT_NE(NULL, regs);
	h = pto_regs_hws(regs);
	seq = cfg_seq(regs);
	ASSERT_EQ(0U, seq & 1);
	PTO_STORE(h->cfg_seq, seq + 1);
	PTO_STORE(h->cfg.promote_threshold, 0);
	PTO_STORE(h->cfg.cluster_sip_num, 0);
	munmap(regs, PTO_REGS_SIZE);
	close(aicpu);

	/* the next AICPU finds them */
	aicpu = pto_open_role(PTO_ROLE_AICPU);
	ASSERT_LE(0, aicpu);
	ASSERT_EQ(0, pto_hws_get(aicpu, &c));
	cfg_default(&want, info.nr_cores);
	EXPECT_TRUE(cfg_eq(&want, &c))
		TH_LOG("differs from the defaults at byte %ld",
		       cfg_diff(&want, &c));
	regs = pto_map_regs(aicpu);
	ASSERT_NE(NULL, regs);
	EXPECT_EQ(seq + 2, cfg_seq(regs));
	munmap(regs, PTO_REGS_SIZE);
	/* as it was for the tests that follow */
	EXPECT_EQ(0, pto_hws_set(aicpu, &orig, NULL));
	close(aicpu);
}

/* Read a whole debugfs file; -errno if it cannot be read. */
static int read_all(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (off < len - 1 && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	close(fd);
	buf[off] = 0;
	return 0;
}

/* debugfs regs shows the new registers and the masks, per context. */
TEST_F(hws, debugfs_regs)
{
	static const char *const keys[] = {
		"policy           1\n", "launch_delay     20000 ns\n",
		"pre_idle_offset  5000 ns\n", "usage_mask ctx 3 class 9-16",
		"sip_idle_status", "reserved_sip_mask", "sip_launch_pending",
		"sip_remain_exec_time",
	};
	const char *dev = strrchr(pto_dev_path(), '/');
	struct pto_hws_cfg c;
	char path[256], line[128], *buf;
	unsigned int i;
	int ret;

	cfg_good(&c, self->nr_cores);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, NULL));
	snprintf(path, sizeof(path), "/sys/kernel/debug/pto/%s/regs",
		 dev ? dev + 1 : "pto0");
	buf = malloc(65536);
	ASSERT_NE(NULL, buf);
	ret = read_all(path, buf, 65536);
	if (ret) {
		free(buf);
		SKIP(return, "%s: %s", path, strerror(-ret));
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		EXPECT_TRUE(strstr(buf, keys[i]) != NULL)
			TH_LOG("keys[%u] missing", i);
	/* Context 1, class 2: cores 1 and 6 (mod nr_cores), low word last. */
	snprintf(line, sizeof(line),
		 "usage_mask ctx 1 class 2    %016llx %016llx %016llx %016llx\n",
		 (unsigned long long)c.usage_mask[1][1][3],
		 (unsigned long long)c.usage_mask[1][1][2],
		 (unsigned long long)c.usage_mask[1][1][1],
		 (unsigned long long)c.usage_mask[1][1][0]);
	EXPECT_TRUE(strstr(buf, line) != NULL) TH_LOG("no '%s'", line);
	free(buf);
}

/* ---------------------------------------------------------------------- */
/*
 * One variant per validation rule. Each starts from a valid configuration
 * unlike the default (cfg_good()), written by the setup; @bad breaks one
 * rule, which must be refused with -EINVAL and change nothing; @edge sets
 * the same field to the nearest value the rule accepts, which must be
 * written as given.
 */

FIXTURE(hws_bad) {
	int aicpu, none;
	void *regs;
	unsigned int nr_cores;
	struct pto_hws_cfg orig, base;
};

FIXTURE_VARIANT(hws_bad) {
	void (*bad)(struct pto_hws_cfg *c, unsigned int nr_cores);
	void (*edge)(struct pto_hws_cfg *c, unsigned int nr_cores);
};

#define HWS_BAD(_name, _bad, _edge)					\
	static void bad_##_name(struct pto_hws_cfg *c, unsigned int n)	\
	{								\
		(void)n;						\
		_bad;							\
	}								\
	static void edge_##_name(struct pto_hws_cfg *c, unsigned int n) \
	{								\
		(void)n;						\
		_edge;							\
	}								\
	FIXTURE_VARIANT_ADD(hws_bad, _name) {				\
		.bad = bad_##_name, .edge = edge_##_name,		\
	}

#define UM(_ctx, _cls)	(c->usage_mask[_ctx][PTO_HWS_USAGE_##_cls])

HWS_BAD(policy_2, c->policy = PTO_HWS_POLICY_PTO2 + 1,
	c->policy = PTO_HWS_POLICY_HWS);
HWS_BAD(policy_max, c->policy = 0xffffffffU,
	c->policy = PTO_HWS_POLICY_PTO2);
HWS_BAD(work_mode_2, c->work_mode = PTO_HWS_MODE_FW + 1,
	c->work_mode = PTO_HWS_MODE_HW);
/* The device's cluster is a block of 3 cores: nothing else. */
HWS_BAD(cluster_sip_num_4, c->cluster_sip_num = 4,
	c->cluster_sip_num = HWS_CLUSTER_SIPS);
HWS_BAD(cluster_sip_num_0, c->cluster_sip_num = 0,
	c->cluster_sip_num = HWS_CLUSTER_SIPS);
HWS_BAD(cluster_sip_num_2, c->cluster_sip_num = 2,
	c->cluster_sip_num = HWS_CLUSTER_SIPS);
HWS_BAD(cluster_sip_num_16, c->cluster_sip_num = 16,
	c->cluster_sip_num = HWS_CLUSTER_SIPS);
/* No second resource is emulated. */
HWS_BAD(second_rsc_sch_1, c->second_rsc_sch = 1, c->second_rsc_sch = 0);
HWS_BAD(second_rsc_sch_2, c->second_rsc_sch = 2, c->second_rsc_sch = 0);
HWS_BAD(early_launch_en_2, c->early_launch_en = 2, c->early_launch_en = 0);
HWS_BAD(fillup_first_2, c->fillup_first = 2, c->fillup_first = 0);
HWS_BAD(rsvd_first_2, c->rsvd_first = 2, c->rsvd_first = 0);
HWS_BAD(report_en_2, c->report_en = 2, c->report_en = 0);
HWS_BAD(early_launch_mode_2,
	c->early_launch_mode = PTO_HWS_EL_HWS_PREDICT + 1,
	c->early_launch_mode = PTO_HWS_EL_SIP_REPORT);
HWS_BAD(promote_rule_bit_4, c->promote_rule = PTO_HWS_PROMOTE_ALL + 1,
	c->promote_rule = 0);
HWS_BAD(promote_rule_bit_31, c->promote_rule = 1U << 31,
	c->promote_rule = PTO_HWS_PROMOTE_SKIPPED_TOP);
HWS_BAD(promote_threshold_0, c->promote_threshold = 0,
	c->promote_threshold = 1);
HWS_BAD(promote_threshold_256,
	c->promote_threshold = HWS_PROMOTE_THRESHOLD_MAX + 1,
	c->promote_threshold = HWS_PROMOTE_THRESHOLD_MAX);
HWS_BAD(launch_delay_over_1s, c->launch_delay = HWS_TIME_MAX_NS + 1,
	c->launch_delay = HWS_TIME_MAX_NS);
HWS_BAD(launch_delay_max, c->launch_delay = 0xffffffffU,
	c->launch_delay = 0);
HWS_BAD(pre_idle_offset_over_1s, c->pre_idle_offset = HWS_TIME_MAX_NS + 1,
	c->pre_idle_offset = HWS_TIME_MAX_NS);
HWS_BAD(pre_idle_offset_max, c->pre_idle_offset = 0xffffffffU,
	c->pre_idle_offset = 0);
HWS_BAD(pad_0, c->pad[0] = 1, c->pad[0] = 0);
HWS_BAD(pad_1, c->pad[1] = 0x80000000U, c->pad[1] = 0);
HWS_BAD(scale_ratio_0, c->scale_ratio[0] = 0, c->scale_ratio[0] = 1);
HWS_BAD(scale_ratio_over_max,
	c->scale_ratio[PTO_HWS_SCALE_RANKS - 1] = PTO_HWS_SCALE_MAX + 1,
	c->scale_ratio[PTO_HWS_SCALE_RANKS - 1] = PTO_HWS_SCALE_MAX);
/* A usage mask may name the last core, not one the device lacks. */
HWS_BAD(usage_mask_ctx0_1sip_nr_cores, mask_set(UM(0, 1SIP), n),
	mask_set(UM(0, 1SIP), n - 1));
HWS_BAD(usage_mask_ctx0_2sip_nr_cores, mask_set(UM(0, 2SIP), n),
	mask_set(UM(0, 2SIP), n - 1));
HWS_BAD(usage_mask_ctx0_3_4sip_nr_cores, mask_set(UM(0, 3_4SIP), n),
	mask_set(UM(0, 3_4SIP), n - 1));
HWS_BAD(usage_mask_ctx0_6_8sip_nr_cores, mask_set(UM(0, 6_8SIP), n),
	mask_set(UM(0, 6_8SIP), n - 1));
HWS_BAD(usage_mask_ctx0_9_16sip_nr_cores, mask_set(UM(0, 9_16SIP), n),
	mask_set(UM(0, 9_16SIP), n - 1));
HWS_BAD(usage_mask_ctx1_nr_cores, mask_set(UM(1, 3_4SIP), n),
	mask_set(UM(1, 3_4SIP), n - 1));
HWS_BAD(usage_mask_ctx2_nr_cores, mask_set(UM(2, 6_8SIP), n),
	mask_set(UM(2, 6_8SIP), n - 1));
HWS_BAD(usage_mask_ctx3_nr_cores, mask_set(UM(3, 9_16SIP), n),
	mask_set(UM(3, 9_16SIP), n - 1));
HWS_BAD(usage_mask_ctx3_bit_255, mask_set(UM(3, 1SIP), PTO_MAX_CORES - 1),
	mask_set(UM(3, 1SIP), n - 1));

FIXTURE_SETUP(hws_bad)
{
	struct pto_info info;

	self->none = -1;
	self->regs = NULL;
	PTO_OPEN_OR_SKIP(self->aicpu);
	ASSERT_EQ(0, pto_set_role(self->aicpu, PTO_ROLE_AICPU));
	self->none = pto_open();
	ASSERT_LE(0, self->none);
	ASSERT_EQ(0, pto_get_info(self->none, &info));
	self->nr_cores = info.nr_cores;
	self->regs = pto_map_regs(self->aicpu);
	ASSERT_NE(NULL, self->regs);
	ASSERT_EQ(0, pto_hws_get(self->aicpu, &self->orig));
	cfg_good(&self->base, self->nr_cores);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &self->base, NULL));
}

FIXTURE_TEARDOWN(hws_bad)
{
	if (self->aicpu >= 0 && self->regs)
		pto_hws_set(self->aicpu, &self->orig, NULL);
}

TEST_F(hws_bad, refused)
{
	struct pto_hws_cfg c = self->base, now;

	variant->bad(&c, self->nr_cores);
	ASSERT_FALSE(cfg_eq(&self->base, &c));
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	/* The old values stay, for the ioctl and in the register file. */
	ASSERT_EQ(0, pto_hws_get(self->none, &now));
	EXPECT_TRUE(cfg_eq(&self->base, &now))
		TH_LOG("ioctl differs at byte %ld", cfg_diff(&self->base, &now));
	cfg_from_regs(self->regs, &now);
	EXPECT_TRUE(cfg_eq(&self->base, &now))
		TH_LOG("register file differs at byte %ld",
		       cfg_diff(&self->base, &now));
}

TEST_F(hws_bad, edge_accepted)
{
	struct pto_hws_cfg c = self->base, out, now;

	variant->edge(&c, self->nr_cores);
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &c, &out));
	EXPECT_TRUE(cfg_eq(&c, &out));
	cfg_from_regs(self->regs, &now);
	EXPECT_TRUE(cfg_eq(&c, &now));
}

TEST_HARNESS_MAIN
