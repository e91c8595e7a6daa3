/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hws_rules.h - the HWS configuration registers' (struct pto_hws_cfg)
 * values at load, and the rules a write of them must follow
 *
 * The one copy of both: pto.ko (at load, PTO_IOC_HWS_CONFIG and netlink's
 * hws-set) and the user-mode device (ptod -d user) both compile this
 * header, so a device of either kind starts with the same values and
 * accepts and refuses the same writes. Documentation/kmod.rst ("HWS_CONFIG
 * validation") lists the rules. Only uapi types and constants: no libc,
 * no kernel API.
 */
#ifndef PTO_PRIVATE_HWS_RULES_H
#define PTO_PRIVATE_HWS_RULES_H

#include <linux/errno.h>
#include <linux/pto.h>

/**
 * pto_core_mask_fits() - whether a core mask names only cores a device has
 * @mask: a core mask of PTO_CORE_MASK_WORDS words, core c at bit c % 64 of
 *	word c / 64.
 * @nr_cores: the device's cores, 0 .. @nr_cores - 1.
 *
 * Return: 1 if @mask has no bit at or beyond @nr_cores (an empty mask
 * fits), else 0.
 */
static inline int pto_core_mask_fits(const __u64 *mask, __u32 nr_cores)
{
	__u32 w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		__u64 ok;

		if (nr_cores >= (w + 1) * 64)
			ok = ~(__u64)0;
		else if (nr_cores <= w * 64)
			ok = 0;
		else
			ok = ((__u64)1 << (nr_cores - w * 64)) - 1;
		if (mask[w] & ~ok)
			return 0;
	}
	return 1;
}

/**
 * pto_hws_cfg_default() - the configuration a device starts with
 * @cfg: filled whole.
 * @nr_cores: the device's cores, 0 .. @nr_cores - 1.
 *
 * The HWS policy working in HW mode; promotion by fail count at
 * PTO_HWS_PROMOTE_THRESHOLD_DEF; the design's example scale table
 * (PTO_HWS_SCALE_DEF); early launch off; every context and thread_num
 * class may use every core. Everything else is 0.
 */
static inline void pto_hws_cfg_default(struct pto_hws_cfg *cfg,
				       __u32 nr_cores)
{
	__u32 i, ctx, w;

	*cfg = (struct pto_hws_cfg){ 0 };
	cfg->policy = PTO_HWS_POLICY_HWS;
	cfg->work_mode = PTO_HWS_MODE_HW;
	cfg->cluster_sip_num = PTO_HWS_CLUSTER_SIPS;
	cfg->early_launch_en = 0;
	cfg->early_launch_mode = PTO_HWS_EL_SIP_REPORT;
	cfg->promote_rule = PTO_HWS_PROMOTE_THRESHOLD;
	cfg->promote_threshold = PTO_HWS_PROMOTE_THRESHOLD_DEF;
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		cfg->scale_ratio[i] = PTO_HWS_SCALE_DEF(i);
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
				__u64 *m = &cfg->usage_mask[ctx][i][w];

				if (nr_cores >= (w + 1) * 64)
					*m = ~(__u64)0;
				else if (nr_cores > w * 64)
					*m = ((__u64)1 << (nr_cores - w * 64)) - 1;
			}
		}
	}
}

/**
 * pto_hws_cfg_check() - whether a configuration may be written
 * @cfg: the whole configuration to write.
 * @nr_cores: the device's cores, 0 .. @nr_cores - 1.
 *
 * Return: 0 if @cfg may be written to a device of @nr_cores cores, else
 * -EINVAL.
 */
static inline int pto_hws_cfg_check(const struct pto_hws_cfg *cfg,
				    __u32 nr_cores)
{
	__u32 i, ctx;

	if (cfg->policy > PTO_HWS_POLICY_PTO2)
		return -EINVAL;
	if (cfg->work_mode > PTO_HWS_MODE_FW)
		return -EINVAL;
	/* The device's cluster is one block (1 AIC + 2 AIV). */
	if (cfg->cluster_sip_num != PTO_HWS_CLUSTER_SIPS)
		return -EINVAL;
	/* No second resource is emulated. */
	if (cfg->second_rsc_sch)
		return -EINVAL;
	if (cfg->early_launch_en > 1 || cfg->fillup_first > 1 ||
	    cfg->rsvd_first > 1 || cfg->report_en > 1)
		return -EINVAL;
	if (cfg->early_launch_mode > PTO_HWS_EL_HWS_PREDICT)
		return -EINVAL;
	/* backfill_margin: any value. */
	if (cfg->promote_rule & ~PTO_HWS_PROMOTE_ALL)
		return -EINVAL;
	if (!cfg->promote_threshold ||
	    cfg->promote_threshold > PTO_HWS_PROMOTE_THRESHOLD_MAX)
		return -EINVAL;
	if (cfg->launch_delay > PTO_HWS_TIME_MAX_NS ||
	    cfg->pre_idle_offset > PTO_HWS_TIME_MAX_NS)
		return -EINVAL;
	for (i = 0; i < sizeof(cfg->pad); i++) {
		if (((const __u8 *)cfg->pad)[i])
			return -EINVAL;
	}
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++) {
		if (!cfg->scale_ratio[i] ||
		    cfg->scale_ratio[i] > PTO_HWS_SCALE_MAX)
			return -EINVAL;
	}
	/* A mask may be empty, but may not name a core the device lacks. */
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			if (!pto_core_mask_fits(cfg->usage_mask[ctx][i],
						nr_cores))
				return -EINVAL;
		}
	}
	return 0;
}

#endif /* PTO_PRIVATE_HWS_RULES_H */
