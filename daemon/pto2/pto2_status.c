// SPDX-License-Identifier: MIT
/*
 * pto2_status.c - the HWS status registers (see pto2_status.h)
 */
#include <string.h>

#include <pto-private/regs.h>

#include "pto2_status.h"

void pto2_status_reset(struct pto2_status *s)
{
	memset(s, 0, sizeof(*s));
}

/* Core @c of the device, or -1 for a position without one. */
static int core_of(const struct hws_layout *l, uint32_t sip,
		   uint32_t nr_cores)
{
	if (!hws_mask_test(&l->present, sip) || l->core[sip] >= nr_cores)
		return -1;
	return l->core[sip];
}

/* Flip in @cores the bits of the cores of the SIPs in @flip. */
static void flip_cores(const struct hws_layout *l, const hws_mask *flip,
		       uint32_t nr_cores, __u64 *cores)
{
	uint32_t i;

	for (i = 0; i < HWS_MASK_WORDS; i++) {
		uint64_t bits = flip->w[i];

		for (; bits; bits &= bits - 1) {
			int c = core_of(l, i * 64 + (uint32_t)__builtin_ctzll(bits),
					nr_cores);

			if (c >= 0)
				cores[c / 64] ^= 1ULL << (c % 64);
		}
	}
}

static void write_time(const struct hws *h, struct pto_regs_hws *hw,
		       uint32_t sip, int core, uint64_t now)
{
	uint64_t us = hws_sip_remaining(h, sip, now) / 1000;

	reg_store_relaxed(&hw->sip_remain_exec_time[core],
			  us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
}

void pto2_status_publish(struct pto2_status *s, const struct hws *h,
			 struct pto_regs_hws *hw, uint32_t nr_cores,
			 uint64_t now)
{
	volatile __u64 *reg[PTO2_ST_MASKS] = {
		hw->sip_idle_status, hw->sip_pre_idle_status,
		hw->reserved_sip_mask,
	};
	const struct hws_layout *l = &h->layout;
	hws_mask cur[PTO2_ST_MASKS], busy, flip;
	uint32_t k, i, c;

	if (nr_cores > PTO_MAX_CORES)
		nr_cores = PTO_MAX_CORES;
	hws_status(h, now, &cur[PTO2_ST_IDLE], &cur[PTO2_ST_PRE_IDLE],
		   &cur[PTO2_ST_RESERVED]);
	hws_busy(h, &busy);
	if (!s->valid) {
		memset(s, 0, sizeof(*s));
		for (c = 0; c < nr_cores; c++)
			reg_store_relaxed(&hw->sip_remain_exec_time[c], 0);
	}
	for (k = 0; k < PTO2_ST_MASKS; k++) {
		for (i = 0; i < HWS_MASK_WORDS; i++)
			flip.w[i] = cur[k].w[i] ^ s->sips[k].w[i];
		flip_cores(l, &flip, nr_cores, s->cores[k]);
		s->sips[k] = cur[k];
		/* stored only when they differ (pto2_status.h says why) */
		for (i = 0; i < PTO_CORE_MASK_WORDS; i++)
			if (reg[k][i] != s->cores[k][i])
				reg[k][i] = s->cores[k][i];
	}
	/* the SIPs that hold work, and those that did (now 0) */
	for (i = 0; i < HWS_MASK_WORDS; i++) {
		uint64_t bits = busy.w[i] | s->busy.w[i];

		for (; bits; bits &= bits - 1) {
			uint32_t sip = i * 64 + (uint32_t)__builtin_ctzll(bits);
			int core = core_of(l, sip, nr_cores);

			if (core >= 0)
				write_time(h, hw, sip, core, now);
		}
	}
	for (i = 0; i < PTO2_STATUS_SWEEP && l->nr_sips; i++) {
		uint32_t sip = s->sweep;
		int core = core_of(l, sip, nr_cores);

		s->sweep = (sip + 1) % l->nr_sips;
		if (core >= 0)
			write_time(h, hw, sip, core, now);
	}
	s->busy = busy;
	s->valid = true;
}
