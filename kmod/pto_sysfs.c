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

static ssize_t counters_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct pto_dev *pdev = pto_dev_of(dev);
	struct pto_counters *c = &pdev->cnt;
	struct pto_core_counts cc;
	int n = 0;

	pto_core_counts(pdev, &cc);
	n += sysfs_emit_at(buf, n, "gm_bytes_used %lld\n",
			   atomic64_read(&c->gm_bytes));
	n += sysfs_emit_at(buf, n, "gm_buffers %lld\n",
			   atomic64_read(&c->gm_buffers));
	n += sysfs_emit_at(buf, n, "allocs %lld\n", atomic64_read(&c->allocs));
	n += sysfs_emit_at(buf, n, "frees %lld\n", atomic64_read(&c->frees));
	n += sysfs_emit_at(buf, n, "maps %lld\n", atomic64_read(&c->maps));
	n += sysfs_emit_at(buf, n, "parks %lld\n", atomic64_read(&c->parks));
	n += sysfs_emit_at(buf, n, "kicks %lld\n", atomic64_read(&c->kicks));
	n += sysfs_emit_at(buf, n, "wakes %lld\n", atomic64_read(&c->wakes));
	n += sysfs_emit_at(buf, n, "irqs %lld\n", atomic64_read(&c->irqs));
	n += sysfs_emit_at(buf, n, "faults %lld\n", atomic64_read(&c->faults));
	n += sysfs_emit_at(buf, n, "pins %lld\n", atomic64_read(&c->pins));
	n += sysfs_emit_at(buf, n, "cores_online %u\n", cc.online);
	n += sysfs_emit_at(buf, n, "cores_dead %u\n", cc.dead);
	n += sysfs_emit_at(buf, n, "aicpu %d\n", cc.aicpu);
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
