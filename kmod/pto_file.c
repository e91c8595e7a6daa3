// SPDX-License-Identifier: GPL-2.0
/*
 * File operations of /dev/ptoN: open, release, the
 * table-driven ioctl dispatcher, read and poll of the AICPU interrupt.
 */
#include <linux/bits.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "pto_dev.h"

static int pto_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct pto_dev *pdev = container_of(misc, struct pto_dev, misc);
	struct pto_file *pf;

	/*
	 * misc_open() calls this with misc_mtx held, which misc_deregister()
	 * takes too. Until pto_init() publishes the device, a later node can
	 * still fail to register and the device be freed: refuse the open.
	 * Once published, the device lives until the module's exit, which
	 * waits for every open file (each holds a module reference).
	 */
	if (pto_dev_lookup(pdev->index) != pdev)
		return -ENODEV;

	pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	pf->pdev = pdev;
	pf->role = PTO_ROLE_NONE;
	pf->pid = task_tgid_nr(current);
	pf->tgid = get_pid(task_tgid(current));
	pf->uid = file->f_cred->fsuid;
	pf->opener_admin = file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
	pf->writable = file->f_mode & FMODE_WRITE;
	mutex_init(&pf->buf_lock);
	xa_init_flags(&pf->bufs, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	xa_init_flags(&pf->pins, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	mt_init(&pf->by_addr);
	file->private_data = pf;

	return nonseekable_open(inode, file);
}

/* Every resource of the file goes with it. */
static int pto_release(struct inode *inode, struct file *file)
{
	struct pto_file *pf = file->private_data;

	pto_release_roles(pf);
	pto_gm_release_file(pf);
	xa_destroy(&pf->bufs);
	mtree_destroy(&pf->by_addr);
	xa_destroy(&pf->pins);
	mutex_destroy(&pf->buf_lock);
	put_pid(pf->tgid);
	kfree(pf);
	return 0;
}

static int pto_get_info(struct pto_ucmd *ucmd)
{
	struct pto_info *info = &ucmd->cmd.info;
	struct pto_dev *pdev = ucmd->pf->pdev;

	if (info->flags)
		return -EINVAL;
	info->abi_version = PTO_ABI_VERSION;
	info->profile = pdev->profile;
	info->nr_aic = pdev->nr_aic;
	info->nr_aiv = pdev->nr_aiv;
	info->nr_cores = pdev->nr_cores;
	info->dev_index = pdev->index;
	info->gm_size = pdev->gm_size;
	info->gm_dev_base = PTO_GM_DEV_BASE;
	info->gm_free = gen_pool_avail(pdev->pool);
	info->caps = pdev->caps;
	info->regs_size = PTO_REGS_MAP_SIZE;
	info->regs_mmap_offset = PTO_MMAP_REGS;
	info->gm_mmap_offset = PTO_MMAP_GM;
	info->sys_cnt_freq = PTO_SYS_CNT_FREQ;
	return 0;
}

/**
 * struct pto_ioctl_op - one size-first ioctl.
 * @size: sizeof() the structure this module knows.
 * @min_size: offsetofend() of the last field of the first ABI version.
 * @ioctl_num: the ioctl number.
 * @roles: BIT(enum pto_role) of the roles that may issue it.
 * @out: the handler writes output fields to copy back.
 * @execute: the handler; ucmd->cmd holds the argument, copied in and
 *	zero-extended.
 */
struct pto_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	unsigned int ioctl_num;
	u32 roles;
	bool out;
	int (*execute)(struct pto_ucmd *ucmd);
};

#define PTO_R_NONE	BIT(PTO_ROLE_NONE)
#define PTO_R_CLIENT	BIT(PTO_ROLE_CLIENT)
#define PTO_R_AICPU	BIT(PTO_ROLE_AICPU)
#define PTO_R_EXECUTOR	BIT(PTO_ROLE_EXECUTOR)
#define PTO_R_ANY	(PTO_R_NONE | PTO_R_CLIENT | PTO_R_AICPU | \
			 PTO_R_EXECUTOR)

/*
 * The argument named "type" is the structure type, e.g. struct pto_info.
 * The build fails if the structure does not fit union pto_ucmd_buffer or
 * does not start with its __u32 size.
 */
