// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters, device creation and teardown
 *
 * pto.ko emulates PTO2 NPU devices (Ascend task orchestration): global
 * memory (GM) with its allocator, a register file with the per-core
 * DATA_MAIN_BASE / COND doorbells and the HWS configuration, and the
 * notification paths between the AICPU (a daemon) and the AICores (an
 * executor process). See Documentation/kmod.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "pto_dev.h"

#define PTO_MAX_DEVICES		8
#define PTO_GM_MIN_MB		16
#define PTO_GM_MAX_MB		4096

static unsigned int nr_devices = 1;
module_param(nr_devices, uint, 0444);
MODULE_PARM_DESC(nr_devices, "Number of devices /dev/pto0.. (1-8, default 1)");

static unsigned int gm_size_mb = 256;
module_param(gm_size_mb, uint, 0444);
MODULE_PARM_DESC(gm_size_mb,
		 "GM size per device in MiB (16-4096, default 256)");

static int nr_aic = -1;
module_param(nr_aic, int, 0444);
MODULE_PARM_DESC(nr_aic,
		 "AIC cores per device (1-85; default: the profile's, a2a3 24, a5 72); AIV cores = 2 * nr_aic");

static char *profile = "a2a3";
module_param(profile, charp, 0444);
MODULE_PARM_DESC(profile, "Target profile: a2a3 (default) or a5");

static struct pto_dev *pto_devs[PTO_MAX_DEVICES];
static u32 pto_profile;
static u32 pto_nr_aic;		/* nr_aic, or the profile's */

/*
 * The device of index @index, or NULL; for the netlink family, whose
 * operations may run while pto_init() creates the devices.
 */
struct pto_dev *pto_dev_lookup(u32 index)
{
	if (index >= PTO_MAX_DEVICES)
		return NULL;
	index = array_index_nospec(index, PTO_MAX_DEVICES);
	/* Pairs with smp_store_release() in pto_init(). */
	return smp_load_acquire(&pto_devs[index]);
}

static int pto_check_params(void)
{
	if (nr_devices < 1 || nr_devices > PTO_MAX_DEVICES) {
		pr_err("nr_devices=%u out of range 1..%u\n", nr_devices,
		       PTO_MAX_DEVICES);
		return -EINVAL;
	}
	if (gm_size_mb < PTO_GM_MIN_MB || gm_size_mb > PTO_GM_MAX_MB) {
		pr_err("gm_size_mb=%u out of range %u..%u\n", gm_size_mb,
		       PTO_GM_MIN_MB, PTO_GM_MAX_MB);
		return -EINVAL;
	}
	/* vmalloc_user() of more would only wake the OOM killer. */
	if ((u64)gm_size_mb * nr_devices >
	    (totalram_pages() >> (20 - PAGE_SHIFT)) / 2) {
		pr_err("gm_size_mb=%u x nr_devices=%u exceeds half of RAM (%lu MiB)\n",
		       gm_size_mb, nr_devices,
		       totalram_pages() >> (20 - PAGE_SHIFT));
		return -ENOMEM;
	}
	if (!profile || sysfs_streq(profile, "a2a3")) {
		pto_profile = PTO_PROFILE_A2A3;
	} else if (sysfs_streq(profile, "a5")) {
		pto_profile = PTO_PROFILE_A5;
	} else {
		pr_err("profile=%s unknown (a2a3 or a5)\n", profile);
		return -EINVAL;
	}
	if (nr_aic != -1 && (nr_aic < 1 || nr_aic > PTO_MAX_AIC)) {
		pr_err("nr_aic=%d out of range 1..%u\n", nr_aic, PTO_MAX_AIC);
		return -EINVAL;
	}
	if (nr_aic != -1)
		pto_nr_aic = nr_aic;
	else if (pto_profile == PTO_PROFILE_A5)
		pto_nr_aic = PTO_PROFILE_A5_BLOCKS;
	else
		pto_nr_aic = PTO_PROFILE_A2A3_BLOCKS;
	return 0;
}

