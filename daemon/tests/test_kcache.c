// SPDX-License-Identifier: MIT
/*
 * test_kcache.c - the executors' cache of kernels loaded from GM
 * (daemon/exec/pto_kload.c): a re-upload at the same address replaces
 * the old kernel, the cache keeps at most its bound, a kernel a core runs
 * is never unloaded under it and is unloaded once it returns, and the
 * executor core gives back its reference on every path; a kernel's
 * pre-complete report reaches the executor that runs it, and is a no-op
 * where no executor exports it; a program whose link does not export it
 * loads no kernel (this file built again as test_kcache_unexported).
 *
 * The kernels are real shared objects (kcache_kernel.c, built next to
 * this test), written as blobs into a buffer that stands for GM.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/wire.h>

#include "pto_exec.h"
#include "pto_kload.h"
#include "tap.h"

/* whether this build's link exports pto_kernel_report_pre_complete() */
#ifdef KCACHE_UNEXPORTED
#define KCACHE_EXPORTED	0
#else
#define KCACHE_EXPORTED	1
#endif

#define GM_BASE		0x100000000ull
#define GM_SIZE		(8u << 20)
#define SLOT_SIZE	(64u << 10)	/* one blob per slot */
#define NR_SLOTS	(GM_SIZE / SLOT_SIZE)

enum { SO_K1, SO_K2, SO_NODELETE, SO_PRE, NR_SO };

static const char *const so_names[NR_SO] = {
	"kcache_k1.so", "kcache_k2.so", "kcache_nodelete.so", "kcache_pre.so",
};
/* what each one returns without arguments */
static const int so_values[NR_SO] = { 1, 2, 3, -EINVAL };

struct rig {
	struct pto_exec ex;
	struct pto_kcache kc;
	uint8_t *so[NR_SO];
	size_t so_len[NR_SO];
	uint64_t next_uid;
	uint32_t reports;	/* pre-complete reports, the last one's core */
	uint32_t report_core;
	char log[512];		/* the executor's last message */
};

static int rig_kernel(struct pto_exec *ex, const PTO2DispatchPayload *p,
		      uint32_t core, pto_kernel_entry_fn *fn, void **ref)
{
	struct rig *r = ex->priv;

	return pto_kcache_task(&r->kc, ex, p, core, fn, ref);
}

static void rig_kernel_put(struct pto_exec *ex, void *ref)
{
	struct rig *r = ex->priv;

	pto_kcache_put(&r->kc, ex, ref);
}

static void rig_pre_complete(struct pto_exec *ex, uint32_t core)
{
	struct rig *r = ex->priv;

	r->reports++;
	r->report_core = core;
}

static void rig_log(struct pto_exec *ex, const char *msg)
{
	struct rig *r = ex->priv;

	snprintf(r->log, sizeof(r->log), "%s", msg);
}

static const struct pto_exec_ops rig_ops = {
	.kernel = rig_kernel,
	.kernel_put = rig_kernel_put,
	.pre_complete = rig_pre_complete,
	.log = rig_log,
};

static int read_so(const char *name, uint8_t **out, size_t *len)
{
	char path[512];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", KCACHE_SO_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    n > (long)(SLOT_SIZE - PTO_KBLOB_HDR_SIZE) || fseek(f, 0, SEEK_SET))
		goto bad;
	*out = malloc((size_t)n);
	if (!*out || fread(*out, 1, (size_t)n, f) != (size_t)n)
		goto bad;
	*len = (size_t)n;
	fclose(f);
	return 0;
bad:
	fclose(f);
	return -EINVAL;
}

/* A cache of at most @max kernels over an empty GM; 0 or -errno. */
static int rig_open(struct rig *r, uint32_t max)
{
	int i, ret;

	memset(r, 0, sizeof(*r));
	r->ex.ops = &rig_ops;
	r->ex.priv = r;
	r->ex.gm.host = calloc(1, GM_SIZE);
	r->ex.gm.dev_base = GM_BASE;
	r->ex.gm.size = GM_SIZE;
	if (!r->ex.gm.host)
		return -ENOMEM;
	for (i = 0; i < NR_SO; i++) {
		ret = read_so(so_names[i], &r->so[i], &r->so_len[i]);
		if (ret) {
			tap_diag("%s/%s: %s", KCACHE_SO_DIR, so_names[i],
				 strerror(-ret));
			return ret;
		}
	}
	pto_kcache_init(&r->kc, max, false);
	r->next_uid = 0x1000;
	return 0;
}

