// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "pto"
 *
 * Device information and counters, the HWS configuration registers (read
 * by anyone, written by an administrator), and multicast events of the
 * cores, executors, AICPU and configuration of every device. The family is
 * specified in Documentation/netlink/specs/pto.yaml; its names and values
 * are in <linux/pto.h>. The family lives in the initial network namespace
 * only (netnsok is false).
 *
 * The family is parallel_ops: its operations run without the genetlink
 * mutex, side by side. Each request is handled under genetlink's cb_lock
 * held for reading, and genl_unregister_family() takes it for writing, so
 * pto_nl_exit(), called before the devices go, waits for those running; a
 * dump continued by later reads holds a reference on the module instead,
 * so the module is not unloaded under it.
 */
#include <linux/bitmap.h>
#include <linux/genalloc.h>
#include <linux/nospec.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <pto-private/hws_rules.h>

#include "pto_dev.h"

static const struct nla_policy pto_usage_policy[PTO_A_USAGE_MAX + 1] = {
	[PTO_A_USAGE_CTX] = NLA_POLICY_MAX(NLA_U32, PTO_HWS_NR_CTX - 1),
	[PTO_A_USAGE_CLASS] = NLA_POLICY_MAX(NLA_U32,
					     PTO_HWS_USAGE_CLASSES - 1),
	[PTO_A_USAGE_MASK] = NLA_POLICY_EXACT_LEN(PTO_CORE_MASK_WORDS *
						  sizeof(u64)),
};

static const struct nla_policy pto_hws_policy[PTO_A_HWS_MAX + 1] = {
	[PTO_A_HWS_POLICY] = { .type = NLA_U32 },
	[PTO_A_HWS_WORK_MODE] = { .type = NLA_U32 },
	[PTO_A_HWS_CLUSTER_SIP_NUM] = { .type = NLA_U32 },
	[PTO_A_HWS_SECOND_RSC_SCH] = { .type = NLA_U32 },
	[PTO_A_HWS_EARLY_LAUNCH_EN] = { .type = NLA_U32 },
	[PTO_A_HWS_EARLY_LAUNCH_MODE] = { .type = NLA_U32 },
	[PTO_A_HWS_BACKFILL_MARGIN] = { .type = NLA_U32 },
	[PTO_A_HWS_FILLUP_FIRST] = { .type = NLA_U32 },
	[PTO_A_HWS_RSVD_FIRST] = { .type = NLA_U32 },
	[PTO_A_HWS_PROMOTE_RULE] = { .type = NLA_U32 },
	[PTO_A_HWS_PROMOTE_THRESHOLD] = { .type = NLA_U32 },
	[PTO_A_HWS_REPORT_EN] = { .type = NLA_U32 },
	[PTO_A_HWS_LAUNCH_DELAY] = { .type = NLA_U32 },
	[PTO_A_HWS_PRE_IDLE_OFFSET] = { .type = NLA_U32 },
	[PTO_A_HWS_SCALE_RATIO] = NLA_POLICY_EXACT_LEN(PTO_HWS_SCALE_RANKS *
						       sizeof(u32)),
	[PTO_A_HWS_USAGE] = NLA_POLICY_NESTED(pto_usage_policy),
};

/* dev-get, counters-get, hws-get: the device index only. */
static const struct nla_policy pto_get_policy[PTO_A_DEV_INDEX + 1] = {
	[PTO_A_DEV_INDEX] = { .type = NLA_U32 },
};

/* hws-set: the device index and the registers to change. */
static const struct nla_policy pto_hws_set_policy[PTO_A_DEV_HWS + 1] = {
	[PTO_A_DEV_INDEX] = { .type = NLA_U32 },
	[PTO_A_DEV_HWS] = NLA_POLICY_NESTED(pto_hws_policy),
};

/*
 * The u32 registers of struct pto_hws_cfg, in attribute order from
 * PTO_A_HWS_POLICY; the offsets of the first PTO_A_HWS_PRE_IDLE_OFFSET
 * fields.
 */
