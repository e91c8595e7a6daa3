// SPDX-License-Identifier: MIT
/*
 * pto_kload.h - kernels uploaded into GM, loaded into the executor
 *
 * A client uploads a kernel as a blob in one of its GM buffers
 * (function_bin_addr: struct pto_kblob_hdr + the .so bytes, wire.h). An
 * executor that runs it (pto-aicore for its own clients, pto-sandbox for
 * its client) copies the .so into a memfd, dlopens /proc/self/fd/N and
 * keeps it, cached by (device address, upload id): a buffer reused for
 * another kernel is never mistaken for the old one.
 *
 * The cache is bounded. A lookup that finds the address holding another
 * upload drops the old kernel (that buffer now holds a different one);
 * past @max entries the least recently used kernel that no core runs is
 * unloaded. A kernel is unloaded (dlclose, memfd closed) only once it is
 * out of the cache and no core runs it: pto_kcache_get() returns a
 * reference that the caller gives back with pto_kcache_put() once the
 * kernel has returned.
 */
#ifndef PTO_KLOAD_H
#define PTO_KLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_kernel.h>
#include <pto-private/dispatch.h>
#include <pto-private/wire.h>

struct pto_exec;
struct pto_kentry;

/*
 * Kernels a cache keeps: PTO_KCACHE_MAX (wire.h) by default, at most
 * this many (pto-aicore -k): each holds a descriptor.
 */
#define PTO_KCACHE_MAX_LIMIT	65536

/**
 * struct pto_kcache - the kernels one executor process has loaded.
 * @lock: protects @mru, @lru, @nr, @held and the counters, every
 *	entry's links and reference count; serializes loading.
 * @mru: the cached kernels, most recently used first (NULL: none)...
 * @lru: ...and the least recently used one.
 * @nr: kernels in the list.
 * @max: most kernels in the list: one more evicts the least recently
 *	used kernel that no core runs (while every one is running, the
 *	list is longer until one returns).
 * @held: kernels out of the list that a core still runs (dropped as
 *	stale, unloaded when it returns).
 * @loads: kernels loaded.
 * @unloads: kernels unloaded (dlclose and memfd closed).
 * @kept: kernels that dlclose left loaded (RTLD_NODELETE, unique
 *	symbols): their memfd stays open, so that /proc/self/fd/N still
 *	names only them.
 * @verbose: log every kernel loaded and unloaded.
 */
struct pto_kcache {
	pthread_mutex_t lock;
	struct pto_kentry *mru;
	struct pto_kentry *lru;
	uint32_t nr;
	uint32_t max;
	uint32_t held;
	uint64_t loads;
	uint64_t unloads;
	uint64_t kept;
	bool verbose;
};

/**
 * struct pto_kcache_stats - what a cache holds and did.
 * @entries: kernels in the cache.
 * @held: kernels out of the cache that a core still runs.
 * @loads: kernels loaded.
 * @unloads: kernels unloaded.
 * @kept: kernels that could not be unloaded (their memfd stays open).
 */
struct pto_kcache_stats {
	uint32_t entries;
	uint32_t held;
	uint64_t loads;
	uint64_t unloads;
	uint64_t kept;
};

/* An empty cache of at most @max kernels (0: PTO_KCACHE_MAX). */
void pto_kcache_init(struct pto_kcache *kc, uint32_t max, bool verbose);

/*
 * Unload every kernel of the cache (@ex: for messages); none may be
 * running (every reference given back).
 */
void pto_kcache_destroy(struct pto_kcache *kc, struct pto_exec *ex);

/*
 * The kernel blob at device address @addr, read through @ex's mapping of
 * GM, loading it the first time; @core names the core in messages
 * (ex->ops->log). 0 and *@fn, its entry point, and *@ref, a reference
 * that keeps it loaded until pto_kcache_put(); or -EFAULT (outside the
 * mapping), -ENOEXEC (no blob, or no loadable kernel), -ENOMEM, -errno,
 * and no reference.
 */
int pto_kcache_get(struct pto_kcache *kc, struct pto_exec *ex, uint64_t addr,
		   uint32_t core, pto_kernel_entry_fn *fn,
		   struct pto_kentry **ref);

/*
 * pto_exec_ops.kernel of an executor that loads kernels from GM: the
 * kernel of the task in @p (function_bin_addr; 0: -ENOSYS) through
 * pto_kcache_get(), *@ref for pto_kcache_put().
 */
int pto_kcache_task(struct pto_kcache *kc, struct pto_exec *ex,
		    const PTO2DispatchPayload *p, uint32_t core,
		    pto_kernel_entry_fn *fn, void **ref);

/*
 * Give back a reference of pto_kcache_get() once its kernel returned
 * (@ex: for messages).
 */
void pto_kcache_put(struct pto_kcache *kc, struct pto_exec *ex,
		    struct pto_kentry *ref);

void pto_kcache_get_stats(struct pto_kcache *kc, struct pto_kcache_stats *st);

#endif /* PTO_KLOAD_H */
