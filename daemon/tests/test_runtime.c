// SPDX-License-Identifier: MIT
/*
 * test_runtime.c - end to end on the sim device: orchestrator, schedulers,
 * cores running C kernels; scopes; flow control; error state
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_kernel.h>

#include "pto2_internal.h"	/* scope_depth, for t_scope_flood() */
#include "pto2_runtime.h"
#include "pto2_util.h"
#include "sim_device.h"
#include "sim_env.h"
#include "tap.h"
#include "test_kernels.h"

/* ---- kernels --------------------------------------------------------------- */

enum { K_ADD, K_ADD_SCALAR, K_MUL, K_SET, K_CHAIN, K_FILL, K_SUM_ROWS,
       K_COPY_INC, K_FAIL, K_NOOP, K_SLOW, K_ADD_I64, K_GATE, K_NAP_FILL,
       K_NAP_COPY, K_PAIR };

/* out = a + b; args: a, b, out, n */
static int k_add(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	const float *x = (const float *)(uintptr_t)a[0];
	const float *y = (const float *)(uintptr_t)a[1];
	float *o = (float *)(uintptr_t)a[2];
	uint64_t i;

	(void)c;
	if (n != 4)
		return -EINVAL;
	for (i = 0; i < a[3]; i++)
		o[i] = x[i] + y[i];
	return 0;
}

/* out = in + s; args: in, out, s (f32 bits), n */
static int k_add_scalar(const struct pto_kernel_ctx *c, const uint64_t *a,
			uint32_t n)
{
	const float *x = (const float *)(uintptr_t)a[0];
	float *o = (float *)(uintptr_t)a[1];
	float s = pto_arg_f32(a[2]);
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[3]; i++)
		o[i] = x[i] + s;
	return 0;
}

/* out = a * b; args: a, b, out, n */
static int k_mul(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	const float *x = (const float *)(uintptr_t)a[0];
	const float *y = (const float *)(uintptr_t)a[1];
	float *o = (float *)(uintptr_t)a[2];
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[3]; i++)
		o[i] = x[i] * y[i];
	return 0;
}

/* *out = value; args: out (int64), value */
static int k_set(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	(void)c;
	(void)n;
	*(int64_t *)(uintptr_t)a[0] = (int64_t)a[1];
	return 0;
}

/* INOUT chain step: fails unless *x == expected, then ++*x */
static int k_chain(const struct pto_kernel_ctx *c, const uint64_t *a,
		   uint32_t n)
{
	int64_t *x = (int64_t *)(uintptr_t)a[0];

	(void)c;
	(void)n;
	if (*x != (int64_t)a[1])
		return -EILSEQ;
	*x += 1;
	return 0;
}

/* fill int64[n] with v; args: out, v, n */
static int k_fill(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	int64_t *o = (int64_t *)(uintptr_t)a[0];
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[2]; i++)
		o[i] = (int64_t)a[1];
	return 0;
}

/* *out = sum(in[0..n)); args: in (int64), out (int64), n */
static int k_sum(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	const int64_t *x = (const int64_t *)(uintptr_t)a[0];
	int64_t s = 0;
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[2]; i++)
		s += x[i];
	*(int64_t *)(uintptr_t)a[1] = s;
	return 0;
}

/* out[i] = in[i] + k; args: in (int64), out (int64), k, n */
static int k_copy_inc(const struct pto_kernel_ctx *c, const uint64_t *a,
		      uint32_t n)
{
	const int64_t *x = (const int64_t *)(uintptr_t)a[0];
	int64_t *o = (int64_t *)(uintptr_t)a[1];
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[3]; i++)
		o[i] = x[i] + (int64_t)a[2];
	return 0;
}

/* out = x + y (int64); args: x, y, out, n */
static int k_add_i64(const struct pto_kernel_ctx *c, const uint64_t *a,
		     uint32_t n)
{
	const int64_t *x = (const int64_t *)(uintptr_t)a[0];
	const int64_t *y = (const int64_t *)(uintptr_t)a[1];
	int64_t *o = (int64_t *)(uintptr_t)a[2];
	uint64_t i;

	(void)c;
	(void)n;
	for (i = 0; i < a[3]; i++)
		o[i] = x[i] + y[i];
	return 0;
}

static int k_fail(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	(void)c;
	(void)a;
	(void)n;
	return -EDOM;
}

static int k_slow(const struct pto_kernel_ctx *c, const uint64_t *a, uint32_t n)
{
	struct timespec ts = { 0, (long)a[0] };

	(void)c;
	(void)n;
	nanosleep(&ts, NULL);
	return 0;
}

/* sleep, then fill int64[n] with v; args: ns, out, v, n (then any) */
static int k_nap_fill(const struct pto_kernel_ctx *c, const uint64_t *a,
		      uint32_t n)
{
	int64_t *o = (int64_t *)(uintptr_t)a[1];
	uint64_t i;

	(void)c;
	(void)n;
	pto_sleep_ns(a[0]);
	for (i = 0; i < a[3]; i++)
		o[i] = (int64_t)a[2];
	return 0;
}

/* sleep, then copy int64[n]; args: ns, in, out, n */
static int k_nap_copy(const struct pto_kernel_ctx *c, const uint64_t *a,
		      uint32_t n)
{
	(void)c;
	(void)n;
	pto_sleep_ns(a[0]);
	memcpy((void *)(uintptr_t)a[2], (const void *)(uintptr_t)a[1],
	       a[3] * 8);
	return 0;
}

/* Says it runs, then waits (up to 10 s) until the test opens the gate. */
static _Atomic int gate_started, gate_open;

static int k_gate(const struct pto_kernel_ctx *c, const uint64_t *a,
		  uint32_t n)
{
	int i;

	(void)c;
	(void)a;
	(void)n;
	atomic_store(&gate_started, 1);
	for (i = 0; i < 100000 && !atomic_load(&gate_open); i++)
		pto_sleep_ns(100000);
	return 0;
}

/*
 * Two of these meet: each says it started, then waits (up to 1 s) for
 * the other, and fails if it does not come. Which ran on @pair_waiter's
 * thread is counted in @pair_on_waiter.
 */
static _Atomic int pair_started, pair_on_waiter;
static pthread_t pair_waiter;

static int k_pair(const struct pto_kernel_ctx *c, const uint64_t *a,
		  uint32_t n)
{
	int i;

	(void)c;
	(void)a;
	(void)n;
	if (pthread_equal(pthread_self(), pair_waiter))
		atomic_fetch_add(&pair_on_waiter, 1);
	atomic_fetch_add(&pair_started, 1);
	for (i = 0; i < 10000 && atomic_load(&pair_started) < 2; i++)
		pto_sleep_ns(100000);
	return atomic_load(&pair_started) < 2 ? -ETIMEDOUT : 0;
}

static void register_kernels(struct sim_device *sd)
{
	sim_device_set_kernel(sd, K_ADD, k_add);
	sim_device_set_kernel(sd, K_ADD_SCALAR, k_add_scalar);
	sim_device_set_kernel(sd, K_MUL, k_mul);
	sim_device_set_kernel(sd, K_SET, k_set);
	sim_device_set_kernel(sd, K_CHAIN, k_chain);
	sim_device_set_kernel(sd, K_FILL, k_fill);
	sim_device_set_kernel(sd, K_SUM_ROWS, k_sum);
	sim_device_set_kernel(sd, K_COPY_INC, k_copy_inc);
	sim_device_set_kernel(sd, K_FAIL, k_fail);
	sim_device_set_kernel(sd, K_NOOP, k_nop);
	sim_device_set_kernel(sd, K_SLOW, k_slow);
	sim_device_set_kernel(sd, K_ADD_I64, k_add_i64);
	sim_device_set_kernel(sd, K_GATE, k_gate);
	sim_device_set_kernel(sd, K_NAP_FILL, k_nap_fill);
	sim_device_set_kernel(sd, K_NAP_COPY, k_nap_copy);
	sim_device_set_kernel(sd, K_PAIR, k_pair);
}

