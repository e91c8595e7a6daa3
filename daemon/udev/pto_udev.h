// SPDX-License-Identifier: MIT
/*
 * pto_udev.h - the user-mode device: pto.ko's device in user space
 *
 * For machines that cannot load pto.ko. The device is two memfds that
 * ptod creates and hands on as file descriptors:
 *
 *   registers  [0, PTO_REGS_SIZE): the register file, the uapi layout
 *              (info page, HWS block, per-core blocks), so the engine,
 *              the executor and the tools run on it unchanged;
 *              [PTO_UDEV_SHARED_OFFSET, + 4096): struct pto_udev_shared,
 *              what pto.ko keeps in the kernel and the register file does
 *              not show (latched kicks, core owners, counters). Mapped by
 *              ptod (the AICPU) and the executor only.
 *   GM         gm_size bytes, GM offset 0 at file offset 0. ptod and the
 *              executor map all of it; a client maps its own buffers (it
 *              holds the memfd: see Documentation/user-device.rst for
 *              what that does and does not guarantee).
 *
 * Sleeping and waking are futexes on words of the shared memory, not
 * private to a process (pto-private/futex.h, the shared variants): an
 * executor thread parks on the kick lot (the CORE_WAIT_ANY of pto.ko), the
 * AICPU waits for the completion interrupt on the info page's irq_count,
 * which is the interrupt count itself. GM allocation is ptod's
 * (pto_udev_gm.c); nothing of it is shared.
 *
 * Who calls what: ptod pto_udev_create(), the AICPU ops, the allocator,
 * pto_udev_executor_gone() when its executor dies; pto-aicore
 * pto_udev_open_fds() on the descriptors it inherited and the executor
 * ops. Every function returns 0 or -errno unless it says otherwise.
 */
#ifndef PTO_UDEV_H
#define PTO_UDEV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/pto.h>

#include <pto-private/parklot.h>

#define PTO_UDEV_SHARED_OFFSET	(((PTO_REGS_SIZE) + 4095) & ~4095)
#define PTO_UDEV_REGS_MAP	(PTO_UDEV_SHARED_OFFSET + 4096)
#define PTO_UDEV_MAGIC		0x56445550	/* "PUDV" */
#define PTO_UDEV_VERSION	5

/*
 * Default geometry: the profile's blocks and pto.ko's GM size;
 * PTO_USER_NR_AIC, PTO_USER_GM_MB and PTO_USER_PROFILE in ptod's
 * environment change them (within pto.ko's module parameter ranges).
 */
#define PTO_UDEV_GM_MB_DEFAULT	256
#define PTO_UDEV_GM_MB_MIN	16
#define PTO_UDEV_GM_MB_MAX	4096
#define PTO_UDEV_NR_AIC_MAX	PTO_MAX_AIC	/* as pto.ko's nr_aic */

/**
 * struct pto_udev_shared - device state outside the register file.
 * @magic: PTO_UDEV_MAGIC; @version: PTO_UDEV_VERSION.
 * @lock: process-shared, robust: core ownership (attach, detach, death).
 * @kick: where executor threads park (pto-private/parklot.h): every
 *	kick, detach and executor death bumps its futex word; a kick makes
 *	the system call only for a parked thread no kick has woken yet, so
 *	a burst of kicks before the woken thread runs makes one.
 * @irq_waiters: AICPU threads in pto_udev_irq_wait().
 * @kick_pending: latched kicks, a core bitmap (pto.ko's kick_pending).
 * @owner: per core, the pid of the executor that attached it (0: none).
 * @parks, @kicks, @wakes, @irqs: counters, as pto.ko's sysfs ones.
 * @kick_wakeups: the futex wake-ups kicks made (system calls).
 */
struct pto_udev_shared {
	uint32_t magic;
	uint32_t version;
	pthread_mutex_t lock;
	struct pto_parklot kick;
	_Atomic uint32_t irq_waiters;
	_Atomic uint64_t kick_pending[PTO_CORE_MASK_WORDS];
	_Atomic int32_t owner[PTO_MAX_CORES];
	_Atomic uint64_t parks;
	_Atomic uint64_t kicks;
	_Atomic uint64_t wakes;
	_Atomic uint64_t irqs;
	_Atomic uint64_t kick_wakeups;
};

_Static_assert(sizeof(struct pto_udev_shared) <= 4096,
	       "the shared state is one page");

