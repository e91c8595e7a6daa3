// SPDX-License-Identifier: MIT
/*
 * pto_udev.c - the user-mode device: memory, the AICPU's and the
 * executor's operations (see pto_udev.h)
 *
 * The notification protocol is pto.ko's (Documentation/kmod.rst): a side
 * that sleeps announces it (parked, aicpu_irq_en), fences and rechecks;
 * the other enters the device only if it sees the announcement. Here
 * "entering the device" is a futex call on a shared word, and the
 * device's own announcement lets a kick or an interrupt skip the system
 * call when nobody sleeps: the kicks' parking lot (pto-private/parklot.h,
 * which also skips it while every parked thread has been woken already)
 * and @irq_waiters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pto-private/devinfo.h>
#include <pto-private/futex.h>
#include <pto-private/hws_regs.h>
#include <pto-private/parse.h>
#include <pto-private/profile.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "pto_udev.h"

#define SEALS	(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* The info page, writable (an executor's @regs maps it read-only). */
static struct pto_regs_info *uinfo(struct pto_udev *u)
{
	return u->info_w;
}

static struct pto_core_regs *ucore(struct pto_udev *u, uint32_t c)
{
	return pto_regs_core(u->regs, c);
}

static uint32_t nr_cores(struct pto_udev *u)
{
	return u->info.nr_cores;
}

