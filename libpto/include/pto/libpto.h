// SPDX-License-Identifier: MIT
/*
 * libpto.h - client library of the emulated PTO2 device
 *
 * A client connects to ptod (the AICPU daemon) over a unix socket and hands
 * it its own /dev/ptoN file. Through that file it allocates and maps GM
 * buffers (only its own: ptod checks every address a client names against
 * the client's file). Kernels are shared objects uploaded into GM and
 * registered under a function id. Graphs are built by orchestration code
 * written against pto/pto_orchestration_api.h, which runs in the client's
 * process: every pto2_rt_* call appends a record to a submission ring in a
 * GM buffer that ptod reads, so that submitting a task costs no system
 * call (ptod is only woken with a socket doorbell when it sleeps).
 *
 *	pto_client *c;
 *	pto_connect(NULL, &c);			// $PTO_SOCKET, $PTO_DEVICE
 *	pto_buf_alloc(c, bytes, &b);		// pto_buf_ptr(b): host pointer
 *	pto_kernel_load(c, 0, PTO2_WORKER_VECTOR, "add.so");
 *	ret = pto_run(c, aicpu_orchestration_entry, args, n, msg, sizeof(msg));
 *	pto_disconnect(c);
 *
 * Tensor addresses given to the orchestration are device addresses
 * (pto_buf_dev_addr()). make_tensor() intermediates get their addresses in
 * the daemon; in the client they carry placeholders (see pto_wire.h).
 *
 * Every function returns 0 or a negative errno. A pto_client is not
 * thread-safe: use it from one thread at a time, in the process that
 * connected it (a forked child gets -ECHILD: it connects its own). The
 * client and out-pointer arguments must not be NULL, unless a function
 * says so (pto_disconnect(NULL), pto_buf_free(NULL) and a NULL @msg do
 * nothing).
 *
 * Environment: PTO_SOCKET (default /run/pto/ptod.sock), PTO_DEVICE
 * (default /dev/pto0: pto.ko; "user": the user-mode device of a ptod
 * started with -d user, opened through ptod itself, for machines that
 * cannot load pto.ko); PTO2_RING_TASK_WINDOW, PTO2_RING_HEAP,
 * PTO2_RING_DEP_POOL and PTO2_READY_QUEUE_SHARDS are sent to ptod at
 * connect and configure this client's runtime (an invalid value makes
 * pto_connect() fail with -EINVAL and the reason in pto_last_error());
 * PTO_CHECK=1 checks every graph (pto_graph_begin_ex() below), 0 or
 * unset does not, any other value fails pto_connect() likewise.
 */
#ifndef PTO_LIBPTO_H
#define PTO_LIBPTO_H

#include <stddef.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBPTO_VERSION_MAJOR	1
#define LIBPTO_VERSION_MINOR	3
#define LIBPTO_VERSION_PATCH	0

typedef struct pto_client pto_client;
typedef struct pto_buf pto_buf;

/*
 * Connection. @socket_path NULL: $PTO_SOCKET (unless empty) or
 * /run/pto/ptod.sock; "": /run/pto/ptod.sock.
 */
int pto_connect(const char *socket_path, pto_client **out);
/*
 * Called from the orchestration function of a pto_run(), the disconnect
 * happens when that function returns, and pto_run() returns -ESHUTDOWN.
 * Buffers of the client not freed go with it (unmapped: pto_buf_ptr()
 * returns NULL); pto_buf_free() of one then frees what is left of it.
 */
void pto_disconnect(pto_client *c);
/* Message of the last failed call on @c (or of pto_connect: c NULL). */
const char *pto_last_error(const pto_client *c);
uint32_t pto_nr_aic(const pto_client *c);
uint32_t pto_nr_aiv(const pto_client *c);

/*
 * GM buffers, mapped into the caller (MAP_SHARED, read/write). A buffer
 * is the caller's from pto_buf_alloc() to pto_buf_free(), which frees the
 * pto_buf itself: like free(), call it once; a second call, or any use
 * of @b after it, touches freed memory.
 */
int pto_buf_alloc(pto_client *c, size_t len, pto_buf **out);
void pto_buf_free(pto_buf *b);
void *pto_buf_ptr(const pto_buf *b);
uint64_t pto_buf_dev_addr(const pto_buf *b);
size_t pto_buf_size(const pto_buf *b);

/*
 * Kernels: upload a shared object exporting pto_kernel_entry (see
 * pto/pto_kernel.h) into GM and register it as @func_id for cores of
 * @worker_type (PTO2_WORKER_CUBE: AIC, PTO2_WORKER_VECTOR: AIV,
 * PTO2_WORKER_MIXED: blocks of 2 AIV + 1 AIC). The capabilities it
 * declares with PTO_KERNEL_REQUIRES are checked against the device's
 * profile: -EOPNOTSUPP if one is missing. An image that is not a 64-bit
 * ELF shared object, is an executable (linked without -shared), or does
 * not export the function pto_kernel_entry is refused with -ENOEXEC and
 * the reason in pto_last_error(), before anything is sent.
 *
 * Loading @func_id again replaces its kernel (a JIT may do so at every
 * new version): tasks dispatched from then on run the new one, so a
 * graph in flight may run both. The old blob's GM buffer is freed once
 * none of this client's graphs is in flight (at once between graphs).
 */
