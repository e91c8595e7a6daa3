// SPDX-License-Identifier: MIT
/*
 * hws_regs.h - the HWS configuration block of a register file, as the
 * device keeps it
 *
 * pto.ko sets the block's defaults at load and validates and writes it for
 * PTO_IOC_HWS_CONFIG (kmod/pto_core.c); the user-mode device, whose device
 * side runs in ptod, does the same with these. Both take the defaults from
 * pto_hws_cfg_default() and validate a write with pto_hws_cfg_check(),
 * the one copy of each, in hws_rules.h (which pto.ko compiles too;
 * Documentation/kmod.rst, "HWS_CONFIG validation").
 */
#ifndef PTO_PRIVATE_HWS_REGS_H
#define PTO_PRIVATE_HWS_REGS_H

#include <stdint.h>

#include <linux/pto.h>
#include <pto-private/hws_rules.h>

/* Write @cfg into @hws under its CFG_SEQ (odd while it changes). */
void pto_hws_cfg_write(struct pto_regs_hws *hws, const struct pto_hws_cfg *cfg);
/* A consistent copy of @hws's configuration (waits out a writer). */
void pto_hws_cfg_read(const struct pto_regs_hws *hws, struct pto_hws_cfg *cfg);

#endif /* PTO_PRIVATE_HWS_REGS_H */