/**
 * struct pto_udev - a process's view of a user-mode device.
 * @regs_fd, @gm_fd: the memfds.
 * @regs: the register file (its mapping also holds @sh). The executor's
 *	is read-only below PTO_REGS_EXEC_WRITE_OFFSET, as on pto.ko.
 * @info_w: the info page, writable: what pto.ko writes there on an
 *	executor's behalf (the interrupt count, the system counter) this
 *	library writes through it. @regs itself in ptod.
 * @sh: the shared state.
 * @gm: GM, all of it.
 * @info: the device as GET_INFO describes it (gm_free: all of GM).
 */
struct pto_udev {
	int regs_fd;
	int gm_fd;
	void *regs;
	struct pto_regs_info *info_w;
	struct pto_udev_shared *sh;
	void *gm;
	struct pto_info info;
};

/**
 * struct pto_udev_config - what a new device looks like.
 * @profile: enum pto_profile.
 * @nr_aic: AIC cores (blocks); 2 * @nr_aic AIV.
 * @gm_size: GM bytes.
 */
struct pto_udev_config {
	uint32_t profile;
	uint32_t nr_aic;
	uint64_t gm_size;
};

/*
 * The defaults with PTO_USER_NR_AIC, PTO_USER_GM_MB, PTO_USER_PROFILE
 * applied; -EINVAL with the reason in @err if one is invalid.
 */
int pto_udev_config_from_env(struct pto_udev_config *cfg, char *err,
			     size_t errlen);

/* ptod: a new device, registers as pto.ko has them at load, AICPU on. */
int pto_udev_create(const struct pto_udev_config *cfg, struct pto_udev **out);
/*
 * The executor: the device behind inherited @regs_fd and @gm_fd, the
 * register file mapped as pto.ko maps it for an EXECUTOR. -ENODEV if they
 * are not a user-mode device's, -EPROTO if its ABI major version is not
 * PTO_ABI_MAJOR. Takes both descriptors: they are closed on failure, and
 * by pto_udev_destroy().
 */
int pto_udev_open_fds(int regs_fd, int gm_fd, struct pto_udev **out);
/* Unmap and close (the device goes with its last user). */
void pto_udev_destroy(struct pto_udev *u);

/* ---- The AICPU (ptod) ---------------------------------------------------- */

/* Wake core @core if it is online and parked (pto.ko's KICK). */
int pto_udev_kick(struct pto_udev *u, uint32_t core);
uint32_t pto_udev_irq_count(struct pto_udev *u);
/*
 * Sleep until the interrupt count differs from *@count or @deadline_ns
 * (absolute CLOCK_MONOTONIC, 0: none) passes; *@count gets the count.
 * 0, -ETIMEDOUT or -EINTR (IRQ_WAIT).
 */
int pto_udev_irq_wait(struct pto_udev *u, uint32_t *count, int64_t deadline_ns);
/* Raise the interrupt: +1 and wake every waiter (RAISE_IRQ, irq_wake). */
void pto_udev_irq_raise(struct pto_udev *u);
/*
 * The executor @pid is gone: its cores become DEAD (parked cleared,
 * DATA_MAIN_BASE and COND left as they were) and the interrupt is raised,
 * as pto.ko does when an executor's file is released. Returns the number
 * of cores it held.
 */
int pto_udev_executor_gone(struct pto_udev *u, pid_t pid);
/* The AICPU goes: aicpu_attached and aicpu_irq_en 0, online cores kicked. */
void pto_udev_aicpu_release(struct pto_udev *u);

/* ---- The executor (pto-aicore) ---------------------------------------------- */

/*
 * Claim the cores of @mask for executor @pid, all or nothing (-EBUSY if
 * one belongs to another live executor; a dead one's are taken over), and
 * reset them as pto.ko's CORE_ATTACH does.
 */
int pto_udev_attach(struct pto_udev *u, pid_t pid, const uint64_t *mask);
/* Give back cores of @pid (OFFLINE); -EINVAL if one is not @pid's. */
int pto_udev_detach(struct pto_udev *u, pid_t pid, const uint64_t *mask);
/*
 * Park on the cores of @mask (pto.ko's CORE_WAIT_ANY): until one has a
 * kick, which is taken (*@core; its parked flag cleared), -ENODEV if one
 * is no longer @pid's (*@core: which), -ETIMEDOUT, -EINTR.
 */