/* The system counter copy of the info page (pto.ko: every park, kick...). */
static void touch_sys_cnt(struct pto_udev *u)
{
	struct pto_regs_info *ri = uinfo(u);
	uint64_t now = pto_sys_cnt(ri);
	uint64_t old = atomic_load_explicit(PTO_REG64(&ri->sys_cnt),
					    memory_order_relaxed);

	/* as pto.ko: racing stores keep the latest, the copy never goes back */
	while (old < now &&
	       !atomic_compare_exchange_weak_explicit(PTO_REG64(&ri->sys_cnt),
						      &old, now,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* ---- Configuration ------------------------------------------------------- */

/*
 * @name's value in [lo, hi] into *@v, if set: decimal digits only (no
 * sign, space or base prefix, pto_parse_u64()); -EINVAL otherwise.
 */
static int env_u32(const char *name, uint32_t lo, uint32_t hi, uint32_t *v,
		   char *err, size_t errlen)
{
	const char *s = getenv(name);
	uint64_t n;

	if (!s || !*s)
		return 0;
	if (pto_parse_dec(s, lo, hi, &n)) {
		snprintf(err, errlen, "%s=%s: not a number in %u .. %u", name,
			 s, lo, hi);
		return -EINVAL;
	}
	*v = (uint32_t)n;
	return 0;
}

int pto_udev_config_from_env(struct pto_udev_config *cfg, char *err,
			     size_t errlen)
{
	const char *p = getenv("PTO_USER_PROFILE");
	uint32_t mb = PTO_UDEV_GM_MB_DEFAULT, aic = 0;
	const struct pto_profile_desc *d = &pto_profiles[0];
	size_t i;

	if (p && *p) {
		for (i = 0; i < sizeof(pto_profiles) / sizeof(*d); i++)
			if (!strcmp(p, pto_profiles[i].name))
				break;
		if (i == sizeof(pto_profiles) / sizeof(*d)) {
			snprintf(err, errlen,
				 "PTO_USER_PROFILE=%s: a2a3 or a5", p);
			return -EINVAL;
		}
		d = &pto_profiles[i];
	}
	aic = d->blocks;
	if (env_u32("PTO_USER_NR_AIC", 1, PTO_UDEV_NR_AIC_MAX, &aic, err,
		    errlen) ||
	    env_u32("PTO_USER_GM_MB", PTO_UDEV_GM_MB_MIN, PTO_UDEV_GM_MB_MAX,
		    &mb, err, errlen))
		return -EINVAL;
	cfg->profile = d->id;
	cfg->nr_aic = aic;
	cfg->gm_size = (uint64_t)mb << 20;
	return 0;
}

/* ---- Memory ------------------------------------------------------------------ */

/* A sealed memfd of @size bytes (sparse: pages come on first touch). */
static int new_memfd(const char *name, uint64_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), ret;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) || fcntl(fd, F_ADD_SEALS, SEALS)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * The register memfd of @u, all of it writable for the AICPU, as pto.ko
 * maps it for an EXECUTOR if @executor (pto_regs_map_executor()), then
 * its info page writable on its own for what pto.ko writes there.
 */
static int map_regs(struct pto_udev *u, bool executor)
{
	void *p;

	u->regs = executor ?
		  pto_regs_map_executor(u->regs_fd, PTO_UDEV_REGS_MAP, 0) :
		  mmap(NULL, PTO_UDEV_REGS_MAP, PROT_READ | PROT_WRITE,
		       MAP_SHARED, u->regs_fd, 0);
	if (u->regs == MAP_FAILED) {
		u->regs = NULL;
		return -errno;
	}
	u->sh = (void *)((uint8_t *)u->regs + PTO_UDEV_SHARED_OFFSET);
	if (!executor) {
		u->info_w = pto_regs_info(u->regs);
		return 0;
	}
	p = mmap(NULL, PTO_REGS_HWS_OFFSET, PROT_READ | PROT_WRITE,
		 MAP_SHARED, u->regs_fd, PTO_REGS_INFO_OFFSET);
	if (p == MAP_FAILED)
		return -errno;
	u->info_w = p;
	return 0;
}

/* Map the two memfds of @u (sizes: PTO_UDEV_REGS_MAP, @gm_size). */
static int map_fds(struct pto_udev *u, uint64_t gm_size, bool executor)
{
	int ret = map_regs(u, executor);

	if (ret)
		return ret;
	u->gm = mmap(NULL, gm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     u->gm_fd, 0);
	if (u->gm == MAP_FAILED) {
		u->gm = NULL;
		return -errno;
	}
	u->info.gm_size = gm_size;
	return 0;
}

/* GET_INFO of the device whose info page @ri is. */
static void fill_info(struct pto_udev *u, const struct pto_regs_info *ri)
{
	memset(&u->info, 0, sizeof(u->info));	/* gm_size: the same */
	u->info.size = sizeof(u->info);
	u->info.abi_version = ri->abi_version;
	u->info.profile = ri->profile;
	u->info.nr_aic = ri->nr_aic;
	u->info.nr_aiv = ri->nr_aiv;
	u->info.nr_cores = ri->nr_cores;
	u->info.dev_index = ri->dev_index;
	u->info.gm_size = ri->gm_size;
	u->info.gm_dev_base = ri->gm_dev_base;
	u->info.gm_free = ri->gm_size;
	u->info.caps = ri->caps;
	u->info.regs_size = PTO_REGS_SIZE;
	u->info.regs_mmap_offset = 0;
	u->info.gm_mmap_offset = 0;	/* GM offset 0 is memfd offset 0 */
	u->info.sys_cnt_freq = ri->sys_cnt_freq;
}

/* The registers as pto.ko sets them at load, with an AICPU attached. */
static void init_regs(struct pto_udev *u, const struct pto_udev_config *cfg)
{
	struct pto_regs_info *ri = uinfo(u);
	struct pto_hws_cfg hc;
	uint32_t i;

	ri->magic = PTO_REGS_MAGIC;
	ri->abi_version = PTO_ABI_VERSION;
	ri->profile = cfg->profile;
	ri->nr_aic = cfg->nr_aic;
	ri->nr_aiv = cfg->nr_aic * PTO_AIV_PER_AIC;
	ri->nr_cores = ri->nr_aic + ri->nr_aiv;
	ri->gm_size = cfg->gm_size;
	ri->gm_dev_base = PTO_GM_DEV_BASE;
	ri->caps = cfg->profile == PTO_PROFILE_A5 ? PTO_CAPS_A5 : PTO_CAPS_A2A3;
	ri->sys_cnt_freq = PTO_SYS_CNT_FREQ;
	ri->sys_cnt_epoch_ns = pto_mono_ns();
	pto_hws_cfg_default(&hc, ri->nr_cores);
	pto_hws_cfg_write(pto_regs_hws(u->regs), &hc);
	for (i = 0; i < ri->nr_cores; i++) {
		ucore(u, i)->data_main_base = PTO_DMB_IDLE;
		ucore(u, i)->cond = PTO_COND_IDLE;
		ucore(u, i)->state = PTO_CORE_OFFLINE;
	}
	fill_info(u, ri);
	reg_store_release(&ri->aicpu_attached, 1);
}

static int init_shared(struct pto_udev *u)
{
	pthread_mutexattr_t ma;
	int ret;

	u->sh->magic = PTO_UDEV_MAGIC;
	u->sh->version = PTO_UDEV_VERSION;
	ret = -pthread_mutexattr_init(&ma);
	if (ret)
		return ret;
	ret = -pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	if (!ret)
		ret = -pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	if (!ret)
		ret = -pthread_mutex_init(&u->sh->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	return ret;
}

static struct pto_udev *udev_new(void)
{
	struct pto_udev *u = calloc(1, sizeof(*u));

	if (u) {
		u->regs_fd = -1;
		u->gm_fd = -1;
	}
	return u;
}

int pto_udev_create(const struct pto_udev_config *cfg, struct pto_udev **out)
{
	struct pto_udev *u;
	int ret;

	*out = NULL;
	if (!cfg->nr_aic || cfg->nr_aic > PTO_UDEV_NR_AIC_MAX ||
	    cfg->gm_size < 4096 || cfg->gm_size % 4096)
		return -EINVAL;
	u = udev_new();
	if (!u)
		return -ENOMEM;
	u->regs_fd = new_memfd("pto-user-regs", PTO_UDEV_REGS_MAP);
	ret = u->regs_fd < 0 ? u->regs_fd : 0;
	if (!ret) {
		u->gm_fd = new_memfd("pto-user-gm", cfg->gm_size);
		ret = u->gm_fd < 0 ? u->gm_fd : 0;
	}
	if (!ret)
		ret = map_fds(u, cfg->gm_size, false);
	if (!ret)
		ret = init_shared(u);
	if (ret) {
		pto_udev_destroy(u);
		return ret;
	}
	init_regs(u, cfg);
	*out = u;
	return 0;
}

int pto_udev_open_fds(int regs_fd, int gm_fd, struct pto_udev **out)
{
	const struct pto_regs_info *ri;
	struct pto_udev *u;
	struct stat st;
	int ret;

	*out = NULL;
	u = udev_new();
	if (!u) {
		close(regs_fd);
		close(gm_fd);
		return -ENOMEM;
	}
	u->regs_fd = regs_fd;
	u->gm_fd = gm_fd;
	if (fstat(regs_fd, &st) || st.st_size < PTO_UDEV_REGS_MAP) {
		pto_udev_destroy(u);
		return -ENODEV;
	}
	ret = fstat(gm_fd, &st) ? -errno :
	      map_fds(u, (uint64_t)st.st_size, true);
	if (!ret) {
		ri = uinfo(u);
		if (ri->magic != PTO_REGS_MAGIC ||
		    u->sh->magic != PTO_UDEV_MAGIC ||
		    u->sh->version != PTO_UDEV_VERSION ||
		    ri->gm_size != (uint64_t)st.st_size ||
		    !ri->nr_cores || ri->nr_cores > PTO_MAX_CORES)
			ret = -ENODEV;
		else if (!pto_abi_supported(ri->abi_version))
			ret = -EPROTO;
	}
	if (ret) {
		pto_udev_destroy(u);
		return ret;
	}
	fill_info(u, uinfo(u));
	*out = u;
	return 0;
}

void pto_udev_destroy(struct pto_udev *u)
{
	if (!u)
		return;
	if (u->gm)
		munmap(u->gm, u->info.gm_size);
	if (u->info_w && (void *)u->info_w != u->regs)
		munmap(u->info_w, PTO_REGS_HWS_OFFSET);
	if (u->regs)
		munmap(u->regs, PTO_UDEV_REGS_MAP);
	if (u->gm_fd >= 0)
		close(u->gm_fd);
	if (u->regs_fd >= 0)
		close(u->regs_fd);
	free(u);
}

/* ---- Core ownership ------------------------------------------------------------ */

static void lock(struct pto_udev *u)
{
	/* a holder died: the state it guards is written whole, go on */
	if (pthread_mutex_lock(&u->sh->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&u->sh->lock);
}

static void unlock(struct pto_udev *u)
{
	pthread_mutex_unlock(&u->sh->lock);
}

static bool in_mask(const uint64_t *mask, uint32_t c)
{
	return mask[c / 64] >> (c % 64) & 1;
}

/* @mask names at least one core, and none the device lacks. */
static int mask_ok(struct pto_udev *u, const uint64_t *mask)
{
	uint32_t w, n = nr_cores(u);
	uint64_t any = 0;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++) {
		if (mask[w] & ~pto_cores_in_word(n, w))
			return -EINVAL;
		any |= mask[w];
	}
	return any ? 0 : -EINVAL;
}

/* Every parked thread looks again (detach, death). */
static void wake_parkers(struct pto_udev *u)
{
	pto_parklot_wake_all(&u->sh->kick, true);
}

/* Core @c leaves its owner for @state (lock held). */
static void core_release(struct pto_udev *u, uint32_t c, uint32_t state)
{
	struct pto_core_regs *r = ucore(u, c);

	atomic_store(&u->sh->owner[c], 0);
	atomic_fetch_and(&u->sh->kick_pending[c / 64], ~(1ULL << (c % 64)));
	reg_store_relaxed(&r->parked, 0);
	reg_store_release(&r->state, state);
}

/* Is core @c free for @pid (lock held)? A dead owner's core is. */
static bool core_free_for(struct pto_udev *u, uint32_t c, pid_t pid)
{
	pid_t o = atomic_load(&u->sh->owner[c]);

	if (!o || o == pid)
		return true;
	if (kill(o, 0) && errno == ESRCH) {
		core_release(u, c, PTO_CORE_DEAD);
		return true;
	}
	return false;
}

/* CORE_ATTACH's reset of core @c, then ONLINE under @pid (lock held). */
static void core_attach(struct pto_udev *u, uint32_t c, pid_t pid)
{
	struct pto_core_regs *r = ucore(u, c);
	__u64 *pend = &pto_regs_hws(u->regs)->sip_launch_pending[c / 64];

	atomic_fetch_and(&u->sh->kick_pending[c / 64], ~(1ULL << (c % 64)));
	atomic_fetch_and(PTO_REG64(pend), ~(1ULL << (c % 64)));
	reg_store_relaxed(&r->data_main_base, PTO_DMB_IDLE);
	reg_store_relaxed(&r->cond, PTO_COND_IDLE);
	reg_store_relaxed(&r->parked, 0);
	reg64_store_relaxed(&r->task, 0);
	/* registers first, then the state that publishes them */
	reg_store_release(&r->state, PTO_CORE_ONLINE);
	atomic_store(&u->sh->owner[c], pid);
}

int pto_udev_attach(struct pto_udev *u, pid_t pid, const uint64_t *mask)
{
	uint32_t c;
	int ret = mask_ok(u, mask);

	if (ret || pid <= 0)
		return ret ? ret : -EINVAL;
	lock(u);
	for (c = 0; c < nr_cores(u); c++)
		if (in_mask(mask, c) && !core_free_for(u, c, pid))
			ret = -EBUSY;
	for (c = 0; !ret && c < nr_cores(u); c++)
		if (in_mask(mask, c))
			core_attach(u, c, pid);
	unlock(u);
	return ret;
}

int pto_udev_detach(struct pto_udev *u, pid_t pid, const uint64_t *mask)
{
	uint32_t c;
	int ret = mask_ok(u, mask);

	if (ret)
		return ret;
	lock(u);
	for (c = 0; c < nr_cores(u); c++)
		if (in_mask(mask, c) && atomic_load(&u->sh->owner[c]) != pid)
			ret = -EINVAL;
	for (c = 0; !ret && c < nr_cores(u); c++)
		if (in_mask(mask, c))
			core_release(u, c, PTO_CORE_OFFLINE);
	unlock(u);
	if (!ret)
		wake_parkers(u);	/* their waits end with -ENODEV */
	return ret;
}

int pto_udev_executor_gone(struct pto_udev *u, pid_t pid)
{
	uint32_t c;
	int n = 0;

	if (pid <= 0)
		return 0;
	lock(u);
	for (c = 0; c < nr_cores(u); c++)
		if (atomic_load(&u->sh->owner[c]) == pid) {
			core_release(u, c, PTO_CORE_DEAD);
			n++;
		}
	unlock(u);
	if (n) {
		wake_parkers(u);
		pto_udev_irq_raise(u);
	}
	return n;
}

/* ---- Kicks and parking ----------------------------------------------------- */

int pto_udev_kick(struct pto_udev *u, uint32_t core)
{
	struct pto_core_regs *r;

	if (core >= nr_cores(u))
		return -EINVAL;
	r = ucore(u, core);
	/* as pto.ko: only an online core that announced it sleeps */
	if (reg_load_acquire(&r->state) != PTO_CORE_ONLINE ||
	    !reg_load_relaxed(&r->parked))
		return 0;
	atomic_fetch_or(&u->sh->kick_pending[core / 64], 1ULL << (core % 64));
	atomic_fetch_add_explicit(PTO_REG32(&r->kick_count), 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&u->sh->kicks, 1, memory_order_relaxed);
	touch_sys_cnt(u);
	if (pto_parklot_kick(&u->sh->kick, true))
		atomic_fetch_add_explicit(&u->sh->kick_wakeups, 1,
					  memory_order_relaxed);
	return 0;
}

/*
 * A latched kick of a core of @mask, scanning from after *@from: 0 and
 * the core in *@from; -ENODEV (core in *@from) if a core of @mask is not
 * @pid's any more; -EAGAIN if neither.
 */
static int take_kick(struct pto_udev *u, pid_t pid, const uint64_t *mask,
		     uint32_t *from)
{
	uint32_t n = nr_cores(u), k;

	for (k = 1; k <= n; k++) {
		uint32_t c = (*from + k) % n;
		uint64_t bit = 1ULL << (c % 64);

		if (!in_mask(mask, c))
			continue;
		if (atomic_load(&u->sh->owner[c]) != pid) {
			*from = c;
			return -ENODEV;
		}
		if ((atomic_load(&u->sh->kick_pending[c / 64]) & bit) &&
		    (atomic_fetch_and(&u->sh->kick_pending[c / 64], ~bit) & bit)) {
			*from = c;
			return 0;
		}
	}
	return -EAGAIN;
}

/* A waiter leaving without a kick may have been woken for one: pass on. */
static void pass_on(struct pto_udev *u, const uint64_t *mask)
{
	uint32_t w;

	for (w = 0; w < PTO_CORE_MASK_WORDS; w++)
		if (atomic_load(&u->sh->kick_pending[w]) & mask[w]) {
			pto_parklot_kick(&u->sh->kick, true);
			return;
		}
}

static _Thread_local uint32_t park_from;

int pto_udev_park_any(struct pto_udev *u, pid_t pid, const uint64_t *mask,
		      int64_t deadline_ns, uint32_t *core)
{
	int ret = mask_ok(u, mask);
	uint32_t c;

	if (ret)
		return ret;
	for (c = 0; c < nr_cores(u); c++)
		if (in_mask(mask, c) && atomic_load(&u->sh->owner[c]) != pid)
			return -EINVAL;
	atomic_fetch_add_explicit(&u->sh->parks, 1, memory_order_relaxed);
	touch_sys_cnt(u);
	for (;;) {
		uint32_t seq = pto_parklot_seq(&u->sh->kick);

		c = park_from;
		ret = take_kick(u, pid, mask, &c);
		if (ret != -EAGAIN)
			break;
		if (deadline_ns && pto_mono_ns() >= deadline_ns) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = pto_parklot_wait(&u->sh->kick, seq, deadline_ns, true);
		if (ret == -EINTR)
			break;
	}
	if (ret == -ETIMEDOUT || ret == -EINTR) {
		pass_on(u, mask);
		return ret;
	}
	park_from = c;
	*core = c;
	if (!ret) {
		reg_store_relaxed(&ucore(u, c)->parked, 0);
		atomic_fetch_add_explicit(&u->sh->wakes, 1,
					  memory_order_relaxed);
	}
	touch_sys_cnt(u);
	return ret;
}

/* ---- The interrupt ------------------------------------------------------------ */

uint32_t pto_udev_irq_count(struct pto_udev *u)
{
	return reg_load_acquire(&uinfo(u)->irq_count);
}

void pto_udev_irq_raise(struct pto_udev *u)
{
	struct pto_regs_info *ri = uinfo(u);

	atomic_fetch_add(PTO_REG32(&ri->irq_count), 1);
	atomic_fetch_add_explicit(&u->sh->irqs, 1, memory_order_relaxed);
	touch_sys_cnt(u);
	if (atomic_load(&u->sh->irq_waiters))
		pto_futex_wake_shared(&ri->irq_count, INT_MAX);
}

int pto_udev_irq_wait(struct pto_udev *u, uint32_t *count, int64_t deadline_ns)
{
	struct pto_regs_info *ri = uinfo(u);
	int ret = 0;

	for (;;) {
		uint32_t c = atomic_load(PTO_REG32(&ri->irq_count));

		if (c != *count) {
			*count = c;
			return 0;
		}
		if (ret == -ETIMEDOUT || ret == -EINTR ||
		    (deadline_ns && pto_mono_ns() >= deadline_ns))
			return ret ? ret : -ETIMEDOUT;
		atomic_fetch_add(&u->sh->irq_waiters, 1);
		ret = pto_futex_wait_shared(&ri->irq_count, c, deadline_ns);
		atomic_fetch_sub(&u->sh->irq_waiters, 1);
	}
}

void pto_udev_aicpu_release(struct pto_udev *u)
{
	struct pto_regs_info *ri = uinfo(u);
	uint32_t c;

	reg_store_relaxed(&ri->aicpu_irq_en, 0);
	reg_store_release(&ri->aicpu_attached, 0);
	for (c = 0; c < nr_cores(u); c++)
		if (reg_load_acquire(&ucore(u, c)->state) == PTO_CORE_ONLINE)
			atomic_fetch_or(&u->sh->kick_pending[c / 64],
					1ULL << (c % 64));
	wake_parkers(u);
}
