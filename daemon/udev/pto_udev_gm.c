// SPDX-License-Identifier: MIT
/*
 * pto_udev_gm.c - GM allocation of the user-mode device (see pto_udev.h)
 *
 * ptod's alone: a sorted list of free ranges of GM (first fit, at the
 * alignment asked for) and, per file, the buffers it holds. One lock
 * covers both: allocation and free on ptod's main thread, lookups on its
 * runner threads. A buffer's pages are punched out of the GM memfd when it
 * is allocated and when it is freed, so a new buffer reads zero (as
 * pto.ko zeroes GM at allocation) and freed memory goes back to the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <pto-private/compiler.h>

#include "pto_udev.h"

#define PAGE		4096ULL
#define MAX_ALIGN	(1ULL << 30)
/* live buffers of one file (pto.ko: -ENOSPC when its handles run out) */
#define MAX_BUFS	65536

struct range {
	uint64_t off, len;
};

struct pto_udev_gm {
	pthread_mutex_t lock;
	int fd;			/* the GM memfd */
	uint64_t size;
	struct range *free;	/* sorted by offset, never adjacent */
	size_t nfree, capfree;
	struct pto_udev_gm_stats st;
};

struct pto_udev_file {
	struct pto_udev_gm *gm;
	struct pto_udev_buf *bufs;
	size_t nbufs, cap;
	uint32_t next_handle;
};

int pto_udev_gm_create(struct pto_udev *u, struct pto_udev_gm **out)
{
	struct pto_udev_gm *gm = calloc(1, sizeof(*gm));

	*out = NULL;
	if (!gm)
		return -ENOMEM;
	gm->free = malloc(sizeof(*gm->free));
	if (!gm->free) {
		free(gm);
		return -ENOMEM;
	}
	gm->fd = u->gm_fd;
	gm->size = u->info.gm_size;
	gm->free[0] = (struct range){ 0, gm->size };
	gm->nfree = gm->capfree = 1;
	pthread_mutex_init(&gm->lock, NULL);
	*out = gm;
	return 0;
}

void pto_udev_gm_destroy(struct pto_udev_gm *gm)
{
	if (!gm)
		return;
	pthread_mutex_destroy(&gm->lock);
	free(gm->free);
	free(gm);
}

void pto_udev_gm_stats(struct pto_udev_gm *gm, struct pto_udev_gm_stats *st)
{
	pthread_mutex_lock(&gm->lock);
	*st = gm->st;
	pthread_mutex_unlock(&gm->lock);
}

/* Zero [@off, @off + @len) and give its pages back. */
static void punch(struct pto_udev_gm *gm, uint64_t off, uint64_t len)
{
	/* cannot fail on a memfd for a page-aligned range inside it */
	(void)fallocate(gm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)off, (off_t)len);
}

/* Free range @i becomes [@off, @off + @len) minus the part taken. */
static int take_range(struct pto_udev_gm *gm, size_t i, uint64_t off,
		      uint64_t len)
{
	struct range r = gm->free[i];
	uint64_t tail = r.off + r.len - (off + len);

	if (off > r.off && tail) {
		if (gm->nfree == gm->capfree) {
			struct range *n = realloc(gm->free, 2 * gm->capfree *
						  sizeof(*n));

			if (!n)
				return -ENOMEM;
			gm->free = n;
			gm->capfree *= 2;
		}
		memmove(&gm->free[i + 2], &gm->free[i + 1],
			(gm->nfree - i - 1) * sizeof(*gm->free));
		gm->nfree++;
		gm->free[i].len = off - r.off;
		gm->free[i + 1] = (struct range){ off + len, tail };
	} else if (off > r.off) {
		gm->free[i].len = off - r.off;
	} else if (tail) {
		gm->free[i] = (struct range){ off + len, tail };
	} else {
		memmove(&gm->free[i], &gm->free[i + 1],
			(gm->nfree - i - 1) * sizeof(*gm->free));
		gm->nfree--;
	}
	return 0;
}

/* First fit of @len bytes at @align: the offset in *@off (lock held). */
static int range_alloc(struct pto_udev_gm *gm, uint64_t len, uint64_t align,
		       uint64_t *off)
{
	size_t i;

	for (i = 0; i < gm->nfree; i++) {
		struct range *r = &gm->free[i];
		uint64_t at = PTO_ALIGN_UP(r->off, align);

		if (at < r->off + r->len && r->off + r->len - at >= len) {
			*off = at;
			return take_range(gm, i, at, len);
		}
	}
	return -ENOMEM;
}

