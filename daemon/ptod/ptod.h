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
#include <stdio.h>
#include <sys/types.h>

#include <linux/pto.h>

#include <pto-private/gm.h>
#include <pto-private/regs.h>
#include <pto-private/sandbox.h>
#include <pto-private/time.h>
#include <pto-private/usdt.h>
#include <pto-private/wire.h>

#include "pto2_engine.h"
#include "pto2_runtime.h"

/*
 * Kernel blobs a client may replace while one of its graphs runs: each
 * stays pinned until the run drains (client->old_kpins), and the runner
 * unpins them all then.
 */
#define PTOD_MAX_OLD_KPINS	256
#define PTOD_REC_MAX		4096	/* largest stream record */
#define PTOD_NR_SIGS		3	/* signals the loop handles */
#define PTOD_MAX_UID_RULES	64	/* users -x or -q names (each) */
#define PTOD_MAX_ALLOW		64	/* -u options */
#define PTOD_DEFAULT_GROUP	"pto"	/* the group of /dev/ptoN (60-pto.rules) */
#define PTOD_MAX_CONN_UID	16	/* -c: connections per user but root */
#define PTOD_MAX_RUNS_UID	8	/* -D: graphs running per user but root */
/* -L by default: half the device's clusters per user but root */
#define PTOD_CLUSTERS_HALF	UINT32_MAX
#define PTOD_CLUSTERS_MAX	65536	/* -L's largest value */
#define PTOD_MAX_CONN		256	/* -C: connections in all */
#define PTOD_OUT_MAX		(256u << 10)	/* -Q: output queue bytes */
#define PTOD_OUT_MS		2000	/* -T: ms a queue may make no progress */
#define PTOD_OUT_FDS		16	/* descriptors an output queue holds */
#define PTOD_WARN_MAX		20	/* error replies, and records outside a
					 * graph, logged per client */
#define PTOD_FDS_OWN		32	/* ptod's own descriptors, with room */
/*
 * A user whose passed descriptors the closer still holds this many of
 * passes no more (ptod_closer.c)
 */
#define PTOD_CLOSING_MAX	16
/*
 * The closer holds this many descriptors, all users together: ptod takes
 * no more (accepts no connection, reads no message that carries any)
 * until it has closed some (ptod_closer.c)
 */
#define PTOD_CLOSER_MAX		256
/*
 * A connection of a user the device refuses is refused at its first
 * message; one that sends none is refused after this long, so that it
 * does not hold a connection slot for as long as it likes.
 */
#define PTOD_SILENT_REFUSE_MS	3000
#define PTOD_ACCEPT_PAUSE_MS	100	/* no accept for that long after one
					 * failed (EMFILE, ...) or with the
					 * closer full; paused reads look
					 * again as often */
#define PTOD_LOG_RATE		50	/* lines about a client's graphs
					 * logged a second */
#define PTOD_CONN_LOG_RATE	100	/* lines about connections (all of
					 * them) logged a second */
#define PTOD_CLIENTS_LOG_RATE	200	/* lines about clients' graphs and
					 * from sandboxes, all clients
					 * together, logged a second */
#define PTOD_USER_LOG_RATE	100	/* of them, one user's clients' */
#define PTOD_USER_LOG_SLOTS	64	/* users counted in one second */
#define PTOD_TRACE_RING		8192	/* blocks waiting for trace subscribers */
/*
 * After the drain grace, how long a stopped client's tasks may still wait
 * on its reaped sandbox before pto-aicore is taken to have lost the
 * REMOVE and is killed: far past the ~100 ms a sandbox can stretch
 * pto-aicore's notice of its death.
 */
#define PTOD_DRAIN_SBX_LATE_MS	5000
/*
 * Trace subscriptions of one user but root at once: each costs the main
 * loop a pass over every block flushed, and a user may hold many
 * connections.
 */
#define PTOD_TRACE_SUBS_USER	2
/* -w: a client's task window, and the largest a user but root may ask */
#define PTOD_TASK_WINDOW	16384
/* the largest PTO2_RING_DEP_POOL a user but root may ask (8 MiB of GM) */
#define PTOD_DEP_POOL_USER	(1u << 20)
#define PTOD_DRAIN_GRACE_MS	5000	/* -G: a stopped client's run may drain */
#define PTOD_DRAIN_EXIT_MS	5000	/* then, shutting down, ptod exits anyway */
/*
 * -M: a sandbox's private memory (RLIMIT_DATA, besides its worker threads'
 * stacks, PTO_SBX_STACK a core), MiB, and the largest -M
 */
#define PTOD_SBX_DATA_MIB	1024
#define PTOD_SBX_DATA_MAX_MIB	(1U << 20)
/*
 * -P: a sandbox starts no thread while its user has this many tasks
 * (RLIMIT_NPROC, which counts every task of the user), and the largest -P
 */
