// SPDX-License-Identifier: MIT
/*
 * hws_regs.c - defaults and sequenced access of the HWS configuration
 * registers (see hws_regs.h; their validation is hws_rules.h's)
 */
#define _GNU_SOURCE
#include <string.h>

#include <pto-private/compiler.h>
#include <pto-private/hws_regs.h>
#include <pto-private/regs.h>

void pto_hws_cfg_default(struct pto_hws_cfg *cfg, uint32_t nr_cores)
{
	uint32_t i, ctx, c;

	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = PTO_HWS_POLICY_HWS;
	cfg->work_mode = PTO_HWS_MODE_HW;
	cfg->cluster_sip_num = PTO_HWS_CLUSTER_SIPS;
	cfg->early_launch_mode = PTO_HWS_EL_SIP_REPORT;
	cfg->promote_rule = PTO_HWS_PROMOTE_THRESHOLD;
	cfg->promote_threshold = PTO_HWS_PROMOTE_THRESHOLD_DEF;
	/* the HWS design's example table */
	for (i = 0; i < PTO_HWS_SCALE_RANKS; i++)
		cfg->scale_ratio[i] = PTO_HWS_SCALE_DEF(i);
	/* every context and thread_num class may use every core */
	for (ctx = 0; ctx < PTO_HWS_NR_CTX; ctx++)
		for (i = 0; i < PTO_HWS_USAGE_CLASSES; i++)
			for (c = 0; c < nr_cores && c < PTO_MAX_CORES; c++)
				cfg->usage_mask[ctx][i][c / 64] |=
					1ULL << (c % 64);
}

void pto_hws_cfg_write(struct pto_regs_hws *hws, const struct pto_hws_cfg *cfg)
{
	uint32_t seq = reg_load_relaxed(&hws->cfg_seq) | 1;

	reg_store_relaxed(&hws->cfg_seq, seq);
	/* the odd count before the new values */
	atomic_thread_fence(memory_order_release);
	memcpy((void *)&hws->cfg, cfg, sizeof(*cfg));
	/* the new values before the even count that publishes them */
	reg_store_release(&hws->cfg_seq, seq + 1);
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
