// SPDX-License-Identifier: MIT
/*
 * graph.c - upward ranks and critical paths of a static DAG (graph.h)
 */
#include <errno.h>

#include <pto-private/graph.h>

int pto_upward_rank(uint32_t n, const uint64_t *cost, const uint32_t *succ_off,
		    const uint32_t *succ, uint64_t *rank, bool *on_cp)
{
	uint64_t best = 0;
	uint32_t i, j;

	/* ranks, from the exit nodes back: every successor comes later */
	for (i = n; i-- > 0;) {
		uint64_t m = 0;

		for (j = succ_off[i]; j < succ_off[i + 1]; j++) {
			if (succ[j] <= i || succ[j] >= n)
				return -EINVAL;
			if (rank[succ[j]] > m)
				m = rank[succ[j]];
		}
		rank[i] = cost[i] + m;
	}

	/* on_cp first marks the nodes that have a predecessor */
	for (i = 0; i < n; i++)
		on_cp[i] = false;
	for (i = 0; i < n; i++)
		for (j = succ_off[i]; j < succ_off[i + 1]; j++)
			on_cp[succ[j]] = true;
	for (i = 0; i < n; i++)
		if (!on_cp[i] && rank[i] > best)
			best = rank[i];
	/* the entry nodes of maximal rank start the critical paths */
	for (i = 0; i < n; i++)
		on_cp[i] = !on_cp[i] && rank[i] == best;
	/* and every successor that produced an on-path node's rank follows */
	for (i = 0; i < n; i++) {
		if (!on_cp[i])
			continue;
		for (j = succ_off[i]; j < succ_off[i + 1]; j++)
			if (rank[i] == cost[i] + rank[succ[j]])
				on_cp[succ[j]] = true;
	}
	return 0;
}
