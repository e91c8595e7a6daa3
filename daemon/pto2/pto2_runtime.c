// SPDX-License-Identifier: MIT
/*
 * pto2_runtime.c - configuration, runtime life cycle, error state and the
 * orchestrator (task submission, scopes; seed 000 sections 6-8, 11)
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "pto2_internal.h"

/* ---- Configuration -------------------------------------------------------- */

void pto2_config_default(struct pto2_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->task_window = PTO2_TASK_WINDOW_SIZE;
	cfg->heap_size = PTO2_HEAP_SIZE;
	cfg->dep_pool_size = PTO2_DEP_LIST_POOL_SIZE;
	cfg->ready_queue_shards = PTO2_READY_QUEUE_SHARDS;
	cfg->sched_threads = PTO2_SCHED_THREADS;
	cfg->tensormap_pool_size = PTO2_TENSORMAP_POOL_SIZE;
	cfg->tensormap_buckets = PTO2_TENSORMAP_NUM_BUCKETS;
	cfg->warn_interval = PTO2_BLOCK_NOTIFY_INTERVAL;
	cfg->spin_limit = PTO2_FLOW_CONTROL_SPIN_LIMIT;
	cfg->sched_idle_spins = 2000;
	cfg->sched_idle_ns = 20000;
	cfg->sched_sleep_ns = 1000000;
}

/*
 * Environment rules (what pto2_config_from_env accepts):
 *
 *  - A value is a non-empty string of decimal digits, nothing else: no
 *    sign, no spaces, no 0x, no trailing characters. PTO2_RING_HEAP may
 *    end in one suffix K, M or G (either case; x1024, x1024^2, x1024^3).
 *  - PTO2_RING_TASK_WINDOW: a power of 2, 4 <= value <= 4194304 (2^22).
 *  - PTO2_RING_HEAP: 1024 <= value <= 2^40 bytes (after the suffix).
 *  - PTO2_RING_DEP_POOL: 16 <= value <= 268435456 (2^28).
 *  - PTO2_READY_QUEUE_SHARDS: 1 <= value <= 16.
 *  - An unset variable keeps the configured value (the default). A set but
 *    invalid one is an error: -EINVAL, a message naming the variable, its
 *    value and the rule, and the configuration is left unchanged. Nothing
 *    is silently clamped or ignored.
 */
