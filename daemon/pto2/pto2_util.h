// SPDX-License-Identifier: MIT
/*
 * pto2_util.h - small helpers: spinning, time, logging, register access
 */
#ifndef PTO2_UTIL_H
#define PTO2_UTIL_H

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "pto2_types.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static inline uint64_t pto2_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void pto2_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	nanosleep(&ts, NULL);
}

/*
 * Spin pacing for flow-control waits. Spins are counted as in the seed
 * (one per check of the watermark), but after the first
 * PTO2_SPIN_FAST_SPINS the waiter sleeps so that spin n happens no earlier
 * than PTO2_SPIN_PACE_NS * n after the slow phase began: the
 * PTO2_FLOW_CONTROL_SPIN_LIMIT (100,000) spins without progress take about
 * one second instead of burning a core, and a sleep that overshoots is
 * absorbed by later spins that then only yield.
 */
#define PTO2_SPIN_FAST_SPINS	64
#define PTO2_SPIN_PACE_NS	10000ULL

struct pto2_spinner {
	uint32_t n;		/* spins since the last progress */
	uint64_t t0;		/* start of the slow phase */
};

static inline void pto2_spinner_reset(struct pto2_spinner *s)
{
	s->n = 0;
}

static inline void pto2_spin_pause(struct pto2_spinner *s)
{
	uint64_t now, target;

	s->n++;
	if (s->n < PTO2_SPIN_FAST_SPINS) {
		cpu_relax();
		return;
	}
	now = pto2_now_ns();
	if (s->n == PTO2_SPIN_FAST_SPINS)
		s->t0 = now;
	target = s->t0 + (uint64_t)(s->n - PTO2_SPIN_FAST_SPINS) *
		 PTO2_SPIN_PACE_NS;
	if (now < target) {
		uint64_t d = target - now;

		pto2_sleep_ns(d > 1000000ULL ? 1000000ULL : d);
	} else {
		sched_yield();
	}
}

/* Logger: a callback and its context; NULL fn logs to stderr. */
struct pto2_logger {
	pto2_log_fn fn;
	void *ctx;
};

void pto2_log_default(void *ctx, int level, const char *msg);

__attribute__((format(printf, 3, 4)))
static inline void pto2_logf(const struct pto2_logger *lg, int level,
			     const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (lg && lg->fn)
		lg->fn(lg->ctx, level, buf);
	else
		pto2_log_default(NULL, level, buf);
}

/*
 * Register file access. struct pto_core_regs has plain __u32 fields (uapi);
 * both sides access them only through these atomics.
 */
#define PTO2_REG(p)	((_Atomic uint32_t *)(void *)(p))

static inline uint32_t reg_load_acquire(const volatile uint32_t *p)
{
	return atomic_load_explicit(PTO2_REG(p), memory_order_acquire);
}

static inline void reg_store_release(volatile uint32_t *p, uint32_t v)
{
	atomic_store_explicit(PTO2_REG(p), v, memory_order_release);
}

static inline uint32_t reg_load_relaxed(const volatile uint32_t *p)
{
	return atomic_load_explicit(PTO2_REG(p), memory_order_relaxed);
}

static inline void reg_store_relaxed(volatile uint32_t *p, uint32_t v)
{
	atomic_store_explicit(PTO2_REG(p), v, memory_order_relaxed);
}

static inline uint32_t pto2_next_pow2_u32(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1U << 31))
		p <<= 1;
	return p;
}

#endif /* PTO2_UTIL_H */
