// SPDX-License-Identifier: MIT
/*
 * pto2_ring.c - task ring, heap ring, dep-list pool (see pto2_ring.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "pto2_ring.h"

/* ---- Flow-control waits ------------------------------------------------ */

static uint64_t flow_completions(const struct pto2_flow *f)
{
	return f->completions ?
	       atomic_load_explicit(f->completions, memory_order_relaxed) : 0;
}

void pto2_flow_wait_init(const struct pto2_flow *f, struct pto2_flow_wait *w,
			 uint64_t mark)
{
	if (f->on_wait)
		f->on_wait(f->on_wait_arg);
	pto2_spinner_reset(&w->sp);
	w->mark = mark;
	w->completions = flow_completions(f);
	w->spins = 0;
}

int pto2_flow_wait_step(const struct pto2_flow *f, struct pto2_flow_wait *w,
			uint64_t mark)
{
	uint64_t c = flow_completions(f);
	int abort_err;

	if (f->abort) {
		abort_err = atomic_load_explicit(f->abort, memory_order_acquire);
		if (abort_err)
			return abort_err;
	}
	if (mark != w->mark || c != w->completions) {
		/* progress: the watermark moved or a task completed */
		w->mark = mark;
		w->completions = c;
		w->spins = 0;
		pto2_spinner_reset(&w->sp);
	}
	pto2_spin_pause(&w->sp);
	w->spins++;
	if (w->spins >= f->spin_limit &&
	    (!f->running ||
	     atomic_load_explicit(f->running, memory_order_acquire) == 0))
		return 2;
	if (f->warn_interval && w->spins % f->warn_interval == 0)
		return 1;
	return 0;
}

/* ---- Task ring --------------------------------------------------------- */

void pto2_task_ring_init(struct pto2_task_ring *r, PTO2TaskDescriptor *desc,
			 uint32_t window_size, _Atomic int32_t *last_alive_ptr)
{
	r->descriptors = desc;
	r->window_size = window_size;
	r->current_index = 0;
	r->last_alive_ptr = last_alive_ptr;
}

bool pto2_task_ring_has_space(const struct pto2_task_ring *r)
{
	int32_t la = atomic_load_explicit(r->last_alive_ptr,
					  memory_order_acquire);

	return (uint32_t)(r->current_index - la) < r->window_size - 1;
}

int pto2_task_ring_alloc(struct pto2_task_ring *r, const struct pto2_flow *f,
			 int32_t *task_id)
{
	struct pto2_flow_wait w;
	int32_t la, active;
	int ret;

	if (unlikely(r->current_index >= PTO2_FANIN_PENDING - 1 ||
		     (uint32_t)r->current_index >= 0x7ffffffeU)) {
		snprintf(f->errmsg, f->errlen,
			 "Task id space exhausted (%d tasks in one run)",
			 r->current_index);
		return -EOVERFLOW;
	}
	la = atomic_load_explicit(r->last_alive_ptr, memory_order_acquire);
	active = r->current_index - la;
	if (likely((uint32_t)active < r->window_size - 1))
		goto out;

	pto2_flow_wait_init(f, &w, (uint64_t)(uint32_t)la);
	for (;;) {
		la = atomic_load_explicit(r->last_alive_ptr,
					  memory_order_acquire);
		active = r->current_index - la;
		if ((uint32_t)active < r->window_size - 1)
			break;
		ret = pto2_flow_wait_step(f, &w, (uint64_t)(uint32_t)la);
		if (ret == 1) {
			pto2_logf(f->log, PTO2_LOG_WARN,
				  "[TaskRing] BLOCKED (Flow Control): current=%d, last_alive=%d, active=%d/%u (%.1f%%), spins=%u",
				  r->current_index, la, active, r->window_size,
				  100.0 * active / r->window_size, w.spins);
		} else if (ret == 2) {
			uint32_t rec = pto_next_pow2_u32(2U * (uint32_t)active);

			if (rec < 2 * r->window_size)
				rec = 2 * r->window_size;
			snprintf(f->errmsg, f->errlen,
				 "FATAL: Flow Control Deadlock Detected!\n"
				 "Task Ring is FULL and no progress after %u spins.\n"
				 "  - Active tasks: %d\n"
				 "  - Window size: %u\n"
				 "Root Cause:\n"
				 "  Tasks cannot transition to CONSUMED state because fanout_count\n"
				 "  includes 1 for the owning scope, and scope_end() requires the\n"
				 "  orchestrator to continue — creating a circular dependency.\n"
				 "Solution:\n"
				 "  Increase PTO2_RING_TASK_WINDOW above the number of tasks in the\n"
				 "  largest PTO2_SCOPE.\n"
				 "  Recommended: %u (at least 2x current active tasks)",
				 w.spins, active, r->window_size, rec);
			return -EDEADLK;
		} else if (ret < 0) {
			return ret;
		}
	}
out:
	*task_id = r->current_index++;
	return 0;
}

