// SPDX-License-Identifier: MIT
/*
 * pto_e2e - end-to-end client for the VM tests (selftests/e2e/e2e_test.c)
 *
 * Runs the examples through libpto and ptod with the examples' own input
 * generators and double-precision goldens (examples/<name>/golden.c), and
 * a few failure scenarios:
 *
 *   pto_e2e vector [CASE...]      vector_example, golden check; ready
 *                                 once its first graph is submitted
 *   pto_e2e bgemm                 bgemm, golden check
 *   pto_e2e pa [CASE...]          paged_attention, golden check
 *   pto_e2e deadlock N            one scope of N tasks (expects -EDEADLK
 *                                 when PTO2_RING_TASK_WINDOW < N + 1)
 *   pto_e2e crash                 a kernel that segfaults (expects -EIO)
 *   pto_e2e misuse                libpto's API misused: each call gets
 *                                 a clear error, none hangs (cases
 *                                 misuse/NAME)
 *   pto_e2e crash-budget N        up to N times: a thread uses up the
 *                                 user's sandbox starts, then a crash;
 *                                 the next run must fail (-EOWNERDEAD):
 *                                 no start was left for a new sandbox
 *   pto_e2e streampad             graphs whose task meets the end of the
 *                                 stream's ring with the smallest gap
 *                                 before it (libpto pads, ptod reads on)
 *   pto_e2e closedev              a kernel that makes pto-aicore release
 *                                 the device and live on (expects -EIO
 *                                 and ptod's "closed the device")
 *   pto_e2e reload N              N times: register the ADD_SCALAR
 *                                 kernel anew (a buffer of its own each
 *                                 time, as a JIT would) and run one task
 *                                 of it (case reload/N)
 *   pto_e2e stream SECONDS        keeps submitting small tasks (to be
 *                                 killed mid-stream); ready once its
 *                                 first task has run on a core
 *   pto_e2e hang [N]              N kernels (default: one per core) that
 *                                 never return; ready once all run
 *   pto_e2e hang-bell             hang's kernels on every core, the
 *                                 graph submitted whole, then its
 *                                 doorbell filled and made blocking;
 *                                 ready after that
 *   pto_e2e bell-orphaned         its connections shut for writing
 *                                 (ptod drops it), then a graph that
 *                                 rings the doorbell ptod no longer
 *                                 reads: an error, not SIGPIPE
 *   pto_e2e probe SECONDS         keeps submitting probe tasks (AIC and
 *                                 AIV) for SECONDS or until SIGTERM;
 *                                 ready once its first task has run;
 *                                 reports where and when its tasks ran
 *                                 (below)
 *   pto_e2e probe-n TASKS         the same for TASKS tasks, no ready
 *   pto_e2e prio static|stream|recost
 *                                 one graph of AIC probe tasks: a root,
 *                                 then PRIO_LEAVES leaves and a chain of
 *                                 PRIO_CHAIN tasks after it, submitted in
 *                                 that order, as a static graph (ranked)
 *                                 or streamed; recost: static, the leaves
 *                                 declared 100 times costlier than the
 *                                 chain; prints the order they started
 *                                 in (below)
 *   pto_e2e chain HOPS GRAPHS MS  GRAPHS graphs, each a serial chain of
 *                                 HOPS probe tasks; fails if one took
 *                                 longer than MS ms (a lost kick: one
 *                                 parked core thread never woken)
 *   pto_e2e badbuf                names a buffer it does not own
 *                                 (expects -EACCES)
 *   pto_e2e freed                 hands ptod a stream buffer and a
 *                                 kernel blob, frees them, and checks
 *                                 that another tenant allocating all of
 *                                 GM gets none of that memory while ptod
 *                                 can use it, and that it comes back
 *                                 once the client is gone
 *   pto_e2e freed-tensor          frees a tensor's buffer while the run
 *                                 that uses it goes on: another tenant
 *                                 allocating all of GM gets none of it,
 *                                 the run completes, the memory comes
 *                                 back once the run is over
 *   pto_e2e reload-quota COUNT MIB COUNT times: loads the probe kernel
 *                                 again from a fresh MIB MiB blob (libpto
 *                                 frees the one it replaces) and runs one
 *                                 task of it; every load and run passes
 *   pto_e2e kshare                (raw client) two kernels from one
 *                                 buffer, one moved, the buffer freed: it
 *                                 stays pinned for the other
 *   pto_e2e reload-busy           (raw client) registers a kernel again
 *                                 while a task of its old blob runs and
 *                                 frees the old blob: another tenant
 *                                 allocating all of GM gets none of it,
 *                                 the run completes, the memory comes
 *                                 back once it is over
 *   pto_e2e freed-named           (raw client) frees a buffer a task of
 *                                 its open graph wrote: another tenant
 *                                 allocating all of GM gets none of it,
 *                                 the next task naming it runs or gets
 *                                 -EACCES and writes none of the
 *                                 tenant's buffers, its memory comes
 *                                 back once the graph is over; then
 *                                 frees its stream buffer: the same
 *                                 tenant gets none of it either, and it
 *                                 stays out of GM while connected
 *   pto_e2e reload-defer          (user-mode device) loads a kernel
 *                                 again while a task of its old blob
 *                                 runs: libpto frees (and unmaps) the
 *                                 old blob only once that graph is over
 *   pto_e2e unpriv                as a local user: no AICPU or executor
 *                                 role, no GM beyond its own buffers, no
 *                                 register file, no pins
 *   pto_e2e idle SECONDS          stays connected without running
 *                                 anything; ready once connected
 *   pto_e2e flood SECONDS [N]     (no libpto) for SECONDS, pings on
 *                                 FLOOD_CONNS connections without reading
 *                                 a reply (N each, default: all ptod
 *                                 takes), each dialled again when ptod
 *                                 drops it; ready after the first drop
 *   pto_e2e pings N               N pings, each waiting for its reply
 *   pto_e2e quota MIB             with a GM quota of MIB per user (ptod
 *                                 -q): allocations beyond it fail with
 *                                 -EDQUOT and a message, within it pass
 *   pto_e2e noquota MIB           without a GM quota: a buffer of MIB
 *                                 + 1 MiB (expects 0)
 *   pto_e2e hellos N              up to N more clients until ptod refuses
 *                                 one for the user's GM quota (-EDQUOT)
 *   pto_e2e peer                  (no libpto) connects to ptod's socket
 *                                 and sends a ping: prints the outcome
 *   pto_e2e peer-silent S         (no libpto) connects and sends
 *                                 nothing: prints what ptod says within
 *                                 S seconds, or that it said nothing
 *   pto_e2e churn N               (no libpto) N times: connect, ping
 *                                 before hello (expects -EPROTO), hang up
 *   pto_e2e hangup N              (no libpto) N times: connect, ping
 *                                 before hello, hang up without reading
 *                                 the reply (ptod's send of it fails)
 *   pto_e2e conns N               (no libpto) up to N connections, each
 *                                 with a ping, until ptod refuses one
 *   pto_e2e reclen LEN...         (no libpto) for each LEN, a client that
 *                                 writes its own stream: a graph with a
 *                                 record LEN bytes long (expects -EPROTO),
 *                                 then, on a new connection, a graph of
 *                                 well-formed records (expects 0)
 *   pto_e2e kversion              (no libpto) KERNEL_REG of a blob of
 *                                 another version (expects -ENOEXEC),
 *                                 then of its own (expects 0)
 *   pto_e2e misaligned            (no libpto) hellos whose stream header
 *                                 is not 64-byte aligned (expects -EINVAL)
 *                                 and one that is (expects 0)
 *   pto_e2e graphs N              (no libpto) N empty graphs, one
 *                                 after the other (expects 0 each)
 *   pto_e2e outside N [CONNS [MS]] (no libpto) N records outside a
 *                                 graph (ignored), then a graph
 *                                 (expects 0); on CONNS connections
 *                                 one after the other (default 1); each
 *                                 record published MS ms after the one
 *                                 before (default: all at once)
 *   pto_e2e forge LINE            (no libpto) a hello whose
 *                                 PTO2_RING_HEAP is "1", a newline and
 *                                 LINE (expects -EINVAL)
 *   pto_e2e rawhead HOW...        (no libpto) the same with a stream
 *                                 whose head or records break the ring's
 *                                 rules: ahead, edge, end, published,
 *                                 outside (before any graph)
 *   pto_e2e rawcluster HOW...     (no libpto) the same with cluster ids
 *                                 out of order: far (one past 2^28), skip
 *                                 (1, then 3); stale (a free of an id
 *                                 whose scope ended: expects -EINVAL)
 *   pto_e2e clpairs PID N         (no libpto) a graph that allocates and
 *                                 frees a cluster N times: it passes and
 *                                 ptod (PID) grows by less than 8 MiB
 *   pto_e2e badph                 an OUTPUT on a placeholder the client
 *                                 forged far out of order: -EPROTO; an
 *                                 intermediate read past its end: -EACCES;
 *                                 intermediates whose sizes sum past
 *                                 2^64: -ENOMEM
 *   pto_e2e phring                (task window 16) 300 intermediates in
 *                                 scopes, each read at once: right; one
 *                                 read after 300 newer: -EINVAL
 *   pto_e2e slots [S [H]]         (no libpto) graphs left open until one
 *                                 more waits to start (an engine slot, or
 *                                 ptod -D); ready; S s later (3) that one
 *                                 hangs up, the others H s later (60)
 *
 * Build directory of the examples: -d DIR (default: build/examples next to
 * this program's build/selftests/e2e). Prints one line per case:
 *   CASE <name>: PASS|FAIL ...
 * and exits non-zero if any failed.
 *
 * Readiness (vector, stream, probe, idle): with -r FD the program writes
 * one byte "R" to file descriptor FD and closes it when it is ready;
 * without -r it prints "READY" on stdout (vector: nothing).
 *
 * probe and probe-n run kernel probe_kernel.so (next to this program) and
 * print, after the run:
 *   PROBE run status=S t0_ns=T t1_ns=T tasks=N recorded=N
 *   PROBE span first_ns=T last_ns=T blocks=0xMASK cores=N
 *   PROBE core=C block=B aic=0|1 n=N last_start_ns=T last_end_ns=T
 *                                 (one line per core that ran a task)
 *   CASE probe: PASS|FAIL status=S ...
 * t0/t1 bracket pto_run() and the other times are the kernels' own
 * readings, all CLOCK_MONOTONIC ns; last_* are those of the last task that
 * ran on the core. PASS means the run returned 0 and every task left its
 * record.
 *
 * prio prints, after the run:
 *   PRIO order: R A0 A1 A2 A3 C0 C1 C2 C3     (the tasks by start time)
 *   CASE prio: PASS|FAIL status=S ...
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/pto.h>

#include <pto/libpto.h>
#include <pto/pto_kernel.h>

#include <pto-private/fdpass.h>
#include <pto-private/time.h>
#include <pto-private/wire.h>

#include "hostile.h"
#include "ptod_dial.h"
#include "probe.h"

#include "../../examples/common/ex_common.h"
#include "../../examples/vector_example/vector_case.h"
#include "../../examples/bgemm/bgemm_case.h"
#include "../../examples/paged_attention/pa_case.h"
#include "../../daemon/tests/random_dag.h"

static char exdir[PATH_MAX + 64];
static char e2edir[PATH_MAX + 64];
static pto_client *cl;
static int ready_fd = -1;

/* Tell whoever started us that we are ready (see the header comment). */
static int signal_ready(void)
{
	ssize_t n;

	if (ready_fd < 0) {
		printf("READY\n");
		fflush(stdout);
		return 0;
	}
	do
		n = write(ready_fd, "R", 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		fprintf(stderr, "ready fd %d: %s\n", ready_fd,
			n < 0 ? strerror(errno) : "short write");
		return -EIO;
	}
	close(ready_fd);
	ready_fd = -1;
	return 0;
}

struct kdesc {
	int32_t id;
	const char *so;
	int32_t type;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int load_kernels(const char *ex, const struct kdesc *k, size_t n)
{
	char path[PATH_MAX + 192];
	size_t i;

	for (i = 0; i < n; i++) {
		int ret;

		snprintf(path, sizeof(path), "%s/%s/%s", exdir, ex, k[i].so);
		ret = pto_kernel_load(cl, k[i].id, k[i].type, path);
		if (ret) {
			fprintf(stderr, "kernel %s: %s\n", path, pto_last_error(cl));
			return ret;
		}
	}
	return 0;
}

static pto2_orchestration_entry_fn load_orch(const char *ex)
{
	char path[PATH_MAX + 192];
	void *dl;
	pto2_orchestration_entry_fn fn;

	snprintf(path, sizeof(path), "%s/%s/orch.so", exdir, ex);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "%s\n", dlerror());
		return NULL;
	}
	fn = (pto2_orchestration_entry_fn)(uintptr_t)dlsym(dl,
							   "aicpu_orchestration_entry");
	if (!fn)
		fprintf(stderr, "%s: no aicpu_orchestration_entry\n", path);
	return fn;
}

static pto_buf *gm_copy(const void *src, size_t len)
{
	pto_buf *b;

	if (pto_buf_alloc(cl, len, &b)) {
		fprintf(stderr, "GM alloc %zu: %s\n", len, pto_last_error(cl));
		return NULL;
	}
	if (src)
		memcpy(pto_buf_ptr(b), src, len);
	else
		memset(pto_buf_ptr(b), 0, len);
	return b;
}

/* Whether case @name is asked for: named in @argv, or no name given. */
static bool selected(int argc, char **argv, const char *name)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return argc == 0;
}

/* The CASE line of a run that passes or not, with its status. */
static int report_case(const char *name, bool pass, int ret, const char *msg)
{
	printf("CASE %s: %s status=%d (%s) %s\n", name, pass ? "PASS" : "FAIL",
	       ret, strerror(-ret), msg);
	return pass ? 0 : 1;
}

static int report_run(const char *name, int ret, const char *msg,
		      struct ex_cmp *cmp, unsigned long tasks, double ms)
{
	if (ret) {
		printf("CASE %s: FAIL status=%d (%s) %s\n", name, ret,
		       strerror(-ret), msg);
		return 0;
	}
	char suffix[48];

	snprintf(suffix, sizeof(suffix), " [%.1f ms end to end]", ms);
	return ex_report(name, suffix, cmp, tasks);
}

/* ---- vector_example ------------------------------------------------------------ */

/*
 * With -r, vector is ready once the first case's graph is in its stream:
 * the example's orchestration has submitted every task (GRAPH_END and the
 * wait for ptod's answer follow).
 */
static pto2_orchestration_entry_fn vec_orch;

static int vec_orch_then_ready(PTO2Runtime *rt, uint64_t *args, int argc)
{
	int ret = vec_orch(rt, args, argc);

	if (ready_fd >= 0 && signal_ready())
		return -EIO;
	return ret;
}

static int run_vector(int argc, char **argv)
{
	static const struct kdesc k[] = {
		{ VEC_FUNC_ADD, "aiv_add.so", PTO2_WORKER_VECTOR },
		{ VEC_FUNC_ADD_SCALAR, "aiv_add_scalar.so", PTO2_WORKER_VECTOR },
		{ VEC_FUNC_MUL, "aiv_mul.so", PTO2_WORKER_VECTOR },
	};
	pto2_orchestration_entry_fn orch = load_orch("vector_example");
	size_t n = VEC_N, ci, i;
	int failed = 0;

	if (!orch || load_kernels("vector_example", k, 3))
		return 1;
	vec_orch = orch;
	for (ci = 0; ci < vec_num_cases; ci++) {
		const struct vec_case *vc = &vec_cases[ci];
		float *a, *b;
		double *ref;
		pto_buf *ga, *gb, *gf;
		struct ex_cmp cmp;
		char msg[4096], name[64];
		uint64_t args[VEC_NARGS];
		double t0;
		int ret;

		if (!selected(argc, argv, vc->name))
			continue;
		a = malloc(n * 4);
		b = malloc(n * 4);
		ref = malloc(n * sizeof(double));
		if (!a || !b || !ref) {
			fprintf(stderr, "vector: out of memory\n");
			free(a);
			free(b);
			free(ref);
			return 1;
		}
		vec_gen_inputs(vc, a, b, n);
		vec_golden(a, b, ref, n);
		ga = gm_copy(a, n * 4);
		gb = gm_copy(b, n * 4);
		gf = gm_copy(NULL, n * 4);
		if (!ga || !gb || !gf)
			return 1;
		memset(pto_buf_ptr(gf), 0xff, n * 4);
		args[VEC_ARG_A] = pto_buf_dev_addr(ga);
		args[VEC_ARG_B] = pto_buf_dev_addr(gb);
		args[VEC_ARG_F] = pto_buf_dev_addr(gf);
		args[VEC_ARG_N] = n;
		t0 = now_ms();
		ret = pto_run(cl, vec_orch_then_ready, args, VEC_NARGS, msg,
			      sizeof(msg));
		ex_cmp_init(&cmp, VEC_TOL);
		for (i = 0; !ret && i < n; i++)
			ex_cmp_add(&cmp, ref[i], ((float *)pto_buf_ptr(gf))[i]);
		snprintf(name, sizeof(name), "vector/%s", vc->name);
		failed += !report_run(name, ret, msg, &cmp, VEC_TASKS, now_ms() - t0);
		pto_buf_free(ga);
		pto_buf_free(gb);
		pto_buf_free(gf);
		free(a);
		free(b);
		free(ref);
	}
	return failed ? 1 : 0;
}

/* ---- bgemm ---------------------------------------------------------------------------- */

static int run_bgemm(void)
{
	static const struct kdesc k[] = {
		{ BGEMM_FUNC_GEMM_TILE, "aic_gemm_tile.so", PTO2_WORKER_CUBE },
		{ BGEMM_FUNC_TILE_ADD, "aiv_tile_add.so", PTO2_WORKER_VECTOR },
	};
	pto2_orchestration_entry_fn orch = load_orch("bgemm");
	int failed = 0;
	size_t ci, i;

	if (!orch || load_kernels("bgemm", k, 2))
		return 1;
	for (ci = 0; ci < bgemm_num_cases; ci++) {
		float *a = malloc(BGEMM_A_ELEMS * 4), *b = malloc(BGEMM_B_ELEMS * 4);
		float *cm = malloc(BGEMM_C_ELEMS * 4);
		double *ref = malloc(BGEMM_C_ELEMS * sizeof(double));
		pto_buf *ga, *gb, *gc;
		struct ex_cmp cmp;
		uint64_t args[BGEMM_NARGS];
		char msg[4096], name[64];
		double t0;
		int ret;

		bgemm_gen_inputs(&bgemm_cases[ci], a, b, cm);
		bgemm_golden(a, b, ref);
		ga = gm_copy(a, BGEMM_A_ELEMS * 4);
		gb = gm_copy(b, BGEMM_B_ELEMS * 4);
		gc = gm_copy(cm, BGEMM_C_ELEMS * 4);
		if (!ga || !gb || !gc)
			return 1;
		args[BGEMM_ARG_A] = pto_buf_dev_addr(ga);
		args[BGEMM_ARG_B] = pto_buf_dev_addr(gb);
		args[BGEMM_ARG_C] = pto_buf_dev_addr(gc);
		t0 = now_ms();
		ret = pto_run(cl, orch, args, BGEMM_NARGS, msg, sizeof(msg));
		ex_cmp_init(&cmp, BGEMM_TOL);
		for (i = 0; !ret && i < BGEMM_C_ELEMS; i++)
			ex_cmp_add(&cmp, ref[i], ((float *)pto_buf_ptr(gc))[i]);
		snprintf(name, sizeof(name), "bgemm/%s", bgemm_cases[ci].name);
		failed += !report_run(name, ret, msg, &cmp, BGEMM_TASKS,
				      now_ms() - t0);
		pto_buf_free(ga);
		pto_buf_free(gb);
		pto_buf_free(gc);
		free(a);
		free(b);
		free(cm);
		free(ref);
	}
	return failed ? 1 : 0;
}

/* ---- paged_attention ---------------------------------------------------------------------- */

static int run_pa(int argc, char **argv)
{
	static const struct kdesc k[] = {
		{ 0, "aic_qk_matmul.so", PTO2_WORKER_CUBE },
		{ 1, "aiv_softmax_prepare.so", PTO2_WORKER_VECTOR },
		{ 2, "aic_pv_matmul.so", PTO2_WORKER_CUBE },
		{ 3, "aiv_online_update.so", PTO2_WORKER_VECTOR },
		{ 5, "aiv_hub.so", PTO2_WORKER_VECTOR },
	};
	pto2_orchestration_entry_fn orch = load_orch("paged_attention");
	int failed = 0;
	size_t ci, i;

	if (!orch || load_kernels("paged_attention", k, 5))
		return 1;
	for (ci = 0; ci < pa_num_cases; ci++) {
		const struct pa_case *pc = &pa_cases[ci];
		struct pa_inputs in;
		pto_buf *g[7];
		uint64_t args[PA_NARGS];
		struct ex_cmp cmp;
		char msg[4096], name[96];
		double *ref, t0;
		int ret;

		if (!selected(argc, argv, pc->name))
			continue;
		if (pa_gen_inputs(pc, &in))
			return 1;
		ref = malloc(in.out_elems * sizeof(double));
		pa_golden(&in, ref);
		pa_orch_args(&in, args);
		g[0] = gm_copy(in.query, in.q_elems * 2);
		g[1] = gm_copy(in.key_cache, in.kv_elems * 2);
		g[2] = gm_copy(in.value_cache, in.kv_elems * 2);
		g[3] = gm_copy(in.block_table,
			       (size_t)in.batch * in.max_blocks * sizeof(int32_t));
		g[4] = gm_copy(in.context_lens, (size_t)in.batch * sizeof(int32_t));
		g[5] = gm_copy(NULL, in.out_elems * sizeof(float));
		g[6] = gm_copy(in.config, sizeof(in.config));
		for (i = 0; i < 7; i++) {
			if (!g[i])
				return 1;
			args[PA_ARG_QUERY + i] = pto_buf_dev_addr(g[i]);
		}
		t0 = now_ms();
		ret = pto_run(cl, orch, args, PA_NARGS, msg, sizeof(msg));
		ex_cmp_init(&cmp, PA_TOL);
		for (i = 0; !ret && i < in.out_elems; i++)
			ex_cmp_add(&cmp, ref[i], ((float *)pto_buf_ptr(g[5]))[i]);
		snprintf(name, sizeof(name), "paged_attention/%s", pc->name);
		failed += !report_run(name, ret, msg, &cmp, pa_task_count(&in),
				      now_ms() - t0);
		for (i = 0; i < 7; i++)
			pto_buf_free(g[i]);
		free(ref);
		pa_free_inputs(&in);
	}
	return failed ? 1 : 0;
}

/* ---- failure scenarios -------------------------------------------------------------------- */

static pto_buf *sc_x, *sc_y;
static long sc_ntasks;
static double sc_until;

/* The one kernel the failure scenarios run. */
static const struct kdesc add_scalar_k[] = {
	{ VEC_FUNC_ADD_SCALAR, "aiv_add_scalar.so", PTO2_WORKER_VECTOR },
};

/* A tensor over the first 1024 floats of buffer @b. */
static Tensor buf_tensor(pto_buf *b)
{
	uint64_t shape[1] = { 1024 };

	return make_tensor_external((void *)(uintptr_t)pto_buf_dev_addr(b),
				    shape, 1, PTO_DT_FP32);
}

/* An ADD_SCALAR task from @x (1024 floats) into a new intermediate. */
/* ADD_SCALAR of 1024 floats from @x into @y. */
static void submit_add_scalar_to(PTO2Runtime *rt, Tensor *x, Tensor *y)
{
	PTOParam p[] = {
		make_input_param(x), make_output_param(y),
		make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(1024),
	};

	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
}

static void submit_add_scalar(PTO2Runtime *rt, Tensor *x)
{
	uint64_t shape[1] = { 1024 };
	Tensor t = make_tensor(shape, 1, PTO_DT_FP32);

	submit_add_scalar_to(rt, x, &t);
}

/*
 * Run @orch, which must fail with @want and, if @needle, a message that
 * holds it; print the outcome as case @name.
 */
static int expect_failure_args(const char *name,
			       pto2_orchestration_entry_fn orch,
			       uint64_t *args, int nargs, int want,
			       const char *needle)
{
	char msg[4096];
	int ret = pto_run(cl, orch, args, nargs, msg, sizeof(msg));

	printf("status=%d (%s)\n%s\n", ret, strerror(-ret), msg);
	if (ret == want && (!needle || strstr(msg, needle))) {
		printf("CASE %s: PASS\n", name);
		return 0;
	}
	printf("CASE %s: FAIL\n", name);
	return 1;
}

static int expect_failure(const char *name, pto2_orchestration_entry_fn orch,
			  int want, const char *needle)
{
	return expect_failure_args(name, orch, NULL, 0, want, needle);
}

