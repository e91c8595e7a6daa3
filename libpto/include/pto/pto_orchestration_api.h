// SPDX-License-Identifier: MIT
/*
 * pto_orchestration_api.h - the PTO2 orchestration API
 *
 * Orchestration code (an aicpu_orchestration_entry() and the helpers it
 * calls) depends only on this header. It is C11 and C++ (C++11 or later):
 *
 *  - PTO2Runtime is opaque; every call goes through a function exported by
 *    the runtime (libpto client side, or the daemon's runtime core).
 *  - Tensor, PTOParam and the make_*() helpers are plain values.
 *  - In C++ the param helpers also take Tensor& (as the reference runtime's
 *    orchestration sources do), DataType is a scoped enum with both the
 *    short (FP32) and the reference's long (FLOAT32) names, and
 *    PTO2_SCOPE(rt) is an RAII guard (break/return inside are fine).
 *  - In C, PTO2_SCOPE(rt) is a for-loop that calls pto2_rt_scope_begin()
 *    once before the body and pto2_rt_scope_end() once after it. Do not
 *    leave the body with break, goto or return: scope_end would not run.
 *
 * Errors: submit calls return nothing (as in the reference API). After a
 * fatal condition (flow-control deadlock, invalid parameters, kernel
 * failure, ...) the runtime enters an error state: further submits are
 * no-ops, pto2_rt_get_error() returns a negative errno and
 * pto2_rt_get_error_msg() the diagnosis. Nothing exits or aborts.
 *
 * Addresses: Tensor.addr is a device address (GM). make_tensor() leaves it
 * 0; the runtime allocates the buffer from its heap ring when the tensor
 * is first passed as an OUTPUT and writes the address back into the
 * caller's Tensor (through PTOParam.tensor). Views (pto_tensor_view())
 * copy addr, so take views of a make_tensor() only after the submit that
 * produces it. The address names the buffer: dependencies are found
 * between views of one addr (their offsets and shapes), so a part of a
 * buffer is a view of it, never a Tensor whose addr was moved, which
 * names another buffer and has no dependency on the writers of the first.
 */
#ifndef PTO_ORCHESTRATION_API_H
#define PTO_ORCHESTRATION_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Runtime ---------------------------------------------------------- */

typedef struct PTO2Runtime PTO2Runtime;

/* Worker (core) types. */
typedef int32_t PTO2WorkerType;
#define PTO2_WORKER_CUBE	0	/* AIC cores */
#define PTO2_WORKER_VECTOR	1	/* AIV cores */
#define PTO2_NUM_WORKER_TYPES	2
/* A block of one cluster's 2 AIV + 1 AIC (thread_num 3): cube and vector
 * parts of one incore function, paired (pto2_rt_submit_task_attr only). */
#define PTO2_WORKER_MIXED	2

#define PTO2_MAX_TENSOR_DIMS	5
#define PTO2_MAX_TASK_PARAMS	16	/* params per task (and kernel args) */
#define PTO2_MAX_KERNELS	256	/* kernel ids of a client: 0 .. 255 */

/* ---- Data types -------------------------------------------------------- */

#define PTO_DT_FP32	0
#define PTO_DT_FP16	1
#define PTO_DT_BF16	2
#define PTO_DT_INT8	3
#define PTO_DT_INT16	4
#define PTO_DT_INT32	5
#define PTO_DT_INT64	6
#define PTO_DT_UINT8	7
#define PTO_DT_UINT64	8
#define PTO_DT_COUNT	9