#define PTOD_SBX_TASKS		4096
#define PTOD_SBX_TASKS_MAX	(1U << 22)
/* a client's sandbox is started again after at most this many crashes ... */
#define PTOD_SBX_CRASHES	5
/* ... in this window, counted from the first (ns) */
#define PTOD_SBX_CRASH_WINDOW_NS	60000000000LL
/*
 * A sandbox start costs the main thread a fork, an exec and pto-aicore's
 * answer: a user but root may start this many at once, then this many a
 * second
 */
#define PTOD_SBX_STARTS_BURST	32
#define PTOD_SBX_STARTS_RATE	10
/*
 * A run whose sandbox died before the main thread reaped it waits this
 * long at most for the reap's note of why, to put it in its message (ms)
 */
#define PTOD_SBX_NOTE_WAIT_MS	2000

struct ptod;
struct client;
struct ptod_pin;
struct ptod_ufile;

/*
 * Log lines counted per second (rate_take() in ptod.c): @n logged in second
 * @sec (CLOCK_MONOTONIC), @dropped not logged and not said yet.
 */
struct ptod_rate {
	int64_t sec;
	uint32_t n;
	uint64_t dropped;
};

/**
 * struct ptod_dev_ops - the device ptod is the AICPU of.
 * @name: for messages.
 * @open: take the AICPU role (or create the device), map the register
 *	file and GM, fill d->info, d->regs, d->gm and d->pdev, and how
 *	pto-aicore is to reach the device (d->exec_opt, d->exec_arg,
 *	d->exec_fds).
 * @close: give the device up (after the executor stopped).
 * @gm_alloc: GM for a client's runtime, owned by ptod; under -q charged
 *	to user @uid's GM quota (-EDQUOT beyond it).
 * @gm_free: give it back.
 * @client_file: at hello: is @fd a client file of this device? If so
 *	the client keeps it (c->cfd) and what it refers to; 0 or -ENODEV.
 * @client_release: the client goes: drop what @client_file and @message
 *	took.
 * @pin: GM_PIN [@addr, @addr + @len) of the client's file (any thread):
 *	the buffer that holds it into @out (range and pin id); -ENOENT if
 *	none, or -errno. The pin keeps the buffer's memory from anyone else
 *	until @unpin, on both devices.
 * @unpin: drop pin @id.
 * @exec_gone: the executor @pid is gone (reaped, or on pto.ko reported
 *	gone by the device's events): pto.ko has marked its cores DEAD and
 *	raised the interrupt already; the user-mode device does it here.
 * @message: a device message (PTO_MSG_DEV_OPEN ... HWS_CONFIG, wire.h):
 *	handle it and reply.
 * @peer_ok: may a connection of user @uid talk to ptod at all?
 * @events_start: follow the device's events in the loop (NULL: none; a
 *	device that has none to give is a warning, not an error).
 * @events_stop: stop following them, free what @events_start took.
 */
struct ptod_dev_ops {
	const char *name;
	int (*open)(struct ptod *d);
	void (*close)(struct ptod *d);
	int (*gm_alloc)(struct ptod *d, uint64_t len, uid_t uid,
			uint32_t *handle, uint64_t *dev_addr);
	void (*gm_free)(struct ptod *d, uint32_t handle);
	int (*client_file)(struct client *c, int fd);
	void (*client_release)(struct client *c);
	int (*pin)(struct client *c, uint64_t addr, uint64_t len,
		   struct ptod_pin *out);
	void (*unpin)(struct ptod *d, uint32_t id);
	void (*exec_gone)(struct ptod *d, pid_t pid);
	void (*message)(struct client *c, struct pto_msg *m);
	bool (*peer_ok)(struct ptod *d, uid_t uid);
	int (*events_start)(struct ptod *d);
	void (*events_stop)(struct ptod *d);
};

/* ptod_kdev.c: pto.ko, /dev/ptoN; ptod_udev.c: the user-mode device */
extern const struct ptod_dev_ops ptod_kdev_ops;
extern const struct ptod_dev_ops ptod_udev_ops;

/* One pinned buffer of a client (ptod_pins.c). */
struct ptod_pin {
	uint64_t start, end;		/* the buffer's device range */
	uint32_t id;			/* the device's pin id (ops->pin) */
};

/*
 * Pins of distinct buffers, sorted by start; one thread uses a set at a
 * time (its owner, or whoever holds the lock that protects it).
 */
struct ptod_pinset {
	struct ptod_pin *v;
	uint32_t n, cap;
};

/* An intermediate tensor of the current graph: where pto2 put it. */
struct ptod_ph {
	uint64_t addr;			/* 0: not produced (yet) */
	uint64_t size;			/* bytes */
};

