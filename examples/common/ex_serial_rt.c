// SPDX-License-Identifier: MIT
/*
 * A serial reference executor of the PTO2 orchestration API, used by the
 * native check programs to run an orchestration .so without the runtime.
 * See ex_exec.h.  Not thread safe; one run at a time.
 */
#include "ex_exec.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_orchestration_api.h>

#define EX_MAX_SCOPE_DEPTH	64

struct ex_alloc {
	struct ex_alloc *next;
	void *p;
};

struct PTO2Runtime {
	struct ex_kernel_set *ks;
	struct ex_alloc *scope_allocs[EX_MAX_SCOPE_DEPTH];
	int depth;
	int error;
	int done;
	unsigned long tasks;
	char msg[512];
};

static void rt_fail(PTO2Runtime *rt, int err, const char *fmt, ...)
{
	va_list ap;

	if (rt->error)
		return;
	rt->error = err;
	va_start(ap, fmt);
	vsnprintf(rt->msg, sizeof(rt->msg), fmt, ap);
	va_end(ap);
}

/*
 * Host pointer of the first element of a view; 0 on error.  Checks the
 * view against the buffer. A strided view is passed as the runtime
 * passes it: its first element; the kernel steps with the buffer's
 * strides.
 */
static uint64_t view_ptr(PTO2Runtime *rt, const Tensor *t, int idx)
{
	uint32_t es = pto_dtype_size(t->dtype);
	uint64_t numel = 1, off = 0, stride = 1;
	int d;

	if (t->ndims < 1 || t->ndims > PTO2_MAX_TENSOR_DIMS || es == 0) {
		rt_fail(rt, -EINVAL, "task %lu param %d: bad ndims %u or dtype %d",
			rt->tasks, idx, t->ndims, (int)t->dtype);
		return 0;
	}
	for (d = 0; d < (int)t->ndims; d++) {
		if (t->shapes[d] == 0 ||
		    t->offsets[d] + t->shapes[d] > t->raw_shapes[d]) {
			rt_fail(rt, -ERANGE, "task %lu param %d: view dim %d [%llu, +%llu) outside %llu",
				rt->tasks, idx, d,
				(unsigned long long)t->offsets[d],
				(unsigned long long)t->shapes[d],
				(unsigned long long)t->raw_shapes[d]);
			return 0;
		}
		numel *= t->raw_shapes[d];
	}
	if (numel * es != t->size) {
		rt_fail(rt, -EINVAL, "task %lu param %d: size %llu != shape product",
			rt->tasks, idx, (unsigned long long)t->size);
		return 0;
	}
	for (d = (int)t->ndims - 1; d >= 0; d--) {
		off += t->offsets[d] * stride;
		stride *= t->raw_shapes[d];
	}
	return t->addr + off * es;
}

void pto2_rt_submit_task(PTO2Runtime *rt, int32_t kernel_id,
			 PTO2WorkerType worker_type, PTOParam *params,
			 int32_t num_params)
{
	uint64_t args[PTO2_MAX_TASK_PARAMS];
	int32_t i;
	int ret;

	if (rt->error)
		return;
	if (rt->done || rt->depth <= 0) {
		rt_fail(rt, -EINVAL, "submit outside the orchestration's scope");
		return;
	}
	if (num_params < 0 || num_params > PTO2_MAX_TASK_PARAMS ||
	    (num_params && !params)) {
		rt_fail(rt, -EINVAL, "task %lu: %d params", rt->tasks, num_params);
		return;
	}
	for (i = 0; i < num_params; i++) {
		PTOParam *p = &params[i];
		Tensor *t = p->tensor;

		switch ((int32_t)p->type) {
		case PTO_PARAM_SCALAR:
			args[i] = p->scalar_value;
			continue;
		case PTO_PARAM_INPUT:
		case PTO_PARAM_INOUT:
		case PTO_PARAM_OUTPUT:
			break;
		default:
			rt_fail(rt, -EINVAL, "task %lu param %d: type %d",
				rt->tasks, i, (int)p->type);
			return;
		}
		if (!t) {
			rt_fail(rt, -EINVAL, "task %lu param %d: no tensor",
				rt->tasks, i);
			return;
		}
		if (t->addr == 0) {
			struct ex_alloc *a;

			if ((int32_t)p->type != PTO_PARAM_OUTPUT) {
				rt_fail(rt, -EINVAL, "task %lu param %d: reads a tensor nobody produced",
					rt->tasks, i);
				return;
			}
			a = malloc(sizeof(*a));
			if (a)
				a->p = malloc(t->size ? t->size : 1);
			if (!a || !a->p) {
				free(a);
				rt_fail(rt, -ENOMEM, "task %lu: out of memory", rt->tasks);
				return;
			}
			memset(a->p, 0xff, t->size);	/* NaN until written */
			a->next = rt->scope_allocs[rt->depth - 1];
			rt->scope_allocs[rt->depth - 1] = a;
			t->addr = (uint64_t)(uintptr_t)a->p;
		}
		args[i] = view_ptr(rt, t, i);
		if (!args[i])
			return;
	}
	ret = ex_kernel_run(rt->ks, kernel_id, worker_type, args,
			    (uint32_t)num_params);
	rt->tasks++;
	if (ret < 0)
		rt_fail(rt, -EIO, "task %lu (func %d) failed: %d",
			rt->tasks - 1, kernel_id, ret);
}

