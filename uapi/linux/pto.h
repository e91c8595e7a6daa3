/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pto.h - userspace ABI of the emulated PTO2 device (/dev/ptoN)
 *
 * One header for the kernel module, the daemon, the library and the tests.
 *
 * Conventions (see Documentation/uapi.rst):
 *
 * - Every ioctl argument but PTO_IOC_ABI_VERSION's starts with a __u32
 *   @size that userspace sets to sizeof() of the structure it was compiled
 *   with. The kernel accepts any size from the first ABI version's size up
 *   to PAGE_SIZE; a larger struct is accepted only if the bytes the kernel
 *   does not know are zero (-E2BIG otherwise), a smaller one is
 *   zero-extended. Output fields are written back up to the smaller of the
 *   two sizes.
 * - PTO_IOC_ABI_VERSION is the exception: an _IOR() whose argument is a
 *   bare __u32, with no size, that the kernel writes PTO_ABI_VERSION into,
 *   for a file of any role.
 * - @flags fields and every field named pad or reserved must be zero
 *   (-EINVAL otherwise), so that they can be given a meaning later.
 * - User pointers travel as __u64, timeouts as absolute __s64 nanoseconds on
 *   CLOCK_MONOTONIC, so that a restarted call does not wait longer.
 * - In: set by userspace, read by the kernel. Out: written by the kernel.
 */
#ifndef _UAPI_LINUX_PTO_H
#define _UAPI_LINUX_PTO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * ABI version, (major << 16) | minor: what PTO_IOC_ABI_VERSION returns, and
 * the @abi_version of struct pto_info and struct pto_regs_info. The module
 * reports the version it was built with; no ioctl takes a version from
 * userspace, so it is up to a program to compare the major number with
 * the PTO_ABI_MAJOR it was built with.
 */
#define PTO_ABI_MAJOR		3
#define PTO_ABI_MINOR		6
#define PTO_ABI_VERSION		((PTO_ABI_MAJOR << 16) | PTO_ABI_MINOR)

/* Limits of the device model. */
#define PTO_MAX_AIC		85	/* module parameter nr_aic upper bound */
#define PTO_AIV_PER_AIC		2	/* each block = 1 AIC + 2 AIV */
#define PTO_MAX_CORES		256	/* size of core bitmaps */
#define PTO_CORE_MASK_WORDS	(PTO_MAX_CORES / 64)
/*
 * No core: the @core of the AICPU's own PTO_IOC_RAISE_IRQ, and the core the
 * irq tracepoint reports for an interrupt the device raised itself.
 */
#define PTO_CORE_NONE		0xffffffffU
#define PTO_HWS_NR_CTX		4	/* HWS contexts (usage mask sets) */
#define PTO_HWS_SCALE_RANKS	20	/* one rank per 5% of remaining tasks */
#define PTO_SYS_CNT_FREQ	50000000ULL	/* system counter, 50 MHz */

/* Device address of GM offset 0. Device address 0 is never valid. */
#define PTO_GM_DEV_BASE		0x100000000ULL

/* mmap offsets (bytes; pass as the offset argument of mmap()). */
#define PTO_MMAP_REGS		0x0ULL		/* register file */
#define PTO_MMAP_GM		0x100000000ULL	/* GM offset 0 */

/**
 * enum pto_profile - target profile of the device (module parameter).
 * @PTO_PROFILE_A2A3: Ascend 910B/910C.
 * @PTO_PROFILE_A5: Ascend 950 PR/DT.
 */
enum pto_profile {
	PTO_PROFILE_A2A3 = 1,
	PTO_PROFILE_A5 = 2,
};

/*
 * Capability bits of the profile (pto_info.caps, pto_regs_info.caps).
 * A2A3 has TILE_HW, CUBE_HW, BLOCK_COMM, ATOMIC_STORE and TEXTRACT_COMPACT;
 * A5 has all of them.
 */
#define PTO_CAP_TILE_HW			(1ULL << 0)  /* pto.t* in hardware */
#define PTO_CAP_VEC_NATIVE		(1ULL << 1)  /* pto.v* native */
#define PTO_CAP_CUBE_HW			(1ULL << 2)  /* hardware matmul */
#define PTO_CAP_MX_FORMAT		(1ULL << 3)  /* int8 -> int32 acc */
#define PTO_CAP_FRACTAL_HW		(1ULL << 4)  /* NZ/ZN/FR/RN in hw */
#define PTO_CAP_FP8			(1ULL << 5)  /* e4m3 / e5m2 */
#define PTO_CAP_VEC_UNALIGNED_STORE	(1ULL << 6)  /* vstu / vstus */
#define PTO_CAP_VEC_ALIGN_STATE		(1ULL << 7)  /* vstu / vstas */
#define PTO_CAP_HIFLOAT8_FP4		(1ULL << 8)  /* hifloat8_t, float4_e* */
#define PTO_CAP_BLOCK_COMM		(1ULL << 9)  /* block collectives */
#define PTO_CAP_ATOMIC_STORE		(1ULL << 10) /* atomic store variants */
#define PTO_CAP_PAIR_SELECT		(1ULL << 11) /* vselr, vselrv2 */
#define PTO_CAP_TEXTRACT_COMPACT	(1ULL << 12) /* textract compact modes */
#define PTO_CAP_VLANE_REDUCE		(1ULL << 13) /* VLane group reduction */

#define PTO_CAPS_A2A3	(PTO_CAP_TILE_HW | PTO_CAP_CUBE_HW | \
			 PTO_CAP_BLOCK_COMM | PTO_CAP_ATOMIC_STORE | \
			 PTO_CAP_TEXTRACT_COMPACT)
#define PTO_CAPS_A5	((PTO_CAP_VLANE_REDUCE << 1) - 1)

/*
 * Blocks (1 AIC + PTO_AIV_PER_AIC AIV each) of a device of the profile
 * unless nr_aic says otherwise: A2A3 has PTO2's PLATFORM_MAX_BLOCKDIM, 24;
 * the hardware model counts about three times the AICores for A5 (~75
 * against ~25): 72.
 */
#define PTO_PROFILE_A2A3_BLOCKS	24
#define PTO_PROFILE_A5_BLOCKS	72

/* ------------------------------------------------------------------------
 * Register file (mmap at PTO_MMAP_REGS, PTO_REGS_SIZE bytes)
 *
 *   0x0000  struct pto_regs_info   device info, system counter, AICPU irq
 *   0x1000  struct pto_regs_hws    HWS configuration (this page) and
 *                                  status and doorbells (the next)
 *   0x3000  struct pto_core_regs   [nr_cores], 64 bytes each
 *
 * The AICPU maps all of it writable. An executor maps it read-only, and
 * writable only from PTO_REGS_EXEC_WRITE_OFFSET (the HWS status page and
 * the cores): it cannot change the configuration the AICPU validated.
 *
 * Core numbering: cores 0 .. nr_aic-1 are AIC; AIV cores follow, the two
 * AIV of block b being nr_aic + 2b and nr_aic + 2b + 1.
 * ------------------------------------------------------------------------
 */