#define PTO_IOCTL_OP(_name, _fn, type, _last, _roles, _out)		\
	[_IOC_NR(PTO_IOC_##_name)] = {					\
		.size = sizeof(type) +					\
			BUILD_BUG_ON_ZERO(sizeof(type) >		\
					  sizeof(union pto_ucmd_buffer)) + \
			BUILD_BUG_ON_ZERO(offsetof(type, size)) +	\
			BUILD_BUG_ON_ZERO(sizeof_field(type, size) != 4), \
		.min_size = offsetofend(type, _last),			\
		.ioctl_num = PTO_IOC_##_name,				\
		.roles = _roles,					\
		.out = _out,						\
		.execute = _fn,						\
	}

/* Indexed by _IOC_NR(); slot 0 is PTO_IOC_ABI_VERSION, handled apart. */
static const struct pto_ioctl_op pto_ioctl_ops[] = {
	PTO_IOCTL_OP(GET_INFO, pto_get_info, struct pto_info,
		     sys_cnt_freq, PTO_R_ANY, true),
	PTO_IOCTL_OP(SET_ROLE, pto_set_role, struct pto_set_role,
		     pad, PTO_R_ANY, false),
	PTO_IOCTL_OP(GM_ALLOC, pto_gm_alloc, struct pto_gm_alloc,
		     mmap_offset, PTO_R_CLIENT | PTO_R_AICPU, true),
	PTO_IOCTL_OP(GM_FREE, pto_gm_free, struct pto_gm_free,
		     pad, PTO_R_CLIENT | PTO_R_AICPU, false),
	PTO_IOCTL_OP(GM_LOOKUP, pto_gm_lookup, struct pto_gm_lookup,
		     buf_len, PTO_R_ANY, true),
	PTO_IOCTL_OP(CORE_ATTACH, pto_core_attach, struct pto_cores,
		     mask, PTO_R_EXECUTOR, false),
	PTO_IOCTL_OP(CORE_DETACH, pto_core_detach, struct pto_cores,
		     mask, PTO_R_EXECUTOR, false),
	PTO_IOCTL_OP(CORE_WAIT, pto_core_wait, struct pto_core_wait,
		     reason, PTO_R_EXECUTOR, true),
	PTO_IOCTL_OP(KICK, pto_kick, struct pto_cores,
		     mask, PTO_R_AICPU, false),
	PTO_IOCTL_OP(RAISE_IRQ, pto_raise_irq_ioctl, struct pto_raise_irq,
		     pad, PTO_R_EXECUTOR | PTO_R_AICPU, false),
	PTO_IOCTL_OP(IRQ_WAIT, pto_irq_wait, struct pto_irq_wait,
		     timeout_ns, PTO_R_AICPU, true),
	/* Setting is restricted to the AICPU by the handler. */
	PTO_IOCTL_OP(HWS_CONFIG, pto_hws_config, struct pto_hws_config,
		     cfg, PTO_R_ANY, true),
	PTO_IOCTL_OP(CORE_WAIT_ANY, pto_core_wait_any,
		     struct pto_core_wait_any, mask, PTO_R_EXECUTOR, true),
	PTO_IOCTL_OP(GM_QUOTA, pto_gm_quota, struct pto_gm_quota,
		     used, PTO_R_AICPU, true),
	PTO_IOCTL_OP(GM_PIN, pto_gm_pin, struct pto_gm_pin,
		     buf_len, PTO_R_AICPU, true),
	PTO_IOCTL_OP(GM_UNPIN, pto_gm_unpin, struct pto_gm_unpin,
		     pad, PTO_R_AICPU, false),
};

static long pto_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	const struct pto_ioctl_op *op;
	struct pto_ucmd ucmd;
	unsigned int nr;
	u32 usize;
	int role;
	int ret;

	if (cmd == PTO_IOC_ABI_VERSION)
		return put_user((u32)PTO_ABI_VERSION, (u32 __user *)uarg);

	nr = _IOC_NR(cmd);
	if (nr >= ARRAY_SIZE(pto_ioctl_ops))
		return -ENOTTY;
	op = &pto_ioctl_ops[array_index_nospec(nr, ARRAY_SIZE(pto_ioctl_ops))];
	if (!op->execute || op->ioctl_num != cmd)
		return -ENOTTY;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->min_size)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&ucmd.cmd, op->size, uarg, usize);
	if (ret)
		return ret;

	ucmd.pf = file->private_data;
	role = pto_file_role(ucmd.pf);
	if (!(op->roles & BIT(role))) {
		dev_dbg(ucmd.pf->pdev->misc.this_device,
			"ioctl nr %u not allowed for role %d (pid %d)\n",
			nr, role, task_tgid_nr(current));
		return -EACCES;
	}

	/*
	 * The answer must be deliverable before anything is done: a buffer
	 * allocated, a pin taken or a kick consumed for an argument that
	 * cannot be written back would be lost to the caller. Writing back
	 * what was just read proves it (short of the caller unmapping it
	 * from another thread meanwhile, which loses only its own).
	 */
	if (op->out && copy_to_user(uarg, &ucmd.cmd, min(usize, op->size)))
		return -EFAULT;

	ret = op->execute(&ucmd);
	if (ret)
		return ret;

	if (op->out && copy_to_user(uarg, &ucmd.cmd, min(usize, op->size)))
		return -EFAULT;
	return 0;
}

/*
 * AICPU: uio-style interrupt count. A read of exactly 4 bytes returns the
 * count once it differs from the one this file last read. Other roles get
 * -EACCES, as their ioctls do.
 */
static ssize_t pto_read(struct file *file, char __user *ubuf, size_t count,
			loff_t *ppos)
{
	struct pto_file *pf = file->private_data;
	struct pto_dev *pdev = pf->pdev;
	u32 cur;
	int ret;

	if (pto_file_role(pf) != PTO_ROLE_AICPU)
		return -EACCES;
	if (count != sizeof(u32))
		return -EINVAL;

	if (file->f_flags & O_NONBLOCK) {
		if (!pto_irq_pending(pdev, &pf->irq_seen, &cur))
			return -EAGAIN;
	} else {
		ret = wait_event_interruptible(pdev->irq_wq,
					       pto_irq_pending(pdev,
							       &pf->irq_seen,
							       &cur));
		if (ret)
			return ret;
	}

	if (copy_to_user(ubuf, &cur, sizeof(cur)))
		return -EFAULT;
	WRITE_ONCE(pf->irq_seen, cur);
	return sizeof(cur);
}

static __poll_t pto_poll(struct file *file, struct poll_table_struct *wait)
{
	struct pto_file *pf = file->private_data;
	u32 cur;

	/*
	 * Wait on the queue whatever the role: a file watched (epoll) before
	 * it takes the AICPU role is otherwise never woken once it has it.
	 */
	poll_wait(file, &pf->pdev->irq_wq, wait);
	if (pto_file_role(pf) != PTO_ROLE_AICPU)
		return EPOLLERR;
	if (pto_irq_pending(pf->pdev, &pf->irq_seen, &cur))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

const struct file_operations pto_fops = {
	.owner = THIS_MODULE,
	.open = pto_open,
	.release = pto_release,
	.unlocked_ioctl = pto_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = pto_read,
	.poll = pto_poll,
	.mmap = pto_mmap,
};
