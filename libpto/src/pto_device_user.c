// SPDX-License-Identifier: MIT
/*
 * pto_device_user.c - libpto's device backend for ptod's user-mode
 * device ($PTO_DEVICE=user, ptod -d user)
 *
 * The device runs in ptod, so this backend talks to ptod: on a
 * connection of its own (the client's device "file"), DEV_OPEN gives the
 * device's description, GM's memfd and a file that names this client's
 * buffers; GM_ALLOC and GM_FREE allocate and free them, and a buffer is
 * mapped from GM's memfd at the offset ptod returns. The file is what the
 * hello hands to ptod, as an open /dev/ptoN is on pto.ko.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <pto-private/devinfo.h>
#include <pto-private/fdpass.h>
#include <pto-private/wire.h>

#include "pto_device.h"

struct pto_device {
	int sock;	/* the device connection to ptod */
	int file;	/* our device file (ptod made it) */
	int gm_fd;	/* GM's memfd */
};

/*
 * Send @m, wait for its REPLY into @m (and up to 2 descriptors into
 * @fds): the reply's status, or -errno if the connection failed.
 */
static int request(struct pto_device *d, struct pto_msg *m, int *fds,
		   unsigned int *nfds)
{
	struct iovec iov = { m, offsetof(struct pto_msg, text) + 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	union pto_fd_cmsg cm;
	ssize_t n;

	*nfds = 0;
	m->text[0] = 0;
	do
		n = send(d->sock, m, iov.iov_len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != iov.iov_len)
		return -EIO;
	iov.iov_len = sizeof(*m);
	pto_msg_want_fds(&mh, &cm);
	do
		n = recvmsg(d->sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*nfds = pto_msg_take_fds(&mh, fds, PTO_FDPASS_MAX);
	if (!n)
		return -ECONNRESET;
	if (pto_msg_from_ptod(m, (size_t)n, NULL, 0) ||
	    m->type != PTO_MSG_REPLY) {
		/* out of step with ptod from now on: every request fails */
		shutdown(d->sock, SHUT_RDWR);
		m->text[0] = 0;
		return -EPROTO;
	}
	return m->status;
}

static void udev_close(struct pto_device *d)
{
	if (!d)
		return;
	/* ptod frees our buffers once it holds the file no longer */
	if (d->sock >= 0)
		close(d->sock);
	if (d->file >= 0)
		close(d->file);
	if (d->gm_fd >= 0)
		close(d->gm_fd);
	free(d);
}

static int udev_open(const char *path, const char *socket_path,
		     struct pto_device **out, struct pto_info *info,
		     char *err, size_t errlen)
{
	struct pto_device *d = calloc(1, sizeof(*d));
	unsigned int nfds = 0, i;
	struct pto_msg m;
	int fds[2], ret;

	(void)path;
	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->file = d->gm_fd = -1;
	d->sock = pto_sock_connect(socket_path);
	if (d->sock < 0) {
		ret = d->sock;
		snprintf(err, errlen, "connect %s: %s (is ptod -d user running?)",
			 socket_path, strerror(-ret));
		free(d);
		return ret;
	}
	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_DEV_OPEN;
	ret = request(d, &m, fds, &nfds);
	if (!ret && nfds != 2)
		ret = -EPROTO;
	for (i = 0; i < nfds; i++)
		if (ret)
			close(fds[i]);
	if (ret) {
		snprintf(err, errlen, "ptod: %s",
			 m.text[0] ? m.text : strerror(-ret));
		udev_close(d);
		return ret;
	}
	d->file = fds[0];
	d->gm_fd = fds[1];
	*info = m.u.dev.info;
	if (!pto_abi_supported(info->abi_version)) {
		snprintf(err, errlen,
			 "ptod's user-mode device speaks ABI %u.%u, libpto was built for %u.x",
			 info->abi_version >> 16, info->abi_version & 0xffff,
			 PTO_ABI_MAJOR);
		udev_close(d);
		return -EPROTO;
	}
	*out = d;
	return 0;
}

static void free_handle(struct pto_device *d, uint32_t handle)
{
	unsigned int nfds;
	struct pto_msg m;
	int fds[2];

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_GM_FREE;
	m.u.gm.handle = handle;
	/* can only fail if ptod is gone, which frees everything anyway */
	request(d, &m, fds, &nfds);
	while (nfds)
		close(fds[--nfds]);
}

static int udev_gm_alloc(struct pto_device *d, size_t len,
			 struct pto_dev_buf *out)
{
	unsigned int nfds;
	struct pto_msg m;
	int fds[2], ret;
	void *p;

	memset(&m, 0, sizeof(m));
	m.type = PTO_MSG_GM_ALLOC;
	m.u.gm.len = len;
	ret = request(d, &m, fds, &nfds);
	while (nfds)
		close(fds[--nfds]);
	if (ret)
		return ret;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, d->gm_fd,
		 (off_t)m.u.gm.mmap_offset);
	if (p == MAP_FAILED) {
		ret = -errno;
		free_handle(d, m.u.gm.handle);
		return ret;
	}
	*out = (struct pto_dev_buf){ .handle = m.u.gm.handle,
				     .dev_addr = m.u.gm.dev_addr,
				     .len = len, .ptr = p };
	return 0;
}

static void udev_gm_free(struct pto_device *d, struct pto_dev_buf *b)
{
	munmap(b->ptr, b->len);
	free_handle(d, b->handle);
}

static int udev_handover_fd(struct pto_device *d)
{
	return d->file;
}

const struct pto_dev_ops pto_dev_user_ops = {
	.name = "user-mode device",
	.open = udev_open,
	.close = udev_close,
	.gm_alloc = udev_gm_alloc,
	.gm_free = udev_gm_free,
	.handover_fd = udev_handover_fd,
};
