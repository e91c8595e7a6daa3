// SPDX-License-Identifier: MIT
/*
 * pto-aicore - the AICores of an emulated PTO2 device
 *
 * A separate process (crash isolation), started and supervised by ptod.
 * It opens the device as EXECUTOR, attaches its cores (default: all the
 * device has), maps GM and the register file and runs the cores on a few
 * host threads: as many as the host has CPUs (-w, or PTO_AICORE_WORKERS),
 * each taking whichever core was given work, more only while dispatches
 * wait on kernels that do not finish (daemon/exec/pto_exec.h,
 * pto_exec_pool_start()).
 *
 * The threads run the executor core (daemon/exec/pto_exec.h), which owns
 * the protocol. What is pto-aicore's own is the device behind it: idle
 * threads sleep in PTO_IOC_CORE_WAIT_ANY on all idle cores at once, the
 * AICPU interrupt is PTO_IOC_RAISE_IRQ, and a kernel is the shared object
 * a client uploaded into GM (function_bin_addr: struct pto_kblob_hdr +
 * .so bytes), loaded through a memfd and dlopen, cached by address and
 * upload id, at most -k of them (daemon/exec/pto_kload.c).
 *
 * Kernels of clients that ptod sandboxes do not run here: their payloads
 * name a sandbox (exec_ctx), a process of the client's own user that
 * maps only the client's buffers, and the thread that took the dispatch
 * hands the task to that sandbox's mailbox and waits for its answer
 * (aicore_sbx.c). ptod sends the mailboxes over the control channel
 * (-C FD, a SOCK_SEQPACKET socket; pto-private/sandbox.h).
 *
 * A kernel that crashes kills the process: the device marks its cores
 * DEAD and interrupts the AICPU; ptod fails the task and restarts us.
 *
 * The device is pto.ko's /dev/ptoN, or with -u the user-mode device
 * (daemon/udev) whose two memfds ptod passes down: there the idle threads
 * park on a shared futex and the interrupt is one too; everything else
 * is the same code.
 *
 * usage: pto-aicore [-d /dev/pto0 | -u REGS_FD,GM_FD] [-c CORES]
 *                   [-w WORKERS] [-k KERNELS] [-s SPINS] [-t SPIN_NS]
 *                   [-r READY_FD] [-C CTL_FD] [-v]
 *   CORES: "all" (default) or a list like 0-23,30,32
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto/pto_kernel.h>
#include <pto-private/devinfo.h>
#include <pto-private/parse.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>
#include <pto-private/wire.h>

#include "aicore_sbx.h"
#include "pto_exec.h"
#include "pto_kload.h"
#include "pto_udev.h"

/* -t: an idle thread polls at most a second before it parks */
#define AICORE_SPIN_NS_MAX	1000000000LL

struct aicore;

/**
 * struct aicore_dev - the device the cores are on.
 * @open: open @arg, map the register file and GM into a->exec, fill
 *	a->info.
 * @attach, @detach: claim or give back the cores of @mask.
 * @park_any: pto_exec_ops.park_any.
 * @raise_irq: the AICPU interrupt on behalf of @core.
 */
struct aicore_dev {
	int (*open)(struct aicore *a, const char *arg);
	int (*attach)(struct aicore *a, const uint64_t *mask);
	int (*detach)(struct aicore *a, const uint64_t *mask);
	int (*park_any)(struct aicore *a, const uint64_t *mask,
			int64_t deadline_ns, uint32_t *core);
	int (*raise_irq)(struct aicore *a, uint32_t core);
};

/* The process: set up in main() before any core thread starts. */
struct aicore {
	const struct aicore_dev *dev;
	int fd;			/* pto.ko: the device file */
	struct pto_udev *udev;	/* the user-mode device */
	pid_t pid;
	struct pto_info info;
	struct pto_exec exec;
	struct pto_kcache kcache;
	struct aicore_sbxs *sbxs;	/* NULL: no control channel (-C) */
	bool verbose;
};

void aicore_msg(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pto-aicore[%d]: %s\n", (int)getpid(), buf);
}

/* ---- The executor's device ------------------------------------------------- */

static int aicore_kernel(struct pto_exec *ex, const PTO2DispatchPayload *p,
			 uint32_t core, pto_kernel_entry_fn *fn, void **ref)
{
	struct aicore *a = ex->priv;

	return pto_kcache_task(&a->kcache, ex, p, core, fn, ref);
}

