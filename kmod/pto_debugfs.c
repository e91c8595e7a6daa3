// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/pto/ptoN/{regs,cores}
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "pto_dev.h"

static struct dentry *pto_debugfs_root;

static const char *const pto_state_names[] = {
	[PTO_CORE_OFFLINE] = "offline",
	[PTO_CORE_ONLINE] = "online",
	[PTO_CORE_DEAD] = "dead",
};

static const char *pto_state_name(u32 state)
{
	return state < ARRAY_SIZE(pto_state_names) ? pto_state_names[state] :
						     "?";
}

/* thread_num classes of the usage masks, PTO_HWS_USAGE_* order */
static const char *const pto_usage_names[PTO_HWS_USAGE_CLASSES] = {
	"1", "2", "3-4", "6-8", "9-16",
};

/* A core bitmap: its 64-bit words in hex, most significant first. */
static void pto_show_mask(struct seq_file *m, const u64 *words)
{
	u32 i;

	for (i = PTO_CORE_MASK_WORDS; i-- > 0;)
		seq_printf(m, " %016llx", READ_ONCE(words[i]));
	seq_putc(m, '\n');
}

/* A status mask, its words aligned with those of the usage masks. */
static void pto_show_status(struct seq_file *m, const char *name,
			    const u64 *words)
{
	seq_printf(m, "%-27s", name);
	pto_show_mask(m, words);
}

static void pto_hws_show(struct seq_file *m, const struct pto_dev *pdev)
{
	const struct pto_regs_hws *hws = pdev->hws;
	const struct pto_hws_cfg *cfg = &hws->cfg;
	u32 i, ctx;

	seq_puts(m, "hws:\n");
	seq_printf(m, "policy           %u\n", READ_ONCE(cfg->policy));
	seq_printf(m, "work_mode        %u\n", READ_ONCE(cfg->work_mode));
	seq_printf(m, "cluster_sip_num  %u\n", READ_ONCE(cfg->cluster_sip_num));
	seq_printf(m, "second_rsc_sch   %u\n", READ_ONCE(cfg->second_rsc_sch));
	seq_printf(m, "early_launch_en  %u\n", READ_ONCE(cfg->early_launch_en));
	seq_printf(m, "early_launch_mode %u\n",
		   READ_ONCE(cfg->early_launch_mode));
	seq_printf(m, "backfill_margin  0x%08x\n",
		   READ_ONCE(cfg->backfill_margin));
	seq_printf(m, "fillup_first     %u\n", READ_ONCE(cfg->fillup_first));
	seq_printf(m, "rsvd_first       %u\n", READ_ONCE(cfg->rsvd_first));
	seq_printf(m, "promote_rule     0x%x\n", READ_ONCE(cfg->promote_rule));
	seq_printf(m, "promote_threshold %u\n",
		   READ_ONCE(cfg->promote_threshold));
	seq_printf(m, "report_en        %u\n", READ_ONCE(cfg->report_en));
	seq_printf(m, "launch_delay     %u ns\n", READ_ONCE(cfg->launch_delay));
	seq_printf(m, "pre_idle_offset  %u ns\n",
		   READ_ONCE(cfg->pre_idle_offset));
	seq_puts(m, "scale_ratio     ");
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		seq_printf(m, " %u", READ_ONCE(cfg->scale_ratio[i]));
	seq_puts(m, "\n");
	seq_puts(m, "core masks: 64-bit words, most significant first\n");
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++) {
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++) {
			seq_printf(m, "usage_mask ctx %u class %-4s",
				   ctx, pto_usage_names[i]);
			pto_show_mask(m, cfg->usage_mask[ctx][i]);
		}
	}
	pto_show_status(m, "sip_report_complete", hws->sip_report_complete);
	pto_show_status(m, "sip_report_pre_complete",
			hws->sip_report_pre_complete);
	pto_show_status(m, "sip_idle_status", hws->sip_idle_status);
	pto_show_status(m, "sip_pre_idle_status", hws->sip_pre_idle_status);
	pto_show_status(m, "reserved_sip_mask", hws->reserved_sip_mask);
	pto_show_status(m, "sip_launch_pending", hws->sip_launch_pending);
	/* Remaining times (us) of the device's cores, eight per line. */
	seq_puts(m, "sip_remain_exec_time (us)");
	for (i = 0; i < pdev->nr_cores; i++) {
		if (i % 8 == 0)
			seq_printf(m, "\n  %3u:", i);
		seq_printf(m, " %u", READ_ONCE(hws->sip_remain_exec_time[i]));
	}
	seq_puts(m, "\n");
}

