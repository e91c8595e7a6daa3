/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal structures of pto.ko, the emulated PTO2 device
 *
 * Object lifetimes:
 *
 * - struct pto_dev lives from module load to module unload. Every open
 *   file pins the module (fops.owner), and every mapping pins its file, so
 *   no pto_dev goes while it is in use.
 * - struct pto_file lives from open() to release().
 * - struct pto_buf is reference counted: the owning file's handle holds one
 *   reference, every VMA that maps it holds one, every pin of an AICPU file
 *   (PTO_IOC_GM_PIN) holds one. Its GM returns to the pool when the last
 *   reference goes. Nothing else can reach its pages: mappings are
 *   VM_PFNMAP, which get_user_pages() refuses, so no pipe (vmsplice),
 *   io_uring buffer or direct I/O holds one (pto_gm.c, mmap).
 *
 * The register file is shared with userspace (AICPU and executor map it
 * writable), so the kernel never trusts what it reads back from it except
 * the registers userspace owns (DATA_MAIN_BASE for CORE_WAIT, the HWS
 * configuration). Core states, owners and counts are kept here and mirrored
 * into the register file.
 */
#ifndef _PTO_DEV_H
#define _PTO_DEV_H

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/kref.h>
#include <linux/maple_tree.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <linux/pto.h>

#define PTO_NAME_LEN		16
#define PTO_REGS_MAP_SIZE	PAGE_ALIGN(PTO_REGS_SIZE)
#define PTO_REGS_PAGES		(PTO_REGS_MAP_SIZE >> PAGE_SHIFT)
#define PTO_GM_PGOFF		(PTO_MMAP_GM >> PAGE_SHIFT)

struct pto_dev;
struct pto_file;

/**
 * struct pto_core - kernel side of one core.
 * @pdev: the device.
 * @regs: the core's 64-byte block in the register file.
 * @wq: threads of the owning executor sleeping in PTO_IOC_CORE_WAIT.
 * @owner: the executor file that attached the core, or NULL.
 * @owner_pid: tgid of @owner's opener, for debugfs.
 * @state: enum pto_core_state; authoritative copy of @regs->state.
 * @kick_pending: set by PTO_IOC_KICK, consumed by PTO_IOC_CORE_WAIT or
 *	PTO_IOC_CORE_WAIT_ANY, so that a kick landing between the executor's
 *	last check and its sleep is not lost.
 * @park_count: authoritative copy of @regs->park_count.
 * @kick_count: authoritative copy of @regs->kick_count.
 * @index: core id.
 * @lock: the innermost lock: taken inside pdev->lock where @owner
 *	changes, inside pdev->any_wq.lock by the waker that clears a
 *	CORE_WAIT_ANY set's parked flags (any_wq is never woken from
 *	interrupt context, so a plain spin_lock() is enough), and alone by
 *	CORE_WAIT on its way in and a thread back from CORE_WAIT(_ANY).
 *	Writes to @regs that hold only while @owner is a given file
 *	(clearing @regs->parked, storing @regs->park_count) happen under
 *	it, without the device-wide mutex on the executor's wake-up path.
 *
 * @owner, @owner_pid and @state are written under pdev->lock, @owner
 * also under @lock; lockless readers use READ_ONCE() and tolerate a
 * stale value.
 */
struct pto_core {
	struct pto_dev *pdev;
	struct pto_core_regs *regs;
	wait_queue_head_t wq;
	struct pto_file *owner;
	pid_t owner_pid;
	u32 state;
	atomic_t kick_pending;
	atomic_t park_count;
	atomic_t kick_count;
	u32 index;
	spinlock_t lock;	/* @owner changes vs owner-only register writes */
};

/**
 * struct pto_counters - device statistics (sysfs "counters").
 * @gm_bytes: bytes held by buffers not yet returned to the pool.
 * @gm_buffers: buffers not yet returned to the pool.
 * @allocs: successful PTO_IOC_GM_ALLOC calls.
 * @frees: buffers returned to the pool (last reference dropped).
 * @maps: successful mmap() calls.
 * @parks: PTO_IOC_CORE_WAIT calls by a core owner.
 * @kicks: cores kicked by PTO_IOC_KICK.
 * @wakes: PTO_IOC_CORE_WAIT calls that returned 0 (DMB changed or kick).
 * @irqs: AICPU interrupts (RAISE_IRQ and executor deaths).
 * @faults: page faults served on mappings of the device.
 * @pins: pins held by AICPU files (PTO_IOC_GM_PIN, not yet unpinned).
 */