static const size_t pto_hws_u32_offs[] = {
	offsetof(struct pto_hws_cfg, policy),
	offsetof(struct pto_hws_cfg, work_mode),
	offsetof(struct pto_hws_cfg, cluster_sip_num),
	offsetof(struct pto_hws_cfg, second_rsc_sch),
	offsetof(struct pto_hws_cfg, early_launch_en),
	offsetof(struct pto_hws_cfg, early_launch_mode),
	offsetof(struct pto_hws_cfg, backfill_margin),
	offsetof(struct pto_hws_cfg, fillup_first),
	offsetof(struct pto_hws_cfg, rsvd_first),
	offsetof(struct pto_hws_cfg, promote_rule),
	offsetof(struct pto_hws_cfg, promote_threshold),
	offsetof(struct pto_hws_cfg, report_en),
	offsetof(struct pto_hws_cfg, launch_delay),
	offsetof(struct pto_hws_cfg, pre_idle_offset),
};

static struct genl_family pto_nl_family;

/* The device named by PTO_A_DEV_INDEX, or an ERR_PTR() with @extack set. */
static struct pto_dev *pto_nl_dev(struct genl_info *info)
{
	struct pto_dev *pdev;

	if (GENL_REQ_ATTR_CHECK(info, PTO_A_DEV_INDEX))
		return ERR_PTR(-EINVAL);
	pdev = pto_dev_lookup(nla_get_u32(info->attrs[PTO_A_DEV_INDEX]));
	if (!pdev) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[PTO_A_DEV_INDEX],
				    "no such device");
		return ERR_PTR(-ENODEV);
	}
	return pdev;
}

static int pto_nl_put_u64(struct sk_buff *skb, int type, u64 val)
{
	return nla_put_u64_64bit(skb, type, val, PTO_A_DEV_PAD);
}

static int pto_nl_fill_dev(struct sk_buff *skb, struct pto_dev *pdev)
{
	u32 aicpu_pid;

	/* as the caller's pid namespace sees it: 0 if it does not */
	mutex_lock(&pdev->lock);
	aicpu_pid = pdev->aicpu ? pid_vnr(pdev->aicpu->tgid) : 0;
	mutex_unlock(&pdev->lock);

	if (nla_put_u32(skb, PTO_A_DEV_INDEX, pdev->index) ||
	    nla_put_string(skb, PTO_A_DEV_NAME, pdev->name) ||
	    nla_put_u32(skb, PTO_A_DEV_ABI_VERSION, PTO_ABI_VERSION) ||
	    nla_put_u32(skb, PTO_A_DEV_PROFILE, pdev->profile) ||
	    nla_put_u32(skb, PTO_A_DEV_NR_AIC, pdev->nr_aic) ||
	    nla_put_u32(skb, PTO_A_DEV_NR_AIV, pdev->nr_aiv) ||
	    nla_put_u32(skb, PTO_A_DEV_NR_CORES, pdev->nr_cores) ||
	    pto_nl_put_u64(skb, PTO_A_DEV_GM_SIZE, pdev->gm_size) ||
	    pto_nl_put_u64(skb, PTO_A_DEV_GM_DEV_BASE, PTO_GM_DEV_BASE) ||
	    pto_nl_put_u64(skb, PTO_A_DEV_GM_FREE,
			   gen_pool_avail(pdev->pool)) ||
	    pto_nl_put_u64(skb, PTO_A_DEV_CAPS, pdev->caps) ||
	    pto_nl_put_u64(skb, PTO_A_DEV_SYS_CNT_FREQ, PTO_SYS_CNT_FREQ) ||
	    nla_put_u32(skb, PTO_A_DEV_AICPU_PID, aicpu_pid))
		return -EMSGSIZE;
	return 0;
}

static int pto_nl_fill_counters(struct sk_buff *skb, struct pto_dev *pdev)
{
	u64 val[PTO_NR_COUNTERS];
	struct nlattr *nest;
	u32 i;

	pto_counters_read(pdev, val);
	if (nla_put_u32(skb, PTO_A_DEV_INDEX, pdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, PTO_A_DEV_COUNTERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < PTO_NR_COUNTERS; i++)
		if (nla_put_u64_64bit(skb, pto_counter_defs[i].attr, val[i],
				      PTO_A_COUNTERS_PAD))
			goto err_cancel;
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int pto_nl_put_usage(struct sk_buff *skb, u32 ctx, u32 class,
			    const u64 *mask)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, PTO_A_HWS_USAGE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTO_A_USAGE_CTX, ctx) ||
	    nla_put_u32(skb, PTO_A_USAGE_CLASS, class) ||
	    nla_put(skb, PTO_A_USAGE_MASK, PTO_CORE_MASK_WORDS * sizeof(u64),
		    mask)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int pto_nl_put_hws(struct sk_buff *skb, const struct pto_hws_cfg *cfg)
{
	struct nlattr *nest;
	u32 i, ctx;

	nest = nla_nest_start(skb, PTO_A_DEV_HWS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(pto_hws_u32_offs); i++) {
		const u32 *val = (const void *)cfg + pto_hws_u32_offs[i];

		if (nla_put_u32(skb, PTO_A_HWS_POLICY + i, *val))
			goto err_cancel;
	}
	if (nla_put(skb, PTO_A_HWS_SCALE_RATIO, sizeof(cfg->scale_ratio),
		    cfg->scale_ratio))
		goto err_cancel;
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			if (pto_nl_put_usage(skb, ctx, i,
					     cfg->usage_mask[ctx][i]))
				goto err_cancel;
		}
	}
	nla_nest_end(skb, nest);
	return 0;

