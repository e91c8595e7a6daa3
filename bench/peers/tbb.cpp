// SPDX-License-Identifier: MIT
/*
 * tbb.cpp - the oneTBB peer of pto-bench-peers ("tbb"): a flow graph
 *
 * A run builds a tbb::flow::graph of one continue_node per task and an
 * edge from each of its predecessors (the lists peers_build()
 * derived from the accesses: TBB has no data-driven dependencies), puts a
 * message into every task without predecessors and waits for the graph;
 * building the graph is part of the run, as submitting is for the others.
 * Everything runs in a task_arena of as many threads as asked, the main
 * thread among them (a global_control allows that many).
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <new>

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include "peers.h"

namespace {

struct tb {
	tbb::global_control *gc;
	tbb::task_arena *arena;
	uint64_t *slots;
};

using node_t = tbb::flow::continue_node<tbb::flow::continue_msg>;

int tb_open(const struct peers_sys *, unsigned int workers, uint32_t,
	    void **ctx, char *desc, size_t desclen)
{
	tb *t = new (std::nothrow) tb();

	if (!t)
		return -ENOMEM;
	t->gc = new (std::nothrow) tbb::global_control(
		tbb::global_control::max_allowed_parallelism, workers);
	t->arena = new (std::nothrow) tbb::task_arena((int)workers);
	if (!t->gc || !t->arena) {
		delete t->arena;
		delete t->gc;
		delete t;
		return -ENOMEM;
	}
	t->arena->initialize();
	std::snprintf(desc, desclen, "%d threads, the main thread among them",
		      t->arena->max_concurrency());
	*ctx = t;
	return 0;
}

int tb_prepare(void *ctx, const struct peers_graph *g)
{
	tb *t = static_cast<tb *>(ctx);

	t->slots = peers_slots_alloc(g->nr_slots);
	return t->slots ? 0 : -ENOMEM;
}

void tb_build_and_run(const struct peers_graph *g, uint64_t *slots)
{
	tbb::flow::graph graph;
	std::deque<node_t> nodes;

	for (uint32_t i = 0; i < g->nr_tasks; i++) {
		const struct peers_task *tk = &g->task[i];
		int kernel = tk->kernel;
		uint64_t *stamp = tk->flags & PT_STAMPED ?
			&slots[(size_t)peers_stamp_slot(g, tk) * PEERS_SLOT_U64] :
			nullptr;

		nodes.emplace_back(graph, [kernel, stamp](const tbb::flow::continue_msg &) {
			peers_kernel(kernel, stamp);
		});
		for (uint32_t p = tk->pred; p < tk->pred + tk->npred; p++)
			tbb::flow::make_edge(nodes[g->pred[p]], nodes[i]);
	}
	for (uint32_t i = 0; i < g->nr_tasks; i++)
		if (!g->task[i].npred)
			nodes[i].try_put(tbb::flow::continue_msg());
	graph.wait_for_all();
}

int tb_run(void *ctx, const struct peers_graph *g)
{
	tb *t = static_cast<tb *>(ctx);

	t->arena->execute([g, t] { tb_build_and_run(g, t->slots); });
	return 0;
}

int tb_access(void *ctx, const struct peers_graph *,
	      void (*fn)(void *arg, uint64_t *slots), void *arg)
{
	fn(arg, static_cast<tb *>(ctx)->slots);
	return 0;
}

void tb_finish(void *ctx, const struct peers_graph *)
{
	tb *t = static_cast<tb *>(ctx);

	std::free(t->slots);
	t->slots = nullptr;
}

void tb_close(void *ctx)
{
	tb *t = static_cast<tb *>(ctx);

	delete t->arena;
	delete t->gc;
	delete t;
}

} // namespace

extern "C" const struct peers_sys peers_tbb = {
	PEERS_NAME_TBB, false, nullptr, tb_open, tb_prepare, tb_run, tb_access,
	tb_finish, tb_close,
};
