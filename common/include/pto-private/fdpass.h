// SPDX-License-Identifier: MIT
/*
 * fdpass.h - file descriptors sent along with a message on a unix socket
 * (SCM_RIGHTS): libpto's hello to ptod carries the client's device file,
 * ptod's replies on the user-mode device carry memfds, ptod hands
 * pto-aicore the sandboxes' mailboxes and pidfds, and the end-to-end
 * tests send and receive their own
 */
#ifndef PTO_PRIVATE_FDPASS_H
#define PTO_PRIVATE_FDPASS_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The most descriptors one message of ours carries. */
#define PTO_FDPASS_MAX	2

/* Control buffer for PTO_FDPASS_MAX descriptors, aligned for cmsghdr. */
union pto_fd_cmsg {
	struct cmsghdr align;
	char buf[CMSG_SPACE(PTO_FDPASS_MAX * sizeof(int))];
};

/*
 * Attach @n descriptors @fds to @mh in the control buffer @buf, aligned
 * for cmsghdr and of at least CMSG_SPACE(@n * sizeof(int)) bytes, which
 * must outlive the send.
 */
static inline void pto_msg_put_fds(struct msghdr *mh, char *buf,
				   const int *fds, unsigned int n)
{
	struct cmsghdr *ch;

	memset(buf, 0, CMSG_SPACE(n * sizeof(int)));
	mh->msg_control = buf;
	mh->msg_controllen = CMSG_SPACE(n * sizeof(int));
	ch = CMSG_FIRSTHDR(mh);
	ch->cmsg_level = SOL_SOCKET;
	ch->cmsg_type = SCM_RIGHTS;
	ch->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(ch), fds, n * sizeof(int));
}

/*
 * Attach @n (1 .. PTO_FDPASS_MAX) descriptors @fds to @mh; @cm is its
 * control buffer and must outlive the send.
 */
static inline void pto_msg_attach_fds(struct msghdr *mh, union pto_fd_cmsg *cm,
				      const int *fds, unsigned int n)
{
	pto_msg_put_fds(mh, cm->buf, fds, n);
}

static inline void pto_msg_attach_fd(struct msghdr *mh, union pto_fd_cmsg *cm,
				     int fd)
{
	pto_msg_attach_fds(mh, cm, &fd, 1);
}

/* Before recvmsg(): receive up to PTO_FDPASS_MAX descriptors into @cm. */
static inline void pto_msg_want_fds(struct msghdr *mh, union pto_fd_cmsg *cm)
{
	mh->msg_control = cm->buf;
	mh->msg_controllen = sizeof(cm->buf);
}

/*
 * After recvmsg(): the descriptors received, the first @max into @fds
 * (the rest closed); returns how many are in @fds.
 */
static inline unsigned int pto_msg_take_fds(struct msghdr *mh, int *fds,
					    unsigned int max)
{
	struct cmsghdr *ch;
	unsigned int got = 0;

	for (ch = CMSG_FIRSTHDR(mh); ch; ch = CMSG_NXTHDR(mh, ch)) {
		size_t k, nfd;

		if (ch->cmsg_level != SOL_SOCKET || ch->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (ch->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int f;

			memcpy(&f, CMSG_DATA(ch) + k * sizeof(int), sizeof(f));
			if (got < max)
				fds[got++] = f;
			else
				close(f);
		}
	}
	return got;
}

/*
 * recvmsg() of one message of at most @len bytes into @buf on @sock, with
 * @flags (MSG_CMSG_CLOEXEC is added); @fds (room for @max, 1 ..
 * PTO_FDPASS_MAX) gets the descriptors that came with it in their order,
 * -1 where none came (any further one is closed). The byte count, or
 * -errno.
 */
static inline ssize_t pto_recv_with_fdv(int sock, void *buf, size_t len,
					int flags, int *fds, unsigned int max)
{
	union pto_fd_cmsg cm;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	unsigned int i;
	ssize_t n;

	for (i = 0; i < max; i++)
		fds[i] = -1;
	pto_msg_want_fds(&mh, &cm);
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	pto_msg_take_fds(&mh, fds, max);
	return n;
}

/* The same for one descriptor, into *@passed. */
static inline ssize_t pto_recv_with_fd(int sock, void *buf, size_t len,
				       int flags, int *passed)
{
	return pto_recv_with_fdv(sock, buf, len, flags, passed, 1);
}

/*
 * The most descriptors one message can carry at all (the kernel's
 * SCM_MAX_FD). A receiver that trusts no one takes them all: those a
 * control buffer has no room for, the kernel closes inside recvmsg(),
 * and a close can block for as long as the sender wishes (a TCP socket
 * lingering on unsent data, a FUSE file whose server does not answer).
 */
#define PTO_FDPASS_ANY_MAX	253

/*
 * Control buffer for PTO_FDPASS_ANY_MAX descriptors, and room for a
 * message's other control data (credentials, a security label).
 */
union pto_fd_cmsg_any {
	struct cmsghdr align;
	char buf[CMSG_SPACE(PTO_FDPASS_ANY_MAX * sizeof(int)) + 256];
};

/*
 * Attach @n (1 .. PTO_FDPASS_ANY_MAX) descriptors @fds to @mh (the tests'
 * hostile clients); @cm must outlive the send.
 */
static inline void pto_msg_attach_any(struct msghdr *mh,
				      union pto_fd_cmsg_any *cm,
				      const int *fds, unsigned int n)
{
	pto_msg_put_fds(mh, cm->buf, fds, n);
}

/*
 * recvmsg() of one message of at most @len bytes into @buf on @sock, with
 * @flags (MSG_CMSG_CLOEXEC is added), from a peer that may send any number
 * of descriptors: all of them go into @fds (room for PTO_FDPASS_ANY_MAX),
 * their number into *@nfds, and none is closed here. The byte count, or
 * -errno (and then *@nfds is 0).
 */
static inline ssize_t pto_recv_with_fds(int sock, void *buf, size_t len,
					int flags, int *fds, unsigned int *nfds)
{
	union pto_fd_cmsg_any cm;
	struct iovec iov = { buf, len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cm.buf, .msg_controllen = sizeof(cm.buf),
	};
	ssize_t n;

	*nfds = 0;
	n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	*nfds = pto_msg_take_fds(&mh, fds, PTO_FDPASS_ANY_MAX);
	return n;
}

#endif /* PTO_PRIVATE_FDPASS_H */