struct client {
	struct ptod *d;
	struct client *next;		/* d->clients (main thread) */
	uint32_t id;
	int sock;			/* closed only at destruction */
	struct event *ev_read;
	/*
	 * @ev_read is not watched: the message waiting carries descriptors
	 * and the closer holds all it may (ptod_closer.c; main thread)
	 */
	bool reads_paused;
	pid_t pid;
	uid_t uid;
	int cfd;			/* the client's device file */
	bool hello_done;
	uint32_t nr_warned;		/* error replies logged (main thread) */
	bool refused;			/* its user may not use the device */
	/* such a user's connection: refused if silent (main thread) */
	struct event *ev_silent;
	/* the user-mode device (main thread): the file the hello named,
	 * and the one this connection opened (DEV_OPEN) */
	struct ptod_ufile *uf;
	struct ptod_ufile *own;

	/*
	 * The client's buffers ptod touches for the client's life: the
	 * stream buffer (at @stream_dev) and the blobs of the registered
	 * kernels (c->kaddrs[]); main thread. A buffer the client stops
	 * naming leaves it (ptod.c, life_unpin_unnamed); the rest is
	 * dropped at destruction.
	 */
	struct ptod_pinset life_pins;
	uint64_t stream_dev;

	/* submission stream (in the client's GM buffer) */
	struct pto_stream_hdr *sh;
	uint8_t *sdata;
	uint32_t ssize;			/* copied at hello, never re-read */
	uint64_t tail;			/* runner: bytes consumed */
	int efd;			/* eventfd: stop and DOORBELL wake-ups */
	/*
	 * The client's doorbell: a pipe whose write end it got with the
	 * reply to its hello. Its own open file, apart from ours: whatever
	 * it does to it (flags, a full pipe) reaches no thread but its
	 * runner. We keep the write end open too, so the read end never
	 * sees an end of file.
	 */
	int bell[2];

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
	uint64_t kaddrs[PTO2_MAX_KERNELS];
	_Atomic int32_t ktype[PTO2_MAX_KERNELS];	/* -1: not registered */

	/*
	 * Blobs a kernel id stopped naming while a run was in flight (its
	 * tasks may have read the old address from c->kaddrs[]): d->dev_lock
	 * protects them; the runner drops them when that run has drained
	 * (run_leave), the main thread at destruction.
	 */
	struct ptod_pinset old_kpins;

	/* runner thread */
	pthread_t runner;
	bool runner_live;
	_Atomic int stop_err;		/* != 0: stop (client gone, shutdown) */
	char serr[192];			/* runner: why it refused the stream
					 * (stop_err -EPROTO) */
	_Atomic int in_run;		/* a run of it is in progress */
	/* main thread (ptod_drain.c): when it was stopped, 0 = not yet */
	int64_t stop_ns;
	bool drain_forced;		/* its kernels' executor was killed */
	/*
	 * send_lock protects the output queue (@out_head .. @out_since) and
	 * serializes writes to @sock (ptod_client.c).
	 */
	pthread_mutex_t send_lock;
	struct ptod_out *out_head;	/* replies @sock did not take yet */
	struct ptod_out **out_tail;
	size_t out_bytes;		/* their cost, at most d->out_max */
	unsigned int out_nfds;		/* descriptors they hold, at most
					 * PTOD_OUT_FDS */
	int64_t out_since;		/* ns: last progress of the queue */
	_Atomic bool out_dead;		/* being dropped: sends fail */
	struct event *ev_write;		/* main loop: @sock has room */

	/* current graph: runner thread only */
	uint64_t tag;
	uint32_t seq;			/* SUBMIT records of it so far */
	struct ptod_pinset run_pins;	/* its tensors', until it drained */
	/*
	 * The graph's intermediates by placeholder idx (ptod_runner.c,
	 * ph_new): a ring of ph_cap entries (a power of 2) holding the
	 * newest of idx 1 .. ph_hi; it grows up to what can be live (the
	 * task window x PTO2_MAX_TASK_PARAMS), never to the idx a client
	 * writes.
	 */
	struct ptod_ph *ph;
	uint32_t ph_cap;
	uint32_t ph_hi;			/* highest idx of the graph so far */
	/*
	 * The graph's clusters by id (ptod_runner.c, handle_cluster): the
	 * vid the graph allocated cluster i as, 0: none; the device's ncl
	 * clusters, so the table is as large as what can be live, never as
	 * a vid the client writes. Allocated at the first CLUSTER_ALLOC.
	 */
	int32_t *cl;
	uint32_t ncl;
	uint32_t cl_hi;			/* highest vid allocated so far */
	int gerr;			/* the daemon's own error of the graph */
	char gmsg[1024];
	bool err_sent;
	bool runs_waited;		/* dev_lock: this graph waited for -D, said */
	uint64_t nr_outside;		/* records it wrote outside a graph */
	/* private copy of the current record, read as its struct */
	_Alignas(PTO_REC_ALIGN) uint8_t rec[PTOD_REC_MAX];