#define PTO_REGS_INFO_OFFSET	0x0000
#define PTO_REGS_HWS_OFFSET	0x1000
#define PTO_REGS_HWS_STATUS_OFFSET	0x2000
#define PTO_REGS_CORE_OFFSET	0x3000
#define PTO_REGS_EXEC_WRITE_OFFSET	PTO_REGS_HWS_STATUS_OFFSET
#define PTO_REGS_SIZE		(PTO_REGS_CORE_OFFSET + PTO_MAX_CORES * 64)

#define PTO_REGS_MAGIC		0x324f5450	/* "PTO2" */

/**
 * struct pto_regs_info - device information page, read-only to userspace
 * except @aicpu_irq_en.
 * @magic: PTO_REGS_MAGIC.
 * @abi_version: PTO_ABI_VERSION.
 * @profile: enum pto_profile.
 * @nr_aic: number of AIC cores.
 * @nr_aiv: number of AIV cores (2 * @nr_aic).
 * @nr_cores: @nr_aic + @nr_aiv.
 * @dev_index: N of /dev/ptoN.
 * @pad0: zero.
 * @gm_size: GM size in bytes.
 * @gm_dev_base: device address of GM offset 0 (PTO_GM_DEV_BASE).
 * @caps: PTO_CAP_* bits of the profile.
 * @sys_cnt_freq: system counter frequency in Hz (PTO_SYS_CNT_FREQ).
 * @sys_cnt_epoch_ns: CLOCK_MONOTONIC time (ns) at which the system counter
 *	read zero. The counter is (now_ns - @sys_cnt_epoch_ns) / 20, so
 *	userspace reads it exactly from clock_gettime() with no system call.
 * @sys_cnt: system counter value, stored by the device at every park, kick,
 *	wake and irq (a coarse copy for tools that only read memory).
 * @irq_count: number of AICPU interrupts raised since load (uio-style
 *	event count; read() on the AICPU file returns it).
 * @aicpu_irq_en: written by the AICPU: non-zero while it may sleep and
 *	wants executors to raise an interrupt after writing COND FIN.
 * @aicpu_attached: 1 while an AICPU file is open.
 * @pad1: zero.
 */
struct pto_regs_info {
	__u32 magic;
	__u32 abi_version;
	__u32 profile;
	__u32 nr_aic;
	__u32 nr_aiv;
	__u32 nr_cores;
	__u32 dev_index;
	__u32 pad0;
	__u64 gm_size;
	__u64 gm_dev_base;
	__u64 caps;
	__u64 sys_cnt_freq;
	__s64 sys_cnt_epoch_ns;
	__u64 sys_cnt;
	__u32 irq_count;
	__u32 aicpu_irq_en;
	__u32 aicpu_attached;
	__u32 pad1;
};

/* HWS_POLICY values: which scheduler places ready tasks on cores */
#define PTO_HWS_POLICY_HWS	0	/* the HWS: pools, priorities, shapes */
#define PTO_HWS_POLICY_PTO2	1	/* PTO2's: ready order, first free core */

/* HWS_WORK_MODE values */
#define PTO_HWS_MODE_HW		0	/* HWS launches cores itself */
#define PTO_HWS_MODE_FW		1	/* HWS reports decisions to firmware */

/* EARLY_LAUNCH_MODE values: where pre-idle comes from */
#define PTO_HWS_EL_SIP_REPORT	0	/* cores report pre-complete */
#define PTO_HWS_EL_HWS_PREDICT	1	/* HWS predicts from estimates */

/* PROMOTE_RULE bits */
#define PTO_HWS_PROMOTE_THRESHOLD	(1U << 0) /* fail_times >= threshold */
#define PTO_HWS_PROMOTE_ON_CP		(1U << 1) /* critical-path kernel */
#define PTO_HWS_PROMOTE_TOP_1		(1U << 2) /* top-1 needing whole VG */
#define PTO_HWS_PROMOTE_SKIPPED_TOP	(1U << 3) /* top was passed over */
#define PTO_HWS_PROMOTE_ALL		0xfU

/* thread_num classes sharing one SIP usage mask */
#define PTO_HWS_USAGE_1SIP	0	/* thread_num 1 */
#define PTO_HWS_USAGE_2SIP	1	/* thread_num 2 */
#define PTO_HWS_USAGE_3_4SIP	2	/* thread_num 3, 4 */
#define PTO_HWS_USAGE_6_8SIP	3	/* thread_num 6, 8 */
#define PTO_HWS_USAGE_9_16SIP	4	/* thread_num 9, 12, 16 */
#define PTO_HWS_USAGE_CLASSES	5

/* Largest scale_ratio entry (1/100 units). */
#define PTO_HWS_SCALE_MAX	100000U

/*
 * The other limits PTO_IOC_HWS_CONFIG enforces: cluster_sip_num is
 * PTO_HWS_CLUSTER_SIPS (one block, 1 AIC + 2 AIV) and nothing else;
 * promote_threshold lies in 1 .. PTO_HWS_PROMOTE_THRESHOLD_MAX;
 * launch_delay and pre_idle_offset in 0 .. PTO_HWS_TIME_MAX_NS (1 s).
 */
#define PTO_HWS_CLUSTER_SIPS		(1 + PTO_AIV_PER_AIC)
#define PTO_HWS_PROMOTE_THRESHOLD_MAX	255
#define PTO_HWS_TIME_MAX_NS		1000000000U

/*
 * Defaults at load: promotion by fail count at PTO_HWS_PROMOTE_THRESHOLD_DEF
 * failures; scale_ratio rank i (remaining tasks from (100 - 5i)% down)
 * scales by i + 1, PTO_HWS_SCALE_DEF(i) in 1/100 units.
 */
#define PTO_HWS_PROMOTE_THRESHOLD_DEF	4
#define PTO_HWS_SCALE_DEF(rank)		(100U * ((rank) + 1))

