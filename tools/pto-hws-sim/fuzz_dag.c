// SPDX-License-Identifier: MIT
/*
 * fuzz_dag.c - a libFuzzer target: DAG files through pto-hws-sim's
 * parser, then through the HWS library (the policy ptod runs live on
 * clients' task shapes) in simulated time, with the invariant checker
 * after every decision, and through the HEFT schedule.
 *
 * An input is one byte that picks the machine and the registers, then a
 * DAG file (Documentation/hws.rst, "The simulator"). A file the parser
 * or wl_prepare() refuses is fine (a clear error is the point); a crash,
 * a sanitizer report, a leak or an invariant violation (sim_run()
 * returns -EUCLEAN) is a finding. Workloads of more than FUZZ_MAX_TASKS
 * tasks are parsed only, to keep the runs fast.
 *
 *   make -C tools/pto-hws-sim fuzz [FUZZ_RUNS=N] [FUZZ_SEED=S]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define FUZZ_MAX_TASKS	400

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The machine and the registers from the first byte of the input. */
static void fuzz_machine(uint8_t sel, struct hws_layout *l,
			 struct hws_config *c)
{
	uint32_t n = 1 + (sel >> 4);		/* 1 .. 16 */

	if (sel & 1)
		hws_layout_device(l, n, 2 * n);
	else
		hws_layout_uniform(l, 3 + n, (sel & 2) ? 4 : 8);
	hws_config_default(c, l);
	c->policy = (sel & 4) ? HWS_POLICY_FIFO : HWS_POLICY_HWS;
	if (sel & 8) {
		c->early_launch = true;
		c->pre_idle_offset = 1000;
		c->fillup_first = true;
		c->backfill_margin = -500;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct workload w = { 0 };
	struct sim_result r;
	struct hws_layout l;
	struct hws_config c;
	struct sim_opts o;
	char err[512];
	uint32_t d, n = 0;
	FILE *f;

	if (size < 2)
		return 0;
	f = fmemopen((void *)(data + 1), size - 1, "r");
	if (!f)
		return 0;
	if (wl_parse(f, "fuzz", &w, err, sizeof(err)) ||
	    wl_prepare(&w, err, sizeof(err)))
		goto out;
	for (d = 0; d < w.ndag; d++)
		n += w.dag[d].ntask;
	if (n > FUZZ_MAX_TASKS)
		goto out;
	fuzz_machine(data[0], &l, &c);
	sim_opts_default(&o);
	o.check = true;
	memset(&r, 0, sizeof(r));
	if (sim_run(&w, &l, &c, &o, &r, err, sizeof(err)) == -EUCLEAN) {
		fprintf(stderr, "fuzz_dag: invariant violated: %s\n", err);
		abort();
	}
	result_free(&r);
	memset(&r, 0, sizeof(r));
	heft_run(&w, &l, &o, &r, err, sizeof(err));
	result_free(&r);
out:
	wl_free(&w);
	fclose(f);
	return 0;
}