	/*
	 * The client's sandbox (ptod_sandbox.c, main thread): @sbx is its
	 * number (0: the kernels run in pto-aicore), @sbx_pid the process
	 * (0: none; written under d->dev_lock while the runner lives, which
	 * reads it in run_admit()), @sbx_pidfd its pidfd (-1: none; passed
	 * to pto-aicore with the ADD), @sbx_mfd its mailbox, @sbx_err what it writes to its
	 * standard error (NULL: none); @heap_pin our read-only mapping of
	 * the heap buffer, which keeps it allocated. @sbx_crashes: crashes
	 * since @sbx_crash_t0 (PTOD_SBX_CRASHES in PTOD_SBX_CRASH_WINDOW_NS
	 * restart it); @sbx_gave_up (under d->dev_lock): not restarted, the
	 * client's graphs fail (its note says why); @sbx_swapping (under
	 * d->dev_lock): from the reap of a crashed sandbox until pto-aicore
	 * has the new one (or the client has none), when a graph let in
	 * would send its tasks to the dead sandbox.
	 */
	gid_t gid;
	uint32_t sbx;
	pid_t sbx_pid;
	int sbx_pidfd;
	int sbx_mfd;
	struct ptod_sbx_err *sbx_err;
	uint32_t sbx_crashes;
	int64_t sbx_crash_t0;
	bool sbx_gave_up;
	bool sbx_swapping;
	void *heap_pin;
	size_t heap_len;
	uint32_t heap_handle;		/* its GM_ALLOC handle, 0: none */

	/* set by the main thread under d->dev_lock (executor or sandbox death) */
	char note[512];

	/* lines about its graphs (ptod_clog(), any thread), under log_lock */
	pthread_mutex_t log_lock;
	struct ptod_rate log_rate;

	/*
	 * What ptoctl sees (ptod_info.c): @since_ns and @ctx are set once
	 * (accept, hello); @runs and @tasks_done by the runner; @graph (its
	 * graph in flight, if @graph_live) under d->graphs_lock, but
	 * @submitted, which the runner counts as it goes.
	 */
	int64_t since_ns;
	uint32_t ctx;
	_Atomic uint64_t runs;
	_Atomic uint64_t tasks_done;
	_Atomic uint64_t submitted;
	struct pto_graph_info graph;
	int64_t graph_t0;		/* CLOCK_MONOTONIC ns of its start */
	bool graph_live;
	/* a trace subscriber (main thread) and the blocks it lost */
	bool tracing;
	uint64_t trace_lost;

	struct client *fin_next;	/* d->fin list (fin_lock) */
};

/*
 * The closer (ptod_closer.c): descriptors a client chose, which may take
 * long to close, closed off the main thread. Each user with some waiting
 * has a lane of them and a thread of its own, so that a close that never
 * ends holds up that user's alone.
 */
struct ptod_closer_lane;
struct ptod_closer {
	bool live;			/* started, not stopped (main thread) */
	pthread_mutex_t lock;		/* protects what follows */
	pthread_cond_t gone;		/* signalled: a lane's thread ended */
	/* users with descriptors closing, each lane with its thread */
	struct ptod_closer_lane *lanes;
	bool stop;
	/* a lane's thread did not start: said once, until one starts again */
	bool start_failed;
	/* queued and busy, all users: written under @lock, read without it */
	atomic_uint held;
};

/* A value per user, from the UID=N options of one kind (ptod_rule_add()) */
struct ptod_uid_rules {
	struct {
		uid_t uid;
		uint64_t v;
	} rule[PTOD_MAX_UID_RULES];
	uint32_t nr;
};

struct ptod {
	struct event_base *base;
	const char *dev_path;
	const char *sock_path;
	const char *aicore_path;
	char aicore_buf[PATH_MAX];	/* the default aicore_path */
	const char *sandbox_path;
	char sandbox_buf[PATH_MAX];	/* the default sandbox_path */
	bool verbose;
	uint32_t aicore_spins;
	uint32_t def_task_window;
	uint64_t def_heap;
	/* HWS context of each user's clients (-x UID=CTX); others: 0 */
	struct ptod_uid_rules ctx_rules;
	/* access control and limits (ptod_client.c) */
	mode_t sock_mode;		/* -m */
	bool sock_mode_set;
	const char *sock_group;		/* -g, or "pto" if it exists, or NULL */
	gid_t sock_gid;			/* (gid_t)-1: none */
	uid_t allow_uid[PTOD_MAX_ALLOW];	/* -u */
	uint32_t nr_allow;
	uint32_t max_conn_uid;		/* -c, 0 = unlimited */
	uint32_t max_conn;		/* -C, 0 = unlimited */
	uint32_t max_runs_uid;		/* -D, 0 = unlimited */
	uint32_t max_clusters_uid;	/* -L, 0 = unlimited;
					 * PTOD_CLUSTERS_HALF: half */
	size_t out_max;			/* -Q */
	uint32_t out_ms;		/* -T */
	uint64_t gm_quota;		/* -q MIB, bytes; 0 = none */
	struct ptod_uid_rules quota_rules;	/* -q UID=MIB, in MiB */
	const char *rec_path;		/* -R: recordings of the runs */
	uint64_t sched_sleep_ns;	/* PTO_SCHED_SLEEP_MS; 0: the engine's */
	bool hws_check;			/* PTO_HWS_CHECK=1 */
	FILE *rec_file;
	int64_t start_ns;		/* the recordings' time 0 */