static void rig_close(struct rig *r)
{
	int i;

	pto_kcache_destroy(&r->kc, &r->ex);
	for (i = 0; i < NR_SO; i++)
		free(r->so[i]);
	free(r->ex.gm.host);
}

static uint64_t slot_addr(uint32_t slot)
{
	return GM_BASE + (uint64_t)slot * SLOT_SIZE;
}

/* Upload kernel @so into @slot as a new blob (a new upload id). */
static void upload(struct rig *r, uint32_t slot, int so)
{
	struct pto_kblob_hdr *h = pto_gm_ptr(&r->ex.gm, slot_addr(slot),
					     SLOT_SIZE);

	if (!h)
		abort();
	memset(h, 0, sizeof(*h));
	h->magic = PTO_KBLOB_MAGIC;
	h->version = PTO_KBLOB_VERSION;
	h->size = r->so_len[so];
	h->uid = r->next_uid++;
	h->func_id = so;
	memcpy((uint8_t *)h + PTO_KBLOB_HDR_SIZE, r->so[so], r->so_len[so]);
}

/* Run the kernel in @slot as a core would (get, call, put): its value. */
static int run(struct rig *r, uint32_t slot)
{
	struct pto_kentry *ref;
	pto_kernel_entry_fn fn;
	int ret;

	ret = pto_kcache_get(&r->kc, &r->ex, slot_addr(slot), 0, &fn, &ref);
	if (ret)
		return ret;
	ret = fn(NULL, NULL, 0);
	pto_kcache_put(&r->kc, &r->ex, ref);
	return ret;
}

static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static struct pto_kcache_stats stats(struct rig *r)
{
	struct pto_kcache_stats st;

	pto_kcache_get_stats(&r->kc, &st);
	return st;
}

/* A buffer reused for kernel after kernel: one entry, one descriptor. */
static void t_reupload_same_address(void)
{
	int i, fds, bad = 0;
	struct rig r;

	if (!ok(!rig_open(&r, 0), "reupload: rig"))
		return;
	fds = nr_fds();
	for (i = 0; i < 200; i++) {
		int so = i % 2 ? SO_K2 : SO_K1;

		upload(&r, 0, so);
		if (run(&r, 0) != so_values[so])
			bad++;
	}
	ok(!bad, "reupload: every run ran the kernel uploaded last (%d wrong)",
	   bad);
	ok(stats(&r).entries == 1, "reupload: 200 uploads at one address, %u entries",
	   stats(&r).entries);
	ok(stats(&r).loads == 200 && stats(&r).unloads == 199,
	   "reupload: 200 loaded, 199 unloaded (%llu, %llu)",
	   (unsigned long long)stats(&r).loads,
	   (unsigned long long)stats(&r).unloads);
	ok(nr_fds() == fds + 1, "reupload: one descriptor kept (%d more)",
	   nr_fds() - fds);
	rig_close(&r);
	ok(nr_fds() == fds, "reupload: none after the cache went");
}

/* More kernels than the bound: the least recently used ones go. */
static void t_bounded(void)
{
	uint32_t slot, max = 8;
	int fds, bad = 0;
	struct rig r;

	if (!ok(!rig_open(&r, max), "bounded: rig"))
		return;
	fds = nr_fds();
	for (slot = 0; slot < 40; slot++) {
		upload(&r, slot, SO_K1);
		if (run(&r, slot) != 1)
			bad++;
		/* slot 0 used after each: the most recent, never evicted */
		if (run(&r, 0) != 1)
			bad++;
	}
	ok(!bad, "bounded: every kernel ran (%d wrong)", bad);
	ok(stats(&r).entries == max, "bounded: 40 kernels, %u entries (bound %u)",
	   stats(&r).entries, max);
	ok(nr_fds() == fds + (int)max, "bounded: %d descriptors kept (bound %u)",
	   nr_fds() - fds, max);
	ok(stats(&r).loads == 40, "bounded: the kernel used most stayed loaded (%llu loads)",
	   (unsigned long long)stats(&r).loads);
	rig_close(&r);
}