/* One scope of sc_ntasks independent ADD_SCALAR tasks writing y. */
static int orch_scope(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x);
	long i;

	(void)args;
	(void)argc;
	PTO2_SCOPE(rt) {
		for (i = 0; i < sc_ntasks && !pto2_rt_get_error(rt); i++)
			submit_add_scalar(rt, &x);
	}
	return 0;
}

static int run_deadlock(long n)
{
	char name[64];

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	sc_ntasks = n;
	snprintf(name, sizeof(name), "deadlock/%ld", n);
	return expect_failure(name, orch_scope, -EDEADLK, "Deadlock");
}

#define CRASH_K		9	/* kernel id of crash_kernel.so */
#define CLOSEDEV_K	10	/* kernel id of closedev_kernel.so */

/* one task of kernel args[0] (crash, closedev) on sc_x, sc_y */
static int orch_crash(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x), y = buf_tensor(sc_y);
	PTOParam p[] = { make_input_param(&x), make_output_param(&y) };

	(void)argc;
	pto2_rt_submit_task(rt, (int32_t)args[0], PTO2_WORKER_VECTOR, p, 2);
	return 0;
}

/* Register kernel @so of this directory as AIV kernel @id; 0 or -1. */
static int load_e2e_kernel(int32_t id, const char *so)
{
	char path[PATH_MAX + 192];

	snprintf(path, sizeof(path), "%s/%s", e2edir, so);
	if (pto_kernel_load(cl, id, PTO2_WORKER_VECTOR, path)) {
		fprintf(stderr, "kernel %s: %s\n", path, pto_last_error(cl));
		return -1;
	}
	return 0;
}

/* One task of kernel @k (@so): the run must fail with -EIO and @needle. */
static int run_fatal_kernel(const char *name, int32_t k, const char *so,
			    const char *needle)
{
	uint64_t arg = (uint64_t)k;

	if (load_e2e_kernel(k, so))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	sc_y = gm_copy(NULL, 4096);
	return expect_failure_args(name, orch_crash, &arg, 1, -EIO, needle);
}

static int run_crash(void)
{
	return run_fatal_kernel("crash", CRASH_K, "crash_kernel.so",
				"killed by signal");
}

/*
 * crash-loop N: N runs whose kernel crashes the sandbox (each -EIO), then
 * one more, which ptod refuses at once with -EOWNERDEAD if the sandbox
 * was not started again after the last crash (PTOD_SBX_CRASHES in its
 * window).
 */
static int run_crash_loop(long n)
{
	uint64_t arg = CRASH_K;
	char msg[4096];
	int ret, bad = 0;
	long i;
	bool ok;

	if (load_e2e_kernel(CRASH_K, "crash_kernel.so"))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	sc_y = gm_copy(NULL, 4096);
	for (i = 0; i < n; i++) {
		ret = pto_run(cl, orch_crash, &arg, 1, msg, sizeof(msg));
		printf("crash %ld: status=%d %s\n", i + 1, ret, msg);
		bad += ret != -EIO;
	}
	ret = pto_run(cl, orch_crash, &arg, 1, msg, sizeof(msg));
	printf("after: status=%d %s\n", ret, msg);
	ok = !bad && ret == -EOWNERDEAD && strstr(msg, "not started again");
	printf("CASE crash-loop: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

static int run_closedev(void)
{
	return run_fatal_kernel("closedev", CLOSEDEV_K, "closedev_kernel.so",
				"closed the device while it ran");
}

/* ---- the hostile kernel: what a client's kernel can reach ----------------------------- */

#define HOSTILE_K	15	/* kernel id of hostile_kernel.so */

static pto_buf *ho_buf;
static uint64_t ho_peek;	/* device address to read, 0: none */
static uint64_t ho_mode;	/* args[3]: 0, PTO_HOSTILE_FLOOD or _MEMFD */

static int orch_hostile(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { sizeof(struct pto_hostile_rec) / 4 };
	uint64_t dev = pto_buf_dev_addr(ho_buf);
	Tensor t = make_tensor_external((void *)(uintptr_t)dev, shape, 1,
					PTO_DT_INT32);
	PTOParam p[] = { make_output_param(&t), make_scalar_param(dev),
			 make_scalar_param(ho_peek),
			 make_scalar_param(ho_mode) };

	(void)args;
	(void)argc;
	pto2_rt_submit_task(rt, HOSTILE_K, PTO2_WORKER_VECTOR, p, 4);
	return 0;
}

/*
 * hostile [ADDR|flood|memfd]: run the hostile kernel once (reading 8
 * bytes at device address ADDR, hex, if given; with "flood", only
 * flooding its standard error; with "memfd", only writing into a memfd)
 * and print its record and the run's status. The test judges both.
 */
static int run_hostile(int argc, char **argv)
{
	const struct pto_hostile_rec *r;
	char msg[4096];
	int ret;

	ho_mode = argc < 1 ? 0 : !strcmp(argv[0], "flood") ?
		  PTO_HOSTILE_FLOOD : !strcmp(argv[0], "memfd") ?
		  PTO_HOSTILE_MEMFD : 0;
	ho_peek = argc > 0 && !ho_mode ? strtoull(argv[0], NULL, 16) : 0;
	if (load_e2e_kernel(HOSTILE_K, "hostile_kernel.so"))
		return 1;
	ho_buf = gm_copy(NULL, 4096);
	if (!ho_buf)
		return 1;
	ret = pto_run(cl, orch_hostile, NULL, 0, msg, sizeof(msg));
	r = pto_buf_ptr(ho_buf);
	printf("status=%d (%s)\n%s\n", ret, strerror(-ret), msg);
	printf("hostile: done=%d pid=%d uid=%d euid=%d open=%d creat=%d socket=%d ptrace=%d peek=0x%llx\n",
	       __atomic_load_n(&r->done, __ATOMIC_ACQUIRE), r->pid, r->uid,
	       r->euid, r->open_err, r->creat_err, r->socket_err,
	       r->ptrace_err, (unsigned long long)r->peek);
	printf("hostile2: fork=%d forkpid=%d clone=%d clonepid=%d cparent=%d cparentpid=%d thread=%d ran=%d procuid=%d stdin=%d stdout=%d env=%d oom=%d cwdroot=%d\n",
	       r->fork_err, r->fork_pid, r->clone_err, r->clone_pid,
	       r->cparent_err, r->cparent_pid,
	       r->thread_err, r->thread_ran, r->proc_uid, r->stdin_null,
	       r->stdout_null, r->env_len, r->oom_adj, r->cwd_root);
	printf("hostile3: datasoft=%d datahard=%d overalloc=%d smallalloc=%d raise=%d\n",
	       r->data_soft_mib, r->data_hard_mib, r->over_alloc_err,
	       r->small_alloc_err, r->raise_err);
	printf("hostile4: nprocsoft=%d nprochard=%d threads=%d threadserr=%d\n",
	       r->nproc_soft, r->nproc_hard, r->threads, r->threads_err);
	printf("hostile5: flood=%d\n", r->flood_bytes);
	printf("hostile6: session=%d ttynr=%d shared=%d wopen=%d\n",
	       r->session, r->tty_nr, r->shared_err, r->wopen_err);
	printf("hostile7: memfdmib=%d memfderr=%d\n",
	       __atomic_load_n(&r->memfd_mib, __ATOMIC_ACQUIRE), r->memfd_err);
	return 0;
}

/* One ADD_SCALAR task over sc_x. */
static int orch_add_scalar(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x);

	(void)args;
	(void)argc;
	submit_add_scalar(rt, &x);
	return 0;
}

/* ---- libpto's API misused: clear errors, no hang, no crash ------------------------- */

/*
 * A view of 4 of x's 1024 floats from 2 more than 2^64 - 1: its offset
 * wraps to 1, inside the buffer.
 */
static int orch_view_out(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x);
	uint64_t shape[1] = { 4 }, one[1] = { 2 }, wrap[1] = { UINT64_MAX };
	Tensor w = pto_tensor_view(&x, shape, one);
	Tensor v = pto_tensor_view(&w, shape, wrap);
	Tensor y = buf_tensor(sc_y);
	PTOParam p[] = { make_input_param(&v), make_output_param(&y) };

	(void)args;
	(void)argc;
	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 2);
	return 0;
}

/* block_incore with -2 params */
static int orch_block_neg(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)args;
	(void)argc;
	pto2_rt_submit_block_incore(rt, VEC_FUNC_ADD_SCALAR,
				    PTO2_WORKER_VECTOR, NULL, -2, 2);
	return 0;
}

/* A free of cluster 0, which pto2_rt_allocate_cluster never returns. */
static int orch_free_cluster0(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)args;
	(void)argc;
	PTO2_SCOPE(rt) {
		pto2_rt_free_cluster(rt, 0);
	}
	return 0;
}

/* A task on a cluster whose scope ended (ptod's id 0 for the client's 1). */
static int orch_cluster_after_scope(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x), y = buf_tensor(sc_y);
	PTOParam p[] = {
		make_input_param(&x), make_output_param(&y),
		make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(1024),
	};
	int32_t cid = -1;

	(void)args;
	(void)argc;
	PTO2_SCOPE(rt) {
		PTO2_SCOPE(rt) {
			cid = pto2_rt_allocate_cluster(rt);
		}
		pto2_rt_submit_task_clustered(rt, VEC_FUNC_ADD_SCALAR,
					      PTO2_WORKER_VECTOR, p, 4, cid);
	}
	return 0;
}

/* The orchestration function of a client of its own disconnects it. */
static int orch_disconnect(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)rt;
	(void)argc;
	pto_disconnect((pto_client *)(uintptr_t)args[0]);
	return 0;
}

/*
 * The orchestration function ends its graph itself (its client in
 * args[0]), after one task: pto_run() waits for that graph.
 */
static int orch_end_itself(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)argc;
	orch_add_scalar(rt, NULL, 0);
	return pto_graph_end((pto_client *)(uintptr_t)args[0]);
}

/*
 * What became of @child, just returned by fork(): its exit status, 128 +
 * the signal that killed it, or -errno if fork() or waitpid() failed.
 */
