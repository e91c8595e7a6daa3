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
 * produces it.
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

#define PTO2_MAX_TENSOR_DIMS	5
#define PTO2_MAX_TASK_PARAMS	16	/* params per task (and kernel args) */

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
	t.ndims = (uint32_t)ndims;
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

/* An intermediate tensor: addr = 0, allocated by the runtime at submit. */
static inline Tensor make_tensor(const uint64_t *shapes, uint64_t ndims,
				 DataType dtype)
{
	return pto_tensor_init_(0, shapes, ndims, dtype);
}

/*
 * A view of @t: @shapes and @offsets (elements, per dimension) relative to
 * @t's own view. The result shares @t's buffer (addr, size, raw_shapes).
 * Out-of-range views are not checked here; submit rejects them.
 */
static inline Tensor pto_tensor_view(const Tensor *t, const uint64_t *shapes,
				     const uint64_t *offsets)
{
	Tensor v = *t;
	uint32_t i;

	for (i = 0; i < t->ndims && i < PTO2_MAX_TENSOR_DIMS; i++) {
		v.shapes[i] = shapes[i];
		v.offsets[i] = t->offsets[i] + (offsets ? offsets[i] : 0);
	}
	return v;
}

/* Number of elements of the view. */
static inline uint64_t pto_tensor_numel(const Tensor *t)
{
	uint64_t n = 1;
	uint32_t i;

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

/* ---- Runtime calls ----------------------------------------------------- */

/* Submit one task; dependencies are derived from the tensor params. */
void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
			 PTO2WorkerType worker_type, PTOParam *params,
			 int32_t num_params);
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

/* What an orchestration .so exports (extern "C"). */
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
