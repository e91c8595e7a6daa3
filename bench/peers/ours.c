// SPDX-License-Identifier: MIT
/*
 * ours.c - the paths of ours in pto-bench-peers: the PTO2 runtime over a
 * device backend, one orchestration for every shape
 *
 * The orchestration turns a peers_graph into PTO2 tasks: the graph's
 * slots are one external tensor of [nr_slots][8] uint64 in the device's
 * memory, every access is a view of its slot range, as an INPUT, OUTPUT
 * or INOUT parameter, so the TensorMap derives the dependencies. Scopes
 * begin where the graph says (PT_SCOPE). The kernel is peers_kernel()
 * under kernel ids PK_*, its stamp slot the first parameter.
 *
 * A backend gives the runtime a device and GM (struct ours_backend). The
 * one built today is "sim", the runtime core over the in-process sim
 * device in its default configuration (bench/common/bench_sim.c, as
 * pto-bench-e2e-sim). The user-mode device backend is the next row of
 * peers_ours[].
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto/pto_kernel.h>
#include <pto/pto_orchestration_api.h>

#include "bench_sim.h"
#include "peers.h"

/**
 * struct ours_backend - a device under the PTO2 runtime.
 * @open: a device with @data_bytes of GM for @alloc and the runtime over
 *	it, @kernel registered under ids 0 .. @nr_kernels - 1; describe its
 *	host threads in @desc.
 * @alloc: @len bytes of GM: device address and host view.
 * @run: one run of @entry(@args, @argc) to completion (message in @msg).
 * @close: stop the device.
 */
struct ours_backend {
	int (*open)(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		    int nr_kernels, void **dev, char *desc, size_t desclen);
	int (*alloc)(void *dev, size_t len, uint64_t *dev_addr, void **host);
	int (*run)(void *dev, pto2_orchestration_entry_fn entry, uint64_t *args,
		   int argc, char *msg, size_t msglen);
	void (*close)(void *dev);
};

/* ---- Backend: the sim device --------------------------------------------- */

static int sim_open(uint64_t data_bytes, pto_kernel_entry_fn kernel,
		    int nr_kernels, void **dev, char *desc, size_t desclen)
{
	struct bench_sim_info in;
	struct bench_sim *bs;
	int ret = bench_sim_open(data_bytes, kernel, nr_kernels, &bs);

	if (ret)
		return ret;
	bench_sim_info(bs, &in);
	snprintf(desc, desclen,
		 "%u cores (%u AIC + %u AIV) on %u host threads (more only "
		 "while kernels wait) + %u sched + the orchestrating main thread",
		 in.nr_aic + in.nr_aiv, in.nr_aic, in.nr_aiv, in.core_threads,
		 in.sched_threads);
	*dev = bs;
	return 0;
}

static int sim_alloc(void *dev, size_t len, uint64_t *dev_addr, void **host)
{
	return bench_sim_alloc(dev, len, dev_addr, host);
}

static int sim_run(void *dev, pto2_orchestration_entry_fn entry, uint64_t *args,
		   int argc, char *msg, size_t msglen)
{
	return bench_sim_run(dev, entry, args, argc, msg, msglen);
}

static void sim_close(void *dev)
{
	bench_sim_close(dev);
}

static const struct ours_backend sim_backend = {
	.open = sim_open,
	.alloc = sim_alloc,
	.run = sim_run,
	.close = sim_close,
};

/* ---- The runtime side, the same for every backend ------------------------ */

struct ours {
	const struct ours_backend *be;
	void *dev;
	uint64_t slots_dev;	/* the slots: device address */
	uint64_t *slots;	/* and host view */
	uint32_t max_slots;
};

static int ours_kernel(const struct pto_kernel_ctx *ctx, const uint64_t *args,
		       uint32_t nargs)
{
	peers_kernel(ctx->kernel_id,
		     nargs ? (uint64_t *)(uintptr_t)args[0] : NULL);
	return 0;
}

