// SPDX-License-Identifier: MIT
/*
 * pto2_heap.c - bounded max-heap of ready task ids (see pto2_heap.h)
 */
#include <errno.h>
#include <stdlib.h>

#include "pto2_heap.h"

int pto2_heap_init(struct pto2_heap *h, uint32_t cap)
{
	h->key = malloc(sizeof(*h->key) * (cap ? cap : 1));
	h->n = 0;
	h->cap = cap;
	return h->key ? 0 : -ENOMEM;
}

void pto2_heap_destroy(struct pto2_heap *h)
{
	free(h->key);
	h->key = NULL;
}

int pto2_heap_push(struct pto2_heap *h, uint32_t priority, int32_t id)
{
	uint64_t k = (uint64_t)priority << 32 | (uint32_t)~(uint32_t)id;
	uint32_t i = h->n;

	if (h->n == h->cap)
		return -ENOSPC;
	h->n++;
	while (i && h->key[(i - 1) / 2] < k) {
		h->key[i] = h->key[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->key[i] = k;
	return 0;
}

int pto2_heap_pop(struct pto2_heap *h, int32_t *id)
{
	uint64_t last;
	uint32_t i = 0;

	if (!h->n)
		return -EAGAIN;
	*id = (int32_t)~(uint32_t)h->key[0];
	last = h->key[--h->n];
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->key[c + 1] > h->key[c])
			c++;
		if (h->key[c] <= last)
			break;
		h->key[i] = h->key[c];
		i = c;
	}
	if (h->n)
		h->key[i] = last;
	return 0;
}
