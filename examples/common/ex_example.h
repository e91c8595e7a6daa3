// SPDX-License-Identifier: MIT
/*
 * What an example tells the two programs that run it: the native check
 * (ex_check_main.c: kernels called directly, then orch.so through the
 * serial reference executor) and the end-to-end run on the sim device
 * (ex_sim_main.c: orch.so on the PTO2 runtime core).
 *
 * Each example defines `const struct ex_example ex_example` in its
 * example.c: its kernels, its cases, how a case's inputs, golden and
 * orchestration arguments are laid out (setup), and, for the check, its
 * graph written out by hand (run_direct). The programs do the rest: the
 * command line, case selection, running, comparing and the CASE lines.
 *
 * Both take [-d BUILD_DIR] [CASE...]: the kernel .so files and orch.so are
 * looked up in BUILD_DIR (default: the program's own directory); the named
 * cases run (all of them when none is named, or $case_env if the example
 * has one and it is set).
 */
#ifndef PTO_EXAMPLES_EX_EXAMPLE_H
#define PTO_EXAMPLES_EX_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "ex_exec.h"

#define EX_MAX_ORCH_ARGS	16
#define EX_MEM_MAX		16

/* In the check programs a device address is a host pointer. */
#define EX_ADDR(p)		((uint64_t)(uintptr_t)(p))
#define EX_HOST(addr)		((void *)(uintptr_t)(addr))

/*
 * Where a case's data lives: host memory in the check programs (device
 * address = host pointer), the sim device's GM in the e2e programs
 * (@gm_alloc set). Host memory taken with ex_mem_host() or ex_mem_dev() is
 * freed by ex_mem_release() at the end of the case.
 */
struct ex_mem {
	void *(*gm_alloc)(void *ctx, size_t bytes, uint64_t *addr);
	void *gm_ctx;
	void *host[EX_MEM_MAX];
	size_t nr_host;
};

/* @bytes of host memory for the case (golden, inputs); NULL if none. */
void *ex_mem_host(struct ex_mem *m, size_t bytes);
/* @bytes the orchestration can name: the host view; *@addr its address. */
void *ex_mem_dev(struct ex_mem *m, size_t bytes, uint64_t *addr);
/*
 * The @bytes at @src as the orchestration sees them: @src itself in host
 * memory, a copy in GM on the sim device. The host view; NULL if no GM.
 */
void *ex_mem_put(struct ex_mem *m, void *src, size_t bytes, uint64_t *addr);
void ex_mem_release(struct ex_mem *m);

/* One case, as the example's setup() fills it in. */
struct ex_case {
	const char *name;
	uint64_t args[EX_MAX_ORCH_ARGS];	/* the orchestration's */
	int nargs;
	float *out;			/* the output, host view */
	size_t out_elems;
	int out_init;			/* its bytes before each run: 0xff (NaN) or 0 */
	const double *ref;		/* the golden: out_elems values */
	double tol;
	unsigned long tasks;		/* tasks the graph must have */
	void *priv;			/* the example's own */
};

struct ex_example {
	const struct ex_kernel_desc *kernels;
	size_t nr_kernels;
	/* the name of case @ci; NULL past the last case */
	const char *(*case_name)(size_t ci);
	/* names the case when none is on the command line (or NULL) */
	const char *case_env;
	/* GM the sim device leaves for one case's data */
	uint64_t sim_bytes;
	/* once, before any case (or NULL): 0, or -1 after a message */
	int (*init)(void);
	/* inputs, golden and arguments of case @ci in @m: 0 or -ENOMEM */
	int (*setup)(size_t ci, struct ex_mem *m, struct ex_case *c);
	/* undo what setup() kept outside @m (or NULL) */
	void (*teardown)(struct ex_case *c);
	/*
	 * the graph by hand, kernels called directly (check only), its
	 * intermediates in @m
	 */
	int (*run_direct)(struct ex_kernel_set *ks, const struct ex_case *c,
			  struct ex_mem *m);
};

/* Defined by each example (example.c). */
extern const struct ex_example ex_example;

/*
 * The command line: fills @dir and returns the index of the first CASE
 * argument; -1 after a message (usage, or the example's init failed).
 */
int ex_start(const struct ex_example *ex, int argc, char **argv, char *dir,
	     size_t len);
/*
 * Run @run_case(@ctx, ci) on every case selected by argv[first..]: the
 * number that failed, or -1 as soon as one returns -1 (no memory).
 */
int ex_run_cases(const struct ex_example *ex, int argc, char **argv,
		 int first, int (*run_case)(void *ctx, size_t ci), void *ctx);

/* Give the output its initial bytes (before a run). */
void ex_case_reset_out(const struct ex_case *c);
/* Compare and print the CASE line of a run; 1 on PASS. */
int ex_case_check(const struct ex_case *c, const char *suffix,
		  unsigned long tasks, int ret);
/* The end of a case: the example's teardown, then @m's memory. */
void ex_case_end(const struct ex_example *ex, struct ex_mem *m,
		 struct ex_case *c);

#endif