struct pto_counters {
	atomic64_t gm_bytes;
	atomic64_t gm_buffers;
	atomic64_t allocs;
	atomic64_t frees;
	atomic64_t maps;
	atomic64_t parks;
	atomic64_t kicks;
	atomic64_t wakes;
	atomic64_t irqs;
	atomic64_t faults;
	atomic64_t pins;
};

/**
 * struct pto_dev - one emulated device, /dev/ptoN.
 * @name: "ptoN".
 * @index: N.
 * @profile: enum pto_profile.
 * @nr_aic: AIC cores.
 * @nr_aiv: AIV cores.
 * @nr_cores: all cores.
 * @caps: PTO_CAP_* of @profile.
 * @gm_size: GM bytes.
 * @epoch_ns: CLOCK_MONOTONIC ns at load, the system counter's zero.
 * @gm: GM, vmalloc_user().
 * @regs: register file, vmalloc_user(PTO_REGS_MAP_SIZE).
 * @info: info page in @regs.
 * @hws: HWS block in @regs.
 * @pool: GM allocator over device addresses from PTO_GM_DEV_BASE.
 * @misc: the misc device.
 * @debugfs: debugfs directory, /sys/kernel/debug/pto/ptoN.
 * @lock: see below.
 * @aicpu: file holding the AICPU role, or NULL.
 * @irq_lock: see below.
 * @irq_count: AICPU interrupt count (authoritative; mirrored into
 *	@info->irq_count).
 * @irq_wq: AICPU threads in read(), poll() or PTO_IOC_IRQ_WAIT.
 * @any_wq: executor threads in PTO_IOC_CORE_WAIT_ANY, exclusive waiters;
 *	a kick of core k passes the core as the wake-up key and wakes the
 *	first waiter whose set has k.
 * @quota_lock: see below.
 * @quota_default: GM quota in bytes of a user without one of its own, 0 =
 *	unlimited (PTO_IOC_GM_QUOTA); the last AICPU's, which outlives it.
 * @aicpu_gen: AICPUs that took the role so far (under @lock).
 * @quota_gen: the pto_file.aicpu_gen of the AICPU whose quotas are in
 *	force, 0: none set one (under @quota_lock).
 * @nr_own: users in @users with a quota of their own.
 * @users: __kuid_val() -> struct pto_gm_user: the users that hold GM or
 *	have a quota of their own.
 * @cnt: statistics.
 * @cores: @nr_cores cores.
 */
struct pto_dev {
	char name[PTO_NAME_LEN];
	u32 index;
	u32 profile;
	u32 nr_aic;
	u32 nr_aiv;
	u32 nr_cores;
	u64 caps;
	u64 gm_size;
	u64 epoch_ns;
	void *gm;
	void *regs;
	struct pto_regs_info *info;
	struct pto_regs_hws *hws;
	struct gen_pool *pool;
	struct miscdevice misc;
	struct dentry *debugfs;
	/*
	 * Protects core ownership and state (pto_core.owner, .owner_pid,
	 * .state and their mirrors in the register file), @aicpu,
	 * the device's writes of @hws->cfg (readers use its count), and the
	 * role of every file of this device while it is being set.
	 */
	struct mutex lock;
	struct pto_file *aicpu;
	/*
	 * Serialises increments of @irq_count with their store into
	 * @info->irq_count, so the mirror never goes backwards.
	 */
	spinlock_t irq_lock;
	atomic_t irq_count;
	/*
	 * Protects @sys_cnt, the last system counter value stored into
	 * @info->sys_cnt, and that store: the mirror only moves forward
	 * from the kernel's own value, whatever the AICPU wrote there.
	 */
	spinlock_t sys_cnt_lock;
	u64 sys_cnt;
	wait_queue_head_t irq_wq;
	wait_queue_head_t any_wq;
	/*
	 * Protects @quota_default, @nr_own, @users and every struct
	 * pto_gm_user in it: what each user holds and may hold. Innermost:
	 * a charge takes it before pto_file.buf_lock, the uncharge of a
	 * buffer's last reference may run under buf_lock (the file's
	 * release) or a mapping's close; it takes no other lock.
	 */
	struct mutex quota_lock;
	u64 quota_default;
	u64 aicpu_gen;
	u64 quota_gen;
	u32 nr_own;
	struct xarray users;
	struct pto_counters cnt;
	struct pto_core cores[];
};

