// SPDX-License-Identifier: MIT
/*
 * pto2_runtime.c - configuration, runtime life cycle, error state and the
 * orchestrator (task submission in PTO2's steps 0-8, scopes)
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <pto-private/compiler.h>
#include <pto-private/env.h>
#include <pto-private/params.h>
#include <pto-private/sandbox.h>
#include <pto-private/size.h>

#include "pto2_internal.h"
#include "pto2_record.h"

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
	cfg->wait_runs_kernels = true;
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
	const char *end;
	int ret = allow_suffix ? pto_parse_size(s, 10, out, &end) :
				 pto_parse_u64(s, 10, UINT64_MAX, out, &end);

	return ret ? ret : *end ? -EINVAL : 0;
}

struct env_rule {
	uint64_t min, max;
	bool pow2;
	bool suffix;
	const char *rule;
};

/* Indexed by enum pto_env_var; the names are pto_env_names[]. */
static const struct env_rule env_rules[PTO_ENV_N] = {
	[PTO_ENV_TASK_WINDOW] = { PTO2_TASK_WINDOW_MIN, PTO2_TASK_WINDOW_MAX,
				  true, false,
				  "a power of 2 from 4 to 4194304" },
	[PTO_ENV_HEAP] = { PTO2_HEAP_MIN, PTO2_HEAP_MAX, false, true,
			   "bytes from 1024 to 1099511627776, decimal, optional K/M/G suffix" },
	[PTO_ENV_DEP_POOL] = { PTO2_DEP_POOL_MIN, PTO2_DEP_POOL_MAX, false,
			       false, "an integer from 16 to 268435456" },
	[PTO_ENV_RQ_SHARDS] = { 1, PTO2_READY_QUEUE_SHARDS_MAX, false, false,
				"an integer from 1 to 16" },
};

