// SPDX-License-Identifier: GPL-2.0
/*
 * Attributes of /sys/class/misc/ptoN
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "pto_dev.h"

/* misc_register() makes the struct miscdevice the drvdata of its device. */
static struct pto_dev *pto_dev_of(struct device *dev)
{
	struct miscdevice *misc = dev_get_drvdata(dev);

	return container_of(misc, struct pto_dev, misc);
}

static ssize_t info_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct pto_dev *pdev = pto_dev_of(dev);

	return sysfs_emit(buf,
			  "profile=%s nr_aic=%u nr_aiv=%u gm_size=%llu abi=%u.%u\n",
			  pto_profile_name(pdev->profile), pdev->nr_aic,
			  pdev->nr_aiv, pdev->gm_size, PTO_ABI_MAJOR,
			  PTO_ABI_MINOR);
}
static DEVICE_ATTR_RO(info);

const struct pto_counter_def pto_counter_defs[PTO_NR_COUNTERS] = {
	[PTO_CNT_GM_BYTES] = { "gm_bytes_used", PTO_A_COUNTERS_GM_BYTES_USED },
	[PTO_CNT_GM_BUFFERS] = { "gm_buffers", PTO_A_COUNTERS_GM_BUFFERS },
	[PTO_CNT_ALLOCS] = { "allocs", PTO_A_COUNTERS_ALLOCS },
	[PTO_CNT_FREES] = { "frees", PTO_A_COUNTERS_FREES },
	[PTO_CNT_MAPS] = { "maps", PTO_A_COUNTERS_MAPS },
	[PTO_CNT_PARKS] = { "parks", PTO_A_COUNTERS_PARKS },
	[PTO_CNT_KICKS] = { "kicks", PTO_A_COUNTERS_KICKS },
	[PTO_CNT_WAKES] = { "wakes", PTO_A_COUNTERS_WAKES },
	[PTO_CNT_IRQS] = { "irqs", PTO_A_COUNTERS_IRQS },
	[PTO_CNT_FAULTS] = { "faults", PTO_A_COUNTERS_FAULTS },
	[PTO_CNT_PINS] = { "pins", PTO_A_COUNTERS_PINS },
	[PTO_CNT_CORES_ONLINE] = { "cores_online",
		PTO_A_COUNTERS_CORES_ONLINE },
	[PTO_CNT_CORES_DEAD] = { "cores_dead", PTO_A_COUNTERS_CORES_DEAD },
	[PTO_CNT_AICPU] = { "aicpu", PTO_A_COUNTERS_AICPU },
};

/**
 * pto_counters_read - every counter of @pdev, indexed by enum pto_counter.
 * @pdev: the device.
 * @val: PTO_NR_COUNTERS values.
 */
void pto_counters_read(struct pto_dev *pdev, u64 val[PTO_NR_COUNTERS])
{
	const struct pto_counters *c = &pdev->cnt;
	struct pto_core_counts cc;

	pto_core_counts(pdev, &cc);
	val[PTO_CNT_GM_BYTES] = atomic64_read(&c->gm_bytes);
	val[PTO_CNT_GM_BUFFERS] = atomic64_read(&c->gm_buffers);
	val[PTO_CNT_ALLOCS] = atomic64_read(&c->allocs);
	val[PTO_CNT_FREES] = atomic64_read(&c->frees);
	val[PTO_CNT_MAPS] = atomic64_read(&c->maps);
	val[PTO_CNT_PARKS] = atomic64_read(&c->parks);
	val[PTO_CNT_KICKS] = atomic64_read(&c->kicks);
	val[PTO_CNT_WAKES] = atomic64_read(&c->wakes);
	val[PTO_CNT_IRQS] = atomic64_read(&c->irqs);
	val[PTO_CNT_FAULTS] = atomic64_read(&c->faults);
	val[PTO_CNT_PINS] = atomic64_read(&c->pins);
	val[PTO_CNT_CORES_ONLINE] = cc.online;
	val[PTO_CNT_CORES_DEAD] = cc.dead;
	val[PTO_CNT_AICPU] = cc.aicpu;
}

static ssize_t counters_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	u64 val[PTO_NR_COUNTERS];
	int i, n = 0;

	pto_counters_read(pto_dev_of(dev), val);
	for (i = 0; i < PTO_NR_COUNTERS; i++)
		n += sysfs_emit_at(buf, n, "%s %llu\n", pto_counter_defs[i].name,
				   val[i]);
	return n;
}
static DEVICE_ATTR_RO(counters);

static ssize_t gm_size_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%llu\n", pto_dev_of(dev)->gm_size);
}
static DEVICE_ATTR_RO(gm_size);

static ssize_t gm_used_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&pto_dev_of(dev)->cnt.gm_bytes));
}
static DEVICE_ATTR_RO(gm_used);

static ssize_t nr_aic_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", pto_dev_of(dev)->nr_aic);
}
static DEVICE_ATTR_RO(nr_aic);

static ssize_t nr_aiv_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%u\n", pto_dev_of(dev)->nr_aiv);
}
static DEVICE_ATTR_RO(nr_aiv);

static ssize_t profile_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  pto_profile_name(pto_dev_of(dev)->profile));
}
static DEVICE_ATTR_RO(profile);

static struct attribute *pto_attrs[] = {
	&dev_attr_info.attr,
	&dev_attr_counters.attr,
	&dev_attr_gm_size.attr,
	&dev_attr_gm_used.attr,
	&dev_attr_nr_aic.attr,
	&dev_attr_nr_aiv.attr,
	&dev_attr_profile.attr,
	NULL,
};

static const struct attribute_group pto_group = {
	.attrs = pto_attrs,
};

const struct attribute_group *pto_groups[] = {
	&pto_group,
	NULL,
};
