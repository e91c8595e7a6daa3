// SPDX-License-Identifier: GPL-2.0
/*
 * GM buffers (genalloc over device addresses), their handles, the AICPU's
 * pins and their lifetimes, what each user holds and may hold
 * (PTO_IOC_GM_QUOTA), and mmap() of the register file and GM.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uidgid.h>
#include <linux/vmalloc.h>

#include "pto_dev.h"
#include "pto_trace.h"

#define PTO_GM_ALIGN_MIN	SZ_4K
#define PTO_GM_ALIGN_MAX	SZ_1G
/* GM is zeroed in steps of this many bytes, rescheduling in between. */
#define PTO_GM_ZERO_STEP	SZ_16M

/**
 * pto_gm_init() - allocate the device's GM and its allocator.
 * @pdev: the device, with @gm_size set.
 *
 * GM is vmalloc_user() memory (mapped to userspace page by page, by pfn:
 * see pto_mmap()); the genalloc pool hands out device addresses from
 * PTO_GM_DEV_BASE.
 *
 * Return: 0 or -ENOMEM.
 */
int pto_gm_init(struct pto_dev *pdev)
{
	int ret;

	pdev->gm = vmalloc_user(pdev->gm_size);
	if (!pdev->gm) {
		pr_err("%s: cannot allocate %llu MiB of GM\n", pdev->name,
		       pdev->gm_size >> 20);
		return -ENOMEM;
	}
	pdev->pool = gen_pool_create(PAGE_SHIFT, NUMA_NO_NODE);
	if (!pdev->pool) {
		ret = -ENOMEM;
		goto err_free_gm;
	}
	ret = gen_pool_add(pdev->pool, PTO_GM_DEV_BASE, pdev->gm_size,
			   NUMA_NO_NODE);
	if (ret)
		goto err_destroy_pool;
	return 0;

err_destroy_pool:
	gen_pool_destroy(pdev->pool);
err_free_gm:
	vfree(pdev->gm);
	return ret;
}

/**
 * pto_gm_fini() - free what pto_gm_init() allocated.
 * @pdev: the device; every buffer has been freed.
 */
/*
 * At unload, no file open, every buffer gone: what is left in
 * pdev->users are the own quotas, which outlive the AICPU that set them.
 */
void pto_gm_fini(struct pto_dev *pdev)
{
	struct pto_gm_user *u;
	unsigned long index;

	xa_for_each(&pdev->users, index, u) {
		WARN_ON_ONCE(u->used);
		xa_erase(&pdev->users, index);
		kfree(u);
	}
	gen_pool_destroy(pdev->pool);
	vfree(pdev->gm);
}

static void *pto_gm_ptr(struct pto_dev *pdev, u64 dev_addr)
{
	return pdev->gm + (dev_addr - PTO_GM_DEV_BASE);
}

static void pto_gm_zero(struct pto_dev *pdev, u64 dev_addr, u64 len)
{
	void *p = pto_gm_ptr(pdev, dev_addr);

	while (len) {
		size_t n = min_t(u64, len, PTO_GM_ZERO_STEP);

		memset(p, 0, n);
		p += n;
		len -= n;
		cond_resched();
	}
}

/* ------------------------------------------------------------------------
 * GM per user
 * ------------------------------------------------------------------------
 */

/* Called with quota_lock held: forget @u once it holds and limits nothing. */
static void pto_gm_user_put(struct pto_dev *pdev, kuid_t uid,
			    struct pto_gm_user *u)
{
	lockdep_assert_held(&pdev->quota_lock);
	if (u->used || u->own)
		return;
	xa_erase(&pdev->users, __kuid_val(uid));
	kfree(u);
}

/* Called with quota_lock held: @uid's entry, created if needed, or NULL. */
static struct pto_gm_user *pto_gm_user_get(struct pto_dev *pdev, kuid_t uid)
{
	struct pto_gm_user *u;

	lockdep_assert_held(&pdev->quota_lock);
	u = xa_load(&pdev->users, __kuid_val(uid));
	if (u)
		return u;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return NULL;
	if (xa_err(xa_store(&pdev->users, __kuid_val(uid), u, GFP_KERNEL))) {
		kfree(u);
		return NULL;
	}
	return u;
}

