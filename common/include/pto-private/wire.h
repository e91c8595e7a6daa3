// SPDX-License-Identifier: MIT
/*
 * wire.h - formats shared by libpto, ptod and pto-aicore
 *
 * Three formats live here, all documented in Documentation/runtime.rst:
 *
 *  1. The kernel blob: what libpto writes into a client GM buffer before
 *     the bytes of a kernel .so; the dispatch payload's function_bin_addr
 *     points at this header and pto-aicore loads the .so from it.
 *  2. The submission stream: a single-producer (client) single-consumer
 *     (ptod) ring of records in a client-owned GM buffer. The client's
 *     orchestration appends SUBMIT / SCOPE / GRAPH records; ptod replays
 *     them into its pto2 runtime. Virtio-style suppression both ways:
 *     ptod sets @reader_parked before it sleeps and the client sends a
 *     socket doorbell only if it finds the flag set; the client sets
 *     @writer_waiting when the ring is full and ptod sends MSG_SPACE only
 *     if it finds that flag set.
 *  3. The control messages on the unix socket (SOCK_SEQPACKET: one
 *     message per packet).
 *
 * Not an installed header: these formats may change together with the
 * three programs, which are always built from one tree.
 */
#ifndef PTO_PRIVATE_WIRE_H
#define PTO_PRIVATE_WIRE_H

#include <errno.h>
#include <stdatomic.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <linux/pto.h>
#include <pto/libpto.h>
#include <pto/pto_orchestration_api.h>

#include "env.h"

/* ---- 1. Kernel blob ------------------------------------------------------ */

#define PTO_KBLOB_MAGIC		0x4b4f5450u	/* "PTOK" */
#define PTO_KBLOB_VERSION	1
#define PTO_KBLOB_HDR_SIZE	64
#define PTO_KBLOB_MAX_SIZE	(64u << 20)	/* .so bytes */

/**
 * struct pto_kblob_hdr - header before a kernel .so in GM (64 bytes).
 * @magic: PTO_KBLOB_MAGIC.
 * @version: PTO_KBLOB_VERSION.
 * @size: bytes of the .so that follow the header.
 * @uid: 64-bit random id of this upload: pto-aicore caches loaded kernels
 *	by (device address, @uid), so a buffer reused for another kernel is
 *	never mistaken for the old one.
 * @func_id: the kernel id it was registered as (diagnostics).
 * @core_type: PTO2_WORKER_CUBE or PTO2_WORKER_VECTOR (diagnostics).
 */
/*
 * Kernels an executor (pto-aicore, a sandbox) keeps loaded by default,
 * least recently used unloaded first (daemon/exec/pto_kload.h).
 */
#define PTO_KCACHE_MAX		256

struct pto_kblob_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	uint64_t uid;
	int32_t func_id;
	int32_t core_type;
	uint8_t reserved[32];
};

/* ---- 2. Submission stream ------------------------------------------------ */

#define PTO_STREAM_MAGIC	0x4d525453u	/* "STRM" */
#define PTO_STREAM_HDR_SIZE	512
#define PTO_STREAM_DEFAULT_SIZE	(1u << 20)	/* whole buffer */

/**
 * struct pto_stream_hdr - start of the stream buffer.
 * @magic, @data_size: set by the client before hello; @data_size is a
 *	power of two, the data area follows the header.
 * @head: bytes produced (client, release), monotonic.
 * @tail: bytes consumed (ptod, release), monotonic.
 * @reader_parked: ptod sets it (seq_cst) before it sleeps; the client
 *	exchanges it with 0 after publishing and, if it was 1, rings the
 *	doorbell: it writes a byte to the pipe whose write end came with
 *	the REPLY to its HELLO (the reader sleeps on its read end), or
 *	sends MSG_DOORBELL, which wakes the reader through ptod's main
 *	thread.
 * @writer_waiting: the client sets it when the ring is full; ptod
 *	exchanges it with 0 after consuming and sends MSG_SPACE if it was 1.
 */
struct pto_stream_hdr {
	uint32_t magic;
	uint32_t data_size;
	alignas(64) _Atomic uint64_t head;
	alignas(64) _Atomic uint64_t tail;
	alignas(64) _Atomic uint32_t reader_parked;
	alignas(64) _Atomic uint32_t writer_waiting;
};

_Static_assert(sizeof(struct pto_stream_hdr) <= PTO_STREAM_HDR_SIZE,
	       "stream header too large");

