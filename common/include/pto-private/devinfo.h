// SPDX-License-Identifier: MIT
/*
 * devinfo.h - what a program asks pto.ko first: the device's geometry
 * (PTO_IOC_GET_INFO), refused when the module speaks another major ABI
 * version than the one the program was built with (the register layout
 * and the ioctls of another major version are not this one's)
 */
#ifndef PTO_PRIVATE_DEVINFO_H
#define PTO_PRIVATE_DEVINFO_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include <linux/pto.h>

/*
 * Whether a device of ABI @abi_version (struct pto_info's, the info
 * page's) is one this program was built for: the same major version.
 * pto.ko's and the user-mode device's (daemon/udev) are checked alike.
 */
static inline bool pto_abi_supported(uint32_t abi_version)
{
	return abi_version >> 16 == PTO_ABI_MAJOR;
}

/*
 * Whether a device of ABI @abi_version lets the AICPU raise its own
 * interrupt (PTO_IOC_RAISE_IRQ with PTO_CORE_NONE): since ABI 3.3.
 */
static inline bool pto_abi_aicpu_raises(uint32_t abi_version)
{
	return pto_abi_supported(abi_version) && (abi_version & 0xffff) >= 3;
}

/*
 * Whether a device of ABI @abi_version lets the AICPU charge a buffer to
 * a user (PTO_GM_ALLOC_CHARGE): since ABI 3.4.
 */
static inline bool pto_abi_aicpu_charges(uint32_t abi_version)
{
	return pto_abi_supported(abi_version) && (abi_version & 0xffff) >= 4;
}

/*
 * Fill @info from the device file @fd. 0, -errno of the ioctl, or
 * -EPROTO if the module's ABI major version is not PTO_ABI_MAJOR
 * (info->abi_version says which it is).
 */
static inline int pto_dev_get_info(int fd, struct pto_info *info)
{
	*info = (struct pto_info){ .size = sizeof(*info) };
	if (ioctl(fd, PTO_IOC_GET_INFO, info))
		return -errno;
	if (!pto_abi_supported(info->abi_version))
		return -EPROTO;
	return 0;
}

#endif /* PTO_PRIVATE_DEVINFO_H */