/**
 * struct pto_hws_cfg - HWS configuration registers (FW -> HWS).
 *
 * Names follow the HWS design's register list. Every SIP of the design is
 * one core of the device; every core mask below is a bitmap of device
 * cores (bit i of word i / 64: core i). The AICPU (the firmware of the
 * emulated device) writes them through its mapping or, validated, through
 * PTO_IOC_HWS_CONFIG; everyone else reads them with the same ioctl. Times
 * are in nanoseconds. Documentation/hws.rst says what each one controls.
 *
 * @policy: HWS_POLICY, PTO_HWS_POLICY_*.
 * @work_mode: HWS_WORK_MODE, PTO_HWS_MODE_*.
 * @cluster_sip_num: CLUSTER_SIP_NUM, cores per cluster (VG). The device's
 *	cluster is one block (1 AIC + 2 AIV): 3 is the only value accepted.
 * @second_rsc_sch: ENABLE_SECOND_RSC_SCH: no second resource is emulated;
 *	must be 0.
 * @early_launch_en: ENABLE_EARLY_LAUNCH_SIP, 1 = pre-idle cores may be
 *	launched on (the launch waits until the core finishes).
 * @early_launch_mode: EARLY_LAUNCH_MODE, PTO_HWS_EL_*.
 * @backfill_margin: RSVD_SIP_BACKFILL_MARGIN_OFFSET: bit 31 set means
 *	positive, bits 30:0 the magnitude (ns). Backfill onto a reserved
 *	core succeeds when its group's remaining time is at least the
 *	kernel's estimate minus this offset.
 * @fillup_first: SIP_FILLUP_TASK_FIRST, 1 = prefer a task that uses every
 *	ready core it may use over strict priority.
 * @rsvd_first: USE_RSVD_SIP_FIRST, 1 = launch on reserved-but-free cores
 *	first.
 * @promote_rule: PROMOTE_RULE, PTO_HWS_PROMOTE_* bits.
 * @promote_threshold: PROMOTE_THRESHOLD, failures before promotion.
 * @report_en: ENABLE_HWS_REPORT, 1 = in HW mode also report every launch
 *	to the firmware.
 * @launch_delay: LAUNCH_SIP_DELAY (ns) added to a core's estimated
 *	remaining time when a task is launched on it idle.
 * @pre_idle_offset: with PTO_HWS_EL_HWS_PREDICT, a busy core is pre-idle
 *	once its estimated remaining time is at most this (ns).
 * @pad: zero.
 * @scale_ratio: SCALE_RATIO_TABLE_RANK_0..19, in 1/100 units; rank i
 *	covers a remaining-task fraction of (100 - 5i)% down to (95 - 5i)%.
 * @usage_mask: <n>_SIP_USAGE_MASK per context and PTO_HWS_USAGE_* class:
 *	the cores a kernel of that context and thread_num class may use.
 */
struct pto_hws_cfg {
	__u32 policy;
	__u32 work_mode;
	__u32 cluster_sip_num;
	__u32 second_rsc_sch;
	__u32 early_launch_en;
	__u32 early_launch_mode;
	__u32 backfill_margin;
	__u32 fillup_first;
	__u32 rsvd_first;
	__u32 promote_rule;
	__u32 promote_threshold;
	__u32 report_en;
	__u32 launch_delay;
	__u32 pre_idle_offset;
	__u32 pad[2];
	__u32 scale_ratio[PTO_HWS_SCALE_RANKS];
	__u64 usage_mask[PTO_HWS_NR_CTX][PTO_HWS_USAGE_CLASSES]
			[PTO_CORE_MASK_WORDS];
};

/**
 * struct pto_regs_hws - HWS register block in the register file.
 * @cfg: configuration registers.
 * @cfg_seq: CFG_SEQ, a sequence count over @cfg. A writer takes it from
 *	even to odd with a compare-and-swap (the device and the AICPU's
 *	mapping may both write), writes @cfg, then makes it even again with
 *	a release store; a reader copies @cfg between two equal, even,
 *	acquire readings. An AICPU that goes while it is odd leaves the
 *	defaults (kmod.rst) under the next even count. Every change
 *	of @cfg changes it: the HWS looks at it before each decision and
 *	applies a new configuration from that decision on.
 * @pad: zero.
 * @cfg_page_end: the rest of the configuration page; the fields below
 *	are in the status page, at PTO_REGS_HWS_STATUS_OFFSET.
 * @sip_report_complete: SIP_REPORT_COMPLETE; a core that finishes ORs its
 *	bit in atomically, the HWS engine exchanges each word with zero.
 * @sip_report_pre_complete: SIP_REPORT_PRE_COMPLETE, same protocol, for
 *	cores close to finishing.
 * @sip_idle_status: status: idle cores (no task, none waiting).
 * @sip_pre_idle_status: status: pre-idle cores (close to finishing).
 * @reserved_sip_mask: status: cores reserved by promoted tasks.
 * @sip_launch_pending: SIP_LAUNCH_PENDING: the AICPU ORs a core's bit in
 *	(atomically, after storing its DATA_MAIN_BASE) when it dispatches to
 *	it; an executor thread that takes the core clears the bit. A hint
 *	that lets a few executor threads find the cores with work without
 *	reading every core's registers; DATA_MAIN_BASE stays the truth.
 *	Cleared for a core when it is attached.
 * @sip_remain_exec_time: status: estimated remaining time per core, in
 *	microseconds (saturating).
 */
struct pto_regs_hws {
	struct pto_hws_cfg cfg;
	__u32 cfg_seq;
	__u32 pad;
	__u8 cfg_page_end[PTO_REGS_HWS_STATUS_OFFSET - PTO_REGS_HWS_OFFSET -
			  sizeof(struct pto_hws_cfg) - 8];
	__u64 sip_report_complete[PTO_CORE_MASK_WORDS];
	__u64 sip_report_pre_complete[PTO_CORE_MASK_WORDS];
	__u64 sip_idle_status[PTO_CORE_MASK_WORDS];
	__u64 sip_pre_idle_status[PTO_CORE_MASK_WORDS];
	__u64 reserved_sip_mask[PTO_CORE_MASK_WORDS];
	__u64 sip_launch_pending[PTO_CORE_MASK_WORDS];
	__u32 sip_remain_exec_time[PTO_MAX_CORES];
};

/*
 * DATA_MAIN_BASE: 0 = nothing dispatched, id + 1 = dispatch @id, where @id
 * (31 bits, COND's id field) names one dispatch: the AICPU gives each
 * dispatch a new id, the payload says which task it is.
 */
#define PTO_DMB_IDLE		0U
#define PTO_DMB_EXIT		0xffffffffU	/* EXIT_SIGNAL: shut down */

/* COND: bit 31 state (0 ACK, 1 FIN), bits 30:0 task id. */
#define PTO_COND_FIN		(1U << 31)
#define PTO_COND_ID_MASK	0x7fffffffU
#define PTO_COND_IDLE		0xffffffffU	/* FIN of reserved id */
#define PTO_COND_ACK(id)	((__u32)(id) & PTO_COND_ID_MASK)
#define PTO_COND_DONE(id)	(PTO_COND_FIN | PTO_COND_ACK(id))
#define PTO_TASK_ID_MAX		0x7ffffffeU	/* 0x7fffffff is reserved */

