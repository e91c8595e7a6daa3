// SPDX-License-Identifier: MIT
/*
 * graph.h - offline priorities of a static DAG
 *
 * Shared by libpto (a graph built in static mode is ranked before it is
 * released), the HWS simulator and the tests: one definition of the
 * upward rank and of the critical path.
 */
#ifndef PTO_PRIVATE_GRAPH_H
#define PTO_PRIVATE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Estimated times of one block, ns: of a kernel nothing is known of, and
 * the longest (about 18 minutes): a longer one, given, declared or
 * measured, counts as this, since the schedulers add estimates to clock
 * times and ranks add them up.
 */
#define PTO_DEFAULT_EST_NS	10000
#define PTO_MAX_EST_NS		(1ULL << 40)
#define PTO_EST_CLAMP(ns)	((ns) < PTO_MAX_EST_NS ? (ns) : PTO_MAX_EST_NS)

/*
 * The estimated time of one block: @given for the task (0: none), else
 * @known for its kernel (declared or measured; 0: none), else the
 * default; clamped.
 */
static inline uint64_t pto_est_pick(uint64_t given, uint64_t known)
{
	return PTO_EST_CLAMP(given ? given : known ? known : PTO_DEFAULT_EST_NS);
}

/**
 * pto_upward_rank() - HEFT's upward rank of every node, communication
 * cost 0, and the critical paths.
 * @n: nodes 0 .. n-1, in a topological order (every edge i -> j has i < j).
 * @cost: estimated time of each node (0 allowed).
 * @succ_off, @succ: the successors of node i are succ[succ_off[i] ..
 *	succ_off[i + 1] - 1] (succ_off has n + 1 entries).
 * @rank: out: rank(i) = cost(i) + max over successors j of rank(j).
 * @on_cp: out: every entry node (no predecessor) of maximal rank is on a
 *	critical path, and so, recursively, is every successor j of an
 *	on-path node i with rank(i) == cost(i) + rank(j): a graph may have
 *	several critical paths.
 * Returns 0, or -EINVAL if an edge does not go forwards.
 */
int pto_upward_rank(uint32_t n, const uint64_t *cost, const uint32_t *succ_off,
		    const uint32_t *succ, uint64_t *rank, bool *on_cp);

#endif /* PTO_PRIVATE_GRAPH_H */