#ifdef __cplusplus
} /* extern "C" */
enum class DataType : int32_t {
	FP32 = PTO_DT_FP32, FP16 = PTO_DT_FP16, BF16 = PTO_DT_BF16,
	INT8 = PTO_DT_INT8, INT16 = PTO_DT_INT16, INT32 = PTO_DT_INT32,
	INT64 = PTO_DT_INT64, UINT8 = PTO_DT_UINT8, UINT64 = PTO_DT_UINT64,
	/* reference runtime spellings */
	FLOAT32 = PTO_DT_FP32, FLOAT16 = PTO_DT_FP16, BFLOAT16 = PTO_DT_BF16,
};
enum class PTOParamType : int32_t { INPUT = 0, OUTPUT = 1, INOUT = 2, SCALAR = 3 };
extern "C" {
#else
typedef int32_t DataType;	/* PTO_DT_* */
typedef int32_t PTOParamType;	/* PTO_PARAM_* */
#endif

#define PTO_PARAM_INPUT		0	/* read by the task */
#define PTO_PARAM_OUTPUT	1	/* written (allocated if addr == 0) */
#define PTO_PARAM_INOUT		2	/* read, then written */
#define PTO_PARAM_SCALAR	3	/* raw 64-bit value, no dependency */

/* Element size in bytes of a PTO_DT_* value; 0 if unknown. */
static inline uint32_t pto_dtype_size_i(int32_t dt)
{
	switch (dt) {
	case PTO_DT_FP32: case PTO_DT_INT32: return 4;
	case PTO_DT_FP16: case PTO_DT_BF16: case PTO_DT_INT16: return 2;
	case PTO_DT_INT8: case PTO_DT_UINT8: return 1;
	case PTO_DT_INT64: case PTO_DT_UINT64: return 8;
	default: return 0;
	}
}

static inline uint32_t pto_dtype_size(DataType dt)
{
	return pto_dtype_size_i((int32_t)dt);
}

/* ---- Tensor ------------------------------------------------------------ */

/**
 * struct Tensor - a (view of a) row-major buffer in GM.
 * @addr: device address of the buffer's first byte; 0 = not yet allocated.
 * @size: buffer size in bytes.
 * @ndims: number of dimensions, 1..PTO2_MAX_TENSOR_DIMS.
 * @dtype: element type.
 * @raw_shapes: shape of the whole buffer (elements), defines the strides.
 * @shapes: shape of this view (elements).
 * @offsets: start of this view in each dimension (elements).
 */
typedef struct Tensor {
	uint64_t addr;
	uint64_t size;
	uint32_t ndims;
	DataType dtype;
	uint64_t raw_shapes[PTO2_MAX_TENSOR_DIMS];
	uint64_t shapes[PTO2_MAX_TENSOR_DIMS];
	uint64_t offsets[PTO2_MAX_TENSOR_DIMS];
} Tensor;

static inline Tensor pto_tensor_init_(uint64_t addr, const uint64_t *shapes,
				      uint64_t ndims, DataType dtype)
{
	Tensor t;
	uint64_t n = 1;
	uint32_t i;

	t.addr = addr;
	/* more dimensions than a tensor has: ndims 0, which submit refuses */
	t.ndims = ndims <= PTO2_MAX_TENSOR_DIMS ? (uint32_t)ndims : 0;
	t.dtype = dtype;
	for (i = 0; i < PTO2_MAX_TENSOR_DIMS; i++) {
		uint64_t s = (i < ndims && shapes) ? shapes[i] : 1;

		t.raw_shapes[i] = s;
		t.shapes[i] = s;
		t.offsets[i] = 0;
		if (i < ndims)
			n *= s;
	}
	t.size = n * pto_dtype_size(dtype);
	return t;
}

/* Wrap an existing device buffer (device address @ptr) as a tensor. */
static inline Tensor make_tensor_external(void *ptr, const uint64_t *shapes,
					  uint64_t ndims, DataType dtype)
{
	return pto_tensor_init_((uint64_t)(uintptr_t)ptr, shapes, ndims, dtype);
}

/*
 * An intermediate tensor: addr = 0, allocated by the runtime at submit.
 * It belongs to the graph that produces it (through libpto its addr is a
 * placeholder numbered within that graph): used in a later graph it is
 * not detected, and names that graph's intermediate of the same number.
 * Keep results that outlive a graph in a buffer (make_tensor_external).
 */
static inline Tensor make_tensor(const uint64_t *shapes, uint64_t ndims,
				 DataType dtype)
{
	return pto_tensor_init_(0, shapes, ndims, dtype);
}

/*
 * A view of @t: @shapes and @offsets (elements, per dimension; @offsets
 * may be NULL: none) from the origin of @t's own view. The result shares
 * @t's buffer (addr, size, raw_shapes) and may reach past @t's view
 * (programs step from one tile to the next so): submit refuses a view
 * outside the buffer, with the param named. An offset that wraps past
 * 2^64 gives ndims 0, which submit refuses the same way.
 */
static inline Tensor pto_tensor_view(const Tensor *t, const uint64_t *shapes,
				     const uint64_t *offsets)
{
	Tensor v = *t;
	uint32_t i;

	for (i = 0; i < t->ndims && i < PTO2_MAX_TENSOR_DIMS; i++) {
		uint64_t off = offsets ? offsets[i] : 0;

		if (t->offsets[i] + off < t->offsets[i]) {
			v.ndims = 0;
			break;
		}
		v.shapes[i] = shapes[i];
		v.offsets[i] = t->offsets[i] + off;
	}
	return v;
}

/* Number of elements of the view (0 for a tensor without dimensions). */
static inline uint64_t pto_tensor_numel(const Tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

	if (!t->ndims || t->ndims > PTO2_MAX_TENSOR_DIMS)
		return 0;
	for (i = 0; i < t->ndims; i++)
		n *= t->shapes[i];
	return n;
}

/* ---- Parameters -------------------------------------------------------- */

/**
 * struct PTOParam - one task parameter.
 * @type: PTO_PARAM_* (PTOParamType::* in C++).
 * @tensor: the caller's tensor (NULL for scalars); OUTPUT allocation
 *	writes the address back through it.
 * @scalar_value: the value of a SCALAR parameter.
 */
typedef struct PTOParam {
	PTOParamType type;
	int32_t pad_;
	Tensor *tensor;
	uint64_t scalar_value;
} PTOParam;

static inline PTOParam pto_param_(int32_t type, Tensor *t, uint64_t v)
{
	PTOParam p;

	p.type = (PTOParamType)type;
	p.pad_ = 0;
	p.tensor = t;
	p.scalar_value = v;
	return p;
}

static inline PTOParam make_input_param(Tensor *t)
{
	return pto_param_(PTO_PARAM_INPUT, t, 0);
}

static inline PTOParam make_output_param(Tensor *t)
{
	return pto_param_(PTO_PARAM_OUTPUT, t, 0);
}

static inline PTOParam make_inout_param(Tensor *t)
{
	return pto_param_(PTO_PARAM_INOUT, t, 0);
}

static inline PTOParam make_scalar_param(uint64_t value)
{
	return pto_param_(PTO_PARAM_SCALAR, (Tensor *)0, value);
}

/* ---- Task attributes ---------------------------------------------------- */

#define PTO2_ATTR_COOP		(1U << 0)	/* all blocks at once, or none */
#define PTO2_ATTR_CLUSTER	(1U << 1)	/* pinned to @cluster_id */
#define PTO2_ATTR_PRIORITY	(1U << 2)	/* @priority is the offline
						 * priority (else: submission
						 * order) */
#define PTO2_ATTR_ON_CP		(1U << 3)	/* on a critical path */
#define PTO2_ATTR_ALL		0xfU

#define PTO2_AFFINITY_WORDS	4		/* 256 cores */

/**
 * struct PTO2TaskAttr - how a task launches (zero: the defaults).
 * @block_num: blocks of the launch (SPMD), 0 or 1: one.
 * @thread_num: cores per block, 0 or 1: one; 2: the two AIV of a cluster
 *	(PTO2_WORKER_VECTOR); 3: a whole cluster, 2 AIV + 1 AIC
 *	(PTO2_WORKER_MIXED).
 * @flags: PTO2_ATTR_* bits.
 * @est_time_ns: estimated time of one block; 0: the kernel's cost
 *	(pto2_rt_set_kernel_cost), else what the runtime has measured. An
 *	estimate past 2^40 ns (about 18 minutes) counts as 2^40.
 * @priority: with PTO2_ATTR_PRIORITY: the offline priority (higher first).
 * @cluster_id: with PTO2_ATTR_CLUSTER: from pto2_rt_allocate_cluster().
 * @affinity: cores the task may use (bit i of word i / 64: core i); all
 *	zero: any core of its type.
 */
typedef struct PTO2TaskAttr {
	uint16_t block_num;
	uint16_t thread_num;
	uint32_t flags;
	uint64_t est_time_ns;
	uint32_t priority;
	int32_t cluster_id;
	uint64_t affinity[PTO2_AFFINITY_WORDS];
} PTO2TaskAttr;

/* ---- Runtime calls ----------------------------------------------------- */

/* Submit one task; dependencies are derived from the tensor params. */
void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
			 PTO2WorkerType worker_type, PTOParam *params,
			 int32_t num_params);
