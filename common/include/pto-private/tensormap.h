// SPDX-License-Identifier: MIT
/*
 * tensormap.h - tensor region -> producer task map: overlap lookup,
 * newest-first bucket chains, chain truncation, periodic cleanup
 *
 * The one definition of dependencies between tasks: the runtime's
 * orchestrator derives edges with it, and libpto uses it to rank a static
 * graph before release. Owned by one thread at a time; no locking.
 *
 * - Key: the buffer's base address; all views of one buffer hash to the
 *   same bucket, so overlap is decided among them. A granule index (below)
 *   lets a lookup of a small view skip the producers far from it.
 * - Buffer chains are newest-first (insert prepends; producers are
 *   inserted in task order), so in lookup the first stale entry (producer
 *   < last_task_alive) means the rest of the chain is stale too: the tail
 *   is cut off (Layer 1, chain truncation).
 * - Each task's entries are chained (task_entry_head[slot]); every
 *   PTO2_TENSORMAP_CLEANUP_INTERVAL retired tasks, cleanup_retired() frees
 *   the entries of the retired tasks (Layer 2).
 * - Entries come from a fixed pool: free list first, then bump; when both
 *   are empty new entries wait for cleanup (Layer 3, back-pressure, done
 *   by the orchestrator with pto2_tensormap_sync(force)).
 */
#ifndef PTO_PRIVATE_TENSORMAP_H
#define PTO_PRIVATE_TENSORMAP_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_orchestration_api.h>

/* Retired tasks between two cleanups of their entries (Layer 2). */
#define PTO2_TENSORMAP_CLEANUP_INTERVAL	64

enum pto2_overlap {
	PTO2_NO_OVERLAP = 0,
	PTO2_OVERLAP_COVERED,	/* new region fully contains the old one */
	PTO2_OVERLAP_OTHER,	/* partial overlap */
};

/**
 * struct pto2_region - the memory a tensor view touches.
 * @addr: buffer base (the key).
 * @begin: first byte (device address) of the view's hull.
 * @end: one past its last byte.
 * @elem_size: element size.
 * @ndims: dimensions.
 * @contiguous: the view is one dense byte range [begin, end).
 * @raw_shapes: the buffer's shape.
 * @shapes: the view's shape.
 * @offsets: the view's start.
 */
struct pto2_region {
	uint64_t addr;
	uint64_t begin;
	uint64_t end;
	uint32_t elem_size;
	uint8_t ndims;
	uint8_t contiguous;
	uint16_t pad;
	uint64_t raw_shapes[PTO2_MAX_TENSOR_DIMS];
	uint64_t shapes[PTO2_MAX_TENSOR_DIMS];
	uint64_t offsets[PTO2_MAX_TENSOR_DIMS];
};

/* Build @r from @t; -EINVAL if the view is malformed (bad dtype, dims,
 * out-of-range view, shape larger than the buffer). */
int pto2_region_from_tensor(struct pto2_region *r, const Tensor *t);
/* The same for a view pto_tensor_check() accepted already. */
void pto2_region_from_valid_tensor(struct pto2_region *r, const Tensor *t);
enum pto2_overlap pto2_region_overlap(const struct pto2_region *newr,
				      const struct pto2_region *oldr);

/*
 * The granule index. Every entry is on the buffer's chain (PTO2_TM_BUF,
 * keyed by the buffer's base address: every live producer of the buffer,
 * and of buffers whose keys collide), and once indexed on one index chain
 * (PTO2_TM_IDX), keyed by (addr, begin >> PTO2_TM_GRANULE_SHIFT) when its
 * byte hull spans at most PTO2_TM_INDEX_SPAN granules, else by (addr,
 * PTO2_TM_WIDE). Empty entries (begin >= end, which includes a hull
 * wrapped past 2^64) match nothing and are on no index chain.
 *
 * A lookup whose hull spans at most PTO2_TM_INDEX_SPAN granules g0..g1
 * walks the buffer's chain while it has at most tm->short_chain entries
 * (the common case of a buffer with a writer or two: probing would cost
 * more). On a longer chain it indexes the chain's entries not indexed yet
 * (the newest ones: insert does not index, so a buffer that is never
 * looked up this way costs nothing more), then probes the index chains of
 * granules g0 - (SPAN - 1) .. g1 and the WIDE chain: an entry overlapping
 * the view begins at most SPAN - 1 granules before g0 or is WIDE. Hits
 * from several chains are put back in insertion order (newest first, by
 * seq), so the result is the one the buffer's chain gives. A larger
 * lookup walks the buffer's chain.
 *
 * Index chains are not in insertion order (entries join them late), so
 * their walks skip stale entries instead of cutting the chain; cleanup
 * unlinks them. Removal unlinks an entry from its chains in O(1).
 *
 * The entry of the OUTPUT that allocated a buffer (an intermediate's
 * maker, its owner) is also on an owner chain (PTO2_TM_OWN, keyed by the
 * buffer's address), which holds nothing else: pto2_tensormap_owner()
 * finds a buffer's owner however many writes the buffer has.
 *
 * 1 KiB granules and spans of 2: a lookup of a small view probes 3 or 4
 * chains (its 1 or 2 granules, the one before, WIDE); hulls up to 1 KiB
 * (any alignment) and up to 2 KiB (aligned) are indexed. Larger granules
 * put more small tiles on a chain (64-byte slots: 16 per granule), wider
 * spans add probes to every lookup; views with larger hulls (big or
 * strided tiles) share the WIDE chain (Documentation/decisions.rst).
 */
