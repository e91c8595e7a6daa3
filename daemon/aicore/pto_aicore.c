// SPDX-License-Identifier: MIT
/*
 * pto-aicore - the AICores of an emulated PTO2 device
 *
 * A separate process (crash isolation), started and supervised by ptod.
 * It opens the device as EXECUTOR, attaches its cores (default: all the
 * device has), maps GM and the register file and runs one thread per core.
 *
 * One thread per core, not a pool: a core is an independent sequential
 * machine that blocks for the whole duration of its kernel, and the
 * device's park/kick protocol is per core (CORE_WAIT on one core). A
 * thread per core maps that one to one, a kernel that loops or blocks
 * stalls only its own core, and parked threads cost nothing but their
 * (lazily committed) stacks. 72 threads is small.
 *
 * Per core (Documentation/uapi.rst "Notification protocol"):
 *
 *   spin briefly on DATA_MAIN_BASE; then parked = 1, full fence, recheck,
 *   PTO_IOC_CORE_WAIT(last seen value);
 *   new value PTO_DMB_EXIT: the thread ends;
 *   new value PTO_DMB_IDLE: COND = IDLE (ptod's reset handshake);
 *   new value task_id + 1: COND = ACK(id), ts_start, read the payload at
 *   the core's `task` register, load the kernel from GM (function_bin_addr:
 *   struct pto_kblob_hdr + .so bytes; memfd + dlopen, cached by address and
 *   upload id), translate tensor args to host pointers, run it, store its
 *   result in the payload's status, ts_end, COND = FIN(id) (release), full
 *   fence, and PTO_IOC_RAISE_IRQ if the core's irq_en or the AICPU's
 *   aicpu_irq_en is set.
 *
 * A kernel that crashes kills the process: the device marks its cores
 * DEAD and interrupts the AICPU; ptod fails the task and restarts us.
 *
 * usage: pto-aicore [-d /dev/pto0] [-c CORES] [-s SPINS] [-r READY_FD] [-v]
 *   CORES: "all" (default) or a list like 0-23,30,32
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto/pto_kernel.h>

#include "pto2_types.h"
#include "pto_usdt.h"
#include "pto_wire.h"

struct core {
	uint32_t id;
	pthread_t thread;
	bool live;
};

/* Set once in main() before any core thread starts; read-only afterwards. */
static struct {
	int fd;
	struct pto_info info;
	uint8_t *regs;
	uint8_t *gm;
	uint64_t gm_size;
	uint64_t gm_base;	/* device address of gm[0] */
	uint32_t spins;		/* polls of DATA_MAIN_BASE before parking */
	int64_t spin_ns;	/* ... or this long, whichever ends first */
	bool verbose;
	struct core *cores;
	uint32_t nr_cores;
} g;

/*
 * Loaded kernels, a list that only grows (a kernel's memfd stays open as
 * long as it is loaded, so /proc/self/fd/N names stay unique).
 * kcache_lock protects the list and serializes loading.
 */
struct kentry {
	struct kentry *next;
	uint64_t addr;
	uint64_t uid;
	int memfd;
	void *dl;
	pto_kernel_entry_fn fn;
};

static pthread_mutex_t kcache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kentry *kcache;

__attribute__((format(printf, 1, 2)))
static void logm(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pto-aicore[%d]: %s\n", (int)getpid(), buf);
}

static inline struct pto_regs_info *info_regs(void)
{
	return (struct pto_regs_info *)(void *)(g.regs + PTO_REGS_INFO_OFFSET);
}

static inline struct pto_core_regs *core_regs(uint32_t c)
{
	return (struct pto_core_regs *)(void *)(g.regs + PTO_REGS_CORE_OFFSET) + c;
}

static inline uint32_t ld_acq(volatile uint32_t *p)
{
	return atomic_load_explicit((_Atomic uint32_t *)p, memory_order_acquire);
}

static inline void st_rel(volatile uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)p, v, memory_order_release);
}

static inline uint32_t ld_rlx(volatile uint32_t *p)
{
	return atomic_load_explicit((_Atomic uint32_t *)p, memory_order_relaxed);
}

static inline void st_rlx(volatile uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)p, v, memory_order_relaxed);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t sys_cnt(void)
{
	int64_t d = now_ns() - info_regs()->sys_cnt_epoch_ns;

	return d > 0 ? (uint64_t)d / 20 : 0;
}