/* ---- Heap ring --------------------------------------------------------- */

void pto2_heap_ring_init(struct pto2_heap_ring *r, uint64_t base, uint64_t size,
			 _Atomic uint64_t *top_ptr, _Atomic uint64_t *tail_ptr)
{
	r->base = base;
	r->size = size;
	r->top = 0;
	r->skip_from = r->skip_to = 0;
	r->top_ptr = top_ptr;
	r->tail_ptr = tail_ptr;
}

/* Start position for @size bytes at @top: skip the tail end if it straddles. */
static inline uint64_t heap_start(const struct pto2_heap_ring *r, uint64_t size)
{
	uint64_t off = r->top % r->size;

	if (off + size > r->size)
		return r->top + (r->size - off);
	return r->top;
}

/*
 * Whether [@start, @start + @size) is free with the tail at @tail: it
 * ends within one ring of where the live bytes begin. Skipped bytes are
 * not live: those of the last skip once the tail reached them
 * (pto2_heap_ring_live_from()), and those this request skips
 * ([top, start)) when nothing is live at all. Counted as live, they made
 * a request wait for ever for a tail that cannot pass the top, with the
 * heap larger than every scope's outputs.
 */
static inline bool heap_fits(const struct pto2_heap_ring *r, uint64_t start,
			     uint64_t size, uint64_t tail)
{
	uint64_t live = pto2_heap_ring_live_from(r, tail);

	if (live == r->top)
		live = start;
	return start + size - live <= r->size;
}

int pto2_heap_ring_alloc(struct pto2_heap_ring *r, const struct pto2_flow *f,
			 uint64_t size, uint64_t *dev_addr, uint64_t *pos_end)
{
	struct pto2_flow_wait w;
	uint64_t tail, start;
	int ret;

	if (size == 0 || size > r->size) {
		snprintf(f->errmsg, f->errlen,
			 "[HeapRing] request of %" PRIu64 " bytes can never fit in a heap of %" PRIu64
			 " bytes (PTO2_RING_HEAP)", size, r->size);
		return -ENOMEM;
	}
	start = heap_start(r, size);
	tail = atomic_load_explicit(r->tail_ptr, memory_order_acquire);
	if (likely(heap_fits(r, start, size, tail)))
		goto out;

	pto2_flow_wait_init(f, &w, tail);
	for (;;) {
		tail = atomic_load_explicit(r->tail_ptr, memory_order_acquire);
		if (heap_fits(r, start, size, tail))
			break;
		ret = pto2_flow_wait_step(f, &w, tail);
		if (ret == 1) {
			pto2_logf(f->log, PTO2_LOG_WARN,
				  "[HeapRing] BLOCKED: requesting %" PRIu64 " bytes, available=%" PRIu64
				  ", top=%" PRIu64 ", tail=%" PRIu64 ", spins=%u",
				  size, pto2_heap_ring_available(r, tail),
				  r->top, tail, w.spins);
		} else if (ret == 2) {
			snprintf(f->errmsg, f->errlen,
				 "FATAL: Flow Control Deadlock Detected!\n"
				 "Heap Ring is FULL and no progress after %u spins.\n"
				 "  - Requested: %" PRIu64 " bytes\n"
				 "  - Available: %" PRIu64 " bytes\n"
				 "  - Heap size: %" PRIu64 " bytes\n"
				 "Root Cause:\n"
				 "  Output buffers are reclaimed only when their tasks reach CONSUMED,\n"
				 "  and fanout_count includes 1 for the owning scope: scope_end()\n"
				 "  requires the orchestrator to continue — creating a circular dependency.\n"
				 "Solution:\n"
				 "  Increase PTO2_RING_HEAP above the output bytes of the largest PTO2_SCOPE.\n"
				 "  Recommended: %" PRIu64 " (at least 2x current heap size)",
				 w.spins, size, pto2_heap_ring_available(r, tail),
				 r->size, 2 * r->size);
			return -EDEADLK;
		} else if (ret < 0) {
			return ret;
		}
	}
out:
	*dev_addr = r->base + start % r->size;
	if (start != r->top) {
		r->skip_from = r->top;
		r->skip_to = start;
	}
	r->top = start + size;
	*pos_end = r->top;
	atomic_store_explicit(r->top_ptr, r->top, memory_order_release);
	return 0;
}

/* ---- Dependency list pool ---------------------------------------------- */

void pto2_dep_pool_init(struct pto2_dep_pool *p, PTO2DepListEntry *entries,
			uint32_t capacity)
{
	p->entries = entries;
	p->capacity = capacity;
	p->top = 0;
	p->pos = 0;
	p->live_pos = 0;
	entries[0].task_id = -1;	/* NULL sentinel */
	entries[0].next_offset = 0;
}