static int parse_u64(const char *s, bool allow_suffix, uint64_t *out)
{
	uint64_t v = 0, mul = 1;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	for (; *p && isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return -EINVAL;
	if (*p && allow_suffix && !p[1]) {
		switch (*p) {
		case 'k': case 'K': mul = 1ULL << 10; break;
		case 'm': case 'M': mul = 1ULL << 20; break;
		case 'g': case 'G': mul = 1ULL << 30; break;
		default: return -EINVAL;
		}
		p++;
	}
	if (*p)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

struct env_rule {
	const char *name;
	uint64_t min, max;
	bool pow2;
	bool suffix;
	const char *rule;
};

static const struct env_rule env_rules[] = {
	{ "PTO2_RING_TASK_WINDOW", PTO2_TASK_WINDOW_MIN, PTO2_TASK_WINDOW_MAX,
	  true, false, "a power of 2 from 4 to 4194304" },
	{ "PTO2_RING_HEAP", PTO2_HEAP_MIN, PTO2_HEAP_MAX, false, true,
	  "bytes from 1024 to 1099511627776, decimal, optional K/M/G suffix" },
	{ "PTO2_RING_DEP_POOL", PTO2_DEP_POOL_MIN, PTO2_DEP_POOL_MAX, false,
	  false, "an integer from 16 to 268435456" },
	{ "PTO2_READY_QUEUE_SHARDS", 1, PTO2_READY_QUEUE_SHARDS_MAX, false,
	  false, "an integer from 1 to 16" },
};

int pto2_config_from_getenv(struct pto2_config *cfg,
			    const char *(*getenv_fn)(void *ctx, const char *name),
			    void *ctx, char *err, size_t errlen)
{
	uint64_t vals[4];
	bool set[4];
	size_t i;

	for (i = 0; i < 4; i++) {
		const struct env_rule *r = &env_rules[i];
		const char *s = getenv_fn(ctx, r->name);
		uint64_t v;

		set[i] = s != NULL;
		if (!s)
			continue;
		if (parse_u64(s, r->suffix, &v) || v < r->min || v > r->max ||
		    (r->pow2 && (v & (v - 1)))) {
			if (err && errlen)
				snprintf(err, errlen,
					 "%s=\"%s\" is invalid: must be %s",
					 r->name, s, r->rule);
			return -EINVAL;
		}
		vals[i] = v;
	}
	if (set[0])
		cfg->task_window = (uint32_t)vals[0];
	if (set[1])
		cfg->heap_size = vals[1];
	if (set[2])
		cfg->dep_pool_size = (uint32_t)vals[2];
	if (set[3])
		cfg->ready_queue_shards = (uint32_t)vals[3];
	return 0;
}

static const char *real_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

int pto2_config_from_env(struct pto2_config *cfg, char *err, size_t errlen)
{
	return pto2_config_from_getenv(cfg, real_getenv, NULL, err, errlen);
}

int pto2_config_validate(const struct pto2_config *c, char *err, size_t errlen)
{
	const char *what = NULL;

	if (c->task_window < PTO2_TASK_WINDOW_MIN ||
	    c->task_window > PTO2_TASK_WINDOW_MAX ||
	    (c->task_window & (c->task_window - 1)))
		what = "task_window must be a power of 2 from 4 to 4194304";
	else if (c->heap_size < PTO2_HEAP_MIN || c->heap_size > PTO2_HEAP_MAX)
		what = "heap_size must be from 1024 to 2^40";
	else if (c->dep_pool_size < PTO2_DEP_POOL_MIN ||
		 c->dep_pool_size > PTO2_DEP_POOL_MAX)
		what = "dep_pool_size must be from 16 to 2^28";
	else if (c->ready_queue_shards < 1 ||
		 c->ready_queue_shards > PTO2_READY_QUEUE_SHARDS_MAX)
		what = "ready_queue_shards must be from 1 to 16";
	else if (c->sched_threads < 1 || c->sched_threads > PTO2_SCHED_THREADS_MAX)
		what = "sched_threads must be from 1 to 16";
	else if (c->tensormap_pool_size < 16 ||
		 c->tensormap_pool_size > (1U << 26))
		what = "tensormap_pool_size must be from 16 to 2^26";
	else if (c->tensormap_buckets < 1 || c->tensormap_buckets > (1U << 26) ||
		 (c->tensormap_buckets & (c->tensormap_buckets - 1)))
		what = "tensormap_buckets must be a power of 2 up to 2^26";
	else if (c->spin_limit < 1)
		what = "spin_limit must be positive";
	if (what) {
		if (err && errlen)
			snprintf(err, errlen, "invalid configuration: %s", what);
		return -EINVAL;
	}
	return 0;
}

/* ---- Memory layout ------------------------------------------------------- */

#define A64(x)	PTO2_ALIGN_UP((uint64_t)(x), PTO2_ALIGN_SIZE)

size_t pto2_sm_size(uint32_t task_window, uint32_t dep_pool_size,
		    uint32_t nr_cores)
{
	return (size_t)(A64(sizeof(PTO2SharedMemoryHeader)) +
			A64((uint64_t)task_window * sizeof(PTO2TaskDescriptor)) +
			A64(((uint64_t)dep_pool_size + 1) *
			    sizeof(PTO2DepListEntry)) +
			A64((uint64_t)nr_cores * PTO2_PAYLOAD_STRIDE));
}

static size_t heap_offset(const struct pto2_config *cfg, uint32_t nr_cores)
{
	return (size_t)PTO2_ALIGN_UP(pto2_sm_size(cfg->task_window,
						  cfg->dep_pool_size, nr_cores),
				     4096);
}

size_t pto2_runtime_mem_size(const struct pto2_config *cfg, uint32_t nr_cores)
{
	return heap_offset(cfg, nr_cores) + (size_t)cfg->heap_size;
}

/* ---- Error state ----------------------------------------------------------- */

void pto2_rt_signal(PTO2Runtime *rt)
{
	pthread_mutex_lock(&rt->lock);
	pthread_cond_broadcast(&rt->cond);
	pthread_mutex_unlock(&rt->lock);
}

void pto2_rt_fail(PTO2Runtime *rt, int err, const char *fmt, ...)
{
	bool first = false;
	va_list ap;

	pthread_mutex_lock(&rt->err_lock);
	if (!atomic_load_explicit(&rt->error, memory_order_relaxed)) {
		va_start(ap, fmt);
		vsnprintf(rt->errmsg, sizeof(rt->errmsg), fmt, ap);
		va_end(ap);
		atomic_store_explicit(&rt->error, err, memory_order_release);
		first = true;
	}
	pthread_mutex_unlock(&rt->err_lock);
	if (first) {
		pto2_logf(&rt->log, PTO2_LOG_ERROR, "%s", rt->errmsg);
		pto2_wake_schedulers(rt);
		pto2_rt_signal(rt);
	}
}

int pto2_rt_get_error(PTO2Runtime *rt)
{
	return rt ? atomic_load_explicit(&rt->error, memory_order_acquire) :
		    -EINVAL;
}

const char *pto2_rt_get_error_msg(PTO2Runtime *rt)
{
	if (!rt || !atomic_load_explicit(&rt->error, memory_order_acquire))
		return "";
	return rt->errmsg;
}

void pto2_runtime_abort(PTO2Runtime *rt, int err)
{
	pto2_rt_fail(rt, err ? err : -ECANCELED, "run aborted (%d)",
		     err ? err : -ECANCELED);
}

/* ---- Create / destroy / reset ----------------------------------------------- */

static void runtime_free(PTO2Runtime *rt)
{
	pto2_sched_exit(rt);
	pto2_tensormap_destroy(&rt->tm);
	pto2_ready_queues_destroy(&rt->rq);
	free(rt->dep_pos_begin);
	free(rt->scope_tasks);
	free(rt->orch_ready);
	free(rt->completed);
	free(rt->completed_by_task);
	free(rt->fanin_refcount);
	free(rt->fanout_refcount);
	free(rt->core_task);
	free(rt->threads);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_mutex_destroy(&rt->err_lock);
	pthread_mutex_destroy(&rt->sched_lock);
	pthread_cond_destroy(&rt->sched_cond);
	free(rt);
}

/* Bring every ring, pool and array back to empty. No run may be active. */
/*
 * Task ids are not reused across the runs of a runtime: a run starts at
 * the previous run's current_task_index. The cores' COND registers still
 * hold FIN(id) of the last task they ran, and the scheduler recognises a
 * completion by COND == FIN(id), so an id must never be dispatched twice
 * to a core. (After PTO_TASK_ID_MAX ids the ring returns -EOVERFLOW.)
 */
static void runtime_reset(PTO2Runtime *rt)
{
	PTO2SharedMemoryHeader *h = rt->hdr;
	int32_t base = atomic_load_explicit(&h->current_task_index,
					    memory_order_relaxed);
	/* the ring's index: ids allocated but never published count too */
	int32_t end = rt->task_ring.current_index;
	uint32_t i, n;

	atomic_store_explicit(&h->current_task_index, base,
			      memory_order_relaxed);
	atomic_store_explicit(&h->orchestrator_done, 0, memory_order_relaxed);
	atomic_store_explicit(&h->heap_top, 0, memory_order_relaxed);
	atomic_store_explicit(&h->last_task_alive, base, memory_order_relaxed);
	atomic_store_explicit(&h->heap_tail, 0, memory_order_relaxed);

	pto2_task_ring_init(&rt->task_ring, rt->desc, rt->window,
			    &h->last_task_alive);
	rt->task_ring.current_index = base;
	pto2_heap_ring_init(&rt->heap_ring, rt->heap_dev, rt->cfg.heap_size,
			    &h->heap_top, &h->heap_tail);
	pto2_dep_pool_init(&rt->dep_pool, rt->dep, rt->cfg.dep_pool_size);
	pto2_tensormap_reset(&rt->tm);
	rt->tm.last_task_alive = base;
	rt->tm.last_cleanup = base;
	pto2_ready_queues_reset(&rt->rq);
	/*
	 * Per-slot state: only the slots the last run used (every other
	 * slot is still clean from an earlier reset); O(tasks), not
	 * O(window), per run.
	 */
	if (!rt->reset_clean || end < rt->dirty_begin ||
	    (uint32_t)(end - rt->dirty_begin) >= rt->window)
		n = rt->window;
	else
		n = (uint32_t)(end - rt->dirty_begin);
	for (i = 0; i < n; i++) {
		uint32_t s = n == rt->window ? i :
			     ((uint32_t)rt->dirty_begin + i) & rt->mask;

		atomic_store_explicit(&rt->completed[s], PTO2_TASK_INITIAL,
				      memory_order_relaxed);
		atomic_store_explicit(&rt->completed_by_task[s], -1,
				      memory_order_relaxed);
		atomic_store_explicit(&rt->fanin_refcount[s], 0,
				      memory_order_relaxed);
		atomic_store_explicit(&rt->fanout_refcount[s], 0,
				      memory_order_relaxed);
		atomic_store_explicit(&rt->desc[s].task_id, -1,
				      memory_order_relaxed);
		rt->dep_pos_begin[s] = 0;
	}
	rt->dirty_begin = base;
	rt->reset_clean = true;
	for (i = 0; i < rt->nr_cores; i++)
		rt->core_task[i] = -1;
	rt->scope_tasks_size = 0;
	rt->scope_depth = 0;
	rt->orch_done = false;
	rt->stat_submitted = 0;
	rt->stat_heap_bytes = 0;
	rt->stat_ring_blocked = 0;
	atomic_store_explicit(&rt->orch_ready_head, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->orch_ready_tail, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->next_scan_index, base, memory_order_relaxed);
	atomic_flag_clear(&rt->advance_busy);
	atomic_store_explicit(&rt->running, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->completions, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->sleepers, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->stop, 0, memory_order_relaxed);
	rt->errmsg[0] = '\0';
	atomic_store_explicit(&rt->error, 0, memory_order_relaxed);
	rt->run_done = false;
	rt->orch_finished = false;
	rt->orch_ret = 0;
	atomic_thread_fence(memory_order_seq_cst);
}

/* Divide the AIC and AIV cores of the core map equally among the threads. */
static void share_cores(PTO2Runtime *rt)
{
	uint32_t n = rt->nr_threads, na = rt->dev.nr_aic, nv = rt->dev.nr_aiv;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct pto2_sched_thread *st = &rt->threads[i];

		st->aic_first = i * na / n;
		st->aic_count = (i + 1) * na / n - st->aic_first;
		st->aiv_first = na + i * nv / n;
		st->aiv_count = na + (i + 1) * nv / n - st->aiv_first;
	}
}

int pto2_runtime_set_cores(PTO2Runtime *rt, const uint32_t *core_ids,
			   uint32_t nr_aic, uint32_t nr_aiv)
{
	uint32_t i;

	if (!rt || !(nr_aic + nr_aiv) || nr_aic + nr_aiv > rt->max_cores)
		return -EINVAL;
	if (!core_ids && nr_aic + nr_aiv != rt->max_cores)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_IDLE) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	rt->dev.core_ids = core_ids;
	rt->dev.nr_aic = nr_aic;
	rt->dev.nr_aiv = nr_aiv;
	rt->nr_cores = nr_aic + nr_aiv;
	for (i = 0; i < rt->nr_cores; i++)
		rt->core_task[i] = -1;
	share_cores(rt);
	pthread_mutex_unlock(&rt->lock);
	return 0;
}