/* The same, launched as @attr says (NULL: as pto2_rt_submit_task). */
void pto2_rt_submit_task_attr(PTO2Runtime *rt, int32_t kernel_id,
			      PTO2WorkerType worker_type, PTOParam *params,
			      int32_t num_params, const PTO2TaskAttr *attr);
/*
 * Default estimated time (ns) of one block of @kernel_id's tasks, for the
 * tasks submitted after the call (earlier ones keep the cost they had,
 * in a static graph's ranks as in the scheduler).
 */
void pto2_rt_set_kernel_cost(PTO2Runtime *rt, int32_t kernel_id,
			     uint64_t est_ns);
/*
 * Clusters: a cluster is one block of the device (1 AIC + 2 AIV). Tasks
 * submitted with its id run only on its cores. allocate waits while every
 * cluster is allocated (BLOCKED warnings, then a flow-control deadlock
 * error, as for the rings) and returns the id, or -1 after an error; a
 * cluster is released by free_cluster or at the end of the scope that
 * allocated it, and is reused once the tasks submitted on it completed.
 * Through libpto the id comes at once (ptod allocates the cluster when it
 * replays the graph): there the wait, and a deadlock's error, come with
 * the graph's run, not from this call.
 */
int32_t pto2_rt_allocate_cluster(PTO2Runtime *rt);
void pto2_rt_free_cluster(PTO2Runtime *rt, int32_t cluster_id);
void pto2_rt_submit_task_clustered(PTO2Runtime *rt, int32_t kernel_id,
				   PTO2WorkerType worker_type,
				   PTOParam *params, int32_t num_params,
				   int32_t cluster_id);
