// SPDX-License-Identifier: MIT
/*
 * pto_udev_gm.c - GM allocation of the user-mode device (see pto_udev.h)
 *
 * ptod's alone, in its own memory (nothing of it is in the shared page):
 * a sorted list of free ranges of GM (first fit, at the alignment asked
 * for), the buffers, and per file the handles it holds and the pins it
 * keeps. One lock covers all of it: allocation and free on ptod's main
 * thread, lookups, pins and unpins on its runner threads too.
 *
 * A file finds its buffers as pto.ko's does, by address and by handle,
 * without walking them: its handles are kept sorted by their buffer's
 * address (a file's buffers never overlap), so a lookup or a pin is a
 * binary search, and an array indexed by handle names each handle's
 * buffer. A run may name up to PTO_UDEV_MAX_BUFS buffers of its client; a
 * walk per name would hold the lock, and every other client with it, for
 * seconds.
 *
 * A buffer is reference counted as pto.ko's (Documentation/kmod.rst,
 * "Pins"): its handle holds one reference and every pin one. GM_FREE and
 * the release of its file drop the handle's; the buffer's range goes back
 * to the free list only with its last reference, so a pinned buffer's
 * memory stays out of the pool whatever its file does. Its pages are
 * punched out of the GM memfd when it is allocated and when its range
 * goes back, so a new buffer reads zero (as pto.ko zeroes GM at
 * allocation) and freed memory goes back to the host.
 *
 * Nothing that lets go allocates (GM_FREE, unpin, a file's release): a
 * buffer's allocation makes room in the free list for the range its end
 * may add (file_reserve()), and a pin's slot, once made, stays for the
 * next pin.
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

struct range {
	uint64_t off, len;
};

/* A buffer: its range of GM and who holds it. */
struct gm_buf {
	uint64_t off, len;
	uint32_t refs;		/* its handle's, while it has one; its pins' */
};

/* A handle of a file on a buffer. */
struct handle {
	uint32_t handle;
	struct gm_buf *b;
};