int pto2_runtime_create(const struct pto2_device *dev,
			const struct pto2_config *cfg, void *mem,
			uint64_t mem_dev_addr, size_t mem_size,
			PTO2Runtime **out)
{
	char err[256];
	PTO2Runtime *rt;
	PTO2SharedMemoryHeader *h;
	struct pto2_logger lg = { cfg ? cfg->log : NULL,
				  cfg ? cfg->log_ctx : NULL };
	uint32_t nr_cores, w, i;
	uint64_t off;
	int ret;

	*out = NULL;
	if (!dev || !cfg || !mem || !dev->cores || !dev->kick ||
	    !dev->irq_count || !dev->irq_wait)
		return -EINVAL;
	nr_cores = dev->nr_aic + dev->nr_aiv;
	if (!nr_cores || nr_cores > PTO_MAX_CORES)
		return -EINVAL;
	ret = pto2_config_validate(cfg, err, sizeof(err));
	if (ret) {
		pto2_logf(&lg, PTO2_LOG_ERROR, "%s", err);
		return ret;
	}
	if (((uintptr_t)mem & (PTO2_ALIGN_SIZE - 1)) ||
	    (mem_dev_addr & (PTO2_ALIGN_SIZE - 1)))
		return -EINVAL;
	if (mem_size < pto2_runtime_mem_size(cfg, nr_cores)) {
		pto2_logf(&lg, PTO2_LOG_ERROR,
			  "runtime memory too small: %zu < %zu bytes", mem_size,
			  pto2_runtime_mem_size(cfg, nr_cores));
		return -ENOSPC;
	}

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	pthread_mutex_init(&rt->err_lock, NULL);
	pthread_mutex_init(&rt->sched_lock, NULL);
	pthread_cond_init(&rt->sched_cond, NULL);
	rt->cfg = *cfg;
	rt->log = lg;
	rt->dev = *dev;
	rt->mem = mem;
	rt->mem_dev = mem_dev_addr;
	rt->mem_size = mem_size;
	rt->nr_cores = nr_cores;
	rt->max_cores = nr_cores;
	rt->block_num = dev->nr_aic;	/* block_idx is the device's block */
	w = rt->window = cfg->task_window;
	rt->mask = w - 1;

	/* SM layout (see pto2_types.h) */
	off = 0;
	h = rt->hdr = (PTO2SharedMemoryHeader *)(void *)rt->mem;
	memset(h, 0, sizeof(*h));
	off += A64(sizeof(*h));
	h->descriptors_offset = (uint32_t)off;
	rt->desc = (PTO2TaskDescriptor *)(void *)(rt->mem + off);
	off += A64((uint64_t)w * sizeof(PTO2TaskDescriptor));
	h->dep_list_offset = (uint32_t)off;
	rt->dep = (PTO2DepListEntry *)(void *)(rt->mem + off);
	off += A64(((uint64_t)cfg->dep_pool_size + 1) * sizeof(PTO2DepListEntry));
	h->payload_offset = (uint32_t)off;
	rt->payload = rt->mem + off;
	rt->payload_stride = (uint32_t)PTO2_PAYLOAD_STRIDE;
	h->payload_stride = rt->payload_stride;
	h->nr_cores = nr_cores;
	off += A64((uint64_t)nr_cores * PTO2_PAYLOAD_STRIDE);
	h->sm_size = off;
	h->task_window_size = w;
	h->dep_list_pool_size = cfg->dep_pool_size;
	h->heap_size = cfg->heap_size;
	rt->heap_dev = mem_dev_addr + heap_offset(cfg, nr_cores);
	h->heap_dev_addr = rt->heap_dev;
	h->version = PTO2_SM_VERSION;
	memset(rt->payload, 0, (size_t)nr_cores * rt->payload_stride);

	ret = pto2_tensormap_init(&rt->tm, cfg->tensormap_buckets,
				  cfg->tensormap_pool_size, w);
	if (ret)
		goto fail;
	ret = pto2_ready_queues_init(&rt->rq, cfg->ready_queue_shards, w);
	if (ret)
		goto fail;
	ret = -ENOMEM;
	rt->dep_pos_begin = calloc(w, sizeof(*rt->dep_pos_begin));
	rt->scope_tasks_cap = 1024;
	rt->scope_tasks = malloc(sizeof(int32_t) * rt->scope_tasks_cap);
	rt->orch_ready = malloc(sizeof(int32_t) * w);
	rt->completed = calloc(w, sizeof(*rt->completed));
	rt->completed_by_task = calloc(w, sizeof(*rt->completed_by_task));
	rt->fanin_refcount = calloc(w, sizeof(*rt->fanin_refcount));
	rt->fanout_refcount = calloc(w, sizeof(*rt->fanout_refcount));
	rt->core_task = malloc(sizeof(int32_t) * nr_cores);
	rt->nr_threads = cfg->sched_threads;
	rt->threads = calloc(rt->nr_threads, sizeof(*rt->threads));
	if (!rt->dep_pos_begin || !rt->scope_tasks || !rt->orch_ready ||
	    !rt->completed || !rt->completed_by_task || !rt->fanin_refcount ||
	    !rt->fanout_refcount || !rt->core_task || !rt->threads)
		goto fail;
	for (i = 0; i < rt->nr_threads; i++) {
		rt->threads[i].rt = rt;
		rt->threads[i].index = i;
	}
	share_cores(rt);

	rt->flow.log = &rt->log;
	rt->flow.warn_interval = cfg->warn_interval;
	rt->flow.spin_limit = cfg->spin_limit;
	rt->flow.abort = &rt->error;
	rt->flow.running = &rt->running;
	rt->flow.completions = &rt->completions;
	rt->flow.errmsg = rt->flow_msg;
	rt->flow.errlen = sizeof(rt->flow_msg);

	runtime_reset(rt);
	atomic_thread_fence(memory_order_release);
	h->magic = PTO2_SM_MAGIC;
	if (dev->bind) {
		ret = dev->bind(dev->ctx, rt->mem, mem_dev_addr);
		if (ret)
			goto fail;
	}
	rt->state = PTO2_RUN_IDLE;
	*out = rt;
	return 0;
fail:
	runtime_free(rt);
	return ret;
}