/**
 * struct pto_gm_user - GM charged to one user (PTO_IOC_GM_QUOTA).
 * @used: bytes of the user's buffers not yet returned to the pool.
 * @quota: the user's own quota if @own, 0 = unlimited.
 * @own: the AICPU gave the user a quota of its own.
 *
 * In pto_dev.users while @used or @own; under pto_dev.quota_lock.
 */
struct pto_gm_user {
	u64 used;
	u64 quota;
	bool own;
};

/**
 * struct pto_file - one open file of /dev/ptoN.
 * @pdev: the device.
 * @role: enum pto_role; set once under pdev->lock with smp_store_release(),
 *	read with smp_load_acquire().
 * @pid: tgid of the opener, in the initial pid namespace.
 * @tgid: the opener's thread group (a reference), for its pid as another
 *	pid namespace sees it.
 * @uid: fsuid of the opener, whom the file's buffers are charged to.
 * @opener_admin: the opener had CAP_SYS_ADMIN (in the initial user
 *	namespace): the privileged roles need it as well as the caller.
 * @writable: opened for writing: a role and a change of the HWS
 *	configuration need it (every command that changes the device needs
 *	a role).
 * @buf_lock: see below.
 * @bufs: handle -> struct pto_buf, handles from 1.
 * @by_addr: the handles of @bufs by their buffers' device address range
 *	(a maple tree, its own lock taken inside @buf_lock): GM_LOOKUP,
 *	GM_PIN and mmap find a buffer through it in O(log n), whatever the
 *	file holds.
 * @irq_seen: AICPU: interrupt count last returned by read() or
 *	PTO_IOC_IRQ_WAIT (READ_ONCE/WRITE_ONCE).
 * @aicpu_gen: AICPU: pto_dev.aicpu_gen when it took the role (set before
 *	the role is published, constant after).
 * @pins: AICPU: pin id -> struct pto_buf, one buffer reference each, ids
 *	from 1. Needs no lock of ours: an id is taken out with xa_erase(),
 *	so exactly one caller gets its reference, and release() runs when no
 *	ioctl of the file can.
 * @any_unwoken: executor: threads of this file in PTO_IOC_CORE_WAIT_ANY
 *	that no wake-up has reached since they last went to sleep (under
 *	pdev->any_wq.lock). A kick that takes it to 0 clears the parked
 *	flags of the woken thread's set (pto_core.c).
 * @core_waits: executor: the file has called PTO_IOC_CORE_WAIT, which
 *	does not look at parked flags: the device then never clears them
 *	(WRITE_ONCE/READ_ONCE).
 */
struct pto_file {
	struct pto_dev *pdev;
	int role;
	pid_t pid;
	struct pid *tgid;
	kuid_t uid;
	bool opener_admin;
	bool writable;
	/*
	 * Protects @bufs and @by_addr against concurrent alloc, free, lookup
	 * and mmap, so that a buffer found in either can safely get a
	 * reference, and pto_buf.owner of the buffers in @bufs.
	 */
	struct mutex buf_lock;
	struct xarray bufs;
	struct maple_tree by_addr;
	u32 irq_seen;
	u64 aicpu_gen;
	struct xarray pins;
	u32 any_unwoken;
	bool core_waits;
};

/**
 * struct pto_buf - a GM buffer.
 * @ref: one for the owner's handle, one per VMA mapping it, one per pin.
 * @pdev: the device.
 * @owner: the owning file while the handle exists, NULL after (under the
 *	owner's buf_lock).
 * @handle: the handle in the owner's table.
 * @pid: tgid of the allocating process.
 * @uid: the user it is charged to, if @charged.
 * @charged: counted in @uid's GM (a CLIENT file's buffer).
 * @charge: bytes counted in @uid's GM if @charged: @len, or the alignment
 *	asked for if that is more (pto_gm_alloc()).
 * @dev_addr: device address of the first byte.
 * @len: bytes, a multiple of PAGE_SIZE.
 */
