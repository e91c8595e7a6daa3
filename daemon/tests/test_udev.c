// SPDX-License-Identifier: MIT
/*
 * test_udev.c - the user-mode device (daemon/udev) on its own: its
 * memory and registers, the GM allocator's rules and refusals, its pins,
 * kicks, parks and the completion interrupt between two processes (an executor
 * forked off, mapping the device from its descriptors), core ownership,
 * and an executor's death as the AICPU sees it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pto-private/asleep.h>
#include <pto-private/hws_regs.h>
#include <pto-private/regs.h>
#include <pto-private/time.h>

#include "pto_udev.h"
#include "tap.h"

#define MS	1000000LL

static uint64_t bit(uint32_t c, uint64_t *m)
{
	memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
	m[c / 64] = 1ULL << (c % 64);
	return m[c / 64];
}

static void all_cores(struct pto_udev *u, uint64_t *m)
{
	uint32_t c;

	memset(m, 0, PTO_CORE_MASK_WORDS * sizeof(*m));
	for (c = 0; c < u->info.nr_cores; c++)
		m[c / 64] |= 1ULL << (c % 64);
}

static struct pto_udev *small_udev(void)
{
	struct pto_udev_config cfg = { .profile = PTO_PROFILE_A2A3,
				       .nr_aic = 2, .gm_size = 1 << 20 };
	struct pto_udev *u = NULL;

	if (pto_udev_create(&cfg, &u))
		return NULL;
	return u;
}

static void t_config(void)
{
	struct pto_udev_config cfg;
	char err[128];

	unsetenv("PTO_USER_NR_AIC");
	unsetenv("PTO_USER_GM_MB");
	unsetenv("PTO_USER_PROFILE");
	ok(!pto_udev_config_from_env(&cfg, err, sizeof(err)) &&
	   cfg.nr_aic == 24 && cfg.gm_size == 256ULL << 20 &&
	   cfg.profile == PTO_PROFILE_A2A3,
	   "config: a2a3's 24 blocks and 256 MiB of GM by default");
	setenv("PTO_USER_NR_AIC", "4", 1);
	setenv("PTO_USER_GM_MB", "32", 1);
	ok(!pto_udev_config_from_env(&cfg, err, sizeof(err)) &&
	   cfg.nr_aic == 4 && cfg.gm_size == 32ULL << 20,
	   "config: PTO_USER_NR_AIC and PTO_USER_GM_MB");
	setenv("PTO_USER_GM_MB", "8", 1);
	ok(pto_udev_config_from_env(&cfg, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "PTO_USER_GM_MB"), "config: GM below 16 MiB refused (%s)",
	   err);
	setenv("PTO_USER_GM_MB", "-18446744073709551600", 1);
	ok(pto_udev_config_from_env(&cfg, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "PTO_USER_GM_MB"),
	   "config: a negative GM size that wraps is refused (%s)", err);
	setenv("PTO_USER_GM_MB", "0x20", 1);
	ok(pto_udev_config_from_env(&cfg, err, sizeof(err)) == -EINVAL,
	   "config: a hex GM size is refused (%s)", err);
	unsetenv("PTO_USER_GM_MB");
	setenv("PTO_USER_PROFILE", "a5", 1);
	unsetenv("PTO_USER_NR_AIC");
	{
		struct pto_udev *u = NULL;
		int ret = pto_udev_config_from_env(&cfg, err, sizeof(err));

		if (!ret)
			ret = pto_udev_create(&cfg, &u);
		ok(!ret && cfg.nr_aic == 72 && u &&
		   pto_regs_info(u->regs)->nr_cores == 3 * 72,
		   "config: a5's default of 72 blocks makes a device (%d)", ret);
		if (u)
			pto_udev_destroy(u);
	}
	setenv("PTO_USER_PROFILE", "a9", 1);
	ok(pto_udev_config_from_env(&cfg, err, sizeof(err)) == -EINVAL,
	   "config: an unknown profile refused");
	unsetenv("PTO_USER_PROFILE");
	unsetenv("PTO_USER_NR_AIC");
}

static void t_registers(void)
{
	struct pto_udev *u = small_udev();
	struct pto_regs_info *ri;
	struct pto_hws_cfg c;

	if (!ok(u, "create a device of 2 AIC + 4 AIV, 1 MiB GM"))
		return;
	ri = pto_regs_info(u->regs);
	ok(ri->magic == PTO_REGS_MAGIC && ri->nr_aic == 2 && ri->nr_aiv == 4 &&
	   ri->nr_cores == 6 && ri->gm_size == 1 << 20 &&
	   ri->gm_dev_base == PTO_GM_DEV_BASE && ri->aicpu_attached == 1,
	   "info page as pto.ko fills it, AICPU attached");
	ok(pto_regs_core(u->regs, 5)->cond == PTO_COND_IDLE &&
	   pto_regs_core(u->regs, 5)->state == PTO_CORE_OFFLINE,
	   "cores start offline, COND idle");
	pto_hws_cfg_read(pto_regs_hws(u->regs), &c);
	ok(!pto_hws_cfg_check(&c, 6) && c.usage_mask[3][4][0] == 0x3f &&
	   pto_regs_hws(u->regs)->cfg_seq % 2 == 0,
	   "HWS defaults valid, every core in every mask, CFG_SEQ even");
	c.cluster_sip_num = 2;
	ok(pto_hws_cfg_check(&c, 6) == -EINVAL, "HWS: CLUSTER_SIP_NUM 2 refused");
	c.cluster_sip_num = 3;
	c.usage_mask[1][0][0] = 1ULL << 6;
	ok(pto_hws_cfg_check(&c, 6) == -EINVAL,
	   "HWS: a usage mask naming a core the device lacks refused");
	ok(ftruncate(u->gm_fd, 4096) && errno == EPERM,
	   "GM's memfd is sealed: nobody shrinks it under the mappings");
	pto_udev_destroy(u);
}

static void t_gm(void)
{
	struct pto_udev_buf a, b, c, l;
	struct pto_udev_file *f1, *f2;
	struct pto_udev_gm_stats st;
	struct pto_udev_gm *gm;
	struct pto_udev *u = small_udev();

	if (!u || pto_udev_gm_create(u, &gm))
		return (void)ok(0, "GM allocator");
	pto_udev_file_create(gm, &f1);
	pto_udev_file_create(gm, &f2);
	ok(!pto_udev_gm_alloc(f1, 100, 0, &a) && a.len == 4096 && a.handle,
	   "alloc rounds up to a page, handle non-zero");
	ok(!pto_udev_gm_alloc(f1, 8192, 65536, &b) && b.dev_addr % 65536 == 0,
	   "alloc at a 64 KiB alignment");
	ok(pto_udev_gm_alloc(f1, 0, 0, &c) == -EINVAL &&
	   pto_udev_gm_alloc(f1, 2 << 20, 0, &c) == -EINVAL &&
	   pto_udev_gm_alloc(f1, 4096, 3000, &c) == -EINVAL,
	   "alloc: zero, larger than GM, bad alignment: -EINVAL");
	ok(pto_udev_gm_alloc(f2, 1 << 20, 0, &c) == -ENOMEM,
	   "alloc: no range large enough: -ENOMEM");
	memset((uint8_t *)u->gm + (a.dev_addr - PTO_GM_DEV_BASE), 0xab, 4096);
	ok(!pto_udev_gm_lookup(f1, a.dev_addr + 10, 20, &l) &&
	   l.handle == a.handle, "lookup: a range inside one's own buffer");
	ok(pto_udev_gm_lookup(f2, a.dev_addr, 1, &l) == -ENOENT,
	   "lookup on another file: -ENOENT");
	ok(pto_udev_gm_lookup(f1, a.dev_addr, 8192, &l) == -ENOENT &&
	   pto_udev_gm_lookup(f1, a.dev_addr, 0, &l) == -EINVAL,
	   "lookup: past the buffer's end -ENOENT, zero length -EINVAL");
	ok(pto_udev_gm_free(f2, a.handle) == -ENOENT,
	   "free of another file's handle: -ENOENT");
	ok(!pto_udev_gm_free(f1, a.handle) &&
	   pto_udev_gm_free(f1, a.handle) == -ENOENT, "double free: -ENOENT");
	ok(!pto_udev_gm_alloc(f2, 4096, 0, &c) && c.dev_addr == a.dev_addr &&
	   ((uint8_t *)u->gm)[c.dev_addr - PTO_GM_DEV_BASE + 7] == 0,
	   "the freed page is reused, zeroed");
	pto_udev_file_release(f1);
	pto_udev_file_release(f2);
	pto_udev_gm_stats(gm, &st);
	ok(!st.bytes_used && !st.buffers && st.allocs == 3 && st.frees == 3,
	   "releasing the files frees their buffers (used %llu, buffers %llu)",
	   (unsigned long long)st.bytes_used, (unsigned long long)st.buffers);
	pto_udev_file_create(gm, &f1);
	ok(!pto_udev_gm_alloc(f1, 1 << 20, 0, &a),
	   "free ranges merge again: all of GM in one buffer");
	pto_udev_file_release(f1);
	pto_udev_gm_destroy(gm);
	pto_udev_destroy(u);
}

/*
 * Handles as pto.ko gives them: the lowest one the file does not hold,
 * so a freed handle is given again and a long-lived client's handles
 * never wrap around to ones it still holds.
 */