static void aicore_kernel_put(struct pto_exec *ex, void *ref)
{
	struct aicore *a = ex->priv;

	pto_kcache_put(&a->kcache, ex, ref);
}

static int aicore_hand_off(struct pto_exec *ex, uint32_t core,
			   const PTO2DispatchPayload *p)
{
	struct aicore *a = ex->priv;

	return aicore_sbx_hand_off(a->sbxs, ex, core, p);
}

static int aicore_park_any(struct pto_exec *ex, const uint64_t *mask,
			   int64_t deadline_ns, uint32_t *core)
{
	struct aicore *a = ex->priv;

	return a->dev->park_any(a, mask, deadline_ns, core);
}

static void aicore_raise_irq(struct pto_exec *ex, uint32_t core)
{
	struct aicore *a = ex->priv;
	int ret = a->dev->raise_irq(a, core);

	if (ret)
		aicore_msg("core %u: RAISE_IRQ: %s", core, strerror(-ret));
}

static void aicore_log(struct pto_exec *ex, const char *msg)
{
	(void)ex;
	aicore_msg("%s", msg);
}

static const struct pto_exec_ops aicore_exec_ops = {
	.kernel = aicore_kernel,
	.kernel_put = aicore_kernel_put,
	.park_any = aicore_park_any,
	.raise_irq = aicore_raise_irq,
	.hand_off = aicore_hand_off,
	.log = aicore_log,
	/* runtime.rst, "Spinning threads yield" */
	.spin_yield = PTO_EXEC_YIELD_AUTO,
};

/* ---- Setup ------------------------------------------------------------------------- */

/* "all" or a list of cores (pto_parse_cores()) into @mask. */
static int parse_cores(const char *s, uint64_t *mask, uint32_t nr_cores)
{
	if (strcmp(s, "all"))
		return pto_parse_cores(s, nr_cores, mask, PTO_CORE_MASK_WORDS);
	memset(mask, 0, sizeof(*mask) * PTO_CORE_MASK_WORDS);
	for (uint32_t c = 0; c < nr_cores; c++)
		mask[c / 64] |= 1ULL << (c % 64);
	return 0;
}

/* The device's register file at @regs and GM at @gm, in the executor. */
static void exec_setup(struct aicore *a, void *regs, void *gm)
{
	pto_exec_init(&a->exec, regs, &aicore_exec_ops, a);
	a->exec.gm.host = gm;
	a->exec.gm.dev_base = a->info.gm_dev_base;
	a->exec.gm.size = a->info.gm_size;
}

/* ---- pto.ko: /dev/ptoN, role EXECUTOR ----------------------------------------- */

static int kdev_open(struct aicore *a, const char *dev)
{
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_EXECUTOR };
	void *regs, *gm;
	int ret;

	a->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (a->fd < 0) {
		aicore_msg("open %s: %s", dev, strerror(errno));
		return -errno;
	}
	ret = pto_dev_get_info(a->fd, &a->info);
	if (ret == -EPROTO)
		aicore_msg("%s: pto.ko speaks ABI %u.%u, pto-aicore was built for %u.x",
		     dev, a->info.abi_version >> 16,
		     a->info.abi_version & 0xffff, PTO_ABI_MAJOR);
	else if (ret)
		aicore_msg("%s: GET_INFO: %s", dev, strerror(-ret));
	if (ret)
		return ret;
	if (ioctl(a->fd, PTO_IOC_SET_ROLE, &role)) {
		aicore_msg("%s: cannot become an executor: %s%s", dev,
		     strerror(errno),
		     errno == EPERM ? " (it needs CAP_SYS_ADMIN)" : "");
		return -errno;
	}
	regs = pto_regs_map_executor(a->fd, a->info.regs_size,
				     (off_t)a->info.regs_mmap_offset);
	gm = mmap(NULL, a->info.gm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  a->fd, (off_t)a->info.gm_mmap_offset);
	if (regs == MAP_FAILED || gm == MAP_FAILED) {
		aicore_msg("mmap: %s", strerror(errno));
		return -errno;
	}
	exec_setup(a, regs, gm);
	a->exec.unparks = true;		/* kmod.rst, CORE_WAIT_ANY */
	return 0;
}

