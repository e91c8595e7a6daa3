// SPDX-License-Identifier: MIT
/*
 * pto2_util.h - the runtime core's helpers: flow-control spin pacing and
 * logging. Time, registers and cpu_relax come from the private layer.
 */
#ifndef PTO2_UTIL_H
#define PTO2_UTIL_H

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <pto-private/compiler.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "pto2_types.h"

/*
 * Spin pacing for flow-control waits. Spins are counted one per check of
 * the watermark (as the BLOCKED warnings and the deadlock limit count
 * them), but after the first PTO2_SPIN_FAST_SPINS the waiter sleeps so
 * that spin n happens no earlier than PTO2_SPIN_PACE_NS * n after the slow
 * phase began: the PTO2_FLOW_CONTROL_SPIN_LIMIT (100,000) spins without
 * progress take about one second instead of burning a core, and a sleep
 * that overshoots is absorbed by later spins that then only yield.
 */
#define PTO2_SPIN_FAST_SPINS	64
#define PTO2_SPIN_PACE_NS	10000ULL

struct pto2_spinner {
	uint32_t n;		/* spins since the last progress */
	int64_t t0;		/* start of the slow phase */
};

static inline void pto2_spinner_reset(struct pto2_spinner *s)
{
	s->n = 0;
}

static inline void pto2_spin_pause(struct pto2_spinner *s)
{
	int64_t now, target;

	s->n++;
	if (s->n < PTO2_SPIN_FAST_SPINS) {
		cpu_relax();
		return;
	}
	now = pto_mono_ns();
	if (s->n == PTO2_SPIN_FAST_SPINS)
		s->t0 = now;
	target = s->t0 + (int64_t)((uint64_t)(s->n - PTO2_SPIN_FAST_SPINS) *
				   PTO2_SPIN_PACE_NS);
	if (now < target) {
		int64_t d = target - now;

		pto_sleep_ns(d > 1000000 ? 1000000ULL : (uint64_t)d);
	} else {
		sched_yield();
	}
}

/* Logger: a callback and its context; a NULL fn logs to stderr. */
struct pto2_logger {
	pto2_log_fn fn;
	void *ctx;
};

__attribute__((format(printf, 3, 4)))
void pto2_logf(const struct pto2_logger *lg, int level, const char *fmt, ...);

#endif /* PTO2_UTIL_H */