/*
 * Record types. Every record starts with struct pto_rec; its length is
 * PTO_REC_LEN() of its contents' size, a multiple of PTO_REC_ALIGN (a
 * header's size), and ptod refuses any other. As the ring's size is a
 * power of two no smaller, every record starts on a multiple of
 * PTO_REC_ALIGN and the end of the ring is either reached exactly or at
 * least a header away. A record never wraps: a PAD record fills the end
 * of the ring instead.
 */
#define PTO_REC_ALIGN		16u
#define PTO_REC_LEN(bytes)	\
	((uint32_t)(((bytes) + PTO_REC_ALIGN - 1) & ~(PTO_REC_ALIGN - 1)))

enum {
	PTO_REC_PAD = 1,
	PTO_REC_GRAPH_BEGIN,	/* struct pto_rec_graph */
	PTO_REC_SCOPE_BEGIN,
	PTO_REC_SCOPE_END,
	PTO_REC_SUBMIT,		/* struct pto_rec_submit */
	PTO_REC_GRAPH_END,	/* orchestration_done */
	PTO_REC_KCOST,		/* struct pto_rec_kcost */
	PTO_REC_CLUSTER_ALLOC,	/* struct pto_rec_cluster */
	PTO_REC_CLUSTER_FREE,	/* struct pto_rec_cluster */
};

struct pto_rec {
	uint32_t type;
	uint32_t len;		/* bytes including this header: PTO_REC_LEN() */
	uint64_t tag;		/* GRAPH_BEGIN / GRAPH_END: the graph's tag */
};

_Static_assert(sizeof(struct pto_rec) == PTO_REC_ALIGN,
	       "a record's alignment is a header's size");

/*
 * Intermediate tensors (make_tensor(), addr 0) get a placeholder address
 * in the client when first passed as an OUTPUT: PTO_PH_BASE | idx << 32,
 * idx counting from 1 per graph (ptod refuses a first OUTPUT whose idx
 * skips one: -EPROTO). ptod binds idx to the address its
 * runtime assigns and translates every later use; the low 32 bits are an
 * offset the orchestration may have added (a moved address names another
 * buffer for the TensorMap, as for any tensor: pto_orchestration_api.h).
 */
#define PTO_PH_BASE		0xff00000000000000ULL
#define PTO_PH_MASK		0xff00000000000000ULL
#define PTO_PH_MAX_IDX		0x00ffffffU
#define PTO_IS_PH(a)		(((a) & PTO_PH_MASK) == PTO_PH_BASE)
#define PTO_PH_IDX(a)		((uint32_t)(((a) >> 32) & PTO_PH_MAX_IDX))
#define PTO_PH_OFF(a)		((uint32_t)(a))
#define PTO_PH_MAKE(i)		(PTO_PH_BASE | ((uint64_t)(i) << 32))

/* GRAPH_BEGIN flags: PTO_GRAPH_STATIC (libpto.h): the graph was complete
 * before release, its tasks carry their priority. */

/**
 * struct pto_rec_graph - GRAPH_BEGIN.
 * @flags: PTO_GRAPH_*.
 * @total_tasks: tasks of a static graph (the HWS's DAG size); 0 if
 *	dynamic.
 */
struct pto_rec_graph {
	struct pto_rec h;
	uint32_t flags;
	uint32_t total_tasks;
	uint64_t reserved;	/* zero: the length is PTO_REC_LEN() */
};

/* KCOST: pto2_rt_set_kernel_cost(kernel_id, est_ns). */
struct pto_rec_kcost {
	struct pto_rec h;
	int32_t kernel_id;
	uint32_t pad;
	uint64_t est_ns;
};

/*
 * CLUSTER_ALLOC / CLUSTER_FREE: the orchestration gets a cluster id at
 * once (@vid, 1, 2, ... per graph; ptod refuses an ALLOC of any other
 * vid: -EPROTO); ptod allocates the real cluster when it replays the
 * record and translates @vid in later records.
 */
struct pto_rec_cluster {
	struct pto_rec h;
	int32_t vid;
	uint32_t pad;
	uint64_t reserved;	/* zero: the length is PTO_REC_LEN() */
};

/* The records of fixed size are written with sizeof() as their length. */
_Static_assert(sizeof(struct pto_rec_graph) % PTO_REC_ALIGN == 0 &&
	       sizeof(struct pto_rec_kcost) % PTO_REC_ALIGN == 0 &&
	       sizeof(struct pto_rec_cluster) % PTO_REC_ALIGN == 0,
	       "a fixed-size record's length is not PTO_REC_LEN()");

