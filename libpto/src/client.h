// SPDX-License-Identifier: MIT
/*
 * client.h - libpto's client state, shared by its source files (private)
 */
#ifndef PTO_LIBPTO_CLIENT_H
#define PTO_LIBPTO_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/pto.h>
#include <pto/libpto.h>
#include <pto-private/wire.h>

#include "pto_device.h"

#define PTO_EXPORT __attribute__((visibility("default")))

/* The PTO2Runtime handle orchestration code sees: the first member of
 * struct pto_client. */
struct PTO2Runtime {
	struct pto_client *c;
};

struct pto_buf {
	struct pto_client *c;	/* NULL once the client disconnected */
	struct pto_buf *all_prev, *all_next;	/* c->bufs: every buffer */
	struct pto_buf *next;	/* c->kblobs (kernel blobs only) */
	int32_t kfunc;		/* kernel blobs: the kernel id */
	struct pto_dev_buf db;	/* what the device backend handed out */
};

/* A graph sent whose outcome pto_graph_wait() has not yet answered. */
struct owed_ent {
	uint64_t tag;
	int lost;	/* -ENOMEM: its DONE came, with no memory to keep it */
	/*
	 * The first failure this process found while the graph was built
	 * (a submit refused here), and its message (NULL: none, or no
	 * memory for it): the graph's outcome if ptod's DONE says 0.
	 */
	int local;
	char *local_msg;
};

struct done_ent {
	uint64_t tag;
	int status;
	char *msg;
	struct pto_graph_stats stats;
};

struct pto_client {
	PTO2Runtime rt;
	int sock;
	int bell;			/* the stream reader's doorbell pipe, or -1 */
	const struct pto_dev_ops *dev_ops;	/* the device backend */
	struct pto_device *dev;		/* our device, role CLIENT */
	struct pto_info info;
	uint32_t nr_aic, nr_aiv;
	uint32_t client_id;	/* ptod's id of this connection (probes) */

	pid_t pid;		/* the process that connected it */
	/*
	 * A private page marked MADV_WIPEONFORK, its first byte 1: a
	 * forked child sees 0, at the cost of a load (owner() in
	 * libpto.c). NULL if the kernel refused: getpid() then.
	 */
	volatile uint8_t *owner_page;
	pto_buf *bufs;		/* every buffer of the client's, not freed */

	/* submission stream */
	pto_buf *stream;
	struct pto_stream_hdr *sh;
	uint8_t *sdata;
	uint32_t ssize;
	uint64_t head;		/* bytes produced (published at each record) */
	bool space;		/* MSG_SPACE received */

	/* graphs */
	uint64_t next_tag;
	uint64_t cur_tag;
	bool in_graph;
	bool in_run;		/* pto_run_ex() is in the orchestration function */
	pthread_t run_thread;	/* the thread that runs it, while in_run */
	bool gone;		/* which called pto_disconnect() */
	bool orch_done;
	bool cur_done;		/* DONE of the graph being built arrived */
	uint32_t next_ph;	/* placeholder index of the current graph */
	uint32_t next_cluster;	/* cluster vid of the current graph */
	uint32_t next_seq;	/* submits of the current graph so far */
	bool stat;		/* the current graph is static: records go to
				 * @sbuf until pto_graph_end ranks them */
	uint8_t *sbuf;
	size_t slen, scap;
	bool check_env;		/* PTO_CHECK=1: every graph is checked */
	struct pto_check *chk;	/* the current graph is checked: its checker */
	int err;		/* current graph: first error (local or ptod's) */
	char errmsg[PTO_MSG_TEXT];

	int lost;		/* why the connection ended, once known */
	char lost_msg[PTO_MSG_TEXT];	/* (ptod's CLOSING, or a message
					 * of ptod's that broke the
					 * protocol): -errno and the reason
					 * as the user reads it, else "" */
	struct owed_ent *owed;	/* graphs sent whose DONE did not come,
				 * or came and was lost */
	size_t nowed, capowed;
	struct done_ent *done;	/* finished graphs not yet waited for */
	struct pto_graph_stats last_stats;	/* of the graph last waited for */
	bool have_stats;
	size_t ndone, capdone;

	pto_buf *kblobs;	/* kernel blobs of the registered kernels */
	pto_buf *kblobs_old;	/* blobs replaced while a graph was in
				 * flight: freed once none is (kblobs_gc) */
	uint64_t graphs_out;	/* graphs sent whose DONE did not come */
	uint64_t kcost[PTO2_MAX_KERNELS];	/* declared ns per kernel */
	char last_error[PTO_MSG_TEXT];
};

/* libpto.c */
__attribute__((format(printf, 3, 4)))
void graph_fail(pto_client *c, int err, const char *fmt, ...);
/* Room for a record of @len bytes (PTO_REC_LEN()) in the stream:
 * blocks while the ring is full; NULL after an error. The caller checked
 * that this is not a forked child (forked()). */
void *stream_reserve(pto_client *c, uint32_t len);
void stream_commit(pto_client *c, uint32_t len);

/* GRAPH_BEGIN with @flags and @total tasks, straight to the stream. */
int graph_begin_rec(pto_client *c, uint32_t flags, uint32_t total);

/*
 * kernel_caps.c: 0 if @so is a kernel image pto-aicore can load (a 64-bit
 * ELF shared object exporting pto_kernel_entry), with *@caps what it
 * declares it needs (PTO_KERNEL_REQUIRES, else 0); else -ENOEXEC (or
 * -ENOMEM) and *@why the reason. @so may be at any address.
 */
int kernel_image_check(const void *so, size_t len, uint64_t *caps,
		       const char **why);

/* graph_static.c: a static graph's records, held and ranked */
void *static_reserve(pto_client *c, uint32_t len);
void static_commit(pto_client *c, uint32_t len);
/* Rank the held graph and write it to the stream: 0 or -errno. */
int static_release(pto_client *c);
void static_free(pto_client *c);

#endif /* PTO_LIBPTO_CLIENT_H */
