// SPDX-License-Identifier: MIT
/*
 * test_check.c - the checking mode (pto-private/check.h): each hazard is
 * refused with its message, the correct form of the same graph passes
 */
#include <errno.h>
#include <string.h>

#include <pto-private/check.h>
#include <pto-private/wire.h>
#include "tap.h"

#define EXT	0x100000000ULL

/* A 1-D fp32 tensor of @n elements at @addr (an intermediate if PH). */
static Tensor vec(uint64_t addr, uint64_t n)
{
	uint64_t s[1] = { n };
	return make_tensor_external((void *)(uintptr_t)addr, s, 1, PTO_DT_FP32);
}

static Tensor part(const Tensor *t, uint64_t off, uint64_t n)
{
	uint64_t s[1] = { n }, o[1] = { off };

	return pto_tensor_view(t, s, o);
}

/* Submit a task with up to two params; returns pto_check_task()'s result. */
static int task(struct pto_check *k, int type0, Tensor *t0, int type1,
		Tensor *t1, char *msg)
{
	PTOParam p[2] = {
		{ .type = (PTOParamType)type0, .tensor = t0 },
		{ .type = (PTOParamType)type1, .tensor = t1 },
	};

	msg[0] = 0;
	return pto_check_task(k, 7, p, t1 ? 2 : 1, msg, 256);
}

static void t_scope(struct pto_check *k)
{
	Tensor a = vec(PTO_PH_MAKE(1), 16), out = vec(EXT, 16);
	char msg[256];
	int r1, r2;

	pto_check_graph_begin(k);
	pto_check_scope_begin(k, 0);
	r1 = task(k, PTO_PARAM_OUTPUT, &a, 0, NULL, msg);
	r2 = task(k, PTO_PARAM_INPUT, &a, PTO_PARAM_OUTPUT, &out, msg);
	ok(!r1 && !r2, "an intermediate used inside its scope passes (%s)", msg);
	pto_check_scope_end(k, 1);
	r1 = task(k, PTO_PARAM_INPUT, &a, PTO_PARAM_OUTPUT, &out, msg);
	ok(r1 == -EINVAL && strstr(msg, "intermediate tensor #1 after the scope"),
	   "an intermediate used after its scope ended is refused: %s", msg);
}

static void t_unwritten(struct pto_check *k)
{
	Tensor a = vec(PTO_PH_MAKE(1), 16), lo = part(&a, 0, 8),
	       hi = part(&a, 8, 8), out = vec(EXT, 8), in = vec(EXT + 4096, 8);
	char msg[256];
	int r1, r2, r3;

	pto_check_graph_begin(k);
	r1 = task(k, PTO_PARAM_OUTPUT, &lo, 0, NULL, msg);
	r2 = task(k, PTO_PARAM_INPUT, &lo, PTO_PARAM_OUTPUT, &out, msg);
	r3 = task(k, PTO_PARAM_INPUT, &in, PTO_PARAM_INOUT, &out, msg);
	ok(!r1 && !r2 && !r3,
	   "reads of a written part and of external data pass (%s)", msg);
	r1 = task(k, PTO_PARAM_INPUT, &hi, PTO_PARAM_OUTPUT, &out, msg);
	ok(r1 == -EINVAL && strstr(msg, "param 0 reads a region of intermediate tensor #1 that no earlier task wrote"),
	   "a read of the part no task wrote is refused: %s", msg);
}

static void t_waw(struct pto_check *k)
{
	Tensor o = vec(EXT, 16), a = vec(EXT + 4096, 16), half = part(&a, 0, 8);
	char msg[256];
	int r1, r2, r3;

	/* ordered: 0 writes o, 1 reads o and writes a, 2 reads a, writes o */
	pto_check_graph_begin(k);
	r1 = task(k, PTO_PARAM_OUTPUT, &o, 0, NULL, msg);
	r2 = task(k, PTO_PARAM_INPUT, &o, PTO_PARAM_OUTPUT, &a, msg);
	r3 = task(k, PTO_PARAM_INPUT, &a, PTO_PARAM_OUTPUT, &o, msg);
	ok(!r1 && !r2 && !r3,
	   "a rewrite ordered through a chain of dependencies passes (%s)", msg);
	/* unordered: 3 writes a again with no dependency on 1 */
	r1 = task(k, PTO_PARAM_OUTPUT, &a, 0, NULL, msg);
	ok(r1 == -EINVAL && strstr(msg, "param 0 writes a region that task 1 (kernel 7) also writes"),
	   "overlapping writes with no order are refused: %s", msg);
	/* INOUT orders itself after the writers it overlaps */
	r1 = task(k, PTO_PARAM_INOUT, &a, 0, NULL, msg);
	r2 = task(k, PTO_PARAM_OUTPUT, &half, 0, NULL, msg);
	ok(r1 == 0 && r2 == -EINVAL,
	   "INOUT is ordered; a later OUTPUT on part of it is not (%d %d)", r1,
	   r2);
}

/*
 * An OUTPUT into an intermediate depends on the task that made it, as in
 * the runtime, so it is no hazard against that task; against other
 * writes of the intermediate it still needs its chain.
 */
static void t_waw_intermediate(struct pto_check *k)
{
	Tensor t = vec(PTO_PH_MAKE(3), 16), lo = part(&t, 0, 8),
	       in = vec(EXT + 8192, 8);
	char msg[256];
	int r1, r2, r3, r4, r5;

	pto_check_graph_begin(k);
	r1 = task(k, PTO_PARAM_OUTPUT, &t, 0, NULL, msg);
	r2 = task(k, PTO_PARAM_OUTPUT, &lo, 0, NULL, msg);
	ok(!r1 && !r2,
	   "an OUTPUT into an intermediate is ordered after the task that made it (%s)",
	   msg);
	r3 = task(k, PTO_PARAM_OUTPUT, &lo, 0, NULL, msg);
	ok(r3 == -EINVAL && strstr(msg, "param 0 writes a region that task 1 (kernel 7) also writes"),
	   "not after another OUTPUT into it: %s", msg);
	r4 = task(k, PTO_PARAM_INPUT, &in, PTO_PARAM_INOUT, &lo, msg);
	r5 = task(k, PTO_PARAM_OUTPUT, &lo, 0, NULL, msg);
	ok(!r4 && r5 == -EINVAL &&
	   strstr(msg, "param 0 writes a region that task 2 (kernel 7) also writes"),
	   "nor after an INOUT of it: %s", msg);
}

int main(void)
{
	struct pto_check *k = pto_check_new();

	if (!k) {
		ok(0, "pto_check_new");
		return tap_done();
	}
	t_scope(k);
	t_unwritten(k);
	t_waw(k);
	t_waw_intermediate(k);
	pto_check_free(k);
	return tap_done();
}
