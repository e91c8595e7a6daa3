// SPDX-License-Identifier: MIT
/*
 * pto_kload.c - kernels uploaded into GM, loaded into the executor (see
 * pto_kload.h)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/pto.h>
#include <pto-private/wire.h>

#include "pto_exec.h"
#include "pto_kload.h"

/**
 * struct pto_kentry - one loaded kernel.
 * @prev: the next more recently used kernel in the cache (NULL: first).
 * @next: the next less recently used one (NULL: last); in a list of
 *	kernels to unload once out of the cache.
 * @addr: device address of its blob.
 * @uid: upload id of its blob.
 * @func_id: the kernel id it was registered as (messages).
 * @refs: cores running it (pto_kcache_get() without its put).
 * @cached: in the cache's list.
 * @memfd: the .so bytes; open while loaded (/proc/self/fd/N names it).
 * @dl: the dlopen handle.
 * @fn: the entry point.
 *
 * Every field but @memfd, @dl and @fn is the cache's (under its lock).
 */
struct pto_kentry {
	struct pto_kentry *prev;
	struct pto_kentry *next;
	uint64_t addr;
	uint64_t uid;
	int32_t func_id;
	uint32_t refs;
	bool cached;
	int memfd;
	void *dl;
	pto_kernel_entry_fn fn;
};

void pto_kcache_init(struct pto_kcache *kc, uint32_t max, bool verbose)
{
	memset(kc, 0, sizeof(*kc));
	pthread_mutex_init(&kc->lock, NULL);
	kc->max = max ? max : PTO_KCACHE_MAX;
	kc->verbose = verbose;
}

static void kentry_path(const struct pto_kentry *k, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", k->memfd);
}

/*
 * Unload @k and free it: true if dlclose left the object loaded (then
 * its memfd stays open, for glibc matches dlopen names against loaded
 * objects: a new kernel's memfd must never get its number).
 */
static bool kentry_free(struct pto_kentry *k)
{
	bool kept = false;
	char path[64];

	if (k->dl) {
		void *again;

		dlclose(k->dl);
		kentry_path(k, path, sizeof(path));
		again = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
		if (again) {
			dlclose(again);
			kept = true;
		}
	}
	if (k->memfd >= 0 && !kept)
		close(k->memfd);
	free(k);
	return kept;
}

/* ---- The list, most recently used first (under kc->lock) -------------------- */

static void list_del(struct pto_kcache *kc, struct pto_kentry *k)
{
	if (k->prev)
		k->prev->next = k->next;
	else
		kc->mru = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		kc->lru = k->prev;
	k->prev = NULL;
	k->next = NULL;
	k->cached = false;
	kc->nr--;
}

static void list_add(struct pto_kcache *kc, struct pto_kentry *k)
{
	k->prev = NULL;
	k->next = kc->mru;
	if (kc->mru)
		kc->mru->prev = k;
	else
		kc->lru = k;
	kc->mru = k;
	k->cached = true;
	kc->nr++;
}

/*
 * Take @k out of the cache: onto *@dead if no core runs it, else it is
 * unloaded when the last one returns (pto_kcache_put()).
 */
static void kentry_drop(struct pto_kcache *kc, struct pto_kentry *k,
			struct pto_kentry **dead)
{
	list_del(kc, k);
	if (k->refs) {
		kc->held++;
		return;
	}
	k->next = *dead;
	*dead = k;
}

/* Past kc->max: the least recently used kernels no core runs go. */
static void kcache_trim(struct pto_kcache *kc, struct pto_kentry **dead)
{
	struct pto_kentry *k = kc->lru, *prev;

	for (; k && kc->nr > kc->max; k = prev) {
		prev = k->prev;
		if (!k->refs)
			kentry_drop(kc, k, dead);
	}
}

/* Unload the kernels of @dead (outside kc->lock) and count them. */
static void kcache_unload(struct pto_kcache *kc, struct pto_exec *ex,
			  struct pto_kentry *dead)
{
	uint64_t unloads = 0, kept = 0;