/**
 * enum pto_core_state - device-maintained state of a core.
 * @PTO_CORE_OFFLINE: no executor attached.
 * @PTO_CORE_ONLINE: attached to a live executor.
 * @PTO_CORE_DEAD: its executor closed the device without detaching (e.g.
 *	crashed); stays so until an executor attaches it again.
 */
enum pto_core_state {
	PTO_CORE_OFFLINE = 0,
	PTO_CORE_ONLINE = 1,
	PTO_CORE_DEAD = 2,
};

/**
 * struct pto_core_regs - per-core doorbell block, 64 bytes.
 * @data_main_base: DATA_MAIN_BASE, AICPU -> core: dispatch id + 1 to
 *	dispatch, PTO_DMB_EXIT to shut down.
 * @cond: COND, core -> AICPU: PTO_COND_ACK(id) when a dispatch starts,
 *	PTO_COND_DONE(id) when it finishes, PTO_COND_IDLE after attach.
 * @parked: written by the core: non-zero while it sleeps (or is about to
 *	sleep) in PTO_IOC_CORE_WAIT. The AICPU kicks only parked cores.
 * @irq_en: written by the AICPU: non-zero if the core should raise the
 *	AICPU interrupt (PTO_IOC_RAISE_IRQ) after writing FIN.
 * @state: enum pto_core_state, written by the device only.
 * @pad: zero.
 * @ts_dispatch: system counter when the AICPU dispatched (AICPU writes).
 * @ts_start: system counter when the kernel started (core writes).
 * @ts_end: system counter when the kernel finished (core writes).
 * @park_count: number of PTO_IOC_CORE_WAIT calls on the core (device).
 * @kick_count: number of kicks the core received (device).
 * @task: Handshake.task, AICPU -> core: device address of the dispatch
 *	payload the core runs, written before DATA_MAIN_BASE (0 = none).
 */
struct pto_core_regs {
	__u32 data_main_base;
	__u32 cond;
	__u32 parked;
	__u32 irq_en;
	__u32 state;
	__u32 pad;
	__u64 ts_dispatch;
	__u64 ts_start;
	__u64 ts_end;
	__u32 park_count;
	__u32 kick_count;
	__u64 task;
};

/* ------------------------------------------------------------------------
 * ioctls. Every argument but PTO_IOC_ABI_VERSION's is size-first; see the
 * conventions above.
 * ------------------------------------------------------------------------
 */
#define PTO_IOCTL_MAGIC		0xB9	/* free in ioctl-number.rst */

/**
 * enum pto_role - what an open file of /dev/ptoN is, set once.
 * @PTO_ROLE_NONE: fresh file: only PTO_IOC_ABI_VERSION, PTO_IOC_GET_INFO,
 *	PTO_IOC_SET_ROLE, PTO_IOC_HWS_CONFIG (read) and PTO_IOC_GM_LOOKUP.
 * @PTO_ROLE_CLIENT: allocates GM buffers and maps only its own.
 * @PTO_ROLE_AICPU: exclusive per device; maps all of GM and the register
 *	file, kicks cores, waits for interrupts, allocates GM, pins clients'
 *	buffers. Needs CAP_SYS_ADMIN.
 * @PTO_ROLE_EXECUTOR: attaches cores, maps GM and the register file (read
 *	only below PTO_REGS_EXEC_WRITE_OFFSET), parks in the device, raises
 *	the AICPU interrupt. Needs CAP_SYS_ADMIN; the file can then be
 *	handed to an unprivileged process.
 */
enum pto_role {
	PTO_ROLE_NONE = 0,
	PTO_ROLE_CLIENT = 1,
	PTO_ROLE_AICPU = 2,
	PTO_ROLE_EXECUTOR = 3,
};

/**
 * struct pto_info - PTO_IOC_GET_INFO argument.
 * @size: In: sizeof(struct pto_info).
 * @flags: In: zero.
 * @abi_version: Out: PTO_ABI_VERSION.
 * @profile: Out: enum pto_profile.
 * @nr_aic: Out: AIC cores.
 * @nr_aiv: Out: AIV cores.
 * @nr_cores: Out: all cores.
 * @dev_index: Out: N of /dev/ptoN.
 * @gm_size: Out: GM size in bytes.
 * @gm_dev_base: Out: device address of GM offset 0.
 * @gm_free: Out: GM bytes not allocated.
 * @caps: Out: PTO_CAP_* bits.
 * @regs_size: Out: bytes of the register file mapping.
 * @regs_mmap_offset: Out: PTO_MMAP_REGS.
 * @gm_mmap_offset: Out: PTO_MMAP_GM.
 * @sys_cnt_freq: Out: PTO_SYS_CNT_FREQ.
 */
struct pto_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 profile;
	__u32 nr_aic;
	__u32 nr_aiv;
	__u32 nr_cores;
	__u32 dev_index;
	__u64 gm_size;
	__u64 gm_dev_base;
	__u64 gm_free;
	__u64 caps;
	__u64 regs_size;
	__u64 regs_mmap_offset;
	__u64 gm_mmap_offset;
	__u64 sys_cnt_freq;
};

/**
 * struct pto_set_role - PTO_IOC_SET_ROLE argument.
 * @size: In: sizeof(struct pto_set_role).
 * @flags: In: zero.
 * @role: In: enum pto_role other than PTO_ROLE_NONE. -EBUSY if the file
 *	already has a role or if another file holds the AICPU role; -EPERM
 *	for the AICPU and EXECUTOR roles unless both the caller and the
 *	opener of the file have CAP_SYS_ADMIN.
 * @pad: In: zero.
 */
struct pto_set_role {
	__u32 size;
	__u32 flags;
	__u32 role;
	__u32 pad;
};

/* PTO_IOC_GM_ALLOC flags */
#define PTO_GM_ALLOC_CHARGE	(1U << 0)	/* AICPU: charge it to @uid */

/**
 * struct pto_gm_alloc - PTO_IOC_GM_ALLOC argument (client, AICPU).
 * @size: In: sizeof(struct pto_gm_alloc).
 * @flags: In: PTO_GM_ALLOC_* bits. A client's buffer is charged to the
 *	user that opened its file; the AICPU's is charged to nobody unless
 *	it passes PTO_GM_ALLOC_CHARGE (a client that does gets -EPERM):
 *	then to @uid, against that user's quota (struct pto_gm_quota), as
 *	if that user had allocated it (since ABI 3.4).
 * @len: In: bytes, 1 .. GM size (-EINVAL otherwise); rounded up to a
 *	page. -ENOMEM if no free range is large enough; -EDQUOT if it is
 *	charged beyond its user's quota. The charge is the rounded length,
 *	or @align if that is more.
 * @align: In: 0 (page) or a power of two from 4096 to 1 GiB.
 * @handle: Out: non-zero buffer handle, private to this file.
 * @uid: In: with PTO_GM_ALLOC_CHARGE, a uid of the caller's user
 *	namespace (-EINVAL if it has none); zero otherwise. Out: unchanged.
 *	Before ABI 3.4 this field was padding, zero both ways.
 * @dev_addr: Out: device address of the buffer's first byte.
 * @mmap_offset: Out: mmap() offset of the buffer.
 */