/*
 * Run @orch with args { GM for @n int64 rows, @n }; *@rows maps the rows.
 */
static int run_rows(struct env *e, pto2_orchestration_entry_fn orch,
		    uint64_t n, int64_t **rows)
{
	uint64_t args[2] = { gm(n * 8), n };

	*rows = host(args[0]);
	return run(e, orch, args, 2);
}

/* env_open() with the test kernels registered. */
static void env_kernels(struct env *e, uint32_t aic, uint32_t aiv,
			const struct pto2_config *c)
{
	env_open(e, aic, aiv, c);
	register_kernels(e->sd);
}

/* ---- orchestrations ----------------------------------------------------------- */

/* PTO2's vector example: f = (a + b + 1)(a + b + 2) + (a + b). */
static int orch_vector(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t n = args[3];
	Tensor a = ext1(args[0], n, PTO_DT_FP32);
	Tensor b = ext1(args[1], n, PTO_DT_FP32);
	Tensor f = ext1(args[2], n, PTO_DT_FP32);
	Tensor c = make_tensor(&n, 1, PTO_DT_FP32);
	PTOParam p0[] = { make_input_param(&a), make_input_param(&b),
			  make_output_param(&c), make_scalar_param(n) };

	if (argc != 4)
		return -EINVAL;
	pto2_rt_submit_task(rt, K_ADD, PTO2_WORKER_VECTOR, p0, 4); /* t0: c = a + b */
	PTO2_SCOPE(rt) {
		Tensor d = make_tensor(&n, 1, PTO_DT_FP32);
		Tensor e = make_tensor(&n, 1, PTO_DT_FP32);
		Tensor g = make_tensor(&n, 1, PTO_DT_FP32);
		PTOParam p1[] = { make_input_param(&c), make_output_param(&d),
				  make_scalar_param(pto_f32_arg(1.0f)),
				  make_scalar_param(n) };
		PTOParam p2[] = { make_input_param(&c), make_output_param(&e),
				  make_scalar_param(pto_f32_arg(2.0f)),
				  make_scalar_param(n) };

		pto2_rt_submit_task(rt, K_ADD_SCALAR, PTO2_WORKER_VECTOR, p1, 4);
		pto2_rt_submit_task(rt, K_ADD_SCALAR, PTO2_WORKER_VECTOR, p2, 4);
		{
			PTOParam p3[] = { make_input_param(&d),
					  make_input_param(&e),
					  make_output_param(&g),
					  make_scalar_param(n) };
			pto2_rt_submit_task(rt, K_MUL, PTO2_WORKER_VECTOR, p3, 4);
		}
		{
			PTOParam p4[] = { make_input_param(&g),
					  make_input_param(&c),
					  make_inout_param(&f),
					  make_scalar_param(n) };
			pto2_rt_submit_task(rt, K_ADD, PTO2_WORKER_VECTOR, p4, 4);
		}
	}
	return 0;
}

int cxx_orch_entry(PTO2Runtime *rt, uint64_t *args, int argc);

static int vector_example_fn(struct env *e, const char *what,
			     pto2_orchestration_entry_fn fn)
{
	const uint64_t n = 16384;
	uint64_t da = gm(n * 4), db = gm(n * 4), df = gm(n * 4);
	float *a = host(da), *b = host(db), *f = host(df);
	uint64_t args[4] = { da, db, df, n };
	uint64_t i, bad = 0;
	struct pto2_stats st;
	int ret;

	for (i = 0; i < n; i++) {
		a[i] = 2.0f;
		b[i] = 3.0f;
		f[i] = 0.0f;
	}
	ret = run(e, fn, args, 4);
	for (i = 0; i < n; i++)
		if (fabsf(f[i] - 47.0f) > 1e-5f && bad++ < 3)
			tap_diag("f[%llu] = %f", (unsigned long long)i, f[i]);
	pto2_runtime_get_stats(e->rt, &st);
	ok(ret == 0 && !bad && st.tasks_submitted == 5 &&
	   st.tasks_completed == 5,
	   "%s: vector example, 16384 fp32, 5 tasks: f == 47 (ret %d, %llu bad)",
	   what, ret, (unsigned long long)bad);
	return ret || bad;
}

static int vector_example(struct env *e, const char *what)
{
	return vector_example_fn(e, what, orch_vector);
}

/* independent tasks: out[i] = i */
static int orch_independent(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor out = ext1(args[0], args[1], PTO_DT_INT64);
	uint64_t i, one = 1;

	(void)argc;
	for (i = 0; i < args[1]; i++) {
		Tensor v = pto_tensor_view(&out, &one, &i);
		PTOParam p[] = { make_output_param(&v), make_scalar_param(i) };

		pto2_rt_submit_task(rt, K_SET, i % 3 ? PTO2_WORKER_VECTOR :
			PTO2_WORKER_CUBE, p, 2);
	}
	return 0;
}

/* one INOUT chain: counter 0 -> n, in order */
static int orch_chain(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = ext1(args[0], 1, PTO_DT_INT64);
	uint64_t i;

	(void)argc;
	for (i = 0; i < args[1]; i++) {
		PTOParam p[] = { make_inout_param(&x), make_scalar_param(i) };

		pto2_rt_submit_task(rt, K_CHAIN, (i & 1) ? PTO2_WORKER_CUBE :
				    PTO2_WORKER_VECTOR, p, 2);
	}
	return 0;
}

/* several interleaved INOUT chains, in small scopes */
static int orch_chains(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t chains = args[1], len = args[2], i, k;
	Tensor x[8];

	(void)argc;
	for (k = 0; k < chains; k++)
		x[k] = ext1(args[0] + k * 1024, 1, PTO_DT_INT64);
	for (i = 0; i < len; i++) {
		PTO2_SCOPE(rt) {
			for (k = 0; k < chains; k++) {
				PTOParam p[] = { make_inout_param(&x[k]),
						 make_scalar_param(i) };

				pto2_rt_submit_task(rt, K_CHAIN,
						    PTO2_WORKER_VECTOR, p, 2);
			}
		}
	}
	return 0;
}

/*
 * fan-out / fan-in: a producer fills src[72]; 72 consumers each read all
 * of src and write row i of mid (a view); one task reads all of mid
 * (72 producers) and sums it.
 */
static int orch_fan(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const uint64_t n = 72;
	Tensor src = make_tensor(&n, 1, PTO_DT_INT64);
	Tensor mid = ext1(args[0], n, PTO_DT_INT64);
	Tensor res = ext1(args[1], 1, PTO_DT_INT64);
	PTOParam p0[] = { make_output_param(&src), make_scalar_param(5),
			  make_scalar_param(n) };
	uint64_t i, one = 1;

	(void)argc;
	pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_VECTOR, p0, 3);
	for (i = 0; i < n; i++) {
		Tensor row = pto_tensor_view(&mid, &one, &i);
		PTOParam p[] = { make_input_param(&src), make_output_param(&row),
				 make_scalar_param(i), make_scalar_param(1) };

		pto2_rt_submit_task(rt, K_COPY_INC, i & 1 ? PTO2_WORKER_CUBE :
				    PTO2_WORKER_VECTOR, p, 4);
	}
	{
		PTOParam p[] = { make_input_param(&mid), make_output_param(&res),
				 make_scalar_param(n) };

		pto2_rt_submit_task(rt, K_SUM_ROWS, PTO2_WORKER_VECTOR, p, 3);
	}
	return 0;
}