struct pto_buf {
	struct kref ref;
	struct pto_dev *pdev;
	struct pto_file *owner;
	u32 handle;
	pid_t pid;
	kuid_t uid;
	bool charged;
	u64 charge;
	u64 dev_addr;
	u64 len;
};

/**
 * union pto_ucmd_buffer - room for the argument of any size-first ioctl.
 * @info: PTO_IOC_GET_INFO.
 * @set_role: PTO_IOC_SET_ROLE.
 * @gm_alloc: PTO_IOC_GM_ALLOC.
 * @gm_free: PTO_IOC_GM_FREE.
 * @gm_lookup: PTO_IOC_GM_LOOKUP.
 * @cores: PTO_IOC_CORE_ATTACH, PTO_IOC_CORE_DETACH, PTO_IOC_KICK.
 * @core_wait: PTO_IOC_CORE_WAIT.
 * @core_wait_any: PTO_IOC_CORE_WAIT_ANY.
 * @raise_irq: PTO_IOC_RAISE_IRQ.
 * @irq_wait: PTO_IOC_IRQ_WAIT.
 * @hws_config: PTO_IOC_HWS_CONFIG.
 * @gm_quota: PTO_IOC_GM_QUOTA.
 * @gm_pin: PTO_IOC_GM_PIN.
 * @gm_unpin: PTO_IOC_GM_UNPIN.
 *
 * The ioctl table (pto_file.c) fails to build if an argument structure is
 * larger than this union.
 */
union pto_ucmd_buffer {
	struct pto_info info;
	struct pto_set_role set_role;
	struct pto_gm_alloc gm_alloc;
	struct pto_gm_free gm_free;
	struct pto_gm_lookup gm_lookup;
	struct pto_cores cores;
	struct pto_core_wait core_wait;
	struct pto_core_wait_any core_wait_any;
	struct pto_raise_irq raise_irq;
	struct pto_irq_wait irq_wait;
	struct pto_hws_config hws_config;
	struct pto_gm_quota gm_quota;
	struct pto_gm_pin gm_pin;
	struct pto_gm_unpin gm_unpin;
};

/**
 * struct pto_ucmd - one ioctl call, as its handler sees it.
 * @pf: the file it was issued on.
 * @cmd: the argument, copied in with copy_struct_from_user() (validated
 *	size, zero-extended). The handler reads it and writes its output
 *	fields into it; the dispatcher copies it back if the command has
 *	output and the handler returned 0.
 */
struct pto_ucmd {
	struct pto_file *pf;
	union pto_ucmd_buffer cmd;
};

static inline struct pto_core_regs *pto_core_regs(struct pto_dev *pdev,
						  u32 core)
{
	return pdev->regs + PTO_REGS_CORE_OFFSET +
	       core * sizeof(struct pto_core_regs);
}

static inline const char *pto_core_type(const struct pto_dev *pdev, u32 core)
{
	return core < pdev->nr_aic ? "AIC" : "AIV";
}

static inline const char *pto_profile_name(u32 profile)
{
	return profile == PTO_PROFILE_A5 ? "a5" : "a2a3";
}

/*
 * An administrator's use of @pf: the caller and whoever opened the file,
 * which a user may have handed to a privileged process, both have
 * CAP_SYS_ADMIN.
 */
static inline bool pto_file_admin(const struct pto_file *pf)
{
	return pf->opener_admin && capable(CAP_SYS_ADMIN);
}

/* The role of @pf. */
static inline int pto_file_role(struct pto_file *pf)
{
	/*
	 * Pairs with smp_store_release() in pto_set_role(): a caller that
	 * sees a role also sees what was set up with it.
	 */
	return smp_load_acquire(&pf->role);
}

/**
 * struct pto_core_counts - a consistent view of a device's occupancy.
 * @online: cores attached to a live executor.
 * @dead: cores whose executor closed the device without detaching.
 * @aicpu: a file holds the AICPU role.
 */
struct pto_core_counts {
	u32 online;
	u32 dead;
	bool aicpu;
};

/* pto_file.c */
extern const struct file_operations pto_fops;