static int child_exit(pid_t child)
{
	int st;

	if (child < 0 || waitpid(child, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The orchestration function forks. The child's submit, scope and error
 * check act on the parent's client: each is refused with -ECHILD, and
 * nothing of the child reaches the parent's stream or socket. The child
 * exits 0 if so; args[0] gets child_exit().
 */
static int orch_fork_submit(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x), y = buf_tensor(sc_y);
	pid_t child;
	int err;

	(void)argc;
	fflush(stdout);
	child = fork();
	if (!child) {
		PTO2_SCOPE(rt) {
			submit_add_scalar_to(rt, &x, &y);
		}
		err = pto2_rt_get_error(rt);
		printf("misuse fork-in-run: the child's submit: %d %s\n", err,
		       pto2_rt_get_error_msg(rt));
		fflush(stdout);
		_exit(err == -ECHILD &&
		      strstr(pto2_rt_get_error_msg(rt), "forked child") ? 0 : 1);
	}
	args[0] = (uint64_t)(int64_t)child_exit(child);
	return 0;
}

/*
 * The orchestration function forks; the child disconnects the client
 * there (its copy: the disconnect is deferred to the end of its run) and
 * returns, as the parent does. args[0] gets the child's pid in the
 * parent (-errno if fork() failed), args[1] 1 in the child.
 */
static int orch_fork_disconnect(PTO2Runtime *rt, uint64_t *args, int argc)
{
	pid_t child;

	(void)rt;
	(void)argc;
	fflush(stdout);
	child = fork();
	if (!child) {
		pto_disconnect(cl);
		args[1] = 1;
		return 0;
	}
	args[0] = (uint64_t)(int64_t)(child < 0 ? -errno : child);
	return 0;
}

/* How many descriptors this process has open, or -errno. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -errno;
	while (readdir(d))
		n++;
	closedir(d);
	/* ".", ".." and the directory's own */
	return n - 3;
}

/*
 * A thread other than the one in the orchestration function forks. Its
 * child has only that thread: the run it would return through is not
 * there, so its pto_disconnect() must act at once, closing the child's
 * copies of the client's descriptors (it used to be deferred forever).
 * The child exits 0 if it has fewer descriptors after the disconnect;
 * *@arg gets child_exit(), or -errno.
 */
static void *fork_disconnect_thread(void *arg)
{
	int64_t *res = arg;
	pid_t child;

	fflush(stdout);
	child = fork();
	if (!child) {
		int before = open_fds(), after;

		pto_disconnect(cl);
		after = open_fds();
		printf("misuse thread-fork-disconnect-in-run: the child's descriptors %d before its disconnect, %d after\n",
		       before, after);
		fflush(stdout);
		_exit(before > 0 && after >= 0 && after < before ? 0 : 1);
	}
	*res = child < 0 ? -errno : child_exit(child);
	return NULL;
}

/* fork_disconnect_thread() in a thread of its own; args[0] its result. */
static int orch_thread_fork_disconnect(PTO2Runtime *rt, uint64_t *args,
				       int argc)
{
	int64_t res = -EINPROGRESS;
	pthread_t t;
	int err;

	(void)rt;
	(void)argc;
	err = pthread_create(&t, NULL, fork_disconnect_thread, &res);
	if (err)
		res = -err;
	else
		pthread_join(t, NULL);
	args[0] = (uint64_t)res;
	return 0;
}

/* Case @name passes if @got is @want; prints both and the last error. */
static int misuse_case(const char *name, int got, int want)
{
	printf("misuse %s: %d (want %d): %s\n", name, got, want,
	       got ? pto_last_error(cl) : "");
	printf("CASE misuse/%s: %s\n", name, got == want ? "PASS" : "FAIL");
	return got != want;
}

/*
 * misuse: calls of libpto's API that a program gets wrong each get a
 * clear error, and none hangs or crashes: a wait for a graph never sent,
 * for one already waited for, for the graph being built; pto_run without
 * a function (its msg says so); a view whose offset wraps; block_incore
 * with a negative param count; more dimensions than a tensor has; a kernel
 * "file" that is a FIFO; pto_disconnect() from the orchestration
 * function of a client's run; the client used in a forked child, and in
 * a child forked by the orchestration function, which also disconnects
 * it there, and disconnected in a child forked by another thread during
 * a run. 0 if every case passed.
 */
static int run_misuse(void)
{
	char fifo[] = "/tmp/pto-e2e-fifo-XXXXXX", msg[4096];
	char path[PATH_MAX + 192];
	uint64_t shape[7] = { 1, 1, 1, 1, 1, 1, 1 }, tag, arg;
	int failed = 0, ret;
	uint32_t flags;
	pid_t child;
	pto_client *c2;
	Tensor t;

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	sc_y = gm_copy(NULL, 4096);
	if (!sc_x || !sc_y)
		return 1;
	failed += misuse_case("wait-unknown",
			      pto_graph_wait(cl, 424242, NULL, 0), -ENOENT);
	ret = pto_graph_begin(cl, &tag);
	failed += misuse_case("begin", ret, 0);
	if (!ret) {
		failed += misuse_case("wait-building",
				      pto_graph_wait(cl, tag, NULL, 0),
				      -EINVAL);
		failed += misuse_case("end", pto_graph_end(cl), 0);
		failed += misuse_case("wait", pto_graph_wait(cl, tag, msg,
							     sizeof(msg)), 0);
		failed += misuse_case("wait-again",
				      pto_graph_wait(cl, tag, NULL, 0),
				      -ENOENT);
	}
	/* msg says why, never what the caller's buffer held */
	memset(msg, 'X', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	failed += misuse_case("run-null", pto_run(cl, NULL, NULL, 0, msg,
						  sizeof(msg)), -EINVAL);
	printf("misuse run-null-msg: '%.80s'\n", msg);
	failed += misuse_case("run-null-msg",
			      strcmp(msg, "no orchestration function") ?
			      -EBADMSG : 0, 0);
	failed += misuse_case("view-wraps",
			      pto_run(cl, orch_view_out, NULL, 0, msg,
				      sizeof(msg)), -EINVAL);
	failed += misuse_case("block-negative",
			      pto_run(cl, orch_block_neg, NULL, 0, msg,
				      sizeof(msg)), -EINVAL);
	ret = pto_run(cl, orch_cluster_after_scope, NULL, 0, msg, sizeof(msg));
	failed += misuse_case("cluster-after-scope", ret == -EINVAL &&
			      strstr(msg, "cluster 1 is not allocated") ?
			      0 : ret ? ret : 1, 0);
	ret = pto_run(cl, orch_free_cluster0, NULL, 0, msg, sizeof(msg));
	failed += misuse_case("free-cluster-0", ret == -EINVAL &&
			      strstr(msg, "cluster 0 is not allocated") ?
			      0 : ret ? ret : 1, 0);
	t = make_tensor(shape, 7, PTO_DT_FP32);
	failed += misuse_case("ndims-7", (int)t.ndims + (int)pto_tensor_numel(&t),
			      0);
	ret = mkstemp(fifo);
	if (ret >= 0) {
		close(ret);
		unlink(fifo);
		ret = mkfifo(fifo, 0600);
	}
	failed += misuse_case("fifo", ret ? ret :
			      pto_kernel_load(cl, 30, PTO2_WORKER_VECTOR, fifo),
			      -EINVAL);
	unlink(fifo);
	/* a shared object without pto_kernel_entry; an executable */
	snprintf(path, sizeof(path), "%s/vector_example/orch.so", exdir);
	ret = pto_kernel_load(cl, 30, PTO2_WORKER_VECTOR, path);
	failed += misuse_case("kernel-no-entry", ret == -ENOEXEC &&
			      strstr(pto_last_error(cl),
				     "exports no function pto_kernel_entry") ?
			      0 : ret ? ret : 1, 0);
	ret = pto_kernel_load(cl, 30, PTO2_WORKER_VECTOR, "/bin/true");
	failed += misuse_case("kernel-pie", ret == -ENOEXEC &&
			      strstr(pto_last_error(cl),
				     "a position-independent executable") ?
			      0 : ret ? ret : 1, 0);
	/* a graph its orchestration function ended: run, and waited for */
	arg = (uint64_t)(uintptr_t)cl;
	for (flags = 0; flags <= PTO_GRAPH_STATIC; flags += PTO_GRAPH_STATIC) {
		ret = pto_run_ex(cl, orch_end_itself, &arg, 1, flags, msg,
				 sizeof(msg));
		if (ret)
			printf("misuse end-in-run: flags %u: %d %s\n", flags,
			       ret, msg);
		failed += misuse_case(flags ? "end-in-run-static" :
				      "end-in-run", ret, 0);
	}
	ret = pto_connect(NULL, &c2);
	if (ret) {
		printf("misuse: a second client: %s\n", pto_last_error(NULL));
		failed++;
	} else {
		arg = (uint64_t)(uintptr_t)c2;
		/* c2 is gone once it returns */
		failed += misuse_case("disconnect-in-run",
				      pto_run(c2, orch_disconnect, &arg, 1,
					      msg, sizeof(msg)), -ESHUTDOWN);
	}
	ret = pto_connect(NULL, &c2);
	if (ret) {
		printf("misuse: a third client: %s\n", pto_last_error(NULL));
		failed++;
	} else {
		pto_buf *b = NULL;

		ret = pto_buf_alloc(c2, 4096, &b);
		pto_disconnect(c2);
		/* unmapped with its client, and freed after it */
		failed += misuse_case("free-after-disconnect",
				      ret ? ret : pto_buf_ptr(b) != NULL, 0);
		pto_buf_free(b);
	}
	/* a forked child: refused, and its disconnect sends nothing */
	fflush(stdout);
	child = fork();
	if (!child) {
		ret = pto_run(cl, orch_add_scalar, NULL, 0, msg, sizeof(msg));
		printf("misuse fork: the child's run: %d %s\n", ret,
		       pto_last_error(cl));
		pto_disconnect(cl);
		fflush(stdout);
		_exit(ret == -ECHILD ? 0 : 1);
	}
	failed += misuse_case("fork", child_exit(child), 0);
	/*
	 * a child forked in the orchestration function: refused, and the
	 * parent's graph gets no task of it (y keeps its 0s)
	 */
	memset(pto_buf_ptr(sc_y), 0, 4096);
	arg = 255;
	ret = pto_run(cl, orch_fork_submit, &arg, 1, msg, sizeof(msg));
	if (!ret) {
		struct pto_graph_stats gs = { 0 };

		ret = pto_graph_stats(cl, &gs) ? -ENOENT : (int)arg;
		printf("misuse fork-in-run: child exit %d, the parent's graph ran %llu task(s), y[0] %g\n",
		       (int)arg, (unsigned long long)gs.tasks,
		       ((float *)pto_buf_ptr(sc_y))[0]);
		if (!ret && (gs.tasks || ((float *)pto_buf_ptr(sc_y))[0]))
			ret = -EBADMSG;
	}
	failed += misuse_case("fork-in-run", ret, 0);
	/*
	 * a child forked in the orchestration function disconnects there:
	 * its run returns -ESHUTDOWN (it used to free the client under
	 * the run), the parent's run is not disturbed
	 */
	{
		uint64_t fa[2] = { 0, 0 };
		int64_t child_of;
		int cret;

		ret = pto_run(cl, orch_fork_disconnect, fa, 2, msg,
			      sizeof(msg));
		if (fa[1]) {
			printf("misuse fork-disconnect-in-run: the child's run: %d %s\n",
			       ret, msg);
			fflush(stdout);
			_exit(ret == -ESHUTDOWN ? 0 : 1);
		}
		/* the child is reaped whatever the parent's run said */
		child_of = (int64_t)fa[0];
		cret = child_of > 0 ? child_exit((pid_t)child_of) :
		       child_of ? (int)child_of : -ECHILD;
		if (!ret)
			ret = cret;
		failed += misuse_case("fork-disconnect-in-run", ret, 0);
	}
	arg = 0;
	ret = pto_run(cl, orch_thread_fork_disconnect, &arg, 1, msg,
		      sizeof(msg));
	failed += misuse_case("thread-fork-disconnect-in-run",
			      ret ? ret : (int)(int64_t)arg, 0);
	/* the client still works */
	failed += misuse_case("after", pto_run(cl, orch_add_scalar, NULL, 0,
					       msg, sizeof(msg)), 0);
	return failed ? 1 : 0;
}

/*
 * crash-next: the crash kernel, then a good graph on the same
 * connection: the first run fails, the second passes.
 */
static int run_crash_next(void)
{
	int ret = run_crash();

	if (!ret && load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	if (!ret) {
		char msg[4096];

		ret = pto_run(cl, orch_add_scalar, NULL, 0, msg, sizeof(msg));
		printf("next: status=%d %s\n", ret, msg);
		printf("CASE crash/next: %s\n", ret ? "FAIL" : "PASS");
	}
	return ret ? 1 : 0;
}

/* What churn_starts() did, and when it is to stop. */
struct churner {
	atomic_bool stop;
	atomic_long connected, refused, other;
};

/*
 * Connect and hang up until told to stop: every hello of a user's but
 * root's costs one of its sandbox starts while there is one, else ptod
 * refuses it with -EAGAIN (counted).
 */
static void *churn_starts(void *arg)
{
	struct churner *ch = arg;
	pto_client *c;
	int ret;

	while (!atomic_load(&ch->stop)) {
		ret = pto_connect(NULL, &c);
		if (!ret) {
			atomic_fetch_add(&ch->connected, 1);
			pto_disconnect(c);
		} else if (ret == -EAGAIN) {
			atomic_fetch_add(&ch->refused, 1);
		} else {
			atomic_fetch_add(&ch->other, 1);
			usleep(10000);
		}
	}
	return NULL;
}

/*
 * crash-budget N: a crashed sandbox's restart is paid from its user's
 * budget of sandbox starts. A thread connects and hangs up without end,
 * so the user's starts stay used up; up to N times, once the thread was
 * refused, this client's kernel crashes its sandbox and a good graph
 * follows: it must fail at once with -EOWNERDEAD, saying the user started
 * too many sandboxes. A try in which the restart got a start that came
 * free before the thread took it (the good graph passes) is tried again;
 * N below PTOD_SBX_CRASHES, so that the crash count never decides.
 */
static int run_crash_budget(long n)
{
	struct churner ch = { .stop = false };
	uint64_t arg = CRASH_K;
	char msg[4096] = "";
	bool ok = false;
	pthread_t t;
	long tries;
	int ret, w;

	if (load_e2e_kernel(CRASH_K, "crash_kernel.so") ||
	    load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	sc_y = gm_copy(NULL, 4096);
	if (!sc_x || !sc_y || pthread_create(&t, NULL, churn_starts, &ch))
		return 1;
	for (tries = 0; tries < n && !ok; tries++) {
		long refused = atomic_load(&ch.refused);

		for (w = 0; w < 2000 && atomic_load(&ch.refused) == refused; w++)
			usleep(10000);
		if (atomic_load(&ch.refused) == refused) {
			printf("crash-budget: the thread was never refused (%ld connected, %ld other errors)\n",
			       atomic_load(&ch.connected), atomic_load(&ch.other));
			break;
		}
		ret = pto_run(cl, orch_crash, &arg, 1, msg, sizeof(msg));
		printf("crash %ld: status=%d %s\n", tries + 1, ret, msg);
		if (ret != -EIO)
			break;
		ret = pto_run(cl, orch_add_scalar, NULL, 0, msg, sizeof(msg));
		printf("next: status=%d %s\n", ret, msg);
		ok = ret == -EOWNERDEAD && strstr(msg, "started more than");
		if (ret && !ok)
			break;
	}
	atomic_store(&ch.stop, true);
	pthread_join(t, NULL);
	printf("CASE crash-budget: %s after %ld tries; the thread connected %ld times, was refused %ld, other errors %ld\n",
	       ok ? "PASS" : "FAIL", tries, atomic_load(&ch.connected),
	       atomic_load(&ch.refused), atomic_load(&ch.other));
	return ok ? 0 : 1;
}

/*
 * rerun: one ADD_SCALAR run, then the ready signal; after SIGUSR1 (at
 * most 60 s later) the same run again on the same connection. Each run
 * is a case: rerun/first, rerun/second.
 */
static int run_rerun(void)
{
	const struct timespec limit = { 60, 0 };
	char msg[4096];
	sigset_t set;
	int ret, i;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) ||
	    load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	if (!sc_x)
		return 1;
	for (i = 0; i < 2; i++) {
		if (i && (signal_ready() || sigtimedwait(&set, NULL, &limit) < 0))
			return 1;
		ret = pto_run(cl, orch_add_scalar, NULL, 0, msg, sizeof(msg));
		printf("status=%d %s\n", ret, msg);
		printf("CASE rerun/%s: %s\n", i ? "second" : "first",
		       ret ? "FAIL" : "PASS");
	}
	return ret ? 1 : 0;
}

/*
 * streampad: a fresh connection's stream starts at 0. The graph's
 * records (GRAPH_BEGIN, then KCOST records) end the smallest gap the
 * records' lengths allow before the end of the ring; the ADD_SCALAR task
 * after them does not fit there, so libpto pads the end and writes it at
 * the start. Two such graphs (the second starts elsewhere in the ring):
 * both must pass.
 */
static int orch_streampad(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x);
	uint64_t i;

	if (argc != 1)
		return -EINVAL;
	for (i = 0; i < args[0]; i++)
		pto2_rt_set_kernel_cost(rt, VEC_FUNC_ADD_SCALAR, 1000);
	submit_add_scalar(rt, &x);
	return 0;
}

static int run_streampad(void)
{
	const uint32_t size = PTO_STREAM_DEFAULT_SIZE;
	const uint32_t begin = sizeof(struct pto_rec_graph);
	const uint32_t kcost = sizeof(struct pto_rec_kcost);
	uint32_t gap = (size - begin) % kcost;
	uint64_t n;
	char msg[4096];
	int ret = 0, i;

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	if (!sc_x)
		return 1;
	if (!gap)
		gap = kcost;
	n = (size - begin - gap) / kcost;
	printf("streampad: %" PRIu64 " KCOST records leave %u bytes before the end of the ring\n",
	       n, gap);
	for (i = 0; i < 2 && !ret; i++) {
		ret = pto_run(cl, orch_streampad, &n, 1, msg, sizeof(msg));
		printf("run %d: status=%d %s\n", i, ret, msg);
	}
	printf("CASE streampad: %s\n", ret ? "FAIL" : "PASS");
	return ret ? 1 : 0;
}

/*
 * reload N: a client that keeps loading new kernels. Each upload is a new
 * blob (libpto puts it in a buffer of its own), which the executor loads
 * when the task runs; its cache must not keep them all.
 */
static int run_reload(long n)
{
	char path[PATH_MAX + 192], msg[4096] = "";
	const struct kdesc *k = &add_scalar_k[0];
	int ret = 0;
	long i;

	sc_x = gm_copy(NULL, 4096);
	if (!sc_x)
		return 1;
	snprintf(path, sizeof(path), "%s/vector_example/%s", exdir, k->so);
	for (i = 0; i < n && !ret; i++) {
		ret = pto_kernel_load(cl, k->id, k->type, path);
		if (ret)
			snprintf(msg, sizeof(msg), "%s", pto_last_error(cl));
		else
			ret = pto_run(cl, orch_add_scalar, NULL, 0, msg,
				      sizeof(msg));
	}
	if (ret)
		printf("upload %ld: status=%d (%s)\n%s\n", i, ret, strerror(-ret),
		       msg);
	printf("CASE reload/%ld: %s\n", n, ret ? "FAIL" : "PASS");
	return ret ? 1 : 0;
}

/* ---- a cooperative launch whose kernels wait for each other ----------------------- */

#define RENDEZVOUS_K	16	/* kernel id of rendezvous_kernel.so */

static long rv_blocks;

static int orch_rendezvous(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 16 };
	Tensor t = make_tensor_external((void *)(uintptr_t)pto_buf_dev_addr(sc_x),
					shape, 1, PTO_DT_INT32);
	PTOParam p[] = { make_inout_param(&t),
			 make_scalar_param((uint64_t)rv_blocks) };
	PTO2TaskAttr a = { .block_num = (uint16_t)rv_blocks,
			   .flags = PTO2_ATTR_COOP };

	(void)args;
	(void)argc;
	pto2_rt_submit_task_attr(rt, RENDEZVOUS_K, PTO2_WORKER_VECTOR, p, 2,
				 &a);
	return 0;
}

/*
 * rendezvous [BLOCKS]: one cooperative launch of BLOCKS (8) blocks whose
 * kernels each wait until all have started: it passes only if all run at
 * once.
 */
static int run_rendezvous(int argc, char **argv)
{
	char msg[4096];
	int ret;

	rv_blocks = argc > 0 ? atol(argv[0]) : 8;
	if (rv_blocks < 1 || rv_blocks > 48) {
		fprintf(stderr, "rendezvous: 1 to 48 blocks\n");
		return 1;
	}
	if (load_e2e_kernel(RENDEZVOUS_K, "rendezvous_kernel.so"))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	if (!sc_x)
		return 1;
	ret = pto_run(cl, orch_rendezvous, NULL, 0, msg, sizeof(msg));
	printf("status=%d (%s)\n%s\n", ret, strerror(-ret), msg);
	printf("CASE rendezvous/%ld: %s\n", rv_blocks, ret ? "FAIL" : "PASS");
	return ret ? 1 : 0;
}

#define PRE_K	17	/* kernel id of pre_kernel.so */

#define PRE_TASKS_MAX	64

/*
 * args[2] independent tasks of pre_kernel.so on AIVs: args[0] report or
 * not, args[1] ms.
 */
static int orch_pre(PTO2Runtime *rt, uint64_t *args, int argc)
{
	PTOParam p[] = { make_scalar_param(args[0]),
			 make_scalar_param(args[1]) };
	uint64_t i;

	(void)argc;
	for (i = 0; i < args[2]; i++)
		pto2_rt_submit_task(rt, PRE_K, PTO2_WORKER_VECTOR, p, 2);
	return 0;
}

static void print_stats(void);

/*
 * pre REPORT MS [TASKS]: TASKS (1) independent tasks whose kernels send
 * their pre-complete report at their start if REPORT is 1, then run MS ms
 * more; it must pass. The run's statistics follow (STATS).
 */
static int run_pre(int argc, char **argv)
{
	uint64_t args[3];
	char msg[4096];
	int ret;

	if (argc < 2) {
		fprintf(stderr, "pre: REPORT (0 or 1), MS and [TASKS]\n");
		return 1;
	}
	args[0] = strtoull(argv[0], NULL, 10);
	args[1] = strtoull(argv[1], NULL, 10);
	args[2] = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	if (args[2] < 1 || args[2] > PRE_TASKS_MAX) {
		fprintf(stderr, "pre: 1 to %d tasks\n", PRE_TASKS_MAX);
		return 1;
	}
	if (load_e2e_kernel(PRE_K, "pre_kernel.so"))
		return 1;
	ret = pto_run(cl, orch_pre, args, 3, msg, sizeof(msg));
	print_stats();
	return report_case("pre", ret == 0, ret, msg);
}

/* ---- probe tasks: where and when a run's tasks ran ----------------------------------- */

#define PROBE_AIV	12	/* kernel ids of probe_kernel.so */
#define PROBE_AIC	13
#define PROBE_SLOTS	131072	/* records of a probe run: 4 MiB of GM */
#define PROBE_READY_MS	30000
#define PROBE_MAX_CORES	256	/* PTO_MAX_CORES */

static pto_buf *pr_buf;
static long pr_limit;		/* probe-n: tasks to submit; 0: until sc_until */
static volatile sig_atomic_t pr_stop;	/* probe: SIGTERM/SIGINT seen */
static long pr_submitted;
static int pr_ready;		/* signal readiness once the first task ran */

static int load_probe(void)
{
	char path[PATH_MAX + 192];

	snprintf(path, sizeof(path), "%s/probe_kernel.so", e2edir);
	if (pto_kernel_load(cl, PROBE_AIV, PTO2_WORKER_VECTOR, path) ||
	    pto_kernel_load(cl, PROBE_AIC, PTO2_WORKER_CUBE, path)) {
		fprintf(stderr, "kernel %s: %s\n", path, pto_last_error(cl));
		return -1;
	}
	return 0;
}

static struct pto_probe_rec *probe_rec(long slot)
{
	return (struct pto_probe_rec *)pto_buf_ptr(pr_buf) + slot;
}

/* A probe tensor over slot @slot of pr_buf. */
static Tensor probe_tensor(long slot)
{
	uint64_t shape[1] = { sizeof(struct pto_probe_rec) / 4 };
	uint64_t addr = pto_buf_dev_addr(pr_buf) +
			(uint64_t)slot * sizeof(struct pto_probe_rec);

	return make_tensor_external((void *)(uintptr_t)addr, shape, 1,
				    PTO_DT_INT32);
}

/*
 * A streaming probe run's tasks hold their cores this long (sleeping), so
 * that, however fast the host turns a task around, the run keeps many
 * cores busy at once rather than a few in turn.
 */
#define PROBE_STREAM_HOLD_NS	1000000
static uint64_t probe_hold_ns;

/* Submit probe task @seq writing slot @slot of pr_buf, on an AIC or AIV. */
static void probe_submit(PTO2Runtime *rt, long slot, uint32_t seq, int aic)
{
	Tensor t = probe_tensor(slot);
	PTOParam p[] = { make_output_param(&t), make_scalar_param(seq),
			 make_scalar_param(probe_hold_ns) };

	pto2_rt_submit_task(rt, aic ? PROBE_AIC : PROBE_AIV,
			    aic ? PTO2_WORKER_CUBE : PTO2_WORKER_VECTOR, p, 3);
}

/*
 * Wait until the probe task of slot @slot (sequence number @seq) has run
 * on a core: then this client's run holds cores and executes. libpto has
 * no event for one task of a graph in progress (pto_run() returns when the
 * whole graph is done), so this watches the task's record in our own GM,
 * with a bound.
 */
static int probe_wait(PTO2Runtime *rt, long slot, uint32_t seq)
{
	double until = now_ms() + PROBE_READY_MS;

	while (__atomic_load_n(&probe_rec(slot)->seq, __ATOMIC_ACQUIRE) != seq) {
		if (pto2_rt_get_error(rt))
			return pto2_rt_get_error(rt);
		if (now_ms() > until) {
			fprintf(stderr, "the first task did not run within %d s\n",
				PROBE_READY_MS / 1000);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	return 0;
}

/* Probe tasks, one AIC for two AIV, each in its own slot of pr_buf. */
static int orch_probe(PTO2Runtime *rt, uint64_t *args, int argc)
{
	long i;
	int ret;

	(void)args;
	(void)argc;
	for (i = 0; i < PROBE_SLOTS && !pto2_rt_get_error(rt); i++) {
		if (pr_limit ? i >= pr_limit :
		    i > 0 && (pr_stop || now_ms() >= sc_until))
			break;
		/* a scope per task, so that a long stream retires its tasks */
		PTO2_SCOPE(rt) {
			probe_submit(rt, i, (uint32_t)i + 1, i % 3 == 0);
		}
		pr_submitted = i + 1;
		if (i == 0 && pr_ready) {
			ret = probe_wait(rt, 0, 1);
			if (!ret)
				ret = signal_ready();
			if (ret)
				return ret;
		}
		if ((i + 1) % 16 == 0)
			usleep(1000);
	}
	if (i == PROBE_SLOTS)
		printf("probe: all %d slots used, the stream ends early\n",
		       PROBE_SLOTS);
	return 0;
}

static void probe_on_signal(int sig)
{
	(void)sig;
	pr_stop = 1;
}

struct probe_core {
	uint32_t n, block;
	int64_t last_start, last_end;
};

/* probe SECONDS (@limit 0) or probe-n @limit: run, then report. */
static int run_probe(double seconds, long limit)
{
	static struct probe_core pc[PROBE_MAX_CORES];
	int64_t t0, t1, first = INT64_MAX, last = INT64_MIN;
	uint64_t blocks = 0;
	long i, recorded = 0, bad = 0;
	uint32_t c, blk, ncores = 0;
	char msg[4096];
	int ret;

	if (!limit) {
		struct sigaction sa = { .sa_handler = probe_on_signal };

		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL)) {
			perror("sigaction");
			return 1;
		}
	}
	if (load_probe())
		return 1;
	pr_buf = gm_copy(NULL, PROBE_SLOTS * sizeof(struct pto_probe_rec));
	if (!pr_buf)
		return 1;
	pr_limit = limit;
	pr_ready = limit == 0;
	probe_hold_ns = limit ? 0 : PROBE_STREAM_HOLD_NS;
	sc_until = now_ms() + seconds * 1e3;
	t0 = pto_mono_ns();
	ret = pto_run(cl, orch_probe, NULL, 0, msg, sizeof(msg));
	t1 = pto_mono_ns();
	for (i = 0; i < pr_submitted; i++) {
		const struct pto_probe_rec *r = probe_rec(i);
		struct probe_core *p;

		if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != (uint32_t)i + 1)
			continue;
		recorded++;
		/* the device block (cluster) of the core: AIC b, AIV 2b, 2b+1 */
		blk = r->core_id < pto_nr_aic(cl) ? r->core_id :
		      (r->core_id - pto_nr_aic(cl)) / 2;
		if (r->core_id >= PROBE_MAX_CORES || blk >= 64 ||
		    r->block_idx != 0) {
			printf("probe: task %ld: core %u (block %u), launch block %u out of range\n",
			       i + 1, r->core_id, blk, r->block_idx);
			bad++;
			continue;
		}
		p = &pc[r->core_id];
		if (!p->n || r->start_ns > p->last_start) {
			p->last_start = r->start_ns;
			p->last_end = r->end_ns;
			p->block = blk;
		}
		ncores += !p->n++;
		blocks |= 1ULL << blk;
		if (r->start_ns < first)
			first = r->start_ns;
		if (r->end_ns > last)
			last = r->end_ns;
	}
	printf("PROBE run status=%d t0_ns=%lld t1_ns=%lld tasks=%ld recorded=%ld\n",
	       ret, (long long)t0, (long long)t1, pr_submitted, recorded);
	printf("PROBE span first_ns=%lld last_ns=%lld blocks=0x%llx cores=%u\n",
	       (long long)(recorded ? first : 0), (long long)(recorded ? last : 0),
	       (unsigned long long)blocks, ncores);
	for (c = 0; c < PROBE_MAX_CORES; c++)
		if (pc[c].n)
			printf("PROBE core=%u block=%u aic=%d n=%u last_start_ns=%lld last_end_ns=%lld\n",
			       c, pc[c].block, c < pto_nr_aic(cl), pc[c].n,
			       (long long)pc[c].last_start,
			       (long long)pc[c].last_end);
	return report_case("probe", !ret && !bad && pr_submitted > 0 &&
			   recorded == pr_submitted, ret, msg);
}

/*
 * pto_graph_stats@LIBPTO_1.2, which programs built before @early existed
 * call with six fields: "same" if it fills just those with what @st has,
 * else what it did.
 */
static const char *stats_1_2(const struct pto_graph_stats *st)
{
	union {
		struct pto_graph_stats st;
		unsigned char b[sizeof(struct pto_graph_stats)];
	} u;
	const size_t n = offsetof(struct pto_graph_stats, early);
	int (*fn)(pto_client *c, void *st);
	size_t i;

	fn = (int (*)(pto_client *, void *))dlvsym(RTLD_DEFAULT,
						    "pto_graph_stats",
						    "LIBPTO_1.2");
	if (!fn)
		return "missing";
	memset(&u, 0xa5, sizeof(u));
	if (fn(cl, &u))
		return "failed";
	for (i = n; i < sizeof(u); i++)
		if (u.b[i] != 0xa5)
			return "wrote-past-its-struct";
	return memcmp(&u, st, n) ? "differs" : "same";
}

/* The statistics ptod returned for the graph just waited for. */
static void print_stats(void)
{
	struct pto_graph_stats st;
	int ret = pto_graph_stats(cl, &st);

	if (ret) {
		printf("STATS none (%d)\n", ret);
		return;
	}
	printf("STATS tasks=%" PRIu64 " blocks=%" PRIu64 " wall_ns=%" PRIu64
	       " busy_ns=%" PRIu64 " wait_ns=%" PRIu64 " wait_max_ns=%" PRIu64
	       " early=%" PRIu64 " v1.2=%s\n", st.tasks, st.blocks,
	       st.wall_ns, st.busy_ns, st.wait_ns, st.wait_max_ns, st.early,
	       stats_1_2(&st));
}

/* ---- prio: the order a graph's tasks start in ---------------------------------------- */

#define PRIO_LEAVES	4
#define PRIO_CHAIN	4
#define PRIO_TASKS	(1 + PRIO_LEAVES + PRIO_CHAIN)
#define PRIO_COST_NS	100000	/* the probe kernel's declared cost */
#define PRIO_HOLD_NS	200000000	/* how long R holds its successors */
#define PRIO_LEAF_NS	10000000	/* recost: the leaves' declared cost */

static const char *const prio_name[PRIO_TASKS] = {
	"R", "A0", "A1", "A2", "A3", "C0", "C1", "C2", "C3"
};

/*
 * AIC probe task writing slot @slot, after the task that wrote @after;
 * the root (@after < 0) sleeps PRIO_HOLD_NS, so every other task is in
 * the scheduler when it finishes and the order they start in is the
 * scheduler's choice, not a race with their submission.
 */
static void prio_submit(PTO2Runtime *rt, long slot, long after)
{
	Tensor out = probe_tensor(slot), in = probe_tensor(after < 0 ? 0 : after);
	PTOParam p[] = { make_output_param(&out),
			 make_scalar_param((uint64_t)slot + 1),
			 make_scalar_param(after < 0 ? PRIO_HOLD_NS : 0),
			 make_input_param(&in) };

	pto2_rt_submit_task(rt, PROBE_AIC, PTO2_WORKER_CUBE, p,
			    after < 0 ? 3 : 4);
}

/*
 * R; leaves A0..A3 after R; chain C0 -> C1 -> C2 -> C3 after R. Ranked,
 * C0 (4 tasks to the end) comes before the leaves (1); streamed, the
 * leaves come first (submitted first). With args[0] set ("recost") the
 * kernel's cost is PRIO_LEAF_NS while the leaves are submitted, then
 * PRIO_COST_NS for the chain: a cost applies to the tasks submitted
 * after it, so the leaves (10 ms to the end) outrank C0 (0.4 ms).
 */
static int orch_prio(PTO2Runtime *rt, uint64_t *args, int argc)
{
	bool recost = argc > 0 && args[0];
	long i;

	pto2_rt_set_kernel_cost(rt, PROBE_AIC, PRIO_COST_NS);
	prio_submit(rt, 0, -1);
	if (recost)
		pto2_rt_set_kernel_cost(rt, PROBE_AIC, PRIO_LEAF_NS);
	for (i = 1; i <= PRIO_LEAVES; i++)
		prio_submit(rt, i, 0);
	if (recost)
		pto2_rt_set_kernel_cost(rt, PROBE_AIC, PRIO_COST_NS);
	for (i = 0; i < PRIO_CHAIN; i++)
		prio_submit(rt, 1 + PRIO_LEAVES + i, i ? PRIO_LEAVES + i : 0);
	return 0;
}

/*
 * args[0] hops of a serial chain: task i writes probe slot i after
 * reading slot i - 1 (no hold).
 */
static int orch_chain(PTO2Runtime *rt, uint64_t *args, int argc)
{
	long hops = argc > 0 ? (long)args[0] : 0, i;

	for (i = 0; i < hops; i++) {
		Tensor out = probe_tensor(i), in = probe_tensor(i ? i - 1 : 0);
		PTOParam p[] = { make_output_param(&out),
				 make_scalar_param((uint64_t)i + 1),
				 make_scalar_param(0), make_input_param(&in) };

		pto2_rt_submit_task(rt, PROBE_AIC, PTO2_WORKER_CUBE, p,
				    i ? 4 : 3);
	}
	return 0;
}

static int run_chain(long hops, long graphs, long limit_ms)
{
	uint64_t arg = (uint64_t)hops;
	double worst = 0;
	char msg[4096] = "";
	long g, i, late = 0;
	int ret = 0;

	if (hops < 1 || hops > PROBE_SLOTS || graphs < 1 || limit_ms < 1) {
		fprintf(stderr, "chain: HOPS 1..%d, GRAPHS and MS at least 1\n",
			PROBE_SLOTS);
		return 1;
	}
	if (load_probe())
		return 1;
	pr_buf = gm_copy(NULL, (size_t)hops * sizeof(struct pto_probe_rec));
	if (!pr_buf)
		return 1;
	for (g = 0; g < graphs && !ret; g++) {
		double ms = now_ms();

		ret = pto_run_ex(cl, orch_chain, &arg, 1, 0, msg, sizeof(msg));
		ms = now_ms() - ms;
		if (ms > worst)
			worst = ms;
		if (ms > (double)limit_ms)
			late++;
	}
	for (i = 0; i < hops && !ret; i++)
		if (__atomic_load_n(&probe_rec(i)->seq, __ATOMIC_ACQUIRE) !=
		    (uint32_t)i + 1)
			break;
	printf("CHAIN graphs=%ld hops=%ld ran=%ld slowest=%.1f ms late=%ld (over %ld ms)\n",
	       g, hops, i, worst, late, limit_ms);
	return report_case("chain", !ret && g == graphs && i == hops && !late,
			   ret, msg);
}

static int run_prio(const char *mode)
{
	int order[PRIO_TASKS], n = 0, i, j, ret;
	uint64_t recost = 0;
	uint32_t flags;
	char msg[4096];

	if (!strcmp(mode, "static"))
		flags = PTO_GRAPH_STATIC;
	else if (!strcmp(mode, "stream"))
		flags = 0;
	else if (!strcmp(mode, "recost")) {
		flags = PTO_GRAPH_STATIC;
		recost = 1;
	} else {
		fprintf(stderr, "prio: static, stream or recost, not '%s'\n",
			mode);
		return 1;
	}
	if (load_probe())
		return 1;
	pr_buf = gm_copy(NULL, PRIO_TASKS * sizeof(struct pto_probe_rec));
	if (!pr_buf)
		return 1;
	ret = pto_run_ex(cl, orch_prio, &recost, 1, flags, msg, sizeof(msg));
	for (i = 0; i < PRIO_TASKS; i++) {
		if (__atomic_load_n(&probe_rec(i)->seq, __ATOMIC_ACQUIRE) !=
		    (uint32_t)i + 1)
			continue;
		/* insertion by start time */
		for (j = n; j > 0 && probe_rec(order[j - 1])->start_ns >
				     probe_rec(i)->start_ns; j--)
			order[j] = order[j - 1];
		order[j] = i;
		n++;
	}
	printf("PRIO order:");
	for (i = 0; i < n; i++)
		printf(" %s", prio_name[order[i]]);
	printf("\n");
	print_stats();
	return report_case("prio", !ret && n == PRIO_TASKS, ret, msg);
}

/*
 * Long graph: one probe task (readiness: the run executes), then chains
 * of intermediates until the deadline.
 */
static int orch_stream(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(sc_x);
	long i = 0;
	int ret;

	(void)args;
	(void)argc;
	probe_submit(rt, 0, 1, 0);
	ret = probe_wait(rt, 0, 1);
	if (!ret)
		ret = signal_ready();
	if (ret)
		return ret;
	while (now_ms() < sc_until && !pto2_rt_get_error(rt)) {
		PTO2_SCOPE(rt) {
			submit_add_scalar(rt, &x);
		}
		if (++i % 16 == 0)
			usleep(1000);
	}
	return 0;
}

static int run_stream(double seconds)
{
	char msg[4096];
	int ret;

	if (load_kernels("vector_example", add_scalar_k, 1) || load_probe())
		return 1;
	sc_x = gm_copy(NULL, 4096);
	pr_buf = gm_copy(NULL, sizeof(struct pto_probe_rec));
	if (!sc_x || !pr_buf)
		return 1;
	sc_until = now_ms() + seconds * 1e3;
	ret = pto_run(cl, orch_stream, NULL, 0, msg, sizeof(msg));
	printf("CASE stream: %s status=%d %s\n", ret ? "FAIL" : "PASS", ret, msg);
	return ret ? 1 : 0;
}