/* diamond: A fills x; B = x + 1, C = x + 2 (intermediates); D = B + C */
static int orch_diamond(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const uint64_t n = 256;
	Tensor x = make_tensor(&n, 1, PTO_DT_INT64);
	Tensor b = make_tensor(&n, 1, PTO_DT_INT64);
	Tensor c = make_tensor(&n, 1, PTO_DT_INT64);
	Tensor out = ext1(args[0], n, PTO_DT_INT64);
	PTOParam pa[] = { make_output_param(&x), make_scalar_param(10),
			  make_scalar_param(n) };
	PTOParam pb[] = { make_input_param(&x), make_output_param(&b),
			  make_scalar_param(1), make_scalar_param(n) };
	PTOParam pc[] = { make_input_param(&x), make_output_param(&c),
			  make_scalar_param(2), make_scalar_param(n) };
	PTOParam pd[] = { make_input_param(&b), make_input_param(&c),
			  make_output_param(&out), make_scalar_param(n) };

	(void)argc;
	pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_CUBE, pa, 3);
	pto2_rt_submit_task(rt, K_COPY_INC, PTO2_WORKER_VECTOR, pb, 4);
	pto2_rt_submit_task(rt, K_COPY_INC, PTO2_WORKER_CUBE, pc, 4);
	/* pd's inputs got their addresses from the submits above */
	pd[0] = make_input_param(&b);
	pd[1] = make_input_param(&c);
	pto2_rt_submit_task(rt, K_ADD_I64, PTO2_WORKER_VECTOR, pd, 4);
	return 0;
}

/*
 * intermediates: per scope, x = fill(i) and y = x + 1 are make_tensor()
 * intermediates (4 KiB each, from the heap ring), then row i of the
 * external output = y + 1.
 */
static int orch_intermediates(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const uint64_t n = 512, one = 1;
	Tensor out = ext1(args[0], args[1], PTO_DT_INT64);
	uint64_t i;

	(void)argc;
	for (i = 0; i < args[1]; i++) {
		PTO2_SCOPE(rt) {
			Tensor x = make_tensor(&n, 1, PTO_DT_INT64);
			Tensor y = make_tensor(&n, 1, PTO_DT_INT64);
			Tensor row = pto_tensor_view(&out, &one, &i);
			PTOParam p0[] = { make_output_param(&x),
					  make_scalar_param(i),
					  make_scalar_param(n) };
			PTOParam p1[] = { make_input_param(&x),
					  make_output_param(&y),
					  make_scalar_param(1),
					  make_scalar_param(n) };
			PTOParam p2[] = { make_input_param(&y),
					  make_output_param(&row),
					  make_scalar_param(1),
					  make_scalar_param(1) };

			pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_VECTOR,
					    p0, 3);
			p1[0] = make_input_param(&x);
			pto2_rt_submit_task(rt, K_COPY_INC, PTO2_WORKER_CUBE,
					    p1, 4);
			p2[0] = make_input_param(&y);
			pto2_rt_submit_task(rt, K_COPY_INC, PTO2_WORKER_VECTOR,
					    p2, 4);
		}
	}
	return 0;
}

/* args[0] tasks in ONE scope (deadlocks if >= window - 1) */
static int orch_big_scope(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t i;

	(void)argc;
	PTO2_SCOPE(rt) {
		for (i = 0; i < args[0]; i++)
			pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR,
					    NULL, 0);
	}
	return 0;
}

/* args[0] tasks in scopes of args[1] */
static int orch_scoped_noops(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t i, j;

	(void)argc;
	for (i = 0; i < args[0]; i += args[1]) {
		PTO2_SCOPE(rt) {
			for (j = i; j < i + args[1] && j < args[0]; j++)
				pto2_rt_submit_task(rt, K_NOOP,
						    j & 1 ? PTO2_WORKER_CUBE :
						    PTO2_WORKER_VECTOR, NULL, 0);
		}
	}
	return 0;
}

static int32_t run_base;	/* first task id of the current run */

static int wait_la(PTO2Runtime *rt, int32_t want, uint64_t ms)
{
	uint64_t end = ms * 1000;

	while (atomic_load(&pto2_runtime_sm(rt)->last_task_alive) - run_base <
	       want && end--) {
		struct timespec ts = { 0, 1000 };

		nanosleep(&ts, NULL);
	}
	return atomic_load(&pto2_runtime_sm(rt)->last_task_alive) - run_base;
}

static int scope_result[4];

/* scope_end releases the scope reference */
static int orch_scopes(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t i;

	(void)args;
	(void)argc;
	run_base = atomic_load(&pto2_runtime_sm(rt)->current_task_index);
	/* the run's outer scope is open: T0 stays alive until it ends */
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, NULL, 0);
	PTO2_SCOPE(rt) {
		PTO2_SCOPE(rt) {
			for (i = 0; i < 3; i++)
				pto2_rt_submit_task(rt, K_NOOP,
						    PTO2_WORKER_VECTOR, NULL, 0);
		}
		pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, NULL, 0);
	}
	/* 5 tasks, all inner scopes ended: only T0 still holds a reference */
	{
		uint64_t end = 2000000;

		while (atomic_load(&pto2_runtime_sm(rt)->last_task_alive) ==
		       run_base && end--) {
			struct timespec ts = { 0, 1000 };

			nanosleep(&ts, NULL);
			if (end < 1950000)
				break;	/* ~50 ms is plenty */
		}
	}
	scope_result[0] = atomic_load(&pto2_runtime_sm(rt)->last_task_alive) -
			  run_base;
	return 0;
}

/* nested scopes: inner tasks retire at inner scope end */
static int orch_nested(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t i;

	(void)args;
	(void)argc;
	run_base = atomic_load(&pto2_runtime_sm(rt)->current_task_index);
	PTO2_SCOPE(rt) {
		PTO2_SCOPE(rt) {
			for (i = 0; i < 5; i++)
				pto2_rt_submit_task(rt, K_NOOP,
						    PTO2_WORKER_CUBE, NULL, 0);
		}
		scope_result[1] = wait_la(rt, 5, 2000);
		pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_CUBE, NULL, 0);
		scope_result[2] = wait_la(rt, 6, 50);
	}
	scope_result[3] = wait_la(rt, 6, 2000);
	return 0;
}

static int scope_flood_depth;

/*
 * Scopes nested past the limit, as a stream of 2^31 SCOPE_BEGIN records
 * from a client would nest them: the runtime counts the begins past the
 * limit (to keep begin and end balanced) and must not wrap that count.
 * The 2^31 calls would take a minute; the count is set just below
 * INT_MAX instead, then put back so that the ends balance.
 */
static int orch_scope_flood(PTO2Runtime *rt, uint64_t *args, int argc)
{
	int i;

	(void)args;
	(void)argc;
	for (i = 0; i <= PTO2_MAX_SCOPE_DEPTH; i++)
		pto2_rt_scope_begin(rt);
	rt->scope_depth = INT_MAX - 1;
	for (i = 0; i < 3; i++)
		pto2_rt_scope_begin(rt);
	scope_flood_depth = rt->scope_depth;
	rt->scope_depth = PTO2_MAX_SCOPE_DEPTH + 1;
	for (i = 0; i <= PTO2_MAX_SCOPE_DEPTH; i++)
		pto2_rt_scope_end(rt);
	return 0;
}

static int orch_bad_params(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t n = 16;
	Tensor never = make_tensor(&n, 1, PTO_DT_FP32);
	PTOParam p[] = { make_input_param(&never) };

	(void)args;
	(void)argc;
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, NULL, 0);
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, p, 1);
	/* no-ops from here on */
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, NULL, 0);
	return 0;
}