/* The info page and the HWS block, as userspace sees them. */
static int pto_regs_show(struct seq_file *m, void *unused)
{
	struct pto_dev *pdev = m->private;
	const struct pto_regs_info *info = pdev->info;
	pid_t aicpu_pid;

	seq_printf(m, "magic            0x%08x\n", READ_ONCE(info->magic));
	seq_printf(m, "abi_version      0x%08x\n",
		   READ_ONCE(info->abi_version));
	seq_printf(m, "profile          %u (%s)\n", READ_ONCE(info->profile),
		   pto_profile_name(pdev->profile));
	seq_printf(m, "nr_aic           %u\n", READ_ONCE(info->nr_aic));
	seq_printf(m, "nr_aiv           %u\n", READ_ONCE(info->nr_aiv));
	seq_printf(m, "nr_cores         %u\n", READ_ONCE(info->nr_cores));
	seq_printf(m, "dev_index        %u\n", READ_ONCE(info->dev_index));
	seq_printf(m, "gm_size          0x%llx\n", READ_ONCE(info->gm_size));
	seq_printf(m, "gm_dev_base      0x%llx\n",
		   READ_ONCE(info->gm_dev_base));
	seq_printf(m, "caps             0x%llx\n", READ_ONCE(info->caps));
	seq_printf(m, "sys_cnt_freq     %llu\n", READ_ONCE(info->sys_cnt_freq));
	seq_printf(m, "sys_cnt_epoch_ns %lld\n",
		   READ_ONCE(info->sys_cnt_epoch_ns));
	seq_printf(m, "sys_cnt          %llu\n", READ_ONCE(info->sys_cnt));
	seq_printf(m, "irq_count        %u (device %u)\n",
		   READ_ONCE(info->irq_count), atomic_read(&pdev->irq_count));
	seq_printf(m, "aicpu_irq_en     %u\n", READ_ONCE(info->aicpu_irq_en));
	mutex_lock(&pdev->lock);
	aicpu_pid = pdev->aicpu ? pid_vnr(pdev->aicpu->tgid) : 0;
	mutex_unlock(&pdev->lock);
	seq_printf(m, "aicpu_attached   %u (pid %d)\n",
		   READ_ONCE(info->aicpu_attached), aicpu_pid);

	pto_hws_show(m, pdev);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pto_regs);

/* One line per core; state and owner are the device's own copies. */
static int pto_cores_show(struct seq_file *m, void *unused)
{
	struct pto_dev *pdev = m->private;
	u32 i;

	seq_puts(m, "core type state   pid     dmb        cond       parked irq_en park_count kick_count\n");
	mutex_lock(&pdev->lock);
	for (i = 0; i < pdev->nr_cores; i++) {
		struct pto_core *core = &pdev->cores[i];
		const struct pto_core_regs *regs = core->regs;

		seq_printf(m, "%-4u %-4s %-7s %-7d 0x%08x 0x%08x %-6u %-6u %-10u %u\n",
			   i, pto_core_type(pdev, i),
			   pto_state_name(core->state), core->owner_pid,
			   READ_ONCE(regs->data_main_base),
			   READ_ONCE(regs->cond), READ_ONCE(regs->parked),
			   READ_ONCE(regs->irq_en),
			   atomic_read(&core->park_count),
			   atomic_read(&core->kick_count));
	}
	mutex_unlock(&pdev->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pto_cores);

void pto_debugfs_init(void)
{
	pto_debugfs_root = debugfs_create_dir("pto", NULL);
}

void pto_debugfs_exit(void)
{
	debugfs_remove_recursive(pto_debugfs_root);
	pto_debugfs_root = NULL;
}

void pto_debugfs_add(struct pto_dev *pdev)
{
	pdev->debugfs = debugfs_create_dir(pdev->name, pto_debugfs_root);
	debugfs_create_file("regs", 0444, pdev->debugfs, pdev, &pto_regs_fops);
	debugfs_create_file("cores", 0444, pdev->debugfs, pdev,
			    &pto_cores_fops);
}

void pto_debugfs_remove(struct pto_dev *pdev)
{
	debugfs_remove_recursive(pdev->debugfs);
	pdev->debugfs = NULL;
}
