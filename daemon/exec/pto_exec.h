// SPDX-License-Identifier: MIT
/*
 * pto_exec.h - the executor core: how an emulated AICore runs a task
 *
 * One piece of code, used by every executor: pto-aicore (cores of pto.ko,
 * kernels loaded from GM) and the sim device (in-process cores, kernels
 * registered by id). What differs between them is behind struct
 * pto_exec_ops: how a kernel is found, how a core sleeps in its device,
 * how the AICPU interrupt is raised. Everything else, the handshake, the
 * payload, the kernel context, timestamps and counters, is here.
 *
 * The protocol of one core (Documentation/uapi.rst, "Notification
 * protocol"):
 *
 *   spin briefly on DATA_MAIN_BASE; then parked = 1, full fence, recheck,
 *   sleep in the device (ops->park) until DATA_MAIN_BASE changes;
 *   PTO_DMB_EXIT: the core stops;
 *   PTO_DMB_IDLE: COND = IDLE (the AICPU's reset handshake);
 *   dispatch id + 1: COND = ACK(id), ts_start, read the payload through
 *   the task register, translate tensor arguments into this process's
 *   mapping of GM, find and run the kernel with the context of its launch
 *   (block, thread, profile), store its result in the payload's status,
 *   ts_end, COND = FIN(id) (release), full fence, and raise the AICPU
 *   interrupt if the core's irq_en or the AICPU's aicpu_irq_en is set.
 *
 * Timestamps are the device's system counter (pto_sys_cnt(), the info
 * page's epoch), the same time base as the AICPU's ts_dispatch.
 */
#ifndef PTO_EXEC_H
#define PTO_EXEC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto-private/dispatch.h>
#include <pto-private/gm.h>

struct pto_exec;

/**
 * struct pto_exec_ops - what an executor's device provides.
 * @kernel: find the kernel of the task in @p, which runs on @core; 0 and
 *	*@fn, or a negative errno (the task then fails with it).
 * @park: sleep until DATA_MAIN_BASE of @core differs from @last (the core
 *	has set its parked flag and rechecked). 0 on a wake-up, -ETIMEDOUT
 *	or -EINTR to look again; any other negative errno stops the core.
 * @raise_irq: raise the AICPU interrupt on behalf of @core.
 * @log: optional: a message about @core (NULL: stderr).
 */
struct pto_exec_ops {
	int (*kernel)(struct pto_exec *ex, const PTO2DispatchPayload *p,
		      uint32_t core, pto_kernel_entry_fn *fn);
	int (*park)(struct pto_exec *ex, uint32_t core, uint32_t last);
	void (*raise_irq)(struct pto_exec *ex, uint32_t core);
	void (*log)(struct pto_exec *ex, const char *msg);
};

/**
 * struct pto_exec - an executor: its view of the device.
 * @regs: the register file (uapi layout: info page, HWS, cores).
 * @gm: GM as this process maps it (translates payload and tensor
 *	addresses).
 * @nr_aic: AIC cores of the device (kernel context geometry).
 * @nr_aiv: AIV cores of the device.
 * @spins: polls of DATA_MAIN_BASE before parking, at most...
 * @spin_ns: ...and at most this long (0: no time limit).
 * @ops: the device's operations.
 * @priv: the executor's own data.
 * @tasks: tasks run (all cores).
 * @parks: times a core slept in the device.
 *
 * Set up before any core runs; read-only afterwards except the counters.
 */
struct pto_exec {
	void *regs;
	struct pto_gm_map gm;
	uint32_t nr_aic;
	uint32_t nr_aiv;
	uint32_t spins;
	int64_t spin_ns;
	const struct pto_exec_ops *ops;
	void *priv;
	_Atomic uint64_t tasks;
	_Atomic uint64_t parks;
};

/* Default spin bounds (see pto_exec_core_loop). */
#define PTO_EXEC_SPINS		2000
#define PTO_EXEC_SPIN_NS	4000

/* Fill @ex's defaults and the geometry of the device at @regs. */
void pto_exec_init(struct pto_exec *ex, void *regs,
		   const struct pto_exec_ops *ops, void *priv);

/* Run dispatch @id, which DATA_MAIN_BASE of @core has just announced
 * (the payload names the task). */
void pto_exec_run_task(struct pto_exec *ex, uint32_t core, uint32_t id);

/*
 * The life of core @core: wait for DATA_MAIN_BASE to change and act on it,
 * until PTO_DMB_EXIT, until the AICPU has gone (nobody will dispatch
 * again) or until ops->park fails. Returns 0, or park's error.
 *
 * The spin before parking is bounded both in polls and in time: many core
 * threads spinning for long on a host with few CPUs starve the AICPU they
 * wait for, while a parked core is woken at once by a kick.
 */
int pto_exec_core_loop(struct pto_exec *ex, uint32_t core);

#endif /* PTO_EXEC_H */