static void t_gm_handles(void)
{
	struct pto_udev_buf b[72], x;
	struct pto_udev_file *f;
	struct pto_udev_gm *gm;
	struct pto_udev *u = small_udev();
	bool in_order = true, same = true;
	int i;

	if (!u || pto_udev_gm_create(u, &gm) || pto_udev_file_create(gm, &f))
		return (void)ok(0, "GM allocator");
	for (i = 0; i < 70; i++)
		if (pto_udev_gm_alloc(f, 4096, 0, &b[i]) ||
		    b[i].handle != (uint32_t)i + 1)
			in_order = false;
	ok(in_order, "70 buffers: handles 1 .. 70");
	same = !pto_udev_gm_free(f, b[65].handle) &&
	       !pto_udev_gm_free(f, b[4].handle) &&
	       !pto_udev_gm_alloc(f, 4096, 0, &b[4]) &&
	       !pto_udev_gm_alloc(f, 4096, 0, &b[65]) &&
	       !pto_udev_gm_alloc(f, 4096, 0, &b[70]);
	ok(same && b[4].handle == 5 && b[65].handle == 66 && b[70].handle == 71,
	   "freed handles 66 and 5 come back lowest first, then 71 (got %u, %u, %u)",
	   b[4].handle, b[65].handle, b[70].handle);
	for (i = 0; i < 71; i++)
		pto_udev_gm_free(f, b[i].handle);
	for (i = 0; i < 100000 && same; i++)
		same = !pto_udev_gm_alloc(f, 4096, 0, &x) && x.handle == 1 &&
		       !pto_udev_gm_free(f, x.handle);
	ok(same, "100000 allocations and frees: handle 1 each time (%d)", i);
	pto_udev_file_release(f);
	pto_udev_gm_destroy(gm);
	pto_udev_destroy(u);
}