/* CORE_ATTACH / CORE_DETACH of @mask. */
static int kdev_cores(struct aicore *a, unsigned long cmd, const uint64_t *mask)
{
	struct pto_cores c = { .size = sizeof(c) };

	memcpy(c.mask, mask, sizeof(c.mask));
	return ioctl(a->fd, cmd, &c) ? -errno : 0;
}

static int kdev_attach(struct aicore *a, const uint64_t *mask)
{
	return kdev_cores(a, PTO_IOC_CORE_ATTACH, mask);
}

static int kdev_detach(struct aicore *a, const uint64_t *mask)
{
	return kdev_cores(a, PTO_IOC_CORE_DETACH, mask);
}

static int kdev_park_any(struct aicore *a, const uint64_t *mask,
			 int64_t deadline_ns, uint32_t *core)
{
	struct pto_core_wait_any w = {
		.size = sizeof(w),
		.timeout_ns = deadline_ns,
	};

	memcpy(w.mask, mask, sizeof(w.mask));
	if (ioctl(a->fd, PTO_IOC_CORE_WAIT_ANY, &w))
		return -errno;
	*core = w.core;
	return 0;
}

static int kdev_raise_irq(struct aicore *a, uint32_t core)
{
	struct pto_raise_irq ri = { .size = sizeof(ri), .core = core };

	return ioctl(a->fd, PTO_IOC_RAISE_IRQ, &ri) ? -errno : 0;
}

static const struct aicore_dev kdev = {
	.open = kdev_open,
	.attach = kdev_attach,
	.detach = kdev_detach,
	.park_any = kdev_park_any,
	.raise_irq = kdev_raise_irq,
};

/* ---- The user-mode device: -u REGS_FD,GM_FD from ptod ---------------------------- */

static int udev_open(struct aicore *a, const char *arg)
{
	uint64_t fd[2];
	int regs_fd, gm_fd, ret;
	const char *end;

	if (pto_parse_u64(arg, 10, INT_MAX, &fd[0], &end) || *end != ',' ||
	    pto_parse_u64_all(end + 1, 10, INT_MAX, &fd[1])) {
		aicore_msg("-u %s: two descriptors, REGS_FD,GM_FD", arg);
		return -EINVAL;
	}
	regs_fd = (int)fd[0];
	gm_fd = (int)fd[1];
	/* ptod's descriptors are of no use to a kernel we run */
	fcntl(regs_fd, F_SETFD, FD_CLOEXEC);
	fcntl(gm_fd, F_SETFD, FD_CLOEXEC);
	ret = pto_udev_open_fds(regs_fd, gm_fd, &a->udev);
	if (ret) {
		if (ret == -EPROTO)
			aicore_msg("-u %s: the user-mode device speaks another ABI than pto-aicore's %u.x",
			     arg, PTO_ABI_MAJOR);
		else
			aicore_msg("-u %s: not a user-mode device: %s", arg,
			     strerror(-ret));
		return ret;
	}
	a->info = a->udev->info;
	exec_setup(a, a->udev->regs, a->udev->gm);
	return 0;
}

static int udev_attach(struct aicore *a, const uint64_t *mask)
{
	return pto_udev_attach(a->udev, a->pid, mask);
}

static int udev_detach(struct aicore *a, const uint64_t *mask)
{
	return pto_udev_detach(a->udev, a->pid, mask);
}

static int udev_park_any(struct aicore *a, const uint64_t *mask,
			 int64_t deadline_ns, uint32_t *core)
{
	return pto_udev_park_any(a->udev, a->pid, mask, deadline_ns, core);
}

static int udev_raise_irq(struct aicore *a, uint32_t core)
{
	(void)core;
	pto_udev_irq_raise(a->udev);
	return 0;
}

static const struct aicore_dev udev = {
	.open = udev_open,
	.attach = udev_attach,
	.detach = udev_detach,
	.park_any = udev_park_any,
	.raise_irq = udev_raise_irq,
};