struct pto_rec_param {
	int32_t type;		/* PTO_PARAM_* */
	uint32_t pad;
	uint64_t scalar;
	Tensor tensor;		/* valid unless SCALAR */
};

/*
 * SUBMIT: the task, its parameters and its launch (PTO2TaskAttr; a
 * clustered task names the cluster's @vid in attr.cluster_id).
 */
struct pto_rec_submit {
	struct pto_rec h;
	int32_t kernel_id;
	int32_t worker_type;
	int32_t nparams;
	uint32_t pad;
	PTO2TaskAttr attr;
	struct pto_rec_param p[];	/* nparams */
};

/* ---- 3. Control messages --------------------------------------------------- */

/* The device libpto uses when $PTO_DEVICE is this: ptod's user-mode one. */
#define PTO_DEVICE_USER		"user"

#define PTO_WIRE_VERSION	7
#define PTO_DEFAULT_SOCKET	"/run/pto/ptod.sock"

/*
 * ptod's socket, for ptod and its clients alike: @given (a -s option or
 * pto_connect()'s argument; "" is the default), else $PTO_SOCKET unless
 * unset or empty, else PTO_DEFAULT_SOCKET.
 */
static inline const char *pto_socket_path(const char *given)
{
	const char *env = getenv("PTO_SOCKET");

	if (given)
		return *given ? given : PTO_DEFAULT_SOCKET;
	return env && *env ? env : PTO_DEFAULT_SOCKET;
}
#define PTO_MSG_TEXT		3072

enum {
	/* client -> ptod */
	PTO_MSG_HELLO = 1,	/* + SCM_RIGHTS: the client's /dev/ptoN fd */
	PTO_MSG_KERNEL_REG,	/* register a kernel blob */
	PTO_MSG_DOORBELL,	/* stream has records (reader was parked) */
	PTO_MSG_PING,
	/*
	 * client -> ptod, at any time (none needs a hello): the user-mode
	 * device (ptod -d user), whose device side ptod runs. A connection
	 * that opens the device is that client's device "file" from then on;
	 * on pto.ko they are refused with -EOPNOTSUPP.
	 */
	PTO_MSG_DEV_OPEN = 16,	/* reply: u.dev + SCM_RIGHTS: the client's
				 * device file, then GM's memfd */
	PTO_MSG_GM_ALLOC,	/* u.gm (len, align) -> handle, dev_addr... */
	PTO_MSG_GM_FREE,	/* u.gm.handle */
	PTO_MSG_DEV_STATUS,	/* reply: text, the device's counters as
				 * "name value" lines + SCM_RIGHTS: the
				 * register file, read-only */
	PTO_MSG_HWS_CONFIG,	/* u.hws: read, or set (PTO_HWS_CONFIG_SET) */
	/*
	 * client -> ptod, at any time (none needs a hello or a device):
	 * what lives in ptod (ptoctl). u.list.version must be
	 * PTO_INFO_VERSION and u.list.entry_size the size of the entries the
	 * sender expects; anything else gets REPLY -EPROTO with a message.
	 * Every entry is filtered: a caller of uid 0 sees all of them, any
	 * other only those of clients with its own uid.
	 */
	PTO_MSG_CLIENTS = 32,	/* reply: LIST messages of struct
				 * pto_client_info, then REPLY (tag: how
				 * many entries were sent) */
	PTO_MSG_GRAPHS,		/* the same with struct pto_graph_info: the
				 * graphs in flight, then the last
				 * PTO_GRAPHS_KEPT finished ones */
	PTO_MSG_TRACE,		/* REPLY, then TRACE_DATA messages of struct
				 * pto_trace_block for every block that ran,
				 * until TRACE_STOP or the connection ends */
	PTO_MSG_TRACE_STOP,	/* reply (after the last TRACE_DATA): REPLY,
				 * tag: blocks this subscriber lost */
	/* ptod -> client */
	PTO_MSG_REPLY = 100,	/* to HELLO (+ SCM_RIGHTS: the write end of
				 * the stream reader's doorbell pipe) /
				 * KERNEL_REG / PING */
	PTO_MSG_SPACE,		/* stream has room again */
	PTO_MSG_ERROR,		/* the running graph failed (early notice) */
	PTO_MSG_DONE,		/* graph @tag finished with @status */
	PTO_MSG_LIST,		/* u.list: u.list.n entries in @text */
	PTO_MSG_TRACE_DATA,	/* u.list: u.list.n struct pto_trace_block in
				 * @text; u.list.dropped: blocks lost so far */
	PTO_MSG_CLOSING,	/* ptod closes the connection outside any
				 * graph: @status (-EPROTO: a corrupt
				 * stream) and why, in @text */
	PTO_MSG_PTOD_LAST = PTO_MSG_CLOSING,	/* ptod's: REPLY .. this */
};