	/* device, AICPU role: set up before any thread starts */
	const struct ptod_dev_ops *ops;
	int dev_fd;			/* pto.ko: the AICPU's file */
	atomic_bool irq_wake_failed;	/* pto.ko: a wake-up failed (said once) */
	dev_t dev_rdev;
	struct ptod_udev *udev;		/* the user-mode device */
	const char *exec_opt;		/* pto-aicore's device option... */
	char exec_arg[64];		/* ...its argument... */
	int exec_fds[2];		/* ...and descriptors it inherits */
	struct pto_info info;
	void *regs;			/* the register file */
	struct pto_gm_map gm;		/* all of GM */
	struct pto2_device pdev;

	int listen_fd;
	struct event *ev_listen;
	/* lines about connections (ptod_conn_log(), main thread) */
	struct ptod_rate conn_rate;
	/*
	 * An accept failed (no descriptor left) or the closer is full:
	 * @ev_listen is not watched until @ev_pause fires; @accept_failing:
	 * said, none accepted since. @reads_paused: clients whose reads wait
	 * for the closer (struct client), resumed when @ev_pause fires.
	 */
	struct event *ev_pause;
	bool accept_failing;
	unsigned int reads_paused;
	struct event *ev_sig[PTOD_NR_SIGS];	/* SIGTERM, SIGINT, SIGCHLD */
	struct event *ev_timer;		/* executor restart / crash fix-up */
	struct event *ev_fin;		/* runner finished (fin_efd) */
	struct event *ev_ready;		/* executor ready pipe */
	struct event *ev_drain;		/* stopped clients' runs (ptod_drain.c) */
	uint32_t drain_grace_ms;	/* -G */
	uint64_t sbx_data;		/* -M: a sandbox's RLIMIT_DATA, 0: none */
	int sbx_cg;			/* the sandboxes' cgroup, -1: none */
	bool sbx_pids;			/* ... with the pids controller */
	uint32_t sbx_tasks;		/* -P: its RLIMIT_NPROC, 0: none */
	char sbx_opt;			/* the first of -b -M -P given, or 0 */
	int64_t shutdown_ns;		/* 0 = not shutting down */
	int fin_efd;

	struct client *clients;		/* main thread */
	uint32_t next_id;		/* the last client id given */
	struct ptod_closer closer;

	/*
	 * Sandboxes (main thread): whose kernels run in one (-K), the
	 * numbers in use, our end of the control channel to pto-aicore
	 * (-1: none).
	 */
	int sbx_mode;
	bool sbx_used[PTO_SBX_MAX + 1];
	int sbx_ctl;
	/*
	 * Per user but root whose sandbox starts are not all paid for yet:
	 * when they are (CLOCK_MONOTONIC ns; PTOD_SBX_STARTS_RATE a second,
	 * up to PTOD_SBX_STARTS_BURST ahead). Main thread.
	 */
	struct { uid_t uid; int64_t paid_ns; } *sbx_starts;
	uint32_t nr_sbx_starts, cap_sbx_starts;

	/* pto.ko's netlink events (ptod_nl.c, main thread), NULL: none */
	struct ptod_nl *nl;

	/*
	 * executor (main thread); @exec_old: one whose death the device
	 * reported and ptod handled, not reaped yet (SIGCHLD reaps it)
	 */
	pid_t exec_pid;
	pid_t exec_old;
	int exec_ready_fd;
	uint32_t exec_restarts;
	int64_t exec_dead_since;	/* ns, 0 = alive */
	char exec_death[384];
	char exec_kill_why[256];	/* ptod killed it: why ("" = it died) */

	/*
	 * The device's scheduler: every client's runtime is created over it
	 * (pdev.engine), so that all of them share every core task by task.
	 */
	struct pto2_engine *engine;

	/*
	 * dev_lock protects @exec_ready, @shutting_down, @uid_runs,
	 * client->note, client->old_kpins and client->in_run transitions;
	 * dev_cond signals their changes.
	 */
	pthread_mutex_t dev_lock;
	pthread_cond_t dev_cond;
	bool exec_ready;
	bool shutting_down;
	/*
	 * graphs running (in_run) per user but root that ever ran one under
	 * -D: an entry stays, with 0, once its user's graphs ended
	 */
	struct { uid_t uid; uint32_t runs; } *uid_runs;
	uint32_t nr_uid_runs, cap_uid_runs;