void pto2_rt_scope_begin(PTO2Runtime *rt);
void pto2_rt_scope_end(PTO2Runtime *rt);
/* Signal that no more tasks will be submitted (idempotent). */
void pto2_rt_orchestration_done(PTO2Runtime *rt);
/* Kept for source compatibility: tensors are plain values here. */
void pto2_rt_init_tensor_pool(PTO2Runtime *rt);
/* 0, or the negative errno of the runtime's first fatal error. */
int pto2_rt_get_error(PTO2Runtime *rt);
/* Diagnosis text of that error ("" if none); valid while rt lives. */
const char *pto2_rt_get_error_msg(PTO2Runtime *rt);

/*
 * block_incore: one SPMD call of @kernel_id over @block_dim blocks,
 * expanded into @block_dim tasks (MPMD). Task b gets the call's @n params
 * followed by two scalars, block_dim and b (its last two kernel args).
 * More than PTO2_MAX_TASK_PARAMS - 2 params, fewer than 0, or params NULL
 * with some, fail the graph at submit.
 */
static inline int32_t pto2_block_params_(PTOParam *p, const PTOParam *params,
					  int32_t n, uint32_t block_dim,
					  uint32_t b)
{
	int32_t i;

	/* -1: submit refuses the count before reading @p */
	if (n < 0 || n > PTO2_MAX_TASK_PARAMS - 2 || (n && !params))
		return -1;
	for (i = 0; i < n; i++)
		p[i] = params[i];
	p[i] = make_scalar_param(block_dim);
	p[i + 1] = make_scalar_param(b);
	return n + 2;
}

static inline void pto2_rt_submit_block_incore(PTO2Runtime *rt,
					       int32_t kernel_id,
					       PTO2WorkerType worker_type,
					       const PTOParam *params,
					       int32_t n, uint32_t block_dim)
{
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	uint32_t b;
	int32_t np;

	for (b = 0; b < block_dim; b++) {
		np = pto2_block_params_(p, params, n, block_dim, b);
		pto2_rt_submit_task(rt, kernel_id, worker_type, p, np);
		if (np < 0)
			return;		/* refused: the graph failed */
	}
}

/*
 * block_incore of a cube + vector incore function, one cluster per block:
 * block b's cube task (@cube_kernel, @cube_params) and vector task
 * (@vec_kernel, @vec_params), each with block_dim and b appended, run on
 * a cluster allocated for the block (its AIC and its AIV), ordered by
 * their data as any tasks are. The clusters are released at the end of
 * the enclosing PTO2_SCOPE.
 */