static u64 pto_gm_user_quota(struct pto_dev *pdev, const struct pto_gm_user *u)
{
	return u->own ? u->quota : pdev->quota_default;
}

/* Charge @len bytes to @uid: 0, -EDQUOT beyond its quota, or -ENOMEM. */
static int pto_gm_charge(struct pto_dev *pdev, kuid_t uid, u64 len)
{
	struct pto_gm_user *u;
	u64 quota;
	int ret = 0;

	mutex_lock(&pdev->quota_lock);
	u = pto_gm_user_get(pdev, uid);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	quota = pto_gm_user_quota(pdev, u);
	if (quota && (u->used > quota || len > quota - u->used))
		ret = -EDQUOT;
	else
		u->used += len;
	pto_gm_user_put(pdev, uid, u);
out_unlock:
	mutex_unlock(&pdev->quota_lock);
	return ret;
}

static void pto_gm_uncharge(struct pto_dev *pdev, kuid_t uid, u64 len)
{
	struct pto_gm_user *u;

	mutex_lock(&pdev->quota_lock);
	u = xa_load(&pdev->users, __kuid_val(uid));
	if (u) {
		u->used -= min(u->used, len);
		pto_gm_user_put(pdev, uid, u);
	}
	mutex_unlock(&pdev->quota_lock);
}

/* Called with quota_lock held: set, or with @clear drop, @uid's quota. */
static int pto_gm_quota_set_uid(struct pto_dev *pdev, kuid_t uid, u64 bytes,
				bool clear)
{
	struct pto_gm_user *u = xa_load(&pdev->users, __kuid_val(uid));

	lockdep_assert_held(&pdev->quota_lock);
	if (clear) {
		if (u && u->own) {
			u->own = false;
			u->quota = 0;
			pdev->nr_own--;
			pto_gm_user_put(pdev, uid, u);
		}
		return 0;
	}
	if ((!u || !u->own) && pdev->nr_own >= PTO_GM_QUOTA_MAX_UIDS)
		return -ENOSPC;
	u = pto_gm_user_get(pdev, uid);
	if (!u)
		return -ENOMEM;
	if (!u->own)
		pdev->nr_own++;
	u->own = true;
	u->quota = bytes;
	return 0;
}

/*
 * Called with quota_lock held: the first quota an AICPU sets replaces the
 * ones in force, which an earlier AICPU may have set: every user's own
 * quota goes (the default is about to be set, or stays until it is).
 * What users hold stays charged to them.
 */
static void pto_gm_quota_take_over(struct pto_dev *pdev, u64 aicpu_gen)
{
	struct pto_gm_user *u;
	unsigned long index;

	lockdep_assert_held(&pdev->quota_lock);
	if (pdev->quota_gen == aicpu_gen)
		return;
	pdev->quota_gen = aicpu_gen;
	pdev->nr_own = 0;
	xa_for_each(&pdev->users, index, u) {
		u->own = false;
		u->quota = 0;
		pto_gm_user_put(pdev, KUIDT_INIT((uid_t)index), u);
	}
}

/* Called with quota_lock held: GM charged to every user together. */
static u64 pto_gm_used_all(struct pto_dev *pdev)
{
	struct pto_gm_user *u;
	unsigned long index;
	u64 sum = 0;

	lockdep_assert_held(&pdev->quota_lock);
	xa_for_each(&pdev->users, index, u)
		sum += u->used;
	return sum;
}