#define PTO2_TM_GRANULE_SHIFT	10
#define PTO2_TM_INDEX_SPAN	2
#define PTO2_TM_WIDE		UINT64_MAX	/* no granule is this large */
/* Default tm->short_chain. */
#define PTO2_TM_SHORT_CHAIN	8
/*
 * A reset clears what the entries in use name, not the whole tables,
 * while they number at most (buckets + window) / PTO2_TM_SPARSE_RESET:
 * an entry costs a few scattered cache lines, the tables' clearing one
 * sequential line per 16 heads.
 */
#define PTO2_TM_SPARSE_RESET	64

enum pto2_tm_chain {
	PTO2_TM_BUF = 0,	/* per-buffer chain */
	PTO2_TM_IDX,		/* granule index chain */
	PTO2_TM_OWN,		/* owners only, keyed as the buffer's chain */
	PTO2_TM_NCHAINS,
};

/*
 * What a lookup reads of every entry on its chain, kept apart from the
 * entries (keys[i] belongs to pool[i]): a chain walk touches 40 bytes per
 * entry, not an entry's 192.
 */
struct pto2_tm_key {
	uint64_t addr;			/* region.addr, .begin, .end */
	uint64_t begin;
	uint64_t end;
	int32_t producer;		/* producer task id */
	int32_t next[PTO2_TM_NCHAINS];	/* per chain; -1 = end */
	uint32_t indexed;		/* considered for the index */
};

struct pto2_tm_entry {
	struct pto2_region region;
	uint64_t seq;			/* insertion order */
	int32_t prev[PTO2_TM_NCHAINS];	/* per chain; -1 = chain head */
	uint32_t head[PTO2_TM_NCHAINS];	/* its head in heads[chain] */
	bool linked[PTO2_TM_NCHAINS];	/* linked in that chain */
	int32_t next_in_task;		/* -1 = end */
	int32_t prev_in_task;		/* -1 = task head */
	bool with_alloc;		/* inserted by OUTPUT (not INOUT) */
	bool in_use;			/* allocated (not on the free list) */
};

struct pto2_tensormap {
	int32_t *heads[PTO2_TM_NCHAINS];	/* [num_buckets] each; -1 = empty */
	uint32_t num_buckets;		/* power of 2 */
	uint32_t bucket_shift;		/* 64 - log2(num_buckets) */
	uint32_t short_chain;		/* see above; tests set 0 */
	struct pto2_tm_entry *pool;	/* [pool_size] */
	struct pto2_tm_key *keys;	/* [pool_size] */
	uint32_t pool_size;
	uint32_t next_entry_idx;	/* bump allocator */
	int32_t *free_entry_list;	/* [pool_size] */
	uint32_t free_num;
	int32_t *task_entry_head;	/* [window], -1 = none */
	uint32_t window_size;
	int32_t last_task_alive;	/* validity threshold */
	int32_t last_cleanup;		/* cleanup done for ids < this */
	uint64_t next_seq;		/* seq of the next insert */
	uint64_t stat_truncated;	/* entries cut by chain truncation */
	uint64_t stat_cleaned;		/* entries freed by cleanup */
};

#define PTO2_LOOKUP_MAX	256

struct pto2_lookup_result {
	int count;
	int32_t entry[PTO2_LOOKUP_MAX];
	enum pto2_overlap status[PTO2_LOOKUP_MAX];
};