/*
 * A client forwards the runtime's environment variables at hello (its
 * runtime lives in ptod, not in its own environment): env[i] holds the
 * value of variable i of enum pto_env_var (env.h) if bit i of env_set is
 * set.
 */
#define PTO_HELLO_ENV_N		PTO_ENV_N
#define PTO_HELLO_ENV_LEN	64

struct pto_msg_hello {
	uint32_t wire_version;
	uint32_t env_set;		/* bit i: env[i] valid */
	uint64_t stream_addr;		/* device address of the stream buffer */
	uint64_t stream_len;
	char env[PTO_HELLO_ENV_N][PTO_HELLO_ENV_LEN];	/* enum pto_env_var */
};

struct pto_msg_hello_reply {
	uint32_t ctx_id;		/* ptod's id of the client (probes, log) */
	uint32_t nr_aic;
	uint32_t nr_aiv;
	uint32_t task_window;
	uint64_t heap_size;
};

struct pto_msg_kreg {
	int32_t func_id;
	int32_t core_type;
	uint64_t blob_addr;		/* device address of pto_kblob_hdr */
	uint64_t required_caps;		/* PTO_CAP_* the kernel needs */
	uint64_t est_ns;		/* its declared cost, 0: none */
};

/* DEV_OPEN's reply: the device (gm_mmap_offset: GM offset 0 in the memfd). */
struct pto_msg_dev {
	struct pto_info info;
};

/*
 * GM_ALLOC: @len and @align as PTO_IOC_GM_ALLOC's; the reply has the
 * buffer's @handle, @dev_addr, @len (page-rounded) and @mmap_offset, its
 * offset in GM's memfd. GM_FREE: @handle.
 */
struct pto_msg_gm {
	uint64_t len;
	uint64_t align;
	uint32_t handle;
	uint32_t pad;
	uint64_t dev_addr;
	uint64_t mmap_offset;
};

/* HWS_CONFIG: as PTO_IOC_HWS_CONFIG (@cfg in force in the reply). */
struct pto_msg_hws {
	uint32_t flags;
	uint32_t pad;
	struct pto_hws_cfg cfg;
};

/*
 * CLIENTS / GRAPHS / TRACE requests and LIST / TRACE_DATA replies: the
 * entries are binary, u.list.n of u.list.entry_size bytes each at the
 * start of @text, then a 0 byte (the message is offsetof(text) +
 * n * entry_size + 1 bytes).
 */
#define PTO_INFO_VERSION	1
#define PTO_GRAPHS_KEPT		32	/* finished graphs GRAPHS reports */

struct pto_msg_list {
	uint32_t version;		/* requests: PTO_INFO_VERSION */
	uint32_t entry_size;
	uint32_t n;			/* replies: entries in @text */
	uint32_t pad;
	uint64_t dropped;		/* TRACE_DATA: blocks lost so far */
};

/* pto_client_info.flags */
#define PTO_CLIENT_HELLO	(1u << 0)	/* has a runtime (hello done) */
#define PTO_CLIENT_IN_RUN	(1u << 1)	/* a graph of it is running */
#define PTO_CLIENT_TRACING	(1u << 2)	/* a trace subscriber */

/**
 * struct pto_client_info - one connection to ptod (CLIENTS).
 * @id: ptod's number of the client (DAG names, logs, trace lines).
 * @pid, @uid, @gid: the peer's credentials at connect (SO_PEERCRED).
 * @ctx: the HWS context of its tasks (ptod -x).
 * @sbx_pid: its sandbox process, or 0 (kernels run in pto-aicore).
 * @flags: PTO_CLIENT_*.
 * @since_ns: when it connected (CLOCK_REALTIME ns).
 * @runs: graphs of it that ended (run or refused).
 * @tasks: tasks of its graphs that completed.
 * @out_bytes: bytes queued for it that its socket has not taken yet.
 */