void pto2_runtime_destroy(PTO2Runtime *rt)
{
	if (!rt)
		return;
	if (rt->state == PTO2_RUN_ACTIVE) {
		pto2_runtime_abort(rt, -ECANCELED);
		pto2_runtime_wait(rt, 0);
	}
	runtime_free(rt);
}

PTO2SharedMemoryHeader *pto2_runtime_sm(PTO2Runtime *rt)
{
	return rt->hdr;
}

void pto2_runtime_get_stats(PTO2Runtime *rt, struct pto2_stats *st)
{
	uint32_t i;

	memset(st, 0, sizeof(*st));
	st->tasks_submitted = rt->stat_submitted;
	st->tasks_completed = atomic_load(&rt->completions);
	st->heap_bytes_allocated = rt->stat_heap_bytes;
	st->tensormap_truncated = rt->tm.stat_truncated;
	st->tensormap_cleaned = rt->tm.stat_cleaned;
	st->task_ring_blocked = rt->stat_ring_blocked;
	for (i = 0; i < rt->nr_threads; i++) {
		st->sched_sleeps += rt->threads[i].sleeps;
		st->kicks += rt->threads[i].kicks;
	}
}

/* ---- Orchestrator: scopes ----------------------------------------------------- */

void pto2_rt_scope_begin(PTO2Runtime *rt)
{
	if (rt->scope_depth >= PTO2_MAX_SCOPE_DEPTH) {
		/* keep begin/end balanced: count it, but fail the run */
		rt->scope_depth++;
		pto2_rt_fail(rt, -EINVAL, "PTO2_SCOPE nested deeper than %d",
			     PTO2_MAX_SCOPE_DEPTH);
		return;
	}
	rt->scope_begins[rt->scope_depth++] = rt->scope_tasks_size;
}

