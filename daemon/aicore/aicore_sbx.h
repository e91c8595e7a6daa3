// SPDX-License-Identifier: MIT
/*
 * aicore_sbx.h - pto-aicore's side of the sandboxes: the mailboxes ptod
 * hands over the control channel, and the hand-off of a task to the
 * sandbox its payload names (pto-private/sandbox.h has the protocol)
 */
#ifndef AICORE_SBX_H
#define AICORE_SBX_H

#include <stdint.h>

#include <pto-private/dispatch.h>

struct pto_exec;

struct aicore_sbxs;

/* pto-aicore's log: one line on stderr (pto_aicore.c). */
__attribute__((format(printf, 1, 2)))
void aicore_msg(const char *fmt, ...);

/*
 * Serve ptod's control channel @ctl_fd (ADD, REMOVE) for a device of
 * @nr_cores cores: the messages already queued at once, the rest on a
 * thread. 0 or -errno.
 */
int aicore_sbx_start(int ctl_fd, uint32_t nr_cores, struct aicore_sbxs **out);

/*
 * Run the task in @p (dispatched on @core) in the sandbox p->exec_ctx:
 * post it to the sandbox's slot of @core, wake the sandbox and wait for
 * its answer (futex waits of at most 50 ms each, between which a removed
 * sandbox, or one whose process has exited, ends the wait). A
 * pre-complete report of the task's kernel goes on to @ex's device
 * (pto_exec_pre_complete(); @ex NULL: nowhere), once. The task's status,
 * or -EOWNERDEAD if the sandbox is unknown or went away first.
 */
int aicore_sbx_hand_off(struct aicore_sbxs *t, struct pto_exec *ex,
			uint32_t core, const PTO2DispatchPayload *p);

#endif /* AICORE_SBX_H */
