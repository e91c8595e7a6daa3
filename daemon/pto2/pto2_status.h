/* SPDX-License-Identifier: MIT */
/*
 * pto2_status.h - the HWS status registers (idle, pre-idle and reserved
 * cores, each core's remaining time) as the engine publishes them after
 * its decisions and completions
 *
 * The registers show the HWS at the time of the engine's last publication.
 * Rewriting every core's entry each time cost about 400 ns a decision on
 * a 72-core device; pto2_status_publish() writes what changed since the
 * last publication instead: the mask bits that flipped, and the remaining
 * times of the SIPs that hold work or held it then. The values written
 * are the same. Each mask word is compared with the register and stored
 * if it differs (reserved_sip_mask shares a cache line with
 * SIP_LAUNCH_PENDING, which executor threads poll); the executors may
 * write the page that holds these registers, so each publication also
 * rewrites the times of PTO2_STATUS_SWEEP more SIP positions in turn: a
 * time written by anyone else lasts at most nr_sips / PTO2_STATUS_SWEEP
 * publications, a mask word until the next one.
 * pto2_status_reset() makes the next publication write everything.
 */
#ifndef PTO2_STATUS_H
#define PTO2_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/pto.h>

#include "hws.h"

/* SIP positions whose remaining time every publication rewrites anyway. */
#define PTO2_STATUS_SWEEP	8

/* The status masks, in the order of struct pto2_status's arrays. */
enum { PTO2_ST_IDLE, PTO2_ST_PRE_IDLE, PTO2_ST_RESERVED, PTO2_ST_MASKS };

/**
 * struct pto2_status - what the status registers hold, as last written.
 * @valid: the registers hold @cores, and a zero remaining time for every
 *	core outside @busy; false: the next publication writes everything.
 * @sips: the masks, by SIP.
 * @busy: the SIPs whose remaining time was written non-zero or may be.
 * @cores: the masks, by core (as the registers hold them).
 * @sweep: the SIP position the next sweep starts at.
 */
struct pto2_status {
	bool valid;
	hws_mask sips[PTO2_ST_MASKS];
	hws_mask busy;
	__u64 cores[PTO2_ST_MASKS][PTO_CORE_MASK_WORDS];
	uint32_t sweep;
};

/* Write everything at the next publication. */
void pto2_status_reset(struct pto2_status *s);

/*
 * Publish @h's status at @now into @hw, a device of @nr_cores cores (the
 * cores of @h's layout): the masks (hws_status()) and every core's
 * remaining time in microseconds (hws_sip_remaining(), at most
 * UINT32_MAX).
 */
void pto2_status_publish(struct pto2_status *s, const struct hws *h,
			 struct pto_regs_hws *hw, uint32_t nr_cores,
			 uint64_t now);

#endif /* PTO2_STATUS_H */