/* args: the graph (this process's pointer), the slots' device address */
static int ours_orch(PTO2Runtime *rt, uint64_t *args, int argc)
{
	const struct peers_graph *g = (const void *)(uintptr_t)args[0];
	uint64_t shape[2] = { g->nr_slots, PEERS_SLOT_U64 };
	Tensor slots = make_tensor_external((void *)(uintptr_t)args[1], shape,
					    2, PTO_DT_UINT64);
	PTOParam p[PTO2_MAX_TASK_PARAMS];
	Tensor v[PTO2_MAX_TASK_PARAMS];
	bool in_scope = false;
	uint32_t t, i;

	if (argc != 2)
		return -EINVAL;
	for (t = 0; t < g->nr_tasks; t++) {
		const struct peers_task *tk = &g->task[t];

		if (tk->nacc > PTO2_MAX_TASK_PARAMS)
			return -E2BIG;
		if (tk->flags & PT_SCOPE) {
			if (in_scope)
				pto2_rt_scope_end(rt);
			pto2_rt_scope_begin(rt);
			in_scope = true;
		}
		for (i = 0; i < tk->nacc; i++) {
			const struct peers_access *a = &g->acc[tk->acc + i];
			uint64_t vs[2] = { a->count, PEERS_SLOT_U64 };
			uint64_t vo[2] = { a->slot, 0 };

			v[i] = pto_tensor_view(&slots, vs, vo);
			p[i] = a->mode == PM_IN ? make_input_param(&v[i]) :
			       a->mode == PM_OUT ? make_output_param(&v[i]) :
			       make_inout_param(&v[i]);
		}
		pto2_rt_submit_task(rt, tk->kernel, tk->core, p, (int32_t)tk->nacc);
	}
	if (in_scope)
		pto2_rt_scope_end(rt);
	return 0;
}

static int ours_open(const struct peers_sys *sys, unsigned int workers,
		     uint32_t max_slots, void **ctx, char *desc, size_t desclen)
{
	struct ours *o = calloc(1, sizeof(*o));
	size_t len = (size_t)max_slots * PEERS_SLOT_BYTES;
	void *host;
	int ret;

	(void)workers;		/* one host thread per core */
	if (!o)
		return -ENOMEM;
	o->be = sys->priv;
	o->max_slots = max_slots;
	ret = o->be->open(len + 4096, ours_kernel, PK_NR, &o->dev, desc,
			  desclen);
	if (!ret)
		ret = o->be->alloc(o->dev, len, &o->slots_dev, &host);
	if (ret) {
		if (o->dev)
			o->be->close(o->dev);
		free(o);
		return ret;
	}
	o->slots = host;
	*ctx = o;
	return 0;
}

static int ours_prepare(void *ctx, const struct peers_graph *g)
{
	struct ours *o = ctx;

	if (g->nr_slots > o->max_slots)
		return -E2BIG;
	memset(o->slots, 0, (size_t)g->nr_slots * PEERS_SLOT_BYTES);
	return 0;
}

static int ours_run(void *ctx, const struct peers_graph *g)
{
	struct ours *o = ctx;
	uint64_t args[2] = { (uintptr_t)g, o->slots_dev };
	char msg[1024];
	int ret;

	ret = o->be->run(o->dev, ours_orch, args, 2, msg, sizeof(msg));
	if (ret)
		fprintf(stderr, "%s: %s\n", g->name, msg);
	return ret;
}

static int ours_access(void *ctx, const struct peers_graph *g,
		       void (*fn)(void *arg, uint64_t *slots), void *arg)
{
	struct ours *o = ctx;

	(void)g;		/* no run is going on: GM is ours to read */
	fn(arg, o->slots);
	return 0;
}

static void ours_finish(void *ctx, const struct peers_graph *g)
{
	(void)ctx;
	(void)g;
}

static void ours_close(void *ctx)
{
	struct ours *o = ctx;

	o->be->close(o->dev);
	free(o);
}

#define OURS_PATH(path, backend) {					\
	.name = (path), .ours = true, .priv = (backend),		\
	PEERS_SYS_OPS(ours),						\
}

/*
 * The paths of ours, each measured against every peer. "user", the
 * user-mode device backend (GM and registers in a memfd, futexes for
 * park/kick/irq), goes here once it exists:
 *
 *	OURS_PATH("user", &user_backend),
 */
const struct peers_sys peers_ours[] = {
	OURS_PATH("sim", &sim_backend),
};

const unsigned int peers_nr_ours = sizeof(peers_ours) / sizeof(peers_ours[0]);