void pto2_rt_scope_end(PTO2Runtime *rt)
{
	uint32_t begin, i;

	if (rt->scope_depth <= 0) {
		pto2_rt_fail(rt, -EINVAL, "scope_end() without scope_begin()");
		return;
	}
	if (rt->scope_depth > PTO2_MAX_SCOPE_DEPTH) {
		rt->scope_depth--;
		return;
	}
	begin = rt->scope_begins[--rt->scope_depth];
	/* release the scope's fanout reference of each of its tasks */
	if (!atomic_load_explicit(&rt->error, memory_order_relaxed))
		for (i = begin; i < rt->scope_tasks_size; i++)
			pto2_release_fanout(rt, rt->scope_tasks[i]);
	rt->scope_tasks_size = begin;
}

static int scope_tasks_push(PTO2Runtime *rt, int32_t id)
{
	if (rt->scope_tasks_size == rt->scope_tasks_cap) {
		uint32_t cap = rt->scope_tasks_cap * 2;
		int32_t *n = realloc(rt->scope_tasks, sizeof(int32_t) * cap);

		if (!n)
			return -ENOMEM;
		rt->scope_tasks = n;
		rt->scope_tasks_cap = cap;
	}
	rt->scope_tasks[rt->scope_tasks_size++] = id;
	return 0;
}

/* ---- Orchestrator: submit --------------------------------------------------------- */

static inline int32_t load_la(PTO2Runtime *rt)
{
	return atomic_load_explicit(&rt->hdr->last_task_alive,
				    memory_order_acquire);
}

/* Make room for @n dep-list entries (back-pressure, seed-style waits). */
static int dep_pool_reserve(PTO2Runtime *rt, uint32_t n)
{
	struct pto2_dep_pool *p = &rt->dep_pool;
	struct pto2_flow_wait w;
	int32_t la;
	int ret;

	if (n > p->capacity) {
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "[DepPool] one task needs %u dependency entries, more than PTO2_RING_DEP_POOL=%u",
			 n, p->capacity);
		return -ENOSPC;
	}
	la = load_la(rt);
	p->live_pos = rt->dep_pos_begin[(uint32_t)la & rt->mask];
	if (likely(p->pos + n - p->live_pos <= p->capacity))
		return 0;
	pto2_flow_wait_init(&rt->flow, &w, (uint64_t)(uint32_t)la);
	for (;;) {
		la = load_la(rt);
		p->live_pos = rt->dep_pos_begin[(uint32_t)la & rt->mask];
		if (p->pos + n - p->live_pos <= p->capacity)
			return 0;
		ret = pto2_flow_wait_step(&rt->flow, &w, (uint64_t)(uint32_t)la);
		if (ret == 1) {
			pto2_logf(&rt->log, PTO2_LOG_WARN,
				  "[DepPool] BLOCKED: requesting %u entries, used=%" PRIu64 "/%u, last_alive=%d, spins=%u",
				  n, p->pos - p->live_pos, p->capacity, la,
				  w.spins);
		} else if (ret == 2) {
			snprintf(rt->flow_msg, sizeof(rt->flow_msg),
				 "FATAL: Flow Control Deadlock Detected!\n"
				 "Dependency List Pool is FULL and no progress after %u spins.\n"
				 "  - Entries in use: %" PRIu64 "\n"
				 "  - Pool size: %u\n"
				 "Root Cause:\n"
				 "  Entries are reclaimed only when their tasks reach CONSUMED, and\n"
				 "  fanout_count includes 1 for the owning scope: scope_end() requires\n"
				 "  the orchestrator to continue — creating a circular dependency.\n"
				 "Solution:\n"
				 "  Increase PTO2_RING_DEP_POOL.\n"
				 "  Recommended: %u (at least 2x current pool size)",
				 w.spins, p->pos - p->live_pos, p->capacity,
				 2 * p->capacity);
			return -EDEADLK;
		} else if (ret < 0) {
			return ret;
		}
	}
}

/* Insert with TensorMap pool back-pressure (Layer 3). */
static int tm_insert(PTO2Runtime *rt, const struct pto2_region *r, int32_t id,
		     bool with_alloc)
{
	struct pto2_flow_wait w;
	int32_t la;
	int ret;

	ret = pto2_tensormap_insert(&rt->tm, r, id, with_alloc);
	if (likely(ret != -ENOSPC))
		return ret;
	la = load_la(rt);
	pto2_flow_wait_init(&rt->flow, &w, (uint64_t)(uint32_t)la);
	for (;;) {
		la = load_la(rt);
		pto2_tensormap_sync(&rt->tm, la, true);
		ret = pto2_tensormap_insert(&rt->tm, r, id, with_alloc);
		if (ret != -ENOSPC)
			return ret;
		ret = pto2_flow_wait_step(&rt->flow, &w, (uint64_t)(uint32_t)la);
		if (ret == 1) {
			pto2_logf(&rt->log, PTO2_LOG_WARN,
				  "[TensorMap] BLOCKED: entry pool exhausted (%u entries), last_alive=%d, spins=%u",
				  rt->tm.pool_size, la, w.spins);
		} else if (ret == 2) {
			snprintf(rt->flow_msg, sizeof(rt->flow_msg),
				 "FATAL: Flow Control Deadlock Detected!\n"
				 "TensorMap entry pool is FULL and no progress after %u spins.\n"
				 "  - Entries in use: %u\n"
				 "  - Pool size: %u\n"
				 "Root Cause:\n"
				 "  Entries are freed only when their producer tasks retire, and\n"
				 "  fanout_count includes 1 for the owning scope: scope_end() requires\n"
				 "  the orchestrator to continue — creating a circular dependency.\n"
				 "Solution:\n"
				 "  Submit fewer output tensors per scope or enlarge the pool.\n"
				 "  Recommended: %u (at least 2x current pool size)",
				 w.spins, pto2_tensormap_used(&rt->tm),
				 rt->tm.pool_size, 2 * rt->tm.pool_size);
			return -EDEADLK;
		} else if (ret < 0) {
			return ret;
		}
	}
}

