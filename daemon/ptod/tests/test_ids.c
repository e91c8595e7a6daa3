// SPDX-License-Identifier: MIT
/*
 * test_ids.c - the ids ptod gives its clients (ptod_client_id_next() in
 * ptod.h): one after another, never 0, and never that of a client still
 * connected, also when the 32-bit counter wraps.
 */
#include <stdint.h>

#include "../ptod.h"
#include "tap.h"

/* @n clients of ids @ids, linked as d->clients */
static void clients_of(struct ptod *d, struct client *c, const uint32_t *ids,
		       int n)
{
	int i;

	d->clients = NULL;
	for (i = n - 1; i >= 0; i--) {
		c[i].id = ids[i];
		c[i].next = d->clients;
		d->clients = &c[i];
	}
}

static void test_in_order(void)
{
	static struct ptod d;

	d.next_id = 0;
	d.clients = NULL;
	ok(ptod_client_id_next(&d) == 1, "the first client is 1");
	ok(ptod_client_id_next(&d) == 2, "the next is 2");
}

static void test_wrap(void)
{
	static const uint32_t live[] = { 1, UINT32_MAX, 3, 2 };
	static struct client c[4];
	static struct ptod d;
	uint32_t id;

	/* the counter at UINT32_MAX - 1; UINT32_MAX, 1, 2 and 3 are live */
	clients_of(&d, c, live, 4);
	d.next_id = UINT32_MAX - 1;
	id = ptod_client_id_next(&d);
	ok(id == 4, "after the wrap, past 0 and four live ids: 4 (got %u)",
	   id);
	ok(d.next_id == 4, "the counter follows (%u)", d.next_id);
	/* 5 is free; 6 goes live, so the one after 5 is 7 */
	c[0].id = 6;
	id = ptod_client_id_next(&d);
	ok(id == 5, "then 5 (got %u)", id);
	id = ptod_client_id_next(&d);
	ok(id == 7, "then 7, 6 being live (got %u)", id);
}

int main(void)
{
	test_in_order();
	test_wrap();
	return tap_done();
}