struct pto_client_info {
	uint32_t id;
	int32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint32_t ctx;
	int32_t sbx_pid;
	uint32_t flags;
	uint32_t pad;
	uint64_t since_ns;
	uint64_t runs;
	uint64_t tasks;
	uint64_t out_bytes;
};

/* pto_graph_info.state */
enum { PTO_GRAPH_RUNNING = 1, PTO_GRAPH_DONE, PTO_GRAPH_FAILED };

/**
 * struct pto_graph_info - one graph (GRAPHS).
 * @client, @pid, @uid: whose.
 * @state: PTO_GRAPH_RUNNING, _DONE (status 0) or _FAILED.
 * @status: 0 or the -errno it ended with.
 * @graph: its tag (the client's graph number).
 * @submitted: tasks submitted so far.
 * @done: tasks completed so far.
 * @start_ns: when its run began in ptod (CLOCK_REALTIME ns).
 * @wall_ns: from then to its end, or to now while it runs.
 * @stats: what DONE carried to the client (pto_graph_stats()); zero
 *	while it runs.
 */
struct pto_graph_info {
	uint32_t client;
	int32_t pid;
	uint32_t uid;
	uint32_t state;
	int32_t status;
	uint32_t pad;
	uint64_t graph;
	uint64_t submitted;
	uint64_t done;
	uint64_t start_ns;
	uint64_t wall_ns;
	struct pto_graph_stats stats;
};

/**
 * struct pto_trace_block - one block that ran (TRACE_DATA).
 * @client, @uid: the client whose task it was.
 * @graph: the client's graph tag.
 * @task: the runtime's task id (grows across the client's runs).
 * @kernel: the kernel id.
 * @core: the uapi core number it ran on.
 * @aic: 1 if @core is an AIC, 0 if an AIV.
 * @dispatch, @start, @end: when ptod dispatched it and when the kernel
 *	started and ended: the device's system counter in CLOCK_MONOTONIC
 *	ns (the base the core registers' timestamps convert to).
 */
struct pto_trace_block {
	uint32_t client;
	uint32_t uid;
	uint64_t graph;
	int32_t task;
	int32_t kernel;
	uint32_t core;
	uint32_t aic;
	uint64_t dispatch;
	uint64_t start;
	uint64_t end;
};

/* DONE: the run's statistics (libpto.h). */
struct pto_msg_done {
	struct pto_graph_stats stats;
};

struct pto_msg {
	uint32_t type;
	int32_t status;			/* replies, DONE, ERROR: 0 or -errno */
	uint64_t tag;			/* DONE / ERROR: graph tag */
	union {
		struct pto_msg_hello hello;
		struct pto_msg_hello_reply hello_reply;
		struct pto_msg_kreg kreg;
		struct pto_msg_dev dev;
		struct pto_msg_gm gm;
		struct pto_msg_hws hws;
		struct pto_msg_done done;
		struct pto_msg_list list;
	} u;
	char text[PTO_MSG_TEXT];	/* REPLY/DONE/ERROR: message or "" */
};

/* The largest errno a status may carry (-4095 .. -1, as the kernel's) */
#define PTO_ERRNO_MAX		4095

/*
 * A message of ptod's, @n bytes of it read into @m (at most sizeof(*m)):
 * 0 if it holds its header and at least the byte that ends every message
 * of ptod's, and its status is 0 or -errno; else -EPROTO, a peer that
 * breaks the protocol, and what it broke in @why if given ("a message
 * of N bytes" or "a status of N", in @len bytes with its NUL). The text
 * is cut at what was read, so that it never runs on into what an earlier
 * message left in @m.
 */
static inline int pto_msg_from_ptod(struct pto_msg *m, size_t n,
				    char *why, size_t len)
{
	const size_t hdr = offsetof(struct pto_msg, text);

	if (n < hdr + 1 || n > sizeof(*m)) {
		if (why)
			snprintf(why, len, "a message of %zu bytes", n);
		return -EPROTO;
	}
	m->text[n - hdr - 1] = 0;
	if (m->status > 0 || m->status < -PTO_ERRNO_MAX) {
		if (why)
			snprintf(why, len, "a status of %d", (int)m->status);
		return -EPROTO;
	}
	return 0;
}

/*
 * Entries of @type that fit in one LIST or TRACE_DATA message, which
 * ends with a 0 byte after them (every message of ptod ends with one).
 */
#define PTO_LIST_MAX(type)	((PTO_MSG_TEXT - 1) / sizeof(type))

#endif /* PTO_PRIVATE_WIRE_H */
