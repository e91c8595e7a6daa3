// SPDX-License-Identifier: MIT
/*
 * gm.h - GM as one process maps it: device address <-> host pointer
 *
 * Device addresses (uapi: GM offset 0 is at gm_dev_base) are what travel
 * between processes: in the dispatch payload, the submission stream, the
 * task register. Each process maps GM (or the part it may see) somewhere
 * in its own address space; struct pto_gm_map is that mapping, and these
 * are the only translations between the two.
 */
#ifndef PTO_PRIVATE_GM_H
#define PTO_PRIVATE_GM_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct pto_gm_map - a mapping of GM.
 * @host: where device address @dev_base is mapped in this process.
 * @dev_base: device address of the first mapped byte.
 * @size: bytes mapped.
 */
struct pto_gm_map {
	uint8_t *host;
	uint64_t dev_base;
	uint64_t size;
};

/* Host pointer of [@dev, @dev + @len) if it lies inside the map, else NULL. */
static inline void *pto_gm_ptr(const struct pto_gm_map *m, uint64_t dev,
			       uint64_t len)
{
	uint64_t off = dev - m->dev_base;

	if (dev < m->dev_base || off > m->size || len > m->size - off)
		return NULL;
	return m->host + off;
}

/* Device address of host pointer @p (which must lie inside the map). */
static inline uint64_t pto_gm_dev(const struct pto_gm_map *m, const void *p)
{
	return m->dev_base + (uint64_t)((const uint8_t *)p - m->host);
}

#endif /* PTO_PRIVATE_GM_H */
