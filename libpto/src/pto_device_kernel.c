// SPDX-License-Identifier: MIT
/*
 * pto_device_kernel.c - libpto's device backend for pto.ko (/dev/ptoN)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pto-private/devinfo.h>

#include "pto_device.h"

struct pto_device {
	int fd;		/* the open /dev/ptoN, role CLIENT */
};

static int kdev_open(const char *path, const char *socket_path,
		     struct pto_device **out, struct pto_info *info, char *err,
		     size_t errlen)
{
	struct pto_set_role role = { .size = sizeof(role),
				     .role = PTO_ROLE_CLIENT };
	struct pto_device *d;
	int ret;

	(void)socket_path;	/* the device is the kernel's */
	*out = NULL;
	d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		ret = -errno;
		if (ret == -EACCES)
			snprintf(err, errlen, "%s (not in the device's group?)",
				 strerror(-ret));
		goto err_free;
	}
	ret = pto_dev_get_info(d->fd, info);
	if (ret == -EPROTO)
		snprintf(err, errlen,
			 "pto.ko speaks ABI %u.%u, libpto was built for %u.x",
			 info->abi_version >> 16, info->abi_version & 0xffff,
			 PTO_ABI_MAJOR);
	if (ret)
		goto err_close;
	if (ioctl(d->fd, PTO_IOC_SET_ROLE, &role)) {
		ret = -errno;
		goto err_close;
	}
	*out = d;
	return 0;

err_close:
	close(d->fd);
err_free:
	free(d);
	return ret;
}

static void kdev_close(struct pto_device *d)
{
	if (!d)
		return;
	close(d->fd);	/* the device frees whatever is still allocated */
	free(d);
}

static void kdev_free_handle(struct pto_device *d, uint32_t handle)
{
	struct pto_gm_free f = { .size = sizeof(f), .handle = handle };

	/* Can only fail for a handle we never had: nothing to undo. */
	(void)ioctl(d->fd, PTO_IOC_GM_FREE, &f);
}

static int kdev_gm_alloc(struct pto_device *d, size_t len,
			 struct pto_dev_buf *out)
{
	struct pto_gm_alloc ga = { .size = sizeof(ga), .len = len };
	void *p;
	int ret;

	if (ioctl(d->fd, PTO_IOC_GM_ALLOC, &ga))
		return -errno;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd,
		 (off_t)ga.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		kdev_free_handle(d, ga.handle);
		return ret;
	}
	*out = (struct pto_dev_buf){ .handle = ga.handle,
				     .dev_addr = ga.dev_addr,
				     .len = len, .ptr = p };
	return 0;
}

static void kdev_gm_free(struct pto_device *d, struct pto_dev_buf *b)
{
	munmap(b->ptr, b->len);
	kdev_free_handle(d, b->handle);
}

static int kdev_handover_fd(struct pto_device *d)
{
	return d->fd;
}

const struct pto_dev_ops pto_dev_kernel_ops = {
	.name = "pto.ko",
	.open = kdev_open,
	.close = kdev_close,
	.gm_alloc = kdev_gm_alloc,
	.gm_free = kdev_gm_free,
	.handover_fd = kdev_handover_fd,
};