int pto_udev_park_any(struct pto_udev *u, pid_t pid, const uint64_t *mask,
		      int64_t deadline_ns, uint32_t *core);

/* ---- GM allocation (ptod only: pto_udev_gm.c) ------------------------------- */

struct pto_udev_gm;
struct pto_udev_file;

/* Pins one file may keep (pto.ko: -ENOSPC when its pin ids run out). */
#define PTO_UDEV_MAX_PINS	(1U << 20)
/* Live buffers of one file (pto.ko: -ENOSPC when its handles run out). */
#define PTO_UDEV_MAX_BUFS	65536

/**
 * struct pto_udev_buf - a GM buffer of a file.
 * @handle: non-zero, private to the file.
 * @dev_addr: device address of the first byte.
 * @len: bytes, a whole number of pages.
 */
struct pto_udev_buf {
	uint32_t handle;
	uint64_t dev_addr;
	uint64_t len;
};

/**
 * struct pto_udev_gm_stats - what pto.ko's sysfs counters say of GM.
 * @bytes_used, @buffers: held by buffers now (a buffer whose handle went
 *	while pinned included).
 * @allocs, @frees: buffers allocated, and whose memory went back, since
 *	creation.
 * @pins: pins held now.
 */
struct pto_udev_gm_stats {
	uint64_t bytes_used;
	uint64_t buffers;
	uint64_t allocs;
	uint64_t frees;
	uint64_t pins;
};

/* The allocator of @u's GM (whose memfd it zeroes and frees pages of). */
int pto_udev_gm_create(struct pto_udev *u, struct pto_udev_gm **out);
void pto_udev_gm_destroy(struct pto_udev_gm *gm);
void pto_udev_gm_stats(struct pto_udev_gm *gm, struct pto_udev_gm_stats *st);

/*
 * A file: what owns buffers (a client's device, or the AICPU) and keeps
 * pins (the AICPU).
 */
int pto_udev_file_create(struct pto_udev_gm *gm, struct pto_udev_file **out);
/* Drop every handle and every pin of @f, then free @f. */
void pto_udev_file_release(struct pto_udev_file *f);

/*
 * GM_ALLOC: @len 1 .. GM size rounded up to a page, @align 0 (page) or a
 * power of two from 4 KiB to 1 GiB (-EINVAL otherwise); -ENOMEM if no
 * free range fits, -ENOSPC if @f has too many buffers. Zeroed.
 */
int pto_udev_gm_alloc(struct pto_udev_file *f, uint64_t len, uint64_t align,
		      struct pto_udev_buf *out);
/*
 * GM_FREE: drop @f's handle @handle; -ENOENT if @f has none. The memory
 * goes back to the pool now, or with the buffer's last pin.
 */
int pto_udev_gm_free(struct pto_udev_file *f, uint32_t handle);
/*
 * GM_LOOKUP: the buffer of @f that holds [@dev_addr, @dev_addr + @len);
 * -EINVAL for @len 0 or an overflowing range, -ENOENT if none.
 */
int pto_udev_gm_lookup(struct pto_udev_file *f, uint64_t dev_addr,
		       uint64_t len, struct pto_udev_buf *out);
/*
 * GM_PIN: a reference on the buffer of @f that holds [@dev_addr,
 * @dev_addr + @len), kept by @pinner under pin id *@pin (non-zero, not
 * reused while held) until pto_udev_gm_unpin() or @pinner's release; the
 * buffer in *@out. While pinned, the buffer's memory stays out of the
 * pool whatever @f does (GM_FREE, its release), as pto.ko's pins.
 * -EINVAL for @len 0 or an overflowing range, -EXDEV if the files are of
 * two allocators, -ENOENT if no buffer of @f holds the range, -ENOSPC if
 * @pinner keeps too many pins, -ENOMEM.
 */
int pto_udev_gm_pin(struct pto_udev_file *pinner, struct pto_udev_file *f,
		    uint64_t dev_addr, uint64_t len, uint32_t *pin,
		    struct pto_udev_buf *out);
/* GM_UNPIN: drop pin @pin of @pinner; -ENOENT if it holds none. */
int pto_udev_gm_unpin(struct pto_udev_file *pinner, uint32_t pin);

#endif /* PTO_UDEV_H */