/*
 * Add @consumer to @producer's fanout list under the producer's
 * fanout_lock (seed 000 section 7). If the producer already completed
 * (early finish) the consumer's fanin_refcount is incremented directly.
 * Returns 1 if the consumer holds a fanout reference of the producer (it
 * releases it when it completes), 0 if the producer was already CONSUMED,
 * or a negative errno.
 */
static int add_consumer_to_producer(PTO2Runtime *rt, int32_t producer,
				    int32_t consumer)
{
	PTO2TaskDescriptor *pd = &rt->desc[(uint32_t)producer & rt->mask];
	uint32_t ps = (uint32_t)producer & rt->mask;
	int32_t state;
	int ret;

	ret = dep_pool_reserve(rt, 1);	/* never wait holding the lock */
	if (ret)
		return ret;
	while (atomic_exchange_explicit(&pd->fanout_lock, 1,
					memory_order_acquire))
		cpu_relax();
	state = atomic_load_explicit(&rt->completed[ps], memory_order_acquire);
	if (state >= PTO2_TASK_COMPLETED &&
	    atomic_load_explicit(&rt->completed_by_task[ps],
				 memory_order_acquire) == producer) {
		/* early finish: the producer's fanout walk is over */
		atomic_fetch_add_explicit(
			&rt->fanin_refcount[(uint32_t)consumer & rt->mask], 1,
			memory_order_seq_cst);
		if (state == PTO2_TASK_COMPLETED) {
			/*
			 * Not yet consumed (2 -> 3 happens only under this
			 * lock): keep it alive until the consumer is done, so
			 * its output buffer is not reclaimed under the reader.
			 */
			atomic_store_explicit(&pd->fanout_count,
				atomic_load_explicit(&pd->fanout_count,
						     memory_order_relaxed) + 1,
				memory_order_relaxed);
			ret = 1;
		} else {
			ret = 0;
		}
		atomic_store_explicit(&pd->fanout_lock, 0, memory_order_release);
		return ret;
	}
	pd->fanout_head = pto2_dep_list_prepend(&rt->dep_pool, pd->fanout_head,
						consumer);
	atomic_store_explicit(&pd->fanout_count,
			      atomic_load_explicit(&pd->fanout_count,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&pd->fanout_lock, 0, memory_order_release);
	return 1;
}

#define PTO2_MAX_FANIN	PTO2_LOOKUP_MAX

static int submit(PTO2Runtime *rt, int32_t kernel_id, PTO2WorkerType wt,
		  PTOParam *params, int32_t n)
{
	struct pto2_region reg[PTO2_MAX_TASK_PARAMS];
	struct pto2_lookup_result lr;
	int32_t fanin_all[PTO2_MAX_FANIN];	/* every producer found */
	int32_t fanin_reg[PTO2_MAX_FANIN];	/* producers to release */
	int nall = 0, nreg = 0;
	uint64_t out_total = 0;
	PTO2TaskDescriptor *d;
	uint32_t slot;
	int32_t id, la;
	int i, j, k, ret;

	/* validation, before any state changes */
	if (rt->orch_done) {
		pto2_rt_fail(rt, -EINVAL,
			     "submit after pto2_rt_orchestration_done()");
		return -EINVAL;
	}
	if (rt->scope_depth <= 0) {
		pto2_rt_fail(rt, -EINVAL, "submit outside of any PTO2_SCOPE");
		return -EINVAL;
	}
	if (n < 0 || n > PTO2_MAX_TASK_PARAMS || (n && !params)) {
		pto2_rt_fail(rt, -EINVAL,
			     "submit: %d params (kernel %d); at most %d allowed",
			     n, kernel_id, PTO2_MAX_TASK_PARAMS);
		return -EINVAL;
	}
	if ((wt != PTO2_WORKER_CUBE && wt != PTO2_WORKER_VECTOR) ||
	    (wt == PTO2_WORKER_CUBE && !rt->dev.nr_aic) ||
	    (wt == PTO2_WORKER_VECTOR && !rt->dev.nr_aiv)) {
		pto2_rt_fail(rt, -EINVAL,
			     "submit: worker type %d (kernel %d) has no cores on this device",
			     (int)wt, kernel_id);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		int32_t t = (int32_t)params[i].type;

		if (t == PTO_PARAM_SCALAR)
			continue;
		if ((t != PTO_PARAM_INPUT && t != PTO_PARAM_OUTPUT &&
		     t != PTO_PARAM_INOUT) || !params[i].tensor ||
		    pto2_region_from_tensor(&reg[i], params[i].tensor)) {
			pto2_rt_fail(rt, -EINVAL,
				     "submit: param %d of kernel %d is not a valid tensor/scalar param",
				     i, kernel_id);
			return -EINVAL;
		}
		if (t != PTO_PARAM_OUTPUT && !params[i].tensor->addr) {
			pto2_rt_fail(rt, -EINVAL,
				     "submit: param %d of kernel %d reads a tensor that was never produced (addr 0)",
				     i, kernel_id);
			return -EINVAL;
		}
	}

	/* Step 0: sync TensorMap validity, periodic cleanup */
	pto2_tensormap_sync(&rt->tm, load_la(rt), false);

	/* Step 1: task slot (may block) */
	if (!pto2_task_ring_has_space(&rt->task_ring))
		rt->stat_ring_blocked++;
	ret = pto2_task_ring_alloc(&rt->task_ring, &rt->flow, &id);
	if (ret)
		goto fail_flow;
	/*
	 * Refresh the validity threshold: the ring just advanced past
	 * id - window, so no producer found below shares this task's slot.
	 */
	la = load_la(rt);
	if (la > rt->tm.last_task_alive)
		rt->tm.last_task_alive = la;

	/* Step 1b: reset the recycled slot */
	slot = (uint32_t)id & rt->mask;
	atomic_store_explicit(&rt->completed[slot], PTO2_TASK_INITIAL,
			      memory_order_relaxed);
	atomic_store_explicit(&rt->completed_by_task[slot], -1,
			      memory_order_relaxed);
	rt->dep_pos_begin[slot] = rt->dep_pool.pos;

	/* Step 2: descriptor and params */
	d = &rt->desc[slot];
	atomic_store_explicit(&d->task_id, id, memory_order_relaxed);
	d->kernel_id = kernel_id;
	d->worker_type = wt;
	d->fanin_head = 0;
	atomic_store_explicit(&d->fanin_count, PTO2_FANIN_PENDING,
			      memory_order_relaxed);
	atomic_store_explicit(&d->fanout_lock, 0, memory_order_relaxed);
	d->fanout_head = 0;
	atomic_store_explicit(&d->fanout_count, 1, memory_order_relaxed);
	d->packed_buffer_base = 0;
	d->packed_buffer_end = 0;
	d->heap_pos_end = 0;
	d->num_outputs = 0;
	d->param_count = n;
	for (i = 0; i < n; i++) {
		d->param_type[i] = (uint8_t)params[i].type;
		d->args[i] = params[i].scalar_value;
	}
	atomic_thread_fence(memory_order_release);
	ret = scope_tasks_push(rt, id);
	if (ret) {
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "out of memory for the scope task list");
		goto fail_flow;
	}

	/* Steps 3-4: producers of INPUT/INOUT params, dependencies */
	for (i = 0; i < n; i++) {
		int32_t t = (int32_t)params[i].type;

		if (t != PTO_PARAM_INPUT && t != PTO_PARAM_INOUT)
			continue;
		ret = pto2_tensormap_lookup(&rt->tm, &reg[i], &lr);
		if (ret) {
			snprintf(rt->flow_msg, sizeof(rt->flow_msg),
				 "submit: param %d of kernel %d overlaps more than %d producers",
				 i, kernel_id, PTO2_LOOKUP_MAX);
			ret = -E2BIG;
			goto fail_flow;
		}
		for (k = 0; k < lr.count; k++) {
			struct pto2_tm_entry *e = &rt->tm.pool[lr.entry[k]];
			int32_t pid = e->producer_task_id;
			bool dup = false;

			for (j = 0; j < nall; j++)
				if (fanin_all[j] == pid)
					dup = true;
			if (!dup) {
				if (nall >= PTO2_MAX_FANIN) {
					snprintf(rt->flow_msg, sizeof(rt->flow_msg),
						 "submit: kernel %d depends on more than %d tasks",
						 kernel_id, PTO2_MAX_FANIN);
					ret = -E2BIG;
					goto fail_flow;
				}
				fanin_all[nall++] = pid;
				ret = add_consumer_to_producer(rt, pid, id);
				if (ret < 0)
					goto fail_flow;
				if (ret == 1)
					fanin_reg[nreg++] = pid;
			}
			/*
			 * An INOUT that covers an earlier INOUT write makes
			 * that entry redundant (later readers depend on this
			 * task, which depends on it): drop it to keep chains
			 * linear. OUTPUT entries stay: their producers own
			 * heap buffers and must see every reader.
			 */
			if (t == PTO_PARAM_INOUT &&
			    lr.status[k] == PTO2_OVERLAP_COVERED &&
			    !e->with_alloc)
				pto2_tensormap_remove_entry(&rt->tm,
							    lr.entry[k]);
		}
	}

	/* Step 5: heap buffer for OUTPUTs without an address */
	for (i = 0; i < n; i++)
		if (params[i].type == PTO_PARAM_OUTPUT && !params[i].tensor->addr)
			out_total += PTO2_ALIGN_UP(params[i].tensor->size,
						   PTO2_PACKED_OUTPUT_ALIGN);
	if (out_total) {
		uint64_t base, pos_end, o = 0;

		ret = pto2_heap_ring_alloc(&rt->heap_ring, &rt->flow, out_total,
					   &base, &pos_end);
		if (ret)
			goto fail_flow;
		d->packed_buffer_base = base;
		d->packed_buffer_end = base + out_total;
		d->heap_pos_end = pos_end;
		rt->stat_heap_bytes += out_total;
		for (i = 0; i < n; i++) {
			Tensor *t = params[i].tensor;

			if (params[i].type != PTO_PARAM_OUTPUT || t->addr)
				continue;
			t->addr = base + o;	/* write back to the caller */
			reg[i].addr += t->addr;
			reg[i].begin += t->addr;
			reg[i].end += t->addr;
			o += PTO2_ALIGN_UP(t->size, PTO2_PACKED_OUTPUT_ALIGN);
		}
	}
	for (i = 0; i < n; i++) {
		if (params[i].type == PTO_PARAM_SCALAR)
			continue;
		d->args[i] = reg[i].begin;	/* first element of the view */
		if (params[i].type == PTO_PARAM_OUTPUT)
			d->output_index[d->num_outputs++] = (int8_t)i;
	}

	/* Step 6: register OUTPUT/INOUT params as produced by this task */
	for (i = 0; i < n; i++) {
		if (params[i].type != PTO_PARAM_OUTPUT &&
		    params[i].type != PTO_PARAM_INOUT)
			continue;
		ret = tm_insert(rt, &reg[i], id,
				params[i].type == PTO_PARAM_OUTPUT);
		if (ret)
			goto fail_flow;
	}

	/* Step 7: fanin list and count; early-ready check */
	if (nreg) {
		ret = dep_pool_reserve(rt, (uint32_t)nreg);
		if (ret)
			goto fail_flow;
		for (i = 0; i < nreg; i++)
			d->fanin_head = pto2_dep_list_prepend(&rt->dep_pool,
							      d->fanin_head,
							      fanin_reg[i]);
	}
	/* seq_cst pairs with the schedulers' fetch_add on fanin_refcount */
	atomic_store_explicit(&d->fanin_count, nall, memory_order_seq_cst);
	if (nall > 0 &&
	    atomic_load_explicit(&rt->fanin_refcount[slot],
				 memory_order_seq_cst) >= nall) {
		int32_t exp = PTO2_TASK_INITIAL;

		if (atomic_compare_exchange_strong(&rt->completed[slot], &exp,
						   PTO2_TASK_READY)) {
			uint32_t tail = atomic_load_explicit(
				&rt->orch_ready_tail, memory_order_relaxed);

			rt->orch_ready[tail & rt->mask] = id;
			atomic_store_explicit(&rt->orch_ready_tail, tail + 1,
					      memory_order_release);
		}
	}

	/* Step 8: publish */
	atomic_store_explicit(&rt->hdr->current_task_index,
			      rt->task_ring.current_index,
			      memory_order_release);
	rt->stat_submitted++;
	pto2_wake_schedulers_for_publish(rt);
	return 0;

fail_flow:
	pto2_rt_fail(rt, ret, "%s", rt->flow_msg);
	return ret;
}