int pto2_tensormap_init(struct pto2_tensormap *tm, uint32_t num_buckets,
			uint32_t pool_size, uint32_t window_size);
void pto2_tensormap_destroy(struct pto2_tensormap *tm);
void pto2_tensormap_reset(struct pto2_tensormap *tm);

/* Producers whose regions overlap @r; -E2BIG if more than PTO2_LOOKUP_MAX. */
int pto2_tensormap_lookup(struct pto2_tensormap *tm, const struct pto2_region *r,
			  struct pto2_lookup_result *res);
/* Register @producer as the newest writer of @r; -ENOSPC if the pool is
 * exhausted (the caller syncs with force and retries). */
int pto2_tensormap_insert(struct pto2_tensormap *tm, const struct pto2_region *r,
			  int32_t producer, bool with_alloc);
/* The same for the OUTPUT that allocated @r's buffer (its owner). */
int pto2_tensormap_insert_owner(struct pto2_tensormap *tm,
				const struct pto2_region *r, int32_t producer);
/* The live task that allocated the buffer at @addr, or -1 if none. */
int32_t pto2_tensormap_owner(struct pto2_tensormap *tm, uint64_t addr);
/* Unlink and free one entry. */
void pto2_tensormap_remove_entry(struct pto2_tensormap *tm, int32_t idx);
/* Free the entries of tasks [old_la, new_la). */
void pto2_tensormap_cleanup_retired(struct pto2_tensormap *tm, int32_t old_la,
				    int32_t new_la);
/*
 * Take @last_task_alive as the validity threshold and run cleanup_retired
 * when it advanced by PTO2_TENSORMAP_CLEANUP_INTERVAL or more since the
 * last cleanup (or by anything, with @force). Returns entries freed.
 */
uint32_t pto2_tensormap_sync(struct pto2_tensormap *tm, int32_t last_task_alive,
			     bool force);

static inline bool pto2_tensormap_key_valid(const struct pto2_tensormap *tm,
					    const struct pto2_tm_key *k)
{
	return k->producer >= tm->last_task_alive;
}

/* The producer task of entry @idx. */
static inline int32_t pto2_tensormap_producer(const struct pto2_tensormap *tm,
					      int32_t idx)
{
	return tm->keys[idx].producer;
}

/* Entries an insert can take now. */
static inline uint32_t pto2_tensormap_room(const struct pto2_tensormap *tm)
{
	return tm->free_num + (tm->pool_size - tm->next_entry_idx);
}

static inline bool pto2_tensormap_pool_empty(const struct pto2_tensormap *tm)
{
	return tm->free_num == 0 && tm->next_entry_idx >= tm->pool_size;
}

/*
 * A flag for pto2_tensormap_deps()'s types, or-ed into PTO_PARAM_*: the
 * param lies in an intermediate that an earlier task made. It depends on
 * that task (the owner, pto2_tensormap_owner()) too, whatever part of the
 * buffer the owner wrote: as its consumer it keeps the owner from
 * retiring, and the heap buffer from being reused, until it ran.
 */
#define PTO2_TM_OWNER_EDGE	0x100

/*
 * The producers a task depends on: for each of its @n params whose type
 * (@types, PTO_PARAM_*) is INPUT or INOUT, the producers of the regions
 * overlapping @reg[i]; with PTO2_TM_OWNER_EDGE, the buffer's owner too.
 * Reported to @add in the order found (a
 * producer may be reported more than once; @add dedups). An INOUT that
 * covers an earlier INOUT write (one that did not allocate) drops that
 * entry: later readers depend on this task, which depends on it, so
 * chains stay linear. Returns 0; -E2BIG with *@bad set to the param if
 * one overlaps more than PTO2_LOOKUP_MAX producers; or what @add returned
 * if negative.
 */
int pto2_tensormap_deps(struct pto2_tensormap *tm, const struct pto2_region *reg,
			const int32_t *types, int n,
			int (*add)(void *ctx, int32_t producer), void *ctx,
			int *bad);

/* Entries in use (debug/tests). */
uint32_t pto2_tensormap_used(const struct pto2_tensormap *tm);
/* Entries linked in per-buffer chains (debug/tests). */
uint32_t pto2_tensormap_linked(const struct pto2_tensormap *tm);
/* Entries linked in index chains (debug/tests). */
uint32_t pto2_tensormap_indexed(const struct pto2_tensormap *tm);

#endif /* PTO_PRIVATE_TENSORMAP_H */
