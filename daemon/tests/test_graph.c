// SPDX-License-Identifier: MIT
/*
 * test_graph.c - upward ranks and critical paths (common/graph.c)
 */
#include <errno.h>
#include <string.h>

#include <pto-private/graph.h>

#include "tap.h"

/*
 * Six nodes, costs 1000 or 2000, communication cost 0: N0 is the entry,
 * N5 the exit. N0 -> N1, N2, N3; N1 -> N4; N2 -> N4; N3 -> N5; N4 -> N5.
 * Offline priority = rank / 10: N5 100, N4 200, N1 300, N3 300, N2 400,
 * N0 500 = 1000 + rank(N2); the critical path is N0, N2, N4, N5.
 */
static void six_nodes(void)
{
	static const uint64_t cost[6] = { 1000, 1000, 2000, 2000, 1000, 1000 };
	static const uint32_t off[7] = { 0, 3, 4, 5, 6, 7, 7 };
	static const uint32_t succ[7] = { 1, 2, 3, 4, 4, 5, 5 };
	static const uint32_t prio[6] = { 500, 300, 400, 300, 200, 100 };
	static const bool cp[6] = { true, false, true, false, true, true };
	uint64_t rank[6];
	bool on_cp[6];
	int i, ret, bad = 0;

	ret = pto_upward_rank(6, cost, off, succ, rank, on_cp);
	ok(ret == 0, "six-node DAG ranked");
	for (i = 0; i < 6; i++) {
		if (rank[i] / 10 != prio[i] || on_cp[i] != cp[i])
			bad++;
		tap_diag("N%d: rank %llu, offline priority %llu, on_cp %d", i,
			 (unsigned long long)rank[i],
			 (unsigned long long)rank[i] / 10, on_cp[i]);
	}
	ok(!bad, "offline priorities N5 100, N4 200, N2 400, N0 500; "
	   "critical path N0, N2, N4, N5");
}

/* Two entries and two equal branches: every maximal path is critical. */
static void several_paths(void)
{
	/* 0 -> 2, 1 -> 2, 2 -> 3, 2 -> 4, 3 -> 5, 4 -> 5 */
	static const uint64_t cost[6] = { 5, 5, 1, 3, 3, 1 };
	static const uint32_t off[7] = { 0, 1, 2, 4, 5, 6, 6 };
	static const uint32_t succ[6] = { 2, 2, 3, 4, 5, 5 };
	uint64_t rank[6];
	bool on_cp[6];
	int ret;

	ret = pto_upward_rank(6, cost, off, succ, rank, on_cp);
	ok(ret == 0 && rank[0] == 10 && rank[1] == 10 && rank[2] == 5 &&
	   rank[5] == 1, "ranks of a diamond with two entries");
	ok(on_cp[0] && on_cp[1] && on_cp[2] && on_cp[3] && on_cp[4] &&
	   on_cp[5], "both entries and both branches are on a critical path");
}

static void short_branch(void)
{
	/* 0 -> 1 -> 3, 0 -> 2 -> 3: branch 2 is shorter */
	static const uint64_t cost[4] = { 1, 4, 2, 1 };
	static const uint32_t off[5] = { 0, 2, 3, 4, 4 };
	static const uint32_t succ[4] = { 1, 2, 3, 3 };
	uint64_t rank[4];
	bool on_cp[4];

	ok(pto_upward_rank(4, cost, off, succ, rank, on_cp) == 0 &&
	   on_cp[0] && on_cp[1] && !on_cp[2] && on_cp[3] && rank[0] == 6,
	   "the shorter branch is off the critical path");
}

static void bad_edges(void)
{
	static const uint64_t cost[2] = { 1, 1 };
	static const uint32_t off[3] = { 0, 0, 1 };
	static const uint32_t back[1] = { 0 };
	static const uint32_t self[1] = { 1 };
	static const uint32_t out[1] = { 7 };
	uint64_t rank[2];
	bool on_cp[2];

	ok(pto_upward_rank(2, cost, off, back, rank, on_cp) == -EINVAL,
	   "an edge backwards is refused");
	ok(pto_upward_rank(2, cost, off, self, rank, on_cp) == -EINVAL,
	   "a self edge is refused");
	ok(pto_upward_rank(2, cost, off, out, rank, on_cp) == -EINVAL,
	   "an edge to a missing node is refused");
	ok(pto_upward_rank(0, cost, off, back, rank, on_cp) == 0,
	   "an empty graph is fine");
}

int main(void)
{
	six_nodes();
	several_paths();
	short_branch();
	bad_edges();
	return tap_done();
}