err_cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* A reply to @info: a new message of @info's command. */
static struct sk_buff *pto_nl_reply_new(struct genl_info *info, size_t size,
					void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put_reply(msg, info, &pto_nl_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static int pto_nl_get_doit(struct genl_info *info,
			   int (*fill)(struct sk_buff *, struct pto_dev *))
{
	struct pto_dev *pdev = pto_nl_dev(info);
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	msg = pto_nl_reply_new(info, NLMSG_DEFAULT_SIZE, &hdr);
	if (!msg)
		return -ENOMEM;
	ret = fill(msg, pdev);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * One message per device from cb->args[0], the next device to dump; only
 * the device PTO_A_DEV_INDEX names if the request has it (validated by the
 * op's policy).
 */
static int pto_nl_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb,
			     int (*fill)(struct sk_buff *, struct pto_dev *))
{
	const struct genlmsghdr *ghdr = nlmsg_data(cb->nlh);
	const struct nlattr *only;
	struct pto_dev *pdev;
	u32 index;
	void *hdr;

	only = nla_find(genlmsg_data(ghdr), genlmsg_len(ghdr),
			PTO_A_DEV_INDEX);
	for (index = cb->args[0]; (pdev = pto_dev_lookup(index)); index++) {
		if (only && nla_get_u32(only) != index)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &pto_nl_family,
				  NLM_F_MULTI, ghdr->cmd);
		if (!hdr)
			break;
		if (fill(skb, pdev)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	cb->args[0] = index;
	return skb->len;
}

static int pto_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return pto_nl_get_doit(info, pto_nl_fill_dev);
}

static int pto_nl_dev_get_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	return pto_nl_get_dumpit(skb, cb, pto_nl_fill_dev);
}

static int pto_nl_counters_get_doit(struct sk_buff *skb,
				    struct genl_info *info)
{
	return pto_nl_get_doit(info, pto_nl_fill_counters);
}

static int pto_nl_counters_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	return pto_nl_get_dumpit(skb, cb, pto_nl_fill_counters);
}

/* Reply to hws-get and hws-set: the index, CFG_SEQ and @cfg. */
static int pto_nl_hws_reply(struct genl_info *info, struct pto_dev *pdev,
			    const struct pto_hws_cfg *cfg, u32 seq)
{
	struct sk_buff *msg;
	void *hdr;

	msg = pto_nl_reply_new(info, 2 * sizeof(*cfg), &hdr);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, PTO_A_DEV_INDEX, pdev->index) ||
	    nla_put_u32(msg, PTO_A_DEV_CFG_SEQ, seq) ||
	    pto_nl_put_hws(msg, cfg)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int pto_nl_hws_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct pto_dev *pdev = pto_nl_dev(info);
	struct pto_hws_cfg *cfg;
	u32 seq;
	int ret;

	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	cfg = kmalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;
	ret = pto_hws_read(pdev, cfg, &seq);
	if (ret)
		NL_SET_ERR_MSG(info->extack,
			       "the AICPU kept the HWS registers changing");
	else
		ret = pto_nl_hws_reply(info, pdev, cfg, seq);
	kfree(cfg);
	return ret;
}

/* Merge one PTO_A_HWS_USAGE nest into @cfg. */
static int pto_nl_merge_usage(struct pto_hws_cfg *cfg,
			      const struct nlattr *nla,
			      struct netlink_ext_ack *extack)
{
	struct nlattr *tb[PTO_A_USAGE_MAX + 1];
	u32 ctx, class;
	int ret;