/*
 * A kernel a core runs (a reference not given back) is unloaded neither
 * by eviction nor as stale; it goes once the reference is given back.
 */
static void t_held(void)
{
	struct pto_kentry *ref, *ref2, *ref3;
	pto_kernel_entry_fn fn, fn2, fn3;
	int fds, bad = 0;
	uint32_t slot;
	struct rig r;

	if (!ok(!rig_open(&r, 2), "held: rig"))
		return;
	fds = nr_fds();
	upload(&r, 0, SO_K2);
	if (!ok(!pto_kcache_get(&r.kc, &r.ex, slot_addr(0), 0, &fn, &ref),
		"held: get"))
		goto out;
	for (slot = 1; slot < 20; slot++) {
		upload(&r, slot, SO_K1);
		if (run(&r, slot) != 1)
			bad++;
	}
	ok(!bad, "held: other kernels ran");
	ok(stats(&r).unloads == 18,
	   "held: the running kernel was not evicted (%llu of 19 unloaded)",
	   (unsigned long long)stats(&r).unloads);
	ok(fn(NULL, NULL, 0) == 2, "held: it still runs");

	/* the buffer gets a new kernel while the old one runs */
	upload(&r, 0, SO_K1);
	ok(run(&r, 0) == 1, "held: the new upload runs");
	ok(stats(&r).held == 1, "held: the stale kernel is out of the cache, held (%u)",
	   stats(&r).held);
	ok(fn(NULL, NULL, 0) == 2, "held: and still runs");
	pto_kcache_put(&r.kc, &r.ex, ref);
	ok(stats(&r).held == 0 && nr_fds() == fds + 2,
	   "held: unloaded once given back (%u held, %d descriptors)",
	   stats(&r).held, nr_fds() - fds);

	/* every cached kernel running: past the bound until they return */
	upload(&r, 5, SO_K2);
	upload(&r, 6, SO_K1);
	if (!ok(!pto_kcache_get(&r.kc, &r.ex, slot_addr(0), 0, &fn, &ref) &&
		!pto_kcache_get(&r.kc, &r.ex, slot_addr(5), 0, &fn2, &ref2) &&
		!pto_kcache_get(&r.kc, &r.ex, slot_addr(6), 0, &fn3, &ref3),
		"held: three running"))
		goto out;
	ok(stats(&r).entries == 3, "held: a cache of 2 holds the three (%u)",
	   stats(&r).entries);
	ok(fn(NULL, NULL, 0) == 1 && fn2(NULL, NULL, 0) == 2 &&
	   fn3(NULL, NULL, 0) == 1, "held: the three run");
	pto_kcache_put(&r.kc, &r.ex, ref);
	pto_kcache_put(&r.kc, &r.ex, ref2);
	pto_kcache_put(&r.kc, &r.ex, ref3);
	ok(stats(&r).entries == 2, "held: back to the bound once they return (%u)",
	   stats(&r).entries);
out:
	rig_close(&r);
	ok(nr_fds() == fds, "held: no descriptor left");
}

/*
 * A kernel dlclose cannot unload keeps its memfd: a new kernel never
 * gets its /proc/self/fd/N name, which glibc would resolve to the old.
 */
static void t_nodelete(void)
{
	struct rig r;

	if (!ok(!rig_open(&r, 1), "nodelete: rig"))
		return;
	upload(&r, 0, SO_NODELETE);
	ok(run(&r, 0) == 3, "nodelete: runs");
	upload(&r, 1, SO_K2);
	ok(run(&r, 1) == 2, "nodelete: the next kernel runs");
	ok(stats(&r).kept == 1, "nodelete: evicted, could not be unloaded (%llu kept)",
	   (unsigned long long)stats(&r).kept);
	upload(&r, 2, SO_K1);
	ok(run(&r, 2) == 1, "nodelete: a kernel loaded after it is itself");
	rig_close(&r);
}

