// SPDX-License-Identifier: MIT
/*
 * pto-dev.h - opening /dev/ptoN and its ioctls, for the programs that
 * drive the device directly rather than through ptod and libpto
 * (tools/pto-gm, bench/roundtrip). Header-only. Every function returns 0
 * (or a file descriptor) on success and a negative errno on failure.
 */
#ifndef PTO_TOOLS_PTO_DEV_H
#define PTO_TOOLS_PTO_DEV_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/pto.h>

static inline int pto_xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

/* A new file of @dev, read-write, close-on-exec. */
static inline int pto_open_dev(const char *dev)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* PTO_ROLE_CLIENT, _AICPU or _EXECUTOR for file @fd. */
static inline int pto_set_role(int fd, uint32_t role)
{
	struct pto_set_role r = { .size = sizeof(r), .role = role };

	return pto_xioctl(fd, PTO_IOC_SET_ROLE, &r);
}

static inline int pto_get_info(int fd, struct pto_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return pto_xioctl(fd, PTO_IOC_GET_INFO, info);
}

#endif /* PTO_TOOLS_PTO_DEV_H */