/* @f allocates pages until GM is full: does none overlap @b? */
static bool fill_misses(struct pto_udev_file *f, const struct pto_udev_buf *b)
{
	struct pto_udev_buf p;
	bool miss = true;

	while (!pto_udev_gm_alloc(f, 4096, 0, &p))
		if (p.dev_addr < b->dev_addr + b->len &&
		    b->dev_addr < p.dev_addr + p.len)
			miss = false;
	return miss;
}

static struct pto_udev_gm_stats gm_stats(struct pto_udev_gm *gm)
{
	struct pto_udev_gm_stats st;

	pto_udev_gm_stats(gm, &st);
	return st;
}

/* Does @f's lookup of [@addr, @addr + @len) name the buffer @want? */
static bool finds(struct pto_udev_file *f, uint64_t addr, uint64_t len,
		  const struct pto_udev_buf *want)
{
	struct pto_udev_buf l;

	return !pto_udev_gm_lookup(f, addr, len, &l) &&
	       l.handle == want->handle && l.dev_addr == want->dev_addr &&
	       l.len == want->len;
}

/*
 * Many buffers of two files, interleaved in GM, of 1 to 3 pages, some
 * aligned, a third of one file's freed from the middle: every lookup
 * names the right buffer of the right file, or none; then one file's
 * PTO_UDEV_MAX_BUFS (65536) buffers, each found by address.
 */
static void t_gm_many(void)
{
	struct pto_udev_config cfg = { .profile = PTO_PROFILE_A2A3,
				       .nr_aic = 2, .gm_size = 512ULL << 20 };
	enum { N = 3000 };
	static struct pto_udev_buf b[N], p[PTO_UDEV_MAX_BUFS];
	struct pto_udev_file *f[2], *aicpu, *big;
	bool alloc = true, found = true, freed = true, none = true;
	struct pto_udev_buf l, x;
	struct pto_udev_gm *gm;
	struct pto_udev *u = NULL;
	uint32_t pin;
	int i, n;

	if (pto_udev_create(&cfg, &u) || pto_udev_gm_create(u, &gm))
		return (void)ok(0, "GM allocator");
	pto_udev_file_create(gm, &f[0]);
	pto_udev_file_create(gm, &f[1]);
	pto_udev_file_create(gm, &aicpu);
	for (i = 0; i < N && alloc; i++)
		alloc = !pto_udev_gm_alloc(f[i % 2], 4096 * (1 + i % 3),
					   i % 5 ? 0 : 65536, &b[i]);
	ok(alloc, "%d buffers of two files, interleaved", N);
	for (i = N - 1; i >= 0; i -= 2)
		if (i % 3 == 0)
			freed = freed && !pto_udev_gm_free(f[1], b[i].handle);
	ok(freed, "a third of the second file's buffers freed, last first");
	for (i = 0; i < N; i++) {
		struct pto_udev_file *own = f[i % 2], *not = f[1 - i % 2];
		bool live = i % 2 == 0 || i % 3;
		uint64_t a = b[i].dev_addr, len = b[i].len;

		if (!live) {
			none = none && pto_udev_gm_lookup(own, a, 1, &l) == -ENOENT;
			continue;
		}
		found = found && finds(own, a, 1, &b[i]) &&
			finds(own, a + len - 1, 1, &b[i]) &&
			finds(own, a, len, &b[i]) &&
			finds(own, a + 2048, len - 2048, &b[i]);
		none = none && pto_udev_gm_lookup(own, a, len + 1, &l) == -ENOENT &&
		       pto_udev_gm_lookup(own, a - 1, 2, &l) == -ENOENT &&
		       pto_udev_gm_lookup(not, a, 1, &l) == -ENOENT;
	}
	ok(found, "each live buffer found by its first and last byte and whole");
	ok(none, "freed buffers, other files' and ranges across two: -ENOENT");
	ok(pto_udev_gm_lookup(f[0], PTO_GM_DEV_BASE - 4096, 4096, &l) == -ENOENT &&
	   pto_udev_gm_free(f[0], UINT32_MAX) == -ENOENT &&
	   pto_udev_gm_free(f[0], 0) == -ENOENT,
	   "below GM, handles 0 and UINT32_MAX: -ENOENT");
	ok(!pto_udev_gm_pin(aicpu, f[0], b[N / 2].dev_addr + 8, 8, &pin, &l) &&
	   l.handle == b[N / 2].handle && !pto_udev_gm_unpin(aicpu, pin),
	   "a pin finds its buffer among %d", N);
	for (i = 0; i < N; i++) {
		if (i % 2 && !(i % 3))
			continue;
		freed = freed && !pto_udev_gm_free(f[i % 2], b[i].handle) &&
			pto_udev_gm_free(f[i % 2], b[i].handle) == -ENOENT;
	}
	ok(freed && gm_stats(gm).buffers == 0,
	   "each live handle frees once, then -ENOENT; no buffer left");

	pto_udev_file_create(gm, &big);
	for (n = 0; n < PTO_UDEV_MAX_BUFS; n++)
		if (pto_udev_gm_alloc(big, 4096, 0, &p[n]))
			break;
	ok(n == PTO_UDEV_MAX_BUFS &&
	   pto_udev_gm_alloc(big, 4096, 0, &x) == -ENOSPC,
	   "one file holds %d buffers, then -ENOSPC (%d)", PTO_UDEV_MAX_BUFS, n);
	for (i = 0, found = true; i < n && found; i++)
		found = finds(big, p[i].dev_addr + 4095, 1, &p[i]);
	ok(found, "each of them found by address (%d)", i);
	pto_udev_file_release(big);
	pto_udev_file_release(aicpu);
	pto_udev_file_release(f[1]);
	pto_udev_file_release(f[0]);
	ok(!gm_stats(gm).buffers && !gm_stats(gm).bytes_used,
	   "releasing the files frees everything");
	pto_udev_gm_destroy(gm);
	pto_udev_destroy(u);
}