static int parse_var(enum pto_env_var var, const char *s, uint64_t *out,
		     char *err, size_t errlen)
{
	const struct env_rule *r = &env_rules[var];
	uint64_t v;

	if (parse_u64(s, r->suffix, &v) || v < r->min || v > r->max ||
	    (r->pow2 && (v & (v - 1)))) {
		if (err && errlen)
			snprintf(err, errlen, "must be %s", r->rule);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static void config_store(struct pto2_config *cfg, enum pto_env_var var,
			 uint64_t v)
{
	switch (var) {
	case PTO_ENV_TASK_WINDOW: cfg->task_window = (uint32_t)v; break;
	case PTO_ENV_HEAP: cfg->heap_size = v; break;
	case PTO_ENV_DEP_POOL: cfg->dep_pool_size = (uint32_t)v; break;
	case PTO_ENV_RQ_SHARDS: cfg->ready_queue_shards = (uint32_t)v; break;
	case PTO_ENV_N: break;
	}
}

int pto2_config_set_var(struct pto2_config *cfg, enum pto_env_var var,
			const char *s, char *err, size_t errlen)
{
	uint64_t v;
	int ret = parse_var(var, s, &v, err, errlen);

	if (!ret)
		config_store(cfg, var, v);
	return ret;
}

int pto2_config_from_getenv(struct pto2_config *cfg,
			    const char *(*getenv_fn)(void *ctx, const char *name),
			    void *ctx, char *err, size_t errlen)
{
	uint64_t vals[PTO_ENV_N];
	bool set[PTO_ENV_N];
	char why[128];
	int i;

	for (i = 0; i < PTO_ENV_N; i++) {
		const char *s = getenv_fn(ctx, pto_env_names[i]);

		set[i] = s != NULL;
		if (s && parse_var((enum pto_env_var)i, s, &vals[i], why,
				   sizeof(why))) {
			if (err && errlen)
				snprintf(err, errlen, "%s=\"%s\" is invalid: %s",
					 pto_env_names[i], s, why);
			return -EINVAL;
		}
	}
	for (i = 0; i < PTO_ENV_N; i++)
		if (set[i])
			config_store(cfg, (enum pto_env_var)i, vals[i]);
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
	else if (c->heap_dev & (PTO2_ALIGN_SIZE - 1))
		what = "heap_dev must be 64-byte aligned";
	else if (c->exec_ctx > PTO_SBX_MAX)
		what = "exec_ctx must be from 0 to " PTO_STR(PTO_SBX_MAX);
	if (what) {
		if (err && errlen)
			snprintf(err, errlen, "invalid configuration: %s", what);
		return -EINVAL;
	}
	return 0;
}

/* ---- Memory layout ------------------------------------------------------- */

/*
 * The one place the runtime's memory layout is computed (pto2_types.h
 * draws it): byte offsets from the start of the runtime's memory.
 */
struct pto2_layout {
	uint64_t descriptors;	/* PTO2TaskDescriptor[window] */
	uint64_t dep_list;	/* PTO2DepListEntry[dep_pool + 1] */
	uint64_t payload;	/* payload slots [nr_cores] */
	uint64_t sm_size;	/* end of the shared-memory structures */
	uint64_t heap;		/* the heap ring (page aligned) */
	uint64_t total;		/* end of the heap */
};

#define A64(x)	PTO2_ALIGN_UP((uint64_t)(x), PTO2_ALIGN_SIZE)

static void pto2_layout(uint32_t task_window, uint32_t dep_pool_size,
			uint32_t nr_cores, uint64_t heap_size,
			struct pto2_layout *l)
{
	l->descriptors = A64(sizeof(PTO2SharedMemoryHeader));
	l->dep_list = l->descriptors +
		      A64((uint64_t)task_window * sizeof(PTO2TaskDescriptor));
	l->payload = l->dep_list +
		     A64(((uint64_t)dep_pool_size + 1) * sizeof(PTO2DepListEntry));
	l->sm_size = l->payload + A64((uint64_t)nr_cores * PTO2_PAYLOAD_STRIDE);
	l->heap = PTO2_ALIGN_UP(l->sm_size, 4096);
	l->total = l->heap + heap_size;
}

size_t pto2_sm_size(uint32_t task_window, uint32_t dep_pool_size,
		    uint32_t nr_cores)
{
	struct pto2_layout l;

	pto2_layout(task_window, dep_pool_size, nr_cores, 0, &l);
	return (size_t)l.sm_size;
}

size_t pto2_runtime_mem_size(const struct pto2_config *cfg, uint32_t nr_cores)
{
	struct pto2_layout l;

	pto2_layout(cfg->task_window, cfg->dep_pool_size, nr_cores,
		    cfg->heap_size, &l);
	return (size_t)(cfg->heap_dev ? l.sm_size : l.total);
}

/* ---- Create / destroy / reset ----------------------------------------------- */

static void runtime_free(PTO2Runtime *rt)
{
	if (rt->own_engine)
		pto2_engine_destroy(rt->engine);
	pto2_heap_destroy(&rt->staged);
	pto2_record_destroy(rt);
	pto2_tensormap_destroy(&rt->tm);
	pto2_ready_queues_destroy(&rt->rq);
	free(rt->dep_pos_begin);
	free(rt->scope_tasks);
	free(rt->clusters);
	free(rt->orch_ready);
	free(rt->completed);
	free(rt->completed_by_task);
	free(rt->fanin_refcount);
	free(rt->fanout_refcount);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_mutex_destroy(&rt->err_lock);
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
	rt->scope_tasks_size = 0;
	rt->scope_depth = 0;
	rt->nr_held = 0;
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
	atomic_store_explicit(&rt->run_blocks, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->run_busy_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->run_wait_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->run_wait_max_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&rt->run_early, 0, memory_order_relaxed);
	rt->errmsg[0] = '\0';
	atomic_store_explicit(&rt->error, 0, memory_order_relaxed);
	rt->run_done = false;
	rt->orch_finished = false;
	rt->orch_ret = 0;
	atomic_thread_fence(memory_order_seq_cst);
}

/* Lay the shared-memory structures out in the runtime's memory. */
static void sm_init(PTO2Runtime *rt, const struct pto2_layout *l)
{
	PTO2SharedMemoryHeader *h = (PTO2SharedMemoryHeader *)(void *)rt->mem;

	memset(h, 0, sizeof(*h));
	rt->hdr = h;
	rt->desc = (PTO2TaskDescriptor *)(void *)(rt->mem + l->descriptors);
	rt->dep = (PTO2DepListEntry *)(void *)(rt->mem + l->dep_list);
	rt->payload = rt->mem + l->payload;
	rt->payload_dev = rt->mem_dev + l->payload;
	rt->payload_stride = (uint32_t)PTO2_PAYLOAD_STRIDE;
	rt->heap_dev = rt->cfg.heap_dev ? rt->cfg.heap_dev :
		       rt->mem_dev + l->heap;
	memset(rt->payload, 0, (size_t)rt->nr_cores * rt->payload_stride);

	h->descriptors_offset = (uint32_t)l->descriptors;
	h->dep_list_offset = (uint32_t)l->dep_list;
	h->payload_offset = (uint32_t)l->payload;
	h->payload_stride = rt->payload_stride;
	h->nr_cores = rt->nr_cores;
	h->sm_size = l->sm_size;
	h->task_window_size = rt->window;
	h->dep_list_pool_size = rt->cfg.dep_pool_size;
	h->heap_size = rt->cfg.heap_size;
	h->heap_dev_addr = rt->heap_dev;
	h->version = PTO2_SM_VERSION;
}

/* The runtime's private (non-shared) memory: pools, queues, arrays. */
static int runtime_alloc(PTO2Runtime *rt)
{
	uint32_t w = rt->window;
	int ret;

	ret = pto2_tensormap_init(&rt->tm, rt->cfg.tensormap_buckets,
				  rt->cfg.tensormap_pool_size, w);
	if (ret)
		return ret;
	ret = pto2_ready_queues_init(&rt->rq, rt->cfg.ready_queue_shards, w);
	if (ret)
		return ret;
	rt->dep_pos_begin = calloc(w, sizeof(*rt->dep_pos_begin));
	rt->scope_tasks_cap = 1024;
	rt->scope_tasks = malloc(sizeof(int32_t) * rt->scope_tasks_cap);
	rt->orch_ready = malloc(sizeof(int32_t) * w);
	rt->completed = calloc(w, sizeof(*rt->completed));
	rt->completed_by_task = calloc(w, sizeof(*rt->completed_by_task));
	rt->fanin_refcount = calloc(w, sizeof(*rt->fanin_refcount));
	rt->fanout_refcount = calloc(w, sizeof(*rt->fanout_refcount));
	rt->clusters = calloc(pto2_nr_clusters(rt), sizeof(*rt->clusters));
	if (!rt->dep_pos_begin || !rt->scope_tasks || !rt->orch_ready ||
	    !rt->completed || !rt->completed_by_task || !rt->fanin_refcount ||
	    !rt->fanout_refcount || !rt->clusters)
		return -ENOMEM;
	return pto2_heap_init(&rt->staged, w);
}

/* The orchestrator waits for room or a cluster: a held DAG goes. */
static void flow_on_wait(void *arg)
{
	pto2_rt_unhold(arg);
}

static void flow_init(PTO2Runtime *rt)
{
	rt->flow.log = &rt->log;
	rt->flow.warn_interval = rt->cfg.warn_interval;
	rt->flow.spin_limit = rt->cfg.spin_limit;
	rt->flow.abort = &rt->error;
	rt->flow.running = &rt->running;
	rt->flow.completions = &rt->completions;
	rt->flow.errmsg = rt->flow_msg;
	rt->flow.errlen = sizeof(rt->flow_msg);
	rt->flow.on_wait = flow_on_wait;
	rt->flow.on_wait_arg = rt;
}

/*
 * The device's engine (dev.engine), or one of the runtime's own over the
 * device, configured from the runtime's scheduler settings.
 */
static int runtime_engine(PTO2Runtime *rt)
{
	struct pto2_engine_config ec;
	int ret;

	if (rt->dev.engine) {
		rt->engine = rt->dev.engine;
		return 0;
	}
	pto2_engine_config_default(&ec);
	ec.threads = rt->cfg.sched_threads;
	ec.idle_spins = rt->cfg.sched_idle_spins;
	ec.idle_ns = rt->cfg.sched_idle_ns;
	ec.sleep_ns = rt->cfg.sched_sleep_ns;
	ec.check = rt->cfg.hws_check;
	ec.log = rt->cfg.log;
	ec.log_ctx = rt->cfg.log_ctx;
	ret = pto2_engine_create(&rt->dev, &ec, &rt->engine);
	rt->own_engine = !ret;
	return ret;
}

/* What create accepts; -errno (and a log line for the config) if not. */
static int create_check(const struct pto2_device *dev,
			const struct pto2_config *cfg,
			const struct pto2_logger *lg, void *mem,
			uint64_t mem_dev_addr, size_t mem_size)
{
	uint32_t nr_cores;
	char err[256];
	int ret;

	if (!dev || !cfg || !mem || !dev->regs || !dev->kick ||
	    !dev->irq_count || !dev->irq_wait)
		return -EINVAL;
	nr_cores = dev->nr_aic + dev->nr_aiv;
	if (!nr_cores || nr_cores > PTO_MAX_CORES)
		return -EINVAL;
	ret = pto2_config_validate(cfg, err, sizeof(err));
	if (ret) {
		pto2_logf(lg, PTO2_LOG_ERROR, "%s", err);
		return ret;
	}
	if (((uintptr_t)mem & (PTO2_ALIGN_SIZE - 1)) ||
	    (mem_dev_addr & (PTO2_ALIGN_SIZE - 1)))
		return -EINVAL;
	if (mem_size < pto2_runtime_mem_size(cfg, nr_cores)) {
		pto2_logf(lg, PTO2_LOG_ERROR,
			  "runtime memory too small: %zu < %zu bytes", mem_size,
			  pto2_runtime_mem_size(cfg, nr_cores));
		return -ENOSPC;
	}
	return 0;
}

int pto2_runtime_create(const struct pto2_device *dev,
			const struct pto2_config *cfg, void *mem,
			uint64_t mem_dev_addr, size_t mem_size,
			PTO2Runtime **out)
{
	struct pto2_logger lg = { cfg ? cfg->log : NULL,
				  cfg ? cfg->log_ctx : NULL };
	struct pto2_layout l;
	PTO2Runtime *rt;
	int ret;

	*out = NULL;
	ret = create_check(dev, cfg, &lg, mem, mem_dev_addr, mem_size);
	if (ret)
		return ret;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	pthread_mutex_init(&rt->err_lock, NULL);
	rt->cfg = *cfg;
	rt->log = lg;
	rt->dev = *dev;
	rt->mem = mem;
	rt->mem_dev = mem_dev_addr;
	rt->mem_size = mem_size;
	rt->nr_cores = dev->nr_aic + dev->nr_aiv;
	rt->slot = -1;
	rt->dag_dynamic = true;
	rt->window = cfg->task_window;
	rt->mask = rt->window - 1;

	pto2_layout(rt->window, cfg->dep_pool_size, rt->nr_cores,
		    cfg->heap_size, &l);
	sm_init(rt, &l);
	ret = runtime_alloc(rt);
	if (!ret)
		ret = runtime_engine(rt);
	if (ret)
		goto fail;
	flow_init(rt);
	runtime_reset(rt);
	atomic_thread_fence(memory_order_release);
	rt->hdr->magic = PTO2_SM_MAGIC;
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

uint64_t pto2_runtime_completions(PTO2Runtime *rt)
{
	return atomic_load(&rt->completions);
}

void pto2_runtime_get_stats(PTO2Runtime *rt, struct pto2_stats *st)
{
	struct pto2_engine_stats es;

	memset(st, 0, sizeof(*st));
	st->tasks_submitted = rt->stat_submitted;
	st->tasks_completed = atomic_load(&rt->completions);
	st->heap_bytes_allocated = rt->stat_heap_bytes;
	st->tensormap_truncated = rt->tm.stat_truncated;
	st->tensormap_cleaned = rt->tm.stat_cleaned;
	st->task_ring_blocked = rt->stat_ring_blocked;
	st->blocks = atomic_load(&rt->run_blocks);
	st->busy_ns = atomic_load(&rt->run_busy_ns);
	st->wait_ns = atomic_load(&rt->run_wait_ns);
	st->wait_max_ns = atomic_load(&rt->run_wait_max_ns);
	st->early = atomic_load(&rt->run_early);
	pto2_engine_get_stats(rt->engine, &es);
	st->sched_sleeps = es.sleeps;
	st->kicks = es.kicks;
	st->assists = es.assists;
}

int pto2_runtime_set_dag(PTO2Runtime *rt, uint32_t total_tasks, bool dynamic)
{
	int ret = 0;

	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_IDLE) {
		ret = -EBUSY;
	} else {
		rt->dag_total = total_tasks;
		rt->dag_dynamic = dynamic;
	}
	pthread_mutex_unlock(&rt->lock);
	return ret;
}

PTO_USDT_DEFINE(pto2, task_submit);
PTO_USDT_DEFINE(pto2, task_ready);
PTO_USDT_DEFINE(pto2, task_admit);
PTO_USDT_DEFINE(pto2, task_pick);
PTO_USDT_DEFINE(pto2, task_dispatch);
PTO_USDT_DEFINE(pto2, task_complete);
PTO_USDT_DEFINE(pto2, task_done);
PTO_USDT_DEFINE(pto2, task_consumed);
PTO_USDT_DEFINE(pto2, task_retire);
PTO_USDT_DEFINE(pto2, hws_wait);
PTO_USDT_DEFINE(pto2, task_reserve);

void pto2_runtime_set_trace(PTO2Runtime *rt, uint32_t client, uint64_t graph)
{
	pthread_mutex_lock(&rt->lock);
	rt->trace_client = client;
	rt->trace_graph = graph;
	pthread_mutex_unlock(&rt->lock);
}

int32_t pto2_rt_last_task_id(PTO2Runtime *rt)
{
	if (atomic_load_explicit(&rt->error, memory_order_relaxed))
		return -1;
	return rt->task_ring.current_index - 1;
}

int pto2_runtime_set_context(PTO2Runtime *rt, uint32_t ctx)
{
	if (ctx >= HWS_NR_CTX)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	rt->hws_ctx = ctx;
	pthread_mutex_unlock(&rt->lock);
	return 0;
}

struct pto2_engine *pto2_runtime_engine(PTO2Runtime *rt)
{
	return rt->engine;
}

/* ---- Orchestrator: scopes ----------------------------------------------------- */

void pto2_rt_scope_begin(PTO2Runtime *rt)
{
	if (rt->scope_depth >= PTO2_MAX_SCOPE_DEPTH) {
		/* keep begin/end balanced: count it (up to INT_MAX: a
		 * stream of begins must not wrap the count), but fail
		 * the run */
		if (rt->scope_depth < INT_MAX)
			rt->scope_depth++;
		pto2_rt_fail(rt, -EINVAL, "PTO2_SCOPE nested deeper than %d",
			     PTO2_MAX_SCOPE_DEPTH);
		return;
	}
	rt->scope_begins[rt->scope_depth++] = rt->scope_tasks_size;
}

/* ---- Orchestrator: clusters -------------------------------------------------- */

static int held_index(PTO2Runtime *rt, int32_t id)
{
	uint32_t i;

	for (i = 0; i < rt->nr_held; i++)
		if (rt->clusters[i].id == id)
			return (int)i;
	return -1;
}

static void held_drop(PTO2Runtime *rt, int i)
{
	rt->clusters[i] = rt->clusters[--rt->nr_held];
}

bool pto2_runtime_cluster_held(PTO2Runtime *rt, int32_t id)
{
	return held_index(rt, id) >= 0;
}

/* Scope @depth ends: the clusters it allocated are freed. */
static void clusters_scope_end(PTO2Runtime *rt, int depth)
{
	uint32_t i = 0;

	while (i < rt->nr_held) {
		if (rt->clusters[i].depth < depth) {
			i++;
			continue;
		}
		pto2_engine_cluster_free(rt->engine, rt, rt->clusters[i].id);
		held_drop(rt, (int)i);
	}
}

static void cluster_deadlock(PTO2Runtime *rt, uint32_t spins)
{
	snprintf(rt->flow_msg, sizeof(rt->flow_msg),
		 "FATAL: Cluster allocation deadlock — all clusters occupied!\n"
		 "All %u clusters are allocated by this orchestration and no progress after %u spins.\n"
		 "Root Cause:\n"
		 "  A cluster is released by pto2_rt_free_cluster() or at the end of the\n"
		 "  scope that allocated it; only the orchestrator can do either, and it\n"
		 "  is blocked here waiting for a cluster.\n"
		 "Solution:\n"
		 "  Free clusters before allocating more, or allocate them in an inner\n"
		 "  PTO2_SCOPE that ends first.",
		 pto2_nr_clusters(rt), spins);
}

int32_t pto2_rt_allocate_cluster(PTO2Runtime *rt)
{
	struct pto2_flow_wait w;
	bool mine, waiting;
	int ret, why;

	if (atomic_load_explicit(&rt->error, memory_order_relaxed))
		return -1;
	for (waiting = false;; waiting = true) {
		uint64_t frees = pto2_engine_cluster_frees(rt->engine);

		ret = pto2_engine_cluster_alloc(rt->engine, rt, &mine);
		if (ret >= 0)
			break;
		why = ret;
		if (why == -EDQUOT && mine) {
			/* only this orchestration could free one */
			pto2_rt_fail(rt, -EDQUOT,
				     "pto2_rt_allocate_cluster: this orchestration holds %u clusters, the most its user may hold (the device has %u); free one before allocating another",
				     rt->nr_held, pto2_nr_clusters(rt));
			return -1;
		}
		if (!waiting)
			pto2_flow_wait_init(&rt->flow, &w, frees);
		ret = pto2_flow_wait_step(&rt->flow, &w,
					  pto2_engine_cluster_frees(rt->engine));
		if (ret == 1) {
			pto2_logf(&rt->log, PTO2_LOG_WARN,
				  "[Cluster] BLOCKED: no free cluster (%u held by this orchestration, %u in all%s), spins=%u",
				  rt->nr_held, pto2_nr_clusters(rt),
				  why == -EDQUOT ?
				  "; its user holds the most it may" : "",
				  w.spins);
		} else if (ret == 2 && mine) {
			cluster_deadlock(rt, w.spins);
			pto2_rt_fail(rt, -EDEADLK, "%s", rt->flow_msg);
			return -1;
		} else if (ret < 0) {
			return -1;
		}
	}
	rt->clusters[rt->nr_held].id = ret;
	rt->clusters[rt->nr_held].depth = rt->scope_depth;
	rt->nr_held++;
	return ret;
}

void pto2_rt_free_cluster(PTO2Runtime *rt, int32_t cluster_id)
{
	int i = held_index(rt, cluster_id);

	if (atomic_load_explicit(&rt->error, memory_order_relaxed))
		return;
	if (i < 0) {
		pto2_rt_fail(rt, -EINVAL,
			     "pto2_rt_free_cluster: cluster %d is not allocated by this orchestration",
			     cluster_id);
		return;
	}
	pto2_engine_cluster_free(rt->engine, rt, cluster_id);
	held_drop(rt, i);
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
	clusters_scope_end(rt, rt->scope_depth);
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

/*
 * Room for @n entries under the last live_pos read: live_pos only grows,
 * so room there is room now.
 */
static inline bool dep_pool_room(const struct pto2_dep_pool *p, uint32_t n)
{
	return n <= p->capacity && p->pos + n - p->live_pos <= p->capacity;
}

struct submit;
static uint32_t submit_edge_need(const struct submit *s);
static void dep_pool_too_small(PTO2Runtime *rt, uint32_t n,
			       const struct submit *s);

/*
 * Make room for @n dep-list entries (back-pressure like the rings'). With
 * @s, @n is what the edges of that submit take now (submit_edge_need()),
 * taken again at every step: a producer that completes meanwhile needs
 * fewer, so a task whose running producers would need more entries than
 * the pool has goes on once enough of them completed.
 */
static int dep_pool_reserve_slow(PTO2Runtime *rt, uint32_t n,
				 const struct submit *s)
{
	struct pto2_dep_pool *p = &rt->dep_pool;
	struct pto2_flow_wait w;
	int32_t la;
	int ret;

	if (n > p->capacity && !s) {
		dep_pool_too_small(rt, n, NULL);
		return -ENOSPC;
	}
	la = load_la(rt);
	p->live_pos = rt->dep_pos_begin[(uint32_t)la & rt->mask];
	if (likely(dep_pool_room(p, n)))
		return 0;
	pto2_flow_wait_init(&rt->flow, &w, (uint64_t)(uint32_t)la);
	for (;;) {
		if (s)
			n = submit_edge_need(s);
		la = load_la(rt);
		p->live_pos = rt->dep_pos_begin[(uint32_t)la & rt->mask];
		if (dep_pool_room(p, n))
			return 0;
		ret = pto2_flow_wait_step(&rt->flow, &w, (uint64_t)(uint32_t)la);
		if (ret == 1) {
			pto2_logf(&rt->log, PTO2_LOG_WARN,
				  "[DepPool] BLOCKED: requesting %u entries, used=%" PRIu64 "/%u, last_alive=%d, spins=%u",
				  n, p->pos - p->live_pos, p->capacity, la,
				  w.spins);
		} else if (ret == 2 && n > p->capacity) {
			/* no progress, and the need alone is past the pool */
			dep_pool_too_small(rt, n, s);
			return -ENOSPC;
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

/* The shared last_task_alive is read only when the room is not enough. */
static inline int dep_pool_reserve(PTO2Runtime *rt, uint32_t n)
{
	if (likely(dep_pool_room(&rt->dep_pool, n)))
		return 0;
	return dep_pool_reserve_slow(rt, n, NULL);
}

/* One insert: an owner's (the OUTPUT that allocated), or a write's. */
static int tm_insert_one(PTO2Runtime *rt, const struct pto2_region *r,
			 int32_t id, bool with_alloc, bool owner)
{
	return owner ? pto2_tensormap_insert_owner(&rt->tm, r, id) :
		       pto2_tensormap_insert(&rt->tm, r, id, with_alloc);
}

/*
 * Room for @n TensorMap entries, with pool back-pressure (Layer 3): the
 * entries of retired tasks are freed until there is.
 */
static int tm_room(PTO2Runtime *rt, uint32_t n)
{
	struct pto2_flow_wait w;
	int32_t la;
	int ret;

	if (likely(pto2_tensormap_room(&rt->tm) >= n))
		return 0;
	la = load_la(rt);
	pto2_flow_wait_init(&rt->flow, &w, (uint64_t)(uint32_t)la);
	for (;;) {
		la = load_la(rt);
		pto2_tensormap_sync(&rt->tm, la, true);
		if (pto2_tensormap_room(&rt->tm) >= n)
			return 0;
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

/* Insert, waiting for room if the pool is exhausted. */
static int tm_insert(PTO2Runtime *rt, const struct pto2_region *r, int32_t id,
		     bool with_alloc, bool owner)
{
	int ret = tm_insert_one(rt, r, id, with_alloc, owner);

	if (likely(ret != -ENOSPC))
		return ret;
	ret = tm_room(rt, 1);
	return ret ? ret : tm_insert_one(rt, r, id, with_alloc, owner);
}

/*
 * Add @consumer to @producer's fanout list under the producer's
 * fanout_lock (PTO2's fanout-lock protocol). If the producer already completed
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

/* A task on its way through submit's steps. */
struct submit {
	PTO2Runtime *rt;
	int32_t kernel_id;
	PTO2WorkerType wt;
	PTOParam *params;
	int32_t n;
	const PTO2TaskAttr *attr;	/* NULL: the defaults */
	struct pto2_region reg[PTO2_MAX_TASK_PARAMS];
	int32_t fanin_all[PTO2_MAX_FANIN];	/* every producer found */
	int32_t fanin_reg[PTO2_MAX_FANIN];	/* producers to release */
	int nall, nreg;
	int32_t id;
	uint32_t slot;
	PTO2TaskDescriptor *d;
	uint64_t packed;	/* heap bytes of its new OUTPUTs (step 5) */
	uint32_t allocated;	/* bit i: param i got its buffer in step 5 */
};

static bool is_written(int32_t type)
{
	return type == PTO_PARAM_OUTPUT || type == PTO_PARAM_INOUT;
}

static uint32_t attr_threads(const struct submit *s)
{
	return s->attr && s->attr->thread_num ? s->attr->thread_num : 1;
}

static uint32_t attr_blocks(const struct submit *s)
{
	return s->attr && s->attr->block_num ? s->attr->block_num : 1;
}

/*
 * The launch a task asks for must exist on this device: a worker type with
 * cores, a block of 1 AIC, 1 or 2 AIV, or 2 AIV + 1 AIC (a cluster has no
 * more), known flags, an affinity naming only existing cores.
 */
static int submit_check_launch(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	const PTO2TaskAttr *a = s->attr;
	uint32_t tn = attr_threads(s), w;
	const char *why = NULL;

	if (s->wt == PTO2_WORKER_CUBE)
		why = !rt->dev.nr_aic ? "CUBE has no cores on this device (no AIC)" :
		      tn != 1 ? "a cluster has 1 AIC: CUBE blocks are 1 thread" :
		      NULL;
	else if (s->wt == PTO2_WORKER_VECTOR)
		why = !rt->dev.nr_aiv ? "VECTOR has no cores on this device (no AIV)" :
		      tn > 2 ? "a cluster has 2 AIV: VECTOR blocks are 1 or 2 threads" :
		      NULL;
	else if (s->wt == PTO2_WORKER_MIXED)
		why = !rt->dev.nr_aic || !rt->dev.nr_aiv ?
		      "MIXED blocks need AIC and AIV cores" :
		      tn != 3 ? "MIXED blocks are 3 threads (2 AIV + 1 AIC)" : NULL;
	else
		why = "unknown worker type";
	if (!why && a && (a->flags & ~PTO2_ATTR_ALL))
		why = "unknown attribute flags";
	for (w = 0; !why && a && w < PTO2_AFFINITY_WORDS; w++)
		if (a->affinity[w] & ~pto_cores_in_word(rt->nr_cores, w))
			why = "the affinity names a core the device does not have";
	if (!why && a && (a->flags & PTO2_ATTR_CLUSTER) &&
	    (a->cluster_id < 0 ||
	     (uint32_t)a->cluster_id >= pto2_nr_clusters(rt)))
		why = "no such cluster";
	if (!why)
		return 0;
	pto2_rt_fail(rt, -EINVAL,
		     "submit: kernel %d, worker type %d, %u block(s) of %u thread(s): %s",
		     s->kernel_id, (int)s->wt, attr_blocks(s), tn, why);
	return -EINVAL;
}

/* The estimated time of one block: given, declared for the kernel,
 * measured, or a default. */
static uint64_t submit_est(const struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	uint64_t given = s->attr ? s->attr->est_time_ns : 0, v = 0;

	if (!given && pto_kernel_id_ok(s->kernel_id)) {
		v = atomic_load_explicit(&rt->kcost[s->kernel_id],
					 memory_order_relaxed);
		if (!v)
			v = atomic_load_explicit(&rt->kmeasured[s->kernel_id],
						 memory_order_relaxed);
	}
	return pto_est_pick(given, v);
}

static bool needs_alloc(const PTOParam *p)
{
	return p->type == PTO_PARAM_OUTPUT && !p->tensor->addr;
}

/*
 * The bytes of the packed heap buffer of the OUTPUTs without an address
 * (step 5), in s->packed: each part aligned, none larger than the heap,
 * so that neither an alignment nor the sum wraps and every part is as
 * large as its tensor's size says (ptod checks later uses against it).
 */
static int submit_check_packed(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	uint64_t heap = rt->cfg.heap_size, size;
	int i;

	s->packed = 0;
	for (i = 0; i < s->n; i++) {
		if (!needs_alloc(&s->params[i]))
			continue;
		size = s->params[i].tensor->size;
		if (size > heap ||
		    __builtin_add_overflow(s->packed,
					   PTO2_ALIGN_UP(size, PTO2_PACKED_OUTPUT_ALIGN),
					   &s->packed)) {
			pto2_rt_fail(rt, -ENOMEM,
				     "submit: param %d of kernel %d: an intermediate tensor of %" PRIu64
				     " bytes can never fit in a heap of %" PRIu64 " bytes (PTO2_RING_HEAP)",
				     i, s->kernel_id, size, heap);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Validation, before any state changes; fails the run with the reason. */
static int submit_check(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	char msg[256];
	int i;

	if (rt->orch_done) {
		pto2_rt_fail(rt, -EINVAL,
			     "submit after pto2_rt_orchestration_done()");
		return -EINVAL;
	}
	if (rt->scope_depth <= 0) {
		pto2_rt_fail(rt, -EINVAL, "submit outside of any PTO2_SCOPE");
		return -EINVAL;
	}
	if (pto_params_check(s->kernel_id, s->params, s->n, msg, sizeof(msg))) {
		pto2_rt_fail(rt, -EINVAL, "%s", msg);
		return -EINVAL;
	}
	if (submit_check_launch(s))
		return -EINVAL;
	if (submit_check_packed(s))
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		if (s->params[i].type != PTO_PARAM_SCALAR)
			pto2_region_from_valid_tensor(&s->reg[i],
						      s->params[i].tensor);
	return 0;
}

/* Steps 0, 1, 1b: sync the TensorMap, take a task slot, reset it. */
static int submit_alloc_slot(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	int32_t la;
	int ret;

	pto2_tensormap_sync(&rt->tm, load_la(rt), false);
	if (!pto2_task_ring_has_space(&rt->task_ring))
		rt->stat_ring_blocked++;
	ret = pto2_task_ring_alloc(&rt->task_ring, &rt->flow, &s->id);	/* may block */
	if (ret)
		return ret;
	/*
	 * Refresh the validity threshold: the ring just advanced past
	 * id - window, so no producer found below shares this task's slot.
	 */
	la = load_la(rt);
	if (la > rt->tm.last_task_alive)
		rt->tm.last_task_alive = la;
	s->slot = (uint32_t)s->id & rt->mask;
	atomic_store_explicit(&rt->completed[s->slot], PTO2_TASK_INITIAL,
			      memory_order_relaxed);
	atomic_store_explicit(&rt->completed_by_task[s->slot], -1,
			      memory_order_relaxed);
	rt->dep_pos_begin[s->slot] = rt->dep_pool.pos;
	return 0;
}

/* Step 2: the descriptor and its parameters; the scope's reference. */
static int submit_init_desc(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	PTO2TaskDescriptor *d = s->d = &rt->desc[s->slot];
	int i;

	atomic_store_explicit(&d->task_id, s->id, memory_order_relaxed);
	d->kernel_id = s->kernel_id;
	d->worker_type = s->wt;
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
	d->param_count = s->n;
	d->block_num = (uint16_t)attr_blocks(s);
	d->thread_num = (uint16_t)attr_threads(s);
	d->attr_flags = s->attr ? s->attr->flags : 0;
	d->offline_priority = (d->attr_flags & PTO2_ATTR_PRIORITY) ?
			      s->attr->priority :
			      UINT32_MAX - (uint32_t)s->id;	/* older first */
	d->cluster_id = (d->attr_flags & PTO2_ATTR_CLUSTER) ?
			s->attr->cluster_id : -1;
	if (d->cluster_id >= 0 &&
	    pto2_engine_cluster_task(rt->engine, rt, d->cluster_id, false)) {
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "submit: kernel %d: cluster %d is not allocated by this orchestration",
			 s->kernel_id, d->cluster_id);
		d->cluster_id = -1;
		return -EINVAL;
	}
	d->est_time = submit_est(s);
	d->est_declared = (s->attr && s->attr->est_time_ns) ||
			  (pto_kernel_id_ok(s->kernel_id) &&
			   atomic_load_explicit(&rt->kcost[s->kernel_id],
						memory_order_relaxed));
	memset(d->affinity, 0, sizeof(d->affinity));
	if (s->attr)
		memcpy(d->affinity, s->attr->affinity, sizeof(d->affinity));
	for (i = 0; i < s->n; i++) {
		d->param_type[i] = (uint8_t)s->params[i].type;
		d->args[i] = s->params[i].scalar_value;
	}
	atomic_thread_fence(memory_order_release);
	if (scope_tasks_push(rt, s->id)) {
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "out of memory for the scope task list");
		return -ENOMEM;
	}
	return 0;
}

/* Step 3 for one producer @pid of this task: noted, once. */
static int submit_add_producer(void *ctx, int32_t pid)
{
	struct submit *s = ctx;
	PTO2Runtime *rt = s->rt;
	int j;

	for (j = 0; j < s->nall; j++)
		if (s->fanin_all[j] == pid)
			return 0;
	if (s->nall >= PTO2_MAX_FANIN) {
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "submit: kernel %d depends on more than %d tasks",
			 s->kernel_id, PTO2_MAX_FANIN);
		return -E2BIG;
	}
	s->fanin_all[s->nall++] = pid;
	return 0;
}

/*
 * The dependency entries an edge from @pid will take at most: a fanout and
 * a fanin entry while the producer runs, a fanin entry once it completed,
 * none once it was consumed (add_consumer_to_producer()). A task's state
 * only moves on, so the bound holds until the edge is made.
 */
static uint32_t edge_entries(PTO2Runtime *rt, int32_t pid)
{
	uint32_t ps = (uint32_t)pid & rt->mask;
	int32_t state = atomic_load_explicit(&rt->completed[ps],
					     memory_order_acquire);

	if (state < PTO2_TASK_COMPLETED ||
	    atomic_load_explicit(&rt->completed_by_task[ps],
				 memory_order_acquire) != pid)
		return 2;
	return state == PTO2_TASK_COMPLETED ? 1 : 0;
}

/* The dependency entries the edges of @s take at most now. */
static uint32_t submit_edge_need(const struct submit *s)
{
	uint32_t need = 0;
	int i;

	for (i = 0; i < s->nall; i++)
		need += edge_entries(s->rt, s->fanin_all[i]);
	return need;
}

/*
 * The error of a submit whose @n entries are more than the pool holds:
 * at once (no @s), or (@s) after nothing moved while its producers'
 * need stayed above the pool.
 */
static void dep_pool_too_small(PTO2Runtime *rt, uint32_t n,
			       const struct submit *s)
{
	if (s)
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "[DepPool] a task of kernel %d needs %u dependency entries for its %d producers (1 for each that completed, 2 for each still to run), more than PTO2_RING_DEP_POOL=%u, and nothing completed while it waited: raise PTO2_RING_DEP_POOL, or give the task fewer producers",
			 s->kernel_id, n, s->nall, rt->dep_pool.capacity);
	else
		snprintf(rt->flow_msg, sizeof(rt->flow_msg),
			 "[DepPool] one task needs %u dependency entries, more than PTO2_RING_DEP_POOL=%u",
			 n, rt->dep_pool.capacity);
}

/* The TensorMap entries this task's writes take (step 6). */
static uint32_t submit_writes(const struct submit *s)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < s->n; i++)
		n += is_written((int32_t)s->params[i].type);
	return n;
}

/*
 * Steps 3-4: the producers of what this task reads, and of every part of
 * an intermediate made by an earlier task it reads or writes, that task,
 * so that the heap buffer stays until this task ran; the room the
 * submit's next steps need; then the edges.
 */
static int submit_lookup_deps(struct submit *s)
{
	int32_t types[PTO2_MAX_TASK_PARAMS];
	uint32_t need;
	int i, bad = 0, ret;

	for (i = 0; i < s->n; i++) {
		types[i] = (int32_t)s->params[i].type;
		/* a part of an intermediate it did not allocate */
		if (types[i] != PTO_PARAM_SCALAR &&
		    !((s->allocated >> i) & 1) &&
		    s->reg[i].addr - s->rt->heap_dev < s->rt->cfg.heap_size)
			types[i] |= PTO2_TM_OWNER_EDGE;
	}
	ret = pto2_tensormap_deps(&s->rt->tm, s->reg, types, s->n,
				  submit_add_producer, s, &bad);
	if (ret == -E2BIG && s->nall < PTO2_MAX_FANIN)
		snprintf(s->rt->flow_msg, sizeof(s->rt->flow_msg),
			 "submit: param %d of kernel %d overlaps more than %d producers",
			 bad, s->kernel_id, PTO2_LOOKUP_MAX);
	if (ret)
		return ret;
	/*
	 * Every wait before the first edge: a task that waits for room
	 * while it holds a producer keeps that producer, and every task
	 * after it, from retiring, and the pools are freed in task order.
	 * Room for the edges' dependency entries and for the TensorMap
	 * entries of its writes; only this thread takes either, so the room
	 * stays.
	 */
	need = 2 * (uint32_t)s->nall;	/* the bound, if there is room */
	ret = 0;
	if (!dep_pool_room(&s->rt->dep_pool, need))
		ret = dep_pool_reserve_slow(s->rt, submit_edge_need(s), s);
	if (!ret)
		ret = tm_room(s->rt, submit_writes(s));
	for (i = 0; !ret && i < s->nall; i++) {
		ret = add_consumer_to_producer(s->rt, s->fanin_all[i], s->id);
		if (ret == 1)
			s->fanin_reg[s->nreg++] = s->fanin_all[i];
		ret = ret < 0 ? ret : 0;
	}
	return ret;
}

/*
 * Step 5: one packed heap buffer for the OUTPUTs without an address (its
 * size checked by submit_check_packed()); each gets its part (written
 * back to the caller's Tensor). Then the args.
 */
static int submit_alloc_outputs(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	PTO2TaskDescriptor *d = s->d;
	uint64_t total = s->packed, base, pos_end, o = 0;
	int i, ret;

	if (total) {
		ret = pto2_heap_ring_alloc(&rt->heap_ring, &rt->flow, total,
					   &base, &pos_end);
		if (ret)
			return ret;
		d->packed_buffer_base = base;
		d->packed_buffer_end = base + total;
		d->heap_pos_end = pos_end;
		rt->stat_heap_bytes += total;
		for (i = 0; i < s->n; i++) {
			Tensor *t = s->params[i].tensor;

			if (!needs_alloc(&s->params[i]))
				continue;
			s->allocated |= 1U << i;
			t->addr = base + o;
			s->reg[i].addr += t->addr;
			s->reg[i].begin += t->addr;
			s->reg[i].end += t->addr;
			o += PTO2_ALIGN_UP(t->size, PTO2_PACKED_OUTPUT_ALIGN);
		}
	}
	for (i = 0; i < s->n; i++) {
		if (s->params[i].type == PTO_PARAM_SCALAR)
			continue;
		d->args[i] = s->reg[i].begin;	/* first element of the view */
		if (s->params[i].type == PTO_PARAM_OUTPUT)
			d->output_index[d->num_outputs++] = (int8_t)i;
	}
	return 0;
}

/* Step 6: register what this task writes as produced by it. */
static int submit_insert_outputs(struct submit *s)
{
	int i, ret;

	for (i = 0; i < s->n; i++) {
		int32_t t = (int32_t)s->params[i].type;

		if (!is_written(t))
			continue;
		ret = tm_insert(s->rt, &s->reg[i], s->id,
				t == PTO_PARAM_OUTPUT,
				(s->allocated >> i) & 1);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Step 7: the fanin list and count; a task whose producers all completed
 * already goes to the early-ready queue. Returns 1 if the task is ready
 * (no producer, or all completed), 0 if it waits for a producer, or a
 * negative errno.
 */
static int submit_finalize_fanin(struct submit *s)
{
	PTO2Runtime *rt = s->rt;
	PTO2TaskDescriptor *d = s->d;
	int32_t exp = PTO2_TASK_INITIAL;
	uint32_t tail;
	int i, ret;

	if (s->nreg) {
		ret = dep_pool_reserve(rt, (uint32_t)s->nreg);
		if (ret)
			return ret;
		for (i = 0; i < s->nreg; i++)
			d->fanin_head = pto2_dep_list_prepend(&rt->dep_pool,
							      d->fanin_head,
							      s->fanin_reg[i]);
	}
	/* before fanin_count: no ready probe of this task precedes it */
	PTO2_TASK_PROBE(task_submit, rt, s->id, d->kernel_id, -1, s->nall);
	/* seq_cst pairs with the schedulers' fetch_add on fanin_refcount */
	atomic_store_explicit(&d->fanin_count, s->nall, memory_order_seq_cst);
	if (!s->nall)
		return 1;	/* the schedulers' scan finds it */
	if (atomic_load_explicit(&rt->fanin_refcount[s->slot],
				 memory_order_seq_cst) < s->nall ||
	    !atomic_compare_exchange_strong(&rt->completed[s->slot], &exp,
					    PTO2_TASK_READY))
		return 0;
	PTO2_TASK_PROBE(task_ready, rt, s->id, d->kernel_id, -1, s->nall);
	tail = atomic_load_explicit(&rt->orch_ready_tail, memory_order_relaxed);
	rt->orch_ready[tail & rt->mask] = s->id;
	atomic_store_explicit(&rt->orch_ready_tail, tail + 1,
			      memory_order_release);
	return 1;
}

/*
 * Step 8: publish the task to the schedulers' scan. Only a @ready task
 * wakes them: one that waits for a producer becomes ready in the
 * completion of its last producer, on a scheduler thread (or here, in
 * step 7, if that completion came first), and the scan has nothing to
 * do with it. Waking a sleeping scheduler for each such task cost a
 * system call per submit.
 */
static void submit_publish(struct submit *s, bool ready)
{
	PTO2Runtime *rt = s->rt;

	atomic_store_explicit(&rt->hdr->current_task_index,
			      rt->task_ring.current_index,
			      memory_order_release);
	rt->stat_submitted++;
	if (atomic_load_explicit(&rt->held, memory_order_relaxed)) {
		if (rt->stat_submitted >= rt->dag_total)
			pto2_rt_unhold(rt);
		return;		/* nobody takes it yet: nobody to wake */
	}
	if (ready)
		pto2_wake_schedulers_for_publish(rt);
}

static int submit(PTO2Runtime *rt, int32_t kernel_id, PTO2WorkerType wt,
		  PTOParam *params, int32_t n, const PTO2TaskAttr *attr)
{
	struct submit s;	/* the arrays (4.5 KiB) are filled as used */
	int ret;

	s.rt = rt;
	s.kernel_id = kernel_id;
	s.wt = wt;
	s.params = params;
	s.n = n;
	s.attr = attr;
	s.nall = s.nreg = 0;
	s.allocated = 0;
	s.id = 0;
	s.slot = 0;
	s.d = NULL;

	ret = submit_check(&s);
	if (ret)
		return ret;
	ret = submit_alloc_slot(&s);
	if (!ret)
		ret = submit_init_desc(&s);
	/*
	 * Step 5 before steps 3-4: a task that waits for heap space must not
	 * hold its producers yet. As their consumer it keeps them from
	 * CONSUMED, and the heap's tail may need exactly them retired: a
	 * deadlock with the heap larger than any scope's outputs.
	 */
	if (!ret)
		ret = submit_alloc_outputs(&s);
	if (!ret)
		ret = submit_lookup_deps(&s);
	if (!ret)
		ret = submit_insert_outputs(&s);
	if (!ret && rt->rec)
		pto2_record_task(rt, s.id, s.d, wt, s.fanin_all, s.nall);
	if (!ret)
		ret = submit_finalize_fanin(&s);
	if (ret < 0) {
		pto2_rt_fail(rt, ret, "%s", rt->flow_msg);
		return ret;
	}
	submit_publish(&s, ret == 1);
	return 0;
}

void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
			 PTO2WorkerType worker_type, PTOParam *params,
			 int32_t num_params)
{
	if (unlikely(atomic_load_explicit(&rt->error, memory_order_relaxed)))
		return;
	submit(rt, kernel_id, worker_type, params, num_params, NULL);
}

void pto2_rt_submit_task_attr(PTO2Runtime *rt, int32_t kernel_id,
			      PTO2WorkerType worker_type, PTOParam *params,
			      int32_t num_params, const PTO2TaskAttr *attr)
{
	if (unlikely(atomic_load_explicit(&rt->error, memory_order_relaxed)))
		return;
	submit(rt, kernel_id, worker_type, params, num_params, attr);
}

void pto2_rt_submit_task_clustered(PTO2Runtime *rt, int32_t kernel_id,
				   PTO2WorkerType worker_type,
				   PTOParam *params, int32_t num_params,
				   int32_t cluster_id)
{
	PTO2TaskAttr a = { .flags = PTO2_ATTR_CLUSTER,
			   .cluster_id = cluster_id };

	pto2_rt_submit_task_attr(rt, kernel_id, worker_type, params,
				 num_params, &a);
}

void pto2_rt_set_kernel_cost(PTO2Runtime *rt, int32_t kernel_id,
			     uint64_t est_ns)
{
	if (!pto_kernel_id_ok(kernel_id)) {
		pto2_rt_fail(rt, -EINVAL,
			     "pto2_rt_set_kernel_cost: kernel id %d out of range 0..%d",
			     kernel_id, PTO2_MAX_KERNELS - 1);
		return;
	}
	atomic_store_explicit(&rt->kcost[kernel_id], PTO_EST_CLAMP(est_ns),
			      memory_order_relaxed);
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
	pto2_rt_unhold(rt);
	atomic_store_explicit(&rt->hdr->orchestrator_done, 1,
			      memory_order_seq_cst);
	pto2_try_advance(rt);	/* signals run_done if all is consumed */
	pto2_wake_schedulers(rt);
}

/* ---- Runs ----------------------------------------------------------------------- */

static int run_begin(PTO2Runtime *rt, pto2_orchestration_entry_fn entry,
		     uint64_t *args, int argc)
{
	int ret, aborted;

	if (!entry)
		return -EINVAL;
	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_IDLE) {
		pthread_mutex_unlock(&rt->lock);
		return -EBUSY;
	}
	runtime_reset(rt);
	aborted = rt->abort_next;
	rt->abort_next = 0;
	atomic_store(&rt->held, !rt->dag_dynamic && rt->dag_total);
	pto2_record_run_begin(rt);
	rt->entry = entry;
	rt->args = args;
	rt->argc = argc;
	rt->state = PTO2_RUN_ACTIVE;
	pthread_mutex_unlock(&rt->lock);
	/* before the attach, which does not wait for a slot then */
	if (aborted)
		pto2_rt_aborted(rt, aborted);
	ret = pto2_engine_attach(rt->engine, rt);
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

/* run_over() under the lock: pto2_device.run_cores()'s stop test */
static bool run_over_now(void *arg)
{
	PTO2Runtime *rt = arg;
	bool over;

	pthread_mutex_lock(&rt->lock);
	over = run_over(rt);
	pthread_mutex_unlock(&rt->lock);
	return over;
}

/*
 * pto2_config.wait_runs_kernels: the scheduler's passes and the cores'
 * tasks on the waiting thread, until the run is over, the deadline
 * passes, the device's cores stop, or PTO2_WAIT_IDLE_NS go by without
 * work (a long task running elsewhere: the caller then sleeps until the
 * run's end is signalled). After work it passes again at once; without,
 * it only looks for dispatched cores (a few loads), pausing between
 * looks, and passes and yields the CPU every PTO2_WAIT_IDLE_PASS'th: a
 * pass takes the scheduler's lock and the lines the core threads write,
 * and on a host with few CPUs a thread that polls keeps the one running
 * the last task from finishing it (a serial chain lost up to 0.4 us a
 * hop with a pass at every look).
 */
#define PTO2_WAIT_IDLE_NS	10000
#define PTO2_WAIT_IDLE_PASS	16

static void wait_running_kernels(PTO2Runtime *rt, uint64_t deadline)
{
	int64_t idle_t0 = 0;
	uint32_t looks = 0;

	while (!run_over_now(rt)) {
		uint32_t next = UINT32_MAX;
		bool work = !(looks % PTO2_WAIT_IDLE_PASS) &&
			    pto2_engine_help(rt->engine, &next);
		int ran = rt->dev.run_cores(rt->dev.ctx, next, run_over_now, rt);
		int64_t now = pto_mono_ns();

		if (ran < 0 || (deadline && (uint64_t)now >= deadline))
			return;
		if (work || ran > 0) {
			idle_t0 = 0;
			looks = 0;
			continue;
		}
		if (!idle_t0)
			idle_t0 = now;
		else if (now - idle_t0 >= PTO2_WAIT_IDLE_NS)
			return;
		if (++looks % PTO2_WAIT_IDLE_PASS)
			cpu_relax();
		else
			sched_yield();
	}
}

int pto2_runtime_wait(PTO2Runtime *rt, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns ? (uint64_t)pto_mono_ns() + timeout_ns : 0;
	bool helps = rt->cfg.wait_runs_kernels && rt->dev.run_cores &&
		     rt->dev.assist;
	int ret = 0;

	pthread_mutex_lock(&rt->lock);
	if (rt->state != PTO2_RUN_ACTIVE) {
		pthread_mutex_unlock(&rt->lock);
		return -EINVAL;
	}
	while (!run_over(rt)) {
		struct timespec ts;
		bool orch_seen = rt->orch_finished;
		uint64_t now, until;

		/*
		 * Before each sleep, and again once the orchestration has
		 * ended (its tasks are all submitted: pto2_runtime_launch()'s
		 * thread may have submitted none when the wait began).
		 */
		if (helps) {
			pthread_mutex_unlock(&rt->lock);
			wait_running_kernels(rt, deadline);
			pthread_mutex_lock(&rt->lock);
			if (run_over(rt))
				break;
		}
		now = (uint64_t)pto_mono_ns();
		/* bounded waits: error + idle cores is polled, not signalled */
		until = now + 2000000ULL;
		if (deadline && now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		if (helps && rt->orch_finished != orch_seen)
			continue;
		if (deadline && until > deadline)
			until = deadline;
		ts = pto_cond_deadline(until - now);
		pthread_cond_timedwait(&rt->cond, &rt->lock, &ts);
	}
	pthread_mutex_unlock(&rt->lock);
	if (ret)
		return ret;

	if (rt->orch_thread_live) {
		pthread_join(rt->orch_thread, NULL);
		rt->orch_thread_live = false;
	}
	pto2_engine_detach(rt->engine, rt);
	pto2_record_run_end(rt, pto2_rt_get_error(rt));
	pthread_mutex_lock(&rt->lock);
	rt->state = PTO2_RUN_IDLE;
	pthread_mutex_unlock(&rt->lock);
	return pto2_rt_get_error(rt);
}