/* args[0]: a kernel id (as int32_t) given a declared cost */
static int orch_kcost(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)argc;
	pto2_rt_set_kernel_cost(rt, (int32_t)args[0], 1000);
	return 0;
}

/* a view past its raw shape (args[0]: an address), then NULL params */
static int orch_bad_view(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = ext1(args[0], 16, PTO_DT_INT64);
	PTOParam p[] = { make_input_param(&x) };

	(void)argc;
	x.offsets[0] = 12;
	x.shapes[0] = 8;
	if (args[1])
		pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, NULL, 1);
	else
		pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, p, 1);
	return 0;
}

/* the same new intermediate as two OUTPUTs of one task */
static int orch_output_twice(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t n = 16;
	Tensor t = make_tensor(&n, 1, PTO_DT_FP32);
	PTOParam p[] = { make_output_param(&t), make_scalar_param(1),
			 make_output_param(&t) };

	(void)args;
	(void)argc;
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, p, 3);
	return 0;
}

static int orch_fail_kernel(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)args;
	(void)argc;
	pto2_rt_submit_task(rt, K_FAIL, PTO2_WORKER_VECTOR, NULL, 0);
	return 0;
}

/* many outputs per scope with a tiny TensorMap pool */
static int orch_tm_pressure(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor out = ext1(args[0], args[1], PTO_DT_INT64);
	uint64_t i, one = 1;

	(void)argc;
	for (i = 0; i < args[1]; i++) {
		PTO2_SCOPE(rt) {
			Tensor v = pto_tensor_view(&out, &one, &i);
			PTOParam p[] = { make_output_param(&v),
					 make_scalar_param(i + 7) };

			pto2_rt_submit_task(rt, K_SET, PTO2_WORKER_VECTOR, p, 2);
		}
	}
	return 0;
}

/* ---- tests -------------------------------------------------------------------- */

static void t_independent(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t n = 300, i, bad = 0;
	int64_t *o;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	ret = run_rows(&e, orch_independent, n, &o);
	for (i = 0; i < n; i++)
		bad += o[i] != (int64_t)i;
	ok(ret == 0 && !bad, "300 independent tasks on AIC and AIV (ret %d)", ret);
	env_close(&e);
}

static void t_chain(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t d, args[3];
	int64_t *x;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	d = gm(8);
	x = host(d);
	*x = 0;
	args[0] = d;
	args[1] = 500;
	ret = run(&e, orch_chain, args, 2);
	ok(ret == 0 && *x == 500,
	   "serial INOUT chain of 500 tasks runs in order (x=%lld, ret %d: %s)",
	   (long long)*x, ret, pto2_rt_get_error_msg(e.rt));

	/* INOUT chains interleaved, in scopes, with a window of 16 */
	env_close(&e);
	c.task_window = 16;
	env_kernels(&e, 1, 2, &c);
	d = gm(8 * 1024);
	args[0] = d;
	args[1] = 4;
	args[2] = 60;
	ret = run(&e, orch_chains, args, 3);
	{
		int k, good = 1;

		for (k = 0; k < 4; k++)
			good &= *(int64_t *)host(d + (uint64_t)k * 1024) == 60;
		ok(ret == 0 && good,
		   "4 interleaved INOUT chains x 60 through a window of 16 (ret %d)",
		   ret);
	}
	env_close(&e);
}

static void t_fan(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t dm, dr, args[2], i, bad = 0;
	int64_t *m, *r;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	dm = gm(72 * 8);
	dr = gm(8);
	m = host(dm);
	r = host(dr);
	args[0] = dm;
	args[1] = dr;
	ret = run(&e, orch_fan, args, 2);
	for (i = 0; i < 72; i++)
		bad += m[i] != 5 + (int64_t)i;
	ok(ret == 0 && !bad && *r == 72 * 5 + 71 * 72 / 2,
	   "fan-out 1->72 and fan-in 72->1 (sum %lld, ret %d: %s)",
	   (long long)*r, ret, pto2_rt_get_error_msg(e.rt));
	env_close(&e);
}

static void t_diamond(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t dout, args[1], i, bad = 0;
	int64_t *out;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	dout = gm(256 * 8);
	out = host(dout);
	args[0] = dout;
	ret = run(&e, orch_diamond, args, 1);
	for (i = 0; i < 256; i++)
		bad += out[i] != 11 + 12;
	ok(ret == 0 && !bad,
	   "diamond A -> (B, C) -> D over make_tensor intermediates (ret %d)",
	   ret);
	env_close(&e);
}

static void t_intermediates(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t i, bad = 0;
	int64_t *o;
	struct pto2_stats st;
	int ret;

	cfg_small(&c);
	c.heap_size = 16384;	/* 8 KiB per scope: the heap wraps */
	c.task_window = 64;
	env_kernels(&e, 1, 2, &c);
	ret = run_rows(&e, orch_intermediates, 200, &o);
	for (i = 0; i < 200; i++)
		if (o[i] != (int64_t)i + 2 && bad++ < 5)
			tap_diag("row %llu = %lld", (unsigned long long)i, (long long)o[i]);
	pto2_runtime_get_stats(e.rt, &st);
	ok(ret == 0 && !bad && st.heap_bytes_allocated == 200 * 8192ULL,
	   "200 scopes of make_tensor intermediates through a 16 KiB heap ring (%llu bytes allocated, ret %d: %s)",
	   (unsigned long long)st.heap_bytes_allocated, ret,
	   pto2_rt_get_error_msg(e.rt));
	env_close(&e);
}

/*
 * One K_NOOP task with new OUTPUT intermediates (make_tensor, 8 int32) of
 * sizes args[0 .. argc): the size a client may give an intermediate is
 * any at least its elements' bytes.
 */
static int orch_packed(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t n = 8;
	Tensor t[2];
	PTOParam p[2];
	int i;

	for (i = 0; i < argc && i < 2; i++) {
		t[i] = make_tensor(&n, 1, PTO_DT_INT32);
		t[i].size = args[i];
		p[i] = make_output_param(&t[i]);
	}
	pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, p, i);
	return 0;
}

/*
 * The packed buffer of a task's intermediates is the sum of their sizes,
 * each aligned up: a size near 2^64 made the sum (or the alignment) wrap,
 * and the task got intermediates outside the heap with sizes that let
 * ptod pass any later offset. Now a size larger than the heap fails the
 * run with -ENOMEM and says so; a size of the whole heap still runs.
 */
static void t_packed_outputs(void)
{
	static const struct {
		uint64_t size[2];
		int argc;
		const char *what;
	} bad[] = {
		{ { 0xfffffffffffff000ULL, 8192 }, 2,
		  "2^64 - 4096 and 8192 bytes (the sum wraps to 4096)" },
		{ { 0xfffffffffffffe00ULL, 0 }, 1,
		  "2^64 - 512 bytes (aligned up to 1024: 0)" },
		{ { (4 << 20) + 1, 0 }, 1, "the heap + 1 byte" },
	};
	uint64_t whole[1] = { 4 << 20 };
	struct env e;
	struct pto2_config c;
	struct pto2_stats st;
	const char *msg;
	unsigned int i;
	int ret;

	cfg_small(&c);	/* a heap of 4 MiB */
	env_kernels(&e, 1, 2, &c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ret = run(&e, orch_packed, (uint64_t *)bad[i].size, bad[i].argc);
		msg = pto2_rt_get_error_msg(e.rt);
		pto2_runtime_get_stats(e.rt, &st);
		ok(ret == -ENOMEM && st.heap_bytes_allocated == 0 &&
		   strstr(msg, "can never fit in a heap of 4194304 bytes"),
		   "intermediates of %s: -ENOMEM, no heap allocated (ret %d: %s)",
		   bad[i].what, ret, msg);
	}
	ret = run(&e, orch_packed, whole, 1);
	ok(ret == 0, "an intermediate of the whole heap runs (ret %d: %s)", ret,
	   pto2_rt_get_error_msg(e.rt));
	env_close(&e);
}