/*
 * hang [N]: N probe tasks (default one per core; else one AIC for two
 * AIV), each sleeping an hour (kernels that do not return); ready once
 * every one of them has started on its core. Never ends by itself: the
 * test kills it, or ptod stops.
 */
#define HANG_HOLD_NS	3600000000000ULL

static long hang_tasks;

static void hang_submit(PTO2Runtime *rt)
{
	long i;

	probe_hold_ns = HANG_HOLD_NS;
	for (i = 0; i < hang_tasks; i++)
		probe_submit(rt, i, (uint32_t)i + 1,
			     hang_tasks == (long)(pto_nr_aic(cl) + pto_nr_aiv(cl)) ?
			     i < (long)pto_nr_aic(cl) : i % 3 == 0);
}

/* Until every hang task has started: 0, or -errno. */
static int hang_started(PTO2Runtime *rt)
{
	double until = now_ms() + PROBE_READY_MS;
	long i, started = 0;

	while (started < hang_tasks) {
		for (started = 0, i = 0; i < hang_tasks; i++)
			started += __atomic_load_n(&probe_rec(i)->start_ns,
						   __ATOMIC_RELAXED) != 0;
		if (pto2_rt_get_error(rt))
			return pto2_rt_get_error(rt);
		if (now_ms() > until) {
			fprintf(stderr, "hang: %ld of %ld tasks started within %d s\n",
				started, hang_tasks, PROBE_READY_MS / 1000);
			return -ETIMEDOUT;
		}
		usleep(1000);
	}
	printf("hang: %ld tasks on their cores\n", hang_tasks);
	return 0;
}

static int orch_hang(PTO2Runtime *rt, uint64_t *args, int argc)
{
	int ret;

	(void)args;
	(void)argc;
	hang_submit(rt);
	ret = hang_started(rt);
	return ret ? ret : signal_ready();
}

/* @n hang tasks (0, or more than cores: one per core), their records. */
static int hang_setup(long n)
{
	long cores = (long)(pto_nr_aic(cl) + pto_nr_aiv(cl));

	hang_tasks = n > 0 && n < cores ? n : cores;
	if (load_probe())
		return -1;
	pr_buf = gm_copy(NULL, (size_t)hang_tasks * sizeof(struct pto_probe_rec));
	return pr_buf ? 0 : -1;
}

static int run_hang(long n)
{
	char msg[4096];
	int ret;

	if (hang_setup(n))
		return 1;
	ret = pto_run(cl, orch_hang, NULL, 0, msg, sizeof(msg));
	printf("CASE hang: %s status=%d %s\n", ret ? "FAIL" : "PASS", ret, msg);
	return ret ? 1 : 0;
}

/* The descriptors open before pto_connect(): not libpto's, not ptod's. */
#define OLD_FDS_MAX	4096
static bool old_fd[OLD_FDS_MAX];

static void fds_before_connect(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (fd >= 0 && fd < OLD_FDS_MAX)
			old_fd[fd] = true;
	}
	closedir(d);
}

#define CONNECT_FDS_MAX	16

/*
 * The descriptors pto_connect() opened (not stdio, not the ready pipe,
 * none open before it: make's jobserver pipe, say), with what
 * /proc/self/fd says each is (@links). How many, at most CONNECT_FDS_MAX.
 */
static int connect_fds(int *fds, char (*links)[64])
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < CONNECT_FDS_MAX) {
		int fd = atoi(de->d_name);
		ssize_t len;

		if (fd <= 2 || fd == dirfd(d) || fd == ready_fd ||
		    (fd < OLD_FDS_MAX && old_fd[fd]))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, links[n], sizeof(links[n]) - 1);
		if (len <= 0)
			continue;
		links[n][len] = 0;
		fds[n++] = fd;
	}
	closedir(d);
	return n;
}

/*
 * Do the worst to the doorbell ptod handed over at hello (the write end
 * of a pipe; an eventfd libpto holds would have come from ptod too): fill
 * it (an eventfd: to its largest count), then make it blocking. Only what
 * pto_connect() opened is touched (connect_fds()). Whatever ptod writes
 * to what it shares with us must not block on that. How many descriptors
 * were abused.
 */
static int bell_abuse(void)
{
	char links[CONNECT_FDS_MAX][64], junk[4096];
	int fds[CONNECT_FDS_MAX], i, n = 0;
	int nfds = connect_fds(fds, links);

	memset(junk, 0, sizeof(junk));
	for (i = 0; i < nfds; i++) {
		uint64_t max = 0xfffffffffffffffeULL;
		int fd = fds[i], fl = fcntl(fd, F_GETFL);

		if (fl < 0)
			continue;
		if (!strncmp(links[i], "pipe:", 5) &&
		    (fl & O_ACCMODE) == O_WRONLY) {
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
			while (write(fd, junk, sizeof(junk)) > 0)
				;
		} else if (!strcmp(links[i], "anon_inode:[eventfd]")) {
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
			if (write(fd, &max, sizeof(max)) < 0)
				(void)0;
		} else {
			continue;
		}
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		printf("hang-bell: fd %d (%s) filled and made blocking\n", fd,
		       links[i]);
		n++;
	}
	return n;
}

/*
 * hang-bell: hang's kernels, then (the graph submitted whole, so that
 * ptod's runner waits for the run and no longer for records) the worst
 * done to the doorbell (bell_abuse()); ready after that.
 */
static int run_hang_bell(void)
{
	PTO2Runtime *rt = pto_client_runtime(cl);
	char msg[4096];
	uint64_t tag;
	int ret;

	if (hang_setup(0))
		return 1;
	ret = pto_graph_begin(cl, &tag);
	if (!ret) {
		hang_submit(rt);
		ret = pto_graph_end(cl);
	}
	if (!ret)
		ret = hang_started(rt);
	if (ret) {
		printf("CASE hang-bell: FAIL status=%d %s\n", ret, pto_last_error(cl));
		return 1;
	}
	printf("hang-bell: %d descriptors abused\n", bell_abuse());
	if (signal_ready())
		return 1;
	ret = pto_graph_wait(cl, tag, msg, sizeof(msg));
	printf("CASE hang-bell: %s status=%d %s\n", ret ? "FAIL" : "PASS", ret, msg);
	return ret ? 1 : 0;
}

/*
 * bell-orphaned: after its setup the client shuts its connections to
 * ptod for writing; ptod drops it, and with it the read end of the
 * doorbell its stream reader parked on, while the client goes on. Then a
 * graph, whose records ring that doorbell. The run must end with an
 * error, not the process die of SIGPIPE (which libpto never asks for).
 */
static int run_bell_orphaned(void)
{
	PTO2Runtime *rt = pto_client_runtime(cl);
	char links[CONNECT_FDS_MAX][64], msg[4096] = "";
	int fds[CONNECT_FDS_MAX], nfds, n = 0, i, ret;
	struct pollfd pfd;
	uint64_t tag;

	if (hang_setup(1))
		return 1;
	usleep(100 * 1000);	/* ptod's stream reader parks meanwhile */
	nfds = connect_fds(fds, links);
	for (i = 0; i < nfds; i++) {
		char c;

		if (strncmp(links[i], "socket:", 7) || shutdown(fds[i], SHUT_WR))
			continue;
		n++;
		/* ptod closes it once it has let the client go */
		pfd.fd = fds[i];
		pfd.events = POLLIN;
		while (poll(&pfd, 1, 10000) > 0 &&
		       recv(fds[i], &c, 1, MSG_DONTWAIT) > 0)
			;
	}
	printf("bell-orphaned: %d connections shut, ptod let go\n", n);
	ret = pto_graph_begin(cl, &tag);
	if (!ret) {
		hang_submit(rt);
		ret = pto_graph_end(cl);
	}
	if (!ret)
		ret = pto_graph_wait(cl, tag, msg, sizeof(msg));
	printf("CASE bell-orphaned: %s status=%d %s\n",
	       n && ret ? "PASS" : "FAIL", ret, ret ? pto_last_error(cl) : msg);
	return n && ret ? 0 : 1;
}

static int orch_badbuf(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	/* GM the client does not own (200 MiB into GM: no buffer of ours) */
	Tensor x = make_tensor_external((void *)(uintptr_t)(0x100000000ULL + (200ULL << 20)),
					shape, 1, PTO_DT_FP32);

	(void)args;
	(void)argc;
	submit_add_scalar(rt, &x);
	return 0;
}

/*
 * An OUTPUT on a placeholder address the client made up (libpto makes
 * them 1, 2, ... per graph): the largest index there is, with nothing
 * before it. ptod once grew its placeholder map to that index, 128 MiB,
 * for one parameter.
 */
static int orch_badph(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(sc_x);
	Tensor y = make_tensor(shape, 1, PTO_DT_FP32);
	PTOParam p[] = {
		make_input_param(&x), make_output_param(&y),
		make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(1024),
	};

	(void)args;
	(void)argc;
	y.addr = PTO_PH_MAKE(PTO_PH_MAX_IDX);
	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
	return 0;
}

/*
 * A new intermediate as two OUTPUTs of one task. args[0] 0: the same
 * Tensor twice, which libpto refuses; else two Tensors on the same new
 * placeholder, forged past libpto's check, which ptod refuses: each
 * would get a buffer of its own and the placeholder only the last.
 */
static int orch_output_twice(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(sc_x);
	Tensor y = make_tensor(shape, 1, PTO_DT_FP32);
	Tensor z = make_tensor(shape, 1, PTO_DT_FP32);
	PTOParam p[] = {
		make_input_param(&x), make_output_param(&y),
		make_output_param(args[0] ? &z : &y), make_scalar_param(1024),
	};

	(void)argc;
	if (args[0]) {
		y.addr = PTO_PH_MAKE(1);
		z.addr = PTO_PH_MAKE(1);
	}
	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
	return 0;
}

/*
 * An intermediate produced, then read through its placeholder with an
 * offset the client added that puts the range past the tensor's end.
 */
static int orch_badph_off(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(sc_x);
	Tensor y = make_tensor(shape, 1, PTO_DT_FP32);

	(void)args;
	(void)argc;
	submit_add_scalar_to(rt, &x, &y);
	y.addr += 4096;
	submit_add_scalar_to(rt, &y, &x);
	return 0;
}

/*
 * Two intermediates of one task whose sizes, each aligned up, sum past
 * 2^64 (to 4096), then a read of 4 KiB 1 MiB into the first through its
 * placeholder. The runtime once packed them into 4 KiB, the second before
 * the heap, and ptod's range check of the read passed any offset.
 */
static int orch_badph_huge(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(sc_x);
	Tensor y = make_tensor(shape, 1, PTO_DT_FP32);
	Tensor z = make_tensor(shape, 1, PTO_DT_FP32);
	Tensor v;
	PTOParam p[] = {
		make_input_param(&x), make_output_param(&y),
		make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(1024),
		make_output_param(&z),
	};

	(void)args;
	(void)argc;
	y.size = 0xfffffffffffff000ULL;
	z.size = 8192;
	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 5);
	v = make_tensor_external((void *)(uintptr_t)(y.addr + (1 << 20)),
				 shape, 1, PTO_DT_FP32);
	submit_add_scalar_to(rt, &v, &x);
	return 0;
}

/* ---- the checking mode: each hazard refused at its submit -------------------------- */

static pto_buf *hz_x, *hz_y;

/* ADD_SCALAR from @in (1024 floats) into @out. */
static void hz_add(PTO2Runtime *rt, Tensor *in, Tensor *out)
{
	PTOParam p[] = {
		make_input_param(in), make_output_param(out),
		make_scalar_param(pto_f32_arg(1.0f)), make_scalar_param(1024),
	};

	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
}

/* An intermediate made in a scope, read after it ended. */
static int orch_hz_scope(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(hz_x), y = buf_tensor(hz_y);
	Tensor t = make_tensor(shape, 1, PTO_DT_FP32);

	(void)args;
	(void)argc;
	PTO2_SCOPE(rt) {
		hz_add(rt, &x, &t);
	}
	hz_add(rt, &t, &y);
	return 0;
}

/* The first half of an intermediate written, its second half read. */
static int orch_hz_unwritten(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 2048 }, half[1] = { 1024 }, lo_off[1] = { 0 },
		 hi_off[1] = { 1024 };
	Tensor x = buf_tensor(hz_x), y = buf_tensor(hz_y);
	Tensor t = make_tensor(shape, 1, PTO_DT_FP32);
	Tensor lo = pto_tensor_view(&t, half, lo_off), hi;

	(void)args;
	(void)argc;
	hz_add(rt, &x, &lo);
	hi = pto_tensor_view(&lo, half, hi_off);
	hz_add(rt, &hi, &y);
	return 0;
}

/* Two tasks write y with nothing ordering them. */
static int orch_hz_waw(PTO2Runtime *rt, uint64_t *args, int argc)
{
	Tensor x = buf_tensor(hz_x), y = buf_tensor(hz_y);

	(void)args;
	(void)argc;
	hz_add(rt, &x, &y);
	hz_add(rt, &x, &y);
	return 0;
}

/* The same work without a hazard: x -> t -> y inside one scope. */
static int orch_hz_ordered(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t shape[1] = { 1024 };
	Tensor x = buf_tensor(hz_x), y = buf_tensor(hz_y);
	Tensor t = make_tensor(shape, 1, PTO_DT_FP32);

	(void)args;
	(void)argc;
	PTO2_SCOPE(rt) {
		hz_add(rt, &x, &t);
		hz_add(rt, &t, &y);
	}
	return 0;
}

/* Case @name: @orch under PTO_GRAPH_CHECK ends with @want and @needle. */
static int hz_case(const char *name, pto2_orchestration_entry_fn orch,
		   int want, const char *needle)
{
	char msg[4096];
	int ret = pto_run_ex(cl, orch, NULL, 0, PTO_GRAPH_CHECK, msg,
			     sizeof(msg));
	bool pass = ret == want && (!needle || strstr(msg, needle));

	return report_case(name, pass, ret, msg);
}

static int run_hazards(void)
{
	int failed = 0;

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	hz_x = gm_copy(NULL, 1024 * sizeof(float));
	hz_y = gm_copy(NULL, 1024 * sizeof(float));
	if (!hz_x || !hz_y)
		return 1;
	failed += hz_case("hazard/scope", orch_hz_scope, -EINVAL,
			  "uses intermediate tensor #1 after the scope that made it ended");
	failed += hz_case("hazard/unwritten", orch_hz_unwritten, -EINVAL,
			  "reads a region of intermediate tensor #1 that no earlier task wrote");
	failed += hz_case("hazard/waw", orch_hz_waw, -EINVAL,
			  "task 1 (kernel 1): param 1 writes a region that task 0 (kernel 1) also writes");
	failed += hz_case("hazard/ordered", orch_hz_ordered, 0, NULL);
	return failed ? 1 : 0;
}

/* ---- random programs against their sequential result --------------------------- */

#define RD_AIV_KERNEL	40
#define RD_AIC_KERNEL	41
#define RD_MIXED_KERNEL	42

/*
 * @n random programs (random_dag.h) of @tasks tasks from @seed, each one
 * graph (@mode "stream", "static" or "both": every other one static),
 * each compared with running its tasks one at a time; with PTO_CHECK=1 in
 * the environment the checking mode must find nothing. One CASE line,
 * random/programs: PASS when all gave the sequential result.
 */
static int run_random(long n, uint64_t seed, long tasks, const char *mode)
{
	static struct rd_prog prog;
	static struct rd_gen gen;
	static int64_t ref[RD_NT][RD_MAX_TASKS];
	struct rd_stats st = { 0 };
	struct rd_run run = { .p = &prog };
	pto_buf *buf[RD_SINK + 1] = { 0 };
	char path[PATH_MAX + 192], msg[4096] = "", where[128] = "";
	uint64_t args[1] = { (uint64_t)(uintptr_t)&run };
	long i = 0;
	int ret = 0, k;

	if (tasks < 1 || tasks > RD_MAX_TASKS)
		tasks = RD_MAX_TASKS;
	snprintf(path, sizeof(path), "%s/random_kernel.so", e2edir);
	if (pto_kernel_load(cl, RD_AIV_KERNEL, PTO2_WORKER_VECTOR, path) ||
	    pto_kernel_load(cl, RD_AIC_KERNEL, PTO2_WORKER_CUBE, path) ||
	    pto_kernel_load(cl, RD_MIXED_KERNEL, PTO2_WORKER_MIXED, path)) {
		fprintf(stderr, "kernel %s: %s\n", path, pto_last_error(cl));
		return 1;
	}
	run.kernel[PTO2_WORKER_VECTOR] = RD_AIV_KERNEL;
	run.kernel[PTO2_WORKER_CUBE] = RD_AIC_KERNEL;
	run.kernel[PTO2_WORKER_MIXED] = RD_MIXED_KERNEL;
	/* room for the largest tensors; every program uses a corner */
	for (k = 0; k <= RD_SINK; k++) {
		buf[k] = gm_copy(NULL, k == RD_SINK ? RD_MAX_TASKS * 8 :
					RD_ELEMS * 8);
		if (!buf[k]) {
			ret = -ENOMEM;
			goto out;
		}
		run.dev[k] = pto_buf_dev_addr(buf[k]);
		run.host[k] = pto_buf_ptr(buf[k]);
	}
	for (k = 0; k < RD_NT; k++)
		run.ref[k] = ref[k];
	for (i = 0; i < n && !ret; i++) {
		rd_generate(&prog, seed + (uint64_t)i, (uint32_t)tasks, 16,
			    pto_nr_aiv(cl) >= 2 * pto_nr_aic(cl) ? 3 :
			    pto_nr_aiv(cl) >= 2 ? 2 : 1, &st, &gen);
		rd_reference(&prog, run.ref);
		rd_init_buffers(&run);
		ret = pto_run_ex(cl, rd_orchestrate, args, 1,
				 !strcmp(mode, "static") ||
				 (!strcmp(mode, "both") && i % 2) ?
				 PTO_GRAPH_STATIC : 0, msg, sizeof(msg));
		if (!ret && rd_compare(&run, where, sizeof(where)))
			ret = -EPROTO;
		if (ret)
			fprintf(stderr, "random: program %ld (seed %" PRIu64 "): %s %s\n",
				i, seed + (uint64_t)i,
				ret == -EPROTO ? where : strerror(-ret), msg);
	}
	printf("random: %u tasks, %u writes (%u INOUT), %u reads to order a write, %u of several blocks, %u of two-thread blocks, %u MIXED, %u on a cluster, %u making intermediates (%u intermediates made by a tile)\n",
	       st.tasks, st.writes, st.inouts, st.order_reads, st.blocks,
	       st.threads, st.mixed, st.clustered, st.makes, st.part_makes);
out:
	for (k = 0; k <= RD_SINK; k++)
		if (buf[k])
			pto_buf_free(buf[k]);
	snprintf(path, sizeof(path), "%ld programs from seed %" PRIu64 " (%s)",
		 i, seed, mode);
	return report_case("random/programs", !ret, ret, path);
}

/* ---- protocol abuse: raw messages on ptod's socket ----------------------------- */

/* A connection to ptod's socket ($PTO_SOCKET): the socket, or -1 and errno */
static int raw_connect(void)
{
	const char *path = getenv("PTO_SOCKET");
	int s = path ? ptod_dial_path(path, SOCK_SEQPACKET | SOCK_CLOEXEC) :
		-EINVAL;

	if (s < 0) {
		errno = -s;
		return -1;
	}
	return s;
}

/* Send @len bytes of @m (and @pass_fd if >= 0), expect a REPLY with @want. */
static int raw_expect(int sock, struct pto_msg *m, size_t len, int pass_fd,
		      int want, const char *what)
{
	union pto_fd_cmsg cm;
	struct iovec iov = { m, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pto_msg r;
	ssize_t n;

	if (pass_fd >= 0)
		pto_msg_attach_fd(&mh, &cm, pass_fd);
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
		printf("%s: send: %s\n", what, strerror(errno));
		return 0;
	}
	memset(&r, 0, sizeof(r));
	n = recv(sock, &r, sizeof(r), 0);
	if (n <= 0 || pto_msg_from_ptod(&r, (size_t)n, NULL, 0) ||
	    r.type != PTO_MSG_REPLY || r.status != want) {
		printf("%s: FAIL: reply type %u status %d (%s), expected %d\n",
		       what, n > 0 ? r.type : 0, n > 0 ? r.status : 0,
		       n > 0 ? r.text : strerror(errno), want);
		return 0;
	}
	printf("%s: %d \"%s\"\n", what, r.status, r.text);
	return 1;
}

/*
 * Malformed input on the socket gets a clear error and costs ptod nothing:
 * a short message, one longer than any, a request before hello, a hello
 * without the device
 * file, a hello with a file that is not the device, a wrong wire version.
 * Each refused hello closes that connection; ptod goes on serving.
 */
static int run_proto(void)
{
	struct {
		struct pto_msg m;
		char more[64];
	} big;
	struct pto_msg m;
	int sock, null_fd, ok = 1;

	sock = raw_connect();
	if (sock < 0)
		return 1;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_PING;
	ok &= raw_expect(sock, &m, 4, -1, -EPROTO, "short message");
	memset(&big, 0, sizeof(big));
	big.m.type = PTO_MSG_PING;
	ok &= raw_expect(sock, &big.m, sizeof(big), -1, -EPROTO,
			 "long message");
	ok &= raw_expect(sock, &m, sizeof(m), -1, -EPROTO, "ping before hello");
	m.type = PTO_MSG_HELLO;
	m.u.hello.wire_version = PTO_WIRE_VERSION;
	ok &= raw_expect(sock, &m, sizeof(m), -1, -EBADF, "hello without a file");
	close(sock);

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	sock = raw_connect();
	if (sock < 0 || null_fd < 0)
		return 1;
	ok &= raw_expect(sock, &m, sizeof(m), null_fd, -ENODEV,
			 "hello with /dev/null");
	close(sock);

	sock = raw_connect();
	if (sock < 0)
		return 1;
	m.u.hello.wire_version = PTO_WIRE_VERSION + 1;
	ok &= raw_expect(sock, &m, sizeof(m), null_fd, -EPROTO,
			 "hello with another wire version");
	close(sock);
	close(null_fd);
	return ok ? 0 : 1;
}

/* ---- clients that misbehave, access control, limits ----------------------- */

/* Our libpto connection to ptod: the socket whose peer is $PTO_SOCKET. */
static int libpto_socket(void)
{
	const char *path = getenv("PTO_SOCKET");
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	for (fd = 3; path && fd < 1024; fd++) {
		len = sizeof(sa);
		memset(&sa, 0, sizeof(sa));
		if (!getpeername(fd, (struct sockaddr *)&sa, &len) &&
		    sa.sun_family == AF_UNIX && !strcmp(sa.sun_path, path))
			return fd;
	}
	return -1;
}

#define FLOOD_CONNS	4

/* A connection of the flood: its socket and the pings it sent. */
struct flood_conn {
	int s;
	long sent;
};

/* Dial @f again (after ptod dropped it); 0 or -errno. */
static int flood_dial(struct flood_conn *f)
{
	if (f->s >= 0)
		close(f->s);
	f->sent = 0;
	f->s = raw_connect();
	if (f->s < 0 || fcntl(f->s, F_SETFL, O_NONBLOCK))
		return -errno;
	return 0;
}

/* Pings on @f, without waiting, until the socket is full or @burst sent. */
static void flood_send(struct flood_conn *f, long burst)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_PING;
	while ((!burst || f->sent < burst) &&
	       send(f->s, &m, offsetof(struct pto_msg, text) + 1,
		    MSG_NOSIGNAL) >= 0)
		f->sent++;
}

/*
 * One round: send on every connection, then wait (no spinning) until one
 * can take more or was dropped by ptod, and dial the dropped ones again.
 * The number dropped, or -errno.
 */
