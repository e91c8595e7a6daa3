// SPDX-License-Identifier: MIT
/*
 * sandbox.h - a client's kernels in a process of the client's own: the
 * sandbox's mailbox and the control messages between ptod and pto-aicore
 *
 * ptod gives every client whose kernels run sandboxed a number S (1 ..
 * PTO_SBX_MAX), the exec_ctx of its tasks' payloads (dispatch.h), starts
 * pto-sandbox S as the client's user and hands pto-aicore the sandbox's
 * mailbox: a memfd ptod creates (sealed against shrinking and growing),
 * mapped by all three. Documentation/execution-model.rst tells the whole
 * story.
 *
 * The mailbox: this header, then one slot per core of the device. A
 * pto-aicore thread that took a dispatch for S on core k (it wrote COND
 * ACK and ts_start) hands it over and waits:
 *
 *   executor (pto-aicore)                 sandbox (pto-sandbox)
 *   slot[k].task = payload (addresses     a thread takes bit k of @pending
 *     untranslated)                         (atomic and), reads req
 *   slot[k].req = seq = req + 1 (release)   (acquire) and copies the task
 *   @pending |= bit k; @doorbell += 1;    runs the kernel (its own mapping
 *   full fence; if @sleepers: FUTEX_WAKE    of the client's buffers)
 *     @doorbell                           slot[k].res = seq << 32 | status
 *   wait until slot[k].res has seq          (only ever to a newer seq)
 *     (FUTEX_WAIT on slot[k].wake,        slot[k].wake += 1, FUTEX_WAKE
 *     bounded) or the sandbox died
 *   payload.status = status; ts_end, COND FIN as for any task
 *
 * An idle sandbox thread counts itself in @sleepers, fences, reads
 * @doorbell, looks at @pending once more and sleeps on @doorbell.
 *
 * The mailbox is shared with the sandbox, where the client's kernels run:
 * pto-aicore trusts nothing it reads there. It finds slots from its own
 * core count (the memfd's size is checked once, and sealed), reads only
 * @req, @res and @wake of the slot it waits on, and stops waiting when
 * ptod says the sandbox is gone (REMOVE), whatever the words say. What a
 * sandbox writes there can only get its own client's tasks wrong.
 *
 * Futexes on the mailbox are the shared (not process-private) kind.
 */
#ifndef PTO_PRIVATE_SANDBOX_H
#define PTO_PRIVATE_SANDBOX_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/pto.h>

#include "compiler.h"
#include "dispatch.h"

/* Sandbox numbers (payload exec_ctx) are 1 .. PTO_SBX_MAX; 0 = none. */
#define PTO_SBX_MAX		1024
/*
 * The stack of each of a sandbox's worker threads (one per core at most):
 * the usual 8 MiB, fixed, so that ptod's limit on the sandbox's private
 * memory (ptod -M, RLIMIT_DATA, which counts thread stacks) can leave
 * room for all of them besides the -M it promises the kernels.
 */
#define PTO_SBX_STACK		(8UL << 20)

#define PTO_SBX_MAGIC		0x58425350u	/* "PSBX" */
#define PTO_SBX_VERSION		2
#define PTO_SBX_HDR_SIZE	4096

/**
 * struct pto_sbx_hdr - start of a sandbox's mailbox.
 * @magic: PTO_SBX_MAGIC (ptod).
 * @version: PTO_SBX_VERSION (ptod).
 * @nr_cores: slots that follow (ptod: the device's cores).
 * @slot_size: sizeof(struct pto_sbx_slot) (ptod).
 * @pending: one bit per core with a task the sandbox has not taken
 *	(executor: atomic or; sandbox: atomic and).
 * @doorbell: bumped by the executor after each post; idle sandbox
 *	threads sleep on it (futex).
 * @sleepers: sandbox threads asleep or about to sleep on @doorbell.
 */
struct pto_sbx_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t nr_cores;
	uint32_t slot_size;
	alignas(64) _Atomic uint64_t pending[PTO_CORE_MASK_WORDS];
	alignas(64) _Atomic uint32_t doorbell;
	alignas(64) _Atomic uint32_t sleepers;
};

_Static_assert(sizeof(struct pto_sbx_hdr) <= PTO_SBX_HDR_SIZE,
	       "mailbox header too large");