	/* Validated by the policy; parsed again to get at the attributes. */
	ret = nla_parse_nested(tb, PTO_A_USAGE_MAX, nla, pto_usage_policy,
			       extack);
	if (ret)
		return ret;
	if (NL_REQ_ATTR_CHECK(extack, nla, tb, PTO_A_USAGE_CTX) ||
	    NL_REQ_ATTR_CHECK(extack, nla, tb, PTO_A_USAGE_CLASS) ||
	    NL_REQ_ATTR_CHECK(extack, nla, tb, PTO_A_USAGE_MASK))
		return -EINVAL;
	/* in range by the policy; not under speculation */
	ctx = array_index_nospec(nla_get_u32(tb[PTO_A_USAGE_CTX]),
				 PTO_HWS_NR_CTX);
	class = array_index_nospec(nla_get_u32(tb[PTO_A_USAGE_CLASS]),
				   PTO_HWS_USAGE_CLASSES);
	nla_memcpy(cfg->usage_mask[ctx][class], tb[PTO_A_USAGE_MASK],
		   sizeof(cfg->usage_mask[ctx][class]));
	return 0;
}

/* Merge the registers of the PTO_A_DEV_HWS nest @hws into @cfg. */
static int pto_nl_merge_hws(struct pto_hws_cfg *cfg, const struct nlattr *hws,
			    struct netlink_ext_ack *extack)
{
	const struct nlattr *nla;
	int rem, type, ret;

