// SPDX-License-Identifier: MIT
/*
 * ptod_kdev.c - ptod on pto.ko: the AICPU role on /dev/ptoN
 *
 * The device backend given to pto2: regs = the mapped register file,
 * kick = PTO_IOC_KICK, irq_count = the register, irq_wait =
 * PTO_IOC_IRQ_WAIT, irq_wake = PTO_IOC_RAISE_IRQ with no core (ABI 3.3 on;
 * on an older module the engine's threads poll and sleep bounded). A
 * client's file is its own open /dev/ptoN, whose buffers the device
 * checks (GM_LOOKUP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pto-private/devinfo.h>

#include "ptod.h"

static int kdev_kick(void *ctx, uint32_t core)
{
	struct ptod *d = ctx;
	struct pto_cores k;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.mask[core / 64] = 1ULL << (core % 64);
	return ioctl(d->dev_fd, PTO_IOC_KICK, &k) ? -errno : 0;
}

static uint32_t kdev_irq_count(void *ctx)
{
	struct ptod *d = ctx;

	return reg_load_acquire(&pto_regs_info(d->regs)->irq_count);
}

static int kdev_irq_wait(void *ctx, uint32_t *count, int64_t deadline_ns)
{
	struct ptod *d = ctx;
	struct pto_irq_wait w;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.count = *count;
	w.timeout_ns = deadline_ns;
	if (ioctl(d->dev_fd, PTO_IOC_IRQ_WAIT, &w)) {
		*count = kdev_irq_count(d);
		return -errno;
	}
	*count = w.count;
	return 0;
}

/*
 * Wake the engine's threads out of IRQ_WAIT: the AICPU raises its own
 * interrupt. It cannot fail on a module that offers it (ABI 3.3); if it
 * did, a sleeping thread would still wake at its bound, so say it once.
 */
static void kdev_irq_wake(void *ctx)
{
	struct ptod *d = ctx;
	struct pto_raise_irq r;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.core = PTO_CORE_NONE;
	if (ioctl(d->dev_fd, PTO_IOC_RAISE_IRQ, &r) &&
	    !atomic_exchange_explicit(&d->irq_wake_failed, true,
				      memory_order_relaxed))
		ptod_log(PTOD_LOG_ERR, "RAISE_IRQ (wake-up): %m");
}

/*
 * Not in the children ptod forks (pto-aicore, the sandboxes: each execs at
 * once). pto.ko's mappings are PFNMAP, whose page tables fork() copies
 * entry by entry: with all of a 256 MiB GM touched, a fork took 14-16 ms
 * in the VM instead of 1.1-1.5 ms, on the main thread that serves every
 * client (a sandbox start, a pto-aicore restart).
 */
static void kdev_dontfork(void *p, size_t len, const char *what)
{
	if (madvise(p, len, MADV_DONTFORK))
		ptod_log(PTOD_LOG_WARN, "madvise %s MADV_DONTFORK: %m: each fork copies its page tables",
			 what);
}

/* Register file and all of GM, as the AICPU maps them. */
static int kdev_map(struct ptod *d)
{
	void *gm;

	d->regs = mmap(NULL, d->info.regs_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, d->dev_fd, (off_t)d->info.regs_mmap_offset);
	if (d->regs == MAP_FAILED) {
		ptod_log(PTOD_LOG_ERR, "mmap registers: %m");
		return -errno;
	}
	gm = mmap(NULL, d->info.gm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  d->dev_fd, (off_t)d->info.gm_mmap_offset);
	if (gm == MAP_FAILED) {
		ptod_log(PTOD_LOG_ERR, "mmap GM: %m");
		return -errno;
	}
	d->gm.host = gm;
	d->gm.dev_base = d->info.gm_dev_base;
	d->gm.size = d->info.gm_size;
	kdev_dontfork(d->regs, d->info.regs_size, "registers");
	kdev_dontfork(gm, d->info.gm_size, "GM");
	return 0;
}

static int kdev_open(struct ptod *d)
{
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_AICPU };
	struct ptod_fd_id id;
	int ret;

	d->dev_fd = open(d->dev_path, O_RDWR | O_CLOEXEC);
	if (d->dev_fd < 0) {
		ptod_log(PTOD_LOG_ERR, "open %s: %m", d->dev_path);
		return -errno;
	}
	ret = ptod_fd_id(d->dev_fd, &id);
	if (ret)
		return ret;
	d->dev_rdev = id.rdev;
	ret = pto_dev_get_info(d->dev_fd, &d->info);
	if (ret == -EPROTO) {
		ptod_log(PTOD_LOG_ERR,
			 "%s: pto.ko speaks ABI %u.%u, ptod was built for %u.x",
			 d->dev_path, d->info.abi_version >> 16,
			 d->info.abi_version & 0xffff, PTO_ABI_MAJOR);
		return ret;
	}
	if (ret) {
		ptod_log(PTOD_LOG_ERR, "GET_INFO: %s", strerror(-ret));
		return ret;
	}
	if (ioctl(d->dev_fd, PTO_IOC_SET_ROLE, &role)) {
		ptod_log(PTOD_LOG_ERR, "%s: cannot become the AICPU: %m%s",
			 d->dev_path,
			 errno == EBUSY ? " (another ptod is running?)" :
			 errno == EPERM ? " (it needs CAP_SYS_ADMIN)" : "");
		return -errno;
	}
	if (kdev_map(d))
		return -errno;
	d->pdev.ctx = d;
	d->pdev.kick = kdev_kick;
	d->pdev.irq_count = kdev_irq_count;
	d->pdev.irq_wait = kdev_irq_wait;
	/* ABI 3.2 and older: no wake-up, the schedulers sleep bounded */
	d->pdev.irq_wake = pto_abi_aicpu_raises(d->info.abi_version) ?
			   kdev_irq_wake : NULL;
	if (!d->pdev.irq_wake)
		ptod_log(PTOD_LOG_WARN,
			 "%s: pto.ko ABI %u.%u cannot wake the schedulers; they poll (ABI 3.3 can)",
			 d->dev_path, d->info.abi_version >> 16,
			 d->info.abi_version & 0xffff);
	d->exec_opt = "-d";
	snprintf(d->exec_arg, sizeof(d->exec_arg), "%s", d->dev_path);
	return 0;
}