static int flood_round(struct flood_conn *f, long burst)
{
	struct pollfd pfd[FLOOD_CONNS];
	int i, ret, drops = 0;

	for (i = 0; i < FLOOD_CONNS; i++) {
		flood_send(&f[i], burst);
		pfd[i].fd = f[i].s;
		pfd[i].events = POLLRDHUP |
				(!burst || f[i].sent < burst ? POLLOUT : 0);
	}
	ret = poll(pfd, FLOOD_CONNS, 100);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < FLOOD_CONNS; i++) {
		if (!(pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			continue;
		drops++;
		ret = flood_dial(&f[i]);
		if (ret)
			return ret;
	}
	return drops;
}

/*
 * FLOOD_CONNS connections ping ptod without ever reading a reply: @burst
 * pings each (0: as many as ptod takes), then they wait to be dropped;
 * each one ptod drops is dialled again. Ready after the first drop.
 */
static int run_flood(double seconds, long burst)
{
	double until = now_ms() + seconds * 1e3;
	struct flood_conn f[FLOOD_CONNS];
	long drops = 0;
	int i, ret = 0;

	for (i = 0; i < FLOOD_CONNS; i++)
		f[i].s = -1;
	for (i = 0; i < FLOOD_CONNS && !ret; i++)
		ret = flood_dial(&f[i]);
	while (ret >= 0 && now_ms() < until) {
		ret = flood_round(f, burst);
		if (ret <= 0)
			continue;
		drops += ret;
		printf("flood: dropped %ld times\n", drops);
		if (ready_fd >= 0 && signal_ready())
			ret = -EIO;
	}
	if (ret < 0)
		printf("flood: %s\n", strerror(-ret));
	for (i = 0; i < FLOOD_CONNS; i++)
		if (f[i].s >= 0)
			close(f[i].s);
	return ret < 0 ? 1 : 0;
}

static int run_pings(long n)
{
	int s = libpto_socket();
	double t0 = now_ms(), t, worst = 0;
	struct pto_msg m;
	ssize_t got;
	long i;

	for (i = 0; s >= 0 && i < n; i++) {
		t = now_ms();
		memset(&m, 0, sizeof(m));
		m.type = PTO_MSG_PING;
		if (send(s, &m, offsetof(struct pto_msg, text) + 1,
			 MSG_NOSIGNAL) < 0)
			break;
		got = recv(s, &m, sizeof(m), 0);
		if (got <= 0 || pto_msg_from_ptod(&m, (size_t)got, NULL, 0) ||
		    m.type != PTO_MSG_REPLY || m.status)
			break;
		if (now_ms() - t > worst)
			worst = now_ms() - t;
	}
	printf("CASE pings: %s %ld of %ld in %.0f ms, slowest %.0f ms\n",
	       i == n ? "PASS" : "FAIL", i, n, now_ms() - t0, worst);
	return i == n ? 0 : 1;
}

/* An allocation of @mib MiB fails with -EDQUOT (@over) or passes. */
static bool quota_alloc(long mib, bool over, pto_buf **b)
{
	int ret = pto_buf_alloc(cl, (size_t)mib << 20, b);

	printf("quota: %ld MiB: %d %s\n", mib, ret, ret ? pto_last_error(cl) : "");
	if (over)
		return ret == -EDQUOT && strstr(pto_last_error(cl), "quota");
	return !ret;
}

static int run_quota(long mib)
{
	pto_buf *a = NULL, *b = NULL;
	bool ok;

	ok = quota_alloc(mib + 1, true, &b);
	ok &= quota_alloc(mib / 2, false, &a);
	ok &= quota_alloc(mib / 2 + 1, true, &b);
	if (a)
		pto_buf_free(a);
	ok &= quota_alloc(mib / 2 + 1, false, &b);
	if (b)
		pto_buf_free(b);
	printf("CASE quota: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/* noquota MIB: a buffer of @mib + 1 MiB, as no quota of @mib lets. */
static int run_noquota(long mib)
{
	pto_buf *b = NULL;
	bool ok = quota_alloc(mib + 1, false, &b);

	if (b)
		pto_buf_free(b);
	printf("CASE noquota: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/*
 * A user's own buffers get its GM quota of @mib less what its clients'
 * runtimes hold (ptod charges each runtime to the user at the hello):
 * the largest buffer this client gets, found by bisection in MiB, is at
 * most @mib - 5 with its runtime (about 5.5 MiB) charged, and at least
 * @mib - 16. This client's other charged GM (its stream ring, a 64 KiB
 * heap) is about 1 MiB.
 */
static int run_quota_rt(long mib)
{
	long lo = 0, hi = mib + 1;	/* lo fits, hi does not */
	pto_buf *b = NULL;
	bool ok;

	while (hi - lo > 1) {
		long mid = (lo + hi) / 2;
		int ret = pto_buf_alloc(cl, (size_t)mid << 20, &b);

		if (!ret) {
			pto_buf_free(b);
			lo = mid;
		} else if (ret == -EDQUOT) {
			hi = mid;
		} else {
			printf("quota-rt: %ld MiB: %d %s\n", mid, ret,
			       pto_last_error(cl));
			break;
		}
	}
	ok = hi - lo == 1 && lo <= mib - 5 && lo >= mib - 16;
	printf("CASE quota-rt: %s the largest buffer under a %ld MiB quota: %ld MiB\n",
	       ok ? "PASS" : "FAIL", mib, lo);
	return ok ? 0 : 1;
}

/*
 * More clients of this process, each with its hello (and runtime), until
 * ptod refuses one or @n are connected besides the first: passes if the
 * refusal is -EDQUOT and names the client runtimes that fill the user's
 * GM quota (ptod -q counts them with the user's buffers).
 */
static int run_hellos(long n)
{
	pto_client *more[64];
	const char *why = "";
	long i;
	int ret = 0;
	bool ok;

	for (i = 0; i < n && i < 64; i++) {
		ret = pto_connect(NULL, &more[i]);
		if (ret) {
			why = pto_last_error(NULL);
			break;
		}
	}
	ok = ret == -EDQUOT && strstr(why, "runtimes leave no room");
	printf("CASE hellos: %s %ld more clients, then status=%d %s\n",
	       ok ? "PASS" : "FAIL", i, ret, why);
	while (i > 0)
		pto_disconnect(more[--i]);
	return ok ? 0 : 1;
}

/*
 * sbxchurn N: clients of this process one after the other, each
 * connected (its hello starts a sandbox) and at once disconnected, until
 * 5 were refused with -EAGAIN or N tried. Prints how many connected, how
 * many were refused so, how long it took and the last refusal; the test
 * judges them.
 */
static int run_sbxchurn(long n)
{
	char why[PTO_MSG_TEXT] = "";
	double t0 = now_ms();
	long i, ok = 0, again = 0, other = 0;
	pto_client *c;
	int ret;

	for (i = 0; i < n && again < 5; i++) {
		ret = pto_connect(NULL, &c);
		if (!ret) {
			ok++;
			pto_disconnect(c);
			continue;
		}
		if (ret == -EAGAIN) {
			snprintf(why, sizeof(why), "%s", pto_last_error(NULL));
			again++;
		} else {
			printf("sbxchurn: connect %ld: %d %s\n", i, ret,
			       pto_last_error(NULL));
			other++;
		}
	}
	printf("CASE sbxchurn: %s connected=%ld again=%ld other=%ld secs=%.3f why=%s\n",
	       other ? "FAIL" : "PASS", ok, again, other,
	       (now_ms() - t0) / 1e3, why);
	return other ? 1 : 0;
}

/*
 * A ping on a new raw connection: 0 and its reply in @r, or -errno
 * (-ECONNRESET: ptod hung up; -EPROTO: its reply is malformed).
 */
static int raw_ping(int *sock, struct pto_msg *r)
{
	struct pto_msg m;
	ssize_t n;

	*sock = raw_connect();
	if (*sock < 0)
		return -errno;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_PING;
	/* a refusal may have closed the connection: its reply is queued */
	if (send(*sock, &m, offsetof(struct pto_msg, text) + 1, MSG_NOSIGNAL) < 0 &&
	    errno != EPIPE)
		return -errno;
	memset(r, 0, sizeof(*r));
	n = recv(*sock, r, sizeof(*r), 0);
	if (n < 0)
		return -errno;
	if (!n)
		return -ECONNRESET;
	return pto_msg_from_ptod(r, (size_t)n, NULL, 0);
}

static int run_peer(void)
{
	struct pto_msg r;
	int s, ret = raw_ping(&s, &r);

	if (ret)
		printf("peer: %s\n", strerror(-ret));
	else
		printf("peer: reply status %d \"%s\"\n", r.status, r.text);
	if (s >= 0)
		close(s);
	return 0;
}

/*
 * Connect and say nothing for up to @secs seconds: what ptod sends, or
 * does, meanwhile.
 */
static int run_peer_silent(double secs)
{
	struct pollfd p = { .events = POLLIN };
	double t0 = now_ms();
	struct pto_msg r;
	ssize_t n;
	int ret;

	p.fd = raw_connect();
	if (p.fd < 0) {
		printf("peer-silent: %s\n", strerror(errno));
		return 0;
	}
	ret = poll(&p, 1, (int)(secs * 1000));
	if (ret <= 0) {
		printf("peer-silent: %s after %.1f s\n",
		       ret ? strerror(errno) : "nothing", secs);
		close(p.fd);
		return 0;
	}
	memset(&r, 0, sizeof(r));
	n = recv(p.fd, &r, sizeof(r), 0);
	ret = n < 0 ? -errno : n ? pto_msg_from_ptod(&r, (size_t)n, NULL, 0) :
		-ECONNRESET;
	if (ret)
		printf("peer-silent: %s after %.0f ms\n", strerror(-ret),
		       now_ms() - t0);
	else
		printf("peer-silent: reply status %d \"%s\" after %.0f ms\n",
		       r.status, r.text, now_ms() - t0);
	close(p.fd);
	return 0;
}

/*
 * @n times: a new connection, a ping before hello (-EPROTO, "hello
 * first"), hang up. Prints how long it took; 0 if every ping had its
 * reply.
 */
static int run_churn(long n)
{
	double t0 = now_ms();
	struct pto_msg r;
	int s, ret = 0;
	long i;

	for (i = 0; i < n && !ret; i++) {
		ret = raw_ping(&s, &r);
		if (!ret && r.status != -EPROTO)
			ret = -EPROTO;
		if (s >= 0)
			close(s);
	}
	printf("CASE churn: %s %ld of %ld connections in %.3f s: %s\n",
	       ret ? "FAIL" : "PASS", ret ? i - 1 : i, n,
	       (now_ms() - t0) / 1e3, ret ? strerror(-ret) : "");
	return ret ? 1 : 0;
}

static int run_hangup(long n)
{
	struct pto_msg m = { .type = PTO_MSG_PING };
	double t0 = now_ms();
	int s, ret = 0;
	long i;

	for (i = 0; i < n && !ret; i++) {
		s = raw_connect();
		if (s < 0) {
			ret = -errno;
			continue;	/* ends the loop after i++: i - 1 made */
		}
		if (send(s, &m, offsetof(struct pto_msg, text) + 1,
			 MSG_NOSIGNAL) < 0 && errno != EPIPE)
			ret = -errno;
		close(s);
	}
	printf("CASE hangup: %s %ld of %ld connections in %.3f s: %s\n",
	       ret ? "FAIL" : "PASS", ret ? i - 1 : i, n,
	       (now_ms() - t0) / 1e3, ret ? strerror(-ret) : "");
	return ret ? 1 : 0;
}

static int run_conns(long n)
{
	int socks[256], i, ret = 0;
	struct pto_msg r = { 0 };

	for (i = 0; i < n && i < 256; i++) {
		ret = raw_ping(&socks[i], &r);
		/* accepted: "hello first" */
		if (ret || r.status != -EPROTO)
			break;
	}
	printf("conns: %d accepted, then %s %d \"%s\"\n", i,
	       ret ? "error" : "status", ret ? ret : r.status,
	       ret ? strerror(-ret) : r.text);
	while (i >= 0) {
		if (i < 256 && socks[i] >= 0)
			close(socks[i]);
		i--;
	}
	return 0;
}

/* ---- memory handed to ptod, then freed (GM pins) ------------------------------- */

struct gm_buf {
	uint32_t handle;
	uint64_t dev, len, off;
};

/* A CLIENT file of the device libpto uses, or -1. */
static int dev_client(void)
{
	const char *path = getenv("PTO_DEVICE");
	struct pto_set_role sr = { .size = sizeof(sr), .role = PTO_ROLE_CLIENT };
	int fd = open(path ? path : "/dev/pto0", O_RDWR | O_CLOEXEC);

	if (fd >= 0 && ioctl(fd, PTO_IOC_SET_ROLE, &sr)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int gm_alloc(int fd, uint64_t len, struct gm_buf *b)
{
	struct pto_gm_alloc a = { .size = sizeof(a), .len = len };

	if (ioctl(fd, PTO_IOC_GM_ALLOC, &a))
		return -errno;
	*b = (struct gm_buf){ .handle = a.handle, .dev = a.dev_addr,
			      .len = (len + 4095) & ~4095ULL,
			      .off = a.mmap_offset };
	return 0;
}

static int gm_free(int fd, uint32_t handle)
{
	struct pto_gm_free f = { .size = sizeof(f), .handle = handle };

	return ioctl(fd, PTO_IOC_GM_FREE, &f) ? -errno : 0;
}

static uint64_t gm_free_bytes(int fd)
{
	struct pto_info i = { .size = sizeof(i) };

	return ioctl(fd, PTO_IOC_GET_INFO, &i) ? 0 : i.gm_free;
}

static void *gm_map(int fd, const struct gm_buf *b)
{
	void *p = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)b->off);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Another tenant takes all the GM there is (@free_bytes are free): buffers
 * as large as fit, halving down to a page, each from @alloc(@ctx, ...).
 * Returns how many (at most @max).
 */
static int fill_gm(int (*alloc)(void *ctx, uint64_t len, struct gm_buf *b),
		   void *ctx, uint64_t free_bytes, struct gm_buf *b, int max)
{
	uint64_t len = free_bytes & ~4095ULL;
	int n = 0;

	while (len >= 4096 && n < max) {
		if (alloc(ctx, len, &b[n]) == 0)
			n++;
		else
			len = len / 2 & ~4095ULL;
	}
	return n;
}

static int fd_alloc(void *fd, uint64_t len, struct gm_buf *b)
{
	return gm_alloc(*(int *)fd, len, b);
}

/* fill_gm() by a tenant with its own device file @fd. */
static int tenant_fill(int fd, struct gm_buf *b, int max)
{
	return fill_gm(fd_alloc, &fd, gm_free_bytes(fd), b, max);
}

/*
 * Does any tenant buffer overlap [@dev, +@len) (memory ptod still uses)?
 * If so, fill it, give ptod time to write, and say whether it did.
 */
static int tenant_overlaps(int fd, const struct gm_buf *b, int n,
			   const char *what, uint64_t dev, uint64_t len)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		uint8_t *p;
		uint64_t k;

		if (b[i].dev >= dev + len || b[i].dev + b[i].len <= dev)
			continue;
		bad = 1;
		printf("the freed %s [0x%llx, +%llu) went to another tenant (0x%llx, +%llu) while ptod still uses it\n",
		       what, (unsigned long long)dev, (unsigned long long)len,
		       (unsigned long long)b[i].dev,
		       (unsigned long long)b[i].len);
		p = gm_map(fd, &b[i]);
		if (!p)
			continue;
		memset(p, 0x5a, b[i].len);
		sleep(3);	/* ptod's runner parks about once a second */
		for (k = 0; k < b[i].len && p[k] == 0x5a; k++)
			;
		if (k < b[i].len)
			printf("ptod wrote into the other tenant's buffer at +%llu\n",
			       (unsigned long long)k);
		munmap(p, b[i].len);
	}
	return bad;
}

/* Hello and KERNEL_REG on a raw connection, as libpto does them. */
static int freed_handover(int sock, int dev, const struct gm_buf *st,
			  const struct gm_buf *kb)
{
	struct pto_stream_hdr *sh = gm_map(dev, st);
	struct pto_kblob_hdr *kh = gm_map(dev, kb);
	struct pto_msg m;
	int ok;

	if (!sh || !kh)
		return 0;
	sh->magic = PTO_STREAM_MAGIC;
	sh->data_size = 32768;
	kh->magic = PTO_KBLOB_MAGIC;
	kh->version = PTO_KBLOB_VERSION;
	kh->size = 64;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_HELLO;
	m.u.hello.wire_version = PTO_WIRE_VERSION;
	m.u.hello.stream_addr = st->dev;
	m.u.hello.stream_len = st->len;
	ok = raw_expect(sock, &m, sizeof(m), dev, 0, "hello");
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_KERNEL_REG;
	m.u.kreg.func_id = 0;
	m.u.kreg.core_type = PTO2_WORKER_VECTOR;
	m.u.kreg.blob_addr = kb->dev;
	ok &= raw_expect(sock, &m, sizeof(m), -1, 0, "kernel registered");
	munmap(sh, st->len);
	munmap(kh, kb->len);
	return ok;
}

/* After the client left, its memory goes back to GM (the pins went). */
static int freed_returned(int fd, uint64_t want)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (gm_free_bytes(fd) >= want)
			return 1;
		usleep(100000);
	}
	printf("GM free %llu, %llu before the client: its memory did not come back\n",
	       (unsigned long long)gm_free_bytes(fd), (unsigned long long)want);
	return 0;
}

/*
 * A client hands ptod its stream buffer and a kernel blob, then frees
 * both; another tenant allocates all of GM. The tenant must get none of
 * that memory while ptod can still use it, and ptod must write none of
 * the tenant's; once the client is gone, the memory comes back.
 */
static int run_freed(void)
{
	struct gm_buf st, kb, t[256];
	int dev = dev_client(), tenant = dev_client(), sock = raw_connect();
	int ok, n;
	uint64_t free0;

	if (dev < 0 || tenant < 0 || sock < 0) {
		printf("CASE freed: FAIL device or socket: %s\n", strerror(errno));
		return 1;
	}
	free0 = gm_free_bytes(dev);
	ok = !gm_alloc(dev, 65536, &st) && !gm_alloc(dev, 4096, &kb) &&
	     freed_handover(sock, dev, &st, &kb);
	ok &= !gm_free(dev, st.handle) && !gm_free(dev, kb.handle);
	n = tenant_fill(tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ok &= !tenant_overlaps(tenant, t, n, "stream buffer", st.dev, st.len);
	ok &= !tenant_overlaps(tenant, t, n, "kernel blob", kb.dev, kb.len);
	close(tenant);
	close(sock);
	close(dev);
	tenant = dev_client();
	ok &= tenant >= 0 && freed_returned(tenant, free0);
	close(tenant);
	printf("CASE freed: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/* The tensor's buffer freed while its run goes on (run_freed_tensor). */
static struct {
	uint64_t dev, len;
	int bad;
} ft;

static int orch_freed_tensor(PTO2Runtime *rt, uint64_t *args, int argc)
{
	struct gm_buf t[256];
	int tenant, n, ret;

	(void)args;
	(void)argc;
	probe_submit(rt, 0, 1, 0);
	ret = probe_wait(rt, 0, 1);	/* ptod took the tensor: it ran */
	if (ret)
		return ret;
	ft.dev = pto_buf_dev_addr(pr_buf);
	ft.len = pto_buf_size(pr_buf);
	pto_buf_free(pr_buf);
	pr_buf = NULL;
	tenant = dev_client();
	if (tenant < 0)
		return -errno;
	n = tenant_fill(tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ft.bad = tenant_overlaps(tenant, t, n, "tensor", ft.dev, ft.len);
	close(tenant);
	/* a task of the same run may still name it */
	{
		uint64_t shape[1] = { sizeof(struct pto_probe_rec) / 4 };
		Tensor x = make_tensor_external((void *)(uintptr_t)(ft.dev + 32),
						shape, 1, PTO_DT_INT32);
		PTOParam p[] = { make_output_param(&x), make_scalar_param(2) };

		pto2_rt_submit_task(rt, PROBE_AIV, PTO2_WORKER_VECTOR, p, 2);
	}
	return 0;
}

/*
 * A client frees a tensor's buffer while a run that uses it goes on, and
 * another tenant allocates all of GM: it gets none of that memory (ptod
 * pinned it for the run), and the memory comes back once the run is over.
 * The run's later task that names the freed buffer either completes (its
 * kernel runs in pto-aicore, which reaches all of GM) or fails with the
 * kernel's -EFAULT (it runs in the client's sandbox, which maps only
 * buffers the client still owns); either way nothing of another tenant is
 * touched.
 */
static int run_freed_tensor(void)
{
	char msg[PTO_MSG_TEXT];
	int dev = dev_client(), ok, ret;
	uint64_t free0;

	if (dev < 0 || load_probe()) {
		printf("CASE freed-tensor: FAIL setup\n");
		return 1;
	}
	free0 = gm_free_bytes(dev);
	if (pto_buf_alloc(cl, 65536, &pr_buf)) {
		printf("CASE freed-tensor: FAIL %s\n", pto_last_error(cl));
		return 1;
	}
	memset(pto_buf_ptr(pr_buf), 0, 65536);
	ret = pto_run(cl, orch_freed_tensor, NULL, 0, msg, sizeof(msg));
	printf("run: status=%d %s\n", ret, msg);
	ok = (!ret || (ret == -EIO && strstr(msg, "failed with -14"))) &&
	     !ft.bad && freed_returned(dev, free0);
	close(dev);
	printf("CASE freed-tensor: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/* ---- a kernel id loaded again and again, its old blobs freed (JIT) ----------------- */

/* e2edir's @so in a zeroed buffer of at least @min bytes (*@len), or NULL. */
static void *kernel_image(const char *so, size_t min, size_t *len)
{
	char path[PATH_MAX + 192];
	struct stat st;
	uint8_t *img = NULL;
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", e2edir, so);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0)
		goto out;
	*len = (size_t)st.st_size > min ? (size_t)st.st_size : min;
	img = calloc(1, *len);
	if (img)
		n = read(fd, img, (size_t)st.st_size);
	if (n != st.st_size) {
		free(img);
		img = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	if (!img)
		fprintf(stderr, "%s: cannot read it\n", path);
	return img;
}

static int orch_reload_quota(PTO2Runtime *rt, uint64_t *args, int argc)
{
	(void)argc;
	probe_submit(rt, 0, (uint32_t)args[0], 0);
	return 0;
}

/*
 * reload-quota COUNT MIB: COUNT times, load probe_kernel.so again as
 * PROBE_AIV from a fresh blob of MIB MiB (the .so, padded: the loader
 * ignores the tail; libpto frees the blob it replaces) and run one task
 * of it, which must leave its record. Under a GM quota below COUNT * MIB
 * it passes only if ptod lets go of each replaced blob.
 */
static int run_reload_quota(long count, long mib)
{
	char msg[PTO_MSG_TEXT];
	size_t len;
	void *img = kernel_image("probe_kernel.so", (size_t)mib << 20, &len);
	uint64_t seq;
	long i;
	int ret = img ? pto_buf_alloc(cl, 4096, &pr_buf) : -ENOENT;

	for (i = 0; !ret && i < count; i++) {
		ret = pto_kernel_load_mem(cl, PROBE_AIV, PTO2_WORKER_VECTOR,
					  img, len);
		if (ret) {
			printf("load %ld of %ld MiB: %s\n", i + 1, mib,
			       pto_last_error(cl));
			break;
		}
		seq = (uint64_t)i + 1;
		ret = pto_run(cl, orch_reload_quota, &seq, 1, msg, sizeof(msg));
		if (!ret && probe_rec(0)->seq != seq)
			ret = -ENODATA;
		if (ret)
			printf("run %ld: %s %s\n", i + 1, strerror(-ret), msg);
	}
	free(img);
	printf("CASE reload-quota: %s after %ld loads of %ld MiB\n",
	       ret ? "FAIL" : "PASS", i, mib);
	return ret ? 1 : 0;
}

/* Until *@count (the rendezvous kernel's counter) is @want (bounded). */
static int count_wait(const uint32_t *count, uint32_t want)
{
	double until = now_ms() + PROBE_READY_MS;

	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < want) {
		if (now_ms() > until)
			return -ETIMEDOUT;
		usleep(1000);
	}
	return 0;
}

/* Counter @key of the user-mode device (ptod's DEV_STATUS), or -1. */
static long long udev_counter(const char *key)
{
	struct pto_msg m;
	int s = raw_connect();
	size_t klen = strlen(key);
	long long v = -1;
	ssize_t n = -1;
	char *line;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_STATUS;
	if (s >= 0 && send(s, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m))
		n = recv(s, &m, sizeof(m), 0);
	if (s >= 0)
		close(s);
	if (n <= 0 || pto_msg_from_ptod(&m, (size_t)n, NULL, 0) || m.status)
		return -1;
	for (line = m.text; line; line = strchr(line, '\n')) {
		line += *line == '\n';
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = atoll(line + klen + 1);
	}
	return v;
}

/*
 * Bytes this process maps of the file that @p is a mapping of (GM: the
 * user-mode device's memfd, or /dev/ptoN), from /proc/self/maps; -1 if
 * none maps @p.
 */
static long long mapped_like(const void *p)
{
	unsigned long long lo, hi, ino, want_ino = 0;
	unsigned int maj, min, want_maj = 0, want_min = 0;
	FILE *f = fopen("/proc/self/maps", "re");
	long long sum = -1;
	char *line = NULL;
	size_t cap = 0;
	int pass;

	for (pass = 0; f && pass < 2; pass++) {
		rewind(f);
		while (getline(&line, &cap, f) > 0) {
			if (sscanf(line, "%llx-%llx %*s %*s %x:%x %llu", &lo,
				   &hi, &maj, &min, &ino) != 5 || !ino)
				continue;
			if (!pass && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
				want_maj = maj;
				want_min = min;
				want_ino = ino;
				sum = 0;
			} else if (pass && sum >= 0 && ino == want_ino &&
				   maj == want_maj && min == want_min) {
				sum += (long long)(hi - lo);
			}
		}
	}
	free(line);
	if (f)
		fclose(f);
	return sum;
}

/*
 * reload-defer (user-mode device): libpto loads RENDEZVOUS_K again while
 * a task of the old blob runs (it waits for us). It must keep the old
 * blob's buffer while that graph is in flight, and free it once the
 * graph is over. libpto keeps each buffer of its own mapped until it
 * frees it, so what it maps of GM shows that: the new blob more while
 * the graph is in flight, back where it was once it is over. (The
 * device's gm_buffers cannot: ptod pins the old blob for that run, so
 * its memory is counted until the run is over whenever libpto frees it.
 * It checks that the memory is back after the graph.)
 *
 * reload-cap: then the kernel is loaded again and again while the graph
 * is in flight: ptod keeps each replaced blob pinned for the run, up to
 * 256 of them, so one of the next 300 loads must fail with -EBUSY naming
 * that limit, and a load after the graph must pass.
 */
static int run_reload_defer(void)
{
	PTO2Runtime *rt = pto_client_runtime(cl);
	uint64_t shape[1] = { 16 };
	char msg[PTO_MSG_TEXT] = "";
	long long n0, n1, n2, m0, m1, m2;
	char path[PATH_MAX + 192];
	int ret, loads, busy = 0;
	bool cap_ok;
	uint64_t tag;

	if (load_e2e_kernel(RENDEZVOUS_K, "rendezvous_kernel.so") ||
	    !(sc_x = gm_copy(NULL, 4096)) || pto_graph_begin(cl, &tag)) {
		printf("CASE reload-defer: FAIL setup\n");
		return 1;
	}
	{
		Tensor t = make_tensor_external((void *)(uintptr_t)pto_buf_dev_addr(sc_x),
						shape, 1, PTO_DT_INT32);
		PTOParam p[] = { make_inout_param(&t), make_scalar_param(2) };

		pto2_rt_submit_task(rt, RENDEZVOUS_K, PTO2_WORKER_VECTOR, p, 2);
	}
	ret = pto_graph_end(cl);
	if (!ret)
		ret = count_wait(pto_buf_ptr(sc_x), 1);
	n0 = udev_counter("gm_buffers");
	m0 = mapped_like(pto_buf_ptr(sc_x));
	if (!ret)
		ret = load_e2e_kernel(RENDEZVOUS_K, "rendezvous_kernel.so");
	n1 = udev_counter("gm_buffers");
	m1 = mapped_like(pto_buf_ptr(sc_x));
	snprintf(path, sizeof(path), "%s/rendezvous_kernel.so", e2edir);
	for (loads = 0; !ret && loads < 300; loads++) {
		busy = pto_kernel_load(cl, RENDEZVOUS_K, PTO2_WORKER_VECTOR,
				       path);
		if (busy)
			break;
	}
	printf("reload-cap: %d more loads in the run, then %d: %s\n", loads,
	       busy, busy ? pto_last_error(cl) : "");
	/* the load before the loop replaced one blob: 255 more fit */
	cap_ok = loads == 255 && busy == -EBUSY &&
		 strstr(pto_last_error(cl), "(at most 256)");
	__atomic_fetch_add((uint32_t *)pto_buf_ptr(sc_x), 1, __ATOMIC_ACQ_REL);
	if (!ret)
		ret = pto_graph_wait(cl, tag, msg, sizeof(msg));
	cap_ok &= !ret && !load_e2e_kernel(RENDEZVOUS_K, "rendezvous_kernel.so");
	printf("CASE reload-cap: %s\n", cap_ok ? "PASS" : "FAIL");
	n2 = udev_counter("gm_buffers");
	m2 = mapped_like(pto_buf_ptr(sc_x));
	printf("status=%d %s; gm_buffers %lld before the reload, %lld after, %lld once the graph was over; GM mapped by libpto %lld, %lld, %lld bytes\n",
	       ret, msg, n0, n1, n2, m0, m1, m2);
	ret = !ret && n0 >= 0 && n1 == n0 + 1 && n2 == n0 && m0 > 0 &&
	      m1 > m0 && m2 == m0;
	printf("CASE reload-defer: %s\n", ret ? "PASS" : "FAIL");
	return ret && cap_ok ? 0 : 1;
}

/* One check of run_unpriv(): @got is the result, @want the errno expected. */
static int unpriv_expect(const char *what, int got, int want)
{
	printf("%s: %s (%s)\n", what, strerror(-got),
	       got == want ? "as it must" : "WRONG");
	return got == want;
}

static int set_role(int fd, uint32_t role)
{
	struct pto_set_role sr = { .size = sizeof(sr), .role = role };

	return ioctl(fd, PTO_IOC_SET_ROLE, &sr) ? -errno : 0;
}

static int try_map(int fd, uint64_t off, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

/*
 * Defect 2, through the real node as a local user in the device's group:
 * no AICPU or executor role (so no cores, no pins), no GM beyond its own
 * buffers, no register file.
 */
static int run_unpriv(void)
{
	const char *path = getenv("PTO_DEVICE") ? getenv("PTO_DEVICE") : "/dev/pto0";
	int a = open(path, O_RDWR | O_CLOEXEC), e = open(path, O_RDWR | O_CLOEXEC);
	int c = dev_client(), ok = a >= 0 && e >= 0 && c >= 0;
	struct pto_gm_pin gp = { .size = sizeof(gp), .fd = c, .len = 1 };
	struct gm_buf b = { 0 };

	if (!ok) {
		printf("CASE unpriv: FAIL open %s: %s\n", path, strerror(errno));
		return 1;
	}
	ok &= unpriv_expect("AICPU role", set_role(a, PTO_ROLE_AICPU), -EPERM);
	ok &= unpriv_expect("EXECUTOR role", set_role(e, PTO_ROLE_EXECUTOR),
			    -EPERM);
	ok &= unpriv_expect("register file, no role",
			    try_map(a, PTO_MMAP_REGS, PTO_REGS_SIZE, PROT_READ),
			    -EACCES);
	ok &= !gm_alloc(c, 8192, &b);
	ok &= unpriv_expect("its own buffer", try_map(c, b.off, 8192,
				PROT_READ | PROT_WRITE), 0);
	ok &= unpriv_expect("GM past its buffer",
			    try_map(c, b.off, 3 * 4096, PROT_READ), -EACCES);
	ok &= unpriv_expect("GM before its buffer",
			    b.off > PTO_MMAP_GM ?
			    try_map(c, b.off - 4096, 4096, PROT_READ) : -EACCES,
			    -EACCES);
	ok &= unpriv_expect("all of GM", try_map(c, PTO_MMAP_GM, 4096, PROT_READ),
			    b.off == PTO_MMAP_GM ? 0 : -EACCES);
	ok &= unpriv_expect("register file, client",
			    try_map(c, PTO_MMAP_REGS, PTO_REGS_SIZE,
				    PROT_READ | PROT_WRITE), -EACCES);
	gp.dev_addr = b.dev;
	ok &= unpriv_expect("GM_PIN", ioctl(c, PTO_IOC_GM_PIN, &gp) ? -errno : 0,
			    -EACCES);
	close(a);
	close(e);
	close(c);
	printf("CASE unpriv: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/* ---- a client that writes its own stream: record lengths ----------------------- */

/*
 * A client without libpto (pto_e2e reclen): its connection to ptod, its
 * device file (pto.ko's, or the one ptod makes on a connection that opens
 * the user-mode device), the file its buffers map from, and its stream.
 */
struct raw_client {
	int sock;
	int udev;		/* user-mode device: the device connection */
	int file;		/* handed over at hello */
	int map_fd;		/* its buffers map from it (pto.ko: @file) */
	uint64_t gm_size;	/* user-mode device: GM's size */
	struct gm_buf sbuf;	/* the stream buffer */
	struct pto_stream_hdr *sh;
	uint8_t *data;
	uint32_t dsize;		/* the data area's size, a power of 2 */
	uint64_t head;
};

#define RAW_STREAM	8192	/* the stream's data area (most raw clients) */
#define RAW_TAG		1	/* the tag of the raw client's graph */

/*
 * A request on the user-mode device's connection @s: the reply in @m, its
 * descriptors (up to PTO_FDPASS_MAX) in @fds; the reply's status or -errno.
 */
static int udev_request(int s, struct pto_msg *m, int *fds, unsigned int *nfds)
{
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;
	ssize_t n;

	*nfds = 0;
	if (send(s, m, offsetof(struct pto_msg, text) + 1, MSG_NOSIGNAL) < 0)
		return -errno;
	pto_msg_want_fds(&mh, &cm);
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	if (n > 0)
		*nfds = pto_msg_take_fds(&mh, fds, PTO_FDPASS_MAX);
	if (n < 0)
		return -errno;
	if (pto_msg_from_ptod(m, (size_t)n, NULL, 0) ||
	    m->type != PTO_MSG_REPLY)
		return -EPROTO;
	return m->status;
}

/* Open the device as a client: pto.ko's node, or ptod's user-mode device. */
static int raw_dev_open(struct raw_client *r)
{
	const char *dev = getenv("PTO_DEVICE");
	int fds[PTO_FDPASS_MAX], ret;
	unsigned int n;
	struct pto_msg m;

	if (!dev || strcmp(dev, PTO_DEVICE_USER)) {
		r->file = r->map_fd = dev_client();
		return r->file < 0 ? -errno : 0;
	}
	r->udev = raw_connect();
	if (r->udev < 0)
		return -errno;
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_OPEN;
	ret = udev_request(r->udev, &m, fds, &n);
	if (!ret && n != 2)
		ret = -EPROTO;
	if (ret) {
		while (n)
			close(fds[--n]);
		return ret;
	}
	r->file = fds[0];
	r->map_fd = fds[1];
	r->gm_size = m.u.dev.info.gm_size;
	return 0;
}

/* Request @m on the user-mode device's connection: the reply's status. */
static int raw_gm_request(struct raw_client *r, struct pto_msg *m)
{
	int fds[PTO_FDPASS_MAX], ret;
	unsigned int n;

	ret = udev_request(r->udev, m, fds, &n);
	while (n)
		close(fds[--n]);
	return ret;
}

/* A GM buffer of @len bytes of the client's, not mapped: 0 or -errno. */
static int raw_alloc(struct raw_client *r, uint64_t len, struct gm_buf *b)
{
	struct pto_msg m;
	int ret;

	if (r->udev < 0)
		return gm_alloc(r->file, len, b);
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_GM_ALLOC;
	m.u.gm.len = len;
	ret = raw_gm_request(r, &m);
	if (ret)
		return ret;
	*b = (struct gm_buf){ .handle = m.u.gm.handle, .dev = m.u.gm.dev_addr,
			      .len = m.u.gm.len, .off = m.u.gm.mmap_offset };
	return 0;
}

/* A GM buffer of @len bytes of the client's, mapped: its address or NULL. */
static void *raw_buf(struct raw_client *r, uint64_t len, struct gm_buf *b)
{
	return raw_alloc(r, len, b) ? NULL : gm_map(r->map_fd, b);
}

/* GM_FREE of the client's buffer @handle: 0 or -errno. */
static int raw_free(struct raw_client *r, uint32_t handle)
{
	struct pto_msg m;

	if (r->udev < 0)
		return gm_free(r->file, handle);
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_GM_FREE;
	m.u.gm.handle = handle;
	return raw_gm_request(r, &m);
}

/* GM not held by any buffer, as the device says (0 if it cannot). */
static uint64_t raw_gm_free_bytes(struct raw_client *r)
{
	long long used;

	if (r->udev < 0)
		return gm_free_bytes(r->file);
	used = udev_counter("gm_bytes_used");
	return used < 0 || (uint64_t)used > r->gm_size ?
	       0 : r->gm_size - (uint64_t)used;
}

static int raw_alloc_ctx(void *r, uint64_t len, struct gm_buf *b)
{
	return raw_alloc(r, len, b);
}

/* fill_gm() by a raw client. */
static int raw_fill(struct raw_client *r, struct gm_buf *b, int max)
{
	return fill_gm(raw_alloc_ctx, r, raw_gm_free_bytes(r), b, max);
}

/* freed_returned() for a raw client. */
static int raw_returned(struct raw_client *r, uint64_t want)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (raw_gm_free_bytes(r) >= want)
			return 1;
		usleep(100000);
	}
	printf("GM free %llu, %llu before the client: its memory did not come back\n",
	       (unsigned long long)raw_gm_free_bytes(r),
	       (unsigned long long)want);
	return 0;
}

static void raw_close(struct raw_client *r)
{
	if (r->sh)
		munmap(r->sh, r->sbuf.len);
	if (r->sock >= 0)
		close(r->sock);
	if (r->map_fd >= 0 && r->map_fd != r->file)
		close(r->map_fd);
	if (r->file >= 0)
		close(r->file);
	if (r->udev >= 0)
		close(r->udev);
}

/*
 * The device alone, opened as a client (no stream, no hello): another
 * tenant, which allocates and frees; raw_close() closes it.
 */
static int raw_tenant(struct raw_client *r)
{
	*r = (struct raw_client){ .sock = -1, .udev = -1, .file = -1,
				  .map_fd = -1 };
	return raw_dev_open(r);
}

/*
 * Device, stream buffer (@dsize bytes of data) and connection, as libpto
 * makes them before its hello; the stream's head and tail start at
 * @start (libpto: 0). The hello to send is in @m.
 */
static int raw_setup(struct raw_client *r, uint64_t start, uint32_t dsize,
		     struct pto_msg *m)
{
	int ret;

	ret = raw_tenant(r);
	r->dsize = dsize;
	if (ret)
		return ret;
	r->sh = raw_buf(r, PTO_STREAM_HDR_SIZE + dsize, &r->sbuf);
	if (!r->sh)
		return -ENOMEM;
	r->data = (uint8_t *)r->sh + PTO_STREAM_HDR_SIZE;
	r->sh->magic = PTO_STREAM_MAGIC;
	r->sh->data_size = dsize;
	r->sh->head = r->sh->tail = r->head = start;
	r->sock = raw_connect();
	if (r->sock < 0)
		return -errno;
	memset(m, 0, sizeof(*m));
	m->type = PTO_MSG_HELLO;
	m->u.hello.wire_version = PTO_WIRE_VERSION;
	m->u.hello.stream_addr = r->sbuf.dev;
	m->u.hello.stream_len = r->sbuf.len;
	return 0;
}

/*
 * Device, stream buffer (@dsize bytes of data), connection and hello, as
 * libpto does them; the stream's head and tail start at @start (libpto:
 * 0). A @small client's hello asks for the least task window and heap
 * (its runtime's GM).
 */
static int raw_open_ring(struct raw_client *r, uint64_t start, bool small,
			 uint32_t dsize)
{
	struct pto_msg m;
	int ret;

	ret = raw_setup(r, start, dsize, &m);
	if (ret)
		return ret;
	if (small) {
		m.u.hello.env_set = 1U << PTO_ENV_TASK_WINDOW | 1U << PTO_ENV_HEAP;
		snprintf(m.u.hello.env[PTO_ENV_TASK_WINDOW], PTO_HELLO_ENV_LEN,
			 "16");
		snprintf(m.u.hello.env[PTO_ENV_HEAP], PTO_HELLO_ENV_LEN,
			 "65536");
	}
	return raw_expect(r->sock, &m, sizeof(m), r->file, 0, "hello") ?
	       0 : -EPROTO;
}

static int raw_open_how(struct raw_client *r, uint64_t start, bool small)
{
	return raw_open_ring(r, start, small, RAW_STREAM);
}

static int raw_open_at(struct raw_client *r, uint64_t start)
{
	return raw_open_how(r, start, false);
}

static int raw_open(struct raw_client *r)
{
	return raw_open_at(r, 0);
}

/*
 * Append a record of @type that says it is @len bytes long: its header,
 * then zeros up to @len; the next one starts after both.
 */
static void raw_rec(struct raw_client *r, uint32_t type, uint32_t len)
{
	struct pto_rec *h = (struct pto_rec *)(void *)(r->data + r->head);
	uint32_t n = len > sizeof(*h) ? len : sizeof(*h);

	memset(h, 0, n);
	h->type = type;
	h->len = len;
	h->tag = RAW_TAG;
	r->head += n;
}

/* Publish the records appended so far and ring the doorbell. */
static int raw_publish(struct raw_client *r)
{
	struct pto_msg m;

	atomic_store_explicit(&r->sh->head, r->head, memory_order_release);
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DOORBELL;
	return send(r->sock, &m, offsetof(struct pto_msg, text) + 1,
		    MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/*
 * Wait for the DONE of the graph, or ptod's CLOSING (a stream refused
 * outside any graph): its status, its text in @msg.
 */
static int raw_done(struct raw_client *r, char *msg, size_t msglen)
{
	struct pto_msg m;
	char why[48];
	ssize_t n;

	snprintf(msg, msglen, "no DONE: ptod hung up");
	for (;;) {
		n = recv(r->sock, &m, sizeof(m), 0);
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		if (pto_msg_from_ptod(&m, (size_t)n, why, sizeof(why))) {
			snprintf(msg, msglen, "ptod broke the protocol: %s",
				 why);
			return -EPROTO;
		}
		if ((m.type == PTO_MSG_DONE && m.tag == RAW_TAG) ||
		    m.type == PTO_MSG_CLOSING) {
			snprintf(msg, msglen, "%s", m.text);
			return m.status;
		}
	}
}

/*
 * One graph on a new raw client: GRAPH_BEGIN, the records @fill appends
 * (given @arg), GRAPH_END. Its status and message.
 */
static int raw_graph_of(void (*fill)(struct raw_client *r, const void *arg),
			const void *arg, char *msg, size_t msglen)
{
	struct raw_client r;
	int ret;

	snprintf(msg, msglen, "no graph");
	ret = raw_open(&r);
	if (!ret) {
		raw_rec(&r, PTO_REC_GRAPH_BEGIN, sizeof(struct pto_rec_graph));
		fill(&r, arg);
		raw_rec(&r, PTO_REC_GRAPH_END, sizeof(struct pto_rec));
		ret = raw_publish(&r);
	}
	if (!ret)
		ret = raw_done(&r, msg, msglen);
	raw_close(&r);
	return ret;
}

/* A SCOPE_BEGIN that says it is *@arg (uint32_t) bytes long, SCOPE_END. */
static void fill_scope(struct raw_client *r, const void *arg)
{
	raw_rec(r, PTO_REC_SCOPE_BEGIN, *(const uint32_t *)arg);
	raw_rec(r, PTO_REC_SCOPE_END, sizeof(struct pto_rec));
}

static int raw_graph(uint32_t len, char *msg, size_t msglen)
{
	return raw_graph_of(fill_scope, &len, msg, msglen);
}

/*
 * Case @what/@arg of a raw client whose graph ended with @bad and @msg
 * (printed): passed if it was refused with @want and the same process's
 * next client (a new connection) runs a graph of well-formed records.
 * 0 if it passed, else 1.
 */
static int raw_refused_with(const char *what, const char *arg, int bad,
			    int want, const char *msg)
{
	char next[PTO_MSG_TEXT], name[48];
	int good;

	printf("%s %s: status=%d %s\n", what, arg, bad, msg);
	good = raw_graph(sizeof(struct pto_rec), next, sizeof(next));
	printf("%s %s, the next client: status=%d %s\n", what, arg, good, next);
	snprintf(name, sizeof(name), "%s/%s", what, arg);
	return report_case(name, bad == want && !good, bad, "");
}

/* The same, refused as a corrupt stream (-EPROTO). */
static int raw_refused_then_next(const char *what, const char *arg, int bad,
				 const char *msg)
{
	return raw_refused_with(what, arg, bad, -EPROTO, msg);
}

/*
 * Stream records of a length wire.h does not allow (a multiple of
 * PTO_REC_ALIGN, at least a header) are refused: for each length of
 * @argv, a raw client's graph with a record of that length must fail with
 * -EPROTO, then the same process's next client (a new connection) must
 * run a graph of well-formed records. The messages are printed for the
 * caller to check.
 */
static int run_reclen(int argc, char **argv)
{
	char msg[PTO_MSG_TEXT];
	int i, bad, failed = 0;

	for (i = 0; i < argc; i++) {
		uint32_t len = (uint32_t)strtoul(argv[i], NULL, 0);

		if (len > RAW_STREAM / 2) {
			printf("reclen: %u is too long for our stream\n", len);
			return 2;
		}
		bad = raw_graph(len, msg, sizeof(msg));
		failed += raw_refused_then_next("reclen", argv[i], bad, msg);
	}
	return failed ? 1 : 0;
}

/*
 * A hello whose PTO2_RING_HEAP is "1", a newline and @line (at most
 * PTO_HELLO_ENV_LEN - 3 bytes): ptod refuses it with -EINVAL and a
 * message that quotes the value, which it logs too. 0 if it did.
 */
static int run_forge(const char *line)
{
	struct raw_client r;
	struct pto_msg m;
	int ret, ok = 0;

	if (strlen(line) > PTO_HELLO_ENV_LEN - 3) {
		printf("forge: '%s' is too long for a variable\n", line);
		return 2;
	}
	ret = raw_setup(&r, 0, RAW_STREAM, &m);
	if (!ret) {
		m.u.hello.env_set = 1U << PTO_ENV_HEAP;
		snprintf(m.u.hello.env[PTO_ENV_HEAP], PTO_HELLO_ENV_LEN,
			 "1\n%s", line);
		ok = raw_expect(r.sock, &m, sizeof(m), r.file, -EINVAL,
				"forge");
	} else {
		printf("forge: %s\n", strerror(-ret));
	}
	raw_close(&r);
	printf("CASE forge: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/*
 * Wait up to @ms for ptod to have consumed everything @r published (its
 * tail at our head): 0 or -ETIMEDOUT.
 */
static int raw_drained_ms(struct raw_client *r, int ms)
{
	int i;

	for (i = 0; i < ms; i++) {
		if (atomic_load_explicit(&r->sh->tail, memory_order_acquire) ==
		    r->head)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int raw_drained(struct raw_client *r)
{
	return raw_drained_ms(r, 10000);
}

/* PADs from @r's head up to ring offset @to (head < to <= RAW_STREAM). */
static void raw_pad_to(struct raw_client *r, uint64_t to)
{
	while (r->head < to) {
		uint64_t n = to - r->head;

		raw_rec(r, PTO_REC_PAD, n > 4096 ? 4096 : (uint32_t)n);
	}
}

/*
 * One graph of a raw client whose stream breaks a rule of its head or of
 * where a record lies (@how, see run_rawhead()). Its status and message.
 */
static int raw_bad_head(const char *how, char *msg, size_t msglen)
{
	bool edge = !strcmp(how, "edge"), outside = !strcmp(how, "outside");
	struct raw_client r;
	struct pto_rec *h;
	int ret;

	snprintf(msg, msglen, "no graph");
	/* edge: a tail 8 bytes off the records' alignment, set before hello */
	ret = raw_open_at(&r, edge ? 8 : 0);
	if (!ret && !outside) {
		raw_rec(&r, PTO_REC_GRAPH_BEGIN, sizeof(struct pto_rec_graph));
		ret = raw_publish(&r);
		if (!ret)
			ret = raw_drained(&r);	/* the graph has begun */
	}
	if (ret)
		goto out;
	if (!strcmp(how, "ahead")) {
		r.head += RAW_STREAM + PTO_REC_ALIGN;
	} else if (edge) {
		/* a record at 8184: 8 bytes before the end of the ring */
		raw_pad_to(&r, RAW_STREAM - 8);
		r.head += sizeof(*h);
	} else if (!strcmp(how, "end")) {
		/* a 48-byte record 32 bytes before the end of the ring */
		raw_pad_to(&r, RAW_STREAM - 32);
		h = (struct pto_rec *)(void *)(r.data + r.head);
		memset(h, 0, sizeof(*h));
		h->type = PTO_REC_SCOPE_BEGIN;
		h->len = 48;
		h->tag = RAW_TAG;
		r.head += 48;
	} else {
		/*
		 * a 64-byte record of which the client published 32 bytes
		 * (outside: before any graph, which no DONE can report)
		 */
		raw_rec(&r, PTO_REC_SCOPE_BEGIN, 64);
		r.head -= 32;
	}
	ret = raw_publish(&r);
	if (!ret)
		ret = raw_done(&r, msg, msglen);
out:
	raw_close(&r);
	return ret;
}

/*
 * A raw client's stream whose head or records break the ring's rules,
 * each case in a graph (its GRAPH_BEGIN consumed first): "ahead" (the
 * head more than a ring past the tail), "edge" (a record whose header
 * does not fit before the end of the ring), "end" (a record that runs
 * past the end of the ring), "published" (a record longer than what the
 * client published). Each must fail its graph with -EPROTO, then the same
 * process's next client must pass; the messages are printed. "outside"
 * is "published" before any graph: ptod must say why it closes the
 * connection (CLOSING, -EPROTO).
 */
static int run_rawhead(int argc, char **argv)
{
	char msg[PTO_MSG_TEXT];
	int i, bad, failed = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "ahead") && strcmp(argv[i], "edge") &&
		    strcmp(argv[i], "end") && strcmp(argv[i], "published") &&
		    strcmp(argv[i], "outside")) {
			printf("rawhead: no case '%s' (ahead, edge, end, published, outside)\n",
			       argv[i]);
			return 2;
		}
		bad = raw_bad_head(argv[i], msg, sizeof(msg));
		failed += raw_refused_then_next("rawhead", argv[i], bad, msg);
	}
	return failed ? 1 : 0;
}

/* A cluster record of @type for @vid. */
static void raw_cluster_rec(struct raw_client *r, uint32_t type, int32_t vid)
{
	struct pto_rec_cluster *cr;

	cr = (struct pto_rec_cluster *)(void *)(r->data + r->head);
	raw_rec(r, type, sizeof(*cr));
	cr->vid = vid;
}

/* A CLUSTER_ALLOC record for each id of @arg (int32_t, up to a 0). */
static void fill_clusters(struct raw_client *r, const void *arg)
{
	const int32_t *vid;

	for (vid = arg; *vid; vid++)
		raw_cluster_rec(r, PTO_REC_CLUSTER_ALLOC, *vid);
}

/*
 * Cluster 1 allocated in a scope that ends (which releases it), cluster 2
 * allocated after it (the same cluster of the device, the first free
 * one), then a CLUSTER_FREE of 1.
 */
static void fill_stale_cluster(struct raw_client *r, const void *arg)
{
	(void)arg;
	raw_rec(r, PTO_REC_SCOPE_BEGIN, sizeof(struct pto_rec));
	raw_cluster_rec(r, PTO_REC_CLUSTER_ALLOC, 1);
	raw_rec(r, PTO_REC_SCOPE_END, sizeof(struct pto_rec));
	raw_cluster_rec(r, PTO_REC_CLUSTER_ALLOC, 2);
	raw_cluster_rec(r, PTO_REC_CLUSTER_FREE, 1);
}

/*
 * Cluster ids (wire.h: 1, 2, ... per graph) out of order, each case in a
 * graph of a raw client: "far" (a first id of 2^28 + 1: ptod once grew its
 * id map to twice that, 2 GiB, for one record), "skip" (1, then 3). Each
 * must fail its graph with -EPROTO, then the same process's next client
 * must pass; the messages are printed. "stale": a CLUSTER_FREE of an id
 * whose scope ended, once a later id got its cluster, must fail the graph
 * with -EINVAL (ptod once freed the later id's cluster).
 */
static int run_rawcluster(int argc, char **argv)
{
	static const int32_t far[] = { (1 << 28) + 1, 0 }, skip[] = { 1, 3, 0 };
	/* one more than ptod's default -L on 24 clusters: half of them */
	static const int32_t half[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
					13, 0 };
	char msg[PTO_MSG_TEXT];
	int i, bad, failed = 0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "half")) {
			/* root is not limited; anyone else is, to 12 */
			int want = getuid() ? -EDQUOT : 0;

			bad = raw_graph_of(fill_clusters, half, msg, sizeof(msg));
			printf("rawcluster half: status=%d %s\n", bad, msg);
			failed += report_case("rawcluster/half", bad == want, bad,
					      msg);
			continue;
		}
		if (!strcmp(argv[i], "far")) {
			bad = raw_graph_of(fill_clusters, far, msg, sizeof(msg));
		} else if (!strcmp(argv[i], "skip")) {
			bad = raw_graph_of(fill_clusters, skip, msg, sizeof(msg));
		} else if (!strcmp(argv[i], "stale")) {
			bad = raw_graph_of(fill_stale_cluster, NULL, msg,
					   sizeof(msg));
			failed += raw_refused_with("rawcluster", argv[i], bad,
						   -EINVAL, msg);
			continue;
		} else {
			printf("rawcluster: no case '%s' (far, skip, stale, half)\n",
			       argv[i]);
			return 2;
		}
		failed += raw_refused_then_next("rawcluster", argv[i], bad, msg);
	}
	return failed ? 1 : 0;
}

/*
 * Wait up to 10 s for room for @len more bytes in @r's ring, publishing
 * what it holds first: 0, -ETIMEDOUT, or raw_publish()'s -errno.
 */
static int raw_room(struct raw_client *r, uint32_t len)
{
	int i, ret;

	if (r->head + len - atomic_load(&r->sh->tail) <= r->dsize)
		return 0;
	ret = raw_publish(r);
	if (ret)
		return ret;
	for (i = 0; i < 100000; i++) {
		if (r->head + len - atomic_load(&r->sh->tail) <= r->dsize)
			return 0;
		usleep(100);
	}
	return -ETIMEDOUT;
}

/*
 * Append the record @rec of @bytes to @r's ring as a client does it: a PAD
 * fills the end of the ring where the record does not fit, and the
 * writer waits for ptod to make room. Not published. 0 or -errno.
 */
static int raw_append(struct raw_client *r, const void *rec, uint32_t bytes)
{
	uint32_t len = PTO_REC_LEN(bytes), off = r->head & (r->dsize - 1);
	struct pto_rec *h;
	int ret;

	if (off + len > r->dsize) {
		ret = raw_room(r, r->dsize - off);
		if (ret)
			return ret;
		h = (struct pto_rec *)(void *)(r->data + off);
		memset(h, 0, sizeof(*h));
		h->type = PTO_REC_PAD;
		h->len = r->dsize - off;
		r->head += r->dsize - off;
		off = 0;
	}
	ret = raw_room(r, len);
	if (ret)
		return ret;
	h = (struct pto_rec *)(void *)(r->data + off);
	memset(h, 0, len);
	memcpy(h, rec, bytes);
	h->len = len;
	h->tag = RAW_TAG;
	r->head += len;
	return 0;
}

/*
 * An empty graph of @r (GRAPH_BEGIN, GRAPH_END after what @r appended so
 * far), published: its DONE's status and message, or -errno.
 */
static int raw_empty_graph(struct raw_client *r, char *msg, size_t msglen)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec end = { .type = PTO_REC_GRAPH_END };
	int ret = raw_append(r, &g, sizeof(g));

	if (!ret)
		ret = raw_append(r, &end, sizeof(end));
	if (!ret)
		ret = raw_publish(r);
	return ret ? ret : raw_done(r, msg, msglen);
}

/*
 * On each of @conns connections, one after the other: @n records of a
 * type ptod does not know outside any graph (raw_append() waits for room
 * as the ring fills; with @gap_ms, each is published that long after the
 * one before), then a graph. ptod ignores the records, and every graph
 * must pass. Prints how long the connections took. 0 if they did.
 */
static int run_outside(long n, long conns, long gap_ms)
{
	struct pto_rec rec = { .type = 77 };
	char msg[PTO_MSG_TEXT] = "";
	double t0 = now_ms();
	struct raw_client r;
	long i = 0, k;
	int ret = 0;

	for (k = 0; !ret && k < conns; k++) {
		ret = raw_open(&r);
		for (i = 0; !ret && i < n; i++) {
			ret = raw_append(&r, &rec, sizeof(rec));
			if (!ret && gap_ms > 0) {
				ret = raw_publish(&r);
				usleep((useconds_t)gap_ms * 1000);
			}
		}
		if (!ret)
			ret = raw_empty_graph(&r, msg, sizeof(msg));
		raw_close(&r);
	}
	printf("CASE outside: %s %ld records outside a graph, then a graph, on %ld connections in %.3f s: %d %s\n",
	       ret ? "FAIL" : "PASS", i, k, (now_ms() - t0) / 1e3, ret, msg);
	return ret ? 1 : 0;
}

/*
 * @n empty graphs, one after the other, each waiting for its DONE: each
 * must pass. Prints how long they took. 0 if they did. The client is a
 * small one (its runtime's GM), so that several fit at once.
 */
static int run_graphs(long n)
{
	char msg[PTO_MSG_TEXT] = "";
	double t0 = now_ms();
	struct raw_client r;
	long i;
	int ret;

	ret = raw_open_how(&r, 0, true);
	for (i = 0; !ret && i < n; i++)
		ret = raw_empty_graph(&r, msg, sizeof(msg));
	raw_close(&r);
	printf("CASE graphs: %s %ld of %ld graphs in %.3f s: %d %s\n",
	       ret ? "FAIL" : "PASS", ret ? i - 1 : i, n,
	       (now_ms() - t0) / 1e3, ret, msg);
	return ret ? 1 : 0;
}

/*
 * A graph of @r: a scope with @pairs CLUSTER_ALLOC / CLUSTER_FREE pairs,
 * vid 1, 2, ... Its status and message.
 */
static int raw_cluster_pairs(struct raw_client *r, uint32_t pairs, char *msg,
			     size_t msglen)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec h = { .type = PTO_REC_SCOPE_BEGIN };
	struct pto_rec_cluster cr = { .h = { .type = PTO_REC_CLUSTER_ALLOC } };
	uint32_t k;
	int ret;

	snprintf(msg, msglen, "not sent");
	ret = raw_append(r, &g, sizeof(g));
	if (!ret)
		ret = raw_append(r, &h, sizeof(h));
	for (k = 1; !ret && k <= pairs; k++) {
		cr.vid = (int32_t)k;
		cr.h.type = PTO_REC_CLUSTER_ALLOC;
		ret = raw_append(r, &cr, sizeof(cr));
		cr.h.type = PTO_REC_CLUSTER_FREE;
		if (!ret)
			ret = raw_append(r, &cr, sizeof(cr));
	}
	h.type = PTO_REC_SCOPE_END;
	if (!ret)
		ret = raw_append(r, &h, sizeof(h));
	h.type = PTO_REC_GRAPH_END;
	if (!ret)
		ret = raw_append(r, &h, sizeof(h));
	if (!ret)
		ret = raw_publish(r);
	return ret ? ret : raw_done(r, msg, msglen);
}

/* VmRSS of process @pid in KiB, or -1. */
static long vmrss_kib(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = strtol(line + 6, NULL, 10);
	fclose(f);
	return v;
}

/* clpairs: how much ptod (its VmRSS) may grow over the graph, KiB */
#define CLPAIRS_GROWTH_KIB	(8 << 10)

/*
 * A raw client's graph allocates and frees a cluster @pairs times (vid 1
 * .. @pairs; a pair costs 64 bytes of stream and no task). ptod (@ptod)
 * must run it (status 0) without growing by more than
 * CLPAIRS_GROWTH_KIB: its cluster table holds the clusters that can be
 * live, not one entry per vid (it once grew 8 bytes per vid). A first,
 * small graph of the same client runs before ptod's size is taken.
 */
static int run_clpairs(pid_t ptod, uint32_t pairs)
{
	char msg[PTO_MSG_TEXT];
	struct raw_client r;
	long before = -1, after = -1;
	int ret;

	ret = raw_open_ring(&r, 0, true, 1U << 20);
	if (!ret)
		ret = raw_cluster_pairs(&r, 1, msg, sizeof(msg));
	if (!ret) {
		before = vmrss_kib(ptod);
		ret = raw_cluster_pairs(&r, pairs, msg, sizeof(msg));
		after = vmrss_kib(ptod);
	} else {
		snprintf(msg, sizeof(msg), "the first graph: %s",
			 strerror(-ret));
	}
	raw_close(&r);
	printf("clpairs: %u pairs: status=%d %s; ptod's VmRSS %ld KiB before, %ld KiB after\n",
	       pairs, ret, msg, before, after);
	return report_case("clpairs", !ret && before > 0 && after > 0 &&
			   after - before < CLPAIRS_GROWTH_KIB, ret, "");
}

/* ---- graphs left open until one more waits to start ---------------------------- */

#define SLOTS_MAX	256	/* more open graphs than any engine has slots */

/*
 * A raw client with a graph open: GRAPH_BEGIN and SCOPE_BEGIN published.
 * ptod replays the SCOPE_BEGIN only once the run holds one of the
 * engine's DAG slots: 0 if it did within @ms, -ETIMEDOUT if not, or
 * -errno (then @r is closed).
 */
static int raw_hold(struct raw_client *r, int ms)
{
	int ret = raw_open_how(r, 0, true);

	if (!ret) {
		raw_rec(r, PTO_REC_GRAPH_BEGIN, sizeof(struct pto_rec_graph));
		raw_rec(r, PTO_REC_SCOPE_BEGIN, sizeof(struct pto_rec));
		ret = raw_publish(r);
	}
	if (!ret)
		ret = raw_drained_ms(r, ms);
	if (ret && ret != -ETIMEDOUT)
		raw_close(r);
	return ret;
}

/*
 * Graphs left open (raw clients that never end their graph) until one
 * more client's run waits to start: for one of the engine's DAG slots, or
 * (a user but root) for one of the graphs its user may have running
 * (ptod -D). Prints "slots: N graphs open, client N+1 waits", signals
 * ready, and after @wait_s seconds hangs up that last client (its run
 * must end at once though nothing frees: the test checks ptoctl's list);
 * the others stay @hold_s seconds more.
 */
static int run_slots(double wait_s, double hold_s)
{
	static struct raw_client r[SLOTS_MAX + 1];
	int n, i, ret = 0;

	for (n = 0; n <= SLOTS_MAX; n++) {
		ret = raw_hold(&r[n], 2000);
		if (ret)
			break;
	}
	if (ret != -ETIMEDOUT) {
		printf("CASE slots: FAIL %d open graphs, then %s\n", n,
		       ret ? strerror(-ret) : "no client waited");
		return 1;
	}
	printf("slots: %d graphs open, client %d waits\n", n, n + 1);
	if (signal_ready())
		return 1;
	usleep((useconds_t)(wait_s * 1e6));
	raw_close(&r[n]);
	printf("slots: the waiting client hung up\n");
	usleep((useconds_t)(hold_s * 1e6));
	for (i = 0; i < n; i++)
		raw_close(&r[i]);
	printf("CASE slots: PASS %d graphs open, client %d waited\n", n,
	       n + 1);
	return 0;
}

/* ---- a kernel registered again while its old blob runs (raw client) ----------- */

/* Append the whole record @rec of @bytes (zeros up to PTO_REC_LEN), publish. */
static int raw_put(struct raw_client *r, const void *rec, uint32_t bytes)
{
	struct pto_rec *h = (struct pto_rec *)(void *)(r->data + r->head);
	uint32_t len = PTO_REC_LEN(bytes);

	memset(h, 0, len);
	memcpy(h, rec, bytes);
	h->len = len;
	h->tag = RAW_TAG;
	r->head += len;
	return raw_publish(r);
}

/*
 * rendezvous_kernel.so as @n blobs in a new buffer @b, not left mapped:
 * blob i at i * *@stride (whole pages; @stride may be NULL for one).
 */
static int raw_blobs(struct raw_client *r, const void *so, size_t len, int n,
		     struct gm_buf *b, uint64_t *stride)
{
	uint64_t one = (PTO_KBLOB_HDR_SIZE + len + 4095) & ~4095ULL;
	uint8_t *p = raw_buf(r, n * one, b);
	int i;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct pto_kblob_hdr *h = (void *)(p + i * one);

		h->magic = PTO_KBLOB_MAGIC;
		h->version = PTO_KBLOB_VERSION;
		h->size = len;
		h->uid = (b->dev + i * one) ^ (uint64_t)getpid() << 32;
		h->core_type = PTO2_WORKER_VECTOR;
		memcpy((uint8_t *)h + PTO_KBLOB_HDR_SIZE, so, len);
	}
	munmap(p, b->len);
	if (stride)
		*stride = one;
	return 0;
}

/* Register kernel @id from the blob at @dev. */
static int raw_kreg(struct raw_client *r, int32_t id, uint64_t dev,
		    const char *what)
{
	struct pto_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_KERNEL_REG;
	m.u.kreg.func_id = id;
	m.u.kreg.core_type = PTO2_WORKER_VECTOR;
	m.u.kreg.blob_addr = dev;
	return raw_expect(r->sock, &m, sizeof(m), -1, 0, what);
}

/*
 * A hello whose stream header starts @off bytes into its buffer (the
 * data area half the usual size, so that it fits): ptod must answer
 * @want. 1 if it did.
 */
static int hello_at(uint64_t off, int want, const char *what)
{
	uint32_t magic = PTO_STREAM_MAGIC, dsize = RAW_STREAM / 2;
	struct raw_client r;
	struct pto_msg m;
	int ok = 0;

	if (!raw_setup(&r, 0, RAW_STREAM, &m)) {
		memcpy((uint8_t *)r.sh + off, &magic, sizeof(magic));
		memcpy((uint8_t *)r.sh + off + sizeof(magic), &dsize,
		       sizeof(dsize));
		m.u.hello.stream_addr += off;
		m.u.hello.stream_len -= off;
		ok = raw_expect(r.sock, &m, sizeof(m), r.file, want, what);
	}
	raw_close(&r);
	return ok;
}

/*
 * misaligned: hellos whose stream header is not aligned to its 64 bytes
 * (at 8 and 62 bytes into a buffer) are refused with -EINVAL: ptod's
 * atomics on it would straddle cache lines; one at 64 bytes is taken.
 * 0 if they were.
 */
static int run_misaligned(void)
{
	int ok = hello_at(8, -EINVAL, "misaligned 8");

	ok &= hello_at(62, -EINVAL, "misaligned 62");
	ok &= hello_at(64, 0, "aligned 64");
	printf("CASE misaligned: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/*
 * probe_kernel.so as a blob whose header says version PTO_KBLOB_VERSION +
 * 1: KERNEL_REG must refuse it with -ENOEXEC; the same blob, its version
 * set right, must then register. 0 if both did.
 */
static int run_kversion(void)
{
	struct pto_kblob_hdr *h = NULL;
	struct raw_client r;
	struct gm_buf b;
	struct pto_msg m;
	size_t len;
	void *so = kernel_image("probe_kernel.so", 0, &len);
	int ok = 0;

	if (so && !raw_open(&r)) {
		h = raw_buf(&r, PTO_KBLOB_HDR_SIZE + len, &b);
		if (h) {
			h->magic = PTO_KBLOB_MAGIC;
			h->version = PTO_KBLOB_VERSION + 1;
			h->size = len;
			h->uid = b.dev ^ (uint64_t)getpid() << 32;
			h->core_type = PTO2_WORKER_VECTOR;
			memcpy((uint8_t *)h + PTO_KBLOB_HDR_SIZE, so, len);
			memset(&m, 0, sizeof(m));
			m.type = PTO_MSG_KERNEL_REG;
			m.u.kreg.core_type = PTO2_WORKER_VECTOR;
			m.u.kreg.blob_addr = b.dev;
			ok = raw_expect(r.sock, &m, sizeof(m), -1, -ENOEXEC,
					"kversion: another version");
			h->version = PTO_KBLOB_VERSION;
			ok &= raw_kreg(&r, 0, b.dev, "kversion: its version");
			munmap(h, b.len);
		}
		raw_close(&r);
	}
	free(so);
	printf("CASE kversion: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/*
 * A SUBMIT record of vector kernel @id with two parameters: a tensor of
 * @n32 int32 at @dev (as @type) and the scalar @scalar.
 */
static int raw_submit_1t1s(struct raw_client *r, int32_t id, int32_t type,
			   uint64_t dev, uint64_t n32, uint64_t scalar)
{
	uint64_t shape[1] = { n32 };
	union {
		struct pto_rec_submit s;
		uint8_t b[sizeof(struct pto_rec_submit) +
			  2 * sizeof(struct pto_rec_param)];
	} u;

	memset(&u, 0, sizeof(u));
	u.s.h.type = PTO_REC_SUBMIT;
	u.s.kernel_id = id;
	u.s.worker_type = PTO2_WORKER_VECTOR;
	u.s.nparams = 2;
	u.s.p[0].type = type;
	u.s.p[0].tensor = make_tensor_external((void *)(uintptr_t)dev, shape,
					       1, PTO_DT_INT32);
	u.s.p[1].type = PTO_PARAM_SCALAR;
	u.s.p[1].scalar = scalar;
	return raw_put(r, &u, sizeof(u));
}

/* A task of kernel @id that counts itself in @cnt, then waits for @n. */
static int raw_rendezvous(struct raw_client *r, int32_t id,
			  const struct gm_buf *cnt, uint64_t n)
{
	return raw_submit_1t1s(r, id, PTO_PARAM_INOUT, cnt->dev, 16, n);
}

/*
 * Kernel 0 is registered again, from blob B, while a task of blob A runs
 * (it waits for us), and the client frees A at once. Another tenant
 * allocating all of GM then must get none of A (ptod handed its pin to
 * the run), the run must complete (its next task, dispatched after the
 * re-registration, runs B), and A's memory come back once it has.
 */
static int reload_busy_check(struct raw_client *r, const struct gm_buf *a,
			     const struct gm_buf *b, const struct gm_buf *cnt,
			     uint32_t *count)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec end = { .type = PTO_REC_GRAPH_END };
	char msg[PTO_MSG_TEXT];
	struct raw_client tenant;
	struct gm_buf t[256];
	uint64_t free1;
	int ten, n, ok, ret;

	if (raw_put(r, &g, sizeof(g)) || raw_rendezvous(r, 0, cnt, 2) ||
	    count_wait(count, 1)) {
		printf("the task of blob A did not start\n");
		return 0;
	}
	ok = raw_kreg(r, 0, b->dev, "kernel 0 from blob B, a task of A running");
	ok &= !raw_free(r, a->handle);
	ten = raw_tenant(&tenant);
	n = ten ? 0 : raw_fill(&tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ok &= !ten && !tenant_overlaps(tenant.map_fd, t, n, "old kernel blob",
				       a->dev, a->len);
	raw_close(&tenant);
	free1 = raw_gm_free_bytes(r);
	ok &= !raw_rendezvous(r, 0, cnt, 3) && !raw_put(r, &end, sizeof(end));
	__atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
	ret = raw_done(r, msg, sizeof(msg));
	printf("run: status=%d %s\n", ret, msg);
	ok &= !ret && __atomic_load_n(count, __ATOMIC_ACQUIRE) == 3;
	return ok && raw_returned(r, free1 + a->len);
}

/* A graph of one task of kernel @id that counts itself in @cnt: status. */
static int raw_count_graph(struct raw_client *r, int32_t id,
			   const struct gm_buf *cnt)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec end = { .type = PTO_REC_GRAPH_END };
	char msg[PTO_MSG_TEXT];
	int ret;

	/* it counts itself, so it waits for nobody */
	if (raw_put(r, &g, sizeof(g)) || raw_rendezvous(r, id, cnt, 1) ||
	    raw_put(r, &end, sizeof(end)))
		return -EIO;
	ret = raw_done(r, msg, sizeof(msg));
	printf("kernel %d: status=%d %s\n", id, ret, msg);
	return ret;
}

/*
 * Kernels 0 and 1 come from two blobs in one buffer S. Kernel 0 is
 * registered again from another buffer and the client frees S: kernel 1
 * still lies in S, so ptod keeps S pinned (another tenant filling GM
 * gets none of it) and kernel 1 still runs; once kernel 1 moves too, S's
 * memory comes back.
 */
static int kshare_check(struct raw_client *r, const struct gm_buf *s,
			uint64_t off2, const struct gm_buf *b0,
			const struct gm_buf *b1, const struct gm_buf *cnt,
			const uint32_t *count)
{
	struct raw_client tenant;
	struct gm_buf t[256];
	uint64_t free1;
	int ten, n, ok;

	ok = raw_kreg(r, 0, s->dev, "kernel 0 from S") &&
	     raw_kreg(r, 1, s->dev + off2, "kernel 1 from S") &&
	     raw_kreg(r, 0, b0->dev, "kernel 0 again, from another buffer");
	ok &= !raw_free(r, s->handle);
	ten = raw_tenant(&tenant);
	n = ten ? 0 : raw_fill(&tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ok &= !ten && !tenant_overlaps(tenant.map_fd, t, n,
				       "kernel 1's blob buffer",
				       s->dev, s->len);
	raw_close(&tenant);
	ok &= !raw_count_graph(r, 1, cnt) &&
	      __atomic_load_n(count, __ATOMIC_ACQUIRE) == 1;
	free1 = raw_gm_free_bytes(r);
	ok &= raw_kreg(r, 1, b1->dev, "kernel 1 again, from another buffer");
	return ok && raw_returned(r, free1 + s->len);
}

/* kshare: see kshare_check(). */
static int run_kshare(void)
{
	struct raw_client r;
	struct gm_buf s, b0, b1, cnt;
	uint32_t *count = NULL;
	uint64_t off2 = 0;
	size_t len;
	void *so = kernel_image("rendezvous_kernel.so", 0, &len);
	bool opened = so && !raw_open(&r);
	int ok = opened && !raw_blobs(&r, so, len, 2, &s, &off2) &&
		 !raw_blobs(&r, so, len, 1, &b0, NULL) &&
		 !raw_blobs(&r, so, len, 1, &b1, NULL) &&
		 (count = raw_buf(&r, 4096, &cnt)) &&
		 kshare_check(&r, &s, off2, &b0, &b1, &cnt, count);

	free(so);
	if (count)
		munmap(count, cnt.len);
	if (opened)
		raw_close(&r);
	printf("CASE kshare: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/* A check of kernel 0 reloaded from blob B while a task of blob A runs. */
typedef int (*reload_check_fn)(struct raw_client *r, const struct gm_buf *a,
			       const struct gm_buf *b,
			       const struct gm_buf *cnt, uint32_t *count);

/*
 * Case @name on a raw client: rendezvous_kernel.so as blobs A and B, a
 * counter buffer, kernel 0 registered from A, then @check.
 */
static int run_reload_case(const char *name, reload_check_fn check)
{
	struct raw_client r;
	struct gm_buf a, b, cnt;
	uint32_t *count = NULL;
	size_t len;
	void *so = kernel_image("rendezvous_kernel.so", 0, &len);
	bool opened = so && !raw_open(&r);
	int ok = opened && !raw_blobs(&r, so, len, 1, &a, NULL) &&
		 !raw_blobs(&r, so, len, 1, &b, NULL) &&
		 (count = raw_buf(&r, 4096, &cnt)) &&
		 raw_kreg(&r, 0, a.dev, "kernel 0 from blob A") &&
		 check(&r, &a, &b, &cnt, count);

	free(so);
	if (count)
		munmap(count, cnt.len);
	if (opened)
		raw_close(&r);
	printf("CASE %s: %s\n", name, ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

/*
 * reload-failed: while a task of kernel 0 (blob A) runs and waits for us,
 * RELOAD_FAILS registrations of kernel 0 from fresh buffers that hold no
 * blob are each refused (-ENOEXEC); then blob B replaces A during the
 * same run. A failed registration's pin goes at once: it is no replaced
 * blob of the run, of which ptod takes at most 256.
 */
#define RELOAD_FAILS	300

static int reload_failed_check(struct raw_client *r, const struct gm_buf *a,
			       const struct gm_buf *b,
			       const struct gm_buf *cnt, uint32_t *count)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec end = { .type = PTO_REC_GRAPH_END };
	char msg[PTO_MSG_TEXT];
	struct gm_buf junk;
	struct pto_msg m;
	int i, refused = 0, ok, ret;
	void *p;

	(void)a;
	if (raw_put(r, &g, sizeof(g)) || raw_rendezvous(r, 0, cnt, 2) ||
	    count_wait(count, 1)) {
		printf("reload-failed: the task of blob A did not start\n");
		return 0;
	}
	for (i = 0; i < RELOAD_FAILS; i++) {
		p = raw_buf(r, 4096, &junk);	/* zeros: no blob header */
		if (!p)
			break;
		munmap(p, junk.len);
		memset(&m, 0, sizeof(m));
		m.type = PTO_MSG_KERNEL_REG;
		m.u.kreg.func_id = 0;
		m.u.kreg.core_type = PTO2_WORKER_VECTOR;
		m.u.kreg.blob_addr = junk.dev;
		refused += raw_expect(r->sock, &m, sizeof(m), -1, -ENOEXEC,
				      "reload-failed: no blob");
	}
	printf("reload-failed: %d of %d registrations without a blob refused\n",
	       refused, RELOAD_FAILS);
	ok = refused == RELOAD_FAILS &&
	     raw_kreg(r, 0, b->dev, "reload-failed: blob B during the run");
	__atomic_fetch_add(count, 1, __ATOMIC_ACQ_REL);
	ok &= !raw_put(r, &end, sizeof(end));
	ret = raw_done(r, msg, sizeof(msg));
	printf("reload-failed: run status=%d %s\n", ret, msg);
	return ok && !ret;
}

/* ---- a buffer freed while its graph is open, then named again (raw client) ---- */

/* A task of probe kernel @id that writes its record (probe.h) at @dev. */
static int raw_probe(struct raw_client *r, int32_t id, uint64_t dev,
		     uint32_t seq)
{
	return raw_submit_1t1s(r, id, PTO_PARAM_OUTPUT, dev,
			       sizeof(struct pto_probe_rec) / 4, seq);
}

/* Has the probe task numbered @seq written @rec (bounded wait)? */
static int probe_seen(const struct pto_probe_rec *rec, uint32_t seq)
{
	double until = now_ms() + PROBE_READY_MS;

	while (__atomic_load_n(&rec->seq, __ATOMIC_ACQUIRE) != seq) {
		if (now_ms() > until)
			return 0;
		usleep(1000);
	}
	return 1;
}

/*
 * Has anything written the tenant's buffers of @b that overlap [@dev,
 * +@len) since tenant_overlaps() filled them with 0x5a? 1 if so.
 */
static int tenant_written(int fd, const struct gm_buf *b, int n, uint64_t dev,
			  uint64_t len)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		const uint8_t *p;
		uint64_t k;

		if (b[i].dev >= dev + len || b[i].dev + b[i].len <= dev)
			continue;
		p = gm_map(fd, &b[i]);
		if (!p)
			continue;
		for (k = 0; k < b[i].len && p[k] == 0x5a; k++)
			;
		if (k < b[i].len) {
			bad = 1;
			printf("a task wrote into the other tenant's buffer (0x%llx, +%llu) at +%llu\n",
			       (unsigned long long)b[i].dev,
			       (unsigned long long)b[i].len,
			       (unsigned long long)k);
		}
		munmap((void *)p, b[i].len);
	}
	return bad;
}

/*
 * Client @a's graph is open and its first task, of probe kernel @id, has
 * written @a's buffer @x (mapped at @xp, which this unmaps). @a frees @x;
 * another tenant then allocates all of GM. It must get none of @x (ptod
 * pins it for the run). @a's next task names @x again: it runs (the
 * run's pin still holds @x, whose memory is @a's to lose) or is refused
 * with -EACCES, and writes none of the tenant's buffers either way. Once
 * the graph is over, @x's memory is back: GM free is *@free0 (what it was
 * before @x was freed; 0 if the first task did not run) + its size.
 */
static int freed_tensor_named(struct raw_client *a, int32_t id,
			      const struct gm_buf *x, void *xp,
			      uint64_t *free0)
{
	struct pto_rec_graph g = { .h = { .type = PTO_REC_GRAPH_BEGIN } };
	struct pto_rec end = { .type = PTO_REC_GRAPH_END };
	char msg[PTO_MSG_TEXT] = "";
	struct raw_client tenant;
	struct gm_buf t[256];
	int ten, n, ok, ret;

	ok = !raw_put(a, &g, sizeof(g)) && !raw_probe(a, id, x->dev, 1) &&
	     probe_seen(xp, 1);
	munmap(xp, x->len);
	if (!ok) {
		printf("the first task, writing X, did not run\n");
		return 0;
	}
	*free0 = raw_gm_free_bytes(a);
	ok = !raw_free(a, x->handle);
	printf("A freed X [0x%llx, +%llu), its graph open\n",
	       (unsigned long long)x->dev, (unsigned long long)x->len);
	ten = raw_tenant(&tenant);
	n = ten ? 0 : raw_fill(&tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ok &= !ten && n > 0;
	ok &= !tenant_overlaps(tenant.map_fd, t, n, "tensor buffer X", x->dev,
			       x->len);
	ret = raw_probe(a, id, x->dev + sizeof(struct pto_probe_rec), 2);
	if (!ret)
		ret = raw_put(a, &end, sizeof(end));
	if (!ret)
		ret = raw_done(a, msg, sizeof(msg));
	printf("A's next task, naming X again: status=%d %s\n", ret, msg);
	ok &= !ret || ret == -EACCES;
	ok &= !tenant_written(tenant.map_fd, t, n, x->dev, x->len);
	raw_close(&tenant);
	/* also waits for the tenant's memory, for freed_stream() */
	ok &= raw_returned(a, *free0 + x->len);
	return ok;
}

/*
 * Client @a frees its stream buffer, still connected; another tenant
 * then allocates all of GM. It must get none of it (ptod pins it for
 * @a's life and goes on reading and writing its header), and the memory
 * stays out of the pool while @a is connected: GM free is still @want
 * once the tenant has gone.
 */
static int freed_stream(struct raw_client *a, uint64_t want)
{
	struct raw_client tenant;
	struct gm_buf t[256];
	uint64_t now;
	int ten, n, ok;

	ok = !raw_free(a, a->sbuf.handle);
	printf("A freed its stream buffer [0x%llx, +%llu), still connected\n",
	       (unsigned long long)a->sbuf.dev,
	       (unsigned long long)a->sbuf.len);
	ten = raw_tenant(&tenant);
	n = ten ? 0 : raw_fill(&tenant, t, 256);
	printf("the other tenant got %d buffers\n", n);
	ok &= !ten && n > 0;
	ok &= !tenant_overlaps(tenant.map_fd, t, n, "stream buffer",
			       a->sbuf.dev, a->sbuf.len);
	raw_close(&tenant);
	ok &= raw_returned(a, want);
	now = raw_gm_free_bytes(a);
	if (now != want) {
		printf("GM free %llu, not %llu: the stream buffer went back while its client is connected\n",
		       (unsigned long long)now, (unsigned long long)want);
		ok = 0;
	}
	return ok;
}

/* freed-named: see freed_tensor_named() and freed_stream(). */
static int run_freed_named(void)
{
	struct raw_client a;
	struct gm_buf kb, x;
	uint64_t free0 = 0;
	void *xp = NULL;
	size_t len;
	void *so = kernel_image("probe_kernel.so", 0, &len);
	bool opened = so && !raw_open(&a);
	int ok = opened && !raw_blobs(&a, so, len, 1, &kb, NULL) &&
		 raw_kreg(&a, 0, kb.dev, "the probe kernel") &&
		 (xp = raw_buf(&a, 65536, &x));

	/* the second part runs even if the first failed: it tells more */
	if (ok) {
		ok = freed_tensor_named(&a, 0, &x, xp, &free0);
		ok &= free0 && freed_stream(&a, free0 + x.len);
	}

	free(so);
	if (opened)
		raw_close(&a);
	printf("CASE freed-named: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}

static int run_badbuf(void)
{
	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	return expect_failure("badbuf", orch_badbuf, -EACCES, NULL);
}

static int run_badph(void)
{
	uint64_t forged = 1, same = 0;
	char want[96];
	int failed;

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, 4096);
	if (!sc_x)
		return 1;
	snprintf(want, sizeof(want),
		 "intermediate tensor %u out of order (the next is 1)",
		 PTO_PH_MAX_IDX);
	failed = expect_failure("badph", orch_badph, -EPROTO, want);
	failed += expect_failure("badph-off", orch_badph_off, -EACCES,
				 "[+4096, +8192) is not inside intermediate tensor 1 (4096 bytes)");
	failed += expect_failure("badph-huge", orch_badph_huge, -ENOMEM,
				 "an intermediate tensor of 18446744073709547520 bytes can never fit in a heap of");
	failed += expect_failure_args("badph-twice", orch_output_twice,
				      &forged, 1, -EINVAL,
				      "params 1 and 2 of kernel 1 are the same new intermediate tensor 1");
	failed += expect_failure_args("output-twice", orch_output_twice,
				      &same, 1, -EINVAL,
				      "params 1 and 2 of kernel 1 are the same new intermediate tensor");
	return failed ? 1 : 0;
}

/* phring: scopes after the first, each with an intermediate; row size */
#define PHRING_N	300
#define PHRING_F	16

static pto_buf *ph_out;

/* ADD_SCALAR of @n floats: @out = @in + @v. */
static void submit_add_n(PTO2Runtime *rt, Tensor *in, Tensor *out, float v,
			 uint64_t n)
{
	PTOParam p[] = {
		make_input_param(in), make_output_param(out),
		make_scalar_param(pto_f32_arg(v)), make_scalar_param(n),
	};

	pto2_rt_submit_task(rt, VEC_FUNC_ADD_SCALAR, PTO2_WORKER_VECTOR, p, 4);
}

/*
 * Intermediate 1 made in a scope of its own, then PHRING_N scopes, scope
 * k making intermediate t = x + k (x: zeros) and row k of ph_out = t + 1.
 * args[0] != 0: then a task reads intermediate 1, whose scope ended
 * PHRING_N scopes ago.
 */
static int orch_phring(PTO2Runtime *rt, uint64_t *args, int argc)
{
	uint64_t n = PHRING_F, all = PHRING_N * PHRING_F, k, off;
	Tensor x = make_tensor_external((void *)(uintptr_t)pto_buf_dev_addr(sc_x),
					&n, 1, PTO_DT_FP32);
	Tensor out = make_tensor_external((void *)(uintptr_t)pto_buf_dev_addr(ph_out),
					  &all, 1, PTO_DT_FP32);
	Tensor first = make_tensor(&n, 1, PTO_DT_FP32);

	(void)argc;
	PTO2_SCOPE(rt) {
		submit_add_n(rt, &x, &first, 0.0f, n);
	}
	for (k = 0; k < PHRING_N && !pto2_rt_get_error(rt); k++) {
		PTO2_SCOPE(rt) {
			Tensor t = make_tensor(&n, 1, PTO_DT_FP32);
			Tensor row;

			off = k * n;
			row = pto_tensor_view(&out, &n, &off);
			submit_add_n(rt, &x, &t, (float)k, n);
			submit_add_n(rt, &t, &row, 1.0f, n);
		}
	}
	if (args[0]) {
		PTO2_SCOPE(rt) {
			Tensor row;

			off = 0;
			row = pto_tensor_view(&out, &n, &off);
			submit_add_n(rt, &first, &row, 1.0f, n);
		}
	}
	return 0;
}

/*
 * With a task window of 16 (PTO2_RING_TASK_WINDOW from the caller), ptod
 * keeps the placeholders of the newest 256 intermediates (16 x 16
 * params), which its ring reuses. phring-ok: 300 intermediates, each
 * read at once, all translated right (row k = k + 1). phring-stale: the
 * same, then a read of intermediate 1, whose task has retired: -EINVAL
 * (ptod once kept a placeholder for every index a graph used, up to 2^24
 * of them, 16 bytes each).
 */
static int run_phring(void)
{
	char msg[4096];
	uint64_t arg = 0, k, j, bad = 0;
	const float *o;
	int ret, failed;

	if (load_kernels("vector_example", add_scalar_k, 1))
		return 1;
	sc_x = gm_copy(NULL, PHRING_F * sizeof(float));
	ph_out = gm_copy(NULL, PHRING_N * PHRING_F * sizeof(float));
	if (!sc_x || !ph_out)
		return 1;
	ret = pto_run(cl, orch_phring, &arg, 1, msg, sizeof(msg));
	o = pto_buf_ptr(ph_out);
	for (k = 0; k < PHRING_N; k++)
		for (j = 0; j < PHRING_F; j++)
			if (o[k * PHRING_F + j] != (float)(k + 1) && bad++ < 3)
				printf("row %" PRIu64 "[%" PRIu64 "] = %f\n", k,
				       j, o[k * PHRING_F + j]);
	failed = report_case("phring-ok", !ret && !bad, ret, msg);
	arg = 1;
	failed += expect_failure_args("phring-stale", orch_phring, &arg, 1,
				      -EINVAL,
				      "uses intermediate tensor 1 after the scope that made it ended");
	return failed ? 1 : 0;
}

/* Case @argv[0] with its arguments, over the connection cl. */
static int run_case(int argc, char **argv)
{
	int ret;

	if (!strcmp(argv[0], "vector"))
		ret = run_vector(argc - 1, argv + 1);
	else if (!strcmp(argv[0], "bgemm"))
		ret = run_bgemm();
	else if (!strcmp(argv[0], "pa"))
		ret = run_pa(argc - 1, argv + 1);
	else if (!strcmp(argv[0], "deadlock"))
		ret = run_deadlock(argc > 1 ? atol(argv[1]) : 33);
	else if (!strcmp(argv[0], "crash"))
		ret = run_crash();
	else if (!strcmp(argv[0], "closedev"))
		ret = run_closedev();
	else if (!strcmp(argv[0], "crash-loop"))
		ret = run_crash_loop(argc > 1 ? atol(argv[1]) : 6);
	else if (!strcmp(argv[0], "crash-next"))
		ret = run_crash_next();
	else if (!strcmp(argv[0], "misuse"))
		ret = run_misuse();
	else if (!strcmp(argv[0], "crash-budget"))
		ret = run_crash_budget(argc > 1 ? atol(argv[1]) : 4);
	else if (!strcmp(argv[0], "rerun"))
		ret = run_rerun();
	else if (!strcmp(argv[0], "streampad"))
		ret = run_streampad();
	else if (!strcmp(argv[0], "reload"))
		ret = run_reload(argc > 1 ? atol(argv[1]) : 10);
	else if (!strcmp(argv[0], "rendezvous"))
		ret = run_rendezvous(argc - 1, argv + 1);
	else if (!strcmp(argv[0], "pre"))
		ret = run_pre(argc - 1, argv + 1);
	else if (!strcmp(argv[0], "hostile"))
		ret = run_hostile(argc - 1, argv + 1);
	else if (!strcmp(argv[0], "stream"))
		ret = run_stream(argc > 1 ? atof(argv[1]) : 10);
	else if (!strcmp(argv[0], "hang"))
		ret = run_hang(argc > 1 ? atol(argv[1]) : 0);
	else if (!strcmp(argv[0], "hang-bell"))
		ret = run_hang_bell();
	else if (!strcmp(argv[0], "bell-orphaned"))
		ret = run_bell_orphaned();
	else if (!strcmp(argv[0], "probe"))
		ret = run_probe(argc > 1 ? atof(argv[1]) : 5, 0);
	else if (!strcmp(argv[0], "probe-n"))
		ret = run_probe(0, argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : 96);
	else if (!strcmp(argv[0], "prio"))
		ret = run_prio(argc > 1 ? argv[1] : "static");
	else if (!strcmp(argv[0], "chain"))
		ret = run_chain(argc > 1 ? atol(argv[1]) : 200,
				argc > 2 ? atol(argv[2]) : 20,
				argc > 3 ? atol(argv[3]) : 10000);
	else if (!strcmp(argv[0], "proto"))
		ret = run_proto();
	else if (!strcmp(argv[0], "badbuf"))
		ret = run_badbuf();
	else if (!strcmp(argv[0], "badph"))
		ret = run_badph();
	else if (!strcmp(argv[0], "phring"))
		ret = run_phring();
	else if (!strcmp(argv[0], "hazards"))
		ret = run_hazards();
	else if (!strcmp(argv[0], "random"))
		ret = run_random(argc > 1 ? atol(argv[1]) : 10,
				 argc > 2 ? strtoull(argv[2], NULL, 0) : 1,
				 argc > 3 ? atol(argv[3]) : 200,
				 argc > 4 ? argv[4] : "stream");
	else if (!strcmp(argv[0], "pings"))
		ret = run_pings(argc > 1 ? atol(argv[1]) : 10);
	else if (!strcmp(argv[0], "quota"))
		ret = run_quota(argc > 1 ? atol(argv[1]) : 64);
	else if (!strcmp(argv[0], "noquota"))
		ret = run_noquota(argc > 1 ? atol(argv[1]) : 64);
	else if (!strcmp(argv[0], "quota-rt"))
		ret = run_quota_rt(argc > 1 ? atol(argv[1]) : 64);
	else if (!strcmp(argv[0], "sbxchurn"))
		ret = run_sbxchurn(argc > 1 ? atol(argv[1]) : 100);
	else if (!strcmp(argv[0], "hellos"))
		ret = run_hellos(argc > 1 ? atol(argv[1]) : 32);
	else if (!strcmp(argv[0], "freed"))
		ret = run_freed();
	else if (!strcmp(argv[0], "freed-tensor"))
		ret = run_freed_tensor();
	else if (!strcmp(argv[0], "reload-quota"))
		ret = run_reload_quota(argc > 1 ? atol(argv[1]) : 12,
				  argc > 2 ? atol(argv[2]) : 8);
	else if (!strcmp(argv[0], "reload-busy"))
		ret = run_reload_case("reload-busy", reload_busy_check);
	else if (!strcmp(argv[0], "reload-failed"))
		ret = run_reload_case("reload-failed", reload_failed_check);
	else if (!strcmp(argv[0], "kshare"))
		ret = run_kshare();
	else if (!strcmp(argv[0], "freed-named"))
		ret = run_freed_named();
	else if (!strcmp(argv[0], "reload-defer"))
		ret = run_reload_defer();
	else if (!strcmp(argv[0], "unpriv"))
		ret = run_unpriv();
	else if (!strcmp(argv[0], "idle")) {
		ret = signal_ready() ? 1 : 0;
		if (!ret)
			usleep((useconds_t)((argc > 1 ? atof(argv[1]) : 5) * 1e6));
	}
	else
		ret = 2;
	return ret;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n;
	int opt, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		*strrchr(self, '/') = 0;
		snprintf(e2edir, sizeof(e2edir), "%s", self);
		snprintf(exdir, sizeof(exdir), "%s/../../examples", self);
	}
	while ((opt = getopt(argc, argv, "d:r:")) != -1) {
		if (opt == 'd') {
			snprintf(exdir, sizeof(exdir), "%s", optarg);
		} else if (opt == 'r') {
			ready_fd = atoi(optarg);
			if (ready_fd < 0 || fcntl(ready_fd, F_GETFD) < 0) {
				fprintf(stderr, "-r %s: not an open file descriptor\n",
					optarg);
				return 2;
			}
		} else {
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: pto_e2e [-d EXDIR] [-r READY_FD] vector|bgemm|pa|deadlock|crash|closedev|rerun|streampad|reload|rendezvous|pre|crash-next|crash-loop|crash-budget|misuse|hostile|sbxchurn|stream|hang|probe|probe-n|prio|chain|badbuf|badph|phring|hazards|random|proto|freed|freed-tensor|reload-quota|reload-busy|kshare|freed-named|reload-defer|unpriv|reclen|kversion|misaligned|graphs|outside|forge|rawhead|rawcluster|clpairs|slots|idle|flood|pings|quota|noquota|quota-rt|hellos|peer|peer-silent|churn|conns ...\n");
		return 2;
	}
	/* without libpto: the socket alone */
	if (!strcmp(argv[optind], "peer"))
		return run_peer();
	if (!strcmp(argv[optind], "peer-silent"))
		return run_peer_silent(optind + 1 < argc ?
				       atof(argv[optind + 1]) : 10);
	if (!strcmp(argv[optind], "flood"))
		return run_flood(optind + 1 < argc ? atof(argv[optind + 1]) : 10,
				 optind + 2 < argc ? atol(argv[optind + 2]) : 0);
	if (!strcmp(argv[optind], "churn"))
		return run_churn(optind + 1 < argc ? atol(argv[optind + 1]) : 100);
	if (!strcmp(argv[optind], "hangup"))
		return run_hangup(optind + 1 < argc ? atol(argv[optind + 1]) : 100);
	if (!strcmp(argv[optind], "conns"))
		return run_conns(optind + 1 < argc ? atol(argv[optind + 1]) : 20);
	if (!strcmp(argv[optind], "reclen"))
		return run_reclen(argc - optind - 1, argv + optind + 1);
	if (!strcmp(argv[optind], "kversion"))
		return run_kversion();
	if (!strcmp(argv[optind], "misaligned"))
		return run_misaligned();
	if (!strcmp(argv[optind], "graphs"))
		return run_graphs(optind + 1 < argc ? atol(argv[optind + 1]) : 100);
	if (!strcmp(argv[optind], "outside"))
		return run_outside(optind + 1 < argc ? atol(argv[optind + 1]) : 1000,
				   optind + 2 < argc ? atol(argv[optind + 2]) : 1,
				   optind + 3 < argc ? atol(argv[optind + 3]) : 0);
	if (!strcmp(argv[optind], "forge"))
		return run_forge(optind + 1 < argc ? argv[optind + 1] : "");
	if (!strcmp(argv[optind], "rawhead"))
		return run_rawhead(argc - optind - 1, argv + optind + 1);
	if (!strcmp(argv[optind], "rawcluster"))
		return run_rawcluster(argc - optind - 1, argv + optind + 1);
	if (!strcmp(argv[optind], "clpairs")) {
		uint32_t n = optind + 2 < argc ?
			     (uint32_t)strtoul(argv[optind + 2], NULL, 0) : 0;

		if (!n) {
			fprintf(stderr, "usage: pto_e2e clpairs PID N (N > 0)\n");
			return 2;
		}
		return run_clpairs((pid_t)atol(argv[optind + 1]), n);
	}
	if (!strcmp(argv[optind], "slots"))
		return run_slots(optind + 1 < argc ? atof(argv[optind + 1]) : 3,
				 optind + 2 < argc ? atof(argv[optind + 2]) : 60);
	fds_before_connect();
	ret = pto_connect(NULL, &cl);
	if (ret) {
		printf("CASE connect: FAIL %s\n", pto_last_error(NULL));
		return 1;
	}
	argv += optind;
	argc -= optind;
	ret = run_case(argc, argv);
	pto_disconnect(cl);
	return ret;
}