int pto_gm_quota(struct pto_ucmd *ucmd)
{
	struct pto_gm_quota *arg = &ucmd->cmd.gm_quota;
	struct pto_dev *pdev = ucmd->pf->pdev;
	bool set = arg->flags & PTO_GM_QUOTA_SET;
	bool one = arg->flags & PTO_GM_QUOTA_UID;
	bool clear = arg->flags & PTO_GM_QUOTA_CLEAR;
	struct pto_gm_user *u;
	kuid_t uid = INVALID_UID;
	int ret = 0;

	if (arg->flags & ~(PTO_GM_QUOTA_SET | PTO_GM_QUOTA_UID |
			   PTO_GM_QUOTA_CLEAR) || arg->pad)
		return -EINVAL;
	if (clear && (!set || !one || arg->bytes))
		return -EINVAL;
	if (!set && arg->bytes)
		return -EINVAL;
	if (one) {
		uid = make_kuid(current_user_ns(), arg->uid);
		if (!uid_valid(uid))
			return -EINVAL;
	} else if (arg->uid) {
		return -EINVAL;
	}

	mutex_lock(&pdev->quota_lock);
	if (set)
		pto_gm_quota_take_over(pdev, ucmd->pf->aicpu_gen);
	if (set && one)
		ret = pto_gm_quota_set_uid(pdev, uid, arg->bytes, clear);
	else if (set)
		pdev->quota_default = arg->bytes;
	if (!ret && one) {
		u = xa_load(&pdev->users, __kuid_val(uid));
		arg->bytes = u ? pto_gm_user_quota(pdev, u) :
				 pdev->quota_default;
		arg->used = u ? u->used : 0;
	} else if (!ret) {
		arg->bytes = pdev->quota_default;
		arg->used = pto_gm_used_all(pdev);
	}
	mutex_unlock(&pdev->quota_lock);
	if (!ret && set && one)
		dev_dbg(pdev->misc.this_device,
			"GM quota of uid %u: %llu bytes (pid %d)\n", arg->uid,
			arg->bytes, task_tgid_nr(current));
	else if (!ret && set)
		dev_dbg(pdev->misc.this_device,
			"default GM quota: %llu bytes (pid %d)\n", arg->bytes,
			task_tgid_nr(current));
	return ret;
}

/* The last reference went: the GM goes back to the pool. */
static void pto_buf_release(struct kref *ref)
{
	struct pto_buf *buf = container_of(ref, struct pto_buf, ref);
	struct pto_dev *pdev = buf->pdev;

	trace_pto_free(buf);
	gen_pool_free(pdev->pool, buf->dev_addr, buf->len);
	if (buf->charged)
		pto_gm_uncharge(pdev, buf->uid, buf->charge);
	atomic64_sub(buf->len, &pdev->cnt.gm_bytes);
	atomic64_dec(&pdev->cnt.gm_buffers);
	atomic64_inc(&pdev->cnt.frees);
	kfree(buf);
}

static void pto_buf_put(struct pto_buf *buf)
{
	kref_put(&buf->ref, pto_buf_release);
}

/* GM_ALLOC's argument: flags, padding, length and alignment. */
static int pto_gm_alloc_check(const struct pto_gm_alloc *arg,
			      const struct pto_dev *pdev)
{
	if (arg->flags & ~PTO_GM_ALLOC_CHARGE)
		return -EINVAL;
	if (!(arg->flags & PTO_GM_ALLOC_CHARGE) && arg->uid)
		return -EINVAL;
	if (!arg->len || arg->len > pdev->gm_size)
		return -EINVAL;
	if (arg->align && (!is_power_of_2(arg->align) ||
			   arg->align < PTO_GM_ALIGN_MIN ||
			   arg->align > PTO_GM_ALIGN_MAX))
		return -EINVAL;
	return 0;
}