int pto_kernel_load(pto_client *c, int32_t func_id, PTO2WorkerType worker_type,
		    const char *so_path);
int pto_kernel_load_mem(pto_client *c, int32_t func_id,
			PTO2WorkerType worker_type, const void *so, size_t len);

/*
 * Graphs. The PTO2Runtime handle given to orchestration code; the
 * pto2_rt_* functions of pto_orchestration_api.h are exported by libpto
 * and operate on the graph begun last.
 */
PTO2Runtime *pto_client_runtime(pto_client *c);
/* Start a graph; *tag identifies it for pto_graph_wait(). */
int pto_graph_begin(pto_client *c, uint64_t *tag);
/*
 * PTO_GRAPH_STATIC: the graph is held in this process until
 * pto_graph_end(), which derives its dependencies, ranks every task by
 * its upward rank (the estimated time from its start to the end of the
 * graph along the longest path: PTO2TaskAttr.est_time_ns, else
 * pto2_rt_set_kernel_cost, else 10 us per task), marks the critical
 * paths, and only then releases it with its task count: the hardware
 * scheduler then knows each task's priority and the graph's progress.
 * Without it a graph streams, and its priority is submission order.
 */
#define PTO_GRAPH_STATIC	(1U << 0)
/*
 * PTO_GRAPH_CHECK (or PTO_CHECK=1 in the environment, for every graph):
 * the checking mode. Hazards that would run silently wrong fail the graph
 * at the submit that makes them, with a message naming the task and the
 * param: an intermediate tensor used after the scope that made it ended;
 * a read of a region of an intermediate tensor no earlier task wrote; an
 * OUTPUT overlapping an earlier task's write with no dependency between
 * the two. It costs memory and time per task: for finding bugs.
 */
#define PTO_GRAPH_CHECK		(1U << 1)
int pto_graph_begin_ex(pto_client *c, uint32_t flags, uint64_t *tag);
/*
 * End the graph: pto2_rt_orchestration_done(). -EINVAL when no graph is
 * being built (a second call among them). A static graph is released
 * here: a failure to release it is returned, and the graph was never
 * sent. Any other failure of the graph comes from pto_graph_wait(),
 * including one met while the released graph was being written out
 * (ptod ended it, or the connection went).
 */
int pto_graph_end(pto_client *c);
/*
 * Wait for graph @tag: 0 when every task completed, else the negative
 * errno of the first failure, with the diagnosis copied to @msg (may be
 * NULL): ptod's, else one found in this process while the graph was
 * built (a submit refused here, which never reached ptod). Graphs of one
 * client run in order. A graph is waited for once: -EINVAL for the graph
 * still being built (before its pto_graph_end()), -ENOENT for a tag never
 * sent to ptod (its begin or its static release failed, or no such
 * graph) or already waited for; -ENOMEM for a graph that ended while this
 * process had no memory left to keep its outcome. When the connection
 * ends first: -ECONNRESET, or the status and reason ptod gave for closing
 * it (-EPROTO: a corrupt stream outside any graph); -EPROTO with the
 * reason once ptod sent a message that broke the protocol.
 */
int pto_graph_wait(pto_client *c, uint64_t tag, char *msg, size_t msglen);

/**
 * struct pto_graph_stats - what a graph's run cost, measured by ptod.
 * @tasks: tasks of the graph that completed.
 * @blocks: core executions (a task of N blocks counts N).
 * @wall_ns: from the start of the run in ptod to its end.
 * @busy_ns: sum over the core executions of the kernel's time on its
 *	core (ts_end - ts_start, the device's system counter).
 * @wait_ns: sum over the core executions of dispatch to start
 *	(ts_start - ts_dispatch): what the hand-off to the core cost.
 * @wait_max_ns: the longest of those waits.
 * @early: of @blocks, those the HWS launched early (LIBPTO_1.3): given
 *	to a core while it still ran its previous kernel, which had
 *	reported pre-complete or was predicted to end, and started when
 *	that kernel ended. 0 without early launch (HWS registers).
 */
struct pto_graph_stats {
	uint64_t tasks;
	uint64_t blocks;
	uint64_t wall_ns;
	uint64_t busy_ns;
	uint64_t wait_ns;
	uint64_t wait_max_ns;
	uint64_t early;
};
/*
 * The statistics of the graph pto_graph_wait() (or pto_run()) last
 * returned for: 0, or -ENOENT before any graph was waited for, or when
 * that wait said -ENOMEM (the outcome, statistics included, was lost).
 */
int pto_graph_stats(pto_client *c, struct pto_graph_stats *st);

/*
 * begin, @entry(rt, args, argc), end, wait. On any failure @msg (may be
 * NULL) gets the diagnosis, a failed begin's too. An @entry that ends
 * its graph itself (pto_graph_end()) is not an error: the graph is
 * waited for all the same.
 */
int pto_run(pto_client *c, pto2_orchestration_entry_fn entry, uint64_t *args,
	    int argc, char *msg, size_t msglen);
/* The same with graph @flags (PTO_GRAPH_STATIC, PTO_GRAPH_CHECK). */
int pto_run_ex(pto_client *c, pto2_orchestration_entry_fn entry,
	       uint64_t *args, int argc, uint32_t flags, char *msg,
	       size_t msglen);

#ifdef __cplusplus
}
#endif

#endif /* PTO_LIBPTO_H */
