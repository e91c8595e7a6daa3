// SPDX-License-Identifier: MIT
/*
 * An example end to end on the PTO2 runtime over the sim device (see
 * ex_sim.h): for every case, orch.so runs on the runtime's orchestrator
 * thread, the kernel .so files on the sim device's cores, inputs and
 * output in its GM; one CASE <case>/sim line each ("/sim-w<window>" when
 * PTO2_RING_TASK_WINDOW is not the default).
 *
 * usage: e2e_sim [-d BUILD_DIR] [CASE...]
 */
#include <stdio.h>

#include "ex_example.h"
#include "ex_sim.h"

static void *sim_gm_alloc(void *ctx, size_t bytes, uint64_t *addr)
{
	void *host;

	*addr = ex_sim_alloc(ctx, bytes, &host);
	return host;
}

/* Case @ci: 0 if it passed, 1 if not, -1 (no memory). */
static int sim_case(void *ctx, size_t ci)
{
	const struct ex_example *ex = &ex_example;
	struct ex_sim *sim = ctx;
	struct ex_mem m = { .gm_alloc = sim_gm_alloc, .gm_ctx = sim };
	struct ex_case c = { .name = ex->case_name(ci) };
	unsigned long tasks;
	int ret, ok;

	ex_sim_reset(sim);
	if (ex->setup(ci, &m, &c)) {
		fprintf(stderr, "%s: out of memory or GM exhausted\n", c.name);
		ex_case_end(ex, &m, &c);
		return -1;
	}
	ex_case_reset_out(&c);
	ret = ex_sim_run(sim, c.args, c.nargs, &tasks);
	ok = ex_case_check(&c, ex_sim_label(sim), tasks, ret);
	if (sim->task_ring_blocked)
		printf("  task ring flow control: %llu submits waited for a slot\n",
		       (unsigned long long)sim->task_ring_blocked);
	ex_case_end(ex, &m, &c);
	return !ok;
}

int main(int argc, char **argv)
{
	const struct ex_example *ex = &ex_example;
	static struct ex_sim sim;
	char dir[4096];
	int first, failed;

	first = ex_start(ex, argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	if (ex_sim_open(&sim, dir, ex->kernels, ex->nr_kernels, ex->sim_bytes))
		return 1;
	failed = ex_run_cases(ex, argc, argv, first, sim_case, &sim);
	if (failed < 0)
		return 1;
	ex_sim_close(&sim);
	return failed ? 1 : 0;
}