int pto_gm_alloc(struct pto_ucmd *ucmd)
{
	struct pto_gm_alloc *arg = &ucmd->cmd.gm_alloc;
	struct pto_file *pf = ucmd->pf;
	struct pto_dev *pdev = pf->pdev;
	/* the AICPU's own memory is the device's, not a user's */
	bool charged = pto_file_role(pf) == PTO_ROLE_CLIENT;
	struct genpool_data_align align;
	kuid_t uid = pf->uid;
	struct pto_buf *buf;
	unsigned long addr;
	u64 len;
	u32 handle;
	int ret;

	ret = pto_gm_alloc_check(arg, pdev);
	if (ret)
		return ret;
	if (arg->flags & PTO_GM_ALLOC_CHARGE) {
		/* memory the AICPU holds for a user (its runtime) */
		if (pto_file_role(pf) != PTO_ROLE_AICPU)
			return -EPERM;
		uid = make_kuid(current_user_ns(), arg->uid);
		if (!uid_valid(uid))
			return -EINVAL;
		charged = true;
	}

	len = PAGE_ALIGN(arg->len);
	align.align = max_t(u64, arg->align, PAGE_SIZE);

	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	buf->charged = charged;
	buf->uid = uid;
	/*
	 * First fit at a large alignment keeps the GM below the buffer from
	 * any allocation that large: charged at its length only, buffers of
	 * a page at 1 GiB alignments would cut GM into pieces too small for
	 * anyone else's large buffers, for a page of quota each.
	 */
	buf->charge = max_t(u64, len, align.align);
	if (buf->charged) {
		ret = pto_gm_charge(pdev, buf->uid, buf->charge);
		if (ret)
			goto err_free_buf;
	}

	addr = gen_pool_alloc_algo(pdev->pool, len, gen_pool_first_fit_align,
				   &align);
	if (!addr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	/* Never hand out what an earlier owner left in GM. */
	pto_gm_zero(pdev, addr, len);

	kref_init(&buf->ref);
	buf->pdev = pdev;
	buf->pid = pf->pid;
	buf->dev_addr = addr;
	buf->len = len;

	mutex_lock(&pf->buf_lock);
	ret = xa_alloc(&pf->bufs, &handle, buf, xa_limit_32b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		mutex_unlock(&pf->buf_lock);
		goto err_free_gm;
	}
	/* over what a failed erase may have left there (pto_buf_find()) */
	ret = mtree_store_range(&pf->by_addr, addr, addr + len - 1,
				xa_mk_value(handle), GFP_KERNEL_ACCOUNT);
	if (ret) {
		xa_erase(&pf->bufs, handle);
		mutex_unlock(&pf->buf_lock);
		goto err_free_gm;
	}
	buf->handle = handle;
	buf->owner = pf;
	/*
	 * Before the lock goes: from then on another thread of the file can
	 * free the handle, and @buf with it.
	 */
	atomic64_add(len, &pdev->cnt.gm_bytes);
	atomic64_inc(&pdev->cnt.gm_buffers);
	atomic64_inc(&pdev->cnt.allocs);
	trace_pto_alloc(buf);
	mutex_unlock(&pf->buf_lock);

	arg->handle = handle;
	arg->dev_addr = addr;
	arg->mmap_offset = PTO_MMAP_GM + (addr - PTO_GM_DEV_BASE);
	return 0;

err_free_gm:
	gen_pool_free(pdev->pool, addr, len);
err_uncharge:
	if (buf->charged)
		pto_gm_uncharge(pdev, buf->uid, buf->charge);
err_free_buf:
	kfree(buf);
	return ret == -EBUSY ? -ENOSPC : ret;
}

/* Drops the handle's reference; mappings keep the memory alive. */
int pto_gm_free(struct pto_ucmd *ucmd)
{
	struct pto_gm_free *arg = &ucmd->cmd.gm_free;
	struct pto_file *pf = ucmd->pf;
	struct pto_buf *buf;

	if (arg->flags || arg->pad)
		return -EINVAL;
	/*
	 * Never a handle (XA_FLAGS_ALLOC1), and not to be erased: erasing
	 * index 0 marks it free, and the next xa_alloc() would return it.
	 */
	if (!arg->handle)
		return -ENOENT;

	mutex_lock(&pf->buf_lock);
	buf = xa_erase(&pf->bufs, arg->handle);
	if (buf) {
		mtree_erase(&pf->by_addr, buf->dev_addr);
		buf->owner = NULL;
	}
	mutex_unlock(&pf->buf_lock);
	if (!buf)
		return -ENOENT;

	pto_buf_put(buf);
	return 0;
}

/*
 * Called with pf->buf_lock held: the buffer of @pf holding [start, end).
 * @by_addr maps a range to its buffer's handle, not to the buffer: an
 * erase that failed for want of memory leaves a handle that @bufs no
 * longer has, or has for another range, never a pointer to freed memory.
 */
static struct pto_buf *pto_buf_find(struct pto_file *pf, u64 start, u64 end)
{
	struct pto_buf *buf;
	void *entry;

	lockdep_assert_held(&pf->buf_lock);
	entry = mtree_load(&pf->by_addr, start);
	if (!xa_is_value(entry))
		return NULL;
	buf = xa_load(&pf->bufs, xa_to_value(entry));
	if (buf && start >= buf->dev_addr && end <= buf->dev_addr + buf->len)
		return buf;
	return NULL;
}

int pto_gm_lookup(struct pto_ucmd *ucmd)
{
	struct pto_gm_lookup *arg = &ucmd->cmd.gm_lookup;
	struct pto_file *pf = ucmd->pf;
	struct pto_buf *buf;
	u64 end;
	int ret = 0;

	if (arg->flags || arg->pad)
		return -EINVAL;
	if (!arg->len || check_add_overflow(arg->dev_addr, arg->len, &end))
		return -EINVAL;

	mutex_lock(&pf->buf_lock);
	buf = pto_buf_find(pf, arg->dev_addr, end);
	if (buf) {
		arg->handle = buf->handle;
		arg->pad = 0;
		arg->buf_dev_addr = buf->dev_addr;
		arg->buf_len = buf->len;
	} else {
		ret = -ENOENT;
	}
	mutex_unlock(&pf->buf_lock);
	return ret;
}

/*
 * The file behind descriptor @fd of the caller if it is a CLIENT file of
 * @pdev, with a reference the caller drops with fput(); else NULL and
 * *@err: -EBADF (no open file of a pto device), -EXDEV (another device's),
 * -EINVAL (not a client).
 */
static struct file *pto_client_file_get(struct pto_dev *pdev, int fd,
					int *err)
{
	struct file *file = fget(fd);
	struct pto_file *cpf;

	*err = -EBADF;
	if (!file)
		return NULL;
	/* only a file of this driver has a struct pto_file behind it */
	if (file->f_op != &pto_fops)
		goto err_put;
	cpf = file->private_data;
	*err = -EXDEV;
	if (cpf->pdev != pdev)
		goto err_put;
	*err = -EINVAL;
	if (pto_file_role(cpf) != PTO_ROLE_CLIENT)
		goto err_put;
	return file;

err_put:
	fput(file);
	return NULL;
}

/*
 * AICPU: a reference on the client's buffer that holds the range, kept in
 * the AICPU file under a pin id until GM_UNPIN or release().
 */
int pto_gm_pin(struct pto_ucmd *ucmd)
{
	struct pto_gm_pin *arg = &ucmd->cmd.gm_pin;
	struct pto_file *pf = ucmd->pf;
	struct pto_file *cpf;
	struct pto_buf *buf;
	struct file *file;
	u64 end, start, len;
	u32 id;
	int ret;

	if (arg->flags)
		return -EINVAL;
	if (!arg->len || check_add_overflow(arg->dev_addr, arg->len, &end))
		return -EINVAL;

	file = pto_client_file_get(pf->pdev, arg->fd, &ret);
	if (!file)
		return ret;
	cpf = file->private_data;
	mutex_lock(&cpf->buf_lock);
	buf = pto_buf_find(cpf, arg->dev_addr, end);
	if (buf)
		kref_get(&buf->ref);
	mutex_unlock(&cpf->buf_lock);
	fput(file);
	if (!buf)
		return -ENOENT;

	/* once in the table, a concurrent GM_UNPIN may drop the buffer */
	start = buf->dev_addr;
	len = buf->len;
	/* counted first: an unpin may follow the moment it is in the table */
	atomic64_inc(&pf->pdev->cnt.pins);
	ret = xa_alloc(&pf->pins, &id, buf, xa_limit_32b, GFP_KERNEL_ACCOUNT);
	if (ret) {
		atomic64_dec(&pf->pdev->cnt.pins);
		pto_buf_put(buf);
		return ret == -EBUSY ? -ENOSPC : ret;
	}

	arg->pin = id;
	arg->buf_dev_addr = start;
	arg->buf_len = len;
	return 0;
}

int pto_gm_unpin(struct pto_ucmd *ucmd)
{
	struct pto_gm_unpin *arg = &ucmd->cmd.gm_unpin;
	struct pto_file *pf = ucmd->pf;
	struct pto_buf *buf;

	if (arg->flags || arg->pad)
		return -EINVAL;
	/* never an id, and not to be erased (see pto_gm_free()) */
	if (!arg->pin)
		return -ENOENT;
	buf = xa_erase(&pf->pins, arg->pin);
	if (!buf)
		return -ENOENT;
	atomic64_dec(&pf->pdev->cnt.pins);
	pto_buf_put(buf);
	return 0;
}

/* release(): drop every handle and every pin of the file. */
void pto_gm_release_file(struct pto_file *pf)
{
	struct pto_buf *buf;
	unsigned long index;

	mutex_lock(&pf->buf_lock);
	/*
	 * by_addr keeps their handles, which no longer resolve: release()
	 * destroys it whole
	 */
	xa_for_each(&pf->bufs, index, buf) {
		xa_erase(&pf->bufs, index);
		buf->owner = NULL;
		pto_buf_put(buf);
	}
	mutex_unlock(&pf->buf_lock);

	xa_for_each(&pf->pins, index, buf) {
		xa_erase(&pf->pins, index);
		atomic64_dec(&pf->pdev->cnt.pins);
		pto_buf_put(buf);
	}
}

/* ------------------------------------------------------------------------
 * mmap
 *
 * Pages are inserted on fault, so faults are real, counted and traced. A
 * VMA of a client's buffer holds a reference to the buffer
 * (vm_private_data); splitting and fork() take one more through .open,
 * every piece drops its own in .close.
 *
 * Every mapping (GM of every role, the register file) is VM_PFNMAP |
 * VM_IO and its PTEs are inserted by pfn (vmf_insert_pfn()): they are
 * special, take no reference on the page, and get_user_pages() and
 * pin_user_pages() refuse the VMA (-EFAULT). So nothing but the mapping
 * reaches a page of GM: a pipe (vmsplice()), an io_uring fixed buffer or
 * direct I/O cannot hold one beyond munmap(), and the buffer's kref,
 * which counts handle, VMAs and pins, is all that keeps its range out of
 * the pool. Copying I/O (read(), write(), send()...) into and out of a
 * mapping still works: the copy faults the PTE in here. ptrace() and
 * /proc/PID/mem cannot read these mappings (no .access: the generic one
 * is for physical I/O memory, not vmalloc pages).
 * ------------------------------------------------------------------------
 */
static void pto_vm_open(struct vm_area_struct *vma)
{
	struct pto_buf *buf = vma->vm_private_data;

	if (buf)
		kref_get(&buf->ref);
}

static void pto_vm_close(struct vm_area_struct *vma)
{
	struct pto_buf *buf = vma->vm_private_data;

	if (buf)
		pto_buf_put(buf);
}

static vm_fault_t pto_vm_fault(struct vm_fault *vmf)
{
	struct pto_file *pf = vmf->vma->vm_file->private_data;
	struct pto_dev *pdev = pf->pdev;
	u64 gm_pages = pdev->gm_size >> PAGE_SHIFT;
	pgoff_t pgoff = vmf->pgoff;
	struct page *page;
	vm_fault_t ret;
	void *addr;

	if (pgoff < PTO_REGS_PAGES)
		addr = pdev->regs + (pgoff << PAGE_SHIFT);
	else if (pgoff >= PTO_GM_PGOFF && pgoff - PTO_GM_PGOFF < gm_pages)
		addr = pdev->gm + ((pgoff - PTO_GM_PGOFF) << PAGE_SHIFT);
	else
		return VM_FAULT_SIGBUS;

	page = vmalloc_to_page(addr);
	if (!page)
		return VM_FAULT_SIGBUS;
	/* by pfn, no page reference: see the comment on mmap above */
	ret = vmf_insert_pfn(vmf->vma, vmf->address, page_to_pfn(page));
	if (ret & VM_FAULT_ERROR)
		return ret;

	atomic64_inc(&pdev->cnt.faults);
	trace_pto_fault(pdev, (u64)pgoff << PAGE_SHIFT, PAGE_SIZE);
	return ret;
}

static const struct vm_operations_struct pto_vm_ops = {
	.open = pto_vm_open,
	.close = pto_vm_close,
	.fault = pto_vm_fault,
};

/*
 * VM_PFNMAP | VM_IO: PTEs by pfn only, never reachable by get_user_pages()
 * (see above). VM_DONTEXPAND: no growing with mremap(). Any of the three
 * (VM_SPECIAL) also keeps the VMA from being merged with a neighbour,
 * which would leave one .close for two buffer references.
 */
static void pto_vma_set_flags(struct vm_area_struct *vma)
{
#ifdef PTO_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP,
		     VM_MAYEXEC);
#else
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYEXEC;
#endif
}