void pto2_rt_scope_begin(PTO2Runtime *rt)
{
	if (rt->depth >= EX_MAX_SCOPE_DEPTH) {
		rt_fail(rt, -EOVERFLOW, "scopes nested deeper than %d",
			EX_MAX_SCOPE_DEPTH);
		return;
	}
	rt->scope_allocs[rt->depth++] = NULL;
}

void pto2_rt_scope_end(PTO2Runtime *rt)
{
	struct ex_alloc *a, *next;

	if (rt->depth <= 0) {
		rt_fail(rt, -EINVAL, "scope_end without scope_begin");
		return;
	}
	for (a = rt->scope_allocs[--rt->depth]; a; a = next) {
		next = a->next;
		free(a->p);
		free(a);
	}
}

void pto2_rt_orchestration_done(PTO2Runtime *rt)
{
	rt->done = 1;
}

void pto2_rt_init_tensor_pool(PTO2Runtime *rt)
{
	(void)rt;
}

int pto2_rt_get_error(PTO2Runtime *rt)
{
	return rt->error;
}

const char *pto2_rt_get_error_msg(PTO2Runtime *rt)
{
	return rt->msg;
}

int ex_serial_run_orch(const char *orch_so, struct ex_kernel_set *ks,
		       uint64_t *args, int nargs, unsigned long *tasks)
{
	pto2_orchestration_config_fn config;
	pto2_orchestration_entry_fn entry;
	PTO2OrchestrationConfig cfg;
	PTO2Runtime rt;
	void *dl;
	int ret;

	*tasks = 0;
	dl = dlopen(orch_so, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "dlopen %s: %s\n", orch_so, dlerror());
		return -ENOENT;
	}
	*(void **)&config = dlsym(dl, "aicpu_orchestration_config");
	*(void **)&entry = dlsym(dl, "aicpu_orchestration_entry");
	if (!config || !entry) {
		fprintf(stderr, "%s: missing aicpu_orchestration_config/entry\n",
			orch_so);
		dlclose(dl);
		return -ENOENT;
	}
	cfg = config(args, nargs);
	if (cfg.expected_arg_count != nargs) {
		fprintf(stderr, "%s: expects %d args, given %d\n", orch_so,
			cfg.expected_arg_count, nargs);
		dlclose(dl);
		return -EINVAL;
	}

	memset(&rt, 0, sizeof(rt));
	rt.ks = ks;
	pto2_rt_scope_begin(&rt);		/* the runtime's outer scope */
	ret = entry(&rt, args, nargs);
	while (rt.depth > 0)
		pto2_rt_scope_end(&rt);
	pto2_rt_orchestration_done(&rt);
	if (ret == 0 && rt.error)
		ret = rt.error;
	if (ret < 0)
		fprintf(stderr, "%s: orchestration failed: %d%s%s\n", orch_so,
			ret, rt.msg[0] ? ": " : "", rt.msg);
	*tasks = rt.tasks;
	dlclose(dl);
	return ret;
}