/* Host pointer of [dev, dev + len) in GM, or NULL if outside. */
static void *gm_ptr(uint64_t dev, uint64_t len)
{
	if (dev < g.gm_base || dev - g.gm_base > g.gm_size ||
	    len > g.gm_size - (dev - g.gm_base))
		return NULL;
	return g.gm + (dev - g.gm_base);
}

/* ---- Kernels ---------------------------------------------------------------- */

static int kernel_load(uint64_t addr, uint32_t core, pto_kernel_entry_fn *out)
{
	const struct pto_kblob_hdr *h = gm_ptr(addr, sizeof(*h));
	struct kentry *k;
	char path[64];
	const uint8_t *so;
	uint64_t uid, size;
	size_t off;
	int ret = 0;

	if (!h) {
		logm("core %u: kernel address 0x%" PRIx64 " is outside GM",
		     core, addr);
		return -EFAULT;
	}
	if (h->magic != PTO_KBLOB_MAGIC || h->version != PTO_KBLOB_VERSION) {
		logm("core %u: no kernel blob at 0x%" PRIx64, core, addr);
		return -ENOEXEC;
	}
	uid = h->uid;
	size = h->size;
	so = gm_ptr(addr + PTO_KBLOB_HDR_SIZE, size);
	if (!so || !size || size > PTO_KBLOB_MAX_SIZE)
		return -ENOEXEC;

	pthread_mutex_lock(&kcache_lock);
	for (k = kcache; k; k = k->next)
		if (k->addr == addr && k->uid == uid)
			break;
	if (k) {
		*out = k->fn;
		goto out;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		ret = -ENOMEM;
		goto out;
	}
	k->addr = addr;
	k->uid = uid;
	k->memfd = memfd_create("pto-kernel", MFD_CLOEXEC);
	if (k->memfd < 0) {
		ret = -errno;
		free(k);
		goto out;
	}
	for (off = 0; off < size;) {
		ssize_t n = write(k->memfd, so + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			close(k->memfd);
			free(k);
			goto out;
		}
		off += (size_t)n;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", k->memfd);
	k->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!k->dl) {
		logm("core %u: cannot load kernel %d: %s", core, h->func_id,
		     dlerror());
		close(k->memfd);
		free(k);
		ret = -ENOEXEC;
		goto out;
	}
	k->fn = (pto_kernel_entry_fn)(uintptr_t)dlsym(k->dl,
						       PTO_KERNEL_ENTRY_SYMBOL);
	if (!k->fn) {
		logm("core %u: kernel %d has no %s", core, h->func_id,
		     PTO_KERNEL_ENTRY_SYMBOL);
		dlclose(k->dl);
		close(k->memfd);
		free(k);
		ret = -ENOEXEC;
		goto out;
	}
	if (g.verbose)
		logm("loaded kernel %d (%" PRIu64 " bytes) from 0x%" PRIx64,
		     h->func_id, size, addr);
	k->next = kcache;
	kcache = k;
	*out = k->fn;
out:
	pthread_mutex_unlock(&kcache_lock);
	return ret;
}

/* ---- Cores -------------------------------------------------------------------- */