struct pto_gm_alloc {
	__u32 size;
	__u32 flags;
	__u64 len;
	__u64 align;
	__u32 handle;
	__u32 uid;
	__u64 dev_addr;
	__u64 mmap_offset;
};

/**
 * struct pto_gm_free - PTO_IOC_GM_FREE argument.
 * @size: In: sizeof(struct pto_gm_free).
 * @flags: In: zero.
 * @handle: In: a handle of this file (-ENOENT otherwise). The memory goes
 *	back to GM when the last mapping of it and the last pin
 *	(PTO_IOC_GM_PIN) go.
 * @pad: In: zero.
 */
struct pto_gm_free {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

/**
 * struct pto_gm_lookup - PTO_IOC_GM_LOOKUP argument.
 *
 * Asks whether [@dev_addr, @dev_addr + @len) lies inside one buffer that
 * the file the ioctl is issued on owns. The daemon issues it on the file a
 * client handed it, to check every address the client names.
 *
 * @size: In: sizeof(struct pto_gm_lookup).
 * @flags: In: zero.
 * @dev_addr: In: device address.
 * @len: In: bytes, non-zero.
 * @handle: Out: the buffer's handle (-ENOENT if none holds the range).
 * @pad: In: zero; Out: zero.
 * @buf_dev_addr: Out: the buffer's first device address.
 * @buf_len: Out: the buffer's length.
 */
struct pto_gm_lookup {
	__u32 size;
	__u32 flags;
	__u64 dev_addr;
	__u64 len;
	__u32 handle;
	__u32 pad;
	__u64 buf_dev_addr;
	__u64 buf_len;
};

/**
 * struct pto_cores - PTO_IOC_CORE_ATTACH, PTO_IOC_CORE_DETACH and
 * PTO_IOC_KICK argument.
 * @size: In: sizeof(struct pto_cores).
 * @flags: In: zero.
 * @mask: In: one bit per core; bits at or beyond nr_cores must be zero.
 *	Attach (executor): -EBUSY if any core is attached to another file;
 *	all or nothing. Detach: only cores this file attached. Kick (AICPU):
 *	wakes those cores if they are parked.
 */
struct pto_cores {
	__u32 size;
	__u32 flags;
	__u64 mask[PTO_CORE_MASK_WORDS];
};

/**
 * struct pto_core_wait - PTO_IOC_CORE_WAIT argument (executor): park.
 *
 * Sleeps until the core's DATA_MAIN_BASE differs from @last_dmb, the core
 * is kicked, or @timeout_ns passes. The caller sets the core's @parked
 * register before the call and rechecks DATA_MAIN_BASE, so that a kick is
 * never lost; the device clears @parked on return.
 *
 * @size: In: sizeof(struct pto_core_wait).
 * @flags: In: zero.
 * @core: In: a core this file attached.
 * @last_dmb: In: the DATA_MAIN_BASE value the caller has seen.
 * @timeout_ns: In: absolute CLOCK_MONOTONIC deadline, or 0 for none.
 *	-ETIMEDOUT when it passes. -ENODEV if the core is detached (or its
 *	executor dies) while waiting; -ERESTARTSYS/-EINTR on a signal.
 * @dmb: Out: DATA_MAIN_BASE on return.
 * @reason: Out: PTO_WAKE_* why the call returned.
 */
struct pto_core_wait {
	__u32 size;
	__u32 flags;
	__u32 core;
	__u32 last_dmb;
	__s64 timeout_ns;
	__u32 dmb;
	__u32 reason;
};

#define PTO_WAKE_DMB		1	/* DATA_MAIN_BASE changed */
#define PTO_WAKE_KICK		2	/* kicked by the AICPU */

/**
 * struct pto_core_wait_any - PTO_IOC_CORE_WAIT_ANY argument (executor):
 * park on a set of cores.
 *
 * Sleeps until one of the cores of @mask is kicked, or @timeout_ns
 * passes, and returns that core. A kick wakes one caller whose @mask has
 * the core: several threads of an executor can wait on its cores at once
 * and each kick is taken by exactly one of them; a kick latched while no
 * thread waits is taken by the next call. The caller sets the @parked
 * register of every core of @mask and rechecks their DATA_MAIN_BASE
 * first, so that a kick is never lost; the device clears @parked of the
 * core it returns. The kick that wakes the last thread of the file asleep
 * in this call clears @parked of every core of that thread's @mask (a
 * file that has called PTO_IOC_CORE_WAIT keeps its flags); a call that
 * finds a flag of its @mask clear returns 0 with that core at once, and
 * the caller sets the flags again, rechecks and calls again.
 *
 * @size: In: sizeof(struct pto_core_wait_any).
 * @flags: In: zero.
 * @timeout_ns: In: absolute CLOCK_MONOTONIC deadline, or 0 for none.
 *	-ETIMEDOUT when it passes; -ENODEV if a core of @mask is detached
 *	(or its executor dies) while waiting (its state register says
 *	which); -ERESTARTSYS/-EINTR on a signal.
 * @core: Out: the core kicked.
 * @dmb: Out: that core's DATA_MAIN_BASE.
 * @mask: In: cores this file attached (bit i of word i / 64: core i), at
 *	least one (-EINVAL otherwise).
 */
struct pto_core_wait_any {
	__u32 size;
	__u32 flags;
	__s64 timeout_ns;
	__u32 core;
	__u32 dmb;
	__u64 mask[PTO_CORE_MASK_WORDS];
};

/**
 * struct pto_raise_irq - PTO_IOC_RAISE_IRQ argument (executor, AICPU).
 *
 * Raises the AICPU interrupt: the count goes up by one and every
 * PTO_IOC_IRQ_WAIT, read() and poll() waiter wakes. An executor raises it
 * for a core it finished; the AICPU raises it to wake its own threads out
 * of PTO_IOC_IRQ_WAIT (new work for a scheduler that sleeps there), since
 * a wake-up carried by the count cannot be lost between a thread's last
 * look and its sleep.
 *
 * @size: In: sizeof(struct pto_raise_irq).
 * @flags: In: zero.
 * @core: In: executor: a core this file attached; AICPU: PTO_CORE_NONE.
 *	Recorded by the tracepoint.
 * @pad: In: zero.
 */
struct pto_raise_irq {
	__u32 size;
	__u32 flags;
	__u32 core;
	__u32 pad;
};

/**
 * struct pto_irq_wait - PTO_IOC_IRQ_WAIT argument (AICPU).
 *
 * Sleeps until the device's interrupt count differs from @count or
 * @timeout_ns passes. poll() on the AICPU file reports POLLIN the same way
 * against the count last returned by read() or this ioctl.
 *
 * @size: In: sizeof(struct pto_irq_wait).
 * @flags: In: zero.
 * @count: In: the count the caller has seen. Out: the current count.
 * @pad: zero.
 * @timeout_ns: In: absolute CLOCK_MONOTONIC deadline, 0 for none.
 */
struct pto_irq_wait {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 pad;
	__s64 timeout_ns;
};

/**
 * struct pto_gm_pin - PTO_IOC_GM_PIN argument (AICPU): keep a client's
 * buffer.
 *
 * The AICPU names a range by device address on the file a client handed
 * it; the device checks that [@dev_addr, @dev_addr + @len) lies inside
 * one buffer of that file and takes a reference on the buffer for the
 * AICPU file, as a mapping does. While the pin exists, neither the
 * client's PTO_IOC_GM_FREE nor the close of its file returns the
 * buffer's memory to GM: no other allocation can be given it. The pin
 * goes with PTO_IOC_GM_UNPIN or the close of the AICPU file.
 *
 * @size: In: sizeof(struct pto_gm_pin).
 * @flags: In: zero.
 * @fd: In: a file descriptor, in the caller's process, of a file of the
 *	same device with the CLIENT role. -EBADF if it is not an open file
 *	of a pto device, -EXDEV if it is one of another device, -EINVAL if
 *	its role is not CLIENT.
 * @pin: Out: non-zero pin id, private to this file.
 * @dev_addr: In: device address.
 * @len: In: bytes, non-zero (-EINVAL otherwise, or if the range wraps).
 *	-ENOENT if no buffer of the client's file holds the whole range.
 * @buf_dev_addr: Out: the pinned buffer's first device address.
 * @buf_len: Out: the pinned buffer's length.
 */
struct pto_gm_pin {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 pin;
	__u64 dev_addr;
	__u64 len;
	__u64 buf_dev_addr;
	__u64 buf_len;
};

/**
 * struct pto_gm_unpin - PTO_IOC_GM_UNPIN argument (AICPU).
 * @size: In: sizeof(struct pto_gm_unpin).
 * @flags: In: zero.
 * @pin: In: a pin id of this file (-ENOENT otherwise). The buffer's
 *	memory goes back to GM if nothing else holds it.
 * @pad: In: zero.
 */
struct pto_gm_unpin {
	__u32 size;
	__u32 flags;
	__u32 pin;
	__u32 pad;
};

/* PTO_IOC_HWS_CONFIG flags */
#define PTO_HWS_CONFIG_SET	(1U << 0)	/* write @cfg (AICPU, admin) */

/**
 * struct pto_hws_config - PTO_IOC_HWS_CONFIG argument.
 * @size: In: sizeof(struct pto_hws_config).
 * @flags: In: 0 to read, PTO_HWS_CONFIG_SET to validate and write.
 * @cfg: In/Out: the HWS configuration registers; out: the values in force.
 *
 * -EAGAIN if the AICPU's own write through its mapping (an odd @cfg_seq of
 * struct pto_regs_hws) did not end while the device tried: nothing was
 * read or written.
 */
struct pto_hws_config {
	__u32 size;
	__u32 flags;
	struct pto_hws_cfg cfg;
};

/* PTO_IOC_GM_QUOTA flags */
#define PTO_GM_QUOTA_SET	(1U << 0)	/* write @bytes (else read) */
#define PTO_GM_QUOTA_UID	(1U << 1)	/* @uid's own quota */
#define PTO_GM_QUOTA_CLEAR	(1U << 2)	/* with SET | UID: drop it */

/* Users with a quota of their own at a time, per device. */
#define PTO_GM_QUOTA_MAX_UIDS	1024

/**
 * struct pto_gm_quota - PTO_IOC_GM_QUOTA argument (AICPU): GM per user.
 *
 * The device charges every buffer a CLIENT file allocates to the user
 * that opened the file (its fsuid at open()), from GM_ALLOC until the
 * buffer's last reference goes (GM_FREE or close() of the file, and
 * munmap() of the last mapping of it). A GM_ALLOC that would take the
 * user's charge beyond its quota fails with -EDQUOT. A user's quota is
 * its own if the AICPU gave it one, else the default; 0 is unlimited.
 * The default and every user's own quota start at 0. They stay in force
 * after the AICPU that set them releases the role (since ABI 3.5; before,
 * they returned to 0), until the next AICPU sets a quota: its first call
 * with PTO_GM_QUOTA_SET drops every user's own quota, then does what it
 * asks, so that its quotas are its own. Buffers of the AICPU role are not
 * charged.
 *
 * @size: In: sizeof(struct pto_gm_quota).
 * @flags: In: PTO_GM_QUOTA_* bits. Without PTO_GM_QUOTA_SET the call
 *	reads. Without PTO_GM_QUOTA_UID it concerns the default quota;
 *	with it, the quota of @uid. PTO_GM_QUOTA_CLEAR (with SET and UID,
 *	@bytes 0) drops @uid's own quota so that the default applies to it
 *	again. -ENOSPC when PTO_GM_QUOTA_MAX_UIDS users have a quota of
 *	their own and @uid is not one of them.
 * @uid: In: with PTO_GM_QUOTA_UID, a uid of the caller's user namespace
 *	(-EINVAL if it maps to none); zero otherwise.
 * @pad: In: zero; Out: zero.
 * @bytes: In, with PTO_GM_QUOTA_SET: the quota in bytes, 0 = unlimited;
 *	zero otherwise (-EINVAL). Out: the quota in force (of @uid with PTO_GM_QUOTA_UID, else the
 *	default). Lowering a quota below what a user holds frees nothing;
 *	its next allocations fail until it is below the quota again.
 * @used: Out: bytes charged to @uid with PTO_GM_QUOTA_UID, else to all
 *	users together.
 */
struct pto_gm_quota {
	__u32 size;
	__u32 flags;
	__u32 uid;
	__u32 pad;
	__u64 bytes;
	__u64 used;
};

/* __u32 argument, no size: PTO_ABI_VERSION is written to it (any role). */
#define PTO_IOC_ABI_VERSION	_IOR(PTO_IOCTL_MAGIC, 0x00, __u32)
#define PTO_IOC_GET_INFO	_IO(PTO_IOCTL_MAGIC, 0x01)
#define PTO_IOC_SET_ROLE	_IO(PTO_IOCTL_MAGIC, 0x02)
#define PTO_IOC_GM_ALLOC	_IO(PTO_IOCTL_MAGIC, 0x03)
#define PTO_IOC_GM_FREE		_IO(PTO_IOCTL_MAGIC, 0x04)
#define PTO_IOC_GM_LOOKUP	_IO(PTO_IOCTL_MAGIC, 0x05)
#define PTO_IOC_CORE_ATTACH	_IO(PTO_IOCTL_MAGIC, 0x06)
#define PTO_IOC_CORE_DETACH	_IO(PTO_IOCTL_MAGIC, 0x07)
#define PTO_IOC_CORE_WAIT	_IO(PTO_IOCTL_MAGIC, 0x08)
#define PTO_IOC_KICK		_IO(PTO_IOCTL_MAGIC, 0x09)
#define PTO_IOC_RAISE_IRQ	_IO(PTO_IOCTL_MAGIC, 0x0a)
#define PTO_IOC_IRQ_WAIT	_IO(PTO_IOCTL_MAGIC, 0x0b)
#define PTO_IOC_HWS_CONFIG	_IO(PTO_IOCTL_MAGIC, 0x0c)
#define PTO_IOC_CORE_WAIT_ANY	_IO(PTO_IOCTL_MAGIC, 0x0d)
#define PTO_IOC_GM_PIN		_IO(PTO_IOCTL_MAGIC, 0x0e)
#define PTO_IOC_GM_UNPIN	_IO(PTO_IOCTL_MAGIC, 0x0f)
#define PTO_IOC_GM_QUOTA	_IO(PTO_IOCTL_MAGIC, 0x10)

/* ------------------------------------------------------------------------
 * Generic netlink family "pto", specified in
 * Documentation/netlink/specs/pto.yaml (names and values here follow the
 * spec; selftests/pto/pto_nlspec.py checks them). Every message names its
 * device by PTO_A_DEV_INDEX. Multi-byte attributes are in host byte order.
 * ------------------------------------------------------------------------
 */
#define PTO_FAMILY_NAME		"pto"
#define PTO_FAMILY_VERSION	1
#define PTO_MCGRP_EVENTS	"events"

/**
 * enum pto_dev_attrs - attributes of every request, reply and event.
 * @PTO_A_DEV_INDEX: u32, N of /dev/ptoN.
 * @PTO_A_DEV_NAME: string, "ptoN".
 * @PTO_A_DEV_ABI_VERSION: u32, PTO_ABI_VERSION of the module.
 * @PTO_A_DEV_PROFILE: u32, enum pto_profile.
 * @PTO_A_DEV_NR_AIC: u32, AIC cores.
 * @PTO_A_DEV_NR_AIV: u32, AIV cores.
 * @PTO_A_DEV_NR_CORES: u32, all cores.
 * @PTO_A_DEV_GM_SIZE: u64, GM bytes.
 * @PTO_A_DEV_GM_DEV_BASE: u64, device address of GM offset 0.
 * @PTO_A_DEV_GM_FREE: u64, GM bytes not allocated.
 * @PTO_A_DEV_CAPS: u64, PTO_CAP_* bits of the profile.
 * @PTO_A_DEV_SYS_CNT_FREQ: u64, system counter frequency in Hz.
 * @PTO_A_DEV_AICPU_PID: u32, the process that opened the file holding
 *	the AICPU role, as the requester's pid namespace sees it; 0 if
 *	none or not seen there.
 * @PTO_A_DEV_COUNTERS: nest of enum pto_counters_attrs.
 * @PTO_A_DEV_CFG_SEQ: u32, CFG_SEQ of the HWS block (struct pto_regs_hws).
 * @PTO_A_DEV_HWS: nest of enum pto_hws_attrs.
 * @PTO_A_DEV_CORES: binary, a core mask of PTO_CORE_MASK_WORDS __u64.
 * @PTO_A_DEV_PID: u32, the process an event concerns, in the initial
 *	pid namespace.
 * @PTO_A_DEV_PAD: padding of 64-bit attributes.
 * @__PTO_A_DEV_MAX: one past the last attribute.
 * @PTO_A_DEV_MAX: the last attribute.
 */
enum pto_dev_attrs {
	PTO_A_DEV_INDEX = 1,
	PTO_A_DEV_NAME,
	PTO_A_DEV_ABI_VERSION,
	PTO_A_DEV_PROFILE,
	PTO_A_DEV_NR_AIC,
	PTO_A_DEV_NR_AIV,
	PTO_A_DEV_NR_CORES,
	PTO_A_DEV_GM_SIZE,
	PTO_A_DEV_GM_DEV_BASE,
	PTO_A_DEV_GM_FREE,
	PTO_A_DEV_CAPS,
	PTO_A_DEV_SYS_CNT_FREQ,
	PTO_A_DEV_AICPU_PID,
	PTO_A_DEV_COUNTERS,
	PTO_A_DEV_CFG_SEQ,
	PTO_A_DEV_HWS,
	PTO_A_DEV_CORES,
	PTO_A_DEV_PID,
	PTO_A_DEV_PAD,