#define THR_N		4	/* threads */
#define THR_SLOTS	16	/* kernels they run, 4 cached */
#define THR_RUNS	2000	/* runs each */

static void *thr_main(void *arg)
{
	struct rig *r = arg;
	uintptr_t bad = 0;
	uint32_t i, x = (uint32_t)(uintptr_t)pthread_self();

	for (i = 0; i < THR_RUNS; i++) {
		uint32_t slot;

		x = x * 1103515245u + 12345u;
		slot = (x >> 16) % THR_SLOTS;
		if (run(r, slot) != so_values[slot % 2 ? SO_K2 : SO_K1])
			bad++;
	}
	return (void *)bad;
}

/*
 * Cores running kernels while others evict them: every run finds its
 * kernel loaded (a kernel unloaded under a core would crash it).
 */
static void t_threads(void)
{
	pthread_t t[THR_N];
	uintptr_t bad = 0;
	uint32_t slot;
	struct rig r;
	int i, n = 0;

	if (!ok(!rig_open(&r, 4), "threads: rig"))
		return;
	for (slot = 0; slot < THR_SLOTS; slot++)
		upload(&r, slot, slot % 2 ? SO_K2 : SO_K1);
	for (i = 0; i < THR_N; i++)
		if (!pthread_create(&t[i], NULL, thr_main, &r))
			n++;
	for (i = 0; i < n; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		bad += (uintptr_t)ret;
	}
	ok(n == THR_N && !bad, "threads: %d x %d runs over %d kernels, %lu wrong",
	   n, THR_RUNS, THR_SLOTS, (unsigned long)bad);
	ok(stats(&r).entries <= 4 && stats(&r).held == 0,
	   "threads: %u cached, %u held after", stats(&r).entries,
	   stats(&r).held);
	rig_close(&r);
}

/* The executor core puts what it got: after a kernel, a failing one. */
static void t_exec_puts(void)
{
	PTO2DispatchPayload p;
	struct rig r;
	int ret;

	if (!ok(!rig_open(&r, 1), "exec: rig"))
		return;
	upload(&r, 0, SO_K1);
	memset(&p, 0, sizeof(p));
	p.function_bin_addr = slot_addr(0);
	ret = pto_exec_run_payload(&r.ex, 0, &p);
	ok(ret == -EIO, "exec: a kernel returning 1 fails the task (%d)", ret);
	p.num_args = 1;
	p.args[0] = (uint64_t)-ENOSPC;
	ret = pto_exec_run_payload(&r.ex, 0, &p);
	ok(ret == -ENOSPC, "exec: the kernel's error is the task's (%d)", ret);
	p.function_bin_addr = slot_addr(1);
	ret = pto_exec_run_payload(&r.ex, 0, &p);
	ok(ret == -ENOEXEC, "exec: no blob: -ENOEXEC (%d)", ret);
	/* had a reference stayed, the kernel would stay past the bound */
	upload(&r, 2, SO_K2);
	p.function_bin_addr = slot_addr(2);
	p.num_args = 0;
	ret = pto_exec_run_payload(&r.ex, 0, &p);
	ok(ret == -EIO && stats(&r).entries == 1 && stats(&r).unloads == 1,
	   "exec: every reference given back (%u entries, %llu unloaded)",
	   stats(&r).entries, (unsigned long long)stats(&r).unloads);
	rig_close(&r);
}

/*
 * A kernel's pre-complete report, under this executor (which exports
 * pto_kernel_report_pre_complete()): its own ctx reports once, for its
 * core; a copy of the ctx, or a call outside pto_exec_run_payload(),
 * reports nothing.
 */