static void run_task(uint32_t core, uint32_t id)
{
	struct pto_core_regs *r = core_regs(core);
	uint64_t args[PTO2_MAX_TASK_PARAMS];
	PTO2DispatchPayload *p;
	struct pto_kernel_ctx kc;
	pto_kernel_entry_fn fn = NULL;
	uint32_t i, n, nr_aic = g.info.nr_aic;
	int ret;

	st_rel(&r->cond, PTO_COND_ACK(id));
	r->ts_start = sys_cnt();
	p = gm_ptr(atomic_load_explicit((_Atomic uint64_t *)&r->task,
					memory_order_acquire),
		   sizeof(*p));
	if (!p) {
		logm("core %u: task %u: no payload (task register 0x%llx)",
		     core, id, (unsigned long long)r->task);
		goto out_nopayload;
	}
	n = p->num_args;
	if ((uint32_t)p->task_id != id || n > PTO2_MAX_TASK_PARAMS) {
		ret = -EPROTO;
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (p->tensor_mask & (1U << i)) {
			void *hp = gm_ptr(p->args[i], 1);

			if (!hp) {
				ret = -EFAULT;
				goto out;
			}
			args[i] = (uint64_t)(uintptr_t)hp;
		} else {
			args[i] = p->args[i];
		}
	}
	if (!p->function_bin_addr) {
		ret = -ENOSYS;
		goto out;
	}
	ret = kernel_load(p->function_bin_addr, core, &fn);
	if (ret)
		goto out;
	memset(&kc, 0, sizeof(kc));
	if (core < nr_aic) {
		kc.block_idx = core;
		kc.sub_block_idx = 0;
		kc.sub_block_num = 1;
	} else {
		kc.block_idx = (core - nr_aic) / 2;
		kc.sub_block_idx = (core - nr_aic) % 2;
		kc.sub_block_num = 2;
	}
	kc.block_num = p->block_num ? p->block_num :
		       (nr_aic ? nr_aic : (g.info.nr_aiv + 1) / 2);
	kc.core_id = core;
	kc.task_id = id;
	kc.kernel_id = p->kernel_id;
	PTO_PROBE3(pto_aicore, task_start, core, id, p->kernel_id);
	ret = fn(&kc, args, n);
	if (ret > 0)
		ret = -EIO;
out:
	p->status = ret;
	PTO_PROBE3(pto_aicore, task_end, core, id, ret);
out_nopayload:
	r->ts_end = sys_cnt();
	st_rel(&r->cond, PTO_COND_DONE(id));
	atomic_thread_fence(memory_order_seq_cst);
	if (ld_rlx(&r->irq_en) || ld_rlx(&info_regs()->aicpu_irq_en)) {
		struct pto_raise_irq ri = { .size = sizeof(ri), .core = core };

		if (ioctl(g.fd, PTO_IOC_RAISE_IRQ, &ri))
			logm("core %u: RAISE_IRQ: %s", core, strerror(errno));
	}
}

static void *core_main(void *arg)
{
	struct core *c = arg;
	struct pto_core_regs *r = core_regs(c->id);
	uint32_t last = ld_acq(&r->data_main_base), spins = 0;
	int64_t t0 = 0;
	char name[16];

	snprintf(name, sizeof(name), "aicore%u", c->id);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	for (;;) {
		uint32_t dmb = ld_acq(&r->data_main_base);

		if (dmb == last) {
			struct pto_core_wait w;

			/*
			 * Spin briefly, bounded in polls and in time: 72 core
			 * threads spinning for long on a small machine starve
			 * the AICPU they are waiting for.
			 */
			if (!spins)
				t0 = now_ns();
			if (++spins < g.spins &&
			    ((spins & 15) || now_ns() - t0 < g.spin_ns)) {
				cpu_relax();
				continue;
			}
			spins = 0;
			/* park: flag, full fence, recheck, sleep */
			st_rlx(&r->parked, 1);
			atomic_thread_fence(memory_order_seq_cst);
			if (ld_acq(&r->data_main_base) != last) {
				st_rlx(&r->parked, 0);
				continue;
			}
			memset(&w, 0, sizeof(w));
			w.size = sizeof(w);
			w.core = c->id;
			w.last_dmb = last;
			w.timeout_ns = now_ns() + 1000000000LL;
			PTO_PROBE2(pto_aicore, park, c->id, last);
			if (ioctl(g.fd, PTO_IOC_CORE_WAIT, &w) &&
			    errno != ETIMEDOUT && errno != EINTR) {
				logm("core %u: CORE_WAIT: %s", c->id,
				     strerror(errno));
				break;
			}
			st_rlx(&r->parked, 0);
			PTO_PROBE2(pto_aicore, wake, c->id,
				   ld_rlx(&r->data_main_base));
			/* the AICPU went away: nobody will dispatch again */
			if (!ld_acq(&info_regs()->aicpu_attached) &&
			    ld_acq(&r->data_main_base) == last)
				break;
			continue;
		}
		spins = 0;
		last = dmb;
		if (dmb == PTO_DMB_EXIT)
			break;
		if (dmb == PTO_DMB_IDLE) {
			st_rel(&r->cond, PTO_COND_IDLE);
			continue;
		}
		run_task(c->id, dmb - 1);
	}
	return NULL;
}

/* ---- Setup ------------------------------------------------------------------------- */

