/* SPDX-License-Identifier: MIT */
/*
 * ptolat.h - what ptolat's BPF program (ptolat.bpf.c) and its user side
 * (ptolat.c) share: the phases and the histogram layout.
 */
#ifndef PTOLAT_H
#define PTOLAT_H

#define PTOLAT_SLOTS	32	/* log2 buckets of microseconds */
#define PTOLAT_CORES	256	/* per-core state (PTO_MAX_CORES fits) */
#define PTOLAT_TASKS	65536	/* tasks followed at once */

/* The phases of a task (Documentation/tracing.rst), and the device's. */
enum ptolat_phase {
	PTOLAT_SUBMIT_READY,	/* submitted -> producers done */
	PTOLAT_READY_DISPATCH,	/* ready -> on a core (queueing) */
	PTOLAT_DISPATCH_START,	/* dispatched -> the executor started it */
	PTOLAT_RUN,		/* the kernel ran */
	PTOLAT_END_OBSERVED,	/* ended -> the engine saw it */
	PTOLAT_KICK_WAKE,	/* pto.ko: kick of a parked core -> its wake */
	PTOLAT_NR_PHASES,
};

struct ptolat_hist {
	unsigned int slots[PTOLAT_SLOTS];
};

#endif /* PTOLAT_H */