static void t_pre_complete(void)
{
	struct pto_kernel_ctx kc;
	PTO2DispatchPayload p;
	struct pto_kentry *ref;
	pto_kernel_entry_fn fn;
	uint64_t arg = 1;
	struct rig r;
	int ret;

	if (!ok(!rig_open(&r, 1), "pre: rig"))
		return;
	upload(&r, 0, SO_PRE);
	memset(&p, 0, sizeof(p));
	p.function_bin_addr = slot_addr(0);
	p.num_args = 1;
	p.args[0] = 1;
	ret = pto_exec_run_payload(&r.ex, 5, &p);
	ok(!ret && r.reports == 1 && r.report_core == 5,
	   "pre: two reports in a run on core 5: one, for core 5 (%d; %u, core %u)",
	   ret, r.reports, r.report_core);
	r.reports = 0;
	p.args[0] = 2;
	ret = pto_exec_run_payload(&r.ex, 5, &p);
	ok(!ret && !r.reports, "pre: a copy of the ctx reports nothing (%d; %u)",
	   ret, r.reports);
	ret = pto_kcache_get(&r.kc, &r.ex, slot_addr(0), 0, &fn, &ref);
	if (ok(!ret, "pre: the kernel from the cache (%d)", ret)) {
		memset(&kc, 0, sizeof(kc));
		r.reports = 0;
		ret = fn(&kc, &arg, 1);
		pto_kcache_put(&r.kc, &r.ex, ref);
		ok(!ret && !r.reports,
		   "pre: a call outside a run reports nothing (%d; %u)", ret,
		   r.reports);
	}
	rig_close(&r);
}

/*
 * The same kernel under an executor that does not export the report (as
 * one older than it): loaded into a link-map namespace of its own, where
 * nothing defines pto_kernel_report_pre_complete(), its report is a
 * no-op and it runs to its end. dlmopen() and the sanitizers' runtimes
 * do not go together: skipped in those builds.
 */
static void t_pre_complete_old_executor(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	tap_skip(3, "old executor: dlmopen() under a sanitizer");
#else
	struct pto_kernel_ctx kc;
	pto_kernel_entry_fn fn;
	uint64_t arg = 1;
	char path[512];
	void *h;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", KCACHE_SO_DIR, so_names[SO_PRE]);
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!ok(h, "old executor: %s loaded alone (%s)", so_names[SO_PRE],
		h ? "ok" : dlerror()))
		return;
	ok(!dlsym(h, "pto_kernel_report_pre_complete"),
	   "old executor: no report in the kernel's namespace");
	fn = (pto_kernel_entry_fn)dlsym(h, PTO_KERNEL_ENTRY_SYMBOL);
	memset(&kc, 0, sizeof(kc));
	ret = fn ? fn(&kc, &arg, 1) : -ENOENT;
	ok(!ret, "old executor: the kernel reports and runs to its end (%d)",
	   ret);
	dlclose(h);
#endif
}

/*
 * This build's link does not export pto_kernel_report_pre_complete(): a
 * kernel loaded here could not report, so none loads, and the message
 * says how to link the program.
 */
static void t_unexported(void)
{
	int fds, ret;
	struct rig r;

	if (!ok(!rig_open(&r, 1), "unexported: rig"))
		return;
	fds = nr_fds();
	upload(&r, 0, SO_K1);
	ret = run(&r, 0);
	ok(ret == -ENOEXEC, "unexported: the kernel is refused (%d)", ret);
	ok(strstr(r.log, "does not export pto_kernel_report_pre_complete()") &&
	   strstr(r.log, "--export-dynamic-symbol"),
	   "unexported: the message says how to link (%s)", r.log);
	ok(nr_fds() == fds && !stats(&r).entries && !stats(&r).loads,
	   "unexported: nothing is kept (%d fds, were %d; %u entries)",
	   nr_fds(), fds, stats(&r).entries);
	rig_close(&r);
}

int main(void)
{
	if (!KCACHE_EXPORTED) {
		t_unexported();
		return tap_done();
	}
	t_reupload_same_address();
	t_bounded();
	t_held();
	t_nodelete();
	t_threads();
	t_exec_puts();
	t_pre_complete();
	t_pre_complete_old_executor();
	return tap_done();
}