void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
			 PTO2WorkerType worker_type, PTOParam *params,
			 int32_t num_params)
{
	if (unlikely(atomic_load_explicit(&rt->error, memory_order_relaxed)))
		return;
	submit(rt, kernel_id, worker_type, params, num_params);
}

void pto2_rt_init_tensor_pool(PTO2Runtime *rt)
{
	(void)rt;
}

void pto2_rt_orchestration_done(PTO2Runtime *rt)
{
	if (rt->orch_done)
		return;
	rt->orch_done = true;
	atomic_store_explicit(&rt->hdr->orchestrator_done, 1,
			      memory_order_seq_cst);
	pto2_try_advance(rt);	/* signals run_done if all is consumed */
	pto2_wake_schedulers(rt);
}

/* ---- Runs ----------------------------------------------------------------------- */

static int run_begin(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
		     uint64_t *args, int argc)
{
	int ret;

	if (!entry)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_IDLE) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	runtime_reset(rt);
	rt->entry = entry;
	rt->args = args;
	rt->argc = argc;
	rt->state = PTO2_RUN_ACTIVE;
	pthread_mutex_unlock(&rt->lock);
	ret = pto2_sched_start(rt);
	if (ret) {
		pthread_mutex_lock(&rt->lock);
		rt->state = PTO2_RUN_IDLE;
		pthread_mutex_unlock(&rt->lock);
	}
	return ret;
}