static void kdev_close(struct ptod *d)
{
	if (d->dev_fd >= 0)
		close(d->dev_fd);	/* the device releases the AICPU role */
	d->dev_fd = -1;
}

static int kdev_gm_alloc(struct ptod *d, uint64_t len, uid_t uid,
			 uint32_t *handle, uint64_t *dev_addr)
{
	struct pto_gm_alloc ga = { .size = sizeof(ga), .len = len };

	if (d->gm_quota || d->quota_rules.nr) {
		/* ptod_gm_quota_setup() saw ABI 3.4 */
		ga.flags = PTO_GM_ALLOC_CHARGE;
		ga.uid = (__u32)uid;
	}

	if (ioctl(d->dev_fd, PTO_IOC_GM_ALLOC, &ga))
		return -errno;
	*handle = ga.handle;
	*dev_addr = ga.dev_addr;
	return 0;
}

static void kdev_gm_free(struct ptod *d, uint32_t handle)
{
	struct pto_gm_free f = { .size = sizeof(f), .handle = handle };

	if (ioctl(d->dev_fd, PTO_IOC_GM_FREE, &f))
		ptod_log(PTOD_LOG_ERR, "GM_FREE %u: %m", handle);
}

/* A file of the same character device. */
static int kdev_client_file(struct client *c, int fd)
{
	struct ptod_fd_id id;

	if (ptod_fd_id(fd, &id) || id.mode != S_IFCHR ||
	    id.rdev != c->d->dev_rdev)
		return -ENODEV;
	return 0;
}

static void kdev_client_release(struct client *c)
{
	(void)c;	/* its buffers die with c->cfd */
}

/* GM_PIN on the AICPU file, with the client's file (ptod_pins.c). */
static int kdev_pin(struct client *c, uint64_t addr, uint64_t len,
		    struct ptod_pin *out)
{
	struct pto_gm_pin gp = { .size = sizeof(gp), .fd = c->cfd,
				 .dev_addr = addr, .len = len };

	if (ioctl(c->d->dev_fd, PTO_IOC_GM_PIN, &gp))
		return -errno;
	*out = (struct ptod_pin){ .start = gp.buf_dev_addr,
				  .end = gp.buf_dev_addr + gp.buf_len,
				  .id = gp.pin };
	return 0;
}

static void kdev_unpin(struct ptod *d, uint32_t id)
{
	struct pto_gm_unpin u = { .size = sizeof(u), .pin = id };

	if (ioctl(d->dev_fd, PTO_IOC_GM_UNPIN, &u))
		ptod_log(PTOD_LOG_ERR, "GM_UNPIN %u: %m", id);
}

static void kdev_exec_gone(struct ptod *d, pid_t pid)
{
	(void)d;	/* pto.ko released its cores when its file closed */
	(void)pid;
}

static void kdev_message(struct client *c, struct pto_msg *m)
{
	ptod_reply(c, -EOPNOTSUPP,
		   "message %u is for ptod's user-mode device; this ptod runs on %s (pto.ko): clients open it themselves (PTO_DEVICE), its counters are in /sys/class/misc, its HWS registers behind PTO_IOC_HWS_CONFIG",
		   m->type, c->d->dev_path);
}

static bool kdev_peer_ok(struct ptod *d, uid_t uid)
{
	(void)d;
	(void)uid;	/* the device checks every file itself */
	return true;
}

const struct ptod_dev_ops ptod_kdev_ops = {
	.name = "pto.ko",
	.open = kdev_open,
	.close = kdev_close,
	.gm_alloc = kdev_gm_alloc,
	.gm_free = kdev_gm_free,
	.client_file = kdev_client_file,
	.client_release = kdev_client_release,
	.pin = kdev_pin,
	.unpin = kdev_unpin,
	.exec_gone = kdev_exec_gone,
	.message = kdev_message,
	.peer_ok = kdev_peer_ok,
	.events_start = ptod_nl_start,
	.events_stop = ptod_nl_stop,
};