static inline void
pto2_rt_submit_block_incore_paired(PTO2Runtime *rt, int32_t cube_kernel,
				   const PTOParam *cube_params, int32_t n_cube,
				   int32_t vec_kernel,
				   const PTOParam *vec_params, int32_t n_vec,
				   uint32_t block_dim)
{
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	uint32_t b;
	int32_t n, cid;

	for (b = 0; b < block_dim; b++) {
		cid = pto2_rt_allocate_cluster(rt);
		if (cid < 0)
			return;		/* the runtime's error says why */
		n = pto2_block_params_(p, cube_params, n_cube, block_dim, b);
		pto2_rt_submit_task_clustered(rt, cube_kernel, PTO2_WORKER_CUBE,
					      p, n, cid);
		if (n < 0)
			return;		/* refused: the graph failed */
		n = pto2_block_params_(p, vec_params, n_vec, block_dim, b);
		pto2_rt_submit_task_clustered(rt, vec_kernel, PTO2_WORKER_VECTOR,
					      p, n, cid);
		if (n < 0)
			return;
	}
}

#ifndef __cplusplus
#define PTO2_CONCAT_(a, b) a##b
#define PTO2_CONCAT(a, b) PTO2_CONCAT_(a, b)
#define PTO2_SCOPE(rt)							\
	for (int PTO2_CONCAT(pto2_scope_once_, __LINE__) =		\
		     (pto2_rt_scope_begin(rt), 0);			\
	     !PTO2_CONCAT(pto2_scope_once_, __LINE__);			\
	     PTO2_CONCAT(pto2_scope_once_, __LINE__) =			\
		     (pto2_rt_scope_end(rt), 1))
#endif

/* ---- Orchestration shared object ABI ------------------------------------ */

typedef struct PTO2OrchestrationConfig {
	int expected_arg_count;
} PTO2OrchestrationConfig;

typedef PTO2OrchestrationConfig (*pto2_orchestration_config_fn)(uint64_t *args,
								 int arg_count);
typedef int (*pto2_orchestration_entry_fn)(PTO2Runtime *rt, uint64_t *args,
					   int arg_count);

/*
 * What an orchestration .so exports (extern "C"). The config function
 * tells the caller how many args to expect; it may be called before the
 * args' buffers exist (pto-run passes 0 for each buffer then).
 */
PTO2OrchestrationConfig aicpu_orchestration_config(uint64_t *args, int arg_count);
int aicpu_orchestration_entry(PTO2Runtime *rt, uint64_t *args, int arg_count);

#ifdef __cplusplus
} /* extern "C" */

/* C++: reference-runtime style overloads and RAII scope. */
static inline PTOParam make_input_param(Tensor &t) { return make_input_param(&t); }
static inline PTOParam make_output_param(Tensor &t) { return make_output_param(&t); }
static inline PTOParam make_inout_param(Tensor &t) { return make_inout_param(&t); }
static inline uint32_t get_element_size(DataType dt) { return pto_dtype_size(dt); }
static inline Tensor make_tensor_external(void *ptr, const uint64_t shapes[],
					  uint64_t ndims)
{
	return make_tensor_external(ptr, shapes, ndims, DataType::FP32);
}
class PTO2ScopeGuard {
public:
	explicit PTO2ScopeGuard(PTO2Runtime *rt) : rt_(rt), once_(true)
	{
		pto2_rt_scope_begin(rt_);
	}
	~PTO2ScopeGuard() { pto2_rt_scope_end(rt_); }
	bool once() { bool o = once_; once_ = false; return o; }
	PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
	PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;
private:
	PTO2Runtime *rt_;
	bool once_;
};

#define PTO2_CONCAT_(a, b) a##b
#define PTO2_CONCAT(a, b) PTO2_CONCAT_(a, b)
#define PTO2_SCOPE(rt)							\
	for (PTO2ScopeGuard PTO2_CONCAT(pto2_scope_guard_, __LINE__)(rt); \
	     PTO2_CONCAT(pto2_scope_guard_, __LINE__).once();)
#endif /* __cplusplus */

#endif /* PTO_ORCHESTRATION_API_H */
