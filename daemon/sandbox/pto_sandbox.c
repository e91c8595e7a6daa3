// SPDX-License-Identifier: MIT
/*
 * pto-sandbox - the kernels of one client, run as that client
 *
 * ptod starts one for every client whose kernels run sandboxed (ptod -K),
 * as the client's uid and gid with no supplementary groups, no_new_privs
 * and PR_SET_PDEATHSIG, and with two descriptors: a dup of the client's
 * own /dev/ptoN file (a CLIENT file: through it this process can map the
 * client's buffers and nothing else) and the mailbox memfd that
 * pto-aicore also maps (pto-private/sandbox.h); its standard input and
 * output are /dev/null, its standard error a pipe whose lines ptod logs
 * after the sandbox's name, its environment empty.
 * Before it runs anything of the client's it makes itself not dumpable
 * and installs a seccomp filter (sbx_seccomp.c): its kernels may start
 * threads, not processes.
 *
 * The cores stay pto-aicore's: a thread there that takes a dispatch of
 * this client posts the task in the mailbox slot of its core and waits.
 * Here a thread takes the slot, maps the buffers the task names for as
 * long as it runs (its tensor arguments and the kernel blob: GM_LOOKUP on
 * the client's file, then mmap MAP_FIXED into a PROT_NONE reservation as
 * large as GM, so that a device address translates as base + offset, as
 * in pto-aicore; back to PROT_NONE once no task holds them and the client
 * has freed them, which an idle thread checks), loads
 * the kernel (daemon/exec/pto_kload.c), runs it with the kernel context
 * of its launch (pto_exec_run_payload(), the executor core's code) and
 * writes the status back. A thread that takes a task while every other
 * thread is busy starts one more, up to one per core, so that launches
 * whose kernels run together (cooperative, blocks of several threads) get
 * all their threads; idle threads sleep on the mailbox's doorbell.
 *
 * A kernel that crashes kills this process: ptod tells pto-aicore, whose
 * waiting threads fail the client's tasks with -EOWNERDEAD, and starts a
 * new sandbox for the client's next run.
 *
 * usage: pto-sandbox -n SANDBOX -f CLIENT_FD -m MAILBOX_FD [-v]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto-private/devinfo.h>
#include <pto-private/futex.h>
#include <pto-private/parse.h>
#include <pto-private/sandbox.h>
#include <pto-private/time.h>
#include <pto-private/wire.h>

#include "pto_exec.h"
#include "pto_kload.h"
#include "sbx_seccomp.h"

#define SBX_IDLE_WAIT_S	1	/* an idle thread looks again after 1 s */
#define SBX_MAX_MAPS	4096	/* buffers mapped at once */
#define SBX_SWEEP_STEP	8	/* buffers an idle thread looks at */

/* A client buffer mapped at its place in the reservation. */
struct sbx_map {
	uint64_t dev;
	uint64_t len;
	uint32_t refs;		/* tasks that hold it now */
};

/*
 * The process. @map_lock protects @maps, @nr_maps and @sweep_at; @threads
 * and @busy count the threads and those running a task.
 */
struct sandbox {
	uint32_t id;
	int cfd;
	struct pto_info info;
	struct pto_sbx_hdr *mb;
	struct pto_exec ex;
	struct pto_kcache kcache;
	pthread_mutex_t map_lock;
	struct sbx_map maps[SBX_MAX_MAPS];
	uint32_t nr_maps;
	uint32_t sweep_at;	/* where the next idle sweep starts */
	_Atomic uint32_t threads;
	_Atomic uint32_t busy;
	bool verbose;
};

__attribute__((format(printf, 2, 3)))
static void logm(const struct sandbox *sb, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pto-sandbox %u[%d]: %s\n", sb->id, (int)getpid(), buf);
}

/* ---- The client's buffers ------------------------------------------------- */

/* The buffers one task holds mapped (first devices addresses). */
struct sbx_held {
	uint64_t dev[PTO2_MAX_TASK_PARAMS + 2];
	uint32_t n;
};

static struct sbx_map *map_find(struct sandbox *sb, uint64_t dev,
				uint64_t len)
{
	uint32_t i;

	for (i = 0; i < sb->nr_maps; i++)
		if (dev >= sb->maps[i].dev &&
		    dev - sb->maps[i].dev <= sb->maps[i].len &&
		    len <= sb->maps[i].len - (dev - sb->maps[i].dev))
			return &sb->maps[i];
	return NULL;
}

static void map_sweep_locked(struct sandbox *sb, uint32_t budget);

