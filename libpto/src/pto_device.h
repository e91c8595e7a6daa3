// SPDX-License-Identifier: MIT
/*
 * pto_device.h - the only way libpto touches a device
 *
 * Everything libpto needs from the device goes through one small table of
 * operations, chosen at pto_connect() by $PTO_DEVICE: pto.ko's /dev/ptoN
 * (pto_device_kernel.c), or "user", the user-mode device that ptod runs
 * for machines that cannot load pto.ko (pto_device_user.c).
 */
#ifndef PTO_DEVICE_H
#define PTO_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/pto.h>

struct pto_device;

/**
 * struct pto_dev_buf - a GM buffer as a backend hands it out.
 * @handle: backend handle of the buffer.
 * @dev_addr: device address of its first byte.
 * @len: length in bytes.
 * @ptr: where this process sees it.
 */
struct pto_dev_buf {
	uint32_t handle;
	uint64_t dev_addr;
	size_t len;
	void *ptr;
};

/**
 * struct pto_dev_ops - a device backend. Every op returns 0 or -errno.
 * @name: for messages.
 * @open: open the device at @path as a client (ptod listens on
 *	@socket_path); fill @info. On failure @err may say why.
 * @close: release the device and everything still allocated on it.
 * @gm_alloc: allocate and map @len bytes of GM into @out.
 * @gm_free: unmap and free a buffer from @gm_alloc.
 * @handover_fd: the file descriptor to hand to ptod so that it can check
 *	the buffers this client names (-ENOTSUP if the backend has none).
 */
struct pto_dev_ops {
	const char *name;
	int (*open)(const char *path, const char *socket_path,
		    struct pto_device **out, struct pto_info *info, char *err,
		    size_t errlen);
	void (*close)(struct pto_device *d);
	int (*gm_alloc)(struct pto_device *d, size_t len,
			struct pto_dev_buf *out);
	void (*gm_free)(struct pto_device *d, struct pto_dev_buf *b);
	int (*handover_fd)(struct pto_device *d);
};

/* /dev/ptoN through pto.ko. */
extern const struct pto_dev_ops pto_dev_kernel_ops;
/* ptod's user-mode device ($PTO_DEVICE=user). */
extern const struct pto_dev_ops pto_dev_user_ops;

/* A SOCK_SEQPACKET connection to ptod at @path (libpto.c): fd or -errno. */
int pto_sock_connect(const char *path);

#endif /* PTO_DEVICE_H */