static void t_vector(void)
{
	struct env e;
	struct pto2_config c;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	vector_example(&e, "2 AIC + 4 AIV");
	vector_example(&e, "same runtime, second run");
	vector_example_fn(&e, "C++ orchestration (Tensor&, RAII PTO2_SCOPE)",
			  cxx_orch_entry);
	env_close(&e);
}

/* one task writing args[1] to args[0] */
static int orch_set1(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor t = ext1(args[0], 1, PTO_DT_INT64);
	PTOParam p[] = { make_output_param(&t), make_scalar_param(args[1]) };

	(void)argc;
	pto2_rt_submit_task(rt, K_SET, PTO2_WORKER_VECTOR, p, 2);
	return 0;
}

/*
 * Regression: ids restarting at 0 in every run let the scheduler take a
 * core's stale COND = FIN(0) of the previous run for the new task 0.
 */
static void t_rerun_same_core(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t d, args[2];
	int run_i, good = 1, ret;

	cfg_small(&c);
	c.sched_threads = 1;
	env_kernels(&e, 0, 1, &c);
	d = gm(8);
	for (run_i = 1; run_i <= 3; run_i++) {
		*(int64_t *)host(d) = 0;
		args[0] = d;
		args[1] = (uint64_t)run_i * 11;
		ret = run(&e, orch_set1, args, 2);
		good &= ret == 0 && *(int64_t *)host(d) == run_i * 11;
	}
	ok(good, "3 runs on one runtime and one core: each task really runs (ids not reused)");
	env_close(&e);
}

static void t_window16(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t args[2] = { 208, 8 };
	struct pto2_stats st;
	int ret;

	cfg_small(&c);
	c.task_window = 16;
	env_kernels(&e, 1, 2, &c);
	ret = run(&e, orch_scoped_noops, args, 2);
	pto2_runtime_get_stats(e.rt, &st);
	ok(ret == 0 && st.tasks_completed == 208 &&
	   atomic_load(&pto2_runtime_sm(e.rt)->last_task_alive) == 208,
	   "window 16, 208 tasks in scopes of 8: slots recycled, all consumed (blocked %llu times)",
	   (unsigned long long)st.task_ring_blocked);
	env_close(&e);
}

static void t_deadlock(void)
{
	struct env e, e2;
	struct pto2_config c;
	uint64_t args[1] = { 33 }, t0, ms;
	const char *msg;
	int ret;

	cfg_small(&c);
	c.task_window = 16;
	env_kernels(&e, 1, 2, &c);
	t0 = (uint64_t)pto_mono_ns();
	ret = run(&e, orch_big_scope, args, 1);
	ms = ((uint64_t)pto_mono_ns() - t0) / 1000000;
	msg = pto2_rt_get_error_msg(e.rt);
	ok(ret == -EDEADLK && pto2_rt_get_error(e.rt) == -EDEADLK,
	   "window 16, one scope of 33 tasks: run fails with -EDEADLK after %llu ms",
	   (unsigned long long)ms);
	ok(strstr(msg, "FATAL: Flow Control Deadlock Detected!") &&
	   strstr(msg, "Task Ring is FULL and no progress after 100000 spins.") &&
	   strstr(msg, "- Active tasks: 15") && strstr(msg, "- Window size: 16") &&
	   strstr(msg, "Root Cause:") &&
	   strstr(msg, "Recommended: 32 (at least 2x current active tasks)"),
	   "diagnosis text carries the PTO2 FATAL message and Recommended: 32");
	ok(strstr(e.log.text, "[TaskRing] BLOCKED (Flow Control): current=15, last_alive=0, active=15/16 (93.8%), spins=10000") &&
	   e.log.warns == 9 && e.log.errors == 1,
	   "BLOCKED warnings every 10,000 spins and the FATAL text went through the log callback");
	ok(ms < 10000, "deadlock detected in %llu ms", (unsigned long long)ms);
	vector_example(&e, "same runtime after the deadlock");
	env_close(&e);

	env_kernels(&e2, 2, 4, &c);
	vector_example(&e2, "a new runtime after the deadlock");
	env_close(&e2);
}

static void t_scopes(void)
{
	struct env e;
	struct pto2_config c;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 1, 2, &c);
	ret = run(&e, orch_scopes, NULL, 0);
	ok(ret == 0 && scope_result[0] == 0,
	   "a task of the open outer scope is not consumed (last_alive stays %d) until the scope ends",
	   scope_result[0]);
	ret = run(&e, orch_nested, NULL, 0);
	ok(ret == 0 && scope_result[1] == 5,
	   "nested: inner scope_end releases its 5 tasks (last_alive %d)",
	   scope_result[1]);
	ok(scope_result[2] == 5 && scope_result[3] == 6,
	   "nested: the outer scope's task retires only at its scope_end (%d, %d)",
	   scope_result[2], scope_result[3]);
	ret = run(&e, orch_scope_flood, NULL, 0);
	ok(ret == -EINVAL && scope_flood_depth == INT_MAX &&
	   strstr(pto2_rt_get_error_msg(e.rt), "nested deeper than 64"),
	   "scopes past the limit: -EINVAL, and the count of them stops at INT_MAX (%d: %s)",
	   scope_flood_depth, pto2_rt_get_error_msg(e.rt));
	ret = run(&e, orch_nested, NULL, 0);
	ok(ret == 0, "the next run of the same runtime passes (%d)", ret);
	env_close(&e);
}

/* A run of @orch that must fail with -EINVAL, @needle in its message. */
static void einval_with(struct env *e, pto2_orchestration_entry_fn orch,
			uint64_t *args, int argc, const char *needle,
			const char *what)
{
	int ret = run(e, orch, args, argc);

	ok(ret == -EINVAL && strstr(pto2_rt_get_error_msg(e->rt), needle),
	   "%s: -EINVAL saying so (%s)", what, pto2_rt_get_error_msg(e->rt));
}

