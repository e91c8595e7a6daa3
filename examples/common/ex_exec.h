// SPDX-License-Identifier: MIT
/*
 * Running the examples without the PTO2 runtime (native check programs).
 *
 * ex_kernels_*: dlopen each built kernel .so, look up pto_kernel_entry and
 * call it with a filled struct pto_kernel_ctx.  Cores are assigned round
 * robin per worker type with the geometry of pto_kernel.h (24 AIC blocks of
 * one sub-block; AIV core 24 + 2b + s = block b, sub-block s of 2), so a
 * kernel that wrongly depends on where it runs shows up here.
 *
 * ex_serial_run_orch: dlopen an orchestration .so and run its
 * aicpu_orchestration_entry against a serial reference executor of the
 * PTO2 orchestration API (defined in ex_serial_rt.c and exported by the
 * check program, which is linked with -rdynamic): every submitted task is
 * executed at once, in submission order, which is a valid topological
 * order because TensorMap edges only point from earlier tasks to later
 * ones.  Device address = host pointer; make_tensor() buffers come from
 * malloc (filled with NaN bytes) and are freed at scope end.  Views are
 * bounds checked, must be contiguous (what these kernels expect), and a
 * task's worker type must match its kernel's core type.
 */
#ifndef PTO_EXAMPLES_EX_EXEC_H
#define PTO_EXAMPLES_EX_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include <pto/pto_kernel.h>

#define EX_MAX_KERNELS		16
#define EX_NR_AIC		24
#define EX_NR_AIV		(2 * EX_NR_AIC)

struct ex_kernel_desc {
	int32_t func_id;
	const char *name;	/* e.g. "QK", for messages */
	const char *so;		/* file name in the build directory */
	int32_t worker_type;	/* PTO2_WORKER_CUBE / PTO2_WORKER_VECTOR */
};

struct ex_kernel {
	struct ex_kernel_desc desc;
	void *dl;
	pto_kernel_entry_fn entry;
};

struct ex_kernel_set {
	struct ex_kernel k[EX_MAX_KERNELS];
	size_t n;
	unsigned long tasks;	/* kernel executions since the last reset */
	uint32_t next_aic, next_aiv;
};

int ex_kernels_load(struct ex_kernel_set *ks, const char *dir,
		    const struct ex_kernel_desc *descs, size_t n);
void ex_kernels_unload(struct ex_kernel_set *ks);
const struct ex_kernel *ex_kernel_find(const struct ex_kernel_set *ks,
				       int32_t func_id);

/*
 * Run one task: kernel func_id on a core of worker_type.  Returns the
 * kernel's result (0 or negative errno); -ENOENT for an unknown func_id,
 * -EPERM when worker_type is not the kernel's core type.
 */
int ex_kernel_run(struct ex_kernel_set *ks, int32_t func_id,
		  int32_t worker_type, const uint64_t *args, uint32_t nargs);

/*
 * Run the orchestration in @orch_so with @args through the serial
 * reference executor.  0 or negative errno; *tasks gets the number of
 * tasks submitted; a diagnosis goes to stderr.
 */
int ex_serial_run_orch(const char *orch_so, struct ex_kernel_set *ks,
		       uint64_t *args, int nargs, unsigned long *tasks);

#endif