/* Give [@off, @off + @len) back, merging with its neighbours. */
static void range_free(struct pto_udev_gm *gm, uint64_t off, uint64_t len)
{
	size_t i = 0;
	bool prev, next;

	while (i < gm->nfree && gm->free[i].off < off)
		i++;
	prev = i > 0 && gm->free[i - 1].off + gm->free[i - 1].len == off;
	next = i < gm->nfree && off + len == gm->free[i].off;
	if (prev && next) {
		gm->free[i - 1].len += len + gm->free[i].len;
		memmove(&gm->free[i], &gm->free[i + 1],
			(gm->nfree - i - 1) * sizeof(*gm->free));
		gm->nfree--;
	} else if (prev) {
		gm->free[i - 1].len += len;
	} else if (next) {
		gm->free[i].off = off;
		gm->free[i].len += len;
	} else {
		/* capfree >= buffers + 1 >= nfree + 1: see file_reserve() */
		memmove(&gm->free[i + 1], &gm->free[i],
			(gm->nfree - i) * sizeof(*gm->free));
		gm->free[i] = (struct range){ off, len };
		gm->nfree++;
	}
}

/*
 * Room for one more buffer of @f and for the free range its free may
 * add (there are never more free ranges than buffers + 1), so that
 * freeing never allocates (lock held).
 */
static int file_reserve(struct pto_udev_file *f)
{
	struct pto_udev_gm *gm = f->gm;

	if (f->nbufs == MAX_BUFS)
		return -ENOSPC;
	if (f->nbufs == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct pto_udev_buf *n = realloc(f->bufs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->bufs = n;
		f->cap = cap;
	}
	if (gm->capfree < gm->st.buffers + 3) {
		size_t cap = 2 * (gm->st.buffers + 3);
		struct range *n = realloc(gm->free, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		gm->free = n;
		gm->capfree = cap;
	}
	return 0;
}

int pto_udev_file_create(struct pto_udev_gm *gm, struct pto_udev_file **out)
{
	struct pto_udev_file *f = calloc(1, sizeof(*f));

	*out = f;
	if (!f)
		return -ENOMEM;
	f->gm = gm;
	f->next_handle = 1;
	return 0;
}

int pto_udev_gm_alloc(struct pto_udev_file *f, uint64_t len, uint64_t align,
		      struct pto_udev_buf *out)
{
	struct pto_udev_gm *gm = f->gm;
	uint64_t off;
	int ret;

	if (!len || len > gm->size ||
	    (align && (align < PAGE || align > MAX_ALIGN ||
		       (align & (align - 1)))))
		return -EINVAL;
	len = PTO_ALIGN_UP(len, PAGE);
	pthread_mutex_lock(&gm->lock);
	ret = file_reserve(f);
	if (!ret)
		ret = range_alloc(gm, len, align ? align : PAGE, &off);
	if (!ret) {
		punch(gm, off, len);
		*out = (struct pto_udev_buf){ .handle = f->next_handle++,
					      .dev_addr = PTO_GM_DEV_BASE + off,
					      .len = len };
		if (!f->next_handle)
			f->next_handle = 1;
		f->bufs[f->nbufs++] = *out;
		gm->st.bytes_used += len;
		gm->st.buffers++;
		gm->st.allocs++;
	}
	pthread_mutex_unlock(&gm->lock);
	return ret;
}

/* Drop buffer @i of @f (lock held). */
static void buf_drop(struct pto_udev_file *f, size_t i)
{
	struct pto_udev_gm *gm = f->gm;
	struct pto_udev_buf *b = &f->bufs[i];
	uint64_t off = b->dev_addr - PTO_GM_DEV_BASE;

	punch(gm, off, b->len);
	range_free(gm, off, b->len);
	gm->st.bytes_used -= b->len;
	gm->st.buffers--;
	gm->st.frees++;
	f->bufs[i] = f->bufs[--f->nbufs];
}

int pto_udev_gm_free(struct pto_udev_file *f, uint32_t handle)
{
	int ret = -ENOENT;
	size_t i;

	pthread_mutex_lock(&f->gm->lock);
	for (i = 0; i < f->nbufs; i++)
		if (handle && f->bufs[i].handle == handle) {
			buf_drop(f, i);
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&f->gm->lock);
	return ret;
}

int pto_udev_gm_lookup(struct pto_udev_file *f, uint64_t dev_addr,
		       uint64_t len, struct pto_udev_buf *out)
{
	int ret = -ENOENT;
	size_t i;

	if (!len || dev_addr + len < dev_addr)
		return -EINVAL;
	pthread_mutex_lock(&f->gm->lock);
	for (i = 0; i < f->nbufs; i++) {
		const struct pto_udev_buf *b = &f->bufs[i];

		if (dev_addr >= b->dev_addr &&
		    dev_addr + len <= b->dev_addr + b->len) {
			*out = *b;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&f->gm->lock);
	return ret;
}

void pto_udev_file_release(struct pto_udev_file *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->gm->lock);
	while (f->nbufs)
		buf_drop(f, f->nbufs - 1);
	pthread_mutex_unlock(&f->gm->lock);
	free(f->bufs);
	free(f);
}