/* A pin slot of a file: pin id i + 1 is slot i. */
struct pin {
	struct gm_buf *b;	/* NULL: a free slot */
	uint32_t next;		/* a free slot: the next free one's id, 0: none */
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
	struct handle *bufs;	/* sorted by their buffer's offset */
	size_t nbufs, cap;
	uint64_t *held;		/* handle h is held: bit h - 1 */
	size_t held_words;
	/* handle h's buffer: by_handle[h - 1], NULL while h is not held */
	struct gm_buf **by_handle;	/* at least held_words * 64 */
	struct pin *pins;
	uint32_t npins;		/* slots made (in use or free) */
	uint32_t cappins;
	uint32_t free_pin;	/* the id of a free slot, 0: none */
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
 * add (there are never more free ranges than buffers + 1, counting the
 * buffers that only pins hold), so that freeing never allocates (lock
 * held).
 */
static int file_reserve(struct pto_udev_file *f)
{
	struct pto_udev_gm *gm = f->gm;

	if (f->nbufs == PTO_UDEV_MAX_BUFS)
		return -ENOSPC;
	/* the lowest free handle is at most nbufs + 1 */
	if (f->nbufs + 1 > f->held_words * 64) {
		size_t words = f->held_words ? 2 * f->held_words : 1;
		struct gm_buf **bh;
		uint64_t *n;

		/* by_handle may outgrow held_words * 64, never fall short */
		bh = realloc(f->by_handle, words * 64 * sizeof(*bh));
		if (!bh)
			return -ENOMEM;
		f->by_handle = bh;
		memset(bh + f->held_words * 64, 0,
		       (words - f->held_words) * 64 * sizeof(*bh));
		n = realloc(f->held, words * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + f->held_words, 0,
		       (words - f->held_words) * sizeof(*n));
		f->held = n;
		f->held_words = words;
	}
	if (f->nbufs == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct handle *n = realloc(f->bufs, cap * sizeof(*n));

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
	return 0;
}

/*
 * The lowest handle @f does not hold, now held: as pto.ko's (an
 * allocating xarray from 1), so a freed handle is given again and none
 * wraps. file_reserve() made room for it (lock held).
 */
static uint32_t handle_take(struct pto_udev_file *f)
{
	size_t w = 0;
	unsigned int bit;

	while (f->held[w] == UINT64_MAX)
		w++;
	bit = (unsigned int)__builtin_ctzll(~f->held[w]);
	f->held[w] |= 1ULL << bit;
	return (uint32_t)(w * 64 + bit + 1);
}

/* The index of the first handle of @f whose buffer starts above @off. */
static size_t handle_upper(const struct pto_udev_file *f, uint64_t off)
{
	size_t lo = 0, hi = f->nbufs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->bufs[mid].b->off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* What the handle @h of a file says of its buffer. */
static struct pto_udev_buf buf_desc(const struct handle *h)
{
	return (struct pto_udev_buf){ .handle = h->handle,
				      .dev_addr = PTO_GM_DEV_BASE + h->b->off,
				      .len = h->b->len };
}

int pto_udev_gm_alloc(struct pto_udev_file *f, uint64_t len, uint64_t align,
		      struct pto_udev_buf *out)
{
	struct pto_udev_gm *gm = f->gm;
	struct gm_buf *b;
	struct handle *h;
	uint64_t off;
	int ret;

	if (!len || len > gm->size ||
	    (align && (align < PAGE || align > MAX_ALIGN ||
		       (align & (align - 1)))))
		return -EINVAL;
	len = PTO_ALIGN_UP(len, PAGE);
	b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	pthread_mutex_lock(&gm->lock);
	ret = file_reserve(f);
	if (!ret)
		ret = range_alloc(gm, len, align ? align : PAGE, &off);
	if (!ret) {
		size_t at = handle_upper(f, off);

		punch(gm, off, len);
		*b = (struct gm_buf){ .off = off, .len = len, .refs = 1 };
		h = &f->bufs[at];
		memmove(h + 1, h, (f->nbufs++ - at) * sizeof(*h));
		*h = (struct handle){ .handle = handle_take(f), .b = b };
		f->by_handle[h->handle - 1] = b;
		*out = buf_desc(h);
		gm->st.bytes_used += len;
		gm->st.buffers++;
		gm->st.allocs++;
	}
	pthread_mutex_unlock(&gm->lock);
	if (ret)
		free(b);
	return ret;
}

/* Drop a reference to @b; the last one gives its range back (lock held). */
static void buf_put(struct pto_udev_gm *gm, struct gm_buf *b)
{
	if (--b->refs)
		return;
	punch(gm, b->off, b->len);
	range_free(gm, b->off, b->len);
	gm->st.bytes_used -= b->len;
	gm->st.buffers--;
	gm->st.frees++;
	free(b);
}

/* Drop handle @i of @f (lock held). */
static void handle_drop(struct pto_udev_file *f, size_t i)
{
	uint32_t h = f->bufs[i].handle - 1;

	f->held[h / 64] &= ~(1ULL << (h % 64));
	f->by_handle[h] = NULL;
	buf_put(f->gm, f->bufs[i].b);
	memmove(&f->bufs[i], &f->bufs[i + 1],
		(--f->nbufs - i) * sizeof(*f->bufs));
}

int pto_udev_gm_free(struct pto_udev_file *f, uint32_t handle)
{
	struct gm_buf *b = NULL;

	pthread_mutex_lock(&f->gm->lock);
	if (handle && handle <= f->held_words * 64)
		b = f->by_handle[handle - 1];
	/* @b starts the last of @f's buffers at or below its offset */
	if (b)
		handle_drop(f, handle_upper(f, b->off) - 1);
	pthread_mutex_unlock(&f->gm->lock);
	return b ? 0 : -ENOENT;
}

/*
 * The handle of @f whose buffer holds [@dev_addr, @dev_addr + @len), or
 * NULL; the range does not wrap (lock held).
 */
static const struct handle *handle_find(const struct pto_udev_file *f,
					uint64_t dev_addr, uint64_t len)
{
	const struct gm_buf *b;
	uint64_t off;
	size_t at;

	if (dev_addr < PTO_GM_DEV_BASE)
		return NULL;
	off = dev_addr - PTO_GM_DEV_BASE;
	/* buffers never overlap: only the last one starting at or below */
	at = handle_upper(f, off);
	if (!at)
		return NULL;
	b = f->bufs[at - 1].b;
	return off + len <= b->off + b->len ? &f->bufs[at - 1] : NULL;
}

int pto_udev_gm_lookup(struct pto_udev_file *f, uint64_t dev_addr,
		       uint64_t len, struct pto_udev_buf *out)
{
	const struct handle *h;

	if (!len || dev_addr + len < dev_addr)
		return -EINVAL;
	pthread_mutex_lock(&f->gm->lock);
	h = handle_find(f, dev_addr, len);
	if (h)
		*out = buf_desc(h);
	pthread_mutex_unlock(&f->gm->lock);
	return h ? 0 : -ENOENT;
}

/* A pin slot of @f for the next pin: its id (lock held); 0 or -errno. */
static int pin_slot(struct pto_udev_file *f, uint32_t *id)
{
	if (f->free_pin) {
		*id = f->free_pin;
		f->free_pin = f->pins[*id - 1].next;
		return 0;
	}
	if (f->npins == PTO_UDEV_MAX_PINS)
		return -ENOSPC;
	if (f->npins == f->cappins) {
		uint32_t cap = f->cappins ? 2 * f->cappins : 16;
		struct pin *n;

		if (cap > PTO_UDEV_MAX_PINS)
			cap = PTO_UDEV_MAX_PINS;
		n = realloc(f->pins, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		f->pins = n;
		f->cappins = cap;
	}
	*id = ++f->npins;
	return 0;
}

int pto_udev_gm_pin(struct pto_udev_file *pinner, struct pto_udev_file *f,
		    uint64_t dev_addr, uint64_t len, uint32_t *pin,
		    struct pto_udev_buf *out)
{
	struct pto_udev_gm *gm = f->gm;
	const struct handle *h;
	uint32_t id = 0;
	int ret;

	if (!len || dev_addr + len < dev_addr)
		return -EINVAL;
	if (pinner->gm != gm)
		return -EXDEV;
	pthread_mutex_lock(&gm->lock);
	h = handle_find(f, dev_addr, len);
	ret = h ? pin_slot(pinner, &id) : -ENOENT;
	if (!ret) {
		pinner->pins[id - 1] = (struct pin){ .b = h->b };
		h->b->refs++;
		gm->st.pins++;
		*pin = id;
		*out = buf_desc(h);
	}
	pthread_mutex_unlock(&gm->lock);
	return ret;
}

/* Drop pin @id of @f, which it holds (lock held). */
static void pin_drop(struct pto_udev_file *f, uint32_t id)
{
	struct gm_buf *b = f->pins[id - 1].b;

	f->pins[id - 1] = (struct pin){ .next = f->free_pin };
	f->free_pin = id;
	f->gm->st.pins--;
	buf_put(f->gm, b);
}

int pto_udev_gm_unpin(struct pto_udev_file *pinner, uint32_t pin)
{
	int ret = -ENOENT;

	pthread_mutex_lock(&pinner->gm->lock);
	if (pin && pin <= pinner->npins && pinner->pins[pin - 1].b) {
		pin_drop(pinner, pin);
		ret = 0;
	}
	pthread_mutex_unlock(&pinner->gm->lock);
	return ret;
}

void pto_udev_file_release(struct pto_udev_file *f)
{
	uint32_t id;

	if (!f)
		return;
	pthread_mutex_lock(&f->gm->lock);
	while (f->nbufs)
		handle_drop(f, f->nbufs - 1);
	for (id = 1; id <= f->npins; id++)
		if (f->pins[id - 1].b)
			pin_drop(f, id);
	pthread_mutex_unlock(&f->gm->lock);
	free(f->pins);
	free(f->bufs);
	free(f->by_handle);
	free(f->held);
	free(f);
}
