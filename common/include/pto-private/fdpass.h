// SPDX-License-Identifier: MIT
/*
 * fdpass.h - a file descriptor sent along with a message on a unix socket
 * (SCM_RIGHTS): libpto's hello to ptod carries the client's device file,
 * and the end-to-end tests send hellos of their own
 */
#ifndef PTO_PRIVATE_FDPASS_H
#define PTO_PRIVATE_FDPASS_H

#include <string.h>
#include <sys/socket.h>

/* Control buffer for one descriptor, aligned for struct cmsghdr. */
union pto_fd_cmsg {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* Attach @fd to @mh; @cm is its control buffer and must outlive the send. */
static inline void pto_msg_attach_fd(struct msghdr *mh, union pto_fd_cmsg *cm,
				     int fd)
{
	struct cmsghdr *ch;

	memset(cm, 0, sizeof(*cm));
	mh->msg_control = cm->buf;
	mh->msg_controllen = sizeof(cm->buf);
	ch = CMSG_FIRSTHDR(mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(ch), &fd, sizeof(int));
}

#endif /* PTO_PRIVATE_FDPASS_H */