/*
 * Pins (pto.ko's GM_PIN, GM_UNPIN): a reference on a buffer, kept by
 * another file. A buffer freed while pinned keeps its memory out of the
 * pool until its last pin goes; the pinner's release drops its pins.
 */
static void t_gm_pins(void)
{
	struct pto_udev_file *aicpu, *f1, *f2, *other;
	struct pto_udev_gm *gm, *gm2 = NULL;
	struct pto_udev_buf a, b, l;
	struct pto_udev_gm_stats st;
	struct pto_udev *u = small_udev(), *u2 = small_udev();
	uint32_t p1 = 0, p2 = 0, p3, n;
	int ret;

	if (!u || !u2 || pto_udev_gm_create(u, &gm) ||
	    pto_udev_gm_create(u2, &gm2))
		return (void)ok(0, "GM allocators for pins");
	pto_udev_file_create(gm, &aicpu);
	pto_udev_file_create(gm, &f1);
	pto_udev_file_create(gm, &f2);
	pto_udev_file_create(gm2, &other);
	pto_udev_gm_alloc(f1, 8192, 0, &a);
	memset((uint8_t *)u->gm + (a.dev_addr - PTO_GM_DEV_BASE), 0xab, 8192);
	ok(!pto_udev_gm_pin(aicpu, f1, a.dev_addr + 100, 10, &p1, &l) && p1 &&
	   l.dev_addr == a.dev_addr && l.len == a.len && l.handle == a.handle,
	   "pin: a range of the file's buffer, the whole buffer described");
	ok(!pto_udev_gm_pin(aicpu, f1, a.dev_addr, 8192, &p2, &l) && p2 &&
	   p2 != p1 && gm_stats(gm).pins == 2,
	   "a second pin of the same buffer: another id, 2 pins held");
	ok(pto_udev_gm_pin(aicpu, f1, a.dev_addr, 0, &p3, &l) == -EINVAL &&
	   pto_udev_gm_pin(aicpu, f1, UINT64_MAX - 1, 4, &p3, &l) == -EINVAL &&
	   pto_udev_gm_pin(aicpu, f1, a.dev_addr, 8193, &p3, &l) == -ENOENT &&
	   pto_udev_gm_pin(aicpu, f2, a.dev_addr, 1, &p3, &l) == -ENOENT &&
	   pto_udev_gm_pin(other, f1, a.dev_addr, 1, &p3, &l) == -EXDEV &&
	   gm_stats(gm).pins == 2,
	   "pin: zero length, a wrapping range -EINVAL; past the buffer, another file's -ENOENT; another allocator's pinner -EXDEV");
	ok(!pto_udev_gm_free(f1, a.handle) &&
	   pto_udev_gm_free(f1, a.handle) == -ENOENT &&
	   pto_udev_gm_lookup(f1, a.dev_addr, 1, &l) == -ENOENT &&
	   pto_udev_gm_pin(aicpu, f1, a.dev_addr, 1, &p3, &l) == -ENOENT,
	   "a pinned buffer freed: its handle is gone (free, lookup, pin: -ENOENT)");
	st = gm_stats(gm);
	ok(st.bytes_used == 8192 && st.buffers == 1 && !st.frees,
	   "its memory is still used (%llu bytes, %llu buffers, %llu frees)",
	   (unsigned long long)st.bytes_used, (unsigned long long)st.buffers,
	   (unsigned long long)st.frees);
	ok(fill_misses(f2, &a),
	   "another file allocating all of GM gets none of the pinned memory");
	pto_udev_file_release(f2);
	ok(((uint8_t *)u->gm)[a.dev_addr - PTO_GM_DEV_BASE + 8191] == 0xab,
	   "what the pinned buffer holds is left as it was");
	ok(!pto_udev_gm_unpin(aicpu, p1) &&
	   pto_udev_gm_unpin(aicpu, p1) == -ENOENT &&
	   pto_udev_gm_unpin(aicpu, 0) == -ENOENT &&
	   pto_udev_gm_unpin(aicpu, p2 + 1) == -ENOENT &&
	   pto_udev_gm_unpin(f1, p2) == -ENOENT &&
	   gm_stats(gm).bytes_used == 8192,
	   "unpin: twice, 0, an id never given, another file's -ENOENT; one pin left holds the memory");
	n = (uint32_t)gm_stats(gm).frees;
	ok(!pto_udev_gm_unpin(aicpu, p2), "the last pin goes");
	st = gm_stats(gm);
	ok(!st.bytes_used && !st.buffers && st.frees == n + 1 && !st.pins,
	   "its memory is back (%llu bytes, %llu buffers, %llu frees, %llu pins)",
	   (unsigned long long)st.bytes_used, (unsigned long long)st.buffers,
	   (unsigned long long)st.frees, (unsigned long long)st.pins);
	pto_udev_file_create(gm, &f2);
	ok(!pto_udev_gm_alloc(f2, 1 << 20, 0, &b) && b.dev_addr == PTO_GM_DEV_BASE &&
	   ((uint8_t *)u->gm)[a.dev_addr - PTO_GM_DEV_BASE + 8191] == 0,
	   "free ranges merge again: all of GM in one buffer, zeroed");
	pto_udev_gm_free(f2, b.handle);

	/* the file goes first, then the pinner */
	pto_udev_gm_alloc(f1, 4096, 0, &a);
	pto_udev_gm_pin(aicpu, f1, a.dev_addr, 1, &p1, &l);
	pto_udev_file_release(f1);
	ok(gm_stats(gm).bytes_used == 4096 && fill_misses(f2, &a),
	   "a pinned buffer of a released file stays out of the pool");
	pto_udev_file_release(f2);
	pto_udev_file_release(aicpu);
	st = gm_stats(gm);
	ok(!st.bytes_used && !st.buffers && !st.pins,
	   "the pinner's release drops its pins: GM back (%llu bytes, %llu pins)",
	   (unsigned long long)st.bytes_used, (unsigned long long)st.pins);

	/* bounded: PTO_UDEV_MAX_PINS per pinner, then -ENOSPC */
	pto_udev_file_create(gm, &aicpu);
	pto_udev_file_create(gm, &f1);
	pto_udev_gm_alloc(f1, 4096, 0, &a);
	for (n = 0, ret = 0; !ret && n < PTO_UDEV_MAX_PINS; n++)
		ret = pto_udev_gm_pin(aicpu, f1, a.dev_addr, 1, &p1, &l);
	ok(!ret && pto_udev_gm_pin(aicpu, f1, a.dev_addr, 1, &p3, &l) == -ENOSPC,
	   "%u pins held, one more: -ENOSPC", n);
	ok(!pto_udev_gm_unpin(aicpu, 1) &&
	   !pto_udev_gm_pin(aicpu, f1, a.dev_addr, 1, &p3, &l) && p3 == 1,
	   "a pin unpinned makes room: its slot is used again");
	pto_udev_gm_free(f1, a.handle);
	ok(gm_stats(gm).bytes_used == 4096,
	   "the buffer freed, its memory held by the pins");
	pto_udev_file_release(aicpu);
	st = gm_stats(gm);
	ok(!st.bytes_used && !st.buffers && !st.pins,
	   "the pinner's release drops them all (%llu bytes, %llu pins)",
	   (unsigned long long)st.bytes_used, (unsigned long long)st.pins);
	pto_udev_file_release(f1);
	pto_udev_file_release(other);
	pto_udev_gm_destroy(gm2);
	pto_udev_gm_destroy(gm);
	pto_udev_destroy(u2);
	pto_udev_destroy(u);
}

