// SPDX-License-Identifier: GPL-2.0
/*
 * pto_hws: the HWS configuration registers: read by anyone, written
 * (validated) by the AICPU only, visible in the register file.
 */
#include "kselftest_harness.h"
#include "pto_test.h"

FIXTURE(hws) {
	int aicpu, client, exec, none;
	void *regs;
	struct pto_hws_cfg orig;
};

FIXTURE_SETUP(hws)
{
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

static bool cfg_eq(const struct pto_hws_cfg *a, const struct pto_hws_cfg *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void cfg_from_regs(void *regs, struct pto_hws_cfg *c)
{
	memcpy(c, (const void *)&pto_regs_hws(regs)->cfg, sizeof(*c));
}

static bool cluster_ok(__u32 n)
{
	return n == 3 || n == 4 || n == 6 || n == 8 || n == 12 || n == 16;
}

/* A valid configuration unlike the default in every field. */
static void cfg_good(struct pto_hws_cfg *c)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->work_mode = PTO_HWS_MODE_FW;
	c->cluster_sip_num = 8;
	c->second_rsc_sch = 1;
	c->early_launch_en = 1;
	c->early_launch_mode = PTO_HWS_EL_HWS_PREDICT;
	c->backfill_margin = (1U << 31) | 250;
	c->fillup_first = 1;
	c->rsvd_first = 1;
	c->promote_rule = PTO_HWS_PROMOTE_ALL;
	c->promote_threshold = 7;
	c->report_en = 1;
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		c->scale_ratio[i] = 100 + 10 * i;
	for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++)
		c->usage_mask[i] = 0xffffU >> i;
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

TEST_F(hws, current_values_valid)
{
	struct pto_hws_cfg *c = &self->orig;

	EXPECT_GE((__u32)PTO_HWS_MODE_FW, c->work_mode);
	EXPECT_TRUE(cluster_ok(c->cluster_sip_num))
		TH_LOG("cluster_sip_num %u", c->cluster_sip_num);
	EXPECT_GE(1U, c->second_rsc_sch);
	EXPECT_GE(1U, c->early_launch_en);
	EXPECT_GE((__u32)PTO_HWS_EL_HWS_PREDICT, c->early_launch_mode);
	EXPECT_GE(1U, c->fillup_first);
	EXPECT_GE(1U, c->rsvd_first);
	EXPECT_EQ(0U, c->promote_rule & ~PTO_HWS_PROMOTE_ALL);
	EXPECT_GE(1U, c->report_en);
	EXPECT_EQ(0U, c->pad);
	EXPECT_EQ(0U, c->pad2[0] | c->pad2[1] | c->pad2[2]);
}

/* Documentation/decisions.rst: threshold rule on, threshold 4. */
TEST_F(hws, documented_defaults)
{
	EXPECT_TRUE(self->orig.promote_rule & PTO_HWS_PROMOTE_THRESHOLD);
	EXPECT_EQ(4U, self->orig.promote_threshold);
}

TEST_F(hws, regs_match_ioctl)
{
	struct pto_hws_cfg r;

	cfg_from_regs(self->regs, &r);
	EXPECT_TRUE(cfg_eq(&self->orig, &r));
}

TEST_F(hws, set_by_client)
{
	struct pto_hws_cfg c;

	EXPECT_EQ(-EACCES, pto_hws_set(self->client, &self->orig, NULL));
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_TRUE(cfg_eq(&self->orig, &c));
}

TEST_F(hws, set_by_executor)
{
	EXPECT_EQ(-EACCES, pto_hws_set(self->exec, &self->orig, NULL));
}

TEST_F(hws, set_by_no_role)
{
	EXPECT_EQ(-EACCES, pto_hws_set(self->none, &self->orig, NULL));
}

TEST_F(hws, set_good)
{
	struct pto_hws_cfg want, out, c;

	cfg_good(&want);
	memset(&out, 0xaa, sizeof(out));
	ASSERT_EQ(0, pto_hws_set(self->aicpu, &want, &out));
	EXPECT_TRUE(cfg_eq(&want, &out));
	/* In the register file ... */
	cfg_from_regs(self->regs, &c);
	EXPECT_TRUE(cfg_eq(&want, &c));
	/* ... and for everyone else. */
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_TRUE(cfg_eq(&want, &c));
}

/* Setting the same values twice is fine (idempotent). */
TEST_F(hws, set_same_twice)
{
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &self->orig, NULL));
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &self->orig, NULL));
}