	__PTO_A_DEV_MAX,
	PTO_A_DEV_MAX = (__PTO_A_DEV_MAX - 1)
};

/**
 * enum pto_counters_attrs - the device counters (sysfs "counters"), u64.
 * @PTO_A_COUNTERS_GM_BYTES_USED: bytes held by buffers not yet freed.
 * @PTO_A_COUNTERS_GM_BUFFERS: buffers not yet freed.
 * @PTO_A_COUNTERS_ALLOCS: successful PTO_IOC_GM_ALLOC calls.
 * @PTO_A_COUNTERS_FREES: buffers back in the pool.
 * @PTO_A_COUNTERS_MAPS: successful mmap() calls.
 * @PTO_A_COUNTERS_PARKS: PTO_IOC_CORE_WAIT(_ANY) calls.
 * @PTO_A_COUNTERS_KICKS: kicks delivered.
 * @PTO_A_COUNTERS_WAKES: PTO_IOC_CORE_WAIT(_ANY) calls that returned 0
 *	for a kick or a moved DATA_MAIN_BASE (not a CORE_WAIT_ANY that
 *	found a parked flag of its set clear).
 * @PTO_A_COUNTERS_IRQS: AICPU interrupts.
 * @PTO_A_COUNTERS_FAULTS: page faults served.
 * @PTO_A_COUNTERS_CORES_ONLINE: cores attached to a live executor.
 * @PTO_A_COUNTERS_CORES_DEAD: cores whose executor closed without detaching.
 * @PTO_A_COUNTERS_AICPU: 1 while a file holds the AICPU role.
 * @PTO_A_COUNTERS_PAD: padding of 64-bit attributes.
 * @PTO_A_COUNTERS_PINS: pins held by AICPU files (PTO_IOC_GM_PIN, not yet
 *	unpinned); since ABI 3.6 (an older module does not send it).
 * @__PTO_A_COUNTERS_MAX: one past the last attribute.
 * @PTO_A_COUNTERS_MAX: the last attribute.
 */
enum pto_counters_attrs {
	PTO_A_COUNTERS_GM_BYTES_USED = 1,
	PTO_A_COUNTERS_GM_BUFFERS,
	PTO_A_COUNTERS_ALLOCS,
	PTO_A_COUNTERS_FREES,
	PTO_A_COUNTERS_MAPS,
	PTO_A_COUNTERS_PARKS,
	PTO_A_COUNTERS_KICKS,
	PTO_A_COUNTERS_WAKES,
	PTO_A_COUNTERS_IRQS,
	PTO_A_COUNTERS_FAULTS,
	PTO_A_COUNTERS_CORES_ONLINE,
	PTO_A_COUNTERS_CORES_DEAD,
	PTO_A_COUNTERS_AICPU,
	PTO_A_COUNTERS_PAD,
	PTO_A_COUNTERS_PINS,