/*
 * A mapping that must stay read-only: refused if writable, and kept from
 * becoming writable (mprotect).
 */
static int pto_mmap_readonly(struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
#ifdef PTO_HAVE_VM_FLAGS_MOD
	vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
	return 0;
}

/*
 * Checks the range of @vma against the caller's role; on success a
 * client's VMA gets a reference to its buffer in *@bufp.
 */
static int pto_mmap_check(struct pto_file *pf, struct vm_area_struct *vma,
			  struct pto_buf **bufp)
{
	struct pto_dev *pdev = pf->pdev;
	int role = pto_file_role(pf);
	bool full = role == PTO_ROLE_AICPU || role == PTO_ROLE_EXECUTOR;
	u64 gm_pages = pdev->gm_size >> PAGE_SHIFT;
	unsigned long npages = vma_pages(vma);
	unsigned long pgoff = vma->vm_pgoff;
	struct pto_buf *buf;
	u64 first, start;

	if (pgoff < PTO_REGS_PAGES) {
		if (npages > PTO_REGS_PAGES - pgoff)
			return -EINVAL;
		if (!full)
			return -EACCES;
		if (role == PTO_ROLE_EXECUTOR &&
		    pgoff < (PTO_REGS_EXEC_WRITE_OFFSET >> PAGE_SHIFT))
			return pto_mmap_readonly(vma);
		return 0;
	}

