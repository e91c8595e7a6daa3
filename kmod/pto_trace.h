/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of pto.ko (events/pto/ in tracefs)
 *
 * Every event carries the device name ("ptoN") and the tgid of the process
 * concerned ("pid"); none records a kernel pointer.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pto

#if !defined(_PTO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _PTO_TRACE_H

#include <linux/bitmap.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>

#include "pto_dev.h"

/* 6.10 dropped the source argument of __assign_str() (see Kbuild). */
#ifdef PTO_HAVE_ASSIGN_STR_1
#define pto_assign_name(dst, src)	do { (void)(src); __assign_str(dst); } while (0)
#else
#define pto_assign_name(dst, src)	__assign_str(dst, src)
#endif

/* alloc: a buffer was allocated; free: its GM went back to the pool. */
DECLARE_EVENT_CLASS(pto_buf_class,
		    TP_PROTO(const struct pto_buf *buf),
		    TP_ARGS(buf),
		    TP_STRUCT__entry(__string(dev, buf->pdev->name)
				     __field(u32, handle)
				     __field(pid_t, pid)
				     __field(u64, dev_addr)
				     __field(u64, len)),
		    TP_fast_assign(pto_assign_name(dev, buf->pdev->name);
				   __entry->handle = buf->handle;
				   __entry->pid = buf->pid;
				   __entry->dev_addr = buf->dev_addr;
				   __entry->len = buf->len;),
		    TP_printk("%s handle=%u dev_addr=0x%llx len=%llu pid=%d",
			      __get_str(dev), __entry->handle,
			      __entry->dev_addr, __entry->len, __entry->pid)
);

DEFINE_EVENT(pto_buf_class, pto_alloc,
	     TP_PROTO(const struct pto_buf *buf),
	     TP_ARGS(buf)
);

DEFINE_EVENT(pto_buf_class, pto_free,
	     TP_PROTO(const struct pto_buf *buf),
	     TP_ARGS(buf)
);

/* map: a successful mmap() (offset = mmap offset); fault: one page. */
DECLARE_EVENT_CLASS(pto_vm_class,
		    TP_PROTO(const struct pto_dev *pdev, u64 offset, u64 len),
		    TP_ARGS(pdev, offset, len),
		    TP_STRUCT__entry(__string(dev, pdev->name)
				     __field(pid_t, pid)
				     __field(u64, offset)
				     __field(u64, len)),
		    TP_fast_assign(pto_assign_name(dev, pdev->name);
				   __entry->pid = task_tgid_nr(current);
				   __entry->offset = offset;
				   __entry->len = len;),
		    TP_printk("%s offset=0x%llx len=%llu pid=%d",
			      __get_str(dev), __entry->offset, __entry->len,
			      __entry->pid)
);

DEFINE_EVENT(pto_vm_class, pto_map,
	     TP_PROTO(const struct pto_dev *pdev, u64 offset, u64 len),
	     TP_ARGS(pdev, offset, len)
);

DEFINE_EVENT(pto_vm_class, pto_fault,
	     TP_PROTO(const struct pto_dev *pdev, u64 offset, u64 len),
	     TP_ARGS(pdev, offset, len)
);

/*
 * attach / detach: a set of cores changed owner. state is the new enum
 * pto_core_state: detach reports PTO_CORE_DEAD when the executor closed the
 * device without detaching. mask[0] holds cores 0..63.
 */
DECLARE_EVENT_CLASS(pto_cores_class,
		    TP_PROTO(const struct pto_dev *pdev,
			     const unsigned long *cores, u32 state),
		    TP_ARGS(pdev, cores, state),
		    TP_STRUCT__entry(__string(dev, pdev->name)
				     __field(pid_t, pid)
				     __field(u32, nr)
				     __field(u32, state)
				     __array(u64, mask, PTO_CORE_MASK_WORDS)),
		    TP_fast_assign(pto_assign_name(dev, pdev->name);
				   __entry->pid = task_tgid_nr(current);
				   __entry->nr = bitmap_weight(cores,
							       PTO_MAX_CORES);
				   __entry->state = state;
				   bitmap_to_arr64(__entry->mask, cores,
						   PTO_MAX_CORES);),
		    TP_printk("%s mask=%016llx:%016llx:%016llx:%016llx nr=%u state=%u pid=%d",
			      __get_str(dev), __entry->mask[3],
			      __entry->mask[2], __entry->mask[1],
			      __entry->mask[0], __entry->nr, __entry->state,
			      __entry->pid)
);

