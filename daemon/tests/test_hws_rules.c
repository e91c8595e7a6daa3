// SPDX-License-Identifier: MIT
/*
 * test_hws_rules.c - the HWS configuration's rules (pto-private/hws_rules.h)
 * as userspace compiles them: every rule refuses its first value out of
 * range and accepts the value at its edge, on devices of several core
 * counts, and core masks fit or not at every word boundary.
 * selftests/pto/pto_hws.c tests the same rules through pto.ko.
 */
#include <errno.h>
#include <string.h>

#include <pto-private/hws_regs.h>
#include <pto-private/hws_rules.h>
#include "tap.h"

typedef void (*cfg_fn)(struct pto_hws_cfg *c, uint32_t nr_cores);

struct rule_case {
	const char *name;
	cfg_fn bad;	/* the first value out of range */
	cfg_fn edge;	/* the value in range next to it */
};

#define RULE(_name, _bad, _edge)					\
	static void bad_##_name(struct pto_hws_cfg *c, uint32_t n)	\
	{								\
		(void)n;						\
		_bad;							\
	}								\
	static void edge_##_name(struct pto_hws_cfg *c, uint32_t n)	\
	{								\
		(void)n;						\
		_edge;							\
	}

#define CASE(_name)	{ #_name, bad_##_name, edge_##_name }

#define LAST_RANK	(PTO_HWS_SCALE_RANKS - 1)

RULE(policy_2, c->policy = PTO_HWS_POLICY_PTO2 + 1,
     c->policy = PTO_HWS_POLICY_PTO2)
RULE(policy_max, c->policy = 0xffffffffU, c->policy = PTO_HWS_POLICY_HWS)
RULE(work_mode_2, c->work_mode = PTO_HWS_MODE_FW + 1,
     c->work_mode = PTO_HWS_MODE_FW)
RULE(cluster_sip_num_0, c->cluster_sip_num = 0,
     c->cluster_sip_num = PTO_HWS_CLUSTER_SIPS)
RULE(cluster_sip_num_2, c->cluster_sip_num = PTO_HWS_CLUSTER_SIPS - 1,
     c->cluster_sip_num = PTO_HWS_CLUSTER_SIPS)
RULE(cluster_sip_num_4, c->cluster_sip_num = PTO_HWS_CLUSTER_SIPS + 1,
     c->cluster_sip_num = PTO_HWS_CLUSTER_SIPS)
RULE(second_rsc_sch_1, c->second_rsc_sch = 1, c->second_rsc_sch = 0)
RULE(second_rsc_sch_max, c->second_rsc_sch = 0xffffffffU,
     c->second_rsc_sch = 0)
RULE(early_launch_en_2, c->early_launch_en = 2, c->early_launch_en = 1)
RULE(fillup_first_2, c->fillup_first = 2, c->fillup_first = 1)
RULE(rsvd_first_2, c->rsvd_first = 2, c->rsvd_first = 1)
RULE(report_en_2, c->report_en = 2, c->report_en = 1)
RULE(early_launch_mode_2, c->early_launch_mode = PTO_HWS_EL_HWS_PREDICT + 1,
     c->early_launch_mode = PTO_HWS_EL_HWS_PREDICT)
RULE(promote_rule_bit_4, c->promote_rule = PTO_HWS_PROMOTE_ALL + 1,
     c->promote_rule = PTO_HWS_PROMOTE_ALL)
RULE(promote_rule_bit_31, c->promote_rule = 1U << 31, c->promote_rule = 0)
RULE(promote_threshold_0, c->promote_threshold = 0,
     c->promote_threshold = 1)
RULE(promote_threshold_256,
     c->promote_threshold = PTO_HWS_PROMOTE_THRESHOLD_MAX + 1,
     c->promote_threshold = PTO_HWS_PROMOTE_THRESHOLD_MAX)
RULE(launch_delay_over_1s, c->launch_delay = PTO_HWS_TIME_MAX_NS + 1,
     c->launch_delay = PTO_HWS_TIME_MAX_NS)
RULE(launch_delay_max, c->launch_delay = 0xffffffffU, c->launch_delay = 0)
RULE(pre_idle_offset_over_1s, c->pre_idle_offset = PTO_HWS_TIME_MAX_NS + 1,
     c->pre_idle_offset = PTO_HWS_TIME_MAX_NS)
RULE(pre_idle_offset_max, c->pre_idle_offset = 0xffffffffU,
     c->pre_idle_offset = 0)
RULE(pad_0, c->pad[0] = 1, c->pad[0] = 0)
RULE(pad_1, c->pad[1] = 0x80000000U, c->pad[1] = 0)
RULE(scale_ratio_first_0, c->scale_ratio[0] = 0, c->scale_ratio[0] = 1)
RULE(scale_ratio_last_0, c->scale_ratio[LAST_RANK] = 0,
     c->scale_ratio[LAST_RANK] = 1)
RULE(scale_ratio_first_over_max, c->scale_ratio[0] = PTO_HWS_SCALE_MAX + 1,
     c->scale_ratio[0] = PTO_HWS_SCALE_MAX)
RULE(scale_ratio_last_over_max,
     c->scale_ratio[LAST_RANK] = PTO_HWS_SCALE_MAX + 1,
     c->scale_ratio[LAST_RANK] = PTO_HWS_SCALE_MAX)