/* pto_gm.c */
int pto_gm_init(struct pto_dev *pdev);
void pto_gm_fini(struct pto_dev *pdev);
int pto_gm_alloc(struct pto_ucmd *ucmd);
int pto_gm_free(struct pto_ucmd *ucmd);
int pto_gm_lookup(struct pto_ucmd *ucmd);
int pto_gm_quota(struct pto_ucmd *ucmd);
int pto_gm_pin(struct pto_ucmd *ucmd);
int pto_gm_unpin(struct pto_ucmd *ucmd);
void pto_gm_release_file(struct pto_file *pf);
int pto_mmap(struct file *file, struct vm_area_struct *vma);

/* pto_core.c */
void pto_regs_init(struct pto_dev *pdev);
int pto_set_role(struct pto_ucmd *ucmd);
int pto_core_attach(struct pto_ucmd *ucmd);
int pto_core_detach(struct pto_ucmd *ucmd);
int pto_core_wait(struct pto_ucmd *ucmd);
int pto_core_wait_any(struct pto_ucmd *ucmd);
int pto_kick(struct pto_ucmd *ucmd);
int pto_raise_irq_ioctl(struct pto_ucmd *ucmd);
int pto_irq_wait(struct pto_ucmd *ucmd);
int pto_hws_config(struct pto_ucmd *ucmd);
int pto_hws_read(struct pto_dev *pdev, struct pto_hws_cfg *cfg, u32 *seq);
void pto_hws_unfinished(struct pto_dev *pdev);
int pto_hws_write(struct pto_dev *pdev, const struct pto_hws_cfg *cfg,
		  u32 *seq);
int pto_hws_update(struct pto_dev *pdev, struct pto_hws_cfg *cfg,
		   int (*edit)(struct pto_hws_cfg *cfg, void *priv),
		   void *priv, u32 *seq);
void pto_release_roles(struct pto_file *pf);
void pto_core_counts(struct pto_dev *pdev, struct pto_core_counts *n);
void pto_raise_irq(struct pto_dev *pdev, u32 core);
bool pto_irq_pending(struct pto_dev *pdev, const u32 *seen, u32 *count);

/* pto_main.c */
struct pto_dev *pto_dev_lookup(u32 index);

/* pto_netlink.c */
int pto_nl_init(void);
void pto_nl_exit(void);
void pto_nl_notify_cores(struct pto_dev *pdev, u8 cmd,
			 const unsigned long *cores, pid_t pid);
void pto_nl_notify_aicpu_gone(struct pto_dev *pdev, pid_t pid);
void pto_nl_notify_hws(struct pto_dev *pdev, pid_t pid, u32 seq);

/* pto_sysfs.c */
extern const struct attribute_group *pto_groups[];

/*
 * The device's counters, in the order sysfs "counters" lists them: the
 * one list that file and netlink's counters nest are both built from.
 */
enum pto_counter {
	PTO_CNT_GM_BYTES,
	PTO_CNT_GM_BUFFERS,
	PTO_CNT_ALLOCS,
	PTO_CNT_FREES,
	PTO_CNT_MAPS,
	PTO_CNT_PARKS,
	PTO_CNT_KICKS,
	PTO_CNT_WAKES,
	PTO_CNT_IRQS,
	PTO_CNT_FAULTS,
	PTO_CNT_PINS,
	PTO_CNT_CORES_ONLINE,
	PTO_CNT_CORES_DEAD,
	PTO_CNT_AICPU,
	PTO_NR_COUNTERS
};

/**
 * struct pto_counter_def - how one counter is shown.
 * @name: its line in sysfs "counters".
 * @attr: its attribute in the netlink nest (enum pto_counters_attrs).
 */
struct pto_counter_def {
	const char *name;
	u16 attr;
};

extern const struct pto_counter_def pto_counter_defs[PTO_NR_COUNTERS];
void pto_counters_read(struct pto_dev *pdev, u64 val[PTO_NR_COUNTERS]);

/* pto_debugfs.c */
void pto_debugfs_init(void);
void pto_debugfs_exit(void);
void pto_debugfs_add(struct pto_dev *pdev);
void pto_debugfs_remove(struct pto_dev *pdev);

#endif /* _PTO_DEV_H */
