// SPDX-License-Identifier: MIT
/*
 * The native check of an example (no runtime, no device). For every case:
 *   <case>       the kernels called directly, in the example's hand-written
 *                topological order (run_direct)
 *   <case>/orch  orch.so run through the serial reference executor
 * both compared with the double-precision golden: one CASE line each.
 *
 * usage: check [-d BUILD_DIR] [CASE...]
 */
#include <stdio.h>

#include "ex_example.h"

struct check {
	const struct ex_example *ex;
	struct ex_kernel_set ks;
	char orch[4200];
};

/* Both runs of case @ci: the number that failed, or -1 (no memory). */
static int check_case(void *ctx, size_t ci)
{
	struct check *ck = ctx;
	const struct ex_example *ex = ck->ex;
	struct ex_mem m = { 0 };
	struct ex_case c = { .name = ex->case_name(ci) };
	unsigned long tasks;
	int ret, failed = 0;

	if (ex->setup(ci, &m, &c)) {
		fprintf(stderr, "%s: out of memory\n", c.name);
		ex_case_end(ex, &m, &c);
		return -1;
	}

	/* 1. kernels directly */
	ex_case_reset_out(&c);
	ck->ks.tasks = 0;
	ret = ex->run_direct(&ck->ks, &c, &m);
	failed += !ex_case_check(&c, "", ck->ks.tasks, ret);

	/* 2. orchestration through the serial reference executor */
	ex_case_reset_out(&c);
	ret = ex_serial_run_orch(ck->orch, &ck->ks, c.args, c.nargs, &tasks);
	failed += !ex_case_check(&c, "/orch", tasks, ret);

	ex_case_end(ex, &m, &c);
	return failed;
}

int main(int argc, char **argv)
{
	static struct check ck = { .ex = &ex_example };
	char dir[4096];
	int first, failed;

	first = ex_start(ck.ex, argc, argv, dir, sizeof(dir));
	if (first < 0)
		return 2;
	snprintf(ck.orch, sizeof(ck.orch), "%s/orch.so", dir);
	if (ex_kernels_load(&ck.ks, dir, ck.ex->kernels, ck.ex->nr_kernels))
		return 1;
	failed = ex_run_cases(ck.ex, argc, argv, first, check_case, &ck);
	if (failed < 0)
		return 1;
	ex_kernels_unload(&ck.ks);
	return failed ? 1 : 0;
}