/* ---- An executor in another process ------------------------------------------ */

/*
 * The child: map the device from copies of its descriptors, attach every
 * core, park until a kick: it must be core 3's, whose DATA_MAIN_BASE it
 * then answers with COND and the interrupt. Exit 0 if all went so.
 */
static int executor_child(int regs_fd, int gm_fd, bool and_park)
{
	struct pto_udev *u;
	uint64_t m[PTO_CORE_MASK_WORDS];
	uint32_t core = 0, c;

	if (pto_udev_open_fds(dup(regs_fd), dup(gm_fd), &u))
		return 10;
	all_cores(u, m);
	if (pto_udev_attach(u, getpid(), m))
		return 11;
	for (c = 0; c < u->info.nr_cores; c++)
		reg_store_relaxed(&pto_regs_core(u->regs, c)->parked, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!and_park)
		pause();
	if (pto_udev_park_any(u, getpid(), m, pto_mono_ns() + 10000 * MS,
			      &core))
		return 12;
	if (core != 3 ||
	    reg_load_acquire(&pto_regs_core(u->regs, 3)->data_main_base) != 8)
		return 13;
	reg_store_release(&pto_regs_core(u->regs, 3)->cond, PTO_COND_DONE(7));
	pto_udev_irq_raise(u);
	return 0;
}