static void t_errors(void)
{
	struct env e;
	struct pto2_config c;
	struct pto2_stats st;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 1, 2, &c);
	ret = run(&e, orch_bad_params, NULL, 0);
	pto2_runtime_get_stats(e.rt, &st);
	ok(ret == -EINVAL && st.tasks_submitted == 1 &&
	   strstr(pto2_rt_get_error_msg(e.rt), "never produced"),
	   "input tensor with addr 0: -EINVAL, later submits are no-ops (%s)",
	   pto2_rt_get_error_msg(e.rt));
	{
		uint64_t a[2] = { gm(16 * 8), 0 };

		einval_with(&e, orch_bad_view, a, 2,
			    "param 0 of kernel 9 is not a valid tensor view: dimension 0: offset 12 + shape 8 past its raw shape 16",
			    "a view past its raw shape");
		a[1] = 1;
		einval_with(&e, orch_bad_view, a, 2,
			    "params is NULL with 1 params",
			    "params NULL with one param");
	}
	{
		/* the ends of the kernel id range, and one past each */
		uint64_t a[1] = { PTO2_MAX_KERNELS - 1 };

		ret = run(&e, orch_kcost, a, 1);
		a[0] = 0;
		ret = ret ? ret : run(&e, orch_kcost, a, 1);
		ok(ret == 0, "a cost for kernels 0 and %d (ret %d %s)",
		   PTO2_MAX_KERNELS - 1, ret, pto2_rt_get_error_msg(e.rt));
		a[0] = PTO2_MAX_KERNELS;
		einval_with(&e, orch_kcost, a, 1,
			    "kernel id 256 out of range 0..255",
			    "a cost for kernel 256");
		a[0] = (uint64_t)(uint32_t)-1;
		einval_with(&e, orch_kcost, a, 1,
			    "kernel id -1 out of range 0..255",
			    "a cost for kernel -1");
	}
	einval_with(&e, orch_output_twice, NULL, 0,
		    "params 0 and 2 of kernel 9 are the same new intermediate tensor",
		    "the same new intermediate as two OUTPUTs of a task");
	ret = run(&e, orch_fail_kernel, NULL, 0);
	ok(ret == -EIO && strstr(pto2_rt_get_error_msg(e.rt), "failed with -33"),
	   "kernel returning -EDOM: run fails with -EIO (%s)",
	   pto2_rt_get_error_msg(e.rt));
	env_close(&e);

	/* CUBE task on a device without AIC */
	env_kernels(&e, 0, 2, &c);
	{
		uint64_t args[2] = { gm(64), 3 };

		ret = run(&e, orch_independent, args, 2);
	}
	ok(ret == -EINVAL && strstr(pto2_rt_get_error_msg(e.rt), "no cores"),
	   "CUBE task without AIC cores: -EINVAL");
	env_close(&e);
}

static void t_pressure(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t i, bad = 0;
	int64_t *o;
	int ret;

	cfg_small(&c);
	c.tensormap_pool_size = 16;
	c.task_window = 64;
	c.dep_pool_size = 16;
	env_kernels(&e, 1, 2, &c);
	ret = run_rows(&e, orch_tm_pressure, 400, &o);
	for (i = 0; i < 400; i++)
		bad += o[i] != (int64_t)i + 7;
	ok(ret == 0 && !bad,
	   "TensorMap pool of 16 entries, 400 outputs: back-pressure via forced cleanup (ret %d: %s)",
	   ret, pto2_rt_get_error_msg(e.rt));
	{
		uint64_t dx = gm(8), a2[3] = { dx, 1, 300 };

		*(int64_t *)host(dx) = 0;
		ret = run(&e, orch_chains, a2, 3);
		ok(ret == 0 && *(int64_t *)host(dx) == 300,
		   "dep pool of 16 entries wraps under a 300-task chain (ret %d: %s)",
		   ret, pto2_rt_get_error_msg(e.rt));
	}
	env_close(&e);
}

/*
 * Every timestamp register is the device's system counter: ts_dispatch
 * (written by the scheduler), ts_start and ts_end (the core) of the last
 * task of each core lie in order inside the run, on one time base.
 */
static void t_timestamps(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t t0, t1, args[2];
	uint32_t i, seen = 0, good = 0;
	int ret;

	cfg_small(&c);
	env_kernels(&e, 2, 4, &c);
	args[0] = gm(40 * 8);
	args[1] = 40;
	t0 = pto_sys_cnt(pto_regs_info(e.sd->regs));
	ret = run(&e, orch_independent, args, 2);
	t1 = pto_sys_cnt(pto_regs_info(e.sd->regs));
	for (i = 0; i < e.sd->nr_cores; i++) {
		struct pto_core_regs *r = pto_regs_core(e.sd->regs, i);

		if (!r->ts_end)
			continue;
		seen++;
		if (t0 <= r->ts_dispatch && r->ts_dispatch <= r->ts_start &&
		    r->ts_start <= r->ts_end && r->ts_end <= t1)
			good++;
		else
			tap_diag("core %u: run [%" PRIu64 ", %" PRIu64 "], dispatch %" PRIu64 " start %" PRIu64 " end %" PRIu64,
				 i, t0, t1, (uint64_t)r->ts_dispatch,
				 (uint64_t)r->ts_start, (uint64_t)r->ts_end);
	}
	ok(ret == 0 && seen > 0 && good == seen,
	   "ts_dispatch <= ts_start <= ts_end inside the run, one time base (%u/%u cores)",
	   good, seen);
	env_close(&e);
}

struct par {
	int ret;
};

static void *par_main(void *arg)
{
	struct par *p = arg;
	struct env e;
	struct pto2_config c;
	uint64_t args[2] = { 400, 4 };

	cfg_small(&c);
	c.sched_threads = 1;
	env_kernels(&e, 1, 1, &c);
	p->ret = pto2_runtime_launch(e.rt, orch_scoped_noops, args, 2);
	if (!p->ret)
		p->ret = pto2_runtime_wait(e.rt, 30ULL * 1000000000ULL);
	env_close(&e);
	return NULL;
}

/* two K_PAIR tasks, independent */
static int orch_pair(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor out = ext1(args[0], 2, PTO_DT_INT64);
	uint64_t i, one = 1;

	(void)argc;
	for (i = 0; i < 2; i++) {
		Tensor v = pto_tensor_view(&out, &one, &i);
		PTOParam p[] = { make_output_param(&v) };

		pto2_rt_submit_task(rt, K_PAIR, PTO2_WORKER_VECTOR, p, 1);
	}
	return 0;
}

/*
 * pto2_config.wait_runs_kernels: the thread in pto2_runtime_wait() runs
 * kernels. One executor thread that never grows (grow_ns 60 s) and two
 * kernels that must run at once: only the waiting thread can run the
 * second. Off, with the pool's usual growth: both run elsewhere.
 */
static void wait_pair(bool runs, uint64_t grow_ns)
{
	struct pto_exec_pool_config pc = { .workers = 1, .grow_ns = grow_ns,
					   .name = "pair" };
	struct pto2_config c;
	uint64_t args[1];
	struct env e;
	int ret;

	cfg_small(&c);
	c.wait_runs_kernels = runs;
	ret = env_device_pool(&e, 1, 2, &pc);
	if (!ret)
		ret = env_runtime(&e, &c);
	if (ret) {
		ok(0, "wait_runs_kernels %d: device and runtime (%d)", runs, ret);
		env_close(&e);
		return;
	}
	register_kernels(e.sd);
	atomic_store(&pair_started, 0);
	atomic_store(&pair_on_waiter, 0);
	pair_waiter = pthread_self();
	args[0] = gm(16);
	ret = run(&e, orch_pair, args, 1);
	if (runs)
		ok(ret == 0 && atomic_load(&pair_on_waiter) == 1,
		   "wait_runs_kernels: the waiting thread runs the kernel one executor thread cannot (ret %d, %d on it)",
		   ret, atomic_load(&pair_on_waiter));
	else
		ok(ret == 0 && atomic_load(&pair_on_waiter) == 0,
		   "wait_runs_kernels off: no kernel on the waiting thread (ret %d, %d on it)",
		   ret, atomic_load(&pair_on_waiter));
	env_close(&e);
}

static void t_wait_runs_kernels(void)
{
	wait_pair(true, 60ULL * 1000000000ULL);
	wait_pair(false, 0);
}

static void t_parallel_runtimes(void)
{
	pthread_t th[3];
	struct par p[3];
	int i, good = 1;

	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, par_main, &p[i]);
	for (i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		good &= p[i].ret == 0;
	}
	ok(good, "3 runtimes on 3 sim devices run concurrently");
}

/* ---- A task waiting for heap space holds no producer ------------------ */

/*
 * A 4 KiB heap. Scope 1: P writes e and runs 200 ms; M makes x (2 KiB of
 * the heap). Scope 2: N reads e and makes y (2.5 KiB, which skips the
 * heap's end): it waits for x, behind P in the order of retirement. If
 * N took P as its producer before waiting, P could not retire before N
 * ran: a deadlock with every scope's outputs smaller than the heap.
 */
