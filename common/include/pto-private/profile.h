// SPDX-License-Identifier: MIT
/*
 * profile.h - target profiles and the hardware model's latencies
 *
 * The facts a user predicts hardware behaviour from, in one place: what a
 * profile's device has (blocks, the cores of a block, the cluster the HWS
 * places blocks in, the capabilities) and what the hardware model says
 * AICPU-side operations cost. pto.ko's profile parameter, ptod, the HWS
 * simulator and the documentation all read them from here.
 */
#ifndef PTO_PRIVATE_PROFILE_H
#define PTO_PRIVATE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/pto.h>

/**
 * struct pto_profile_desc - a target profile.
 * @name: "a2a3" or "a5".
 * @id: enum pto_profile.
 * @blocks: default number of blocks (each 1 AIC + PTO_AIV_PER_AIC AIV).
 * @cluster_sip_num: cores per HWS cluster: one block, 1 AIC + 2 AIV.
 * @caps: PTO_CAP_* bits.
 */
struct pto_profile_desc {
	const char *name;
	uint32_t id;
	uint32_t blocks;
	uint32_t cluster_sip_num;
	uint64_t caps;
};

/* A2A3: Ascend 910B/910C; A5: Ascend 950 PR/DT (linux/pto.h). */
static const struct pto_profile_desc pto_profiles[] = {
	{ "a2a3", PTO_PROFILE_A2A3, PTO_PROFILE_A2A3_BLOCKS,
	  1 + PTO_AIV_PER_AIC, PTO_CAPS_A2A3 },
	{ "a5", PTO_PROFILE_A5, PTO_PROFILE_A5_BLOCKS, 1 + PTO_AIV_PER_AIC,
	  PTO_CAPS_A5 },
};

/*
 * The hardware model's AICPU latencies (ns): dispatching to an AICore is a
 * register write (~0), noticing a completion is a register poll (~100 ns),
 * resolving a finished task's dependencies costs ~1 us, and a request from
 * the host reaches the AICPU in ~3 us.
 */
#define PTO_LAT_DISPATCH_NS	0
#define PTO_LAT_COMPLETION_NS	100
#define PTO_LAT_DEP_RESOLVE_NS	1000
#define PTO_LAT_HOST_TO_AICPU_NS 3000

/* "a2a3", "a5" (profile.c). */
const char *pto_profile_name(uint32_t id);
/* PTO_CAP_* bits as names ("FP8 MX_FORMAT"); returns the length. */
size_t pto_caps_format(uint64_t caps, char *buf, size_t len);

#endif /* PTO_PRIVATE_PROFILE_H */