static pid_t fork_executor(struct pto_udev *u, bool and_park)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(executor_child(u->regs_fd, u->gm_fd, and_park));
	return pid;
}

/* Wait (bounded) until every core of @u is online. */
static bool wait_online(struct pto_udev *u)
{
	int64_t until = pto_mono_ns() + 5000 * MS;
	uint32_t c;

	while (pto_mono_ns() < until) {
		for (c = 0; c < u->info.nr_cores; c++)
			if (reg_load_acquire(&pto_regs_core(u->regs, c)->state) !=
			    PTO_CORE_ONLINE)
				break;
		if (c == u->info.nr_cores &&
		    reg_load_acquire(&pto_regs_core(u->regs, 0)->parked))
			return true;
		pto_sleep_ns(MS);
	}
	return false;
}

#define SYS_CNT_RAISES	300000

static void *raise_main(void *arg)
{
	struct pto_udev *u = arg;
	int i;

	for (i = 0; i < SYS_CNT_RAISES; i++)
		pto_udev_irq_raise(u);
	return NULL;
}

/*
 * Two threads raise interrupts, each of which refreshes the info page's
 * sys_cnt, while this one reads it: it never goes back.
 */
static void t_sys_cnt_monotonic(void)
{
	struct pto_udev *u = small_udev();
	struct pto_regs_info *ri;
	uint64_t last = 0, back = 0, reads = 0;
	pthread_t th[2];
	int i, n = 0;

	if (!u)
		return (void)ok(0, "sys_cnt: a device");
	ri = pto_regs_info(u->regs);
	for (i = 0; i < 2; i++)
		n += !pthread_create(&th[i], NULL, raise_main, u);
	while (n == 2 && reads < 50000000) {
		uint64_t v = reg64_load_acquire(&ri->sys_cnt);

		reads++;
		back += v < last;
		last = v;
		if (pto_udev_irq_count(u) >= 2 * SYS_CNT_RAISES)
			break;
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	ok(n == 2 && back == 0,
	   "sys_cnt never went back in %" PRIu64 " reads beside %d refreshes (%" PRIu64 " times back)",
	   reads, 2 * SYS_CNT_RAISES, back);
	pto_udev_destroy(u);
}

static void t_kick_irq(void)
{
	struct pto_udev *u = small_udev();
	uint64_t m[PTO_CORE_MASK_WORDS];
	uint32_t count, kicks;
	int st = -1;
	pid_t pid;

	if (!u || (pid = fork_executor(u, true)) < 0)
		return (void)ok(0, "fork an executor");
	ok(wait_online(u), "the executor process attached every core and parked");
	bit(2, m);
	ok(pto_udev_attach(u, getpid(), m) == -EBUSY,
	   "a core another live executor holds: -EBUSY");
	count = pto_udev_irq_count(u);
	ok(pto_udev_irq_wait(u, &count, pto_mono_ns() + 20 * MS) == -ETIMEDOUT,
	   "no interrupt yet: IRQ_WAIT times out");
	reg_store_release(&pto_regs_core(u->regs, 3)->data_main_base, 8);
	atomic_thread_fence(memory_order_seq_cst);
	kicks = pto_regs_core(u->regs, 3)->kick_count;
	ok(!pto_udev_kick(u, 3) && pto_regs_core(u->regs, 3)->kick_count ==
	   kicks + 1, "kick core 3");
	ok(!pto_udev_irq_wait(u, &count, pto_mono_ns() + 10000 * MS) &&
	   reg_load_acquire(&pto_regs_core(u->regs, 3)->cond) ==
	   PTO_COND_DONE(7),
	   "the executor woke for core 3, answered FIN and raised the interrupt");
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "executor exit status %d",
	   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ok(!reg_load_relaxed(&pto_regs_core(u->regs, 3)->parked),
	   "the kicked core's parked flag was cleared");
	ok(!pto_udev_attach(u, getpid(), m),
	   "the core of an executor gone without a word is taken over");
	pto_udev_destroy(u);
}

/*
 * Write a word at @off of the register file as an executor maps it, by
 * read(2) from /dev/zero (a fault would be the sanitizers' to report):
 * 0, or -EFAULT where the mapping is read-only.
 */
static int executor_writes(struct pto_udev *dev, size_t off)
{
	struct pto_udev *u;
	int fd, ret;

	ret = pto_udev_open_fds(dup(dev->regs_fd), dup(dev->gm_fd), &u);
	if (ret)
		return ret;
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -errno :
	      read(fd, (uint8_t *)u->regs + off, 4) == 4 ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	pto_udev_destroy(u);
	return ret;
}

/*
 * An executor's mapping: read-only below PTO_REGS_EXEC_WRITE_OFFSET; and
 * the ABI version check of pto.ko's clients.
 */
static void t_executor_view(void)
{
	struct pto_udev *u = small_udev();
	size_t cfg_seq = PTO_REGS_HWS_OFFSET +
			 offsetof(struct pto_regs_hws, cfg_seq);
	size_t complete = PTO_REGS_HWS_OFFSET +
			  offsetof(struct pto_regs_hws, sip_report_complete);
	size_t cond = PTO_REGS_CORE_OFFSET + offsetof(struct pto_core_regs, cond);

	if (!ok(u, "create a device"))
		return;
	ok(executor_writes(u, cfg_seq) == -EFAULT,
	   "an executor cannot write the HWS configuration (CFG_SEQ)");
	ok(executor_writes(u, PTO_REGS_INFO_OFFSET +
			   offsetof(struct pto_regs_info, irq_count)) == -EFAULT,
	   "nor the info page");
	ok(executor_writes(u, complete) == 0 && executor_writes(u, cond) == 0,
	   "it writes the HWS status page and the cores");
	pto_regs_info(u->regs)->abi_version = (PTO_ABI_MAJOR + 1) << 16;
	ok(executor_writes(u, cond) == -EPROTO,
	   "a device of another ABI major version: -EPROTO");
	pto_udev_destroy(u);
}

struct irq_waiter {
	struct pto_udev *u;
	uint32_t count;
	int ret;
};

static void *irq_waiter(void *arg)
{
	struct irq_waiter *w = arg;

	w->ret = pto_udev_irq_wait(w->u, &w->count, pto_mono_ns() + 10000 * MS);
	return NULL;
}

/* The executor dies while parked: its cores DEAD, the AICPU woken. */
static void t_death(void)
{
	struct pto_udev *u = small_udev();
	struct irq_waiter w = { .u = u };
	uint64_t m[PTO_CORE_MASK_WORDS];
	pthread_t th;
	int n;
	pid_t pid;

	if (!u || (pid = fork_executor(u, false)) < 0)
		return (void)ok(0, "fork an executor");
	ok(wait_online(u), "the executor attached every core");
	w.count = pto_udev_irq_count(u);
	pthread_create(&th, NULL, irq_waiter, &w);
	pto_sleep_ns(20 * MS);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	n = pto_udev_executor_gone(u, pid);
	pthread_join(th, NULL);
	ok(n == 6 && !w.ret && w.count == 1,
	   "executor killed: %d cores released, the AICPU's IRQ_WAIT returned %d (count %u)",
	   n, w.ret, w.count);
	ok(pto_regs_core(u->regs, 0)->state == PTO_CORE_DEAD &&
	   pto_regs_core(u->regs, 5)->state == PTO_CORE_DEAD &&
	   !pto_regs_core(u->regs, 5)->parked,
	   "its cores are DEAD, parked cleared");
	ok(pto_udev_executor_gone(u, pid) == 0, "a second notice changes nothing");
	all_cores(u, m);
	ok(!pto_udev_attach(u, getpid(), m) &&
	   pto_regs_core(u->regs, 0)->state == PTO_CORE_ONLINE,
	   "a new executor attaches the dead cores");
	ok(pto_udev_kick(u, 1) == 0 && !u->sh->kick_pending[0],
	   "a kick of a core that is not parked is not latched");
	ok(pto_udev_detach(u, getpid() + 1, m) == -EINVAL &&
	   !pto_udev_detach(u, getpid(), m) &&
	   pto_regs_core(u->regs, 0)->state == PTO_CORE_OFFLINE,
	   "detach: only the owner's cores, which go OFFLINE");
	pto_udev_destroy(u);
}

/* A thread of t_kick_burst(): parks on every core, records what it got. */
struct parker {
	pthread_t th;
	struct pto_udev *u;
	_Atomic pid_t tid;
	bool started;		/* pthread_create() succeeded */
	int ret;
	uint32_t core;
	int64_t woke;		/* when pto_udev_park_any() returned */
};

static void *parker_main(void *arg)
{
	struct parker *p = arg;
	uint64_t m[PTO_CORE_MASK_WORDS];

	atomic_store(&p->tid, gettid());
	all_cores(p->u, m);
	p->ret = pto_udev_park_any(p->u, getpid(), m,
				   pto_mono_ns() + 3000 * MS, &p->core);
	p->woke = pto_mono_ns();
	return NULL;
}

/* Is @p's thread asleep (in the futex: nothing else blocks it)? */
static bool parker_asleep(struct parker *p)
{
	pid_t tid = atomic_load(&p->tid);

	return tid && pto_thread_asleep(tid) == 1;
}

/* Wait (bounded) until both parkers are counted and asleep. */
static bool wait_parkers(struct pto_udev *u, struct parker *p)
{
	int64_t until = pto_mono_ns() + 5000 * MS;

	while (PTO_PARKLOT_PARKERS(atomic_load(&u->sh->kick.count)) != 2 ||
	       !parker_asleep(&p[0]) || !parker_asleep(&p[1]))
		if (pto_mono_ns() > until)
			return false;
		else
			pto_sleep_ns(MS / 10);
	return true;
}

/*
 * Kicks against parked threads: one system call for a burst of kicks
 * while the one parked thread has not yet run; two threads parked, two
 * kicks wake both (each with a core of its own).
 */
static void t_kick_burst(void)
{
	struct pto_udev *u = small_udev();
	uint64_t m[PTO_CORE_MASK_WORDS], calls;
	struct parker p[2];
	int64_t t0;
	uint32_t c;
	int i, made = 0;

	if (!u)
		return (void)ok(0, "a device");
	all_cores(u, m);
	ok(!pto_udev_attach(u, getpid(), m), "attach every core");
	for (c = 0; c < u->info.nr_cores; c++)
		reg_store_relaxed(&pto_regs_core(u->regs, c)->parked, 1);
	/* one thread counted as parked, not running yet (held here) */
	atomic_store(&u->sh->kick.count, PTO_PARKLOT_COUNT(1, 0));
	calls = atomic_load(&u->sh->kick_wakeups);
	for (c = 0; c < 6; c++)
		pto_udev_kick(u, c);
	ok(atomic_load(&u->sh->kick_wakeups) == calls + 1 &&
	   PTO_PARKLOT_SIGNALED(atomic_load(&u->sh->kick.count)) == 1,
	   "6 kicks while the one parked thread has not run: 1 wake-up (%llu)",
	   (unsigned long long)(atomic_load(&u->sh->kick_wakeups) - calls));
	/* a second thread parks: the next kicks wake it, once */
	atomic_store(&u->sh->kick.count, PTO_PARKLOT_COUNT(2, 1));
	for (c = 0; c < 6; c++)
		pto_udev_kick(u, c);
	ok(atomic_load(&u->sh->kick_wakeups) == calls + 2 &&
	   PTO_PARKLOT_SIGNALED(atomic_load(&u->sh->kick.count)) == 2,
	   "a second thread parked unwoken: 6 more kicks, 1 more wake-up (%llu in all)",
	   (unsigned long long)(atomic_load(&u->sh->kick_wakeups) - calls));
	atomic_store(&u->sh->kick.count, 0);
	for (c = 0; c < PTO_CORE_MASK_WORDS; c++)
		atomic_store(&u->sh->kick_pending[c], 0);

	for (i = 0; i < 2; i++) {
		p[i] = (struct parker){ .u = u, .ret = 1, .tid = 0 };
		p[i].started = !pthread_create(&p[i].th, NULL, parker_main,
					       &p[i]);
		made += p[i].started;
	}
	ok(made == 2 && wait_parkers(u, p), "two threads parked, asleep");
	t0 = pto_mono_ns();
	pto_udev_kick(u, 1);
	pto_udev_kick(u, 2);
	for (i = 0; i < 2; i++)
		if (p[i].started)
			pthread_join(p[i].th, NULL);
	/* a thread not woken takes its kick when its 3 s deadline ends */
	ok(made == 2 && !p[0].ret && !p[1].ret && p[0].core != p[1].core &&
	   p[0].woke - t0 < 1000 * MS && p[1].woke - t0 < 1000 * MS,
	   "two kicks woke both parked threads at once, one core each (%d %d, %lld %lld ms)",
	   p[0].ret, p[1].ret, (long long)((p[0].woke - t0) / MS),
	   (long long)((p[1].woke - t0) / MS));
	ok(!PTO_PARKLOT_PARKERS(atomic_load(&u->sh->kick.count)) && !PTO_PARKLOT_SIGNALED(atomic_load(&u->sh->kick.count)),
	   "no thread counted as parked or woken afterwards");
	pto_udev_destroy(u);
}

/*
 * A core mask naming a core the device lacks, or none, is refused; the
 * last core is the device's (6 cores here: 0 .. 5).
 */
static void t_masks(void)
{
	struct pto_udev *u = small_udev();
	uint64_t m[PTO_CORE_MASK_WORDS];
	uint32_t last;

	if (!u)
		return (void)ok(0, "masks: a 6-core device");
	last = u->info.nr_cores - 1;
	bit(last + 1, m);
	ok(pto_udev_attach(u, getpid(), m) == -EINVAL,
	   "attach core %u of %u cores: -EINVAL", last + 1, last + 1);
	bit(last, m);
	m[PTO_CORE_MASK_WORDS - 1] |= 1ULL << 63;
	ok(pto_udev_attach(u, getpid(), m) == -EINVAL,
	   "a mask with the last core and core %d: -EINVAL",
	   PTO_CORE_MASK_WORDS * 64 - 1);
	memset(m, 0, sizeof(m));
	ok(pto_udev_attach(u, getpid(), m) == -EINVAL, "an empty mask: -EINVAL");
	bit(last, m);
	ok(!pto_udev_attach(u, getpid(), m) &&
	   !pto_udev_detach(u, getpid(), m),
	   "attach and detach core %u, the last", last);
	pto_udev_destroy(u);
}

int main(void)
{
	t_config();
	t_sys_cnt_monotonic();
	t_masks();
	t_registers();
	t_gm();
	t_gm_handles();
	t_gm_many();
	t_gm_pins();
	t_kick_irq();
	t_kick_burst();
	t_death();
	t_executor_view();
	return tap_done();
}