/**
 * struct pto_sbx_slot - the task of one core, and its answer.
 * @req: sequence number of the task posted last (executor, release).
 * @wake: bumped by the sandbox after every answer and pre-complete report
 *	(the executor's futex).
 * @res: the answer: (uint64_t)seq << 32 | (uint32_t)status, only ever
 *	replaced by the answer to a newer seq (sandbox).
 * @pre: the seq of the task whose kernel reported pre-complete last
 *	(sandbox, release); the executor passes a report of the seq it
 *	waits for on to the device, once.
 * @task: the dispatch payload as the executor read it; tensor arguments
 *	are device addresses (executor).
 */
struct pto_sbx_slot {
	alignas(64) _Atomic uint32_t req;
	_Atomic uint32_t wake;
	_Atomic uint64_t res;
	_Atomic uint32_t pre;
	PTO2DispatchPayload task;
};

/* Bytes of the mailbox of a device with @nr_cores cores (whole pages). */
static inline size_t pto_sbx_size(uint32_t nr_cores)
{
	return (size_t)PTO_ALIGN_UP(PTO_SBX_HDR_SIZE +
				    (uint64_t)nr_cores *
				    sizeof(struct pto_sbx_slot), 4096);
}

/*
 * A new mailbox for @nr_cores cores: a memfd of pto_sbx_size() bytes, its
 * header filled in, sealed against resizing. The descriptor (close on
 * exec) or -errno.
 */
int pto_sbx_mailbox_create(uint32_t nr_cores);

/* Whether mapped mailbox @h is one of this layout for @nr_cores cores. */
static inline int pto_sbx_hdr_ok(const struct pto_sbx_hdr *h,
				 uint32_t nr_cores)
{
	return h->magic == PTO_SBX_MAGIC && h->version == PTO_SBX_VERSION &&
	       h->nr_cores == nr_cores &&
	       h->slot_size == sizeof(struct pto_sbx_slot);
}

static inline struct pto_sbx_slot *pto_sbx_slot(struct pto_sbx_hdr *h,
						uint32_t core)
{
	return (struct pto_sbx_slot *)(void *)((uint8_t *)h + PTO_SBX_HDR_SIZE) +
	       core;
}

/*
 * The sandbox's side, after it stored an answer or a report in @s: bump
 * the word, then wake the executor's waiter (the word moves first, so a
 * waiter about to sleep on the value it read returns at once).
 */
void pto_sbx_slot_wake(struct pto_sbx_slot *s);

/* ---- ptod <-> pto-aicore: the control channel ---------------------------------
 *
 * A SOCK_SEQPACKET socket pair; pto-aicore gets its end as -C FD. ptod
 * sends ADD (with the mailbox memfd and the sandbox process's pidfd, in
 * that order, SCM_RIGHTS) when it has started a sandbox (an ADD of a
 * number in use replaces that sandbox: waits on the old one end) and
 * REMOVE when the sandbox is gone for good (it exited, or its client
 * left); pto-aicore answers every ADD with ADDED. A REMOVE can be lost
 * (ptod never blocks on the channel), so pto-aicore also watches the
 * pidfd: a wait on a sandbox whose process has exited ends within one
 * futex wait (50 ms), REMOVE or not. An ADD without a pidfd (ptod could
 * not open one) relies on REMOVE alone. Each
 * start of pto-aicore gets a new pair with an ADD of every live sandbox
 * queued on it, which pto-aicore takes before it reports ready. A task
 * whose exec_ctx has no sandbox in pto-aicore fails with -EOWNERDEAD.
 */
enum {
	PTO_SBX_CTL_ADD = 1,	/* + the mailbox memfd, the pidfd */
	PTO_SBX_CTL_REMOVE,
	PTO_SBX_CTL_ADDED,	/* pto-aicore -> ptod */
};

/**
 * struct pto_sbx_ctl - one control message.
 * @type: PTO_SBX_CTL_*.
 * @sbx: the sandbox number, 1 .. PTO_SBX_MAX.
 * @pid: the sandbox process (ADD, ADDED: which start of sandbox @sbx).
 * @status: ADDED: 0, or -errno if pto-aicore refused the mailbox.
 */
struct pto_sbx_ctl {
	uint32_t type;
	uint32_t sbx;
	int32_t pid;
	int32_t status;
};

#endif /* PTO_PRIVATE_SANDBOX_H */