/* Map the buffer of the client's file that holds [@dev, @dev + @len). */
static struct sbx_map *map_new(struct sandbox *sb, uint64_t dev,
			       uint64_t len, int *err)
{
	struct pto_gm_lookup lk = { .size = sizeof(lk), .dev_addr = dev,
				    .len = len };
	struct sbx_map *m;
	uint64_t off;
	void *want;

	*err = -ENOMEM;
	if (sb->nr_maps == SBX_MAX_MAPS) {
		/* all of them, once each */
		sb->sweep_at = 0;
		map_sweep_locked(sb, SBX_MAX_MAPS);
	}
	if (sb->nr_maps == SBX_MAX_MAPS)
		return NULL;
	if (ioctl(sb->cfd, PTO_IOC_GM_LOOKUP, &lk)) {
		*err = errno == ENOENT ? -EFAULT : -errno;
		return NULL;
	}
	*err = -EFAULT;
	off = lk.buf_dev_addr - sb->info.gm_dev_base;
	want = sb->ex.gm.host + off;
	if (!pto_gm_ptr(&sb->ex.gm, lk.buf_dev_addr, lk.buf_len) ||
	    mmap(want, lk.buf_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, sb->cfd,
		 (off_t)(sb->info.gm_mmap_offset + off)) != want)
		return NULL;
	m = &sb->maps[sb->nr_maps++];
	m->dev = lk.buf_dev_addr;
	m->len = lk.buf_len;
	m->refs = 0;
	*err = 0;
	return m;
}

/*
 * Make [@dev, @dev + @len) readable and writable at its place in the
 * reservation for the task of @held: it must lie in one buffer of the
 * client's file, which is mapped whole (and stays mapped, for the next
 * tasks, until map_sweep() finds the client freed it). 0 or -errno.
 */
static int map_hold(struct sandbox *sb, uint64_t dev, uint64_t len,
		    struct sbx_held *held)
{
	struct sbx_map *m;
	int ret = 0;

	if (held->n == PTO_ARRAY_SIZE(held->dev))
		return -E2BIG;
	pthread_mutex_lock(&sb->map_lock);
	m = map_find(sb, dev, len);
	if (!m)
		m = map_new(sb, dev, len, &ret);
	if (m) {
		m->refs++;
		held->dev[held->n++] = m->dev;
	}
	pthread_mutex_unlock(&sb->map_lock);
	return ret;
}

/* The task is done with its buffers. */
static void map_release(struct sandbox *sb, struct sbx_held *held)
{
	pthread_mutex_lock(&sb->map_lock);
	while (held->n) {
		struct sbx_map *m = map_find(sb, held->dev[--held->n], 1);

		if (m)
			m->refs--;
	}
	pthread_mutex_unlock(&sb->map_lock);
}

/*
 * Unmap (back to PROT_NONE) the buffers no task holds that the client has
 * freed, so that their memory is not kept allocated by the sandbox:
 * @budget of them from where the last sweep stopped, round the table (a
 * GM_LOOKUP each). map_lock held.
 */
