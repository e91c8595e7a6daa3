// SPDX-License-Identifier: MIT
/*
 * ptod_pins.c - references on clients' GM buffers (PTO_IOC_GM_PIN on
 * pto.ko, pto_udev_gm_pin() on the user-mode device, through struct
 * ptod_dev_ops)
 *
 * ptod reads and writes a client's memory long after the client named it:
 * its stream buffer and kernel blobs for the life of the client, the
 * tensors of a run until the run has drained. An address checked once is
 * no reference: the client can free the buffer and the pool give the
 * memory to another tenant. So ptod pins every buffer it will touch, on
 * the AICPU file, with the client's own file: while pinned, the memory
 * cannot go to anyone else, whatever the client does.
 *
 * A kernel blob the client stops naming (its kernel id moved to another
 * buffer) is no longer needed for the client's life, only by the run in
 * flight, if any: ptod.c moves its pin out of the life set (ptod_pin_move,
 * ptod_pin_drop), see Documentation/runtime.rst.
 *
 * A pin set holds one pin per distinct buffer, sorted by address; a range
 * inside a buffer already pinned costs a binary search and no system
 * call. Pinned buffers never overlap (a pinned buffer's memory stays out
 * of the pool, on both devices), so the entry whose start is the greatest
 * at or below an address is the only candidate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptod.h"

/* The index of the first entry starting above @addr. */
static uint32_t pinset_upper(const struct ptod_pinset *s, uint64_t addr)
{
	uint32_t lo = 0, hi = s->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int pinset_insert(struct ptod_pinset *s, uint32_t at,
			 const struct ptod_pin *p)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		struct ptod_pin *v = realloc(s->v, sizeof(*v) * cap);

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	memmove(&s->v[at + 1], &s->v[at], sizeof(*s->v) * (s->n - at));
	s->v[at] = *p;
	s->n++;
	return 0;
}

static void pin_drop(struct ptod *d, uint32_t id)
{
	d->ops->unpin(d, id);
}

/**
 * ptod_pin_range() - make sure [@addr, @addr + @len) is pinned.
 * @c: the client; the range must lie in one of its file's buffers.
 * @s: the pin set that keeps the pin.
 * @addr: device address.
 * @len: bytes, 0 counts as 1.
 *
 * Return: 0 when the range lies in a buffer pinned in @s (already, or
 * now), -ENOENT if it lies in no buffer of the client's file, -EINVAL for
 * a range that wraps, -ENOMEM, or another -errno of the device's pin.
 */
int ptod_pin_range(struct client *c, struct ptod_pinset *s, uint64_t addr,
		   uint64_t len)
{
	struct ptod *d = c->d;
	struct ptod_pin p;
	uint32_t at;
	int ret;

	if (!len)
		len = 1;
	if (addr + len < addr)
		return -EINVAL;
	at = pinset_upper(s, addr);
	if (at && addr + len <= s->v[at - 1].end)
		return 0;

	ret = d->ops->pin(c, addr, len, &p);
	if (ret)
		return ret;
	ret = pinset_insert(s, pinset_upper(s, p.start), &p);
	if (ret)
		pin_drop(d, p.id);
	return ret;
}

/* The index of the entry of @s whose buffer holds @addr, or -1. */
static int64_t pinset_find(const struct ptod_pinset *s, uint64_t addr)
{
	uint32_t at = pinset_upper(s, addr);

	return at && addr < s->v[at - 1].end ? (int64_t)at - 1 : -1;
}

static void pinset_remove(struct ptod_pinset *s, uint32_t at)
{
	memmove(&s->v[at], &s->v[at + 1], sizeof(*s->v) * (s->n - at - 1));
	s->n--;
}

/**
 * ptod_pin_find() - the pin of @s on the buffer that holds @addr, or NULL.
 * @s: the pin set.
 * @addr: device address.
 */
const struct ptod_pin *ptod_pin_find(const struct ptod_pinset *s,
				     uint64_t addr)
{
	int64_t at = pinset_find(s, addr);

	return at < 0 ? NULL : &s->v[at];
}

/**
 * ptod_pin_drop() - drop the pin of @s on the buffer that holds @addr.
 * @d: the daemon.
 * @s: the pin set.
 * @addr: device address.
 *
 * Return: 0, or -ENOENT if @s pins no buffer holding @addr.
 */
int ptod_pin_drop(struct ptod *d, struct ptod_pinset *s, uint64_t addr)
{
	int64_t at = pinset_find(s, addr);

	if (at < 0)
		return -ENOENT;
	pin_drop(d, s->v[at].id);
	pinset_remove(s, (uint32_t)at);
	return 0;
}

/**
 * ptod_pin_move() - hand the pin of @from on the buffer that holds @addr
 * over to @to.
 * @d: the daemon.
 * @from: the pin set that has the pin.
 * @to: the pin set that keeps it from now on; if it pins that buffer
 *	already, that pin is enough and @from's is dropped.
 * @addr: device address.
 *
 * Return: 0; -ENOENT if @from pins no buffer holding @addr, -ENOMEM:
 * nothing changed.
 */
int ptod_pin_move(struct ptod *d, struct ptod_pinset *from,
		  struct ptod_pinset *to, uint64_t addr)
{
	int64_t at = pinset_find(from, addr);
	struct ptod_pin p;
	int ret;

	if (at < 0)
		return -ENOENT;
	p = from->v[at];
	if (pinset_find(to, p.start) >= 0) {
		pin_drop(d, p.id);
	} else {
		ret = pinset_insert(to, pinset_upper(to, p.start), &p);
		if (ret)
			return ret;
	}
	pinset_remove(from, (uint32_t)at);
	return 0;
}

/**
 * ptod_pins_release() - drop every pin of @s (its memory is kept).
 * @d: the daemon.
 * @s: the pin set; nothing may touch its buffers any more.
 */
void ptod_pins_release(struct ptod *d, struct ptod_pinset *s)
{
	uint32_t i;

	for (i = 0; i < s->n; i++)
		pin_drop(d, s->v[i].id);
	s->n = 0;
}

/**
 * ptod_pins_free() - drop every pin of @s and its memory.
 * @d: the daemon.
 * @s: the pin set.
 */
void ptod_pins_free(struct ptod *d, struct ptod_pinset *s)
{
	ptod_pins_release(d, s);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