	if (pgoff < PTO_GM_PGOFF || pgoff - PTO_GM_PGOFF >= gm_pages)
		return -EINVAL;
	first = pgoff - PTO_GM_PGOFF;
	if (npages > gm_pages - first)
		return -EINVAL;
	if (full)
		return 0;
	if (role != PTO_ROLE_CLIENT)
		return -EACCES;

	/* A client maps a range of one buffer it owns, nothing else. */
	start = PTO_GM_DEV_BASE + (first << PAGE_SHIFT);
	mutex_lock(&pf->buf_lock);
	buf = pto_buf_find(pf, start, start + ((u64)npages << PAGE_SHIFT));
	if (buf)
		kref_get(&buf->ref);
	mutex_unlock(&pf->buf_lock);
	if (!buf)
		return -EACCES;
	*bufp = buf;
	return 0;
}

int pto_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pto_file *pf = file->private_data;
	struct pto_dev *pdev = pf->pdev;
	struct pto_buf *buf = NULL;
	int ret;

	/*
	 * Only shared mappings: a private one would copy GM pages on write.
	 * VM_MAYSHARE rather than VM_SHARED so that a read-only file can still
	 * map read-only (the kernel clears VM_SHARED for those).
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	ret = pto_mmap_check(pf, vma, &buf);
	if (ret) {
		dev_dbg(pdev->misc.this_device,
			"mmap offset 0x%llx len %lu refused: %d (pid %d)\n",
			(u64)vma->vm_pgoff << PAGE_SHIFT,
			vma->vm_end - vma->vm_start, ret,
			task_tgid_nr(current));
		return ret;
	}

	pto_vma_set_flags(vma);
	vma->vm_ops = &pto_vm_ops;
	vma->vm_private_data = buf;

	atomic64_inc(&pdev->cnt.maps);
	trace_pto_map(pdev, (u64)vma->vm_pgoff << PAGE_SHIFT,
		      vma->vm_end - vma->vm_start);
	return 0;
}
