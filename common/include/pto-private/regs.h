// SPDX-License-Identifier: MIT
/*
 * regs.h - the only way userspace touches the device's register file
 *
 * The register file (uapi/linux/pto.h: info page, HWS block, one 64-byte
 * block per core) is shared memory between the AICPU (ptod), the executors
 * (pto-aicore, the sim device's cores) and the device. The uapi declares
 * plain __u32/__u64 fields; every access from userspace goes through the
 * atomics below, with the memory order the protocol needs:
 *
 *  - DATA_MAIN_BASE, COND, the task register: release stores, acquire
 *    loads (a store publishes what was written before it: the payload
 *    before DATA_MAIN_BASE, the status before COND FIN);
 *  - flags read on a fast path (parked, irq_en) and counters: relaxed,
 *    ordered by an explicit full fence where the protocol says so.
 *
 * The system counter runs at PTO_SYS_CNT_FREQ from the info page's epoch
 * on CLOCK_MONOTONIC; pto_sys_cnt() reads it with no system call, and
 * every timestamp register (ts_dispatch, ts_start, ts_end) holds it.
 */
#ifndef PTO_PRIVATE_REGS_H
#define PTO_PRIVATE_REGS_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>

#include <linux/pto.h>

#include "time.h"

#define PTO_REG32(p)	((_Atomic uint32_t *)(void *)(p))
#define PTO_REG64(p)	((_Atomic uint64_t *)(void *)(p))

static inline uint32_t reg_load_acquire(const volatile __u32 *p)
{
	return atomic_load_explicit(PTO_REG32(p), memory_order_acquire);
}

static inline void reg_store_release(volatile __u32 *p, uint32_t v)
{
	atomic_store_explicit(PTO_REG32(p), v, memory_order_release);
}

static inline uint32_t reg_load_relaxed(const volatile __u32 *p)
{
	return atomic_load_explicit(PTO_REG32(p), memory_order_relaxed);
}

static inline void reg_store_relaxed(volatile __u32 *p, uint32_t v)
{
	atomic_store_explicit(PTO_REG32(p), v, memory_order_relaxed);
}

static inline uint64_t reg64_load_acquire(const volatile __u64 *p)
{
	return atomic_load_explicit(PTO_REG64(p), memory_order_acquire);
}

static inline void reg64_store_release(volatile __u64 *p, uint64_t v)
{
	atomic_store_explicit(PTO_REG64(p), v, memory_order_release);
}

static inline void reg64_store_relaxed(volatile __u64 *p, uint64_t v)
{
	atomic_store_explicit(PTO_REG64(p), v, memory_order_relaxed);
}

/* The info page of register file @regs. */
static inline struct pto_regs_info *pto_regs_info(void *regs)
{
	return (struct pto_regs_info *)(void *)((uint8_t *)regs +
						 PTO_REGS_INFO_OFFSET);
}

/* The HWS block of register file @regs. */
static inline struct pto_regs_hws *pto_regs_hws(void *regs)
{
	return (struct pto_regs_hws *)(void *)((uint8_t *)regs +
						PTO_REGS_HWS_OFFSET);
}

/* The register block of core @core (uapi numbering) of file @regs. */
static inline struct pto_core_regs *pto_regs_core(void *regs, uint32_t core)
{
	return (struct pto_core_regs *)(void *)((uint8_t *)regs +
						 PTO_REGS_CORE_OFFSET) + core;
}

/*
 * The bits of word @w of a core mask (core c at bit c % 64 of word c / 64)
 * that name one of a device's @nr_cores cores: a mask naming a core the
 * device lacks has a bit outside them.
 */
static inline uint64_t pto_cores_in_word(uint32_t nr_cores, uint32_t w)
{
	return nr_cores >= (w + 1) * 64 ? ~0ULL :
	       nr_cores <= w * 64 ? 0 : (1ULL << (nr_cores - w * 64)) - 1;
}

/*
 * SIP_LAUNCH_PENDING of @core (HWS block): the AICPU sets it after storing
 * the core's DATA_MAIN_BASE; an executor thread takes it.
 */
static inline void pto_launch_pending_set(void *regs, uint32_t core)
{
	__u64 *w = &pto_regs_hws(regs)->sip_launch_pending[core / 64];

	atomic_fetch_or_explicit(PTO_REG64(w), 1ULL << (core % 64),
				 memory_order_seq_cst);
}

/*
 * Map the register file of an EXECUTOR file @fd (@size bytes at mmap
 * offset @off): read-only, with the part an executor may write (from
 * PTO_REGS_EXEC_WRITE_OFFSET: the HWS status page, the cores) mapped
 * writable over it, so that one pointer serves both. MAP_FAILED and
 * errno on failure.
 */
static inline void *pto_regs_map_executor(int fd, size_t size, off_t off)
{
	uint8_t *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);
	void *w;
	int e;

	if (p == MAP_FAILED)
		return MAP_FAILED;
	w = mmap(p + PTO_REGS_EXEC_WRITE_OFFSET,
		 size - PTO_REGS_EXEC_WRITE_OFFSET, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, off + PTO_REGS_EXEC_WRITE_OFFSET);
	if (w == MAP_FAILED) {
		e = errno;
		munmap(p, size);
		errno = e;
		return MAP_FAILED;
	}
	return p;
}

/* ---- System counter --------------------------------------------------- */

#define PTO_NS_PER_SYS_CNT	(1000000000ULL / PTO_SYS_CNT_FREQ)
_Static_assert(1000000000ULL % PTO_SYS_CNT_FREQ == 0,
	       "the system counter period must be a whole number of ns");

/* System counter value at CLOCK_MONOTONIC time @ns for epoch @epoch_ns. */
static inline uint64_t pto_sys_cnt_at(int64_t epoch_ns, int64_t ns)
{
	return ns > epoch_ns ? (uint64_t)(ns - epoch_ns) / PTO_NS_PER_SYS_CNT :
			       0;
}

/* CLOCK_MONOTONIC time (ns) of system counter value @cnt. */
static inline int64_t pto_sys_cnt_to_ns(int64_t epoch_ns, uint64_t cnt)
{
	return epoch_ns + (int64_t)(cnt * PTO_NS_PER_SYS_CNT);
}

/* The device's system counter now, read without a system call. */
static inline uint64_t pto_sys_cnt(const struct pto_regs_info *ri)
{
	return pto_sys_cnt_at(ri->sys_cnt_epoch_ns, pto_mono_ns());
}

#endif /* PTO_PRIVATE_REGS_H */
