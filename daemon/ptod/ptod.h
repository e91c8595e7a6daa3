// SPDX-License-Identifier: MIT
/*
 * ptod.h - the AICPU daemon: shared structures of ptod.c (main thread:
 * event loop, clients, executor supervision) and ptod_runner.c (one runner
 * thread per client: submission stream -> pto2 runtime)
 *
 * Threads and what they own:
 *
 *  - the main thread runs the libevent loop and owns struct ptod and every
 *    struct client (creation, the client list, destruction);
 *  - each client has one runner thread (created at hello, joined by the
 *    main thread after it reported itself finished) that reads the
 *    client's submission stream and drives the client's pto2 runtime;
 *  - pto2 starts its own scheduler threads for each run.
 *
 * See Documentation/runtime.rst for the design.
 */
#ifndef PTOD_H
#define PTOD_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/pto.h>

#include <pto-private/gm.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>
#include <pto-private/usdt.h>
#include <pto-private/wire.h>

#include "pto2_runtime.h"

#define PTOD_MAX_FUNC		256	/* kernel ids 0 .. 255 per client */
#define PTOD_REC_MAX		4096	/* largest stream record */
#define PTOD_NR_SIGS		3	/* signals the loop handles */

struct ptod;

struct client {
	struct ptod *d;
	struct client *next;		/* d->clients (main thread) */
	uint32_t id;
	int sock;			/* closed only at destruction */
	struct event *ev_read;
	pid_t pid;
	uid_t uid;
	int cfd;			/* the client's /dev/ptoN file */
	bool hello_done;

	/* submission stream (in the client's GM buffer) */
	struct pto_stream_hdr *sh;
	uint8_t *sdata;
	uint32_t ssize;			/* copied at hello, never re-read */
	uint64_t tail;			/* runner: bytes consumed */
	int efd;			/* eventfd: doorbell / stop wake-ups */

	/* runtime (memory in GM, allocated by the daemon for this client) */
	struct pto2_config cfg;
	PTO2Runtime *rt;
	uint32_t rt_handle;		/* GM_ALLOC handle on the AICPU file */
	uint64_t rt_dev;
	size_t rt_size;

	/*
	 * Kernel table, written by the main thread at KERNEL_REG (aligned
	 * 64-bit atomic stores) and read by the runner and pto2's
	 * schedulers at dispatch (cfg.kernel_addrs points at kaddrs).
	 */
	uint64_t kaddrs[PTOD_MAX_FUNC];
	_Atomic int32_t ktype[PTOD_MAX_FUNC];	/* -1: not registered */

	/* runner thread */
	pthread_t runner;
	bool runner_live;
	_Atomic int stop_err;		/* != 0: stop (client gone, shutdown) */
	_Atomic int in_run;		/* runner holds cores (a run) */
	bool counted;			/* in d->nr_live (dev_lock) */
	pthread_mutex_t send_lock;	/* serializes writes to @sock */

	/*
	 * The cores of the current run (dev_lock; stable while in_run):
	 * runtime core i is device core core_ids[i], run_aic AIC then
	 * run_aiv AIV; blocks: its block list as text (log).
	 */
	uint32_t core_ids[PTO_MAX_CORES];
	uint32_t run_aic, run_aiv;
	char blocks[128];

	/* current graph: runner thread only */
	uint64_t tag;
	uint64_t *ph;			/* placeholder idx -> device address */
	uint32_t ph_cap;
	int gerr;			/* the daemon's own error of the graph */
	char gmsg[1024];
	bool err_sent;
	uint8_t rec[PTOD_REC_MAX];	/* private copy of the current record */

	/* set by the main thread under d->dev_lock (executor death) */
	char note[512];

	struct client *wait_next;	/* d->wait_head queue (dev_lock) */
	struct client *fin_next;	/* d->fin list (fin_lock) */
};

struct ptod {
	struct event_base *base;
	const char *dev_path;
	const char *sock_path;
	const char *aicore_path;
	char aicore_buf[PATH_MAX];	/* the default aicore_path */
	bool verbose;
	uint32_t aicore_spins;
	uint32_t def_task_window;
	uint64_t def_heap;

	/* device, AICPU role: set up before any thread starts */
	int dev_fd;
	dev_t dev_rdev;
	struct pto_info info;
	void *regs;			/* the register file */
	struct pto_gm_map gm;		/* all of GM */
	struct pto2_device pdev;

	int listen_fd;
	struct event *ev_listen;
	struct event *ev_sig[PTOD_NR_SIGS];	/* SIGTERM, SIGINT, SIGCHLD */
	struct event *ev_timer;		/* executor restart / crash fix-up */
	struct event *ev_fin;		/* runner finished (fin_efd) */
	struct event *ev_ready;		/* executor ready pipe */
	int fin_efd;

	struct client *clients;		/* main thread */
	uint32_t next_id;

	/* executor (main thread) */
	pid_t exec_pid;
	int exec_ready_fd;
	uint32_t exec_restarts;
	int64_t exec_dead_since;	/* ns, 0 = alive */
	char exec_death[256];

	/*
	 * Core partitions. A block is one AIC and its two AIV cores (AIC b,
	 * AIV nr_aic + 2b and nr_aic + 2b + 1); a run gets whole blocks
	 * (see Documentation/runtime.rst). A device whose AIV count is not
	 * twice its AIC count is one block of all cores.
	 */
	uint32_t nr_blocks;

	/*
	 * dev_lock protects the partitions: @blk_owner (the client whose run
	 * uses each block, NULL = free), @nr_runs (runs holding blocks),
	 * @nr_live (clients with a runtime that may still run), the FIFO of
	 * runs waiting for blocks, @exec_ready and @shutting_down, and
	 * client->note and the run fields of clients. dev_cond signals
	 * changes.
	 */
	pthread_mutex_t dev_lock;
	pthread_cond_t dev_cond;
	struct client *blk_owner[PTO_MAX_CORES];
	uint32_t nr_runs;
	uint32_t nr_live;
	struct client *wait_head, *wait_tail;
	bool exec_ready;
	bool shutting_down;

	/* fin_lock protects @fin: clients whose runner has finished */
	pthread_mutex_t fin_lock;
	struct client *fin;
};

/* ptod.c */
__attribute__((format(printf, 2, 3)))
void ptod_log(int level, const char *fmt, ...);
int ptod_send(struct client *c, struct pto_msg *m);
static inline struct pto_core_regs *ptod_core(struct ptod *d, uint32_t c)
{
	return pto_regs_core(d->regs, c);
}
static inline void *ptod_gm(struct ptod *d, uint64_t dev, uint64_t len)
{
	return pto_gm_ptr(&d->gm, dev, len);
}
int ptod_kick(void *ctx, uint32_t core);
/* The block of device core @c. */
static inline uint32_t ptod_block_of(struct ptod *d, uint32_t c)
{
	if (d->nr_blocks <= 1)
		return 0;
	return c < d->info.nr_aic ? c : (c - d->info.nr_aic) / 2;
}

/* ptod_runner.c */
void *ptod_runner_main(void *arg);

#define PTOD_LOG_ERR	0
#define PTOD_LOG_WARN	1
#define PTOD_LOG_INFO	2
#define PTOD_LOG_DEBUG	3

#endif /* PTOD_H */
