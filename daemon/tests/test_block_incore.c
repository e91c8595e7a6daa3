// SPDX-License-Identifier: MIT
/*
 * test_block_incore - the block_incore helpers of pto_orchestration_api.h
 * (static inline) against a submit that only records its calls: the
 * params each block gets, and that a refused param count stops the loop
 * at its first submit instead of failing block_dim submits.
 */
#include <stdint.h>
#include <string.h>

/* the header's calls land here (it only declares them) */
#define pto2_rt_submit_task		rec_submit_task
#define pto2_rt_submit_task_clustered	rec_submit_clustered
#define pto2_rt_allocate_cluster	rec_allocate_cluster
#include <pto/pto_orchestration_api.h>

#include "tap.h"

static struct {
	uint32_t submits, clusters;
	int32_t last_n;
	uint64_t last_dim, last_b;
	PTO2WorkerType last_wt;
} rec;

void rec_submit_task(PTO2Runtime *rt, int32_t kernel_id,
		     PTO2WorkerType worker_type, PTOParam *params,
		     int32_t num_params)
{
	(void)rt;
	(void)kernel_id;
	rec.submits++;
	rec.last_n = num_params;
	rec.last_wt = worker_type;
	if (num_params >= 2) {
		rec.last_dim = params[num_params - 2].scalar_value;
		rec.last_b = params[num_params - 1].scalar_value;
	}
}

void rec_submit_clustered(PTO2Runtime *rt, int32_t kernel_id,
			  PTO2WorkerType worker_type, PTOParam *params,
			  int32_t num_params, int32_t cluster_id)
{
	(void)cluster_id;
	rec_submit_task(rt, kernel_id, worker_type, params, num_params);
}

int32_t rec_allocate_cluster(PTO2Runtime *rt)
{
	(void)rt;
	return (int32_t)++rec.clusters;
}

int main(void)
{
	PTOParam one[1] = { make_scalar_param(7) };

	memset(&rec, 0, sizeof(rec));
	pto2_rt_submit_block_incore(NULL, 3, PTO2_WORKER_VECTOR, one, 1, 5);
	tap_ok(rec.submits == 5 && rec.last_n == 3 && rec.last_dim == 5 &&
	       rec.last_b == 4,
	       "block_incore of 5 blocks: 5 tasks, the last with its param, block_dim 5 and block 4 (%u submits, n %d, %llu, %llu)",
	       rec.submits, rec.last_n, (unsigned long long)rec.last_dim,
	       (unsigned long long)rec.last_b);

	memset(&rec, 0, sizeof(rec));
	pto2_rt_submit_block_incore(NULL, 3, PTO2_WORKER_VECTOR, one, -2,
				    UINT32_MAX);
	tap_ok(rec.submits == 1 && rec.last_n == -1,
	       "block_incore with -2 params over 2^32 - 1 blocks: one refused submit, then it stops (%u submits, n %d)",
	       rec.submits, rec.last_n);

	memset(&rec, 0, sizeof(rec));
	pto2_rt_submit_block_incore_paired(NULL, 1, one, 1, 2, NULL, 0, 4);
	tap_ok(rec.submits == 8 && rec.clusters == 4 &&
	       rec.last_wt == PTO2_WORKER_VECTOR && rec.last_n == 2 &&
	       rec.last_b == 3,
	       "paired block_incore of 4 blocks: 4 clusters, 8 tasks, the last a vector task of block 3 (%u, %u)",
	       rec.submits, rec.clusters);

	memset(&rec, 0, sizeof(rec));
	pto2_rt_submit_block_incore_paired(NULL, 1, one, 20, 2, NULL, 0,
					   UINT32_MAX);
	tap_ok(rec.submits == 1 && rec.clusters == 1,
	       "paired block_incore with 20 cube params over 2^32 - 1 blocks: it stops at the first refused submit (%u submits, %u clusters)",
	       rec.submits, rec.clusters);
	return tap_done();
}