static int parse_cores(const char *s, __u64 *mask, uint32_t nr_cores)
{
	char *end;

	memset(mask, 0, sizeof(__u64) * PTO_CORE_MASK_WORDS);
	if (!strcmp(s, "all")) {
		for (uint32_t c = 0; c < nr_cores; c++)
			mask[c / 64] |= 1ULL << (c % 64);
		return 0;
	}
	while (*s) {
		unsigned long a, b;

		a = strtoul(s, &end, 10);
		if (end == s)
			return -EINVAL;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1)
				return -EINVAL;
			s = end;
		}
		if (a > b || b >= nr_cores)
			return -EINVAL;
		for (; a <= b; a++)
			mask[a / 64] |= 1ULL << (a % 64);
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pto-aicore [-d DEVICE] [-c all|LIST] [-s SPINS] [-t SPIN_NS]\n"
		"                  [-r READY_FD] [-v]\n"
		"  -s, -t  poll DATA_MAIN_BASE at most SPINS times (2000) or SPIN_NS ns\n"
		"          (4000), whichever ends first, before parking in the device\n");
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/pto0", *cores_arg = "all";
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_EXECUTOR };
	struct pto_cores cores = { .size = sizeof(cores) };
	pthread_attr_t attr;
	int opt, ready_fd = -1;
	uint32_t c, started = 0;

	g.spins = 2000;
	g.spin_ns = 4000;
	while ((opt = getopt(argc, argv, "d:c:s:t:r:vh")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'c': cores_arg = optarg; break;
		case 's': g.spins = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': g.spin_ns = strtoll(optarg, NULL, 0); break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'v': g.verbose = true; break;
		default: usage(); return 2;
		}
	}
	/* ptod's death must not leave us orphaned on the device */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);

	g.fd = open(dev, O_RDWR | O_CLOEXEC);
	if (g.fd < 0) {
		logm("open %s: %s", dev, strerror(errno));
		return 1;
	}
	g.info.size = sizeof(g.info);
	if (ioctl(g.fd, PTO_IOC_GET_INFO, &g.info) ||
	    ioctl(g.fd, PTO_IOC_SET_ROLE, &role)) {
		logm("%s: GET_INFO/SET_ROLE: %s", dev, strerror(errno));
		return 1;
	}
	g.nr_cores = g.info.nr_cores;
	g.gm_size = g.info.gm_size;
	g.gm_base = g.info.gm_dev_base;
	g.regs = mmap(NULL, g.info.regs_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, g.fd, (off_t)g.info.regs_mmap_offset);
	g.gm = mmap(NULL, g.gm_size, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd,
		    (off_t)g.info.gm_mmap_offset);
	if (g.regs == MAP_FAILED || g.gm == MAP_FAILED) {
		logm("mmap: %s", strerror(errno));
		return 1;
	}
	if (parse_cores(cores_arg, cores.mask, g.nr_cores)) {
		logm("bad core list '%s' (device has %u cores)", cores_arg,
		     g.nr_cores);
		return 2;
	}
	if (ioctl(g.fd, PTO_IOC_CORE_ATTACH, &cores)) {
		logm("CORE_ATTACH: %s", strerror(errno));
		return 1;
	}
	g.cores = calloc(g.nr_cores, sizeof(*g.cores));
	if (!g.cores)
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 8u << 20);
	for (c = 0; c < g.nr_cores; c++) {
		if (!(cores.mask[c / 64] & (1ULL << (c % 64))))
			continue;
		st_rel(&core_regs(c)->cond, PTO_COND_IDLE);
		g.cores[c].id = c;
		if (pthread_create(&g.cores[c].thread, &attr, core_main,
				   &g.cores[c])) {
			logm("cannot start core %u", c);
			return 1;
		}
		g.cores[c].live = true;
		started++;
	}
	pthread_attr_destroy(&attr);
	if (g.verbose)
		logm("%u cores online (%u AIC + %u AIV on the device)", started,
		     g.info.nr_aic, g.info.nr_aiv);
	if (ready_fd >= 0) {
		char b = 'R';

		if (write(ready_fd, &b, 1) != 1)
			logm("ready fd: %s", strerror(errno));
		close(ready_fd);
	}
	for (c = 0; c < g.nr_cores; c++)
		if (g.cores[c].live)
			pthread_join(g.cores[c].thread, NULL);
	/* clean exit: detach so that the cores go OFFLINE, not DEAD */
	if (ioctl(g.fd, PTO_IOC_CORE_DETACH, &cores))
		logm("CORE_DETACH: %s", strerror(errno));
	if (g.verbose)
		logm("exit");
	return 0;
}