	/*
	 * clients_log_lock protects @clients_log_rate: the lines of every
	 * client's graphs and sandbox together, and @user_log: those of
	 * the users that logged lately, one user's clients together
	 * (ptod_clients_log_take())
	 */
	pthread_mutex_t clients_log_lock;
	struct ptod_rate clients_log_rate;
	struct { uid_t uid; struct ptod_rate rate; } user_log[PTOD_USER_LOG_SLOTS];

	/* fin_lock protects @fin: clients whose runner has finished */
	pthread_mutex_t fin_lock;
	struct client *fin;

	/*
	 * graphs_lock protects @done (the last PTO_GRAPHS_KEPT graphs that
	 * ended, @ndone of them ever, the latest at (@ndone - 1) %
	 * PTO_GRAPHS_KEPT) and every client's @graph and @graph_live.
	 */
	pthread_mutex_t graphs_lock;
	struct pto_graph_info done[PTO_GRAPHS_KEPT];
	uint64_t ndone;

	/*
	 * Tracing (ptod_info.c): while @nr_tracers (main thread) is not 0 the
	 * engine's block hook puts every block into @tring; trace_lock
	 * protects @tring, @tr_n and @tr_lost (blocks that did not fit); the
	 * hook writes @trace_efd when @tring stops being empty and the main
	 * loop swaps it with @tr_spare (main thread) and hands the blocks to
	 * the subscribers.
	 */
	uint32_t nr_tracers;
	pthread_mutex_t trace_lock;
	struct pto_trace_block *tring;	/* PTOD_TRACE_RING */
	struct pto_trace_block *tr_spare;
	uint32_t tr_n;
	uint64_t tr_lost;
	int trace_efd;
	struct event *ev_trace;
};

/*
 * ptod_logtext.c: @buf made fit for one line of the log, in place: every
 * UTF-8 character kept that is well formed and printable (no control, no
 * line or paragraph separator, no bidirectional formatting character),
 * each byte or character of the rest shown as one '?'.
 */
void ptod_log_clean(char *buf);

/*
 * ptod_logtext.c: where the @len bytes at @buf, a piece of a longer text,
 * end a line without cutting a UTF-8 character in two: @len, or less by
 * the 1-3 bytes they end with that are a lead byte (0xc2..0xf4) and
 * fewer continuation bytes than it calls for (which then start the next
 * piece). A byte that is no lead byte is no reason to move a cut.
 */
size_t ptod_log_cut(const char *buf, size_t len);

/* ptod.c */
__attribute__((format(printf, 2, 3)))
void ptod_log(int level, const char *fmt, ...);
__attribute__((format(printf, 3, 4)))
void ptod_reply(struct client *c, int status, const char *fmt, ...);
/*
 * A line about @c's graphs, at most PTOD_LOG_RATE a second, and within all
 * clients' PTOD_CLIENTS_LOG_RATE (any thread).
 */
__attribute__((format(printf, 3, 4)))
void ptod_clog(struct client *c, int level, const char *fmt, ...);
void ptod_clog_flush(struct client *c);
/*
 * A line about a connection or its messages, at most PTOD_CONN_LOG_RATE
 * a second for all (main thread).
 */
__attribute__((format(printf, 3, 4)))
void ptod_conn_log(struct ptod *d, int level, const char *fmt, ...);
/*
 * May a line about a client of user @uid's graphs, or from its sandbox,
 * be logged in this second, all that user's clients together
 * (PTOD_USER_LOG_RATE) and all clients together (PTOD_CLIENTS_LOG_RATE)?
 * Any thread. A refused line is counted as @n lines (1, or the count a
 * "not logged" line carries), said in one line once the second is over.
 */
bool ptod_clients_log_take(struct ptod *d, uid_t uid, uint64_t n);
/*
 * A new client's id (main thread): the one after the last given,
 * skipping 0 and the ids of clients still connected, so that even after
 * 2^32 connections no two live clients share one (the trace names a
 * block's client by its id, and gives it to that client's uid alone).
 */
static inline uint32_t ptod_client_id_next(struct ptod *d)
{
	const struct client *c;
	uint32_t id = d->next_id;

again:
	if (!++id)
		id = 1;
	for (c = d->clients; c; c = c->next)
		if (c->id == id)
			goto again;
	d->next_id = id;
	return id;
}