static void map_sweep_locked(struct sandbox *sb, uint32_t budget)
{
	uint32_t i = sb->sweep_at;

	for (; budget && sb->nr_maps; budget--) {
		struct pto_gm_lookup lk = { .size = sizeof(lk) };
		struct sbx_map *m;

		if (i >= sb->nr_maps)
			i = 0;
		m = &sb->maps[i];
		lk.dev_addr = m->dev;
		lk.len = m->len;
		if (m->refs || (!ioctl(sb->cfd, PTO_IOC_GM_LOOKUP, &lk) &&
				lk.buf_dev_addr == m->dev && lk.buf_len == m->len)) {
			i++;
			continue;
		}
		if (mmap(sb->ex.gm.host + (m->dev - sb->info.gm_dev_base),
			 m->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
			logm(sb, "cannot unmap 0x%" PRIx64 ": %s", m->dev,
			     strerror(errno));
		/* the last entry moves here: look at i again */
		*m = sb->maps[--sb->nr_maps];
	}
	sb->sweep_at = i;
}

/*
 * An idle thread's share of the sweep: @budget buffers. Between tasks a
 * few, not all of them, so that a client with thousands of buffers does
 * not pay a system call per buffer each time a thread of its sandbox
 * waits; all of them once a thread waited a second for nothing.
 */
static void map_sweep(struct sandbox *sb, uint32_t budget)
{
	pthread_mutex_lock(&sb->map_lock);
	map_sweep_locked(sb, budget);
	pthread_mutex_unlock(&sb->map_lock);
}

/* The task's kernel blob and tensor arguments, mapped; 0 or -errno. */
static int map_task(struct sandbox *sb, const PTO2DispatchPayload *p,
		    struct sbx_held *held)
{
	uint64_t addr = p->function_bin_addr;
	const struct pto_kblob_hdr *h;
	uint32_t i;
	int ret;

	if (p->num_args > PTO2_MAX_TASK_PARAMS)
		return -EPROTO;
	if (addr) {
		ret = map_hold(sb, addr, PTO_KBLOB_HDR_SIZE, held);
		if (ret)
			return ret;
		h = pto_gm_ptr(&sb->ex.gm, addr, sizeof(*h));
		/* the .so must lie in the same buffer */
		if (!h || h->size > PTO_KBLOB_MAX_SIZE ||
		    map_hold(sb, addr, PTO_KBLOB_HDR_SIZE + h->size, held))
			return -ENOEXEC;
	}
	for (i = 0; i < p->num_args; i++) {
		if (!(p->tensor_mask & (1U << i)))
			continue;
		ret = map_hold(sb, p->args[i], 1, held);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- The executor core's operations ------------------------------------------ */

/* The kernel blob is mapped (map_task()). */
static int sbx_kernel(struct pto_exec *ex, const PTO2DispatchPayload *p,
		      uint32_t core, pto_kernel_entry_fn *fn, void **ref)
{
	struct sandbox *sb = ex->priv;

	return pto_kcache_task(&sb->kcache, ex, p, core, fn, ref);
}

static void sbx_kernel_put(struct pto_exec *ex, void *ref)
{
	struct sandbox *sb = ex->priv;

	pto_kcache_put(&sb->kcache, ex, ref);
}

static void sbx_exec_log(struct pto_exec *ex, const char *msg)
{
	logm(ex->priv, "%s", msg);
}

/* The kernel of @core's task reported pre-complete: tell its executor. */
static void sbx_pre_complete(struct pto_exec *ex, uint32_t core)
{
	struct sandbox *sb = ex->priv;
	struct pto_sbx_slot *slot = pto_sbx_slot(sb->mb, core);

	atomic_store_explicit(&slot->pre,
			      atomic_load_explicit(&slot->req,
						   memory_order_relaxed),
			      memory_order_release);
	pto_sbx_slot_wake(slot);
}

static const struct pto_exec_ops sbx_exec_ops = {
	.kernel = sbx_kernel,
	.kernel_put = sbx_kernel_put,
	.pre_complete = sbx_pre_complete,
	.log = sbx_exec_log,
};

/* ---- The mailbox ------------------------------------------------------------------ */

/* Take a posted task: its core, or -1 if none is pending. */
static int take(struct pto_sbx_hdr *mb)
{
	uint32_t w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		uint64_t v = atomic_load(&mb->pending[w]);

		while (v) {
			uint64_t bit = v & -v;
			uint64_t old = atomic_fetch_and(&mb->pending[w], ~bit);

			if (old & bit)
				return (int)(w * 64 + (uint32_t)__builtin_ctzll(bit));
			v = old & ~bit;
		}
	}
	return -1;
}

static void run_slot(struct sandbox *sb, uint32_t core)
{
	struct pto_sbx_slot *slot = pto_sbx_slot(sb->mb, core);
	uint32_t seq = atomic_load_explicit(&slot->req, memory_order_acquire);
	struct sbx_held held = { .n = 0 };
	PTO2DispatchPayload p;
	int status;

	memcpy(&p, &slot->task, sizeof(p));
	status = map_task(sb, &p, &held);
	if (!status)
		status = pto_exec_run_payload(&sb->ex, core, &p);
	map_release(sb, &held);
	atomic_fetch_add(&sb->ex.tasks, 1);
	atomic_store_explicit(&slot->res,
			      (uint64_t)seq << 32 | (uint32_t)status,
			      memory_order_release);
	pto_sbx_slot_wake(slot);
}

static void *worker_main(void *arg);

/* Every thread busy: one more, up to one per core. */
static void maybe_grow(struct sandbox *sb)
{
	uint32_t n = atomic_load(&sb->threads);
	pthread_attr_t at;
	pthread_t t;
	int ret;

	if (atomic_load(&sb->busy) < n || n >= sb->info.nr_cores)
		return;
	if (!atomic_compare_exchange_strong(&sb->threads, &n, n + 1))
		return;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, PTO_SBX_STACK);
	ret = pthread_create(&t, &at, worker_main, sb);
	if (ret) {
		atomic_fetch_sub(&sb->threads, 1);
		/* EAGAIN: the user has ptod's -P tasks (RLIMIT_NPROC) */
		logm(sb, "cannot start a thread (%u running): %s", n,
		     strerror(ret));
	}
	pthread_attr_destroy(&at);
}

/*
 * Sleep until the executor posts something (or a second passes): true if
 * the second passed with nothing posted.
 */
static bool idle_wait(struct sandbox *sb)
{
	struct pto_sbx_hdr *mb = sb->mb;
	uint32_t db, w;
	bool any = false;
	int ret = 0;

	atomic_fetch_add(&mb->sleepers, 1);
	atomic_thread_fence(memory_order_seq_cst);
	db = atomic_load(&mb->doorbell);
	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		any |= atomic_load(&mb->pending[w]) != 0;
	if (!any)
		ret = pto_futex_wait_shared(&mb->doorbell, db, pto_mono_ns() +
					    SBX_IDLE_WAIT_S * 1000000000LL);
	atomic_fetch_sub(&mb->sleepers, 1);
	return ret == -ETIMEDOUT;
}

static void *worker_main(void *arg)
{
	struct sandbox *sb = arg;
	bool quiet = false;

	for (;;) {
		int core = take(sb->mb);

		if (core < 0 || (uint32_t)core >= sb->info.nr_cores) {
			/* a few between tasks; all after a quiet second */
			map_sweep(sb, quiet ? SBX_MAX_MAPS : SBX_SWEEP_STEP);
			quiet = idle_wait(sb);
			continue;
		}
		quiet = false;
		atomic_fetch_add(&sb->busy, 1);
		maybe_grow(sb);
		run_slot(sb, (uint32_t)core);
		atomic_fetch_sub(&sb->busy, 1);
	}
	return NULL;
}

/* ---- Setup ------------------------------------------------------------------------ */

/* The mailbox and the reservation of GM's size; 0 or -errno. */
static int sbx_setup(struct sandbox *sb, int mfd)
{
	size_t size;
	struct stat st;
	void *gm;
	int ret;

	ret = pto_dev_get_info(sb->cfd, &sb->info);
	if (ret)
		return ret;
	size = pto_sbx_size(sb->info.nr_cores);
	if (fstat(mfd, &st) || (size_t)st.st_size != size)
		return -EINVAL;
	sb->mb = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (sb->mb == MAP_FAILED)
		return -errno;
	close(mfd);
	if (!pto_sbx_hdr_ok(sb->mb, sb->info.nr_cores))
		return -EPROTO;
	gm = mmap(NULL, sb->info.gm_size, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (gm == MAP_FAILED)
		return -errno;
	memset(&sb->ex, 0, sizeof(sb->ex));
	sb->ex.gm.host = gm;
	sb->ex.gm.dev_base = sb->info.gm_dev_base;
	sb->ex.gm.size = sb->info.gm_size;
	sb->ex.nr_aic = sb->info.nr_aic;
	sb->ex.nr_aiv = sb->info.nr_aiv;
	sb->ex.profile = sb->info.profile;
	sb->ex.caps = sb->info.caps;
	sb->ex.ops = &sbx_exec_ops;
	sb->ex.priv = sb;
	return 0;
}

static int fd_arg(const char *s)
{
	uint64_t v;

	return pto_parse_u64_all(s, 10, 65535, &v) ? -1 : (int)v;
}

int main(int argc, char **argv)
{
	static struct sandbox sb;
	int opt, mfd = -1, ret;
	uint64_t id;

	sb.cfd = -1;
	while ((opt = getopt(argc, argv, "n:f:m:v")) != -1) {
		switch (opt) {
		case 'n':
			if (pto_parse_u64_all(optarg, 10, PTO_SBX_MAX, &id))
				goto usage;
			sb.id = (uint32_t)id;
			break;
		case 'f': sb.cfd = fd_arg(optarg); break;
		case 'm': mfd = fd_arg(optarg); break;
		case 'v': sb.verbose = true; break;
		default: goto usage;
		}
	}
	if (sb.cfd < 0 || mfd < 0 || !sb.id)	/* -n took 1 .. PTO_SBX_MAX */
		goto usage;
	pthread_mutex_init(&sb.map_lock, NULL);
	pto_kcache_init(&sb.kcache, 0, sb.verbose);
	/*
	 * Not dumpable: /proc/PID of this process becomes root's, so that a
	 * kernel in another sandbox of the same uid cannot open our
	 * /proc/PID/mem (the client's buffers, the mailbox).
	 */
	ret = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ? -errno : 0;
	if (!ret)
		ret = sbx_setup(&sb, mfd);
	if (!ret)
		ret = sbx_seccomp_install();
	if (ret) {
		logm(&sb, "cannot start: %s", strerror(-ret));
		return 1;
	}
	if (sb.verbose)
		logm(&sb, "ready (uid %d gid %d)", (int)getuid(), (int)getgid());
	atomic_store(&sb.threads, 1);
	worker_main(&sb);
	return 0;
usage:
	fprintf(stderr, "usage: pto-sandbox -n SANDBOX -f CLIENT_FD -m MAILBOX_FD [-v]\n");
	return 2;
}
