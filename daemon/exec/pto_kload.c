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

struct pto_kentry {
	struct pto_kentry *next;
	uint64_t addr;
	uint64_t uid;
	int memfd;
	void *dl;
	pto_kernel_entry_fn fn;
};

void pto_kcache_init(struct pto_kcache *kc, bool verbose)
{
	pthread_mutex_init(&kc->lock, NULL);
	kc->head = NULL;
	kc->verbose = verbose;
}

static void kentry_free(struct pto_kentry *k)
{
	if (k->dl)
		dlclose(k->dl);
	if (k->memfd >= 0)
		close(k->memfd);
	free(k);
}

/* Copy the .so bytes of a blob into a memfd and dlopen it. */
static int kentry_load(struct pto_exec *ex, struct pto_kentry *k,
		       const struct pto_kblob_hdr *h, const uint8_t *so,
		       uint32_t core)
{
	char path[64];
	size_t off;

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
	snprintf(path, sizeof(path), "/proc/self/fd/%d", k->memfd);
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

int pto_kcache_get(struct pto_kcache *kc, struct pto_exec *ex, uint64_t addr,
		   uint32_t core, pto_kernel_entry_fn *out)
{
	struct pto_kblob_hdr hc, *h = &hc;
	const uint8_t *so;
	struct pto_kentry *k;
	int ret;

	ret = kblob_find(ex, addr, core, &hc, &so);
	if (ret)
		return ret;
	pthread_mutex_lock(&kc->lock);
	for (k = kc->head; k; k = k->next)
		if (k->addr == addr && k->uid == h->uid)
			break;
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k) {
			ret = -ENOMEM;
			goto out_unlock;
		}
		k->addr = addr;
		k->uid = h->uid;
		k->memfd = -1;
		ret = kentry_load(ex, k, h, so, core);
		if (ret) {
			kentry_free(k);
			goto out_unlock;
		}
		if (kc->verbose)
			pto_exec_log(ex, "loaded kernel %d (%" PRIu64 " bytes) from 0x%" PRIx64,
				     h->func_id, h->size, addr);
		k->next = kc->head;
		kc->head = k;
	}
	*out = k->fn;
out_unlock:
	pthread_mutex_unlock(&kc->lock);
	return ret;
}