static inline struct pto_core_regs *ptod_core(struct ptod *d, uint32_t c)
{
	return pto_regs_core(d->regs, c);
}
static inline void *ptod_gm(struct ptod *d, uint64_t dev, uint64_t len)
{
	return pto_gm_ptr(&d->gm, dev, len);
}
void ptod_sibling_path(char *buf, size_t len, const char *name);
/*
 * What a file a client passed is: its type (S_IFMT bits), device, inode
 * and, for a device file, the device it is. From the attributes the
 * kernel holds, never asking the file's filesystem: fstat() on a FUSE
 * file whose server does not answer waits, unkillable, and a hello is
 * checked on the main thread. 0 or -errno.
 */
struct ptod_fd_id {
	unsigned int mode;
	dev_t dev, rdev;
	ino_t ino;
};
int ptod_fd_id(int fd, struct ptod_fd_id *id);
/*
 * The device's events (ptod_nl.c calls them; main thread): the executor
 * @pid closed the device (@event names how we know); cores of @mask were
 * attached by ptod's executor, or by @pid, which is not ptod's; events
 * were lost, look at the device instead; the HWS registers changed.
 */
void ptod_exec_gone_event(struct ptod *d, pid_t pid, const char *event);
void ptod_own_attach(struct ptod *d, const uint64_t *mask);
void ptod_foreign_attach(struct ptod *d, pid_t pid, const uint64_t *mask);
void ptod_events_resync(struct ptod *d);
void ptod_hws_changed(struct ptod *d);
/* ptod_nl.c */
int ptod_nl_start(struct ptod *d);
void ptod_nl_stop(struct ptod *d);
/*
 * One received message: an event of family @family about ptod's device,
 * sent by the kernel, is acted on (NL_OK); anything else is skipped
 * (NL_SKIP). ptod_nl_start()'s callback; tests/test_nl.c feeds it.
 */
struct nl_msg;
int ptod_nl_msg(struct ptod *d, int family, struct nl_msg *msg);
/* ptod_client.c */
struct ucred;
int ptod_send(struct client *c, struct pto_msg *m);
/* The same with descriptors (up to PTO_FDPASS_MAX), queued with it. */
int ptod_send_fds(struct client *c, struct pto_msg *m, const int *fds,
		  unsigned int nfds);
int ptod_client_init(struct client *c);
void ptod_client_fini(struct client *c);
int ptod_accept_check(struct ptod *d, int s, const struct ucred *cred);
int ptod_socket_perms(struct ptod *d);
int ptod_socket_dir_check(const char *dir);
void ptod_guard_defaults(struct ptod *d);
int ptod_guard_option(struct ptod *d, int opt, const char *arg);
int ptod_rule_add(struct ptod_uid_rules *t, int opt, const char *arg,
		  uint64_t max, const char *what);
int ptod_guard_setup(struct ptod *d);
int ptod_gm_quota_setup(struct ptod *d);
void ptod_gm_quota_why(struct ptod *d, uid_t uid, uint64_t bytes, char *why,
		       size_t whylen);
/* The same with @len bytes of @m (binary replies). */
int ptod_send_len(struct client *c, struct pto_msg *m, size_t len);
/*
 * Best effort: queued only if the client's queue stays within half of
 * its bound (-Q), else -ENOBUFS and the client stays. Never waits.
 */
int ptod_send_try(struct client *c, struct pto_msg *m, size_t len);
/* ptod_info.c: what ptoctl asks (CLIENTS, GRAPHS, TRACE, TRACE_STOP) */
bool ptod_info_message(struct client *c, struct pto_msg *m);
void ptod_graph_begin(struct client *c);
void ptod_graph_end(struct client *c, int status,
		    const struct pto_graph_stats *st);
int ptod_trace_setup(struct ptod *d);
void ptod_trace_fini(struct ptod *d);
void ptod_trace_client_gone(struct client *c);
/* ptod_closer.c */
void ptod_closer_start(struct ptod *d);
void ptod_closer_stop(struct ptod *d);
void ptod_close_later(struct ptod *d, uid_t uid, int fd);
bool ptod_closer_full(struct ptod *d);
ssize_t ptod_peek(int s, bool *carries);
void ptod_close_fds_later(struct ptod *d, uid_t uid, const int *fds,
			  unsigned int n);
void ptod_sock_close(struct ptod *d, uid_t uid, int s);
unsigned int ptod_closing(struct ptod *d, uid_t uid);
/* ptod_drain.c */
void ptod_drain_watch(struct client *c);
void ptod_drain_shutdown(struct ptod *d);
int ptod_drain_setup(struct ptod *d);
void ptod_drain_teardown(struct ptod *d);
/* ptod_runner.c */
void *ptod_runner_main(void *arg);
/* ptod_pins.c */
int ptod_pin_range(struct client *c, struct ptod_pinset *s, uint64_t addr,
		   uint64_t len);
const struct ptod_pin *ptod_pin_find(const struct ptod_pinset *s,
				     uint64_t addr);
int ptod_pin_drop(struct ptod *d, struct ptod_pinset *s, uint64_t addr);
int ptod_pin_move(struct ptod *d, struct ptod_pinset *from,
		  struct ptod_pinset *to, uint64_t addr);