static const struct rule_case cases[] = {
	CASE(policy_2), CASE(policy_max), CASE(work_mode_2),
	CASE(cluster_sip_num_0), CASE(cluster_sip_num_2),
	CASE(cluster_sip_num_4), CASE(second_rsc_sch_1),
	CASE(second_rsc_sch_max), CASE(early_launch_en_2),
	CASE(fillup_first_2), CASE(rsvd_first_2), CASE(report_en_2),
	CASE(early_launch_mode_2), CASE(promote_rule_bit_4),
	CASE(promote_rule_bit_31), CASE(promote_threshold_0),
	CASE(promote_threshold_256), CASE(launch_delay_over_1s),
	CASE(launch_delay_max), CASE(pre_idle_offset_over_1s),
	CASE(pre_idle_offset_max), CASE(pad_0), CASE(pad_1),
	CASE(scale_ratio_first_0), CASE(scale_ratio_last_0),
	CASE(scale_ratio_first_over_max), CASE(scale_ratio_last_over_max),
};

/* Device sizes: a small one, one word exactly, one spilling into a second. */
static const uint32_t sizes[] = { 6, 64, 65 };

static void set_core(__u64 *m, uint32_t core)
{
	m[core / 64] |= 1ULL << (core % 64);
}

/* Each field rule, on a device of @n cores. */
static void t_fields(uint32_t n)
{
	struct pto_hws_cfg base, c;
	size_t i;

	pto_hws_cfg_default(&base, n);
	ok(pto_hws_cfg_check(&base, n) == 0, "%u cores: the defaults pass", n);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = base;
		cases[i].bad(&c, n);
		ok(pto_hws_cfg_check(&c, n) == -EINVAL, "%u cores: %s refused",
		   n, cases[i].name);
		c = base;
		cases[i].edge(&c, n);
		ok(pto_hws_cfg_check(&c, n) == 0, "%u cores: %s's edge accepted",
		   n, cases[i].name);
	}
	/* backfill_margin has no rule: any value. */
	c = base;
	c.backfill_margin = 0xffffffffU;
	ok(pto_hws_cfg_check(&c, n) == 0,
	   "%u cores: backfill_margin 0xffffffff accepted (no rule)", n);
}

/* Every usage mask, on a device of @n cores (n < PTO_MAX_CORES). */
static void t_masks(uint32_t n)
{
	struct pto_hws_cfg base, c;
	uint32_t ctx, cls, bad = 0, good = 0, total = 0;

	pto_hws_cfg_default(&base, n);
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (cls = 0; cls < PTO_HWS_USAGE_CLASSES; cls++) {
			__u64 *m = c.usage_mask[ctx][cls];

			total++;
			c = base;
			set_core(m, n);
			bad += pto_hws_cfg_check(&c, n) == -EINVAL;
			c = base;
			set_core(m, PTO_MAX_CORES - 1);
			bad += pto_hws_cfg_check(&c, n) == -EINVAL;
			c = base;
			memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
			good += pto_hws_cfg_check(&c, n) == 0;
			set_core(m, n - 1);
			good += pto_hws_cfg_check(&c, n) == 0;
		}
	}
	ok(bad == 2 * total, "%u cores: every usage mask naming core %u or %u "
	   "refused (%u of %u)", n, n, PTO_MAX_CORES - 1, bad, 2 * total);
	ok(good == 2 * total, "%u cores: every usage mask empty or naming "
	   "core %u accepted (%u of %u)", n, n - 1, good, 2 * total);
}

/* A device of PTO_MAX_CORES cores: every bit of every mask is a core. */
static void t_full_device(void)
{
	struct pto_hws_cfg c;

	pto_hws_cfg_default(&c, PTO_MAX_CORES);
	ok(c.usage_mask[PTO_HWS_NR_CTX - 1][PTO_HWS_USAGE_CLASSES - 1]
		       [PTO_CORE_MASK_WORDS - 1] == ~0ULL &&
	   pto_hws_cfg_check(&c, PTO_MAX_CORES) == 0,
	   "%u cores: every core in every mask accepted", PTO_MAX_CORES);
}

/* pto_core_mask_fits() at every word boundary. */
static void t_mask_fits(void)
{
	static const uint32_t nrs[] = { 0, 1, 63, 64, 65, 127, 128, 129,
					255, 256, 300 };
	__u64 empty[PTO_CORE_MASK_WORDS] = { 0 };
	uint32_t core, wrong = 0;
	size_t i;

	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		for (core = 0; core < PTO_MAX_CORES; core++) {
			__u64 m[PTO_CORE_MASK_WORDS] = { 0 };

			set_core(m, core);
			wrong += pto_core_mask_fits(m, nrs[i]) !=
				 (core < nrs[i]);
		}
	}
	ok(!wrong, "a one-core mask fits iff the core is below nr_cores, for "
	   "nr_cores 0 .. 300 around every word boundary (%u wrong)", wrong);
	ok(pto_core_mask_fits(empty, 0), "an empty mask fits a device of no core");
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		t_fields(sizes[i]);
		t_masks(sizes[i]);
	}
	t_full_device();
	t_mask_fits();
	return tap_done();
}