static int orch_heap_wait(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const uint64_t nx = 256, ny = 320;
	Tensor e = ext1(args[0], 1, PTO_DT_INT64);
	Tensor x = make_tensor(&nx, 1, PTO_DT_INT64);
	Tensor y = make_tensor(&ny, 1, PTO_DT_INT64);

	(void)argc;
	PTO2_SCOPE(rt) {
		PTOParam pp[] = { make_scalar_param(200000000),
				  make_output_param(&e) };
		PTOParam pm[] = { make_output_param(&x), make_scalar_param(1),
				  make_scalar_param(nx) };

		pto2_rt_submit_task(rt, K_SLOW, PTO2_WORKER_VECTOR, pp, 2);
		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_CUBE, pm, 3);
	}
	PTO2_SCOPE(rt) {
		PTOParam pn[] = { make_scalar_param(0), make_input_param(&e),
				  make_output_param(&y) };

		pto2_rt_submit_task(rt, K_SLOW, PTO2_WORKER_VECTOR, pn, 3);
	}
	return 0;
}

/* env_kernels() with a heap of 4 KiB, for the heap ring's tests. */
static void env_heap_4k(struct env *e, uint32_t aic, uint32_t aiv)
{
	struct pto2_config c;

	cfg_small(&c);
	c.heap_size = 4096;
	env_kernels(e, aic, aiv, &c);
}

/* How many of @v[0 .. @n) are not @want. */
static uint64_t count_not(const int64_t *v, uint64_t n, int64_t want)
{
	uint64_t i, bad = 0;

	for (i = 0; i < n; i++)
		bad += v[i] != want;
	return bad;
}

static void t_heap_wait_holds_no_producer(void)
{
	struct env e;
	uint64_t args[1];
	int ret;

	env_heap_4k(&e, 1, 1);
	args[0] = gm(8);
	ret = run(&e, orch_heap_wait, args, 1);
	ok(ret == 0,
	   "a task waiting for heap space does not hold its producer: no deadlock (ret %d%s%.120s)",
	   ret, ret ? ": " : "", ret ? pto2_rt_get_error_msg(e.rt) : "");
	env_close(&e);
}

/* ---- Dependency entries of running producers -------------------------- */

/*
 * One scope: args[1] tasks each fill one element of in (args[0]) with its
 * index + 1 after args[3] ns; then C copies all of in to out (args[2]).
 * C's edges take 2 dependency entries for each producer still to run and
 * 1 for each completed one.
 */
static int orch_many_producers(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor in = ext1(args[0], args[1], PTO_DT_INT64);
	Tensor out = ext1(args[2], args[1], PTO_DT_INT64);
	uint64_t i, one = 1;

	(void)argc;
	PTO2_SCOPE(rt) {
		for (i = 0; i < args[1]; i++) {
			Tensor v = pto_tensor_view(&in, &one, &i);
			PTOParam pf[] = { make_scalar_param(args[3]),
					  make_output_param(&v),
					  make_scalar_param(i + 1),
					  make_scalar_param(1) };

			pto2_rt_submit_task(rt, K_NAP_FILL, PTO2_WORKER_VECTOR,
					    pf, 4);
		}
		{
			PTOParam pc[] = { make_scalar_param(0),
					  make_input_param(&in),
					  make_output_param(&out),
					  make_scalar_param(args[1]) };

			pto2_rt_submit_task(rt, K_NAP_COPY, PTO2_WORKER_VECTOR,
					    pc, 4);
		}
	}
	return 0;
}

/*
 * A pool of 16 entries. With 9 producers still running, C's edges would
 * take 18: C waits until enough of them completed (each then takes 1).
 * With 17 producers, all completed and kept by the open scope, C needs 17
 * for ever: a clear error, not the generic deadlock diagnosis.
 */
static void t_dep_pool_running_producers(void)
{
	struct env e;
	struct pto2_config c;
	uint64_t args[4], i, bad = 0;
	const int64_t *out;
	int ret;

	cfg_small(&c);
	c.dep_pool_size = 16;
	env_kernels(&e, 1, 2, &c);
	args[0] = gm(9 * 8);
	args[1] = 9;
	args[2] = gm(9 * 8);
	args[3] = 20000000;
	out = host(args[2]);
	ret = run(&e, orch_many_producers, args, 4);
	for (i = 0; i < 9; i++)
		bad += out[i] != (int64_t)i + 1;
	ok(ret == 0 && !bad,
	   "dep pool of 16, 9 running producers: the consumer waits for them to complete, then runs (ret %d%s%.160s; %" PRIu64 " wrong)",
	   ret, ret ? ": " : "", ret ? pto2_rt_get_error_msg(e.rt) : "", bad);
	env_close(&e);

	env_kernels(&e, 1, 2, &c);
	args[0] = gm(17 * 8);
	args[1] = 17;
	args[2] = gm(17 * 8);
	args[3] = 0;
	ret = run(&e, orch_many_producers, args, 4);
	ok(ret == -ENOSPC &&
	   strstr(pto2_rt_get_error_msg(e.rt),
		  "needs 17 dependency entries for its 17 producers"),
	   "dep pool of 16, 17 producers kept by the scope: -ENOSPC naming the need (ret %d: %.160s)",
	   ret, pto2_rt_get_error_msg(e.rt));
	env_close(&e);
}

/* ---- An OUTPUT into an intermediate keeps its buffer ------------------- */

/*
 * A 4 KiB heap, all of it x's. Scope 1: M makes x (args[2]: writing only
 * its first half); S reads what M wrote and runs 300 ms; W, after S (it
 * reads S's output), writes 7 into 8 elements of x with OUTPUT (args[2]:
 * in the half M did not write), 100 ms after it starts. Scope 2: N makes
 * y (3 KiB), which needs x's space; R copies y to out 200 ms after it
 * starts. If
 * W were no consumer of M, M would retire when S ends, N would get x's
 * space at once and W would write its 7s into y before R reads it.
 */
static int orch_output_into_intermediate(PTO2Runtime *rt, uint64_t *args,
					 int argc)
{
	const uint64_t nx = 512, ny = 384, nw = 8;
	const uint64_t nm = args[2] ? nx / 2 : nx, wo = args[2] ? nx / 2 : 0;
	Tensor sref = ext1(args[0], 1, PTO_DT_INT64);
	Tensor out = ext1(args[1], ny, PTO_DT_INT64);
	Tensor x0 = make_tensor(&nx, 1, PTO_DT_INT64);
	Tensor y = make_tensor(&ny, 1, PTO_DT_INT64);
	/* the part M writes: the submit writes the buffer's address here */
	Tensor x = pto_tensor_view(&x0, &nm, NULL);

	(void)argc;
	PTO2_SCOPE(rt) {
		PTOParam pm[] = { make_output_param(&x), make_scalar_param(1),
				  make_scalar_param(nm) };
		PTOParam ps[] = { make_scalar_param(300000000),
				  make_input_param(&x),
				  make_output_param(&sref) };
		Tensor xw;
		PTOParam pw[5];

		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_VECTOR, pm, 3);
		ps[1] = make_input_param(&x);
		pto2_rt_submit_task(rt, K_SLOW, PTO2_WORKER_VECTOR, ps, 3);
		xw = pto_tensor_view(&x, &nw, &wo);
		pw[0] = make_scalar_param(100000000);
		pw[1] = make_output_param(&xw);
		pw[2] = make_scalar_param(7);
		pw[3] = make_scalar_param(nw);
		pw[4] = make_input_param(&sref);
		pto2_rt_submit_task(rt, K_NAP_FILL, PTO2_WORKER_VECTOR, pw, 5);
	}
	PTO2_SCOPE(rt) {
		PTOParam pn[] = { make_output_param(&y), make_scalar_param(5),
				  make_scalar_param(ny) };
		PTOParam pr[4];

		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_CUBE, pn, 3);
		pr[0] = make_scalar_param(200000000);
		pr[1] = make_input_param(&y);
		pr[2] = make_output_param(&out);
		pr[3] = make_scalar_param(ny);
		pto2_rt_submit_task(rt, K_NAP_COPY, PTO2_WORKER_VECTOR, pr, 4);
	}
	return 0;
}