void ptod_pins_release(struct ptod *d, struct ptod_pinset *s);
void ptod_pins_free(struct ptod *d, struct ptod_pinset *s);

/* ptod_sandbox.c */
/* -K; DEFAULT: not given, nonroot on pto.ko, none on the user device */
enum { PTOD_SBX_DEFAULT, PTOD_SBX_NONROOT, PTOD_SBX_ALL, PTOD_SBX_NONE };
int ptod_sbx_parse_mode(struct ptod *d, const char *s);
/* After the options: the mode for the device, or -EINVAL (said on stderr). */
int ptod_sbx_settle_mode(struct ptod *d);
/* A new control channel: pto-aicore's end, every ADD queued on it. */
int ptod_sbx_ctl_open(struct ptod *d);
void ptod_sbx_ctl_close(struct ptod *d);
/* hello: 0, or -errno and a message in @err */
int ptod_sbx_client_start(struct client *c, char *err, size_t len);
void ptod_sbx_client_stop(struct client *c);
/* true if @pid was a sandbox */
bool ptod_sbx_reaped(struct ptod *d, pid_t pid, int status);
/*
 * Whether the sandbox process @pid has exited and the main thread has not
 * finished reaping it (any thread; it is not reaped here).
 */
bool ptod_sbx_exited(pid_t pid);
/*
 * "@what (errno @err)" on standard error with async-signal-safe calls
 * only, for a child of fork() (ptod has threads: stdio's lock may be
 * held by one that the child does not have). A sandbox's standard error
 * is the pipe ptod logs after the sandbox's name; pto-aicore's is ptod's.
 */
void ptod_child_warn(const char *what, int err);
/* A sandbox's memory: its RLIMIT_DATA, bytes (-M and the worker stacks). */
uint64_t ptod_sbx_mem_limit(const struct ptod *d);

/*
 * The decimal digits of @v, ending just before @end (NUL-terminated
 * there): their start. Async-signal-safe, for a forked child; @end - 20
 * must be inside the buffer.
 */
static inline char *ptod_utoa(char *end, uint64_t v)
{
	*end = 0;
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* ptod_cgroup.c: a memory cgroup per sandbox process */
#define PTOD_CG_NAME_LEN	32	/* "sbx-PID" and its NUL */
/*
 * A sandbox cgroup's memory.max over its RLIMIT_DATA: what the cgroup
 * counts and the rlimit does not (page tables, kernel memory, page cache
 * its kernels read), so that a kernel that uses its whole RLIMIT_DATA
 * gets ENOMEM from malloc(), not the cgroup's SIGKILL.
 */
#define PTOD_SBX_CG_SLACK	(64ULL << 20)
/* The memory.max of a sandbox's cgroup, bytes. */
uint64_t ptod_sbx_cg_limit(const struct ptod *d);
/*
 * Tasks (threads) a sandbox's cgroup may hold over its one worker a core
 * and its main thread: what its kernels start of their own.
 */
#define PTOD_SBX_PIDS_SLACK	64
/*
 * Tasks of ptod's own cgroup (its pids.max: systemd's TasksMax) kept from
 * the sandboxes, for ptod's and pto-aicore's threads, besides two a
 * connection (its runner, and a sandbox's first task, charged to ptod
 * until it joins its leaf) and one a core (pto-aicore's pool):
 * cg_pids() in ptod_cgroup.c.
 */
#define PTOD_PIDS_RESERVE	64
/* The pids.max of a sandbox's cgroup (d->sbx_pids), else 0. */
uint32_t ptod_sbx_cg_pids(const struct ptod *d);
/* At start, main thread: d->sbx_cg, or -1 (said why). */
void ptod_sbx_cg_setup(struct ptod *d);
void ptod_sbx_cg_close(struct ptod *d);
/* "sbx-PID" into @buf of PTOD_CG_NAME_LEN bytes; async-signal-safe. */
void ptod_sbx_cg_name(char *buf, pid_t pid);
/*
 * In the sandbox's child, still root: make the leaf of this process under
 * @base, limited to @limit bytes and (unless 0) @pids tasks, and join it.
 * 0 or -errno; async-signal-safe.
 */
int ptod_sbx_cg_join(int base, uint64_t limit, uint32_t pids);
/* Did the memory cgroup of sandbox process @pid kill it? */
bool ptod_sbx_cg_oom(const struct ptod *d, pid_t pid);
/* Sandbox process @pid was reaped: its leaf goes. */
void ptod_sbx_cg_reaped(const struct ptod *d, pid_t pid);

#define PTOD_LOG_ERR	0
#define PTOD_LOG_WARN	1
#define PTOD_LOG_INFO	2
#define PTOD_LOG_DEBUG	3

#endif /* PTOD_H */