TEST_F(hws, set_every_cluster_size)
{
	static const __u32 ok[] = { 3, 4, 6, 8, 12, 16 };
	struct pto_hws_cfg c = self->orig, out;
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		c.cluster_sip_num = ok[i];
		EXPECT_EQ(0, pto_hws_set(self->aicpu, &c, &out))
			TH_LOG("cluster_sip_num %u", ok[i]);
		EXPECT_EQ(ok[i], out.cluster_sip_num);
	}
}

TEST_F(hws, set_bad_cluster_sip_num)
{
	static const __u32 bad[] = { 0, 1, 2, 5, 7, 9, 10, 15, 17, 32,
				     0xffffffffU };
	struct pto_hws_cfg c = self->orig, now;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.cluster_sip_num = bad[i];
		EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL))
			TH_LOG("cluster_sip_num %u", bad[i]);
	}
	/* Nothing of a rejected write lands. */
	ASSERT_EQ(0, pto_hws_get(self->none, &now));
	EXPECT_TRUE(cfg_eq(&self->orig, &now));
}

/* A rejected write leaves every register unchanged, not half-written. */
TEST_F(hws, set_rejected_is_atomic)
{
	struct pto_hws_cfg c, now;

	cfg_good(&c);
	c.promote_rule = 0x10;	/* the only bad field, checked late */
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	ASSERT_EQ(0, pto_hws_get(self->none, &now));
	EXPECT_TRUE(cfg_eq(&self->orig, &now));
	cfg_from_regs(self->regs, &now);
	EXPECT_TRUE(cfg_eq(&self->orig, &now));
}

TEST_F(hws, set_bad_work_mode)
{
	struct pto_hws_cfg c = self->orig;

	c.work_mode = PTO_HWS_MODE_FW + 1;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

TEST_F(hws, set_bad_early_launch_mode)
{
	struct pto_hws_cfg c = self->orig;

	c.early_launch_mode = PTO_HWS_EL_HWS_PREDICT + 1;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

TEST_F(hws, set_bad_promote_rule)
{
	struct pto_hws_cfg c = self->orig;

	c.promote_rule = PTO_HWS_PROMOTE_ALL + 1;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c.promote_rule = 1U << 31;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

/* The 0/1 enables take 0 or 1. */
TEST_F(hws, set_bad_boolean)
{
	struct pto_hws_cfg c;

	c = self->orig;
	c.second_rsc_sch = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.early_launch_en = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.fillup_first = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.rsvd_first = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.report_en = 2;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

/* Scale ratios are 1 .. 100000 (in 1/100: up to x1000). */
TEST_F(hws, set_bad_scale_ratio)
{
	struct pto_hws_cfg c = self->orig;

	c.scale_ratio[0] = 0;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.scale_ratio[PTO_HWS_SCALE_RANKS - 1] = 100001;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
	c = self->orig;
	c.scale_ratio[5] = 100000;
	EXPECT_EQ(0, pto_hws_set(self->aicpu, &c, NULL));
}

TEST_F(hws, set_nonzero_pad)
{
	struct pto_hws_cfg c = self->orig;

	c.pad = 1;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

TEST_F(hws, set_nonzero_pad2)
{
	struct pto_hws_cfg c = self->orig;

	c.pad2[2] = 0x100;
	EXPECT_EQ(-EINVAL, pto_hws_set(self->aicpu, &c, NULL));
}

/* Reading ignores @cfg's input values: they are overwritten. */
TEST_F(hws, read_ignores_input_cfg)
{
	struct pto_hws_config h = { .size = sizeof(h) };

	memset(&h.cfg, 0xff, sizeof(h.cfg));
	h.cfg.pad = 0;
	memset(h.cfg.pad2, 0, sizeof(h.cfg.pad2));
	ASSERT_EQ(0, pto_ioc(self->client, PTO_IOC_HWS_CONFIG, &h));
	EXPECT_TRUE(cfg_eq(&self->orig, &h.cfg));
}

/* The AICPU may also write the registers through its mapping. */
TEST_F(hws, aicpu_writes_through_mapping)
{
	volatile struct pto_regs_hws *h = pto_regs_hws(self->regs);
	struct pto_hws_cfg c;

	PTO_STORE(h->cfg.promote_threshold, 9);
	PTO_STORE(h->cfg.cluster_sip_num, 12);
	ASSERT_EQ(0, pto_hws_get(self->client, &c));
	EXPECT_EQ(9U, c.promote_threshold);
	EXPECT_EQ(12U, c.cluster_sip_num);
}

TEST_HARNESS_MAIN