static void usage(void)
{
	fprintf(stderr,
		"usage: pto-aicore [-d DEVICE | -u REGS_FD,GM_FD] [-c all|LIST]\n"
		"                  [-w WORKERS] [-k KERNELS] [-s SPINS] [-t SPIN_NS]\n"
		"                  [-r READY_FD] [-C CTL_FD] [-v]\n"
		"  -u      the user-mode device ptod created: its two memfds, inherited\n"
		"  -C      ptod's control channel: the clients' sandboxes\n"
		"  -w      host threads running the cores (default: PTO_AICORE_WORKERS,\n"
		"          else the host's CPUs); more start only while dispatches\n"
		"          wait on kernels that do not finish\n"
		"  -k      kernels kept loaded, least recently used unloaded first\n"
		"          (default: PTO_AICORE_KERNELS, else %u; at most %u)\n"
		"  -s, -t  an idle thread polls the cores at most SPINS times (%u) or\n"
		"          SPIN_NS ns (%u), whichever ends first, before it parks,\n"
		"          yielding its CPU every 16 polls: PTO_EXEC_SPIN_YIELD=auto\n"
		"          (the default) while a thread waits for a CPU and the host\n"
		"          is not busy, 1 always, 0 never\n"
		"  PTO_AICORE_PARK_MS: the longest park of an idle thread (%u ms;\n"
		"          kicks end it, so it only caps what a lost kick costs)\n",
		PTO_KCACHE_MAX, PTO_KCACHE_MAX_LIMIT, PTO_EXEC_SPINS,
		PTO_EXEC_SPIN_NS, PTO_EXEC_PARK_NS / 1000000);
}

/* @s as a decimal integer from @min to @max, else -1 (@min >= 0). */
static long long num_arg(const char *s, long long min, long long max)
{
	uint64_t n;

	if (pto_parse_dec(s, (uint64_t)min, (uint64_t)max, &n))
		return -1;
	return (long long)n;
}

/*
 * A count of 1 .. @max from the option's @arg, else the environment's
 * @env (an empty variable counts as unset), else 0 (the default); -1 if
 * invalid, an empty option included. *@from: what was parsed.
 */
static long count_arg(const char *arg, const char *env, long max,
		      const char **from)
{
	if (!arg) {
		arg = getenv(env);
		if (arg && !*arg)
			arg = NULL;
	}
	*from = arg;
	return arg ? (long)num_arg(arg, 1, max) : 0;
}

/*
 * The value of -s SPINS, -t SPIN_NS, -r READY_FD or -C CTL_FD (@opt), or
 * -1 after saying it is bad.
 */
static long long num_option(int opt, const char *arg)
{
	long long max = opt == 's' ? UINT32_MAX :
			opt == 't' ? AICORE_SPIN_NS_MAX : INT_MAX;
	long long v = num_arg(arg, 0, max);

	if (v < 0)
		aicore_msg("bad -%c '%s' (0 .. %lld)", opt, arg, max);
	return v;
}