	nla_for_each_nested(nla, hws, rem) {
		type = nla_type(nla);
		if (type >= PTO_A_HWS_POLICY &&
		    type < PTO_A_HWS_POLICY + (int)ARRAY_SIZE(pto_hws_u32_offs)) {
			u32 i = array_index_nospec(type - PTO_A_HWS_POLICY,
						   ARRAY_SIZE(pto_hws_u32_offs));
			u32 *val = (void *)cfg + pto_hws_u32_offs[i];

			*val = nla_get_u32(nla);
		} else if (type == PTO_A_HWS_SCALE_RATIO) {
			nla_memcpy(cfg->scale_ratio, nla,
				   sizeof(cfg->scale_ratio));
		} else if (type == PTO_A_HWS_USAGE) {
			ret = pto_nl_merge_usage(cfg, nla, extack);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/**
 * struct pto_nl_hws_set - what hws-set's edit needs besides the registers
 * @info: the request: its PTO_A_DEV_HWS nest, and the extended ack
 * @pdev: the device written
 */
struct pto_nl_hws_set {
	struct genl_info *info;
	struct pto_dev *pdev;
};

/* hws-set's edit (pto_hws_update()): the request merged into @cfg. */
static int pto_nl_hws_edit(struct pto_hws_cfg *cfg, void *priv)
{
	struct pto_nl_hws_set *set = priv;
	int ret;

	ret = pto_nl_merge_hws(cfg, set->info->attrs[PTO_A_DEV_HWS],
			       set->info->extack);
	if (ret)
		return ret;
	ret = pto_hws_cfg_check(cfg, set->pdev->nr_cores);
	if (ret)
		NL_SET_ERR_MSG_ATTR(set->info->extack,
				    set->info->attrs[PTO_A_DEV_HWS],
				    "HWS configuration rejected by the PTO_IOC_HWS_CONFIG rules");
	return ret;
}

static int pto_nl_hws_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct pto_nl_hws_set set = { .info = info };
	struct pto_dev *pdev = pto_nl_dev(info);
	struct pto_hws_cfg *cfg;
	u32 seq;
	int ret;

	if (IS_ERR(pdev))
		return PTR_ERR(pdev);
	/* GENL_ADMIN_PERM checked CAP_NET_ADMIN; the ioctl's rule too. */
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "writing HWS registers needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	if (GENL_REQ_ATTR_CHECK(info, PTO_A_DEV_HWS))
		return -EINVAL;
	cfg = kmalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg)
		return -ENOMEM;

	set.pdev = pdev;
	ret = pto_hws_update(pdev, cfg, pto_nl_hws_edit, &set, &seq);
	if (ret == -EAGAIN)
		NL_SET_ERR_MSG(info->extack,
			       "the AICPU kept the HWS registers changing");
	if (!ret) {
		pto_nl_notify_hws(pdev, task_tgid_nr(current), seq);
		ret = pto_nl_hws_reply(info, pdev, cfg, seq);
	}
	kfree(cfg);
	return ret;
}

static const struct genl_ops pto_nl_ops[] = {
	{
		.cmd = PTO_CMD_DEV_GET,
		.doit = pto_nl_dev_get_doit,
		.dumpit = pto_nl_dev_get_dumpit,
		.policy = pto_get_policy,
		.maxattr = ARRAY_SIZE(pto_get_policy) - 1,
	},
	{
		.cmd = PTO_CMD_COUNTERS_GET,
		.doit = pto_nl_counters_get_doit,
		.dumpit = pto_nl_counters_get_dumpit,
		.policy = pto_get_policy,
		.maxattr = ARRAY_SIZE(pto_get_policy) - 1,
	},
	{
		.cmd = PTO_CMD_HWS_GET,
		.doit = pto_nl_hws_get_doit,
		.policy = pto_get_policy,
		.maxattr = ARRAY_SIZE(pto_get_policy) - 1,
	},
	{
		.cmd = PTO_CMD_HWS_SET,
		.doit = pto_nl_hws_set_doit,
		.policy = pto_hws_set_policy,
		.maxattr = ARRAY_SIZE(pto_hws_set_policy) - 1,
		.flags = GENL_ADMIN_PERM,
	},
};

enum pto_nl_mcgrp {
	PTO_NL_MCGRP_EVENTS,
};

static const struct genl_multicast_group pto_nl_mcgrps[] = {
	[PTO_NL_MCGRP_EVENTS] = { .name = PTO_MCGRP_EVENTS },
};

static struct genl_family pto_nl_family __ro_after_init = {
	.name = PTO_FAMILY_NAME,
	.version = PTO_FAMILY_VERSION,
	.maxattr = PTO_A_DEV_MAX,
	.module = THIS_MODULE,
	.ops = pto_nl_ops,
	.n_ops = ARRAY_SIZE(pto_nl_ops),
	/*
	 * Not under genl_mutex: hws-get and hws-set may wait up to
	 * PTO_HWS_SEQ_WAIT_NS for an AICPU's write, which must not hold
	 * up every other family. The operations need no lock of the
	 * core's: devices live as long as the family (pto_exit()
	 * unregisters it first), the registers are under their count
	 * and pdev->lock, counters are atomic.
	 */
	.parallel_ops = true,
	/*
	 * No resv_start_op: the core checks the reserved header byte and
	 * flags of every command at or past it, so 0 checks them all.
	 * Attributes are validated strictly by every operation (no
	 * GENL_DONT_VALIDATE_* in pto_nl_ops).
	 */
	.mcgrps = pto_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(pto_nl_mcgrps),
};

/*
 * An event of @cmd about @pdev to the events group, with @cores (NULL for
 * none) and @pid; process context. Nobody listening costs nothing, and an
 * event that cannot be built is lost: events tell a listener to look again
 * (dev-get, counters-get, hws-get), they are not a log.
 */
static void pto_nl_event(struct pto_dev *pdev, u8 cmd,
			 const unsigned long *cores, pid_t pid, u32 *seq)
{
	u64 mask[PTO_CORE_MASK_WORDS];
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&pto_nl_family, &init_net,
				PTO_NL_MCGRP_EVENTS))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &pto_nl_family, 0, cmd);
	if (!hdr)
		goto err_free;
	if (nla_put_u32(msg, PTO_A_DEV_INDEX, pdev->index) ||
	    nla_put_u32(msg, PTO_A_DEV_PID, pid))
		goto err_free;
	if (cores) {
		bitmap_to_arr64(mask, cores, PTO_MAX_CORES);
		if (nla_put(msg, PTO_A_DEV_CORES, sizeof(mask), mask))
			goto err_free;
	}
	if (seq && nla_put_u32(msg, PTO_A_DEV_CFG_SEQ, *seq))
		goto err_free;
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&pto_nl_family, msg, 0, PTO_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
	return;

err_free:
	nlmsg_free(msg);
}

void pto_nl_notify_cores(struct pto_dev *pdev, u8 cmd,
			 const unsigned long *cores, pid_t pid)
{
	pto_nl_event(pdev, cmd, cores, pid, NULL);
}

void pto_nl_notify_aicpu_gone(struct pto_dev *pdev, pid_t pid)
{
	pto_nl_event(pdev, PTO_CMD_AICPU_GONE, NULL, pid, NULL);
}

void pto_nl_notify_hws(struct pto_dev *pdev, pid_t pid, u32 seq)
{
	pto_nl_event(pdev, PTO_CMD_HWS_CHANGED, NULL, pid, &seq);
}

int __init pto_nl_init(void)
{
	return genl_register_family(&pto_nl_family);
}

void pto_nl_exit(void)
{
	genl_unregister_family(&pto_nl_family);
}
