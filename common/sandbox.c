// SPDX-License-Identifier: MIT
/*
 * sandbox.c - a sandbox's mailbox, as ptod creates it (pto-private/sandbox.h
 * has the layout)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pto-private/futex.h>
#include <pto-private/sandbox.h>

int pto_sbx_mailbox_create(uint32_t nr_cores)
{
	size_t size = pto_sbx_size(nr_cores);
	struct pto_sbx_hdr *h;
	int fd, ret;

	fd = memfd_create("pto-sandbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size))
		goto fail;
	h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		goto fail;
	h->magic = PTO_SBX_MAGIC;
	h->version = PTO_SBX_VERSION;
	h->nr_cores = nr_cores;
	h->slot_size = sizeof(struct pto_sbx_slot);
	munmap(h, size);
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

void pto_sbx_slot_wake(struct pto_sbx_slot *s)
{
	atomic_fetch_add_explicit(&s->wake, 1, memory_order_release);
	pto_futex_wake_shared(&s->wake, 1);
}