	while (dead) {
		struct pto_kentry *k = dead;

		dead = k->next;
		if (kc->verbose)
			pto_exec_log(ex, "unloading kernel %d from 0x%" PRIx64,
				     k->func_id, k->addr);
		if (kentry_free(k))
			kept++;
		else
			unloads++;
	}
	if (!unloads && !kept)
		return;
	pthread_mutex_lock(&kc->lock);
	kc->unloads += unloads;
	kc->kept += kept;
	pthread_mutex_unlock(&kc->lock);
}

/*
 * Whether a kernel loaded now finds this executor's
 * pto_kernel_report_pre_complete() through its weak reference: only if
 * the program's link exported it (PTOEXEC_LDFLAGS). Without it, every
 * pre-complete report would vanish without a word, so kernels are
 * refused instead.
 */
static bool report_exported(void)
{
	void *mine = (void *)(uintptr_t)pto_kernel_report_pre_complete;

	return mine &&
	       dlsym(RTLD_DEFAULT, "pto_kernel_report_pre_complete") == mine;
}

/* Copy the .so bytes of a blob into a memfd and dlopen it. */
static int kentry_load(struct pto_exec *ex, struct pto_kentry *k,
		       const struct pto_kblob_hdr *h, const uint8_t *so,
		       uint32_t core)
{
	char path[64];
	size_t off;

	if (!report_exported()) {
		pto_exec_log(ex, "core %u: cannot load kernel %d: this program does not export pto_kernel_report_pre_complete() (link it with -Wl,--export-dynamic-symbol=pto_kernel_report_pre_complete)",
			     core, h->func_id);
		return -ENOEXEC;
	}
	k->memfd = memfd_create("pto-kernel", MFD_CLOEXEC);
	if (k->memfd < 0)
		return -errno;
	for (off = 0; off < h->size;) {
		ssize_t n = write(k->memfd, so + off, h->size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (size_t)n;
	}
	kentry_path(k, path, sizeof(path));
	k->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!k->dl) {
		pto_exec_log(ex, "core %u: cannot load kernel %d: %s", core,
			     h->func_id, dlerror());
		return -ENOEXEC;
	}
	k->fn = (pto_kernel_entry_fn)(uintptr_t)dlsym(k->dl,
						       PTO_KERNEL_ENTRY_SYMBOL);
	if (!k->fn) {
		pto_exec_log(ex, "core %u: kernel %d has no %s", core,
			     h->func_id, PTO_KERNEL_ENTRY_SYMBOL);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * The blob's header at @addr, copied once into *@hc and checked, and its
 * .so bytes; 0 or -errno. The header lies in the client's memory, which
 * the client may change at any time: everything after the check uses the
 * copy, never the header again.
 */
static int kblob_find(struct pto_exec *ex, uint64_t addr, uint32_t core,
		      struct pto_kblob_hdr *hc, const uint8_t **sop)
{
	const struct pto_kblob_hdr *h = pto_gm_ptr(&ex->gm, addr, sizeof(*h));

	if (!h) {
		pto_exec_log(ex, "core %u: kernel address 0x%" PRIx64 " is outside GM",
			     core, addr);
		return -EFAULT;
	}
	memcpy(hc, h, sizeof(*hc));
	if (hc->magic != PTO_KBLOB_MAGIC || hc->version != PTO_KBLOB_VERSION) {
		pto_exec_log(ex, "core %u: no kernel blob at 0x%" PRIx64, core,
			     addr);
		return -ENOEXEC;
	}
	if (!hc->size || hc->size > PTO_KBLOB_MAX_SIZE)
		return -ENOEXEC;
	*sop = pto_gm_ptr(&ex->gm, addr + PTO_KBLOB_HDR_SIZE, hc->size);
	return *sop ? 0 : -ENOEXEC;
}

/*
 * The cached kernel of (@addr, @uid), most recently used now; a kernel
 * of another upload at @addr is stale (its buffer holds this one now)
 * and goes.
 */
static struct pto_kentry *kcache_find(struct pto_kcache *kc, uint64_t addr,
				      uint64_t uid, struct pto_kentry **dead)
{
	struct pto_kentry *k;

	for (k = kc->mru; k; k = k->next)
		if (k->addr == addr)
			break;
	if (!k)
		return NULL;
	if (k->uid != uid) {
		kentry_drop(kc, k, dead);
		return NULL;
	}
	list_del(kc, k);
	list_add(kc, k);
	return k;
}

/* A new entry for the blob @h at @addr, loaded; 0 or -errno. */
static int kcache_load(struct pto_kcache *kc, struct pto_exec *ex,
		       uint64_t addr, const struct pto_kblob_hdr *h,
		       const uint8_t *so, uint32_t core,
		       struct pto_kentry **out)
{
	struct pto_kentry *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return -ENOMEM;
	k->addr = addr;
	k->uid = h->uid;
	k->func_id = h->func_id;
	k->memfd = -1;
	ret = kentry_load(ex, k, h, so, core);
	if (ret) {
		if (kentry_free(k))
			kc->kept++;
		return ret;
	}
	if (kc->verbose)
		pto_exec_log(ex, "loaded kernel %d (%" PRIu64 " bytes) from 0x%" PRIx64,
			     h->func_id, h->size, addr);
	kc->loads++;
	list_add(kc, k);
	*out = k;
	return 0;
}

int pto_kcache_get(struct pto_kcache *kc, struct pto_exec *ex, uint64_t addr,
		   uint32_t core, pto_kernel_entry_fn *fn,
		   struct pto_kentry **ref)
{
	struct pto_kentry *k, *dead = NULL;
	struct pto_kblob_hdr h;
	const uint8_t *so;
	int ret;

	ret = kblob_find(ex, addr, core, &h, &so);
	if (ret)
		return ret;
	pthread_mutex_lock(&kc->lock);
	k = kcache_find(kc, addr, h.uid, &dead);
	if (!k)
		ret = kcache_load(kc, ex, addr, &h, so, core, &k);
	if (!ret) {
		k->refs++;
		*fn = k->fn;
		*ref = k;
		kcache_trim(kc, &dead);
	}
	pthread_mutex_unlock(&kc->lock);
	kcache_unload(kc, ex, dead);
	return ret;
}

int pto_kcache_task(struct pto_kcache *kc, struct pto_exec *ex,
		    const PTO2DispatchPayload *p, uint32_t core,
		    pto_kernel_entry_fn *fn, void **ref)
{
	struct pto_kentry *k;
	int ret;

	if (!p->function_bin_addr)
		return -ENOSYS;
	ret = pto_kcache_get(kc, ex, p->function_bin_addr, core, fn, &k);
	if (!ret)
		*ref = k;
	return ret;
}

void pto_kcache_put(struct pto_kcache *kc, struct pto_exec *ex,
		    struct pto_kentry *k)
{
	struct pto_kentry *dead = NULL;

	pthread_mutex_lock(&kc->lock);
	if (!--k->refs) {
		if (k->cached) {
			kcache_trim(kc, &dead);
		} else {
			kc->held--;
			dead = k;
		}
	}
	pthread_mutex_unlock(&kc->lock);
	kcache_unload(kc, ex, dead);
}

void pto_kcache_get_stats(struct pto_kcache *kc, struct pto_kcache_stats *st)
{
	pthread_mutex_lock(&kc->lock);
	st->entries = kc->nr;
	st->held = kc->held;
	st->loads = kc->loads;
	st->unloads = kc->unloads;
	st->kept = kc->kept;
	pthread_mutex_unlock(&kc->lock);
}

void pto_kcache_destroy(struct pto_kcache *kc, struct pto_exec *ex)
{
	struct pto_kentry *dead = NULL;

	pthread_mutex_lock(&kc->lock);
	while (kc->mru)
		kentry_drop(kc, kc->mru, &dead);
	pthread_mutex_unlock(&kc->lock);
	kcache_unload(kc, ex, dead);
	pthread_mutex_destroy(&kc->lock);
}