	__PTO_A_COUNTERS_MAX,
	PTO_A_COUNTERS_MAX = (__PTO_A_COUNTERS_MAX - 1)
};

/**
 * enum pto_hws_attrs - the HWS configuration registers, the fields of
 *	struct pto_hws_cfg (u32 unless said otherwise).
 * @PTO_A_HWS_POLICY: @policy.
 * @PTO_A_HWS_WORK_MODE: @work_mode.
 * @PTO_A_HWS_CLUSTER_SIP_NUM: @cluster_sip_num.
 * @PTO_A_HWS_SECOND_RSC_SCH: @second_rsc_sch.
 * @PTO_A_HWS_EARLY_LAUNCH_EN: @early_launch_en.
 * @PTO_A_HWS_EARLY_LAUNCH_MODE: @early_launch_mode.
 * @PTO_A_HWS_BACKFILL_MARGIN: @backfill_margin.
 * @PTO_A_HWS_FILLUP_FIRST: @fillup_first.
 * @PTO_A_HWS_RSVD_FIRST: @rsvd_first.
 * @PTO_A_HWS_PROMOTE_RULE: @promote_rule.
 * @PTO_A_HWS_PROMOTE_THRESHOLD: @promote_threshold.
 * @PTO_A_HWS_REPORT_EN: @report_en.
 * @PTO_A_HWS_LAUNCH_DELAY: @launch_delay.
 * @PTO_A_HWS_PRE_IDLE_OFFSET: @pre_idle_offset.
 * @PTO_A_HWS_SCALE_RATIO: binary, @scale_ratio, PTO_HWS_SCALE_RANKS __u32.
 * @PTO_A_HWS_USAGE: nest of enum pto_usage_attrs, one per usage mask,
 *	repeated.
 * @__PTO_A_HWS_MAX: one past the last attribute.
 * @PTO_A_HWS_MAX: the last attribute.
 */
enum pto_hws_attrs {
	PTO_A_HWS_POLICY = 1,
	PTO_A_HWS_WORK_MODE,
	PTO_A_HWS_CLUSTER_SIP_NUM,
	PTO_A_HWS_SECOND_RSC_SCH,
	PTO_A_HWS_EARLY_LAUNCH_EN,
	PTO_A_HWS_EARLY_LAUNCH_MODE,
	PTO_A_HWS_BACKFILL_MARGIN,
	PTO_A_HWS_FILLUP_FIRST,
	PTO_A_HWS_RSVD_FIRST,
	PTO_A_HWS_PROMOTE_RULE,
	PTO_A_HWS_PROMOTE_THRESHOLD,
	PTO_A_HWS_REPORT_EN,
	PTO_A_HWS_LAUNCH_DELAY,
	PTO_A_HWS_PRE_IDLE_OFFSET,
	PTO_A_HWS_SCALE_RATIO,
	PTO_A_HWS_USAGE,