/* Run the orchestration function inside the outermost scope (thread 3). */
static void orchestrate(PTO2Runtime *rt)
{
	int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	int ret;

	/* precise short sleeps for the flow-control spin pacing */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pto2_rt_scope_begin(rt);
	ret = rt->entry(rt, rt->args, rt->argc);
	pto2_rt_scope_end(rt);
	while (rt->scope_depth > 0)	/* unbalanced user scopes */
		pto2_rt_scope_end(rt);
	pto2_rt_orchestration_done(rt);
	if (ret < 0 && !atomic_load(&rt->error))
		pto2_rt_fail(rt, ret,
			     "orchestration function returned %d", ret);
	if (old_slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
	pthread_mutex_lock(&rt->lock);
	rt->orch_ret = ret;
	rt->orch_finished = true;
	pthread_cond_broadcast(&rt->cond);
	pthread_mutex_unlock(&rt->lock);
}

static void *orch_thread_main(void *arg)
{
	orchestrate(arg);
	return NULL;
}

int pto2_runtime_launch(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
			uint64_t *args, int argc)
{
	int ret = run_begin(rt, entry, args, argc);

	if (ret)
		return ret;
	ret = -pthread_create(&rt->orch_thread, NULL, orch_thread_main, rt);
	if (ret) {
		pto2_rt_fail(rt, ret, "cannot start the orchestrator thread");
		pthread_mutex_lock(&rt->lock);
		rt->orch_finished = true;
		pthread_mutex_unlock(&rt->lock);
		return ret;
	}
	rt->orch_thread_live = true;
	return 0;
}

int pto2_runtime_orchestrate(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
			     uint64_t *args, int argc)
{
	int ret = run_begin(rt, entry, args, argc);

	if (ret)
		return ret;
	orchestrate(rt);
	return pto2_rt_get_error(rt);
}

static bool run_over(PTO2Runtime *rt)
{
	if (!rt->orch_finished)
		return false;
	if (rt->run_done)
		return true;
	return atomic_load(&rt->error) &&
	       atomic_load_explicit(&rt->running, memory_order_acquire) == 0;
}

int pto2_runtime_wait(PTO2Runtime *rt, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns ? pto2_now_ns() + timeout_ns : 0;
	int ret = 0;

	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_ACTIVE) {
		pthread_mutex_unlock(&rt->lock);
		return -EINVAL;
	}
	while (!run_over(rt)) {
		struct timespec ts;
		uint64_t now = pto2_now_ns();
		/* bounded waits: error + idle cores is polled, not signalled */
		uint64_t until = now + 2000000ULL;

		if (deadline && now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (deadline && until > deadline)
			until = deadline;
		clock_gettime(CLOCK_REALTIME, &ts);
		{
			uint64_t rt_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
					 (uint64_t)ts.tv_nsec + (until - now);

			ts.tv_sec = (time_t)(rt_ns / 1000000000ULL);
			ts.tv_nsec = (long)(rt_ns % 1000000000ULL);
		}
		pthread_cond_timedwait(&rt->cond, &rt->lock, &ts);
	}
	pthread_mutex_unlock(&rt->lock);
	if (ret)
		return ret;

	if (rt->orch_thread_live) {
		pthread_join(rt->orch_thread, NULL);
		rt->orch_thread_live = false;
	}
	pto2_sched_stop(rt);
	pthread_mutex_lock(&rt->lock);
	rt->state = PTO2_RUN_IDLE;
	pthread_mutex_unlock(&rt->lock);
	return pto2_rt_get_error(rt);
}