static void t_output_into_intermediate(uint64_t half)
{
	struct env e;
	uint64_t args[3], bad;
	int ret;

	env_heap_4k(&e, 2, 4);
	args[0] = gm(8);
	args[1] = gm(384 * 8);
	args[2] = half;
	ret = run(&e, orch_output_into_intermediate, args, 3);
	bad = count_not(host(args[1]), 384, 5);
	ok(ret == 0 && !bad,
	   "an OUTPUT into %s keeps its heap buffer until it wrote: the next intermediate is intact (%" PRIu64 " of 384 wrong, ret %d)",
	   half ? "the part of an intermediate its maker did not write" :
		  "part of an intermediate",
	   bad, ret);
	env_close(&e);
}

/*
 * A 4 KiB heap. Scope 1: M makes x writing its first half; W writes 7
 * into 8 elements of the other half with OUTPUT; R reads what W wrote and
 * copies it to out 300 ms after it starts. Scope 2: N makes y, all of the
 * heap, with 5s. R depends on W through the data; if it were no consumer
 * of M, M would retire once W ran and the scope ended, and N would fill
 * x's space with 5s before R read it.
 */
static int orch_reader_of_part_not_made(PTO2Runtime *rt, uint64_t *args,
					int argc)
{
	const uint64_t nx = 512, nm = 256, nw = 8, wo = 256;
	Tensor out = ext1(args[0], nw, PTO_DT_INT64);
	Tensor x0 = make_tensor(&nx, 1, PTO_DT_INT64);
	Tensor y = make_tensor(&nx, 1, PTO_DT_INT64);
	Tensor x = pto_tensor_view(&x0, &nm, NULL);

	(void)argc;
	PTO2_SCOPE(rt) {
		PTOParam pm[] = { make_output_param(&x), make_scalar_param(1),
				  make_scalar_param(nm) };
		Tensor xw;
		PTOParam pw[3], pr[4];

		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_VECTOR, pm, 3);
		xw = pto_tensor_view(&x, &nw, &wo);
		pw[0] = make_output_param(&xw);
		pw[1] = make_scalar_param(7);
		pw[2] = make_scalar_param(nw);
		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_VECTOR, pw, 3);
		pr[0] = make_scalar_param(300000000);
		pr[1] = make_input_param(&xw);
		pr[2] = make_output_param(&out);
		pr[3] = make_scalar_param(nw);
		pto2_rt_submit_task(rt, K_NAP_COPY, PTO2_WORKER_VECTOR, pr, 4);
	}
	PTO2_SCOPE(rt) {
		PTOParam pn[] = { make_output_param(&y), make_scalar_param(5),
				  make_scalar_param(nx) };

		pto2_rt_submit_task(rt, K_FILL, PTO2_WORKER_CUBE, pn, 3);
	}
	return 0;
}

static void t_reader_of_part_not_made(void)
{
	struct env e;
	uint64_t args[1], bad;
	int ret;

	env_heap_4k(&e, 2, 4);
	args[0] = gm(8 * 8);
	ret = run(&e, orch_reader_of_part_not_made, args, 1);
	bad = count_not(host(args[0]), 8, 7);
	ok(ret == 0 && !bad,
	   "a reader of the part of an intermediate its maker did not write keeps its heap buffer until it read (%" PRIu64 " of 8 wrong, ret %d)",
	   bad, ret);
	env_close(&e);
}

/* ---- Publishing a task that waits for a producer wakes no scheduler ---- */

static _Thread_local bool in_submits;	/* count this thread's wakes */
static _Atomic int submit_wakes;
static void (*real_irq_wake)(void *ctx);

static void counting_irq_wake(void *ctx)
{
	if (in_submits)
		atomic_fetch_add(&submit_wakes, 1);
	real_irq_wake(ctx);
}

/* Until the schedulers slept @n more times (at most 2 s). */
static void wait_sleeps(PTO2Runtime *rt, uint64_t n)
{
	struct pto2_engine_stats st;
	uint64_t base;
	int i;

	pto2_engine_get_stats(pto2_runtime_engine(rt), &st);
	base = st.sleeps;
	for (i = 0; i < 2000 && st.sleeps < base + n; i++) {
		pto_sleep_ns(1000000);
		pto2_engine_get_stats(pto2_runtime_engine(rt), &st);
	}
}

/*
 * args: GM for 21 int64. A gate task writes slot 0; once it runs and the
 * schedulers sleep, 20 tasks that read slot 0 are submitted, a pause
 * before each (so that every scheduler sleeps at most publishes).
 */
static int orch_publish_waiting(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor t[21];
	PTOParam p[2];
	int i;

	(void)argc;
	for (i = 0; i < 21; i++)
		t[i] = ext1(args[0] + (uint64_t)i * 8, 1, PTO_DT_INT64);
	PTO2_SCOPE(rt) {
		p[0] = make_output_param(&t[0]);
		pto2_rt_submit_task(rt, K_GATE, PTO2_WORKER_VECTOR, p, 1);
		for (i = 0; i < 10000 && !atomic_load(&gate_started); i++)
			pto_sleep_ns(1000000);
		wait_sleeps(rt, 4);
		for (i = 1; i < 21; i++) {
			pto_sleep_ns(2000000);
			p[0] = make_input_param(&t[0]);
			p[1] = make_output_param(&t[i]);
			in_submits = true;
			pto2_rt_submit_task(rt, K_NOOP, PTO2_WORKER_VECTOR, p,
					    2);
			in_submits = false;
		}
		atomic_store(&gate_open, 1);
	}
	return 0;
}

static void t_publish_waiting(void)
{
	struct env e;
	struct pto2_config c;
	struct pto2_stats st;
	uint64_t args[1];
	int ret;

	cfg_small(&c);
	ret = env_device(&e, 1, 1);
	register_kernels(e.sd);
	real_irq_wake = e.sd->dev.irq_wake;
	e.sd->dev.irq_wake = counting_irq_wake;
	if (!ret)
		ret = env_runtime(&e, &c);
	args[0] = gm(21 * 8);
	if (!ret)
		ret = run(&e, orch_publish_waiting, args, 1);
	pto2_runtime_get_stats(e.rt, &st);
	ok(ret == 0 && st.tasks_completed == 21 &&
	   atomic_load(&submit_wakes) == 0,
	   "20 tasks waiting for a running producer: all done, their submits woke no scheduler (%d wakes, ret %d)",
	   atomic_load(&submit_wakes), ret);
	env_close(&e);
}

int main(void)
{
	t_independent();
	t_chain();
	t_fan();
	t_diamond();
	t_intermediates();
	t_packed_outputs();
	t_vector();
	t_window16();
	t_rerun_same_core();
	t_scopes();
	t_errors();
	t_pressure();
	t_deadlock();
	t_heap_wait_holds_no_producer();
	t_dep_pool_running_producers();
	t_output_into_intermediate(0);
	t_output_into_intermediate(1);
	t_reader_of_part_not_made();
	t_timestamps();
	t_parallel_runtimes();
	t_wait_runs_kernels();
	t_publish_waiting();
	return tap_done();
}