	__PTO_A_HWS_MAX,
	PTO_A_HWS_MAX = (__PTO_A_HWS_MAX - 1)
};

/**
 * enum pto_usage_attrs - one usage mask, @usage_mask[ctx][class] of
 *	struct pto_hws_cfg.
 * @PTO_A_USAGE_CTX: u32, the HWS context, below PTO_HWS_NR_CTX.
 * @PTO_A_USAGE_CLASS: u32, PTO_HWS_USAGE_*.
 * @PTO_A_USAGE_MASK: binary, a core mask of PTO_CORE_MASK_WORDS __u64.
 * @__PTO_A_USAGE_MAX: one past the last attribute.
 * @PTO_A_USAGE_MAX: the last attribute.
 */
enum pto_usage_attrs {
	PTO_A_USAGE_CTX = 1,
	PTO_A_USAGE_CLASS,
	PTO_A_USAGE_MASK,

	__PTO_A_USAGE_MAX,
	PTO_A_USAGE_MAX = (__PTO_A_USAGE_MAX - 1)
};

/**
 * enum pto_cmd - commands and events of the family.
 * @PTO_CMD_DEV_GET: device information (do: one device; dump: all).
 * @PTO_CMD_COUNTERS_GET: device counters (do: one device; dump: all).
 * @PTO_CMD_HWS_GET: HWS configuration registers of a device.
 * @PTO_CMD_HWS_SET: change HWS registers; GENL_ADMIN_PERM, and
 *	CAP_SYS_ADMIN as for PTO_IOC_HWS_CONFIG.
 * @PTO_CMD_CORE_FAULT: event: cores became DEAD (their executor died).
 * @PTO_CMD_EXEC_ATTACH: event: an executor attached cores.
 * @PTO_CMD_EXEC_GONE: event: an executor closed the device.
 * @PTO_CMD_AICPU_GONE: event: the AICPU role was released.
 * @PTO_CMD_HWS_CHANGED: event: the HWS configuration was written.
 * @__PTO_CMD_MAX: one past the last command.
 * @PTO_CMD_MAX: the last command.
 */
enum pto_cmd {
	PTO_CMD_DEV_GET = 1,
	PTO_CMD_COUNTERS_GET,
	PTO_CMD_HWS_GET,
	PTO_CMD_HWS_SET,
	PTO_CMD_CORE_FAULT,
	PTO_CMD_EXEC_ATTACH,
	PTO_CMD_EXEC_GONE,
	PTO_CMD_AICPU_GONE,
	PTO_CMD_HWS_CHANGED,

	__PTO_CMD_MAX,
	PTO_CMD_MAX = (__PTO_CMD_MAX - 1)
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_LINUX_PTO_H */