static int pto_dev_create(u32 index, struct pto_dev **out)
{
	u32 nr_cores = pto_nr_aic + pto_nr_aic * PTO_AIV_PER_AIC;
	struct pto_dev *pdev;
	u32 i;
	int ret;

	pdev = kzalloc(struct_size(pdev, cores, nr_cores), GFP_KERNEL);
	if (!pdev)
		return -ENOMEM;

	snprintf(pdev->name, sizeof(pdev->name), "pto%u", index);
	pdev->index = index;
	pdev->profile = pto_profile;
	pdev->caps = pto_profile == PTO_PROFILE_A5 ? PTO_CAPS_A5 :
						     PTO_CAPS_A2A3;
	pdev->nr_aic = pto_nr_aic;
	pdev->nr_aiv = pto_nr_aic * PTO_AIV_PER_AIC;
	pdev->nr_cores = nr_cores;
	pdev->gm_size = (u64)gm_size_mb << 20;
	mutex_init(&pdev->lock);
	mutex_init(&pdev->quota_lock);
	xa_init(&pdev->users);
	spin_lock_init(&pdev->irq_lock);
	spin_lock_init(&pdev->sys_cnt_lock);
	init_waitqueue_head(&pdev->irq_wq);
	init_waitqueue_head(&pdev->any_wq);

	pdev->regs = vmalloc_user(PTO_REGS_MAP_SIZE);
	if (!pdev->regs) {
		ret = -ENOMEM;
		goto err_free_pdev;
	}
	pdev->info = pdev->regs + PTO_REGS_INFO_OFFSET;
	pdev->hws = pdev->regs + PTO_REGS_HWS_OFFSET;

	ret = pto_gm_init(pdev);
	if (ret)
		goto err_free_regs;

	for (i = 0; i < nr_cores; i++) {
		struct pto_core *core = &pdev->cores[i];

		core->pdev = pdev;
		core->index = i;
		core->regs = pto_core_regs(pdev, i);
		core->state = PTO_CORE_OFFLINE;
		init_waitqueue_head(&core->wq);
		spin_lock_init(&core->lock);
	}
	pdev->epoch_ns = ktime_get_ns();
	pto_regs_init(pdev);

	pto_debugfs_add(pdev);

	pdev->misc.minor = MISC_DYNAMIC_MINOR;
	pdev->misc.name = pdev->name;
	pdev->misc.fops = &pto_fops;
	pdev->misc.groups = pto_groups;
	pdev->misc.mode = 0660;	/* root; the group: kmod/60-pto.rules */

	*out = pdev;
	return 0;

err_free_regs:
	vfree(pdev->regs);
err_free_pdev:
	mutex_destroy(&pdev->quota_lock);
	mutex_destroy(&pdev->lock);
	kfree(pdev);
	return ret;
}

/*
 * Called at unload, when no file is open (every open file holds a module
 * reference), hence every buffer has gone back to the pool; or when the
 * module's init fails, for a device never registered.
 */
static void pto_dev_destroy(struct pto_dev *pdev, bool registered)
{
	if (registered)
		misc_deregister(&pdev->misc);
	pto_debugfs_remove(pdev);
	pto_gm_fini(pdev);
	vfree(pdev->regs);
	/* pto_gm_fini() freed the users left: their own quotas */
	xa_destroy(&pdev->users);
	mutex_destroy(&pdev->quota_lock);
	mutex_destroy(&pdev->lock);
	kfree(pdev);
}

static int __init pto_init(void)
{
	struct pto_dev *devs[PTO_MAX_DEVICES] = { };
	u32 i, r;
	int ret;

	/* Device addresses (from 4 GiB) are genalloc unsigned longs. */
	BUILD_BUG_ON(BITS_PER_LONG < 64);
	BUILD_BUG_ON(sizeof(struct pto_core_regs) != 64);
	BUILD_BUG_ON(sizeof(struct pto_regs_info) > PTO_REGS_HWS_OFFSET);
	BUILD_BUG_ON(PTO_REGS_HWS_OFFSET + sizeof(struct pto_regs_hws) >
		     PTO_REGS_CORE_OFFSET);
	/* an executor's mapping is read-only below this page boundary */
	BUILD_BUG_ON(PTO_REGS_HWS_OFFSET +
		     offsetof(struct pto_regs_hws, sip_report_complete) !=
		     PTO_REGS_EXEC_WRITE_OFFSET);
	BUILD_BUG_ON(PTO_REGS_EXEC_WRITE_OFFSET % PAGE_SIZE);
	BUILD_BUG_ON(PTO_MAX_AIC * (1 + PTO_AIV_PER_AIC) > PTO_MAX_CORES);

	ret = pto_check_params();
	if (ret)
		return ret;

	pto_debugfs_init();

	/*
	 * The family first: an open file of a device can raise events. Its
	 * operations see a device once it is whole.
	 */
	ret = pto_nl_init();
	if (ret)
		goto err_debugfs_exit;

	for (i = 0; i < nr_devices; i++) {
		ret = pto_dev_create(i, &devs[i]);
		if (ret)
			goto err_destroy_devices;
	}
	/*
	 * The nodes last, when nothing but another node can fail. A node's
	 * open fails with -ENODEV until its device is published below, so
	 * no file is open on a device freed when a later node fails.
	 */
	for (r = 0; r < nr_devices; r++) {
		ret = misc_register(&devs[r]->misc);
		if (ret) {
			pr_err("%s: misc_register failed: %d\n", devs[r]->name,
			       ret);
			goto err_deregister;
		}
	}
	for (i = 0; i < nr_devices; i++) {
		/* the whole device before its pointer (pto_dev_lookup()) */
		smp_store_release(&pto_devs[i], devs[i]);
	}

	pr_info("%u device(s), profile %s, %u AIC + %u AIV, %u MiB GM each\n",
		nr_devices, pto_profile_name(pto_profile), pto_nr_aic,
		pto_nr_aic * PTO_AIV_PER_AIC, gm_size_mb);
	return 0;

err_deregister:
	while (r--)
		misc_deregister(&devs[r]->misc);
err_destroy_devices:
	/* no netlink operation runs once the family is gone */
	pto_nl_exit();
	while (i--)
		pto_dev_destroy(devs[i], false);
err_debugfs_exit:
	pto_debugfs_exit();
	return ret;
}

static void __exit pto_exit(void)
{
	u32 i;

	pto_nl_exit();
	for (i = 0; i < nr_devices; i++)
		pto_dev_destroy(pto_devs[i], true);
	pto_debugfs_exit();
}

module_init(pto_init);
module_exit(pto_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("PTO2 emulation developers");
MODULE_DESCRIPTION("Emulated PTO2 NPU device: GM, register file, core doorbells");
