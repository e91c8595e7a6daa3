// SPDX-License-Identifier: MIT
/*
 * hws_regs.c - sequenced access of the HWS configuration registers (see
 * hws_regs.h; their defaults and validation are hws_rules.h's)
 */
#define _GNU_SOURCE
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/hws_regs.h>
#include <pto-private/regs.h>

void pto_hws_cfg_write(struct pto_regs_hws *hws, const struct pto_hws_cfg *cfg)
{
	uint32_t seq;

	/* even to odd, taken from any other writer (pto.ko's, on the device) */
	for (;;) {
		seq = reg_load_relaxed(&hws->cfg_seq);
		if (!(seq & 1) &&
		    atomic_compare_exchange_strong(PTO_REG32(&hws->cfg_seq),
						   &seq, seq + 1))
			break;
		cpu_relax();
	}
	/* the odd count before the new values */
	atomic_thread_fence(memory_order_release);
	memcpy((void *)&hws->cfg, cfg, sizeof(*cfg));
	/* the new values before the even count that publishes them */
	reg_store_release(&hws->cfg_seq, seq + 2);
}

void pto_hws_cfg_read(const struct pto_regs_hws *hws, struct pto_hws_cfg *cfg)
{
	for (;;) {
		uint32_t seq = reg_load_acquire(&hws->cfg_seq);

		if (seq & 1) {
			cpu_relax();
			continue;
		}
		memcpy(cfg, (const void *)&hws->cfg, sizeof(*cfg));
		atomic_thread_fence(memory_order_acquire);
		if (reg_load_relaxed(&hws->cfg_seq) == seq)
			return;
	}
}