/* Run the attached cores until they stop; 0 or -errno. */
static int run_cores(struct aicore *a, const uint64_t *cores, uint32_t workers,
		     uint64_t park_ns, int ready_fd)
{
	struct pto_exec_pool_config pc = { .workers = workers,
					   .park_ns = park_ns,
					   .name = "aicore" };
	struct pto_exec_pool_stats st;
	struct pto_exec_pool *pool;
	int ret;

	memcpy(pc.cores, cores, sizeof(pc.cores));
	ret = pto_exec_pool_start(&a->exec, &pc, &pool);
	if (ret) {
		aicore_msg("cannot start the core threads: %s", strerror(-ret));
		return ret;
	}
	pto_exec_pool_get_stats(pool, &st);
	aicore_msg("cores online on %u threads (%u AIC + %u AIV on the device); idle threads yield: %s",
		   st.threads, a->info.nr_aic, a->info.nr_aiv,
		   pto_exec_spin_yield_name(a->exec.spin_yield));
	if (ready_fd >= 0) {
		char b = 'R';

		if (write(ready_fd, &b, 1) != 1)
			aicore_msg("ready fd: %s", strerror(errno));
		close(ready_fd);
	}
	ret = pto_exec_pool_join(pool);
	if (ret)
		aicore_msg("the core threads stopped: %s", strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/pto0", *cores_arg = "all", *workers = NULL;
	const char *kernels = NULL, *from;
	uint64_t cores[PTO_CORE_MASK_WORDS];
	struct aicore a = { .fd = -1, .dev = &kdev };
	uint32_t spins = PTO_EXEC_SPINS;
	int64_t spin_ns = PTO_EXEC_SPIN_NS;
	int opt, ready_fd = -1, ctl_fd = -1, ret, ndev = 0;
	long nworkers, nkernels;
	uint64_t park_ns;
	long long v;
	uint8_t yield = aicore_exec_ops.spin_yield;	/* checked here only */

	while ((opt = getopt(argc, argv, "d:u:c:w:k:s:t:r:C:vh")) != -1) {
		switch (opt) {
		case 'd':
		case 'u':
			if (ndev++) {
				aicore_msg("-d and -u name the one device: give one of them once");
				return 2;
			}
			dev = optarg;
			a.dev = opt == 'd' ? &kdev : &udev;
			break;
		case 'c': cores_arg = optarg; break;
		case 'w': workers = optarg; break;
		case 'k': kernels = optarg; break;
		case 's':
		case 't':
		case 'r':
		case 'C':
			v = num_option(opt, optarg);
			if (v < 0)
				return 2;
			if (opt == 's')
				spins = (uint32_t)v;
			else if (opt == 't')
				spin_ns = v;
			else if (opt == 'r')
				ready_fd = (int)v;
			else
				ctl_fd = (int)v;
			break;
		case 'v': a.verbose = true; break;
		default: usage(); return 2;
		}
	}
	if (optind < argc) {
		aicore_msg("unexpected argument '%s'", argv[optind]);
		usage();
		return 2;
	}
	nworkers = count_arg(workers, "PTO_AICORE_WORKERS", PTO_MAX_CORES,
			     &from);
	if (nworkers < 0) {
		aicore_msg("bad worker count '%s' (1 .. %d)", from,
			   PTO_MAX_CORES);
		return 2;
	}
	nkernels = count_arg(kernels, "PTO_AICORE_KERNELS",
			     PTO_KCACHE_MAX_LIMIT, &from);
	if (nkernels < 0) {
		aicore_msg("bad kernel count '%s' (1 .. %d)", from,
			   PTO_KCACHE_MAX_LIMIT);
		return 2;
	}
	if (pto_env_bound_ms("PTO_AICORE_PARK_MS", &park_ns)) {
		aicore_msg("bad PTO_AICORE_PARK_MS '%s' (1 .. %d)",
			   getenv("PTO_AICORE_PARK_MS"), PTO_BOUND_MS_MAX);
		return 2;
	}
	if (pto_exec_spin_yield_env(&yield)) {
		aicore_msg("bad %s '%s' (0, 1 or auto)", PTO_EXEC_SPIN_YIELD_ENV,
			   getenv(PTO_EXEC_SPIN_YIELD_ENV));
		return 2;
	}
	/* ptod's death must not leave us orphaned on the device */
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	pto_kcache_init(&a.kcache, (uint32_t)nkernels, a.verbose);

	a.pid = getpid();
	if (a.dev->open(&a, dev))
		return 1;
	if (ctl_fd >= 0 && aicore_sbx_start(ctl_fd, a.info.nr_cores, &a.sbxs)) {
		aicore_msg("cannot serve the control channel");
		return 1;
	}
	a.exec.spins = spins;
	a.exec.spin_ns = spin_ns;
	if (parse_cores(cores_arg, cores, a.info.nr_cores)) {
		aicore_msg("bad core list '%s' (device has %u cores)", cores_arg,
		     a.info.nr_cores);
		return 2;
	}
	ret = a.dev->attach(&a, cores);
	if (ret) {
		aicore_msg("CORE_ATTACH: %s", strerror(-ret));
		return 1;
	}
	if (run_cores(&a, cores, (uint32_t)nworkers, park_ns, ready_fd))
		return 1;	/* the device marks the cores DEAD: ptod restarts us */
	/* clean exit: detach so that the cores go OFFLINE, not DEAD */
	ret = a.dev->detach(&a, cores);
	if (ret)
		aicore_msg("CORE_DETACH: %s", strerror(-ret));
	/* the core threads are joined: nothing holds a kernel or the device */
	pto_kcache_destroy(&a.kcache, &a.exec);
	if (a.udev)
		pto_udev_destroy(a.udev);
	else
		close(a.fd);
	if (a.verbose)
		aicore_msg("exit");
	return 0;
}