DEFINE_EVENT(pto_cores_class, pto_attach,
	     TP_PROTO(const struct pto_dev *pdev, const unsigned long *cores,
		      u32 state),
	     TP_ARGS(pdev, cores, state)
);

DEFINE_EVENT(pto_cores_class, pto_detach,
	     TP_PROTO(const struct pto_dev *pdev, const unsigned long *cores,
		      u32 state),
	     TP_ARGS(pdev, cores, state)
);

/*
 * Per-core events. dmb is the core's DATA_MAIN_BASE (park: the caller's
 * last_dmb). val is: park: the core's park_count; wake: PTO_WAKE_* (0 if
 * none); kick: the core's kick_count; irq: the interrupt count. ret is the
 * return value of CORE_WAIT for wake, 0 otherwise. irq reports core
 * 4294967295 (PTO_CORE_NONE) when the device raised it for a dead executor
 * or the AICPU raised it to wake its own threads.
 * The class prints wake's format; the others override it.
 */
DECLARE_EVENT_CLASS(pto_core_class,
		    TP_PROTO(const struct pto_dev *pdev, u32 core, u32 dmb,
			     u32 val, int ret),
		    TP_ARGS(pdev, core, dmb, val, ret),
		    TP_STRUCT__entry(__string(dev, pdev->name)
				     __field(pid_t, pid)
				     __field(u32, core)
				     __field(u32, dmb)
				     __field(u32, val)
				     __field(int, ret)),
		    TP_fast_assign(pto_assign_name(dev, pdev->name);
				   __entry->pid = task_tgid_nr(current);
				   __entry->core = core;
				   __entry->dmb = dmb;
				   __entry->val = val;
				   __entry->ret = ret;),
		    TP_printk("%s core=%u dmb=0x%x reason=%u ret=%d pid=%d",
			      __get_str(dev), __entry->core, __entry->dmb,
			      __entry->val, __entry->ret, __entry->pid)
);

DEFINE_EVENT_PRINT(pto_core_class, pto_park,
		   TP_PROTO(const struct pto_dev *pdev, u32 core, u32 dmb,
			    u32 val, int ret),
		   TP_ARGS(pdev, core, dmb, val, ret),
		   TP_printk("%s core=%u last_dmb=0x%x park_count=%u pid=%d",
			     __get_str(dev), __entry->core, __entry->dmb,
			     __entry->val, __entry->pid)
);

DEFINE_EVENT(pto_core_class, pto_wake,
	     TP_PROTO(const struct pto_dev *pdev, u32 core, u32 dmb, u32 val,
		      int ret),
	     TP_ARGS(pdev, core, dmb, val, ret)
);

DEFINE_EVENT_PRINT(pto_core_class, pto_kick,
		   TP_PROTO(const struct pto_dev *pdev, u32 core, u32 dmb,
			    u32 val, int ret),
		   TP_ARGS(pdev, core, dmb, val, ret),
		   TP_printk("%s core=%u dmb=0x%x kick_count=%u pid=%d",
			     __get_str(dev), __entry->core, __entry->dmb,
			     __entry->val, __entry->pid)
);

DEFINE_EVENT_PRINT(pto_core_class, pto_irq,
		   TP_PROTO(const struct pto_dev *pdev, u32 core, u32 dmb,
			    u32 val, int ret),
		   TP_ARGS(pdev, core, dmb, val, ret),
		   TP_printk("%s core=%u dmb=0x%x irq_count=%u pid=%d",
			     __get_str(dev), __entry->core, __entry->dmb,
			     __entry->val, __entry->pid)
);

#endif /* _PTO_TRACE_H */

/* This part must be outside the header guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pto_trace
#include <trace/define_trace.h>
