// SPDX-License-Identifier: MIT
/*
 * probe.h - what the e2e probe kernel (probe_kernel.c) writes for each task
 *
 * A probe task has one OUTPUT tensor, a 32-byte slot of a client buffer,
 * and one scalar, the task's sequence number (non-zero). The kernel writes
 * where it ran (core, block) and when (CLOCK_MONOTONIC ns at its start and
 * end), then @seq with a release store: a client that reads @seq with an
 * acquire load and finds its number sees the rest of the record.
 */
#ifndef PTO_E2E_PROBE_H
#define PTO_E2E_PROBE_H

#include <stdint.h>

struct pto_probe_rec {
	uint32_t seq;
	uint32_t core_id;
	uint32_t block_idx;
	uint32_t sub_block_idx;
	int64_t start_ns;
	int64_t end_ns;
};

_Static_assert(sizeof(struct pto_probe_rec) == 32, "a probe slot is 32 bytes");

#endif /* PTO_E2E_PROBE_H */
